/* test_sparse_count.c — dense_count_sparse_output and sparse_count_sparse_output (TensorFlow's
 * DenseCountSparseOutput / SparseCountSparseOutput): tf.sparse.bincount's documented examples,
 * random inputs against a naive count (a dense array of bins per batch; the bins some value
 * landed in are the entries) in every weights dtype TensorFlow registers, 1-3 threads alike,
 * and every error with the outputs untouched. */
#include "ndx_test.h"

#include <math.h>
#include <stdio.h>

static const int64_t data[8] = {10, 20, 30, 20, 11, 101, 11, 10001};

static ndx_sparse_tensor count_dense(const ndx_tensor *v, const ndx_tensor *w,
                                     ndx_count_attrs a) {
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    ndx_error err;
    assert_ok(ndx_dense_count_sparse_output(v, w, &a, NULL, &out, &err), &err);
    return out;
}

static void tensorflow_examples(void **state) {
    (void)state;
    ndx_tensor v = ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 4), (void *)data);
    ndx_tensor none = ndx_tensor_make(NDX_INT64, 1, SHAPE(0), NULL);
    ndx_sparse_tensor o = count_dense(&v, &none, (ndx_count_attrs){-1, -1, 0});
    static const int64_t want_idx[12] = {0, 10, 0, 20, 0, 30, 1, 11, 1, 101, 1, 10001};
    static const int64_t want_val[6] = {1, 2, 1, 2, 1, 1};
    assert_int_equal(o.indices.shape[0], 6);
    assert_memory_equal(o.indices.data, want_idx, sizeof want_idx);
    assert_memory_equal(o.values.data, want_val, sizeof want_val);
    assert_memory_equal(o.dense_shape.data, ((int64_t[]){2, 10002}), 16);
    ndx_sparse_free(&o);

    o = count_dense(&v, &none, (ndx_count_attrs){500, 500, 0});
    assert_int_equal(o.indices.shape[0], 5);
    assert_memory_equal(o.indices.data, want_idx, 10 * 8);
    assert_memory_equal(o.dense_shape.data, ((int64_t[]){2, 500}), 16);
    ndx_sparse_free(&o);

    o = count_dense(&v, &none, (ndx_count_attrs){-1, -1, 1});
    for (int k = 0; k < 6; k++) assert_int_equal(((int64_t *)o.values.data)[k], 1);
    ndx_sparse_free(&o);

    float wv[8] = {2, 0.25f, 15, 0.5f, 2, 17, 3, 0.9f};
    ndx_tensor w = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 4), wv);
    o = count_dense(&v, &w, (ndx_count_attrs){-1, -1, 0});
    static const float want_w[6] = {2, 0.75f, 15, 5, 17, 0.9f};
    assert_int_equal(o.values.dtype, NDX_FLOAT32);
    assert_memory_equal(o.values.data, want_w, sizeof want_w);
    ndx_sparse_free(&o);

    /* nothing counted: one bin, as TensorFlow's kernel (its largest value starts at 0) */
    ndx_tensor neg = ndx_tensor_make(NDX_INT32, 1, SHAPE(2), (int32_t[]){-1, -5});
    ndx_tensor none32 = ndx_tensor_make(NDX_INT32, 1, SHAPE(0), NULL);
    o = count_dense(&neg, &none32, (ndx_count_attrs){-1, -1, 0});
    assert_int_equal(o.indices.shape[0], 0);
    assert_int_equal(o.indices.shape[1], 1);
    assert_int_equal(((int64_t *)o.dense_shape.data)[0], 1);
    ndx_sparse_free(&o);
}

/* The naive count of batch b: bins[v] over the counted values, and whether any landed. */
static void naive(const int64_t *vals, const double *w, int64_t n, int64_t size, int binary,
                  double *bins, int *hit) {
    for (int64_t v = 0; v < size; v++) bins[v] = hit[v] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (vals[i] < 0 || vals[i] >= size) continue;
        hit[vals[i]] = 1;
        bins[vals[i]] = binary ? 1 : bins[vals[i]] + (w ? w[i] : 1);
    }
}

static double number_at(const ndx_tensor *t, int64_t i) {
    const unsigned char *p = (const unsigned char *)t->data + i * (int64_t)t->itemsize;
    switch (t->dtype) {
    case NDX_INT8: return *(const int8_t *)p;
    case NDX_INT16: { int16_t x; memcpy(&x, p, 2); return x; }
    case NDX_INT32: { int32_t x; memcpy(&x, p, 4); return x; }
    case NDX_INT64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case NDX_UINT8: return *p;
    case NDX_UINT16: { uint16_t x; memcpy(&x, p, 2); return x; }
    case NDX_UINT32: { uint32_t x; memcpy(&x, p, 4); return x; }
    case NDX_UINT64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
    case NDX_FLOAT32: { float x; memcpy(&x, p, 4); return x; }
    default: { double x; memcpy(&x, p, 8); return x; }
    }
}

