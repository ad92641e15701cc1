/* test_board_store.c - the board's store through its interface: migrations, profiles and
 * tokens, the idempotent quota-checked insert, states, the checkpoint retry queue, the page
 * queries with filters and keyset pagination. On a fresh SQLite file; with $PACER_TEST_PG
 * set (a conninfo; tests/integration/board.sh sets it for its private cluster) the same
 * tests run on PostgreSQL, each in a schema of its own. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board/store.h"

static char store_dir[] = "/tmp/pacer-store-XXXXXX";
static char target[1024];
static board_store *st;

static void store_up(void) {
    store_config cfg = {STORE_SQLITE, target, 2};
    const char *pg = getenv("PACER_TEST_PG");
    if (pg && *pg) {
        /* a fresh database schema per test: the search path names it */
        static int n;
        snprintf(target, sizeof target, "%s options='-c search_path=t%d_%d'", pg, (int)getpid(), ++n);
        cfg.kind = STORE_POSTGRES;
        char create[1200], err[512];
        snprintf(create, sizeof create, "psql -q \"%s\" -c 'CREATE SCHEMA t%d_%d' >/dev/null 2>&1", pg, (int)getpid(), n);
        cr_assert_eq(system(create), 0, "psql CREATE SCHEMA");
        cr_assert_eq(store_open(&cfg, &st, err, sizeof err), PACER_OK, "%s", err);
        return;
    }
    cr_assert_not_null(mkdtemp(store_dir));
    snprintf(target, sizeof target, "%s/board.db", store_dir);
    char err[512];
    cr_assert_eq(store_open(&cfg, &st, err, sizeof err), PACER_OK, "%s", err);
}

static void store_down(void) {
    store_close(st);
    st = NULL;
    if (!getenv("PACER_TEST_PG") || !*getenv("PACER_TEST_PG")) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf %s", store_dir);
        cr_assert_eq(system(cmd), 0);
        strcpy(store_dir, "/tmp/pacer-store-XXXXXX");
    }
}

TestSuite(store, .init = store_up, .fini = store_down);

/* A submission of `model` in community-v2 with a distinct hash. */
static store_submission sub_make(const char *profile, const char *hash_seed, const char *model, double tok_s) {
    store_submission s;
    memset(&s, 0, sizeof s);
    snprintf(s.profile_id, sizeof s.profile_id, "%s", profile);
    snprintf(s.canonical_hash, sizeof s.canonical_hash, "%064x", (unsigned)strlen(hash_seed) * 7919u + (unsigned)hash_seed[0]);
    memcpy(s.canonical_hash, hash_seed, strlen(hash_seed) < 64 ? strlen(hash_seed) : 64);
    s.state = BOARD_STATE_PUBLIC;
    strcpy(s.reasons, "[]");
    strcpy(s.suite_id, "community-v2");
    strcpy(s.suite_digest, "d2");
    s.suite_version = 2;
    s.rule_version = 2;
    s.standard = s.complete = true;
    strcpy(s.mode, "attached");
    snprintf(s.model_id, sizeof s.model_id, "%s", model);
    strcpy(s.revision, "0123abcd");
    strcpy(s.backend, "cuda");
    strcpy(s.platform, "linux");
    strcpy(s.gpu_name, "Test GPU");
    s.gpu_count = 1;
    strcpy(s.cpu_model, "Test CPU");
    s.has_chat_greedy = true;
    s.chat_greedy_tok_s = tok_s;
    s.chat_greedy_first_ms = 12.5;
    s.has_best_tok_s = true;
    s.best_tok_s = tok_s + 1;
    s.receipt = (char *)"{\"run_id\":\"x\"}";
    return s;
}

static store_profile profile(const char *name) {
    store_profile p;
    cr_assert_eq(store_profile_create(st, name, "token", 1000, &p), PACER_OK);
    return p;
}

