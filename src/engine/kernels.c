/* kernels.c - dot products per weight type (scalar reference, AVX2/FMA/F16C, AVX-512F),
 * chosen once at run time through __builtin_cpu_supports. Quantized weights multiply
 * Q8_0-quantized activations and F16 weights F16-rounded ones, as ggml does. */
#include "engine/kernels.h"

#include "engine/kernels_f16.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define KERN_X86 1
#endif

static int g_level = -1;
static pthread_once_t g_level_once = PTHREAD_ONCE_INIT;
bool kern_pf_l2;

static bool cpu_is_amd(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_is("amd");
#else
    return false;
#endif
}

static void level_init(void) {
    g_level = kern_detect();
    kern_pf_l2 = cpu_is_amd();
}

#ifdef KERN_X86
/* AMX-TILE and AMX-INT8 (CPUID 7.0 EDX bits 24, 25), and Linux's permission for the tile
 * state (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA; process-wide). */
static bool amx_usable(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 25)))
        return false;
#ifdef SYS_arch_prctl
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#else
    return false;
#endif
}
#endif

kern_level kern_detect(void) {
    for (int l = KERN_AMX; l > KERN_SCALAR; l--)
        if (kern_level_supported((kern_level)l))
            return (kern_level)l;
    return KERN_SCALAR;
}

bool kern_level_supported(kern_level l) {
#ifdef KERN_X86
    __builtin_cpu_init();
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    bool vnni = avx512 && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    switch (l) {
    case KERN_SCALAR: return true;
    case KERN_AVX2: return avx2;
    case KERN_AVXVNNI: return avx2 && __builtin_cpu_supports("avxvnni");
    case KERN_AVX512: return avx512;
    case KERN_VNNI: return vnni;
    case KERN_AMX: return vnni && amx_usable();
    }
    return false;
#else
    return l == KERN_SCALAR;
#endif
}

/* Detected once, by whichever thread asks first (pthread_once: no racing writers). */
kern_level kern_get_level(void) {
    pthread_once(&g_level_once, level_init);
    return (kern_level)g_level;
}

void kern_set_level(kern_level l) {
    pthread_once(&g_level_once, level_init);
    while (l > KERN_SCALAR && !kern_level_supported(l))
        l--;
    g_level = l;
}

kern_prefetch kern_get_prefetch(void) {
    pthread_once(&g_level_once, level_init);
    return kern_pf_l2 ? KERN_PF_L2 : KERN_PF_L1;
}

void kern_set_prefetch(kern_prefetch p) {
    pthread_once(&g_level_once, level_init);
    kern_pf_l2 = p == KERN_PF_L2;
}

int kern_prefetch_by_name(const char *name) {
    return strcmp(name, "l1") == 0 ? KERN_PF_L1 : strcmp(name, "l2") == 0 ? KERN_PF_L2 : -1;
}

const char *kern_level_name(kern_level l) {
    static const char *const names[KERN_LEVELS] = {"scalar", "avx2", "avxvnni", "avx512", "avx512vnni", "amx"};
    return (unsigned)l < KERN_LEVELS ? names[l] : "?";
}

int kern_level_by_name(const char *name) {
    for (int l = 0; l < KERN_LEVELS; l++)
        if (strcmp(name, kern_level_name((kern_level)l)) == 0)
            return l;
    return -1;
}

bool kern_weight_supported(ggml_type t) {
    switch (t) {
    case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16: case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_K: case GGML_TYPE_Q6_K:
        return true;
    default:
        return false;
    }
}

ggml_type kern_act_type(ggml_type t) {
    switch (t) {
    case GGML_TYPE_Q8_0: case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_K: case GGML_TYPE_Q6_K: return GGML_TYPE_Q8_0;
    default: return GGML_TYPE_F32;
    }
}

size_t kern_act_size(ggml_type t, int n) {
    switch (kern_act_type(t)) {
    case GGML_TYPE_Q8_0: return (size_t)(n / 32) * sizeof(kern_q8_block);
    case GGML_TYPE_F16: return (size_t)n * sizeof(ggml_half);
    default: return (size_t)n * sizeof(float);
    }
}

/* ---------------- scalar ---------------- */

