/* test_kernels.c - every SIMD dot product against the scalar path and against a
 * dequantize-then-multiply reference, and the thread pool's parallel loop. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/ggml_type.h"
#include "engine/kernels.h"
#include "engine/kernels_f16.h"
#include "engine/quantize.h"
#include "engine/sampler.h"
#include "engine/threadpool.h"

#define N 512

static void fill(float *x, int n, unsigned seed) {
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = ((float)((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f);
    }
}

/* Rows of type t, K-quants through the reference K-quant quantizers. */
static void quantize_any(ggml_type t, const float *x, void *y, int n) {
    if (t == GGML_TYPE_Q4_K)
        quantize_q4_K_row(x, y, n);
    else if (t == GGML_TYPE_Q6_K)
        quantize_q6_K_row(x, y, n);
    else
        cr_assert(ggml_quantize_row(t, x, y, n), "quantize %s", ggml_type_name(t));
}

/* reference: dequantized weights times dequantized prepared activations, in double */
static double ref_dot(ggml_type t, const void *w, const void *a, int n) {
    float wf[N], af[N];
    cr_assert(ggml_dequantize_row(t, w, wf, n));
    kern_act_dequantize(t, a, af, n);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)wf[i] * af[i];
    return s;
}

static void check_type(ggml_type t) {
    float w[N], x[N], scratch[N];
    fill(w, N, 7 + t);
    fill(x, N, 99 + t);
    static unsigned char wq[N * 4], aq[N * 4];
    quantize_any(t, w, wq, N);
    kern_level best = kern_detect();
    for (int l = KERN_SCALAR; l <= (int)best; l++) {
        if (!kern_level_supported((kern_level)l))
            continue;
        kern_set_level((kern_level)l);
        kern_act_prepare(t, x, aq, N); /* the level's form (F16 weights: F16 or F32) */
        double ref = ref_dot(t, wq, aq, N);
        float got = kern_dot(t, wq, aq, N, scratch);
        cr_assert(fabs(got - ref) <= 1e-4 * (1 + fabs(ref)), "%s at %s: %g vs %g", ggml_type_name(t),
                  kern_level_name((kern_level)l), got, ref);
    }
    kern_set_level(best);
}

Test(kernels, f32) { check_type(GGML_TYPE_F32); }
Test(kernels, f16) { check_type(GGML_TYPE_F16); }
Test(kernels, bf16) { check_type(GGML_TYPE_BF16); }
Test(kernels, q8_0) { check_type(GGML_TYPE_Q8_0); }
Test(kernels, q4_0) { check_type(GGML_TYPE_Q4_0); }
Test(kernels, q4_k_q8_activations) { check_type(GGML_TYPE_Q4_K); }
Test(kernels, q6_k_q8_activations) { check_type(GGML_TYPE_Q6_K); }

/* matmul over nb activations equals the one-row dots bit for bit, batched or not: a
 * drafted round verifies in a batch what serial decoding computes one row at a time, and
 * greedy output must not depend on which. */
static void check_matmul(ggml_type t, int nb) {
    enum { ROWS = 9, NB = 7 }; /* groups of four rows or activations, and remainders */
    float w[ROWS * N], x[NB * N], out[NB * ROWS], scratch[N];
    fill(w, ROWS * N, 3);
    fill(x, NB * N, 5);
    uint64_t rb = 0;
    cr_assert(ggml_type_row_size(t, N, &rb));
    static unsigned char wq[ROWS * N * 4], aq[NB * N * 4]; /* F32 activations: 4 bytes an element */
    for (int r = 0; r < ROWS; r++)
        quantize_any(t, w + r * N, wq + r * rb, N);
    size_t as = kern_act_size(t, N);
    for (int b = 0; b < nb; b++)
        kern_act_prepare(t, x + b * N, aq + b * as, N);
    kern_matmul(t, wq, rb, N, 0, ROWS, aq, as, nb, out, ROWS, scratch);
    for (int b = 0; b < nb; b++)
        for (int r = 0; r < ROWS; r++) {
            float one = kern_dot(t, wq + r * rb, aq + b * as, N, scratch);
            cr_assert(out[b * ROWS + r] == one, "%s (%s) row %d act %d: %.9g vs one-row %.9g", ggml_type_name(t),
                      kern_level_name(kern_get_level()), r, b, out[b * ROWS + r], one);
        }
}

