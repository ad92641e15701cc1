/* kernels.c - dot products per weight type (scalar reference, AVX2/FMA/F16C, AVX-512F),
 * chosen once at run time through __builtin_cpu_supports. Quantized weights multiply
 * Q8_0-quantized activations and F16 weights F16-rounded ones, as ggml does. */
#include "engine/kernels.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define KERN_X86 1
#endif

static int g_level = -1;

kern_level kern_detect(void) {
#ifdef KERN_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        return KERN_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        return KERN_AVX2;
#endif
    return KERN_SCALAR;
}

kern_level kern_get_level(void) {
    if (g_level < 0)
        g_level = kern_detect();
    return (kern_level)g_level;
}

void kern_set_level(kern_level l) {
    kern_level best = kern_detect();
    g_level = l > best ? best : l;
}

const char *kern_level_name(kern_level l) {
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    return (unsigned)l < 3 ? names[l] : "?";
}

bool kern_weight_supported(ggml_type t) {
    switch (t) {
    case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16: case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_K: case GGML_TYPE_Q6_K:
        return true;
    default:
        return false;
    }
}

ggml_type kern_act_type(ggml_type t) {
    switch (t) {
    case GGML_TYPE_Q8_0: case GGML_TYPE_Q4_0: return GGML_TYPE_Q8_0;
    default: return GGML_TYPE_F32;
    }
}

size_t kern_act_size(ggml_type t, int n) {
    switch (kern_act_type(t)) {
    case GGML_TYPE_Q8_0: return (size_t)(n / QK8_0) * sizeof(block_q8_0);
    default: return (size_t)n * sizeof(float);
    }
}

/* ---------------- scalar ---------------- */

static float dot_f32_scalar(const float *a, const float *b, int n) {
    float s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static float dot_f16_scalar(const ggml_half *w, const float *x, int n) {
    float s = 0;
    for (int i = 0; i < n; i++)
        s += ggml_fp16_to_fp32(w[i]) * x[i];
    return s;
}

static float dot_bf16_scalar(const ggml_bf16 *w, const float *x, int n) {
    float s = 0;
    for (int i = 0; i < n; i++)
        s += ggml_bf16_to_fp32(w[i]) * x[i];
    return s;
}

static float dot_q8_0_scalar(const block_q8_0 *w, const block_q8_0 *x, int n) {
    float s = 0;
    for (int b = 0; b < n / QK8_0; b++) {
        int acc = 0;
        for (int j = 0; j < QK8_0; j++)
            acc += w[b].qs[j] * x[b].qs[j];
        s += (float)acc * ggml_fp16_to_fp32(w[b].d) * ggml_fp16_to_fp32(x[b].d);
    }
    return s;
}

static float dot_q4_0_scalar(const block_q4_0 *w, const block_q8_0 *x, int n) {
    float s = 0;
    for (int b = 0; b < n / QK4_0; b++) {
        int acc = 0;
        for (int j = 0; j < QK4_0 / 2; j++) {
            acc += ((w[b].qs[j] & 0x0F) - 8) * x[b].qs[j];
            acc += ((w[b].qs[j] >> 4) - 8) * x[b].qs[j + QK4_0 / 2];
        }
        s += (float)acc * ggml_fp16_to_fp32(w[b].d) * ggml_fp16_to_fp32(x[b].d);
    }
    return s;
}

/* ---------------- AVX2 / FMA / F16C ---------------- */
#ifdef KERN_X86
#define T_AVX2 __attribute__((target("avx2,fma,f16c")))
#define T_AVX512 __attribute__((target("avx512f,avx512bw,avx2,fma,f16c")))

T_AVX2 static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

T_AVX2 static float dot_f32_avx2(const float *a, const float *b, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

T_AVX2 static float dot_f16_avx2(const ggml_half *w, const float *x, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
           s3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
#define F16L(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
        s0 = _mm256_fmadd_ps(F16L(w + i), _mm256_loadu_ps(x + i), s0);
        s1 = _mm256_fmadd_ps(F16L(w + i + 8), _mm256_loadu_ps(x + i + 8), s1);
        s2 = _mm256_fmadd_ps(F16L(w + i + 16), _mm256_loadu_ps(x + i + 16), s2);
        s3 = _mm256_fmadd_ps(F16L(w + i + 24), _mm256_loadu_ps(x + i + 24), s3);
    }
    float s = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++)
        s += _cvtsh_ss(w[i]) * x[i];
    return s;
}

