/* json.c - canonical JSON encoding, typed getters, and a validating skim over JSON text
 * (the streaming client's hot path: it checks an event without building it). */
#include "base/json.h"

#include <stdint.h>
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
 * jansson's limits would decide. A plan (a small tree of member names and [0] steps)
 * says which values to note on the way. */
#define JSON_SKIM_MAX_DEPTH 32
#define JSON_SKIM_MAX_DIGITS 15
#define JSON_SKIM_KEY_MAX 63

typedef struct json_skim {
    const char *p, *end, *base;
    json_span *spans;
    bool escaped; /* the last string skimmed had an escape */
} json_skim;

/* One step of a plan: a member name (or the first element of an array), the output span
 * it fills (-1: none), and its own steps below. */
typedef struct skim_node {
    char key[JSON_SKIM_KEY_MAX + 1];
    size_t key_len;
    bool first;    /* [0], not a member */
    int out;
    int child, sibling; /* indexes into the plan's nodes; -1: none */
} skim_node;

struct json_skim_plan {
    skim_node nodes[JSON_SKIM_PLAN_MAX_NODES];
    int n_nodes;
    size_t n_paths;
};

/* Bytes a string's fast scan may pass over: printable ASCII other than '"' and '\\'. */
static const unsigned char skim_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

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

/* Word-at-a-time string scanning needs the first byte in memory to be the lowest. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SKIM_SWAR 1
#else
#define SKIM_SWAR 0
#endif

static bool skim_string(json_skim *k) {
    k->p++; /* the opening quote */
    k->escaped = false;
    while (k->p < k->end) {
        /* eight bytes at a time while none is a control byte, '"', '\\' or non-ASCII */
        while (SKIM_SWAR && k->end - k->p >= 8) {
            uint64_t w;
            memcpy(&w, k->p, 8);
            const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
            uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
            /* any byte < 0x20, any zero byte of q or b (a '"' or '\\'), any byte >= 0x80 */
            uint64_t special = (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) | w) & highs;
            if (special) { /* the lowest flag is exact: a borrow only runs upwards from a flagged byte */
                k->p += __builtin_ctzll(special) >> 3;
                break;
            }
            k->p += 8;
        }
        if (k->p == k->end) break;
        unsigned char c = (unsigned char)*k->p;
        if (skim_plain[c]) { k->p++; continue; }
        if (c == '"') { k->p++; return true; }
        if (c < 0x20) return false;
        if (c >= 0x80) {
            if (!skim_utf8(k)) return false;
            continue;
        }
        k->p++; /* a backslash */
        k->escaped = true;
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

/* The step below `node` that the member [name, +len) (or, with name NULL, element 0) is. */
static const skim_node *skim_step(const json_skim_plan *plan, const skim_node *node, const char *name, size_t len) {
    for (int c = node->child; c >= 0; c = plan->nodes[c].sibling) {
        const skim_node *n = &plan->nodes[c];
        if (!name) {
            if (n->first) return n;
            continue;
        }
        if (n->key_len != len || n->first || n->key[0] != name[0]) continue;
        size_t i = 1;
        while (i < len && n->key[i] == name[i]) i++;
        if (i == len) return n;
    }
    return NULL;
}

