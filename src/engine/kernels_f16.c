/* kernels_f16.c - F16 weight kernels (kernels_f16.h states their arithmetic): the scalar
 * definition (16 or 8 lanes), AVX2/F16C (8 lanes) and AVX-512 (16) versions of the one-row
 * dot, a register-tiled product for batches (each converted weight vector reused over
 * several tokens), a GEMV for one token (several rows per pass; prefetched at AVX-512),
 * attention's many-keys kernels (a block's keys across the lanes), and the polynomial exp
 * that softmax and SwiGLU share. */
#include "engine/kernels_f16.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define KF_X86 1
#endif

/* ---------------- the definition (scalar) ---------------- */

/* The fixed reduction of 8 lane sums. */
static float reduce8(const float *l) {
    float t[4];
    for (int j = 0; j < 4; j++)
        t[j] = l[j] + l[j + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

/* The fixed reduction of 16 lane sums: pairs j, j + 8, then the 8-lane tree. */
static float reduce16(const float *l) {
    float s[8];
    for (int j = 0; j < 8; j++)
        s[j] = l[j] + l[j + 8];
    return reduce8(s);
}

/* The elements [i, n) after the lanes' part. */
static float dot_tail(float s, const ggml_half *w, const float *x, int i, int n) {
    for (; i < n; i++)
        s = fmaf(ggml_fp16_to_fp32(w[i]), x[i], s);
    return s;
}

/* The definition with L lanes (16 or 8). */
static float dot_lanes(const ggml_half *w, const float *x, int n, int L) {
    float l[16] = {0};
    int nl = n / L * L;
    for (int i = 0; i < nl; i += L)
        for (int j = 0; j < L; j++)
            l[j] = fmaf(ggml_fp16_to_fp32(w[i + j]), x[i + j], l[j]);
    return dot_tail(L == 16 ? reduce16(l) : reduce8(l), w, x, nl, n);
}

static float dot_scalar(const ggml_half *w, const float *x, int n) { return dot_lanes(w, x, n, 16); }

/* Element d of the key at position t in a head's blocked keys (kernels_f16.h). */
static size_t key_index(int t, int d, int hd) {
    return (size_t)(t / KERN_KEY_BLOCK) * KERN_KEY_BLOCK * (size_t)hd + (size_t)d * KERN_KEY_BLOCK + (size_t)(t % KERN_KEY_BLOCK);
}

static void scores_scalar(const ggml_half *keys, const float *q, int hd, int n, float scale, float *out) {
    for (int t = 0; t < n; t++) {
        float s = 0.0f;
        for (int d = 0; d < hd; d++)
            s = fmaf(q[d], ggml_fp16_to_fp32(keys[key_index(t, d, hd)]), s);
        out[t] = s * scale;
    }
}

static void values_scalar(int nh, const float *w, size_t ws, const ggml_half *v, size_t vs, int hd, const int *n,
                          float *out, size_t os, float *part) {
    for (int h = 0; h < nh; h++) {
        float *o = out + (size_t)h * os;
        for (int r = 0; r == 0 || r < kern_att_ranges(n[h]); r++) {
            float *p = r == 0 ? o : part;
            memset(p, 0, (size_t)hd * sizeof(float));
            for (int t = r * KERN_ATT_RANGE; t < r * KERN_ATT_RANGE + kern_att_range_keys(n[h], r); t++) {
                float a = w[(size_t)h * ws + t];
                const ggml_half *vt = v + (size_t)t * vs;
                for (int i = 0; i < hd; i++)
                    p[i] = fmaf(a, ggml_fp16_to_fp32(vt[i]), p[i]);
            }
            for (int i = 0; r > 0 && i < hd; i++)
                o[i] += p[i];
        }
    }
}

/* e^x for softmax (x <= 0 there): x clamped at -87, n = nearest(x * log2 e), r = x - n ln 2 in
 * two steps, Cephes' degree-5 polynomial, times 2^n. The SIMD versions take the same
 * IEEE steps in the same order, so every level gives the same bits. */
#define EXP_LO -87.0f
#define EXP_LOG2E 1.44269504088896341f
#define EXP_LN2_HI 0.693359375f
#define EXP_LN2_LO -2.12194440e-4f
static const float exp_p[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

static float exp_scalar(float x) {
    if (x != x)
        return x;
    x = EXP_LO > x ? EXP_LO : x;
    float n = nearbyintf(x * EXP_LOG2E);
    float r = fmaf(n, -EXP_LN2_HI, x);
    r = fmaf(n, -EXP_LN2_LO, r);
    float y = exp_p[0];
    for (int k = 1; k < 6; k++)
        y = fmaf(y, r, exp_p[k]);
    y = fmaf(y, r * r, r) + 1.0f;
    union { uint32_t u; float f; } two = {.u = (uint32_t)((int32_t)n + 127) << 23};
    return y * two.f;
}

#ifdef KF_X86
#define T_AVX2 __attribute__((target("avx2,fma,f16c")))
#define T_AVX512 __attribute__((target("avx512f,avx512bw,avx2,fma,f16c")))
#define INL inline __attribute__((always_inline))
#define F16Y(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define F16Z(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
/* the longest head the shared-key paths take (their key blocks are on the stack) */
#define KV_HD_MAX 256
/* floats of values a block of keys holds in the shared value sums: 16 KB */
#define VF_FLOATS 4096
/* how far ahead the one-token kernels prefetch each row, in elements */
#define PF_AHEAD 512
/* how far ahead the packed one-token kernel prefetches each group, in halves (64 steps of 16
 * rows, 2 KB a group); see pgemv_avx512_g */
#define PF_PACKED 1024

/* ---------------- AVX2 / FMA / F16C ---------------- */

/* The 8-lane tree on one ymm. */
T_AVX2 static INL float reduce8_avx2(__m256 v) {
    __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    t = _mm_add_ps(t, _mm_movehl_ps(t, t));
    t = _mm_add_ss(t, _mm_movehdup_ps(t));
    return _mm_cvtss_f32(t);
}

/* The 16-lane tree on two ymm (lo: lanes j < 8, hi: j >= 8). */
T_AVX2 static INL float reduce_avx2(__m256 lo, __m256 hi) { return reduce8_avx2(_mm256_add_ps(lo, hi)); }

/* The 8-lane tree on four ymm at once: lane r of the result is reduce8_avx2(v[r]) (the same
 * additions in the same order, four rows side by side). */
T_AVX2 static INL __m128 reduce8x4_avx2(const __m256 *v) {
    __m128 t[4];
    for (int r = 0; r < 4; r++) /* t_j = l_j + l_(j+4) */
        t[r] = _mm_add_ps(_mm256_castps256_ps128(v[r]), _mm256_extractf128_ps(v[r], 1));
    /* t_0 + t_2 and t_1 + t_3 of rows 0, 1 (then 2, 3) side by side */
    __m128 u01 = _mm_add_ps(_mm_movelh_ps(t[0], t[1]), _mm_movehl_ps(t[1], t[0]));
    __m128 u23 = _mm_add_ps(_mm_movelh_ps(t[2], t[3]), _mm_movehl_ps(t[3], t[2]));
    return _mm_add_ps(_mm_shuffle_ps(u01, u23, _MM_SHUFFLE(2, 0, 2, 0)), _mm_shuffle_ps(u01, u23, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* A tile's R rows' sums for one token (R = 4 or 2; lanes: 8-lane sums of rows 0..R-1) into
 * o[0..R), the elements past the lanes' part (from i) added one at a time. */
T_AVX2 static INL void store_rows(__m128 s, int R, const ggml_half *const *w, const float *x, int i, int n,
                                  float *o) {
    if (i == n) {
        if (R == 4)
            _mm_storeu_ps(o, s);
        else
            _mm_storel_pi((__m64 *)o, s);
        return;
    }
    float v[4];
    _mm_storeu_ps(v, s);
    for (int r = 0; r < R; r++)
        o[r] = dot_tail(v[r], w[r], x, i, n);
}

/* 8 weights of a row that decode streams from memory, as floats: loaded by an instruction of
 * their own (the empty asm keeps the compiler from folding the load into the conversion, as
 * in F16Y): on a first-generation EPYC F16 decode at 2 threads ran 4-51 % faster so (13
 * paired runs, median 18 %). */
T_AVX2 static INL __m256 f16y_stream(const ggml_half *p) {
    __m128i h = _mm_loadu_si128((const __m128i *)p);
    __asm__("" : "+x"(h));
    return _mm256_cvtph_ps(h);
}

/* The row kernels at AVX2 take the 8-lane order: one ymm a (row, token). */
T_AVX2 static float dot_avx2(const ggml_half *w, const float *x, int n) {
    __m256 a = _mm256_setzero_ps();
    int n8 = n & ~7;
    for (int i = 0; i < n8; i += 8)
        a = _mm256_fmadd_ps(F16Y(w + i), _mm256_loadu_ps(x + i), a);
    return dot_tail(reduce8_avx2(a), w, x, n8, n);
}

/* 2 rows x T tokens (T <= 6): out[t * ldo + r]. Two converted weight vectors stay in
 * registers and each multiply-add reads its activation from memory: two conversions per
 * twelve multiply-adds. */
T_AVX2 static INL void tile2_avx2(const ggml_half *const *w, const float *const *x, int T, int n, float *out, int ldo) {
    __m256 acc[6][2]; /* [token][row] */
#pragma GCC unroll 6
    for (int t = 0; t < T; t++)
        acc[t][0] = acc[t][1] = _mm256_setzero_ps();
    int n8 = n & ~7;
    for (int i = 0; i < n8; i += 8) {
        __m256 w0 = F16Y(w[0] + i), w1 = F16Y(w[1] + i);
#pragma GCC unroll 6
        for (int t = 0; t < T; t++) {
            __m256 xv = _mm256_loadu_ps(x[t] + i);
            acc[t][0] = _mm256_fmadd_ps(w0, xv, acc[t][0]);
            acc[t][1] = _mm256_fmadd_ps(w1, xv, acc[t][1]);
        }
    }
    for (int t = 0; t < T; t += 2) { /* two tokens' two rows through one four-lane tree */
        int u = t + 1 < T ? t + 1 : t;
        __m256 v[4] = {acc[t][0], acc[t][1], acc[u][0], acc[u][1]};
        __m128 s = reduce8x4_avx2(v);
        store_rows(s, 2, w, x[t], n8, n, out + (size_t)t * ldo);
        if (u != t)
            store_rows(_mm_movehl_ps(s, s), 2, w, x[u], n8, n, out + (size_t)u * ldo);
    }
}

/* Prefetches the line PF_AHEAD elements on from element i of each of a pass's eight rows
 * (n elements); past a row's end, into the same row of the next pass (`next` elements on). */
static INL void prefetch_rows(const ggml_half *const *w, int i, int n, size_t next) {
    size_t ahead = (size_t)i + PF_AHEAD + ((size_t)i + PF_AHEAD >= (size_t)n ? next : 0);
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++)
        kern_prefetch_line(w[r] + ahead);
}
/* One token, eight rows per pass, each row prefetched PF_AHEAD elements ahead, a line at a
 * time; past its end, into the same row of the next pass (`next` elements further on). It
 * had none (a prefetch cost ~5 % of decode on a first-generation EPYC; this one is not
 * measured there): on a Zen 5 EPYC at AVX2, 2 threads, F16 1B decode 26.7 -> 32.8 tok/s. */
T_AVX2 static void gemv8_avx2(const ggml_half *const *w, size_t next, const float *x, int n, float *out) {
    __m256 acc[8];
    for (int r = 0; r < 8; r++)
        acc[r] = _mm256_setzero_ps();
    int n8 = n & ~7;
    for (int i = 0; i < n8; i += 8) {
        if (!(i & 31))
            prefetch_rows(w, i, n, next);
        __m256 xv = _mm256_loadu_ps(x + i);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            acc[r] = _mm256_fmadd_ps(f16y_stream(w[r] + i), xv, acc[r]);
    }
    for (int r = 0; r < 8; r++)
        out[r] = dot_tail(reduce8_avx2(acc[r]), w[r], x, n8, n);
}

/* ---------------- AVX-512: 16 lanes in one zmm ---------------- */

T_AVX512 static INL float reduce_avx512(__m512 v) {
    return reduce_avx2(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

T_AVX512 static float dot_avx512(const ggml_half *w, const float *x, int n) {
    __m512 a = _mm512_setzero_ps();
    int n16 = n & ~15;
    for (int i = 0; i < n16; i += 16)
        a = _mm512_fmadd_ps(F16Z(w + i), _mm512_loadu_ps(x + i), a);
    return dot_tail(reduce_avx512(a), w, x, n16, n);
}

/* 4 rows x T tokens (T <= 6): out[t * ldo + r]. */
T_AVX512 static INL void tile_avx512(const ggml_half *const *w, const float *const *x, int T, int n, float *out,
                                      int ldo) {
    enum { R = 4 };
    __m512 acc[6][4]; /* [token][row] */
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 6
        for (int t = 0; t < T; t++)
            acc[t][r] = _mm512_setzero_ps();
    int n16 = n & ~15;
    for (int i = 0; i < n16; i += 16) {
        __m512 wv[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            wv[r] = F16Z(w[r] + i);
#pragma GCC unroll 6
        for (int t = 0; t < T; t++) {
            __m512 xv = _mm512_loadu_ps(x[t] + i);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++)
                acc[t][r] = _mm512_fmadd_ps(wv[r], xv, acc[t][r]);
        }
    }
    for (int t = 0; t < T; t++) {
        __m256 s[4]; /* the 16-lane tree's first step, s_j = l_j + l_(j+8), then the 8-lane tree */
        for (int r = 0; r < R; r++)
            s[r] = _mm256_add_ps(_mm512_castps512_ps256(acc[t][r]),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[t][r]), 1)));
        store_rows(reduce8x4_avx2(s), 4, w, x[t], n16, n, out + (size_t)t * ldo);
    }
}

/* One token, eight rows per pass, prefetched as gemv8_avx2's (into the next row, as
 * before: 30.8 against 32.8 tok/s, the case above). */
T_AVX512 static void gemv8_avx512(const ggml_half *const *w, size_t next, const float *x, int n, float *out) {
    __m512 acc[8];
    for (int r = 0; r < 8; r++)
        acc[r] = _mm512_setzero_ps();
    int n16 = n & ~15;
    for (int i = 0; i < n16; i += 16) {
        __m512 xv = _mm512_loadu_ps(x + i);
        if (!(i & 16))
            prefetch_rows(w, i, n, next);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            acc[r] = _mm512_fmadd_ps(F16Z(w[r] + i), xv, acc[r]);
    }
    for (int r = 0; r < 8; r++)
        out[r] = dot_tail(reduce_avx512(acc[r]), w[r], x, n16, n);
}

/* The tile kernels at their fixed sizes (a switch, so each instance has constant loops):
 * out[t * ldo + r]; rows left over from the tile's rows one at a time. */
T_AVX2 static void tile2_avx2_any(const ggml_half *const *w, const float *const *x, int R, int T, int n, float *out,
                                  int ldo) {
    if (R != 2) { /* a row left over from the pairs */
        for (int t = 0; t < T; t++)
            out[(size_t)t * ldo] = dot_avx2(w[0], x[t], n);
        return;
    }
    switch (T) {
    case 1: tile2_avx2(w, x, 1, n, out, ldo); break;
    case 2: tile2_avx2(w, x, 2, n, out, ldo); break;
    case 3: tile2_avx2(w, x, 3, n, out, ldo); break;
    case 4: tile2_avx2(w, x, 4, n, out, ldo); break;
    case 5: tile2_avx2(w, x, 5, n, out, ldo); break;
    default: tile2_avx2(w, x, 6, n, out, ldo); break;
    }
}

T_AVX512 static void tile_avx512_any(const ggml_half *const *w, const float *const *x, int R, int T, int n,
                                     float *out, int ldo) {
    if (R != 4) { /* rows left over from the groups of four */
        for (int r = 0; r < R; r++)
            for (int t = 0; t < T; t++)
                out[(size_t)t * ldo + r] = dot_avx512(w[r], x[t], n);
        return;
    }
    switch (T) {
    case 1: tile_avx512(w, x, 1, n, out, ldo); break;
    case 2: tile_avx512(w, x, 2, n, out, ldo); break;
    case 3: tile_avx512(w, x, 3, n, out, ldo); break;
    case 4: tile_avx512(w, x, 4, n, out, ldo); break;
    case 5: tile_avx512(w, x, 5, n, out, ldo); break;
    default: tile_avx512(w, x, 6, n, out, ldo); break;
    }
}
#endif

/* ---------------- dispatch ---------------- */

int kern_f16_lanes(void) {
    kern_level l = kern_get_level();
    return l >= KERN_AVX2 && l < KERN_AVX512 ? 8 : 16; /* AVX-VNNI's CPUs run the AVX2 code */
}

float kern_dot_f16_lanes(const ggml_half *w, const float *x, int n, int lanes) { return dot_lanes(w, x, n, lanes); }

float kern_dot_f16(const ggml_half *w, const float *x, int n) {
    switch (kern_get_level()) {
#ifdef KF_X86
    case KERN_SCALAR: break;
    case KERN_AVX2: case KERN_AVXVNNI: return dot_avx2(w, x, n);
    default: return dot_avx512(w, x, n);
#else
    default: break;
#endif
    }
    return dot_scalar(w, x, n);
}

/* One token: rows in passes of 8, the rest one at a time. */
static void gemv(kern_level l, const unsigned char *W, size_t rb, int n, int r0, int r1, const float *x, float *out) {
    int r = r0;
#ifdef KF_X86
    size_t next = 8 * rb / sizeof(ggml_half) - (size_t)n; /* a row's end to its row in the next pass */
    for (; l != KERN_SCALAR && r + 8 <= r1; r += 8) {
        const ggml_half *w[8];
        for (int i = 0; i < 8; i++)
            w[i] = (const ggml_half *)(W + (size_t)(r + i) * rb);
        if (l >= KERN_AVX512)
            gemv8_avx512(w, next, x, n, out + r);
        else
            gemv8_avx2(w, next, x, n, out + r);
    }
#else
    (void)l;
#endif
    for (; r < r1; r++)
        out[r] = kern_dot_f16((const ggml_half *)(W + (size_t)r * rb), x, n);
}

/* Tile i's tokens, where nb tokens go in the fewest tiles of at most tm, sized evenly: the
 * first nb % tiles of them one token more. */
static int token_tile(int nb, int tm, int i) {
    int tiles = (nb + tm - 1) / tm;
    return nb / tiles + (i < nb % tiles);
}

/* A batch through the level's tiles (from AVX2 on): rows in blocks of 16 (the block's
 * weights stay in cache while the tokens pass; a token tile's activations are read once for
 * 16 rows instead of for each four: AVX-512 at 4-row blocks, F16 pp128 at 2 threads on a Zen 5
 * EPYC 146-152 tok/s, at 16 rows 165-166), tokens in tiles of at most 6 (token_tile), each
 * tile over the block's rows RM at a time. */
static void matmul_tiles(kern_level l, const unsigned char *wb, size_t row_bytes, int n, int r0, int r1,
                         const unsigned char *ab, size_t act_bytes, int nb, float *out, int ldo) {
#ifdef KF_X86
    enum { RB = 16, TM = 6 };
    int RM = l >= KERN_AVX512 ? 4 : 2;
    for (int rb = r0; rb < r1; rb += RB) {
        int re = r1 - rb < RB ? r1 : rb + RB;
        for (int b = 0, i = 0; b < nb; i++) {
            int T = token_tile(nb, TM, i);
            const float *x[TM];
            for (int t = 0; t < T; t++)
                x[t] = (const float *)(ab + (size_t)(b + t) * act_bytes);
            for (int r = rb; r < re; r += RM) {
                int R = re - r < RM ? re - r : RM;
                const ggml_half *w[4];
                for (int j = 0; j < R; j++)
                    w[j] = (const ggml_half *)(wb + (size_t)(r + j) * row_bytes);
                float *o = out + (size_t)b * ldo + r; /* the tile writes o[t * ldo + j] */
                if (l >= KERN_AVX512)
                    tile_avx512_any(w, x, R, T, n, o, ldo);
                else
                    tile2_avx2_any(w, x, R, T, n, o, ldo);
            }
            b += T;
        }
    }
#else
    (void)l, (void)wb, (void)row_bytes, (void)n, (void)r0, (void)r1, (void)ab, (void)act_bytes, (void)nb, (void)out,
        (void)ldo;
#endif
}

void kern_matmul_f16(const ggml_half *W, size_t row_bytes, int n, int r0, int r1, const float *act,
                     size_t act_bytes, int nb, float *out, int ldo) {
    const unsigned char *wb = (const unsigned char *)W, *ab = (const unsigned char *)act;
    kern_level l = kern_get_level();
    if (nb == 1 || l == KERN_SCALAR) {
        for (int b = 0; b < nb; b++)
            gemv(l, wb, row_bytes, n, r0, r1, (const float *)(ab + (size_t)b * act_bytes), out + (size_t)b * ldo);
        return;
    }
    matmul_tiles(l, wb, row_bytes, n, r0, r1, ab, act_bytes, nb, out, ldo);
}

/* ---------------- packed matrices (kernels_f16.h) ---------------- */

/* Halves from one group's start to the next: its 16 rows' n elements and the pad. */
static size_t group_halves(int n) { return (size_t)16 * n + KERN_F16_GROUP_PAD; }

size_t kern_f16_pack_size(int n_in, int n_out) {
    return (size_t)((n_out + 15) / 16) * group_halves(n_in) * sizeof(ggml_half);
}

void kern_f16_pack(const void *src, size_t row_bytes, int n_in, int n_out, int g0, int g1, void *dst) {
    for (int g = g0; g < g1; g++) {
        ggml_half *p = (ggml_half *)dst + (size_t)g * group_halves(n_in);
        int rows = n_out - g * 16 < 16 ? n_out - g * 16 : 16;
        const ggml_half *row[16];
        memset(p, 0, group_halves(n_in) * sizeof(ggml_half)); /* padding rows and the pad */
        for (int i = 0; i < rows; i++)
            row[i] = (const ggml_half *)((const unsigned char *)src + (size_t)(g * 16 + i) * row_bytes);
        /* element by element, the 16 rows' halves side by side: the stores run in order */
        for (int k = 0; k < n_in; k++)
            for (int i = 0; i < rows; i++)
                p[(size_t)k * 16 + i] = row[i][k];
    }
}

/* The definition: each (row, token) of a group, one fused multiply-add per element. */
static void packed_scalar(const ggml_half *p, int n, const float *const *x, int T, float *out, int ldo) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < 16; i++) {
            float s = 0;
            for (int k = 0; k < n; k++)
                s = fmaf(ggml_fp16_to_fp32(p[(size_t)k * 16 + i]), x[t][k], s);
            out[(size_t)t * ldo + i] = s;
        }
}

#ifdef KF_X86
/* RG groups (1 or 2) x T tokens (T <= 12) at AVX-512: per element each group's 16 weights are
 * converted once into one zmm, and each token's activation, broadcast, multiplies them all:
 * two conversions per 24 multiply-adds, and a token's activations read once for 32 rows.
 * The unpacked 4 x 6 tile makes four conversions per 24 and reads them once for 4 rows. One
 * Zen 5 core, 120 tokens, GFLOP/s, this tile / the unpacked one: 512 x 8192 197-215 / 159-178,
 * 2048 x 2048 204 / 156-157, 8192 x 2048 194 / 151; a 16-core Xeon's core 79-126 / 67-109. */
T_AVX512 static INL void ptile_avx512(const ggml_half *p, size_t gh, int RG, const float *const *x, int T, int n,
                                      float *out, int ldo) {
    __m512 acc[12][2];
#pragma GCC unroll 12
    for (int t = 0; t < T; t++)
        acc[t][0] = acc[t][1] = _mm512_setzero_ps();
    for (int k = 0; k < n; k++) {
        __m512 w0 = F16Z(p + (size_t)k * 16), w1 = RG > 1 ? F16Z(p + gh + (size_t)k * 16) : w0;
#pragma GCC unroll 12
        for (int t = 0; t < T; t++) {
            __m512 xb = _mm512_set1_ps(x[t][k]);
            acc[t][0] = _mm512_fmadd_ps(w0, xb, acc[t][0]);
            if (RG > 1)
                acc[t][1] = _mm512_fmadd_ps(w1, xb, acc[t][1]);
        }
    }
    for (int t = 0; t < T; t++)
        for (int r = 0; r < RG; r++)
            _mm512_storeu_ps(out + (size_t)t * ldo + 16 * r, acc[t][r]);
}

#define PTILE512(T)                                                                                               \
    case T: RG == 2 ? ptile_avx512(p, gh, 2, x, T, n, out, ldo) : ptile_avx512(p, gh, 1, x, T, n, out, ldo); break;
T_AVX512 static void ptile_avx512_any(const ggml_half *p, size_t gh, int RG, const float *const *x, int T, int n,
                                      float *out, int ldo) {
    switch (T) {
        PTILE512(1) PTILE512(2) PTILE512(3) PTILE512(4) PTILE512(5) PTILE512(6)
        PTILE512(7) PTILE512(8) PTILE512(9) PTILE512(10) PTILE512(11) default: PTILE512(12)
    }
}

/* One group x T tokens (T <= 6) at AVX2: the group's 16 weights of an element in two ymm. */
T_AVX2 static INL void ptile_avx2(const ggml_half *p, const float *const *x, int T, int n, float *out, int ldo) {
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int t = 0; t < T; t++)
        acc[t][0] = acc[t][1] = _mm256_setzero_ps();
    for (int k = 0; k < n; k++) {
        __m256 w0 = F16Y(p + (size_t)k * 16), w1 = F16Y(p + (size_t)k * 16 + 8);
#pragma GCC unroll 6
        for (int t = 0; t < T; t++) {
            __m256 xb = _mm256_set1_ps(x[t][k]);
            acc[t][0] = _mm256_fmadd_ps(w0, xb, acc[t][0]);
            acc[t][1] = _mm256_fmadd_ps(w1, xb, acc[t][1]);
        }
    }
    for (int t = 0; t < T; t++) {
        _mm256_storeu_ps(out + (size_t)t * ldo, acc[t][0]);
        _mm256_storeu_ps(out + (size_t)t * ldo + 8, acc[t][1]);
    }
}

T_AVX2 static void ptile_avx2_any(const ggml_half *p, const float *const *x, int T, int n, float *out, int ldo) {
    switch (T) {
    case 1: ptile_avx2(p, x, 1, n, out, ldo); break;
    case 2: ptile_avx2(p, x, 2, n, out, ldo); break;
    case 3: ptile_avx2(p, x, 3, n, out, ldo); break;
    case 4: ptile_avx2(p, x, 4, n, out, ldo); break;
    case 5: ptile_avx2(p, x, 5, n, out, ldo); break;
    default: ptile_avx2(p, x, 6, n, out, ldo); break;
    }
}

/* One token, G groups a pass (up to 8 at AVX-512, one zmm each; up to 4 at AVX2, two ymm
 * each): up to 8 multiply-add chains. Each group is prefetched PF_PACKED halves ahead, past
 * its end into the same group of the next pass (a line every other element: prefetching
 * every fourth left half the lines to the hardware, 17-24 GB/s against 30-36 at one Zen 5
 * thread). PF_PACKED 1024 rather than 512: on the 16-core Xeon, one thread's 64-row chunks
 * read 1.03 times the unpacked kernel's rate against 1.01, 32-row chunks 0.92 against 0.79
 * (16 threads 1.00 against 0.90); without software prefetch 0.85 and 0.69. */
T_AVX512 static INL void pgemv_avx512_g(const ggml_half *p, size_t gh, int G, const float *x, int n, float *out) {
    __m512 acc[8];
    for (int i = 0; i < G; i++)
        acc[i] = _mm512_setzero_ps();
    size_t end = (size_t)16 * n, next = G * gh - end; /* a group's end to its group in the next pass */
    for (int k = 0; k < n; k++) {
        __m512 xb = _mm512_set1_ps(x[k]);
        size_t at = (size_t)k * 16, ahead = at + PF_PACKED;
        if (!(k & 1))
            ahead += ahead >= end ? next : 0;
#pragma GCC unroll 8
        for (int i = 0; i < G; i++) {
            if (!(k & 1))
                kern_prefetch_line(p + i * gh + ahead);
            acc[i] = _mm512_fmadd_ps(F16Z(p + i * gh + at), xb, acc[i]);
        }
    }
    for (int i = 0; i < G; i++)
        _mm512_storeu_ps(out + 16 * i, acc[i]);
}

T_AVX2 static INL void pgemv_avx2_g(const ggml_half *p, size_t gh, int G, const float *x, int n, float *out) {
    __m256 acc[8];
    for (int i = 0; i < 2 * G; i++)
        acc[i] = _mm256_setzero_ps();
    size_t end = (size_t)16 * n, next = G * gh - end;
    for (int k = 0; k < n; k++) {
        __m256 xb = _mm256_set1_ps(x[k]);
        size_t at = (size_t)k * 16, ahead = at + PF_PACKED;
        if (!(k & 1))
            ahead += ahead >= end ? next : 0;
#pragma GCC unroll 8
        for (int i = 0; i < 2 * G; i++) {
            const ggml_half *g = p + (i / 2) * gh;
            if (!(k & 1) && !(i & 1))
                kern_prefetch_line(g + ahead);
            acc[i] = _mm256_fmadd_ps(f16y_stream(g + at + (i & 1) * 8), xb, acc[i]);
        }
    }
    for (int i = 0; i < 2 * G; i++)
        _mm256_storeu_ps(out + 8 * i, acc[i]);
}

/* At a fixed G (a switch, so each instance has constant loops); G > 8 (4 at AVX2) takes 8 (4). */
T_AVX512 static void pgemv_avx512(const ggml_half *p, size_t gh, int G, const float *x, int n, float *out) {
    switch (G) {
    case 1: pgemv_avx512_g(p, gh, 1, x, n, out); break;
    case 2: pgemv_avx512_g(p, gh, 2, x, n, out); break;
    case 3: pgemv_avx512_g(p, gh, 3, x, n, out); break;
    case 4: pgemv_avx512_g(p, gh, 4, x, n, out); break;
    case 5: pgemv_avx512_g(p, gh, 5, x, n, out); break;
    case 6: pgemv_avx512_g(p, gh, 6, x, n, out); break;
    case 7: pgemv_avx512_g(p, gh, 7, x, n, out); break;
    default: pgemv_avx512_g(p, gh, 8, x, n, out); break;
    }
}

T_AVX2 static void pgemv_avx2(const ggml_half *p, size_t gh, int G, const float *x, int n, float *out) {
    switch (G) {
    case 1: pgemv_avx2_g(p, gh, 1, x, n, out); break;
    case 2: pgemv_avx2_g(p, gh, 2, x, n, out); break;
    case 3: pgemv_avx2_g(p, gh, 3, x, n, out); break;
    default: pgemv_avx2_g(p, gh, 4, x, n, out); break;
    }
}
#endif

/* RG groups from p (the second gh halves on) x T tokens through the level's tile. */
static void ptile(kern_level l, const ggml_half *p, size_t gh, int RG, const float *const *x, int T, int n, float *out,
                  int ldo) {
#ifdef KF_X86
    if (l >= KERN_AVX512) {
        ptile_avx512_any(p, gh, RG, x, T, n, out, ldo);
        return;
    }
    if (l >= KERN_AVX2) {
        for (int r = 0; r < RG; r++)
            ptile_avx2_any(p + r * gh, x, T, n, out + 16 * r, ldo);
        return;
    }
#endif
    for (int r = 0; r < RG; r++)
        packed_scalar(p + r * gh, n, x, T, out + 16 * r, ldo);
}

/* Groups two at a time at AVX-512, one otherwise; for each, the tokens in tiles of at most TM
 * (token_tile), while the groups' weights stay in L2. A
 * group with fewer than 16 rows (the last) goes through a buffer, so only its rows are
 * written. One token from AVX2 on: the full groups in passes of pgemv, then the last. */
void kern_f16_gemm_packed(const ggml_half *P, int n_in, int n_out, int g0, int g1, const float *act,
                          size_t act_stride, int nb, float *out, int ldo) {
    kern_level l = kern_get_level();
    size_t gh = group_halves(n_in);
    int g = g0, full = n_out / 16 < g1 ? n_out / 16 : g1; /* groups [g0, full) have 16 rows */
#ifdef KF_X86
    if (nb == 1 && l >= KERN_AVX2) { /* decode */
        int most = l >= KERN_AVX512 ? 8 : 4;
        for (int G; (G = full - g < most ? full - g : most) > 0; g += G)
            if (l >= KERN_AVX512)
                pgemv_avx512(P + (size_t)g * gh, gh, G, act, n_in, out + (size_t)g * 16);
            else
                pgemv_avx2(P + (size_t)g * gh, gh, G, act, n_in, out + (size_t)g * 16);
    }
#endif
    int TM = l >= KERN_AVX512 ? 12 : 6, RGM = l >= KERN_AVX512 ? 2 : 1;
    for (int RG; g < g1; g += RG) {
        RG = g + RGM <= full ? RGM : 1; /* one where two are not left */
        for (int b = 0, i = 0; b < nb; i++) {
            int T = token_tile(nb, TM, i);
            const float *x[12];
            for (int t = 0; t < T; t++)
                x[t] = (const float *)((const unsigned char *)act + (size_t)(b + t) * act_stride);
            const ggml_half *p = P + (size_t)g * gh;
            if (g < full) {
                ptile(l, p, gh, RG, x, T, n_in, out + (size_t)b * ldo + g * 16, ldo);
            } else { /* the last group, rows [g * 16, n_out) */
                float buf[12 * 16];
                ptile(l, p, gh, 1, x, T, n_in, buf, 16);
                for (int t = 0; t < T; t++)
                    memcpy(out + (size_t)(b + t) * ldo + g * 16, buf + t * 16, (size_t)(n_out - g * 16) * sizeof(float));
            }
            b += T;
        }
    }
}

/* ---------------- attention: many keys per pass ---------------- */

#ifdef KF_X86
/* Scores of H queries (H <= 8) for B blocks of keys (H * B <= 16; kf: the blocks as floats, a
 * block's element d for its 16 keys at d * 16): one accumulator a query and block, each
 * lane one key's chain of multiply-adds in element order. m keys of the blocks are stored. */
T_AVX512 static INL void scores_tile_avx512(int H, int B, const float *kf, const float *q, size_t qs, int hd, float scale,
                                            int m, float *out, size_t os) {
    __m512 a[8][4];
#pragma GCC unroll 8
    for (int h = 0; h < H; h++)
#pragma GCC unroll 4
        for (int b = 0; b < B; b++)
            a[h][b] = _mm512_setzero_ps();
    for (int d = 0; d < hd; d++) {
        __m512 k[4];
#pragma GCC unroll 4
        for (int b = 0; b < B; b++)
            k[b] = _mm512_load_ps(kf + ((size_t)b * hd + d) * KERN_KEY_BLOCK);
#pragma GCC unroll 8
        for (int h = 0; h < H; h++) {
            __m512 qv = _mm512_set1_ps(q[(size_t)h * qs + d]);
#pragma GCC unroll 4
            for (int b = 0; b < B; b++)
                a[h][b] = _mm512_fmadd_ps(qv, k[b], a[h][b]);
        }
    }
    __m512 vs = _mm512_set1_ps(scale);
#pragma GCC unroll 8
    for (int h = 0; h < H; h++)
#pragma GCC unroll 4
        for (int b = 0; b < B; b++) {
            int c = m - 16 * b < 16 ? m - 16 * b : 16;
            if (c > 0)
                _mm512_mask_storeu_ps(out + (size_t)h * os + 16 * b, (__mmask16)((1u << c) - 1), _mm512_mul_ps(a[h][b], vs));
        }
}

/* The nh queries' scores for the B blocks in kf (1 or 2; 4 where nh <= 4), eight queries at a
 * time. */
T_AVX512 static void scores_tiles_avx512(int B, const float *kf, int nh, const float *q, size_t qs, int hd, float scale,
                                         int m, float *out, size_t os) {
    for (int h = 0; h < nh; h += 8) {
        const float *qh = q + (size_t)h * qs;
        float *oh = out + (size_t)h * os;
#define SCORES_TILE(H, B) scores_tile_avx512(H, B, kf, qh, qs, hd, scale, m, oh, os)
#define SCORES_TILE12(H) (B == 2 ? SCORES_TILE(H, 2) : SCORES_TILE(H, 1))
#define SCORES_TILE124(H) (B == 4 ? SCORES_TILE(H, 4) : SCORES_TILE12(H))
        switch (nh - h < 8 ? nh - h : 8) {
        case 1: SCORES_TILE124(1); break;
        case 2: SCORES_TILE124(2); break;
        case 3: SCORES_TILE124(3); break;
        case 4: SCORES_TILE124(4); break;
        case 5: SCORES_TILE12(5); break;
        case 6: SCORES_TILE12(6); break;
        case 7: SCORES_TILE12(7); break;
        default: SCORES_TILE12(8); break;
        }
#undef SCORES_TILE124
#undef SCORES_TILE12
#undef SCORES_TILE
    }
}

/* Keys in passes of W blocks (2; 4 for three or four queries, as a decoded token's heads that
 * share a KV head: eight chains of multiply-adds became sixteen), each pass converted to floats
 * once (kf) for every query; the next pass prefetched (decode reads the keys from memory
 * once; one prefetch a converted cache line, as vf_block_avx512 does). */
T_AVX512 static void scores_avx512(int nh, const ggml_half *keys, const float *q, size_t qs, int hd, int n, float scale,
                                   float *out, size_t os) {
    _Alignas(64) float kf[2 * KERN_KEY_BLOCK * KV_HD_MAX];
    size_t blk = (size_t)KERN_KEY_BLOCK * hd;
    int W = nh >= 3 && nh <= 4 && 2 * hd <= KV_HD_MAX ? 4 : 2;
    for (int t0 = 0; t0 < n; t0 += W * KERN_KEY_BLOCK) {
        int m = n - t0 < W * KERN_KEY_BLOCK ? n - t0 : W * KERN_KEY_BLOCK, B = (m + KERN_KEY_BLOCK - 1) / KERN_KEY_BLOCK;
        const ggml_half *kb = keys + (size_t)t0 * hd;
        bool ahead = t0 + W * KERN_KEY_BLOCK < n;
        /* one prefetch a cache line, where kern_pf_l2 says: the K/V cache's into L2 as well as
         * the weights', against the weights' alone: Q4_K tg64 at depth 4096, 2 threads, a
         * 2-core Zen 4 EPYC, ten alternating pairs 0.89-1.28, median 1.04 */
        for (size_t i = 0; i < B * blk; i += 16) {
            if (ahead && i % 32 == 0)
                kern_prefetch_line(kb + W * blk + i);
            _mm512_store_ps(kf + i, F16Z(kb + i));
        }
        if (B == 3) /* the 4-block tile: its 4th block's scores are not stored; zeros, not stale floats */
            memset(kf + 3 * blk, 0, blk * sizeof(float));
        scores_tiles_avx512(B == 3 ? 4 : B, kf, nh, q, qs, hd, scale, m, out + t0, os);
    }
}

/* The same at AVX2 for H queries (H <= 6) and one block, its 16 keys in two vectors. */
T_AVX2 static INL void scores_tile_avx2(int H, const float *kf, const float *q, size_t qs, int hd, float scale, int m,
                                        float *out, size_t os) {
    __m256 a[6][2];
#pragma GCC unroll 6
    for (int h = 0; h < H; h++)
        a[h][0] = a[h][1] = _mm256_setzero_ps();
    for (int d = 0; d < hd; d++) {
        __m256 k0 = _mm256_load_ps(kf + (size_t)d * KERN_KEY_BLOCK), k1 = _mm256_load_ps(kf + (size_t)d * KERN_KEY_BLOCK + 8);
#pragma GCC unroll 6
        for (int h = 0; h < H; h++) {
            __m256 qv = _mm256_broadcast_ss(q + (size_t)h * qs + d);
            a[h][0] = _mm256_fmadd_ps(qv, k0, a[h][0]);
            a[h][1] = _mm256_fmadd_ps(qv, k1, a[h][1]);
        }
    }
    __m256 vs = _mm256_set1_ps(scale);
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); /* the stored lanes: t < m */
    __m256i lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(m), lane), hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(m - 8), lane);
