/* kernels_pack.c - Q4_0, Q8_0, Q4_K and Q6_K matrices repacked in groups of 8 rows (F16's groups
 * of 16 are kernels_f16.c's; kern_pack and kern_gemm_packed pass them on), one SIMD lane
 * per row: four bytes of each of the 8 rows sit side by side, so four activation bytes
 * broadcast to all lanes multiply 8 rows at once, the integer sums stay exact, and the 8
 * rows' block scales are applied in one multiply. A group block holds the 8 rows' scales
 * and then, for chunk k, the 8 rows' bytes 4k..4k+3 (Q4_0: 4 chunks, each byte a low and
 * a high nibble, which are elements 4k+j and 16+4k+j; Q8_0: 8 chunks). A Q4_K group block
 * covers a 256-element super-block: the 8 rows' d and dmin, their 6-bit scales and mins
 * unpacked to bytes, and each 32-element sub-block's nibbles laid out as Q4_0's. Q6_K: the
 * rows' d and int8 scales, and per sub-block the quants' low 4 bits laid out as Q4_0's
 * nibbles, then their high 2 bits (kernels_pack.h): 210 bytes a row and super-block, as in
 * the file.
 *
 * Every output is computed the same way on every level and for every batch size: per
 * block the exact integer dot product s, then acc = fma(d_w * d_x, (float)s, acc), blocks
 * in order. So the scalar, AVX2, AVX-VNNI and AVX-512 VNNI kernels, any tiling of tokens,
 * and any split of rows over threads give bit-identical results. */
#include "engine/kernels.h"
#include "engine/kernels_f16.h"
#include "engine/kernels_pack.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define TILE_TOKENS 4 /* tokens multiplied per pass over a group's weights (AVX2) */

bool kern_pack_supported(ggml_type t) {
    return t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q6_K ||
           t == GGML_TYPE_F16;
}

int kern_pack_rows(ggml_type t) { return t == GGML_TYPE_F16 ? 16 : 8; }

int kern_pack_groups(ggml_type t, int n_out) { return (n_out + kern_pack_rows(t) - 1) / kern_pack_rows(t); }

static size_t pack_block_size(ggml_type t) { return t == GGML_TYPE_Q4_0 ? sizeof(pk_q4_0) : sizeof(pk_q8_0); }

/* Bytes of one packed group of 8 rows of n_in elements. */
size_t kern_pack_group_bytes(ggml_type t, int n_in) {
    if (t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q6_K)
        return (size_t)(n_in / QK_K) * (t == GGML_TYPE_Q4_K ? sizeof(pk_q4_K) : sizeof(pk_q6_K));
    return (size_t)(n_in / 32) * pack_block_size(t);
}

size_t kern_pack_size(ggml_type t, int n_in, int n_out) {
    if (t == GGML_TYPE_F16)
        return kern_f16_pack_size(n_in, n_out);
    return (size_t)kern_pack_groups(t, n_out) * kern_pack_group_bytes(t, n_in);
}

void kern_pack(ggml_type t, const void *src, size_t row_bytes, int n_in, int n_out, int g0, int g1, void *dst) {
    if (t == GGML_TYPE_F16) {
        kern_f16_pack(src, row_bytes, n_in, n_out, g0, g1, dst);
        return;
    }
    if (t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q6_K) {
        kern_pack_kquant(t, src, row_bytes, n_in, n_out, g0, g1, dst);
        return;
    }
    int nblk = n_in / 32, chunks = t == GGML_TYPE_Q4_0 ? 4 : 8;
    size_t bs = pack_block_size(t), src_bs = t == GGML_TYPE_Q4_0 ? sizeof(block_q4_0) : sizeof(block_q8_0);
    for (int g = g0; g < g1; g++)
        for (int b = 0; b < nblk; b++) {
            unsigned char *pk = (unsigned char *)dst + ((size_t)g * nblk + b) * bs;
            ggml_half *d = (ggml_half *)pk;
            unsigned char *q = pk + 8 * sizeof(ggml_half);
            memset(pk, 0, bs);
            for (int i = 0; i < 8; i++) {
                int r = g * 8 + i;
                if (r >= n_out)
                    continue; /* padding rows: scale 0 */
                const unsigned char *blk = (const unsigned char *)src + (size_t)r * row_bytes + (size_t)b * src_bs;
                memcpy(&d[i], blk, sizeof(ggml_half));
                for (int k = 0; k < chunks; k++)
                    memcpy(q + (size_t)(k * 8 + i) * 4, blk + sizeof(ggml_half) + 4 * k, 4);
            }
        }
}

/* ---------------- scalar (the reference every level equals) ---------------- */

/* Row i's nibbles (Q4_0's interleave in q) times the block x. */
static int nib_isum(const uint8_t *q, int i, const kern_q8_block *x) {
    int s = 0;
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 4; j++) {
            int byte = q[(k * 8 + i) * 4 + j];
            s += (byte & 0x0F) * x->qs[4 * k + j] + (byte >> 4) * x->qs[16 + 4 * k + j];
        }
    return s;
}

static int q4_0_isum(const pk_q4_0 *pk, int i, const kern_q8_block *x) { return nib_isum(pk->q, i, x) - 8 * x->sum; }

static int q8_0_isum(const pk_q8_0 *pk, int i, const kern_q8_block *x) {
    int s = 0;
    for (int k = 0; k < 8; k++)
        for (int j = 0; j < 4; j++)
            s += pk->q[(k * 8 + i) * 4 + j] * x->qs[4 * k + j];
    return s;
}

/* One Q4_K group (nsup super-blocks) times one token's blocks x, into acc[8]. */
static void q4_K_scalar(const pk_q4_K *pk, int nsup, const kern_q8_block *x, float *acc) {
    for (int b = 0; b < nsup; b++, pk++)
        for (int sb = 0; sb < 8; sb++) {
            const kern_q8_block *xb = &x[b * 8 + sb];
            for (int i = 0; i < 8; i++) {
                float ds = ggml_fp16_to_fp32(pk->d[i]) * (float)pk->sc[sb][i];
                float dm = ggml_fp16_to_fp32(pk->dmin[i]) * (float)pk->m[sb][i];
                float v = fmaf(ds, (float)nib_isum(pk->q[sb], i, xb), -(dm * (float)xb->sum));
                acc[i] = fmaf(xb->d, v, acc[i]);
            }
        }
}

