/* board_http.c - the receiver's HTTP routes over server/http (one table), with each
 * request's latency counted per route: capabilities, uploads, a submission's state,
 * withdrawal by its contributor, the token check, Prometheus metrics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/clock.h"
#include "bench/suite.h"
#include "board/board_internal.h"

#define RECEIPTS_PREFIX "/api/v1/receipts/"

static pacer_err answer_error(http_req *r, int status, const char *type, const char *message) {
    return http_respond_json(r, status, json_pack("{s:{s:s,s:s}}", "error", "message", message, "type", type));
}

static pacer_err unauthorized(http_req *r) {
    pacer_err rc = http_req_add_header(r, "WWW-Authenticate", "Bearer");
    if (rc) return rc;
    return answer_error(r, 401, "unauthorized",
                        "a valid upload token is needed: 'pacer bench login' stores one, or set PACER_BENCHMARK_TOKEN");
}

static json_t *capabilities_json(const board *b) {
    const intake_config *ic = &b->cfg.intake;
    json_t *suites = json_array(), *rules = json_array(), *backends = json_array();
    for (int i = 0; suite_builtin_ids[i]; i++) {
        const char *id = suite_builtin_ids[i];
        bool on = (strcmp(id, "community-v1") == 0 && ic->accept_v1) || (strcmp(id, "community-v2") == 0 && ic->accept_v2);
        suite s;
        char err[128];
        if (!on || suite_load(id, &s, err, sizeof err)) continue;
        json_array_append_new(suites, json_pack("{s:s,s:s,s:i,s:i}", "id", s.id, "digest", s.digest, "version",
                                                s.version, "rule_version", s.rule_version));
        json_array_append_new(rules, json_integer(s.rule_version));
        suite_free(&s);
    }
    for (size_t i = 0; i < ic->n_backends; i++) json_array_append_new(backends, json_string(ic->backends[i]));
    return json_pack("{s:i,s:o,s:o,s:o,s:b,s:I,s:i,s:s}", "api_version", 1, "suites", suites, "rule_versions", rules,
                     "backends", backends, "separate_rankings", 1, "max_receipt_bytes", (json_int_t)INTAKE_MAX_BYTES,
                     "quota_per_day", b->cfg.quota, "hub", b->cfg.hub);
}

static pacer_err h_capabilities(board *b, http_req *r) { return http_respond_json(r, 200, capabilities_json(b)); }

static pacer_err h_upload(board *b, http_req *r) {
    board_identity who;
    if (board_auth(b, http_req_header(r, "Authorization"), &who)) {
        metrics_count(b->metrics, METRIC_UPLOADS, "unauthorized");
        return unauthorized(r);
    }
    size_t len;
    const char *body = http_req_body(r, &len);
    json_t *answer = NULL;
    int status = board_submit(b, &who, body, len, (int64_t)time(NULL), &answer);
    if (!answer) return answer_error(r, 500, "internal_error", "no answer");
    if (status == 429) {
        pacer_err rc = http_req_add_header(r, "Retry-After", "3600");
        if (rc) { json_decref(answer); return rc; }
    }
    return http_respond_json(r, status, answer);
}

/* GET /api/v1/receipts/ID (public ones to anyone, others to their contributor) and
 * POST /api/v1/receipts/ID/withdraw (the contributor's own). */
static pacer_err h_receipt(board *b, http_req *r) {
    const char *rest = http_req_path(r) + strlen(RECEIPTS_PREFIX);
    char id[STORE_ID_MAX];
    size_t n = strcspn(rest, "/");
    bool withdraw = strcmp(rest + n, "/withdraw") == 0;
    if (n == 0 || n >= sizeof id || (rest[n] && !withdraw)) return answer_error(r, 404, "not_found", "no such route");
    snprintf(id, sizeof id, "%.*s", (int)n, rest);
    const char *method = http_req_method(r);
    board_identity who;
    bool authed = board_auth(b, http_req_header(r, "Authorization"), &who) == PACER_OK;
    if (withdraw) {
        if (strcmp(method, "POST") != 0) return answer_error(r, 405, "method_not_allowed", "POST to withdraw");
        if (!authed) return unauthorized(r);
        unsigned from = 1u << BOARD_STATE_PUBLIC | 1u << BOARD_STATE_PENDING_CHECKPOINT | 1u << BOARD_STATE_PENDING_REVIEW;
        pacer_err rc = store_submission_set_state(b->cfg.store, id, from, BOARD_STATE_WITHDRAWN, who.profile.id, NULL,
                                                  (int64_t)time(NULL));
        if (rc == PACER_ERR_NOT_FOUND) return answer_error(r, 404, "not_found", "no such submission of yours");
        if (rc == PACER_ERR_STATE) return answer_error(r, 409, "conflict", "the submission cannot be withdrawn in its state");
        if (rc) return answer_error(r, 503, "store_error", "the board could not change the submission");
        site_invalidate(b->site);
    } else if (strcmp(method, "GET") != 0) {
        return answer_error(r, 405, "method_not_allowed", "GET a submission");
    }
    store_submission s;
    pacer_err rc = store_submission_get(b->cfg.store, id, true, &s);
    bool visible = !rc && (s.state == BOARD_STATE_PUBLIC || (authed && strcmp(s.profile_id, who.profile.id) == 0));
    pacer_err out = visible ? http_respond_json(r, 200, board_submission_json(b, &s, true))
                            : answer_error(r, 404, "not_found", "no such submission");
    store_submission_clear(&s);
    return out;
}

