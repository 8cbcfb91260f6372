/* test_sparse_add.c — sparse_add (SparseAdd), sparse_maximum / sparse_minimum
 * (SparseSparseMaximum / Minimum), sparse_dense_add (SparseTensorDenseAdd) and sparse_add_grad
 * (SparseAddGrad): TensorFlow's kernel-test cases (sparse_add_op_test.py, sparse_ops_test.py's
 * SparseMinimumMaximumTest) with their expected values, randomized runs against the naive
 * references of tests/reference/ (TensorFlow's loops written out) over every dtype, canonical
 * and non-canonical inputs, 1 / 2 / 3 threads bitwise alike, and every error with the outputs
 * untouched. */
#include "ndx_test.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>

/* ---- building inputs --------------------------------------------------------------------- */

/* A sparse tensor from literals: rank-R int64 rows idx[nnz * R], values as doubles converted to
 * vt (float32 when vt is 0 is not special: pass the dtype). */
static ndx_sparse_tensor sp_lit(ndx_dtype vt, int R, const int64_t *dims, int64_t nnz,
                                const int64_t *idx, const double *vals) {
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(NDX_INT64, 0, 2, nnz, R);
    s.values = test_tensor_v(vt, 0, 1, nnz);
    s.dense_shape = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){R}, dims);
    if (nnz) memcpy(s.indices.data, idx, (size_t)(nnz * R) * 8);
    for (int64_t i = 0; i < nnz; i++) {
        unsigned char *p = (unsigned char *)s.values.data + i * s.values.itemsize;
        double v = vals[i];
        switch (vt) {
        case NDX_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); } break;
        case NDX_FLOAT64: memcpy(p, &v, 8); break;
        case NDX_INT32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); } break;
        case NDX_INT64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); } break;
        default: fail_msg("sp_lit: dtype");
        }
    }
    return s;
}

static void assert_floats(const ndx_tensor *t, int64_t n, const float *want) {
    assert_int_equal(t->shape[0], n);
    for (int64_t i = 0; i < n; i++) assert_true(((float *)t->data)[i] == want[i]);
}

static void assert_rows(const ndx_tensor *t, int64_t n, int R, const int64_t *want) {
    assert_int_equal(t->shape[0], n);
    assert_int_equal(t->shape[1], R);
    if (n) assert_memory_equal(t->data, want, (size_t)(n * R) * 8);
}

static ndx_tensor scalar_f32(float v) { return test_tensor_from(NDX_FLOAT32, 0, 0, NULL, &v); }

static int cmp_i64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* A random sparse tensor of up to nnz entries in dims: positions drawn with repeats when
 * `repeats`, then sorted unless `shuffled`; every index dtype. */
static ndx_sparse_tensor sp_random(test_rng *r, ndx_dtype vt, int R, const int64_t *dims,
                                   int64_t nnz, int repeats, int shuffled) {
    int64_t vol = 1;
    for (int d = 0; d < R; d++) vol *= dims[d];
    if (vol == 0) nnz = 0;
    if (!repeats && nnz > vol) nnz = vol;
    int64_t *pos = malloc((size_t)(nnz + 1) * sizeof *pos);
    int64_t k = 0;
    if (repeats) {
        for (; k < nnz; k++) pos[k] = rng_below(r, vol);
        qsort(pos, (size_t)nnz, sizeof *pos, cmp_i64);
    } else { /* selection sampling: distinct, in order */
        int64_t need = nnz;
        for (int64_t o = 0; o < vol && need > 0; o++)
            if (rng_below(r, vol - o) < need) {
                pos[k++] = o;
                need--;
            }
    }
    if (shuffled)
        for (int64_t i = nnz - 1; i > 0; i--) {
            int64_t j = rng_below(r, i + 1), t = pos[i];
            pos[i] = pos[j];
            pos[j] = t;
        }
    static const ndx_dtype its[3] = {NDX_INT16, NDX_INT32, NDX_INT64};
    ndx_dtype it = vol < 30000 ? its[rng_below(r, 3)] : NDX_INT64;
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(it, 0, 2, nnz, R);
    s.values = test_tensor_v(vt, 0, 1, nnz);
    s.dense_shape = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){R}, dims);
    for (int64_t i = 0; i < nnz; i++) {
        int64_t rest = pos[i];
        for (int d = R - 1; d >= 0; d--) {
            test_set_index(&s.indices, i * R + d, rest % dims[d]);
            rest /= dims[d];
        }
    }
    test_fill_random(r, &s.values);
    free(pos);
    return s;
}

/* The reference's result must be REF_OK; returns it (free with ref_sparse_free). */
static ndx_sparse_tensor want_ok(ref_verdict v, ndx_sparse_tensor sp, const char *why) {
    if (v != REF_OK) fail_msg("reference refuses: %s", why);
    return sp;
}

/* Output views the caller allocates, as the shape function `st` described them in *sp. */
static ndx_sparse_tensor preallocated(ndx_status st, const ndx_sparse_tensor *sp, ndx_error *err) {
    assert_ok(st, err);
    ndx_sparse_tensor o = *sp;
    ndx_tensor *parts[3] = {&o.indices, &o.values, &o.dense_shape};
    for (int k = 0; k < 3; k++) {
        size_t bytes = (size_t)test_count(parts[k]) * parts[k]->itemsize;
        parts[k]->data = malloc(bytes ? bytes : 1);
        memset(parts[k]->data, 0x5a, bytes);
    }
    return o;
}

static const ndx_dtype add_dtypes[] = {NDX_INT8,    NDX_INT16,   NDX_INT32,     NDX_INT64,
                                       NDX_FLOAT32, NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128};
