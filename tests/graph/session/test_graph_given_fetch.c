/* test_graph_given_fetch.c — an ALLOCATE fetch of a value nothing else reads takes the block the
 * run computed it in (no copy; the session no longer holds it): sparse_reshape's indices (a
 * kernel that allocates its output and writes it in one pass) checked against a naive
 * reference at several thread counts, the allocations of repeated runs, values that must be
 * copied instead (read twice, fed, a view of a value read elsewhere), and failed runs that
 * hand out nothing and leak nothing. */
#include <stdio.h>

#include "contract.h"
#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN
#define ROWS 6000 /* 96,000 bytes of output indices: a block worth giving */

typedef struct reshape_graph {
    ndx_graph *g;
    ndx_output indices;  /* placeholder [U, 2] int64 of shape [300, 400] */
    ndx_output reshaped; /* their rows in [1000, 120] */
    ndx_output shape;    /* the new dense shape */
} reshape_graph;

static reshape_graph reshape_graph_new(void) {
    reshape_graph r;
    r.g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(r.g);
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(U, 2));
    r.indices = ndx_op_placeholder(ndx_scope_named(s, "indices"), &is);
    ndx_operation op = ndx_op_sparse_reshape(ndx_scope_named(s, "reshape"), r.indices,
                                             test_const(s, NDX_INT64, 1, SHAPE(2),
                                                        (int64_t[]){300, 400}),
                                             test_const(s, NDX_INT64, 1, SHAPE(2),
                                                        (int64_t[]){1000, -1}));
    r.reshaped = ndx_operation_output(op, 0);
    r.shape = ndx_operation_output(op, 1);
    ndx_error err;
    assert_ok(ndx_graph_finish(r.g, &err), &err);
    return r;
}

/* Distinct canonical entries of [300, 400]: every 20th offset. */
static void make_indices(int64_t *idx) {
    for (int64_t i = 0; i < ROWS; i++) {
        idx[2 * i] = i * 20 / 400;
        idx[2 * i + 1] = i * 20 % 400;
    }
}

/* The reference: each row's row-major offset in [300, 400], split in [1000, 120]. */
static void reference(const int64_t *idx, int64_t *want) {
    for (int64_t i = 0; i < ROWS; i++) {
        int64_t off = idx[2 * i] * 400 + idx[2 * i + 1];
        want[2 * i] = off / 120;
        want[2 * i + 1] = off % 120;
    }
}

static ndx_fetch fetch_of(ndx_output o, ndx_fetch_mode mode) {
    ndx_fetch f;
    memset(&f, 0, sizeof f);
    f.output = o;
    f.mode = mode;
    return f;
}

/* The fetched indices are right at 1, 2 and 3 threads, and the session keeps none of them:
 * its pool holds less than the result after each run. Each run allocates the one block it
 * hands out (as a copy did before), and everything handed out goes back to the allocator. */
