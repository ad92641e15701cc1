/* gen_text.c - stop strings and UTF-8 holdback for generated text (see gen_text.h).
 * Held back: the longest tail that could still become a stop string, and an incomplete
 * trailing character. Everything else is emitted as soon as it is decoded. */
#include "engine/gen_text.h"

#include <string.h>

#include "base/utf8.h"

void gen_text_init(gen_text *t, const char *const *stops, int n_stops) {
    memset(t, 0, sizeof *t);
    buf_init(&t->pending, 1u << 20);
    for (int i = 0; i < n_stops && t->n_stops < GEN_MAX_STOPS; i++)
        if (stops[i] && stops[i][0]) t->stops[t->n_stops++] = stops[i];
}

void gen_text_free(gen_text *t) { buf_free(&t->pending); }

/* Length of a valid UTF-8 sequence starting at s (1..4), or 0 when invalid; *need is
 * set to the full length the lead byte announces when the sequence is cut short. */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *need) {
    unsigned lo, hi;
    size_t len = utf8_lead(s[0], &lo, &hi);
    if (len <= 1) return len;
    *need = len;
    for (size_t i = 1; i < len; i++) {
        if (i >= n) return 0; /* cut short: the caller looks at *need */
        unsigned b = s[i];
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) { *need = 0; return 0; }
    }
    return len;
}

size_t gen_utf8_complete_len(const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        size_t need = 0, l = utf8_seq(s + i, n - i, &need);
        if (l) { i += l; continue; }
        if (need && i + need > n) return i; /* incomplete tail: hold it */
        i++;                               /* invalid byte: emitted (as U+FFFD) */
    }
    return n;
}

pacer_err gen_utf8_sanitize_append(const char *str, size_t n, buf *out) {
    const unsigned char *s = (const unsigned char *)str;
    pacer_err rc = PACER_OK;
    size_t i = 0;
    while (i < n && rc == PACER_OK) {
        size_t need = 0, l = utf8_seq(s + i, n - i, &need);
        if (l) { rc = buf_append(out, s + i, l); i += l; }
        else { rc = buf_append(out, "\xEF\xBF\xBD", 3); i++; }
    }
    return rc;
}

/* Longest tail of p[0..n) that is a proper prefix of some stop string. */
static size_t stop_holdback(const gen_text *t, const char *p, size_t n) {
    size_t best = 0;
    for (int k = 0; k < t->n_stops; k++) {
        size_t sl = strlen(t->stops[k]);
        for (size_t l = (sl - 1 < n ? sl - 1 : n); l > best; l--)
            if (memcmp(p + n - l, t->stops[k], l) == 0) { best = l; break; }
    }
    return best;
}

pacer_err gen_text_push(gen_text *t, const char *bytes, size_t n, buf *out) {
    if (t->stopped) return PACER_OK;
    pacer_err rc = buf_append(&t->pending, bytes, n);
    if (rc) return rc;
    const char *p = t->pending.data;
    size_t len = t->pending.len, cut = len;
    for (int k = 0; k < t->n_stops; k++) {
        const char *hit = memmem(p, len, t->stops[k], strlen(t->stops[k]));
        if (hit && (size_t)(hit - p) < cut) { cut = (size_t)(hit - p); t->stopped = true; }
    }
    size_t emit;
    if (t->stopped) emit = cut;
    else {
        emit = len - stop_holdback(t, p, len);
        emit = gen_utf8_complete_len(p, emit);
    }
    rc = gen_utf8_sanitize_append(p, emit, out);
    if (t->stopped) buf_reset(&t->pending);
    else buf_consume(&t->pending, emit);
    return rc;
}

pacer_err gen_text_flush(gen_text *t, buf *out) {
    pacer_err rc = PACER_OK;
    if (!t->stopped && t->pending.len) rc = gen_utf8_sanitize_append(t->pending.data, t->pending.len, out);
    buf_reset(&t->pending);
    return rc;
}
