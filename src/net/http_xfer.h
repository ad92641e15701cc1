/* http_xfer.h - private to net/: one libcurl transfer's state and the steps that
 * http_perform() (one request) and net/multi (many at once) share: setting up the easy
 * handle, and turning curl's outcome into pacer's code and a reason. */
#ifndef PACER_HTTP_XFER_H
#define PACER_HTTP_XFER_H

#include <curl/curl.h>
#include <stdbool.h>

#include "base/buf.h"
#include "net/http.h"

typedef struct http_xfer {
    const http_request *req;
    http_response *resp;
    CURL *easy;
    bool status_known;
    bool is_error;       /* non-2xx: the body is kept for its message (resp->error_body), not passed on */
    pacer_err cb_err;    /* what the data callback returned when it stopped the transfer */
    int64_t last_byte_ns;
} http_xfer;

/* True for http:// and https:// URLs. */
bool http_scheme_ok(const char *url);
/* Empties *resp and stamps its start; refuses (PACER_ERR_ARG, resp->reason set) a URL that
 * is not http:// or https://. Both transports begin every request with it. */
pacer_err http_response_start(const http_request *req, http_response *resp);
/* Sets x->easy up for x->req (callbacks into x); header lines are appended to *hdrs,
 * which the caller frees after the transfer. */
pacer_err http_setup(http_xfer *x, struct curl_slist **hdrs);
/* Takes `n` body bytes that arrived at `t` (clock_now_ns()): what the write callback does.
 * Returns n, or 0 to stop the transfer (curl then ends it with a write error). */
size_t http_write(http_xfer *x, char *ptr, size_t n, int64_t t);
/* Turns curl's result code into pacer's, with the reason in x->resp->reason. */
pacer_err http_classify(http_xfer *x, CURLcode cc);

#endif
