/* test_base.c - base/: errors, buffers with caps, SHA-256, clock, atomic writes,
 * canonical JSON (its bytes are pinned). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/parse.h"
#include "base/sha256.h"

Test(error, every_code_has_words) {
    for (int e = 0; e < PACER_ERR__COUNT; e++) {
        cr_assert_neq(strcmp(pacer_strerror((pacer_err)e), "unknown error"), 0, "code %d", e);
    }
    cr_assert_str_eq(pacer_strerror((pacer_err)9999), "unknown error");
    /* values are a contract: pin a few */
    cr_assert_eq(PACER_ERR_TOO_BIG, 4);
    cr_assert_eq(PACER_ERR_CANCELLED, 8);
    cr_assert_eq(PACER_ERR_INTEGRITY, 14);
}

Test(buf, grows_and_respects_cap) {
    buf b;
    buf_init(&b, 10);
    cr_assert_eq(buf_append(&b, "hello", 5), PACER_OK);
    cr_assert_eq(buf_append(&b, "world", 5), PACER_OK);
    cr_assert_str_eq(b.data, "helloworld");
    cr_assert_eq(buf_append(&b, "!", 1), PACER_ERR_TOO_BIG);
    cr_assert_eq(b.len, 10);
    cr_assert_str_eq(b.data, "helloworld");
    buf_consume(&b, 5);
    cr_assert_str_eq(b.data, "world");
    cr_assert_eq(buf_appendf(&b, "%d", 42), PACER_OK);
    cr_assert_str_eq(b.data, "world42");
    cr_assert_eq(buf_appendf(&b, "%s", "toolong"), PACER_ERR_TOO_BIG);
    cr_assert_str_eq(b.data, "world42");
    char *s = buf_detach(&b);
    cr_assert_str_eq(s, "world42");
    free(s);
    cr_assert_null(b.data);
    buf_free(&b);
    buf_free(NULL);
}

Test(buf, huge_request_does_not_overflow) {
    buf b;
    buf_init(&b, (size_t)-1);
    cr_assert_eq(buf_append(&b, "x", 1), PACER_OK);
    cr_assert_eq(buf_reserve(&b, (size_t)-1), PACER_ERR_TOO_BIG);
    buf_free(&b);
}

