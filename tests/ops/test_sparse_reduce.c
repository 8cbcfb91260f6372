/* test_sparse_reduce.c — sparse_reduce (sum, max; dense and sparse output) and sparse_softmax
 * (ndx.h 5d2): TensorFlow's documented examples and kernel-test cases, randomized inputs over
 * every dtype, index dtype, rank, axes and order against the naive reference
 * (tests/reference/reference_sparse_reduce.c), 1, 2 and 3 threads bitwise alike, and every error
 * with the output untouched. */
#include "ndx_test.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>

/* ---- building inputs ----------------------------------------------------------------------- */

static ndx_sparse_tensor sparse_of(ndx_dtype vt, ndx_dtype it, int rank, const int64_t *dims,
                                   int64_t nnz, const int64_t *coords, const double *values) {
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(it, 0, 2, nnz, rank);
    s.values = test_tensor_v(vt, 0, 1, nnz);
    s.dense_shape = test_tensor_v(NDX_INT64, 0, 1, rank);
    for (int d = 0; d < rank; d++) ((int64_t *)s.dense_shape.data)[d] = dims[d];
    for (int64_t i = 0; i < nnz * rank && coords; i++) test_set_index(&s.indices, i, coords[i]);
    for (int64_t i = 0; i < nnz && values; i++) {
        unsigned char *e = (unsigned char *)s.values.data + i * s.values.itemsize;
        switch (vt) {
        case NDX_INT32: *(int32_t *)e = (int32_t)values[i]; break;
        case NDX_INT64: *(int64_t *)e = (int64_t)values[i]; break;
        case NDX_FLOAT32: *(float *)e = (float)values[i]; break;
        case NDX_FLOAT64: *(double *)e = values[i]; break;
        default: fail_msg("sparse_of: dtype");
        }
    }
    return s;
}

static ndx_tensor axes_of(int n, const int64_t *axes) {
    ndx_tensor t = test_tensor_v(NDX_INT32, 0, 1, n);
    for (int i = 0; i < n; i++) ((int32_t *)t.data)[i] = (int32_t)axes[i];
    return t;
}

/* Fractional floats (so a sum in another order shows), integers as test_fill_random gives. */
static void fill_values(test_rng *r, ndx_tensor *t) {
    test_fill_random(r, t);
    int64_t n = test_count(t);
    for (int64_t i = 0; i < n; i++) {
        double v = (double)rng_range(r, -100000, 100000) / 977.0;
        if (t->dtype == NDX_FLOAT32) ((float *)t->data)[i] = (float)v;
        if (t->dtype == NDX_FLOAT64) ((double *)t->data)[i] = v * 1.0000001;
        if (t->dtype == NDX_COMPLEX64) ((float *)t->data)[2 * i] = (float)v;
        if (t->dtype == NDX_COMPLEX128) ((double *)t->data)[2 * i] = v;
    }
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A random SparseTensor: coordinates drawn with repeats (dup) or distinct-ish, sorted or not. */
static ndx_sparse_tensor random_sparse(test_rng *r, ndx_dtype vt, ndx_dtype it, int rank,
                                       const int64_t *dims, int64_t nnz, int sorted) {
    int64_t vol = 1;
    for (int d = 0; d < rank; d++) vol *= dims[d];
    if (vol == 0) nnz = 0;
    ndx_sparse_tensor s = sparse_of(vt, it, rank, dims, nnz, NULL, NULL);
    int64_t *flat = malloc((size_t)(nnz ? nnz : 1) * sizeof *flat);
    for (int64_t i = 0; i < nnz; i++) flat[i] = rng_below(r, vol);
    if (sorted) qsort(flat, (size_t)nnz, sizeof *flat, cmp_i64);
    for (int64_t i = 0; i < nnz; i++)
        for (int d = rank - 1; d >= 0; d--) {
            int64_t c = flat[i];
            for (int k = rank - 1; k > d; k--) c /= dims[k];
            test_set_index(&s.indices, i * rank + d, c % dims[d]);
        }
    free(flat);
    fill_values(r, &s.values);
    return s;
}

/* Asserts that a failed call left every byte of t as the pattern it was filled with. */
static void assert_pattern(const ndx_tensor *t, unsigned char pattern) {
    const unsigned char *p = t->data;
    for (size_t i = 0; i < test_nbytes(t); i++)
        if (p[i] != pattern) fail_msg("a failed call wrote to its output (byte %zu)", i);
}

static ndx_tensor dense_out(const ndx_tensor *like) {
    ndx_tensor t = test_tensor(like->dtype, 0, like->rank, like->shape);
    return t;
}

/* ---- TensorFlow's examples ----------------------------------------------------------------- */

/* tf.sparse.reduce_sum's documented example: x = [[1, ?, 1], [?, 1, ?]]. */
static void test_reduce_sum_tf_doc(void **state) {
    (void)state;
    ndx_sparse_tensor x = sparse_of(NDX_INT32, NDX_INT64, 2, SHAPE(2, 3), 3,
                                    VALS(0, 0, 0, 2, 1, 1), (const double[]){1, 1, 1});
    ndx_error err;
    struct {
        int n;
        int64_t axes[2];
        int keep, all;
        int rank;
        int64_t shape[2];
        int32_t want[3];
    } cases[] = {
        {0, {0}, 0, 1, 0, {0}, {3}},           /* reduce_sum(x) */
        {1, {0}, 0, 0, 1, {3}, {1, 1, 1}},      /* axis 0 */
        {1, {1}, 0, 0, 1, {2}, {2, 1}},         /* axis 1 */
        {1, {1}, 1, 0, 2, {2, 1}, {2, 1}},      /* axis 1, keepdims */
        {2, {0, 1}, 0, 0, 0, {0}, {3}},         /* axis [0, 1] */
        {1, {-1}, 0, 0, 1, {2}, {2, 1}},        /* negative axis */
        {2, {1, 1}, 0, 0, 1, {2}, {2, 1}},      /* an axis twice: TensorFlow's kernel takes it */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ndx_tensor axes = axes_of(cases[c].n, cases[c].axes);
        ndx_tensor out = {0};
        assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, cases[c].all ? NULL : &axes,
                                    cases[c].keep, NULL, &out, &err), &err);
        assert_int_equal(out.rank, cases[c].rank);
        for (int d = 0; d < out.rank; d++) assert_int_equal(out.shape[d], cases[c].shape[d]);
        for (int64_t i = 0; i < test_count(&out); i++)
            assert_int_equal(((int32_t *)out.data)[i], cases[c].want[i]);
        ndx_tensor_free(&out);
        test_tensor_free(&axes);
    }
    test_sparse_free(&x);
}

