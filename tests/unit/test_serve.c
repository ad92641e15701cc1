/* test_serve.c - the serve layer: stop/UTF-8 holdback, chat rendering and format
 * detection, and the HTTP server on a real loopback port with a scripted byte-level model
 * (token = byte + 0..255, 256 = end of generation; the next byte is always last + 1),
 * including log-probabilities, echo and batched prompts. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "base/buf.h"
#include "base/sha256.h"
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "engine/chat.h"
#include "server/serve.h"
#include "engine/gen_text.h"
#include "bench/manifest.h"
#include "schema/manifest.h"

/* ---- text ---- */

static char *push_all(const char *const *pieces, int n, const char *const *stops, int n_stops, bool *stopped) {
    gen_text t;
    buf out;
    buf_init(&out, 4096);
    gen_text_init(&t, stops, n_stops);
    for (int i = 0; i < n && !t.stopped; i++) gen_text_push(&t, pieces[i], strlen(pieces[i]), &out);
    gen_text_flush(&t, &out);
    *stopped = t.stopped;
    gen_text_free(&t);
    return buf_detach(&out);
}

Test(gen_text, stop_split_across_tokens) {
    const char *pieces[] = {"hello wo", "r", "ld! more"};
    const char *stops[] = {"world"};
    bool stopped;
    char *s = push_all(pieces, 3, stops, 1, &stopped);
    cr_assert(stopped);
    cr_assert_str_eq(s, "hello ");
    free(s);
}

Test(gen_text, holdback_released_when_not_a_stop) {
    gen_text t;
    buf out;
    buf_init(&out, 4096);
    const char *stops[] = {"END"};
    gen_text_init(&t, stops, 1);
    gen_text_push(&t, "abE", 3, &out);
    cr_assert_eq(out.len, 2); /* "E" held */
    gen_text_push(&t, "x", 1, &out);
    cr_assert_str_eq(out.data, "abEx");
    gen_text_free(&t);
    buf_free(&out);
}

