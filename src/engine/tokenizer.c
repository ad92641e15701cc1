/* tokenizer.c - byte-level BPE (pre-tokenized by the regex of the declared `pre` type,
 * through PCRE2, then merged by rank on a heap) and SentencePiece-style tokenization
 * (best-score merges, byte fallback), with special-token partitioning and decoding. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "engine/tokenizer.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gguf.h"

enum { MODEL_BPE, MODEL_SPM };

/* Pre-tokenizer patterns, as the reference tokenizers define them. */
typedef struct pre_def {
    const char *names; /* '|'-separated, with leading and trailing '|' */
    const char *pattern;
    bool ignore_merges; /* a word that is itself a token is not merged */
} pre_def;

static const pre_def PRE_DEFS[] = {
    {"|llama-bpe|llama3|llama-v3|",
     "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
     "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     true},
    {"|qwen2|",
     "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
     "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     false},
    /* gpt2 and the default for any other name */
    {"|gpt2|gpt-2|default|",
     "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", false},
};

typedef struct merge_slot {
    uint64_t key; /* (left << 32 | right) + 1; 0 = empty */
    int32_t rank;
    int32_t result;
} merge_slot;

struct tokenizer {
    int model;
    char *model_name, *pre_name, *chat_template;
    int32_t n_vocab;
    char *text_blob;     /* token strings */
    size_t *text_off;    /* n_vocab + 1 */
    char *piece_blob;    /* decoded bytes */
    size_t *piece_off;   /* n_vocab + 1 */
    int32_t *types;
    float *scores;
    int32_t *hash;       /* open addressing of token ids by text; -1 empty */
    size_t hash_mask;
    merge_slot *merges;
    size_t merge_mask;
    int32_t byte_tok[256]; /* BPE: token of the byte's mapped char; SPM: <0xNN> */
    char byte_utf8[256][4];  /* BPE: the byte's mapped code point in UTF-8 */
    uint8_t byte_utf8_len[256];
    int32_t *special;    /* control / user-defined ids, longest text first */
    size_t n_special;
    size_t special_first[257]; /* special[] sorted by first byte: bucket starts */
    int32_t *special_by_byte;
    int32_t bos, eos, eot, eom, pad, unk;
    bool add_bos, add_eos, add_space_prefix, ignore_merges;
    pcre2_code *re;
};

/* ---- small helpers ---- */

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static uint64_t hash_u64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return x;
}

static const char *tok_text(const tokenizer *t, int32_t id, size_t *len) {
    *len = t->text_off[id + 1] - t->text_off[id];
    return t->text_blob + t->text_off[id];
}

static int32_t find_bytes(const tokenizer *t, const char *s, size_t n) {
    for (size_t i = hash_bytes(s, n) & t->hash_mask;; i = (i + 1) & t->hash_mask) {
        int32_t id = t->hash[i];
        if (id < 0) return -1;
        size_t l;
        const char *p = tok_text(t, id, &l);
        if (l == n && memcmp(p, s, n) == 0) return id;
    }
}

static const merge_slot *merge_find(const tokenizer *t, int32_t a, int32_t b) {
    if (!t->merges || a < 0 || b < 0) return NULL;
    uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    for (size_t i = hash_u64(key) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
        if (t->merges[i].key == 0) return NULL;
        if (t->merges[i].key == key) return &t->merges[i];
    }
}

static size_t utf8_put(uint32_t cp, char *o) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F)); return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F)); return 4;
}

/* Length of the UTF-8 sequence at s (1 for an invalid lead byte or a truncated one). */
static size_t utf8_len(const unsigned char *s, size_t avail) {
    size_t n = s[0] < 0x80 ? 1 : (s[0] >> 5) == 6 ? 2 : (s[0] >> 4) == 14 ? 3 : (s[0] >> 3) == 30 ? 4 : 1;
    if (n > avail) return 1;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 1;
    return n;
}

/* Decodes one UTF-8 code point (valid sequences only; otherwise returns the byte). */
static uint32_t utf8_get(const unsigned char *s, size_t n) {
    switch (n) {
    case 2: return ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
    case 3: return ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    case 4:
        return ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
               ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
    default: return s[0];
    }
}

uint32_t tokenizer_byte_to_codepoint(int b) {
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) return (uint32_t)b;
    int n = 0;
    for (int i = 0; i < b; i++)
        if (!((i >= 33 && i <= 126) || (i >= 161 && i <= 172) || (i >= 174 && i <= 255))) n++;
    return 256u + (uint32_t)n;
}

