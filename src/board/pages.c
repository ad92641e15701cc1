/* pages.c - the page frame, shared links and formatting, and the dashboard: suite tabs,
 * filters, community counters, the performance map and the standings (see pages.h). */
#include "board/pages.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "board/pages_internal.h"
#include "board/svg.h"

#define LINK_MAX (64u << 10)

/* ---- formatting ---- */

void pages_format_number(double v, char *out, size_t n) {
    double a = fabs(v);
    if (!isfinite(v)) snprintf(out, n, "-");
    else if (a >= 1e5) snprintf(out, n, "%.0fk", v / 1e3);
    else if (a >= 1e4) snprintf(out, n, "%.1fk", v / 1e3);
    else if (a >= 100) snprintf(out, n, "%.0f", v);
    else if (a >= 1) snprintf(out, n, "%.1f", v);
    else snprintf(out, n, "%.2g", v);
}

void pages_format_params(int64_t params, char *out, size_t n) {
    double b = (double)params / 1e9;
    if (b >= 100) snprintf(out, n, "%.0fB", b);
    else if (b >= 10) snprintf(out, n, "%.1fB", b);
    else if (b >= 1) snprintf(out, n, "%.2fB", b);
    else snprintf(out, n, "%.0fM", (double)params / 1e6);
}

static void format_utc(int64_t unix_s, const char *fmt, char *out, size_t n) {
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(out, n, fmt, &tm)) snprintf(out, n, "-");
}

void pages_format_time(int64_t unix_s, char *out, size_t n) { format_utc(unix_s, "%Y-%m-%d %H:%M UTC", out, n); }
void pages_format_date(int64_t unix_s, char *out, size_t n) { format_utc(unix_s, "%Y-%m-%d", out, n); }

/* ---- frame and links ---- */

static const char *const NAV[][2] = {{"/", "Dashboard"}, {"/upload", "Upload a result"}};

pacer_err page_begin(buf *out, const char *title, page_nav nav) {
    pacer_err rc = html_appendf(out,
                                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                                "<title>%s \xC2\xB7 pacer board</title>"
                                "<link rel=\"icon\" href=\"/assets/icon.svg\" type=\"image/svg+xml\">"
                                "<link rel=\"stylesheet\" href=\"" PAGES_CSS_PATH "\">"
                                "<script src=\"" PAGES_JS_PATH "\" defer></script></head>\n<body>"
                                "<a class=\"skip\" href=\"#main\">Skip to content</a>"
                                "<header class=\"site\"><div class=\"inner\"><a class=\"brand\" href=\"/\">pacer "
                                "<span>board</span></a><nav aria-label=\"Site\">",
                                title);
    for (size_t i = 0; i < sizeof NAV / sizeof NAV[0] && !rc; i++)
        rc = html_appendf(out, (int)i + 1 == (int)nav ? "<a href=\"%s\" aria-current=\"page\">%s</a>"
                                                      : "<a href=\"%s\">%s</a>",
                          NAV[i][0], NAV[i][1]);
    return rc ? rc : buf_append_str(out, "</nav></div></header>\n<main id=\"main\">");
}

pacer_err page_end(buf *out) {
    return buf_append_str(out, "</main>\n<footer class=\"site\"><p>Every figure on this board comes from a receipt "
                               "the board checked: aggregates recomputed from the attempts, one suite and digest per "
                               "ranking, only published results ranked.</p></footer></body></html>\n");
}

pacer_err page_contributor_link(buf *out, const pages_site *site, size_t suite, const char *profile_id,
                                const char *name) {
    buf url;
    buf_init(&url, LINK_MAX);
    pacer_err rc = buf_append_str(&url, "/c/");
    if (!rc) rc = html_url_encode(&url, profile_id, NULL);
    if (!rc && suite > 0 && suite < site->n_suites) {
        rc = buf_append_str(&url, "?suite=");
        if (!rc) rc = html_url_encode(&url, site->suites[suite].id, NULL);
    }
    if (!rc) rc = html_appendf(out, "<a href=\"%s\">%s</a>", url.data, name && *name ? name : profile_id);
    buf_free(&url);
    return rc;
}

