/* synth.c - writes seeded random-weight llama checkpoints: a vocabulary (built-in byte
 * level, imported from an HF tokenizer.json, or copied from another GGUF), llama metadata,
 * and weights streamed from a xoshiro256** generator, converted chunk by chunk. */
#include "engine/synth.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/rng.h"
#include "base/utf8.h"
#include "engine/gguf.h"
#include "engine/gguf_write.h"
#include "engine/tokenizer.h"

#define SYNTH_MAX_TOKENIZER_JSON ((size_t)256 << 20)
#define SYNTH_CHUNK_ELEMS ((size_t)1 << 20)

enum { TOKEN_NORMAL = 1, TOKEN_UNKNOWN = 2, TOKEN_CONTROL = 3, TOKEN_USER_DEFINED = 4, TOKEN_UNUSED = 5, TOKEN_BYTE = 6 };

/* ---- generator ---- */

/* Fills x[0..n) with uniform values of standard deviation `std` (two per draw). */
static void rng_fill_uniform(rng *r, float *x, size_t n, float std) {
    const float amp = std * 1.7320508f * 2.0f * 0x1p-24f; /* sqrt(3) * std, over 24-bit units */
    const float off = std * 1.7320508f;
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        uint64_t v = rng_next(r);
        x[i] = (float)(v >> 40) * amp - off;
        x[i + 1] = (float)((v >> 8) & 0xffffff) * amp - off;
    }
    if (i < n) x[i] = (float)(rng_next(r) >> 40) * amp - off;
}

