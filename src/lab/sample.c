/* sample.c - one fresh-process sample: power reading, engine start (not timed), the request
 * with the answer collected and checked as it streams, final checks, stop, record. */
#include "lab/sample.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "bench/attempt.h"
#include "lab/cycle.h"

/* Why the sample was stopped from inside the stream. */
typedef enum stop_reason { STOP_NONE = 0, STOP_CYCLE, STOP_POWER, STOP_MEMORY, STOP_TOO_LONG } stop_reason;

typedef struct watch {
    const lab_sample_job *job;
    lab_engine *engine;
    buf *answer;
    int64_t t0_ns, next_check_ns, period_ns;
    stop_reason stop;
    bool has_cycle;
    lab_cycle cycle;
    int64_t cycle_at_ns;
    int64_t peak_rss;
    bool has_peak_rss;
    json_t *readings;
} watch;

static void add_reading(watch *w, int64_t now_ns) {
    json_array_append_new(w->readings, json_pack("{s:I,s:s}", "at_ms", (json_int_t)((now_ns - w->t0_ns) / 1000000),
                                                 "state", probe_power_name(w->job->power->now)));
}

static void read_memory(watch *w) {
    int64_t b;
    if (lab_engine_peak_rss(w->engine, &b) && (!w->has_peak_rss || b > w->peak_rss)) w->peak_rss = b, w->has_peak_rss = true;
}

/* The checks of DESIGN.md 11, run every period and once at the end: a cycle at the tail,
 * the power source, the engine's memory. Returns the first reason to stop, if any. */
static stop_reason run_checks(watch *w, int64_t now_ns) {
    if (!w->has_cycle && lab_cycle_find(w->answer->data ? w->answer->data : "", w->answer->len, &w->cycle)) {
        w->has_cycle = true;
        w->cycle_at_ns = now_ns;
    }
    bool changed = power_watch_poll(w->job->power, true) != PACER_OK;
    add_reading(w, now_ns);
    read_memory(w);
    if (w->has_cycle) return STOP_CYCLE;
    if (changed) return STOP_POWER;
    if (w->job->has_memory_limit && w->has_peak_rss && w->peak_rss > w->job->memory_limit_bytes) return STOP_MEMORY;
    return STOP_NONE;
}

static pacer_err on_text(void *ctx, const char *text, size_t n, int64_t t_ns) {
    watch *w = ctx;
    if (buf_append(w->answer, text, n)) {
        w->stop = STOP_TOO_LONG;
        return PACER_ERR_TOO_BIG;
    }
    if (t_ns < w->next_check_ns) return PACER_OK;
    w->next_check_ns = t_ns + w->period_ns;
    w->stop = run_checks(w, t_ns);
    return w->stop ? PACER_ERR_CANCELLED : PACER_OK;
}

