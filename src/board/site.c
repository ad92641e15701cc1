/* site.c - the website's routes (see site.h): the dashboard, profiles and receipt pages from
 * the snapshot and the page cache, the browser upload through the receiver's one intake,
 * withdrawal by a submission's contributor, and the embedded style sheet, script and icon. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/embedded.h"
#include "base/json.h"
#include "base/log.h"
#include "bench/suite.h"
#include "board/site_internal.h"

#define FILTER_MAX 256 /* bytes of a filter value */
#define PAGE_NUM_MAX 1000000

static pacer_err page_error(board_site *s, http_req *r, int status, const char *title, const char *message) {
    buf page;
    buf_init(&page, SITE_PAGE_MAX);
    pacer_err rc = pages_error(&page, &s->pages, status, title, message);
    if (!rc) rc = site_respond_page(r, status, &page);
    buf_free(&page);
    return rc;
}

static pacer_err not_found(board_site *s, http_req *r) {
    return page_error(s, r, 404, "Not found", "There is no page at this address.");
}

static pacer_err bad_request(board_site *s, http_req *r, const char *why) {
    return page_error(s, r, 400, "Bad request", why);
}

/* ---- the visitor's question, from the URL ---- */

static bool parse_count(const char *v, size_t max, size_t *out) {
    if (!v || !*v) return false;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end || v[0] == '-' || n > max) return false;
    *out = (size_t)n;
    return true;
}

/* Fills `q` from the query string; false (with *why) for a value the board cannot serve. */
static bool parse_query(const board_site *s, http_req *r, pages_query *q, const char **why) {
    *q = (pages_query){.map_pages = 1};
    const char *suite_id = http_req_query(r, "suite");
    if (suite_id && *suite_id) {
        size_t i = 0;
        while (i < s->pages.n_suites && strcmp(s->suites[i].id, suite_id) != 0) i++;
        if (i == s->pages.n_suites) { *why = "This board does not rank that suite."; return false; }
        q->suite = i;
    }
    const char *names[] = {"model", "platform", "hardware"};
    const char **dst[] = {&q->model, &q->platform, &q->hardware};
    for (size_t i = 0; i < 3; i++) {
        const char *v = http_req_query(r, names[i]);
        if (v && strlen(v) > FILTER_MAX) { *why = "A filter value is too long."; return false; }
        *dst[i] = v && *v ? v : NULL;
    }
    const char *size = http_req_query(r, "size");
    q->active = size && strcmp(size, "active") == 0;
    const char *more = http_req_query(r, "more"), *page = http_req_query(r, "page");
    if (more && !parse_count(more, PAGES_MAP_PAGES_MAX, &q->map_pages)) q->map_pages = 1;
    if (q->map_pages < 1) q->map_pages = 1;
    if (page && !parse_count(page, PAGE_NUM_MAX, &q->page)) q->page = 0;
    return true;
}

/* Renders through `render` unless the cache has the page of this snapshot; answers. */
typedef pacer_err (*render_fn)(board_site *s, const pages_query *q, const void *arg, const site_snapshot *snap,
                               buf *page);

static pacer_err cached_page(board_site *s, http_req *r, const char *path, const pages_query *q, render_fn render,
                             const void *arg) {
    site_snapshot *snap = site_snapshot_get(s);
    if (!snap) return page_error(s, r, 503, "Unavailable", "The board cannot read its results now; try again soon.");
    buf key, page;
    buf_init(&key, 4096);
    buf_init(&page, SITE_PAGE_MAX);
    pacer_err rc = pages_query_url(&key, path, &s->pages, q);
    if (!rc && !site_cache_answer(s, r, key.data, snap->gen, &rc)) {
        rc = render(s, q, arg, snap, &page);
        if (!rc) site_cache_put(s, key.data, &page, snap->gen);
        if (!rc) rc = site_respond_page(r, 200, &page);
    }
    site_snapshot_put(s, snap);
    buf_free(&key);
    buf_free(&page);
    return rc;
}

