/* load_stats.c - the arithmetic of load levels, no I/O: arrival schedules, delivery-time
 * encoding, per-level percentiles, throughput and goodput, the client-limited rule. The
 * writer and the validator both call load_level_aggregates() on the stored attempts, so
 * what a receipt says always follows from its delivery times. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "bench/load.h"
#include "bench/receipt.h"
#include "bench/stats.h"

const load_metric load_metrics[] = {
    {"ttft_ms", "TTFT ms", "time to first text: first non-empty delivery - request start, per attempt"},
    {"itl_ms", "ITL ms",
     "pacer's inter-delivery latency: every gap between consecutive non-empty deliveries, pooled over attempts"},
    {"itl_token_ms", "ITL/tok ms",
     "per-token inter-token latency (vLLM's unit): a gap counts as k tokens of gap/k each, k = the attempt's "
     "(completion_tokens - 1) / (deliveries - 1); equal to itl_ms when each delivery carries one token"},
    {"tpot_ms", "TPOT ms", "vLLM's time per output token: (duration - first text) / (completion_tokens - 1), per attempt"},
    {"e2e_ms", "E2E ms", "end-to-end latency: duration (end of response - request start), per attempt"},
    {"stream_tok_s", "tok/s/stream", "output tokens per second of one stream: (completion_tokens - 1) / delivery span"},
};
const size_t load_metric_count = sizeof load_metrics / sizeof load_metrics[0];

enum { M_TTFT, M_ITL, M_ITL_TOKEN, M_TPOT, M_E2E, M_STREAM, M_COUNT };

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

size_t load_arrivals(uint64_t seed, double rate, int64_t until_ns, int64_t *out, size_t max) {
    uint64_t state = seed;
    int64_t t = 0;
    size_t n = 0;
    while (n < max && (until_ns <= 0 || t < until_ns)) {
        out[n++] = t;
        double u = (double)(splitmix64(&state) >> 11) * 0x1.0p-53;
        t += llround(-log1p(-u) / rate * 1e9);
    }
    return n;
}

pacer_err load_deltas_encode(int64_t start_ns, const int64_t *times, size_t n, buf *out) {
    /* by hand, not printf: this runs for every delivery of a level, inside its measurement */
    pacer_err rc = buf_reserve(out, n * 21);
    int64_t prev = start_ns;
    for (size_t i = 0; i < n && !rc; i++) {
        char digits[20], *d = digits + sizeof digits;
        uint64_t v = (uint64_t)(times[i] - prev);
        do *--d = (char)('0' + v % 10); while (v /= 10);
        if (i) out->data[out->len++] = ',';
        memcpy(out->data + out->len, d, (size_t)(digits + sizeof digits - d));
        out->len += (size_t)(digits + sizeof digits - d);
        prev = times[i];
    }
    if (!rc && out->data) out->data[out->len] = '\0';
    return rc;
}

pacer_err load_deltas_decode(const char *s, int64_t **deltas, size_t *n) {
    *deltas = NULL;
    *n = 0;
    if (!*s) return PACER_OK;
    size_t count = 1;
    for (const char *p = s; *p; p++) count += *p == ',';
    int64_t *d = malloc(count * sizeof *d);
    if (!d) return PACER_ERR_NOMEM;
    const char *p = s;
    for (size_t i = 0; i < count; i++) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0 || *p < '0' || *p > '9' || (*end != ',' && *end != '\0') ||
            (*end == '\0') != (i + 1 == count)) {
            free(d);
            return PACER_ERR_PARSE;
        }
        d[i] = v;
        p = end + 1;
    }
    *deltas = d;
    *n = count;
    return PACER_OK;
}

bool load_client_limited(double deliveries_per_s, double calibrated_max_per_s) {
    if (deliveries_per_s <= 0) return false;
    return deliveries_per_s > LOAD_CLIENT_LIMIT_SHARE * calibrated_max_per_s;
}

