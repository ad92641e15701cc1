/* test_gguf.c - engine/ggml_type and engine/gguf: half-precision conversions, reference
 * (de)quantizers, the reference checkpoint's metadata and shapes, and corrupt files built
 * in memory (truncated everywhere, bad offsets, unknown types, huge counts) that must fail
 * cleanly with a message. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "need.h"
#include "engine/ggml_type.h"
#include "engine/gguf.h"

#define MODEL "../shared/models/rand-gpt2vocab-f16.gguf"

/* ---- a tiny GGUF assembled byte by byte, independent of the writer ---- */
typedef struct bytes {
    uint8_t d[4096];
    size_t n;
} bytes;

static void put(bytes *b, const void *p, size_t n) {
    cr_assert(b->n + n <= sizeof b->d);
    memcpy(b->d + b->n, p, n);
    b->n += n;
}
static void put_u32(bytes *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(bytes *b, uint64_t v) { put(b, &v, 8); }
static void put_str(bytes *b, const char *s) {
    put_u64(b, strlen(s));
    put(b, s, strlen(s));
}

/* Offsets of interesting fields of the tiny file, recorded while building it. */
typedef struct tiny_layout {
    size_t n_tensors_at, n_kv_at, arr_n_at, t1_type_at, t1_offset_at, t1_ne0_at, data_at;
} tiny_layout;

static void tiny_build(bytes *b, tiny_layout *lo) {
    memset(b, 0, sizeof *b);
    put(b, "GGUF", 4);
    put_u32(b, 3);
    lo->n_tensors_at = b->n;
    put_u64(b, 2);
    lo->n_kv_at = b->n;
    put_u64(b, 5);
    put_str(b, "general.architecture");
    put_u32(b, GGUF_TYPE_STRING);
    put_str(b, "llama");
    put_str(b, "llama.block_count");
    put_u32(b, GGUF_TYPE_UINT32);
    put_u32(b, 7);
    put_str(b, "general.alignment");
    put_u32(b, GGUF_TYPE_UINT32);
    put_u32(b, 64);
    put_str(b, "tokenizer.ggml.tokens");
    put_u32(b, GGUF_TYPE_ARRAY);
    put_u32(b, GGUF_TYPE_STRING);
    lo->arr_n_at = b->n;
    put_u64(b, 3);
    put_str(b, "a");
    put_str(b, "bc");
    put_str(b, "");
    put_str(b, "tokenizer.ggml.token_type");
    put_u32(b, GGUF_TYPE_ARRAY);
    put_u32(b, GGUF_TYPE_INT32);
    put_u64(b, 3);
    put_u32(b, 1);
    put_u32(b, 3);
    put_u32(b, (uint32_t)-1);
    /* tensor 0: f32 [4] at 0; tensor 1: q8_0 [32 x 2] at 64 */
    put_str(b, "norm.weight");
    put_u32(b, 1);
    put_u64(b, 4);
    put_u32(b, GGML_TYPE_F32);
    put_u64(b, 0);
    put_str(b, "blk.0.w");
    put_u32(b, 2);
    lo->t1_ne0_at = b->n;
    put_u64(b, 32);
    put_u64(b, 2);
    lo->t1_type_at = b->n;
    put_u32(b, GGML_TYPE_Q8_0);
    lo->t1_offset_at = b->n;
    put_u64(b, 64);
    while (b->n % 64) b->d[b->n++] = 0;
    lo->data_at = b->n;
    float norm[4] = {1, 2, 3, 4};
    put(b, norm, sizeof norm);
    b->n = lo->data_at + 64;
    float w[64];
    for (int i = 0; i < 64; i++) w[i] = (float)(i - 32) / 8.0f;
    block_q8_0 q[2];
    quantize_row_q8_0(w, q, 64);
    put(b, q, sizeof q);
}

static pacer_err open_bytes(const bytes *b, size_t n, char *err) {
    gguf_file *f = NULL;
    pacer_err rc = gguf_open_memory(b->d, n, &f, err, 256);
    if (rc == PACER_OK) {
        cr_assert_not_null(f);
        gguf_close(f);
    } else {
        cr_assert_null(f);
    }
    return rc;
}

Test(ggml_type, table_numbers_and_sizes) {
    cr_assert_eq(GGML_TYPE_Q8_0, 8);
    cr_assert_eq(GGML_TYPE_Q4_K, 12);
    cr_assert_eq(GGML_TYPE_BF16, 30);
    cr_assert_eq(ggml_type_get_info(GGML_TYPE_Q4_0)->type_size, 18);
    cr_assert_eq(ggml_type_get_info(GGML_TYPE_Q6_K)->block_size, 256);
    cr_assert_null(ggml_type_get_info(4));
    cr_assert_null(ggml_type_get_info(31));
    cr_assert_null(ggml_type_get_info(1000));
    cr_assert_str_eq(ggml_type_name(1000), "unknown");
    ggml_type t;
    cr_assert(ggml_type_from_name("Q4_K", &t) && t == GGML_TYPE_Q4_K);
    cr_assert(!ggml_type_from_name("q9_9", &t));
    uint64_t n;
    cr_assert(ggml_type_row_size(GGML_TYPE_Q8_0, 64, &n) && n == 68);
    cr_assert(!ggml_type_row_size(GGML_TYPE_Q8_0, 33, &n));
    cr_assert(!ggml_type_row_size(GGML_TYPE_F32, INT64_MAX, &n));
}

Test(ggml_type, half_conversions) {
    /* every binary16 value survives a round trip through float */
    for (uint32_t h = 0; h < 65536; h++) {
        float f = ggml_fp16_to_fp32((ggml_half)h);
        if (isnan(f)) {
            cr_assert(isnan(ggml_fp16_to_fp32(ggml_fp32_to_fp16(f))));
            continue;
        }
        cr_assert_eq(ggml_fp32_to_fp16(f), h, "h=%04x", h);
    }
    cr_assert_eq(ggml_fp16_to_fp32(0x3c00), 1.0f);
    cr_assert_eq(ggml_fp16_to_fp32(0x0001), ldexpf(1.0f, -24));
    cr_assert_eq(ggml_fp32_to_fp16(65520.0f), 0x7c00); /* rounds to inf */
    cr_assert_eq(ggml_fp32_to_fp16(65519.0f), 0x7bff);
    cr_assert_eq(ggml_fp32_to_fp16(1.0f + ldexpf(1.0f, -11)), 0x3c00);  /* tie to even */
    cr_assert_eq(ggml_fp32_to_fp16(1.0f + 3 * ldexpf(1.0f, -11)), 0x3c02);
    cr_assert_eq(ggml_fp32_to_fp16(ldexpf(1.0f, -25)), 0x0000); /* tie to even (zero) */
    cr_assert_eq(ggml_fp32_to_fp16(ldexpf(1.5f, -25)), 0x0001);
    cr_assert_eq(ggml_fp32_to_fp16(-2.0f), 0xc000);
    cr_assert_eq(ggml_bf16_to_fp32(0x3f80), 1.0f);
    cr_assert_eq(ggml_fp32_to_bf16(1.0f + ldexpf(1.0f, -8)), 0x3f80); /* tie to even */
    cr_assert_eq(ggml_fp32_to_bf16(1.0f + 3 * ldexpf(1.0f, -8)), 0x3f82);
    cr_assert(isnan(ggml_bf16_to_fp32(ggml_fp32_to_bf16(NAN))));
}

Test(ggml_type, q8_0_and_q4_0_round_trip) {
    float x[64], y[64];
    for (int i = 0; i < 64; i++) x[i] = sinf((float)i * 0.7f) * (i < 32 ? 1.0f : 0.01f);
    block_q8_0 q8[2];
    quantize_row_q8_0(x, q8, 64);
    cr_assert_eq(q8[0].qs[0], 0);
    dequantize_row_q8_0(q8, y, 64);
    for (int i = 0; i < 64; i++) cr_assert_float_eq(y[i], x[i], (i < 32 ? 1.0f : 0.01f) / 127.0f, "i=%d", i);
    block_q4_0 q4[2];
    quantize_row_q4_0(x, q4, 64);
    dequantize_row_q4_0(q4, y, 64);
    for (int i = 0; i < 64; i++) cr_assert_float_eq(y[i], x[i], (i < 32 ? 1.0f : 0.01f) / 7.0f, "i=%d", i);
    /* layout: low nibble of qs[j] is element j, high nibble element j+16 */
    block_q4_0 b = {ggml_fp32_to_fp16(1.0f), {0}};
    b.qs[0] = 0x9f; /* element 0 = 15-8 = 7, element 16 = 9-8 = 1 */
    dequantize_row_q4_0(&b, y, 32);
    cr_assert_eq(y[0], 7.0f);
    cr_assert_eq(y[16], 1.0f);
    cr_assert_eq(y[1], -8.0f);
    /* zeros quantize to a zero scale */
    float z[32] = {0};
    quantize_row_q8_0(z, q8, 32);
    dequantize_row_q8_0(q8, y, 32);
    cr_assert_eq(y[5], 0.0f);
}

Test(ggml_type, k_quants_by_hand) {
    /* Q4_K: sub-block 0 scale 2, min 1; sub-block 4 (j >= 4 packing) scale 3 | 1<<4 = 19, min 5 */
    block_q4_K k;
    memset(&k, 0, sizeof k);
    k.d = ggml_fp32_to_fp16(1.0f);
    k.dmin = ggml_fp32_to_fp16(0.5f);
    k.scales[0] = 2;
    k.scales[4] = 1;
    k.scales[8] = 0x53;          /* scale 4 low bits 3, min 4 low bits 5 */
    k.scales[0] |= 1 << 6;       /* scale 4 high bits 1 -> 3 + 16 */
    k.qs[0] = 0x73;              /* element 0 = 3, element 32 = 7 */
    k.qs[64] = 0x02;             /* element 128 (sub-block 4) = 2 */
    float y[256];
    dequantize_row_q4_K(&k, y, 256);
    cr_assert_float_eq(y[0], 2.0f * 3 - 0.5f * 1, 1e-6);
    cr_assert_float_eq(y[32], 0.0f * 7 - 0.0f, 1e-6); /* sub-block 1: scale q[1]=0, min q[5]=0 */
    cr_assert_float_eq(y[128], 19.0f * 2 - 0.5f * 5, 1e-6);
    /* Q6_K: element 0 = ql low | qh bits 0-1, element 32 = ql[32] low | qh bits 2-3 */
    block_q6_K s;
    memset(&s, 0, sizeof s);
    s.d = ggml_fp32_to_fp16(0.5f);
    for (int i = 0; i < 16; i++) s.scales[i] = (int8_t)(i + 1);
    s.ql[0] = 0x05;      /* element 0 low = 5, element 64 low = 0 */
    s.qh[0] = 0x09;      /* element 0 high = 1 -> 21; element 32 high = 2 */
    s.ql[32] = 0x01;     /* element 32 low 1 -> 33 */
    dequantize_row_q6_K(&s, y, 256);
    cr_assert_float_eq(y[0], 0.5f * 1 * (21 - 32), 1e-6);
    cr_assert_float_eq(y[32], 0.5f * 3 * (33 - 32), 1e-6);
    cr_assert_float_eq(y[64], 0.5f * 5 * (0 - 32), 1e-6);
    cr_assert(ggml_dequantize_row(GGML_TYPE_Q6_K, &s, y, 256));
    cr_assert(!ggml_dequantize_row(GGML_TYPE_IQ2_XS, &s, y, 256));
}

Test(gguf, tiny_file_parses) {
    bytes b;
    tiny_layout lo;
    tiny_build(&b, &lo);
    gguf_file *f;
    char err[256];
    cr_assert_eq(gguf_open_memory(b.d, b.n, &f, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(gguf_get_version(f), 3);
    cr_assert_eq(gguf_get_alignment(f), 64);
    cr_assert_eq(gguf_get_data_offset(f), lo.data_at);
    cr_assert_str_eq(gguf_get_str(f, "general.architecture", "?"), "llama");
    cr_assert_eq(gguf_get_u32(f, "llama.block_count", 0), 7);
    cr_assert_eq(gguf_get_i32(f, "llama.block_count", 0), 7);
    cr_assert_eq(gguf_get_u32(f, "missing", 42), 42);
    cr_assert_str_eq(gguf_get_str(f, "llama.block_count", "def"), "def");
    int64_t ti = gguf_find_key(f, "tokenizer.ggml.tokens");
    cr_assert_eq(gguf_get_arr_type(f, ti), GGUF_TYPE_STRING);
    cr_assert_eq(gguf_get_arr_n(f, ti), 3);
    size_t len;
    const char *s = gguf_get_arr_str(f, ti, 1, &len);
    cr_assert(len == 2 && memcmp(s, "bc", 2) == 0);
    cr_assert_eq(gguf_get_arr_str(f, ti, 2, &len) != NULL && len == 0, 1);
    cr_assert_null(gguf_get_arr_str(f, ti, 3, &len));
    int64_t tt = gguf_find_key(f, "tokenizer.ggml.token_type");
    const int32_t *types = gguf_get_arr_data(f, tt);
    cr_assert(types && types[0] == 1 && types[1] == 3 && types[2] == -1);
    cr_assert_eq(gguf_get_n_tensors(f), 2);
    const gguf_tensor *t = gguf_find_tensor(f, "blk.0.w");
    cr_assert_not_null(t);
    cr_assert(t->type == GGML_TYPE_Q8_0 && t->n_dims == 2 && t->ne[0] == 32 && t->ne[1] == 2 && t->ne[2] == 1);
    cr_assert_eq(t->nbytes, 68);
    cr_assert_eq((const uint8_t *)t->data - b.d, (ptrdiff_t)(lo.data_at + 64));
    float y[64];
    dequantize_row_q8_0(t->data, y, 64);
    cr_assert_float_eq(y[40], 1.0f, 0.02);
    const float *norm = gguf_find_tensor(f, "norm.weight")->data;
    cr_assert_eq(norm[3], 4.0f);
    cr_assert_null(gguf_find_tensor(f, "nope"));
    gguf_close(f);
}

Test(gguf, truncated_everywhere) {
    bytes b;
    tiny_layout lo;
    tiny_build(&b, &lo);
    char err[256];
    for (size_t n = 0; n < b.n; n++) {
        err[0] = '\0';
        pacer_err rc = open_bytes(&b, n, err);
        cr_assert_neq(rc, PACER_OK, "truncated at %zu parsed", n);
        cr_assert_neq(err[0], '\0', "no message at %zu", n);
        cr_assert_null(strchr(err, '\n'));
    }
    cr_assert_eq(open_bytes(&b, b.n, err), PACER_OK);
}

Test(gguf, corrupt_fields) {
    bytes b;
    tiny_layout lo;
    char err[256];
    tiny_build(&b, &lo);
    uint64_t off = 1u << 20;
    memcpy(b.d + lo.t1_offset_at, &off, 8);
    cr_assert_eq(open_bytes(&b, b.n, err), PACER_ERR_FORMAT);
    cr_assert(strstr(err, "blk.0.w"), "%s", err);

    tiny_build(&b, &lo);
    off = 32; /* not a multiple of general.alignment = 64 */
    memcpy(b.d + lo.t1_offset_at, &off, 8);
    cr_assert_eq(open_bytes(&b, b.n, err), PACER_ERR_FORMAT);
    cr_assert(strstr(err, "alignment"), "%s", err);

    tiny_build(&b, &lo);
    off = UINT64_MAX - 8; /* offset + size overflows */
    memcpy(b.d + lo.t1_offset_at, &off, 8);
    cr_assert_neq(open_bytes(&b, b.n, err), PACER_OK);

    tiny_build(&b, &lo);
    uint32_t type = 77;
    memcpy(b.d + lo.t1_type_at, &type, 4);
    cr_assert_eq(open_bytes(&b, b.n, err), PACER_ERR_UNSUPPORTED);
    cr_assert(strstr(err, "unknown tensor type 77"), "%s", err);

    tiny_build(&b, &lo);
    uint64_t ne0 = 33; /* not a whole number of q8_0 blocks */
    memcpy(b.d + lo.t1_ne0_at, &ne0, 8);
    cr_assert_eq(open_bytes(&b, b.n, err), PACER_ERR_FORMAT);

    uint64_t huge[] = {UINT64_MAX, 1ull << 40, 1ull << 62, 1000};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        tiny_build(&b, &lo);
        memcpy(b.d + lo.n_tensors_at, &huge[i], 8);
        cr_assert_neq(open_bytes(&b, b.n, err), PACER_OK);
        tiny_build(&b, &lo);
        memcpy(b.d + lo.n_kv_at, &huge[i], 8);
        cr_assert_neq(open_bytes(&b, b.n, err), PACER_OK);
        tiny_build(&b, &lo);
        memcpy(b.d + lo.arr_n_at, &huge[i], 8);
        cr_assert_neq(open_bytes(&b, b.n, err), PACER_OK);
    }

    tiny_build(&b, &lo);
    b.d[0] = 'X';
    cr_assert_eq(open_bytes(&b, b.n, err), PACER_ERR_FORMAT);
    tiny_build(&b, &lo);
    b.d[4] = 2; /* version 2 has the same layout */
    cr_assert_eq(open_bytes(&b, b.n, err), PACER_OK, "%s", err);
    tiny_build(&b, &lo);
    b.d[4] = 1; /* version 1 */
    cr_assert_eq(open_bytes(&b, b.n, err), PACER_ERR_UNSUPPORTED);
}

Test(gguf, random_byte_damage_is_refused_or_stays_inside_the_file) {
    bytes b;
    tiny_layout lo;
    char err[256];
    uint32_t seed = 12345;
    for (int round = 0; round < 4000; round++) {
        tiny_build(&b, &lo);
        for (int k = 0; k < 3; k++) {
            seed = seed * 1664525u + 1013904223u;
            size_t at = (seed >> 8) % lo.data_at;
            seed = seed * 1664525u + 1013904223u;
            b.d[at] = (uint8_t)(seed >> 24);
        }
        gguf_file *f = NULL;
        err[0] = '\0';
        pacer_err rc = gguf_open_memory(b.d, b.n, &f, err, sizeof err);
        if (rc != PACER_OK) {
            cr_assert_null(f, "round %d: a refused file returns no handle", round);
            cr_assert_neq(err[0], '\0', "round %d: refused without a message", round);
            continue;
        }
        /* a file that opens: every tensor lies inside it, after the data section's start,
         * and its byte count is what its type and shape make it */
        const uint8_t *base = gguf_get_base(f), *end = base + gguf_get_file_size(f);
        const uint8_t *data0 = base + gguf_get_data_offset(f);
        cr_assert_eq(gguf_get_file_size(f), b.n, "round %d", round);
        for (int64_t i = 0; i < gguf_get_n_tensors(f); i++) {
            const gguf_tensor *t = gguf_get_tensor(f, i);
            const uint8_t *d = t->data;
            uint64_t want = 0;
            cr_assert(t->n_dims >= 1 && t->n_dims <= GGUF_MAX_DIMS, "round %d tensor %lld", round, (long long)i);
            cr_assert(ggml_type_row_size(t->type, t->ne[0], &want), "round %d tensor %lld", round, (long long)i);
            want *= (uint64_t)(t->n_elements / t->ne[0]);
            cr_assert_eq(t->nbytes, want, "round %d tensor %lld: %llu bytes for its shape", round, (long long)i,
                         (unsigned long long)t->nbytes);
            cr_assert(d >= data0 && d <= end && t->nbytes <= (uint64_t)(end - d),
                      "round %d tensor %lld lies outside the file", round, (long long)i);
            cr_assert_eq(d, data0 + t->offset, "round %d tensor %lld", round, (long long)i);
        }
        gguf_close(f);
    }
}

Test(gguf, reference_checkpoint) {
    NEED_FILE(MODEL, "the reference model in ../shared");
    gguf_file *f;
    char err[256];
    cr_assert_eq(gguf_open(MODEL, &f, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(gguf_get_version(f), 3);
    cr_assert_str_eq(gguf_get_str(f, "general.architecture", ""), "llama");
    cr_assert_str_eq(gguf_get_str(f, "tokenizer.ggml.model", ""), "gpt2");
    cr_assert_eq(gguf_get_u32(f, "llama.embedding_length", 0), 64);
    cr_assert_eq(gguf_get_u32(f, "llama.block_count", 0), 2);
    cr_assert_eq(gguf_get_u32(f, "llama.attention.head_count", 0), 4);
    cr_assert_eq(gguf_get_u32(f, "llama.feed_forward_length", 0), 256);
    cr_assert_eq(gguf_get_u32(f, "llama.rope.dimension_count", 0), 16);
    cr_assert_float_eq(gguf_get_f32(f, "llama.attention.layer_norm_rms_epsilon", 0), 1e-5f, 1e-9);
    int64_t tok = gguf_find_key(f, "tokenizer.ggml.tokens");
    cr_assert_eq(gguf_get_arr_n(f, tok), 50257);
    size_t len;
    const char *s = gguf_get_arr_str(f, tok, 50256, &len);
    cr_assert(len == 13 && memcmp(s, "<|endoftext|>", 13) == 0);
    cr_assert_eq(gguf_get_n_tensors(f), 3 + 2 * 9);
    const gguf_tensor *t = gguf_find_tensor(f, "token_embd.weight");
    cr_assert(t && t->type == GGML_TYPE_F16 && t->ne[0] == 64 && t->ne[1] == 50257);
    t = gguf_find_tensor(f, "blk.1.ffn_down.weight");
    cr_assert(t && t->ne[0] == 256 && t->ne[1] == 64 && t->nbytes == 256 * 64 * 2);
    t = gguf_find_tensor(f, "output_norm.weight");
    cr_assert(t && t->type == GGML_TYPE_F32 && t->n_dims == 1);
    cr_assert_eq(((uintptr_t)t->data) % 32, 0);
    const gguf_tensor *last = gguf_get_tensor(f, gguf_get_n_tensors(f) - 1);
    cr_assert_eq(gguf_get_data_offset(f) + last->offset + last->nbytes, gguf_get_file_size(f));
    gguf_close(f);
}

Test(gguf, missing_file) {
    gguf_file *f = (gguf_file *)1;
    char err[256];
    cr_assert_eq(gguf_open("no/such/file.gguf", &f, err, sizeof err), PACER_ERR_NOT_FOUND);
    cr_assert_null(f);
    cr_assert_neq(err[0], '\0');
}
