/* logprob.c - log-softmax and top-N selection over a row of logits, for the log-probabilities
 * `pacer serve` reports. They come from the raw logits, before temperature, top-k or top-p,
 * which is what OpenAI's and llama.cpp's log-probabilities mean. */
#include "engine/logprob.h"

#include <math.h>

double logprob_lse(const float *logits, int n) {
    float mx = logits[0];
    for (int i = 1; i < n; i++)
        if (logits[i] > mx) mx = logits[i];
    /* a double sum: 150k terms near exp(0) lose no digits that matter at 1e-6 */
    double sum = 0;
    for (int i = 0; i < n; i++) sum += exp((double)logits[i] - (double)mx);
    return (double)mx + log(sum);
}

int logprob_top(const float *logits, int n, double lse, int k, int32_t *ids, float *lps) {
    if (k > LOGPROB_MAX_TOP) k = LOGPROB_MAX_TOP;
    if (k > n) k = n;
    if (k <= 0) return 0;
    /* insertion into a short sorted list: k <= 20, and most logits fail the first compare */
    int have = 0;
    for (int i = 0; i < n; i++) {
        float v = logits[i];
        if (have == k && !(v > logits[ids[k - 1]])) continue; /* ties keep the lower id */
        int at = have < k ? have++ : k - 1;
        while (at > 0 && v > logits[ids[at - 1]]) { ids[at] = ids[at - 1]; at--; }
        ids[at] = i;
    }
    for (int j = 0; j < have; j++) lps[j] = (float)((double)logits[ids[j]] - lse);
    return have;
}

void logprob_entry_fill(logprob_entry *e, const float *logits, int n, int32_t tok, int k) {
    double lse = logprob_lse(logits, n);
    e->id = tok;
    e->has_logprob = true;
    e->logprob = (float)((double)logits[tok] - lse);
    e->n_top = logprob_top(logits, n, lse, k, e->top_id, e->top_logprob);
}

void logprob_entry_none(logprob_entry *e, int32_t tok) {
    e->id = tok;
    e->has_logprob = false;
    e->logprob = 0;
    e->n_top = 0;
}
