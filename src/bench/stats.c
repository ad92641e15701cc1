/* stats.c - order statistics over a copy of the samples; no I/O. */
#include "bench/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_quantile_sorted(const double *sorted, size_t n, double p) {
    double rank = p * (double)(n - 1);
    size_t lo = (size_t)floor(rank);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = rank - (double)lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

bool stats_summarize(const double *values, size_t n, stats_summary *out) {
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(values[i])) return false;
    double *v = malloc(n * sizeof *v);
    if (!v) return false;
    memcpy(v, values, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    out->min = v[0];
    out->max = v[n - 1];
    out->median = stats_quantile_sorted(v, n, 0.5);
    out->p10 = stats_quantile_sorted(v, n, 0.1);
    out->p90 = stats_quantile_sorted(v, n, 0.9);
    free(v);
    return true;
}
