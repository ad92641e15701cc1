/* sse.c - incremental Server-Sent Events parser following the WHATWG event-stream rules:
 * lines end in LF, CR or CRLF; a blank line dispatches; "data", "event", "id" fields;
 * ":" comments; one leading BOM ignored. Complete lines are parsed in place. */
#include "net/sse.h"

#include <string.h>

#define SSE_DEFAULT_MAX (1u << 20)

void sse_parser_init(sse_parser *p, size_t max_event, sse_event_fn on_event, sse_comment_fn on_comment, void *ctx) {
    memset(p, 0, sizeof *p);
    p->on_event = on_event;
    p->on_comment = on_comment;
    p->ctx = ctx;
    p->max_event = max_event ? max_event : SSE_DEFAULT_MAX;
    /* data holds the lines plus their joining newlines; the line buffer the same cap */
    buf_init(&p->line, p->max_event + 1);
    buf_init(&p->data, p->max_event + 1);
    buf_init(&p->event, 256);
    buf_init(&p->id, 256);
}

void sse_parser_free(sse_parser *p) {
    if (!p) return;
    buf_free(&p->line);
    buf_free(&p->data);
    buf_free(&p->event);
    buf_free(&p->id);
}

static pacer_err sse_dispatch(sse_parser *p) {
    pacer_err rc = PACER_OK;
    if (p->has_data) {
        if (p->data.len && p->data.data[p->data.len - 1] == '\n') p->data.data[--p->data.len] = '\0';
        sse_event ev = {
            .data = p->data.data ? p->data.data : "",
            .data_len = p->data.len,
            .event = p->event.data ? p->event.data : "",
            .event_len = p->event.len,
            .id = p->id.data ? p->id.data : "",
            .id_len = p->id.len,
        };
        ev.done = ev.data_len == 6 && memcmp(ev.data, "[DONE]", 6) == 0;
        p->events++;
        rc = p->on_event(p->ctx, &ev);
    }
    buf_reset(&p->data);
    buf_reset(&p->event);
    p->has_data = false;
    return rc;
}

/* Handles one complete line (without its terminator). */
static pacer_err sse_line(sse_parser *p, const char *s, size_t n) {
    if (n == 0) return sse_dispatch(p);
    if (s[0] == ':') {
        if (p->on_comment) p->on_comment(p->ctx, s + 1, n - 1);
        return PACER_OK;
    }
    const char *colon = memchr(s, ':', n);
    size_t name_len = colon ? (size_t)(colon - s) : n;
    const char *val = colon ? colon + 1 : s + n;
    size_t val_len = (size_t)(s + n - val);
    if (val_len && val[0] == ' ') val++, val_len--;
    pacer_err rc = PACER_OK;
    if (name_len == 4 && memcmp(s, "data", 4) == 0) {
        if (p->data.len + val_len + 1 > p->max_event) return PACER_ERR_TOO_BIG;
        rc = buf_reserve(&p->data, val_len + 1);
        if (rc) return rc;
        memcpy(p->data.data + p->data.len, val, val_len);
        p->data.len += val_len;
        p->data.data[p->data.len++] = '\n';
        p->data.data[p->data.len] = '\0';
        p->has_data = true;
    } else if (name_len == 5 && memcmp(s, "event", 5) == 0) {
        buf_reset(&p->event);
        rc = buf_append(&p->event, val, val_len);
    } else if (name_len == 2 && memcmp(s, "id", 2) == 0) {
        if (!memchr(val, '\0', val_len)) {
            buf_reset(&p->id);
            rc = buf_append(&p->id, val, val_len);
        }
    }
    /* "retry" and unknown fields are ignored, as the standard says */
    return rc;
}

/* Finds the end of the line starting at s: the first CR or LF, or NULL. */
static const char *sse_find_eol(const char *s, size_t n) {
    const char *lf = memchr(s, '\n', n);
    size_t scan = lf ? (size_t)(lf - s) : n;
    const char *cr = memchr(s, '\r', scan);
    return cr ? cr : lf;
}

static pacer_err sse_feed_body(sse_parser *p, const char *s, size_t n) {
    pacer_err rc = PACER_OK;
    const char *end = s + n;
    if (p->skip_lf && s < end) {
        if (*s == '\n') s++;
        p->skip_lf = false;
    }
    while (s < end) {
        const char *eol = sse_find_eol(s, (size_t)(end - s));
        if (!eol) {
            /* partial line: keep it for the next piece, within the cap */
            size_t rest = (size_t)(end - s);
            if (p->line.len + rest + p->data.len > p->max_event) return PACER_ERR_TOO_BIG;
            return buf_append(&p->line, s, rest);
        }
        size_t len = (size_t)(eol - s);
        if (p->line.len) {
            if (p->line.len + len + p->data.len > p->max_event) return PACER_ERR_TOO_BIG;
            rc = buf_append(&p->line, s, len);
            if (rc) return rc;
            /* the line buffer may be reused while handling: hand over a stable copy */
            rc = sse_line(p, p->line.data, p->line.len);
            buf_reset(&p->line);
        } else {
            if (len + p->data.len > p->max_event) return PACER_ERR_TOO_BIG;
            rc = sse_line(p, s, len);
        }
        if (rc) return rc;
        s = eol + 1;
        if (*eol == '\r') {
            if (s == end) p->skip_lf = true;
            else if (*s == '\n') s++;
        }
    }
    return rc;
}

static const unsigned char sse_bom[3] = {0xEF, 0xBB, 0xBF};

pacer_err sse_parser_feed(sse_parser *p, const char *bytes, size_t n) {
    if (p->err) return p->err;
    pacer_err rc = PACER_OK;
    /* a leading BOM may itself arrive split: match it byte by byte */
    while (p->bom_seen < 3 && n > 0) {
        if ((unsigned char)bytes[0] == sse_bom[p->bom_seen]) {
            p->bom_seen++;
            bytes++, n--;
            continue;
        }
        /* not a BOM after all: the matched prefix is ordinary content */
        unsigned matched = p->bom_seen;
        p->bom_seen = 3;
        if (matched) rc = sse_feed_body(p, (const char *)sse_bom, matched);
        if (rc) goto out;
    }
    if (n) rc = sse_feed_body(p, bytes, n);
out:
    p->err = rc;
    return rc;
}

pacer_err sse_parser_finish(sse_parser *p, bool *pending) {
    bool left = p->line.len > 0 || p->has_data || (p->bom_seen > 0 && p->bom_seen < 3);
    if (pending) *pending = left && !p->err;
    buf_reset(&p->line);
    buf_reset(&p->data);
    p->has_data = false;
    return p->err;
}
