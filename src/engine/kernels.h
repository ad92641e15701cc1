/* kernels.h - the engine's numeric kernels: dot products of a weight row (any supported
 * GGUF type) with an activation row prepared for that type, matrix x matrix over a batch,
 * and the small vector operations. SIMD paths (AVX2/FMA, AVX-512) are chosen at run time;
 * a scalar path computes the same products and is what the tests compare against. */
#ifndef PACER_KERNELS_H
#define PACER_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ggml_type.h"

/* KERN_AVXVNNI: AVX2 with AVX-VNNI (256-bit vpdpbusd, Intel's client CPUs from Alder Lake
 * on), used by the packed integer kernels; everything else runs AVX2's code there. KERN_VNNI:
 * AVX-512 with VNNI; KERN_AMX: that and AMX-INT8 tiles (the OS permits them: arch_prctl),
 * for batches of 16 tokens. The levels are ordered, but a CPU with AVX-512 may lack
 * AVX-VNNI (Zen 4, Ice Lake): kern_level_supported says which levels below its best it has. */
typedef enum kern_level {
    KERN_SCALAR = 0,
    KERN_AVX2 = 1,
    KERN_AVXVNNI = 2,
    KERN_AVX512 = 3,
    KERN_VNNI = 4,
    KERN_AMX = 5
} kern_level;
#define KERN_LEVELS 6

/* The best level this CPU supports; kern_set_level picks another (lower) one, for tests:
 * the best supported level at or below l. */
kern_level kern_detect(void);
bool kern_level_supported(kern_level l);
void kern_set_level(kern_level l);
kern_level kern_get_level(void);
const char *kern_level_name(kern_level l);
/* The level kern_level_name calls `name`, or -1 (PACER_KERNELS's values). */
int kern_level_by_name(const char *name);

/* Where the one-token (decode) kernels' software prefetches bring the weights they stream,
 * and attention the K/V cache: L1 (prefetcht0) or L2 (prefetcht1). Detected with the level:
 * L2 on AMD CPUs, L1 elsewhere; kern_set_prefetch picks the other, for measurements
 * (PACER_PREFETCH, in pacer and bench_engine). Results do not depend on it. A 2-core Zen 4 EPYC, 1B models, decode at
 * one thread, medians of three or four alternating runs, L1 / L2: Q4_0 20.3-21.7 /
 * 29.3-30.6 tok/s, Q4_K 20.9-22.1 / 24.2-26.6, Q8_0 13.3 / 16.1, F16 6.9 / 9.2. A 16-core
 * Emerald Rapids, tg32, two alternating rounds, L1 / L2: 16 threads Q4_0 257, 256 / 247,
 * 245, F16 64.3, 65.5 / 62.2, 61.1; 2 threads Q4_0 68.5, 66.9 / 53.7, 58.8, F16 20.0, 20.2
 * / 18.0, 17.4 (Q4_K, Q8_0 level). */
typedef enum kern_prefetch { KERN_PF_L1, KERN_PF_L2 } kern_prefetch;
kern_prefetch kern_get_prefetch(void);
void kern_set_prefetch(kern_prefetch p);
/* The choice kern_prefetch_by_name calls `name` ("l1", "l2"), or -1 (PACER_PREFETCH's values). */
int kern_prefetch_by_name(const char *name);
/* Set with the level (kern_get_level) before any kernel runs; the kernels read it. */
extern bool kern_pf_l2;

#if defined(__x86_64__)
#include <xmmintrin.h>
/* Prefetches the line at p where kern_pf_l2 says (the decode kernels' streams). */
__attribute__((always_inline)) static inline void kern_prefetch_line(const void *p) {
    if (kern_pf_l2)
        _mm_prefetch((const char *)p, _MM_HINT_T1);
    else
        _mm_prefetch((const char *)p, _MM_HINT_T0);
}
#endif

