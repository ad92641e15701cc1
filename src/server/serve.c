/* serve.c - the OpenAI routes (a table over server/http.h), request validation, generation
 * (prefix reuse, sampling, drafting rounds, stop strings) and OpenAI response/SSE bodies.
 * Generation runs on one scheduler thread (serve_sched.c) over --parallel KV slots: the
 * connection threads hand it requests and wait for its bytes, so a client that does not
 * read holds nobody else up, and one that goes away frees its slot at the next token. */
#include "server/serve.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/sha256.h"
#include "base/version.h"
#include "engine/draft.h"
#include "engine/generate.h"
#include "engine/logprob.h"
#include "engine/sampler.h"
#include "engine/gen_text.h"
#include "schema/manifest.h"
#include "server/http.h"
#include "server/request.h"
#include "server/serve_logprob.h"
#include "server/serve_sched.h"

/* ---- errors and small helpers ---- */

/* Answers with the OpenAI error body of `st` (and Retry-After on a 503), counting it. */
static pacer_err send_error(serve_server *s, http_req *req, const http_status *st) {
    pthread_mutex_lock(&s->mu);
    s->m.errors++;
    pthread_mutex_unlock(&s->mu);
    if (st->code == 503 && http_req_add_header(req, "Retry-After", "1")) return PACER_ERR_NOMEM;
    return http_respond_json(req, st->code,
                             json_pack("{s:{s:s,s:s,s:i}}", "error", "message", st->msg, "type", st->type, "code", st->code));
}

/* ---- requests ---- */

void gen_free(serve_gen *g) {
    if (!g) return;
    gen_session_free(&g->gs);
    buf_free(&g->out);
    buf_free(&g->pending);
    buf_free(&g->acc);
    serve_req_free(&g->r);
    json_decref(g->choices);
    json_decref(g->body);
    free(g->lp);
    pthread_cond_destroy(&g->cv);
    free(g);
}

/* ---- log-probabilities and batches ---- */

/* Room for one more entry; the positions of a choice never exceed the context. */
static pacer_err gen_lp_next(serve_gen *g, logprob_entry **e) {
    const engine_backend *b = &g->s->b;
    if (!g->lp && !(g->lp = malloc(((size_t)b->n_ctx + 1) * sizeof *g->lp))) return PACER_ERR_NOMEM;
    if (g->n_lp > b->n_ctx) return PACER_ERR_STATE;
    *e = &g->lp[g->n_lp++];
    return PACER_OK;
}

/* Records generated token `tok` chosen from the raw logits `row` (before any sampling
 * transform), when the request asked for log-probabilities. */
static pacer_err gen_logprob_token(serve_gen *g, int32_t tok, const float *row) {
    if (g->r.logprobs < 0) return PACER_OK;
    logprob_entry *e;
    pacer_err rc = gen_lp_next(g, &e);
    if (rc == PACER_OK) logprob_entry_fill(e, row, g->s->b.n_vocab, tok, g->r.logprobs);
    return rc;
}

/* An echoed prompt's row i (gen_row_fn): the log-probability entry of token i + 1. */
static pacer_err gen_echo_row(void *ctx, int i, const float *row) {
    serve_gen *g = ctx;
    logprob_entry *e;
    pacer_err rc = gen_lp_next(g, &e);
    if (rc == PACER_OK) logprob_entry_fill(e, row, g->s->b.n_vocab, g->r.tokens[i + 1], g->r.logprobs);
    return rc;
}

/* Tokenizes `text` into a new array *out (free()) of *n ids. */
static pacer_err prompt_encode(const engine_backend *b, const char *text, bool special, int32_t **out, int *n) {
    int need = 0;
    pacer_err rc = b->encode(b->ctx, text, special, NULL, 0, &need);
    if (rc) return rc;
    if (!(*out = malloc(((size_t)need + 1) * sizeof(int32_t)))) return PACER_ERR_NOMEM;
    return b->encode(b->ctx, text, special, *out, need, n);
}

/* A prompt of n tokens must be non-empty and leave the context room for one more; the 400
 * names it as `where`. */
static bool prompt_fits(const engine_backend *b, int n, const char *where, http_status *st) {
    if (n == 0) { http_status_set(st, 400, "invalid_request_error", "%s is empty", where); return false; }
    if (n >= b->n_ctx) {
        http_status_set(st, 400, "invalid_request_error",
                        "the prompt is too long for the context: %s has %d tokens, the context holds %d", where, n,
                        b->n_ctx);
        return false;
    }
    return true;
}