static uint64_t fnv1a64(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* ---- parameters ---- */

void synth_params_default(synth_params *p) {
    *p = (synth_params){.dim = 128, .layers = 2, .heads = 4, .kv_heads = 4, .ffn = 384, .ctx = 2048,
                        .rope_theta = 10000.0f, .rms_eps = 1e-5f, .type = GGML_TYPE_F16, .seed = 0,
                        .logit_std = 8.0f, .name = "pacer-synth", .tokenizer_path = NULL};
}

pacer_err synth_params_check(const synth_params *p, char *err, size_t err_len) {
    if (p->dim < 2 || p->dim > 65536) return pacer_errorf(err, err_len, PACER_ERR_ARG, "--dim must be 2..65536");
    if (p->layers < 1 || p->layers > 1024) return pacer_errorf(err, err_len, PACER_ERR_ARG, "--layers must be 1..1024");
    if (p->heads < 1 || p->dim % p->heads) return pacer_errorf(err, err_len, PACER_ERR_ARG, "--heads must divide --dim");
    if ((p->dim / p->heads) % 2) return pacer_errorf(err, err_len, PACER_ERR_ARG, "head dimension (dim/heads) must be even");
    if (p->kv_heads < 1 || p->heads % p->kv_heads)
        return pacer_errorf(err, err_len, PACER_ERR_ARG, "--kv-heads must divide --heads");
    if (p->ffn < 1 || p->ffn > 1 << 20) return pacer_errorf(err, err_len, PACER_ERR_ARG, "--ffn must be 1..1048576");
    if (p->ctx < 1) return pacer_errorf(err, err_len, PACER_ERR_ARG, "--ctx must be positive");
    if (!(p->rope_theta > 0.0f) || !(p->rms_eps > 0.0f) || !(p->logit_std > 0.0f))
        return pacer_errorf(err, err_len, PACER_ERR_ARG, "--rope-theta, eps and logit std must be positive");
    switch (p->type) {
    case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16: case GGML_TYPE_Q8_0: case GGML_TYPE_Q4_0: break;
    default: return pacer_errorf(err, err_len, PACER_ERR_ARG, "--type must be f32, f16, bf16, q8_0 or q4_0");
    }
    uint32_t blk = ggml_type_get_info(p->type)->block_size;
    if (p->dim % (int)blk || p->ffn % (int)blk)
        return pacer_errorf(err, err_len, PACER_ERR_ARG, "--dim and --ffn must be multiples of %u for %s", blk,
                    ggml_type_name(p->type));
    return PACER_OK;
}

/* ---- vocabulary ---- */

typedef struct synth_vocab {
    uint64_t n;
    const char **tok;
    size_t *len;
    int32_t *type;
    uint64_t n_merges;
    const char **merges;
    size_t *merge_len;
    const char *pre;
    int32_t bos, eos;
    const char *chat_template;
    char **owned; /* strings built here */
    size_t n_owned;
    json_t *json, *config;
    gguf_file *src; /* set when the tokenizer is copied from a GGUF */
} synth_vocab;

static void vocab_free(synth_vocab *v) {
    free(v->tok);
    free(v->len);
    free(v->type);
    free(v->merges);
    free(v->merge_len);
    for (size_t i = 0; i < v->n_owned; i++) free(v->owned[i]);
    free(v->owned);
    if (v->json) json_decref(v->json);
    if (v->config) json_decref(v->config);
    gguf_close(v->src);
    memset(v, 0, sizeof *v);
}

static pacer_err vocab_alloc(synth_vocab *v, uint64_t n, uint64_t n_merges, size_t n_owned) {
    v->n = n;
    v->tok = calloc(n, sizeof *v->tok);
    v->len = calloc(n, sizeof *v->len);
    v->type = calloc(n, sizeof *v->type);
    v->n_merges = n_merges;
    v->merges = calloc(n_merges + 1, sizeof *v->merges);
    v->merge_len = calloc(n_merges + 1, sizeof *v->merge_len);
    v->owned = calloc(n_owned + 1, sizeof *v->owned);
    return v->tok && v->len && v->type && v->merges && v->merge_len && v->owned ? PACER_OK : PACER_ERR_NOMEM;
}

static const char *vocab_own(synth_vocab *v, char *s) {
    if (s) v->owned[v->n_owned++] = s;
    return s;
}

static pacer_err vocab_bytes(synth_vocab *v) {
    pacer_err rc = vocab_alloc(v, 258, 0, 258);
    if (rc) return rc;
    for (int b = 0; b < 256; b++) {
        uint32_t cp = tokenizer_byte_to_codepoint(b);
        char *s = malloc(3);
        if (!s) return PACER_ERR_NOMEM;
        if (cp < 0x80) {
            s[0] = (char)cp;
            s[1] = 0;
        } else {
            s[0] = (char)(0xc0 | (cp >> 6));
            s[1] = (char)(0x80 | (cp & 0x3f));
            s[2] = 0;
        }
        v->tok[b] = vocab_own(v, s);
        v->len[b] = strlen(s);
        v->type[b] = TOKEN_NORMAL;
    }
    v->tok[256] = "<|begin_of_text|>";
    v->tok[257] = "<|end_of_text|>";
    for (int i = 256; i < 258; i++) {
        v->len[i] = strlen(v->tok[i]);
        v->type[i] = TOKEN_CONTROL;
    }
    v->bos = 256;
    v->eos = 257;
    v->pre = "gpt-2";
    return PACER_OK;
}

/* The pre-tokenizer llama.cpp would name for this tokenizer.json's pre_tokenizer. */
static const char *detect_pre(const json_t *pre) {
    const char *type = json_get_str(pre, "type", "");
    if (strcmp(type, "ByteLevel") == 0) return "gpt-2";
    const json_t *list = json_object_get(pre, "pretokenizers");
    size_t i;
    const json_t *item;
    json_array_foreach(list, i, item) {
        const char *rx = json_string_value(json_object_get(json_object_get(item, "pattern"), "Regex"));
        if (!rx) continue;
        if (strstr(rx, "\\p{N}{1,3}")) return "llama-bpe";
        if (strstr(rx, "(?i:'s|'t|'re|'ve|'m|'ll|'d)") && strstr(rx, "\\p{N}|")) return "qwen2";
    }
    return "default";
}

/* bos_token / eos_token of a tokenizer_config.json: a string or {"content": ...}. */
static const char *config_token(const json_t *cfg, const char *key) {
    const json_t *t = json_object_get(cfg, key);
    if (json_is_string(t)) return json_string_value(t);
    return json_get_str(t, "content", NULL);
}

static int64_t vocab_find(const synth_vocab *v, const char *s) {
    if (!s) return -1;
    size_t n = strlen(s);
    for (uint64_t i = v->n; i-- > 0;) /* specials sit at the end */
        if (v->tok[i] && v->len[i] == n && memcmp(v->tok[i], s, n) == 0) return (int64_t)i;
    return -1;
}

static json_t *load_json(const char *path, size_t flags, char *err, size_t err_len, pacer_err *rc) {
    buf b;
    buf_init(&b, SYNTH_MAX_TOKENIZER_JSON);
    *rc = file_read_all(path, &b);
    json_t *j = NULL;
    if (*rc) {
        pacer_errorf(err, err_len, *rc, "%s: %s", path, pacer_strerror(*rc));
    } else {
        json_error_t je;
        j = json_loadb(b.data, b.len, flags, &je);
        if (!j) *rc = pacer_errorf(err, err_len, PACER_ERR_PARSE, "%s: line %d: %s", path, je.line, je.text);
    }
    buf_free(&b);
    return j;
}

static pacer_err vocab_hf(synth_vocab *v, const char *path, char *err, size_t err_len) {
    pacer_err rc;
    v->json = load_json(path, 0, err, err_len, &rc);
    if (!v->json) return rc;
    const json_t *model = json_object_get(v->json, "model");
    const json_t *vocab = json_object_get(model, "vocab");
    const json_t *merges = json_object_get(model, "merges");
    const json_t *added = json_object_get(v->json, "added_tokens");
    if (strcmp(json_get_str(model, "type", ""), "BPE") != 0 || !json_is_object(vocab))
        return pacer_errorf(err, err_len, PACER_ERR_UNSUPPORTED, "%s: only BPE tokenizer.json files are supported", path);
    if (json_get_bool(model, "byte_fallback", false))
        return pacer_errorf(err, err_len, PACER_ERR_UNSUPPORTED, "%s: byte-fallback (SentencePiece-style) BPE is not supported",
                    path);
    int64_t max_id = -1;
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)vocab, key, val) {
        if (!json_is_integer(val) || json_integer_value(val) < 0 || json_integer_value(val) > (1 << 24))
            return pacer_errorf(err, err_len, PACER_ERR_FORMAT, "%s: bad id for token '%s'", path, key);
        if (json_integer_value(val) > max_id) max_id = json_integer_value(val);
    }
    size_t i;
    json_array_foreach(added, i, val) {
        int64_t id = json_get_int(val, "id", -1);
        if (id < 0 || id > (1 << 24) || !json_get_str(val, "content", NULL))
            return pacer_errorf(err, err_len, PACER_ERR_FORMAT, "%s: bad added_tokens entry %zu", path, i);
        if (id > max_id) max_id = id;
    }
    if (max_id < 0) return pacer_errorf(err, err_len, PACER_ERR_FORMAT, "%s: empty vocabulary", path);
    uint64_t n = (uint64_t)max_id + 1;
    size_t n_merges = json_array_size(merges);
    rc = vocab_alloc(v, n, n_merges, n + n_merges);
    if (rc) return rc;
    json_object_foreach((json_t *)vocab, key, val) {
        uint64_t id = (uint64_t)json_integer_value(val);
        v->tok[id] = key;
        v->len[id] = strlen(key);
        v->type[id] = TOKEN_NORMAL;
    }
    json_array_foreach(added, i, val) {
        uint64_t id = (uint64_t)json_get_int(val, "id", 0);
        v->tok[id] = json_get_str(val, "content", "");
        v->len[id] = strlen(v->tok[id]);
        v->type[id] = json_get_bool(val, "special", false) ? TOKEN_CONTROL : TOKEN_USER_DEFINED;
    }
    for (uint64_t id = 0; id < n; id++) {
        if (v->tok[id]) continue;
        char *s = malloc(32);
        if (!s) return PACER_ERR_NOMEM;
        snprintf(s, 32, "[PAD%llu]", (unsigned long long)id);
        v->tok[id] = vocab_own(v, s);
        v->len[id] = strlen(s);
        v->type[id] = TOKEN_UNUSED;
    }
    json_array_foreach(merges, i, val) {
        if (json_is_string(val)) {
            v->merges[i] = json_string_value(val);
        } else if (json_array_size(val) == 2 && json_is_string(json_array_get(val, 0)) &&
                   json_is_string(json_array_get(val, 1))) {
            const char *a = json_string_value(json_array_get(val, 0));
            const char *b = json_string_value(json_array_get(val, 1));
            char *s = malloc(strlen(a) + strlen(b) + 2);
            if (!s) return PACER_ERR_NOMEM;
            sprintf(s, "%s %s", a, b);
            v->merges[i] = vocab_own(v, s);
        } else {
            return pacer_errorf(err, err_len, PACER_ERR_FORMAT, "%s: merge %zu is neither \"a b\" nor [a, b]", path, i);
        }
        v->merge_len[i] = strlen(v->merges[i]);
    }
    v->pre = detect_pre(json_object_get(v->json, "pre_tokenizer"));
    /* BOS/EOS: tokenizer_config.json beside the file, else well-known names */
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
    char *cfg_path = malloc(dir_len + sizeof "tokenizer_config.json");
    if (!cfg_path) return PACER_ERR_NOMEM;
    memcpy(cfg_path, path, dir_len);
    strcpy(cfg_path + dir_len, "tokenizer_config.json");
    if (access(cfg_path, R_OK) == 0) {
        /* its model_max_length is often an integer too big for 64 bits */
        v->config = load_json(cfg_path, JSON_DECODE_INT_AS_REAL, err, err_len, &rc);
        if (!v->config) {
            free(cfg_path);
            return rc;
        }
    }
    free(cfg_path);
    static const char *const bos_names[] = {"<|begin_of_text|>", "<s>", "<|endoftext|>", NULL};
    static const char *const eos_names[] = {"<|end_of_text|>", "</s>", "<|endoftext|>", "<|im_end|>", NULL};
    int64_t bos = vocab_find(v, config_token(v->config, "bos_token"));
    int64_t eos = vocab_find(v, config_token(v->config, "eos_token"));
    for (int k = 0; bos < 0 && bos_names[k]; k++) bos = vocab_find(v, bos_names[k]);
    for (int k = 0; eos < 0 && eos_names[k]; k++) eos = vocab_find(v, eos_names[k]);
    v->bos = (int32_t)bos;
    v->eos = (int32_t)eos;
    v->chat_template = json_get_str(v->config, "chat_template", NULL);
    return PACER_OK;
}

