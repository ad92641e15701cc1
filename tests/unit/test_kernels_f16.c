/* test_kernels_f16.c - the F16 kernels give one arithmetic within a level: the one-row dot
 * at every level equals the scalar definition with the level's lanes, the batched product
 * equals it for every batch size and split of rows, attention's many-keys kernels equal
 * their one-key forms (16 lanes everywhere); and all of it against a double-precision
 * reference. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ggml_type.h"
#include "engine/kernels.h"
#include "engine/kernels_f16.h"

static void fill(float *x, int n, unsigned seed) {
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = ((float)((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f);
    }
}

/* n F16 values, and n F16-rounded floats (as kern_act_prepare makes them). */
static ggml_half *f16_rows(int n, unsigned seed) {
    float *x = malloc(sizeof(float) * (size_t)n);
    ggml_half *h = malloc(sizeof(ggml_half) * (size_t)n);
    fill(x, n, seed);
    for (int i = 0; i < n; i += 89)
        x[i] *= 300; /* some large terms: sums that depend on their order */
    for (int i = 0; i < n; i++)
        h[i] = ggml_fp32_to_fp16(x[i]);
    free(x);
    return h;
}

/* n F16-rounded floats (attention's queries), as kern_round_f16 makes them. */
static float *act_rows(int n, unsigned seed) {
    float *x = malloc(sizeof(float) * (size_t)n), *a = malloc(sizeof(float) * (size_t)n);
    fill(x, n, seed);
    kern_round_f16(x, a, n);
    free(x);
    return a;
}

/* The same values as a matrix's activation rows (kern_act_prepare's for F16 weights), each n
 * elements, kern_act_size apart. */
static void *act_prepared(const float *x, int rows, int n) {
    size_t as = kern_act_size(GGML_TYPE_F16, n);
    unsigned char *a = malloc(as * (size_t)rows);
    float *back = malloc(sizeof(float) * (size_t)n);
    for (int r = 0; r < rows; r++) {
        kern_act_prepare(GGML_TYPE_F16, x + (size_t)r * n, a + (size_t)r * as, n);
        kern_act_dequantize(GGML_TYPE_F16, a + (size_t)r * as, back, n);
        cr_assert(memcmp(back, x + (size_t)r * n, sizeof(float) * (size_t)n) == 0, "activation row %d changed", r);
    }
    free(back);
    return a;
}

static double ref_dot(const ggml_half *w, const float *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)ggml_fp16_to_fp32(w[i]) * x[i];
    return s;
}

Test(kernels_f16, dot_is_the_levels_definition) {
    static const int ns[] = {1, 7, 8, 15, 16, 77, 512, 2048};
    kern_level best = kern_detect();
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k];
        ggml_half *w = f16_rows(n, 3 + (unsigned)n);
        float *x = act_rows(n, 9);
        double ref = ref_dot(w, x, n);
        for (int lanes = 8; lanes <= 16; lanes += 8) {
            float d = kern_dot_f16_lanes(w, x, n, lanes);
            cr_assert(fabs(d - ref) <= 1e-5 * (1 + fabs(ref)) * n, "n %d, %d lanes: %g vs %g", n, lanes, d, ref);
        }
        for (int l = KERN_SCALAR; l <= (int)best; l++) {
            if (!kern_level_supported((kern_level)l))
                continue;
            kern_set_level((kern_level)l);
            int lanes = kern_f16_lanes();
            cr_assert(lanes == (l == KERN_AVX2 || l == KERN_AVXVNNI ? 8 : 16), "%d lanes at %s", lanes, kern_level_name((kern_level)l));
            void *xa = act_prepared(x, 1, n);
            float want = kern_dot_f16_lanes(w, x, n, lanes), got = kern_dot_f16(w, xa, n);
            cr_assert(got == want, "n %d at %s: %.9g, definition %.9g", n, kern_level_name((kern_level)l), got, want);
            cr_assert(kern_dot(GGML_TYPE_F16, w, xa, n, NULL) == want, "kern_dot F16 at %s", kern_level_name((kern_level)l));
            free(xa);
        }
        free(w);
        free(x);
    }
    kern_set_level(best);
}

/* Every batch size (tiles and remainders), rows split in two ranges as threads split them
 * (blocks and leftover rows), each output == the one-row definition with the level's lanes. */
