/* test_sparse_matmul.c — ndx_sparse_dense_matmul against the naive reference
 * (tests/reference/reference_sparse_matmul.c: A densified, then a dense product in float64):
 * TensorFlow's kernel tests (sparse_tensor_dense_matmul_op_test.py: testBasic over its dtypes and
 * index dtypes, testLarge's shapes, testFloatRandom, testInvalidIndices with its messages), every
 * dtype and index dtype under the four adjoint combinations with entries in canonical order,
 * shuffled and repeated, 1 to 3 threads bitwise alike, the empty cases, float16's single
 * rounding, the infer and shape functions, and every error with the output untouched. */
#include "ndx_test.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>

static const ndx_dtype value_dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                         NDX_INT32,   NDX_COMPLEX64, NDX_COMPLEX128};
#define N_VALUE_DTYPES ((int)(sizeof value_dtypes / sizeof value_dtypes[0]))

/* ---- building inputs ---------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A [rows, cols] SparseTensor of nnz random entries (small integers, complex parts too), index
 * dtype it: in canonical order, or shuffled; with repeated positions when `repeats`. */
static ndx_sparse_tensor random_sparse(test_rng *r, ndx_dtype vt, ndx_dtype it, int64_t rows,
                                       int64_t cols, int64_t nnz, int sorted, int repeats) {
    if (rows == 0 || cols == 0) nnz = 0;
    int64_t vol = rows * cols;
    if (!repeats && nnz > vol) nnz = vol;
    int64_t *pos = malloc((size_t)(nnz ? nnz : 1) * sizeof *pos);
    assert_non_null(pos);
    if (!repeats) { /* selection sampling: distinct offsets in order */
        int64_t need = nnz, k = 0;
        for (int64_t o = 0; o < vol && need > 0; o++)
            if (rng_below(r, vol - o) < need) {
                pos[k++] = o;
                need--;
            }
    } else {
        for (int64_t k = 0; k < nnz; k++) pos[k] = rng_below(r, vol);
        qsort(pos, (size_t)nnz, sizeof *pos, cmp_i64); /* canonical, with repeats */
    }
    if (!sorted)
        for (int64_t k = nnz - 1; k > 0; k--) {
            int64_t j = rng_below(r, k + 1), t = pos[k];
            pos[k] = pos[j];
            pos[j] = t;
        }
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(it, 0, 2, nnz, 2);
    s.values = test_tensor_v(vt, 0, 1, nnz);
    s.dense_shape = test_tensor_v(NDX_INT64, 0, 1, 2);
    ((int64_t *)s.dense_shape.data)[0] = rows;
    ((int64_t *)s.dense_shape.data)[1] = cols;
    for (int64_t k = 0; k < nnz; k++) {
        test_set_index(&s.indices, 2 * k, pos[k] / cols);
        test_set_index(&s.indices, 2 * k + 1, pos[k] % cols);
    }
    test_fill_random(r, &s.values);
    free(pos);
    return s;
}

/* Element i of a result as (re, im). */
static void element(const ndx_tensor *t, int64_t i, double *re, double *im) {
    const unsigned char *p = (const unsigned char *)t->data + (size_t)i * t->itemsize;
    *im = 0;
    switch (t->dtype) {
    case NDX_FLOAT16: { uint16_t h; memcpy(&h, p, 2); *re = ndx_float16_to_float(h); break; }
    case NDX_BFLOAT16: { uint16_t h; memcpy(&h, p, 2); *re = ndx_bfloat16_to_float(h); break; }
    case NDX_FLOAT32: { float f; memcpy(&f, p, 4); *re = f; break; }
    case NDX_FLOAT64: memcpy(re, p, 8); break;
    case NDX_INT32: { int32_t v; memcpy(&v, p, 4); *re = v; break; }
    case NDX_COMPLEX64: { float f[2]; memcpy(f, p, 8); *re = f[0]; *im = f[1]; break; }
    default: { double d[2]; memcpy(d, p, 16); *re = d[0]; *im = d[1]; break; }
    }
}

/* The relative error a result may carry against the float64 reference, per unit of the terms'
 * magnitude: a few units in the last place of the dtype, times the terms' count. */