static const ndx_dtype minmax_dtypes[] = {NDX_INT8,   NDX_INT16,   NDX_INT32,    NDX_INT64,
                                          NDX_UINT8,  NDX_UINT16,  NDX_UINT32,   NDX_UINT64,
                                          NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
#define COUNT(x) ((int)(sizeof(x) / sizeof((x)[0])))

/* A threshold of SparseAdd's type for values of dtype vt (value t). */
static ndx_tensor threshold_of(ndx_dtype vt, int t) {
    ndx_dtype td = vt == NDX_COMPLEX64 ? NDX_FLOAT32 : vt == NDX_COMPLEX128 ? NDX_FLOAT64 : vt;
    ndx_tensor x = test_tensor(td, 0, 0, NULL);
    switch (td) {
    case NDX_FLOAT32: { float f = (float)t; memcpy(x.data, &f, 4); } break;
    case NDX_FLOAT64: { double f = t; memcpy(x.data, &f, 8); } break;
    case NDX_INT8: { int8_t v = (int8_t)t; memcpy(x.data, &v, 1); } break;
    default: test_set_index(&x, 0, t); break;
    }
    return x;
}

/* ---- TensorFlow's cases ------------------------------------------------------------------ */

/* sparse_add_op_test.py: _SparseTensor_3x3 ([[., 1, .], [2, ., .], [3, 4, .]]), its negation, and
 * _SparseTensor_3x3_v2 (values 1, -1.9, 3, -4.2). */
static const int64_t idx3x3[8] = {0, 1, 1, 0, 2, 0, 2, 1};
static const int64_t dims3x3[2] = {3, 3};

static void tf_add_self(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor a = sp_lit(NDX_FLOAT32, 2, dims3x3, 4, idx3x3, (double[]){1, 2, 3, 4});
    ndx_sparse_tensor out = {0};
    assert_ok(ndx_sparse_add(&a, &a, NULL, NULL, &out, &err), &err);
    assert_rows(&out.indices, 4, 2, idx3x3);
    assert_floats(&out.values, 4, (float[]){2, 4, 6, 8});
    assert_memory_equal(out.dense_shape.data, dims3x3, 16);
    ndx_sparse_free(&out);
    test_sparse_free(&a);
}

static void tf_add_self_and_negation(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor a = sp_lit(NDX_FLOAT32, 2, dims3x3, 4, idx3x3, (double[]){1, 2, 3, 4});
    ndx_sparse_tensor b = sp_lit(NDX_FLOAT32, 2, dims3x3, 4, idx3x3, (double[]){-1, -2, -3, -4});
    ndx_tensor t = scalar_f32(0.1f);
    ndx_sparse_tensor out = {0};
    assert_ok(ndx_sparse_add(&a, &b, &t, NULL, &out, &err), &err);
    assert_rows(&out.indices, 0, 2, NULL);
    assert_int_equal(out.values.shape[0], 0);
    assert_memory_equal(out.dense_shape.data, dims3x3, 16);
    ndx_sparse_free(&out);
    /* with the default threshold the zeros stay */
    assert_ok(ndx_sparse_add(&a, &b, NULL, NULL, &out, &err), &err);
    assert_rows(&out.indices, 4, 2, idx3x3);
    assert_floats(&out.values, 4, (float[]){0, 0, 0, 0});
    ndx_sparse_free(&out);
    test_tensor_free(&t);
    test_sparse_free(&a);
    test_sparse_free(&b);
}

static void tf_small_values_vanish(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor a = sp_lit(NDX_FLOAT32, 2, dims3x3, 4, idx3x3, (double[]){1, 2, 3, 4});
    ndx_sparse_tensor b =
        sp_lit(NDX_FLOAT32, 2, dims3x3, 4, idx3x3, (double[]){1, -1.9, 3, -4.2});
    ndx_tensor t = scalar_f32(0.21f);
    ndx_sparse_tensor out = {0};
    assert_ok(ndx_sparse_add(&a, &b, &t, NULL, &out, &err), &err);
    assert_rows(&out.indices, 2, 2, VALS(0, 1, 2, 0));
    assert_floats(&out.values, 2, (float[]){2, 6});
    ndx_sparse_free(&out);
    test_tensor_free(&t);
    t = scalar_f32(0.11f);
    assert_ok(ndx_sparse_add(&a, &b, &t, NULL, &out, &err), &err);
    assert_rows(&out.indices, 3, 2, VALS(0, 1, 2, 0, 2, 1));
    assert_floats(&out.values, 3, (float[]){2, 6, 4.0f + -4.2f});
    ndx_sparse_free(&out);
    /* the shape function counts the same */
    assert_ok(ndx_sparse_add_shape(&a, &b, &t, &out, &err), &err);
    assert_int_equal(out.indices.shape[0], 3);
    assert_null(out.values.data);
    test_tensor_free(&t);
    test_sparse_free(&a);
    test_sparse_free(&b);
}

/* An entry in one input is kept whatever its magnitude; a NaN sum never passes the threshold. */
static void threshold_only_for_sums(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor a = sp_lit(NDX_FLOAT64, 1, (int64_t[]){5}, 3, VALS(0, 2, 4),
                                 (double[]){0.01, NAN, 1});
    ndx_sparse_tensor b = sp_lit(NDX_FLOAT64, 1, (int64_t[]){5}, 3, VALS(1, 2, 4),
                                 (double[]){0, 1, -1});
    ndx_sparse_tensor out = {0};
    assert_ok(ndx_sparse_add(&a, &b, NULL, NULL, &out, &err), &err);
    /* 0.01 and 0 stay (one side), NaN + 1 drops (0 <= NaN is false), 1 + -1 = 0 stays */
    assert_rows(&out.indices, 3, 1, VALS(0, 1, 4));
    double *v = out.values.data;
    assert_true(v[0] == 0.01 && v[1] == 0 && v[2] == 0);
    ndx_sparse_free(&out);
    test_sparse_free(&a);
    test_sparse_free(&b);
}

/* sparse_ops_test.py SparseMinimumMaximumTest.testBasic. */
static void tf_minmax_basic(void **state) {
    (void)state;
    ndx_error err;
    int64_t d7[1] = {7};
    ndx_sparse_tensor zero = sp_lit(NDX_INT32, 1, d7, 1, VALS(0), (double[]){0});
    ndx_sparse_tensor one = sp_lit(NDX_INT32, 1, d7, 1, VALS(0), (double[]){1});
    ndx_sparse_tensor out = {0};
    assert_ok(ndx_sparse_maximum(&zero, &one, NULL, &out, &err), &err);
    assert_sparse_eq(&out, &one);
    ndx_sparse_free(&out);
    assert_ok(ndx_sparse_minimum(&zero, &one, NULL, &out, &err), &err);
    assert_sparse_eq(&out, &zero);
    ndx_sparse_free(&out);
    ndx_sparse_tensor z1 = sp_lit(NDX_INT32, 1, d7, 1, VALS(1), (double[]){0});
    ndx_sparse_tensor z2 = sp_lit(NDX_INT32, 1, d7, 1, VALS(2), (double[]){0});
    ndx_sparse_tensor both = sp_lit(NDX_INT32, 1, d7, 2, VALS(1, 2), (double[]){0, 0});
    assert_ok(ndx_sparse_maximum(&z1, &z2, NULL, &out, &err), &err);
    assert_sparse_eq(&out, &both);
    ndx_sparse_free(&out);
    assert_ok(ndx_sparse_minimum(&z1, &z2, NULL, &out, &err), &err);
    assert_sparse_eq(&out, &both);
    ndx_sparse_free(&out);
    ndx_sparse_tensor shape_only = {0};
    assert_ok(ndx_sparse_maximum_shape(&z1, &z2, &shape_only, &err), &err);
    assert_int_equal(shape_only.indices.shape[0], 2);
    test_sparse_free(&zero);
    test_sparse_free(&one);
    test_sparse_free(&z1);
    test_sparse_free(&z2);
    test_sparse_free(&both);
}

/* SparseMinimumMaximumTest.testRandom: against NumPy's maximum / minimum of the densified
 * inputs, here the dense loop over to_dense results. An entry on one side meets a zero. */
static void minmax_dense_meaning(void **state) {
    (void)state;
    test_rng r = {1618};
    static const int64_t shapes[3][3] = {{13}, {6, 8}, {1, 7, 1}};
    static const int ranks[3] = {1, 2, 3};
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 5; t++) {
            static const ndx_dtype dts[5] = {NDX_INT32, NDX_INT64, NDX_FLOAT16, NDX_FLOAT32,
                                             NDX_FLOAT64};
            ndx_dtype dt = dts[t];
            ndx_error err;
            ndx_sparse_tensor a = sp_random(&r, dt, ranks[s], shapes[s], 20, 0, 0);
            ndx_sparse_tensor b = sp_random(&r, dt, ranks[s], shapes[s], 20, 0, 0);
            for (int maximum = 0; maximum < 2; maximum++) {
                ndx_sparse_tensor out = {0};
                assert_ok((maximum ? ndx_sparse_maximum : ndx_sparse_minimum)(&a, &b, NULL, &out,
                                                                              &err),
                          &err);
                ndx_tensor da = {0}, db = {0}, dout = {0};
                assert_ok(ndx_sparse_to_dense(&a, NULL, NULL, &da, &err), &err);
                assert_ok(ndx_sparse_to_dense(&b, NULL, NULL, &db, &err), &err);
                assert_ok(ndx_sparse_to_dense(&out, NULL, NULL, &dout, &err), &err);
                for (int64_t i = 0; i < test_count(&da); i++) {
                    double x, y, z;
                    if (dt == NDX_FLOAT16) {
                        x = ndx_float16_to_float(((uint16_t *)da.data)[i]);
                        y = ndx_float16_to_float(((uint16_t *)db.data)[i]);
                        z = ndx_float16_to_float(((uint16_t *)dout.data)[i]);
                    } else if (dt == NDX_FLOAT32) {
                        x = ((float *)da.data)[i], y = ((float *)db.data)[i];
                        z = ((float *)dout.data)[i];
                    } else if (dt == NDX_FLOAT64) {
                        x = ((double *)da.data)[i], y = ((double *)db.data)[i];
                        z = ((double *)dout.data)[i];
                    } else {
                        x = (double)test_get_index(&da, i), y = (double)test_get_index(&db, i);
                        z = (double)test_get_index(&dout, i);
                    }
                    assert_true(z == (maximum ? fmax(x, y) : fmin(x, y)));
                }
                ndx_tensor_free(&da);
                ndx_tensor_free(&db);
                ndx_tensor_free(&dout);
                ndx_sparse_free(&out);
            }
            test_sparse_free(&a);
            test_sparse_free(&b);
        }
}

/* NaN wins, a's first; a tie keeps a's value (-0.0 against an implicit +0). */
static void minmax_nan_and_ties(void **state) {
    (void)state;
    ndx_error err;
    int64_t d4[1] = {4};
    ndx_sparse_tensor a = sp_lit(NDX_FLOAT64, 1, d4, 3, VALS(0, 1, 2), (double[]){NAN, 1, -0.0});
    ndx_sparse_tensor b = sp_lit(NDX_FLOAT64, 1, d4, 2, VALS(0, 1), (double[]){5, NAN});
    ndx_sparse_tensor out = {0};
    assert_ok(ndx_sparse_maximum(&a, &b, NULL, &out, &err), &err);
    double *v = out.values.data;
    assert_int_equal(out.values.shape[0], 3);
    assert_true(isnan(v[0]) && isnan(v[1]) && v[2] == 0 && signbit(v[2]));
    ndx_sparse_free(&out);
    test_sparse_free(&a);
    test_sparse_free(&b);
}