pacer_err load_slo_parse(const char *s, load_slo *slo) {
    memset(slo, 0, sizeof *slo);
    char tmp[128];
    if (snprintf(tmp, sizeof tmp, "%s", s) >= (int)sizeof tmp) return PACER_ERR_ARG;
    char *save = NULL;
    for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) return PACER_ERR_ARG;
        *eq = '\0';
        char *end;
        errno = 0;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || errno || !(v > 0) || !isfinite(v)) return PACER_ERR_ARG;
        if (strcmp(t, "ttft") == 0 && !slo->has_ttft) slo->has_ttft = true, slo->ttft_ms = v;
        else if (strcmp(t, "itl") == 0 && !slo->has_itl) slo->has_itl = true, slo->itl_ms = v;
        else return PACER_ERR_ARG;
    }
    return slo->has_ttft || slo->has_itl ? PACER_OK : PACER_ERR_ARG;
}

/* A growable list of (value, weight) pairs. */
typedef struct load_vals {
    double *v, *w;
    size_t n, cap;
} load_vals;

static bool vals_add(load_vals *l, double v, double w) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        double *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return false;
        l->v = nv;
        double *nw = realloc(l->w, cap * sizeof *nw);
        if (!nw) return false;
        l->w = nw;
        l->cap = cap;
    }
    l->v[l->n] = v;
    l->w[l->n++] = w;
    return true;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_index(const void *a, const void *b, void *ctx) {
    const load_vals *l = ctx;
    double x = l->v[*(const size_t *)a], y = l->v[*(const size_t *)b];
    return (x > y) - (x < y);
}

/* {p50, p90, p99, max, mean, n}. Unweighted lists interpolate between closest ranks
 * (rank = p (n - 1), as numpy's default); weighted ones take the smallest value whose
 * cumulative weight reaches p of the total, and a weighted mean. Null when empty. */
static json_t *vals_summary(load_vals *l, bool weighted) {
    if (l->n == 0) return json_null();
    size_t *idx = malloc(l->n * sizeof *idx);
    double *sorted = malloc(l->n * sizeof *sorted);
    json_t *out = NULL;
    if (!idx || !sorted) goto done;
    if (weighted) {
        for (size_t i = 0; i < l->n; i++) idx[i] = i;
        qsort_r(idx, l->n, sizeof *idx, cmp_index, l);
        for (size_t i = 0; i < l->n; i++) sorted[i] = l->v[idx[i]];
    } else {
        memcpy(sorted, l->v, l->n * sizeof *sorted);
        qsort(sorted, l->n, sizeof *sorted, cmp_double);
    }
    static const double ps[3] = {0.5, 0.9, 0.99};
    double q[3], sum = 0, wsum = 0;
    for (size_t i = 0; i < l->n; i++) sum += l->v[i] * l->w[i], wsum += l->w[i];
    for (int k = 0; k < 3; k++) {
        if (!weighted) {
            q[k] = stats_quantile_sorted(sorted, l->n, ps[k]);
            continue;
        }
        double cum = 0;
        q[k] = sorted[l->n - 1];
        for (size_t i = 0; i < l->n; i++) {
            cum += l->w[idx[i]];
            if (cum >= ps[k] * wsum) { q[k] = sorted[i]; break; }
        }
    }
    out = json_pack("{s:f,s:f,s:f,s:f,s:f,s:I}", "p50", q[0], "p90", q[1], "p99", q[2], "max", sorted[l->n - 1],
                    "mean", wsum > 0 ? sum / wsum : 0.0, "n", (json_int_t)l->n);
done:
    free(idx);
    free(sorted);
    return out ? out : json_null();
}

/* One attempt of a level as the aggregates need it. */
typedef struct load_att {
    attempt_sample s;
    int64_t start_ns;
    int64_t *deltas;
    size_t n_deltas;
} load_att;

static bool att_read(const json_t *a, load_att *x, char *err, size_t err_len) {
    memset(x, 0, sizeof *x);
    char why[160];
    if (receipt_attempt_from_json(a, &x->s, why, sizeof why)) {
        snprintf(err, err_len, "%s", why);
        return false;
    }
    json_t *st = json_object_get(a, "start_ns"), *d = json_object_get(a, "delivery_ns");
    if (!json_is_integer(st) || json_integer_value(st) < 0 || !json_is_string(d)) {
        snprintf(err, err_len, "start_ns or delivery_ns missing or of the wrong type");
        return false;
    }
    x->start_ns = json_integer_value(st);
    if (load_deltas_decode(json_string_value(d), &x->deltas, &x->n_deltas)) {
        snprintf(err, err_len, "delivery_ns is not a list of non-negative integers");
        return false;
    }
    return true;
}

