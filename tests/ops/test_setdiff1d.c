/* test_setdiff1d.c — setdiff1d (ListDiff): TensorFlow's docstring example and the cases of its
 * listdiff_op_test (over its dtypes and both index dtypes), NaN and signed zeros as its
 * std::unordered_set compares them, a randomized comparison with the quadratic reference
 * (every dtype ListDiff takes, duplicates in x and y, empty vectors, 1, 2 and 3 threads alike,
 * into the caller's buffers), infer agreeing with the op, every error with nothing written, the
 * budget and the caller's allocator. */
#include "contract.h"
#include "ndx_test.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>

/* The vector of `dt` holding the small integers v[0..n) (strings: their decimal text, as
 * listdiff_op_test makes them). */
static ndx_tensor vector_of(ndx_dtype dt, int64_t n, const int *v) {
    if (dt == NDX_STRING) {
        char text[64][8];
        const char *ptr[64];
        for (int64_t i = 0; i < n; i++) {
            snprintf(text[i], sizeof text[i], "%d", v[i]);
            ptr[i] = text[i];
        }
        return test_strings(4, 1, &n, ptr);
    }
    ndx_tensor t = test_tensor(dt, 0, 1, &n);
    for (int64_t i = 0; i < n; i++) {
        void *e = (unsigned char *)t.data + (size_t)i * t.itemsize;
        switch (dt) {
        case NDX_FLOAT16: *(uint16_t *)e = ndx_float_to_float16((float)v[i]); break;
        case NDX_FLOAT32: *(float *)e = (float)v[i]; break;
        case NDX_FLOAT64: *(double *)e = v[i]; break;
        default: test_set_index(&t, i, v[i]); /* int32, int64 */
        }
    }
    return t;
}

static int64_t idx_at(const ndx_tensor *t, int64_t i) {
    return t->dtype == NDX_INT32 ? ((int32_t *)t->data)[i] : ((int64_t *)t->data)[i];
}

/* Runs setdiff1d(x, y) with out_idx and checks out and idx against the expected positions. */
static void expect_case(ndx_dtype dt, ndx_dtype out_idx, int64_t nx, const int *x, int64_t ny,
                        const int *y, int64_t nk, const int *positions) {
    ndx_error err;
    ndx_tensor tx = vector_of(dt, nx, x), ty = vector_of(dt, ny, y);
    ndx_tensor out = {0}, idx = {0};
    assert_ok(ndx_setdiff1d(&tx, &ty, out_idx, NULL, &out, &idx, &err), &err);
    assert_int_equal(out.rank, 1);
    assert_int_equal(out.shape[0], nk);
    assert_int_equal(idx.shape[0], nk);
    assert_int_equal(idx.dtype, out_idx);
    assert_int_equal(out.dtype, dt);
    for (int64_t i = 0; i < nk; i++) {
        assert_int_equal(idx_at(&idx, i), positions[i]);
        assert_memory_equal((unsigned char *)out.data + (size_t)i * out.itemsize,
                            (unsigned char *)tx.data + (size_t)positions[i] * tx.itemsize,
                            out.itemsize);
    }
    ndx_tensor_free(&out), ndx_tensor_free(&idx);
    test_tensor_free(&tx), test_tensor_free(&ty);
}


/* tf.compat.v1.setdiff1d's docstring, and listdiff_op_test's cases over its dtypes (int32,
 * int64, float16, float32, float64, string) and both index dtypes. */
