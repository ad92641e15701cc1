/* ggml_type.c - the GGUF tensor type table, binary16/bfloat16 conversions and the scalar
 * reference quantizers and dequantizers (written from the published block formats). */
#include "engine/ggml_type.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static const ggml_type_info ggml_type_table[GGML_TYPE__COUNT] = {
    [GGML_TYPE_F32] = {"f32", 1, 4},
    [GGML_TYPE_F16] = {"f16", 1, 2},
    [GGML_TYPE_Q4_0] = {"q4_0", 32, 18},
    [GGML_TYPE_Q4_1] = {"q4_1", 32, 20},
    [GGML_TYPE_Q5_0] = {"q5_0", 32, 22},
    [GGML_TYPE_Q5_1] = {"q5_1", 32, 24},
    [GGML_TYPE_Q8_0] = {"q8_0", 32, 34},
    [GGML_TYPE_Q8_1] = {"q8_1", 32, 36},
    [GGML_TYPE_Q2_K] = {"q2_K", 256, 84},
    [GGML_TYPE_Q3_K] = {"q3_K", 256, 110},
    [GGML_TYPE_Q4_K] = {"q4_K", 256, 144},
    [GGML_TYPE_Q5_K] = {"q5_K", 256, 176},
    [GGML_TYPE_Q6_K] = {"q6_K", 256, 210},
    [GGML_TYPE_Q8_K] = {"q8_K", 256, 292},
    [GGML_TYPE_IQ2_XXS] = {"iq2_xxs", 256, 66},
    [GGML_TYPE_IQ2_XS] = {"iq2_xs", 256, 74},
    [GGML_TYPE_IQ3_XXS] = {"iq3_xxs", 256, 98},
    [GGML_TYPE_IQ1_S] = {"iq1_s", 256, 50},
    [GGML_TYPE_IQ4_NL] = {"iq4_nl", 32, 18},
    [GGML_TYPE_IQ3_S] = {"iq3_s", 256, 110},
    [GGML_TYPE_IQ2_S] = {"iq2_s", 256, 82},
    [GGML_TYPE_IQ4_XS] = {"iq4_xs", 256, 136},
    [GGML_TYPE_I8] = {"i8", 1, 1},
    [GGML_TYPE_I16] = {"i16", 1, 2},
    [GGML_TYPE_I32] = {"i32", 1, 4},
    [GGML_TYPE_I64] = {"i64", 1, 8},
    [GGML_TYPE_F64] = {"f64", 1, 8},
    [GGML_TYPE_IQ1_M] = {"iq1_m", 256, 56},
    [GGML_TYPE_BF16] = {"bf16", 1, 2},
    [GGML_TYPE_TQ1_0] = {"tq1_0", 256, 54},
    [GGML_TYPE_TQ2_0] = {"tq2_0", 256, 66},
    [GGML_TYPE_MXFP4] = {"mxfp4", 32, 17},
};

const ggml_type_info *ggml_type_get_info(uint32_t t) {
    if (t >= GGML_TYPE__COUNT || !ggml_type_table[t].name) return NULL;
    return &ggml_type_table[t];
}

const char *ggml_type_name(uint32_t t) {
    const ggml_type_info *ti = ggml_type_get_info(t);
    return ti ? ti->name : "unknown";
}

bool ggml_type_from_name(const char *name, ggml_type *out) {
    for (uint32_t t = 0; t < GGML_TYPE__COUNT; t++) {
        if (ggml_type_table[t].name && strcasecmp(ggml_type_table[t].name, name) == 0) {
            *out = (ggml_type)t;
            return true;
        }
    }
    return false;
}

bool ggml_type_row_size(uint32_t t, int64_t n, uint64_t *out) {
    const ggml_type_info *ti = ggml_type_get_info(t);
    if (!ti || n < 0 || n % ti->block_size != 0) return false;
    uint64_t blocks = (uint64_t)n / ti->block_size;
    if (blocks > UINT64_MAX / ti->type_size) return false;
    *out = blocks * ti->type_size;
    return true;
}

