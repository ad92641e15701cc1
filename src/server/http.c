/* http.c - the route table, body accumulation with a cap, and response helpers over
 * libmicrohttpd (see http.h). One http_req lives per request, from MHD's first call for it
 * to its completion notice. */
#include "server/http.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "base/buf.h"
#include "base/log.h"

#define HTTP_MAX_HEADERS 16

struct http_server {
    struct MHD_Daemon *d;
    http_options opt;
};

struct http_req {
    struct MHD_Connection *c;
    const http_server *s;
    const char *method, *path;
    buf body;
    bool too_big, responded;
    int n_headers;
    char *headers[HTTP_MAX_HEADERS][2]; /* name, value: added to the next response */
    char ip[INET6_ADDRSTRLEN];
};

/* ---- the request ---- */

const char *http_req_method(const http_req *r) { return r->method; }
const char *http_req_path(const http_req *r) { return r->path; }

const char *http_req_header(const http_req *r, const char *name) {
    return MHD_lookup_connection_value(r->c, MHD_HEADER_KIND, name);
}

const char *http_req_cookie(const http_req *r, const char *name) {
    return MHD_lookup_connection_value(r->c, MHD_COOKIE_KIND, name);
}

const char *http_req_query(const http_req *r, const char *name) {
    const char *v = MHD_lookup_connection_value(r->c, MHD_GET_ARGUMENT_KIND, name);
    if (v) return v;
    /* a key without "=" has no value, which MHD reports as NULL: tell it from an absent key */
    return MHD_lookup_connection_value_n(r->c, MHD_GET_ARGUMENT_KIND, name, strlen(name), NULL, NULL) == MHD_YES ? ""
                                                                                                              : NULL;
}

const char *http_req_body(const http_req *r, size_t *len) {
    if (len) *len = r->body.len;
    return r->body.data ? r->body.data : "";
}

const char *http_req_client_ip(const http_req *r) { return r->ip; }

/* The field being collected while the post processor runs. */
typedef struct form_ctx {
    http_form_field fn;
    void *ud;
    char *name, *filename;
    buf value;
    pacer_err rc;
} form_ctx;

/* Hands the collected field (if any) to the caller and forgets it. */
static void form_flush(form_ctx *f) {
    if (f->name && !f->rc) f->rc = f->fn(f->ud, f->name, f->filename, f->value.data ? f->value.data : "", f->value.len);
    free(f->name);
    free(f->filename);
    f->name = f->filename = NULL;
    buf_reset(&f->value);
}

static enum MHD_Result form_chunk(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                                  const char *content_type, const char *transfer_encoding, const char *data,
                                  uint64_t off, size_t size) {
    form_ctx *f = cls;
    (void)kind; (void)content_type; (void)transfer_encoding;
    /* a new field starts at offset 0; later chunks of the same field continue it */
    if (off == 0 || !f->name || strcmp(f->name, key) != 0) {
        form_flush(f);
        f->name = strdup(key ? key : "");
        f->filename = filename ? strdup(filename) : NULL;
        if (!f->name || (filename && !f->filename)) f->rc = PACER_ERR_NOMEM;
    }
    if (!f->rc && size) f->rc = buf_append(&f->value, data, size);
    return f->rc ? MHD_NO : MHD_YES;
}

pacer_err http_req_form(http_req *r, http_form_field fn, void *ud) {
    form_ctx f = {.fn = fn, .ud = ud};
    buf_init(&f.value, r->s->opt.max_body);
    struct MHD_PostProcessor *pp = MHD_create_post_processor(r->c, 16384, form_chunk, &f);
    if (!pp) return PACER_ERR_UNSUPPORTED;
    bool ok = MHD_post_process(pp, r->body.data ? r->body.data : "", r->body.len) == MHD_YES;
    ok = MHD_destroy_post_processor(pp) == MHD_YES && ok;
    if (!f.rc && !ok) f.rc = PACER_ERR_PARSE;
    form_flush(&f);
    buf_free(&f.value);
    return f.rc;
}

pacer_err http_req_add_header(http_req *r, const char *name, const char *value) {
    if (r->n_headers >= HTTP_MAX_HEADERS) return PACER_ERR_TOO_BIG;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) { free(n); free(v); return PACER_ERR_NOMEM; }
    r->headers[r->n_headers][0] = n;
    r->headers[r->n_headers][1] = v;
    r->n_headers++;
    return PACER_OK;
}

static void req_free(http_req *r) {
    if (!r) return;
    buf_free(&r->body);
    for (int i = 0; i < r->n_headers; i++) { free(r->headers[i][0]); free(r->headers[i][1]); }
    free(r);
}

/* ---- responses ---- */

/* Adds the content type and pending headers to `resp`, queues it and drops our reference. */
static pacer_err queue(http_req *r, int status, const char *content_type, struct MHD_Response *resp) {
    if (!resp) return PACER_ERR_NOMEM;
    bool ok = !content_type || MHD_add_response_header(resp, "Content-Type", content_type) == MHD_YES;
    for (int i = 0; i < r->n_headers && ok; i++)
        ok = MHD_add_response_header(resp, r->headers[i][0], r->headers[i][1]) == MHD_YES;
    ok = ok && MHD_queue_response(r->c, (unsigned)status, resp) == MHD_YES;
    MHD_destroy_response(resp);
    if (!ok) return PACER_ERR_NET;
    r->responded = true;
    if (r->s->opt.access_log) log_info("http: %s %s %d", r->method, r->path, status);
    return PACER_OK;
}

pacer_err http_respond(http_req *r, int status, const char *content_type, const void *body, size_t len) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    return queue(r, status, content_type, resp);
}

