/* attempt.c - one measured OpenAI-compatible streamed request: builds the body, streams it
 * through net/http, parses the SSE events as they arrive (timed by the piece that carried
 * them) and turns what was seen into one sample with a status and a reason (DESIGN.md 3). */
#include "bench/attempt.h"

#include <stdio.h>
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

typedef struct attempt_state {
    const attempt_request *req;
    attempt_sample *s;
    sse_parser sse;
    int64_t now_ns;        /* arrival time of the piece being parsed */
    int64_t first_ns, last_ns;
    int64_t events;
    bool saw_done;
    char reason[ATTEMPT_REASON_MAX]; /* set by the event handler when it stops the stream */
    /* First members of the server-rate field paths, quoted ("\"x_stats\""), that the fixed
     * keys of attempt_needs_full_parse do not already cover: set once per attempt. */
    char heads[2][66];
    size_t head_len[2];
    int n_heads;
    sanitize_context *own_sanitize; /* built from the prompt when the request brings none */
} attempt_state;

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
static void attempt_message(attempt_state *st, const char *text, size_t n) {
    const sanitize_context *c = st->req->sanitize;
    if (!c && !st->own_sanitize && (st->own_sanitize = sanitize_context_new()) &&
        sanitize_context_add_text(st->own_sanitize, st->req->prompt, strlen(st->req->prompt))) {
        sanitize_context_free(st->own_sanitize);
        st->own_sanitize = NULL;
    }
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

/* Reads choices[0]: counts a delivery when its text or delta is non-empty, keeps finish_reason. */
static void attempt_read_choice(attempt_state *st, const json_t *choice) {
    attempt_sample *s = st->s;
    if (!json_is_object(choice)) return;
    size_t n = attempt_str_len(choice, "text");
    const json_t *delta = json_object_get(choice, "delta");
    if (json_is_object(delta))
        n += attempt_str_len(delta, "content") + attempt_str_len(delta, "reasoning_content") +
             attempt_str_len(delta, "reasoning");
    if (n) {
        if (!s->deliveries) st->first_ns = st->now_ns;
        st->last_ns = st->now_ns;
        s->deliveries++;
        s->output_bytes += (int64_t)n;
    }
    const json_t *fr = json_object_get(choice, "finish_reason");
    if (json_is_string(fr)) {
        const char *known = sanitize_vocab(sanitize_finish_reasons, json_string_value(fr));
        if (strcmp(known, "other") == 0 && strcmp(s->finish_reason, "other") != 0)
            attempt_log(st, "finish_reason (recorded as 'other')", json_string_value(fr), json_string_length(fr));
        attempt_copy(s->finish_reason, sizeof s->finish_reason, known);
    }
}

/* True when `"key"` appears as a member with a non-null value. In raw JSON text a key is
 * always written between unescaped quotes and followed by ':', so a member that is present
 * is always found; a false match only costs the full parse. OpenAI-style streams send
 * "usage":null in every chunk: that does not count. */
static bool attempt_has_member(const char *d, size_t n, const char *key, size_t key_len) {
    const char *end = d + n;
    for (const char *p = memmem(d, n, key, key_len); p; p = memmem(p + 1, (size_t)(end - p - 1), key, key_len)) {
        const char *v = p + key_len;
        while (v < end && (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n')) v++;
        if (v == end || *v != ':') continue; /* a string value, not a key */
        v++;
        while (v < end && (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n')) v++;
        if ((size_t)(end - v) >= 4 && memcmp(v, "null", 4) == 0) continue;
        return true;
    }
    return false;
}

/* Members that make an event worth a full parse. */
static const struct { const char *key; size_t len; } attempt_full_parse_keys[] = {
    {"\"usage\"", 7}, {"\"timings\"", 9}, {"\"token_hash\"", 12}, {"\"error\"", 7}};
#define ATTEMPT_N_FULL_PARSE_KEYS (sizeof attempt_full_parse_keys / sizeof attempt_full_parse_keys[0])

/* Adds the quoted first member of a dotted field path to st->heads unless it is empty, too
 * long, or already looked for. */
static void attempt_add_head(attempt_state *st, const char *path) {
    size_t len = strcspn(path, ".");
    char *q = st->heads[st->n_heads];
    if (len == 0 || len + 2 > sizeof st->heads[0]) return;
    q[0] = '"';
    memcpy(q + 1, path, len);
    q[len + 1] = '"';
    for (size_t i = 0; i < ATTEMPT_N_FULL_PARSE_KEYS; i++)
        if (attempt_full_parse_keys[i].len == len + 2 && memcmp(attempt_full_parse_keys[i].key, q, len + 2) == 0) return;
    for (int i = 0; i < st->n_heads; i++)
        if (st->head_len[i] == len + 2 && memcmp(st->heads[i], q, len + 2) == 0) return;
    st->head_len[st->n_heads++] = len + 2;
}

static bool attempt_needs_full_parse(const attempt_state *st, const char *d, size_t n) {
    for (size_t i = 0; i < ATTEMPT_N_FULL_PARSE_KEYS; i++)
        if (attempt_has_member(d, n, attempt_full_parse_keys[i].key, attempt_full_parse_keys[i].len)) return true;
    for (int i = 0; i < st->n_heads; i++)
        if (attempt_has_member(d, n, st->heads[i], st->head_len[i])) return true;
    return false;
}

/* The fast path for token events (the profile in bench/ shows jansson building the whole
 * object, id/object/created included, is most of the parse cost): the event is checked
 * whole by json_skim_object(), which builds nothing, and jansson decodes only the
 * "choices" value. Returns false when the skim cannot vouch for the event (malformed or
 * unusual); the caller then parses it in full, and jansson has the last word. */
static bool attempt_fast_event(attempt_state *st, const sse_event *ev) {
    if (attempt_needs_full_parse(st, ev->data, ev->data_len)) return false;
    size_t at, len;
    if (!json_skim_object(ev->data, ev->data_len, "choices", &at, &len) || len == 0) return false;
    json_t *choices = json_loadb(ev->data + at, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_array(choices)) {
        json_decref(choices);
        return false;
    }
    attempt_read_choice(st, json_array_get(choices, 0));
    json_decref(choices);
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
        snprintf(st->reason, sizeof st->reason, "server error in stream");
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
    return rc;
}

static pacer_err attempt_on_data(void *ctx, const char *data, size_t n, int64_t t_ns) {
    attempt_state *st = ctx;
    st->now_ns = t_ns;
    return sse_parser_feed(&st->sse, data, n);
}

static char *attempt_body(const attempt_request *req) {
    json_t *root = json_object();
    if (req->model_id) json_object_set_new(root, "model", json_string(req->model_id));
    if (req->route == ATTEMPT_ROUTE_CHAT) {
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
        attempt_set(s, ATTEMPT_CANCELLED, "cancelled");
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
    if (!s->deliveries && http_response_header(resp, "Content-Type", ctype, sizeof ctype) &&
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

pacer_err attempt_run(const attempt_request *req, attempt_sample *out) {
    if (!out) return PACER_ERR_ARG;
    memset(out, 0, sizeof *out);
    out->status = ATTEMPT_FAILED;
    if (!req || !req->server_url || !req->prompt || req->max_tokens <= 0) {
        attempt_copy(out->reason, sizeof out->reason, "invalid request: server URL, prompt and max_tokens > 0 are needed");
        return PACER_ERR_ARG;
    }
    out->route = req->route;
    pacer_err rc = PACER_OK;
    attempt_state st = {.req = req, .s = out};
    attempt_add_head(&st, attempt_tok_s_field(req));
    attempt_add_head(&st, attempt_prefill_field(req));
    sse_parser_init(&st.sse, ATTEMPT_EVENT_MAX, attempt_on_event, NULL, &st);
    http_response resp;
    http_response_init(&resp);
    buf url;
    buf_init(&url, 8192);
    char *body = attempt_body(req);
    char auth[512];
    const char *headers[4] = {"Content-Type: application/json", "Accept: text/event-stream", NULL, NULL};
    if (req->api_key) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", req->api_key);
        headers[2] = auth;
    }
    if (!body || attempt_url(req, &url)) {
        attempt_copy(out->reason, sizeof out->reason, "out of memory building the request");
        rc = PACER_ERR_NOMEM;
        goto out;
    }
    http_request hr = {
        .method = "POST",
        .url = url.data,
        .body = body,
        .body_len = strlen(body),
        .headers = headers,
        .connect_timeout_ms = req->connect_timeout_ms ? req->connect_timeout_ms : ATTEMPT_DEFAULT_CONNECT_MS,
        .first_byte_timeout_ms = req->first_byte_timeout_ms ? req->first_byte_timeout_ms : ATTEMPT_DEFAULT_FIRST_BYTE_MS,
        .idle_timeout_ms = req->idle_timeout_ms ? req->idle_timeout_ms : ATTEMPT_DEFAULT_IDLE_MS,
        .total_timeout_ms = req->total_timeout_ms ? req->total_timeout_ms : ATTEMPT_DEFAULT_TOTAL_MS,
        .cancel_flag = req->cancel_flag,
        .on_data = attempt_on_data,
        .ctx = &st,
    };
    pacer_err hrc = http_perform(&hr, &resp);
    out->http_status = resp.status;
    out->duration_ns = resp.end_ns - resp.start_ns;
    if (out->deliveries) {
        out->has_first_text = true;
        out->first_text_ns = st.first_ns - resp.start_ns;
        out->delivery_span_ns = st.last_ns - st.first_ns;
    }
    if (out->has_usage && out->deliveries >= 2 && out->delivery_span_ns > 0 && out->completion_tokens >= 1) {
        out->has_stream_tok_s = true;
        out->stream_tok_s = (double)(out->completion_tokens - 1) / ((double)out->delivery_span_ns / 1e9);
    }
    attempt_judge(&st, hrc, &resp);
    if (hrc == PACER_ERR_ARG) rc = PACER_ERR_ARG;
out:
    free(body);
    buf_free(&url);
    http_response_free(&resp);
    sse_parser_free(&st.sse);
    sanitize_context_free(st.own_sanitize);
    return rc;
}

/* Adds key: integer, or null when absent. */
static void attempt_json_int(json_t *o, const char *key, bool present, int64_t v) {
    json_object_set_new(o, key, present ? json_integer(v) : json_null());
}
static void attempt_json_real(json_t *o, const char *key, bool present, double v) {
    json_object_set_new(o, key, present ? json_real(v) : json_null());
}
static void attempt_json_str(json_t *o, const char *key, const char *v) {
    json_object_set_new(o, key, v && v[0] ? json_string(v) : json_null());
}

json_t *attempt_sample_to_json(const attempt_sample *s) {
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "route", json_string(attempt_route_name(s->route)));
    json_object_set_new(o, "status", json_string(attempt_status_name(s->status)));
    attempt_json_str(o, "reason", s->reason);
    attempt_json_str(o, "server_message", s->server_message);
    attempt_json_int(o, "http_status", s->http_status != 0, s->http_status);
    attempt_json_str(o, "finish_reason", s->finish_reason);
    attempt_json_int(o, "prompt_tokens", s->has_usage, s->prompt_tokens);
    attempt_json_int(o, "completion_tokens", s->has_usage, s->completion_tokens);
    attempt_json_int(o, "first_text_ns", s->has_first_text, s->first_text_ns);
    attempt_json_int(o, "duration_ns", true, s->duration_ns);
    attempt_json_int(o, "delivery_span_ns", s->has_first_text, s->delivery_span_ns);
    attempt_json_int(o, "deliveries", true, s->deliveries);
    attempt_json_int(o, "output_bytes", true, s->output_bytes);
    attempt_json_real(o, "stream_tok_s", s->has_stream_tok_s, s->stream_tok_s);
    json_object_set_new(o, "has_server_timings", json_boolean(s->has_server_timings));
    attempt_json_real(o, "server_prompt_ms", s->has_server_prompt_ms, s->server_prompt_ms);
    attempt_json_real(o, "server_predicted_per_second", s->has_server_predicted_per_second,
                      s->server_predicted_per_second);
    attempt_json_int(o, "draft_n", s->has_draft_n, s->draft_n);
    attempt_json_int(o, "draft_n_accepted", s->has_draft_n_accepted, s->draft_n_accepted);
    attempt_json_int(o, "verify_rounds", s->has_verify_rounds, s->verify_rounds);
    attempt_json_str(o, "token_hash", s->token_hash);
    return o;
}