static void test_tensorflow_cases(void **state) {
    (void)state;
    const ndx_dtype dtypes[] = {NDX_INT32, NDX_INT64, NDX_FLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                NDX_STRING};
    const int none[1] = {0};
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
        for (int k = 0; k < 2; k++) {
            ndx_dtype dt = dtypes[d], ix = k ? NDX_INT64 : NDX_INT32;
            /* the docstring: x = [1, 2, 3, 4, 5, 6], y = [1, 3, 5] -> [2, 4, 6] at [1, 3, 5] */
            expect_case(dt, ix, 6, (int[]){1, 2, 3, 4, 5, 6}, 3, (int[]){1, 3, 5}, 3,
                        (int[]){1, 3, 5});
            expect_case(dt, ix, 4, (int[]){1, 2, 3, 4}, 2, (int[]){1, 2}, 2, (int[]){2, 3});
            expect_case(dt, ix, 4, (int[]){1, 2, 3, 4}, 1, (int[]){2}, 3, (int[]){0, 2, 3});
            expect_case(dt, ix, 4, (int[]){1, 4, 3, 2}, 2, (int[]){4, 2}, 2, (int[]){0, 2});
            /* testDuplicates */
            expect_case(dt, ix, 8, (int[]){1, 2, 4, 3, 2, 3, 3, 1}, 2, (int[]){4, 2}, 5,
                        (int[]){0, 3, 5, 6, 7});
            /* testFullyOverlapping, testNonOverlapping */
            expect_case(dt, ix, 4, (int[]){1, 2, 3, 4}, 4, (int[]){1, 2, 3, 4}, 0, none);
            expect_case(dt, ix, 4, (int[]){1, 2, 3, 4}, 2, (int[]){5, 6}, 4,
                        (int[]){0, 1, 2, 3});
            /* testEmptyX, testEmptyY, testEmptyXY */
            expect_case(dt, ix, 0, none, 2, (int[]){1, 2}, 0, none);
            expect_case(dt, ix, 4, (int[]){1, 2, 3, 4}, 0, none, 4, (int[]){0, 1, 2, 3});
            expect_case(dt, ix, 0, none, 0, none, 0, none);
        }
}

/* NaN is equal to nothing (kept in x, useless in y); -0.0 == 0.0 in float32 and float64; float16
 * and bfloat16 compare their bits, as unique does. */
static void test_nan_and_zeros(void **state) {
    (void)state;
    ndx_error err;
    float xv[5] = {NAN, 0.0f, -0.0f, 1.0f, NAN}, yv[3] = {NAN, 0.0f, 2.0f};
    ndx_tensor x = test_tensor_from(NDX_FLOAT32, 0, 1, SHAPE(5), xv);
    ndx_tensor y = test_tensor_from(NDX_FLOAT32, 0, 1, SHAPE(3), yv);
    ndx_tensor out = {0}, idx = {0};
    assert_ok(ndx_setdiff1d(&x, &y, NDX_INT64, NULL, &out, &idx, &err), &err);
    assert_int_equal(out.shape[0], 3); /* NaN, 1, NaN at 0, 3, 4 */
    int64_t want[3] = {0, 3, 4};
    for (int i = 0; i < 3; i++) assert_int_equal(((int64_t *)idx.data)[i], want[i]);
    assert_true(isnan(((float *)out.data)[0]) && isnan(((float *)out.data)[2]));
    ndx_tensor_free(&out), ndx_tensor_free(&idx), test_tensor_free(&x), test_tensor_free(&y);
    double dx[2] = {-0.0, 0.0}, dy[1] = {-0.0};
    x = test_tensor_from(NDX_FLOAT64, 0, 1, SHAPE(2), dx);
    y = test_tensor_from(NDX_FLOAT64, 0, 1, SHAPE(1), dy);
    assert_ok(ndx_setdiff1d(&x, &y, NDX_INT32, NULL, &out, &idx, &err), &err);
    assert_int_equal(out.shape[0], 0);
    ndx_tensor_free(&out), ndx_tensor_free(&idx), test_tensor_free(&x), test_tensor_free(&y);
    uint16_t hx[3] = {0x8000, 0x0000, 0x7e00}, hy[2] = {0x0000, 0x7e00};
    x = test_tensor_from(NDX_FLOAT16, 0, 1, SHAPE(3), hx);
    y = test_tensor_from(NDX_FLOAT16, 0, 1, SHAPE(2), hy);
    assert_ok(ndx_setdiff1d(&x, &y, NDX_INT32, NULL, &out, &idx, &err), &err);
    assert_int_equal(out.shape[0], 2); /* -0.0 (other bits) and the NaN */
    assert_int_equal(((int32_t *)idx.data)[0], 0);
    assert_int_equal(((int32_t *)idx.data)[1], 2);
    ndx_tensor_free(&out), ndx_tensor_free(&idx), test_tensor_free(&x), test_tensor_free(&y);
}

/* Values drawn from a small pool shared by x and y, so matches and duplicates are common. */
static void fill_from_pool(test_rng *r, const ndx_tensor *pool, ndx_tensor *t) {
    size_t w = t->itemsize;
    for (int64_t i = 0; i < test_count(t); i++)
        memcpy((unsigned char *)t->data + (size_t)i * w,
               (unsigned char *)pool->data + (size_t)rng_below(r, (uint64_t)pool->shape[0]) * w, w);
}

