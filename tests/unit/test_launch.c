/* test_launch.c - engine adapters' command lines, model resolution by what each engine
 * loads, and the lifecycle of a real child process group: start, readiness failure, stop
 * with SIGTERM and with SIGKILL. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/adapter.h"
#include "launch/launch.h"
#include "launch/model.h"

static char *join(char **argv) {
    static char s[2048];
    s[0] = '\0';
    for (int i = 0; argv[i]; i++) {
        if (i) strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

static const char *argv_with(const char *engine, const char *drafter, int threads, bool serial) {
    const launch_adapter *a = launch_adapter_find(engine);
    cr_assert_not_null(a, "%s", engine);
    launch_argv_params p = {.self_path = "/bin/pacer", .model = "/m/x.gguf", .port = 8123, .name = "org/x",
                            .drafter = drafter, .threads = threads, .serial = serial};
    char *argv[64];
    char storage[4096];
    int n = launch_argv_build(a, &p, argv, 64, storage, sizeof storage);
    cr_assert_gt(n, 0);
    return join(argv);
}

static const char *argv_of(const char *engine, const char *drafter, int threads) {
    return argv_with(engine, drafter, threads, false);
}

Test(adapter, builtin_disables_cache_and_passes_drafter) {
    cr_assert_str_eq(argv_of("builtin", NULL, 2),
                     "/bin/pacer serve /m/x.gguf --host 127.0.0.1 --port 8123 --name org/x --threads 2 --parallel 1 --no-prompt-cache");
    cr_assert_str_eq(argv_of("builtin", "/d.gguf", 0),
                     "/bin/pacer serve /m/x.gguf --host 127.0.0.1 --port 8123 --name org/x --parallel 1 --no-prompt-cache --drafter /d.gguf");
}

/* --serial reaches the engines that draft on their own (pacer serve: n-gram lookup); the
 * others have nothing to turn off */
Test(adapter, serial_reaches_engines_that_draft_on_their_own) {
    cr_assert_str_eq(argv_with("builtin", NULL, 0, true),
                     "/bin/pacer serve /m/x.gguf --host 127.0.0.1 --port 8123 --name org/x --parallel 1 --no-prompt-cache --serial");
    for (const launch_adapter *a = launch_adapters; a->name; a++) {
        if (strcmp(a->name, "builtin") == 0) continue;
        cr_assert_str_eq(argv_with(a->name, NULL, 0, true), argv_of(a->name, NULL, 0), "%s", a->name);
    }
}

/* one sequence slot: each managed engine decodes one request at a time */
Test(adapter, a_context_size_is_passed_only_when_given) {
    const launch_adapter *a = launch_adapter_find("builtin"), *l = launch_adapter_find("llama.cpp");
    launch_argv_params p = {.self_path = "/bin/pacer", .model = "/m/x.gguf", .port = 8123, .name = "org/x", .ctx = 4096};
    char *argv[64];
    char storage[4096];
    cr_assert_gt(launch_argv_build(a, &p, argv, 64, storage, sizeof storage), 0);
    cr_expect_str_eq(join(argv), "/bin/pacer serve /m/x.gguf --host 127.0.0.1 --port 8123 --name org/x --ctx 4096 --parallel 1 --no-prompt-cache");
    cr_assert_gt(launch_argv_build(l, &p, argv, 64, storage, sizeof storage), 0);
    cr_expect_str_eq(join(argv), "llama-server --model /m/x.gguf --host 127.0.0.1 --port 8123 --alias org/x --ctx-size 4096 --parallel 1 "
                                    "--cache-reuse 0 --no-cache-prompt");
}

