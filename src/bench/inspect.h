/* inspect.h - the readable view of a validated receipt (and its drafts file), rendered
 * into a buffer; the CLI prints it. */
#ifndef PACER_INSPECT_H
#define PACER_INSPECT_H

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"

/* Appends the view of receipt `r` (already validated) to `out`: header facts, one row per
 * cell with medians and completeness, warnings (unranked and why, incomplete attempts with
 * their reasons) and, when `drafts` is not NULL, a drafts summary. */
pacer_err inspect_render(const json_t *r, const json_t *drafts, buf *out);
/* Appends the summary table alone (used at the end of a run). */
pacer_err inspect_render_table(const json_t *r, buf *out);

#endif
