/* test_lab.c - the lab's pure parts: the lab-v1 suite document, the sample plan, the cycle
 * detector on crafted outputs and the SVG check on crafted drawings. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/embedded.h"
#include "lab/cycle.h"
#include "lab/plan.h"
#include "lab/provenance.h"
#include "lab/record.h"
#include "lab/report.h"
#include "lab/signature.h"
#include "lab/suite.h"
#include "lab/svg.h"

/* ---------------- suite ---------------- */

Test(lab_suite, builtin_loads_with_the_issue_caps) {
    lab_suite s;
    char err[256] = "";
    cr_assert_eq(lab_suite_load("lab-v1", &s, err, sizeof err), PACER_OK, "%s", err);
    cr_expect(s.builtin);
    cr_expect_eq(strlen(s.digest), 64);
    cr_expect_eq(s.rounds, 3);
    cr_expect_eq(s.n_workloads, 8);
    cr_expect_eq(s.n_configs, 3);
    const char *names[] = {"code", "prose", "lru", "reasoning", "summary", "chat", "long-prefill", "pelican"};
    const int caps[] = {4096, 4096, 7168, 7168, 1024, 4096, 4096, 7168};
    for (int i = 0; i < 8; i++) {
        cr_expect_str_eq(s.workloads[i].name, names[i]);
        cr_expect_eq(s.workloads[i].cap, caps[i], "%s", names[i]);
        cr_expect_eq(s.workloads[i].phase, i < 6 ? LAB_PHASE_ROUNDS : LAB_PHASE_ONCE);
    }
    cr_expect_eq(s.workloads[6].kind, LAB_KIND_LONG_PREFILL);
    cr_expect_eq(s.workloads[7].kind, LAB_KIND_SVG);
    cr_expect_not_null(s.workloads[5].messages);
    cr_expect_eq(json_array_size(s.workloads[5].messages), 3);
    cr_expect_eq(s.check_every_s, 30);
    const lab_preset *light = lab_suite_preset(&s, "light");
    cr_assert_not_null(light);
    cr_expect(light->configs_built && light->archive && light->rounds == 1 && light->n_cases == 3);
    cr_expect(lab_suite_preset(&s, "heavy")->all_cases);
    lab_suite_free(&s);
}

static char *builtin_copy(void) {
    const embedded_file *f = embedded_find("lab-v1.json");
    cr_assert_not_null(f);
    char *c = malloc(f->size + 1);
    memcpy(c, f->data, f->size + 1);
    return c;
}

Test(lab_suite, one_byte_changes_the_digest_and_custom_is_not_builtin) {
    lab_suite a, b;
    char err[256] = "";
    cr_assert_eq(lab_suite_load("lab-v1", &a, err, sizeof err), PACER_OK);
    char *c = builtin_copy();
    char *at = strstr(c, "\"cap\": 4096");
    cr_assert_not_null(at);
    at[8] = '5'; /* 4096 -> 5096 */
    cr_assert_eq(lab_suite_parse(c, strlen(c), &b, err, sizeof err), PACER_OK, "%s", err);
    cr_expect_str_neq(a.digest, b.digest);
    cr_expect_not(b.builtin);
    lab_suite_free(&a);
    lab_suite_free(&b);
    free(c);
}

static pacer_err parse_edit(const char *from, const char *to, char *err, size_t n) {
    char *c = builtin_copy();
    char *at = strstr(c, from);
    cr_assert_not_null(at, "%s", from);
    size_t tail = strlen(at + strlen(from));
    char *d = malloc(strlen(c) + strlen(to) + 1);
    memcpy(d, c, (size_t)(at - c));
    strcpy(d + (at - c), to);
    memcpy(d + (at - c) + strlen(to), at + strlen(from), tail + 1);
    lab_suite s;
    pacer_err rc = lab_suite_parse(d, strlen(d), &s, err, n);
    if (!rc) lab_suite_free(&s);
    free(c);
    free(d);
    return rc;
}

