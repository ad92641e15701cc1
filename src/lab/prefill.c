/* prefill.c - `pacer lab prefill` (prefill.h): the checks of every argument, the facts of the
 * two builds, the model, its stores and the machine, then the pairs round by round, the
 * report rewritten after each sample. */
#include "lab/prefill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/sha256.h"
#include "lab/engine.h"
#include "lab/prefill_report.h"
#include "lab/prefill_source.h"
#include "lab/provenance.h"
#include "lab/results.h"
#include "lab/sample.h"
#include "lab/stores.h"
#include "lab/summary.h"
#include "launch/adapter.h"
#include "probe/probe.h"

static const char *const build_names[2] = {"before", "after"};

typedef struct pf_ctx {
    const lab_prefill_options *o;
    lab_prefill_result *res;
    char *err;
    size_t err_len;
    lab_suite suite;
    lab_selection sel;
    lab_model model;
    lab_store stores[LAB_MAX_CONFIGS];
    const launch_adapter *adapter;
    char bin[2][PATH_MAX];
    lab_build_facts facts[2];
    char model_sha[65];
    json_t *hardware;
    bool has_memory_limit;
    int64_t memory_limit;
    power_watch power;
    lab_engine *engines;         /* per suite configuration (the selected ones prepared); owned */
    json_t *head;                /* the report without its derived parts, "samples" growing */
    size_t planned;
} pf_ctx;

static void emit(pf_ctx *c, const lab_event *ev) {
    if (c->o->on_event) c->o->on_event(c->o->event_ctx, ev);
}

/* Everything that can be refused is refused here, before anything is hashed or started:
 * the two executables, the output directory, suite, selections, engine, model, stores. */
static pacer_err check_input(pf_ctx *c) {
    const lab_prefill_options *o = c->o;
    for (int k = 0; k < 2; k++) {
        const char *b = k ? o->after : o->before;
        if (!b || !lab_engine_find_binary(b, c->bin[k], sizeof c->bin[k])) {
            snprintf(c->err, c->err_len, "--%s: %s is not an executable file", build_names[k], b ? b : "(none given)");
            return PACER_ERR_NOT_FOUND;
        }
    }
    if (!o->model_spec) {
        snprintf(c->err, c->err_len, "--model: no model named");
        return PACER_ERR_ARG;
    }
    pacer_err rc = lab_results_check_new(o->output, c->err, c->err_len);
    if (!rc) rc = lab_suite_load(o->suite ? o->suite : LAB_PREFILL_ID, &c->suite, c->err, c->err_len);
    if (rc) return rc;
    char why[400];
    if ((rc = lab_selection_parse(&c->suite, o->configs ? o->configs : c->suite.configs[0].name, NULL, o->rounds, &c->sel, why, sizeof why))) {
        snprintf(c->err, c->err_len, "--configs: %s", why);
        return rc;
    }
    const char *engine = o->engine ? o->engine : "builtin";
    if (!(c->adapter = launch_adapter_find(engine)) || c->adapter->loads != LAUNCH_FORMAT_GGUF) {
        snprintf(c->err, c->err_len, "--engine %s: lab prefill compares builds of an engine that loads GGUF files (builtin, llama.cpp)", engine);
        return PACER_ERR_ARG;
    }
    if ((rc = lab_model_resolve(o->model_spec, o->store_home, &c->model, c->err, c->err_len))) return rc;
    for (int k = 0; k < c->sel.n_configs; k++) {
        int ci = c->sel.configs[k];
        lab_store *st = &c->stores[ci];
        if ((rc = lab_store_find(&c->model, c->suite.configs[ci].weights, st, why, sizeof why))) {
            snprintf(c->err, c->err_len, "configuration %s: %s", c->suite.configs[ci].name, why);
            return rc;
        }
        if (!st->exists) {
            snprintf(c->err, c->err_len, "configuration %s: its store %s is not on disk (`pacer lab run --build-stores` or `pacer model quantize` builds it)",
                     c->suite.configs[ci].name, st->file_name);
            return PACER_ERR_NOT_FOUND;
        }
    }
    c->planned = (size_t)c->sel.rounds * (size_t)c->sel.n_configs * (size_t)c->sel.n_cases * 2;
    return PACER_OK;
}

