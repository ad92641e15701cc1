/* draft.h - speculative decoding for `pacer serve`: proposing draft tokens (n-gram lookup in
 * the sequence's own tokens, or a smaller drafter model) and verifying them against the
 * target's logits rows (greedy: equal to the argmax; sampled: speculative sampling). */
#ifndef PACER_DRAFT_H
#define PACER_DRAFT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/backend.h"
#include "engine/sampler.h"

#define DRAFT_MAX 64      /* the most draft tokens one round may propose */
#define DRAFT_NGRAM_MAX 4 /* lookup tries the last 4, 3, then 2 tokens as the key */
#define DRAFT_NGRAM_MIN 2

typedef enum draft_mode {
    DRAFT_MODE_SERIAL, /* no drafts: one target pass per token */
    DRAFT_MODE_LOOKUP, /* n-gram lookup in the prompt and the generated tokens */
    DRAFT_MODE_MODEL,  /* a drafter model */
} draft_mode;

/* "serial", "lookup" or "drafter". */
const char *draft_mode_name(draft_mode m);

/* Up to `max` drafts continuing hist[0..n): finds the most recent earlier occurrence of the
 * longest suffix of DRAFT_NGRAM_MAX..DRAFT_NGRAM_MIN tokens and copies what followed it.
 * The copy may run into its own output, so a repeating cycle drafts a full `max`. Returns
 * the count written to out (0 when nothing matches). No allocation. */
int draft_lookup(const int32_t *hist, int n, int max, int32_t *out);

/* The drafter's side: its KV cache mirrors `cache[0..n_cache)`, and its work buffers are
 * allocated once in draft_model_init. */
typedef struct draft_model {
    const engine_backend *b;
    int32_t *cache;  /* tokens in the drafter's KV cache (n_ctx) */
    int n_cache;
    float *logits;   /* one row */
    float *q;        /* DRAFT_MAX rows: the distribution each sampled draft was drawn from */
} draft_model;

/* Allocates the buffers for drafter `b` (which must outlive dm). */
pacer_err draft_model_init(draft_model *dm, const engine_backend *b);
/* Frees the buffers; accepts a zeroed dm. */
void draft_model_free(draft_model *dm);
/* Brings the drafter's cache to hist[0..n) without computing logits (the prompt, during
 * prefill), reusing the common prefix. */
pacer_err draft_model_sync(draft_model *dm, const int32_t *hist, int n);
/* Up to `max` drafts continuing hist[0..n) (n >= 1), fewer when the drafter's context is
 * short. Greedy (smp temperature 0): the drafter's argmax, *q_out NULL. Sampled: each draft
 * is drawn with `smp` (the request's transform, the drafter's own seed) and its
 * distribution is row i of *q_out. Returns the count in *n_out. */
pacer_err draft_model_propose(draft_model *dm, sampler *smp, const int32_t *hist, int n, int max, int32_t *out,
                              int *n_out, const float **q_out);

/* Verifies drafts[0..k) against the target's rows[0..k] (n_vocab floats each; row i was
 * computed after the token before drafts[i], row k after drafts[k-1]). Returns how many
 * drafts are accepted (j) and in *next the token that follows them, chosen from row j: the
 * target's correction or, when all are accepted, its own next token. Greedy compares with
 * the argmax; sampled uses sampler_speculate with q (k rows, or NULL for deterministic
 * drafts) and `p_work` (n_vocab floats). With k == 0 this is exactly sampler_sample on row 0.
 * Returns -1 when out of memory. */
int draft_verify(sampler *smp, const float *rows, int n_vocab, const int32_t *drafts, int k, const float *q,
                 float *p_work, int32_t *next);

#endif
