/* serve.c - the OpenAI routes (a table over server/http.h), request validation, the
 * single-decoder queue, generation (prefix reuse, sampling, drafting rounds, stop strings)
 * and OpenAI response/SSE bodies. The HTTP layer runs one thread per connection, so a
 * streaming body is generated inside its reader and a client that goes away stops generation
 * at the next token. */
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
#include "engine/logprob.h"
#include "engine/sampler.h"
#include "engine/serve_text.h"
#include "server/http.h"
#include "server/serve_logprob.h"

typedef struct serve_metrics {
    uint64_t requests, errors, prompt_tokens, cached_tokens, generated_tokens;
    double prefill_s, decode_s;
} serve_metrics;

struct serve_server {
    http_server *http;
    serve_options opt;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool busy, ready;
    int waiting;
    engine_backend b;
    char *id, *file, *sha256, *revision, *hardware;
    const chat_format *chat;
    serve_metrics m;
    int32_t *cache; /* tokens in the backend's KV cache, under the decoder lock */
    int n_cache;
    float *logits;  /* target rows, draft_max + 1 of n_vocab: row 0 after prefill, a round's rows */
    draft_mode mode;
    draft_model dm; /* the drafter's cache and buffers (DRAFT_MODE_MODEL) */
    int32_t *batch; /* a round's target input: the last token, then the drafts */
    float *p_work;  /* n_vocab: the target distribution while verifying sampled drafts */
    char *drafter_file, *drafter_sha256;
    float *rows; /* SERVE_ECHO_ROWS rows of logits for echoed prompts, allocated on first use */
    uint64_t next_id;
};

/* Echoed prompts are evaluated in chunks of this many rows, the engine's own batch, so that
 * the rows equal those of an ordinary prefill without holding n_ctx rows of logits. */
#define SERVE_ECHO_ROWS 32

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

/* ---- the decoder lock and its short queue ---- */

