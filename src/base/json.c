/* json.c - canonical JSON encoding, typed getters, and a validating skim over JSON text
 * (the streaming client's hot path: it checks an event without building it). */
#include "base/json.h"

#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "base/utf8.h"

static int json_buf_cb(const char *data, size_t n, void *ctx) {
    return buf_append(ctx, data, n) == PACER_OK ? 0 : -1;
}

pacer_err json_canonical_append(const json_t *v, buf *out) {
    if (!v) return PACER_ERR_ARG;
    size_t before = out->len;
    if (json_dump_callback(v, json_buf_cb, out, JSON_CANONICAL_FLAGS | JSON_ENCODE_ANY) != 0) {
        out->len = before;
        if (out->data) out->data[before] = '\0';
        return PACER_ERR_TOO_BIG;
    }
    return PACER_OK;
}

char *json_canonical_dump(const json_t *v) {
    return v ? json_dumps(v, JSON_CANONICAL_FLAGS | JSON_ENCODE_ANY) : NULL;
}

pacer_err json_canonical_sha256(const json_t *v, char out[65]) {
    char *s = json_canonical_dump(v);
    if (!s) return PACER_ERR_NOMEM;
    pacer_err rc = sha256_hex(s, strlen(s), out);
    free(s);
    return rc;
}

json_t *json_get_path(const json_t *root, const char *dotted) {
    const json_t *v = root;
    char key[128];
    if (!dotted || !*dotted) return NULL;
    while (v && *dotted) {
        size_t n = strcspn(dotted, ".");
        if (n >= sizeof key) return NULL;
        memcpy(key, dotted, n);
        key[n] = '\0';
        v = json_object_get(v, key);
        dotted += n + (dotted[n] == '.');
    }
    return (json_t *)v;
}

