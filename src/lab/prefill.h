/* prefill.h - `pacer lab prefill` below the command line: two builds of one engine (before,
 * after) compared on prefill over the prompt lengths of a lab suite (lab-prefill-v1: short,
 * medium, long, each answered with 8 greedy tokens), for each selected configuration,
 * round by round. Within a round each length and configuration runs as a pair, one sample
 * of each build, back to back: odd rounds run the before build first, even rounds the after
 * build. Every sample is a fresh engine process (lab/sample.h: the lab's own sample, with
 * its power, memory and store checks). All arguments are checked before anything runs;
 * after every sample report.json and summary.md are rewritten atomically, so a stop at any
 * moment keeps what was measured. Words for people go through the event callback and
 * `err`; nothing here prints or exits.
 *
 * RESULTS DIRECTORY (results/<UTC>-prefill/ unless --out DIR; new or empty):
 *   .gitignore     "*"
 *   report.json    canonical JSON (prefill_report.h)
 *   summary.md     the same for people (first line: the hardware)
 *   source.diff    `git diff BEFORE AFTER` when the two commits differ and a checkout
 *                  holds both */
#ifndef PACER_LAB_PREFILL_H
#define PACER_LAB_PREFILL_H

#include <signal.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"
#include "lab/record.h"
#include "lab/run.h"

#define LAB_PREFILL_DIFF_FILE "source.diff"

typedef struct lab_prefill_options {
    const char *before, *after;  /* the two builds' executables (a path, or a name on PATH) */
    const char *model_spec;      /* a GGUF file, a directory, or REPO[@REVISION] */
    const char *engine;          /* adapter name; NULL: builtin */
    const char *suite;           /* NULL: lab-prefill-v1 */
    const char *configs;         /* comma list; NULL: the suite's first configuration */
    int rounds;                  /* <= 0: the suite's */
    const char *output;          /* the results directory: new or empty */
    const char *ignore_dir;      /* NULL, or the parent of `output` to give a .gitignore once
                                  * the run starts (the default results/) */
    json_t *command;             /* the command line with placeholders (borrowed) */
    const char *client_version;
    const char *store_home;      /* stores of cached repos (lab/stores.h) */
    const char *log_dir;         /* engine logs: outside the results directory */
    const char *sys_root;        /* NULL: "/" (tests point power and memory facts elsewhere) */
    const volatile sig_atomic_t *cancel;
    /* LAB_EVENT_HASHING, LAB_EVENT_SAMPLE_START, LAB_EVENT_SAMPLE_DONE (rec; text: the
     * engine log), each with the sample id and its place in the plan */
    void (*on_event)(void *ctx, const lab_event *ev);
    void *event_ctx;
} lab_prefill_options;

typedef struct lab_prefill_result {
    json_t *report;                      /* the report last written; owned; NULL before any */
    char stop_reason[LAB_REASON_MAX];
} lab_prefill_result;

/* LAB_OUTCOME_COMPLETE, _ERROR (err says why; refused input leaves nothing behind),
 * _STOPPED (an engine error, a power change, memory above physical or a store changed
 * under a sample: the sample is kept, the run ends) or _CANCELLED (*cancel: the sample in
 * flight is dropped, the others kept). */
lab_outcome lab_prefill_run(const lab_prefill_options *o, lab_prefill_result *res, char *err, size_t err_len);
void lab_prefill_result_free(lab_prefill_result *res);

#endif
