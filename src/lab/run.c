/* run.c - the lab run's set-up: suite, resume state, presets and selections, caps, model
 * and stores, engine binary, provenance, signature, results directory. The samples
 * themselves run in run_loop.c. */
#include "lab/run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/sha256.h"
#include "engine/quantize.h"
#include "lab/provenance.h"
#include "lab/results.h"
#include "lab/run_internal.h"
#include "lab/signature.h"
#include "probe/probe.h"

void lab_default_dir(char *out, size_t n) {
    char utc[21];
    clock_utc_iso8601(utc);
    for (char *p = utc; *p; p++)
        if (*p == ':') *p = '-';
    snprintf(out, n, "results/%s", utc);
}

void lab_emit(lab_ctx *c, const lab_event *ev) {
    if (c->o->on_event) c->o->on_event(c->o->event_ctx, ev);
}

/* Joins the "name" strings of a JSON array (or the strings themselves) with commas. */
static bool join_names(const json_t *arr, char *out, size_t n) {
    size_t o = 0, i;
    json_t *v;
    out[0] = '\0';
    json_array_foreach(arr, i, v) {
        const char *s = json_string_value(v);
        if (!s || o + strlen(s) + 2 > n) return false;
        o += (size_t)snprintf(out + o, n - o, "%s%s", i ? "," : "", s);
    }
    return true;
}

/* On --resume: the run being continued (run.json), and its selections as defaults. */
static pacer_err load_resumed(lab_ctx *c) {
    pacer_err rc = lab_results_read_json(c->o->output, LAB_RUN_FILE, &c->was, c->err, c->err_len);
    if (rc) return rc;
    const char *fmt = json_string_value(json_object_get(c->was, "format"));
    const json_t *sig = json_object_get(c->was, "signature");
    const json_t *sel = json_object_get(sig, "selections");
    if (!fmt || strcmp(fmt, LAB_FORMAT) || json_integer_value(json_object_get(c->was, "format_version")) != LAB_FORMAT_VERSION ||
        !json_is_object(sel) || !join_names(json_object_get(sel, "configs"), c->was_configs, sizeof c->was_configs) ||
        !join_names(json_object_get(sel, "cases"), c->was_cases, sizeof c->was_cases)) {
        snprintf(c->err, c->err_len, "%s/%s is not a lab run this version of pacer can resume", c->o->output, LAB_RUN_FILE);
        return PACER_ERR_FORMAT;
    }
    c->was_rounds = (int)json_integer_value(json_object_get(sel, "rounds"));
    c->was_mode = json_string_value(json_object_get(sel, "mode"));
    return PACER_OK;
}

static pacer_err setup_suite(lab_ctx *c) {
    lab_run_result *r = c->res;
    pacer_err rc = lab_suite_load(c->o->suite ? c->o->suite : LAB_BUILTIN_ID, &r->suite, c->err, c->err_len);
    if (rc) return rc;
    const char *mode = c->o->mode ? c->o->mode : c->was_mode;
    if (c->o->mode && c->was_mode && strcmp(c->o->mode, c->was_mode)) {
        snprintf(c->err, c->err_len, "cannot resume: the run was started with --mode %s", c->was_mode);
        return PACER_ERR_STATE;
    }
    if (mode && !(c->preset = lab_suite_preset(&r->suite, mode))) {
        snprintf(c->err, c->err_len, "the suite %s has no mode '%s'", r->suite.id, mode);
        return PACER_ERR_ARG;
    }
    if (c->preset) r->preset_archive = c->preset->archive;
    return PACER_OK;
}

/* Effective caps: the suite's, then the run's (on resume), then --case-cap. */
static pacer_err setup_caps(lab_ctx *c) {
    lab_run_result *r = c->res;
    const json_t *was_caps = json_object_get(json_object_get(c->was, "signature"), "caps");
    for (int i = 0; i < r->suite.n_workloads; i++) {
        const json_t *v = json_object_get(was_caps, r->suite.workloads[i].name);
        r->caps[i] = json_is_integer(v) ? (int)json_integer_value(v) : r->suite.workloads[i].cap;
    }
    for (int k = 0; k < c->o->n_caps; k++) {
        int w = lab_suite_workload(&r->suite, c->o->caps[k].workload);
        if (w < 0) {
            snprintf(c->err, c->err_len, "--case-cap: the suite has no workload '%s'", c->o->caps[k].workload);
            return PACER_ERR_ARG;
        }
        r->caps[w] = c->o->caps[k].cap;
    }
    return PACER_OK;
}