static double tolerance(ndx_dtype dt, int64_t terms) {
    double eps = dt == NDX_FLOAT16 ? 0x1p-11 : dt == NDX_BFLOAT16 ? 0x1p-8
                 : dt == NDX_FLOAT32 || dt == NDX_COMPLEX64 ? 0x1p-24 : 0x1p-53;
    return eps * (double)(terms + 2) * 2;
}

/* Fails unless `got` is the reference's result for the call. */
static void assert_matches_reference(const ndx_sparse_tensor *a, const ndx_tensor *b, int adj_a,
                                     int adj_b, const ndx_tensor *got) {
    ndx_tensor want, mag;
    char why[REF_WHY];
    assert_int_equal(ref_sparse_dense_matmul(a, b, adj_a, adj_b, &want, &mag, why), REF_OK);
    assert_int_equal(got->rank, 2);
    assert_int_equal(got->dtype, a->values.dtype);
    assert_int_equal(got->shape[0], want.shape[0]);
    assert_int_equal(got->shape[1], want.shape[1]);
    int64_t count = want.shape[0] * want.shape[1];
    double tol = tolerance(got->dtype, a->values.shape[0]);
    for (int64_t i = 0; i < count; i++) {
        double re, im, wre, wim;
        element(got, i, &re, &im);
        if (want.dtype == NDX_INT32) {
            assert_int_equal((int32_t)re, ((int32_t *)want.data)[i]);
            continue;
        }
        element(&want, i, &wre, &wim);
        double lim = tol * ((double *)mag.data)[i];
        if (fabs(re - wre) > lim || fabs(im - wim) > lim)
            fail_msg("%s element %lld: got (%g, %g), want (%g, %g) within %g (adjoint %d %d)",
                     ndx_dtype_name(got->dtype), (long long)i, re, im, wre, wim, lim, adj_a,
                     adj_b);
    }
    ref_tensor_free(&want);
    ref_tensor_free(&mag);
}

/* Runs the op at 1, 2 and 3 threads (bitwise alike) and checks the result with the reference. */
static void check_call(const ndx_sparse_tensor *a, const ndx_tensor *b, int adj_a, int adj_b) {
    ndx_error err;
    ndx_tensor first = {0};
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_tensor out = {0};
        assert_ok(ndx_sparse_dense_matmul(a, b, adj_a, adj_b, &opt, &out, &err), &err);
        if (threads == 1) assert_matches_reference(a, b, adj_a, adj_b, &out);
        if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
    }
    ndx_tensor_free(&first);
}

/* A [m, k] (its adjoint stored when adj_a) times B [k, n] (likewise). */
static void random_case(test_rng *r, ndx_dtype vt, ndx_dtype it, int64_t m, int64_t k,
                        int64_t n, int64_t nnz, int adj_a, int adj_b, int sorted, int repeats) {
    ndx_sparse_tensor a = random_sparse(r, vt, it, adj_a ? k : m, adj_a ? m : k, nnz, sorted,
                                        repeats);
    ndx_tensor b = adj_b ? test_tensor_v(vt, 0, 2, n, k) : test_tensor_v(vt, 0, 2, k, n);
    test_fill_random(r, &b);
    check_call(&a, &b, adj_a, adj_b);
    test_sparse_free(&a);
    test_tensor_free(&b);
}

/* ---- TensorFlow's kernel tests ------------------------------------------------------------ */

/* testBasic: a 10x10 matrix about half zeros times a 10x20 one, int32, float16, float32,
 * float64, complex64, complex128 values with int64 indices, int32 and float32 with int32. */
static void tf_basic(void **state) {
    (void)state;
    test_rng r = {127};
    for (int d = 0; d < N_VALUE_DTYPES; d++) {
        random_case(&r, value_dtypes[d], NDX_INT64, 10, 10, 20, 50, 0, 0, 1, 0);
        random_case(&r, value_dtypes[d], NDX_INT32, 10, 10, 20, 50, 0, 0, 1, 0);
    }
}

/* testLarge: one dim from 6000 to 20000, the others below 10, each in each place, under every
 * adjoint combination; float32, float64, complex64, complex128. */
