/* generate.c - one generation session (see generate.h): prefill with prefix reuse, verify
 * rounds that take the last token plus the round's drafts through the target in one pass,
 * stop strings, and the token hash. Nothing here allocates per token. */
#include "engine/generate.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

pacer_err gen_model_init(gen_model *gm, const engine_backend *b, const engine_backend *drafter, bool serial,
                         int draft_max) {
    memset(gm, 0, sizeof *gm);
    if (draft_max < 1 || draft_max > DRAFT_MAX) return PACER_ERR_ARG;
    if (!serial && drafter && drafter->n_vocab != b->n_vocab) return PACER_ERR_ARG;
    gm->b = *b;
    gm->draft_max = draft_max;
    gm->mode = serial ? DRAFT_MODE_SERIAL : drafter ? DRAFT_MODE_MODEL : DRAFT_MODE_LOOKUP;
    /* every buffer a round needs is allocated here, none in the decode loop */
    size_t rows = gm->mode == DRAFT_MODE_SERIAL ? 1 : (size_t)draft_max + 1;
    gm->cache = malloc((size_t)(b->n_ctx + 1) * sizeof(int32_t));
    gm->logits = malloc(rows * (size_t)b->n_vocab * sizeof(float));
    gm->batch = malloc((DRAFT_MAX + 1) * sizeof(int32_t));
    gm->p_work = malloc((size_t)b->n_vocab * sizeof(float));
    if (!gm->cache || !gm->logits || !gm->batch || !gm->p_work) return PACER_ERR_NOMEM;
    if (gm->mode == DRAFT_MODE_MODEL) return draft_model_init(&gm->dm, drafter);
    return PACER_OK;
}

void gen_model_free(gen_model *gm) {
    free(gm->cache);
    free(gm->logits);
    free(gm->batch);
    free(gm->p_work);
    free(gm->rows);
    draft_model_free(&gm->dm);
    memset(gm, 0, sizeof *gm);
}

/* The model pass on this model's sequence (its KV slot when the backend has several). */
static pacer_err gm_eval(gen_model *gm, const int32_t *tok, int n, int pos, float *logits, bool all_logits) {
    const engine_backend *b = &gm->b;
    if (b->eval_seq) return b->eval_seq(b->ctx, gm->seq, tok, n, pos, logits, all_logits);
    return b->eval(b->ctx, tok, n, pos, logits, all_logits);
}

/* Every row of the prompt, in chunks of GEN_ROWS_CHUNK (the engine's own chunking, so each
 * row is what a plain prefill computes): row i goes to row_fn, the last row to gm->logits. */
static pacer_err prefill_rows(gen_model *gm, const int32_t *tok, int n, gen_row_fn row_fn, void *row_ctx) {
    const engine_backend *b = &gm->b;
    pacer_err rc = PACER_OK;
    if (!gm->rows && !(gm->rows = malloc((size_t)GEN_ROWS_CHUNK * (size_t)b->n_vocab * sizeof(float))))
        return PACER_ERR_NOMEM;
    for (int at = 0; at < n; at += GEN_ROWS_CHUNK) {
        int nb = n - at < GEN_ROWS_CHUNK ? n - at : GEN_ROWS_CHUNK;
        if ((rc = gm_eval(gm, tok + at, nb, at, gm->rows, true))) return rc;
        for (int i = 0; i < nb; i++) {
            const float *row = gm->rows + (size_t)i * (size_t)b->n_vocab;
            if (at + i + 1 == n) { memcpy(gm->logits, row, (size_t)b->n_vocab * sizeof(float)); break; }
            if ((rc = row_fn(row_ctx, at + i, row))) return rc;
        }
    }
    return rc;
}

/* The prompt is in the KV cache (gm->logits holds its last row): the drafter catches up,
 * and the prefill's time is counted. */
static pacer_err prompt_done(gen_session *s) {
    gen_model *gm = s->gm;
    gm->n_cache = s->n_prompt;
    s->fill_at = s->n_prompt;
    /* the drafter reads the prompt now, so its catching up is prefill time, not decode */
    pacer_err rc = gm->mode == DRAFT_MODE_MODEL ? draft_model_sync(&gm->dm, gm->cache, s->n_prompt) : PACER_OK;
    s->t_prefill_ns = clock_now_ns() - s->t_start_ns;
    return rc;
}

