/* error.h - pacer's one error enum and the function that turns a code into words.
 * Values are part of the project's contract: never renumber, only append. */
#ifndef PACER_ERROR_H
#define PACER_ERROR_H

typedef enum pacer_err {
    PACER_OK = 0,
    PACER_ERR_NOMEM = 1,       /* an allocation failed */
    PACER_ERR_IO = 2,          /* a file or socket operation failed (see errno) */
    PACER_ERR_PARSE = 3,       /* input is not well formed */
    PACER_ERR_TOO_BIG = 4,     /* input passed a size cap fixed in advance */
    PACER_ERR_ARG = 5,         /* a caller passed an invalid argument */
    PACER_ERR_HTTP = 6,        /* the server answered with an HTTP error status */
    PACER_ERR_TIMEOUT = 7,     /* a deadline passed */
    PACER_ERR_CANCELLED = 8,   /* cancelled by the user or another thread */
    PACER_ERR_NOT_FOUND = 9,   /* a file, key, route or model does not exist */
    PACER_ERR_FORMAT = 10,     /* well formed, but violates the format's rules */
    PACER_ERR_UNSUPPORTED = 11,/* valid, but not something pacer implements */
    PACER_ERR_NET = 12,        /* connecting or transferring failed */
    PACER_ERR_INTERNAL = 13,   /* a bug: an invariant did not hold */
    PACER_ERR_INTEGRITY = 14,  /* a hash or digest did not match */
    PACER_ERR_STATE = 15,      /* the operation is not valid in the current state */
    PACER_ERR__COUNT           /* not an error: keep last */
} pacer_err;

/* Returns a static, human-readable description of `err`; never NULL. */
const char *pacer_strerror(pacer_err err);

#include <stddef.h>

/* The one way to say what went wrong: writes the printf-formatted message into `err`
 * (`err_len` bytes, truncated; nothing when err is NULL or err_len 0) and returns `rc`, so
 * that `return pacer_errorf(err, err_len, PACER_ERR_ARG, "bad %s", what);` reads as one step.
 * Every fallible function that explains itself takes (char *err, size_t err_len). */
pacer_err pacer_errorf(char *err, size_t err_len, pacer_err rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
