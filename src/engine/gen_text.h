/* gen_text.h - the text side of a generation stream: stop strings with holdback (a stop
 * string split across tokens is never emitted) and UTF-8 holdback (never a partial
 * character); invalid bytes become U+FFFD so every emitted piece is valid UTF-8. */
#ifndef PACER_GEN_TEXT_H
#define PACER_GEN_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

#define GEN_MAX_STOPS 4

typedef struct gen_text {
    buf pending;                        /* bytes decoded but not yet emitted */
    const char *stops[GEN_MAX_STOPS]; /* borrowed, NUL-terminated, non-empty */
    int n_stops;
    bool stopped;                       /* a stop string was seen; nothing more is emitted */
} gen_text;

/* Prepares a stream with `n_stops` stop strings (borrowed for the stream's life). */
void gen_text_init(gen_text *t, const char *const *stops, int n_stops);
void gen_text_free(gen_text *t);
/* Adds the bytes of one token and appends to `out` what may be emitted now. Sets
 * t->stopped when a stop string completed (the stop string and what follows are dropped). */
pacer_err gen_text_push(gen_text *t, const char *bytes, size_t n, buf *out);
/* End of stream: appends everything still held (unless stopped), sanitized. */
pacer_err gen_text_flush(gen_text *t, buf *out);
/* Appends `n` bytes to `out` with each invalid UTF-8 sequence replaced by U+FFFD. */
pacer_err gen_utf8_sanitize_append(const char *s, size_t n, buf *out);
/* Length of the longest prefix of s[0..n) that does not end inside an incomplete but so far
 * valid UTF-8 sequence. */
size_t gen_utf8_complete_len(const char *s, size_t n);

#endif
