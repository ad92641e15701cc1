/* test_bench.c - suites, completion rules, statistics, receipt fields, drafts totals and
 * manifest checks, on synthetic samples (no network). */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "base/embedded.h"
#include "bench/manifest.h"
#include "schema/manifest.h"
#include "bench/receipt.h"
#include "bench/rules.h"
#include "bench/stats.h"
#include "bench/suite.h"

static attempt_sample ok_sample(int64_t tokens, const char *finish) {
    attempt_sample s;
    memset(&s, 0, sizeof s);
    s.status = ATTEMPT_OK;
    s.http_status = 200;
    snprintf(s.finish_reason, sizeof s.finish_reason, "%s", finish);
    s.has_usage = true;
    s.prompt_tokens = 300;
    s.completion_tokens = tokens;
    s.has_first_text = true;
    s.first_text_ns = 20000000;
    s.delivery_span_ns = 1000000000;
    s.duration_ns = 1030000000;
    s.deliveries = tokens;
    s.output_bytes = tokens * 4;
    s.has_stream_tok_s = true;
    s.stream_tok_s = (double)(tokens - 1);
    return s;
}

static attempt_status judge(int version, bool greedy, attempt_sample s, char *why) {
    rules_context c = {version, 256, greedy, version == 2 ? 128 : 0};
    return rules_judge(&c, &s, why, ATTEMPT_REASON_MAX);
}

Test(rules, full_budget_ok_everywhere) {
    char why[ATTEMPT_REASON_MAX];
    for (int v = 1; v <= 2; v++)
        for (int g = 0; g <= 1; g++) cr_expect_eq(judge(v, g, ok_sample(256, "length"), why), ATTEMPT_OK);
}

Test(rules, v2_sampled_natural_stop) {
    char why[ATTEMPT_REASON_MAX];
    cr_expect_eq(judge(2, false, ok_sample(128, "stop"), why), ATTEMPT_OK);
    cr_expect_eq(judge(2, false, ok_sample(127, "stop"), why), ATTEMPT_INCOMPLETE);
    cr_expect(strstr(why, "short reply") != NULL, "%s", why);
    cr_expect_eq(judge(1, false, ok_sample(200, "stop"), why), ATTEMPT_INCOMPLETE);
    cr_expect_eq(judge(2, true, ok_sample(200, "stop"), why), ATTEMPT_INCOMPLETE);
    cr_expect(strstr(why, "full budget") != NULL, "%s", why);
}

Test(rules, v2_short_budget_names_the_budget) {
    char why[ATTEMPT_REASON_MAX];
    rules_context c = {2, 16, false, 128};
    attempt_sample s = ok_sample(10, "stop");
    cr_expect_eq(rules_judge(&c, &s, why, ATTEMPT_REASON_MAX), ATTEMPT_INCOMPLETE);
    cr_expect_str_eq(why, "short reply: stopped after 10 tokens (needs 16)");
    s = ok_sample(16, "stop");
    cr_expect_eq(rules_judge(&c, &s, why, ATTEMPT_REASON_MAX), ATTEMPT_OK);
}

Test(rules, premature_length_and_empty_and_unmeasured) {
    char why[ATTEMPT_REASON_MAX];
    cr_expect_eq(judge(2, false, ok_sample(200, "length"), why), ATTEMPT_INCOMPLETE);
    cr_expect(strstr(why, "premature length") != NULL, "%s", why);
    attempt_sample e = ok_sample(256, "length");
    e.output_bytes = 0;
    cr_expect_eq(judge(2, false, e, why), ATTEMPT_FAILED);
    cr_expect_str_eq(why, "empty output");
    attempt_sample u = ok_sample(256, "length");
    u.has_usage = false;
    cr_expect_eq(judge(2, false, u, why), ATTEMPT_INCOMPLETE);
    attempt_sample d = ok_sample(256, "length");
    d.has_stream_tok_s = false;
    cr_expect_eq(judge(1, true, d, why), ATTEMPT_INCOMPLETE);
    attempt_sample f = ok_sample(256, "length");
    f.status = ATTEMPT_FAILED;
    strcpy(f.reason, "HTTP 503: Loading model");
    cr_expect_eq(judge(2, false, f, why), ATTEMPT_FAILED);
    cr_expect_str_eq(why, "HTTP 503: Loading model");
}

