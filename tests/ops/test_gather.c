/* test_gather.c — gather (GatherV2): TensorFlow's documented examples and kernel-test cases,
 * a randomized comparison with the naive loop of tests/reference/reference_gather.c (every dtype, index dtype, axis and
 * batch_dims both ways, zero-size dims, scalar indices), the ignore policy, every error (nothing
 * written), the same bytes at 1, 2 and 3 threads, max_memory, and infer on partial specs. */
#include "contract.h"
#include "ndx_test.h"
#include "reference.h"

#include <stdio.h>


static const ndx_dtype index_dtypes[] = {NDX_INT16, NDX_INT32, NDX_INT64};

static ndx_tensor make_indices(ndx_dtype dt, int rank, const int64_t *shape,
                               const int64_t *values) {
    ndx_tensor t = test_tensor(dt, 0, rank, shape);
    int64_t n = test_count(&t);
    for (int64_t i = 0; i < n; i++) test_set_index(&t, i, values[i]);
    return t;
}

/* ---- the result's view (ref_gather_fill fills it) ----------------------------------------- */

static ndx_tensor result_view(const ndx_tensor *params, const ndx_tensor *indices, int axis, int b) {
    int64_t shape[NDX_MAX_RANK];
    int r = 0;
    for (int k = 0; k < axis; k++) shape[r++] = params->shape[k];
    for (int k = b; k < indices->rank; k++) shape[r++] = indices->shape[k];
    for (int k = axis + 1; k < params->rank; k++) shape[r++] = params->shape[k];
    return test_tensor(params->dtype, params->dtype == NDX_STRING ? params->itemsize : 0, r, shape);
}

/* ---- TensorFlow's examples ---------------------------------------------------------------- */

