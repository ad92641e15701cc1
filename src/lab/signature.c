/* signature.c - the resume check: member by member, in words a person can act on. */
#include "lab/signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The members of a signature, and how a difference is named. */
static const struct {
    const char *key;
    const char *what;
} lab_signature_members[] = {
    {"binary", "the engine binary (its sha256)"},
    {"engine", "the engine"},
    {"model", "the model (identity or metadata)"},
    {"stores", "the weight stores of the configurations"},
    {"suite", "the suite (id or digest)"},
    {"selections", "the selections (configurations, workloads, rounds or mode)"},
    {"context", "the context size"},
};

/* A short text of a JSON value for messages. */
static void brief(const json_t *v, char *out, size_t n) {
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
    snprintf(out, n, "%.150s%s", s ? s : "(none)", s && strlen(s) > 150 ? "..." : "");
    free(s);
}

pacer_err lab_signature_compare(const json_t *was, const json_t *now, json_t **raised, char *err, size_t err_len) {
    *raised = NULL;
    for (size_t i = 0; i < sizeof lab_signature_members / sizeof lab_signature_members[0]; i++) {
        const char *k = lab_signature_members[i].key;
        const json_t *a = json_object_get(was, k), *b = json_object_get(now, k);
        if ((a || b) && !(a && b && json_equal(a, b))) {
            char sa[200], sb[200];
            brief(a, sa, sizeof sa);
            brief(b, sb, sizeof sb);
            snprintf(err, err_len, "cannot resume: %s differs from the run's (run: %s; now: %s)", lab_signature_members[i].what,
                     sa, sb);
            return PACER_ERR_STATE;
        }
    }
    const json_t *ca = json_object_get(was, "caps"), *cb = json_object_get(now, "caps");
    json_t *up = json_object();
    const char *w;
    json_t *v;
    json_object_foreach((json_t *)cb, w, v) {
        const json_t *old = json_object_get(ca, w);
        json_int_t o = json_integer_value(old), n = json_integer_value(v);
        if (!json_is_integer(old) || !json_is_integer(v) || n < o) {
            if (json_is_integer(old))
                snprintf(err, err_len, "cannot resume: the cap of %s would drop from %lld to %lld (caps may only rise)", w,
                         (long long)o, (long long)n);
            else snprintf(err, err_len, "cannot resume: the run has no cap for %s", w);
            json_decref(up);
            return PACER_ERR_STATE;
        }
        if (n > o) json_object_set_new(up, w, json_pack("[I,I]", o, n));
    }
    if (json_object_size(ca) != json_object_size(cb)) {
        snprintf(err, err_len, "cannot resume: the workloads with caps differ from the run's");
        json_decref(up);
        return PACER_ERR_STATE;
    }
    *raised = up;
    return PACER_OK;
}
