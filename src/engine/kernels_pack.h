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

typedef struct pk_q6_K {
    ggml_half d[8];
    int8_t sc[16][8]; /* [16-element group][row] */
    int8_t q[8][256]; /* per sub-block: pk_q8_0's q, the values q - 32 */
} pk_q6_K;

_Static_assert(sizeof(pk_q4_0) == 8 * sizeof(block_q4_0), "pk_q4_0 holds 8 blocks");
_Static_assert(sizeof(pk_q4_K) == 8 * sizeof(block_q4_K) + 32, "pk_q4_K: 8 blocks, scales as bytes");
_Static_assert(sizeof(pk_q8_0) == 8 * sizeof(block_q8_0), "pk_q8_0 holds 8 blocks");

/* Packs Q4_K or Q6_K row groups [g0, g1) (kern_pack's contract; kernels_kpack.c). */
void kern_pack_kquant(ggml_type t, const void *src, size_t row_bytes, int n_in, int n_out, int g0, int g1, void *dst);

#endif
