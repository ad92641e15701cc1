/* test_engine.c - the forward pass against llama.cpp's reference log-probabilities
 * (teacher-forced over ../shared/golden), batched prefill against token-by-token
 * evaluation, thread-count independence of greedy decoding, and a tied output matrix
 * against an untied one with the same rows. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "need.h"
#include "base/buf.h"
#include "base/fileio.h"
#include "engine/engine.h"
#include "engine/engine_impl.h"
#include "engine/gguf.h"
#include "engine/kernels.h"
#include "engine/kernels_f16.h"
#include "engine/quantize.h"
#include "engine/synth.h"

#define GOLDEN_MODEL "../shared/models/rand-gpt2vocab-f16.gguf"
#define GOLDEN_STEPS "../shared/golden/greedy-gpt2vocab-f16.jsonl"

static engine *open_golden(int threads) {
    engine_params p = {.n_threads = threads, .n_ctx = 256};
    engine *e = NULL;
    char err[256] = "";
    pacer_err rc = engine_open(GOLDEN_MODEL, &p, &e, err, sizeof err);
    cr_assert_eq(rc, PACER_OK, "engine_open: %s", err);
    return e;
}

static double log_sum_exp(const float *l, int n) {
    float mx = l[0];
    for (int i = 1; i < n; i++)
        if (l[i] > mx)
            mx = l[i];
    double s = 0;
    for (int i = 0; i < n; i++)
        s += exp((double)l[i] - mx);
    return mx + log(s);
}

Test(engine, golden_teacher_forced, .timeout = 120) {
    NEED_FILE(GOLDEN_MODEL, "../shared");
    NEED_FILE(GOLDEN_STEPS, "../shared");
    engine *e = open_golden(2);
    const engine_info *info = engine_get_info(e);
    int nv = info->n_vocab;
    float *logits = malloc((size_t)256 * nv * sizeof(float));
    FILE *f = fopen(GOLDEN_STEPS, "r");
    cr_assert(f);
    char line[1 << 16];
    double worst = 0;
    int checked = 0, prompts = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t jerr;
        json_t *o = json_loads(line, 0, &jerr);
        cr_assert(o, "bad golden line: %s", jerr.text);
        json_t *pids = json_object_get(o, "prompt_ids"), *oids = json_object_get(o, "output_ids");
        json_t *steps = json_object_get(o, "steps");
        int np = (int)json_array_size(pids), no = (int)json_array_size(oids);
        int32_t toks[256];
        cr_assert(np + no <= 256);
        for (int i = 0; i < np; i++)
            toks[i] = (int32_t)json_integer_value(json_array_get(pids, i));
        for (int i = 0; i < no; i++)
            toks[np + i] = (int32_t)json_integer_value(json_array_get(oids, i));
        /* prompt in one batch, then the outputs one at a time, as a generator would */
        cr_assert_eq(engine_eval(e, toks, np, 0, logits, true), PACER_OK);
        for (int i = 0; i + 1 < no; i++)
            cr_assert_eq(engine_eval(e, toks + np + i, 1, np + i, logits + (size_t)(np + i) * nv, false), PACER_OK);
        for (int s = 0; s < (int)json_array_size(steps); s++) {
            const float *row = logits + (size_t)(np - 1 + s) * nv;
            double lse = log_sum_exp(row, nv);
            json_t *top = json_object_get(json_array_get(steps, (size_t)s), "top");
            for (size_t k = 0; k < json_array_size(top); k++) {
                json_t *pair = json_array_get(top, k);
                int id = (int)json_integer_value(json_array_get(pair, 0));
                double ref = json_real_value(json_array_get(pair, 1));
                double got = row[id] - lse;
                double d = fabs(got - ref);
                if (d > worst)
                    worst = d;
                checked++;
            }
        }
        prompts++;
        json_decref(o);
    }
    fclose(f);
    fprintf(stderr, "golden: %d prompts, %d log-probabilities, max |diff| %.3g\n", prompts, checked, worst);
    cr_assert_gt(checked, 0);
    cr_assert_lt(worst, 1e-3, "max logprob difference %g", worst);
    free(logits);
    engine_close(e);
}

static int argmax(const float *l, int n) {
    int b = 0;
    for (int i = 1; i < n; i++)
        if (l[i] > l[b])
            b = i;
    return b;
}

Test(engine, batched_prefill_matches_single, .timeout = 60) {
    NEED_FILE(GOLDEN_MODEL, "../shared");
    engine *e = open_golden(2);
    int nv = engine_get_info(e)->n_vocab;
    int32_t toks[40];
    for (int i = 0; i < 40; i++)
        toks[i] = (int32_t)((i * 7919 + 13) % nv);
    float *a = malloc((size_t)40 * nv * sizeof(float)), *b = malloc((size_t)nv * sizeof(float));
    cr_assert_eq(engine_eval(e, toks, 40, 0, a, true), PACER_OK);
    cr_assert_eq(engine_n_past(e), 40);
    double worst = 0;
    for (int i = 0; i < 40; i++) {
        cr_assert_eq(engine_eval(e, toks + i, 1, i, b, false), PACER_OK);
        for (int j = 0; j < nv; j++) {
            double d = fabs((double)a[(size_t)i * nv + j] - b[j]);
            if (d > worst)
                worst = d;
        }
    }
    cr_assert_lt(worst, 1e-5, "batched vs single logits differ by %g", worst);
    free(a);
    free(b);
    engine_close(e);
}

