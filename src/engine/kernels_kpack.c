/* kernels_kpack.c - Q4_K and Q6_K matrices into kernels_pack.h's group layouts: scales
 * and mins unpacked to bytes per row, quants re-laid per 32-element sub-block as Q4_0's
 * nibbles (Q4_K; Q6_K's low 4 bits, then its high 2 bits). */
#include "engine/kernels_pack.h"

#include <string.h>

/* Nibble l (0..31) of sub-block sb of a Q4_K block: low nibbles of a 32-byte run are one
 * sub-block, high nibbles the next. */
static int q4_K_nibble(const block_q4_K *b, int sb, int l) { return (b->qs[32 * (sb / 2) + l] >> (4 * (sb & 1))) & 0x0F; }

/* Row i of a Q4_K group block from the file's block. */
static void fill_q4_K(pk_q4_K *pk, int i, const block_q4_K *blk) {
    pk->d[i] = blk->d;
    pk->dmin[i] = blk->dmin;
    for (int sb = 0; sb < 8; sb++) {
        ggml_q4_K_scale_min(sb, blk->scales, &pk->sc[sb][i], &pk->m[sb][i]);
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 4; j++)
                pk->q[sb][(k * 8 + i) * 4 + j] =
                    (uint8_t)(q4_K_nibble(blk, sb, 4 * k + j) | q4_K_nibble(blk, sb, 16 + 4 * k + j) << 4);
    }
}

/* Quant e (0..255, 0..63) of a Q6_K block (dequantize_row_q6_K's layout). */
static int q6_K_quant(const block_q6_K *b, int e) {
    int n = e / 128, quarter = e % 128 / 32, l = e % 32;
    int low = b->ql[64 * n + l + (quarter & 1) * 32];
    int nib = quarter >= 2 ? low >> 4 : low & 0x0F;
    return nib | ((b->qh[32 * n + l] >> (2 * quarter)) & 3) << 4;
}

static void fill_q6_K(pk_q6_K *pk, int i, const block_q6_K *blk) {
    pk->d[i] = blk->d;
    for (int k = 0; k < 16; k++)
        pk->sc[k][i] = blk->scales[k];
    for (int e = 0; e < QK_K; e++) {
        int q = q6_K_quant(blk, e), l = e % 32, j = l % 4;
        uint8_t *sub = pk->q[e / 32];
        sub[(l % 16 / 4 * 8 + i) * 4 + j] |= (uint8_t)((q & 0x0F) << (l < 16 ? 0 : 4));
        sub[PK_Q6_LO + (l / 16 * 8 + i) * 4 + j] |= (uint8_t)((q >> 4) << (2 * (l % 16 / 4)));
    }
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
