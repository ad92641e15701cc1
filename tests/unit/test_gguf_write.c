/* test_gguf_write.c - engine/gguf_write: what the writer writes, the reader reads back
 * (every value type, arrays, alignment, chunked tensor data); the bytes are deterministic;
 * misuse is refused. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "need.h"
#include "base/buf.h"
#include "base/sha256.h"
#include "engine/gguf.h"
#include "engine/gguf_write.h"

#define MODEL "../shared/models/rand-gpt2vocab-f16.gguf"

/* Builds a small file into `out`; data is written in chunks of `chunk` bytes. */
static void build(buf *out, size_t chunk, uint32_t alignment) {
    gguf_writer *w = gguf_writer_new();
    cr_assert_not_null(w);
    if (alignment) cr_assert_eq(gguf_writer_set_alignment(w, alignment), PACER_OK);
    cr_assert_eq(gguf_writer_add_str(w, "general.architecture", "llama"), PACER_OK);
    cr_assert_eq(gguf_writer_add_u32(w, "a.u32", 4000000000u), PACER_OK);
    cr_assert_eq(gguf_writer_add_i32(w, "a.i32", -5), PACER_OK);
    cr_assert_eq(gguf_writer_add_u64(w, "a.u64", 1ull << 40), PACER_OK);
    cr_assert_eq(gguf_writer_add_f32(w, "a.f32", 0.25f), PACER_OK);
    cr_assert_eq(gguf_writer_add_bool(w, "a.bool", true), PACER_OK);
    cr_assert_eq(gguf_writer_add_u32(w, "a.u32", 1), PACER_ERR_ARG); /* duplicate */
    const char *strs[] = {"x", "", "hello"};
    cr_assert_eq(gguf_writer_add_arr_str(w, "a.strs", strs, NULL, 3), PACER_OK);
    float fl[3] = {1.5f, -2.0f, 3.0f};
    cr_assert_eq(gguf_writer_add_arr(w, "a.floats", GGUF_TYPE_FLOAT32, fl, 3), PACER_OK);
    cr_assert_eq(gguf_writer_add_arr(w, "a.nested", GGUF_TYPE_ARRAY, fl, 3), PACER_ERR_ARG);
    int64_t ne1[1] = {5};
    int64_t ne2[2] = {32, 3};
    cr_assert_eq(gguf_writer_add_tensor(w, "t.f32", GGML_TYPE_F32, 1, ne1), PACER_OK);
    cr_assert_eq(gguf_writer_add_tensor(w, "t.q8", GGML_TYPE_Q8_0, 2, ne2), PACER_OK);
    cr_assert_eq(gguf_writer_add_tensor(w, "t.q8", GGML_TYPE_Q8_0, 2, ne2), PACER_ERR_ARG);
    int64_t bad[1] = {33};
    cr_assert_eq(gguf_writer_add_tensor(w, "t.bad", GGML_TYPE_Q8_0, 1, bad), PACER_ERR_ARG);
    uint32_t a = alignment ? alignment : 32;
    cr_assert_eq(gguf_writer_data_size(w), ((20 + a - 1) / a) * a + ((102 + a - 1) / a) * a);
    cr_assert_eq(gguf_writer_write_header(w, gguf_sink_buf, out), PACER_OK);
    cr_assert_eq(gguf_writer_add_u32(w, "late", 1), PACER_ERR_STATE);
    cr_assert_eq(gguf_writer_finish(w), PACER_ERR_STATE); /* no data yet */
    uint8_t data[20 + 102];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof data; i += chunk) {
        size_t n = sizeof data - i < chunk ? sizeof data - i : chunk;
        cr_assert_eq(gguf_writer_write_data(w, data + i, n), PACER_OK);
    }
    cr_assert_eq(gguf_writer_write_data(w, data, 1), PACER_ERR_ARG); /* too much */
    cr_assert_eq(gguf_writer_finish(w), PACER_OK);
    gguf_writer_free(w);
}