/* Prompts answered by this request: a completions batch, else one. */
static int gen_n_choices(const serve_gen *g) { return g->r.n_prompts > 0 ? g->r.n_prompts : 1; }

/* Tokenizes every text prompt of a completions request and checks every prompt's length
 * before anything is generated, so that a bad prompt of a batch is a 400, not a broken stream. */
static bool gen_tokenize_prompts(serve_gen *g, http_status *st) {
    const engine_backend *b = &g->s->b;
    for (int i = 0; i < g->r.n_prompts; i++) {
        serve_prompt *p = &g->r.prompts[i];
        char where[32] = "the prompt";
        if (g->r.n_prompts > 1) snprintf(where, sizeof where, "prompt[%d]", i);
        if (p->text && prompt_encode(b, p->text, false, &p->tokens, &p->n_tokens)) {
            http_status_set(st, 500, "server_error", "the engine failed");
            return false;
        }
        if (!prompt_fits(b, p->n_tokens, where, st)) return false;
    }
    return true;
}

/* Makes prompt `i` the request's tokens (a copy: the batch keeps its own). */
static bool gen_load_prompt(serve_gen *g, int i, http_status *st) {
    if (g->r.n_prompts == 0) return true; /* chat: the rendered text, tokenized by gen_prefill */
    const serve_prompt *p = &g->r.prompts[i];
    int32_t *t = realloc(g->r.tokens, (size_t)p->n_tokens * sizeof(int32_t));
    if (!t) { http_status_set(st, 500, "server_error", "out of memory"); return false; }
    memcpy(t, p->tokens, (size_t)p->n_tokens * sizeof(int32_t));
    g->r.tokens = t;
    g->r.n_tokens = p->n_tokens;
    g->r.has_tokens = true;
    return true;
}

/* The echoed prompt's text: the string as sent, or the ids' pieces as valid UTF-8. */
static pacer_err gen_echo_text(serve_gen *g, buf *out) {
    if (!g->r.echo) return PACER_OK;
    const serve_prompt *p = &g->r.prompts[g->choice];
    if (p->text) return buf_append_str(out, p->text);
    const engine_backend *b = &g->s->b;
    gen_text t;
    gen_text_init(&t, NULL, 0);
    pacer_err rc = PACER_OK;
    for (int i = 0; i < p->n_tokens && !rc; i++) {
        size_t len = 0;
        const char *piece = b->piece(b->ctx, p->tokens[i], &len);
        rc = gen_text_push(&t, piece, len, out);
    }
    if (!rc) rc = gen_text_flush(&t, out);
    gen_text_free(&t);
    return rc;
}

static bool gen_prefill(serve_gen *g, http_status *st);

/* Starts answering prompt `i`: its prefill, and for a body the echoed text first. Prefill
 * runs on the scheduler thread: with one slot (or an echo's scored rows) at once, as a
 * pass of its own; else a chunk at a time in the passes (serve_sched.h). */
static bool gen_start_choice(serve_gen *g, int i, http_status *st) {
    if (!gen_load_prompt(g, i, st) || !gen_prefill(g, st)) return false;
    if (!g->r.stream && gen_echo_text(g, &g->acc)) { http_status_set(st, 500, "server_error", "out of memory"); return false; }
    return true;
}

bool gen_begin(serve_gen *g, http_status *st) {
    if (!g->r.stream && !g->choices && !(g->choices = json_array())) {
        http_status_set(st, 500, "server_error", "out of memory");
        return false;
    }
    return gen_tokenize_prompts(g, st) && gen_start_choice(g, 0, st);
}

/* The current choice is complete: keeps its counts and starts the next prompt of the batch. */
static bool gen_next_prompt(serve_gen *g, http_status *st) {
    g->finished.n_prompt += g->gs.n_prompt;
    g->finished.prompt_n += g->gs.prompt_n;
    g->finished.predicted_n += g->gs.predicted_n;
    g->finished.t_prefill_ns += g->gs.t_prefill_ns;
    g->choice++;
    g->n_lp = g->lp_sent = 0;
    g->lp_offset = 0;
    buf_reset(&g->acc);
    return gen_start_choice(g, g->choice, st);
}

