/* serve_sched.c - the scheduler of `pacer serve` (see serve_sched.h): a FIFO of requests
 * waiting for one of --parallel KV slots, and one thread that decodes every running request
 * in a single batched pass per step, with a chunk of newly admitted requests' prompts. */
#include "server/serve_sched.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"

/* ---- the connection threads' side ---- */

bool sched_submit(serve_server *s, serve_gen *g) {
    pthread_mutex_lock(&s->mu);
    /* requests that would wait for a slot, this one included */
    bool ok = !s->stopping && s->thread_started && s->n_queued + 1 - s->n_free <= s->opt.queue_max;
    if (ok) {
        g->state = GEN_QUEUED;
        g->refs = 2;
        g->next = NULL;
        if (s->queue_tail) s->queue_tail->next = g;
        else s->queue = g;
        s->queue_tail = g;
        s->n_queued++;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return ok;
}

gen_state sched_wait(serve_gen *g, gen_state until) {
    pthread_mutex_lock(&g->s->mu);
    while (g->state < until) pthread_cond_wait(&g->cv, &g->s->mu);
    gen_state st = g->state;
    pthread_mutex_unlock(&g->s->mu);
    return st;
}

/* Under s->mu: drops a reference; true when it was the last (free g after unlocking). */
static bool unref_locked(serve_gen *g) { return --g->refs == 0; }

void sched_release(serve_gen *g) {
    pthread_mutex_lock(&g->s->mu);
    bool last = unref_locked(g);
    pthread_mutex_unlock(&g->s->mu);
    if (last) gen_free(g);
}

/* ---- the scheduler thread ---- */

/* Under s->mu: moves waiting requests into free slots (the lowest first, so that one client
 * at a time keeps reusing slot 0's cached prefix). */
static void admit_locked(serve_server *s) {
    for (int i = 0; i < s->n_slots && s->queue; i++) {
        if (s->slots[i].g) continue;
        serve_gen *g = s->queue;
        s->queue = g->next;
        if (!s->queue) s->queue_tail = NULL;
        s->n_queued--;
        s->n_free--;
        g->slot = i;
        g->order = s->admitted++;
        g->state = GEN_STARTING;
        s->slots[i].g = g;
    }
}

/* Under s->mu: the request leaves its slot as `state` (ENDED or FAILED); true when the
 * scheduler's reference was the last. */
static bool end_locked(serve_server *s, serve_gen *g, gen_state state, bool broken) {
    s->slots[g->slot].g = NULL;
    s->n_free++;
    g->state = state;
    g->broken = g->broken || broken;
    pthread_cond_broadcast(&g->cv);
    return unref_locked(g);
}

static void end(serve_server *s, serve_gen *g, gen_state state, bool broken) {
    pthread_mutex_lock(&s->mu);
    bool last = end_locked(s, g, state, broken);
    pthread_mutex_unlock(&s->mu);
    if (last) gen_free(g);
}

/* Starts a newly admitted request (tokenization, prompt checks, its first prompt: prefilled
 * here with one slot, else its rows left to the passes). */
static void start_one(serve_server *s, serve_gen *g) {
    http_status st = {0};
    if (!gen_begin(g, &st)) {
        pthread_mutex_lock(&s->mu);
        g->st = st;
        bool last = end_locked(s, g, GEN_FAILED, false);
        pthread_mutex_unlock(&s->mu);
        if (last) gen_free(g);
        return;
    }
    pthread_mutex_lock(&s->mu);
    g->state = GEN_RUNNING;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Hands the pass's events to the connection; a reader too far behind is cut off. Returns
 * false when the request is over (gone, cut off, or its last event made). */
static bool publish(serve_server *s, serve_gen *g) {
    pthread_mutex_lock(&s->mu);
    if (g->pending.len) {
        if (g->out.len + g->pending.len > s->opt.unread_max || buf_append(&g->out, g->pending.data, g->pending.len)) {
            buf_reset(&g->out); /* what it has not read is dropped with the connection */
            g->broken = g->gone = true;
        }
        buf_reset(&g->pending);
        pthread_cond_broadcast(&g->cv);
    }
    if (g->gone || g->sent_final) {
        bool last = end_locked(s, g, GEN_ENDED, g->gone && !g->sent_final);
        pthread_mutex_unlock(&s->mu);
        if (last) gen_free(g);
        return false;
    }
    pthread_mutex_unlock(&s->mu);
    return true;
}

/* Appends row (tok, seq, pos) to the pass; `want`: its logits are needed. */
static void add_row(serve_server *s, int n, int32_t tok, int seq, int pos, bool want) {
    s->row_tok[n] = tok;
    s->row_seq[n] = seq;
    s->row_pos[n] = pos;
    s->row_want[n] = want;
}

/* The prefilling request that has waited longest and has no rows in this pass yet, or -1. */
static int oldest_prompt(const serve_server *s) {
    int best = -1;
    for (int i = 0; i < s->n_slots; i++) {
        const serve_gen *g = s->slots[i].g;
        if (g && g->state == GEN_RUNNING && gen_session_prefilling(&g->gs) && s->row_take[i] == 0 &&
            (best < 0 || g->order < s->slots[best].g->order))
            best = i;
    }
    return best;
}

/* The pass's rows: every decoding request's (its last token and drafts), then prompt rows,
 * the longest-waiting request's first, up to opt.prefill_chunk of them beside decoding rows
 * (SERVE_PREFILL_IDLE when nothing decodes). row_of[slot]: the slot's first logits row, -1
 * none; row_take[slot]: the prompt rows it put in. Returns the rows. */
static int plan_rows(serve_server *s) {
    int n = 0, n_logits = 0;
    s->pass_prompt_rows = 0;
    for (int i = 0; i < s->n_slots; i++) {
        serve_gen *g = s->slots[i].g;
        s->row_of[i] = -1;
        s->row_take[i] = 0;
        if (!g || g->state != GEN_RUNNING || !gen_session_needs_eval(&g->gs) || gen_session_prefilling(&g->gs)) continue;
        const int32_t *tok;
        int k, pos;
        if (gen_session_plan(&g->gs, &tok, &k, &pos) || n + k > s->n_slots * s->rows_per_slot) {
            end(s, g, GEN_ENDED, true);
            continue;
        }
        s->row_of[i] = n_logits;
        n_logits += k;
        for (int j = 0; j < k; j++, n++) add_row(s, n, tok[j], i, pos + j, true);
    }
    int budget = n > 0 ? s->opt.prefill_chunk : SERVE_PREFILL_IDLE, i;
    while (budget > 0 && (i = oldest_prompt(s)) >= 0) {
        const int32_t *tok;
        int m, pos;
        gen_session_prompt_rows(&s->slots[i].g->gs, &tok, &m, &pos);
        int take = m < budget ? m : budget;
        budget -= take;
        s->row_take[i] = take;
        if (take == m) s->row_of[i] = n_logits++;
        for (int j = 0; j < take; j++, n++) add_row(s, n, tok[j], i, pos + j, j == m - 1);
        s->pass_prompt_rows += take;
    }
    return n;
}

/* One pass over the planned rows (or, for a model of one sequence without eval_rows, its
 * own eval), then each request verifies its rows or takes its prompt's. */
static void run_pass(serve_server *s, int n) {
    const engine_backend *b = &s->b;
    int64_t t0 = clock_now_ns();
    pacer_err rc;
    if (b->eval_rows) rc = b->eval_rows(b->ctx, s->row_tok, s->row_seq, s->row_pos, n, s->row_want, s->row_logits);
    else rc = b->eval(b->ctx, s->row_tok, n, s->row_pos[0], s->row_logits, true); /* one slot, every row wanted */
    int64_t ns = clock_now_ns() - t0;
    pthread_mutex_lock(&s->mu);
    s->m.passes++;
    s->m.rows += (uint64_t)(n - s->pass_prompt_rows);
    s->m.prompt_rows += (uint64_t)s->pass_prompt_rows;
    s->m.pass_s += (double)ns / 1e9;
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->n_slots; i++) {
        serve_gen *g = s->slots[i].g;
        if (!g || (s->row_of[i] < 0 && s->row_take[i] == 0)) continue;
        const float *rows = s->row_of[i] < 0 ? NULL : s->row_logits + (size_t)s->row_of[i] * (size_t)b->n_vocab;
        if (rc || (s->row_take[i] ? gen_session_prefilled(&g->gs, s->row_take[i], rows)
                                  : gen_session_commit(&g->gs, rows, ns)))
            end(s, g, GEN_ENDED, true);
    }
}

/* Under s->mu: a running stream whose reader has events to take and has kept up so far. */
static bool awaited_locked(const serve_gen *g) {
    return g && g->r.stream && g->state == GEN_RUNNING && !g->gone && !g->slow && g->out.len > 0;
}

/* Gives the readers up to SERVE_DRAIN_NS to take this pass's events, so that each token is on
 * its socket before the next pass; a reader that misses it is marked slow and not waited for
 * until it has caught up. */
static void wait_readers(serve_server *s) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += SERVE_DRAIN_NS;
    if (dl.tv_nsec >= 1000000000) { dl.tv_sec++; dl.tv_nsec -= 1000000000; }
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n_slots; i++) {
        serve_gen *g = s->slots[i].g;
        if (g && g->slow && g->out.len == 0) g->slow = false;
    }
    for (int i = 0; i < s->n_slots;) {
        if (!awaited_locked(s->slots[i].g)) { i++; continue; }
        if (pthread_cond_timedwait(&s->drained, &s->mu, &dl)) break; /* timed out */
    }
    for (int i = 0; i < s->n_slots; i++)
        if (awaited_locked(s->slots[i].g)) s->slots[i].g->slow = true;
    pthread_mutex_unlock(&s->mu);
}