Test(gguf_write, round_trip) {
    buf b;
    buf_init(&b, 1 << 20);
    build(&b, 7, 64);
    gguf_file *f;
    char err[256];
    cr_assert_eq(gguf_open_memory(b.data, b.len, &f, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(gguf_get_version(f), 3);
    cr_assert_eq(gguf_get_alignment(f), 64);
    cr_assert_eq(gguf_get_data_offset(f) % 64, 0);
    cr_assert_str_eq(gguf_get_str(f, "general.architecture", ""), "llama");
    cr_assert_eq(gguf_get_u32(f, "a.u32", 0), 4000000000u);
    cr_assert_eq(gguf_get_i32(f, "a.i32", 0), -5);
    cr_assert_eq(gguf_get_u32(f, "a.i32", 9), 9); /* negative does not read as unsigned */
    cr_assert_eq(gguf_get_u64(f, "a.u64", 0), 1ull << 40);
    cr_assert_eq(gguf_get_f32(f, "a.f32", 0), 0.25f);
    cr_assert_eq(gguf_get_bool(f, "a.bool", false), true);
    int64_t si = gguf_find_key(f, "a.strs");
    size_t len;
    cr_assert_eq(gguf_get_arr_n(f, si), 3);
    const char *s = gguf_get_arr_str(f, si, 2, &len);
    cr_assert(len == 5 && memcmp(s, "hello", 5) == 0);
    const float *fl = gguf_get_arr_data(f, gguf_find_key(f, "a.floats"));
    cr_assert(fl && fl[1] == -2.0f);
    const gguf_tensor *t = gguf_find_tensor(f, "t.q8");
    cr_assert(t && t->ne[0] == 32 && t->ne[1] == 3 && t->nbytes == 102 && t->offset == 64);
    cr_assert_eq(((const uint8_t *)t->data)[0], (uint8_t)(20 * 7 + 1));
    cr_assert_eq(gguf_get_file_size(f), gguf_get_data_offset(f) + 64 + 128);
    gguf_close(f);
    buf_free(&b);
}

Test(gguf_write, deterministic_bytes) {
    buf a, b, c;
    buf_init(&a, 1 << 20);
    buf_init(&b, 1 << 20);
    buf_init(&c, 1 << 20);
    build(&a, 1, 0);
    build(&b, 1000, 0); /* chunking does not change the bytes */
    build(&c, 5, 128);
    cr_assert_eq(a.len, b.len);
    cr_assert_eq(memcmp(a.data, b.data, a.len), 0);
    cr_assert_neq(a.len, c.len);
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
}

Test(gguf_write, copy_tokenizer_keys) {
    NEED_FILE(MODEL, "the reference model in ../shared");
    gguf_file *src, *f;
    char err[256];
    cr_assert_eq(gguf_open(MODEL, &src, err, sizeof err), PACER_OK, "%s", err);
    gguf_writer *w = gguf_writer_new();
    for (int64_t i = 0; i < gguf_get_n_kv(src); i++) cr_assert_eq(gguf_writer_copy_kv(w, src, i), PACER_OK);
    buf b;
    buf_init(&b, 64 << 20);
    cr_assert_eq(gguf_writer_write_header(w, gguf_sink_buf, &b), PACER_OK);
    cr_assert_eq(gguf_writer_finish(w), PACER_OK);
    gguf_writer_free(w);
    cr_assert_eq(gguf_open_memory(b.data, b.len, &f, err, sizeof err), PACER_OK, "%s", err);
    cr_assert_eq(gguf_get_n_kv(f), gguf_get_n_kv(src));
    for (int64_t i = 0; i < gguf_get_n_kv(src); i++) {
        cr_assert_str_eq(gguf_get_key(f, i), gguf_get_key(src, i));
        cr_assert_eq(gguf_get_kv_type(f, i), gguf_get_kv_type(src, i));
    }
    int64_t ki = gguf_find_key(f, "tokenizer.ggml.merges");
    int64_t kj = gguf_find_key(src, "tokenizer.ggml.merges");
    size_t l1, l2;
    const char *m1 = gguf_get_arr_str(f, ki, 49999, &l1);
    const char *m2 = gguf_get_arr_str(src, kj, 49999, &l2);
    cr_assert(l1 == l2 && memcmp(m1, m2, l1) == 0);
    const int32_t *t1 = gguf_get_arr_data(f, gguf_find_key(f, "tokenizer.ggml.token_type"));
    const int32_t *t2 = gguf_get_arr_data(src, gguf_find_key(src, "tokenizer.ggml.token_type"));
    cr_assert_eq(memcmp(t1, t2, 50257 * 4), 0);
    cr_assert_float_eq(gguf_get_f32(f, "llama.rope.freq_base", 0), 10000.0f, 0);
    gguf_close(f);
    gguf_close(src);
    buf_free(&b);
}
