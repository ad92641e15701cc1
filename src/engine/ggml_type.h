/* ggml_type.h - the tensor element types of GGUF files, numbered as ggml numbers them, with
 * their block layouts, half-precision conversions and scalar reference (de)quantizers.
 * The block structs match ggml's bytes exactly: a tensor's data can be cast to them. */
#ifndef PACER_GGML_TYPE_H
#define PACER_GGML_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values are the on-disk numbers: never renumber. Gaps (4, 5, 31-33, 36-38) are types ggml
 * removed; ggml_type_get_info returns NULL for them. */
typedef enum ggml_type {
    GGML_TYPE_F32 = 0,
    GGML_TYPE_F16 = 1,
    GGML_TYPE_Q4_0 = 2,
    GGML_TYPE_Q4_1 = 3,
    GGML_TYPE_Q5_0 = 6,
    GGML_TYPE_Q5_1 = 7,
    GGML_TYPE_Q8_0 = 8,
    GGML_TYPE_Q8_1 = 9,
    GGML_TYPE_Q2_K = 10,
    GGML_TYPE_Q3_K = 11,
    GGML_TYPE_Q4_K = 12,
    GGML_TYPE_Q5_K = 13,
    GGML_TYPE_Q6_K = 14,
    GGML_TYPE_Q8_K = 15,
    GGML_TYPE_IQ2_XXS = 16,
    GGML_TYPE_IQ2_XS = 17,
    GGML_TYPE_IQ3_XXS = 18,
    GGML_TYPE_IQ1_S = 19,
    GGML_TYPE_IQ4_NL = 20,
    GGML_TYPE_IQ3_S = 21,
    GGML_TYPE_IQ2_S = 22,
    GGML_TYPE_IQ4_XS = 23,
    GGML_TYPE_I8 = 24,
    GGML_TYPE_I16 = 25,
    GGML_TYPE_I32 = 26,
    GGML_TYPE_I64 = 27,
    GGML_TYPE_F64 = 28,
    GGML_TYPE_IQ1_M = 29,
    GGML_TYPE_BF16 = 30,
    GGML_TYPE_TQ1_0 = 34,
    GGML_TYPE_TQ2_0 = 35,
    GGML_TYPE_MXFP4 = 39,
    GGML_TYPE__COUNT = 40 /* not a type: one past the largest number */
} ggml_type;

typedef struct ggml_type_info {
    const char *name;    /* lower case, as llama.cpp prints it: "f16", "q4_K", ... */
    uint32_t block_size; /* elements per block (1 for plain types) */
    uint32_t type_size;  /* bytes per block */
} ggml_type_info;

/* The layout of type number `t`, or NULL when `t` is not a type pacer knows. */
const ggml_type_info *ggml_type_get_info(uint32_t t);
/* The name of `t`, or "unknown" for numbers without a type. Never NULL. */
const char *ggml_type_name(uint32_t t);
/* Looks a type up by its name (case-insensitive: "q8_0", "Q4_K"). false when unknown. */
bool ggml_type_from_name(const char *name, ggml_type *out);
/* Bytes of `n` elements of type `t` in one row. false when `t` is unknown, `n` is negative
 * or not a multiple of the block size, or the size does not fit in uint64_t. */
bool ggml_type_row_size(uint32_t t, int64_t n, uint64_t *out);

/* ---- scalar conversions (round to nearest even; NaN stays NaN, overflow gives inf) ---- */
typedef uint16_t ggml_half; /* IEEE binary16 bits */
typedef uint16_t ggml_bf16; /* bfloat16 bits (top half of a binary32) */

float ggml_fp16_to_fp32(ggml_half h);
ggml_half ggml_fp32_to_fp16(float f);
float ggml_bf16_to_fp32(ggml_bf16 h);
ggml_bf16 ggml_fp32_to_bf16(float f);

/* ---- blocks, byte for byte as ggml lays them out ---- */
#define QK4_0 32
#define QK8_0 32
#define QK_K 256
#define K_SCALE_SIZE 12

