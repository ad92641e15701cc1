/* plan.c - selections and the order of a lab run's samples. */
#include "lab/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Marks the names of comma-separated `list` in `chosen` (indexes from `lookup`). */
static pacer_err mark_names(const lab_suite *s, const char *list, int (*lookup)(const lab_suite *, const char *),
                            bool *chosen, const char *what, char *err, size_t err_len) {
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        char name[LAB_NAME_MAX];
        int i = -1;
        if (len > 0 && len < sizeof name) {
            memcpy(name, p, len);
            name[len] = '\0';
            i = lookup(s, name);
        }
        if (i < 0) {
            snprintf(err, err_len, "the suite has no %s '%.*s'", what, (int)(len > 60 ? 60 : len), p);
            return PACER_ERR_ARG;
        }
        if (chosen[i]) {
            snprintf(err, err_len, "%s '%s' is named twice", what, name);
            return PACER_ERR_ARG;
        }
        chosen[i] = true;
        p += len;
        if (*p == ',') p++;
    }
    return PACER_OK;
}

pacer_err lab_selection_parse(const lab_suite *s, const char *configs, const char *cases, int rounds, lab_selection *sel,
                              char *err, size_t err_len) {
    memset(sel, 0, sizeof *sel);
    bool c[LAB_MAX_CONFIGS] = {0}, w[LAB_MAX_WORKLOADS] = {0};
    pacer_err rc;
    if (configs && (rc = mark_names(s, configs, lab_suite_config, c, "configuration", err, err_len))) return rc;
    if (cases && (rc = mark_names(s, cases, lab_suite_workload, w, "workload", err, err_len))) return rc;
    for (int i = 0; i < s->n_configs; i++)
        if (!configs || c[i]) sel->configs[sel->n_configs++] = i;
    for (int i = 0; i < s->n_workloads; i++)
        if (!cases || w[i]) sel->cases[sel->n_cases++] = i;
    sel->rounds = rounds > 0 ? rounds : s->rounds;
    if (!sel->n_configs || !sel->n_cases) {
        snprintf(err, err_len, "nothing selected");
        return PACER_ERR_ARG;
    }
    return PACER_OK;
}

static void slot_set(lab_plan *p, const lab_suite *s, int round, int workload, int config) {
    lab_slot *sl = &p->slots[p->n];
    sl->index = (int)p->n;
    sl->round = round;
    sl->workload = workload;
    sl->config = config;
    snprintf(sl->id, sizeof sl->id, "r%d-%s-%s", round, s->workloads[workload].name, s->configs[config].name);
    p->n++;
}

pacer_err lab_plan_build(const lab_suite *s, const lab_selection *sel, lab_plan *out) {
    memset(out, 0, sizeof *out);
    if (sel->n_configs <= 0 || sel->n_cases <= 0 || sel->rounds <= 0) return PACER_ERR_ARG;
    size_t cap = (size_t)sel->n_configs * (size_t)sel->n_cases * (size_t)sel->rounds;
    out->slots = calloc(cap, sizeof *out->slots);
    if (!out->slots) return PACER_ERR_NOMEM;
    int n = sel->n_configs;
    for (int r = 1; r <= sel->rounds; r++)
        for (int k = 0; k < sel->n_cases; k++) {
            int w = sel->cases[k];
            if (s->workloads[w].phase != LAB_PHASE_ROUNDS) continue;
            for (int j = 0; j < n; j++) slot_set(out, s, r, w, sel->configs[(r - 1 + j) % n]);
        }
    for (int k = 0; k < sel->n_cases; k++) {
        int w = sel->cases[k];
        if (s->workloads[w].phase != LAB_PHASE_ONCE) continue;
        for (int j = 0; j < n; j++) slot_set(out, s, 1, w, sel->configs[j]);
    }
    return PACER_OK;
}

void lab_plan_free(lab_plan *p) {
    free(p->slots);
    p->slots = NULL;
    p->n = 0;
}

const lab_slot *lab_plan_find(const lab_plan *p, const char *id) {
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->slots[i].id, id) == 0) return &p->slots[i];
    return NULL;
}
