/* cmd_serve.c - 'pacer serve MODEL': the embedded engine behind the OpenAI-compatible
 * server. Listens first (health 503 while loading), loads the model (and a drafter), prints
 * one ready line, and stops cleanly on SIGINT/SIGTERM. */
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/sha256.h"
#include "cli/cli.h"
#include "engine/draft.h"
#include "engine/backend.h"
#include "engine/kernels.h"
#include "launch/model.h"
#include "probe/probe.h"
#include "schema/hardware.h"
#include "server/serve.h"

static const char usage[] =
    "usage: pacer serve MODEL [--name NAME] [--host 127.0.0.1] [--port P] [--threads N] [--ctx N]\n"
    "                   [--no-prompt-cache] [--drafter GGUF] [--serial] [--draft-max N] [--parallel N]\n"
    "                   [--prefill-chunk N]\n"
    "drafting: n-gram lookup in the prompt and the output by default; --drafter GGUF drafts with\n"
    "a smaller checkpoint sharing the vocabulary (with --parallel 1 only); --serial turns drafting off\n"
    "--parallel N: up to N requests decode together, one batched pass per token, each in its own\n"
    "KV cache slot (default 1: one at a time); more wait in a queue of 4, then get 503\n"
    "--prefill-chunk N: with --parallel, a new request's prompt goes through the model N rows a\n"
    "pass beside the decoding requests (default 64), so it delays their next tokens by a chunk,\n"
    "not by its whole prefill\n"
    "MODEL: a GGUF file, a directory holding one, or a Hugging Face repo id (REPO[@REVISION]) in\n"
    "the local cache, as pacer bench takes it. The manifest attests the snapshot loaded;\n"
    "PACER_CHECKPOINT_REVISION stands in for a file outside the cache (naming another commit\n"
    "than the snapshot loaded, it attests none)\n";

static volatile sig_atomic_t stop_signal = 0;
static void on_signal(int sig) { stop_signal = sig; }

/* The commit of a Hugging Face cache snapshot path (.../models--org--name/snapshots/COMMIT/...). */
static void hf_revision(const char *path, char *out, size_t n) {
    out[0] = 0;
    const char *p = strstr(path, "/snapshots/");
    if (!p || !strstr(path, "models--")) return;
    p += strlen("/snapshots/");
    size_t len = strcspn(p, "/");
    if (len > 0 && len < n) { memcpy(out, p, len); out[len] = 0; }
}

/* The revision the manifest attests: the snapshot loaded (`snapshot`, "" when the file is in
 * none); $PACER_CHECKPOINT_REVISION stands in only outside a snapshot, and when it names
 * another commit than the snapshot loaded, nothing is attested. */
static void attested_revision(const char *snapshot, char *out, size_t n) {
    const char *env = getenv("PACER_CHECKPOINT_REVISION");
    snprintf(out, n, "%s", snapshot);
    if (!env || !*env) return;
    if (!snapshot[0]) {
        snprintf(out, n, "%s", env);
    } else if (strcmp(env, snapshot) != 0) {
        fprintf(stderr, "pacer: PACER_CHECKPOINT_REVISION=%s is not the snapshot loaded (%s): no revision attested\n",
                env, snapshot);
        out[0] = '\0';
    }
}

/* The manifest's hardware object (schema/hardware.h's builder over the probe's facts), as
 * JSON text (free() it), or NULL when the CPU or memory could not be read. GPUs are not
 * probed: the engine runs on the CPU, so none is in use. */
static char *manifest_hardware(const char *model) {
    probe_options po = {0};
    po.model_path = model;
    po.no_gpus = true;
    json_t *hw = NULL;
    char *text = NULL;
    if (probe_collect(&po, &hw)) return NULL;
    json_object_set_new(hw, "gpus", json_array());
    char why[128];
    json_t *m = hardware_copy_attested(hw, "probed", why, sizeof why);
    if (m && strcmp(json_string_value(json_object_get(m, "source")), "probed") == 0) text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    json_decref(hw);
    return text;
}

/* What cmd_serve reads from its command line, checked; model is a resolved GGUF path. */
typedef struct {
    const char *model, *name, *drafter;
    serve_options o;
    engine_params ep;
} serve_cli;

