/* managed.c - start, watch and stop the engine of a managed run (see managed.h): prepare
 * (resolve, drafter, probe, hash), start (run directory, port, argv, spawn, readiness), and
 * the receipt facts a managed run hands the runner. */
#include "bench/managed.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fileio.h"
#include "base/json.h"
#include "net/http.h"
#include "base/version.h"
#include "bench/runlog.h"
#include "probe/probe.h"

/* The engine's process group while one runs, for managed_kill_now() in a signal handler. */
static volatile sig_atomic_t managed_engine_pgid;

static void say(const managed_run *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const managed_run *m, const char *fmt, ...) {
    if (!m->args.progress) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    m->args.progress(m->args.progress_ctx, line);
}

/* The hardware facts, probed before the engine starts: the volume of the largest weight
 * file and, unless no_read_sample, its uncached read sample (which has to come before
 * the engine or the hash reads the file). A sample the probe refuses is recorded as
 * skipped, with its reason; it never fails the run. */
static pacer_err probe_hardware(managed_run *m, char *err, size_t err_len) {
    char sample_path[PATH_MAX + 260];
    if (!launch_model_file_path(&m->model, m->model.largest, sample_path, sizeof sample_path)) {
        snprintf(err, err_len, "model path too long");
        return PACER_ERR_TOO_BIG;
    }
    probe_options po = {.model_path = sample_path, .read_sample = !m->args.no_read_sample};
    if (probe_collect(&po, &m->hardware) != PACER_OK || !m->hardware) {
        snprintf(err, err_len, "cannot collect the hardware facts: out of memory");
        return PACER_ERR_NOMEM;
    }
    json_t *rs = json_object_get(json_object_get(m->hardware, "volume"), "read_sample");
    const char *name = m->model.files[m->model.largest].name;
    if (json_is_string(json_object_get(rs, "skipped")))
        say(m, "read sample of %s skipped: %s", name, json_string_value(json_object_get(rs, "skipped")));
    else if (json_is_object(rs))
        say(m, "read sample of %s: %.2f GB/s uncached (%s)", name, json_number_value(json_object_get(rs, "gb_per_s")),
            json_string_value(json_object_get(rs, "method")));
    return PACER_OK;
}

/* The receipt's platform, named as manifests and `pacer serve` name it: "linux", "macos",
 * else the lower-case kernel name; "" when uname fails. The CPU is in the hardware facts. */
static void platform_name(char *out, size_t n) {
    struct utsname un;
    out[0] = 0;
    if (uname(&un) != 0) return;
    snprintf(out, n, "%s", strcmp(un.sysname, "Darwin") == 0 ? "macos" : un.sysname);
    for (char *c = out; *c; c++) *c = (char)tolower((unsigned char)*c);
}

/* The backend the engine's log says it loaded the weights on, for adapters that leave it
 * to the engine (llama.cpp: CPU or GPU build, layers offloaded or not); "" when it does
 * not say. Read once the engine is ready: the weights are loaded by then. */
static void backend_from_engine_log(managed_run *m) {
    m->backend_reported[0] = '\0';
    if (m->adapter->backend) return;
    buf log;
    buf_init(&log, 4u << 20);
    if (file_read_all(m->log_path, &log) == PACER_OK || log.len) {
        const char *b = launch_backend_from_log(m->adapter, log.data, log.len);
        if (b) snprintf(m->backend_reported, sizeof m->backend_reported, "%s", b);
    }
    buf_free(&log);
}