/* The builds' facts, the machine's, and every selected configuration prepared once (its
 * store hashed) for both builds. */
static pacer_err gather_facts(pf_ctx *c) {
    lab_event ev = {.kind = LAB_EVENT_HASHING, .text = "the two builds"};
    emit(c, &ev);
    pacer_err rc = PACER_OK;
    for (int k = 0; k < 2 && !rc; k++) rc = lab_build_facts_read(c->bin[k], &c->facts[k], c->err, c->err_len);
    if (rc) return rc;
    probe_options po = {.model_path = c->model.source_path, .read_sample = false, .sys_root = c->o->sys_root};
    if (probe_collect(&po, &c->hardware) || !c->hardware) {
        snprintf(c->err, c->err_len, "cannot collect the hardware facts: out of memory");
        return PACER_ERR_NOMEM;
    }
    json_t *mem = json_object_get(c->hardware, "memory_bytes");
    c->has_memory_limit = json_is_integer(mem) && json_integer_value(mem) > 0;
    c->memory_limit = json_integer_value(mem);
    power_watch_start(&c->power, c->o->sys_root);
    if (!(c->engines = calloc((size_t)c->suite.n_configs, sizeof *c->engines))) return PACER_ERR_NOMEM;
    for (int k = 0; k < c->sel.n_configs; k++) {
        int ci = c->sel.configs[k];
        const lab_config *cf = &c->suite.configs[ci];
        lab_store *st = &c->stores[ci];
        char logs[PATH_MAX], why[600];
        if (snprintf(logs, sizeof logs, "%s/%s/before", c->o->log_dir, cf->name) >= (int)sizeof logs) return PACER_ERR_TOO_BIG;
        lab_engine_spec spec = {.engine = c->adapter->name, .bin = c->bin[0], .model_path = st->path, .threads = cf->threads,
                                .ctx = c->suite.context, .extra_args = cf->args, .n_extra = cf->n_args, .log_dir = logs};
        ev = (lab_event){.kind = LAB_EVENT_HASHING, .text = st->file_name, .bytes = st->bytes};
        emit(c, &ev);
        if ((rc = lab_engine_prepare(&c->engines[ci], &spec, c->o->cancel, why, sizeof why))) {
            snprintf(c->err, c->err_len, "configuration %s: %s", cf->name, why);
            return rc;
        }
        snprintf(st->sha256, sizeof st->sha256, "%s", c->engines[ci].m.model.files[0].sha256);
        if (st->is_source) snprintf(c->model_sha, sizeof c->model_sha, "%s", st->sha256);
    }
    if (!c->model.repo[0] && !c->model_sha[0] && sha256_file_hex(c->model.source_path, c->model_sha)) {
        snprintf(c->err, c->err_len, "cannot read %s", c->model.source_name);
        return PACER_ERR_IO;
    }
    return PACER_OK;
}

static json_t *selected_names(const pf_ctx *c, bool configs) {
    json_t *a = json_array();
    int n = configs ? c->sel.n_configs : c->sel.n_cases;
    for (int k = 0; k < n; k++)
        json_array_append_new(a, json_string(configs ? c->suite.configs[c->sel.configs[k]].name : c->suite.workloads[c->sel.cases[k]].name));
    return a;
}

