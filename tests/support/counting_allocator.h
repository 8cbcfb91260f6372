/* counting_allocator.h — an ndx_allocator that counts its calls and the bytes asked, for tests
 * and benchmarks that show what a call or a run allocates (tests/core/test_small_calls.c,
 * tests/graph/session/test_session_variable_init.c, bench/ndx_bench/bench_train.c). Header-only:
 * the tools build without the test support library.
 *
 *   ndx_counter count = {0};
 *   ndx_allocator a = ndx_counting_allocator(&count);
 *   ndx_options opt = {.allocator = &a};   ... count.calls, count.bytes, count.live ... */
#ifndef NDX_COUNTING_ALLOCATOR_H
#define NDX_COUNTING_ALLOCATOR_H

#include <stdlib.h>

#include <ndx.h>

typedef struct ndx_counter {
    long long calls;    /* allocate calls */
    long long bytes;    /* bytes asked by them */
    long long releases; /* release calls with a block */
    long long live;     /* blocks allocated and not yet released */
} ndx_counter;

static inline void *ndx_counted_allocate(void *user, size_t bytes, size_t alignment) {
    ndx_counter *c = user;
    void *p = NULL;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    if (posix_memalign(&p, alignment, bytes ? bytes : 1) != 0) return NULL;
    c->calls++;
    c->bytes += (long long)bytes;
    c->live++;
    return p;
}

static inline void ndx_counted_release(void *user, void *block) {
    ndx_counter *c = user;
    if (!block) return;
    c->releases++;
    c->live--;
    free(block);
}

static inline ndx_allocator ndx_counting_allocator(ndx_counter *count) {
    ndx_allocator a = {ndx_counted_allocate, ndx_counted_release, count};
    return a;
}

#endif /* NDX_COUNTING_ALLOCATOR_H */
