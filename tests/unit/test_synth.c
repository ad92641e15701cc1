/* test_synth.c - engine/synth: the generator is seeded, the checkpoint has the declared
 * shapes and metadata, weights have the intended scale (output logits of a normalized
 * embedding have a standard deviation near logit_std), bad shapes are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/gguf.h"
#include "base/rng.h"
#include "engine/synth.h"

static char path[64];

static void setup(void) {
    snprintf(path, sizeof path, "/tmp/pacer-test-synth-%ld.gguf", (long)getpid());
}

static void teardown(void) { unlink(path); }

Test(synth, rng_is_seeded) {
    rng a, b, c;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    rng_seed(&c, 43);
    int same_c = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = rng_next(&a);
        cr_assert_eq(x, rng_next(&b));
        same_c += x == rng_next(&c);
    }
    cr_assert_eq(same_c, 0);
}

static double tensor_std(const gguf_tensor *t, float *tmp) {
    cr_assert(ggml_dequantize_row(t->type, t->data, tmp, t->n_elements));
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < t->n_elements; i++) {
        s += tmp[i];
        s2 += (double)tmp[i] * tmp[i];
    }
    double m = s / (double)t->n_elements;
    return sqrt(s2 / (double)t->n_elements - m * m);
}

static void check_model(ggml_type type) {
    synth_params p;
    synth_params_default(&p);
    p.dim = 64;
    p.ffn = 96;
    p.heads = 4;
    p.kv_heads = 2;
    p.layers = 3;
    p.type = type;
    p.seed = 5;
    char err[256];
    cr_assert_eq(synth_write(&p, path, err, sizeof err), PACER_OK, "%s", err);
    gguf_file *f;
    cr_assert_eq(gguf_open(path, &f, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_str_eq(gguf_get_str(f, "general.architecture", ""), "llama");
    cr_assert_eq(gguf_get_u32(f, "llama.block_count", 0), 3);
    cr_assert_eq(gguf_get_u32(f, "llama.attention.head_count_kv", 0), 2);
    cr_assert_eq(gguf_get_u32(f, "llama.rope.dimension_count", 0), 16);
    cr_assert_eq(gguf_get_u32(f, "llama.vocab_size", 0), 258);
    cr_assert_eq(gguf_get_n_tensors(f), 3 + 9 * 3);
    uint64_t params = 0;
    for (int64_t i = 0; i < gguf_get_n_tensors(f); i++) params += (uint64_t)gguf_get_tensor(f, i)->n_elements;
    cr_assert_eq(gguf_get_u64(f, "general.parameter_count", 0), params);
    const gguf_tensor *k = gguf_find_tensor(f, "blk.2.attn_k.weight");
    cr_assert(k && k->type == type && k->ne[0] == 64 && k->ne[1] == 32);
    const gguf_tensor *down = gguf_find_tensor(f, "blk.0.ffn_down.weight");
    cr_assert(down && down->ne[0] == 96 && down->ne[1] == 64);
    const gguf_tensor *norm = gguf_find_tensor(f, "blk.1.ffn_norm.weight");
    cr_assert(norm && norm->type == GGML_TYPE_F32 && ((const float *)norm->data)[63] == 1.0f);
    const gguf_tensor *emb = gguf_find_tensor(f, "token_embd.weight");
    const gguf_tensor *out = gguf_find_tensor(f, "output.weight");
    float *tmp = malloc((size_t)emb->n_elements * sizeof(float));
    float *wout = malloc((size_t)out->n_elements * sizeof(float));
    double q_std = tensor_std(gguf_find_tensor(f, "blk.0.attn_q.weight"), tmp);
    cr_assert(fabs(q_std - 1.0 / 8.0) < 0.02, "attn_q std %g", q_std);
    cr_assert(ggml_dequantize_row(out->type, out->data, wout, out->n_elements));
    cr_assert(ggml_dequantize_row(emb->type, emb->data, tmp, emb->n_elements));
    /* logits of each normalized embedding row: their spread is about logit_std */
    double spread = 0;
    for (int tok = 0; tok < 258; tok++) {
        const float *e = tmp + tok * 64;
        double ss = 0;
        for (int j = 0; j < 64; j++) ss += (double)e[j] * e[j];
        double inv = 1.0 / sqrt(ss / 64);
        double s = 0, s2 = 0;
        for (int v = 0; v < 258; v++) {
            double l = 0;
            for (int j = 0; j < 64; j++) l += wout[v * 64 + j] * e[j] * inv;
            s += l;
            s2 += l * l;
        }
        spread += sqrt(s2 / 258 - (s / 258) * (s / 258));
    }
    spread /= 258;
    cr_assert(spread > 6.0 && spread < 10.0, "logit std %g", spread);
    free(tmp);
    free(wout);
    gguf_close(f);
}

Test(synth, f16_model, .init = setup, .fini = teardown) { check_model(GGML_TYPE_F16); }
Test(synth, q8_0_model, .init = setup, .fini = teardown) { check_model(GGML_TYPE_Q8_0); }
Test(synth, q4_0_model, .init = setup, .fini = teardown) { check_model(GGML_TYPE_Q4_0); }

Test(synth, bad_shapes_refused, .init = setup, .fini = teardown) {
    synth_params p;
    char err[256];
    synth_params_default(&p);
    p.heads = 3; /* does not divide 128 */
    cr_assert_eq(synth_write(&p, path, err, sizeof err), PACER_ERR_ARG);
    cr_assert(strstr(err, "--heads"), "%s", err);
    synth_params_default(&p);
    p.kv_heads = 3;
    cr_assert_eq(synth_write(&p, path, err, sizeof err), PACER_ERR_ARG);
    synth_params_default(&p);
    p.type = GGML_TYPE_Q6_K;
    cr_assert_eq(synth_write(&p, path, err, sizeof err), PACER_ERR_ARG);
    synth_params_default(&p);
    p.tokenizer_path = "/nonexistent/tokenizer.json";
    cr_assert_neq(synth_write(&p, path, err, sizeof err), PACER_OK);
    cr_assert_neq(access(path, F_OK), 0);
}
