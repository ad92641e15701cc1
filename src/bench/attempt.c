/* attempt.c - one measured OpenAI-compatible streamed request: builds the body, streams it
 * through net/http, parses the SSE events as they arrive (timed by the piece that carried
 * them) and turns what was seen into one sample with a status and a reason (DESIGN.md 3). */
#include "bench/attempt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/json.h"
#include "bench/sanitize.h"
#include "net/http.h"
#include "net/sse.h"

_Static_assert(ATTEMPT_MESSAGE_MAX == SANITIZE_EXCERPT_MAX + 1, "the message field holds one excerpt");

#define ATTEMPT_DEFAULT_CONNECT_MS 10000
#define ATTEMPT_DEFAULT_FIRST_BYTE_MS 300000
#define ATTEMPT_DEFAULT_IDLE_MS 60000
#define ATTEMPT_DEFAULT_TOTAL_MS 1800000

struct attempt_stream {
    const attempt_request *req;
    attempt_sample *s;
    sse_parser sse;
    int64_t now_ns;        /* arrival time of the piece being parsed */
    int64_t first_ns, last_ns;
    int64_t events;
    bool saw_done;
    /* the arrival time of every delivery, when the request asks for them */
    int64_t *times;
    size_t n_times, cap_times, max_times;
    bool times_overflow;
    /* what the request is built from; live until attempt_stream_free() */
    buf url;
    char *body;
    char auth[512];
    const char *headers[4];
    http_request http;
    char reason[ATTEMPT_REASON_MAX]; /* set by the event handler when it stops the stream */
    bool stopped;          /* req->on_text asked to stop */
    bool text_cut;         /* the last text delivered ends mid-character (in U+FFFD) */
    /* The top-level members the fast path looks for: those that make an event worth a
     * full parse (attempt_full_parse_keys, then the first members of the server-rate field
     * paths they do not cover), and "choices" last. Set once per attempt. */
    char heads[2][64];
    const char *keys[8];
    size_t n_keys;
    json_skim_plan *plan; /* keys, then ATTEMPT_CHOICE_PATHS: one skim finds them all */
    sanitize_context *own_sanitize; /* built from the prompt when the request brings none */
};
typedef struct attempt_stream attempt_state;

const char *attempt_route_name(attempt_route r) { return r == ATTEMPT_ROUTE_CHAT ? "chat" : "completions"; }
const char *attempt_route_path(attempt_route r) {
    return r == ATTEMPT_ROUTE_CHAT ? "/v1/chat/completions" : "/v1/completions";
}
const char *attempt_status_name(attempt_status s) {
    static const char *const names[] = {"ok", "incomplete", "failed", "cancelled"};
    return (unsigned)s < 4 ? names[s] : "unknown";
}

static void attempt_copy(char *dst, size_t size, const char *src) { snprintf(dst, size, "%s", src ? src : ""); }

/* Hands a server's text in full to the request's log callback. */
static void attempt_log(const attempt_state *st, const char *what, const char *text, size_t n) {
    if (st->req->on_server_text) st->req->on_server_text(st->req->server_text_ctx, what, text, n);
}

/* The sample's server_message: `text` sanitized against the request's context, or one of
 * the prompt alone; empty when no context can be had (nothing unsanitized is kept). */
/* The context of a request that brings none: its prompt, or every message of its conversation. */
static sanitize_context *attempt_own_context(const attempt_request *req) {
    sanitize_context *c = sanitize_context_new();
    pacer_err rc = c ? PACER_OK : PACER_ERR_NOMEM;
    if (!rc && req->prompt) rc = sanitize_context_add_text(c, req->prompt, strlen(req->prompt));
    size_t i;
    const json_t *m;
    json_array_foreach(req->messages, i, m) {
        const json_t *content = json_object_get(m, "content");
        if (!rc && json_is_string(content))
            rc = sanitize_context_add_text(c, json_string_value(content), json_string_length(content));
    }
    if (rc) {
        sanitize_context_free(c);
        return NULL;
    }
    return c;
}

static void attempt_message(attempt_state *st, const char *text, size_t n) {
    const sanitize_context *c = st->req->sanitize;
    if (!c && !st->own_sanitize) st->own_sanitize = attempt_own_context(st->req);
    if (!c) c = st->own_sanitize;
    if (c) sanitize_text(c, text, n, st->s->server_message, sizeof st->s->server_message);
    else st->s->server_message[0] = '\0';
}

