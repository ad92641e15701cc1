/* draft.c - draft proposers (n-gram lookup over the sequence itself, a drafter model with its
 * own KV cache) and the verification of a round of drafts against the target's rows. The
 * server calls these from its scheduler thread; nothing here allocates after
 * draft_model_init. */
#include "engine/draft.h"

#include <stdlib.h>
#include <string.h>

const char *draft_mode_name(draft_mode m) {
    switch (m) {
    case DRAFT_MODE_LOOKUP: return "lookup";
    case DRAFT_MODE_MODEL: return "drafter";
    default: return "serial";
    }
}

int draft_lookup(const int32_t *hist, int n, int max, int32_t *out) {
    if (max <= 0)
        return 0;
    int top = n - 1 < DRAFT_NGRAM_MAX ? n - 1 : DRAFT_NGRAM_MAX;
    for (int ng = top; ng >= DRAFT_NGRAM_MIN; ng--) {
        const int32_t *key = hist + n - ng;
        /* the most recent match is the likeliest to continue the same way */
        for (int i = n - ng - 1; i >= 0; i--) {
            if (hist[i] != key[0] || memcmp(hist + i, key, (size_t)ng * sizeof *key) != 0)
                continue;
            int start = i + ng; /* < n: at least one token followed the match */
            for (int t = 0; t < max; t++) {
                int j = start + t;
                out[t] = j < n ? hist[j] : out[j - n]; /* j - n < t: already written */
            }
            return max;
        }
    }
    return 0;
}

pacer_err draft_model_init(draft_model *dm, const engine_backend *b) {
    memset(dm, 0, sizeof *dm);
    dm->b = b;
    dm->cache = malloc((size_t)(b->n_ctx > 0 ? b->n_ctx : 1) * sizeof *dm->cache);
    dm->logits = malloc((size_t)b->n_vocab * sizeof *dm->logits);
    dm->q = malloc((size_t)DRAFT_MAX * (size_t)b->n_vocab * sizeof *dm->q);
    if (!dm->cache || !dm->logits || !dm->q) {
        draft_model_free(dm);
        return PACER_ERR_NOMEM;
    }
    return PACER_OK;
}

void draft_model_free(draft_model *dm) {
    free(dm->cache);
    free(dm->logits);
    free(dm->q);
    memset(dm, 0, sizeof *dm);
}

/* Evaluates what hist[0..n) adds to the drafter's cache; `logits` as in engine_backend.eval
 * (the row after hist[n-1]) and then at least that token is evaluated again. */
static pacer_err sync_to(draft_model *dm, const int32_t *hist, int n, float *logits) {
    int common = 0;
    while (common < n && common < dm->n_cache && dm->cache[common] == hist[common])
        common++;
    if (logits && common == n)
        common = n - 1;
    dm->n_cache = common < dm->n_cache ? common : dm->n_cache;
    if (common < n) {
        pacer_err rc = dm->b->eval(dm->b->ctx, hist + common, n - common, common, logits, false);
        if (rc)
            return rc;
        memcpy(dm->cache + common, hist + common, (size_t)(n - common) * sizeof *hist);
    }
    dm->n_cache = n;
    return PACER_OK;
}

pacer_err draft_model_sync(draft_model *dm, const int32_t *hist, int n) {
    if (n > dm->b->n_ctx)
        n = dm->b->n_ctx; /* a shorter drafter context: drafting stops there (see propose) */
    return sync_to(dm, hist, n, NULL);
}

pacer_err draft_model_propose(draft_model *dm, sampler *smp, const int32_t *hist, int n, int max, int32_t *out,
                              int *n_out, const float **q_out) {
    const engine_backend *b = dm->b;
    bool greedy = smp->p.temperature <= 0;
    *n_out = 0;
    *q_out = greedy ? NULL : dm->q;
    /* the drafter evaluates hist and all drafts but the last: positions up to n + max - 2 */
    if (max > b->n_ctx - n + 1)
        max = b->n_ctx - n + 1;
    if (max > DRAFT_MAX)
        max = DRAFT_MAX;
    if (max <= 0 || n < 1)
        return PACER_OK;
    pacer_err rc = sync_to(dm, hist, n, dm->logits);
    for (int i = 0; rc == PACER_OK && i < max; i++) {
        int32_t d;
        if (greedy) {
            d = sampler_argmax(dm->logits, b->n_vocab);
        } else {
            float *q = dm->q + (size_t)i * b->n_vocab;
            if ((rc = sampler_probs(smp, dm->logits, b->n_vocab, q)))
                break;
            d = sampler_draw(smp, q, b->n_vocab);
        }
        if (d < 0)
            return PACER_ERR_NOMEM;
        out[(*n_out)++] = d;
        if (i + 1 < max && (rc = b->eval(b->ctx, &d, 1, n + i, dm->logits, false)) == PACER_OK)
            dm->cache[dm->n_cache++] = d;
    }
    return rc;
}

int draft_verify(sampler *smp, const float *rows, int n_vocab, const int32_t *drafts, int k, const float *q,
                 float *p_work, int32_t *next) {
    const size_t V = (size_t)n_vocab;
    if (smp->p.temperature <= 0) {
        /* greedy: exactly the tokens serial decoding would pick from the same rows */
        for (int i = 0; i < k; i++) {
            int32_t t = sampler_argmax(rows + i * V, n_vocab);
            if (t != drafts[i]) {
                *next = t;
                return i;
            }
        }
        *next = sampler_argmax(rows + k * V, n_vocab);
        return k;
    }
    for (int i = 0; i < k; i++) {
        bool accepted;
        if (sampler_probs(smp, rows + i * V, n_vocab, p_work))
            return -1;
        int32_t t = sampler_speculate(smp, p_work, q ? q + i * V : NULL, n_vocab, drafts[i], &accepted);
        if (t < 0)
            return -1;
        if (!accepted) {
            *next = t;
            return i;
        }
    }
    *next = sampler_sample(smp, rows + k * V, n_vocab);
    return *next < 0 ? -1 : k;
}