static pacer_err vocab_load(synth_vocab *v, const char *path, char *err, size_t err_len) {
    memset(v, 0, sizeof *v);
    v->bos = v->eos = -1;
    if (!path) return vocab_bytes(v);
    char magic[4] = {0};
    FILE *fp = fopen(path, "rb");
    if (!fp) return pacer_errorf(err, err_len, PACER_ERR_NOT_FOUND, "%s: cannot open", path);
    size_t got = fread(magic, 1, 4, fp);
    fclose(fp);
    if (got == 4 && memcmp(magic, GGUF_MAGIC, 4) == 0) {
        char e[256];
        pacer_err rc = gguf_open(path, &v->src, e, sizeof e);
        if (rc) return pacer_errorf(err, err_len, rc, "%s: %s", path, e);
        int64_t ti = gguf_find_key(v->src, "tokenizer.ggml.tokens");
        if (gguf_get_arr_type(v->src, ti) != GGUF_TYPE_STRING || gguf_get_arr_n(v->src, ti) == 0)
            return pacer_errorf(err, err_len, PACER_ERR_FORMAT, "%s: no tokenizer.ggml.tokens", path);
        v->n = gguf_get_arr_n(v->src, ti);
        return PACER_OK;
    }
    return vocab_hf(v, path, err, err_len);
}

