/* runner.c - cells x repetitions in a fixed order, each attempt judged by the suite's
 * rules, the receipt assembled from raw samples (aggregates computed from the stored
 * attempts, as the validator recomputes them). */
#include "bench/runner.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/clock.h"
#include "bench/rank.h"
#include "bench/receipt.h"
#include "bench/rules.h"
#include "bench/runlog.h"
#include "bench/sanitize.h"
#include "probe/redact.h"
#include "schema/hardware.h"

void runner_run_id(char out[40]) {
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (uint32_t)clock_now_ns();
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char ts[20];
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(out, 40, "%s-%08x", ts, r);
}

/* One cell as run: the workload, and a setting possibly overridden by --temperatures. */
typedef struct runner_cell {
    const suite_workload *w;
    suite_setting st;
} runner_cell;

static int runner_cells(const runner_options *o, runner_cell *cells, int max) {
    const suite *s = o->suite;
    int n = 0;
    for (int wi = 0; wi < s->n_workloads; wi++) {
        if (o->n_temps == 0) {
            for (int si = 0; si < s->n_settings && n < max; si++) cells[n++] = (runner_cell){&s->workloads[wi], s->settings[si]};
            continue;
        }
        for (int ti = 0; ti < o->n_temps && n < max; ti++) {
            /* a custom temperature takes the suite's greedy or sampled setting as its base */
            const suite_setting *base = &s->settings[0];
            for (int si = 0; si < s->n_settings; si++)
                if ((s->settings[si].temperature == 0) == (o->temps[ti] == 0)) { base = &s->settings[si]; break; }
            runner_cell c = {&s->workloads[wi], *base};
            c.st.temperature = o->temps[ti];
            cells[n++] = c;
        }
    }
    return n;
}

/* Every workload goes to the chat route: --chat-only, or (v2 rules: "families without a
 * raw-text mode send the code prompt as one chat user message") the server declared so. */
static bool runner_chat_only(const runner_options *o) {
    return o->chat_only || (o->no_raw_text && o->suite->rule_version >= 2);
}

static json_t *str_or_unknown(const char *s) { return json_string(s && *s ? s : "unknown"); }

/* The host of a URL ("gpu-7.example.net" of "http://user@gpu-7.example.net:8000/v1") into
 * out; "" when there is none. */
static void runner_url_host(const char *url, char *out, size_t n) {
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t len = strcspn(p, "/?#");
    const char *at = memchr(p, '@', len);
    if (at) len -= (size_t)(at + 1 - p), p = at + 1;
    if (len && *p == '[') p++, len = strcspn(p, "]");
    else len = strcspn(p, ":/?#");
    snprintf(out, n, "%.*s", (int)len, p);
}

sanitize_context *runner_sanitize_context(const suite *s, const char *server_url) {
    sanitize_context *c = sanitize_context_new();
    redact_context local;
    redact_context_local(&local);
    char host[256] = "";
    if (server_url) runner_url_host(server_url, host, sizeof host);
    /* a name too long to search is left out: the patterns still apply */
    if (!c || sanitize_context_add_suite(c, s) == PACER_ERR_NOMEM) {
        sanitize_context_free(c);
        return NULL;
    }
    const char *words[] = {local.host, local.user, local.home, host};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) (void)sanitize_context_add_word(c, words[i]);
    return c;
}

/* Where the server text of the attempt being run goes: the run's log, with its place. */
typedef struct runner_log {
    const char *path;
    char where[160];
} runner_log;

static void runner_log_text(void *ctx, const char *what, const char *text, size_t n) {
    const runner_log *l = ctx;
    char header[320];
    snprintf(header, sizeof header, "%s: %s", l->where, what);
    if (l->path) (void)runlog_append(l->path, header, text, n); /* a log that cannot be written loses no measurement */
}

/* The checkpoint facts of `model`: revision (attested by the manifest, else the snapshot a
 * managed run loaded), weight-file digests, format, and the client's declarations. */