static bool decoder_acquire(serve_server *s) {
    bool ok = true;
    pthread_mutex_lock(&s->mu);
    if (s->busy || s->waiting > 0) {
        if (s->waiting >= s->opt.queue_max) ok = false;
        else {
            s->waiting++;
            while (s->busy) pthread_cond_wait(&s->cv, &s->mu);
            s->waiting--;
        }
    }
    if (ok) s->busy = true;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

static void decoder_release(serve_server *s) {
    pthread_mutex_lock(&s->mu);
    s->busy = false;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* ---- requests ---- */

/* One prompt of a completions request (a batch has several): text, tokenized under the
 * decoder lock, or token ids. */
typedef struct serve_prompt {
    const char *text; /* borrowed from the request JSON; NULL for ids */
    int32_t *tokens;
    int n_tokens;
} serve_prompt;

typedef struct serve_req {
    bool chat, stream, include_usage, cache_prompt;
    json_t *root;
    const char *model;
    int64_t max_tokens;
    sampler_params sp;
    uint64_t seed;
    const char *stops[SERVE_MAX_STOPS];
    int n_stops;
    buf prompt;           /* rendered text */
    int32_t *tokens;      /* or given ids */
    int n_tokens;
    bool has_tokens;
    serve_prompt *prompts; /* completions: every prompt, answered in order */
    int n_prompts;
    int logprobs;          /* alternatives listed per position (0..20); -1: no log-probabilities */
    bool echo;             /* completions: the prompt (and its log-probabilities) lead the choice */
} serve_req;

static void req_free(serve_req *r) {
    json_decref(r->root);
    buf_free(&r->prompt);
    free(r->tokens);
    for (int i = 0; i < r->n_prompts; i++) free(r->prompts[i].tokens);
    free(r->prompts);
}

/* Checks that `key`, when present and not null, has the wanted JSON type. */
static bool type_ok(const json_t *root, const char *key, int want, http_status *st) {
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) return true;
    bool ok = want == 'n' ? json_is_number(v) : want == 'i' ? json_is_integer(v) : want == 'b' ? json_is_boolean(v)
              : want == 's' ? json_is_string(v) : want == 'o' ? json_is_object(v) : true;
    if (!ok) {
        static const struct { int c; const char *name; } NAMES[] = {
            {'n', "a number"}, {'i', "an integer"}, {'b', "a boolean"}, {'s', "a string"}, {'o', "an object"}};
        const char *name = "valid";
        for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
            if (NAMES[i].c == want) name = NAMES[i].name;
        http_status_set(st, 400, "invalid_request_error", "'%s' must be %s", key, name);
    }
    return ok;
}

static const struct { const char *key; int type; } FIELD_TYPES[] = {
    {"model", 's'}, {"max_tokens", 'i'}, {"max_completion_tokens", 'i'}, {"temperature", 'n'}, {"top_k", 'i'},
    {"top_p", 'n'}, {"seed", 'i'}, {"stream", 'b'}, {"stream_options", 'o'}, {"cache_prompt", 'b'},
    {"echo", 'b'}, {"top_logprobs", 'i'},
};

/* Token ids of `a` into p; a 400 names the first bad position as where[i]. */
static bool prompt_ids(serve_server *s, json_t *a, const char *where, serve_prompt *p, http_status *st) {
    size_t i, n = json_array_size(a);
    json_t *v;
    if (n == 0) { http_status_set(st, 400, "invalid_request_error", "%s is empty", where); return false; }
    p->tokens = malloc(n * sizeof *p->tokens);
    if (!p->tokens) { http_status_set(st, 500, "server_error", "out of memory"); return false; }
    json_array_foreach(a, i, v) {
        json_int_t id = json_is_integer(v) ? json_integer_value(v) : -1;
        if (id < 0 || id >= s->b.n_vocab) {
            http_status_set(st, 400, "invalid_request_error", "%s[%zu] is not a token id of this model", where, i);
            return false;
        }
        p->tokens[p->n_tokens++] = (int32_t)id;
    }
    return true;
}

/* `prompt` of /v1/completions as OpenAI takes it: a string, an array of token ids, or an
 * array whose items are either (a batch, answered as choices in order). */
static bool req_parse_prompts(serve_server *s, serve_req *r, json_t *p, http_status *st) {
    static const char *const shape = "'prompt' must be a string, an array of token ids, or an array of those";
    bool batch = json_is_array(p) && json_array_size(p) > 0 && !json_is_integer(json_array_get(p, 0));
    if (!json_is_string(p) && !json_is_array(p)) { http_status_set(st, 400, "invalid_request_error", "%s", shape); return false; }
    size_t n = batch ? json_array_size(p) : 1;
    r->prompts = calloc(n, sizeof *r->prompts);
    if (!r->prompts) { http_status_set(st, 500, "server_error", "out of memory"); return false; }
    r->n_prompts = (int)n;
    for (size_t i = 0; i < n; i++) {
        json_t *item = batch ? json_array_get(p, i) : p;
        char where[32] = "prompt";
        if (batch) snprintf(where, sizeof where, "prompt[%zu]", i);
        if (json_is_string(item)) {
            if (!s->chat->raw_text) {
                http_status_set(st, 400, "invalid_request_error",
                           "this model's chat format (%s) does not accept raw text: use /v1/chat/completions",
                           s->chat->name);
                return false;
            }
            r->prompts[i].text = json_string_value(item);
        } else if (json_is_array(item)) {
            if (!prompt_ids(s, item, where, &r->prompts[i], st)) return false;
        } else {
            http_status_set(st, 400, "invalid_request_error", "%s", shape);
            return false;
        }
    }
    return true;
}

/* logprobs (an integer for completions, a boolean with top_logprobs for chat) and echo. */
static bool req_parse_logprobs(serve_req *r, http_status *st) {
    json_t *lp = json_object_get(r->root, "logprobs"), *top = json_object_get(r->root, "top_logprobs");
    bool has_top = top && !json_is_null(top);
    r->logprobs = -1;
    if (r->chat) {
        if (lp && !json_is_null(lp) && !json_is_boolean(lp)) {
            http_status_set(st, 400, "invalid_request_error", "'logprobs' must be a boolean");
            return false;
        }
        if (has_top && !json_is_true(lp)) {
            http_status_set(st, 400, "invalid_request_error", "'top_logprobs' needs 'logprobs': true");
            return false;
        }
        if (json_is_true(lp)) r->logprobs = has_top ? (int)json_integer_value(top) : 0;
    } else if (lp && !json_is_null(lp)) {
        r->logprobs = json_is_integer(lp) ? (int)json_integer_value(lp) : -1;
        if (!json_is_integer(lp) || json_integer_value(lp) < 0 || json_integer_value(lp) > LOGPROB_MAX_TOP) {
            http_status_set(st, 400, "invalid_request_error", "'logprobs' must be an integer from 0 to 20");
            return false;
        }
    }
    if (r->chat && has_top && (r->logprobs < 0 || r->logprobs > LOGPROB_MAX_TOP)) {
        http_status_set(st, 400, "invalid_request_error", "'top_logprobs' must be from 0 to 20");
        return false;
    }
    r->echo = !r->chat && json_get_bool(r->root, "echo", false);
    /* the echoed prompt needs every row: a reused prefix has none, so it is evaluated again */
    if (r->echo && r->logprobs >= 0) r->cache_prompt = false;
    return true;
}

/* Parses and validates a body; unknown fields are ignored. */
static bool req_parse(serve_server *s, const char *body, size_t len, bool chat, serve_req *r, http_status *st) {
    memset(r, 0, sizeof *r);
    buf_init(&r->prompt, 1u << 22);
    r->chat = chat;
    json_error_t je;
    r->root = json_loadb(body, len, 0, &je);
    if (!r->root) { http_status_set(st, 400, "invalid_request_error", "malformed JSON: %s", je.text); return false; }
    if (!json_is_object(r->root)) {
        http_status_set(st, 400, "invalid_request_error", "the body must be a JSON object");
        return false;
    }
    for (size_t i = 0; i < sizeof FIELD_TYPES / sizeof FIELD_TYPES[0]; i++)
        if (!type_ok(r->root, FIELD_TYPES[i].key, FIELD_TYPES[i].type, st)) return false;
    r->model = json_get_str(r->root, "model", NULL);
    if (r->model && r->model[0] && strcmp(r->model, s->id) != 0) {
        http_status_set(st, 404, "not_found_error", "model '%s' does not exist", r->model);
        return false;
    }
    r->max_tokens = json_get_int(r->root, "max_tokens", json_get_int(r->root, "max_completion_tokens", chat ? -1 : 16));
    if (r->max_tokens < -1 || (json_object_get(r->root, "max_tokens") && r->max_tokens < 0)) {
        http_status_set(st, 400, "invalid_request_error", "'max_tokens' must be >= 0");
        return false;
    }
    r->sp.temperature = (float)json_get_num(r->root, "temperature", 1.0);
    r->sp.top_k = (int)json_get_int(r->root, "top_k", 0);
    r->sp.top_p = (float)json_get_num(r->root, "top_p", 1.0);
    if (r->sp.temperature < 0 || r->sp.top_p < 0 || r->sp.top_p > 1) {
        http_status_set(st, 400, "invalid_request_error", "'temperature' must be >= 0 and 'top_p' in [0, 1]");
        return false;
    }
    r->seed = (uint64_t)json_get_int(r->root, "seed", (int64_t)(clock_now_ns() & 0x7fffffff));
    r->stream = json_get_bool(r->root, "stream", false);
    r->include_usage = json_get_bool(json_object_get(r->root, "stream_options"), "include_usage", false);
    r->cache_prompt = json_get_bool(r->root, "cache_prompt", true) && s->opt.prompt_cache;
    json_t *stop = json_object_get(r->root, "stop");
    if (json_is_string(stop)) r->stops[r->n_stops++] = json_string_value(stop);
    else if (json_is_array(stop)) {
        size_t i;
        json_t *v;
        json_array_foreach(stop, i, v) {
            if (!json_is_string(v) || i >= SERVE_MAX_STOPS) {
                http_status_set(st, 400, "invalid_request_error", "'stop' must be a string or up to 4 strings");
                return false;
            }
            r->stops[r->n_stops++] = json_string_value(v);
        }
    } else if (stop && !json_is_null(stop)) {
        http_status_set(st, 400, "invalid_request_error", "'stop' must be a string or up to 4 strings");
        return false;
    }
    if (!req_parse_logprobs(r, st)) return false;
    char err[200] = "";
    if (chat) {
        if (chat_render(s->chat, json_object_get(r->root, "messages"), &r->prompt, err, sizeof err)) {
            http_status_set(st, 400, "invalid_request_error", "%s", err);
            return false;
        }
        return true;
    }
    return req_parse_prompts(s, r, json_object_get(r->root, "prompt"), st);
}

/* ---- generation ---- */

typedef struct serve_gen {
    serve_server *s;
    serve_req r;
    char id[40];
    int64_t created;
    sampler smp;
    sampler draft_smp; /* the drafter's own draws (sampled requests with a drafter model) */
    serve_text text;
    sha256_ctx hash;
    int n_prompt, prompt_n, n_past, predicted_n, verify_rounds, draft_n, draft_n_accepted;
    /* Tokens decided but not yet emitted, pend[i_pend..n_pend), each with the target's raw
     * logits row it was chosen from (in s->logits, valid until the next round). */
    int32_t pend[DRAFT_MAX + 1];
    const float *pend_row[DRAFT_MAX + 1];
    int n_pend, i_pend;
    /* The last token decided: emitted but not in the KV cache yet; the next round starts
     * with it. None right after prefill (the first token comes from the prefill's row). */
    int32_t last;
    bool has_last;
    /* The token gen_step took last (emitted, or the end-of-generation id) and the target's
     * full raw logits row it was chosen from (n_vocab floats; valid until the next gen_step):
     * what the log-probabilities of that token are computed from. */
    int32_t tok;
    const float *tok_row;
    int64_t t_prefill_ns, t_decode_ns;
    const char *finish;
    bool done, started, sent_final, ended, holds_lock;
    buf out; /* SSE bytes not yet handed to the socket */
    buf acc; /* non-streaming: all text */
    int choice;              /* the prompt being answered (completions batches have several) */
    json_t *choices;         /* non-streaming: the finished choices */
    struct { int n_prompt, prompt_n, predicted_n; int64_t t_prefill_ns; } finished; /* earlier prompts */
    logprob_entry *lp;       /* this choice's positions: the echoed prompt, then each token */
    int n_lp, lp_sent;       /* lp_sent: entries already put in a stream chunk */
    int64_t lp_offset;       /* text_offset of the next entry */
} serve_gen;

static void gen_free(serve_gen *g) {
    if (!g) return;
    if (g->holds_lock) decoder_release(g->s);
    sampler_free(&g->smp);
    sampler_free(&g->draft_smp);
    serve_text_free(&g->text);
    sha256_abort(&g->hash);
    buf_free(&g->out);
    buf_free(&g->acc);
    req_free(&g->r);
    json_decref(g->choices);
    free(g->lp);
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

/* Prefill of an echoed prompt with log-probabilities: all its tokens (such a request
 * bypasses prefix reuse) in chunks of SERVE_ECHO_ROWS, the engine's own chunking, so every
 * row is what a plain prefill computes; row i scores token i + 1, the last row goes to
 * s->logits. Position 0 has no row. */
static pacer_err gen_eval_echo(serve_gen *g) {
    serve_server *s = g->s;
    const engine_backend *b = &s->b;
    const int32_t *tok = g->r.tokens;
    int n = g->r.n_tokens;
    logprob_entry *e;
    pacer_err rc = PACER_OK;
    if (!s->rows && !(s->rows = malloc((size_t)SERVE_ECHO_ROWS * (size_t)b->n_vocab * sizeof(float))))
        return PACER_ERR_NOMEM;
    if ((rc = gen_lp_next(g, &e))) return rc;
    logprob_entry_none(e, tok[0]);
    for (int at = 0; at < n; at += SERVE_ECHO_ROWS) {
        int nb = n - at < SERVE_ECHO_ROWS ? n - at : SERVE_ECHO_ROWS;
        if ((rc = b->eval(b->ctx, tok + at, nb, at, s->rows, true))) return rc;
        for (int i = 0; i < nb; i++) {
            const float *row = s->rows + (size_t)i * (size_t)b->n_vocab;
            if (at + i + 1 == n) { memcpy(s->logits, row, (size_t)b->n_vocab * sizeof(float)); break; }
            if ((rc = gen_lp_next(g, &e))) return rc;
            logprob_entry_fill(e, row, b->n_vocab, tok[at + i + 1], g->r.logprobs);
        }
    }
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
    serve_text t;
    serve_text_init(&t, NULL, 0);
    pacer_err rc = PACER_OK;
    for (int i = 0; i < p->n_tokens && !rc; i++) {
        size_t len = 0;
        const char *piece = b->piece(b->ctx, p->tokens[i], &len);
        rc = serve_text_push(&t, piece, len, out);
    }
    if (!rc) rc = serve_text_flush(&t, out);
    serve_text_free(&t);
    return rc;
}

static bool gen_prefill(serve_gen *g, http_status *st);

/* Starts answering prompt `i`: its prefill, and for a body the echoed text first. */
static bool gen_start_choice(serve_gen *g, int i, http_status *st) {
    if (!gen_load_prompt(g, i, st) || !gen_prefill(g, st)) return false;
    if (!g->r.stream && gen_echo_text(g, &g->acc)) { http_status_set(st, 500, "server_error", "out of memory"); return false; }
    return true;
}

/* Starts answering the first prompt. */
static bool gen_begin(serve_gen *g, http_status *st) {
    return gen_tokenize_prompts(g, st) && gen_start_choice(g, 0, st);
}

/* The current choice is complete: keeps its counts and starts the next prompt of the batch. */
static bool gen_next_prompt(serve_gen *g, http_status *st) {
    g->finished.n_prompt += g->n_prompt;
    g->finished.prompt_n += g->prompt_n;
    g->finished.predicted_n += g->predicted_n;
    g->finished.t_prefill_ns += g->t_prefill_ns;
    g->predicted_n = 0;
    g->choice++;
    g->done = false;
    g->finish = NULL;
    g->n_lp = g->lp_sent = 0;
    g->lp_offset = 0;
    serve_text_free(&g->text);
    buf_reset(&g->acc);
    return gen_start_choice(g, g->choice, st);
}

/* Before usage and timings are reported: the counts of the batch's earlier prompts. */
static void gen_fold_finished(serve_gen *g) {
    g->n_prompt += g->finished.n_prompt;
    g->prompt_n += g->finished.prompt_n;
    g->predicted_n += g->finished.predicted_n;
    g->t_prefill_ns += g->finished.t_prefill_ns;
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

/* Tokenizes, checks the context, reuses the cached prefix and evaluates the rest. */
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
    g->n_prompt = n;
    if (!prompt_fits(b, n, "the prompt", st)) return false;
    int common = 0;
    if (g->r.cache_prompt)
        while (common < n && common < s->n_cache && s->cache[common] == g->r.tokens[common]) common++;
    if (common == n) common = n - 1; /* the last token is evaluated again for its logits */
    int64_t t0 = clock_now_ns();
    s->n_cache = 0;
    if (g->r.echo && g->r.logprobs >= 0 ? gen_eval_echo(g)
                                         : b->eval(b->ctx, g->r.tokens + common, n - common, common, s->logits, false))
        goto fail;
    memcpy(s->cache, g->r.tokens, (size_t)n * sizeof(int32_t));
    s->n_cache = n;
    /* the drafter reads the prompt now, so its catching up is prefill time, not decode */
    if (s->mode == DRAFT_MODE_MODEL && draft_model_sync(&s->dm, g->r.tokens, n)) goto fail;
    g->t_prefill_ns = clock_now_ns() - t0;
    g->n_past = n;
    g->prompt_n = n - common;
    g->n_pend = g->i_pend = 0;
    g->has_last = false;
    sampler_free(&g->smp); /* a batch's next prompt starts both again */
    sampler_init(&g->smp, &g->r.sp, g->r.seed);
    sampler_free(&g->draft_smp);
    sampler_init(&g->draft_smp, &g->r.sp, g->r.seed ^ 0xD1B54A32D192ED03ull);
    serve_text_init(&g->text, g->r.stops, g->r.n_stops);
    if (g->choice == 0 && sha256_begin(&g->hash)) goto fail; /* one hash over a whole batch */
    if (g->r.max_tokens == 0) { g->done = true; g->finish = "length"; }
    return true;
fail:
    http_status_set(st, 500, "server_error", "the engine failed");
    return false;
}

/* Decides the next tokens into g->pend: the first from the prefill's row; later ones by one
 * verify round, where the last token and the round's drafts go through the target in one
 * pass, and the accepted drafts plus the target's own next token are queued. Serial
 * decoding is the round with no drafts. */
static pacer_err gen_decide(serve_gen *g) {
    serve_server *s = g->s;
    const engine_backend *b = &s->b;
    const size_t V = (size_t)b->n_vocab;
    pacer_err rc = PACER_OK;
    g->n_pend = g->i_pend = 0;
    if (!g->has_last) {
        int32_t tok = sampler_sample(&g->smp, s->logits, b->n_vocab);
        if (tok < 0) return PACER_ERR_NOMEM;
        g->pend[0] = tok;
        g->pend_row[0] = s->logits;
        g->n_pend = 1;
        return PACER_OK;
    }
    /* s->cache[0..n_past) is in the KV cache; the last token completes the history */
    s->cache[g->n_past] = g->last;
    /* drafts that could not be emitted (context or max_tokens) are not proposed */
    int budget = s->mode == DRAFT_MODE_SERIAL ? 0 : s->opt.draft_max;
    if (budget > b->n_ctx - 2 - g->n_past) budget = b->n_ctx - 2 - g->n_past;
    if (g->r.max_tokens >= 0 && budget > g->r.max_tokens - g->predicted_n - 1)
        budget = (int)(g->r.max_tokens - g->predicted_n - 1);
    int k = 0;
    const float *q = NULL;
    if (budget > 0 && s->mode == DRAFT_MODE_LOOKUP) k = draft_lookup(s->cache, g->n_past + 1, budget, s->batch + 1);
    else if (budget > 0 && s->mode == DRAFT_MODE_MODEL &&
             (rc = draft_model_propose(&s->dm, &g->draft_smp, s->cache, g->n_past + 1, budget, s->batch + 1, &k, &q)))
        return rc;
    s->batch[0] = g->last;
    s->n_cache = 0;
    if ((rc = b->eval(b->ctx, s->batch, k + 1, g->n_past, s->logits, k > 0))) return rc;
    g->verify_rounds++;
    int32_t next;
    int accepted = draft_verify(&g->smp, s->logits, b->n_vocab, s->batch + 1, k, q, s->p_work, &next);
    if (accepted < 0) return PACER_ERR_NOMEM;
    g->draft_n += k;
    g->draft_n_accepted += accepted;
    /* the cache keeps the last token and the accepted drafts; the next eval, at the new
     * n_past, drops the rejected ones */
    memcpy(s->cache + g->n_past, s->batch, (size_t)(accepted + 1) * sizeof(int32_t));
    g->n_past += accepted + 1;
    s->n_cache = g->n_past;
    for (int i = 0; i < accepted; i++) {
        g->pend[i] = s->batch[1 + i];
        g->pend_row[i] = s->logits + (size_t)i * V;
    }
    g->pend[accepted] = next;
    g->pend_row[accepted] = s->logits + (size_t)accepted * V;
    g->n_pend = accepted + 1;
    return PACER_OK;
}

/* Emits one token (deciding more first when none is pending) and appends its emittable
 * text to `text`. */
static pacer_err gen_step(serve_gen *g, buf *text) {
    serve_server *s = g->s;
    const engine_backend *b = &s->b;
    int64_t t0 = clock_now_ns();
    pacer_err rc = PACER_OK;
    if (g->i_pend == g->n_pend && (rc = gen_decide(g))) goto out;
    int32_t tok = g->pend[g->i_pend];
    g->tok = tok;
    g->tok_row = g->pend_row[g->i_pend++];
    g->last = tok;
    g->has_last = true;
    if (b->is_eog(b->ctx, tok)) { g->done = true; g->finish = "stop"; goto out; }
    uint8_t le[4] = {(uint8_t)tok, (uint8_t)(tok >> 8), (uint8_t)(tok >> 16), (uint8_t)(tok >> 24)};
    sha256_update(&g->hash, le, 4);
    g->predicted_n++;
    if ((rc = gen_logprob_token(g, tok, g->tok_row))) goto out;
    size_t plen = 0;
    const char *piece = b->piece(b->ctx, tok, &plen);
    if ((rc = serve_text_push(&g->text, piece, plen, text))) goto out;
    if (g->text.stopped) { g->done = true; g->finish = "stop"; goto out; }
    /* the token sits at position n_prompt + predicted_n - 1: the next needs one more */
    if ((g->r.max_tokens >= 0 && g->predicted_n >= g->r.max_tokens) || g->n_prompt + g->predicted_n >= b->n_ctx) {
        g->done = true; g->finish = "length"; goto out;
    }
out:
    if (g->done && rc == PACER_OK) rc = serve_text_flush(&g->text, text);
    g->t_decode_ns += clock_now_ns() - t0;
    return rc;
}

static json_t *gen_timings(const serve_gen *g) {
    double pms = (double)g->t_prefill_ns / 1e6, dms = (double)g->t_decode_ns / 1e6;
    return json_pack("{s:i,s:f,s:f,s:i,s:f,s:f,s:i,s:i,s:i}", "prompt_n", g->prompt_n, "prompt_ms", pms,
                     "prompt_per_second", pms > 0 ? g->prompt_n * 1e3 / pms : 0.0, "predicted_n", g->predicted_n,
                     "predicted_ms", dms, "predicted_per_second", dms > 0 ? g->predicted_n * 1e3 / dms : 0.0,
                     "draft_n", g->draft_n, "draft_n_accepted", g->draft_n_accepted, "verify_rounds", g->verify_rounds);
}

static json_t *gen_usage(const serve_gen *g) {
    return json_pack("{s:i,s:i,s:i}", "prompt_tokens", g->n_prompt, "completion_tokens", g->predicted_n,
                     "total_tokens", g->n_prompt + g->predicted_n);
}

static void gen_hash_hex(serve_gen *g, char hex[65]) {
    uint8_t d[32];
    if (sha256_end(&g->hash, d) == PACER_OK) sha256_to_hex(d, hex);
    else hex[0] = 0;
}

static void gen_account(serve_gen *g) {
    serve_server *s = g->s;
    pthread_mutex_lock(&s->mu);
    s->m.prompt_tokens += (uint64_t)g->n_prompt;
    s->m.cached_tokens += (uint64_t)(g->n_prompt - g->prompt_n);
    s->m.generated_tokens += (uint64_t)g->predicted_n;
    s->m.prefill_s += (double)g->t_prefill_ns / 1e9;
    s->m.decode_s += (double)g->t_decode_ns / 1e9;
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
        rc = sse_append(&g->out, v);
    }
    buf_free(&text);
    return rc;
}

/* Produces the next SSE events into g->out. */
static pacer_err gen_stream_more(serve_gen *g) {
    pacer_err rc = PACER_OK;
    if (!g->started) {
        g->started = true;
        if (g->r.chat) {
            json_t *v = gen_envelope(g, false);
            json_array_append_new(json_object_get(v, "choices"), gen_choice(g, "", 0, true, NULL, false));
            return sse_append(&g->out, v);
        }
        if (g->r.echo) return gen_stream_echo(g);
    }
    if (!g->done) {
        buf text;
        buf_init(&text, 1u << 20);
        rc = gen_step(g, &text);
        if (rc == PACER_OK && (text.len || g->lp_sent < g->n_lp)) { /* log-probabilities: a chunk per step */
            json_t *v = gen_envelope(g, false);
            json_array_append_new(json_object_get(v, "choices"), gen_choice(g, text.data, text.len, false, NULL, false));
            rc = sse_append(&g->out, v);
        }
        buf_free(&text);
        if (rc || !g->done) return rc;
    }
    if (g->choice + 1 < gen_n_choices(g)) {
        /* a batch: this choice ends with its finish_reason, the next prompt starts */
        json_t *v = gen_envelope(g, false);
        json_array_append_new(json_object_get(v, "choices"), gen_choice(g, "", 0, false, g->finish, false));
        if ((rc = sse_append(&g->out, v))) return rc;
        http_status st;
        if (!gen_next_prompt(g, &st)) return PACER_ERR_STATE;
        return gen_stream_echo(g);
    }
    if (!g->sent_final) {
        g->sent_final = true;
        gen_fold_finished(g);
        gen_account(g);
        char hex[65];
        gen_hash_hex(g, hex);
        json_t *v = gen_envelope(g, false);
        json_array_append_new(json_object_get(v, "choices"), gen_choice(g, "", 0, false, g->finish, false));
        json_object_set_new(v, "timings", gen_timings(g));
        json_object_set_new(v, "token_hash", json_string(hex));
        if ((rc = sse_append(&g->out, v))) return rc;
        if (g->r.include_usage) {
            v = gen_envelope(g, false);
            json_object_set_new(v, "usage", gen_usage(g));
            if ((rc = sse_append(&g->out, v))) return rc;
        }
        rc = buf_append_str(&g->out, "data: [DONE]\n\n");
        if (g->holds_lock) { g->holds_lock = false; decoder_release(g->s); }
    }
    return rc;
}

/* The streamed body: generates events as the socket takes them (http_stream_read). */
static ssize_t stream_reader(void *cls, char *dst, size_t max) {
    serve_gen *g = cls;
    while (g->out.len == 0) {
        if (g->sent_final) return HTTP_STREAM_END;
        if (gen_stream_more(g)) return HTTP_STREAM_ERROR;
    }
    size_t n = g->out.len < max ? g->out.len : max;
    memcpy(dst, g->out.data, n);
    buf_consume(&g->out, n);
    return (ssize_t)n;
}

static void stream_free(void *cls) { gen_free(cls); }

/* POST /v1/completions and /v1/chat/completions: a body, or an SSE stream. */
static pacer_err route_generate(serve_server *s, http_req *req, bool chat) {
    http_status st = {0};
    serve_gen *g = calloc(1, sizeof *g);
    if (!g) return PACER_ERR_NOMEM;
    g->s = s;
    buf_init(&g->out, 1u << 22);
    buf_init(&g->acc, 1u << 24);
    pthread_mutex_lock(&s->mu);
    s->m.requests++;
    snprintf(g->id, sizeof g->id, "%s-%llu", chat ? "chatcmpl" : "cmpl", (unsigned long long)++s->next_id);
    pthread_mutex_unlock(&s->mu);
    g->created = (int64_t)time(NULL);
    size_t len;
    const char *body = http_req_body(req, &len);
    if (!req_parse(s, body, len, chat, &g->r, &st)) goto error;
    if (!decoder_acquire(s)) {
        http_status_set(&st, 503, "unavailable_error", "the server is busy: retry later");
        goto error;
    }
    g->holds_lock = true;
    if (!gen_begin(g, &st)) goto error;
    if (g->r.stream) {
        if (http_req_add_header(req, "Cache-Control", "no-cache")) { gen_free(g); return PACER_ERR_NOMEM; }
        return http_respond_stream(req, 200, "text/event-stream", stream_reader, stream_free, g);
    }
    if (!(g->choices = json_array())) { http_status_set(&st, 500, "server_error", "out of memory"); goto error; }
    for (;;) {
        while (!g->done)
            if (gen_step(g, &g->acc)) { http_status_set(&st, 500, "server_error", "the engine failed"); goto error; }
        json_array_append_new(g->choices, gen_choice(g, g->acc.data, g->acc.len, false, g->finish, true));
        if (g->choice + 1 >= gen_n_choices(g)) break;
        if (!gen_next_prompt(g, &st)) goto error;
    }
    gen_fold_finished(g);
    gen_account(g);
    char hex[65];
    gen_hash_hex(g, hex);
    json_t *v = gen_envelope(g, true);
    json_object_set(v, "choices", g->choices);
    json_object_set_new(v, "usage", gen_usage(g));
    json_object_set_new(v, "timings", gen_timings(g));
    json_object_set_new(v, "token_hash", json_string(hex));
    gen_free(g);
    return http_respond_json(req, 200, v);
error:
    gen_free(g);
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

/* The manifest of docs/manifest.md; revision and hardware only when known. */
static pacer_err route_manifest(void *ctx, http_req *req) {
    serve_server *s = ctx;
    if (!server_ready(s)) return answer_loading(s, req);
#ifdef __APPLE__
    const char *platform = "macos";
#else
    const char *platform = "linux";
#endif
    json_t *v = json_pack("{s:i,s:s,s:s,s:i,s:{s:[s]},s:s,s:s,s:s,s:s,s:s,s:b,s:b}", "manifest_version", 1,
                          "backend", "cpu", "platform", platform, "rank_count", 1, "checkpoint", "sha256", s->sha256,
                          "engine", "pacer", "version", PACER_VERSION, "model", s->id, "file", s->file, "chat_format",
                          s->chat->name, "raw_text", s->chat->raw_text, "prompt_cache", s->opt.prompt_cache);
    if (!v) return PACER_ERR_NOMEM;
    if (s->revision[0]) json_object_set_new(v, "revision", json_string(s->revision));
    json_object_set_new(v, "drafting", json_string(draft_mode_name(s->mode)));
    if (s->mode == DRAFT_MODE_MODEL)
        json_object_set_new(v, "drafter", json_pack("{s:s,s:s}", "file", s->drafter_file, "sha256", s->drafter_sha256));
    json_t *hw = s->hardware ? json_loads(s->hardware, 0, NULL) : NULL;
    if (json_is_object(hw)) json_object_set_new(v, "hardware", hw);
    else json_decref(hw);
    return http_respond_json(req, 200, v);
}

static pacer_err route_metrics(void *ctx, http_req *req) {
    serve_server *s = ctx;
    buf b;
    buf_init(&b, 1u << 16);
    pthread_mutex_lock(&s->mu);
    serve_metrics m = s->m;
    pthread_mutex_unlock(&s->mu);
    buf_appendf(&b,
                "# TYPE pacer_requests_total counter\npacer_requests_total %llu\n"
                "# TYPE pacer_request_errors_total counter\npacer_request_errors_total %llu\n"
                "# TYPE pacer_prompt_tokens_total counter\npacer_prompt_tokens_total %llu\n"
                "# TYPE pacer_prompt_tokens_cached_total counter\npacer_prompt_tokens_cached_total %llu\n"
                "# TYPE pacer_generated_tokens_total counter\npacer_generated_tokens_total %llu\n"
                "# TYPE pacer_prefill_seconds_total counter\npacer_prefill_seconds_total %.6f\n"
                "# TYPE pacer_decode_seconds_total counter\npacer_decode_seconds_total %.6f\n",
                (unsigned long long)m.requests, (unsigned long long)m.errors, (unsigned long long)m.prompt_tokens,
                (unsigned long long)m.cached_tokens, (unsigned long long)m.generated_tokens, m.prefill_s, m.decode_s);
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
}

pacer_err serve_start(const serve_options *o, serve_server **out, char *err, size_t err_len) {
    *out = NULL;
    if (o->draft_max < 1 || o->draft_max > DRAFT_MAX) {
        snprintf(err, err_len, "the draft length must be 1..%d", DRAFT_MAX);
        return PACER_ERR_ARG;
    }
    serve_server *s = calloc(1, sizeof *s);
    if (!s) return PACER_ERR_NOMEM;
    s->opt = *o;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    /* one thread per connection: a streamed body is generated inside its reader */
    http_options ho = {.host = o->host, .port = o->port, .max_body = o->max_body, .timeout_s = 600,
                       .tcp_nodelay = true, .routes = ROUTES, .n_routes = sizeof ROUTES / sizeof ROUTES[0],
                       .not_found = route_not_found, .too_large = route_too_large, .ctx = s};
    pacer_err rc = http_server_start(&ho, &s->http, err, err_len);
    if (rc) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
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
    s->b = *b;
    s->id = dup_or_empty(info->id);
    s->file = dup_or_empty(slash ? slash + 1 : info->path);
    s->sha256 = dup_or_empty(info->sha256);
    s->revision = dup_or_empty(info->revision);
    s->hardware = info->hardware_json ? strdup(info->hardware_json) : NULL;
    s->chat = info->chat ? info->chat : chat_format_by_name("plain");
    s->cache = malloc((size_t)(b->n_ctx + 1) * sizeof(int32_t));
    s->mode = s->opt.serial ? DRAFT_MODE_SERIAL : info->drafter ? DRAFT_MODE_MODEL : DRAFT_MODE_LOOKUP;
    /* every buffer a round needs is allocated here, none in the decode loop */
    size_t rows = s->mode == DRAFT_MODE_SERIAL ? 1 : (size_t)s->opt.draft_max + 1;
    s->logits = malloc(rows * (size_t)b->n_vocab * sizeof(float));
    s->batch = malloc((DRAFT_MAX + 1) * sizeof(int32_t));
    s->p_work = malloc((size_t)b->n_vocab * sizeof(float));
    const char *dslash = info->drafter_path ? strrchr(info->drafter_path, '/') : NULL;
    s->drafter_file = dup_or_empty(dslash ? dslash + 1 : info->drafter_path);
    s->drafter_sha256 = dup_or_empty(info->drafter_sha256);
    bool ok = s->id && s->file && s->sha256 && s->revision && s->cache && s->logits && s->batch && s->p_work &&
              s->drafter_file && s->drafter_sha256 &&
              (s->mode != DRAFT_MODE_MODEL || draft_model_init(&s->dm, info->drafter) == PACER_OK);
    s->ready = ok;
    pthread_mutex_unlock(&s->mu);
    return ok ? PACER_OK : PACER_ERR_NOMEM;
}

void serve_stop(serve_server *s) {
    if (!s) return;
    http_server_stop(s->http);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->id); free(s->file); free(s->sha256); free(s->revision); free(s->hardware);
    free(s->cache); free(s->logits); free(s->rows);
    free(s->batch); free(s->p_work); free(s->drafter_file); free(s->drafter_sha256);
    draft_model_free(&s->dm);
    free(s);
}
