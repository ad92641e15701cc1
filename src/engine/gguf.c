/* gguf.c - GGUF v2/v3 parser over a read-only mapping. A cursor checks every read against
 * the end of the file; counts are checked against what the remaining bytes could hold
 * before anything is allocated; tensor extents are checked against the data section. */
#include "engine/gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct gguf_kv {
    char *key;
    uint32_t type;     /* gguf_value_type */
    uint32_t arr_type; /* for arrays */
    uint64_t arr_n;
    union {
        int64_t i;
        uint64_t u;
        double f;
    } v;
    char *str;              /* STRING value, NUL-terminated copy */
    void *arr_data;         /* numeric arrays: aligned copy */
    const uint8_t **arr_sp; /* string arrays: element starts in the mapping */
    uint64_t *arr_sl;       /* string arrays: element lengths */
} gguf_kv;

struct gguf_file {
    const uint8_t *base;
    uint64_t size;
    bool mapped;
    uint32_t version;
    uint32_t alignment;
    uint64_t data_offset;
    int64_t n_kv;
    gguf_kv *kv;
    int64_t n_tensors;
    gguf_tensor *tensors;
};

typedef struct gguf_reader {
    const uint8_t *p;
    uint64_t size;
    uint64_t pos;
    char *err;
    size_t err_len;
} gguf_reader;

/* Takes `n` bytes; `what` names them in the error. */
static pacer_err rd_take(gguf_reader *r, uint64_t n, const uint8_t **out, const char *what) {
    if (n > r->size - r->pos)
        return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "truncated file: %s at byte %llu needs %llu bytes, %llu left", what,
                       (unsigned long long)r->pos, (unsigned long long)n, (unsigned long long)(r->size - r->pos));
    *out = r->p + r->pos;
    r->pos += n;
    return PACER_OK;
}

static pacer_err rd_u32(gguf_reader *r, uint32_t *v, const char *what) {
    const uint8_t *p = NULL;
    pacer_err rc = rd_take(r, 4, &p, what);
    if (rc == PACER_OK) memcpy(v, p, 4);
    return rc;
}

static pacer_err rd_u64(gguf_reader *r, uint64_t *v, const char *what) {
    const uint8_t *p = NULL;
    pacer_err rc = rd_take(r, 8, &p, what);
    if (rc == PACER_OK) memcpy(v, p, 8);
    return rc;
}

/* A GGUF string: u64 length, then the bytes (no terminator). */
static pacer_err rd_str(gguf_reader *r, const uint8_t **s, uint64_t *len, const char *what) {
    pacer_err rc = rd_u64(r, len, what);
    if (rc) return rc;
    if (*len > r->size - r->pos)
        return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "truncated file: %s of %llu bytes at byte %llu runs past the end", what,
                       (unsigned long long)*len, (unsigned long long)(r->pos - 8));
    return rd_take(r, *len, s, what);
}

static char *str_dup_n(const uint8_t *s, uint64_t n) {
    char *c = malloc((size_t)n + 1);
    if (!c) return NULL;
    memcpy(c, s, (size_t)n);
    c[n] = '\0';
    return c;
}

/* Size on disk of one scalar of type `t`; 0 for STRING/ARRAY/unknown. */
static uint32_t scalar_size(uint32_t t) {
    static const uint8_t sizes[GGUF_TYPE__COUNT] = {
        [GGUF_TYPE_UINT8] = 1, [GGUF_TYPE_INT8] = 1,    [GGUF_TYPE_UINT16] = 2, [GGUF_TYPE_INT16] = 2,
        [GGUF_TYPE_UINT32] = 4, [GGUF_TYPE_INT32] = 4,  [GGUF_TYPE_FLOAT32] = 4, [GGUF_TYPE_BOOL] = 1,
        [GGUF_TYPE_UINT64] = 8, [GGUF_TYPE_INT64] = 8,  [GGUF_TYPE_FLOAT64] = 8,
    };
    return t < GGUF_TYPE__COUNT ? sizes[t] : 0;
}

const char *gguf_type_name(uint32_t t) {
    static const char *const names[GGUF_TYPE__COUNT] = {
        [GGUF_TYPE_UINT8] = "u8",   [GGUF_TYPE_INT8] = "i8",   [GGUF_TYPE_UINT16] = "u16", [GGUF_TYPE_INT16] = "i16",
        [GGUF_TYPE_UINT32] = "u32", [GGUF_TYPE_INT32] = "i32", [GGUF_TYPE_FLOAT32] = "f32", [GGUF_TYPE_BOOL] = "bool",
        [GGUF_TYPE_STRING] = "str", [GGUF_TYPE_ARRAY] = "arr", [GGUF_TYPE_UINT64] = "u64", [GGUF_TYPE_INT64] = "i64",
        [GGUF_TYPE_FLOAT64] = "f64",
    };
    return t < GGUF_TYPE__COUNT ? names[t] : "?";
}

