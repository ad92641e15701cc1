/* runner.h - runs a suite against an OpenAI-compatible server at a base URL and builds
 * the receipt and drafts documents. The same runner serves attached runs and (later)
 * managed ones: the caller passes the URL, the mode and what it knows of the hardware. */
#ifndef PACER_RUNNER_H
#define PACER_RUNNER_H

#include <signal.h>
#include <stdbool.h>

#include <jansson.h>

#include "base/error.h"
#include "bench/attempt.h"
#include "bench/load.h"
#include "bench/manifest.h"
#include "bench/suite.h"

#define RUNNER_MAX_TEMPS 8

/* Called after every attempt (warm-ups included) for progress output. */
typedef void (*runner_progress_fn)(void *ctx, int cell, int n_cells, const char *workload, const char *setting,
                                   int index, int reps, bool warmup, const attempt_sample *s);

/* One weight file of the checkpoint a managed run loaded: its name inside the checkpoint
 * (never a path) and its sha256. */
typedef struct runner_checkpoint_file {
    const char *file;
    const char *sha256;
} runner_checkpoint_file;

typedef struct runner_options {
    const suite *suite;
    const char *server_url;     /* base URL of the server */
    const char *served_model;   /* "model" field sent; NULL: none */
    const char *public_id;      /* the public checkpoint id the receipt names */
    const char *mode;           /* "attached" | "managed" */
    const char *engine;         /* engine name for managed runs; NULL when attached */
    const char *backend;        /* declared backend; NULL: "unknown" */
    const char *backend_source; /* NULL: "declared"; managed runs: "reported" when the engine said */
    int sequence_slots;         /* managed: the engine's sequence slots (1); 0: not recorded (null) */
    const char *platform;       /* declared platform; NULL: "unknown" */
    const json_t *hardware;     /* borrowed: hardware object with "source" (e.g. a probe); NULL: unknown */
    const manifest *manifest;   /* borrowed: attached runs; NULL: none fetched */
    /* Managed runs know the checkpoint themselves (NULL/false when attached). */
    const char *run_id;         /* NULL: a new one */
    const char *revision;       /* snapshot loaded; NULL: unknown (or from the manifest) */
    const char *checkpoint_format; /* "gguf" | "hf-dir" (model.checkpoint_format); NULL: not recorded */
    const runner_checkpoint_file *checkpoint_files; /* each weight file: name and sha256 */
    size_t n_checkpoint_files;
    bool local_model;           /* a local path: the receipt is unpublishable */
    const char *engine_version; /* managed: the engine's version */
    const char *python_version; /* managed: "none" for engines without Python; NULL: "unknown"
                                 * (an accepted manifest's python_version wins) */
    int declared_context;       /* attached: --context N, a client declaration; 0: none */
    const char *api_key;
    const char *server_tok_s_field, *prefill_ms_field; /* attempt_request's; NULL: defaults */
    const char *client_version;
    int reps, warmups, tokens;  /* 0: the suite's */
    int n_temps;                /* 0: the suite's settings */
    double temps[RUNNER_MAX_TEMPS];
    bool chat_only;             /* --chat-only: the server has no raw-text mode (v2 only) */
    bool no_raw_text;           /* the server declared its model takes no raw text (managed:
                                 * /v1/models "raw_text": false): under v2 rules the raw-text
                                 * workloads go to the chat route, as with chat_only */
    bool drafter_passed;
    const char *drafter_id;     /* "ORG/NAME@COMMIT" of a cached drafter; NULL: none or a local path (never named) */
    int64_t idle_timeout_ms;    /* 0: attempt default */
    const volatile sig_atomic_t *cancel_flag;
    /* Server text reaches the receipt only through bench/sanitize against this context;
     * NULL: runner_sanitize_context(suite, server_url). */
    const sanitize_context *sanitize;
    const char *server_log;     /* where servers' full text goes (runlog_server_path); NULL: nowhere */
    runner_progress_fn progress;
    void *progress_ctx;
    /* A load sweep instead of the suite's cells: its levels, size, seed, SLOs and
     * calibration (the request, rules and names are filled in here, from the cell of
     * `load_workload`, or the chat workload, or the first; NULL: a suite run). */
    const load_options *load;
    const char *load_workload;
} runner_options;

typedef struct runner_result {
    json_t *receipt;  /* owned by the caller */
    json_t *drafts;   /* owned by the caller */
    int exit_status;  /* 0, 2 or 130 */
    bool cancelled;
} runner_result;

/* Runs every cell: warm-ups, then repetitions, in suite order, and stops after a
 * cancelled attempt. Fills `out`; returns an error only for invalid options (message in
 * `err`). */
pacer_err runner_run(const runner_options *o, runner_result *out, char *err, size_t err_len);

/* The sanitizer context of a run (free with sanitize_context_free): the suite's prompts (its
 * fixtures), this machine's host and user names and home directory, and the host named by
 * server_url (may be NULL). NULL on OOM. */
sanitize_context *runner_sanitize_context(const suite *s, const char *server_url);

/* A new run id: UTC time and 8 random hex digits, e.g. 20261202T101500Z-1a2b3c4d. */
void runner_run_id(char out[40]);

#endif