static void allocate_fetch_takes_the_block(void **state) {
    (void)state;
    reshape_graph r = reshape_graph_new();
    static int64_t idx[2 * ROWS], want[2 * ROWS];
    make_indices(idx);
    reference(idx, want);
    const size_t bytes = sizeof want;
    for (int threads = 1; threads <= 3; threads++) {
        test_allocator counting;
        test_allocator_init(&counting);
        ndx_session_options opt = {threads, 0, &counting.base};
        ndx_session *sess = test_session(r.g, &opt);
        ndx_feed feed = {r.indices, ndx_tensor_make(NDX_INT64, 2, SHAPE(ROWS, 2), idx)};
        ndx_error err;
        int calls = 0;
        for (int run = 0; run < 4; run++) {
            ndx_fetch f[2] = {fetch_of(r.reshaped, NDX_FETCH_ALLOCATE),
                              fetch_of(r.shape, NDX_FETCH_BORROW)};
            assert_ok(ndx_session_run(sess, 1, &feed, 2, f, &err), &err);
            assert_int_equal(f[0].value.rank, 2);
            assert_int_equal(f[0].value.shape[0], ROWS);
            assert_int_equal(f[0].value.shape[1], 2);
            assert_memory_equal(f[0].value.data, want, bytes);
            const int64_t *shape = f[1].value.data;
            assert_true(shape[0] == 1000 && shape[1] == 120);
            assert_true(ndx_session_pool_bytes(sess) < bytes);
            if (run == 1) calls = counting.calls;
            if (run > 1) assert_int_equal(counting.calls - calls, (run - 1)); /* one a run */
            test_allocator_free(&counting, f[0].value.data);
        }
        /* INTO and BORROW runs after it: the pool fills the slot once, then allocates nothing */
        static int64_t into[2 * ROWS];
        ndx_fetch in = fetch_of(r.reshaped, NDX_FETCH_INTO);
        in.value = ndx_tensor_make(NDX_INT64, 2, SHAPE(ROWS, 2), into);
        assert_ok(ndx_session_run(sess, 1, &feed, 1, &in, &err), &err);
        calls = counting.calls;
        for (int run = 0; run < 3; run++) {
            memset(into, 0, sizeof into);
            assert_ok(ndx_session_run(sess, 1, &feed, 1, &in, &err), &err);
            assert_memory_equal(into, want, bytes);
            ndx_fetch b = fetch_of(r.reshaped, NDX_FETCH_BORROW);
            assert_ok(ndx_session_run(sess, 1, &feed, 1, &b, &err), &err);
            assert_memory_equal(b.value.data, want, bytes);
        }
        assert_int_equal(counting.calls, calls + 1); /* the BORROW plan's first run */
        ndx_session_free(sess);
        assert_int_equal(counting.live, 0);
    }
    ndx_graph_free(r.g);
}

/* A value something else reads is copied: fetched twice (ALLOCATE and BORROW, or ALLOCATE
 * twice), or a feed fetched back. Each copy is its own block with the right bytes. */
static void shared_values_are_copied(void **state) {
    (void)state;
    reshape_graph r = reshape_graph_new();
    static int64_t idx[2 * ROWS], want[2 * ROWS];
    make_indices(idx);
    reference(idx, want);
    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {2, 0, &counting.base};
    ndx_session *sess = test_session(r.g, &opt);
    ndx_feed feed = {r.indices, ndx_tensor_make(NDX_INT64, 2, SHAPE(ROWS, 2), idx)};
    ndx_error err;
    for (int run = 0; run < 2; run++) {
        ndx_fetch f[3] = {fetch_of(r.reshaped, NDX_FETCH_ALLOCATE),
                          fetch_of(r.reshaped, run ? NDX_FETCH_ALLOCATE : NDX_FETCH_BORROW),
                          fetch_of(r.indices, NDX_FETCH_ALLOCATE)};
        assert_ok(ndx_session_run(sess, 1, &feed, 3, f, &err), &err);
        assert_true(f[0].value.data != f[1].value.data);
        assert_true(f[2].value.data != (void *)idx);
        assert_memory_equal(f[0].value.data, want, sizeof want);
        assert_memory_equal(f[1].value.data, want, sizeof want);
        assert_memory_equal(f[2].value.data, idx, sizeof idx);
        /* the pool still holds the computed value: it was copied, not given */
        assert_true(ndx_session_pool_bytes(sess) >= sizeof want);
        test_allocator_free(&counting, f[0].value.data);
        if (run) test_allocator_free(&counting, f[1].value.data);
        test_allocator_free(&counting, f[2].value.data);
    }
    ndx_session_free(sess);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(r.g);
}

/* Failed runs hand out nothing: an entry outside input_shape fails in the kernel (after the
 * run's first ones succeeded), a feed of the wrong shape before anything runs; an INTO
 * buffer stays as it was, the ALLOCATE fetch's value stays empty, nothing leaks, and the next
 * good run is right. */
