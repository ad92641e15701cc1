/* load.c - the sweep: for each level, a calibration of the client against the loopback
 * emitter at the streams about to be used, then the level itself: every attempt an
 * attempt_stream on one net_multi driver (one thread, epoll), started to keep N in flight
 * or at the seeded arrival schedule, judged by the suite's rules, stored with its start,
 * its scheduled arrival and its delivery times; the level's figures computed from the
 * stored attempts (load_stats.c), as the validator recomputes them. */
#include "bench/load.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/clock.h"
#include "base/json.h"
#include "bench/receipt.h"
#include "net/emitter.h"
#include "net/multi.h"

#define LOAD_REASONS_MAX 20 /* reason lines kept per level; the attempts keep every one */
#define LOAD_CALIBRATION_WARMUP_NS 2000000000LL /* at most this long for every stream to start */

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One attempt of a level, from its start until its callback has stored it. */
typedef struct load_slot {
    struct load_level *lv;
    attempt_request req;
    attempt_sample s;
    attempt_stream *st;
    http_response resp;
    int64_t index;        /* 1-based, in start order */
    int64_t scheduled_ns; /* rate levels: the arrival offset; -1 otherwise */
} load_slot;

typedef struct load_level {
    const load_options *o;
    int level;
    double value;
    net_multi *m;
    int64_t t0, end_ns;   /* start; duration end (0: none) */
    int64_t planned;      /* attempts to start (concurrency levels; 0: until end_ns) */
    int64_t started, finished, not_ok;
    json_t *attempts, *reasons;
    pacer_err err;
} load_level;

static bool load_cancelled(const load_options *o) { return o->cancel_flag && *o->cancel_flag; }

/* Stores a finished attempt at its index: judged, with its times; frees the slot. */
static void load_store(load_slot *sl, pacer_err http_rc) {
    load_level *lv = sl->lv;
    const load_options *o = lv->o;
    if (sl->st) attempt_stream_end(sl->st, http_rc, &sl->resp);
    char why[ATTEMPT_REASON_MAX];
    sl->s.status = rules_judge(&o->rules, &sl->s, why, sizeof why);
    snprintf(sl->s.reason, sizeof sl->s.reason, "%s", why);
    json_t *a = receipt_attempt_to_json(&sl->s, (int)sl->index, false, sl->req.has_seed, sl->req.seed);
    buf d;
    buf_init(&d, (size_t)1 << 28);
    size_t n = 0;
    const int64_t *times = sl->st ? attempt_stream_times(sl->st, &n) : NULL;
    if (!a || load_deltas_encode(sl->resp.start_ns, times, n, &d)) lv->err = PACER_ERR_NOMEM;
    if (a) {
        json_object_set_new(a, "start_ns", json_integer(sl->resp.start_ns - lv->t0));
        json_object_set_new(a, "scheduled_ns", sl->scheduled_ns >= 0 ? json_integer(sl->scheduled_ns) : json_null());
        json_object_set_new(a, "delivery_ns", json_string(d.data ? d.data : ""));
        json_array_set_new(lv->attempts, (size_t)(sl->index - 1), a);
    }
    buf_free(&d);
    lv->finished++;
    if (sl->s.status != ATTEMPT_OK) {
        if (++lv->not_ok <= LOAD_REASONS_MAX) {
            char line[ATTEMPT_REASON_MAX + 40];
            snprintf(line, sizeof line, "attempt %lld: %s: %s", (long long)sl->index, attempt_status_name(sl->s.status),
                     sl->s.reason);
            json_array_append_new(lv->reasons, json_string(line));
        }
    }
    if (o->progress) o->progress(o->progress_ctx, lv->level, o->n_levels, lv->value, lv->finished, lv->planned, &sl->s);
    attempt_stream_free(sl->st);
    http_response_free(&sl->resp);
    free(sl);
}

static void load_start(load_level *lv, int64_t scheduled_ns);

/* True while a concurrency level should start another attempt. */
static bool load_more(const load_level *lv) {
    if (load_cancelled(lv->o) || lv->err) return false;
    if (lv->planned && lv->started >= lv->planned) return false;
    return !lv->end_ns || clock_now_ns() < lv->end_ns;
}

