/* test_board_site.c - rankings on a seeded store: submissions written through the store
 * (SQLite in a temporary directory; PostgreSQL too when PACER_TEST_PG names a database, as
 * tests/integration/board_web.sh does with a private cluster), read back into the website's
 * snapshot, ranked, and rendered. Ties share honours, unrounded values decide, pending and
 * withdrawn submissions earn nothing, unknown sizes are unranked, v1 and v2 are never mixed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/suite.h"
#include "board/board.h"
#include "board/site_internal.h"

static char DIR_[64], V1D[65], V2D[65];
static board_store *ST;
static board *B;
static board_site *S;
static int SEQ;

static void open_store(void) {
    const char *pg = getenv("PACER_TEST_PG");
    char err[256] = "", path[128];
    store_config cfg = {.kind = STORE_SQLITE};
    if (pg && *pg) {
        cfg = (store_config){.kind = STORE_POSTGRES, .target = pg};
    } else {
        snprintf(DIR_, sizeof DIR_, "/tmp/pacer-site-XXXXXX");
        cr_assert_not_null(mkdtemp(DIR_));
        snprintf(path, sizeof path, "%s/board.db", DIR_);
        cfg.target = path;
    }
    cr_assert_eq(store_open(&cfg, &ST, err, sizeof err), PACER_OK, "%s", err);
    board_config bc = {.store = ST};
    intake_config_default(&bc.intake);
    cr_assert_eq(board_new(&bc, &B), PACER_OK);
    cr_assert_eq(site_new(B, NULL, &S), PACER_OK);
    cr_assert_eq(suite_builtin_digest("community-v1", V1D), PACER_OK);
    cr_assert_eq(suite_builtin_digest("community-v2", V2D), PACER_OK);
}

static void close_store(void) {
    site_free(S);
    board_free(B);
    store_close(ST);
    if (DIR_[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", DIR_);
        cr_assert_eq(system(cmd), 0);
    }
}

TestSuite(site_rank, .init = open_store, .fini = close_store);

static store_profile profile(const char *name) {
    store_profile p;
    cr_assert_eq(store_profile_create(ST, name, "token", 1000, &p), PACER_OK);
    return p;
}

/* Stores one submission of `p`: v2 unless `v1`, in `state`, complete with a greedy-chat
 * median `tok_s` (0: none), `params` total (0: unknown). Returns its id. */
static const char *submit(const store_profile *p, bool v1, board_state state, double tok_s, int64_t params) {
    static char ids[64][STORE_ID_MAX];
    static int used;
    store_submission s = {0};
    snprintf(s.profile_id, sizeof s.profile_id, "%s", p->id);
    snprintf(s.canonical_hash, sizeof s.canonical_hash, "%064d", ++SEQ);
    s.state = state;
    snprintf(s.suite_id, sizeof s.suite_id, "%s", v1 ? "community-v1" : "community-v2");
    snprintf(s.suite_digest, sizeof s.suite_digest, "%s", v1 ? V1D : V2D);
    s.suite_version = s.rule_version = v1 ? 1 : 2;
    s.standard = s.complete = true;
    snprintf(s.mode, sizeof s.mode, "managed");
    snprintf(s.model_id, sizeof s.model_id, "org/m%d", SEQ % 3);
    snprintf(s.backend, sizeof s.backend, "cuda");
    snprintf(s.platform, sizeof s.platform, "linux");
    snprintf(s.gpu_name, sizeof s.gpu_name, "GPU %d", SEQ % 2);
    s.has_chat_greedy = s.has_best_tok_s = tok_s > 0;
    s.chat_greedy_tok_s = s.best_tok_s = tok_s;
    s.chat_greedy_first_ms = 50;
    s.has_params_total = params > 0;
    s.params_total = params;
    s.receipt = "{}";
    store_insert_result res;
    cr_assert_eq(store_submission_insert(ST, &s, 1000, 2000 + SEQ, &res), PACER_OK);
    cr_assert_eq(res, STORE_INSERTED);
    snprintf(ids[used % 64], STORE_ID_MAX, "%s", s.id);
    return ids[used++ % 64];
}

