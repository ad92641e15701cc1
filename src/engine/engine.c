/* engine.c - the llama-family forward pass: token embedding, per layer RMSNorm, Q/K/V
 * projections (optional biases, qwen3 q/k norms), RoPE, grouped-query attention over an
 * F16 KV cache, SwiGLU feed-forward; final norm and output projection. Batches of tokens
 * share each weight-row read; every buffer is allocated in engine_open. */
#include "engine/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/gguf.h"
#include "engine/kernels.h"
#include "engine/kernels_f16.h"
#include "engine/threadpool.h"
#include "engine/tokenizer.h"

/* Rows per forward chunk: 32, or 128 where AMX multiplies the packed matrices (the weights
 * are then read a quarter as often; the integer kernels' results do not depend on it). */
#define ENGINE_BATCH 32
#define ENGINE_BATCH_AMX 128
#define ENGINE_CTX_CAP 4096

typedef struct mat {
    const void *data;
    ggml_type type;
    int n_in, n_out;
    size_t row_bytes;
    void *packed; /* owned: the rows in kern_pack's groups of 8, or NULL */
} mat;

typedef struct layer {
    const float *attn_norm, *ffn_norm, *q_norm, *k_norm;
    const float *bq, *bk, *bv;
    mat wq, wk, wv, wo, gate, up, down;
} layer;

struct engine {
    gguf_file *gf;
    tokenizer *tok;
    engine_info info;
    threadpool *tp;
    bool own_tp;  /* tp was started here (not borrowed through engine_params.pool) */
    char tok_err[256]; /* why tok is NULL */
    int n_embd, n_layer, n_head, n_head_kv, hd, n_ff, n_vocab, n_ctx, n_rot;
    int q_dim, kv_dim;
    float eps, rope_base, rope_scale;
    bool rope_neox;
    layer *layers;
    mat tok_embd, output;
    const float *out_norm;
    int n_seq;      /* KV cache slots: sequences evaluated independently */
    int *n_past;    /* per sequence: positions in its cache */
    /* buffers */
    float *x, *xn, *q, *k, *v, *att, *g, *u;
    int batch;      /* rows per chunk */
    void *act;      /* prepared activations: 3 slots of `batch` rows of act_stride */
    size_t act_stride;
    ggml_half *kc, *vc; /* [seq][layer][pos][kv_dim] */
    int row_seq[ENGINE_BATCH_AMX], row_pos[ENGINE_BATCH_AMX]; /* the chunk's rows: sequence, position */
    float *scratch;    /* per thread: n_scratch floats */
    int n_scratch;
    float *rope_cs;    /* cos/sin per position pair: [n_ctx][n_rot/2][2] */
};

/* ---------------- loading ---------------- */

static const float *f32_tensor(engine *e, const char *name, int64_t n, bool required, char *err,
                               size_t err_len, bool *ok) {
    const gguf_tensor *t = gguf_find_tensor(e->gf, name);
    if (!t) {
        if (required) {
            snprintf(err, err_len, "tensor %s is missing", name);
            *ok = false;
        }
        return NULL;
    }
    if (t->type != GGML_TYPE_F32 || t->n_elements != n) {
        snprintf(err, err_len, "tensor %s: expected %lld f32 values", name, (long long)n);
        *ok = false;
        return NULL;
    }
    return t->data;
}

static bool mat_load(engine *e, mat *m, const char *name, int n_in, int n_out, bool required,
                     char *err, size_t err_len, bool *ok) {
    const gguf_tensor *t = gguf_find_tensor(e->gf, name);
    memset(m, 0, sizeof *m);
    if (!t) {
        if (required) {
            snprintf(err, err_len, "tensor %s is missing", name);
            *ok = false;
        }
        return false;
    }
    if (t->ne[0] != n_in || t->ne[1] != n_out || t->n_dims > 2) {
        snprintf(err, err_len, "tensor %s: shape %lldx%lld, expected %dx%d", name, (long long)t->ne[0],
                 (long long)t->ne[1], n_in, n_out);
        *ok = false;
        return false;
    }
    if (!kern_weight_supported(t->type)) {
        snprintf(err, err_len, "tensor %s: weight type %s is not supported", name, ggml_type_name(t->type));
        *ok = false;
        return false;
    }
    uint64_t rb = 0;
    if (!ggml_type_row_size(t->type, n_in, &rb)) {
        snprintf(err, err_len, "tensor %s: bad row size", name);
        *ok = false;
        return false;
    }
    m->data = t->data;
    m->type = t->type;
    m->n_in = n_in;
    m->n_out = n_out;
    m->row_bytes = (size_t)rb;
    return true;
}