Test(adapter, every_engine_has_a_command_line) {
    cr_assert_str_eq(argv_of("llama.cpp", "/d.gguf", 0),
                     "llama-server --model /m/x.gguf --host 127.0.0.1 --port 8123 --alias org/x --parallel 1 "
                     "--cache-reuse 0 --no-cache-prompt --model-draft /d.gguf");
    cr_assert_str_eq(argv_of("vllm", NULL, 0),
                     "vllm serve /m/x.gguf --host 127.0.0.1 --port 8123 --served-model-name org/x --max-num-seqs 1 "
                     "--no-enable-prefix-caching");
    cr_assert_str_eq(argv_of("vllm", "/d", 0),
                     "vllm serve /m/x.gguf --host 127.0.0.1 --port 8123 --served-model-name org/x --max-num-seqs 1 "
                     "--no-enable-prefix-caching --speculative-config {\"model\":\"/d\",\"num_speculative_tokens\":4}");
    cr_assert_str_eq(argv_of("sglang", NULL, 0),
                     "python3 -m sglang.launch_server --model-path /m/x.gguf --host 127.0.0.1 --port 8123 --served-model-name org/x "
                     "--max-running-requests 1 --disable-radix-cache");
    cr_assert_str_eq(argv_of("mlx", NULL, 0), "mlx_lm.server --model /m/x.gguf --host 127.0.0.1 --port 8123 "
                                              "--decode-concurrency 1 --prompt-concurrency 1 --prompt-cache-size 0");
    cr_assert_null(launch_adapter_find("nope"));
}

/* llama.cpp decides its backend by its build and offloading: the log's weight buffers say
 * which (real lines of a CPU build and a CUDA build); no adapter records "auto" */
Test(adapter, backend_from_the_engine_log) {
    const launch_adapter *l = launch_adapter_find("llama.cpp");
    static const char cpu[] = "load_tensors: loading model tensors, this can take a while... (mmap = true)\n"
                              "load_tensors:   CPU_Mapped model buffer size =    31.50 MiB\n"
                              "llama_context:        CPU  output buffer size =     0.98 MiB\n";
    static const char cuda[] = "ggml_cuda_init: found 1 CUDA devices (Total VRAM: 143156 MiB):\n"
                               "load_tensors: offloaded 5/5 layers to GPU\n"
                               "load_tensors:   CPU_Mapped model buffer size =     8.00 MiB\n"
                               "load_tensors:        CUDA0 model buffer size =    23.50 MiB\n";
    static const char host_only[] = "load_tensors:    CUDA_Host model buffer size =    31.50 MiB\n";
    cr_assert_str_eq(launch_backend_from_log(l, cpu, strlen(cpu)), "cpu");
    cr_assert_str_eq(launch_backend_from_log(l, cuda, strlen(cuda)), "cuda");
    cr_assert_str_eq(launch_backend_from_log(l, host_only, strlen(host_only)), "cpu");
    cr_assert_null(launch_backend_from_log(l, "server is listening\n", 20));
    for (const launch_adapter *a = launch_adapters; a->name; a++) {
        bool decided = a->backend != NULL;
        cr_assert(decided || a->backend_log.line, "%s: neither a backend nor where its log says it", a->name);
        cr_assert(!decided || strcmp(a->backend, "auto") != 0, "%s", a->name);
    }
}

