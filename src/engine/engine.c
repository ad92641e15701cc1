/* engine.c - opening a llama-family GGUF for the engine: shape metadata, the weights (in one
 * block on huge pages: F16, Q8_0, Q4_0 and K-quant matrices repacked, the others copied, on all
 * threads), the tokenizer; every buffer and the KV cache are allocated here, in engine_open.
 * The forward pass is forward.c. */
#include "engine/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/engine_impl.h"
#include "engine/kernels.h"
#include "engine/kernels_f16.h"

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
    if (e->n_ctx > KERN_ATT_RANGE * KERN_ATT_RANGES_MAX) {
        snprintf(err, err_len, "context of %d positions: at most %d", e->n_ctx, KERN_ATT_RANGE * KERN_ATT_RANGES_MAX);
        return PACER_ERR_ARG;
    }
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
    ggml_type wt = e->layers[0].wq.type;
    e->amx = kern_get_level() >= KERN_AMX && kern_pack_supported(wt) && wt != GGML_TYPE_F16;
    e->group_rows = 8;
    const mat *qkv[3] = {&e->layers[0].wq, &e->layers[0].wk, &e->layers[0].wv};
    for (int i = 0; i < 3; i++)
        if (kern_pack_supported(qkv[i]->type) && kern_pack_rows(qkv[i]->type) > e->group_rows)
            e->group_rows = kern_pack_rows(qkv[i]->type);
    bool narrow = kern_get_level() < KERN_AVX512 && wt != GGML_TYPE_F16;
    e->batch = narrow ? ENGINE_BATCH_AVX2_QUANT : ENGINE_BATCH;
    size_t B = (size_t)e->batch;
    int wide = imax(imax(e->n_embd, e->n_ff), e->q_dim);
    /* rows 64 bytes past a multiple of 64 apart: a power of two apart, a tile's rows would
     * share cache sets (F16 pp512 at 2 AVX2 threads 79 -> 81 tok/s) */
    e->act_stride = ((kern_act_size(GGML_TYPE_F32, wide) + 63) & ~(size_t)63) + 64;
    /* attention: a unit's weights, rounded queries, value sums, later ranges' value sums and
     * key counts */
    e->n_scratch = imax(wide, ATT_SPAN * (e->n_head / e->n_head_kv) * (e->n_ctx + 3 * e->hd + 1)) + 64;
    e->n_seq = p && p->n_seq > 0 ? p->n_seq : 1;
    e->kv_pos = kern_key_positions(e->n_ctx);
    size_t cache = (size_t)e->n_seq * (size_t)e->n_layer * (size_t)e->kv_pos * (size_t)e->kv_dim;
    e->n_past = calloc((size_t)e->n_seq, sizeof(int));
    e->head_left = calloc((size_t)(e->n_head + 2 * e->n_head_kv), sizeof *e->head_left);
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
    int rows = threadpool_size(e->tp);
    size_t ranges = (size_t)rows * e->n_head * kern_att_ranges(e->n_ctx);
    e->split_m = malloc(ranges * sizeof(float));
    e->split_s = malloc(ranges * sizeof(double));
    e->split_p = malloc(ranges / (e->n_head / e->n_head_kv) * sizeof(float *));
    e->split_cnt = calloc((size_t)rows * e->n_head_kv * 2, sizeof(atomic_int));
    e->split_first = malloc((size_t)(rows + 1) * sizeof(int));
    if (!e->split_m || !e->split_s || !e->split_p || !e->split_cnt || !e->split_first) {
        snprintf(err, err_len, "out of memory for buffers and KV cache");
        return PACER_ERR_NOMEM;
    }
    if (!e->x || !e->xn || !e->q || !e->k || !e->v || !e->att || !e->g || !e->u || !e->act || !e->kc ||
        !e->vc || !e->scratch || !e->rope_cs || !e->n_past || !e->head_left) {
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

/* Where engine_place puts a matrix's weights: packed (kern_pack) or copied as they are. */
typedef struct place_job {
    mat *m;
    const void *src; /* the mapped rows */
} place_job;

static void job_place(void *ctx, int ith, int nth) {
    place_job *pj = ctx;
    mat *m = pj->m;
    int lo, hi;
    if (m->packed) {
        threadpool_split(kern_pack_groups(m->type, m->n_out), ith, nth, &lo, &hi);
        kern_pack(m->type, pj->src, m->row_bytes, m->n_in, m->n_out, lo, hi, m->packed);
        return;
    }
    threadpool_split(m->n_out, ith, nth, &lo, &hi);
    memcpy((unsigned char *)m->data + (size_t)lo * m->row_bytes,
           (const unsigned char *)pj->src + (size_t)lo * m->row_bytes, (size_t)(hi - lo) * m->row_bytes);
}

/* Gives the mapped pages of a matrix's rows at p, now copied or packed, back to the page
 * cache. */
static void release_mapped(const mat *m, const void *p) {
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p, b = a + m->row_bytes * (size_t)m->n_out;
    a = (a + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    b &= ~(uintptr_t)(page - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

/* The matrices engine_place may hold: every layer's seven and the output. */
static int weight_mats(engine *e, mat **ms) {
    int n = 0;
    ms[n++] = &e->output;
    for (int l = 0; l < e->n_layer; l++) {
        layer *L = &e->layers[l];
        mat *lm[7] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->gate, &L->up, &L->down};
        for (int i = 0; i < 7; i++)
            ms[n++] = lm[i];
    }
    return n;
}

/* The bytes engine_place gives m, or 0 where m stays mapped: the token embedding is read a
 * row at a time, and a tied output matrix that is not repacked reads the embedding's rows (a
 * repacked one gets its own copy). */
static size_t placed_bytes(const engine *e, const mat *m) {
    if (!m->data)
        return 0;
    if (kern_pack_supported(m->type))
        return (kern_pack_size(m->type, m->n_in, m->n_out) + 63) & ~(size_t)63;
    if (m->data == e->tok_embd.data)
        return 0;
    return (m->row_bytes * (size_t)m->n_out + 63) & ~(size_t)63;
}

/* Huge pages: decode reads every weight once a token, and a 1B model's weights on 4 KB pages
 * take hundreds of thousands of TLB misses a token. */
#define WEIGHTS_ALIGN ((size_t)2 << 20)

/* Moves every matrix into one block of memory on all threads: F16, Q8_0, Q4_0 and K-quant
 * matrices repacked (kern_pack), the others copied. The block asks the kernel for huge
 * pages. Decode, 1B shape, first-generation EPYC, 1 / 2 threads, engines alternating in one
 * process: huge pages against 4 KB ones, Q4_0 1.01 / 1.02, Q8_0 1.03 / 1.03; F16 copied
 * here against read from the file's mapping, 1.08 / 1.10. */
static pacer_err engine_place(engine *e, char *err, size_t err_len) {
    mat **ms = malloc((size_t)(7 * e->n_layer + 1) * sizeof *ms);
    if (!ms) {
        snprintf(err, err_len, "out of memory");
        return PACER_ERR_NOMEM;
    }
    int n = weight_mats(e, ms);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += placed_bytes(e, ms[i]);
    total = (total + WEIGHTS_ALIGN - 1) & ~(WEIGHTS_ALIGN - 1);
    e->weights = total ? aligned_alloc(WEIGHTS_ALIGN, total) : NULL;
    if (total && !e->weights) {
        free(ms);
        snprintf(err, err_len, "out of memory for the weights (%zu MB)", total >> 20);
        return PACER_ERR_NOMEM;
    }
#ifdef MADV_HUGEPAGE
    if (total)
        madvise(e->weights, total, MADV_HUGEPAGE); /* advice only: without it, 4 KB pages */
#endif
    unsigned char *at = e->weights;
    for (int i = 0; i < n; i++) {
        mat *m = ms[i];
        size_t sz = placed_bytes(e, m);
        if (!sz)
            continue;
        place_job pj = {m, m->data};
        if (kern_pack_supported(m->type))
            m->packed = at;
        else
            m->data = at;
        at += sz;
        threadpool_run(e->tp, job_place, &pj);
        if (pj.src != e->tok_embd.data)
            release_mapped(m, pj.src);
    }
    free(ms);
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
        rc = engine_place(e, err, err_len);
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
    free(e->weights);
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
    free(e->split_m);
    free(e->split_s);
    free(e->split_p);
    free(e->split_cnt);
    free(e->split_first);
    free(e->n_past);
    free(e->head_left);
    free(e->prof);
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