Test(lab_suite, bad_fields_are_refused_by_name) {
    char err[256];
    cr_expect_eq(parse_edit("\"cap\": 1024", "\"cap\": 0", err, sizeof err), PACER_ERR_FORMAT);
    cr_expect(strstr(err, "workloads[].cap"), "%s", err);
    cr_expect_eq(parse_edit("\"check_every_s\": 30", "\"check_every_s\": 30, \"chek\": 1", err, sizeof err), PACER_ERR_FORMAT);
    cr_expect(strstr(err, "unknown member 'chek'"), "%s", err);
    cr_expect_eq(parse_edit("\"name\": \"q4_0\"", "\"name\": \"q8_0\"", err, sizeof err), PACER_ERR_FORMAT);
    cr_expect(strstr(err, "names must differ"), "%s", err);
    cr_expect_eq(parse_edit("\"name\": \"prose\"", "\"name\": \"../x\"", err, sizeof err), PACER_ERR_FORMAT);
    cr_expect_eq(parse_edit("\"kind\": \"lab\"", "\"kind\": \"community\"", err, sizeof err), PACER_ERR_FORMAT);
    cr_expect_eq(parse_edit("\"phase\": \"once\"", "\"phase\": \"twice\"", err, sizeof err), PACER_ERR_FORMAT);
    lab_suite s;
    cr_expect_eq(lab_suite_parse("{", 1, &s, err, sizeof err), PACER_ERR_PARSE);
}

/* ---------------- plan ---------------- */

Test(lab_plan, configurations_rotate_and_once_workloads_come_last) {
    lab_suite s;
    char err[256] = "";
    cr_assert_eq(lab_suite_load("lab-v1", &s, err, sizeof err), PACER_OK);
    lab_selection sel;
    cr_assert_eq(lab_selection_parse(&s, NULL, NULL, 0, &sel, err, sizeof err), PACER_OK);
    lab_plan p;
    cr_assert_eq(lab_plan_build(&s, &sel, &p), PACER_OK);
    cr_assert_eq(p.n, 6 * 3 * 3 + 3 + 3);
    cr_expect_str_eq(p.slots[0].id, "r1-code-f16");
    cr_expect_str_eq(p.slots[1].id, "r1-code-q8_0");
    cr_expect_str_eq(p.slots[2].id, "r1-code-q4_0");
    cr_expect_str_eq(p.slots[18].id, "r2-code-q8_0"); /* round 2 starts at the second */
    cr_expect_str_eq(p.slots[20].id, "r2-code-f16");
    cr_expect_str_eq(p.slots[36].id, "r3-code-q4_0"); /* round 3 at the third */
    cr_expect_str_eq(p.slots[54].id, "r1-long-prefill-f16");
    cr_expect_str_eq(p.slots[59].id, "r1-pelican-q4_0");
    for (size_t i = 0; i < p.n; i++) cr_expect_eq(p.slots[i].index, (int)i);
    cr_expect_eq(lab_plan_find(&p, "r3-chat-q8_0")->round, 3);
    cr_expect_null(lab_plan_find(&p, "r4-chat-q8_0"));
    lab_plan_free(&p);

    cr_assert_eq(lab_selection_parse(&s, "q4_0,f16", "prose,pelican,code", 2, &sel, err, sizeof err), PACER_OK);
    cr_assert_eq(lab_plan_build(&s, &sel, &p), PACER_OK);
    const char *want[] = {"r1-code-f16", "r1-code-q4_0", "r1-prose-f16", "r1-prose-q4_0", "r2-code-q4_0",
                          "r2-code-f16", "r2-prose-q4_0", "r2-prose-f16", "r1-pelican-f16", "r1-pelican-q4_0"};
    cr_assert_eq(p.n, 10);
    for (size_t i = 0; i < p.n; i++) cr_expect_str_eq(p.slots[i].id, want[i]);
    lab_plan_free(&p);

    cr_expect_eq(lab_selection_parse(&s, "q8_0,q5_1", NULL, 0, &sel, err, sizeof err), PACER_ERR_ARG);
    cr_expect(strstr(err, "no configuration 'q5_1'"), "%s", err);
    cr_expect_eq(lab_selection_parse(&s, NULL, "code,code", 0, &sel, err, sizeof err), PACER_ERR_ARG);
    cr_expect(strstr(err, "named twice"), "%s", err);
    lab_suite_free(&s);
}

