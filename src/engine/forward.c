/* forward.c - the forward pass over a chunk of rows (tokens of one or more sequences): per
 * layer RMSNorm, Q/K/V projections (optional biases, qwen3 q/k norms), RoPE, grouped-query
 * attention over the F16 KV cache, SwiGLU feed-forward; final norm and output projection.
 * Every step runs as pool jobs; each row's arithmetic is the serial one's whichever thread
 * does it, so results do not depend on the threads or the batch.
 *
 * A layer is six pool jobs (four for one row: its RMSNorms run inline): the attention
 * RMSNorm; the Q/K/V matrices, each head's bias, norm, RoPE and K/V cache write done by the
 * thread that finishes the head's last chunk, then attention in the same job, each unit
 * waiting for its heads and preparing its slice of the output matrix's input; the output
 * matrix; the feed-forward RMSNorm; gate and up, each chunk of rows taken through SwiGLU
 * into the down matrix's input; down. Matrices are split into chunks of rows handed out on
 * demand (threadpool_chunks). The last layer's output matrix and feed-forward run only for
 * the rows whose logits are wanted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "engine/engine_impl.h"
#include "engine/kernels.h"
#include "engine/kernels_f16.h"
#include "engine/threadpool.h"

/* Activation slots (e->act holds 3, each `batch` rows): a matrix set's inputs start at slot
 * 0; down's input is written into slot 2 while gate and up still read theirs. */
#define SLOT_DOWN 2

static int imin(int a, int b) { return a < b ? a : b; }

static void rmsnorm(float *out, const float *x, const float *w, int n, float eps) {
    double s[4] = {0, 0, 0, 0}; /* four running sums: the dependency chain a quarter as long */
    int i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++)
            s[k] += (double)x[i + k] * x[i + k];
    for (; i < n; i++)
        s[0] += (double)x[i] * x[i];
    double ss = (s[0] + s[1]) + (s[2] + s[3]);
    float scale = 1.0f / sqrtf((float)(ss / n) + eps);
    for (i = 0; i < n; i++)
        out[i] = x[i] * scale * w[i];
}

/* g = silu(g) * u for elements [i0, i1) of the gate/up outputs */
static void swiglu(engine *e, size_t i0, size_t i1) { kern_swiglu(e->g + i0, e->u + i0, (int)(i1 - i0)); }

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

/* Where position `pos` of KV head `kvh` of sequence `seq` in layer `l` starts in the V cache
 * (pos 0: where the head starts in both caches). A head's positions are contiguous, hd
 * numbers apart, so attention streams them:
 * with positions kv_dim apart (a head's 128 bytes in each 1 KB), one Zen 5 core's scores
 * over 2048 keys ran at 44 GMAC/s against 53, the value sums 58 against 73. */
static size_t kv_offset(const engine *e, int seq, int l, int kvh, int pos) {
    return ((((size_t)seq * e->n_layer + (size_t)l) * e->n_head_kv + (size_t)kvh) * e->kv_pos + (size_t)pos) * e->hd;
}

/* ---------------- per-row work before a set of matrices ---------------- */

/* One job over the chunk's rows: optionally the token embedding (first layer), the residual
 * x += xn, SwiGLU (g = silu(g) * u), an RMSNorm of x; then the row is prepared for each
 * distinct activation type. */
typedef struct row_job {
    engine *e;
    int nb;
    const int32_t *tokens; /* embed these first, or NULL */
    bool resid, swiglu;
    const float *norm;     /* rmsnorm(x) is the input, or NULL: `in` rows are */
    const float *in;
    int n_in, n_slot;
    ggml_type type[3];
    unsigned char *slot[3];
} row_job;

static void job_rows(void *ctx, int ith, int nth) {
    row_job *rj = ctx;
    engine *e = rj->e;
    int D = e->n_embd, lo, hi;
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
        const float *src = rj->in ? rj->in + (size_t)b * rj->n_in : normed;
        if (rj->norm)
            rmsnorm(normed, x, rj->norm, D, e->eps);
        for (int s = 0; s < rj->n_slot; s++)
            kern_act_prepare(rj->type[s], src, rj->slot[s] + (size_t)b * e->act_stride, rj->n_in);
    }
}

/* ---------------- jobs, and their profile ---------------- */

typedef struct prof_call {
    engine_prof *pr;
    threadpool_fn fn;
    void *ctx;
} prof_call;

static void prof_job(void *c, int ith, int nth) {
    prof_call *pc = c;
    pc->pr->start[ith] = clock_now_s();
    pc->fn(pc->ctx, ith, nth);
    pc->pr->end[ith] = clock_now_s();
}

/* The profile when it is on, else NULL. */
static engine_prof *profiling(const engine *e) { return e->prof && e->prof->on ? e->prof : NULL; }

/* Runs fn on the pool's threads, or alone on the caller (`inline_`); while a profile is on,
 * timed into `ph`. */
static void run_job(engine *e, engine_phase ph, bool inline_, threadpool_fn fn, void *ctx) {
    engine_prof *pr = profiling(e);
    prof_call pc = {pr, fn, ctx};
    double t0 = 0;
    if (pr) {
        fn = prof_job;
        ctx = &pc;
        t0 = clock_now_s();
    }
    if (inline_)
        fn(ctx, 0, 1);
    else
        threadpool_run(e->tp, fn, ctx);
    if (!pr)
        return;
    int nth = inline_ ? 1 : threadpool_size(e->tp);
    engine_phase_time *pt = &pr->p.phase[ph];
    pt->jobs++;
    pt->wall_s += clock_now_s() - t0;
    double last = 0;
    for (int i = 0; i < nth; i++)
        last = pr->end[i] > last ? pr->end[i] : last;
    for (int i = 0; i < nth; i++) {
        pt->busy_s += pr->end[i] - pr->start[i];
        pt->tail_s += last - pr->end[i];
    }
}

pacer_err engine_profile_enable(engine *e, bool on) {
    if (!e)
        return PACER_ERR_ARG;
    if (!on) {
        if (e->prof)
            e->prof->on = false;
        return PACER_OK;
    }
    int nth = threadpool_size(e->tp);
    if (!e->prof) {
        engine_prof *pr = calloc(1, sizeof *pr + 2 * (size_t)nth * sizeof(double));
        if (!pr)
            return PACER_ERR_NOMEM;
        pr->start = (double *)(pr + 1);
        pr->end = pr->start + nth;
        e->prof = pr;
    }
    memset(&e->prof->p, 0, sizeof e->prof->p);
    e->prof->p.threads = nth;
    e->prof->on = true;
    return PACER_OK;
}

