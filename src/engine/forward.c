/* forward.c - the forward pass over a chunk of rows (tokens of one or more sequences): per
 * layer RMSNorm, Q/K/V projections (optional biases, qwen3 q/k norms), RoPE, grouped-query
 * attention over the F16 KV cache, SwiGLU feed-forward; final norm and output projection.
 * Every step runs as pool jobs; each row's arithmetic is the serial one's whichever thread
 * does it, so results do not depend on the threads or the batch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "engine/kernels.h"
#include "engine/kernels_f16.h"
#include "engine/threadpool.h"

typedef struct job {
    engine *e;
    int nb;
    /* matmuls: up to 3 matrices over the same input rows */
    int n_mm;
    const mat *m[3];
    const void *a[3];
    float *out[3];
    int ldo[3];
    /* attention over the rows' own sequences (e->row_seq, e->row_pos) */
    int layer;
} job;

/* The units a matrix is split into over threads: groups of 8 rows when packed. */
static int mat_units(const mat *m) { return m->packed ? KERN_GROUPS(m->n_out) : m->n_out; }

static void job_matmul(void *ctx, int ith, int nth) {
    job *j = ctx;
    engine *e = j->e;
    int total = 0;
    for (int i = 0; i < j->n_mm; i++)
        total += mat_units(j->m[i]);
    int lo, hi;
    threadpool_split(total, ith, nth, &lo, &hi);
    float *scratch = e->scratch + (size_t)ith * e->n_scratch;
    int base = 0;
    for (int i = 0; i < j->n_mm; i++) {
        const mat *m = j->m[i];
        int units = mat_units(m), u0 = lo - base, u1 = hi - base;
        base += units;
        if (u0 < 0)
            u0 = 0;
        if (u1 > units)
            u1 = units;
        if (u0 >= u1)
            continue;
        if (m->packed)
            kern_gemm_packed(m->type, m->packed, m->n_in, m->n_out, u0, u1, j->a[i], e->act_stride, j->nb,
                             j->out[i], j->ldo[i]);
        else
            kern_matmul(m->type, m->data, m->row_bytes, m->n_in, u0, u1, j->a[i], e->act_stride, j->nb,
                        j->out[i], j->ldo[i], scratch);
    }
}

static void rmsnorm(float *out, const float *x, const float *w, int n, float eps) {
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (double)x[i] * x[i];
    float scale = 1.0f / sqrtf((float)(ss / n) + eps);
    for (int i = 0; i < n; i++)
        out[i] = x[i] * scale * w[i];
}

/* The per-row work before a set of matrices, one job over the chunk's rows: optionally
 * the token embedding (first layer), the residual x += xn, SwiGLU (g = silu(g) * u), an
 * RMSNorm of x; then the row is prepared for each distinct activation type. Rows before
 * `first` get only the embedding/residual (the output norm skips them); row b >= first
 * goes to activation row b - first. Each element's arithmetic is the serial one's. */
typedef struct row_job {
    engine *e;
    int nb, first;
    const int32_t *tokens; /* embed these first, or NULL */
    bool resid, swiglu;
    bool parts;            /* SwiGLU rows split over the threads by elements (few rows) */
    const float *norm;     /* rmsnorm(x) is the input, or NULL: `in` rows are */
    const float *in;
    int n_in, n_slot;
    ggml_type type[3];
    unsigned char *slot[3];
} row_job;

/* g = silu(g) * u for elements [i0, i1) of the gate/up outputs */
static void swiglu(engine *e, size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; i++) {
        float g = e->g[i];
        e->g[i] = g / (1.0f + expf(-g)) * e->u[i];
    }
}

/* Fewer SwiGLU rows than threads (decode): each thread takes runs of 32 elements of the
 * rows, SwiGLU and the activation blocks they make (elementwise work: the same values). */
static void job_row_parts(const row_job *rj, int ith, int nth) {
    engine *e = rj->e;
    int per = rj->n_in / 32, lo, hi;
    threadpool_split(rj->nb * per, ith, nth, &lo, &hi);
    for (int u = lo; u < hi;) {
        int b = u / per, k0 = u % per, k1 = hi - b * per < per ? hi - b * per : per;
        swiglu(e, (size_t)b * e->n_ff + 32 * (size_t)k0, (size_t)b * e->n_ff + 32 * (size_t)k1);
        for (int s = 0; s < rj->n_slot; s++)
            kern_act_prepare(rj->type[s], rj->in + (size_t)b * rj->n_in + 32 * k0,
                             rj->slot[s] + (size_t)b * e->act_stride + kern_act_size(rj->type[s], 32 * k0), 32 * (k1 - k0));
        u = b * per + k1;
    }
}

