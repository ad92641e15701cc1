/* error.c - words for pacer's error codes. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const pacer_err_words[PACER_ERR__COUNT] = {
    [PACER_OK] = "success",
    [PACER_ERR_NOMEM] = "out of memory",
    [PACER_ERR_IO] = "input/output error",
    [PACER_ERR_PARSE] = "malformed input",
    [PACER_ERR_TOO_BIG] = "input exceeds its size limit",
    [PACER_ERR_ARG] = "invalid argument",
    [PACER_ERR_HTTP] = "HTTP error status",
    [PACER_ERR_TIMEOUT] = "timed out",
    [PACER_ERR_CANCELLED] = "cancelled",
    [PACER_ERR_NOT_FOUND] = "not found",
    [PACER_ERR_FORMAT] = "invalid format",
    [PACER_ERR_UNSUPPORTED] = "not supported",
    [PACER_ERR_NET] = "network error",
    [PACER_ERR_INTERNAL] = "internal error",
    [PACER_ERR_INTEGRITY] = "integrity check failed",
    [PACER_ERR_STATE] = "invalid state",
};

const char *pacer_strerror(pacer_err err) {
    if ((int)err < 0 || err >= PACER_ERR__COUNT || !pacer_err_words[err]) return "unknown error";
    return pacer_err_words[err];
}

pacer_err pacer_errorf(char *err, size_t err_len, pacer_err rc, const char *fmt, ...) {
    if (err && err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return rc;
}
