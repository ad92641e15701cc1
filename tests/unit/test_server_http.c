/* test_server_http.c - server/http.{c,h}: the route table (exact, prefix, method, fallback),
 * the body cap, request accessors (headers, cookies, query, body, client address), response
 * headers, JSON and streamed bodies, and the variadic status setter; over real loopback HTTP. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <string.h>

#include "base/buf.h"
#include "server/http.h"

static http_server *S;
static char BASE[64];

static pacer_err h_exact(void *ctx, http_req *r) {
    (void)ctx;
    const char *who = http_req_query(r, "who"), *flag = http_req_query(r, "flag");
    char text[160];
    snprintf(text, sizeof text, "exact %s who=%s flag=%s ip=%s", http_req_method(r), who ? who : "(none)",
             flag ? (flag[0] ? flag : "(empty)") : "(none)", http_req_client_ip(r));
    return http_respond(r, 200, "text/plain", text, strlen(text));
}

static pacer_err h_prefix(void *ctx, http_req *r) {
    (void)ctx;
    const char *auth = http_req_header(r, "authorization"), *cookie = http_req_cookie(r, "profile");
    if (http_req_add_header(r, "Set-Cookie", "seen=1; HttpOnly; SameSite=Strict")) return PACER_ERR_NOMEM;
    return http_respond_json(r, 200, json_pack("{s:s,s:s?,s:s?}", "path", http_req_path(r), "auth", auth, "cookie",
                                               cookie));
}

static pacer_err h_post(void *ctx, http_req *r) {
    (void)ctx;
    size_t len;
    const char *body = http_req_body(r, &len);
    char *copy = malloc(len + 8);
    if (!copy) return PACER_ERR_NOMEM;
    int n = snprintf(copy, len + 8, "got %zu:", len);
    memcpy(copy + n, body, len);
    return http_respond_take(r, 201, "text/plain", copy, (size_t)n + len);
}

/* A streamed body of three events, then the end. */
typedef struct counter { int left; int *freed; } counter;
static int FREED;
static ssize_t count_read(void *cls, char *dst, size_t max) {
    counter *c = cls;
    if (c->left == 0) return HTTP_STREAM_END;
    int n = snprintf(dst, max, "data: %d\n\n", c->left--);
    return n;
}
static void count_done(void *cls) { counter *c = cls; (*c->freed)++; free(c); }

static pacer_err h_stream(void *ctx, http_req *r) {
    (void)ctx;
    counter *c = malloc(sizeof *c);
    if (!c) return PACER_ERR_NOMEM;
    *c = (counter){3, &FREED};
    return http_respond_stream(r, 200, "text/event-stream", count_read, count_done, c);
}

static pacer_err h_not_found(void *ctx, http_req *r) {
    http_status st;
    http_status_set(&st, 404, "not_found_error", "no route %s (%d)", http_req_path(r), *(int *)ctx);
    return http_respond_json(r, st.code, json_pack("{s:s,s:s}", "type", st.type, "message", st.msg));
}

/* Echoes the fields of a form body: "name[filename]=len:value;" each. */
static pacer_err form_echo(void *ud, const char *name, const char *filename, const char *value, size_t len) {
    buf *b = ud;
    pacer_err rc = buf_appendf(b, "%s[%s]=%zu:", name, filename ? filename : "", len);
    if (!rc) rc = buf_append(b, value, len);
    return rc ? rc : buf_append_char(b, ';');
}

static pacer_err h_form(void *ctx, http_req *r) {
    (void)ctx;
    buf b;
    buf_init(&b, 1u << 20);
    pacer_err rc = http_req_form(r, form_echo, &b);
    size_t len = b.len; /* a file may hold NUL bytes */
    char *text = rc ? NULL : buf_detach(&b);
    buf_free(&b);
    if (rc) {
        const char *why = pacer_strerror(rc);
        return http_respond(r, rc == PACER_ERR_UNSUPPORTED ? 415 : 400, "text/plain", why, strlen(why));
    }
    return http_respond_take(r, 200, "text/plain", text, len);
}

static const http_route ROUTES[] = {
    {"POST", "/form", HTTP_MATCH_EXACT, h_form},
    {"GET", "/exact", HTTP_MATCH_EXACT, h_exact},
    {NULL, "/any/", HTTP_MATCH_PREFIX, h_prefix},
    {"POST", "/post", HTTP_MATCH_EXACT, h_post},
    {"GET", "/stream", HTTP_MATCH_EXACT, h_stream},
};
static int CTX = 7;

static size_t MAX_BODY = 64;

