/* test_board_rank.c - board/rank over plain arrays: one suite per computation (v1 and v2
 * never mixed), only published rows count, equal values share places and honours,
 * unrounded values decide, unknown sizes are unranked, trophies and milestones. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "board/rank.h"

#define V2 "community-v2"
#define D2 "2222222222222222222222222222222222222222222222222222222222222222"
#define V1 "community-v1"
#define D1 "1111111111111111111111111111111111111111111111111111111111111111"

static const rank_filter F2 = {.suite_id = V2, .suite_digest = D2};
static const rank_filter F1 = {.suite_id = V1, .suite_digest = D1};

/* A published, complete v2 row of `who` with a greedy-chat median `tok_s` (0: none). */
static rank_row row(const char *id, const char *who, double tok_s, int64_t created) {
    return (rank_row){.id = id, .profile_id = who, .display_name = who, .suite_id = V2, .suite_digest = D2,
                      .published = true, .complete = true, .model_id = "org/model-a", .hardware = "GPU A",
                      .platform = "linux", .backend = "cuda", .has_chat_greedy = tok_s > 0, .chat_greedy_tok_s = tok_s,
                      .chat_greedy_first_ms = 50, .has_best_tok_s = tok_s > 0, .best_tok_s = tok_s,
                      .created_s = created};
}

static const rank_entry *find(const rank_list *l, const char *who) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].profile_id, who) == 0) return &l->items[i];
    return NULL;
}

Test(rank, most_benchmarks_counts_published_rows_and_ties_share_places) {
    rank_row rows[] = {row("s1", "alice", 10, 1), row("s2", "alice", 11, 2), row("s3", "bob", 12, 3),
                       row("s4", "bob", 13, 4),   row("s5", "carol", 9, 5), row("s6", "carol", 9, 6),
                       row("s7", "carol", 9, 7),  row("s8", "dave", 8, 8)};
    rows[5].published = false; /* carol: one pending */
    rows[6].published = false; /* and one withdrawn: neither counts */
    rank_list l;
    cr_assert_eq(rank_compute(rows, 8, &F2, RANK_MOST_BENCHMARKS, &l), PACER_OK);
    cr_assert_eq(l.n, 4);
    cr_assert_eq(find(&l, "alice")->place, 1);
    cr_assert_eq(find(&l, "bob")->place, 1);
    cr_assert_eq(find(&l, "carol")->place, 3);
    cr_assert_eq(find(&l, "carol")->count, 1);
    cr_assert_eq(find(&l, "dave")->place, 3);
    cr_assert_eq(find(&l, "alice")->row, 1, "the newest run is linked");
    /* stable order among equals: by display name */
    cr_assert_str_eq(l.items[0].profile_id, "alice");
    cr_assert_str_eq(l.items[1].profile_id, "bob");
    rank_list_free(&l);
}

Test(rank, fastest_uses_unrounded_values_and_ignores_unpublished_or_incomplete) {
    rank_row rows[] = {row("s1", "alice", 100.0004, 1), row("s2", "bob", 100.0001, 2), row("s3", "carol", 100.0004, 3),
                       row("s4", "dave", 900, 4),       row("s5", "erin", 950, 5),    row("s6", "frank", NAN, 6),
                       row("s7", "gina", 0, 7)};
    rows[3].published = false; /* pending: its speed earns nothing */
    rows[4].complete = false;  /* an approved nonstandard run: no ranked speed */
    rows[5].has_chat_greedy = true;
    rank_list l;
    cr_assert_eq(rank_compute(rows, 7, &F2, RANK_FASTEST, &l), PACER_OK);
    cr_assert_eq(l.n, 3, "only alice, bob and carol have ranked speeds");
    cr_assert_eq(find(&l, "alice")->place, 1);
    cr_assert_eq(find(&l, "carol")->place, 1);
    cr_assert_eq(find(&l, "bob")->place, 3, "100.0001 < 100.0004 although both print as 100.0");
    cr_assert_eq(find(&l, "alice")->value, 100.0004);
    rank_list_free(&l);
}

Test(rank, fastest_takes_each_contributors_best) {
    rank_row rows[] = {row("s1", "alice", 10, 1), row("s2", "alice", 30, 2), row("s3", "alice", 20, 3),
                       row("s4", "bob", 25, 4)};
    rank_list l;
    cr_assert_eq(rank_compute(rows, 4, &F2, RANK_FASTEST, &l), PACER_OK);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.items[0].profile_id, "alice");
    cr_assert_eq(l.items[0].row, 1);
    cr_assert_eq(l.items[0].count, 3);
    cr_assert_eq(l.items[1].value, 25);
    rank_list_free(&l);
}