/* tf.sparse.reduce_max's documented examples: x = [[1, ?, 2], [?, 3, ?]], and the trap:
 * x = [[-7, ?], [4, 3], [?, ?]] gives [-7, 4, 0] over axis 1 (implicit zeros take no part; a
 * row with no entry is 0). */
static void test_reduce_max_tf_doc(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor x = sparse_of(NDX_INT32, NDX_INT64, 2, SHAPE(2, 3), 3,
                                    VALS(0, 0, 0, 2, 1, 1), (const double[]){1, 2, 3});
    ndx_tensor a0 = axes_of(1, VALS(0)), a1 = axes_of(1, VALS(1)), out = {0};
    assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_MAX, &x, NULL, 0, NULL, &out, &err), &err);
    assert_int_equal(((int32_t *)out.data)[0], 3);
    ndx_tensor_free(&out);
    assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_MAX, &x, &a0, 0, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((int32_t[]){1, 3, 2}), 12);
    ndx_tensor_free(&out);
    assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_MAX, &x, &a1, 1, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_memory_equal(out.data, ((int32_t[]){2, 3}), 8);
    ndx_tensor_free(&out);
    test_sparse_free(&x);

    ndx_sparse_tensor y = sparse_of(NDX_FLOAT32, NDX_INT64, 2, SHAPE(3, 2), 3,
                                    VALS(0, 0, 1, 0, 1, 1), (const double[]){-7, 4, 3});
    assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_MAX, &y, &a1, 0, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){-7, 4, 0}), 12);
    ndx_tensor_free(&out);
    /* The sparse form: only the rows some entry reaches. */
    ndx_sparse_tensor s = {0};
    assert_ok(ndx_sparse_reduce_sparse(NDX_SPARSE_REDUCE_MAX, &y, &a1, 0, NULL, &s, &err), &err);
    assert_int_equal(s.indices.shape[0], 2);
    assert_memory_equal(s.indices.data, ((int64_t[]){0, 1}), 16);
    assert_memory_equal(s.values.data, ((float[]){-7, 4}), 8);
    assert_memory_equal(s.dense_shape.data, ((int64_t[]){3}), 8);
    ndx_sparse_free(&s);
    /* Entries of -inf: their max is -inf, not the lowest finite value. */
    ((float *)y.values.data)[1] = -INFINITY;
    ((float *)y.values.data)[2] = -INFINITY;
    assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_MAX, &y, &a1, 0, NULL, &out, &err), &err);
    assert_true(isinf(((float *)out.data)[1]) && ((float *)out.data)[1] < 0);
    ndx_tensor_free(&out);
    test_sparse_free(&y);
    test_tensor_free(&a0);
    test_tensor_free(&a1);
}

/* A group of one -0.0 sums to +0.0, as TensorFlow's Eigen sum (0 + -0.0), whether the entries
 * come in the reduction's order, canonical or shuffled. */
static void test_reduce_sum_negative_zero(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor x = sparse_of(NDX_FLOAT64, NDX_INT64, 2, SHAPE(2, 2), 2, VALS(0, 1, 1, 0),
                                    (const double[]){-0.0, -0.0});
    for (int axis = 0; axis < 2; axis++)
        for (int form = 0; form < 2; form++) {
            ndx_tensor axes = axes_of(1, (int64_t[]){axis}), out = {0};
            if (form) { /* shuffled: the sorting path */
                int64_t *i = x.indices.data;
                int64_t t0 = i[0], t1 = i[1];
                i[0] = i[2], i[1] = i[3], i[2] = t0, i[3] = t1;
            }
            assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &axes, 0, NULL, &out, &err),
                      &err);
            for (int k = 0; k < 2; k++) assert_false(signbit(((double *)out.data)[k]));
            ndx_tensor_free(&out);
            ndx_sparse_tensor s = {0};
            assert_ok(ndx_sparse_reduce_sparse(NDX_SPARSE_REDUCE_SUM, &x, &axes, 0, NULL, &s,
                                               &err), &err);
            for (int k = 0; k < 2; k++) assert_false(signbit(((double *)s.values.data)[k]));
            ndx_sparse_free(&s);
            test_tensor_free(&axes);
        }
    test_sparse_free(&x);
}

/* sparse_ops_test.py's SparseReduceTest input, 3-D with keepdims through the sparse form:
 * x = [[[?, 1], [2, ?]], [[?, ?], [3, 4]]] (shape [2, 2, 2]), indices unsorted. */
