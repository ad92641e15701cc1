/* sse.h - incremental Server-Sent Events parser (pure: bytes in, events out, no I/O).
 * Bytes may arrive in pieces of any size, split anywhere (inside a line, a CRLF or a BOM);
 * the events are the same whatever the split. An event bigger than the cap is an error. */
#ifndef PACER_SSE_H
#define PACER_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

/* One dispatched event. Pointers are valid only during the callback. */
typedef struct sse_event {
    const char *data;   /* data lines joined by '\n' (NUL-terminated), never NULL */
    size_t data_len;
    const char *event;  /* value of the last "event:" field, "" when none */
    size_t event_len;
    const char *id;     /* last event id seen in the stream (persists across events), "" when none */
    size_t id_len;
    bool done;          /* data is exactly "[DONE]" (OpenAI end-of-stream marker) */
} sse_event;

/* Called for each event; a non-OK return stops parsing and is returned by sse_parser_feed(). */
typedef pacer_err (*sse_event_fn)(void *ctx, const sse_event *ev);
/* Called for each comment line (":" prefix), text without the colon; may be NULL. */
typedef void (*sse_comment_fn)(void *ctx, const char *text, size_t len);

typedef struct sse_parser {
    sse_event_fn on_event;
    sse_comment_fn on_comment;
    void *ctx;
    size_t max_event;     /* cap on one event: its data plus any pending line */
    buf line;             /* a line split across feeds */
    buf data;             /* data of the event being built */
    buf event;            /* event type of the event being built */
    buf id;               /* last event id */
    bool has_data;        /* a data field was seen for the event being built */
    bool skip_lf;         /* the previous piece ended in CR: a leading LF belongs to it */
    unsigned bom_seen;    /* BOM bytes matched at stream start (3 = decided) */
    pacer_err err;        /* sticky error: once set, every feed returns it */
    size_t events;        /* events dispatched so far */
} sse_parser;

/* Prepares a parser; `max_event` caps one event's size in bytes (0 picks 1 MiB).
 * Allocates nothing until bytes are fed. */
void sse_parser_init(sse_parser *p, size_t max_event, sse_event_fn on_event, sse_comment_fn on_comment, void *ctx);
/* Frees the parser's storage. Accepts NULL. */
void sse_parser_free(sse_parser *p);
/* Feeds `n` bytes. Returns PACER_OK, PACER_ERR_TOO_BIG when an event passed the cap,
 * PACER_ERR_NOMEM, or the first non-OK value a callback returned. Errors are sticky. */
pacer_err sse_parser_feed(sse_parser *p, const char *bytes, size_t n);
/* Ends the stream. An unterminated last event is discarded (as the SSE standard says);
 * returns true in *pending when bytes of one were still waiting (a truncated stream). */
pacer_err sse_parser_finish(sse_parser *p, bool *pending);

#endif