typedef struct block_q4_0 {
    ggml_half d;           /* scale */
    uint8_t qs[QK4_0 / 2]; /* element j in the low nibble of qs[j], element j+16 in the high */
} block_q4_0;              /* value = d * (nibble - 8) */

typedef struct block_q8_0 {
    ggml_half d;      /* scale */
    int8_t qs[QK8_0]; /* value = d * qs[j] */
} block_q8_0;

typedef struct block_q4_K {
    ggml_half d;                   /* super-block scale for the 6-bit sub-block scales */
    ggml_half dmin;                /* super-block scale for the 6-bit sub-block mins */
    uint8_t scales[K_SCALE_SIZE];  /* 8 scales and 8 mins, 6 bits each, packed */
    uint8_t qs[QK_K / 2];          /* 4-bit quants: 64 elements per 32 bytes (low, then high) */
} block_q4_K;

typedef struct block_q6_K {
    uint8_t ql[QK_K / 2];      /* low 4 bits of the quants */
    uint8_t qh[QK_K / 4];      /* high 2 bits of the quants */
    int8_t scales[QK_K / 16];  /* 8-bit sub-block scales, one per 16 elements */
    ggml_half d;               /* super-block scale */
} block_q6_K;

typedef struct block_q8_K { /* the activation type ggml pairs with K-quant weights */
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16]; /* sums of each group of 16 quants */
} block_q8_K;

_Static_assert(sizeof(block_q4_0) == 18, "block_q4_0 layout");
_Static_assert(sizeof(block_q8_0) == 34, "block_q8_0 layout");
_Static_assert(sizeof(block_q4_K) == 144, "block_q4_K layout");
_Static_assert(sizeof(block_q6_K) == 210, "block_q6_K layout");
_Static_assert(sizeof(block_q8_K) == 292, "block_q8_K layout");

/* ---- scalar reference (de)quantizers; k is the element count, a multiple of the block
 * size (the caller checks). These are what SIMD kernels are tested against. ---- */

/* ggml's reference quantizers: Q8_0 takes d = amax/127 and rounds; Q4_0 takes d = -max/8
 * where max is the element of largest magnitude, so results match ggml's bytes. */
void quantize_row_q8_0(const float *x, block_q8_0 *y, int64_t k);
void quantize_row_q4_0(const float *x, block_q4_0 *y, int64_t k);
/* Q8_K as ggml's reference quantize_row_q8_K computes it (for K-quant dot products). */
void quantize_row_q8_K(const float *x, block_q8_K *y, int64_t k);

/* The j-th (0..7) 6-bit scale and min of a Q4_K (or Q5_K) super-block's packed scales. */
void ggml_q4_K_scale_min(int j, const uint8_t *scales, uint8_t *sc, uint8_t *m);

void dequantize_row_q8_0(const block_q8_0 *x, float *y, int64_t k);
void dequantize_row_q4_0(const block_q4_0 *x, float *y, int64_t k);
void dequantize_row_q4_K(const block_q4_K *x, float *y, int64_t k);
void dequantize_row_q6_K(const block_q6_K *x, float *y, int64_t k);
void dequantize_row_f16(const ggml_half *x, float *y, int64_t k);
void dequantize_row_bf16(const ggml_bf16 *x, float *y, int64_t k);
void quantize_row_f16(const float *x, ggml_half *y, int64_t k);
void quantize_row_bf16(const float *x, ggml_bf16 *y, int64_t k);

/* Dequantizes `k` elements of type `t` at `x` (F32 is copied). false, with nothing
 * written, when pacer has no dequantizer for `t` or k is not a multiple of its block. */
bool ggml_dequantize_row(uint32_t t, const void *x, float *y, int64_t k);
/* Quantizes `k` floats into type `t` (F32, F16, BF16, Q8_0, Q4_0). false when unsupported. */
bool ggml_quantize_row(uint32_t t, const float *x, void *y, int64_t k);

#endif
