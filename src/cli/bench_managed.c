/* bench_managed.c - start, watch and stop the engine of a managed run. */
#include "cli/bench_managed.h"

#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/sha256.h"
#include "base/fileio.h"
#include "cli/cli.h"
#include "cli/demo.h"

/* The engine's process group while one runs, for managed_kill_now() in a signal handler. */
static volatile sig_atomic_t managed_engine_pgid;

static void print_log_tail(const char *log_path) {
    buf tail;
    buf_init(&tail, 1u << 16);
    if (launch_log_tail(log_path, 15, &tail) == PACER_OK && tail.len)
        fprintf(stderr, "--- last lines of the engine log (%s) ---\n%s\n---\n", log_path, tail.data);
    buf_free(&tail);
}

int managed_begin(managed_run *m, const managed_args *a, const volatile sig_atomic_t *cancel) {
    memset(m, 0, sizeof *m);
    char err[1024];
    m->adapter = launch_adapter_find(a->engine ? a->engine : "builtin");
    if (!m->adapter) {
        cli_error("unknown engine '%s' (builtin, llama.cpp, vllm, sglang, mlx)", a->engine);
        return 1;
    }
    char demo_path[PATH_MAX];
    const char *spec = a->model_spec;
    if (!spec) {
        if (demo_model_ensure(demo_path, sizeof demo_path, err, sizeof err)) {
            cli_error("%s", err);
            return 1;
        }
        spec = demo_path;
    }
    if (launch_model_resolve(spec, false, &m->model, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    /* the drafter is settled (or refused) before anything is hashed or started */
    if (launch_drafter_choose(m->adapter, a->drafter, a->serial, &m->model, &m->drafter, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    if (m->drafter.serial_override) fprintf(stderr, "pacer: --serial overrides --drafter %s: no drafting\n", a->drafter);
    pacer_err hrc = sha256_file_hex(m->model.path, m->model.sha256);
    if (hrc) {
        cli_error("cannot read model %s: %s", m->model.file_name, pacer_strerror(hrc));
        return 1;
    }
    snprintf(m->served_name, sizeof m->served_name, "%s", m->model.repo[0] ? m->model.repo : m->model.file_name);

    const char *home = path_home();
    char dir[PATH_MAX];
    if (!home || snprintf(dir, sizeof dir, "%s/.pacer/runs/%s", home, a->run_id) >= (int)sizeof dir ||
        dir_create_all(dir, 0700)) {
        cli_error("cannot create the run directory under ~/.pacer/runs");
        return 1;
    }
    snprintf(m->log_path, sizeof m->log_path, "%s/engine.log", dir);

    int port = 0;
    if (launch_free_port(&port)) {
        cli_error("no free port on 127.0.0.1");
        return 1;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    launch_argv_params p = {.bin = a->engine_bin, .self_path = self, .model = m->model.path, .host = "127.0.0.1",
                            .port = port, .name = m->served_name, .drafter = m->drafter.pass ? m->drafter.path : NULL, .threads = a->threads};
    char *argv[64];
    char storage[8192];
    if (launch_argv_build(m->adapter, &p, argv, 64, storage, sizeof storage) < 0) {
        cli_error("engine command line too long");
        return 1;
    }
    if (launch_server_start(argv, m->log_path, &m->server, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    managed_engine_pgid = m->server.pid;
    m->server.port = port;
    snprintf(m->url, sizeof m->url, "http://127.0.0.1:%d", port);
    double timeout = a->startup_timeout_s > 0 ? a->startup_timeout_s : launch_startup_timeout_s(m->model.weight_bytes);
    fprintf(stderr, "pacer: starting %s on %s (%s), up to %.0f s\n", m->adapter->name, m->model.file_name, m->url, timeout);
    launch_ready r = launch_server_wait_ready(&m->server, m->adapter->ready_path, timeout, cancel);
    if (r == LAUNCH_READY) return 0;
    if (r == LAUNCH_CANCELLED) {
        managed_end(m, false);
        fprintf(stderr, "pacer: cancelled during start-up; nothing saved\n");
        return 130;
    }
    if (r == LAUNCH_DIED) cli_error("the engine exited before it was ready");
    else cli_error("the engine was not ready after %.0f s (--startup-timeout S to wait longer)", timeout);
    managed_end(m, false);
    print_log_tail(m->log_path);
    return 1;
}

void managed_end(managed_run *m, bool now) {
    if (m->server.pid > 0) launch_server_stop(&m->server, now ? 0 : 10);
    managed_engine_pgid = 0;
}

void managed_kill_now(void) {
    pid_t pgid = (pid_t)managed_engine_pgid;
    if (pgid > 0) kill(-pgid, SIGKILL);
}
