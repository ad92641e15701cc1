/* board.c - the receiver's logic, under the HTTP routes: one intake for every upload
 * (judge, idempotency, quota, checkpoint lookup, store, answer), bearer tokens, and the
 * pending-checkpoint retry queue with its thread. */
#include "board/board.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "base/log.h"
#include "base/sha256.h"
#include "board/board_internal.h"
#include "board/hub_check.h"

#define BOARD_RETRY_MAX_S 3600

pacer_err board_new(const board_config *cfg, board **out) {
    *out = NULL;
    if (!cfg || !cfg->store) return PACER_ERR_ARG;
    board *b = calloc(1, sizeof *b);
    if (!b) return PACER_ERR_NOMEM;
    b->cfg = *cfg;
    if (!b->cfg.hub) b->cfg.hub = BOARD_DEFAULT_HUB;
    if (b->cfg.quota <= 0) b->cfg.quota = 20;
    if (b->cfg.quota_new <= 0) b->cfg.quota_new = 5;
    if (b->cfg.hub_retry_s <= 0) b->cfg.hub_retry_s = 30;
    if (b->cfg.hub_timeout_ms <= 0) b->cfg.hub_timeout_ms = 10000;
    if (b->cfg.checkpoint_ttl_s <= 0) b->cfg.checkpoint_ttl_s = 86400;
    b->metrics = metrics_new();
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    if (!b->metrics) {
        board_free(b);
        return PACER_ERR_NOMEM;
    }
    *out = b;
    return PACER_OK;
}

board_metrics *board_get_metrics(board *b) { return b->metrics; }
const board_config *board_get_config(const board *b) { return &b->cfg; }
struct board_site *board_get_site(const board *b) { return b->site; }

void board_result_url(const board *b, const char *id, char *out, size_t n) {
    snprintf(out, n, "%s/r/%s", b->cfg.public_url ? b->cfg.public_url : "", id);
}

/* ---- tokens ---- */

pacer_err board_token_create(board_store *st, const char *name, int64_t now_s, char token[BOARD_TOKEN_MAX],
                             store_profile *profile) {
    unsigned char r[24];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return PACER_ERR_IO;
    int n = snprintf(token, BOARD_TOKEN_MAX, "pbt_");
    for (size_t i = 0; i < sizeof r; i++) n += snprintf(token + n, BOARD_TOKEN_MAX - (size_t)n, "%02x", r[i]);
    char hash[65];
    pacer_err rc = sha256_hex(token, strlen(token), hash);
    if (!rc) rc = store_profile_create(st, name, "token", now_s, profile);
    if (!rc) rc = store_token_create(st, name, hash, profile->id, now_s);
    if (rc) memset(token, 0, BOARD_TOKEN_MAX);
    return rc;
}

pacer_err board_auth(board *b, const char *authorization, board_identity *out) {
    memset(out, 0, sizeof *out);
    if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0) return PACER_ERR_NOT_FOUND;
    const char *tok = authorization + 7;
    while (*tok == ' ') tok++;
    size_t n = strlen(tok);
    if (n == 0 || n >= BOARD_TOKEN_MAX) return PACER_ERR_NOT_FOUND;
    char hash[65];
    pacer_err rc = sha256_hex(tok, n, hash);
    if (!rc) rc = store_token_find(b->cfg.store, hash, &out->profile, out->token_name);
    /* a browser profile's cookie is scoped to the website's forms: it is no upload token */
    if (!rc && strcmp(out->profile.kind, "browser") == 0) rc = PACER_ERR_NOT_FOUND;
    return rc;
}

/* ---- answers ---- */

json_t *board_submission_json(const board *b, const store_submission *s, bool with_receipt) {
    json_t *reasons = json_loads(s->reasons[0] ? s->reasons : "[]", 0, NULL);
    json_t *o = json_pack("{s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s,s:I}", "id", s->id, "state", board_state_name(s->state),
                          "reasons", json_is_array(reasons) ? reasons : json_array(), "profile", s->profile_id,
                          "suite", s->suite_id, "suite_digest", s->suite_digest, "model", s->model_id, "revision",
                          s->revision, "created_s", (json_int_t)s->created_s);
    if (!json_is_array(reasons)) json_decref(reasons);
    if (!o) return NULL;
    json_object_set_new(o, "params_total", s->has_params_total ? json_integer(s->params_total) : json_null());
    json_object_set_new(o, "params_active", s->has_params_active ? json_integer(s->params_active) : json_null());
    if (s->state == BOARD_STATE_PUBLIC) {
        char url[512];
        board_result_url(b, s->id, url, sizeof url);
        json_object_set_new(o, "url", json_string(url));
    }
    if (with_receipt && s->receipt) {
        json_t *r = json_loads(s->receipt, 0, NULL);
        if (r) json_object_set_new(o, "receipt", r);
    }
    return o;
}