/* Row i's quant of element l (0..31) in a Q6_K sub-block (kernels_pack.h's layout). */
static int q6_quant(const uint8_t *sub, int i, int l) {
    int j = l % 4, m = l % 16 / 4;
    int lo = sub[(m * 8 + i) * 4 + j] >> (l < 16 ? 0 : 4) & 0x0F;
    return lo | (sub[PK_Q6_LO + (l / 16 * 8 + i) * 4 + j] >> (2 * m) & 3) << 4;
}

/* One Q6_K group times one token's blocks: per sub-block s = sc_lo * (sum over elements
 * 0..15) + sc_hi * (sum over 16..31) of (q - 32) * x, exact, then acc = fma(d * d_x,
 * (float)s, acc). */
static void q6_K_scalar(const pk_q6_K *pk, int nsup, const kern_q8_block *x, float *acc) {
    for (int b = 0; b < nsup; b++, pk++)
        for (int sb = 0; sb < 8; sb++) {
            const kern_q8_block *xb = &x[b * 8 + sb];
            for (int i = 0; i < 8; i++) {
                int half[2] = {0, 0};
                for (int l = 0; l < 32; l++)
                    half[l / 16] += (q6_quant(pk->q[sb], i, l) - 32) * xb->qs[l];
                int s = pk->sc[2 * sb][i] * half[0] + pk->sc[2 * sb + 1][i] * half[1];
                acc[i] = fmaf(ggml_fp16_to_fp32(pk->d[i]) * xb->d, (float)s, acc[i]);
            }
        }
}

static void gemm_scalar(ggml_type t, const void *P, int nblk, int n_out, int g, const unsigned char *act,
                        size_t act_stride, int nb, float *out, int ldo) {
    size_t bs = pack_block_size(t);
    for (int tk = 0; tk < nb; tk++) {
        const kern_q8_block *x = (const kern_q8_block *)(act + (size_t)tk * act_stride);
        float acc[8] = {0};
        if (t == GGML_TYPE_Q4_K)
            q4_K_scalar((const pk_q4_K *)P + (size_t)g * (nblk / 8), nblk / 8, x, acc);
        if (t == GGML_TYPE_Q6_K)
            q6_K_scalar((const pk_q6_K *)P + (size_t)g * (nblk / 8), nblk / 8, x, acc);
        for (int b = 0; b < nblk && t != GGML_TYPE_Q4_K && t != GGML_TYPE_Q6_K; b++) {
            const unsigned char *pk = (const unsigned char *)P + ((size_t)g * nblk + b) * bs;
            for (int i = 0; i < 8; i++) {
                int s = t == GGML_TYPE_Q4_0 ? q4_0_isum((const pk_q4_0 *)pk, i, &x[b]) : q8_0_isum((const pk_q8_0 *)pk, i, &x[b]);
                float d = ggml_fp16_to_fp32(((const ggml_half *)pk)[i]) * x[b].d;
                acc[i] = fmaf(d, (float)s, acc[i]);
            }
        }
        for (int i = 0; i < 8 && g * 8 + i < n_out; i++)
            out[(size_t)tk * ldo + g * 8 + i] = acc[i];
    }
}

/* ---------------- AVX2 ---------------- */
#ifdef KERN_X86
#define T_AVX2 __attribute__((target("avx2,fma,f16c")))

INLINE int32_t load_i32(const void *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The block's 4-byte activation chunk k (elements 4k..4k+3), broadcast to every lane. */
T_AVX2 INLINE __m256i chunk_bc_avx2(const kern_q8_block *xb, int k) {
    return _mm256_set1_epi32(load_i32(xb->qs + 4 * k));
}

T_AVX2 INLINE void store8(float *o, int valid, __m256 v) {
    if (valid >= 8) {
        _mm256_storeu_ps(o, v);
        return;
    }
    float tmp[8];
    _mm256_storeu_ps(tmp, v);
    memcpy(o, tmp, (size_t)valid * sizeof(float));
}

/* Decode reads each weight once: the tiles fetch the blocks PF_AHEAD bytes ahead of their
 * use, so more of each thread's memory reads are in flight. 2048 rather than 1024 on a
 * 2-core Zen 5 EPYC (66 GB/s), 1B models, 2 threads, decode: Q4_0 1.09, Q4_K 1.14, Q8_0
 * 1.06 (3072 no better, 4096 and more slower). */
#define PF_AHEAD 2048
/* The loops over a block's registers and lines carry `#pragma GCC unroll`: GCC 12 at -O2
 * left some of them rolled, and the registers (w[8], bc[8]) then went through the stack.
 * Unrolled, Q4_0 / Q4_K / Q8_0 decode kernels on a matrix in L2 (Zen 5, VNNI) ran 2.3 / 1.9
 * / 1.7 times as fast (AVX2 level 1.27 / 1.07 / 1.0); 1B models, 2 threads, prefill pp128
 * 1.15 / 1.21 / 1.10, decode 1.0 (at the memory's roof) / 1.15 / 1.06. */
/* The lines that begin in [q, q + n), each prefetched once: a step prefetches its own share
 * of a group's stream (a block; a K-quant sub-block's eighth of its super-block), so the
 * shares of consecutive steps cover every line once. Before, each step prefetched three
 * lines from its quants (five for Q8_0): a Q6_K step's share is 210 bytes, so 144 bytes of
 * every 1680-byte super-block (two or three lines) were read on demand; the other types
 * asked for one line in four twice. 2-core Zen 4 EPYC, 1B models, decode at one thread, three alternating rounds,
 * tok/s, Q6_K at four lines a step / each step its share: Q6_K 17.5-18.8 / 20.2-21.9, Q8_0
 * 15.3-15.9 / 17.1-17.9, Q4_0 30.8-32.1 / 31.3-32.2, Q4_K 21.9-26.2 / 26.2-26.9. */
INLINE void prefetch_span(const unsigned char *q, size_t n) {
    for (uintptr_t a = ((uintptr_t)q + 63) & ~(uintptr_t)63; a < (uintptr_t)q + n; a += 64)
        kern_prefetch_line((const void *)a);
}

/* Bytes of a group's stream one step (32 elements of its 8 rows) reads. */
INLINE size_t step_bytes(ggml_type t) {
    return t == GGML_TYPE_Q4_0   ? sizeof(pk_q4_0)
           : t == GGML_TYPE_Q8_0 ? sizeof(pk_q8_0)
           : t == GGML_TYPE_Q4_K ? sizeof(pk_q4_K) / 8
                                 : sizeof(pk_q6_K) / 8;
}

/* The tiles' prefetch: step b's share of the group at g, PF_AHEAD bytes on (past the group's
 * end, into the next group: the next tile's). The VNNI tiles, two groups side by side, use
 * prefetch_pass instead (below). */
INLINE void prefetch_step(ggml_type t, const void *g, int b) {
    prefetch_span((const unsigned char *)g + (size_t)b * step_bytes(t) + PF_AHEAD, step_bytes(t));
}

/* Decode's prefetch of step b's share of the group at g: PF_AHEAD bytes on; past the end of
 * the group (gsz bytes), as far into the group that the next decode pass reads in its place
 * (`next` bytes further on). A pass reads GEMV_GROUPS groups side by side: a prefetch past a
 * group's end used to fall into the next group of the same pass, already being read, and
 * each stream of the next pass started cold. 1B models on a first-generation EPYC, medians
 * of 20-30 alternating runs in one process, new/old at 1 / 2 threads: Q4_0 1.13-1.15 /
 * 1.07-1.08, Q4_K 1.13 / 1.08, Q8_0 1.02 / 1.00.
 * The VNNI tiles read two groups side by side (ga, then gb = ga + gsz) and prefetch with
 * next = gsz, into the same group of the next pair. Before, a group's prefetch past its end
 * ran into its partner, already being read, and the next pair's second group started cold.
 * A few rows a pass (sequences decoding together): 2-core Zen 4, 2 threads, 1B models,
 * alternating rounds, medians, tok/s before / after: Q4_0 pp4 184 / 192, pp8 286 / 326,
 * pp12 369 / 416, pp64 549 / 564 (4 rounds); Q4_K pp8 269 / 320, pp12 302 / 353; Q8_0 pp8
 * 197 / 222, pp12 263 / 261 (3 rounds). */
INLINE void prefetch_pass(ggml_type t, const unsigned char *g, size_t gsz, int b, size_t next) {
    const unsigned char *q = g + (size_t)b * step_bytes(t) + PF_AHEAD;
    if (q >= g + gsz)
        q += next;
    prefetch_span(q, step_bytes(t));
}

/* A Q4_0-interleaved block of 8 rows' nibbles (128 bytes) as 8 registers of unsigned bytes:
 * w[k] holds elements 4k..4k+3 of every row, w[k + 4] elements 16+4k..16+4k+3. */
T_AVX2 INLINE void nib_unpack_avx2(const uint8_t *q, __m256i *w) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(q + 32 * k));
        w[k] = _mm256_and_si256(v, m4);
        w[k + 4] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    }
}

