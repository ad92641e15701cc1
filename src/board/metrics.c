/* metrics.c - counters and latency histograms behind one mutex (the board counts a few
 * events per request), and their Prometheus text exposition (format version 0.0.4). */
#include "board/metrics.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_MAX_SERIES 128
#define METRICS_MAX_ROUTES 32

static const struct {
    const char *name, *help, *label;
} metrics_families[METRIC__COUNT] = {
    {"pacer_board_uploads_total", "Receipt uploads by outcome.", "outcome"},
    {"pacer_board_validation_failures_total", "Rejected uploads by the check that failed.", "reason"},
    {"pacer_board_checkpoint_lookups_total", "Public-checkpoint lookups by outcome.", "outcome"},
    {"pacer_board_checkpoint_lookup_retries_total", "Lookups retried after the hub was unavailable.", NULL},
};

static const double metrics_buckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define METRICS_N_BUCKETS (sizeof metrics_buckets / sizeof metrics_buckets[0])

typedef struct series {
    metrics_family f;
    const char *value;
    uint64_t count;
} series;

typedef struct route_hist {
    const char *route;
    uint64_t buckets[METRICS_N_BUCKETS];
    uint64_t count;
    double sum;
} route_hist;

struct board_metrics {
    pthread_mutex_t mu;
    series series[METRICS_MAX_SERIES];
    size_t n_series;
    route_hist routes[METRICS_MAX_ROUTES];
    size_t n_routes;
};

board_metrics *metrics_new(void) {
    board_metrics *m = calloc(1, sizeof *m);
    if (m) pthread_mutex_init(&m->mu, NULL);
    return m;
}

void metrics_free(board_metrics *m) {
    if (!m) return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static bool same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

void metrics_count(board_metrics *m, metrics_family f, const char *value) {
    if (!m || (unsigned)f >= METRIC__COUNT) return;
    pthread_mutex_lock(&m->mu);
    size_t i = 0;
    while (i < m->n_series && !(m->series[i].f == f && same(m->series[i].value, value))) i++;
    if (i == m->n_series && i < METRICS_MAX_SERIES) m->series[m->n_series++] = (series){f, value, 0};
    if (i < METRICS_MAX_SERIES) m->series[i].count++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_observe(board_metrics *m, const char *route, double seconds) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    size_t i = 0;
    while (i < m->n_routes && !same(m->routes[i].route, route)) i++;
    if (i == m->n_routes && i < METRICS_MAX_ROUTES) {
        memset(&m->routes[i], 0, sizeof m->routes[i]);
        m->routes[i].route = route;
        m->n_routes++;
    }
    if (i < METRICS_MAX_ROUTES) {
        route_hist *h = &m->routes[i];
        for (size_t b = 0; b < METRICS_N_BUCKETS; b++)
            if (seconds <= metrics_buckets[b]) h->buckets[b]++;
        h->count++;
        h->sum += seconds;
    }
    pthread_mutex_unlock(&m->mu);
}

pacer_err metrics_render(board_metrics *m, buf *out) {
    pacer_err rc = PACER_OK;
    pthread_mutex_lock(&m->mu);
    for (int f = 0; f < METRIC__COUNT && !rc; f++) {
        rc = buf_appendf(out, "# HELP %s %s\n# TYPE %s counter\n", metrics_families[f].name, metrics_families[f].help,
                         metrics_families[f].name);
        bool any = false;
        for (size_t i = 0; i < m->n_series && !rc; i++) {
            const series *s = &m->series[i];
            if ((int)s->f != f) continue;
            any = true;
            if (metrics_families[f].label && s->value)
                rc = buf_appendf(out, "%s{%s=\"%s\"} %llu\n", metrics_families[f].name, metrics_families[f].label, s->value,
                                 (unsigned long long)s->count);
            else rc = buf_appendf(out, "%s %llu\n", metrics_families[f].name, (unsigned long long)s->count);
        }
        if (!any && !rc && !metrics_families[f].label) rc = buf_appendf(out, "%s 0\n", metrics_families[f].name);
    }
    const char *hname = "pacer_board_request_duration_seconds";
    if (!rc) rc = buf_appendf(out, "# HELP %s Time to answer a request, by route.\n# TYPE %s histogram\n", hname, hname);
    for (size_t i = 0; i < m->n_routes && !rc; i++) {
        const route_hist *h = &m->routes[i];
        for (size_t b = 0; b < METRICS_N_BUCKETS && !rc; b++)
            rc = buf_appendf(out, "%s_bucket{route=\"%s\",le=\"%g\"} %llu\n", hname, h->route, metrics_buckets[b],
                             (unsigned long long)h->buckets[b]);
        if (!rc)
            rc = buf_appendf(out, "%s_bucket{route=\"%s\",le=\"+Inf\"} %llu\n%s_sum{route=\"%s\"} %.9g\n"
                                  "%s_count{route=\"%s\"} %llu\n",
                             hname, h->route, (unsigned long long)h->count, hname, h->route, h->sum, hname, h->route,
                             (unsigned long long)h->count);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}
