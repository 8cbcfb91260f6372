/* pool.c — ndx's own threads for ndx_parallel_for.
 *
 * Why not OpenMP's team: libgomp's idle threads spin for a long while (GOMP_SPINCOUNT, 300,000
 * rounds) before they sleep, and a region waits for every thread it was given. With one other
 * busy process on a 2-core machine, 2 threads then ran G1, S1 and C1 at 0.66-0.84x the speed of
 * 1 thread (`ndx bench W --threads 2 --scaling` beside a busy loop); with OMP_WAIT_POLICY=passive
 * 1.1-1.55x. A library cannot set that variable (libgomp reads it before any library code runs),
 * so ndx runs its chunks on threads of its own, which:
 *   - spin briefly (SPIN_NS) for the next job, then sleep on a condition variable;
 *   - each run the chunk of their own number first (the caller chunk 0, helper k chunk k + 1:
 *     OpenMP's static split, so consecutive regions of an op find their part of the data in
 *     the same core's cache), then take any chunk not yet taken, so a helper that the kernel
 *     has not scheduled yet holds nothing up: once the chunks are gone the caller takes back
 *     every helper that has not started, and waits only for those running a chunk.
 * Which thread runs a chunk never matters: ops write per chunk (its number is the `worker`
 * argument), so results are the same bits as before at every thread count.
 *
 * Helpers are made when first wanted and kept: a call takes idle ones from a free list and
 * makes more when there are too few (several threads calling ndx at once each get their own, as
 * OpenMP gives each its team). A chunk's own ndx_parallel_for (nested) runs on its thread.
 * After fork() the child starts with no helpers; at unload the idle ones are stopped and
 * joined. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "core.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* How long a thread spins for what it waits for before it sleeps: long enough to catch the next
 * region of the same op or the next op of a loop, short enough to give a busy core back. */
#define SPIN_NS 50000

enum { IDLE, ASSIGNED, RUNNING, DONE, STOP };

typedef struct pool_job {
    ndx_range_fn fn;
    void *ctx;
    int64_t n;
    int chunks;
    atomic_uchar taken[NDX_MAX_WORKERS]; /* chunk w has been claimed */
} pool_job;

typedef struct helper {
    atomic_int state;      /* IDLE -> ASSIGNED (caller) -> RUNNING (helper) -> DONE -> IDLE;
                              ASSIGNED -> IDLE when the caller takes it back unstarted */
    pool_job *_Atomic job; /* set before ASSIGNED */
    int first;             /* the chunk this helper runs first */
    pthread_mutex_t mu;    /* with the two conditions, for sleeping only */
    pthread_cond_t work;   /* the helper waits here for ASSIGNED or STOP */
    pthread_cond_t done;   /* the caller waits here for DONE */
    pthread_t thread;
    struct helper *next_free;
} helper;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static helper *free_helpers; /* idle, under pool_mu */
static helper *stale_helpers; /* in a forked child: the parent's, freed at the next call */
static int helper_count;     /* made so far, under pool_mu */
static int fork_handler_set;
static _Thread_local int in_chunk; /* this thread is running a chunk: nested calls stay here */

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Spins up to SPIN_NS until `state` is a or b; returns it, or -1 when the time ran out. */
static int spin_for(atomic_int *state, int a, int b) {
    int64_t start = 0;
    for (unsigned i = 0;; i++) {
        int s = atomic_load_explicit(state, memory_order_acquire);
        if (s == a || s == b) return s;
        cpu_relax();
        if ((i & 63) == 63) {
            int64_t t = now_ns();
            if (!start) start = t;
            else if (t - start > SPIN_NS) return -1;
        }
    }
}

/* Runs chunk `first`, then every chunk nobody has taken yet. */
static void run_chunks(pool_job *job, int first) {
    int outer = in_chunk;
    in_chunk = 1;
    for (int k = 0; k < job->chunks; k++) {
        int w = (first + k) % job->chunks;
        if (atomic_exchange_explicit(&job->taken[w], 1, memory_order_relaxed)) continue;
        job->fn(job->ctx, ndx_chunk_begin(job->n, job->chunks, w),
                ndx_chunk_begin(job->n, job->chunks, w + 1), w);
    }
    in_chunk = outer;
}

static void *helper_main(void *arg) {
    helper *h = arg;
    for (;;) {
        int s = spin_for(&h->state, ASSIGNED, STOP);
        if (s < 0) {
            pthread_mutex_lock(&h->mu);
            while ((s = atomic_load(&h->state)) != ASSIGNED && s != STOP)
                pthread_cond_wait(&h->work, &h->mu);
            pthread_mutex_unlock(&h->mu);
        }
        if (s == STOP) return NULL;
        int expected = ASSIGNED; /* the caller may have taken the job back meanwhile */
        if (!atomic_compare_exchange_strong(&h->state, &expected, RUNNING)) continue;
        run_chunks(atomic_load(&h->job), h->first);
        atomic_store(&h->state, DONE); /* the job is not touched after this */
        pthread_mutex_lock(&h->mu);
        pthread_cond_signal(&h->done);
        pthread_mutex_unlock(&h->mu);
    }
}