T_AVX2 static inline __m256 bf16_load8(const ggml_bf16 *p) {
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

T_AVX2 static float dot_bf16_avx2(const ggml_bf16 *w, const float *x, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(bf16_load8(w + i), _mm256_loadu_ps(x + i), s0);
        s1 = _mm256_fmadd_ps(bf16_load8(w + i + 8), _mm256_loadu_ps(x + i + 8), s1);
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += ggml_bf16_to_fp32(w[i]) * x[i];
    return s;
}

/* int8 x int8 dot of 32 pairs as 8 int32 lanes, through the unsigned x signed multiply. */
T_AVX2 static inline __m256 dot_i8_32(__m256i qx, __m256i qy) {
    __m256i ax = _mm256_sign_epi8(qx, qx);
    __m256i sy = _mm256_sign_epi8(qy, qx);
    __m256i d16 = _mm256_maddubs_epi16(ax, sy);
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(d16, _mm256_set1_epi16(1)));
}

T_AVX2 static float dot_q8_0_avx2(const block_q8_0 *w, const block_q8_0 *x, int n) {
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < n / QK8_0; b++) {
        __m256i qw = _mm256_loadu_si256((const __m256i *)w[b].qs);
        __m256i qx = _mm256_loadu_si256((const __m256i *)x[b].qs);
        __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
        acc = _mm256_fmadd_ps(d, dot_i8_32(qw, qx), acc);
    }
    return hsum256(acc);
}

T_AVX2 static float dot_q4_0_avx2(const block_q4_0 *w, const block_q8_0 *x, int n) {
    __m256 acc = _mm256_setzero_ps();
    const __m256i lo = _mm256_set1_epi8(0x0F), eight = _mm256_set1_epi8(8);
    for (int b = 0; b < n / QK4_0; b++) {
        __m128i t = _mm_loadu_si128((const __m128i *)w[b].qs);
        __m256i q = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
        q = _mm256_sub_epi8(_mm256_and_si256(q, lo), eight);
        __m256i qx = _mm256_loadu_si256((const __m256i *)x[b].qs);
        __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
        acc = _mm256_fmadd_ps(d, dot_i8_32(q, qx), acc);
    }
    return hsum256(acc);
}

T_AVX512 static float dot_f16_avx512(const ggml_half *w, const float *x, int n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
#define F16L5(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
        s0 = _mm512_fmadd_ps(F16L5(w + i), _mm512_loadu_ps(x + i), s0);
        s1 = _mm512_fmadd_ps(F16L5(w + i + 16), _mm512_loadu_ps(x + i + 16), s1);
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    for (; i < n; i++)
        s += _cvtsh_ss(w[i]) * x[i];
    return s;
}

T_AVX512 static float dot_f32_avx512(const float *a, const float *b, int n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* Four activation rows against one weight row: each weight block is loaded and unpacked
 * once. Per row the arithmetic and its order are those of the one-row kernels, so the
 * results are bit-identical to them. */
T_AVX512 static void dot4_f16_avx512(const ggml_half *w, const float *const *x, int n, float *out) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0, d1 = a0;
    const float *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 w0 = F16L5(w + i), w1 = F16L5(w + i + 16);
        a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x0 + i), a0);
        a1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x0 + i + 16), a1);
        b0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x1 + i), b0);
        b1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1 + i + 16), b1);
        c0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x2 + i), c0);
        c1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x2 + i + 16), c1);
        d0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x3 + i), d0);
        d1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x3 + i + 16), d1);
    }
    out[0] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    out[1] = _mm512_reduce_add_ps(_mm512_add_ps(b0, b1));
    out[2] = _mm512_reduce_add_ps(_mm512_add_ps(c0, c1));
    out[3] = _mm512_reduce_add_ps(_mm512_add_ps(d0, d1));
    for (int b = 0; b < 4; b++)
        for (int k = i; k < n; k++)
            out[b] += _cvtsh_ss(w[k]) * x[b][k];
}