static int cp_table[324];

static void cp_table_init(void) {
    for (int i = 0; i < 324; i++) cp_table[i] = -1;
    for (int b = 0; b < 256; b++) cp_table[tokenizer_byte_to_codepoint(b)] = b;
}

static int cp_to_byte(uint32_t cp) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, cp_table_init);
    return cp < 324 ? cp_table[cp] : -1;
}

/* The bytes token `id` stands for, written to o (room for 4x the text); returns length. */
static size_t piece_make(const tokenizer *t, int32_t id, char *o) {
    size_t n;
    const unsigned char *s = (const unsigned char *)tok_text(t, id, &n);
    int type = t->types[id];
    if (type == TOKEN_TYPE_CONTROL) return 0;
    if (type == TOKEN_TYPE_USER_DEFINED) { memcpy(o, s, n); return n; }
    size_t k = 0;
    if (t->model == MODEL_SPM) {
        unsigned v;
        char tail;
        if (type == TOKEN_TYPE_BYTE && n == 6 && sscanf((const char *)s, "<0x%2X%c", &v, &tail) == 2 && tail == '>') {
            o[0] = (char)v;
            return 1;
        }
        for (size_t i = 0; i < n;) {
            if (i + 3 <= n && s[i] == 0xE2 && s[i + 1] == 0x96 && s[i + 2] == 0x81) { o[k++] = ' '; i += 3; }
            else o[k++] = (char)s[i++];
        }
        return k;
    }
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len(s + i, n - i);
        int b = l > 1 || s[i] < 0x80 ? cp_to_byte(utf8_get(s + i, l)) : -1;
        if (b >= 0) o[k++] = (char)b;
        else { memcpy(o + k, s + i, l); k += l; }
        i += l;
    }
    return k;
}

/* ---- building ---- */