static uint32_t arch_u32(const gguf_file *f, const char *arch, const char *key, uint32_t def) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    return gguf_get_u32(f, k, def);
}

static float arch_f32(const gguf_file *f, const char *arch, const char *key, float def) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    return gguf_get_f32(f, k, def);
}

static const char *arch_str(const gguf_file *f, const char *arch, const char *key, const char *def) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    return gguf_get_str(f, k, def);
}

static bool arch_known(const char *a) {
    static const char *const known[] = {"llama", "mistral", "qwen2", "qwen3", "granite"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(a, known[i]) == 0)
            return true;
    return false;
}

static bool arch_neox(const char *a) { return strcmp(a, "qwen2") == 0 || strcmp(a, "qwen3") == 0; }

static void weight_account(engine *e, const mat *m, uint64_t *by_type) {
    if (!m->data)
        return;
    uint64_t b = (uint64_t)m->row_bytes * (uint64_t)m->n_out;
    e->info.weight_bytes += b;
    e->info.n_params += (int64_t)m->n_in * m->n_out;
    if (m->type < GGML_TYPE__COUNT)
        by_type[m->type] += b;
}

static pacer_err engine_load(engine *e, char *err, size_t err_len) {
    const gguf_file *f = e->gf;
    const char *arch = gguf_get_str(f, "general.architecture", "");
    if (!arch_known(arch)) {
        snprintf(err, err_len, "architecture '%s' is not supported", arch);
        return PACER_ERR_UNSUPPORTED;
    }
    e->n_embd = (int)arch_u32(f, arch, "embedding_length", 0);
    e->n_layer = (int)arch_u32(f, arch, "block_count", 0);
    e->n_head = (int)arch_u32(f, arch, "attention.head_count", 0);
    e->n_head_kv = (int)arch_u32(f, arch, "attention.head_count_kv", (uint32_t)e->n_head);
    e->n_ff = (int)arch_u32(f, arch, "feed_forward_length", 0);
    int ctx_train = (int)arch_u32(f, arch, "context_length", 2048);
    if (e->n_embd <= 0 || e->n_layer <= 0 || e->n_head <= 0 || e->n_head_kv <= 0 || e->n_ff <= 0 ||
        e->n_head % e->n_head_kv != 0 || e->n_layer > 1024) {
        snprintf(err, err_len, "model shape metadata is missing or inconsistent");
        return PACER_ERR_FORMAT;
    }
    e->hd = (int)arch_u32(f, arch, "attention.key_length", (uint32_t)(e->n_embd / e->n_head));
    e->n_rot = (int)arch_u32(f, arch, "rope.dimension_count", (uint32_t)e->hd);
    if (e->hd <= 0 || e->hd > 1024 || e->n_rot > e->hd || e->n_rot % 2 || e->hd % 2) {
        snprintf(err, err_len, "head or rope dimension is invalid");
        return PACER_ERR_FORMAT;
    }
    e->q_dim = e->n_head * e->hd;
    e->kv_dim = e->n_head_kv * e->hd;
    e->eps = arch_f32(f, arch, "attention.layer_norm_rms_epsilon", 1e-5f);
    e->rope_base = arch_f32(f, arch, "rope.freq_base", 10000.0f);
    e->rope_scale = 1.0f;
    const char *st = arch_str(f, arch, "rope.scaling.type", "none");
    if (strcmp(st, "linear") == 0) {
        float fac = arch_f32(f, arch, "rope.scaling.factor", 1.0f);
        if (fac > 0)
            e->rope_scale = 1.0f / fac;
    }
    e->rope_neox = arch_neox(arch);

    const gguf_tensor *te = gguf_find_tensor(f, "token_embd.weight");
    if (!te || te->ne[0] != e->n_embd || te->ne[1] <= 0 || te->ne[1] > (1 << 24)) {
        snprintf(err, err_len, "tensor token_embd.weight is missing or misshapen");
        return PACER_ERR_FORMAT;
    }
    e->n_vocab = (int)te->ne[1];
    bool ok = true;
    mat_load(e, &e->tok_embd, "token_embd.weight", e->n_embd, e->n_vocab, true, err, err_len, &ok);
    if (!mat_load(e, &e->output, "output.weight", e->n_embd, e->n_vocab, false, err, err_len, &ok) && ok)
        e->output = e->tok_embd;
    e->out_norm = f32_tensor(e, "output_norm.weight", e->n_embd, true, err, err_len, &ok);
    e->layers = calloc((size_t)e->n_layer, sizeof *e->layers);
    if (!e->layers)
        return PACER_ERR_NOMEM;
    uint64_t by_type[GGML_TYPE__COUNT] = {0};
    char nm[96];
    for (int l = 0; l < e->n_layer && ok; l++) {
        layer *L = &e->layers[l];
#define NM(s) (snprintf(nm, sizeof nm, "blk.%d." s, l), nm)
        L->attn_norm = f32_tensor(e, NM("attn_norm.weight"), e->n_embd, true, err, err_len, &ok);
        L->ffn_norm = f32_tensor(e, NM("ffn_norm.weight"), e->n_embd, true, err, err_len, &ok);
        L->q_norm = f32_tensor(e, NM("attn_q_norm.weight"), e->hd, false, err, err_len, &ok);
        L->k_norm = f32_tensor(e, NM("attn_k_norm.weight"), e->hd, false, err, err_len, &ok);
        L->bq = f32_tensor(e, NM("attn_q.bias"), e->q_dim, false, err, err_len, &ok);
        L->bk = f32_tensor(e, NM("attn_k.bias"), e->kv_dim, false, err, err_len, &ok);
        L->bv = f32_tensor(e, NM("attn_v.bias"), e->kv_dim, false, err, err_len, &ok);
        mat_load(e, &L->wq, NM("attn_q.weight"), e->n_embd, e->q_dim, true, err, err_len, &ok);
        mat_load(e, &L->wk, NM("attn_k.weight"), e->n_embd, e->kv_dim, true, err, err_len, &ok);
        mat_load(e, &L->wv, NM("attn_v.weight"), e->n_embd, e->kv_dim, true, err, err_len, &ok);
        mat_load(e, &L->wo, NM("attn_output.weight"), e->q_dim, e->n_embd, true, err, err_len, &ok);
        mat_load(e, &L->gate, NM("ffn_gate.weight"), e->n_embd, e->n_ff, true, err, err_len, &ok);
        mat_load(e, &L->up, NM("ffn_up.weight"), e->n_embd, e->n_ff, true, err, err_len, &ok);
        mat_load(e, &L->down, NM("ffn_down.weight"), e->n_ff, e->n_embd, true, err, err_len, &ok);
#undef NM
        if (ok) {
            const mat *ms[] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->gate, &L->up, &L->down};
            for (size_t i = 0; i < 7; i++)
                weight_account(e, ms[i], by_type);
        }
    }
    if (!ok)
        return PACER_ERR_FORMAT;
    weight_account(e, &e->output, by_type);
    if (e->output.data != e->tok_embd.data)
        e->info.n_params += (int64_t)e->n_embd * e->n_vocab;
    int best = 0;
    for (int t = 0; t < GGML_TYPE__COUNT; t++)
        if (by_type[t] > by_type[best])
            best = t;
    e->info.weight_type = ggml_type_name((uint32_t)best);
    e->info.arch = arch;
    e->info.name = gguf_get_str(f, "general.name", "");
    e->info.n_vocab = e->n_vocab;
    e->info.n_embd = e->n_embd;
    e->info.n_layer = e->n_layer;
    e->info.n_head = e->n_head;
    e->info.n_head_kv = e->n_head_kv;
    e->info.n_ff = e->n_ff;
    e->n_ctx = ctx_train > ENGINE_CTX_CAP ? ENGINE_CTX_CAP : ctx_train;
    return PACER_OK;
}