void engine_profile_get(const engine *e, engine_profile *out) {
    if (e && e->prof)
        *out = e->prof->p;
    else
        memset(out, 0, sizeof *out);
}

const char *engine_phase_name(engine_phase p) {
    static const char *const names[ENGINE_PHASES] = {"rows", "qkv+attention", "attention out", "gate+up", "down",
                                                     "output"};
    return p >= 0 && p < ENGINE_PHASES ? names[p] : "?";
}

/* Runs fn over the chunk's rows on all threads (one row alone on the caller). */
static void run_rows(engine *e, engine_phase ph, int nb, threadpool_fn fn, void *ctx) {
    run_job(e, ph, nb < 2, fn, ctx);
}

/* ---------------- matrices ---------------- */

enum { POST_NONE, POST_QKV, POST_SWIGLU };
#define HEAD_POSTED (-1) /* e->head_left: the head's post-processing is written */

typedef struct job {
    engine *e;
    int nb;
    /* up to 3 matrices over the same input rows */
    int n_mm;
    const mat *m[3];
    const void *a[3];
    float *out[3];
    int ldo[3];
    bool paired;           /* a chunk is the same rows of every matrix (gate and up) */
    int rows;              /* rows per chunk; attention: heads per unit */
    int n_cut;             /* > 0: chunk c is e->cuts[c] (one such job runs at a time) */
    int span;              /* attention: rows per unit */
    int start[4];          /* not paired: the chunk where matrix i starts; start[n_mm]: all */
    threadpool_chunks ch;
    int post;              /* what the thread does with a chunk's outputs (POST_*) */
    ggml_type next_type;   /* the activation the post step prepares (SwiGLU, attention) */
    unsigned char *next_slot;
    int layer;
    bool wait_heads;       /* attention: wait for each unit's Q/K/V heads (HEAD_POSTED) */
    bool split;            /* attention: units of a KV head's queries and a range of keys */
} job;

/* out[b * ldo + r] for rows [r0, r1) of m (r0, and r1 unless it is n_out, multiples of the
 * group's rows when packed) */
static void mat_rows(const engine *e, const mat *m, int r0, int r1, const void *a, int nb, float *out, int ldo,
                     float *scratch) {
    if (m->packed)
        kern_gemm_packed(m->type, m->packed, m->n_in, m->n_out, r0 / kern_pack_rows(m->type),
                         kern_pack_groups(m->type, r1), a, e->act_stride, nb, out, ldo);
    else
        kern_matmul(m->type, m->data, m->row_bytes, m->n_in, r0, r1, a, e->act_stride, nb, out, ldo, scratch);
}

static void add_bias(float *y, const float *bias, int n) {
    if (bias)
        for (int i = 0; i < n; i++)
            y[i] += bias[i];
}

/* After the Q/K/V projections, for rows [b0, b1) and the heads in outputs [r0, r1) of matrix
 * i (0 q, 1 k, 2 v; r0 and r1 on head boundaries): biases, q/k norms, RoPE, the K/V cache
 * writes. Elementwise per head: the same values however heads are split. */
static void qkv_post(engine *e, int l, int i, int r0, int r1, int b0, int b1) {
    const layer *L = &e->layers[l];
    const float *bias[3] = {L->bq, L->bk, L->bv}, *norm[3] = {L->q_norm, L->k_norm, NULL};
    float *base[3] = {e->q, e->k, e->v};
    int hd = e->hd, dim = i == 0 ? e->q_dim : e->kv_dim;
    for (int b = b0; b < b1; b++) {
        float *y = base[i] + (size_t)b * dim;
        add_bias(y + r0, bias[i] ? bias[i] + r0 : NULL, r1 - r0);
        for (int h = r0 / hd; i < 2 && h < r1 / hd; h++) {
            if (norm[i])
                rmsnorm(y + (size_t)h * hd, y + (size_t)h * hd, norm[i], hd, e->eps);
            rope(e, y + (size_t)h * hd, e->row_pos[b]);
        }
        if (i > 0) { /* each KV head's row to its place in the cache */
            for (int h = r0 / hd; h < r1 / hd; h++)
                if (i == 1)
                    kern_attn_key_store(e->kc + kv_offset(e, e->row_seq[b], l, h, 0), e->row_pos[b], y + (size_t)h * hd, hd);
                else
                    kern_f32_to_f16(y + (size_t)h * hd, e->vc + kv_offset(e, e->row_seq[b], l, h, e->row_pos[b]), hd);
        }
    }
}

/* Q/K/V post-processing as its own job over rows (head size not a multiple of the packed
 * groups' rows: a chunk of packed rows cannot end on a head boundary). */
static void job_qkv_rows(void *ctx, int ith, int nth) {
    job *j = ctx;
    int lo, hi;
    threadpool_split(j->nb, ith, nth, &lo, &hi);
    for (int i = 0; i < 3; i++)
        qkv_post(j->e, j->layer, i, 0, j->m[i]->n_out, lo, hi);
}

/* SwiGLU of gate/up outputs [r0, r1) (multiples of 32) for the chunk's rows of the batch,
 * and their blocks of the down matrix's activation: the values and blocks the whole row's
 * pass makes. */
static void swiglu_post(const job *j, const engine_cut *ck) {
    engine *e = j->e;
    int r0 = ck->r0, r1 = ck->r1;
    for (int b = ck->b0; b < ck->b1; b++) {
        size_t row = (size_t)b * e->n_ff;
        swiglu(e, row + r0, row + r1);
        kern_act_prepare(j->next_type, e->g + row + r0,
                         j->next_slot + (size_t)b * e->act_stride + kern_act_size(j->next_type, r0), r1 - r0);
    }
}

/* Chunk c of j: rows [r0, r1) of matrix m (paired: of every matrix) for the batch's rows
 * [b0, b1). */
