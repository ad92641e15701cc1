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

/* Rows per forward chunk: 256, or 32 for quantized weights at AVX2. A chunk streams each
 * matrix's weights once, so wider chunks read them fewer times, and each converted weight
 * vector serves more tokens. At 2 threads on a Zen 5 EPYC with AVX-512, 32 -> 128 rows took
 * pp512 from 139 to 153 tok/s for F16, 316 -> 371 for Q8_0, 337 -> 362 for Q4_0 and
 * 357 -> 395 for Q4_K, with pp128 better or within the noise; 256 rows gained nothing more.
 * At AVX2 (F16 there: pp128 72-76 -> 78-81) the quantized types' pp512 stayed equal and
 * Q4_0's pp128 fell 195 -> 183, so they keep 32. With AMX at 16 threads (16-core Xeon),
 * 128 -> 256 rows took pp512 up by a median of 7 % for Q8_0 (1336-1504 -> 1450-1663 tok/s)
 * and 5 % for Q4_K (1264-1428 -> 1283-1458) over 7 interleaved rounds, Q4_0 within the
 * noise over 4 (fewer jobs a prompt, each with its threads' waits at the end); 512 rows
 * gained nothing more in 3. No result depends on it: every kernel computes a row the same
 * way in any batch. */
#define ENGINE_BATCH 256
#define ENGINE_BATCH_AVX2_QUANT 32
/* A matmul job's chunk (forward.c): rows [r0, r1) of its matrix m for the batch's rows
 * [b0, b1); engine.cuts lists a job's chunks where they shrink towards the job's end. */
typedef struct engine_cut {
    int m, r0, r1, b0, b1;
} engine_cut;
#define ENGINE_CUTS 2048
/* Where an AMX matmul job's chunks would be fewer rows than ENGINE_CUT_BLOCK_ROWS (many
 * threads), they take fewer tokens than the batch where its activations would take more than
 * ENGINE_CUT_ACT_BYTES (about a third of a Sapphire Rapids core's 2 MB L2), and then up to
 * ENGINE_CUT_BLOCK_ROWS rows (forward.c, engine_plan_cuts) */
#define ENGINE_CUT_ACT_BYTES (768 * 1024)
#define ENGINE_CUT_BLOCK_ROWS 256
#define ENGINE_CUT_MIN_TOKENS 64
int engine_cut_tokens(size_t per, int nb);
int engine_plan_cuts(engine_cut *cuts, int cap, const int *n_out, int n_m, int nb, int tb, int nth, int align,
                     int big);
/* rows an attention unit takes in a prefill batch (forward.c): each pair of key blocks is
 * converted once for 16 rows' queries; Q4_K pp512 at depth 4096, 2 threads, 4 rows 233-236
 * tok/s, 8 243-244, 16 248-251, 32 247-249 */
#define ATT_SPAN 16
#define ENGINE_CTX_CAP 4096

typedef struct mat {
    const void *data; /* the rows as in the file: a copy in engine.weights, or the file's mapping
                       * (tok_embd, a tied output, and a packed matrix, which reads packed) */
    ggml_type type;
    int n_in, n_out;
    size_t row_bytes;
    void *packed; /* the rows in kern_pack's groups (in engine.weights), or NULL */
} mat;

typedef struct layer {
    const float *attn_norm, *ffn_norm, *q_norm, *k_norm;
    const float *bq, *bk, *bv;
    mat wq, wk, wv, wo, gate, up, down;
} layer;

/* The profile (engine_profile_enable; forward.c): what was counted, and each thread's start
 * and end of the job being timed. */
typedef struct engine_prof {
    bool on;
    engine_profile p;
    double *start, *end; /* [thread], in the same allocation, after the struct */
} engine_prof;

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
    int group_rows; /* rows of Q/K/V's packed groups (8, or 16 for F16): a chunk's first row */
    void *act;      /* prepared activations: 3 slots of `batch` rows of act_stride */
    size_t act_stride;
    /* [seq][layer][kv head][kv_pos positions]: V a position's hd numbers together, K in
     * kernels_f16.h's blocks; kv_pos = n_ctx rounded up to the key blocks */
    ggml_half *kc, *vc;
    int kv_pos;
    int row_seq[ENGINE_BATCH], row_pos[ENGINE_BATCH]; /* the chunk's rows: sequence, position */
    int row_keep[ENGINE_BATCH];                     /* eval_rows: the chunk's rows whose logits are wanted */
    engine_cut cuts[ENGINE_CUTS]; /* the running matmul job's chunks, where they shrink */
    /* attention split into ranges of keys (forward.c): per row and KV head (fewer rows than
     * threads) its ranges' maxima and sums ([row][kv head][head of its group][range]), value
     * sums and two counters; each row's first unit */
    float *split_m;
    double *split_s;
    float **split_p;
    atomic_int *split_cnt;
    int *split_first;
    float *scratch;    /* per thread: n_scratch floats */
    int n_scratch;
    float *rope_cs;    /* cos/sin per position pair: [n_ctx][n_rot/2][2] */
    engine_prof *prof; /* NULL until a profile is first enabled */
};

#endif
