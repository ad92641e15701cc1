/* cmd_lab.c - 'pacer lab run': fresh-process lab suites for engine authors. Parses the
 * options, prints progress on stderr and the plan or the summary on stdout; the run itself
 * is lab_run() (src/lab/run.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/parse.h"
#include "cli/cli.h"
#include "cli/demo.h"
#include "bench/managed.h"
#include "lab/archive.h"
#include "lab/prefill.h"
#include "lab/provenance.h"
#include "lab/reports.h"
#include "lab/results.h"
#include "lab/run.h"

static const char lab_usage[] =
    "usage: pacer lab run [MODEL] [--engine builtin|llama.cpp] [--binary PATH] [--root DIR]\n"
    "                     [--configs LIST] [--cases LIST] [--rounds N] [--mode light|heavy]\n"
    "                     [--output DIR] [--resume] [--case-cap CASE=N ...] [--note TEXT]\n"
    "                     [--build-stores] [--archive] [--dry-run] [--suite FILE] [--update-readme]\n"
    "  Runs a lab suite (default lab-v1): every sample is a fresh engine process, one request\n"
    "  answered to EOS under a safety cap, then stopped. Capped, cycling, content-invalid and\n"
    "  invalidated samples are kept and listed but never enter a median.\n"
    "  MODEL       a GGUF file, a directory, or REPO[@REV] in the Hugging Face cache (--root DIR\n"
    "              for another cache root); none: the demo model. The configurations' weight\n"
    "              types name stores beside it: <stem>-<type>.gguf.\n"
    "  --binary    the engine executable (default: pacer itself for builtin, llama-server)\n"
    "  --configs, --cases   comma lists of the suite's configurations and workloads\n"
    "  --rounds N  rounds of the round workloads; configurations rotate between rounds\n"
    "  --mode      light: one round of code, prose and long-prefill on the configurations\n"
    "              already on disk, then archive; heavy: the whole suite, then archive.\n"
    "              Explicit --configs/--cases/--rounds override the preset.\n"
    "  --output    the results directory (default results/<UTC>/, with a .gitignore)\n"
    "  --resume    continue the run in --output DIR: same binary, model, suite, selections;\n"
    "              re-runs samples that failed, were invalidated, or were killed mid-sample\n"
    "  --case-cap CASE=N   change a workload's cap; on --resume a raised cap re-runs that\n"
    "              workload's capped answers (caps may only rise)\n"
    "  --build-stores      build missing stores with `pacer model quantize` before the run\n"
    "  --archive   zip the finished directory beside itself (DIR.zip); both modes imply it\n"
    "  --dry-run   print the sample plan (and the configurations found) and run nothing\n"
    "  --suite     a custom lab suite file (prompts, caps, configurations, context)\n"
    "  --note      a note kept verbatim in the run\n"
    "  --update-readme     write README.md after a completed run (`pacer lab readme DIR`)\n"
    "exit: 0 complete, 1 error, 2 the suite stopped (engine error, memory or power: --resume\n"
    "retries), 130 / 143 / 129 on SIGINT / SIGTERM / SIGHUP (--resume continues)\n"
    "environment: PACER_LAB_SYS_ROOT reads the power source and memory size below that\n"
    "directory instead of / (tests)\n";

static volatile sig_atomic_t lab_cancel;
static bool lab_update_readme; /* --update-readme: README.md after a completed run */

static void lab_on_signal(int sig) {
    if (lab_cancel && sig == SIGINT) { /* a second Ctrl-C: the engine goes at once */
        managed_kill_now();
        _exit(130);
    }
    lab_cancel = sig;
}


static bool parse_case_cap(const char *arg, lab_run_options *o) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= LAB_NAME_MAX || o->n_caps >= LAB_MAX_WORKLOADS) return false;
    lab_cap_override *c = &o->caps[o->n_caps];
    memcpy(c->workload, arg, (size_t)(eq - arg));
    c->workload[eq - arg] = '\0';
    if (!parse_int(eq + 1, 1, LAB_CAP_MAX, &c->cap)) return false;
    o->n_caps++;
    return true;
}