/* Before usage and timings are reported: the counts of the batch's earlier prompts. */
static void gen_fold_finished(serve_gen *g) {
    g->gs.n_prompt += g->finished.n_prompt;
    g->gs.prompt_n += g->finished.prompt_n;
    g->gs.predicted_n += g->finished.predicted_n;
    g->gs.t_prefill_ns += g->finished.t_prefill_ns;
    memset(&g->finished, 0, sizeof g->finished);
}

/* The choice's logprobs value: the entries not yet sent (all of them for a body), in the
 * route's shape, or null when not asked for or a chunk has none. */
static json_t *gen_logprobs_json(serve_gen *g, bool body) {
    if (g->r.logprobs < 0 || (!body && g->lp_sent == g->n_lp)) return json_null();
    const logprob_entry *e = g->lp ? g->lp + g->lp_sent : NULL;
    int n = g->n_lp - g->lp_sent;
    g->lp_sent = g->n_lp;
    json_t *v = g->r.chat ? serve_logprobs_chat(&g->s->b, e, n)
                          : serve_logprobs_completion(&g->s->b, e, n, &g->lp_offset);
    return v ? v : json_null();
}

/* Tokenizes (chat), checks the context and starts the session: the cached prefix reused, or
 * for an echoed prompt with log-probabilities every row scored (position 0 has none). */
static bool gen_prefill(serve_gen *g, http_status *st) {
    serve_server *s = g->s;
    const engine_backend *b = &s->b;
    int n = g->r.n_tokens;
    if (!g->r.has_tokens) {
        free(g->r.tokens);
        g->r.tokens = NULL;
        if (prompt_encode(b, g->r.prompt.data ? g->r.prompt.data : "", g->r.chat, &g->r.tokens, &n)) goto fail;
        g->r.n_tokens = n;
    }
    if (!prompt_fits(b, n, "the prompt", st)) return false;
    bool rows = g->r.echo && g->r.logprobs >= 0;
    logprob_entry *e;
    if (rows) {
        if (gen_lp_next(g, &e)) goto fail;
        logprob_entry_none(e, g->r.tokens[0]);
    }
    gen_params p = {.sp = g->r.sp, .seed = g->r.seed, .max_tokens = g->r.max_tokens, .stops = g->r.stops,
                    .n_stops = g->r.n_stops, .reuse_prefix = g->r.cache_prompt, .defer_prefill = s->n_slots > 1 && !rows};
    /* one hash over a whole batch */
    if (gen_session_start(&g->gs, &s->slots[g->slot].gm, &p, g->r.tokens, n, rows ? gen_echo_row : NULL, g, g->choice > 0)) goto fail;
    return true;
fail:
    http_status_set(st, 500, "server_error", "the engine failed");
    return false;
}

/* Takes one token into `text`, and its log-probabilities when asked for. */
static pacer_err gen_step(serve_gen *g, buf *text) {
    pacer_err rc = gen_session_step(&g->gs, text);
    if (rc == PACER_OK && g->gs.emitted) rc = gen_logprob_token(g, g->gs.tok, g->gs.tok_row);
    return rc;
}

static json_t *gen_timings(const serve_gen *g) {
    const gen_session *gs = &g->gs;
    double pms = (double)gs->t_prefill_ns / 1e6, dms = (double)gs->t_decode_ns / 1e6;
    return json_pack("{s:i,s:f,s:f,s:i,s:f,s:f,s:i,s:i,s:i}", "prompt_n", gs->prompt_n, "prompt_ms", pms,
                     "prompt_per_second", pms > 0 ? gs->prompt_n * 1e3 / pms : 0.0, "predicted_n", gs->predicted_n,
                     "predicted_ms", dms, "predicted_per_second", dms > 0 ? gs->predicted_n * 1e3 / dms : 0.0,
                     "draft_n", gs->draft_n, "draft_n_accepted", gs->draft_n_accepted, "verify_rounds",
                     gs->verify_rounds);
}

static json_t *gen_usage(const serve_gen *g) {
    return json_pack("{s:i,s:i,s:i}", "prompt_tokens", g->gs.n_prompt, "completion_tokens", g->gs.predicted_n,
                     "total_tokens", g->gs.n_prompt + g->gs.predicted_n);
}

