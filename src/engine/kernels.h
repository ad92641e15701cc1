/* kernels.h - the engine's numeric kernels: dot products of a weight row (any supported
 * GGUF type) with an activation row prepared for that type, matrix x matrix over a batch,
 * and the small vector operations. SIMD paths (AVX2/FMA, AVX-512) are chosen at run time;
 * a scalar path computes the same products and is what the tests compare against. */
#ifndef PACER_KERNELS_H
#define PACER_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ggml_type.h"

typedef enum kern_level { KERN_SCALAR = 0, KERN_AVX2 = 1, KERN_AVX512 = 2 } kern_level;

/* The best level this CPU supports; kern_set_level picks another (lower) one, for tests. */
kern_level kern_detect(void);
void kern_set_level(kern_level l);
kern_level kern_get_level(void);
const char *kern_level_name(kern_level l);

/* Whether weights of type `t` can be multiplied (natively or through dequantization). */
bool kern_weight_supported(ggml_type t);
/* The type activations are stored in for weights of type `t`: Q8_0 for Q8_0/Q4_0, F32
 * otherwise. For F16 and BF16 weights the F32 values are first rounded to F16 / BF16, as
 * ggml rounds activations before those dot products. */
ggml_type kern_act_type(ggml_type t);
/* Bytes of one prepared activation row of n elements for weights of type `t`. */
size_t kern_act_size(ggml_type t, int n);
/* Converts n floats into the activation format for weights of type `t`. */
void kern_act_prepare(ggml_type t, const float *x, void *out, int n);

/* dot(weight row w of type t, prepared activation a), n elements. `scratch` holds n floats
 * (used for types that are dequantized first: Q4_K, Q6_K, ...). */
float kern_dot(ggml_type t, const void *w, const void *a, int n, float *scratch);

/* out[b * ldo + r] = dot(row r of W, activation b) for rows [r0, r1) and b < nb. W rows are
 * row_bytes apart; activations act_bytes apart. Each weight row is read once for all nb. */
void kern_matmul(ggml_type t, const void *W, size_t row_bytes, int n, int r0, int r1,
                 const void *act, size_t act_bytes, int nb, float *out, int ldo, float *scratch);

float kern_dot_f32(const float *a, const float *b, int n);
/* y += a * x */
void kern_axpy_f32(float *y, float a, const float *x, int n);

#endif
