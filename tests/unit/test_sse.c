/* test_sse.c - net/sse: every transcript gives the same events whether fed whole, split at
 * every byte offset, or byte by byte; field rules, line ends, BOM, [DONE], the size cap. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "net/sse.h"

typedef struct record {
    buf out; /* one line per event or comment: kind|event|id|done|data */
} record;

static pacer_err rec_event(void *ctx, const sse_event *ev) {
    record *r = ctx;
    cr_assert_eq(strlen(ev->data), ev->data_len);
    buf_appendf(&r->out, "E|%s|%s|%d|", ev->event, ev->id, ev->done);
    buf_append(&r->out, ev->data, ev->data_len);
    buf_append_str(&r->out, "\n");
    return PACER_OK;
}

static void rec_comment(void *ctx, const char *text, size_t len) {
    record *r = ctx;
    buf_append_str(&r->out, "C|");
    buf_append(&r->out, text, len);
    buf_append_str(&r->out, "\n");
}

/* Feeds `s` in pieces cut at the offsets in cuts (ascending, ncut of them); returns the record. */
static char *feed_cuts(const char *s, size_t n, const size_t *cuts, size_t ncut, size_t cap, pacer_err *err, bool *pending) {
    record r;
    buf_init(&r.out, 1 << 20);
    sse_parser p;
    sse_parser_init(&p, cap, rec_event, rec_comment, &r);
    size_t at = 0;
    pacer_err rc = PACER_OK;
    for (size_t i = 0; i <= ncut && !rc; i++) {
        size_t to = i < ncut ? cuts[i] : n;
        rc = sse_parser_feed(&p, s + at, to - at);
        at = to;
    }
    pacer_err rc2 = sse_parser_finish(&p, pending);
    if (!rc) rc = rc2;
    sse_parser_free(&p);
    *err = rc;
    char *res = buf_detach(&r.out);
    return res;
}

/* Checks one transcript: whole, every single split, byte by byte; returns the whole-feed record. */
static char *check_all_splits(const char *s, size_t n, size_t cap, pacer_err want_err) {
    pacer_err err;
    bool pending;
    char *whole = feed_cuts(s, n, NULL, 0, cap, &err, &pending);
    cr_assert_eq(err, want_err, "whole: err %d want %d", err, want_err);
    for (size_t k = 0; k <= n; k++) {
        char *got = feed_cuts(s, n, &k, 1, cap, &err, &pending);
        cr_assert_eq(err, want_err, "split at %zu: err %d", k, err);
        cr_assert_str_eq(got, whole, "split at %zu", k);
        free(got);
    }
    size_t *cuts = malloc((n + 1) * sizeof *cuts);
    for (size_t k = 0; k < n; k++) cuts[k] = k;
    char *bytes = feed_cuts(s, n, cuts, n, cap, &err, &pending);
    free(cuts);
    cr_assert_eq(err, want_err);
    cr_assert_str_eq(bytes, whole, "byte by byte");
    free(bytes);
    return whole;
}

typedef struct transcript {
    const char *name;
    const char *text;
    const char *want;
} transcript;

