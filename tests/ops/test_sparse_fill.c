/* test_sparse_fill.c — sparse_fill_empty_rows and sparse_fill_empty_rows_grad: TensorFlow's
 * kernel-test cases (sparse_ops_test.py, SparseFillEmptyRowsTest) with their expected values,
 * then random inputs of every dtype, index dtype and rank against the naive reference
 * (tests/reference/reference_sparse_fill.c) at 1, 2 and 3 threads, and every error with the
 * outputs untouched. */
#include "ndx_test.h"
#include "reference_sparse_fill.h"

#include <stdio.h>

/* ---- building inputs ---------------------------------------------------------------------- */

static ndx_sparse_tensor sparse_of(ndx_dtype vt, size_t width, ndx_dtype it, int rank,
                                   const int64_t *dims, int64_t nnz, const int64_t *idx) {
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(it, 0, 2, nnz, rank);
    s.values = test_tensor_v(vt, width, 1, nnz);
    s.dense_shape = test_tensor_v(NDX_INT64, 0, 1, rank);
    for (int d = 0; d < rank; d++) ((int64_t *)s.dense_shape.data)[d] = dims[d];
    if (idx)
        for (int64_t k = 0; k < nnz * rank; k++) test_set_index(&s.indices, k, idx[k]);
    return s;
}

static ndx_tensor scalar_of(ndx_dtype vt, size_t width) { return test_tensor(vt, width, 0, NULL); }

/* The outputs of one call, allocated by the op. */
typedef struct {
    ndx_sparse_tensor sp;
    ndx_tensor indicator, map;
} fill_out;

static fill_out fill(const ndx_sparse_tensor *in, const ndx_tensor *def, int threads) {
    fill_out o;
    memset(&o, 0, sizeof o);
    ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
    ndx_error err;
    assert_ok(ndx_sparse_fill_empty_rows(in, def, &opt, &o.sp, &o.indicator, &o.map, &err), &err);
    return o;
}

static void fill_free(fill_out *o) {
    ndx_sparse_free(&o->sp);
    ndx_tensor_free(&o->indicator);
    ndx_tensor_free(&o->map);
}

static void assert_i64s(const ndx_tensor *t, int64_t n, const int64_t *want) {
    assert_int_equal(t->dtype, NDX_INT64);
    assert_int_equal(test_count(t), n);
    for (int64_t i = 0; i < n; i++) assert_int_equal(((const int64_t *)t->data)[i], want[i]);
}

static void assert_bools(const ndx_tensor *t, int64_t n, const int *want) {
    assert_int_equal(t->dtype, NDX_BOOL);
    assert_int_equal(test_count(t), n);
    for (int64_t i = 0; i < n; i++) assert_int_equal(((const unsigned char *)t->data)[i], want[i]);
}

/* ---- TensorFlow's cases ------------------------------------------------------------------- */

static const int64_t idx_5x6[12] = {0, 0, 1, 0, 1, 3, 1, 4, 3, 2, 3, 3};
static const int64_t want_idx_5x6[16] = {0, 0, 1, 0, 1, 3, 1, 4, 2, 0, 3, 2, 3, 3, 4, 0};
static const int want_empty_5x6[5] = {0, 0, 1, 0, 1};

static void tf_fill_number(void **state) {
    (void)state;
    for (int it = 0; it < 3; it++) {
        static const ndx_dtype its[3] = {NDX_INT64, NDX_INT32, NDX_INT16};
        ndx_sparse_tensor in = sparse_of(NDX_INT32, 0, its[it], 2, SHAPE(5, 6), 6, idx_5x6);
        static const int32_t vals[6] = {0, 10, 13, 14, 32, 33};
        memcpy(in.values.data, vals, sizeof vals);
        ndx_tensor def = scalar_of(NDX_INT32, 0);
        *(int32_t *)def.data = -1;
        fill_out o = fill(&in, &def, 1);
        assert_i64s(&o.sp.indices, 16, want_idx_5x6);
        static const int32_t want_vals[8] = {0, 10, 13, 14, -1, 32, 33, -1};
        assert_memory_equal(o.sp.values.data, want_vals, sizeof want_vals);
        assert_i64s(&o.sp.dense_shape, 2, VALS(5, 6));
        assert_bools(&o.indicator, 5, want_empty_5x6);
        assert_i64s(&o.map, 6, VALS(0, 1, 2, 3, 5, 6));
        fill_free(&o);
        test_tensor_free(&def);
        test_sparse_free(&in);
    }
}