static double gb(uint64_t b) { return (double)b / 1e9; }

static void on_event(void *ctx, const lab_event *ev) {
    (void)ctx;
    switch (ev->kind) {
    case LAB_EVENT_STORE_PLAN:
        fprintf(stderr, "pacer: building store %s for %s: needs %.2f GB on disk, %.2f GB free there\n", ev->text, ev->id,
                gb(ev->bytes), gb(ev->bytes2));
        break;
    case LAB_EVENT_STORE_BUILT: fprintf(stderr, "pacer: built %s\n", ev->text); break;
    case LAB_EVENT_PROBED: fprintf(stderr, "pacer: %s\n", ev->text); break;
    case LAB_EVENT_HASHING:
        if (ev->bytes > (1ull << 30)) fprintf(stderr, "pacer: hashing %s (%.1f GB)\n", ev->text, gb(ev->bytes));
        break;
    case LAB_EVENT_RESUME: fprintf(stderr, "pacer: %s\n", ev->text); break;
    case LAB_EVENT_SAMPLE_START: fprintf(stderr, "pacer: [%zu/%zu] %s ...\n", ev->index + 1, ev->total, ev->id); break;
    case LAB_EVENT_SAMPLE_SKIP: fprintf(stderr, "pacer: [%zu/%zu] %s kept from before\n", ev->index + 1, ev->total, ev->id); break;
    case LAB_EVENT_SAMPLE_DONE: {
        const lab_record *r = ev->rec;
        fprintf(stderr, "pacer: [%zu/%zu] %s: %s", ev->index + 1, ev->total, ev->id, lab_finish_name(r->finish));
        if (r->has_usage) fprintf(stderr, ", %lld tokens", (long long)r->decode_tokens);
        if (r->has_decode_tok_s) fprintf(stderr, ", %.1f tok/s", r->decode_tok_s);
        fprintf(stderr, ", %.1f s", (double)r->completion_ns / 1e9);
        if (r->validity != LAB_VALID) fprintf(stderr, ", %s (%s)", lab_validity_name(r->validity), r->validity_reason);
        if (r->error[0]) fprintf(stderr, ": %s (engine log: %s)", r->error, ev->text);
        fputc('\n', stderr);
        break;
    }
    case LAB_EVENT_ARCHIVED: fprintf(stderr, "pacer: archived %zu files into %s\n", ev->index, ev->text); break;
    }
}

static void print_plan(const lab_run_result *r) {
    const lab_suite *s = &r->suite;
    printf("suite %s (%s), digest %s\n", s->id, s->builtin ? "built-in" : "custom", s->digest);
    printf("model %s (%s)\n", r->model.source_name, r->model.source_type);
    printf("configurations:\n");
    for (int i = 0; i < s->n_configs; i++) {
        bool sel = false;
        for (int k = 0; k < r->sel.n_configs; k++) sel |= r->sel.configs[k] == i;
        printf("  %-16s %-40s %s%s\n", s->configs[i].name, r->stores[i].file_name, r->stores[i].exists ? "on disk" : "missing",
               sel ? "" : " (not selected)");
    }
    printf("plan: %zu samples, %d round%s\n", r->plan.n, r->sel.rounds, r->sel.rounds == 1 ? "" : "s");
    for (size_t i = 0; i < r->plan.n; i++) {
        const lab_slot *sl = &r->plan.slots[i];
        printf("  %3zu  %-40s cap %d\n", i + 1, sl->id, r->caps[sl->workload]);
    }
}

/* The median of metric `m` in a report cell, or -1. */
static double cell_median(const json_t *cell, const char *m) {
    const json_t *v = json_object_get(json_object_get(json_object_get(cell, "metrics"), m), "median");
    return json_is_number(v) ? json_number_value(v) : -1;
}