Test(gen_text, utf8_never_partial) {
    gen_text t;
    buf out;
    buf_init(&out, 4096);
    gen_text_init(&t, NULL, 0);
    gen_text_push(&t, "a\xE2\x82", 3, &out); /* euro sign cut short */
    cr_assert_str_eq(out.data, "a");
    gen_text_push(&t, "\xAC", 1, &out);
    cr_assert_str_eq(out.data, "a\xE2\x82\xAC");
    gen_text_push(&t, "\xFF", 1, &out); /* invalid: replaced */
    cr_assert_str_eq(out.data, "a\xE2\x82\xAC\xEF\xBF\xBD");
    gen_text_push(&t, "\xF0\x9F", 2, &out);
    gen_text_flush(&t, &out); /* cut short at the end: replaced, still valid */
    cr_assert_str_eq(out.data, "a\xE2\x82\xAC\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    gen_text_free(&t);
    buf_free(&out);
}

/* ---- chat ---- */

static char *render(const char *fmt, const char *msgs) {
    json_t *m = json_loads(msgs, 0, NULL);
    buf out;
    buf_init(&out, 4096);
    char err[128];
    cr_assert_eq(chat_render(chat_format_by_name(fmt), m, &out, err, sizeof err), PACER_OK);
    json_decref(m);
    return buf_detach(&out);
}

Test(chat, renders_each_family) {
    const char *msgs = "[{\"role\":\"system\",\"content\":\"S\"},{\"role\":\"user\",\"content\":\"U\"}]";
    char *s = render("chatml", msgs);
    cr_assert_str_eq(s, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
    free(s);
    s = render("llama3", msgs);
    cr_assert_str_eq(s, "<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>"
                        "\n\nU<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    free(s);
    s = render("llama2", msgs);
    cr_assert_str_eq(s, "[INST] <<SYS>>\nS\n<</SYS>>\n\nU [/INST]");
    free(s);
    s = render("mistral", msgs);
    cr_assert_str_eq(s, "[INST] S\n\nU [/INST]");
    free(s);
    s = render("plain", msgs);
    cr_assert_str_eq(s, "system: S\nuser: U\nassistant:");
    free(s);
}

Test(chat, rejects_bad_messages) {
    json_t *m = json_loads("[{\"role\":\"user\",\"content\":3}]", 0, NULL);
    buf out;
    buf_init(&out, 4096);
    char err[128];
    cr_assert_eq(chat_render(chat_format_by_name("chatml"), m, &out, err, sizeof err), PACER_ERR_FORMAT);
    cr_assert(strstr(err, "messages[0]"));
    json_decref(m);
    buf_free(&out);
}

static bool has_im_start(void *ctx, const char *t) { (void)ctx; return strcmp(t, "<|im_start|>") == 0; }

Test(chat, detects_from_template_then_vocab) {
    cr_assert_str_eq(chat_format_detect("{% for m in messages %}<|start_header_id|>{{m.role}}", NULL, NULL)->name, "llama3");
    cr_assert_str_eq(chat_format_detect("<|im_start|>{{ role }}", NULL, NULL)->name, "chatml");
    cr_assert_str_eq(chat_format_detect("[INST] <<SYS>>", NULL, NULL)->name, "llama2");
    cr_assert_str_eq(chat_format_detect("{{ '[INST] ' + content }}", NULL, NULL)->name, "mistral");
    cr_assert_str_eq(chat_format_detect(NULL, has_im_start, NULL)->name, "chatml");
    cr_assert_str_eq(chat_format_detect(NULL, NULL, NULL)->name, "plain");
}

/* ---- the scripted model ---- */

typedef struct fake {
    int evals, evaluated, all_rows;
    int max_rows, wanted; /* eval_rows: the most rows a pass, the logits rows asked for */
    int cycle; /* > 0: the text is a..(a + cycle - 1) over and over, what n-gram lookup drafts */
    int64_t delay_ns;
    int32_t last;
    char piece[2];
} fake;

static pacer_err fake_encode(void *ctx, const char *text, bool special, int32_t *out, int max, int *n) {
    (void)ctx; (void)special;
    int len = (int)strlen(text);
    for (int i = 0; i < len && i < max; i++) out[i] = (unsigned char)text[i];
    *n = len;
    return PACER_OK;
}
static const char *fake_piece(void *ctx, int32_t tok, size_t *len) {
    fake *f = ctx;
    f->piece[0] = (char)tok;
    *len = tok < 256 ? 1 : 0;
    return f->piece;
}
static bool fake_eog(void *ctx, int32_t tok) { (void)ctx; return tok == 256; }
/* The row after `last`: ... x y z then end (or the cycle), the next byte scoring 10,
 * everything else 0. */
static void fake_row(const fake *f, int32_t last, float *row) {
    for (int i = 0; i < 257; i++) row[i] = 0;
    if (f->cycle > 0 && last >= 'a' && last < 'a' + f->cycle) row['a' + (last - 'a' + 1) % f->cycle] = 10;
    else row[last == 'z' ? 256 : (last + 1) % 256] = 10;
}
static pacer_err fake_eval(void *ctx, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    fake *f = ctx;
    f->evals++;
    f->evaluated += n;
    if (all_logits) f->all_rows += n;
    if (f->delay_ns) {
        struct timespec ts = {0, (long)f->delay_ns};
        nanosleep(&ts, NULL);
    }
    (void)pos;
    if (!logits) return PACER_OK;
    for (int i = all_logits ? 0 : n - 1; i < n; i++) fake_row(f, tokens[i], logits + (size_t)(all_logits ? i : 0) * 257);
    return PACER_OK;
}

/* Several sequences: the script's rows depend on the token alone. */
static pacer_err fake_eval_seq(void *ctx, int seq, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    (void)seq;
    return fake_eval(ctx, tokens, n, pos, logits, all_logits);
}
static pacer_err fake_eval_rows(void *ctx, const int32_t *tokens, const int *seq, const int *pos, int n, const bool *want,
                                float *logits) {
    fake *f = ctx;
    (void)seq;
    pacer_err rc = fake_eval(ctx, tokens, n, pos[0], NULL, false);
    if (n > f->max_rows) f->max_rows = n;
    for (int i = 0, r = 0; i < n && logits; i++)
        if (!want || want[i]) {
            fake_row(f, tokens[i], logits + (size_t)r++ * 257);
            f->wanted++;
        }
    return rc;
}

static fake F;
#define FAKE_SEQ 8
static engine_backend fake_backend(void) {
    return (engine_backend){&F, 257, 64, fake_encode, fake_piece, fake_eog, fake_eval, FAKE_SEQ, fake_eval_seq, fake_eval_rows};
}
static serve_server *S;
static char BASE[64];

static void start(size_t max_body, int queue_max) {
    memset(&F, 0, sizeof F);
    serve_options o;
    serve_options_default(&o);
    if (max_body) o.max_body = max_body;
    if (queue_max >= 0) o.queue_max = queue_max;
    char err[128];
    cr_assert_eq(serve_start(&o, &S, err, sizeof err), PACER_OK, "%s", err);
    snprintf(BASE, sizeof BASE, "http://127.0.0.1:%d", serve_port(S));
}
static void set_model(void) {
    engine_backend b = fake_backend();
    serve_model_info info = {"tiny", "dir/tiny.gguf", "ab", "", NULL, chat_format_by_name("plain"), NULL, NULL, NULL};
    cr_assert_eq(serve_set_model(S, &b, &info), PACER_OK);
}
static void setup(void) { start(0, -1); set_model(); }
static void teardown(void) { serve_stop(S); S = NULL; }

static size_t sink(char *p, size_t sz, size_t n, void *ud) { buf_append(ud, p, sz * n); return sz * n; }

/* Sends a request; returns the status, body in *body (free()), Retry-After in ra. */
static long http(const char *method, const char *path, const char *body, char **out) {
    CURL *c = curl_easy_init();
    char url[256];
    snprintf(url, sizeof url, "%s%s", BASE, path);
    buf b;
    buf_init(&b, 1u << 22);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    *out = buf_detach(&b);
    return code;
}

static void expect_error(const char *method, const char *path, const char *body, long want) {
    char *r;
    long code = http(method, path, body, &r);
    cr_assert_eq(code, want, "%s %s -> %ld: %s", method, path, code, r);
    json_t *v = json_loads(r, 0, NULL);
    cr_assert(json_is_string(json_object_get(json_object_get(v, "error"), "message")), "%s", r);
    cr_assert(json_is_string(json_object_get(json_object_get(v, "error"), "type")), "%s", r);
    json_decref(v);
    free(r);
}

Test(serve_http, health_loading_then_ready) {
    start(0, -1);
    char *r;
    cr_assert_eq(http("GET", "/health", NULL, &r), 503);
    free(r);
    set_model();
    cr_assert_eq(http("GET", "/health", NULL, &r), 200);
    free(r);
    teardown();
}

/* The writer and the reader share schema/manifest.h: what `pacer serve` answers passes
 * bench's checks, and every member it writes is a field of the table. */
Test(serve_http, manifest_passes_the_reader) {
    start(0, -1);
    engine_backend b = fake_backend();
    static const char hw[] = "{\"source\":\"probed\",\"cpu\":{\"model\":\"Test CPU\",\"cores\":4},\"memory_bytes\":1024,"
                             "\"gpus\":[],\"gpu_count\":0}";
    serve_model_info info = {"tiny", "dir/tiny.gguf", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                             "v1.2", hw, chat_format_by_name("plain"), NULL, NULL, NULL};
    cr_assert_eq(serve_set_model(S, &b, &info), PACER_OK);
    char *r;
    cr_assert_eq(http("GET", "/v1/benchmark/manifest", NULL, &r), 200);
    manifest m;
    cr_expect_eq(manifest_parse(r, strlen(r), &m), PACER_OK, "%s: %s", m.reason, r);
    cr_expect(m.accepted);
    cr_expect_str_eq(m.backend, "cpu");
    cr_expect_str_eq(m.revision, "v1.2");
    cr_expect_eq(m.rank_count, 1);
    cr_expect_eq(json_array_size(m.checkpoint_hashes), 1);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(m.hardware, "cpu"), "model")), "Test CPU");
    manifest_free(&m);
    json_t *v = json_loads(r, 0, NULL);
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val) {
        bool known = false;
        for (size_t i = 0; i < MF_COUNT; i++) known = known || strcmp(key, manifest_fields[i].name) == 0;
        cr_expect(known, "%s is not in the manifest's field table", key);
    }
    json_decref(v);
    free(r);
    teardown();
}