static board_site *site_of(void *ctx) { return board_get_site((struct board *)ctx); }

/* GET and HEAD read a page; anything else gets 405. */
static bool reads(http_req *r) {
    const char *m = http_req_method(r);
    return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
}

static pacer_err not_allowed(board_site *s, http_req *r) {
    return page_error(s, r, 405, "Method not allowed", "This address takes no such request.");
}

/* ---- the dashboard ---- */

static pacer_err render_dashboard(board_site *s, const pages_query *q, const void *arg, const site_snapshot *snap,
                                  buf *page) {
    (void)arg;
    return pages_dashboard(page, &s->pages, q, snap->rows, snap->n);
}

static pacer_err h_dashboard(void *ctx, http_req *r) {
    board_site *s = site_of(ctx);
    pages_query q;
    const char *why;
    if (!reads(r)) return not_allowed(s, r);
    if (!parse_query(s, r, &q, &why)) return bad_request(s, r, why);
    q.page = 0;
    return cached_page(s, r, "/", &q, render_dashboard, NULL);
}

/* ---- profiles ---- */

static bool id_ok(const char *id) {
    size_t n = strlen(id);
    return n > 0 && n < STORE_ID_MAX && strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static pacer_err render_profile(board_site *s, const pages_query *q, const void *arg, const site_snapshot *snap,
                                buf *page) {
    const store_profile *p = arg;
    pages_profile_view v = {p->id, p->display_name, p->created_s};
    return pages_profile(page, &s->pages, q, &v, snap->rows, snap->n);
}

static pacer_err h_profile(void *ctx, http_req *r) {
    board_site *s = site_of(ctx);
    const char *id = http_req_path(r) + strlen("/c/");
    if (!reads(r)) return not_allowed(s, r);
    if (!id_ok(id)) return not_found(s, r);
    pages_query q;
    const char *why;
    if (!parse_query(s, r, &q, &why)) return bad_request(s, r, why);
    q = (pages_query){.suite = q.suite, .page = q.page, .map_pages = 1};
    store_profile p;
    pacer_err rc = store_profile_get(s->store, id, &p);
    if (rc == PACER_ERR_NOT_FOUND) return not_found(s, r);
    if (rc) return page_error(s, r, 503, "Unavailable", "The board cannot read its results now; try again soon.");
    char path[64];
    snprintf(path, sizeof path, "/c/%s", id);
    return cached_page(s, r, path, &q, render_profile, &p);
}

/* ---- receipt pages and withdrawal ---- */

/* A visitor without a profile sees a public receipt's page as everyone does: from the cache. */
static pacer_err receipt_page(board_site *s, http_req *r, const char *id) {
    char key[64];
    snprintf(key, sizeof key, "/r/%s", id);
    site_snapshot *snap = site_profile_cookie_sent(r) ? NULL : site_snapshot_get(s);
    pacer_err rc = PACER_OK;
    if (snap && site_cache_answer(s, r, key, snap->gen, &rc)) {
        site_snapshot_put(s, snap);
        return rc;
    }
    store_submission sub;
    rc = store_submission_get(s->store, id, true, &sub);
    if (rc) {
        site_snapshot_put(s, snap);
        return rc == PACER_ERR_NOT_FOUND ? not_found(s, r)
                                         : page_error(s, r, 503, "Unavailable", "The board cannot read its results now; try again soon.");
    }
    store_profile me;
    bool own = site_profile_of(s, r, &me) == PACER_OK && strcmp(me.id, sub.profile_id) == 0;
    json_t *doc = sub.receipt ? json_loads(sub.receipt, 0, NULL) : NULL;
    json_t *reasons = json_loads(sub.reasons[0] ? sub.reasons : "[]", 0, NULL);
    char csrf[65] = "";
    rank_row row;
    buf page;
    buf_init(&page, SITE_PAGE_MAX);
    if (!own && sub.state != BOARD_STATE_PUBLIC) {
        rc = not_found(s, r); /* not public: only its contributor sees it */
    } else if (!doc) {
        rc = page_error(s, r, 500, "Unreadable receipt", "The stored receipt of this submission cannot be read.");
    } else {
        rc = own ? site_csrf_issue(s, r, csrf) : PACER_OK;
        if (!rc) rc = site_row_from_submission(NULL, &sub, &row);
        pages_receipt_view v = {&row, board_state_name(sub.state), reasons, doc, own, csrf};
        if (!rc) rc = pages_receipt(&page, &s->pages, &v);
        if (!rc && snap && sub.state == BOARD_STATE_PUBLIC) site_cache_put(s, key, &page, snap->gen);
        if (!rc) rc = site_respond_page(r, 200, &page);
    }
    site_snapshot_put(s, snap);
    buf_free(&page);
    json_decref(doc);
    json_decref(reasons);
    store_submission_clear(&sub);
    return rc;
}

typedef struct form_fields {
    char csrf[80];
    char name[SITE_NAME_MAX + 8];
    size_t name_len;
    bool name_too_long;
    char *receipt; /* malloc'd */
    size_t receipt_len;
    bool has_receipt;
} form_fields;

static pacer_err collect(void *ud, const char *name, const char *filename, const char *value, size_t len) {
    form_fields *f = ud;
    (void)filename;
    if (strcmp(name, "csrf") == 0) {
        snprintf(f->csrf, sizeof f->csrf, "%.*s", (int)(len < sizeof f->csrf ? len : sizeof f->csrf - 1), value);
    } else if (strcmp(name, "display_name") == 0) {
        while (len && (*value == ' ' || *value == '\t')) { value++; len--; }
        while (len && (value[len - 1] == ' ' || value[len - 1] == '\t')) len--;
        f->name_too_long = len >= sizeof f->name;
        f->name_len = f->name_too_long ? 0 : len;
        memcpy(f->name, value, f->name_len);
        f->name[f->name_len] = '\0';
    } else if (strcmp(name, "receipt") == 0 && !f->has_receipt) {
        if (!(f->receipt = malloc(len + 1))) return PACER_ERR_NOMEM;
        memcpy(f->receipt, value, len);
        f->receipt[len] = '\0';
        f->receipt_len = len;
        f->has_receipt = true;
    }
    return PACER_OK;
}

static pacer_err forbidden(board_site *s, http_req *r) {
    return page_error(s, r, 403, "Refused",
                      "This form did not come from this board's own page, or it expired. Open the page again and "
                      "retry.");
}

static pacer_err withdraw(board_site *s, http_req *r, const char *id) {
    form_fields f = {0};
    pacer_err rc = http_req_form(r, collect, &f);
    free(f.receipt);
    if (rc == PACER_ERR_NOMEM) return rc;
    if (rc || !site_csrf_check(s, r, f.csrf)) return forbidden(s, r);
    store_profile me;
    if (site_profile_of(s, r, &me)) return forbidden(s, r);
    unsigned from = 1u << BOARD_STATE_PUBLIC | 1u << BOARD_STATE_PENDING_CHECKPOINT | 1u << BOARD_STATE_PENDING_REVIEW;
    rc = store_submission_set_state(s->store, id, from, BOARD_STATE_WITHDRAWN, me.id, NULL, (int64_t)time(NULL));
    if (rc == PACER_ERR_NOT_FOUND) return not_found(s, r);
    if (rc == PACER_ERR_STATE) return page_error(s, r, 409, "Not withdrawn", "The submission cannot be withdrawn in its state.");
    if (rc) return page_error(s, r, 503, "Unavailable", "The board could not change the submission; try again.");
    site_invalidate(s);
    char loc[64];
    snprintf(loc, sizeof loc, "/r/%s", id);
    rc = http_req_add_header(r, "Location", loc);
    return rc ? rc : http_respond(r, 303, "text/plain", "", 0);
}

static pacer_err h_result(void *ctx, http_req *r) {
    board_site *s = site_of(ctx);
    char id[STORE_ID_MAX];
    const char *rest = http_req_path(r) + strlen("/r/");
    size_t n = strcspn(rest, "/");
    bool wd = strcmp(rest + n, "/withdraw") == 0;
    if (n == 0 || n >= sizeof id || (rest[n] && !wd)) return not_found(s, r);
    snprintf(id, sizeof id, "%.*s", (int)n, rest);
    if (!id_ok(id)) return not_found(s, r);
    if (wd && strcmp(http_req_method(r), "POST") == 0) return withdraw(s, r, id);
    if (!wd && reads(r)) return receipt_page(s, r, id);
    return not_allowed(s, r);
}

/* ---- upload ---- */

static pacer_err upload_form(board_site *s, http_req *r) {
    char csrf[65];
    store_profile me;
    bool known = site_profile_of(s, r, &me) == PACER_OK;
    pacer_err rc = site_csrf_issue(s, r, csrf);
    pages_upload_view v = {csrf, known ? me.display_name : NULL, known ? me.id : NULL, INTAKE_MAX_BYTES};
    buf page;
    buf_init(&page, SITE_PAGE_MAX);
    if (!rc) rc = pages_upload(&page, &s->pages, &v);
    if (!rc) rc = site_respond_page(r, 200, &page);
    buf_free(&page);
    return rc;
}

/* The intake's answer as a page, with the profile it went to. */
static pacer_err upload_answer(board_site *s, http_req *r, int status, json_t *answer, const store_profile *who) {
    json_object_set_new(answer, "profile", json_string(who->id));
    buf page;
    buf_init(&page, SITE_PAGE_MAX);
    pacer_err rc = pages_upload_result(&page, &s->pages, status, answer);
    if (!rc) rc = site_respond_page(r, status, &page);
    buf_free(&page);
    return rc;
}

static pacer_err upload(board_site *s, http_req *r) {
    form_fields f = {0};
    pacer_err rc = http_req_form(r, collect, &f);
    if (rc == PACER_ERR_NOMEM) goto out;
    if (rc || !site_csrf_check(s, r, f.csrf)) { rc = forbidden(s, r); goto out; }
    if (!f.has_receipt || f.receipt_len == 0) { rc = bad_request(s, r, "Choose a receipt file to upload."); goto out; }
    int64_t now = (int64_t)time(NULL);
    board_identity who = {0};
    if (site_profile_of(s, r, &who.profile) != PACER_OK) {
        if (f.name_too_long || !site_name_valid(f.name, f.name_len)) {
            rc = bad_request(s, r, "Choose a display name: 1 to 64 characters, no control characters.");
            goto out;
        }
        if ((rc = site_profile_create(s, r, f.name, now, &who.profile))) {
            rc = page_error(s, r, 503, "Unavailable", "The board could not make a profile; nothing was saved.");
            goto out;
        }
        log_info("board: browser profile %s created", who.profile.id);
    } else if (!f.name_too_long && site_name_valid(f.name, f.name_len) && strcmp(f.name, who.profile.display_name) != 0 &&
               store_profile_rename(s->store, who.profile.id, f.name) == PACER_OK) {
        snprintf(who.profile.display_name, sizeof who.profile.display_name, "%s", f.name);
        site_invalidate(s); /* the name shows on every page of the profile */
    }
    json_t *answer = NULL;
    int status = board_submit(s->b, &who, f.receipt, f.receipt_len, now, &answer);
    if (!answer) { rc = page_error(s, r, 500, "Upload failed", "The board gave no answer; nothing was saved."); goto out; }
    if (status == 200 || status == 201) site_invalidate(s);
    rc = upload_answer(s, r, status, answer, &who.profile);
    json_decref(answer);
out:
    free(f.receipt);
    return rc;
}

static pacer_err h_upload(void *ctx, http_req *r) {
    board_site *s = site_of(ctx);
    if (reads(r)) return upload_form(s, r);
    if (strcmp(http_req_method(r), "POST") == 0) return upload(s, r);
    return not_allowed(s, r);
}

/* ---- assets ---- */

static pacer_err h_asset(void *ctx, http_req *r) {
    static const char *const types[][2] = {
        {"board.css", "text/css; charset=utf-8"},
        {"board.js", "text/javascript; charset=utf-8"},
        {"icon.svg", "image/svg+xml"},
    };
    const char *name = http_req_path(r) + strlen("/assets/");
    if (!reads(r)) return not_allowed(site_of(ctx), r);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const embedded_file *f = strcmp(name, types[i][0]) == 0 ? embedded_find(name) : NULL;
        if (!f) continue;
        pacer_err rc = http_req_add_header(r, "Cache-Control", "public, max-age=3600");
        if (!rc) rc = http_req_add_header(r, "X-Content-Type-Options", "nosniff");
        return rc ? rc : http_respond(r, 200, types[i][1], f->data, f->size);
    }
    return not_found(site_of(ctx), r);
}

