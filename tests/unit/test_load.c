/* test_load.c - bench/load's pure parts (arrival schedules, delivery-time encoding, SLO
 * parsing, level aggregates and goodput, the client-limited rule) and the one-thread
 * driver against the in-process emitter (many endless streams moved along together, a
 * deadline kept, every transfer ended on free). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "base/clock.h"
#include "bench/load.h"
#include "bench/receipt.h"
#include "net/emitter.h"
#include "net/multi.h"

Test(load, arrivals_are_seeded_and_reproducible) {
    int64_t a[2000], b[2000], c[2000];
    size_t n = load_arrivals(42, 10.0, 0, a, 2000);
    cr_assert_eq(n, 2000);
    cr_assert_eq(load_arrivals(42, 10.0, 0, b, 2000), 2000);
    cr_assert_eq(memcmp(a, b, sizeof a), 0, "the same seed gives the same schedule");
    load_arrivals(43, 10.0, 0, c, 2000);
    cr_assert_neq(memcmp(a, c, sizeof a), 0, "another seed, another schedule");
    cr_assert_eq(a[0], 0, "the first request starts the level");
    for (size_t i = 1; i < n; i++) cr_assert_geq(a[i], a[i - 1]);
    /* exponential gaps of mean 1/rate: 1999 of them average 100 ms within a few percent */
    double mean = (double)a[n - 1] / (double)(n - 1) / 1e6;
    cr_assert(mean > 90 && mean < 110, "mean gap %.1f ms", mean);
    /* twice the rate: the same draws, every gap halved (to the nanosecond's rounding) */
    load_arrivals(42, 20.0, 0, c, 2000);
    for (size_t i = 1; i < 10; i++) cr_assert_leq(llabs(2 * (c[i] - c[i - 1]) - (a[i] - a[i - 1])), 2);
    /* a duration stops the schedule before its end */
    size_t m = load_arrivals(42, 10.0, 5000000000LL, b, 2000);
    cr_assert(m > 0 && m < 2000);
    cr_assert_lt(b[m - 1], 5000000000LL);
    cr_assert_geq(a[m], 5000000000LL);
}