/* An object or array at k->p; with a plan node, notes the values its steps name. */
static bool skim_container(json_skim *k, int depth, const json_skim_plan *plan, const skim_node *node) {
    if (depth > JSON_SKIM_MAX_DEPTH) return false;
    bool object = *k->p == '{';
    char close = object ? '}' : ']';
    k->p++;
    skim_ws(k);
    if (k->p < k->end && *k->p == close) { k->p++; return true; }
    for (size_t index = 0;; index++) {
        const skim_node *step = NULL;
        if (object) {
            if (k->p == k->end || *k->p != '"') return false;
            const char *name = k->p + 1;
            if (!skim_string(k)) return false;
            if (node) {
                if (k->escaped) return false; /* an escaped name: jansson decodes it */
                step = skim_step(plan, node, name, (size_t)(k->p - 1 - name));
            }
            skim_ws(k);
            if (k->p == k->end || *k->p != ':') return false;
            k->p++;
            skim_ws(k);
        } else if (node && index == 0) {
            step = skim_step(plan, node, NULL, 0);
        }
        const char *v = k->p;
        bool ok;
        if (step && step->child >= 0 && k->p < k->end && (*k->p == '{' || *k->p == '['))
            ok = skim_container(k, depth + 1, plan, step);
        else
            ok = skim_value(k, depth + 1);
        if (!ok) return false;
        if (step && step->out >= 0) {
            json_span *sp = &k->spans[step->out];
            if (sp->len) return false; /* a key twice: jansson keeps the last, not decided here */
            sp->at = (size_t)(v - k->base);
            sp->len = (size_t)(k->p - v);
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
    case '[': return skim_container(k, depth, NULL, NULL);
    case '"': return skim_string(k);
    case 't': return skim_word(k, "true", 4);
    case 'f': return skim_word(k, "false", 5);
    case 'n': return skim_word(k, "null", 4);
    default: return skim_number(k);
    }
}

/* Adds path `path` (output `out`) to the plan; false when it is malformed or too big. */
static bool plan_add(json_skim_plan *p, const char *path, int out) {
    int at = 0; /* the root */
    const char *s = path;
    while (*s) {
        skim_node step = {.out = -1, .child = -1, .sibling = -1};
        if (strncmp(s, "[0]", 3) == 0) {
            step.first = true;
            s += 3;
        } else {
            size_t len = strcspn(s, ".[");
            if (len == 0 || len > JSON_SKIM_KEY_MAX) return false;
            memcpy(step.key, s, len);
            step.key_len = len;
            s += len;
        }
        if (*s == '.') s++;
        const skim_node *found = skim_step(p, &p->nodes[at], step.first ? NULL : step.key, step.key_len);
        if (found) {
            at = (int)(found - p->nodes);
            continue;
        }
        if (p->n_nodes == JSON_SKIM_PLAN_MAX_NODES) return false;
        step.sibling = p->nodes[at].child;
        p->nodes[p->n_nodes] = step;
        p->nodes[at].child = p->n_nodes;
        at = p->n_nodes++;
    }
    if (at == 0 || p->nodes[at].out >= 0) return false;
    p->nodes[at].out = out;
    return true;
}

json_skim_plan *json_skim_plan_new(const char *const *paths, size_t n) {
    json_skim_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nodes[0] = (skim_node){.out = -1, .child = -1, .sibling = -1};
    p->n_nodes = 1;
    p->n_paths = n;
    for (size_t i = 0; i < n; i++)
        if (!plan_add(p, paths[i], (int)i)) {
            free(p);
            return NULL;
        }
    return p;
}

void json_skim_plan_free(json_skim_plan *p) { free(p); }

bool json_skim_plan_run(const json_skim_plan *p, const char *text, size_t n, json_span *spans) {
    json_skim k = {.p = text, .end = text + n, .base = text, .spans = spans};
    memset(spans, 0, p->n_paths * sizeof *spans);
    skim_ws(&k);
    if (k.p == k.end || *k.p != '{') return false;
    if (!skim_container(&k, 1, p, &p->nodes[0])) return false;
    skim_ws(&k);
    return k.p == k.end;
}

bool json_skim_object(const char *text, size_t n, const char *key, size_t *val_at, size_t *val_len) {
    json_skim_plan plan = {.nodes = {{.out = -1, .child = -1, .sibling = -1}}, .n_nodes = 1, .n_paths = 1};
    json_span sp = {0, 0};
    *val_at = *val_len = 0;
    if (key) {
        size_t len = strlen(key);
        if (len > JSON_SKIM_KEY_MAX) return false;
        plan.nodes[1] = (skim_node){.key_len = len, .out = 0, .child = -1, .sibling = -1};
        memcpy(plan.nodes[1].key, key, len);
        plan.nodes[0].child = 1;
        plan.n_nodes = 2;
    }
    if (!json_skim_plan_run(&plan, text, n, &sp)) return false;
    *val_at = sp.at;
    *val_len = sp.len;
    return true;
}

size_t json_skim_string_len(const char *s, size_t n) {
    size_t len = 0;
    for (size_t i = 1; i + 1 < n; i++, len++) {
        if (s[i] != '\\') continue;
        if (s[++i] != 'u') continue;
        unsigned v = 0;
        for (int d = 0; d < 4; d++) {
            char c = s[++i];
            v = v << 4 | (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        len += v < 0x80 ? 0 : v < 0x800 ? 1 : 2; /* UTF-8 bytes beyond the one counted */
    }
    return len;
}