Test(kernels, matmul_batch_equals_dots) {
    static const ggml_type types[] = {GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_F32};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        check_matmul(types[i], 7);
        check_matmul(types[i], 1);
    }
}

/* F16 packed rows' order (kernels_f16.h): one fused multiply-add per element, in order. */
static float f16_chain(const ggml_half *w, const float *x, int n) {
    float s = 0;
    for (int k = 0; k < n; k++)
        s = fmaf(ggml_fp16_to_fp32(w[k]), x[k], s);
    return s;
}

/* Packed matrices: at every level, for every batch size and every split of the groups,
 * each output equals the scalar one-row dot bit for bit (F16: f16_chain); rows past n_out
 * are not written. extreme: the integer sums at their bounds, every activation +1 or -1
 * (quants of 127 and -127, token by token in turn) and Q6_K's every third block all quants
 * 63, so that its 16-bit partial sums (AVX2) reach their largest. */
static void check_packed_x(ggml_type t, int rows, int n, bool extreme) {
    enum { NB = 64 }; /* AMX takes tiles of 16 tokens: full tiles and remainders */
    static const int q_nbs[] = {1, 4, 7, 16, 19, 32, 37, 64, 0};
    static const int f16_nbs[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 19, 37, 0}; /* each tile size */
    const int *nbs = t == GGML_TYPE_F16 ? f16_nbs : q_nbs;
    float *w = malloc(sizeof(float) * (size_t)rows * n), *x = malloc(sizeof(float) * NB * (size_t)n);
    fill(w, rows * n, 17 + (unsigned)rows);
    fill(x, NB * n, 23);
    for (int i = 0; extreme && i < NB * n; i++)
        x[i] = i / n % 2 ? -1.0f : 1.0f;
    /* a few large values, so blocks with extreme quants and mixed scales occur */
    for (int i = 0; i < rows * n; i += 97)
        w[i] *= 40;
    uint64_t rb = 0;
    cr_assert(ggml_type_row_size(t, n, &rb));
    unsigned char *wq = malloc((size_t)rows * rb), *pk = malloc(kern_pack_size(t, n, rows));
    for (int r = 0; r < rows; r++)
        quantize_any(t, w + (size_t)r * n, wq + (size_t)r * rb, n);
    unsigned seed = 5;
    for (size_t b = 0; t == GGML_TYPE_Q4_K && b < (size_t)rows * rb / sizeof(block_q4_K); b += 3) {
        block_q4_K *k = (block_q4_K *)wq + b; /* every 6-bit scale and min value occurs */
        for (int i = 0; i < K_SCALE_SIZE; i++) {
            seed = seed * 1103515245u + 12345u;
            k->scales[i] = (uint8_t)(seed >> 16);
        }
    }
    for (size_t b = 0; t == GGML_TYPE_Q6_K && b < (size_t)rows * rb / sizeof(block_q6_K); b += 3) {
        block_q6_K *k = (block_q6_K *)wq + b; /* any int8 scale, -128 and 127 included */
        for (int i = 0; i < QK_K / 16; i++) {
            seed = seed * 1103515245u + 12345u;
            k->scales[i] = (int8_t)(i == 0 ? -128 : i == 1 ? 127 : (int)(seed >> 16));
        }
        for (int i = 0; i < QK_K / 4; i += 5)
            k->qh[i] = 0xFF; /* quants of 63 and so values 31; 0 gives -32 */
        if (extreme) {
            memset(k->ql, 0xFF, sizeof k->ql);
            memset(k->qh, 0xFF, sizeof k->qh);
        }
    }
    int groups = kern_pack_groups(t, rows);
    kern_pack(t, wq, rb, n, rows, 0, groups / 2, pk); /* in two parts, as threads do */
    kern_pack(t, wq, rb, n, rows, groups / 2, groups, pk);
    size_t as = kern_act_size(t, n);
    unsigned char *aq = malloc(NB * as);
    for (int b = 0; b < NB; b++)
        kern_act_prepare(t, x + (size_t)b * n, aq + b * as, n);
    int ldo = rows + 5;
    float *out = malloc(sizeof(float) * NB * (size_t)ldo);
    kern_level best = kern_detect();
    kern_prefetch pf0 = kern_get_prefetch();
    for (int l = KERN_SCALAR; l <= (int)best; l++) {
        if (!kern_level_supported((kern_level)l))
            continue;
        kern_set_level((kern_level)l);
        for (int c = 0; nbs[c / 2]; c++) { /* each nb, prefetching to L1 and to L2 */
            int nb = nbs[c / 2];
            kern_set_prefetch(c % 2 ? KERN_PF_L2 : KERN_PF_L1);
            for (int i = 0; i < NB * ldo; i++)
                out[i] = -12345.0f;
            kern_gemm_packed(t, pk, n, rows, 0, 1, aq, as, nb, out, ldo);
            kern_gemm_packed(t, pk, n, rows, 1, groups, aq, as, nb, out, ldo);
            for (int b = 0; b < nb; b++) {
                for (int r = 0; r < rows; r++) {
                    const void *row = wq + (size_t)r * rb, *a = aq + b * as;
                    float one = t == GGML_TYPE_F16 ? f16_chain(row, a, n) : kern_dot(t, row, a, n, NULL);
                    cr_assert(out[b * ldo + r] == one, "%s packed (%s, prefetch L%d, nb %d) row %d act %d: %.9g vs %.9g",
                              ggml_type_name(t), kern_level_name((kern_level)l), c % 2 + 1, nb, r, b, out[b * ldo + r],
                              one);
                }
                for (int r = rows; r < ldo; r++)
                    cr_assert(out[b * ldo + r] == -12345.0f, "padding row %d written", r);
            }
        }
    }
    kern_set_level(best);
    kern_set_prefetch(pf0);
    free(w);
    free(x);
    free(wq);
    free(pk);
    free(aq);
    free(out);
}