static pacer_err setup_stores(lab_ctx *c) {
    lab_run_result *r = c->res;
    pacer_err rc = lab_model_resolve(c->o->model_spec, c->o->store_home, &r->model, c->err, c->err_len);
    for (int i = 0; !rc && i < r->suite.n_configs; i++) {
        rc = lab_store_find(&r->model, r->suite.configs[i].weights, &r->stores[i], c->err, c->err_len);
        if (rc == PACER_ERR_ARG) {
            char why[200];
            snprintf(why, sizeof why, "%s", c->err);
            snprintf(c->err, c->err_len, "configuration %s: %s", r->suite.configs[i].name, why);
        }
    }
    return rc;
}

/* Selections: explicit options, else the resumed run's, else the preset's, else all. */
static pacer_err setup_selection(lab_ctx *c) {
    lab_run_result *r = c->res;
    const lab_suite *s = &r->suite;
    char built[LAB_MAX_CONFIGS * LAB_NAME_MAX] = "", cases[LAB_MAX_WORKLOADS * LAB_NAME_MAX] = "";
    const char *configs = c->o->configs ? c->o->configs : c->was ? c->was_configs : NULL;
    const char *case_list = c->o->cases ? c->o->cases : c->was ? c->was_cases : NULL;
    int rounds = c->o->rounds > 0 ? c->o->rounds : c->was ? c->was_rounds : c->preset ? c->preset->rounds : 0;
    if (!configs && c->preset && c->preset->configs_built) {
        for (int i = 0; i < s->n_configs; i++)
            if (r->stores[i].exists)
                snprintf(built + strlen(built), sizeof built - strlen(built), "%s%s", built[0] ? "," : "", s->configs[i].name);
        if (!built[0]) {
            snprintf(c->err, c->err_len, "--mode %s runs the configurations already built, and none of %s's stores is on disk",
                     c->preset->name, r->model.source_name);
            return PACER_ERR_NOT_FOUND;
        }
        configs = built;
    }
    if (!case_list && c->preset && !c->preset->all_cases) {
        for (int i = 0; i < c->preset->n_cases; i++)
            snprintf(cases + strlen(cases), sizeof cases - strlen(cases), "%s%s", i ? "," : "",
                     s->workloads[c->preset->cases[i]].name);
        case_list = cases;
    }
    pacer_err rc = lab_selection_parse(s, configs, case_list, rounds, &r->sel, c->err, c->err_len);
    if (!rc) rc = lab_plan_build(s, &r->sel, &r->plan);
    return rc;
}

/* Builds the selected configurations' missing stores (--build-stores), or names them. */
static pacer_err setup_missing(lab_ctx *c) {
    lab_run_result *r = c->res;
    char missing[600] = "";
    for (int k = 0; k < r->sel.n_configs; k++) {
        lab_store *st = &r->stores[r->sel.configs[k]];
        if (!st->exists && strlen(missing) + strlen(st->file_name) + 40 < sizeof missing)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s (%s)", missing[0] ? ", " : "",
                     r->suite.configs[r->sel.configs[k]].name, st->file_name);
    }
    if (!missing[0]) return PACER_OK;
    if (!c->o->build_stores) {
        snprintf(c->err, c->err_len, "not on disk: %s; --build-stores builds them from %s", missing, r->model.source_name);
        return PACER_ERR_NOT_FOUND;
    }
    for (int k = 0; k < r->sel.n_configs; k++) {
        lab_store *st = &r->stores[r->sel.configs[k]];
        if (st->exists) continue;
        uint64_t need = 0, avail = 0;
        pacer_err rc = lab_store_plan(&r->model, st, &need, c->err, c->err_len);
        if (rc) return rc;
        quantize_volume_free(st->path, &avail);
        lab_event ev = {.kind = LAB_EVENT_STORE_PLAN, .id = r->suite.configs[r->sel.configs[k]].name, .text = st->file_name,
                        .bytes = need, .bytes2 = avail};
        lab_emit(c, &ev);
        if ((rc = lab_store_build(&r->model, st, c->err, c->err_len))) return rc;
        ev.kind = LAB_EVENT_STORE_BUILT;
        lab_emit(c, &ev);
    }
    return PACER_OK;
}

/* The engine executable: pacer itself for "{self}", else --binary or the adapter's default
 * found on PATH; hashed. */