#pragma GCC unroll 6
    for (int h = 0; h < H; h++) {
        _mm256_maskstore_ps(out + (size_t)h * os, lo, _mm256_mul_ps(a[h][0], vs));
        _mm256_maskstore_ps(out + (size_t)h * os + 8, hi, _mm256_mul_ps(a[h][1], vs));
    }
}

T_AVX2 static void scores_avx2(int nh, const ggml_half *keys, const float *q, size_t qs, int hd, int n, float scale,
                               float *out, size_t os) {
    _Alignas(32) float kf[KERN_KEY_BLOCK * KV_HD_MAX];
    size_t blk = (size_t)KERN_KEY_BLOCK * hd;
    for (int t0 = 0; t0 < n; t0 += KERN_KEY_BLOCK) {
        int m = n - t0 < KERN_KEY_BLOCK ? n - t0 : KERN_KEY_BLOCK;
        const ggml_half *kb = keys + (size_t)t0 * hd;
        bool ahead = t0 + 3 * KERN_KEY_BLOCK <= n; /* prefetch the block after next */
        for (size_t i = 0; i < blk; i += 8) { /* one prefetch a cache line */
            if (ahead && i % 32 == 0)
                kern_prefetch_line(kb + 2 * blk + i);
            _mm256_store_ps(kf + i, F16Y(kb + i));
        }
        for (int h = 0; h < nh; h += 6) {
            const float *qh = q + (size_t)h * qs;
            float *oh = out + (size_t)h * os + t0;
            switch (nh - h < 6 ? nh - h : 6) {
            case 1: scores_tile_avx2(1, kf, qh, qs, hd, scale, m, oh, os); break;
            case 2: scores_tile_avx2(2, kf, qh, qs, hd, scale, m, oh, os); break;
            case 3: scores_tile_avx2(3, kf, qh, qs, hd, scale, m, oh, os); break;
            case 4: scores_tile_avx2(4, kf, qh, qs, hd, scale, m, oh, os); break;
            case 5: scores_tile_avx2(5, kf, qh, qs, hd, scale, m, oh, os); break;
            default: scores_tile_avx2(6, kf, qh, qs, hd, scale, m, oh, os); break;
            }
        }
    }
}

