/* cmd_serve.c - 'pacer serve MODEL': the embedded engine behind the OpenAI-compatible
 * server. Listens first (health 503 while loading), loads the model (and a drafter), prints
 * one ready line, and stops cleanly on SIGINT/SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sha256.h"
#include "cli/cli.h"
#include "engine/draft.h"
#include "engine/backend.h"
#include "engine/kernels.h"
#include "launch/model.h"
#include "probe/probe.h"
#include "server/serve.h"

static const char usage[] =
    "usage: pacer serve MODEL [--name NAME] [--host 127.0.0.1] [--port P] [--threads N] [--ctx N]\n"
    "                   [--no-prompt-cache] [--drafter GGUF] [--serial] [--draft-max N]\n"
    "drafting: n-gram lookup in the prompt and the output by default; --drafter GGUF drafts with\n"
    "a smaller checkpoint sharing the vocabulary; --serial turns drafting off\n"
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

/* The manifest's hardware object (docs/manifest.md) from the probes, as JSON text (free()
 * it), or NULL when the CPU or memory could not be read. GPUs are not probed: the engine
 * runs on the CPU. */
static char *manifest_hardware(const char *model) {
    probe_options po = {0};
    po.model_path = model;
    po.no_gpus = true;
    json_t *hw = NULL;
    char *text = NULL;
    if (probe_collect(&po, &hw)) return NULL;
    json_t *cpu = json_object_get(hw, "cpu");
    const char *cpu_model = json_string_value(json_object_get(cpu, "model"));
    json_int_t cores = json_integer_value(json_object_get(cpu, "cores"));
    json_int_t mem = json_integer_value(json_object_get(json_object_get(hw, "memory"), "total_bytes"));
    if (cpu_model && cores >= 1 && mem >= 1) {
        json_t *m = json_pack("{s:{s:s,s:I},s:I,s:[],s:i}", "cpu", "model", cpu_model, "cores", cores, "memory_bytes",
                              mem, "gpus", "gpu_count", 0);
        text = m ? json_dumps(m, JSON_COMPACT) : NULL;
        json_decref(m);
    }
    json_decref(hw);
    return text;
}

int cmd_serve(int argc, char **argv) {
    const char *model = NULL, *name = NULL, *drafter = NULL;
    serve_options o;
    serve_options_default(&o);
    engine_params ep = {.n_threads = 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(usage, stdout); return 0; }
        else if (strcmp(a, "--no-prompt-cache") == 0) o.prompt_cache = false;
        else if (strcmp(a, "--serial") == 0) o.serial = true;
        else if (a[0] == '-' && a[1] == '-' && v) {
            i++;
            if (strcmp(a, "--name") == 0) name = v;
            else if (strcmp(a, "--host") == 0) o.host = v;
            else if (strcmp(a, "--port") == 0) o.port = atoi(v);
            else if (strcmp(a, "--threads") == 0) ep.n_threads = atoi(v);
            else if (strcmp(a, "--ctx") == 0) ep.n_ctx = atoi(v);
            else if (strcmp(a, "--drafter") == 0) drafter = v;
            else if (strcmp(a, "--draft-max") == 0) o.draft_max = atoi(v);
            else { cli_error("unknown option %s", a); fputs(usage, stderr); return 1; }
        } else if (a[0] != '-' && !model) model = a;
        else { cli_error("unexpected argument %s", a); fputs(usage, stderr); return 1; }
    }
    if (!model) { fputs(usage, stderr); return 1; }
    /* MODEL as pacer bench takes it: a GGUF file, a directory with one, or REPO[@REVISION]
     * in the Hugging Face cache (served under the repo's name, its snapshot attested) */
    char lm_err[1024];
    launch_model *lm = calloc(1, sizeof *lm);
    if (!lm) { cli_error("out of memory"); return 1; }
    if (launch_model_resolve(model, launch_adapter_find("builtin"), lm, lm_err, sizeof lm_err)) {
        cli_error("%s", lm_err);
        free(lm);
        return 1;
    }
    static char model_path[PATH_MAX + 260], snapshot[128];
    if (!launch_model_file_path(lm, 0, model_path, sizeof model_path)) { cli_error("model path too long"); free(lm); return 1; }
    snprintf(snapshot, sizeof snapshot, "%s", lm->revision);
    if (!name && lm->repo[0]) {
        static char repo_name[256];
        snprintf(repo_name, sizeof repo_name, "%s", lm->repo);
        name = repo_name;
    }
    free(lm);
    model = model_path;
    if (o.port < 0 || o.port > 65535) { cli_error("--port must be 0..65535"); return 1; }
    if (o.draft_max < 1 || o.draft_max > DRAFT_MAX) { cli_error("--draft-max must be 1..%d", DRAFT_MAX); return 1; }
    if (drafter && o.serial) {
        fprintf(stderr, "pacer: --serial overrides --drafter %s: no drafting\n", drafter);
        drafter = NULL;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
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
        dp.pool = engine_get_pool(e); /* target and drafter never evaluate at once: one pool */
        if (engine_open(drafter, &dp, &de, err, sizeof err)) { cli_error("drafter: %s", err); goto out; }
        if (backend_check_drafter(e, de, err, sizeof err)) { cli_error("%s: %s", drafter, err); goto out; }
        backend_from_drafter(de, &db);
        info.drafter = &db;
        info.drafter_path = drafter;
        info.drafter_sha256 = dsha;
    }
    if (serve_set_model(s, &b, &info)) { cli_error("out of memory"); goto out; }
    printf("pacer serve: ready on http://%s:%d (model %s, chat format %s, context %d, drafting %s, kernels %s)\n", o.host,
           serve_port(s), info.id, info.chat->name, b.n_ctx, o.serial ? "off" : drafter ? "drafter" : "lookup",
           kern_level_name(kern_get_level()));
    fflush(stdout);
    while (!stop_signal) pause();
    status = 0;
out:
    serve_stop(s);
    engine_close(de);
    engine_close(e);
    free(hardware);
    return status;
}