static void test_reduce_sparse_keepdims(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor x = sparse_of(NDX_INT64, NDX_INT32, 3, SHAPE(2, 2, 2), 4,
                                    VALS(1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0),
                                    (const double[]){4, 1, 3, 2});
    ndx_tensor axes = axes_of(1, VALS(-2));
    ndx_sparse_tensor s = {0};
    assert_ok(ndx_sparse_reduce_sparse(NDX_SPARSE_REDUCE_SUM, &x, &axes, 1, NULL, &s, &err), &err);
    /* dense [[[2, 1]], [[3, 4]]]: every element reached */
    assert_int_equal(s.indices.shape[0], 4);
    assert_memory_equal(s.indices.data, ((int64_t[]){0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1}), 96);
    assert_memory_equal(s.values.data, ((int64_t[]){2, 1, 3, 4}), 32);
    assert_memory_equal(s.dense_shape.data, ((int64_t[]){2, 1, 2}), 24);
    ndx_sparse_free(&s);
    test_tensor_free(&axes);
    test_sparse_free(&x);
}

/* tf.sparse.softmax's documented example: shape [2, 2, 2], values
 * [[[0, e], [1, 0]], [[e, 0], [e, e]]] where nonzero → [[[?, 1], [1, ?]], [[1, ?], [.5, .5]]]. */
static void test_softmax_tf_doc(void **state) {
    (void)state;
    ndx_error err;
    double e = exp(1.0);
    ndx_sparse_tensor x = sparse_of(NDX_FLOAT64, NDX_INT64, 3, SHAPE(2, 2, 2), 5,
                                    VALS(0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1),
                                    (const double[]){e, 1, e, e, e});
    ndx_tensor out = {0};
    assert_ok(ndx_sparse_softmax(&x, NULL, &out, &err), &err);
    const double want[5] = {1, 1, 1, .5, .5};
    for (int i = 0; i < 5; i++) assert_true(fabs(((double *)out.data)[i] - want[i]) < 1e-15);
    ndx_tensor_free(&out);
    test_sparse_free(&x);
}

/* SparseSoftmaxTest's check: against a dense softmax with the implicit zeros masked out, in
 * float64, on random canonical inputs; and the reference bitwise. */
static void test_softmax_random(void **state) {
    (void)state;
    test_rng r = {17};
    ndx_error err;
    for (int trial = 0; trial < 150; trial++) {
        int rank = (int)rng_range(&r, 2, 4);
        int64_t dims[4];
        for (int d = 0; d < rank; d++) dims[d] = rng_range(&r, 1, 5);
        ndx_dtype vt = rng_below(&r, 2) ? NDX_FLOAT32 : NDX_FLOAT64;
        int sorted = trial % 3 != 0;
        ndx_sparse_tensor x = random_sparse(&r, vt, rng_below(&r, 2) ? NDX_INT64 : NDX_INT32,
                                            rank, dims, rng_range(&r, 0, 40), sorted);
        ndx_tensor want = {0}, first = {0};
        char why[REF_WHY];
        assert_int_equal(ref_sparse_softmax(&x, &want, why), REF_OK);
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_tensor out = {0};
            assert_ok(ndx_sparse_softmax(&x, &opt, &out, &err), &err);
            assert_tensor_eq(&out, &want);
            if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
        }
        /* Each group sums to 1. */
        int64_t n = x.indices.shape[0];
        for (int64_t b = 0; b < n;) {
            int64_t e = b + 1;
            while (e < n) {
                int same = 1;
                for (int d = 0; d < rank - 1; d++)
                    same &= test_get_index(&x.indices, e * rank + d) ==
                            test_get_index(&x.indices, (e - 1) * rank + d);
                if (!same) break;
                e++;
            }
            double sum = 0;
            for (int64_t i = b; i < e; i++)
                sum += vt == NDX_FLOAT32 ? ((float *)first.data)[i] : ((double *)first.data)[i];
            assert_true(fabs(sum - 1) < 1e-5);
            b = e;
        }
        ndx_tensor_free(&first);
        ref_tensor_free(&want);
        test_sparse_free(&x);
    }
}

/* ---- randomized against the reference -------------------------------------------------------- */

static int reducible(ndx_sparse_reduce_op op, ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT ||
           (k == NDX_KIND_COMPLEX && op == NDX_SPARSE_REDUCE_SUM);
}