/* Decodes one scalar of type `t` at `p` into kv->v. */
static void scalar_decode(gguf_kv *kv, uint32_t t, const uint8_t *p) {
    switch (t) {
    case GGUF_TYPE_UINT8: kv->v.u = p[0]; break;
    case GGUF_TYPE_BOOL: kv->v.u = p[0] != 0; break;
    case GGUF_TYPE_INT8: kv->v.i = (int8_t)p[0]; break;
    case GGUF_TYPE_UINT16: { uint16_t x; memcpy(&x, p, 2); kv->v.u = x; break; }
    case GGUF_TYPE_INT16: { int16_t x; memcpy(&x, p, 2); kv->v.i = x; break; }
    case GGUF_TYPE_UINT32: { uint32_t x; memcpy(&x, p, 4); kv->v.u = x; break; }
    case GGUF_TYPE_INT32: { int32_t x; memcpy(&x, p, 4); kv->v.i = x; break; }
    case GGUF_TYPE_FLOAT32: { float x; memcpy(&x, p, 4); kv->v.f = x; break; }
    case GGUF_TYPE_UINT64: { uint64_t x; memcpy(&x, p, 8); kv->v.u = x; break; }
    case GGUF_TYPE_INT64: { int64_t x; memcpy(&x, p, 8); kv->v.i = x; break; }
    case GGUF_TYPE_FLOAT64: { double x; memcpy(&x, p, 8); kv->v.f = x; break; }
    default: break;
    }
}

static pacer_err parse_array(gguf_reader *r, gguf_kv *kv, const char *key) {
    uint32_t et;
    uint64_t n;
    pacer_err rc = rd_u32(r, &et, "array element type");
    if (!rc) rc = rd_u64(r, &n, "array length");
    if (rc) return rc;
    if (et == GGUF_TYPE_ARRAY) return pacer_errorf(r->err, r->err_len, PACER_ERR_UNSUPPORTED, "key '%s': nested arrays are not supported", key);
    if (et >= GGUF_TYPE__COUNT)
        return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "key '%s': unknown array element type %u", key, et);
    kv->arr_type = et;
    kv->arr_n = n;
    uint64_t left = r->size - r->pos;
    if (et == GGUF_TYPE_STRING) {
        /* every string takes at least its 8-byte length */
        if (n > left / 8)
            return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "key '%s': array of %llu strings cannot fit in the %llu bytes left", key,
                           (unsigned long long)n, (unsigned long long)left);
        if (n == 0) return PACER_OK;
        kv->arr_sp = malloc((size_t)n * sizeof *kv->arr_sp);
        kv->arr_sl = malloc((size_t)n * sizeof *kv->arr_sl);
        if (!kv->arr_sp || !kv->arr_sl) return pacer_errorf(r->err, r->err_len, PACER_ERR_NOMEM, "out of memory reading key '%s'", key);
        for (uint64_t j = 0; j < n; j++) {
            const uint8_t *s = NULL;
            rc = rd_str(r, &s, &kv->arr_sl[j], "array string");
            if (rc) return rc;
            kv->arr_sp[j] = s;
        }
        return PACER_OK;
    }
    uint32_t es = scalar_size(et);
    if (n > left / es)
        return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "key '%s': array of %llu %s values needs more than the %llu bytes left", key,
                       (unsigned long long)n, gguf_type_name(et), (unsigned long long)left);
    if (n == 0) return PACER_OK;
    const uint8_t *p = NULL;
    rc = rd_take(r, n * es, &p, "array data");
    if (rc) return rc;
    kv->arr_data = aligned_alloc(8, ((size_t)(n * es) + 7) & ~(size_t)7);
    if (!kv->arr_data) return pacer_errorf(r->err, r->err_len, PACER_ERR_NOMEM, "out of memory reading key '%s'", key);
    memcpy(kv->arr_data, p, (size_t)(n * es));
    return PACER_OK;
}

