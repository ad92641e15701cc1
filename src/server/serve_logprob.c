/* serve_logprob.c - log-probability entries as OpenAI's JSON. A token whose bytes are not
 * valid UTF-8 on their own (part of a character) is named "bytes:\xe2\x80" as OpenAI's legacy
 * API does, since JSON strings cannot hold the raw bytes; chat's `bytes` carries them exactly. */
#include "server/serve_logprob.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "engine/gen_text.h"

/* The token's display string into `out` (reset first). */
static pacer_err token_string(const engine_backend *b, int32_t tok, buf *out) {
    size_t len = 0;
    const char *p = b->piece(b->ctx, tok, &len);
    buf_reset(out);
    pacer_err rc = gen_utf8_sanitize_append(p, len, out);
    if (rc || (out->len == len && memcmp(out->data ? out->data : "", p, len) == 0)) return rc;
    buf_reset(out);
    if ((rc = buf_append_str(out, "bytes:"))) return rc;
    for (size_t i = 0; i < len && !rc; i++) rc = buf_appendf(out, "\\x%02x", (unsigned char)p[i]);
    return rc;
}

/* Characters the token adds to the text: bytes that do not continue a UTF-8 sequence. */
static int64_t piece_chars(const engine_backend *b, int32_t tok) {
    size_t len = 0;
    const unsigned char *p = (const unsigned char *)b->piece(b->ctx, tok, &len);
    int64_t n = 0;
    for (size_t i = 0; i < len; i++) n += (p[i] & 0xC0) != 0x80;
    return n;
}

static json_t *piece_bytes(const engine_backend *b, int32_t tok) {
    size_t len = 0;
    const unsigned char *p = (const unsigned char *)b->piece(b->ctx, tok, &len);
    json_t *a = json_array();
    for (size_t i = 0; a && i < len; i++) json_array_append_new(a, json_integer(p[i]));
    return a;
}

json_t *serve_logprobs_completion(const engine_backend *b, const logprob_entry *e, int n, int64_t *text_offset) {
    json_t *o = json_pack("{s:[],s:[],s:[],s:[],s:[]}", "tokens", "token_logprobs", "top_logprobs", "text_offset",
                          "top_logprob_ids");
    if (!o) return NULL;
    json_t *tokens = json_object_get(o, "tokens"), *lps = json_object_get(o, "token_logprobs");
    json_t *tops = json_object_get(o, "top_logprobs"), *offs = json_object_get(o, "text_offset");
    json_t *top_ids = json_object_get(o, "top_logprob_ids");
    buf s;
    buf_init(&s, 1u << 16);
    pacer_err rc = PACER_OK;
    for (int i = 0; i < n && !rc; i++) {
        if ((rc = token_string(b, e[i].id, &s))) break;
        json_array_append_new(tokens, json_stringn(s.data ? s.data : "", s.len));
        json_array_append_new(offs, json_integer(*text_offset));
        *text_offset += piece_chars(b, e[i].id);
        if (!e[i].has_logprob) {
            /* the first prompt position: nothing predicts it (OpenAI answers null) */
            json_array_append_new(lps, json_null());
            json_array_append_new(tops, json_null());
            json_array_append_new(top_ids, json_null());
            continue;
        }
        json_array_append_new(lps, json_real(e[i].logprob));
        json_t *top = json_object(), *ids = json_array();
        for (int k = 0; k < e[i].n_top && !rc; k++) {
            json_array_append_new(ids, json_pack("[i,f]", (int)e[i].top_id[k], (double)e[i].top_logprob[k]));
            if ((rc = token_string(b, e[i].top_id[k], &s))) break;
            /* strings can collide (two ids, one text): the more likely one, listed first, stays */
            if (!json_object_get(top, s.data ? s.data : ""))
                json_object_set_new(top, s.data ? s.data : "", json_real(e[i].top_logprob[k]));
        }
        json_array_append_new(tops, top);
        json_array_append_new(top_ids, ids);
    }
    buf_free(&s);
    if (rc) { json_decref(o); return NULL; }
    return o;
}

/* One chat entry (without top_logprobs): id, token, logprob, bytes. */
static json_t *chat_item(const engine_backend *b, int32_t tok, float logprob, buf *s) {
    if (token_string(b, tok, s)) return NULL;
    return json_pack("{s:i,s:s%,s:f,s:o}", "id", (int)tok, "token", s->data ? s->data : "", s->len, "logprob",
                     (double)logprob, "bytes", piece_bytes(b, tok));
}

json_t *serve_logprobs_chat(const engine_backend *b, const logprob_entry *e, int n) {
    json_t *content = json_array();
    buf s;
    buf_init(&s, 1u << 16);
    bool ok = content != NULL;
    for (int i = 0; i < n && ok; i++) {
        json_t *item = chat_item(b, e[i].id, e[i].logprob, &s), *top = json_array();
        ok = item && top;
        for (int k = 0; k < e[i].n_top && ok; k++) {
            json_t *t = chat_item(b, e[i].top_id[k], e[i].top_logprob[k], &s);
            ok = t && json_array_append_new(top, t) == 0;
        }
        if (ok) {
            json_object_set_new(item, "top_logprobs", top);
            json_array_append_new(content, item);
        } else {
            json_decref(item);
            json_decref(top);
        }
    }
    buf_free(&s);
    if (!ok) { json_decref(content); return NULL; }
    return json_pack("{s:o,s:n}", "content", content, "refusal");
}