static float dot_f32_scalar(const float *a, const float *b, int n) {
    float s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static float dot_bf16_scalar(const ggml_bf16 *w, const float *x, int n) {
    float s = 0;
    for (int i = 0; i < n; i++)
        s += ggml_bf16_to_fp32(w[i]) * x[i];
    return s;
}

/* The packed kernels' arithmetic on one unpacked row: per block the exact integer dot
 * product, then acc = fma(d_w * d_x, s, acc) (kernels_pack.c says why). */
static float dot_q8_0_scalar(const block_q8_0 *w, const kern_q8_block *x, int n) {
    float acc = 0;
    for (int b = 0; b < n / QK8_0; b++) {
        int s = 0;
        for (int j = 0; j < QK8_0; j++)
            s += w[b].qs[j] * x[b].qs[j];
        acc = fmaf(ggml_fp16_to_fp32(w[b].d) * x[b].d, (float)s, acc);
    }
    return acc;
}

static float dot_q4_0_scalar(const block_q4_0 *w, const kern_q8_block *x, int n) {
    float acc = 0;
    for (int b = 0; b < n / QK4_0; b++) {
        int s = 0;
        for (int j = 0; j < QK4_0 / 2; j++)
            s += (w[b].qs[j] & 0x0F) * x[b].qs[j] + (w[b].qs[j] >> 4) * x[b].qs[j + QK4_0 / 2];
        s -= 8 * x[b].sum;
        acc = fmaf(ggml_fp16_to_fp32(w[b].d) * x[b].d, (float)s, acc);
    }
    return acc;
}

/* Q4_K against per-32 Q8 activation blocks, as the packed kernels compute it: per
 * sub-block the exact integer sum s of nibbles times quants, then
 * acc = fma(d_x, fma(d * sc, s, -(dmin * m * sum_x)), acc). */
static float dot_q4_K_scalar(const block_q4_K *w, const kern_q8_block *x, int n) {
    float acc = 0;
    for (int b = 0; b < n / QK_K; b++, w++)
        for (int sb = 0; sb < 8; sb++, x++) {
            uint8_t sc, m;
            ggml_q4_K_scale_min(sb, w->scales, &sc, &m);
            const uint8_t *q = w->qs + 32 * (sb / 2);
            int s = 0;
            for (int l = 0; l < 32; l++)
                s += ((q[l] >> (4 * (sb & 1))) & 0x0F) * x->qs[l];
            float ds = ggml_fp16_to_fp32(w->d) * (float)sc, dm = ggml_fp16_to_fp32(w->dmin) * (float)m;
            acc = fmaf(x->d, fmaf(ds, (float)s, -(dm * (float)x->sum)), acc);
        }
    return acc;
}

/* Q6_K against per-32 Q8 activation blocks, as the packed kernels compute it: per
 * sub-block s = sc_lo * (sum of (q - 32) * x over elements 0..15) + sc_hi * (16..31), exact,
 * then acc = fma(d * d_x, s, acc). */
static float dot_q6_K_scalar(const block_q6_K *w, const kern_q8_block *x, int n) {
    float acc = 0;
    for (int b = 0; b < n / QK_K; b++, w++) {
        float y[QK_K]; /* the quants, not scaled: d = 1, scales 1 */
        block_q6_K u = *w;
        u.d = ggml_fp32_to_fp16(1.0f);
        memset(u.scales, 1, sizeof u.scales);
        dequantize_row_q6_K(&u, y, QK_K);
        for (int sb = 0; sb < 8; sb++, x++) {
            int half[2] = {0, 0};
            for (int l = 0; l < 32; l++)
                half[l / 16] += (int)y[32 * sb + l] * x->qs[l];
            int s = w->scales[2 * sb] * half[0] + w->scales[2 * sb + 1] * half[1];
            acc = fmaf(ggml_fp16_to_fp32(w->d) * x->d, (float)s, acc);
        }
    }
    return acc;
}

/* Q8 activation blocks as ggml's quantize_row_q8_0 computes them, ties rounded to even
 * (as ggml's SIMD quantizers do), the scale kept as the float of its F16. */
static void quantize_q8_scalar(const float *x, kern_q8_block *y, int n) {
    for (int b = 0; b < n / 32; b++, x += 32) {
        float amax = 0;
        for (int j = 0; j < 32; j++)
            amax = fmaxf(amax, fabsf(x[j]));
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0, lo = 0;
        for (int j = 0; j < 32; j++) {
            y[b].qs[j] = (int8_t)nearbyintf(x[j] * id);
            sum += y[b].qs[j];
            lo += j < 16 ? y[b].qs[j] : 0;
        }
        y[b].d = ggml_fp16_to_fp32(ggml_fp32_to_fp16(d));
        y[b].sum = (int16_t)sum;
        y[b].sum_lo = (int16_t)lo;
    }
}

/* ---------------- AVX2 / FMA / F16C ---------------- */
#ifdef KERN_X86
#define T_AVX2 __attribute__((target("avx2,fma,f16c")))
#define T_AVX512 __attribute__((target("avx512f,avx512bw,avx2,fma,f16c")))

T_AVX2 static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

T_AVX2 static float dot_f32_avx2(const float *a, const float *b, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

T_AVX2 static inline __m256 bf16_load8(const ggml_bf16 *p) {
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

T_AVX2 static float dot_bf16_avx2(const ggml_bf16 *w, const float *x, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(bf16_load8(w + i), _mm256_loadu_ps(x + i), s0);
        s1 = _mm256_fmadd_ps(bf16_load8(w + i + 8), _mm256_loadu_ps(x + i + 8), s1);
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++)
        s += ggml_bf16_to_fp32(w[i]) * x[i];
    return s;
}

T_AVX512 static float dot_f32_avx512(const float *a, const float *b, int n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}



/* F32 -> F16 with F16C, 8 at a time (round to nearest even, as ggml_fp32_to_fp16); a run
 * of 8 holding a NaN is left to the scalar conversion (NaN payloads would differ). Returns
 * the elements done. */
T_AVX2 static int f32_to_f16_avx2(const float *x, ggml_half *y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            for (int k = 0; k < 8; k++)
                y[i + k] = ggml_fp32_to_fp16(x[i + k]);
        else
            _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    return i;
}

/* x rounded through F16 and back to F32, 8 at a time (f32_to_f16_avx2's rounding; the
 * widening is exact); NaN runs are left to the scalar path. Returns the elements done. */
T_AVX2 static int f16_round_avx2(const float *x, float *o, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            break;
        _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
    }
    return i;
}

/* quantize_q8_scalar's results, 8 lanes at a time: the same amax, d, 1/d and x * (1/d),
 * rounded half to even. */
T_AVX2 static void quantize_q8_avx2(const float *x, kern_q8_block *y, int n) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int b = 0; b < n / 32; b++, x += 32) {
        __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8), v2 = _mm256_loadu_ps(x + 16),
               v3 = _mm256_loadu_ps(x + 24);
        __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                                 _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        float amax = _mm_cvtss_f32(h);
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        __m256 mul = _mm256_set1_ps(id);
#define Q8R(v) _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v, mul), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
        __m256i i0 = Q8R(v0), i1 = Q8R(v1), i2 = Q8R(v2), i3 = Q8R(v3);