static engine_cut chunk_at(const engine *e, const job *j, int c) {
    if (j->n_cut)
        return e->cuts[c];
    int k = 0;
    while (!j->paired && c >= j->start[k + 1])
        k++;
    int r0 = (c - (j->paired ? 0 : j->start[k])) * j->rows;
    return (engine_cut){.m = k, .r0 = r0, .r1 = imin(r0 + j->rows, j->m[k]->n_out), .b0 = 0, .b1 = j->nb};
}

static void job_matmul(void *ctx, int ith, int nth) {
    job *j = ctx;
    engine *e = j->e;
    float *scratch = e->scratch + (size_t)ith * e->n_scratch;
    (void)nth;
    for (int c = threadpool_chunk_first(&j->ch, ith); c >= 0; c = threadpool_chunk_next(&j->ch, ith, c)) {
        engine_cut ck = chunk_at(e, j, c);
        int i = ck.m;
        for (int k = j->paired ? 0 : i; k < (j->paired ? j->n_mm : i + 1); k++)
            mat_rows(e, j->m[k], ck.r0, ck.r1, (const unsigned char *)j->a[k] + (size_t)ck.b0 * e->act_stride,
                     ck.b1 - ck.b0, j->out[k] + (size_t)ck.b0 * j->ldo[k], j->ldo[k], scratch);
        if (j->post == POST_SWIGLU)
            swiglu_post(j, &ck);
        if (j->post != POST_QKV)
            continue;
        /* the head's last chunk done (acq_rel: its other chunks' outputs are seen): post it */
        int h = ck.r0 / e->hd, first = i == 0 ? 0 : i == 1 ? e->n_head : e->n_head + e->n_head_kv;
        if (atomic_fetch_sub_explicit(&e->head_left[first + h], 1, memory_order_acq_rel) == 1) {
            qkv_post(e, j->layer, i, h * e->hd, (h + 1) * e->hd, 0, j->nb);
            atomic_store_explicit(&e->head_left[first + h], HEAD_POSTED, memory_order_release);
        }
    }
}

/* A chunk of fewer rows than this (decode, and a few sequences decoding together) streams
 * each matrix's weights from memory once: its jobs are split for that, not for arithmetic. */
static bool streams_weights(int nb) { return nb < 16; }

/* Rows per chunk, a multiple of `align`. Decode's few rows: about 32 chunks a thread, which
 * stream weights from memory: a job's threads finish within about half a chunk's time of
 * each other, idling that long before the next job; packed F16 at least 64 rows (the one-token
 * kernel makes one chain of multiply-adds a 16-row group: at 2 groups a chunk one Zen 5 thread
 * streamed 19 GB/s, at 8 groups 21-23; F16 1B decode at 2 threads 17.4 and 17.6 against 17.9
 * and 18.9 unpacked, at 64 rows 17.0-18.8 against 17.8-18.8). A batch through AMX: about 4 a thread
 * and at least 64 rows (several pairs of row groups a call, so the weights stream and the
 * tile setup amortises; on the 16-core host 16 chunks a thread made q4_0 pp128 about 25 %
 * slower than 4). Any other batch: about 16 a thread, at least 16 rows (their kernels set
 * nothing up per call; at 2 AVX2 threads the time spent waiting at the end of jobs went
 * from 2.9 to 1.4 % of prefill for F16, 4.5 -> 2.4 % for Q4_0, 5.9 -> 2.9 % for Q8_0). */
static int chunk_rows(const engine *e, int rows, int nb, int nth, int align) {
    bool few = streams_weights(nb);
    int per = few ? 32 : e->amx ? 4 : 16, least = few ? (e->group_rows == 16 ? 64 : 0) : e->amx ? 64 : 16;
    int r = nth > 1 ? rows / (nth * per) : rows;
    if (r < least)
        r = least;
    r = (r + align - 1) / align * align;
    return r < align ? align : r;
}

static const void *act_slot(const engine *e, int slot) {
    return (const unsigned char *)e->act + (size_t)slot * e->batch * e->act_stride;
}

/* Sets j up for matrices ms over activation slots from `slot` on (matrices of one
 * activation type share a slot); rj (if not NULL) gets the slots to prepare. */
static void setup_matmuls(engine *e, job *j, int nb, int n_mm, const mat *const *ms, float *const *outs, int slot,
                          row_job *rj) {
    j->e = e;
    j->nb = nb;
    j->n_mm = n_mm;
    if (rj) {
        rj->e = e;
        rj->n_slot = 0;
    }
    for (int i = 0; i < n_mm; i++) {
        const mat *m = ms[i];
        j->m[i] = m;
        j->out[i] = outs[i];
        j->ldo[i] = m->n_out;
        ggml_type at = kern_act_type(m->type);
        int same = -1; /* quantized: one Q8_0 row; else the same type (its rounding) */
        for (int k = 0; k < i; k++)
            if (kern_act_type(ms[k]->type) == at && (at == GGML_TYPE_Q8_0 || ms[k]->type == m->type))
                same = k;
        if (same >= 0) {
            j->a[i] = j->a[same];
            continue;
        }
        j->a[i] = act_slot(e, slot + i);
        if (rj) {
            rj->type[rj->n_slot] = m->type;
            rj->slot[rj->n_slot++] = (unsigned char *)j->a[i];
        }
    }
}

/* Tokens an AMX chunk takes: the whole batch of nb, or where its activations (`per` bytes a
 * token) outgrow ENGINE_CUT_ACT_BYTES the largest half, quarter, ... that fits (a multiple
 * of 16), but not under ENGINE_CUT_MIN_TOKENS: each block of tokens stages the weights
 * again (kern_gemm_amx), a cost measured only with blocks of 64. */
int engine_cut_tokens(size_t per, int nb) {
    int tb = nb;
    while (tb > ENGINE_CUT_MIN_TOKENS && (size_t)tb * per > ENGINE_CUT_ACT_BYTES) {
        tb = (tb / 2 + 15) / 16 * 16;
        tb = tb < ENGINE_CUT_MIN_TOKENS ? ENGINE_CUT_MIN_TOKENS : tb;
    }
    return tb;
}