static rank_filter v2(void) { return (rank_filter){"community-v2", V2D, NULL, NULL, NULL}; }

/* The profile of `p` over a fresh snapshot. */
static rank_profile ranked(const store_profile *p, rank_filter f) {
    site_invalidate(S);
    site_snapshot *snap = site_snapshot_get(S);
    cr_assert_not_null(snap);
    rank_profile rp;
    cr_assert_eq(rank_profile_compute(snap->rows, snap->n, &f, p->id, &rp), PACER_OK);
    site_snapshot_put(S, snap);
    return rp;
}

Test(site_rank, ties_share_honours) {
    store_profile a = profile("a"), b = profile("b"), c = profile("c");
    submit(&a, false, BOARD_STATE_PUBLIC, 100.0, 0);
    submit(&a, false, BOARD_STATE_PUBLIC, 80.0, 0);
    submit(&b, false, BOARD_STATE_PUBLIC, 100.0, 0);
    submit(&b, false, BOARD_STATE_PUBLIC, 90.0, 0);
    submit(&c, false, BOARD_STATE_PUBLIC, 99.0, 0);
    rank_profile ra = ranked(&a, v2()), rb = ranked(&b, v2()), rc = ranked(&c, v2());
    cr_assert(ra.top_contributor && rb.top_contributor, "two runs each: both lead");
    cr_assert(ra.speed_leader && rb.speed_leader, "100 each: both lead");
    cr_assert(!rc.top_contributor && !rc.speed_leader);
    /* and the page says so */
    site_snapshot *snap = site_snapshot_get(S);
    pages_profile_view pv = {b.id, b.display_name, b.created_s};
    buf page;
    buf_init(&page, 1u << 22);
    cr_assert_eq(pages_profile(&page, &S->pages, &(pages_query){0}, &pv, snap->rows, snap->n), PACER_OK);
    cr_assert_not_null(strstr(page.data, "id=\"honour-top\""));
    cr_assert_not_null(strstr(page.data, "id=\"honour-speed\""));
    buf_free(&page);
    site_snapshot_put(S, snap);
}

Test(site_rank, unrounded_values_decide) {
    store_profile a = profile("a"), b = profile("b");
    submit(&a, false, BOARD_STATE_PUBLIC, 100.00004, 0);
    submit(&b, false, BOARD_STATE_PUBLIC, 100.00001, 0);
    cr_assert(ranked(&a, v2()).speed_leader);
    cr_assert(!ranked(&b, v2()).speed_leader, "both show as 100.0, the stored values differ");
    site_snapshot *snap = site_snapshot_get(S);
    rank_filter f = v2();
    rank_list l;
    cr_assert_eq(rank_compute(snap->rows, snap->n, &f, RANK_FASTEST, &l), PACER_OK);
    cr_assert_eq(l.n, 2);
    cr_assert_eq(l.items[0].place, 1);
    cr_assert_eq(l.items[1].place, 2);
    cr_assert_str_eq(l.items[0].profile_id, a.id);
    rank_list_free(&l);
    site_snapshot_put(S, snap);
}

Test(site_rank, pending_and_withdrawn_earn_nothing) {
    store_profile a = profile("a"), b = profile("b");
    submit(&a, false, BOARD_STATE_PENDING_REVIEW, 999.0, 0);
    submit(&a, false, BOARD_STATE_PENDING_CHECKPOINT, 998.0, 0);
    const char *w = submit(&a, false, BOARD_STATE_PUBLIC, 997.0, 0);
    submit(&b, false, BOARD_STATE_PUBLIC, 50.0, 0);
    cr_assert(ranked(&a, v2()).speed_leader, "before the withdrawal");
    cr_assert_eq(store_submission_set_state(ST, w, 1u << BOARD_STATE_PUBLIC, BOARD_STATE_WITHDRAWN, a.id, NULL, 5000),
                 PACER_OK);
    rank_profile ra = ranked(&a, v2()), rb = ranked(&b, v2());
    cr_assert_eq(ra.runs, 0);
    cr_assert(!ra.has_best && !ra.speed_leader && !ra.top_contributor);
    for (size_t t = 0; t < rank_trophy_count; t++) cr_assert(!ra.earned[t], "%s", rank_trophies[t].key);
    cr_assert(rb.speed_leader && rb.top_contributor);
    cr_assert(rb.earned[0], "bronze for one published run");
}

