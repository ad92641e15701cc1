/* publish.c - board URLs, capabilities, the pre-upload refusals and notes, and the upload
 * over net/http (which follows no redirect and uses no proxy). The token travels only in
 * the Authorization header of a request to the URL it was given for. */
#include "bench/publish.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/json.h"
#include "bench/sanitize.h"
#include "bench/suite.h"
#include "net/http.h"

#define PUBLISH_ANSWER_MAX (1u << 20)
#define PUBLISH_TIMEOUT_MS 60000

static bool host_is_loopback(const char *host) {
    struct in_addr a4;
    struct in6_addr a6;
    if (strcasecmp(host, "localhost") == 0) return true;
    if (inet_pton(AF_INET, host, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}

pacer_err publish_url_check(const char *url, char norm[PUBLISH_URL_MAX], char *err, size_t err_len) {
    bool https = strncasecmp(url, "https://", 8) == 0, http = strncasecmp(url, "http://", 7) == 0;
    if (!https && !http) {
        snprintf(err, err_len, "the board URL must start with https:// (or http:// to this machine)");
        return PACER_ERR_ARG;
    }
    const char *auth = url + (https ? 8 : 7);
    size_t alen = strcspn(auth, "/?#");
    if (strlen(url) >= PUBLISH_URL_MAX || alen == 0 || strpbrk(url, "?# \t\r\n") ||
        memchr(auth, '@', alen)) {
        snprintf(err, err_len, "the board URL must be scheme://host[:port][/path], with no user, query or fragment");
        return PACER_ERR_ARG;
    }
    char host[256];
    if (auth[0] == '[') {
        size_t n = strcspn(auth + 1, "]");
        snprintf(host, sizeof host, "%.*s", (int)(n < sizeof host ? n : 0), auth + 1);
    } else {
        size_t n = strcspn(auth, ":/");
        snprintf(host, sizeof host, "%.*s", (int)(n < sizeof host ? n : 0), auth);
    }
    if (http && !host_is_loopback(host)) {
        snprintf(err, err_len, "plain http:// is only for a board on this machine (127.0.0.1, ::1, localhost); use https://");
        return PACER_ERR_ARG;
    }
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/') n--;
    snprintf(norm, PUBLISH_URL_MAX, "%.*s", (int)n, url);
    return PACER_OK;
}

static pacer_err collect(void *ctx, const char *data, size_t n, int64_t t_ns) {
    (void)t_ns;
    return buf_append(ctx, data, n);
}

/* One request to the board: the answer's status and parsed JSON body (2xx or not). */
static pacer_err board_request(const char *method, const char *url, const char *token, const char *body, size_t len,
                               int *status, json_t **answer, char *err, size_t err_len) {
    *status = 0;
    *answer = NULL;
    char auth[320] = "";
    if (token) snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    const char *headers[] = {"Accept: application/json", "Content-Type: application/json", token ? auth : NULL, NULL};
    buf ok;
    buf_init(&ok, PUBLISH_ANSWER_MAX);
    http_request req = {.method = method, .url = url, .body = body, .body_len = len, .headers = headers,
                        .connect_timeout_ms = 15000, .total_timeout_ms = PUBLISH_TIMEOUT_MS, .on_data = collect,
                        .ctx = &ok};
    http_response resp;
    http_response_init(&resp);
    pacer_err rc = http_perform(&req, &resp);
    memset(auth, 0, sizeof auth);
    *status = resp.status;
    const buf *b = rc == PACER_OK ? &ok : &resp.error_body;
    if (rc == PACER_OK || rc == PACER_ERR_HTTP) {
        *answer = json_loadb(b->data ? b->data : "", b->len, 0, NULL);
        rc = PACER_OK;
        if (resp.status >= 300 && resp.status < 400)
            snprintf(err, err_len, "the board answered with a redirect (HTTP %d), which is never followed", resp.status);
        else if (!json_is_object(*answer))
            snprintf(err, err_len, "the board's answer (HTTP %d) is not JSON", resp.status);
    } else {
        snprintf(err, err_len, "%s", resp.reason);
    }
    if (*answer && !json_is_object(*answer)) { json_decref(*answer); *answer = NULL; }
    http_response_free(&resp);
    buf_free(&ok);
    return rc;
}

pacer_err publish_get_caps(const char *url, json_t **caps, char *err, size_t err_len) {
    char full[PUBLISH_URL_MAX + 64];
    snprintf(full, sizeof full, "%s/api/v1/capabilities", url);
    int status;
    pacer_err rc = board_request("GET", full, NULL, NULL, 0, &status, caps, err, err_len);
    if (rc) return rc;
    if (status != 200 || !json_is_array(json_object_get(*caps, "suites"))) {
        if (status == 200 || !err[0] || status >= 400)
            snprintf(err, err_len, "%s/api/v1/capabilities did not answer as a board (HTTP %d)", url, status);
        json_decref(*caps);
        *caps = NULL;
        return PACER_ERR_FORMAT;
    }
    return PACER_OK;
}

bool publish_caps_suite(const json_t *caps, const char *id, const char *digest) {
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(caps, "suites"), i, s)
        if (strcmp(json_get_str(s, "id", ""), id) == 0 && strcmp(json_get_str(s, "digest", ""), digest) == 0) return true;
    return false;
}

bool publish_caps_backend(const json_t *caps, const char *backend) {
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(caps, "backends"), i, b)
        if (json_is_string(b) && strcmp(json_string_value(b), backend) == 0) return true;
    return false;
}