pacer_err page_model_link(buf *out, const pages_site *site, const char *model_id) {
    if (!model_id || !*model_id) return buf_append_str(out, "unknown model");
    buf url;
    buf_init(&url, LINK_MAX);
    pacer_err rc = buf_append_str(&url, site->hub_url ? site->hub_url : "https://huggingface.co");
    if (!rc) rc = buf_append_char(&url, '/');
    if (!rc) rc = html_url_encode(&url, model_id, "/");
    if (!rc)
        rc = html_appendf(out, "<a href=\"%s\" rel=\"noopener noreferrer\" title=\"The model at its publisher\">%s</a>",
                          url.data, model_id);
    buf_free(&url);
    return rc;
}

pacer_err page_receipt_link(buf *out, const char *id, const char *text) {
    buf url;
    buf_init(&url, LINK_MAX);
    pacer_err rc = buf_append_str(&url, "/r/");
    if (!rc) rc = html_url_encode(&url, id, NULL);
    if (!rc) rc = html_appendf(out, "<a href=\"%s\">%s</a>", url.data, text);
    buf_free(&url);
    return rc;
}

static pacer_err query_param(buf *out, bool *first, const char *key, const char *value) {
    if (!value || !*value) return PACER_OK;
    pacer_err rc = buf_appendf(out, "%c%s=", *first ? '?' : '&', key);
    *first = false;
    return rc ? rc : html_url_encode(out, value, NULL);
}

pacer_err pages_query_url(buf *out, const char *path, const pages_site *site, const pages_query *q) {
    bool first = true;
    char num[24];
    pacer_err rc = buf_append_str(out, path);
    if (!rc && q->suite > 0 && q->suite < site->n_suites) rc = query_param(out, &first, "suite", site->suites[q->suite].id);
    if (!rc) rc = query_param(out, &first, "model", q->model);
    if (!rc) rc = query_param(out, &first, "platform", q->platform);
    if (!rc) rc = query_param(out, &first, "hardware", q->hardware);
    if (!rc && q->active) rc = query_param(out, &first, "size", "active");
    snprintf(num, sizeof num, "%zu", q->map_pages);
    if (!rc && q->map_pages > 1) rc = query_param(out, &first, "more", num);
    snprintf(num, sizeof num, "%zu", q->page);
    if (!rc && q->page > 0) rc = query_param(out, &first, "page", num);
    return rc;
}

/* <a href="URL of q at path"> with the attributes `attrs` (markup), then `text`. */
static pacer_err query_link(buf *out, const char *path, const pages_site *site, const pages_query *q, const char *attrs,
                            const char *text) {
    buf url;
    buf_init(&url, LINK_MAX);
    pacer_err rc = pages_query_url(&url, path, site, q);
    if (!rc) rc = html_appendf(out, "<a href=\"%s\"", url.data);
    if (!rc && attrs) rc = buf_append_str(out, attrs);
    if (!rc) rc = html_appendf(out, ">%s</a>", text);
    buf_free(&url);
    return rc;
}

pacer_err page_suite_tabs(buf *out, const pages_site *site, size_t current, const char *path) {
    pacer_err rc = buf_append_str(out, "<nav class=\"tabs\" aria-label=\"Suite\">");
    for (size_t i = 0; i < site->n_suites && !rc; i++) {
        pages_query q = {.suite = i};
        char label[160];
        snprintf(label, sizeof label, "%s \xC2\xB7 %.8s", site->suites[i].id, site->suites[i].digest);
        rc = query_link(out, path, site, &q, i == current ? " aria-current=\"true\"" : NULL, label);
    }
    return rc ? rc : buf_append_str(out, "</nav>");
}