Test(site_rank, unknown_sizes_unranked) {
    store_profile a = profile("a"), b = profile("b");
    submit(&a, false, BOARD_STATE_PUBLIC, 500.0, 0);          /* fast, size unknown */
    submit(&b, false, BOARD_STATE_PUBLIC, 10.0, 8000000000);  /* 8B x 10 = 80 */
    site_snapshot *snap = site_snapshot_get(S);
    rank_filter f = v2();
    for (rank_board k = RANK_SIZE_TOTAL; k <= RANK_SIZE_ACTIVE; k++) {
        rank_list l;
        cr_assert_eq(rank_compute(snap->rows, snap->n, &f, k, &l), PACER_OK);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.items[0].profile_id, b.id);
        cr_assert_float_eq(l.items[0].value, 80.0, 1e-9);
        rank_list_free(&l);
    }
    buf page;
    buf_init(&page, 1u << 22);
    cr_assert_eq(pages_dashboard(&page, &S->pages, &(pages_query){0}, snap->rows, snap->n), PACER_OK);
    cr_assert_not_null(strstr(page.data, "1 run with an unknown parameter count is not ranked"));
    buf_free(&page);
    site_snapshot_put(S, snap);
}

Test(site_rank, a_new_display_name_shows_everywhere_and_merges_nothing) {
    store_profile a = profile("first name"), b = profile("other");
    submit(&a, false, BOARD_STATE_PUBLIC, 10.0, 0);
    submit(&b, false, BOARD_STATE_PUBLIC, 20.0, 0);
    cr_assert_eq(store_profile_rename(ST, a.id, "other"), PACER_OK, "a name two profiles share is fine");
    cr_assert_eq(store_profile_rename(ST, "c-0000000000000000", "x"), PACER_ERR_NOT_FOUND);
    char longer[STORE_NAME_MAX + 1];
    memset(longer, 'n', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    cr_assert_eq(store_profile_rename(ST, a.id, longer), PACER_ERR_ARG);
    store_profile got;
    cr_assert_eq(store_profile_get(ST, a.id, &got), PACER_OK);
    cr_assert_str_eq(got.display_name, "other");
    site_invalidate(S);
    site_snapshot *snap = site_snapshot_get(S);
    size_t named = 0;
    for (size_t i = 0; i < snap->n; i++) named += strcmp(snap->rows[i].display_name, "other") == 0;
    cr_assert_eq(named, 2, "the rows carry the new name");
    rank_filter f = v2();
    rank_counts c;
    cr_assert_eq(rank_count(snap->rows, snap->n, &f, &c), PACER_OK);
    cr_assert_eq(c.contributors, 2, "equal names never merge profiles");
    site_snapshot_put(S, snap);
}

Test(site_rank, v1_and_v2_never_mixed) {
    store_profile a = profile("a"), b = profile("b");
    for (int i = 0; i < 3; i++) submit(&a, true, BOARD_STATE_PUBLIC, 300.0, 0);
    submit(&b, false, BOARD_STATE_PUBLIC, 20.0, 0);
    rank_profile a2 = ranked(&a, v2()), b2 = ranked(&b, v2());
    cr_assert_eq(a2.runs, 0, "v1 runs count nowhere in v2");
    cr_assert(!a2.top_contributor && !a2.speed_leader);
    cr_assert(b2.top_contributor && b2.speed_leader);
    rank_filter f1 = {"community-v1", V1D, NULL, NULL, NULL};
    rank_profile a1 = ranked(&a, f1), b1 = ranked(&b, f1);
    cr_assert_eq(a1.runs, 3);
    cr_assert(a1.top_contributor && a1.speed_leader);
    cr_assert_eq(b1.runs, 0);
    cr_assert(!b1.speed_leader);
    cr_assert_eq(S->pages.n_suites, 2);
    cr_assert_str_eq(S->suites[0].id, "community-v2", "the newest suite is the default tab");
}
