/* test_sparse_reshape.c — sparse_slice, sparse_split, sparse_reshape and sparse_slice_grad:
 * TensorFlow's kernel-test cases (sparse_slice_op_test, sparse_split_op_test,
 * sparse_reshape_op_test), randomized calls over every dtype and index dtype against the naive
 * references of tests/reference/reference_sparse_reshape.c, 1/2/3 threads bitwise alike,
 * inputs out of canonical order and with repeated indices, and every error with the outputs
 * untouched. */
#include "ndx_test.h"
#include "reference.h"

#include <stdio.h>

/* ---- inputs ------------------------------------------------------------------------------ */

static ndx_sparse_tensor sparse_of(ndx_dtype it, int64_t n, int rank, const int64_t *idx,
                                   ndx_dtype vt, const void *values, const int64_t *dims) {
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(it, 0, 2, n, rank);
    for (int64_t k = 0; k < n * rank; k++) test_set_index(&s.indices, k, idx[k]);
    s.values = test_tensor_from(vt, 0, 1, &n, values);
    s.dense_shape = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){rank}, dims);
    return s;
}

/* TensorFlow's _SparseTensor_4x6 (sparse_slice_op_test.py, sparse_split_op_test.py):
 *   [ 0 |   |  2 |    |  4 |  5 ]
 *   [   | 11|    | 13 | 14 |    ]
 *   [ 20|   |    | 23 |    | 25 ]
 *   [ 30|   | 32 | 33 |    | 35 ] */
static const int64_t idx_4x6[] = {0, 0, 0, 2, 0, 4, 0, 5, 1, 1, 1, 3, 1, 4,
                                  2, 0, 2, 3, 2, 5, 3, 0, 3, 2, 3, 3, 3, 5};
static const int64_t val_4x6[] = {0, 2, 4, 5, 11, 13, 14, 20, 23, 25, 30, 32, 33, 35};

static ndx_sparse_tensor sparse_4x6(void) {
    return sparse_of(NDX_INT64, 14, 2, idx_4x6, NDX_INT64, val_4x6, SHAPE(4, 6));
}

/* The entries of a 2-D int64 sparse result, densified: the picture TensorFlow's tests draw. */
static void assert_dense_is(const ndx_sparse_tensor *got, int64_t rows, int64_t cols,
                            const int64_t *want /* -1: no entry */) {
    assert_int_equal(got->dense_shape.shape[0], 2);
    assert_int_equal(((int64_t *)got->dense_shape.data)[0], rows);
    assert_int_equal(((int64_t *)got->dense_shape.data)[1], cols);
    int64_t *dense = malloc((size_t)(rows * cols + 1) * sizeof *dense);
    for (int64_t k = 0; k < rows * cols; k++) dense[k] = -1;
    int64_t n = got->indices.shape[0];
    for (int64_t i = 0; i < n; i++) {
        int64_t r = ((int64_t *)got->indices.data)[2 * i], c = ((int64_t *)got->indices.data)[2 * i + 1];
        assert_true(r >= 0 && r < rows && c >= 0 && c < cols);
        if (i > 0) { /* TensorFlow's order: canonical for a canonical input */
            int64_t pr = ((int64_t *)got->indices.data)[2 * i - 2];
            int64_t pc = ((int64_t *)got->indices.data)[2 * i - 1];
            assert_true(pr < r || (pr == r && pc < c));
        }
        dense[r * cols + c] = ((int64_t *)got->values.data)[i];
    }
    for (int64_t k = 0; k < rows * cols; k++) assert_int_equal(dense[k], want[k]);
    free(dense);
}

static void slice_is(const ndx_sparse_tensor *sp, const int64_t *start, const int64_t *size,
                     int64_t rows, int64_t cols, const int64_t *want) {
    ndx_error err;
    ndx_tensor st = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), start);
    ndx_tensor sz = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), size);
    ndx_sparse_tensor out = {0};
    assert_ok(ndx_sparse_slice(sp, &st, &sz, NULL, &out, &err), &err);
    assert_dense_is(&out, rows, cols, want);
    ndx_sparse_free(&out);
    test_tensor_free(&st);
    test_tensor_free(&sz);
}

#define _ (-1)
static void tf_slice_cases(void **state) {
    (void)state;
    ndx_sparse_tensor sp = sparse_4x6();
    /* testSliceMatrixRows */
    slice_is(&sp, VALS(0, 0), VALS(2, 6), 2, 6,
             VALS(0, _, 2, _, 4, 5, _, 11, _, 13, 14, _));
    slice_is(&sp, VALS(2, 0), VALS(3, 7), 2, 6,
             VALS(20, _, _, 23, _, 25, 30, _, 32, 33, _, 35));
    /* testSliceMatrixUnevenCols */
    slice_is(&sp, VALS(0, 0), VALS(5, 3), 4, 3, VALS(0, _, 2, _, 11, _, 20, _, _, 30, _, 32));
    slice_is(&sp, VALS(0, 3), VALS(5, 2), 4, 2, VALS(_, 4, 13, 14, 23, _, 33, _));
    slice_is(&sp, VALS(0, 5), VALS(5, 2), 4, 1, VALS(5, _, 25, 35));
    /* testSliceMatrixUnevenRows */
    slice_is(&sp, VALS(0, 0), VALS(3, 6), 3, 6,
             VALS(0, _, 2, _, 4, 5, _, 11, _, 13, 14, _, 20, _, _, 23, _, 25));
    slice_is(&sp, VALS(3, 0), VALS(3, 6), 1, 6, VALS(30, _, 32, 33, _, 35));
    /* testSliceAllRows: one row at a time */
    slice_is(&sp, VALS(1, 0), VALS(1, 6), 1, 6, VALS(_, 11, _, 13, 14, _));
    /* past the end: an empty tensor of shape [0, 6]; a box beginning before 0 (TensorFlow
     * keeps its width) */
    slice_is(&sp, VALS(4, 0), VALS(2, 6), 0, 6, VALS(0));
    slice_is(&sp, VALS(-1, 0), VALS(2, 6), 2, 6,
             VALS(_, _, _, _, _, _, 0, _, 2, _, 4, 5));
    test_sparse_free(&sp);
}