/* A batch through AMX: chunks that shrink as the job's rows run out, each about the rows
 * left / (2 x threads), from `big` down to 16 (one AMX tile of rows): the last chunks are
 * short, so threads finish close together, while most rows still go in big chunks (small
 * ones read the activations more often). With even chunks of 4 a thread, 16 threads spent
 * 15 % of the matrices' time waiting at the ends of jobs (q4_k pp512, 16-core host); these
 * took q4_k pp512 from 1283-1414 to 1372-1462 tok/s, q4_0 from 1389-1542 to 1516-1557 (3
 * rounds each). The last chunk a thread (once the rows left are at most a chunk a thread)
 * goes in pieces of 16 tokens: at 16 threads a 16-row chunk of the down matrix is an eighth
 * of a thread's share, and threads waited 13 % of the down matrix's time for the last ones
 * (4 % in pieces). 16 threads, medians of 3, whole chunks / pieces: q8_0 pp128 1950 / 2050,
 * pp512 1976 / 2061, q4_0 2030 / 2112 and 2048 / 2146 tok/s; on a slower host of the kind
 * q8_0 1225 / 1330 and 1291 / 1318, q4_0 1157 / 1241 and 1205 / 1335, q4_k 1129 / 1192 and
 * 1184 / 1234.
 * Where chunks would be small (many threads) and the batch's activations outgrow L2 (the
 * down matrix: 256 tokens of 8192 inputs, 2.6 MB), the chunks take tb tokens
 * (engine_cut_tokens), block by block, up to ENGINE_CUT_BLOCK_ROWS rows instead of `big`: a
 * thread's chunks of one block find its activations in L2, and a chunk's pairs of row groups
 * read them once (kern_gemm_amx). 16 threads, Sapphire Rapids, 2 rounds, whole batch /
 * 64-token blocks: q4_k pp512 1171-1189 / 1305-1343 tok/s, pp128 985-1021 / 1125-1208; q4_0
 * pp512 1322-1393 / 1386-1389, pp128 1188-1210 / 1166-1263. On a 16-core Emerald Rapids, 4
 * rounds in alternating order, 16 threads, medians with these blocks and the kernel's slices
 * / with neither: q4_0 pp128 0.98, pp512 1.01; q4_k 1.00, 1.02.
 * Matrix i has n_out[i] rows (n_m of them, one after the other); cuts gets the chunks in the
 * order threads take them. The count, or -1 where there would be more than cap. The results
 * do not depend on the split (kernels.h). */
int engine_plan_cuts(engine_cut *cuts, int cap, const int *n_out, int n_m, int nb, int tb, int nth, int align,
                     int big) {
    int left = 0, n = 0;
    if (tb < nb && big < ENGINE_CUT_BLOCK_ROWS)
        big = ENGINE_CUT_BLOCK_ROWS;
    for (int i = 0; i < n_m; i++)
        left += n_out[i] * ((nb + tb - 1) / tb);
    for (int t0 = 0; t0 < nb; t0 += tb) {
        int t1 = imin(t0 + tb, nb);
        for (int i = 0; i < n_m; i++)
            for (int r = 0; r < n_out[i];) {
                int size = left / (2 * nth);
                size = size > big ? big : size < 16 ? 16 : size;
                size = (size + align - 1) / align * align;
                int r1 = imin(r + size, n_out[i]);
                int pieces = left <= size * nth && t1 - t0 >= 32 ? (t1 - t0) / 16 : 1;
                for (int p = 0; p < pieces; p++, n++) {
                    if (n == cap)
                        return -1;
                    int b1 = p == pieces - 1 ? t1 : t0 + 16 * (p + 1);
                    cuts[n] = (engine_cut){.m = i, .r0 = r, .r1 = r1, .b0 = t0 + 16 * p, .b1 = b1};
                }
                left -= r1 - r;
                r = r1;
            }
    }
    return n;
}

/* j's chunks through engine_plan_cuts; false where the table would overflow. */
static bool set_cuts(engine *e, job *j, int align, int big) {
    int nth = threadpool_size(e->tp), n_m = j->paired ? 1 : j->n_mm, n_out[3];
    size_t per = 0;
    for (int i = 0; i < j->n_mm; i++) {
        size_t b = kern_act_size(j->m[i]->type, j->m[i]->n_in);
        per = b > per ? b : per;
    }
    for (int i = 0; i < n_m; i++)
        n_out[i] = j->m[i]->n_out;
    /* chunks of ENGINE_CUT_BLOCK_ROWS rows or more (few threads) read each slice of the
     * activations once for several pairs of row groups already */
    int tb = big < ENGINE_CUT_BLOCK_ROWS ? engine_cut_tokens(per, j->nb) : j->nb;
    int n = engine_plan_cuts(e->cuts, ENGINE_CUTS, n_out, n_m, j->nb, tb, nth, align, big);
    if (n < 0)
        return false;
    j->n_cut = n;
    threadpool_chunks_init(&j->ch, n, nth);
    return true;
}

/* Splits j's matrices into chunks (multiples of align rows, at most `most`). */
static void set_chunks(engine *e, job *j, int align, int most) {
    int nth = threadpool_size(e->tp), total = 0, n;
    for (int i = 0; i < j->n_mm; i++)
        total += j->m[i]->n_out;
    j->n_cut = 0;
    if (e->amx && j->nb >= 16 && nth > 1 && j->post != POST_QKV && most == 0 &&
        set_cuts(e, j, align, chunk_rows(e, j->paired ? j->m[0]->n_out : total, j->nb, nth, align)))
        return;
    if (j->paired) { /* a chunk's rows of every matrix */
        j->rows = chunk_rows(e, j->m[0]->n_out, j->nb, nth, align);
        n = (j->m[0]->n_out + j->rows - 1) / j->rows;
    } else {
        j->rows = chunk_rows(e, total, j->nb, nth, align);
        if (most > 0 && j->rows > most)
            j->rows = most;
        n = 0;
        for (int i = 0; i < j->n_mm; i++) {
            j->start[i] = n;
            n += (j->m[i]->n_out + j->rows - 1) / j->rows;
        }
        j->start[j->n_mm] = n;
    }
    /* a few rows stream the weights: each thread takes a contiguous run of chunks, so its
     * prefetches run on into its own next chunk (taking chunks in turn, each thread's next
     * one started cold): decode, 1B, 2 threads, Zen 5 EPYC: Q4_0 73.6 -> 85.9 tok/s */
    if (streams_weights(j->nb))
        threadpool_chunks_init_ranges(&j->ch, n, nth);
    else
        threadpool_chunks_init(&j->ch, n, nth);
}

