/* http.c - one streamed HTTP request over libcurl's multi interface, so that the loop can
 * watch the first-byte and idle deadlines and a cancel flag between socket waits. Body
 * pieces are time-stamped the moment curl hands them over. */
#include "net/http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "net/client.h"
#include "net/http_xfer.h"

#define HTTP_POLL_MAX_MS 50 /* longest wait between deadline and cancel checks */

static pthread_once_t http_once = PTHREAD_ONCE_INIT;
static void http_global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }
void http_global_once(void) { pthread_once(&http_once, http_global_init); }

void http_response_init(http_response *r) {
    memset(r, 0, sizeof *r);
    buf_init(&r->headers, HTTP_HEADERS_MAX);
    buf_init(&r->error_body, HTTP_ERROR_BODY_MAX);
}

void http_response_free(http_response *r) {
    if (!r) return;
    buf_free(&r->headers);
    buf_free(&r->error_body);
}

bool http_response_header(const http_response *r, const char *name, char *out, size_t out_size) {
    size_t nlen = strlen(name);
    const char *s = r->headers.data;
    while (s && *s) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        if (len > nlen && s[nlen] == ':' && strncasecmp(s, name, nlen) == 0) {
            const char *v = s + nlen + 1;
            const char *e = s + len;
            while (v < e && (*v == ' ' || *v == '\t')) v++;
            while (e > v && (e[-1] == '\r' || e[-1] == ' ')) e--;
            snprintf(out, out_size, "%.*s", (int)(e - v), v);
            return true;
        }
        s = eol ? eol + 1 : s + len;
    }
    return false;
}

/* Copies text into out, control characters turned into spaces, runs of space collapsed. */
static void http_copy_printable(const char *s, size_t n, char *out, size_t out_size) {
    size_t o = 0;
    bool space = true; /* drops leading space */
    for (size_t i = 0; i < n && o + 1 < out_size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == ' ') {
            if (!space) out[o++] = ' ';
            space = true;
        } else {
            out[o++] = (char)c;
            space = false;
        }
    }
    while (o > 0 && out[o - 1] == ' ') o--;
    out[o] = '\0';
}

void http_error_message(const char *body, size_t len, char *out, size_t out_size) {
    out[0] = '\0';
    if (!body || !len) return;
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *msg = NULL;
    if (json_is_object(root)) {
        json_t *err = json_object_get(root, "error");
        if (json_is_object(err)) msg = json_string_value(json_object_get(err, "message"));
        else if (json_is_string(err)) msg = json_string_value(err);
        if (!msg) msg = json_string_value(json_object_get(root, "message"));
        if (!msg) msg = json_string_value(json_object_get(root, "detail"));
    }
    if (msg) http_copy_printable(msg, strlen(msg), out, out_size);
    else http_copy_printable(body, len, out, out_size);
    json_decref(root);
}

static size_t http_on_header(char *ptr, size_t size, size_t nmemb, void *ud) {
    http_xfer *x = ud;
    size_t n = size * nmemb;
    /* a new status line (after 1xx) starts a new header block */
    if (n >= 5 && memcmp(ptr, "HTTP/", 5) == 0) buf_reset(&x->resp->headers);
    (void)buf_append(&x->resp->headers, ptr, n); /* past the cap: headers are dropped, not an error */
    return n;
}

static size_t http_on_write(char *ptr, size_t size, size_t nmemb, void *ud) {
    return http_write(ud, ptr, size * nmemb, clock_now_ns());
}

size_t http_write(http_xfer *x, char *ptr, size_t n, int64_t t) {
    x->last_byte_ns = t;
    if (!x->resp->first_byte_ns) x->resp->first_byte_ns = t;
    x->resp->body_bytes += (int64_t)n;
    if (!x->status_known) {
        long code = 0;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
        x->resp->status = (int)code;
        x->is_error = code < 200 || code > 299;
        x->status_known = true;
    }
    if (x->is_error) {
        size_t room = x->resp->error_body.max - x->resp->error_body.len;
        (void)buf_append(&x->resp->error_body, ptr, n < room ? n : room);
        /* enough to find the message: an endless error body stops here, as an HTTP error */
        return n < room ? n : 0;
    }
    if (x->req->on_data) {
        pacer_err rc = x->req->on_data(x->req->ctx, ptr, n, t);
        if (rc) {
            x->cb_err = rc;
            return 0; /* makes curl stop with a write error */
        }
    }
    return n;
}

