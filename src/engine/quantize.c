/* quantize.c - GGUF to GGUF conversion of weight matrices, streamed row by row (the input
 * stays mapped, the output never sits in memory whole), and the K-quant quantizers. */
#include "engine/quantize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/buf.h"
#include "engine/gguf.h"
#include "engine/gguf_write.h"

#define QUANTIZE_HEADER_MAX (256u << 20)

/* What each tensor of the input becomes. */
typedef struct quantize_tensor {
    const gguf_tensor *src;
    ggml_type out;
    int how; /* 0 copied, 1 converted, 2 fallback */
} quantize_tensor;

struct quantize_job {
    gguf_file *in;
    gguf_writer *w;
    quantize_scheme scheme;
    quantize_tensor *t;
    int64_t n;
    buf header;   /* the header bytes, rendered at planning time */
    FILE *out;    /* NULL while planning: the sink then fills `header` */
    int counts[3];
};

static const ggml_type quantize_types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0,
                                           GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};

bool quantize_type_supported(ggml_type t) {
    for (size_t i = 0; i < sizeof quantize_types / sizeof quantize_types[0]; i++)
        if (quantize_types[i] == t) return true;
    return false;
}

const char *quantize_type_list(void) { return "f32, f16, bf16, q8_0, q4_0, q4_K, q6_K, q4_K_M"; }

bool quantize_scheme_from_name(const char *name, quantize_scheme *out) {
    if (strcasecmp(name, "q4_K_M") == 0) {
        *out = (quantize_scheme){GGML_TYPE_Q4_K, true};
        return true;
    }
    *out = (quantize_scheme){GGML_TYPE_F16, false};
    return ggml_type_from_name(name, &out->type) && quantize_type_supported(out->type);
}

const char *quantize_scheme_name(quantize_scheme s) { return s.k_m ? "q4_K_M" : ggml_type_name(s.type); }

/* llama.cpp's general.file_type of a checkpoint of scheme s. */
static uint32_t quantize_file_type(quantize_scheme s) {
    if (s.k_m)
        return 15; /* MOSTLY_Q4_K_M */
    switch (s.type) {
    case GGML_TYPE_F32: return 0;
    case GGML_TYPE_F16: return 1;
    case GGML_TYPE_Q4_0: return 2;
    case GGML_TYPE_Q8_0: return 7;
    case GGML_TYPE_Q4_K: return 14; /* MOSTLY_Q4_K_S */
    case GGML_TYPE_Q6_K: return 18;
    case GGML_TYPE_BF16: return 32;
    default: return 1;
    }
}

static bool is_float(ggml_type t) { return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16; }

/* ---------------- K-quants ---------------- */

static float half_round(float v) { return ggml_fp16_to_fp32(ggml_fp32_to_fp16(v)); }

static int clamp_round(float v, int lo, int hi) {
    int q = (int)lrintf(v);
    return q < lo ? lo : q > hi ? hi : q;
}

void quantize_q4_K_row(const float *x, block_q4_K *y, int64_t k) {
    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K, y++) {
        float scale[8], mneg[8], dmax = 0, mmax = 0;
        for (int s = 0; s < 8; s++) {
            float lo = 0, hi = 0; /* the offset is never positive: value = d*ls*q - dmin*lm */
            for (int l = 0; l < 32; l++) {
                float v = x[32 * s + l];
                if (v < lo) lo = v;
                if (v > hi) hi = v;
            }
            scale[s] = (hi - lo) / 15.0f;
            mneg[s] = -lo;
            if (scale[s] > dmax) dmax = scale[s];
            if (mneg[s] > mmax) mmax = mneg[s];
        }
        float d = half_round(dmax / 63.0f), dmin = half_round(mmax / 63.0f);
        y->d = ggml_fp32_to_fp16(d);
        y->dmin = ggml_fp32_to_fp16(dmin);
        memset(y->scales, 0, sizeof y->scales);
        memset(y->qs, 0, sizeof y->qs);
        for (int s = 0; s < 8; s++) {
            int ls = d > 0 ? clamp_round(scale[s] / d, 0, 63) : 0;
            int lm = dmin > 0 ? clamp_round(mneg[s] / dmin, 0, 63) : 0;
            if (s < 4) {
                y->scales[s] |= (uint8_t)ls;
                y->scales[s + 4] |= (uint8_t)lm;
            } else {
                y->scales[s + 4] = (uint8_t)((ls & 0x0f) | ((lm & 0x0f) << 4));
                y->scales[s - 4] |= (uint8_t)((ls >> 4) << 6);
                y->scales[s] |= (uint8_t)((lm >> 4) << 6);
            }
            float step = d * (float)ls, off = dmin * (float)lm;
            uint8_t *q = y->qs + 32 * (s / 2);
            for (int l = 0; l < 32; l++) {
                int v = step > 0 ? clamp_round((x[32 * s + l] + off) / step, 0, 15) : 0;
                q[l] |= (uint8_t)(s % 2 ? v << 4 : v);
            }
        }
    }
}