T_AVX2 static inline __m256 dot_i8_32_signed(__m256i ax, __m256i qx, __m256i qy) {
    __m256i sy = _mm256_sign_epi8(qy, qx);
    __m256i d16 = _mm256_maddubs_epi16(ax, sy);
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(d16, _mm256_set1_epi16(1)));
}

T_AVX2 static void dot4_q8_0_avx2(const block_q8_0 *w, const block_q8_0 *const *x, int n, float *out) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    const block_q8_0 *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
    for (int blk = 0; blk < n / QK8_0; blk++) {
        __m256i qw = _mm256_loadu_si256((const __m256i *)w[blk].qs);
        __m256i ax = _mm256_sign_epi8(qw, qw);
        float dw = _cvtsh_ss(w[blk].d);
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(dw * _cvtsh_ss(x0[blk].d)),
                               dot_i8_32_signed(ax, qw, _mm256_loadu_si256((const __m256i *)x0[blk].qs)), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(dw * _cvtsh_ss(x1[blk].d)),
                               dot_i8_32_signed(ax, qw, _mm256_loadu_si256((const __m256i *)x1[blk].qs)), acc1);
        acc2 = _mm256_fmadd_ps(_mm256_set1_ps(dw * _cvtsh_ss(x2[blk].d)),
                               dot_i8_32_signed(ax, qw, _mm256_loadu_si256((const __m256i *)x2[blk].qs)), acc2);
        acc3 = _mm256_fmadd_ps(_mm256_set1_ps(dw * _cvtsh_ss(x3[blk].d)),
                               dot_i8_32_signed(ax, qw, _mm256_loadu_si256((const __m256i *)x3[blk].qs)), acc3);
    }
    out[0] = hsum256(acc0);
    out[1] = hsum256(acc1);
    out[2] = hsum256(acc2);
    out[3] = hsum256(acc3);
}

T_AVX2 static void dot4_q4_0_avx2(const block_q4_0 *w, const block_q8_0 *const *x, int n, float *out) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    const block_q8_0 *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
    const __m256i lo = _mm256_set1_epi8(0x0F), eight = _mm256_set1_epi8(8);
    for (int blk = 0; blk < n / QK4_0; blk++) {
        __m128i t = _mm_loadu_si128((const __m128i *)w[blk].qs);
        __m256i q = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
        q = _mm256_sub_epi8(_mm256_and_si256(q, lo), eight);
        __m256i ax = _mm256_sign_epi8(q, q);
        float dw = _cvtsh_ss(w[blk].d);
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(dw * _cvtsh_ss(x0[blk].d)),
                               dot_i8_32_signed(ax, q, _mm256_loadu_si256((const __m256i *)x0[blk].qs)), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(dw * _cvtsh_ss(x1[blk].d)),
                               dot_i8_32_signed(ax, q, _mm256_loadu_si256((const __m256i *)x1[blk].qs)), acc1);
        acc2 = _mm256_fmadd_ps(_mm256_set1_ps(dw * _cvtsh_ss(x2[blk].d)),
                               dot_i8_32_signed(ax, q, _mm256_loadu_si256((const __m256i *)x2[blk].qs)), acc2);
        acc3 = _mm256_fmadd_ps(_mm256_set1_ps(dw * _cvtsh_ss(x3[blk].d)),
                               dot_i8_32_signed(ax, q, _mm256_loadu_si256((const __m256i *)x3[blk].qs)), acc3);
    }
    out[0] = hsum256(acc0);
    out[1] = hsum256(acc1);
    out[2] = hsum256(acc2);
    out[3] = hsum256(acc3);
}
/* signed int8 pairs -> 16 int32 lanes (AVX-512BW): |q| times y with q's sign moved onto y */
T_AVX512 static inline __m512 dot_i8_64(__m512i q, __m512i y) {
    __m512i ax = _mm512_abs_epi8(q);
    __m512i sy = _mm512_mask_sub_epi8(y, _mm512_movepi8_mask(q), _mm512_setzero_si512(), y);
    __m512i d16 = _mm512_maddubs_epi16(ax, sy);
    return _mm512_cvtepi32_ps(_mm512_madd_epi16(d16, _mm512_set1_epi16(1)));
}