static pacer_err setup_binary(lab_ctx *c) {
    const char *engine = c->o->engine ? c->o->engine : "builtin";
    if (!(c->adapter = launch_adapter_find(engine))) {
        snprintf(c->err, c->err_len, "unknown engine '%s' (builtin, llama.cpp, vllm, sglang, mlx)", engine);
        return PACER_ERR_ARG;
    }
    if (c->adapter->loads != LAUNCH_FORMAT_GGUF) {
        snprintf(c->err, c->err_len, "lab run measures GGUF stores; engine %s loads a checkpoint directory", engine);
        return PACER_ERR_UNSUPPORTED;
    }
    const char *bin = c->o->binary ? c->o->binary : c->adapter->default_bin;
    if (strcmp(bin, "{self}") == 0) bin = c->o->self_path;
    if (!lab_engine_find_binary(bin, c->bin_path, sizeof c->bin_path)) {
        snprintf(c->err, c->err_len, "the engine binary %s is not an executable file", bin);
        return PACER_ERR_NOT_FOUND;
    }
    lab_event ev = {.kind = LAB_EVENT_HASHING, .text = "the engine binary"};
    lab_emit(c, &ev);
    if (sha256_file_hex(c->bin_path, c->bin_sha)) {
        snprintf(c->err, c->err_len, "cannot read the engine binary");
        return PACER_ERR_IO;
    }
    return PACER_OK;
}

/* Hardware (with the uncached read sample of the source, before anything reads it, on a
 * first session only), the memory limit and the power watch; then the hashes. */
static pacer_err setup_facts(lab_ctx *c) {
    lab_run_result *r = c->res;
    probe_options po = {.model_path = r->model.source_path, .read_sample = !c->was, .sys_root = c->o->sys_root};
    if (probe_collect(&po, &c->hardware) || !c->hardware) {
        snprintf(c->err, c->err_len, "cannot collect the hardware facts: out of memory");
        return PACER_ERR_NOMEM;
    }
    const json_t *rs = json_object_get(json_object_get(c->hardware, "volume"), "read_sample");
    char words[600] = "";
    if (json_is_string(json_object_get(rs, "skipped")))
        snprintf(words, sizeof words, "read sample of %s skipped: %s", r->model.source_name,
                 json_string_value(json_object_get(rs, "skipped")));
    else if (json_is_object(rs))
        snprintf(words, sizeof words, "read sample of %s: %.2f GB/s uncached (%s)", r->model.source_name,
                 json_number_value(json_object_get(rs, "gb_per_s")), json_string_value(json_object_get(rs, "method")));
    if (words[0]) {
        lab_event ev = {.kind = LAB_EVENT_PROBED, .text = words};
        lab_emit(c, &ev);
    }
    json_t *mem = json_object_get(c->hardware, "memory_bytes");
    c->has_memory_limit = json_is_integer(mem) && json_integer_value(mem) > 0;
    c->memory_limit = json_integer_value(mem);
    power_watch_start(&c->power, c->o->sys_root);
    const char *was_power = json_string_value(json_object_get(json_object_get(c->was, "settings"), "power"));
    if (was_power && strcmp(was_power, probe_power_name(c->power.expected))) {
        snprintf(c->err, c->err_len, "cannot resume: the run was measured on power '%s' and the machine is on '%s' now",
                 was_power, probe_power_name(c->power.expected));
        return PACER_ERR_STATE;
    }
    /* every selected configuration prepared once: its store resolved and hashed */
    if (!(c->engines = calloc((size_t)r->suite.n_configs, sizeof *c->engines))) return PACER_ERR_NOMEM;
    lab_event ev = {.kind = LAB_EVENT_HASHING};
    for (int k = 0; k < r->sel.n_configs; k++) {
        int ci = r->sel.configs[k];
        const lab_config *cf = &r->suite.configs[ci];
        lab_store *st = &r->stores[ci];
        char logs[PATH_MAX];
        if (snprintf(logs, sizeof logs, "%s/%s", c->o->log_dir, cf->name) >= (int)sizeof logs) return PACER_ERR_TOO_BIG;
        lab_engine_spec spec = {.engine = c->adapter->name, .bin = c->bin_path, .model_path = st->path, .threads = cf->threads,
                                .ctx = r->suite.context, .extra_args = cf->args, .n_extra = cf->n_args, .log_dir = logs};
        ev.text = st->file_name;
        ev.bytes = st->bytes;
        lab_emit(c, &ev);
        char why[600];
        pacer_err rc = lab_engine_prepare(&c->engines[ci], &spec, c->o->cancel, why, sizeof why);
        if (rc) {
            snprintf(c->err, c->err_len, "configuration %s: %s", cf->name, why);
            return rc;
        }
        snprintf(st->sha256, sizeof st->sha256, "%s", c->engines[ci].m.model.files[0].sha256);
        if (st->is_source) snprintf(c->model_sha, sizeof c->model_sha, "%s", st->sha256);
    }
    ev.text = r->model.source_name;
    ev.bytes = 0;
    if (!r->model.repo[0] && !c->model_sha[0]) {
        lab_emit(c, &ev);
        if (sha256_file_hex(r->model.source_path, c->model_sha)) {
            snprintf(c->err, c->err_len, "cannot read %s", r->model.source_name);
            return PACER_ERR_IO;
        }
    }
    return PACER_OK;
}