/* sparse_add_op_test.py testSparseTensorDenseAdd-style: sparse + dense, repeated indices add. */
static void dense_add_basic(void **state) {
    (void)state;
    ndx_error err;
    /* unsorted, with (1, 0) twice */
    ndx_sparse_tensor a = sp_lit(NDX_FLOAT32, 2, dims3x3, 4, VALS(2, 1, 1, 0, 0, 1, 1, 0),
                                 (double[]){1, 2, 3, 4});
    float bv[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    ndx_tensor b = test_tensor_from(NDX_FLOAT32, 0, 2, dims3x3, bv);
    ndx_tensor out = {0};
    assert_ok(ndx_sparse_dense_add(&a, &b, NULL, &out, &err), &err);
    float want[9] = {1, 4, 1, 7, 1, 1, 1, 2, 1};
    assert_memory_equal(out.data, want, sizeof want);
    ndx_tensor_free(&out);
    /* in place */
    assert_ok(ndx_sparse_dense_add(&a, &b, NULL, &b, &err), &err);
    assert_memory_equal(b.data, want, sizeof want);
    test_tensor_free(&b);
    test_sparse_free(&a);
}

/* ---- randomized against the references --------------------------------------------------- */

/* Shapes, sizes and orders for the random runs: canonical (distinct, sorted), sorted with
 * repeats, shuffled; a small volume so entries meet. */
static void random_pair(test_rng *r, ndx_dtype dt, int mode, ndx_sparse_tensor *a,
                        ndx_sparse_tensor *b) {
    int R = (int)rng_range(r, 1, 3);
    int64_t dims[3];
    for (int d = 0; d < R; d++) dims[d] = rng_range(r, 1, 6);
    int repeats = mode == 1, shuffled = mode == 2;
    *a = sp_random(r, dt, R, dims, rng_range(r, 0, 40), repeats, shuffled);
    *b = sp_random(r, dt, R, dims, rng_range(r, 0, 40), repeats, shuffled && rng_below(r, 2));
}

static void add_random(void **state) {
    (void)state;
    test_rng r = {11};
    for (int di = 0; di < COUNT(add_dtypes); di++)
        for (int iter = 0; iter < 60; iter++) {
            ndx_dtype dt = add_dtypes[di];
            ndx_sparse_tensor a, b;
            random_pair(&r, dt, iter % 3, &a, &b);
            int tv = (int)rng_range(&r, -1, 4);
            int has = iter % 4 != 0;
            ndx_tensor thr = threshold_of(dt, tv);
            char why[REF_WHY];
            ndx_sparse_tensor ref;
            ref = want_ok(ref_sparse_add(&a, &b, has ? &thr : NULL, &ref, why), ref, why);
            ndx_sparse_tensor first = {0};
            for (int threads = 1; threads <= TEST_THREADS; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                ndx_sparse_tensor out = {0};
                if (threads == 2) /* outputs the caller gives: the counting merge */
                    out = preallocated(ndx_sparse_add_shape(&a, &b, has ? &thr : NULL, &out, &err),
                                       &out, &err);
                assert_ok(ndx_sparse_add(&a, &b, has ? &thr : NULL, &opt, &out, &err), &err);
                assert_sparse_eq(&out, &ref);
                if (!keep_first_or_assert_same_sparse(&first, &out, threads))
                    ndx_sparse_free(&out);
            }
            ndx_sparse_free(&first);
            ref_sparse_free(&ref);
            test_tensor_free(&thr);
            test_sparse_free(&a);
            test_sparse_free(&b);
        }
}

static void minmax_random(void **state) {
    (void)state;
    test_rng r = {12};
    for (int di = 0; di < COUNT(minmax_dtypes); di++)
        for (int iter = 0; iter < 40; iter++) {
            ndx_dtype dt = minmax_dtypes[di];
            ndx_sparse_tensor a, b;
            random_pair(&r, dt, iter % 3, &a, &b);
            for (int maximum = 0; maximum < 2; maximum++) {
                char why[REF_WHY];
                ndx_sparse_tensor ref;
                ref = want_ok(ref_sparse_minmax(maximum, &a, &b, &ref, why), ref, why);
                ndx_sparse_tensor first = {0};
                for (int threads = 1; threads <= TEST_THREADS; threads++) {
                    ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                    ndx_error err;
                    ndx_sparse_tensor out = {0};
                    if (threads == 2)
                        out = preallocated((maximum ? ndx_sparse_maximum_shape
                                                    : ndx_sparse_minimum_shape)(&a, &b, &out, &err),
                                           &out, &err);
                    assert_ok((maximum ? ndx_sparse_maximum : ndx_sparse_minimum)(&a, &b, &opt,
                                                                                  &out, &err),
                              &err);
                    assert_sparse_eq(&out, &ref);
                    if (!keep_first_or_assert_same_sparse(&first, &out, threads))
                        ndx_sparse_free(&out);
                }
                ndx_sparse_free(&first);
                ref_sparse_free(&ref);
            }
            test_sparse_free(&a);
            test_sparse_free(&b);
        }
}

/* Large canonical inputs: many pieces at 2 and 3 threads, cut where repeats and matches are. */
static void merge_large_threads(void **state) {
    (void)state;
    test_rng r = {13};
    int64_t dims[2] = {600, 700};
    for (int repeats = 0; repeats < 2; repeats++)
        for (int kind = 0; kind < 3; kind++) {
            ndx_dtype dt = kind == 0 ? NDX_FLOAT32 : NDX_INT64;
            ndx_sparse_tensor a = sp_random(&r, dt, 2, dims, 150000, repeats, 0);
            ndx_sparse_tensor b = sp_random(&r, dt, 2, dims, 90000, repeats, 0);
            ndx_tensor thr = threshold_of(dt, 3);
            char why[REF_WHY];
            ndx_sparse_tensor ref;
            if (kind == 0)
                ref = want_ok(ref_sparse_add(&a, &b, &thr, &ref, why), ref, why);
            else
                ref = want_ok(ref_sparse_minmax(kind == 1, &a, &b, &ref, why), ref, why);
            for (int threads = 1; threads <= TEST_THREADS; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                ndx_sparse_tensor out = {0};
                ndx_status st = kind == 0   ? ndx_sparse_add(&a, &b, &thr, &opt, &out, &err)
                                : kind == 1 ? ndx_sparse_maximum(&a, &b, &opt, &out, &err)
                                            : ndx_sparse_minimum(&a, &b, &opt, &out, &err);
                assert_ok(st, &err);
                assert_sparse_eq(&out, &ref);
                ndx_sparse_free(&out);
            }
            ref_sparse_free(&ref);
            test_tensor_free(&thr);
            test_sparse_free(&a);
            test_sparse_free(&b);
        }
}

static void dense_add_random(void **state) {
    (void)state;
    test_rng r = {14};
    for (int di = 0; di < test_all_dtypes_count; di++) {
        ndx_dtype dt = test_all_dtypes[di];
        ndx_dtype_kind k = ndx_dtype_kind_of(dt);
        if (k == NDX_KIND_BOOL || k == NDX_KIND_STRING) continue;
        for (int iter = 0; iter < 30; iter++) {
            int R = (int)rng_range(&r, 1, 3);
            int64_t dims[3];
            for (int d = 0; d < R; d++) dims[d] = rng_range(&r, 1, 6);
            ndx_sparse_tensor a =
                sp_random(&r, dt, R, dims, rng_range(&r, 0, 40), iter % 3 == 1, iter % 3 == 2);
            ndx_tensor b = test_tensor(dt, 0, R, dims);
            test_fill_random(&r, &b);
            char why[REF_WHY];
            ndx_tensor ref;
            if (ref_sparse_dense_add(&a, &b, &ref, why) != REF_OK) fail_msg("%s", why);
            for (int threads = 1; threads <= TEST_THREADS; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                ndx_tensor out = {0};
                assert_ok(ndx_sparse_dense_add(&a, &b, &opt, &out, &err), &err);
                assert_tensor_eq(&out, &ref);
                ndx_tensor_free(&out);
            }
            ref_tensor_free(&ref);
            test_tensor_free(&b);
            test_sparse_free(&a);
        }
    }
    /* large, distinct (parallel adds) and with repeats (one thread, in order) */
    for (int repeats = 0; repeats < 2; repeats++) {
        int64_t dims[2] = {500, 400};
        ndx_sparse_tensor a = sp_random(&r, NDX_FLOAT32, 2, dims, 120000, repeats, repeats);
        ndx_tensor b = test_tensor(NDX_FLOAT32, 0, 2, dims);
        test_fill_random(&r, &b);
        char why[REF_WHY];
        ndx_tensor ref;
        if (ref_sparse_dense_add(&a, &b, &ref, why) != REF_OK) fail_msg("%s", why);
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_error err;
            ndx_tensor out = {0};
            assert_ok(ndx_sparse_dense_add(&a, &b, &opt, &out, &err), &err);
            assert_tensor_eq(&out, &ref);
            ndx_tensor_free(&out);
        }
        ref_tensor_free(&ref);
        test_tensor_free(&b);
        test_sparse_free(&a);
    }
}

/* SparseAddGrad: on canonical inputs and their sum, each entry of a (b) gets the gradient of the
 * sum entry with its row, or 0 when the threshold dropped it (a search, independent of the
 * walk); on any rows, TensorFlow's walk as the reference writes it. */