/* One step: gone requests leave, new ones start, one pass decodes the running ones beside
 * a chunk of the prompts, and every request takes its tokens and hands its events over. */
static void step(serve_server *s) {
    for (int i = 0; i < s->n_slots; i++) {
        serve_gen *g = s->slots[i].g;
        if (!g) continue;
        pthread_mutex_lock(&s->mu);
        bool gone = g->gone;
        pthread_mutex_unlock(&s->mu);
        if (gone) end(s, g, GEN_ENDED, true);
        else if (g->state == GEN_STARTING) start_one(s, g);
    }
    int n = plan_rows(s);
    if (n > 0) run_pass(s, n);
    for (int i = 0; i < s->n_slots; i++) {
        serve_gen *g = s->slots[i].g;
        if (!g || g->state != GEN_RUNNING) continue;
        if (gen_advance(g)) {
            publish(s, g); /* what was made before the failure */
            if (s->slots[i].g == g) end(s, g, GEN_ENDED, true);
            continue;
        }
        publish(s, g);
    }
    wait_readers(s);
}

/* Under s->mu, stopping: every request in a slot ends, every queued one answers 503. */
static void end_all_locked(serve_server *s, serve_gen **to_free, int *n_free) {
    for (int i = 0; i < s->n_slots; i++) {
        serve_gen *g = s->slots[i].g;
        if (!g) continue;
        if (g->state == GEN_STARTING) http_status_set(&g->st, 503, "unavailable_error", "the server is stopping");
        if (end_locked(s, g, g->state == GEN_STARTING ? GEN_FAILED : GEN_ENDED, true)) to_free[(*n_free)++] = g;
    }
    while (s->queue) {
        serve_gen *g = s->queue;
        s->queue = g->next;
        http_status_set(&g->st, 503, "unavailable_error", "the server is stopping");
        g->state = GEN_FAILED;
        pthread_cond_broadcast(&g->cv);
        if (unref_locked(g)) to_free[(*n_free)++] = g;
    }
    s->queue_tail = NULL;
    s->n_queued = 0;
}