#undef Q8R
        __m256i lo = _mm256_add_epi32(i0, i1), hi = _mm256_add_epi32(i2, i3);
        __m128i s4 = _mm_hadd_epi32(_mm_add_epi32(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1)),
                                    _mm_add_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)));
        s4 = _mm_hadd_epi32(s4, s4); /* the sums of elements 0..15 and 16..31 */
        /* int32 -> int16 -> int8 packs work within 128-bit lanes: put the lanes back in order */
        __m256i p16 = _mm256_packs_epi32(i0, i1), p16b = _mm256_packs_epi32(i2, i3);
        __m256i p8 = _mm256_packs_epi16(p16, p16b);
        p8 = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)y[b].qs, p8);
        y[b].d = _cvtsh_ss(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
        y[b].sum_lo = (int16_t)_mm_cvtsi128_si32(s4);
        y[b].sum = (int16_t)(y[b].sum_lo + _mm_extract_epi32(s4, 1));
    }
}
#endif

/* ---------------- dispatch ---------------- */

float kern_dot_f32(const float *a, const float *b, int n) {
#ifdef KERN_X86
    kern_level l = kern_get_level();
    if (l >= KERN_AVX512)
        return dot_f32_avx512(a, b, n);
    if (l >= KERN_AVX2)
        return dot_f32_avx2(a, b, n);
#endif
    return dot_f32_scalar(a, b, n);
}

void kern_axpy_f32(float *y, float a, const float *x, int n) {
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
}