static void split_is(const ndx_sparse_tensor *sp, int64_t axis, int num, const int64_t *shapes,
                     const int64_t *const *wants) {
    ndx_error err;
    ndx_sparse_tensor outs[8];
    memset(outs, 0, sizeof outs);
    assert_ok(ndx_sparse_split(axis, num, sp, NULL, outs, &err), &err);
    for (int p = 0; p < num; p++) {
        assert_dense_is(&outs[p], shapes[2 * p], shapes[2 * p + 1], wants[p]);
        ndx_sparse_free(&outs[p]);
    }
}

static void tf_split_cases(void **state) {
    (void)state;
    ndx_sparse_tensor sp = sparse_4x6();
    /* testSplitMatrixRows */
    split_is(&sp, 0, 2, VALS(2, 6, 2, 6),
             (const int64_t *const[]){VALS(0, _, 2, _, 4, 5, _, 11, _, 13, 14, _),
                                      VALS(20, _, _, 23, _, 25, 30, _, 32, 33, _, 35)});
    /* testSplitMatrixUnevenCols: 6 columns in 4 pieces: 2, 2, 1, 1 */
    split_is(&sp, 1, 4, VALS(4, 2, 4, 2, 4, 1, 4, 1),
             (const int64_t *const[]){VALS(0, _, _, 11, 20, _, 30, _), VALS(2, _, _, 13, _, 23, 32, 33),
                                      VALS(4, 14, _, _), VALS(5, _, 25, 35)});
    /* a negative axis, and one piece per row */
    split_is(&sp, -2, 4, VALS(1, 6, 1, 6, 1, 6, 1, 6),
             (const int64_t *const[]){VALS(0, _, 2, _, 4, 5), VALS(_, 11, _, 13, 14, _),
                                      VALS(20, _, _, 23, _, 25), VALS(30, _, 32, 33, _, 35)});
    test_sparse_free(&sp);
    /* tf.sparse.split's documented example: [2, 7] in two along axis 1 */
    ndx_sparse_tensor doc = sparse_of(NDX_INT64, 5, 2, VALS(0, 2, 0, 4, 0, 5, 1, 0, 1, 1),
                                      NDX_INT64, VALS(1, 2, 3, 4, 5), SHAPE(2, 7));
    split_is(&doc, 1, 2, VALS(2, 4, 2, 3),
             (const int64_t *const[]){VALS(_, _, 1, _, 4, 5, _, _), VALS(2, 3, _, _, _, _)});
    test_sparse_free(&doc);
}
#undef _

/* TensorFlow's _SparseTensorValue_5x6 (sparse_reshape_op_test.py). */
static void reshape_is(const int64_t *new_shape, int q, const int64_t *want_idx,
                       const int64_t *want_shape) {
    ndx_error err;
    ndx_tensor idx = test_tensor_from(NDX_INT64, 0, 2, SHAPE(6, 2),
                                      VALS(0, 0, 1, 0, 1, 3, 1, 4, 3, 2, 3, 3));
    ndx_tensor shape = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(5, 6));
    ndx_tensor ns = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){q}, new_shape);
    ndx_tensor oi = {0}, os = {0};
    assert_ok(ndx_sparse_reshape(&idx, &shape, &ns, NULL, &oi, &os, &err), &err);
    assert_int_equal(oi.shape[0], 6);
    assert_int_equal(oi.shape[1], q);
    assert_memory_equal(oi.data, want_idx, (size_t)(6 * q) * 8);
    assert_memory_equal(os.data, want_shape, (size_t)q * 8);
    ndx_tensor_free(&oi);
    ndx_tensor_free(&os);
    test_tensor_free(&idx);
    test_tensor_free(&shape);
    test_tensor_free(&ns);
}

static void tf_reshape_cases(void **state) {
    (void)state;
    /* testSameShape */
    reshape_is(VALS(5, 6), 2, VALS(0, 0, 1, 0, 1, 3, 1, 4, 3, 2, 3, 3), VALS(5, 6));
    /* testFeedNewShapeSameRank, ...WithInferredDim */
    reshape_is(VALS(3, 10), 2, VALS(0, 0, 0, 6, 0, 9, 1, 0, 2, 0, 2, 1), VALS(3, 10));
    reshape_is(VALS(3, -1), 2, VALS(0, 0, 0, 6, 0, 9, 1, 0, 2, 0, 2, 1), VALS(3, 10));
    /* testFeedUpRank, ...WithInferredDim */
    reshape_is(VALS(2, 3, 5), 3,
               VALS(0, 0, 0, 0, 1, 1, 0, 1, 4, 0, 2, 0, 1, 1, 0, 1, 1, 1), VALS(2, 3, 5));
    reshape_is(VALS(2, -1, 5), 3,
               VALS(0, 0, 0, 0, 1, 1, 0, 1, 4, 0, 2, 0, 1, 1, 0, 1, 1, 1), VALS(2, 3, 5));
    /* down to rank 1 */
    reshape_is(VALS(-1), 1, VALS(0, 6, 9, 10, 20, 21), VALS(30));
}

