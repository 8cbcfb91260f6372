/* A small call allocates only its outputs: every op, on a few elements, through a counting
 * allocator, asks it for exactly the outputs it returns (their bytes, one block each), and for
 * nothing at all when the caller gives the outputs' memory. Scratch of small calls lives in the
 * call (ndx_call_scratch); a scratch block reaching the allocator fails these counts. Each result
 * is also compared with the value worked out by hand (TensorFlow's documented semantics). */
#include "ndx_test.h"

#include "counting_allocator.h"
#include "dense_ops.h"

typedef struct counted_call {
    ndx_counter count;
    ndx_allocator alloc;
    ndx_options opt;
} counted_call;

static void counted_init(counted_call *c, int threads) {
    memset(c, 0, sizeof *c);
    c->alloc = ndx_counting_allocator(&c->count);
    c->opt.allocator = &c->alloc;
    c->opt.num_threads = threads;
}

/* The output blocks the op allocated go back through the allocator they came from. */
static void give_back(counted_call *c, ndx_tensor *t) {
    ndx_counted_release(&c->count, t->data);
    t->data = NULL;
}

static void expect_floats(const ndx_tensor *t, const float *want, int64_t n) {
    assert_int_equal(t->dtype, NDX_FLOAT32);
    assert_int_equal(test_count(t), n);
    assert_memory_equal(t->data, want, (size_t)n * sizeof(float));
}

static void expect_allocated(const counted_call *c, long long blocks, long long bytes) {
    assert_int_equal(c->count.calls, blocks);
    assert_int_equal(c->count.bytes, bytes);
}

static float params[8] = {0, 1, 2, 3, 4, 5, 6, 7};
static int64_t rows4[4][1] = {{1}, {3}, {5}, {7}};

static void gather_nd_allocates_its_output_only(void **state) {
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        counted_call c;
        counted_init(&c, threads);
        ndx_tensor p = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){8}, params);
        ndx_tensor i = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){4, 1}, rows4);
        ndx_tensor out = (ndx_tensor){0};
        ndx_error err;
        assert_int_equal(ndx_gather_nd(&p, &i, 0, &c.opt, &out, &err), NDX_OK);
        expect_floats(&out, (float[]){1, 3, 5, 7}, 4);
        expect_allocated(&c, 1, 16);
        give_back(&c, &out);
        float into[4];
        out = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){4}, into);
        assert_int_equal(ndx_gather_nd(&p, &i, 0, &c.opt, &out, &err), NDX_OK);
        expect_floats(&out, (float[]){1, 3, 5, 7}, 4);
        expect_allocated(&c, 1, 16);
        assert_int_equal(c.count.live, 0);
    }
}

/* Small gathers resolve each index row once, before anything is allocated or written: a bad row
 * fails the call with no allocation and the output untouched, a bad row under the ignore policy
 * gives zeros, batch dims move the base, and a caller's output overlapping the inputs is
 * refused. Expected values by hand from tf.gather_nd's definition. */