T_AVX512 static inline __m512 two_scales(float a, float b) {
    return _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(a), _mm512_set1_ps(b));
}

T_AVX512 static inline __m512i load2x32(const int8_t *a, const int8_t *b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
                              _mm256_loadu_si256((const __m256i *)b), 1);
}

T_AVX512 static float dot_q8_0_avx512(const block_q8_0 *w, const block_q8_0 *x, int n) {
    __m512 acc = _mm512_setzero_ps();
    int nb = n / QK8_0, b = 0;
    for (; b + 2 <= nb; b += 2) {
        __m512i q = load2x32(w[b].qs, w[b + 1].qs), y = load2x32(x[b].qs, x[b + 1].qs);
        __m512 d = two_scales(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d), _cvtsh_ss(w[b + 1].d) * _cvtsh_ss(x[b + 1].d));
        acc = _mm512_fmadd_ps(d, dot_i8_64(q, y), acc);
    }
    float s = _mm512_reduce_add_ps(acc);
    if (b < nb)
        s += dot_q8_0_avx2(w + b, x + b, QK8_0);
    return s;
}

T_AVX512 static float dot_q4_0_avx512(const block_q4_0 *w, const block_q8_0 *x, int n) {
    __m512 acc = _mm512_setzero_ps();
    const __m512i lo = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
    int nb = n / QK4_0, b = 0;
    for (; b + 2 <= nb; b += 2) {
        __m128i t0 = _mm_loadu_si128((const __m128i *)w[b].qs), t1 = _mm_loadu_si128((const __m128i *)w[b + 1].qs);
        __m256i q0 = _mm256_set_m128i(_mm_srli_epi16(t0, 4), t0), q1 = _mm256_set_m128i(_mm_srli_epi16(t1, 4), t1);
        __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
        q = _mm512_sub_epi8(_mm512_and_si512(q, lo), eight);
        __m512i y = load2x32(x[b].qs, x[b + 1].qs);
        __m512 d = two_scales(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d), _cvtsh_ss(w[b + 1].d) * _cvtsh_ss(x[b + 1].d));
        acc = _mm512_fmadd_ps(d, dot_i8_64(q, y), acc);
    }
    float s = _mm512_reduce_add_ps(acc);
    if (b < nb)
        s += dot_q4_0_avx2(w + b, x + b, QK4_0);
    return s;
}
#endif

/* ---------------- dispatch ---------------- */

float kern_dot_f32(const float *a, const float *b, int n) {
#ifdef KERN_X86
    kern_level l = kern_get_level();
    if (l == KERN_AVX512)
        return dot_f32_avx512(a, b, n);
    if (l == KERN_AVX2)
        return dot_f32_avx2(a, b, n);
#endif
    return dot_f32_scalar(a, b, n);
}

void kern_axpy_f32(float *y, float a, const float *x, int n) {
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
}

void kern_act_prepare(ggml_type t, const float *x, void *out, int n) {
    float *o = out;
    switch (t) {
    case GGML_TYPE_F16: /* rounded through F16, kept as F32 so kernels convert only weights */
        for (int i = 0; i < n; i++)
            o[i] = ggml_fp16_to_fp32(ggml_fp32_to_fp16(x[i]));
        break;
    case GGML_TYPE_BF16:
        for (int i = 0; i < n; i++)
            o[i] = ggml_bf16_to_fp32(ggml_fp32_to_bf16(x[i]));
        break;
    case GGML_TYPE_Q8_0: case GGML_TYPE_Q4_0: quantize_row_q8_0(x, out, n); break;
    default: memcpy(out, x, (size_t)n * sizeof(float)); break;
    }
}