Test(load, deltas_round_trip_and_refuse_junk) {
    int64_t times[] = {1000, 1500, 1500, 9000};
    buf b;
    buf_init(&b, 1 << 16);
    cr_assert_eq(load_deltas_encode(400, times, 4, &b), PACER_OK);
    cr_assert_str_eq(b.data, "600,500,0,7500");
    int64_t *d;
    size_t n;
    cr_assert_eq(load_deltas_decode(b.data, &d, &n), PACER_OK);
    cr_assert_eq(n, 4);
    cr_assert(d[0] == 600 && d[1] == 500 && d[2] == 0 && d[3] == 7500);
    free(d);
    cr_assert_eq(load_deltas_decode("", &d, &n), PACER_OK);
    cr_assert(n == 0 && d == NULL);
    static const char *const bad[] = {"1,,2", "-1", "a", "1,", ",1", "1 ,2", "+1", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(load_deltas_decode(bad[i], &d, &n), PACER_ERR_PARSE, "accepted '%s'", bad[i]);
    buf_free(&b);
}

Test(load, slo_parse) {
    load_slo s;
    cr_assert_eq(load_slo_parse("ttft=200,itl=50", &s), PACER_OK);
    cr_assert(s.has_ttft && s.has_itl && s.ttft_ms == 200 && s.itl_ms == 50);
    cr_assert_eq(load_slo_parse("itl=12.5", &s), PACER_OK);
    cr_assert(!s.has_ttft && s.has_itl && s.itl_ms == 12.5);
    static const char *const bad[] = {"", "ttft", "ttft=", "ttft=0", "ttft=-1", "tpot=5", "ttft=1,ttft=2", "ttft=1x",
                                      "itl=nan", "itl=inf"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_neq(load_slo_parse(bad[i], &s), PACER_OK, "accepted '%s'", bad[i]);
}

Test(load, client_limited_rule) {
    cr_assert(!load_client_limited(400, 1000));
    cr_assert(!load_client_limited(500, 1000), "exactly half is not above half");
    cr_assert(load_client_limited(501, 1000));
    cr_assert(load_client_limited(1, 0), "a calibration that measured nothing flags every level");
    cr_assert(!load_client_limited(0, 0), "a level that delivered nothing is not limited by the client");
}

/* An ok attempt as the receipt stores it: first text after `ttft` ns, gaps `gaps`. */
static json_t *attempt_json(int index, int64_t start, int64_t ttft, const int64_t *gaps, int n_gaps, int64_t tokens,
                            attempt_status status) {
    attempt_sample s;
    memset(&s, 0, sizeof s);
    s.route = ATTEMPT_ROUTE_CHAT;
    s.status = status;
    s.has_usage = true;
    s.completion_tokens = tokens;
    s.has_first_text = true;
    s.first_text_ns = ttft;
    s.deliveries = n_gaps + 1;
    int64_t span = 0;
    char d[512];
    int o = snprintf(d, sizeof d, "%lld", (long long)ttft);
    for (int i = 0; i < n_gaps; i++) span += gaps[i], o += snprintf(d + o, sizeof d - (size_t)o, ",%lld", (long long)gaps[i]);
    s.delivery_span_ns = span;
    s.duration_ns = ttft + span + 1000000;
    s.has_stream_tok_s = true;
    s.stream_tok_s = (double)(tokens - 1) / ((double)span / 1e9);
    json_t *a = receipt_attempt_to_json(&s, index, false, false, 0);
    json_object_set_new(a, "start_ns", json_integer(start));
    json_object_set_new(a, "scheduled_ns", json_null());
    json_object_set_new(a, "delivery_ns", json_string(d));
    return a;
}

Test(load, level_aggregates_follow_from_delivery_times) {
    const int64_t g1[] = {10000000, 10000000, 30000000}; /* 3 deliveries after the first: 10, 10, 30 ms */
    const int64_t g2[] = {20000000};                    /* one gap of 20 ms carrying 4 tokens */
    json_t *atts = json_array();
    json_array_append_new(atts, attempt_json(1, 0, 100000000, g1, 3, 4, ATTEMPT_OK));
    json_array_append_new(atts, attempt_json(2, 5000000, 300000000, g2, 1, 5, ATTEMPT_OK));
    json_array_append_new(atts, attempt_json(3, 0, 50000000, g1, 3, 4, ATTEMPT_FAILED));
    load_slo slo = {.has_ttft = true, .ttft_ms = 200, .has_itl = true, .itl_ms = 25};
    char err[200];
    json_t *agg = load_level_aggregates(atts, &slo, err, sizeof err);
    cr_assert_not_null(agg, "%s", err);
    json_t *ttft = json_object_get(agg, "ttft_ms"), *itl = json_object_get(agg, "itl_ms");
    cr_assert_eq(json_integer_value(json_object_get(ttft, "n")), 2, "only ok attempts count");
    cr_assert_float_eq(json_number_value(json_object_get(ttft, "p50")), 200.0, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(ttft, "max")), 300.0, 1e-9);
    /* pooled gaps 10, 10, 30, 20: linear interpolation, p50 = 15, p90 = 27 */
    cr_assert_eq(json_integer_value(json_object_get(itl, "n")), 4);
    cr_assert_float_eq(json_number_value(json_object_get(itl, "p50")), 15.0, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(itl, "p90")), 27.0, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(itl, "mean")), 17.5, 1e-9);
    /* per token: attempt 2's 20 ms gap carried 4 tokens, 5 ms each, weight 4 of a total of 7 */
    json_t *tok = json_object_get(agg, "itl_token_ms");
    cr_assert_float_eq(json_number_value(json_object_get(tok, "p50")), 5.0, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(tok, "p90")), 30.0, 1e-9, "cumulative 4, 5, 6, 7 of 7");
    cr_assert_float_eq(json_number_value(json_object_get(tok, "max")), 30.0, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(tok, "mean")), 70.0 / 7.0, 1e-9);
    /* TPOT: (duration - ttft) / (tokens - 1) = (51 ms / 3, 21 ms / 4) */
    json_t *tpot = json_object_get(agg, "tpot_ms");
    cr_assert_float_eq(json_number_value(json_object_get(tpot, "max")), 17.0, 1e-9);
    /* throughput over the wall: the latest end is attempt 2's, 5 + 300 + 20 + 1 ms */
    json_t *tp = json_object_get(agg, "throughput");
    cr_assert_eq(json_integer_value(json_object_get(tp, "wall_ns")), 326000000);
    cr_assert_eq(json_integer_value(json_object_get(tp, "requests_ok")), 2);
    cr_assert_float_eq(json_number_value(json_object_get(tp, "output_tok_s")), 9.0 / 0.326, 1e-6);
    cr_assert_float_eq(json_number_value(json_object_get(tp, "deliveries_per_s")), 10.0 / 0.326, 1e-6);
    /* goodput: attempt 1 has a 30 ms gap (itl 25 missed); attempt 2 a 300 ms first text (ttft 200 missed) */
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(agg, "goodput"), "good")), 0);
    json_decref(agg);
    slo.itl_ms = 30;
    slo.ttft_ms = 1000;
    agg = load_level_aggregates(atts, &slo, err, sizeof err);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(agg, "goodput"), "good")), 2);
    json_decref(agg);
    load_slo none = {0};
    agg = load_level_aggregates(atts, &none, err, sizeof err);
    cr_assert(json_is_null(json_object_get(agg, "goodput")));
    json_decref(agg);
    json_object_set_new(json_array_get(atts, 0), "delivery_ns", json_string("1,x"));
    cr_assert_null(load_level_aggregates(atts, &none, err, sizeof err));
    cr_assert(strstr(err, "attempt 0"), "%s", err);
    json_decref(atts);
}

