/* sanitize.c - the sanitizer's context (prompt windows, private names), normalization,
 * output with placeholders and a length cap, the check the board's intake runs, the fixed
 * vocabularies, and the receipt-wide check. The detectors are in sanitize_scan.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "base/utf8.h"
#include "bench/sanitize_internal.h"

const struct san_class_info san_classes[SAN_N_CLASSES] = {
    [SAN_KEEP] = {"", "nothing"},
    [SAN_URL] = {"<url>", "a URL"},
    [SAN_EMAIL] = {"<email>", "an e-mail address"},
    [SAN_PATH] = {"<path>", "a file-system path"},
    [SAN_ADDRESS] = {"<address>", "an IP address"},
    [SAN_ID] = {"<id>", "a UUID or MAC address"},
    [SAN_SECRET] = {"<secret>", "a token or key"},
    [SAN_HOST] = {"<host>", "a host name"},
    [SAN_NAME] = {"<name>", "a private name of this run"},
    [SAN_PROMPT] = {"<prompt>", "text of the prompt or a fixture"},
};

const char *const sanitize_finish_reasons[] = {"stop", "length", "content_filter", "tool_calls", "function_call", NULL};
const char *const sanitize_backends[] = {"cpu", "cuda", "rocm", "mlx", "metal", "vulkan", NULL};

const char *sanitize_vocab(const char *const *vocab, const char *s) {
    if (!s || !*s) return "";
    for (int i = 0; vocab[i]; i++)
        if (strcmp(vocab[i], s) == 0) return vocab[i];
    return "other";
}

/* ---- normalization ---- */

enum { SAN_DIRTY_CONTROL = 1, SAN_DIRTY_UTF8 = 2 };