/* ---------------- cycle detector ---------------- */

/* Appends `n` distinct words "tagK" (K from `from`) separated by `sep`. */
static void words(buf *b, const char *tag, int from, int n, const char *sep) {
    for (int i = 0; i < n; i++) buf_appendf(b, "%s%d%s", tag, from + i, sep);
}

static void blocks(buf *b, int block, int times, const char *sep) {
    for (int t = 0; t < times; t++) words(b, "w", 0, block, sep);
}

Test(lab_cycle, hits_a_block_of_32_words_repeated_four_times) {
    buf b;
    buf_init(&b, 1 << 22);
    words(&b, "intro", 0, 100, " ");
    size_t loop_at = b.len;
    blocks(&b, 32, 4, " ");
    lab_cycle c;
    cr_assert(lab_cycle_find(b.data, b.len, &c));
    cr_expect_eq(c.block_words, 32);
    cr_expect_eq(c.repeats, 4);
    cr_expect_eq(c.loop_start, loop_at);
    cr_expect_eq(c.loop_words, 128);
    cr_expect(strncmp(b.data + c.block_start, "w0 w1 ", 6) == 0);
    cr_expect(strncmp(b.data + c.block_end - 3, "w31", 3) == 0);
    buf_free(&b);
}

Test(lab_cycle, hits_a_block_of_512_words) {
    buf b;
    buf_init(&b, 1 << 22);
    words(&b, "intro", 0, 50, "\n");
    blocks(&b, 512, 4, " ");
    lab_cycle c;
    cr_assert(lab_cycle_find(b.data, b.len, &c));
    cr_expect_eq(c.block_words, 512);
    cr_expect_eq(c.repeats, 4);
    buf_free(&b);
}

Test(lab_cycle, misses_three_repeats_a_near_repeat_and_a_31_word_block) {
    buf b;
    buf_init(&b, 1 << 22);
    lab_cycle c;
    words(&b, "intro", 0, 300, " ");
    blocks(&b, 40, 3, " ");
    cr_expect_not(lab_cycle_find(b.data, b.len, &c), "three repeats are not a cycle");

    buf_reset(&b);
    words(&b, "intro", 0, 300, " ");
    blocks(&b, 40, 1, " ");
    words(&b, "w", 0, 20, " ");
    buf_append_str(&b, "changed ");
    words(&b, "w", 21, 19, " ");
    blocks(&b, 40, 2, " ");
    cr_expect_not(lab_cycle_find(b.data, b.len, &c), "one word differs in the second repetition");

    buf_reset(&b);
    words(&b, "intro", 0, 300, " ");
    blocks(&b, 31, 4, " ");
    cr_expect_not(lab_cycle_find(b.data, b.len, &c), "31 words are below the shortest block");

    buf_reset(&b);
    blocks(&b, 33, 3, " ");
    cr_expect_not(lab_cycle_find(b.data, b.len, &c), "too few words at all");
    cr_expect_not(lab_cycle_find("", 0, &c));
    buf_free(&b);
}

Test(lab_cycle, a_partial_fifth_repetition_and_white_space_do_not_hide_it) {
    buf b;
    buf_init(&b, 1 << 22);
    words(&b, "intro", 0, 10, " ");
    blocks(&b, 64, 2, " ");
    blocks(&b, 64, 2, "\n\t");
    words(&b, "w", 0, 17, "  ");
    lab_cycle c;
    cr_assert(lab_cycle_find(b.data, b.len, &c));
    cr_expect_eq(c.block_words, 64);
    cr_expect_eq(c.repeats, 4);
    cr_expect_eq(c.loop_words, 4 * 64 + 17);
    buf_free(&b);
}

Test(lab_cycle, the_shortest_block_is_reported) {
    buf b;
    buf_init(&b, 1 << 22);
    blocks(&b, 36, 10, " ");
    lab_cycle c;
    cr_assert(lab_cycle_find(b.data, b.len, &c));
    cr_expect_eq(c.block_words, 36);
    cr_expect_eq(c.repeats, 10);
    buf_free(&b);
}

