/* pages_profile.c - a contributor's profile (figures, honours, trophies with the progress to
 * the next milestone, best speed per model, the paginated history), the upload form with
 * its in-browser review, the answer to an upload, and error pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "board/pages_internal.h"
#include "board/svg.h"

#define MODEL_BARS 8

static pacer_err honours(buf *out, const rank_profile *p) {
    pacer_err rc = PACER_OK;
    if (p->top_contributor)
        rc = buf_append_str(out, "<span class=\"honour\" id=\"honour-top\" title=\"Most published results of this "
                                 "suite (shared by equal leaders)\">Top contributor</span>");
    if (!rc && p->speed_leader)
        rc = buf_append_str(out, "<span class=\"honour\" id=\"honour-speed\" title=\"Highest greedy-chat median of "
                                 "this suite (shared by equal leaders)\">Speed leader</span>");
    return rc;
}

static pacer_err figures(buf *out, const pages_site *site, const rank_profile *p, const rank_row *rows) {
    pacer_err rc = html_appendf(out, "<section class=\"card\" id=\"figures\" aria-labelledby=\"figures-h\"><h2 "
                                     "id=\"figures-h\">Figures</h2><dl class=\"facts\"><dt>Published results</dt><dd "
                                     "data-count=\"runs\">%lld</dd><dt>Models</dt><dd data-count=\"models\">%lld</dd>"
                                     "<dt>Hardware</dt><dd data-count=\"hardware\">%lld</dd><dt>Personal best</dt><dd>",
                                (long long)p->runs, (long long)p->models, (long long)p->hardware);
    if (!rc && p->has_best) {
        const rank_row *r = &rows[p->best_row];
        char tok[32], text[64];
        pages_format_number(p->best_tok_s, tok, sizeof tok);
        snprintf(text, sizeof text, "%s tok/s", tok);
        rc = page_receipt_link(out, r->id, text);
        if (!rc) rc = html_appendf(out, " <span class=\"muted\">%s on %s</span>", r->model_id, r->hardware);
    } else if (!rc) {
        rc = buf_append_str(out, "no ranked speed yet");
    }
    (void)site;
    return rc ? rc : buf_append_str(out, "</dd></dl></section>");
}

static pacer_err trophies(buf *out, const rank_profile *p) {
    pacer_err rc = buf_append_str(out, "<section class=\"card\" id=\"trophies\" aria-labelledby=\"trophies-h\"><h2 "
                                       "id=\"trophies-h\">Trophies</h2><ul class=\"trophies\">");
    for (size_t t = 0; t < rank_trophy_count && !rc; t++) {
        const rank_trophy *tr = &rank_trophies[t];
        rc = html_appendf(out, "<li class=\"%s%s\" data-trophy=\"%s\"><strong>%s</strong><small>%s%s</small></li>",
                          tr->key, p->earned[t] ? " earned" : "", tr->key, tr->name, p->earned[t] ? "" : "not yet: ",
                          tr->what);
    }
    if (!rc) rc = buf_append_str(out, "</ul>");
    if (!rc && p->next_milestone) {
        const char *next = "";
        for (size_t t = 0; t < rank_trophy_count; t++)
            if (rank_trophies[t].measure == RANK_MEASURE_RUNS && rank_trophies[t].need == p->next_milestone)
                next = rank_trophies[t].name;
        char label[160];
        snprintf(label, sizeof label, "%lld of %lld published results to %s", (long long)p->runs,
                 (long long)p->next_milestone, next);
        double span = (double)(p->next_milestone - p->prev_milestone);
        rc = html_appendf(out, "<p id=\"milestone\">Next milestone: %s ", label);
        if (!rc) rc = svg_progress_append(out, span > 0 ? (double)(p->runs - p->prev_milestone) / span : 0, label);
        if (!rc) rc = buf_append_str(out, "</p>");
    } else if (!rc) {
        rc = buf_append_str(out, "<p id=\"milestone\">Every milestone reached.</p>");
    }
    return rc ? rc : buf_append_str(out, "</section>");
}

/* The profile's best greedy-chat median per model, best first, as bars. */
static pacer_err model_bars(buf *out, const rank_row *const *mine, size_t m) {
    svg_bar bars[MODEL_BARS];
    char notes[MODEL_BARS][48];
    size_t k = 0;
    const rank_row *best[MODEL_BARS];
    for (size_t i = 0; i < m; i++) {
        const rank_row *r = mine[i];
        if (!rank_row_has_speed(r)) continue;
        size_t j = 0;
        while (j < k && strcmp(best[j]->model_id, r->model_id) != 0) j++;
        if (j < k) {
            if (r->chat_greedy_tok_s > best[j]->chat_greedy_tok_s) best[j] = r;
        } else if (k < MODEL_BARS) {
            best[k++] = r;
        }
    }
    if (k == 0) return PACER_OK;
    for (size_t i = 1; i < k; i++) /* a few bars: insertion sort, fastest first */
        for (size_t j = i; j > 0 && best[j]->chat_greedy_tok_s > best[j - 1]->chat_greedy_tok_s; j--) {
            const rank_row *t = best[j];
            best[j] = best[j - 1];
            best[j - 1] = t;
        }
    for (size_t i = 0; i < k; i++) {
        char tok[32];
        pages_format_number(best[i]->chat_greedy_tok_s, tok, sizeof tok);
        snprintf(notes[i], sizeof notes[i], "%s tok/s", tok);
        bars[i] = (svg_bar){best[i]->model_id, best[i]->chat_greedy_tok_s, notes[i]};
    }
    pacer_err rc = buf_append_str(out, "<section class=\"card\" id=\"models\" aria-labelledby=\"models-h\"><h2 "
                                       "id=\"models-h\">Best greedy-chat median per model</h2>");
    if (!rc) rc = svg_bars_append(out, "models-chart", "Best greedy-chat median per model", bars, k);
    return rc ? rc : buf_append_str(out, "</section>");
}

