/* bench_sse.c - throughput of the SSE parser (MB/s, events/s) on a large generated
 * OpenAI-style transcript fed in 16 KiB pieces, and the same with each event's JSON parsed
 * by jansson: the whole object, or the attempt's fast path (json_skim_object() checks the
 * whole event without building it, jansson decodes only the "choices" value). Prints
 * figures; asserts nothing. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/json.h"
#include "net/sse.h"

#define BENCH_EVENTS 400000
#define BENCH_PIECE 16384

typedef struct counter {
    long events;
    size_t bytes;
    int parse_json; /* 0 none, 1 the whole object, 2 skim + "choices" (attempt's fast path) */
} counter;

static pacer_err on_event(void *ctx, const sse_event *ev) {
    counter *c = ctx;
    c->events++;
    c->bytes += ev->data_len;
    if (c->parse_json && !ev->done) {
        const char *d = ev->data;
        size_t n = ev->data_len;
        if (c->parse_json == 2) {
            size_t at, len;
            if (!json_skim_object(d, n, "choices", &at, &len) || !len) return PACER_ERR_PARSE;
            d += at;
            n = len;
        }
        json_t *j = json_loadb(d, n, 0, NULL);
        if (!j) return PACER_ERR_PARSE;
        json_decref(j);
    }
    return PACER_OK;
}

static double run(const buf *t, int parse_json, long *events) {
    counter c = {.parse_json = parse_json};
    sse_parser p;
    sse_parser_init(&p, 0, on_event, NULL, &c);
    int64_t t0 = clock_now_ns();
    for (size_t at = 0; at < t->len; at += BENCH_PIECE) {
        size_t n = t->len - at < BENCH_PIECE ? t->len - at : BENCH_PIECE;
        if (sse_parser_feed(&p, t->data + at, n)) break;
    }
    sse_parser_finish(&p, NULL);
    int64_t dt = clock_now_ns() - t0;
    sse_parser_free(&p);
    *events = c.events;
    return (double)dt / 1e9;
}

int main(void) {
    buf t;
    buf_init(&t, (size_t)1 << 30);
    for (long i = 0; i < BENCH_EVENTS; i++)
        buf_appendf(&t, "data: {\"id\":\"cmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
                        "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok%ld\"},\"finish_reason\":null}]}\r\n\r\n", i);
    buf_append_str(&t, "data: [DONE]\n\n");
    double mb = (double)t.len / 1e6;
    static const char *const names[] = {"parser", "parser+jansson", "parser+skim+choices"};
    for (int pass = 0; pass < 3; pass++) {
        long events = 0;
        double best = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            double s = run(&t, pass, &events);
            if (s < best) best = s;
        }
        printf("sse %-14s %.1f MB, %ld events: %8.1f MB/s  %10.0f events/s  %.3f us/event\n",
               names[pass], mb, events, mb / best, (double)events / best,
               best * 1e6 / (double)events);
    }
    buf_free(&t);
    return 0;
}
