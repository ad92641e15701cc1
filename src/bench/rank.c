/* rank.c - the ranking rules, one row each: a rule returns NULL when the receipt passes it,
 * else the reason it is unranked. The rows read only the receipt (and its suite), so a
 * saved receipt is judged as the runner judged it. */
#include "bench/rank.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"

typedef const char *(*rank_rule)(const json_t *r, const suite *s);

static bool is_load(const json_t *r) { return json_object_get(r, "load") != NULL; }

static const char *rule_not_load(const json_t *r, const suite *s) {
    (void)s;
    return is_load(r) ? "load sweep: not a suite run" : NULL;
}

static const char *rule_standard(const json_t *r, const suite *s) {
    if (is_load(r)) return NULL; /* said by rule_not_load */
    const json_t *set = json_object_get(r, "settings");
    bool standard = json_is_true(json_get_path(r, "suite.standard")) && s->builtin &&
                    json_get_int(set, "repetitions", -1) == s->repetitions &&
                    json_get_int(set, "warmups", -1) == s->warmups;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(r, "cells"), i, c) {
        bool known = false;
        for (int w = 0; w < s->n_workloads; w++)
            for (int k = 0; k < s->n_settings; k++)
                known |= strcmp(json_get_str(c, "workload", ""), s->workloads[w].name) == 0 &&
                         strcmp(json_get_str(c, "setting", ""), s->settings[k].name) == 0 &&
                         json_get_int(c, "max_tokens", -1) == s->workloads[w].max_tokens &&
                         json_get_num(c, "temperature", -1) == s->settings[k].temperature;
        standard = standard && known;
    }
    return standard ? NULL : "non-standard run (custom --reps/--tokens/--temperatures or a suite file)";
}

static const char *rule_not_cancelled(const json_t *r, const suite *s) {
    (void)s;
    return json_is_true(json_object_get(r, "cancelled")) ? "run cancelled" : NULL;
}

/* every cell of the suite present once, each complete (all declared repetitions ok) */
static const char *rule_complete(const json_t *r, const suite *s) {
    if (is_load(r)) return json_get_int(r, "exit_status", 0) == 2 ? "incomplete load levels" : NULL;
    const json_t *cells = json_object_get(r, "cells");
    bool complete = json_array_size(cells) == (size_t)(s->n_workloads * s->n_settings);
    size_t i;
    const json_t *c;
    json_array_foreach(cells, i, c) complete = complete && strcmp(json_get_str(c, "status", ""), "complete") == 0;
    return complete ? NULL : "incomplete cells";
}

static const char *rule_publishable(const json_t *r, const suite *s) {
    (void)s;
    return json_is_true(json_get_path(r, "model.publishable")) ? NULL : "local model: unpublishable";
}

static bool is_managed(const json_t *r) { return strcmp(json_get_str(r, "mode", ""), "managed") == 0; }

static const char *rule_provenance(const json_t *r, const suite *s) {
    (void)s;
    if (is_managed(r) || strcmp(json_get_str(json_object_get(r, "manifest"), "status", ""), "accepted") == 0)
        return NULL;
    return "no accepted manifest: an attached run's hardware, revision and rank count are unknown";
}

static const char *rule_ranks(const json_t *r, const suite *s) {
    (void)s;
    const json_t *n = json_get_path(r, "ranks.count");
    if (!json_is_integer(n)) n = json_get_path(r, "manifest.rank_count"); /* receipts before "ranks" */
    if (!json_is_integer(n) || json_integer_value(n) < 1) return "rank count unknown";
    return json_integer_value(n) > 2 ? "rank count above 2" : NULL;
}

static const char *rule_revision(const json_t *r, const suite *s) {
    (void)s;
    const json_t *m = json_object_get(r, "model");
    bool known = strcmp(json_get_str(m, "revision", "unknown"), "unknown") != 0 &&
                 strcmp(json_get_str(m, "revision_source", "unknown"), "unknown") != 0;
    return known ? NULL : "no checkpoint revision";
}

static const char *rule_digest(const json_t *r, const suite *s) {
    (void)s;
    return json_array_size(json_get_path(r, "model.checkpoint_hashes")) > 0
               ? NULL
               : "no configuration digest (no SHA-256 of the checkpoint's weight files)";
}

static const char *rule_gpu(const json_t *r, const suite *s) {
    (void)s;
    const json_t *hw = json_object_get(r, "hardware");
    bool gpu = strcmp(json_get_str(hw, "source", "unknown"), "unknown") != 0 && json_array_size(json_object_get(hw, "gpus")) > 0;
    return gpu ? NULL : "no GPU reported";
}

static const char *rule_backend(const json_t *r, const suite *s) {
    (void)s;
    bool differs = json_is_string(json_get_path(r, "manifest.backend")) &&
                   strcmp(json_get_str(json_object_get(r, "backend"), "source", ""), "attested") != 0;
    return differs ? "declared backend differs from the manifest's" : NULL;
}

static const rank_rule rank_rules[] = {
    rule_not_load, rule_standard, rule_not_cancelled, rule_complete, rule_publishable, rule_provenance,
    rule_ranks,    rule_revision,      rule_digest,   rule_gpu,         rule_backend,
};

size_t rank_reasons(const json_t *r, const suite *s, json_t *reasons) {
    size_t n = 0;
    for (size_t i = 0; i < sizeof rank_rules / sizeof rank_rules[0]; i++) {
        const char *why = rank_rules[i](r, s);
        if (why && json_array_append_new(reasons, json_string(why)) == 0) n++;
    }
    return n;
}

size_t rank_public_warnings(const json_t *r, json_t *warnings) {
    static const rank_rule named[] = {rule_gpu, rule_revision, rule_digest};
    if (!is_managed(r) || !json_is_true(json_get_path(r, "model.publishable"))) return 0;
    size_t n = 0;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        const char *why = named[i](r, NULL);
        char line[200];
        if (!why) continue;
        snprintf(line, sizeof line, "public managed receipt with %s: it can be published, never ranked", why);
        if (json_array_append_new(warnings, json_string(line)) == 0) n++;
    }
    return n;
}
