/* suite.c - the lab suite document: shape checks field by field, digest, built-in lookup. */
#include "lab/suite.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/embedded.h"
#include "base/fileio.h"
#include "base/json.h"

#define LAB_SUITE_FILE_MAX (4u << 20)

static const char *const lab_kind_names[] = {"completion", "long-prefill", "svg"};

const char *lab_kind_name(lab_kind k) { return (unsigned)k < 3 ? lab_kind_names[k] : "unknown"; }

bool lab_name_ok(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n >= LAB_NAME_MAX || name[0] == '.' || name[0] == '-') return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                  c == '-';
        if (!ok) return false;
    }
    return true;
}

int lab_suite_workload(const lab_suite *s, const char *name) {
    for (int i = 0; i < s->n_workloads; i++)
        if (strcmp(s->workloads[i].name, name) == 0) return i;
    return -1;
}

int lab_suite_config(const lab_suite *s, const char *name) {
    for (int i = 0; i < s->n_configs; i++)
        if (strcmp(s->configs[i].name, name) == 0) return i;
    return -1;
}

const lab_preset *lab_suite_preset(const lab_suite *s, const char *name) {
    for (int i = 0; i < s->n_presets; i++)
        if (strcmp(s->presets[i].name, name) == 0) return &s->presets[i];
    return NULL;
}

/* Writes "FIELD: WHY" into err and returns PACER_ERR_FORMAT. */
static pacer_err bad(char *err, size_t n, const char *field, const char *why) {
    if (err) snprintf(err, n, "lab suite field '%s': %s", field, why);
    return PACER_ERR_FORMAT;
}

/* Refuses members outside `allowed` (NULL-terminated), so that a misspelt field is an
 * error rather than a silent default. */
static pacer_err keys_ok(const json_t *obj, const char *const *allowed, const char *where, char *err, size_t n) {
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++) known = strcmp(*a, key) == 0;
        if (!known) {
            if (err) snprintf(err, n, "lab suite field '%s': unknown member '%.60s'", where, key);
            return PACER_ERR_FORMAT;
        }
    }
    return PACER_OK;
}

static const char *const root_keys[] = {"id", "version", "kind", "description", "rounds", "settings", "configurations",
                                        "workloads", "presets", NULL};
static const char *const workload_keys[] = {"name", "kind", "phase", "route", "cap", "prompt", "messages", NULL};
static const char *const config_keys[] = {"name", "weights", "threads", "args", NULL};
static const char *const settings_keys[] = {"temperature", "seed", "thinking", "context", "check_every_s", NULL};
static const char *const preset_keys[] = {"rounds", "cases", "configs", "archive", NULL};

static bool int_in(const json_t *v, long long lo, long long hi, long long *out) {
    if (!json_is_integer(v)) return false;
    long long x = json_integer_value(v);
    if (x < lo || x > hi) return false;
    *out = x;
    return true;
}

static pacer_err name_into(const json_t *v, char *dst, char *err, size_t n, const char *field) {
    if (!json_is_string(v) || !lab_name_ok(json_string_value(v)))
        return bad(err, n, field, "a name of 1-47 letters, digits, '_', '.' or '-' is required");
    snprintf(dst, LAB_NAME_MAX, "%s", json_string_value(v));
    return PACER_OK;
}

/* Checks a messages array: 1-32 objects {role: system|user|assistant, content: string},
 * the last from the user. */
static bool messages_ok(const json_t *m) {
    size_t n = json_array_size(m);
    if (!json_is_array(m) || n == 0 || n > 32) return false;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(m, i);
        const char *role = json_string_value(json_object_get(e, "role"));
        if (!json_is_object(e) || !role || !json_is_string(json_object_get(e, "content")) || json_object_size(e) != 2)
            return false;
        if (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant")) return false;
        if (i + 1 == n && strcmp(role, "user")) return false;
    }
    return true;
}

