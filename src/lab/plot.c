/* plot.c - the lab report's SVG plots (plot.h). */
#include "lab/plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/stats.h"
#include "board/html.h"
#include "board/svg.h"
#include "lab/summary.h"

#define BAR_W 640
#define BAR_ROW 36
#define BAR_LEFT 120
#define BAR_RIGHT 150
#define MAX_ROUNDS 1000

/* The colours the board's style sheet gives its chart classes, for a file shown alone. */
static const char plot_style[] =
    "<style>text{font:12px sans-serif;fill:#5b6573}.axis-label,.legend text,.label,.note{fill:#1d232b}"
    ".grid line{stroke:#e2e5e9}.frame{fill:none;stroke:#5b6573}.pt{stroke:#fff;stroke-width:1.5;fill-opacity:.85}"
    ".whisker{stroke:#1d232b;stroke-width:1.5}.s0{fill:#1f5fbf}.s1{fill:#d9480f}.s2{fill:#2b8a3e}.s3{fill:#9c36b5}"
    ".s4{fill:#c2255c}.s5{fill:#0b7285}.s6{fill:#e67700}.s7{fill:#495057}</style>";


static bool in_median(const json_t *s) {
    return !strcmp(lab_str(s, "finish"), "eos") && !strcmp(lab_str(s, "validity"), "valid");
}

/* The median of the round medians of `config`'s decode rates, and their spread. */
static bool decode_of(const json_t *samples, const char *config, stats_summary *out) {
    size_t n = json_array_size(samples), nr = 0, i;
    json_int_t last = 0;
    json_t *s;
    json_array_foreach(samples, i, s) {
        json_int_t r = json_integer_value(json_object_get(s, "round"));
        if (r > last) last = r;
    }
    double *vals = malloc((n + 1) * sizeof *vals), *rounds = malloc((n + 1) * sizeof *rounds);
    for (json_int_t r = 1; vals && rounds && r <= last && r <= MAX_ROUNDS; r++) {
        size_t k = 0;
        json_array_foreach(samples, i, s) {
            const json_t *v = json_object_get(s, "decode_tok_s");
            if (!strcmp(lab_str(s, "config"), config) && json_integer_value(json_object_get(s, "round")) == r && in_median(s) &&
                json_is_number(v))
                vals[k++] = json_number_value(v);
        }
        stats_summary rs;
        if (k && stats_summarize(vals, k, &rs)) rounds[nr++] = rs.median;
    }
    bool ok = nr && stats_summarize(rounds, nr, out);
    free(vals);
    free(rounds);
    return ok;
}

pacer_err lab_plot_decode(buf *out, const json_t *report) {
    const json_t *configs = json_object_get(json_object_get(report, "run"), "configurations");
    const json_t *samples = json_object_get(report, "samples");
    size_t n = json_array_size(configs), i;
    stats_summary *st = calloc(n + 1, sizeof *st);
    bool *has = calloc(n + 1, sizeof *has);
    if (!st || !has) {
        free(st);
        free(has);
        return PACER_ERR_NOMEM;
    }
    double top = 0;
    json_t *c;
    json_array_foreach(configs, i, c) if ((has[i] = decode_of(samples, lab_str(c, "name"), &st[i])) && st[i].max > top) top = st[i].max;
    int h = 60 + BAR_ROW * (int)(n ? n : 1);
    double span = BAR_W - BAR_LEFT - BAR_RIGHT;
    pacer_err rc = html_appendf(out,
                                "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                                "role=\"img\" aria-label=\"decode tok/s per configuration\">"
                                "<text class=\"label\" x=\"8\" y=\"20\">decode tok/s per configuration (median of the round "
                                "medians; whisker: least to greatest round)</text>",
                                BAR_W, h, BAR_W, h);
    if (!rc) rc = buf_append_str(out, plot_style);
    json_array_foreach(configs, i, c) {
        if (rc) break;
        double y = 40 + BAR_ROW * (double)i;
        rc = html_appendf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", BAR_LEFT - 8, y + 18, lab_str(c, "name"));
        if (rc) break;
        if (!has[i] || top <= 0) {
            rc = html_appendf(out, "<text class=\"note\" x=\"%d\" y=\"%.1f\">no sample entered a median</text>", BAR_LEFT, y + 18);
            continue;
        }
        double x0 = BAR_LEFT + span * st[i].min / top, x1 = BAR_LEFT + span * st[i].max / top, w = span * st[i].median / top;
        rc = html_appendf(out,
                          "<rect class=\"s%zu\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"24\"/>"
                          "<line class=\"whisker\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                          "<line class=\"whisker\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                          "<line class=\"whisker\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                          "<text class=\"note\" x=\"%.1f\" y=\"%.1f\">%.1f (%.1f-%.1f)</text>",
                          i % 8, BAR_LEFT, y + 4, w, x0, x1, y + 16, y + 16, x0, x0, y + 10, y + 22, x1, x1, y + 10, y + 22,
                          (x1 > BAR_LEFT + w ? x1 : BAR_LEFT + w) + 6, y + 20, st[i].median, st[i].min, st[i].max);
    }
    free(st);
    free(has);
    return rc ? rc : buf_append_str(out, "</svg>\n");
}

pacer_err lab_plot_length_time(buf *out, const json_t *report) {
    const json_t *configs = json_object_get(json_object_get(report, "run"), "configurations");
    const json_t *samples = json_object_get(report, "samples");
    size_t nc = json_array_size(configs), ns = json_array_size(samples), n = 0, excluded = 0, i;
    svg_point *pts = calloc(ns + 1, sizeof *pts);
    const char **names = calloc(nc + 2, sizeof *names);
    if (!pts || !names) {
        free(pts);
        free(names);
        return PACER_ERR_NOMEM;
    }
    json_t *c, *s;
    json_array_foreach(configs, i, c) names[i] = lab_str(c, "name");
    names[nc] = "kept out of medians";
    json_array_foreach(samples, i, s) {
        const json_t *tok = json_object_get(s, "decode_tokens"), *ns_ = json_object_get(s, "completion_ns");
        if (!json_is_integer(tok) || !json_is_integer(ns_) || !strcmp(lab_str(s, "finish"), "error")) continue;
        unsigned series = (unsigned)nc;
        for (size_t k = 0; k < nc; k++)
            if (!strcmp(names[k], lab_str(s, "config"))) series = (unsigned)k;
        if (!in_median(s)) series = (unsigned)nc, excluded++;
        pts[n++] = (svg_point){.x = (double)json_integer_value(tok), .y = (double)json_integer_value(ns_) / 1e9,
                               .label = lab_str(s, "id"), .series = series};
    }
    char title[160];
    snprintf(title, sizeof title, "answer length against completion time (%zu samples, %zu kept out of medians)", n, excluded);
    svg_scatter sc = {.id = "length-time", .title = title, .width = 720, .height = 420, .x = {"answer tokens", false},
                      .y = {"completion time (s)", false}, .points = pts, .n = n, .series = names, .n_series = nc + 1};
    pacer_err rc = buf_append_str(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 720 420\" width=\"720\" "
                                       "height=\"420\">");
    if (!rc) rc = buf_append_str(out, plot_style);
    /* the samples kept out of medians in grey, whatever colour their series index has */
    if (!rc && nc < 8) rc = buf_appendf(out, "<style>.s%zu{fill:#868e96}</style>", nc);
    if (!rc) rc = svg_scatter_append(out, &sc, NULL);
    if (!rc) rc = buf_append_str(out, "</svg>\n");
    free(pts);
    free(names);
    return rc;
}
