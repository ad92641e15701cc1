/* metrics.h - the board's counters and request-latency histograms, rendered in the
 * Prometheus text format for GET /metrics. Label values come from fixed vocabularies
 * (outcomes, check names, route names), so the number of series stays bounded. */
#ifndef PACER_BOARD_METRICS_H
#define PACER_BOARD_METRICS_H

#include "base/buf.h"
#include "base/error.h"

typedef enum metrics_family {
    METRIC_UPLOADS = 0,           /* pacer_board_uploads_total{outcome} */
    METRIC_VALIDATION_FAILURES,   /* pacer_board_validation_failures_total{reason} */
    METRIC_LOOKUPS,               /* pacer_board_checkpoint_lookups_total{outcome} */
    METRIC_LOOKUP_RETRIES,        /* pacer_board_checkpoint_lookup_retries_total */
    METRIC__COUNT
} metrics_family;

typedef struct board_metrics board_metrics;

board_metrics *metrics_new(void);
void metrics_free(board_metrics *m);
/* Adds one to family{label=value}; `value` must be a static string (NULL for an unlabelled
 * family). Thread-safe. */
void metrics_count(board_metrics *m, metrics_family f, const char *value);
/* Records a request of `route` (a static string) that took `seconds`. Thread-safe. */
void metrics_observe(board_metrics *m, const char *route, double seconds);
/* Appends the exposition text. */
pacer_err metrics_render(board_metrics *m, buf *out);

#endif
