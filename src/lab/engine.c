/* engine.c - the lab's engine process over launch/: command line from the adapter plus the
 * configuration's arguments, start, readiness, peak memory from /proc, stop. */
#include "lab/engine.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fileio.h"

/* The running engine's process group, for lab_engine_kill_now() in a signal handler. */
static volatile sig_atomic_t lab_engine_pgid;

lab_engine_status lab_engine_start(const lab_engine_spec *s, lab_engine *e, const volatile sig_atomic_t *cancel, char *err,
                                   size_t err_len) {
    memset(e, 0, sizeof *e);
    int port = 0;
    if (launch_free_port(&port)) {
        snprintf(err, err_len, "no free port on 127.0.0.1");
        return LAB_ENGINE_FAILED;
    }
    launch_argv_params p = {.bin = s->bin, .self_path = s->self_path, .model = s->model_path, .host = "127.0.0.1",
                            .port = port, .name = s->served_name, .threads = s->threads, .ctx = s->ctx};
    char *argv[96];
    char storage[16384];
    int n = launch_argv_build(s->adapter, &p, argv, 64, storage, sizeof storage);
    if (n < 0 || n + s->n_extra + 1 > (int)(sizeof argv / sizeof argv[0])) {
        snprintf(err, err_len, "engine command line too long");
        return LAB_ENGINE_FAILED;
    }
    for (int i = 0; i < s->n_extra; i++) argv[n++] = (char *)s->extra_args[i];
    argv[n] = NULL;
    int64_t t0 = clock_now_ns();
    if (launch_server_start(argv, s->log_path, &e->srv, err, err_len)) return LAB_ENGINE_FAILED;
    lab_engine_pgid = e->srv.pid;
    e->srv.port = port;
    snprintf(e->url, sizeof e->url, "http://127.0.0.1:%d", port);
    launch_ready r = launch_server_wait_ready(&e->srv, s->adapter->ready_path, s->startup_timeout_s, cancel);
    if (r == LAUNCH_READY) {
        e->load_ns = clock_now_ns() - t0;
        return LAB_ENGINE_READY;
    }
    lab_engine_stop(e, false);
    if (r == LAUNCH_CANCELLED) return LAB_ENGINE_CANCELLED;
    if (r == LAUNCH_DIED) {
        snprintf(err, err_len, "the engine exited before it was ready");
        return LAB_ENGINE_DIED;
    }
    snprintf(err, err_len, "the engine was not ready after %.0f s", s->startup_timeout_s);
    return LAB_ENGINE_TIMEOUT;
}

bool lab_engine_alive(lab_engine *e) { return e->srv.pid > 0 && launch_server_alive(&e->srv); }

bool lab_engine_peak_rss(const lab_engine *e, int64_t *bytes) {
    if (e->srv.pid <= 0 || e->srv.exited) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)e->srv.pid);
    buf b;
    buf_init(&b, 1 << 16);
    bool ok = false;
    if (file_read_all(path, &b) == PACER_OK && b.data) {
        const char *line = strstr(b.data, "\nVmHWM:");
        long long kb;
        if (line && sscanf(line + 7, "%lld", &kb) == 1 && kb >= 0) {
            *bytes = kb * 1024;
            ok = true;
        }
    }
    buf_free(&b);
    return ok;
}

void lab_engine_stop(lab_engine *e, bool now) {
    if (e->srv.pid > 0) launch_server_stop(&e->srv, now ? 0 : 10);
    lab_engine_pgid = 0;
}

void lab_engine_kill_now(void) {
    pid_t pgid = (pid_t)lab_engine_pgid;
    if (pgid > 0) kill(-pgid, SIGKILL);
}