Test(rank, v1_and_v2_never_mixed) {
    rank_row rows[] = {row("s1", "alice", 50, 1), row("s2", "bob", 40, 2), row("s3", "bob", 45, 3),
                       row("s4", "carol", 99, 4)};
    rows[1].suite_id = V1; rows[1].suite_digest = D1;
    rows[2].suite_id = V1; rows[2].suite_digest = D1;
    rows[3].suite_digest = D1; /* v2 id, another digest: a different suite */
    rank_list l;
    cr_assert_eq(rank_compute(rows, 4, &F2, RANK_MOST_BENCHMARKS, &l), PACER_OK);
    cr_assert_eq(l.n, 1);
    cr_assert_str_eq(l.items[0].profile_id, "alice");
    rank_list_free(&l);
    cr_assert_eq(rank_compute(rows, 4, &F1, RANK_FASTEST, &l), PACER_OK);
    cr_assert_eq(l.n, 1);
    cr_assert_str_eq(l.items[0].profile_id, "bob");
    cr_assert_eq(l.items[0].value, 45);
    cr_assert_eq(l.items[0].count, 2);
    rank_list_free(&l);
    rank_counts c;
    cr_assert_eq(rank_count(rows, 4, &F1, &c), PACER_OK);
    cr_assert_eq(c.runs, 2);
    cr_assert_eq(c.contributors, 1);
    rank_filter none = {.suite_id = V2};
    cr_assert_eq(rank_compute(rows, 4, &none, RANK_FASTEST, &l), PACER_ERR_ARG, "a ranking names one digest");
}

Test(rank, size_by_speed_total_and_active_unknown_unranked) {
    rank_row rows[] = {row("s1", "dense", 20, 1), row("s2", "moe", 50, 2), row("s3", "unknown", 500, 3),
                       row("s4", "moe-no-active", 10, 4)};
    rows[0].has_params_total = true; rows[0].params_total = 8000000000;     /* 8B x 20 = 160 */
    rows[1].has_params_total = true; rows[1].params_total = 30000000000;    /* 30B x 50 = 1500 */
    rows[1].has_params_active = true; rows[1].params_active = 3000000000;   /* 3B x 50 = 150 */
    rows[3].has_params_total = true; rows[3].params_total = 1000000000;     /* 1B x 10 = 10 */
    rank_list l;
    cr_assert_eq(rank_compute(rows, 4, &F2, RANK_SIZE_TOTAL, &l), PACER_OK);
    cr_assert_eq(l.n, 3, "an unknown size is unranked, however fast");
    cr_assert_null(find(&l, "unknown"));
    cr_assert_str_eq(l.items[0].profile_id, "moe");
    cr_assert_float_eq(l.items[0].value, 1500.0, 1e-9);
    rank_list_free(&l);
    cr_assert_eq(rank_compute(rows, 4, &F2, RANK_SIZE_ACTIVE, &l), PACER_OK);
    cr_assert_eq(l.n, 3);
    cr_assert_str_eq(l.items[0].profile_id, "dense", "a dense model ranks by its total in the active view");
    cr_assert_float_eq(l.items[0].value, 160.0, 1e-9);
    cr_assert_float_eq(find(&l, "moe")->value, 150.0, 1e-9);
    rank_list_free(&l);
    int64_t p;
    cr_assert(rank_row_params(&rows[1], true, &p) && p == 3000000000);
    cr_assert(rank_row_params(&rows[0], true, &p) && p == 8000000000);
    cr_assert(!rank_row_params(&rows[2], false, &p));
}

Test(rank, speed_records_are_runs) {
    rank_row rows[] = {row("s1", "alice", 10, 1), row("s2", "alice", 30, 2), row("s3", "bob", 20, 3)};
    rows[0].best_tok_s = 70; /* a faster cell than greedy chat */
    rank_list l;
    cr_assert_eq(rank_compute(rows, 3, &F2, RANK_SPEED_RECORDS, &l), PACER_OK);
    cr_assert_eq(l.n, 3);
    cr_assert_eq(l.items[0].row, 0);
    cr_assert_eq(l.items[0].value, 70);
    cr_assert_eq(l.items[1].row, 1);
    rank_list_free(&l);
}