static void run_matmul_job(engine *e, engine_phase ph, job *j, int align, int most) {
    set_chunks(e, j, align, most);
    run_job(e, ph, false, job_matmul, j);
}

/* Q/K/V in chunks that divide the head size (a multiple of the packed groups' rows, g): each
 * head's last chunk to finish post-processes it (qkv_post) on the thread that finished it. */
static void setup_qkv_chunks(engine *e, job *j) {
    int nth = threadpool_size(e->tp), hd = e->hd, total = e->q_dim + 2 * e->kv_dim, g = e->group_rows;
    int r = chunk_rows(e, total, j->nb, nth, streams_weights(j->nb) ? g : 16);
    r = r > hd ? hd : r;
    while (hd % r)
        r -= g;
    for (int k = 0; k < e->n_head + 2 * e->n_head_kv; k++)
        atomic_store_explicit(&e->head_left[k], hd / r, memory_order_relaxed);
    j->post = POST_QKV;
    set_chunks(e, j, r, r);
}

/* rj's row work, then up to three matrices on its prepared rows. */
static void run_matmuls(engine *e, row_job *rj, int n_mm, const mat *const *ms, float *const *outs) {
    job j = {0};
    setup_matmuls(e, &j, rj->nb, n_mm, ms, outs, 0, rj);
    run_rows(e, ENGINE_PHASE_OUTPUT, rj->nb, job_rows, rj);
    run_matmul_job(e, ENGINE_PHASE_OUTPUT, &j, 16, 0);
}

/* ---------------- attention ---------------- */

/* Writes a row's attention output for heads [h0, h0 + nh) (and, with next_slot, their slice
 * of the output matrix's activation). */
static void attend_out(engine *e, const job *j, int b, int h0, int nh, const float *sums) {
    float *att = e->att + (size_t)b * e->q_dim + (size_t)h0 * e->hd;
    if (sums != att)
        memcpy(att, sums, (size_t)nh * e->hd * sizeof(float));
    if (j->next_slot)
        kern_act_prepare(j->next_type, att,
                         j->next_slot + (size_t)b * e->act_stride + kern_act_size(j->next_type, h0 * e->hd), nh * e->hd);
}

/* Attention over the rows' own sequences. A unit of work is `per` heads of those that share
 * a KV head (heads_per_unit), of `span` rows (ATT_SPAN when there are units enough, else
 * one): each run of them at consecutive positions of one sequence reads each key's and each
 * value's F16 numbers once for all its queries, the rows taking the keys up to their own
 * positions. Every head's arithmetic is the same either way (kernels_f16.h), so rows do not
 * depend on the batch or the threads. With next_slot, a unit also prepares its heads' slice
 * of the output matrix's activation. Units go head by head (a head's spans of rows in a
 * row), in one range of them a thread (threadpool_chunks_init_ranges), so that a thread's
 * units read the same keys and values from its own cache: Q4_K pp512 at depth 4096, 2
 * threads, 232-234 -> 236-238 tok/s. sc: m * per * (n + 3 hd + 1) floats of room. */
static void attend_run(engine *e, const job *j, int b, int m, int h0, float *sc) {
    int hd = e->hd, per = j->rows, nh = m * per, n = e->row_pos[b + m - 1] + 1;
    float *qh = sc + (size_t)nh * n, *sums = qh + (size_t)nh * hd, *part = sums + (size_t)nh * hd; /* queries rounded through F16, as ggml does */
    int *keys = (int *)(part + (size_t)nh * hd);
    size_t base = kv_offset(e, e->row_seq[b], j->layer, h0 / (e->n_head / e->n_head_kv), 0);
    for (int r = 0; r < m; r++)
        for (int h = 0; h < per; h++)
            kern_round_f16(e->q + (size_t)(b + r) * e->q_dim + (size_t)(h0 + h) * hd, qh + (size_t)(r * per + h) * hd, hd);
    kern_attn_scores(nh, e->kc + base, qh, hd, hd, n, 1.0f / sqrtf((float)hd), sc, n);
    for (int i = 0; i < nh; i++) {
        keys[i] = e->row_pos[b + i / per] + 1;
        kern_softmax_f16(sc + (size_t)i * n, keys[i]);
    }
    kern_attn_values(nh, sc, n, e->vc + base, hd, hd, keys, sums, hd, part);
    for (int r = 0; r < m; r++)
        attend_out(e, j, b + r, h0, per, sums + (size_t)r * per * hd);
}

/* ---- decode on more threads than units: a KV head's queries and a range of keys a unit ----
 * Each unit (row b, KV head, range r of the row's keys) first takes its range's scores and
 * softmax part (kern_softmax_part: the range's max and sum into e->split_m, e->split_s),
 * then, once every range of the row's KV head has, the factors of all its ranges, its
 * weights and its range's value sums; the unit that finishes a KV head's last range adds the
 * ranges' sums in order. The same arithmetic as one thread's (attend_run), so the bits do
 * not change. A thread keeps its units' weights and sums in its scratch, in slots, and does
 * the second half of the units it took (their weights are in its cache); it stops taking
 * units when its slots are full (layer_attention splits only where the slots of all threads
 * hold every unit). Rows whose keys are one range take the whole of attention at once. */

/* A slot: the unit's index, its weights (a row of KERN_ATT_RANGE per head), value sums and
 * rounded queries, and room for attend_run's one range. */
static size_t split_slot_floats(const engine *e) {
    return ((size_t)(e->n_head / e->n_head_kv) * (KERN_ATT_RANGE + 3 * e->hd + 1) + 16 + 15) & ~(size_t)15;
}

static int split_slots(const engine *e) { return (int)((size_t)e->n_scratch / split_slot_floats(e)); }

/* Unit u's row, KV head and range (e->split_first: each row's first unit). */
static void split_locate(const engine *e, int u, int *b, int *kvh, int *r) {
    int row = 0;
    while (u >= e->split_first[row + 1])
        row++;
    int k = kern_att_ranges(e->row_pos[row] + 1);
    *b = row;
    *kvh = (u - e->split_first[row]) / k;
    *r = (u - e->split_first[row]) % k;
}