static void greedy(int threads, int32_t *out, int n) {
    engine *e = open_golden(threads);
    int nv = engine_get_info(e)->n_vocab;
    float *l = malloc((size_t)nv * sizeof(float));
    int32_t prompt[4] = {15496, 11, 995, 0};
    cr_assert_eq(engine_eval(e, prompt, 4, 0, l, false), PACER_OK);
    for (int i = 0; i < n; i++) {
        out[i] = argmax(l, nv);
        cr_assert_eq(engine_eval(e, &out[i], 1, 4 + i, l, false), PACER_OK);
    }
    free(l);
    engine_close(e);
}

Test(engine, greedy_same_for_1_and_2_threads, .timeout = 60) {
    NEED_FILE(GOLDEN_MODEL, "../shared");
    int32_t a[24], b[24];
    greedy(1, a, 24);
    greedy(2, b, 24);
    for (int i = 0; i < 24; i++)
        cr_assert_eq(a[i], b[i], "token %d differs: %d vs %d", i, a[i], b[i]);
}

/* An AMX matmul job's chunks (engine_plan_cuts) cover every row of every matrix for every
 * token of the batch exactly once, rows on `align` and tokens on 16, whatever the batch,
 * the threads and the activations' size; engine_cut_tokens' blocks fit the budget where
 * they can. */
Test(engine, amx_cuts_cover_every_row_and_token_once) {
    static const int shapes[][3] = {{2048, 0, 0}, {8192, 0, 0}, {2048, 512, 512}, {200, 72, 0}, {16, 0, 0}};
    static const int nbs[] = {16, 17, 31, 32, 33, 47, 65, 100, 128, 161, 200, 255, 256};
    static const int nths[] = {2, 3, 16};
    static const size_t pers[] = {2560, 10240, 40960};
    engine_cut *cuts = malloc(ENGINE_CUTS * sizeof *cuts);
    unsigned char *seen = malloc((size_t)(8192 + 1024) * 256);
    cr_assert(cuts && seen);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int n_m = 0, total = 0, base[3];
        for (; n_m < 3 && shapes[s][n_m]; n_m++) {
            base[n_m] = total;
            total += shapes[s][n_m];
        }
        for (size_t a = 0; a < sizeof nbs / sizeof nbs[0]; a++)
            for (size_t b = 0; b < sizeof nths / sizeof nths[0]; b++)
                for (size_t c = 0; c < sizeof pers / sizeof pers[0]; c++) {
                    int nb = nbs[a], nth = nths[b], tb = engine_cut_tokens(pers[c], nb);
                    cr_assert(tb == nb || (tb % 16 == 0 && tb >= ENGINE_CUT_MIN_TOKENS), "tb %d of %d", tb, nb);
                    cr_assert(tb == nb || tb == ENGINE_CUT_MIN_TOKENS || (size_t)tb * pers[c] <= ENGINE_CUT_ACT_BYTES);
                    cr_assert(tb == nb || (size_t)nb * pers[c] > ENGINE_CUT_ACT_BYTES);
                    int n = engine_plan_cuts(cuts, ENGINE_CUTS, shapes[s], n_m, nb, tb, nth, 16, 64);
                    cr_assert_gt(n, 0, "shape %zu nb %d nth %d tb %d: %d chunks", s, nb, nth, tb, n);
                    memset(seen, 0, (size_t)total * (size_t)nb);
                    for (int k = 0; k < n; k++) {
                        engine_cut ck = cuts[k];
                        cr_assert(ck.m >= 0 && ck.m < n_m);
                        cr_assert(ck.r0 % 16 == 0 && ck.r0 < ck.r1 && ck.r1 <= shapes[s][ck.m]);
                        cr_assert(ck.b0 % 16 == 0 && ck.b0 < ck.b1 && ck.b1 <= nb);
                        cr_assert_eq(ck.b0 / tb, (ck.b1 - 1) / tb, "a chunk within one block of tokens");
                        for (int r = ck.r0; r < ck.r1; r++)
                            for (int t = ck.b0; t < ck.b1; t++)
                                seen[(size_t)(base[ck.m] + r) * nb + t]++;
                    }
                    for (size_t i = 0; i < (size_t)total * (size_t)nb; i++)
                        cr_assert_eq(seen[i], 1, "shape %zu nb %d nth %d tb %d: row %zu token %zu taken %d times",
                                     s, nb, nth, tb, i / nb, i % nb, seen[i]);
                }
    }
    free(cuts);
    free(seen);
}

Test(engine, rewind_and_bad_args) {
    NEED_FILE(GOLDEN_MODEL, "../shared");
    engine *e = open_golden(1);
    int32_t t[3] = {1, 2, 3};
    cr_assert_eq(engine_eval(e, t, 3, 1, NULL, false), PACER_ERR_ARG); /* pos past the cache */
    cr_assert_eq(engine_eval(e, t, 3, 0, NULL, false), PACER_OK);
    cr_assert_eq(engine_eval(e, t, 1, 1, NULL, false), PACER_OK);
    cr_assert_eq(engine_n_past(e), 2);
    int32_t bad = 1 << 30;
    cr_assert_eq(engine_eval(e, &bad, 1, 2, NULL, false), PACER_ERR_ARG);
    engine_close(e);
}

