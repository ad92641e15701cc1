/* cmd_bench.c - 'pacer bench': attached runs (--server URL), 'bench suites' and
 * 'bench inspect'. Signals: the first SIGINT cancels the attempt in flight and saves the
 * receipt (exit 130); SIGTERM and SIGHUP cancel and save nothing (143, 129). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/sha256.h"
#include "bench/inspect.h"
#include "bench/manifest.h"
#include "bench/rank.h"
#include "bench/receipt.h"
#include "bench/runlog.h"
#include "bench/runner.h"
#include "bench/sanitize.h"
#include "bench/suite.h"
#include "bench/managed.h"
#include "cli/bench_load.h"
#include "cli/cli.h"
#include "cli/cmd_publish.h"
#include "cli/demo.h"

static volatile sig_atomic_t bench_cancel = 0;
static volatile sig_atomic_t bench_signal = 0;

static void bench_on_signal(int sig) {
    if (sig == SIGINT && bench_cancel) { /* a second Ctrl-C: the engine's group dies at once, and pacer */
        managed_kill_now();
        _exit(130);
    }
    if (bench_signal == 0 || sig != SIGINT) bench_signal = sig;
    bench_cancel = 1;
}


static int bench_suites(void) {
    for (int i = 0; suite_builtin_ids[i]; i++) {
        suite s;
        char err[256];
        if (suite_load(suite_builtin_ids[i], &s, err, sizeof err)) {
            cli_error("%s", err);
            return 1;
        }
        printf("%s (version %d)\n  digest       %s\n", s.id, s.version, s.digest);
        printf("  repetitions  %d measured after %d warm-up per cell\n", s.repetitions, s.warmups);
        printf("  thinking     %s; prompt cache %s\n", s.thinking_disabled ? "disabled" : "default",
               s.prompt_cache_disabled ? "disabled" : "default");
        if (s.rule_version == 1)
            printf("  rule         v1: every reply must deliver its full token budget\n");
        else
            printf("  rule         v2: greedy replies need the full budget; a sampled reply may stop naturally after "
                   ">= %d tokens; chat-only servers get the code prompt as one user message\n",
                   s.natural_stop_min_tokens);
        for (int w = 0; w < s.n_workloads; w++) {
            char hex[65];
            if (sha256_hex(s.workloads[w].prompt, strlen(s.workloads[w].prompt), hex)) snprintf(hex, sizeof hex, "unavailable");
            printf("  workload     %-6s route %-11s %d tokens; prompt %zu bytes, sha256 %s\n", s.workloads[w].name,
                   attempt_route_name(s.workloads[w].route), s.workloads[w].max_tokens, strlen(s.workloads[w].prompt), hex);
        }
        for (int k = 0; k < s.n_settings; k++) {
            const suite_setting *st = &s.settings[k];
            if (st->temperature == 0) printf("  setting      %-8s temperature 0\n", st->name);
            else
                printf("  setting      %-8s temperature %g, top-k %d, top-p %g, seed %lld + repetition\n", st->name,
                       st->temperature, st->top_k, st->top_p, (long long)st->seed_base);
        }
        printf("\n");
        suite_free(&s);
    }
    return 0;
}