const char *json_get_str(const json_t *obj, const char *key, const char *def) {
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

int64_t json_get_int(const json_t *obj, const char *key, int64_t def) {
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

double json_get_num(const json_t *obj, const char *key, double def) {
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

bool json_get_bool(const json_t *obj, const char *key, bool def) {
    json_t *v = json_object_get(obj, key);
    return json_is_boolean(v) ? json_is_true(v) : def;
}

/* The skim: a recursive-descent recognizer of RFC 8259 JSON, strict where jansson is
 * strict (control characters, UTF-8, escapes, trailing text) and giving up (false) where
 * jansson's limits would decide. */
#define JSON_SKIM_MAX_DEPTH 32
#define JSON_SKIM_MAX_DIGITS 15

typedef struct json_skim {
    const char *p, *end;
} json_skim;

static void skim_ws(json_skim *k) {
    while (k->p < k->end && (*k->p == ' ' || *k->p == '\t' || *k->p == '\n' || *k->p == '\r')) k->p++;
}

static bool skim_hex4(json_skim *k, unsigned *v) {
    if (k->end - k->p < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = k->p[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15) return false;
        *v = *v << 4 | d;
    }
    k->p += 4;
    return true;
}

/* One UTF-8 sequence starting at a byte >= 0x80: no overlongs, surrogates or > U+10FFFF. */
static bool skim_utf8(json_skim *k) {
    const unsigned char *u = (const unsigned char *)k->p;
    size_t left = (size_t)(k->end - k->p);
    unsigned lo, hi;
    size_t len = utf8_lead(u[0], &lo, &hi);
    if (len < 2) return false;
    if (left < len || u[1] < lo || u[1] > hi) return false;
    for (size_t i = 2; i < len; i++)
        if (u[i] < 0x80 || u[i] > 0xBF) return false;
    k->p += len;
    return true;
}

static bool skim_string(json_skim *k) {
    k->p++; /* the opening quote */
    while (k->p < k->end) {
        unsigned char c = (unsigned char)*k->p;
        if (c == '"') { k->p++; return true; }
        if (c < 0x20) return false;
        if (c >= 0x80) {
            if (!skim_utf8(k)) return false;
            continue;
        }
        k->p++;
        if (c != '\\') continue;
        if (k->p == k->end) return false;
        char e = *k->p++;
        if (e == 'u') {
            unsigned v;
            /* \u0000 and surrogates depend on jansson's flags and pairing: left to jansson */
            if (!skim_hex4(k, &v) || v == 0 || (v >= 0xD800 && v <= 0xDFFF)) return false;
        } else if (!strchr("\"\\/bfnrt", e) || e == '\0') {
            return false;
        }
    }
    return false;
}

static bool skim_number(json_skim *k) {
    int digits = 0;
    if (k->p < k->end && *k->p == '-') k->p++;
    if (k->p == k->end) return false;
    if (*k->p == '0') k->p++, digits++;
    else if (*k->p >= '1' && *k->p <= '9') while (k->p < k->end && *k->p >= '0' && *k->p <= '9') k->p++, digits++;
    else return false;
    if (k->p < k->end && *k->p == '.') {
        k->p++;
        const char *f = k->p;
        while (k->p < k->end && *k->p >= '0' && *k->p <= '9') k->p++, digits++;
        if (k->p == f) return false;
    }
    if (k->p < k->end && (*k->p == 'e' || *k->p == 'E')) {
        k->p++;
        if (k->p < k->end && (*k->p == '+' || *k->p == '-')) k->p++;
        const char *x = k->p;
        while (k->p < k->end && *k->p >= '0' && *k->p <= '9') k->p++;
        if (k->p == x || k->p - x > 2) return false; /* big exponents: jansson decides overflow */
    }
    return digits <= JSON_SKIM_MAX_DIGITS;
}

static bool skim_value(json_skim *k, int depth);

static bool skim_word(json_skim *k, const char *w, size_t n) {
    if ((size_t)(k->end - k->p) < n || memcmp(k->p, w, n) != 0) return false;
    k->p += n;
    return true;
}

/* An object or array at k->p; for the top-level object, finds `key`'s value span. */
static bool skim_container(json_skim *k, int depth, const char *key, size_t key_len, const char *base,
                           size_t *val_at, size_t *val_len, int *key_seen) {
    if (depth > JSON_SKIM_MAX_DEPTH) return false;
    bool object = *k->p == '{';
    char close = object ? '}' : ']';
    k->p++;
    skim_ws(k);
    if (k->p < k->end && *k->p == close) { k->p++; return true; }
    for (;;) {
        bool match = false;
        if (object) {
            if (k->p == k->end || *k->p != '"') return false;
            const char *name = k->p + 1;
            if (!skim_string(k)) return false;
            size_t name_len = (size_t)(k->p - 1 - name);
            if (key && memchr(name, '\\', name_len)) return false; /* an escaped name: jansson decodes it */
            match = key && name_len == key_len && memcmp(name, key, key_len) == 0;
            skim_ws(k);
            if (k->p == k->end || *k->p != ':') return false;
            k->p++;
            skim_ws(k);
        }
        const char *v = k->p;
        if (!skim_value(k, depth + 1)) return false;
        if (match) {
            if (++*key_seen > 1) return false; /* jansson keeps the last: not decided here */
            *val_at = (size_t)(v - base);
            *val_len = (size_t)(k->p - v);
        }
        skim_ws(k);
        if (k->p == k->end) return false;
        if (*k->p == close) { k->p++; return true; }
        if (*k->p != ',') return false;
        k->p++;
        skim_ws(k);
    }
}

static bool skim_value(json_skim *k, int depth) {
    if (k->p == k->end) return false;
    switch (*k->p) {
    case '{':
    case '[': {
        size_t at, len;
        int seen = 0;
        return skim_container(k, depth, NULL, 0, k->p, &at, &len, &seen);
    }
    case '"': return skim_string(k);
    case 't': return skim_word(k, "true", 4);
    case 'f': return skim_word(k, "false", 5);
    case 'n': return skim_word(k, "null", 4);
    default: return skim_number(k);
    }
}

bool json_skim_object(const char *text, size_t n, const char *key, size_t *val_at, size_t *val_len) {
    json_skim k = {text, text + n};
    int seen = 0;
    *val_at = *val_len = 0;
    skim_ws(&k);
    if (k.p == k.end || *k.p != '{') return false;
    if (!skim_container(&k, 1, key, key ? strlen(key) : 0, text, val_at, val_len, &seen)) return false;
    skim_ws(&k);
    return k.p == k.end;
}