static int http_on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
    http_xfer *x = ud;
    return x->req->cancel_flag && *x->req->cancel_flag ? 1 : 0;
}

bool http_scheme_ok(const char *url) {
    return url && (strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0);
}

pacer_err http_response_start(const http_request *req, http_response *resp) {
    buf_reset(&resp->headers);
    buf_reset(&resp->error_body);
    resp->status = 0;
    resp->first_byte_ns = resp->end_ns = resp->body_bytes = 0;
    resp->reason[0] = '\0';
    resp->start_ns = clock_now_ns();
    if (!http_scheme_ok(req->url)) {
        snprintf(resp->reason, sizeof resp->reason, "only http:// and https:// URLs are supported");
        return PACER_ERR_ARG;
    }
    return PACER_OK;
}

pacer_err http_setup(http_xfer *x, struct curl_slist **hdrs) {
    const http_request *req = x->req;
    CURL *e = x->easy;
    for (const char *const *h = req->headers; h && *h; h++) {
        struct curl_slist *n = curl_slist_append(*hdrs, *h);
        if (!n) return PACER_ERR_NOMEM;
        *hdrs = n;
    }
    /* no 100-continue round trip before the body: it would sit inside the measurement */
    struct curl_slist *n = curl_slist_append(*hdrs, "Expect:");
    if (!n) return PACER_ERR_NOMEM;
    *hdrs = n;
    /* no redirects, no proxy: a measured request goes where it was sent, directly */
    http_client_options co = {.connect_timeout_ms = req->connect_timeout_ms};
    if (http_client_setup(e, req->url, &co)) return PACER_ERR_INTERNAL;
    CURLcode c = CURLE_OK;
    c |= curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    c |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, *hdrs);
    c |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_on_write);
    c |= curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    c |= curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, http_on_header);
    c |= curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    c |= curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    c |= curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, http_on_progress);
    c |= curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
    if (req->total_timeout_ms > 0) c |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)req->total_timeout_ms);
    if (req->method && strcmp(req->method, "POST") == 0) {
        c |= curl_easy_setopt(e, CURLOPT_POST, 1L);
        c |= curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        c |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body ? req->body : "");
    } else {
        c |= curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    }
    return c == CURLE_OK ? PACER_OK : PACER_ERR_INTERNAL;
}

/* Waits for the transfer, checking the deadlines curl does not know and the cancel flag.
 * Returns PACER_OK when curl finished (its code in *done_code), or why the loop stopped it. */
static pacer_err http_loop(http_xfer *x, CURLM *multi, CURLcode *done_code) {
    const http_request *req = x->req;
    http_response *resp = x->resp;
    int running = 1;
    for (;;) {
        if (curl_multi_perform(multi, &running) != CURLM_OK) return PACER_ERR_INTERNAL;
        if (!running) break;
        if (req->cancel_flag && *req->cancel_flag) {
            snprintf(resp->reason, sizeof resp->reason, "cancelled");
            return PACER_ERR_CANCELLED;
        }
        int64_t now = clock_now_ns();
        int64_t wait_ms = HTTP_POLL_MAX_MS;
        if (!resp->first_byte_ns && req->first_byte_timeout_ms > 0) {
            int64_t left = resp->start_ns + req->first_byte_timeout_ms * 1000000 - now;
            if (left <= 0) {
                snprintf(resp->reason, sizeof resp->reason, "no response within %lld ms (first-byte timeout)",
                         (long long)req->first_byte_timeout_ms);
                return PACER_ERR_TIMEOUT;
            }
            if (left / 1000000 + 1 < wait_ms) wait_ms = left / 1000000 + 1;
        }
        if (resp->first_byte_ns && req->idle_timeout_ms > 0) {
            int64_t left = x->last_byte_ns + req->idle_timeout_ms * 1000000 - now;
            if (left <= 0) {
                snprintf(resp->reason, sizeof resp->reason, "no bytes for %lld ms (idle timeout)",
                         (long long)req->idle_timeout_ms);
                return PACER_ERR_TIMEOUT;
            }
            if (left / 1000000 + 1 < wait_ms) wait_ms = left / 1000000 + 1;
        }
        if (curl_multi_poll(multi, NULL, 0, (int)wait_ms, NULL) != CURLM_OK) return PACER_ERR_INTERNAL;
    }
    int left = 0;
    CURLMsg *m;
    *done_code = CURLE_OK;
    while ((m = curl_multi_info_read(multi, &left)))
        if (m->msg == CURLMSG_DONE) *done_code = m->data.result;
    return PACER_OK;
}

