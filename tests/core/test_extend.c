/* test_extend.c — the memory API for layers built on ndx (ndx.h, 5f): ndx_block_alloc takes
 * blocks under an op's options (the caller's allocator, the memory budget counted across the
 * blocks of one call) and ndx_block_free gives them back the way they came; a block from ndx's
 * own allocator may be freed with ndx_tensor_free, as the header promises. */
#include "ndx_test.h"

typedef struct counter {
    size_t live_bytes, total_bytes;
    int live_blocks, refuse;
} counter;

static void *counting_allocate(void *user, size_t bytes, size_t alignment) {
    counter *c = user;
    if (c->refuse) return NULL;
    void *p = NULL;
    if (posix_memalign(&p, alignment, bytes) != 0) return NULL;
    c->live_bytes += bytes, c->total_bytes += bytes, c->live_blocks++;
    return p;
}
static void counting_release(void *user, void *block) {
    counter *c = user;
    c->live_blocks--;
    free(block);
}

static void blocks_come_from_the_callers_allocator(void **state) {
    (void)state;
    counter c = {0};
    ndx_allocator a = {counting_allocate, counting_release, &c};
    ndx_options opt = {.allocator = &a};
    ndx_error err;
    size_t used = 0;
    void *x, *y;
    assert_ok(ndx_block_alloc(&opt, "layer", "x", 100, &used, &x, &err), &err);
    assert_ok(ndx_block_alloc(&opt, "layer", "y", 28, &used, &y, &err), &err);
    assert_int_equal(used, 128);
    assert_int_equal(c.total_bytes, 128);
    assert_int_equal(c.live_blocks, 2);
    assert_int_equal((uintptr_t)x % 64, 0);
    memset(x, 1, 100);
    ndx_block_free(&opt, x);
    ndx_block_free(&opt, y);
    ndx_block_free(&opt, NULL);
    assert_int_equal(c.live_blocks, 0);
    /* A refusing allocator: NDX_E_NO_MEMORY naming the caller and the block, *used unchanged. */
    c.refuse = 1;
    assert_fails(ndx_block_alloc(&opt, "layer on rank 3", "the rows", 64, &used, &x, &err), &err,
                 NDX_E_NO_MEMORY, "layer on rank 3: cannot allocate 64 bytes for the rows");
    assert_null(x);
    assert_int_equal(used, 128);
    /* Nothing asked, nothing taken. */
    assert_ok(ndx_block_alloc(&opt, "layer", "nothing", 0, &used, &x, &err), &err);
    assert_null(x);
}

static void blocks_count_against_max_memory(void **state) {
    (void)state;
    ndx_options opt = {.max_memory = 1000};
    ndx_error err;
    size_t used = 0;
    void *x, *y;
    assert_ok(ndx_block_alloc(&opt, "layer", "x", 600, &used, &x, &err), &err);
    /* 600 + 600 > 1000: the second block of the same call is over the budget. */
    assert_fails(ndx_block_alloc(&opt, "layer", "y", 600, &used, &y, &err), &err,
                 NDX_E_MEMORY_BUDGET, "layer: y needs 600 bytes, over the memory budget of 1000");
    assert_null(y);
    assert_int_equal(used, 600);
    ndx_block_free(&opt, x);
    /* Malformed options are refused as the ops refuse them. */
    ndx_allocator half = {counting_allocate, NULL, NULL};
    ndx_options bad = {.allocator = &half};
    assert_fails(ndx_block_alloc(&bad, "layer", "x", 8, NULL, &x, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "opt->allocator");
    assert_null(x);
}

static void default_blocks_free_with_ndx_tensor_free(void **state) {
    (void)state;
    ndx_error err;
    /* Small and large (the large one goes through the block cache). */
    size_t sizes[2] = {4096, (size_t)8 << 20};
    for (int i = 0; i < 2; i++) {
        void *p;
        assert_ok(ndx_block_alloc(NULL, "layer", "out", sizes[i], NULL, &p, &err), &err);
        memset(p, 7, sizes[i]);
        int64_t shape[1] = {(int64_t)sizes[i]};
        ndx_tensor t = ndx_tensor_make(NDX_UINT8, 1, shape, p);
        ndx_tensor_free(&t);
        assert_null(t.data);
        assert_ok(ndx_block_alloc(NULL, "layer", "scratch", sizes[i], NULL, &p, &err), &err);
        ndx_block_free(NULL, p);
    }
    ndx_release_memory();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blocks_come_from_the_callers_allocator),
        cmocka_unit_test(blocks_count_against_max_memory),
        cmocka_unit_test(default_blocks_free_with_ndx_tensor_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
