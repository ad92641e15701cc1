/* intake.c - judges one uploaded receipt: limits and strict JSON first (cheap, before any
 * tree is built), then bench/'s validator (schema, suite digest, the rules of the receipt's
 * own version, every aggregate recomputed), then the board's own checks (backend, public
 * checkpoint id, privacy), then whether the run is a complete standard one. Every reason
 * found is listed; a receipt is never relabelled or repaired. */
#include "board/intake.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/sha256.h"
#include "bench/receipt.h"
#include "bench/sanitize.h"
#include "bench/suite.h"

void intake_config_default(intake_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->accept_v1 = cfg->accept_v2 = true;
    static const char *const defaults[] = {"cuda", "mlx", "cpu"};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) cfg->backends[cfg->n_backends++] = defaults[i];
}

bool intake_parse_accept(intake_config *cfg, const char *list) {
    bool v1 = false, v2 = false;
    const char *p = list;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        if (n == 2 && strncmp(p, "v1", 2) == 0) v1 = true;
        else if (n == 2 && strncmp(p, "v2", 2) == 0) v2 = true;
        else return false;
        p += n + (p[n] == ',');
    }
    if (!v1 && !v2) return false;
    cfg->accept_v1 = v1;
    cfg->accept_v2 = v2;
    return true;
}

bool intake_parse_backends(intake_config *cfg, char *list) {
    cfg->n_backends = 0;
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (cfg->n_backends == INTAKE_MAX_BACKENDS || !t[0]) return false;
        cfg->backends[cfg->n_backends++] = t;
    }
    return cfg->n_backends > 0;
}

bool intake_backend_accepted(const intake_config *cfg, const char *name) {
    for (size_t i = 0; i < cfg->n_backends; i++)
        if (strcmp(cfg->backends[i], name) == 0) return true;
    return false;
}

/* ---- reasons ---- */

static void add_reason(intake_verdict *v, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_reason(intake_verdict *v, const char *code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_array_append_new(v->reasons, json_string(msg));
    if (code && v->n_codes < sizeof v->codes / sizeof v->codes[0]) v->codes[v->n_codes++] = code;
}

void intake_reasons_line(const json_t *reasons, char *out, size_t n) {
    size_t o = 0;
    out[0] = '\0';
    size_t i;
    json_t *r;
    json_array_foreach(reasons, i, r) {
        int w = snprintf(out + o, n - o, "%s%s", i ? "; " : "", json_string_value(r));
        if (w < 0 || (size_t)w >= n - o) break;
        o += (size_t)w;
    }
}

/* The check a validator message names ("digest check failed: ..." -> "digest"). */
static const char *validator_code(const char *msg) {
    static const char *const codes[] = {"field", "privacy", "schema", "suite", "digest", "settings", "cell",
                                        "attempt", "route", "seed", "measurement", "rules", "aggregate", "exit", "rank"};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        size_t n = strlen(codes[i]);
        if (strncmp(msg, codes[i], n) == 0 && strncmp(msg + n, " check", 6) == 0) return codes[i];
    }
    return "receipt";
}

/* ---- limits, before parsing ---- */

/* Nesting depth of JSON text, strings skipped; stops counting past `max`. */
static int text_depth(const char *s, size_t n, int max) {
    int depth = 0, deepest = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == '"') in_str = true;
        else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
            if (deepest > max) return deepest;
        } else if (c == ']' || c == '}') depth--;
    }
    return deepest;
}

/* Walks the tree: string lengths and the number of values. False (with a reason) past a limit. */
static bool tree_limits(const json_t *j, size_t *nodes, intake_verdict *v) {
    if (++*nodes > INTAKE_MAX_NODES) {
        add_reason(v, "limits", "the receipt has more than %d values", INTAKE_MAX_NODES);
        return false;
    }
    if (json_is_string(j) && json_string_length(j) > INTAKE_MAX_STRING) {
        add_reason(v, "limits", "a string is longer than %d bytes", INTAKE_MAX_STRING);
        return false;
    }
    if (json_is_object(j)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)j, k, x) {
            if (strlen(k) > 64) {
                add_reason(v, "limits", "a key is longer than 64 bytes");
                return false;
            }
            if (!tree_limits(x, nodes, v)) return false;
        }
    } else if (json_is_array(j)) {
        size_t i;
        json_t *x;
        json_array_foreach(j, i, x) if (!tree_limits(x, nodes, v)) return false;
    }
    return true;
}

/* ---- facts and completeness ---- */

static void copy_str(char *dst, size_t n, const json_t *obj, const char *key) {
    snprintf(dst, n, "%s", json_get_str(obj, key, ""));
}