static void tf_fill_float_and_string(void **state) {
    (void)state;
    ndx_sparse_tensor in = sparse_of(NDX_FLOAT64, 0, NDX_INT64, 2, SHAPE(5, 6), 6, idx_5x6);
    static const double vals[6] = {0, 10, 13, 14, 32, 33};
    memcpy(in.values.data, vals, sizeof vals);
    ndx_tensor def = scalar_of(NDX_FLOAT64, 0);
    *(double *)def.data = -1;
    fill_out o = fill(&in, &def, 2);
    static const double want_vals[8] = {0, 10, 13, 14, -1, 32, 33, -1};
    assert_memory_equal(o.sp.values.data, want_vals, sizeof want_vals);
    assert_i64s(&o.sp.indices, 16, want_idx_5x6);
    fill_free(&o);
    test_tensor_free(&def);
    test_sparse_free(&in);

    in = sparse_of(NDX_STRING, 1, NDX_INT64, 2, SHAPE(5, 6), 6, idx_5x6);
    memcpy(in.values.data, "abcdef", 6);
    def = scalar_of(NDX_STRING, 1);
    *(char *)def.data = 0;
    o = fill(&in, &def, 1);
    assert_memory_equal(o.sp.values.data, "abcd\0ef\0", 8);
    assert_int_equal(o.sp.values.itemsize, 1);
    assert_bools(&o.indicator, 5, want_empty_5x6);
    fill_free(&o);
    test_tensor_free(&def);
    test_sparse_free(&in);
}

/* testNoEmptyRows, testNoEmptyRowsAndUnordered, testUnordered: grouped by row, each row's
 * entries in input order (never sorted within a row). */
