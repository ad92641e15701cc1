/* generate.h - one generation session over an engine_backend: prefill with prefix reuse,
 * seeded sampling, drafting (n-gram lookup or a drafter model) with verify rounds whose
 * greedy output equals serial decoding, stop strings and end-of-generation, and the token
 * hash. `pacer serve` answers each request with a session; `pacer generate` runs one.
 *
 *   gen_model gm;  gen_model_init(&gm, &backend, drafter_or_NULL, serial, draft_max);
 *   gen_session s = {0};
 *   gen_session_start(&s, &gm, &params, tokens, n, NULL, NULL, false);
 *   while (!s.done) gen_session_step(&s, &text);     // text: what may be shown now
 *   gen_session_hash_hex(&s, hex); gen_session_free(&s); gen_model_free(&gm);
 * A gen_model is used by one session at a time (the caller's lock); a session may answer
 * several prompts in turn (gen_session_start again), its counters then span them all. */
#ifndef PACER_ENGINE_GENERATE_H
#define PACER_ENGINE_GENERATE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/sha256.h"
#include "engine/backend.h"
#include "engine/draft.h"
#include "engine/gen_text.h"
#include "engine/sampler.h"

/* Prompts evaluated row by row (gen_row_fn) go through the model in chunks of this many
 * rows, the engine's own batch, so every row equals that of an ordinary prefill. */
#define GEN_ROWS_CHUNK 32

/* What stays from one session to the next for a loaded model: the backend, the drafter, the
 * tokens in the KV cache (for prefix reuse) and every buffer a round needs, allocated once. */
typedef struct gen_model {
    engine_backend b;
    draft_mode mode;
    int draft_max;
    draft_model dm;  /* the drafter's cache and buffers (DRAFT_MODE_MODEL) */
    int32_t *cache;  /* tokens in the backend's KV cache */
    int n_cache;
    float *logits;   /* draft_max + 1 rows of n_vocab: row 0 after prefill, a round's rows */
    int32_t *batch;  /* a round's target input: the last token, then the drafts */
    float *p_work;   /* n_vocab: the target distribution while verifying sampled drafts */
    float *rows;     /* GEN_ROWS_CHUNK rows for row-by-row prefills, allocated on first use */
    int seq;         /* the backend's KV slot its sessions use (eval_seq); 0 unless set after init */
} gen_model;

/* Prepares `gm` for backend `b` (copied); `drafter` (or NULL) must outlive it. Drafting is
 * off with `serial`, else the drafter model when given, else n-gram lookup. PACER_ERR_ARG
 * when the drafter's vocabulary size differs or draft_max is outside 1..DRAFT_MAX. */
pacer_err gen_model_init(gen_model *gm, const engine_backend *b, const engine_backend *drafter, bool serial,
                         int draft_max) __attribute__((warn_unused_result));
/* Frees the buffers. Accepts a zeroed `gm`. */
void gen_model_free(gen_model *gm);

typedef struct gen_params {
    sampler_params sp;
    uint64_t seed;
    int64_t max_tokens;       /* -1: until end-of-generation or the context is full */
    const char *const *stops; /* borrowed for the session's life */
    int n_stops;
    bool reuse_prefix;        /* keep the KV cache's common prefix with the last prompt */
    /* The prompt's rows are left to the caller's passes (gen_session_prompt_rows,
     * gen_session_prefilled), so that they go through the model beside other sessions'
     * decoding; not with a row_fn. */
    bool defer_prefill;
} gen_params;

/* Receives row i of a row-by-row prefill: the raw logits (n_vocab) predicting token i + 1. */
typedef pacer_err (*gen_row_fn)(void *ctx, int i, const float *row);