static void small_gather_checks_every_row_first(void **state) {
    (void)state;
    ndx_tensor p = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){8}, params);
    int32_t rows[3][1] = {{1}, {9}, {3}};
    ndx_tensor i = ndx_tensor_make(NDX_INT32, 2, (int64_t[]){3, 1}, rows);
    for (int threads = 1; threads <= 2; threads++) {
        counted_call c;
        counted_init(&c, threads);
        ndx_tensor out = (ndx_tensor){0};
        ndx_error err;
        assert_int_equal(ndx_gather_nd(&p, &i, 0, &c.opt, &out, &err), NDX_E_OUT_OF_RANGE);
        assert_non_null(strstr(err.message, "indices[1] = [9]"));
        assert_null(out.data);
        expect_allocated(&c, 0, 0);
        float into[3] = {-1, -1, -1};
        out = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){3}, into);
        assert_int_equal(ndx_gather_nd(&p, &i, 0, &c.opt, &out, &err), NDX_E_OUT_OF_RANGE);
        assert_memory_equal(into, ((float[]){-1, -1, -1}), sizeof into);
        c.opt.bad_indices = NDX_BAD_INDICES_IGNORE;
        assert_int_equal(ndx_gather_nd(&p, &i, 0, &c.opt, &out, &err), NDX_OK);
        expect_floats(&out, (float[]){1, 0, 3}, 3);
        out = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){3}, params + 2); /* inside params */
        assert_int_equal(ndx_gather_nd(&p, &i, 0, &c.opt, &out, &err), NDX_E_INVALID_ARGUMENT);
        assert_non_null(strstr(err.message, "overlaps"));
        assert_memory_equal(params, ((float[]){0, 1, 2, 3, 4, 5, 6, 7}), sizeof params);
        expect_allocated(&c, 0, 0);
    }
    /* batch_dims = 1: row b picks from params[b]. params [[0, 1, 2, 3], [4, 5, 6, 7]]. */
    ndx_tensor pb = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 4}, params);
    int64_t brows[2][2][1] = {{{3}, {0}}, {{1}, {2}}};
    ndx_tensor ib = ndx_tensor_make(NDX_INT64, 3, (int64_t[]){2, 2, 1}, brows);
    ndx_tensor out = (ndx_tensor){0};
    ndx_error err;
    assert_int_equal(ndx_gather_nd(&pb, &ib, 1, NULL, &out, &err), NDX_OK);
    assert_int_equal(out.rank, 2);
    expect_floats(&out, (float[]){3, 0, 5, 6}, 4);
    ndx_tensor_free(&out);
    brows[1][1][0] = 4; /* out of params[1] */
    assert_int_equal(ndx_gather_nd(&pb, &ib, 1, NULL, &out, &err), NDX_E_OUT_OF_RANGE);
    assert_non_null(strstr(err.message, "indices[1, 1]"));
    assert_null(out.data);
}

static void scatters_allocate_their_output_only(void **state) {
    (void)state;
    float tensor[8] = {1, 1, 1, 1, 1, 1, 1, 1}, updates[3] = {5, 2, 9};
    int32_t idx[3][1] = {{4}, {1}, {4}};
    /* Per op: tensor[1] and tensor[4] (twice) combined with 2 and 5, 9. */
    const float want[5][8] = {
        {1, 2, 1, 1, 9, 1, 1, 1},  /* update: the last write to a row wins */
        {1, 3, 1, 1, 15, 1, 1, 1}, /* add */
        {1, -1, 1, 1, -13, 1, 1, 1}, /* sub */
        {1, 1, 1, 1, 1, 1, 1, 1},  /* min */
        {1, 2, 1, 1, 9, 1, 1, 1},  /* max */
    };
    ndx_scatter_op ops[5] = {NDX_SCATTER_UPDATE, NDX_SCATTER_ADD, NDX_SCATTER_SUB,
                             NDX_SCATTER_MIN, NDX_SCATTER_MAX};
    for (int k = 0; k < 5; k++) {
        counted_call c;
        counted_init(&c, 1);
        ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){8}, tensor);
        ndx_tensor i = ndx_tensor_make(NDX_INT32, 2, (int64_t[]){3, 1}, idx);
        ndx_tensor u = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){3}, updates);
        ndx_tensor out = (ndx_tensor){0};
        ndx_error err;
        if (ops[k] == NDX_SCATTER_UPDATE) { /* duplicates under update: make them one */
            idx[2][0] = 0;
            float w[8] = {2, 2, 1, 1, 5, 1, 1, 1};
            updates[2] = 2;
            assert_int_equal(ndx_tensor_scatter_nd(ops[k], &t, &i, &u, &c.opt, &out, &err),
                             NDX_OK);
            expect_floats(&out, w, 8);
            idx[2][0] = 4;
            updates[2] = 9;
        } else {
            assert_int_equal(ndx_tensor_scatter_nd(ops[k], &t, &i, &u, &c.opt, &out, &err),
                             NDX_OK);
            expect_floats(&out, want[k], 8);
        }
        expect_allocated(&c, 1, 32);
        give_back(&c, &out);
        float into[8];
        out = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){8}, into);
        if (ops[k] != NDX_SCATTER_UPDATE) {
            assert_int_equal(ndx_tensor_scatter_nd(ops[k], &t, &i, &u, &c.opt, &out, &err),
                             NDX_OK);
            expect_floats(&out, want[k], 8);
        }
        expect_allocated(&c, 1, 32);
    }
    /* scatter_nd: zeros with the updates added at their rows. */
    counted_call c;
    counted_init(&c, 1);
    ndx_tensor i = ndx_tensor_make(NDX_INT32, 2, (int64_t[]){3, 1}, idx);
    ndx_tensor u = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){3}, updates);
    ndx_tensor out = (ndx_tensor){0};
    ndx_error err;
    assert_int_equal(ndx_scatter_nd(&i, &u, 1, (int64_t[]){6}, &c.opt, &out, &err), NDX_OK);
    expect_floats(&out, (float[]){0, 2, 0, 0, 14, 0}, 6);
    expect_allocated(&c, 1, 24);
    give_back(&c, &out);
    float into[6];
    out = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){6}, into);
    assert_int_equal(ndx_scatter_nd(&i, &u, 1, (int64_t[]){6}, &c.opt, &out, &err), NDX_OK);
    expect_floats(&out, (float[]){0, 2, 0, 0, 14, 0}, 6);
    expect_allocated(&c, 1, 24);
}