static void print_summary(const lab_run_result *r) {
    if (!r->report) return;
    printf("%-16s %-14s %5s %5s %10s %10s %10s %8s\n", "workload", "config", "used", "excl", "prefill/s", "decode/s",
           "complete s", "tokens");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r->report, "cells"), i, c) {
        int excl = 0;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(c, "excluded"), k, v) excl += (int)json_integer_value(v);
        size_t used = json_array_size(json_object_get(c, "in_median"));
        if (!used && !excl) continue;
        printf("%-16s %-14s %5zu %5d", json_string_value(json_object_get(c, "workload")),
               json_string_value(json_object_get(c, "config")), used, excl);
        const char *ms[] = {"prefill_tok_s", "decode_tok_s", "completion_s", "answer_tokens"};
        for (int m = 0; m < 4; m++) {
            double x = cell_median(c, ms[m]);
            if (x < 0) printf(" %*s", m == 3 ? 8 : 10, "-");
            else printf(m == 3 ? " %8.0f" : " %10.2f", x);
        }
        printf("\n");
    }
    /* every sample, medians or not: a capped answer's figures are shown, never averaged */
    printf("\n%-28s %-8s %7s %7s %10s %10s %10s\n", "sample", "finish", "prompt", "tokens", "prefill/s", "decode/s",
           "complete s");
    json_array_foreach(json_object_get(r->report, "samples"), i, c) {
        const json_t *pf = json_object_get(c, "prefill_tok_s"), *dc = json_object_get(c, "decode_tok_s");
        printf("%-28s %-8s %7lld %7lld", json_string_value(json_object_get(c, "id")), json_string_value(json_object_get(c, "finish")),
               (long long)json_integer_value(json_object_get(c, "prefill_tokens")),
               (long long)json_integer_value(json_object_get(c, "decode_tokens")));
        if (json_is_number(pf)) printf(" %10.2f", json_number_value(pf)); else printf(" %10s", "-");
        if (json_is_number(dc)) printf(" %10.2f", json_number_value(dc)); else printf(" %10s", "-");
        printf(" %10.2f%s\n", (double)json_integer_value(json_object_get(c, "completion_ns")) / 1e9,
               strcmp(json_string_value(json_object_get(c, "validity")), "valid") ? " (not valid)" : "");
    }
    json_array_foreach(json_object_get(r->report, "svg"), i, c)
        printf("svg %-14s %lld of %lld valid\n", json_string_value(json_object_get(c, "config")),
               (long long)json_integer_value(json_object_get(c, "valid")), (long long)json_integer_value(json_object_get(c, "checked")));
}

/* The command line, as given (before getopt reorders it), with this machine's paths
 * replaced (provenance): `paths` name the options whose value is a path (a --suite that
 * names a built-in suite by its id is no path), `valued` every option with a value.
 * argv[0] is the subcommand. */
static json_t *command_of(int argc, char **argv, const lab_placeholder *paths, const char *const *valued, const char *positional) {
    char **full = calloc((size_t)argc + 2, sizeof *full);
    lab_placeholder flags[8];
    if (!full) return json_array();
    full[0] = "pacer";
    full[1] = "lab";
    const char *suite_arg = NULL;
    for (int i = 0; i < argc; i++) {
        full[i + 2] = argv[i];
        if (!strcmp(argv[i], "--suite") && i + 1 < argc) suite_arg = argv[i + 1];
        else if (!strncmp(argv[i], "--suite=", 8)) suite_arg = argv[i] + 8;
    }
    bool builtin = suite_arg && (!strcmp(suite_arg, LAB_BUILTIN_ID) || !strcmp(suite_arg, LAB_PREFILL_ID));
    int n = 0;
    for (const lab_placeholder *p = paths; p->flag && n < 7; p++)
        if (!builtin || strcmp(p->flag, "--suite")) flags[n++] = *p;
    flags[n] = (lab_placeholder){NULL, NULL};
    json_t *cmd = lab_provenance_command(argc + 2, full, 2, flags, valued, positional);
    free(full);
    return cmd;
}