/* Turns curl's outcome into pacer's code and a reason. */
pacer_err http_classify(http_xfer *x, CURLcode cc) {
    http_response *resp = x->resp;
    /* curl's own words for the code, never its error buffer: that names the host and port,
     * and reasons end up in receipts, which hold no addresses or host names */
    const char *detail = curl_easy_strerror(cc);
    if (!x->status_known && resp->status == 0) {
        long code = 0;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
        resp->status = (int)code;
        x->is_error = code != 0 && (code < 200 || code > 299);
    }
    if (x->cb_err) {
        snprintf(resp->reason, sizeof resp->reason, "stopped while reading the body: %s", pacer_strerror(x->cb_err));
        return x->cb_err;
    }
    if (cc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(resp->reason, sizeof resp->reason, "cancelled");
        return PACER_ERR_CANCELLED;
    }
    if (x->is_error) {
        char msg[HTTP_REASON_MAX];
        http_error_message(resp->error_body.data, resp->error_body.len, msg, sizeof msg);
        if (resp->status >= 300 && resp->status < 400 && !msg[0])
            snprintf(msg, sizeof msg, "redirect not followed");
        snprintf(resp->reason, sizeof resp->reason, msg[0] ? "HTTP %d: %.200s" : "HTTP %d", resp->status, msg);
        return PACER_ERR_HTTP;
    }
    switch (cc) {
    case CURLE_OK:
        return PACER_OK;
    case CURLE_OPERATION_TIMEDOUT:
        snprintf(resp->reason, sizeof resp->reason, "timed out: %.200s", detail);
        return PACER_ERR_TIMEOUT;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        snprintf(resp->reason, sizeof resp->reason, "bad URL: %.200s", detail);
        return PACER_ERR_ARG;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
        snprintf(resp->reason, sizeof resp->reason, "cannot connect: %.200s", detail);
        return PACER_ERR_NET;
    default:
        snprintf(resp->reason, sizeof resp->reason, "%s: %.180s",
                 resp->status ? "connection broken mid-response" : "no response", detail);
        return PACER_ERR_NET;
    }
}

pacer_err http_perform(const http_request *req, http_response *resp) {
    pacer_err rc = PACER_OK;
    struct curl_slist *hdrs = NULL;
    CURLM *multi = NULL;
    http_xfer x = {.req = req, .resp = resp};
    rc = http_response_start(req, resp);
    if (rc) goto out;
    http_global_once();
    x.easy = curl_easy_init();
    multi = curl_multi_init();
    if (!x.easy || !multi) {
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    rc = http_setup(&x, &hdrs);
    if (rc) goto out;
    if (curl_multi_add_handle(multi, x.easy) != CURLM_OK) {
        rc = PACER_ERR_INTERNAL;
        goto out;
    }
    resp->start_ns = clock_now_ns();
    CURLcode cc = CURLE_OK;
    rc = http_loop(&x, multi, &cc);
    resp->end_ns = clock_now_ns();
    if (!rc) rc = http_classify(&x, cc);
    else if (!resp->status) {
        long code = 0;
        curl_easy_getinfo(x.easy, CURLINFO_RESPONSE_CODE, &code);
        resp->status = (int)code;
    }
    curl_multi_remove_handle(multi, x.easy);
out:
    if (!resp->end_ns) resp->end_ns = clock_now_ns();
    if (rc && !resp->reason[0]) snprintf(resp->reason, sizeof resp->reason, "%s", pacer_strerror(rc));
    if (multi) curl_multi_cleanup(multi);
    if (x.easy) curl_easy_cleanup(x.easy);
    curl_slist_free_all(hdrs);
    return rc;
}