rank_filter page_filter(const pages_site *site, const pages_query *q) {
    const pages_suite *s = q->suite < site->n_suites ? &site->suites[q->suite] : NULL;
    return (rank_filter){.suite_id = s ? s->id : NULL, .suite_digest = s ? s->digest : NULL, .model_id = q->model,
                         .platform = q->platform, .hardware = q->hardware};
}

/* ---- the dashboard ---- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* One <select> of the distinct non-empty values of a field among the suite's published rows. */
static pacer_err filter_select(buf *out, const char *name, const char *label, const char *selected,
                               const char **values, size_t k) {
    qsort(values, k, sizeof *values, cmp_str);
    pacer_err rc = html_appendf(out, "<label>%s<select name=\"%s\"><option value=\"\">Any</option>", label, name);
    bool seen = false;
    for (size_t i = 0; i < k && !rc; i++) {
        if (!*values[i] || (i > 0 && strcmp(values[i], values[i - 1]) == 0)) continue;
        bool sel = selected && strcmp(selected, values[i]) == 0;
        seen = seen || sel;
        rc = html_appendf(out, "<option%s>%s</option>", sel ? " selected" : "", values[i]);
    }
    if (!rc && selected && *selected && !seen) rc = html_appendf(out, "<option selected>%s</option>", selected);
    return rc ? rc : buf_append_str(out, "</select></label>");
}

static pacer_err filters_form(buf *out, const pages_site *site, const pages_query *q, const rank_row *rows, size_t n) {
    rank_filter suite_only = page_filter(site, &(pages_query){.suite = q->suite});
    const char **v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return PACER_ERR_NOMEM;
    pacer_err rc = buf_append_str(out, "<section class=\"card\" aria-labelledby=\"filters-h\"><h2 id=\"filters-h\">"
                                       "Filters</h2><form class=\"filters\" method=\"get\" action=\"/\">");
    if (!rc && q->suite > 0 && q->suite < site->n_suites)
        rc = html_appendf(out, "<input type=\"hidden\" name=\"suite\" value=\"%s\">", site->suites[q->suite].id);
    if (!rc && q->active) rc = buf_append_str(out, "<input type=\"hidden\" name=\"size\" value=\"active\">");
    static const struct { const char *name, *label; size_t off; } fields[] = {
        {"model", "Model", offsetof(rank_row, model_id)},
        {"platform", "Platform", offsetof(rank_row, platform)},
        {"hardware", "Hardware", offsetof(rank_row, hardware)},
    };
    const char *selected[] = {q->model, q->platform, q->hardware};
    for (size_t f = 0; f < 3 && !rc; f++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (!rank_row_selected(&rows[i], &suite_only)) continue;
            const char *s = *(const char *const *)((const char *)&rows[i] + fields[f].off);
            v[k++] = s ? s : "";
        }
        rc = filter_select(out, fields[f].name, fields[f].label, selected[f], v, k);
    }
    free(v);
    if (!rc) rc = buf_append_str(out, "<button class=\"apply\" type=\"submit\">Apply</button>");
    if (!rc) rc = query_link(out, "/", site, &(pages_query){.suite = q->suite}, " class=\"button secondary\"", "Clear");
    return rc ? rc : buf_append_str(out, "</form></section>");
}

static pacer_err counters(buf *out, const rank_row *rows, size_t n, const rank_filter *f) {
    rank_counts c;
    pacer_err rc = rank_count(rows, n, f, &c);
    if (!rc)
        rc = html_appendf(out, "<dl class=\"counters\" id=\"counters\" aria-label=\"Community\">"
                               "<div><dt>Results</dt><dd data-count=\"runs\">%lld</dd></div>"
                               "<div><dt>Contributors</dt><dd data-count=\"contributors\">%lld</dd></div>"
                               "<div><dt>Models</dt><dd data-count=\"models\">%lld</dd></div>"
                               "<div><dt>Hardware</dt><dd data-count=\"hardware\">%lld</dd></div></dl>",
                          (long long)c.runs, (long long)c.contributors, (long long)c.models, (long long)c.hardware);
    return rc;
}