static void check_matmul(int rows, int n) {
    enum { NB = 37 };
    static const int nbs[] = {1, 4, 7, 16, 19, 32, 37};
    ggml_half *w = f16_rows(rows * n, 17 + (unsigned)rows);
    float *x = act_rows(NB * n, 23);
    int ldo = rows + 3, split = rows / 2 + 1;
    float *want = malloc(sizeof(float) * NB * (size_t)rows), *out = malloc(sizeof(float) * NB * (size_t)ldo);
    kern_level best = kern_detect();
    for (int l = KERN_SCALAR; l <= (int)best; l++) {
        if (!kern_level_supported((kern_level)l))
            continue;
        kern_set_level((kern_level)l);
        void *xa = act_prepared(x, NB, n);
        for (int b = 0; b < NB; b++)
            for (int r = 0; r < rows; r++)
                want[b * rows + r] = kern_dot_f16_lanes(w + (size_t)r * n, x + (size_t)b * n, n, kern_f16_lanes());
        for (size_t ni = 0; ni < sizeof nbs / sizeof nbs[0]; ni++) {
            int nb = nbs[ni];
            for (int i = 0; i < NB * ldo; i++)
                out[i] = -12345.0f;
            size_t rb = (size_t)n * sizeof(ggml_half), ab = kern_act_size(GGML_TYPE_F16, n);
            kern_matmul(GGML_TYPE_F16, w, rb, n, 0, split, xa, ab, nb, out, ldo, NULL);
            kern_matmul(GGML_TYPE_F16, w, rb, n, split, rows, xa, ab, nb, out, ldo, NULL);
            for (int b = 0; b < nb; b++) {
                for (int r = 0; r < rows; r++)
                    cr_assert(out[b * ldo + r] == want[b * rows + r],
                              "%dx%d at %s, nb %d: row %d act %d: %.9g vs %.9g", rows, n,
                              kern_level_name((kern_level)l), nb, r, b,
                              out[b * ldo + r], want[b * rows + r]);
                for (int r = rows; r < ldo; r++)
                    cr_assert(out[b * ldo + r] == -12345.0f, "padding row %d written", r);
            }
        }
        free(xa);
    }
    kern_set_level(best);
    free(w);
    free(x);
    free(want);
    free(out);
}

Test(kernels_f16, matmul_equals_dots) {
    check_matmul(8, 64);
    check_matmul(27, 256);
    check_matmul(19, 200); /* a tail of 8 past 16 lanes */
    check_matmul(6, 205);  /* tails past 8 and 16 lanes */
    check_matmul(13, 2048);
    check_matmul(9, 1045); /* a long row, a tail of 5 */
    check_matmul(4, 13);   /* fewer elements than one register's 16 lanes: the tail alone */
}

/* Scores of 1..40 keys (full blocks of 16, pairs of them, remainders) for 1..20 queries at
 * once (a unit of several rows' heads: each key converted once for all of them) == each key's
 * chain of fmaf in element order * scale, at every level; keys stored through
 * kern_attn_key_store in their blocks (kernels_f16.h), found where the layout puts them. */
Test(kernels_f16, attention_scores_in_element_order) {
    static const int hds[] = {64, 128, 48, 40, 256};
    static const int nhs[] = {1, 2, 3, 4, 5, 8, 9, 13, 20};
    enum { KEYS = 40, NH = 20, OS = KEYS + 3 };
    kern_level best = kern_detect();
    for (size_t hi = 0; hi < sizeof hds / sizeof hds[0]; hi++) {
        int hd = hds[hi], np = kern_key_positions(KEYS);
        cr_assert(np == 48, "40 positions take three blocks: %d", np);
        float *kx = act_rows(KEYS * hd, 5 + (unsigned)hd), *q = act_rows(NH * 260, 7), want[NH][KEYS], got[NH * OS];
        ggml_half *keys = calloc((size_t)np * hd, sizeof *keys);
        for (int t = 0; t < KEYS; t++)
            kern_attn_key_store(keys, t, kx + (size_t)t * hd, hd);
        for (int t = 0; t < KEYS; t++)
            for (int d = 0; d < hd; d++) {
                ggml_half h = keys[(size_t)(t / 16) * 16 * hd + (size_t)d * 16 + t % 16];
                cr_assert(h == ggml_fp32_to_fp16(kx[(size_t)t * hd + d]), "key %d element %d stored elsewhere", t, d);
            }
        float scale = 1.0f / sqrtf((float)hd);
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < KEYS; t++) {
                float s = 0;
                for (int d = 0; d < hd; d++)
                    s = fmaf(q[h * 260 + d], ggml_fp16_to_fp32(ggml_fp32_to_fp16(kx[(size_t)t * hd + d])), s);
                want[h][t] = s * scale;
            }
        for (int l = KERN_SCALAR; l <= (int)best; l++) {
            if (!kern_level_supported((kern_level)l))
                continue;
            kern_set_level((kern_level)l);
            for (size_t ni = 0; ni < sizeof nhs / sizeof nhs[0]; ni++)
                for (int n = 1; n <= KEYS; n++) {
                    int nh = nhs[ni];
                    for (int i = 0; i < NH * OS; i++)
                        got[i] = -7.0f;
                    kern_attn_scores(nh, keys, q, 260, hd, n, scale, got, OS);
                    for (int h = 0; h < nh; h++) {
                        for (int t = 0; t < n; t++)
                            cr_assert(got[h * OS + t] == want[h][t], "hd %d at %s, %d heads, %d keys: head %d key %d %.9g vs %.9g",
                                      hd, kern_level_name((kern_level)l), nh, n, h, t, got[h * OS + t], want[h][t]);
                        cr_assert(got[h * OS + n] == -7.0f, "score past the keys written");
                    }
                }
        }
        free(keys);
        free(kx);
        free(q);
    }
    kern_set_level(best);
}

