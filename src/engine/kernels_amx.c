/* kernels_amx.c - packed matrices times batches of 16 tokens with AMX-INT8 tiles.
 * Per 32-element block: A = 16 tokens' activation quants (tile rows read straight from the
 * activation rows), B = the two groups' weights, which in the packed layout already are
 * AMX's B format (row k of B = element quad k of all 16 rows, 4 bytes a row; Q4_0 staged
 * as nibble - 8, signed); C[token][row] = the exact integer sums the VNNI kernel computes
 * (Q6_K: one C per 16-element half, as its two scales need), so the float steps after it,
 * per token and block in order, are the VNNI kernel's and the results equal it bit for bit. */
#include "engine/kernels.h"
#include "engine/kernels_pack.h"

#include <stddef.h>
#include <string.h>

#ifdef KERN_X86

#define T_AMX __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

typedef struct amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_cfg;

/* Two tile sets (0-2 and 3-5: A, B, C) let two multiplies overlap. A block is one multiply
 * of 32 quants (8 element quads); Q6_K's halves are two of 16 (4 quads). */
T_AMX static void amx_config(ggml_type t) {
    int quads = t == GGML_TYPE_Q6_K ? 4 : 8;
    amx_cfg c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int u = 0; u < 2; u++) {
        c.rows[3 * u] = 16; /* A: 16 tokens x the quants */
        c.colsb[3 * u] = (uint16_t)(4 * quads);
        c.rows[3 * u + 1] = (uint8_t)quads; /* B: element quads x 16 rows x 4 bytes */
        c.colsb[3 * u + 1] = 64;
        c.rows[3 * u + 2] = 16; /* C: 16 tokens x 16 rows, int32 */
        c.colsb[3 * u + 2] = 64;
    }
    /* ldtilecfg reads all 64 bytes; the operand says so (GCC 12's _tile_loadconfig names only
     * the first 8, which lets a compiler drop the stores of the rows and widths as dead). */
    __asm__ volatile("ldtilecfg %0" ::"m"(c));
}

/* Blocks of a group pair staged at once (32 KB of B tiles), reused by every 16 tokens. */
#define AMX_CHUNK 64
/* C tiles stored before the float steps pass over them token by token (a block's one, or
 * Q6_K's two). */
#define AMX_SUB 8

/* A chunk's staged weights: per block its B tile (8 rows of 64 bytes) and the 16 rows'
 * scales (Q4_0, Q8_0, Q6_K: d as floats; Q4_K: the sub-block's d * scale, then dmin * min,
 * as floats; Q6_K also its two int8 scales, as floats). */
typedef struct amx_stage {
    _Alignas(64) unsigned char b[AMX_CHUNK][512];
    _Alignas(64) float s[AMX_CHUNK][32];
    _Alignas(64) float si[AMX_CHUNK][32];
} amx_stage;

/* Block b of groups pa, pb as block i of the stage. */
T_AMX INLINE void amx_stage_b(ggml_type t, const unsigned char *pa, const unsigned char *pb, int b, amx_stage *st,
                              int i) {
    __m512i w[8];
    float *sc = st->s[i];
    if (t == GGML_TYPE_Q8_0) {
        const pk_q8_0 *a = (const pk_q8_0 *)pa + b, *c = (const pk_q8_0 *)pb + b;
        for (int k = 0; k < 8; k++)
            w[k] = load_2x256(a->q + 32 * k, c->q + 32 * k);
        _mm512_store_ps(sc, scales_2x8(a->d, c->d));
    } else if (t == GGML_TYPE_Q4_0) { /* nibble - 8, so the tile sum is the block's integer sum */
        const pk_q4_0 *a = (const pk_q4_0 *)pa + b, *c = (const pk_q4_0 *)pb + b;
        nib_unpack_vnni(a->q, c->q, w);
        for (int k = 0; k < 8; k++)
            w[k] = _mm512_sub_epi8(w[k], _mm512_set1_epi8(8));
        _mm512_store_ps(sc, scales_2x8(a->d, c->d));
    } else if (t == GGML_TYPE_Q4_K) {
        const pk_q4_K *a = (const pk_q4_K *)pa + b / 8, *c = (const pk_q4_K *)pb + b / 8;
        nib_unpack_vnni(a->q[b % 8], c->q[b % 8], w);
        _mm512_store_ps(sc, _mm512_mul_ps(scales_2x8(a->d, c->d), u8x16_ps(a->sc[b % 8], c->sc[b % 8])));
        _mm512_store_ps(sc + 16, _mm512_mul_ps(scales_2x8(a->dmin, c->dmin), u8x16_ps(a->m[b % 8], c->m[b % 8])));
    } else { /* Q6_K: the quants unpacked, less 32: the values, signed */
        const pk_q6_K *a = (const pk_q6_K *)pa + b / 8, *c = (const pk_q6_K *)pb + b / 8;
        int sb = b % 8;
        q6_unpack_vnni(a->q[sb], c->q[sb], w);
        for (int k = 0; k < 8; k++)
            w[k] = _mm512_sub_epi8(w[k], _mm512_set1_epi8(32));
        _mm512_store_ps(sc, scales_2x8(a->d, c->d));
        for (int h = 0; h < 2; h++)
            _mm512_store_ps(st->si[i] + 16 * h, i8x16_ps(a->sc[2 * sb + h], c->sc[2 * sb + h]));
    }
    for (int k = 0; k < 8; k++)
        _mm512_store_si512((__m512i *)(st->b[i] + 64 * k), w[k]);
}