/* Adds an ok attempt's figures to the metric lists; returns its largest gap (ns). */
static bool att_collect(const load_att *x, load_vals *m, int64_t *max_gap) {
    const attempt_sample *s = &x->s;
    bool ok = vals_add(&m[M_TTFT], (double)s->first_text_ns / 1e6, 1) &&
              vals_add(&m[M_E2E], (double)s->duration_ns / 1e6, 1);
    if (ok && s->has_stream_tok_s) ok = vals_add(&m[M_STREAM], s->stream_tok_s, 1);
    if (ok && s->has_usage && s->completion_tokens >= 2)
        ok = vals_add(&m[M_TPOT], (double)(s->duration_ns - s->first_text_ns) / 1e6 / (double)(s->completion_tokens - 1), 1);
    double k = x->n_deltas > 1 && s->has_usage && s->completion_tokens >= 2
                   ? (double)(s->completion_tokens - 1) / (double)(x->n_deltas - 1) : 1.0;
    *max_gap = 0;
    for (size_t i = 1; ok && i < x->n_deltas; i++) {
        double g = (double)x->deltas[i] / 1e6;
        ok = vals_add(&m[M_ITL], g, 1) && vals_add(&m[M_ITL_TOKEN], g / k, k);
        if (x->deltas[i] > *max_gap) *max_gap = x->deltas[i];
    }
    return ok;
}

json_t *load_level_aggregates(const json_t *attempts, const load_slo *slo, char *err, size_t err_len) {
    load_vals m[M_COUNT];
    memset(m, 0, sizeof m);
    json_t *out = NULL;
    int64_t wall = 0, tokens = 0, deliveries = 0, ok = 0, good = 0;
    size_t i;
    json_t *a;
    json_array_foreach(attempts, i, a) {
        load_att x;
        char why[200];
        if (!att_read(a, &x, why, sizeof why)) {
            snprintf(err, err_len, "attempt %zu: %s", i, why);
            free(x.deltas);
            goto done;
        }
        if (x.start_ns + x.s.duration_ns > wall) wall = x.start_ns + x.s.duration_ns;
        deliveries += x.s.deliveries;
        int64_t max_gap = 0;
        bool collected = true;
        if (x.s.status == ATTEMPT_OK) {
            ok++;
            tokens += x.s.has_usage ? x.s.completion_tokens : 0;
            collected = att_collect(&x, m, &max_gap);
            bool in_ttft = !slo->has_ttft || (double)x.s.first_text_ns <= slo->ttft_ms * 1e6;
            bool in_itl = !slo->has_itl || (double)max_gap <= slo->itl_ms * 1e6;
            good += in_ttft && in_itl;
        }
        free(x.deltas);
        if (!collected) {
            snprintf(err, err_len, "out of memory");
            goto done;
        }
    }
    out = json_object();
    for (int k = 0; k < M_COUNT; k++) json_object_set_new(out, load_metrics[k].name, vals_summary(&m[k], k == M_ITL_TOKEN));
    double secs = (double)wall / 1e9;
    json_object_set_new(out, "throughput",
                        json_pack("{s:I,s:I,s:o,s:o,s:o}", "wall_ns", (json_int_t)wall, "requests_ok", (json_int_t)ok,
                                  "requests_per_s", wall > 0 ? json_real((double)ok / secs) : json_null(),
                                  "output_tok_s", wall > 0 ? json_real((double)tokens / secs) : json_null(),
                                  "deliveries_per_s", wall > 0 ? json_real((double)deliveries / secs) : json_null()));
    if (slo->has_ttft || slo->has_itl)
        json_object_set_new(out, "goodput",
                            json_pack("{s:o,s:o,s:I,s:o}", "ttft_ms", slo->has_ttft ? json_real(slo->ttft_ms) : json_null(),
                                      "itl_ms", slo->has_itl ? json_real(slo->itl_ms) : json_null(), "good",
                                      (json_int_t)good, "requests_per_s",
                                      wall > 0 ? json_real((double)good / secs) : json_null()));
    else
        json_object_set_new(out, "goodput", json_null());
done:
    for (int k = 0; k < M_COUNT; k++) free(m[k].v), free(m[k].w);
    return out;
}
