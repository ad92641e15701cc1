/* inspect.h - the readable view of a validated receipt (and its drafts file), rendered
 * into a buffer; the CLI prints it. */
#ifndef PACER_INSPECT_H
#define PACER_INSPECT_H

#include <jansson.h>
#include <stdbool.h>

#include "base/buf.h"
#include "base/error.h"

/* Appends the view of receipt `r` (already validated) to `out`: header facts, one row per
 * cell with medians and completeness, warnings (unranked and why, incomplete attempts with
 * their reasons) and, when `drafts` is not NULL, a drafts summary. */
pacer_err inspect_render(const json_t *r, const json_t *drafts, buf *out);
/* Appends the summary table alone (used at the end of a run). */
pacer_err inspect_render_table(const json_t *r, buf *out);

/* The views of `pacer bench inspect --format`. */
typedef enum inspect_format {
    INSPECT_TEXT = 0, /* inspect_render() */
    INSPECT_JSON = 1, /* the receipt itself */
    INSPECT_CSV = 2,  /* the cell table: one row per cell, a column per receipt_metrics[] median */
    INSPECT_MD = 3,   /* the same table in Markdown */
} inspect_format;
/* "text" | "json" | "csv" | "md"; false for anything else. */
bool inspect_format_parse(const char *name, inspect_format *f);
/* Appends the cell table in `f` (TEXT, CSV or MD): workload, setting, route, the median of
 * every metric of receipt_metrics[] printed with the metric's own format, and the status.
 * A missing median is "-" (text, md) or an empty field (csv). */
pacer_err inspect_render_cells(const json_t *r, inspect_format f, buf *out);

#endif
