/* load.h - load sweeps: many streams at once against one server, level by level (a
 * concurrency, or a seeded Poisson request rate), every delivery's arrival time kept per
 * attempt so that every figure of a level can be recomputed from the receipt; goodput
 * under SLOs; the client's own calibration against an in-process loopback emitter and the
 * "client-limited" flag. The receipt's "load" section and "client.calibration" are
 * documented in docs/receipt.md; load_metrics[] defines the level figures once. */
#ifndef PACER_LOAD_H
#define PACER_LOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"
#include "bench/attempt.h"
#include "bench/rules.h"

#define LOAD_MAX_LEVELS 32
#define LOAD_MAX_STREAMS 4096          /* streams of one level (file descriptors) */
#define LOAD_MAX_REQUESTS 100000       /* attempts of one level */
#define LOAD_DEFAULT_CALIBRATION_MS 300
#define LOAD_DEFAULT_REQUESTS_PER_STREAM 4
#define LOAD_DEFAULT_REQUESTS_MIN 16
#define LOAD_DEFAULT_RATE_REQUESTS 64
#define LOAD_RATE_CALIBRATION_STREAMS 64 /* a rate level's in-flight count is not known before */
#define LOAD_CLIENT_LIMIT_SHARE 0.5    /* above this share of the calibrated maximum: client-limited */

typedef enum load_kind {
    LOAD_CONCURRENCY = 0, /* a level keeps N requests in flight */
    LOAD_RATE = 1,        /* a level starts requests at seeded Poisson arrivals, R per second */
} load_kind;

/* Service-level objectives for goodput; an absent one (has_* false) holds for every attempt. */
typedef struct load_slo {
    bool has_ttft, has_itl;
    double ttft_ms; /* first text within this */
    double itl_ms;  /* every gap between deliveries within this */
} load_slo;

/* Called after every attempt ends, for progress output. */
typedef void (*load_progress_fn)(void *ctx, int level, int n_levels, double value, int64_t done, int64_t planned,
                                 const attempt_sample *s);

typedef struct load_options {
    load_kind kind;
    int n_levels;
    double levels[LOAD_MAX_LEVELS]; /* concurrency (whole numbers) or requests per second */
    int64_t requests;               /* attempts per level; 0 with a duration: as many as start in it;
                                     * 0 without: LOAD_DEFAULT_REQUESTS_PER_STREAM per stream (at least
                                     * LOAD_DEFAULT_REQUESTS_MIN), rate levels LOAD_DEFAULT_RATE_REQUESTS */
    double duration_s;              /* new attempts start until then; 0: until `requests` have run */
    uint64_t seed;                  /* the arrival schedule of rate levels */
    load_slo slo;
    double calibration_ms;          /* the budget of each calibration; 0: the default */
    bool realtime;                  /* run each level at real-time priority (SCHED_FIFO 1) when allowed */
    bool busy_poll;                 /* the client's thread never sleeps during a level (net_multi_busy_poll) */
    /* What every attempt sends (its seed, when sampled, is seed_base + attempt index), and
     * the suite workload and setting it comes from (names for the receipt). */
    attempt_request request;
    const char *workload, *setting;
    int64_t seed_base;
    rules_context rules;            /* how each attempt is judged */
    const volatile sig_atomic_t *cancel_flag;
    load_progress_fn progress;
    void *progress_ctx;
} load_options;

typedef struct load_result {
    json_t *section;     /* the receipt's "load" object (new reference) */
    json_t *calibration; /* the receipt's "client.calibration" object (new reference) */
    bool incomplete;     /* some attempt is not ok */
    bool cancelled;
} load_result;

/* Checks the levels, request count and duration of `o`; PACER_ERR_ARG with `err` set. */
pacer_err load_options_check(const load_options *o, char *err, size_t err_len);

/* The sequence slots a managed engine is started with for this sweep: the largest
 * concurrency level, or LOAD_RATE_CALIBRATION_STREAMS for rate levels (their in-flight
 * count is not known before), at most LOAD_ENGINE_SLOTS_MAX. */
#define LOAD_ENGINE_SLOTS_MAX 256
int load_engine_slots(const load_options *o);

/* Runs every level in order (each one calibrated first) and builds the receipt's load
 * section. Returns an error only for invalid options or when the client itself failed
 * (message in `err`); failed attempts are results, not errors. */
pacer_err load_run(const load_options *o, load_result *out, char *err, size_t err_len);

/* Checks a receipt's load section (when present) against everything it can be derived
 * from: attempts re-judged, delivery times consistent with each attempt, every aggregate,
 * throughput and goodput figure recomputed from the stored delivery times, the arrival
 * schedule of rate levels regenerated from the seed, level status and the client-limited
 * flags from client.calibration. `suite_rules` gives the suite's rule version and natural-stop
 * minimum (the section gives the rest). *incomplete tells whether any attempt is not ok. */
pacer_err load_validate(const json_t *receipt, const rules_context *suite_rules, bool *incomplete, char *err,
                        size_t err_len);

/* ---- pure parts (load_stats.c): no I/O ---- */

/* One figure of a level: its key in "aggregates", unit and meaning (docs/receipt.md). */
typedef struct load_metric {
    const char *name;
    const char *label; /* for the inspector's table */
    const char *doc;
} load_metric;
extern const load_metric load_metrics[];
extern const size_t load_metric_count;

/* The arrival offsets (ns from the level's start) of a seeded Poisson process of `rate`
 * per second: splitmix64(seed) draws u in [0,1), each gap is -log1p(-u)/rate seconds
 * rounded to the nanosecond, the first arrival at 0. Writes at most `max` offsets, stopping
 * before one at or past `until_ns` (0: no limit); returns how many. */
size_t load_arrivals(uint64_t seed, double rate, int64_t until_ns, int64_t *out, size_t max);

/* Delivery times as the receipt stores them: "d0,d1,..." with d0 = first delivery - request
 * start and each later value the gap to the previous delivery, ns. Appends to `out`. */
pacer_err load_deltas_encode(int64_t start_ns, const int64_t *times, size_t n, buf *out);
/* Parses such a string into `deltas` (malloc'ed, *n values; NULL when empty). */
pacer_err load_deltas_decode(const char *s, int64_t **deltas, size_t *n);

/* The aggregates of a level from its attempt objects (the receipt's form): per metric of
 * load_metrics {p50, p90, p99, max, mean, n} over the ok attempts (null when none), plus
 * throughput and, with SLOs, goodput. New reference, or NULL with `err` set when an
 * attempt cannot be read. */
json_t *load_level_aggregates(const json_t *attempts, const load_slo *slo, char *err, size_t err_len);

/* True when a level that delivered `deliveries_per_s` ran above the client-limit share of
 * the calibrated maximum (a maximum of 0 flags every level that delivered anything). */
bool load_client_limited(double deliveries_per_s, double calibrated_max_per_s);

/* Parses "ttft=MS,itl=MS" (either or both). */
pacer_err load_slo_parse(const char *s, load_slo *slo);

#endif