static pacer_err parse_workload(const json_t *w, lab_workload *out, char *err, size_t n) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(w)) return bad(err, n, "workloads[]", "an object is required");
    pacer_err rc = name_into(json_object_get(w, "name"), out->name, err, n, "workloads[].name");
    if (rc) return rc;
    const char *kind = json_string_value(json_object_get(w, "kind"));
    int k = -1;
    for (int i = 0; kind && i < 3; i++)
        if (strcmp(kind, lab_kind_names[i]) == 0) k = i;
    if (k < 0) return bad(err, n, "workloads[].kind", "completion, long-prefill or svg");
    out->kind = (lab_kind)k;
    const char *phase = json_string_value(json_object_get(w, "phase"));
    if (!phase || (strcmp(phase, "rounds") && strcmp(phase, "once")))
        return bad(err, n, "workloads[].phase", "rounds or once");
    out->phase = strcmp(phase, "once") == 0 ? LAB_PHASE_ONCE : LAB_PHASE_ROUNDS;
    const char *route = json_string_value(json_object_get(w, "route"));
    if (!route || (strcmp(route, "chat") && strcmp(route, "completions")))
        return bad(err, n, "workloads[].route", "chat or completions");
    out->route = strcmp(route, "chat") == 0 ? ATTEMPT_ROUTE_CHAT : ATTEMPT_ROUTE_COMPLETIONS;
    long long cap;
    if (!int_in(json_object_get(w, "cap"), 1, LAB_CAP_MAX, &cap)) return bad(err, n, "workloads[].cap", "1..1000000 tokens");
    out->cap = (int)cap;
    const json_t *prompt = json_object_get(w, "prompt"), *messages = json_object_get(w, "messages");
    if ((prompt != NULL) == (messages != NULL)) return bad(err, n, "workloads[].prompt", "exactly one of prompt and messages");
    if (prompt && (!json_is_string(prompt) || json_string_length(prompt) == 0))
        return bad(err, n, "workloads[].prompt", "a non-empty string is required");
    if (messages && (out->route != ATTEMPT_ROUTE_CHAT || !messages_ok(messages)))
        return bad(err, n, "workloads[].messages", "chat route, 1-32 {role, content} objects ending with the user's");
    out->prompt = json_string_value(prompt);
    out->messages = messages;
    return keys_ok(w, workload_keys, "workloads[]", err, n);
}

static pacer_err parse_config(const json_t *c, lab_config *out, char *err, size_t n) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(c)) return bad(err, n, "configurations[]", "an object is required");
    pacer_err rc = name_into(json_object_get(c, "name"), out->name, err, n, "configurations[].name");
    if (rc) return rc;
    const json_t *w = json_object_get(c, "weights");
    if (w && !json_is_null(w)) {
        if (!json_is_string(w) || json_string_length(w) == 0 || json_string_length(w) >= sizeof out->weights)
            return bad(err, n, "configurations[].weights", "a weight type name (f16, q8_0, q4_0, ...) or null");
        snprintf(out->weights, sizeof out->weights, "%s", json_string_value(w));
    }
    const json_t *t = json_object_get(c, "threads");
    long long threads = 0;
    if (t && !json_is_null(t) && !int_in(t, 1, 4096, &threads)) return bad(err, n, "configurations[].threads", "1..4096 or null");
    out->threads = (int)threads;
    const json_t *args = json_object_get(c, "args");
    if (args) {
        if (!json_is_array(args) || json_array_size(args) > LAB_MAX_CONFIG_ARGS)
            return bad(err, n, "configurations[].args", "an array of at most 16 strings");
        for (size_t i = 0; i < json_array_size(args); i++) {
            const char *a = json_string_value(json_array_get(args, i));
            if (!a) return bad(err, n, "configurations[].args", "an array of at most 16 strings");
            out->args[out->n_args++] = a;
        }
    }
    return keys_ok(c, config_keys, "configurations[]", err, n);
}