Test(store, migrations_reach_the_latest_version_once) {
    cr_assert_eq(store_schema_version(st), store_schema_latest());
    store_config cfg = {getenv("PACER_TEST_PG") && *getenv("PACER_TEST_PG") ? STORE_POSTGRES : STORE_SQLITE, target, 1};
    board_store *again;
    char err[256];
    cr_assert_eq(store_open(&cfg, &again, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(store_schema_version(again), store_schema_latest());
    store_close(again);
}

Test(store, tokens_are_found_by_hash_and_names_are_unique) {
    store_profile p = profile("alice");
    const char *h = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    cr_assert_eq(store_token_create(st, "alice", h, p.id, 1000), PACER_OK);
    cr_assert_eq(store_token_create(st, "alice", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", p.id, 1000), PACER_ERR_STATE);
    store_profile got;
    char name[STORE_NAME_MAX];
    cr_assert_eq(store_token_find(st, h, &got, name), PACER_OK);
    cr_assert_str_eq(got.id, p.id);
    cr_assert_str_eq(got.display_name, "alice");
    cr_assert_str_eq(name, "alice");
    cr_assert_eq(store_token_find(st, "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc", &got, name),
                 PACER_ERR_NOT_FOUND);
    cr_assert_eq(store_profile_get(st, "c-nope", &got), PACER_ERR_NOT_FOUND);
}

Test(store, insert_is_idempotent_by_hash_and_counts_the_quota) {
    store_profile a = profile("a"), b = profile("b");
    store_insert_result res;
    store_submission s1 = sub_make(a.id, "h1", "org/m", 50);
    cr_assert_eq(store_submission_insert(st, &s1, 2, 5000, &res), PACER_OK);
    cr_assert_eq(res, STORE_INSERTED);
    cr_assert_eq(strncmp(s1.id, "s-", 2), 0);
    store_submission again = sub_make(a.id, "h1", "org/m", 50);
    cr_assert_eq(store_submission_insert(st, &again, 2, 5001, &res), PACER_OK);
    cr_assert_eq(res, STORE_EXISTING);
    cr_assert_str_eq(again.id, s1.id);
    store_submission other = sub_make(b.id, "h1", "org/m", 50);
    cr_assert_eq(store_submission_insert(st, &other, 2, 5002, &res), PACER_OK);
    cr_assert_eq(res, STORE_CONFLICT);
    store_submission s2 = sub_make(a.id, "h2", "org/m", 60), s3 = sub_make(a.id, "h3", "org/m", 70);
    cr_assert_eq(store_submission_insert(st, &s2, 2, 5003, &res), PACER_OK);
    cr_assert_eq(res, STORE_INSERTED);
    cr_assert_eq(store_submission_insert(st, &s3, 2, 5004, &res), PACER_OK);
    cr_assert_eq(res, STORE_QUOTA, "the third upload within a day is over a quota of 2");
    int used;
    cr_assert_eq(store_quota_used(st, a.id, 5004 - 86400, &used), PACER_OK);
    cr_assert_eq(used, 2);
    cr_assert_eq(store_submission_insert(st, &s3, 2, 5000 + 86401, &res), PACER_OK);
    cr_assert_eq(res, STORE_INSERTED, "a day later the quota is free again");
}

Test(store, get_returns_every_fact_and_the_receipt) {
    store_profile a = profile("a");
    store_insert_result res;
    store_submission s = sub_make(a.id, "hget", "org/m", 123.456789012345);
    s.has_params_total = true;
    s.params_total = 46702792704LL;
    cr_assert_eq(store_submission_insert(st, &s, 20, 7000, &res), PACER_OK);
    store_submission g;
    cr_assert_eq(store_submission_get(st, s.id, true, &g), PACER_OK);
    cr_assert_str_eq(g.display_name, "a");
    cr_assert_str_eq(g.receipt, "{\"run_id\":\"x\"}");
    cr_assert_eq(g.state, BOARD_STATE_PUBLIC);
    cr_assert(g.has_params_total && g.params_total == 46702792704LL && !g.has_params_active);
    cr_assert(g.has_chat_greedy && g.chat_greedy_tok_s == 123.456789012345, "unrounded: %.17g", g.chat_greedy_tok_s);
    cr_assert_eq(g.created_s, 7000);
    cr_assert_str_eq(g.gpu_name, "Test GPU");
    store_submission_clear(&g);
    cr_assert_eq(store_submission_get(st, s.id, false, &g), PACER_OK);
    cr_assert_null(g.receipt);
    cr_assert_eq(store_submission_get(st, "s-missing", false, &g), PACER_ERR_NOT_FOUND);
}

Test(store, states_change_only_from_allowed_ones) {
    store_profile a = profile("a"), b = profile("b");
    store_insert_result res;
    store_submission s = sub_make(a.id, "hstate", "org/m", 1);
    s.state = BOARD_STATE_PENDING_REVIEW;
    cr_assert_eq(store_submission_insert(st, &s, 20, 100, &res), PACER_OK);
    unsigned review = 1u << BOARD_STATE_PENDING_REVIEW;
    cr_assert_eq(store_submission_set_state(st, s.id, review, BOARD_STATE_WITHDRAWN, b.id, NULL, 101), PACER_ERR_NOT_FOUND,
                 "another profile's submission");
    cr_assert_eq(store_submission_set_state(st, s.id, review, BOARD_STATE_WITHDRAWN, a.id, NULL, 101), PACER_OK);
    cr_assert_eq(store_submission_set_state(st, s.id, review, BOARD_STATE_PUBLIC, NULL, "[\"x\"]", 102), PACER_ERR_STATE,
                 "a withdrawn submission is not pending review");
    store_submission g;
    cr_assert_eq(store_submission_get(st, s.id, false, &g), PACER_OK);
    cr_assert_eq(g.state, BOARD_STATE_WITHDRAWN);
    cr_assert_eq(g.updated_s, 101);
}

Test(store, the_lookup_queue_gives_due_ones_and_respects_later_decisions) {
    store_profile a = profile("a");
    store_insert_result res;
    store_submission s = sub_make(a.id, "hq1", "org/m", 1), t = sub_make(a.id, "hq2", "org/m", 1);
    s.state = t.state = BOARD_STATE_PENDING_CHECKPOINT;
    s.next_lookup_s = 110;
    t.next_lookup_s = 500;
    cr_assert_eq(store_submission_insert(st, &s, 20, 100, &res), PACER_OK);
    cr_assert_eq(store_submission_insert(st, &t, 20, 100, &res), PACER_OK);
    store_submission_list due;
    cr_assert_eq(store_lookup_due(st, 200, 10, &due), PACER_OK);
    cr_assert_eq(due.n, 1);
    cr_assert_str_eq(due.items[0].id, s.id);
    store_submission_list_free(&due);
    s.state = BOARD_STATE_PUBLIC;
    s.has_params_total = true;
    s.params_total = 7;
    s.lookup_attempts = 2;
    s.next_lookup_s = 0;
    cr_assert_eq(store_lookup_record(st, &s, 210), PACER_OK);
    cr_assert_eq(store_lookup_record(st, &s, 211), PACER_ERR_STATE, "no longer pending: left alone");
    cr_assert_eq(store_submission_set_state(st, t.id, 1u << BOARD_STATE_PENDING_CHECKPOINT, BOARD_STATE_REJECTED, NULL, NULL, 300),
                 PACER_OK);
    t.state = BOARD_STATE_PUBLIC;
    cr_assert_eq(store_lookup_record(st, &t, 600), PACER_ERR_STATE, "a person's rejection stands");
    store_submission g;
    cr_assert_eq(store_submission_get(st, s.id, false, &g), PACER_OK);
    cr_assert(g.state == BOARD_STATE_PUBLIC && g.params_total == 7 && g.lookup_attempts == 2);
    cr_assert_eq(store_submission_get(st, t.id, false, &g), PACER_OK);
    cr_assert_eq(g.state, BOARD_STATE_REJECTED);
}

Test(store, results_filter_by_suite_and_page_newest_first) {
    store_profile a = profile("a"), b = profile("b");
    store_insert_result res;
    char h[16];
    for (int i = 0; i < 7; i++) {
        snprintf(h, sizeof h, "hr%d", i);
        store_submission s = sub_make(i < 5 ? a.id : b.id, h, i % 2 ? "org/odd" : "org/even", 10.0 * i);
        if (i == 6) strcpy(s.suite_digest, "other");
        if (i == 4) s.state = BOARD_STATE_PENDING_REVIEW;
        cr_assert_eq(store_submission_insert(st, &s, 20, 1000 + i / 2, &res), PACER_OK);
    }
    store_query q = {.suite_id = "community-v2", .suite_digest = "d2", .limit = 2};
    store_submission_list l;
    cr_assert_eq(store_results(st, &q, &l), PACER_OK);
    cr_assert_eq(l.n, 2);
    cr_assert(l.more);
    cr_assert(l.items[0].created_s >= l.items[1].created_s);
    size_t seen = l.n;
    while (l.more) {
        q.before_s = l.items[l.n - 1].created_s;
        char before[STORE_ID_MAX];
        strcpy(before, l.items[l.n - 1].id);
        q.before_id = before;
        store_submission_list_free(&l);
        cr_assert_eq(store_results(st, &q, &l), PACER_OK);
        seen += l.n;
        if (!l.more) break;
    }
    store_submission_list_free(&l);
    cr_assert_eq(seen, 5, "public ones of this digest: 0,1,2,3,5");
    store_query f = {.suite_id = "community-v2", .suite_digest = "d2", .model_id = "org/odd", .limit = 100};
    cr_assert_eq(store_results(st, &f, &l), PACER_OK);
    cr_assert_eq(l.n, 3);
    store_submission_list_free(&l);
    store_query pend = {.suite_id = "community-v2", .suite_digest = "d2", .states = 1u << BOARD_STATE_PENDING_REVIEW};
    cr_assert_eq(store_results(st, &pend, &l), PACER_OK);
    cr_assert_eq(l.n, 1);
    store_submission_list_free(&l);
    store_query prof = {.suite_id = "community-v2", .suite_digest = "d2", .profile_id = b.id};
    cr_assert_eq(store_results(st, &prof, &l), PACER_OK);
    cr_assert_eq(l.n, 1);
    store_submission_list_free(&l);
    cr_assert_eq(store_queue(st, 1u << BOARD_STATE_PENDING_REVIEW, 10, &l), PACER_OK);
    cr_assert_eq(l.n, 1);
    store_submission_list_free(&l);
}

Test(store, contributors_count_public_runs_and_best_speed) {
    store_profile a = profile("ann"), b = profile("ben");
    store_insert_result res;
    const char *models[] = {"org/x", "org/y", "org/x"};
    for (int i = 0; i < 3; i++) {
        char h[16];
        snprintf(h, sizeof h, "hc%d", i);
        store_submission s = sub_make(a.id, h, models[i], 100.0 + i);
        cr_assert_eq(store_submission_insert(st, &s, 20, 100, &res), PACER_OK);
    }
    store_submission s = sub_make(b.id, "hcb", "org/x", 500.25);
    cr_assert_eq(store_submission_insert(st, &s, 20, 100, &res), PACER_OK);
    store_query q = {.suite_id = "community-v2", .suite_digest = "d2"};
    store_contributor_list l;
    cr_assert_eq(store_contributors(st, &q, &l), PACER_OK);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.items[0].display_name, "ann");
    cr_assert(l.items[0].submissions == 3 && l.items[0].models == 2 && l.items[0].hardware == 1);
    cr_assert(l.items[0].has_best_chat_greedy && l.items[0].best_chat_greedy_tok_s == 102.0);
    cr_assert(l.items[1].best_chat_greedy_tok_s == 500.25);
    store_contributor_list_free(&l);
}

Test(store, checkpoint_cache_round_trips) {
    store_checkpoint c = {true, false, 1235814400, 0, 42}, g;
    cr_assert_eq(store_checkpoint_get(st, "org/m", "main", &g), PACER_ERR_NOT_FOUND);
    cr_assert_eq(store_checkpoint_put(st, "org/m", "main", &c), PACER_OK);
    c.checked_s = 43;
    c.has_params_active = true;
    c.params_active = 5;
    cr_assert_eq(store_checkpoint_put(st, "org/m", "main", &c), PACER_OK);
    cr_assert_eq(store_checkpoint_get(st, "org/m", "main", &g), PACER_OK);
    cr_assert(g.has_params_total && g.params_total == 1235814400 && g.has_params_active && g.params_active == 5);
    cr_assert_eq(g.checked_s, 43);
}
