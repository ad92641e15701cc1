/* sampler.c - greedy and seeded temperature / top-k / top-p sampling. Top-k keeps a
 * min-heap of the k largest logits; top-p sorts the candidates (ties broken by id, so the
 * order never depends on the sort's whims). */
#include "engine/sampler.h"

#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "base/rng.h"

sampler_params sampler_params_greedy(void) {
    sampler_params p = {.temperature = 0, .top_k = 0, .top_p = 1};
    return p;
}

void sampler_init(sampler *s, const sampler_params *p, uint64_t seed) {
    memset(s, 0, sizeof *s);
    s->p = p ? *p : sampler_params_greedy();
    rng_seed(&s->rng, seed);
}

void sampler_free(sampler *s) {
    free(s->idx);
    free(s->prob);
    s->idx = NULL;
    s->prob = NULL;
    s->cap = 0;
}

/* The first index of the largest logit (NaNs never win; a NaN first logit does, as a
 * compare-and-keep loop would have it). Two passes: the maximum over 16 independent lanes
 * (SIMD max; a loop that keeps the best index waits on each load it selects, ~10 cycles a
 * logit: half a millisecond over a 128K vocabulary, every decoded token), then its first
 * position. */
static int32_t argmax(const float *l, int n) {
    enum { LANES = 16 };
    if (n < 4 * LANES || isnan(l[0])) {
        int32_t b = 0;
        for (int i = 1; i < n; i++)
            if (l[i] > l[b])
                b = i;
        return b;
    }
    float m[LANES];
    for (int k = 0; k < LANES; k++)
        m[k] = l[0];
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            m[k] = l[i + k] > m[k] ? l[i + k] : m[k];
    float best = m[0];
    for (int k = 1; k < LANES; k++)
        best = m[k] > best ? m[k] : best;
    for (; i < n; i++)
        best = l[i] > best ? l[i] : best;
    for (i = 0; l[i] != best; i++)
        ;
    return i;
}

/* a ranks before b: larger logit, then smaller id */
static int before(const float *l, int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); }