static json_t *names_of(const lab_suite *s, const int *idx, int n, bool configs) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_string(configs ? s->configs[idx[i]].name : s->workloads[idx[i]].name));
    return a;
}

static json_t *build_signature(lab_ctx *c) {
    lab_run_result *r = c->res;
    const lab_suite *s = &r->suite;
    json_t *stores = json_object(), *caps = json_object();
    for (int k = 0; k < r->sel.n_configs; k++) {
        const lab_store *st = &r->stores[r->sel.configs[k]];
        json_object_set_new(stores, s->configs[r->sel.configs[k]].name,
                            json_pack("{s:s,s:s,s:s}", "file", st->file_name, "sha256", st->sha256, "weights",
                                      st->weights[0] ? st->weights : r->model.source_type));
    }
    for (int k = 0; k < r->sel.n_cases; k++) json_object_set_new(caps, s->workloads[r->sel.cases[k]].name, json_integer(r->caps[r->sel.cases[k]]));
    char identity[400];
    if (r->model.repo[0]) snprintf(identity, sizeof identity, "%s@%s", r->model.repo, r->model.revision);
    else snprintf(identity, sizeof identity, "sha256:%s", c->model_sha);
    const char *mode = c->preset ? c->preset->name : NULL;
    return json_pack("{s:{s:s},s:s,s:{s:s,s:s,s:O},s:o,s:{s:s,s:s},s:{s:o,s:o,s:i,s:s?},s:o,s:o}", "binary", "sha256",
                     c->bin_sha, "engine", c->adapter->name, "model", "identity", identity, "file", r->model.source_name,
                     "metadata", r->model.metadata, "stores", stores, "suite", "id", s->id, "digest", s->digest, "selections",
                     "configs", names_of(s, r->sel.configs, r->sel.n_configs, true), "cases",
                     names_of(s, r->sel.cases, r->sel.n_cases, false), "rounds", r->sel.rounds, "mode", mode, "context",
                     s->context > 0 ? json_integer(s->context) : json_null(), "caps", caps);
}

/* run.json for a new run. */
static json_t *new_run_doc(lab_ctx *c, json_t *sig) {
    lab_run_result *r = c->res;
    const lab_suite *s = &r->suite;
    char utc[21];
    clock_utc_iso8601(utc);
    json_t *configs = json_array(), *plan = json_array(), *overrides = json_object();
    for (int k = 0; k < r->sel.n_configs; k++) {
        const lab_config *cf = &s->configs[r->sel.configs[k]];
        json_t *args = json_array();
        for (int a = 0; a < cf->n_args; a++) json_array_append_new(args, json_string(cf->args[a]));
        json_array_append_new(configs, json_pack("{s:s,s:s?,s:o,s:o,s:s}", "name", cf->name, "weights",
                                                 cf->weights[0] ? cf->weights : NULL, "threads",
                                                 cf->threads ? json_integer(cf->threads) : json_null(), "args", args, "store",
                                                 r->stores[r->sel.configs[k]].file_name));
    }
    for (size_t i = 0; i < r->plan.n; i++) json_array_append_new(plan, json_string(r->plan.slots[i].id));
    for (int k = 0; k < c->o->n_caps; k++) json_object_set_new(overrides, c->o->caps[k].workload, json_integer(c->o->caps[k].cap));
    int capacity = s->context > 0 ? s->context : r->model.context_length;
    json_t *prov = json_pack("{s:O,s:o,s:O,s:s,s:{s:s,s:s}}", "hardware", c->hardware, "hardware_detail",
                             lab_provenance_detail(c->hardware), "command", c->o->command, "client_version", c->o->client_version,
                             "suite", "id", s->id, "source", s->builtin ? "built-in" : "<suite>");
    return json_pack("{s:s,s:i,s:s,s:s,s:o,s:[],s:o,s:{s:f,s:I,s:s,s:o,s:i,s:o,s:s},s:o,s:o,s:[],s:{s:s,s:n,s:n}}", "format",
                     LAB_FORMAT, "format_version", LAB_FORMAT_VERSION, "client_version", c->o->client_version, "created_utc",
                     utc, "signature", sig, "signatures", "provenance", prov, "settings", "temperature", s->temperature, "seed",
                     (json_int_t)s->seed, "thinking", s->disable_thinking ? "disabled" : "default", "context_capacity",
                     capacity > 0 ? json_integer(capacity) : json_null(), "check_every_s", s->check_every_s, "cap_overrides",
                     overrides, "power", probe_power_name(c->power.expected), "configurations", configs, "plan", plan,
                     "sessions", "state", "status", "running", "reason", "running");
}