static void tf_large(void **state) {
    (void)state;
    test_rng r = {128};
    static const ndx_dtype dts[] = {NDX_FLOAT32, NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128};
    for (int d = 0; d < 4; d++) {
        int64_t r1 = rng_range(&r, 6000, 20000), r2 = rng_range(&r, 1, 9), r3 = rng_range(&r, 1, 9);
        int64_t mkn[3][3] = {{r1, r2, r3}, {r2, r1, r3}, {r2, r3, r1}};
        for (int s = 0; s < 3; s++)
            for (int adj = 0; adj < 4; adj++) {
                int64_t m = mkn[s][0], k = mkn[s][1], n = mkn[s][2];
                random_case(&r, dts[d], NDX_INT64, m, k, n, m * k / 5, adj & 1, adj >> 1, 1, 0);
            }
    }
}

/* testFloatRandom: sizes 1 to 99, densities 1, 0.8, 0.2 and 0, every adjoint combination. */
static void tf_float_random(void **state) {
    (void)state;
    test_rng r = {129};
    static const double keep[] = {1.0, 0.8, 0.2, 0.0};
    for (int it = 0; it < 8; it++)
        for (int adj = 0; adj < 4; adj++)
            for (int t = 0; t < 4; t++) {
                int64_t m = rng_range(&r, 1, 99), k = rng_range(&r, 1, 99), n = rng_range(&r, 1, 99);
                random_case(&r, NDX_FLOAT32, NDX_INT64, m, k, n, (int64_t)(keep[t] * (double)(m * k)),
                            adj & 1, adj >> 1, 1, 0);
            }
}

/* testInvalidIndicesForSparseTensorDenseMatmul: entry [1, 10] of a [3, 2] matrix, times B with
 * 5 and 500 columns; the inner index is checked first, then the output row under adjoint_a. */
static void tf_invalid_indices(void **state) {
    (void)state;
    ndx_error err;
    int64_t idx[2] = {1, 10};
    float ten = 10;
    int64_t shape[2] = {3, 2};
    ndx_sparse_tensor a = {ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 2), idx),
                           ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(1), &ten),
                           ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape)};
    for (int wide = 0; wide < 2; wide++) {
        int64_t n = wide ? 500 : 5;
        for (int adj = 0; adj < 2; adj++) {
            ndx_tensor b = test_tensor_v(NDX_FLOAT32, 0, 2, adj ? 3 : 2, n);
            test_fill_random(&(test_rng){1}, &b);
            ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, adj ? 2 : 3, n);
            test_guard g = test_guard_fill(&out, 0x5c);
            assert_fails(ndx_sparse_dense_matmul(&a, &b, adj, 0, NULL, &out, &err), &err,
                         NDX_E_OUT_OF_RANGE,
                         adj ? "sparse_dense_matmul: m (10) from index[0,1] out of bounds (>=2)"
                             : "sparse_dense_matmul: k (10) from index[0,1] out of bounds (>=2)");
            assert_untouched(&g, &out);
            free(g.copy);
            test_tensor_free(&out);
            test_tensor_free(&b);
        }
    }
}

/* ---- every dtype, index dtype, order and thread count -------------------------------------- */

static void random_every_dtype(void **state) {
    (void)state;
    test_rng r = {7};
    static const ndx_dtype its[] = {NDX_INT16, NDX_INT32, NDX_INT64};
    for (int d = 0; d < N_VALUE_DTYPES; d++)
        for (int i = 0; i < 3; i++)
            for (int adj = 0; adj < 4; adj++)
                for (int order = 0; order < 3; order++) { /* canonical, shuffled, repeats */
                    int64_t m = rng_range(&r, 1, 40), k = rng_range(&r, 1, 40),
                            n = rng_range(&r, 1, 70);
                    random_case(&r, value_dtypes[d], its[i], m, k, n, rng_range(&r, 0, m * k),
                                adj & 1, adj >> 1, order == 0, order == 2);
                }
}

/* Large enough that the check and the run split over workers (more than 32K entries), in every
 * order, under every adjoint combination. */
static void random_threads_large(void **state) {
    (void)state;
    test_rng r = {8};
    for (int adj = 0; adj < 4; adj++)
        for (int order = 0; order < 3; order++)
            random_case(&r, NDX_FLOAT32, NDX_INT64, 600, 400, 33, 70000, adj & 1, adj >> 1,
                        order == 0, order == 2);
    random_case(&r, NDX_FLOAT16, NDX_INT32, 600, 400, 17, 70000, 0, 0, 0, 1);
    random_case(&r, NDX_COMPLEX128, NDX_INT64, 600, 400, 5, 70000, 1, 1, 0, 1);
}