static void job_rows(void *ctx, int ith, int nth) {
    row_job *rj = ctx;
    engine *e = rj->e;
    int D = e->n_embd, lo, hi;
    if (rj->parts) {
        job_row_parts(rj, ith, nth);
        return;
    }
    threadpool_split(rj->nb, ith, nth, &lo, &hi);
    float *normed = e->scratch + (size_t)ith * e->n_scratch;
    for (int b = lo; b < hi; b++) {
        float *x = e->x + (size_t)b * D;
        if (rj->tokens)
            ggml_dequantize_row(e->tok_embd.type,
                                (const unsigned char *)e->tok_embd.data + (size_t)rj->tokens[b] * e->tok_embd.row_bytes, x, D);
        if (rj->resid)
            for (int i = 0; i < D; i++)
                x[i] += e->xn[(size_t)b * D + i];
        if (rj->swiglu)
            swiglu(e, (size_t)b * e->n_ff, (size_t)(b + 1) * e->n_ff);
        if (b < rj->first)
            continue;
        const float *src = rj->in ? rj->in + (size_t)b * rj->n_in : normed;
        if (rj->norm)
            rmsnorm(normed, x, rj->norm, D, e->eps);
        for (int s = 0; s < rj->n_slot; s++)
            kern_act_prepare(rj->type[s], src, rj->slot[s] + (size_t)(b - rj->first) * e->act_stride, rj->n_in);
    }
}

/* Runs fn over the chunk's rows on all threads (one row alone on the caller). */
static void run_rows(engine *e, int nb, threadpool_fn fn, void *ctx) {
    if (nb >= 2)
        threadpool_run(e->tp, fn, ctx);
    else
        fn(ctx, 0, 1);
}

/* Runs rj's row work, then up to three matrices on its prepared rows (nb - first of them). */
static void run_matmuls(engine *e, row_job *rj, int n_mm, const mat *const *ms, float *const *outs) {
    job j = {.e = e, .nb = rj->nb - rj->first, .n_mm = n_mm};
    unsigned char *act = e->act;
    rj->e = e;
    rj->n_slot = 0;
    for (int i = 0; i < n_mm; i++) {
        const mat *m = ms[i];
        j.m[i] = m;
        j.out[i] = outs[i];
        j.ldo[i] = m->n_out;
        ggml_type at = kern_act_type(m->type);
        int same = -1;
        for (int k = 0; k < i; k++)
            if (kern_act_type(ms[k]->type) == at)
                same = k;
        if (same >= 0) {
            j.a[i] = j.a[same];
            continue;
        }
        rj->type[rj->n_slot] = m->type;
        rj->slot[rj->n_slot] = act + (size_t)i * e->batch * e->act_stride;
        j.a[i] = rj->slot[rj->n_slot++];
    }
    int nth = threadpool_size(e->tp); /* with 2 or 3 threads the SwiGLU split saves less than a job's sync */
    rj->parts = rj->swiglu && nth >= 4 && rj->nb < nth && rj->n_in % 32 == 0 && !rj->tokens && !rj->resid && !rj->norm &&
                rj->first == 0;
    if (rj->parts)
        threadpool_run(e->tp, job_rows, rj);
    else
        run_rows(e, rj->nb, job_rows, rj);
    threadpool_run(e->tp, job_matmul, &j);
}

static void rope(const engine *e, float *v, int pos) {
    const float *cs = e->rope_cs + (size_t)pos * e->n_rot;
    int half = e->n_rot / 2;
    for (int i = 0; i < half; i++) {
        float c = cs[2 * i], s = cs[2 * i + 1];
        int i0 = e->rope_neox ? i : 2 * i;
        int i1 = e->rope_neox ? i + half : 2 * i + 1;
        float x0 = v[i0], x1 = v[i1];
        v[i0] = x0 * c - x1 * s;
        v[i1] = x0 * s + x1 * c;
    }
}