static void test_docstring_examples(void **state) {
    (void)state;
    ndx_error err;
    /* tf.gather(['p0', ..., 'p5'], [2, 0, 2, 5]) */
    ndx_tensor ps = test_strings(2, 1, SHAPE(6), (const char *const[]){"p0", "p1", "p2", "p3", "p4", "p5"});
    ndx_tensor ix = make_indices(NDX_INT32, 1, SHAPE(4), SHAPE(2, 0, 2, 5));
    ndx_tensor want = test_strings(2, 1, SHAPE(4), (const char *const[]){"p2", "p0", "p2", "p5"});
    ndx_tensor out = {0};
    assert_ok(ndx_gather(&ps, &ix, 0, 0, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out);
    test_tensor_free(&ps), test_tensor_free(&ix), test_tensor_free(&want);

    /* params [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23]]: axis 0 and axis 1 by [2, 0] */
    int32_t pv[12] = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
    ndx_tensor p = test_tensor_from(NDX_INT32, 0, 2, SHAPE(3, 4), pv);
    ix = make_indices(NDX_INT64, 1, SHAPE(2), SHAPE(2, 0));
    want = test_tensor_from(NDX_INT32, 0, 2, SHAPE(2, 4), (int32_t[]){20, 21, 22, 23, 0, 1, 2, 3});
    assert_ok(ndx_gather(&p, &ix, 0, 0, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want);
    want = test_tensor_from(NDX_INT32, 0, 2, SHAPE(3, 2), (int32_t[]){2, 0, 12, 10, 22, 20});
    assert_ok(ndx_gather(&p, &ix, 1, 0, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want);
    assert_ok(ndx_gather(&p, &ix, -1, 0, NULL, &out, &err), &err); /* axis -1 is axis 1 */
    want = test_tensor_from(NDX_INT32, 0, 2, SHAPE(3, 2), (int32_t[]){2, 0, 12, 10, 22, 20});
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&ix);
    /* a scalar index drops the axis: tf.gather(params, 1, axis=1) = [1, 11, 21] */
    ix = make_indices(NDX_INT32, 0, NULL, SHAPE(1));
    want = test_tensor_from(NDX_INT32, 0, 1, SHAPE(3), (int32_t[]){1, 11, 21});
    assert_ok(ndx_gather(&p, &ix, 1, 0, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&ix), test_tensor_free(&p);

    /* batch_dims=1, axis=1 */
    int32_t bv[15] = {0, 0, 1, 0, 2, 3, 0, 0, 0, 4, 0, 5, 0, 6, 0};
    p = test_tensor_from(NDX_INT32, 0, 2, SHAPE(3, 5), bv);
    ix = make_indices(NDX_INT32, 2, SHAPE(3, 2), SHAPE(2, 4, 0, 4, 1, 3));
    want = test_tensor_from(NDX_INT32, 0, 2, SHAPE(3, 2), (int32_t[]){1, 2, 3, 4, 5, 6});
    assert_ok(ndx_gather(&p, &ix, 1, 1, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out);
    assert_ok(ndx_gather(&p, &ix, 1, -1, NULL, &out, &err), &err); /* -1 counts from indices' rank */
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&ix), test_tensor_free(&p);
}

/* TensorFlow's message for a bad index: its position in indices, its value, the range. */
static void test_bad_index_message(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor p = test_tensor_v(NDX_FLOAT32, 0, 2, 5, 3);
    test_rng r = {1};
    test_fill_random(&r, &p);
    ndx_tensor ix = make_indices(NDX_INT64, 2, SHAPE(2, 3), SHAPE(0, 1, 2, 3, 4, 7));
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 3, 2, 3, 3);
    test_guard g = test_guard_fill(&out, 0x5a);
    assert_fails(ndx_gather(&p, &ix, 0, 0, NULL, &out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "gather: indices[1,2] = 7 is not in [0, 5)");
    assert_untouched(&g, &out);
    /* a negative index too, and the first bad one in row-major order is named */
    test_set_index(&ix, 1, -1);
    g = test_guard_fill(&out, 0x5b);
    assert_fails(ndx_gather(&p, &ix, 0, 0, NULL, &out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "indices[0,1] = -1 is not in [0, 5)");
    assert_untouched(&g, &out);
    /* under NDX_BAD_INDICES_IGNORE the bad slices are zeros */
    ndx_options ign = test_options(1, NDX_BAD_INDICES_IGNORE);
    assert_ok(ndx_gather(&p, &ix, 0, 0, &ign, &out, &err), &err);
    ndx_tensor want = test_tensor_v(NDX_FLOAT32, 0, 3, 2, 3, 3);
    ref_gather_fill(&p, &ix, 0, 0, &want);
    assert_tensor_eq(&out, &want);
    test_tensor_free(&want);
    /* an empty axis makes every index bad, unless the output is empty: then none is checked */
    ndx_tensor e = test_tensor_v(NDX_FLOAT32, 0, 2, 0, 3);
    assert_fails(ndx_gather(&e, &ix, 0, 0, NULL, &out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "indices[0,0] = 0 is not in [0, 0)");
    assert_ok(ndx_gather(&e, &ix, 0, 0, &ign, &out, &err), &err);
    want = test_tensor_v(NDX_FLOAT32, 0, 3, 2, 3, 3);
    memset(want.data, 0, test_nbytes(&want));
    assert_tensor_eq(&out, &want);
    test_tensor_free(&want), test_tensor_free(&e);
    ndx_tensor no_rows = test_tensor_v(NDX_FLOAT32, 0, 2, 5, 0);
    ndx_tensor empty_out = {0};
    assert_ok(ndx_gather(&no_rows, &ix, 0, 0, NULL, &empty_out, &err), &err); /* [2, 3, 0] */
    assert_int_equal(empty_out.rank, 3);
    assert_int_equal(empty_out.shape[2], 0);
    ndx_tensor_free(&empty_out);
    test_tensor_free(&no_rows), test_tensor_free(&out), test_tensor_free(&ix), test_tensor_free(&p);
}

/* gather_op_test.py's testBadIndicesCPU and testEmptySlices. */
static void test_kernel_test_cases(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor p = test_tensor_from(NDX_INT32, 0, 2, SHAPE(2, 3), (int32_t[]){0, 1, 2, 3, 4, 5});
    ndx_tensor ix = make_indices(NDX_INT32, 2, SHAPE(1, 1), SHAPE(7));
    ndx_tensor out = {0};
    assert_fails(ndx_gather(&p, &ix, 0, 0, NULL, &out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "indices[0,0] = 7 is not in [0, 2)");
    assert_fails(ndx_gather(&p, &ix, 1, 0, NULL, &out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "indices[0,0] = 7 is not in [0, 3)");
    assert_true(out.data == NULL);
    /* params of shape [7, 0, 0]: no slice has elements, so no index is checked */
    ndx_tensor e = test_tensor_v(NDX_FLOAT32, 0, 3, 7, 0, 0);
    ndx_tensor many = make_indices(NDX_INT64, 2, SHAPE(1, 2), SHAPE(3, 9));
    assert_ok(ndx_gather(&e, &many, 0, 0, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 4);
    assert_int_equal(out.shape[0], 1);
    assert_int_equal(out.shape[1], 2);
    assert_int_equal(out.shape[2], 0);
    ndx_tensor_free(&out);
    test_tensor_free(&many), test_tensor_free(&e), test_tensor_free(&ix), test_tensor_free(&p);
}

/* Shape errors, each with TensorFlow's words, and nothing written. */
static void test_shape_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor p = test_tensor_v(NDX_INT32, 0, 3, 2, 3, 4);
    memset(p.data, 0, test_nbytes(&p));
    ndx_tensor ix = make_indices(NDX_INT32, 2, SHAPE(2, 2), SHAPE(0, 1, 1, 0));
    ndx_tensor out = {0};
    assert_fails(ndx_gather(&p, &ix, 3, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Expected axis in the range [-3, 3), but got 3");
    assert_fails(ndx_gather(&p, &ix, -4, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "but got -4");
    assert_fails(ndx_gather(&p, &ix, 2, 3, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Expected batch_dims in the range [-2, 2], but got 3");
    assert_fails(ndx_gather(&p, &ix, 0, 1, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "batch_dims (1) must be less than or equal to axis (0).");
    assert_true(out.data == NULL);
    ndx_tensor ix3 = make_indices(NDX_INT32, 2, SHAPE(3, 1), SHAPE(0, 0, 0));
    assert_fails(ndx_gather(&p, &ix3, 1, 1, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "params.shape[0]: 2 should be equal to indices.shape[0]: 3");
    ndx_tensor p1 = test_tensor_v(NDX_INT32, 0, 1, 2);
    ndx_tensor ix1 = make_indices(NDX_INT32, 1, SHAPE(2), SHAPE(0, 1));
    assert_fails(ndx_gather(&p1, &ix1, 0, 1, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "batch_dims (1) must be less than rank(params) (1).");
    ndx_tensor s = test_tensor_v(NDX_INT32, 0, 0);
    assert_fails(ndx_gather(&s, &ix1, 0, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "params must be at least 1 dimensional");
    ndx_tensor fx = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    assert_fails(ndx_gather(&p, &fx, 0, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, NULL);
    /* a caller's out of the wrong shape, or overlapping params */
    ndx_tensor wrong = test_tensor_v(NDX_INT32, 0, 3, 2, 2, 5);
    test_guard g = test_guard_fill(&wrong, 0x11);
    assert_fails(ndx_gather(&p, &ix, 1, 0, NULL, &wrong, &err), &err, NDX_E_INVALID_ARGUMENT, NULL);
    assert_untouched(&g, &wrong);
    ndx_tensor alias = test_tensor_v(NDX_INT32, 0, 4, 2, 2, 2, 4);
    free(alias.data);
    alias.data = p.data; /* 64 bytes of 96 */
    assert_fails(ndx_gather(&p, &ix, 1, 0, NULL, &alias, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "overlaps");
    test_tensor_free(&wrong), test_tensor_free(&s), test_tensor_free(&fx), test_tensor_free(&p1);
    test_tensor_free(&ix1), test_tensor_free(&ix3), test_tensor_free(&ix), test_tensor_free(&p);
}

/* ---- random ------------------------------------------------------------------------------ */

/* One random case: shapes, axis and batch_dims drawn, every check against the reference. */
static void random_case(test_rng *r, ndx_dtype dt, int big) {
    ndx_error err;
    int prank = (int)rng_range(r, 1, 4), irank = (int)rng_range(r, 0, 3);
    int b = (int)rng_range(r, 0, irank < prank - 1 ? irank : prank - 1);
    int axis = (int)rng_range(r, b, prank - 1);
    int64_t pshape[NDX_MAX_RANK], ishape[NDX_MAX_RANK];
    int64_t hi = big ? 40 : 4, out_count;
    do { /* at most 2^17 output elements (a large case shrinks its dims until it fits) */
        out_count = 1;
        for (int k = 0; k < prank; k++) pshape[k] = rng_range(r, rng_below(r, 12) == 0 ? 0 : 1, hi);
        for (int k = 0; k < irank; k++)
            ishape[k] = k < b ? pshape[k] : rng_range(r, rng_below(r, 12) == 0 ? 0 : 1, hi);
        for (int k = 0; k < prank; k++) out_count *= k == axis ? 1 : pshape[k];
        for (int k = b; k < irank; k++) out_count *= ishape[k];
        hi = hi > 2 ? hi - 1 : hi;
    } while (out_count > ((int64_t)1 << 17));
    ndx_tensor params = test_tensor(dt, test_random_width(r, dt), prank, pshape);
    test_fill_random(r, &params);
    ndx_tensor ix = test_tensor(index_dtypes[rng_below(r, 3)], 0, irank, ishape);
    int64_t n = pshape[axis];
    test_fill_indices(r, &ix, 0, n > 0 ? n - 1 : 0);
    ndx_tensor want = result_view(&params, &ix, axis, b);
    ref_gather_fill(&params, &ix, axis, b, &want);
    int use_axis = rng_below(r, 2) ? axis - prank : axis;
    int use_b = b > 0 && b < irank && rng_below(r, 2) ? b - irank : b;
    int any_out = test_count(&want) > 0;
    ndx_tensor first = {0};
    for (int threads = 1; threads <= 3; threads++) {
        ndx_options o = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_tensor out = {0};
        ndx_status s = ndx_gather(&params, &ix, use_axis, use_b, &o, &out, &err);
        if (n == 0 && any_out && test_count(&ix) > 0) {
            assert_fails(s, &err, NDX_E_OUT_OF_RANGE, "is not in [0, 0)");
            continue;
        }
        assert_ok(s, &err);
        assert_tensor_eq(&out, &want);
        if (threads == 1) first = out;
        else ndx_tensor_free(&out);
    }
    ndx_tensor_free(&first);
    /* some bad indices, under both policies */
    if (test_count(&ix) > 0 && any_out) {
        for (int64_t i = 0; i < test_count(&ix); i += 1 + rng_below(r, 4))
            test_set_index(&ix, i, rng_below(r, 2) ? -1 - rng_below(r, 3) : n + rng_below(r, 3));
        ref_gather_fill(&params, &ix, axis, b, &want);
        ndx_options ign = test_options((int)rng_range(r, 1, 3), NDX_BAD_INDICES_IGNORE);
        ndx_tensor out = {0};
        assert_ok(ndx_gather(&params, &ix, use_axis, use_b, &ign, &out, &err), &err);
        assert_tensor_eq(&out, &want);
        test_guard g = test_guard_fill(&out, 0x3c);
        assert_fails(ndx_gather(&params, &ix, use_axis, use_b, NULL, &out, &err), &err,
                     NDX_E_OUT_OF_RANGE, "is not in [0, ");
        assert_untouched(&g, &out);
        ndx_tensor_free(&out);
    }
    /* infer agrees with the op on partial specs */
    test_inference full = {0}, part = {0};
    ndx_spec ps = ndx_spec_of(&params), is = ndx_spec_of(&ix);
    full.status = ndx_gather_infer(&ps, &is, use_axis, use_b, &full.specs[0], &full.err);
    ndx_spec pps = test_partial_spec(r, &params, 1), pis = test_partial_spec(r, &ix, 1);
    part.status = ndx_gather_infer(&pps, &pis, use_axis, use_b, &part.specs[0], &part.err);
    ndx_tensor out = {0};
    ndx_options ign = test_options(1, NDX_BAD_INDICES_IGNORE);
    ndx_status s = ndx_gather(&params, &ix, use_axis, use_b, &ign, &out, &err);
    assert_infer_agrees(&part, &full, s, &err, 1, &out);
    ndx_tensor_free(&out);
    test_tensor_free(&want), test_tensor_free(&ix), test_tensor_free(&params);
}

static void test_random_every_dtype(void **state) {
    (void)state;
    test_rng r = {42};
    for (int d = 0; d < test_all_dtypes_count; d++)
        for (int i = 0; i < 60; i++) random_case(&r, test_all_dtypes[d], 0);
}

/* Larger shapes: the element loop with its prefetch ring, slices in order, several workers,
 * outer dims sharing index rows across many batches. */
static void test_random_large(void **state) {
    (void)state;
    test_rng r = {7};
    const ndx_dtype dts[] = {NDX_FLOAT32, NDX_UINT8, NDX_COMPLEX128, NDX_STRING, NDX_FLOAT64};
    for (int i = 0; i < 40; i++) random_case(&r, dts[i % 5], 1);
}

/* Many outer slices, each reading every index (the repeat of index rows), large enough for
 * threads and the element ring, compared across thread counts and with the reference. */
static void test_outer_axis_threads(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {99};
    int64_t slice_widths[] = {1, 3, 16, 64};
    for (int w = 0; w < 4; w++) {
        ndx_tensor p = test_tensor_v(NDX_FLOAT32, 0, 4, 3, 37, 50, slice_widths[w]);
        test_fill_random(&r, &p);
        ndx_tensor ix = test_tensor_v(NDX_INT32, 0, 2, 3, 300);
        test_fill_indices(&r, &ix, 0, 49);
        for (int b = 0; b <= 1; b++) {
            ndx_tensor want = result_view(&p, &ix, 2, b);
            ref_gather_fill(&p, &ix, 2, b, &want);
            for (int t = 1; t <= 3; t++) {
                ndx_options o = test_options(t, NDX_BAD_INDICES_ERROR);
                ndx_tensor out = {0};
                assert_ok(ndx_gather(&p, &ix, 2, b, &o, &out, &err), &err);
                assert_tensor_eq(&out, &want);
                ndx_tensor_free(&out);
            }
            test_tensor_free(&want);
        }
        test_tensor_free(&ix), test_tensor_free(&p);
    }
}

static void test_max_memory(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor p = test_tensor_v(NDX_INT64, 0, 2, 10, 8);
    memset(p.data, 1, test_nbytes(&p));
    ndx_tensor ix = make_indices(NDX_INT32, 1, SHAPE(4), SHAPE(1, 2, 3, 4));
    ndx_options o = {.max_memory = 4 * 8 * 8 - 1};
    ndx_tensor out = {0};
    assert_fails(ndx_gather(&p, &ix, 0, 0, &o, &out, &err), &err, NDX_E_MEMORY_BUDGET, NULL);
    assert_true(out.data == NULL);
    o.max_memory = 4 * 8 * 8;
    assert_ok(ndx_gather(&p, &ix, 0, 0, &o, &out, &err), &err);
    ndx_tensor_free(&out);
    /* the shape function gives the view without data */
    ndx_tensor v;
    assert_ok(ndx_gather_shape(&p, &ix, 1, 0, &v, &err), &err);
    assert_int_equal(v.rank, 2);
    assert_int_equal(v.shape[0], 10);
    assert_int_equal(v.shape[1], 4);
    assert_true(v.data == NULL);
    test_tensor_free(&ix), test_tensor_free(&p);
}

static void test_infer_partial(void **state) {
    (void)state;
    ndx_error err;
    ndx_spec p = spec(NDX_FLOAT32, 3, SHAPE(4, NDX_UNKNOWN, 6));
    ndx_spec i = spec(NDX_INT64, 2, SHAPE(4, NDX_UNKNOWN));
    ndx_spec o;
    assert_ok(ndx_gather_infer(&p, &i, 1, 1, &o, &err), &err);
    assert_spec_dims(&o, "[4, ?, 6]");
    assert_ok(ndx_gather_infer(&p, &i, -1, 0, &o, &err), &err);
    assert_spec_dims(&o, "[4, ?, 4, ?]");
    ndx_spec u = spec(NDX_INT32, NDX_UNKNOWN, NULL);
    assert_ok(ndx_gather_infer(&p, &u, 0, 0, &o, &err), &err);
    assert_int_equal(o.rank, NDX_UNKNOWN);
    assert_fails(ndx_gather_infer(&p, &u, 3, 0, &o, &err), &err, NDX_E_INVALID_ARGUMENT, "axis");
    assert_ok(ndx_gather_infer(&u, &i, 5, -1, &o, &err), &err); /* waits for params' rank */
    assert_int_equal(o.rank, NDX_UNKNOWN);
}

/* Every block through the caller's allocator: after a call only the output is held; a refused
 * allocation fails cleanly with nothing held. */
static void test_allocator_contract(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {5};
    ndx_tensor p = test_tensor_v(NDX_FLOAT32, 0, 3, 4, 300, 8);
    test_fill_random(&r, &p);
    ndx_tensor ix = test_tensor_v(NDX_INT64, 0, 1, 5000);
    test_fill_indices(&r, &ix, 0, 299);
    test_allocator a;
    test_allocator_init(&a);
    ndx_options o = {.num_threads = 2, .allocator = &a.base};
    ndx_tensor out = {0};
    assert_ok(ndx_gather(&p, &ix, 1, 0, &o, &out, &err), &err);
    assert_int_equal(a.live, 1);
    test_allocator_free(&a, out.data);
    a.refuse = 1;
    out = (ndx_tensor){0};
    assert_fails(ndx_gather(&p, &ix, 1, 0, &o, &out, &err), &err, NDX_E_NO_MEMORY, NULL);
    assert_true(out.data == NULL);
    assert_int_equal(a.live, 0);
    test_tensor_free(&ix), test_tensor_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_contract),
        cmocka_unit_test(test_docstring_examples), cmocka_unit_test(test_bad_index_message),
        cmocka_unit_test(test_kernel_test_cases),
        cmocka_unit_test(test_shape_errors),       cmocka_unit_test(test_random_every_dtype),
        cmocka_unit_test(test_random_large),       cmocka_unit_test(test_outer_axis_threads),
        cmocka_unit_test(test_max_memory),         cmocka_unit_test(test_infer_partial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