static const transcript transcripts[] = {
    {"openai", "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n",
     "E|||0|{\"a\":1}\nE|||0|{\"b\":2}\nE|||1|[DONE]\n"},
    {"multiline", "data: one\ndata: two\ndata:three\n\n", "E|||0|one\ntwo\nthree\n"},
    {"crlf", "data: a\r\n\r\ndata: b\r\ndata: c\r\n\r\n", "E|||0|a\nE|||0|b\nc\n"},
    {"cr", "data: a\r\rdata: b\r\r", "E|||0|a\nE|||0|b\n"},
    {"mixed", "data: a\r\n\ndata: b\r\r\ndata: c\n\r", "E|||0|a\nE|||0|b\nE|||0|c\n"},
    {"bom", "\xEF\xBB\xBF" "data: x\n\n", "E|||0|x\n"},
    {"bom_once", "\xEF\xBB\xBF" "\xEF\xBB\xBF" "data: x\n\ndata: y\n\n", "E|||0|y\n"},
    {"comments", ": ping\n:\ndata: x\n: inside\n\n", "C| ping\nC|\nC| inside\nE|||0|x\n"},
    {"fields", "event: delta\nid: 7\ndata: x\n\ndata: y\n\nid\ndata: z\n\n",
     "E|delta|7|0|x\nE||7|0|y\nE|||0|z\n"},
    {"no_space", "data:x\n\ndata:  two spaces\n\n", "E|||0|x\nE|||0| two spaces\n"},
    {"empty_data", "data\n\ndata:\n\n", "E|||0|\nE|||0|\n"},
    {"no_data", "event: x\n\nretry: 10\nfoo: bar\n\ndata: y\n\n", "E|||0|y\n"},
    {"utf8", "data: {\"t\":\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"}\n\n", "E|||0|{\"t\":\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"}\n"},
    {"done_not_exact", "data: [DONE] \n\ndata: [DONE]x\n\n", "E|||0|[DONE] \nE|||0|[DONE]x\n"},
    {"unterminated", "data: a\n\ndata: b", "E|||0|a\n"},
};

Test(sse, transcripts_every_split) {
    for (size_t i = 0; i < sizeof transcripts / sizeof transcripts[0]; i++) {
        const transcript *t = &transcripts[i];
        char *got = check_all_splits(t->text, strlen(t->text), 0, PACER_OK);
        cr_assert_str_eq(got, t->want, "transcript %s", t->name);
        free(got);
    }
}

Test(sse, pending_at_finish) {
    pacer_err err;
    bool pending = false;
    const char *s = "data: a\n\ndata: b";
    free(feed_cuts(s, strlen(s), NULL, 0, 0, &err, &pending));
    cr_assert(pending);
    s = "data: a\n\n";
    free(feed_cuts(s, strlen(s), NULL, 0, 0, &err, &pending));
    cr_assert(!pending);
}

Test(sse, cap_is_an_error_at_every_split) {
    /* 40 bytes of data with a cap of 16: an error however the bytes arrive */
    const char *s = "data: ok\n\ndata: 0123456789012345678901234567890123456789\n\n";
    char *got = check_all_splits(s, strlen(s), 16, PACER_ERR_TOO_BIG);
    cr_assert_str_eq(got, "E|||0|ok\n");
    free(got);
    /* many short data lines add up to the cap as well */
    char big[400] = "";
    for (int i = 0; i < 30; i++) strcat(big, "data: 12345\n");
    strcat(big, "\n");
    got = check_all_splits(big, strlen(big), 64, PACER_ERR_TOO_BIG);
    cr_assert_str_eq(got, "");
    free(got);
}

Test(sse, cap_bounds_memory_of_endless_line) {
    record r;
    buf_init(&r.out, 1024);
    sse_parser p;
    sse_parser_init(&p, 4096, rec_event, NULL, &r);
    char chunk[1000];
    memset(chunk, 'a', sizeof chunk);
    pacer_err rc = PACER_OK;
    int fed = 0;
    while (!rc && fed < 100) rc = sse_parser_feed(&p, chunk, sizeof chunk), fed++;
    cr_assert_eq(rc, PACER_ERR_TOO_BIG);
    cr_assert_leq(fed, 5);
    cr_assert_leq(p.line.cap, 4097);
    cr_assert_eq(sse_parser_feed(&p, "\n\n", 2), PACER_ERR_TOO_BIG, "errors are sticky");
    sse_parser_free(&p);
    buf_free(&r.out);
}

static pacer_err stop_after_one(void *ctx, const sse_event *ev) {
    int *n = ctx;
    (*n)++;
    return PACER_ERR_CANCELLED;
}

Test(sse, callback_error_stops) {
    int n = 0;
    sse_parser p;
    sse_parser_init(&p, 0, stop_after_one, NULL, &n);
    cr_assert_eq(sse_parser_feed(&p, "data: a\n\ndata: b\n\n", 18), PACER_ERR_CANCELLED);
    cr_assert_eq(n, 1);
    sse_parser_free(&p);
}
