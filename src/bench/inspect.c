/* inspect.c - renders a receipt for people. Header labels come from receipt_top_fields;
 * attempt reasons from the attempt field table's "reason" and "status" fields. */
#include "bench/inspect.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "bench/load.h"
#include "bench/rank.h"
#include "bench/receipt.h"
#include "bench/suite.h"
#include "bench/runlog.h"

/* The median of metric `m` in `cell`, printed with the metric's format into tmp; NULL when
 * the cell has no aggregate for it. */
static const char *agg_median(const json_t *cell, const receipt_metric *m, char *tmp, size_t n) {
    json_t *v = json_object_get(json_object_get(cell, "aggregates"), m->name);
    if (!json_is_object(v)) return NULL;
    snprintf(tmp, n, m->format, json_get_num(v, "median", 0));
    return tmp;
}

/* "p50/p99" of a level metric, in its unit; "-" when absent. */
static const char *load_pair(const json_t *agg, const char *metric, char *tmp, size_t n) {
    json_t *m = json_object_get(agg, metric);
    if (!json_is_object(m)) return "-";
    snprintf(tmp, n, "%.1f/%.1f", json_get_num(m, "p50", 0), json_get_num(m, "p99", 0));
    return tmp;
}

/* The load sweep: one row per level (figures from load_metrics, throughput, goodput, the
 * client's own cost and whether it limited the level), then each level's calibration. */
static pacer_err render_load(const json_t *r, buf *out) {
    const json_t *sec = json_object_get(r, "load"), *cal = json_get_path(r, "client.calibration.levels");
    bool rate = strcmp(json_get_str(sec, "kind", ""), "rate") == 0;
    pacer_err rc = buf_appendf(out, "load sweep by %s: workload %s, setting %s, %lld tokens%s\n", rate ? "request rate" : "concurrency",
                               json_get_str(sec, "workload", "?"), json_get_str(sec, "setting", "?"),
                               (long long)json_get_int(sec, "max_tokens", 0), rate ? "; Poisson arrivals" : "");
    json_t *slo = json_object_get(sec, "slo");
    if (!rc && json_is_object(slo)) {
        char t[32] = "any", g[32] = "any";
        if (json_is_number(json_object_get(slo, "ttft_ms"))) snprintf(t, sizeof t, "%g ms", json_get_num(slo, "ttft_ms", 0));
        if (json_is_number(json_object_get(slo, "itl_ms"))) snprintf(g, sizeof g, "%g ms", json_get_num(slo, "itl_ms", 0));
        rc = buf_appendf(out, "goodput SLO: first text within %s, every gap between deliveries within %s\n", t, g);
    }
    char ml[4][24];
    for (int k = 0; k < 4; k++) snprintf(ml[k], sizeof ml[k], "%s p50/p99", load_metrics[k == 3 ? 4 : k].label);
    rc = rc ? rc : buf_appendf(out, "%-8s %9s %8s %9s %15s %15s %15s %15s %8s %10s  %s\n", rate ? "rate/s" : "streams",
                               "ok/all", "req/s", "tok/s", ml[0], ml[1], ml[2], ml[3], "good", "deliv/s", "status");
    size_t i;
    json_t *lv;
    json_array_foreach(json_object_get(sec, "levels"), i, lv) {
        json_t *agg = json_object_get(lv, "aggregates"), *tp = json_object_get(agg, "throughput");
        json_t *gp = json_object_get(agg, "goodput");
        char a[4][40], level[24], good[24] = "-";
        if (rate) snprintf(level, sizeof level, "%g", json_get_num(lv, "rate", 0));
        else snprintf(level, sizeof level, "%lld", (long long)json_get_int(lv, "concurrency", 0));
        if (json_is_object(gp)) snprintf(good, sizeof good, "%lld", (long long)json_get_int(gp, "good", 0));
        const char *sched = json_get_str(lv, "client_scheduling", "normal");
        rc = rc ? rc : buf_appendf(out, "%-8s %4lld/%-4zu %8.2f %9.1f %15s %15s %15s %15s %8s %10.0f  %s%s%s%s\n", level,
                                   (long long)json_get_int(tp, "requests_ok", 0), json_array_size(json_object_get(lv, "attempts")),
                                   json_get_num(tp, "requests_per_s", 0), json_get_num(tp, "output_tok_s", 0),
                                   load_pair(agg, "ttft_ms", a[0], 40), load_pair(agg, "itl_ms", a[1], 40),
                                   load_pair(agg, "itl_token_ms", a[2], 40), load_pair(agg, "e2e_ms", a[3], 40), good,
                                   json_get_num(tp, "deliveries_per_s", 0), json_get_str(lv, "status", "?"),
                                   json_is_true(json_object_get(lv, "client_limited")) ? ", client-limited" : "",
                                   strcmp(sched, "normal") ? ", client " : "", strcmp(sched, "normal") ? sched : "");
    }
    json_array_foreach(cal, i, lv) {
        json_t *per = json_object_get(lv, "cpu_ns_per_delivery");
        char cost[32] = "-";
        if (json_is_number(per)) snprintf(cost, sizeof cost, "%.3f us", json_number_value(per) / 1e3);
        rc = rc ? rc : buf_appendf(out, "%s level %zu calibration: %lld streams, %s CPU per delivery, max %.0f deliveries/s\n",
                                   i ? "  " : "client", i + 1, (long long)json_get_int(lv, "streams", 0), cost,
                                   json_get_num(lv, "max_deliveries_per_s", 0));
    }
    return rc;
}