static void add_grad_random(void **state) {
    (void)state;
    test_rng r = {15};
    for (int di = 0; di < COUNT(add_dtypes); di++)
        for (int iter = 0; iter < 40; iter++) {
            ndx_dtype dt = add_dtypes[di];
            ndx_sparse_tensor a, b;
            int canonical = iter % 2 == 0;
            random_pair(&r, dt, canonical ? 0 : 2, &a, &b);
            ndx_tensor thr = threshold_of(dt, (int)rng_range(&r, 0, 3));
            ndx_error err;
            ndx_sparse_tensor sum = {0};
            assert_ok(ndx_sparse_add(&a, &b, &thr, NULL, &sum, &err), &err);
            int64_t ns = sum.indices.shape[0], R = sum.indices.shape[1];
            ndx_tensor g = test_tensor_v(dt, 0, 1, ns);
            test_fill_random(&r, &g);
            ndx_tensor ga = {0}, gb = {0}, ra, rb;
            char why[REF_WHY];
            assert_int_equal(ref_sparse_add_grad(&g, &a.indices, &b.indices, &sum.indices, &ra,
                                                 &rb, why),
                             REF_OK);
            assert_ok(ndx_sparse_add_grad(&g, &a.indices, &b.indices, &sum.indices, NULL, &ga, &gb,
                                          &err),
                      &err);
            assert_tensor_eq(&ga, &ra);
            assert_tensor_eq(&gb, &rb);
            if (canonical) {
                size_t w = g.itemsize;
                const ndx_sparse_tensor *in[2] = {&a, &b};
                const ndx_tensor *got[2] = {&ga, &gb};
                for (int m = 0; m < 2; m++)
                    for (int64_t i = 0; i < in[m]->indices.shape[0]; i++) {
                        unsigned char want[16] = {0};
                        for (int64_t k = 0; k < ns; k++) {
                            int same = 1;
                            for (int64_t d = 0; d < R; d++)
                                same &= test_get_index(&in[m]->indices, i * R + d) ==
                                        ((int64_t *)sum.indices.data)[k * R + d];
                            if (same) memcpy(want, (unsigned char *)g.data + k * w, w);
                        }
                        assert_memory_equal((unsigned char *)got[m]->data + i * w, want, w);
                    }
            }
            ndx_tensor_free(&ga);
            ndx_tensor_free(&gb);
            ref_tensor_free(&ra);
            ref_tensor_free(&rb);
            test_tensor_free(&g);
            test_tensor_free(&thr);
            ndx_sparse_free(&sum);
            test_sparse_free(&a);
            test_sparse_free(&b);
        }
}

/* ---- errors: a clear message and the outputs untouched ------------------------------------ */

typedef struct {
    ndx_sparse_tensor out;
    test_guard g[3];
} guarded;

static guarded guard_new(ndx_dtype vt, int64_t nnz, int rank) {
    guarded x;
    x.out.indices = test_tensor_v(NDX_INT64, 0, 2, nnz, rank);
    x.out.values = test_tensor_v(vt, 0, 1, nnz);
    x.out.dense_shape = test_tensor_v(NDX_INT64, 0, 1, rank);
    x.g[0] = test_guard_fill(&x.out.indices, 0xa5);
    x.g[1] = test_guard_fill(&x.out.values, 0x5a);
    x.g[2] = test_guard_fill(&x.out.dense_shape, 0x3c);
    return x;
}

static void guard_check_del(guarded *x) {
    assert_untouched(&x->g[0], &x->out.indices);
    assert_untouched(&x->g[1], &x->out.values);
    assert_untouched(&x->g[2], &x->out.dense_shape);
    test_sparse_free(&x->out);
}

typedef enum { OP_ADD, OP_MAX, OP_MIN } two_op;

static void two_fails(two_op op, const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                      const ndx_tensor *thr, ndx_status code, const char *needle) {
    ndx_error err;
    guarded g = guard_new(a->values.dtype, 4, 2);
    ndx_status st = op == OP_ADD   ? ndx_sparse_add(a, b, thr, NULL, &g.out, &err)
                    : op == OP_MAX ? ndx_sparse_maximum(a, b, NULL, &g.out, &err)
                                   : ndx_sparse_minimum(a, b, NULL, &g.out, &err);
    assert_fails(st, &err, code, needle);
    guard_check_del(&g);
}

/* ---- the fused merge (outputs the op allocates, int64 indices) against the checked path ---- */

/* Runs op on a and b at 1..TEST_THREADS threads into outputs the op allocates (the fused merge
 * for int64 indices) and into outputs the caller gives (the checked merge), and asserts every
 * result equals ref. */
static void both_paths_equal(two_op op, const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                             const ndx_tensor *thr, const ndx_sparse_tensor *ref) {
    for (int threads = 1; threads <= TEST_THREADS; threads++)
        for (int given = 0; given < 2; given++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_error err;
            ndx_sparse_tensor out = {0};
            if (given)
                out = preallocated(op == OP_ADD   ? ndx_sparse_add_shape(a, b, thr, &out, &err)
                                   : op == OP_MAX ? ndx_sparse_maximum_shape(a, b, &out, &err)
                                                  : ndx_sparse_minimum_shape(a, b, &out, &err),
                                   &out, &err);
            ndx_status st = op == OP_ADD   ? ndx_sparse_add(a, b, thr, &opt, &out, &err)
                            : op == OP_MAX ? ndx_sparse_maximum(a, b, &opt, &out, &err)
                                           : ndx_sparse_minimum(a, b, &opt, &out, &err);
            assert_ok(st, &err);
            assert_sparse_eq(&out, ref);
            if (given)
                test_sparse_free(&out);
            else
                ndx_sparse_free(&out);
        }
}

static ndx_sparse_tensor ref_of(two_op op, const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                                const ndx_tensor *thr) {
    char why[REF_WHY];
    ndx_sparse_tensor ref;
    ref_verdict v = op == OP_ADD ? ref_sparse_add(a, b, thr, &ref, why)
                                 : ref_sparse_minmax(op == OP_MAX, a, b, &ref, why);
    return want_ok(v, ref, why);
}

/* Dense shapes of ranks 1-3 large enough that sp_random gives int64 indices, which the fused
 * merge reads; entry counts large enough for several pieces at 2 and 3 threads. */
static const int64_t fused_dims[3][3] = {{90000}, {300, 300}, {50, 40, 45}};

static void fused_matches_checked(void **state) {
    (void)state;
    test_rng r = {21};
    for (two_op op = OP_ADD; op <= OP_MIN; op++) {
        const ndx_dtype *dts = op == OP_ADD ? add_dtypes : minmax_dtypes;
        int ndt = op == OP_ADD ? COUNT(add_dtypes) : COUNT(minmax_dtypes);
        for (int di = 0; di < ndt; di++)
            for (int iter = 0; iter < 3; iter++) {
                /* reduced: one iteration per dtype, turning so every mode and the threshold
                 * (iter > 0) still come up for each op */
                if (test_reduced() && iter != di % 3) continue;
                int R = 1 + (int)rng_below(&r, 3), mode = (iter + di) % 3;
                int repeats = mode == 1, shuffled = mode == 2;
                ndx_sparse_tensor a = sp_random(&r, dts[di], R, fused_dims[R - 1],
                                                rng_range(&r, 30000, 70000), repeats, shuffled);
                ndx_sparse_tensor b = sp_random(&r, dts[di], R, fused_dims[R - 1],
                                                rng_range(&r, 0, 60000), repeats,
                                                shuffled && rng_below(&r, 2));
                ndx_tensor thr = threshold_of(op == OP_ADD ? dts[di] : NDX_INT64,
                                              (int)rng_range(&r, -1, 3));
                const ndx_tensor *t = op == OP_ADD && iter ? &thr : NULL;
                ndx_sparse_tensor ref = ref_of(op, &a, &b, t);
                both_paths_equal(op, &a, &b, t, &ref);
                ref_sparse_free(&ref);
                test_tensor_free(&thr);
                test_sparse_free(&a);
                test_sparse_free(&b);
            }
    }
}

static void swap_rows(ndx_sparse_tensor *s, int64_t i, int64_t j) {
    int R = (int)s->indices.shape[1];
    for (int d = 0; d < R; d++) {
        int64_t x = test_get_index(&s->indices, i * R + d);
        test_set_index(&s->indices, i * R + d, test_get_index(&s->indices, j * R + d));
        test_set_index(&s->indices, j * R + d, x);
    }
}

/* Canonical inputs but for one pair of neighbours swapped next to where pieces are cut: the
 * fused merge must notice (inside a piece or across a cut) and give TensorFlow's one-loop
 * result. */