Test(serve_http, completion_body, .init = setup, .fini = teardown) {
    char *r;
    cr_assert_eq(http("POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":5,\"temperature\":0,\"junk\":[1]}", &r), 200);
    json_t *v = json_loads(r, 0, NULL);
    json_t *c0 = json_array_get(json_object_get(v, "choices"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(c0, "text")), "bcdef");
    cr_assert_str_eq(json_string_value(json_object_get(c0, "finish_reason")), "length");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "usage"), "completion_tokens")), 5);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "usage"), "prompt_tokens")), 1);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "timings"), "predicted_n")), 5);
    cr_assert_eq(strlen(json_string_value(json_object_get(v, "token_hash"))), 64);
    /* the hash is over the ids as little-endian int32 */
    char want[65];
    uint8_t ids[20] = {'b', 0, 0, 0, 'c', 0, 0, 0, 'd', 0, 0, 0, 'e', 0, 0, 0, 'f', 0, 0, 0};
    sha256_hex(ids, sizeof ids, want);
    cr_assert_str_eq(json_string_value(json_object_get(v, "token_hash")), want);
    json_decref(v);
    free(r);
}

Test(serve_http, stop_and_eog, .init = setup, .fini = teardown) {
    char *r;
    http("POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":20,\"temperature\":0,\"stop\":[\"ef\"]}", &r);
    json_t *v = json_loads(r, 0, NULL);
    json_t *c0 = json_array_get(json_object_get(v, "choices"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(c0, "text")), "bcd");
    cr_assert_str_eq(json_string_value(json_object_get(c0, "finish_reason")), "stop");
    json_decref(v);
    free(r);
    http("POST", "/v1/completions", "{\"prompt\":\"w\",\"max_tokens\":20,\"temperature\":0}", &r);
    v = json_loads(r, 0, NULL);
    c0 = json_array_get(json_object_get(v, "choices"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(c0, "text")), "xyz");
    cr_assert_str_eq(json_string_value(json_object_get(c0, "finish_reason")), "stop");
    json_decref(v);
    free(r);
}

Test(serve_http, streaming_chat, .init = setup, .fini = teardown) {
    char *r;
    cr_assert_eq(http("POST", "/v1/chat/completions",
                      "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"max_tokens\":3,\"temperature\":0,\"stream\":true,"
                      "\"stream_options\":{\"include_usage\":true}}", &r), 200);
    /* role first, then content deltas, a final chunk with finish_reason, usage, [DONE] */
    cr_assert(strncmp(r, "data: {", 7) == 0, "%s", r);
    const char *role = strstr(r, "\"role\":\"assistant\"");
    const char *fin = strstr(r, "\"finish_reason\":\"length\"");
    const char *usage = strstr(r, "\"usage\":{");
    const char *done = strstr(r, "data: [DONE]\n\n");
    cr_assert(role && fin && usage && done && role < fin && fin < usage && usage < done, "%s", r);
    cr_assert(strstr(r, "\"token_hash\":\"") && strstr(r, "\"timings\":{"), "%s", r);
    cr_assert_eq(strcmp(done, "data: [DONE]\n\n"), 0);
    free(r);
}

Test(serve_http, bad_inputs_then_ok, .init = setup, .fini = teardown) {
    expect_error("POST", "/v1/completions", "{not json", 400);
    expect_error("POST", "/v1/completions", "[1,2]", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":\"5\"}", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":7}", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":[1,999]}", 400);
    expect_error("POST", "/v1/chat/completions", "{\"messages\":[{\"role\":1}]}", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":\"a\",\"model\":\"other\"}", 404);
    expect_error("GET", "/nowhere", NULL, 404);
    char longp[200];
    memset(longp, 'a', sizeof longp);
    longp[sizeof longp - 1] = 0;
    char body[300];
    snprintf(body, sizeof body, "{\"prompt\":\"%s\"}", longp);
    expect_error("POST", "/v1/completions", body, 400); /* 199 tokens > 64 context */
    char *r;
    cr_assert_eq(http("POST", "/v1/completions", "{\"prompt\":\"a\",\"model\":\"tiny\",\"max_tokens\":2}", &r), 200);
    free(r);
    cr_assert_eq(http("GET", "/v1/models", NULL, &r), 200);
    json_t *v = json_loads(r, 0, NULL);
    json_t *m = json_array_get(json_object_get(v, "data"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(m, "id")), "tiny");
    cr_assert_str_eq(json_string_value(json_object_get(m, "family")), "plain");
    cr_assert(json_is_true(json_object_get(m, "raw_text")));
    json_decref(v);
    free(r);
}

Test(serve_http, body_cap_413) {
    start(256, -1);
    set_model();
    char body[1024];
    memset(body, ' ', sizeof body);
    memcpy(body, "{\"prompt\":\"a\"", 13);
    body[sizeof body - 2] = '}';
    body[sizeof body - 1] = 0;
    expect_error("POST", "/v1/completions", body, 413);
    char *r;
    cr_assert_eq(http("POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":1}", &r), 200);
    free(r);
    teardown();
}

Test(serve_http, prompt_cache_reuses_prefix, .init = setup, .fini = teardown) {
    char *r;
    http("POST", "/v1/completions", "{\"prompt\":\"abcdefgh\",\"max_tokens\":1,\"temperature\":0}", &r);
    free(r);
    http("POST", "/v1/completions", "{\"prompt\":\"abcdefgX\",\"max_tokens\":1,\"temperature\":0}", &r);
    json_t *v = json_loads(r, 0, NULL);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "timings"), "prompt_n")), 1);
    json_decref(v);
    free(r);
    http("POST", "/v1/completions", "{\"prompt\":\"abcdefgX\",\"max_tokens\":1,\"temperature\":0,\"cache_prompt\":false}", &r);
    v = json_loads(r, 0, NULL);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "timings"), "prompt_n")), 8);
    json_decref(v);
    free(r);
    cr_assert_eq(http("GET", "/metrics", NULL, &r), 200);
    cr_assert(strstr(r, "pacer_requests_total 3\n"), "%s", r);
    cr_assert(strstr(r, "pacer_generated_tokens_total 3\n"), "%s", r);
    free(r);
    cr_assert_eq(http("GET", "/v1/benchmark/manifest", NULL, &r), 200);
    v = json_loads(r, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(v, "backend")), "cpu");
    cr_assert_eq(json_integer_value(json_object_get(v, "rank_count")), 1);
    cr_assert_eq(json_integer_value(json_object_get(v, "manifest_version")), 1);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(json_object_get(v, "checkpoint"), "sha256"), 0)), "ab");
    json_decref(v);
    free(r);
}