/* The configurations as run (store, its hash, arguments) and the prompts verbatim. */
static void configs_and_prompts(const pf_ctx *c, json_t **configs, json_t **prompts, int *tokens) {
    *configs = json_array();
    *prompts = json_array();
    *tokens = 0;
    for (int k = 0; k < c->sel.n_configs; k++) {
        const lab_config *cf = &c->suite.configs[c->sel.configs[k]];
        const lab_store *st = &c->stores[c->sel.configs[k]];
        json_t *args = json_array();
        for (int a = 0; a < cf->n_args; a++) json_array_append_new(args, json_string(cf->args[a]));
        json_array_append_new(*configs, json_pack("{s:s,s:s,s:o,s:o,s:s,s:s}", "name", cf->name, "weights",
                                                  st->weights[0] ? st->weights : c->model.source_type, "threads",
                                                  cf->threads ? json_integer(cf->threads) : json_null(), "args", args, "store",
                                                  st->file_name, "sha256", st->sha256));
    }
    for (int k = 0; k < c->sel.n_cases; k++) {
        const lab_workload *w = &c->suite.workloads[c->sel.cases[k]];
        if (w->cap > *tokens) *tokens = w->cap;
        json_array_append_new(*prompts, json_pack("{s:s,s:s,s:s,s:i,s:s?,s:O?}", "length", w->name, "kind", lab_kind_name(w->kind), "route",
                                                  w->route == ATTEMPT_ROUTE_CHAT ? "chat" : "completions", "cap", w->cap, "prompt",
                                                  w->prompt, "messages", w->messages));
    }
}

static json_t *head_doc(pf_ctx *c, json_t *diff) {
    char utc[21], identity[400];
    clock_utc_iso8601(utc);
    if (c->model.repo[0]) snprintf(identity, sizeof identity, "%s@%s", c->model.repo, c->model.revision);
    else snprintf(identity, sizeof identity, "sha256:%s", c->model_sha);
    json_t *configs, *prompts;
    int tokens;
    configs_and_prompts(c, &configs, &prompts, &tokens);
    const lab_suite *s = &c->suite;
    return json_pack("{s:s,s:i,s:s,s:s,s:{s:s,s:n,s:s},s:O,s:{s:O,s:o},s:{s:s,s:i,s:o,s:o,s:i,s:f,s:I,s:s,s:s,s:s,s:I},"
                     "s:{s:s,s:s,s:s},s:{s:s,s:s,s:O},s:o,s:o,s:{s:O,s:O},s:o,s:[]}",
                     "format", LAB_PREFILL_FORMAT, "format_version", LAB_PREFILL_FORMAT_VERSION, "client_version",
                     c->o->client_version, "created_utc", utc, "state", "status", "running", "reason", "updated_utc", utc,
                     "command", c->o->command, "provenance", "hardware", c->hardware, "hardware_detail",
                     lab_provenance_detail(c->hardware), "settings", "engine", c->adapter->name, "rounds", c->sel.rounds, "configs",
                     selected_names(c, true), "lengths", selected_names(c, false), "tokens", tokens, "temperature", s->temperature,
                     "seed", (json_int_t)s->seed, "thinking", s->disable_thinking ? "disabled" : "default", "power",
                     probe_power_name(c->power.expected), "order", "odd rounds: before first; even rounds: after first", "samples",
                     (json_int_t)c->planned, "suite", "id", s->id, "digest", s->digest, "source", s->builtin ? "built-in" : "<suite>",
                     "model", "file", c->model.source_name, "identity", identity, "metadata", c->model.metadata, "configurations",
                     configs, "prompts", prompts, "binaries", "before", c->facts[0].json, "after", c->facts[1].json, "source_diff",
                     diff, "samples");
}

static void set_state(pf_ctx *c, const char *status, const char *reason) {
    char utc[21];
    clock_utc_iso8601(utc);
    json_object_set_new(c->head, "state", json_pack("{s:s,s:s?,s:s}", "status", status, "reason", reason, "updated_utc", utc));
}