static void load_on_done(void *ctx, pacer_err rc, http_response *resp) {
    load_slot *sl = ctx;
    load_level *lv = sl->lv;
    load_store(sl, rc);
    if (lv->o->kind == LOAD_CONCURRENCY && load_more(lv)) load_start(lv, -1);
}

static void load_start(load_level *lv, int64_t scheduled_ns) {
    const load_options *o = lv->o;
    load_slot *sl = calloc(1, sizeof *sl);
    if (!sl || json_array_append_new(lv->attempts, json_null())) {
        free(sl);
        lv->err = PACER_ERR_NOMEM;
        return;
    }
    sl->lv = lv;
    sl->index = ++lv->started;
    sl->scheduled_ns = scheduled_ns;
    sl->req = o->request;
    sl->req.cancel_flag = o->cancel_flag;
    sl->req.has_seed = !o->rules.greedy;
    sl->req.seed = o->seed_base + sl->index;
    http_response_init(&sl->resp);
    size_t max_times = (size_t)o->request.max_tokens * 8 + 64;
    pacer_err rc = attempt_stream_begin(&sl->req, &sl->s, max_times, &sl->st);
    if (!rc) rc = net_multi_add(lv->m, attempt_stream_http(sl->st), &sl->resp, load_on_done, sl);
    if (rc) load_store(sl, rc); /* a sample that says why it could not start */
}

/* Sleeps until `due` in short steps, so that a cancel is seen promptly. */
static void load_wait_until(const load_options *o, int64_t due) {
    for (int64_t now = clock_now_ns(); now < due && !load_cancelled(o); now = clock_now_ns()) {
        int64_t step = due - now;
        clock_sleep_ns(step < 20000000 ? step : 20000000);
    }
}

/* Starts a rate level's attempts at their arrival times, at most LOAD_MAX_STREAMS in flight. */
static void load_run_rate(load_level *lv) {
    const load_options *o = lv->o;
    size_t max = o->requests ? (size_t)o->requests : o->duration_s > 0 ? LOAD_MAX_REQUESTS : LOAD_DEFAULT_RATE_REQUESTS;
    int64_t *arrivals = malloc(max * sizeof *arrivals);
    if (!arrivals) {
        lv->err = PACER_ERR_NOMEM;
        return;
    }
    int64_t until = o->duration_s > 0 ? (int64_t)llround(o->duration_s * 1e9) : 0;
    size_t n = load_arrivals(o->seed, lv->value, until, arrivals, max);
    lv->planned = (int64_t)n;
    for (size_t i = 0; i < n && !load_cancelled(o) && !lv->err; i++) {
        int64_t due = lv->t0 + arrivals[i];
        while (!lv->err && !load_cancelled(o) && clock_now_ns() < due) {
            if (net_multi_running(lv->m) == 0) load_wait_until(o, due);
            else if ((lv->err = net_multi_run(lv->m, due))) break;
        }
        while (!lv->err && !load_cancelled(o) && net_multi_running(lv->m) >= LOAD_MAX_STREAMS)
            lv->err = net_multi_run(lv->m, clock_now_ns() + 1000000);
        if (!lv->err && !load_cancelled(o)) load_start(lv, arrivals[i]);
    }
    free(arrivals);
}

/* Runs one level into `jl` (its attempts, status, reasons, cpu). */
static void load_level_run(load_level *lv) {
    const load_options *o = lv->o;
    lv->t0 = clock_now_ns();
    lv->end_ns = o->duration_s > 0 ? lv->t0 + (int64_t)llround(o->duration_s * 1e9) : 0;
    if (o->kind == LOAD_CONCURRENCY) {
        int n = (int)lv->value;
        lv->planned = o->requests;
        if (!o->requests && !o->duration_s)
            lv->planned = n * LOAD_DEFAULT_REQUESTS_PER_STREAM > LOAD_DEFAULT_REQUESTS_MIN
                              ? n * LOAD_DEFAULT_REQUESTS_PER_STREAM : LOAD_DEFAULT_REQUESTS_MIN;
        for (int i = 0; i < n && load_more(lv); i++) load_start(lv, -1);
    } else {
        load_run_rate(lv);
    }
    /* what is in flight runs to its end (a cancel ends it within the driver's sweep) */
    while (!lv->err && net_multi_running(lv->m) > 0) lv->err = net_multi_run(lv->m, INT64_MAX);
}

