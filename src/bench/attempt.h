/* attempt.h - one measured OpenAI-compatible streamed request, turned into one sample.
 * The times are client-side, CLOCK_MONOTONIC nanoseconds, taken when the transport hands
 * bytes over (DESIGN.md section 3). Server-reported figures live in their own fields and
 * are never substituted for client measurements. */
#ifndef PACER_ATTEMPT_H
#define PACER_ATTEMPT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "net/http.h"

typedef struct sanitize_context sanitize_context; /* bench/sanitize.h */

typedef enum attempt_route {
    ATTEMPT_ROUTE_COMPLETIONS = 0, /* POST /v1/completions, raw prompt text */
    ATTEMPT_ROUTE_CHAT = 1,        /* POST /v1/chat/completions, messages */
} attempt_route;

typedef enum attempt_status {
    ATTEMPT_OK = 0,
    ATTEMPT_INCOMPLETE = 1, /* measured, but not under the protocol (reason says why) */
    ATTEMPT_FAILED = 2,     /* no usable measurement (reason says why) */
    ATTEMPT_CANCELLED = 3,  /* stopped by the user */
} attempt_status;

/* What to send. Strings are borrowed for the duration of attempt_run(). */
typedef struct attempt_request {
    const char *server_url;  /* base URL, e.g. "http://127.0.0.1:8080" (a trailing /v1 is accepted) */
    const char *model_id;    /* "model" field; NULL leaves it out */
    attempt_route route;
    const char *prompt;      /* raw text (completions) or the one user message (chat) */
    int max_tokens;
    double temperature;      /* 0 = greedy */
    int top_k;               /* <= 0: not sent */
    double top_p;            /* <= 0: not sent */
    bool has_seed;
    int64_t seed;
    bool disable_thinking;   /* send the switches servers accept to turn reasoning off */
    bool disable_prompt_cache; /* send cache_prompt:false and equivalents */
    const char *api_key;     /* NULL: no Authorization header */
    /* Where the server reports its own decode rate and prefill time: dotted member paths
     * in a stream event, e.g. "timings.predicted_per_second". NULL: llama.cpp's names
     * (ATTEMPT_SERVER_TOK_S_FIELD, ATTEMPT_PREFILL_MS_FIELD); "": not read. Managed runs
     * take them from the engine adapter. */
    const char *server_tok_s_field, *prefill_ms_field;
    /* Timeouts in milliseconds; 0 picks the default (connect 10 s, first byte 300 s,
     * idle 60 s between bytes, total 1800 s). */
    int64_t connect_timeout_ms, first_byte_timeout_ms, idle_timeout_ms, total_timeout_ms;
    /* Cancellation: when either is set (non-zero) the attempt ends promptly as cancelled. */
    const volatile sig_atomic_t *cancel_flag;
    /* A conversation for the chat route, sent as `messages` instead of `prompt` as the one
     * user message: a JSON array of {"role", "content"} objects (borrowed). NULL: none. */
    const json_t *messages;
    /* Called with every non-empty piece of decoded output (content, then reasoning) when it
     * arrives, with the arrival time. A non-zero return ends the attempt at once as
     * cancelled with the reason "stopped by the caller"; figures so far are kept. */
    pacer_err (*on_text)(void *ctx, const char *text, size_t n, int64_t t_ns);
    void *on_text_ctx;
    /* What a server says (error messages, unknown finish reasons, ...) reaches the sample only
     * through bench/sanitize against this context (the suite's prompts, private names);
     * NULL: a context of `prompt` alone. */
    const sanitize_context *sanitize;
    /* Called with each such text in full before it is sanitized or refused, for the run's
     * local log: what it is ("HTTP error body", ...) and its bytes. NULL: dropped. */
    void (*on_server_text)(void *ctx, const char *what, const char *text, size_t n);
    void *server_text_ctx;
} attempt_request;

#define ATTEMPT_SERVER_TOK_S_FIELD "timings.predicted_per_second"
#define ATTEMPT_PREFILL_MS_FIELD "timings.prompt_ms"
#define ATTEMPT_REASON_MAX 256
#define ATTEMPT_MESSAGE_MAX 121 /* SANITIZE_EXCERPT_MAX + 1 */
#define ATTEMPT_FINISH_MAX 32
#define ATTEMPT_TOKEN_HASH_MAX 80
#define ATTEMPT_EVENT_MAX (1u << 20) /* one SSE event larger than this fails the attempt */