/* report.json and summary.md from the head and the samples so far, each atomically. */
static pacer_err save(pf_ctx *c) {
    json_t *rep = lab_prefill_report_build(c->head);
    if (!rep) return PACER_ERR_NOMEM;
    buf md;
    buf_init(&md, 64u << 20);
    pacer_err rc = lab_results_write_json(c->o->output, LAB_REPORT_FILE, rep, true, c->err, c->err_len);
    if (!rc && (rc = lab_prefill_summary(&md, rep))) snprintf(c->err, c->err_len, "cannot make summary.md: %s", pacer_strerror(rc));
    if (!rc) rc = lab_results_write_file(c->o->output, LAB_SUMMARY_FILE, md.data ? md.data : "", md.len, c->err, c->err_len);
    buf_free(&md);
    json_decref(c->res->report);
    c->res->report = rep;
    return rc;
}

/* The results directory, the source diff and the first report (no sample yet). */
static pacer_err start_results(pf_ctx *c) {
    buf diff;
    json_t *d = lab_build_diff(&c->facts[0], &c->facts[1], &diff);
    pacer_err rc = d ? PACER_OK : PACER_ERR_NOMEM;
    if (!rc && c->o->ignore_dir && lab_results_ignore_dir(c->o->ignore_dir)) {
        snprintf(c->err, c->err_len, "cannot write %s/.gitignore", c->o->ignore_dir);
        rc = PACER_ERR_IO;
    }
    if (!rc) rc = lab_results_create_bare(c->o->output, c->err, c->err_len);
    if (!rc && diff.len) {
        rc = lab_results_write_file(c->o->output, LAB_PREFILL_DIFF_FILE, diff.data, diff.len, c->err, c->err_len);
        json_object_set_new(d, "file", json_string(LAB_PREFILL_DIFF_FILE));
    }
    buf_free(&diff);
    if (rc) {
        json_decref(d);
        return rc;
    }
    if (!(c->head = head_doc(c, d))) return PACER_ERR_NOMEM;
    return save(c);
}

/* The sample's JSON: its record, which build, whether it ran first, its output verbatim. */
static json_t *sample_json(lab_sample_result *s, int build, bool first) {
    const char *text = s->answer.data ? s->answer.data : "";
    if (sha256_hex(text, s->answer.len, s->rec.answer_sha256)) return NULL;
    json_t *j = lab_record_to_json(&s->rec);
    json_t *output = json_stringn(text, s->answer.len); /* NULL only for text that is not UTF-8 */
    if (j) json_object_update_missing_new(j, json_pack("{s:s,s:b,s:o}", "binary", build_names[build], "first", first, "output",
                                                       output ? output : json_null()));
    /* the engine's own prompt time, as it reported it (the record keeps the rate made of it) */
    const lab_record *r = &s->rec;
    if (j && r->has_usage && r->has_server_prefill_tok_s && r->server_prefill_tok_s > 0)
        json_object_set_new(j, "server_prompt_ms", json_real((double)r->prefill_tokens * 1000.0 / r->server_prefill_tok_s));
    return j;
}

