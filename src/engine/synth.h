/* synth.h - seeded random-weight llama-architecture GGUF checkpoints of any shape, for
 * tests, the demo and benchmarks. Same parameters, same bytes. Weights are scaled so the
 * next-token distribution is peaked (output logits have a standard deviation of
 * `logit_std`), unlike tiny-weight random models whose distribution is nearly flat. */
#ifndef PACER_SYNTH_H
#define PACER_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/ggml_type.h"

typedef struct synth_params {
    int dim;          /* llama.embedding_length */
    int layers;       /* llama.block_count */
    int heads;        /* llama.attention.head_count; head dim = dim / heads (even) */
    int kv_heads;     /* llama.attention.head_count_kv; divides heads */
    int ffn;          /* llama.feed_forward_length */
    int ctx;          /* llama.context_length */
    float rope_theta; /* llama.rope.freq_base */
    float rms_eps;    /* llama.attention.layer_norm_rms_epsilon */
    ggml_type type;   /* matrices: F32, F16, BF16, Q8_0 or Q4_0; norms are always F32 */
    uint64_t seed;
    float logit_std;  /* target standard deviation of the output logits */
    const char *name; /* general.name */
    /* Vocabulary source: NULL for the built-in byte-level one (256 bytes + BOS + EOS);
     * a GGUF file (its tokenizer.* keys are copied); or an HF tokenizer.json (BPE, byte
     * level), with tokenizer_config.json beside it read for BOS/EOS/chat template. */
    const char *tokenizer_path;
    /* Text only: the model can generate only pieces that are whole UTF-8 text, never a
     * control token (BOS, EOS, end of turn) nor a byte of an unfinished character. Hidden
     * dimension 0 carries a constant (every embedding has it, no layer writes it), and the
     * output rows of the blocked pieces weigh it with a large negative weight, so their
     * logits lie hundreds below any other on every engine and kernel: a reply never ends
     * before its token budget and never stops inside a character (servers that parse their
     * own output, like llama-server, refuse text cut mid-character). */
    bool text_only;
} synth_params;

/* Defaults: dim 128, 2 layers, 4 heads, 4 KV heads, ffn 384, ctx 2048, theta 10000,
 * eps 1e-5, F16, seed 0, logit_std 8, name "pacer-synth", byte-level vocabulary. */
void synth_params_default(synth_params *p);

/* Checks the shape (PACER_ERR_ARG with a message when it cannot be built). */
pacer_err synth_params_check(const synth_params *p, char *err, size_t err_len);

/* Writes the checkpoint to `path` (through a temporary file renamed into place).
 * Metadata written: general.architecture "llama", general.name, general.file_type (llama.cpp's
 * ftype: 0 f32, 1 f16, 2 q4_0, 7 q8_0, 32 bf16), general.quantization_version 2,
 * general.parameter_count (u64: the elements of all tensors), general.seed (u64),
 * llama.{context_length, embedding_length, block_count, feed_forward_length,
 * attention.head_count, attention.head_count_kv, rope.freq_base,
 * attention.layer_norm_rms_epsilon, rope.dimension_count, vocab_size}, then tokenizer.*.
 * Tensors, in llama.cpp's names and ggml order (ne[0] = input dim): token_embd.weight,
 * output_norm.weight, output.weight, then per layer blk.N.{attn_norm, attn_q, attn_k,
 * attn_v, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down}.weight. */
pacer_err synth_write(const synth_params *p, const char *path, char *err, size_t err_len);

#endif
