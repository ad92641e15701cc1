/* backend.c - the engine_backend of the embedded engine: tokenizer_encode with special
 * tokens parsed for chat prompts, tokenizer pieces, end-of-generation ids, engine_eval; and
 * the check that a drafter shares the model's vocabulary. */
#include "engine/backend.h"

#include <stdio.h>
#include <string.h>

#include "engine/tokenizer.h"

static pacer_err be_encode(void *ctx, const char *text, bool special, int32_t *out, int max, int *n) {
    size_t got = 0;
    pacer_err rc = tokenizer_encode(engine_get_tokenizer(ctx), text, strlen(text), true, special, out,
                                    (size_t)(max > 0 ? max : 0), &got);
    *n = (int)got;
    return rc == PACER_ERR_TOO_BIG ? PACER_OK : rc;
}

static const char *be_piece(void *ctx, int32_t tok, size_t *len) {
    const char *p = tokenizer_piece(engine_get_tokenizer(ctx), tok, len);
    if (!p) { *len = 0; p = ""; }
    return p;
}

static bool be_eog(void *ctx, int32_t tok) { return tokenizer_is_eog(engine_get_tokenizer(ctx), tok); }

static pacer_err be_eval(void *ctx, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    return engine_eval(ctx, tokens, n, pos, logits, all_logits);
}

static pacer_err be_eval_seq(void *ctx, int seq, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    return engine_eval_seq(ctx, seq, tokens, n, pos, logits, all_logits);
}

static pacer_err be_eval_rows(void *ctx, const int32_t *tokens, const int *seq, const int *pos, int n, const bool *want,
                              float *logits) {
    return engine_eval_rows(ctx, tokens, seq, pos, n, want, logits);
}

pacer_err backend_from_engine(engine *e, engine_backend *b) {
    if (!engine_get_tokenizer(e)) return PACER_ERR_STATE;
    const engine_info *info = engine_get_info(e);
    *b = (engine_backend){e, info->n_vocab, info->n_ctx, be_encode, be_piece, be_eog, be_eval,
                          engine_n_seq(e), be_eval_seq, be_eval_rows};
    return PACER_OK;
}

void backend_from_drafter(engine *e, engine_backend *b) {
    const engine_info *info = engine_get_info(e);
    *b = (engine_backend){.ctx = e, .n_vocab = info->n_vocab, .n_ctx = info->n_ctx, .eval = be_eval};
}

pacer_err backend_check_drafter(const engine *target, const engine *drafter, char *err, size_t err_len) {
    int nt = engine_get_info(target)->n_vocab, nd = engine_get_info(drafter)->n_vocab;
    if (nt != nd) {
        snprintf(err, err_len, "the drafter's vocabulary has %d tokens, the model's %d: a drafter must share the vocabulary",
                 nd, nt);
        return PACER_ERR_ARG;
    }
    const tokenizer *a = engine_get_tokenizer(target), *b = engine_get_tokenizer(drafter);
    if (!a || !b) return PACER_OK; /* the target's tokenizer speaks for both */
    /* equal sizes with different tokens would verify drafts against the wrong ids */
    for (int32_t id = 0; id < nt; id++) {
        size_t la = 0, lb = 0;
        const char *pa = tokenizer_token_text(a, id, &la), *pb = tokenizer_token_text(b, id, &lb);
        if (la != lb || (la && memcmp(pa, pb, la) != 0)) {
            snprintf(err, err_len, "the drafter's token %d differs from the model's: a drafter must share the vocabulary",
                     (int)id);
            return PACER_ERR_ARG;
        }
    }
    return PACER_OK;
}

static bool has_token(void *ctx, const char *text) { return tokenizer_find_token(ctx, text) >= 0; }

const chat_format *backend_chat_format(const engine *e) {
    const tokenizer *t = engine_get_tokenizer(e);
    if (!t) return chat_format_by_name("plain");
    return chat_format_detect(tokenizer_chat_template(t), has_token, (void *)t);
}