/* The shared value sums' leaves: m keys' values to floats (vf, hd apart), prefetching the
 * first `ahead` keys' values of the next block, at `next` (decode reads them from memory once,
 * and the hardware's prefetch alone left the sums waiting on it; one prefetch a converted cache
 * line, where a run of them all at once waited on the line fill buffers); and H heads (H <= 4)
 * over n keys of them continuing the sums in out (hd a multiple of 64). */
T_AVX512 static void vf_block_avx512(float *vf, const ggml_half *v, size_t vs, int m, int hd, const ggml_half *next,
                                     int ahead) {
    for (int t = 0; t < m; t++)
        for (int i = 0; i < hd; i += 16) {
            if (t < ahead && i % 32 == 0)
                kern_prefetch_line(next + (size_t)t * vs + i);
            _mm512_store_ps(vf + (size_t)t * hd + i, F16Z(v + (size_t)t * vs + i));
        }
}

/* (The unroll pragmas here and in the score tiles keep each array of vectors in registers:
 * without them GCC 12 left the loops rolled and the arrays on the stack, a load and a store
 * around every multiply-add; one Zen 5 core's value sums ran at 22 GMAC/s, now 67, over 2048
 * keys of head size 64.) */
T_AVX512 static INL void sums64_avx512(int H, const float *w, size_t ws, const float *vf, int hd, int n, float *out,
                                       size_t os) {
    __m512 acc[4][4];
#pragma GCC unroll 4
    for (int h = 0; h < H; h++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++)
            acc[h][c] = _mm512_loadu_ps(out + (size_t)h * os + 16 * c);
    for (int t = 0; t < n; t++) {
        const float *vt = vf + (size_t)t * hd;
        __m512 vv[4] = {_mm512_load_ps(vt), _mm512_load_ps(vt + 16), _mm512_load_ps(vt + 32), _mm512_load_ps(vt + 48)};
#pragma GCC unroll 4
        for (int h = 0; h < H; h++) {
            __m512 a = _mm512_set1_ps(w[(size_t)h * ws + t]);
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                acc[h][c] = _mm512_fmadd_ps(a, vv[c], acc[h][c]);
        }
    }
#pragma GCC unroll 4
    for (int h = 0; h < H; h++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++)
            _mm512_storeu_ps(out + (size_t)h * os + 16 * c, acc[h][c]);
}