/* A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or a line break. */
static pacer_err csv_field(buf *out, const char *v, bool last) {
    pacer_err rc;
    if (strpbrk(v, ",\"\r\n")) {
        rc = buf_append_str(out, "\"");
        for (const char *p = v; *p && !rc; p++) rc = *p == '"' ? buf_append_str(out, "\"\"") : buf_append(out, p, 1);
        rc = rc ? rc : buf_append_str(out, "\"");
    } else {
        rc = buf_append_str(out, v);
    }
    return rc ? rc : buf_append_str(out, last ? "\n" : ",");
}

/* One row: the three names, a value (or NULL) per metric, the status; or the header row. */
static pacer_err cells_row(buf *out, inspect_format f, const char *const names[3], const char *const *vals,
                           const char *status, bool header) {
    pacer_err rc = PACER_OK;
    if (f == INSPECT_CSV) {
        for (int k = 0; k < 3 && !rc; k++) rc = csv_field(out, names[k], false);
        for (size_t k = 0; k < receipt_metric_count && !rc; k++)
            rc = csv_field(out, header ? receipt_metrics[k].name : vals[k] ? vals[k] : "", false);
        return rc ? rc : csv_field(out, status, true);
    }
    if (f == INSPECT_MD) {
        rc = buf_appendf(out, "| %s | %s | %s |", names[0], names[1], names[2]);
        for (size_t k = 0; k < receipt_metric_count && !rc; k++)
            rc = buf_appendf(out, " %s |", header ? receipt_metrics[k].label : vals[k] ? vals[k] : "-");
        rc = rc ? rc : buf_appendf(out, " %s |\n", status);
        if (!rc && header) {
            rc = buf_append_str(out, "|---|---|---|");
            for (size_t k = 0; k < receipt_metric_count && !rc; k++) rc = buf_append_str(out, "---:|");
            rc = rc ? rc : buf_append_str(out, "---|\n");
        }
        return rc;
    }
    rc = buf_appendf(out, "%-10s %-10s %-12s", names[0], names[1], names[2]);
    for (size_t k = 0; k < receipt_metric_count && !rc; k++)
        rc = buf_appendf(out, " %*s", receipt_metrics[k].width,
                         header ? receipt_metrics[k].label : vals[k] ? vals[k] : "-");
    return rc ? rc : buf_appendf(out, "  %s\n", status);
}

pacer_err inspect_render_cells(const json_t *r, inspect_format f, buf *out) {
    static const char *const head[3] = {"workload", "setting", "route"};
    pacer_err rc = cells_row(out, f, head, NULL, "status", true);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "cells"), i, c) {
        const char *names[3] = {json_get_str(c, "workload", "?"), json_get_str(c, "setting", "?"),
                                json_get_str(c, "route", "?")};
        char tmp[8][32];
        const char *vals[8] = {0};
        for (size_t k = 0; k < receipt_metric_count && k < 8; k++)
            vals[k] = agg_median(c, &receipt_metrics[k], tmp[k], sizeof tmp[k]);
        rc = rc ? rc : cells_row(out, f, names, vals, json_get_str(c, "status", "?"), false);
    }
    return rc;
}

pacer_err inspect_render_table(const json_t *r, buf *out) {
    if (json_is_object(json_object_get(r, "load")) && json_array_size(json_object_get(r, "cells")) == 0)
        return render_load(r, out);
    return inspect_render_cells(r, INSPECT_TEXT, out);
}

bool inspect_format_parse(const char *name, inspect_format *f) {
    static const char *const names[] = {"text", "json", "csv", "md"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) { *f = (inspect_format)i; return true; }
    return false;
}

/* The checkpoint (format and weight files) and the read sample, labelled from the receipt's
 * fact table; nothing when the receipt has neither. */