float kern_dot(ggml_type t, const void *w, const void *a, int n, float *scratch) {
    kern_level l = kern_get_level();
    (void)l;
    switch (t) {
    case GGML_TYPE_F32:
        return kern_dot_f32(w, a, n);
    case GGML_TYPE_F16:
#ifdef KERN_X86
        if (l == KERN_AVX512)
            return dot_f16_avx512(w, a, n);
        if (l == KERN_AVX2)
            return dot_f16_avx2(w, a, n);
#endif
        return dot_f16_scalar(w, a, n);
    case GGML_TYPE_BF16:
#ifdef KERN_X86
        if (l >= KERN_AVX2)
            return dot_bf16_avx2(w, a, n);
#endif
        return dot_bf16_scalar(w, a, n);
    case GGML_TYPE_Q8_0:
#ifdef KERN_X86
        if (l == KERN_AVX512)
            return dot_q8_0_avx512(w, a, n);
        if (l >= KERN_AVX2)
            return dot_q8_0_avx2(w, a, n);
#endif
        return dot_q8_0_scalar(w, a, n);
    case GGML_TYPE_Q4_0:
#ifdef KERN_X86
        if (l == KERN_AVX512)
            return dot_q4_0_avx512(w, a, n);
        if (l >= KERN_AVX2)
            return dot_q4_0_avx2(w, a, n);
#endif
        return dot_q4_0_scalar(w, a, n);
    default:
        if (!ggml_dequantize_row(t, w, scratch, n))
            return NAN;
        return kern_dot_f32(scratch, a, n);
    }
}

void kern_matmul(ggml_type t, const void *W, size_t row_bytes, int n, int r0, int r1,
                 const void *act, size_t act_bytes, int nb, float *out, int ldo, float *scratch) {
    const unsigned char *wb = W;
    const unsigned char *ab = act;
    bool deq = !(t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16 ||
                 t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0);
    for (int r = r0; r < r1; r++) {
        const void *row = wb + (size_t)r * row_bytes;
        if (deq) {
            ggml_dequantize_row(t, row, scratch, n);
            for (int b = 0; b < nb; b++)
                out[(size_t)b * ldo + r] = kern_dot_f32(scratch, (const float *)(ab + (size_t)b * act_bytes), n);
            continue;
        }
        int b = 0;
#ifdef KERN_X86
        kern_level l = kern_get_level();
        /* Batched rows must equal one-row results bit for bit (drafted greedy output is
         * the serial one), so the four-row kernels are used only where they repeat the
         * one-row kernel's arithmetic: F16 at AVX-512, Q8_0/Q4_0 at AVX2. */
        bool four = (t == GGML_TYPE_F16 && l == KERN_AVX512) ||
                    ((t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0) && l == KERN_AVX2);
        for (; four && b + 4 <= nb; b += 4) {
            const void *xs[4];
            float o[4];
            for (int k = 0; k < 4; k++)
                xs[k] = ab + (size_t)(b + k) * act_bytes;
            if (t == GGML_TYPE_F16)
                dot4_f16_avx512(row, (const float *const *)xs, n, o);
            else if (t == GGML_TYPE_Q8_0)
                dot4_q8_0_avx2(row, (const block_q8_0 *const *)xs, n, o);
            else
                dot4_q4_0_avx2(row, (const block_q8_0 *const *)xs, n, o);
            for (int k = 0; k < 4; k++)
                out[(size_t)(b + k) * ldo + r] = o[k];
        }
#endif
        for (; b < nb; b++)
            out[(size_t)b * ldo + r] = kern_dot(t, row, ab + (size_t)b * act_bytes, n, scratch);
    }
}
