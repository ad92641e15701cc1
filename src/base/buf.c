/* buf.c - capped growable buffers. */
#include "base/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(buf *b, size_t max) {
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void buf_free(buf *b) {
    if (!b) return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void buf_reset(buf *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

pacer_err buf_reserve(buf *b, size_t extra) {
    if (extra > b->max || b->len > b->max - extra) return PACER_ERR_TOO_BIG;
    size_t need = b->len + extra;
    if (need <= b->cap && b->data) return PACER_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > ((size_t)-1) / 2 ? need : cap * 2;
    if (cap > b->max) cap = b->max;
    char *p = realloc(b->data, cap + 1);
    if (!p) return PACER_ERR_NOMEM;
    if (!b->data) p[0] = '\0';
    b->data = p;
    b->cap = cap;
    return PACER_OK;
}

pacer_err buf_append(buf *b, const void *data, size_t n) {
    pacer_err rc = buf_reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return PACER_OK;
}

pacer_err buf_append_str(buf *b, const char *s) { return buf_append(b, s, strlen(s)); }

pacer_err buf_append_char(buf *b, char c) { return buf_append(b, &c, 1); }

pacer_err buf_vappendf(buf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return PACER_ERR_ARG;
    pacer_err rc = buf_reserve(b, (size_t)n);
    if (rc) return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return PACER_OK;
}

pacer_err buf_appendf(buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pacer_err rc = buf_vappendf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void buf_consume(buf *b, size_t n) {
    if (n >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *buf_detach(buf *b) {
    char *p = b->data;
    if (!p) p = calloc(1, 1);
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