static void check_packed(ggml_type t, int rows, int n) { check_packed_x(t, rows, n, false); }

Test(kernels, packed_equals_dots) {
    check_packed(GGML_TYPE_Q4_0, 8, 64);
    check_packed(GGML_TYPE_Q4_0, 27, 256);
    check_packed(GGML_TYPE_Q4_0, 75, 256); /* decode's passes of 4 groups, and what is left */
    check_packed(GGML_TYPE_Q8_0, 8, 64);
    check_packed(GGML_TYPE_Q8_0, 43, 160);
    check_packed(GGML_TYPE_Q4_K, 8, 256);
    check_packed(GGML_TYPE_Q4_K, 35, 768); /* an odd group count: VNNI's pairs and a single */
    check_packed(GGML_TYPE_Q4_K, 17, 512);
    check_packed(GGML_TYPE_Q6_K, 8, 256);
    check_packed(GGML_TYPE_Q6_K, 35, 768);
    check_packed(GGML_TYPE_Q6_K, 17, 512);
    check_packed_x(GGML_TYPE_Q6_K, 35, 768, true);
    check_packed_x(GGML_TYPE_Q4_0, 27, 256, true);
    check_packed_x(GGML_TYPE_Q8_0, 43, 160, true);
    check_packed(GGML_TYPE_F16, 16, 40);
    check_packed(GGML_TYPE_F16, 29, 67); /* a group of 13 rows; elements not a multiple of 8 */
    check_packed(GGML_TYPE_F16, 150, 67); /* decode's passes of 8 and 4 groups, and what is left */
    /* more blocks than AMX stages at once (64), a last pair of 11 rows: sums carried over */
    check_packed(GGML_TYPE_Q4_0, 35, 2144);
    check_packed(GGML_TYPE_Q8_0, 35, 2144);
    check_packed(GGML_TYPE_Q4_K, 35, 2304);
    check_packed(GGML_TYPE_Q6_K, 35, 2304);
    /* decode's passes of four groups (AVX2): groups 1..9 of 77 rows are two passes and one
     * group left; groups 1..8 of 69 rows end in a partial group inside the second pass */
    static const ggml_type pass_types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};
    for (int i = 0; i < 4; i++) {
        int n = pass_types[i] == GGML_TYPE_Q4_0 || pass_types[i] == GGML_TYPE_Q8_0 ? 256 : 512;
        check_packed(pass_types[i], 77, n);
        check_packed(pass_types[i], 69, n);
    }
    /* AMX, where 64 tokens' activations outgrow AMX_ACT_BYTES: pairs 4 and 2 at a time, the
     * last of 5 rows */
    for (int i = 0; i < 4; i++)
        check_packed(pass_types[i], 101, 8192);
}

