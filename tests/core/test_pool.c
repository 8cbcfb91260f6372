/* test_pool.c — ndx's helper threads (src/core/pool.c): every chunk runs exactly once with its
 * own bounds and number, from one caller or many at once, nested runs stay on their thread, and
 * a forked child gets helpers of its own. Run under ThreadSanitizer by scripts/test.sh. */
#include "ndx_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

#define MAX_CHUNKS 64

typedef struct {
    int64_t n;
    int chunks;
    atomic_int runs[MAX_CHUNKS];    /* times chunk w ran */
    atomic_int bad_bounds;          /* a chunk whose [begin, end) was not its own */
    atomic_llong covered;           /* sum of the chunk lengths */
} tally;

static void count_chunk(void *ctx, int64_t begin, int64_t end, int worker) {
    tally *t = ctx;
    if (worker < 0 || worker >= t->chunks) {
        atomic_fetch_add(&t->bad_bounds, 1);
        return;
    }
    atomic_fetch_add(&t->runs[worker], 1);
    /* the chunk's bounds, computed here independently of the library */
    int64_t want_begin = (int64_t)((__int128)t->n * worker / t->chunks);
    int64_t want_end = (int64_t)((__int128)t->n * (worker + 1) / t->chunks);
    if (begin != want_begin || end != want_end) atomic_fetch_add(&t->bad_bounds, 1);
    atomic_fetch_add(&t->covered, end - begin);
}

static void tally_init(tally *t, int64_t n, int chunks) {
    t->n = n;
    t->chunks = chunks;
    for (int w = 0; w < MAX_CHUNKS; w++) atomic_init(&t->runs[w], 0);
    atomic_init(&t->bad_bounds, 0);
    atomic_init(&t->covered, 0);
}

/* 0 when every chunk ran once with its own bounds. */
static int tally_wrong(tally *t) {
    int wrong = atomic_load(&t->bad_bounds) != 0 || atomic_load(&t->covered) != t->n;
    for (int w = 0; w < t->chunks; w++) wrong |= atomic_load(&t->runs[w]) != 1;
    for (int w = t->chunks; w < MAX_CHUNKS; w++) wrong |= atomic_load(&t->runs[w]) != 0;
    return wrong;
}

static void every_chunk_once(void **state) {
    (void)state;
    for (int chunks = 1; chunks <= MAX_CHUNKS; chunks += chunks < 8 ? 1 : 7) {
        for (int64_t n = chunks; n < 5000; n = n * 3 + 1) {
            tally t;
            tally_init(&t, n, chunks);
            ndx_pool_run(chunks, n, count_chunk, &t);
            assert_int_equal(tally_wrong(&t), 0);
        }
    }
}

/* Chunks run at the same time on different threads: each of 4 waits (up to 10 s) until all 4
 * have started, which only helpers running beside the caller can bring about. */
typedef struct {
    atomic_int started;
    atomic_int met; /* chunks that saw all 4 started */
    pthread_t who[4];
} rendezvous;

static void meet(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)begin;
    (void)end;
    rendezvous *r = ctx;
    r->who[worker] = pthread_self();
    atomic_fetch_add(&r->started, 1);
    int64_t deadline = (int64_t)time(NULL) + 10;
    while (atomic_load(&r->started) < 4 && (int64_t)time(NULL) < deadline) sched_yield();
    if (atomic_load(&r->started) == 4) atomic_fetch_add(&r->met, 1);
}

static void chunks_run_side_by_side(void **state) {
    (void)state;
    for (int round = 0; round < 20; round++) {
        rendezvous r;
        atomic_init(&r.started, 0);
        atomic_init(&r.met, 0);
        ndx_pool_run(4, 4, meet, &r);
        assert_int_equal(atomic_load(&r.met), 4);
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++) assert_false(pthread_equal(r.who[a], r.who[b]));
    }
}

/* Several threads calling at once: each gets helpers of its own (or runs its chunks itself),
 * taken back and reused call after call. */
static void count_slowly(void *ctx, int64_t begin, int64_t end, int worker) {
    for (volatile int k = 0; k < 300; k++) {
    } /* about a microsecond: long enough for helpers to take chunks */
    count_chunk(ctx, begin, end, worker);
}

static void *many_calls(void *arg) {
    intptr_t seed = (intptr_t)arg, wrong = 0;
    for (int i = 0; i < 3000; i++) {
        tally t;
        int chunks = 1 + (int)((seed * 7 + i) % 9);
        tally_init(&t, 100 + i % 50, chunks);
        ndx_pool_run(chunks, t.n, count_slowly, &t);
        wrong += tally_wrong(&t);
    }
    return (void *)wrong;
}

static void concurrent_callers(void **state) {
    (void)state;
    pthread_t th[4];
    for (intptr_t k = 0; k < 4; k++) assert_int_equal(pthread_create(&th[k], NULL, many_calls, (void *)k), 0);
    for (int k = 0; k < 4; k++) {
        void *wrong;
        assert_int_equal(pthread_join(th[k], &wrong), 0);
        assert_int_equal((intptr_t)wrong, 0);
    }
}

/* A chunk's own parallel-for runs every inner chunk on the chunk's thread. */
typedef struct {
    tally inner[4];
    atomic_int elsewhere; /* inner chunks run on another thread than their outer chunk */
} nest;

typedef struct {
    tally *t;
    pthread_t owner;
    atomic_int *elsewhere;
} inner_ctx;

static void inner_chunk(void *ctx, int64_t begin, int64_t end, int worker) {
    inner_ctx *c = ctx;
    if (!pthread_equal(pthread_self(), c->owner)) atomic_fetch_add(c->elsewhere, 1);
    count_chunk(c->t, begin, end, worker);
}

static void outer_chunk(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)begin;
    (void)end;
    nest *s = ctx;
    inner_ctx c = {&s->inner[worker], pthread_self(), &s->elsewhere};
    tally_init(c.t, 1000, 5);
    ndx_parallel_for(5, 1000, 1, inner_chunk, &c);
}

static void nested_runs_stay_on_their_thread(void **state) {
    (void)state;
    nest s;
    atomic_init(&s.elsewhere, 0);
    ndx_pool_run(4, 4, outer_chunk, &s);
    for (int w = 0; w < 4; w++) assert_int_equal(tally_wrong(&s.inner[w]), 0);
    assert_int_equal(atomic_load(&s.elsewhere), 0);
}

/* After fork() the child has only the forking thread: its calls make helpers of their own
 * instead of waiting for the parent's (a deadlock, caught by the alarm). */
static void forked_child_gets_helpers(void **state) {
    (void)state;
    tally t;
    tally_init(&t, 4000, 8);
    ndx_pool_run(8, t.n, count_chunk, &t); /* the parent has helpers now */
    assert_int_equal(tally_wrong(&t), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        int wrong = 0;
        for (int i = 0; i < 50; i++) {
            tally c;
            tally_init(&c, 4000, 8);
            ndx_pool_run(8, c.n, count_chunk, &c);
            wrong |= tally_wrong(&c);
        }
        _exit(wrong ? 3 : 0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    tally_init(&t, 4000, 8); /* and the parent's helpers still work */
    ndx_pool_run(8, t.n, count_chunk, &t);
    assert_int_equal(tally_wrong(&t), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_chunk_once),
        cmocka_unit_test(chunks_run_side_by_side),
        cmocka_unit_test(concurrent_callers),
        cmocka_unit_test(nested_runs_stay_on_their_thread),
        cmocka_unit_test(forked_child_gets_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