static pacer_err parse_kvs(gguf_reader *r, gguf_file *f) {
    pacer_err rc = PACER_OK;
    for (int64_t i = 0; i < f->n_kv; i++) {
        gguf_kv *kv = &f->kv[i];
        const uint8_t *s = NULL;
        uint64_t len;
        rc = rd_str(r, &s, &len, "metadata key");
        if (rc) return rc;
        if (len == 0) return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "metadata key %lld is empty", (long long)i);
        if (memchr(s, 0, (size_t)len)) return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "metadata key %lld contains a NUL byte", (long long)i);
        kv->key = str_dup_n(s, len);
        if (!kv->key) return pacer_errorf(r->err, r->err_len, PACER_ERR_NOMEM, "out of memory");
        for (int64_t j = 0; j < i; j++)
            if (strcmp(f->kv[j].key, kv->key) == 0)
                return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "duplicate metadata key '%s'", kv->key);
        rc = rd_u32(r, &kv->type, "metadata value type");
        if (rc) return rc;
        if (kv->type >= GGUF_TYPE__COUNT)
            return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "key '%s': unknown value type %u", kv->key, kv->type);
        if (kv->type == GGUF_TYPE_STRING) {
            rc = rd_str(r, &s, &len, "metadata string value");
            if (rc) return rc;
            kv->str = str_dup_n(s, len);
            if (!kv->str) return pacer_errorf(r->err, r->err_len, PACER_ERR_NOMEM, "out of memory");
        } else if (kv->type == GGUF_TYPE_ARRAY) {
            rc = parse_array(r, kv, kv->key);
            if (rc) return rc;
        } else {
            const uint8_t *p = NULL;
            rc = rd_take(r, scalar_size(kv->type), &p, "metadata value");
            if (rc) return rc;
            scalar_decode(kv, kv->type, p);
        }
    }
    return rc;
}

static pacer_err parse_tensor_infos(gguf_reader *r, gguf_file *f) {
    pacer_err rc = PACER_OK;
    for (int64_t i = 0; i < f->n_tensors; i++) {
        gguf_tensor *t = &f->tensors[i];
        const uint8_t *s = NULL;
        uint64_t len;
        rc = rd_str(r, &s, &len, "tensor name");
        if (rc) return rc;
        if (len == 0 || memchr(s, 0, (size_t)len))
            return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "tensor %lld has an empty or invalid name", (long long)i);
        t->name = str_dup_n(s, len);
        if (!t->name) return pacer_errorf(r->err, r->err_len, PACER_ERR_NOMEM, "out of memory");
        uint32_t n_dims, type;
        rc = rd_u32(r, &n_dims, "tensor dimension count");
        if (rc) return rc;
        if (n_dims < 1 || n_dims > GGUF_MAX_DIMS)
            return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "tensor '%s': %u dimensions (1 to %d allowed)", t->name, n_dims, GGUF_MAX_DIMS);
        t->n_dims = (int)n_dims;
        int64_t n_el = 1;
        for (int d = 0; d < GGUF_MAX_DIMS; d++) {
            uint64_t ne = 1;
            if (d < (int)n_dims) {
                rc = rd_u64(r, &ne, "tensor dimensions");
                if (rc) return rc;
            }
            if (ne > (uint64_t)INT64_MAX || (ne != 0 && (uint64_t)n_el > (uint64_t)INT64_MAX / ne))
                return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "tensor '%s': dimensions overflow", t->name);
            t->ne[d] = (int64_t)ne;
            n_el *= (int64_t)ne;
        }
        t->n_elements = n_el;
        rc = rd_u32(r, &type, "tensor type");
        if (!rc) rc = rd_u64(r, &t->offset, "tensor offset");
        if (rc) return rc;
        const ggml_type_info *ti = ggml_type_get_info(type);
        if (!ti) return pacer_errorf(r->err, r->err_len, PACER_ERR_UNSUPPORTED, "tensor '%s': unknown tensor type %u", t->name, type);
        t->type = (ggml_type)type;
        uint64_t row;
        if (!ggml_type_row_size(type, t->ne[0], &row))
            return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "tensor '%s': row of %lld elements is not a multiple of the %s block size %u",
                           t->name, (long long)t->ne[0], ti->name, ti->block_size);
        uint64_t rows = (uint64_t)(t->ne[0] ? n_el / t->ne[0] : 0);
        if (row != 0 && rows > UINT64_MAX / row) return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "tensor '%s': size overflows", t->name);
        t->nbytes = row * rows;
        if (t->offset % f->alignment != 0)
            return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "tensor '%s': offset %llu is not a multiple of the alignment %u", t->name,
                           (unsigned long long)t->offset, f->alignment);
        for (int64_t j = 0; j < i; j++)
            if (strcmp(f->tensors[j].name, t->name) == 0)
                return pacer_errorf(r->err, r->err_len, PACER_ERR_FORMAT, "duplicate tensor name '%s'", t->name);
    }
    return rc;
}