/* Decode (one token) takes GEMV_GROUPS groups per pass, so a block's activation broadcasts
 * and scales are made once for 32 rows (the tiles make them once per group); each group's
 * sums and float steps are the tile's, so the bits are too. */
#define GEMV_GROUPS 4

/* F(TYPE, ...) with the packed type t as a constant: one instance of F per type, each with
 * only its own type's steps. */
#define PER_PACKED_TYPE(t, F, ...)                \
    do {                                          \
        if ((t) == GGML_TYPE_Q4_0)                \
            F(GGML_TYPE_Q4_0, __VA_ARGS__);       \
        else if ((t) == GGML_TYPE_Q4_K)           \
            F(GGML_TYPE_Q4_K, __VA_ARGS__);       \
        else if ((t) == GGML_TYPE_Q6_K)           \
            F(GGML_TYPE_Q6_K, __VA_ARGS__);       \
        else                                      \
            F(GGML_TYPE_Q8_0, __VA_ARGS__);       \
    } while (0)

/* A block's eight activation chunks broadcast, for the groups of a decode pass. */
T_AVX2 INLINE void chunks_bc_avx2(const kern_q8_block *xb, __m256i *bc) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++)
        bc[k] = chunk_bc_avx2(xb, k);
}

T_AVX2 INLINE __m256 u8x8_ps(const uint8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* Half c (elements 16c..16c+15) of a Q6_K sub-block of 8 rows (kernels_pack.h) as 4
 * registers of quants 0..63, w[m] holding elements 16c+4m..16c+4m+3 of every row: the low
 * bits nib_unpack_avx2's, the high bits from their byte by 16-bit shifts (bits 4 and 5 of
 * each byte come from its own bits). */
T_AVX2 INLINE void q6_unpack_half_avx2(const uint8_t *q, int c, __m256i *w) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x30);
    __m256i h = _mm256_loadu_si256((const __m256i *)(q + PK_Q6_LO + 32 * c));
    __m256i hs[4] = {_mm256_slli_epi16(h, 4), _mm256_slli_epi16(h, 2), h, _mm256_srli_epi16(h, 2)};
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(q + 32 * m));
        if (c)
            v = _mm256_srli_epi16(v, 4);
        w[m] = _mm256_or_si256(_mm256_and_si256(v, m4), _mm256_and_si256(hs[m], m2));
    }
}

/* Tokens t0..t0+rn-1 of a tile: their activation blocks and where their outputs for group
 * g (and the groups after it) go. */
static void tile_rows(const unsigned char *act, size_t act_stride, float *out, int ldo, int g, int t0, int rn,
                      const kern_q8_block **x, float **o) {
    for (int k = 0; k < rn; k++) {
        x[k] = (const kern_q8_block *)(act + (size_t)(t0 + k) * act_stride);
        o[k] = out + (size_t)(t0 + k) * ldo + (size_t)g * 8;
    }
}

/* The integer steps of the 8-row kernels (kernels_pack_ymm.inc), at AVX2: vpmaddubsw's
 * int16 pairs, summed in int16 where that is exact, then widened by vpmaddwd. */

/* The 8 rows' exact integer dot products of unpacked nibbles w with the block xb, less off
 * (Q4_0's 8 x the activations' sum). */
T_AVX2 INLINE __m256i nib_isum_avx2(const __m256i *w, const kern_q8_block *xb, int32_t off) {
    __m256i s = _mm256_maddubs_epi16(w[0], chunk_bc_avx2(xb, 0));
#pragma GCC unroll 8
    for (int k = 1; k < 8; k++) /* |sum| <= 8 * 2 * 15 * 127 < 32768: exact in int16 */
        s = _mm256_add_epi16(s, _mm256_maddubs_epi16(w[k], chunk_bc_avx2(xb, k)));
    return _mm256_sub_epi32(_mm256_madd_epi16(s, _mm256_set1_epi16(1)), _mm256_set1_epi32(off));
}

