/* load_check.c - the validator of a receipt's load section: it trusts no figure the
 * section states. Every attempt is re-judged under the suite's rules, its delivery times
 * must add up to its first-text time, span and count, rate levels' arrivals are
 * regenerated from the seed, and every aggregate, throughput and goodput figure and every
 * client-limited flag is recomputed. No I/O. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "bench/load.h"
#include "bench/receipt.h"

#define LFAIL(...) do { snprintf(err, err_len, __VA_ARGS__); rc = PACER_ERR_FORMAT; goto out; } while (0)

/* The delivery times of attempt `a` agree with its count, first-text time and span. */
static bool load_times_agree(const json_t *a, const attempt_sample *s) {
    int64_t *d = NULL;
    size_t n = 0;
    if (load_deltas_decode(json_get_str(a, "delivery_ns", "-"), &d, &n)) return false;
    bool ok = (int64_t)n == s->deliveries;
    if (ok && n > 0) {
        int64_t span = 0;
        for (size_t i = 1; i < n; i++) span += d[i];
        ok = s->has_first_text && d[0] == s->first_text_ns && span == s->delivery_span_ns;
    }
    free(d);
    return ok;
}

/* Checks the attempts of level `li`; counts those not ok. */
static pacer_err load_check_attempts(const json_t *sec, const json_t *lvl, size_t li, const rules_context *ctx,
                                     int64_t *not_ok, char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    bool rate = strcmp(json_get_str(sec, "kind", ""), "rate") == 0;
    const char *route = json_get_str(sec, "route", "");
    int64_t seed_base = json_get_int(sec, "seed_base", 0), requests = json_get_int(sec, "requests", 0);
    double duration = json_get_num(sec, "duration_s", 0);
    const json_t *atts = json_object_get(lvl, "attempts");
    size_t n = json_array_size(atts);
    int64_t *arrivals = NULL;
    if (rate) {
        double r = json_get_num(lvl, "rate", 0);
        size_t max = requests > 0 ? (size_t)requests : duration > 0 ? LOAD_MAX_REQUESTS : LOAD_DEFAULT_RATE_REQUESTS;
        if (!(r > 0) || !json_is_integer(json_object_get(sec, "seed"))) LFAIL("load check failed: level %zu has no rate or the sweep no seed", li);
        if (!(arrivals = malloc(max * sizeof *arrivals))) { rc = PACER_ERR_NOMEM; goto out; }
        size_t planned = load_arrivals((uint64_t)json_get_int(sec, "seed", 0), r, duration > 0 ? llround(duration * 1e9) : 0,
                                       arrivals, max);
        if (n > planned) LFAIL("load check failed: level %zu has %zu attempts, its schedule %zu", li, n, planned);
    } else if (requests > 0 && (int64_t)n > requests) {
        LFAIL("load check failed: level %zu has more attempts than requests", li);
    }
    size_t ai;
    json_t *a;
    json_array_foreach(atts, ai, a) {
        attempt_sample s;
        char why[200];
        if (receipt_attempt_from_json(a, &s, why, sizeof why)) LFAIL("attempt check failed: level %zu attempt %zu: %s", li, ai, why);
        if (strcmp(attempt_route_name(s.route), route) != 0)
            LFAIL("route check failed: level %zu attempt %zu used route %s", li, ai, attempt_route_name(s.route));
        json_t *seed = json_object_get(a, "seed");
        if (json_get_int(a, "index", -1) != (int64_t)ai + 1 || json_is_true(json_object_get(a, "warmup")))
            LFAIL("load check failed: level %zu attempt %zu is out of order", li, ai);
        if (ctx->greedy ? !json_is_null(seed) : json_get_int(a, "seed", -1) != seed_base + (int64_t)ai + 1)
            LFAIL("seed check failed: level %zu attempt %zu does not use the sweep's seed", li, ai);
        attempt_status judged;
        if (!receipt_rejudge(ctx, &s, &judged))
            LFAIL("rules check failed: level %zu attempt %zu is '%s' but the rules make it '%s'", li, ai,
                  attempt_status_name(s.status), attempt_status_name(judged));
        if (!load_times_agree(a, &s))
            LFAIL("measurement check failed: level %zu attempt %zu delivery times do not match its first text, span and "
                  "deliveries", li, ai);
        json_t *sched = json_object_get(a, "scheduled_ns");
        int64_t start = json_get_int(a, "start_ns", -1);
        if (rate ? !json_is_integer(sched) || json_integer_value(sched) != arrivals[ai] || start < arrivals[ai]
                 : !json_is_null(sched))
            LFAIL("schedule check failed: level %zu attempt %zu is not at its seeded arrival", li, ai);
        if (s.status != ATTEMPT_OK) ++*not_ok;
    }
out:
    free(arrivals);
    return rc;
}