/* A new run: the directory and run.json. A resumed one: the signature check, cap raises
 * recorded (the earlier signature kept), run.json updated. Then a session entry. */
static pacer_err setup_run_doc(lab_ctx *c) {
    json_t *sig = build_signature(c);
    if (!sig) return PACER_ERR_NOMEM;
    json_t *raised = NULL;
    pacer_err rc;
    if (c->was) {
        if ((rc = lab_signature_compare(json_object_get(c->was, "signature"), sig, &raised, c->err, c->err_len))) {
            json_decref(sig);
            return rc;
        }
        c->run = json_incref(c->was);
        if (json_object_size(raised)) {
            json_array_append(json_object_get(c->run, "signatures"), json_object_get(c->run, "signature"));
            json_object_set(c->run, "signature", sig);
            json_t *ov = json_object_get(json_object_get(c->run, "settings"), "cap_overrides");
            const char *w;
            json_t *v;
            json_object_foreach(raised, w, v) json_object_set(ov, w, json_array_get(v, 1));
        }
        json_decref(sig);
    } else {
        if ((rc = lab_results_create(c->o->output, c->err, c->err_len))) {
            json_decref(sig);
            return rc;
        }
        c->run = new_run_doc(c, sig);
    }
    char utc[21];
    clock_utc_iso8601(utc);
    json_array_append_new(json_object_get(c->run, "sessions"),
                          json_pack("{s:s,s:b,s:o,s:s?}", "started_utc", utc, "resumed", c->was != NULL, "cap_raises",
                                    raised ? raised : json_object(), "note", c->o->note));
    return lab_results_write_json(c->o->output, LAB_RUN_FILE, c->run, false, c->err, c->err_len);
}

lab_outcome lab_run(const lab_run_options *o, lab_run_result *res, char *err, size_t err_len) {
    memset(res, 0, sizeof *res);
    lab_ctx c = {.o = o, .res = res, .err = err, .err_len = err_len};
    snprintf(res->dir, sizeof res->dir, "%s", o->output ? o->output : "");
    lab_outcome out = LAB_OUTCOME_ERROR;
    if (o->resume && (!o->output || load_resumed(&c))) {
        if (!o->output) snprintf(err, err_len, "--resume needs --output DIR: the run to continue");
        goto done;
    }
    if (setup_suite(&c) || setup_caps(&c) || setup_stores(&c) || setup_selection(&c)) goto done;
    if (o->dry_run) {
        out = LAB_OUTCOME_PLANNED;
        goto done;
    }
    if (setup_missing(&c) || setup_binary(&c) || setup_facts(&c) || setup_run_doc(&c)) goto done;
    out = lab_run_samples(&c);
done:
    json_decref(c.was);
    json_decref(c.run);
    json_decref(c.hardware);
    for (int i = 0; c.engines && i < res->suite.n_configs; i++) lab_engine_free(&c.engines[i]);
    free(c.engines);
    return out;
}

void lab_run_result_free(lab_run_result *res) {
    lab_suite_free(&res->suite);
    lab_plan_free(&res->plan);
    lab_model_free(&res->model);
    json_decref(res->report);
    res->report = NULL;
}