/* The colour series of a backend. */
static unsigned backend_series(const char *b) {
    static const char *const known[] = {"cuda", "rocm", "mlx", "cpu", "vulkan", "metal"};
    for (unsigned i = 0; i < sizeof known / sizeof known[0]; i++)
        if (b && strcmp(b, known[i]) == 0) return i;
    return 7;
}

static const char *const SERIES_NAMES[8] = {"cuda", "rocm", "mlx", "cpu", "vulkan", "metal", "", "other"};

/* "MODEL on HARDWARE (NAME): 12.3 tok/s, first text 85 ms" */
static void point_label(const rank_row *r, char *out, size_t n) {
    char tok[32], ft[32];
    pages_format_number(r->chat_greedy_tok_s, tok, sizeof tok);
    pages_format_number(r->chat_greedy_first_ms, ft, sizeof ft);
    snprintf(out, n, "%s on %s (%s): %s tok/s, first text %s ms", r->model_id && *r->model_id ? r->model_id : "?",
             r->hardware && *r->hardware ? r->hardware : "unknown hardware", r->display_name ? r->display_name : "?",
             tok, ft);
}

typedef struct point_set {
    svg_point *pts;
    char (*labels)[384];
    char (*hrefs)[64];
    size_t n;
} point_set;

static pacer_err points_alloc(point_set *ps, size_t n) {
    ps->n = 0;
    ps->pts = calloc(n ? n : 1, sizeof *ps->pts);
    ps->labels = calloc(n ? n : 1, sizeof *ps->labels);
    ps->hrefs = calloc(n ? n : 1, sizeof *ps->hrefs);
    return ps->pts && ps->labels && ps->hrefs ? PACER_OK : PACER_ERR_NOMEM;
}

static void points_free(point_set *ps) {
    free(ps->pts);
    free(ps->labels);
    free(ps->hrefs);
}

static void points_add(point_set *ps, const rank_row *r, double x, double y, const char *label) {
    size_t i = ps->n++;
    snprintf(ps->labels[i], sizeof ps->labels[i], "%s", label);
    snprintf(ps->hrefs[i], sizeof ps->hrefs[i], "/r/%s", r->id);
    ps->pts[i] = (svg_point){x, y, ps->hrefs[i], ps->labels[i], backend_series(r->backend)};
}

/* The legend: the series present among the points. */
static size_t legend_of(const point_set *ps, const char **names) {
    bool present[8] = {false};
    for (size_t i = 0; i < ps->n; i++) present[ps->pts[i].series % 8] = true;
    size_t k = 0;
    for (unsigned s = 0; s < 8; s++)
        if (present[s]) names[k++] = SERIES_NAMES[s];
    return k;
}

static pacer_err scatter_of(buf *out, point_set *ps, const char *id, const char *title, svg_axis x, svg_axis y) {
    /* legend order follows series numbers; points keep their series */
    const char *names[8];
    size_t k = legend_of(ps, names), map[8] = {0}, j = 0;
    for (unsigned s = 0; s < 8; s++)
        for (size_t i = 0; i < k; i++)
            if (names[i] == SERIES_NAMES[s]) map[s] = j++;
    for (size_t i = 0; i < ps->n; i++) ps->pts[i].series = (unsigned)map[ps->pts[i].series % 8];
    svg_scatter s = {.id = id, .title = title, .x = x, .y = y, .points = ps->pts, .n = ps->n, .series = names,
                     .n_series = k};
    return svg_scatter_append(out, &s, NULL);
}

