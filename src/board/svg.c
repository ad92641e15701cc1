/* svg.c - scatter plots with linked points, bar charts and progress bars as inline SVG
 * (see svg.h). Coordinates are printed with one decimal; classes carry every colour. */
#include "board/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "board/html.h"

#define SVG_TICKS_MAX 16
#define MARGIN_LEFT 70.0
#define MARGIN_RIGHT 20.0
#define MARGIN_TOP 34.0
#define MARGIN_BOTTOM 50.0

/* A nice step (1, 2 or 5 times a power of ten) near span / count. */
static double nice_step(double span, int count) {
    double raw = span / count, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

size_t svg_ticks(double lo, double hi, bool log_axis, double *ticks, size_t max) {
    size_t n = 0;
    if (!(hi > lo) || !isfinite(lo) || !isfinite(hi) || (log_axis && lo <= 0)) return 0;
    if (!log_axis) {
        double step = nice_step(hi - lo, 5);
        for (double t = ceil(lo / step - 1e-9) * step; t <= hi * (1 + 1e-12) + 1e-12 && n < max; t += step)
            ticks[n++] = fabs(t) < step * 1e-9 ? 0 : t;
        return n;
    }
    int d0 = (int)floor(log10(lo) + 1e-9), d1 = (int)ceil(log10(hi) - 1e-9);
    static const double mult[] = {1, 2, 5};
    int per = d1 - d0 <= 3 ? 3 : 1;
    for (int d = d0; d <= d1; d++)
        for (int m = 0; m < per && n < max; m++) {
            double t = mult[m] * pow(10, d);
            if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) ticks[n++] = t;
        }
    return n;
}

/* One axis mapped to pixels [p0, p1]. */
typedef struct scale {
    bool log;
    double lo, hi, p0, p1;
} scale;

static double scale_at(const scale *s, double v) {
    double f = s->log ? (log10(v) - log10(s->lo)) / (log10(s->hi) - log10(s->lo)) : (v - s->lo) / (s->hi - s->lo);
    return s->p0 + f * (s->p1 - s->p0);
}

static bool drawable(double v, bool log_axis) { return isfinite(v) && (!log_axis || v > 0); }

/* The largest 1, 2 or 5 times a power of ten at or below v (v > 0); with `up`, the smallest
 * at or above. */
static double log_step(double v, bool up) {
    static const double m[] = {1, 2, 5, 10};
    double p = pow(10, floor(log10(v)));
    if (up) {
        for (int i = 0; i < 4; i++)
            if (m[i] * p >= v * (1 - 1e-12)) return m[i] * p;
        return 10 * p;
    }
    for (int i = 3; i >= 0; i--)
        if (m[i] * p <= v * (1 + 1e-12)) return m[i] * p;
    return p;
}

/* The domain of the drawable values of one coordinate: powers of ten around them (log), or
 * from 0 (or the minimum when negative) to a step above the maximum (linear). */
static void domain(const svg_scatter *s, bool is_x, scale *sc) {
    bool lg = is_x ? s->x.log : s->y.log, any = false;
    double lo = 0, hi = 0;
    for (size_t i = 0; i < s->n; i++) {
        const svg_point *p = &s->points[i];
        if (!drawable(p->x, s->x.log) || !drawable(p->y, s->y.log)) continue;
        double v = is_x ? p->x : p->y;
        if (!any || v < lo) lo = v;
        if (!any || v > hi) hi = v;
        any = true;
    }
    if (lg) {
        if (!any) { lo = 1; hi = 1000; }
        lo = log_step(lo, false);
        hi = log_step(hi, true);
        if (hi <= lo) hi = log_step(lo * 1.5, true);
    } else {
        if (!any) hi = 1;
        if (lo > 0) lo = 0;
        if (hi <= lo) hi = lo + 1;
        double step = nice_step(hi - lo, 5);
        hi = ceil(hi / step - 1e-9) * step;
        if (lo < 0) lo = floor(lo / step + 1e-9) * step;
    }
    sc->log = lg;
    sc->lo = lo;
    sc->hi = hi;
}

/* A tick label: compact ("1.5k", "2M") and without trailing zeros. */
static void tick_text(double v, char *out, size_t n) {
    double a = fabs(v);
    if (a >= 1e6) snprintf(out, n, "%gM", v / 1e6);
    else if (a >= 1e4) snprintf(out, n, "%gk", v / 1e3);
    else snprintf(out, n, "%g", v);
}

static pacer_err axes_append(buf *out, const svg_scatter *s, const scale *sx, const scale *sy, int h) {
    double ticks[SVG_TICKS_MAX];
    char t[32];
    pacer_err rc = buf_append_str(out, "<g class=\"grid\">");
    size_t nx = svg_ticks(sx->lo, sx->hi, sx->log, ticks, SVG_TICKS_MAX);
    for (size_t i = 0; i < nx && !rc; i++) {
        double x = scale_at(sx, ticks[i]);
        tick_text(ticks[i], t, sizeof t);
        rc = html_appendf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                               "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                          x, sy->p1, x, sy->p0, x, sy->p0 + 16, t);
    }
    size_t ny = rc ? 0 : svg_ticks(sy->lo, sy->hi, sy->log, ticks, SVG_TICKS_MAX);
    for (size_t i = 0; i < ny && !rc; i++) {
        double y = scale_at(sy, ticks[i]);
        tick_text(ticks[i], t, sizeof t);
        rc = html_appendf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                               "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                          sx->p0, y, sx->p1, y, sx->p0 - 6, y + 4, t);
    }
    if (!rc)
        rc = html_appendf(out, "</g><rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
                               "<text class=\"axis-label\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s%s</text>"
                               "<text class=\"axis-label\" transform=\"translate(16 %.1f) rotate(-90)\" "
                               "text-anchor=\"middle\">%s%s</text>",
                          sx->p0, sy->p1, sx->p1 - sx->p0, sy->p0 - sy->p1, (sx->p0 + sx->p1) / 2, h - 10,
                          s->x.label, s->x.log ? " (log scale)" : "", (sy->p0 + sy->p1) / 2, s->y.label,
                          s->y.log ? " (log scale)" : "");
    return rc;
}