static void split_scores(engine *e, const job *j, int b, int kvh, int r, float *w) {
    int hd = e->hd, group = e->n_head / e->n_head_kv, n = e->row_pos[b] + 1, c = kern_att_range_keys(n, r);
    int g = b * e->n_head_kv + kvh, kmax = kern_att_ranges(e->n_ctx);
    float *qh = w + (size_t)group * (KERN_ATT_RANGE + hd);
    size_t at = kv_offset(e, e->row_seq[b], j->layer, kvh, r * KERN_ATT_RANGE);
    for (int h = 0; h < group; h++)
        kern_round_f16(e->q + (size_t)b * e->q_dim + (size_t)(kvh * group + h) * hd, qh + (size_t)h * hd, hd);
    kern_attn_scores(group, e->kc + at, qh, hd, hd, c, 1.0f / sqrtf((float)hd), w, KERN_ATT_RANGE);
    for (int h = 0; h < group; h++) {
        size_t i = ((size_t)g * group + h) * kmax + r;
        e->split_m[i] = kern_softmax_part(w + (size_t)h * KERN_ATT_RANGE, c, &e->split_s[i]);
    }
    atomic_fetch_add_explicit(&e->split_cnt[2 * g], 1, memory_order_release);
}

static void split_values(engine *e, const job *j, int b, int kvh, int r, float *w) {
    int hd = e->hd, group = e->n_head / e->n_head_kv, n = e->row_pos[b] + 1, c = kern_att_range_keys(n, r);
    int g = b * e->n_head_kv + kvh, k = kern_att_ranges(n), kmax = kern_att_ranges(e->n_ctx);
    float *sums = w + (size_t)group * KERN_ATT_RANGE, f[KERN_ATT_RANGES_MAX];
    int *cnt = (int *)(sums + (size_t)group * hd);
    threadpool_wait_until(&e->split_cnt[2 * g], k);
    for (int h = 0; h < group; h++) {
        size_t i = ((size_t)g * group + h) * kmax;
        kern_softmax_factors(k, e->split_m + i, e->split_s + i, f);
        kern_softmax_scale(w + (size_t)h * KERN_ATT_RANGE, c, f[r]);
        cnt[h] = c;
    }
    kern_attn_values(group, w, KERN_ATT_RANGE, e->vc + kv_offset(e, e->row_seq[b], j->layer, kvh, r * KERN_ATT_RANGE),
                     hd, hd, cnt, sums, hd, NULL);
    e->split_p[(size_t)g * kmax + r] = sums;
    if (atomic_fetch_add_explicit(&e->split_cnt[2 * g + 1], 1, memory_order_acq_rel) != k - 1)
        return;
    float *att = e->att + (size_t)b * e->q_dim + (size_t)kvh * group * hd;
    memcpy(att, e->split_p[(size_t)g * kmax], (size_t)group * hd * sizeof(float));
    for (int q = 1; q < k; q++) {
        const float *p = e->split_p[(size_t)g * kmax + q];
        for (int i = 0; i < group * hd; i++)
            att[i] += p[i];
    }
    attend_out(e, j, b, kvh * group, group, att);
}

/* Waits for unit's Q/K/V heads where the job runs with Q/K/V (wait_heads). */
static void wait_unit_heads(engine *e, const job *j, int h0, int kvh) {
    if (!j->wait_heads)
        return;
    for (int h = 0; h < j->rows; h++)
        threadpool_wait_until(&e->head_left[h0 + h], HEAD_POSTED);
    threadpool_wait_until(&e->head_left[e->n_head + kvh], HEAD_POSTED);
    threadpool_wait_until(&e->head_left[e->n_head + e->n_head_kv + kvh], HEAD_POSTED);
}

static void job_attention_split(job *j, int ith) {
    engine *e = j->e;
    int group = e->n_head / e->n_head_kv, count = 0, cap = split_slots(e), b, kvh, r;
    size_t slot = split_slot_floats(e);
    float *sc = e->scratch + (size_t)ith * e->n_scratch;
    for (int u = threadpool_chunk_first(&j->ch, ith); u >= 0 && count < cap;) {
        float *s = sc + (size_t)count * slot;
        split_locate(e, u, &b, &kvh, &r);
        wait_unit_heads(e, j, kvh * group, kvh);
        if (kern_att_ranges(e->row_pos[b] + 1) == 1) {
            attend_run(e, j, b, 1, kvh * group, s);
        } else {
            memcpy(s, &u, sizeof u);
            split_scores(e, j, b, kvh, r, s + 16);
            count++;
        }
        if (count < cap)
            u = threadpool_chunk_next(&j->ch, ith, u);
    }
    for (int i = 0; i < count; i++) {
        int u;
        memcpy(&u, sc + (size_t)i * slot, sizeof u);
        split_locate(e, u, &b, &kvh, &r);
        split_values(e, j, b, kvh, r, sc + (size_t)i * slot + 16);
    }
}

static void job_attention(void *ctx, int ith, int nth) {
    job *j = ctx;
    engine *e = j->e;
    int group = e->n_head / e->n_head_kv, per = j->rows, across = e->n_head / per;
    int spans = (j->nb + j->span - 1) / j->span, units = spans * across;
    float *sc = e->scratch + (size_t)ith * e->n_scratch; /* per query a row of weights */
    (void)nth;
    if (j->split) {
        job_attention_split(j, ith);
        return;
    }
    for (int u = threadpool_chunk_first(&j->ch, ith); u >= 0 && u < units; u = threadpool_chunk_next(&j->ch, ith, u)) {
        int h0 = u / spans * per, b = u % spans * j->span, end = imin(b + j->span, j->nb);
        wait_unit_heads(e, j, h0, h0 / group);
        while (b < end) {
            int m = 1;
            while (b + m < end && e->row_seq[b + m] == e->row_seq[b] && e->row_pos[b + m] == e->row_pos[b + m - 1] + 1)
                m++;
            attend_run(e, j, b, m, h0, sc);
            b += m;
        }
    }
}

/* ---------------- a chunk of rows ---------------- */

/* Q/K/V, then attention in one job: a thread that finds no Q/K/V chunk left takes attention
 * units, each waiting until its heads are post-processed (by threads that are running Q/K/V
 * chunks, which wait on nothing: no deadlock). One barrier less a layer, and the Q/K/V
 * job's last chunks overlap the first attention units. */
