/* receipt.h - the receipt: a run's public facts and every attempt, as JSON (format in
 * docs/receipt.md), and the drafts file beside it. Every attempt field is defined once, in
 * receipt_attempt_fields[]; the writer, reader, validator and inspector all walk it. */
#ifndef PACER_RECEIPT_H
#define PACER_RECEIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "bench/attempt.h"
#include "bench/rules.h"

#define RECEIPT_SCHEMA_VERSION 1
#define RECEIPT_FILE_MAX (64u << 20)

typedef enum receipt_kind {
    RECEIPT_KIND_I64,    /* int64_t; null when its has-flag is false */
    RECEIPT_KIND_F64,    /* double; null when its has-flag is false */
    RECEIPT_KIND_BOOL,   /* bool */
    RECEIPT_KIND_STR,    /* char array of `size` bytes; "" stays "" */
    RECEIPT_KIND_ROUTE,  /* attempt_route by name */
    RECEIPT_KIND_STATUS, /* attempt_status by name */
} receipt_kind;

/* One field of an attempt: its JSON name, kind, place in attempt_sample and the offset of
 * its has-flag (SIZE_MAX when always present); `optional`: receipts written before the field
 * existed lack it, and a reader takes it as empty. */
typedef struct receipt_field {
    const char *name;
    receipt_kind kind;
    size_t offset;
    size_t has_offset;
    size_t size;
    const char *doc;
    bool optional;
} receipt_field;

extern const receipt_field receipt_attempt_fields[];
extern const size_t receipt_attempt_field_count;

/* A top-level key: its name, the JSON type it must have, and a label for the inspector
 * (NULL: not shown in the header). */
typedef struct receipt_top_field {
    const char *name;
    json_type type;
    const char *label;
} receipt_top_field;

extern const receipt_top_field receipt_top_fields[];
extern const size_t receipt_top_field_count;

/* A fact below the top level, e.g. "model.checkpoint_format" or
 * "hardware.volume.read_sample.method": its dotted path ("[]" stands for every element of an
 * array), the JSON type it must have where present (JSON_TRUE: a boolean; JSON_REAL: any
 * number), whether it may be null, a label for the inspector (NULL: not shown on its own
 * line) and what it means. Absent facts are allowed (attached runs, older receipts); a
 * present one must match. */
typedef struct receipt_fact_field {
    const char *path;
    json_type type;
    bool nullable;
    const char *label;
    const char *doc;
} receipt_fact_field;

extern const receipt_fact_field receipt_fact_fields[];
extern const size_t receipt_fact_field_count;

/* The entry for `path`; NULL when the table has none. */
const receipt_fact_field *receipt_fact_find(const char *path);

/* Sample -> attempt object (new reference), with the attempt's place in its cell. */
json_t *receipt_attempt_to_json(const attempt_sample *s, int index, bool warmup, bool has_seed, int64_t seed);
/* Attempt object -> sample. Checks the type of every field; `err` names the first bad one. */
pacer_err receipt_attempt_from_json(const json_t *a, attempt_sample *s, char *err, size_t err_len);

/* Aggregates of one cell from its attempt objects (new reference): an object of metric ->
 * {median,min,max,p10,p90,n} when exactly `reps` measured attempts exist and all are ok,
 * otherwise JSON null. A metric absent from any sample is null. */
json_t *receipt_cell_aggregates(const json_t *attempts, int reps);

/* One aggregated metric: the table that drives a cell's aggregates and every view of them
 * (inspect's columns in text, CSV and Markdown). */
typedef struct receipt_metric {
    const char *name;   /* key in a cell's "aggregates" (and the CSV column) */
    const char *label;  /* column head for people */
    const char *unit;   /* "tok/s" or "ms" */
    const char *format; /* printf format of a value (every view prints the same digits) */
    int width;          /* text column width */
    bool (*get)(const attempt_sample *s, double *v); /* false: absent from this sample */
} receipt_metric;
extern const receipt_metric receipt_metrics[];
extern const size_t receipt_metric_count;
/* Re-judges a stored attempt under `ctx`: true when its stored status agrees with the
 * rules (an attempt the client marked incomplete may stay so); *judged gets the rules'
 * status. */
bool receipt_rejudge(const rules_context *ctx, const attempt_sample *s, attempt_status *judged);
/* Two JSON documents of figures agree: same shape, every number equal to 1e-9 relative. */
bool receipt_numbers_close(const json_t *a, const json_t *b);

/* Validates a receipt document against the rules of its own suite version: shape, suite
 * digest (must be a built-in one, matching its id), every attempt re-judged, aggregates
 * recomputed, cell statuses and exit status. On failure `err` says which check failed. */
pacer_err receipt_validate(const json_t *r, char *err, size_t err_len);
/* The same, for a receipt of a suite file: `suite_file` (NULL: built-in suites only) is
 * loaded and must have the receipt's suite id and digest, then the receipt is judged by it.
 * A receipt of a custom suite validated without its file: PACER_ERR_NOT_FOUND, and `err`
 * says it was not validated (nothing is wrong with it as far as is known). */
pacer_err receipt_validate_suite(const json_t *r, const char *suite_file, char *err, size_t err_len);

/* Parses receipt text (does no I/O). New reference in *out. */
pacer_err receipt_parse(const char *text, size_t len, json_t **out, char *err, size_t err_len);
/* Reads a receipt file (capped at RECEIPT_FILE_MAX) and parses it. */
pacer_err receipt_read(const char *path, json_t **out, char *err, size_t err_len);
/* Writes `doc` in indented form to `path` atomically with mode 0600. */
pacer_err receipt_write(const char *path, const json_t *doc);
/* Where a receipt and its drafts file go: `output` when given, else
 * ~/.pacer/benchmarks/RUN_ID.json (the directory is created); the drafts file sits beside
 * the receipt as NAME.drafts.json (NAME without ".json"). With `output` given nothing is
 * created and `run_id` may be NULL (inspect finds a receipt's drafts file this way).
 * PACER_ERR_TOO_BIG when a path does not fit, PACER_ERR_IO with one line in `err`. */
pacer_err receipt_paths(const char *output, const char *run_id, char *path, size_t path_n, char *drafts,
                        size_t drafts_n, char *err, size_t err_len) __attribute__((warn_unused_result));

/* The drafts file: per attempt the server-reported verify rounds, proposed and accepted
 * draft tokens, and totals (null when a sum would pass 64 bits). */
json_t *receipt_drafts_new(const char *run_id, bool drafter_passed);
/* One attempt's server-reported drafting counts: {verify_rounds, draft_proposed,
 * draft_accepted}, each null when the server did not report it. New reference. */
json_t *receipt_drafts_counts(const attempt_sample *s);
/* Appends one attempt (cell index, attempt index, warm-up flag, then its counts) from `s`. */
pacer_err receipt_drafts_add(json_t *drafts, int cell, int index, bool warmup, const attempt_sample *s)
    __attribute__((warn_unused_result));
/* Computes the totals object from the attempts appended so far. */
pacer_err receipt_drafts_finish(json_t *drafts) __attribute__((warn_unused_result));

/* Checked 64-bit addition: false (and *sum untouched) on overflow. */
bool receipt_add_i64(int64_t *sum, int64_t v);

#endif
