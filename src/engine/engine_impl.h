/* engine_impl.h - the engine's state, shared by loading (engine.c) and the forward pass
 * (forward.c). Internal to the engine. */
#ifndef PACER_ENGINE_IMPL_H
#define PACER_ENGINE_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/ggml_type.h"
#include "engine/gguf.h"
#include "engine/threadpool.h"
#include "engine/tokenizer.h"

/* Rows per forward chunk: 32, or 128 where AMX multiplies the packed matrices or F16
 * weights are multiplied at AVX2 (each converted weight vector then serves four times the
 * tokens; pp128 at 2 threads 72-76 -> 78-81 tok/s with F16 activations, 30.0-30.9 -> 31.2-31.5
 * with F32 ones on a slower host). No result depends on it: every kernel computes a row the
 * same way in any batch. */
#define ENGINE_BATCH 32
#define ENGINE_BATCH_WIDE 128
/* A matmul job's chunk where chunks shrink towards the job's end (forward.c): rows [r0, r1)
 * of its matrix m. */
typedef struct engine_cut {
    int m, r0, r1;
} engine_cut;
#define ENGINE_CUTS 512
/* rows an attention unit takes in a prefill batch (forward.c) */
#define ATT_SPAN 4
#define ENGINE_CTX_CAP 4096

typedef struct mat {
    const void *data; /* the rows as in the file: a copy in engine.weights, or the file's mapping
                       * (tok_embd, a tied output, and a packed matrix, which reads packed) */
    ggml_type type;
    int n_in, n_out;
    size_t row_bytes;
    void *packed; /* the rows in kern_pack's groups of 8 (in engine.weights), or NULL */
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
    void *weights;  /* owned: every matrix but tok_embd, packed or copied (engine_place) */
    const float *out_norm;
    int n_seq;      /* KV cache slots: sequences evaluated independently */
    int *n_past;    /* per sequence: positions in its cache */
    atomic_int *head_left; /* Q/K/V job: per q, k and v head, its chunks not yet done */
    /* buffers */
    float *x, *xn, *q, *k, *v, *att, *g, *u;
    int batch;      /* rows per chunk */
    bool amx;       /* AMX multiplies the packed matrices */
    void *act;      /* prepared activations: 3 slots of `batch` rows of act_stride */
    size_t act_stride;
    ggml_half *kc, *vc; /* [seq][layer][pos][kv_dim] */
    int row_seq[ENGINE_BATCH_WIDE], row_pos[ENGINE_BATCH_WIDE]; /* the chunk's rows: sequence, position */
    engine_cut cuts[ENGINE_CUTS]; /* the running matmul job's chunks, where they shrink */
    float *scratch;    /* per thread: n_scratch floats */
    int n_scratch;
    float *rope_cs;    /* cos/sin per position pair: [n_ctx][n_rot/2][2] */
};

#endif