static void failed_runs_give_nothing(void **state) {
    (void)state;
    reshape_graph r = reshape_graph_new();
    static int64_t idx[2 * ROWS], want[2 * ROWS], into[2 * ROWS];
    make_indices(idx);
    reference(idx, want);
    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {2, 0, &counting.base};
    ndx_session *sess = test_session(r.g, &opt);
    ndx_feed feed = {r.indices, ndx_tensor_make(NDX_INT64, 2, SHAPE(ROWS, 2), idx)};
    ndx_error err;
    ndx_fetch f = fetch_of(r.reshaped, NDX_FETCH_ALLOCATE);
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err);
    test_allocator_free(&counting, f.value.data);
    /* the pool's blocks for both paths of the kernel (its output, or its offsets) */
    f = fetch_of(r.reshaped, NDX_FETCH_BORROW);
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err);
    f = fetch_of(r.reshaped, NDX_FETCH_INTO);
    f.value = ndx_tensor_make(NDX_INT64, 2, SHAPE(ROWS, 2), into);
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err);
    int live = counting.live;
    idx[2 * (ROWS - 3) + 1] = 400; /* outside [300, 400] */
    for (int mode = 0; mode < 2; mode++) {
        f = fetch_of(r.reshaped, mode ? NDX_FETCH_INTO : NDX_FETCH_ALLOCATE);
        if (mode) {
            memset(into, 0x5c, sizeof into);
            f.value = ndx_tensor_make(NDX_INT64, 2, SHAPE(ROWS, 2), into);
        }
        assert_fails(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err, NDX_E_OUT_OF_RANGE,
                     "is outside input_shape [300, 400]");
        assert_non_null(strstr(err.message, "reshape"));
        if (mode)
            for (size_t k = 0; k < sizeof into; k++) assert_int_equal(((unsigned char *)into)[k], 0x5c);
        else
            assert_null(f.value.data);
        assert_int_equal(counting.live, live);
    }
    idx[2 * (ROWS - 3) + 1] = (ROWS - 3) * 20 % 400;
    ndx_feed wrong = {r.indices, ndx_tensor_make(NDX_INT64, 2, SHAPE(ROWS / 2, 4), idx)};
    f = fetch_of(r.reshaped, NDX_FETCH_ALLOCATE);
    assert_fails(ndx_session_run(sess, 1, &wrong, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "feed 'indices'");
    assert_null(f.value.data);
    assert_int_equal(counting.live, live);
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err);
    assert_memory_equal(f.value.data, want, sizeof want);
    test_allocator_free(&counting, f.value.data);
    ndx_session_free(sess);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(r.g);
}

/* A dense node's output is given the same way; a Reshape seen as a view of a value nothing else
 * reads gives that value's block; ndx_session_trim after a given block frees the rest. */
static void dense_outputs_and_views(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(4096));
    ndx_output x = ndx_op_placeholder(s, &xs);
    ndx_output y = ndx_op_add(s, x, x);
    ndx_output z = ndx_op_reshape(s, ndx_op_mul(s, y, x),
                                  test_const(s, NDX_INT32, 1, SHAPE(2), (int32_t[]){64, 64}));
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {1, 0, &counting.base};
    ndx_session *sess = test_session(g, &opt);
    static double xv[4096];
    for (int i = 0; i < 4096; i++) xv[i] = i * 0.5;
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(4096), xv)};
    for (int run = 0; run < 3; run++) {
        ndx_fetch f[2] = {fetch_of(y, NDX_FETCH_BORROW), fetch_of(z, NDX_FETCH_ALLOCATE)};
        assert_ok(ndx_session_run(sess, 1, &feed, 2, f, &err), &err);
        const double *yv = f[0].value.data, *zv = f[1].value.data;
        assert_int_equal(f[1].value.rank, 2);
        for (int i = 0; i < 4096; i++) {
            assert_true(yv[i] == xv[i] + xv[i]);
            assert_true(zv[i] == (xv[i] + xv[i]) * xv[i]);
        }
        /* the pool holds y (borrowed) but not z's block */
        assert_true(ndx_session_pool_bytes(sess) < 2 * sizeof xv);
        test_allocator_free(&counting, f[1].value.data);
    }
    ndx_session_trim(sess);
    ndx_fetch f = fetch_of(z, NDX_FETCH_ALLOCATE);
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err);
    assert_true(((double *)f.value.data)[7] == 7.0 * 3.5);
    test_allocator_free(&counting, f.value.data);
    ndx_session_free(sess);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(allocate_fetch_takes_the_block),
        cmocka_unit_test(shared_values_are_copied),
        cmocka_unit_test(failed_runs_give_nothing),
        cmocka_unit_test(dense_outputs_and_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