static pacer_err render_facts(const json_t *r, buf *out) {
    pacer_err rc = PACER_OK;
    const receipt_fact_field *f = receipt_fact_find("model.checkpoint_format");
    json_t *fmt = json_get_path(r, f->path), *hashes = json_get_path(r, "model.checkpoint_hashes");
    if (json_is_string(fmt)) {
        size_t n = json_array_size(hashes), i;
        json_t *h;
        rc = buf_appendf(out, "%-14s %s, %zu weight file%s", f->label, json_string_value(fmt), n, n == 1 ? "" : "s");
        json_array_foreach(hashes, i, h) {
            if (i == 3) { rc = rc ? rc : buf_appendf(out, "; ..."); break; }
            rc = rc ? rc : buf_appendf(out, "%s %s (sha256 %.12s)", i ? ";" : ":", json_get_str(h, "file", "?"),
                                       json_get_str(h, "sha256", "?"));
        }
        rc = rc ? rc : buf_append_str(out, "\n");
    }
    f = receipt_fact_find("hardware.volume.read_sample");
    json_t *rs = json_get_path(r, f->path);
    if (!rc && json_is_object(rs)) {
        json_t *skipped = json_object_get(rs, "skipped");
        if (json_is_string(skipped))
            rc = buf_appendf(out, "%-14s skipped: %s\n", f->label, json_string_value(skipped));
        else
            rc = buf_appendf(out, "%-14s %.3f GB/s (%s, %.1f MB in %.3f s, uncached)\n", f->label,
                             json_get_num(rs, "gb_per_s", 0), json_get_str(rs, "method", "?"),
                             json_get_num(rs, "bytes", 0) / 1e6, json_get_num(rs, "seconds", 0));
    }
    return rc;
}

/* The run's provenance: top fields, suite, model, backend, platform, hardware. */
static pacer_err render_header(const json_t *r, buf *out) {
    pacer_err rc = PACER_OK;
    json_t *s = json_object_get(r, "suite"), *m = json_object_get(r, "model"), *hw = json_object_get(r, "hardware");
    for (size_t i = 0; i < receipt_top_field_count && !rc; i++) {
        const receipt_top_field *f = &receipt_top_fields[i];
        json_t *v = json_object_get(r, f->name);
        if (!f->label) continue;
        if (json_is_string(v)) rc = buf_appendf(out, "%-14s %s\n", f->label, json_string_value(v));
        else if (json_is_integer(v)) rc = buf_appendf(out, "%-14s %lld\n", f->label, (long long)json_integer_value(v));
    }
    rc = rc ? rc : buf_appendf(out, "%-14s %s (v%lld rules, %s)\n%-14s %s\n", "suite", json_get_str(s, "id", "?"),
                               (long long)json_get_int(s, "rule_version", 0),
                               json_is_true(json_object_get(s, "standard")) ? "standard" : "non-standard", "digest",
                               json_get_str(s, "digest", "?"));
    rc = rc ? rc : buf_appendf(out, "%-14s %s (served as %s, revision %s)\n", "model", json_get_str(m, "id", "?"),
                               json_get_str(m, "served_model_id", "-"), json_get_str(m, "revision", "unknown"));
    rc = rc ? rc : buf_appendf(out, "%-14s %s (%s)\n%-14s %s (%s)\n", "backend",
                               json_get_str(json_object_get(r, "backend"), "name", "?"),
                               json_get_str(json_object_get(r, "backend"), "source", "?"), "platform",
                               json_get_str(json_object_get(r, "platform"), "name", "?"),
                               json_get_str(json_object_get(r, "platform"), "source", "?"));
    rc = rc ? rc : buf_appendf(out, "%-14s source %s", "hardware", json_get_str(hw, "source", "unknown"));
    json_t *cpu = json_object_get(hw, "cpu");
    if (!rc && json_is_object(cpu)) rc = buf_appendf(out, ", %s", json_get_str(cpu, "model", "?"));
    size_t gi;
    json_t *g;
    json_array_foreach(json_object_get(hw, "gpus"), gi, g) if (!rc) rc = buf_appendf(out, ", %s", json_get_str(g, "name", "?"));
    return rc ? rc : buf_append_str(out, "\n");
}

/* The warnings: why unranked, public warnings, failed attempts, load levels' reasons, and
 * where the server's words are kept in full. */
