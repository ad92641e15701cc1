/* threadpool.c - persistent workers: a job is published by bumping a generation counter;
 * workers spin on it for a while (decode steps come every few milliseconds) and then wait
 * on a condition variable, and the caller spins until every worker has checked in. The
 * caller takes the mutex and signals only when some worker sleeps (a decode token runs
 * about a hundred jobs; with every worker spinning, publishing is one atomic add).
 * Spinning yields the CPU now and then: on a small machine the benchmark client shares
 * the cores, and a spinning worker must not keep it from reading a delivery on time. */
#include "engine/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#define SPIN_ROUNDS 200000

struct threadpool {
    int n;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_uint gen;
    atomic_int pending;
    atomic_int sleepers; /* workers in (or about to enter) pthread_cond_wait */
    atomic_bool stop;
    threadpool_fn fn;
    void *ctx;
};

typedef struct worker_arg {
    threadpool *tp;
    int ith;
} worker_arg;

/* Yield every this many spins (a pause is tens of cycles: a few microseconds apart). */
#define SPIN_YIELD_EVERY 64

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* One round of waiting: a pause, and now and then a yield to whatever else is runnable. */
static inline void spin_wait(int spins) {
    if (spins % SPIN_YIELD_EVERY == 0)
        sched_yield();
    else
        cpu_relax();
}

static void *worker_main(void *p) {
    worker_arg *wa = p;
    threadpool *tp = wa->tp;
    int ith = wa->ith;
    free(wa);
    unsigned seen = 0;
    for (;;) {
        unsigned g;
        int spins = 0;
        while ((g = atomic_load_explicit(&tp->gen, memory_order_acquire)) == seen &&
               !atomic_load(&tp->stop)) {
            if (++spins < SPIN_ROUNDS) {
                spin_wait(spins);
                continue;
            }
            /* counted before gen is read again (both seq_cst): a caller that bumps gen
             * after this read sees the count and signals under the mutex */
            pthread_mutex_lock(&tp->mu);
            atomic_fetch_add(&tp->sleepers, 1);
            while (atomic_load(&tp->gen) == seen && !atomic_load(&tp->stop))
                pthread_cond_wait(&tp->cv, &tp->mu);
            atomic_fetch_sub(&tp->sleepers, 1);
            pthread_mutex_unlock(&tp->mu);
        }
        if (atomic_load(&tp->stop))
            break;
        seen = g;
        tp->fn(tp->ctx, ith, tp->n);
        atomic_fetch_sub_explicit(&tp->pending, 1, memory_order_acq_rel);
    }
    return NULL;
}

threadpool *threadpool_create(int n_threads) {
    if (n_threads < 1)
        n_threads = 1;
    threadpool *tp = calloc(1, sizeof *tp);
    if (!tp)
        return NULL;
    tp->n = n_threads;
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->cv, NULL);
    tp->threads = calloc((size_t)n_threads, sizeof *tp->threads);
    if (!tp->threads) {
        free(tp);
        return NULL;
    }
    for (int i = 1; i < n_threads; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (wa) {
            wa->tp = tp;
            wa->ith = i;
        }
        if (!wa || pthread_create(&tp->threads[i], NULL, worker_main, wa) != 0) {
            free(wa);
            tp->n = i; /* join only what started */
            threadpool_destroy(tp);
            return NULL;
        }
    }
    return tp;
}

void threadpool_destroy(threadpool *tp) {
    if (!tp)
        return;
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->stop, true);
    pthread_cond_broadcast(&tp->cv);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 1; i < tp->n; i++)
        pthread_join(tp->threads[i], NULL);
    pthread_cond_destroy(&tp->cv);
    pthread_mutex_destroy(&tp->mu);
    free(tp->threads);
    free(tp);
}

int threadpool_size(const threadpool *tp) { return tp->n; }

void threadpool_run(threadpool *tp, threadpool_fn fn, void *ctx) {
    if (tp->n == 1) {
        fn(ctx, 0, 1);
        return;
    }
    tp->fn = fn;
    tp->ctx = ctx;
    atomic_store_explicit(&tp->pending, tp->n - 1, memory_order_release);
    atomic_fetch_add(&tp->gen, 1);
    if (atomic_load(&tp->sleepers) > 0) {
        pthread_mutex_lock(&tp->mu);
        pthread_cond_broadcast(&tp->cv);
        pthread_mutex_unlock(&tp->mu);
    }
    fn(ctx, 0, tp->n);
    for (int spins = 1; atomic_load_explicit(&tp->pending, memory_order_acquire) > 0; spins++)
        spin_wait(spins);
}

void threadpool_split(int n, int ith, int nth, int *lo, int *hi) {
    int per = (n + nth - 1) / nth;
    int a = ith * per, b = a + per;
    *lo = a < n ? a : n;
    *hi = b < n ? b : n;
}

void threadpool_chunks_init(threadpool_chunks *ch, int n, int nth) {
    ch->n = n;
    ch->ranges = 0;
    atomic_store_explicit(&ch->next, nth, memory_order_relaxed);
}

void threadpool_chunks_init_ranges(threadpool_chunks *ch, int n, int nth) {
    int R = nth < THREADPOOL_RANGES ? nth : THREADPOOL_RANGES;
    ch->n = n;
    ch->ranges = R < 1 ? 1 : R;
    for (int k = 0; k < ch->ranges; k++) {
        atomic_store_explicit(&ch->r[k].next, (int)((long long)k * n / ch->ranges), memory_order_relaxed);
        ch->r[k].end = (int)((long long)(k + 1) * n / ch->ranges);
    }
}

int threadpool_chunk_from(threadpool_chunks *ch, int k, int home) {
    for (;;) {
        threadpool_range *r = &ch->r[k];
        if (atomic_load_explicit(&r->next, memory_order_relaxed) < r->end) {
            int c = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
            if (c < r->end)
                return c;
        }
        k = (k + 1) % ch->ranges;
        if (k == home)
            return -1;
    }
}

void threadpool_wait_until(atomic_int *x, int value) {
    for (int spins = 1; atomic_load_explicit(x, memory_order_acquire) != value; spins++)
        spin_wait(spins);
}