void kern_f32_to_f16(const float *x, ggml_half *y, int n) {
    int i = 0;
#ifdef KERN_X86
    if (kern_get_level() >= KERN_AVX2)
        i = f32_to_f16_avx2(x, y, n);
#endif
    for (; i < n; i++)
        y[i] = ggml_fp32_to_fp16(x[i]);
}

void kern_round_f16(const float *x, float *out, int n) {
    ggml_half h[64];
    int done = 0;
#ifdef KERN_X86
    if (kern_get_level() >= KERN_AVX2)
        done = f16_round_avx2(x, out, n);
#endif
    for (int i0 = done; i0 < n; i0 += 64) {
        int m = n - i0 < 64 ? n - i0 : 64;
        kern_f32_to_f16(x + i0, h, m);
        for (int i = 0; i < m; i++)
            out[i0 + i] = ggml_fp16_to_fp32(h[i]);
    }
}

void kern_act_prepare(ggml_type t, const float *x, void *out, int n) {
    float *o = out;
    switch (t) {
    case GGML_TYPE_F16: /* rounded through F16, as ggml rounds them */
        kern_round_f16(x, out, n);
        break;
    case GGML_TYPE_BF16:
        for (int i = 0; i < n; i++)
            o[i] = ggml_bf16_to_fp32(ggml_fp32_to_bf16(x[i]));
        break;
    case GGML_TYPE_Q8_0: case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_K: case GGML_TYPE_Q6_K:
#ifdef KERN_X86
        if (kern_get_level() >= KERN_AVX2) {
            quantize_q8_avx2(x, out, n);
            break;
        }
#endif
        quantize_q8_scalar(x, out, n);
        break;
    default: memcpy(out, x, (size_t)n * sizeof(float)); break;
    }
}

void kern_act_dequantize(ggml_type t, const void *a, float *x, int n) {
    switch (kern_act_type(t)) {
    case GGML_TYPE_Q8_0: {
        const kern_q8_block *q = a;
        for (int i = 0; i < n; i++)
            x[i] = q[i / 32].d * q[i / 32].qs[i % 32];
        break;
    }
    default: memcpy(x, a, (size_t)n * sizeof(float)); break;
    }
}

float kern_dot(ggml_type t, const void *w, const void *a, int n, float *scratch) {
    kern_level l = kern_get_level();
    (void)l;
    switch (t) {
    case GGML_TYPE_F32:
        return kern_dot_f32(w, a, n);
    case GGML_TYPE_F16:
        return kern_dot_f16(w, a, n);
    case GGML_TYPE_BF16:
#ifdef KERN_X86
        if (l >= KERN_AVX2)
            return dot_bf16_avx2(w, a, n);
#endif
        return dot_bf16_scalar(w, a, n);
    case GGML_TYPE_Q8_0: /* the engine multiplies these packed; this is the reference */
        return dot_q8_0_scalar(w, a, n);
    case GGML_TYPE_Q4_0:
        return dot_q4_0_scalar(w, a, n);
    case GGML_TYPE_Q4_K:
        return dot_q4_K_scalar(w, a, n);
    case GGML_TYPE_Q6_K:
        return dot_q6_K_scalar(w, a, n);
    default:
        if (!ggml_dequantize_row(t, w, scratch, n))
            return NAN;
        return kern_dot_f32(scratch, a, n);
    }
}

void kern_matmul(ggml_type t, const void *W, size_t row_bytes, int n, int r0, int r1,
                 const void *act, size_t act_bytes, int nb, float *out, int ldo, float *scratch) {
    if (t == GGML_TYPE_F16) {
        kern_matmul_f16(W, row_bytes, n, r0, r1, act, act_bytes, nb, out, ldo);
        return;
    }
    const unsigned char *wb = W;
    const unsigned char *ab = act;
    bool deq = kern_act_type(t) == GGML_TYPE_F32 && !(t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16);
    for (int r = r0; r < r1; r++) {
        const void *row = wb + (size_t)r * row_bytes;
        if (deq) {
            ggml_dequantize_row(t, row, scratch, n);
            for (int b = 0; b < nb; b++)
                out[(size_t)b * ldo + r] = kern_dot_f32(scratch, (const float *)(ab + (size_t)b * act_bytes), n);
            continue;
        }
        for (int b = 0; b < nb; b++)
            out[(size_t)b * ldo + r] = kern_dot(t, row, ab + (size_t)b * act_bytes, n, scratch);
    }
}