pacer_err gen_session_start(gen_session *s, gen_model *gm, const gen_params *p, const int32_t *tokens, int n,
                            gen_row_fn row_fn, void *row_ctx, bool continue_hash) {
    const engine_backend *b = &gm->b;
    if (n < 1 || n >= b->n_ctx || (p->defer_prefill && row_fn)) return PACER_ERR_ARG;
    s->gm = gm;
    s->p = *p;
    int common = 0;
    if (p->reuse_prefix && !row_fn)
        while (common < n && common < gm->n_cache && gm->cache[common] == tokens[common]) common++;
    if (common == n) common = n - 1; /* the last token is evaluated again for its logits */
    s->t_start_ns = clock_now_ns();
    s->n_prompt = n;
    s->fill_at = n;
    gm->n_cache = 0;
    pacer_err rc = PACER_OK;
    if (p->defer_prefill) s->fill_at = common;
    else if (row_fn) rc = prefill_rows(gm, tokens, n, row_fn, row_ctx);
    else rc = gm_eval(gm, tokens + common, n - common, common, gm->logits, false);
    if (rc) return rc;
    memcpy(gm->cache, tokens, (size_t)n * sizeof(int32_t));
    if (p->defer_prefill) gm->n_cache = common; /* the rest as the passes take it */
    else if ((rc = prompt_done(s))) return rc;
    s->n_past = n;
    s->prompt_n = n - common;
    s->predicted_n = 0;
    s->n_pend = s->i_pend = 0;
    s->has_last = false;
    s->done = false;
    s->finish = NULL;
    sampler_free(&s->smp); /* a batch's next prompt starts both again */
    sampler_init(&s->smp, &p->sp, p->seed);
    sampler_free(&s->draft_smp);
    sampler_init(&s->draft_smp, &p->sp, p->seed ^ 0xD1B54A32D192ED03ull);
    gen_text_free(&s->text);
    gen_text_init(&s->text, p->stops, p->n_stops);
    if (!continue_hash || !s->hashing) s->hashing = sha256_begin(&s->hash) == PACER_OK;
    if (p->max_tokens == 0) { s->done = true; s->finish = "length"; }
    return PACER_OK;
}

bool gen_session_prefilling(const gen_session *s) { return s->fill_at < s->n_prompt; }

void gen_session_prompt_rows(const gen_session *s, const int32_t **tokens, int *n, int *pos) {
    *tokens = s->gm->cache + s->fill_at;
    *n = s->n_prompt - s->fill_at;
    *pos = s->fill_at;
}

pacer_err gen_session_prefilled(gen_session *s, int m, const float *last_row) {
    gen_model *gm = s->gm;
    if (m < 1 || m > s->n_prompt - s->fill_at || (m == s->n_prompt - s->fill_at && !last_row)) return PACER_ERR_ARG;
    s->fill_at += m;
    gm->n_cache = s->fill_at;
    if (s->fill_at < s->n_prompt) return PACER_OK;
    if (last_row != gm->logits) memcpy(gm->logits, last_row, (size_t)gm->b.n_vocab * sizeof(float));
    return prompt_done(s);
}

bool gen_session_needs_eval(const gen_session *s) {
    return gen_session_prefilling(s) || (!s->done && s->i_pend == s->n_pend && s->has_last);
}

/* A verify round's input: the last token completes the history, the round's drafts follow
 * (n-gram lookup or the drafter), all at positions n_past.. of the session's sequence. */
pacer_err gen_session_plan(gen_session *s, const int32_t **tokens, int *n, int *pos) {
    gen_model *gm = s->gm;
    const engine_backend *b = &gm->b;
    pacer_err rc = PACER_OK;
    if (gen_session_prefilling(s)) return PACER_ERR_STATE;
    int64_t t0 = clock_now_ns();
    s->n_pend = s->i_pend = 0;
    /* gm->cache[0..n_past) is in the KV cache; the last token completes the history */
    gm->cache[s->n_past] = s->last;
    /* drafts that could not be emitted (context or max_tokens) are not proposed */
    int budget = gm->mode == DRAFT_MODE_SERIAL ? 0 : gm->draft_max;
    if (budget > b->n_ctx - 2 - s->n_past) budget = b->n_ctx - 2 - s->n_past;
    if (s->p.max_tokens >= 0 && budget > s->p.max_tokens - s->predicted_n - 1)
        budget = (int)(s->p.max_tokens - s->predicted_n - 1);
    int k = 0;
    const float *q = NULL;
    if (budget > 0 && gm->mode == DRAFT_MODE_LOOKUP) k = draft_lookup(gm->cache, s->n_past + 1, budget, gm->batch + 1);
    else if (budget > 0 && gm->mode == DRAFT_MODE_MODEL &&
             (rc = draft_model_propose(&gm->dm, &s->draft_smp, gm->cache, s->n_past + 1, budget, gm->batch + 1, &k, &q)))
        return rc;
    gm->batch[0] = s->last;
    gm->n_cache = 0; /* until the round is verified */
    s->round_k = k;
    s->round_q = q;
    *tokens = gm->batch;
    *n = k + 1;
    *pos = s->n_past;
    s->t_decode_ns += clock_now_ns() - t0;
    return PACER_OK;
}

/* Verifies the round against its k + 1 rows and queues the accepted drafts plus the
 * target's own next token; the rows stay the tokens' rows (tok_row) until they are taken. */