static json_t *runner_model(const runner_options *o, const manifest *m, const sanitize_context *san) {
    json_t *hashes = json_array();
    if (m && m->checkpoint_hashes) json_array_extend(hashes, m->checkpoint_hashes);
    for (size_t i = 0; !m && i < o->n_checkpoint_files; i++)
        json_array_append_new(hashes, json_pack("{s:s,s:s}", "file", o->checkpoint_files[i].file, "sha256",
                                                o->checkpoint_files[i].sha256));
    bool attested = m && m->revision[0];
    const char *revision = attested ? m->revision : o->revision ? o->revision : "unknown";
    const char *revision_source = attested ? "attested" : o->revision ? "cache-snapshot" : "unknown";
    bool attached = strcmp(o->mode, "attached") == 0;
    /* the served name is what the server calls the model: often a path on its host */
    char served[ATTEMPT_MESSAGE_MAX];
    if (o->served_model) sanitize_text(san, o->served_model, strlen(o->served_model), served, sizeof served);
    json_t *model = json_pack("{s:o,s:s,s:o,s:s,s:s,s:o,s:b}", "id", str_or_unknown(o->public_id), "id_source",
                              attached ? "declared" : "loaded", "served_model_id",
                              o->served_model ? json_string(served) : json_null(), "revision", revision,
                              "revision_source", revision_source, "checkpoint_hashes", hashes, "publishable",
                              !o->local_model);
    if (!m && o->checkpoint_format) json_object_set_new(model, "checkpoint_format", json_string(o->checkpoint_format));
    if (attached) /* a client declaration, never checked against the server */
        json_object_set_new(model, "declared_context", o->declared_context > 0 ? json_integer(o->declared_context) : json_null());
    return model;
}

/* backend, platform, hardware, manifest and ranks: each attested fact of an accepted
 * manifest, else what a managed run knows or the user declared, else unknown. */
static void runner_provenance(json_t *r, const runner_options *o, const manifest *m) {
    bool m_backend = m && m->backend[0];
    bool backend_attested = m_backend && (!o->backend || strcmp(o->backend, m->backend) == 0);
    const char *backend = backend_attested ? m->backend : o->backend;
    json_object_set_new(r, "backend", json_pack("{s:o,s:s}", "name", str_or_unknown(backend), "source",
                                                backend_attested ? "attested"
                                                : o->backend     ? (o->backend_source ? o->backend_source : "declared")
                                                                 : "unknown"));
    bool platform_attested = m && m->platform[0];
    json_object_set_new(r, "platform", json_pack("{s:o,s:s}", "name", str_or_unknown(platform_attested ? m->platform : o->platform),
                                                 "source", platform_attested ? "attested" : o->platform ? "declared" : "unknown"));
    json_t *hw = NULL;
    if (m && m->hardware) hw = json_deep_copy(m->hardware);
    else if (!m && o->hardware) hw = json_deep_copy(o->hardware);
    else hw = hardware_unknown();
    json_object_set_new(r, "hardware", hw);
    json_object_set_new(r, "manifest", json_pack("{s:s,s:s,s:o,s:o,s:o}", "status",
                                                 !o->manifest ? "not fetched" : m ? "accepted" : "rejected", "reason",
                                                 o->manifest ? o->manifest->reason : "", "version",
                                                 m ? json_integer(m->version) : json_null(), "rank_count",
                                                 m && m->rank_count ? json_integer(m->rank_count) : json_null(), "backend",
                                                 m_backend ? json_string(m->backend) : json_null()));
    /* the group: a managed run starts one engine process; an attached one has what its
     * manifest attests, each rank's hardware included, so a run of many ranks can be read */
    json_t *ranks;
    if (!m && strcmp(o->mode, "managed") == 0) ranks = json_pack("{s:i,s:s}", "count", 1, "source", "managed");
    else if (m && m->rank_count) ranks = json_pack("{s:i,s:s}", "count", m->rank_count, "source", "attested");
    else ranks = json_pack("{s:n,s:s}", "count", "source", "unknown");
    if (m && m->rank_hardware) json_object_set_new(ranks, "hardware", json_deep_copy(m->rank_hardware));
    json_object_set_new(r, "ranks", ranks);
}

