/* parse.c - whole-string decimal and floating-point parsers (see parse.h). */
#include "base/parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool parse_int(const char *s, int lo, int hi, int *out) {
    int64_t v;
    if (!parse_i64(s, lo, hi, &v)) return false;
    *out = (int)v;
    return true;
}

bool parse_u64(const char *s, uint64_t *out) {
    if (!s || !isdigit((unsigned char)*s)) return false; /* strtoull would take "-1" */
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

bool parse_double(const char *s, double lo, double hi, double *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return false;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) return false;
    *out = v;
    return true;
}