static void fused_order_breaks(void **state) {
    (void)state;
    test_rng r = {22};
    static const int parts[] = {2, 3, 4, 5, 8, 9, 12};
    for (int pi = 0; pi < COUNT(parts); pi++)
        for (int w = 1; w < parts[pi]; w++)
            for (int delta = -1; delta <= 1; delta++) {
                /* reduced: one swap per cut (before, at or after it, in turn), not all three */
                if (test_reduced() && delta != (pi + w) % 3 - 1) continue;
                ndx_sparse_tensor a = sp_random(&r, NDX_FLOAT32, 2, fused_dims[1], 60000, 0, 0);
                ndx_sparse_tensor b = sp_random(&r, NDX_FLOAT32, 2, fused_dims[1], 40000, 0, 0);
                ndx_sparse_tensor *in = rng_below(&r, 2) ? &a : &b;
                int64_t n = in->indices.shape[0], k = n * w / parts[pi] + delta;
                if (k >= 1 && k < n) swap_rows(in, k - 1, k);
                ndx_sparse_tensor ref = ref_of(OP_ADD, &a, &b, NULL);
                both_paths_equal(OP_ADD, &a, &b, NULL, &ref);
                ref_sparse_free(&ref);
                test_sparse_free(&a);
                test_sparse_free(&b);
            }
}

/* The fused merge checks each input's rows a block of 1024 index words (1024 / rank rows) at a
 * time, each block's first row against the last row of the block before. A block's last row
 * made the dense shape's last (out of order; blocks start at row 0 in the first piece) must
 * still give TensorFlow's one-loop result at every thread count (pieces merged past such a row
 * would not), and a row outside dense_shape at a block's edge the checked path's error. */
static void fused_block_edges(void **state) {
    (void)state;
    test_rng r = {24};
    for (int R = 1; R <= 3; R++)
        for (int64_t m = 1; m <= 3; m++)
            for (int delta = -1; delta <= 1; delta++) {
                ndx_sparse_tensor a = sp_random(&r, NDX_FLOAT32, R, fused_dims[R - 1], 60000, 0, 0);
                ndx_sparse_tensor b = sp_random(&r, NDX_FLOAT32, R, fused_dims[R - 1], 40000, 0, 0);
                int on_a = (int)rng_below(&r, 2);
                ndx_sparse_tensor *in = on_a ? &a : &b;
                int64_t k = m * (1024 / R) + delta, kept[3];
                for (int d = 0; d < R; d++) {
                    kept[d] = test_get_index(&in->indices, (k - 1) * R + d);
                    test_set_index(&in->indices, (k - 1) * R + d, fused_dims[R - 1][d] - 1);
                }
                ndx_sparse_tensor ref = ref_of(OP_ADD, &a, &b, NULL);
                both_paths_equal(OP_ADD, &a, &b, NULL, &ref);
                ref_sparse_free(&ref);
                for (int d = 0; d < R; d++) test_set_index(&in->indices, (k - 1) * R + d, kept[d]);
                test_set_index(&in->indices, k * R + rng_below(&r, R), -1);
                char needle[64];
                snprintf(needle, sizeof needle, "%s.indices[%lld]", on_a ? "a" : "b",
                         (long long)k);
                ndx_options opt = test_options(1, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                ndx_sparse_tensor out = {0};
                assert_fails(ndx_sparse_add(&a, &b, NULL, &opt, &out, &err), &err,
                             NDX_E_OUT_OF_RANGE, needle);
                assert_null(out.indices.data);
                assert_null(out.values.data);
                test_sparse_free(&a);
                test_sparse_free(&b);
            }
}

/* A row outside dense_shape anywhere (first, at a cut, last; in a, in b, in both; after a row
 * out of order): the checked path's error naming the first bad entry of the first input that
 * has one, and no output: none allocated, a given one untouched. */
static void fused_bad_rows(void **state) {
    (void)state;
    test_rng r = {23};
    for (int iter = 0; iter < 48; iter++) {
        ndx_sparse_tensor a = sp_random(&r, NDX_FLOAT64, 2, fused_dims[1], 50000, 0, 0);
        ndx_sparse_tensor b = sp_random(&r, NDX_FLOAT64, 2, fused_dims[1], 50000, 0, 0);
        int64_t n = a.indices.shape[0];
        int64_t spots[6] = {0, n / 4, n / 3, n / 2 + 1, n - 2, n - 1};
        int64_t pa = spots[iter % 6], pb = spots[rng_below(&r, 6)];
        int where = (iter / 6) % 3, swapped = (iter / 18) % 2; /* where: a, b or both */
        int64_t bad = rng_below(&r, 2) ? 300 : -1;
        if (where != 1) test_set_index(&a.indices, pa * 2 + rng_below(&r, 2), bad);
        if (where != 0) test_set_index(&b.indices, pb * 2 + rng_below(&r, 2), bad);
        if (swapped) swap_rows(where == 1 ? &b : &a, 0, 1); /* out of order first */
        char needle[64];
        snprintf(needle, sizeof needle, "%s.indices[%lld]", where == 1 ? "b" : "a",
                 (long long)(where == 1 ? pb : pa));
        if (swapped && (where == 1 ? pb : pa) <= 1) /* the swap moved the bad row */
            snprintf(needle, sizeof needle, "%s.indices[%lld]", where == 1 ? "b" : "a",
                     (long long)(1 - (where == 1 ? pb : pa)));
        for (int threads = 1; threads <= TEST_THREADS; threads++)
            for (two_op op = OP_ADD; op <= OP_MIN; op++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                ndx_sparse_tensor out = {0};
                ndx_status st = op == OP_ADD   ? ndx_sparse_add(&a, &b, NULL, &opt, &out, &err)
                                : op == OP_MAX ? ndx_sparse_maximum(&a, &b, &opt, &out, &err)
                                               : ndx_sparse_minimum(&a, &b, &opt, &out, &err);
                assert_fails(st, &err, NDX_E_OUT_OF_RANGE, needle);
                assert_null(out.indices.data);
                assert_null(out.values.data);
                assert_null(out.dense_shape.data);
                guarded g = guard_new(NDX_FLOAT64, 4, 2);
                st = op == OP_ADD   ? ndx_sparse_add(&a, &b, NULL, &opt, &g.out, &err)
                     : op == OP_MAX ? ndx_sparse_maximum(&a, &b, &opt, &g.out, &err)
                                    : ndx_sparse_minimum(&a, &b, &opt, &g.out, &err);
                assert_fails(st, &err, NDX_E_OUT_OF_RANGE, needle);
                guard_check_del(&g);
            }
        test_sparse_free(&a);
        test_sparse_free(&b);
    }
}

/* ---- long moves: outputs of hundreds of thousands of entries at 2 and 3 threads ---------- */

/* Entry i of `to` set to the negation of entry j of `from` (same dtype; sign bits flipped for
 * floats and complex, two's complement for integers): a sum of the two is 0. */
static void set_negated(ndx_tensor *to, int64_t i, const ndx_tensor *from, int64_t j) {
    size_t size = to->itemsize;
    unsigned char v[16];
    memcpy(v, (const unsigned char *)from->data + (size_t)j * size, size);
    ndx_dtype_kind k = ndx_dtype_kind_of(to->dtype);
    if (k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX) {
        size_t part = k == NDX_KIND_COMPLEX ? size / 2 : size;
        for (size_t p = part - 1; p < size; p += part) v[p] ^= 0x80; /* little-endian sign bits */
    } else {
        unsigned carry = 1; /* ~v + 1 */
        for (size_t p = 0; p < size; p++) {
            unsigned x = (unsigned)(unsigned char)~v[p] + carry;
            v[p] = (unsigned char)x;
            carry = x >> 8;
        }
    }
    memcpy((unsigned char *)to->data + (size_t)i * size, v, size);
}

/* The same sparse tensor with indices of dtype it (copied; free with test_sparse_free). */
static ndx_sparse_tensor with_index_dtype(const ndx_sparse_tensor *s, ndx_dtype it) {
    ndx_sparse_tensor c;
    int64_t n = s->indices.shape[0], R = s->indices.shape[1];
    c.indices = test_tensor_v(it, 0, 2, n, R);
    for (int64_t i = 0; i < n * R; i++) test_set_index(&c.indices, i, test_get_index(&s->indices, i));
    c.values = test_tensor_v(s->values.dtype, 0, 1, n);
    memcpy(c.values.data, s->values.data, (size_t)n * s->values.itemsize);
    c.dense_shape = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){R}, s->dense_shape.data);
    return c;
}

/* A canonical [1000, 1000] sparse tensor with an entry at each flat position k < 1,000,000 where
 * k % 3 == (k < shared ? 0 : rest), random values: two of them share the first `shared`
 * positions' entries and no others. */
static ndx_sparse_tensor sp_thirds(test_rng *r, ndx_dtype vt, int64_t shared, int64_t rest) {
    int64_t n = 0;
    for (int64_t k = 0; k < 1000000; k++) n += k % 3 == (k < shared ? 0 : rest);
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(NDX_INT64, 0, 2, n, 2);
    s.values = test_tensor_v(vt, 0, 1, n);
    s.dense_shape = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){2}, (int64_t[]){1000, 1000});
    int64_t *idx = s.indices.data;
    for (int64_t k = 0, i = 0; k < 1000000; k++)
        if (k % 3 == (k < shared ? 0 : rest)) {
            idx[2 * i] = k / 1000;
            idx[2 * i + 1] = k % 1000;
            i++;
        }
    test_fill_random(r, &s.values);
    return s;
}

