/* serve_logprob.h - the JSON shapes of log-probabilities in `pacer serve` replies: OpenAI's
 * legacy completions object (tokens, token_logprobs, top_logprobs, text_offset, plus
 * top_logprob_ids) and the chat object (content[] with token, logprob, bytes, top_logprobs). */
#ifndef PACER_SERVE_LOGPROB_H
#define PACER_SERVE_LOGPROB_H

#include <jansson.h>

#include "engine/logprob.h"
#include "server/serve.h"

/* The legacy object for entries e[0..n). Offsets start at *text_offset, which is advanced
 * past the entries (so consecutive stream chunks continue it). NULL on OOM. */
json_t *serve_logprobs_completion(const engine_backend *b, const logprob_entry *e, int n, int64_t *text_offset);
/* The chat object {"content":[...],"refusal":null} for entries e[0..n). NULL on OOM. */
json_t *serve_logprobs_chat(const engine_backend *b, const logprob_entry *e, int n);

#endif