static pacer_err map_section(buf *out, const pages_site *site, const pages_query *q, const rank_row *rows, size_t n,
                             const rank_filter *f) {
    size_t pages = q->map_pages < 1 ? 1 : q->map_pages > PAGES_MAP_PAGES_MAX ? PAGES_MAP_PAGES_MAX : q->map_pages;
    size_t limit = pages * PAGES_MAP_PAGE, total = 0;
    point_set ps;
    pacer_err rc = points_alloc(&ps, limit);
    for (size_t i = 0; i < n && !rc; i++) {
        const rank_row *r = &rows[i];
        if (!rank_row_selected(r, f) || !rank_row_has_speed(r) || !isfinite(r->chat_greedy_first_ms) ||
            r->chat_greedy_first_ms <= 0)
            continue;
        total++;
        if (ps.n >= limit) continue;
        char label[384];
        point_label(r, label, sizeof label);
        points_add(&ps, r, r->chat_greedy_first_ms, r->chat_greedy_tok_s, label);
    }
    if (!rc)
        rc = buf_append_str(out, "<section class=\"card\" id=\"map\" aria-labelledby=\"map-h\"><h2 id=\"map-h\">"
                                 "Performance map</h2><p class=\"muted\">Greedy-chat medians of complete runs: time "
                                 "to first text against stream-delivery speed. Up and to the left is better. Every "
                                 "point opens its receipt.</p>");
    if (!rc)
        rc = scatter_of(out, &ps, "map-chart", "Performance map: first text against stream speed",
                        (svg_axis){"first text (ms)", true}, (svg_axis){"stream tok/s", true});
    if (!rc)
        rc = html_appendf(out, "<div class=\"map-caption\"><span id=\"map-count\">%zu result%s on this page, newest "
                               "first</span>",
                          ps.n, ps.n == 1 ? "" : "s");
    if (!rc && total > ps.n && pages < PAGES_MAP_PAGES_MAX) {
        pages_query more = *q;
        more.map_pages = pages + 1;
        rc = query_link(out, "/", site, &more, " class=\"button secondary\" id=\"load-more\"", "Load older results");
    }
    points_free(&ps);
    return rc ? rc : buf_append_str(out, "</div></section>");
}

/* What a standings table shows in its value column. */
typedef enum value_kind { VALUE_COUNT, VALUE_TOK_S, VALUE_SIZE } value_kind;

static pacer_err value_text(const rank_entry *e, value_kind k, char *out, size_t n) {
    char v[32];
    pages_format_number(e->value, v, sizeof v);
    if (k == VALUE_COUNT) snprintf(out, n, "%lld", (long long)e->count);
    else if (k == VALUE_TOK_S) snprintf(out, n, "%s tok/s", v);
    else snprintf(out, n, "%s B\xC2\xB7tok/s", v);
    return PACER_OK;
}

/* A table of the first PAGES_TOP entries of a standings list. */
static pacer_err standings_table(buf *out, const pages_site *site, size_t suite, const rank_list *l,
                                 const rank_row *rows, value_kind k, const char *value_head) {
    if (l->n == 0) return buf_append_str(out, "<p class=\"muted\">Nothing ranked yet.</p>");
    pacer_err rc = html_appendf(out, "<table><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Contributor</th>"
                                     "<th scope=\"col\" class=\"num\">%s</th>",
                                value_head);
    if (!rc) rc = buf_append_str(out, k == VALUE_COUNT ? "</tr></thead><tbody>" : "<th scope=\"col\">Run</th></tr></thead><tbody>");
    for (size_t i = 0; i < l->n && i < PAGES_TOP && !rc; i++) {
        const rank_entry *e = &l->items[i];
        const rank_row *r = &rows[e->row];
        char v[64];
        value_text(e, k, v, sizeof v);
        rc = html_appendf(out, "<tr><td class=\"place\">%d</td><td>", e->place);
        if (!rc) rc = page_contributor_link(out, site, suite, e->profile_id, e->display_name);
        if (!rc) rc = html_appendf(out, "</td><td class=\"num\">%s</td>", v);
        if (!rc && k != VALUE_COUNT) {
            rc = buf_append_str(out, "<td>");
            if (!rc) rc = page_receipt_link(out, r->id, r->model_id && *r->model_id ? r->model_id : r->id);
            if (!rc) rc = html_appendf(out, "<br><span class=\"muted\">%s</span></td>", r->hardware);
        }
        if (!rc) rc = buf_append_str(out, "</tr>");
    }
    return rc ? rc : buf_append_str(out, "</tbody></table>");
}