static pacer_err parse_preset(const lab_suite *s, const char *name, const json_t *p, lab_preset *out, char *err,
                              size_t n) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(p) || strlen(name) >= sizeof out->name) return bad(err, n, "presets", "objects named by mode");
    snprintf(out->name, sizeof out->name, "%s", name);
    long long rounds = 0;
    const json_t *r = json_object_get(p, "rounds");
    if (r && !int_in(r, 1, 1000, &rounds)) return bad(err, n, "presets.rounds", "1..1000");
    out->rounds = (int)rounds;
    const json_t *cases = json_object_get(p, "cases");
    if (json_is_string(cases) && strcmp(json_string_value(cases), "all") == 0) {
        out->all_cases = true;
    } else if (json_is_array(cases) && json_array_size(cases) > 0 && json_array_size(cases) <= LAB_MAX_WORKLOADS) {
        for (size_t i = 0; i < json_array_size(cases); i++) {
            const char *c = json_string_value(json_array_get(cases, i));
            int wi = c ? lab_suite_workload(s, c) : -1;
            if (wi < 0) return bad(err, n, "presets.cases", "names a workload the suite does not have");
            out->cases[out->n_cases++] = wi;
        }
    } else {
        return bad(err, n, "presets.cases", "\"all\" or a list of workload names");
    }
    const char *configs = json_string_value(json_object_get(p, "configs"));
    if (!configs || (strcmp(configs, "all") && strcmp(configs, "built")))
        return bad(err, n, "presets.configs", "\"all\" or \"built\"");
    out->configs_built = strcmp(configs, "built") == 0;
    const json_t *a = json_object_get(p, "archive");
    if (a && !json_is_boolean(a)) return bad(err, n, "presets.archive", "a boolean");
    out->archive = json_is_true(a);
    return keys_ok(p, preset_keys, "presets", err, n);
}

static pacer_err parse_settings(const json_t *st, lab_suite *s, char *err, size_t n) {
    if (!json_is_object(st)) return bad(err, n, "settings", "an object is required");
    const json_t *t = json_object_get(st, "temperature");
    if (!json_is_number(t) || json_number_value(t) < 0 || json_number_value(t) > 2)
        return bad(err, n, "settings.temperature", "a number 0..2");
    s->temperature = json_number_value(t);
    const json_t *seed = json_object_get(st, "seed");
    if (!json_is_integer(seed)) return bad(err, n, "settings.seed", "an integer");
    s->seed = json_integer_value(seed);
    const char *th = json_string_value(json_object_get(st, "thinking"));
    if (!th || (strcmp(th, "default") && strcmp(th, "disabled"))) return bad(err, n, "settings.thinking", "default or disabled");
    s->disable_thinking = strcmp(th, "disabled") == 0;
    const json_t *ctx = json_object_get(st, "context");
    long long v = 0;
    if (!json_is_null(ctx) && !int_in(ctx, 16, 1 << 24, &v)) return bad(err, n, "settings.context", "null or 16..16777216 tokens");
    s->context = (int)v;
    if (!int_in(json_object_get(st, "check_every_s"), 1, 3600, &v)) return bad(err, n, "settings.check_every_s", "1..3600");
    s->check_every_s = (int)v;
    return keys_ok(st, settings_keys, "settings", err, n);
}

static pacer_err parse_lists(const json_t *root, lab_suite *s, char *err, size_t n) {
    const json_t *ws = json_object_get(root, "workloads"), *cs = json_object_get(root, "configurations");
    if (!json_is_array(ws) || json_array_size(ws) == 0 || json_array_size(ws) > LAB_MAX_WORKLOADS)
        return bad(err, n, "workloads", "an array of 1-16 workloads");
    if (!json_is_array(cs) || json_array_size(cs) == 0 || json_array_size(cs) > LAB_MAX_CONFIGS)
        return bad(err, n, "configurations", "an array of 1-16 configurations");
    pacer_err rc;
    for (size_t i = 0; i < json_array_size(ws); i++) {
        if ((rc = parse_workload(json_array_get(ws, i), &s->workloads[i], err, n))) return rc;
        if (lab_suite_workload(s, s->workloads[i].name) >= 0) return bad(err, n, "workloads[].name", "names must differ");
        s->n_workloads++;
    }
    for (size_t i = 0; i < json_array_size(cs); i++) {
        if ((rc = parse_config(json_array_get(cs, i), &s->configs[i], err, n))) return rc;
        if (lab_suite_config(s, s->configs[i].name) >= 0) return bad(err, n, "configurations[].name", "names must differ");
        s->n_configs++;
    }
    const json_t *ps = json_object_get(root, "presets");
    if (ps && (!json_is_object(ps) || json_object_size(ps) > LAB_MAX_PRESETS))
        return bad(err, n, "presets", "an object of at most 4 presets");
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)ps, key, val) {
        if ((rc = parse_preset(s, key, val, &s->presets[s->n_presets], err, n))) return rc;
        s->n_presets++;
    }
    return PACER_OK;
}

