/* sampler.h - choosing the next token from logits: greedy (temperature 0) or seeded
 * sampling with temperature, top-k and top-p. The same seed and logits give the same
 * tokens on every run and thread count (the generator is xoshiro256**). */
#ifndef PACER_SAMPLER_H
#define PACER_SAMPLER_H

#include <stdint.h>

#include "base/error.h"

typedef struct sampler_params {
    float temperature; /* <= 0: greedy (argmax, lowest id on ties) */
    int top_k;         /* <= 0: no limit */
    float top_p;       /* >= 1 (or <= 0): no limit */
} sampler_params;

typedef struct sampler {
    sampler_params p;
    uint64_t rng[4];
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

#endif