static json_t *run_command_of(int argc, char **argv) {
    static const lab_placeholder paths[] = {{"--binary", "<binary>"}, {"--root", "<root>"}, {"--output", "<results>"},
                                            {"--suite", "<suite>"}, {NULL, NULL}};
    static const char *const valued[] = {"--engine", "--configs", "--cases", "--rounds", "--mode", "--case-cap", "--note",
                                         "--suite", NULL};
    return command_of(argc, argv, paths, valued, "<model>");
}

/* Parses the options into `o`; returns -1 to go on, or the exit status. */
static int parse_run(int argc, char **argv, lab_run_options *o, const char **root) {
    static const struct option opts[] = {
        {"engine", required_argument, 0, 'E'},  {"binary", required_argument, 0, 'B'},  {"root", required_argument, 0, 'R'},
        {"configs", required_argument, 0, 'C'}, {"cases", required_argument, 0, 'W'},   {"rounds", required_argument, 0, 'N'},
        {"mode", required_argument, 0, 'M'},    {"output", required_argument, 0, 'o'},  {"resume", no_argument, 0, 'r'},
        {"case-cap", required_argument, 0, 'c'}, {"note", required_argument, 0, 'n'},   {"build-stores", no_argument, 0, 'b'},
        {"archive", no_argument, 0, 'a'},       {"dry-run", no_argument, 0, 'd'},       {"suite", required_argument, 0, 'S'},
        {"update-readme", no_argument, 0, 'U'}, {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'E': o->engine = optarg; break;
        case 'B': o->binary = optarg; break;
        case 'R': *root = optarg; break;
        case 'C': o->configs = optarg; break;
        case 'W': o->cases = optarg; break;
        case 'N': if (!parse_int(optarg, 1, 1000, &o->rounds)) { cli_error("--rounds: expected 1..1000"); return 1; } break;
        case 'M':
            if (strcmp(optarg, "light") && strcmp(optarg, "heavy")) { cli_error("--mode: light or heavy"); return 1; }
            o->mode = optarg;
            break;
        case 'o': o->output = optarg; break;
        case 'r': o->resume = true; break;
        case 'c': if (!parse_case_cap(optarg, o)) { cli_error("--case-cap: expected CASE=N with N in 1..%d", LAB_CAP_MAX); return 1; } break;
        case 'n': o->note = optarg; break;
        case 'b': o->build_stores = true; break;
        case 'a': o->archive = true; break;
        case 'd': o->dry_run = true; break;
        case 'U': lab_update_readme = true; break;
        case 'S': o->suite = optarg; break;
        case 'h': fputs(lab_usage, stdout); return 0;
        default: fputs(lab_usage, stderr); return 1;
        }
    }
    if (optind < argc) o->model_spec = argv[optind++];
    if (optind < argc) { cli_error("lab run: unexpected argument '%s'", argv[optind]); return 1; }
    if (o->resume && !o->output) { cli_error("lab run: --resume needs --output DIR, the run to continue"); return 1; }
    return -1;
}

/* After a run that left a directory: summary.md, plots and gallery (README.md with
 * --update-readme on a complete run), then the archive again so that it holds them. */
static void write_reports(const lab_run_options *o, lab_outcome out, lab_run_result *res) {
    if (out != LAB_OUTCOME_COMPLETE && out != LAB_OUTCOME_STOPPED && out != LAB_OUTCOME_CANCELLED) return;
    char rerr[1024] = "";
    if (lab_reports_write(o->output, NULL, rerr, sizeof rerr)) cli_error("lab run: the reports: %s", rerr);
    else if (out == LAB_OUTCOME_COMPLETE && lab_update_readme && lab_reports_write_readme(o->output, rerr, sizeof rerr))
        cli_error("lab run: README.md: %s", rerr);
    size_t files = 0, n = strlen(o->output); /* the archive was made before the reports: again, with them */
    char adir[PATH_MAX];
    while (n > 1 && o->output[n - 1] == '/') n--;
    snprintf(adir, sizeof adir, "%.*s", (int)n, o->output);
    if (res->zip[0] && lab_archive_write(adir, res->zip, &files, rerr, sizeof rerr)) {
        cli_error("lab run: the archive: %s", rerr);
        res->zip[0] = '\0';
    }
}

