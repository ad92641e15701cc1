/* suite.c - suite documents: shape checks, digest, built-in lookup. The suite fields are
 * read from one table so that a missing or mistyped field is reported by name. */
#include "bench/suite.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/embedded.h"
#include "base/fileio.h"
#include "base/json.h"

#define SUITE_FILE_MAX (1u << 20)

const char *const suite_builtin_ids[] = {"community-v1", "community-v2", NULL};

static pacer_err suite_fail(char *err, size_t err_len, const char *what) {
    if (err && err_len) snprintf(err, err_len, "invalid suite: %s", what);
    return PACER_ERR_FORMAT;
}

static bool copy_name(char *dst, const char *src) {
    if (!src || !*src || strlen(src) >= SUITE_NAME_MAX) return false;
    strcpy(dst, src);
    return true;
}

static bool route_from_name(const char *name, attempt_route *r) {
    if (name && strcmp(name, "completions") == 0) { *r = ATTEMPT_ROUTE_COMPLETIONS; return true; }
    if (name && strcmp(name, "chat") == 0) { *r = ATTEMPT_ROUTE_CHAT; return true; }
    return false;
}

static pacer_err suite_fill(suite *s, char *err, size_t err_len) {
    json_t *d = s->doc;
    if (!json_is_object(d)) return suite_fail(err, err_len, "not a JSON object");
    if (!copy_name(s->id, json_get_str(d, "id", NULL))) return suite_fail(err, err_len, "id");
    s->version = (int)json_get_int(d, "version", 0);
    if (s->version < 1) return suite_fail(err, err_len, "version");
    s->repetitions = (int)json_get_int(d, "repetitions", 0);
    s->warmups = (int)json_get_int(d, "warmups", -1);
    if (s->repetitions < 1 || s->repetitions > 1000) return suite_fail(err, err_len, "repetitions");
    if (s->warmups < 0 || s->warmups > 100) return suite_fail(err, err_len, "warmups");
    const char *thinking = json_get_str(d, "thinking", NULL);
    const char *cache = json_get_str(d, "prompt_cache", NULL);
    if (!thinking || (strcmp(thinking, "disabled") && strcmp(thinking, "default")))
        return suite_fail(err, err_len, "thinking (disabled|default)");
    if (!cache || (strcmp(cache, "disabled") && strcmp(cache, "default")))
        return suite_fail(err, err_len, "prompt_cache (disabled|default)");
    s->thinking_disabled = strcmp(thinking, "disabled") == 0;
    s->prompt_cache_disabled = strcmp(cache, "disabled") == 0;

    json_t *rule = json_object_get(d, "rule");
    if (!json_is_object(rule)) return suite_fail(err, err_len, "rule");
    s->rule_version = (int)json_get_int(rule, "version", 0);
    if (s->rule_version != 1 && s->rule_version != 2) return suite_fail(err, err_len, "rule.version (1|2)");
    s->natural_stop_min_tokens = (int)json_get_int(rule, "natural_stop_min_tokens", -1);
    if (s->natural_stop_min_tokens < 0) return suite_fail(err, err_len, "rule.natural_stop_min_tokens");

    json_t *ws = json_object_get(d, "workloads");
    if (!json_is_array(ws) || json_array_size(ws) < 1 || json_array_size(ws) > SUITE_MAX_WORKLOADS)
        return suite_fail(err, err_len, "workloads");
    s->n_workloads = (int)json_array_size(ws);
    for (int i = 0; i < s->n_workloads; i++) {
        json_t *w = json_array_get(ws, (size_t)i);
        suite_workload *sw = &s->workloads[i];
        if (!copy_name(sw->name, json_get_str(w, "name", NULL))) return suite_fail(err, err_len, "workload name");
        if (!route_from_name(json_get_str(w, "route", NULL), &sw->route))
            return suite_fail(err, err_len, "workload route (completions|chat)");
        sw->prompt = json_get_str(w, "prompt", NULL);
        if (!sw->prompt || !*sw->prompt) return suite_fail(err, err_len, "workload prompt");
        sw->max_tokens = (int)json_get_int(w, "max_tokens", 0);
        if (sw->max_tokens < 1 || sw->max_tokens > 65536) return suite_fail(err, err_len, "workload max_tokens");
    }
    json_t *ss = json_object_get(d, "settings");
    if (!json_is_array(ss) || json_array_size(ss) < 1 || json_array_size(ss) > SUITE_MAX_SETTINGS)
        return suite_fail(err, err_len, "settings");
    s->n_settings = (int)json_array_size(ss);
    for (int i = 0; i < s->n_settings; i++) {
        json_t *st = json_array_get(ss, (size_t)i);
        suite_setting *x = &s->settings[i];
        if (!copy_name(x->name, json_get_str(st, "name", NULL))) return suite_fail(err, err_len, "setting name");
        if (!json_is_number(json_object_get(st, "temperature"))) return suite_fail(err, err_len, "setting temperature");
        x->temperature = json_get_num(st, "temperature", -1);
        x->top_k = (int)json_get_int(st, "top_k", 0);
        x->top_p = json_get_num(st, "top_p", 0);
        x->seed_base = json_get_int(st, "seed_base", 0);
        if (x->temperature < 0 || x->temperature > 2 || x->top_k < 0 || x->top_p < 0 || x->top_p > 1)
            return suite_fail(err, err_len, "setting values");
    }
    pacer_err rc = json_canonical_sha256(d, s->digest);
    if (rc) return rc;
    char want[65];
    s->builtin = suite_builtin_digest(s->id, want) == PACER_OK && strcmp(want, s->digest) == 0;
    return PACER_OK;
}

