/* rules.h - completion rules (DESIGN.md section 4): whether one measured attempt counts
 * under its suite version's protocol. Pure functions over a sample. */
#ifndef PACER_RULES_H
#define PACER_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/attempt.h"

typedef struct rules_context {
    int rule_version;            /* 1: full budget always; 2: sampled may stop naturally */
    int max_tokens;              /* the token budget that was requested */
    bool greedy;                 /* temperature 0 */
    int natural_stop_min_tokens; /* v2 only */
} rules_context;

/* Judges `s` under `ctx`: returns the status it earns and writes the reason (empty when
 * ok) to `reason` (`reason_n` bytes). A sample that attempt_run already marked failed,
 * incomplete or cancelled keeps that status and its reason. */
attempt_status rules_judge(const rules_context *ctx, const attempt_sample *s, char *reason, size_t reason_n);

#endif
