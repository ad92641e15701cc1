/* request.h - the OpenAI request bodies `pacer serve` accepts: /v1/completions (a string, token
 * ids, or a batch of either) and /v1/chat/completions (messages rendered with the model's chat
 * format), sampling fields, stop strings, log-probabilities and echo. Parsing does no I/O. */
#ifndef PACER_SERVER_REQUEST_H
#define PACER_SERVER_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "engine/chat.h"
#include "engine/gen_text.h"
#include "engine/sampler.h"
#include "server/http.h"

/* What validation needs to know of the loaded model. */
typedef struct serve_req_model {
    const char *id;           /* a request naming another model is a 404 */
    const chat_format *chat;  /* renders chat messages; says whether raw text is accepted */
    int n_vocab;              /* token ids must be below it */
    bool prompt_cache;        /* the server reuses prompt prefixes at all */
} serve_req_model;

/* One prompt of a completions request (a batch has several): text, tokenized on the
 * scheduler thread, or token ids. */
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
    const char *stops[GEN_MAX_STOPS];
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

/* Parses and validates a body (`len` bytes) into `r` (which it initializes); unknown fields
 * are ignored. False with the error to answer in `st`; `r` needs serve_req_free() in both
 * cases. Text prompts are tokenized later, on the scheduler thread. */
bool serve_req_parse(const serve_req_model *s, const char *body, size_t len, bool chat, serve_req *r, http_status *st);
/* Frees what serve_req_parse() allocated. */
void serve_req_free(serve_req *r);

#endif