void tokenizer_vocab_init(tokenizer_vocab *v) {
    memset(v, 0, sizeof *v);
    v->bos_id = v->eos_id = v->eot_id = v->eom_id = v->pad_id = v->unk_id = -1;
    v->add_bos = v->add_eos = v->add_space_prefix = -1;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int cmp_special_len(const void *a, const void *b, void *ctx) {
    const tokenizer *t = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    size_t lx = t->text_off[x + 1] - t->text_off[x], ly = t->text_off[y + 1] - t->text_off[y];
    if (lx != ly) return lx > ly ? -1 : 1;
    return x < y ? -1 : x > y;
}

static pacer_err build_specials(tokenizer *t) {
    size_t n = 0;
    for (int32_t i = 0; i < t->n_vocab; i++)
        if ((t->types[i] == TOKEN_TYPE_CONTROL || t->types[i] == TOKEN_TYPE_USER_DEFINED) &&
            t->text_off[i + 1] > t->text_off[i])
            n++;
    t->special = malloc((n ? n : 1) * sizeof *t->special);
    t->special_by_byte = malloc((n ? n : 1) * sizeof *t->special_by_byte);
    if (!t->special || !t->special_by_byte) return PACER_ERR_NOMEM;
    n = 0;
    for (int32_t i = 0; i < t->n_vocab; i++)
        if ((t->types[i] == TOKEN_TYPE_CONTROL || t->types[i] == TOKEN_TYPE_USER_DEFINED) &&
            t->text_off[i + 1] > t->text_off[i])
            t->special[n++] = i;
    t->n_special = n;
    qsort_r(t->special, n, sizeof *t->special, cmp_special_len, t);
    /* bucket by first byte, keeping longest-first order inside each bucket */
    size_t count[256] = {0};
    for (size_t i = 0; i < n; i++) count[(unsigned char)t->text_blob[t->text_off[t->special[i]]]]++;
    t->special_first[0] = 0;
    for (int b = 0; b < 256; b++) t->special_first[b + 1] = t->special_first[b] + count[b];
    size_t fill[256];
    memcpy(fill, t->special_first, sizeof fill);
    for (size_t i = 0; i < n; i++)
        t->special_by_byte[fill[(unsigned char)t->text_blob[t->text_off[t->special[i]]]]++] = t->special[i];
    return PACER_OK;
}

static pacer_err build_merges(tokenizer *t, const tokenizer_vocab *v, char *err, size_t err_len) {
    size_t cap = 16;
    while (cap < v->n_merges * 2) cap <<= 1;
    t->merges = calloc(cap, sizeof *t->merges);
    if (!t->merges) return PACER_ERR_NOMEM;
    t->merge_mask = cap - 1;
    char *tmp = NULL;
    size_t tmp_cap = 0;
    pacer_err rc = PACER_OK;
    for (size_t r = 0; r < v->n_merges && rc == PACER_OK; r++) {
        const char *m = v->merges[r];
        size_t n = v->merge_lens ? v->merge_lens[r] : strlen(m);
        const char *sp = memchr(m, ' ', n);
        if (!sp || sp == m || sp == m + n - 1) {
            pacer_errorf(err, err_len, PACER_OK, "tokenizer: merge %zu is not \"left right\"", r);
            rc = PACER_ERR_FORMAT;
            break;
        }
        int32_t a = find_bytes(t, m, (size_t)(sp - m));
        int32_t b = find_bytes(t, sp + 1, n - (size_t)(sp - m) - 1);
        if (n > tmp_cap) {
            free(tmp);
            tmp_cap = n * 2;
            if (!(tmp = malloc(tmp_cap))) { rc = PACER_ERR_NOMEM; break; }
        }
        memcpy(tmp, m, (size_t)(sp - m));
        memcpy(tmp + (sp - m), sp + 1, n - (size_t)(sp - m) - 1);
        int32_t c = find_bytes(t, tmp, n - 1);
        if (a < 0 || b < 0 || c < 0) continue; /* a merge whose parts are not tokens never applies */
        uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
        for (size_t i = hash_u64(key) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
            if (t->merges[i].key == key) break; /* duplicate: the first (best) rank stays */
            if (t->merges[i].key == 0) {
                t->merges[i] = (merge_slot){key, (int32_t)r, c};
                break;
            }
        }
    }
    free(tmp);
    return rc;
}

static const pre_def *pre_lookup(const char *name) {
    char key[80];
    snprintf(key, sizeof key, "|%s|", name && *name ? name : "default");
    for (size_t i = 0; i < sizeof PRE_DEFS / sizeof PRE_DEFS[0]; i++)
        if (strstr(PRE_DEFS[i].names, key)) return &PRE_DEFS[i];
    return &PRE_DEFS[sizeof PRE_DEFS / sizeof PRE_DEFS[0] - 1];
}

static pacer_err build_regex(tokenizer *t, const pre_def *pd, char *err, size_t err_len) {
    int ec;
    PCRE2_SIZE eo;
    t->re = pcre2_compile((PCRE2_SPTR)pd->pattern, PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
    if (!t->re) {
        char msg[120];
        pcre2_get_error_message(ec, (PCRE2_UCHAR *)msg, sizeof msg);
        pacer_errorf(err, err_len, PACER_OK, "tokenizer: pre-tokenizer regex: %s (at %ld)", msg, (long)eo);
        return PACER_ERR_INTERNAL;
    }
    (void)pcre2_jit_compile(t->re, PCRE2_JIT_COMPLETE); /* the interpreter is the fallback */
    t->ignore_merges = pd->ignore_merges;
    return PACER_OK;
}

/* The token texts in one blob with their types and scores, the index by text (on
 * duplicates the first id wins; unused tokens never do) and every token's decoded piece. */
static pacer_err tokens_store(tokenizer *t, const tokenizer_vocab *v) {
    size_t n = v->n_tokens, total = 0;
    for (size_t i = 0; i < n; i++) total += v->token_lens ? v->token_lens[i] : strlen(v->tokens[i]);
    t->text_off = malloc((n + 1) * sizeof *t->text_off);
    t->piece_off = malloc((n + 1) * sizeof *t->piece_off);
    t->text_blob = malloc(total + 1);
    t->piece_blob = malloc(total * 4 + 1);
    t->types = malloc(n * sizeof *t->types);
    t->scores = malloc(n * sizeof *t->scores);
    size_t hcap = 16;
    while (hcap < n * 2) hcap <<= 1;
    t->hash = malloc(hcap * sizeof *t->hash);
    t->hash_mask = hcap - 1;
    if (!t->text_off || !t->piece_off || !t->text_blob || !t->piece_blob || !t->types || !t->scores || !t->hash)
        return PACER_ERR_NOMEM;
    memset(t->hash, 0xFF, hcap * sizeof *t->hash);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = v->token_lens ? v->token_lens[i] : strlen(v->tokens[i]);
        t->text_off[i] = off;
        if (l) memcpy(t->text_blob + off, v->tokens[i], l);
        off += l;
        int ty = v->token_types ? v->token_types[i] : TOKEN_TYPE_NORMAL;
        t->types[i] = ty;
        t->scores[i] = v->scores ? v->scores[i] : 0.0f;
    }
    t->text_off[n] = off;
    /* index by text; on duplicates the first id wins (and unused tokens never do) */
    for (int32_t id = 0; id < (int32_t)n; id++) {
        size_t l;
        const char *s = tok_text(t, id, &l);
        if (t->types[id] == TOKEN_TYPE_UNUSED) continue;
        size_t i = hash_bytes(s, l) & t->hash_mask;
        for (;; i = (i + 1) & t->hash_mask) {
            int32_t o = t->hash[i];
            if (o < 0) { t->hash[i] = id; break; }
            size_t ol;
            const char *os = tok_text(t, o, &ol);
            if (ol == l && memcmp(os, s, l) == 0) break;
        }
    }
    size_t poff = 0;
    for (int32_t id = 0; id < (int32_t)n; id++) {
        t->piece_off[id] = poff;
        poff += piece_make(t, id, t->piece_blob + poff);
    }
    t->piece_off[n] = poff;
    return PACER_OK;
}

pacer_err tokenizer_build(const tokenizer_vocab *v, tokenizer **out, char *err, size_t err_len) {
    *out = NULL;
    if (!v || !v->tokens || v->n_tokens == 0 || v->n_tokens > INT32_MAX / 2) {
        pacer_errorf(err, err_len, PACER_OK, "tokenizer: no tokens (or too many: %zu)", v ? v->n_tokens : (size_t)0);
        return PACER_ERR_ARG;
    }
    const char *model = v->model && *v->model ? v->model : "gpt2";
    int kind;
    if (strcmp(model, "gpt2") == 0) kind = MODEL_BPE;
    else if (strcmp(model, "llama") == 0) kind = MODEL_SPM;
    else {
        pacer_errorf(err, err_len, PACER_OK, "tokenizer: model \"%s\" is not supported (gpt2, llama)", model);
        return PACER_ERR_UNSUPPORTED;
    }
    tokenizer *t = calloc(1, sizeof *t);
    if (!t) return PACER_ERR_NOMEM;
    pacer_err rc = PACER_ERR_NOMEM;
    size_t n = v->n_tokens;
    t->model = kind;
    t->n_vocab = (int32_t)n;
    t->model_name = dup_str(model);
    t->pre_name = dup_str(v->pre && *v->pre ? v->pre : "gpt2");
    if (v->chat_template && !(t->chat_template = dup_str(v->chat_template))) goto fail;
    if (!t->model_name || !t->pre_name || (rc = tokens_store(t, v))) goto fail;
    int32_t ids[6] = {v->bos_id, v->eos_id, v->eot_id, v->eom_id, v->pad_id, v->unk_id};
    for (int i = 0; i < 6; i++)
        if (ids[i] < -1 || ids[i] >= (int32_t)n) {
            pacer_errorf(err, err_len, PACER_OK, "tokenizer: special token id %ld is out of range", (long)ids[i]);
            rc = PACER_ERR_FORMAT;
            goto fail;
        }
    t->bos = v->bos_id; t->eos = v->eos_id; t->eot = v->eot_id; t->eom = v->eom_id;
    t->pad = v->pad_id; t->unk = v->unk_id;
    if (t->eot < 0) {
        static const char *const EOT_NAMES[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>"};
        for (size_t i = 0; i < 4 && t->eot < 0; i++) {
            int32_t id = tokenizer_find_token(t, EOT_NAMES[i]);
            if (id >= 0 && t->types[id] == TOKEN_TYPE_CONTROL) t->eot = id;
        }
    }
    t->add_bos = v->add_bos >= 0 ? v->add_bos != 0 : kind == MODEL_SPM;
    t->add_eos = v->add_eos > 0;
    t->add_space_prefix = v->add_space_prefix >= 0 ? v->add_space_prefix != 0 : kind == MODEL_SPM;
    if ((rc = build_specials(t)) != PACER_OK) goto fail;
    for (int b = 0; b < 256; b++) {
        char s[8];
        size_t l = kind == MODEL_BPE ? utf8_put(tokenizer_byte_to_codepoint(b), s) : (size_t)snprintf(s, sizeof s, "<0x%02X>", b);
        t->byte_tok[b] = find_bytes(t, s, l);
        if (kind == MODEL_BPE) {
            memcpy(t->byte_utf8[b], s, 4);
            t->byte_utf8_len[b] = (uint8_t)l;
        }
    }
    if (kind == MODEL_BPE) {
        if ((rc = build_merges(t, v, err, err_len)) != PACER_OK) goto fail;
        if ((rc = build_regex(t, pre_lookup(v->pre), err, err_len)) != PACER_OK) goto fail;
    }
    *out = t;
    return PACER_OK;
fail:
    if (rc == PACER_ERR_NOMEM) pacer_errorf(err, err_len, PACER_OK, "tokenizer: out of memory");
    tokenizer_free(t);
    return rc;
}

void tokenizer_free(tokenizer *t) {
    if (!t) return;
    free(t->model_name); free(t->pre_name); free(t->chat_template);
    free(t->text_blob); free(t->text_off); free(t->piece_blob); free(t->piece_off);
    free(t->types); free(t->scores); free(t->hash); free(t->merges);
    free(t->special); free(t->special_by_byte);
    if (t->re) pcre2_code_free(t->re);
    free(t);
}

/* ---- from GGUF ---- */

static bool gguf_key_bool(const gguf_file *g, const char *key, int *out) {
    int64_t i = gguf_find_key(g, key), v;
    if (i < 0 || !gguf_get_kv_i64(g, i, &v)) return false;
    *out = v != 0;
    return true;
}

pacer_err tokenizer_from_gguf(const gguf_file *g, tokenizer **out, char *err, size_t err_len) {
    *out = NULL;
    int64_t ki = gguf_find_key(g, "tokenizer.ggml.tokens");
    if (ki < 0 || gguf_get_arr_type(g, ki) != GGUF_TYPE_STRING) {
        pacer_errorf(err, err_len, PACER_OK, "tokenizer: no tokenizer.ggml.tokens string array");
        return PACER_ERR_NOT_FOUND;
    }
    tokenizer_vocab v;
    tokenizer_vocab_init(&v);
    v.model = gguf_get_str(g, "tokenizer.ggml.model", "gpt2");
    v.pre = gguf_get_str(g, "tokenizer.ggml.pre", "gpt2");
    v.chat_template = gguf_get_str(g, "tokenizer.chat_template", NULL);
    v.n_tokens = (size_t)gguf_get_arr_n(g, ki);
    int64_t mi = gguf_find_key(g, "tokenizer.ggml.merges");
    if (mi >= 0 && gguf_get_arr_type(g, mi) == GGUF_TYPE_STRING) v.n_merges = (size_t)gguf_get_arr_n(g, mi);
    const char **toks = malloc((v.n_tokens + v.n_merges + 1) * sizeof *toks);
    size_t *lens = malloc((v.n_tokens + v.n_merges + 1) * sizeof *lens);
    pacer_err rc = PACER_ERR_NOMEM;
    if (!toks || !lens) goto done;
    for (size_t i = 0; i < v.n_tokens; i++) toks[i] = gguf_get_arr_str(g, ki, i, &lens[i]);
    for (size_t i = 0; i < v.n_merges; i++)
        toks[v.n_tokens + i] = gguf_get_arr_str(g, mi, i, &lens[v.n_tokens + i]);
    v.tokens = toks;
    v.token_lens = lens;
    v.merges = toks + v.n_tokens;
    v.merge_lens = lens + v.n_tokens;
    int64_t si = gguf_find_key(g, "tokenizer.ggml.scores");
    if (si >= 0 && gguf_get_arr_type(g, si) == GGUF_TYPE_FLOAT32 && gguf_get_arr_n(g, si) == v.n_tokens)
        v.scores = gguf_get_arr_data(g, si);
    int64_t ti = gguf_find_key(g, "tokenizer.ggml.token_type");
    if (ti >= 0 && gguf_get_arr_type(g, ti) == GGUF_TYPE_INT32 && gguf_get_arr_n(g, ti) == v.n_tokens)
        v.token_types = gguf_get_arr_data(g, ti);
    v.bos_id = gguf_get_i32(g, "tokenizer.ggml.bos_token_id", -1);
    v.eos_id = gguf_get_i32(g, "tokenizer.ggml.eos_token_id", -1);
    v.eot_id = gguf_get_i32(g, "tokenizer.ggml.eot_token_id", -1);
    v.eom_id = gguf_get_i32(g, "tokenizer.ggml.eom_token_id", -1);
    v.pad_id = gguf_get_i32(g, "tokenizer.ggml.padding_token_id", -1);
    v.unk_id = gguf_get_i32(g, "tokenizer.ggml.unknown_token_id", -1);
    gguf_key_bool(g, "tokenizer.ggml.add_bos_token", &v.add_bos);
    gguf_key_bool(g, "tokenizer.ggml.add_eos_token", &v.add_eos);
    gguf_key_bool(g, "tokenizer.ggml.add_space_prefix", &v.add_space_prefix);
    /* ids outside the vocabulary (some converters write them) count as absent */
    int32_t *idp[6] = {&v.bos_id, &v.eos_id, &v.eot_id, &v.eom_id, &v.pad_id, &v.unk_id};
    for (int i = 0; i < 6; i++)
        if (*idp[i] < 0 || (size_t)*idp[i] >= v.n_tokens) *idp[i] = -1;
    rc = tokenizer_build(&v, out, err, err_len);
done:
    if (rc == PACER_ERR_NOMEM && !*out) pacer_errorf(err, err_len, PACER_OK, "tokenizer: out of memory");
    free(toks);
    free(lens);
    return rc;
}

/* ---- encoding ---- */

typedef struct heap_ent {
    float prio;  /* BPE: rank; SPM: -score (smaller pops first) */
    int32_t left, right;
    int32_t a, b; /* BPE: the ids of both sides; SPM: a = merged byte length */
} heap_ent;

typedef struct scratch {
    int32_t *id, *prev, *next, *start, *len;
    heap_ent *heap;
    size_t cap, heap_n, heap_cap;
    char *text;   /* SPM: transformed text; BPE: mapped word */
    size_t text_cap;
    int32_t *out;
    size_t cap_out, n_out;
    bool nomem;
} scratch;

static bool heap_less(const heap_ent *x, const heap_ent *y) {
    return x->prio < y->prio || (x->prio == y->prio && x->left < y->left);
}

static void heap_push(scratch *s, heap_ent e) {
    if (s->heap_n == s->heap_cap) {
        size_t nc = s->heap_cap ? s->heap_cap * 2 : 64;
        heap_ent *h = realloc(s->heap, nc * sizeof *h);
        if (!h) { s->nomem = true; return; }
        s->heap = h;
        s->heap_cap = nc;
    }
    size_t i = s->heap_n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(&e, &s->heap[p])) break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = e;
}

static heap_ent heap_pop(scratch *s) {
    heap_ent top = s->heap[0], last = s->heap[--s->heap_n];
    size_t i = 0, n = s->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_less(&s->heap[c + 1], &s->heap[c])) c++;
        if (!heap_less(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n) s->heap[i] = last;
    return top;
}

static bool scratch_reserve(scratch *s, size_t n, size_t text_n) {
    if (n > s->cap) {
        size_t nc = n * 2;
        int32_t **arrs[5] = {&s->id, &s->prev, &s->next, &s->start, &s->len};
        for (int i = 0; i < 5; i++) {
            int32_t *p = realloc(*arrs[i], nc * sizeof **arrs[i]);
            if (!p) return !(s->nomem = true);
            *arrs[i] = p;
        }
        s->cap = nc;
    }
    if (text_n > s->text_cap) {
        char *p = realloc(s->text, text_n * 2);
        if (!p) return !(s->nomem = true);
        s->text = p;
        s->text_cap = text_n * 2;
    }
    return true;
}

static void emit(scratch *s, int32_t id) {
    if (s->n_out < s->cap_out) s->out[s->n_out] = id;
    s->n_out++;
}

static void bpe_try_pair(const tokenizer *t, scratch *s, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const merge_slot *m = merge_find(t, s->id[l], s->id[r]);
    if (m) heap_push(s, (heap_ent){(float)m->rank, l, r, s->id[l], s->id[r]});
}

/* One pre-tokenized word through the BPE merges. */
static void bpe_word(const tokenizer *t, scratch *s, const unsigned char *w, size_t n) {
    if (n == 0 || !scratch_reserve(s, n, n * 2 + 4)) return;
    if (t->ignore_merges) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            memcpy(s->text + k, t->byte_utf8[w[i]], 4);
            k += t->byte_utf8_len[w[i]];
        }
        int32_t id = find_bytes(t, s->text, k);
        if (id >= 0) { emit(s, id); return; }
    }
    for (size_t i = 0; i < n; i++) {
        s->id[i] = t->byte_tok[w[i]];
        s->prev[i] = (int32_t)i - 1;
        s->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    s->heap_n = 0;
    for (size_t i = 0; i + 1 < n; i++) bpe_try_pair(t, s, (int32_t)i, (int32_t)i + 1);
    while (s->heap_n > 0) {
        heap_ent e = heap_pop(s);
        if (s->id[e.left] != e.a || s->id[e.right] != e.b || s->next[e.left] != e.right) continue;
        const merge_slot *m = merge_find(t, e.a, e.b);
        s->id[e.left] = m->result;
        s->id[e.right] = -2;
        s->next[e.left] = s->next[e.right];
        if (s->next[e.right] >= 0) s->prev[s->next[e.right]] = e.left;
        bpe_try_pair(t, s, s->prev[e.left], e.left);
        bpe_try_pair(t, s, e.left, s->next[e.left]);
    }
    for (int32_t i = 0; i >= 0; i = s->next[i]) {
        if (s->id[i] >= 0) emit(s, s->id[i]);
        else if (t->unk >= 0) emit(s, t->unk);
    }
}

