/* threadpool.h - a fixed set of persistent worker threads for the engine's parallel loops.
 * A job is one function called once on every thread (ith = 0..nth-1, the caller is thread
 * 0); workers spin briefly on a generation counter, then sleep on a condition variable. */
#ifndef PACER_THREADPOOL_H
#define PACER_THREADPOOL_H

#include <stdatomic.h>

typedef struct threadpool threadpool;
typedef void (*threadpool_fn)(void *ctx, int ith, int nth);

/* Starts n_threads - 1 workers (n_threads >= 1). NULL when out of memory or threads. */
threadpool *threadpool_create(int n_threads);
/* Stops and joins the workers; accepts NULL. */
void threadpool_destroy(threadpool *tp);
int threadpool_size(const threadpool *tp);
/* Runs fn(ctx, ith, nth) on every thread and returns when all have finished. */
void threadpool_run(threadpool *tp, threadpool_fn fn, void *ctx);
/* The share [*lo, *hi) of n items that thread ith of nth handles. */
void threadpool_split(int n, int ith, int nth, int *lo, int *hi);

/* Chunks [0, n) of a job handed out as threads ask: thread ith first takes chunk ith, then
 * the next one nobody has taken, so threads that finish early (or started early) take
 * more. Set up before threadpool_run with the pool's size; read by the job's threads:
 *     for (int c = threadpool_chunk_first(&ch, ith); c >= 0; c = threadpool_chunk_next(&ch)) */
typedef struct threadpool_chunks {
    atomic_int next;
    int n;
} threadpool_chunks;
void threadpool_chunks_init(threadpool_chunks *ch, int n, int nth);
static inline int threadpool_chunk_first(const threadpool_chunks *ch, int ith) { return ith < ch->n ? ith : -1; }
/* Inside a job: waits (spinning, yielding now and then) until *x == value (acquire). Only for
 * what another thread of the same job is sure to produce without waiting itself. */
void threadpool_wait_until(atomic_int *x, int value);
static inline int threadpool_chunk_next(threadpool_chunks *ch) {
    int c = atomic_fetch_add_explicit(&ch->next, 1, memory_order_relaxed);
    return c < ch->n ? c : -1;
}

#endif