/* nib_isum_avx2 of the block's packed nibbles q, against the activation chunks broadcast,
 * each 32 bytes unpacked as they are multiplied: nib_unpack_avx2 then a sum over its eight
 * registers (the tiles' way) spills beside decode's four accumulators and eight broadcasts
 * (in-cache Q4_0 GEMV 17.6 vs 12.9 ns a block of 8 rows on a first-generation EPYC). */
T_AVX2 INLINE __m256i nib_isum_bc_avx2(const uint8_t *q, const __m256i *bc, int32_t off) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i s = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(q + 32 * k));
        s = _mm256_add_epi16(s, _mm256_maddubs_epi16(_mm256_and_si256(v, m4), bc[k]));
        s = _mm256_add_epi16(s, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4), bc[k + 4]));
    }
    return _mm256_sub_epi32(_mm256_madd_epi16(s, _mm256_set1_epi16(1)), _mm256_set1_epi32(off));
}

/* Q8_0: chunk k of a block's weights as the tiles keep it, |w|; q8_isum_avx2 multiplies it
 * by x with w's sign (the pairs, up to 2 * 128 * 127, widened one by one). */
T_AVX2 INLINE __m256i q8_load_avx2(const pk_q8_0 *p, int k) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(p->q + 32 * k));
    return _mm256_sign_epi8(v, v);
}

T_AVX2 INLINE __m256i q8_isum_avx2(const pk_q8_0 *p, const __m256i *aw, const __m256i *bc, const kern_q8_block *xb) {
    (void)xb;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i is = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        __m256i sx = _mm256_sign_epi8(bc[k], _mm256_loadu_si256((const __m256i *)(p->q + 32 * k)));
        is = _mm256_add_epi32(is, _mm256_madd_epi16(_mm256_maddubs_epi16(aw[k], sx), ones));
    }
    return is;
}

/* Q6_K at AVX2: the unsigned quants q against the signed activations (vpmaddubsw), per half
 * scaled by its int8 scale, less 32 * the scaled activation sums: sc0 * h0 + sc1 * h1
 * exactly, h the halves' sums of (q - 32) * x, kept in int32 (q6_sum_avx2). A sub-block's
 * two runs of 8 rows' scales (a = sc[2 sb], b = sc[2 sb + 1], adjacent) as int16 pairs in
 * each row's 32-bit lane: i[0] = (a, a), i[1] = (b, b) for vpmaddwd against a half's sums,
 * i[2] = (32 a, 32 b) for q6_start_avx2. One load. */
typedef struct q6_sc_avx2 {
    __m256i i[3];
} q6_sc_avx2;
typedef __m256i q6_sum_avx2;

T_AVX2 INLINE void q6_scales_avx2(const int8_t *a, q6_sc_avx2 *sc) {
    __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a)); /* a0..a7, b0..b7 */
    __m256i va = _mm256_permute4x64_epi64(v, 0x10), vb = _mm256_permute4x64_epi64(v, 0x32); /* rows 0-3 | 4-7 */
    sc->i[0] = _mm256_unpacklo_epi16(va, va);
    sc->i[1] = _mm256_unpacklo_epi16(vb, vb);
    sc->i[2] = _mm256_slli_epi16(_mm256_unpacklo_epi16(va, vb), 5);
}

/* Q6_K's offset of 32, per row: 32 * (sc0 * (sum of x over elements 0..15) + sc1 * (16..31))
 * by one vpmaddwd of the rows' (32 sc0, 32 sc1) pairs (|32 sc| <= 4096) and xb's half sums
 * (|sum| <= 16 * 127), negated: the start of the block's sum. */
T_AVX2 INLINE q6_sum_avx2 q6_start_avx2(const q6_sc_avx2 *sc, const kern_q8_block *xb) {
    uint32_t xs = (uint16_t)xb->sum_lo | (uint32_t)(uint16_t)(xb->sum - xb->sum_lo) << 16;
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_madd_epi16(sc->i[2], _mm256_set1_epi32((int32_t)xs)));
}

/* s + sc * (the sum over half c's 4 chunks of quants w times activations bc) per row: the
 * chunks two at a time in int16 (<= 2 * 2 * 63 * 127 < 32768), scaled by vpmaddwd. */
T_AVX2 INLINE q6_sum_avx2 q6_half_avx2(q6_sum_avx2 s, const __m256i *w, const __m256i *bc, const q6_sc_avx2 *sc,
                                       int c, const kern_q8_block *xb) {
    (void)xb;
    __m256i p0 = _mm256_add_epi16(_mm256_maddubs_epi16(w[0], bc[0]), _mm256_maddubs_epi16(w[1], bc[1]));
    __m256i p1 = _mm256_add_epi16(_mm256_maddubs_epi16(w[2], bc[2]), _mm256_maddubs_epi16(w[3], bc[3]));
    return _mm256_add_epi32(s, _mm256_add_epi32(_mm256_madd_epi16(p0, sc->i[c]), _mm256_madd_epi16(p1, sc->i[c])));
}

/* The block's sum as a float (exact: |sc0 * h0 + sc1 * h1| < 2^24). */
T_AVX2 INLINE __m256 q6_value_avx2(q6_sum_avx2 s) { return _mm256_cvtepi32_ps(s); }

#define YMM(name) name##_avx2
#define T_YMM T_AVX2
#include "engine/kernels_pack_ymm.inc" /* which #undefs both */

/* ---------------- AVX-VNNI: vpdpbusd on 256-bit registers, 8 rows per register ----------------
 * Intel's client cores from Alder Lake on have it without AVX-512. The same kernels as AVX2's
 * (kernels_pack_ymm.inc) with these integer steps: each chunk one vpdpbusd into int32 (AVX2:
 * vpmaddubsw, an int16 add, and vpmaddwd every block or chunk). */
#define T_AVXVNNI __attribute__((target("avx2,fma,f16c,avxvnni")))

/* init + the sum over k = k0 .. k0 + n - 1 of vpdpbusd(u[k], s[k]) (u unsigned, s signed),
 * in two chains (dp_chains' reason); the sums are integers, so the split changes no bit. */