Test(stats, quantiles_interpolate) {
    double v[] = {50, 10, 40, 20, 30};
    stats_summary s;
    cr_assert(stats_summarize(v, 5, &s));
    cr_expect_float_eq(s.median, 30, 1e-12);
    cr_expect_float_eq(s.min, 10, 1e-12);
    cr_expect_float_eq(s.max, 50, 1e-12);
    cr_expect_float_eq(s.p10, 14, 1e-12);
    cr_expect_float_eq(s.p90, 46, 1e-12);
    cr_expect_float_eq(v[0], 50, 0); /* input untouched */
    double one = 7;
    cr_assert(stats_summarize(&one, 1, &s));
    cr_expect_float_eq(s.p90, 7, 0);
    cr_expect_not(stats_summarize(v, 0, &s));
    double bad[] = {1, NAN};
    cr_expect_not(stats_summarize(bad, 2, &s));
}

Test(suite, builtins_load_and_differ) {
    suite a, b;
    char err[256];
    cr_assert_eq(suite_load("community-v1", &a, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(suite_load("community-v2", &b, err, sizeof err), PACER_OK, "%s", err);
    cr_expect(a.builtin && b.builtin);
    cr_expect_eq(a.rule_version, 1);
    cr_expect_eq(b.rule_version, 2);
    cr_expect_eq(b.natural_stop_min_tokens, 128);
    cr_expect_eq(b.n_workloads * b.n_settings, 4);
    cr_expect_eq(b.repetitions, 5);
    cr_expect_eq(b.warmups, 1);
    cr_expect_str_neq(a.digest, b.digest);
    suite_free(&a);
    suite_free(&b);
}

Test(suite, one_byte_changes_the_digest) {
    const embedded_file *f = embedded_find("community-v2.json");
    cr_assert(f);
    char *copy = strdup(f->data);
    char *p = strstr(copy, "\"max_tokens\": 256");
    cr_assert(p);
    p[strlen("\"max_tokens\": 25")] = '7';
    suite s, t;
    char err[256];
    cr_assert_eq(suite_parse(f->data, f->size, &s, err, sizeof err), PACER_OK);
    cr_assert_eq(suite_parse(copy, strlen(copy), &t, err, sizeof err), PACER_OK);
    cr_expect_str_neq(s.digest, t.digest);
    cr_expect(s.builtin);
    cr_expect_not(t.builtin);
    suite_free(&s);
    suite_free(&t);
    free(copy);
}

Test(suite, bad_documents_are_refused_by_field) {
    suite s;
    char err[256];
    cr_expect_eq(suite_parse("[]", 2, &s, err, sizeof err), PACER_ERR_FORMAT);
    cr_expect_eq(suite_parse("{", 1, &s, err, sizeof err), PACER_ERR_PARSE);
    const char *no_rule = "{\"id\":\"x\",\"version\":1,\"repetitions\":1,\"warmups\":0,\"thinking\":\"default\","
                          "\"prompt_cache\":\"default\"}";
    cr_expect_eq(suite_parse(no_rule, strlen(no_rule), &s, err, sizeof err), PACER_ERR_FORMAT);
    cr_expect(strstr(err, "rule") != NULL, "%s", err);
}

Test(receipt, attempt_round_trips_through_the_field_table) {
    attempt_sample s = ok_sample(256, "length"), back;
    s.route = ATTEMPT_ROUTE_CHAT;
    s.has_server_predicted_per_second = true;
    s.server_predicted_per_second = 123.25;
    strcpy(s.token_hash, "abc123");
    json_t *j = receipt_attempt_to_json(&s, 3, false, true, 1003);
    char err[128];
    cr_assert_eq(receipt_attempt_from_json(j, &back, err, sizeof err), PACER_OK, "%s", err);
    cr_expect_eq(back.route, ATTEMPT_ROUTE_CHAT);
    cr_expect_eq(back.completion_tokens, 256);
    cr_expect_eq(back.first_text_ns, s.first_text_ns);
    cr_expect(back.has_server_predicted_per_second);
    cr_expect_float_eq(back.server_predicted_per_second, 123.25, 0);
    cr_expect_not(back.has_server_prompt_ms);
    cr_expect_str_eq(back.token_hash, "abc123");
    cr_expect(json_is_null(json_object_get(j, "server_prompt_ms")));
    /* every field of the table is written */
    for (size_t i = 0; i < receipt_attempt_field_count; i++)
        cr_expect(json_object_get(j, receipt_attempt_fields[i].name) != NULL, "%s", receipt_attempt_fields[i].name);
    json_object_set_new(j, "completion_tokens", json_string("256"));
    cr_expect_eq(receipt_attempt_from_json(j, &back, err, sizeof err), PACER_ERR_FORMAT);
    cr_expect(strstr(err, "completion_tokens") != NULL, "%s", err);
    json_decref(j);
}

Test(receipt, aggregates_only_when_every_repetition_succeeded) {
    json_t *atts = json_array();
    attempt_sample w = ok_sample(256, "length");
    json_array_append_new(atts, receipt_attempt_to_json(&w, 0, true, false, 0));
    for (int i = 1; i <= 3; i++) {
        attempt_sample s = ok_sample(100 * i + 1, "length");
        json_array_append_new(atts, receipt_attempt_to_json(&s, i, false, false, 0));
    }
    json_t *agg = receipt_cell_aggregates(atts, 3);
    cr_assert(json_is_object(agg));
    json_t *m = json_object_get(agg, "stream_tok_s");
    cr_expect_float_eq(json_real_value(json_object_get(m, "median")), 200, 1e-9);
    cr_expect(json_is_null(json_object_get(agg, "server_tok_s")));
    json_decref(agg);
    agg = receipt_cell_aggregates(atts, 4); /* one declared repetition missing */
    cr_expect(json_is_null(agg));
    json_decref(agg);
    attempt_sample bad = ok_sample(10, "stop");
    bad.status = ATTEMPT_INCOMPLETE;
    json_array_append_new(atts, receipt_attempt_to_json(&bad, 4, false, false, 0));
    agg = receipt_cell_aggregates(atts, 4);
    cr_expect(json_is_null(agg));
    json_decref(agg);
    json_decref(atts);
}

Test(receipt, drafts_totals_null_on_overflow) {
    json_t *d = receipt_drafts_new("run", true);
    attempt_sample s = ok_sample(256, "length");
    s.has_draft_n = s.has_draft_n_accepted = s.has_verify_rounds = true;
    s.draft_n = INT64_MAX - 1;
    s.draft_n_accepted = 10;
    s.verify_rounds = 5;
    cr_assert_eq(receipt_drafts_add(d, 0, 1, false, &s), PACER_OK);
    cr_assert_eq(receipt_drafts_add(d, 0, 2, false, &s), PACER_OK);
    cr_assert_eq(receipt_drafts_finish(d), PACER_OK);
    json_t *t = json_object_get(d, "totals");
    cr_expect(json_is_null(json_object_get(t, "draft_proposed")));
    cr_expect_eq(json_integer_value(json_object_get(t, "draft_accepted")), 20);
    cr_expect_eq(json_integer_value(json_object_get(t, "verify_rounds")), 10);
    cr_expect_eq(json_array_size(json_object_get(d, "notes")), 1);
    json_decref(d);
}

static const char good_manifest[] =
    "{\"manifest_version\":1,\"backend\":\"cuda\",\"platform\":\"linux\",\"revision\":\"abc123\",\"rank_count\":1,"
    "\"hardware\":{\"cpu\":{\"model\":\"CPU\",\"cores\":8,\"serial\":\"S1\"},\"memory_bytes\":1024,"
    "\"gpus\":[{\"name\":\"GPU A\",\"memory_bytes\":10,\"cores\":2,\"uuid\":\"GPU-1234\"}],\"gpu_count\":1},"
    "\"checkpoint\":{\"sha256\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]}}";

Test(manifest, accepted_copies_only_known_fields) {
    manifest m;
    cr_assert_eq(manifest_parse(good_manifest, strlen(good_manifest), &m), PACER_OK, "%s", m.reason);
    cr_expect(m.accepted);
    char *t = json_dumps(m.hardware, 0);
    cr_expect(strstr(t, "GPU-1234") == NULL && strstr(t, "S1") == NULL, "%s", t);
    cr_expect(strstr(t, "\"attested\"") != NULL);
    free(t);
    cr_expect_eq(m.rank_count, 1);
    manifest_free(&m);
}

/* a missing optional fact stays unknown: the rest of the manifest is still accepted */
Test(manifest, missing_optional_facts_stay_unknown) {
    static const struct { const char *from, *to; } drops[] = {
        {"\"revision\":\"abc123\",", ""},
        {"\"rank_count\":1,", ""},
        {",\"checkpoint\":{\"sha256\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]}", ""},
        {"\"cores\":2,", ""},
    };
    for (size_t i = 0; i < sizeof drops / sizeof drops[0]; i++) {
        char doc[2048];
        const char *p = strstr(good_manifest, drops[i].from);
        cr_assert(p, "%s", drops[i].from);
        snprintf(doc, sizeof doc, "%.*s%s%s", (int)(p - good_manifest), good_manifest, drops[i].to, p + strlen(drops[i].from));
        manifest m;
        cr_expect_eq(manifest_parse(doc, strlen(doc), &m), PACER_OK, "without %s: %s", drops[i].from, m.reason);
        cr_expect(m.accepted);
        cr_expect_eq(m.version, 1);
        if (i == 0) cr_expect_str_eq(m.revision, "");
        if (i == 1) cr_expect_eq(m.rank_count, 0);
        if (i == 2) cr_expect_null(m.checkpoint_hashes);
        if (i == 3) {
            json_t *g = json_array_get(json_object_get(m.hardware, "gpus"), 0);
            cr_expect(json_is_null(json_object_get(g, "cores")));
            cr_expect_str_eq(json_string_value(json_object_get(m.hardware, "source")), "partial");
        } else {
            cr_expect_str_eq(json_string_value(json_object_get(m.hardware, "source")), "attested");
        }
        manifest_free(&m);
    }
    manifest m;
    cr_expect_eq(manifest_parse("{\"manifest_version\":1}", 22, &m), PACER_OK, "%s", m.reason);
    cr_expect(m.accepted && !m.hardware && !m.backend[0] && !m.platform[0] && !m.python_version[0]);
    manifest_free(&m);
    static const char py[] = "{\"manifest_version\":1,\"python_version\":\"3.12.1\"}";
    cr_expect_eq(manifest_parse(py, strlen(py), &m), PACER_OK, "%s", m.reason);
    cr_expect_str_eq(m.python_version, "3.12.1");
    manifest_free(&m);
}

/* the group: each rank's hardware, as many as rank_count says */
Test(manifest, ranks_and_their_hardware) {
    static const char three[] =
        "{\"manifest_version\":1,\"rank_count\":3,\"ranks\":[{\"hardware\":{\"gpus\":[{\"name\":\"A\"}]}},"
        "{\"hardware\":{\"gpus\":[{\"name\":\"B\"}]}},{\"hardware\":{\"gpus\":[{\"name\":\"C\",\"uuid\":\"GPU-9\"}]}}]}";
    manifest m;
    cr_assert_eq(manifest_parse(three, strlen(three), &m), PACER_OK, "%s", m.reason);
    cr_expect_eq(m.rank_count, 3);
    cr_expect_eq(json_array_size(m.rank_hardware), 3);
    char *t = json_dumps(m.rank_hardware, 0);
    cr_expect(strstr(t, "GPU-9") == NULL && strstr(t, "\"C\"") != NULL, "%s", t);
    free(t);
    manifest_free(&m);
    static const char mismatch[] = "{\"manifest_version\":1,\"rank_count\":2,\"ranks\":[{\"hardware\":{}}]}";
    cr_expect_neq(manifest_parse(mismatch, strlen(mismatch), &m), PACER_OK);
    cr_expect(strstr(m.reason, "disagree") != NULL, "%s", m.reason);
    manifest_free(&m);
}

Test(manifest, any_failed_check_rejects) {
    static const struct { const char *from, *to; } breaks[] = {
        {"\"manifest_version\":1", "\"manifest_version\":2"}, {"\"cuda\"", "\"quantum\""},
        {"\"gpu_count\":1", "\"gpu_count\":2"},               {"\"rank_count\":1", "\"rank_count\":0"},
        {"\"aaaa", "\"zzzz"},                                  {"\"abc123\"", "\"abc/123\""},
        {"\"cores\":2", "\"cores\":-1"},                        {"\"rank_count\":1", "\"rank_count\":\"1\""},
        {"\"model\":\"CPU\"", "\"model\":7"},                   {"\"sha256\":[", "\"sha256\":\"x\",\"other\":["},
    };
    for (size_t i = 0; i < sizeof breaks / sizeof breaks[0]; i++) {
        char doc[2048];
        const char *p = strstr(good_manifest, breaks[i].from);
        cr_assert(p, "%s", breaks[i].from);
        snprintf(doc, sizeof doc, "%.*s%s%s", (int)(p - good_manifest), good_manifest, breaks[i].to,
                 p + strlen(breaks[i].from));
        manifest m;
        cr_expect_neq(manifest_parse(doc, strlen(doc), &m), PACER_OK, "%s", breaks[i].to);
        cr_expect_not(m.accepted);
        cr_expect(m.reason[0] != '\0');
        cr_expect(m.hardware == NULL);
        manifest_free(&m);
    }
}

/* The field table decides: a missing required field and a field of the wrong type are
 * refused, the reason naming the field and what it should be. */
Test(manifest, table_refuses_missing_and_mistyped) {
    static const struct { const char *from, *to, *want; } cases[] = {
        {"\"manifest_version\":1,", "", "manifest_version is missing"},
        {"\"manifest_version\":1", "\"manifest_version\":\"1\"", "manifest_version is not an integer"},
        {"\"rank_count\":1", "\"rank_count\":\"1\"", "rank_count is not an integer"},
        {"\"linux\"", "7", "platform is not a string"},
        {"\"rank_count\":1", "\"rank_count\":1,\"raw_text\":\"yes\"", "raw_text is not true or false"},
        {"\"rank_count\":1", "\"rank_count\":1,\"ranks\":{}", "ranks is not an array"},
        {"\"checkpoint\":{\"sha256\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]}", "\"checkpoint\":[]",
         "checkpoint is not an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char doc[2048];
        const char *p = strstr(good_manifest, cases[i].from);
        cr_assert(p, "%s", cases[i].from);
        snprintf(doc, sizeof doc, "%.*s%s%s", (int)(p - good_manifest), good_manifest, cases[i].to,
                 p + strlen(cases[i].from));
        manifest m;
        cr_expect_neq(manifest_parse(doc, strlen(doc), &m), PACER_OK, "%s", doc);
        cr_expect_not(m.accepted);
        if (cases[i].want) cr_expect_str_eq(m.reason, cases[i].want);
        manifest_free(&m);
    }
    json_t *doc = json_object();
    cr_expect_eq(manifest_put(doc, MF_RANK_COUNT, json_string("1")), PACER_ERR_ARG);
    cr_expect_eq(manifest_put(doc, MF_VERSION, json_integer(MANIFEST_VERSION)), PACER_OK);
    char why[128];
    cr_expect(manifest_fields_check(doc, why, sizeof why), "%s", why);
    cr_expect_null(json_object_get(doc, "rank_count"));
    json_decref(doc);
}

/* Every manifest string that reaches a receipt holds nothing the sanitizer would remove: a
 * manifest that names a host, a path, an address, an e-mail or a key is rejected, its reason
 * naming the field and the kind but never the text, which is kept for the local log only. */
Test(manifest, private_strings_reject) {
    static const struct { const char *from, *to, *want; } leaks[] = {
        {"\"linux\"", "\"linux on gpu-7.example.net\"", "platform holds a host name"},
        {"\"abc123\"", "\"10.20.30.40\"", "revision holds an IP address"},
        {"\"CPU\"", "\"CPU of ops@example.org\"", "hardware.cpu.model holds an e-mail address"},
        {"\"GPU A\"", "\"GPU at /home/canary/gpu\"", "hardware.gpus[0].name holds a file-system path"},
        {"\"GPU A\"", "\"GPU fd00:1234::77\"", "hardware.gpus[0].name holds an IP address"},
        {"\"linux\"", "\"Bearer sk-AbC123dEf456gHi789\"", "platform holds a token or key"},
    };
    for (size_t i = 0; i < sizeof leaks / sizeof leaks[0]; i++) {
        char doc[2048];
        const char *p = strstr(good_manifest, leaks[i].from);
        snprintf(doc, sizeof doc, "%.*s%s%s", (int)(p - good_manifest), good_manifest, leaks[i].to,
                 p + strlen(leaks[i].from));
        manifest m;
        cr_expect_eq(manifest_parse(doc, strlen(doc), &m), PACER_ERR_FORMAT, "%s", leaks[i].to);
        cr_expect(strcmp(m.reason, leaks[i].want) == 0, "'%s', want '%s'", m.reason, leaks[i].want);
        cr_expect(m.rejected_text && strstr(m.rejected_text, leaks[i].to), "the full text is kept for the log");
        manifest_free(&m);
    }
}

/* Receipts written before the server_message field existed still read; it reads as empty. */
Test(receipt, server_message_is_optional_on_read) {
    attempt_sample s = ok_sample(256, "length"), back;
    snprintf(s.server_message, sizeof s.server_message, "out of memory");
    json_t *a = receipt_attempt_to_json(&s, 1, false, false, 0);
    char err[200];
    cr_assert_eq(receipt_attempt_from_json(a, &back, err, sizeof err), PACER_OK, "%s", err);
    cr_expect_str_eq(back.server_message, "out of memory");
    json_object_del(a, "server_message");
    cr_assert_eq(receipt_attempt_from_json(a, &back, err, sizeof err), PACER_OK, "%s", err);
    cr_expect_str_eq(back.server_message, "");
    json_object_del(a, "reason");
    cr_expect_eq(receipt_attempt_from_json(a, &back, err, sizeof err), PACER_ERR_FORMAT, "other fields stay required");
    json_decref(a);
}