static void gen_account(serve_gen *g) {
    serve_server *s = g->s;
    const gen_session *gs = &g->gs;
    pthread_mutex_lock(&s->mu);
    s->m.prompt_tokens += (uint64_t)gs->n_prompt;
    s->m.cached_tokens += (uint64_t)(gs->n_prompt - gs->prompt_n);
    s->m.generated_tokens += (uint64_t)gs->predicted_n;
    s->m.prefill_s += (double)gs->t_prefill_ns / 1e9;
    s->m.decode_s += (double)gs->t_decode_ns / 1e9;
    pthread_mutex_unlock(&s->mu);
}

/* One choice: text (completions), delta (chat stream) or message (chat body). */
static json_t *gen_choice(serve_gen *g, const char *text, size_t len, bool role, const char *finish, bool body) {
    json_t *c = json_pack("{s:i}", "index", g->choice);
    json_t *t = json_stringn(text ? text : "", text ? len : 0);
    json_object_set_new(c, "logprobs", role ? json_null() : gen_logprobs_json(g, body));
    if (!g->r.chat) {
        json_object_set_new(c, "text", t);
    } else if (body) {
        json_object_set_new(c, "message", json_pack("{s:s,s:o}", "role", "assistant", "content", t));
    } else {
        json_t *d = json_object();
        if (role) json_object_set_new(d, "role", json_string("assistant"));
        if (len || role) json_object_set_new(d, "content", t);
        else json_decref(t);
        json_object_set_new(c, "delta", d);
    }
    json_object_set_new(c, "finish_reason", finish ? json_string(finish) : json_null());
    return c;
}

static json_t *gen_envelope(const serve_gen *g, bool body) {
    const char *obj = g->r.chat ? (body ? "chat.completion" : "chat.completion.chunk") : "text_completion";
    return json_pack("{s:s,s:s,s:I,s:s,s:[]}", "id", g->id, "object", obj, "created", (json_int_t)g->created,
                     "model", g->s->id, "choices");
}

static pacer_err sse_append(buf *out, json_t *v) {
    char *s = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    if (!s) return PACER_ERR_NOMEM;
    pacer_err rc = buf_appendf(out, "data: %s\n\n", s);
    free(s);
    return rc;
}

/* With echo: a chunk with the current prompt's text and its positions' log-probabilities. */
static pacer_err gen_stream_echo(serve_gen *g) {
    if (!g->r.echo) return PACER_OK;
    buf text;
    buf_init(&text, 1u << 22);
    pacer_err rc = gen_echo_text(g, &text);
    if (rc == PACER_OK) {
        json_t *v = gen_envelope(g, false);
        json_array_append_new(json_object_get(v, "choices"), gen_choice(g, text.data, text.len, false, NULL, false));
        rc = sse_append(&g->pending, v);
    }
    buf_free(&text);
    return rc;
}

/* Produces the next SSE events into g->pending. */
static pacer_err gen_stream_more(serve_gen *g) {
    pacer_err rc = PACER_OK;
    if (!g->started) {
        g->started = true;
        if (g->r.chat) {
            json_t *v = gen_envelope(g, false);
            json_array_append_new(json_object_get(v, "choices"), gen_choice(g, "", 0, true, NULL, false));
            return sse_append(&g->pending, v);
        }
        if (g->r.echo) return gen_stream_echo(g);
    }
    if (!g->gs.done) {
        buf text;
        buf_init(&text, 1u << 20);
        rc = gen_step(g, &text);
        if (rc == PACER_OK && (text.len || g->lp_sent < g->n_lp)) { /* log-probabilities: a chunk per step */
            json_t *v = gen_envelope(g, false);
            json_array_append_new(json_object_get(v, "choices"), gen_choice(g, text.data, text.len, false, NULL, false));
            rc = sse_append(&g->pending, v);
        }
        buf_free(&text);
        if (rc || !g->gs.done) return rc;
    }
    if (g->choice + 1 < gen_n_choices(g)) {
        /* a batch: this choice ends with its finish_reason, the next prompt starts */
        json_t *v = gen_envelope(g, false);
        json_array_append_new(json_object_get(v, "choices"), gen_choice(g, "", 0, false, g->gs.finish, false));
        if ((rc = sse_append(&g->pending, v))) return rc;
        http_status st;
        if (!gen_next_prompt(g, &st)) return PACER_ERR_STATE;
        return gen_stream_echo(g);
    }
    if (!g->sent_final) {
        g->sent_final = true;
        gen_fold_finished(g);
        gen_account(g);
        char hex[65];
        gen_session_hash_hex(&g->gs, hex);
        json_t *v = gen_envelope(g, false);
        json_array_append_new(json_object_get(v, "choices"), gen_choice(g, "", 0, false, g->gs.finish, false));
        json_object_set_new(v, "timings", gen_timings(g));
        json_object_set_new(v, "token_hash", json_string(hex));
        if ((rc = sse_append(&g->pending, v))) return rc;
        if (g->r.include_usage) {
            v = gen_envelope(g, false);
            json_object_set_new(v, "usage", gen_usage(g));
            if ((rc = sse_append(&g->pending, v))) return rc;
        }
        rc = buf_append_str(&g->pending, "data: [DONE]\n\n");
    }
    return rc;
}

