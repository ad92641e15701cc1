/* kernels_pack.h - the packed group layouts the kernels_pack*.c files share (kernels.h
 * says what packing is for). Internal to the engine's kernels. */
#ifndef PACER_KERNELS_PACK_H
#define PACER_KERNELS_PACK_H

#include "engine/kernels.h"

typedef struct pk_q4_0 {
    ggml_half d[8];
    uint8_t q[128];
} pk_q4_0;

typedef struct pk_q8_0 {
    ggml_half d[8];
    int8_t q[256];
} pk_q8_0;

typedef struct pk_q4_K {
    ggml_half d[8], dmin[8];
    uint8_t sc[8][8]; /* [sub-block][row] */
    uint8_t m[8][8];
    uint8_t q[8][128]; /* per sub-block: pk_q4_0's q */
} pk_q4_K;

/* Q6_K's quants q (0..63; the weight is q - 32) per sub-block: their low 4 bits as pk_q4_0's
 * q (byte (k * 8 + i) * 4 + j of row i: elements 4k + j and 16 + 4k + j, k < 4), then
 * their high 2 bits, byte (c * 8 + i) * 4 + j holding element 16c + 4m + j's in bits 2m,
 * 2m + 1 (c < 2, m < 4): six bits a weight, as in the file. */
#define PK_Q6_LO 128
typedef struct pk_q6_K {
    ggml_half d[8];
    int8_t sc[16][8];  /* [16-element group][row] */
    uint8_t q[8][192]; /* [sub-block]: PK_Q6_LO bytes of low bits, then 64 of high bits */
} pk_q6_K;

_Static_assert(sizeof(pk_q4_0) == 8 * sizeof(block_q4_0), "pk_q4_0 holds 8 blocks");
_Static_assert(sizeof(pk_q4_K) == 8 * sizeof(block_q4_K) + 32, "pk_q4_K: 8 blocks, scales as bytes");
_Static_assert(sizeof(pk_q8_0) == 8 * sizeof(block_q8_0), "pk_q8_0 holds 8 blocks");
_Static_assert(sizeof(pk_q6_K) == 8 * sizeof(block_q6_K), "pk_q6_K holds 8 blocks");

/* Packs Q4_K or Q6_K row groups [g0, g1) (kern_pack's contract; kernels_kpack.c). */
void kern_pack_kquant(ggml_type t, const void *src, size_t row_bytes, int n_in, int n_out, int g0, int g1, void *dst);

/* Bytes of one packed group of 8 rows of n_in elements. */
size_t kern_pack_group_bytes(ggml_type t, int n_in);

#if defined(__x86_64__)
#include <immintrin.h>
#define KERN_X86 1
#define T_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define INLINE __attribute__((always_inline)) static inline

/* Helpers the VNNI and AMX kernels share. */
T_VNNI INLINE __m512i load_2x256(const void *a, const void *b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
                              _mm256_loadu_si256((const __m256i *)b), 1);
}

T_VNNI INLINE __m512 scales_2x8(const ggml_half *a, const ggml_half *b) {
    __m256i h = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)a)),
                                        _mm_loadu_si128((const __m128i *)b), 1);
    return _mm512_cvtph_ps(h);
}

T_VNNI INLINE void store16(float *o, int valid, __m512 v) {
    if (valid >= 16)
        _mm512_storeu_ps(o, v);
    else
        _mm512_mask_storeu_ps(o, (__mmask16)((1u << valid) - 1), v);
}

/* Two adjacent groups' nibble blocks (Q4_0's interleave) as 8 registers, as nib_unpack_avx2. */
T_VNNI INLINE void nib_unpack_vnni(const uint8_t *qa, const uint8_t *qb, __m512i *w) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        __m512i v = load_2x256(qa + 32 * k, qb + 32 * k);
        w[k] = _mm512_and_si512(v, m4);
        w[k + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
}

/* Two adjacent groups' Q6_K sub-blocks (kernels_pack.h's layout) as 8 registers of quants
 * 0..63, w[k] holding elements 4k..4k+3 of all 16 rows: nib_unpack_vnni's low bits, each
 * with its high 2 bits (16-bit shifts: bits 4 and 5 of each byte come from its own bits). */
T_VNNI INLINE void q6_unpack_vnni(const uint8_t *qa, const uint8_t *qb, __m512i *w) {
    const __m512i m2 = _mm512_set1_epi8(0x30);
    nib_unpack_vnni(qa, qb, w);
#pragma GCC unroll 2
    for (int c = 0; c < 2; c++) { /* 0xEA: (shifted & m2) | w */
        __m512i h = load_2x256(qa + PK_Q6_LO + 32 * c, qb + PK_Q6_LO + 32 * c);
        w[4 * c] = _mm512_ternarylogic_epi32(_mm512_slli_epi16(h, 4), m2, w[4 * c], 0xEA);
        w[4 * c + 1] = _mm512_ternarylogic_epi32(_mm512_slli_epi16(h, 2), m2, w[4 * c + 1], 0xEA);
        w[4 * c + 2] = _mm512_ternarylogic_epi32(h, m2, w[4 * c + 2], 0xEA);
        w[4 * c + 3] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(h, 2), m2, w[4 * c + 3], 0xEA);
    }
}

/* Two groups' bytes (8 + 8) as 16 floats. */
T_VNNI INLINE __m512 u8x16_ps(const uint8_t *a, const uint8_t *b) {
    __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)a), _mm_loadl_epi64((const __m128i *)b));
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v));
}

/* Two groups' int8 bytes (8 + 8) as 16 floats: Q6_K's scales of one half sub-block. */
T_VNNI INLINE __m512 i8x16_ps(const int8_t *a, const int8_t *b) {
    __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)a), _mm_loadl_epi64((const __m128i *)b));
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(v));
}

/* Q6_K's sub-block sum from its halves' sums h0, h1 and scales sc0, sc1, in floats:
 * h0 * sc0 + h1 * sc1. Every value is an integer below 2^24 (|h * sc| <= 16 * 32 * 127 *
 * 128), so this is exact, the int32 sum's value; the VNNI tile, decode and AMX all use it. */
T_VNNI INLINE __m512 q6_mix(__m512 h0, __m512 h1, __m512 sc0, __m512 sc1) {
    return _mm512_fmadd_ps(h1, sc1, _mm512_mul_ps(h0, sc0));
}

/* kern_gemm_packed at the VNNI and AMX levels (nblk = n_in / 32): kernels_pack.c, kernels_amx.c. */
void kern_gemm_vnni(ggml_type t, const void *P, int nblk, int n_out, int g0, int g1, const unsigned char *act,
                    size_t act_stride, int nb, float *out, int ldo);
void kern_gemm_amx(ggml_type t, const void *P, int nblk, int n_out, int g0, int g1, const unsigned char *act,
                   size_t act_stride, int nb, float *out, int ldo);
#endif

#endif