/* The engine logs' directory for the results directory `output` and the stores' home, both
 * under ~/.pacer/lab (never recorded), the test root of the power and memory facts, and the
 * stop signals installed; false (said) without a usable home. */
static bool local_setup(const char *output, char logs[PATH_MAX], char stores[PATH_MAX], const char **sys_root) {
    const char *home = path_home();
    const char *base = strrchr(output, '/') && strrchr(output, '/')[1] ? strrchr(output, '/') + 1 : output;
    if (!home || snprintf(logs, PATH_MAX, "%s/.pacer/lab/logs/%s", home, base) >= PATH_MAX ||
        snprintf(stores, PATH_MAX, "%s/.pacer/lab/stores", home) >= PATH_MAX) {
        cli_error("no usable home directory: set HOME");
        return false;
    }
    *sys_root = getenv("PACER_LAB_SYS_ROOT");
    cli_stop_signals(lab_on_signal);
    return true;
}

/* Fills the paths of this machine the run needs (never recorded), runs, prints. */
static int run_parsed(lab_run_options *o, const char *root) {
    char demo[PATH_MAX], err[1024], dir[PATH_MAX], self[PATH_MAX], logs[PATH_MAX], stores[PATH_MAX];
    if (root && setenv("HF_HUB_CACHE", root, 1)) { cli_error("cannot set the cache root"); return 1; }
    if (!o->model_spec) {
        if (demo_model_ensure(demo, sizeof demo, err, sizeof err)) { cli_error("%s", err); return 1; }
        o->model_spec = demo;
    }
    if (!o->output) {
        lab_default_dir(dir, sizeof dir);
        o->output = dir;
        if (!o->dry_run && lab_results_ignore_dir("results")) { cli_error("cannot write results/.gitignore"); return 1; }
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    if (!local_setup(o->output, logs, stores, &o->sys_root)) return 1;
    o->self_path = self;
    o->log_dir = logs;
    o->store_home = stores;
    lab_run_result res;
    lab_outcome out = lab_run(o, &res, err, sizeof err);
    int status = 1;
    write_reports(o, out, &res);
    switch (out) {
    case LAB_OUTCOME_PLANNED: print_plan(&res); status = 0; break;
    case LAB_OUTCOME_COMPLETE:
        print_summary(&res);
        fprintf(stderr, "pacer: complete: %s%s%s\n", o->output, res.zip[0] ? ", " : "", res.zip);
        status = 0;
        break;
    case LAB_OUTCOME_STOPPED:
        print_summary(&res);
        cli_error("the suite stopped: %s; --resume --output %s retries it", res.stop_reason, o->output);
        status = 2;
        break;
    case LAB_OUTCOME_CANCELLED:
        fprintf(stderr, "pacer: %s; --resume --output %s continues\n", res.stop_reason, o->output);
        status = 128 + (int)lab_cancel; /* 130 SIGINT, 143 SIGTERM, 129 SIGHUP */
        break;
    case LAB_OUTCOME_ERROR: cli_error("lab run: %s", err); break;
    }
    lab_run_result_free(&res);
    return status;
}

static int lab_cmd_run(int argc, char **argv) {
    json_t *command = run_command_of(argc, argv); /* before getopt reorders argv */
    lab_run_options o = {.client_version = PACER_VERSION, .cancel = &lab_cancel, .on_event = on_event, .command = command};
    const char *root = NULL;
    int status = parse_run(argc, argv, &o, &root);
    if (status < 0) status = run_parsed(&o, root);
    json_decref(command);
    return status;
}

static const char summarize_usage[] =
    "usage: pacer lab summarize DIR\n"
    "  Regenerates a lab run's report.json (byte for byte), summary.md, plots/ and\n"
    "  gallery/index.html from its saved samples, without inference; README.md is kept.\n"
    "  A directory whose samples fail their own checks (answer hash, id, signature) is\n"
    "  refused and nothing is written.\n";

static const char readme_usage[] =
    "usage: pacer lab readme DIR\n"
    "  Writes DIR/README.md for a lab run: what was run, where, the headline table (decode\n"
    "  tok/s), the notes, and how to reproduce it. A directory whose samples fail their own\n"
    "  checks is refused. `pacer lab run --update-readme` does this after a completed run.\n";

/* `pacer lab summarize DIR` and `pacer lab readme DIR`. */
static int lab_cmd_dir(int argc, char **argv, bool readme) {
    const char *usage = readme ? readme_usage : summarize_usage;
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) { fputs(usage, stdout); return 0; }
    if (argc != 2 || argv[1][0] == '-') { fputs(usage, stderr); return 1; }
    char err[1024] = "";
    if (readme ? lab_reports_write_readme(argv[1], err, sizeof err) : lab_reports_write(argv[1], NULL, err, sizeof err)) {
        cli_error("lab %s: %s", argv[0], err);
        return 1;
    }
    fprintf(stderr, "pacer: wrote %s in %s\n", readme ? "README.md" : "report.json, summary.md, plots/ and gallery/index.html",
            argv[1]);
    return 0;
}

