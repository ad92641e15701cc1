/* test_lab_report.c - the lab's report views on hand-made report.json documents: the
 * decode plot's round-to-round spread and its escaping, and summary.md's cells. */
#include <criterion/criterion.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "lab/plot.h"
#include "lab/summary.h"

static json_t *sample(const char *config, int round, const char *finish, double decode) {
    return json_pack("{s:s,s:i,s:s,s:s,s:f,s:s,s:i,s:I}", "config", config, "round", round, "finish", finish, "validity",
                     "valid", "decode_tok_s", decode, "id", "x", "decode_tokens", 10, "completion_ns", (json_int_t)1000000000);
}

static json_t *report(void) {
    json_t *samples = json_pack("[o,o,o,o,o]", sample("<b>", 1, "eos", 100), sample("<b>", 1, "eos", 200),
                                sample("<b>", 2, "eos", 300), sample("<b>", 2, "capped", 1000), sample("q8", 1, "cycle", 50));
    json_t *metrics = json_pack("{s:{s:f,s:f,s:f,s:i}}", "decode_tok_s", "median", 225.0, "min", 150.0, "max", 300.0, "n", 3);
    return json_pack("{s:{s:[{s:s},{s:s}],s:{s:{s:[s]}}},s:o,s:[{s:s,s:s,s:o,s:{s:i,s:i}},{s:s,s:s,s:n,s:{s:i}}]}", "run",
                     "configurations", "name", "<b>", "name", "q8", "signature", "selections", "cases", "w", "samples", samples,
                     "cells", "config", "<b>", "workload", "w", "metrics", metrics, "excluded", "capped", 1, "cycle", 0,
                     "config", "q8", "workload", "w", "metrics", "excluded", "cycle", 1);
}

Test(lab_plot, decode_bar_is_the_median_of_round_medians_with_their_spread_and_labels_escaped) {
    json_t *rep = report();
    cr_assert_not_null(rep);
    buf b;
    buf_init(&b, 1 << 20);
    cr_assert_eq(lab_plot_decode(&b, rep), PACER_OK);
    /* round 1: median of 100 and 200 = 150; round 2: 300 (the capped 1000 stays out) */
    cr_expect(strstr(b.data, ">225.0 (150.0-300.0)</text>") != NULL, "%s", b.data);
    cr_expect(strstr(b.data, "&lt;b&gt;") != NULL && strstr(b.data, "<b>") == NULL, "%s", b.data);
    cr_expect(strstr(b.data, "no sample entered a median") != NULL, "q8 has only a cycle");
    cr_expect_eq(strncmp(b.data, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39), 0);
    buf_free(&b);
    json_decref(rep);
}

Test(lab_summary, cells_show_median_range_count_and_exclusions) {
    json_t *rep = report();
    buf b;
    buf_init(&b, 1 << 20);
    cr_assert_eq(lab_summary_table(&b, rep, "decode_tok_s", "Decode"), PACER_OK);
    cr_expect_str_eq(b.data, "\n## Decode\n\n| workload | <b> | q8 |\n|---|---|---|\n"
                             "| w | 225.0 (150.0-300.0) n=3, 1 capped | -, 1 cycle |\n");
    buf_free(&b);
    json_decref(rep);
}