Test(engine, open_missing_file) {
    engine *e = (engine *)1;
    char err[256] = "";
    cr_assert_neq(engine_open("no-such-model.gguf", NULL, &e, err, sizeof err), PACER_OK);
    cr_assert_null(e);
    cr_assert_neq(err[0], '\0');
}

/* ---- quantized checkpoints (packed Q8_0 / Q4_0 matrices) ---- */

/* A small synthesized checkpoint of `type` (vocabulary 258: a padded last row group) with
 * n_seq KV slots. Q4_K and Q6_K (rows of 256) are an F16 checkpoint through `pacer model
 * quantize`. `odd` makes an F16/F32 one whose head size (12) is no multiple of 8 and whose
 * feed-forward width (200) is no multiple of 32: the forward's unfused per-row jobs. n_ctx
 * positions (0: 320). heads / kv_heads (0: 4 / 2, odd 10 / 5). */
static engine *open_synth_heads(ggml_type type, bool odd, int heads, int kv_heads, int threads, int n_seq, int n_ctx,
                                char *path, size_t len) {
    heads = heads > 0 ? heads : odd ? 10 : 4;
    kv_heads = kv_heads > 0 ? kv_heads : odd ? 5 : 2;
    snprintf(path, len, "/tmp/pacer-test-engine-%d-%s%s-%d-%d.gguf", (int)getpid(), ggml_type_name(type),
             odd ? "-odd" : "", heads, kv_heads);
    bool kq = type == GGML_TYPE_Q4_K || type == GGML_TYPE_Q6_K;
    synth_params p;
    synth_params_default(&p);
    p.dim = odd ? 120 : kq ? 256 : heads >= 8 ? 64 * heads : 128; /* eight heads: head size 64, the SIMD value sums */
    p.ffn = odd ? 200 : kq ? 512 : 320;
    p.heads = heads;
    p.kv_heads = kv_heads;
    p.layers = 2;
    p.type = kq ? GGML_TYPE_F16 : type;
    p.seed = 11;
    char err[256] = "";
    if (access(path, R_OK) != 0 && !kq)
        cr_assert_eq(synth_write(&p, path, err, sizeof err), PACER_OK, "%s", err);
    if (access(path, R_OK) != 0 && kq) {
        char src[160];
        snprintf(src, sizeof src, "%s.f16", path);
        cr_assert_eq(synth_write(&p, src, err, sizeof err), PACER_OK, "%s", err);
        quantize_job *j = NULL;
        cr_assert_eq(quantize_open(src, type, &j, err, sizeof err), PACER_OK, "%s", err);
        cr_assert_eq(quantize_write(j, path, err, sizeof err), PACER_OK, "%s", err);
        quantize_close(j);
        unlink(src);
    }
    engine_params ep = {.n_threads = threads, .n_ctx = n_ctx > 0 ? n_ctx : 320, .n_seq = n_seq};
    engine *e = NULL;
    cr_assert_eq(engine_open(path, &ep, &e, err, sizeof err), PACER_OK, "engine_open: %s", err);
    return e;
}

static engine *open_synth_shape(ggml_type type, bool odd, int threads, int n_seq, int n_ctx, char *path, size_t len) {
    return open_synth_heads(type, odd, 0, 0, threads, n_seq, n_ctx, path, len);
}

static engine *open_synth(ggml_type type, int threads, int n_seq, char *path, size_t len) {
    return open_synth_shape(type, false, threads, n_seq, 0, path, len);
}

/* Logits of a 300-token prompt evaluated in one call (past a chunk's end, whether chunks are
 * 32 or 256 rows), then token by token: equal bit for bit, as drafting needs; and equal for
 * 1 and 4 threads, batched and token by token (a single row's elementwise work is split over
 * 4 threads). */
static void check_batched_shape(ggml_type type, bool odd) {
    char path[128];
    enum { T = 300 };
    engine *e1 = open_synth_shape(type, odd, 1, 1, 0, path, sizeof path);
    engine *e4 = open_synth_shape(type, odd, 4, 1, 0, path, sizeof path);
    int nv = engine_get_info(e1)->n_vocab;
    int32_t toks[T];
    for (int i = 0; i < T; i++)
        toks[i] = (int32_t)((i * 7919 + 13) % nv);
    float *batched = malloc((size_t)T * nv * sizeof(float)), *one = malloc((size_t)nv * sizeof(float));
    float *four = malloc((size_t)T * nv * sizeof(float));
    cr_assert_eq(engine_eval(e1, toks, T, 0, batched, true), PACER_OK);
    cr_assert_eq(engine_eval(e4, toks, T, 0, four, true), PACER_OK);
    cr_assert(memcmp(batched, four, (size_t)T * nv * sizeof(float)) == 0, "%s: 1 and 4 threads differ",
              ggml_type_name(type));
    for (int i = 0; i < T; i++) {
        cr_assert_eq(engine_eval(e1, toks + i, 1, i, one, false), PACER_OK);
        for (int j = 0; j < nv; j++)
            cr_assert(batched[(size_t)i * nv + j] == one[j], "%s: token %d logit %d: batched %.9g, single %.9g",
                      ggml_type_name(type), i, j, batched[(size_t)i * nv + j], one[j]);
        cr_assert_eq(engine_eval(e4, toks + i, 1, i, four, false), PACER_OK);
        cr_assert(memcmp(one, four, (size_t)nv * sizeof(float)) == 0, "%s: token %d: 1 and 4 threads differ",
                  ggml_type_name(type), i);
    }
    free(batched);
    free(one);
    free(four);
    engine_close(e1);
    engine_close(e4);
    unlink(path);
}