/* ---------------- SVG ---------------- */

static lab_svg svg_of(const char *answer) {
    lab_svg s;
    lab_svg_check(answer, strlen(answer), &s);
    return s;
}

#define SVG_NS "xmlns=\"http://www.w3.org/2000/svg\""

Test(lab_svg, a_drawing_in_prose_is_extracted_and_valid) {
    const char *a = "Here is the pelican:\n```svg\n<svg " SVG_NS " xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
                    "viewBox=\"0 0 10 10\"><defs><circle id=\"c\" r=\"2\"/></defs><use xlink:href=\"#c\"/>"
                    "<rect style=\"fill:url(#g)\" width=\"1\" height=\"1\"/><style>.a{fill:red}</style></svg>\n```\nEnjoy.";
    lab_svg s = svg_of(a);
    cr_expect(s.found);
    cr_expect(s.valid, "%s", s.reason);
    cr_expect(strncmp(a + s.start, "<svg", 4) == 0);
    cr_expect(strncmp(a + s.start + s.len - 6, "</svg>", 6) == 0);
    s = svg_of("<?xml version=\"1.0\"?>\n<svg " SVG_NS "><path d=\"M0 0\"/></svg>");
    cr_expect(s.valid, "%s", s.reason);
    cr_expect_eq(s.start, 0);
    s = svg_of("<svg><g/></svg>");
    cr_expect(s.valid, "no namespace is still an svg root: %s", s.reason);
}

Test(lab_svg, malformed_and_unsafe_drawings_are_invalid_with_a_reason) {
    struct {
        const char *svg, *reason;
    } bad[] = {
        {"<svg " SVG_NS "><g><circle r=\"1\"/></g>", "not well-formed"},        /* truncated */
        {"<!DOCTYPE html><html><body><svg " SVG_NS "></svg></body></html>", "root element is <html>"},
        {"<svg " SVG_NS "><script>alert(1)</script></svg>", "<script>"},
        {"<svg " SVG_NS " onload=\"alert(1)\"></svg>", "event attribute onload"},
        {"<svg " SVG_NS "><a href=\"javascript:alert(1)\"/></svg>", "javascript:"},
        {"<svg " SVG_NS "><image href=\"https://example.com/x.png\"/></svg>", "external reference"},
        {"<svg " SVG_NS " xmlns:xlink=\"http://www.w3.org/1999/xlink\"><use xlink:href=\"other.svg#a\"/></svg>",
         "external reference"},
        {"<svg " SVG_NS "><style>@import url(http://x/y.css);</style></svg>", "<style>"},
        {"<svg " SVG_NS "><rect style=\"fill:url(http://x/p#a)\"/></svg>", "url()"},
        {"<svg " SVG_NS "><image href=\"data:image/svg+xml;base64,AAAA\"/></svg>", "external reference"},
        {"<!DOCTYPE svg [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><svg " SVG_NS ">&e;</svg>", "external reference"},
        {"<svg " SVG_NS "><text>a & b</text></svg>", "not well-formed"},
        {"no drawing here", "no <svg> element"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lab_svg s = svg_of(bad[i].svg);
        cr_expect_not(s.valid, "case %zu should be invalid", i);
        cr_expect(strstr(s.reason, bad[i].reason), "case %zu: '%s' lacks '%s'", i, s.reason, bad[i].reason);
    }
}

Test(lab_svg, an_entity_bomb_is_stopped_by_the_amplification_limit) {
    buf b;
    buf_init(&b, 1 << 20);
    buf_append_str(&b, "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [\n<!ENTITY a0 \"lolololololololololo\">\n");
    for (int i = 1; i < 10; i++) {
        buf_appendf(&b, "<!ENTITY a%d \"", i);
        for (int k = 0; k < 10; k++) buf_appendf(&b, "&a%d;", i - 1);
        buf_append_str(&b, "\">\n");
    }
    buf_append_str(&b, "]>\n<svg " SVG_NS "><text>&a9;</text></svg>");
    lab_svg s;
    lab_svg_check(b.data, b.len, &s);
    cr_expect(s.found);
    cr_expect_not(s.valid);
    cr_expect(strstr(s.reason, "amplification"), "%s", s.reason);
    buf_free(&b);
}

/* ---------------- record, report, signature, provenance ---------------- */

static lab_record record_of(const char *id, const char *config, const char *workload, lab_finish f, lab_validity v,
                            double decode) {
    lab_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", id);
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.workload, sizeof r.workload, "%s", workload);
    snprintf(r.kind, sizeof r.kind, "completion");
    snprintf(r.started_utc, sizeof r.started_utc, "2025-01-01T00:00:00Z");
    r.round = 1, r.cap = 64, r.attempt = 1, r.finish = f, r.validity = v;
    r.has_usage = true, r.decode_tokens = 40, r.prefill_tokens = 12;
    r.has_decode_tok_s = true, r.decode_tok_s = decode;
    r.completion_ns = 2000000000;
    if (f == LAB_FINISH_CAPPED) snprintf(r.capped_by, sizeof r.capped_by, "cap");
    r.power = json_pack("{s:s,s:b,s:[]}", "expected", "ac-only", "changed", 0, "readings");
    return r;
}