/* ---- calibration ---- */

typedef struct load_cal_slot {
    attempt_request req;
    attempt_sample s;
    attempt_stream *st;
    http_response resp;
} load_cal_slot;

static void load_cal_done(void *ctx, pacer_err rc, http_response *resp) { (void)ctx; }

/* Deliveries of every stream so far; with `streams_with`, the number of streams that had one. */
static int64_t load_cal_deliveries(const load_cal_slot *slots, int streams, bool streams_with) {
    int64_t n = 0;
    for (int i = 0; i < streams; i++) n += streams_with ? slots[i].s.deliveries > 0 : slots[i].s.deliveries;
    return n;
}

/* Measures the client's cost per delivery and its maximum delivery rate on this thread:
 * `streams` endless streams from the loopback emitter for `budget_ms`. */
static pacer_err load_calibrate(int streams, double budget_ms, json_t **out, char *err, size_t err_len) {
    net_emitter *em = NULL;
    net_multi *m = NULL;
    load_cal_slot *slots = calloc((size_t)streams, sizeof *slots);
    int port = 0;
    char url[64];
    pacer_err rc = slots ? net_emitter_start(&em, &port) : PACER_ERR_NOMEM;
    if (!rc) rc = net_multi_new(&m);
    if (rc) {
        snprintf(err, err_len, "calibration: cannot start the loopback emitter: %s", pacer_strerror(rc));
        goto out;
    }
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    for (int i = 0; i < streams && !rc; i++) {
        load_cal_slot *c = &slots[i];
        c->req = (attempt_request){.server_url = url, .model_id = "calibration", .route = ATTEMPT_ROUTE_CHAT,
                                   .prompt = "calibration", .max_tokens = 1 << 24};
        http_response_init(&c->resp);
        rc = attempt_stream_begin(&c->req, &c->s, (size_t)1 << 26, &c->st);
        if (!rc) rc = net_multi_add(m, attempt_stream_http(c->st), &c->resp, load_cal_done, c);
    }
    /* connecting is not what is measured: every stream first delivers, then the budget runs */
    int64_t warm_until = clock_now_ns() + LOAD_CALIBRATION_WARMUP_NS, before = 0;
    while (!rc && load_cal_deliveries(slots, streams, true) < streams && clock_now_ns() < warm_until)
        rc = net_multi_run(m, clock_now_ns() + 1000000);
    before = load_cal_deliveries(slots, streams, false);
    int64_t cpu0 = thread_cpu_ns(), t0 = clock_now_ns();
    if (!rc) rc = net_multi_run(m, t0 + (int64_t)llround(budget_ms * 1e6));
    int64_t cpu = thread_cpu_ns() - cpu0, wall = clock_now_ns() - t0;
    if (rc) {
        snprintf(err, err_len, "calibration failed: %s", pacer_strerror(rc));
        goto out;
    }
    int64_t deliveries = load_cal_deliveries(slots, streams, false) - before;
    double per = deliveries ? (double)cpu / (double)deliveries : 0;
    *out = json_pack("{s:i,s:f,s:I,s:I,s:I,s:o,s:f}", "streams", streams, "budget_ms", budget_ms, "deliveries",
                     (json_int_t)deliveries, "wall_ns", (json_int_t)wall, "cpu_ns", (json_int_t)cpu,
                     "cpu_ns_per_delivery", deliveries ? json_real(per) : json_null(), "max_deliveries_per_s",
                     deliveries && cpu > 0 ? (double)deliveries / ((double)cpu / 1e9) : 0.0);
    if (!*out) rc = PACER_ERR_NOMEM;
out:
    net_multi_free(m); /* ends the endless streams */
    net_emitter_stop(em);
    for (int i = 0; slots && i < streams; i++) {
        attempt_stream_free(slots[i].st);
        http_response_free(&slots[i].resp);
    }
    free(slots);
    return rc;
}

