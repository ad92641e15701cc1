/* plan.h - the sample plan of a lab run: which workloads, configurations and rounds were
 * selected, and the order samples run in. Round-phase workloads come first, round by round;
 * within a round, workload by workload, the configurations in an order that rotates (round
 * r, counted from 1, starts at selected configuration (r - 1) mod n). Once-phase workloads
 * (long prefill, then the SVG drawing) follow, one sample per configuration each. Pure. */
#ifndef PACER_LAB_PLAN_H
#define PACER_LAB_PLAN_H

#include <stddef.h>

#include "base/error.h"
#include "lab/suite.h"

#define LAB_ID_MAX (2 * LAB_NAME_MAX + 16)

/* What the run covers; indexes into the suite, in suite order. */
typedef struct lab_selection {
    int configs[LAB_MAX_CONFIGS];
    int n_configs;
    int cases[LAB_MAX_WORKLOADS];
    int n_cases;
    int rounds;
} lab_selection;

typedef struct lab_slot {
    int index;            /* position in the plan, from 0 */
    int round;            /* from 1; once-phase samples have round 1 */
    int workload, config; /* suite indexes */
    char id[LAB_ID_MAX];  /* "r<round>-<workload>-<config>": names the sample's files */
} lab_slot;

typedef struct lab_plan {
    lab_slot *slots;      /* owned */
    size_t n;
} lab_plan;

/* Fills `sel` from comma-separated name lists (NULL: every configuration / workload in suite
 * order) and `rounds` (<= 0: the suite's). An unknown or repeated name is PACER_ERR_ARG with
 * the name in `err`. Selected names keep suite order. */
pacer_err lab_selection_parse(const lab_suite *s, const char *configs, const char *cases, int rounds, lab_selection *sel,
                              char *err, size_t err_len);
/* Builds the plan. PACER_ERR_NOMEM, or PACER_ERR_ARG when the selection is empty. */
pacer_err lab_plan_build(const lab_suite *s, const lab_selection *sel, lab_plan *out);
void lab_plan_free(lab_plan *p);
/* The slot with id `id`, or NULL. */
const lab_slot *lab_plan_find(const lab_plan *p, const char *id);

#endif