Test(lab_record, every_field_round_trips_and_absent_is_null) {
    lab_record r = record_of("r1-code-q8_0", "q8_0", "code", LAB_FINISH_CAPPED, LAB_VALID, 12.5), back;
    r.cycle = json_pack("{s:i}", "block_words", 32);
    json_t *j = lab_record_to_json(&r);
    cr_assert_not_null(j);
    cr_expect_eq(json_object_size(j), lab_record_field_count + 4);
    cr_expect(json_is_null(json_object_get(j, "first_text_ns")), "absent is null, never 0");
    cr_expect(json_is_null(json_object_get(j, "error")));
    cr_expect_str_eq(json_string_value(json_object_get(j, "finish")), "capped");
    cr_expect(json_is_array(json_object_get(j, "earlier")));
    char err[200];
    cr_assert_eq(lab_record_from_json(j, &back, err, sizeof err), PACER_OK, "%s", err);
    json_t *again = lab_record_to_json(&back);
    cr_expect(json_equal(j, again), "written, read and written again: the same record");
    cr_expect(!lab_record_in_median(&back));
    cr_expect(lab_record_needs_rerun(&back, 65) && !lab_record_needs_rerun(&back, 64));
    json_object_set_new(again, "decode_tokens", json_string("40"));
    lab_record bad;
    cr_expect_eq(lab_record_from_json(again, &bad, err, sizeof err), PACER_ERR_FORMAT);
    cr_expect(strstr(err, "'decode_tokens'"), "%s", err);
    json_object_del(again, "decode_tokens");
    cr_expect_eq(lab_record_from_json(again, &bad, err, sizeof err), PACER_ERR_FORMAT);
    cr_expect(strstr(err, "missing"), "%s", err);
    json_decref(j);
    json_decref(again);
    lab_record_free(&r);
    lab_record_free(&back);
}