/* Where position `pos` of sequence `seq` in layer `l` starts in the K and V caches. */
static size_t kv_offset(const engine *e, int seq, int l, int pos) {
    return (((size_t)seq * e->n_layer + (size_t)l) * e->n_ctx + (size_t)pos) * e->kv_dim;
}

static void add_bias(float *y, const float *bias, int n) {
    if (bias)
        for (int i = 0; i < n; i++)
            y[i] += bias[i];
}

/* After the Q/K/V projections, per row: biases, q/k norms, RoPE, the K/V cache writes. */
static void job_qkv_rows(void *ctx, int ith, int nth) {
    job *j = ctx;
    engine *e = j->e;
    const layer *L = &e->layers[j->layer];
    int hd = e->hd, lo, hi;
    threadpool_split(j->nb, ith, nth, &lo, &hi);
    for (int b = lo; b < hi; b++) {
        float *q = e->q + (size_t)b * e->q_dim, *k = e->k + (size_t)b * e->kv_dim, *v = e->v + (size_t)b * e->kv_dim;
        add_bias(q, L->bq, e->q_dim);
        add_bias(k, L->bk, e->kv_dim);
        add_bias(v, L->bv, e->kv_dim);
        for (int h = 0; h < e->n_head; h++) {
            if (L->q_norm)
                rmsnorm(q + (size_t)h * hd, q + (size_t)h * hd, L->q_norm, hd, e->eps);
            rope(e, q + (size_t)h * hd, e->row_pos[b]);
        }
        for (int h = 0; h < e->n_head_kv; h++) {
            if (L->k_norm)
                rmsnorm(k + (size_t)h * hd, k + (size_t)h * hd, L->k_norm, hd, e->eps);
            rope(e, k + (size_t)h * hd, e->row_pos[b]);
        }
        size_t off = kv_offset(e, e->row_seq[b], j->layer, e->row_pos[b]);
        kern_f32_to_f16(k, e->kc + off, e->kv_dim);
        kern_f32_to_f16(v, e->vc + off, e->kv_dim);
    }
}

/* Attention over the rows' own sequences. A unit of work is one row's heads that share a KV
 * head (all of them when there are enough units for the threads, else one): each key's
 * values are then read once for those heads. Every head's arithmetic is the same either
 * way (kernels_f16.h), so rows do not depend on the batch or the threads. */
static void job_attention(void *ctx, int ith, int nth) {
    job *j = ctx;
    engine *e = j->e;
    int hd = e->hd, group = e->n_head / e->n_head_kv;
    int per = j->nb * e->n_head_kv >= nth ? group : 1, units = j->nb * e->n_head / per;
    float *sc = e->scratch + (size_t)ith * e->n_scratch; /* per rows of weights, p + 1 each */
    float *qh = sc + (size_t)per * e->n_ctx;            /* the queries rounded through F16, as ggml does */
    float scale = 1.0f / sqrtf((float)hd);
    for (int u = ith; u < units; u += nth) { /* strided: every thread gets early and late rows alike */
        int b = u * per / e->n_head, h0 = u * per % e->n_head, kvh = h0 / group, n = e->row_pos[b] + 1;
        size_t base = kv_offset(e, e->row_seq[b], j->layer, 0) + (size_t)kvh * hd;
        for (int h = 0; h < per; h++)
            kern_act_prepare(GGML_TYPE_F16, e->q + (size_t)b * e->q_dim + (size_t)(h0 + h) * hd, qh + (size_t)h * hd, hd);
        kern_attn_scores(per, e->kc + base, e->kv_dim, qh, hd, hd, n, scale, sc, n);
        for (int h = 0; h < per; h++)
            kern_softmax_f16(sc + (size_t)h * n, n);
        kern_attn_values(per, sc, n, e->vc + base, e->kv_dim, hd, n, e->att + (size_t)b * e->q_dim + (size_t)h0 * hd, hd);
    }
}

/* One chunk of at most e->batch rows: token b at e->row_pos[b] of sequence e->row_seq[b]
 * (a sequence's rows in a chunk are consecutive positions). Each row is computed exactly as
 * it would be alone: the kernels do not depend on the batch (kernels.h), and the per-row
 * steps run on all threads, a row on one thread, in the serial order. */