/* With `on`, puts the calling thread at the lowest real-time priority (SCHED_FIFO 1): on a
 * busy machine a normal thread waits for its turn behind others, and every delivery that
 * arrives meanwhile is stamped late (measured here: p99 gap error 47 ms normal, 2.8 ms
 * real-time, 256 paced streams, load average 14 on 2 cores). The thread blocks in epoll
 * whenever it has nothing to read (unless busy-polling), and the kernel's real-time
 * throttling still leaves the others their share: a busy-polling thread at this priority
 * is stopped for ~50 ms in a second when another process waits for its core. Without `on`,
 * back to normal. Returns what the level ran with: "realtime", or "realtime-refused" (no
 * permission). */
static const char *load_realtime(bool on) {
    struct sched_param sp = {.sched_priority = on ? 1 : 0};
    int rc = pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &sp);
    return rc == 0 ? "realtime" : "realtime-refused";
}

/* ---- the sweep ---- */

int load_engine_slots(const load_options *o) {
    double most = o->kind == LOAD_RATE ? LOAD_RATE_CALIBRATION_STREAMS : 1;
    for (int i = 0; o->kind == LOAD_CONCURRENCY && i < o->n_levels; i++)
        if (o->levels[i] > most) most = o->levels[i];
    return most > LOAD_ENGINE_SLOTS_MAX ? LOAD_ENGINE_SLOTS_MAX : (int)most;
}

pacer_err load_options_check(const load_options *o, char *err, size_t err_len) {
    if (o->n_levels < 1 || o->n_levels > LOAD_MAX_LEVELS) {
        snprintf(err, err_len, "a load sweep needs 1 to %d levels", LOAD_MAX_LEVELS);
        return PACER_ERR_ARG;
    }
    for (int i = 0; i < o->n_levels; i++) {
        double v = o->levels[i];
        bool ok = o->kind == LOAD_CONCURRENCY ? v >= 1 && v <= LOAD_MAX_STREAMS && v == floor(v)
                                              : v > 0 && v <= 1e6 && isfinite(v);
        if (!ok) {
            snprintf(err, err_len, o->kind == LOAD_CONCURRENCY ? "concurrency %g: expected a whole number 1..%d"
                                                             : "rate %g: expected requests per second > 0 (at most 1e6)",
                     v, LOAD_MAX_STREAMS);
            return PACER_ERR_ARG;
        }
    }
    if (o->requests < 0 || o->requests > LOAD_MAX_REQUESTS || o->duration_s < 0) {
        snprintf(err, err_len, "--requests: 1..%d per level; --duration: seconds", LOAD_MAX_REQUESTS);
        return PACER_ERR_ARG;
    }
    return PACER_OK;
}

/* Raises the soft limit on open files to the hard one when a level needs more sockets than
 * it allows (1024 is a common default; each stream holds one socket, its calibration one
 * more). Nothing is lost when it cannot: streams past the limit fail with their reason. */