typedef struct stream {
    attempt_request req;
    attempt_sample s;
    attempt_stream *st;
    http_response resp;
    int done;
    pacer_err rc;
} stream;

static void on_done(void *ctx, pacer_err rc, http_response *resp) {
    stream *s = ctx;
    s->done++;
    s->rc = rc;
}

/* 32 endless streams from the loopback emitter on one driver (busy-polling or not). */
static void many_streams_keep_the_deadline(bool busy_poll) {
    net_emitter *em;
    int port;
    cr_assert_eq(net_emitter_start(&em, &port), PACER_OK);
    net_multi *m;
    cr_assert_eq(net_multi_new(&m), PACER_OK);
    net_multi_busy_poll(m, busy_poll);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    enum { N = 32 };
    static stream ss[N];
    memset(ss, 0, sizeof ss);
    for (int i = 0; i < N; i++) {
        ss[i].req = (attempt_request){.server_url = url, .prompt = "x", .max_tokens = 1 << 20, .route = ATTEMPT_ROUTE_CHAT};
        http_response_init(&ss[i].resp);
        cr_assert_eq(attempt_stream_begin(&ss[i].req, &ss[i].s, 1 << 24, &ss[i].st), PACER_OK);
        cr_assert_eq(net_multi_add(m, attempt_stream_http(ss[i].st), &ss[i].resp, on_done, &ss[i]), PACER_OK);
    }
    cr_assert_eq(net_multi_running(m), N);
    /* endless streams: the run returns at its deadline with every stream moving */
    int64_t t0 = clock_now_ns();
    for (int round = 0; round < 1000; round++) { /* a loaded machine may need seconds to start 32 streams */
        int64_t until = clock_now_ns() + 10000000;
        cr_assert_eq(net_multi_run(m, until), PACER_OK);
        cr_assert_geq(clock_now_ns(), until, "a run returns at its deadline while streams are running");
        bool all = true;
        for (int i = 0; i < N; i++) all = all && ss[i].s.deliveries > 0;
        if (all) break;
    }
    cr_assert_geq(clock_now_ns() - t0, 10000000);
    for (int i = 0; i < N; i++) {
        cr_assert_gt(ss[i].s.deliveries, 0, "stream %d got nothing", i);
        size_t n;
        const int64_t *t = attempt_stream_times(ss[i].st, &n);
        cr_assert_eq((int64_t)n, ss[i].s.deliveries);
        for (size_t k = 1; k < n; k++) cr_assert_geq(t[k], t[k - 1]);
        cr_assert_eq(ss[i].done, 0);
    }
    net_multi_free(m); /* ends what still runs, as cancelled */
    for (int i = 0; i < N; i++) {
        cr_assert_eq(ss[i].done, 1);
        cr_assert_eq(ss[i].rc, PACER_ERR_CANCELLED);
        attempt_stream_end(ss[i].st, ss[i].rc, &ss[i].resp);
        cr_assert_eq(ss[i].s.status, ATTEMPT_CANCELLED);
        attempt_stream_free(ss[i].st);
        http_response_free(&ss[i].resp);
    }
    net_emitter_stop(em);
}

Test(load, one_thread_moves_many_streams_and_keeps_its_deadline) { many_streams_keep_the_deadline(false); }

/* busy-polling changes how the driver waits, not what it delivers or when it returns */
Test(load, busy_polling_moves_many_streams_and_keeps_its_deadline) { many_streams_keep_the_deadline(true); }

Test(load, bad_url_is_refused_without_a_callback) {
    net_multi *m;
    cr_assert_eq(net_multi_new(&m), PACER_OK);
    http_request req = {.method = "GET", .url = "ftp://127.0.0.1/"};
    http_response resp;
    http_response_init(&resp);
    stream s = {0};
    cr_assert_eq(net_multi_add(m, &req, &resp, on_done, &s), PACER_ERR_ARG);
    cr_assert(strstr(resp.reason, "http://"));
    cr_assert_eq(net_multi_running(m), 0);
    cr_assert_eq(net_multi_run(m, clock_now_ns() + 1000000), PACER_OK);
    cr_assert_eq(s.done, 0);
    net_multi_free(m);
    http_response_free(&resp);
}