static void copy_str(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

/* The measured figures of the attempt, client and server side kept apart. */
static void take_figures(lab_record *r, const attempt_sample *a) {
    r->has_http_status = a->http_status != 0;
    r->http_status = a->http_status;
    copy_str(r->server_finish_reason, sizeof r->server_finish_reason, a->finish_reason);
    r->has_usage = a->has_usage;
    r->prefill_tokens = a->prompt_tokens;
    r->decode_tokens = a->completion_tokens;
    r->has_first_text = a->has_first_text;
    r->first_text_ns = a->first_text_ns;
    r->completion_ns = a->duration_ns;
    r->delivery_span_ns = a->delivery_span_ns;
    r->deliveries = a->deliveries;
    if (a->has_usage && a->has_first_text && a->first_text_ns > 0)
        r->has_prefill_tok_s = true, r->prefill_tok_s = (double)a->prompt_tokens / ((double)a->first_text_ns / 1e9);
    r->has_decode_tok_s = a->has_stream_tok_s;
    r->decode_tok_s = a->stream_tok_s;
    if (a->has_usage && a->has_server_prompt_ms && a->server_prompt_ms > 0)
        r->has_server_prefill_tok_s = true,
        r->server_prefill_tok_s = (double)a->prompt_tokens / (a->server_prompt_ms / 1e3);
    r->has_server_decode_tok_s = a->has_server_predicted_per_second;
    r->server_decode_tok_s = a->server_predicted_per_second;
}

/* finish and validity from what happened, first cause first. */
static void judge(lab_sample_result *out, const watch *w, const attempt_sample *a, bool engine_died, int cap) {
    lab_record *r = &out->rec;
    if (w->has_cycle) {
        r->finish = LAB_FINISH_CYCLE;
    } else if (engine_died) {
        r->finish = LAB_FINISH_ERROR;
        snprintf(r->error, sizeof r->error, "the engine exited during the request (%.200s)", a->reason[0] ? a->reason : "no reason");
        out->stop_suite = true;
    } else if (w->stop == STOP_TOO_LONG) {
        r->finish = LAB_FINISH_ERROR;
        snprintf(r->error, sizeof r->error, "the answer passed %u bytes", LAB_ANSWER_MAX);
    } else if (w->stop == STOP_NONE && a->status == ATTEMPT_FAILED && a->http_status == 200 && a->finish_reason[0] &&
               a->deliveries == 0) {
        /* the server ended its reply normally with nothing in it: an empty answer, not a failure */
        r->finish = strcmp(a->finish_reason, "length") == 0 ? LAB_FINISH_CAPPED : LAB_FINISH_EOS;
        if (r->finish == LAB_FINISH_CAPPED) copy_str(r->capped_by, sizeof r->capped_by, "cap");
    } else if (w->stop == STOP_NONE && (a->status == ATTEMPT_FAILED || a->status == ATTEMPT_CANCELLED)) {
        /* the engine refusing this one request (HTTP 4xx) is this sample's error; a broken
         * stream, no answer at all or a server error is the engine's: the suite stops */
        r->finish = LAB_FINISH_ERROR;
        if (a->server_message[0]) snprintf(r->error, sizeof r->error, "%.120s: %.120s", a->reason, a->server_message);
        else copy_str(r->error, sizeof r->error, a->reason);
        out->stop_suite = a->http_status < 400 || a->http_status >= 500;
    } else if (w->stop != STOP_NONE) {
        r->finish = LAB_FINISH_ERROR;
        snprintf(r->error, sizeof r->error, "stopped by the %s check", w->stop == STOP_POWER ? "power" : "memory");
    } else if (strcmp(a->finish_reason, "length") == 0 || (!strcmp(a->finish_reason, "") && a->completion_tokens >= cap)) {
        r->finish = LAB_FINISH_CAPPED;
        copy_str(r->capped_by, sizeof r->capped_by, a->has_usage && a->completion_tokens < cap ? "context" : "cap");
    } else {
        r->finish = LAB_FINISH_EOS;
    }
    const power_watch *pw = w->job->power;
    if (pw->changed) {
        r->validity = LAB_INVALIDATED;
        snprintf(r->validity_reason, sizeof r->validity_reason, "power source changed: %s -> %s",
                 probe_power_name(pw->expected), probe_power_name(pw->now));
        out->stop_suite = true;
    } else if (w->job->has_memory_limit && w->has_peak_rss && w->peak_rss > w->job->memory_limit_bytes) {
        r->validity = LAB_INVALIDATED;
        snprintf(r->validity_reason, sizeof r->validity_reason, "memory-limit: the engine's peak %lld bytes passed the %lld of physical memory",
                 (long long)w->peak_rss, (long long)w->job->memory_limit_bytes);
        out->stop_suite = true;
    }
}

static void set_identity(lab_record *r, const lab_sample_job *job) {
    const lab_slot *sl = job->slot;
    const lab_workload *wl = &job->suite->workloads[sl->workload];
    copy_str(r->id, sizeof r->id, sl->id);
    r->index = sl->index;
    r->round = sl->round;
    copy_str(r->workload, sizeof r->workload, wl->name);
    copy_str(r->config, sizeof r->config, job->suite->configs[sl->config].name);
    copy_str(r->kind, sizeof r->kind, lab_kind_name(wl->kind));
    r->cap = job->cap;
    r->attempt = 1;
    if (job->has_memory_limit) r->has_memory_limit = true, r->memory_limit_bytes = job->memory_limit_bytes;
    clock_utc_iso8601(r->started_utc);
}

static bool store_stat(const char *path, struct stat *st) { return stat(path, st) == 0; }

static bool store_changed(const struct stat *a, const struct stat *b) {
    return a->st_ino != b->st_ino || a->st_size != b->st_size || a->st_mtim.tv_sec != b->st_mtim.tv_sec ||
           a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

static void cycle_evidence(lab_record *r, const watch *w, const char *text) {
    const lab_cycle *c = &w->cycle;
    r->cycle = json_pack("{s:i,s:i,s:I,s:I,s:I,s:s%,s:I}", "block_words", c->block_words, "repeats", c->repeats,
                         "loop_start_byte", (json_int_t)c->loop_start, "block_start_byte", (json_int_t)c->block_start,
                         "block_end_byte", (json_int_t)c->block_end, "block", text + c->block_start,
                         c->block_end - c->block_start, "found_at_ms", (json_int_t)((w->cycle_at_ns - w->t0_ns) / 1000000));
}

static void request(const lab_sample_job *job, lab_engine *e, watch *w, attempt_sample *a) {
    const lab_workload *wl = &job->suite->workloads[job->slot->workload];
    const launch_adapter *ad = e->m.adapter;
    attempt_request req = {
        .server_url = e->m.url,
        .model_id = e->m.served_name,
        .route = wl->route,
        .prompt = wl->prompt,
        .messages = wl->messages,
        .max_tokens = job->cap,
        .temperature = job->suite->temperature,
        .has_seed = true,
        .seed = job->suite->seed,
        .disable_thinking = job->suite->disable_thinking,
        .disable_prompt_cache = true,
        .server_tok_s_field = ad->server_tok_s_field ? ad->server_tok_s_field : "",
        .prefill_ms_field = ad->prefill_ms_field ? ad->prefill_ms_field : "",
        .total_timeout_ms = 6ll * 3600 * 1000,
        .cancel_flag = job->cancel,
        .on_text = on_text,
        .on_text_ctx = w,
    };
    attempt_run(&req, a);
}

void lab_sample_run(const lab_sample_job *job, lab_sample_result *out) {
    memset(out, 0, sizeof *out);
    buf_init(&out->answer, LAB_ANSWER_MAX);
    lab_record *r = &out->rec;
    set_identity(r, job);
    watch w = {.job = job, .answer = &out->answer, .t0_ns = clock_now_ns(), .readings = json_array()};
    w.period_ns = (int64_t)job->suite->check_every_s * 1000000000;
    struct stat before, after;
    bool had_store = store_stat(job->store_path, &before);
    bool changed_at_start = power_watch_poll(job->power, true) != PACER_OK; /* process boundary */
    add_reading(&w, w.t0_ns);
    lab_engine *e = job->engine;
    w.engine = e;
    attempt_sample a;
    memset(&a, 0, sizeof a);
    bool died = false;
    char err[LAB_REASON_MAX] = "";
    lab_engine_status st = changed_at_start ? LAB_ENGINE_FAILED : lab_engine_start(e, job->cancel, err, sizeof err);
    if (st == LAB_ENGINE_CANCELLED) {
        out->cancelled = true;
    } else if (changed_at_start || st != LAB_ENGINE_READY) {
        r->finish = LAB_FINISH_ERROR;
        snprintf(r->error, sizeof r->error, "%s", changed_at_start ? "not started: the power source had changed" : err);
        out->stop_suite = true;
    } else {
        r->has_load_ns = true;
        r->load_ns = e->load_ns;
        w.next_check_ns = clock_now_ns() + w.period_ns;
        request(job, e, &w, &a);
        if (a.status == ATTEMPT_CANCELLED && w.stop == STOP_NONE) out->cancelled = true;
        read_memory(&w);
        died = !lab_engine_alive(e);
        /* a stream that broke off: give a dying engine a moment to be seen as such */
        for (int i = 0; i < 50 && !died && a.status == ATTEMPT_FAILED && a.http_status < 400; i++) {
            clock_sleep_ns(20000000);
            died = !lab_engine_alive(e);
        }
        if (!w.stop) w.stop = run_checks(&w, clock_now_ns()); /* once at the end */
        lab_engine_stop(e, out->cancelled);
    }
    power_watch_poll(job->power, true); /* process boundary */
    add_reading(&w, clock_now_ns());
    take_figures(r, &a);
    judge(out, &w, &a, died && !out->cancelled, job->cap);
    if (r->validity == LAB_VALID && had_store && (!store_stat(job->store_path, &after) || store_changed(&before, &after))) {
        r->validity = LAB_INVALIDATED;
        snprintf(r->validity_reason, sizeof r->validity_reason, "store-built: the weight store changed during the sample");
        out->stop_suite = true;
    }
    if (w.has_peak_rss) r->has_peak_rss = true, r->peak_rss_bytes = w.peak_rss;
    r->power = json_pack("{s:s,s:b,s:o}", "expected", probe_power_name(job->power->expected), "changed",
                         job->power->changed, "readings", w.readings);
    if (w.has_cycle) cycle_evidence(r, &w, out->answer.data);
    if (job->suite->workloads[job->slot->workload].kind == LAB_KIND_SVG && r->finish != LAB_FINISH_ERROR) {
        lab_svg_check(out->answer.data ? out->answer.data : "", out->answer.len, &out->svg);
        if (!out->svg.valid && r->validity == LAB_VALID) {
            r->validity = LAB_CONTENT_INVALID;
            snprintf(r->validity_reason, sizeof r->validity_reason, "svg: %s", out->svg.reason);
        }
    }
    r->answer_bytes = (int64_t)out->answer.len;
    clock_utc_iso8601(r->ended_utc);
}

void lab_sample_result_free(lab_sample_result *r) {
    lab_record_free(&r->rec);
    buf_free(&r->answer);
}