static pacer_err standings_card(buf *out, const pages_site *site, const pages_query *q, const rank_row *rows, size_t n,
                                const rank_filter *f, rank_board which, const char *id, const char *title,
                                const char *about, value_kind k, const char *value_head) {
    rank_list l;
    pacer_err rc = rank_compute(rows, n, f, which, &l);
    if (rc) return rc;
    rc = html_appendf(out, "<section class=\"card\" id=\"%s\" aria-labelledby=\"%s-h\"><h2 id=\"%s-h\">%s</h2>"
                           "<p class=\"muted\">%s</p>",
                      id, id, id, title, about);
    if (!rc) rc = standings_table(out, site, q->suite, &l, rows, k, value_head);
    rank_list_free(&l);
    return rc ? rc : buf_append_str(out, "</section>");
}

/* "8.03B total, 1.2B active" or "8.03B total (dense)" or "size unknown". */
static void sizes_text(const rank_row *r, char *out, size_t n) {
    char t[32], a[32];
    if (!r->has_params_total) { snprintf(out, n, "size unknown"); return; }
    pages_format_params(r->params_total, t, sizeof t);
    if (r->has_params_active) {
        pages_format_params(r->params_active, a, sizeof a);
        snprintf(out, n, "%s total, %s active", t, a);
    } else {
        snprintf(out, n, "%s total, %s active (dense)", t, t);
    }
}

static pacer_err podium_step(buf *out, const pages_site *site, const pages_query *q, const rank_entry *e,
                             const rank_row *r, size_t pos) {
    char v[64], tok[32], sizes[96];
    value_text(e, VALUE_SIZE, v, sizeof v);
    pages_format_number(r->chat_greedy_tok_s, tok, sizeof tok);
    sizes_text(r, sizes, sizeof sizes);
    pacer_err rc = html_appendf(out, "<li class=\"p%zu\"><span class=\"rank\">%d</span><span class=\"who\">", pos + 1,
                                e->place);
    if (!rc) rc = page_contributor_link(out, site, q->suite, e->profile_id, e->display_name);
    if (!rc) rc = html_appendf(out, "</span><span class=\"value\">%s</span><span class=\"detail\">", v);
    if (!rc) rc = page_model_link(out, site, r->model_id);
    if (!rc) rc = html_appendf(out, "</span><span class=\"detail\">%s</span><span class=\"detail\">", sizes);
    if (!rc) rc = page_receipt_link(out, r->id, tok);
    return rc ? rc : buf_append_str(out, " tok/s</span></li>");
}

#define SIZE_PLOT_MAX 400

/* The best run of each model on each machine (the plot's points), at most `max`. */
static size_t best_per_model_and_machine(const rank_row *rows, size_t n, const rank_filter *f, bool active,
                                         const rank_row **best, size_t max) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const rank_row *r = &rows[i];
        int64_t p;
        if (!rank_row_selected(r, f) || !rank_row_has_speed(r) || !rank_row_params(r, active, &p)) continue;
        size_t j = 0;
        while (j < k && (strcmp(best[j]->model_id, r->model_id) != 0 || strcmp(best[j]->hardware, r->hardware) != 0)) j++;
        if (j == k && k < max) best[k++] = r;
        else if (j < k && r->chat_greedy_tok_s > best[j]->chat_greedy_tok_s) best[j] = r;
    }
    return k;
}

