/* gguf_write.c - GGUF v3 writer: key/values serialized into a growing header buffer,
 * tensor infos with offsets computed at declaration, data streamed to a sink afterwards. */
#include "engine/gguf_write.h"

#include <stdlib.h>
#include <string.h>

#define GGUF_WRITER_MAX_HEADER ((size_t)1 << 32)

typedef struct writer_tensor {
    char *name;
    ggml_type type;
    int n_dims;
    int64_t ne[GGUF_MAX_DIMS];
    uint64_t offset, nbytes;
} writer_tensor;

struct gguf_writer {
    buf kv;            /* serialized key/values */
    char **keys;
    uint64_t n_kv, keys_cap;
    writer_tensor *tensors;
    uint64_t n_tensors, tensors_cap;
    uint32_t alignment;
    uint64_t data_size;  /* sum of padded tensor sizes */
    bool header_done;
    gguf_sink_fn sink;
    void *sink_ctx;
    uint64_t cur_tensor; /* streaming position: tensor index and bytes written into it */
    uint64_t cur_done;
};

pacer_err gguf_sink_file(void *ctx, const void *data, size_t n) {
    return n == 0 || fwrite(data, 1, n, (FILE *)ctx) == n ? PACER_OK : PACER_ERR_IO;
}

pacer_err gguf_sink_buf(void *ctx, const void *data, size_t n) { return buf_append((buf *)ctx, data, n); }

gguf_writer *gguf_writer_new(void) {
    gguf_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    buf_init(&w->kv, GGUF_WRITER_MAX_HEADER);
    w->alignment = GGUF_DEFAULT_ALIGNMENT;
    return w;
}

void gguf_writer_free(gguf_writer *w) {
    if (!w) return;
    buf_free(&w->kv);
    for (uint64_t i = 0; i < w->n_kv; i++) free(w->keys[i]);
    free(w->keys);
    for (uint64_t i = 0; i < w->n_tensors; i++) free(w->tensors[i].name);
    free(w->tensors);
    free(w);
}

static pacer_err put_u32(buf *b, uint32_t v) { return buf_append(b, &v, 4); }
static pacer_err put_u64(buf *b, uint64_t v) { return buf_append(b, &v, 8); }
static pacer_err put_str(buf *b, const char *s, size_t n) {
    pacer_err rc = put_u64(b, n);
    return rc ? rc : buf_append(b, s, n);
}

/* Registers `key` and writes it with its type; the value follows. */
static pacer_err kv_begin(gguf_writer *w, const char *key, gguf_value_type t) {
    if (w->header_done) return PACER_ERR_STATE;
    if (!key || !key[0]) return PACER_ERR_ARG;
    for (uint64_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->keys[i], key) == 0) return PACER_ERR_ARG;
    if (w->n_kv == w->keys_cap) {
        uint64_t cap = w->keys_cap ? w->keys_cap * 2 : 32;
        char **k = realloc(w->keys, cap * sizeof *k);
        if (!k) return PACER_ERR_NOMEM;
        w->keys = k;
        w->keys_cap = cap;
    }
    char *copy = strdup(key);
    if (!copy) return PACER_ERR_NOMEM;
    size_t len0 = w->kv.len;
    pacer_err rc = put_str(&w->kv, key, strlen(key));
    if (!rc) rc = put_u32(&w->kv, t);
    if (rc) {
        free(copy);
        w->kv.len = len0;
        if (w->kv.data) w->kv.data[len0] = '\0';
        return rc;
    }
    w->keys[w->n_kv++] = copy;
    return PACER_OK;
}

/* Undoes a key whose value failed to serialize: the header buffer returns to `len`. */
static pacer_err kv_abort(gguf_writer *w, size_t len, pacer_err rc) {
    w->kv.len = len;
    if (w->kv.data) w->kv.data[len] = '\0';
    free(w->keys[--w->n_kv]);
    return rc;
}

static pacer_err kv_scalar(gguf_writer *w, const char *key, gguf_value_type t, const void *v, size_t n) {
    size_t len = w->kv.len;
    pacer_err rc = kv_begin(w, key, t);
    if (rc) return rc;
    rc = buf_append(&w->kv, v, n);
    return rc ? kv_abort(w, len, rc) : PACER_OK;
}

pacer_err gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v) { return kv_scalar(w, key, GGUF_TYPE_UINT32, &v, 4); }
pacer_err gguf_writer_add_i32(gguf_writer *w, const char *key, int32_t v) { return kv_scalar(w, key, GGUF_TYPE_INT32, &v, 4); }
pacer_err gguf_writer_add_u64(gguf_writer *w, const char *key, uint64_t v) { return kv_scalar(w, key, GGUF_TYPE_UINT64, &v, 8); }
pacer_err gguf_writer_add_f32(gguf_writer *w, const char *key, float v) { return kv_scalar(w, key, GGUF_TYPE_FLOAT32, &v, 4); }

pacer_err gguf_writer_add_bool(gguf_writer *w, const char *key, bool v) {
    uint8_t b = v ? 1 : 0;
    return kv_scalar(w, key, GGUF_TYPE_BOOL, &b, 1);
}