pacer_err lab_suite_parse(const char *text, size_t len, lab_suite *s, char *err, size_t err_len) {
    memset(s, 0, sizeof *s);
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (err) snprintf(err, err_len, "lab suite is not JSON: %s (line %d)", jerr.text, jerr.line);
        return PACER_ERR_PARSE;
    }
    s->doc = root;
    pacer_err rc;
    if (!json_is_object(root)) {
        rc = bad(err, err_len, "(document)", "an object is required");
        goto fail;
    }
    if ((rc = keys_ok(root, root_keys, "(document)", err, err_len))) goto fail;
    const char *kind = json_string_value(json_object_get(root, "kind"));
    if (!kind || strcmp(kind, "lab")) {
        rc = bad(err, err_len, "kind", "\"lab\" is required (community suites run with pacer bench)");
        goto fail;
    }
    const char *id = json_string_value(json_object_get(root, "id"));
    if (!id || !lab_name_ok(id)) {
        rc = bad(err, err_len, "id", "a name of 1-47 letters, digits, '_', '.' or '-' is required");
        goto fail;
    }
    snprintf(s->id, sizeof s->id, "%s", id);
    long long v;
    if (!int_in(json_object_get(root, "version"), 1, 1000000, &v)) {
        rc = bad(err, err_len, "version", "a positive integer");
        goto fail;
    }
    s->version = (int)v;
    if (!int_in(json_object_get(root, "rounds"), 1, 1000, &v)) {
        rc = bad(err, err_len, "rounds", "1..1000");
        goto fail;
    }
    s->rounds = (int)v;
    if ((rc = parse_settings(json_object_get(root, "settings"), s, err, err_len))) goto fail;
    if ((rc = parse_lists(root, s, err, err_len))) goto fail;
    if ((rc = json_canonical_sha256(root, s->digest))) goto fail;
    return PACER_OK;
fail:
    lab_suite_free(s);
    return rc;
}

pacer_err lab_suite_load(const char *name, lab_suite *s, char *err, size_t err_len) {
    if (strcmp(name, LAB_BUILTIN_ID) == 0 || strcmp(name, LAB_PREFILL_ID) == 0) {
        char file[LAB_NAME_MAX + 8];
        snprintf(file, sizeof file, "%s.json", name);
        const embedded_file *f = embedded_find(file);
        if (!f) {
            if (err) snprintf(err, err_len, "the built-in suite %s is missing from this build", name);
            return PACER_ERR_INTERNAL;
        }
        pacer_err rc = lab_suite_parse(f->data, f->size, s, err, err_len);
        if (!rc) s->builtin = true;
        return rc;
    }
    buf b;
    buf_init(&b, LAB_SUITE_FILE_MAX);
    pacer_err rc = file_read_all(name, &b);
    if (rc) {
        if (err) snprintf(err, err_len, "cannot read the suite file: %s", rc == PACER_ERR_TOO_BIG ? "larger than 4 MB" : pacer_strerror(rc));
        buf_free(&b);
        return rc;
    }
    rc = lab_suite_parse(b.data ? b.data : "", b.len, s, err, err_len);
    buf_free(&b);
    return rc;
}

void lab_suite_free(lab_suite *s) {
    json_decref(s->doc);
    memset(s, 0, sizeof *s);
}