static void bpe_fragment(const tokenizer *t, scratch *s, pcre2_match_data *md, const char *text, size_t len) {
    size_t pos = 0;
    while (pos < len && !s->nomem) {
        int rc = pcre2_match(t->re, (PCRE2_SPTR)text, len, pos, 0, md, NULL);
        if (rc < 0) { /* no further match: the rest is one word */
            bpe_word(t, s, (const unsigned char *)text + pos, len - pos);
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[0] > pos) bpe_word(t, s, (const unsigned char *)text + pos, ov[0] - pos);
        if (ov[1] <= ov[0]) { /* an empty match cannot happen with these patterns; step on */
            size_t step = utf8_len((const unsigned char *)text + ov[0], len - ov[0]);
            bpe_word(t, s, (const unsigned char *)text + ov[0], step);
            pos = ov[0] + step;
            continue;
        }
        bpe_word(t, s, (const unsigned char *)text + ov[0], ov[1] - ov[0]);
        pos = ov[1];
    }
}

static void spm_try_pair(const tokenizer *t, scratch *s, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    int32_t n = s->len[l] + s->len[r];
    int32_t id = find_bytes(t, s->text + s->start[l], (size_t)n);
    if (id >= 0) heap_push(s, (heap_ent){-t->scores[id], l, r, n, 0});
}