/* ---- randomized, against the references ------------------------------------------------ */

static ndx_dtype random_index_dtype(test_rng *r) {
    static const ndx_dtype kinds[3] = {NDX_INT16, NDX_INT32, NDX_INT64};
    return kinds[rng_below(r, 3)];
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* nnz entries at random places (repeats allowed), in random order or canonical. */
static ndx_sparse_tensor random_sparse(test_rng *r, ndx_dtype vt, int rank, const int64_t *dims,
                                       int64_t nnz) {
    int64_t vol = 1;
    for (int d = 0; d < rank; d++) vol *= dims[d];
    if (vol == 0) nnz = 0;
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(random_index_dtype(r), 0, 2, nnz, rank);
    s.values = test_tensor_v(vt, test_random_width(r, vt), 1, nnz);
    s.dense_shape = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){rank}, dims);
    int sorted = rng_below(r, 2) == 0;
    int64_t *pos = malloc((size_t)(nnz + 1) * sizeof *pos);
    for (int64_t k = 0; k < nnz; k++) pos[k] = rng_below(r, vol);
    if (sorted) qsort(pos, (size_t)nnz, sizeof *pos, cmp_i64);
    for (int64_t k = 0; k < nnz; k++) {
        int64_t rest = pos[k];
        for (int d = rank - 1; d >= 0; d--) {
            test_set_index(&s.indices, k * rank + d, rest % dims[d]);
            rest /= dims[d];
        }
    }
    test_fill_random(r, &s.values);
    free(pos);
    return s;
}

static void random_dims(test_rng *r, int rank, int64_t *dims, int64_t most) {
    for (int d = 0; d < rank; d++) dims[d] = rng_range(r, 0, most);
    if (rng_below(r, 4)) /* mostly no zero dim */
        for (int d = 0; d < rank; d++) dims[d] += dims[d] == 0;
}

static void assert_same_as_reference(const ndx_sparse_tensor *got, const ndx_sparse_tensor *want) {
    char why[REF_WHY];
    if (!ref_sparse_equal(got, want, 0, why)) fail_msg("differs from the reference: %s", why);
    for (int d = 0; d < want->dense_shape.shape[0]; d++)
        assert_int_equal(((int64_t *)got->dense_shape.data)[d], ((int64_t *)want->dense_shape.data)[d]);
}

static void slice_random_case(test_rng *r, ndx_dtype vt, int64_t most_nnz) {
    int rank = (int)rng_range(r, 1, 4);
    int64_t dims[NDX_MAX_RANK], st[NDX_MAX_RANK], sz[NDX_MAX_RANK];
    random_dims(r, rank, dims, 7);
    ndx_sparse_tensor sp = random_sparse(r, vt, rank, dims, rng_range(r, 0, most_nnz));
    for (int d = 0; d < rank; d++) {
        st[d] = rng_range(r, -2, dims[d] + 1);
        sz[d] = rng_range(r, 0, dims[d] + 2);
    }
    ndx_tensor start = test_tensor_v(random_index_dtype(r), 0, 1, rank);
    ndx_tensor size = test_tensor_v(random_index_dtype(r), 0, 1, rank);
    for (int d = 0; d < rank; d++) {
        test_set_index(&start, d, st[d]);
        test_set_index(&size, d, sz[d]);
    }
    ndx_sparse_tensor want, first;
    char why[REF_WHY];
    ndx_error err;
    if (ref_sparse_slice(&sp, &start, &size, &want, why) != REF_OK) fail_msg("reference: %s", why);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_sparse_tensor out = {0};
        assert_ok(ndx_sparse_slice(&sp, &start, &size, &opt, &out, &err), &err);
        assert_same_as_reference(&out, &want);
        if (!keep_first_or_assert_same_sparse(&first, &out, threads)) ndx_sparse_free(&out);
    }
    /* the shape function counts what the op writes */
    ndx_sparse_tensor shaped;
    assert_ok(ndx_sparse_slice_shape(&sp, &start, &size, &shaped, &err), &err);
    assert_int_equal(shaped.indices.shape[0], want.indices.shape[0]);
    assert_null(shaped.indices.data);
    ndx_sparse_free(&first);
    ref_sparse_free(&want);
    test_sparse_free(&sp);
    test_tensor_free(&start);
    test_tensor_free(&size);
}

