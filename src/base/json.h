/* json.h - JSON helpers over jansson: the canonical form that digests are taken over,
 * and typed getters that tell "missing" from "wrong type". */
#ifndef PACER_JSON_H
#define PACER_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

/* Flags of the canonical form: object keys sorted, no insignificant white space, reals
 * with 15 significant digits (so text -> double -> text is the identity), UTF-8 kept. */
#define JSON_CANONICAL_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15))

/* Appends the canonical encoding of `v` to `out`. */
pacer_err json_canonical_append(const json_t *v, buf *out);
/* Canonical encoding as a new string (free() it), or NULL on failure. */
char *json_canonical_dump(const json_t *v);
/* SHA-256 of the canonical encoding, as hex. */
pacer_err json_canonical_sha256(const json_t *v, char out[65]);

/* Checks, without building values, that text[0..n) is one JSON object as jansson would
 * accept it (json_loadb with no flags), and finds its top-level member `key`. Returns true
 * only when the text is surely valid and `key` occurs at most once at the top level; then
 * *val_at and *val_len give the span of its value (*val_len 0: absent). Returns false for
 * invalid text and for the cases it does not decide (deep nesting, escaped surrogates,
 * \u0000, numbers that may not fit): the caller then parses in full. No allocation. */
bool json_skim_object(const char *text, size_t n, const char *key, size_t *val_at, size_t *val_len);

/* A value's place in skimmed text: offset and length; len 0 when absent. */
typedef struct json_span {
    size_t at, len;
} json_span;

/* A skim plan: the values at several paths of an object, found in one validating pass.
 * A path is member names and [0] (the first element of an array) joined by dots, e.g.
 * "choices[0].delta.content". At most JSON_SKIM_PLAN_MAX_NODES steps in all, member names
 * at most 63 bytes. */
#define JSON_SKIM_PLAN_MAX_NODES 32
typedef struct json_skim_plan json_skim_plan;
/* A plan for `paths` (n of them), or NULL when one is malformed, repeated or too big. */
json_skim_plan *json_skim_plan_new(const char *const *paths, size_t n);
/* Frees a plan. Accepts NULL. */
void json_skim_plan_free(json_skim_plan *p);
/* json_skim_object() for every path of the plan: spans[i] gets the value span of path i
 * (len 0: absent, or a step on the way was absent or not an object/array). Same guarantee
 * and the same cases given up on: an escaped member name in an object the plan looks
 * into, a path's member twice. */
bool json_skim_plan_run(const json_skim_plan *p, const char *text, size_t n, json_span *spans);
/* The decoded byte length (UTF-8) of a string value span, quotes included, that a skim
 * accepted (so its escapes are valid and none is a surrogate or \u0000). */
size_t json_skim_string_len(const char *s, size_t n);

/* Typed lookups: return the value, or `def` when the key is missing, null or of another type. */
const char *json_get_str(const json_t *obj, const char *key, const char *def);
int64_t json_get_int(const json_t *obj, const char *key, int64_t def);
double json_get_num(const json_t *obj, const char *key, double def);
bool json_get_bool(const json_t *obj, const char *key, bool def);
/* The member at a dotted path of object keys ("timings.prompt_ms") below `root`; NULL when
 * a step is missing or not an object, or the path is empty. Borrowed from `root`. */
json_t *json_get_path(const json_t *root, const char *dotted);

#endif