/* A Hugging Face repo id: ORG/NAME of letters, digits, '-', '_', '.'; no "..", no leading '.'. */
static bool repo_id_ok(const char *id) {
    const char *slash = strchr(id, '/');
    if (!slash || slash == id || !slash[1] || strchr(slash + 1, '/') || strlen(id) > 96 || strstr(id, "..")) return false;
    for (const char *p = id; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-_./", *p)) return false;
    return id[0] != '.' && slash[1] != '.';
}

static bool cell_median(const json_t *cell, const char *metric, double *out) {
    json_t *m = json_object_get(json_object_get(cell, "aggregates"), metric);
    json_t *med = json_object_get(m, "median");
    if (!json_is_number(med)) return false;
    *out = json_number_value(med);
    return isfinite(*out);
}

static void facts_fill(const json_t *r, store_submission *f) {
    const json_t *s = json_object_get(r, "suite"), *m = json_object_get(r, "model"), *hw = json_object_get(r, "hardware");
    copy_str(f->suite_id, sizeof f->suite_id, s, "id");
    copy_str(f->suite_digest, sizeof f->suite_digest, s, "digest");
    f->suite_version = (int)json_get_int(s, "version", 0);
    f->rule_version = (int)json_get_int(s, "rule_version", 0);
    f->standard = json_get_bool(s, "standard", false);
    copy_str(f->mode, sizeof f->mode, r, "mode");
    copy_str(f->model_id, sizeof f->model_id, m, "id");
    copy_str(f->revision, sizeof f->revision, m, "revision");
    copy_str(f->backend, sizeof f->backend, json_object_get(r, "backend"), "name");
    copy_str(f->platform, sizeof f->platform, json_object_get(r, "platform"), "name");
    json_t *gpus = json_object_get(hw, "gpus");
    copy_str(f->gpu_name, sizeof f->gpu_name, json_array_get(gpus, 0), "name");
    f->gpu_count = (int)json_get_int(hw, "gpu_count", (json_int_t)json_array_size(gpus));
    copy_str(f->cpu_model, sizeof f->cpu_model, json_object_get(hw, "cpu"), "model");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "cells"), i, c) {
        double tok, first;
        bool greedy_chat = strcmp(json_get_str(c, "workload", ""), "chat") == 0 && json_get_num(c, "temperature", -1) == 0;
        if (!cell_median(c, "stream_tok_s", &tok)) continue;
        if (!f->has_best_tok_s || tok > f->best_tok_s) f->best_tok_s = tok;
        f->has_best_tok_s = true;
        if (greedy_chat && cell_median(c, "first_text_ms", &first)) {
            f->has_chat_greedy = true;
            f->chat_greedy_tok_s = tok;
            f->chat_greedy_first_ms = first;
        }
    }
}

/* Why a valid receipt is not a complete standard run (DESIGN.md section 12); none: it is. */
static void completeness(const json_t *r, store_submission *f, intake_verdict *v) {
    size_t before = json_array_size(v->reasons);
    const json_t *man = json_object_get(r, "manifest"), *hw = json_object_get(r, "hardware");
    if (!f->standard) add_reason(v, NULL, "not a standard run: the suite's repetitions, tokens or temperatures were changed");
    if (json_is_true(json_object_get(r, "cancelled"))) add_reason(v, NULL, "the run was cancelled");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "cells"), i, c)
        if (strcmp(json_get_str(c, "status", ""), "complete") != 0)
            add_reason(v, NULL, "cell %s/%s is incomplete", json_get_str(c, "workload", "?"), json_get_str(c, "setting", "?"));
    if (strcmp(f->mode, "managed") != 0) {
        if (strcmp(json_get_str(man, "status", ""), "accepted") != 0)
            add_reason(v, NULL, "an attached run without a validated manifest");
        else if (json_get_int(man, "rank_count", 0) < 1 || json_get_int(man, "rank_count", 0) > 2)
            add_reason(v, NULL, "the attested rank count is not 1 or 2");
    }
    if (!f->revision[0] || strcmp(f->revision, "unknown") == 0) add_reason(v, NULL, "no checkpoint revision");
    if (json_array_size(json_get_path(r, "model.checkpoint_hashes")) == 0) add_reason(v, NULL, "no checkpoint digest");
    if (strcmp(json_get_str(hw, "source", "unknown"), "unknown") == 0) add_reason(v, NULL, "hardware unknown");
    else if (strcmp(f->backend, "cpu") != 0 && !f->gpu_name[0]) add_reason(v, NULL, "no GPU named for a %s run", f->backend);
    v->outcome = json_array_size(v->reasons) == before ? INTAKE_STANDARD : INTAKE_REVIEW;
    f->complete = v->outcome == INTAKE_STANDARD; /* what the rankings select on */
}