static json_t *error_answer(const char *type, const char *message, json_t *reasons) {
    return json_pack("{s:{s:s,s:s},s:o}", "error", "message", message, "type", type, "reasons",
                     reasons ? json_incref(reasons) : json_array());
}

/* ---- the checkpoint lookup ---- */

/* Looks the checkpoint up (the store's cache of public answers first) and counts it. */
static void board_lookup(board *b, const char *model, const char *revision, int64_t now_s, hub_check_result *out) {
    store_checkpoint ck;
    if (store_checkpoint_get(b->cfg.store, model, revision, &ck) == PACER_OK && now_s - ck.checked_s < b->cfg.checkpoint_ttl_s) {
        memset(out, 0, sizeof *out);
        out->outcome = HUB_PUBLIC;
        out->params = (param_counts){ck.has_params_total, ck.has_params_active, ck.params_total, ck.params_active};
        return;
    }
    hub_check(b->cfg.hub, model, revision, b->cfg.hub_timeout_ms, out);
    static const char *const names[] = {"public", "not_public", "unavailable"};
    metrics_count(b->metrics, METRIC_LOOKUPS, names[out->outcome]);
    if (out->outcome == HUB_PUBLIC) {
        store_checkpoint put = {out->params.has_total, out->params.has_active, out->params.total, out->params.active, now_s};
        (void)store_checkpoint_put(b->cfg.store, model, revision, &put);
    }
}

static int64_t retry_delay(const board *b, int attempts) {
    int64_t d = b->cfg.hub_retry_s;
    for (int i = 1; i < attempts && d < BOARD_RETRY_MAX_S; i++) d *= 2;
    return d < BOARD_RETRY_MAX_S ? d : BOARD_RETRY_MAX_S;
}

static void reasons_set(store_submission *s, const json_t *reasons) {
    char *t = json_dumps(reasons, JSON_COMPACT);
    snprintf(s->reasons, sizeof s->reasons, "%s", t && strlen(t) < sizeof s->reasons ? t : "[\"(reasons too long to keep)\"]");
    free(t);
}

/* Applies a lookup to a submission that would otherwise be public or pending-review. */
static void apply_lookup(board *b, store_submission *s, bool standard, const hub_check_result *h, json_t *reasons,
                         int64_t now_s) {
    s->has_params_total = h->params.has_total;
    s->params_total = h->params.total;
    s->has_params_active = h->params.has_active;
    s->params_active = h->params.active;
    s->next_lookup_s = 0;
    if (h->outcome == HUB_NOT_PUBLIC) json_array_append_new(reasons, json_string(h->reason));
    if (!standard || h->outcome == HUB_NOT_PUBLIC) {
        s->state = BOARD_STATE_PENDING_REVIEW;
    } else if (h->outcome == HUB_UNAVAILABLE) {
        s->state = BOARD_STATE_PENDING_CHECKPOINT;
        s->next_lookup_s = now_s + retry_delay(b, s->lookup_attempts);
    } else {
        s->state = BOARD_STATE_PUBLIC;
    }
    reasons_set(s, reasons);
}

size_t board_lookup_pass(board *b, int64_t now_s) {
    store_submission_list due;
    if (store_lookup_due(b->cfg.store, now_s, 16, &due)) return 0;
    for (size_t i = 0; i < due.n; i++) {
        store_submission *s = &due.items[i];
        hub_check_result h;
        board_lookup(b, s->model_id, s->revision, now_s, &h);
        s->lookup_attempts++;
        json_t *reasons = json_array();
        apply_lookup(b, s, true, &h, reasons, now_s);
        json_decref(reasons);
        if (h.outcome == HUB_UNAVAILABLE) metrics_count(b->metrics, METRIC_LOOKUP_RETRIES, NULL);
        pacer_err rc = store_lookup_record(b->cfg.store, s, now_s);
        if (!rc) log_info("board: %s is %s after checkpoint lookup %d", s->id, board_state_name(s->state), s->lookup_attempts);
        if (!rc) site_invalidate(b->site);
    }
    size_t n = due.n;
    store_submission_list_free(&due);
    return n;
}