static int imax(int a, int b) { return a > b ? a : b; }

static pacer_err engine_alloc(engine *e, const engine_params *p, char *err, size_t err_len) {
    if (p && p->n_ctx > 0)
        e->n_ctx = p->n_ctx;
    if (e->n_ctx <= 0)
        e->n_ctx = 2048;
    e->info.n_ctx = e->n_ctx;
    int nt = p && p->n_threads > 0 ? p->n_threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nt < 1)
        nt = 1;
    e->own_tp = !(p && p->pool);
    e->tp = e->own_tp ? threadpool_create(nt) : p->pool;
    if (!e->tp) {
        snprintf(err, err_len, "cannot start %d threads", nt);
        return PACER_ERR_NOMEM;
    }
    bool amx = kern_get_level() >= KERN_AMX && kern_pack_supported(e->layers[0].wq.type);
    e->batch = amx ? ENGINE_BATCH_AMX : ENGINE_BATCH;
    size_t B = (size_t)e->batch;
    int wide = imax(imax(e->n_embd, e->n_ff), e->q_dim);
    e->act_stride = (kern_act_size(GGML_TYPE_F32, wide) + 63) & ~(size_t)63;
    e->n_scratch = imax(wide, (e->n_ctx + e->hd) * (e->n_head / e->n_head_kv)) + 64; /* attention: a KV head's queries, weights */
    e->n_seq = p && p->n_seq > 0 ? p->n_seq : 1;
    size_t cache = (size_t)e->n_seq * (size_t)e->n_layer * (size_t)e->n_ctx * (size_t)e->kv_dim;
    e->n_past = calloc((size_t)e->n_seq, sizeof(int));
    e->x = malloc(B * e->n_embd * sizeof(float));
    e->xn = malloc(B * e->n_embd * sizeof(float));
    e->q = malloc(B * e->q_dim * sizeof(float));
    e->k = malloc(B * e->kv_dim * sizeof(float));
    e->v = malloc(B * e->kv_dim * sizeof(float));
    e->att = malloc(B * e->q_dim * sizeof(float));
    e->g = malloc(B * e->n_ff * sizeof(float));
    e->u = malloc(B * e->n_ff * sizeof(float));
    e->act = aligned_alloc(64, 3 * B * e->act_stride);
    e->kc = malloc(cache * sizeof(ggml_half));
    e->vc = malloc(cache * sizeof(ggml_half));
    e->scratch = malloc((size_t)nt * e->n_scratch * sizeof(float));
    e->rope_cs = malloc((size_t)e->n_ctx * e->n_rot * sizeof(float));
    if (!e->x || !e->xn || !e->q || !e->k || !e->v || !e->att || !e->g || !e->u || !e->act || !e->kc ||
        !e->vc || !e->scratch || !e->rope_cs || !e->n_past) {
        snprintf(err, err_len, "out of memory for buffers and KV cache");
        return PACER_ERR_NOMEM;
    }
    for (int pos = 0; pos < e->n_ctx; pos++)
        for (int i = 0; i < e->n_rot / 2; i++) {
            double th = (double)pos * e->rope_scale * pow((double)e->rope_base, -2.0 * i / e->n_rot);
            e->rope_cs[(size_t)pos * e->n_rot + 2 * i] = (float)cos(th);
            e->rope_cs[(size_t)pos * e->n_rot + 2 * i + 1] = (float)sin(th);
        }
    return PACER_OK;
}

