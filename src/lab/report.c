/* report.c - report.json from run.json and the records: samples in plan order, the samples
 * still to run, and per configuration x workload the medians and the exclusions. */
#include "lab/report.h"

#include <stdlib.h>
#include <string.h>

#include "bench/stats.h"

/* A figure of the record that the report summarizes: name, and how to read it. */
typedef struct report_metric {
    const char *name;
    bool (*get)(const lab_record *r, double *v);
} report_metric;

static bool m_prefill(const lab_record *r, double *v) { return r->has_prefill_tok_s && (*v = r->prefill_tok_s, true); }
static bool m_decode(const lab_record *r, double *v) { return r->has_decode_tok_s && (*v = r->decode_tok_s, true); }
static bool m_sprefill(const lab_record *r, double *v) {
    return r->has_server_prefill_tok_s && (*v = r->server_prefill_tok_s, true);
}
static bool m_sdecode(const lab_record *r, double *v) { return r->has_server_decode_tok_s && (*v = r->server_decode_tok_s, true); }
static bool m_first(const lab_record *r, double *v) { return r->has_first_text && (*v = (double)r->first_text_ns / 1e9, true); }
static bool m_completion(const lab_record *r, double *v) { return (*v = (double)r->completion_ns / 1e9, true); }
static bool m_tokens(const lab_record *r, double *v) { return r->has_usage && (*v = (double)r->decode_tokens, true); }
static bool m_prompt(const lab_record *r, double *v) { return r->has_usage && (*v = (double)r->prefill_tokens, true); }

static const report_metric report_metrics[] = {
    {"prefill_tok_s", m_prefill},          {"decode_tok_s", m_decode},     {"server_prefill_tok_s", m_sprefill},
    {"server_decode_tok_s", m_sdecode},    {"first_text_s", m_first},      {"completion_s", m_completion},
    {"answer_tokens", m_tokens},           {"prefill_tokens", m_prompt},
};
#define N_METRICS (sizeof report_metrics / sizeof report_metrics[0])

/* Why a record stays out of medians, as the report counts it. */
static const char *exclusion(const lab_record *r) {
    if (r->validity == LAB_INVALIDATED) return "invalidated";
    if (r->finish == LAB_FINISH_ERROR) return "error";
    if (r->finish == LAB_FINISH_CYCLE) return "cycle";
    if (r->finish == LAB_FINISH_CAPPED) return "capped";
    if (r->validity == LAB_CONTENT_INVALID) return "content_invalid";
    return NULL;
}

static const lab_record *find(const lab_record *recs, size_t n, const char *id) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(recs[i].id, id) == 0) return &recs[i];
    return NULL;
}

json_t *lab_report_stats(const double *values, size_t n) {
    stats_summary s;
    return n && stats_summarize(values, n, &s)
               ? json_pack("{s:f,s:f,s:f,s:I}", "median", s.median, "min", s.min, "max", s.max, "n", (json_int_t)n)
               : json_null();
}

/* {"median", "min", "max", "n"} of one metric over the cell's median samples, or null. */
static json_t *metric_summary(const lab_record *const *in, size_t n, const report_metric *m) {
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++)
        if (m->get(in[i], &v[k])) k++;
    json_t *o = v ? lab_report_stats(v, k) : json_null();
    free(v);
    return o;
}

static json_t *cell(const char *config, const char *workload, const lab_record *const *all, size_t n_all) {
    const lab_record **in = malloc((n_all ? n_all : 1) * sizeof *in);
    json_t *excluded = json_pack("{s:i,s:i,s:i,s:i,s:i}", "capped", 0, "cycle", 0, "content_invalid", 0, "invalidated", 0,
                                 "error", 0);
    json_t *ids = json_array(), *out_ids = json_array();
    size_t k = 0;
    for (size_t i = 0; in && i < n_all; i++) {
        const lab_record *r = all[i];
        if (strcmp(r->config, config) || strcmp(r->workload, workload)) continue;
        const char *why = exclusion(r);
        if (!why) {
            in[k++] = r;
            json_array_append_new(ids, json_string(r->id));
        } else {
            json_object_set_new(excluded, why, json_integer(json_integer_value(json_object_get(excluded, why)) + 1));
            json_array_append_new(out_ids, json_pack("{s:s,s:s}", "id", r->id, "why", why));
        }
    }
    json_t *metrics = json_object();
    for (size_t m = 0; m < N_METRICS; m++) json_object_set_new(metrics, report_metrics[m].name, metric_summary(in, k, &report_metrics[m]));
    free(in);
    return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "config", config, "workload", workload, "in_median", ids, "excluded",
                     excluded, "excluded_samples", out_ids, "metrics", metrics);
}

/* Per configuration: SVG answers checked and found valid (rates reported apart). */
static json_t *svg_rates(const json_t *configs, const lab_record *const *all, size_t n) {
    json_t *out = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        int total = 0, valid = 0;
        for (size_t k = 0; name && k < n; k++) {
            if (strcmp(all[k]->config, name) || strcmp(all[k]->kind, "svg") || !all[k]->svg) continue;
            total++;
            valid += json_is_true(json_object_get(all[k]->svg, "valid"));
        }
        if (total) json_array_append_new(out, json_pack("{s:s,s:i,s:i}", "config", name, "checked", total, "valid", valid));
    }
    return out;
}

json_t *lab_report_build(const json_t *run, const lab_record *records, size_t n) {
    const json_t *plan = json_object_get(run, "plan");
    const lab_record **ordered = malloc((json_array_size(plan) + 1) * sizeof *ordered);
    if (!ordered) return NULL;
    json_t *samples = json_array(), *pending = json_array(), *cells = json_array();
    size_t k = 0, i;
    json_t *id;
    json_array_foreach(plan, i, id) {
        const lab_record *r = find(records, n, json_string_value(id) ? json_string_value(id) : "");
        if (!r) {
            json_array_append_new(pending, json_incref(id));
            continue;
        }
        ordered[k++] = r;
        json_array_append_new(samples, lab_record_to_json(r));
    }
    const json_t *configs = json_object_get(run, "configurations");
    const json_t *cases = json_object_get(json_object_get(json_object_get(run, "signature"), "selections"), "cases");
    size_t ci, wi;
    json_t *c, *w;
    json_array_foreach(configs, ci, c) json_array_foreach(cases, wi, w) {
        const char *cn = json_string_value(json_object_get(c, "name")), *wn = json_string_value(w);
        if (cn && wn) json_array_append_new(cells, cell(cn, wn, ordered, k));
    }
    json_t *rep = json_pack("{s:s,s:i,s:O,s:o,s:o,s:o,s:o}", "format", LAB_REPORT_FORMAT, "format_version", LAB_FORMAT_VERSION,
                            "run", run, "samples", samples, "pending", pending, "cells", cells, "svg", svg_rates(configs, ordered, k));
    free(ordered);
    return rep;
}