void *board_lookup_thread(void *arg) {
    board *b = arg;
    pthread_mutex_lock(&b->mu);
    while (!b->stopping) {
        pthread_mutex_unlock(&b->mu);
        while (board_lookup_pass(b, (int64_t)time(NULL)) > 0) {
            pthread_mutex_lock(&b->mu);
            bool stop = b->stopping;
            pthread_mutex_unlock(&b->mu);
            if (stop) break;
        }
        pthread_mutex_lock(&b->mu);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 500000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        if (!b->stopping) pthread_cond_timedwait(&b->cv, &b->mu, &ts);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* ---- the intake ---- */

static int quota_for(const board *b, const board_identity *who, int64_t now_s) {
    bool young_browser = strcmp(who->profile.kind, "browser") == 0 && now_s - who->profile.created_s < 86400;
    return young_browser ? b->cfg.quota_new : b->cfg.quota;
}

static int answer_existing(board *b, const store_submission *s, int used, int quota, json_t **answer) {
    metrics_count(b->metrics, METRIC_UPLOADS, "duplicate");
    *answer = board_submission_json(b, s, false);
    json_object_set_new(*answer, "duplicate", json_true());
    json_object_set_new(*answer, "uploads_today", json_integer(used));
    json_object_set_new(*answer, "quota", json_integer(quota));
    return 200;
}

static int answer_quota(board *b, int quota, json_t **answer) {
    metrics_count(b->metrics, METRIC_UPLOADS, "quota");
    char msg[160];
    snprintf(msg, sizeof msg, "upload quota reached: %d receipts per day for this profile; try again tomorrow", quota);
    *answer = error_answer("quota_exceeded", msg, NULL);
    return 429;
}

static int answer_conflict(board *b, json_t **answer) {
    metrics_count(b->metrics, METRIC_UPLOADS, "conflict");
    *answer = error_answer("conflict", "this receipt was already submitted by another contributor", NULL);
    return 409;
}

static int answer_rejected(board *b, const intake_verdict *v, json_t **answer) {
    metrics_count(b->metrics, METRIC_UPLOADS, "rejected");
    for (size_t i = 0; i < v->n_codes; i++) metrics_count(b->metrics, METRIC_VALIDATION_FAILURES, v->codes[i]);
    char line[1024];
    intake_reasons_line(v->reasons, line, sizeof line);
    char msg[1100];
    snprintf(msg, sizeof msg, "receipt rejected: %.300s", line);
    *answer = error_answer("invalid_receipt", msg, v->reasons);
    json_object_set_new(*answer, "state", json_string(board_state_name(BOARD_STATE_REJECTED)));
    return v->http_status ? v->http_status : 422;
}

static int store_failed(board *b, json_t **answer) {
    metrics_count(b->metrics, METRIC_UPLOADS, "error");
    *answer = error_answer("store_error", "the board could not store the receipt; nothing was saved, try again", NULL);
    return 503;
}

int board_submit(board *b, const board_identity *who, const char *body, size_t len, int64_t now_s, json_t **answer) {
    intake_verdict v;
    int status;
    store_submission old;
    if (intake_judge(&b->cfg.intake, body, len, &v)) {
        intake_verdict_free(&v);
        return store_failed(b, answer);
    }
    if (v.outcome == INTAKE_REJECTED) {
        status = answer_rejected(b, &v, answer);
        goto out;
    }
    int quota = quota_for(b, who, now_s), used = 0;
    pacer_err rc = store_quota_used(b->cfg.store, who->profile.id, now_s - 86400, &used);
    /* a retry is answered before the lookup: it costs neither the hub nor the quota */
    if (!rc && store_submission_by_hash(b->cfg.store, v.canonical_hash, &old) == PACER_OK) {
        status = strcmp(old.profile_id, who->profile.id) == 0 ? answer_existing(b, &old, used, quota, answer)
                                                              : answer_conflict(b, answer);
        goto out;
    }
    if (rc) { status = store_failed(b, answer); goto out; }
    if (used >= quota) { status = answer_quota(b, quota, answer); goto out; }
    store_submission *s = &v.facts;
    hub_check_result h;
    board_lookup(b, s->model_id, s->revision, now_s, &h);
    s->lookup_attempts = 1;
    apply_lookup(b, s, v.outcome == INTAKE_STANDARD, &h, v.reasons, now_s);
    snprintf(s->profile_id, sizeof s->profile_id, "%s", who->profile.id);
    snprintf(s->token_name, sizeof s->token_name, "%s", who->token_name);
    snprintf(s->canonical_hash, sizeof s->canonical_hash, "%s", v.canonical_hash);
    s->receipt = v.canonical;
    v.canonical = NULL; /* the facts own it now; intake_verdict_free frees it with them */
    store_insert_result res;
    rc = store_submission_insert(b->cfg.store, s, quota, now_s, &res);
    if (rc) status = store_failed(b, answer);
    else if (res == STORE_QUOTA) status = answer_quota(b, quota, answer);
    else if (res == STORE_CONFLICT) status = answer_conflict(b, answer);
    else if (res == STORE_EXISTING) status = answer_existing(b, s, used, quota, answer);
    else {
        metrics_count(b->metrics, METRIC_UPLOADS, board_state_name(s->state));
        *answer = board_submission_json(b, s, false);
        json_object_set_new(*answer, "duplicate", json_false());
        json_object_set_new(*answer, "uploads_today", json_integer(used + 1));
        json_object_set_new(*answer, "quota", json_integer(quota));
        log_info("board: %s from %s is %s", s->id, who->profile.id, board_state_name(s->state));
        site_invalidate(b->site);
        status = 201;
    }
out:
    intake_verdict_free(&v);
    return *answer ? status : 500;
}