pacer_err suite_parse(const char *text, size_t len, suite *s, char *err, size_t err_len) {
    memset(s, 0, sizeof *s);
    if (err && err_len) err[0] = '\0';
    json_error_t je;
    s->doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!s->doc) {
        if (err && err_len) snprintf(err, err_len, "suite is not valid JSON: %s (line %d)", je.text, je.line);
        return PACER_ERR_PARSE;
    }
    pacer_err rc = suite_fill(s, err, err_len);
    if (rc) suite_free(s);
    return rc;
}

/* The built-in suites are bytes in the binary: each digest is taken once (every receipt the
 * board validates asks for it). */
#define SUITE_BUILTIN_MAX 8
static char suite_builtin_digests[SUITE_BUILTIN_MAX][65];
static pthread_mutex_t suite_builtin_mu = PTHREAD_MUTEX_INITIALIZER;

pacer_err suite_builtin_digest(const char *id, char out[65]) {
    char name[SUITE_NAME_MAX + 8];
    int k = -1;
    for (int i = 0; suite_builtin_ids[i] && k < 0; i++)
        if (strcmp(id, suite_builtin_ids[i]) == 0) k = i;
    if (k < 0) return PACER_ERR_NOT_FOUND;
    pthread_mutex_lock(&suite_builtin_mu);
    bool cached = k < SUITE_BUILTIN_MAX && suite_builtin_digests[k][0];
    if (cached) memcpy(out, suite_builtin_digests[k], 65);
    pthread_mutex_unlock(&suite_builtin_mu);
    if (cached) return PACER_OK;
    snprintf(name, sizeof name, "%s.json", id);
    const embedded_file *f = embedded_find(name);
    if (!f) return PACER_ERR_NOT_FOUND;
    json_t *d = json_loadb(f->data, f->size, 0, NULL);
    if (!d) return PACER_ERR_INTERNAL;
    pacer_err rc = json_canonical_sha256(d, out);
    json_decref(d);
    if (!rc && k < SUITE_BUILTIN_MAX) {
        pthread_mutex_lock(&suite_builtin_mu);
        memcpy(suite_builtin_digests[k], out, 65);
        pthread_mutex_unlock(&suite_builtin_mu);
    }
    return rc;
}

pacer_err suite_load(const char *name, suite *s, char *err, size_t err_len) {
    char fname[SUITE_NAME_MAX + 8];
    memset(s, 0, sizeof *s);
    for (int i = 0; suite_builtin_ids[i]; i++) {
        if (strcmp(name, suite_builtin_ids[i]) != 0) continue;
        snprintf(fname, sizeof fname, "%s.json", name);
        const embedded_file *f = embedded_find(fname);
        if (!f) break;
        return suite_parse(f->data, f->size, s, err, err_len);
    }
    buf b;
    buf_init(&b, SUITE_FILE_MAX);
    pacer_err rc = file_read_all(name, &b);
    if (rc) {
        if (err && err_len) snprintf(err, err_len, "no built-in suite or readable suite file named '%s'", name);
        buf_free(&b);
        return rc == PACER_ERR_TOO_BIG ? rc : PACER_ERR_NOT_FOUND;
    }
    rc = suite_parse(b.data, b.len, s, err, err_len);
    buf_free(&b);
    return rc;
}

void suite_free(suite *s) {
    if (!s) return;
    json_decref(s->doc);
    s->doc = NULL;
}