static void spm_emit_bytes(const tokenizer *t, scratch *s, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int32_t b = t->byte_tok[(unsigned char)p[i]];
        if (b >= 0) emit(s, b);
        else if (t->unk >= 0) emit(s, t->unk);
    }
}

static void spm_fragment(const tokenizer *t, scratch *s, const char *text, size_t len, bool prefix) {
    size_t tn = len * 3 + 3;
    if (!scratch_reserve(s, len + 1, tn)) return;
    size_t k = 0;
    if (prefix) { memcpy(s->text, "\xe2\x96\x81", 3); k = 3; }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(s->text + k, "\xe2\x96\x81", 3); k += 3; }
        else s->text[k++] = text[i];
    }
    int32_t n = 0;
    for (size_t i = 0; i < k; n++) {
        size_t l = utf8_len((const unsigned char *)s->text + i, k - i);
        s->start[n] = (int32_t)i;
        s->len[n] = (int32_t)l;
        s->prev[n] = n - 1;
        s->next[n] = n + 1;
        i += l;
    }
    if (n == 0) return;
    s->next[n - 1] = -1;
    s->heap_n = 0;
    for (int32_t i = 0; i + 1 < n; i++) spm_try_pair(t, s, i, i + 1);
    while (s->heap_n > 0) {
        heap_ent e = heap_pop(s);
        if (s->len[e.left] == 0 || s->len[e.right] == 0 || s->len[e.left] + s->len[e.right] != e.a ||
            s->next[e.left] != e.right)
            continue;
        s->len[e.left] += s->len[e.right];
        s->len[e.right] = 0;
        s->next[e.left] = s->next[e.right];
        if (s->next[e.right] >= 0) s->prev[s->next[e.right]] = e.left;
        spm_try_pair(t, s, s->prev[e.left], e.left);
        spm_try_pair(t, s, e.left, s->next[e.left]);
    }
    for (int32_t i = 0; i >= 0; i = s->next[i]) {
        int32_t id = find_bytes(t, s->text + s->start[i], (size_t)s->len[i]);
        if (id >= 0) emit(s, id);
        else spm_emit_bytes(t, s, s->text + s->start[i], (size_t)s->len[i]);
    }
}