static void check_batched(ggml_type type) { check_batched_shape(type, false); }

Test(engine, q8_0_batched_equals_serial_and_threads, .timeout = 60) { check_batched(GGML_TYPE_Q8_0); }
Test(engine, q4_0_batched_equals_serial_and_threads, .timeout = 60) { check_batched(GGML_TYPE_Q4_0); }
Test(engine, q4_k_batched_equals_serial_and_threads, .timeout = 60) { check_batched(GGML_TYPE_Q4_K); }
Test(engine, q6_k_batched_equals_serial_and_threads, .timeout = 60) { check_batched(GGML_TYPE_Q6_K); }
Test(engine, f16_batched_equals_serial_and_threads, .timeout = 60) { check_batched(GGML_TYPE_F16); }
/* The profile (bench_engine --phases): with it on, a prompt's logits are the same bit for bit;
 * every kind of job is counted, with each thread's time inside a job within the job's wall
 * time, and the phases within the forward passes' time; off, nothing more is counted; on
 * again, it starts from zero. A decode step counts its one-row steps on one thread. */
Test(engine, profile_counts_every_phase_and_changes_nothing, .timeout = 60) {
    char path[128];
    enum { T = 40 };
    engine *e = open_synth(GGML_TYPE_Q8_0, 2, 1, path, sizeof path);
    int nv = engine_get_info(e)->n_vocab;
    engine_profile pr;
    engine_profile_get(e, &pr);
    cr_assert(pr.chunks == 0 && pr.threads == 0 && pr.phase[ENGINE_PHASE_DOWN].jobs == 0, "never enabled: zeros");
    int32_t toks[T];
    for (int i = 0; i < T; i++)
        toks[i] = (int32_t)((i * 7919 + 13) % nv);
    float *plain = malloc((size_t)nv * sizeof(float)), *timed = malloc((size_t)nv * sizeof(float));
    cr_assert_eq(engine_eval(e, toks, T, 0, plain, false), PACER_OK);
    cr_assert_eq(engine_profile_enable(e, true), PACER_OK);
    cr_assert_eq(engine_eval(e, toks, T, 0, timed, false), PACER_OK);
    cr_assert(memcmp(plain, timed, (size_t)nv * sizeof(float)) == 0, "profiled logits differ");
    engine_profile_get(e, &pr);
    cr_assert_eq(pr.threads, 2);
    cr_assert_eq(pr.chunks, 1);
    double phases = 0;
    for (int i = 0; i < ENGINE_PHASES; i++) {
        const engine_phase_time *t = &pr.phase[i];
        const char *name = engine_phase_name((engine_phase)i);
        cr_assert(t->jobs > 0 && t->wall_s > 0, "%s: jobs %ld, wall %g", name, t->jobs, t->wall_s);
        cr_assert(t->busy_s > 0 && t->busy_s <= t->wall_s * pr.threads, "%s: busy %g of wall %g", name, t->busy_s,
                  t->wall_s);
        cr_assert(t->tail_s >= 0 && t->busy_s + t->tail_s <= t->wall_s * pr.threads, "%s: busy %g + end waits %g",
                  name, t->busy_s, t->tail_s);
        phases += t->wall_s;
    }
    cr_assert(phases <= pr.wall_s, "phases %g s within the forward passes' %g s", phases, pr.wall_s);
    /* two layers: per layer one norm job each for attention and feed-forward, Q/K/V with
     * attention, the three other matrices; the output matrix with its norm */
    cr_assert_eq(pr.phase[ENGINE_PHASE_ROWS].jobs, 4);
    cr_assert_eq(pr.phase[ENGINE_PHASE_QKV_ATTENTION].jobs, 2);
    cr_assert_eq(pr.phase[ENGINE_PHASE_GATE_UP].jobs, 2);
    cr_assert_eq(pr.phase[ENGINE_PHASE_OUTPUT].jobs, 2);
    /* a decode step: its one-row steps inline, on one thread */
    cr_assert_eq(engine_profile_enable(e, true), PACER_OK);
    cr_assert_eq(engine_eval(e, toks, 1, T, timed, false), PACER_OK);
    engine_profile_get(e, &pr);
    cr_assert(pr.chunks == 1 && pr.phase[ENGINE_PHASE_ROWS].jobs == 4, "decode: %ld passes, %ld row jobs", pr.chunks,
              pr.phase[ENGINE_PHASE_ROWS].jobs);
    cr_assert(pr.phase[ENGINE_PHASE_ROWS].busy_s <= pr.phase[ENGINE_PHASE_ROWS].wall_s, "inline rows: one thread");
    cr_assert_eq(engine_profile_enable(e, false), PACER_OK);
    cr_assert_eq(engine_eval(e, toks, T, 0, timed, false), PACER_OK);
    engine_profile p2;
    engine_profile_get(e, &p2);
    cr_assert(memcmp(&pr, &p2, sizeof pr) == 0, "counted while off");
    cr_assert_eq(engine_profile_enable(e, true), PACER_OK);
    engine_profile_get(e, &p2);
    cr_assert(p2.chunks == 0 && p2.wall_s == 0 && p2.phase[ENGINE_PHASE_DOWN].jobs == 0, "enabled again: from zero");
    cr_assert_str_eq(engine_phase_name(ENGINE_PHASE_GATE_UP), "gate+up");
    cr_assert_str_eq(engine_phase_name(ENGINE_PHASES), "?");
    free(plain);
    free(timed);
    engine_close(e);
    unlink(path);
}