static void forward_chunk(engine *e, const int32_t *tokens, int nb, float *logits, bool all_logits) {
    int D = e->n_embd;
    for (int l = 0; l < e->n_layer; l++) {
        const layer *L = &e->layers[l];
        row_job pre = {.nb = nb, .tokens = l == 0 ? tokens : NULL, .resid = l > 0, .norm = L->attn_norm, .n_in = D};
        const mat *qkv[3] = {&L->wq, &L->wk, &L->wv};
        float *qkv_out[3] = {e->q, e->k, e->v};
        run_matmuls(e, &pre, 3, qkv, qkv_out);
        job aj = {.e = e, .nb = nb, .layer = l};
        run_rows(e, nb, job_qkv_rows, &aj);
        threadpool_run(e->tp, job_attention, &aj);
        row_job ao = {.nb = nb, .in = e->att, .n_in = e->q_dim};
        const mat *wo[1] = {&L->wo};
        float *wo_out[1] = {e->xn};
        run_matmuls(e, &ao, 1, wo, wo_out);
        row_job fn = {.nb = nb, .resid = true, .norm = L->ffn_norm, .n_in = D};
        const mat *gu[2] = {&L->gate, &L->up};
        float *gu_out[2] = {e->g, e->u};
        run_matmuls(e, &fn, 2, gu, gu_out);
        row_job sw = {.nb = nb, .swiglu = true, .in = e->g, .n_in = e->n_ff};
        const mat *dn[1] = {&L->down};
        float *dn_out[1] = {e->xn};
        run_matmuls(e, &sw, 1, dn, dn_out);
    }
    if (!logits)
        return;
    row_job out = {.nb = nb, .first = all_logits ? 0 : nb - 1, .resid = true, .norm = e->out_norm, .n_in = D};
    const mat *om[1] = {&e->output};
    float *oo[1] = {logits};
    run_matmuls(e, &out, 1, om, oo);
}

pacer_err engine_eval_seq(engine *e, int seq, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    if (!e || seq < 0 || seq >= e->n_seq || n < 0 || (n > 0 && !tokens) || pos < 0 || pos > e->n_past[seq] ||
        pos + n > e->n_ctx)
        return PACER_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= e->n_vocab)
            return PACER_ERR_ARG;
    e->n_past[seq] = pos;
    for (int i = 0; i < n; i += e->batch) {
        int nb = n - i < e->batch ? n - i : e->batch;
        bool last = i + nb == n;
        float *lg = NULL;
        if (logits && all_logits)
            lg = logits + (size_t)i * e->n_vocab;
        else if (logits && last)
            lg = logits;
        for (int b = 0; b < nb; b++) {
            e->row_seq[b] = seq;
            e->row_pos[b] = pos + i + b;
        }
        forward_chunk(e, tokens + i, nb, lg, all_logits);
        e->n_past[seq] = pos + i + nb;
    }
    return PACER_OK;
}

pacer_err engine_eval(engine *e, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    return engine_eval_seq(e, 0, tokens, n, pos, logits, all_logits);
}

pacer_err engine_eval_rows(engine *e, const int32_t *tokens, const int *seq, const int *pos, int n, float *logits) {
    if (!e || n < 0 || (n > 0 && (!tokens || !seq || !pos)))
        return PACER_ERR_ARG;
    /* checked before anything is evaluated: a sequence's first row at most at its cache's
     * end, its next rows each one position further */
    for (int i = 0; i < n; i++) {
        if (seq[i] < 0 || seq[i] >= e->n_seq || tokens[i] < 0 || tokens[i] >= e->n_vocab || pos[i] < 0 ||
            pos[i] >= e->n_ctx)
            return PACER_ERR_ARG;
        int prev = -1;
        for (int k = i - 1; k >= 0 && prev < 0; k--)
            if (seq[k] == seq[i])
                prev = k;
        if (prev >= 0 ? pos[i] != pos[prev] + 1 : pos[i] > e->n_past[seq[i]])
            return PACER_ERR_ARG;
    }
    for (int i = 0; i < n; i += e->batch) {
        int nb = n - i < e->batch ? n - i : e->batch;
        for (int b = 0; b < nb; b++) {
            e->row_seq[b] = seq[i + b];
            e->row_pos[b] = pos[i + b];
        }
        forward_chunk(e, tokens + i, nb, logits ? logits + (size_t)i * e->n_vocab : NULL, true);
        for (int b = 0; b < nb; b++) /* what followed a row is dropped, as engine_eval does */
            e->n_past[seq[i + b]] = pos[i + b] + 1;
    }
    return PACER_OK;
}