void quantize_q6_K_row(const float *x, block_q6_K *y, int64_t k) {
    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K, y++) {
        float scale[16], smax = 0;
        for (int s = 0; s < 16; s++) {
            float amax = 0;
            for (int l = 0; l < 16; l++) amax = fmaxf(amax, fabsf(x[16 * s + l]));
            scale[s] = amax / 31.0f;
            if (scale[s] > smax) smax = scale[s];
        }
        float d = half_round(smax / 127.0f);
        y->d = ggml_fp32_to_fp16(d);
        uint8_t u[QK_K];
        for (int s = 0; s < 16; s++) {
            int sc = d > 0 ? clamp_round(scale[s] / d, 0, 127) : 0;
            y->scales[s] = (int8_t)sc;
            float step = d * (float)sc;
            for (int l = 0; l < 16; l++)
                u[16 * s + l] = (uint8_t)((step > 0 ? clamp_round(x[16 * s + l] / step, -32, 31) : 0) + 32);
        }
        for (int h = 0; h < 2; h++) {
            const uint8_t *v = u + 128 * h;
            uint8_t *ql = y->ql + 64 * h, *qh = y->qh + 32 * h;
            for (int l = 0; l < 32; l++) {
                ql[l] = (uint8_t)((v[l] & 15) | ((v[l + 64] & 15) << 4));
                ql[l + 32] = (uint8_t)((v[l + 32] & 15) | ((v[l + 96] & 15) << 4));
                qh[l] = (uint8_t)((v[l] >> 4) | ((v[l + 32] >> 4) << 2) | ((v[l + 64] >> 4) << 4) | ((v[l + 96] >> 4) << 6));
            }
        }
    }
}

static bool quantize_row_to(ggml_type t, const float *x, void *y, int64_t k) {
    if (t == GGML_TYPE_Q4_K) quantize_q4_K_row(x, y, k);
    else if (t == GGML_TYPE_Q6_K) quantize_q6_K_row(x, y, k);
    else return ggml_quantize_row(t, x, y, k);
    return true;
}

/* ---------------- planning ---------------- */

static pacer_err job_sink(void *ctx, const void *data, size_t n) {
    quantize_job *j = ctx;
    if (!j->out) return buf_append(&j->header, data, n);
    return fwrite(data, 1, n, j->out) == n ? PACER_OK : PACER_ERR_IO;
}

static bool fits(ggml_type t, int64_t row) {
    const ggml_type_info *ti = ggml_type_get_info(t);
    return ti && row % ti->block_size == 0;
}

/* llama.cpp's layers that get more bits in its _M mixtures: layer i of n. */
static bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

static bool name_has(const gguf_tensor *t, const char *part) { return strstr(t->name, part) != NULL; }

/* A matrix's type in the Q4_K_M mixture (q4_K, or q6_K); *v and *down count the attn_v and
 * ffn_down matrices met so far (llama.cpp numbers them in file order), nv and ndown in all. */
static ggml_type k_m_type(const gguf_tensor *t, int *v, int nv, int *down, int ndown, bool has_output) {
    if (strcmp(t->name, "output.weight") == 0 || (!has_output && strcmp(t->name, "token_embd.weight") == 0))
        return GGML_TYPE_Q6_K;
    if (name_has(t, "attn_v.weight"))
        return more_bits((*v)++, nv) ? GGML_TYPE_Q6_K : GGML_TYPE_Q4_K;
    if (name_has(t, "ffn_down"))
        return more_bits((*down)++, ndown) ? GGML_TYPE_Q6_K : GGML_TYPE_Q4_K;
    return GGML_TYPE_Q4_K;
}

