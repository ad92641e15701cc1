/* pages_internal.h - what the board's page files share (private to src/board/): the page
 * frame, links to contributors, models and receipts, suite tabs. */
#ifndef PACER_BOARD_PAGES_INTERNAL_H
#define PACER_BOARD_PAGES_INTERNAL_H

#include "board/html.h"
#include "board/pages.h"

/* Which navigation entry is the current page. */
typedef enum page_nav { PAGE_NAV_NONE = 0, PAGE_NAV_DASHBOARD, PAGE_NAV_UPLOAD } page_nav;

/* Opens the document: head (title, style sheet, script), header with navigation, <main>. */
pacer_err page_begin(buf *out, const char *title, page_nav nav);
/* Closes <main> and the document. */
pacer_err page_end(buf *out);

/* <a href="/c/ID[?suite=..]">NAME</a> */
pacer_err page_contributor_link(buf *out, const pages_site *site, size_t suite, const char *profile_id,
                                const char *name);
/* The model id linked to its page at the publisher (hub). */
pacer_err page_model_link(buf *out, const pages_site *site, const char *model_id);
/* <a href="/r/ID">TEXT</a> */
pacer_err page_receipt_link(buf *out, const char *id, const char *text);
/* Tabs of the site's suites; each keeps `path` (and nothing else of the query). */
pacer_err page_suite_tabs(buf *out, const pages_site *site, size_t current, const char *path);

/* The filter of `q` for rank/. */
rank_filter page_filter(const pages_site *site, const pages_query *q);

#endif