static pacer_err size_plot(buf *out, const pages_query *q, const rank_row *rows, size_t n, const rank_filter *f) {
    const rank_row **best = malloc(SIZE_PLOT_MAX * sizeof *best);
    if (!best) return PACER_ERR_NOMEM;
    size_t k = best_per_model_and_machine(rows, n, f, q->active, best, SIZE_PLOT_MAX);
    point_set ps;
    pacer_err rc = points_alloc(&ps, k);
    for (size_t i = 0; i < k && !rc; i++) {
        const rank_row *r = best[i];
        int64_t p = 0;
        rank_row_params(r, q->active, &p);
        char label[384], tok[32], sz[32];
        pages_format_number(r->chat_greedy_tok_s, tok, sizeof tok);
        pages_format_params(p, sz, sizeof sz);
        snprintf(label, sizeof label, "%s (%s %s) on %s, by %s: %s tok/s", r->model_id, sz,
                 q->active ? "active" : "total", r->hardware, r->display_name, tok);
        points_add(&ps, r, (double)p / 1e9, r->chat_greedy_tok_s, label);
    }
    free(best);
    if (!rc)
        rc = buf_append_str(out, "<h3>Parameter count against speed</h3><p class=\"muted\">The best greedy-chat "
                                 "median of each model on each machine.</p>");
    if (!rc)
        rc = scatter_of(out, &ps, "size-chart", "Parameter count against greedy-chat speed",
                        (svg_axis){q->active ? "active parameters, billions" : "total parameters, billions", true},
                        (svg_axis){"stream tok/s", true});
    points_free(&ps);
    return rc;
}

static pacer_err podium_section(buf *out, const pages_site *site, const pages_query *q, const rank_row *rows,
                                size_t n, const rank_filter *f) {
    rank_list l;
    pacer_err rc = rank_compute(rows, n, f, q->active ? RANK_SIZE_ACTIVE : RANK_SIZE_TOTAL, &l);
    if (rc) return rc;
    size_t unknown = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t p;
        if (rank_row_selected(&rows[i], f) && rank_row_has_speed(&rows[i]) && !rank_row_params(&rows[i], q->active, &p))
            unknown++;
    }
    rc = buf_append_str(out, "<section class=\"card\" id=\"podium\" aria-labelledby=\"podium-h\"><h2 id=\"podium-h\">"
                             "Size \xC3\x97 speed podium</h2><p class=\"muted\">Each contributor's best product of the "
                             "model's published parameter count (billions) and its greedy-chat median. Active counts "
                             "the parameters a sparse mixture of experts uses per token; a dense model uses its "
                             "total.</p><nav class=\"switch\" aria-label=\"Parameter count\">");
    pages_query total = *q, active = *q;
    total.active = false;
    active.active = true;
    if (!rc) rc = query_link(out, "/", site, &total, q->active ? NULL : " aria-current=\"true\"", "Total");
    if (!rc) rc = query_link(out, "/", site, &active, q->active ? " aria-current=\"true\"" : NULL, "Active");
    if (!rc) rc = buf_append_str(out, "</nav>");
    if (!rc && l.n) rc = buf_append_str(out, "<ol class=\"podium\">");
    for (size_t i = 0; i < l.n && i < 3 && !rc; i++) rc = podium_step(out, site, q, &l.items[i], &rows[l.items[i].row], i);
    if (!rc && l.n) rc = buf_append_str(out, "</ol>");
    if (!rc && l.n > 3) { /* places 4 to 10 below the podium */
        rank_list rest = {l.items + 3, l.n - 3 < PAGES_TOP - 3 ? l.n - 3 : PAGES_TOP - 3};
        rc = standings_table(out, site, q->suite, &rest, rows, VALUE_SIZE, "size \xC3\x97 speed");
    }
    if (!rc && l.n == 0) rc = buf_append_str(out, "<p class=\"muted\">Nothing ranked yet.</p>");
    if (!rc && unknown)
        rc = html_appendf(out, "<p class=\"muted\" id=\"unknown-sizes\">%zu run%s with an unknown parameter count %s "
                               "not ranked in this view.</p>",
                          unknown, unknown == 1 ? "" : "s", unknown == 1 ? "is" : "are");
    rank_list_free(&l);
    if (!rc) rc = size_plot(out, q, rows, n, f);
    return rc ? rc : buf_append_str(out, "</section>");
}