static int listdiff_takes(ndx_dtype dt) {
    return dt != NDX_BOOL && dt != NDX_COMPLEX64 && dt != NDX_COMPLEX128;
}

static void test_random(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {29};
    for (int d = 0; d < test_all_dtypes_count; d++) {
        ndx_dtype dt = test_all_dtypes[d];
        if (!listdiff_takes(dt)) continue;
        for (int it = 0; it < 40; it++) {
            size_t width = test_random_width(&r, dt);
            int64_t pool_n = rng_range(&r, 1, it % 5 == 0 ? 400 : 8);
            ndx_tensor pool = test_tensor(dt, width, 1, &pool_n);
            test_fill_random(&r, &pool);
            int64_t nx = rng_below(&r, 8) == 0 ? 0 : rng_range(&r, 1, it % 5 == 0 ? 3000 : 30);
            int64_t ny = rng_below(&r, 8) == 0 ? 0 : rng_range(&r, 1, it % 5 == 0 ? 500 : 30);
            ndx_tensor x = test_tensor(dt, width, 1, &nx), y = test_tensor(dt, width, 1, &ny);
            fill_from_pool(&r, &pool, &x);
            fill_from_pool(&r, &pool, &y);
            ndx_dtype out_idx = rng_below(&r, 2) ? NDX_INT32 : NDX_INT64;
            char why[REF_WHY];
            ndx_tensor ro, ri;
            assert_int_equal(ref_setdiff1d(&x, &y, out_idx, &ro, &ri, why), REF_OK);
            ndx_tensor o1 = {0}, i1 = {0};
            assert_ok(ndx_setdiff1d(&x, &y, out_idx, NULL, &o1, &i1, &err), &err);
            assert_tensor_eq(&o1, &ro);
            assert_tensor_eq(&i1, &ri);
            for (int t = 1; t <= 3; t++) {
                ndx_options o = test_options(t, NDX_BAD_INDICES_ERROR);
                ndx_tensor out = {0}, idx = {0};
                assert_ok(ndx_setdiff1d(&x, &y, out_idx, &o, &out, &idx, &err), &err);
                assert_tensor_eq(&out, &o1);
                assert_tensor_eq(&idx, &i1);
                ndx_tensor_free(&out), ndx_tensor_free(&idx);
            }
            /* into the caller's buffers, as the shape function describes them */
            ndx_tensor vo, vi;
            assert_ok(ndx_setdiff1d_shape(&x, &y, out_idx, &vo, &vi, &err), &err);
            assert_true(vo.data == NULL && vi.data == NULL);
            ndx_tensor out = test_tensor(vo.dtype, vo.dtype == NDX_STRING ? vo.itemsize : 0, 1,
                                         vo.shape);
            ndx_tensor idx = test_tensor(vi.dtype, 0, 1, vi.shape);
            assert_ok(ndx_setdiff1d(&x, &y, out_idx, NULL, &out, &idx, &err), &err);
            assert_tensor_eq(&out, &ro);
            assert_tensor_eq(&idx, &ri);
            /* infer on full and partial specs agrees with the op */
            test_inference full = {0}, part = {0};
            ndx_spec xs = ndx_spec_of(&x), ys = ndx_spec_of(&y);
            ndx_spec px = test_partial_spec(&r, &x, 1), py = test_partial_spec(&r, &y, 1);
            full.status = ndx_setdiff1d_infer(&xs, &ys, out_idx, &full.specs[0], &full.specs[1],
                                              &full.err);
            part.status = ndx_setdiff1d_infer(&px, &py, out_idx, &part.specs[0], &part.specs[1],
                                              &part.err);
            ndx_tensor outs[2] = {o1, i1};
            assert_infer_agrees(&part, &full, NDX_OK, &err, 2, outs);
            test_tensor_free(&out), test_tensor_free(&idx);
            ndx_tensor_free(&o1), ndx_tensor_free(&i1);
            ref_tensor_free(&ro), ref_tensor_free(&ri);
            test_tensor_free(&x), test_tensor_free(&y), test_tensor_free(&pool);
        }
    }
}

