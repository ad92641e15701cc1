/* kernels_f16.h - F16 weights times F16-rounded activations (kept as F16 or as floats,
 * kern_f16_act_type) and attention's F16-rounded queries: the one-row dot, the matrix x
 * batch product, and attention's many-keys score and value kernels.
 *
 * One arithmetic for every F16 dot of a level, in every kernel: L lanes, lane j accumulating
 * elements L k + j (k ascending) with one fused multiply-add each, starting from +0; then a
 * fixed tree: for 16 lanes s_j = l_j + l_(j+8) (j < 8), then the 8-lane tree on s; for 8
 * lanes t_j = l_j + l_(j+4), (t_0 + t_2) + (t_1 + t_3); then the elements past the last
 * multiple of L, one fused multiply-add each. The dot and the product take 16 lanes at the
 * scalar and AVX-512 levels and 8 at AVX2 (one ymm a (row, token): wider register tiles);
 * attention's scores take 16 lanes on every level. So within a level a batch's products, a
 * thread's share of rows and decoding one token give the same bits. */
#ifndef PACER_KERNELS_F16_H
#define PACER_KERNELS_F16_H

#include <stddef.h>

#include "engine/ggml_type.h"

/* The form of a matrix's activations at the current level (kern_act_type of F16 weights):
 * GGML_TYPE_F16 at the scalar level; from AVX2 on whichever multiplies faster on this CPU,
 * timed once per process and level (F16: half the bytes, converted inside the tile; F32
 * holding F16-rounded values: fewer conversions), unless kern_f16_set_act_type chose. The
 * same values and the same products either way. */
ggml_type kern_f16_act_type(void);
/* Fixes the form from AVX2 on (GGML_TYPE_F16 or GGML_TYPE_F32; anything else: back to the
 * timed choice), for tests and benchmarks. Call it before preparing activations, not while an
 * engine runs. */
void kern_f16_set_act_type(ggml_type t);

/* dot(w, x) over n elements, the arithmetic above with the level's lanes; x an activation
 * row in kern_f16_act_type's form. */
float kern_dot_f16(const ggml_half *w, const void *x, int n);

/* The lanes the dot and the product take at the current level (kern_get_level): 16 or 8. */
int kern_f16_lanes(void);

/* The scalar definition with the given lanes (16 or 8), whatever the level; x holds the
 * activations' values as floats. */
float kern_dot_f16_lanes(const ggml_half *w, const float *x, int n, int lanes);

/* out[b * ldo + r] = kern_dot_f16(row r of W, activation b) for rows [r0, r1) and b < nb;
 * W's rows are row_bytes apart, activations (n elements in kern_f16_act_type's form)
 * act_bytes apart. */
void kern_matmul_f16(const ggml_half *W, size_t row_bytes, int n, int r0, int r1, const void *act,
                     size_t act_bytes, int nb, float *out, int ldo);

/* For each of nh queries (q_stride apart): out[h * out_stride + t] = kern_dot_f16_lanes(key t,
 * query h, hd, 16) * scale for the n keys at k + t * k_stride (elements). */
void kern_attn_scores(int nh, const ggml_half *k, size_t k_stride, const float *q, size_t q_stride, int hd, int n,
                      float scale, float *out, size_t out_stride);

/* Softmax of s[0..n) in place (max subtracted, kernels_f16.c's polynomial exp: the same bits
 * on every level; the sum in four double lanes), each weight then rounded through F16 as
 * ggml rounds attention weights before the value product. */
void kern_softmax_f16(float *s, int n);

/* g[i] = silu(g[i]) * u[i] for i < n (SwiGLU), with softmax's exp: the same bits on every
 * level. */
void kern_swiglu(float *g, const float *u, int n);

/* For each of nh heads: out[h * out_stride + i] = the sum over keys t = 0..n[h]-1, in order,
 * of w[h * w_stride + t] * v_t[i] (one fused multiply-add each, from +0), v_t at
 * v + t * v_stride (elements), i < hd. Each key's values are read once for all heads. */
void kern_attn_values(int nh, const float *w, size_t w_stride, const ggml_half *v, size_t v_stride, int hd,
                      const int *n, float *out, size_t out_stride);

#endif