/* Repeated entries add, in entry order; an entry of a row far from its neighbours. */
static void repeats_add(void **state) {
    (void)state;
    ndx_error err;
    int64_t idx[] = {2, 1, 0, 0, 2, 1, 0, 1, 2, 1};
    double vals[] = {1, 2, 3, 4, 5};
    int64_t shape[] = {3, 2};
    ndx_sparse_tensor a = {ndx_tensor_make(NDX_INT64, 2, SHAPE(5, 2), idx),
                           ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(5), vals),
                           ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape)};
    double bv[] = {1, 10, 100, 1000};
    ndx_tensor b = ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(2, 2), bv);
    ndx_tensor out = {0};
    assert_ok(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err);
    /* A = [[2, 4], [0, 0], [0, 1 + 3 + 5]] */
    double want[] = {2 + 400, 20 + 4000, 0, 0, 900, 9000};
    assert_memory_equal(out.data, want, sizeof want);
    ndx_tensor_free(&out);
}

/* float16 adds in float and rounds once (TensorFlow's SumType): 2048 + 1 + 1 is 2050, where
 * adding in float16 would stay at 2048. */
static void half_rounds_once(void **state) {
    (void)state;
    ndx_error err;
    int64_t idx[] = {0, 0, 0, 1, 0, 2};
    uint16_t vals[] = {ndx_float_to_float16(2048), ndx_float_to_float16(1),
                       ndx_float_to_float16(1)};
    uint16_t ones[] = {ndx_float_to_float16(1), ndx_float_to_float16(1), ndx_float_to_float16(1)};
    int64_t shape[] = {1, 3};
    ndx_sparse_tensor a = {ndx_tensor_make(NDX_INT64, 2, SHAPE(3, 2), idx),
                           ndx_tensor_make(NDX_FLOAT16, 1, SHAPE(3), vals),
                           ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape)};
    ndx_tensor b = ndx_tensor_make(NDX_FLOAT16, 2, SHAPE(3, 1), ones);
    ndx_tensor out = {0};
    assert_ok(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err);
    assert_true(ndx_float16_to_float(((uint16_t *)out.data)[0]) == 2050.0f);
    ndx_tensor_free(&out);
}

/* int32 wraps as TensorFlow's kernel does on the machines it runs on: 65536 * 65536 + 3 * 5 is
 * 2^32 + 15, which wraps to 15. */
static void int32_wraps(void **state) {
    (void)state;
    ndx_error err;
    int64_t idx[] = {0, 0, 0, 1}, shape[] = {1, 2};
    int32_t av[] = {65536, 3}, bv[] = {65536, 5};
    ndx_sparse_tensor a = {ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 2), idx),
                           ndx_tensor_make(NDX_INT32, 1, SHAPE(2), av),
                           ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape)};
    ndx_tensor b = ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), bv);
    ndx_tensor out = {0};
    assert_ok(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err);
    assert_int_equal(((int32_t *)out.data)[0], 15);
    ndx_tensor_free(&out);
}

/* Complex adjoints conjugate: A = [[1+2i]], B = [[3+4i]]: A B = -5+10i, A^H B = 11-2i,
 * A B^H = 11+2i, A^H B^H = -5-10i. */
static void complex_adjoints(void **state) {
    (void)state;
    ndx_error err;
    int64_t idx[] = {0, 0}, shape[] = {1, 1};
    float av[] = {1, 2}, bv[] = {3, 4};
    ndx_sparse_tensor a = {ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 2), idx),
                           ndx_tensor_make(NDX_COMPLEX64, 1, SHAPE(1), av),
                           ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape)};
    ndx_tensor b = ndx_tensor_make(NDX_COMPLEX64, 2, SHAPE(1, 1), bv);
    static const float want[4][2] = {{-5, 10}, {11, -2}, {11, 2}, {-5, -10}};
    for (int adj = 0; adj < 4; adj++) {
        ndx_tensor out = {0};
        assert_ok(ndx_sparse_dense_matmul(&a, &b, adj & 1, adj >> 1, NULL, &out, &err), &err);
        assert_memory_equal(out.data, want[adj], 8);
        ndx_tensor_free(&out);
    }
}

/* The empty cases: no entries (zeros), an empty output ([0, k] or [m, 0]), an empty inner dim
 * ([m, 0] times [0, n]: zeros). */