static pacer_err gguf_parse(gguf_file *f, char *err, size_t err_len) {
    gguf_reader r = {f->base, f->size, 0, err, err_len};
    const uint8_t *p = NULL;
    uint64_t n_tensors, n_kv;
    pacer_err rc = rd_take(&r, 4, &p, "magic");
    if (rc) return rc;
    if (memcmp(p, GGUF_MAGIC, 4) != 0) return pacer_errorf(r.err, r.err_len, PACER_ERR_FORMAT, "not a GGUF file (bad magic)");
    rc = rd_u32(&r, &f->version, "version");
    if (rc) return rc;
    if (f->version == 1) return pacer_errorf(r.err, r.err_len, PACER_ERR_UNSUPPORTED, "GGUF version 1 is not supported");
    if (f->version != 2 && f->version != 3)
        return pacer_errorf(r.err, r.err_len, PACER_ERR_UNSUPPORTED, "unknown GGUF version %u", f->version);
    rc = rd_u64(&r, &n_tensors, "tensor count");
    if (!rc) rc = rd_u64(&r, &n_kv, "metadata count");
    if (rc) return rc;
    /* smallest key/value: 8 length + 1 byte + 4 type + 1 value; smallest tensor info: 8 + 1 + 4 + 8 + 4 + 8 */
    uint64_t left = r.size - r.pos;
    if (n_kv > left / 14)
        return pacer_errorf(r.err, r.err_len, PACER_ERR_FORMAT, "metadata count %llu cannot fit in a %llu-byte file", (unsigned long long)n_kv,
                       (unsigned long long)f->size);
    if (n_tensors > left / 33)
        return pacer_errorf(r.err, r.err_len, PACER_ERR_FORMAT, "tensor count %llu cannot fit in a %llu-byte file",
                       (unsigned long long)n_tensors, (unsigned long long)f->size);
    f->n_kv = (int64_t)n_kv;
    f->n_tensors = (int64_t)n_tensors;
    f->kv = calloc(n_kv ? (size_t)n_kv : 1, sizeof *f->kv);
    f->tensors = calloc(n_tensors ? (size_t)n_tensors : 1, sizeof *f->tensors);
    if (!f->kv || !f->tensors) return pacer_errorf(r.err, r.err_len, PACER_ERR_NOMEM, "out of memory");
    rc = parse_kvs(&r, f);
    if (rc) return rc;
    f->alignment = GGUF_DEFAULT_ALIGNMENT;
    int64_t ai = gguf_find_key(f, "general.alignment");
    if (ai >= 0) {
        uint64_t a;
        if (!gguf_get_kv_u64(f, ai, &a) || a == 0 || (a & (a - 1)) != 0 || a > (1u << 30))
            return pacer_errorf(r.err, r.err_len, PACER_ERR_FORMAT, "general.alignment is not a power of two up to 2^30");
        f->alignment = (uint32_t)a;
    }
    rc = parse_tensor_infos(&r, f);
    if (rc) return rc;
    uint64_t pad = (f->alignment - r.pos % f->alignment) % f->alignment;
    f->data_offset = r.pos + pad;
    if (f->n_tensors > 0 && f->data_offset > f->size)
        return pacer_errorf(r.err, r.err_len, PACER_ERR_FORMAT, "truncated file: data section starts at byte %llu, file has %llu",
                       (unsigned long long)f->data_offset, (unsigned long long)f->size);
    if (f->data_offset > f->size) f->data_offset = f->size;
    uint64_t data_size = f->size - f->data_offset;
    for (int64_t i = 0; i < f->n_tensors; i++) {
        gguf_tensor *t = &f->tensors[i];
        if (t->offset > data_size || t->nbytes > data_size - t->offset)
            return pacer_errorf(r.err, r.err_len, PACER_ERR_FORMAT,
                           "tensor '%s': bytes %llu..%llu of the data section lie past its end (%llu bytes; file truncated "
                           "or bad offset)",
                           t->name, (unsigned long long)t->offset, (unsigned long long)(t->offset + t->nbytes),
                           (unsigned long long)data_size);
        t->data = f->base + f->data_offset + t->offset;
    }
    return PACER_OK;
}