/* Invisible characters that could hide a pattern from the detectors: dropped. */
static bool is_format_char(uint32_t cp) {
    return cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

/* The code point of the well-formed sequence at s[0..n) and its length, or 0 when the bytes
 * there are not one (a stray continuation byte, an overlong form, a surrogate, a cut). */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned lo, hi;
    size_t len = utf8_lead(s[0], &lo, &hi);
    if (len == 0 || len > n) return 0;
    if (len == 1) {
        *cp = s[0];
        return 1;
    }
    if (s[1] < lo || s[1] > hi) return 0;
    uint32_t v = s[0] & (0xFF >> (len + 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    *cp = v;
    return len;
}

/* Normalizes n bytes into out: control characters (C0, DEL, C1) and line separators become
 * spaces, white space is collapsed and trimmed, format characters are dropped, each byte of
 * invalid UTF-8 becomes U+FFFD. *dirty gets SAN_DIRTY_* for what was changed (collapsing
 * ordinary spaces does not count). */
static pacer_err san_normalize(const char *in, size_t n, buf *out, unsigned *dirty) {
    const unsigned char *s = (const unsigned char *)in;
    bool space = false;
    pacer_err rc = PACER_OK;
    *dirty = 0;
    for (size_t i = 0; i < n && !rc;) {
        uint32_t cp = 0;
        size_t len = utf8_decode(s + i, n - i, &cp);
        bool bad = len == 0;
        if (bad) {
            *dirty |= SAN_DIRTY_UTF8;
            cp = 0xFFFD;
            len = 1;
        }
        bool ws = cp <= 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0xA0) || cp == 0x2028 || cp == 0x2029;
        if (ws || is_format_char(cp)) {
            if (cp != ' ') *dirty |= SAN_DIRTY_CONTROL;
            space |= ws;
            i += len;
            continue;
        }
        if (space && out->len) rc = buf_append_char(out, ' ');
        space = false;
        if (!rc) rc = bad ? buf_append(out, "\xEF\xBF\xBD", 3) : buf_append(out, s + i, len);
        i += len;
    }
    if (!rc && !out->data) rc = buf_append(out, "", 0);
    return rc;
}

/* ---- the context ---- */

static uint64_t san_hash(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

bool san_window_has(const sanitize_context *c, uint64_t key) {
    if (!c || !c->cap) return false;
    for (size_t i = san_hash(key) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        if (c->windows[i] == key) return true;
        if (c->windows[i] == 0) return false;
    }
}

static pacer_err san_window_add(sanitize_context *c, uint64_t key) {
    if ((c->count + 1) * 2 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        uint64_t *w = calloc(cap, sizeof *w);
        if (!w) return PACER_ERR_NOMEM;
        for (size_t i = 0; i < c->cap; i++) {
            if (!c->windows[i]) continue;
            size_t j = san_hash(c->windows[i]) & (cap - 1);
            while (w[j]) j = (j + 1) & (cap - 1);
            w[j] = c->windows[i];
        }
        free(c->windows);
        c->windows = w;
        c->cap = cap;
    }
    size_t i = san_hash(key) & (c->cap - 1);
    while (c->windows[i] && c->windows[i] != key) i = (i + 1) & (c->cap - 1);
    if (!c->windows[i]) c->windows[i] = key, c->count++;
    return PACER_OK;
}

sanitize_context *sanitize_context_new(void) { return calloc(1, sizeof(sanitize_context)); }

void sanitize_context_free(sanitize_context *c) {
    if (!c) return;
    free(c->windows);
    free(c);
}

typedef struct window_adder {
    sanitize_context *c;
    uint64_t key;
    size_t have;
    pacer_err rc;
} window_adder;

static void window_add_byte(void *ctx, unsigned char b, size_t from, size_t to) {
    window_adder *w = ctx;
    (void)from, (void)to;
    w->key = (w->key << 8) | b;
    if (++w->have >= 8 && !w->rc) w->rc = san_window_add(w->c, w->key);
}

pacer_err sanitize_context_add_text(sanitize_context *c, const char *text, size_t n) {
    if (!c || (!text && n)) return PACER_ERR_ARG;
    if (n > SANITIZE_TEXT_MAX - c->text_bytes) return PACER_ERR_TOO_BIG;
    c->text_bytes += n;
    buf t;
    buf_init(&t, 3 * n + 8);
    unsigned dirty;
    window_adder w = {.c = c};
    pacer_err rc = san_normalize(text, n, &t, &dirty);
    if (!rc) san_fold((const unsigned char *)t.data, t.len, NULL, window_add_byte, &w);
    buf_free(&t);
    return rc ? rc : w.rc;
}

pacer_err sanitize_context_add_suite(sanitize_context *c, const suite *s) {
    pacer_err rc = PACER_OK;
    for (int i = 0; i < s->n_workloads && !rc; i++)
        if (s->workloads[i].prompt) rc = sanitize_context_add_text(c, s->workloads[i].prompt, strlen(s->workloads[i].prompt));
    return rc;
}

pacer_err sanitize_context_add_word(sanitize_context *c, const char *word) {
    if (!c || !word) return PACER_ERR_ARG;
    size_t n = strlen(word);
    if (n < 3) return PACER_OK;
    if (n >= SAN_WORD_LEN) return PACER_ERR_TOO_BIG;
    char low[SAN_WORD_LEN];
    for (size_t i = 0; i <= n; i++) low[i] = (char)(word[i] >= 'A' && word[i] <= 'Z' ? word[i] | 0x20 : word[i]);
    for (int i = 0; i < c->n_words; i++)
        if (strcmp(c->words[i], low) == 0) return PACER_OK;
    if (c->n_words == SAN_WORDS_MAX) return PACER_ERR_TOO_BIG;
    memcpy(c->words[c->n_words++], low, n + 1);
    return PACER_OK;
}

/* ---- scanning, output, checks ---- */

/* Normalizes `in` and runs the detectors: t and *m are the caller's to free. */
static pacer_err san_run(const sanitize_context *c, bool use_texts, const char *in, size_t n, buf *t, uint8_t **m,
                         unsigned *dirty) {
    buf_init(t, 3 * (size_t)SANITIZE_INPUT_MAX + 8);
    *m = NULL;
    pacer_err rc = san_normalize(in ? in : "", in ? n : 0, t, dirty);
    if (rc) return rc;
    *m = calloc(t->len + 1, 1);
    if (!*m) return PACER_ERR_NOMEM;
    san_scan s = {.ctx = c, .use_texts = use_texts, .t = (const unsigned char *)t->data, .n = t->len, .m = *m};
    san_scan_all(&s);
    return PACER_OK;
}

/* The piece of output at t[i]: a character kept, or the placeholder of a matched run.
 * Sets *text, returns its length and advances *i. */
static size_t san_piece(const unsigned char *t, const uint8_t *m, size_t n, size_t *i, const char **text) {
    uint8_t cls = m[*i];
    if (cls == SAN_KEEP || cls == SAN_PLACEHOLDER) {
        unsigned lo, hi;
        size_t len = utf8_lead(t[*i], &lo, &hi);
        if (len == 0 || *i + len > n) len = 1;
        *text = (const char *)t + *i;
        *i += len;
        return len;
    }
    while (*i < n && m[*i] == cls) (*i)++;
    *text = san_classes[cls].placeholder;
    return strlen(*text);
}

/* Writes the pieces to out; when they do not fit (or the input was cut), as many whole
 * pieces as fit with "..." after them. */
static size_t san_emit(const buf *tb, const uint8_t *m, bool cut, char *out, size_t out_size) {
    const unsigned char *t = (const unsigned char *)tb->data;
    const char *p;
    size_t total = 0, o = 0;
    for (size_t i = 0; i < tb->len;) total += san_piece(t, m, tb->len, &i, &p);
    bool fits = !cut && total < out_size;
    size_t limit = fits ? out_size - 1 : out_size > 4 ? out_size - 4 : 0;
    for (size_t i = 0; i < tb->len;) {
        size_t len = san_piece(t, m, tb->len, &i, &p);
        if (o + len > limit) break;
        memcpy(out + o, p, len);
        o += len;
    }
    if (!fits) {
        while (o > 0 && out[o - 1] == ' ') o--;
        if (out_size > 4) memcpy(out + o, "...", 3), o += 3;
    }
    out[o] = '\0';
    return o;
}

/* One pass of sanitize_text(); SIZE_MAX when memory ran out. */
static size_t san_once(const sanitize_context *c, const char *in, size_t n, char *out, size_t out_size) {
    bool cut = n > SANITIZE_INPUT_MAX;
    buf t;
    uint8_t *m = NULL;
    unsigned dirty;
    size_t len = SIZE_MAX;
    if (san_run(c, true, in, cut ? SANITIZE_INPUT_MAX : n, &t, &m, &dirty) == PACER_OK)
        len = san_emit(&t, m, cut, out, out_size);
    free(m);
    buf_free(&t);
    return len;
}

/* sanitize_check() with a choice: `use_texts` false leaves the prompt runs out (for
 * strings that never met a prompt, and pacer's own words). */
static bool san_check_ex(const sanitize_context *c, bool use_texts, const char *s, size_t n, const char **what) {
    const char *found = NULL;
    buf t;
    buf_init(&t, 0);
    uint8_t *m = NULL;
    unsigned dirty = 0;
    if (n > SANITIZE_INPUT_MAX) found = "text longer than the sanitizer keeps";
    else if (san_run(c, use_texts, s, n, &t, &m, &dirty) != PACER_OK) found = "text that could not be checked (out of memory)";
    else if (dirty & SAN_DIRTY_UTF8) found = "invalid UTF-8";
    else if (dirty & SAN_DIRTY_CONTROL) found = "a control or format character";
    for (size_t i = 0; !found && m && i < t.len; i++)
        if (m[i] != SAN_KEEP && m[i] != SAN_PLACEHOLDER) found = san_classes[m[i]].what;
    buf_free(&t);
    free(m);
    if (what) *what = found;
    return found != NULL;
}

bool sanitize_check(const sanitize_context *c, const char *s, size_t n, const char **what) {
    return san_check_ex(c, true, s, n, what);
}

size_t sanitize_text(const sanitize_context *c, const char *in, size_t n, char *out, size_t out_size) {
    if (!out || out_size == 0) return 0;
    out[0] = '\0';
    if (!in) n = 0;
    size_t len = san_once(c, in, n, out, out_size);
    /* what a cut or a replacement uncovered (rare): one more pass over the result */
    for (int pass = 0; len != SIZE_MAX && pass < 3 && sanitize_check(c, out, len, NULL); pass++) {
        char *again = malloc(len + 1);
        if (!again) len = SIZE_MAX;
        else {
            memcpy(again, out, len + 1);
            len = san_once(c, again, len, out, out_size);
            free(again);
        }
    }
    if (len == SIZE_MAX || sanitize_check(c, out, len, NULL)) {
        snprintf(out, out_size, "%s", out_size > 9 ? "<removed>" : "");
        len = strlen(out);
    }
    return len;
}

/* ---- the receipt check ---- */

typedef struct receipt_checker {
    const sanitize_context *c;
    char *err;
    size_t err_len;
} receipt_checker;

/* Checks one string value (absent or null is fine); false with the error set on a find. */
static bool check_value(receipt_checker *k, const json_t *v, bool use_texts, const char *where) {
    const char *what = NULL;
    if (!v || json_is_null(v)) return true;
    if (!json_is_string(v)) what = "a value that is not a string";
    else if (!san_check_ex(k->c, use_texts, json_string_value(v), json_string_length(v), &what)) return true;
    snprintf(k->err, k->err_len, "privacy check failed: %s holds %s", where, what);
    return false;
}

/* Checks a value against a vocabulary, "" and the words of `also` (" a b "). */
static bool check_vocab(receipt_checker *k, const json_t *v, const char *const *vocab, const char *also, const char *where) {
    if (!v || json_is_null(v)) return true;
    const char *s = json_string_value(v);
    char word[48];
    if (s && strlen(s) < 40) {
        snprintf(word, sizeof word, " %s ", s);
        if (!*s || strcmp(sanitize_vocab(vocab, s), "other") != 0 || strstr(also, word)) return true;
    }
    snprintf(k->err, k->err_len, "privacy check failed: %s is not one of its fixed values", where);
    return false;
}

static bool check_array(receipt_checker *k, const json_t *a, bool use_texts, const char *name) {
    size_t i;
    json_t *v;
    char where[96];
    json_array_foreach(a, i, v) {
        snprintf(where, sizeof where, "%s[%zu]", name, i);
        if (!check_value(k, v, use_texts, where)) return false;
    }
    return true;
}

/* Checks the attempts of a cell or a load level (`name`: "cells[0]", "load.levels[1]"). */
static bool check_attempts(receipt_checker *k, const json_t *attempts, const char *name) {
    size_t ai;
    json_t *a;
    char where[160];
    json_array_foreach(attempts, ai, a) {
#define AT(field) (snprintf(where, sizeof where, "%s.attempts[%zu]." field, name, ai), where)
        if (!check_value(k, json_object_get(a, "reason"), false, AT("reason")) ||
            !check_value(k, json_object_get(a, "server_message"), true, AT("server_message")) ||
            !check_value(k, json_object_get(a, "token_hash"), false, AT("token_hash")) ||
            !check_vocab(k, json_object_get(a, "finish_reason"), sanitize_finish_reasons, " other ", AT("finish_reason")))
            return false;
#undef AT
    }
    return true;
}

/* Cells and the levels of a load sweep: their reasons and their attempts. */
static bool check_groups(receipt_checker *k, const json_t *groups, const char *name) {
    size_t gi;
    json_t *g;
    char where[96];
    json_array_foreach(groups, gi, g) {
        snprintf(where, sizeof where, "%s[%zu].reasons", name, gi);
        if (!check_array(k, json_object_get(g, "reasons"), false, where)) return false;
        snprintf(where, sizeof where, "%s[%zu]", name, gi);
        if (!check_attempts(k, json_object_get(g, "attempts"), where)) return false;
    }
    return true;
}

pacer_err sanitize_check_receipt(const json_t *r, const sanitize_context *c, char *err, size_t err_len) {
    receipt_checker k = {c, err, err_len};
    static const char *const plain[] = {"manifest.reason", "platform.name", "model.revision", "model.served_model_id",
                                        "hardware.cpu.model", NULL};
    for (int i = 0; plain[i]; i++)
        if (!check_value(&k, json_get_path(r, plain[i]), false, plain[i])) return PACER_ERR_FORMAT;
    size_t i;
    json_t *g;
    char where[64];
    json_array_foreach(json_get_path(r, "hardware.gpus"), i, g) {
        snprintf(where, sizeof where, "hardware.gpus[%zu].name", i);
        if (!check_value(&k, json_object_get(g, "name"), false, where)) return PACER_ERR_FORMAT;
    }
    if (!check_vocab(&k, json_get_path(r, "backend.name"), sanitize_backends, " auto unknown other ", "backend.name") ||
        !check_array(&k, json_object_get(r, "unranked_reasons"), false, "unranked_reasons") ||
        !check_groups(&k, json_object_get(r, "cells"), "cells") ||
        !check_groups(&k, json_get_path(r, "load.levels"), "load.levels"))
        return PACER_ERR_FORMAT;
    return PACER_OK;
}