T_AVXVNNI INLINE __m256i dp_chains_avxvnni(__m256i init, const __m256i *u, const __m256i *s, int k0, int n) {
    __m256i c0 = init, c1 = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int k = k0; k < k0 + n; k += 2) {
        c0 = _mm256_dpbusd_avx_epi32(c0, u[k], s[k]);
        c1 = _mm256_dpbusd_avx_epi32(c1, u[k + 1], s[k + 1]);
    }
    return _mm256_add_epi32(c0, c1);
}

T_AVXVNNI INLINE __m256i nib_isum_avxvnni(const __m256i *w, const kern_q8_block *xb, int32_t off) {
    __m256i bc[8];
    chunks_bc_avx2(xb, bc);
    return dp_chains_avxvnni(_mm256_set1_epi32(-off), w, bc, 0, 8);
}

/* Decode's nibbles: the high ones masked in place (16 x their value) into a chain of their
 * own, shifted down once per block, as nib_dp_vnni. */
T_AVXVNNI INLINE __m256i nib_isum_bc_avxvnni(const uint8_t *q, const __m256i *bc, int32_t off) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), h4 = _mm256_set1_epi8((char)0xF0);
    __m256i lo = _mm256_set1_epi32(-off), hi = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(q + 32 * k));
        lo = _mm256_dpbusd_avx_epi32(lo, _mm256_and_si256(v, m4), bc[k]);
        hi = _mm256_dpbusd_avx_epi32(hi, _mm256_and_si256(v, h4), bc[k + 4]);
    }
    return _mm256_add_epi32(lo, _mm256_srai_epi32(hi, 4));
}

/* Q8_0: the weights made unsigned (q + 128) as they are loaded, as q8_load_vnni; 128 * the
 * activations' sum comes off. */
T_AVXVNNI INLINE __m256i q8_load_avxvnni(const pk_q8_0 *p, int k) {
    return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(p->q + 32 * k)), _mm256_set1_epi8((char)0x80));
}

T_AVXVNNI INLINE __m256i q8_isum_avxvnni(const pk_q8_0 *p, const __m256i *aw, const __m256i *bc,
                                         const kern_q8_block *xb) {
    (void)p;
    return dp_chains_avxvnni(_mm256_set1_epi32(-128 * xb->sum), aw, bc, 0, 8);
}

/* Q6_K: each half's sum h of (q - 32) * x in int32 (its offset starts the chain) and then as
 * a float, times the rows' scales as floats (q6_mix's steps): the same exact value as AVX2's
 * int32 sum. In integers (vpmulld) the 4-token tile ran 11 % slower in cache. */
typedef struct q6_sc_avxvnni {
    __m256 f[2];
} q6_sc_avxvnni;
typedef __m256 q6_sum_avxvnni;

T_AVXVNNI INLINE void q6_scales_avxvnni(const int8_t *a, q6_sc_avxvnni *sc) {
#pragma GCC unroll 2
    for (int c = 0; c < 2; c++)
        sc->f[c] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(a + 8 * c))));
}

T_AVXVNNI INLINE q6_sum_avxvnni q6_start_avxvnni(const q6_sc_avxvnni *sc, const kern_q8_block *xb) {
    (void)sc, (void)xb;
    return _mm256_setzero_ps();
}

/* s + h * sc for half c: h0 * sc0 first (s is zero), then + h1 * sc1, as q6_mix. */
T_AVXVNNI INLINE q6_sum_avxvnni q6_half_avxvnni(q6_sum_avxvnni s, const __m256i *w, const __m256i *bc,
                                                const q6_sc_avxvnni *sc, int c, const kern_q8_block *xb) {
    int32_t xs = c ? xb->sum - xb->sum_lo : xb->sum_lo;
    __m256 h = _mm256_cvtepi32_ps(dp_chains_avxvnni(_mm256_set1_epi32(-32 * xs), w, bc, 0, 4));
    return c == 0 ? _mm256_mul_ps(h, sc->f[0]) : _mm256_fmadd_ps(h, sc->f[1], s);
}

T_AVXVNNI INLINE __m256 q6_value_avxvnni(q6_sum_avxvnni s) { return s; }

#define YMM(name) name##_avxvnni
#define T_YMM T_AVXVNNI
#include "engine/kernels_pack_ymm.inc" /* which #undefs both */

/* ---------------- AVX-512 VNNI: two groups (16 rows) per register ---------------- */

#define TILE_TOKENS_VNNI 8

/* chunk_bc_avx2 in a 512-bit register. */
T_VNNI INLINE __m512i chunk_bc_vnni(const kern_q8_block *xb, int k) {
    return _mm512_set1_epi32(load_i32(xb->qs + 4 * k));
}

/* init + the sum over k = k0, k0 + 1, .. k0 + n - 1 of vpdpbusd(u[k], s[k]) (u unsigned, s
 * signed) in two chains. A decode pass has only its pairs' chains to interleave, and one
 * chain of eight would wait on vpdpbusd's latency; the sums are integers, so the split
 * changes no bit. init is where an offset comes off (a subtraction fewer). */
T_VNNI INLINE __m512i dp_chains(__m512i init, const __m512i *u, const __m512i *s, int k0, int n) {
    __m512i c0 = init, c1 = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = k0; k < k0 + n; k += 2) {
        c0 = _mm512_dpbusd_epi32(c0, u[k], s[k]);
        c1 = _mm512_dpbusd_epi32(c1, u[k + 1], s[k + 1]);
    }
    return _mm512_add_epi32(c0, c1);
}

/* Groups a and b (adjacent: rows 8g..8g+15) times rn tokens. vpdpbusd takes the unsigned
 * bytes w (nibbles; Q8_0's quants + 128) against the signed activations, from -off (the
 * offset: Q4_0's 8, Q8_0's 128 x the activations' sum): the sums are the AVX2 kernel's. */
T_VNNI INLINE __m512i u8_isum_vnni(const __m512i *w, const kern_q8_block *xb, int32_t off) {
    __m512i s = _mm512_set1_epi32(-off);
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++)
        s = _mm512_dpbusd_epi32(s, w[k], chunk_bc_vnni(xb, k));
    return s;
}