static void *slow_request(void *arg) {
    char *r;
    long code = http("POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":10}", &r);
    free(r);
    return (void *)(intptr_t)code;
}

Test(serve_http, queue_full_503) {
    start(0, 0); /* nobody may wait */
    set_model();
    F.delay_ns = 50000000; /* 50 ms per eval: the first request holds the decoder ~0.5 s */
    pthread_t t;
    pthread_create(&t, NULL, slow_request, NULL);
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    CURL *c = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "%s/v1/completions", BASE);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"prompt\":\"a\",\"max_tokens\":1}");
    buf b;
    buf_init(&b, 65536);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    long code = 0;
    curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    struct curl_header *h = NULL;
    cr_assert_eq(code, 503, "%s", b.data);
    cr_assert_eq(curl_easy_header(c, "Retry-After", 0, CURLH_HEADER, -1, &h), CURLHE_OK);
    curl_easy_cleanup(c);
    buf_free(&b);
    void *first;
    pthread_join(t, &first);
    cr_assert_eq((intptr_t)first, 200);
    teardown();
}

static size_t abort_after_first(char *p, size_t sz, size_t n, void *ud) { (void)p; (void)ud; return sz * n > 0 ? 0 : 0; }

Test(serve_http, disconnect_stops_generation) {
    start(0, -1);
    set_model();
    F.delay_ns = 20000000;
    CURL *c = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "%s/v1/completions", BASE);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"prompt\":\"a\",\"max_tokens\":60,\"stream\":true}");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, abort_after_first);
    curl_easy_perform(c); /* fails on purpose at the first bytes */
    curl_easy_cleanup(c);
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    int evals = F.evals;
    nanosleep(&ts, NULL);
    cr_assert_eq(F.evals, evals, "generation went on after the client left");
    cr_assert_lt(F.evals, 40);
    /* the decoder is free again */
    F.delay_ns = 0;
    char *r;
    cr_assert_eq(http("POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":1}", &r), 200);
    free(r);
    teardown();
}

/* ---- --parallel: several requests decoded in shared passes ---- */

static void *greedy_request(void *arg) {
    const char *body = arg;
    char *r;
    long code = http("POST", "/v1/completions", body, &r);
    json_t *v = json_loads(r, 0, NULL);
    free(r);
    const char *text = json_string_value(json_object_get(json_array_get(json_object_get(v, "choices"), 0), "text"));
    char *out = code == 200 && text ? strdup(text) : NULL;
    json_decref(v);
    return out;
}

Test(serve_parallel, requests_share_passes_and_keep_their_output, .timeout = 60) {
    memset(&F, 0, sizeof F);
    serve_options o;
    serve_options_default(&o);
    o.parallel = 4;
    o.serial = true;
    char err[128];
    cr_assert_eq(serve_start(&o, &S, err, sizeof err), PACER_OK, "%s", err);
    snprintf(BASE, sizeof BASE, "http://127.0.0.1:%d", serve_port(S));
    set_model();
    F.delay_ns = 5000000; /* 5 ms a pass: the four requests overlap */
    /* each prompt's script: the next bytes up to 'z', then end of generation */
    const char *bodies[] = {"{\"prompt\":\"a\",\"max_tokens\":20,\"temperature\":0}",
                            "{\"prompt\":\"e\",\"max_tokens\":20,\"temperature\":0}",
                            "{\"prompt\":\"k\",\"max_tokens\":20,\"temperature\":0}",
                            "{\"prompt\":\"p\",\"max_tokens\":20,\"temperature\":0}"};
    const char *want[] = {"bcdefghijklmnopqrstu", "fghijklmnopqrstuvwxy", "lmnopqrstuvwxyz", "qrstuvwxyz"};
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, greedy_request, (void *)bodies[i]);
    for (int i = 0; i < 4; i++) {
        void *got;
        pthread_join(t[i], &got);
        cr_assert(got, "request %d failed", i);
        cr_assert_str_eq(got, want[i]);
        free(got);
    }
    char *r;
    cr_assert_eq(http("GET", "/metrics", NULL, &r), 200);
    unsigned long long passes = 0, rows = 0;
    const char *p = strstr(r, "\npacer_decode_passes_total "), *q = strstr(r, "\npacer_decode_rows_total ");
    cr_assert(p && q, "%s", r);
    sscanf(p, "\npacer_decode_passes_total %llu", &passes);
    sscanf(q, "\npacer_decode_rows_total %llu", &rows);
    cr_assert(strstr(r, "pacer_slots_busy 0\n"), "%s", r);
    free(r);
    /* a row per token after the first and per end of generation; fewer passes than rows */
    cr_assert_eq(rows, 19 + 19 + 15 + 10, "rows %llu", rows);
    cr_assert_lt(passes, rows, "passes %llu, rows %llu", passes, rows);
    teardown();
}

/* A counter or gauge of /metrics. */
static unsigned long long metric(const char *name) {
    char *r, key[96];
    cr_assert_eq(http("GET", "/metrics", NULL, &r), 200);
    snprintf(key, sizeof key, "\n%s ", name);
    const char *p = strstr(r, key);
    cr_assert(p, "%s not in %s", name, r);
    unsigned long long v = strtoull(p + strlen(key), NULL, 10);
    free(r);
    return v;
}