/* The sanitizer's contexts (the prompts of each built-in suite), made once and only read after. */
static sanitize_context *intake_sanitize[2];
static pthread_once_t intake_sanitize_once = PTHREAD_ONCE_INIT;

static void intake_sanitize_init(void) {
    static const char *const ids[2] = {"community-v1", "community-v2"};
    for (int i = 0; i < 2; i++) {
        suite s;
        char err[128];
        intake_sanitize[i] = sanitize_context_new();
        if (intake_sanitize[i] && suite_load(ids[i], &s, err, sizeof err) == PACER_OK) {
            (void)sanitize_context_add_suite(intake_sanitize[i], &s);
            suite_free(&s);
        }
    }
}

/* The board's own checks of a receipt the validator accepted. */
static void board_checks(const intake_config *cfg, const json_t *r, const store_submission *f, intake_verdict *v) {
    bool v1 = strcmp(f->suite_id, "community-v1") == 0, v2 = strcmp(f->suite_id, "community-v2") == 0;
    if ((v1 && !cfg->accept_v1) || (v2 && !cfg->accept_v2) || (!v1 && !v2))
        add_reason(v, "suite", "suite check failed: this board does not accept %s receipts", f->suite_id);
    /* an unknown backend is no rejection: completeness decides (hardware unknown) */
    if (strcmp(f->backend, "unknown") != 0 && !intake_backend_accepted(cfg, f->backend))
        add_reason(v, "backend", "backend check failed: this board does not accept %s receipts", f->backend);
    pthread_once(&intake_sanitize_once, intake_sanitize_init);
    char err[256];
    if (sanitize_check_receipt(r, intake_sanitize[v2 ? 1 : 0], err, sizeof err) != PACER_OK)
        add_reason(v, "privacy", "%s", err);
    if (!json_get_bool(json_object_get(r, "model"), "publishable", false))
        add_reason(v, "unpublishable", "publish check failed: a local model cannot be published");
    else if (!repo_id_ok(f->model_id))
        add_reason(v, "model", "model check failed: '%.96s' is not a public checkpoint id (ORG/NAME)", f->model_id);
}

pacer_err intake_judge(const intake_config *cfg, const char *body, size_t len, intake_verdict *v) {
    memset(v, 0, sizeof *v);
    v->outcome = INTAKE_REJECTED;
    v->http_status = 400;
    v->reasons = json_array();
    if (!v->reasons) return PACER_ERR_NOMEM;
    if (len > INTAKE_MAX_BYTES) {
        v->http_status = 413;
        add_reason(v, "limits", "the receipt is larger than %u bytes", INTAKE_MAX_BYTES);
        return PACER_OK;
    }
    if (text_depth(body, len, INTAKE_MAX_DEPTH) > INTAKE_MAX_DEPTH) {
        add_reason(v, "limits", "the JSON nests deeper than %d levels", INTAKE_MAX_DEPTH);
        return PACER_OK;
    }
    json_error_t je;
    /* strict: one value, valid UTF-8, no duplicate keys, no NUL in strings, numbers that fit */
    v->receipt = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!v->receipt) {
        add_reason(v, "json", "not valid JSON: %s at byte %d", je.text, je.position);
        return PACER_OK;
    }
    size_t nodes = 0;
    if (!json_is_object(v->receipt)) {
        add_reason(v, "schema", "not a receipt: the document is not a JSON object");
        return PACER_OK;
    }
    if (!tree_limits(v->receipt, &nodes, v)) return PACER_OK;
    v->http_status = 422;
    char err[512];
    if (receipt_validate(v->receipt, err, sizeof err) != PACER_OK) add_reason(v, validator_code(err), "%s", err);
    facts_fill(v->receipt, &v->facts);
    board_checks(cfg, v->receipt, &v->facts, v);
    if (json_array_size(v->reasons) > 0) return PACER_OK;
    v->canonical = json_canonical_dump(v->receipt);
    if (!v->canonical) return PACER_ERR_NOMEM;
    pacer_err rc = sha256_hex(v->canonical, strlen(v->canonical), v->canonical_hash);
    if (rc) return rc;
    v->http_status = 0;
    completeness(v->receipt, &v->facts, v);
    return PACER_OK;
}

void intake_verdict_free(intake_verdict *v) {
    if (!v) return;
    json_decref(v->reasons);
    json_decref(v->receipt);
    free(v->canonical);
    store_submission_clear(&v->facts);
    memset(v, 0, sizeof *v);
}
