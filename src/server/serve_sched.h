/* serve_sched.h - inside `pacer serve`: the server and request structures shared by the
 * routes (serve.c) and the scheduler (serve_sched.c), which runs every generation on one
 * thread over --parallel KV slots:
 *   - a request waits in a FIFO for a free slot (at most queue_max beyond the free slots,
 *     else 503); its wait shows only as time;
 *   - a newly admitted request is tokenized; with one slot it is prefilled then, alone;
 *   - each pass is one engine_eval_rows over the rows of every decoding request (its last
 *     token, plus drafts) and up to serve_options.prefill_chunk rows of prompts (the
 *     longest-waiting first; SERVE_PREFILL_IDLE when nothing decodes), so that a new prompt
 *     delays the running streams by a chunk at a time, not by its whole prefill; then each
 *     request takes its tokens and makes its events;
 *   - events go to the request's `out` buffer, which its connection thread drains; after a
 *     pass the scheduler gives the readers up to SERVE_DRAIN_NS to take their events (so a
 *     token reaches the socket before the next is made, as when each stream decoded alone);
 *     a reader that misses that is not waited for again until it has caught up, and one
 *     more than serve_options.unread_max bytes behind is cut off (generation stops, the connection
 *     closes): an unread stream never holds the decoder.
 * Not for use outside server/. */
#ifndef PACER_SERVER_SERVE_SCHED_H
#define PACER_SERVER_SERVE_SCHED_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "engine/generate.h"
#include "engine/logprob.h"
#include "server/http.h"
#include "server/request.h"
#include "server/serve.h"

/* How long a pass's events may wait for their readers before the next pass. */
#define SERVE_DRAIN_NS 5000000
/* Prompt rows a pass takes when no request is decoding (nobody waits on the pass). */
#define SERVE_PREFILL_IDLE 512

typedef struct serve_metrics {
    uint64_t requests, errors, prompt_tokens, cached_tokens, generated_tokens;
    uint64_t passes, rows; /* passes and the decoding rows they evaluated (rows / passes: the batch) */
    uint64_t prompt_rows;  /* prompt rows the passes took beside them (several slots) */
    double pass_s;         /* their wall time */
    double prefill_s, decode_s;
} serve_metrics;

typedef struct serve_gen serve_gen;

/* A KV slot: its sequence's gen_model (cached tokens for prefix reuse, round buffers) and
 * the request it answers. */
typedef struct serve_slot {
    gen_model gm;
    serve_gen *g;
} serve_slot;

struct serve_server {
    http_server *http;
    serve_options opt;
    pthread_mutex_t mu;   /* guards what the connection threads and the scheduler share */
    pthread_cond_t cv;    /* the scheduler waits here for work */
    pthread_cond_t drained; /* a stream's reader emptied its `out` */
    bool ready, stopping;
    char *id, *file, *sha256, *revision, *hardware;
    const chat_format *chat;
    serve_metrics m;
    engine_backend b;     /* the model (tokenizer, pieces) */
    draft_mode mode;
    char *drafter_file, *drafter_sha256;
    uint64_t next_id;
    /* the scheduler */
    serve_slot *slots;
    int n_slots, n_free;
    serve_gen *queue, *queue_tail;
    int n_queued;
    pthread_t thread;
    bool thread_started;
    int rows_per_slot;    /* a decoding slot's rows in a pass: its last token and drafts */
    uint64_t admitted;    /* requests given a slot so far (serve_gen.order) */
    int32_t *row_tok;     /* the pass's rows */
    int *row_seq, *row_pos;
    bool *row_want;       /* whose logits are needed */
    int *row_of, *row_take; /* per slot: its first logits row (-1 none), its prompt rows */
    int pass_prompt_rows; /* of the pass's rows, prompt rows */
    float *row_logits;
};

/* A request's life. QUEUED: waiting for a slot; STARTING: in a slot, its prefill to come;
 * RUNNING: decoding (a stream may answer now); ENDED: finished or cut short (broken);
 * FAILED: refused before anything was sent, with `st`. */
typedef enum gen_state { GEN_QUEUED, GEN_STARTING, GEN_RUNNING, GEN_ENDED, GEN_FAILED } gen_state;

struct serve_gen {
    serve_server *s;
    serve_req r;
    char id[40];
    int64_t created;
    /* shared with the connection thread, under s->mu */
    pthread_cond_t cv;   /* state changes and new bytes in `out` */
    gen_state state;
    int refs;            /* the connection's and the scheduler's */
    bool gone;           /* the connection is done with it: stop generating */
    bool broken;         /* ended before its last event (engine failure, cut off, stopping) */
    bool slow;           /* its reader did not keep up: the scheduler does not wait for it */
    buf out;             /* SSE bytes the socket has not taken yet */
    json_t *body;        /* non-streaming: the answer, once ENDED */
    http_status st;      /* why it FAILED */
    serve_gen *next;     /* the queue */
    /* the scheduler's alone */
    int slot;
    uint64_t order;      /* when it got its slot: prompts are taken the oldest first */
    buf pending;         /* SSE bytes made in this pass, moved to `out` after it */
    gen_session gs;      /* the generation of the current prompt (engine/generate.h) */
    bool started, sent_final;
    buf acc;             /* non-streaming: this choice's text */
    int choice;          /* the prompt being answered (completions batches have several) */
    json_t *choices;     /* non-streaming: the finished choices */
    struct { int n_prompt, prompt_n, predicted_n; int64_t t_prefill_ns; } finished; /* earlier prompts */
    logprob_entry *lp;   /* this choice's positions: the echoed prompt, then each token */
    int n_lp, lp_sent;   /* lp_sent: entries already put in a stream chunk */
    int64_t lp_offset;   /* text_offset of the next entry */
};

/* serve.c: frees a request (no references left). */
void gen_free(serve_gen *g);
/* serve.c: tokenizes, checks and prefills the first prompt; false with `st` set. */
bool gen_begin(serve_gen *g, http_status *st);
/* serve.c: takes every decided token (and starts a batch's next prompt) until the session
 * needs a model pass or has made its last event. */
pacer_err gen_advance(serve_gen *g);

/* Allocates the slots (one gen_model each, KV slot = index) and starts the thread. */
pacer_err sched_start(serve_server *s, const engine_backend *drafter);
/* Ends every request (the queued ones answer 503), stops the thread, frees the slots. */
void sched_stop(serve_server *s);
/* Queues `g` (taking two references: the caller's and the scheduler's); false when the
 * queue is full or the server stops (g untouched). */
bool sched_submit(serve_server *s, serve_gen *g);
/* Waits until g reaches `until` (GEN_RUNNING or GEN_ENDED) or a later state; returns it. */
gen_state sched_wait(serve_gen *g, gen_state until);
/* Drops one reference; the last frees g. */
void sched_release(serve_gen *g);

#endif