static void tf_unordered(void **state) {
    (void)state;
    static const struct {
        int64_t rows, cols, n;
        int64_t idx[8];
        int32_t vals[4];
        int64_t full;
        int64_t want_idx[10];
        int32_t want_vals[5];
        int empty[3];
    } cases[] = {
        {2, 6, 4, {0, 0, 1, 0, 1, 3, 1, 4}, {0, 10, 13, 14}, 4,
         {0, 0, 1, 0, 1, 3, 1, 4}, {0, 10, 13, 14}, {0, 0}},
        {2, 5, 4, {1, 2, 1, 3, 0, 1, 0, 3}, {1, 3, 2, 4}, 4,
         {0, 1, 0, 3, 1, 2, 1, 3}, {2, 4, 1, 3}, {0, 0}},
        {3, 5, 4, {2, 3, 2, 2, 0, 1, 0, 3}, {1, 3, 2, 4}, 5,
         {0, 1, 0, 3, 1, 0, 2, 3, 2, 2}, {2, 4, -1, 1, 3}, {0, 1, 0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ndx_sparse_tensor in = sparse_of(NDX_INT32, 0, NDX_INT64, 2,
                                         SHAPE(cases[c].rows, cases[c].cols), cases[c].n,
                                         cases[c].idx);
        memcpy(in.values.data, cases[c].vals, 16);
        ndx_tensor def = scalar_of(NDX_INT32, 0);
        *(int32_t *)def.data = -1;
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            fill_out o = fill(&in, &def, threads);
            assert_i64s(&o.sp.indices, cases[c].full * 2, cases[c].want_idx);
            assert_memory_equal(o.sp.values.data, cases[c].want_vals,
                                (size_t)cases[c].full * 4);
            assert_bools(&o.indicator, cases[c].rows, cases[c].empty);
            fill_free(&o);
        }
        test_tensor_free(&def);
        test_sparse_free(&in);
    }
}

/* testEmptyIndicesTensor and testEmptyOutput. */
static void tf_empty(void **state) {
    (void)state;
    ndx_sparse_tensor in = sparse_of(NDX_FLOAT32, 0, NDX_INT64, 2, SHAPE(2, 5), 0, NULL);
    ndx_tensor def = scalar_of(NDX_FLOAT32, 0);
    *(float *)def.data = -1;
    fill_out o = fill(&in, &def, 1);
    assert_i64s(&o.sp.indices, 4, VALS(0, 0, 1, 0));
    static const float want[2] = {-1, -1};
    assert_memory_equal(o.sp.values.data, want, sizeof want);
    assert_bools(&o.indicator, 2, (const int[]){1, 1});
    assert_int_equal(o.map.shape[0], 0);
    fill_free(&o);
    test_sparse_free(&in);

    in = sparse_of(NDX_FLOAT32, 0, NDX_INT64, 2, SHAPE(0, 3), 0, NULL);
    o = fill(&in, &def, 1);
    assert_int_equal(o.sp.indices.shape[0], 0);
    assert_int_equal(o.sp.indices.shape[1], 2);
    assert_int_equal(o.sp.values.shape[0], 0);
    assert_i64s(&o.sp.dense_shape, 2, VALS(0, 3));
    assert_int_equal(o.indicator.shape[0], 0);
    fill_free(&o);
    test_sparse_free(&in);
    test_tensor_free(&def);
}

/* testInvalidIndices (TensorFlow: "indices(2, 0) is invalid"), and the shape function. */
static void tf_invalid_indices(void **state) {
    (void)state;
    ndx_sparse_tensor in = sparse_of(NDX_INT64, 0, NDX_INT64, 2, SHAPE(2, 5), 4,
                                     VALS(1, 2, 1, 3, 99, 1, 99, 3));
    ndx_tensor def = scalar_of(NDX_INT64, 0);
    ndx_error err;
    fill_out o;
    memset(&o, 0, sizeof o);
    assert_fails(ndx_sparse_fill_empty_rows(&in, &def, NULL, &o.sp, &o.indicator, &o.map, &err),
                 &err, NDX_E_OUT_OF_RANGE,
                 "sparse_fill_empty_rows: sp_input.indices[2] = [99, 1] is outside dense_shape "
                 "[2, 5]");
    assert_null(o.sp.indices.data);
    assert_fails(ndx_sparse_fill_empty_rows_shape(&in, &def, &o.sp, NULL, NULL, &err), &err,
                 NDX_E_OUT_OF_RANGE, "sp_input.indices[2]");
    test_set_index(&in.indices, 4, 0);
    test_set_index(&in.indices, 6, 1);
    assert_ok(ndx_sparse_fill_empty_rows_shape(&in, &def, &o.sp, &o.indicator, &o.map, &err),
              &err);
    assert_int_equal(o.sp.indices.shape[0], 4);
    assert_int_equal(o.indicator.shape[0], 2);
    assert_int_equal(o.map.shape[0], 4);
    assert_null(o.sp.indices.data);
    test_tensor_free(&def);
    test_sparse_free(&in);
}

/* ---- random inputs against the reference ------------------------------------------------ */

/* A random SparseTensor: rows drawn with some empty, entries grouped by row or not, columns in
 * any order, repeats allowed (fill_empty_rows does not mind them). */
static ndx_sparse_tensor random_input(test_rng *r, ndx_dtype vt, size_t width, ndx_dtype it,
                                      int rank, int64_t rows, int64_t nnz, int grouped) {
    int64_t dims[NDX_MAX_RANK];
    dims[0] = rows;
    for (int d = 1; d < rank; d++) dims[d] = rng_range(r, 1, 4);
    if (rows == 0) nnz = 0;
    ndx_sparse_tensor s = sparse_of(vt, width, it, rank, dims, nnz, NULL);
    /* a random subset of the rows holds the entries */
    int64_t used = rows ? rng_range(r, 1, rows) : 0, lo = rows ? rng_below(r, rows) : 0;
    for (int64_t k = 0; k < nnz; k++) {
        int64_t row = (lo + rng_below(r, used)) % rows;
        test_set_index(&s.indices, k * rank, row);
        for (int d = 1; d < rank; d++) test_set_index(&s.indices, k * rank + d, rng_below(r, dims[d]));
    }
    if (grouped) { /* a stable insertion by row keeps the random columns' order */
        for (int64_t k = 1; k < nnz; k++)
            for (int64_t j = k; j > 0 && test_get_index(&s.indices, (j - 1) * rank) >
                                            test_get_index(&s.indices, j * rank); j--)
                for (int d = 0; d < rank; d++) {
                    int64_t a = test_get_index(&s.indices, (j - 1) * rank + d);
                    test_set_index(&s.indices, (j - 1) * rank + d,
                                   test_get_index(&s.indices, j * rank + d));
                    test_set_index(&s.indices, j * rank + d, a);
                }
    }
    test_fill_random(r, &s.values);
    return s;
}

static void check_against_reference(const ndx_sparse_tensor *in, const ndx_tensor *def) {
    ndx_sparse_tensor want;
    ndx_tensor want_ind, want_map;
    char why[REF_WHY];
    if (ref_sparse_fill_empty_rows(in, def, &want, &want_ind, &want_map, why) != REF_OK)
        fail_msg("the reference refuses: %s", why);
    fill_out first;
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        fill_out o = fill(in, def, threads);
        assert_sparse_eq(&o.sp, &want);
        assert_tensor_eq(&o.indicator, &want_ind);
        assert_tensor_eq(&o.map, &want_map);
        if (threads == 1) {
            first = o;
            continue;
        }
        assert_sparse_eq(&o.sp, &first.sp);
        fill_free(&o);
    }
    fill_free(&first);
    /* the shape function agrees */
    ndx_sparse_tensor shaped;
    ndx_tensor si, sm;
    ndx_error err;
    assert_ok(ndx_sparse_fill_empty_rows_shape(in, def, &shaped, &si, &sm, &err), &err);
    assert_int_equal(shaped.indices.shape[0], want.indices.shape[0]);
    assert_int_equal(si.shape[0], want_ind.shape[0]);
    assert_int_equal(sm.shape[0], want_map.shape[0]);
    ref_sparse_free(&want);
    ref_tensor_free(&want_ind);
    ref_tensor_free(&want_map);
}