/* The special token that starts at text[i], or -1. */
static int32_t special_at(const tokenizer *t, const char *text, size_t len, size_t i, bool parse_special) {
    unsigned char c = (unsigned char)text[i];
    for (size_t j = t->special_first[c]; j < t->special_first[c + 1]; j++) {
        int32_t id = t->special_by_byte[j];
        if (t->types[id] == TOKEN_TYPE_CONTROL && !parse_special) continue;
        size_t l;
        const char *p = tok_text(t, id, &l);
        if (l <= len - i && memcmp(p, text + i, l) == 0) return id;
    }
    return -1;
}

pacer_err tokenizer_encode(const tokenizer *t, const char *text, size_t len, bool add_special,
                           bool parse_special, int32_t *out, size_t cap, size_t *n_out) {
    *n_out = 0;
    if (!t || (!text && len)) return PACER_ERR_ARG;
    scratch s = {.out = out, .cap_out = out ? cap : 0};
    pcre2_match_data *md = NULL;
    if (t->model == MODEL_BPE && !(md = pcre2_match_data_create_from_pattern(t->re, NULL)))
        return PACER_ERR_NOMEM;
    if (add_special && t->add_bos && t->bos >= 0) emit(&s, t->bos);
    bool prev_special = true; /* SPM: a fragment after a special token (or first) gets the space */
    size_t frag = 0;
    for (size_t i = 0; i <= len && !s.nomem; i++) {
        int32_t sp = i < len && t->n_special ? special_at(t, text, len, i, parse_special) : -1;
        if (sp < 0 && i < len) continue;
        if (i > frag) {
            if (t->model == MODEL_BPE) bpe_fragment(t, &s, md, text + frag, i - frag);
            else spm_fragment(t, &s, text + frag, i - frag, t->add_space_prefix && prev_special);
            prev_special = false;
        }
        if (sp >= 0) {
            emit(&s, sp);
            prev_special = true;
            size_t l = t->text_off[sp + 1] - t->text_off[sp];
            i += l - 1;
            frag = i + 1;
        }
    }
    if (add_special && t->add_eos && t->eos >= 0) emit(&s, t->eos);
    free(s.id); free(s.prev); free(s.next); free(s.start); free(s.len); free(s.heap); free(s.text);
    if (md) pcre2_match_data_free(md);
    *n_out = s.n_out;
    if (s.nomem) return PACER_ERR_NOMEM;
    return s.n_out > cap ? PACER_ERR_TOO_BIG : PACER_OK;
}