T_AVX512 static void vf_sums_avx512(int H, const float *w, size_t ws, const float *vf, int hd, int n, float *out,
                                    size_t os) {
    for (int i = 0; i < hd; i += 64)
        switch (H) {
        case 1: sums64_avx512(1, w, ws, vf + i, hd, n, out + i, os); break;
        case 2: sums64_avx512(2, w, ws, vf + i, hd, n, out + i, os); break;
        case 3: sums64_avx512(3, w, ws, vf + i, hd, n, out + i, os); break;
        default: sums64_avx512(4, w, ws, vf + i, hd, n, out + i, os); break;
        }
}

T_AVX2 static void vf_block_avx2(float *vf, const ggml_half *v, size_t vs, int m, int hd, const ggml_half *next,
                                 int ahead) {
    for (int t = 0; t < m; t++)
        for (int i = 0; i < hd; i += 8) {
            if (t < ahead && i % 32 == 0)
                kern_prefetch_line(next + (size_t)t * vs + i);
            _mm256_store_ps(vf + (size_t)t * hd + i, F16Y(v + (size_t)t * vs + i));
        }
}

/* One head x 64 values at a time: eight ymm. */
T_AVX2 static void vf_sums_avx2(int H, const float *w, size_t ws, const float *vf, int hd, int n, float *out,
                                size_t os) {
    for (int h = 0; h < H; h++)
        for (int i = 0; i < hd; i += 64) {
            float *o = out + (size_t)h * os + i;
            const float *wh = w + (size_t)h * ws;
            __m256 acc[8];
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++)
                acc[c] = _mm256_loadu_ps(o + 8 * c);
            for (int t = 0; t < n; t++) {
                const float *vt = vf + (size_t)t * hd + i;
                __m256 a = _mm256_set1_ps(wh[t]);
#pragma GCC unroll 8
                for (int c = 0; c < 8; c++)
                    acc[c] = _mm256_fmadd_ps(a, _mm256_load_ps(vt + 8 * c), acc[c]);
            }
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++)
                _mm256_storeu_ps(o + 8 * c, acc[c]);
        }
}