static void *sched_main(void *arg) {
    serve_server *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        admit_locked(s);
        if (s->n_free == s->n_slots) {
            pthread_cond_wait(&s->cv, &s->mu);
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        step(s);
        pthread_mutex_lock(&s->mu);
    }
    serve_gen **to_free = calloc((size_t)s->n_slots + (size_t)s->n_queued + 1, sizeof *to_free);
    int n = 0;
    if (to_free) end_all_locked(s, to_free, &n);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < n; i++) gen_free(to_free[i]);
    free(to_free);
    return NULL;
}

pacer_err sched_start(serve_server *s, const engine_backend *drafter) {
    const engine_backend *b = &s->b;
    int n = s->opt.parallel > 0 ? s->opt.parallel : 1;
    if (n > 1 && (b->n_seq < n || !b->eval_rows || !b->eval_seq)) return PACER_ERR_ARG;
    if (n > 1 && drafter && !s->opt.serial) return PACER_ERR_ARG; /* the drafter has one KV cache */
    s->slots = calloc((size_t)n, sizeof *s->slots);
    if (!s->slots) return PACER_ERR_NOMEM;
    s->n_slots = s->n_free = n;
    for (int i = 0; i < n; i++) {
        pacer_err rc = gen_model_init(&s->slots[i].gm, b, drafter, s->opt.serial, s->opt.draft_max);
        if (rc) return rc;
        s->slots[i].gm.seq = i;
    }
    s->mode = s->slots[0].gm.mode;
    s->rows_per_slot = s->mode == DRAFT_MODE_SERIAL ? 1 : s->opt.draft_max + 1;
    /* a pass: every slot's decoding rows, and prompt rows (only with several slots: one
     * slot's prompt is prefilled by its session, at once) */
    int prompt_max = n > 1 ? (s->opt.prefill_chunk > SERVE_PREFILL_IDLE ? s->opt.prefill_chunk : SERVE_PREFILL_IDLE) : 0;
    size_t rows = (size_t)n * (size_t)s->rows_per_slot + (size_t)prompt_max;
    s->row_tok = malloc(rows * sizeof *s->row_tok);
    s->row_seq = malloc(rows * sizeof *s->row_seq);
    s->row_pos = malloc(rows * sizeof *s->row_pos);
    s->row_want = malloc(rows * sizeof *s->row_want);
    s->row_of = malloc((size_t)n * sizeof *s->row_of);
    s->row_take = malloc((size_t)n * sizeof *s->row_take);
    /* logits: a decoding slot's rows, or a prompt's last row */
    s->row_logits = malloc((size_t)n * (size_t)s->rows_per_slot * (size_t)b->n_vocab * sizeof(float));
    if (!s->row_tok || !s->row_seq || !s->row_pos || !s->row_want || !s->row_of || !s->row_take || !s->row_logits)
        return PACER_ERR_NOMEM;
    if (pthread_create(&s->thread, NULL, sched_main, s)) return PACER_ERR_NOMEM;
    s->thread_started = true;
    return PACER_OK;
}

void sched_stop(serve_server *s) {
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    bool started = s->thread_started;
    pthread_mutex_unlock(&s->mu);
    if (started) pthread_join(s->thread, NULL);
    for (int i = 0; s->slots && i < s->n_slots; i++) gen_model_free(&s->slots[i].gm);
    free(s->slots);
    free(s->row_tok);
    free(s->row_seq);
    free(s->row_pos);
    free(s->row_want);
    free(s->row_of);
    free(s->row_take);
    free(s->row_logits);
    s->slots = NULL;
}