static void split_random_case(test_rng *r, ndx_dtype vt, int64_t most_nnz) {
    int rank = (int)rng_range(r, 1, 4);
    int64_t dims[NDX_MAX_RANK];
    random_dims(r, rank, dims, 9);
    int axis = (int)rng_below(r, rank);
    if (dims[axis] == 0) dims[axis] = 1;
    ndx_sparse_tensor sp = random_sparse(r, vt, rank, dims, rng_range(r, 0, most_nnz));
    int num = (int)rng_range(r, 1, dims[axis]);
    int64_t given = rng_below(r, 2) ? axis : axis - rank;
    ndx_sparse_tensor want[16], first[16];
    assert_true(num <= 16);
    char why[REF_WHY];
    ndx_error err;
    if (ref_sparse_split(given, num, &sp, want, why) != REF_OK) fail_msg("reference: %s", why);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_sparse_tensor outs[16];
        memset(outs, 0, sizeof outs);
        assert_ok(ndx_sparse_split(given, num, &sp, &opt, outs, &err), &err);
        for (int p = 0; p < num; p++) {
            assert_same_as_reference(&outs[p], &want[p]);
            if (!keep_first_or_assert_same_sparse(&first[p], &outs[p], threads))
                ndx_sparse_free(&outs[p]);
        }
    }
    for (int p = 0; p < num; p++) {
        ndx_sparse_free(&first[p]);
        ref_sparse_free(&want[p]);
    }
    test_sparse_free(&sp);
}

static void reshape_random_case(test_rng *r, int64_t most_nnz) {
    int rank = (int)rng_range(r, 1, 4);
    int64_t dims[NDX_MAX_RANK];
    random_dims(r, rank, dims, 6);
    ndx_sparse_tensor sp = random_sparse(r, NDX_INT8, rank, dims, rng_range(r, 0, most_nnz));
    int64_t vol = 1;
    for (int d = 0; d < rank; d++) vol *= dims[d];
    /* a new shape of the same volume: factor it into q dims, maybe one given as -1 */
    int q = (int)rng_range(r, 1, 4);
    int64_t nd[NDX_MAX_RANK], rest = vol;
    for (int d = 0; d < q - 1; d++) {
        int64_t f = 1;
        for (int64_t c = rng_range(r, 1, 6); c >= 1; c--)
            if (rest % c == 0) {
                f = c;
                break;
            }
        nd[d] = f;
        rest = f ? rest / f : rest;
    }
    nd[q - 1] = rest;
    if (vol > 0 && rng_below(r, 2)) nd[rng_below(r, q)] = -1;
    ndx_tensor ns = test_tensor_v(random_index_dtype(r), 0, 1, q);
    for (int d = 0; d < q; d++) test_set_index(&ns, d, nd[d]);
    ndx_tensor wi, ws, fi, fs;
    char why[REF_WHY];
    ndx_error err;
    if (ref_sparse_reshape(&sp.indices, &sp.dense_shape, &ns, &wi, &ws, why) != REF_OK)
        fail_msg("reference: %s", why);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_tensor oi = {0}, os = {0};
        assert_ok(ndx_sparse_reshape(&sp.indices, &sp.dense_shape, &ns, &opt, &oi, &os, &err),
                  &err);
        assert_tensor_eq(&oi, &wi);
        assert_tensor_eq(&os, &ws);
        if (!keep_first_or_assert_same(&fi, &oi, threads)) ndx_tensor_free(&oi);
        if (!keep_first_or_assert_same(&fs, &os, threads)) ndx_tensor_free(&os);
    }
    ndx_tensor_free(&fi);
    ndx_tensor_free(&fs);
    ref_tensor_free(&wi);
    ref_tensor_free(&ws);
    test_sparse_free(&sp);
    test_tensor_free(&ns);
}

static void slice_random(void **state) {
    (void)state;
    test_rng r = {11};
    for (int k = 0; k < test_all_dtypes_count; k++)
        for (int rep = 0; rep < 25; rep++) slice_random_case(&r, test_all_dtypes[k], 40);
}

static void split_random(void **state) {
    (void)state;
    test_rng r = {12};
    for (int k = 0; k < test_all_dtypes_count; k++)
        for (int rep = 0; rep < 25; rep++) split_random_case(&r, test_all_dtypes[k], 40);
}

static void reshape_random(void **state) {
    (void)state;
    test_rng r = {13};
    for (int rep = 0; rep < 400; rep++) reshape_random_case(&r, 40);
}

/* Sizes past the parallel grain, so 2 and 3 threads split the work. */
static void large_threads(void **state) {
    (void)state;
    test_rng r = {14};
    for (int rep = 0; rep < 3; rep++) {
        slice_random_case(&r, NDX_FLOAT32, 300000);
        split_random_case(&r, NDX_INT64, 300000);
        reshape_random_case(&r, 300000);
    }
}

/* ---- the gradient ------------------------------------------------------------------------ */

static void slice_grad_random(void **state) {
    (void)state;
    test_rng r = {15};
    static const ndx_dtype numeric[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                        NDX_COMPLEX64, NDX_COMPLEX128, NDX_INT8, NDX_INT32,
                                        NDX_INT64, NDX_UINT16, NDX_UINT64};
    for (size_t k = 0; k < sizeof numeric / sizeof *numeric; k++)
        for (int rep = 0; rep < 20; rep++) {
            int rank = (int)rng_range(&r, 1, 3);
            int64_t dims[NDX_MAX_RANK], st[NDX_MAX_RANK], sz[NDX_MAX_RANK];
            random_dims(&r, rank, dims, 6);
            ndx_sparse_tensor sp = random_sparse(&r, NDX_INT8, rank, dims, rng_range(&r, 0, 30));
            ndx_tensor start = test_tensor_v(NDX_INT64, 0, 1, rank);
            ndx_tensor size = test_tensor_v(NDX_INT64, 0, 1, rank);
            for (int d = 0; d < rank; d++) {
                st[d] = rng_range(&r, 0, dims[d]);
                sz[d] = rng_range(&r, 0, dims[d] + 1);
                test_set_index(&start, d, st[d]);
                test_set_index(&size, d, sz[d]);
            }
            ndx_error err;
            ndx_sparse_tensor sliced = {0};
            assert_ok(ndx_sparse_slice(&sp, &start, &size, NULL, &sliced, &err), &err);
            int64_t m = sliced.indices.shape[0];
            ndx_tensor grad = test_tensor_v(numeric[k], 0, 1, m);
            test_fill_random(&r, &grad);
            ndx_tensor want, got = {0};
            char why[REF_WHY];
            if (ref_sparse_slice_grad(&grad, &sp.indices, &start, &sliced.indices, &want, why) !=
                REF_OK)
                fail_msg("reference: %s", why);
            assert_ok(ndx_sparse_slice_grad(&grad, &sp.indices, &start, &sliced.indices, NULL,
                                            &got, &err),
                      &err);
            assert_tensor_eq(&got, &want);
            ndx_tensor_free(&got);
            ref_tensor_free(&want);
            test_tensor_free(&grad);
            ndx_sparse_free(&sliced);
            test_sparse_free(&sp);
            test_tensor_free(&start);
            test_tensor_free(&size);
        }
}