static void check_random(test_rng *r, ndx_sparse_reduce_op op, ndx_dtype vt, int64_t max_nnz,
                         int64_t max_dim) {
    static const ndx_dtype index_types[3] = {NDX_INT16, NDX_INT32, NDX_INT64};
    ndx_error err;
    char why[REF_WHY];
    int rank = (int)rng_range(r, 1, 4);
    int64_t dims[4];
    for (int d = 0; d < rank; d++) dims[d] = rng_range(r, rng_below(r, 8) ? 1 : 0, max_dim);
    int sorted = rng_below(r, 2);
    ndx_sparse_tensor x = random_sparse(r, vt, index_types[rng_below(r, 3)], rank, dims,
                                        rng_range(r, 0, max_nnz), sorted);
    int64_t axes_v[8];
    int reduced[NDX_MAX_RANK] = {0};
    int n = test_random_axes(r, rank, axes_v, reduced);
    if (n > 0 && rng_below(r, 4) == 0) axes_v[n++] = axes_v[0]; /* an axis twice */
    ndx_tensor axes = axes_of(n, axes_v);
    const ndx_tensor *ax = rng_below(r, 6) == 0 ? NULL : &axes;
    int keep = (int)rng_below(r, 2);
    ndx_tensor want = {0}, first = {0};
    ndx_sparse_tensor want_sp = {0}, first_sp = {0};
    assert_int_equal(ref_sparse_reduce(op, &x, ax, keep, &want, &want_sp, why), REF_OK);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_tensor out = {0}, shape;
        assert_ok(ndx_sparse_reduce_shape(op, &x, ax, keep, &shape, &err), &err);
        assert_ok(ndx_sparse_reduce(op, &x, ax, keep, &opt, &out, &err), &err);
        assert_int_equal(shape.rank, out.rank);
        assert_tensor_eq(&out, &want);
        if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
        ndx_sparse_tensor sp = {0}, sp_shape;
        assert_ok(ndx_sparse_reduce_sparse_shape(op, &x, ax, keep, &sp_shape, &err), &err);
        assert_ok(ndx_sparse_reduce_sparse(op, &x, ax, keep, &opt, &sp, &err), &err);
        assert_int_equal(sp_shape.indices.shape[0], sp.indices.shape[0]);
        assert_sparse_eq(&sp, &want_sp);
        if (!keep_first_or_assert_same_sparse(&first_sp, &sp, threads)) ndx_sparse_free(&sp);
    }
    /* Into caller buffers of the right view. */
    ndx_tensor given = dense_out(&want);
    assert_ok(ndx_sparse_reduce(op, &x, ax, keep, NULL, &given, &err), &err);
    assert_tensor_eq(&given, &want);
    test_tensor_free(&given);
    ndx_tensor_free(&first);
    ndx_sparse_free(&first_sp);
    ref_tensor_free(&want);
    ref_sparse_free(&want_sp);
    test_tensor_free(&axes);
    test_sparse_free(&x);
}

static void test_reduce_random_dtypes(void **state) {
    (void)state;
    test_rng r = {5};
    for (int op = 0; op < 2; op++)
        for (int k = 0; k < test_all_dtypes_count; k++) {
            ndx_dtype dt = test_all_dtypes[k];
            if (!reducible((ndx_sparse_reduce_op)op, dt)) continue;
            for (int trial = 0; trial < 40; trial++)
                check_random(&r, (ndx_sparse_reduce_op)op, dt, 30, 5);
        }
}

/* Enough entries that several threads share the key pass, the sort and the reduction. */
static void test_reduce_random_large(void **state) {
    (void)state;
    test_rng r = {9};
    for (int trial = 0; trial < 4; trial++) {
        check_random(&r, NDX_SPARSE_REDUCE_SUM, NDX_FLOAT32, 90000, 300);
        check_random(&r, NDX_SPARSE_REDUCE_MAX, NDX_FLOAT64, 90000, 300);
    }
}

/* The same entries in any order give the same bits (TensorFlow reorders a copy). */
static void test_reduce_order_free(void **state) {
    (void)state;
    test_rng r = {23};
    ndx_error err;
    ndx_sparse_tensor x = random_sparse(&r, NDX_FLOAT32, NDX_INT64, 3, SHAPE(4, 5, 6), 100, 1);
    ndx_sparse_tensor y = sparse_of(NDX_FLOAT32, NDX_INT64, 3, SHAPE(4, 5, 6), 100, NULL, NULL);
    int64_t perm[100];
    for (int i = 0; i < 100; i++) perm[i] = 99 - i;
    for (int i = 0; i < 100; i++) {
        memcpy((int64_t *)y.indices.data + 3 * i, (int64_t *)x.indices.data + 3 * perm[i], 24);
        ((float *)y.values.data)[i] = ((float *)x.values.data)[perm[i]];
    }
    ndx_tensor axes = axes_of(2, VALS(0, 2)), a = {0}, b = {0};
    assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &axes, 0, NULL, &a, &err), &err);
    assert_ok(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &y, &axes, 0, NULL, &b, &err), &err);
    /* Duplicate indices keep their input order, so only distinct ones compare bitwise: x has
     * repeats, but a reversed run of equal indices sums its values in reverse; compare to a
     * tolerance there and bitwise for the elements without repeats. */
    for (int64_t i = 0; i < 5; i++)
        assert_true(fabsf(((float *)a.data)[i] - ((float *)b.data)[i]) <= 1e-3f);
    ndx_tensor_free(&a);
    ndx_tensor_free(&b);
    test_tensor_free(&axes);
    test_sparse_free(&x);
    test_sparse_free(&y);
}

/* ---- the fused pass: a dense SUM of canonical input --------------------------------------- */

/* One call of op at each thread count without a memory limit (the fused pass) and with a limit far
 * above the need (the general path, which the fused pass leaves to whenever a limit is set):
 * the same bits, equal to the reference, or the same error with a caller's output untouched. */
static void check_fused_op(ndx_sparse_reduce_op op, const ndx_sparse_tensor *x,
                           const ndx_tensor *ax) {
    ndx_error err;
    char why[REF_WHY];
    ndx_tensor want = {0};
    ndx_sparse_tensor want_sp = {0};
    int ref = ref_sparse_reduce(op, x, ax, 0, &want, &want_sp, why);
    ndx_tensor shape;
    assert_ok(ndx_sparse_reduce_shape(op, x, ax, 0, &shape, &err), &err);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options fused = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_options general = fused;
        general.max_memory = (size_t)1 << 40;
        ndx_tensor a = dense_out(&shape), b = dense_out(&shape), c = {0};
        memset(a.data, 0xA5, test_nbytes(&a));
        memset(b.data, 0xA5, test_nbytes(&b));
        ndx_error ea, eb;
        ndx_status sa = ndx_sparse_reduce(op, x, ax, 0, &fused, &a, &ea);
        ndx_status sb = ndx_sparse_reduce(op, x, ax, 0, &general, &b, &eb);
        ndx_status sc = ndx_sparse_reduce(op, x, ax, 0, &fused, &c, &err);
        assert_int_equal(sa, sb);
        assert_int_equal(sa, sc);
        if (sa == NDX_OK) {
            assert_int_equal(ref, REF_OK);
            assert_tensor_eq(&a, &want);
            assert_memory_equal(a.data, b.data, test_nbytes(&a));
            assert_memory_equal(a.data, c.data, test_nbytes(&a));
            ndx_tensor_free(&c);
        } else {
            assert_string_equal(ea.message, eb.message);
            assert_pattern(&a, 0xA5);
            assert_null(c.data);
        }
        test_tensor_free(&a);
        test_tensor_free(&b);
    }
    if (ref == REF_OK) {
        ref_tensor_free(&want);
        ref_sparse_free(&want_sp);
    }
}