static void heap_down(int32_t *h, int n, int i, const float *l) {
    for (;;) {
        int m = i, c1 = 2 * i + 1, c2 = 2 * i + 2;
        if (c1 < n && before(l, h[m], h[c1]))
            m = c1;
        if (c2 < n && before(l, h[m], h[c2]))
            m = c2;
        if (m == i)
            return;
        int32_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static _Thread_local const float *t_sort_logits;

static int cmp_rank(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return before(t_sort_logits, x, y) ? -1 : (before(t_sort_logits, y, x) ? 1 : 0);
}

/* Sorts idx[0..n) best first: heap-sort of the top-k heap, or qsort for everything. */
static int candidates(sampler *s, const float *l, int nv) {
    int k = s->p.top_k > 0 && s->p.top_k < nv ? s->p.top_k : nv;
    if (k < nv) {
        /* min-heap by rank: the root is the worst of the kept k */
        for (int i = 0; i < k; i++)
            s->idx[i] = i;
        for (int i = k / 2 - 1; i >= 0; i--)
            heap_down(s->idx, k, i, l);
        for (int i = k; i < nv; i++)
            if (before(l, i, s->idx[0])) {
                s->idx[0] = i;
                heap_down(s->idx, k, 0, l);
            }
    } else {
        for (int i = 0; i < nv; i++)
            s->idx[i] = i;
    }
    t_sort_logits = l;
    qsort(s->idx, (size_t)k, sizeof *s->idx, cmp_rank);
    return k;
}

/* Grows the work arrays to n_vocab entries; false when out of memory. */
static bool reserve(sampler *s, int n_vocab) {
    if (n_vocab <= s->cap)
        return true;
    int32_t *ni = realloc(s->idx, (size_t)n_vocab * sizeof *ni);
    if (ni)
        s->idx = ni;
    float *np = realloc(s->prob, (size_t)n_vocab * sizeof *np);
    if (np)
        s->prob = np;
    if (!ni || !np)
        return false;
    s->cap = n_vocab;
    return true;
}

/* The transform sampling draws from: idx[0..n) best first with unnormalized weights
 * prob[0..n) after temperature, top-k and top-p; *sum is their total. Returns n. */
static int weigh(sampler *s, const float *logits, int n_vocab, double *sum_out) {
    int n = candidates(s, logits, n_vocab);
    float inv_t = 1.0f / s->p.temperature, mx = logits[s->idx[0]];
    double sum = 0;
    for (int i = 0; i < n; i++) {
        s->prob[i] = expf((logits[s->idx[i]] - mx) * inv_t);
        sum += s->prob[i];
    }
    if (s->p.top_p > 0 && s->p.top_p < 1) {
        double c = 0;
        int keep = n;
        for (int i = 0; i < n; i++) {
            c += s->prob[i];
            if (c >= s->p.top_p * sum) {
                keep = i + 1;
                break;
            }
        }
        n = keep;
        sum = 0;
        for (int i = 0; i < n; i++)
            sum += s->prob[i];
    }
    *sum_out = sum;
    return n;
}

int32_t sampler_sample(sampler *s, const float *logits, int n_vocab) {
    if (n_vocab <= 0 || !logits)
        return -1;
    if (s->p.temperature <= 0)
        return argmax(logits, n_vocab);
    if (!reserve(s, n_vocab))
        return -1;
    double sum;
    int n = weigh(s, logits, n_vocab, &sum);
    double r = rng_uniform(&s->rng) * sum, c = 0;
    for (int i = 0; i < n; i++) {
        c += s->prob[i];
        if (r < c)
            return s->idx[i];
    }
    return s->idx[n - 1];
}

int32_t sampler_argmax(const float *logits, int n_vocab) {
    return n_vocab > 0 && logits ? argmax(logits, n_vocab) : -1;
}

pacer_err sampler_probs(sampler *s, const float *logits, int n_vocab, float *probs) {
    if (n_vocab <= 0 || !logits)
        return PACER_ERR_ARG;
    memset(probs, 0, (size_t)n_vocab * sizeof *probs);
    if (s->p.temperature <= 0) {
        probs[argmax(logits, n_vocab)] = 1;
        return PACER_OK;
    }
    if (!reserve(s, n_vocab))
        return PACER_ERR_NOMEM;
    double sum;
    int n = weigh(s, logits, n_vocab, &sum);
    for (int i = 0; i < n; i++)
        probs[s->idx[i]] = (float)(s->prob[i] / sum);
    return PACER_OK;
}

int32_t sampler_draw(sampler *s, const float *probs, int n_vocab) {
    double total = 0;
    int32_t last = -1;
    for (int i = 0; i < n_vocab; i++)
        if (probs[i] > 0) {
            total += probs[i];
            last = i;
        }
    if (last < 0)
        return -1;
    double r = rng_uniform(&s->rng) * total, c = 0;
    for (int i = 0; i < last; i++) {
        c += probs[i];
        if (r < c)
            return i;
    }
    return last;
}

int32_t sampler_speculate(sampler *s, const float *p, const float *q, int n_vocab, int32_t draft, bool *accepted) {
    *accepted = false;
    if (n_vocab <= 0 || draft < 0 || draft >= n_vocab)
        return -1;
    /* Accept with probability min(1, p/q): a point-mass proposal has q(draft) = 1. */
    double qd = q ? q[draft] : 1.0, pd = p[draft];
    if (qd > 0 && rng_uniform(&s->rng) * qd < pd) {
        *accepted = true;
        return draft;
    }
    /* Rejected: draw from max(0, p - q), normalized. Summed in double over the vocabulary
     * rather than materialized, so p and q stay read-only. */
    double total = 0;
    int32_t last = -1;
    for (int i = 0; i < n_vocab; i++) {
        double w = (double)p[i] - (q ? q[i] : (i == draft ? 1.0 : 0.0));
        if (w > 0) {
            total += w;
            last = i;
        }
    }
    if (last < 0) /* p == q: rejection had probability 0; only rounding gets here */
        return sampler_draw(s, p, n_vocab);
    double r = rng_uniform(&s->rng) * total, c = 0;
    for (int i = 0; i < last; i++) {
        double w = (double)p[i] - (q ? q[i] : (i == draft ? 1.0 : 0.0));
        if (w > 0) {
            c += w;
            if (r < c)
                return i;
        }
    }
    return last;
}
