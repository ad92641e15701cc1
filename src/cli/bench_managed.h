/* bench_managed.h - the managed side of `pacer bench MODEL`: resolve the model, start the
 * engine through its adapter on a free loopback port, wait until it is ready, stop it. */
#ifndef PACER_BENCH_MANAGED_H
#define PACER_BENCH_MANAGED_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>

#include "launch/adapter.h"
#include "launch/launch.h"
#include "launch/model.h"
#include "probe/probe.h"

typedef struct managed_args {
    const char *model_spec;   /* NULL: the demo model */
    const char *engine;       /* adapter name; NULL: builtin */
    const char *engine_bin;   /* overrides the adapter's executable */
    const char *drafter;      /* "auto" (default), "none", or a path */
    bool serial;              /* no drafting */
    double startup_timeout_s; /* <= 0: the default rule */
    int threads;              /* <= 0: engine default */
    bool no_read_sample;      /* --no-read-sample: the uncached read sample is not taken */
    const char *run_id;       /* names the run directory */
} managed_args;

typedef struct managed_run {
    const launch_adapter *adapter;
    launch_model model;
    launch_server server;
    char url[64];
    char served_name[300];
    char log_path[PATH_MAX + 32];
    launch_drafter drafter;   /* what was passed, and why (its path is never recorded) */
    json_t *hardware;         /* probed before the engine started (read sample included);
                               * owned: the caller takes it or json_decref()s it */
} managed_run;

/* Resolves the model for the chosen engine, settles the drafter, probes the hardware and
 * takes the uncached read sample of the (largest) weight file before anything else reads
 * it, hashes the weight files once, then starts the engine. Returns 0 when it is ready,
 * 130 when *cancel was set during start-up (the engine is stopped, nothing saved), 1 on
 * an error (printed, with the last lines of the engine's log when it died or never became
 * ready); nothing is started when the model or the drafter is refused. */
int managed_begin(managed_run *m, const managed_args *a, const volatile sig_atomic_t *cancel);
/* Stops the engine and every process of its group; `now` skips the grace period. */
void managed_end(managed_run *m, bool now);
/* Frees what managed_begin() left in `m` (the hardware object, unless taken). */
void managed_free(managed_run *m);
/* For a signal handler (async-signal-safe): SIGKILL to the engine's whole process group,
 * when one is running. */
void managed_kill_now(void);

#endif