typedef struct pack_job {
    mat *m;
} pack_job;

static void job_pack(void *ctx, int ith, int nth) {
    mat *m = ((pack_job *)ctx)->m;
    int g0, g1;
    threadpool_split(KERN_GROUPS(m->n_out), ith, nth, &g0, &g1);
    kern_pack(m->type, m->data, m->row_bytes, m->n_in, m->n_out, g0, g1, m->packed);
}

/* Gives the mapped pages of a matrix that now lives packed back to the page cache. */
static void release_mapped(const mat *m) {
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)m->data, b = a + m->row_bytes * (size_t)m->n_out;
    a = (a + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    b &= ~(uintptr_t)(page - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Repacks every Q8_0/Q4_0 matrix (kern_pack) on all threads. The token embedding stays
 * mapped: it is read a row at a time; a tied output matrix gets its own packed copy. */
static pacer_err engine_pack(engine *e, char *err, size_t err_len) {
    for (int l = -1; l < e->n_layer; l++) {
        layer *L = l >= 0 ? &e->layers[l] : NULL;
        mat *ms[7] = {&e->output};
        int n = 1;
        if (L) {
            mat *lm[7] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->gate, &L->up, &L->down};
            memcpy(ms, lm, sizeof lm);
            n = 7;
        }
        for (int i = 0; i < n; i++) {
            mat *m = ms[i];
            if (!m->data || !kern_pack_supported(m->type))
                continue;
            size_t sz = (kern_pack_size(m->type, m->n_in, m->n_out) + 63) & ~(size_t)63;
            m->packed = aligned_alloc(64, sz);
            if (!m->packed) {
                snprintf(err, err_len, "out of memory for packed weights");
                return PACER_ERR_NOMEM;
            }
            pack_job pj = {m};
            threadpool_run(e->tp, job_pack, &pj);
            if (m->data != e->tok_embd.data)
                release_mapped(m);
        }
    }
    return PACER_OK;
}

/* The tokenizer comes from the GGUF's tokenizer.* keys. A model whose vocabulary the
 * tokenizer cannot build still opens (engine_get_tokenizer then returns NULL): evaluation
 * needs only ids. */
static pacer_err engine_open_tokenizer(engine *e, char *err, size_t err_len) {
    (void)err;
    (void)err_len;
    if (tokenizer_from_gguf(e->gf, &e->tok, e->tok_err, sizeof e->tok_err) != PACER_OK)
        e->tok = NULL; /* the reason stays in e->tok_err (engine_tokenizer_error) */
    else
        e->tok_err[0] = 0;
    return PACER_OK;
}

pacer_err engine_open(const char *path, const engine_params *params, engine **out, char *err, size_t err_len) {
    char dummy[8];
    if (!err) {
        err = dummy;
        err_len = sizeof dummy;
    }
    *out = NULL;
    engine *e = calloc(1, sizeof *e);
    if (!e)
        return PACER_ERR_NOMEM;
    pacer_err rc = gguf_open(path, &e->gf, err, err_len);
    if (rc == PACER_OK)
        rc = engine_load(e, err, err_len);
    if (rc == PACER_OK)
        rc = engine_alloc(e, params, err, err_len);
    if (rc == PACER_OK)
        rc = engine_pack(e, err, err_len);
    if (rc == PACER_OK)
        rc = engine_open_tokenizer(e, err, err_len);
    if (rc != PACER_OK) {
        engine_close(e);
        return rc;
    }
    *out = e;
    return PACER_OK;
}

void engine_close(engine *e) {
    if (!e)
        return;
    if (e->own_tp)
        threadpool_destroy(e->tp);
    tokenizer_free(e->tok);
    for (int l = 0; e->layers && l < e->n_layer; l++) {
        layer *L = &e->layers[l];
        mat *ms[7] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->gate, &L->up, &L->down};
        for (int i = 0; i < 7; i++)
            free(ms[i]->packed);
    }
    free(e->output.packed);
    free(e->layers);
    free(e->x);
    free(e->xn);
    free(e->q);
    free(e->k);
    free(e->v);
    free(e->att);
    free(e->g);
    free(e->u);
    free(e->act);
    free(e->kc);
    free(e->vc);
    free(e->scratch);
    free(e->rope_cs);
    free(e->n_past);
    gguf_close(e->gf);
    free(e);
}

