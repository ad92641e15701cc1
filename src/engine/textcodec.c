/* textcodec.c - byte-level vocabulary codec: the GPT-2 byte-to-code-point table, an
 * open-addressing hash from piece strings to ids, greedy longest-match encoding. */
#include "engine/textcodec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct textcodec {
    const gguf_file *f;
    int64_t key;      /* index of tokenizer.ggml.tokens */
    uint32_t n;
    int32_t *slots;   /* hash table of ids, -1 empty */
    uint32_t mask;
    size_t max_len;
    int32_t bos, eos, eot;
    bool add_bos;
    uint16_t byte_cp[256]; /* byte -> code point */
    int16_t cp_byte[512];  /* code point -> byte, -1 none */
};

static uint32_t hash_bytes(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static int32_t lookup(const textcodec *c, const char *s, size_t n) {
    for (uint32_t i = hash_bytes(s, n) & c->mask;; i = (i + 1) & c->mask) {
        int32_t id = c->slots[i];
        if (id < 0)
            return -1;
        size_t l = 0;
        const char *t = gguf_get_arr_str(c->f, c->key, (uint64_t)id, &l);
        if (l == n && memcmp(t, s, n) == 0)
            return id;
    }
}

static void byte_table(textcodec *c) {
    int extra = 0;
    for (int i = 0; i < 512; i++)
        c->cp_byte[i] = -1;
    for (int b = 0; b < 256; b++) {
        bool self = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
        c->byte_cp[b] = (uint16_t)(self ? b : 256 + extra++);
        c->cp_byte[c->byte_cp[b]] = (int16_t)b;
    }
}

pacer_err textcodec_open(const gguf_file *f, textcodec **out, char *err, size_t err_len) {
    *out = NULL;
    int64_t key = gguf_find_key(f, "tokenizer.ggml.tokens");
    if (key < 0 || gguf_get_arr_type(f, key) != GGUF_TYPE_STRING) {
        snprintf(err, err_len, "the model has no tokenizer.ggml.tokens");
        return PACER_ERR_FORMAT;
    }
    textcodec *c = calloc(1, sizeof *c);
    if (!c)
        return PACER_ERR_NOMEM;
    c->f = f;
    c->key = key;
    c->n = (uint32_t)gguf_get_arr_n(f, key);
    uint32_t cap = 1;
    while (cap < c->n * 2 + 2)
        cap <<= 1;
    c->mask = cap - 1;
    c->slots = malloc((size_t)cap * sizeof *c->slots);
    if (!c->slots) {
        free(c);
        return PACER_ERR_NOMEM;
    }
    memset(c->slots, 0xFF, (size_t)cap * sizeof *c->slots);
    for (uint32_t id = 0; id < c->n; id++) {
        size_t l = 0;
        const char *t = gguf_get_arr_str(f, key, id, &l);
        if (!t || l == 0)
            continue;
        if (lookup(c, t, l) >= 0)
            continue; /* keep the first id of a duplicated piece */
        uint32_t i = hash_bytes(t, l) & c->mask;
        while (c->slots[i] >= 0)
            i = (i + 1) & c->mask;
        c->slots[i] = (int32_t)id;
        if (l > c->max_len)
            c->max_len = l;
    }
    c->bos = (int32_t)gguf_get_i32(f, "tokenizer.ggml.bos_token_id", -1);
    c->eos = (int32_t)gguf_get_i32(f, "tokenizer.ggml.eos_token_id", -1);
    c->eot = (int32_t)gguf_get_i32(f, "tokenizer.ggml.eot_token_id", -1);
    c->add_bos = gguf_get_bool(f, "tokenizer.ggml.add_bos_token", false) && c->bos >= 0;
    byte_table(c);
    *out = c;
    return PACER_OK;
}

void textcodec_close(textcodec *c) {
    if (!c)
        return;
    free(c->slots);
    free(c);
}

static size_t put_utf8(char *o, unsigned cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    o[0] = (char)(0xC0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

int textcodec_encode(const textcodec *c, const char *text, size_t len, int32_t *ids, int max) {
    int n = 0;
    if (c->add_bos) {
        if (max < 1)
            return -1;
        ids[n++] = c->bos;
    }
    char *m = malloc(len * 2 + 1);
    if (!m)
        return -1;
    size_t ml = 0;
    for (size_t i = 0; i < len; i++)
        ml += put_utf8(m + ml, c->byte_cp[(uint8_t)text[i]]);
    size_t i = 0;
    while (i < ml) {
        size_t best = 0;
        int32_t id = -1;
        for (size_t l = ml - i < c->max_len ? ml - i : c->max_len; l > 0; l--) {
            id = lookup(c, m + i, l);
            if (id >= 0) {
                best = l;
                break;
            }
        }
        if (id < 0) { /* a byte missing from the vocabulary: skip it */
            i += ((uint8_t)m[i] & 0xE0) == 0xC0 ? 2 : 1;
            continue;
        }
        if (n >= max) {
            free(m);
            return -1;
        }
        ids[n++] = id;
        i += best;
    }
    free(m);
    return n;
}

size_t textcodec_piece(const textcodec *c, int32_t id, char *buf, size_t cap) {
    if (id < 0 || (uint32_t)id >= c->n || id == c->bos || id == c->eos || id == c->eot)
        return 0;
    size_t l = 0, o = 0;
    const unsigned char *t = (const unsigned char *)gguf_get_arr_str(c->f, c->key, (uint64_t)id, &l);
    for (size_t i = 0; i < l && o < cap;) {
        unsigned cp;
        if (t[i] < 0x80) {
            cp = t[i++];
        } else if ((t[i] & 0xE0) == 0xC0 && i + 1 < l) {
            cp = ((t[i] & 0x1Fu) << 6) | (t[i + 1] & 0x3Fu);
            i += 2;
        } else { /* not a byte-level code point: copy the raw byte */
            buf[o++] = (char)t[i++];
            continue;
        }
        if (cp < 512 && c->cp_byte[cp] >= 0)
            buf[o++] = (char)c->cp_byte[cp];
    }
    return o;
}

bool textcodec_is_eog(const textcodec *c, int32_t id) { return id >= 0 && (id == c->eos || id == c->eot); }