static void empty_cases(void **state) {
    (void)state;
    test_rng r = {9};
    ndx_error err;
    int64_t mkn[][3] = {{4, 5, 6}, {0, 5, 6}, {4, 5, 0}, {4, 0, 6}, {0, 0, 0}};
    for (int c = 0; c < 5; c++)
        for (int adj = 0; adj < 4; adj++) {
            int64_t m = mkn[c][0], k = mkn[c][1], n = mkn[c][2];
            ndx_sparse_tensor a = random_sparse(&r, NDX_FLOAT32, NDX_INT64, adj & 1 ? k : m,
                                                adj & 1 ? m : k, 0, 1, 0);
            ndx_tensor b = adj >> 1 ? test_tensor_v(NDX_FLOAT32, 0, 2, n, k)
                                    : test_tensor_v(NDX_FLOAT32, 0, 2, k, n);
            test_fill_random(&r, &b);
            ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, m, n);
            test_guard g = test_guard_fill(&out, 0x7f);
            assert_ok(ndx_sparse_dense_matmul(&a, &b, adj & 1, adj >> 1, NULL, &out, &err), &err);
            for (int64_t i = 0; i < m * n; i++) assert_true(((float *)out.data)[i] == 0.0f);
            free(g.copy);
            test_tensor_free(&out);
            check_call(&a, &b, adj & 1, adj >> 1);
            test_sparse_free(&a);
            test_tensor_free(&b);
        }
}

/* ---- infer, shape, errors ------------------------------------------------------------------- */