static void random_against_naive(void **state) {
    (void)state;
    static const ndx_dtype wts[] = {NDX_INT8, NDX_INT16, NDX_INT32, NDX_INT64, NDX_UINT8,
                                    NDX_UINT16, NDX_UINT32, NDX_UINT64, NDX_FLOAT32,
                                    NDX_FLOAT64};
    test_rng r = {909};
    for (size_t k = 0; k < sizeof wts / sizeof wts[0]; k++) {
        for (int rep = 0; rep < 6; rep++) {
            int64_t B = rng_range(&r, 1, 4), N = rng_range(&r, 0, 30);
            ndx_tensor v = test_tensor_v(rep % 2 ? NDX_INT32 : NDX_INT64, 0, 2, B, N);
            for (int64_t i = 0; i < B * N; i++) test_set_index(&v, i, rng_range(&r, -2, 15));
            int weighted = rep % 3 != 0, binary = rep == 3;
            ndx_tensor w = weighted ? test_tensor_v(wts[k], 0, 2, B, N)
                                    : test_tensor_v(wts[k], 0, 1, 0);
            if (weighted) test_fill_random(&r, &w);
            ndx_count_attrs a = {rng_range(&r, -1, 20), rep == 4 ? 9 : -1, binary};
            ndx_sparse_tensor first;
            for (int threads = 1; threads <= TEST_THREADS; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_sparse_tensor o;
                memset(&o, 0, sizeof o);
                ndx_error err;
                assert_ok(ndx_dense_count_sparse_output(&v, &w, &a, &opt, &o, &err), &err);
                if (threads == 1) {
                    first = o;
                    continue;
                }
                assert_sparse_eq(&o, &first);
                ndx_sparse_free(&o);
            }
            int64_t most = 0;
            for (int64_t i = 0; i < B * N; i++) {
                int64_t x = test_get_index(&v, i);
                if (x >= 0 && (a.maxlength <= 0 || x < a.maxlength) && x > most) most = x;
            }
            int64_t size = a.maxlength > 0 ? a.maxlength : (most + 1 > a.minlength ? most + 1
                                                                                  : a.minlength);
            assert_int_equal(((int64_t *)first.dense_shape.data)[1], size);
            double bins[64], wrow[64];
            int hit[64];
            int64_t vals[64], o = 0;
            for (int64_t b = 0; b < B; b++) {
                for (int64_t i = 0; i < N; i++) {
                    vals[i] = test_get_index(&v, b * N + i);
                    wrow[i] = weighted ? number_at(&w, b * N + i) : 0;
                }
                naive(vals, weighted ? wrow : NULL, N, size, binary, bins, hit);
                for (int64_t x = 0; x < size; x++) {
                    if (!hit[x]) continue;
                    assert_int_equal(((int64_t *)first.indices.data)[2 * o], b);
                    assert_int_equal(((int64_t *)first.indices.data)[2 * o + 1], x);
                    double got = number_at(&first.values, o);
                    if (wts[k] == NDX_FLOAT32)
                        assert_true(fabs(got - bins[x]) <= 1e-4 * (1 + fabs(bins[x])));
                    else if (wts[k] == NDX_FLOAT64 || !weighted || wts[k] == NDX_INT16 ||
                             wts[k] == NDX_INT32 || wts[k] == NDX_INT64)
                        assert_true(got == bins[x]); /* (these sums cannot wrap) */
                    else if (wts[k] == NDX_UINT64) /* wraps as uint64 */
                        assert_true((uint64_t)((int64_t *)first.values.data)[o] ==
                                    (uint64_t)(int64_t)bins[x]);
                    o++;
                }
            }
            assert_int_equal(first.indices.shape[0], o);
            ndx_sparse_free(&first);
            test_tensor_free(&v);
            test_tensor_free(&w);
        }
    }
}

/* A SparseTensor of rank 2 counts by row, of rank 1 as one batch; its answer is the dense op's
 * on the densified rows (every entry present). */
