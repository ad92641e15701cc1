/* test_lab_prefill.c - the paired prefill's arithmetic on hand-made samples: the per-round
 * ratio after/before, its median and spread over rounds, what is kept out of it, the pairs
 * and their order, the greedy tokens compared, and summary.md's row. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "lab/prefill_report.h"
#include "lab/suite.h"

Test(lab_prefill, ratio_is_the_median_of_per_round_ratios_with_their_spread) {
    const double before[] = {100, 200, 50}, after[] = {110, 180, 50};
    lab_ratio r;
    lab_ratio_paired(before, after, 3, &r);
    cr_assert(r.has);
    cr_expect_eq(r.n, 3);
    cr_expect_float_eq(r.median, 1.0, 1e-12); /* ratios 1.1, 0.9, 1.0 */
    cr_expect_float_eq(r.min, 0.9, 1e-12);
    cr_expect_float_eq(r.max, 1.1, 1e-12);
    /* the median of the ratios, not the ratio of the medians (200/110 would be 0.55 apart) */
    const double b2[] = {100, 1000}, a2[] = {100, 1200};
    lab_ratio_paired(b2, a2, 2, &r);
    cr_expect_eq(r.n, 2);
    cr_expect_float_eq(r.median, 1.1, 1e-12);
    cr_expect_float_eq(r.min, 1.0, 1e-12);
    cr_expect_float_eq(r.max, 1.2, 1e-12);
}

Test(lab_prefill, rounds_without_both_rates_are_left_out_and_none_gives_no_ratio) {
    const double before[] = {100, 0, NAN, 100, -5, INFINITY}, after[] = {150, 100, 100, NAN, 10, 100};
    lab_ratio r;
    lab_ratio_paired(before, after, 6, &r);
    cr_assert(r.has);
    cr_expect_eq(r.n, 1);
    cr_expect_float_eq(r.median, 1.5, 1e-12);
    lab_ratio_paired(before + 1, after + 1, 5, &r);
    cr_expect_not(r.has);
    cr_expect_eq(r.n, 0);
    lab_ratio_paired(NULL, NULL, 0, &r);
    cr_expect_not(r.has);
}

static json_t *sample(int round, const char *binary, bool first, double rate, const char *output, const char *validity) {
    char id[64];
    snprintf(id, sizeof id, "r%d-short-given-%s", round, binary);
    return json_pack("{s:s,s:i,s:s,s:s,s:s,s:b,s:f,s:f,s:i,s:s,s:s,s:s?,s:s}", "id", id, "round", round, "workload", "short", "config",
                     "given", "binary", binary, "first", first, "prefill_tok_s", rate, "server_prefill_tok_s", rate * 2,
                     "prefill_tokens", 10, "finish", "capped", "validity", validity, "validity_reason",
                     strcmp(validity, "valid") ? "store-built: the weight store changed during the sample" : NULL, "output", output);
}

/* Three rounds: 1 before first (100 -> 110), 2 after first (180 <- 200), 3 with the before
 * sample invalidated. */
static json_t *head(const char *round2_after_output) {
    json_t *samples = json_pack("[o,o,o,o,o,o]", sample(1, "before", true, 100, "abc", "valid"), sample(1, "after", false, 110, "abc", "valid"),
                                sample(2, "after", true, 180, round2_after_output, "valid"), sample(2, "before", false, 200, "abc", "valid"),
                                sample(3, "before", true, 300, "abc", "invalidated"), sample(3, "after", false, 50, "abc", "valid"));
    return json_pack("{s:{s:[s],s:[s],s:i},s:o}", "settings", "lengths", "short", "configs", "given", "rounds", 3, "samples", samples);
}