/* ---- conversions ---- */

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float ggml_fp16_to_fp32(ggml_half h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            uint32_t e = 113;
            while (!(mant & 0x400)) {
                mant <<= 1;
                e--;
            }
            bits = sign | (e << 23) | ((mant & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    return f32_from_bits(bits);
}

ggml_half ggml_fp32_to_fp16(float f) {
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) return sign | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0); /* inf, NaN */
    if (x >= 0x477ff000u) return sign | 0x7c00; /* rounds past 65504 */
    if (x < 0x38800000u) {                      /* below 2^-14: subnormal or zero */
        if (x < 0x33000000u) return sign;       /* below 2^-25: rounds to zero */
        uint32_t e = x >> 23;
        uint32_t m = (x & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e;
        uint32_t r = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return sign | (uint16_t)r;
    }
    uint32_t h = (x >> 13) - (112u << 10);
    uint32_t rem = x & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return sign | (uint16_t)h;
}

float ggml_bf16_to_fp32(ggml_bf16 h) { return f32_from_bits((uint32_t)h << 16); }

ggml_bf16 ggml_fp32_to_bf16(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (ggml_bf16)((x >> 16) | 0x40); /* quiet NaN */
    return (ggml_bf16)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/* ---- quantizers ---- */

void quantize_row_q8_0(const float *x, block_q8_0 *y, int64_t k) {
    for (int64_t i = 0; i < k / QK8_0; i++) {
        const float *xb = x + i * QK8_0;
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++) amax = fmaxf(amax, fabsf(xb[j]));
        float d = amax / 127.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ggml_fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; j++) y[i].qs[j] = (int8_t)roundf(xb[j] * id);
    }
}

void quantize_row_q4_0(const float *x, block_q4_0 *y, int64_t k) {
    for (int64_t i = 0; i < k / QK4_0; i++) {
        const float *xb = x + i * QK4_0;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QK4_0; j++) {
            if (amax < fabsf(xb[j])) {
                amax = fabsf(xb[j]);
                max = xb[j];
            }
        }
        float d = max / -8.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ggml_fp32_to_fp16(d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            int q0 = (int8_t)(xb[j] * id + 8.5f);
            int q1 = (int8_t)(xb[j + QK4_0 / 2] * id + 8.5f);
            if (q0 > 15) q0 = 15;
            if (q1 > 15) q1 = 15;
            y[i].qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

void quantize_row_q8_K(const float *x, block_q8_K *y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        const float *xb = x + i * QK_K;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            if (fabsf(xb[j]) > amax) {
                amax = fabsf(xb[j]);
                max = xb[j];
            }
        }
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; j++) {
            long v = lrintf(iscale * xb[j]);
            y[i].qs[j] = (int8_t)(v > 127 ? 127 : v);
        }
        for (int j = 0; j < QK_K / 16; j++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) sum += y[i].qs[j * 16 + l];
            y[i].bsums[j] = (int16_t)sum;
        }
        y[i].d = 1.0f / iscale;
    }
}

void quantize_row_f16(const float *x, ggml_half *y, int64_t k) {
    for (int64_t i = 0; i < k; i++) y[i] = ggml_fp32_to_fp16(x[i]);
}

void quantize_row_bf16(const float *x, ggml_bf16 *y, int64_t k) {
    for (int64_t i = 0; i < k; i++) y[i] = ggml_fp32_to_bf16(x[i]);
}

/* ---- dequantizers ---- */

void dequantize_row_q8_0(const block_q8_0 *x, float *y, int64_t k) {
    for (int64_t i = 0; i < k / QK8_0; i++) {
        float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_0; j++) y[i * QK8_0 + j] = (float)x[i].qs[j] * d;
    }
}

