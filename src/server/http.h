/* http.h - a small HTTP server layer over libmicrohttpd, shared by `pacer serve` and the board.
 *
 * The API in one screen:
 *   - Describe routes as data: an array of http_route {method, path, match, handler}. A route
 *     matches when its method is NULL or equal, and the URL path equals `path`
 *     (HTTP_MATCH_EXACT) or starts with it (HTTP_MATCH_PREFIX). The first match wins; no match
 *     calls http_options.not_found (default: a plain 404).
 *   - http_server_start(&opts, &srv, err, err_len) listens (port 0: any free port; see
 *     http_server_port) and http_server_stop(srv) waits for in-flight requests and frees.
 *   - Request bodies are accumulated up to http_options.max_body bytes before the handler runs;
 *     a larger body calls http_options.too_large (default: a plain 413) instead of the route.
 *   - A handler reads the request (http_req_method/path/header/cookie/query/body/client_ip,
 *     and the fields of a form body with http_req_form),
 *     may add response headers (http_req_add_header: Set-Cookie, Retry-After, ...), and
 *     queues exactly one response: http_respond (bytes, copied), http_respond_take (owns the
 *     malloc'd body), http_respond_json (steals the json_t), or http_respond_stream (a body
 *     produced on demand by a reader callback: SSE, large pages). It returns PACER_OK, or an
 *     error, which drops the connection when nothing was queued.
 *   - http_status is an error to report (code, type, message) with a printf-style setter,
 *     for handlers that validate in several steps and answer once.
 * Threads: one thread per connection by default (a streaming body may block in its reader,
 * as generation does), or a pool of http_options.threads. Handlers of different connections
 * run concurrently: guard shared state. */
#ifndef PACER_SERVER_HTTP_H
#define PACER_SERVER_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

typedef struct http_server http_server;
typedef struct http_req http_req;

/* A route handler: answers `req` with one http_respond* call. `ctx` is http_options.ctx. */
typedef pacer_err (*http_handler)(void *ctx, http_req *req);

typedef enum http_match {
    HTTP_MATCH_EXACT = 0,  /* the path equals the route's */
    HTTP_MATCH_PREFIX = 1, /* the path starts with the route's */
} http_match;

typedef struct http_route {
    const char *method; /* "GET", "POST", ...; NULL matches any method */
    const char *path;
    http_match match;
    http_handler handler;
} http_route;

typedef struct http_options {
    const char *host;           /* an IPv4 address; default 127.0.0.1 */
    int port;                   /* 0: any free port */
    size_t max_body;            /* request body cap in bytes; 0: 1 MiB */
    unsigned timeout_s;         /* idle connection timeout; 0: 600 s */
    int threads;                /* 0: a thread per connection; N: a pool of N threads */
    bool tcp_nodelay;           /* send small writes at once (streamed events) */
    bool access_log;            /* log "METHOD PATH STATUS" of every response (info level) */
    const http_route *routes;   /* the table, n_routes rows; borrowed: must outlive the server */
    size_t n_routes;
    http_handler not_found;     /* no route matched; NULL: a plain 404 */
    http_handler too_large;     /* the body passed max_body; NULL: a plain 413 */
    void *ctx;                  /* passed to every handler */
} http_options;

/* Starts listening. PACER_ERR_ARG for a host that is not an IPv4 address, PACER_ERR_NET
 * when the address cannot be bound; `err` gets one line. */
pacer_err http_server_start(const http_options *o, http_server **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));
/* The bound port (useful after port 0). */
int http_server_port(const http_server *s);
/* Stops listening, waits for in-flight requests, frees. Accepts NULL. */
void http_server_stop(http_server *s);

/* ---- the request (valid during the handler; strings borrowed from it) ---- */

const char *http_req_method(const http_req *r);
/* The URL path without the query string. */
const char *http_req_path(const http_req *r);
/* A request header (case-insensitive name), or NULL. */
const char *http_req_header(const http_req *r, const char *name);
/* A cookie sent by the client, or NULL. */
const char *http_req_cookie(const http_req *r, const char *name);
/* A query-string argument (decoded), or NULL; "" for a key without a value. */
const char *http_req_query(const http_req *r, const char *name);
/* The body (NUL-terminated; "" when there is none) and its length in *len (may be NULL). */
const char *http_req_body(const http_req *r, size_t *len);
/* The client's address as text ("127.0.0.1"), or "" when unknown. */
const char *http_req_client_ip(const http_req *r);

/* Called once per field of a form body with its whole value (`len` bytes, NUL-terminated;
 * a file's bytes as sent). `filename` is the file's name for a file field, else NULL. A
 * non-OK return stops the parse and is returned by http_req_form. */
typedef pacer_err (*http_form_field)(void *ud, const char *name, const char *filename, const char *value, size_t len);
/* Parses the body as a form, application/x-www-form-urlencoded or multipart/form-data as its
 * Content-Type says, with libmicrohttpd's post processor, and calls `fn` per field in
 * order. PACER_ERR_UNSUPPORTED for another content type, PACER_ERR_PARSE for a body that is
 * not a well-formed form of its type. Values are bounded by the body cap. */
pacer_err http_req_form(http_req *r, http_form_field fn, void *ud);

/* ---- responses ---- */

/* Adds a header to the response this handler queues next (both strings are copied). */
pacer_err http_req_add_header(http_req *r, const char *name, const char *value) __attribute__((warn_unused_result));
/* Queues a response with a copy of `len` bytes of `body`. */
pacer_err http_respond(http_req *r, int status, const char *content_type, const void *body, size_t len);
/* Queues `body` (malloc'd, len bytes), which the layer frees in every case. */
pacer_err http_respond_take(http_req *r, int status, const char *content_type, char *body, size_t len);
/* Queues the compact JSON text of `v` (application/json); the reference to `v` is stolen. */
pacer_err http_respond_json(http_req *r, int status, json_t *v);

/* What a stream reader returns instead of a byte count. */
#define HTTP_STREAM_END ((ssize_t)-1)   /* the body is complete */
#define HTTP_STREAM_ERROR ((ssize_t)-2) /* abort: the connection is closed mid-body */
/* Writes up to `max` bytes of the body at dst; returns the count (> 0), HTTP_STREAM_END or
 * HTTP_STREAM_ERROR. May block (one thread per connection). */
typedef ssize_t (*http_stream_read)(void *cls, char *dst, size_t max);
/* Queues a body of unknown length produced by `read`; `done(cls)` runs once when the
 * response is finished or abandoned (also when queueing fails: `cls` is owned by the layer
 * from this call on). Add Cache-Control etc. with http_req_add_header first. */
pacer_err http_respond_stream(http_req *r, int status, const char *content_type, http_stream_read read,
                              void (*done)(void *cls), void *cls);

/* ---- an error to answer with ---- */

typedef struct http_status {
    int code;         /* HTTP status; 0 while unset */
    const char *type; /* a static word naming the kind ("invalid_request_error") */
    char msg[256];
} http_status;

/* Sets all three fields; the message is printf-formatted and truncated to fit. */
void http_status_set(http_status *st, int code, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
