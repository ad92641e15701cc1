/* run_internal.h - what run.c (set-up) and run_loop.c (samples, report, archive) share. */
#ifndef PACER_LAB_RUN_INTERNAL_H
#define PACER_LAB_RUN_INTERNAL_H

#include <limits.h>

#include "lab/engine.h"
#include "lab/run.h"
#include "launch/adapter.h"
#include "probe/probe.h"

typedef struct lab_ctx {
    const lab_run_options *o;
    lab_run_result *res;
    char *err;
    size_t err_len;
    json_t *was;                 /* run.json of the run being resumed; NULL for a new run */
    char was_configs[LAB_MAX_CONFIGS * LAB_NAME_MAX], was_cases[LAB_MAX_WORKLOADS * LAB_NAME_MAX];
    int was_rounds;
    const char *was_mode;        /* borrowed from `was` */
    const lab_preset *preset;
    const launch_adapter *adapter;
    char bin_path[PATH_MAX];
    char bin_sha[65];
    char model_sha[65];          /* "" for a cached repo (identified by repo@revision) */
    json_t *hardware;            /* probed at the start of this session */
    bool has_memory_limit;
    int64_t memory_limit;
    power_watch power;
    json_t *run;                 /* run.json as it is being kept */
    lab_engine *engines;         /* per suite configuration (the selected ones prepared); owned */
} lab_ctx;

void lab_emit(lab_ctx *c, const lab_event *ev);
/* The samples of the plan that still need a run, in order; then the report and, once
 * complete, the archive. */
lab_outcome lab_run_samples(lab_ctx *c);

#endif