/* In the child of a fork only the forking thread exists: start again with no helpers. The
 * parent's idle ones are freed at the child's next call (their locks are never touched). */
static void pool_prepare(void) { pthread_mutex_lock(&pool_mu); }
static void pool_parent(void) { pthread_mutex_unlock(&pool_mu); }
static void pool_child(void) {
    stale_helpers = free_helpers;
    free_helpers = NULL;
    helper_count = 0;
    pthread_mutex_unlock(&pool_mu);
}

/* A new helper, running (under pool_mu), or NULL when the system refuses one. */
static helper *make_helper(void) {
    if (helper_count == NDX_MAX_WORKERS) return NULL;
    if (!fork_handler_set) {
        if (pthread_atfork(pool_prepare, pool_parent, pool_child) != 0) return NULL;
        fork_handler_set = 1;
    }
    helper *h = aligned_alloc(64, (sizeof(helper) + 63) & ~(size_t)63); /* a line of its own */
    if (!h) return NULL;
    atomic_init(&h->state, IDLE);
    atomic_init(&h->job, NULL);
    h->next_free = NULL;
    if (pthread_mutex_init(&h->mu, NULL) != 0) goto no_mutex;
    if (pthread_cond_init(&h->work, NULL) != 0) goto no_work;
    if (pthread_cond_init(&h->done, NULL) != 0) goto no_done;
    if (pthread_create(&h->thread, NULL, helper_main, h) != 0) goto no_thread;
    helper_count++;
    return h;
no_thread:
    pthread_cond_destroy(&h->done);
no_done:
    pthread_cond_destroy(&h->work);
no_work:
    pthread_mutex_destroy(&h->mu);
no_mutex:
    free(h);
    return NULL;
}

/* Takes up to `want` idle helpers (making more if needed) into `got`; returns how many. */
static int take_helpers(helper **got, int want) {
    int n = 0;
    pthread_mutex_lock(&pool_mu);
    for (helper *h = stale_helpers, *next; h; h = next) {
        next = h->next_free;
        free(h);
    }
    stale_helpers = NULL;
    while (n < want && free_helpers) {
        got[n++] = free_helpers;
        free_helpers = free_helpers->next_free;
    }
    while (n < want) {
        helper *h = make_helper();
        if (!h) break;
        got[n++] = h;
    }
    pthread_mutex_unlock(&pool_mu);
    return n;
}

static void give_back(helper **got, int n) {
    pthread_mutex_lock(&pool_mu);
    for (int i = 0; i < n; i++) {
        got[i]->next_free = free_helpers;
        free_helpers = got[i];
    }
    pthread_mutex_unlock(&pool_mu);
}

/* The helper is done with the job: taken back unstarted, or finished. */
static void release(helper *h) {
    int expected = ASSIGNED;
    if (atomic_compare_exchange_strong(&h->state, &expected, IDLE)) return;
    if (spin_for(&h->state, DONE, DONE) < 0) {
        pthread_mutex_lock(&h->mu);
        while (atomic_load(&h->state) != DONE) pthread_cond_wait(&h->done, &h->mu);
        pthread_mutex_unlock(&h->mu);
    }
    atomic_store(&h->state, IDLE);
}

void ndx_pool_run(int chunks, int64_t n, ndx_range_fn fn, void *ctx) {
    pool_job job = {.fn = fn, .ctx = ctx, .n = n, .chunks = chunks}; /* (taken: all zero) */
    helper *got[NDX_MAX_WORKERS];
    int helpers = in_chunk || chunks < 2 ? 0 : take_helpers(got, chunks - 1);
    for (int i = 0; i < helpers; i++) {
        got[i]->first = i + 1;
        atomic_store(&got[i]->job, &job);
        atomic_store(&got[i]->state, ASSIGNED);
        pthread_mutex_lock(&got[i]->mu);
        pthread_cond_signal(&got[i]->work);
        pthread_mutex_unlock(&got[i]->mu);
    }
    run_chunks(&job, 0);
    for (int i = 0; i < helpers; i++) release(got[i]);
    give_back(got, helpers);
}

/* Unloading the library (or the process ending): stop and join the idle helpers, so none is
 * left asleep in code that is about to go away. */
__attribute__((destructor)) static void pool_stop(void) {
    pthread_mutex_lock(&pool_mu);
    for (helper *h = free_helpers; h; h = h->next_free) {
        pthread_mutex_lock(&h->mu);
        atomic_store(&h->state, STOP);
        pthread_cond_signal(&h->work);
        pthread_mutex_unlock(&h->mu);
    }
    for (helper *h = free_helpers, *next; h; h = next) {
        next = h->next_free;
        pthread_join(h->thread, NULL);
        pthread_cond_destroy(&h->done);
        pthread_cond_destroy(&h->work);
        pthread_mutex_destroy(&h->mu);
        free(h);
    }
    free_helpers = NULL;
    pthread_mutex_unlock(&pool_mu);
}
