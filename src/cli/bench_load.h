/* bench_load.h - the load-sweep options of `pacer bench` (--concurrency, --rate,
 * --requests, --duration, --seed, --slo, --calibration-ms, --workload) and their progress
 * line. cmd_bench.c puts BENCH_LOAD_OPTIONS into its option table and hands those codes
 * here. */
#ifndef PACER_CLI_BENCH_LOAD_H
#define PACER_CLI_BENCH_LOAD_H

#include <getopt.h>
#include <stdbool.h>

#include "bench/load.h"

enum {
    BENCH_OPT_CONCURRENCY = 1000,
    BENCH_OPT_RATE,
    BENCH_OPT_REQUESTS,
    BENCH_OPT_DURATION,
    BENCH_OPT_SEED,
    BENCH_OPT_SLO,
    BENCH_OPT_CALIBRATION,
    BENCH_OPT_WORKLOAD,
    BENCH_OPT_REALTIME,
    BENCH_OPT_BUSY_POLL,
};

#define BENCH_LOAD_OPTIONS                                                                                        \
    {"concurrency", required_argument, 0, BENCH_OPT_CONCURRENCY}, {"rate", required_argument, 0, BENCH_OPT_RATE}, \
        {"requests", required_argument, 0, BENCH_OPT_REQUESTS}, {"duration", required_argument, 0, BENCH_OPT_DURATION}, \
        {"seed", required_argument, 0, BENCH_OPT_SEED}, {"slo", required_argument, 0, BENCH_OPT_SLO},               \
        {"calibration-ms", required_argument, 0, BENCH_OPT_CALIBRATION},                                           \
        {"workload", required_argument, 0, BENCH_OPT_WORKLOAD}, {"realtime", no_argument, 0, BENCH_OPT_REALTIME},  \
        {"busy-poll", no_argument, 0, BENCH_OPT_BUSY_POLL}

#define BENCH_LOAD_USAGE                                                                                            \
    "       load sweeps (attached or managed): [--concurrency LIST | --rate LIST] [--requests N] [--duration S]\n"  \
    "                   [--seed N] [--slo ttft=MS,itl=MS] [--calibration-ms MS] [--workload NAME] [--realtime]\n"   \
    "                   [--busy-poll]\n"                                                                         \
    "         one level per value: a concurrency keeps N requests in flight, a rate starts requests\n"            \
    "         at seeded Poisson arrivals (R per second); each level runs --requests N (default: 4 per\n"         \
    "         stream, at least 16; rate levels 64) or starts requests for --duration S; the client\n"             \
    "         calibrates itself before each level (--calibration-ms, default 300) and flags a level\n"            \
    "         'client-limited' above half its calibrated maximum delivery rate; --realtime runs the\n"         \
    "         client's thread at real-time priority during each level where allowed (on a busy machine\n"       \
    "         deliveries are then stamped when they arrive, not when the scheduler gets round to it);\n"       \
    "         --busy-poll: the client's thread never sleeps during a level, it asks for ready sockets\n"      \
    "         again at once, so no wake-up lies between a delivery's arrival and its time stamp; it\n"        \
    "         keeps one core busy for the whole level by design (give it a core of its own)\n"

typedef struct bench_load_cli {
    load_options lo;
    const char *workload;
    bool any;         /* a load option was given */
    bool seed_given;
} bench_load_cli;

/* Handles option `code` with `arg`: 1 when it was a load option and valid, 0 when it is not
 * a load option, -1 when invalid (the error is printed). */
int bench_load_option(bench_load_cli *lc, int code, const char *arg);
/* Checks the combination and applies defaults; -1 (error printed) when invalid. Call once
 * after parsing, only when lc->any. */
int bench_load_finish(bench_load_cli *lc);
/* load_progress_fn for a terminal: one updating line. */
void bench_load_progress(void *ctx, int level, int n_levels, double value, int64_t done, int64_t planned,
                         const attempt_sample *s);

#endif