/* A prompt that arrives while another request decodes goes through the passes a chunk at a
 * time beside it (--prefill-chunk 4: no pass holds more than its decoding row and 4 prompt
 * rows), only the prompt's last row's logits are asked for, and both answers are whole. */
Test(serve_parallel, prompt_goes_in_chunks_beside_decoding, .timeout = 60) {
    memset(&F, 0, sizeof F);
    F.cycle = 5; /* "a" goes on: abcdeabcde... until max_tokens */
    F.delay_ns = 2000000;
    serve_options o;
    serve_options_default(&o);
    o.parallel = 2;
    o.serial = true;
    o.prefill_chunk = 4;
    char err[128];
    cr_assert_eq(serve_start(&o, &S, err, sizeof err), PACER_OK, "%s", err);
    snprintf(BASE, sizeof BASE, "http://127.0.0.1:%d", serve_port(S));
    set_model();
    pthread_t t;
    pthread_create(&t, NULL, greedy_request, (void *)"{\"prompt\":\"a\",\"max_tokens\":60,\"temperature\":0}");
    for (int i = 0; i < 500 && metric("pacer_decode_rows_total") == 0; i++) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    cr_assert_gt(metric("pacer_decode_rows_total"), 0, "the first request does not decode");
    /* 30 prompt bytes, the last 'v': then "wxyz" and the end of generation */
    char *r;
    cr_assert_eq(http("POST", "/v1/completions", "{\"prompt\":\"0123456789ABCDEFGHIJKLMNOPQRSv\",\"max_tokens\":10,\"temperature\":0}", &r), 200);
    cr_assert(strstr(r, "\"text\":\"wxyz\""), "%s", r);
    free(r);
    void *got;
    pthread_join(t, &got);
    cr_assert(got, "the first request failed");
    cr_assert_eq(strlen(got), 60);
    cr_assert(strncmp(got, "bcdeabcdea", 10) == 0, "%s", (char *)got);
    free(got);
    cr_assert_eq(metric("pacer_decode_prompt_rows_total"), 1 + 30);
    cr_assert_eq(F.max_rows, 1 + 4, "the most rows of a pass: %d", F.max_rows);
    /* logits: every decoding row, and each prompt's last row */
    cr_assert_eq((unsigned long long)F.wanted, metric("pacer_decode_rows_total") + 2);
    teardown();
}

/* A client that sends a streamed request and never reads: once more than unread_max bytes
 * wait for it, its generation stops, its slot frees and its stream ends without [DONE];
 * meanwhile another request is answered. */
Test(serve_parallel, unread_stream_is_cut_off, .timeout = 60) {
    memset(&F, 0, sizeof F);
    F.cycle = 5; /* never ends by itself */
    serve_options o;
    serve_options_default(&o);
    o.parallel = 2;
    o.serial = true;
    o.unread_max = 64 * 1024;
    char err[128];
    cr_assert_eq(serve_start(&o, &S, err, sizeof err), PACER_OK, "%s", err);
    snprintf(BASE, sizeof BASE, "http://127.0.0.1:%d", serve_port(S));
    engine_backend b = fake_backend();
    b.n_ctx = 4096; /* room for ~4000 tokens of ~1 KB events: far more than socket buffers hold */
    serve_model_info info = {.id = "tiny", .path = "", .sha256 = "", .revision = "", .chat = chat_format_by_name("plain")};
    cr_assert_eq(serve_set_model(S, &b, &info), PACER_OK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct timeval tv = {20, 0}; /* a stream that was not cut off stays open: reads time out */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)serve_port(S))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    const char *body = "{\"prompt\":\"a\",\"max_tokens\":4000,\"temperature\":0,\"stream\":true,\"logprobs\":20}";
    char req[512];
    int n = snprintf(req, sizeof req, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
    cr_assert_eq(write(fd, req, (size_t)n), n);
    char *r;
    cr_assert_eq(http("POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":3,\"temperature\":0}", &r), 200);
    cr_assert(strstr(r, "\"text\":\"bcd\""), "%s", r);
    free(r);
    /* the unread stream is cut off long before its 4000 tokens: its slot frees */
    bool freed = false;
    for (int i = 0; i < 400 && !freed; i++) {
        cr_assert_eq(http("GET", "/metrics", NULL, &r), 200);
        freed = strstr(r, "pacer_slots_busy 0\n") != NULL;
        free(r);
        struct timespec ts = {0, 50000000};
        if (!freed) nanosleep(&ts, NULL);
    }
    cr_assert(freed, "the unread stream still holds its slot");
    /* what reached the socket ends without [DONE] */
    buf got;
    buf_init(&got, 64u << 20);
    char chunk[65536];
    ssize_t k;
    while ((k = read(fd, chunk, sizeof chunk)) > 0) buf_append(&got, chunk, (size_t)k);
    close(fd);
    cr_assert(got.len > 0 && strstr(got.data, "data: {"), "nothing was sent");
    cr_assert_null(strstr(got.data, "[DONE]"), "the stream was not cut off");
    buf_free(&got);
    teardown();
}

Test(serve_parallel, bad_parallel_is_refused) {
    serve_options o;
    serve_options_default(&o);
    o.parallel = 0;
    char err[128] = "";
    cr_assert_eq(serve_start(&o, &S, err, sizeof err), PACER_ERR_ARG);
    cr_assert(strstr(err, "parallel"), "%s", err);
    /* more sequences than the backend has */
    o.parallel = 2;
    o.prefill_chunk = 0;
    cr_assert_eq(serve_start(&o, &S, err, sizeof err), PACER_ERR_ARG);
    cr_assert(strstr(err, "prefill chunk"), "%s", err);
    o.prefill_chunk = SERVE_PREFILL_CHUNK;
    o.parallel = FAKE_SEQ + 1;
    cr_assert_eq(serve_start(&o, &S, err, sizeof err), PACER_OK, "%s", err);
    engine_backend b = fake_backend();
    serve_model_info info = {.id = "tiny", .path = "", .sha256 = "", .revision = "", .chat = chat_format_by_name("plain")};
    cr_assert_eq(serve_set_model(S, &b, &info), PACER_ERR_ARG);
    teardown();
}