/* MODEL as pacer bench takes it: a GGUF file, a directory with one, or REPO[@REVISION] in
 * the Hugging Face cache (served under the repo's name, its snapshot attested). */
static int serve_resolve_model(serve_cli *a, char *snapshot, size_t snapshot_len) {
    char lm_err[1024];
    launch_model *lm = calloc(1, sizeof *lm);
    if (!lm) { cli_error("out of memory"); return 1; }
    if (launch_model_resolve(a->model, launch_adapter_find("builtin"), lm, lm_err, sizeof lm_err)) {
        cli_error("%s", lm_err);
        free(lm);
        return 1;
    }
    static char model_path[PATH_MAX + 260];
    if (!launch_model_file_path(lm, 0, model_path, sizeof model_path)) { cli_error("model path too long"); free(lm); return 1; }
    snprintf(snapshot, snapshot_len, "%s", lm->revision);
    if (!a->name && lm->repo[0]) {
        static char repo_name[256];
        snprintf(repo_name, sizeof repo_name, "%s", lm->repo);
        a->name = repo_name;
    }
    free(lm);
    a->model = model_path;
    return 0;
}

/* Parses and checks the options: -1 to go on, else the exit status (--help: 0). */
static int serve_parse(int argc, char **argv, serve_cli *a, char *snapshot, size_t snapshot_len) {
    serve_options_default(&a->o);
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'},          {"no-prompt-cache", no_argument, 0, 'C'},
        {"serial", no_argument, 0, 'S'},        {"name", required_argument, 0, 'n'},
        {"host", required_argument, 0, 'H'},    {"port", required_argument, 0, 'p'},
        {"threads", required_argument, 0, 't'}, {"ctx", required_argument, 0, 'c'},
        {"drafter", required_argument, 0, 'd'}, {"draft-max", required_argument, 0, 'm'},
        {"parallel", required_argument, 0, 'P'}, {"prefill-chunk", required_argument, 0, 'B'},
        {0, 0, 0, 0}};
    serve_options *o = &a->o;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'h': fputs(usage, stdout); return 0;
        case 'C': o->prompt_cache = false; break;
        case 'S': o->serial = true; break;
        case 'n': a->name = optarg; break;
        case 'H': o->host = optarg; break;
        case 'd': a->drafter = optarg; break;
        /* ranges are checked below, with their own words */
        case 'p': ok = parse_int(optarg, INT_MIN, INT_MAX, &o->port); break;
        case 't': ok = parse_int(optarg, 0, 1024, &a->ep.n_threads); break;
        case 'c': ok = parse_int(optarg, 0, 1 << 24, &a->ep.n_ctx); break;
        case 'm': ok = parse_int(optarg, INT_MIN, INT_MAX, &o->draft_max); break;
        case 'P': ok = parse_int(optarg, INT_MIN, INT_MAX, &o->parallel); break;
        case 'B': ok = parse_int(optarg, INT_MIN, INT_MAX, &o->prefill_chunk); break;
        default: cli_error("unknown option %s", argv[optind - 1]); fputs(usage, stderr); return 1;
        }
        if (!ok) { cli_error("bad value for %s: %s", argv[optind - 1] == optarg ? argv[optind - 2] : argv[optind - 1], optarg); return 1; }
    }
    if (optind < argc) a->model = argv[optind++];
    if (optind < argc) { cli_error("unexpected argument %s", argv[optind]); fputs(usage, stderr); return 1; }
    if (!a->model) { fputs(usage, stderr); return 1; }
    if (serve_resolve_model(a, snapshot, snapshot_len)) return 1;
    if (o->port < 0 || o->port > 65535) { cli_error("--port must be 0..65535"); return 1; }
    if (o->draft_max < 1 || o->draft_max > DRAFT_MAX) { cli_error("--draft-max must be 1..%d", DRAFT_MAX); return 1; }
    if (o->parallel < 1 || o->parallel > SERVE_PARALLEL_MAX) { cli_error("--parallel must be 1..%d", SERVE_PARALLEL_MAX); return 1; }
    if (o->prefill_chunk < 1 || o->prefill_chunk > SERVE_PREFILL_CHUNK_MAX) {
        cli_error("--prefill-chunk must be 1..%d", SERVE_PREFILL_CHUNK_MAX);
        return 1;
    }
    if (a->drafter && !o->serial && o->parallel > 1) {
        cli_error("--drafter works with --parallel 1 only (the drafter keeps one KV cache)");
        return 1;
    }
    a->ep.n_seq = o->parallel;
    if (a->drafter && o->serial) {
        fprintf(stderr, "pacer: --serial overrides --drafter %s: no drafting\n", a->drafter);
        a->drafter = NULL;
    }
    return -1;
}