static pacer_err gguf_open_common(gguf_file *f, gguf_file **out, char *err, size_t err_len) {
    pacer_err rc = gguf_parse(f, err, err_len);
    if (rc) {
        gguf_close(f);
        return rc;
    }
    *out = f;
    return PACER_OK;
}

pacer_err gguf_open_memory(const void *data, size_t size, gguf_file **out, char *err, size_t err_len) {
    *out = NULL;
    if (err && err_len) err[0] = '\0';
    if (!data && size) return PACER_ERR_ARG;
    gguf_file *f = calloc(1, sizeof *f);
    if (!f) return PACER_ERR_NOMEM;
    f->base = data;
    f->size = size;
    return gguf_open_common(f, out, err, err_len);
}

pacer_err gguf_open(const char *path, gguf_file **out, char *err, size_t err_len) {
    *out = NULL;
    if (err && err_len) err[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (err) snprintf(err, err_len, "cannot open: %s", strerror(errno));
        return errno == ENOENT ? PACER_ERR_NOT_FOUND : PACER_ERR_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (err) snprintf(err, err_len, "not a regular file");
        close(fd);
        return PACER_ERR_IO;
    }
    const void *map = NULL;
    if (st.st_size > 0) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            if (err) snprintf(err, err_len, "cannot map: %s", strerror(errno));
            close(fd);
            return PACER_ERR_IO;
        }
    }
    close(fd);
    gguf_file *f = calloc(1, sizeof *f);
    if (!f) {
        if (map) munmap((void *)map, (size_t)st.st_size);
        return PACER_ERR_NOMEM;
    }
    f->base = map;
    f->size = (uint64_t)st.st_size;
    f->mapped = map != NULL;
    return gguf_open_common(f, out, err, err_len);
}

void gguf_close(gguf_file *f) {
    if (!f) return;
    if (f->kv) {
        for (int64_t i = 0; i < f->n_kv; i++) {
            free(f->kv[i].key);
            free(f->kv[i].str);
            free(f->kv[i].arr_data);
            free(f->kv[i].arr_sp);
            free(f->kv[i].arr_sl);
        }
        free(f->kv);
    }
    if (f->tensors) {
        for (int64_t i = 0; i < f->n_tensors; i++) free((char *)f->tensors[i].name);
        free(f->tensors);
    }
    if (f->mapped) munmap((void *)f->base, (size_t)f->size);
    free(f);
}

uint32_t gguf_get_version(const gguf_file *f) { return f->version; }
uint64_t gguf_get_file_size(const gguf_file *f) { return f->size; }
uint64_t gguf_get_data_offset(const gguf_file *f) { return f->data_offset; }
uint32_t gguf_get_alignment(const gguf_file *f) { return f->alignment; }
const void *gguf_get_base(const gguf_file *f) { return f->base; }
int64_t gguf_get_n_kv(const gguf_file *f) { return f->n_kv; }

int64_t gguf_find_key(const gguf_file *f, const char *key) {
    for (int64_t i = 0; i < f->n_kv; i++)
        if (f->kv[i].key && strcmp(f->kv[i].key, key) == 0) return i;
    return -1;
}

static const gguf_kv *kv_at(const gguf_file *f, int64_t i) { return i >= 0 && i < f->n_kv ? &f->kv[i] : NULL; }

const char *gguf_get_key(const gguf_file *f, int64_t i) {
    const gguf_kv *kv = kv_at(f, i);
    return kv ? kv->key : NULL;
}

gguf_value_type gguf_get_kv_type(const gguf_file *f, int64_t i) {
    const gguf_kv *kv = kv_at(f, i);
    return kv ? (gguf_value_type)kv->type : GGUF_TYPE__COUNT;
}

static bool type_is_signed(uint32_t t) {
    return t == GGUF_TYPE_INT8 || t == GGUF_TYPE_INT16 || t == GGUF_TYPE_INT32 || t == GGUF_TYPE_INT64;
}

static bool type_is_unsigned(uint32_t t) {
    return t == GGUF_TYPE_UINT8 || t == GGUF_TYPE_UINT16 || t == GGUF_TYPE_UINT32 || t == GGUF_TYPE_UINT64 ||
           t == GGUF_TYPE_BOOL;
}