#define AMX_DP(t, c, a, b)         \
    do {                           \
        if ((t) != GGML_TYPE_Q4_K) \
            _tile_dpbssd(c, a, b); \
        else                       \
            _tile_dpbsud(c, a, b); \
    } while (0)

T_AMX INLINE __m512 load16(const float *o, int valid) {
    return valid >= 16 ? _mm512_loadu_ps(o) : _mm512_maskz_loadu_ps((__mmask16)((1u << valid) - 1), o);
}

/* Stage blocks i0 .. i0+ns-1 (the matrix's blocks b0+i0 ..) times 16 tokens (quants at a0,
 * rows `stride` apart): C tiles, 16 tokens x 16 rows of int32 each, stored to cb (Q6_K:
 * block i's halves to cb[2i], cb[2i + 1]). */
T_AMX INLINE void amx_mul_sub(ggml_type t, const amx_stage *st, int b0, int i0, int ns, const unsigned char *a0,
                              long stride, int32_t (*cb)[256]) {
    const unsigned char *a = a0 + (size_t)(b0 + i0) * sizeof(kern_q8_block);
    int i = 0;
    if (t == GGML_TYPE_Q6_K) {
        for (; i < ns; i++) {
            const unsigned char *ai = a + (size_t)i * sizeof(kern_q8_block);
            _tile_loadd(0, ai, stride);
            _tile_loadd(1, st->b[i0 + i], 64);
            _tile_zero(2);
            _tile_dpbssd(2, 0, 1);
            _tile_loadd(3, ai + 16, stride);
            _tile_loadd(4, st->b[i0 + i] + 256, 64);
            _tile_zero(5);
            _tile_dpbssd(5, 3, 4);
            _tile_stored(2, cb[2 * i], 64);
            _tile_stored(5, cb[2 * i + 1], 64);
        }
        return;
    }
    for (; i + 2 <= ns; i += 2) {
        _tile_loadd(0, a + (size_t)i * sizeof(kern_q8_block), stride);
        _tile_loadd(1, st->b[i0 + i], 64);
        _tile_zero(2);
        AMX_DP(t, 2, 0, 1);
        _tile_loadd(3, a + (size_t)(i + 1) * sizeof(kern_q8_block), stride);
        _tile_loadd(4, st->b[i0 + i + 1], 64);
        _tile_zero(5);
        AMX_DP(t, 5, 3, 4);
        _tile_stored(2, cb[i], 64);
        _tile_stored(5, cb[i + 1], 64);
    }
    if (i < ns) {
        _tile_loadd(0, a + (size_t)i * sizeof(kern_q8_block), stride);
        _tile_loadd(1, st->b[i0 + i], 64);
        _tile_zero(2);
        AMX_DP(t, 2, 0, 1);
        _tile_stored(2, cb[i], 64);
    }
}

/* What the VNNI tile adds to token m's accumulator for stage block i of a sub (its C tile's
 * row m): Q4_K d * (sc * sum - m * xsum), the others (sc * d) * sum. Not what bounds the
 * kernel: with the activations' sum kept as a float beside the int (broadcast from memory,
 * Q4_K's vector steps a token and block 6 -> 4), 16-core Emerald Rapids, 3 alternating
 * rounds, medians new / old: Q4_K pp128 / pp512 0.96 / 0.95 at 16 threads, 1.23 / 0.90 at 2
 * (rounds 0.58-1.42), Q4_K_M 0.93-1.05: not kept. */