/* One sample. Integer fields that may be absent have a has_* flag; absent is never 0. */
typedef struct attempt_sample {
    attempt_route route;
    attempt_status status;
    char reason[ATTEMPT_REASON_MAX];       /* pacer's own words; empty when ok */
    char server_message[ATTEMPT_MESSAGE_MAX]; /* the server's words about it, a sanitized
                                             * excerpt; empty when it said nothing */
    int http_status;                       /* 0 when no response arrived */
    char finish_reason[ATTEMPT_FINISH_MAX]; /* sanitize_finish_reasons or "other"; empty when none */

    bool has_usage;                        /* usage object received */
    int64_t prompt_tokens, completion_tokens;

    /* client measurements; has_first_text false when no non-empty delivery arrived */
    bool has_first_text;
    int64_t first_text_ns;    /* first non-empty delivery - request start */
    int64_t duration_ns;      /* end of response - request start */
    int64_t delivery_span_ns; /* last non-empty delivery - first non-empty delivery */
    int64_t deliveries;       /* SSE events with a non-empty content or reasoning delta */
    int64_t output_bytes;     /* bytes of decoded content + reasoning (never stored as text) */
    bool has_stream_tok_s;    /* false when undefined: one delivery, zero span, no usage */
    double stream_tok_s;      /* (completion_tokens - 1) / delivery_span */

    /* server-reported figures, as the server reported them (llama.cpp `timings`) */
    bool has_server_timings;
    double server_prompt_ms;
    double server_predicted_per_second;
    bool has_server_prompt_ms, has_server_predicted_per_second;
    bool has_draft_n, has_draft_n_accepted, has_verify_rounds;
    int64_t draft_n, draft_n_accepted, verify_rounds;
    char token_hash[ATTEMPT_TOKEN_HASH_MAX]; /* empty when the server sent none (or one that
                                              * is not a hash: letters, digits, ':', '_', '-') */
} attempt_sample;

/* Runs one attempt and fills `out` (always fully initialized, whatever the outcome).
 * Returns PACER_OK whenever a sample was produced, including failed and cancelled ones;
 * an error code only for invalid arguments. Thread-safe given distinct arguments. */
pacer_err attempt_run(const attempt_request *req, attempt_sample *out);

/* A streamed attempt driven by a caller's transport (many at once, see net/multi.h).
 * attempt_stream_begin() checks the request and builds the HTTP request, whose on_data
 * parses the stream as it arrives; attempt_stream_end() takes the transport's outcome and
 * fills `out` (status, reason, times). The stream borrows `req` and `out` until it is
 * freed. With max_times > 0 the arrival time of every delivery is kept (at most that many;
 * more fail the attempt). begin returns PACER_ERR_ARG (or NOMEM) with `out` filled as a
 * failed sample; *st must still be freed (it may be NULL). */
typedef struct attempt_stream attempt_stream;
pacer_err attempt_stream_begin(const attempt_request *req, attempt_sample *out, size_t max_times, attempt_stream **st);
/* The HTTP request to run; valid until attempt_stream_free(). */
const http_request *attempt_stream_http(const attempt_stream *st);
/* Judges the attempt from the transport's return code and response. */
void attempt_stream_end(attempt_stream *st, pacer_err http_rc, const http_response *resp);
/* clock_now_ns() of every delivery, in order; *n of them. Valid until attempt_stream_free(). */
const int64_t *attempt_stream_times(const attempt_stream *st, size_t *n);
/* Frees the stream. Accepts NULL. */
void attempt_stream_free(attempt_stream *st);

/* A sample as JSON: receipt_attempt_to_json() (bench/receipt.h), the receipt's one schema. */

/* Names used in JSON and reports. */
const char *attempt_route_name(attempt_route r);   /* "completions" | "chat" */
const char *attempt_route_path(attempt_route r);   /* "/v1/completions" | ... */
const char *attempt_status_name(attempt_status s); /* "ok" | "incomplete" | "failed" | "cancelled" */

#endif