static void check_fused_against_general(const ndx_sparse_tensor *x, const ndx_tensor *ax) {
    check_fused_op(NDX_SPARSE_REDUCE_SUM, x, ax);
}

/* The dtypes whose broken inputs are checked: each of the fused pass's kinds of loop (a float
 * run in a register, the point kernel for integers and complex) at rank 2 and 3 and with int32
 * and int64 indices (test_reduce_fused_canonical's choice by position); the rest of the dtypes
 * run the canonical input only, which keeps the test short under valgrind. */
static int breaks_checked(ndx_dtype dt) {
    return dt == NDX_INT32 || dt == NDX_INT64 || dt == NDX_UINT16 || dt == NDX_FLOAT32 ||
           dt == NDX_FLOAT64 || dt == NDX_COMPLEX64;
}

/* Canonical inputs long enough for several workers, with elements whose entries cross the
 * workers' ranges (few long rows, one element for every axis), over every dtype and axes that
 * take the run form (trailing, every, none) and the scatter form (leading, middle); then the
 * same input made almost canonical: two entries swapped (at a range's edge, in the middle, at
 * the end), a row number going back, one coordinate outside dense_shape late in the input.
 * test_reduced(): each broken input under one of its three axes sets instead of all three. */
static void test_reduce_fused_canonical(void **state) {
    (void)state;
    test_rng r = {31};
    static const int64_t axes2[][3] = {{1, 1}, {1, 0}, {1, -1}, {0, 0}, {2, 0, 1}};
    static const int64_t axes3[][3] = {{1, 2}, {2, 1, 2}, {1, 0}, {2, 0, 1}, {1, 1}};
    for (int k = 0; k < test_all_dtypes_count; k++) {
        ndx_dtype dt = test_all_dtypes[k];
        if (!reducible(NDX_SPARSE_REDUCE_SUM, dt)) continue;
        int rank = k % 2 ? 3 : 2;
        const int64_t *dims = rank == 2 ? SHAPE(7, 40000) : SHAPE(300, 20, 30);
        ndx_dtype it = k % 3 == 0 ? NDX_INT32 : NDX_INT64;
        ndx_sparse_tensor x = random_sparse(&r, dt, it, rank, dims, 110000, 1);
        int64_t nnz = x.values.shape[0];
        for (int variant = 0; variant < (breaks_checked(dt) ? 6 : 1); variant++) {
            int64_t at[3] = {nnz / 3 - 1, nnz / 2 - 1, nnz - 2}; /* pairs across 3 and 2 workers' edges */
            int64_t p = variant >= 1 && variant <= 3 ? at[variant - 1] : nnz - 5;
            unsigned char save[64];
            size_t row = (size_t)rank * x.indices.itemsize;
            unsigned char *ip = (unsigned char *)x.indices.data;
            if (variant >= 1 && variant <= 3) { /* swap entries p and p + 1 */
                memcpy(save, ip + p * row, row);
                memcpy(ip + p * row, ip + (p + 1) * row, row);
                memcpy(ip + (p + 1) * row, save, row);
            }
            int64_t was = test_get_index(&x.indices, p * rank);
            if (variant == 4) test_set_index(&x.indices, p * rank, 0); /* back to row 0 */
            if (variant == 5) test_set_index(&x.indices, p * rank, dims[0]); /* outside */
            for (int a = 0; a < 6; a++) {
                /* the canonical input under every axes; the broken ones under axis 1 (a run),
                 * axis 0 (the scatter form) and every axis: what decides the fallback */
                if (variant > 0 && a != 0 && a != 1 && a != 5) continue;
                /* reduced: each broken input under one of those three, in turn (every dtype and
                 * every break still meets all three) */
                static const int turn[3] = {0, 1, 5};
                if (variant > 0 && test_reduced() && a != turn[(variant + k) % 3]) continue;
                const int64_t *spec = rank == 2 ? (a < 5 ? axes2[a] : NULL)
                                                : (a < 5 ? axes3[a] : NULL);
                ndx_tensor axes = spec ? axes_of((int)spec[0], spec + 1) : (ndx_tensor){0};
                check_fused_against_general(&x, spec ? &axes : NULL);
                if (variant == 0 && a == 0 && reducible(NDX_SPARSE_REDUCE_MAX, dt))
                    check_fused_op(NDX_SPARSE_REDUCE_MAX, &x, &axes); /* MAX's fused runs */
                if (spec) test_tensor_free(&axes);
            }
            if (variant >= 1 && variant <= 3) { /* swap back */
                memcpy(save, ip + p * row, row);
                memcpy(ip + p * row, ip + (p + 1) * row, row);
                memcpy(ip + (p + 1) * row, save, row);
            }
            test_set_index(&x.indices, p * rank, was);
        }
        test_sparse_free(&x);
    }
}