Test(sha256, known_vectors) {
    char hex[65];
    cr_assert_eq(sha256_hex("", 0, hex), PACER_OK);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    cr_assert_eq(sha256_hex("abc", 3, hex), PACER_OK);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_ctx c;
    uint8_t d[32];
    cr_assert_eq(sha256_begin(&c), PACER_OK);
    sha256_update(&c, "a", 1);
    sha256_update(&c, "bc", 2);
    cr_assert_eq(sha256_end(&c, d), PACER_OK);
    sha256_to_hex(d, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(clock, monotonic_nanoseconds) {
    int64_t a = clock_now_ns();
    clock_sleep_ns(2000000);
    int64_t b = clock_now_ns();
    cr_assert_geq(b - a, 2000000);
    char iso[21];
    clock_utc_iso8601(iso);
    cr_assert_eq(strlen(iso), 20);
    cr_assert_eq(iso[10], 'T');
    cr_assert_eq(iso[19], 'Z');
}

/* seconds are the same clock; CPU time grows with work and not with sleep */
Test(clock, seconds_and_cpu_time) {
    double s0 = clock_now_s();
    int64_t n0 = clock_now_ns();
    cr_assert(s0 <= (double)n0 / 1e9 + 1e-6 && s0 > (double)n0 / 1e9 - 1.0);
    double c0 = clock_cpu_s();
    volatile uint64_t x = 0;
    while (clock_cpu_s() - c0 < 0.01) x += 1;
    double c1 = clock_cpu_s();
    clock_sleep_ns(20000000);
    cr_assert_geq(clock_now_s() - s0, 0.02);
    cr_assert_lt(clock_cpu_s() - c1, 0.02 - 1e-3, "sleeping costs (almost) no CPU");
}

Test(fileio, atomic_write_replaces_whole_file) {
    char dir[] = "/tmp/pacer-test-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], sub[256];
    snprintf(path, sizeof path, "%s/a/b/out.json", dir);
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    cr_assert_eq(dir_create_all(sub, 0700), PACER_OK);
    cr_assert_eq(dir_create_all(sub, 0700), PACER_OK);
    cr_assert_eq(file_write_atomic(path, "first", 5, 0600), PACER_OK);
    cr_assert_eq(file_write_atomic(path, "second", 6, 0600), PACER_OK);
    buf b;
    buf_init(&b, 100);
    cr_assert_eq(file_read_all(path, &b), PACER_OK);
    cr_assert_str_eq(b.data, "second");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    buf_reset(&b);
    b.max = 3;
    cr_assert_eq(file_read_all(path, &b), PACER_ERR_TOO_BIG);
    buf_free(&b);
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/x", dir);
    cr_assert_eq(file_write_atomic(bad, "x", 1, 0600), PACER_ERR_NOT_FOUND);
    unlink(path);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/a", dir);
    rmdir(sub);
    rmdir(dir);
}

Test(json, canonical_bytes_are_pinned) {
    json_error_t err;
    json_t *v = json_loads("{ \"b\": [1, 2.5, 0.7, 1e21, -0.0, true, null],\n \"a\": {\"z\": \"\\u00e9/\\n\", \"y\": 3} }", 0, &err);
    cr_assert_not_null(v, "%s", err.text);
    char *s = json_canonical_dump(v);
    cr_assert_str_eq(s, "{\"a\":{\"y\":3,\"z\":\"\xc3\xa9/\\n\"},\"b\":[1,2.5,0.7,1e21,-0.0,true,null]}");
    /* text -> value -> text is the identity on canonical text */
    json_t *again = json_loads(s, 0, &err);
    char *s2 = json_canonical_dump(again);
    cr_assert_str_eq(s, s2);
    char hex[65];
    cr_assert_eq(json_canonical_sha256(v, hex), PACER_OK);
    char want[65];
    sha256_hex(s, strlen(s), want);
    cr_assert_str_eq(hex, want);
    free(s);
    free(s2);
    json_decref(v);
    json_decref(again);
}

Test(json, typed_getters) {
    json_t *o = json_pack("{s:s, s:I, s:f, s:b, s:n}", "s", "x", "i", (json_int_t)7, "f", 1.5, "b", 1, "n");
    cr_assert_str_eq(json_get_str(o, "s", "d"), "x");
    cr_assert_str_eq(json_get_str(o, "i", "d"), "d");
    cr_assert_eq(json_get_int(o, "i", -1), 7);
    cr_assert_eq(json_get_int(o, "f", -1), -1);
    cr_assert_float_eq(json_get_num(o, "i", 0), 7.0, 1e-12);
    cr_assert(json_get_bool(o, "b", false));
    cr_assert_eq(json_get_int(o, "n", -2), -2);
    json_decref(o);
}

/* The skim must never vouch for text jansson refuses, nor point at another value than the
 * one jansson finds; checked on token events and on every truncation and single-byte
 * change of them. */
static void skim_agrees_with_jansson(const char *s, size_t n) {
    size_t at = 0, len = 0;
    bool ok = json_skim_object(s, n, "choices", &at, &len);
    if (!ok) return;
    json_error_t err;
    json_t *root = json_loadb(s, n, 0, &err);
    cr_assert(json_is_object(root), "skim accepted what jansson refuses (%s): %.*s", err.text, (int)n, s);
    json_t *want = json_object_get(root, "choices");
    if (len == 0) {
        cr_assert_null(want, "skim missed the key: %.*s", (int)n, s);
    } else {
        json_t *got = json_loadb(s + at, len, JSON_DECODE_ANY, &err);
        cr_assert(got && want && json_equal(got, want), "skim found another value: %.*s", (int)n, s);
        json_decref(got);
    }
    json_decref(root);
}

Test(json, skim_valid_events_are_vouched_for) {
    static const char *const valid[] = {
        "{\"choices\":[{\"index\":0,\"text\":\"tok0 \",\"finish_reason\":null}]}",
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m\","
        "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" caf\xc3\xa9 \\u00e9\\n\\\"q\\\"\"},\"finish_reason\":null}],"
        "\"usage\":null}",
        " {\"choices\" : [ ] , \"x\" : [1.5e-3, -0, true, false, {}, []] }\n",
        "{\"a\":{\"choices\":1},\"choices\":[\"\xf0\x9f\x98\x80\xe2\x82\xac\"]}",
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        size_t at, len;
        cr_assert(json_skim_object(valid[i], strlen(valid[i]), "choices", &at, &len), "refused: %s", valid[i]);
        cr_assert_gt(len, 0);
        skim_agrees_with_jansson(valid[i], strlen(valid[i]));
    }
    size_t at, len;
    cr_assert(json_skim_object("{\"a\":1}", 7, "choices", &at, &len) && len == 0);
}

Test(json, skim_refuses_malformed_events) {
    static const char *const bad[] = {
        "{\"choices\":[{\"index\":0,\"text\":\"x\",\"finish_reason\":null}],\"id\":\"cm}",
        "{\"id\":\"x,\"choices\":[{\"index\":0,\"text\":\"y\"}]}",
        "{\"choices\":[{\"index\":0,\"text\":\"z\"}]]}",
        "{\"choices\":[]} x",
        "{\"choices\":[],}",
        "{\"choices\":[01]}",
        "{\"choices\":[1.]}",
        "{\"choices\":[tru]}",
        "{\"choices\":[\"\\x\"]}",
        "{\"choices\":[\"\xc3\"]}",
        "{\"choices\":[\"\xed\xa0\x80\"]}",
        "{\"choices\":[\"a\tb\"]}",
        "{\"choices\":[],\"choices\":[]}",
        "[\"choices\"]",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t at, len;
        cr_assert(!json_skim_object(bad[i], strlen(bad[i]), "choices", &at, &len), "accepted: %s", bad[i]);
    }
}

/* Calls check(text) for `s`, every truncation of it, and every one-byte deletion and
 * substitution (from a set of bytes that matter to JSON). */
static void for_each_mutation(const char *s, void (*check)(const void *ctx, const char *t, size_t n), const void *ctx) {
    static const char subst[] = "{}[]\",:\\ 0-.eE+tu\x01\x7f\x80\xc3\xff";
    char m[512];
    size_t n = strlen(s);
    for (size_t cut = 0; cut <= n; cut++) check(ctx, s, cut);
    for (size_t i = 0; i < n; i++) {
        memcpy(m, s, i);
        memcpy(m + i, s + i + 1, n - i - 1);
        check(ctx, m, n - 1); /* one byte deleted */
        memcpy(m, s, n);
        for (size_t k = 0; k < sizeof subst - 1; k++) {
            m[i] = subst[k];
            check(ctx, m, n); /* one byte replaced */
        }
    }
}

static void skim_check(const void *ctx, const char *t, size_t n) { skim_agrees_with_jansson(t, n); }

Test(json, skim_never_disagrees_with_jansson_under_mutation) {
    static const char *const seeds[] = {
        "{\"id\":\"c-1\",\"created\":1700000000,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t\\u00e9\xc3\xa9\","
        "\"reasoning\":null},\"finish_reason\":null}],\"x\":[1.5e+2,-0.25,true,false,null,{}]}",
        "{\"choices\":[{\"index\":0,\"text\":\"tok0 \",\"finish_reason\":\"length\"}]}",
    };
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) for_each_mutation(seeds[si], skim_check, NULL);
}

/* jansson's value at a plan path ("a[0].b"), or NULL: what a plan's span must hold. */
static json_t *path_value(json_t *v, const char *path) {
    char step[64];
    while (*path && v) {
        if (strncmp(path, "[0]", 3) == 0) {
            v = json_is_array(v) ? json_array_get(v, 0) : NULL;
            path += 3;
        } else {
            size_t n = strcspn(path, ".[");
            snprintf(step, sizeof step, "%.*s", (int)n, path);
            v = json_is_object(v) ? json_object_get(v, step) : NULL;
            path += n;
        }
        if (*path == '.') path++;
    }
    return v;
}

static const char *const plan_paths[] = {"usage", "choices[0].text", "choices[0].delta.content",
                                         "choices[0].delta.reasoning", "choices[0].finish_reason", "choices"};
#define N_PLAN_PATHS 6

/* A plan must never vouch for text jansson refuses, and each span must be jansson's value. */
static void plan_agrees_with_jansson(const json_skim_plan *p, const char *s, size_t n) {
    json_span sp[N_PLAN_PATHS];
    if (!json_skim_plan_run(p, s, n, sp)) return;
    json_error_t err;
    json_t *root = json_loadb(s, n, 0, &err);
    cr_assert(json_is_object(root), "plan accepted what jansson refuses (%s): %.*s", err.text, (int)n, s);
    for (int i = 0; i < N_PLAN_PATHS; i++) {
        json_t *want = path_value(root, plan_paths[i]);
        if (sp[i].len == 0) {
            cr_assert_null(want, "plan missed %s: %.*s", plan_paths[i], (int)n, s);
            continue;
        }
        json_t *got = json_loadb(s + sp[i].at, sp[i].len, JSON_DECODE_ANY, &err);
        cr_assert(got && want && json_equal(got, want), "plan found another value for %s: %.*s", plan_paths[i], (int)n, s);
        if (json_is_string(want))
            cr_assert_eq(json_skim_string_len(s + sp[i].at, sp[i].len), json_string_length(want), "%s", plan_paths[i]);
        json_decref(got);
    }
    json_decref(root);
}

static void plan_check(const void *ctx, const char *t, size_t n) { plan_agrees_with_jansson(ctx, t, n); }

Test(json, skim_plan_finds_every_path_as_jansson_does) {
    json_skim_plan *p = json_skim_plan_new(plan_paths, N_PLAN_PATHS);
    cr_assert_not_null(p);
    static const char *const seeds[] = {
        "{\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t\\u00e9\\u20ac\xc3\xa9 long enough text\","
        "\"reasoning\":null},\"finish_reason\":null}],\"usage\":null}",
        "{\"choices\":[{\"index\":0,\"text\":\"tok0 \\\"q\\\"\\n\",\"finish_reason\":\"length\"},{\"text\":\"no\"}],"
        "\"usage\":{\"completion_tokens\":3}}",
        "{\"choices\":{\"0\":{\"text\":\"x\"}},\"usage\":[1]}",
    };
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
        json_span sp[N_PLAN_PATHS];
        cr_assert(json_skim_plan_run(p, seeds[si], strlen(seeds[si]), sp), "refused: %s", seeds[si]);
        for_each_mutation(seeds[si], plan_check, p);
    }
    json_skim_plan_free(p);
}