static pacer_err history(buf *out, const pages_site *site, const pages_query *q, const char *profile_id,
                         const rank_row *const *mine, size_t m) {
    size_t pages = m ? (m + PAGES_HISTORY_PAGE - 1) / PAGES_HISTORY_PAGE : 1, page = q->page < pages ? q->page : pages - 1;
    pacer_err rc = html_appendf(out, "<section class=\"card\" id=\"history\" aria-labelledby=\"history-h\"><h2 "
                                     "id=\"history-h\">History</h2><p class=\"muted\">Every published result, newest "
                                     "first: page %zu of %zu.</p><table><thead><tr><th scope=\"col\">When</th><th "
                                     "scope=\"col\">Model</th><th scope=\"col\">Hardware</th><th scope=\"col\" "
                                     "class=\"num\">Greedy chat</th></tr></thead><tbody>",
                                page + 1, pages);
    for (size_t i = page * PAGES_HISTORY_PAGE; i < m && i < (page + 1) * PAGES_HISTORY_PAGE && !rc; i++) {
        const rank_row *r = mine[i];
        char when[40], tok[32] = "-";
        pages_format_date(r->created_s, when, sizeof when);
        if (rank_row_has_speed(r)) pages_format_number(r->chat_greedy_tok_s, tok, sizeof tok);
        rc = html_appendf(out, "<tr><td>%s</td><td>", when);
        if (!rc) rc = page_receipt_link(out, r->id, r->model_id && *r->model_id ? r->model_id : r->id);
        if (!rc) rc = html_appendf(out, "</td><td>%s</td><td class=\"num\">%s</td></tr>", r->hardware, tok);
    }
    if (!rc && m == 0) rc = buf_append_str(out, "<tr><td colspan=\"4\" class=\"muted\">No published results.</td></tr>");
    if (!rc) rc = buf_append_str(out, "</tbody></table><nav class=\"pager\" aria-label=\"History pages\">");
    buf enc;
    buf_init(&enc, 256);
    if (!rc) rc = buf_append_str(&enc, "/c/");
    if (!rc) rc = html_url_encode(&enc, profile_id, NULL);
    pages_query nq = {.suite = q->suite};
    if (!rc && page > 0) {
        nq.page = page - 1;
        buf url;
        buf_init(&url, 1024);
        rc = pages_query_url(&url, enc.data, site, &nq);
        if (!rc) rc = html_appendf(out, "<a href=\"%s\" rel=\"prev\">Newer results</a>", url.data);
        buf_free(&url);
    }
    if (!rc && page + 1 < pages) {
        nq.page = page + 1;
        buf url;
        buf_init(&url, 1024);
        rc = pages_query_url(&url, enc.data, site, &nq);
        if (!rc) rc = html_appendf(out, "<a href=\"%s\" rel=\"next\" id=\"older\">Older results</a>", url.data);
        buf_free(&url);
    }
    buf_free(&enc);
    return rc ? rc : buf_append_str(out, "</nav></section>");
}