/* Decides each tensor's output type; refuses quantized matrices. */
static pacer_err plan_tensors(quantize_job *j, char *err, size_t err_len) {
    int nv = 0, ndown = 0, v = 0, down = 0;
    bool has_output = false;
    for (int64_t i = 0; i < j->n; i++) {
        const gguf_tensor *t = gguf_get_tensor(j->in, i);
        nv += t->n_dims >= 2 && name_has(t, "attn_v.weight");
        ndown += t->n_dims >= 2 && name_has(t, "ffn_down");
        has_output |= strcmp(t->name, "output.weight") == 0;
    }
    for (int64_t i = 0; i < j->n; i++) {
        quantize_tensor *q = &j->t[i];
        q->src = gguf_get_tensor(j->in, i);
        q->out = q->src->type;
        if (q->src->n_dims < 2) continue;
        if (!is_float(q->src->type)) {
            snprintf(err, err_len, "tensor %s is %s: quantize needs a checkpoint with f32, f16 or bf16 matrices",
                     q->src->name, ggml_type_name(q->src->type));
            return PACER_ERR_UNSUPPORTED;
        }
        ggml_type want = j->scheme.k_m ? k_m_type(q->src, &v, nv, &down, ndown, has_output) : j->scheme.type;
        if (fits(want, q->src->ne[0])) q->out = want, q->how = 1;
        else if (fits(GGML_TYPE_Q8_0, q->src->ne[0])) q->out = GGML_TYPE_Q8_0, q->how = 2;
    }
    for (int64_t i = 0; i < j->n; i++) j->counts[j->t[i].how]++;
    return PACER_OK;
}

static pacer_err plan_header(quantize_job *j) {
    /* the alignment key is written only where the input had one (32 is the format's default) */
    pacer_err rc = gguf_find_key(j->in, "general.alignment") >= 0 ? gguf_writer_set_alignment(j->w, gguf_get_alignment(j->in))
                                                                    : PACER_OK;
    for (int64_t i = 0; !rc && i < gguf_get_n_kv(j->in); i++) {
        const char *key = gguf_get_key(j->in, i);
        if (strcmp(key, "general.alignment") == 0) continue;
        if (strcmp(key, "general.file_type") == 0) rc = gguf_writer_add_u32(j->w, key, quantize_file_type(j->scheme));
        else rc = gguf_writer_copy_kv(j->w, j->in, i);
    }
    if (!rc && gguf_find_key(j->in, "general.file_type") < 0)
        rc = gguf_writer_add_u32(j->w, "general.file_type", quantize_file_type(j->scheme));
    for (int64_t i = 0; !rc && i < j->n; i++)
        rc = gguf_writer_add_tensor(j->w, j->t[i].src->name, j->t[i].out, j->t[i].src->n_dims, j->t[i].src->ne);
    if (!rc) rc = gguf_writer_write_header(j->w, job_sink, j);
    return rc;
}

pacer_err quantize_open(const char *in, ggml_type t, quantize_job **out, char *err, size_t err_len) {
    return quantize_open_scheme(in, (quantize_scheme){t, false}, out, err, err_len);
}

pacer_err quantize_open_scheme(const char *in, quantize_scheme s, quantize_job **out, char *err, size_t err_len) {
    *out = NULL;
    if (!quantize_type_supported(s.type) || (s.k_m && s.type != GGML_TYPE_Q4_K)) {
        snprintf(err, err_len, "quantize does not write %s (it writes %s)", ggml_type_name(s.type), quantize_type_list());
        return PACER_ERR_UNSUPPORTED;
    }
    quantize_job *j = calloc(1, sizeof *j);
    if (!j) return PACER_ERR_NOMEM;
    j->scheme = s;
    buf_init(&j->header, QUANTIZE_HEADER_MAX);
    pacer_err rc = gguf_open(in, &j->in, err, err_len);
    if (rc) goto fail;
    j->n = gguf_get_n_tensors(j->in);
    j->t = calloc((size_t)(j->n > 0 ? j->n : 1), sizeof *j->t);
    j->w = gguf_writer_new();
    if (!j->t || !j->w) {
        rc = PACER_ERR_NOMEM;
        snprintf(err, err_len, "out of memory");
        goto fail;
    }
    if ((rc = plan_tensors(j, err, err_len))) goto fail;
    if ((rc = plan_header(j))) {
        snprintf(err, err_len, "cannot lay out the output header: %s", pacer_strerror(rc));
        goto fail;
    }
    *out = j;
    return PACER_OK;
fail:
    quantize_close(j);
    return rc;
}