static pacer_err vocab_write(gguf_writer *w, const synth_vocab *v) {
    pacer_err rc = PACER_OK;
    if (v->src) {
        for (int64_t i = 0; !rc && i < gguf_get_n_kv(v->src); i++)
            if (strncmp(gguf_get_key(v->src, i), "tokenizer.", 10) == 0) rc = gguf_writer_copy_kv(w, v->src, i);
        return rc;
    }
    rc = gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
    if (!rc) rc = gguf_writer_add_str(w, "tokenizer.ggml.pre", v->pre);
    if (!rc) rc = gguf_writer_add_arr_str(w, "tokenizer.ggml.tokens", v->tok, v->len, v->n);
    if (!rc) rc = gguf_writer_add_arr(w, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, v->type, v->n);
    if (!rc) rc = gguf_writer_add_arr_str(w, "tokenizer.ggml.merges", v->merges, v->merge_len, v->n_merges);
    if (!rc && v->bos >= 0) rc = gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)v->bos);
    if (!rc && v->eos >= 0) rc = gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)v->eos);
    if (!rc && v->bos >= 0) rc = gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", true);
    if (!rc) rc = gguf_writer_add_bool(w, "tokenizer.ggml.add_eos_token", false);
    if (!rc && v->chat_template) rc = gguf_writer_add_str(w, "tokenizer.chat_template", v->chat_template);
    return rc;
}