static const char prefill_usage[] =
    "usage: pacer lab prefill --before BIN_A --after BIN_B --model MODEL [--configs LIST] [--out DIR]\n"
    "                         [--rounds N] [--engine builtin|llama.cpp] [--suite FILE]\n"
    "  Compares two builds of one engine (two pacer binaries, or two llama-server builds) on\n"
    "  prefill: the three prompt lengths of the suite lab-prefill-v1 (short, medium, long), each\n"
    "  configuration, every round a pair per length: odd rounds run the before build first, even\n"
    "  rounds the after build. Each sample is a fresh engine process answering with 8 greedy\n"
    "  tokens (a check of the hand-off to decode, no decode measurement). Per length the report\n"
    "  gives the paired ratio after/before of prefill tok/s (median of the per-round ratios,\n"
    "  least-greatest round), client (TTFT-based) and server-reported, and whether the greedy\n"
    "  tokens differ; it keeps both builds' sha256 and commits, the source diff when a git\n"
    "  checkout holds both commits, the prompts, outputs and power readings. A store changed\n"
    "  during a sample invalidates it and ends the run.\n"
    "  --before, --after  the engine executables (a path, or a name on PATH)\n"
    "  --model     a GGUF file, a directory, or REPO[@REV] in the Hugging Face cache\n"
    "  --configs   comma list of the suite's configurations (default: given, the model as it is;\n"
    "              f16, q8_0, q4_0 run the stores <stem>-<type>.gguf beside it)\n"
    "  --rounds N  pairs per length and configuration (default 3)\n"
    "  --out DIR   the results directory (default results/<UTC>-prefill/): report.json,\n"
    "              summary.md, source.diff; rewritten after every sample\n"
    "  --engine    the adapter both builds are started with (default builtin)\n"
    "  --suite     a lab suite file with other prompt lengths (its workloads are the lengths)\n"
    "exit: 0 complete, 1 error, 2 stopped (engine error, power, memory, a store changed),\n"
    "130 / 143 / 129 on SIGINT / SIGTERM / SIGHUP (what was measured is kept)\n";