const engine_info *engine_get_info(const engine *e) { return &e->info; }
const tokenizer *engine_get_tokenizer(const engine *e) { return e->tok; }
const gguf_file *engine_get_gguf(const engine *e) { return e->gf; }
int engine_n_past(const engine *e) { return e->n_past[0]; }
int engine_n_seq(const engine *e) { return e->n_seq; }
threadpool *engine_get_pool(const engine *e) { return e->tp; }
const char *engine_tokenizer_error(const engine *e) { return e->tok ? "" : e->tok_err; }

/* ---------------- forward pass ---------------- */

typedef struct job {
    engine *e;
    int nb;
    /* matmuls: up to 3 matrices over the same input rows */
    int n_mm;
    const mat *m[3];
    const void *a[3];
    float *out[3];
    int ldo[3];
    /* attention over the rows' own sequences (e->row_seq, e->row_pos) */
    int layer;
} job;

/* The units a matrix is split into over threads: groups of 8 rows when packed. */
static int mat_units(const mat *m) { return m->packed ? KERN_GROUPS(m->n_out) : m->n_out; }

static void job_matmul(void *ctx, int ith, int nth) {
    job *j = ctx;
    engine *e = j->e;
    int total = 0;
    for (int i = 0; i < j->n_mm; i++)
        total += mat_units(j->m[i]);
    int lo, hi;
    threadpool_split(total, ith, nth, &lo, &hi);
    float *scratch = e->scratch + (size_t)ith * e->n_scratch;
    int base = 0;
    for (int i = 0; i < j->n_mm; i++) {
        const mat *m = j->m[i];
        int units = mat_units(m), u0 = lo - base, u1 = hi - base;
        base += units;
        if (u0 < 0)
            u0 = 0;
        if (u1 > units)
            u1 = units;
        if (u0 >= u1)
            continue;
        if (m->packed)
            kern_gemm_packed(m->type, m->packed, m->n_in, m->n_out, u0, u1, j->a[i], e->act_stride, j->nb,
                             j->out[i], j->ldo[i]);
        else
            kern_matmul(m->type, m->data, m->row_bytes, m->n_in, u0, u1, j->a[i], e->act_stride, j->nb,
                        j->out[i], j->ldo[i], scratch);
    }
}

static void rmsnorm(float *out, const float *x, const float *w, int n, float eps) {
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (double)x[i] * x[i];
    float scale = 1.0f / sqrtf((float)(ss / n) + eps);
    for (int i = 0; i < n; i++)
        out[i] = x[i] * scale * w[i];
}

/* The per-row work before a set of matrices, one job over the chunk's rows: optionally
 * the token embedding (first layer), the residual x += xn, SwiGLU (g = silu(g) * u), an
 * RMSNorm of x; then the row is prepared for each distinct activation type. Rows before
 * `first` get only the embedding/residual (the output norm skips them); row b >= first
 * goes to activation row b - first. Each element's arithmetic is the serial one's. */
typedef struct row_job {
    engine *e;
    int nb, first;
    const int32_t *tokens; /* embed these first, or NULL */
    bool resid, swiglu;
    bool parts;            /* SwiGLU rows split over the threads by elements (few rows) */
    const float *norm;     /* rmsnorm(x) is the input, or NULL: `in` rows are */
    const float *in;
    int n_in, n_slot;
    ggml_type type[3];
    unsigned char *slot[3];
} row_job;

