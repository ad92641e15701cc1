/* buf.h - growable byte buffers with a maximum size fixed at creation.
 * Every buffer filled from the network or a file has a cap: growing past it fails with
 * PACER_ERR_TOO_BIG and leaves the contents as they were. The data is always
 * NUL-terminated (the terminator is not counted in len and not in max). */
#ifndef PACER_BUF_H
#define PACER_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "base/error.h"

typedef struct buf {
    char *data;  /* NULL until the first append; then NUL-terminated */
    size_t len;  /* bytes in use */
    size_t cap;  /* bytes allocated, terminator excluded */
    size_t max;  /* len never exceeds this */
} buf;

/* Prepares an empty buffer that may hold at most `max` bytes. Allocates nothing. */
void buf_init(buf *b, size_t max);
/* Frees the storage; the buffer is empty afterwards and may be reused. Accepts NULL. */
void buf_free(buf *b);
/* Empties the buffer, keeping its storage. */
void buf_reset(buf *b);
/* Ensures room for `extra` more bytes. */
pacer_err buf_reserve(buf *b, size_t extra);
/* Appends `n` bytes. On error the buffer is unchanged. */
pacer_err buf_append(buf *b, const void *data, size_t n);
pacer_err buf_append_str(buf *b, const char *s);
pacer_err buf_append_char(buf *b, char c);
pacer_err buf_appendf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
pacer_err buf_vappendf(buf *b, const char *fmt, va_list ap);
/* Removes the first `n` bytes (all of them when n >= len). */
void buf_consume(buf *b, size_t n);
/* Hands the storage to the caller (free() it); the buffer is empty afterwards.
 * Returns an allocated empty string when nothing was appended, NULL on OOM. */
char *buf_detach(buf *b);

#endif
