/* site_data.c - what the website's pages are made from: a snapshot of the published rows of
 * every ranked suite (read from the store page by page, kept as rank rows with their strings
 * in an arena, rebuilt when stale), and the cache of rendered pages by canonical URL. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "board/site_internal.h"

#define ARENA_BLOCK (64u << 10)
#define STORE_PAGE 1000

/* A copy of `s` in the snapshot's arena; NULL on OOM. */
static const char *arena_str(site_snapshot *snap, const char *s) {
    size_t n = strlen(s) + 1;
    if (n > ARENA_BLOCK || !snap->n_blocks || snap->used + n > ARENA_BLOCK) {
        char **bl = realloc(snap->blocks, (snap->n_blocks + 1) * sizeof *bl);
        if (!bl) return NULL;
        snap->blocks = bl;
        if (!(bl[snap->n_blocks] = malloc(n > ARENA_BLOCK ? n : ARENA_BLOCK))) return NULL;
        snap->n_blocks++;
        snap->used = 0;
    }
    char *p = snap->blocks[snap->n_blocks - 1] + snap->used;
    memcpy(p, s, n);
    snap->used += n;
    return p;
}

pacer_err site_row_from_submission(site_snapshot *snap, const store_submission *sub, rank_row *out) {
    const char *hw = sub->gpu_name[0] ? sub->gpu_name : sub->cpu_model;
    const char *src[] = {sub->id, sub->profile_id, sub->display_name, sub->suite_id, sub->suite_digest,
                         sub->model_id, hw, sub->platform, sub->backend};
    const char *s[sizeof src / sizeof src[0]];
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
        if (!(s[i] = snap ? arena_str(snap, src[i]) : src[i])) return PACER_ERR_NOMEM;
    *out = (rank_row){.id = s[0], .profile_id = s[1], .display_name = s[2], .suite_id = s[3], .suite_digest = s[4],
                      .published = sub->state == BOARD_STATE_PUBLIC, .complete = sub->complete, .model_id = s[5],
                      .hardware = s[6], .platform = s[7], .backend = s[8], .has_chat_greedy = sub->has_chat_greedy,
                      .chat_greedy_tok_s = sub->chat_greedy_tok_s, .chat_greedy_first_ms = sub->chat_greedy_first_ms,
                      .has_best_tok_s = sub->has_best_tok_s, .best_tok_s = sub->best_tok_s,
                      .has_params_total = sub->has_params_total, .has_params_active = sub->has_params_active,
                      .params_total = sub->params_total, .params_active = sub->params_active,
                      .created_s = sub->created_s};
    return PACER_OK;
}

void site_snapshot_free(site_snapshot *snap) {
    if (!snap) return;
    for (size_t i = 0; i < snap->n_blocks; i++) free(snap->blocks[i]);
    free(snap->blocks);
    free(snap->rows);
    free(snap);
}

/* Appends one page of store rows; *more when the store has older ones. */
static pacer_err add_rows(site_snapshot *snap, size_t *cap, const store_submission_list *l) {
    if (snap->n + l->n > *cap) {
        size_t c = *cap ? *cap : 1024;
        while (c < snap->n + l->n) c *= 2;
        rank_row *rows = realloc(snap->rows, c * sizeof *rows);
        if (!rows) return PACER_ERR_NOMEM;
        snap->rows = rows;
        *cap = c;
    }
    for (size_t i = 0; i < l->n; i++) {
        pacer_err rc = site_row_from_submission(snap, &l->items[i], &snap->rows[snap->n]);
        if (rc) return rc;
        snap->n++;
    }
    return PACER_OK;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    for (const unsigned char *p = data; n--; p++) h = (h ^ *p) * 1099511628211ULL;
    return h;
}

/* A digest of everything the pages show of the rows. */
static uint64_t rows_digest(const rank_row *rows, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        const rank_row *r = &rows[i];
        const char *s[] = {r->id, r->profile_id, r->display_name, r->suite_id, r->suite_digest, r->model_id,
                           r->hardware, r->platform, r->backend};
        for (size_t k = 0; k < sizeof s / sizeof s[0]; k++) h = fnv(h, s[k], strlen(s[k]) + 1);
        const double d[] = {r->chat_greedy_tok_s, r->chat_greedy_first_ms, r->best_tok_s};
        const int64_t v[] = {r->published, r->complete, r->has_chat_greedy, r->has_best_tok_s, r->has_params_total,
                             r->has_params_active, r->params_total, r->params_active, r->created_s};
        h = fnv(fnv(h, d, sizeof d), v, sizeof v);
    }
    return h;
}

/* Reads every published row of every ranked suite, newest first per suite. */
static pacer_err snapshot_build(board_site *s, site_snapshot **out) {
    site_snapshot *snap = calloc(1, sizeof *snap);
    if (!snap) return PACER_ERR_NOMEM;
    size_t cap = 0;
    pacer_err rc = PACER_OK;
    for (size_t i = 0; i < s->pages.n_suites && !rc; i++) {
        char before_id[STORE_ID_MAX] = "";
        store_query q = {.suite_id = s->suites[i].id, .suite_digest = s->suites[i].digest,
                         .states = 1u << BOARD_STATE_PUBLIC, .limit = STORE_PAGE};
        for (bool more = true; more && !rc && snap->n < SITE_ROWS_MAX;) {
            store_submission_list l;
            if ((rc = store_results(s->store, &q, &l))) break;
            rc = add_rows(snap, &cap, &l);
            more = l.more && l.n > 0;
            if (more) {
                q.before_s = l.items[l.n - 1].created_s;
                memcpy(before_id, l.items[l.n - 1].id, sizeof before_id);
                q.before_id = before_id;
            }
            store_submission_list_free(&l);
        }
    }
    if (rc) {
        site_snapshot_free(snap);
        return rc;
    }
    snap->built_ms = clock_now_ns() / 1000000;
    snap->digest = rows_digest(snap->rows, snap->n);
    *out = snap;
    return PACER_OK;
}