/* Levels: the best is supported and none above it; kern_set_level gives the level asked for
 * where the CPU has it, else the best it has below (a CPU with AVX-512 may lack AVX-VNNI);
 * every level has a name, and the name gives the level back. */
Test(kernels, levels_supported_and_set) {
    kern_level best = kern_detect();
    cr_assert(kern_level_supported(KERN_SCALAR) && kern_level_supported(best));
    for (int l = 0; l < KERN_LEVELS; l++) {
        cr_assert(strcmp(kern_level_name((kern_level)l), "?") != 0, "level %d has no name", l);
        cr_assert(kern_level_by_name(kern_level_name((kern_level)l)) == l, "%s", kern_level_name((kern_level)l));
        if (l > (int)best)
            cr_assert(!kern_level_supported((kern_level)l), "%s above the best, %s", kern_level_name((kern_level)l),
                      kern_level_name(best));
        kern_set_level((kern_level)l);
        kern_level got = kern_get_level();
        cr_assert(kern_level_supported(got) && (int)got <= l, "asked %s, got %s", kern_level_name((kern_level)l),
                  kern_level_name(got));
        if (kern_level_supported((kern_level)l))
            cr_assert(got == (kern_level)l, "asked %s, got %s", kern_level_name((kern_level)l), kern_level_name(got));
        for (int k = got + 1; k < l; k++)
            cr_assert(!kern_level_supported((kern_level)k), "asked %s, got %s, but %s is supported",
                      kern_level_name((kern_level)l), kern_level_name(got), kern_level_name((kern_level)k));
    }
    cr_assert(strcmp(kern_level_name((kern_level)KERN_LEVELS), "?") == 0);
    cr_assert(kern_level_by_name("avx1024") == -1 && kern_level_by_name("") == -1);
    kern_set_level(best);
}

/* The activation quantizer gives the same bytes at every level, ties included. */
Test(kernels, act_prepare_same_at_every_level) {
    enum { M = 256 };
    float x[M];
    fill(x, M, 77);
    for (int i = 0; i < 32; i++) /* a block with scale 1 whose values are exact halves: ties */
        x[i] = i == 0 ? 127.0f : (float)(i - 16) + 0.5f;
    unsigned char ref[M * 2], got[M * 2];
    kern_level best = kern_detect();
    kern_set_level(KERN_SCALAR);
    kern_act_prepare(GGML_TYPE_Q8_0, x, ref, M);
    for (int l = KERN_AVX2; l <= (int)best; l++) {
        if (!kern_level_supported((kern_level)l))
            continue;
        kern_set_level((kern_level)l);
        memset(got, 0, sizeof got);
        kern_act_prepare(GGML_TYPE_Q8_0, x, got, M);
        cr_assert(memcmp(ref, got, kern_act_size(GGML_TYPE_Q8_0, M)) == 0, "quantized activations differ at %s",
                  kern_level_name((kern_level)l));
    }
    kern_set_level(best);
}

/* kern_f32_to_f16 gives ggml_fp32_to_fp16's bits at every level: ties to even (normal and
 * subnormal results), the overflow edge, infinities, signed zero, NaN, tails. */
