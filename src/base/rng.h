/* rng.h - pacer's one seeded generator: xoshiro256** seeded through splitmix64. The same
 * seed gives the same sequence on every machine; sampling and synthesized weights use it. */
#ifndef PACER_RNG_H
#define PACER_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t s[4];
} rng;

/* Sets the state from `seed` (four splitmix64 outputs). */
void rng_seed(rng *r, uint64_t seed);
/* The next 64 random bits. */
uint64_t rng_next(rng *r);
/* A uniform double in [0, 1) from the top 53 bits of rng_next(). */
double rng_uniform(rng *r);

#endif