pacer_err gguf_writer_add_str(gguf_writer *w, const char *key, const char *v) {
    size_t len = w->kv.len;
    pacer_err rc = kv_begin(w, key, GGUF_TYPE_STRING);
    if (rc) return rc;
    rc = put_str(&w->kv, v, strlen(v));
    return rc ? kv_abort(w, len, rc) : PACER_OK;
}

static size_t value_size(gguf_value_type t) {
    switch (t) {
    case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
    case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
    case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
    case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
    default: return 0;
    }
}

pacer_err gguf_writer_add_arr(gguf_writer *w, const char *key, gguf_value_type et, const void *data, uint64_t n) {
    size_t es = value_size(et);
    if (es == 0 || n > SIZE_MAX / es) return PACER_ERR_ARG;
    size_t len = w->kv.len;
    pacer_err rc = kv_begin(w, key, GGUF_TYPE_ARRAY);
    if (rc) return rc;
    rc = put_u32(&w->kv, et);
    if (!rc) rc = put_u64(&w->kv, n);
    if (!rc && n) rc = buf_append(&w->kv, data, (size_t)n * es);
    return rc ? kv_abort(w, len, rc) : PACER_OK;
}

pacer_err gguf_writer_add_arr_str(gguf_writer *w, const char *key, const char *const *strs, const size_t *lens,
                                  uint64_t n) {
    size_t len = w->kv.len;
    pacer_err rc = kv_begin(w, key, GGUF_TYPE_ARRAY);
    if (rc) return rc;
    rc = put_u32(&w->kv, GGUF_TYPE_STRING);
    if (!rc) rc = put_u64(&w->kv, n);
    for (uint64_t j = 0; !rc && j < n; j++) rc = put_str(&w->kv, strs[j], lens ? lens[j] : strlen(strs[j]));
    return rc ? kv_abort(w, len, rc) : PACER_OK;
}

pacer_err gguf_writer_copy_kv(gguf_writer *w, const gguf_file *src, int64_t i) {
    const char *key = gguf_get_key(src, i);
    if (!key) return PACER_ERR_ARG;
    gguf_value_type t = gguf_get_kv_type(src, i);
    pacer_err rc;
    if (t == GGUF_TYPE_STRING) return gguf_writer_add_str(w, key, gguf_get_kv_str(src, i));
    if (t == GGUF_TYPE_ARRAY) {
        gguf_value_type et = gguf_get_arr_type(src, i);
        uint64_t n = gguf_get_arr_n(src, i);
        if (et != GGUF_TYPE_STRING) return gguf_writer_add_arr(w, key, et, gguf_get_arr_data(src, i), n);
        size_t start = w->kv.len;
        rc = kv_begin(w, key, GGUF_TYPE_ARRAY);
        if (rc) return rc;
        rc = put_u32(&w->kv, GGUF_TYPE_STRING);
        if (!rc) rc = put_u64(&w->kv, n);
        for (uint64_t j = 0; !rc && j < n; j++) {
            size_t len;
            const char *s = gguf_get_arr_str(src, i, j, &len);
            rc = put_str(&w->kv, s, len);
        }
        return rc ? kv_abort(w, start, rc) : PACER_OK;
    }
    /* scalars: re-encode from the decoded value in the original type */
    uint8_t v[8];
    int64_t iv = 0;
    uint64_t uv = 0;
    double fv = 0;
    size_t n = value_size(t);
    if (n == 0) return PACER_ERR_ARG;
    switch (t) {
    case GGUF_TYPE_FLOAT32: { gguf_get_kv_f64(src, i, &fv); float f = (float)fv; memcpy(v, &f, 4); break; }
    case GGUF_TYPE_FLOAT64: gguf_get_kv_f64(src, i, &fv); memcpy(v, &fv, 8); break;
    case GGUF_TYPE_INT8: case GGUF_TYPE_INT16: case GGUF_TYPE_INT32: case GGUF_TYPE_INT64:
        gguf_get_kv_i64(src, i, &iv);
        memcpy(v, &iv, n); /* little-endian host: the low bytes */
        break;
    default:
        gguf_get_kv_u64(src, i, &uv);
        memcpy(v, &uv, n);
        break;
    }
    return kv_scalar(w, key, t, v, n);
}

pacer_err gguf_writer_set_alignment(gguf_writer *w, uint32_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) || w->n_tensors) return PACER_ERR_ARG;
    pacer_err rc = gguf_writer_add_u32(w, "general.alignment", alignment);
    if (!rc) w->alignment = alignment;
    return rc;
}

static uint64_t pad_to(uint64_t x, uint32_t a) { return (x + a - 1) / a * a; }

