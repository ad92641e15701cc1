/* engine.c - the lab's engine per sample over bench/managed: prepare once per
 * configuration, start and stop per sample, peak memory from /proc. */
#include "lab/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fileio.h"

pacer_err lab_engine_prepare(lab_engine *e, const lab_engine_spec *s, const volatile sig_atomic_t *cancel, char *err,
                             size_t err_len) {
    memset(e, 0, sizeof *e);
    if (snprintf(e->log_dir, sizeof e->log_dir, "%s", s->log_dir) >= (int)sizeof e->log_dir) {
        snprintf(err, err_len, "the log directory path is too long");
        return PACER_ERR_TOO_BIG;
    }
    managed_args a = {.model_spec = s->model_path, .engine = s->engine, .engine_bin = s->bin, .drafter = "none",
                      .threads = s->threads, .ctx = s->ctx, .extra_args = s->extra_args, .n_extra_args = s->n_extra,
                      .no_read_sample = true, .log_dir = e->log_dir};
    pacer_err rc = managed_prepare(&e->m, &a, cancel, err, err_len);
    e->prepared = true; /* managed_free is needed whatever the outcome */
    return rc;
}

pacer_err lab_engine_use_binary(lab_engine *e, const char *bin, const char *log_dir) {
    if (e->m.server.pid > 0) return PACER_ERR_STATE;
    if (snprintf(e->log_dir, sizeof e->log_dir, "%s", log_dir) >= (int)sizeof e->log_dir) return PACER_ERR_TOO_BIG;
    e->m.args.engine_bin = bin;
    e->m.args.log_dir = e->log_dir;
    return PACER_OK;
}

static bool executable_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

bool lab_engine_find_binary(const char *bin, char *out, size_t n) {
    if (strchr(bin, '/')) return snprintf(out, n, "%s", bin) < (int)n && executable_file(out);
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t len = strcspn(p, ":");
        if (snprintf(out, n, "%.*s/%s", (int)len, p, bin) < (int)n && executable_file(out)) return true;
        p += len + (p[len] == ':');
    }
    out[0] = '\0';
    return false;
}

lab_engine_status lab_engine_start(lab_engine *e, const volatile sig_atomic_t *cancel, char *err, size_t err_len) {
    int64_t t0 = clock_now_ns();
    pacer_err rc = managed_engine_start(&e->m, cancel, err, err_len);
    if (rc == PACER_ERR_CANCELLED) return LAB_ENGINE_CANCELLED;
    if (rc) return LAB_ENGINE_FAILED;
    e->load_ns = clock_now_ns() - t0;
    return LAB_ENGINE_READY;
}

bool lab_engine_alive(lab_engine *e) { return e->m.server.pid > 0 && launch_server_alive(&e->m.server); }

bool lab_engine_peak_rss(const lab_engine *e, int64_t *bytes) {
    if (e->m.server.pid <= 0 || e->m.server.exited) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)e->m.server.pid);
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

void lab_engine_stop(lab_engine *e, bool now) { managed_engine_stop(&e->m, now); }

void lab_engine_free(lab_engine *e) {
    if (e->prepared) managed_free(&e->m);
    e->prepared = false;
}