Test(kernels, f32_to_f16_same_at_every_level) {
    enum { M = 203 };
    float x[M];
    fill(x, M, 31);
    const float edge[] = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, INFINITY, -INFINITY,
                          1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 5.960464477539063e-08f, 2.9802322387695312e-08f,
                          8.940696716308594e-08f, 6.103515625e-05f, 6.0975551605224609e-05f, 1e-10f, -3e-6f};
    int ne = (int)(sizeof edge / sizeof edge[0]);
    for (int i = 0; i < ne; i++)
        x[i] = edge[i];
    for (int i = ne; i < M; i++)
        x[i] *= i % 3 == 0 ? 70000.0f : i % 3 == 1 ? 1e-5f : 1.0f;
    x[100] = NAN; /* a run with a NaN */
    ggml_half ref[M], got[M];
    for (int i = 0; i < M; i++)
        ref[i] = ggml_fp32_to_fp16(x[i]);
    kern_level best = kern_detect();
    for (int l = KERN_SCALAR; l <= (int)best; l++) {
        if (!kern_level_supported((kern_level)l))
            continue;
        kern_set_level((kern_level)l);
        memset(got, 0, sizeof got);
        kern_f32_to_f16(x, got, M);
        for (int i = 0; i < M; i++)
            cr_assert_eq(got[i], ref[i], "%s: element %d (%.9g): 0x%04x vs 0x%04x", kern_level_name((kern_level)l), i,
                         x[i], got[i], ref[i]);
        /* queries and F16 weights' activations: the same rounding, widened back (NaN stays
         * NaN) */
        float q[M];
        kern_round_f16(x, q, M);
        for (int i = 0; i < M; i++) {
            float want = ggml_fp16_to_fp32(ref[i]);
            cr_assert(isnan(want) ? isnan(q[i]) : memcmp(&q[i], &want, sizeof want) == 0,
                      "%s: F16-rounded query %d (%.9g): %.9g vs %.9g", kern_level_name((kern_level)l), i, x[i], q[i], want);
        }
        float act[M];
        kern_act_prepare(GGML_TYPE_F16, x, act, M);
        cr_assert(kern_act_type(GGML_TYPE_F16) == GGML_TYPE_F32 && kern_act_size(GGML_TYPE_F16, M) == sizeof act);
        cr_assert(memcmp(act, q, sizeof q) == 0, "%s: F16 activations differ", kern_level_name((kern_level)l));
    }
    kern_set_level(best);
}

static atomic_int g_hits[1000];

static void mark(void *ctx, int ith, int nth) {
    int lo, hi;
    threadpool_split(*(int *)ctx, ith, nth, &lo, &hi);
    for (int i = lo; i < hi; i++)
        atomic_fetch_add(&g_hits[i], 1);
}