static json_t *runner_header(const runner_options *o, const char *run_id, bool standard, int reps, int warmups,
                             int tokens, const sanitize_context *san) {
    const suite *s = o->suite;
    const manifest *m = o->manifest && o->manifest->accepted ? o->manifest : NULL;
    char utc[21];
    clock_utc_iso8601(utc);
    json_t *r = json_object();
    json_object_set_new(r, "schema_version", json_integer(RECEIPT_SCHEMA_VERSION));
    json_object_set_new(r, "run_id", json_string(run_id));
    json_object_set_new(r, "created_utc", json_string(utc));
    json_object_set_new(r, "client", json_pack("{s:s,s:s}", "name", "pacer", "version", o->client_version ? o->client_version : "unknown"));
    json_object_set_new(r, "mode", json_string(o->mode));
    json_object_set_new(r, "engine", o->engine ? json_string(o->engine) : json_null());
    json_object_set_new(r, "suite", json_pack("{s:s,s:i,s:i,s:s,s:b}", "id", s->id, "version", s->version,
                                              "rule_version", s->rule_version, "digest", s->digest, "standard", standard));
    json_object_set_new(r, "model", runner_model(o, m, san));
    json_object_set_new(r, "engine_version", o->engine_version ? json_string(o->engine_version) : json_null());
    const char *python = m && m->python_version[0] ? m->python_version : o->python_version;
    json_object_set_new(r, "python_version", str_or_unknown(python));
    runner_provenance(r, o, m);
    json_t *temps = json_array();
    for (int i = 0; i < (o->n_temps ? o->n_temps : s->n_settings); i++)
        json_array_append_new(temps, json_real(o->n_temps ? o->temps[i] : s->settings[i].temperature));
    json_object_set_new(r, "settings", json_pack("{s:i,s:i,s:i,s:o,s:b,s:b,s:b,s:b,s:o}", "repetitions", reps, "warmups",
                                                 warmups, "max_tokens", tokens, "temperatures", temps, "chat_only",
                                                 runner_chat_only(o), "thinking_disabled", s->thinking_disabled,
                                                 "prompt_cache_disabled", s->prompt_cache_disabled, "drafter_passed",
                                                 o->drafter_passed, "drafter",
                                                 o->drafter_id ? json_string(o->drafter_id) : json_null()));
    json_object_set_new(json_object_get(r, "settings"), "sequence_slots",
                        o->sequence_slots > 0 ? json_integer(o->sequence_slots) : json_null());
    return r;
}

/* The request an attempt of cell `c` sends: server text sanitized with `san`, logged to `log`. */
static attempt_request runner_request(const runner_options *o, const runner_cell *c, int max_tokens, attempt_route route,
                                      const sanitize_context *san, runner_log *log) {
    const suite *s = o->suite;
    return (attempt_request){.server_url = o->server_url, .model_id = o->served_model, .route = route,
                             .prompt = c->w->prompt, .max_tokens = max_tokens, .temperature = c->st.temperature,
                             .top_k = c->st.temperature > 0 ? c->st.top_k : 0,
                             .top_p = c->st.temperature > 0 ? c->st.top_p : 0,
                             .disable_thinking = s->thinking_disabled, .disable_prompt_cache = s->prompt_cache_disabled,
                             .api_key = o->api_key, .server_tok_s_field = o->server_tok_s_field,
                             .prefill_ms_field = o->prefill_ms_field, .idle_timeout_ms = o->idle_timeout_ms,
                             .cancel_flag = o->cancel_flag, .sanitize = san, .on_server_text = runner_log_text,
                             .server_text_ctx = log};
}

/* Runs the load sweep on one cell and puts its section and calibration into receipt `r`. */
static pacer_err runner_load(const runner_options *o, const runner_cell *cells, int n_cells, json_t *r,
                             const sanitize_context *san, runner_log *log, runner_result *res, char *err, size_t err_len) {
    const runner_cell *c = NULL;
    const char *want = o->load_workload ? o->load_workload : "chat";
    for (int i = 0; i < n_cells && !c; i++) if (strcmp(cells[i].w->name, want) == 0) c = &cells[i];
    if (!c && o->load_workload) {
        snprintf(err, err_len, "the suite has no workload '%s'", o->load_workload);
        return PACER_ERR_ARG;
    }
    if (!c) c = &cells[0];
    load_options lo = *o->load;
    int max_tokens = o->tokens > 0 ? o->tokens : c->w->max_tokens;
    attempt_route route = runner_chat_only(o) ? ATTEMPT_ROUTE_CHAT : c->w->route;
    snprintf(log->where, sizeof log->where, "load sweep %s/%s", c->w->name, c->st.name);
    lo.request = runner_request(o, c, max_tokens, route, san, log);
    lo.rules = (rules_context){o->suite->rule_version, max_tokens, c->st.temperature == 0.0,
                               o->suite->natural_stop_min_tokens};
    lo.seed_base = c->st.seed_base;
    lo.workload = c->w->name;
    lo.setting = c->st.name;
    lo.cancel_flag = o->cancel_flag;
    load_result lr;
    pacer_err rc = load_run(&lo, &lr, err, err_len);
    if (rc) return rc;
    json_object_set_new(r, "load", lr.section);
    json_object_set_new(json_object_get(r, "client"), "calibration", lr.calibration);
    res->cancelled = lr.cancelled;
    res->exit_status = lr.cancelled ? 130 : lr.incomplete ? 2 : 0;
    return PACER_OK;
}