/* Value sums for 1..20 heads at once, all taking the same keys or each its own count (a unit
 * of several rows: a row's heads share one; blocks of keys past 64; one range of keys or up
 * to three) == each head's sum in key order with fmaf a range, the ranges' sums added in
 * order, at every level; and near the double reference. */
Test(kernels_f16, attention_values_in_key_order) {
    static const int hds[] = {64, 128, 48, 256, 192};
    static const int nhs[] = {1, 2, 4, 5, 8, 13, 20};
    enum { KEYS = 2 * KERN_ATT_RANGE + 90, STRIDE = 520, NH = 20, WS = KEYS + 3, OS = 260 };
    kern_level best = kern_detect();
    float *w = malloc(sizeof(float) * NH * WS), *want = malloc(sizeof(float) * NH * OS),
          *got = malloc(sizeof(float) * NH * OS), *part = malloc(sizeof(float) * NH * 256);
    for (size_t hi = 0; hi < sizeof hds / sizeof hds[0]; hi++) {
        int hd = hds[hi];
        ggml_half *v = f16_rows(KEYS * STRIDE, 11 + (unsigned)hd);
        for (int shape = 0; shape < 3; shape++) {
            int n[NH];
            for (int h = 0; h < NH; h++) /* all alike; rows of four heads at consecutive positions; any */
                n[h] = shape == 0 ? KEYS - 13 : shape == 1 ? 60 + h / 4 : 1 + (h * 37 + 11) % KEYS;
            for (int h = 0; h < NH; h++) {
                fill(w + h * WS, n[h], 40 + (unsigned)h);
                for (int t = 0; t < n[h]; t++)
                    w[h * WS + t] = fabsf(w[h * WS + t]);
                kern_softmax_f16(w + h * WS, n[h]);
            }
            for (int h = 0; h < NH; h++)
                for (int i = 0; i < hd; i++) {
                    float s = 0, sr = 0;
                    double ref = 0;
                    for (int t = 0; t < n[h]; t++) {
                        float vi = ggml_fp16_to_fp32(v[(size_t)t * STRIDE + i]);
                        sr = fmaf(w[h * WS + t], vi, sr);
                        ref += (double)w[h * WS + t] * vi;
                        if (t == n[h] - 1 || t % KERN_ATT_RANGE == KERN_ATT_RANGE - 1) { /* a range ends */
                            s = t < KERN_ATT_RANGE ? sr : s + sr;
                            sr = 0;
                        }
                    }
                    want[h * OS + i] = s;
                    cr_assert(fabs(s - ref) < 1e-3, "value sum %g vs %g", s, ref);
                }
            for (int l = KERN_SCALAR; l <= (int)best; l++) {
                if (!kern_level_supported((kern_level)l))
                    continue;
                kern_set_level((kern_level)l);
                for (size_t ni = 0; ni < sizeof nhs / sizeof nhs[0]; ni++) {
                    int nh = nhs[ni];
                    for (int i = 0; i < NH * OS; i++)
                        got[i] = -7.0f;
                    kern_attn_values(nh, w, WS, v, STRIDE, hd, n, got, OS, part);
                    for (int h = 0; h < nh; h++) {
                        for (int i = 0; i < hd; i++)
                            cr_assert(got[h * OS + i] == want[h * OS + i],
                                      "hd %d at %s, shape %d, %d heads: head %d (%d keys) [%d] %.9g vs %.9g", hd,
                                      kern_level_name((kern_level)l), shape, nh, h, n[h], i, got[h * OS + i], want[h * OS + i]);
                        cr_assert(got[h * OS + hd] == -7.0f, "value past hd written");
                    }
                }
            }
        }
        free(v);
    }
    free(w);
    free(want);
    free(got);
    free(part);
    kern_set_level(best);
}