static void load_raise_fd_limit(const load_options *o) {
    double most = o->kind == LOAD_CONCURRENCY ? 0 : LOAD_MAX_STREAMS;
    for (int i = 0; i < o->n_levels; i++) most = o->levels[i] > most ? o->levels[i] : most;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (double)rl.rlim_cur < 2 * most + 64 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

pacer_err load_run(const load_options *o, load_result *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    pacer_err rc = load_options_check(o, err, err_len);
    if (rc) return rc;
    load_raise_fd_limit(o);
    double budget = o->calibration_ms > 0 ? o->calibration_ms : LOAD_DEFAULT_CALIBRATION_MS;
    json_t *levels = json_array(), *cal_levels = json_array();
    for (int li = 0; li < o->n_levels && !out->cancelled; li++) {
        int streams = o->kind == LOAD_CONCURRENCY ? (int)o->levels[li] : LOAD_RATE_CALIBRATION_STREAMS;
        json_t *cal = NULL;
        if ((rc = load_calibrate(streams, budget, &cal, err, err_len))) break;
        json_array_append_new(cal_levels, cal);
        load_level lv = {.o = o, .level = li, .value = o->levels[li], .attempts = json_array(), .reasons = json_array()};
        if ((rc = net_multi_new(&lv.m))) {
            snprintf(err, err_len, "cannot start the load driver: %s", pacer_strerror(rc));
            json_decref(lv.attempts), json_decref(lv.reasons);
            break;
        }
        const char *prio = o->realtime ? load_realtime(true) : "normal";
        char scheduling[48];
        if (o->busy_poll) net_multi_busy_poll(lv.m, true);
        snprintf(scheduling, sizeof scheduling, "%s%s", o->busy_poll && !o->realtime ? "" : prio,
                 !o->busy_poll ? "" : o->realtime ? "+busy-poll" : "busy-poll");
        int64_t cpu0 = thread_cpu_ns();
        load_level_run(&lv);
        int64_t cpu = thread_cpu_ns() - cpu0;
        if (o->realtime) load_realtime(false);
        net_multi_free(lv.m);
        if (lv.err) {
            rc = lv.err;
            snprintf(err, err_len, "the load driver failed: %s", pacer_strerror(rc));
            json_decref(lv.attempts), json_decref(lv.reasons);
            break;
        }
        if (lv.not_ok > LOAD_REASONS_MAX)
            json_array_append_new(lv.reasons, json_sprintf("... and %lld more", (long long)(lv.not_ok - LOAD_REASONS_MAX)));
        out->cancelled = load_cancelled(o);
        if (lv.not_ok || out->cancelled) out->incomplete = true;
        json_t *agg = load_level_aggregates(lv.attempts, &o->slo, err, err_len);
        if (!agg) {
            rc = PACER_ERR_INTERNAL;
            json_decref(lv.attempts), json_decref(lv.reasons);
            break;
        }
        double rate = json_get_num(json_object_get(agg, "throughput"), "deliveries_per_s", 0);
        bool limited = load_client_limited(rate, json_get_num(cal, "max_deliveries_per_s", 0));
        json_t *jl = json_pack("{s:s,s:o,s:o,s:s,s:o,s:I,s:b,s:o,s:o}", "client_scheduling", scheduling, "concurrency",
                               o->kind == LOAD_CONCURRENCY ? json_integer((json_int_t)lv.value) : json_null(), "rate",
                               o->kind == LOAD_RATE ? json_real(lv.value) : json_null(), "status",
                               lv.not_ok || lv.started == 0 ? "incomplete" : "complete", "reasons", lv.reasons,
                               "client_cpu_ns", (json_int_t)cpu, "client_limited", limited, "attempts", lv.attempts,
                               "aggregates", agg);
        json_array_append_new(levels, jl);
    }
    if (rc) {
        json_decref(levels);
        json_decref(cal_levels);
        return rc;
    }
    const load_slo *slo = &o->slo;
    out->section = json_pack("{s:s,s:s,s:s,s:s,s:f,s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "kind",
                             o->kind == LOAD_RATE ? "rate" : "concurrency", "workload", o->workload ? o->workload : "",
                             "setting", o->setting ? o->setting : "", "route", attempt_route_name(o->request.route),
                             "temperature", o->request.temperature, "seed_base", (json_int_t)o->seed_base,
                             "requests", o->requests ? json_integer(o->requests) : json_null(), "duration_s",
                             o->duration_s > 0 ? json_real(o->duration_s) : json_null(), "seed",
                             o->kind == LOAD_RATE ? json_integer((json_int_t)o->seed) : json_null(), "slo",
                             slo->has_ttft || slo->has_itl
                                 ? json_pack("{s:o,s:o}", "ttft_ms", slo->has_ttft ? json_real(slo->ttft_ms) : json_null(),
                                             "itl_ms", slo->has_itl ? json_real(slo->itl_ms) : json_null())
                                 : json_null(),
                             "levels", levels, "max_tokens", json_integer(o->request.max_tokens));
    out->calibration = json_pack("{s:s,s:f,s:f,s:o}", "method", "loopback-emitter", "budget_ms", budget,
                                 "client_limit_share", LOAD_CLIENT_LIMIT_SHARE, "levels", cal_levels);
    return out->section && out->calibration ? PACER_OK : PACER_ERR_NOMEM;
}
