/* gguf_write.h - writes GGUF v3 files: metadata key/values (scalars, strings, arrays) and
 * tensors, with tensor data streamed after the header so that a file larger than memory
 * can be written. The same calls in the same order give the same bytes. */
#ifndef PACER_GGUF_WRITE_H
#define PACER_GGUF_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/error.h"
#include "engine/gguf.h"

typedef struct gguf_writer gguf_writer;

/* Where the bytes go: returns PACER_OK or an error code (PACER_ERR_IO, ...). */
typedef pacer_err (*gguf_sink_fn)(void *ctx, const void *data, size_t n);
/* Ready-made sinks: ctx is a FILE * (fwrite) or a buf * (buf_append). */
pacer_err gguf_sink_file(void *ctx, const void *data, size_t n);
pacer_err gguf_sink_buf(void *ctx, const void *data, size_t n);

/* A new empty writer (alignment 32), or NULL when out of memory. */
gguf_writer *gguf_writer_new(void);
/* Frees the writer; accepts NULL. Does not close the sink. */
void gguf_writer_free(gguf_writer *w);

/* Sets the tensor data alignment (a power of two) and records it as general.alignment.
 * Call before the first gguf_writer_add_tensor. */
pacer_err gguf_writer_set_alignment(gguf_writer *w, uint32_t alignment);

/* Metadata, written in the order added. A key may be added once (PACER_ERR_ARG after). All
 * fail with PACER_ERR_STATE once the header has been written. */
pacer_err gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v);
pacer_err gguf_writer_add_i32(gguf_writer *w, const char *key, int32_t v);
pacer_err gguf_writer_add_u64(gguf_writer *w, const char *key, uint64_t v);
pacer_err gguf_writer_add_f32(gguf_writer *w, const char *key, float v);
pacer_err gguf_writer_add_bool(gguf_writer *w, const char *key, bool v);
pacer_err gguf_writer_add_str(gguf_writer *w, const char *key, const char *v);
/* A numeric (or bool) array of `n` elements of type `et`, read from `data` in host order. */
pacer_err gguf_writer_add_arr(gguf_writer *w, const char *key, gguf_value_type et, const void *data, uint64_t n);
/* A string array; lens[j] gives the length of strs[j] (lens NULL: NUL-terminated). */
pacer_err gguf_writer_add_arr_str(gguf_writer *w, const char *key, const char *const *strs, const size_t *lens,
                                  uint64_t n);
/* Copies entry `i` of an open file (any type, arrays included) under its own key. */
pacer_err gguf_writer_copy_kv(gguf_writer *w, const gguf_file *src, int64_t i);

/* Declares a tensor; its data follows the header in declaration order, each tensor padded
 * to the alignment. ne[0] is the row length and must be a multiple of the type's block. */
pacer_err gguf_writer_add_tensor(gguf_writer *w, const char *name, ggml_type type, int n_dims, const int64_t *ne);
/* Bytes of data the declared tensors take, padding included (so the file size is known). */
uint64_t gguf_writer_data_size(const gguf_writer *w);

/* Writes the header (magic, counts, key/values, tensor infos, padding) to the sink. After
 * it no key or tensor may be added. */
pacer_err gguf_writer_write_header(gguf_writer *w, gguf_sink_fn sink, void *ctx);
/* Appends data of the tensors in declaration order; may be called with any chunk sizes
 * (a chunk may span tensors); padding is inserted between tensors. PACER_ERR_ARG when more
 * bytes are given than the tensors take. */
pacer_err gguf_writer_write_data(gguf_writer *w, const void *data, size_t n);
/* Checks every declared byte was written (PACER_ERR_STATE otherwise). */
pacer_err gguf_writer_finish(gguf_writer *w);

#endif