/* ---- log-probabilities, echo and batches ---- */

/* The scripted model's log-probabilities: the next byte (logit 10) and any other id (0). */
static double lp_next(void) { return 10.0 - log(exp(10.0) + 256.0); }
static double lp_other(void) { return -log(exp(10.0) + 256.0); }

static json_t *post_json(const char *path, const char *body) {
    char *r;
    long code = http("POST", path, body, &r);
    cr_assert_eq(code, 200, "%s -> %ld: %s", body, code, r);
    json_t *v = json_loads(r, JSON_ALLOW_NUL, NULL);
    cr_assert(v, "%s", r);
    free(r);
    return v;
}

static json_t *choice_at(json_t *v, size_t i) { return json_array_get(json_object_get(v, "choices"), i); }

Test(serve_logprobs, echo_lists_the_prompt_then_tokens, .init = setup, .fini = teardown) {
    json_t *v = post_json("/v1/completions",
                          "{\"prompt\":\"abc\",\"echo\":true,\"max_tokens\":2,\"logprobs\":2,\"temperature\":0}");
    json_t *c = choice_at(v, 0), *lp = json_object_get(c, "logprobs");
    cr_assert_str_eq(json_string_value(json_object_get(c, "text")), "abcde");
    json_t *tokens = json_object_get(lp, "tokens"), *lps = json_object_get(lp, "token_logprobs");
    json_t *offs = json_object_get(lp, "text_offset"), *ids = json_object_get(lp, "top_logprob_ids");
    json_t *tops = json_object_get(lp, "top_logprobs");
    cr_assert_eq(json_array_size(tokens), 5);
    cr_assert(json_is_null(json_array_get(lps, 0)), "the first prompt position has no logprob");
    cr_assert(json_is_null(json_array_get(tops, 0)));
    for (size_t i = 0; i < 5; i++) {
        char want[2] = {(char)('a' + i), 0};
        cr_assert_str_eq(json_string_value(json_array_get(tokens, i)), want);
        cr_assert_eq(json_integer_value(json_array_get(offs, i)), (json_int_t)i);
        if (i == 0) continue;
        cr_assert_float_eq(json_real_value(json_array_get(lps, i)), lp_next(), 1e-5);
        json_t *pairs = json_array_get(ids, i);
        cr_assert_eq(json_array_size(pairs), 2);
        cr_assert_eq(json_integer_value(json_array_get(json_array_get(pairs, 0), 0)), 'a' + (json_int_t)i);
        cr_assert_float_eq(json_real_value(json_array_get(json_array_get(pairs, 0), 1)), lp_next(), 1e-5);
        cr_assert_eq(json_integer_value(json_array_get(json_array_get(pairs, 1), 0)), 0, "ties go to the lower id");
        cr_assert_float_eq(json_real_value(json_array_get(json_array_get(pairs, 1), 1)), lp_other(), 1e-5);
        char key[2] = {(char)('a' + i), 0};
        cr_assert_float_eq(json_real_value(json_object_get(json_array_get(tops, i), key)), lp_next(), 1e-5);
    }
    json_decref(v);
}

Test(serve_logprobs, echo_with_no_tokens_and_no_logprobs, .init = setup, .fini = teardown) {
    json_t *v = post_json("/v1/completions", "{\"prompt\":[104,105],\"echo\":true,\"max_tokens\":0,\"logprobs\":0}");
    json_t *c = choice_at(v, 0), *lp = json_object_get(c, "logprobs");
    cr_assert_str_eq(json_string_value(json_object_get(c, "text")), "hi");
    cr_assert_str_eq(json_string_value(json_object_get(c, "finish_reason")), "length");
    cr_assert_eq(json_array_size(json_object_get(lp, "tokens")), 2);
    cr_assert_eq(json_array_size(json_array_get(json_object_get(lp, "top_logprob_ids"), 1)), 0);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "usage"), "completion_tokens")), 0);
    json_decref(v);
    v = post_json("/v1/completions", "{\"prompt\":\"hi\",\"echo\":true,\"max_tokens\":1,\"temperature\":0}");
    c = choice_at(v, 0);
    cr_assert_str_eq(json_string_value(json_object_get(c, "text")), "hij");
    cr_assert(json_is_null(json_object_get(c, "logprobs")));
    json_decref(v);
}

Test(serve_logprobs, sampling_does_not_change_them, .init = setup, .fini = teardown) {
    json_t *g = post_json("/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":3,\"logprobs\":1,\"temperature\":0}");
    json_t *t = post_json("/v1/completions",
                          "{\"prompt\":\"a\",\"max_tokens\":3,\"logprobs\":1,\"temperature\":7,\"top_k\":1,\"top_p\":0.5}");
    json_t *a = json_object_get(json_object_get(choice_at(g, 0), "logprobs"), "token_logprobs");
    json_t *b = json_object_get(json_object_get(choice_at(t, 0), "logprobs"), "token_logprobs");
    cr_assert_eq(json_array_size(a), 3);
    cr_assert(json_equal(a, b));
    cr_assert_float_eq(json_real_value(json_array_get(b, 0)), lp_next(), 1e-5);
    json_decref(g);
    json_decref(t);
}

Test(serve_logprobs, echo_bypasses_the_prompt_cache, .init = setup, .fini = teardown) {
    const char *body = "{\"prompt\":\"abcdef\",\"echo\":true,\"max_tokens\":1,\"logprobs\":3,\"temperature\":0}";
    json_t *v1 = post_json("/v1/completions", body);
    F.all_rows = 0;
    json_t *v2 = post_json("/v1/completions", body);
    cr_assert_eq(F.all_rows, 6, "every prompt row is evaluated again");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v2, "timings"), "prompt_n")), 6);
    cr_assert(json_equal(json_object_get(choice_at(v1, 0), "logprobs"), json_object_get(choice_at(v2, 0), "logprobs")));
    json_decref(v1);
    json_decref(v2);
}