static void start(http_handler not_found) {
    http_options o = {.port = 0, .max_body = MAX_BODY, .tcp_nodelay = true, .routes = ROUTES,
                      .n_routes = sizeof ROUTES / sizeof ROUTES[0], .not_found = not_found, .ctx = &CTX};
    char err[128] = "";
    cr_assert_eq(http_server_start(&o, &S, err, sizeof err), PACER_OK, "%s", err);
    snprintf(BASE, sizeof BASE, "http://127.0.0.1:%d", http_server_port(S));
}
static void setup(void) { start(h_not_found); }
static void teardown(void) { http_server_stop(S); S = NULL; }

static size_t sink(char *p, size_t sz, size_t n, void *ud) { buf_append(ud, p, sz * n); return sz * n; }

/* One request; returns the status, *out the body (free), *hdrs the response headers (free). */
static long req(const char *method, const char *path, const char *body, struct curl_slist *h, char **out, char **hdrs) {
    CURL *c = curl_easy_init();
    buf b, hb;
    buf_init(&b, 1u << 20);
    buf_init(&hb, 1u << 16);
    char url[256];
    snprintf(url, sizeof url, "%s%s", BASE, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (h) curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hb);
    cr_assert_eq(curl_easy_perform(c), CURLE_OK);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    buf_append(&b, "", 1);
    buf_append(&hb, "", 1);
    *out = buf_detach(&b);
    if (hdrs) *hdrs = buf_detach(&hb);
    buf_free(&hb);
    return code;
}

Test(server_http, exact_route_query_and_client, .init = setup, .fini = teardown) {
    char *body;
    cr_assert_eq(req("GET", "/exact?who=a%20b&flag", NULL, NULL, &body, NULL), 200);
    cr_expect_str_eq(body, "exact GET who=a b flag=(empty) ip=127.0.0.1");
    free(body);
    cr_assert_eq(req("GET", "/exact", NULL, NULL, &body, NULL), 200);
    cr_expect_str_eq(body, "exact GET who=(none) flag=(none) ip=127.0.0.1");
    free(body);
    /* exact means exact: a longer path is not this route */
    cr_assert_eq(req("GET", "/exact/more", NULL, NULL, &body, NULL), 404);
    free(body);
}

Test(server_http, prefix_any_method_headers_cookies, .init = setup, .fini = teardown) {
    struct curl_slist *h = curl_slist_append(NULL, "Authorization: Bearer t0k");
    h = curl_slist_append(h, "Cookie: other=x; profile=p42");
    char *body, *hdrs;
    cr_assert_eq(req("DELETE", "/any/thing/1", NULL, h, &body, &hdrs), 200);
    json_t *v = json_loads(body, 0, NULL);
    cr_assert(v);
    cr_expect_str_eq(json_string_value(json_object_get(v, "path")), "/any/thing/1");
    cr_expect_str_eq(json_string_value(json_object_get(v, "auth")), "Bearer t0k");
    cr_expect_str_eq(json_string_value(json_object_get(v, "cookie")), "p42");
    cr_expect(strstr(hdrs, "Set-Cookie: seen=1; HttpOnly; SameSite=Strict"), "%s", hdrs);
    cr_expect(strstr(hdrs, "Content-Type: application/json"), "%s", hdrs);
    json_decref(v);
    free(body);
    free(hdrs);
    curl_slist_free_all(h);
    cr_assert_eq(req("GET", "/any/", NULL, NULL, &body, NULL), 200);
    free(body);
}

Test(server_http, method_mismatch_falls_back, .init = setup, .fini = teardown) {
    char *body;
    cr_assert_eq(req("POST", "/exact", "x", NULL, &body, NULL), 404);
    cr_expect(strstr(body, "\"no route /exact (7)\""), "%s", body);
    cr_expect(strstr(body, "not_found_error"), "%s", body);
    free(body);
}

Test(server_http, body_and_cap, .init = setup, .fini = teardown) {
    char *body;
    cr_assert_eq(req("POST", "/post", "hello=1&b=2", NULL, &body, NULL), 201);
    cr_expect_str_eq(body, "got 11:hello=1&b=2");
    free(body);
    char big[200];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    cr_assert_eq(req("POST", "/post", big, NULL, &body, NULL), 413);
    free(body);
    /* the cap is per request: the next one is fine */
    cr_assert_eq(req("POST", "/post", "", NULL, &body, NULL), 201);
    cr_expect_str_eq(body, "got 0:");
    free(body);
}