static void prefill_on_event(void *ctx, const lab_event *ev) {
    (void)ctx;
    if (ev->kind == LAB_EVENT_HASHING && ev->bytes > (1ull << 30)) fprintf(stderr, "pacer: hashing %s (%.1f GB)\n", ev->text, gb(ev->bytes));
    if (ev->kind == LAB_EVENT_SAMPLE_START) fprintf(stderr, "pacer: [%zu/%zu] %s ...\n", ev->index + 1, ev->total, ev->id);
    if (ev->kind != LAB_EVENT_SAMPLE_DONE) return;
    const lab_record *r = ev->rec;
    fprintf(stderr, "pacer: [%zu/%zu] %s: %s", ev->index + 1, ev->total, ev->id, lab_finish_name(r->finish));
    if (r->has_usage) fprintf(stderr, ", %lld prompt tokens", (long long)r->prefill_tokens);
    if (r->has_prefill_tok_s) fprintf(stderr, ", prefill %.1f tok/s", r->prefill_tok_s);
    if (r->has_server_prefill_tok_s) fprintf(stderr, " (server %.1f)", r->server_prefill_tok_s);
    if (r->validity != LAB_VALID) fprintf(stderr, ", %s (%s)", lab_validity_name(r->validity), r->validity_reason);
    if (r->error[0]) fprintf(stderr, ": %s (engine log: %s)", r->error, ev->text);
    fputc('\n', stderr);
}

/* The ratio table on stdout. */
static void prefill_print(const json_t *report) {
    printf("%-12s %-12s %8s %12s %12s %24s %8s\n", "length", "config", "tokens", "before tok/s", "after tok/s", "ratio after/before",
           "greedy");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(report, "lengths"), i, e) {
        const json_t *r = json_object_get(e, "ratio"), *b = json_object_get(e, "before_tok_s"), *a = json_object_get(e, "after_tok_s");
        const json_t *out = json_object_get(e, "outputs"), *t = json_object_get(json_object_get(e, "prompt_tokens"), "before");
        char ratio[64] = "-", tokens[24] = "-", before[24] = "-", after[24] = "-";
        if (json_is_object(r))
            snprintf(ratio, sizeof ratio, "%.3f (%.3f-%.3f) n=%lld", json_number_value(json_object_get(r, "median")),
                     json_number_value(json_object_get(r, "min")), json_number_value(json_object_get(r, "max")),
                     (long long)json_integer_value(json_object_get(r, "n")));
        if (json_is_integer(t)) snprintf(tokens, sizeof tokens, "%lld", (long long)json_integer_value(t));
        if (json_is_object(b)) snprintf(before, sizeof before, "%.1f", json_number_value(json_object_get(b, "median")));
        if (json_is_object(a)) snprintf(after, sizeof after, "%.1f", json_number_value(json_object_get(a, "median")));
        printf("%-12s %-12s %8s %12s %12s %24s %8s\n", json_string_value(json_object_get(e, "length")),
               json_string_value(json_object_get(e, "config")), tokens, before, after, ratio,
               !json_integer_value(json_object_get(out, "compared")) ? "-" : json_array_size(json_object_get(out, "differ_rounds")) ? "differ" : "same");
    }
}

/* The local paths, the run, the table; the exit status. */
static int prefill_parsed(lab_prefill_options *o) {
    char dir[PATH_MAX], logs[PATH_MAX], stores[PATH_MAX], err[1024] = "";
    if (!o->output) {
        lab_default_dir(dir, sizeof dir - 8);
        strcat(dir, "-prefill");
        o->output = dir;
        o->ignore_dir = "results";
    }
    if (!local_setup(o->output, logs, stores, &o->sys_root)) return 1;
    o->log_dir = logs;
    o->store_home = stores;
    lab_prefill_result res;
    lab_outcome out = lab_prefill_run(o, &res, err, sizeof err);
    int status = 1;
    switch (out) {
    case LAB_OUTCOME_COMPLETE:
        prefill_print(res.report);
        fprintf(stderr, "pacer: complete: %s (report.json, summary.md)\n", o->output);
        status = 0;
        break;
    case LAB_OUTCOME_STOPPED:
        prefill_print(res.report);
        cli_error("lab prefill stopped: %s; what was measured is in %s", res.stop_reason, o->output);
        status = 2;
        break;
    case LAB_OUTCOME_CANCELLED:
        fprintf(stderr, "pacer: %s; what was measured is in %s\n", res.stop_reason, o->output);
        status = 128 + (int)lab_cancel; /* 130 SIGINT, 143 SIGTERM, 129 SIGHUP */
        break;
    default:
        cli_error("lab prefill: %s", err);
        if (res.report) fprintf(stderr, "pacer: what was measured is in %s\n", o->output);
        break;
    }
    lab_prefill_result_free(&res);
    return status;
}

