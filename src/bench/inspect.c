/* inspect.c - renders a receipt for people. Header labels come from receipt_top_fields;
 * attempt reasons from the attempt field table's "reason" and "status" fields. */
#include "bench/inspect.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "bench/rank.h"
#include "bench/receipt.h"
#include "bench/suite.h"
#include "bench/runlog.h"

static const char *agg_median(const json_t *cell, const char *metric, char *tmp, size_t n) {
    json_t *m = json_object_get(json_object_get(cell, "aggregates"), metric);
    if (!json_is_object(m)) return "-";
    snprintf(tmp, n, "%.1f", json_get_num(m, "median", 0));
    return tmp;
}

pacer_err inspect_render_table(const json_t *r, buf *out) {
    pacer_err rc = buf_appendf(out, "%-10s %-10s %-12s %10s %12s %12s %10s  %s\n", "workload", "setting", "route",
                               "tok/s", "first ms", "duration ms", "server", "status");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "cells"), i, c) {
        char a[32], b[32], d[32], e[32];
        rc = rc ? rc : buf_appendf(out, "%-10s %-10s %-12s %10s %12s %12s %10s  %s\n", json_get_str(c, "workload", "?"),
                                   json_get_str(c, "setting", "?"), json_get_str(c, "route", "?"),
                                   agg_median(c, "stream_tok_s", a, sizeof a), agg_median(c, "first_text_ms", b, sizeof b),
                                   agg_median(c, "duration_ms", d, sizeof d), agg_median(c, "server_tok_s", e, sizeof e),
                                   json_get_str(c, "status", "?"));
    }
    return rc;
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

pacer_err inspect_render(const json_t *r, const json_t *drafts, buf *out) {
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
    rc = rc ? rc : buf_append_str(out, "\n");
    rc = rc ? rc : render_facts(r, out);
    rc = rc ? rc : buf_append_str(out, "\n");
    rc = rc ? rc : inspect_render_table(r, out);

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
    /* receipts keep an excerpt; the server's words in full stay on the machine that ran it */
    if (server_text)
        rc = rc ? rc : buf_appendf(out, "\nserver messages in full: ~/" RUNLOG_ROOT "/%s/" RUNLOG_SERVER_FILE
                                        " (on the machine that ran the benchmark; never published)\n",
                                   json_get_str(r, "run_id", "?"));
    if (drafts) {
        json_t *t = json_object_get(drafts, "totals");
        rc = rc ? rc : buf_appendf(out, "\ndrafts: drafter %s", json_is_true(json_object_get(drafts, "drafter_passed")) ? "passed" : "not passed");
        static const char *const keys[] = {"verify_rounds", "draft_proposed", "draft_accepted"};
        for (int k = 0; k < 3; k++) {
            json_t *x = json_object_get(t, keys[k]);
            if (json_is_integer(x)) rc = rc ? rc : buf_appendf(out, ", %s %lld", keys[k], (long long)json_integer_value(x));
            else rc = rc ? rc : buf_appendf(out, ", %s n/a", keys[k]);
        }
        rc = rc ? rc : buf_append_str(out, "\n");
        json_array_foreach(json_object_get(drafts, "notes"), i, v)
            rc = rc ? rc : buf_appendf(out, "  note: %s\n", json_string_value(v));
    }
    return rc;
}
