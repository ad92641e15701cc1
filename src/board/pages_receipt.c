/* pages_receipt.c - a submission's receipt page: the board's verdict, the facts a person
 * checks (model, revision, sizes, suite, hardware, settings, manifest), every cell's
 * aggregates with a chart of the medians, and every attempt with the fields of
 * receipt_attempt_fields[] (the one definition the writer and the validator use too). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/receipt.h"
#include "base/json.h"
#include "board/pages_internal.h"
#include "board/svg.h"

#define JSON_DEPTH_MAX 6

static const char *str_at(const json_t *root, const char *path) {
    const json_t *v = json_get_path(root, path);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A scalar as text: strings as they are (escaped by the caller), numbers compactly. */
static void scalar_text(const json_t *v, char *out, size_t n) {
    if (json_is_integer(v)) snprintf(out, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(out, n, "%.6g", json_real_value(v));
    else if (json_is_true(v)) snprintf(out, n, "yes");
    else if (json_is_false(v)) snprintf(out, n, "no");
    else if (json_is_null(v) || !v) snprintf(out, n, "unknown");
    else snprintf(out, n, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static bool is_scalar(const json_t *v) { return !json_is_object(v) && !json_is_array(v); }

/* Any JSON value as markup: scalars as text, arrays of scalars joined, objects as nested
 * definition lists (every key shown), arrays of objects as one list each. */
static pacer_err json_markup(buf *out, const json_t *v, int depth) {
    char t[512];
    if (depth > JSON_DEPTH_MAX) return buf_append_str(out, "\xE2\x80\xA6");
    if (is_scalar(v)) {
        if (json_is_string(v)) return html_escape_n(out, json_string_value(v), json_string_length(v));
        scalar_text(v, t, sizeof t);
        return html_escape(out, t);
    }
    pacer_err rc = PACER_OK;
    if (json_is_array(v)) {
        if (json_array_size(v) == 0) return buf_append_str(out, "none");
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e) {
            if (rc) break;
            if (i > 0) rc = buf_append_str(out, is_scalar(e) ? ", " : "");
            if (!rc) rc = json_markup(out, e, depth + 1);
        }
        return rc;
    }
    const char *key;
    const json_t *e;
    rc = buf_append_str(out, "<dl class=\"facts\">");
    json_object_foreach((json_t *)v, key, e) {
        if (rc) break;
        rc = html_appendf(out, "<dt>%s</dt><dd>", key);
        if (!rc) rc = json_markup(out, e, depth + 1);
        if (!rc) rc = buf_append_str(out, "</dd>");
    }
    return rc ? rc : buf_append_str(out, "</dl>");
}

/* <dt>LABEL</dt><dd>the value at PATH</dd>, "unknown" when absent. */
static pacer_err fact(buf *out, const char *label, const json_t *root, const char *path) {
    pacer_err rc = html_appendf(out, "<dt>%s</dt><dd>", label);
    const json_t *v = json_get_path(root, path);
    if (!rc) rc = v ? json_markup(out, v, 1) : buf_append_str(out, "unknown");
    return rc ? rc : buf_append_str(out, "</dd>");
}

static const char *state_words(const char *state) {
    static const char *const words[][2] = {
        {"public", "Published: the board checked this receipt and ranks it."},
        {"pending-checkpoint", "Valid, waiting for the public-checkpoint check; it becomes public when the check "
                               "passes."},
        {"pending-review", "Valid, but not publishable without a review (a nonstandard or incomplete run, or a "
                           "checkpoint that is not public)."},
        {"rejected", "Rejected: the receipt did not pass the board's checks."},
        {"withdrawn", "Withdrawn by its contributor or the board; it earns nothing."},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (state && strcmp(state, words[i][0]) == 0) return words[i][1];
    return "Unknown state.";
}

static pacer_err verdict(buf *out, const pages_site *site, const pages_receipt_view *v) {
    const rank_row *r = v->row;
    char when[40];
    pages_format_time(r->created_s, when, sizeof when);
    pacer_err rc = html_appendf(out, "<section class=\"card\" id=\"verdict\" aria-labelledby=\"verdict-h\"><h2 "
                                     "id=\"verdict-h\">Verdict <span class=\"state %s\">%s</span></h2><p>%s</p>",
                                v->state, v->state, state_words(v->state));
    if (!rc && json_array_size(v->reasons) > 0) {
        rc = buf_append_str(out, "<ul class=\"reasons\">");
        size_t i;
        const json_t *e;
        json_array_foreach(v->reasons, i, e) {
            if (rc) break;
            rc = html_appendf(out, "<li>%s</li>", json_is_string(e) ? json_string_value(e) : "?");
        }
        if (!rc) rc = buf_append_str(out, "</ul>");
    }
    size_t suite = 0;
    for (size_t i = 0; i < site->n_suites; i++)
        if (strcmp(site->suites[i].id, r->suite_id) == 0 && strcmp(site->suites[i].digest, r->suite_digest) == 0)
            suite = i;
    if (!rc) rc = buf_append_str(out, "<dl class=\"facts\"><dt>Contributor</dt><dd>");
    if (!rc) rc = page_contributor_link(out, site, suite, r->profile_id, r->display_name);
    if (!rc)
        rc = html_appendf(out, "</dd><dt>Submitted</dt><dd>%s</dd><dt>Complete standard run</dt><dd>%s</dd>"
                               "<dt>Submission</dt><dd class=\"mono\">%s</dd></dl>",
                          when, r->complete ? "yes" : "no", r->id);
    if (!rc && v->own && strcmp(v->state, "rejected") != 0 && strcmp(v->state, "withdrawn") != 0) {
        buf url;
        buf_init(&url, 256);
        rc = buf_append_str(&url, "/r/");
        if (!rc) rc = html_url_encode(&url, r->id, NULL);
        if (!rc)
            rc = html_appendf(out, "<form method=\"post\" action=\"%s/withdraw\"><input type=\"hidden\" "
                                   "name=\"csrf\" value=\"%s\"><button class=\"secondary\" type=\"submit\">Withdraw "
                                   "this result</button></form>",
                              url.data, v->csrf ? v->csrf : "");
        buf_free(&url);
    }
    return rc ? rc : buf_append_str(out, "</section>");
}

static pacer_err sizes(buf *out, const rank_row *r) {
    char t[32], a[32];
    if (!r->has_params_total) return buf_append_str(out, "unknown (not published with the checkpoint)");
    pages_format_params(r->params_total, t, sizeof t);
    if (!r->has_params_active) return html_appendf(out, "%s total, dense (%s per token)", t, t);
    pages_format_params(r->params_active, a, sizeof a);
    return html_appendf(out, "%s total, %s active per token", t, a);
}

static pacer_err facts_card(buf *out, const pages_site *site, const pages_receipt_view *v) {
    const json_t *d = v->receipt;
    pacer_err rc = buf_append_str(out, "<section class=\"card\" id=\"facts\" aria-labelledby=\"facts-h\"><h2 "
                                       "id=\"facts-h\">Run</h2><dl class=\"facts\"><dt>Model</dt><dd>");
    if (!rc) rc = page_model_link(out, site, str_at(d, "model.id"));
    if (!rc) rc = buf_append_str(out, "</dd>");
    if (!rc) rc = fact(out, "Revision", d, "model.revision");
    if (!rc) rc = fact(out, "Revision source", d, "model.revision_source");
    if (!rc) rc = buf_append_str(out, "<dt>Parameters</dt><dd>");
    if (!rc) rc = sizes(out, v->row);
    if (!rc) rc = buf_append_str(out, "</dd>");
    if (!rc) rc = fact(out, "Checkpoint format", d, "model.checkpoint_format");
    if (!rc) rc = fact(out, "Checkpoint files", d, "model.checkpoint_hashes");
    if (!rc) rc = fact(out, "Suite", d, "suite.id");
    if (!rc) rc = fact(out, "Suite version", d, "suite.version");
    if (!rc) rc = fact(out, "Rule version", d, "suite.rule_version");
    if (!rc) rc = html_appendf(out, "<dt>Suite digest</dt><dd class=\"mono\">%s</dd>", str_at(d, "suite.digest"));
    if (!rc) rc = fact(out, "Standard settings", d, "suite.standard");
    if (!rc) rc = fact(out, "Mode", d, "mode");
    if (!rc) rc = fact(out, "Engine", d, "engine");
    if (!rc) rc = fact(out, "Backend", d, "backend");
    if (!rc) rc = fact(out, "Platform", d, "platform");
    if (!rc) rc = fact(out, "Ranked by pacer", d, "ranked");
    if (!rc) rc = fact(out, "Why not ranked", d, "unranked_reasons");
    if (!rc) rc = fact(out, "Client", d, "client");
    if (!rc) rc = fact(out, "Run", d, "run_id");
    if (!rc) rc = fact(out, "Created (UTC)", d, "created_utc");
    if (!rc) rc = fact(out, "Exit status", d, "exit_status");
    if (!rc) rc = fact(out, "Cancelled", d, "cancelled");
    return rc ? rc : buf_append_str(out, "</dl></section>");
}

static pacer_err object_card(buf *out, const char *id, const char *title, const json_t *v) {
    pacer_err rc = html_appendf(out, "<section class=\"card\" id=\"%s\" aria-labelledby=\"%s-h\"><h2 id=\"%s-h\">%s"
                                     "</h2>",
                                id, id, id, title);
    if (!rc) rc = v ? json_markup(out, v, 1) : buf_append_str(out, "<p>unknown</p>");
    return rc ? rc : buf_append_str(out, "</section>");
}

/* "chat / greedy" */
static void cell_name(const json_t *c, char *out, size_t n) {
    snprintf(out, n, "%s / %s", json_get_str(c, "workload", "?"), json_get_str(c, "setting", "?"));
}

static pacer_err cell_chart(buf *out, const json_t *cells) {
    size_t n = json_array_size(cells);
    if (n == 0 || n > 16) return PACER_OK;
    svg_bar bars[16];
    char names[16][96], notes[16][48];
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(cells, i);
        const json_t *m = json_get_path(c, "aggregates.stream_tok_s.median");
        cell_name(c, names[i], sizeof names[i]);
        double v = json_is_number(m) ? json_number_value(m) : NAN;
        char num[32];
        pages_format_number(v, num, sizeof num);
        snprintf(notes[i], sizeof notes[i], json_is_number(m) ? "%s tok/s" : "no median (%s)",
                 json_is_number(m) ? num : json_get_str(c, "status", "incomplete"));
        bars[i] = (svg_bar){names[i], v, notes[i]};
    }
    return svg_bars_append(out, "cells-chart", "Stream-delivery median per cell", bars, n);
}

static const char *const METRICS[][2] = {
    {"stream_tok_s", "stream tok/s"}, {"first_text_ms", "first text (ms)"},
    {"duration_ms", "duration (ms)"}, {"server_tok_s", "server tok/s"},
};
static const char *const STATS[] = {"median", "min", "max", "p10", "p90", "n"};

static pacer_err aggregates_table(buf *out, const json_t *agg) {
    if (!json_is_object(agg)) return buf_append_str(out, "<p class=\"muted\">No aggregates: the cell is not complete.</p>");
    pacer_err rc = buf_append_str(out, "<div class=\"table-scroll\"><table><thead><tr><th scope=\"col\">metric</th>");
    for (size_t s = 0; s < sizeof STATS / sizeof STATS[0] && !rc; s++)
        rc = html_appendf(out, "<th scope=\"col\" class=\"num\">%s</th>", STATS[s]);
    if (!rc) rc = buf_append_str(out, "</tr></thead><tbody>");
    for (size_t m = 0; m < sizeof METRICS / sizeof METRICS[0] && !rc; m++) {
        const json_t *o = json_object_get(agg, METRICS[m][0]);
        rc = html_appendf(out, "<tr><th scope=\"row\">%s</th>", METRICS[m][1]);
        for (size_t s = 0; s < sizeof STATS / sizeof STATS[0] && !rc; s++) {
            char t[64];
            scalar_text(json_object_get(o, STATS[s]), t, sizeof t);
            rc = html_appendf(out, "<td class=\"num\">%s</td>", json_is_object(o) ? t : "-");
        }
        if (!rc) rc = buf_append_str(out, "</tr>");
    }
    return rc ? rc : buf_append_str(out, "</tbody></table></div>");
}

static pacer_err attempts_table(buf *out, const json_t *attempts) {
    pacer_err rc = buf_append_str(out, "<div class=\"table-scroll\"><table class=\"attempts\"><thead><tr>"
                                       "<th scope=\"col\">index</th><th scope=\"col\">warm-up</th><th scope=\"col\">"
                                       "seed</th>");
    for (size_t f = 0; f < receipt_attempt_field_count && !rc; f++)
        rc = html_appendf(out, "<th scope=\"col\" title=\"%s\">%s</th>", receipt_attempt_fields[f].doc,
                          receipt_attempt_fields[f].name);
    if (!rc) rc = buf_append_str(out, "</tr></thead><tbody>");
    size_t i;
    const json_t *a;
    json_array_foreach(attempts, i, a) {
        if (rc) break;
        char t[512];
        rc = buf_append_str(out, "<tr>");
        static const char *const lead[] = {"index", "warmup", "seed"};
        for (size_t k = 0; k < 3 && !rc; k++) {
            scalar_text(json_object_get(a, lead[k]), t, sizeof t);
            rc = html_appendf(out, "<td>%s</td>", json_is_null(json_object_get(a, lead[k])) ? "-" : t);
        }
        for (size_t f = 0; f < receipt_attempt_field_count && !rc; f++) {
            const json_t *v = json_object_get(a, receipt_attempt_fields[f].name);
            scalar_text(v, t, sizeof t);
            rc = html_appendf(out, "<td>%s</td>", json_is_null(v) ? "-" : t);
        }
        if (!rc) rc = buf_append_str(out, "</tr>");
    }
    return rc ? rc : buf_append_str(out, "</tbody></table></div>");
}

static pacer_err cells_card(buf *out, const json_t *cells) {
    pacer_err rc = buf_append_str(out, "<section class=\"card\" id=\"cells\" aria-labelledby=\"cells-h\"><h2 "
                                       "id=\"cells-h\">Cells</h2>");
    if (!rc) rc = cell_chart(out, cells);
    size_t i;
    const json_t *c;
    json_array_foreach(cells, i, c) {
        if (rc) break;
        char name[96], temp[32];
        cell_name(c, name, sizeof name);
        scalar_text(json_object_get(c, "temperature"), temp, sizeof temp);
        const json_t *attempts = json_object_get(c, "attempts");
        rc = html_appendf(out, "<h3>%s <span class=\"state %s\">%s</span></h3><p class=\"muted\">route %s, "
                               "temperature %s, top-k %lld, top-p %g, %lld tokens</p>",
                          name, strcmp(json_get_str(c, "status", ""), "complete") == 0 ? "public" : "rejected",
                          json_get_str(c, "status", "?"), json_get_str(c, "route", "?"), temp,
                          (long long)json_get_int(c, "top_k", 0), json_get_num(c, "top_p", 0),
                          (long long)json_get_int(c, "max_tokens", 0));
        if (!rc && json_array_size(json_object_get(c, "reasons")) > 0) {
            rc = buf_append_str(out, "<ul class=\"reasons\">");
            size_t j;
            const json_t *e;
            json_array_foreach(json_object_get(c, "reasons"), j, e) {
                if (rc) break;
                rc = html_appendf(out, "<li>%s</li>", json_is_string(e) ? json_string_value(e) : "?");
            }
            if (!rc) rc = buf_append_str(out, "</ul>");
        }
        if (!rc) rc = aggregates_table(out, json_object_get(c, "aggregates"));
        if (!rc)
            rc = html_appendf(out, "<details><summary>The %zu attempts of %s</summary>", json_array_size(attempts), name);
        if (!rc) rc = attempts_table(out, attempts);
        if (!rc) rc = buf_append_str(out, "</details>");
    }
    return rc ? rc : buf_append_str(out, "</section>");
}

pacer_err pages_receipt(buf *out, const pages_site *site, const pages_receipt_view *v) {
    const rank_row *r = v->row;
    char title[400];
    snprintf(title, sizeof title, "%s on %s", r->model_id && *r->model_id ? r->model_id : "A result",
             r->hardware && *r->hardware ? r->hardware : "unknown hardware");
    pacer_err rc = page_begin(out, title, PAGE_NAV_NONE);
    if (!rc)
        rc = html_appendf(out, "<h1>%s</h1><p class=\"lead\">%s \xC2\xB7 %s backend \xC2\xB7 %s run</p>", title,
                          r->suite_id, r->backend && *r->backend ? r->backend : "unknown",
                          json_get_str(v->receipt, "mode", "unknown"));
    if (!rc) rc = verdict(out, site, v);
    if (!rc) rc = buf_append_str(out, "<div class=\"grid2\">");
    if (!rc) rc = facts_card(out, site, v);
    if (!rc) rc = buf_append_str(out, "<div class=\"stack\">");
    if (!rc) rc = object_card(out, "hardware", "Hardware", json_object_get(v->receipt, "hardware"));
    if (!rc) rc = object_card(out, "settings", "Settings", json_object_get(v->receipt, "settings"));
    if (!rc) rc = object_card(out, "manifest", "Manifest", json_object_get(v->receipt, "manifest"));
    if (!rc) rc = buf_append_str(out, "</div></div>");
    if (!rc) rc = cells_card(out, json_object_get(v->receipt, "cells"));
    return rc ? rc : page_end(out);
}