static pacer_err h_whoami(board *b, http_req *r) {
    board_identity who;
    if (board_auth(b, http_req_header(r, "Authorization"), &who)) return unauthorized(r);
    return http_respond_json(r, 200, json_pack("{s:s,s:s,s:s}", "profile", who.profile.id, "display_name",
                                                who.profile.display_name, "token", who.token_name));
}

static pacer_err h_metrics(board *b, http_req *r) {
    buf out;
    buf_init(&out, 1u << 20);
    pacer_err rc = metrics_render(b->metrics, &out);
    char *text = rc ? NULL : buf_detach(&out);
    buf_free(&out);
    if (!text) return answer_error(r, 500, "internal_error", "metrics");
    return http_respond_take(r, 200, "text/plain; version=0.0.4", text, strlen(text));
}

static pacer_err h_not_found(void *ctx, http_req *r) {
    if (site_path_is_page(http_req_path(r))) return site_not_found(ctx, r);
    return answer_error(r, 404, "not_found", "no such route");
}

static pacer_err h_too_large(void *ctx, http_req *r) {
    board *b = ctx;
    metrics_count(b->metrics, METRIC_UPLOADS, "rejected");
    metrics_count(b->metrics, METRIC_VALIDATION_FAILURES, "limits");
    if (site_path_is_page(http_req_path(r))) return site_too_large(b, r);
    return answer_error(r, 413, "too_large", "the request body is larger than the board accepts");
}

/* Each route is timed under its name. */
#define TIMED(fn, label)                                                                                            \
    static pacer_err t_##fn(void *ctx, http_req *r) {                                                               \
        int64_t t0 = clock_now_ns();                                                                                \
        pacer_err rc = fn((board *)ctx, r);                                                                         \
        metrics_observe(((board *)ctx)->metrics, label, (double)(clock_now_ns() - t0) / 1e9);                      \
        return rc;                                                                                                  \
    }
TIMED(h_capabilities, "capabilities")
TIMED(h_upload, "upload")
TIMED(h_receipt, "receipt")
TIMED(h_whoami, "whoami")
TIMED(h_metrics, "metrics")

static const http_route board_routes[] = {
    {"GET", "/api/v1/capabilities", HTTP_MATCH_EXACT, t_h_capabilities},
    {"POST", "/api/v1/receipts", HTTP_MATCH_EXACT, t_h_upload},
    {NULL, RECEIPTS_PREFIX, HTTP_MATCH_PREFIX, t_h_receipt},
    {"GET", "/api/v1/whoami", HTTP_MATCH_EXACT, t_h_whoami},
    {"GET", "/metrics", HTTP_MATCH_EXACT, t_h_metrics},
};

/* Room past the largest receipt for the website's upload form around it. */
#define FORM_OVERHEAD (64u << 10)

pacer_err board_listen(board *b, const char *host, int port, int threads, char *err, size_t err_len) {
    size_t n_api = sizeof board_routes / sizeof board_routes[0];
    pacer_err rc = site_new(b, NULL, &b->site);
    if (!rc && !(b->routes = malloc((site_route_count + n_api) * sizeof *b->routes))) rc = PACER_ERR_NOMEM;
    if (rc) {
        snprintf(err, err_len, "cannot set up the website: %s", pacer_strerror(rc));
        return rc;
    }
    memcpy(b->routes, site_routes, site_route_count * sizeof *b->routes);
    memcpy(b->routes + site_route_count, board_routes, sizeof board_routes);
    http_options o = {
        .host = host,
        .port = port,
        .max_body = INTAKE_MAX_BYTES + FORM_OVERHEAD,
        .timeout_s = 60,
        .threads = threads > 0 ? threads : 4,
        .access_log = true,
        .routes = b->routes,
        .n_routes = site_route_count + n_api,
        .not_found = h_not_found,
        .too_large = h_too_large,
        .ctx = b,
    };
    rc = http_server_start(&o, &b->srv, err, err_len);
    if (rc) return rc;
    if (pthread_create(&b->lookup, NULL, board_lookup_thread, b) != 0) {
        snprintf(err, err_len, "cannot start the lookup thread");
        return PACER_ERR_INTERNAL;
    }
    b->lookup_started = true;
    return PACER_OK;
}

int board_port(const board *b) { return b->srv ? http_server_port(b->srv) : 0; }

void board_free(board *b) {
    if (!b) return;
    http_server_stop(b->srv);
    if (b->lookup_started) {
        pthread_mutex_lock(&b->mu);
        b->stopping = true;
        pthread_cond_signal(&b->cv);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->lookup, NULL);
    }
    site_free(b->site);
    free(b->routes);
    metrics_free(b->metrics);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b);
}
