/* logprob.h - log-probabilities from one row of raw logits: a log-sum-exp taken in double
 * with the maximum subtracted, and the N most likely ids. Pure functions (no allocation, no
 * I/O), so the server's log-probabilities can be unit-tested apart from HTTP. */
#ifndef PACER_LOGPROB_H
#define PACER_LOGPROB_H

#include <stdbool.h>
#include <stdint.h>

#define LOGPROB_MAX_TOP 20 /* the most alternatives a request may ask for (OpenAI's cap) */

/* One position: the token there, its log-probability under the row that predicted it, and
 * that row's most likely ids. `has_logprob` is false for a first prompt position, which
 * no row predicts. */
typedef struct logprob_entry {
    int32_t id;
    bool has_logprob;
    float logprob;
    int n_top;
    int32_t top_id[LOGPROB_MAX_TOP];
    float top_logprob[LOGPROB_MAX_TOP];
} logprob_entry;

/* log(sum(exp(logits))) over n values (n >= 1), computed in double after subtracting the
 * maximum so that no term overflows. */
double logprob_lse(const float *logits, int n);
/* Writes the min(k, n) largest logits' ids and log-probabilities (logit - lse) to ids and
 * lps, most likely first; equal logits are ordered by the lower id. Returns the count.
 * k is clamped to [0, LOGPROB_MAX_TOP]. */
int logprob_top(const float *logits, int n, double lse, int k, int32_t *ids, float *lps);
/* Fills `e` for token `tok` (0 <= tok < n) from the row `logits` that predicted it, with
 * the `k` most likely alternatives. */
void logprob_entry_fill(logprob_entry *e, const float *logits, int n, int32_t tok, int k);
/* An entry for a position no row predicts: the id only. */
void logprob_entry_none(logprob_entry *e, int32_t tok);

#endif