int cmd_serve(int argc, char **argv) {
    serve_cli a = {.ep = {.n_threads = 0}};
    static char snapshot[128];
    int st = serve_parse(argc, argv, &a, snapshot, sizeof snapshot);
    if (st >= 0) return st;
    const char *model = a.model, *name = a.name, *drafter = a.drafter;
    serve_options o = a.o;
    engine_params ep = a.ep;
    /* SIGINT and SIGTERM stay blocked (every thread started from here inherits that) until
     * sigsuspend() waits for them: no signal can slip in between a check and the wait */
    sigset_t stop_set, wait_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_set, &wait_set);
    sigdelset(&wait_set, SIGINT);
    sigdelset(&wait_set, SIGTERM);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    char err[256] = "";
    serve_server *s = NULL;
    engine *e = NULL, *de = NULL;
    char *hardware = NULL;
    int status = 1;
    if (serve_start(&o, &s, err, sizeof err)) { cli_error("%s", err); return 1; }
    char sha[SHA256_HEX_LEN + 1] = "", rev[128];
    if (sha256_file_hex(model, sha)) { cli_error("cannot read %s", model); goto out; }
    if (engine_open(model, &ep, &e, err, sizeof err)) { cli_error("%s", err); goto out; }
    engine_backend b;
    if (backend_from_engine(e, &b)) { cli_error("%s: the checkpoint has no usable tokenizer: %s", model, engine_tokenizer_error(e)); goto out; }
    if (!snapshot[0]) hf_revision(model, snapshot, sizeof snapshot);
    attested_revision(snapshot, rev, sizeof rev);
    const char *slash = strrchr(model, '/');
    hardware = manifest_hardware(model);
    serve_model_info info = {.id = name ? name : (slash ? slash + 1 : model), .path = model, .sha256 = sha,
                             .revision = rev, .hardware_json = hardware, .chat = backend_chat_format(e)};
    engine_backend db;
    char dsha[SHA256_HEX_LEN + 1] = "";
    if (drafter) {
        if (sha256_file_hex(drafter, dsha)) { cli_error("cannot read %s", drafter); goto out; }
        engine_params dp = ep;
        dp.n_seq = 1;
        dp.pool = engine_get_pool(e); /* target and drafter never evaluate at once: one pool */
        if (engine_open(drafter, &dp, &de, err, sizeof err)) { cli_error("drafter: %s", err); goto out; }
        if (backend_check_drafter(e, de, err, sizeof err)) { cli_error("%s: %s", drafter, err); goto out; }
        backend_from_drafter(de, &db);
        info.drafter = &db;
        info.drafter_path = drafter;
        info.drafter_sha256 = dsha;
    }
    if (serve_set_model(s, &b, &info)) { cli_error("out of memory"); goto out; }
    char chunk[48] = "";
    if (o.parallel > 1) snprintf(chunk, sizeof chunk, ", prefill chunk %d", o.prefill_chunk);
    printf("pacer serve: ready on http://%s:%d (model %s, chat format %s, context %d, drafting %s, parallel %d%s, kernels %s)\n",
           o.host, serve_port(s), info.id, info.chat->name, b.n_ctx, o.serial ? "off" : drafter ? "drafter" : "lookup",
           o.parallel, chunk, kern_level_name(kern_get_level()));
    fflush(stdout);
    while (!stop_signal) sigsuspend(&wait_set);
    status = 0;
out:
    serve_stop(s);
    engine_close(de);
    engine_close(e);
    free(hardware);
    return status;
}
