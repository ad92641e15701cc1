/* test_draft.c - speculative decoding pieces: n-gram lookup proposals, the target
 * distribution the sampler draws from, greedy verification, and that speculative sampling
 * keeps the target's distribution (fixed seeds, so the statistics are deterministic). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "engine/draft.h"
#include "engine/sampler.h"

/* ---- lookup ---- */

Test(draft_lookup, copies_what_followed_the_latest_match) {
    /* ... 1 2 3 9 ... 1 2 3 7 8 ... 1 2 3 -> 7 8 (the latest match wins) */
    int32_t h[] = {1, 2, 3, 9, 5, 1, 2, 3, 7, 8, 6, 1, 2, 3};
    int32_t out[4];
    int n = draft_lookup(h, 14, 2, out);
    cr_assert_eq(n, 2);
    cr_assert_eq(out[0], 7);
    cr_assert_eq(out[1], 8);
}

Test(draft_lookup, a_cycle_drafts_the_full_length) {
    int32_t h[] = {4, 5, 6, 4, 5, 6, 4, 5};
    int32_t out[8];
    cr_assert_eq(draft_lookup(h, 8, 7, out), 7);
    int32_t want[] = {6, 4, 5, 6, 4, 5, 6};
    cr_assert_arr_eq(out, want, sizeof want);
}

Test(draft_lookup, nothing_without_a_match) {
    int32_t h[] = {1, 2, 3, 4, 5, 6}, out[4];
    cr_assert_eq(draft_lookup(h, 6, 4, out), 0);
    cr_assert_eq(draft_lookup(h, 1, 4, out), 0);
    cr_assert_eq(draft_lookup(h, 6, 0, out), 0);
    /* a single repeated token is below the minimum key length */
    int32_t h2[] = {9, 1, 2, 9};
    cr_assert_eq(draft_lookup(h2, 4, 4, out), 0);
}

/* ---- the target distribution ---- */

Test(sampler_probs, matches_the_transform) {
    float logits[6] = {2.0f, 1.0f, 0.5f, 3.0f, -1.0f, 1.0f};
    float p[6];
    sampler s;
    sampler_params sp = {.temperature = 0.7f, .top_k = 3, .top_p = 1};
    sampler_init(&s, &sp, 1);
    cr_assert_eq(sampler_probs(&s, logits, 6, p), PACER_OK);
    /* top-3 keeps ids 3, 0 and one of the tied 1.0s: the lower id, 1 */
    double z = exp(3.0 / 0.7) + exp(2.0 / 0.7) + exp(1.0 / 0.7);
    cr_assert_float_eq(p[3], exp(3.0 / 0.7) / z, 1e-6);
    cr_assert_float_eq(p[0], exp(2.0 / 0.7) / z, 1e-6);
    cr_assert_float_eq(p[1], exp(1.0 / 0.7) / z, 1e-6);
    cr_assert_eq(p[2], 0);
    cr_assert_eq(p[4], 0);
    cr_assert_eq(p[5], 0);
    sampler_free(&s);
    sampler_params g = sampler_params_greedy();
    sampler_init(&s, &g, 1);
    cr_assert_eq(sampler_probs(&s, logits, 6, p), PACER_OK);
    cr_assert_eq(p[3], 1);
    cr_assert_eq(p[0] + p[1] + p[2] + p[4] + p[5], 0);
    sampler_free(&s);
}

/* ---- verification ---- */

Test(draft_verify, greedy_takes_the_argmax_at_the_first_mismatch) {
    enum { V = 4 };
    float rows[4 * V] = {0, 5, 0, 0, /* after the last token: 1 */
                         0, 0, 5, 0, /* after draft 1: 2 */
                         5, 0, 0, 0, /* after draft 2: 0, but draft 3 says 3 */
                         0, 0, 0, 5};
    int32_t drafts[3] = {1, 2, 3}, next = -1;
    sampler s;
    sampler_params g = sampler_params_greedy();
    sampler_init(&s, &g, 1);
    float work[V];
    cr_assert_eq(draft_verify(&s, rows, V, drafts, 3, NULL, work, &next), 2);
    cr_assert_eq(next, 0);
    drafts[2] = 0;
    cr_assert_eq(draft_verify(&s, rows, V, drafts, 3, NULL, work, &next), 3);
    cr_assert_eq(next, 3); /* all accepted: the bonus token from the last row */
    cr_assert_eq(draft_verify(&s, rows, V, drafts, 0, NULL, work, &next), 0);
    cr_assert_eq(next, 1);
    sampler_free(&s);
}

/* Pearson's chi-square of counts against probabilities (cells with p = 0 must be empty). */
static double chi_square(const int *count, const double *p, int n, int total) {
    double x = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] == 0) {
            cr_assert_eq(count[i], 0, "id %d has probability 0 but was drawn %d times", i, count[i]);
            continue;
        }
        double e = p[i] * total;
        x += (count[i] - e) * (count[i] - e) / e;
    }
    return x;
}

/* 4 degrees of freedom: 18.5 is exceeded with probability 0.001 by a correct sampler. The
 * seeds are fixed, so a pass is a pass on every run. */