/* What a run carries from cell to cell. */
typedef struct runner_state {
    const runner_options *o;
    const sanitize_context *san;
    runner_log log;
    json_t *drafts;
    int reps, warmups, n_cells;
    bool cancelled, any_incomplete, drafts_lost;
} runner_state;

/* One attempt (warm-up or repetition k) of cell `ci`, judged by the suite's rules: its JSON
 * goes to `atts`, a failure that counts to `reasons` (and clears *cell_ok). */
static pacer_err runner_attempt(runner_state *st, const runner_cell *c, int ci, int k, const rules_context *ctx,
                                attempt_route route, json_t *atts, json_t *reasons, bool *cell_ok) {
    const runner_options *o = st->o;
    bool warm = k < st->warmups;
    int index = warm ? k : k - st->warmups + 1;
    bool has_seed = c->st.temperature > 0;
    int64_t seed = c->st.seed_base + (warm ? 0 : index);
    attempt_request req = runner_request(o, c, ctx->max_tokens, route, st->san, &st->log);
    req.has_seed = has_seed;
    req.seed = seed;
    snprintf(st->log.where, sizeof st->log.where, "cell %d %s/%s %s %d", ci, c->w->name, c->st.name,
             warm ? "warm-up" : "repetition", index);
    attempt_sample smp;
    pacer_err rc = attempt_run(&req, &smp);
    if (rc) return rc;
    char why[ATTEMPT_REASON_MAX];
    smp.status = rules_judge(ctx, &smp, why, sizeof why);
    snprintf(smp.reason, sizeof smp.reason, "%s", why);
    if (smp.status == ATTEMPT_CANCELLED) st->cancelled = true;
    bool counts = !(warm && smp.status == ATTEMPT_OK);
    if (smp.status != ATTEMPT_OK && counts) {
        *cell_ok = false;
        char line[ATTEMPT_REASON_MAX + 48];
        snprintf(line, sizeof line, "%s %d: %s", warm ? "warm-up" : "repetition", index, smp.reason);
        json_array_append_new(reasons, json_string(line));
    }
    json_array_append_new(atts, receipt_attempt_to_json(&smp, index, warm, has_seed, seed));
    if (receipt_drafts_add(st->drafts, ci, index, warm, &smp)) st->drafts_lost = true;
    if (o->progress) o->progress(o->progress_ctx, ci, st->n_cells, c->w->name, c->st.name, index, st->reps, warm, &smp);
    return PACER_OK;
}

/* Runs cell `ci`'s warm-ups and repetitions; *jc gets the cell's JSON, or NULL when the run
 * was cancelled before any attempt of it. */
static pacer_err runner_cell_run(runner_state *st, const runner_cell *c, int ci, json_t **jc, char *err, size_t err_len) {
    const runner_options *o = st->o;
    const suite *s = o->suite;
    *jc = NULL;
    int max_tokens = o->tokens > 0 ? o->tokens : c->w->max_tokens;
    attempt_route route = runner_chat_only(o) ? ATTEMPT_ROUTE_CHAT : c->w->route;
    rules_context ctx = {s->rule_version, max_tokens, c->st.temperature == 0.0, s->natural_stop_min_tokens};
    json_t *atts = json_array(), *reasons = json_array();
    bool cell_ok = true;
    for (int k = 0; k < st->warmups + st->reps && !st->cancelled; k++) {
        if (o->cancel_flag && *o->cancel_flag) { st->cancelled = true; break; }
        pacer_err rc = runner_attempt(st, c, ci, k, &ctx, route, atts, reasons, &cell_ok);
        if (rc) {
            snprintf(err, err_len, "attempt could not be run: %s", pacer_strerror(rc));
            json_decref(atts);
            json_decref(reasons);
            return rc;
        }
    }
    int measured = 0;
    size_t ai;
    json_t *a;
    json_array_foreach(atts, ai, a) if (!json_is_true(json_object_get(a, "warmup"))) measured++;
    if (measured != st->reps) {
        cell_ok = false;
        if (st->cancelled) json_array_append_new(reasons, json_string("run cancelled before the cell finished"));
    }
    if (st->cancelled && json_array_size(atts) == 0) {
        json_decref(atts);
        json_decref(reasons);
        return PACER_OK;
    }
    if (!cell_ok) st->any_incomplete = true;
    *jc = json_pack("{s:s,s:s,s:s,s:f,s:i,s:f,s:i,s:s,s:o,s:o}", "workload", c->w->name, "setting", c->st.name, "route",
                    attempt_route_name(route), "temperature", c->st.temperature, "top_k", c->st.top_k, "top_p",
                    c->st.top_p, "max_tokens", max_tokens, "status", cell_ok ? "complete" : "incomplete", "reasons",
                    reasons, "attempts", atts);
    json_object_set_new(*jc, "aggregates", receipt_cell_aggregates(atts, st->reps));
    return PACER_OK;
}