/* exp_scalar on 8 lanes, the same steps. */
T_AVX2 static INL __m256 exp_avx2(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(EXP_LO), x); /* lo > x ? lo : x: a NaN stays */
    __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fmadd_ps(k, _mm256_set1_ps(-EXP_LN2_HI), x);
    r = _mm256_fmadd_ps(k, _mm256_set1_ps(-EXP_LN2_LO), r);
    __m256 y = _mm256_set1_ps(exp_p[0]);
    for (int i = 1; i < 6; i++)
        y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(exp_p[i]));
    y = _mm256_add_ps(_mm256_fmadd_ps(y, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

/* The largest of s[0..t) into *mx, 8 at a time (NaNs skipped, as the scalar loop's s > mx
 * skips them; of equal values any: only its sign of zero could differ, which s - mx and
 * exp_scalar do not see). Returns t, the count done. */
T_AVX2 static int max_avx2(const float *s, int n, float *mx) {
    if (n < 8)
        return 0;
    __m256 m = _mm256_set1_ps(-INFINITY);
    int t = 0;
    for (; t + 8 <= n; t += 8)
        m = _mm256_max_ps(_mm256_loadu_ps(s + t), m); /* a NaN in the first operand gives m */
    float l[8];
    _mm256_storeu_ps(l, m);
    for (int i = 0; i < 8; i++)
        if (l[i] > *mx)
            *mx = l[i];
    return t;
}

/* exp_scalar of s[t] - mx, 16 at a time, for t < n (n a multiple of 16; returns the count
 * done); the results summed in double into the sixteen lanes l[t % 16]. */
T_AVX2 static int exp_sum_avx2(float *s, float mx, int n, double *l) {
    __m256 vm = _mm256_set1_ps(mx);
    __m256d acc[4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++)
        acc[c] = _mm256_loadu_pd(l + 4 * c);
    int t = 0;
    for (; t + 16 <= n; t += 16)
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) { /* lanes 8h .. 8h + 7 */
            __m256 y = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(s + t + 8 * h), vm));
            _mm256_storeu_ps(s + t + 8 * h, y);
            acc[2 * h] = _mm256_add_pd(acc[2 * h], _mm256_cvtps_pd(_mm256_castps256_ps128(y)));
            acc[2 * h + 1] = _mm256_add_pd(acc[2 * h + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(y, 1)));
        }
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++)
        _mm256_storeu_pd(l + 4 * c, acc[c]);
    return t;
}

