/* http.h - a libcurl client for one streamed HTTP request. Every piece of the body is
 * handed to a callback with the monotonic time it arrived; timeouts for connect, first
 * byte, idle gaps and the whole transfer; no proxies, no redirects, http/https only. */
#ifndef PACER_HTTP_H
#define PACER_HTTP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

#define HTTP_REASON_MAX 256
#define HTTP_ERROR_BODY_MAX 4096   /* bytes of an error reply kept to find its message */
#define HTTP_HEADERS_MAX 16384     /* bytes of response headers kept */

/* Called with each piece of a successful (2xx) response body and the clock_now_ns() time
 * it arrived. A non-OK return aborts the transfer; http_perform() then returns that code. */
typedef pacer_err (*http_data_fn)(void *ctx, const char *data, size_t n, int64_t t_ns);

typedef struct http_request {
    const char *method;            /* "GET" or "POST" */
    const char *url;               /* http:// or https:// only */
    const char *body;              /* POST body (may be NULL for GET) */
    size_t body_len;
    const char *const *headers;    /* NULL-terminated "Name: value" lines, or NULL */
    /* Milliseconds; 0 = no limit for that phase. */
    int64_t connect_timeout_ms, first_byte_timeout_ms, idle_timeout_ms, total_timeout_ms;
    const volatile sig_atomic_t *cancel_flag; /* non-zero: stop promptly (PACER_ERR_CANCELLED) */
    http_data_fn on_data;
    void *ctx;
} http_request;

typedef struct http_response {
    int status;                    /* 0 when no response line arrived */
    int64_t start_ns;              /* just before the request was sent */
    int64_t first_byte_ns;         /* first body byte (0 when none) */
    int64_t end_ns;                /* when the transfer ended, however it ended */
    int64_t body_bytes;            /* body bytes received */
    buf headers;                   /* raw header lines of the final response (capped) */
    buf error_body;                /* the body of a non-2xx reply, its first HTTP_ERROR_BODY_MAX
                                    * bytes, as sent (for the caller's local log only) */
    char reason[HTTP_REASON_MAX];  /* why it failed, for people; "" on success; never names
                                    * the host, address or port (reasons go into receipts) */
} http_response;

/* Prepares an empty response. */
/* curl_global_init(), once per process, whoever calls first (net/ and hub/ both use libcurl). */
void http_global_once(void);

void http_response_init(http_response *r);
/* Frees its storage. Accepts NULL. */
void http_response_free(http_response *r);
/* Copies the value of header `name` (case-insensitive) into out; returns false when absent. */
bool http_response_header(const http_response *r, const char *name, char *out, size_t out_size);

/* Runs the request to its end. Returns PACER_OK for a complete 2xx response;
 * PACER_ERR_HTTP for another status (reason = "HTTP 503: <the server's message>");
 * PACER_ERR_TIMEOUT, PACER_ERR_NET (connect failure, connection closed or reset mid-body),
 * PACER_ERR_CANCELLED, PACER_ERR_ARG (bad URL or scheme), or the callback's own code.
 * `resp` is filled in every case. Thread-safe given distinct arguments. */
pacer_err http_perform(const http_request *req, http_response *resp);

/* Extracts a human-readable message from an error body: OpenAI's {"error":{"message":..}},
 * {"error":"..."}, {"message":"..."} or else the text itself (first line, trimmed), into out. */
void http_error_message(const char *body, size_t len, char *out, size_t out_size);

#endif