static int bench_inspect(int argc, char **argv) {
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'}, {"format", required_argument, 0, 'f'}, {"suite", required_argument, 0, 's'},
        {0, 0, 0, 0}};
    inspect_format fmt = INSPECT_TEXT;
    const char *path = NULL, *suite_file = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j') fmt = INSPECT_JSON;
        else if (c == 's') suite_file = optarg;
        else if (c == 'f' && inspect_format_parse(optarg, &fmt)) continue;
        else if (c == 'f') { cli_error("bench inspect: --format must be text, json, csv or md"); return 1; }
        else { cli_error("bench inspect: unexpected argument '%s'", argv[optind - 1]); return 1; }
    }
    if (optind < argc) path = argv[optind++];
    if (optind < argc) { cli_error("bench inspect: unexpected argument '%s'", argv[optind]); return 1; }
    if (!path) { cli_error("usage: pacer bench inspect RECEIPT [--format text|json|csv|md] [--suite FILE]"); return 1; }
    bool as_json = fmt == INSPECT_JSON;
    json_t *r = NULL, *d = NULL;
    char err[512], not_validated[600] = "";
    int status = 1;
    if (receipt_read(path, &r, err, sizeof err)) { cli_error("%s: %s", path, err); goto out; }
    pacer_err vrc = receipt_validate_suite(r, suite_file, err, sizeof err);
    if (vrc == PACER_ERR_NOT_FOUND) snprintf(not_validated, sizeof not_validated, "%s", err); /* shown, not refused */
    else if (vrc) { cli_error("%s: refused: %s", path, err); goto out; }
    if (not_validated[0]) fprintf(stderr, "pacer: %s: %s\n", path, not_validated);
    if (as_json) {
        char *t = json_dumps(r, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
        if (t) puts(t);
        free(t);
        status = 0;
        goto out;
    }
    buf b;
    buf_init(&b, 1u << 24);
    if (fmt == INSPECT_CSV || fmt == INSPECT_MD) { /* the cell table alone, for spreadsheets and documents */
        if (inspect_render_cells(r, fmt, &b) == PACER_OK) { fputs(b.data ? b.data : "", stdout); status = 0; }
        buf_free(&b);
        goto out;
    }
    char rpath[4400], dpath[4500];
    if (receipt_paths(path, NULL, rpath, sizeof rpath, dpath, sizeof dpath, err, sizeof err) ||
        receipt_read(dpath, &d, err, sizeof err) || !json_is_object(d) ||
        strcmp(json_get_str(d, "run_id", ""), json_get_str(r, "run_id", "-")) != 0) {
        json_decref(d);
        d = NULL;
    }
    if (inspect_render(r, d, &b) == PACER_OK) {
        fputs(b.data ? b.data : "", stdout);
        if (not_validated[0]) printf("\nnot validated: %s\n", not_validated);
        status = 0;
    }
    buf_free(&b);
out:
    json_decref(r);
    json_decref(d);
    return status;
}

static void bench_progress(void *ctx, int cell, int n_cells, const char *workload, const char *setting, int index,
                           int reps, bool warmup, const attempt_sample *s) {
    (void)ctx;
    char rate[32] = "-";
    if (s->has_stream_tok_s) snprintf(rate, sizeof rate, "%.1f tok/s", s->stream_tok_s);
    fprintf(stderr, "\r\033[K[%d/%d %s/%s] %s %d/%d  %s  %s", cell + 1, n_cells, workload, setting,
            warmup ? "warm-up" : "rep", index, warmup ? 1 : reps, rate, attempt_status_name(s->status));
    fflush(stderr);
}

static int parse_temps(const char *list, runner_options *o) {
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(t, &end);
        if (*end || v < 0 || v > 2 || o->n_temps >= RUNNER_MAX_TEMPS) return -1;
        o->temps[o->n_temps++] = v;
    }
    return o->n_temps > 0 ? 0 : -1;
}

static int parse_count(const char *s, int lo, int hi) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return (*end || errno || v < lo || v > hi) ? -1 : (int)v;
}

/* Progress lines of the managed-run library, for people. */
static void bench_say(void *ctx, const char *line) {
    (void)ctx;
    fprintf(stderr, "pacer: %s\n", line);
}

/* The managed part of a run: the demo model when none is named, the engine started and
 * ready, and what it knows put into `o`. Returns 0, or the exit status (1, 130, or 129/143
 * for SIGHUP/SIGTERM) after saying why. */
/* The check the board's intake runs, with the context it has (the suite's prompts). */
static pacer_err bench_privacy_check(const suite *s, const json_t *receipt, char *err, size_t err_len) {
    sanitize_context *c = sanitize_context_new();
    pacer_err rc = c ? sanitize_context_add_suite(c, s) : PACER_ERR_NOMEM;
    if (!rc) rc = sanitize_check_receipt(receipt, c, err, err_len);
    else snprintf(err, err_len, "%s", pacer_strerror(rc));
    sanitize_context_free(c);
    return rc;
}