/* One sample of one build. LAB_OUTCOME_COMPLETE to go on, else what ends the run. */
static lab_outcome run_sample(pf_ctx *c, const lab_slot *sl, int build, bool first) {
    lab_engine *e = &c->engines[sl->config];
    char logs[PATH_MAX];
    if (snprintf(logs, sizeof logs, "%s/%s/%s", c->o->log_dir, c->suite.configs[sl->config].name, build_names[build]) >= (int)sizeof logs ||
        lab_engine_use_binary(e, c->bin[build], logs)) {
        snprintf(c->err, c->err_len, "the log directory path is too long");
        return LAB_OUTCOME_ERROR;
    }
    lab_event ev = {.kind = LAB_EVENT_SAMPLE_START, .id = sl->id, .index = (size_t)sl->index, .total = c->planned};
    emit(c, &ev);
    lab_sample_job job = {.suite = &c->suite, .slot = sl, .cap = c->suite.workloads[sl->workload].cap, .engine = e,
                          .store_path = c->stores[sl->config].path, .power = &c->power, .has_memory_limit = c->has_memory_limit,
                          .memory_limit_bytes = c->memory_limit, .cancel = c->o->cancel};
    lab_sample_result s;
    lab_sample_run(&job, &s);
    lab_outcome out = LAB_OUTCOME_COMPLETE;
    json_t *j = s.cancelled ? NULL : sample_json(&s, build, first);
    if (s.cancelled) {
        snprintf(c->res->stop_reason, sizeof c->res->stop_reason, "cancelled during %s", sl->id);
        set_state(c, "cancelled", "stopped by the user; the sample in flight was dropped");
        out = save(c) ? LAB_OUTCOME_ERROR : LAB_OUTCOME_CANCELLED;
    } else if (!j || json_array_append_new(json_object_get(c->head, "samples"), j)) {
        snprintf(c->err, c->err_len, "out of memory");
        out = LAB_OUTCOME_ERROR;
    } else if (s.stop_suite) {
        snprintf(c->res->stop_reason, sizeof c->res->stop_reason, "%.100s: %.150s", sl->id, s.rec.error[0] ? s.rec.error : s.rec.validity_reason);
        set_state(c, "stopped", c->res->stop_reason);
        out = save(c) ? LAB_OUTCOME_ERROR : LAB_OUTCOME_STOPPED;
    } else if (save(c)) {
        out = LAB_OUTCOME_ERROR;
    }
    if (!s.cancelled && out != LAB_OUTCOME_ERROR) {
        ev = (lab_event){.kind = LAB_EVENT_SAMPLE_DONE, .id = sl->id, .rec = &s.rec, .text = e->m.log_path, .index = (size_t)sl->index,
                         .total = c->planned};
        emit(c, &ev);
    }
    lab_sample_result_free(&s);
    return out;
}

/* Round by round, configuration by configuration, length by length: a pair, its order
 * alternating by round. */
static lab_outcome run_pairs(pf_ctx *c) {
    int index = 0;
    for (int r = 1; r <= c->sel.rounds; r++)
        for (int k = 0; k < c->sel.n_configs; k++)
            for (int w = 0; w < c->sel.n_cases; w++)
                for (int p = 0; p < 2; p++) {
                    int build = r % 2 == 1 ? p : 1 - p; /* odd rounds: before first */
                    lab_slot sl = {.index = index++, .round = r, .workload = c->sel.cases[w], .config = c->sel.configs[k]};
                    snprintf(sl.id, sizeof sl.id, "r%d-%s-%s-%s", r, c->suite.workloads[sl.workload].name,
                             c->suite.configs[sl.config].name, build_names[build]);
                    lab_outcome out = run_sample(c, &sl, build, p == 0);
                    if (out != LAB_OUTCOME_COMPLETE) return out;
                }
    set_state(c, "complete", NULL);
    return save(c) ? LAB_OUTCOME_ERROR : LAB_OUTCOME_COMPLETE;
}

lab_outcome lab_prefill_run(const lab_prefill_options *o, lab_prefill_result *res, char *err, size_t err_len) {
    memset(res, 0, sizeof *res);
    pf_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, err_len, "out of memory");
        return LAB_OUTCOME_ERROR;
    }
    *c = (pf_ctx){.o = o, .res = res, .err = err, .err_len = err_len};
    err[0] = '\0';
    lab_outcome out = LAB_OUTCOME_ERROR;
    if (!o->output) snprintf(err, err_len, "no results directory");
    else if (check_input(c) == PACER_OK && gather_facts(c) == PACER_OK && start_results(c) == PACER_OK) out = run_pairs(c);
    if (out == LAB_OUTCOME_ERROR && !err[0]) snprintf(err, err_len, "out of memory");
    for (int i = 0; c->engines && i < c->suite.n_configs; i++) lab_engine_free(&c->engines[i]);
    free(c->engines);
    for (int k = 0; k < 2; k++) lab_build_facts_free(&c->facts[k]);
    json_decref(c->hardware);
    json_decref(c->head);
    lab_model_free(&c->model);
    lab_suite_free(&c->suite);
    free(c);
    return out;
}

void lab_prefill_result_free(lab_prefill_result *res) {
    json_decref(res->report);
    res->report = NULL;
}