T_VNNI INLINE void q4_0_vnni_tile(const pk_q4_0 *pa, const pk_q4_0 *pb, int nblk, const kern_q8_block *const *x,
                                  const int rn, float *const *o, int valid) {
    const unsigned char *ga = (const unsigned char *)pa, *gb = (const unsigned char *)pb;
    size_t gsz = (size_t)(gb - ga);
    __m512 acc[TILE_TOKENS_VNNI];
    for (int t = 0; t < TILE_TOKENS_VNNI; t++)
        acc[t] = _mm512_setzero_ps();
    for (int b = 0; b < nblk; b++, pa++, pb++) {
        __m512i w[8];
        prefetch_pass(GGML_TYPE_Q4_0, ga, gsz, b, gsz);
        prefetch_pass(GGML_TYPE_Q4_0, gb, gsz, b, gsz);
        nib_unpack_vnni(pa->q, pb->q, w);
        __m512 dw = scales_2x8(pa->d, pb->d);
#pragma GCC unroll 8
        for (int t = 0; t < rn; t++) {
            const kern_q8_block *xb = &x[t][b];
            __m512i s = u8_isum_vnni(w, xb, 8 * xb->sum);
            acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(xb->d)), _mm512_cvtepi32_ps(s), acc[t]);
        }
    }
    for (int t = 0; t < rn; t++)
        store16(o[t], valid, acc[t]);
}

T_VNNI INLINE void q4_K_vnni_tile(const pk_q4_K *pa, const pk_q4_K *pb, int nsup, const kern_q8_block *const *x,
                                  const int rn, float *const *o, int valid) {
    const unsigned char *ga = (const unsigned char *)pa, *gb = (const unsigned char *)pb;
    size_t gsz = (size_t)(gb - ga);
    __m512 acc[TILE_TOKENS_VNNI];
    for (int t = 0; t < TILE_TOKENS_VNNI; t++)
        acc[t] = _mm512_setzero_ps();
    for (int b = 0; b < nsup; b++, pa++, pb++) {
        __m512 dv = scales_2x8(pa->d, pb->d), mv = scales_2x8(pa->dmin, pb->dmin);
        for (int sb = 0; sb < 8; sb++) {
            __m512i w[8];
            prefetch_pass(GGML_TYPE_Q4_K, ga, gsz, 8 * b + sb, gsz);
            prefetch_pass(GGML_TYPE_Q4_K, gb, gsz, 8 * b + sb, gsz);
            nib_unpack_vnni(pa->q[sb], pb->q[sb], w);
            __m512 ds = _mm512_mul_ps(dv, u8x16_ps(pa->sc[sb], pb->sc[sb]));
            __m512 dm = _mm512_mul_ps(mv, u8x16_ps(pa->m[sb], pb->m[sb]));
#pragma GCC unroll 8
            for (int t = 0; t < rn; t++) {
                const kern_q8_block *xb = &x[t][b * 8 + sb];
                __m512 v = _mm512_fmsub_ps(ds, _mm512_cvtepi32_ps(u8_isum_vnni(w, xb, 0)),
                                           _mm512_mul_ps(dm, _mm512_set1_ps((float)xb->sum)));
                acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(xb->d), v, acc[t]);
            }
        }
    }
    for (int t = 0; t < rn; t++)
        store16(o[t], valid, acc[t]);
}

/* Q8_0: the weights made unsigned (q + 128, by flipping the top bit) as they are loaded,
 * against the signed activations; 128 * the activations' sum comes off again. (Before,
 * the activations were flipped, for each token, and 128 * the weights' sum taken off by
 * eight more vpdpbusd a block: the 8-token tile ran at 185-190 GB/s in cache on one
 * Emerald Rapids core, now 201-208; stored flipped, the AVX2 kernels lost 6 %.) */
T_VNNI INLINE __m512i q8_load_vnni(const pk_q8_0 *pa, const pk_q8_0 *pb, int k) {
    return _mm512_xor_si512(load_2x256(pa->q + 32 * k, pb->q + 32 * k), _mm512_set1_epi8((char)0x80));
}

T_VNNI INLINE void q8_0_vnni_tile(const pk_q8_0 *pa, const pk_q8_0 *pb, int nblk, const kern_q8_block *const *x,
                                  const int rn, float *const *o, int valid) {
    const unsigned char *ga = (const unsigned char *)pa, *gb = (const unsigned char *)pb;
    size_t gsz = (size_t)(gb - ga);
    __m512 acc[TILE_TOKENS_VNNI];
    for (int t = 0; t < TILE_TOKENS_VNNI; t++)
        acc[t] = _mm512_setzero_ps();
    for (int b = 0; b < nblk; b++, pa++, pb++) {
        __m512i w[8];
        prefetch_pass(GGML_TYPE_Q8_0, ga, gsz, b, gsz);
        prefetch_pass(GGML_TYPE_Q8_0, gb, gsz, b, gsz);
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++)
            w[k] = q8_load_vnni(pa, pb, k);
        __m512 dw = scales_2x8(pa->d, pb->d);
#pragma GCC unroll 8
        for (int t = 0; t < rn; t++) {
            const kern_q8_block *xb = &x[t][b];
            __m512i s = u8_isum_vnni(w, xb, 128 * xb->sum);
            acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(xb->d)), _mm512_cvtepi32_ps(s), acc[t]);
        }
    }
    for (int t = 0; t < rn; t++)
        store16(o[t], valid, acc[t]);
}

/* Q6_K's halves' sums h of (q - 32) * x as floats (exact: |h| <= 16 * 32 * 127): vpdpbusd of
 * the unsigned quants w against the activations bc, less 32 * the half's activation sum. */
T_VNNI INLINE void q6_halves_vnni(const __m512i *w, const __m512i *bc, const kern_q8_block *xb, __m512 *h) {
    h[0] = _mm512_cvtepi32_ps(dp_chains(_mm512_set1_epi32(-32 * xb->sum_lo), w, bc, 0, 4));
    h[1] = _mm512_cvtepi32_ps(dp_chains(_mm512_set1_epi32(-32 * (xb->sum - xb->sum_lo)), w, bc, 4, 4));
}

