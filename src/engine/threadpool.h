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

/* Chunks [0, n) of a job handed out as threads ask, in one of two orders.
 * Shared (threadpool_chunks_init): thread ith first takes chunk ith, then the next one
 * nobody has taken, so threads that finish early (or started early) take more.
 * Ranges (threadpool_chunks_init_ranges): the chunks are cut into one contiguous range a
 * thread (at most THREADPOOL_RANGES); a thread takes its own range's chunks in order, then
 * those left in the ranges after it. Each thread reads memory in one run, not in chunks
 * that alternate with the other threads', and takes its chunks from its own counter.
 * Set up before threadpool_run with the pool's size; read by the job's threads:
 *     for (int c = threadpool_chunk_first(&ch, ith); c >= 0; c = threadpool_chunk_next(&ch, ith, c)) */
#define THREADPOOL_RANGES 32
typedef struct threadpool_range {
    _Alignas(64) atomic_int next; /* the range's first chunk not yet taken */
    int end;
} threadpool_range;
typedef struct threadpool_chunks {
    atomic_int next;
    int n;
    int ranges; /* 0: shared order */
    threadpool_range r[THREADPOOL_RANGES];
} threadpool_chunks;
void threadpool_chunks_init(threadpool_chunks *ch, int n, int nth);
void threadpool_chunks_init_ranges(threadpool_chunks *ch, int n, int nth);
/* Ranges: the next chunk from range k on, trying the ranges after it up to (not again) `home`. */
int threadpool_chunk_from(threadpool_chunks *ch, int k, int home);
static inline int threadpool_chunk_first(threadpool_chunks *ch, int ith) {
    if (ch->ranges)
        return threadpool_chunk_from(ch, ith % ch->ranges, ith % ch->ranges);
    return ith < ch->n ? ith : -1;
}
/* The chunk after c for thread ith (-1: none left). */
static inline int threadpool_chunk_next(threadpool_chunks *ch, int ith, int c) {
    if (ch->ranges) { /* c's range: the last whose start (k * n / ranges) is at most c */
        int k = (int)(((long long)(c + 1) * ch->ranges + ch->n - 1) / ch->n) - 1;
        return threadpool_chunk_from(ch, k, ith % ch->ranges);
    }
    int next = atomic_fetch_add_explicit(&ch->next, 1, memory_order_relaxed);
    return next < ch->n ? next : -1;
}
/* Inside a job: waits (spinning, yielding now and then) until *x == value (acquire). Only for
 * what another thread of the same job is sure to produce without waiting itself. */
void threadpool_wait_until(atomic_int *x, int value);

#endif
