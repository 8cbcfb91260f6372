/* counting_allocator.h — an ndx_allocator that counts its calls and the bytes asked, for tests
 * and benchmarks that show what a call or a run allocates (tests/core/test_small_calls.c,
 * tests/graph/session/test_session_variable_init.c, bench/ndx_bench/bench_train.c). Header-only:
 * the tools build without the test support library. The memory itself comes from ndx's own
 * allocator (ndx_block_alloc with no options: large blocks on huge pages and kept for reuse), so
 * a benchmark through this allocator times what a program using the default one would see.
 *
 *   ndx_counter count = {0};
 *   ndx_allocator a = ndx_counting_allocator(&count);
 *   ndx_options opt = {.allocator = &a};   ... count.calls, count.bytes, count.live ... */
#ifndef NDX_COUNTING_ALLOCATOR_H
#define NDX_COUNTING_ALLOCATOR_H

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
    size_t used = 0;
    ndx_error err;
    if (alignment > 64) return NULL; /* ndx_block_alloc aligns to 64, which is all ndx asks */
    if (ndx_block_alloc(NULL, "counting allocator", "a block", bytes ? bytes : 1, &used, &p,
                        &err) != NDX_OK)
        return NULL;
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
    ndx_block_free(NULL, block);
}

static inline ndx_allocator ndx_counting_allocator(ndx_counter *count) {
    ndx_allocator a = {ndx_counted_allocate, ndx_counted_release, count};
    return a;
}

#endif /* NDX_COUNTING_ALLOCATOR_H */