Test(server_http, streamed_body_and_done_once, .init = setup, .fini = teardown) {
    FREED = 0;
    char *body, *hdrs;
    cr_assert_eq(req("GET", "/stream", NULL, NULL, &body, &hdrs), 200);
    cr_expect_str_eq(body, "data: 3\n\ndata: 2\n\ndata: 1\n\n");
    cr_expect(strstr(hdrs, "text/event-stream"), "%s", hdrs);
    free(body);
    free(hdrs);
    http_server_stop(S);
    S = NULL;
    cr_expect_eq(FREED, 1);
}

Test(server_http, defaults_without_handlers) {
    start(NULL);
    char *body;
    cr_expect_eq(req("GET", "/nowhere", NULL, NULL, &body, NULL), 404);
    free(body);
    http_server_stop(S);
}

Test(server_http, bad_host_and_status_truncation) {
    http_options o = {.host = "localhost"};
    http_server *s = NULL;
    char err[128] = "";
    cr_expect_eq(http_server_start(&o, &s, err, sizeof err), PACER_ERR_ARG);
    cr_expect_null(s);
    cr_expect(strstr(err, "IPv4"), "%s", err);
    http_status st;
    char longer[400];
    memset(longer, 'y', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    http_status_set(&st, 400, "invalid_request_error", "bad %s", longer);
    cr_expect_eq(st.code, 400);
    cr_expect_eq(strlen(st.msg), sizeof st.msg - 1);
    cr_expect_eq(strncmp(st.msg, "bad yyy", 7), 0);
}

/* Posts a multipart form built with curl's MIME API; returns the status, *out the body. */
static long post_mime(curl_mime *(*build)(CURL *), char **out) {
    CURL *c = curl_easy_init();
    curl_mime *m = build(c);
    buf b;
    buf_init(&b, 1u << 20);
    char url[256];
    snprintf(url, sizeof url, "%s/form", BASE);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_MIMEPOST, m);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    cr_assert_eq(curl_easy_perform(c), CURLE_OK);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_mime_free(m);
    curl_easy_cleanup(c);
    buf_append(&b, "", 1);
    *out = buf_detach(&b);
    return code;
}

static const char FILE_BYTES[] = "{\"a\": 1}\r\n--not-a-boundary\r\n\0tail";

static curl_mime *upload_form(CURL *c) {
    curl_mime *m = curl_mime_init(c);
    curl_mimepart *p = curl_mime_addpart(m);
    curl_mime_name(p, "csrf");
    curl_mime_data(p, "t0k", CURL_ZERO_TERMINATED);
    p = curl_mime_addpart(m);
    curl_mime_name(p, "display_name");
    curl_mime_data(p, "", CURL_ZERO_TERMINATED);
    p = curl_mime_addpart(m);
    curl_mime_name(p, "receipt");
    curl_mime_filename(p, "run.json");
    curl_mime_type(p, "application/json");
    curl_mime_data(p, FILE_BYTES, sizeof FILE_BYTES - 1);
    p = curl_mime_addpart(m);
    curl_mime_name(p, "after");
    curl_mime_data(p, "x y", CURL_ZERO_TERMINATED);
    return m;
}

Test(server_http, form_fields_urlencoded_and_multipart) {
    MAX_BODY = 1u << 16;
    start(NULL);
    MAX_BODY = 64;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-www-form-urlencoded");
    char *body;
    cr_assert_eq(req("POST", "/form", "a=1&b=x%20y+z&a=2&empty=", h, &body, NULL), 200);
    cr_expect_str_eq(body, "a[]=1:1;b[]=5:x y z;a[]=1:2;empty[]=0:;");
    free(body);
    curl_slist_free_all(h);
    cr_assert_eq(post_mime(upload_form, &body), 200);
    char want[256];
    int n = snprintf(want, sizeof want, "csrf[]=3:t0k;display_name[]=0:;receipt[run.json]=%zu:", sizeof FILE_BYTES - 1);
    cr_expect_eq(memcmp(body, want, (size_t)n), 0, "%s", body);
    cr_expect_eq(memcmp(body + n, FILE_BYTES, sizeof FILE_BYTES - 1), 0, "the file's bytes as sent");
    cr_expect_str_eq(body + n + sizeof FILE_BYTES - 1, ";after[]=3:x y;");
    free(body);
    h = curl_slist_append(NULL, "Content-Type: text/plain");
    cr_assert_eq(req("POST", "/form", "a=1", h, &body, NULL), 415, "not a form");
    free(body);
    curl_slist_free_all(h);
    h = curl_slist_append(NULL, "Content-Type: multipart/form-data; boundary=XyZ");
    cr_assert_eq(req("POST", "/form", "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunfinished", h,
                     &body, NULL), 400, "a truncated multipart body");
    free(body);
    curl_slist_free_all(h);
    http_server_stop(S);
    S = NULL;
}