/* Q6_K: the halves' sums (q6_halves_vnni) times the rows' int8 scales (q6_mix). */
T_VNNI INLINE void q6_K_vnni_tile(const pk_q6_K *pa, const pk_q6_K *pb, int nsup, const kern_q8_block *const *x,
                                  const int rn, float *const *o, int valid) {
    const unsigned char *ga = (const unsigned char *)pa, *gb = (const unsigned char *)pb;
    size_t gsz = (size_t)(gb - ga);
    __m512 acc[TILE_TOKENS_VNNI];
    for (int t = 0; t < TILE_TOKENS_VNNI; t++)
        acc[t] = _mm512_setzero_ps();
    for (int b = 0; b < nsup; b++, pa++, pb++) {
        __m512 dw = scales_2x8(pa->d, pb->d);
        for (int sb = 0; sb < 8; sb++) {
            __m512i w[8];
            prefetch_pass(GGML_TYPE_Q6_K, ga, gsz, 8 * b + sb, gsz);
            prefetch_pass(GGML_TYPE_Q6_K, gb, gsz, 8 * b + sb, gsz);
            q6_unpack_vnni(pa->q[sb], pb->q[sb], w);
            __m512 sc0 = i8x16_ps(pa->sc[2 * sb], pb->sc[2 * sb]);
            __m512 sc1 = i8x16_ps(pa->sc[2 * sb + 1], pb->sc[2 * sb + 1]);
#pragma GCC unroll 8
            for (int t = 0; t < rn; t++) {
                const kern_q8_block *xb = &x[t][b * 8 + sb];
                __m512i bc[8];
                __m512 h[2];
#pragma GCC unroll 8
                for (int k = 0; k < 8; k++)
                    bc[k] = chunk_bc_vnni(xb, k);
                q6_halves_vnni(w, bc, xb, h);
                acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(xb->d)), q6_mix(h[0], h[1], sc0, sc1), acc[t]);
            }
        }
    }
    for (int t = 0; t < rn; t++)
        store16(o[t], valid, acc[t]);
}

/* u8_isum_vnni of two groups' nibble blocks against the activation chunks bc, unpacked as
 * decode needs them: the high nibbles masked in place (16 x their value) into a chain of
 * their own, whose sum, a multiple of 16, is shifted back down; exact (|sum| < 2^21), and
 * one shift a block instead of one a register. */
T_VNNI INLINE __m512i nib_dp_vnni(const uint8_t *qa, const uint8_t *qb, const __m512i *bc, int32_t off) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), h4 = _mm512_set1_epi8((char)0xF0);
    __m512i lo = _mm512_set1_epi32(-off), hi = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        __m512i v = load_2x256(qa + 32 * k, qb + 32 * k);
        lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, m4), bc[k]);
        hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(v, h4), bc[k + 4]);
    }
    return _mm512_add_epi32(lo, _mm512_srai_epi32(hi, 4));
}

/* One pair's block b (of 32 elements; Q4_K and Q6_K: sub-block b % 8 of super-block b / 8)
 * times the block xb, whose chunks bc holds broadcast, added to acc: each type's tile's
 * steps for one token, so the bits are the tile's. sd, sm: the super-block's d and dmin of
 * both groups (Q4_K, Q6_K), made once per super-block by the caller. */
T_VNNI INLINE __m512 vnni_step(ggml_type t, const unsigned char *ga, const unsigned char *gb, size_t gsz, int b,
                               const kern_q8_block *xb, const __m512i *bc, __m512 sd, __m512 sm, __m512 acc) {
    prefetch_pass(t, ga, gsz, b, (GEMV_GROUPS - 1) * gsz);
    prefetch_pass(t, gb, gsz, b, (GEMV_GROUPS - 1) * gsz);
    __m512 dx = _mm512_set1_ps(xb->d);
    __m512i w[8], s;
    if (t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_K) {
        const uint8_t *qa, *qb;
        if (t == GGML_TYPE_Q4_0)
            qa = ((const pk_q4_0 *)ga + b)->q, qb = ((const pk_q4_0 *)gb + b)->q;
        else
            qa = ((const pk_q4_K *)ga + b / 8)->q[b % 8], qb = ((const pk_q4_K *)gb + b / 8)->q[b % 8];
        s = nib_dp_vnni(qa, qb, bc, t == GGML_TYPE_Q4_0 ? 8 * xb->sum : 0);
        if (t == GGML_TYPE_Q4_0) {
            const pk_q4_0 *pa = (const pk_q4_0 *)ga + b, *pb = (const pk_q4_0 *)gb + b;
            return _mm512_fmadd_ps(_mm512_mul_ps(scales_2x8(pa->d, pb->d), dx), _mm512_cvtepi32_ps(s), acc);
        }
        const pk_q4_K *pa = (const pk_q4_K *)ga + b / 8, *pb = (const pk_q4_K *)gb + b / 8;
        int sb = b % 8;
        __m512 ds = _mm512_mul_ps(sd, u8x16_ps(pa->sc[sb], pb->sc[sb]));
        __m512 dm = _mm512_mul_ps(sm, u8x16_ps(pa->m[sb], pb->m[sb]));
        __m512 v = _mm512_fmsub_ps(ds, _mm512_cvtepi32_ps(s), _mm512_mul_ps(dm, _mm512_set1_ps((float)xb->sum)));
        return _mm512_fmadd_ps(dx, v, acc);
    }
    if (t == GGML_TYPE_Q6_K) { /* the tile's steps */
        const pk_q6_K *pa = (const pk_q6_K *)ga + b / 8, *pb = (const pk_q6_K *)gb + b / 8;
        int sb = b % 8;
        __m512 h[2];
        q6_unpack_vnni(pa->q[sb], pb->q[sb], w);
        q6_halves_vnni(w, bc, xb, h);
        __m512 sc0 = i8x16_ps(pa->sc[2 * sb], pb->sc[2 * sb]);
        __m512 sc1 = i8x16_ps(pa->sc[2 * sb + 1], pb->sc[2 * sb + 1]);
        return _mm512_fmadd_ps(_mm512_mul_ps(sd, dx), q6_mix(h[0], h[1], sc0, sc1), acc);
    }
    /* Q8_0: the tile's steps */
    const pk_q8_0 *pa = (const pk_q8_0 *)ga + b, *pb = (const pk_q8_0 *)gb + b;
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++)
        w[k] = q8_load_vnni(pa, pb, k);
    s = dp_chains(_mm512_set1_epi32(-128 * xb->sum), w, bc, 0, 8);
    return _mm512_fmadd_ps(_mm512_mul_ps(scales_2x8(pa->d, pb->d), dx), _mm512_cvtepi32_ps(s), acc);
}

/* Decode (one token) over GEMV_GROUPS groups a pass (two pairs), as the AVX2 kernel takes
 * them: a block's broadcasts are made once for both pairs, and four groups' weights stream
 * at once; the K-quants' super-block scales once per super-block. The tiles (one pair a
 * pass) decoded Q4_0 slower than the AVX2 kernel at one thread on a 16-core Xeon (Sapphire
 * Rapids). This pass against the tiles there, 1B models, medians of 4 interleaved pairs at
 * 1 / 2 / 16 threads: Q4_0 1.06 / 1.08 / 1.05, Q4_K 1.10 / 1.08 / 0.98, Q8_0 1.07 / 1.08 /
 * 1.03. */
