/* kernels_f16.h - F16 weights times F16-rounded activations (held as floats) and
 * attention's F16-rounded queries: the one-row dot, the matrix x batch product, the packed
 * matrix x batch product the engine takes, and attention's many-keys score and value kernels.
 *
 * One arithmetic for every unpacked F16 dot of a level, in every kernel: L lanes, lane j
 * accumulating elements L k + j (k ascending) with one fused multiply-add each, starting from
 * +0; then a fixed tree: for 16 lanes s_j = l_j + l_(j+8) (j < 8), then the 8-lane tree on s;
 * for 8 lanes t_j = l_j + l_(j+4), (t_0 + t_2) + (t_1 + t_3); then the elements past the last
 * multiple of L, one fused multiply-add each. The dot and the product take 16 lanes at the
 * scalar and AVX-512 levels and 8 at AVX2.
 * So within a level a batch's products, a thread's share of rows and decoding one token give
 * the same bits. Attention's scores have their own arithmetic (below). */
#ifndef PACER_KERNELS_F16_H
#define PACER_KERNELS_F16_H

#include <stddef.h>

#include "engine/ggml_type.h"

/* dot(w, x) over n elements, the arithmetic above with the level's lanes. */
float kern_dot_f16(const ggml_half *w, const float *x, int n);

/* The lanes the dot and the product take at the current level (kern_get_level): 16 or 8. */
int kern_f16_lanes(void);

/* The scalar definition with the given lanes (16 or 8), whatever the level. */
float kern_dot_f16_lanes(const ggml_half *w, const float *x, int n, int lanes);

/* out[b * ldo + r] = kern_dot_f16(row r of W, activation b) for rows [r0, r1) and b < nb;
 * W's rows are row_bytes apart, activations (n floats) act_bytes apart. */
void kern_matmul_f16(const ggml_half *W, size_t row_bytes, int n, int r0, int r1, const float *act,
                     size_t act_bytes, int nb, float *out, int ldo);

/* ---- packed F16 matrices (kern_pack's F16 layout; kernels.h) ----
 * Rows in groups of 16, the last padded with zero rows: a group holds its rows' weights for
 * element 0 side by side, then element 1's, ..., then KERN_F16_GROUP_PAD halves of padding
 * (so that decode's eight streams, one a group, do not start a multiple of 4 KB apart where
 * rows have 2^k elements). One SIMD lane computes one row, each activation broadcast to all
 * lanes. Each output is
 * fma(w_(n-1), x_(n-1), ... fma(w_1, x_1, fma(w_0, x_0, +0))): one fused multiply-add per
 * element, in order, on every level, for every batch size and split of groups over threads;
 * so they all give the same bits (not kern_dot_f16's, whose lanes sum in another order). */
#define KERN_F16_GROUP_PAD 32
size_t kern_f16_pack_size(int n_in, int n_out);
/* Packs groups [g0, g1) of the n_out x n_in F16 matrix at src (rows row_bytes apart). */
void kern_f16_pack(const void *src, size_t row_bytes, int n_in, int n_out, int g0, int g1, void *dst);
/* out[b * ldo + r] for the rows r < n_out of groups [g0, g1) and b < nb; activations n_in
 * floats each, act_stride bytes apart. */
void kern_f16_gemm_packed(const ggml_half *P, int n_in, int n_out, int g0, int g1, const float *act,
                          size_t act_stride, int nb, float *out, int ldo);

/* ---- attention's keys ----
 * A KV head's keys are stored in blocks of KERN_KEY_BLOCK positions: element d of the key at
 * position t is at (t / KERN_KEY_BLOCK) * KERN_KEY_BLOCK * hd + d * KERN_KEY_BLOCK +
 * t % KERN_KEY_BLOCK, so that one vector holds element d of a block's keys and a score is one
 * lane's chain of multiply-adds, with no sum across lanes. The region a head's keys take is a
 * whole number of blocks (kern_key_positions). */
#define KERN_KEY_BLOCK 16

/* The positions a head's key region holds for n_ctx positions: n_ctx rounded up to blocks. */
int kern_key_positions(int n_ctx);

