/* run.h - `pacer lab run` below the command line: suite, selections and presets, the model
 * and its stores (built on request), provenance and signature, the results directory, the
 * samples in plan order (each a fresh engine process), resume, report and archive. Words
 * for people go through the event callback and `err`; nothing here prints or exits. */
#ifndef PACER_LAB_RUN_H
#define PACER_LAB_RUN_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "lab/plan.h"
#include "lab/record.h"
#include "lab/stores.h"
#include "lab/suite.h"

typedef struct lab_cap_override {
    char workload[LAB_NAME_MAX];
    int cap;
} lab_cap_override;

typedef enum lab_event_kind {
    LAB_EVENT_STORE_PLAN,   /* id: configuration, text: store file, bytes: needed, bytes2: free on its volume */
    LAB_EVENT_STORE_BUILT,  /* id, text: store file */
    LAB_EVENT_PROBED,       /* text: the read sample, in words */
    LAB_EVENT_HASHING,      /* text: file, bytes: its size */
    LAB_EVENT_RESUME,       /* text: what the resume will do */
    LAB_EVENT_SAMPLE_START, /* id, index, total */
    LAB_EVENT_SAMPLE_SKIP,  /* id: kept from an earlier session */
    LAB_EVENT_SAMPLE_DONE,  /* id, rec, text: engine log path */
    LAB_EVENT_ARCHIVED,     /* text: zip path, index: files */
} lab_event_kind;

typedef struct lab_event {
    lab_event_kind kind;
    const char *id, *text;
    const lab_record *rec;
    uint64_t bytes, bytes2;
    size_t index, total;
} lab_event;

typedef struct lab_run_options {
    const char *model_spec;     /* a GGUF file, a directory, or REPO[@REVISION] */
    const char *engine;         /* adapter name; NULL: builtin */
    const char *binary;         /* --binary: the engine executable; NULL: the adapter's */
    const char *suite;          /* NULL: lab-v1 */
    const char *configs, *cases;/* comma lists; NULL: not given */
    int rounds;                 /* <= 0: not given */
    const char *mode;           /* "light", "heavy" or NULL */
    const char *output;         /* the results directory */
    bool resume, build_stores, archive, dry_run;
    lab_cap_override caps[LAB_MAX_WORKLOADS];
    int n_caps;
    const char *note;
    json_t *command;            /* the command line with placeholders (borrowed) */
    const char *client_version;
    const char *self_path;      /* pacer's own executable (the builtin engine) */
    const char *store_home;     /* where stores of cached repos are built */
    const char *log_dir;        /* engine logs: outside the results directory */
    const char *sys_root;       /* NULL: "/" (tests point power and memory facts elsewhere) */
    const volatile sig_atomic_t *cancel;
    void (*on_event)(void *ctx, const lab_event *ev);
    void *event_ctx;
} lab_run_options;

typedef enum lab_outcome {
    LAB_OUTCOME_COMPLETE = 0,  /* every sample of the plan has a record that needs no rerun */
    LAB_OUTCOME_ERROR = 1,     /* refused or failed before or between samples (err says why) */
    LAB_OUTCOME_STOPPED = 2,   /* the suite stopped: an engine error, memory or power (resume retries) */
    LAB_OUTCOME_CANCELLED = 3, /* the user stopped it; the sample in flight runs again on resume */
    LAB_OUTCOME_PLANNED = 4,   /* --dry-run: the plan is in the result, nothing ran */
} lab_outcome;

typedef struct lab_run_result {
    lab_suite suite;
    lab_selection sel;
    lab_plan plan;
    int caps[LAB_MAX_WORKLOADS];         /* effective cap per workload */
    lab_model model;
    lab_store stores[LAB_MAX_CONFIGS];   /* per suite configuration */
    bool preset_archive;
    char dir[PATH_MAX];
    char zip[PATH_MAX + 8];              /* "" unless archived */
    char stop_reason[LAB_REASON_MAX];
    json_t *report;                      /* owned; NULL for a dry run */
} lab_run_result;

lab_outcome lab_run(const lab_run_options *o, lab_run_result *res, char *err, size_t err_len);
void lab_run_result_free(lab_run_result *res);

/* The default results directory for a run starting now: "results/YYYY-MM-DDTHH-MM-SSZ". */
void lab_default_dir(char *out, size_t n);

#endif