Test(threadpool, every_item_once) {
    threadpool *tp = threadpool_create(3);
    cr_assert(tp);
    int n = 1000;
    for (int round = 0; round < 50; round++)
        threadpool_run(tp, mark, &n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(atomic_load(&g_hits[i]), 50);
    threadpool_destroy(tp);
}

typedef struct chunk_ctx {
    threadpool_chunks ch;
    atomic_int by[4];
    int first[4]; /* each thread's first chunk */
    bool late;    /* ranges: thread 3 starts late, so its range is taken by the others */
    int n;        /* chunks of the run */
    bool meet;    /* the threads meet before and after their first chunk */
    atomic_int met;
} chunk_ctx;

static void take_chunks(void *ctx, int ith, int nth) {
    chunk_ctx *c = ctx;
    (void)nth;
    /* the late thread waits (at most 5 s) for the others to take every chunk */
    for (int ms = 0; c->late && ith == 3 && ms < 5000; ms++) {
        if (atomic_load(&c->by[0]) + atomic_load(&c->by[1]) + atomic_load(&c->by[2]) == c->n)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    if (c->meet) { /* every thread takes its first chunk before any takes a second */
        atomic_fetch_add(&c->met, 1);
        for (int ms = 0; atomic_load(&c->met) < 4 && ms < 5000; ms++)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    c->first[ith] = threadpool_chunk_first(&c->ch, ith);
    if (c->meet) {
        atomic_fetch_add(&c->met, 1);
        for (int ms = 0; atomic_load(&c->met) < 8 && ms < 5000; ms++)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    for (int k = c->first[ith]; k >= 0; k = threadpool_chunk_next(&c->ch, ith, k)) {
        atomic_fetch_add(&g_hits[k], 1);
        atomic_fetch_add(&c->by[ith], 1);
    }
}

/* Chunks handed out on demand: each exactly once per run, for more and fewer chunks than
 * threads, in either order; in ranges each thread starts at its own range's first chunk, and
 * a thread that comes late finds its range taken by the others. */
Test(threadpool, every_chunk_once) {
    threadpool *tp = threadpool_create(4);
    cr_assert(tp);
    int sizes[] = {1, 3, 4, 5, 1000};
    for (int mode = 0; mode < 3; mode++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int n = sizes[s];
            for (int i = 0; i < n; i++)
                atomic_store(&g_hits[i], 0);
            chunk_ctx c = {.late = mode == 2, .meet = mode == 1 && n == 1000};
            for (int round = 0; round < 20; round++) {
                for (int t = 0; t < 4; t++)
                    atomic_store(&c.by[t], 0);
                c.n = n;
                atomic_store(&c.met, 0);
                if (mode == 0)
                    threadpool_chunks_init(&c.ch, n, threadpool_size(tp));
                else
                    threadpool_chunks_init_ranges(&c.ch, n, threadpool_size(tp));
                threadpool_run(tp, take_chunks, &c);
                if (mode == 1 && n == 1000)
                    for (int t = 0; t < 4; t++)
                        cr_assert_eq(c.first[t], t * n / 4, "thread %d began at chunk %d", t, c.first[t]);
                if (mode == 2)
                    cr_assert_eq(c.first[3], -1, "the late thread began at %d", c.first[3]);
            }
            for (int i = 0; i < n; i++)
                cr_assert_eq(atomic_load(&g_hits[i]), 20, "mode %d, %d chunks: chunk %d taken %d times", mode, n, i,
                             atomic_load(&g_hits[i]));
            int total = 0;
            for (int t = 0; t < 4; t++)
                total += atomic_load(&c.by[t]);
            cr_assert_eq(total, n); /* the last round's */
        }
    threadpool_destroy(tp);
}

/* Greedy picks the first index of the largest logit, whatever the vocabulary's length (the
 * lanes' tail), with ties, NaNs and infinities about. */
Test(sampler, argmax_first_of_the_largest) {
    enum { V = 1000 };
    float l[V];
    for (int n = 1; n <= V; n += n < 80 ? 1 : 37) {
        for (int c = 0; c < 5; c++) {
            fill(l, n, (unsigned)(n * 7 + c));
            if (c == 1 && n > 3) /* a tie: the first wins */
                l[n / 3] = l[n - 1] = 9;
            if (c == 2)
                for (int i = 0; i < n; i += 3)
                    l[i] = NAN;
            if (c == 3)
                for (int i = 0; i < n; i++)
                    l[i] = -INFINITY;
            if (c == 4 && n > 5)
                l[n - 5] = INFINITY;
            int32_t want = 0;
            for (int i = 1; i < n; i++)
                if (l[i] > l[want])
                    want = i;
            cr_assert_eq(sampler_argmax(l, n), want, "n %d case %d", n, c);
        }
    }
}

Test(sampler, greedy_and_seeded) {
    enum { V = 1000 };
    float l[V];
    fill(l, V, 11);
    l[417] = 5;
    sampler s;
    sampler_params g = sampler_params_greedy();
    sampler_init(&s, &g, 1);
    cr_assert_eq(sampler_sample(&s, l, V), 417);
    sampler_free(&s);
    sampler_params p = {.temperature = 1.5f, .top_k = 50, .top_p = 0.9f};
    int32_t a[64], b[64];
    int distinct = 0;
    for (int run = 0; run < 2; run++) {
        sampler_init(&s, &p, 42);
        for (int i = 0; i < 64; i++)
            (run ? b : a)[i] = sampler_sample(&s, l, V);
        sampler_free(&s);
    }
    for (int i = 0; i < 64; i++) {
        cr_assert_eq(a[i], b[i]);
        cr_assert(a[i] >= 0 && a[i] < V);
        distinct += a[i] != a[0];
    }
    cr_assert_gt(distinct, 0, "temperature sampling never varied");
    /* top-k 1 is greedy */
    sampler_params k1 = {.temperature = 1, .top_k = 1, .top_p = 1};
    sampler_init(&s, &k1, 9);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(sampler_sample(&s, l, V), 417);
    sampler_free(&s);
    /* another seed gives another sequence */
    sampler_init(&s, &p, 43);
    int same = 0;
    for (int i = 0; i < 64; i++)
        same += sampler_sample(&s, l, V) == a[i];
    cr_assert_lt(same, 64);
    sampler_free(&s);
}

Test(kernels, q4_k_and_q6_k) {
    cr_assert(kern_weight_supported(GGML_TYPE_Q4_K) && kern_weight_supported(GGML_TYPE_Q6_K));
    cr_assert_eq(kern_act_type(GGML_TYPE_Q6_K), GGML_TYPE_Q8_0);
    cr_assert_eq(kern_act_type(GGML_TYPE_Q4_K), GGML_TYPE_Q8_0);
    cr_assert(kern_pack_supported(GGML_TYPE_Q4_K) && kern_pack_supported(GGML_TYPE_Q6_K));
}