Test(lab_prefill, pairs_keep_their_order_and_an_invalidated_sample_gives_no_ratio) {
    json_t *h = head("abc");
    json_t *rep = lab_prefill_report_build(h);
    cr_assert_not_null(rep);
    const json_t *pairs = json_object_get(rep, "pairs");
    cr_assert_eq(json_array_size(pairs), 3);
    const char *first[] = {"before", "after", "before"};
    for (size_t i = 0; i < 3; i++) {
        const json_t *p = json_array_get(pairs, i);
        cr_expect_eq(json_integer_value(json_object_get(p, "round")), (json_int_t)i + 1);
        cr_expect_str_eq(json_string_value(json_object_get(p, "first")), first[i]);
    }
    cr_expect_float_eq(json_number_value(json_object_get(json_array_get(pairs, 0), "ratio")), 1.1, 1e-12);
    cr_expect_float_eq(json_number_value(json_object_get(json_array_get(pairs, 1), "ratio")), 0.9, 1e-12);
    const json_t *third = json_array_get(pairs, 2);
    cr_expect(json_is_null(json_object_get(third, "ratio")));
    cr_expect(strstr(json_string_value(json_object_get(third, "why")), "before sample is invalidated: store-built") != NULL);
    const json_t *e = json_array_get(json_object_get(rep, "lengths"), 0);
    const json_t *r = json_object_get(e, "ratio");
    cr_expect_float_eq(json_number_value(json_object_get(r, "median")), 1.0, 1e-12);
    cr_expect_float_eq(json_number_value(json_object_get(r, "min")), 0.9, 1e-12);
    cr_expect_float_eq(json_number_value(json_object_get(r, "max")), 1.1, 1e-12);
    cr_expect_eq(json_integer_value(json_object_get(r, "n")), 2);
    cr_expect_float_eq(json_number_value(json_object_get(json_object_get(e, "server_ratio"), "median")), 1.0, 1e-12);
    cr_expect_eq(json_integer_value(json_object_get(e, "pairs")), 3);
    cr_expect_eq(json_integer_value(json_object_get(e, "pairs_without_ratio")), 1);
    /* the before build's rates that enter: 100 and 200 (the invalidated 300 stays out); each
     * build's own column counts every usable sample of it, paired or not */
    cr_expect_float_eq(json_number_value(json_object_get(json_object_get(e, "before_tok_s"), "median")), 150, 1e-9);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(e, "outputs"), "compared")), 2);
    cr_expect_eq(json_array_size(json_object_get(json_object_get(e, "outputs"), "differ_rounds")), 0);
    json_decref(rep);
    json_decref(h);
}

Test(lab_prefill, differing_greedy_tokens_are_named_by_round_and_summary_shows_the_row) {
    json_t *h = head("abd");
    json_t *rep = lab_prefill_report_build(h);
    cr_assert_not_null(rep);
    const json_t *o = json_object_get(json_array_get(json_object_get(rep, "lengths"), 0), "outputs");
    cr_expect_eq(json_array_size(json_object_get(o, "differ_rounds")), 1);
    cr_expect_eq(json_integer_value(json_array_get(json_object_get(o, "differ_rounds"), 0)), 2);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(rep, "pairs"), 1), "outputs")), "differ");
    buf b;
    buf_init(&b, 1 << 20);
    cr_assert_eq(lab_prefill_summary(&b, rep), PACER_OK);
    cr_expect(strstr(b.data, "| short | given | 10 | 150.0 (100.0-200.0) n=2 | 110.0 (50.0-180.0) n=3 | 1.000 (0.900-1.100) n=2 | "
                             "1.000 (0.900-1.100) n=2 | differ in round 2 of 2 | 3, 1 without a ratio |\n") != NULL,
              "%s", b.data);
    cr_expect(strstr(b.data, "| r2-after-given-after") == NULL && strstr(b.data, "| r2-short-given-after | after (first) | capped | valid | 10 | 180.0 | 360.0 | \"abd\" |  |") != NULL,
              "%s", b.data);
    buf_free(&b);
    json_decref(rep);
    json_decref(h);
}

Test(lab_prefill, the_builtin_suite_has_three_lengths_of_eight_greedy_tokens) {
    lab_suite s;
    char err[256];
    cr_assert_eq(lab_suite_load(LAB_PREFILL_ID, &s, err, sizeof err), PACER_OK, "%s", err);
    cr_expect(s.builtin);
    cr_expect_eq(s.temperature, 0.0);
    cr_expect_eq(s.context, 8192, "the long prompt fits a byte-level tokenizer too");
    cr_assert_eq(s.n_workloads, 3);
    const char *names[] = {"short", "medium", "long"};
    size_t last = 0;
    for (int i = 0; i < 3; i++) {
        cr_expect_str_eq(s.workloads[i].name, names[i]);
        cr_expect_eq(s.workloads[i].cap, 8);
        size_t n = strlen(s.workloads[i].prompt);
        cr_expect_gt(n, last * 3, "each length is several times the one before");
        last = n;
    }
    cr_expect_str_eq(s.configs[0].name, "given");
    cr_expect_eq(s.configs[0].weights[0], '\0');
    lab_suite_free(&s);
}
