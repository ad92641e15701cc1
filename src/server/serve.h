/* serve.h - the OpenAI-compatible HTTP server behind `pacer serve` (libmicrohttpd):
 * /health, /v1/models, /v1/completions, /v1/chat/completions (streaming or not),
 * /v1/benchmark/manifest, /metrics. The model is reached through engine_backend so the
 * HTTP layer can be tested with a scripted model; engine/backend.c binds the real engine. */
#ifndef PACER_SERVER_SERVE_H
#define PACER_SERVER_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/backend.h"
#include "engine/chat.h"

/* Facts about the loaded model, for /v1/models and the manifest. Strings are copied. */
typedef struct serve_model_info {
    const char *id;              /* --name or the file name */
    const char *path;            /* checkpoint path ("" for none) */
    const char *sha256;          /* checkpoint hex digest or "" */
    const char *revision;        /* HF snapshot commit or "" */
    const char *hardware_json;   /* a JSON object text, or NULL for "unknown" */
    const chat_format *chat;     /* never NULL once ready */
    /* A drafter sharing the vocabulary (only eval, n_vocab and n_ctx are used), or NULL.
     * It must outlive the server; used unless serve_options.serial. */
    const engine_backend *drafter;
    const char *drafter_path;    /* for the manifest ("" or NULL for none) */
    const char *drafter_sha256;  /* hex digest or "" */
} serve_model_info;

typedef struct serve_options {
    const char *host;       /* default 127.0.0.1 */
    int port;               /* 0: any free port */
    bool prompt_cache;      /* reuse the common prompt prefix (default on) */
    int queue_max;          /* requests that may wait for a free slot (default 4) */
    size_t max_body;        /* request body cap in bytes (default 1 MiB) */
    bool serial;            /* no drafting at all (default off: n-gram lookup, or the drafter) */
    int draft_max;          /* draft tokens proposed per verify round (default 8, 1..64) */
    /* Sequences decoded together, one KV slot each (default 1, 1..SERVE_PARALLEL_MAX); more
     * than 1 needs a backend with that many sequences (eval_rows) and no drafter model. */
    int parallel;
    /* With parallel > 1: prompt rows a pass takes beside the decoding requests' rows
     * (default SERVE_PREFILL_CHUNK, 1..SERVE_PREFILL_CHUNK_MAX). */
    int prefill_chunk;
    /* Unread stream bytes a client may leave behind before its request is cut off (default
     * 4 MiB: more than a whole plain generation at the default context, ~200 B a token). */
    size_t unread_max;
} serve_options;

#define SERVE_PARALLEL_MAX 256
#define SERVE_PREFILL_CHUNK 64
#define SERVE_PREFILL_CHUNK_MAX 4096

typedef struct serve_server serve_server;

/* Defaults for every field. */
void serve_options_default(serve_options *o);
/* Starts listening (health answers 503 until serve_set_model). `err` gets one line. */
pacer_err serve_start(const serve_options *o, serve_server **out, char *err, size_t err_len);
/* The bound port. */
int serve_port(const serve_server *s);
/* Makes the model live: /health turns 200. The backend must outlive the server.
 * PACER_ERR_ARG when the drafter's n_vocab differs from the model's, or options.parallel
 * asks for more sequences than the backend has or for a drafter with more than one. */
pacer_err serve_set_model(serve_server *s, const engine_backend *b, const serve_model_info *info);
/* Stops listening, waits for in-flight requests, frees. Accepts NULL. */
void serve_stop(serve_server *s);

#endif