/* Two inputs alike up to a fifth of the shape and apart after it: at 2 threads the pieces after
 * the shared part move down by about a megabyte, less than their own length, so each moves in
 * several rounds whose sources and destinations overlap from one round to the next. */
static void add_moves_in_rounds(void **state) {
    (void)state;
    test_rng r = {32};
    static const ndx_dtype dts[2] = {NDX_COMPLEX128, NDX_FLOAT32};
    for (int di = 0; di < 2; di++) {
        ndx_sparse_tensor a = sp_thirds(&r, dts[di], 210000, 0);
        ndx_sparse_tensor b = sp_thirds(&r, dts[di], 210000, 1);
        ndx_sparse_tensor ref = ref_of(OP_ADD, &a, &b, NULL), first = {0};
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_error err;
            ndx_sparse_tensor out = {0};
            assert_ok(ndx_sparse_add(&a, &b, NULL, &opt, &out, &err), &err);
            assert_sparse_eq(&out, &ref);
            if (!keep_first_or_assert_same_sparse(&first, &out, threads)) ndx_sparse_free(&out);
        }
        ndx_sparse_free(&first);
        ref_sparse_free(&ref);
        test_sparse_free(&a);
        test_sparse_free(&b);
    }
}

/* Canonical inputs of 300,000-odd entries each, about half of b where a has one and a quarter
 * of those cancelling: at 2 and 3 threads the pieces after the first move down by megabytes
 * (in rounds shared by the threads), with sums that cancel, drop under the threshold and
 * repeat around every cut. Every value dtype (one per value size when test_reduced()), int16 /
 * int32 / int64 indices, against the reference and bitwise alike at 1-3 threads; then a row
 * outside the shape near the end: the error, nothing allocated, a given output untouched. */
static void add_long_moves(void **state) {
    (void)state;
    test_rng r = {31};
    int64_t dims[2] = {1000, 1000};
    static const ndx_dtype its[3] = {NDX_INT64, NDX_INT32, NDX_INT16};
    for (int di = 0; di < COUNT(add_dtypes); di++) {
        ndx_dtype dt = add_dtypes[di];
        /* reduced: one dtype per value size (int8, int16, float32, float64, complex128), which
         * still has repeats, both thresholds and every index dtype */
        if (test_reduced() && (dt == NDX_INT32 || dt == NDX_INT64 || dt == NDX_COMPLEX64)) continue;
        int repeats = di % 3 == 2;
        ndx_sparse_tensor a = sp_random(&r, dt, 2, dims, 330000, repeats, 0);
        ndx_sparse_tensor b = sp_random(&r, dt, 2, dims, 330000, repeats, 0);
        /* a quarter of b's entries where a has one cancel a's (two rows per entry, row-major) */
        int64_t na = a.indices.shape[0], nb = b.indices.shape[0];
        for (int64_t i = 0, k = 0; i < na && k < nb;) {
            int64_t ka = test_get_index(&a.indices, 2 * i) * 1000 +
                         test_get_index(&a.indices, 2 * i + 1),
                    kb = test_get_index(&b.indices, 2 * k) * 1000 +
                         test_get_index(&b.indices, 2 * k + 1);
            if (ka == kb && rng_below(&r, 4) == 0) set_negated(&b.values, k, &a.values, i);
            i += ka <= kb;
            k += kb <= ka;
        }
        ndx_tensor thr = threshold_of(dt, di % 2 ? 2 : 0);
        ndx_sparse_tensor ref = ref_of(OP_ADD, &a, &b, &thr);
        ndx_sparse_tensor ai = with_index_dtype(&a, its[di % 3]), bi = with_index_dtype(&b, its[di % 3]);
        for (int narrow = 0; narrow < 2; narrow++) {
            const ndx_sparse_tensor *x = narrow ? &ai : &a, *y = narrow ? &bi : &b;
            ndx_sparse_tensor first = {0};
            for (int threads = 1; threads <= TEST_THREADS; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                ndx_sparse_tensor out = {0};
                assert_ok(ndx_sparse_add(x, y, &thr, &opt, &out, &err), &err);
                assert_sparse_eq(&out, &ref);
                if (!keep_first_or_assert_same_sparse(&first, &out, threads))
                    ndx_sparse_free(&out);
            }
            ndx_sparse_free(&first);
        }
        /* a row outside the shape in b's last piece: found after the pieces before it merged */
        int64_t bad = nb - 1 - rng_below(&r, nb / 16);
        test_set_index(&b.indices, 2 * bad + 1, 1000);
        char needle[64];
        snprintf(needle, sizeof needle, "b.indices[%lld]", (long long)bad);
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_error err;
            ndx_sparse_tensor out = {0};
            assert_fails(ndx_sparse_add(&a, &b, &thr, &opt, &out, &err), &err,
                         NDX_E_OUT_OF_RANGE, needle);
            assert_null(out.indices.data);
            assert_null(out.values.data);
            assert_null(out.dense_shape.data);
            guarded g = guard_new(dt, 4, 2);
            assert_fails(ndx_sparse_add(&a, &b, &thr, &opt, &g.out, &err), &err,
                         NDX_E_OUT_OF_RANGE, needle);
            guard_check_del(&g);
        }
        ref_sparse_free(&ref);
        test_tensor_free(&thr);
        test_sparse_free(&ai);
        test_sparse_free(&bi);
        test_sparse_free(&a);
        test_sparse_free(&b);
    }
}