static void sparse_matches_dense(void **state) {
    (void)state;
    ndx_sparse_tensor sp;
    int64_t idx[16];
    for (int i = 0; i < 8; i++) {
        idx[2 * i] = i / 4;
        idx[2 * i + 1] = i % 4;
    }
    sp.indices = ndx_tensor_make(NDX_INT64, 2, SHAPE(8, 2), idx);
    sp.values = ndx_tensor_make(NDX_INT64, 1, SHAPE(8), (void *)data);
    sp.dense_shape = ndx_tensor_make(NDX_INT64, 1, SHAPE(2), (int64_t[]){2, 4});
    ndx_tensor v = ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 4), (void *)data);
    ndx_tensor none = ndx_tensor_make(NDX_INT64, 1, SHAPE(0), NULL);
    ndx_count_attrs a = {-1, 40, 0};
    ndx_sparse_tensor d = count_dense(&v, &none, a), s;
    memset(&s, 0, sizeof s);
    ndx_error err;
    assert_ok(ndx_sparse_count_sparse_output(&sp, &none, &a, NULL, &s, &err), &err);
    assert_sparse_eq(&s, &d);
    ndx_sparse_free(&s);
    ndx_sparse_free(&d);

    /* errors: nothing written */
    ndx_sparse_tensor out;
    out.indices = test_tensor_v(NDX_INT64, 0, 2, 5, 2);
    out.values = test_tensor_v(NDX_INT64, 0, 1, 5);
    out.dense_shape = test_tensor_v(NDX_INT64, 0, 1, 2);
    test_guard g[3] = {test_guard_fill(&out.indices, 1), test_guard_fill(&out.values, 2),
                       test_guard_fill(&out.dense_shape, 3)};
    idx[5] = 4;
    assert_fails(ndx_sparse_count_sparse_output(&sp, &none, &a, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "sp.indices[2] = [0, 4] is outside dense_shape [2, 4]");
    idx[5] = 2;
    ((int64_t *)sp.dense_shape.data)[0] = 0;
    assert_fails(ndx_sparse_count_sparse_output(&sp, &none, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Cannot allocate 0 batches");
    ((int64_t *)sp.dense_shape.data)[0] = 2;
    ndx_tensor w3 = test_tensor_v(NDX_FLOAT32, 0, 1, 3);
    assert_fails(ndx_sparse_count_sparse_output(&sp, &w3, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "Weights and values must have the same shape. Weight shape: [3]; values "
                 "shape: [8]");
    ndx_tensor v3 = test_tensor_v(NDX_INT32, 0, 3, 1, 2, 2);
    assert_fails(ndx_dense_count_sparse_output(&v3, NULL, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "Input must be a 1 or 2-dimensional tensor. Got: [1, 2, 2]");
    ndx_tensor empty_rows = test_tensor_v(NDX_INT32, 0, 2, 0, 3);
    assert_fails(ndx_dense_count_sparse_output(&empty_rows, NULL, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Invalid input: Shapes dimension cannot be 0.");
    ndx_tensor fv = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    assert_fails(ndx_dense_count_sparse_output(&fv, NULL, &a, NULL, &out, &err), &err,
                 NDX_E_UNSUPPORTED, "values are float32; int32 or int64 only");
    ndx_tensor cw = test_tensor_v(NDX_COMPLEX64, 0, 2, 2, 4);
    assert_fails(ndx_dense_count_sparse_output(&v, &cw, &a, NULL, &out, &err), &err,
                 NDX_E_UNSUPPORTED, "weights are complex64");
    ndx_count_attrs bad = {-2, -1, 0};
    assert_fails(ndx_dense_count_sparse_output(&v, &none, &bad, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "must be >= -1");
    ndx_tensor huge = ndx_tensor_make(NDX_INT64, 1, SHAPE(1), (int64_t[]){INT64_MAX});
    ndx_count_attrs def = {-1, -1, 0};
    assert_fails(ndx_dense_count_sparse_output(&huge, &none, &def, NULL, &out, &err), &err,
                 NDX_E_OVERFLOW, "overflows");
    /* the wrong output view: nothing written */
    assert_fails(ndx_dense_count_sparse_output(&v, &none, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out.indices");
    for (int k = 0; k < 3; k++) {
        ndx_tensor *t = k == 0 ? &out.indices : k == 1 ? &out.values : &out.dense_shape;
        assert_untouched(&g[k], t);
    }
    test_sparse_free(&out);
    test_tensor_free(&w3);
    test_tensor_free(&v3);
    test_tensor_free(&empty_rows);
    test_tensor_free(&fv);
    test_tensor_free(&cw);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tensorflow_examples),
        cmocka_unit_test(random_against_naive),
        cmocka_unit_test(sparse_matches_dense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