static bool fresh(const board_site *s, const site_snapshot *snap, int64_t now_ms) {
    return snap && snap->seq == s->dirty_seq && now_ms - snap->built_ms < s->ttl_ms;
}

/* Builds a new snapshot (the caller holds build_mu) and makes it current; it keeps the old
 * generation, and so the cached pages, when no row changed. Returns it with a reference, or
 * the old one when the store cannot be read. */
static site_snapshot *rebuild(board_site *s) {
    pthread_mutex_lock(&s->snap_mu);
    uint64_t seq = s->dirty_seq;
    site_snapshot *snap = NULL;
    if (fresh(s, s->snap, clock_now_ns() / 1000000)) { /* built while this thread waited */
        snap = s->snap;
        snap->refs++;
    }
    pthread_mutex_unlock(&s->snap_mu);
    if (snap) return snap;
    site_snapshot *built = NULL;
    pacer_err rc = snapshot_build(s, &built);
    pthread_mutex_lock(&s->snap_mu);
    site_snapshot *old = s->snap;
    if (!rc) {
        built->seq = seq;
        built->gen = old && old->digest == built->digest ? old->gen : ++s->gen;
        built->refs = 2; /* the site's and the caller's */
        s->snap = built;
        if (old && --old->refs == 0) site_snapshot_free(old);
        snap = built;
    } else if (old) { /* the store failed: the last snapshot is better than nothing */
        log_warn("board: cannot read the store for pages: %s", pacer_strerror(rc));
        snap = old;
        snap->refs++;
    }
    pthread_mutex_unlock(&s->snap_mu);
    return snap;
}

site_snapshot *site_snapshot_get(board_site *s) {
    site_snapshot *snap = NULL;
    bool building = false;
    pthread_mutex_lock(&s->snap_mu);
    site_snapshot *cur = s->snap;
    if (cur && cur->seq == s->dirty_seq) {
        /* nothing changed here: fresh, or merely old; an old one is served while one thread
         * rebuilds (a change made elsewhere shows a moment later, no request waits) */
        if (fresh(s, cur, clock_now_ns() / 1000000) || pthread_mutex_trylock(&s->build_mu) != 0) {
            snap = cur;
            snap->refs++;
        } else {
            building = true;
        }
    }
    pthread_mutex_unlock(&s->snap_mu);
    if (snap) return snap;
    /* a change made here (or no snapshot yet): wait for a build that includes it */
    if (!building) pthread_mutex_lock(&s->build_mu);
    snap = rebuild(s);
    pthread_mutex_unlock(&s->build_mu);
    return snap;
}

void site_snapshot_put(board_site *s, site_snapshot *snap) {
    if (!snap) return;
    pthread_mutex_lock(&s->snap_mu);
    bool last = --snap->refs == 0;
    pthread_mutex_unlock(&s->snap_mu);
    if (last) site_snapshot_free(snap);
}

void site_invalidate(board_site *s) {
    if (!s) return;
    pthread_mutex_lock(&s->snap_mu);
    s->dirty_seq++;
    pthread_mutex_unlock(&s->snap_mu);
}

/* ---- the page cache: direct-mapped by a hash of the key ---- */

static size_t slot_of(const char *key) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    return (size_t)(h % SITE_CACHE_SLOTS);
}

bool site_cache_answer(board_site *s, http_req *r, const char *key, uint64_t gen, pacer_err *rc) {
    site_page *p = &s->cache[slot_of(key)];
    bool hit = false;
    pthread_rwlock_rdlock(&s->cache_lock);
    if (p->key && p->gen == gen && strcmp(p->key, key) == 0) {
        hit = true;
        *rc = site_headers(r);
        if (!*rc) *rc = http_respond(r, 200, "text/html; charset=utf-8", p->body, p->len);
    }
    pthread_rwlock_unlock(&s->cache_lock);
    return hit;
}

void site_cache_put(board_site *s, const char *key, const buf *page, uint64_t gen) {
    char *k = strdup(key), *body = malloc(page->len ? page->len : 1);
    if (!k || !body) {
        free(k);
        free(body);
        return;
    }
    memcpy(body, page->data, page->len);
    site_page *p = &s->cache[slot_of(key)];
    pthread_rwlock_wrlock(&s->cache_lock);
    free(p->key);
    free(p->body);
    *p = (site_page){k, body, page->len, gen};
    pthread_rwlock_unlock(&s->cache_lock);
}

void site_cache_clear(board_site *s) {
    for (size_t i = 0; i < SITE_CACHE_SLOTS; i++) {
        free(s->cache[i].key);
        free(s->cache[i].body);
        s->cache[i] = (site_page){0};
    }
}