Test(serve_logprobs, batch_answers_in_order, .init = setup, .fini = teardown) {
    json_t *v = post_json("/v1/completions",
                          "{\"prompt\":[\"a\",[120,121],\"m\"],\"max_tokens\":2,\"temperature\":0,\"logprobs\":1}");
    json_t *ch = json_object_get(v, "choices");
    cr_assert_eq(json_array_size(ch), 3);
    const char *texts[] = {"bc", "z", "no"}, *fin[] = {"length", "stop", "length"};
    size_t ntok[] = {2, 1, 2};
    for (size_t i = 0; i < 3; i++) {
        json_t *c = json_array_get(ch, i);
        cr_assert_eq(json_integer_value(json_object_get(c, "index")), (json_int_t)i);
        cr_assert_str_eq(json_string_value(json_object_get(c, "text")), texts[i]);
        cr_assert_str_eq(json_string_value(json_object_get(c, "finish_reason")), fin[i]);
        cr_assert_eq(json_array_size(json_object_get(json_object_get(c, "logprobs"), "tokens")), ntok[i]);
    }
    json_t *u = json_object_get(v, "usage");
    cr_assert_eq(json_integer_value(json_object_get(u, "prompt_tokens")), 4);
    cr_assert_eq(json_integer_value(json_object_get(u, "completion_tokens")), 5);
    json_decref(v);
    char *r;
    cr_assert_eq(http("POST", "/v1/completions",
                      "{\"prompt\":[[97],[109]],\"max_tokens\":2,\"temperature\":0,\"stream\":true,\"echo\":true}", &r),
                 200);
    const char *c0 = strstr(r, "\"index\":0"), *f0 = strstr(r, "\"finish_reason\":\"length\"");
    const char *c1 = strstr(r, "\"index\":1");
    cr_assert(c0 && f0 && c1 && c0 < f0 && f0 < c1 && strstr(r, "data: [DONE]"), "%s", r);
    cr_assert(strstr(r, "\"text\":\"m\""), "the second prompt is echoed: %s", r);
    free(r);
}

Test(serve_logprobs, bad_requests, .init = setup, .fini = teardown) {
    char *r;
    cr_assert_eq(http("POST", "/v1/completions", "{\"prompt\":[[1,2],[3,999]]}", &r), 400);
    cr_assert(strstr(r, "prompt[1][1]"), "%s", r);
    free(r);
    expect_error("POST", "/v1/completions", "{\"prompt\":[]}", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":[\"a\",5]}", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":[\"a\",[]]}", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":\"a\",\"logprobs\":21}", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":\"a\",\"logprobs\":true}", 400);
    expect_error("POST", "/v1/completions", "{\"prompt\":\"a\",\"echo\":1}", 400);
    expect_error("POST", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"top_logprobs\":2}", 400);
    expect_error("POST", "/v1/chat/completions",
                 "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"logprobs\":true,\"top_logprobs\":21}", 400);
    expect_error("POST", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"logprobs\":3}", 400);
}

/* Counts chat logprobs entries over every chunk of an SSE body. */
static size_t sse_chat_entries(const char *sse, size_t *tokens) {
    size_t n = 0;
    *tokens = 0;
    for (const char *p = strstr(sse, "data: {"); p; p = strstr(p + 1, "data: {")) {
        json_t *v = json_loadb(p + 6, strcspn(p + 6, "\n"), JSON_ALLOW_NUL, NULL);
        cr_assert(v);
        json_t *c = choice_at(v, 0);
        json_t *content = json_object_get(json_object_get(c, "logprobs"), "content");
        n += json_array_size(content);
        json_t *u = json_object_get(v, "usage");
        if (u) *tokens = (size_t)json_integer_value(json_object_get(u, "completion_tokens"));
        json_decref(v);
    }
    return n;
}

Test(serve_logprobs, chat_body_and_stream, .init = setup, .fini = teardown) {
    json_t *v = post_json("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"max_tokens\":4,"
                                                   "\"temperature\":0,\"logprobs\":true,\"top_logprobs\":3}");
    json_t *content = json_object_get(json_object_get(choice_at(v, 0), "logprobs"), "content");
    cr_assert_eq(json_array_size(content), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *e = json_array_get(content, i);
        cr_assert(json_is_string(json_object_get(e, "token")));
        cr_assert_float_eq(json_real_value(json_object_get(e, "logprob")), lp_next(), 1e-5);
        cr_assert_eq(json_array_size(json_object_get(e, "bytes")), 1);
        cr_assert_eq(json_array_size(json_object_get(e, "top_logprobs")), 3);
    }
    json_decref(v);
    char *r;
    cr_assert_eq(http("POST", "/v1/chat/completions",
                      "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"max_tokens\":5,\"temperature\":0,"
                      "\"logprobs\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}", &r), 200);
    size_t tokens = 0, entries = sse_chat_entries(r, &tokens);
    cr_assert_eq(tokens, 5, "%s", r);
    cr_assert_eq(entries, tokens, "one logprobs entry per generated token: %s", r);
    free(r);
}

Test(serve_logprobs, partial_utf8_token_names_its_bytes, .init = setup, .fini = teardown) {
    /* 0xE2 alone is part of a character: named "bytes:\xe2" with its raw byte in chat */
    json_t *v = post_json("/v1/completions", "{\"prompt\":[225],\"max_tokens\":1,\"logprobs\":0,\"temperature\":0}");
    json_t *tokens = json_object_get(json_object_get(choice_at(v, 0), "logprobs"), "tokens");
    cr_assert_str_eq(json_string_value(json_array_get(tokens, 0)), "bytes:\\xe2");
    json_decref(v);
}

/* ---- drafting ---- */

/* A drafter that follows the script except after 'c', where it guesses 'x': its rounds see
 * both accepted and rejected drafts. */
static pacer_err drafter_eval(void *ctx, const int32_t *tokens, int n, int pos, float *logits, bool all_logits) {
    const fake *f = ctx;
    (void)pos;
    if (!logits) return PACER_OK;
    for (int i = all_logits ? 0 : n - 1; i < n; i++) {
        float *row = logits + (size_t)(all_logits ? i : 0) * 257;
        fake_row(f, tokens[i], row);
        if (tokens[i] == 'c') {
            for (int j = 0; j < 257; j++) row[j] = 0;
            row['x'] = 10;
        }
    }
    return PACER_OK;
}