Test(lab_report, medians_only_over_valid_eos_samples_and_exclusions_counted) {
    lab_record recs[5] = {
        record_of("r1-code-a", "a", "code", LAB_FINISH_EOS, LAB_VALID, 10),
        record_of("r2-code-a", "a", "code", LAB_FINISH_EOS, LAB_VALID, 30),
        record_of("r3-code-a", "a", "code", LAB_FINISH_CAPPED, LAB_VALID, 1000),
        record_of("r4-code-a", "a", "code", LAB_FINISH_CYCLE, LAB_VALID, 1000),
        record_of("r5-code-a", "a", "code", LAB_FINISH_EOS, LAB_INVALIDATED, 1000),
    };
    json_t *run = json_pack("{s:[s,s,s,s,s,s],s:[{s:s}],s:{s:{s:[s]}}}", "plan", "r1-code-a", "r2-code-a", "r3-code-a",
                            "r4-code-a", "r5-code-a", "r6-code-a", "configurations", "name", "a", "signature", "selections",
                            "cases", "code");
    json_t *rep = lab_report_build(run, recs, 5);
    cr_assert_not_null(rep);
    json_t *cell = json_array_get(json_object_get(rep, "cells"), 0);
    json_t *dec = json_object_get(json_object_get(cell, "metrics"), "decode_tok_s");
    cr_expect_float_eq(json_number_value(json_object_get(dec, "median")), 20.0, 1e-9);
    cr_expect_eq(json_integer_value(json_object_get(dec, "n")), 2);
    json_t *ex = json_object_get(cell, "excluded");
    cr_expect_eq(json_integer_value(json_object_get(ex, "capped")), 1);
    cr_expect_eq(json_integer_value(json_object_get(ex, "cycle")), 1);
    cr_expect_eq(json_integer_value(json_object_get(ex, "invalidated")), 1);
    cr_expect_eq(json_array_size(json_object_get(rep, "samples")), 5);
    cr_expect_str_eq(json_string_value(json_array_get(json_object_get(rep, "pending"), 0)), "r6-code-a");
    /* a pure function: the same inputs, the same bytes */
    json_t *rep2 = lab_report_build(run, recs, 5);
    char *a = json_dumps(rep, JSON_SORT_KEYS | JSON_COMPACT), *b = json_dumps(rep2, JSON_SORT_KEYS | JSON_COMPACT);
    cr_expect_str_eq(a, b);
    free(a), free(b);
    json_decref(rep);
    json_decref(rep2);
    json_decref(run);
    for (int i = 0; i < 5; i++) lab_record_free(&recs[i]);
}

Test(lab_signature, caps_may_rise_and_anything_else_is_named) {
    json_t *was = json_pack("{s:{s:s},s:s,s:{s:s},s:{s:i,s:i}}", "binary", "sha256", "aa", "engine", "builtin", "suite", "digest",
                            "d1", "caps", "code", 16, "prose", 8);
    json_t *now = json_deep_copy(was), *raised;
    char err[300];
    cr_expect_eq(lab_signature_compare(was, now, &raised, err, sizeof err), PACER_OK);
    cr_expect_eq(json_object_size(raised), 0);
    json_decref(raised);
    json_object_set_new(json_object_get(now, "caps"), "code", json_integer(64));
    cr_expect_eq(lab_signature_compare(was, now, &raised, err, sizeof err), PACER_OK);
    cr_expect_eq(json_integer_value(json_array_get(json_object_get(raised, "code"), 1)), 64);
    json_decref(raised);
    json_object_set_new(json_object_get(now, "caps"), "prose", json_integer(4));
    cr_expect_eq(lab_signature_compare(was, now, &raised, err, sizeof err), PACER_ERR_STATE);
    cr_expect(strstr(err, "the cap of prose would drop from 8 to 4"), "%s", err);
    json_object_set_new(json_object_get(now, "caps"), "prose", json_integer(8));
    json_object_set_new(json_object_get(now, "binary"), "sha256", json_string("bb"));
    cr_expect_eq(lab_signature_compare(was, now, &raised, err, sizeof err), PACER_ERR_STATE);
    cr_expect(strstr(err, "the engine binary"), "%s", err);
    json_decref(was);
    json_decref(now);
}

Test(lab_provenance, paths_on_the_command_line_become_placeholders) {
    char *argv[] = {"/home/someone/bin/pacer", "lab", "run", "/home/someone/m.gguf", "--binary", "/opt/b/llama-server",
                    "--note", "/kept/verbatim", "--root=/data/hf", "--configs", "q8_0", "--dry-run"};
    static const lab_placeholder flags[] = {{"--binary", "<binary>"}, {"--root", "<root>"}, {NULL, NULL}};
    static const char *const valued[] = {"--note", "--configs", NULL};
    json_t *cmd = lab_provenance_command(12, argv, 2, flags, valued, "<model>");
    char *s = json_dumps(cmd, JSON_COMPACT);
    cr_expect_str_eq(s, "[\"pacer\",\"lab\",\"run\",\"<model>\",\"--binary\",\"<binary>\",\"--note\",\"/kept/verbatim\","
                        "\"--root=<root>\",\"--configs\",\"q8_0\",\"--dry-run\"]");
    free(s);
    json_decref(cmd);
}
