/* test_attempt.c - bench/attempt's pure parts: names, the sample's JSON (absent values are
 * null, never 0), and argument checks; which reported fields are read as the server's own
 * rates (a loopback stream). Fault streaming is tested against the fault server in
 * tests/integration/request.sh. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loopback.h"

#include "bench/attempt.h"
#include "bench/receipt.h"

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
    json_t *j = receipt_attempt_to_json(&s, 0, false, false, 0);
    cr_assert_not_null(j);
    cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "failed");
    cr_assert_str_eq(json_string_value(json_object_get(j, "reason")), "HTTP 503: Loading model");
    cr_assert_eq(json_integer_value(json_object_get(j, "http_status")), 503);
    cr_assert_eq(json_integer_value(json_object_get(j, "duration_ns")), 1234);
    const char *nulls[] = {"prompt_tokens", "completion_tokens", "first_text_ns", "stream_tok_s", "server_prompt_ms",
                           "server_tok_s", "seed"};
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
    json_t *j = receipt_attempt_to_json(&s, 0, false, false, 0);
    cr_assert_str_eq(json_string_value(json_object_get(j, "route")), "chat");
    cr_assert_eq(json_integer_value(json_object_get(j, "completion_tokens")), 256);
    cr_assert_eq(json_integer_value(json_object_get(j, "delivery_span_ns")), 0, "zero is a value when present");
    json_t *d = receipt_drafts_counts(&s);
    cr_assert(json_is_integer(json_object_get(d, "draft_proposed")), "reported: a value");
    cr_assert(json_is_null(json_object_get(d, "verify_rounds")), "not reported: null");
    json_decref(d);
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

/* A one-shot loopback server: one streamed reply of three deliveries 5 ms apart whose
 * last chunk reports rates under llama.cpp's names and under other names. */
static void *stream_once(void *arg) {
    int fd = accept(*(int *)arg, NULL, NULL);
    if (fd < 0) return NULL;
    char req[8192];
    ssize_t n = recv(fd, req, sizeof req, 0);
    (void)n;
    static const char *const parts[] = {
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"text\":\"b\",\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"text\":\"c\",\"finish_reason\":\"length\"}],"
        "\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3},"
        "\"timings\":{\"predicted_per_second\":99.5,\"prompt_ms\":3.25},\"x_stats\":{\"tps\":42.5,\"prefill\":7}}\n\n",
        "data: [DONE]\n\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        ssize_t w = send(fd, parts[i], strlen(parts[i]), MSG_NOSIGNAL);
        (void)w;
        struct timespec ts = {0, 5000000};
        if (i > 0) nanosleep(&ts, NULL);
    }
    close(fd);
    return NULL;
}

/* Runs one attempt against stream_once with the given field paths. */
static void run_with_fields(const char *tok_s, const char *prefill, attempt_sample *s) {
    int port;
    int ls = listen_loopback(&port);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    pthread_t t;
    pthread_create(&t, NULL, stream_once, &ls);
    attempt_request r = {.server_url = url, .prompt = "x", .max_tokens = 3, .server_tok_s_field = tok_s,
                         .prefill_ms_field = prefill, .total_timeout_ms = 10000};
    cr_assert_eq(attempt_run(&r, s), PACER_OK);
    pthread_join(t, NULL);
    close(ls);
    cr_assert_eq(s->status, ATTEMPT_OK, "%s", s->reason);
}

Test(attempt, server_rates_from_the_named_fields) {
    attempt_sample s;
    run_with_fields(NULL, NULL, &s); /* llama.cpp's names */
    cr_assert(s.has_server_predicted_per_second && s.has_server_prompt_ms);
    cr_assert_float_eq(s.server_predicted_per_second, 99.5, 1e-9);
    cr_assert_float_eq(s.server_prompt_ms, 3.25, 1e-9);
    run_with_fields("x_stats.tps", "x_stats.prefill", &s); /* an engine's own names */
    cr_assert(s.has_server_predicted_per_second && s.has_server_prompt_ms);
    cr_assert_float_eq(s.server_predicted_per_second, 42.5, 1e-9);
    cr_assert_float_eq(s.server_prompt_ms, 7, 1e-9);
    run_with_fields("", "", &s); /* an engine that reports none: nothing is read */
    cr_assert(!s.has_server_predicted_per_second && !s.has_server_prompt_ms);
    run_with_fields("x_stats.missing", "nowhere", &s);
    cr_assert(!s.has_server_predicted_per_second && !s.has_server_prompt_ms);
}