typedef struct gen_session {
    gen_model *gm;
    gen_params p;
    sampler smp;
    sampler draft_smp;        /* the drafter's own draws (sampled drafts from a drafter model) */
    gen_text text;
    sha256_ctx hash;
    /* this prompt */
    int n_prompt, prompt_n;   /* prompt tokens; of them evaluated (not reused) */
    int fill_at;              /* a deferred prefill: prompt rows [fill_at, n_prompt) to evaluate */
    int64_t t_start_ns;       /* when the prompt was started */
    int predicted_n;          /* tokens generated (end-of-generation excluded) */
    int64_t t_prefill_ns;
    const char *finish;       /* "stop" or "length" once done */
    bool done;
    /* all prompts of the session */
    int verify_rounds, draft_n, draft_n_accepted;
    int64_t t_decode_ns;
    /* The token the last step took (emitted, or the end-of-generation id), whether it was
     * emitted, and the target's raw logits row it was chosen from (valid until the next step). */
    int32_t tok;
    bool emitted;
    const float *tok_row;
    /* internal: decided tokens not yet taken, pend[i_pend..n_pend), with their rows */
    int n_past, n_pend, i_pend;
    int32_t pend[DRAFT_MAX + 1];
    const float *pend_row[DRAFT_MAX + 1];
    int round_k;              /* the drafts of the round being verified, and their distributions */
    const float *round_q;
    int32_t last;             /* the last token taken: emitted but not in the KV cache yet */
    bool has_last;
    bool hashing;
} gen_session;

/* Starts answering `tokens` (n >= 1, n < the context; the caller checks): prefill (reusing
 * the cached prefix when p->reuse_prefix and no row_fn), samplers seeded with p->seed, stop
 * strings armed. With `row_fn` every prompt row is evaluated and handed to it (no reuse).
 * `continue_hash` keeps one token hash over several prompts. `s` starts zeroed; it is reset
 * for the new prompt, keeping the session-wide counters. */
pacer_err gen_session_start(gen_session *s, gen_model *gm, const gen_params *p, const int32_t *tokens, int n,
                            gen_row_fn row_fn, void *row_ctx, bool continue_hash) __attribute__((warn_unused_result));
/* Takes one token (deciding more first when none is pending) and appends the text that may
 * be shown now to `text`. Sets done/finish at end-of-generation, a stop string, max_tokens or
 * a full context (then what was held back is flushed). */
pacer_err gen_session_step(gen_session *s, buf *text) __attribute__((warn_unused_result));
/* Continuous batching: a step's model pass left to the caller, so that several sessions'
 * rows go through the model in one pass (backend eval_rows):
 *   if (gen_session_needs_eval(s)) { gen_session_plan(s, &tok, &n, &pos);
 *       ... evaluate tok[0..n) at pos.. of s's sequence with the other sessions' rows ...
 *       gen_session_commit(s, rows_of_s, eval_ns); }
 *   while (!s->done && !gen_session_needs_eval(s)) gen_session_step(s, &text);
 * gen_session_step then takes the decided tokens without evaluating. Output equals
 * gen_session_step alone when the rows equal the backend's own eval (engine_eval_rows). */
bool gen_session_needs_eval(const gen_session *s);
/* The rows this session adds to the pass: the last token then the round's drafts, n rows at
 * positions pos..pos+n-1 of its sequence (tokens borrowed until the commit). */
pacer_err gen_session_plan(gen_session *s, const int32_t **tokens, int *n, int *pos) __attribute__((warn_unused_result));
/* Verifies the round against its n rows of logits (which must stay valid until the tokens
 * they decided are taken); eval_ns, the pass's time, counts as decode time. */
pacer_err gen_session_commit(gen_session *s, const float *rows, int64_t eval_ns) __attribute__((warn_unused_result));
/* A deferred prefill (gen_params.defer_prefill), while gen_session_prefilling: the prompt's
 * rows still to evaluate, tokens[0..n) at positions pos.. of the session's sequence; the
 * caller evaluates the first m of them (1 <= m <= n) in a pass, then calls
 * gen_session_prefilled with m and, when m == n, the logits row of the prompt's last token.
 * Until the prompt is done, gen_session_needs_eval is true and gen_session_plan refuses;
 * gen_session_step evaluates what is left itself. */
bool gen_session_prefilling(const gen_session *s);
void gen_session_prompt_rows(const gen_session *s, const int32_t **tokens, int *n, int *pos);
pacer_err gen_session_prefilled(gen_session *s, int m, const float *last_row) __attribute__((warn_unused_result));
/* The hex SHA-256 of the little-endian ids generated ("" when hashing failed); ends the hash. */
void gen_session_hash_hex(gen_session *s, char hex[65]);
/* Frees the samplers, text holdback and hash. Accepts a zeroed `s`. */
void gen_session_free(gen_session *s);

#endif