#define CHI2_4DOF_LIMIT 18.5
#define TRIALS 200000

Test(speculate, keeps_the_target_distribution_with_a_drafter_distribution) {
    enum { V = 5 };
    const float p[V] = {0.4f, 0.3f, 0.15f, 0.1f, 0.05f};
    const float q[V] = {0.1f, 0.1f, 0.5f, 0.2f, 0.1f};
    double pd[V], accept_want = 0;
    for (int i = 0; i < V; i++) {
        pd[i] = p[i];
        accept_want += fmin(p[i], q[i]);
    }
    sampler target, drafter;
    sampler_params sp = {.temperature = 1, .top_k = 0, .top_p = 1};
    sampler_init(&target, &sp, 12345);
    sampler_init(&drafter, &sp, 67890);
    int count[V] = {0}, accepted = 0;
    for (int t = 0; t < TRIALS; t++) {
        int32_t d = sampler_draw(&drafter, q, V);
        bool acc;
        int32_t tok = sampler_speculate(&target, p, q, V, d, &acc);
        cr_assert(tok >= 0 && tok < V);
        if (acc) {
            cr_assert_eq(tok, d);
            accepted++;
        }
        count[tok]++;
    }
    double x = chi_square(count, pd, V, TRIALS);
    cr_assert_lt(x, CHI2_4DOF_LIMIT, "chi-square %.2f", x);
    /* acceptance is sum(min(p, q)) = 0.6: within 5 standard deviations (~0.0055) */
    cr_assert_float_eq((double)accepted / TRIALS, accept_want, 0.0055);
    sampler_free(&target);
    sampler_free(&drafter);
}

Test(speculate, keeps_the_target_distribution_with_a_point_mass_draft) {
    enum { V = 5 };
    const float p[V] = {0.05f, 0.5f, 0.25f, 0.15f, 0.05f};
    double pd[V];
    for (int i = 0; i < V; i++) pd[i] = p[i];
    for (int32_t d = 0; d < V; d++) { /* a lookup draft, likely or not */
        sampler s;
        sampler_params sp = {.temperature = 1, .top_k = 0, .top_p = 1};
        sampler_init(&s, &sp, 1000 + (uint64_t)d);
        int count[V] = {0}, accepted = 0;
        for (int t = 0; t < TRIALS; t++) {
            bool acc;
            int32_t tok = sampler_speculate(&s, p, NULL, V, d, &acc);
            accepted += acc;
            count[tok]++;
        }
        double x = chi_square(count, pd, V, TRIALS);
        cr_assert_lt(x, CHI2_4DOF_LIMIT, "draft %d: chi-square %.2f", d, x);
        /* accepted exactly when the draft is the token: probability p(d) */
        cr_assert_eq(accepted, count[d]);
        sampler_free(&s);
    }
}

/* The whole round as the server runs it: sampled verification of lookup drafts over rows of
 * logits with temperature and top-k gives each position the distribution sampler_sample
 * would draw from. Checked at the first position, whose law does not depend on the rest. */
Test(speculate, a_sampled_round_keeps_the_transformed_distribution) {
    enum { V = 5 };
    float rows[2 * V] = {1.0f, 2.0f, 0.2f, 1.5f, -3.0f, /* row 0: decides the first token */
                         0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    sampler_params sp = {.temperature = 0.8f, .top_k = 4, .top_p = 1};
    sampler s;
    sampler_init(&s, &sp, 4242);
    float want_f[V], work[V];
    cr_assert_eq(sampler_probs(&s, rows, V, want_f), PACER_OK);
    double want[V];
    for (int i = 0; i < V; i++) want[i] = want_f[i];
    cr_assert_eq(want[4], 0); /* cut by top-k */
    int count[V] = {0};
    int32_t draft = 3; /* a plausible but not the likeliest token */
    for (int t = 0; t < TRIALS; t++) {
        int32_t next;
        int j = draft_verify(&s, rows, V, &draft, 1, NULL, work, &next);
        cr_assert(j == 0 || j == 1);
        count[j == 1 ? draft : next]++;
    }
    /* id 4 has probability 0: 3 degrees of freedom left, limit 16.3 at 0.001 */
    double x = chi_square(count, want, V, TRIALS);
    cr_assert_lt(x, 16.3, "chi-square %.2f", x);
    sampler_free(&s);
}

Test(speculate, same_seed_same_choices) {
    enum { V = 5 };
    const float p[V] = {0.2f, 0.2f, 0.2f, 0.2f, 0.2f};
    int32_t a[64], b[64];
    for (int run = 0; run < 2; run++) {
        sampler s;
        sampler_params sp = {.temperature = 1, .top_k = 0, .top_p = 1};
        sampler_init(&s, &sp, 7);
        for (int t = 0; t < 64; t++) {
            bool acc;
            (run ? b : a)[t] = sampler_speculate(&s, p, NULL, V, t % V, &acc);
        }
        sampler_free(&s);
    }
    cr_assert_arr_eq(a, b, sizeof a);
}