/* ---- text-only mask ---- */

/* GPT-2's byte-level pieces back to bytes: `out` gets the bytes of `tok` (at most n), or
 * false when some character of it is not in the byte table (then it is raw text). */
static bool bytelevel_decode(const char *tok, size_t len, char *out, size_t n, size_t *out_len) {
    static int16_t byte_of[512];
    static bool ready;
    if (!ready) {
        for (int c = 0; c < 512; c++) byte_of[c] = -1;
        for (int b = 0; b < 256; b++) byte_of[tokenizer_byte_to_codepoint(b)] = (int16_t)b;
        ready = true;
    }
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)tok;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        if (u[i] < 0x80) cp = u[i++];
        else if ((u[i] & 0xE0) == 0xC0 && i + 1 < len) cp = (uint32_t)(u[i] & 0x1F) << 6 | (u[i + 1] & 0x3F), i += 2;
        else return false;
        if (cp >= 512 || byte_of[cp] < 0 || o >= n) return false;
        out[o++] = (char)byte_of[cp];
    }
    *out_len = o;
    return true;
}

/* Whether token `i` (text `tok`, `len` bytes, type `type`) is whole UTF-8 text as a
 * tokenizer of model `model` ("gpt2" byte level, "llama" SentencePiece) decodes it. */
static bool piece_is_text(const char *model, const char *tok, size_t len, int32_t type) {
    if (type == TOKEN_CONTROL || type == TOKEN_UNUSED || type == TOKEN_UNKNOWN) return false;
    if (type == TOKEN_BYTE) { /* SentencePiece's <0xXX>: whole only as ASCII */
        unsigned b;
        return sscanf(tok, "<0x%2X>", &b) == 1 && b < 0x80;
    }
    char bytes[512];
    size_t n;
    if (strcmp(model, "gpt2") == 0 && type == TOKEN_NORMAL && bytelevel_decode(tok, len, bytes, sizeof bytes, &n))
        return utf8_is_whole(bytes, n);
    return utf8_is_whole(tok, len); /* raw text: user-defined pieces, SentencePiece pieces */
}

/* blocked[i]: token i must never be generated (text_only). */
static pacer_err vocab_text_mask(const synth_vocab *v, bool *blocked, char *err, size_t err_len) {
    if (!v->src) {
        for (uint64_t i = 0; i < v->n; i++) blocked[i] = !piece_is_text("gpt2", v->tok[i], v->len[i], v->type[i]);
        return PACER_OK;
    }
    const char *model = gguf_get_str(v->src, "tokenizer.ggml.model", "");
    if (strcmp(model, "gpt2") != 0 && strcmp(model, "llama") != 0)
        return pacer_errorf(err, err_len, PACER_ERR_UNSUPPORTED, "--text-only: tokenizer model '%s' is not supported (gpt2, llama)", model);
    int64_t ti = gguf_find_key(v->src, "tokenizer.ggml.tokens"), ty = gguf_find_key(v->src, "tokenizer.ggml.token_type");
    const int32_t *types = ty >= 0 && gguf_get_arr_n(v->src, ty) == v->n ? (const int32_t *)gguf_get_arr_data(v->src, ty) : NULL;
    for (uint64_t i = 0; i < v->n; i++) {
        size_t len = 0;
        const char *tok = gguf_get_arr_str(v->src, ti, i, &len);
        blocked[i] = !tok || !piece_is_text(model, tok, len, types ? types[i] : TOKEN_NORMAL);
    }
    return PACER_OK;
}