static void job_qkv_attention(void *ctx, int ith, int nth) {
    job **jobs = ctx;
    job_matmul(jobs[0], ith, nth);
    job_attention(jobs[1], ith, nth);
}

/* The `keep` rows whose logits are wanted, rows idx[0] < idx[1] < ... of the chunk, moved to
 * rows 0..keep-1 (their residual, and the output matrix's input: prepared activations or
 * attention output), so that the last layer's output matrix and feed-forward run for them
 * alone. Row idx[j] >= j, and later rows come from further on, so moving in order is safe. */
static void keep_rows(engine *e, const int *idx, int keep, unsigned char *wo_act) {
    for (int j = 0; j < keep; j++) {
        size_t r = (size_t)idx[j];
        if (r == (size_t)j)
            continue;
        memcpy(e->x + (size_t)j * e->n_embd, e->x + r * e->n_embd, (size_t)e->n_embd * sizeof(float));
        if (wo_act)
            memcpy(wo_act + (size_t)j * e->act_stride, wo_act + r * e->act_stride, e->act_stride);
        else
            memcpy(e->att + (size_t)j * e->q_dim, e->att + r * e->q_dim, (size_t)e->q_dim * sizeof(float));
    }
}

/* Query heads per attention unit for nb rows at nth threads: the most (a divisor of the
 * group, the heads that share a KV head) that still give units to at least half the
 * threads. A tile of more queries converts each key block once for all of them, and the
 * keys and values are read once: in cache (4096 keys, head size 64, one thread, AVX-512)
 * the scores of 4 queries take 1.2 times as long as those of one, of 8 1.8 times. So four
 * heads a unit are worth leaving half the threads without one at decode; with fewer KV heads
 * (two for 16 threads), one head a unit. 16 threads, 8 KV heads of 4, tg32 at depth 4096,
 * one head a unit / four: Q4_K 132-142 / 137-153 tok/s, F16 50-55 / 58-60. */
static int heads_per_unit(const engine *e, int nb, int nth) {
    int group = e->n_head / e->n_head_kv;
    for (int per = group; per > 1; per--)
        if (group % per == 0 && 2L * nb * (e->n_head / per) >= nth)
            return per;
    return 1;
}

/* Whether a chunk's attention splits the rows' keys into ranges (job_attention_split): where
 * its rows' KV heads are fewer than the threads and some row has more than one range of
 * keys. Then the units (e->split_first set, its counters cleared); else 0. A 1B shape with
 * one KV head (32 query heads, Q8_0), decode at depth 4096, 2 threads, alternating rounds
 * against one thread taking all of a token's attention: 2-core Zen 4, tg32 19.5-25.7 ->
 * 26.2-27.6 tok/s; 2-core Emerald Rapids, tg64 30.5-30.6 -> 31.5-31.7. The 1B shape (8 KV
 * heads) at 16 threads, 16-core Emerald Rapids, Q4_K tg32: at depth 4096 117, 125, 130 ->
 * 142, 151, 156; at depth 1024 180, 177 -> 204, 191. */
static int attention_split(engine *e, int nb, int nth) {
    if (nb * e->n_head_kv >= nth)
        return 0;
    int total = 0, most = 0;
    for (int b = 0; b < nb; b++) {
        int k = kern_att_ranges(e->row_pos[b] + 1);
        e->split_first[b] = total;
        total += e->n_head_kv * k;
        most = k > most ? k : most;
    }
    e->split_first[nb] = total;
    if (most == 1 || (long)total > (long)nth * split_slots(e))
        return 0;
    for (int i = 0; i < 2 * nb * e->n_head_kv; i++)
        atomic_store_explicit(&e->split_cnt[i], 0, memory_order_relaxed);
    return total;
}

/* The attention half of layer l: Q/K/V (post-processing fused where chunks can end on head
 * boundaries, and then one job with attention), attention, the output matrix into e->xn for
 * the `keep` rows that go on: all (idx NULL), rows idx[0..keep) moved to the front, or none
 * (only the K/V cache was wanted). */
static void layer_attention(engine *e, const int32_t *tokens, int nb, int l, const int *idx, int keep) {
    const layer *L = &e->layers[l];
    int nth = threadpool_size(e->tp);
    row_job pre = {.nb = nb, .tokens = l == 0 ? tokens : NULL, .resid = l > 0, .norm = L->attn_norm, .n_in = e->n_embd};
    const mat *qkv[3] = {&L->wq, &L->wk, &L->wv};
    float *qkv_out[3] = {e->q, e->k, e->v};
    job j = {.layer = l};
    setup_matmuls(e, &j, nb, 3, qkv, qkv_out, 0, &pre);
    run_rows(e, ENGINE_PHASE_ROWS, nb, job_rows, &pre);

    /* wo's activation goes to a slot the Q/K/V matrices do not read (they use at most two) */
    int slot = 0;
    while (j.a[0] == act_slot(e, slot) || j.a[1] == act_slot(e, slot) || j.a[2] == act_slot(e, slot))
        slot++;
    const mat *wo[1] = {&L->wo};
    float *wo_out[1] = {e->xn};
    job aj = {.layer = l};
    setup_matmuls(e, &aj, nb, 1, wo, wo_out, slot, NULL);
    bool ao_fused = e->hd % 32 == 0; /* a unit's slice is whole activation blocks */
    aj.next_type = L->wo.type;
    aj.next_slot = ao_fused ? (unsigned char *)aj.a[0] : NULL;
    int split_units = attention_split(e, nb, nth);
    if (split_units > 0) {
        aj.split = true;
        aj.rows = e->n_head / e->n_head_kv;
        aj.span = 1;
        threadpool_chunks_init_ranges(&aj.ch, split_units, nth);
    } else {
        aj.rows = heads_per_unit(e, nb, nth);
        aj.span = aj.rows == e->n_head / e->n_head_kv && nb / ATT_SPAN * e->n_head_kv >= 2 * nth ? ATT_SPAN : 1;
        threadpool_chunks_init_ranges(&aj.ch, (nb + aj.span - 1) / aj.span * (e->n_head / aj.rows), nth);
    }
    if (e->hd % e->group_rows == 0) {
        setup_qkv_chunks(e, &j);
        aj.wait_heads = true;
        job *both[2] = {&j, &aj};
        run_job(e, ENGINE_PHASE_QKV_ATTENTION, false, job_qkv_attention, both);
    } else {
        run_matmul_job(e, ENGINE_PHASE_QKV_ATTENTION, &j, 16, 0);
        run_rows(e, ENGINE_PHASE_QKV_ATTENTION, nb, job_qkv_rows, &j);
        run_job(e, ENGINE_PHASE_QKV_ATTENTION, false, job_attention, &aj);
    }
    if (keep == 0)
        return;
    if (idx) {
        keep_rows(e, idx, keep, ao_fused ? (unsigned char *)aj.a[0] : NULL);
        aj.nb = keep;
    }
    if (!ao_fused) {
        row_job ao = {.e = e, .nb = keep, .in = e->att, .n_in = e->q_dim, .n_slot = 1};
        ao.type[0] = L->wo.type;
        ao.slot[0] = (unsigned char *)aj.a[0];
        run_rows(e, ENGINE_PHASE_ROWS, nb, job_rows, &ao);
    }
    run_matmul_job(e, ENGINE_PHASE_ATTENTION_OUT, &aj, 16, 0);
}