T_VNNI INLINE void vnni_gemv(ggml_type t, const unsigned char *P, size_t gb, int nblk, const kern_q8_block *x,
                             float *o, int valid) {
    enum { PAIRS = GEMV_GROUPS / 2 };
    const bool kq = t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q6_K;
    const int span = kq ? 8 : 1; /* blocks a super-block */
    __m512 acc[PAIRS], sd[PAIRS], sm[PAIRS];
    for (int p = 0; p < PAIRS; p++)
        acc[p] = sd[p] = sm[p] = _mm512_setzero_ps();
    for (int b0 = 0; b0 < nblk; b0 += span) {
        for (int p = 0; p < PAIRS && kq; p++) {
            const unsigned char *ga = P + (size_t)(2 * p) * gb, *gc = ga + gb;
            if (t == GGML_TYPE_Q4_K) {
                const pk_q4_K *pa = (const pk_q4_K *)ga + b0 / 8, *pc = (const pk_q4_K *)gc + b0 / 8;
                sd[p] = scales_2x8(pa->d, pc->d);
                sm[p] = scales_2x8(pa->dmin, pc->dmin);
            } else {
                sd[p] = scales_2x8(((const pk_q6_K *)ga + b0 / 8)->d, ((const pk_q6_K *)gc + b0 / 8)->d);
            }
        }
        for (int b = b0; b < b0 + span; b++) {
            __m512i bc[8];
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++)
                bc[k] = chunk_bc_vnni(&x[b], k);
#pragma GCC unroll 2
            for (int p = 0; p < PAIRS; p++)
                acc[p] = vnni_step(t, P + (size_t)(2 * p) * gb, P + (size_t)(2 * p + 1) * gb, gb, b, &x[b], bc, sd[p],
                                   sm[p], acc[p]);
        }
    }
    for (int p = 0; p < PAIRS; p++)
        store16(o + 16 * p, valid - 16 * p, acc[p]);
}

/* Pairs of groups with VNNI (decode: four groups a pass); an odd last group goes through
 * the AVX2 kernel, whose results are the same. */
T_VNNI void kern_gemm_vnni(ggml_type t, const void *P, int nblk, int n_out, int g0, int g1, const unsigned char *act,
                             size_t act_stride, int nb, float *out, int ldo) {
    size_t gb = kern_pack_group_bytes(t, nblk * 32);
    int g = g0;
    for (; nb == 1 && g + GEMV_GROUPS <= g1; g += GEMV_GROUPS)
        PER_PACKED_TYPE(t, vnni_gemv, (const unsigned char *)P + (size_t)g * gb, gb, nblk, (const kern_q8_block *)act,
                        out + (size_t)g * 8, n_out - g * 8);
    for (; g + 2 <= g1; g += 2) {
        const unsigned char *pa = (const unsigned char *)P + (size_t)g * gb, *pb = pa + gb;
        int valid = n_out - g * 8;
        for (int t0 = 0; t0 < nb; t0 += TILE_TOKENS_VNNI) {
            int rn = nb - t0 < TILE_TOKENS_VNNI ? nb - t0 : TILE_TOKENS_VNNI;
            const kern_q8_block *x[TILE_TOKENS_VNNI];
            float *o[TILE_TOKENS_VNNI];
            tile_rows(act, act_stride, out, ldo, g, t0, rn, x, o);
#define TILE_CASE(n)                                                                                 \
    case n:                                                                                          \
        if (t == GGML_TYPE_Q4_0)                                                                     \
            q4_0_vnni_tile((const pk_q4_0 *)pa, (const pk_q4_0 *)pb, nblk, x, n, o, valid);          \
        else if (t == GGML_TYPE_Q4_K)                                                                \
            q4_K_vnni_tile((const pk_q4_K *)pa, (const pk_q4_K *)pb, nblk / 8, x, n, o, valid);      \
        else if (t == GGML_TYPE_Q6_K)                                                                \
            q6_K_vnni_tile((const pk_q6_K *)pa, (const pk_q6_K *)pb, nblk / 8, x, n, o, valid);      \
        else                                                                                         \
            q8_0_vnni_tile((const pk_q8_0 *)pa, (const pk_q8_0 *)pb, nblk, x, n, o, valid);          \
        break;
            switch (rn) {
                TILE_CASE(1)
                TILE_CASE(2)
                TILE_CASE(3)
                TILE_CASE(4)
                TILE_CASE(5)
                TILE_CASE(6)
                TILE_CASE(7)
                TILE_CASE(8)
            }
#undef TILE_CASE
        }
    }
    if (g < g1)
        gemm_avx2(t, P, nblk, n_out, g, g1, act, act_stride, nb, out, ldo);
}

#endif

/* ---------------- dispatch ---------------- */

void kern_gemm_packed(ggml_type t, const void *P, int n_in, int n_out, int g0, int g1, const void *act,
                      size_t act_stride, int nb, float *out, int ldo) {
    if (t == GGML_TYPE_F16) {
        kern_f16_gemm_packed(P, n_in, n_out, g0, g1, act, act_stride, nb, out, ldo);
        return;
    }
    int nblk = n_in / 32;
#ifdef KERN_X86
    if (kern_get_level() >= KERN_AMX && nb >= 16) {
        kern_gemm_amx(t, P, nblk, n_out, g0, g1, act, act_stride, nb, out, ldo);
        return;
    }
    if (kern_get_level() >= KERN_VNNI) {
        kern_gemm_vnni(t, P, nblk, n_out, g0, g1, act, act_stride, nb, out, ldo);
        return;
    }
    if (kern_get_level() == KERN_AVXVNNI) {
        gemm_avxvnni(t, P, nblk, n_out, g0, g1, act, act_stride, nb, out, ldo);
        return;
    }
    if (kern_get_level() >= KERN_AVX2) {
        gemm_avx2(t, P, nblk, n_out, g0, g1, act, act_stride, nb, out, ldo);
        return;
    }
#endif
    for (int g = g0; g < g1; g++)
        gemm_scalar(t, P, nblk, n_out, g, act, act_stride, nb, out, ldo);
}
