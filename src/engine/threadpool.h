/* threadpool.h - a fixed set of persistent worker threads for the engine's parallel loops.
 * A job is one function called once on every thread (ith = 0..nth-1, the caller is thread
 * 0); workers spin briefly on a generation counter, then sleep on a condition variable. */
#ifndef PACER_THREADPOOL_H
#define PACER_THREADPOOL_H

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

#endif