/* "incomplete WORKLOAD/SETTING: REASON[: SERVER MESSAGE]" from the cell's first attempt that
 * makes it incomplete; nothing for a complete cell. */
static void bench_print_incomplete(const json_t *cell) {
    if (strcmp(json_get_str(cell, "status", ""), "complete") == 0) return;
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(cell, "attempts"), i, a) {
        if (strcmp(json_get_str(a, "status", "ok"), "ok") == 0) continue;
        const char *msg = json_get_str(a, "server_message", "");
        printf("incomplete %s/%s: %s%s%s\n", json_get_str(cell, "workload", "?"), json_get_str(cell, "setting", "?"),
               json_get_str(a, "reason", "?"), *msg ? ": " : "", msg);
        return;
    }
    json_t *why = json_array_get(json_object_get(cell, "reasons"), 0);
    if (json_is_string(why))
        printf("incomplete %s/%s: %s\n", json_get_str(cell, "workload", "?"), json_get_str(cell, "setting", "?"),
               json_string_value(why));
}

static int bench_managed_start(managed_run *mr, managed_args *ma, runner_options *o) {
    char err[1024], demo_path[4096];
    ma->model_spec = o->public_id;
    if (!ma->model_spec) {
        if (demo_model_ensure(demo_path, sizeof demo_path, err, sizeof err)) { cli_error("%s", err); return 1; }
        ma->model_spec = demo_path;
    }
    pacer_err rc = managed_begin(mr, ma, &bench_cancel, err, sizeof err);
    int status = rc == PACER_OK ? 0 : rc == PACER_ERR_CANCELLED ? 130 : 1;
    if (rc == PACER_ERR_CANCELLED) {
        fprintf(stderr, "pacer: cancelled during start-up; nothing saved\n");
    } else if (rc) {
        cli_error("%s", err);
        buf tail;
        buf_init(&tail, 1u << 16);
        if (mr->engine_failed && launch_log_tail(mr->log_path, 15, &tail) == PACER_OK && tail.len)
            fprintf(stderr, "--- last lines of the engine log (%s) ---\n%s\n---\n", mr->log_path, tail.data);
        buf_free(&tail);
    }
    if (status) return (bench_signal == SIGTERM || bench_signal == SIGHUP) ? 128 + bench_signal : status;
    managed_runner_options(mr, o);
    fprintf(stderr, "pacer: %s ready; drafter: %s\n", mr->adapter->name, mr->drafter.note);
    return 0;
}

static const char bench_usage[] =
    "usage: pacer bench [MODEL] [--engine builtin|llama.cpp|vllm|sglang|mlx] [--engine-bin PATH]\n"
    "                   [--drafter auto|none|PATH|REPO] [--serial] [--startup-timeout S] [--threads N]\n"
    "                   [--no-read-sample]\n"
    "         MODEL: a GGUF file, a directory, or a Hugging Face repo id in the local cache, as the\n"
    "         engine loads it: builtin and llama.cpp a GGUF file (or the one .gguf of a directory or\n"
    "         snapshot); vllm, sglang and mlx a checkpoint directory (config.json + *.safetensors);\n"
    "         before the engine starts, up to 2 GB of the (largest) weight file is read uncached and\n"
    "         its GB/s recorded (--no-read-sample: not taken);\n"
    "         --drafter auto (default) passes ORG/NAME-drafter when the model is a cached repo\n"
    "         and that repo is cached too; a path or REPO names one; --serial turns drafting off\n"
    "         (pacer serve's own n-gram lookup too); the engine gets one sequence slot\n"
    "         none: the demo (a small synthesized model on the builtin engine)\n"
    "       pacer bench PUBLIC_ID --server URL --model-id NAME [--suite community-v2|community-v1|FILE]\n"
    "                   [--reps N] [--tokens N] [--temperatures LIST] [--chat-only] [--backend B]\n"
    "                   [--context N] [--output FILE]\n"
    "         --model-id, PUBLIC_ID and --context N (the server's context length) are recorded as\n"
    "         declarations, never checked against the server\n"
    "         --publish [--yes] [--upload-url URL]: publish the receipt when the run is done\n"
    "         (what a board would refuse is refused before the run)\n"
    BENCH_LOAD_USAGE
    "       pacer bench suites\n"
    "       pacer bench inspect RECEIPT [--format text|json|csv|md] (--json: --format json) [--suite FILE]\n"
    "         --suite FILE: validate a receipt of a suite file against that file (same digest)\n"
    "       pacer bench publish RECEIPT [--yes] [--upload-url URL] | login [--token-stdin] | logout\n\n"
    "exit status: 0 every attempt complete; 1 error; 2 the saved receipt holds incomplete attempts;\n"
    "130 cancelled with Ctrl-C (receipt saved); 143 / 129 SIGTERM / SIGHUP (no receipt)\n";