pacer_err gguf_writer_add_tensor(gguf_writer *w, const char *name, ggml_type type, int n_dims, const int64_t *ne) {
    if (w->header_done) return PACER_ERR_STATE;
    if (!name || !name[0] || n_dims < 1 || n_dims > GGUF_MAX_DIMS) return PACER_ERR_ARG;
    for (uint64_t i = 0; i < w->n_tensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0) return PACER_ERR_ARG;
    writer_tensor t = {0};
    t.type = type;
    t.n_dims = n_dims;
    uint64_t n_el = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) {
        t.ne[d] = d < n_dims ? ne[d] : 1;
        if (t.ne[d] < 0 || (t.ne[d] && n_el > (uint64_t)INT64_MAX / (uint64_t)t.ne[d])) return PACER_ERR_ARG;
        n_el *= (uint64_t)t.ne[d];
    }
    uint64_t row;
    if (!ggml_type_row_size(type, t.ne[0], &row)) return PACER_ERR_ARG;
    t.nbytes = t.ne[0] ? row * (n_el / (uint64_t)t.ne[0]) : 0;
    t.offset = w->data_size;
    if (w->n_tensors == w->tensors_cap) {
        uint64_t cap = w->tensors_cap ? w->tensors_cap * 2 : 64;
        writer_tensor *nt = realloc(w->tensors, cap * sizeof *nt);
        if (!nt) return PACER_ERR_NOMEM;
        w->tensors = nt;
        w->tensors_cap = cap;
    }
    t.name = strdup(name);
    if (!t.name) return PACER_ERR_NOMEM;
    w->tensors[w->n_tensors++] = t;
    w->data_size = pad_to(t.offset + t.nbytes, w->alignment);
    return PACER_OK;
}

uint64_t gguf_writer_data_size(const gguf_writer *w) { return w->data_size; }

pacer_err gguf_writer_write_header(gguf_writer *w, gguf_sink_fn sink, void *ctx) {
    if (w->header_done) return PACER_ERR_STATE;
    buf h;
    buf_init(&h, GGUF_WRITER_MAX_HEADER);
    pacer_err rc = buf_append(&h, GGUF_MAGIC, 4);
    if (!rc) rc = put_u32(&h, 3);
    if (!rc) rc = put_u64(&h, w->n_tensors);
    if (!rc) rc = put_u64(&h, w->n_kv);
    if (!rc && w->kv.len) rc = buf_append(&h, w->kv.data, w->kv.len);
    for (uint64_t i = 0; !rc && i < w->n_tensors; i++) {
        const writer_tensor *t = &w->tensors[i];
        rc = put_str(&h, t->name, strlen(t->name));
        if (!rc) rc = put_u32(&h, (uint32_t)t->n_dims);
        for (int d = 0; !rc && d < t->n_dims; d++) rc = put_u64(&h, (uint64_t)t->ne[d]);
        if (!rc) rc = put_u32(&h, (uint32_t)t->type);
        if (!rc) rc = put_u64(&h, t->offset);
    }
    static const uint8_t zeros[64] = {0};
    while (!rc && h.len % w->alignment) {
        size_t n = w->alignment - h.len % w->alignment;
        rc = buf_append(&h, zeros, n < sizeof zeros ? n : sizeof zeros);
    }
    if (!rc) rc = sink(ctx, h.data, h.len);
    buf_free(&h);
    if (!rc) {
        w->header_done = true;
        w->sink = sink;
        w->sink_ctx = ctx;
    }
    return rc;
}

static pacer_err write_zeros(gguf_writer *w, uint64_t n) {
    static const uint8_t zeros[256] = {0};
    pacer_err rc = PACER_OK;
    while (!rc && n) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        rc = w->sink(w->sink_ctx, zeros, k);
        n -= k;
    }
    return rc;
}

/* Moves to the next tensor once the current one is complete, writing the padding. */
static pacer_err advance_full(gguf_writer *w) {
    pacer_err rc = PACER_OK;
    while (!rc && w->cur_tensor < w->n_tensors && w->cur_done == w->tensors[w->cur_tensor].nbytes) {
        const writer_tensor *t = &w->tensors[w->cur_tensor];
        uint64_t end = t->offset + t->nbytes;
        rc = write_zeros(w, pad_to(end, w->alignment) - end);
        w->cur_tensor++;
        w->cur_done = 0;
    }
    return rc;
}

pacer_err gguf_writer_write_data(gguf_writer *w, const void *data, size_t n) {
    if (!w->header_done) return PACER_ERR_STATE;
    const uint8_t *p = data;
    pacer_err rc = advance_full(w);
    while (!rc && n) {
        if (w->cur_tensor >= w->n_tensors) return PACER_ERR_ARG;
        const writer_tensor *t = &w->tensors[w->cur_tensor];
        uint64_t room = t->nbytes - w->cur_done;
        size_t k = n < room ? n : (size_t)room;
        rc = w->sink(w->sink_ctx, p, k);
        if (rc) break;
        p += k;
        n -= k;
        w->cur_done += k;
        rc = advance_full(w);
    }
    return rc;
}

pacer_err gguf_writer_finish(gguf_writer *w) {
    if (!w->header_done) return PACER_ERR_STATE;
    pacer_err rc = advance_full(w);
    if (rc) return rc;
    return w->cur_tensor == w->n_tensors ? PACER_OK : PACER_ERR_STATE;
}
