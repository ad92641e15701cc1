/* site_internal.h - what the website's files share (private to src/board/): the site's
 * state, the snapshot of published rows with the page cache (site_data.c), and sessions:
 * cookies, CSRF tokens, browser profiles, security headers (site_session.c). */
#ifndef PACER_BOARD_SITE_INTERNAL_H
#define PACER_BOARD_SITE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "board/board.h"
#include "board/pages.h"
#include "board/site.h"

#define SITE_SUITES_MAX 4
#define SITE_CACHE_SLOTS 256
#define SITE_PAGE_MAX (8u << 20)  /* the largest page rendered */
#define SITE_ROWS_MAX 500000      /* published rows a snapshot holds */
#define SITE_NAME_MAX 64          /* bytes of a display name */

/* Published rows of every ranked suite as rank rows, newest first; strings in an arena.
 * Immutable once built; shared by reference count. */
typedef struct site_snapshot {
    int refs;                 /* guarded by board_site.snap_mu */
    uint64_t gen;             /* the page cache's generation it belongs to */
    uint64_t seq;             /* site.dirty_seq when the build started */
    uint64_t digest;          /* of every row's content: an unchanged rebuild keeps the gen */
    int64_t built_ms;
    rank_row *rows;
    size_t n;
    char **blocks;            /* the string arena */
    size_t n_blocks, used;
} site_snapshot;

typedef struct site_page {
    char *key;                /* the canonical URL */
    char *body;
    size_t len;
    uint64_t gen;
} site_page;

struct board_site {
    struct board *b;
    board_store *store;
    int64_t ttl_ms;
    pages_suite suites[SITE_SUITES_MAX];
    char digests[SITE_SUITES_MAX][65];
    pages_site pages;
    unsigned char key[32];    /* CSRF tokens are HMACs under it */
    pthread_mutex_t snap_mu;  /* guards snap, dirty_seq, gen */
    pthread_mutex_t build_mu; /* one snapshot build at a time */
    site_snapshot *snap;
    uint64_t dirty_seq, gen;
    pthread_rwlock_t cache_lock;
    site_page cache[SITE_CACHE_SLOTS];
};

/* ---- site_data.c ---- */

/* A current snapshot (built now when stale), with a reference; NULL on a store error. */
site_snapshot *site_snapshot_get(board_site *s);
void site_snapshot_put(board_site *s, site_snapshot *snap);
/* Converts one store row into rank_row form, copying strings into `snap`'s arena. */
pacer_err site_row_from_submission(site_snapshot *snap, const store_submission *sub, rank_row *out);
void site_snapshot_free(site_snapshot *snap);
/* Answers `r` from the cache when `key` has a page of generation `gen`; true when it did. */
bool site_cache_answer(board_site *s, http_req *r, const char *key, uint64_t gen, pacer_err *rc);
/* Keeps a copy of `page` under `key` for generation `gen` (best effort). */
void site_cache_put(board_site *s, const char *key, const buf *page, uint64_t gen);
void site_cache_clear(board_site *s);

/* ---- site_session.c ---- */

/* Adds the security headers every page carries. */
pacer_err site_headers(http_req *r);
/* Answers with an HTML page (the security headers added). */
pacer_err site_respond_page(http_req *r, int status, buf *page);
/* The request's pacer_csrf cookie, or a new one set on the response (Set-Cookie); the form
 * token for it into token (65 bytes). */
pacer_err site_csrf_issue(board_site *s, http_req *r, char token[65]);
/* True when a POST is the board's own form: same origin by Origin / Sec-Fetch-Site when the
 * browser sent them, the pacer_csrf cookie present and `token` its HMAC. */
bool site_csrf_check(board_site *s, http_req *r, const char *token);
/* The browser profile of the request's pacer_profile cookie; PACER_ERR_NOT_FOUND when none
 * or unknown. */
pacer_err site_profile_of(board_site *s, http_req *r, store_profile *out);
/* True when the request carries a pacer_profile cookie (known or not). */
bool site_profile_cookie_sent(http_req *r);
/* Makes a browser profile named `name` and sets its cookie on the response. */
pacer_err site_profile_create(board_site *s, http_req *r, const char *name, int64_t now_s, store_profile *out);
/* True when `name` (n bytes) is a display name the board takes: 1..SITE_NAME_MAX bytes of
 * valid UTF-8 without control characters, not only white space. */
bool site_name_valid(const char *name, size_t n);

#endif