static void random_every_dtype(void **state) {
    (void)state;
    test_rng r = {20261129};
    static const ndx_dtype its[3] = {NDX_INT16, NDX_INT32, NDX_INT64};
    for (int k = 0; k < test_all_dtypes_count; k++) {
        ndx_dtype vt = test_all_dtypes[k];
        for (int rep = 0; rep < 12; rep++) {
            size_t width = test_random_width(&r, vt);
            int rank = (int)rng_range(&r, 1, 4);
            int64_t rows = rng_range(&r, 0, 9), nnz = rng_range(&r, 0, 20);
            ndx_sparse_tensor in = random_input(&r, vt, width, its[rep % 3], rank, rows, nnz,
                                                rep % 2);
            ndx_tensor def = scalar_of(vt, width);
            test_fill_random(&r, &def);
            check_against_reference(&in, &def);
            test_tensor_free(&def);
            test_sparse_free(&in);
        }
    }
}

/* Enough entries for several chunks: grouped inputs take the parallel path; long runs of empty
 * rows fall inside and between chunks. */
static void random_large(void **state) {
    (void)state;
    test_rng r = {77};
    for (int rep = 0; rep < 4; rep++) {
        int64_t rows = rep < 2 ? 3000 : 300000, nnz = 150000;
        ndx_sparse_tensor in = random_input(&r, NDX_FLOAT32, 0, rep % 2 ? NDX_INT32 : NDX_INT64,
                                            2, rows, nnz, 0);
        /* grouped, in canonical order of rows: sort by row (a counting sort keeps it fast) */
        if (rep != 1) {
            int64_t *cnt = calloc((size_t)rows + 1, 8), *rowv = malloc((size_t)nnz * 16);
            float *vals = malloc((size_t)nnz * 4);
            for (int64_t i = 0; i < nnz; i++) cnt[test_get_index(&in.indices, 2 * i) + 1]++;
            for (int64_t q = 0; q < rows; q++) cnt[q + 1] += cnt[q];
            for (int64_t i = 0; i < nnz; i++) {
                int64_t q = cnt[test_get_index(&in.indices, 2 * i)]++;
                rowv[2 * q] = test_get_index(&in.indices, 2 * i);
                rowv[2 * q + 1] = test_get_index(&in.indices, 2 * i + 1);
                vals[q] = ((float *)in.values.data)[i];
            }
            for (int64_t k = 0; k < 2 * nnz; k++) test_set_index(&in.indices, k, rowv[k]);
            memcpy(in.values.data, vals, (size_t)nnz * 4);
            free(cnt);
            free(rowv);
            free(vals);
        }
        ndx_tensor def = scalar_of(NDX_FLOAT32, 0);
        *(float *)def.data = 0.5f;
        /* the reference is quadratic: check against it at the smaller row count only, and the
         * larger against the same op at 1 thread and the defining properties */
        if (rows <= 3000) {
            check_against_reference(&in, &def);
        } else {
            fill_out one = fill(&in, &def, 1);
            for (int threads = 2; threads <= TEST_THREADS; threads++) {
                fill_out o = fill(&in, &def, threads);
                assert_sparse_eq(&o.sp, &one.sp);
                assert_tensor_eq(&o.indicator, &one.indicator);
                assert_tensor_eq(&o.map, &one.map);
                fill_free(&o);
            }
            /* every input entry is where the map says; rows never go down; each empty row has
             * its one default entry */
            const int64_t *oi = one.sp.indices.data, *map = one.map.data;
            const float *ov = one.sp.values.data;
            for (int64_t i = 0; i < nnz; i++) {
                assert_int_equal(oi[2 * map[i]], test_get_index(&in.indices, 2 * i));
                assert_int_equal(oi[2 * map[i] + 1], test_get_index(&in.indices, 2 * i + 1));
                assert_true(ov[map[i]] == ((float *)in.values.data)[i]);
            }
            int64_t full = one.sp.indices.shape[0], empties = 0;
            const unsigned char *ind = one.indicator.data;
            for (int64_t q = 0; q < rows; q++) empties += ind[q];
            assert_int_equal(full, nnz + empties);
            for (int64_t o = 1; o < full; o++) assert_true(oi[2 * o] >= oi[2 * o - 2]);
            fill_free(&one);
        }
        test_tensor_free(&def);
        test_sparse_free(&in);
    }
}

