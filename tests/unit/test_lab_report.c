/* test_lab_report.c - the lab's report views on hand-made report.json documents: the
 * decode plot's round-to-round spread and its escaping, summary.md's cells and the escaping
 * of names in them; and the drawing files of two SVG workloads kept apart. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "base/buf.h"
#include "lab/plot.h"
#include "lab/results.h"
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
    cr_expect_str_eq(b.data, "\n## Decode\n\n| workload | \\<b\\> | q8 |\n|---|---|---|\n"
                             "| w | 225.0 (150.0-300.0) n=3, 1 capped | -, 1 cycle |\n");
    buf_free(&b);
    json_decref(rep);
}

Test(lab_summary, markdown_metacharacters_in_names_are_escaped) {
    const char *cases[][2] = {
        {"q8_0", "q8_0"},                   /* an '_' inside a word is no emphasis: left alone */
        {"a|b", "a\\|b"},                   /* a '|' would split a table cell */
        {"__init__", "\\_\\_init\\_\\_"},      /* emphasis at word boundaries */
        {"_x", "\\_x"},
        {"<script>*[x](y)`&~", "\\<script\\>\\*\\[x\\](y)\\`\\&\\~"},
        {"back\\slash", "back\\\\slash"},
        {"two\nlines\r", "two lines "},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf b;
        buf_init(&b, 1 << 10);
        cr_assert_eq(lab_md_escape(&b, cases[i][0]), PACER_OK);
        cr_expect_str_eq(b.data ? b.data : "", cases[i][1], "escaping '%s'", cases[i][0]);
        buf_free(&b);
    }
}

/* Writes one drawing sample of workload `w` (configuration f16, round 1) into `dir`. */
static void write_drawing(const char *dir, const char *w, const char *drawing) {
    lab_sample_result s;
    memset(&s, 0, sizeof s);
    buf_init(&s.answer, 1 << 16);
    cr_assert_eq(buf_append_str(&s.answer, drawing), PACER_OK);
    snprintf(s.rec.id, sizeof s.rec.id, "r1-%s-f16", w);
    snprintf(s.rec.workload, sizeof s.rec.workload, "%s", w);
    snprintf(s.rec.config, sizeof s.rec.config, "f16");
    snprintf(s.rec.kind, sizeof s.rec.kind, "svg");
    s.rec.round = 1;
    lab_svg_check(s.answer.data, s.answer.len, &s.svg);
    char err[256];
    cr_assert_eq(lab_results_write_sample(dir, &s, NULL, err, sizeof err), PACER_OK, "%s", err);
    lab_sample_result_free(&s);
}

Test(lab_results, two_svg_workloads_keep_their_own_drawing_files) {
    char dir[] = "/tmp/pacer-lab-svg-XXXXXX", sub[64], err[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/run", dir);
    cr_assert_eq(lab_results_create(sub, err, sizeof err), PACER_OK, "%s", err);
    write_drawing(sub, "pelican", "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"1\" height=\"1\"/></svg>");
    write_drawing(sub, "otter", "<svg xmlns=\"http://www.w3.org/2000/svg\"><circle r=\"1\"/></svg>");
    char a[128], b[128];
    struct stat st;
    snprintf(a, sizeof a, "%s/pelicans/pelican-f16-1.svg", sub);
    snprintf(b, sizeof b, "%s/pelicans/otter-f16-1.svg", sub);
    cr_expect_eq(stat(a, &st), 0, "%s", a);
    cr_expect_eq(stat(b, &st), 0, "%s", b);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}
