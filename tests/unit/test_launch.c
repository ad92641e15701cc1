/* test_launch.c - engine adapters' command lines, and the lifecycle of a real child
 * process group: start, readiness failure, stop with SIGTERM and with SIGKILL. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "launch/adapter.h"
#include "launch/launch.h"

static char *join(char **argv) {
    static char s[2048];
    s[0] = '\0';
    for (int i = 0; argv[i]; i++) {
        if (i) strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

static const char *argv_of(const char *engine, const char *drafter, int threads) {
    const launch_adapter *a = launch_adapter_find(engine);
    cr_assert_not_null(a, "%s", engine);
    launch_argv_params p = {.self_path = "/bin/pacer", .model = "/m/x.gguf", .port = 8123, .name = "org/x",
                            .drafter = drafter, .threads = threads};
    char *argv[64];
    char storage[4096];
    int n = launch_argv_build(a, &p, argv, 64, storage, sizeof storage);
    cr_assert_gt(n, 0);
    return join(argv);
}

Test(adapter, builtin_disables_cache_and_passes_drafter) {
    cr_assert_str_eq(argv_of("builtin", NULL, 2),
                     "/bin/pacer serve /m/x.gguf --host 127.0.0.1 --port 8123 --name org/x --threads 2 --no-prompt-cache");
    cr_assert_str_eq(argv_of("builtin", "/d.gguf", 0),
                     "/bin/pacer serve /m/x.gguf --host 127.0.0.1 --port 8123 --name org/x --no-prompt-cache --drafter /d.gguf");
}

Test(adapter, every_engine_has_a_command_line) {
    cr_assert_str_eq(argv_of("llama.cpp", "/d.gguf", 0),
                     "llama-server --model /m/x.gguf --host 127.0.0.1 --port 8123 --alias org/x --cache-reuse 0 --model-draft /d.gguf");
    cr_assert_str_eq(argv_of("vllm", NULL, 0),
                     "vllm serve /m/x.gguf --host 127.0.0.1 --port 8123 --served-model-name org/x --no-enable-prefix-caching");
    cr_assert_str_eq(argv_of("vllm", "/d", 0),
                     "vllm serve /m/x.gguf --host 127.0.0.1 --port 8123 --served-model-name org/x --no-enable-prefix-caching "
                     "--speculative-config {\"model\":\"/d\",\"num_speculative_tokens\":4}");
    cr_assert_str_eq(argv_of("sglang", NULL, 0),
                     "python3 -m sglang.launch_server --model-path /m/x.gguf --host 127.0.0.1 --port 8123 --served-model-name org/x "
                     "--disable-radix-cache");
    cr_assert_str_eq(argv_of("mlx", NULL, 0), "mlx_lm.server --model /m/x.gguf --host 127.0.0.1 --port 8123 --prompt-cache-size 0");
    cr_assert_null(launch_adapter_find("nope"));
}

Test(launch, startup_timeout_rule) {
    cr_assert_float_eq(launch_startup_timeout_s(1000000000ull), 600.0, 1e-9);
    cr_assert_float_eq(launch_startup_timeout_s(30000000000ull), 660.0, 1e-9);
    cr_assert_float_eq(launch_startup_timeout_s(2000000000000ull), 3600.0, 1e-9);
}

static void tmp_log(char *path, size_t n) {
    snprintf(path, n, "/tmp/pacer-launch-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
}

Test(launch, died_before_ready_shows_log_tail) {
    char log[64];
    tmp_log(log, sizeof log);
    char *argv[] = {"sh", "-c", "echo line1; echo line2; echo 'fatal: no such model' >&2; exit 3", NULL};
    launch_server srv = {0};
    char err[256];
    cr_assert_eq(launch_server_start(argv, log, &srv, err, sizeof err), PACER_OK, "%s", err);
    launch_free_port(&srv.port);
    cr_assert_eq(launch_server_wait_ready(&srv, "/health", 10, NULL), LAUNCH_DIED);
    buf tail;
    buf_init(&tail, 4096);
    cr_assert_eq(launch_log_tail(log, 2, &tail), PACER_OK);
    cr_assert_str_eq(tail.data, "line2\nfatal: no such model");
    buf_free(&tail);
    launch_server_stop(&srv, 1);
    unlink(log);
}

Test(launch, missing_executable_is_an_error) {
    char log[64];
    tmp_log(log, sizeof log);
    char *argv[] = {"pacer-no-such-engine", NULL};
    launch_server srv = {0};
    char err[256];
    cr_assert_eq(launch_server_start(argv, log, &srv, err, sizeof err), PACER_ERR_NOT_FOUND);
    cr_assert(strstr(err, "pacer-no-such-engine"));
    unlink(log);
}

Test(launch, stop_reaches_the_whole_group) {
    char log[64];
    tmp_log(log, sizeof log);
    /* a leader with a grandchild that ignores SIGTERM: SIGKILL after the grace period */
    char *argv[] = {"sh", "-c", "sh -c 'trap \"\" TERM; while :; do sleep 0.05; done' & wait", NULL};
    launch_server srv = {0};
    char err[256];
    cr_assert_eq(launch_server_start(argv, log, &srv, err, sizeof err), PACER_OK, "%s", err);
    pid_t pgid = srv.pid;
    usleep(200000);
    cr_assert(launch_group_exists(pgid));
    cr_assert_eq(launch_server_wait_ready(&srv, "/health", 0.3, NULL), LAUNCH_TIMEOUT);
    launch_server_stop(&srv, 0.5);
    cr_assert_not(launch_group_exists(pgid));
    unlink(log);
}

Test(launch, cancel_while_waiting) {
    char log[64];
    tmp_log(log, sizeof log);
    char *argv[] = {"sleep", "30", NULL};
    launch_server srv = {0};
    char err[256];
    cr_assert_eq(launch_server_start(argv, log, &srv, err, sizeof err), PACER_OK, "%s", err);
    volatile sig_atomic_t cancel = 1;
    cr_assert_eq(launch_server_wait_ready(&srv, "/health", 30, &cancel), LAUNCH_CANCELLED);
    pid_t pgid = srv.pid;
    launch_server_stop(&srv, 2);
    cr_assert_not(launch_group_exists(pgid));
    unlink(log);
}
