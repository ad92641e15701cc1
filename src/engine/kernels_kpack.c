/* kernels_kpack.c - Q4_K and Q6_K matrices into kernels_pack.h's group layouts: scales
 * and mins unpacked to bytes per row, quants re-laid per 32-element sub-block as Q4_0's
 * nibbles (Q4_K; Q6_K's low 4 bits, then its high 2 bits). */
#include "engine/kernels_pack.h"

#include <stdbool.h>
#include <string.h>

/* Four bytes at p as one word, and back: the steps below work on four quants at once, each
 * in its own byte (no shift or mask carries across bytes). */
static uint32_t ld4(const uint8_t *p) {
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}
static void st4(uint8_t *p, uint32_t w) { memcpy(p, &w, 4); }

#define LO4 0x0F0F0F0Fu
#define LO2 0x03030303u

/* The quants v of a sub-block (32 of them, 0..15 for Q4_K, 0..63 for Q6_K) into row i of a
 * group block's q (pk_q4_0's layout: byte (k * 8 + i) * 4 + j holds elements 4k + j and
 * 16 + 4k + j in its low and high nibble); Q6_K's high 2 bits after them (kernels_pack.h). */
static void put_sub(uint8_t *q, int i, const uint8_t *v, bool six) {
    for (int k = 0; k < 4; k++)
        st4(q + (k * 8 + i) * 4, (ld4(v + 4 * k) & LO4) | (ld4(v + 16 + 4 * k) & LO4) << 4);
    for (int c = 0; six && c < 2; c++) {
        const uint8_t *h = v + 16 * c;
        st4(q + PK_Q6_LO + (c * 8 + i) * 4, (ld4(h) >> 4 & LO2) | (ld4(h + 4) >> 4 & LO2) << 2 |
                                                (ld4(h + 8) >> 4 & LO2) << 4 | (ld4(h + 12) >> 4 & LO2) << 6);
    }
}

/* Row i of a Q4_K group block from the file's block: low nibbles of a 32-byte run are one
 * sub-block, high nibbles the next. */
static void fill_q4_K(pk_q4_K *pk, int i, const block_q4_K *blk) {
    pk->d[i] = blk->d;
    pk->dmin[i] = blk->dmin;
    for (int sb = 0; sb < 8; sb++) {
        uint8_t v[32];
        ggml_q4_K_scale_min(sb, blk->scales, &pk->sc[sb][i], &pk->m[sb][i]);
        for (int l = 0; l < 32; l += 4)
            st4(v + l, ld4(blk->qs + 32 * (sb / 2) + l) >> (4 * (sb & 1)) & LO4);
        put_sub(pk->q[sb], i, v, false);
    }
}

/* Row i of a Q6_K group block: the block's 256 quants (dequantize_row_q6_K's layout: in half
 * n, element 32 * quarter + l takes ql's low or high nibble and qh's bits 2 * quarter), then
 * per sub-block. */
static void fill_q6_K(pk_q6_K *pk, int i, const block_q6_K *blk) {
    uint8_t v[QK_K];
    pk->d[i] = blk->d;
    for (int k = 0; k < 16; k++)
        pk->sc[k][i] = blk->scales[k];
    for (int n = 0; n < 2; n++)
        for (int l = 0; l < 32; l += 4) {
            uint32_t lo = ld4(blk->ql + 64 * n + l), hi = ld4(blk->ql + 64 * n + 32 + l), h = ld4(blk->qh + 32 * n + l);
            uint8_t *e = v + 128 * n + l;
            st4(e, (lo & LO4) | (h & LO2) << 4);
            st4(e + 32, (hi & LO4) | (h >> 2 & LO2) << 4);
            st4(e + 64, (lo >> 4 & LO4) | (h >> 4 & LO2) << 4);
            st4(e + 96, (hi >> 4 & LO4) | (h >> 6 & LO2) << 4);
        }
    for (int sb = 0; sb < 8; sb++)
        put_sub(pk->q[sb], i, v + 32 * sb, true);
}

/* K-quant groups [g0, g1): a group block per super-block, padding rows with scale 0. */
void kern_pack_kquant(ggml_type t, const void *src, size_t row_bytes, int n_in, int n_out, int g0, int g1, void *dst) {
    int nsup = n_in / QK_K;
    size_t bs = t == GGML_TYPE_Q4_K ? sizeof(pk_q4_K) : sizeof(pk_q6_K);
    size_t src_bs = t == GGML_TYPE_Q4_K ? sizeof(block_q4_K) : sizeof(block_q6_K);
    for (int g = g0; g < g1; g++)
        for (int b = 0; b < nsup; b++) {
            unsigned char *pk = (unsigned char *)dst + ((size_t)g * nsup + b) * bs;
            memset(pk, 0, bs);
            for (int i = 0; i < 8 && g * 8 + i < n_out; i++) {
                const void *blk = (const unsigned char *)src + (size_t)(g * 8 + i) * row_bytes + (size_t)b * src_bs;
                if (t == GGML_TYPE_Q4_K)
                    fill_q4_K((pk_q4_K *)pk, i, blk);
                else
                    fill_q6_K((pk_q6_K *)pk, i, blk);
            }
        }
}