static int lab_cmd_prefill(int argc, char **argv) {
    static const lab_placeholder paths[] = {{"--before", "<binary>"}, {"--after", "<binary>"}, {"--model", "<model>"},
                                            {"--out", "<results>"}, {"--suite", "<suite>"}, {NULL, NULL}};
    static const char *const valued[] = {"--configs", "--rounds", "--engine", NULL};
    static const struct option opts[] = {{"before", required_argument, 0, 'b'}, {"after", required_argument, 0, 'a'},
                                         {"model", required_argument, 0, 'm'},  {"configs", required_argument, 0, 'C'},
                                         {"out", required_argument, 0, 'o'},    {"rounds", required_argument, 0, 'N'},
                                         {"engine", required_argument, 0, 'E'}, {"suite", required_argument, 0, 'S'},
                                         {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    json_t *command = command_of(argc, argv, paths, valued, "<argument>"); /* before getopt reorders argv */
    lab_prefill_options o = {.client_version = PACER_VERSION, .cancel = &lab_cancel, .on_event = prefill_on_event, .command = command};
    int c, status = -1;
    optind = 1;
    while (status < 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'b': o.before = optarg; break;
        case 'a': o.after = optarg; break;
        case 'm': o.model_spec = optarg; break;
        case 'C': o.configs = optarg; break;
        case 'o': o.output = optarg; break;
        case 'N': if (!parse_int(optarg, 1, 1000, &o.rounds)) cli_error("--rounds: expected 1..1000, not '%s'", optarg), status = 1; break;
        case 'E': o.engine = optarg; break;
        case 'S': o.suite = optarg; break;
        case 'h': fputs(prefill_usage, stdout); status = 0; break;
        default: fputs(prefill_usage, stderr); status = 1; break;
        }
    }
    if (status < 0 && optind < argc) cli_error("lab prefill: unexpected argument '%s'", argv[optind]), status = 1;
    for (int k = 0; status < 0 && k < 3; k++) {
        const char *v[] = {o.before, o.after, o.model_spec}, *n[] = {"--before BIN", "--after BIN", "--model MODEL"};
        if (!v[k]) cli_error("lab prefill: %s is required (see --help)", n[k]), status = 1;
    }
    if (status < 0) status = prefill_parsed(&o);
    json_decref(command);
    return status;
}

int cmd_lab(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "run") == 0) return lab_cmd_run(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "prefill") == 0) return lab_cmd_prefill(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "summarize") == 0) return lab_cmd_dir(argc - 1, argv + 1, false);
    if (argc >= 2 && strcmp(argv[1], "readme") == 0) return lab_cmd_dir(argc - 1, argv + 1, true);
    bool help = argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
    if (argc >= 2 && !help) cli_error("lab: unknown subcommand '%s'", argv[1]);
    fputs("usage: pacer lab SUBCOMMAND [ARGS]\n  run        fresh-process lab suites (see 'pacer lab run --help')\n"
          "  summarize  regenerate a run's reports, plots and gallery from its samples\n"
          "  readme     write a run's README.md (what, where, headline table, how to reproduce)\n"
          "  prefill    compare two builds of an engine on prefill, paired and alternating (see 'pacer lab prefill --help')\n",
          help ? stdout : stderr);
    return help ? 0 : 1;
}