/* The legend sits in the top margin, one entry after another, so it never hides a point. */
static pacer_err legend_append(buf *out, const svg_scatter *s, const scale *sx, const scale *sy) {
    pacer_err rc = buf_append_str(out, "<g class=\"legend\">");
    double x = sx->p0, y = sy->p1 - 12;
    for (size_t i = 0; i < s->n_series && !rc; i++) {
        rc = html_appendf(out, "<circle class=\"pt s%zu\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>"
                               "<text x=\"%.1f\" y=\"%.1f\">%s</text>",
                          i % 8, x + 4, y - 4, x + 12, y, s->series[i]);
        x += 24 + 7.5 * (double)strlen(s->series[i]);
    }
    return rc ? rc : buf_append_str(out, "</g>");
}

pacer_err svg_scatter_append(buf *out, const svg_scatter *s, size_t *drawn) {
    int w = s->width > 0 ? s->width : 720, h = s->height > 0 ? s->height : 420;
    scale sx, sy;
    domain(s, true, &sx);
    domain(s, false, &sy);
    sx.p0 = MARGIN_LEFT;
    sx.p1 = w - MARGIN_RIGHT;
    sy.p0 = h - MARGIN_BOTTOM; /* y grows downwards: the low end is at the bottom */
    sy.p1 = MARGIN_TOP;
    size_t count = 0;
    pacer_err rc = html_appendf(out, "<svg id=\"%s\" class=\"chart\" viewBox=\"0 0 %d %d\" role=\"group\" "
                                     "aria-labelledby=\"%s-title\"><title id=\"%s-title\">%s</title>",
                                s->id, w, h, s->id, s->id, s->title);
    if (!rc) rc = axes_append(out, s, &sx, &sy, h);
    if (!rc) rc = buf_append_str(out, "<g class=\"points\">");
    for (size_t i = 0; i < s->n && !rc; i++) {
        const svg_point *p = &s->points[i];
        if (!drawable(p->x, s->x.log) || !drawable(p->y, s->y.log)) continue;
        double cx = scale_at(&sx, p->x), cy = scale_at(&sy, p->y);
        /* a link is named by its <title> (its tooltip too); a plain point carries its own */
        if (p->href)
            rc = html_appendf(out, "<a href=\"%s\"><title>%s</title><circle class=\"pt s%u\" cx=\"%.1f\" cy=\"%.1f\" "
                                   "r=\"5\"/></a>",
                              p->href, p->label, p->series % 8, cx, cy);
        else
            rc = html_appendf(out, "<circle class=\"pt s%u\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>%s</title></circle>",
                              p->series % 8, cx, cy, p->label);
        count++;
    }
    if (!rc) rc = buf_append_str(out, "</g>");
    if (!rc && count == 0)
        rc = html_appendf(out, "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">No results to "
                               "show</text>",
                          (sx.p0 + sx.p1) / 2, (sy.p0 + sy.p1) / 2);
    if (!rc && s->series && s->n_series) rc = legend_append(out, s, &sx, &sy);
    if (!rc) rc = buf_append_str(out, "</svg>");
    if (drawn) *drawn = count;
    return rc;
}

pacer_err svg_bars_append(buf *out, const char *id, const char *title, const svg_bar *bars, size_t n) {
    /* each row: the label above its bar, so a long label is never cut */
    const double width = 640, bar_w = 470, row_h = 38;
    double top = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(bars[i].value) && bars[i].value > top) top = bars[i].value;
    int h = (int)(n * row_h + 4);
    pacer_err rc = html_appendf(out, "<svg id=\"%s\" class=\"chart bars\" viewBox=\"0 0 %.0f %d\" role=\"img\" "
                                     "aria-labelledby=\"%s-title\"><title id=\"%s-title\">%s</title>",
                                id, width, h, id, id, title);
    for (size_t i = 0; i < n && !rc; i++) {
        const svg_bar *b = &bars[i];
        bool has = isfinite(b->value) && b->value >= 0;
        double y = 2 + i * row_h, wpx = has && top > 0 ? b->value / top * bar_w : 0;
        char v[32];
        snprintf(v, sizeof v, has ? "%.1f" : "no value", b->value);
        rc = html_appendf(out, "<text class=\"label\" x=\"0\" y=\"%.1f\">%s</text>"
                               "<rect class=\"bar s%zu\" x=\"0\" y=\"%.1f\" width=\"%.1f\" height=\"16\" rx=\"3\"/>"
                               "<text class=\"note\" x=\"%.1f\" y=\"%.1f\">%s</text>",
                          y + 12, b->label, i % 8, y + 17, wpx, wpx + 6, y + 30, b->note ? b->note : v);
    }
    return rc ? rc : buf_append_str(out, "</svg>");
}

pacer_err svg_progress_append(buf *out, double fraction, const char *label) {
    if (!isfinite(fraction) || fraction < 0) fraction = 0;
    if (fraction > 1) fraction = 1;
    return html_appendf(out, "<svg class=\"progress\" viewBox=\"0 0 200 12\" role=\"img\" aria-label=\"%s\">"
                             "<title>%s</title><rect class=\"track\" width=\"200\" height=\"12\" rx=\"6\"/>"
                             "<rect class=\"fill\" width=\"%.1f\" height=\"12\" rx=\"6\"/></svg>",
                        label, label, 200 * fraction);
}