/* Many distinct values in y (the set is sized for them) and in x. */
static void test_many_values(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {5};
    int64_t n = 30000, m = 12000;
    ndx_tensor x = test_tensor(NDX_INT64, 0, 1, &n), y = test_tensor(NDX_INT64, 0, 1, &m);
    for (int64_t i = 0; i < n; i++) ((int64_t *)x.data)[i] = (int64_t)rng_below(&r, 20000) << 20;
    for (int64_t j = 0; j < m; j++) ((int64_t *)y.data)[j] = (int64_t)rng_below(&r, 20000) << 20;
    char why[REF_WHY];
    ndx_tensor ro, ri, out = {0}, idx = {0};
    assert_int_equal(ref_setdiff1d(&x, &y, NDX_INT32, &ro, &ri, why), REF_OK);
    assert_ok(ndx_setdiff1d(&x, &y, NDX_INT32, NULL, &out, &idx, &err), &err);
    assert_tensor_eq(&out, &ro);
    assert_tensor_eq(&idx, &ri);
    ndx_tensor_free(&out), ndx_tensor_free(&idx), ref_tensor_free(&ro), ref_tensor_free(&ri);
    test_tensor_free(&x), test_tensor_free(&y);
}

static void test_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor x = test_tensor_v(NDX_INT32, 0, 1, 4), y = test_tensor_v(NDX_INT32, 0, 1, 2);
    for (int i = 0; i < 4; i++) ((int32_t *)x.data)[i] = i;
    ((int32_t *)y.data)[0] = 1, ((int32_t *)y.data)[1] = 7;
    ndx_tensor out = {0}, idx = {0};
    ndx_tensor m = test_tensor_v(NDX_INT32, 0, 2, 2, 2), s = test_tensor_v(NDX_INT32, 0, 0);
    memset(m.data, 0, test_nbytes(&m));
    memset(s.data, 0, test_nbytes(&s));
    assert_fails(ndx_setdiff1d(&m, &y, NDX_INT32, NULL, &out, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "setdiff1d: x should be a 1D vector, but it has shape [2, 2]");
    assert_fails(ndx_setdiff1d(&x, &s, NDX_INT32, NULL, &out, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "setdiff1d: y should be a 1D vector");
    assert_fails(ndx_setdiff1d(&x, &y, NDX_INT16, NULL, &out, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out_idx must be int32 or int64");
    ndx_tensor fy = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    memset(fy.data, 0, test_nbytes(&fy));
    assert_fails(ndx_setdiff1d(&x, &fy, NDX_INT32, NULL, &out, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "y must have x's dtype int32, not float32");
    ndx_tensor bx = test_tensor_v(NDX_BOOL, 0, 1, 2), cx = test_tensor_v(NDX_COMPLEX64, 0, 1, 2);
    memset(bx.data, 0, test_nbytes(&bx));
    memset(cx.data, 0, test_nbytes(&cx));
    assert_fails(ndx_setdiff1d(&bx, &bx, NDX_INT32, NULL, &out, &idx, &err), &err,
                 NDX_E_UNSUPPORTED, "x of dtype bool is not supported");
    assert_fails(ndx_setdiff1d(&cx, &cx, NDX_INT32, NULL, &out, &idx, &err), &err,
                 NDX_E_UNSUPPORTED, "complex64");
    ndx_tensor s2 = test_strings(2, 1, SHAPE(1), (const char *const[]){"a"});
    ndx_tensor s3 = test_strings(3, 1, SHAPE(1), (const char *const[]){"a"});
    assert_fails(ndx_setdiff1d(&s2, &s3, NDX_INT32, NULL, &out, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "one width");
    assert_fails(ndx_setdiff1d(NULL, &y, NDX_INT32, NULL, &out, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "x or y is NULL");
    assert_fails(ndx_setdiff1d(&x, &y, NDX_INT32, NULL, NULL, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out or idx is NULL");
    assert_true(out.data == NULL && idx.data == NULL);
    /* a caller's output of the wrong shape: nothing written, nothing left allocated */
    ndx_tensor wrong_idx = test_tensor_v(NDX_INT32, 0, 1, 2), good_out = test_tensor_v(NDX_INT32, 0, 1, 3);
    test_guard gi = test_guard_fill(&wrong_idx, 0x21), go = test_guard_fill(&good_out, 0x22);
    assert_fails(ndx_setdiff1d(&x, &y, NDX_INT32, NULL, &good_out, &wrong_idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "idx");
    assert_untouched(&gi, &wrong_idx);
    assert_untouched(&go, &good_out);
    assert_fails(ndx_setdiff1d(&x, &y, NDX_INT32, NULL, &wrong_idx, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out");
    assert_true(idx.data == NULL);
    /* out over x */
    ndx_tensor over = x;
    over.shape[0] = 3;
    ndx_tensor keep = test_tensor_v(NDX_INT32, 0, 1, 4);
    memcpy(keep.data, x.data, 16);
    assert_fails(ndx_setdiff1d(&x, &y, NDX_INT32, NULL, &over, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out overlaps x");
    assert_memory_equal(keep.data, x.data, 16);
    assert_true(idx.data == NULL);
    /* max_memory: 8 bytes per element of x and 16 slots of 8 bytes, then the outputs */
    ndx_options o = {.max_memory = 4 * 8 + 16 * 8 - 1};
    assert_fails(ndx_setdiff1d(&x, &y, NDX_INT32, &o, &out, &idx, &err), &err,
                 NDX_E_MEMORY_BUDGET, NULL);
    assert_true(out.data == NULL && idx.data == NULL);
    o.max_memory = 4 * 8 + 16 * 8 + 3 * 4 + 3 * 4;
    assert_ok(ndx_setdiff1d(&x, &y, NDX_INT32, &o, &out, &idx, &err), &err);
    ndx_tensor_free(&out), ndx_tensor_free(&idx);
    /* infer refuses on partial specs what the op refuses */
    ndx_spec us = ndx_spec_make(NDX_INT32, NDX_UNKNOWN, NULL), ms = ndx_spec_of(&m);
    ndx_spec os, is;
    assert_ok(ndx_setdiff1d_infer(&us, &us, NDX_INT64, &os, &is, &err), &err);
    assert_int_equal(os.rank, 1);
    assert_int_equal(os.shape[0], NDX_UNKNOWN);
    assert_int_equal(is.dtype, NDX_INT64);
    assert_fails(ndx_setdiff1d_infer(&us, &ms, NDX_INT64, &os, &is, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "y should be a 1D vector");
    ndx_spec big = ndx_spec_make(NDX_INT32, 1, (const int64_t[]){INT32_MAX});
    assert_fails(ndx_setdiff1d_infer(&big, &us, NDX_INT64, &os, &is, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "x too large for int32 indexing");
    test_tensor_free(&keep), test_tensor_free(&wrong_idx), test_tensor_free(&good_out);
    test_tensor_free(&s2), test_tensor_free(&s3), test_tensor_free(&bx), test_tensor_free(&cx);
    test_tensor_free(&fy), test_tensor_free(&m), test_tensor_free(&s);
    test_tensor_free(&x), test_tensor_free(&y);
}

/* Scratch and outputs through the caller's allocator: after a call only the two outputs are
 * held; a refused allocation fails cleanly with nothing held and no output set. */
static void test_allocator_contract(void **state) {
    (void)state;
    ndx_error err;
    int64_t n = 4000, m = 600;
    ndx_tensor x = test_tensor(NDX_INT32, 0, 1, &n), y = test_tensor(NDX_INT32, 0, 1, &m);
    for (int64_t i = 0; i < n; i++) ((int32_t *)x.data)[i] = (int32_t)(i % 1000);
    for (int64_t j = 0; j < m; j++) ((int32_t *)y.data)[j] = (int32_t)(j * 3);
    test_allocator a;
    test_allocator_init(&a);
    ndx_options o = {.allocator = &a.base};
    ndx_tensor out = {0}, idx = {0};
    assert_ok(ndx_setdiff1d(&x, &y, NDX_INT32, &o, &out, &idx, &err), &err);
    assert_int_equal(a.live, 2);
    test_allocator_free(&a, out.data), test_allocator_free(&a, idx.data);
    a.refuse = 1;
    out = idx = (ndx_tensor){0};
    assert_fails(ndx_setdiff1d(&x, &y, NDX_INT32, &o, &out, &idx, &err), &err, NDX_E_NO_MEMORY,
                 NULL);
    assert_true(out.data == NULL && idx.data == NULL);
    assert_int_equal(a.live, 0);
    test_tensor_free(&x), test_tensor_free(&y);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensorflow_cases), cmocka_unit_test(test_nan_and_zeros),
        cmocka_unit_test(test_random),           cmocka_unit_test(test_many_values),
        cmocka_unit_test(test_errors),           cmocka_unit_test(test_allocator_contract),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
