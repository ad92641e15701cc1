/* results.h - the results directory on disk (layout in record.h): creation with its
 * .gitignore, atomic writes of a sample's files, of run.json and report.json, and reading
 * them back for --resume and for the reports. */
#ifndef PACER_LAB_RESULTS_H
#define PACER_LAB_RESULTS_H

#include <stdbool.h>

#include <jansson.h>

#include "base/error.h"
#include "lab/plan.h"
#include "lab/record.h"
#include "lab/sample.h"

#define LAB_RUN_FILE "run.json"
#define LAB_REPORT_FILE "report.json"
#define LAB_RUN_FILE_MAX (64u << 20)

/* Creates `dir` (and missing parents) with .gitignore, samples/, answers/, pelicans/.
 * PACER_ERR_STATE when `dir` exists and is not empty (a run is never written over). */
pacer_err lab_results_create(const char *dir, char *err, size_t err_len);
/* PACER_ERR_STATE (with words) when `dir` exists and is not an empty directory. */
pacer_err lab_results_check_new(const char *dir, char *err, size_t err_len);
/* Creates `dir` (and missing parents) with only its .gitignore; refused as
 * lab_results_check_new() refuses (for `pacer lab prefill`, whose files are its reports). */
pacer_err lab_results_create_bare(const char *dir, char *err, size_t err_len);
/* Writes `n` bytes as DIR/REL atomically; words in `err` on failure. */
pacer_err lab_results_write_file(const char *dir, const char *rel, const void *data, size_t n, char *err, size_t err_len);
/* Writes DIR/.gitignore ("*") unless DIR already has one: for the default parent results/,
 * so that the archives beside the runs stay out of Git too. Creates DIR when missing. */
pacer_err lab_results_ignore_dir(const char *dir);
/* Writes a sample's answer, SVG (for svg workloads with an <svg>) and record, in that
 * order, each atomically; fills the record's answer_file, answer_sha256 and svg parts
 * first. `earlier` (may be NULL) becomes the record's "earlier" list. */
pacer_err lab_results_write_sample(const char *dir, lab_sample_result *s, json_t *earlier, char *err, size_t err_len);
/* Writes `doc` as DIR/NAME atomically: canonical JSON (sorted keys, compact) when
 * `canonical`, else sorted keys indented for people. */
pacer_err lab_results_write_json(const char *dir, const char *name, const json_t *doc, bool canonical, char *err,
                                 size_t err_len);
/* Reads DIR/NAME as JSON (new reference); PACER_ERR_NOT_FOUND when absent. */
pacer_err lab_results_read_json(const char *dir, const char *name, json_t **out, char *err, size_t err_len);
/* Reads the record of sample `id`: PACER_OK with `out` filled, PACER_ERR_NOT_FOUND when the
 * sample has no record, PACER_ERR_FORMAT (with words) when it does not read as one, or its
 * answer file is missing or does not match answer_sha256. */
pacer_err lab_results_read_sample(const char *dir, const char *id, lab_record *out, char *err, size_t err_len);

#endif
