/* test_http.c - net/http: the server's error message found in an error body (OpenAI
 * objects, other shapes, plain text), capped and made printable; on loopback, proxy
 * variables are ignored and a failure's reason never names the host or port. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loopback.h"
#include "base/version.h"
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

/* The head of the request serve_once() answered last. */
static const char *last_request = "";

/* A one-shot loopback server: answers one request with "ok". */
static void *serve_once(void *arg) {
    int ls = *(int *)arg;
    int fd = accept(ls, NULL, NULL);
    if (fd < 0) return NULL;
    static char req[4096];
    ssize_t n = recv(fd, req, sizeof req - 1, 0);
    req[n > 0 ? n : 0] = '\0';
    last_request = req;
    static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    ssize_t w = send(fd, reply, sizeof reply - 1, 0);
    (void)w;
    close(fd);
    return NULL;
}

static pacer_err collect_body(void *ctx, const char *data, size_t n, int64_t t_ns) {
    return buf_append(ctx, data, n);
}

/* One GET to a serve_once() server; the body in *body, the response in *r (free both). */
static pacer_err get_once(buf *body, http_response *r) {
    int port;
    int ls = listen_loopback(&port);
    pthread_t t;
    pthread_create(&t, NULL, serve_once, &ls);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
    buf_init(body, 1024);
    http_request q = {.method = "GET", .url = url, .total_timeout_ms = 10000, .on_data = collect_body, .ctx = body};
    http_response_init(r);
    pacer_err rc = http_perform(&q, r);
    pthread_join(t, NULL);
    close(ls);
    return rc;
}

Test(http, proxy_variables_are_ignored) {
    /* a proxy that refuses every connection: using it would fail the request */
    int closed_port;
    int closed = listen_loopback(&closed_port);
    close(closed);
    char proxy[64];
    snprintf(proxy, sizeof proxy, "http://127.0.0.1:%d", closed_port);
    static const char *const vars[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) setenv(vars[i], proxy, 1);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    buf body;
    http_response r;
    pacer_err rc = get_once(&body, &r);
    cr_assert_eq(rc, PACER_OK, "reason: %s", r.reason);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(body.data, "ok");
    http_response_free(&r);
    buf_free(&body);
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

Test(http, failure_reason_names_no_host_or_port) {
    int port;
    int ls = listen_loopback(&port);
    close(ls); /* nothing listens there now */
    static const char *const hosts[] = {"127.0.0.1", "localhost"};
    for (size_t i = 0; i < 2; i++) {
        char url[64], port_text[16];
        snprintf(url, sizeof url, "http://%s:%d/v1/completions", hosts[i], port);
        snprintf(port_text, sizeof port_text, "%d", port);
        http_request q = {.method = "POST", .url = url, .body = "{}", .body_len = 2, .connect_timeout_ms = 5000};
        http_response r;
        http_response_init(&r);
        cr_assert_eq(http_perform(&q, &r), PACER_ERR_NET);
        cr_assert(strstr(r.reason, "connect") != NULL, "reason: %s", r.reason);
        cr_assert(strstr(r.reason, hosts[i]) == NULL && strstr(r.reason, port_text) == NULL, "reason: %s", r.reason);
        http_response_free(&r);
    }
}

/* Every handle starts with net/client.h's setup: the user agent names pacer's version. */
Test(http, user_agent_names_the_version) {
    buf body;
    http_response r;
    pacer_err rc = get_once(&body, &r);
    cr_assert_eq(rc, PACER_OK, "reason: %s", r.reason);
    cr_expect(strstr(last_request, "\r\nUser-Agent: pacer/" PACER_VERSION "\r\n") != NULL, "%s", last_request);
    http_response_free(&r);
    buf_free(&body);
}
