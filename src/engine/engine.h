/* engine.h - the embedded engine as the rest of pacer sees it: load a llama-family GGUF,
 * tokenize, evaluate tokens into a KV cache, read logits. A KV cache slot per sequence
 * (engine_params.n_seq: `pacer serve --parallel N` decodes N sequences in one pass).
 * Not thread-safe: one caller at a time (the engine runs on its own thread pool, or one it
 * borrows). */
#ifndef PACER_ENGINE_H
#define PACER_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct engine engine;
typedef struct tokenizer tokenizer; /* engine/tokenizer.h */
typedef struct gguf_file gguf_file; /* engine/gguf.h */
typedef struct threadpool threadpool; /* engine/threadpool.h */

typedef struct engine_params {
    int n_threads; /* <= 0: the number of online CPUs */
    int n_ctx;     /* <= 0: the model's context length, capped at 4096 */
    /* Threads to run on, borrowed (e.g. the target's, for its drafter: the two never
     * evaluate at once); NULL: the engine starts its own pool of n_threads. */
    threadpool *pool;
    int n_seq;     /* KV cache slots, one per sequence evaluated independently; <= 0: 1 */
} engine_params;

typedef struct engine_info {
    const char *arch;   /* general.architecture: "llama", "qwen2", "qwen3", ... */
    const char *name;   /* general.name or "" */
    int n_vocab, n_ctx, n_embd, n_layer, n_head, n_head_kv, n_ff;
    int64_t n_params;
    const char *weight_type; /* "f16", "q8_0", ... (the type of most weight bytes) */
    uint64_t weight_bytes;   /* bytes of weights read per token */
} engine_info;

/* Opens the model at `path`. On error returns the code, *out is NULL, and `err` (when
 * non-NULL) holds one line naming what is wrong. */
pacer_err engine_open(const char *path, const engine_params *params, engine **out, char *err, size_t err_len);
/* Frees everything; accepts NULL. */
void engine_close(engine *e);

const engine_info *engine_get_info(const engine *e);
const tokenizer *engine_get_tokenizer(const engine *e);
const gguf_file *engine_get_gguf(const engine *e);
/* The pool the engine runs on (to share with a drafter). */
threadpool *engine_get_pool(const engine *e);
/* Why engine_get_tokenizer() is NULL ("" when it is not). */
const char *engine_tokenizer_error(const engine *e);

/* Evaluates `n` tokens at positions pos..pos+n-1. Cache entries at positions >= pos are
 * discarded first, so evaluating at a smaller pos rewinds the sequence (this is how a
 * prompt prefix is reused and how drafts are rolled back). pos + n must be <= n_ctx.
 * logits: when all_logits is false, receives n_vocab floats for the last token; when
 * true, n * n_vocab floats (row i for token i). NULL: compute nothing but the cache. */
pacer_err engine_eval(engine *e, const int32_t *tokens, int n, int pos, float *logits, bool all_logits);
/* Number of positions currently in the cache (of sequence 0). */
int engine_n_past(const engine *e);

/* Several sequences (continuous batching): engine_eval on sequence `seq` (0..n_seq-1) of
 * its own KV cache slot; engine_eval is seq 0. */
pacer_err engine_eval_seq(engine *e, int seq, const int32_t *tokens, int n, int pos, float *logits, bool all_logits);
/* One pass over n rows of any sequences: row i is tokens[i] at position pos[i] of sequence
 * seq[i]; a sequence's first row is at most at its cache's end (what follows is dropped)
 * and its later rows each one position further. logits: a row of n_vocab for each row i
 * with want[i] (every row when want is NULL), in row order; or NULL. Each row's logits equal
 * what engine_eval_seq computes for it alone, bit for bit; rows not wanted cost their K/V
 * cache only in the last layer (a prompt's rows beside other sequences' decoding). */
pacer_err engine_eval_rows(engine *e, const int32_t *tokens, const int *seq, const int *pos, int n, const bool *want,
                           float *logits);
int engine_n_seq(const engine *e);

/* Where the forward pass spends its time, by kind of pool job (a profile for engine work:
 * `bench_engine --phases`). ROWS: the per-row steps (embedding, residual, RMSNorm, the
 * activations' quantization); QKV_ATTENTION: Q/K/V, their heads' post-processing and
 * attention; ATTENTION_OUT, GATE_UP (SwiGLU fused), DOWN: those matrices; OUTPUT: the
 * logits' matrix with its norm. A one-row step run inline (decode) is a job of one thread. */
typedef enum engine_phase {
    ENGINE_PHASE_ROWS,
    ENGINE_PHASE_QKV_ATTENTION,
    ENGINE_PHASE_ATTENTION_OUT,
    ENGINE_PHASE_GATE_UP,
    ENGINE_PHASE_DOWN,
    ENGINE_PHASE_OUTPUT,
    ENGINE_PHASES
} engine_phase;

typedef struct engine_phase_time {
    long jobs;
    double wall_s; /* from handing a job out until its last thread finished, summed */
    double busy_s; /* each thread's time inside the jobs, summed over threads */
    double tail_s; /* each thread's wait from its own end of a job to the job's end, summed */
} engine_phase_time;

typedef struct engine_profile {
    int threads;
    long chunks;    /* forward passes (chunks of at most the batch's rows) */
    double wall_s;  /* their wall time; the phases' wall times add up to nearly all of it */
    engine_phase_time phase[ENGINE_PHASES];
} engine_profile;

/* Starts counting from zero (on) or stops (off); PACER_ERR_NOMEM if its buffers cannot be
 * had. Off, nothing is timed. Results do not depend on it. */
pacer_err engine_profile_enable(engine *e, bool on);
/* What was counted since the last enable (zeros when never enabled). */
void engine_profile_get(const engine *e, engine_profile *out);
const char *engine_phase_name(engine_phase p);

#endif
