/* prefill_report.h - what `pacer lab prefill` derives from its samples: the pairs (per round,
 * length and configuration, the sample of the build before and the sample of the build
 * after), the paired ratio after/before per length and configuration (the median of the
 * per-round ratios, its spread least..greatest over rounds), whether the greedy tokens of
 * the two builds differ, and summary.md. Pure: JSON in, JSON or Markdown out; no clock, no
 * file system, so a report can be rebuilt from its own samples.
 *
 * REPORT (report.json, canonical JSON; format "pacer-lab-prefill"): the head the run keeps
 * (lab/prefill.h: state, command, provenance, settings, suite, model, configurations,
 * prompts, binaries, source_diff) and "samples" (in the order they ran: a lab sample record,
 * record.h, plus "binary": "before" | "after", "first": whether it ran first in its pair,
 * "output": the generated text verbatim, "server_prompt_ms": the engine's prompt time when
 * it reported one), then derived here:
 *   pairs: [{round, length, config, first ("before" | "after": which build ran first),
 *            before, after (sample ids or null), ratio, server_ratio (after/before of
 *            prefill_tok_s and server_prefill_tok_s; null unless both samples are usable),
 *            outputs ("same" | "differ" | null when either has no answer), why (null, or
 *            why there is no ratio)}]
 *   lengths: [{length, config, ratio, server_ratio, before_tok_s, after_tok_s (each
 *              {"median", "min", "max", "n"} or null), prompt_tokens {"before", "after"}
 *              (null when not reported), pairs, pairs_without_ratio, outputs {"compared",
 *              "same", "differ_rounds": [rounds]}}]
 * A sample is usable when it produced an answer (finish "eos" or "capped": 8 tokens is the
 * cap) and is valid. */
#ifndef PACER_LAB_PREFILL_REPORT_H
#define PACER_LAB_PREFILL_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"

#define LAB_PREFILL_FORMAT "pacer-lab-prefill"
#define LAB_PREFILL_FORMAT_VERSION 1

/* The paired ratio of one length and configuration over its rounds. */
typedef struct lab_ratio {
    bool has;                 /* at least one round gave a ratio */
    double median, min, max;  /* of the per-round ratios after/before */
    size_t n;                 /* rounds that gave one */
} lab_ratio;

/* The ratio after[i] / before[i] of every round i in [0, n) where both are finite and
 * above 0, then the median of those ratios and their least and greatest. */
void lab_ratio_paired(const double *before, const double *after, size_t n, lab_ratio *out);

/* True when a sample (a record with "binary", "output") enters ratios: an answer (finish
 * eos or capped) that is valid. */
bool lab_prefill_usable(const json_t *sample);

/* The report: `head` (borrowed; its "samples" array is used as it is) with "pairs" and
 * "lengths" added. New reference; NULL when out of memory. */
json_t *lab_prefill_report_build(const json_t *head);

/* summary.md: the hardware line, the two builds, the ratio table per length and
 * configuration, the samples. */
pacer_err lab_prefill_summary(buf *out, const json_t *report);

#endif