/* swiglu_scalar on 8 lanes at a time, the same steps; returns the count done. */
T_AVX2 static int swiglu_avx2(float *g, const float *u, int n) {
    __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(g + i), m = _mm256_or_ps(x, sign);
        __m256 e = _mm256_andnot_ps(_mm256_cmp_ps(m, _mm256_set1_ps(EXP_LO), _CMP_LT_OQ), exp_avx2(m));
        __m256 num = _mm256_blendv_ps(e, one, _mm256_cmp_ps(x, zero, _CMP_GE_OQ));
        __m256 sg = _mm256_div_ps(num, _mm256_add_ps(one, e));
        _mm256_storeu_ps(g + i, _mm256_mul_ps(_mm256_mul_ps(x, sg), _mm256_loadu_ps(u + i)));
    }
    return i;
}

/* exp_avx2 on 16 lanes, the same steps. */
T_AVX512 static INL __m512 exp_avx512(__m512 x) {
    x = _mm512_max_ps(_mm512_set1_ps(EXP_LO), x); /* a NaN stays, as at AVX2 */
    __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fmadd_ps(k, _mm512_set1_ps(-EXP_LN2_HI), x);
    r = _mm512_fmadd_ps(k, _mm512_set1_ps(-EXP_LN2_LO), r);
    __m512 y = _mm512_set1_ps(exp_p[0]);
    for (int i = 1; i < 6; i++)
        y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(exp_p[i]));
    y = _mm512_add_ps(_mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(y, _mm512_castsi512_ps(e));
}