/* After a run: checks the receipt against its own rules and the board's privacy check (a
 * failure is said and marks *self_invalid, the receipt is still saved so it can be
 * examined), writes the receipt and drafts files, and prints the cell table, why anything is
 * unranked or incomplete, and where things went. Returns 0, or 1 when nothing was saved. */
static int bench_save_and_report(const suite *s, const char *suite_file, const runner_result *res, const char *output,
                                 const char *run_id, const char *server_log, char *path, size_t path_len,
                                 bool *self_invalid) {
    char err[512], dpath[4500];
    if (receipt_validate_suite(res->receipt, suite_file, err, sizeof err)) {
        cli_error("internal error: the receipt fails its own validation: %s", err);
        *self_invalid = true; /* still saved below, so that the failure can be examined */
    }
    if (bench_privacy_check(s, res->receipt, err, sizeof err)) {
        cli_error("internal error: the receipt fails the board's privacy check: %s", err);
        *self_invalid = true;
    }
    const char *rid = json_get_str(res->receipt, "run_id", "run");
    if (receipt_paths(output, rid, path, path_len, dpath, sizeof dpath, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    pacer_err rc = receipt_write(path, res->receipt);
    if (!rc) rc = receipt_write(dpath, res->drafts);
    if (rc) { cli_error("cannot write the receipt: %s", pacer_strerror(rc)); return 1; }
    buf b;
    buf_init(&b, 1u << 20);
    inspect_render_table(res->receipt, &b);
    fputs(b.data ? b.data : "", stdout);
    buf_free(&b);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(res->receipt, "unranked_reasons"), i, v) printf("unranked: %s\n", json_string_value(v));
    json_t *warnings = json_array();
    rank_public_warnings(res->receipt, warnings);
    json_array_foreach(warnings, i, v) printf("warning: %s\n", json_string_value(v));
    json_decref(warnings);
    /* why a cell is incomplete, in pacer's words and the server's (e.g. a greedy-only engine refusing sampling) */
    json_array_foreach(json_object_get(res->receipt, "cells"), i, v) bench_print_incomplete(v);
    if (access(server_log, F_OK) == 0) printf("server messages in full: ~/%s/%s/%s\n", RUNLOG_ROOT, run_id, RUNLOG_SERVER_FILE);
    json_array_foreach(json_object_get(res->drafts, "notes"), i, v) printf("drafts: %s\n", json_string_value(v));
    printf("receipt: %s\n", path);
    return 0;
}

/* A run's options as given. */
typedef struct bench_cli {
    managed_args ma;
    bench_load_cli lc;
    runner_options o;
    const char *suite_name, *output, *upload_url;
    bool publish, yes;
} bench_cli;

/* Parses the options of a run into *a (whose runner options point into it); 0 to run, -1
 * after --help, 1 after a message. */
static int bench_parse(int argc, char **argv, bench_cli *a) {
    static const struct option opts[] = {
        {"server", required_argument, 0, 's'}, {"model-id", required_argument, 0, 'm'},
        {"suite", required_argument, 0, 'S'},  {"reps", required_argument, 0, 'r'},
        {"tokens", required_argument, 0, 't'}, {"temperatures", required_argument, 0, 'T'},
        {"chat-only", no_argument, 0, 'c'},    {"backend", required_argument, 0, 'b'},
        {"output", required_argument, 0, 'o'}, {"idle-timeout-ms", required_argument, 0, 'i'},
        {"engine", required_argument, 0, 'E'}, {"engine-bin", required_argument, 0, 'B'},
        {"drafter", required_argument, 0, 'D'}, {"serial", no_argument, 0, 'L'},
        {"startup-timeout", required_argument, 0, 'U'}, {"threads", required_argument, 0, 'N'},
        {"no-read-sample", no_argument, 0, 'R'}, {"publish", no_argument, 0, 'P'},
        {"yes", no_argument, 0, 'y'},          {"upload-url", required_argument, 0, 'u'}, BENCH_LOAD_OPTIONS,
        {"context", required_argument, 0, 'C'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    managed_args *ma = &a->ma;
    runner_options *o = &a->o;
    *o = (runner_options){.mode = "attached", .client_version = PACER_VERSION, .api_key = getenv("PACER_API_KEY")};
    a->suite_name = "community-v2";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's': o->server_url = optarg; break;
        case 'm': o->served_model = optarg; break;
        case 'S': a->suite_name = optarg; break;
        case 'r': if ((o->reps = parse_count(optarg, 1, 1000)) < 0) { cli_error("--reps: expected 1..1000"); return 1; } break;
        case 't': if ((o->tokens = parse_count(optarg, 1, 65536)) < 0) { cli_error("--tokens: expected 1..65536"); return 1; } break;
        case 'T': if (parse_temps(optarg, o)) { cli_error("--temperatures: expected a list like 0,0.7"); return 1; } break;
        case 'c': o->chat_only = true; break;
        case 'b': o->backend = optarg; break;
        case 'o': a->output = optarg; break;
        case 'i': if ((o->idle_timeout_ms = parse_count(optarg, 1, 3600000)) < 0) { cli_error("--idle-timeout-ms"); return 1; } break;
        case 'E': ma->engine = optarg; break;
        case 'B': ma->engine_bin = optarg; break;
        case 'D': ma->drafter = optarg; break;
        case 'L': ma->serial = true; break;
        case 'R': ma->no_read_sample = true; break;
        case 'C': if ((o->declared_context = parse_count(optarg, 1, 1 << 30)) < 0) { cli_error("--context: tokens, 1..1073741824"); return 1; } break;
        case 'U': if ((ma->startup_timeout_s = parse_count(optarg, 1, 86400)) < 0) { cli_error("--startup-timeout: seconds, 1..86400"); return 1; } break;
        case 'N': if ((ma->threads = parse_count(optarg, 1, 1024)) < 0) { cli_error("--threads: 1..1024"); return 1; } break;
        case 'P': a->publish = true; break;
        case 'y': a->yes = true; break;
        case 'u': a->upload_url = optarg; break;
        case 'h': fputs(bench_usage, stdout); return -1;
        default: {
            int handled = bench_load_option(&a->lc, c, optarg);
            if (handled < 0) return 1;
            if (handled == 0) { fputs(bench_usage, stderr); return 1; }
        }
        }
    }
    if (optind < argc) o->public_id = argv[optind++];
    if (optind < argc) { cli_error("unexpected argument '%s'", argv[optind]); return 1; }
    if (!o->server_url && o->served_model) {
        cli_error("--model-id names the model of an attached server (--server URL)");
        return 1;
    }
    if (!o->server_url && o->declared_context) {
        cli_error("--context declares an attached server's context length (--server URL)");
        return 1;
    }
    if (o->server_url && (!o->public_id || !o->served_model)) {
        cli_error("an attached run needs the public checkpoint id and --model-id\n%s", bench_usage);
        return 1;
    }
    if (o->backend && strcmp(o->backend, "auto") == 0) o->backend = NULL;
    if (o->backend && strcmp(sanitize_vocab(sanitize_backends, o->backend), "other") == 0) {
        cli_error("--backend: '%s' is not one of cpu, cuda, rocm, mlx, metal, vulkan, auto", o->backend);
        return 1;
    }
    if (a->lc.any) {
        if (bench_load_finish(&a->lc)) return 1;
        o->load = &a->lc.lo;
        o->load_workload = a->lc.workload;
        a->ma.slots = load_engine_slots(&a->lc.lo);
    }
    return 0;
}

int cmd_bench(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "suites") == 0) return bench_suites();
    if (argc >= 2 && strcmp(argv[1], "inspect") == 0) return bench_inspect(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "publish") == 0) return bench_publish(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "login") == 0) return bench_login(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "logout") == 0) return bench_logout(argc - 1, argv + 1);
    bench_cli a;
    int st = bench_parse(argc, argv, &a);
    if (st) return st < 0 ? 0 : 1;
    managed_args ma = a.ma;
    runner_options o = a.o;
    bench_load_cli *lcp = &a.lc;
    const char *suite_name = a.suite_name, *output = a.output;
    bool publish = a.publish, managed = !o.server_url;

    suite s;
    char err[512];
    if (suite_load(suite_name, &s, err, sizeof err)) { cli_error("%s", err); return 1; }
    cli_publish pub = {0};
    if (publish && cli_publish_before_run(&pub, a.upload_url, &s, o.backend, o.public_id, managed, a.yes)) {
        cli_publish_free(&pub);
        suite_free(&s);
        return 1;
    }
    cli_stop_signals(bench_on_signal);
    manifest m;
    memset(&m, 0, sizeof m);
    managed_run mr;
    memset(&mr, 0, sizeof mr);
    runner_result res = {0};
    char run_id[40], server_log[4400];
    int status = 1;
    runner_run_id(run_id);
    o.run_id = run_id;
    if (runlog_server_path(run_id, server_log, sizeof server_log) == PACER_OK) o.server_log = server_log;
    if (managed) {
        ma.run_id = run_id;
        ma.progress = bench_say;
        if ((status = bench_managed_start(&mr, &ma, &o))) goto out;
        status = 1;
    } else {
        manifest_fetch(o.server_url, &bench_cancel, &m);
        o.manifest = &m;
        if (!m.reachable && !bench_cancel) {
            /* nothing to measure: say so instead of saving a receipt of failed attempts */
            cli_error("cannot reach the server at %s: %s", o.server_url, m.reason);
            goto out;
        }
    }
    o.suite = &s;
    o.cancel_flag = &bench_cancel;
    if (isatty(STDERR_FILENO)) o.progress = bench_progress, lcp->lo.progress = bench_load_progress, lcp->lo.progress_ctx = lcp;

    bool self_invalid = false;
    char path[4400];
    if (runner_run(&o, &res, err, sizeof err)) { cli_error("%s", err); goto out; }
    if (o.progress) fputs("\r\033[K", stderr);
    managed_engine_stop(&mr, false); /* the engine stops before anything is saved */
    if (bench_signal == SIGTERM || bench_signal == SIGHUP) {
        status = 128 + bench_signal;
        fprintf(stderr, "pacer: stopped by signal %d; no receipt saved\n", (int)bench_signal);
        goto out;
    }
    if (bench_save_and_report(&s, s.builtin ? NULL : suite_name, &res, output, run_id, server_log, path, sizeof path,
                              &self_invalid))
        goto out;
    status = self_invalid ? 1 : res.exit_status;
    if (status == 130) fprintf(stderr, "pacer: cancelled; the receipt keeps the cancelled attempt\n");
    else if (publish && !self_invalid && cli_publish_after_run(&pub, path, res.receipt)) status = 1;
out:
    cli_publish_free(&pub);
    managed_free(&mr);
    json_decref(res.receipt);
    json_decref(res.drafts);
    manifest_free(&m);
    suite_free(&s);
    return status;
}