/* The replace -1 entries program's stitch (sorted parts: the merge path) and one with parts out
 * of order (the table of winners), each into a new output and into the caller's. */
static void stitches_allocate_their_output_only(void **state) {
    (void)state;
    int32_t sorted0[2] = {1, 4}, sorted1[4] = {0, 2, 3, 5};
    int32_t mixed0[2] = {4, 1}, mixed1[4] = {5, 0, 3, 2};
    float d0[2] = {-1, -2}, d1[4] = {10, 20, 30, 40};
    const float want_sorted[6] = {10, -1, 20, 30, -2, 40};
    const float want_mixed[6] = {20, -2, 40, 30, -1, 10};
    for (int parallel = 0; parallel < 2; parallel++) {
        for (int mixed = 0; mixed < 2; mixed++) {
            counted_call c;
            counted_init(&c, 2);
            ndx_tensor idx[2] = {
                ndx_tensor_make(NDX_INT32, 1, (int64_t[]){2}, mixed ? mixed0 : sorted0),
                ndx_tensor_make(NDX_INT32, 1, (int64_t[]){4}, mixed ? mixed1 : sorted1)};
            ndx_tensor data[2] = {ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){2}, d0),
                                  ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){4}, d1)};
            ndx_tensor out = (ndx_tensor){0};
            ndx_error err;
            ndx_status (*op)(int, const ndx_tensor *, const ndx_tensor *, const ndx_options *,
                             ndx_tensor *, ndx_error *) =
                parallel ? ndx_parallel_dynamic_stitch : ndx_dynamic_stitch;
            assert_int_equal(op(2, idx, data, &c.opt, &out, &err), NDX_OK);
            expect_floats(&out, mixed ? want_mixed : want_sorted, 6);
            expect_allocated(&c, 1, 24);
            give_back(&c, &out);
            float into[6];
            out = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){6}, into);
            assert_int_equal(op(2, idx, data, &c.opt, &out, &err), NDX_OK);
            expect_floats(&out, mixed ? want_mixed : want_sorted, 6);
            expect_allocated(&c, 1, 24);
        }
    }
}

static void partition_allocates_its_outputs_only(void **state) {
    (void)state;
    float data[6] = {1.1f, -1, 6.2f, 5.3f, -1, 8.4f};
    int32_t parts[6] = {1, 0, 1, 1, 0, 1};
    counted_call c;
    counted_init(&c, 2);
    ndx_tensor d = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){6}, data);
    ndx_tensor p = ndx_tensor_make(NDX_INT32, 1, (int64_t[]){6}, parts);
    ndx_tensor outs[3] = {(ndx_tensor){0}, (ndx_tensor){0},
                          (ndx_tensor){0}};
    ndx_error err;
    assert_int_equal(ndx_dynamic_partition(&d, &p, 3, &c.opt, outs, &err), NDX_OK);
    expect_floats(&outs[0], (float[]){-1, -1}, 2);
    expect_floats(&outs[1], (float[]){1.1f, 6.2f, 5.3f, 8.4f}, 4);
    assert_int_equal(test_count(&outs[2]), 0);
    /* Partition 2 is empty: nothing is allocated for it. */
    expect_allocated(&c, 2, 24);
    for (int q = 0; q < 3; q++) give_back(&c, &outs[q]);
    float o0[2], o1[4];
    outs[0] = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){2}, o0);
    outs[1] = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){4}, o1);
    outs[2] = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){0}, NULL);
    assert_int_equal(ndx_dynamic_partition(&d, &p, 3, &c.opt, outs, &err), NDX_OK);
    expect_floats(&outs[1], (float[]){1.1f, 6.2f, 5.3f, 8.4f}, 4);
    expect_allocated(&c, 2, 24);
}