/* max_avx2 64 at a time in four chains (vmaxps's latency no longer sets the pace); a NaN
 * in the first operand gives the second, as there. Returns the count done. */
T_AVX512 static int max_avx512(const float *s, int n, float *mx) {
    if (n < 64)
        return 0;
    __m512 m[4] = {_mm512_set1_ps(-INFINITY), _mm512_set1_ps(-INFINITY), _mm512_set1_ps(-INFINITY),
                   _mm512_set1_ps(-INFINITY)};
    int t = 0;
    for (; t + 64 <= n; t += 64)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++)
            m[c] = _mm512_max_ps(_mm512_loadu_ps(s + t + 16 * c), m[c]);
    float l[16];
    _mm512_storeu_ps(l, _mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3])));
    for (int i = 0; i < 16; i++)
        if (l[i] > *mx)
            *mx = l[i];
    return t;
}

/* scale_round_avx2 16 at a time. */
T_AVX512 static int scale_round_avx512(float *s, float inv, int n) {
    __m512 vi = _mm512_set1_ps(inv);
    int t = 0;
    for (; t + 16 <= n; t += 16) {
        __m512 v = _mm512_mul_ps(_mm512_loadu_ps(s + t), vi);
        if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q))
            break;
        _mm512_storeu_ps(s + t, _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
    }
    return t;
}

/* exp_sum_avx2 on 16 lanes: the two halves into the two vectors of double lanes. */
T_AVX512 static int exp_sum_avx512(float *s, float mx, int n, double *l) {
    __m512 vm = _mm512_set1_ps(mx);
    __m512d lo = _mm512_loadu_pd(l), hi = _mm512_loadu_pd(l + 8);
    int t = 0;
    for (; t + 16 <= n; t += 16) {
        __m512 y = exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(s + t), vm));
        _mm512_storeu_ps(s + t, y);
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(y)));
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1))));
    }
    _mm512_storeu_pd(l, lo);
    _mm512_storeu_pd(l + 8, hi);
    return t;
}

/* swiglu_avx2 on 16 lanes, the same steps. */
T_AVX512 static int swiglu_avx512(float *g, const float *u, int n) {
    __m512 sign = _mm512_set1_ps(-0.0f), one = _mm512_set1_ps(1.0f);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(g + i), m = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(x), _mm512_castps_si512(sign)));
        __m512 e = _mm512_maskz_mov_ps(~_mm512_cmp_ps_mask(m, _mm512_set1_ps(EXP_LO), _CMP_LT_OQ), exp_avx512(m));
        __m512 num = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ), e, one);
        __m512 sg = _mm512_div_ps(num, _mm512_add_ps(one, e));
        _mm512_storeu_ps(g + i, _mm512_mul_ps(_mm512_mul_ps(x, sg), _mm512_loadu_ps(u + i)));
    }
    return i;
}

/* s[t] = F16 rounding of s[t] * inv, 8 at a time (F16C rounds to nearest even, as
 * ggml_fp32_to_fp16; a run holding a NaN is left to the scalar path). Returns the count done. */
T_AVX2 static int scale_round_avx2(float *s, float inv, int n) {
    __m256 vi = _mm256_set1_ps(inv);
    int t = 0;
    for (; t + 8 <= n; t += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(s + t), vi);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            break;
        _mm256_storeu_ps(s + t, _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
    }
    return t;
}
#endif

int kern_key_positions(int n_ctx) { return (n_ctx + KERN_KEY_BLOCK - 1) / KERN_KEY_BLOCK * KERN_KEY_BLOCK; }

void kern_attn_key_store(ggml_half *keys, int t, const float *k, int hd) {
    ggml_half h[64];
    for (int d0 = 0; d0 < hd; d0 += 64) {
        int c = hd - d0 < 64 ? hd - d0 : 64;
        kern_f32_to_f16(k + d0, h, c);
        for (int d = 0; d < c; d++)
            keys[key_index(t, d0 + d, hd)] = h[d];
    }
}

void kern_attn_scores(int nh, const ggml_half *keys, const float *q, size_t q_stride, int hd, int n, float scale,
                      float *out, size_t out_stride) {
#ifdef KF_X86
    kern_level l = kern_get_level();
    if (l >= KERN_AVX512 && hd <= KV_HD_MAX) {
        scores_avx512(nh, keys, q, q_stride, hd, n, scale, out, out_stride);
        return;
    }
    if (l >= KERN_AVX2 && hd <= KV_HD_MAX) {
        scores_avx2(nh, keys, q, q_stride, hd, n, scale, out, out_stride);
        return;
    }
#endif
    for (int h = 0; h < nh; h++)
        scores_scalar(keys, q + (size_t)h * q_stride, hd, n, scale, out + (size_t)h * out_stride);
}

#ifdef KF_X86
/* Adds range r's value sums (p) to a head's out where the head (n keys) has keys there. */
static void range_add(float *restrict out, const float *restrict p, int hd, int n, int r) {
    if (kern_att_range_keys(n, r) > 0)
        for (int i = 0; i < hd; i++)
            out[i] += p[i];
}