/* A context of 41 positions, no whole number of key blocks (kernels_f16.h): each head's keys
 * still have their own region. Sequence 0 filled to the end, then sequence 1, then sequence
 * 0's last token again: its logits are those of the same tokens in an engine of its own, so
 * sequence 1 overwrote none of sequence 0's keys (nor a head another head's). */
Test(engine, keys_of_a_context_of_no_whole_blocks_stay_apart, .timeout = 60) {
    enum { T = 41 };
    char path[128];
    engine *two = open_synth_shape(GGML_TYPE_Q8_0, false, 2, 2, T, path, sizeof path);
    engine *one = open_synth_shape(GGML_TYPE_Q8_0, false, 2, 1, T, path, sizeof path);
    int nv = engine_get_info(two)->n_vocab;
    int32_t a[T], b[T];
    for (int i = 0; i < T; i++) {
        a[i] = (int32_t)((i * 7919 + 13) % nv);
        b[i] = (int32_t)((i * 104729 + 7) % nv);
    }
    float *want = malloc((size_t)T * nv * sizeof(float)), *got = malloc((size_t)nv * sizeof(float));
    cr_assert_eq(engine_eval(one, a, T, 0, want, true), PACER_OK);
    cr_assert_eq(engine_eval_seq(two, 0, a, T, 0, NULL, false), PACER_OK);
    cr_assert_eq(engine_eval_seq(two, 1, b, T, 0, NULL, false), PACER_OK);
    cr_assert_eq(engine_eval_seq(two, 0, a + T - 1, 1, T - 1, got, false), PACER_OK);
    cr_assert(memcmp(got, want + (size_t)(T - 1) * nv, (size_t)nv * sizeof(float)) == 0,
              "sequence 0's last logits changed after sequence 1 filled its cache");
    free(want);
    free(got);
    engine_close(one);
    engine_close(two);
    unlink(path);
}

/* Decodes toks[from..to) one at a time (the positions before from already evaluated): each
 * token's logits (into got) equal the batch's (want, a row of the vocabulary a position). */
static void decode_as_batch(engine *e, const int32_t *toks, int from, int to, const float *want, float *got,
                            int threads) {
    int nv = engine_get_info(e)->n_vocab;
    for (int i = from; i < to; i++) {
        cr_assert_eq(engine_eval(e, toks + i, 1, i, got, false), PACER_OK);
        cr_assert(memcmp(got, want + (size_t)i * nv, (size_t)nv * sizeof(float)) == 0,
                  "%d threads, token %d: decoded logits differ from the batch's", threads, i);
    }
}

/* The model of eight query heads on one KV head (n_ctx 0: its default) evaluated on T tokens
 * (toks, filled here) as one batch at one thread: every position's logits, a row of the
 * vocabulary (*nv) each. */
static float *one_kv_head_batch(int n_ctx, int T, int32_t *toks, int *nv, char *path, size_t len) {
    engine *b = open_synth_heads(GGML_TYPE_Q8_0, false, 8, 1, 1, 1, n_ctx, path, len);
    *nv = engine_get_info(b)->n_vocab;
    for (int i = 0; i < T; i++)
        toks[i] = (int32_t)((i * 7919 + 13) % *nv);
    float *want = malloc((size_t)T * *nv * sizeof(float));
    cr_assert_eq(engine_eval(b, toks, T, 0, want, true), PACER_OK);
    engine_close(b);
    return want;
}

/* Eight query heads sharing one KV head: decoding at 1, 4, 6 and 10 threads takes attention
 * units of 8, 4, 2 and 1 heads (forward.c's heads_per_unit); every token's logits equal the
 * batched ones bit for bit at each. */
Test(engine, attention_units_of_any_heads_agree, .timeout = 60) {
    enum { T = 40 };
    char path[128];
    int threads[4] = {1, 4, 6, 10}, nv;
    int32_t toks[T];
    float *want = one_kv_head_batch(0, T, toks, &nv, path, sizeof path), *got = malloc((size_t)nv * sizeof(float));
    for (int k = 0; k < 4; k++) {
        engine *e = open_synth_heads(GGML_TYPE_Q8_0, false, 8, 1, threads[k], 1, 0, path, sizeof path);
        decode_as_batch(e, toks, 0, T, want, got, threads[k]);
        engine_close(e);
    }
    free(want);
    free(got);
    unlink(path);
}

/* Keys past one range (KERN_ATT_RANGE): eight query heads sharing one KV head, decoded at 1,
 * 2, 3 and 6 threads after a batch, so that at 2 threads and more each decoded token's
 * attention splits its keys into ranges across threads (forward.c's attention_split); every
 * decoded token's logits equal those of the whole sequence evaluated as one batch at one
 * thread, bit for bit. */