static pacer_err render_warnings(const json_t *r, buf *out) {
    pacer_err rc = PACER_OK;
    bool header = false;
    size_t i;
    json_t *v;
    if (!json_is_true(json_object_get(r, "ranked"))) {
        rc = rc ? rc : buf_append_str(out, "\nwarnings:\n");
        header = true;
        json_array_foreach(json_object_get(r, "unranked_reasons"), i, v)
            rc = rc ? rc : buf_appendf(out, "  unranked: %s\n", json_string_value(v));
    }
    json_t *pub = json_array();
    rank_public_warnings(r, pub);
    suite rank_suite;
    char dig[65];
    const char *sid = json_get_str(json_object_get(r, "suite"), "id", "");
    bool s_ok = suite_builtin_digest(sid, dig) == PACER_OK && suite_load(sid, &rank_suite, NULL, 0) == PACER_OK;
    const suite *s_loaded = s_ok ? &rank_suite : NULL;
    if (json_is_true(json_object_get(r, "ranked")) && s_loaded) {
        /* a receipt marked ranked that the ranking rules do not rank: said, not hidden */
        json_t *why = json_array();
        rank_reasons(r, s_loaded, why);
        json_t *w;
        size_t k;
        json_array_foreach(why, k, w) {
            char line[256];
            snprintf(line, sizeof line, "marked ranked, but the ranking rules say: %s", json_string_value(w));
            json_array_append_new(pub, json_string(line));
        }
        json_decref(why);
    }
    if (s_ok) suite_free(&rank_suite);
    if (json_array_size(pub) && !header) { rc = rc ? rc : buf_append_str(out, "\nwarnings:\n"); header = true; }
    json_array_foreach(pub, i, v) rc = rc ? rc : buf_appendf(out, "  %s\n", json_string_value(v));
    json_decref(pub);
    json_t *c;
    bool server_text = strcmp(json_get_str(json_object_get(r, "manifest"), "status", ""), "rejected") == 0;
    json_array_foreach(json_object_get(r, "cells"), i, c) {
        size_t k;
        json_t *a;
        json_array_foreach(json_object_get(c, "attempts"), k, a) {
            const char *st = json_get_str(a, "status", "?"), *msg = json_get_str(a, "server_message", "");
            server_text |= strcmp(json_get_str(a, "finish_reason", ""), "other") == 0;
            if (strcmp(st, "ok") == 0) continue;
            server_text = true;
            if (!header) { rc = rc ? rc : buf_append_str(out, "\nwarnings:\n"); header = true; }
            rc = rc ? rc : buf_appendf(out, "  %s/%s %s %lld: %s: %s%s%s\n", json_get_str(c, "workload", "?"),
                                       json_get_str(c, "setting", "?"),
                                       json_is_true(json_object_get(a, "warmup")) ? "warm-up" : "repetition",
                                       (long long)json_get_int(a, "index", 0), st, json_get_str(a, "reason", ""),
                                       *msg ? ": " : "", msg);
        }
    }
    json_array_foreach(json_get_path(r, "load.levels"), i, c) {
        size_t k;
        json_t *why;
        json_array_foreach(json_object_get(c, "reasons"), k, why) {
            if (!header) { rc = rc ? rc : buf_append_str(out, "\nwarnings:\n"); header = true; }
            rc = rc ? rc : buf_appendf(out, "  level %zu: %s\n", i + 1, json_string_value(why));
            server_text = true;
        }
    }
    /* receipts keep an excerpt; the server's words in full stay on the machine that ran it */
    if (server_text)
        rc = rc ? rc : buf_appendf(out, "\nserver messages in full: ~/" RUNLOG_ROOT "/%s/" RUNLOG_SERVER_FILE
                                        " (on the machine that ran the benchmark; never published)\n",
                                   json_get_str(r, "run_id", "?"));
    return rc;
}

/* The drafts file's totals and notes. */
static pacer_err render_drafts(const json_t *drafts, buf *out) {
    json_t *t = json_object_get(drafts, "totals");
    pacer_err rc = buf_appendf(out, "\ndrafts: drafter %s",
                               json_is_true(json_object_get(drafts, "drafter_passed")) ? "passed" : "not passed");
    static const char *const keys[] = {"verify_rounds", "draft_proposed", "draft_accepted"};
    for (int k = 0; k < 3; k++) {
        json_t *x = json_object_get(t, keys[k]);
        if (json_is_integer(x)) rc = rc ? rc : buf_appendf(out, ", %s %lld", keys[k], (long long)json_integer_value(x));
        else rc = rc ? rc : buf_appendf(out, ", %s n/a", keys[k]);
    }
    rc = rc ? rc : buf_append_str(out, "\n");
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(drafts, "notes"), i, v)
        rc = rc ? rc : buf_appendf(out, "  note: %s\n", json_string_value(v));
    return rc;
}

pacer_err inspect_render(const json_t *r, const json_t *drafts, buf *out) {
    pacer_err rc = render_header(r, out);
    rc = rc ? rc : render_facts(r, out);
    rc = rc ? rc : buf_append_str(out, "\n");
    rc = rc ? rc : inspect_render_table(r, out);
    rc = rc ? rc : render_warnings(r, out);
    return rc || !drafts ? rc : render_drafts(drafts, out);
}
