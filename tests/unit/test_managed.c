/* test_managed.c - bench/managed.{c,h} as the lab uses it: prepare once, then start and stop
 * a fresh engine twice (tests/tools/fake_engine.py stands in for llama.cpp's server), the
 * receipt facts it maps into runner options, a start-up failure that names the log, and
 * receipt_paths(). Real processes on loopback, real files. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/managed.h"
#include "bench/receipt.h"

static char DIR_[PATH_MAX], MODEL[PATH_MAX + 16], FAKE[PATH_MAX];
static int N_LINES;

static void setup(void) {
    snprintf(DIR_, sizeof DIR_, "/tmp/pacer-test-managed-XXXXXX");
    cr_assert(mkdtemp(DIR_));
    snprintf(MODEL, sizeof MODEL, "%s/tiny.gguf", DIR_);
    FILE *f = fopen(MODEL, "wb");
    cr_assert(f);
    for (int i = 0; i < 4096; i++) fputc(i * 7, f);
    fclose(f);
    cr_assert(getcwd(FAKE, sizeof FAKE - 40));
    strcat(FAKE, "/tests/tools/fake_engine.py");
    unsetenv("FAKE_ENGINE_MODE");
    unsetenv("FAKE_ENGINE_ARGV");
    unsetenv("FAKE_ENGINE_PIDFILE");
    N_LINES = 0;
}

static void teardown(void) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", DIR_);
    cr_expect_eq(system(cmd), 0);
}

static void count_line(void *ctx, const char *line) {
    (void)ctx;
    cr_expect(strncmp(line, "pacer:", 6) != 0, "a progress line carries no prefix: %s", line);
    N_LINES++;
}

static size_t discard(char *p, size_t sz, size_t n, void *ud) { (void)p; (void)ud; return sz * n; }

static long get_status(const char *url) {
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    return code;
}

static managed_args args(void) {
    return (managed_args){.model_spec = MODEL, .engine = "llama.cpp", .engine_bin = FAKE, .drafter = "none",
                          .no_read_sample = true, .run_id = "test-run", .log_dir = DIR_, .startup_timeout_s = 20,
                          .progress = count_line};
}

Test(managed, prepare_once_start_stop_twice, .init = setup, .fini = teardown) {
    static const volatile sig_atomic_t never = 0;
    managed_args a = args();
    managed_run m;
    char err[1024] = "";
    cr_assert_eq(managed_prepare(&m, &a, &never, err, sizeof err), PACER_OK, "%s", err);
    cr_expect_eq(m.model.n_files, 1);
    cr_expect_eq(strlen(m.model.files[0].sha256), 64, "the weights are hashed once, at prepare");
    cr_expect_eq(m.server.pid, 0, "prepare starts nothing");
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(managed_engine_start(&m, &never, err, sizeof err), PACER_OK, "round %d: %s", round, err);
        char url[128];
        snprintf(url, sizeof url, "%s/health", m.url);
        cr_expect_eq(get_status(url), 200, "round %d: the engine answers at its base URL", round);
        managed_engine_stop(&m, false);
        cr_expect_eq(m.server.pid, 0);
        cr_expect_neq(get_status(url), 200, "round %d: stopped", round);
    }
    cr_expect_geq(N_LINES, 2, "each start says so through the callback");
    runner_options o = {0};
    managed_runner_options(&m, &o);
    cr_expect_str_eq(o.mode, "managed");
    cr_expect_str_eq(o.engine, "llama.cpp");
    cr_expect_str_eq(o.public_id, "tiny.gguf");
    cr_expect_str_eq(o.served_model, "tiny.gguf");
    cr_expect_str_eq(o.run_id, "test-run");
    cr_expect_str_eq(o.checkpoint_format, "gguf");
    cr_expect_eq(o.n_checkpoint_files, 1);
    cr_expect_str_eq(o.checkpoint_files[0].file, "tiny.gguf");
    cr_expect(o.local_model);
    cr_expect_not(o.drafter_passed);
    cr_expect(o.hardware && json_is_object(o.hardware));
    cr_expect_str_eq(o.platform ? o.platform : "(null)", "linux", "as manifests name it, never linux-x86_64");
    cr_expect_eq(o.sequence_slots, 1);
    cr_expect_null(o.backend, "llama.cpp whose log names no weight buffer: unknown, never auto");
    cr_expect_null(o.engine_version, "only the builtin engine's version is known");
    managed_free(&m);
}

Test(managed, engine_dies_names_the_log, .init = setup, .fini = teardown) {
    static const volatile sig_atomic_t never = 0;
    setenv("FAKE_ENGINE_MODE", "die", 1);
    managed_args a = args();
    managed_run m;
    char err[1024] = "";
    pacer_err rc = managed_begin(&m, &a, &never, err, sizeof err);
    cr_expect_eq(rc, PACER_ERR_STATE);
    cr_expect(m.engine_failed);
    cr_expect(strstr(err, "exited before it was ready"), "%s", err);
    cr_expect(strstr(m.log_path, DIR_) == m.log_path, "the log goes to log_dir: %s", m.log_path);
    cr_expect_eq(access(m.log_path, R_OK), 0);
    managed_free(&m);
}

Test(managed, refusals_start_nothing, .init = setup, .fini = teardown) {
    static const volatile sig_atomic_t never = 0, cancelled = 1;
    managed_args a = args();
    managed_run m;
    char err[1024] = "";
    a.engine = "no-such-engine";
    cr_expect_eq(managed_prepare(&m, &a, &never, err, sizeof err), PACER_ERR_ARG);
    cr_expect(strstr(err, "unknown engine 'no-such-engine'"), "%s", err);
    managed_free(&m);
    a = args();
    cr_expect_eq(managed_prepare(&m, &a, &cancelled, err, sizeof err), PACER_ERR_CANCELLED);
    cr_expect_eq(m.server.pid, 0);
    managed_free(&m);
}

Test(managed, receipt_paths_one_rule) {
    char p[256], d[256], err[128];
    cr_assert_eq(receipt_paths("out/r.json", NULL, p, sizeof p, d, sizeof d, err, sizeof err), PACER_OK);
    cr_expect_str_eq(p, "out/r.json");
    cr_expect_str_eq(d, "out/r.drafts.json");
    cr_assert_eq(receipt_paths("receipt", NULL, p, sizeof p, d, sizeof d, err, sizeof err), PACER_OK);
    cr_expect_str_eq(d, "receipt.drafts.json");
    char tmp[] = "/tmp/pacer-test-home-XXXXXX";
    cr_assert(mkdtemp(tmp));
    char *old = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", tmp, 1);
    cr_assert_eq(receipt_paths(NULL, "RUN1", p, sizeof p, d, sizeof d, err, sizeof err), PACER_OK, "%s", err);
    char want[256];
    snprintf(want, sizeof want, "%s/.pacer/benchmarks/RUN1.json", tmp);
    cr_expect_str_eq(p, want);
    snprintf(want, sizeof want, "%s/.pacer/benchmarks/RUN1.drafts.json", tmp);
    cr_expect_str_eq(d, want);
    snprintf(want, sizeof want, "%s/.pacer/benchmarks", tmp);
    cr_expect_eq(access(want, W_OK), 0, "the directory is created");
    cr_expect_eq(receipt_paths("x.json", NULL, p, 4, d, sizeof d, err, sizeof err), PACER_ERR_TOO_BIG);
    if (old) setenv("HOME", old, 1);
    free(old);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    cr_expect_eq(system(cmd), 0);
}