/* TensorFlow's sparse_slice_op_test testGradients, by hand: the 4x6 input sliced to rows 1..2,
 * columns 2..5; each kept entry gets its gradient, the others 0. */
static void slice_grad_example(void **state) {
    (void)state;
    ndx_sparse_tensor sp = sparse_4x6();
    ndx_tensor start = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(1, 2));
    ndx_tensor size = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(2, 4));
    ndx_error err;
    ndx_sparse_tensor sliced = {0};
    assert_ok(ndx_sparse_slice(&sp, &start, &size, NULL, &sliced, &err), &err);
    assert_int_equal(sliced.indices.shape[0], 4); /* 13, 14, 23, 25 */
    double g[4] = {1.5, -2, 3, 4.25};
    ndx_tensor grad = test_tensor_from(NDX_FLOAT64, 0, 1, SHAPE(4), g), out = {0};
    assert_ok(ndx_sparse_slice_grad(&grad, &sp.indices, &start, &sliced.indices, NULL, &out, &err),
              &err);
    double want[14] = {0, 0, 0, 0, 0, 1.5, -2, 0, 3, 4.25, 0, 0, 0, 0};
    assert_memory_equal(out.data, want, sizeof want);
    /* an output entry that no input entry matches (in order) fails, leaving out untouched */
    test_guard gd = test_guard_fill(&out, 0x77);
    int64_t *oi = sliced.indices.data;
    int64_t t0 = oi[0], t1 = oi[1];
    oi[0] = oi[2];
    oi[1] = oi[3];
    oi[2] = t0;
    oi[3] = t1;
    assert_fails(ndx_sparse_slice_grad(&grad, &sp.indices, &start, &sliced.indices, NULL, &out,
                                       &err),
                 &err, NDX_E_INVALID_ARGUMENT, "sparse_slice_grad: output_indices[");
    assert_untouched(&gd, &out);
    gd = test_guard_take(&out);
    ndx_tensor bools = test_tensor_v(NDX_BOOL, 0, 1, 4);
    assert_fails(ndx_sparse_slice_grad(&bools, &sp.indices, &start, &sliced.indices, NULL, &out,
                                       &err),
                 &err, NDX_E_INVALID_ARGUMENT, "backprop_val_grad must be numeric, not bool");
    ndx_tensor short_grad = test_tensor_v(NDX_FLOAT64, 0, 1, 3);
    assert_fails(ndx_sparse_slice_grad(&short_grad, &sp.indices, &start, &sliced.indices, NULL,
                                       &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT,
                 "backprop_val_grad has 3 elements but output_indices has 4 rows");
    assert_untouched(&gd, &out);
    ndx_tensor_free(&out);
    test_tensor_free(&bools);
    test_tensor_free(&short_grad);
    test_tensor_free(&grad);
    ndx_sparse_free(&sliced);
    test_sparse_free(&sp);
    test_tensor_free(&start);
    test_tensor_free(&size);
}

/* ---- errors: TensorFlow's, each before the first write ---------------------------------- */

typedef struct {
    ndx_sparse_tensor out;
    test_guard g[3];
} guarded;

static guarded guard_new(int64_t nnz, int rank) {
    guarded x;
    x.out.indices = test_tensor_v(NDX_INT64, 0, 2, nnz, rank);
    x.out.values = test_tensor_v(NDX_INT64, 0, 1, nnz);
    x.out.dense_shape = test_tensor_v(NDX_INT64, 0, 1, rank);
    x.g[0] = test_guard_fill(&x.out.indices, 0xa5);
    x.g[1] = test_guard_fill(&x.out.values, 0x5a);
    x.g[2] = test_guard_fill(&x.out.dense_shape, 0x3c);
    return x;
}

/* Checks the outputs and takes their bytes again (a guard checks once). */
static void guard_check(guarded *x) {
    assert_untouched(&x->g[0], &x->out.indices);
    assert_untouched(&x->g[1], &x->out.values);
    assert_untouched(&x->g[2], &x->out.dense_shape);
    x->g[0] = test_guard_take(&x->out.indices);
    x->g[1] = test_guard_take(&x->out.values);
    x->g[2] = test_guard_take(&x->out.dense_shape);
}