/* ---- lookups ---- */

const char *tokenizer_piece(const tokenizer *t, int32_t id, size_t *len) {
    *len = 0;
    if (!t || id < 0 || id >= t->n_vocab) return NULL;
    *len = t->piece_off[id + 1] - t->piece_off[id];
    return t->piece_blob + t->piece_off[id];
}

const char *tokenizer_token_text(const tokenizer *t, int32_t id, size_t *len) {
    *len = 0;
    if (!t || id < 0 || id >= t->n_vocab) return NULL;
    return tok_text(t, id, len);
}

int tokenizer_token_type(const tokenizer *t, int32_t id) {
    return t && id >= 0 && id < t->n_vocab ? t->types[id] : TOKEN_TYPE_UNDEFINED;
}

size_t tokenizer_decode(const tokenizer *t, const int32_t *ids, size_t n, bool remove_space,
                        char *dst, size_t cap) {
    size_t k = 0;
    bool strip = remove_space && t->model == MODEL_SPM && t->add_space_prefix;
    for (size_t i = 0; i < n; i++) {
        size_t l;
        const char *p = tokenizer_piece(t, ids[i], &l);
        if (!p || l == 0) continue;
        if (strip && p[0] == ' ') {
            p++;
            l--;
        }
        strip = false;
        if (k < cap) memcpy(dst + k, p, l <= cap - k ? l : cap - k);
        k += l;
    }
    return k;
}

int tokenizer_n_vocab(const tokenizer *t) { return t->n_vocab; }
int32_t tokenizer_bos(const tokenizer *t) { return t->bos; }
int32_t tokenizer_eos(const tokenizer *t) { return t->eos; }
int32_t tokenizer_eot(const tokenizer *t) { return t->eot; }
bool tokenizer_add_bos(const tokenizer *t) { return t->add_bos; }
bool tokenizer_add_eos(const tokenizer *t) { return t->add_eos; }

bool tokenizer_is_eog(const tokenizer *t, int32_t id) {
    return id >= 0 && (id == t->eos || id == t->eot || id == t->eom);
}

int32_t tokenizer_find_token(const tokenizer *t, const char *text) {
    return find_bytes(t, text, strlen(text));
}

const char *tokenizer_chat_template(const tokenizer *t) { return t->chat_template; }
const char *tokenizer_model(const tokenizer *t) { return t->model_name; }
const char *tokenizer_pre(const tokenizer *t) { return t->pre_name; }