/* The body's next step: a token into the text, a finished choice (and the batch's next
 * prompt), or the whole answer into g->body. */
static pacer_err gen_body_more(serve_gen *g) {
    if (!g->gs.done) return gen_step(g, &g->acc);
    json_array_append_new(g->choices, gen_choice(g, g->acc.data, g->acc.len, false, g->gs.finish, true));
    if (g->choice + 1 < gen_n_choices(g)) return gen_next_prompt(g, &g->st) ? PACER_OK : PACER_ERR_STATE;
    gen_fold_finished(g);
    gen_account(g);
    char hex[65];
    gen_session_hash_hex(&g->gs, hex);
    json_t *v = gen_envelope(g, true);
    json_object_set(v, "choices", g->choices);
    json_object_set_new(v, "usage", gen_usage(g));
    json_object_set_new(v, "timings", gen_timings(g));
    json_object_set_new(v, "token_hash", json_string(hex));
    g->body = v;
    g->sent_final = true;
    return PACER_OK;
}

pacer_err gen_advance(serve_gen *g) {
    pacer_err rc = PACER_OK;
    while (rc == PACER_OK && !g->sent_final && !gen_session_needs_eval(&g->gs))
        rc = g->r.stream ? gen_stream_more(g) : gen_body_more(g);
    return rc;
}

/* The streamed body: the scheduler's events as the socket takes them (http_stream_read).
 * Ends in an error (the connection closed mid-body) when generation was cut short. */