Test(engine, attention_key_ranges_agree, .timeout = 120) {
    enum { T = 3 * KERN_ATT_RANGE - 40, PRE = 2 * KERN_ATT_RANGE - 30 };
    char path[128];
    int threads[4] = {1, 2, 3, 6}, nv;
    int32_t *toks = malloc(T * sizeof *toks);
    float *want = one_kv_head_batch(T + 8, T, toks, &nv, path, sizeof path), *got = malloc((size_t)nv * sizeof(float));
    for (int k = 0; k < 4; k++) {
        engine *e = open_synth_heads(GGML_TYPE_Q8_0, false, 8, 1, threads[k], 1, T + 8, path, sizeof path);
        cr_assert_eq(engine_eval(e, toks, PRE, 0, got, false), PACER_OK);
        cr_assert(memcmp(got, want + (size_t)(PRE - 1) * nv, (size_t)nv * sizeof(float)) == 0,
                  "%d threads: the batch's last logits differ", threads[k]);
        decode_as_batch(e, toks, PRE, T, want, got, threads[k]);
        engine_close(e);
    }
    free(toks);
    free(want);
    free(got);
    unlink(path);
}

/* Rows of three sequences decoded together (engine_eval_rows) at one, four and six threads,
 * their keys one range, two and three, so that at four and six threads the attention of
 * the rows with several ranges splits them across threads beside a row that does not: each
 * row's logits equal those of its position in one batch, bit for bit. */
Test(engine, attention_key_ranges_of_several_rows_agree, .timeout = 120) {
    enum { T = 2 * KERN_ATT_RANGE + 200, STEPS = 6 };
    static const int pre[3] = {KERN_ATT_RANGE + 100, 100, 2 * KERN_ATT_RANGE + 150}, threads[3] = {1, 4, 6};
    char path[128];
    engine *b = open_synth_heads(GGML_TYPE_Q8_0, false, 8, 1, 1, 1, T + 8, path, sizeof path);
    int nv = engine_get_info(b)->n_vocab;
    int32_t *toks = malloc(T * sizeof *toks);
    for (int i = 0; i < T; i++)
        toks[i] = (int32_t)((i * 104729 + 7) % nv);
    float *want = malloc((size_t)T * nv * sizeof(float)), *got = malloc((size_t)3 * nv * sizeof(float));
    cr_assert_eq(engine_eval(b, toks, T, 0, want, true), PACER_OK);
    engine_close(b);
    for (int k = 0; k < 3; k++) {
        engine *e = open_synth_heads(GGML_TYPE_Q8_0, false, 8, 1, threads[k], 3, T + 8, path, sizeof path);
        for (int q = 0; q < 3; q++)
            cr_assert_eq(engine_eval_seq(e, q, toks, pre[q], 0, NULL, false), PACER_OK);
        for (int step = 0; step < STEPS; step++) {
            int seq[3] = {0, 1, 2}, pos[3];
            int32_t row_toks[3];
            for (int q = 0; q < 3; q++) {
                pos[q] = pre[q] + step;
                row_toks[q] = toks[pos[q]];
            }
            cr_assert_eq(engine_eval_rows(e, row_toks, seq, pos, 3, NULL, got), PACER_OK);
            for (int q = 0; q < 3; q++)
                cr_assert(memcmp(got + (size_t)q * nv, want + (size_t)pos[q] * nv, (size_t)nv * sizeof(float)) == 0,
                          "%d threads, sequence %d at %d: logits differ from the batch's", threads[k], q, pos[q]);
        }
        engine_close(e);
    }
    free(toks);
    free(want);
    free(got);
    unlink(path);
}

/* An F16 model's logits at a level, malloc'd: of a T-token batch (lg) and of the token decoded
 * after it (last). Returns the vocabulary's size. */
static int eval_at(kern_level level, int T, float **lg, float **last, char *path, size_t len) {
    kern_set_level(level);
    engine *e = open_synth(GGML_TYPE_F16, 2, 1, path, len);
    int nv = engine_get_info(e)->n_vocab;
    int32_t toks[64];
    for (int i = 0; i <= T; i++)
        toks[i] = (int32_t)((i * 31 + 5) % nv);
    *lg = malloc((size_t)T * nv * sizeof(float));
    *last = malloc((size_t)nv * sizeof(float));
    cr_assert_eq(engine_eval(e, toks, T, 0, *lg, true), PACER_OK);
    cr_assert_eq(engine_eval(e, toks + T, 1, T, *last, false), PACER_OK);
    engine_close(e);
    return nv;
}

/* F16 matrices are packed (kernels_f16.h): every level makes each product the same way, so an
 * F16 model's matrices give the same bits at the scalar level, at AVX2 and at the best
 * level: here the logits of a 40-token batch and of a decoded token, level against level. */
Test(engine, f16_packed_products_agree_across_levels, .timeout = 120) {
    enum { T = 40 };
    kern_level best = kern_detect();
    char path[128];
    float *lg[2], *last[2];
    int nv = eval_at(best, T, &lg[0], &last[0], path, sizeof path);
    for (int l = KERN_SCALAR; l < (int)best; l++) {
        if (!kern_level_supported((kern_level)l))
            continue;
        eval_at((kern_level)l, T, &lg[1], &last[1], path, sizeof path);
        cr_assert(memcmp(lg[0], lg[1], (size_t)T * nv * sizeof(float)) == 0, "batch: %s and %s differ",
                  kern_level_name((kern_level)l), kern_level_name(best));
        cr_assert(memcmp(last[0], last[1], (size_t)nv * sizeof(float)) == 0, "decode: %s and %s differ",
                  kern_level_name((kern_level)l), kern_level_name(best));
        free(lg[1]);
        free(last[1]);
    }
    free(lg[0]);
    free(last[0]);
    unlink(path);
    kern_set_level(best);
}