void dequantize_row_q4_0(const block_q4_0 *x, float *y, int64_t k) {
    for (int64_t i = 0; i < k / QK4_0; i++) {
        float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            y[i * QK4_0 + j] = (float)((x[i].qs[j] & 0x0f) - 8) * d;
            y[i * QK4_0 + j + QK4_0 / 2] = (float)((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void ggml_q4_K_scale_min(int j, const uint8_t *q, uint8_t *sc, uint8_t *m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (uint8_t)((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

void dequantize_row_q4_K(const block_q4_K *x, float *y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        const uint8_t *q = x[i].qs;
        float d = ggml_fp16_to_fp32(x[i].d);
        float dmin = ggml_fp16_to_fp32(x[i].dmin);
        int is = 0;
        for (int j = 0; j < QK_K; j += 64) {
            uint8_t sc, m;
            ggml_q4_K_scale_min(is, x[i].scales, &sc, &m);
            float d1 = d * sc, m1 = dmin * m;
            ggml_q4_K_scale_min(is + 1, x[i].scales, &sc, &m);
            float d2 = d * sc, m2 = dmin * m;
            for (int l = 0; l < 32; l++) *y++ = d1 * (float)(q[l] & 0x0f) - m1;
            for (int l = 0; l < 32; l++) *y++ = d2 * (float)(q[l] >> 4) - m2;
            q += 32;
            is += 2;
        }
    }
}

void dequantize_row_q6_K(const block_q6_K *x, float *y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        float d = ggml_fp16_to_fp32(x[i].d);
        const uint8_t *ql = x[i].ql;
        const uint8_t *qh = x[i].qh;
        const int8_t *sc = x[i].scales;
        for (int n = 0; n < QK_K; n += 128) {
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int q1 = (int)((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
                int q2 = (int)((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
                int q3 = (int)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                int q4 = (int)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * sc[is] * (float)q1;
                y[l + 32] = d * sc[is + 2] * (float)q2;
                y[l + 64] = d * sc[is + 4] * (float)q3;
                y[l + 96] = d * sc[is + 6] * (float)q4;
            }
            y += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

void dequantize_row_f16(const ggml_half *x, float *y, int64_t k) {
    for (int64_t i = 0; i < k; i++) y[i] = ggml_fp16_to_fp32(x[i]);
}

void dequantize_row_bf16(const ggml_bf16 *x, float *y, int64_t k) {
    for (int64_t i = 0; i < k; i++) y[i] = ggml_bf16_to_fp32(x[i]);
}

bool ggml_dequantize_row(uint32_t t, const void *x, float *y, int64_t k) {
    const ggml_type_info *ti = ggml_type_get_info(t);
    if (!ti || k < 0 || k % ti->block_size != 0) return false;
    switch (t) {
    case GGML_TYPE_F32: memcpy(y, x, (size_t)k * sizeof(float)); return true;
    case GGML_TYPE_F16: dequantize_row_f16(x, y, k); return true;
    case GGML_TYPE_BF16: dequantize_row_bf16(x, y, k); return true;
    case GGML_TYPE_Q8_0: dequantize_row_q8_0(x, y, k); return true;
    case GGML_TYPE_Q4_0: dequantize_row_q4_0(x, y, k); return true;
    case GGML_TYPE_Q4_K: dequantize_row_q4_K(x, y, k); return true;
    case GGML_TYPE_Q6_K: dequantize_row_q6_K(x, y, k); return true;
    default: return false;
    }
}

bool ggml_quantize_row(uint32_t t, const float *x, void *y, int64_t k) {
    const ggml_type_info *ti = ggml_type_get_info(t);
    if (!ti || k < 0 || k % ti->block_size != 0) return false;
    switch (t) {
    case GGML_TYPE_F32: memcpy(y, x, (size_t)k * sizeof(float)); return true;
    case GGML_TYPE_F16: quantize_row_f16(x, y, k); return true;
    case GGML_TYPE_BF16: quantize_row_bf16(x, y, k); return true;
    case GGML_TYPE_Q8_0: quantize_row_q8_0(x, y, k); return true;
    case GGML_TYPE_Q4_0: quantize_row_q4_0(x, y, k); return true;
    default: return false;
    }
}