pacer_err http_respond_take(http_req *r, int status, const char *content_type, char *body, size_t len) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!resp) { free(body); return PACER_ERR_NOMEM; }
    return queue(r, status, content_type, resp);
}

pacer_err http_respond_json(http_req *r, int status, json_t *v) {
    char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!s) return PACER_ERR_NOMEM;
    return http_respond_take(r, status, "application/json", s, strlen(s));
}

typedef struct stream_ctx {
    http_stream_read read;
    void (*done)(void *cls);
    void *cls;
} stream_ctx;

static ssize_t stream_reader(void *cls, uint64_t pos, char *dst, size_t max) {
    stream_ctx *sc = cls;
    (void)pos;
    ssize_t n = sc->read(sc->cls, dst, max);
    if (n == HTTP_STREAM_END) return MHD_CONTENT_READER_END_OF_STREAM;
    if (n < 0 || n == 0) return MHD_CONTENT_READER_END_WITH_ERROR;
    return n;
}

static void stream_free(void *cls) {
    stream_ctx *sc = cls;
    if (sc->done) sc->done(sc->cls);
    free(sc);
}

pacer_err http_respond_stream(http_req *r, int status, const char *content_type, http_stream_read read,
                              void (*done)(void *cls), void *cls) {
    stream_ctx *sc = malloc(sizeof *sc);
    if (!sc) { if (done) done(cls); return PACER_ERR_NOMEM; }
    *sc = (stream_ctx){read, done, cls};
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_reader, sc, stream_free);
    if (!resp) { stream_free(sc); return PACER_ERR_NOMEM; }
    return queue(r, status, content_type, resp);
}

void http_status_set(http_status *st, int code, const char *type, const char *fmt, ...) {
    st->code = code;
    st->type = type;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
}

/* ---- dispatch ---- */

static pacer_err plain(http_req *r, int status, const char *text) {
    return http_respond(r, status, "text/plain", text, strlen(text));
}

static bool route_matches(const http_route *rt, const char *method, const char *path) {
    if (rt->method && strcmp(rt->method, method) != 0) return false;
    if (rt->match == HTTP_MATCH_PREFIX) return strncmp(path, rt->path, strlen(rt->path)) == 0;
    return strcmp(path, rt->path) == 0;
}

static http_req *req_new(const http_server *s, struct MHD_Connection *c, const char *url, const char *method) {
    http_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->c = c;
    r->s = s;
    r->method = method;
    r->path = url; /* MHD hands the path without the query string */
    buf_init(&r->body, s->opt.max_body);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, r->ip, sizeof r->ip);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, r->ip, sizeof r->ip);
    return r;
}

static enum MHD_Result dispatch(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    http_server *s = cls;
    http_req *r = *con_cls;
    (void)version;
    if (!r) {
        if (!(r = req_new(s, c, url, method))) return MHD_NO;
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!r->too_big && buf_append(&r->body, upload, *upload_size)) r->too_big = true;
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->responded) return MHD_YES;
    const http_options *o = &s->opt;
    pacer_err rc;
    if (r->too_big) {
        rc = o->too_large ? o->too_large(o->ctx, r) : plain(r, 413, "request body too large\n");
    } else {
        http_handler h = o->not_found;
        for (size_t i = 0; i < o->n_routes; i++)
            if (route_matches(&o->routes[i], method, url)) { h = o->routes[i].handler; break; }
        rc = h ? h(o->ctx, r) : plain(r, 404, "not found\n");
    }
    return r->responded || rc == PACER_OK ? MHD_YES : MHD_NO;
}

static void request_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t) {
    (void)cls; (void)c; (void)t;
    req_free(*con_cls);
    *con_cls = NULL;
}

/* Small writes leave at once: Nagle's algorithm would hold a small event back behind an
 * unacknowledged one, and a streaming client's clock would see bunched deliveries. */
static void connection_started(void *cls, struct MHD_Connection *c, void **socket_ctx,
                               enum MHD_ConnectionNotificationCode code) {
    (void)socket_ctx;
    const http_server *s = cls;
    if (code != MHD_CONNECTION_NOTIFY_STARTED || !s->opt.tcp_nodelay) return;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int one = 1;
    if (ci) (void)setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

pacer_err http_server_start(const http_options *o, http_server **out, char *err, size_t err_len) {
    *out = NULL;
    const char *host = o->host ? o->host : "127.0.0.1";
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)o->port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        snprintf(err, err_len, "--host must be an IPv4 address: %s", host);
        return PACER_ERR_ARG;
    }
    http_server *s = calloc(1, sizeof *s);
    if (!s) return PACER_ERR_NOMEM;
    s->opt = *o;
    s->opt.host = NULL; /* not kept: the caller's string */
    if (!s->opt.max_body) s->opt.max_body = 1u << 20;
    unsigned timeout = o->timeout_s ? o->timeout_s : 600u;
    if (o->threads > 0)
        s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, dispatch, s,
                                MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, request_done,
                                s, MHD_OPTION_NOTIFY_CONNECTION, connection_started, s, MHD_OPTION_CONNECTION_TIMEOUT,
                                timeout, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)o->threads, MHD_OPTION_END);
    else
        s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
                                NULL, NULL, dispatch, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                MHD_OPTION_NOTIFY_COMPLETED, request_done, s, MHD_OPTION_NOTIFY_CONNECTION,
                                connection_started, s, MHD_OPTION_CONNECTION_TIMEOUT, timeout, MHD_OPTION_END);
    if (!s->d) {
        snprintf(err, err_len, "cannot listen on %s:%d", host, o->port);
        free(s);
        return PACER_ERR_NET;
    }
    *out = s;
    return PACER_OK;
}

int http_server_port(const http_server *s) {
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

void http_server_stop(http_server *s) {
    if (!s) return;
    MHD_stop_daemon(s->d);
    free(s);
}
