/* stats.h - order statistics of a cell's raw samples: median, min, max, p10, p90.
 * Percentiles interpolate linearly between closest ranks (rank = p * (n - 1)). */
#ifndef PACER_STATS_H
#define PACER_STATS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct stats_summary {
    double median, min, max, p10, p90;
} stats_summary;

/* Summarizes `n` values (n >= 1; `values` is not modified). Returns false when n is 0 or
 * a value is not finite. */
bool stats_summarize(const double *values, size_t n, stats_summary *out);
/* The p-quantile (0 <= p <= 1) of `sorted` (ascending, n >= 1). */
double stats_quantile_sorted(const double *sorted, size_t n, double p);

#endif