static ssize_t stream_reader(void *cls, char *dst, size_t max) {
    serve_gen *g = cls;
    serve_server *s = g->s;
    pthread_mutex_lock(&s->mu);
    while (g->out.len == 0 && g->state == GEN_RUNNING) pthread_cond_wait(&g->cv, &s->mu);
    ssize_t n = g->broken ? HTTP_STREAM_ERROR : HTTP_STREAM_END;
    if (g->out.len) {
        size_t k = g->out.len < max ? g->out.len : max;
        memcpy(dst, g->out.data, k);
        buf_consume(&g->out, k);
        n = (ssize_t)k;
        if (g->out.len == 0) pthread_cond_signal(&s->drained);
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* The connection is done with the stream (finished or gone): generation stops. */
static void stream_free(void *cls) {
    serve_gen *g = cls;
    pthread_mutex_lock(&g->s->mu);
    g->gone = true;
    pthread_mutex_unlock(&g->s->mu);
    sched_release(g);
}

/* POST /v1/completions and /v1/chat/completions: a body, or an SSE stream. The request
 * waits for a slot (up to queue_max wait, then 503), the scheduler prefills it and decodes
 * it with the others; this thread only answers. */
static pacer_err route_generate(serve_server *s, http_req *req, bool chat) {
    http_status st = {0};
    serve_gen *g = calloc(1, sizeof *g);
    if (!g) return PACER_ERR_NOMEM;
    g->s = s;
    pthread_cond_init(&g->cv, NULL);
    buf_init(&g->out, s->opt.unread_max);
    buf_init(&g->pending, 1u << 22);
    buf_init(&g->acc, 1u << 24);
    pthread_mutex_lock(&s->mu);
    s->m.requests++;
    snprintf(g->id, sizeof g->id, "%s-%llu", chat ? "chatcmpl" : "cmpl", (unsigned long long)++s->next_id);
    pthread_mutex_unlock(&s->mu);
    g->created = (int64_t)time(NULL);
    size_t len;
    const char *body = http_req_body(req, &len);
    serve_req_model rm = {.id = s->id, .chat = s->chat, .n_vocab = s->b.n_vocab, .prompt_cache = s->opt.prompt_cache};
    if (!serve_req_parse(&rm, body, len, chat, &g->r, &st)) {
        gen_free(g);
        return send_error(s, req, &st);
    }
    if (!sched_submit(s, g)) {
        gen_free(g);
        http_status_set(&st, 503, "unavailable_error", "the server is busy: retry later");
        return send_error(s, req, &st);
    }
    gen_state state = sched_wait(g, g->r.stream ? GEN_RUNNING : GEN_ENDED);
    if (state == GEN_FAILED) {
        st = g->st;
        sched_release(g);
        return send_error(s, req, &st);
    }
    if (g->r.stream) {
        if (http_req_add_header(req, "Cache-Control", "no-cache")) { stream_free(g); return PACER_ERR_NOMEM; }
        return http_respond_stream(req, 200, "text/event-stream", stream_reader, stream_free, g);
    }
    json_t *v = g->body;
    g->body = NULL;
    sched_release(g);
    if (v) return http_respond_json(req, 200, v);
    http_status_set(&st, 500, "server_error", "the engine failed");
    return send_error(s, req, &st);
}

/* ---- other routes ---- */

static json_t *model_object(serve_server *s) {
    return json_pack("{s:s,s:s,s:I,s:s,s:s,s:b,s:i,s:s}", "id", s->id, "object", "model", "created", (json_int_t)0,
                     "owned_by", "pacer", "family", s->chat->name, "raw_text", s->chat->raw_text, "n_ctx", s->b.n_ctx,
                     "drafting", draft_mode_name(s->mode));
}

/* The rest of the routes: each a http_handler; ctx is the serve_server. The routes that need
 * the model answer 503 until serve_set_model. */

static bool server_ready(serve_server *s) {
    pthread_mutex_lock(&s->mu);
    bool ready = s->ready;
    pthread_mutex_unlock(&s->mu);
    return ready;
}

static pacer_err answer_loading(serve_server *s, http_req *req) {
    http_status st;
    http_status_set(&st, 503, "unavailable_error", "loading the model");
    return send_error(s, req, &st);
}


static pacer_err route_models(void *ctx, http_req *req) {
    serve_server *s = ctx;
    if (!server_ready(s)) return answer_loading(s, req);
    return http_respond_json(req, 200, json_pack("{s:s,s:[o]}", "object", "list", "data", model_object(s)));
}

/* The manifest of docs/manifest.md (fields: schema/manifest.h); revision and hardware only
 * when known. */
static pacer_err route_manifest(void *ctx, http_req *req) {
    serve_server *s = ctx;
    if (!server_ready(s)) return answer_loading(s, req);
#ifdef __APPLE__
    const char *platform = "macos";
#else
    const char *platform = "linux";
#endif
    json_t *v = json_object();
    if (!v) return PACER_ERR_NOMEM;
    pacer_err rc = manifest_put(v, MF_VERSION, json_integer(MANIFEST_VERSION));
    rc = rc ? rc : manifest_put(v, MF_BACKEND, json_string("cpu"));
    rc = rc ? rc : manifest_put(v, MF_PLATFORM, json_string(platform));
    rc = rc ? rc : manifest_put(v, MF_RANK_COUNT, json_integer(1));
    rc = rc ? rc : manifest_put(v, MF_CHECKPOINT, json_pack("{s:[s]}", "sha256", s->sha256));
    rc = rc ? rc : manifest_put(v, MF_ENGINE, json_string("pacer"));
    rc = rc ? rc : manifest_put(v, MF_ENGINE_VERSION, json_string(PACER_VERSION));
    rc = rc ? rc : manifest_put(v, MF_MODEL, json_string(s->id));
    rc = rc ? rc : manifest_put(v, MF_FILE, json_string(s->file));
    rc = rc ? rc : manifest_put(v, MF_CHAT_FORMAT, json_string(s->chat->name));
    rc = rc ? rc : manifest_put(v, MF_RAW_TEXT, json_boolean(s->chat->raw_text));
    rc = rc ? rc : manifest_put(v, MF_PROMPT_CACHE, json_boolean(s->opt.prompt_cache));
    if (!rc && s->revision[0]) rc = manifest_put(v, MF_REVISION, json_string(s->revision));
    rc = rc ? rc : manifest_put(v, MF_DRAFTING, json_string(draft_mode_name(s->mode)));
    if (!rc && s->mode == DRAFT_MODE_MODEL)
        rc = manifest_put(v, MF_DRAFTER, json_pack("{s:s,s:s}", "file", s->drafter_file, "sha256", s->drafter_sha256));
    json_t *hw = s->hardware ? json_loads(s->hardware, 0, NULL) : NULL;
    if (!rc && json_is_object(hw)) rc = manifest_put(v, MF_HARDWARE, json_incref(hw));
    json_decref(hw);
    if (rc) {
        json_decref(v);
        return rc;
    }
    return http_respond_json(req, 200, v);
}

static pacer_err route_metrics(void *ctx, http_req *req) {
    serve_server *s = ctx;
    buf b;
    buf_init(&b, 1u << 16);
    pthread_mutex_lock(&s->mu);
    serve_metrics m = s->m;
    int busy = s->n_slots - s->n_free, queued = s->n_queued;
    pthread_mutex_unlock(&s->mu);
    buf_appendf(&b,
                "# TYPE pacer_requests_total counter\npacer_requests_total %llu\n"
                "# TYPE pacer_request_errors_total counter\npacer_request_errors_total %llu\n"
                "# TYPE pacer_prompt_tokens_total counter\npacer_prompt_tokens_total %llu\n"
                "# TYPE pacer_prompt_tokens_cached_total counter\npacer_prompt_tokens_cached_total %llu\n"
                "# TYPE pacer_generated_tokens_total counter\npacer_generated_tokens_total %llu\n"
                "# TYPE pacer_prefill_seconds_total counter\npacer_prefill_seconds_total %.6f\n"
                "# TYPE pacer_decode_seconds_total counter\npacer_decode_seconds_total %.6f\n"
                "# TYPE pacer_decode_passes_total counter\npacer_decode_passes_total %llu\n"
                "# TYPE pacer_decode_rows_total counter\npacer_decode_rows_total %llu\n"
                "# TYPE pacer_decode_prompt_rows_total counter\npacer_decode_prompt_rows_total %llu\n"
                "# TYPE pacer_decode_pass_seconds_total counter\npacer_decode_pass_seconds_total %.6f\n"
                "# TYPE pacer_slots_busy gauge\npacer_slots_busy %d\n"
                "# TYPE pacer_requests_waiting gauge\npacer_requests_waiting %d\n",
                (unsigned long long)m.requests, (unsigned long long)m.errors, (unsigned long long)m.prompt_tokens,
                (unsigned long long)m.cached_tokens, (unsigned long long)m.generated_tokens, m.prefill_s, m.decode_s,
                (unsigned long long)m.passes, (unsigned long long)m.rows, (unsigned long long)m.prompt_rows, m.pass_s, busy,
                queued);
    size_t len = b.len;
    char *text = buf_detach(&b);
    if (!text) return PACER_ERR_NOMEM;
    return http_respond_take(req, 200, "text/plain; version=0.0.4", text, len);
}

static pacer_err route_health(void *ctx, http_req *req) {
    serve_server *s = ctx;
    return server_ready(s) ? http_respond_json(req, 200, json_pack("{s:s}", "status", "ok")) : answer_loading(s, req);
}

static pacer_err route_completions(void *ctx, http_req *req) {
    serve_server *s = ctx;
    return server_ready(s) ? route_generate(s, req, false) : answer_loading(s, req);
}

static pacer_err route_chat(void *ctx, http_req *req) {
    serve_server *s = ctx;
    return server_ready(s) ? route_generate(s, req, true) : answer_loading(s, req);
}

static pacer_err route_not_found(void *ctx, http_req *req) {
    http_status st;
    http_status_set(&st, 404, "not_found_error", "no route %s", http_req_path(req));
    return send_error(ctx, req, &st);
}

static pacer_err route_too_large(void *ctx, http_req *req) {
    http_status st;
    http_status_set(&st, 413, "invalid_request_error", "the request body is larger than the server accepts");
    return send_error(ctx, req, &st);
}

static const http_route ROUTES[] = {
    {"GET", "/health", HTTP_MATCH_EXACT, route_health},
    {"GET", "/metrics", HTTP_MATCH_EXACT, route_metrics},
    {"GET", "/v1/models", HTTP_MATCH_EXACT, route_models},
    {"GET", "/v1/benchmark/manifest", HTTP_MATCH_EXACT, route_manifest},
    {"POST", "/v1/completions", HTTP_MATCH_EXACT, route_completions},
    {"POST", "/v1/chat/completions", HTTP_MATCH_EXACT, route_chat},
};

void serve_options_default(serve_options *o) {
    memset(o, 0, sizeof *o);
    o->host = "127.0.0.1";
    o->prompt_cache = true;
    o->queue_max = 4;
    o->max_body = 1u << 20;
    o->draft_max = 8;
    o->parallel = 1;
    o->prefill_chunk = SERVE_PREFILL_CHUNK;
    o->unread_max = 4u << 20;
}

pacer_err serve_start(const serve_options *o, serve_server **out, char *err, size_t err_len) {
    *out = NULL;
    if (o->draft_max < 1 || o->draft_max > DRAFT_MAX) {
        snprintf(err, err_len, "the draft length must be 1..%d", DRAFT_MAX);
        return PACER_ERR_ARG;
    }
    if (o->prefill_chunk < 1 || o->prefill_chunk > SERVE_PREFILL_CHUNK_MAX) {
        snprintf(err, err_len, "the prefill chunk must be 1..%d rows", SERVE_PREFILL_CHUNK_MAX);
        return PACER_ERR_ARG;
    }
    if (o->unread_max == 0) {
        snprintf(err, err_len, "the unread stream limit must be positive");
        return PACER_ERR_ARG;
    }
    if (o->parallel < 1 || o->parallel > SERVE_PARALLEL_MAX) {
        snprintf(err, err_len, "the number of parallel sequences must be 1..%d", SERVE_PARALLEL_MAX);
        return PACER_ERR_ARG;
    }
    serve_server *s = calloc(1, sizeof *s);
    if (!s) return PACER_ERR_NOMEM;
    s->opt = *o;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_cond_init(&s->drained, NULL);
    /* one thread per connection: a streamed body waits for the scheduler's bytes in its reader */
    http_options ho = {.host = o->host, .port = o->port, .max_body = o->max_body, .timeout_s = 600,
                       .tcp_nodelay = true, .routes = ROUTES, .n_routes = sizeof ROUTES / sizeof ROUTES[0],
                       .not_found = route_not_found, .too_large = route_too_large, .ctx = s};
    pacer_err rc = http_server_start(&ho, &s->http, err, err_len);
    if (rc) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        pthread_cond_destroy(&s->drained);
        free(s);
        return rc;
    }
    *out = s;
    return PACER_OK;
}

int serve_port(const serve_server *s) { return http_server_port(s->http); }

static char *dup_or_empty(const char *v) { return strdup(v ? v : ""); }

pacer_err serve_set_model(serve_server *s, const engine_backend *b, const serve_model_info *info) {
    const char *slash = info->path ? strrchr(info->path, '/') : NULL;
    if (info->drafter && info->drafter->n_vocab != b->n_vocab) return PACER_ERR_ARG;
    pthread_mutex_lock(&s->mu);
    s->id = dup_or_empty(info->id);
    s->file = dup_or_empty(slash ? slash + 1 : info->path);
    s->sha256 = dup_or_empty(info->sha256);
    s->revision = dup_or_empty(info->revision);
    s->hardware = info->hardware_json ? strdup(info->hardware_json) : NULL;
    s->chat = info->chat ? info->chat : chat_format_by_name("plain");
    const char *dslash = info->drafter_path ? strrchr(info->drafter_path, '/') : NULL;
    s->drafter_file = dup_or_empty(dslash ? dslash + 1 : info->drafter_path);
    s->drafter_sha256 = dup_or_empty(info->drafter_sha256);
    s->b = *b;
    pacer_err rc = s->id && s->file && s->sha256 && s->revision && s->drafter_file && s->drafter_sha256
                       ? sched_start(s, info->drafter)
                       : PACER_ERR_NOMEM;
    s->ready = rc == PACER_OK;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void serve_stop(serve_server *s) {
    if (!s) return;
    sched_stop(s); /* requests in flight end, their connections close */
    http_server_stop(s->http);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->drained);
    free(s->id); free(s->file); free(s->sha256); free(s->revision); free(s->hardware);
    free(s->drafter_file); free(s->drafter_sha256);
    free(s);
}