static pacer_err contributions(buf *out, const pages_site *site, const pages_query *q, const rank_row *rows, size_t n,
                               const rank_filter *f) {
    pacer_err rc = buf_append_str(out, "<section class=\"card\" id=\"contributions\" aria-labelledby=\"contrib-h\">"
                                       "<h2 id=\"contrib-h\">Contributions</h2><p class=\"muted\">The newest published "
                                       "results.</p><table><thead><tr><th scope=\"col\">When</th><th scope=\"col\">"
                                       "Contributor</th><th scope=\"col\">Run</th><th scope=\"col\" class=\"num\">"
                                       "Greedy chat</th></tr></thead><tbody>");
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < PAGES_TOP && !rc; i++) {
        const rank_row *r = &rows[i];
        if (!rank_row_selected(r, f)) continue;
        shown++;
        char when[40], tok[32] = "-";
        pages_format_date(r->created_s, when, sizeof when);
        if (rank_row_has_speed(r)) pages_format_number(r->chat_greedy_tok_s, tok, sizeof tok);
        rc = html_appendf(out, "<tr><td>%s</td><td>", when);
        if (!rc) rc = page_contributor_link(out, site, q->suite, r->profile_id, r->display_name);
        if (!rc) rc = buf_append_str(out, "</td><td>");
        if (!rc) rc = page_receipt_link(out, r->id, r->model_id && *r->model_id ? r->model_id : r->id);
        if (!rc) rc = html_appendf(out, "<br><span class=\"muted\">%s</span></td><td class=\"num\">%s</td></tr>",
                                   r->hardware, tok);
    }
    if (!rc && shown == 0) rc = buf_append_str(out, "<tr><td colspan=\"4\" class=\"muted\">No results yet.</td></tr>");
    return rc ? rc : buf_append_str(out, "</tbody></table></section>");
}

pacer_err pages_dashboard(buf *out, const pages_site *site, const pages_query *q, const rank_row *rows, size_t n) {
    if (q->suite >= site->n_suites) return PACER_ERR_ARG;
    rank_filter f = page_filter(site, q);
    pacer_err rc = page_begin(out, "Results", PAGE_NAV_DASHBOARD);
    if (!rc)
        rc = buf_append_str(out, "<h1>Results board</h1><p class=\"lead\">How fast language models generate text on "
                                 "people's own machines, measured by pacer. Each view ranks one suite and digest; "
                                 "results of different suites are never mixed.</p>");
    if (!rc) rc = page_suite_tabs(out, site, q->suite, "/");
    if (!rc) rc = filters_form(out, site, q, rows, n);
    if (!rc) rc = counters(out, rows, n, &f);
    if (!rc) rc = map_section(out, site, q, rows, n, &f);
    if (!rc) rc = buf_append_str(out, "<div class=\"grid2\">");
    if (!rc)
        rc = standings_card(out, site, q, rows, n, &f, RANK_MOST_BENCHMARKS, "most", "Most benchmarks",
                            "Published results per contributor.", VALUE_COUNT, "results");
    if (!rc)
        rc = standings_card(out, site, q, rows, n, &f, RANK_FASTEST, "fastest", "Fastest run",
                            "Each contributor's best greedy-chat stream-delivery median of a complete run (five "
                            "repetitions, 256 tokens).",
                            VALUE_TOK_S, "median");
    if (!rc) rc = buf_append_str(out, "</div>");
    if (!rc) rc = podium_section(out, site, q, rows, n, &f);
    if (!rc) rc = buf_append_str(out, "<div class=\"grid2\">");
    if (!rc)
        rc = standings_card(out, site, q, rows, n, &f, RANK_SPEED_RECORDS, "records", "Speed records",
                            "The fastest runs by raw stream-delivery median of any cell.", VALUE_TOK_S, "tok/s");
    if (!rc) rc = contributions(out, site, q, rows, n, &f);
    if (!rc) rc = buf_append_str(out, "</div>");
    return rc ? rc : page_end(out);
}
