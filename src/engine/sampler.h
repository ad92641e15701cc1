/* sampler.h - choosing the next token from logits: greedy (temperature 0) or seeded
 * sampling with temperature, top-k and top-p, and the accept/resample step of speculative
 * sampling. The same seed and logits give the same tokens on every run and thread count
 * (the generator is base/rng.h). */
#ifndef PACER_SAMPLER_H
#define PACER_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/rng.h"

typedef struct sampler_params {
    float temperature; /* <= 0: greedy (argmax, lowest id on ties) */
    int top_k;         /* <= 0: no limit */
    float top_p;       /* >= 1 (or <= 0): no limit */
} sampler_params;

typedef struct sampler {
    sampler_params p;
    rng rng;
    int cap;        /* capacity of the work arrays */
    int32_t *idx;   /* candidate ids */
    float *prob;    /* candidate weights */
} sampler;

/* Greedy parameters: temperature 0, no top-k, no top-p. */
sampler_params sampler_params_greedy(void);
/* Sets up `s` with the parameters and seed (nothing allocated yet). */
void sampler_init(sampler *s, const sampler_params *p, uint64_t seed);
/* Frees the work arrays; `s` may be initialized again. */
void sampler_free(sampler *s);
/* The chosen id in [0, n_vocab), or -1 when out of memory or n_vocab <= 0. Work arrays are
 * allocated on the first call (and when n_vocab grows), never again for the same size. */
int32_t sampler_sample(sampler *s, const float *logits, int n_vocab);
/* The argmax of logits (lowest id on ties), or -1 when n_vocab <= 0: what greedy picks. */
int32_t sampler_argmax(const float *logits, int n_vocab);
/* Writes to probs[0..n_vocab) the distribution sampler_sample draws from: temperature,
 * top-k and top-p applied, normalized, 0 outside the kept candidates; greedy gives a point
 * mass on the argmax. Consumes no randomness. PACER_ERR_NOMEM when the work arrays cannot
 * grow. */
pacer_err sampler_probs(sampler *s, const float *logits, int n_vocab, float *probs);
/* Draws an id from probs[0..n_vocab) (non-negative weights, normalized or not); -1 when
 * all are 0. */
int32_t sampler_draw(sampler *s, const float *probs, int n_vocab);
/* One position of speculative sampling. p: the target's distribution (from sampler_probs);
 * q: the distribution `draft` was drawn from, or NULL when the proposer was deterministic
 * (a point mass on `draft`). Accepts `draft` with probability min(1, p/q) and returns it
 * with *accepted true; otherwise returns an id drawn from max(0, p - q) renormalized, so the
 * result is distributed exactly as p. -1 on bad arguments. */
int32_t sampler_speculate(sampler *s, const float *p, const float *q, int n_vocab, int32_t draft, bool *accepted);

#endif
