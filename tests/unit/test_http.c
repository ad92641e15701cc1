/* test_http.c - net/http's pure parts: the server's error message found in an error body
 * (OpenAI objects, other shapes, plain text), capped and made printable. */
#include <criterion/criterion.h>
#include <string.h>

#include "net/http.h"

static const struct {
    const char *body;
    const char *want;
} cases[] = {
    {"{\"error\":{\"message\":\"max_tokens is too large\",\"type\":\"invalid_request_error\"}}", "max_tokens is too large"},
    {"{\"error\":\"model not found\"}", "model not found"},
    {"{\"message\":\"busy\"}", "busy"},
    {"{\"detail\":\"Not Found\"}", "Not Found"},
    {"internal failure\nin the engine\n", "internal failure in the engine"},
    {"  \t spaced \r\n out  ", "spaced out"},
    {"{\"error\":{\"code\":1}}", "{\"error\":{\"code\":1}}"},
    {"", ""},
};

Test(http, error_message_shapes) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[128];
        http_error_message(cases[i].body, strlen(cases[i].body), out, sizeof out);
        cr_assert_str_eq(out, cases[i].want, "case %zu", i);
    }
}

Test(http, error_message_capped) {
    char body[5000];
    memset(body, 'x', sizeof body - 1);
    body[sizeof body - 1] = '\0';
    char out[64];
    http_error_message(body, strlen(body), out, sizeof out);
    cr_assert_eq(strlen(out), 63);
}

Test(http, only_http_schemes) {
    http_response r;
    http_response_init(&r);
    http_request q = {.method = "GET", .url = "file:///etc/passwd"};
    cr_assert_eq(http_perform(&q, &r), PACER_ERR_ARG);
    cr_assert(strstr(r.reason, "http://") != NULL);
    q.url = "ftp://127.0.0.1/";
    cr_assert_eq(http_perform(&q, &r), PACER_ERR_ARG);
    http_response_free(&r);
}

Test(http, header_lookup) {
    http_response r;
    http_response_init(&r);
    buf_append_str(&r.headers, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-A:  b \r\n\r\n");
    char v[64];
    cr_assert(http_response_header(&r, "content-type", v, sizeof v));
    cr_assert_str_eq(v, "text/event-stream");
    cr_assert(http_response_header(&r, "X-A", v, sizeof v));
    cr_assert_str_eq(v, "b");
    cr_assert(!http_response_header(&r, "X-Missing", v, sizeof v));
    http_response_free(&r);
}
