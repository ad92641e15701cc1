/* quantize.h - `pacer model quantize`: a copy of a GGUF checkpoint with its weight matrices
 * in another type (q8_0, q4_0, q4_K, q6_K, f16, bf16, f32) or the q4_K_M mixture. Deterministic: the same input
 * and type give the same bytes (one thread, fixed row order, round-to-nearest). Metadata is
 * copied in order, general.file_type set for the new type; 1-D tensors (norms) are copied
 * as they are. A matrix whose rows do not divide into the type's blocks falls back to q8_0,
 * or keeps its type when that does not fit either. Sources must hold float matrices
 * (f32, f16, bf16): re-quantizing a quantized checkpoint is refused. */
#ifndef PACER_QUANTIZE_H
#define PACER_QUANTIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/ggml_type.h"

typedef struct quantize_job quantize_job;

/* True for the types quantize writes. */
bool quantize_type_supported(ggml_type t);
/* The types and mixtures quantize writes, as a list for messages. */
const char *quantize_type_list(void);

/* What the matrices become: all of them `type`, or (k_m) llama.cpp's Q4_K_M mixture for
 * Llama-family names: q4_K, except output.weight (token_embd.weight where there is none)
 * and the attn_v and ffn_down matrices of the layers llama.cpp gives more bits (the first
 * and last eighth and every third between) in q6_K; general.file_type 15. */
typedef struct quantize_scheme {
    ggml_type type;
    bool k_m;
} quantize_scheme;

/* A type name ("q4_K", any case) or "q4_K_M" as a scheme; false for anything else. */
bool quantize_scheme_from_name(const char *name, quantize_scheme *out);
/* The scheme's name: the type's, or "q4_K_M". */
const char *quantize_scheme_name(quantize_scheme s);

/* Opens `in` and plans the conversion to `t` (nothing is written). Errors with words in
 * `err`: PACER_ERR_UNSUPPORTED for a type quantize does not write or a quantized source,
 * and gguf_open's codes for a file that cannot be read. */
pacer_err quantize_open(const char *in, ggml_type t, quantize_job **out, char *err, size_t err_len);
/* quantize_open for any scheme. */
pacer_err quantize_open_scheme(const char *in, quantize_scheme s, quantize_job **out, char *err, size_t err_len);
/* Bytes the output file will take (header, tensors, padding). */
uint64_t quantize_output_bytes(const quantize_job *j);
/* Matrices converted to the type, converted to the fallback q8_0, and copied as they are. */
void quantize_counts(const quantize_job *j, int *converted, int *fallback, int *copied);
/* Writes the output to `out_path` through a temporary file in the same directory, renamed
 * into place after fsync; on error nothing is left behind. Call once. */
pacer_err quantize_write(quantize_job *j, const char *out_path, char *err, size_t err_len);
/* Frees the job; accepts NULL. */
void quantize_close(quantize_job *j);

/* Free bytes on the volume that holds `path` (a file that need not exist yet: its directory
 * is asked). PACER_ERR_IO when the directory cannot be examined. */
pacer_err quantize_volume_free(const char *path, uint64_t *free_bytes);

/* The K-quant reference quantizers (k a multiple of QK_K). Scales come from each block's
 * range (q4_K: min and max of every 32 values; q6_K: largest magnitude of every 16), then
 * the values are rounded to the nearest level. */
void quantize_q4_K_row(const float *x, block_q4_K *y, int64_t k);
void quantize_q6_K_row(const float *x, block_q6_K *y, int64_t k);

#endif