/* A one-shot loopback server that sends one fixed reply. */
typedef struct canned {
    int ls;
    const char *reply;
} canned;

static void *reply_once(void *arg) {
    canned *c = arg;
    int fd = accept(c->ls, NULL, NULL);
    if (fd < 0) return NULL;
    char req[8192];
    ssize_t n = recv(fd, req, sizeof req, 0);
    n = send(fd, c->reply, strlen(c->reply), MSG_NOSIGNAL);
    (void)n;
    close(fd);
    return NULL;
}

typedef struct logged {
    char what[4][64];
    char text[4][512];
    int n;
} logged;

static void log_text(void *ctx, const char *what, const char *text, size_t n) {
    logged *l = ctx;
    if (l->n == 4) return;
    snprintf(l->what[l->n], sizeof l->what[0], "%s", what);
    snprintf(l->text[l->n++], sizeof l->text[0], "%.*s", (int)n, text);
}

static void run_reply(const char *reply, const char *prompt, attempt_sample *s, logged *l) {
    int port;
    canned c = {.ls = listen_loopback(&port), .reply = reply};
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    pthread_t t;
    pthread_create(&t, NULL, reply_once, &c);
    memset(l, 0, sizeof *l);
    attempt_request r = {.server_url = url, .prompt = prompt, .max_tokens = 3, .total_timeout_ms = 10000,
                         .on_server_text = log_text, .server_text_ctx = l};
    cr_assert_eq(attempt_run(&r, s), PACER_OK);
    pthread_join(t, NULL);
    close(c.ls);
}

#define CANARIES "/home/canary-user/m.gguf on gpu-canary-7.example.net 10.20.30.40 fd00:1234::77 ops@example.org " \
                 "Bearer sk-canaryAbC123dEf456gHi789 "

/* What a server says reaches the sample as pacer's category plus a sanitized excerpt (the
 * prompt's runs too, with no context given: the request's own prompt); the full text goes to
 * the callback only. */
Test(attempt, server_text_is_sanitized_and_logged) {
    const char *prompt = "def canary_prompt_function(x):\n    return x";
    attempt_sample s;
    logged l;
    run_reply("HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
              "{\"error\":{\"message\":\"failed: " CANARIES "prompt 'def canary_prompt_function(x):\\n    re'\"}}",
              prompt, &s, &l);
    cr_assert_eq(s.status, ATTEMPT_FAILED);
    cr_assert_str_eq(s.reason, "HTTP 500");
    cr_assert(strncmp(s.server_message, "failed: <path> on <host> <address> <address> <email> Bearer <secret>", 68) == 0,
              "%s", s.server_message);
    cr_assert(strstr(s.server_message, "prompt '<prompt>") && !strstr(s.server_message, "canary"), "%s", s.server_message);
    cr_assert(l.n == 1 && strcmp(l.what[0], "HTTP error body") == 0 && strstr(l.text[0], "def canary_prompt_function"));

    run_reply("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
              "data: {\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":null}]}\n\n"
              "data: {\"choices\":[{\"index\":0,\"text\":\"b\",\"finish_reason\":\"eos at /srv/x\"}],"
              "\"token_hash\":\"hash of /home/canary-user\"}\n\n"
              "data: {\"error\":{\"message\":\"worker ops@example.org died\"}}\n\n",
              prompt, &s, &l);
    cr_assert_str_eq(s.reason, "server error in stream");
    cr_assert_str_eq(s.server_message, "worker <email> died");
    cr_assert_str_eq(s.finish_reason, "other");
    cr_assert_str_eq(s.token_hash, "");
    cr_assert_eq(l.n, 3);
    cr_assert(strstr(l.text[0], "eos at /srv/x") && strstr(l.text[1], "/home/canary-user") &&
              strstr(l.text[2], "ops@example.org"));

    run_reply("HTTP/1.1 200 OK\r\nContent-Type: text/html; host=gpu.example.net\r\nConnection: close\r\n\r\n<p>hi</p>",
              prompt, &s, &l);
    cr_assert_str_eq(s.reason, "the server did not stream (Content-Type text/html)");
    run_reply("HTTP/1.1 200 OK\r\nContent-Type: gpu.example.net\r\nConnection: close\r\n\r\n<p>hi</p>", prompt, &s, &l);
    cr_assert_str_eq(s.reason, "the server did not stream (Content-Type other)");
    cr_assert(l.n == 1 && strstr(l.text[0], "gpu.example.net"));
}