pacer_err pages_profile(buf *out, const pages_site *site, const pages_query *q, const pages_profile_view *p,
                        const rank_row *rows, size_t n) {
    if (q->suite >= site->n_suites) return PACER_ERR_ARG;
    rank_filter f = page_filter(site, &(pages_query){.suite = q->suite});
    rank_profile rp;
    pacer_err rc = rank_profile_compute(rows, n, &f, p->id, &rp);
    if (rc) return rc;
    const rank_row **mine = malloc((n ? n : 1) * sizeof *mine);
    if (!mine) return PACER_ERR_NOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (rank_row_selected(&rows[i], &f) && strcmp(rows[i].profile_id, p->id) == 0) mine[m++] = &rows[i];
    char since[40];
    pages_format_time(p->created_s, since, sizeof since);
    rc = page_begin(out, p->display_name, PAGE_NAV_NONE);
    if (!rc) rc = html_appendf(out, "<h1>%s</h1><p>", p->display_name);
    if (!rc) rc = honours(out, &rp);
    if (!rc)
        rc = html_appendf(out, "</p><p class=\"lead\">Contributor since %s \xC2\xB7 profile <span class=\"mono\">%s"
                               "</span>. This page's address can be shared: it grants no upload or administration "
                               "rights. Display names are chosen freely and never merge profiles.</p>",
                          since, p->id);
    buf path;
    buf_init(&path, 256);
    if (!rc) rc = buf_append_str(&path, "/c/");
    if (!rc) rc = html_url_encode(&path, p->id, NULL);
    if (!rc) rc = page_suite_tabs(out, site, q->suite, path.data);
    buf_free(&path);
    if (!rc) rc = buf_append_str(out, "<div class=\"grid2\">");
    if (!rc) rc = figures(out, site, &rp, rows);
    if (!rc) rc = trophies(out, &rp);
    if (!rc) rc = buf_append_str(out, "</div>");
    if (!rc) rc = model_bars(out, mine, m);
    if (!rc) rc = history(out, site, q, p->id, mine, m);
    free(mine);
    return rc ? rc : page_end(out);
}

/* ---- upload ---- */

pacer_err pages_upload(buf *out, const pages_site *site, const pages_upload_view *v) {
    (void)site;
    pacer_err rc = page_begin(out, "Upload a result", PAGE_NAV_UPLOAD);
    if (!rc)
        rc = buf_append_str(out, "<h1>Upload a result</h1><p class=\"lead\">Publish a receipt that <code>pacer "
                                 "bench</code> saved (in <code>~/.pacer/benchmarks/</code>). No account is needed: the "
                                 "board makes a profile for this browser and remembers it with a cookie. Clearing "
                                 "your browser data starts a new profile.</p>");
    if (!rc && v->profile_id && *v->profile_id) {
        rc = buf_append_str(out, "<p class=\"notice\" id=\"uploading-as\">You upload as ");
        if (!rc) rc = page_contributor_link(out, site, 0, v->profile_id, v->display_name);
        if (!rc) rc = buf_append_str(out, ".</p>");
    }
    if (!rc)
        rc = html_appendf(out, "<section class=\"card\"><form class=\"upload\" method=\"post\" action=\"/upload\" "
                               "enctype=\"multipart/form-data\" data-max-bytes=\"%zu\"><input type=\"hidden\" "
                               "name=\"csrf\" value=\"%s\"><label>Display name<input type=\"text\" "
                               "name=\"display_name\" required maxlength=\"64\" autocomplete=\"nickname\" "
                               "value=\"%s\"><span class=\"hint\">Public: shown beside your results. Any name; a new "
                               "one renames this browser's profile and never merges it with another.</span></label><label>Receipt file<input type=\"file\" "
                               "name=\"receipt\" accept=\".json,application/json\" required><span "
                               "class=\"hint\">Up to %zu KB. Its hardware, model and timing fields are shown below "
                               "for review; nothing is sent before you confirm.</span></label>"
                               "<div id=\"review\" hidden aria-live=\"polite\"><h2>Review before publishing</h2><p "
                               "class=\"muted\">Read from the file in this browser; nothing has been sent.</p><dl "
                               "class=\"facts\" id=\"review-fields\"></dl></div><p id=\"review-problem\" "
                               "role=\"alert\"></p><label class=\"no-js-consent\"><span><input type=\"checkbox\" "
                               "name=\"consent\" required> I have checked this receipt and want to publish it under "
                               "this name.</span></label><div><button type=\"submit\">Publish</button></div></form>"
                               "</section>",
                          v->max_bytes, v->csrf ? v->csrf : "", v->display_name ? v->display_name : "",
                          v->max_bytes / 1024);
    if (!rc)
        rc = buf_append_str(out, "<p class=\"muted\">The board checks a receipt exactly as it checks one from "
                                 "<code>pacer bench publish</code>: the suite and its digest, every aggregate "
                                 "recomputed from the attempts, completeness, and that the checkpoint is public. "
                                 "Complete standard runs are published at once; others wait for review.</p>");
    return rc ? rc : page_end(out);
}