typedef struct drafted {
    char *text, *hash;
    json_int_t predicted_n, draft_n, draft_n_accepted, verify_rounds;
} drafted;

/* One request on a fresh server: serial, n-gram lookup, or the scripted drafter. */
static drafted run_drafting(const char *mode, int cycle, const char *body) {
    memset(&F, 0, sizeof F);
    F.cycle = cycle;
    serve_options o;
    serve_options_default(&o);
    o.serial = strcmp(mode, "serial") == 0;
    char err[128];
    cr_assert_eq(serve_start(&o, &S, err, sizeof err), PACER_OK, "%s", err);
    snprintf(BASE, sizeof BASE, "http://127.0.0.1:%d", serve_port(S));
    engine_backend b = fake_backend();
    engine_backend d = {.ctx = &F, .n_vocab = 257, .n_ctx = 64, .eval = drafter_eval};
    serve_model_info info = {.id = "tiny", .path = "dir/tiny.gguf", .sha256 = "ab", .revision = "",
                             .chat = chat_format_by_name("plain")};
    if (strcmp(mode, "drafter") == 0) info.drafter = &d;
    cr_assert_eq(serve_set_model(S, &b, &info), PACER_OK);
    char *r;
    cr_assert_eq(http("POST", "/v1/completions", body, &r), 200, "%s", r);
    json_t *v = json_loads(r, JSON_ALLOW_NUL, NULL), *t = json_object_get(v, "timings"); /* sampled bytes may be 0 */
    cr_assert(v, "%s", r);
    drafted out = {
        strdup(json_string_value(json_object_get(json_array_get(json_object_get(v, "choices"), 0), "text"))),
        strdup(json_string_value(json_object_get(v, "token_hash"))),
        json_integer_value(json_object_get(t, "predicted_n")), json_integer_value(json_object_get(t, "draft_n")),
        json_integer_value(json_object_get(t, "draft_n_accepted")), json_integer_value(json_object_get(t, "verify_rounds"))};
    json_decref(v);
    free(r);
    cr_assert_eq(http("GET", "/v1/benchmark/manifest", NULL, &r), 200);
    v = json_loads(r, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(v, "drafting")), mode, "%s", r);
    json_decref(v);
    free(r);
    teardown();
    return out;
}

static void drafted_free(drafted *d) { free(d->text); free(d->hash); }

Test(serve_drafting, greedy_output_identical_in_every_mode, .timeout = 60) {
    /* a repetitive text; max_tokens 40, then the context (64) cuts a longer request */
    const char *bodies[] = {"{\"prompt\":\"abcdeabc\",\"max_tokens\":40,\"temperature\":0}",
                            "{\"prompt\":\"abcdeabc\",\"max_tokens\":100,\"temperature\":0}",
                            "{\"prompt\":\"abcdeabc\",\"max_tokens\":30,\"temperature\":0,\"stop\":\"eab\"}"};
    const json_int_t want_n[] = {40, 64 - 8, 30};
    for (int i = 0; i < 3; i++) {
        drafted serial = run_drafting("serial", 5, bodies[i]);
        drafted lookup = run_drafting("lookup", 5, bodies[i]);
        drafted model = run_drafting("drafter", 5, bodies[i]);
        if (i < 2) {
            cr_assert_eq(serial.predicted_n, want_n[i]);
            cr_assert_eq(strncmp(serial.text, "deabcdeabc", 10), 0, "%s", serial.text);
        } else {
            cr_assert_str_eq(serial.text, "d"); /* "d" then the stop string */
        }
        cr_assert_eq(serial.draft_n, 0);
        cr_assert_eq(serial.verify_rounds, serial.predicted_n - 1);
        for (drafted *d = &lookup; d <= &model; d += &model - &lookup) {
            cr_assert_str_eq(d->text, serial.text);
            cr_assert_str_eq(d->hash, serial.hash);
            cr_assert_eq(d->predicted_n, serial.predicted_n);
        }
        if (i < 2) {
            /* lookup drafts the cycle and the script always agrees */
            cr_assert_gt(lookup.draft_n_accepted, 0);
            cr_assert_eq(lookup.draft_n_accepted, lookup.draft_n);
            cr_assert_lt(lookup.verify_rounds, serial.verify_rounds / 2);
            /* the drafter is wrong after every 'c' */
            cr_assert_gt(model.draft_n_accepted, 0);
            cr_assert_lt(model.draft_n_accepted, model.draft_n);
            cr_assert_lt(model.verify_rounds, serial.verify_rounds);
        }
        drafted_free(&serial);
        drafted_free(&lookup);
        drafted_free(&model);
    }
}

Test(serve_drafting, sampled_is_seeded_per_mode, .timeout = 60) {
    /* at temperature 2 the scripted byte has about 37%: drafts are accepted and rejected */
    const char *body = "{\"prompt\":\"abcdeabc\",\"max_tokens\":40,\"temperature\":2,\"seed\":11}";
    const char *modes[] = {"serial", "lookup", "drafter"};
    for (int m = 0; m < 3; m++) {
        drafted a = run_drafting(modes[m], 5, body), b = run_drafting(modes[m], 5, body);
        cr_assert_str_eq(a.hash, b.hash, "%s", modes[m]);
        cr_assert_eq(a.draft_n, b.draft_n);
        cr_assert_eq(a.predicted_n, b.predicted_n);
        cr_assert_geq(a.draft_n, a.draft_n_accepted);
        drafted_free(&a);
        drafted_free(&b);
    }
}

Test(serve_drafting, drafter_must_share_the_vocabulary) {
    start(0, -1);
    engine_backend b = fake_backend();
    engine_backend d = {.ctx = &F, .n_vocab = 300, .n_ctx = 64, .eval = drafter_eval};
    serve_model_info info = {.id = "tiny", .path = "", .sha256 = "", .revision = "", .chat = chat_format_by_name("plain"),
                             .drafter = &d};
    cr_assert_eq(serve_set_model(S, &b, &info), PACER_ERR_ARG);
    teardown();
}