/* A NaN inside a run, several in one: the sum keeps the first NaN as the point kernel does. */
static void test_reduce_fused_nan(void **state) {
    (void)state;
    test_rng r = {37};
    for (int k = 0; k < 2; k++) {
        ndx_dtype dt = k ? NDX_FLOAT64 : NDX_FLOAT32;
        ndx_sparse_tensor x = random_sparse(&r, dt, NDX_INT64, 2, SHAPE(5, 30000), 100000, 1);
        for (int64_t i = 1000; i < 100000; i += 20011) {
            if (dt == NDX_FLOAT32) ((float *)x.values.data)[i] = i % 2 ? -NAN : NAN;
            else ((double *)x.values.data)[i] = i % 2 ? -NAN : NAN;
        }
        ndx_tensor axes = axes_of(1, VALS(1));
        check_fused_against_general(&x, &axes);
        check_fused_against_general(&x, NULL);
        check_fused_op(NDX_SPARSE_REDUCE_MAX, &x, &axes); /* a NaN wins a max, the first one */
        check_fused_op(NDX_SPARSE_REDUCE_MAX, &x, NULL);
        test_tensor_free(&axes);
        test_sparse_free(&x);
    }
}

/* The fused pass's ranges and blocks: 98304 entries make 3 ranges at 3 threads (edges 32768,
 * 65536) and 2 at 2 (edge 49152), each added 256 entries at a time. Rows (some rows empty) of
 * 1, 7, 256 and 512 entries lie on and across the blocks' edges; one row crosses the edge at
 * 32768 and ends at 49152, where the next begins; one crosses 65536; the last block is short.
 * Each float dtype folds its runs in a register, int32 and complex64 add through the point
 * kernel. Then: the order broken in the same block as a later coordinate outside dense_shape,
 * and the reverse; the order broken in the first range and a bad coordinate in the last. */
enum { ROWS_NNZ = 98304 };

static ndx_sparse_tensor rows_of(test_rng *r, ndx_dtype vt) {
    static const int64_t pieces[][2] = {{100, 1},    {20, 256},  {1000, 7}, {1, 300}, {87, 200},
                                        {1, 80},     {1, 19152}, {1, 10000}, {1, 848},
                                        {1, 10000},  {55, 512},  {1, 144}};
    int64_t n = 0, row = 0, rows = 0;
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) rows += pieces[k][0];
    rows *= 2; /* room for the empty ones */
    ndx_sparse_tensor x = sparse_of(vt, NDX_INT64, 2, SHAPE(rows, 1000), ROWS_NNZ, NULL, NULL);
    int64_t *idx = x.indices.data;
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++)
        for (int64_t c = 0; c < pieces[k][0]; c++, row += 1 + (row % 9 == 4)) /* skip some */
            for (int64_t i = 0; i < pieces[k][1]; i++, n++) {
                idx[2 * n] = row;
                idx[2 * n + 1] = i * 1000 / pieces[k][1];
            }
    assert_int_equal(n, ROWS_NNZ);
    assert_true(row <= rows);
    fill_values(r, &x.values);
    return x;
}

static void test_reduce_fused_ranges(void **state) {
    (void)state;
    test_rng r = {41};
    static const ndx_dtype types[4] = {NDX_FLOAT32, NDX_FLOAT64, NDX_INT32, NDX_COMPLEX64};
    ndx_tensor axis1 = axes_of(1, VALS(1)), axis0 = axes_of(1, VALS(0));
    for (int k = 0; k < 4; k++) {
        ndx_sparse_tensor x = rows_of(&r, types[k]);
        int64_t *idx = x.indices.data;
        check_fused_against_general(&x, &axis1);
        if (types[k] != NDX_COMPLEX64) check_fused_op(NDX_SPARSE_REDUCE_MAX, &x, &axis1);
        if (k == 0) {
            check_fused_against_general(&x, NULL);
            check_fused_against_general(&x, &axis0);
            check_fused_op(NDX_SPARSE_REDUCE_MAX, &x, NULL);
            check_fused_op(NDX_SPARSE_REDUCE_MAX, &x, &axis0);
        }
        /* late in the last block (short): entries swapped, then a column outside */
        int64_t at[2] = {ROWS_NNZ - 40, 65536 + 3}; /* the last block; the row across 65536 */
        for (int a = 0; a < 2; a++) {
            int64_t p = at[a], c = idx[2 * p + 1];
            idx[2 * p + 1] = idx[2 * (p + 1) + 1] + 1; /* above the next: the order breaks */
            check_fused_against_general(&x, &axis1);
            if (k == 0) check_fused_op(NDX_SPARSE_REDUCE_MAX, &x, &axis1);
            idx[2 * (p + 9) + 1] = 1000; /* and outside dense_shape later in the block */
            check_fused_against_general(&x, &axis1);
            idx[2 * p + 1] = c; /* only the one outside */
            check_fused_against_general(&x, &axis1);
            if (k == 0) check_fused_op(NDX_SPARSE_REDUCE_MAX, &x, &axis1);
            idx[2 * (p + 9) + 1] = idx[2 * (p + 8) + 1];
        }
        if (k == 0) { /* the order broken in the first range, a row outside in the last */
            int64_t c = idx[2 * 1000 + 1], row = idx[2 * 90000];
            idx[2 * 1000 + 1] = 999;
            idx[2 * 90000] = -1;
            check_fused_against_general(&x, &axis1);
            idx[2 * 1000 + 1] = c;
            idx[2 * 90000] = row;
        }
        test_sparse_free(&x);
    }
    test_tensor_free(&axis1);
    test_tensor_free(&axis0);
}

