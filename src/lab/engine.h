/* engine.h - the lab's engines through the managed-run library (bench/managed.h): each
 * configuration is prepared once (its store resolved and hashed, nothing started), then
 * every sample starts it fresh on a free loopback port with prompt reuse off, watches its
 * peak resident memory, and stops its whole process group. Loading is outside any timing. */
#ifndef PACER_LAB_ENGINE_H
#define PACER_LAB_ENGINE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "bench/managed.h"

typedef struct lab_engine_spec {
    const char *engine;             /* adapter name */
    const char *bin;                /* the engine executable */
    const char *model_path;         /* the configuration's store */
    int threads, ctx;               /* <= 0: the engine's defaults */
    const char *const *extra_args;  /* appended verbatim (the configuration's args) */
    int n_extra;
    const char *log_dir;            /* engine.log goes here (never into the results) */
} lab_engine_spec;

typedef struct lab_engine {
    managed_run m;                  /* its args borrow the strings below and the spec's */
    char log_dir[PATH_MAX];
    bool prepared;
    int64_t load_ns;                /* the last start: from launch to the first ready answer */
} lab_engine;

typedef enum lab_engine_status {
    LAB_ENGINE_READY = 0,
    LAB_ENGINE_FAILED = 1,    /* not started, exited or never ready (err says which) */
    LAB_ENGINE_CANCELLED = 2,
} lab_engine_status;

/* Resolves and hashes the store (the sha256 is then in e->m.model.files[0]). The spec's
 * strings other than log_dir (copied) must outlive the engine. */
pacer_err lab_engine_prepare(lab_engine *e, const lab_engine_spec *s, const volatile sig_atomic_t *cancel, char *err,
                             size_t err_len);
/* Points a prepared engine at another executable of the same engine (another build) with its
 * own log directory (copied); `bin` must outlive the engine. The store stays resolved and
 * hashed, so two builds share one preparation. Only between samples (none running). */
pacer_err lab_engine_use_binary(lab_engine *e, const char *bin, const char *log_dir);
/* The executable `bin` names: a path as it is, a bare name looked up on PATH. Fills `out`
 * and returns true when it is an executable regular file. */
bool lab_engine_find_binary(const char *bin, char *out, size_t n);
/* Starts a fresh engine process and waits until it is ready; nothing is left running unless
 * it returns READY. */
lab_engine_status lab_engine_start(lab_engine *e, const volatile sig_atomic_t *cancel, char *err, size_t err_len);
/* True while the engine runs (reaps it when it has exited). */
bool lab_engine_alive(lab_engine *e);
/* The engine's peak resident memory so far (VmHWM of its main process); false once it is
 * gone or when the system does not say. */
bool lab_engine_peak_rss(const lab_engine *e, int64_t *bytes);
/* Stops the engine's process group (`now`: SIGKILL at once). A no-op when none runs. */
void lab_engine_stop(lab_engine *e, bool now);
/* Stops and frees; accepts a zeroed engine. */
void lab_engine_free(lab_engine *e);

#endif
