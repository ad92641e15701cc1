/* pages.h - the board's website as server-rendered HTML: the dashboard (suite tabs,
 * filters, community counters, performance map, standings, size x speed podium, parameter
 * vs speed plot, speed records, contributions), receipt pages, profiles, the upload form
 * and its answer, error pages. Pure: rows and documents in, a page appended to a buffer;
 * no I/O, no clock (times come in as values).
 *
 * Every user-supplied string goes through html_escape (board/html.h); markup comes from
 * literals only. Pages load one style sheet and one script from the board itself
 * (PAGES_CSS_PATH, PAGES_JS_PATH), use no inline script or style, and work without the
 * script except for the in-browser review of an upload, which the no-script form replaces
 * with an explicit consent box. Rows are rank_row (board/rank.h): the caller converts what
 * the store returns. */
#ifndef PACER_BOARD_PAGES_H
#define PACER_BOARD_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"
#include "board/rank.h"

#define PAGES_CSS_PATH "/assets/board.css"
#define PAGES_JS_PATH "/assets/board.js"
#define PAGES_MAP_PAGE 200     /* map points per "load more" */
#define PAGES_MAP_PAGES_MAX 50
#define PAGES_TOP 10           /* rows per standings table */
#define PAGES_HISTORY_PAGE 25  /* rows per profile history page */

/* One suite the board ranks: a tab of the dashboard. */
typedef struct pages_suite {
    const char *id, *digest;
} pages_suite;

/* What every page needs to know about the site. */
typedef struct pages_site {
    const pages_suite *suites;
    size_t n_suites;
    const char *hub_url; /* the models' publisher: links go to hub_url + "/" + model id */
} pages_site;

/* What the visitor asked for, from the URL. */
typedef struct pages_query {
    size_t suite;                            /* index into pages_site.suites */
    const char *model, *platform, *hardware; /* filters; NULL or "": any */
    bool active;                             /* the size podium's active-parameter view */
    size_t map_pages;                        /* map pages loaded: 1 + "load more" presses */
    size_t page;                             /* profile history page, from 0 */
} pages_query;

/* The dashboard over rows[0..n) (any rows: those of other suites or not published are
 * ignored by the rankings), newest first as the store returns them. */
pacer_err pages_dashboard(buf *out, const pages_site *site, const pages_query *q, const rank_row *rows, size_t n);

/* A contributor's public profile. */
typedef struct pages_profile_view {
    const char *id, *display_name;
    int64_t created_s;
} pages_profile_view;

/* The profile page: counts, personal best, honours, trophies, the progress to the next
 * milestone and the paginated history (page q->page) of its published runs in the suite. */
pacer_err pages_profile(buf *out, const pages_site *site, const pages_query *q, const pages_profile_view *p,
                        const rank_row *rows, size_t n);

/* A submission as its receipt page shows it. */
typedef struct pages_receipt_view {
    const rank_row *row;        /* facts (id, contributor, suite, sizes, ...) */
    const char *state;          /* "public", "pending-review", ... */
    const json_t *reasons;      /* array of strings: why pending or rejected; may be NULL */
    const json_t *receipt;      /* the stored receipt document */
    bool own;                   /* the visitor is its contributor: offer to withdraw */
    const char *csrf;           /* the withdraw form's token when own */
} pages_receipt_view;

/* The receipt page: the validation verdict, every fact a person needs (model, revision,
 * hardware, settings, per-cell figures) and every attempt, with the fields of
 * receipt_attempt_fields[]. */
pacer_err pages_receipt(buf *out, const pages_site *site, const pages_receipt_view *v);

/* The upload form: display name, receipt file, in-browser review (board.js), confirm. */
typedef struct pages_upload_view {
    const char *csrf;          /* the form's token */
    const char *display_name;  /* prefilled (the visitor's profile), or NULL */
    const char *profile_id;    /* the visitor's profile, or NULL when none yet */
    size_t max_bytes;          /* the largest receipt the board accepts */
} pages_upload_view;
pacer_err pages_upload(buf *out, const pages_site *site, const pages_upload_view *v);

/* The answer to an upload: `answer` is the intake's JSON answer ({id, state, url, reasons,
 * duplicate, uploads_today, quota} or {error: {message, type}, reasons}) with its HTTP
 * status. */
pacer_err pages_upload_result(buf *out, const pages_site *site, int status, const json_t *answer);

/* A page that says what went wrong (404, 403, 413, ...). */
pacer_err pages_error(buf *out, const pages_site *site, int status, const char *title, const char *message);

/* ---- shared with the server glue ---- */

/* Appends the dashboard URL of `q` with `suite`, filters and switches ("/?suite=..."),
 * percent-encoded but not HTML-escaped; map_pages 0 and page 0 are left out. */
pacer_err pages_query_url(buf *out, const char *path, const pages_site *site, const pages_query *q);

/* "12.3", "0.49", "1.2k": a compact figure for people, from the unrounded value. */
void pages_format_number(double v, char *out, size_t n);
/* "8.03B", "494M": a parameter count. */
void pages_format_params(int64_t params, char *out, size_t n);
/* "2026-03-01 14:05 UTC" from Unix seconds. */
void pages_format_time(int64_t unix_s, char *out, size_t n);
/* "2026-03-01" from Unix seconds. */
void pages_format_date(int64_t unix_s, char *out, size_t n);

#endif
