/* test_quantize.c - `pacer model quantize`'s conversion: the K-quant quantizers against the
 * engine's dequantizers, and whole files: types, metadata, fallback, determinism, refusal of
 * a quantized source, and nothing left behind on failure. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/gguf.h"
#include "engine/quantize.h"
#include "base/rng.h"
#include "engine/synth.h"

/* Relative RMS error of `t`'s round trip on a seeded Gaussian row of k values. */
static double roundtrip_error(ggml_type t, int64_t k, uint64_t seed) {
    rng r;
    rng_seed(&r, seed);
    float *x = malloc((size_t)k * sizeof *x), *y = malloc((size_t)k * sizeof *y);
    void *q = malloc((size_t)k * sizeof(float));
    for (int64_t i = 0; i < k; i++) {
        double u1 = ((double)(rng_next(&r) >> 11) + 0.5) / 9007199254740992.0;
        double u2 = ((double)(rng_next(&r) >> 11) + 0.5) / 9007199254740992.0;
        x[i] = (float)(sqrt(-2 * log(u1)) * cos(2 * M_PI * u2)) * 0.02f;
    }
    if (t == GGML_TYPE_Q4_K) quantize_q4_K_row(x, q, k);
    else if (t == GGML_TYPE_Q6_K) quantize_q6_K_row(x, q, k);
    else cr_assert(ggml_quantize_row(t, x, q, k));
    cr_assert(ggml_dequantize_row(t, q, y, k));
    double se = 0, ss = 0;
    for (int64_t i = 0; i < k; i++) se += (x[i] - y[i]) * (x[i] - y[i]), ss += x[i] * x[i];
    free(x), free(y), free(q);
    return sqrt(se / ss);
}

Test(quantize, k_quants_round_trip_through_the_engine_dequantizers) {
    double q4k = roundtrip_error(GGML_TYPE_Q4_K, 4096, 1), q6k = roundtrip_error(GGML_TYPE_Q6_K, 4096, 1);
    double q40 = roundtrip_error(GGML_TYPE_Q4_0, 4096, 1), q80 = roundtrip_error(GGML_TYPE_Q8_0, 4096, 1);
    cr_expect(q4k > 0 && q4k < 0.16, "q4_K %f", q4k);
    cr_expect(q6k > 0 && q6k < 0.04, "q6_K %f", q6k);
    cr_expect(q6k < q4k && q80 < q6k, "q8_0 %f < q6_K %f < q4_K %f", q80, q6k, q4k);
    cr_expect(q4k < q40 * 1.5, "q4_K %f against q4_0 %f", q4k, q40);
    float zeros[QK_K] = {0}, y[QK_K];
    block_q4_K b4;
    block_q6_K b6;
    quantize_q4_K_row(zeros, &b4, QK_K);
    dequantize_row_q4_K(&b4, y, QK_K);
    for (int i = 0; i < QK_K; i++) cr_expect_eq(y[i], 0.0f);
    quantize_q6_K_row(zeros, &b6, QK_K);
    dequantize_row_q6_K(&b6, y, QK_K);
    for (int i = 0; i < QK_K; i++) cr_expect_eq(y[i], 0.0f);
}

static char dir[] = "/tmp/pacer-quantize-XXXXXX";

static void make_dir(void) { cr_assert_not_null(mkdtemp(dir)); }
static void remove_dir(void) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

static void synth(const char *path, ggml_type t, int dim) {
    synth_params p;
    synth_params_default(&p);
    p.dim = dim;
    p.ffn = 2 * dim;
    p.type = t;
    p.seed = 9;
    char err[256];
    cr_assert_eq(synth_write(&p, path, err, sizeof err), PACER_OK, "%s", err);
}