/* The receipt's ending: cancelled, exit status, ranking; the drafts file's note when some
 * draft counts were lost. */
static void runner_finish(json_t *r, runner_state *st, runner_result *out) {
    json_object_set_new(r, "cancelled", json_boolean(st->cancelled));
    out->exit_status = st->cancelled ? 130 : st->any_incomplete ? 2 : 0;
    json_object_set_new(r, "exit_status", json_integer(out->exit_status));
    json_t *unranked = json_array();
    rank_reasons(r, st->o->suite, unranked); /* from the receipt's own facts, as the validator judges them */
    json_object_set_new(r, "ranked", json_boolean(json_array_size(unranked) == 0));
    json_object_set_new(r, "unranked_reasons", unranked);
    if (receipt_drafts_finish(st->drafts)) st->drafts_lost = true;
    /* the receipt keeps every measurement; the drafts file says it is short rather than lie */
    if (st->drafts_lost)
        json_array_append_new(json_object_get(st->drafts, "notes"),
                              json_string("drafts incomplete: out of memory while recording server draft counts"));
    out->receipt = r;
    out->drafts = st->drafts;
    out->cancelled = st->cancelled;
}

pacer_err runner_run(const runner_options *o, runner_result *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    const suite *s = o->suite;
    if (!s || !o->server_url || !o->mode) { snprintf(err, err_len, "runner: missing suite, URL or mode"); return PACER_ERR_ARG; }
    if (o->chat_only && s->rule_version < 2) {
        snprintf(err, err_len, "--chat-only needs a suite with rule version 2 (%s has %d)", s->id, s->rule_version);
        return PACER_ERR_ARG;
    }
    runner_state st = {.o = o, .log = {.path = o->server_log}, .reps = o->reps > 0 ? o->reps : s->repetitions,
                       .warmups = o->warmups > 0 ? o->warmups : s->warmups};
    bool standard = s->builtin && (o->reps == 0 || o->reps == s->repetitions) && o->tokens == 0 && o->n_temps == 0 &&
                    (o->warmups == 0 || o->warmups == s->warmups) && !o->load;
    runner_cell cells[SUITE_MAX_WORKLOADS * SUITE_MAX_SETTINGS];
    st.n_cells = runner_cells(o, cells, (int)(sizeof cells / sizeof cells[0]));
    char run_id[40];
    if (o->run_id) snprintf(run_id, sizeof run_id, "%s", o->run_id);
    else runner_run_id(run_id);
    sanitize_context *own_san = NULL;
    if (!(st.san = o->sanitize) && !(st.san = own_san = runner_sanitize_context(s, o->server_url))) {
        snprintf(err, err_len, "out of memory");
        return PACER_ERR_NOMEM;
    }
    if (o->manifest && o->manifest->rejected_text) {
        snprintf(st.log.where, sizeof st.log.where, "manifest");
        runner_log_text(&st.log, "rejected", o->manifest->rejected_text, strlen(o->manifest->rejected_text));
    }
    json_t *r = runner_header(o, run_id, standard, st.reps, st.warmups,
                              o->tokens > 0 ? o->tokens : s->workloads[0].max_tokens, st.san);
    json_t *jcells = json_array();
    st.drafts = receipt_drafts_new(run_id, o->drafter_passed);
    pacer_err rc = PACER_OK;
    if (o->load) {
        rc = runner_load(o, cells, st.n_cells, r, st.san, &st.log, out, err, err_len);
        st.cancelled = out->cancelled;
        st.any_incomplete = out->exit_status == 2;
        st.n_cells = 0;
    }
    for (int ci = 0; ci < st.n_cells && !st.cancelled && !rc; ci++) {
        json_t *jc;
        rc = runner_cell_run(&st, &cells[ci], ci, &jc, err, err_len);
        if (!jc) break;
        json_array_append_new(jcells, jc);
    }
    sanitize_context_free(own_san);
    if (rc) {
        json_decref(jcells), json_decref(r), json_decref(st.drafts);
        return rc;
    }
    json_object_set_new(r, "cells", jcells);
    runner_finish(r, &st, out);
    return PACER_OK;
}