/* Length of a JSON string member, 0 when missing or not a string. */
static size_t attempt_str_len(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_length(v) : 0;
}

/* The field paths of a request, defaults applied ("" stays "": not read). */
static const char *attempt_tok_s_field(const attempt_request *r) {
    return r->server_tok_s_field ? r->server_tok_s_field : ATTEMPT_SERVER_TOK_S_FIELD;
}
static const char *attempt_prefill_field(const attempt_request *r) {
    return r->prefill_ms_field ? r->prefill_ms_field : ATTEMPT_PREFILL_MS_FIELD;
}

/* The server's own decode rate and prefill time, where the request says it reports them. */
static void attempt_read_server_rates(attempt_sample *s, const attempt_request *r, const json_t *root) {
    const json_t *v;
    if (json_is_number(v = json_get_path(root, attempt_prefill_field(r))))
        s->server_prompt_ms = json_number_value(v), s->has_server_prompt_ms = true;
    if (json_is_number(v = json_get_path(root, attempt_tok_s_field(r))))
        s->server_predicted_per_second = json_number_value(v), s->has_server_predicted_per_second = true;
}

static void attempt_read_timings(attempt_sample *s, const json_t *t) {
    const json_t *v;
    s->has_server_timings = true;
    if (json_is_integer(v = json_object_get(t, "draft_n"))) s->draft_n = json_integer_value(v), s->has_draft_n = true;
    if (json_is_integer(v = json_object_get(t, "draft_n_accepted")))
        s->draft_n_accepted = json_integer_value(v), s->has_draft_n_accepted = true;
    if (json_is_integer(v = json_object_get(t, "verify_rounds")))
        s->verify_rounds = json_integer_value(v), s->has_verify_rounds = true;
}

/* A token hash is kept only in the shape of one: letters, digits, ':', '_', '-', and
 * nothing the sanitizer would remove; anything else goes to the log alone. */