/* The scatter form (axis 0) on several ranges: the first range adds as it checks, the later
 * ranges' entries are added afterwards. Every column of rows_of's input has entries in all three
 * ranges, whose float sums depend on their order: 1, 2 and 3 threads must give the general
 * path's bits. Then a coordinate outside dense_shape in the last range only, the same in the
 * middle and the last (the middle's is named), the order broken inside the last range and at
 * the edge between the middle and the last range (both give up to the general path). */
static void test_reduce_fused_scatter_ranges(void **state) {
    (void)state;
    test_rng r = {43};
    static const ndx_dtype types[4] = {NDX_FLOAT32, NDX_FLOAT64, NDX_INT32, NDX_COMPLEX64};
    ndx_tensor axis0 = axes_of(1, VALS(0));
    for (int k = 0; k < 4; k++) {
        ndx_sparse_tensor x = rows_of(&r, types[k]);
        int64_t *idx = x.indices.data;
        check_fused_against_general(&x, &axis0);
        if (k != 0) {
            test_sparse_free(&x);
            continue;
        }
        int64_t c_late = idx[2 * 90000 + 1], c_mid = idx[2 * 50000 + 1];
        idx[2 * 90000 + 1] = 1000; /* outside, in the last range (at 2 and 3 threads) */
        check_fused_against_general(&x, &axis0);
        idx[2 * 50000 + 1] = 1001; /* and in the middle one */
        check_fused_against_general(&x, &axis0);
        idx[2 * 90000 + 1] = c_late;
        idx[2 * 50000 + 1] = c_mid;
        int64_t row_late = idx[2 * 90000], row_edge = idx[2 * 65536];
        idx[2 * 90000] = 0; /* a row going back in the last range */
        check_fused_against_general(&x, &axis0);
        idx[2 * 90000] = row_late;
        idx[2 * 65536] = idx[2 * 65535] - 1; /* back at the edge of 3 threads' last range */
        check_fused_against_general(&x, &axis0);
        idx[2 * 65536] = row_edge;
        test_sparse_free(&x);
    }
    test_tensor_free(&axis0);
}

/* ---- errors --------------------------------------------------------------------------------- */

static void test_reduce_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor x = sparse_of(NDX_FLOAT32, NDX_INT64, 2, SHAPE(2, 3), 3,
                                    VALS(0, 0, 0, 2, 1, 1), (const double[]){1, 2, 3});
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    memset(out.data, 0xa5, test_nbytes(&out));
    ndx_tensor bad_axis = axes_of(2, VALS(1, 2)), low_axis = axes_of(1, VALS(-3));
    ndx_tensor a1 = axes_of(1, VALS(1));
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &bad_axis, 0, NULL, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_reduce_sum: Invalid reduction dimension 2, for input with 2 dimensions");
    assert_pattern(&out, 0xa5);
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_MAX, &x, &low_axis, 0, NULL, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "sparse_reduce_max: Invalid reduction dimension -3");
    assert_pattern(&out, 0xa5);
    /* An index outside dense_shape, last in the tensor. */
    ((int64_t *)x.indices.data)[5] = 3;
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &a1, 0, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "sparse_reduce_sum.indices[2] = [1, 3] is outside dense_shape [2, 3]");
    assert_pattern(&out, 0xa5);
    ndx_sparse_tensor sp = {0};
    assert_fails(ndx_sparse_reduce_sparse(NDX_SPARSE_REDUCE_SUM, &x, &a1, 0, NULL, &sp, &err),
                 &err, NDX_E_OUT_OF_RANGE, "sparse_reduce_sum_sparse.indices[2]");
    assert_null(sp.indices.data);
    ((int64_t *)x.indices.data)[5] = -1;
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &a1, 0, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "is outside dense_shape");
    assert_pattern(&out, 0xa5);
    ((int64_t *)x.indices.data)[5] = 1;
    /* A wrong output view. */
    ndx_tensor wrong = test_tensor_v(NDX_FLOAT32, 0, 1, 3);
    memset(wrong.data, 0x5a, test_nbytes(&wrong));
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &a1, 0, NULL, &wrong, &err), &err,
                 NDX_E_INVALID_ARGUMENT, NULL);
    assert_pattern(&wrong, 0x5a);
    /* A negative dense_shape, an axes matrix, a bad op. */
    ((int64_t *)x.dense_shape.data)[1] = -3;
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &a1, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "dense_shape[1] = -3 is negative");
    ((int64_t *)x.dense_shape.data)[1] = 3;
    ndx_tensor matrix = test_tensor_v(NDX_INT32, 0, 2, 1, 1);
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &matrix, 0, NULL, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "reduction_axes");
    assert_fails(ndx_sparse_reduce((ndx_sparse_reduce_op)7, &x, &a1, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "op 7");
    assert_pattern(&out, 0xa5);
    /* Values and indices that disagree. */
    x.values.shape[0] = 2;
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &a1, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "values has 2 elements but indices has 3 rows");
    x.values.shape[0] = 3;
    assert_pattern(&out, 0xa5);
    /* Dtypes: bool and string anywhere, complex for max. */
    ndx_sparse_tensor c = sparse_of(NDX_INT32, NDX_INT64, 2, SHAPE(2, 3), 3,
                                    VALS(0, 0, 0, 2, 1, 1), (const double[]){1, 2, 3});
    test_tensor_free(&c.values);
    c.values = test_tensor_v(NDX_COMPLEX64, 0, 1, 3);
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_MAX, &c, &a1, 0, NULL, &out, &err), &err,
                 NDX_E_UNSUPPORTED, "sparse_reduce_max: dtype complex64 is not supported");
    test_tensor_free(&c.values);
    c.values = test_tensor_v(NDX_BOOL, 0, 1, 3);
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &c, &a1, 0, NULL, &out, &err), &err,
                 NDX_E_UNSUPPORTED, "dtype bool");
    assert_pattern(&out, 0xa5);
    /* A budget too small for the scratch. */
    ndx_options tight = {0};
    tight.max_memory = 8;
    ndx_tensor fresh = {0};
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &x, &a1, 0, &tight, &fresh, &err),
                 &err, NDX_E_MEMORY_BUDGET, NULL);
    assert_null(fresh.data);
    test_tensor_free(&matrix);
    test_tensor_free(&wrong);
    test_tensor_free(&out);
    test_tensor_free(&bad_axis);
    test_tensor_free(&low_axis);
    test_tensor_free(&a1);
    test_sparse_free(&x);
    test_sparse_free(&c);
}