Test(rank, filters_apply_and_counts_are_distinct) {
    rank_row rows[] = {row("s1", "alice", 10, 1), row("s2", "alice", 30, 2), row("s3", "bob", 20, 3),
                       row("s4", "carol", 5, 4)};
    rows[1].model_id = "org/model-b";
    rows[2].hardware = "GPU B";
    rows[3].platform = "darwin";
    rank_counts c;
    cr_assert_eq(rank_count(rows, 4, &F2, &c), PACER_OK);
    cr_assert_eq(c.runs, 4);
    cr_assert_eq(c.contributors, 3);
    cr_assert_eq(c.models, 2);
    cr_assert_eq(c.hardware, 2);
    rank_filter f = F2;
    f.hardware = "GPU A";
    f.platform = "linux";
    cr_assert_eq(rank_count(rows, 4, &f, &c), PACER_OK);
    cr_assert_eq(c.runs, 2);
    rank_list l;
    cr_assert_eq(rank_compute(rows, 4, &f, RANK_FASTEST, &l), PACER_OK);
    cr_assert_eq(l.n, 1);
    cr_assert_eq(l.items[0].value, 30);
    rank_list_free(&l);
    f = F2;
    f.model_id = "org/model-b";
    cr_assert_eq(rank_count(rows, 4, &f, &c), PACER_OK);
    cr_assert_eq(c.runs, 1);
}

Test(rank, trophies_milestones_and_honours) {
    rank_row rows[12];
    const char *models[] = {"m1", "m2", "m3"};
    for (int i = 0; i < 6; i++) {
        rows[i] = row("a", "alice", 40 + i, i);
        rows[i].model_id = models[i % 3];
        rows[i].hardware = i < 3 ? "GPU A" : "GPU B";
    }
    for (int i = 6; i < 12; i++) rows[i] = row("b", "bob", 45, i);
    rows[11].published = false; /* bob: 5 published, one pending */
    rank_profile p;
    cr_assert_eq(rank_profile_compute(rows, 12, &F2, "alice", &p), PACER_OK);
    cr_assert_eq(p.runs, 6);
    cr_assert_eq(p.models, 3);
    cr_assert_eq(p.hardware, 2);
    cr_assert(p.has_best);
    cr_assert_eq(p.best_tok_s, 45);
    cr_assert_eq(p.best_row, 5);
    cr_assert_eq(p.prev_milestone, 5);
    cr_assert_eq(p.next_milestone, 10);
    for (size_t t = 0; t < rank_trophy_count; t++) {
        const char *k = rank_trophies[t].key;
        bool want = !strcmp(k, "bronze") || !strcmp(k, "silver") || !strcmp(k, "model-explorer") ||
                    !strcmp(k, "hardware-explorer");
        cr_assert_eq(p.earned[t], want, "%s", k);
    }
    cr_assert(p.top_contributor, "6 published runs is the most");
    cr_assert(p.speed_leader, "45 shared with bob");
    cr_assert_eq(rank_profile_compute(rows, 12, &F2, "bob", &p), PACER_OK);
    cr_assert_eq(p.runs, 5, "the pending run earns nothing");
    cr_assert(!p.top_contributor);
    cr_assert(p.speed_leader, "equal leaders share the honour");
    /* a filter narrows the profile's own figures, never the honours */
    rank_filter f = F2;
    f.hardware = "GPU A";
    cr_assert_eq(rank_profile_compute(rows, 12, &f, "alice", &p), PACER_OK);
    cr_assert_eq(p.runs, 3);
    cr_assert(p.top_contributor);
}

Test(rank, nothing_published_earns_nothing) {
    rank_row rows[] = {row("s1", "alice", 90, 1), row("s2", "alice", 95, 2)};
    rows[0].published = false;
    rows[1].published = false;
    rank_profile p;
    cr_assert_eq(rank_profile_compute(rows, 2, &F2, "alice", &p), PACER_OK);
    cr_assert_eq(p.runs, 0);
    cr_assert(!p.has_best);
    cr_assert(!p.top_contributor, "no published run: no honour");
    cr_assert(!p.speed_leader, "missing speeds earn no speed honour");
    cr_assert_eq(p.next_milestone, 1);
    for (size_t t = 0; t < rank_trophy_count; t++) cr_assert(!p.earned[t]);
    /* a published run without a speed earns count trophies, never the speed honour */
    rows[1] = row("s2", "alice", 0, 2);
    cr_assert_eq(rank_profile_compute(rows, 2, &F2, "alice", &p), PACER_OK);
    cr_assert_eq(p.runs, 1);
    cr_assert(p.top_contributor);
    cr_assert(!p.speed_leader);
    cr_assert(!p.has_best);
}