bool gguf_get_kv_i64(const gguf_file *f, int64_t i, int64_t *out) {
    const gguf_kv *kv = kv_at(f, i);
    if (!kv) return false;
    if (type_is_signed(kv->type)) {
        *out = kv->v.i;
        return true;
    }
    if (type_is_unsigned(kv->type) && kv->v.u <= (uint64_t)INT64_MAX) {
        *out = (int64_t)kv->v.u;
        return true;
    }
    return false;
}

bool gguf_get_kv_u64(const gguf_file *f, int64_t i, uint64_t *out) {
    const gguf_kv *kv = kv_at(f, i);
    if (!kv) return false;
    if (type_is_unsigned(kv->type)) {
        *out = kv->v.u;
        return true;
    }
    if (type_is_signed(kv->type) && kv->v.i >= 0) {
        *out = (uint64_t)kv->v.i;
        return true;
    }
    return false;
}

bool gguf_get_kv_f64(const gguf_file *f, int64_t i, double *out) {
    const gguf_kv *kv = kv_at(f, i);
    if (!kv) return false;
    if (kv->type == GGUF_TYPE_FLOAT32 || kv->type == GGUF_TYPE_FLOAT64) {
        *out = kv->v.f;
        return true;
    }
    if (type_is_signed(kv->type)) {
        *out = (double)kv->v.i;
        return true;
    }
    if (type_is_unsigned(kv->type)) {
        *out = (double)kv->v.u;
        return true;
    }
    return false;
}

const char *gguf_get_kv_str(const gguf_file *f, int64_t i) {
    const gguf_kv *kv = kv_at(f, i);
    return kv && kv->type == GGUF_TYPE_STRING ? kv->str : NULL;
}

uint32_t gguf_get_u32(const gguf_file *f, const char *key, uint32_t def) {
    uint64_t v;
    return gguf_get_kv_u64(f, gguf_find_key(f, key), &v) && v <= UINT32_MAX ? (uint32_t)v : def;
}

int32_t gguf_get_i32(const gguf_file *f, const char *key, int32_t def) {
    int64_t v;
    return gguf_get_kv_i64(f, gguf_find_key(f, key), &v) && v >= INT32_MIN && v <= INT32_MAX ? (int32_t)v : def;
}

uint64_t gguf_get_u64(const gguf_file *f, const char *key, uint64_t def) {
    uint64_t v;
    return gguf_get_kv_u64(f, gguf_find_key(f, key), &v) ? v : def;
}

float gguf_get_f32(const gguf_file *f, const char *key, float def) {
    double v;
    return gguf_get_kv_f64(f, gguf_find_key(f, key), &v) ? (float)v : def;
}

bool gguf_get_bool(const gguf_file *f, const char *key, bool def) {
    const gguf_kv *kv = kv_at(f, gguf_find_key(f, key));
    return kv && kv->type == GGUF_TYPE_BOOL ? kv->v.u != 0 : def;
}

const char *gguf_get_str(const gguf_file *f, const char *key, const char *def) {
    const char *s = gguf_get_kv_str(f, gguf_find_key(f, key));
    return s ? s : def;
}

gguf_value_type gguf_get_arr_type(const gguf_file *f, int64_t i) {
    const gguf_kv *kv = kv_at(f, i);
    return kv && kv->type == GGUF_TYPE_ARRAY ? (gguf_value_type)kv->arr_type : GGUF_TYPE__COUNT;
}

uint64_t gguf_get_arr_n(const gguf_file *f, int64_t i) {
    const gguf_kv *kv = kv_at(f, i);
    return kv && kv->type == GGUF_TYPE_ARRAY ? kv->arr_n : 0;
}

const char *gguf_get_arr_str(const gguf_file *f, int64_t i, uint64_t j, size_t *len) {
    const gguf_kv *kv = kv_at(f, i);
    if (!kv || kv->type != GGUF_TYPE_ARRAY || kv->arr_type != GGUF_TYPE_STRING || j >= kv->arr_n) return NULL;
    if (len) *len = (size_t)kv->arr_sl[j];
    return (const char *)kv->arr_sp[j];
}

const void *gguf_get_arr_data(const gguf_file *f, int64_t i) {
    const gguf_kv *kv = kv_at(f, i);
    return kv && kv->type == GGUF_TYPE_ARRAY ? kv->arr_data : NULL;
}

int64_t gguf_get_n_tensors(const gguf_file *f) { return f->n_tensors; }

const gguf_tensor *gguf_get_tensor(const gguf_file *f, int64_t i) {
    return i >= 0 && i < f->n_tensors ? &f->tensors[i] : NULL;
}

const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name) {
    for (int64_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}