static void test_reduce_infer(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_spec sp;
    sp.indices = ndx_spec_make(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 3));
    sp.values = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(NDX_UNKNOWN));
    sp.dense_shape = ndx_spec_make(NDX_INT64, 1, SHAPE(3));
    ndx_tensor axes = axes_of(2, VALS(0, -1));
    ndx_spec as = ndx_spec_of(&axes), out;
    assert_ok(ndx_sparse_reduce_infer(NDX_SPARSE_REDUCE_SUM, &sp, &as, &axes, 0, &out, &err), &err);
    assert_int_equal(out.rank, 1);
    assert_ok(ndx_sparse_reduce_infer(NDX_SPARSE_REDUCE_SUM, &sp, &as, &axes, 1, &out, &err), &err);
    assert_int_equal(out.rank, 3);
    assert_int_equal(out.shape[0], 1);
    assert_int_equal(out.shape[1], NDX_UNKNOWN);
    assert_ok(ndx_sparse_reduce_infer(NDX_SPARSE_REDUCE_SUM, &sp, &as, NULL, 0, &out, &err), &err);
    assert_int_equal(out.rank, NDX_UNKNOWN);
    assert_ok(ndx_sparse_reduce_infer(NDX_SPARSE_REDUCE_MAX, &sp, NULL, NULL, 0, &out, &err), &err);
    assert_int_equal(out.rank, 0);
    ndx_sparse_spec o;
    assert_ok(ndx_sparse_reduce_sparse_infer(NDX_SPARSE_REDUCE_SUM, &sp, &as, &axes, 1, &o, &err),
              &err);
    assert_int_equal(o.indices.shape[1], 3);
    assert_int_equal(o.dense_shape.shape[0], 3);
    ((int32_t *)axes.data)[1] = 3;
    assert_fails(ndx_sparse_reduce_infer(NDX_SPARSE_REDUCE_SUM, &sp, &as, &axes, 0, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "Invalid reduction dimension 3");
    sp.values.dtype = NDX_COMPLEX128;
    sp.values.itemsize = 16;
    assert_fails(ndx_sparse_reduce_infer(NDX_SPARSE_REDUCE_MAX, &sp, NULL, NULL, 0, &out, &err),
                 &err, NDX_E_UNSUPPORTED, "complex128");
    assert_fails(ndx_sparse_softmax_infer(&sp, &out, &err), &err, NDX_E_UNSUPPORTED, "complex128");
    sp.values = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(NDX_UNKNOWN));
    assert_ok(ndx_sparse_softmax_infer(&sp, &out, &err), &err);
    assert_int_equal(out.rank, 1);
    test_tensor_free(&axes);
}

static void test_softmax_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor x = sparse_of(NDX_FLOAT32, NDX_INT64, 1, SHAPE(4), 2, VALS(0, 2),
                                    (const double[]){1, 2});
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    memset(out.data, 0xa5, test_nbytes(&out));
    assert_fails(ndx_sparse_softmax(&x, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_softmax: sp_input has rank 1; it must have rank >= 2");
    assert_pattern(&out, 0xa5);
    test_sparse_free(&x);
    x = sparse_of(NDX_FLOAT32, NDX_INT64, 2, SHAPE(2, 2), 2, VALS(0, 0, 1, 2),
                  (const double[]){1, 2});
    assert_fails(ndx_sparse_softmax(&x, NULL, &out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "sparse_softmax: sp_input.indices[1] = [1, 2] is outside dense_shape [2, 2]");
    assert_pattern(&out, 0xa5);
    test_sparse_free(&x);
    x = sparse_of(NDX_INT32, NDX_INT64, 2, SHAPE(2, 2), 2, VALS(0, 0, 1, 1),
                  (const double[]){1, 2});
    assert_fails(ndx_sparse_softmax(&x, NULL, &out, &err), &err, NDX_E_UNSUPPORTED,
                 "sparse_softmax: dtype int32 is not supported");
    assert_pattern(&out, 0xa5);
    test_sparse_free(&x);
    test_tensor_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_sum_tf_doc),
        cmocka_unit_test(test_reduce_max_tf_doc),
        cmocka_unit_test(test_reduce_sparse_keepdims),
        cmocka_unit_test(test_reduce_sum_negative_zero),
        cmocka_unit_test(test_softmax_tf_doc),
        cmocka_unit_test(test_softmax_random),
        cmocka_unit_test(test_reduce_random_dtypes),
        cmocka_unit_test(test_reduce_random_large),
        cmocka_unit_test(test_reduce_order_free),
        cmocka_unit_test(test_reduce_fused_canonical),
        cmocka_unit_test(test_reduce_fused_nan),
        cmocka_unit_test(test_reduce_fused_ranges),
        cmocka_unit_test(test_reduce_fused_scatter_ranges),
        cmocka_unit_test(test_reduce_errors),
        cmocka_unit_test(test_reduce_infer),
        cmocka_unit_test(test_softmax_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