const http_route site_routes[] = {
    {NULL, "/", HTTP_MATCH_EXACT, h_dashboard},
    {NULL, "/assets/", HTTP_MATCH_PREFIX, h_asset},
    {NULL, "/c/", HTTP_MATCH_PREFIX, h_profile},
    {NULL, "/r/", HTTP_MATCH_PREFIX, h_result},
    {NULL, "/upload", HTTP_MATCH_EXACT, h_upload},
};
const size_t site_route_count = sizeof site_routes / sizeof site_routes[0];

bool site_path_is_page(const char *path) { return strncmp(path, "/api/", 5) != 0 && strcmp(path, "/metrics") != 0; }

pacer_err site_not_found(struct board *b, http_req *r) { return not_found(board_get_site(b), r); }

pacer_err site_too_large(struct board *b, http_req *r) {
    char msg[160];
    snprintf(msg, sizeof msg, "The upload is larger than the board accepts (receipts up to %u KB).",
             INTAKE_MAX_BYTES / 1024);
    return page_error(board_get_site(b), r, 413, "Too large", msg);
}

/* ---- life cycle ---- */

pacer_err site_new(struct board *b, const site_config *cfg, board_site **out) {
    *out = NULL;
    board_site *s = calloc(1, sizeof *s);
    if (!s) return PACER_ERR_NOMEM;
    const board_config *bc = board_get_config(b);
    s->b = b;
    s->store = bc->store;
    s->ttl_ms = cfg && cfg->snapshot_ttl_ms > 0 ? cfg->snapshot_ttl_ms : 2000;
    /* the newest suite first: it is the dashboard's default tab */
    const char *ids[] = {"community-v2", "community-v1"};
    bool on[] = {bc->intake.accept_v2, bc->intake.accept_v1};
    for (size_t i = 0; i < 2; i++) {
        size_t k = s->pages.n_suites;
        if (!on[i] || suite_builtin_digest(ids[i], s->digests[k])) continue;
        s->suites[k] = (pages_suite){ids[i], s->digests[k]};
        s->pages.n_suites++;
    }
    s->pages.suites = s->suites;
    s->pages.hub_url = bc->hub;
    pthread_mutex_init(&s->snap_mu, NULL);
    pthread_mutex_init(&s->build_mu, NULL);
    pthread_rwlock_init(&s->cache_lock, NULL);
    if (getrandom(s->key, sizeof s->key, 0) != (ssize_t)sizeof s->key) {
        site_free(s);
        return PACER_ERR_IO;
    }
    *out = s;
    return PACER_OK;
}

void site_free(board_site *s) {
    if (!s) return;
    site_snapshot_free(s->snap);
    site_cache_clear(s);
    pthread_mutex_destroy(&s->snap_mu);
    pthread_mutex_destroy(&s->build_mu);
    pthread_rwlock_destroy(&s->cache_lock);
    free(s);
}