/* Whether weights of type `t` can be multiplied (natively or through dequantization). */
bool kern_weight_supported(ggml_type t);
/* Activations of Q8_0, Q4_0, Q4_K and Q6_K weights: 32 values quantized as ggml's Q8_0 does
 * (d = amax / 127 rounded through F16, q = round(x / d), ties to even), with the scale as a
 * float, the sum of the quants (for Q4_0's offset of 8, Q4_K's mins) and the sum of the
 * first 16 (for Q6_K's offset of 32, per half: sum_lo and sum - sum_lo); |sum| <= 32 * 127. */
typedef struct kern_q8_block {
    float d;
    int16_t sum, sum_lo;
    int8_t qs[32];
} kern_q8_block;

/* The kind of activation rows weights of type `t` multiply: GGML_TYPE_Q8_0 (meaning rows
 * of kern_q8_block) for Q8_0/Q4_0/Q4_K/Q6_K; F32 otherwise, rounded to F16 first for F16
 * weights and to BF16 for BF16 weights, so that their dot products see activations rounded
 * as ggml rounds them. Matrices whose types give the same kind and rounding can share one
 * prepared row. */
ggml_type kern_act_type(ggml_type t);
/* Bytes of one prepared activation row of n elements for weights of type `t`. */
size_t kern_act_size(ggml_type t, int n);
/* Converts n floats into the activation format for weights of type `t`. The same input
 * gives the same bytes on every kernel level. */
void kern_act_prepare(ggml_type t, const float *x, void *out, int n);
/* The values a prepared row stands for (n floats), for tests and references. */
void kern_act_dequantize(ggml_type t, const void *a, float *x, int n);
/* x rounded to F16 and widened back (attention's queries, as ggml rounds them). */
void kern_round_f16(const float *x, float *out, int n);

/* dot(weight row w of type t, prepared activation a), n elements. `scratch` holds n floats
 * (used for types that are dequantized first: Q6_K, ...). */
float kern_dot(ggml_type t, const void *w, const void *a, int n, float *scratch);

/* out[b * ldo + r] = dot(row r of W, activation b) for rows [r0, r1) and b < nb. W rows are
 * row_bytes apart; activations act_bytes apart. Each weight row is read once for all nb. */
void kern_matmul(ggml_type t, const void *W, size_t row_bytes, int n, int r0, int r1,
                 const void *act, size_t act_bytes, int nb, float *out, int ldo, float *scratch);

/* ---- packed matrices (kernels_pack.c; F16: kernels_f16.h) ----
 * Rows in groups (Q4_0, Q8_0, Q4_K, Q6_K: 8 rows; F16: 16), the last group padded with
 * zero rows, interleaved so that one SIMD lane computes one row. Results do not depend on
 * the kernel level, on nb, or on how groups are split over threads: for the quantized types
 * they equal kern_dot's, bit for bit; for F16 kernels_f16.h states the order. */
bool kern_pack_supported(ggml_type t);
/* Rows a group of type t holds, and the groups of an n_out-row matrix. */
int kern_pack_rows(ggml_type t);
int kern_pack_groups(ggml_type t, int n_out);
/* Bytes of the packed form of an n_out x n_in matrix (n_in a multiple of the type's block). */
size_t kern_pack_size(ggml_type t, int n_in, int n_out);
/* Packs row groups [g0, g1) of the matrix at `src` (rows row_bytes apart) into dst, which
 * holds kern_pack_size bytes; disjoint group ranges can be packed in parallel. */
void kern_pack(ggml_type t, const void *src, size_t row_bytes, int n_in, int n_out, int g0, int g1, void *dst);
/* out[b * ldo + r] for the rows r of groups [g0, g1) (r < n_out) and b < nb; activations
 * (kern_act_prepare'd for t) are act_stride bytes apart. */
void kern_gemm_packed(ggml_type t, const void *P, int n_in, int n_out, int g0, int g1, const void *act,
                      size_t act_stride, int nb, float *out, int ldo);

float kern_dot_f32(const float *a, const float *b, int n);
/* y += a * x */
void kern_axpy_f32(float *y, float a, const float *x, int n);
/* y = x rounded to F16, ggml_fp32_to_fp16's bits on every level (F16C where present) */
void kern_f32_to_f16(const float *x, ggml_half *y, int n);

#endif
