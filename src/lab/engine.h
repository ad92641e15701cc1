/* engine.h - one engine process per lab sample: started through its launch adapter on a free
 * loopback port with prompt reuse off, waited for, watched (its peak resident memory), and
 * stopped with its whole process group. Loading happens here, outside any timing. */
#ifndef PACER_LAB_ENGINE_H
#define PACER_LAB_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "launch/adapter.h"
#include "launch/launch.h"

typedef struct lab_engine_spec {
    const launch_adapter *adapter;
    const char *bin;                /* NULL: the adapter's default ("{self}": self_path) */
    const char *self_path;
    const char *model_path;         /* the store */
    const char *served_name;
    int threads, ctx;               /* <= 0: the engine's defaults */
    const char *const *extra_args;  /* appended verbatim (a configuration's args) */
    int n_extra;
    const char *log_path;           /* the engine's output goes here */
    double startup_timeout_s;
} lab_engine_spec;

typedef struct lab_engine {
    launch_server srv;
    char url[64];
    int64_t load_ns;                /* from the start to the first ready answer */
} lab_engine;

typedef enum lab_engine_status {
    LAB_ENGINE_READY = 0,
    LAB_ENGINE_DIED = 1,      /* exited before it was ready */
    LAB_ENGINE_TIMEOUT = 2,
    LAB_ENGINE_CANCELLED = 3,
    LAB_ENGINE_FAILED = 4,    /* could not be started at all (err says why) */
} lab_engine_status;

/* Starts the engine and waits until it is ready; on any outcome but READY nothing is left
 * running. `err` gets words for FAILED, DIED and TIMEOUT. */
lab_engine_status lab_engine_start(const lab_engine_spec *s, lab_engine *e, const volatile sig_atomic_t *cancel, char *err,
                                   size_t err_len);
/* True while the engine runs (reaps it when it has exited). */
bool lab_engine_alive(lab_engine *e);
/* The engine's peak resident memory so far (VmHWM of its main process), false once it is
 * gone or when the system does not say. */
bool lab_engine_peak_rss(const lab_engine *e, int64_t *bytes);
/* Stops the engine's whole process group: SIGTERM, SIGKILL after a grace period (`now`:
 * at once). Accepts an engine that is not running. */
void lab_engine_stop(lab_engine *e, bool now);
/* For a signal handler: SIGKILL to the running engine's process group, if any. */
void lab_engine_kill_now(void);

#endif