Test(engine, odd_shapes_batched_equal_serial_and_threads, .timeout = 60) {
    check_batched_shape(GGML_TYPE_F16, true);
    check_batched_shape(GGML_TYPE_F32, true);
}

/* Continuous batching: three sequences in their own KV slots, stepped together with
 * engine_eval_rows (one row each, then a step where one sequence adds three rows and one
 * rewinds, then one where they add 3, 4 and 5: attention units of four rows then straddle
 * sequences), give every row the logits of the same sequence evaluated alone, bit for bit. */
static void check_rows(ggml_type type) {
    char path[128];
    engine *multi = open_synth(type, 2, 3, path, sizeof path), *alone = open_synth(type, 2, 1, path, sizeof path);
    cr_assert_eq(engine_n_seq(multi), 3);
    int nv = engine_get_info(multi)->n_vocab;
    enum { S = 3, STEPS = 7, MAXR = 16 };
    int32_t hist[S][64];
    int len[S] = {20, 7, 12};
    for (int q = 0; q < S; q++)
        for (int i = 0; i < len[q]; i++)
            hist[q][i] = (int32_t)((i * 7919 + q * 31 + 5) % nv);
    for (int q = 0; q < S; q++)
        cr_assert_eq(engine_eval_seq(multi, q, hist[q], len[q], 0, NULL, false), PACER_OK);
    cr_assert_eq(engine_eval_seq(multi, 3, hist[0], 1, 0, NULL, false), PACER_ERR_ARG);
    float *rows = malloc((size_t)MAXR * nv * sizeof(float)), *one = malloc((size_t)nv * sizeof(float));
    for (int step = 0; step < STEPS; step++) {
        int32_t tok[MAXR];
        int seq[MAXR], pos[MAXR], n = 0;
        for (int q = 0; q < S; q++) {
            int k = step == 3 && q == 1 ? 3 : step == 5 ? 3 + q : 1; /* verify rounds' rows */
            if (step == 4 && q == 2) len[q] -= 2;   /* a rewind: rejected drafts */
            for (int j = 0; j < k; j++) {
                hist[q][len[q]] = (int32_t)((len[q] * 131 + q) % nv);
                tok[n] = hist[q][len[q]];
                seq[n] = q;
                pos[n++] = len[q]++;
            }
        }
        cr_assert_eq(engine_eval_rows(multi, tok, seq, pos, n, NULL, rows), PACER_OK);
        for (int r = 0; r < n; r++) {
            /* the same sequence alone: its history evaluated afresh, the row's position last */
            cr_assert_eq(engine_eval(alone, hist[seq[r]], pos[r] + 1, 0, one, false), PACER_OK);
            cr_assert(memcmp(rows + (size_t)r * nv, one, (size_t)nv * sizeof(float)) == 0,
                      "%s: step %d row %d (sequence %d) differs from the sequence alone", ggml_type_name(type), step, r,
                      seq[r]);
        }
    }
    /* a sequence's rows must be consecutive positions, starting within its cache */
    int32_t t2[2] = {1, 2};
    int s2[2] = {0, 0}, p2[2] = {3, 5}, p3[1] = {60};
    cr_assert_eq(engine_eval_rows(multi, t2, s2, p2, 2, NULL, NULL), PACER_ERR_ARG);
    cr_assert_eq(engine_eval_rows(multi, t2, s2, p3, 1, NULL, NULL), PACER_ERR_ARG);
    free(rows);
    free(one);
    engine_close(multi);
    engine_close(alone);
    unlink(path);
}

Test(engine, q8_0_sequences_batched_equal_alone, .timeout = 60) { check_rows(GGML_TYPE_Q8_0); }
Test(engine, f16_sequences_batched_equal_alone, .timeout = 60) { check_rows(GGML_TYPE_F16); }

/* A prompt fed in chunks beside another sequence's decoding (engine_eval_rows with `want`,
 * as pacer serve prefills): only the decoding rows and the prompt's last row give logits,
 * packed in row order, each equal to its sequence evaluated alone, bit for bit; then both
 * decode together. The decoding row goes first in even passes and last in odd ones, so the
 * wanted rows sit at either end of a pass, and in the pass that ends the prompt, both. */