/* The feed-forward half of layer l: residual and norm, gate and up with SwiGLU fused into
 * their chunks (when n_ff is whole blocks), down into e->xn. */
static void layer_ffn(engine *e, int nb, int l) {
    const layer *L = &e->layers[l];
    row_job fn = {.nb = nb, .resid = true, .norm = L->ffn_norm, .n_in = e->n_embd};
    const mat *gu[2] = {&L->gate, &L->up};
    float *gu_out[2] = {e->g, e->u};
    job j = {0};
    setup_matmuls(e, &j, nb, 2, gu, gu_out, 0, &fn);
    run_rows(e, ENGINE_PHASE_ROWS, nb, job_rows, &fn);
    unsigned char *down_act = (unsigned char *)act_slot(e, SLOT_DOWN);
    bool fused = e->n_ff % 32 == 0;
    j.paired = true;
    j.post = fused ? POST_SWIGLU : POST_NONE;
    j.next_type = L->down.type;
    j.next_slot = down_act;
    run_matmul_job(e, ENGINE_PHASE_GATE_UP, &j, 32, 0);
    if (!fused) {
        row_job sw = {.e = e, .nb = nb, .swiglu = true, .in = e->g, .n_in = e->n_ff, .n_slot = 1};
        sw.type[0] = L->down.type;
        sw.slot[0] = down_act;
        run_rows(e, ENGINE_PHASE_ROWS, nb, job_rows, &sw);
    }
    const mat *dn[1] = {&L->down};
    float *dn_out[1] = {e->xn};
    job dj = {0};
    setup_matmuls(e, &dj, nb, 1, dn, dn_out, 0, NULL);
    dj.a[0] = down_act;
    run_matmul_job(e, ENGINE_PHASE_DOWN, &dj, 16, 0);
}

/* One chunk of at most e->batch rows: token b at e->row_pos[b] of sequence e->row_seq[b]
 * (a sequence's rows in a chunk are consecutive positions). Each row is computed exactly as
 * it would be alone: the kernels do not depend on the batch (kernels.h), and the per-row
 * steps run on all threads, a row on one thread, in the serial order. `logits` gets a row
 * for each of the `keep` rows wanted: every row (idx NULL, keep == nb) or rows idx[0..keep)
 * in increasing order; keep 0: only the K/V cache. */
static void forward_pass(engine *e, const int32_t *tokens, int nb, float *logits, const int *idx, int keep) {
    /* the last layer's output matrix and feed-forward only for the rows whose logits are
     * wanted (its K/V cache comes from its Q/K/V, which every row computes) */
    if (!logits)
        keep = 0;
    if (keep == nb)
        idx = NULL;
    for (int l = 0; l < e->n_layer; l++) {
        bool last = l == e->n_layer - 1;
        layer_attention(e, tokens, nb, l, last ? idx : NULL, last ? keep : nb);
        if (!last || keep > 0)
            layer_ffn(e, last ? keep : nb, l);
    }
    if (keep == 0)
        return;
    row_job out = {.nb = keep, .resid = true, .norm = e->out_norm, .n_in = e->n_embd};
    const mat *om[1] = {&e->output};
    float *oo[1] = {logits};
    run_matmuls(e, &out, 1, om, oo);
}

/* forward_pass, counted in the profile while it is on. */
static void forward_chunk(engine *e, const int32_t *tokens, int nb, float *logits, const int *idx, int keep) {
    engine_prof *pr = profiling(e);
    double t0 = pr ? clock_now_s() : 0;
    forward_pass(e, tokens, nb, logits, idx, keep);
    if (pr) {
        pr->p.chunks++;
        pr->p.wall_s += clock_now_s() - t0;
    }
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
        int last_row = nb - 1;
        forward_chunk(e, tokens + i, nb, lg, all_logits ? NULL : &last_row, all_logits ? nb : 1);
        e->n_past[seq] = pos + i + nb;
    }
    return PACER_OK;
}

pacer_err engine_eval(engine *e, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    return engine_eval_seq(e, 0, tokens, n, pos, logits, all_logits);
}

pacer_err engine_eval_rows(engine *e, const int32_t *tokens, const int *seq, const int *pos, int n, const bool *want,
                           float *logits) {
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
    size_t out = 0; /* logits rows written */
    for (int i = 0; i < n; i += e->batch) {
        int nb = n - i < e->batch ? n - i : e->batch, keep = 0;
        for (int b = 0; b < nb; b++) {
            e->row_seq[b] = seq[i + b];
            e->row_pos[b] = pos[i + b];
            if (!want || want[i + b])
                e->row_keep[keep++] = b;
        }
        forward_chunk(e, tokens + i, nb, logits ? logits + out * e->n_vocab : NULL, e->row_keep, keep);
        out += (size_t)keep;
        for (int b = 0; b < nb; b++) /* what followed a row is dropped, as engine_eval does */
            e->n_past[seq[i + b]] = pos[i + b] + 1;
    }
    return PACER_OK;
}