static void attempt_read_token_hash(attempt_state *st, const json_t *v) {
    attempt_sample *s = st->s;
    if (json_is_integer(v)) snprintf(s->token_hash, sizeof s->token_hash, "%lld", (long long)json_integer_value(v));
    if (!json_is_string(v)) return;
    const char *h = json_string_value(v);
    size_t n = json_string_length(v);
    bool shaped = n < sizeof s->token_hash && strspn(h, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:_-") == n;
    if (shaped && !sanitize_check(NULL, h, n, NULL)) {
        memcpy(s->token_hash, h, n + 1);
    } else {
        attempt_log(st, "token_hash (not stored)", h, n);
        s->token_hash[0] = '\0';
    }
}

/* Appends the arrival time of the delivery just counted; past the cap it is only noted. */
static void attempt_keep_time(attempt_state *st) {
    if (st->n_times == st->cap_times) {
        size_t cap = st->cap_times ? st->cap_times * 2 : 256;
        if (cap > st->max_times) cap = st->max_times;
        int64_t *t = st->n_times < cap ? realloc(st->times, cap * sizeof *t) : NULL;
        if (!t) {
            st->times_overflow = true;
            return;
        }
        st->times = t;
        st->cap_times = cap;
    }
    st->times[st->n_times++] = st->now_ns;
}

/* Whether a piece of text ends in U+FFFD, what a server's JSON encoder puts for the bytes
 * of a character its reply stopped inside: decoded (EF BF BD) or as a JSON string's raw
 * text (the escape). */
static bool attempt_ends_cut(const char *p, size_t n) {
    if (n >= 3 && memcmp(p + n - 3, "\xEF\xBF\xBD", 3) == 0) return true;
    return n >= 6 && p[n - 6] == '\\' && strncasecmp(p + n - 5, "ufffd", 5) == 0;
}

/* Counts a delivery of `n` decoded output bytes (none when n is 0). */
static void attempt_count(attempt_state *st, size_t n) {
    attempt_sample *s = st->s;
    if (!n) return;
    if (!s->deliveries) st->first_ns = st->now_ns;
    st->last_ns = st->now_ns;
    s->deliveries++;
    s->output_bytes += (int64_t)n;
    if (st->max_times) attempt_keep_time(st);
}

/* Keeps a finish_reason (NUL-terminated, n bytes) in pacer's vocabulary; one it does not
 * know is recorded as 'other' and goes to the log. */
static void attempt_finish_reason(attempt_state *st, const char *v, size_t n) {
    attempt_sample *s = st->s;
    const char *known = sanitize_vocab(sanitize_finish_reasons, v);
    if (strcmp(known, "other") == 0 && strcmp(s->finish_reason, "other") != 0)
        attempt_log(st, "finish_reason (recorded as 'other')", v, n);
    attempt_copy(s->finish_reason, sizeof s->finish_reason, known);
}

/* Hands the string member `key` of `obj` to req->on_text when it is non-empty. */
static void attempt_pass_text(attempt_state *st, const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    if (st->stopped || !json_is_string(v) || json_string_length(v) == 0) return;
    if (st->req->on_text(st->req->on_text_ctx, json_string_value(v), json_string_length(v), st->now_ns))
        st->stopped = true;
}

/* Reads choices[0]: counts a delivery when its text or delta is non-empty, keeps finish_reason. */
static void attempt_read_choice(attempt_state *st, const json_t *choice) {
    if (!json_is_object(choice)) return;
    size_t n = attempt_str_len(choice, "text");
    const json_t *delta = json_object_get(choice, "delta");
    if (json_is_object(delta))
        n += attempt_str_len(delta, "content") + attempt_str_len(delta, "reasoning_content") +
             attempt_str_len(delta, "reasoning");
    attempt_count(st, n);
    static const char *const text_keys[] = {"text", "content", "reasoning_content", "reasoning"};
    for (size_t k = 0; k < 4; k++) {
        const json_t *v = json_object_get(k ? delta : choice, text_keys[k]);
        if (json_is_string(v) && json_string_length(v))
            st->text_cut = attempt_ends_cut(json_string_value(v), json_string_length(v));
    }
    if (n && st->req->on_text) {
        attempt_pass_text(st, choice, "text");
        if (json_is_object(delta)) {
            attempt_pass_text(st, delta, "content");
            attempt_pass_text(st, delta, "reasoning_content");
            attempt_pass_text(st, delta, "reasoning");
        }
    }
    const json_t *fr = json_object_get(choice, "finish_reason");
    if (json_is_string(fr)) attempt_finish_reason(st, json_string_value(fr), json_string_length(fr));
}

/* Top-level members that make an event worth a full parse when present and not null
 * (OpenAI-style streams send "usage":null in every chunk: that does not count). */
static const char *const attempt_full_parse_keys[] = {"usage", "timings", "token_hash", "error"};
#define ATTEMPT_N_FULL_PARSE_KEYS (sizeof attempt_full_parse_keys / sizeof attempt_full_parse_keys[0])

/* Adds the first member of a dotted field path to the keys looked for, unless it is
 * empty, too long, or already looked for. */
static void attempt_add_head(attempt_state *st, const char *path) {
    size_t len = strcspn(path, ".");
    if (len == 0 || len >= sizeof st->heads[0]) return;
    for (size_t i = 0; i < st->n_keys; i++)
        if (strlen(st->keys[i]) == len && memcmp(st->keys[i], path, len) == 0) return;
    char *h = st->heads[st->n_keys - ATTEMPT_N_FULL_PARSE_KEYS];
    memcpy(h, path, len);
    h[len] = '\0';
    st->keys[st->n_keys++] = h;
}

/* What the fast path reads of choices[0], in this order. */
static const char *const attempt_choice_paths[] = {"choices[0].text", "choices[0].delta.content",
                                                   "choices[0].delta.reasoning_content", "choices[0].delta.reasoning",
                                                   "choices[0].finish_reason"};
#define ATTEMPT_N_CHOICE_PATHS 5

/* The fast path's plan: the full-parse keys, the heads of the field paths, then what it
 * reads of choices[0]. NULL when it cannot be built (every event is then parsed in full). */
static void attempt_set_plan(attempt_state *st) {
    const char *paths[8 + ATTEMPT_N_CHOICE_PATHS];
    for (size_t i = 0; i < ATTEMPT_N_FULL_PARSE_KEYS; i++) st->keys[st->n_keys++] = attempt_full_parse_keys[i];
    attempt_add_head(st, attempt_tok_s_field(st->req));
    attempt_add_head(st, attempt_prefill_field(st->req));
    memcpy(paths, st->keys, st->n_keys * sizeof *paths);
    memcpy(paths + st->n_keys, attempt_choice_paths, sizeof attempt_choice_paths);
    st->plan = json_skim_plan_new(paths, st->n_keys + ATTEMPT_N_CHOICE_PATHS);
}

/* The decoded length of the string at span `sp` of `d`; 0 when absent or not a string. */
static size_t attempt_span_str_len(const char *d, json_span sp) {
    return sp.len && d[sp.at] == '"' ? json_skim_string_len(d + sp.at, sp.len) : 0;
}

/* The fast path for token events. The profile (bench/bench_client) showed jansson
 * building values, and then scanning the text once per interesting key, as most of the
 * client's cost per delivery: so one skim, which builds nothing, checks the whole event
 * and finds every member of interest, and choices[0] is read from the skimmed text as
 * attempt_read_choice() reads it from jansson's values. Returns false when the skim cannot
 * vouch for the event (malformed or unusual), when it carries more than tokens, or when
 * its finish_reason has escapes; the caller then parses it in full, and jansson has the
 * last word. */
static bool attempt_fast_event(attempt_state *st, const sse_event *ev) {
    json_span sp[8 + ATTEMPT_N_CHOICE_PATHS];
    const char *d = ev->data;
    /* a caller that takes the text (the lab) gets it decoded by jansson: the full path */
    if (st->req->on_text || !st->plan || !json_skim_plan_run(st->plan, d, ev->data_len, sp)) return false;
    for (size_t i = 0; i < st->n_keys; i++)
        if (sp[i].len && !(sp[i].len == 4 && memcmp(d + sp[i].at, "null", 4) == 0)) return false;
    const json_span *c = sp + st->n_keys, fr = c[4];
    bool fr_str = fr.len && d[fr.at] == '"';
    char reason[64];
    if (fr_str && (memchr(d + fr.at, '\\', fr.len) || fr.len - 2 >= sizeof reason)) return false;
    attempt_count(st, attempt_span_str_len(d, c[0]) + attempt_span_str_len(d, c[1]) + attempt_span_str_len(d, c[2]) +
                          attempt_span_str_len(d, c[3]));
    for (size_t k = 0; k < 4; k++)
        if (c[k].len > 2 && d[c[k].at] == '"') st->text_cut = attempt_ends_cut(d + c[k].at + 1, c[k].len - 2);
    if (fr_str) {
        memcpy(reason, d + fr.at + 1, fr.len - 2);
        reason[fr.len - 2] = '\0';
        attempt_finish_reason(st, reason, fr.len - 2);
    }
    return true;
}

/* The hot path: one SSE event, parsed once; only the members that matter are read. Every
 * valid JSON string decodes, "\u0000" included (JSON_ALLOW_NUL: servers emit NUL bytes
 * too); output bytes are counted with json_string_length, so each NUL counts once. */
static pacer_err attempt_on_event(void *ctx, const sse_event *ev) {
    attempt_state *st = ctx;
    attempt_sample *s = st->s;
    st->events++;
    if (ev->done) {
        st->saw_done = true;
        return PACER_OK;
    }
    if (attempt_fast_event(st, ev)) return PACER_OK;
    json_error_t jerr;
    json_t *root = json_loadb(ev->data, ev->data_len, JSON_ALLOW_NUL, &jerr);
    if (!json_is_object(root)) {
        /* jansson's words quote the server's bytes ("... near 'xyz'"): they are an excerpt */
        snprintf(st->reason, sizeof st->reason, "malformed JSON in stream event %lld", (long long)st->events);
        const char *what = root ? "not an object" : jerr.text;
        attempt_message(st, what, strlen(what));
        attempt_log(st, "malformed stream event", ev->data, ev->data_len);
        json_decref(root);
        return PACER_ERR_PARSE;
    }
    pacer_err rc = PACER_OK;
    const json_t *err = json_object_get(root, "error");
    if (err && !json_is_null(err)) {
        const json_t *m = json_is_object(err) ? json_object_get(err, "message") : err;
        /* text that ends in a character cut short, then an error: servers that parse their
         * own output (llama-server) refuse a reply stopped inside a character */
        snprintf(st->reason, sizeof st->reason, "server error in stream%s",
                 s->deliveries && st->text_cut ? ", after text that ends mid-character (U+FFFD: a character cut short)" : "");
        if (json_is_string(m)) attempt_message(st, json_string_value(m), json_string_length(m));
        attempt_log(st, "stream error event", ev->data, ev->data_len);
        rc = PACER_ERR_FORMAT;
        goto out;
    }
    attempt_read_choice(st, json_array_get(json_object_get(root, "choices"), 0));
    const json_t *usage = json_object_get(root, "usage");
    if (json_is_object(usage)) {
        const json_t *ct = json_object_get(usage, "completion_tokens");
        if (json_is_integer(ct)) {
            s->has_usage = true;
            s->completion_tokens = json_integer_value(ct);
            s->prompt_tokens = json_integer_value(json_object_get(usage, "prompt_tokens"));
        }
    }
    const json_t *timings = json_object_get(root, "timings");
    if (json_is_object(timings)) {
        attempt_read_timings(s, timings);
        attempt_read_token_hash(st, json_object_get(timings, "token_hash"));
    }
    attempt_read_server_rates(s, st->req, root);
    attempt_read_token_hash(st, json_object_get(root, "token_hash"));
out:
    json_decref(root);
    return rc ? rc : st->stopped ? PACER_ERR_CANCELLED : PACER_OK;
}

static pacer_err attempt_on_data(void *ctx, const char *data, size_t n, int64_t t_ns) {
    attempt_state *st = ctx;
    st->now_ns = t_ns;
    return sse_parser_feed(&st->sse, data, n);
}

static char *attempt_body(const attempt_request *req) {
    json_t *root = json_object();
    if (req->model_id) json_object_set_new(root, "model", json_string(req->model_id));
    if (req->route == ATTEMPT_ROUTE_CHAT && req->messages) {
        json_object_set_new(root, "messages", json_deep_copy(req->messages));
    } else if (req->route == ATTEMPT_ROUTE_CHAT) {
        json_t *msg = json_pack("{s:s,s:s}", "role", "user", "content", req->prompt);
        json_object_set_new(root, "messages", json_pack("[o]", msg));
    } else {
        json_object_set_new(root, "prompt", json_string(req->prompt));
    }
    json_object_set_new(root, "max_tokens", json_integer(req->max_tokens));
    json_object_set_new(root, "temperature", json_real(req->temperature));
    if (req->top_k > 0) json_object_set_new(root, "top_k", json_integer(req->top_k));
    if (req->top_p > 0) json_object_set_new(root, "top_p", json_real(req->top_p));
    if (req->has_seed) json_object_set_new(root, "seed", json_integer(req->seed));
    json_object_set_new(root, "stream", json_true());
    json_object_set_new(root, "stream_options", json_pack("{s:b}", "include_usage", 1));
    if (req->disable_prompt_cache) json_object_set_new(root, "cache_prompt", json_false());
    if (req->disable_thinking)
        json_object_set_new(root, "chat_template_kwargs", json_pack("{s:b}", "enable_thinking", 0));
    char *body = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return body;
}

/* base URL + route path; a trailing "/" or "/v1" on the base is dropped. */
static pacer_err attempt_url(const attempt_request *req, buf *url) {
    size_t n = strlen(req->server_url);
    while (n && req->server_url[n - 1] == '/') n--;
    if (n >= 3 && strncmp(req->server_url + n - 3, "/v1", 3) == 0) n -= 3;
    pacer_err rc = buf_append(url, req->server_url, n);
    if (!rc) rc = buf_append_str(url, attempt_route_path(req->route));
    return rc;
}

static void attempt_set(attempt_sample *s, attempt_status st, const char *reason) {
    s->status = st;
    attempt_copy(s->reason, sizeof s->reason, reason);
}

/* An HTTP error: "HTTP 503" in pacer's words, the server's message as an excerpt, its whole
 * body to the log. */
static void attempt_http_error(attempt_state *st, const http_response *resp) {
    char why[ATTEMPT_REASON_MAX], msg[HTTP_ERROR_BODY_MAX + 1];
    http_error_message(resp->error_body.data, resp->error_body.len, msg, sizeof msg);
    bool redirect = resp->status >= 300 && resp->status < 400 && !msg[0];
    snprintf(why, sizeof why, "HTTP %d%s", resp->status, redirect ? " (redirect not followed)" : "");
    attempt_set(st->s, ATTEMPT_FAILED, why);
    if (msg[0]) attempt_message(st, msg, strlen(msg));
    if (resp->error_body.len) attempt_log(st, "HTTP error body", resp->error_body.data, resp->error_body.len);
}

/* The media type of a Content-Type value ("text/html" of "text/html; charset=utf-8") when it
 * has the shape of one, else "other" (and the value goes to the log). */
static const char *attempt_media_type(attempt_state *st, char *ctype) {
    static const char tok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-_";
    size_t a = strspn(ctype, tok), n = strcspn(ctype, "; \t");
    if (a > 0 && a < 48 && ctype[a] == '/' && a + 1 + strspn(ctype + a + 1, tok) == n && n > a + 1 && n < 96) {
        ctype[n] = '\0';
        return ctype;
    }
    attempt_log(st, "Content-Type (recorded as 'other')", ctype, strlen(ctype));
    return "other";
}

/* Decides status and reason once the stream is over, from what was seen. */
static void attempt_judge(attempt_state *st, pacer_err rc, const http_response *resp) {
    const attempt_request *req = st->req;
    attempt_sample *s = st->s;
    char why[ATTEMPT_REASON_MAX];
    bool pending = false;
    sse_parser_finish(&st->sse, &pending);
    if (rc == PACER_ERR_CANCELLED || (req->cancel_flag && *req->cancel_flag)) {
        attempt_set(s, ATTEMPT_CANCELLED, st->stopped ? "stopped by the caller" : "cancelled");
        return;
    }
    switch (rc) {
    case PACER_OK:
        break;
    case PACER_ERR_TOO_BIG:
        snprintf(why, sizeof why, "an SSE event passed the %u-byte cap", (unsigned)ATTEMPT_EVENT_MAX);
        attempt_set(s, ATTEMPT_FAILED, why);
        return;
    case PACER_ERR_PARSE:
    case PACER_ERR_FORMAT:
        attempt_set(s, ATTEMPT_FAILED, st->reason);
        return;
    case PACER_ERR_HTTP:
        attempt_http_error(st, resp);
        return;
    default:
        if (s->deliveries) snprintf(why, sizeof why, "%.200s (after %lld deliveries)", resp->reason, (long long)s->deliveries);
        else attempt_copy(why, sizeof why, resp->reason);
        attempt_set(s, ATTEMPT_FAILED, why);
        return;
    }
    char ctype[128] = "";
    if (st->times_overflow) {
        snprintf(why, sizeof why, "more than %zu deliveries: their times could not all be kept", st->max_times);
        attempt_set(s, ATTEMPT_FAILED, why);
    } else if (!s->deliveries && http_response_header(resp, "Content-Type", ctype, sizeof ctype) &&
        strncasecmp(ctype, "text/event-stream", 17) != 0) {
        snprintf(why, sizeof why, "the server did not stream (Content-Type %s)", attempt_media_type(st, ctype));
        attempt_set(s, ATTEMPT_FAILED, why);
    } else if (!s->deliveries) {
        attempt_set(s, ATTEMPT_FAILED, "empty output: no content or reasoning was delivered");
    } else if (pending) {
        attempt_set(s, ATTEMPT_INCOMPLETE, "the stream ended inside an unterminated event");
    } else if (!st->saw_done) {
        attempt_set(s, ATTEMPT_INCOMPLETE, "the stream ended without [DONE]");
    } else if (!s->has_usage) {
        attempt_set(s, ATTEMPT_INCOMPLETE, "no usage in the stream: completion tokens unknown");
    } else if (s->deliveries == 1) {
        attempt_set(s, ATTEMPT_INCOMPLETE, "the reply arrived in one delivery: no measurable span");
    } else if (s->delivery_span_ns <= 0) {
        attempt_set(s, ATTEMPT_INCOMPLETE, "all deliveries arrived at once: zero delivery span");
    } else if (strcmp(s->finish_reason, "length") == 0 && s->completion_tokens < req->max_tokens) {
        snprintf(why, sizeof why, "finish_reason 'length' after %lld of %d tokens", (long long)s->completion_tokens,
                 req->max_tokens);
        attempt_set(s, ATTEMPT_INCOMPLETE, why);
    } else {
        attempt_set(s, ATTEMPT_OK, "");
    }
}

pacer_err attempt_stream_begin(const attempt_request *req, attempt_sample *out, size_t max_times,
                               attempt_stream **stp) {
    *stp = NULL;
    if (!out) return PACER_ERR_ARG;
    memset(out, 0, sizeof *out);
    out->status = ATTEMPT_FAILED;
    if (!req || !req->server_url || !(req->prompt || (req->messages && req->route == ATTEMPT_ROUTE_CHAT)) ||
        req->max_tokens <= 0) {
        attempt_copy(out->reason, sizeof out->reason, "invalid request: server URL, prompt and max_tokens > 0 are needed");
        return PACER_ERR_ARG;
    }
    out->route = req->route;
    attempt_state *st = calloc(1, sizeof *st);
    if (!st) {
        attempt_copy(out->reason, sizeof out->reason, "out of memory building the request");
        return PACER_ERR_NOMEM;
    }
    st->req = req;
    st->s = out;
    st->max_times = max_times;
    attempt_set_plan(st);
    sse_parser_init(&st->sse, ATTEMPT_EVENT_MAX, attempt_on_event, NULL, st);
    buf_init(&st->url, 8192);
    st->body = attempt_body(req);
    st->headers[0] = "Content-Type: application/json";
    st->headers[1] = "Accept: text/event-stream";
    if (req->api_key) {
        snprintf(st->auth, sizeof st->auth, "Authorization: Bearer %s", req->api_key);
        st->headers[2] = st->auth;
    }
    *stp = st;
    if (!st->body || attempt_url(req, &st->url)) {
        attempt_copy(out->reason, sizeof out->reason, "out of memory building the request");
        return PACER_ERR_NOMEM;
    }
    st->http = (http_request){
        .method = "POST",
        .url = st->url.data,
        .body = st->body,
        .body_len = strlen(st->body),
        .headers = st->headers,
        .connect_timeout_ms = req->connect_timeout_ms ? req->connect_timeout_ms : ATTEMPT_DEFAULT_CONNECT_MS,
        .first_byte_timeout_ms = req->first_byte_timeout_ms ? req->first_byte_timeout_ms : ATTEMPT_DEFAULT_FIRST_BYTE_MS,
        .idle_timeout_ms = req->idle_timeout_ms ? req->idle_timeout_ms : ATTEMPT_DEFAULT_IDLE_MS,
        .total_timeout_ms = req->total_timeout_ms ? req->total_timeout_ms : ATTEMPT_DEFAULT_TOTAL_MS,
        .cancel_flag = req->cancel_flag,
        .on_data = attempt_on_data,
        .ctx = st,
    };
    return PACER_OK;
}

const http_request *attempt_stream_http(const attempt_stream *st) { return &st->http; }

const int64_t *attempt_stream_times(const attempt_stream *st, size_t *n) {
    *n = st->n_times;
    return st->times;
}

void attempt_stream_end(attempt_stream *st, pacer_err hrc, const http_response *resp) {
    attempt_sample *out = st->s;
    out->http_status = resp->status;
    out->duration_ns = resp->end_ns - resp->start_ns;
    if (out->deliveries) {
        out->has_first_text = true;
        out->first_text_ns = st->first_ns - resp->start_ns;
        out->delivery_span_ns = st->last_ns - st->first_ns;
    }
    if (out->has_usage && out->deliveries >= 2 && out->delivery_span_ns > 0 && out->completion_tokens >= 1) {
        out->has_stream_tok_s = true;
        out->stream_tok_s = (double)(out->completion_tokens - 1) / ((double)out->delivery_span_ns / 1e9);
    }
    attempt_judge(st, hrc, resp);
}

void attempt_stream_free(attempt_stream *st) {
    if (!st) return;
    free(st->body);
    free(st->times);
    json_skim_plan_free(st->plan);
    sanitize_context_free(st->own_sanitize);
    buf_free(&st->url);
    sse_parser_free(&st->sse);
    free(st);
}

pacer_err attempt_run(const attempt_request *req, attempt_sample *out) {
    attempt_stream *st = NULL;
    pacer_err rc = attempt_stream_begin(req, out, 0, &st);
    if (rc) goto out;
    http_response resp;
    http_response_init(&resp);
    pacer_err hrc = http_perform(&st->http, &resp);
    attempt_stream_end(st, hrc, &resp);
    if (hrc == PACER_ERR_ARG) rc = PACER_ERR_ARG;
    http_response_free(&resp);
out:
    attempt_stream_free(st);
    return rc;
}