/* Keys [t0, t0 + m) that a head with n keys takes. */
static int keys_in(int n, int t0, int m) { return n - t0 < 0 ? 0 : n - t0 < m ? n - t0 : m; }

/* Value sums for many heads (a unit of several rows, each row's heads with its own count):
 * keys in blocks (a whole number of them a range of keys), each block's values converted to
 * floats once (block) for every head, then summed (sums) four heads at a time over the keys
 * all four take, each head alone over the rest; every sum continues in key order from +0,
 * the first range's in out, each later range's in part, added to out where the range ends. */
static void values_shared(void (*block)(float *, const ggml_half *, size_t, int, int, const ggml_half *, int),
                          void (*sums)(int, const float *, size_t, const float *, int, int, float *, size_t), int nh,
                          const float *w, size_t ws, const ggml_half *v, size_t vs, int hd, const int *n, float *out,
                          size_t os, float *part) {
    _Alignas(64) float vf[VF_FLOATS];
    int kb = KERN_ATT_RANGE, most = 0;
    while (kb * hd > VF_FLOATS)
        kb /= 2;
    for (int h = 0; h < nh; h++) {
        memset(out + (size_t)h * os, 0, (size_t)hd * sizeof(float));
        most = n[h] > most ? n[h] : most;
    }
    for (int t0 = 0; t0 < most; t0 += kb) {
        int m = most - t0 < kb ? most - t0 : kb, r = t0 / KERN_ATT_RANGE;
        int ahead = most - t0 - kb < 0 ? 0 : most - t0 - kb < kb ? most - t0 - kb : kb;
        float *o = r ? part : out;
        size_t oo = r ? (size_t)hd : os;
        if (r && t0 % KERN_ATT_RANGE == 0)
            for (int h = 0; h < nh; h++) {
                if (r > 1)
                    range_add(out + (size_t)h * os, part + (size_t)h * hd, hd, n[h], r - 1);
                memset(part + (size_t)h * hd, 0, (size_t)hd * sizeof(float));
            }
        block(vf, v + (size_t)t0 * vs, vs, m, hd, v + (size_t)(t0 + kb) * vs, ahead);
        for (int h = 0; h < nh; h += 4) {
            int H = nh - h < 4 ? nh - h : 4, c = m;
            for (int g = 0; g < H; g++)
                c = keys_in(n[h + g], t0, m) < c ? keys_in(n[h + g], t0, m) : c;
            if (c > 0)
                sums(H, w + (size_t)h * ws + t0, ws, vf, hd, c, o + (size_t)h * oo, oo);
            for (int g = 0; g < H; g++) {
                int cg = keys_in(n[h + g], t0, m);
                if (cg > c)
                    sums(1, w + (size_t)(h + g) * ws + t0 + c, ws, vf + (size_t)c * hd, hd, cg - c,
                         o + (size_t)(h + g) * oo, oo);
            }
        }
    }
    for (int h = 0; most > KERN_ATT_RANGE && h < nh; h++)
        range_add(out + (size_t)h * os, part + (size_t)h * hd, hd, n[h], (most - 1) / KERN_ATT_RANGE);
}
#endif

void kern_attn_values(int nh, const float *w, size_t w_stride, const ggml_half *v, size_t v_stride, int hd,
                      const int *n, float *out, size_t out_stride, float *part) {
#ifdef KF_X86
    kern_level l = kern_get_level();
    if (hd % 64 == 0 && hd <= VF_FLOATS && l >= KERN_AVX2) {
        if (l >= KERN_AVX512)
            values_shared(vf_block_avx512, vf_sums_avx512, nh, w, w_stride, v, v_stride, hd, n, out, out_stride, part);
        else
            values_shared(vf_block_avx2, vf_sums_avx2, nh, w, w_stride, v, v_stride, hd, n, out, out_stride, part);
        return;
    }
#endif
    values_scalar(nh, w, w_stride, v, v_stride, hd, n, out, out_stride, part);
}

/* silu(g) * u: e = exp(-|g|) (exp_scalar, so every level gives the same bits; 0 below
 * exp_scalar's clamp), the sigmoid (g >= 0 ? 1 : e) / (1 + e), then (g * sigmoid) * u. */
static float swiglu_scalar(float g, float u) {
    float m = -fabsf(g), e = m < EXP_LO ? 0.0f : exp_scalar(m);
    return g * ((g >= 0 ? 1.0f : e) / (1.0f + e)) * u;
}

void kern_swiglu(float *g, const float *u, int n) {
    int i = 0;
#ifdef KF_X86
    if (kern_get_level() >= KERN_AVX512)
        i = swiglu_avx512(g, u, n);
    if (kern_get_level() >= KERN_AVX2)
        i += swiglu_avx2(g + i, u + i, n - i);
#endif
    for (; i < n; i++)
        g[i] = swiglu_scalar(g[i], u[i]);
}

float kern_softmax_part(float *s, int n, double *sum_out) {
    float mx = -INFINITY;
    int t = 0;
#ifdef KF_X86
    if (kern_get_level() >= KERN_AVX512)
        t = max_avx512(s, n, &mx);
    if (kern_get_level() >= KERN_AVX2)
        t += max_avx2(s + t, n - t, &mx);
#endif
    for (; t < n; t++)
        if (s[t] > mx)
            mx = s[t];
    double l[16] = {0};
    int n16 = n & ~15;
    t = 0;
#ifdef KF_X86
    if (kern_get_level() >= KERN_AVX512)
        t = exp_sum_avx512(s, mx, n16, l);
    if (kern_get_level() >= KERN_AVX2)
        t += exp_sum_avx2(s + t, mx, n16 - t, l);
#endif
    for (; t < n16; t++) {
        s[t] = exp_scalar(s[t] - mx);
        l[t & 15] += s[t];
    }
    for (int j = 0; j < 8; j++) /* the fixed tree: lanes j + 8, then j + 4, then pairs */
        l[j] += l[j + 8];
    for (int j = 0; j < 4; j++)
        l[j] += l[j + 4];
    double sum = (l[0] + l[2]) + (l[1] + l[3]);
    for (; t < n; t++) {
        s[t] = exp_scalar(s[t] - mx);
        sum += s[t];
    }
    *sum_out = sum;
    return mx;
}

void kern_softmax_factors(int k, const float *mx, const double *sum, float *f) {
    float m = mx[0];
    for (int r = 1; r < k; r++)
        m = mx[r] > m ? mx[r] : m;
    double total = 0;
    for (int r = 0; r < k; r++) {
        f[r] = mx[r] == m ? 1.0f : exp_scalar(mx[r] - m);
        total += sum[r] * (double)f[r];
    }
    float inv = (float)(1.0 / total);
    for (int r = 0; r < k; r++)
        f[r] *= inv;
}

void kern_softmax_scale(float *s, int n, float f) {
    int t = 0;
#ifdef KF_X86
    if (kern_get_level() >= KERN_AVX512)
        t = scale_round_avx512(s, f, n);
    if (kern_get_level() >= KERN_AVX2) /* stops where the AVX-512 loop stopped at a NaN */
        t += scale_round_avx2(s + t, f, n - t);
#endif
    for (; t < n; t++)
        s[t] = ggml_fp16_to_fp32(ggml_fp32_to_fp16(s[t] * f));
}

void kern_softmax_f16(float *s, int n) {
    float mx[KERN_ATT_RANGES_MAX], f[KERN_ATT_RANGES_MAX];
    double sum[KERN_ATT_RANGES_MAX];
    int k = kern_att_ranges(n);
    if (k < 1)
        return;
    mx[0] = kern_softmax_part(s, kern_att_range_keys(n, 0), &sum[0]);
    for (int r = 1; r < k; r++)
        mx[r] = kern_softmax_part(s + r * KERN_ATT_RANGE, kern_att_range_keys(n, r), &sum[r]);
    kern_softmax_factors(k, mx, sum, f);
    for (int r = 0; r < k; r++)
        kern_softmax_scale(s + r * KERN_ATT_RANGE, kern_att_range_keys(n, r), f[r]);
}