uint64_t quantize_output_bytes(const quantize_job *j) { return j->header.len + gguf_writer_data_size(j->w); }

void quantize_counts(const quantize_job *j, int *converted, int *fallback, int *copied) {
    *converted = j->counts[1];
    *fallback = j->counts[2];
    *copied = j->counts[0];
}

/* ---------------- writing ---------------- */

static pacer_err write_tensor(quantize_job *j, const quantize_tensor *q, float *row, void *qrow) {
    const gguf_tensor *s = q->src;
    if (q->out == s->type) return gguf_writer_write_data(j->w, s->data, (size_t)s->nbytes);
    int64_t n_in = s->ne[0], rows = s->n_elements / n_in;
    uint64_t in_rb, out_rb;
    if (!ggml_type_row_size(s->type, n_in, &in_rb) || !ggml_type_row_size(q->out, n_in, &out_rb)) return PACER_ERR_INTERNAL;
    pacer_err rc = PACER_OK;
    for (int64_t r = 0; !rc && r < rows; r++) {
        if (!ggml_dequantize_row(s->type, (const char *)s->data + (uint64_t)r * in_rb, row, n_in) ||
            !quantize_row_to(q->out, row, qrow, n_in))
            return PACER_ERR_INTERNAL;
        rc = gguf_writer_write_data(j->w, qrow, (size_t)out_rb);
    }
    return rc;
}

static pacer_err write_body(quantize_job *j) {
    int64_t widest = 1;
    for (int64_t i = 0; i < j->n; i++)
        if (j->t[i].src->ne[0] > widest) widest = j->t[i].src->ne[0];
    float *row = malloc((size_t)widest * sizeof *row);
    void *qrow = malloc((size_t)widest * sizeof(float));
    pacer_err rc = row && qrow ? PACER_OK : PACER_ERR_NOMEM;
    if (!rc && fwrite(j->header.data, 1, j->header.len, j->out) != j->header.len) rc = PACER_ERR_IO;
    for (int64_t i = 0; !rc && i < j->n; i++) rc = write_tensor(j, &j->t[i], row, qrow);
    if (!rc) rc = gguf_writer_finish(j->w);
    free(row);
    free(qrow);
    return rc;
}

pacer_err quantize_write(quantize_job *j, const char *out_path, char *err, size_t err_len) {
    char tmp[PATH_MAX];
    if (j->out || snprintf(tmp, sizeof tmp, "%s.partial.XXXXXX", out_path) >= (int)sizeof tmp) return PACER_ERR_ARG;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, err_len, "cannot create %s: %s", out_path, strerror(errno));
        return PACER_ERR_IO;
    }
    pacer_err rc = PACER_OK;
    if (fchmod(fd, 0644) != 0 || !(j->out = fdopen(fd, "wb"))) {
        close(fd);
        rc = PACER_ERR_IO;
    }
    if (!rc) rc = write_body(j);
    if (j->out) {
        if (!rc && (fflush(j->out) != 0 || fsync(fileno(j->out)) != 0)) rc = PACER_ERR_IO;
        if (fclose(j->out) != 0 && !rc) rc = PACER_ERR_IO;
    }
    if (!rc && rename(tmp, out_path) != 0) rc = PACER_ERR_IO;
    if (rc) {
        snprintf(err, err_len, "cannot write %s: %s", out_path, rc == PACER_ERR_IO ? strerror(errno) : pacer_strerror(rc));
        unlink(tmp);
    }
    return rc;
}

void quantize_close(quantize_job *j) {
    if (!j) return;
    gguf_writer_free(j->w);
    gguf_close(j->in);
    buf_free(&j->header);
    free(j->t);
    free(j);
}

pacer_err quantize_volume_free(const char *path, uint64_t *free_bytes) {
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return PACER_ERR_ARG;
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    struct statvfs v;
    if (statvfs(dir, &v) != 0) return PACER_ERR_IO;
    *free_bytes = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
    return PACER_OK;
}