pacer_err managed_prepare(managed_run *m, const managed_args *a, const volatile sig_atomic_t *cancel, char *err,
                          size_t err_len) {
    memset(m, 0, sizeof *m);
    m->args = *a;
    pacer_err rc;
    if (!a->model_spec) { snprintf(err, err_len, "no model named"); return PACER_ERR_ARG; }
    m->adapter = launch_adapter_find(a->engine ? a->engine : "builtin");
    if (!m->adapter) {
        snprintf(err, err_len, "unknown engine '%s' (builtin, llama.cpp, vllm, sglang, mlx)", a->engine);
        return PACER_ERR_ARG;
    }
    if ((rc = launch_model_resolve(a->model_spec, m->adapter, &m->model, err, err_len))) return rc;
    /* the drafter is settled (or refused) before anything is read, hashed or started */
    if ((rc = launch_drafter_choose(m->adapter, a->drafter, a->serial, &m->model, &m->drafter, err, err_len)))
        return rc;
    if (m->drafter.serial_override) say(m, "--serial overrides --drafter %s: no drafting", a->drafter);
    if ((rc = probe_hardware(m, err, err_len))) return rc;
    if (*cancel) return PACER_ERR_CANCELLED;
    if (m->model.weight_bytes > (1ull << 30))
        say(m, "hashing %zu weight file%s (%.1f GB)", m->model.n_files, m->model.n_files == 1 ? "" : "s",
            (double)m->model.weight_bytes / 1e9);
    if ((rc = launch_model_hash(&m->model, err, err_len))) return rc;
    if (*cancel) return PACER_ERR_CANCELLED;
    snprintf(m->served_name, sizeof m->served_name, "%s", m->model.repo[0] ? m->model.repo : m->model.file_name);
    m->checkpoint_files = calloc(m->model.n_files ? m->model.n_files : 1, sizeof *m->checkpoint_files);
    if (!m->checkpoint_files) { snprintf(err, err_len, "out of memory"); return PACER_ERR_NOMEM; }
    for (size_t i = 0; i < m->model.n_files; i++)
        m->checkpoint_files[i] = (runner_checkpoint_file){m->model.files[i].name, m->model.files[i].sha256};
    platform_name(m->platform, sizeof m->platform);
    return PACER_OK;
}

/* The log file: log_dir/engine.log, or ~/.pacer/runs/RUN_ID/engine.log (created). */
static pacer_err log_path_make(managed_run *m, char *err, size_t err_len) {
    char dir[PATH_MAX];
    bool ok = m->args.log_dir ? snprintf(dir, sizeof dir, "%s", m->args.log_dir) < (int)sizeof dir
                              : runlog_dir(m->args.run_id, dir, sizeof dir) == PACER_OK;
    if (!ok || dir_create_all(dir, 0700)) {
        snprintf(err, err_len, "cannot create the run directory under %s",
                 m->args.log_dir ? m->args.log_dir : "~/.pacer/runs");
        return PACER_ERR_IO;
    }
    snprintf(m->log_path, sizeof m->log_path, "%s/engine.log", dir);
    return PACER_OK;
}

static pacer_err models_collect(void *ctx, const char *data, size_t n, int64_t t_ns) {
    (void)t_ns;
    return buf_append((buf *)ctx, data, n);
}

/* Whether the served model takes raw text on /v1/completions, as the engine declares it in
 * /v1/models ("raw_text", `pacer serve` names its chat family's); an engine that says
 * nothing takes it. Read once the engine is ready. */
static void raw_text_from_models(managed_run *m, const volatile sig_atomic_t *cancel) {
    m->no_raw_text = false;
    char url[128];
    snprintf(url, sizeof url, "%s/v1/models", m->url);
    buf body;
    buf_init(&body, 1u << 20);
    http_request req = {.method = "GET", .url = url, .connect_timeout_ms = 5000, .total_timeout_ms = 15000,
                        .cancel_flag = cancel, .on_data = models_collect, .ctx = &body};
    http_response resp;
    http_response_init(&resp);
    json_t *doc = http_perform(&req, &resp) == PACER_OK && resp.status == 200 && body.len
                      ? json_loadb(body.data, body.len, 0, NULL) : NULL;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "data"), i, e) {
        bool ours = strcmp(json_get_str(e, "id", ""), m->served_name) == 0 || json_array_size(json_object_get(doc, "data")) == 1;
        if (ours && json_is_false(json_object_get(e, "raw_text"))) m->no_raw_text = true;
    }
    json_decref(doc);
    http_response_free(&resp);
    buf_free(&body);
}