/* ---- tensors ---- */

typedef struct synth_tensor {
    char name[64];
    bool norm; /* F32, all ones */
    int64_t ne[2];
    int n_dims;
    float std;
} synth_tensor;

static uint32_t file_type_of(ggml_type t) {
    switch (t) {
    case GGML_TYPE_F32: return 0;
    case GGML_TYPE_F16: return 1;
    case GGML_TYPE_Q4_0: return 2;
    case GGML_TYPE_Q8_0: return 7;
    case GGML_TYPE_BF16: return 32;
    default: return 1;
    }
}

/* The tensor list, in file order; returns the count (tensors must hold 3 + 9 * layers). */
static size_t tensors_plan(const synth_params *p, uint64_t n_vocab, synth_tensor *t) {
    size_t n = 0;
    int64_t kv_dim = (int64_t)p->kv_heads * (p->dim / p->heads);
    float in_std = 1.0f / sqrtf((float)p->dim);
#define ADD(NAME_FMT, LAYER, NORM, NE0, NE1, STD)                                                                  \
    do {                                                                                                           \
        snprintf(t[n].name, sizeof t[n].name, NAME_FMT, LAYER);                                                    \
        t[n].norm = NORM;                                                                                          \
        t[n].ne[0] = NE0;                                                                                          \
        t[n].ne[1] = NE1;                                                                                          \
        t[n].n_dims = NORM ? 1 : 2;                                                                                \
        t[n].std = STD;                                                                                            \
        n++;                                                                                                       \
    } while (0)
    ADD("token_embd.weight%.0d", 0, false, p->dim, (int64_t)n_vocab, 1.0f);
    ADD("output_norm.weight%.0d", 0, true, p->dim, 1, 1.0f);
    ADD("output.weight%.0d", 0, false, p->dim, (int64_t)n_vocab, p->logit_std * in_std);
    for (int l = 0; l < p->layers; l++) {
        ADD("blk.%d.attn_norm.weight", l, true, p->dim, 1, 1.0f);
        ADD("blk.%d.attn_q.weight", l, false, p->dim, p->dim, in_std);
        ADD("blk.%d.attn_k.weight", l, false, p->dim, kv_dim, in_std);
        ADD("blk.%d.attn_v.weight", l, false, p->dim, kv_dim, in_std);
        ADD("blk.%d.attn_output.weight", l, false, p->dim, p->dim, in_std);
        ADD("blk.%d.ffn_norm.weight", l, true, p->dim, 1, 1.0f);
        ADD("blk.%d.ffn_gate.weight", l, false, p->dim, p->ffn, in_std);
        ADD("blk.%d.ffn_up.weight", l, false, p->dim, p->ffn, in_std);
        ADD("blk.%d.ffn_down.weight", l, false, p->ffn, p->dim, 1.0f / sqrtf((float)p->ffn));
    }
#undef ADD
    return n;
}

/* text_only: the constant of hidden dimension 0 (half the RMS of a whole embedding row, so
 * the other dimensions keep most of the weight) and how strongly a blocked piece's output
 * row weighs it (in units of logit_std): the blocked logits end up hundreds below. */
#define SYNTH_BIAS_DIM_SCALE 0.5f
#define SYNTH_BLOCK_WEIGHT 32.0f

/* What text_only changes in one tensor's rows (after they are drawn, so every other value
 * is the same as without it): dimension 0 of every embedding is the constant, no layer
 * writes dimension 0 (its output row 0 is zero), and an output row weighs dimension 0 only
 * for a blocked piece, negatively. */