/* Softmax weights: F16 values, summing to 1, the largest score's weight the largest. */
Test(kernels_f16, softmax_weights) {
    enum { M = 150 };
    float s[M];
    fill(s, M, 13);
    s[77] = 4.0f;
    kern_softmax_f16(s, M);
    double sum = 0;
    for (int t = 0; t < M; t++) {
        cr_assert(ggml_fp16_to_fp32(ggml_fp32_to_fp16(s[t])) == s[t], "weight %d is not an F16 value", t);
        cr_assert(s[t] <= s[77]);
        sum += s[t];
    }
    cr_assert(fabs(sum - 1) < 1e-2, "weights sum to %g", sum);
}

/* The weights are the same at every level, for any count (16-wide steps, 16 lanes of the
 * sum, tails, one range of keys or several), and near the exact softmax before the F16
 * rounding. */
Test(kernels_f16, softmax_same_at_every_level) {
    enum { M = 700 };
    float x[M], want[M], got[M];
    fill(x, M, 21);
    for (int t = 0; t < M; t++)
        x[t] *= t % 7 == 0 ? 40.0f : 3.0f; /* some weights far below the largest: tiny or zero */
    kern_level best = kern_detect();
    for (int n = 1; n <= M; n += n < 40 ? 1 : 37) {
        double mx = -INFINITY, sum = 0;
        for (int t = 0; t < n; t++)
            mx = x[t] > mx ? x[t] : mx;
        for (int t = 0; t < n; t++)
            sum += exp(x[t] - mx);
        kern_set_level(KERN_SCALAR);
        memcpy(want, x, sizeof(float) * (size_t)n);
        kern_softmax_f16(want, n);
        for (int t = 0; t < n; t++) {
            double ref = exp(x[t] - mx) / sum;
            cr_assert(fabs(want[t] - ref) <= ref / 1024 + 1e-7, "n %d weight %d: %.9g vs %.9g", n, t, want[t], ref);
        }
        for (int l = KERN_AVX2; l <= (int)best; l++) {
            if (!kern_level_supported((kern_level)l))
                continue;
            kern_set_level((kern_level)l);
            memcpy(got, x, sizeof(float) * (size_t)n);
            kern_softmax_f16(got, n);
            cr_assert(memcmp(got, want, sizeof(float) * (size_t)n) == 0, "n %d: weights differ at %s", n,
                      kern_level_name((kern_level)l));
        }
    }
    kern_set_level(best);
}

/* SwiGLU: every level gives the scalar level's bits, for any count (8-wide steps, tails) and
 * on the edges (zeros, large magnitudes, infinities, subnormals); near silu(g) * u. */
Test(kernels_f16, swiglu_same_at_every_level) {
    enum { M = 203 };
    float g[M], u[M], want[M], got[M];
    fill(g, M, 31);
    fill(u, M, 37);
    for (int i = 0; i < M; i++)
        g[i] *= i % 5 == 0 ? 60.0f : 6.0f;
    static const float edge[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 88.0f, -88.0f, 120.0f, -120.0f, 1e30f, -1e30f,
                                 INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++)
        g[3 + 8 * k] = edge[k];
    kern_level best = kern_detect();
    for (int n = 1; n <= M; n += n < 20 ? 1 : 23) {
        kern_set_level(KERN_SCALAR);
        memcpy(want, g, sizeof(float) * (size_t)n);
        kern_swiglu(want, u, n);
        for (int i = 0; i < n; i++) {
            if (isinf(g[i]))
                continue;
            double ref = g[i] / (1.0 + exp(-(double)g[i])) * u[i];
            cr_assert(fabs(want[i] - ref) <= 1e-6 * fabs(ref) + 1e-30, "n %d: swiglu(%g, %g) = %.9g vs %.9g", n, g[i],
                      u[i], want[i], ref);
        }
        for (int l = KERN_AVX2; l <= (int)best; l++) {
            if (!kern_level_supported((kern_level)l))
                continue;
            kern_set_level((kern_level)l);
            memcpy(got, g, sizeof(float) * (size_t)n);
            kern_swiglu(got, u, n);
            for (int i = 0; i < n; i++)
                cr_assert(memcmp(&got[i], &want[i], sizeof(float)) == 0 || (isnan(got[i]) && isnan(want[i])),
                          "n %d at %s: swiglu(%g) %.9g vs %.9g", n, kern_level_name((kern_level)l), g[i], got[i], want[i]);
        }
    }
    kern_set_level(best);
}
