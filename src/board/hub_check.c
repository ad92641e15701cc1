/* hub_check.c - the public-checkpoint lookup over net/http: the model info at the revision,
 * then its config.json for the parameter counts. 401, 403 and 404 mean "not public"; no
 * answer, 429 and 5xx mean "ask again later". */
#include "board/hub_check.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "net/http.h"

#define HUB_ANSWER_MAX (4u << 20)

static pacer_err collect(void *ctx, const char *data, size_t n, int64_t t_ns) {
    (void)t_ns;
    return buf_append(ctx, data, n);
}

/* GET url into `body`; returns the status (0: no answer) and a reason for failures. */
static int hub_get(const char *url, int64_t timeout_ms, buf *body, char *reason, size_t reason_n) {
    const char *const headers[] = {"Accept: application/json", "User-Agent: pacer-board", NULL};
    http_request req = {.method = "GET", .url = url, .headers = headers, .connect_timeout_ms = timeout_ms,
                        .total_timeout_ms = timeout_ms, .on_data = collect, .ctx = body};
    http_response resp;
    http_response_init(&resp);
    pacer_err rc = http_perform(&req, &resp);
    int status = resp.status;
    if (rc) snprintf(reason, reason_n, "%s", resp.reason);
    if (rc && rc != PACER_ERR_HTTP) status = 0; /* cut short: no usable answer */
    http_response_free(&resp);
    return status;
}

/* endpoint + "/" + escaped path parts (a '/' inside `repo` kept) + suffix */
static char *hub_url(const char *endpoint, const char *prefix, const char *repo, const char *mid, const char *rev,
                     const char *suffix) {
    char *er = curl_easy_escape(NULL, rev, 0);
    const char *slash = strchr(repo, '/');
    char *org = slash ? curl_easy_escape(NULL, repo, (int)(slash - repo)) : NULL;
    char *name = slash ? curl_easy_escape(NULL, slash + 1, 0) : NULL;
    char *url = NULL;
    if (er && org && name) {
        size_t n = strlen(endpoint) + strlen(prefix) + strlen(org) + strlen(name) + strlen(mid) + strlen(er) + strlen(suffix) + 8;
        url = malloc(n);
        if (url) snprintf(url, n, "%s%s%s/%s%s%s%s", endpoint, prefix, org, name, mid, er, suffix);
    }
    curl_free(er);
    curl_free(org);
    curl_free(name);
    return url;
}

static void judge_info(const json_t *info, hub_check_result *out) {
    json_t *gated = json_object_get(info, "gated");
    if (json_is_true(json_object_get(info, "private"))) {
        out->outcome = HUB_NOT_PUBLIC;
        snprintf(out->reason, sizeof out->reason, "the checkpoint is private on the hub");
    } else if (json_is_true(gated) || (json_is_string(gated) && strcmp(json_string_value(gated), "false") != 0)) {
        out->outcome = HUB_NOT_PUBLIC;
        snprintf(out->reason, sizeof out->reason, "the checkpoint is gated on the hub (not readable by everyone)");
    } else if (json_is_true(json_object_get(info, "disabled"))) {
        out->outcome = HUB_NOT_PUBLIC;
        snprintf(out->reason, sizeof out->reason, "the checkpoint is disabled on the hub");
    }
    snprintf(out->commit, sizeof out->commit, "%s", json_get_str(info, "sha", ""));
}

pacer_err hub_check(const char *endpoint, const char *repo, const char *revision, int64_t timeout_ms,
                    hub_check_result *out) {
    memset(out, 0, sizeof *out);
    if (!endpoint || !repo || !strchr(repo, '/') || !revision || !revision[0]) return PACER_ERR_ARG;
    buf body;
    buf_init(&body, HUB_ANSWER_MAX);
    json_t *info = NULL, *config = NULL;
    char why[HTTP_REASON_MAX] = "";
    char *url = hub_url(endpoint, "/api/models/", repo, "/revision/", revision, "");
    int status = url ? hub_get(url, timeout_ms, &body, why, sizeof why) : 0;
    free(url);
    if (status == 200) info = json_loadb(body.data ? body.data : "", body.len, 0, NULL);
    if (status == 401 || status == 403 || status == 404 || (status >= 300 && status < 400)) {
        out->outcome = HUB_NOT_PUBLIC;
        snprintf(out->reason, sizeof out->reason, "the hub does not show %s at revision %s to everyone (HTTP %d)", repo,
                 revision, status);
        goto done;
    }
    if (!json_is_object(info)) {
        out->outcome = HUB_UNAVAILABLE;
        snprintf(out->reason, sizeof out->reason, "the hub did not answer: %.200s", status == 200 ? "not the hub's JSON" : why[0] ? why : "no answer");
        goto done;
    }
    judge_info(info, out);
    if (out->outcome != HUB_PUBLIC) goto done;
    buf_reset(&body);
    url = hub_url(endpoint, "/", repo, "/resolve/", out->commit[0] ? out->commit : revision, "/config.json");
    status = url ? hub_get(url, timeout_ms, &body, why, sizeof why) : 0;
    free(url);
    if (status == 0 || status == 429 || status >= 500) {
        out->outcome = HUB_UNAVAILABLE;
        snprintf(out->reason, sizeof out->reason, "the hub did not answer for config.json: %.200s", why[0] ? why : "no answer");
        goto done;
    }
    if (status == 200) config = json_loadb(body.data ? body.data : "", body.len, 0, NULL);
    out->params = params_from_hub(info, json_is_object(config) ? config : NULL);
done:
    json_decref(info);
    json_decref(config);
    buf_free(&body);
    return PACER_OK;
}