Test(adapter, each_engine_declares_what_it_loads) {
    static const struct { const char *engine; launch_format loads; } want[] = {
        {"builtin", LAUNCH_FORMAT_GGUF},   {"llama.cpp", LAUNCH_FORMAT_GGUF}, {"vllm", LAUNCH_FORMAT_HF_DIR},
        {"sglang", LAUNCH_FORMAT_HF_DIR}, {"mlx", LAUNCH_FORMAT_HF_DIR},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert_eq(launch_adapter_find(want[i].engine)->loads, want[i].loads, "%s", want[i].engine);
    cr_assert_str_eq(launch_format_name(LAUNCH_FORMAT_HF_DIR), "hf-dir");
}

Test(launch, startup_timeout_rule) {
    cr_assert_float_eq(launch_startup_timeout_s(0), 600.0, 1e-9);
    cr_assert_float_eq(launch_startup_timeout_s(20000000000ull), 600.0, 1e-9);
    cr_assert_float_eq(launch_startup_timeout_s(21000000000ull), 606.0, 1e-9);
    cr_assert_float_eq(launch_startup_timeout_s(520000000000ull), 3600.0, 1e-9);
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

Test(launch, log_tail_of_a_long_log_is_its_end) {
    char log[64];
    tmp_log(log, sizeof log);
    FILE *f = fopen(log, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 400000; i++) fprintf(f, "progress line %d of a chatty engine\n", i); /* ~15 MB */
    fprintf(f, "fatal: out of memory\n\n");
    fclose(f);
    buf tail;
    buf_init(&tail, 4096);
    cr_assert_eq(launch_log_tail(log, 2, &tail), PACER_OK);
    cr_assert_str_eq(tail.data, "progress line 399999 of a chatty engine\nfatal: out of memory");
    buf_free(&tail);
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

/* --drafter: a named drafter on an engine that cannot take one is refused before start-up */
Test(drafter, engine_without_drafter_support_refuses_a_named_one) {
    launch_adapter a = *launch_adapter_find("builtin");
    a.name = "no-drafts";
    a.takes_drafter = false;
    launch_model target = {.repo = "org/x"};
    launch_drafter d;
    char err[512] = "";
    cr_assert_eq(launch_drafter_choose(&a, "/tmp", false, &target, &d, err, sizeof err), PACER_ERR_ARG);
    cr_assert(strstr(err, "engine no-drafts cannot take a drafter"), "%s", err);
    cr_assert_not(d.pass);
    /* auto and none are no error: nothing is passed and the note says why */
    cr_assert_eq(launch_drafter_choose(&a, "auto", false, &target, &d, err, sizeof err), PACER_OK);
    cr_assert_not(d.pass);
    cr_assert(strstr(d.note, "cannot take a drafter"), "%s", d.note);
    cr_assert_eq(launch_drafter_choose(&a, "none", false, &target, &d, err, sizeof err), PACER_OK);
    cr_assert_not(d.pass);
}

Test(drafter, serial_overrides_a_named_drafter) {
    const launch_adapter *a = launch_adapter_find("llama.cpp");
    launch_drafter d;
    char err[512];
    cr_assert_eq(launch_drafter_choose(a, "/some/draft.gguf", true, NULL, &d, err, sizeof err), PACER_OK);
    cr_assert_not(d.pass);
    cr_assert(d.serial_override);
    cr_assert(strstr(d.note, "--serial overrides --drafter /some/draft.gguf"), "%s", d.note);
    cr_assert_eq(launch_drafter_choose(a, "auto", true, NULL, &d, err, sizeof err), PACER_OK);
    cr_assert_not(d.serial_override, "nothing named: nothing overridden");
}

Test(drafter, local_path_is_passed_and_never_public) {
    char dir[] = "/tmp/pacer-drafter-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char file[128];
    snprintf(file, sizeof file, "%s/small.gguf", dir);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs("GGUF", f);
    fclose(f);
    launch_drafter d;
    char err[512];
    /* a directory: its one GGUF file for GGUF engines, the directory for the others */
    cr_assert_eq(launch_drafter_choose(launch_adapter_find("builtin"), dir, false, NULL, &d, err, sizeof err), PACER_OK, "%s", err);
    cr_assert(d.pass);
    cr_assert_str_eq(d.path, file);
    cr_assert_str_eq(d.public_id, "");
    cr_assert_eq(launch_drafter_choose(launch_adapter_find("vllm"), dir, false, NULL, &d, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_str_eq(d.path, dir);
    cr_assert_str_eq(d.public_id, "");
    /* auto on a local target: none, and why */
    launch_model local = {.local = true};
    cr_assert_eq(launch_drafter_choose(launch_adapter_find("builtin"), "auto", false, &local, &d, err, sizeof err), PACER_OK);
    cr_assert_not(d.pass);
    cr_assert(strstr(d.note, "local path"), "%s", d.note);
    unlink(file);
    rmdir(dir);
}

/* --- model resolution follows what the engine loads --- */

static void put_file(const char *dir, const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "%s", p);
    fputs(text, f);
    fclose(f);
}

static void rm_tree(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(model, gguf_engines_take_a_file_or_the_one_gguf_of_a_directory) {
    char dir[] = "/tmp/pacer-model-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    put_file(dir, "m-q8_0.gguf", "GGUF....");
    char file[128];
    snprintf(file, sizeof file, "%s/m-q8_0.gguf", dir);
    launch_model m;
    char err[1024] = "";
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(launch_model_resolve(k ? dir : file, launch_adapter_find(k ? "llama.cpp" : "builtin"), &m, err, sizeof err),
                     PACER_OK, "%s", err);
        cr_assert_str_eq(m.path, file);
        cr_assert_eq(m.format, LAUNCH_FORMAT_GGUF);
        cr_assert_str_eq(launch_format_name(m.format), "gguf");
        cr_assert_str_eq(m.file_name, "m-q8_0.gguf");
        cr_assert_eq(m.n_files, 1);
        cr_assert_str_eq(m.files[0].name, "m-q8_0.gguf");
        cr_assert_eq(m.weight_bytes, 8);
        cr_assert(m.local);
        cr_assert_str_eq(m.files[0].sha256, "", "resolution hashes nothing");
    }
    rm_tree(dir);
}

Test(model, hf_engines_take_a_checkpoint_directory) {
    char dir[] = "/tmp/pacer-model-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    put_file(dir, "config.json", "{}");
    put_file(dir, "model-00002-of-00002.safetensors", "bb");
    put_file(dir, "model-00001-of-00002.safetensors", "aaaa");
    put_file(dir, "training_args.bin", "x"); /* safetensors present: .bin files are not weights */
    put_file(dir, "tokenizer.json", "{}");
    launch_model m;
    char err[1024] = "";
    for (int e = 0; e < 3; e++) {
        static const char *const engines[] = {"vllm", "sglang", "mlx"};
        cr_assert_eq(launch_model_resolve(dir, launch_adapter_find(engines[e]), &m, err, sizeof err), PACER_OK, "%s", err);
        cr_assert_str_eq(m.path, dir, "the directory itself is passed");
        cr_assert_str_eq(launch_format_name(m.format), "hf-dir");
        cr_assert_eq(m.n_files, 2);
        cr_assert_str_eq(m.files[0].name, "model-00001-of-00002.safetensors", "sorted by name");
        cr_assert_str_eq(m.files[1].name, "model-00002-of-00002.safetensors");
        cr_assert_eq(m.weight_bytes, 6);
        cr_assert_eq(m.largest, 0);
        cr_assert_str_eq(m.file_name, dir + 5); /* the directory's own name */
    }
    /* hashing: every weight file once, by name; paths are built from the directory */
    cr_assert_eq(launch_model_hash(&m, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_str_eq(m.files[1].sha256, "3b64db95cb55c763391c707108489ae18b4112d783300de38e033b4c98c3deaf"); /* "bb" */
    char p[600];
    cr_assert(launch_model_file_path(&m, 1, p, sizeof p));
    cr_assert(strstr(p, "/model-00002-of-00002.safetensors"));
    rm_tree(dir);
}

Test(model, hf_directory_with_bin_weights_only) {
    char dir[] = "/tmp/pacer-model-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    put_file(dir, "config.json", "{}");
    put_file(dir, "pytorch_model.bin", "abc");
    launch_model m;
    char err[1024] = "";
    cr_assert_eq(launch_model_resolve(dir, launch_adapter_find("vllm"), &m, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(m.n_files, 1);
    cr_assert_str_eq(m.files[0].name, "pytorch_model.bin");
    rm_tree(dir);
}

Test(model, the_other_format_is_refused_by_name) {
    char hf[] = "/tmp/pacer-model-XXXXXX", gg[] = "/tmp/pacer-model-XXXXXX", bare[] = "/tmp/pacer-model-XXXXXX";
    cr_assert_not_null(mkdtemp(hf));
    cr_assert_not_null(mkdtemp(gg));
    cr_assert_not_null(mkdtemp(bare));
    put_file(hf, "config.json", "{}");
    put_file(hf, "model.safetensors", "w");
    put_file(gg, "m.gguf", "GGUF");
    put_file(bare, "config.json", "{}");
    char file[128];
    snprintf(file, sizeof file, "%s/m.gguf", gg);
    launch_model m;
    char err[1024] = "";
    /* a GGUF engine given a Hugging Face checkpoint directory */
    cr_assert_eq(launch_model_resolve(hf, launch_adapter_find("builtin"), &m, err, sizeof err), PACER_ERR_ARG);
    cr_assert(strstr(err, "engine builtin loads a GGUF file"), "%s", err);
    cr_assert(strstr(err, "vllm, sglang or mlx"), "%s", err);
    /* an HF-directory engine given a GGUF file, or a directory holding only one */
    cr_assert_eq(launch_model_resolve(file, launch_adapter_find("vllm"), &m, err, sizeof err), PACER_ERR_ARG);
    cr_assert(strstr(err, "engine vllm loads a Hugging Face checkpoint directory"), "%s", err);
    cr_assert(strstr(err, "builtin or llama.cpp"), "%s", err);
    cr_assert_eq(launch_model_resolve(gg, launch_adapter_find("sglang"), &m, err, sizeof err), PACER_ERR_ARG);
    cr_assert(strstr(err, "engine sglang loads") && strstr(err, "GGUF checkpoint without config.json"), "%s", err);
    /* config.json without weights: nothing to load */
    cr_assert_eq(launch_model_resolve(bare, launch_adapter_find("mlx"), &m, err, sizeof err), PACER_ERR_NOT_FOUND);
    cr_assert(strstr(err, "no *.safetensors or *.bin weight files"), "%s", err);
    cr_assert_eq(launch_model_resolve(bare, launch_adapter_find("builtin"), &m, err, sizeof err), PACER_ERR_NOT_FOUND);
    cr_assert(strstr(err, "no .gguf file"), "%s", err);
    rm_tree(hf);
    rm_tree(gg);
    rm_tree(bare);
}

Test(model, cached_repo_snapshot_for_each_format) {
    char root[] = "/tmp/pacer-hf-XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    static const char commit[] = "0123456789abcdef0123456789abcdef01234567";
    char snap[512], cmd[1400];
    snprintf(snap, sizeof snap, "%s/models--org--tiny/snapshots/%s", root, commit);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' '%s/models--org--tiny/blobs' '%s/models--org--tiny/refs' && printf %s > '%s/models--org--tiny/refs/main'"
             " && printf w > '%s/models--org--tiny/blobs/b1' && ln -s ../../blobs/b1 '%s/model.safetensors'",
             snap, root, root, commit, root, root, snap);
    cr_assert_eq(system(cmd), 0);
    put_file(snap, "config.json", "{}");
    setenv("HF_HUB_CACHE", root, 1);
    launch_model m;
    char err[1024] = "";
    cr_assert_eq(launch_model_resolve("org/tiny", launch_adapter_find("vllm"), &m, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_str_eq(m.path, snap, "the snapshot directory is passed");
    cr_assert_str_eq(m.repo, "org/tiny");
    cr_assert_str_eq(m.revision, commit);
    cr_assert_not(m.local);
    cr_assert_eq(m.n_files, 1);
    cr_assert_str_eq(m.files[0].name, "model.safetensors");
    cr_assert_eq(m.weight_bytes, 1, "the blob behind the link is measured");
    cr_assert_eq(launch_model_resolve("org/tiny", launch_adapter_find("builtin"), &m, err, sizeof err), PACER_ERR_ARG);
    cr_assert(strstr(err, "engine builtin loads a GGUF file") && strstr(err, "org/tiny@0123456789abcdef"), "%s", err);
    rm_tree(root);
}
