/* bench_managed.c - start, watch and stop the engine of a managed run. */
#include "cli/bench_managed.h"

#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
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

/* The hardware facts, probed before the engine starts: the volume of the largest weight
 * file and, unless --no-read-sample, its uncached read sample (which has to come before
 * the engine or the hash reads the file). A sample the probe refuses is recorded as
 * skipped, with its reason; it never fails the run. */
static int probe_hardware(managed_run *m, const managed_args *a) {
    char sample_path[PATH_MAX + 260];
    if (!launch_model_file_path(&m->model, m->model.largest, sample_path, sizeof sample_path)) {
        cli_error("model path too long");
        return 1;
    }
    probe_options po = {.model_path = sample_path, .read_sample = !a->no_read_sample};
    if (probe_collect(&po, &m->hardware) != PACER_OK || !m->hardware) {
        cli_error("cannot collect the hardware facts: out of memory");
        return 1;
    }
    json_object_set_new(m->hardware, "source", json_string("probed"));
    json_t *rs = json_object_get(json_object_get(m->hardware, "volume"), "read_sample");
    if (json_is_string(json_object_get(rs, "skipped")))
        fprintf(stderr, "pacer: read sample of %s skipped: %s\n", m->model.files[m->model.largest].name,
                json_string_value(json_object_get(rs, "skipped")));
    else if (json_is_object(rs))
        fprintf(stderr, "pacer: read sample of %s: %.2f GB/s uncached (%s)\n", m->model.files[m->model.largest].name,
                json_number_value(json_object_get(rs, "gb_per_s")), json_string_value(json_object_get(rs, "method")));
    return 0;
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
    if (launch_model_resolve(spec, m->adapter, &m->model, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    /* the drafter is settled (or refused) before anything is read, hashed or started */
    if (launch_drafter_choose(m->adapter, a->drafter, a->serial, &m->model, &m->drafter, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    if (m->drafter.serial_override) fprintf(stderr, "pacer: --serial overrides --drafter %s: no drafting\n", a->drafter);
    if (probe_hardware(m, a)) return 1;
    if (*cancel) goto cancelled;
    if (m->model.weight_bytes > (1ull << 30))
        fprintf(stderr, "pacer: hashing %zu weight file%s (%.1f GB)\n", m->model.n_files, m->model.n_files == 1 ? "" : "s",
                (double)m->model.weight_bytes / 1e9);
    if (launch_model_hash(&m->model, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    if (*cancel) goto cancelled;
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
        goto cancelled;
    }
    if (r == LAUNCH_DIED) cli_error("the engine exited before it was ready");
    else cli_error("the engine was not ready after %.0f s (--startup-timeout S to wait longer)", timeout);
    managed_end(m, false);
    print_log_tail(m->log_path);
    return 1;
cancelled:
    fprintf(stderr, "pacer: cancelled during start-up; nothing saved\n");
    return 130;
}

void managed_end(managed_run *m, bool now) {
    if (m->server.pid > 0) launch_server_stop(&m->server, now ? 0 : 10);
    managed_engine_pgid = 0;
}

void managed_free(managed_run *m) {
    json_decref(m->hardware);
    m->hardware = NULL;
}

void managed_kill_now(void) {
    pid_t pgid = (pid_t)managed_engine_pgid;
    if (pgid > 0) kill(-pgid, SIGKILL);
}
