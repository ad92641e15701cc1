/* plot.h - the lab report's plots, drawn by pacer as standalone SVG files (each carries its
 * own colours, since the gallery shows them through <img>): decode tok/s per configuration
 * as bars with the round-to-round spread, and answer length against completion time. Pure:
 * report.json in (report.h), markup out; every label goes through html_escape. */
#ifndef PACER_LAB_PLOT_H
#define PACER_LAB_PLOT_H

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"

#define LAB_PLOT_DECODE "plots/decode.svg"
#define LAB_PLOT_LENGTH_TIME "plots/length-time.svg"

/* Decode tok/s per configuration over the samples that enter medians: per round the median
 * of that round's samples, the bar at the median of the round medians, a whisker from their
 * least to their greatest. A configuration without such samples is drawn as "no value". */
pacer_err lab_plot_decode(buf *out, const json_t *report);
/* One point per sample with a usage count and an answer: answer tokens (x) against
 * completion seconds (y), coloured by configuration; samples kept out of medians are drawn
 * in the last colour and counted in the title. */
pacer_err lab_plot_length_time(buf *out, const json_t *report);

#endif