static void check_prompt_chunks(ggml_type type) {
    char path[128];
    engine *multi = open_synth(type, 2, 2, path, sizeof path), *alone = open_synth(type, 2, 1, path, sizeof path);
    int nv = engine_get_info(multi)->n_vocab;
    enum { H = 9, P = 23, CH = 5, AFTER = 3, MAXR = CH + 2 };
    int32_t hist[2][64];
    int len[2] = {H, 0}, fill = 0, after = 0;
    for (int i = 0; i < H; i++)
        hist[0][i] = (int32_t)((i * 7919 + 5) % nv);
    for (int i = 0; i < P; i++)
        hist[1][i] = (int32_t)((i * 104729 + 11) % nv);
    cr_assert_eq(engine_eval_seq(multi, 0, hist[0], H, 0, NULL, false), PACER_OK);
    float *rows = malloc((size_t)MAXR * nv * sizeof(float)), *one = malloc((size_t)nv * sizeof(float));
    for (int step = 0; after < AFTER; step++) {
        int32_t tok[MAXR];
        int seq[MAXR], pos[MAXR], n = 0, wanted = 0;
        bool want[MAXR];
        for (int part = 0; part < 2; part++) {
            if (part == step % 2) { /* a decoding row of sequence 0 */
                hist[0][len[0]] = (int32_t)((len[0] * 131 + 3) % nv);
                tok[n] = hist[0][len[0]], seq[n] = 0, pos[n] = len[0]++, want[n++] = true;
            } else if (fill < P) { /* the next chunk of sequence 1's prompt */
                for (int j = 0; j < CH && fill < P; j++, fill++)
                    tok[n] = hist[1][fill], seq[n] = 1, pos[n] = fill, want[n++] = fill == P - 1;
                len[1] = fill;
            } else { /* sequence 1 decodes */
                hist[1][len[1]] = (int32_t)((len[1] * 137 + 1) % nv);
                tok[n] = hist[1][len[1]], seq[n] = 1, pos[n] = len[1]++, want[n++] = true;
                after++;
            }
        }
        cr_assert_eq(engine_eval_rows(multi, tok, seq, pos, n, want, rows), PACER_OK);
        for (int r = 0; r < n; r++) {
            if (!want[r])
                continue;
            cr_assert_eq(engine_eval(alone, hist[seq[r]], pos[r] + 1, 0, one, false), PACER_OK);
            cr_assert(memcmp(rows + (size_t)wanted++ * nv, one, (size_t)nv * sizeof(float)) == 0,
                      "%s: step %d row %d (sequence %d at %d) differs from the sequence alone", ggml_type_name(type),
                      step, r, seq[r], pos[r]);
        }
    }
    free(rows);
    free(one);
    engine_close(multi);
    engine_close(alone);
    unlink(path);
}

Test(engine, q8_0_prompt_in_chunks_beside_decoding_equals_alone, .timeout = 60) { check_prompt_chunks(GGML_TYPE_Q8_0); }
Test(engine, f16_prompt_in_chunks_beside_decoding_equals_alone, .timeout = 60) { check_prompt_chunks(GGML_TYPE_F16); }

/* Writes `n` bytes of `data` to path with suffix: the test's variant of a checkpoint. */
static void write_variant(const char *path, const char *suffix, const void *data, size_t n, char *out, size_t len) {
    snprintf(out, len, "%s%s", path, suffix);
    FILE *f = fopen(out, "wb");
    cr_assert(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "cannot write %s", out);
}

/* A checkpoint without output.weight ties the output to the token embedding: an F16 one reads
 * the embedding's mapped rows, a repacked one gets its own copy. Its logits must be those of
 * the same checkpoint whose output.weight holds the embedding's rows. */
static void check_tied(ggml_type type) {
    char path[128], tied[160], same[160], err[256] = "";
    engine_close(open_synth(type, 1, 1, path, sizeof path)); /* writes the checkpoint */
    buf b;
    buf_init(&b, (size_t)1 << 30);
    cr_assert_eq(file_read_all(path, &b), PACER_OK);
    gguf_file *gf = NULL;
    cr_assert_eq(gguf_open(path, &gf, err, sizeof err), PACER_OK, "%s", err);
    const gguf_tensor *emb = gguf_find_tensor(gf, "token_embd.weight"), *out = gguf_find_tensor(gf, "output.weight");
    cr_assert(emb && out && emb->nbytes == out->nbytes && emb->type == out->type);
    size_t data = (size_t)gguf_get_data_offset(gf), eo = data + emb->offset, oo = data + out->offset, nb = emb->nbytes;
    gguf_close(gf);
    unsigned char *p = (unsigned char *)b.data;
    memcpy(p + oo, p + eo, nb); /* untied, the embedding's rows */
    write_variant(path, ".same", p, b.len, same, sizeof same);
    unsigned char name[8 + 13] = {13}; /* the name as the header holds it: u64 length, bytes */
    memcpy(name + 8, "output.weight", 13);
    unsigned char *at = memmem(p, data, name, sizeof name);
    cr_assert(at != NULL);
    at[8 + 5] = 'x'; /* "outpux.weight": unknown to the engine, so the output is tied */
    write_variant(path, ".tied", p, b.len, tied, sizeof tied);
    buf_free(&b);
    engine_params ep = {.n_threads = 2, .n_ctx = 64};
    engine *et = NULL, *es = NULL;
    cr_assert_eq(engine_open(tied, &ep, &et, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(engine_open(same, &ep, &es, err, sizeof err), PACER_OK, "%s", err);
    enum { T = 20 };
    int nv = engine_get_info(et)->n_vocab;
    int32_t toks[T];
    for (int i = 0; i < T; i++)
        toks[i] = (int32_t)((i * 7919 + 13) % nv);
    float *lt = malloc((size_t)T * nv * sizeof(float)), *ls = malloc((size_t)T * nv * sizeof(float));
    cr_assert_eq(engine_eval(et, toks, T, 0, lt, true), PACER_OK);
    cr_assert_eq(engine_eval(es, toks, T, 0, ls, true), PACER_OK);
    cr_assert(memcmp(lt, ls, (size_t)T * nv * sizeof(float)) == 0, "%s: tied and untied logits differ",
              ggml_type_name(type));
    free(lt);
    free(ls);
    engine_close(et);
    engine_close(es);
    unlink(tied);
    unlink(same);
    unlink(path);
}

Test(engine, f16_tied_output_equals_untied, .timeout = 60) { check_tied(GGML_TYPE_F16); }
Test(engine, q8_0_tied_output_equals_untied, .timeout = 60) { check_tied(GGML_TYPE_Q8_0); }