T_AMX INLINE __m512 amx_float_step(ggml_type t, const amx_stage *st, int i0, int i, const int32_t (*cb)[256], int m,
                                   const kern_q8_block *x, __m512 acc) {
    const float *sc = st->s[i0 + i];
    if (t == GGML_TYPE_Q4_K) {
        __m512 s = _mm512_cvtepi32_ps(_mm512_load_si512((const __m512i *)(cb[i] + 16 * m)));
        __m512 xs = _mm512_cvtepi32_ps(_mm512_set1_epi32(x[i].sum));
        __m512 v = _mm512_fmsub_ps(_mm512_load_ps(sc), s, _mm512_mul_ps(_mm512_load_ps(sc + 16), xs));
        return _mm512_fmadd_ps(_mm512_set1_ps(x[i].d), v, acc);
    }
    __m512 s;
    if (t == GGML_TYPE_Q6_K) {
        const float *si = st->si[i0 + i];
        __m512 h0 = _mm512_cvtepi32_ps(_mm512_load_si512((const __m512i *)(cb[2 * i] + 16 * m)));
        __m512 h1 = _mm512_cvtepi32_ps(_mm512_load_si512((const __m512i *)(cb[2 * i + 1] + 16 * m)));
        s = q6_mix(h0, h1, _mm512_load_ps(si), _mm512_load_ps(si + 16));
    } else {
        s = _mm512_cvtepi32_ps(_mm512_load_si512((const __m512i *)(cb[i] + 16 * m)));
    }
    return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_load_ps(sc), _mm512_set1_ps(x[i].d)), s, acc);
}

/* The float steps of stage blocks i0 .. i0+ns-1 (matrix block b = b0+i0 ..) for 16 tokens,
 * two tokens at a time (two chains of multiply-adds in flight: pp512, 2 threads, Q4_K
 * 459-463 -> 469-470 tok/s, Q6_K 336-338 -> 343-346, Q4_0 498-509 -> 510-517, Q8_0 and
 * pp128 level; four or eight at a time were slower), each token's accumulator in a register,
 * blocks in order, each step the VNNI tile's; between calls a token's sums wait in its
 * output row (a float stored and loaded back: the same value). */
T_AMX INLINE void amx_float_sub(ggml_type t, const amx_stage *st, int b, int i0, int ns, const int32_t (*cb)[256],
                                const unsigned char *act, size_t act_stride, float *o, int ldo, int valid) {
    for (int m = 0; m < 16; m += 2) {
        const kern_q8_block *x0 = (const kern_q8_block *)(act + (size_t)m * act_stride) + b;
        const kern_q8_block *x1 = (const kern_q8_block *)((const unsigned char *)x0 + act_stride);
        float *o0 = o + (size_t)m * ldo, *o1 = o0 + ldo;
        __m512 a0 = b == 0 ? _mm512_setzero_ps() : load16(o0, valid);
        __m512 a1 = b == 0 ? _mm512_setzero_ps() : load16(o1, valid);
#pragma GCC unroll 8
        for (int i = 0; i < ns; i++) {
            a0 = amx_float_step(t, st, i0, i, cb, m, x0, a0);
            a1 = amx_float_step(t, st, i0, i, cb, m + 1, x1, a1);
        }
        store16(o0, valid, a0);
        store16(o1, valid, a1);
    }
}

/* Pairs of groups a kernel call takes together where the activations outgrow L2
 * (AMX_ACT_BYTES; a batch of 256 tokens over a 2048-wide matrix: 655 KB, over the down
 * matrix 2.6 MB): each 16 tokens' activations are then read once for all of them, from L1,
 * instead of once a pair, from L2 or L3; below it one pair at a time, whose stage stays in
 * L1. Four pairs always against one, 16-core Emerald Rapids, 16 threads, medians of 3
 * alternating rounds: pp512 Q4_0 +6 %, Q4_K +7 %, Q8_0 +7 %, Q6_K +1.5 % (2 threads: +8, 0,
 * +8, +4 %; a second machine, 2 rounds: Q4_0 +1 %, Q6_K level); pp128 from -5 to +6 %. The
 * stages: AMX_PAIRS x 48 KB on the stack. */
#define AMX_PAIRS 4
#define AMX_ACT_BYTES (512 * 1024)

/* np pairs of groups from P (pair p: groups at P + 2p gb and P + (2p + 1) gb, rows
 * 16p.. of out, `valid` rows real from the first pair's first) times the first nb16 tokens
 * (a multiple of 16), blocks b0 .. b0+n-1 (n at most AMX_CHUNK): every pair's weights are
 * staged once, then every 16 tokens pass over each pair, `sub` blocks at a time: their tile
 * multiplies, then their float steps. (Issuing the next blocks' multiplies before these float
 * steps, so that both units work at once, measured 2-8 % slower.) */