/* g = silu(g) * u for elements [i0, i1) of the gate/up outputs */
static void swiglu(engine *e, size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; i++) {
        float g = e->g[i];
        e->g[i] = g / (1.0f + expf(-g)) * e->u[i];
    }
}

/* Fewer SwiGLU rows than threads (decode): each thread takes runs of 32 elements of the
 * rows, SwiGLU and the activation blocks they make (elementwise work: the same values). */
static void job_row_parts(const row_job *rj, int ith, int nth) {
    engine *e = rj->e;
    int per = rj->n_in / 32, lo, hi;
    threadpool_split(rj->nb * per, ith, nth, &lo, &hi);
    for (int u = lo; u < hi;) {
        int b = u / per, k0 = u % per, k1 = hi - b * per < per ? hi - b * per : per;
        swiglu(e, (size_t)b * e->n_ff + 32 * (size_t)k0, (size_t)b * e->n_ff + 32 * (size_t)k1);
        for (int s = 0; s < rj->n_slot; s++)
            kern_act_prepare(rj->type[s], rj->in + (size_t)b * rj->n_in + 32 * k0,
                             rj->slot[s] + (size_t)b * e->act_stride + kern_act_size(rj->type[s], 32 * k0), 32 * (k1 - k0));
        u = b * per + k1;
    }
}

static void job_rows(void *ctx, int ith, int nth) {
    row_job *rj = ctx;
    engine *e = rj->e;
    int D = e->n_embd, lo, hi;
    if (rj->parts) {
        job_row_parts(rj, ith, nth);
        return;
    }
    threadpool_split(rj->nb, ith, nth, &lo, &hi);
    float *normed = e->scratch + (size_t)ith * e->n_scratch;
    for (int b = lo; b < hi; b++) {
        float *x = e->x + (size_t)b * D;
        if (rj->tokens)
            ggml_dequantize_row(e->tok_embd.type,
                                (const unsigned char *)e->tok_embd.data + (size_t)rj->tokens[b] * e->tok_embd.row_bytes, x, D);
        if (rj->resid)
            for (int i = 0; i < D; i++)
                x[i] += e->xn[(size_t)b * D + i];
        if (rj->swiglu)
            swiglu(e, (size_t)b * e->n_ff, (size_t)(b + 1) * e->n_ff);
        if (b < rj->first)
            continue;
        const float *src = rj->in ? rj->in + (size_t)b * rj->n_in : normed;
        if (rj->norm)
            rmsnorm(normed, x, rj->norm, D, e->eps);
        for (int s = 0; s < rj->n_slot; s++)
            kern_act_prepare(rj->type[s], src, rj->slot[s] + (size_t)(b - rj->first) * e->act_stride, rj->n_in);
    }
}

/* Runs fn over the chunk's rows on all threads (one row alone on the caller). */
static void run_rows(engine *e, int nb, threadpool_fn fn, void *ctx) {
    if (nb >= 2)
        threadpool_run(e->tp, fn, ctx);
    else
        fn(ctx, 0, 1);
}

/* Runs rj's row work, then up to three matrices on its prepared rows (nb - first of them). */
static void run_matmuls(engine *e, row_job *rj, int n_mm, const mat *const *ms, float *const *outs) {
    job j = {.e = e, .nb = rj->nb - rj->first, .n_mm = n_mm};
    unsigned char *act = e->act;
    rj->e = e;
    rj->n_slot = 0;
    for (int i = 0; i < n_mm; i++) {
        const mat *m = ms[i];
        j.m[i] = m;
        j.out[i] = outs[i];
        j.ldo[i] = m->n_out;
        ggml_type at = kern_act_type(m->type);
        int same = -1;
        for (int k = 0; k < i; k++)
            if (kern_act_type(ms[k]->type) == at)
                same = k;
        if (same >= 0) {
            j.a[i] = j.a[same];
            continue;
        }
        rj->type[rj->n_slot] = m->type;
        rj->slot[rj->n_slot] = act + (size_t)i * e->batch * e->act_stride;
        j.a[i] = rj->slot[rj->n_slot++];
    }
    int nth = threadpool_size(e->tp); /* with 2 or 3 threads the SwiGLU split saves less than a job's sync */
    rj->parts = rj->swiglu && nth >= 4 && rj->nb < nth && rj->n_in % 32 == 0 && !rj->tokens && !rj->resid && !rj->norm &&
                rj->first == 0;
    if (rj->parts)
        threadpool_run(e->tp, job_rows, rj);
    else
        run_rows(e, rj->nb, job_rows, rj);
    threadpool_run(e->tp, job_matmul, &j);
}