static pacer_err gen_verify(gen_session *s, const float *rows) {
    gen_model *gm = s->gm;
    const size_t V = (size_t)gm->b.n_vocab;
    int k = s->round_k;
    s->verify_rounds++;
    int32_t next;
    int accepted = draft_verify(&s->smp, rows, gm->b.n_vocab, gm->batch + 1, k, s->round_q, gm->p_work, &next);
    if (accepted < 0) return PACER_ERR_NOMEM;
    s->draft_n += k;
    s->draft_n_accepted += accepted;
    /* the cache keeps the last token and the accepted drafts; the next eval, at the new
     * n_past, drops the rejected ones */
    memcpy(gm->cache + s->n_past, gm->batch, (size_t)(accepted + 1) * sizeof(int32_t));
    s->n_past += accepted + 1;
    gm->n_cache = s->n_past;
    for (int i = 0; i < accepted; i++) {
        s->pend[i] = gm->batch[1 + i];
        s->pend_row[i] = rows + (size_t)i * V;
    }
    s->pend[accepted] = next;
    s->pend_row[accepted] = rows + (size_t)accepted * V;
    s->n_pend = accepted + 1;
    return PACER_OK;
}

pacer_err gen_session_commit(gen_session *s, const float *rows, int64_t eval_ns) {
    int64_t t0 = clock_now_ns();
    pacer_err rc = gen_verify(s, rows);
    s->t_decode_ns += eval_ns + (clock_now_ns() - t0);
    return rc;
}

/* Decides the next tokens into s->pend: the first from the prefill's row; later ones by one
 * verify round, where the last token and the round's drafts go through the target in one
 * pass. Serial decoding is the round with no drafts. */
static pacer_err gen_decide(gen_session *s) {
    gen_model *gm = s->gm;
    s->n_pend = s->i_pend = 0;
    if (!s->has_last) {
        int32_t tok = sampler_sample(&s->smp, gm->logits, gm->b.n_vocab);
        if (tok < 0) return PACER_ERR_NOMEM;
        s->pend[0] = tok;
        s->pend_row[0] = gm->logits;
        s->n_pend = 1;
        return PACER_OK;
    }
    const int32_t *tok;
    int n, pos;
    pacer_err rc = gen_session_plan(s, &tok, &n, &pos);
    if (rc == PACER_OK) rc = gm_eval(gm, tok, n, pos, gm->logits, n > 1);
    return rc ? rc : gen_verify(s, gm->logits);
}

/* A deferred prefill nobody took: its rows go through the model now, alone. */
static pacer_err prefill_rest(gen_session *s) {
    const int32_t *tok;
    int n, pos;
    gen_session_prompt_rows(s, &tok, &n, &pos);
    pacer_err rc = gm_eval(s->gm, tok, n, pos, s->gm->logits, false);
    return rc ? rc : gen_session_prefilled(s, n, s->gm->logits);
}

pacer_err gen_session_step(gen_session *s, buf *text) {
    const engine_backend *b = &s->gm->b;
    pacer_err rc = gen_session_prefilling(s) ? prefill_rest(s) : PACER_OK;
    if (rc) return rc;
    int64_t t0 = clock_now_ns();
    s->emitted = false;
    if (s->i_pend == s->n_pend && (rc = gen_decide(s))) goto out;
    int32_t tok = s->pend[s->i_pend];
    s->tok = tok;
    s->tok_row = s->pend_row[s->i_pend++];
    s->last = tok;
    s->has_last = true;
    if (b->is_eog(b->ctx, tok)) { s->done = true; s->finish = "stop"; goto out; }
    uint8_t le[4] = {(uint8_t)tok, (uint8_t)(tok >> 8), (uint8_t)(tok >> 16), (uint8_t)(tok >> 24)};
    if (s->hashing && sha256_update(&s->hash, le, 4) != PACER_OK) s->hashing = false; /* reported as "" */
    s->predicted_n++;
    s->emitted = true;
    size_t plen = 0;
    const char *piece = b->piece(b->ctx, tok, &plen);
    if ((rc = gen_text_push(&s->text, piece, plen, text))) goto out;
    if (s->text.stopped) { s->done = true; s->finish = "stop"; goto out; }
    /* the token sits at position n_prompt + predicted_n - 1: the next needs one more */
    if ((s->p.max_tokens >= 0 && s->predicted_n >= s->p.max_tokens) || s->n_prompt + s->predicted_n >= b->n_ctx) {
        s->done = true;
        s->finish = "length";
    }
out:
    if (s->done && rc == PACER_OK) rc = gen_text_flush(&s->text, text);
    s->t_decode_ns += clock_now_ns() - t0;
    return rc;
}

void gen_session_hash_hex(gen_session *s, char hex[65]) {
    uint8_t d[32];
    hex[0] = 0;
    if (s->hashing && sha256_end(&s->hash, d) == PACER_OK) sha256_to_hex(d, hex);
    s->hashing = false;
}

void gen_session_free(gen_session *s) {
    sampler_free(&s->smp);
    sampler_free(&s->draft_smp);
    gen_text_free(&s->text);
    if (s->hashing) sha256_abort(&s->hash);
    s->hashing = false;
}