/* ---- the output as it arrives (on_text) and a conversation (messages) ---- */

static char captured_request[8192];

/* stream_once, keeping the request it received */
static void *stream_once_capturing(void *arg) {
    int fd = accept(*(int *)arg, NULL, NULL);
    if (fd < 0) return NULL;
    ssize_t n = recv(fd, captured_request, sizeof captured_request - 1, 0);
    captured_request[n > 0 ? n : 0] = '\0';
    static const char *const parts[] = {
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"r\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c\"},\"finish_reason\":\"stop\"}],"
        "\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3}}\n\n",
        "data: [DONE]\n\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        ssize_t w = send(fd, parts[i], strlen(parts[i]), MSG_NOSIGNAL);
        (void)w;
        struct timespec ts = {0, 5000000};
        if (i > 0) nanosleep(&ts, NULL);
    }
    close(fd);
    return NULL;
}

typedef struct text_log {
    char text[64];
    int calls, stop_after;
} text_log;

static pacer_err collect_text(void *ctx, const char *text, size_t n, int64_t t_ns) {
    text_log *l = ctx;
    cr_assert_gt(t_ns, 0);
    strncat(l->text, text, n);
    return ++l->calls == l->stop_after ? PACER_ERR_CANCELLED : PACER_OK;
}

static void run_chat(text_log *log, attempt_sample *s) {
    int port;
    int ls = listen_loopback(&port);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    pthread_t t;
    pthread_create(&t, NULL, stream_once_capturing, &ls);
    json_t *messages = json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "role", "user", "content", "one", "role", "assistant",
                                 "content", "two", "role", "user", "content", "three");
    attempt_request r = {.server_url = url, .route = ATTEMPT_ROUTE_CHAT, .messages = messages, .max_tokens = 8,
                         .total_timeout_ms = 10000, .on_text = collect_text, .on_text_ctx = log};
    cr_assert_eq(attempt_run(&r, s), PACER_OK);
    pthread_join(t, NULL);
    close(ls);
    json_decref(messages);
}

Test(attempt, output_is_handed_over_as_it_arrives_and_a_conversation_is_sent_whole) {
    text_log log = {.stop_after = 0};
    attempt_sample s;
    run_chat(&log, &s);
    cr_expect_eq(s.status, ATTEMPT_OK, "%s", s.reason);
    cr_expect_str_eq(log.text, "rbc");
    cr_expect_eq(log.calls, 3);
    const char *body = strstr(captured_request, "\r\n\r\n");
    cr_assert_not_null(body);
    json_t *j = json_loads(body + 4, 0, NULL);
    cr_assert_not_null(j);
    cr_expect_eq(json_array_size(json_object_get(j, "messages")), 3);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "messages"), 1), "content")), "two");
    cr_expect_null(json_object_get(j, "prompt"));
    json_decref(j);
}

Test(attempt, the_caller_can_stop_the_stream) {
    text_log log = {.stop_after = 2};
    attempt_sample s;
    run_chat(&log, &s);
    cr_expect_eq(s.status, ATTEMPT_CANCELLED);
    cr_expect_str_eq(s.reason, "stopped by the caller");
    cr_expect_str_eq(log.text, "rb");
    cr_expect_eq(s.deliveries, 2);
    cr_expect(s.has_first_text);
}
