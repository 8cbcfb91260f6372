/* test_bincount.c — ndx_bincount (TensorFlow's Bincount and DenseBincount) against TensorFlow's
 * documented examples, hand-counted cases from its kernel tests, and the naive reference of
 * tests/reference (ref_bincount, a loop in index order) on random inputs: every weights dtype,
 * both arr dtypes, flat and per-row counts, binary_output, the same bits at 1 to 4 threads on
 * inputs large enough for the engine's parallel paths; every hostile input refused with its
 * message and the output untouched; infer on partial specs. */
#include "contract.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>

static ndx_tensor i32(int rank, const int64_t *shape, const int32_t *v) {
    return test_tensor_from(NDX_INT32, 0, rank, shape, v);
}

static void assert_i32(const ndx_tensor *t, int64_t n, const int32_t *want) {
    assert_int_equal(t->dtype, NDX_INT32);
    assert_int_equal(test_count(t), n);
    for (int64_t i = 0; i < n; i++) assert_int_equal(((const int32_t *)t->data)[i], want[i]);
}

/* tf.math.bincount's documented examples, with the size its Python computes (max + 1). */
static void tensorflow_examples(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor values = i32(1, SHAPE(8), (int32_t[]){1, 1, 2, 3, 2, 4, 4, 5});
    ndx_tensor none = test_tensor_v(NDX_INT32, 0, 1, 0);
    ndx_tensor out = {0};
    assert_ok(ndx_bincount(&values, 6, &none, 0, NULL, &out, &err), &err);
    assert_i32(&out, 6, (int32_t[]){0, 2, 2, 1, 2, 1});
    ndx_tensor_free(&out);
    ndx_tensor weights = i32(1, SHAPE(8), (int32_t[]){1, 5, 0, 1, 0, 5, 4, 5});
    assert_ok(ndx_bincount(&values, 6, &weights, 0, NULL, &out, &err), &err);
    assert_i32(&out, 6, (int32_t[]){0, 6, 0, 1, 9, 5});
    ndx_tensor_free(&out);
    /* maxlength = 3: values >= size are skipped. */
    assert_ok(ndx_bincount(&values, 3, &none, 0, NULL, &out, &err), &err);
    assert_i32(&out, 3, (int32_t[]){0, 2, 2});
    ndx_tensor_free(&out);
    /* minlength = 8: zeros after the last value. */
    assert_ok(ndx_bincount(&values, 8, &none, NDX_BINCOUNT_DENSE, NULL, &out, &err), &err);
    assert_i32(&out, 8, (int32_t[]){0, 2, 2, 1, 2, 1, 0, 0});
    ndx_tensor_free(&out);
    /* binary_output */
    assert_ok(ndx_bincount(&values, 6, &none, NDX_BINCOUNT_DENSE | NDX_BINCOUNT_BINARY_OUTPUT,
                           NULL, &out, &err), &err);
    assert_i32(&out, 6, (int32_t[]){0, 1, 1, 1, 1, 1});
    ndx_tensor_free(&out);
    /* axis=-1: data [[1, 1, 2, 3, 2], [4, 4, 5, 3, 0]] counted per row, size 6; binary too. */
    ndx_tensor rows = i32(2, SHAPE(2, 5), (int32_t[]){1, 1, 2, 3, 2, 4, 4, 5, 3, 0});
    assert_ok(ndx_bincount(&rows, 6, &none, NDX_BINCOUNT_DENSE, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_i32(&out, 12, (int32_t[]){0, 2, 2, 1, 0, 0, 1, 0, 0, 1, 2, 1});
    ndx_tensor_free(&out);
    assert_ok(ndx_bincount(&rows, 6, &none, NDX_BINCOUNT_DENSE | NDX_BINCOUNT_BINARY_OUTPUT, NULL,
                           &out, &err), &err);
    assert_i32(&out, 12, (int32_t[]){0, 1, 1, 1, 0, 0, 1, 0, 0, 1, 1, 1});
    ndx_tensor_free(&out);
    /* Bincount flattens any rank. */
    assert_ok(ndx_bincount(&rows, 6, &none, 0, NULL, &out, &err), &err);
    assert_i32(&out, 6, (int32_t[]){1, 2, 2, 2, 2, 1});
    ndx_tensor_free(&out);
    /* Empty arr: zeros; size 0: an empty output. */
    ndx_tensor empty = test_tensor_v(NDX_INT32, 0, 1, 0);
    ndx_tensor f = test_tensor_v(NDX_FLOAT64, 0, 1, 0);
    assert_ok(ndx_bincount(&empty, 3, &f, 0, NULL, &out, &err), &err);
    assert_int_equal(out.dtype, NDX_FLOAT64);
    for (int i = 0; i < 3; i++) assert_true(((double *)out.data)[i] == 0.0);
    ndx_tensor_free(&out);
    assert_ok(ndx_bincount(&values, 0, &none, 0, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 1);
    assert_int_equal(out.shape[0], 0);
    ndx_tensor_free(&out);
    test_tensor_free(&empty);
    test_tensor_free(&f);
    test_tensor_free(&rows);
    test_tensor_free(&weights);
    test_tensor_free(&values);
    test_tensor_free(&none);
}

/* bincount_op_test's float weights: bins of [3, 0, 1, 1, 3] (hand-summed in index order). */
static void float_weights(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor arr = i32(1, SHAPE(5), (int32_t[]){3, 0, 1, 1, 3});
    ndx_tensor w = test_tensor_from(NDX_FLOAT32, 0, 1, SHAPE(5),
                                    (float[]){0.5f, 1.25f, 2.0f, 0.25f, -1.0f});
    ndx_tensor out = {0};
    assert_ok(ndx_bincount(&arr, 5, &w, 0, NULL, &out, &err), &err);
    const float want[5] = {1.25f, 2.25f, 0.0f, -0.5f, 0.0f};
    for (int i = 0; i < 5; i++) assert_true(((float *)out.data)[i] == want[i]);
    ndx_tensor_free(&out);
    test_tensor_free(&w);
    test_tensor_free(&arr);
}

static const ndx_dtype weight_dtypes[] = {NDX_INT32, NDX_INT64, NDX_FLOAT32, NDX_FLOAT64};

/* Random values in [0, size + size / 4] (some past the end), weights with fractions so the
 * order of every float sum shows. */
static void fill_case(test_rng *r, ndx_tensor *arr, ndx_tensor *w, int64_t size) {
    test_fill_indices(r, arr, 0, size + size / 4);
    int64_t n = test_count(w);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = rng_range(r, -1000, 1000);
        switch (w->dtype) {
        case NDX_INT32: ((int32_t *)w->data)[i] = (int32_t)(k * 3000000); break; /* wraps */
        case NDX_INT64: ((int64_t *)w->data)[i] = k; break;
        case NDX_FLOAT32: ((float *)w->data)[i] = (float)k / 7.0f; break;
        default: ((double *)w->data)[i] = (double)k / 7.0; break;
        }
    }
}

static void random_against_reference(void **state) {
    (void)state;
    test_rng r = {20261129};
    ndx_error err;
    char why[REF_WHY];
    for (int trial = 0; trial < 160; trial++) {
        ndx_dtype wt = weight_dtypes[trial % 4];
        ndx_dtype at = (trial / 4) % 2 ? NDX_INT64 : NDX_INT32;
        unsigned flags = (unsigned)(trial / 8) % 4;
        int big = trial % 16 == 15;
        int64_t size = rng_range(&r, 0, big ? 3000 : 40);
        int rank = (flags & NDX_BINCOUNT_DENSE) ? (int)rng_range(&r, 0, 2) : (int)rng_range(&r, 0, 3);
        int64_t shape[3];
        for (int k = 0; k < rank; k++) shape[k] = rng_range(&r, 0, big ? 300 : 7);
        if (big && rank >= 1) shape[0] = 200000 / (rank == 1 ? 1 : 50);
        ndx_tensor arr = test_tensor(at, 0, rank, shape);
        int weighted = rng_below(&r, 3) != 0;
        ndx_tensor w = weighted ? test_tensor(wt, 0, rank, shape) : test_tensor_v(wt, 0, 1, 0);
        fill_case(&r, &arr, &w, size);
        ndx_tensor want;
        assert_int_equal(ref_bincount(&arr, size, &w, flags, &want, why), REF_OK);
        ndx_tensor first = {0};
        for (int threads = 1; threads <= 4; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_tensor out = {0};
            assert_ok(ndx_bincount(&arr, size, &w, flags, &opt, &out, &err), &err);
            if (threads == 1) assert_tensor_eq(&out, &want);
            if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
        }
        /* Into an output the caller gives, filled with garbage first. */
        ndx_tensor given = test_tensor(wt, 0, want.rank, want.shape);
        memset(given.data, 0xa5, test_nbytes(&given));
        assert_ok(ndx_bincount(&arr, size, &w, flags, NULL, &given, &err), &err);
        assert_tensor_eq(&given, &want);
        test_tensor_free(&given);
        ndx_tensor_free(&first);
        ref_tensor_free(&want);
        test_tensor_free(&w);
        test_tensor_free(&arr);
    }
}

/* Each refused call leaves the output it was given as it was. */
static void expect_refused(const ndx_tensor *arr, int64_t size, const ndx_tensor *w, unsigned flags,
                           const ndx_options *opt, ndx_status code, const char *needle) {
    ndx_error err;
    ndx_tensor out = test_tensor_v(NDX_INT32, 0, 1, 4);
    test_guard g = test_guard_fill(&out, 0x5a);
    assert_fails(ndx_bincount(arr, size, w, flags, opt, &out, &err), &err, code, needle);
    assert_untouched(&g, &out);
    test_tensor_free(&out);
    ndx_tensor mine = {0};
    assert_fails(ndx_bincount(arr, size, w, flags, opt, &mine, &err), &err, code, needle);
    assert_null(mine.data);
}

static void hostile_inputs_refused(void **state) {
    (void)state;
    ndx_tensor arr = i32(1, SHAPE(4), (int32_t[]){1, 2, -1, 3});
    ndx_tensor none = test_tensor_v(NDX_INT32, 0, 1, 0);
    expect_refused(&arr, 4, &none, 0, NULL, NDX_E_INVALID_ARGUMENT,
                   "bincount: Input arr must be non-negative! arr[2] = -1");
    /* Refused even when no bin could receive it, and at any thread count. */
    expect_refused(&arr, 0, &none, NDX_BINCOUNT_DENSE, NULL, NDX_E_INVALID_ARGUMENT,
                   "dense_bincount: Input arr must be non-negative!");
    ndx_tensor rows = i32(2, SHAPE(2, 2), (int32_t[]){0, 1, 2, -7});
    expect_refused(&rows, 4, &none, NDX_BINCOUNT_DENSE, NULL, NDX_E_INVALID_ARGUMENT,
                   "arr[1, 1] = -7");
    ndx_tensor ok = i32(1, SHAPE(4), (int32_t[]){1, 2, 0, 3});
    expect_refused(&ok, -1, &none, 0, NULL, NDX_E_INVALID_ARGUMENT,
                   "bincount: size (-1) must be non-negative");
    ndx_tensor w3 = test_tensor_v(NDX_INT32, 0, 1, 3);
    memset(w3.data, 0, 12);
    expect_refused(&ok, 4, &w3, 0, NULL, NDX_E_INVALID_ARGUMENT,
                   "`weights` must be the same shape as `arr` or a length-0 `Tensor`");
    ndx_tensor w22 = test_tensor_v(NDX_INT32, 0, 2, 2, 2);
    memset(w22.data, 0, 16);
    expect_refused(&ok, 4, &w22, NDX_BINCOUNT_DENSE, NULL, NDX_E_INVALID_ARGUMENT,
                   "Received [2, 2]");
    ndx_tensor half = test_tensor_v(NDX_FLOAT16, 0, 1, 0);
    expect_refused(&ok, 4, &half, 0, NULL, NDX_E_UNSUPPORTED, "weights of dtype float16");
    ndx_tensor i16 = test_tensor_v(NDX_INT16, 0, 1, 2);
    memset(i16.data, 0, 4);
    expect_refused(&i16, 4, &none, 0, NULL, NDX_E_INVALID_ARGUMENT, "arr must be int32 or int64");
    ndx_tensor cube = test_tensor_v(NDX_INT32, 0, 3, 1, 1, 1);
    memset(cube.data, 0, 4);
    expect_refused(&cube, 4, &none, NDX_BINCOUNT_DENSE, NULL, NDX_E_INVALID_ARGUMENT,
                   "at most rank 2");
    expect_refused(&ok, 4, &none, 4u, NULL, NDX_E_INVALID_ARGUMENT, "unknown bits");
    expect_refused(NULL, 4, &none, 0, NULL, NDX_E_INVALID_ARGUMENT, "arr or weights is NULL");
    /* Sizes: [2^62] int64 cannot be addressed, nor [2, 2^62] rows. */
    expect_refused(&ok, (int64_t)1 << 62, &none, 0, NULL, NDX_E_OVERFLOW, "too large to address");
    ndx_tensor rows_ok = i32(2, SHAPE(2, 2), (int32_t[]){0, 1, 2, 3});
    expect_refused(&rows_ok, INT64_MAX, &none, NDX_BINCOUNT_DENSE, NULL, NDX_E_OVERFLOW,
                   "too large to address");
    /* A size the budget cannot hold. */
    ndx_options small = {.num_threads = 2, .max_memory = 1 << 16};
    ndx_error err;
    ndx_tensor mine = {0};
    assert_fails(ndx_bincount(&ok, (int64_t)1 << 30, &none, 0, &small, &mine, &err), &err,
                 NDX_E_MEMORY_BUDGET, NULL);
    assert_null(mine.data);
    /* An output of the wrong shape. */
    ndx_tensor wrong = test_tensor_v(NDX_INT32, 0, 1, 3);
    test_guard g = test_guard_fill(&wrong, 0x11);
    assert_fails(ndx_bincount(&ok, 4, &none, 0, NULL, &wrong, &err), &err, NDX_E_INVALID_ARGUMENT,
                 NULL);
    assert_untouched(&g, &wrong);
    test_tensor_free(&wrong);
    /* A negative value far into a large input, at every thread count: the lowest is named. */
    ndx_tensor many = test_tensor_v(NDX_INT64, 0, 1, 300000);
    for (int64_t i = 0; i < 300000; i++) ((int64_t *)many.data)[i] = i % 17;
    ((int64_t *)many.data)[250001] = -3;
    ((int64_t *)many.data)[290000] = -4;
    for (int threads = 1; threads <= 4; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        expect_refused(&many, 17, &none, 0, &opt, NDX_E_INVALID_ARGUMENT, "arr[250001] = -3");
    }
    test_tensor_free(&many);
    test_tensor_free(&rows_ok);
    test_tensor_free(&cube);
    test_tensor_free(&i16);
    test_tensor_free(&half);
    test_tensor_free(&w22);
    test_tensor_free(&w3);
    test_tensor_free(&ok);
    test_tensor_free(&rows);
    test_tensor_free(&none);
    test_tensor_free(&arr);
}

/* A negative value as the last of a long input, after every other value could have been
 * counted: a caller's output of the right shape stays as it was, at every thread count, counted
 * or weighted. */
static void last_negative_leaves_output(void **state) {
    (void)state;
    const int64_t n = 400000, size = 1000;
    ndx_tensor arr = test_tensor_v(NDX_INT32, 0, 1, n);
    for (int64_t i = 0; i < n; i++) ((int32_t *)arr.data)[i] = (int32_t)(i % size);
    ((int32_t *)arr.data)[n - 1] = -1;
    ndx_tensor none = test_tensor_v(NDX_INT32, 0, 1, 0);
    ndx_tensor ones = test_tensor_v(NDX_FLOAT32, 0, 1, n);
    for (int64_t i = 0; i < n; i++) ((float *)ones.data)[i] = 1.0f;
    const ndx_tensor *weights[2] = {&none, &ones};
    for (int k = 0; k < 2; k++) {
        for (int threads = 1; threads <= 4; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_error err;
            ndx_tensor out = test_tensor_v(weights[k]->dtype, 0, 1, size);
            test_guard g = test_guard_fill(&out, 0x5a);
            assert_fails(ndx_bincount(&arr, size, weights[k], 0, &opt, &out, &err), &err,
                         NDX_E_INVALID_ARGUMENT, "arr[399999] = -1");
            assert_untouched(&g, &out);
            test_tensor_free(&out);
        }
    }
    test_tensor_free(&ones);
    test_tensor_free(&none);
    test_tensor_free(&arr);
}

/* A budget that holds the output but nothing the size of the values: the count needs no copy of
 * them, and counts on one thread when the budget has no room for a partial count per worker
 * (the same counts either way). */
static void budget_of_the_output_is_enough(void **state) {
    (void)state;
    const int64_t n = 300000, size = 5000;
    test_rng r = {77};
    ndx_tensor arr = test_tensor_v(NDX_INT64, 0, 1, n);
    test_fill_indices(&r, &arr, 0, size + size / 4);
    ndx_tensor none = test_tensor_v(NDX_INT64, 0, 1, 0);
    ndx_tensor want;
    char why[REF_WHY];
    assert_int_equal(ref_bincount(&arr, size, &none, 0, &want, why), REF_OK);
    size_t budgets[2] = {(size_t)size * 8 + 4096, (size_t)size * 8 * 5 + 4096};
    for (int b = 0; b < 2; b++) {
        for (int threads = 1; threads <= 4; threads++) {
            ndx_options opt = {.num_threads = threads, .max_memory = budgets[b]};
            ndx_error err;
            ndx_tensor out = {0};
            assert_ok(ndx_bincount(&arr, size, &none, 0, &opt, &out, &err), &err);
            assert_tensor_eq(&out, &want);
            ndx_tensor_free(&out);
        }
    }
    ref_tensor_free(&want);
    test_tensor_free(&none);
    test_tensor_free(&arr);
}

static void infer_on_partial_specs(void **state) {
    (void)state;
    ndx_error err;
    ndx_spec out;
    ndx_spec arr = spec(NDX_INT32, 2, SHAPE(NDX_UNKNOWN, 5));
    ndx_spec none = spec(NDX_FLOAT32, 1, SHAPE(0));
    assert_ok(ndx_bincount_infer(&arr, 7, &none, NDX_BINCOUNT_DENSE, &out, &err), &err);
    assert_spec_dims(&out, "[?, 7]");
    assert_int_equal(out.dtype, NDX_FLOAT32);
    assert_ok(ndx_bincount_infer(&arr, NDX_UNKNOWN, &none, 0, &out, &err), &err);
    assert_spec_dims(&out, "[?]");
    ndx_spec unknown_rank = arr;
    unknown_rank.rank = NDX_UNKNOWN;
    assert_ok(ndx_bincount_infer(&unknown_rank, 3, &none, NDX_BINCOUNT_DENSE, &out, &err), &err);
    assert_int_equal(out.rank, NDX_UNKNOWN);
    /* Weights of unknown length may be empty: the check waits. */
    ndx_spec w = spec(NDX_INT64, 1, SHAPE(NDX_UNKNOWN));
    ndx_spec flat = spec(NDX_INT32, 1, SHAPE(4));
    assert_ok(ndx_bincount_infer(&flat, 3, &w, 0, &out, &err), &err);
    ndx_spec wr = spec(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 4));
    assert_ok(ndx_bincount_infer(&flat, 3, &wr, 0, &out, &err), &err);
    ndx_spec w3 = spec(NDX_INT64, 1, SHAPE(3));
    assert_fails(ndx_bincount_infer(&flat, 3, &w3, 0, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "`weights` must be the same shape");
    assert_fails(ndx_bincount_infer(&flat, -5, &none, 0, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "size (-5)");
    ndx_spec cube = spec(NDX_INT64, 3, SHAPE(1, 2, 3));
    assert_fails(ndx_bincount_infer(&cube, 3, &none, NDX_BINCOUNT_DENSE, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "at most rank 2");
    assert_ok(ndx_bincount_infer(&cube, 3, &none, 0, &out, &err), &err);
    assert_spec_dims(&out, "[3]");
}

/* Infer on complete and partial specs agrees with the op on random cases, good and bad. */
static void infer_agrees_with_the_op(void **state) {
    (void)state;
    test_rng r = {77};
    static const ndx_dtype arr_dtypes[3] = {NDX_INT32, NDX_INT64, NDX_INT16};
    static const ndx_dtype w_dtypes[5] = {NDX_INT32, NDX_INT64, NDX_FLOAT32, NDX_FLOAT64,
                                          NDX_BFLOAT16};
    for (int trial = 0; trial < 400; trial++) {
        unsigned flags = (unsigned)rng_below(&r, 4);
        int rank = (int)rng_range(&r, 0, 3);
        int64_t shape[3];
        for (int k = 0; k < rank; k++) shape[k] = rng_range(&r, 0, 4);
        ndx_tensor arr = test_tensor(arr_dtypes[rng_below(&r, 8) == 0 ? 2 : rng_below(&r, 2)], 0,
                                     rank, shape);
        test_fill_indices(&r, &arr, rng_below(&r, 6) == 0 ? -1 : 0, 6);
        int64_t wshape[3];
        memcpy(wshape, shape, sizeof wshape);
        int wrank = rank;
        int form = (int)rng_below(&r, 4);
        if (form == 0) {
            wrank = 1;
            wshape[0] = 0;
        } else if (form == 1 && wrank > 0) {
            wshape[rng_below(&r, wrank)] += 1;
        }
        ndx_tensor w = test_tensor(w_dtypes[rng_below(&r, 10) == 0 ? 4 : rng_below(&r, 4)], 0,
                                   wrank, wshape);
        test_fill_random(&r, &w);
        int64_t size = rng_range(&r, -1, 7);
        test_inference full, partial;
        ndx_spec as = ndx_spec_of(&arr), ws = ndx_spec_of(&w);
        full.status = ndx_bincount_infer(&as, size, &ws, flags, &full.specs[0], &full.err);
        ndx_spec pa = test_partial_spec(&r, &arr, 1), pw = test_partial_spec(&r, &w, 1);
        partial.status = ndx_bincount_infer(&pa, size, &pw, flags, &partial.specs[0],
                                            &partial.err);
        ndx_tensor out = {0};
        ndx_error err;
        ndx_status st = ndx_bincount(&arr, size, &w, flags, NULL, &out, &err);
        assert_infer_agrees(&partial, &full, st, &err, 1, &out);
        ndx_tensor_free(&out);
        test_tensor_free(&w);
        test_tensor_free(&arr);
    }
}

/* NaN weights of both signs and infinities (whose sum is the default NaN) in a few bins of a
 * large input: the same bits at 1 to 4 threads, whichever path the engine takes; a bin's first
 * NaN wins. */
static void nan_weights_same_bits(void **state) {
    (void)state;
    int64_t n = 120000;
    ndx_tensor arr = test_tensor_v(NDX_INT32, 0, 1, n);
    ndx_tensor w = test_tensor_v(NDX_FLOAT32, 0, 1, n);
    uint32_t neg = 0xffc00000u, pos = 0x7fc00001u;
    float fneg, fpos;
    memcpy(&fneg, &neg, 4), memcpy(&fpos, &pos, 4);
    for (int64_t i = 0; i < n; i++) {
        ((int32_t *)arr.data)[i] = (int32_t)(i % 7);
        float v = (float)(i % 5);
        if (i % 7 == 1) v = i % 3 ? fneg : fpos;               /* bin 1: -NaN first */
        if (i % 7 == 2) v = (i / 7) % 2 ? INFINITY : -INFINITY; /* bin 2: inf - inf */
        if (i % 7 == 3 && i > 3) v = i % 2 ? fneg : fpos;       /* bin 3: +NaN first (i = 10) */
        ((float *)w.data)[i] = v;
    }
    ndx_tensor first = {0};
    for (int threads = 1; threads <= 4; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_tensor out = {0};
        ndx_error err;
        assert_ok(ndx_bincount(&arr, 7, &w, 0, &opt, &out, &err), &err);
        assert_memory_equal((float *)out.data + 1, &neg, 4);
        assert_memory_equal((float *)out.data + 3, &pos, 4);
        assert_true(isnan(((float *)out.data)[2]));
        if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
    }
    ndx_tensor_free(&first);
    test_tensor_free(&w);
    test_tensor_free(&arr);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tensorflow_examples),
        cmocka_unit_test(float_weights),
        cmocka_unit_test(nan_weights_same_bits),
        cmocka_unit_test(random_against_reference),
        cmocka_unit_test(hostile_inputs_refused),
        cmocka_unit_test(last_negative_leaves_output),
        cmocka_unit_test(budget_of_the_output_is_enough),
        cmocka_unit_test(infer_on_partial_specs),
        cmocka_unit_test(infer_agrees_with_the_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