pacer_err pages_upload_result(buf *out, const pages_site *site, int status, const json_t *answer) {
    const json_t *err = json_object_get(answer, "error");
    const char *state = json_get_str(answer, "state", err ? "rejected" : "unknown");
    bool ok = status >= 200 && status < 300 && !err;
    pacer_err rc = page_begin(out, ok ? "Upload received" : "Upload refused", PAGE_NAV_UPLOAD);
    if (!rc)
        rc = html_appendf(out, "<h1>%s</h1><section class=\"card\" id=\"result\"><p>State: <span class=\"state %s\" "
                               "id=\"result-state\">%s</span></p>",
                          ok ? "Upload received" : "Upload refused", state, ok ? state : (err ? "refused" : state));
    if (!rc && err)
        rc = html_appendf(out, "<p class=\"notice bad\" id=\"result-error\">%s</p>", json_get_str(err, "message", "refused"));
    if (!rc && ok && json_is_true(json_object_get(answer, "duplicate")))
        rc = buf_append_str(out, "<p class=\"notice\" id=\"duplicate\">This receipt was uploaded before: this is the "
                                 "same submission, and no upload was counted.</p>");
    const char *url = json_get_str(answer, "url", NULL), *id = json_get_str(answer, "id", NULL);
    if (!rc && ok && url && id) {
        rc = html_appendf(out, "<p>Result page: <a id=\"result-url\" href=\"%s\">%s</a></p>", url, url);
    } else if (!rc && ok && id) {
        rc = html_appendf(out, "<p>Submission <span class=\"mono\" id=\"result-id\">%s</span> is not public yet; "
                               "its page will show the state: ", id);
        if (!rc) rc = page_receipt_link(out, id, "submission page");
        if (!rc) rc = buf_append_str(out, "</p>");
    }
    const json_t *reasons = json_object_get(answer, "reasons");
    if (!rc && json_array_size(reasons) > 0) {
        rc = buf_append_str(out, "<h2>Reasons</h2><ul class=\"reasons\" id=\"result-reasons\">");
        size_t i;
        const json_t *e;
        json_array_foreach(reasons, i, e) {
            if (rc) break;
            rc = html_appendf(out, "<li>%s</li>", json_is_string(e) ? json_string_value(e) : "?");
        }
        if (!rc) rc = buf_append_str(out, "</ul>");
    }
    if (!rc && ok && json_is_integer(json_object_get(answer, "quota")))
        rc = html_appendf(out, "<p class=\"muted\">Uploads today: %lld of %lld.</p>",
                          (long long)json_get_int(answer, "uploads_today", 0), (long long)json_get_int(answer, "quota", 0));
    const char *profile = json_get_str(answer, "profile", NULL);
    if (!rc && profile) {
        rc = buf_append_str(out, "<p>Your profile: ");
        if (!rc) rc = page_contributor_link(out, site, 0, profile, profile);
        if (!rc) rc = buf_append_str(out, "</p>");
    }
    if (!rc) rc = buf_append_str(out, "<p><a href=\"/upload\">Upload another receipt</a></p></section>");
    return rc ? rc : page_end(out);
}

pacer_err pages_error(buf *out, const pages_site *site, int status, const char *title, const char *message) {
    (void)site;
    pacer_err rc = page_begin(out, title, PAGE_NAV_NONE);
    if (!rc)
        rc = html_appendf(out, "<h1>%s</h1><section class=\"card\"><p class=\"notice bad\" id=\"error\" "
                               "data-status=\"%d\">%s</p><p><a href=\"/\">Back to the results</a></p></section>",
                          title, status, message);
    return rc ? rc : page_end(out);
}