/* ---- errors: outputs untouched -------------------------------------------------------------- */

typedef struct {
    fill_out o;
    test_guard g[5];
} guarded;

static guarded guarded_new(ndx_dtype vt, int64_t full, int rank, int64_t rows, int64_t n) {
    guarded x;
    x.o.sp.indices = test_tensor_v(NDX_INT64, 0, 2, full, rank);
    x.o.sp.values = test_tensor_v(vt, 0, 1, full);
    x.o.sp.dense_shape = test_tensor_v(NDX_INT64, 0, 1, rank);
    x.o.indicator = test_tensor_v(NDX_BOOL, 0, 1, rows);
    x.o.map = test_tensor_v(NDX_INT64, 0, 1, n);
    x.g[0] = test_guard_fill(&x.o.sp.indices, 0xa5);
    x.g[1] = test_guard_fill(&x.o.sp.values, 0x5a);
    x.g[2] = test_guard_fill(&x.o.sp.dense_shape, 0x3c);
    x.g[3] = test_guard_fill(&x.o.indicator, 0x77);
    x.g[4] = test_guard_fill(&x.o.map, 0x99);
    return x;
}

static ndx_status guarded_call(guarded *x, const ndx_sparse_tensor *in, const ndx_tensor *def,
                               const ndx_options *opt, ndx_error *err) {
    return ndx_sparse_fill_empty_rows(in, def, opt, &x->o.sp, &x->o.indicator, &x->o.map, err);
}

static void guarded_check_del(guarded *x) {
    assert_untouched(&x->g[0], &x->o.sp.indices);
    assert_untouched(&x->g[1], &x->o.sp.values);
    assert_untouched(&x->g[2], &x->o.sp.dense_shape);
    assert_untouched(&x->g[3], &x->o.indicator);
    assert_untouched(&x->g[4], &x->o.map);
    test_sparse_free(&x->o.sp);
    test_tensor_free(&x->o.indicator);
    test_tensor_free(&x->o.map);
}

