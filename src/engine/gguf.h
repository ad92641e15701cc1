/* gguf.h - a reader for GGUF files (versions 2 and 3): metadata key/values and tensor
 * directory, with tensor data left in place (mmap). Every count, offset, size, alignment
 * and type is checked while parsing, so a corrupt file gives an error, never a crash. */
#ifndef PACER_GGUF_H
#define PACER_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/engine.h" /* typedef struct gguf_file gguf_file */
#include "engine/ggml_type.h"

#define GGUF_MAGIC "GGUF"
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4

/* Metadata value types; values are the on-disk numbers. */
typedef enum gguf_value_type {
    GGUF_TYPE_UINT8 = 0,
    GGUF_TYPE_INT8 = 1,
    GGUF_TYPE_UINT16 = 2,
    GGUF_TYPE_INT16 = 3,
    GGUF_TYPE_UINT32 = 4,
    GGUF_TYPE_INT32 = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL = 7,
    GGUF_TYPE_STRING = 8,
    GGUF_TYPE_ARRAY = 9,
    GGUF_TYPE_UINT64 = 10,
    GGUF_TYPE_INT64 = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE__COUNT
} gguf_value_type;

/* One tensor of the directory. Pointers stay valid until gguf_close. */
typedef struct gguf_tensor {
    const char *name;             /* NUL-terminated */
    ggml_type type;               /* always a type ggml_type_get_info knows */
    int n_dims;                   /* 1..4 */
    int64_t ne[GGUF_MAX_DIMS];    /* ne[0] = elements per row (the input dim); unused = 1 */
    int64_t n_elements;
    uint64_t offset;              /* from the start of the data section */
    uint64_t nbytes;
    const void *data;             /* inside the mapping; aligned to the file's alignment
                                   * relative to the start of the file */
} gguf_tensor;

/* Maps `path` read-only and parses it. On success *out owns the mapping; on error *out is
 * NULL and `err` (when non-NULL) holds one line naming what is wrong. Codes: IO (cannot
 * open/map), FORMAT (corrupt or truncated), UNSUPPORTED (v1, unknown tensor type), NOMEM. */
pacer_err gguf_open(const char *path, gguf_file **out, char *err, size_t err_len);
/* The same on `size` bytes at `data`, which the caller keeps alive and unchanged until
 * gguf_close (nothing is copied; tensor data pointers point into it). */
pacer_err gguf_open_memory(const void *data, size_t size, gguf_file **out, char *err, size_t err_len);
/* Frees the parse and unmaps the file (when gguf_open mapped it). Accepts NULL. */
void gguf_close(gguf_file *f);

uint32_t gguf_get_version(const gguf_file *f);
uint64_t gguf_get_file_size(const gguf_file *f);
/* Offset of the data section from the start of the file (a multiple of the alignment). */
uint64_t gguf_get_data_offset(const gguf_file *f);
uint32_t gguf_get_alignment(const gguf_file *f);
/* The start of the file's bytes (mapping or caller's memory). */
const void *gguf_get_base(const gguf_file *f);

/* ---- metadata ---- */
int64_t gguf_get_n_kv(const gguf_file *f);
/* Index of `key`, or -1 when absent. */
int64_t gguf_find_key(const gguf_file *f, const char *key);
/* Key name / value type of entry `i` (0 <= i < n_kv; NULL / GGUF_TYPE__COUNT when out of range). */
const char *gguf_get_key(const gguf_file *f, int64_t i);
gguf_value_type gguf_get_kv_type(const gguf_file *f, int64_t i);

/* Scalar value of entry `i` converted to the asked type: any integer or bool type reads as
 * an integer when its value fits; floats read from FLOAT32/FLOAT64 (and integers). false
 * when the entry is out of range, of another kind, or does not fit. */
bool gguf_get_kv_i64(const gguf_file *f, int64_t i, int64_t *out);
bool gguf_get_kv_u64(const gguf_file *f, int64_t i, uint64_t *out);
bool gguf_get_kv_f64(const gguf_file *f, int64_t i, double *out);
/* NUL-terminated string value of entry `i` (a STRING), or NULL. */
const char *gguf_get_kv_str(const gguf_file *f, int64_t i);

/* By key, with a default used when the key is absent or its value does not convert. */
uint32_t gguf_get_u32(const gguf_file *f, const char *key, uint32_t def);
int32_t gguf_get_i32(const gguf_file *f, const char *key, int32_t def);
uint64_t gguf_get_u64(const gguf_file *f, const char *key, uint64_t def);
float gguf_get_f32(const gguf_file *f, const char *key, float def);
bool gguf_get_bool(const gguf_file *f, const char *key, bool def);
const char *gguf_get_str(const gguf_file *f, const char *key, const char *def);

/* Arrays (entry `i` of type ARRAY): element type (GGUF_TYPE__COUNT when `i` is not an
 * array) and count (0 when not an array). Arrays of arrays are rejected at open. */
gguf_value_type gguf_get_arr_type(const gguf_file *f, int64_t i);
uint64_t gguf_get_arr_n(const gguf_file *f, int64_t i);
/* Element j of a string array: bytes (NOT NUL-terminated; may contain NUL) and *len.
 * NULL when `i` is not a string array or j is out of range. */
const char *gguf_get_arr_str(const gguf_file *f, int64_t i, uint64_t j, size_t *len);
/* Elements of a numeric (or bool) array, copied at open into storage aligned for their
 * type: cast to uint8_t/int32_t/float/... by gguf_get_arr_type. NULL for string arrays,
 * non-arrays and empty arrays. */
const void *gguf_get_arr_data(const gguf_file *f, int64_t i);

/* ---- tensors ---- */
int64_t gguf_get_n_tensors(const gguf_file *f);
/* Tensor `i` in file order, or NULL when out of range. */
const gguf_tensor *gguf_get_tensor(const gguf_file *f, int64_t i);
/* The tensor called `name`, or NULL. */
const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name);

/* Name of a value type ("u32", "str", "arr", ...; "?" when unknown). */
const char *gguf_type_name(uint32_t t);

#endif