static void add_errors(void **state) {
    (void)state;
    ndx_sparse_tensor a = sp_lit(NDX_FLOAT32, 2, dims3x3, 4, idx3x3, (double[]){1, 2, 3, 4});
    ndx_sparse_tensor r1 = sp_lit(NDX_FLOAT32, 1, (int64_t[]){9}, 1, VALS(0), (double[]){1});
    ndx_sparse_tensor wide =
        sp_lit(NDX_FLOAT32, 2, (int64_t[]){3, 4}, 1, VALS(0, 0), (double[]){1});
    ndx_sparse_tensor f64 = sp_lit(NDX_FLOAT64, 2, dims3x3, 1, VALS(0, 0), (double[]){1});
    ndx_sparse_tensor outside =
        sp_lit(NDX_FLOAT32, 2, dims3x3, 2, VALS(0, 0, 1, 3), (double[]){1, 2});
    ndx_sparse_tensor negative =
        sp_lit(NDX_FLOAT32, 2, dims3x3, 1, VALS(-1, 0), (double[]){1});
    for (two_op op = OP_ADD; op <= OP_MIN; op++) {
        two_fails(op, &a, &r1, NULL, NDX_E_INVALID_ARGUMENT,
                  "Operands do not have the same ranks; got a of rank 2 and b of rank 1");
        two_fails(op, &a, &wide, NULL, NDX_E_INVALID_ARGUMENT,
                  "Operands' shapes do not match: got 3 and 4 for dimension 1");
        two_fails(op, &a, &f64, NULL, NDX_E_INVALID_ARGUMENT,
                  "a.values are float32 but b.values are float64");
        two_fails(op, &a, &outside, NULL, NDX_E_OUT_OF_RANGE, "b.indices[1]");
        two_fails(op, &negative, &a, NULL, NDX_E_OUT_OF_RANGE, "a.indices[0]");
    }
    /* dtypes TensorFlow's kernels do not take */
    ndx_sparse_tensor u8 = sp_random(&(test_rng){1}, NDX_UINT8, 2, dims3x3, 2, 0, 0);
    two_fails(OP_ADD, &u8, &u8, NULL, NDX_E_INVALID_ARGUMENT, "values of dtype uint8");
    ndx_sparse_tensor c64 = sp_random(&(test_rng){1}, NDX_COMPLEX64, 2, dims3x3, 2, 0, 0);
    two_fails(OP_MAX, &c64, &c64, NULL, NDX_E_INVALID_ARGUMENT, "values of dtype complex64");
    /* the threshold: a scalar of the values' real dtype */
    ndx_tensor vec = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    two_fails(OP_ADD, &a, &a, &vec, NDX_E_INVALID_ARGUMENT,
              "the magnitude threshold must be a scalar: got shape [2]");
    ndx_tensor d = test_tensor(NDX_FLOAT64, 0, 0, NULL);
    two_fails(OP_ADD, &a, &a, &d, NDX_E_INVALID_ARGUMENT,
              "threshold must be float32 for values of dtype float32, not float64");
    two_fails(OP_ADD, &c64, &c64, &d, NDX_E_INVALID_ARGUMENT,
              "threshold must be float32 for values of dtype complex64");
    /* a preallocated output of the wrong size */
    {
        ndx_error err;
        guarded g = guard_new(NDX_FLOAT32, 3, 2);
        assert_fails(ndx_sparse_add(&a, &a, NULL, NULL, &g.out, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "out.indices");
        guard_check_del(&g);
    }
    /* infer on partial specs says the same */
    {
        ndx_error err;
        ndx_sparse_spec sa = ndx_sparse_spec_of(&a), sr = ndx_sparse_spec_of(&r1), so;
        assert_fails(ndx_sparse_add_infer(&sa, &sr, NULL, &so, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "Operands do not have the same ranks");
        ndx_spec v = ndx_spec_of(&vec);
        assert_fails(ndx_sparse_add_infer(&sa, &sa, &v, &so, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "must be a scalar");
        assert_ok(ndx_sparse_maximum_infer(&sa, &sa, &so, &err), &err);
        assert_int_equal(so.indices.shape[0], NDX_UNKNOWN);
        assert_int_equal(so.indices.shape[1], 2);
        assert_int_equal(so.values.dtype, NDX_FLOAT32);
    }
    test_tensor_free(&vec);
    test_tensor_free(&d);
    test_sparse_free(&u8);
    test_sparse_free(&c64);
    test_sparse_free(&a);
    test_sparse_free(&r1);
    test_sparse_free(&wide);
    test_sparse_free(&f64);
    test_sparse_free(&outside);
    test_sparse_free(&negative);
}

static void dense_add_fails(const ndx_sparse_tensor *a, const ndx_tensor *b, ndx_status code,
                            const char *needle) {
    ndx_error err;
    ndx_tensor out = test_tensor(b->dtype, b->itemsize, b->rank, b->shape);
    test_guard g = test_guard_fill(&out, 0x77);
    assert_fails(ndx_sparse_dense_add(a, b, NULL, &out, &err), &err, code, needle);
    assert_untouched(&g, &out);
    test_tensor_free(&out);
}

static void dense_add_errors(void **state) {
    (void)state;
    ndx_sparse_tensor a = sp_lit(NDX_INT32, 2, (int64_t[]){2, 2}, 1, VALS(0, 0), (double[]){0});
    ndx_tensor b = test_tensor_v(NDX_INT32, 0, 2, 2, 2);
    memset(b.data, 0, 16);
    /* sparse_add_op_test.py testInvalidSparseTensor: -1 and 3 are invalid indices */
    ndx_sparse_tensor bad1 = sp_lit(NDX_INT32, 2, (int64_t[]){2, 2}, 1, VALS(-1, 0), (double[]){0});
    ndx_sparse_tensor bad2 = sp_lit(NDX_INT32, 2, (int64_t[]){2, 2}, 1, VALS(1, 3), (double[]){0});
    dense_add_fails(&bad1, &b, NDX_E_OUT_OF_RANGE, "a.indices[0] = [-1, 0] is outside");
    dense_add_fails(&bad2, &b, NDX_E_OUT_OF_RANGE, "a.indices[0] = [1, 3] is outside");
    ndx_tensor b3 = test_tensor_v(NDX_INT32, 0, 3, 2, 2, 1);
    dense_add_fails(&a, &b3, NDX_E_INVALID_ARGUMENT,
                    "two operands have different ranks; received: 2 and 3");
    ndx_tensor b23 = test_tensor_v(NDX_INT32, 0, 2, 2, 3);
    dense_add_fails(&a, &b23, NDX_E_INVALID_ARGUMENT,
                    "dimension 1 does not equal (no broadcasting is supported): sparse side 2 vs "
                    "dense side 3");
    ndx_tensor bf = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 2);
    dense_add_fails(&a, &bf, NDX_E_INVALID_ARGUMENT, "a.values are int32 but b is float32");
    ndx_sparse_tensor ab = sp_random(&(test_rng){2}, NDX_BOOL, 2, (int64_t[]){2, 2}, 1, 0, 0);
    ndx_tensor bb = test_tensor_v(NDX_BOOL, 0, 2, 2, 2);
    dense_add_fails(&ab, &bb, NDX_E_INVALID_ARGUMENT, "values of dtype bool are not supported");
    /* out overlapping b without being b */
    {
        ndx_error err;
        ndx_tensor big = test_tensor_v(NDX_INT32, 0, 1, 5);
        ndx_tensor bview = ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 2), big.data);
        ndx_tensor oview = ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 2), (int32_t *)big.data + 1);
        test_guard g = test_guard_take(&big);
        assert_fails(ndx_sparse_dense_add(&a, &bview, NULL, &oview, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "shares memory");
        assert_untouched(&g, &big);
        test_tensor_free(&big);
    }
    test_tensor_free(&b);
    test_tensor_free(&b3);
    test_tensor_free(&b23);
    test_tensor_free(&bf);
    test_tensor_free(&bb);
    test_sparse_free(&a);
    test_sparse_free(&ab);
    test_sparse_free(&bad1);
    test_sparse_free(&bad2);
}

static void grad_fails(const ndx_tensor *g, const ndx_tensor *ai, const ndx_tensor *bi,
                       const ndx_tensor *si, const char *needle) {
    ndx_error err;
    ndx_tensor ga = test_tensor_v(g->dtype, 0, 1, ai->rank == 2 ? ai->shape[0] : 1);
    ndx_tensor gb = test_tensor_v(g->dtype, 0, 1, bi->rank == 2 ? bi->shape[0] : 1);
    test_guard x = test_guard_fill(&ga, 0x11), y = test_guard_fill(&gb, 0x22);
    assert_fails(ndx_sparse_add_grad(g, ai, bi, si, NULL, &ga, &gb, &err), &err,
                 NDX_E_INVALID_ARGUMENT, needle);
    assert_untouched(&x, &ga);
    assert_untouched(&y, &gb);
    test_tensor_free(&ga);
    test_tensor_free(&gb);
}

static void add_grad_errors(void **state) {
    (void)state;
    ndx_tensor g = test_tensor_v(NDX_FLOAT32, 0, 1, 3);
    ndx_tensor m2 = test_tensor_v(NDX_INT64, 0, 2, 3, 2), m3 = test_tensor_v(NDX_INT64, 0, 2, 3, 3);
    ndx_tensor v = test_tensor_v(NDX_INT64, 0, 1, 3), s4 = test_tensor_v(NDX_INT64, 0, 2, 4, 2);
    ndx_tensor gm = test_tensor_v(NDX_FLOAT32, 0, 2, 3, 1), gu = test_tensor_v(NDX_UINT8, 0, 1, 3);
    memset(m2.data, 0, 48);
    memset(m3.data, 0, 72);
    memset(s4.data, 0, 64);
    grad_fails(&g, &v, &m2, &m2, "input indices should be matrices but a_indices has shape [3]");
    grad_fails(&gm, &m2, &m2, &m2, "backprop_val_grad should be a vector");
    grad_fails(&g, &m2, &m3, &m2, "the densified operands should have the same ndims; for A, B, "
                                  "sum got: 2, 3, 2");
    grad_fails(&g, &m2, &m2, &s4, "# elements of backprop_val_grad and # rows of sum_indices "
                                  "should match (#nnz of sum): got 3 and 4");
    grad_fails(&gu, &m2, &m2, &m2, "values of dtype uint8 are not supported");
    test_tensor_free(&g);
    test_tensor_free(&m2);
    test_tensor_free(&m3);
    test_tensor_free(&v);
    test_tensor_free(&s4);
    test_tensor_free(&gm);
    test_tensor_free(&gu);
}

/* ---- sparse_dense_cwise (SparseDenseCwiseMul / Div / Add) --------------------------------- */

/* The naive reference: value op the dense element at the entry's coordinates, each taken as 0
 * along a dense dim of 1, computed in double (the test's values are small integers, so every
 * result here is exact in every dtype, divisions too: the divisors divide). */
static double cwise_ref(ndx_sparse_dense_op op, double x, double y) {
    return op == NDX_SPARSE_DENSE_MUL ? x * y : op == NDX_SPARSE_DENSE_DIV ? x / y : x + y;
}

static double elem_at(const ndx_tensor *t, int64_t i) {
    const unsigned char *p = (const unsigned char *)t->data + i * (int64_t)t->itemsize;
    switch (t->dtype) {
    case NDX_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return ndx_float16_to_float(h); }
    case NDX_BFLOAT16: { uint16_t h; memcpy(&h, p, 2); return ndx_bfloat16_to_float(h); }
    case NDX_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
    case NDX_FLOAT64: { double f; memcpy(&f, p, 8); return f; }
    case NDX_INT8: return *(const int8_t *)p;
    case NDX_UINT8: return *p;
    case NDX_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case NDX_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case NDX_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case NDX_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case NDX_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    default: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    }
}

/* Element i of t set to v (a small integer, exact in every dtype). */
static void set_elem(ndx_tensor *t, int64_t i, double v) {
    unsigned char *p = (unsigned char *)t->data + i * (int64_t)t->itemsize;
    switch (t->dtype) {
    case NDX_FLOAT16: { uint16_t h = ndx_float_to_float16((float)v); memcpy(p, &h, 2); } break;
    case NDX_BFLOAT16: { uint16_t h = ndx_float_to_bfloat16((float)v); memcpy(p, &h, 2); } break;
    case NDX_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); } break;
    case NDX_FLOAT64: memcpy(p, &v, 8); break;
    default: { int64_t w = (int64_t)v; memcpy(p, &w, t->itemsize); } break; /* little-endian */
    }
}