static void guard_del(guarded *x) {
    assert_untouched(&x->g[0], &x->out.indices);
    assert_untouched(&x->g[1], &x->out.values);
    assert_untouched(&x->g[2], &x->out.dense_shape);
    test_sparse_free(&x->out);
}

static void slice_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor sp = sparse_4x6();
    ndx_tensor start = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(0, 0));
    ndx_tensor size = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(2, -1));
    guarded x = guard_new(14, 2);
    assert_fails(ndx_sparse_slice(&sp, &start, &size, NULL, &x.out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_slice: size[1] = -1 is negative");
    guard_check(&x);
    ((int64_t *)size.data)[1] = 3;
    ndx_tensor three = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), VALS(0, 0, 0));
    assert_fails(ndx_sparse_slice(&sp, &three, &size, NULL, &x.out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_slice: start has 3 elements but the input has rank 2");
    assert_fails(ndx_sparse_slice(&sp, &start, &three, NULL, &x.out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_slice: size has 3 elements");
    ndx_tensor fl = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    assert_fails(ndx_sparse_slice(&sp, &fl, &size, NULL, &x.out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "start");
    ((int64_t *)sp.indices.data)[5] = 6; /* entry 2 = [0, 6] */
    assert_fails(ndx_sparse_slice(&sp, &start, &size, NULL, &x.out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "sparse_slice: sp.indices[2] = [0, 6] is outside dense_shape [4, 6]");
    ((int64_t *)sp.indices.data)[5] = 4;
    /* a caller's output of the wrong size: nothing written */
    assert_fails(ndx_sparse_slice(&sp, &start, &size, NULL, &x.out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out.indices");
    ndx_options tiny = {.max_memory = 64};
    assert_fails(ndx_sparse_slice(&sp, &start, &size, &tiny, &x.out, &err), &err,
                 NDX_E_MEMORY_BUDGET, NULL);
    assert_fails(ndx_sparse_slice(&sp, &start, &size, NULL, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out is NULL");
    guard_del(&x);
    /* the entry count fits the caller's buffers: accepted */
    x = guard_new(3, 2);
    assert_ok(ndx_sparse_slice(&sp, &start, &size, NULL, &x.out, &err), &err);
    for (int k = 0; k < 3; k++) free(x.g[k].copy); /* written, as it should be */
    test_sparse_free(&x.out);
    test_tensor_free(&three);
    test_tensor_free(&fl);
    test_tensor_free(&start);
    test_tensor_free(&size);
    test_sparse_free(&sp);
}

static void split_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor sp = sparse_4x6();
    guarded x[7];
    ndx_sparse_tensor outs[7];
    for (int p = 0; p < 7; p++) {
        x[p] = guard_new(14, 2);
        outs[p] = x[p].out;
    }
    assert_fails(ndx_sparse_split(2, 2, &sp, NULL, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_split: axis 2 is out of range [-2, 2) for an input of rank 2");
    assert_fails(ndx_sparse_split(-3, 2, &sp, NULL, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "axis -3 is out of range");
    assert_fails(ndx_sparse_split(1, 7, &sp, NULL, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_split: num_split = 7 must be between 1 and the size of the split "
                 "dimension, dense_shape[1] = 6");
    assert_fails(ndx_sparse_split(1, 0, &sp, NULL, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "num_split = 0 must be at least 1");
    ((int64_t *)sp.indices.data)[0] = 9;
    assert_fails(ndx_sparse_split(0, 2, &sp, NULL, outs, &err), &err, NDX_E_OUT_OF_RANGE,
                 "sparse_split: sp.indices[0] = [9, 0] is outside dense_shape [4, 6]");
    ((int64_t *)sp.indices.data)[0] = 0;
    /* the second output does not fit: the first, already checked, is left as it was too */
    ndx_sparse_tensor mixed[2];
    memset(&mixed[0], 0, sizeof mixed[0]);
    mixed[1] = x[1].out;
    assert_fails(ndx_sparse_split(0, 2, &sp, NULL, mixed, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out.indices");
    assert_null(mixed[0].indices.data);
    assert_fails(ndx_sparse_split(0, 2, &sp, NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "outs is NULL");
    for (int p = 0; p < 7; p++) guard_del(&x[p]);
    test_sparse_free(&sp);
}

static void reshape_fails(const int64_t *new_shape, int q, ndx_status code, const char *needle) {
    ndx_error err;
    ndx_tensor idx = test_tensor_from(NDX_INT64, 0, 2, SHAPE(6, 2),
                                      VALS(0, 0, 1, 0, 1, 3, 1, 4, 3, 2, 3, 3));
    ndx_tensor shape = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(5, 6));
    ndx_tensor ns = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){q}, new_shape);
    ndx_tensor oi = test_tensor_v(NDX_INT64, 0, 2, 6, q), os = test_tensor_v(NDX_INT64, 0, 1, q);
    test_guard gi = test_guard_fill(&oi, 0x11), gs = test_guard_fill(&os, 0x22);
    ndx_status st = ndx_sparse_reshape(&idx, &shape, &ns, NULL, &oi, &os, &err);
    if (st == NDX_OK) fail_msg("accepted: %s", needle);
    assert_fails(st, &err, code, needle);
    assert_untouched(&gi, &oi);
    assert_untouched(&gs, &os);
    test_tensor_free(&oi);
    test_tensor_free(&os);
    test_tensor_free(&idx);
    test_tensor_free(&shape);
    test_tensor_free(&ns);
}

static void reshape_errors(void **state) {
    (void)state;
    /* testFeedMultipleInferredDims, testFeedMismatchedSizes, ...WithInferredDim */
    reshape_fails(VALS(4, -1, -1), 3, NDX_E_INVALID_ARGUMENT,
                  "sparse_reshape: only one dimension of new_shape may be -1, not both 1 and 2");
    reshape_fails(VALS(4, 7), 2, NDX_E_INVALID_ARGUMENT,
                  "sparse_reshape: the input is a SparseTensor with 30 dense values, but new_shape "
                  "[4, 7] has 28 (input_shape [5, 6])");
    reshape_fails(VALS(4, -1), 2, NDX_E_INVALID_ARGUMENT,
                  "new_shape [4, -1] requires a multiple of 4");
    reshape_fails(VALS(0, -1), 2, NDX_E_INVALID_ARGUMENT,
                  "cannot infer the -1 of new_shape [0, -1] for an empty tensor");
    reshape_fails(VALS(30, -3), 2, NDX_E_INVALID_ARGUMENT,
                  "new_shape[1] = -3 must be non-negative");
    reshape_fails(VALS(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 30), NDX_MAX_RANK + 1,
                  NDX_E_INVALID_ARGUMENT, "new_shape has 17 elements: a SparseTensor has rank 1 to 16");
    reshape_fails(VALS(INT64_MAX, 4, 0), 3, NDX_E_OVERFLOW, "new_shape has more elements");
    /* an index outside input_shape */
    ndx_error err;
    ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 2, 2, 2);
    for (int k = 0; k < 4; k++) test_set_index(&idx, k, VALS(0, 0, 5, 1)[k]);
    ndx_tensor shape = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(5, 6));
    ndx_tensor ns = test_tensor_from(NDX_INT64, 0, 1, SHAPE(1), VALS(30));
    ndx_tensor oi = test_tensor_v(NDX_INT64, 0, 2, 2, 1), os = test_tensor_v(NDX_INT64, 0, 1, 1);
    test_guard gi = test_guard_fill(&oi, 0x11), gs = test_guard_fill(&os, 0x22);
    assert_fails(ndx_sparse_reshape(&idx, &shape, &ns, NULL, &oi, &os, &err), &err,
                 NDX_E_OUT_OF_RANGE,
                 "sparse_reshape: input_indices[1] = [5, 1] is outside input_shape [5, 6]");
    ((int64_t *)shape.data)[1] = -6;
    assert_fails(ndx_sparse_reshape(&idx, &shape, &ns, NULL, &oi, &os, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_reshape: input_shape[1] = -6 is negative");
    ((int64_t *)shape.data)[1] = 6;
    ndx_tensor three = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), VALS(5, 6, 1));
    assert_fails(ndx_sparse_reshape(&idx, &three, &ns, NULL, &oi, &os, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "sparse_reshape: input_indices has 2 columns but input_shape has 3 elements");
    ndx_tensor fl = test_tensor_v(NDX_FLOAT32, 0, 1, 1);
    assert_fails(ndx_sparse_reshape(&idx, &shape, &fl, NULL, &oi, &os, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "new_shape");
    assert_fails(ndx_sparse_reshape(&idx, &shape, &ns, NULL, &oi, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "output_shape is NULL");
    ndx_options tiny = {.max_memory = 8};
    ((int32_t *)idx.data)[2] = 4;
    ndx_tensor big = test_tensor_v(NDX_INT64, 0, 2, 5000, 2);
    memset(big.data, 0, test_nbytes(&big));
    assert_fails(ndx_sparse_reshape(&big, &shape, &ns, &tiny, &oi, &os, &err), &err,
                 NDX_E_MEMORY_BUDGET, NULL);
    assert_untouched(&gi, &oi);
    assert_untouched(&gs, &os);
    /* now valid: written */
    assert_ok(ndx_sparse_reshape(&idx, &shape, &ns, NULL, &oi, &os, &err), &err);
    assert_int_equal(((int64_t *)oi.data)[1], 25);
    test_tensor_free(&big);
    test_tensor_free(&fl);
    test_tensor_free(&three);
    test_tensor_free(&oi);
    test_tensor_free(&os);
    test_tensor_free(&idx);
    test_tensor_free(&shape);
    test_tensor_free(&ns);
}

/* Infer on partial specs agrees with the op. */
static void infer_partial(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_spec sp = {ndx_spec_make(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 3)),
                          ndx_spec_make(NDX_FLOAT32, 1, SHAPE(NDX_UNKNOWN)),
                          ndx_spec_make(NDX_INT64, 1, SHAPE(NDX_UNKNOWN))};
    ndx_spec v3 = ndx_spec_make(NDX_INT64, 1, SHAPE(3)), v2 = ndx_spec_make(NDX_INT32, 1, SHAPE(2));
    ndx_sparse_spec out, outs[3];
    assert_ok(ndx_sparse_slice_infer(&sp, &v3, &v3, &out, &err), &err);
    assert_int_equal(out.indices.shape[1], 3);
    assert_int_equal(out.indices.shape[0], NDX_UNKNOWN);
    assert_int_equal(out.values.dtype, NDX_FLOAT32);
    assert_fails(ndx_sparse_slice_infer(&sp, &v2, &v3, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "start has 2 elements but the input has rank 3");
    assert_ok(ndx_sparse_split_infer(-1, 3, &sp, outs, &err), &err);
    assert_int_equal(outs[2].dense_shape.shape[0], 3);
    assert_fails(ndx_sparse_split_infer(3, 3, &sp, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "axis 3 is out of range [-3, 3)");
    ndx_spec oi, os;
    ndx_spec ns = ndx_spec_make(NDX_INT64, 1, SHAPE(2));
    assert_ok(ndx_sparse_reshape_infer(&sp.indices, &sp.dense_shape, &ns, &oi, &os, &err), &err);
    assert_int_equal(oi.shape[1], 2);
    assert_int_equal(os.shape[0], 2);
    ndx_spec g = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(NDX_UNKNOWN)), gi;
    assert_ok(ndx_sparse_slice_grad_infer(&g, &sp.indices, &v3, &sp.indices, &gi, &err), &err);
    assert_int_equal(gi.dtype, NDX_FLOAT64);
}

/* ---- sparse_transpose ---------------------------------------------------------------------- */

static void transpose_random_case(test_rng *r, ndx_dtype vt, int64_t most_nnz) {
    int rank = (int)rng_range(r, 1, 4);
    int64_t dims[NDX_MAX_RANK];
    random_dims(r, rank, dims, 7);
    ndx_sparse_tensor sp = random_sparse(r, vt, rank, dims, rng_range(r, 0, most_nnz));
    ndx_tensor perm = test_tensor_v(random_index_dtype(r), 0, 1, rank);
    int p[NDX_MAX_RANK];
    for (int d = 0; d < rank; d++) p[d] = d;
    for (int d = rank - 1; d > 0; d--) {
        int j = (int)rng_below(r, d + 1), t = p[d];
        p[d] = p[j];
        p[j] = t;
    }
    for (int d = 0; d < rank; d++) test_set_index(&perm, d, p[d]);
    int reversed = rng_below(r, 4) == 0; /* perm NULL */
    ndx_sparse_tensor want, first;
    char why[REF_WHY];
    ndx_error err;
    if (ref_sparse_transpose(&sp, reversed ? NULL : &perm, &want, why) != REF_OK)
        fail_msg("reference: %s", why);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_sparse_tensor out = {0};
        assert_ok(ndx_sparse_transpose(&sp, reversed ? NULL : &perm, &opt, &out, &err), &err);
        assert_same_as_reference(&out, &want);
        if (!keep_first_or_assert_same_sparse(&first, &out, threads)) ndx_sparse_free(&out);
    }
    ndx_sparse_free(&first);
    ref_sparse_free(&want);
    test_sparse_free(&sp);
    test_tensor_free(&perm);
}

static void transpose_random(void **state) {
    (void)state;
    test_rng r = {16};
    for (int k = 0; k < test_all_dtypes_count; k++)
        for (int rep = 0; rep < 25; rep++) transpose_random_case(&r, test_all_dtypes[k], 40);
    for (int rep = 0; rep < 3; rep++) transpose_random_case(&r, NDX_FLOAT64, 300000);
}

/* TensorFlow's sparse_ops_test SparseTransposeTest: a [2, 3] tensor transposed is its dense
 * transpose, in canonical order. */
static void transpose_example_and_errors(void **state) {
    (void)state;
    ndx_sparse_tensor sp = sparse_4x6();
    ndx_sparse_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_sparse_transpose(&sp, NULL, NULL, &out, &err), &err);
    assert_int_equal(((int64_t *)out.dense_shape.data)[0], 6);
    int64_t *idx = out.indices.data, *val = out.values.data;
    for (int64_t i = 0; i < 14; i++) {
        /* the entry at [r, c] of the input holds 10 r + c */
        assert_int_equal(val[i], 10 * idx[2 * i + 1] + idx[2 * i]);
        if (i) assert_true(idx[2 * i - 2] < idx[2 * i] ||
                           (idx[2 * i - 2] == idx[2 * i] && idx[2 * i - 1] < idx[2 * i + 1]));
    }
    ndx_sparse_free(&out);
    guarded x = guard_new(14, 2);
    ndx_tensor bad = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(1, 1));
    assert_fails(ndx_sparse_transpose(&sp, &bad, NULL, &x.out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_transpose: perm [1, 1] is not a permutation of [0, 2)");
    ndx_tensor three = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), VALS(0, 1, 2));
    assert_fails(ndx_sparse_transpose(&sp, &three, NULL, &x.out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_transpose: perm has 3 elements but the input has rank 2");
    ((int64_t *)sp.indices.data)[3] = 6;
    assert_fails(ndx_sparse_transpose(&sp, NULL, NULL, &x.out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "sparse_transpose: sp.indices[1] = [0, 6] is outside dense_shape [4, 6]");
    guard_del(&x);
    test_tensor_free(&bad);
    test_tensor_free(&three);
    test_sparse_free(&sp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tf_slice_cases),    cmocka_unit_test(tf_split_cases),
        cmocka_unit_test(tf_reshape_cases),  cmocka_unit_test(slice_random),
        cmocka_unit_test(split_random),      cmocka_unit_test(reshape_random),
        cmocka_unit_test(large_threads),     cmocka_unit_test(slice_grad_random),
        cmocka_unit_test(slice_grad_example), cmocka_unit_test(slice_errors),
        cmocka_unit_test(split_errors),      cmocka_unit_test(reshape_errors),
        cmocka_unit_test(infer_partial),     cmocka_unit_test(transpose_random),
        cmocka_unit_test(transpose_example_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