T_AMX INLINE void amx_pairs(ggml_type t, const unsigned char *P, size_t gb, int np, int b0, int n,
                            const unsigned char *act, size_t act_stride, int nb16, float *out, int ldo, int valid,
                            amx_stage *st) {
    _Alignas(64) int32_t cb[AMX_SUB][256];
    const int sub = t == GGML_TYPE_Q6_K ? AMX_SUB / 2 : AMX_SUB;
    for (int p = 0; p < np; p++)
        for (int i = 0; i < n; i++)
            amx_stage_b(t, P + (size_t)(2 * p) * gb, P + (size_t)(2 * p + 1) * gb, b0 + i, &st[p], i);
    __asm__ volatile("" ::: "memory"); /* the tile loads read the stage: its stores first */
    for (int t0 = 0; t0 < nb16; t0 += 16) {
        const unsigned char *at = act + (size_t)t0 * act_stride;
        for (int p = 0; p < np; p++) {
            float *o = out + (size_t)t0 * ldo + 16 * p;
            for (int i0 = 0; i0 < n; i0 += sub) {
                int ns = n - i0 < sub ? n - i0 : sub;
                amx_mul_sub(t, &st[p], b0, i0, ns, at + offsetof(kern_q8_block, qs), (long)act_stride, cb);
                amx_float_sub(t, &st[p], b0 + i0, i0, ns, (const int32_t (*)[256])cb, at, act_stride, o, ldo,
                              valid - 16 * p);
            }
        }
    }
}

/* Full tiles of 16 tokens with AMX, up to AMX_PAIRS pairs of groups a pass; the last nb % 16
 * tokens and an odd last group through the VNNI path (the same results). The blocks go in
 * chunks of AMX_CHUNK, each over all the call's pairs before the next: the chunk's slice of
 * the activations (256 tokens over the down matrix: 655 KB of its 2.6 MB) is read once from
 * the shared cache levels, then from L2 for every further AMX_PAIRS pairs (forward.c's
 * engine_plan_cuts gives several pairs a chunk where the activations outgrow L2). Each
 * output's float steps still run in block order: the results are the VNNI kernel's. */
T_AMX void kern_gemm_amx(ggml_type t, const void *P, int nblk, int n_out, int g0, int g1, const unsigned char *act,
                         size_t act_stride, int nb, float *out, int ldo) {
    amx_stage st[AMX_PAIRS];
    size_t gb = kern_pack_group_bytes(t, nblk * 32);
    int nb16 = nb & ~15, g_end = g0 + (g1 - g0) / 2 * 2; /* whole pairs; an odd last group after */
    int most = (size_t)nb16 * (size_t)nblk * sizeof(kern_q8_block) > AMX_ACT_BYTES ? AMX_PAIRS : 1;
    amx_config(t);
    for (int b0 = 0; b0 < nblk && g0 < g_end; b0 += AMX_CHUNK) {
        int n = nblk - b0 < AMX_CHUNK ? nblk - b0 : AMX_CHUNK;
        for (int g = g0; g < g_end;) {
            int np = (g_end - g) / 2 < most ? (g_end - g) / 2 : most;
            const unsigned char *pa = (const unsigned char *)P + (size_t)g * gb;
            float *o = out + (size_t)g * 8;
            int valid = n_out - g * 8;
            if (t == GGML_TYPE_Q4_0) /* one instance per type */
                amx_pairs(GGML_TYPE_Q4_0, pa, gb, np, b0, n, act, act_stride, nb16, o, ldo, valid, st);
            else if (t == GGML_TYPE_Q4_K)
                amx_pairs(GGML_TYPE_Q4_K, pa, gb, np, b0, n, act, act_stride, nb16, o, ldo, valid, st);
            else if (t == GGML_TYPE_Q6_K)
                amx_pairs(GGML_TYPE_Q6_K, pa, gb, np, b0, n, act, act_stride, nb16, o, ldo, valid, st);
            else
                amx_pairs(GGML_TYPE_Q8_0, pa, gb, np, b0, n, act, act_stride, nb16, o, ldo, valid, st);
            g += 2 * np;
        }
    }
    _tile_release();
    if (g_end < g1 && nb16 > 0)
        kern_gemm_vnni(t, P, nblk, n_out, g_end, g1, act, act_stride, nb16, out, ldo);
    if (nb16 < nb)
        kern_gemm_vnni(t, P, nblk, n_out, g0, g1, act + (size_t)nb16 * act_stride, act_stride, nb - nb16,
                       out + (size_t)nb16 * ldo, ldo);
}

#endif