static void convert(const char *in, const char *out, ggml_type t) {
    quantize_job *j;
    char err[256];
    cr_assert_eq(quantize_open(in, t, &j, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(quantize_write(j, out, err, sizeof err), PACER_OK, "%s", err);
    quantize_close(j);
}

static bool same_file(const char *a, const char *b) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

Test(quantize, files_are_typed_sized_and_deterministic, .init = make_dir, .fini = remove_dir) {
    char src[128], a[128], b[128];
    snprintf(src, sizeof src, "%s/m-f16.gguf", dir);
    synth(src, GGML_TYPE_F16, 256);
    const ggml_type types[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_F32};
    const uint32_t ftypes[] = {7, 2, 14, 18, 0};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        snprintf(a, sizeof a, "%s/a.gguf", dir);
        snprintf(b, sizeof b, "%s/b.gguf", dir);
        quantize_job *j;
        char err[256];
        cr_assert_eq(quantize_open(src, types[i], &j, err, sizeof err), PACER_OK, "%s", err);
        uint64_t planned = quantize_output_bytes(j);
        cr_assert_eq(quantize_write(j, a, err, sizeof err), PACER_OK, "%s", err);
        quantize_close(j);
        convert(src, b, types[i]);
        cr_expect(same_file(a, b), "%s: two conversions differ", ggml_type_name(types[i]));
        gguf_file *f, *s;
        cr_assert_eq(gguf_open(a, &f, err, sizeof err), PACER_OK, "%s", err);
        cr_assert_eq(gguf_open(src, &s, err, sizeof err), PACER_OK);
        cr_expect_eq(gguf_get_file_size(f), planned, "the planned size is the written size");
        cr_expect_eq(gguf_get_u32(f, "general.file_type", 99), ftypes[i]);
        cr_expect_str_eq(gguf_get_str(f, "general.name", ""), gguf_get_str(s, "general.name", "?"));
        cr_expect_eq(gguf_get_n_kv(f), gguf_get_n_kv(s));
        cr_assert_eq(gguf_get_n_tensors(f), gguf_get_n_tensors(s));
        for (int64_t t = 0; t < gguf_get_n_tensors(f); t++) {
            const gguf_tensor *o = gguf_get_tensor(f, t), *in = gguf_get_tensor(s, t);
            cr_expect_str_eq(o->name, in->name);
            cr_expect_eq(o->type, in->n_dims >= 2 ? types[i] : in->type, "%s", o->name);
        }
        gguf_close(f);
        gguf_close(s);
    }
}

/* q4_K_M: llama.cpp's mixture. With 16 layers its rule gives q6_K to layers 0, 1, 4, 7, 10,
 * 13, 14 and 15's attn_v and ffn_down, and to output.weight; every other matrix is q4_K. */
Test(quantize, q4_K_M_mixture, .init = make_dir, .fini = remove_dir) {
    char src[128], out[128];
    snprintf(src, sizeof src, "%s/m16.gguf", dir);
    snprintf(out, sizeof out, "%s/m16-q4_K_M.gguf", dir);
    synth_params p;
    synth_params_default(&p);
    p.dim = 256;
    p.ffn = 512;
    p.layers = 16;
    p.type = GGML_TYPE_F16;
    char err[256];
    cr_assert_eq(synth_write(&p, src, err, sizeof err), PACER_OK, "%s", err);
    quantize_scheme s;
    cr_assert(quantize_scheme_from_name("Q4_K_M", &s) && s.k_m && s.type == GGML_TYPE_Q4_K);
    cr_expect_str_eq(quantize_scheme_name(s), "q4_K_M");
    quantize_scheme plain;
    cr_assert(quantize_scheme_from_name("q6_k", &plain) && !plain.k_m && plain.type == GGML_TYPE_Q6_K);
    cr_expect(!quantize_scheme_from_name("q5_K_M", &plain) && !quantize_scheme_from_name("q4_1", &plain));
    quantize_job *j;
    cr_assert_eq(quantize_open_scheme(src, s, &j, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(quantize_write(j, out, err, sizeof err), PACER_OK, "%s", err);
    quantize_close(j);
    gguf_file *f;
    cr_assert_eq(gguf_open(out, &f, err, sizeof err), PACER_OK, "%s", err);
    cr_expect_eq(gguf_get_u32(f, "general.file_type", 99), 15);
    int n6 = 0;
    for (int64_t i = 0; i < gguf_get_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_get_tensor(f, i);
        int layer = -1;
        sscanf(t->name, "blk.%d.", &layer);
        bool more = layer == 0 || layer == 1 || layer == 4 || layer == 7 || layer == 10 || layer >= 13;
        ggml_type want = t->n_dims < 2                                                       ? t->type
                         : strcmp(t->name, "output.weight") == 0                              ? GGML_TYPE_Q6_K
                         : (strstr(t->name, "attn_v.") || strstr(t->name, "ffn_down.")) && more ? GGML_TYPE_Q6_K
                                                                                              : GGML_TYPE_Q4_K;
        cr_expect_eq(t->type, want, "%s is %s", t->name, ggml_type_name(t->type));
        n6 += t->type == GGML_TYPE_Q6_K;
    }
    cr_expect_eq(n6, 17);
    gguf_close(f);
}

Test(quantize, narrow_rows_fall_back_and_quantized_sources_are_refused, .init = make_dir, .fini = remove_dir) {
    char src[128], out[128], q8[128];
    snprintf(src, sizeof src, "%s/narrow.gguf", dir);
    snprintf(out, sizeof out, "%s/narrow-q4_K.gguf", dir);
    snprintf(q8, sizeof q8, "%s/q8.gguf", dir);
    synth(src, GGML_TYPE_F32, 64); /* rows of 64: no multiple of 256 */
    quantize_job *j;
    char err[256];
    cr_assert_eq(quantize_open(src, GGML_TYPE_Q4_K, &j, err, sizeof err), PACER_OK, "%s", err);
    int conv, fb, copied;
    quantize_counts(j, &conv, &fb, &copied);
    cr_expect(conv == 0 && fb > 0, "converted %d, fallback %d", conv, fb);
    quantize_close(j);
    synth(q8, GGML_TYPE_Q8_0, 64);
    cr_expect_eq(quantize_open(q8, GGML_TYPE_Q4_0, &j, err, sizeof err), PACER_ERR_UNSUPPORTED);
    cr_expect(strstr(err, "quantize needs a checkpoint with f32, f16 or bf16 matrices"), "%s", err);
    cr_expect_eq(quantize_open(src, GGML_TYPE_Q5_1, &j, err, sizeof err), PACER_ERR_UNSUPPORTED);
    /* a directory that does not exist: an error, and no partial file anywhere */
    cr_assert_eq(quantize_open(src, GGML_TYPE_Q8_0, &j, err, sizeof err), PACER_OK);
    snprintf(out, sizeof out, "%s/missing/x.gguf", dir);
    cr_expect_eq(quantize_write(j, out, err, sizeof err), PACER_ERR_IO);
    quantize_close(j);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls '%s' | grep partial)\"", dir);
    cr_expect_eq(system(cmd), 0);
}