/* A [2, 3] sparse tensor with entries (0, 2) = 1 and (1, 0) = 2, in the given order. */
static ndx_sparse_tensor sparse_of(int64_t (*idx)[2], float *values, int64_t *shape) {
    ndx_sparse_tensor sp = {ndx_tensor_make(NDX_INT64, 2, (int64_t[]){2, 2}, idx),
                            ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){2}, values),
                            ndx_tensor_make(NDX_INT64, 1, (int64_t[]){2}, shape)};
    return sp;
}

static void sparse_ops_allocate_their_outputs_only(void **state) {
    (void)state;
    int64_t in_order[2][2] = {{0, 2}, {1, 0}}, reversed[2][2] = {{1, 0}, {0, 2}};
    float values[2] = {1, 2}, values_reversed[2] = {2, 1};
    int64_t shape[2] = {2, 3};
    ndx_error err;
    counted_call c;

    /* sparse_concat on axis 1 of the tensor with itself: [2, 6]; 4 entries of 2 coordinates. */
    counted_init(&c, 1);
    ndx_sparse_tensor a = sparse_of(in_order, values, shape);
    ndx_sparse_tensor two[2] = {a, a}, out = {0};
    assert_int_equal(ndx_sparse_concat(1, 2, two, 0, &c.opt, &out, &err), NDX_OK);
    const int64_t want_idx[4][2] = {{0, 2}, {0, 5}, {1, 0}, {1, 3}};
    assert_memory_equal(out.indices.data, want_idx, sizeof want_idx);
    expect_floats(&out.values, (float[]){1, 1, 2, 2}, 4);
    assert_int_equal(((int64_t *)out.dense_shape.data)[1], 6);
    expect_allocated(&c, 3, 64 + 16 + 16);
    give_back(&c, &out.indices);
    give_back(&c, &out.values);
    give_back(&c, &out.dense_shape);

    /* sparse_reorder of the reversed entries. */
    counted_init(&c, 1);
    ndx_sparse_tensor r = sparse_of(reversed, values_reversed, shape);
    out = (ndx_sparse_tensor){0};
    assert_int_equal(ndx_sparse_reorder(&r, &c.opt, &out, &err), NDX_OK);
    assert_memory_equal(out.indices.data, in_order, sizeof in_order);
    expect_floats(&out.values, values, 2);
    expect_allocated(&c, 3, 32 + 8 + 16);
    give_back(&c, &out.indices);
    give_back(&c, &out.values);
    give_back(&c, &out.dense_shape);

    /* sparse_to_dense, entries in either order. */
    for (int rev = 0; rev < 2; rev++) {
        counted_init(&c, 1);
        ndx_sparse_tensor s = rev ? r : a;
        ndx_tensor dense = (ndx_tensor){0};
        assert_int_equal(ndx_sparse_to_dense(&s, NULL, &c.opt, &dense, &err), NDX_OK);
        expect_floats(&dense, (float[]){0, 0, 1, 2, 0, 0}, 6);
        expect_allocated(&c, 1, 24);
        give_back(&c, &dense);
        float into[6];
        dense = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 3}, into);
        assert_int_equal(ndx_sparse_to_dense(&s, NULL, &c.opt, &dense, &err), NDX_OK);
        expect_floats(&dense, (float[]){0, 0, 1, 2, 0, 0}, 6);
        expect_allocated(&c, 1, 24);
    }

    /* dense_to_sparse of that dense tensor gives the entries back. */
    counted_init(&c, 1);
    float dense_values[6] = {0, 0, 1, 2, 0, 0};
    ndx_tensor dense = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 3}, dense_values);
    out = (ndx_sparse_tensor){0};
    assert_int_equal(ndx_dense_to_sparse(&dense, &c.opt, &out, &err), NDX_OK);
    assert_memory_equal(out.indices.data, in_order, sizeof in_order);
    expect_floats(&out.values, values, 2);
    expect_allocated(&c, 3, 32 + 8 + 16);
    give_back(&c, &out.indices);
    give_back(&c, &out.values);
    give_back(&c, &out.dense_shape);
}

