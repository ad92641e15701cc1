/* site.h - the board's website over HTTP: the page routes (dashboard, receipt pages,
 * profiles, the browser upload, withdrawal, the style sheet, script and icon), served from
 * the same route table as the receiver's API, with the receiver's one intake.
 *
 *   - Pages are rendered by board/pages from a snapshot of the published rows of every
 *     suite the board ranks, and cached by their canonical URL. A change this process makes
 *     (an upload, a withdrawal, a checkpoint lookup) calls site_invalidate; a change made
 *     elsewhere (the admin CLI, another board on the same PostgreSQL) shows within
 *     site_config.snapshot_ttl_ms.
 *   - Every HTML answer carries a strict Content-Security-Policy (the board's own script and
 *     style sheet only, no inline script or style, no other origin, no framing), nosniff,
 *     a same-origin referrer policy.
 *   - A browser profile is a store profile of kind "browser" whose secret lives only in the
 *     pacer_profile cookie (HttpOnly; SameSite=Strict; Secure unless the request came to a
 *     loopback host); the store keeps its SHA-256 like an upload token's. Its public id
 *     (/c/ID) grants nothing.
 *   - Every state-changing form carries a CSRF token: an HMAC of the pacer_csrf cookie under
 *     a key made when the site starts; a POST must carry both, and a browser's Origin or
 *     Sec-Fetch-Site, when sent, must say it came from the board itself. */
#ifndef PACER_BOARD_SITE_H
#define PACER_BOARD_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "server/http.h"

struct board;
typedef struct board_site board_site;

typedef struct site_config {
    int64_t snapshot_ttl_ms; /* how long pages may lag a change made elsewhere; 0: 2000 */
} site_config;

/* A site for board `b` (borrowed; its store and intake are used). */
pacer_err site_new(struct board *b, const site_config *cfg, board_site **out);
/* Accepts NULL. */
void site_free(board_site *s);

/* Cached pages are stale from now on: the next request rebuilds from the store. */
void site_invalidate(board_site *s);

/* The website's routes; every handler's ctx is the board (struct board *). */
extern const http_route site_routes[];
extern const size_t site_route_count;

/* For the board's not_found and too_large: an HTML page for a browser path, false when the
 * path is the API's (then the board answers in JSON). */
bool site_path_is_page(const char *path);
pacer_err site_not_found(struct board *b, http_req *r);
pacer_err site_too_large(struct board *b, http_req *r);

#endif
