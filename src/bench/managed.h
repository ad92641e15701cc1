/* managed.h - managed runs as a library: pacer resolves a model, settles the drafter,
 * probes the hardware, hashes the weights, and starts its engine on a free loopback port.
 *
 * Usage:
 *   managed_run m; managed_args a = {.model_spec = "org/name", .engine = "builtin",
 *                                    .run_id = id, .progress = fn, .progress_ctx = ctx};
 *   char err[1024];
 *   pacer_err rc = managed_begin(&m, &a, &cancel, err, sizeof err);  // prepare + engine_start
 *   if (rc) { ... err; m.engine_failed: show launch_log_tail(m.log_path) ... }
 *   runner_options o = {...}; managed_runner_options(&m, &o);       // receipt facts, URL, name
 *   ... runner_run(&o, ...) against m.url ...;  managed_engine_stop(&m, false);  managed_free(&m);
 * One fresh engine per sample (the lab): managed_prepare() once (resolve, drafter, probe,
 * hash), then managed_engine_start() / managed_engine_stop() per sample; m.url is the
 * engine's base URL while it runs. Every call returns pacer_err with one line in `err`;
 * nothing here prints: progress lines ("hashing 2 weight files (3.1 GB)") go to the callback. */
#ifndef PACER_BENCH_MANAGED_H
#define PACER_BENCH_MANAGED_H

#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "bench/runner.h"
#include "launch/adapter.h"
#include "launch/launch.h"
#include "launch/model.h"

/* One line for people (no "pacer: " prefix, no newline). */
typedef void (*managed_progress_fn)(void *ctx, const char *line);

typedef struct managed_args {
    const char *model_spec;   /* a GGUF path, a directory, or REPO[@REVISION] in the cache */
    const char *engine;       /* adapter name; NULL: builtin */
    const char *engine_bin;   /* overrides the adapter's executable */
    const char *drafter;      /* "auto" (NULL), "none", or a path or repo */
    bool serial;              /* no drafting */
    double startup_timeout_s; /* <= 0: the default rule (launch_startup_timeout_s) */
    int threads;              /* <= 0: engine default */
    int ctx;                  /* context tokens; <= 0: engine default */
    int slots;                /* sequence slots the engine is started with; <= 1: one (a load
                               * sweep asks for as many as it keeps requests in flight) */
    const char *const *extra_args; /* appended to the engine's command line verbatim (the lab's
                                    * configuration arguments); borrowed */
    int n_extra_args;
    bool no_read_sample;      /* the uncached read sample is not taken */
    const char *run_id;       /* names the run directory ~/.pacer/runs/RUN_ID */
    const char *log_dir;      /* where engine.log goes; NULL: the run directory */
    managed_progress_fn progress; /* NULL: progress lines are dropped */
    void *progress_ctx;
} managed_args;

typedef struct managed_run {
    managed_args args;        /* a copy; its strings are borrowed from the caller */
    const launch_adapter *adapter;
    launch_model model;
    launch_drafter drafter;   /* what was passed, and why (its path is never recorded) */
    json_t *hardware;         /* probed before the engine started (read sample included); owned */
    runner_checkpoint_file *checkpoint_files; /* model.n_files entries, pointing into model */
    launch_server server;
    char url[64];             /* the engine's base URL while it runs */
    char served_name[300];
    char log_path[PATH_MAX + 32];
    char platform[160];       /* "linux", "macos" */
    char backend_reported[16]; /* the backend the engine's log named ("" when it did not) */
    bool no_raw_text;         /* the engine's /v1/models says the model takes no raw text */
    bool engine_failed;       /* the engine died or was never ready: its log tail tells why */
} managed_run;

/* Resolves the model for the chosen engine, settles the drafter, probes the hardware and
 * takes the uncached read sample of the (largest) weight file before anything else reads it,
 * then hashes the weight files once. Nothing is started. PACER_ERR_CANCELLED when *cancel
 * was set; other errors with one line in `err`. `m` needs managed_free() in every case. */
pacer_err managed_prepare(managed_run *m, const managed_args *a, const volatile sig_atomic_t *cancel, char *err,
                          size_t err_len) __attribute__((warn_unused_result));
/* Starts the prepared engine on a free loopback port (its log in log_path) and waits until it
 * answers its readiness path. PACER_ERR_CANCELLED when *cancel was set during start-up;
 * PACER_ERR_TIMEOUT or PACER_ERR_STATE (exited) with engine_failed set. The engine is
 * stopped on every error. May be called again after managed_engine_stop(). */
pacer_err managed_engine_start(managed_run *m, const volatile sig_atomic_t *cancel, char *err, size_t err_len)
    __attribute__((warn_unused_result));
/* managed_prepare() then managed_engine_start(). */
pacer_err managed_begin(managed_run *m, const managed_args *a, const volatile sig_atomic_t *cancel, char *err,
                        size_t err_len) __attribute__((warn_unused_result));
/* Stops the engine and every process of its group; `now` skips the grace period. A no-op
 * when none runs. */
void managed_engine_stop(managed_run *m, bool now);
/* Fills the fields of `o` a managed run knows: URL, served name, public id, mode, engine,
 * server-reported field names, backend (unless set), platform, hardware, run id, revision,
 * checkpoint format and files, local, drafter, versions. The pointers borrow from `m`. */
void managed_runner_options(const managed_run *m, runner_options *o);
/* Stops the engine if it still runs and frees what `m` holds. Accepts a zeroed `m`. */
void managed_free(managed_run *m);
/* For a signal handler (async-signal-safe): SIGKILL to the running engine's process group. */
void managed_kill_now(void);

#endif