static void rope(const engine *e, float *v, int pos) {
    const float *cs = e->rope_cs + (size_t)pos * e->n_rot;
    int half = e->n_rot / 2;
    for (int i = 0; i < half; i++) {
        float c = cs[2 * i], s = cs[2 * i + 1];
        int i0 = e->rope_neox ? i : 2 * i;
        int i1 = e->rope_neox ? i + half : 2 * i + 1;
        float x0 = v[i0], x1 = v[i1];
        v[i0] = x0 * c - x1 * s;
        v[i1] = x0 * s + x1 * c;
    }
}

/* Where position `pos` of sequence `seq` in layer `l` starts in the K and V caches. */
static size_t kv_offset(const engine *e, int seq, int l, int pos) {
    return (((size_t)seq * e->n_layer + (size_t)l) * e->n_ctx + (size_t)pos) * e->kv_dim;
}

static void add_bias(float *y, const float *bias, int n) {
    if (bias)
        for (int i = 0; i < n; i++)
            y[i] += bias[i];
}

/* After the Q/K/V projections, per row: biases, q/k norms, RoPE, the K/V cache writes. */
static void job_qkv_rows(void *ctx, int ith, int nth) {
    job *j = ctx;
    engine *e = j->e;
    const layer *L = &e->layers[j->layer];
    int hd = e->hd, lo, hi;
    threadpool_split(j->nb, ith, nth, &lo, &hi);
    for (int b = lo; b < hi; b++) {
        float *q = e->q + (size_t)b * e->q_dim, *k = e->k + (size_t)b * e->kv_dim, *v = e->v + (size_t)b * e->kv_dim;
        add_bias(q, L->bq, e->q_dim);
        add_bias(k, L->bk, e->kv_dim);
        add_bias(v, L->bv, e->kv_dim);
        for (int h = 0; h < e->n_head; h++) {
            if (L->q_norm)
                rmsnorm(q + (size_t)h * hd, q + (size_t)h * hd, L->q_norm, hd, e->eps);
            rope(e, q + (size_t)h * hd, e->row_pos[b]);
        }
        for (int h = 0; h < e->n_head_kv; h++) {
            if (L->k_norm)
                rmsnorm(k + (size_t)h * hd, k + (size_t)h * hd, L->k_norm, hd, e->eps);
            rope(e, k + (size_t)h * hd, e->row_pos[b]);
        }
        size_t off = kv_offset(e, e->row_seq[b], j->layer, e->row_pos[b]);
        kern_f32_to_f16(k, e->kc + off, e->kv_dim);
        kern_f32_to_f16(v, e->vc + off, e->kv_dim);
    }
}

/* Attention over the rows' own sequences. A unit of work is one row's heads that share a KV
 * head (all of them when there are enough units for the threads, else one): each key's
 * values are then read once for those heads. Every head's arithmetic is the same either
 * way (kernels_f16.h), so rows do not depend on the batch or the threads. */
static void job_attention(void *ctx, int ith, int nth) {
    job *j = ctx;
    engine *e = j->e;
    int hd = e->hd, group = e->n_head / e->n_head_kv;
    int per = j->nb * e->n_head_kv >= nth ? group : 1, units = j->nb * e->n_head / per;
    float *sc = e->scratch + (size_t)ith * e->n_scratch; /* per rows of weights, p + 1 each */
    float *qh = sc + (size_t)per * e->n_ctx;            /* the queries rounded through F16, as ggml does */
    float scale = 1.0f / sqrtf((float)hd);
    for (int u = ith; u < units; u += nth) { /* strided: every thread gets early and late rows alike */
        int b = u * per / e->n_head, h0 = u * per % e->n_head, kvh = h0 / group, n = e->row_pos[b] + 1;
        size_t base = kv_offset(e, e->row_seq[b], j->layer, 0) + (size_t)kvh * hd;
        for (int h = 0; h < per; h++)
            kern_act_prepare(GGML_TYPE_F16, e->q + (size_t)b * e->q_dim + (size_t)(h0 + h) * hd, qh + (size_t)h * hd, hd);
        kern_attn_scores(per, e->kc + base, e->kv_dim, qh, hd, hd, n, scale, sc, n);
        for (int h = 0; h < per; h++)
            kern_softmax_f16(sc + (size_t)h * n, n);
        kern_attn_values(per, sc, n, e->vc + base, e->kv_dim, hd, n, e->att + (size_t)b * e->q_dim + (size_t)h0 * hd, hd);
    }
}

/* One chunk of at most e->batch rows: token b at e->row_pos[b] of sequence e->row_seq[b]
 * (a sequence's rows in a chunk are consecutive positions). Each row is computed exactly as
 * it would be alone: the kernels do not depend on the batch (kernels.h), and the per-row
 * steps run on all threads, a row on one thread, in the serial order. */