static void fill_errors(void **state) {
    (void)state;
    ndx_error err;
    /* unordered (the counting path) 3 entries in rows 2, 0, 2 of 4: 5 out */
    ndx_sparse_tensor in = sparse_of(NDX_FLOAT32, 0, NDX_INT64, 2, SHAPE(4, 3), 3,
                                     VALS(2, 1, 0, 0, 2, 2));
    ndx_tensor def = scalar_of(NDX_FLOAT32, 0);

    guarded x = guarded_new(NDX_FLOAT32, 5, 2, 4, 3);
    assert_ok(guarded_call(&x, &in, &def, NULL, &err), &err); /* the right views pass */
    for (int k = 0; k < 5; k++) free(x.g[k].copy);
    test_sparse_free(&x.o.sp);
    test_tensor_free(&x.o.indicator);
    test_tensor_free(&x.o.map);

    test_set_index(&in.indices, 5, 3);
    x = guarded_new(NDX_FLOAT32, 5, 2, 4, 3);
    assert_fails(guarded_call(&x, &in, &def, NULL, &err), &err, NDX_E_OUT_OF_RANGE,
                 "sp_input.indices[2] = [2, 3] is outside dense_shape [4, 3]");
    guarded_check_del(&x);
    test_set_index(&in.indices, 5, -1);
    x = guarded_new(NDX_FLOAT32, 5, 2, 4, 3);
    assert_fails(guarded_call(&x, &in, &def, NULL, &err), &err, NDX_E_OUT_OF_RANGE,
                 "sp_input.indices[2] = [2, -1]");
    guarded_check_del(&x);
    test_set_index(&in.indices, 5, 2);

    ndx_tensor vec = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    x = guarded_new(NDX_FLOAT32, 5, 2, 4, 3);
    assert_fails(guarded_call(&x, &in, &vec, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_fill_empty_rows: default_value must be a scalar, saw: [2]");
    guarded_check_del(&x);
    test_tensor_free(&vec);
    ndx_tensor wrong = scalar_of(NDX_FLOAT64, 0);
    x = guarded_new(NDX_FLOAT32, 5, 2, 4, 3);
    assert_fails(guarded_call(&x, &in, &wrong, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "default_value is float64 but sp_input.values are float32");
    guarded_check_del(&x);
    test_tensor_free(&wrong);

    /* caller's outputs of the wrong size: nothing written, not even the ones that fit */
    x = guarded_new(NDX_FLOAT32, 4, 2, 4, 3);
    assert_fails(guarded_call(&x, &in, &def, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out.indices");
    guarded_check_del(&x);
    x = guarded_new(NDX_FLOAT32, 5, 2, 3, 3);
    assert_fails(guarded_call(&x, &in, &def, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "empty_row_indicator");
    guarded_check_del(&x);
    x = guarded_new(NDX_FLOAT32, 5, 2, 4, 2);
    assert_fails(guarded_call(&x, &in, &def, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "reverse_index_map");
    guarded_check_del(&x);

    /* a budget too small for the row counts */
    ndx_options tiny = {.max_memory = 16};
    x = guarded_new(NDX_FLOAT32, 5, 2, 4, 3);
    assert_fails(guarded_call(&x, &in, &def, &tiny, &err), &err, NDX_E_MEMORY_BUDGET,
                 "row counts");
    guarded_check_del(&x);

    /* malformed views */
    ndx_sparse_tensor bad = in;
    bad.values.shape[0] = 2;
    x = guarded_new(NDX_FLOAT32, 5, 2, 4, 3);
    assert_fails(guarded_call(&x, &bad, &def, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sp_input.values has 2 elements but indices has 3 rows");
    guarded_check_del(&x);
    bad = in;
    ((int64_t *)bad.dense_shape.data)[0] = -4;
    x = guarded_new(NDX_FLOAT32, 5, 2, 4, 3);
    assert_fails(guarded_call(&x, &bad, &def, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dense_shape[0] = -4 is negative");
    guarded_check_del(&x);
    ((int64_t *)in.dense_shape.data)[0] = 4;
    fill_out none;
    memset(&none, 0, sizeof none);
    assert_fails(ndx_sparse_fill_empty_rows(&in, &def, NULL, NULL, NULL, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out is NULL");
    assert_fails(ndx_sparse_fill_empty_rows(&in, NULL, NULL, &none.sp, NULL, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "default_value is NULL");
    /* a huge dense_shape: rows plus entries is counted with overflow checks; the output of
     * 2^62 rows cannot be allocated */
    ndx_sparse_tensor huge = sparse_of(NDX_FLOAT32, 0, NDX_INT64, 1, SHAPE((int64_t)1 << 62), 1,
                                       VALS(5));
    assert_fails(ndx_sparse_fill_empty_rows(&huge, &def, NULL, &none.sp, NULL, NULL, &err), &err,
                 NDX_E_OVERFLOW, NULL);
    assert_null(none.sp.indices.data);
    test_sparse_free(&huge);
    test_tensor_free(&def);
    test_sparse_free(&in);
}

static void infer(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_spec sp;
    sp.indices = ndx_spec_make(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 3));
    sp.values = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(7));
    sp.dense_shape = ndx_spec_make(NDX_INT64, 1, SHAPE(NDX_UNKNOWN));
    ndx_spec def = ndx_spec_make(NDX_FLOAT32, 0, NULL), ind, map;
    ndx_sparse_spec out;
    assert_ok(ndx_sparse_fill_empty_rows_infer(&sp, &def, &out, &ind, &map, &err), &err);
    assert_int_equal(out.indices.shape[0], NDX_UNKNOWN);
    assert_int_equal(out.indices.shape[1], 3);
    assert_int_equal(out.dense_shape.shape[0], 3);
    assert_int_equal(ind.dtype, NDX_BOOL);
    assert_int_equal(ind.shape[0], NDX_UNKNOWN);
    assert_int_equal(map.shape[0], 7);
    def = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(1));
    assert_fails(ndx_sparse_fill_empty_rows_infer(&sp, &def, &out, &ind, &map, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "default_value must be a scalar, saw: [1]");
    def = ndx_spec_make(NDX_FLOAT32, NDX_UNKNOWN, NULL);
    assert_ok(ndx_sparse_fill_empty_rows_infer(&sp, &def, &out, NULL, NULL, &err), &err);
    sp.values = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(NDX_UNKNOWN, 1));
    sp.values.rank = 2;
    assert_fails(ndx_sparse_fill_empty_rows_infer(&sp, &def, &out, NULL, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sp_input.values has shape");

    ndx_spec m = ndx_spec_make(NDX_INT64, 1, SHAPE(4)), g = ndx_spec_make(NDX_FLOAT16, 1,
                                                                          SHAPE(NDX_UNKNOWN));
    ndx_spec dv, dd;
    assert_ok(ndx_sparse_fill_empty_rows_grad_infer(&m, &g, &dv, &dd, &err), &err);
    assert_int_equal(dv.dtype, NDX_FLOAT16);
    assert_int_equal(dv.shape[0], 4);
    assert_int_equal(dd.rank, 0);
    g = ndx_spec_make(NDX_BOOL, 1, SHAPE(4));
    assert_fails(ndx_sparse_fill_empty_rows_grad_infer(&m, &g, &dv, &dd, &err), &err,
                 NDX_E_UNSUPPORTED, "numbers only");
}

/* ---- the gradient ------------------------------------------------------------------------ */

static void grad_tf_cases(void **state) {
    (void)state;
    ndx_error err;
    /* testSparseFillEmptyRowsGradEmpty */
    ndx_tensor map = test_tensor_v(NDX_INT64, 0, 1, 0), g = test_tensor_v(NDX_FLOAT32, 0, 1, 0);
    ndx_tensor dv = {0}, dd = {0};
    assert_ok(ndx_sparse_fill_empty_rows_grad(&map, &g, NULL, &dv, &dd, &err), &err);
    assert_int_equal(dv.shape[0], 0);
    assert_int_equal(dd.rank, 0);
    assert_true(*(float *)dd.data == 0);
    ndx_tensor_free(&dv);
    ndx_tensor_free(&dd);
    test_tensor_free(&map);
    test_tensor_free(&g);

    /* the 5x6 example: entries went to 0 1 2 3 5 6, rows 2 and 4 filled at 4 and 7 */
    map = test_tensor_from(NDX_INT64, 0, 1, SHAPE(6), VALS(0, 1, 2, 3, 5, 6));
    g = test_tensor_v(NDX_FLOAT64, 0, 1, 8);
    for (int k = 0; k < 8; k++) ((double *)g.data)[k] = 1.5 * k + 0.25;
    assert_ok(ndx_sparse_fill_empty_rows_grad(&map, &g, NULL, &dv, &dd, &err), &err);
    static const int at[6] = {0, 1, 2, 3, 5, 6};
    for (int i = 0; i < 6; i++) assert_true(((double *)dv.data)[i] == 1.5 * at[i] + 0.25);
    assert_true(*(double *)dd.data == (1.5 * 4 + 0.25) + (1.5 * 7 + 0.25));
    ndx_tensor_free(&dv);
    ndx_tensor_free(&dd);

    /* errors: outputs untouched */
    ndx_tensor ov = test_tensor_v(NDX_FLOAT64, 0, 1, 6), od = test_tensor(NDX_FLOAT64, 0, 0, NULL);
    test_guard gv = test_guard_fill(&ov, 0x11), gd = test_guard_fill(&od, 0x22);
    ((int64_t *)map.data)[3] = 8;
    assert_fails(ndx_sparse_fill_empty_rows_grad(&map, &g, NULL, &ov, &od, &err), &err,
                 NDX_E_OUT_OF_RANGE,
                 "sparse_fill_empty_rows_grad: Elements in reverse index must be in [0, 8) but "
                 "got 8");
    ((int64_t *)map.data)[3] = -1;
    assert_fails(ndx_sparse_fill_empty_rows_grad(&map, &g, NULL, &ov, &od, &err), &err,
                 NDX_E_OUT_OF_RANGE, "but got -1");
    ((int64_t *)map.data)[3] = 3;
    ndx_tensor gm = g;
    gm.rank = 2;
    gm.shape[0] = 2;
    gm.shape[1] = 4;
    assert_fails(ndx_sparse_fill_empty_rows_grad(&map, &gm, NULL, &ov, &od, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "grad_values must be a vector, saw: [2, 4]");
    ndx_tensor bools = test_tensor_v(NDX_BOOL, 0, 1, 8);
    assert_fails(ndx_sparse_fill_empty_rows_grad(&map, &bools, NULL, &ov, &od, &err), &err,
                 NDX_E_UNSUPPORTED, "grad_values are bool; numbers only");
    ndx_tensor small = test_tensor_v(NDX_FLOAT64, 0, 1, 5);
    test_guard gs = test_guard_fill(&small, 0x33);
    assert_fails(ndx_sparse_fill_empty_rows_grad(&map, &g, NULL, &small, &od, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "d_values");
    assert_untouched(&gs, &small);
    assert_untouched(&gv, &ov);
    assert_untouched(&gd, &od);
    test_tensor_free(&small);
    test_tensor_free(&bools);
    test_tensor_free(&ov);
    test_tensor_free(&od);
    test_tensor_free(&map);
    test_tensor_free(&g);
}

/* The gradient of random fills against the reference (float64, int64), and for every number
 * dtype the gather and a single filled row's sum checked bytewise. */
static void grad_random(void **state) {
    (void)state;
    test_rng r = {4242};
    for (int rep = 0; rep < 40; rep++) {
        ndx_sparse_tensor in = random_input(&r, NDX_FLOAT64, 0, NDX_INT64, 2,
                                            rng_range(&r, 1, 12), rng_range(&r, 0, 25), rep % 2);
        ndx_tensor def = scalar_of(NDX_FLOAT64, 0);
        fill_out o = fill(&in, &def, 1);
        int64_t full = o.sp.values.shape[0];
        ndx_dtype gt = rep % 3 ? NDX_FLOAT64 : NDX_INT64;
        ndx_tensor g = test_tensor_v(gt, 0, 1, full);
        test_fill_random(&r, &g);
        ndx_tensor want_v, want_d, dv = {0}, dd = {0};
        char why[REF_WHY];
        ndx_error err;
        assert_int_equal(ref_sparse_fill_empty_rows_grad(&o.map, &g, &want_v, &want_d, why),
                         REF_OK);
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            assert_ok(ndx_sparse_fill_empty_rows_grad(&o.map, &g, &opt, &dv, &dd, &err), &err);
            assert_tensor_eq(&dv, &want_v);
            assert_tensor_eq(&dd, &want_d);
            ndx_tensor_free(&dv);
            ndx_tensor_free(&dd);
        }
        ref_tensor_free(&want_v);
        ref_tensor_free(&want_d);
        test_tensor_free(&g);
        fill_free(&o);
        test_tensor_free(&def);
        test_sparse_free(&in);
    }
    for (int k = 0; k < test_all_dtypes_count; k++) {
        ndx_dtype dt = test_all_dtypes[k];
        if (dt == NDX_BOOL || dt == NDX_STRING) continue;
        ndx_tensor map = test_tensor_from(NDX_INT32, 0, 1, SHAPE(3), (const int32_t[]){2, 0, 3});
        ndx_tensor g = test_tensor_v(dt, 0, 1, 4), dv = {0}, dd = {0};
        test_fill_random(&r, &g);
        ndx_error err;
        assert_ok(ndx_sparse_fill_empty_rows_grad(&map, &g, NULL, &dv, &dd, &err), &err);
        size_t s = g.itemsize;
        const unsigned char *gp = g.data, *vp = dv.data;
        assert_memory_equal(vp, gp + 2 * s, s);
        assert_memory_equal(vp + s, gp, s);
        assert_memory_equal(vp + 2 * s, gp + 3 * s, s);
        assert_memory_equal(dd.data, gp + s, s); /* 0 + g[1] is g[1] in every dtype */
        ndx_tensor_free(&dv);
        ndx_tensor_free(&dd);
        test_tensor_free(&g);
        test_tensor_free(&map);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tf_fill_number),
        cmocka_unit_test(tf_fill_float_and_string),
        cmocka_unit_test(tf_unordered),
        cmocka_unit_test(tf_empty),
        cmocka_unit_test(tf_invalid_indices),
        cmocka_unit_test(random_every_dtype),
        cmocka_unit_test(random_large),
        cmocka_unit_test(fill_errors),
        cmocka_unit_test(infer),
        cmocka_unit_test(grad_tf_cases),
        cmocka_unit_test(grad_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