static void text_only_rows(const synth_tensor *t, const synth_params *p, const bool *blocked, int64_t row0, size_t rows,
                           float *fx) {
    size_t ne0 = (size_t)t->ne[0];
    if (strcmp(t->name, "token_embd.weight") == 0) {
        for (size_t r = 0; r < rows; r++) fx[r * ne0] = SYNTH_BIAS_DIM_SCALE * sqrtf((float)p->dim);
    } else if (strcmp(t->name, "output.weight") == 0) {
        for (size_t r = 0; r < rows; r++) fx[r * ne0] = blocked[row0 + (int64_t)r] ? -SYNTH_BLOCK_WEIGHT * p->logit_std : 0.0f;
    } else if (row0 == 0 && (strstr(t->name, ".attn_output.") || strstr(t->name, ".ffn_down."))) {
        memset(fx, 0, ne0 * sizeof(float));
    }
}

/* Streams one tensor's data: rows of seeded uniform values converted to `type`; `blocked`
 * (text_only) adjusts them as text_only_rows says. */
static pacer_err tensor_stream(gguf_writer *w, const synth_tensor *t, const synth_params *p, const bool *blocked, float *fx,
                               uint8_t *qx, size_t chunk_rows) {
    if (t->norm) {
        for (int64_t i = 0; i < t->ne[0]; i++) fx[i] = 1.0f;
        return gguf_writer_write_data(w, fx, (size_t)t->ne[0] * sizeof(float));
    }
    ggml_type type = p->type;
    rng r;
    rng_seed(&r, p->seed ^ fnv1a64(t->name));
    uint64_t row_bytes;
    ggml_type_row_size(type, t->ne[0], &row_bytes);
    pacer_err rc = PACER_OK;
    for (int64_t row = 0; !rc && row < t->ne[1]; row += (int64_t)chunk_rows) {
        size_t rows = (size_t)(t->ne[1] - row) < chunk_rows ? (size_t)(t->ne[1] - row) : chunk_rows;
        size_t n = rows * (size_t)t->ne[0];
        rng_fill_uniform(&r, fx, n, t->std);
        if (blocked) text_only_rows(t, p, blocked, row, rows, fx);
        if (!ggml_quantize_row(type, fx, qx, (int64_t)n)) return PACER_ERR_INTERNAL;
        rc = gguf_writer_write_data(w, qx, rows * row_bytes);
    }
    return rc;
}

/* The GGUF header: general.* and llama.* keys, the vocabulary, the tensor list (a linear
 * table of keys). */
static pacer_err synth_header(gguf_writer *w, const synth_params *p, const synth_vocab *v, const synth_tensor *plan,
                              size_t n_tensors) {
    uint64_t n_params = 0;
    for (size_t i = 0; i < n_tensors; i++) n_params += (uint64_t)plan[i].ne[0] * (uint64_t)plan[i].ne[1];
    int head_dim = p->dim / p->heads;
    pacer_err rc = gguf_writer_add_str(w, "general.architecture", "llama");
    if (!rc) rc = gguf_writer_add_str(w, "general.name", p->name ? p->name : "pacer-synth");
    if (!rc) rc = gguf_writer_add_u32(w, "general.file_type", file_type_of(p->type));
    if (!rc) rc = gguf_writer_add_u32(w, "general.quantization_version", 2);
    if (!rc) rc = gguf_writer_add_u64(w, "general.parameter_count", n_params);
    if (!rc) rc = gguf_writer_add_u64(w, "general.seed", p->seed);
    if (!rc && p->text_only) rc = gguf_writer_add_bool(w, "pacer.text_only", true);
    if (!rc) rc = gguf_writer_add_u32(w, "llama.context_length", (uint32_t)p->ctx);
    if (!rc) rc = gguf_writer_add_u32(w, "llama.embedding_length", (uint32_t)p->dim);
    if (!rc) rc = gguf_writer_add_u32(w, "llama.block_count", (uint32_t)p->layers);
    if (!rc) rc = gguf_writer_add_u32(w, "llama.feed_forward_length", (uint32_t)p->ffn);
    if (!rc) rc = gguf_writer_add_u32(w, "llama.attention.head_count", (uint32_t)p->heads);
    if (!rc) rc = gguf_writer_add_u32(w, "llama.attention.head_count_kv", (uint32_t)p->kv_heads);
    if (!rc) rc = gguf_writer_add_f32(w, "llama.rope.freq_base", p->rope_theta);
    if (!rc) rc = gguf_writer_add_f32(w, "llama.attention.layer_norm_rms_epsilon", p->rms_eps);
    if (!rc) rc = gguf_writer_add_u32(w, "llama.rope.dimension_count", (uint32_t)head_dim);
    if (!rc) rc = gguf_writer_add_u32(w, "llama.vocab_size", (uint32_t)v->n);
    if (!rc) rc = vocab_write(w, v);
    for (size_t i = 0; !rc && i < n_tensors; i++)
        rc = gguf_writer_add_tensor(w, plan[i].name, plan[i].norm ? GGML_TYPE_F32 : p->type, plan[i].n_dims, plan[i].ne);
    return rc;
}

