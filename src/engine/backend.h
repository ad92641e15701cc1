/* backend.h - the model interface the generation code and the server drive: tokenize,
 * detokenize, end-of-generation, evaluate. engine/serve_engine.c binds the embedded engine to
 * it; tests bind a scripted model, so the server is tested without weights. */
#ifndef PACER_ENGINE_BACKEND_H
#define PACER_ENGINE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* What generation needs from a model. All calls happen under the caller's decoder lock. */
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
} engine_backend;

#endif
