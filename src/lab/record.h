/* record.h - the lab's per-sample record and the results directory's layout: the format
 * `pacer lab run` writes and `--resume` (and the report builders) read back. Everything a
 * report shows is regenerable from these files alone, without inference.
 *
 * RESULTS DIRECTORY (results/<UTC>/ unless --output DIR; each file replaced atomically):
 *   .gitignore               "*": the run is ignored by Git
 *   run.json                 the run's header and state (lab_run_* in run.h): format, client
 *                            version, created_utc, signature (+ earlier signatures), provenance,
 *                            settings, configurations, the plan (sample ids in order), state
 *   samples/<id>.json        one record per sample of the plan that has run (below)
 *   answers/<id>.txt         the answer text, verbatim (content + reasoning, as delivered)
 *   pelicans/<workload>-<config>-<round>.svg   the SVG extracted from an svg workload's answer
 *   report.json              canonical JSON derived from run.json + samples/ (report.h)
 *   <dir>.zip beside the directory with --archive: everything above
 * A sample is run, then its answer, SVG and record are written, then run.json and
 * report.json. A record exists only for a sample that finished; a sample whose record is
 * missing (killed mid-sample) runs again on --resume.
 *
 * SAMPLE RECORD (samples/<id>.json; <id> = "r<round>-<workload>-<config>"), a JSON object:
 *   id, index (position in the plan, from 0), round (from 1), workload, config,
 *   kind ("completion" | "long-prefill" | "svg"), cap (max_tokens sent),
 *   attempt (1 for the first run of this sample; earlier runs are in "earlier"),
 *   started_utc, ended_utc ("YYYY-MM-DDTHH:MM:SSZ"),
 *   finish: "eos" (the answer ended by itself) | "capped" (cap or context reached) |
 *           "cycle" (the detector stopped it) | "error" (no answer: engine or request failed),
 *   capped_by: "cap" | "context" | null,
 *   validity: "valid" | "content-invalid" (the SVG failed its check) |
 *             "invalidated" (power source changed, memory above physical, a store changed),
 *   validity_reason: why not valid, or null;  error: why finish is "error", or null,
 *   load_ns (engine start to ready: never inside a timing), peak_rss_bytes (the engine's
 *   VmHWM), memory_limit_bytes (physical memory), http_status, server_finish_reason,
 *   prefill_tokens (usage.prompt_tokens), decode_tokens (usage.completion_tokens),
 *   first_text_ns, completion_ns (request start to end of response), delivery_span_ns,
 *   deliveries, prefill_tok_s (client: prefill_tokens / first_text), decode_tok_s (client:
 *   (decode_tokens - 1) / delivery span), server_prefill_tok_s (prefill_tokens / the server's
 *   prompt time), server_decode_tok_s (the server's own rate),
 *   answer_file (relative path), answer_bytes, answer_sha256 (of the answer file),
 *   power: {"expected", "changed", "readings": [{"at_ms" (since the sample started), "state"}]},
 *   cycle: null | {"block_words", "repeats", "loop_start_byte", "block_start_byte",
 *                  "block_end_byte", "block" (the repeated text), "found_at_ms"},
 *   svg: null | {"file" (relative path, null when no <svg> was found), "valid", "reason"},
 *   earlier: [records of this sample's earlier runs, oldest first, without their own
 *             "earlier"] (a cap raise, or a retry after an error or invalidation).
 * Absent figures are null, never 0. Times are nanoseconds of CLOCK_MONOTONIC. A sample
 * enters a median only when finish is "eos" and validity is "valid" (lab_record_in_median).
 */
#ifndef PACER_LAB_RECORD_H
#define PACER_LAB_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "lab/plan.h"

#define LAB_FORMAT "pacer-lab-run"
#define LAB_FORMAT_VERSION 1
#define LAB_REASON_MAX 256

typedef enum lab_finish { LAB_FINISH_EOS = 0, LAB_FINISH_CAPPED, LAB_FINISH_CYCLE, LAB_FINISH_ERROR } lab_finish;
typedef enum lab_validity { LAB_VALID = 0, LAB_CONTENT_INVALID, LAB_INVALIDATED } lab_validity;

typedef struct lab_record {
    char id[LAB_ID_MAX];
    int64_t index, round;
    char workload[LAB_NAME_MAX], config[LAB_NAME_MAX];
    char kind[16];
    int64_t cap, attempt;
    char started_utc[24], ended_utc[24];
    lab_finish finish;
    char capped_by[8];                 /* "" | "cap" | "context" */
    lab_validity validity;
    char validity_reason[LAB_REASON_MAX];
    char error[LAB_REASON_MAX];
    bool has_load_ns, has_peak_rss, has_memory_limit, has_http_status;
    int64_t load_ns, peak_rss_bytes, memory_limit_bytes, http_status;
    char server_finish_reason[32];
    bool has_usage;
    int64_t prefill_tokens, decode_tokens;
    bool has_first_text;
    int64_t first_text_ns, completion_ns, delivery_span_ns, deliveries;
    bool has_prefill_tok_s, has_decode_tok_s, has_server_prefill_tok_s, has_server_decode_tok_s;
    double prefill_tok_s, decode_tok_s, server_prefill_tok_s, server_decode_tok_s;
    char answer_file[LAB_ID_MAX + 16];
    int64_t answer_bytes;
    char answer_sha256[65];
    /* nested parts, owned (NULL: null in JSON; earlier NULL: []) */
    json_t *power, *cycle, *svg, *earlier;
} lab_record;

/* One scalar field of the record: its JSON name, kind, where it lives in lab_record, the
 * flag that says it is present (SIZE_MAX: always present, or "" strings stand for null). */
typedef enum lab_field_kind { LAB_FIELD_I64, LAB_FIELD_F64, LAB_FIELD_STR, LAB_FIELD_FINISH, LAB_FIELD_VALIDITY } lab_field_kind;
typedef struct lab_field {
    const char *name;
    lab_field_kind kind;
    size_t offset, has, size;
} lab_field;
extern const lab_field lab_record_fields[];
extern const size_t lab_record_field_count;

/* "eos" | "capped" | "cycle" | "error" and "valid" | "content-invalid" | "invalidated". */
const char *lab_finish_name(lab_finish f);
const char *lab_validity_name(lab_validity v);

/* Frees the nested parts; accepts a zeroed record. */
void lab_record_free(lab_record *r);
/* The record as JSON (new reference, NULL on OOM): every field of the table plus the
 * nested parts. */
json_t *lab_record_to_json(const lab_record *r);
/* Reads a record back, checking every field's type (PACER_ERR_FORMAT naming the field).
 * The nested parts are taken as new references. */
pacer_err lab_record_from_json(const json_t *j, lab_record *out, char *err, size_t err_len);
/* True when the sample enters medians: finish "eos" and validity "valid". */
bool lab_record_in_median(const lab_record *r);
/* True when --resume runs the sample again: an error, an invalidation, or a capped answer
 * whose workload's cap is now above the recorded one. */
bool lab_record_needs_rerun(const lab_record *r, int64_t cap_now);

#endif