pacer_err load_validate(const json_t *r, const rules_context *suite_rules, bool *incomplete, char *err, size_t err_len) {
    pacer_err rc = PACER_OK;
    *incomplete = false;
    const json_t *sec = json_object_get(r, "load");
    if (!sec) return PACER_OK;
    const json_t *cal = json_get_path(r, "client.calibration");
    const json_t *levels = json_object_get(sec, "levels"), *cal_levels = json_object_get(cal, "levels");
    const char *kind = json_get_str(sec, "kind", "");
    if (!json_is_object(sec) || !json_is_array(levels) || (strcmp(kind, "rate") != 0 && strcmp(kind, "concurrency") != 0))
        LFAIL("load check failed: the load section needs a kind and levels");
    if (json_array_size(cal_levels) != json_array_size(levels))
        LFAIL("load check failed: client.calibration has no entry for every level");
    if (json_is_true(json_get_path(r, "suite.standard"))) LFAIL("load check failed: a load sweep is never a standard run");
    rules_context ctx = *suite_rules;
    ctx.max_tokens = (int)json_get_int(sec, "max_tokens", -1);
    ctx.greedy = json_get_num(sec, "temperature", -1) == 0.0;
    if (ctx.max_tokens < 1) LFAIL("load check failed: max_tokens");
    load_slo slo = {0};
    json_t *jslo = json_object_get(sec, "slo");
    if (json_is_object(jslo)) {
        json_t *t = json_object_get(jslo, "ttft_ms"), *i = json_object_get(jslo, "itl_ms");
        slo = (load_slo){json_is_number(t), json_is_number(i), json_number_value(t), json_number_value(i)};
    }
    size_t li;
    json_t *lvl;
    json_array_foreach(levels, li, lvl) {
        int64_t not_ok = 0;
        if ((rc = load_check_attempts(sec, lvl, li, &ctx, &not_ok, err, err_len))) goto out;
        size_t n = json_array_size(json_object_get(lvl, "attempts"));
        const char *want = not_ok || n == 0 ? "incomplete" : "complete";
        if (strcmp(json_get_str(lvl, "status", ""), want) != 0)
            LFAIL("load check failed: level %zu is marked '%s' but its attempts make it %s", li,
                  json_get_str(lvl, "status", ""), want);
        if (not_ok || n == 0) *incomplete = true;
        char why[200] = "";
        json_t *agg = load_level_aggregates(json_object_get(lvl, "attempts"), &slo, why, sizeof why);
        if (!agg) LFAIL("attempt check failed: level %zu: %s", li, why);
        bool same = receipt_numbers_close(agg, json_object_get(lvl, "aggregates"));
        double rate = json_get_num(json_object_get(agg, "throughput"), "deliveries_per_s", 0);
        json_decref(agg);
        if (!same) LFAIL("aggregate check failed: level %zu figures do not follow from its delivery times", li);
        double max = json_get_num(json_array_get(cal_levels, li), "max_deliveries_per_s", -1);
        if (max < 0) LFAIL("load check failed: calibration %zu has no max_deliveries_per_s", li);
        if (json_is_true(json_object_get(lvl, "client_limited")) != load_client_limited(rate, max))
            LFAIL("load check failed: level %zu client_limited does not follow from its rate and the calibration", li);
    }
out:
    return rc;
}
