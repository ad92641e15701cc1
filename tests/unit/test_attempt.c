/* test_attempt.c - bench/attempt's pure parts: names, the sample's JSON (absent values are
 * null, never 0), and argument checks. Streaming is tested against the fault server in
 * tests/integration/request.sh. */
#include <criterion/criterion.h>
#include <string.h>

#include "bench/attempt.h"

Test(attempt, names) {
    cr_assert_str_eq(attempt_route_name(ATTEMPT_ROUTE_CHAT), "chat");
    cr_assert_str_eq(attempt_route_path(ATTEMPT_ROUTE_COMPLETIONS), "/v1/completions");
    cr_assert_str_eq(attempt_route_path(ATTEMPT_ROUTE_CHAT), "/v1/chat/completions");
    cr_assert_str_eq(attempt_status_name(ATTEMPT_INCOMPLETE), "incomplete");
    cr_assert_str_eq(attempt_status_name(ATTEMPT_CANCELLED), "cancelled");
}

Test(attempt, json_absent_is_null) {
    attempt_sample s;
    memset(&s, 0, sizeof s);
    s.status = ATTEMPT_FAILED;
    strcpy(s.reason, "HTTP 503: Loading model");
    s.http_status = 503;
    s.duration_ns = 1234;
    json_t *j = attempt_sample_to_json(&s);
    cr_assert_not_null(j);
    cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "failed");
    cr_assert_str_eq(json_string_value(json_object_get(j, "reason")), "HTTP 503: Loading model");
    cr_assert_eq(json_integer_value(json_object_get(j, "http_status")), 503);
    cr_assert_eq(json_integer_value(json_object_get(j, "duration_ns")), 1234);
    const char *nulls[] = {"finish_reason", "prompt_tokens", "completion_tokens", "first_text_ns", "delivery_span_ns",
                           "stream_tok_s", "server_prompt_ms", "draft_n", "verify_rounds", "token_hash"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        cr_assert(json_is_null(json_object_get(j, nulls[i])), "%s", nulls[i]);
    json_decref(j);
}

Test(attempt, json_present_values) {
    attempt_sample s;
    memset(&s, 0, sizeof s);
    s.route = ATTEMPT_ROUTE_CHAT;
    s.has_usage = true;
    s.completion_tokens = 256;
    s.has_first_text = true;
    s.first_text_ns = 5;
    s.delivery_span_ns = 0;
    s.has_stream_tok_s = true;
    s.stream_tok_s = 200.5;
    s.has_draft_n = true;
    strcpy(s.token_hash, "abc");
    json_t *j = attempt_sample_to_json(&s);
    cr_assert_str_eq(json_string_value(json_object_get(j, "route")), "chat");
    cr_assert_eq(json_integer_value(json_object_get(j, "completion_tokens")), 256);
    cr_assert_eq(json_integer_value(json_object_get(j, "delivery_span_ns")), 0, "zero is a value when present");
    cr_assert(json_is_integer(json_object_get(j, "draft_n")));
    cr_assert_float_eq(json_real_value(json_object_get(j, "stream_tok_s")), 200.5, 1e-9);
    cr_assert_str_eq(json_string_value(json_object_get(j, "token_hash")), "abc");
    json_decref(j);
}

Test(attempt, invalid_arguments) {
    attempt_sample s;
    attempt_request r = {.server_url = "http://127.0.0.1:1", .prompt = NULL, .max_tokens = 8};
    cr_assert_eq(attempt_run(&r, &s), PACER_ERR_ARG);
    cr_assert_eq(s.status, ATTEMPT_FAILED);
    cr_assert_neq(s.reason[0], '\0');
    r.prompt = "x";
    r.max_tokens = 0;
    cr_assert_eq(attempt_run(&r, &s), PACER_ERR_ARG);
    r.max_tokens = 8;
    r.server_url = "gopher://x";
    cr_assert_eq(attempt_run(&r, &s), PACER_ERR_ARG);
    cr_assert_eq(attempt_run(&r, NULL), PACER_ERR_ARG);
}