static void cwise_random(void **state) {
    (void)state;
    test_rng r = {16};
    static const int64_t sp_shapes[4][3] = {{10, 10, 10}, {5, 5}, {1618}, {3, 3, 7}};
    static const int64_t dn_shapes[4][3] = {{10, 10, 1}, {5, 5}, {1}, {1, 7}};
    static const int sp_ranks[4] = {3, 2, 1, 3}, dn_ranks[4] = {3, 2, 1, 2};
    for (int di = 0; di < COUNT(minmax_dtypes); di++)
        for (int sh = 0; sh < 4; sh++)
            for (int op = 0; op < 3; op++) {
                ndx_dtype dt = minmax_dtypes[di];
                if (op == NDX_SPARSE_DENSE_DIV && dt == NDX_BFLOAT16) continue; /* inexact */
                ndx_sparse_tensor sp = sp_random(&r, dt, sp_ranks[sh], sp_shapes[sh], 300,
                                                 sh == 1, sh == 3);
                ndx_tensor dense = test_tensor(dt, 0, dn_ranks[sh], dn_shapes[sh]);
                int64_t dn = test_count(&dense);
                for (int64_t i = 0; i < dn; i++) set_elem(&dense, i, (double)rng_range(&r, 1, 4));
                int64_t nnz = sp.values.shape[0];
                /* sp's values: a multiple of the divisor it meets, so the division is exact */
                int R = sp_ranks[sh], lead = R - dn_ranks[sh];
                ndx_tensor want = test_tensor_v(NDX_FLOAT64, 0, 1, nnz);
                for (int64_t i = 0; i < nnz; i++) {
                    int64_t off = 0;
                    for (int d = lead; d < R; d++) {
                        int64_t dim = dn_shapes[sh][d - lead];
                        off = off * dim + (dim == 1 ? 0 : test_get_index(&sp.indices, i * R + d));
                    }
                    double y = elem_at(&dense, off), x = y * (double)rng_range(&r, 1, 3);
                    set_elem(&sp.values, i, x);
                    ((double *)want.data)[i] = cwise_ref((ndx_sparse_dense_op)op, x, y);
                }
                ndx_tensor first = {0};
                for (int threads = 1; threads <= TEST_THREADS; threads++) {
                    ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                    ndx_error err;
                    ndx_tensor out = {0};
                    assert_ok(ndx_sparse_dense_cwise((ndx_sparse_dense_op)op, &sp, &dense, &opt,
                                                     &out, &err),
                              &err);
                    assert_int_equal(out.dtype, dt);
                    assert_int_equal(out.shape[0], nnz);
                    for (int64_t i = 0; i < nnz; i++) {
                        double got = elem_at(&out, i), w = ((double *)want.data)[i];
                        if (got != w)
                            fail_msg("%s op %d shape %d entry %lld: %g, want %g",
                                     ndx_dtype_name(dt), op, sh, (long long)i, got, w);
                    }
                    if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
                }
                ndx_tensor_free(&first);
                test_tensor_free(&want);
                test_tensor_free(&dense);
                test_sparse_free(&sp);
            }
}

static void cwise_fails(ndx_sparse_dense_op op, const ndx_sparse_tensor *sp,
                        const ndx_tensor *dense, ndx_status code, const char *needle) {
    ndx_error err;
    ndx_tensor out = test_tensor_v(sp->values.dtype, 0, 1, sp->values.shape[0]);
    test_guard g = test_guard_fill(&out, 0x3c);
    assert_fails(ndx_sparse_dense_cwise(op, sp, dense, NULL, &out, &err), &err, code, needle);
    assert_untouched(&g, &out);
    test_tensor_free(&out);
}

/* sparse_ops_test.py: testCwiseAdd (identity + ones, dense broadcast or not), testCwiseShapeValidation
 * (GitHub 24072), and the other errors. */
static void cwise_tf_cases_and_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor id = sp_lit(NDX_INT32, 2, (int64_t[]){2, 2}, 2, VALS(0, 0, 1, 1),
                                  (double[]){1, 1});
    int32_t ones[4] = {1, 1, 1, 1};
    ndx_tensor d22 = test_tensor_from(NDX_INT32, 0, 2, SHAPE(2, 2), ones);
    ndx_tensor d1 = test_tensor_from(NDX_INT32, 0, 1, SHAPE(1), ones);
    for (int k = 0; k < 2; k++) {
        ndx_tensor out = {0};
        assert_ok(ndx_sparse_dense_cwise(NDX_SPARSE_DENSE_ADD, &id, k ? &d1 : &d22, NULL, &out,
                                         &err),
                  &err);
        assert_int_equal(((int32_t *)out.data)[0], 2);
        assert_int_equal(((int32_t *)out.data)[1], 2);
        ndx_tensor_free(&out);
    }
    ndx_sparse_tensor b = sp_lit(NDX_INT32, 4, (int64_t[]){1, 1, 4, 2}, 2,
                                 VALS(0, 0, 1, 0, 0, 0, 3, 0), (double[]){10, 20});
    ndx_tensor a = test_tensor_v(NDX_INT32, 0, 3, 3, 4, 1);
    cwise_fails(NDX_SPARSE_DENSE_MUL, &b, &a, NDX_E_INVALID_ARGUMENT,
                "sparse_dense_cwise_mul: broadcasts dense to sparse only; got incompatible "
                "shapes: [1, 1, 4, 2] vs. [3, 4, 1]");
    ndx_tensor big = test_tensor_v(NDX_INT32, 0, 3, 1, 1, 1);
    cwise_fails(NDX_SPARSE_DENSE_MUL, &id, &big, NDX_E_INVALID_ARGUMENT,
                "broadcasts dense to sparse only; dense has rank 3, sp rank 2");
    int32_t zero_one[2] = {0, 1};
    ndx_tensor z = test_tensor_from(NDX_INT32, 0, 1, SHAPE(2), zero_one);
    cwise_fails(NDX_SPARSE_DENSE_DIV, &id, &z, NDX_E_INVALID_ARGUMENT,
                "sparse_dense_cwise_div: cannot divide by zero, but dense holds 0 where "
                "sp.indices[0] = [0, 0] reads it");
    ndx_tensor f = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 2);
    cwise_fails(NDX_SPARSE_DENSE_ADD, &id, &f, NDX_E_INVALID_ARGUMENT,
                "sp.values are int32 but dense is float32");
    ndx_sparse_tensor out_of = sp_lit(NDX_INT32, 2, (int64_t[]){2, 2}, 1, VALS(0, 2), (double[]){1});
    cwise_fails(NDX_SPARSE_DENSE_MUL, &out_of, &d22, NDX_E_OUT_OF_RANGE,
                "sparse_dense_cwise_mul: sp.indices[0] = [0, 2] is outside dense_shape [2, 2]");
    ndx_sparse_tensor c = sp_random(&(test_rng){3}, NDX_COMPLEX64, 1, (int64_t[]){4}, 2, 0, 0);
    ndx_tensor dc = test_tensor_v(NDX_COMPLEX64, 0, 1, 4);
    cwise_fails(NDX_SPARSE_DENSE_MUL, &c, &dc, NDX_E_INVALID_ARGUMENT,
                "values of dtype complex64 are not supported");
    test_sparse_free(&id);
    test_sparse_free(&b);
    test_sparse_free(&out_of);
    test_sparse_free(&c);
    test_tensor_free(&d22);
    test_tensor_free(&d1);
    test_tensor_free(&a);
    test_tensor_free(&big);
    test_tensor_free(&z);
    test_tensor_free(&f);
    test_tensor_free(&dc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tf_add_self),
        cmocka_unit_test(tf_add_self_and_negation),
        cmocka_unit_test(tf_small_values_vanish),
        cmocka_unit_test(threshold_only_for_sums),
        cmocka_unit_test(tf_minmax_basic),
        cmocka_unit_test(minmax_dense_meaning),
        cmocka_unit_test(minmax_nan_and_ties),
        cmocka_unit_test(dense_add_basic),
        cmocka_unit_test(add_random),
        cmocka_unit_test(minmax_random),
        cmocka_unit_test(merge_large_threads),
        cmocka_unit_test(dense_add_random),
        cmocka_unit_test(add_grad_random),
        cmocka_unit_test(add_errors),
        cmocka_unit_test(fused_matches_checked),
        cmocka_unit_test(fused_order_breaks),
        cmocka_unit_test(fused_bad_rows),
        cmocka_unit_test(fused_block_edges),
        cmocka_unit_test(add_long_moves),
        cmocka_unit_test(add_moves_in_rounds),
        cmocka_unit_test(dense_add_errors),
        cmocka_unit_test(add_grad_errors),
        cmocka_unit_test(cwise_random),
        cmocka_unit_test(cwise_tf_cases_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