/* Stores the F16 rounding of the hd floats at k as the key at position t of the head whose
 * blocked keys start at keys. */
void kern_attn_key_store(ggml_half *keys, int t, const float *k, int hd);

/* For each of nh queries (q_stride apart): out[h * out_stride + t] for the keys t < n of the
 * head at keys (blocked, above) = fma(q_(hd-1), k_(hd-1), ... fma(q_1, k_1, fma(q_0, k_0, +0)))
 * * scale: one fused multiply-add per element, in order, on every level, for any number of
 * queries at once; so a query's scores do not depend on the batch. */
void kern_attn_scores(int nh, const ggml_half *keys, const float *q, size_t q_stride, int hd, int n, float scale,
                      float *out, size_t out_stride);

/* ---- attention's softmax, in ranges of keys ----
 * A row's n keys fall in ranges of KERN_ATT_RANGE positions ([0, R), [R, 2R), ...), so that
 * the ranges of one row can be worked on by several threads and still give the bits that
 * one thread gives. Per range r (kern_softmax_part): its max m_r, its weights exp(s_t - m_r)
 * (kernels_f16.c's polynomial exp: the same bits on every level) and their sum S_r in
 * sixteen double lanes, lane j taking the weights t = j mod 16 in order up to the last
 * multiple of 16, then lanes j + 8 into j, j + 4 into j, (0 + 2) + (1 + 3), then the weights
 * past it in order. Then (kern_softmax_factors) m = the largest m_r, c_r = 1 where m_r = m,
 * else exp(m_r - m); S = the sum over r in order of S_r * c_r (doubles, from +0);
 * f_r = c_r * (float)(1 / S). Each weight becomes (kern_softmax_scale) its F16 rounding of
 * weight * f_r, as ggml rounds attention weights before the value product. With one range
 * (n <= R) this is the plain softmax: max subtracted, weights over their sum. */
#define KERN_ATT_RANGE 512
#define KERN_ATT_RANGES_MAX 512 /* so n <= 262144 keys (engine_open holds n_ctx to it) */
static inline int kern_att_ranges(int n) { return (n + KERN_ATT_RANGE - 1) / KERN_ATT_RANGE; }
/* The keys of range r that a row of n keys takes (0 past its last). */
static inline int kern_att_range_keys(int n, int r) {
    int k = n - r * KERN_ATT_RANGE;
    return k < 0 ? 0 : k < KERN_ATT_RANGE ? k : KERN_ATT_RANGE;
}
/* One range's n > 0 scores at s: the weights in place, *sum; returns the range's max. */
float kern_softmax_part(float *s, int n, double *sum);
/* The factors f[0..k) of k ranges from their maxima and sums. */
void kern_softmax_factors(int k, const float *mx, const double *sum, float *f);
/* s[t] = the F16 rounding of s[t] * f, t < n. */
void kern_softmax_scale(float *s, int n, float f);
/* The whole softmax of s[0..n) in place, n <= KERN_ATT_RANGE * KERN_ATT_RANGES_MAX. */
void kern_softmax_f16(float *s, int n);

/* g[i] = silu(g[i]) * u[i] for i < n (SwiGLU), with softmax's exp: the same bits on every
 * level. */
void kern_swiglu(float *g, const float *u, int n);

/* For each of nh heads: out[h * out_stride + i] = the sum over the ranges of keys
 * (KERN_ATT_RANGE) that the head's keys t = 0..n[h]-1 fall in, in order (((P_0 + P_1) + P_2)
 * ...), of each range's sum over its keys, in order, of w[h * w_stride + t] * v_t[i] (one
 * fused multiply-add each, from +0); v_t at v + t * v_stride (elements), i < hd. Each key's
 * values are read once for all heads. part: nh * hd floats of room where some n[h] exceeds
 * one range (else NULL). */
void kern_attn_values(int nh, const float *w, size_t w_stride, const ggml_half *v, size_t v_stride, int hd,
                      const int *n, float *out, size_t out_stride, float *part);

#endif