bool publish_caps_separate(const json_t *caps) { return json_is_true(json_object_get(caps, "separate_rankings")); }

/* The board's privacy check, run before anything leaves the machine (a receipt written
 * before pacer sanitized server text may still hold it); the context holds the prompts of
 * the receipt's suite when it is a built-in one. */
static pacer_err publish_check_private(const json_t *receipt, char *err, size_t err_len) {
    suite s;
    char lerr[160], why[320];
    sanitize_context *c = sanitize_context_new();
    if (!c) return PACER_ERR_NOMEM;
    if (suite_load(json_get_str(json_object_get(receipt, "suite"), "id", ""), &s, lerr, sizeof lerr) == PACER_OK) {
        if (s.builtin) (void)sanitize_context_add_suite(c, &s);
        suite_free(&s);
    }
    pacer_err rc = sanitize_check_receipt(receipt, c, why, sizeof why);
    if (rc) snprintf(err, err_len, "this receipt holds what a server said about its host or prompt (%s): it cannot be published", why);
    sanitize_context_free(c);
    return rc;
}

pacer_err publish_check_receipt(const json_t *receipt, const json_t *caps, char *err, size_t err_len) {
    const json_t *model = json_object_get(receipt, "model"), *jsuite = json_object_get(receipt, "suite");
    const char *id = json_get_str(jsuite, "id", ""), *digest = json_get_str(jsuite, "digest", "");
    const char *backend = json_get_str(json_object_get(receipt, "backend"), "name", "unknown");
    if (!json_get_bool(model, "publishable", false)) {
        snprintf(err, err_len, "a local model cannot be published: pull the public checkpoint (pacer pull ORG/NAME) and "
                             "benchmark it by its repo id");
        return PACER_ERR_UNSUPPORTED;
    }
    pacer_err rc = publish_check_private(receipt, err, err_len);
    if (rc) return rc;
    if (caps && json_get_int(jsuite, "rule_version", 0) >= 2 && !publish_caps_separate(caps)) {
        snprintf(err, err_len, "this board does not rank v1 and v2 receipts apart, so it cannot take a %s receipt", id);
        return PACER_ERR_UNSUPPORTED;
    }
    if (caps && !publish_caps_suite(caps, id, digest)) {
        snprintf(err, err_len, "this board does not take %s receipts (digest %.12s...)", id, digest);
        return PACER_ERR_UNSUPPORTED;
    }
    if (caps && strcmp(backend, "unknown") != 0 && !publish_caps_backend(caps, backend)) {
        snprintf(err, err_len, "this board does not take %s receipts%s", backend,
                 strcmp(backend, "rocm") == 0 ? " (ROCm is accepted only where a board lists it)" : "");
        return PACER_ERR_UNSUPPORTED;
    }
    return PACER_OK;
}

void publish_notes(const json_t *receipt, json_t *notes) {
    if (strcmp(json_get_str(receipt, "mode", ""), "managed") != 0) return;
    const json_t *model = json_object_get(receipt, "model");
    const char *backend = json_get_str(json_object_get(receipt, "backend"), "name", "unknown");
    if (strcmp(backend, "cpu") != 0 && json_array_size(json_get_path(receipt, "hardware.gpus")) == 0)
        json_array_append_new(notes, json_string("the receipt names no GPU: it will wait for review"));
    const char *rev = json_get_str(model, "revision", "unknown");
    if (!rev[0] || strcmp(rev, "unknown") == 0)
        json_array_append_new(notes, json_string("the receipt names no checkpoint revision: it will wait for review"));
    if (json_array_size(json_object_get(model, "checkpoint_hashes")) == 0)
        json_array_append_new(notes, json_string("the receipt has no checkpoint digest: it will wait for review"));
}

pacer_err publish_upload(const char *url, const char *token, const json_t *receipt, int *status, json_t **answer,
                         char *err, size_t err_len) {
    char full[PUBLISH_URL_MAX + 64];
    snprintf(full, sizeof full, "%s/api/v1/receipts", url);
    char *body = json_canonical_dump(receipt);
    if (!body) return PACER_ERR_NOMEM;
    pacer_err rc = board_request("POST", full, token, body, strlen(body), status, answer, err, err_len);
    free(body);
    return rc;
}

pacer_err publish_whoami(const char *url, const char *token, int *status, json_t **answer, char *err, size_t err_len) {
    char full[PUBLISH_URL_MAX + 64];
    snprintf(full, sizeof full, "%s/api/v1/whoami", url);
    return board_request("GET", full, token, NULL, 0, status, answer, err, err_len);
}