Test(json, skim_plan_gives_up_where_jansson_decides) {
    json_skim_plan *p = json_skim_plan_new(plan_paths, N_PLAN_PATHS);
    json_span sp[N_PLAN_PATHS];
    /* an escaped member name in an object the plan looks into; a path's member twice */
    const char *esc = "{\"choices\":[{\"te\\u0078t\":\"a\"}]}", *twice = "{\"usage\":1,\"usage\":2}";
    cr_assert(!json_skim_plan_run(p, esc, strlen(esc), sp));
    cr_assert(!json_skim_plan_run(p, twice, strlen(twice), sp));
    /* an escaped name where the plan does not look is fine */
    const char *other = "{\"x\":{\"\\u0061\":1},\"choices\":[]}";
    cr_assert(json_skim_plan_run(p, other, strlen(other), sp));
    cr_assert_eq(sp[1].len, 0);
    json_skim_plan_free(p);
    const char *bad_paths[][2] = {{"a..b", NULL}, {"a", "a"}, {"", NULL}};
    for (int i = 0; i < 3; i++)
        cr_assert_null(json_skim_plan_new(bad_paths[i], bad_paths[i][1] ? 2 : 1), "accepted %s", bad_paths[i][0]);
}

Test(parse, integers_whole_string_and_range) {
    int64_t v = 7;
    int i = 7;
    cr_expect(parse_i64("-42", -100, 100, &v) && v == -42);
    cr_expect_not(parse_i64("101", -100, 100, &v));
    cr_expect_not(parse_i64("4x", 0, 100, &v));
    cr_expect_not(parse_i64("", 0, 100, &v));
    cr_expect_not(parse_i64(" 4", 0, 100, &v));
    cr_expect_not(parse_i64("99999999999999999999", INT64_MIN, INT64_MAX, &v));
    cr_expect_eq(v, -42, "a refused value leaves *out alone");
    cr_expect(parse_int("1024", 1, 1024, &i) && i == 1024);
    cr_expect_not(parse_int("0", 1, 1024, &i));
}

Test(parse, seeds_keep_all_64_bits) {
    uint64_t s = 0;
    cr_expect(parse_u64("18446744073709551615", &s) && s == UINT64_MAX);
    cr_expect(parse_u64("9007199254740993", &s) && s == 9007199254740993ull, "2^53 + 1 survives");
    cr_expect_not(parse_u64("18446744073709551616", &s));
    cr_expect_not(parse_u64("-1", &s));
    cr_expect_not(parse_u64("1e3", &s));
    double d = 0;
    cr_expect(parse_double("0.95", 0, 1, &d) && d == 0.95);
    cr_expect_not(parse_double("nan", 0, 1, &d));
    cr_expect_not(parse_double("1.5", 0, 1, &d));
}