static void infer_and_shape(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_spec a = {ndx_spec_make(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 2)),
                         ndx_spec_make(NDX_FLOAT32, 1, SHAPE(NDX_UNKNOWN)),
                         ndx_spec_make(NDX_INT64, 1, SHAPE(2))};
    ndx_spec b = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(10, 20)), out;
    assert_ok(ndx_sparse_dense_matmul_infer(&a, &b, 0, 0, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], NDX_UNKNOWN);
    assert_int_equal(out.shape[1], 20);
    assert_ok(ndx_sparse_dense_matmul_infer(&a, &b, 0, 1, &out, &err), &err);
    assert_int_equal(out.shape[1], 10);
    ndx_spec unknown = ndx_spec_make(NDX_FLOAT32, NDX_UNKNOWN, NULL);
    assert_ok(ndx_sparse_dense_matmul_infer(&a, &unknown, 0, 0, &out, &err), &err);
    assert_int_equal(out.shape[1], NDX_UNKNOWN);
    ndx_spec b3 = ndx_spec_make(NDX_FLOAT32, 3, SHAPE(1, 2, 3));
    assert_fails(ndx_sparse_dense_matmul_infer(&a, &b3, 0, 0, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Tensor 'b' is not a matrix");
    ndx_sparse_spec a3 = a;
    a3.indices = ndx_spec_make(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 3));
    a3.dense_shape = ndx_spec_make(NDX_INT64, 1, SHAPE(3));
    assert_fails(ndx_sparse_dense_matmul_infer(&a3, &b, 0, 0, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Tensor 'a_shape' must have 2 elements");
    ndx_spec b64 = ndx_spec_make(NDX_FLOAT64, 2, SHAPE(10, 20));
    assert_fails(ndx_sparse_dense_matmul_infer(&a, &b64, 0, 0, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "b is float64 but sp_a's values are float32");
    ndx_sparse_spec ai = a;
    ai.values = ndx_spec_make(NDX_INT64, 1, SHAPE(NDX_UNKNOWN));
    ndx_spec bi = ndx_spec_make(NDX_INT64, 2, SHAPE(10, 20));
    assert_fails(ndx_sparse_dense_matmul_infer(&ai, &bi, 0, 0, &out, &err), &err,
                 NDX_E_UNSUPPORTED, "values of dtype int64 are not supported");

    /* the shape function reads dense_shape */
    test_rng r = {10};
    ndx_sparse_tensor sp = random_sparse(&r, NDX_FLOAT32, NDX_INT64, 7, 10, 9, 1, 0);
    ndx_tensor bt = test_tensor_v(NDX_FLOAT32, 0, 2, 10, 20), view;
    assert_ok(ndx_sparse_dense_matmul_shape(&sp, &bt, 0, 0, &view, &err), &err);
    assert_null(view.data);
    assert_int_equal(view.shape[0], 7);
    assert_int_equal(view.shape[1], 20);
    test_sparse_free(&sp);
    test_tensor_free(&bt);
}

/* Every error: the message, and an output passed in left as it was. */
static void errors_leave_output(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {11};
    ndx_sparse_tensor a = random_sparse(&r, NDX_FLOAT32, NDX_INT64, 4, 5, 8, 0, 0);
    ndx_tensor b = test_tensor_v(NDX_FLOAT32, 0, 2, 5, 3);
    test_fill_random(&r, &b);
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 3);
    test_guard g = test_guard_fill(&out, 0x3d);

    ndx_tensor b_wrong = test_tensor_v(NDX_FLOAT32, 0, 2, 6, 3);
    assert_fails(ndx_sparse_dense_matmul(&a, &b_wrong, 0, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "Cannot multiply A and B because inner dimension does not match: 5 vs. 6.  Did "
                 "you forget a transpose?  Dimensions of A: [4, 5).  Dimensions of B: [6, 3]");
    assert_fails(ndx_sparse_dense_matmul(&a, &b, 1, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "inner dimension does not match: 4 vs. 5");
    ndx_tensor b_vec = test_tensor_v(NDX_FLOAT32, 0, 1, 5);
    assert_fails(ndx_sparse_dense_matmul(&a, &b_vec, 0, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Tensor 'b' is not a matrix");
    ndx_tensor b_f64 = test_tensor_v(NDX_FLOAT64, 0, 2, 5, 3);
    assert_fails(ndx_sparse_dense_matmul(&a, &b_f64, 0, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "b is float64");
    /* the output's shape must be the result's */
    ndx_tensor out_wrong = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 4);
    test_guard g2 = test_guard_fill(&out_wrong, 0x11);
    assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out_wrong, &err), &err,
                 NDX_E_INVALID_ARGUMENT, NULL);
    assert_untouched(&g2, &out_wrong);
    /* a negative dense_shape */
    ((int64_t *)a.dense_shape.data)[0] = -4;
    assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "dense_shape[0] = -4 is negative");
    ((int64_t *)a.dense_shape.data)[0] = 4;
    /* entries outside the shape, the first in entry order named, k before m */
    int64_t *ix = a.indices.data;
    int64_t saved[4] = {ix[6], ix[7], ix[10], ix[11]};
    ix[6] = -1;
    ix[11] = 5;
    assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "m (-1) from index[3,0] out of bounds (>=4)");
    ix[7] = 9;
    assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "k (9) from index[3,1] out of bounds (>=5)");
    ix[6] = saved[0];
    ix[7] = saved[1];
    assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "k (5) from index[5,1] out of bounds (>=5)");
    ix[11] = saved[3];
    (void)saved[2];
    /* values and indices disagree */
    ndx_tensor v_short = test_tensor_v(NDX_FLOAT32, 0, 1, 7), v_keep = a.values;
    a.values = v_short;
    assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "values has 7 elements but indices has 8 rows");
    a.values = v_keep;
    /* a memory budget too small for the index scratch */
    ndx_options tight = {.max_memory = 16};
    assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, &tight, &out, &err), &err,
                 NDX_E_MEMORY_BUDGET, NULL);
    assert_untouched(&g, &out);
    /* and the call that fits writes the product */
    assert_ok(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &out, &err), &err);
    assert_matches_reference(&a, &b, 0, 0, &out);
    free(g.copy);
    free(g2.copy);
    test_tensor_free(&v_short);
    test_tensor_free(&out_wrong);
    test_tensor_free(&b_f64);
    test_tensor_free(&b_vec);
    test_tensor_free(&b_wrong);
    test_tensor_free(&out);
    test_tensor_free(&b);
    test_sparse_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tf_basic),
        cmocka_unit_test(tf_large),
        cmocka_unit_test(tf_float_random),
        cmocka_unit_test(tf_invalid_indices),
        cmocka_unit_test(random_every_dtype),
        cmocka_unit_test(random_threads_large),
        cmocka_unit_test(repeats_add),
        cmocka_unit_test(half_rounds_once),
        cmocka_unit_test(int32_wraps),
        cmocka_unit_test(complex_adjoints),
        cmocka_unit_test(empty_cases),
        cmocka_unit_test(infer_and_shape),
        cmocka_unit_test(errors_leave_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
