/* svg.h - the board's charts, drawn by pacer as inline SVG: a scatter plot whose points are
 * links (the performance map, the parameter-count vs speed plot), a bar chart and a
 * progress bar. Pure: values in, markup appended to a buffer. Colours and fonts come from
 * the board's style sheet through classes (the page's CSP forbids inline styles); every
 * label goes through html_escape. */
#ifndef PACER_BOARD_SVG_H
#define PACER_BOARD_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

typedef struct svg_axis {
    const char *label; /* "first text (ms)" */
    bool log;          /* a logarithmic scale: values <= 0 cannot be drawn and are left out */
} svg_axis;

typedef struct svg_point {
    double x, y;
    const char *href;  /* the point links here (a focusable <a>); NULL: not a link */
    const char *label; /* accessible name and tooltip: the <title> of the link or circle */
    unsigned series;   /* colour: class "s<series % 8>" */
} svg_point;

typedef struct svg_scatter {
    const char *id;    /* the <svg> element's id (also prefixes inner ids) */
    const char *title; /* the accessible name of the figure */
    int width, height; /* view box; 0: 720 x 420 */
    svg_axis x, y;
    const svg_point *points;
    size_t n;
    const char *const *series; /* legend names, n_series of them; NULL: no legend */
    size_t n_series;
} svg_scatter;

/* Appends an <svg> element: axes with ticks, labels, gridlines and one circle per point,
 * points in input order (which is the keyboard order). A point with a non-finite value, or
 * <= 0 on a log axis, is left out; *drawn (may be NULL) gets the count drawn. An empty
 * plot says so in its body. */
pacer_err svg_scatter_append(buf *out, const svg_scatter *s, size_t *drawn);

typedef struct svg_bar {
    const char *label; /* category name */
    double value;      /* non-finite or negative: drawn as "no value" */
    const char *note;  /* text after the bar, e.g. "123.4 tok/s"; NULL: the value */
} svg_bar;

/* Appends a horizontal bar chart of `n` bars scaled to the largest value. */
pacer_err svg_bars_append(buf *out, const char *id, const char *title, const svg_bar *bars, size_t n);

/* Appends a progress bar `fraction` (clamped to 0..1) full, with the accessible name `label`. */
pacer_err svg_progress_append(buf *out, double fraction, const char *label);

/* Tick positions of an axis over [lo, hi] (lo < hi; lo > 0 on a log axis), at most `max`
 * of them, at 1-2-5 steps (linear) or powers of ten and their 2 and 5 multiples (log).
 * Returns the count. Exposed for tests. */
size_t svg_ticks(double lo, double hi, bool log_axis, double *ticks, size_t max);

#endif