pacer_err synth_write(const synth_params *p, const char *path, char *err, size_t err_len) {
    if (err && err_len) err[0] = '\0';
    pacer_err rc = synth_params_check(p, err, err_len);
    if (rc) return rc;
    synth_vocab v;
    gguf_writer *w = NULL;
    synth_tensor *plan = NULL;
    float *fx = NULL;
    uint8_t *qx = NULL;
    FILE *fp = NULL;
    char *tmp = NULL;
    bool *blocked = NULL;
    rc = vocab_load(&v, p->tokenizer_path, err, err_len);
    if (rc) goto out;
    if (p->text_only) {
        blocked = calloc(v.n, sizeof *blocked);
        if (!blocked) { rc = PACER_ERR_NOMEM; goto out; }
        if ((rc = vocab_text_mask(&v, blocked, err, err_len))) goto out;
    }
    size_t n_max = 3 + 9 * (size_t)p->layers;
    plan = calloc(n_max, sizeof *plan);
    w = gguf_writer_new();
    if (!plan || !w) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    size_t n_tensors = tensors_plan(p, v.n, plan);
    rc = synth_header(w, p, &v, plan, n_tensors);
    if (rc) {
        pacer_errorf(err, err_len, rc, "building the header: %s", pacer_strerror(rc));
        goto out;
    }
    /* conversion buffers: whole rows, about SYNTH_CHUNK_ELEMS floats at a time */
    size_t row_max = (size_t)(p->dim > p->ffn ? p->dim : p->ffn);
    size_t chunk_rows = SYNTH_CHUNK_ELEMS / row_max ? SYNTH_CHUNK_ELEMS / row_max : 1;
    fx = malloc(chunk_rows * row_max * sizeof(float));
    qx = malloc(chunk_rows * row_max * sizeof(float));
    tmp = malloc(strlen(path) + 16);
    if (!fx || !qx || !tmp) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    sprintf(tmp, "%s.tmp%ld", path, (long)getpid());
    fp = fopen(tmp, "wb");
    if (!fp) {
        rc = pacer_errorf(err, err_len, PACER_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        goto out;
    }
    setvbuf(fp, NULL, _IOFBF, 1 << 22);
    rc = gguf_writer_write_header(w, gguf_sink_file, fp);
    for (size_t i = 0; !rc && i < n_tensors; i++) {
        const synth_tensor *t = &plan[i];
        size_t rows = chunk_rows * row_max / (size_t)t->ne[0];
        rc = tensor_stream(w, t, p, blocked, fx, qx, rows ? rows : 1);
    }
    if (!rc) rc = gguf_writer_finish(w);
    if (!rc && fflush(fp) != 0) rc = PACER_ERR_IO;
    if (fclose(fp) != 0 && !rc) rc = PACER_ERR_IO;
    fp = NULL;
    if (!rc && rename(tmp, path) != 0) rc = PACER_ERR_IO;
    if (rc) {
        unlink(tmp);
        if (!err || !err[0]) pacer_errorf(err, err_len, rc, "%s: writing failed: %s", path, pacer_strerror(rc));
    }
out:
    if (rc && err && !err[0]) pacer_errorf(err, err_len, rc, "%s", pacer_strerror(rc));
    if (fp) {
        fclose(fp);
        unlink(tmp);
    }
    free(tmp);
    free(fx);
    free(qx);
    free(plan);
    free(blocked);
    gguf_writer_free(w);
    vocab_free(&v);
    return rc;
}
