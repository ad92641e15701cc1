/* backend.h - the model interface the generation code and the server drive: tokenize,
 * detokenize, end-of-generation, evaluate. backend.c binds the embedded engine to it (the
 * functions at the end); tests bind a scripted model, so the server is tested without weights. */
#ifndef PACER_ENGINE_BACKEND_H
#define PACER_ENGINE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/chat.h"
#include "engine/engine.h"

/* What generation needs from a model. Calls come from one thread at a time (in pacer serve,
 * its scheduler). */
typedef struct engine_backend {
    void *ctx;
    int n_vocab, n_ctx;
    /* Tokenizes `text` (special tokens parsed when `special`), adding BOS per the model.
     * Writes at most `max` ids; *n is the count needed (may exceed max). */
    pacer_err (*encode)(void *ctx, const char *text, bool special, int32_t *out, int max, int *n);
    /* Bytes token `tok` decodes to (may be empty, never NULL). */
    const char *(*piece)(void *ctx, int32_t tok, size_t *len);
    bool (*is_eog)(void *ctx, int32_t tok);
    /* engine_eval semantics: positions >= pos are dropped first. logits: n_vocab floats for
     * the last token, or with all_logits n rows of n_vocab (row i predicts what follows
     * token i); NULL computes only the cache. */
    pacer_err (*eval)(void *ctx, const int32_t *tokens, int n, int pos, float *logits, bool all_logits);
    /* Several sequences (continuous batching); n_seq 0 and both NULL for a model of one.
     * eval_seq: eval on KV slot `seq` (0..n_seq-1; eval is slot 0). eval_rows: one pass over
     * n rows, row i token tokens[i] at pos[i] of sequence seq[i] (engine_eval_rows), a row of
     * logits for each row with want[i] (every row when want is NULL), each equal to its
     * sequence's own eval. */
    int n_seq;
    pacer_err (*eval_seq)(void *ctx, int seq, const int32_t *tokens, int n, int pos, float *logits, bool all_logits);
    pacer_err (*eval_rows)(void *ctx, const int32_t *tokens, const int *seq, const int *pos, int n, const bool *want,
                           float *logits);
} engine_backend;

/* Fills `b` for an open engine (which must outlive it). PACER_ERR_STATE when the engine has
 * no tokenizer. */
pacer_err backend_from_engine(engine *e, engine_backend *b);
/* Fills `b` for a drafter: eval and the sizes only (a drafter needs no tokenizer). */
void backend_from_drafter(engine *e, engine_backend *b);
/* PACER_OK when `drafter` shares the vocabulary of `target` (same size, same token texts);
 * else PACER_ERR_ARG and one line in err. */
pacer_err backend_check_drafter(const engine *target, const engine *drafter, char *err, size_t err_len);
/* The chat format of the engine's checkpoint (template text, then vocabulary). */
const chat_format *backend_chat_format(const engine *e);

#endif