static void forward_chunk(engine *e, const int32_t *tokens, int nb, float *logits, bool all_logits) {
    int D = e->n_embd;
    for (int l = 0; l < e->n_layer; l++) {
        const layer *L = &e->layers[l];
        row_job pre = {.nb = nb, .tokens = l == 0 ? tokens : NULL, .resid = l > 0, .norm = L->attn_norm, .n_in = D};
        const mat *qkv[3] = {&L->wq, &L->wk, &L->wv};
        float *qkv_out[3] = {e->q, e->k, e->v};
        run_matmuls(e, &pre, 3, qkv, qkv_out);
        job aj = {.e = e, .nb = nb, .layer = l};
        run_rows(e, nb, job_qkv_rows, &aj);
        threadpool_run(e->tp, job_attention, &aj);
        row_job ao = {.nb = nb, .in = e->att, .n_in = e->q_dim};
        const mat *wo[1] = {&L->wo};
        float *wo_out[1] = {e->xn};
        run_matmuls(e, &ao, 1, wo, wo_out);
        row_job fn = {.nb = nb, .resid = true, .norm = L->ffn_norm, .n_in = D};
        const mat *gu[2] = {&L->gate, &L->up};
        float *gu_out[2] = {e->g, e->u};
        run_matmuls(e, &fn, 2, gu, gu_out);
        row_job sw = {.nb = nb, .swiglu = true, .in = e->g, .n_in = e->n_ff};
        const mat *dn[1] = {&L->down};
        float *dn_out[1] = {e->xn};
        run_matmuls(e, &sw, 1, dn, dn_out);
    }
    if (!logits)
        return;
    row_job out = {.nb = nb, .first = all_logits ? 0 : nb - 1, .resid = true, .norm = e->out_norm, .n_in = D};
    const mat *om[1] = {&e->output};
    float *oo[1] = {logits};
    run_matmuls(e, &out, 1, om, oo);
}

pacer_err engine_eval_seq(engine *e, int seq, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    if (!e || seq < 0 || seq >= e->n_seq || n < 0 || (n > 0 && !tokens) || pos < 0 || pos > e->n_past[seq] ||
        pos + n > e->n_ctx)
        return PACER_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= e->n_vocab)
            return PACER_ERR_ARG;
    e->n_past[seq] = pos;
    for (int i = 0; i < n; i += e->batch) {
        int nb = n - i < e->batch ? n - i : e->batch;
        bool last = i + nb == n;
        float *lg = NULL;
        if (logits && all_logits)
            lg = logits + (size_t)i * e->n_vocab;
        else if (logits && last)
            lg = logits;
        for (int b = 0; b < nb; b++) {
            e->row_seq[b] = seq;
            e->row_pos[b] = pos + i + b;
        }
        forward_chunk(e, tokens + i, nb, lg, all_logits);
        e->n_past[seq] = pos + i + nb;
    }
    return PACER_OK;
}

pacer_err engine_eval(engine *e, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    return engine_eval_seq(e, 0, tokens, n, pos, logits, all_logits);
}

pacer_err engine_eval_rows(engine *e, const int32_t *tokens, const int *seq, const int *pos, int n, float *logits) {
    if (!e || n < 0 || (n > 0 && (!tokens || !seq || !pos)))
        return PACER_ERR_ARG;
    /* checked before anything is evaluated: a sequence's first row at most at its cache's
     * end, its next rows each one position further */
    for (int i = 0; i < n; i++) {
        if (seq[i] < 0 || seq[i] >= e->n_seq || tokens[i] < 0 || tokens[i] >= e->n_vocab || pos[i] < 0 ||
            pos[i] >= e->n_ctx)
            return PACER_ERR_ARG;
        int prev = -1;
        for (int k = i - 1; k >= 0 && prev < 0; k--)
            if (seq[k] == seq[i])
                prev = k;
        if (prev >= 0 ? pos[i] != pos[prev] + 1 : pos[i] > e->n_past[seq[i]])
            return PACER_ERR_ARG;
    }
    for (int i = 0; i < n; i += e->batch) {
        int nb = n - i < e->batch ? n - i : e->batch;
        for (int b = 0; b < nb; b++) {
            e->row_seq[b] = seq[i + b];
            e->row_pos[b] = pos[i + b];
        }
        forward_chunk(e, tokens + i, nb, logits ? logits + (size_t)i * e->n_vocab : NULL, true);
        for (int b = 0; b < nb; b++) /* what followed a row is dropped, as engine_eval does */
            e->n_past[seq[i + b]] = pos[i + b] + 1;
    }
    return PACER_OK;
}