pacer_err managed_engine_start(managed_run *m, const volatile sig_atomic_t *cancel, char *err, size_t err_len) {
    pacer_err rc;
    m->engine_failed = false;
    if (m->server.pid > 0) { snprintf(err, err_len, "the engine is already running"); return PACER_ERR_STATE; }
    if ((rc = log_path_make(m, err, err_len))) return rc;
    int port = 0;
    if (launch_free_port(&port)) { snprintf(err, err_len, "no free port on 127.0.0.1"); return PACER_ERR_NET; }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    launch_argv_params p = {.bin = m->args.engine_bin, .self_path = self, .model = m->model.path,
                            .host = "127.0.0.1", .port = port, .name = m->served_name,
                            .drafter = m->drafter.pass ? m->drafter.path : NULL, .serial = m->args.serial,
                            .threads = m->args.threads, .ctx = m->args.ctx,
                            .slots = m->args.slots};
    char *argv[64];
    char storage[8192];
    int argc = launch_argv_build(m->adapter, &p, argv, 64, storage, sizeof storage);
    if (argc < 0 || argc + m->args.n_extra_args >= 64) {
        snprintf(err, err_len, "engine command line too long");
        return PACER_ERR_TOO_BIG;
    }
    for (int i = 0; i < m->args.n_extra_args; i++) argv[argc++] = (char *)m->args.extra_args[i];
    argv[argc] = NULL;
    memset(&m->server, 0, sizeof m->server);
    if ((rc = launch_server_start(argv, m->log_path, &m->server, err, err_len))) return rc;
    managed_engine_pgid = m->server.pid;
    m->server.port = port;
    snprintf(m->url, sizeof m->url, "http://127.0.0.1:%d", port);
    double timeout = m->args.startup_timeout_s > 0 ? m->args.startup_timeout_s
                                                   : launch_startup_timeout_s(m->model.weight_bytes);
    say(m, "starting %s on %s (%s), up to %.0f s", m->adapter->name, m->model.file_name, m->url, timeout);
    launch_ready r = launch_server_wait_ready(&m->server, m->adapter->ready_path, timeout, cancel);
    if (r == LAUNCH_READY) {
        backend_from_engine_log(m);
        raw_text_from_models(m, cancel);
        return PACER_OK;
    }
    managed_engine_stop(m, false);
    if (r == LAUNCH_CANCELLED) return PACER_ERR_CANCELLED;
    m->engine_failed = true;
    if (r == LAUNCH_DIED) {
        snprintf(err, err_len, "the engine exited before it was ready");
        return PACER_ERR_STATE;
    }
    snprintf(err, err_len, "the engine was not ready after %.0f s (--startup-timeout S to wait longer)", timeout);
    return PACER_ERR_TIMEOUT;
}

pacer_err managed_begin(managed_run *m, const managed_args *a, const volatile sig_atomic_t *cancel, char *err,
                        size_t err_len) {
    pacer_err rc = managed_prepare(m, a, cancel, err, err_len);
    return rc ? rc : managed_engine_start(m, cancel, err, err_len);
}

void managed_engine_stop(managed_run *m, bool now) {
    if (m->server.pid > 0) launch_server_stop(&m->server, now ? 0 : 10);
    m->server.pid = 0;
    managed_engine_pgid = 0;
}

void managed_runner_options(const managed_run *m, runner_options *o) {
    o->server_url = m->url;
    o->served_model = m->served_name;
    o->public_id = m->model.repo[0] ? m->model.repo : m->model.file_name;
    o->mode = "managed";
    o->engine = m->adapter->name;
    /* the adapter says where this engine reports its own rates; none: nothing is read */
    o->server_tok_s_field = m->adapter->server_tok_s_field ? m->adapter->server_tok_s_field : "";
    o->prefill_ms_field = m->adapter->prefill_ms_field ? m->adapter->prefill_ms_field : "";
    /* what the engine reported beats a declaration; "auto" is never recorded */
    if (m->backend_reported[0]) o->backend = m->backend_reported, o->backend_source = "reported";
    else if (!o->backend) o->backend = m->adapter->backend;
    o->sequence_slots = m->args.slots > 1 ? m->args.slots : 1; /* what {slots} was */
    o->no_raw_text = m->no_raw_text;
    o->platform = m->platform[0] ? m->platform : NULL;
    o->hardware = m->hardware;
    o->run_id = m->args.run_id;
    o->revision = m->model.revision[0] ? m->model.revision : NULL;
    o->checkpoint_format = launch_format_name(m->model.format);
    o->checkpoint_files = m->checkpoint_files;
    o->n_checkpoint_files = m->model.n_files;
    o->local_model = m->model.local;
    o->drafter_passed = m->drafter.pass;
    o->drafter_id = m->drafter.pass && m->drafter.public_id[0] ? m->drafter.public_id : NULL;
    o->engine_version = strcmp(m->adapter->name, "builtin") == 0 ? PACER_VERSION : NULL;
    o->python_version = m->adapter->python ? NULL : "none";
}

void managed_free(managed_run *m) {
    managed_engine_stop(m, false);
    json_decref(m->hardware);
    m->hardware = NULL;
    free(m->checkpoint_files);
    m->checkpoint_files = NULL;
}

void managed_kill_now(void) {
    pid_t pgid = (pid_t)managed_engine_pgid;
    if (pgid > 0) kill(-pgid, SIGKILL);
}
