/* parse.h - whole-string number parsers for options and small text fields: decimal
 * integers checked against a range (seeds are 64-bit integers, never doubles), and finite
 * doubles. Each returns false, leaving *out untouched, for empty text, trailing characters,
 * overflow or a value outside [lo, hi]. */
#ifndef PACER_PARSE_H
#define PACER_PARSE_H

#include <stdbool.h>
#include <stdint.h>

bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) __attribute__((warn_unused_result));
bool parse_int(const char *s, int lo, int hi, int *out) __attribute__((warn_unused_result));
/* 0 .. 2^64 - 1; no sign. */
bool parse_u64(const char *s, uint64_t *out) __attribute__((warn_unused_result));
bool parse_double(const char *s, double lo, double hi, double *out) __attribute__((warn_unused_result));

#endif