/* The sparse apply ops update in place: they allocate nothing at all. */
static void sparse_apply_allocates_nothing(void **state) {
    (void)state;
    counted_call c;
    counted_init(&c, 2);
    float var[4][2] = {{1, 1}, {1, 1}, {1, 1}, {1, 1}}, accum[4][2] = {{1, 1}, {1, 1}, {1, 1}, {1, 1}};
    float grad[2][2] = {{1, 2}, {3, 4}}, lr = 0.5f;
    int32_t ids[2] = {3, 0};
    ndx_tensor v = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){4, 2}, var);
    ndx_tensor acc = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){4, 2}, accum);
    ndx_tensor l = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &lr);
    ndx_tensor g = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 2}, grad);
    ndx_tensor i = ndx_tensor_make(NDX_INT32, 1, (int64_t[]){2}, ids);
    ndx_error err;
    assert_int_equal(ndx_sparse_apply_sgd(&v, &l, &g, &i, &c.opt, &err), NDX_OK);
    /* var[3] -= 0.5 * [1, 2]; var[0] -= 0.5 * [3, 4] */
    const float want_sgd[4][2] = {{-0.5f, -1}, {1, 1}, {1, 1}, {0.5f, 0}};
    assert_memory_equal(var, want_sgd, sizeof var);
    expect_allocated(&c, 0, 0);
    /* Adagrad V1: accum += g^2; var -= lr * g / sqrt(accum). With g = 3 or 4 on accum 1 the
     * roots are sqrt(10) and sqrt(17); with g = 1, 2: sqrt(2), sqrt(5). */
    assert_int_equal(ndx_sparse_apply_adagrad(&v, &acc, &l, NULL, &g, &i, 1, &c.opt, &err),
                     NDX_OK);
    assert_true(accum[3][0] == 2 && accum[3][1] == 5 && accum[0][0] == 10 && accum[0][1] == 17);
    expect_allocated(&c, 0, 0);
}

/* The graph's dense kernels (the replace -1 entries program's Add and Cast, and a reduce_sum)
 * allocate only their output. */
static void dense_kernels_allocate_their_output_only(void **state) {
    (void)state;
    counted_call c;
    counted_init(&c, 2);
    float x[6] = {0.1f, -1, 5.2f, 4.3f, -1, 7.4f}, one = 1;
    uint8_t mask[6] = {1, 0, 1, 1, 0, 1};
    ndx_tensor X = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){6}, x);
    ndx_tensor One = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &one);
    ndx_tensor M = ndx_tensor_make(NDX_BOOL, 1, (int64_t[]){6}, mask);
    ndx_tensor out = (ndx_tensor){0};
    ndx_error err;
    assert_int_equal(ndx_binary(NDX_BINARY_ADD, &X, &One, &c.opt, &out, &err), NDX_OK);
    expect_floats(&out, (float[]){1.1f, 0, 6.2f, 5.3f, 0, 8.4f}, 6);
    expect_allocated(&c, 1, 24);
    give_back(&c, &out);
    assert_int_equal(ndx_cast(&M, NDX_INT32, &c.opt, &out, &err), NDX_OK);
    assert_memory_equal(out.data, ((int32_t[]){1, 0, 1, 1, 0, 1}), 6 * sizeof(int32_t));
    expect_allocated(&c, 2, 48);
    give_back(&c, &out);
    int32_t axis = 0;
    ndx_tensor A = ndx_tensor_make(NDX_INT32, 1, (int64_t[]){1}, &axis);
    assert_int_equal(ndx_reduce_sum(&X, &A, 0, &c.opt, &out, &err), NDX_OK);
    assert_int_equal(out.rank, 0);
    float want = ((((0.1f + -1.0f) + 5.2f) + 4.3f) + -1.0f) + 7.4f; /* row-major order */
    assert_true(*(float *)out.data == want);
    expect_allocated(&c, 3, 52);
    give_back(&c, &out);
    assert_int_equal(c.count.live, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gather_nd_allocates_its_output_only),
        cmocka_unit_test(small_gather_checks_every_row_first),
        cmocka_unit_test(scatters_allocate_their_output_only),
        cmocka_unit_test(stitches_allocate_their_output_only),
        cmocka_unit_test(partition_allocates_its_outputs_only),
        cmocka_unit_test(sparse_ops_allocate_their_outputs_only),
        cmocka_unit_test(sparse_apply_allocates_nothing),
        cmocka_unit_test(dense_kernels_allocate_their_output_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
