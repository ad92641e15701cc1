/* test_logprob.c - log-softmax and top-N selection: agreement with a direct computation,
 * no overflow on large logits, order and ties of the top list, clamping of N. */
#include <criterion/criterion.h>
#include <math.h>

#include "engine/logprob.h"

Test(logprob, lse_matches_direct_sum) {
    float l[5] = {0.5f, -1.0f, 2.0f, 0.0f, 1.25f};
    double direct = 0;
    for (int i = 0; i < 5; i++) direct += exp(l[i]);
    cr_assert_float_eq(logprob_lse(l, 5), log(direct), 1e-12);
}

Test(logprob, large_logits_do_not_overflow) {
    float l[3] = {1000.0f, 1000.0f, 999.0f};
    double lse = logprob_lse(l, 3);
    cr_assert(isfinite(lse));
    cr_assert_float_eq(lse, 1000.0 + log(2.0 + exp(-1.0)), 1e-9);
}

Test(logprob, probabilities_sum_to_one) {
    enum { N = 50000 };
    static float l[N];
    for (int i = 0; i < N; i++) l[i] = (float)((i * 7919) % 1000) / 100.0f - 5.0f;
    double lse = logprob_lse(l, N), sum = 0;
    for (int i = 0; i < N; i++) sum += exp((double)l[i] - lse);
    cr_assert_float_eq(sum, 1.0, 1e-9);
}

Test(logprob, top_is_sorted_ties_to_lower_id) {
    float l[8] = {1, 3, 2, 3, -1, 5, 2, 0};
    int32_t ids[LOGPROB_MAX_TOP];
    float lps[LOGPROB_MAX_TOP];
    double lse = logprob_lse(l, 8);
    int n = logprob_top(l, 8, lse, 5, ids, lps);
    cr_assert_eq(n, 5);
    int32_t want[5] = {5, 1, 3, 2, 6};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(ids[i], want[i], "rank %d: %d", i, ids[i]);
        cr_assert_float_eq(lps[i], (float)(l[want[i]] - lse), 1e-6);
    }
}

Test(logprob, top_clamps_k) {
    float l[3] = {0, 1, 2};
    int32_t ids[LOGPROB_MAX_TOP];
    float lps[LOGPROB_MAX_TOP];
    cr_assert_eq(logprob_top(l, 3, logprob_lse(l, 3), 10, ids, lps), 3);
    cr_assert_eq(ids[0], 2);
    cr_assert_eq(ids[2], 0);
    cr_assert_eq(logprob_top(l, 3, 0, 0, ids, lps), 0);
    cr_assert_eq(logprob_top(l, 3, 0, -4, ids, lps), 0);
    static float big[100];
    for (int i = 0; i < 100; i++) big[i] = (float)i;
    cr_assert_eq(logprob_top(big, 100, logprob_lse(big, 100), 50, ids, lps), LOGPROB_MAX_TOP);
    cr_assert_eq(ids[LOGPROB_MAX_TOP - 1], 100 - LOGPROB_MAX_TOP);
}

Test(logprob, entry_fill_and_none) {
    float l[4] = {0, 0, 0, 0};
    logprob_entry e;
    logprob_entry_fill(&e, l, 4, 2, 2);
    cr_assert(e.has_logprob);
    cr_assert_eq(e.id, 2);
    cr_assert_float_eq(e.logprob, (float)log(0.25), 1e-6);
    cr_assert_eq(e.n_top, 2);
    cr_assert_eq(e.top_id[0], 0);
    cr_assert_eq(e.top_id[1], 1);
    logprob_entry_none(&e, 7);
    cr_assert(!e.has_logprob);
    cr_assert_eq(e.id, 7);
    cr_assert_eq(e.n_top, 0);
}
