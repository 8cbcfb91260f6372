/* test_advisories.c — regression tests for the classes of bug in TensorFlow's security advisories
 * and crash reports on the ops ndx implements. Each test feeds ndx its own inputs of the class
 * named above it and asserts a clear error (status + message naming the op) and that nothing was
 * written: caller-provided outputs keep their bytes, op-allocated outputs stay NULL, and a tensor
 * updated in place is unchanged. */
#include "ndx_test.h"

#include <stdio.h>

static const ndx_dtype index_dtypes[] = {NDX_INT16, NDX_INT32, NDX_INT64};

static ndx_options budget_opt(size_t max_memory) {
    ndx_options o;
    memset(&o, 0, sizeof o);
    o.num_threads = 1;
    o.max_memory = max_memory;
    return o;
}

/* An index tensor of dtype dt holding `values` (converted, so INT64_MIN becomes the dtype's own
 * extreme bits). */
static ndx_tensor make_index(ndx_dtype dt, int rank, const int64_t *shape, const int64_t *values) {
    ndx_tensor t = test_tensor(dt, 0, rank, shape);
    int64_t n = test_count(&t);
    for (int64_t i = 0; i < n; i++) test_set_index(&t, i, values[i]);
    return t;
}

/* 1 when v survives being stored in an index tensor of dtype dt (INT64_MIN does not in int16). */
static int fits(ndx_dtype dt, int64_t v) {
    return dt == NDX_INT64 || (dt == NDX_INT32 ? v == (int32_t)v : v == (int16_t)v);
}

static ndx_tensor make_float(int rank, const int64_t *shape) {
    ndx_tensor t = test_tensor(NDX_FLOAT32, 0, rank, shape);
    int64_t n = test_count(&t);
    for (int64_t i = 0; i < n; i++) ((float *)t.data)[i] = (float)(i + 1);
    return t;
}

/* A view whose shape is given but whose data is a small real block: an op that reads it before
 * validating the shape is caught by the sanitizer build. */
static ndx_tensor view_of(ndx_dtype dt, int rank, const int64_t *shape, void *block) {
    return ndx_tensor_make(dt, rank, shape, block);
}

/* The status must be one of two (where ndx.h leaves the category open) with a message. */
static void assert_fails_either(ndx_status st, const ndx_error *err, ndx_status a, ndx_status b,
                                const char *needle) {
    if (st != a && st != b)
        fail_msg("expected %s or %s, got %s (%s)", ndx_status_name(a), ndx_status_name(b),
                 ndx_status_name(st), err->message);
    assert_fails(st, err, st, needle);
}

/* A pre-filled caller output for gather_nd / scatter_nd results. */
typedef struct {
    ndx_tensor t;
    test_guard g;
} guarded;

static guarded guarded_output(ndx_dtype dt, int rank, const int64_t *shape) {
    guarded o;
    o.t = test_tensor(dt, 0, rank, shape);
    o.g = test_guard_fill(&o.t, 0x6b);
    return o;
}

static void check_and_free(guarded *o) {
    assert_untouched(&o->g, &o->t);
    test_tensor_free(&o->t);
}

/* ---- gather_nd ---------------------------------------------------------------------------- */

/* CVE-2021-37687 (TF Lite GatherNd and Gather: negative indices were not rejected, giving heap
 * out-of-bounds reads). Every negative coordinate, in every index dtype and in any position of a
 * row, must be refused before anything is read or written. */
static void gather_nd_negative_indices(void **state) {
    (void)state;
    ndx_tensor params = make_float(2, SHAPE(4, 3));
    const int64_t rows[][2] = {{-1, 0}, {1, -1}, {INT64_MIN, 0}, {0, INT16_MIN}, {-4, -3}};
    for (size_t d = 0; d < 3; d++) {
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            if (!fits(index_dtypes[d], rows[r][0]) || !fits(index_dtypes[d], rows[r][1])) continue;
            ndx_tensor idx = make_index(index_dtypes[d], 2, SHAPE(2, 2), VALS(1, 2, rows[r][0], rows[r][1]));
            guarded out = guarded_output(NDX_FLOAT32, 1, SHAPE(2));
            ndx_error err;
            assert_fails(ndx_gather_nd(&params, &idx, 0, NULL, &out.t, &err), &err,
                         NDX_E_OUT_OF_RANGE, "gather_nd");
            check_and_free(&out);
            ndx_tensor alloc = {0};
            assert_fails(ndx_gather_nd(&params, &idx, 0, NULL, &alloc, &err), &err,
                         NDX_E_OUT_OF_RANGE, "gather_nd");
            assert_null(alloc.data);
            test_tensor_free(&idx);
        }
    }
    test_tensor_free(&params);
}

/* TF Lite GatherNd checked only the flat offset, so [0, 5] passed for params [2, 3] and read the
 * wrong element; its out-of-bounds reads for indices at or past a dimension were then fixed as
 * advisories. Each coordinate must be checked against its own dimension, including values that
 * only overflow when multiplied by a stride. */
static void gather_nd_index_past_its_dimension(void **state) {
    (void)state;
    ndx_tensor params = make_float(2, SHAPE(2, 3));
    const int64_t rows[][2] = {{0, 5}, {0, 3}, {2, 0}, {1, INT32_MAX}, {INT64_MAX, 0},
                               {(int64_t)1 << 62, 1}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        ndx_tensor idx = make_index(NDX_INT64, 1, SHAPE(2), rows[r]);
        guarded out = guarded_output(NDX_FLOAT32, 0, NULL);
        ndx_error err;
        assert_fails(ndx_gather_nd(&params, &idx, 0, NULL, &out.t, &err), &err,
                     NDX_E_OUT_OF_RANGE, "gather_nd");
        check_and_free(&out);
        test_tensor_free(&idx);
    }
    test_tensor_free(&params);
}

/* TensorFlow GatherNd on empty params ("Requested more than 0 entries, but params is empty"),
 * a path that read from an empty buffer before it was guarded. ndx.h: index rows present while
 * params has no elements is an error. */
static void gather_nd_rows_into_empty_params(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor p0 = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(0, 3));
    ndx_tensor i0 = make_index(NDX_INT32, 2, SHAPE(1, 1), VALS(0));
    guarded o0 = guarded_output(NDX_FLOAT32, 2, SHAPE(1, 3));
    assert_fails_either(ndx_gather_nd(&p0, &i0, 0, NULL, &o0.t, &err), &err, NDX_E_OUT_OF_RANGE,
                        NDX_E_INVALID_ARGUMENT, "gather_nd");
    check_and_free(&o0);
    /* the index is inside [3] but every slice is empty: still refused (ndx.h) */
    ndx_tensor p1 = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(3, 0));
    ndx_tensor i1 = make_index(NDX_INT32, 2, SHAPE(1, 1), VALS(1));
    ndx_tensor alloc = {0};
    assert_fails_either(ndx_gather_nd(&p1, &i1, 0, NULL, &alloc, &err), &err,
                        NDX_E_INVALID_ARGUMENT, NDX_E_OUT_OF_RANGE, "gather_nd");
    assert_null(alloc.data);
    test_tensor_free(&p0);
    test_tensor_free(&i0);
    test_tensor_free(&p1);
    test_tensor_free(&i1);
}

/* Shape validation that TensorFlow enforced late or with CHECKs: an index depth past the rank,
 * scalar indices, batch_dims negative (the negative-dimension class of CVE-2022-21728) or not
 * below both ranks, and batch dimensions that differ. */
static void gather_nd_bad_shapes(void **state) {
    (void)state;
    ndx_tensor params = make_float(2, SHAPE(2, 3));
    ndx_tensor deep = make_index(NDX_INT32, 2, SHAPE(1, 3), VALS(0, 0, 0));
    ndx_tensor scalar = make_index(NDX_INT32, 0, NULL, VALS(0));
    ndx_tensor batch = make_index(NDX_INT32, 2, SHAPE(3, 1), VALS(0, 0, 0));
    ndx_tensor ok = make_index(NDX_INT32, 2, SHAPE(2, 1), VALS(0, 1));
    ndx_error err;
    ndx_tensor out = {0};
    assert_fails(ndx_gather_nd(&params, &deep, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "gather_nd");
    assert_fails(ndx_gather_nd(&params, &scalar, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "gather_nd");
    assert_fails(ndx_gather_nd(&params, &batch, 1, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "gather_nd");
    assert_fails(ndx_gather_nd(&params, &ok, -1, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "gather_nd");
    assert_fails(ndx_gather_nd(&params, &ok, INT32_MIN, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "gather_nd");
    assert_fails(ndx_gather_nd(&params, &ok, 2, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "gather_nd");
    assert_null(out.data);
    test_tensor_free(&params);
    test_tensor_free(&deep);
    test_tensor_free(&scalar);
    test_tensor_free(&batch);
    test_tensor_free(&ok);
}

/* Integer overflow building a shape from user dimensions (CVE-2022-23568 and the TensorShape
 * CHECK-fails in many advisories): views whose element count does not fit, and a dimension
 * that is negative, must be refused before any data is touched. */
static void gather_nd_overflowing_views(void **state) {
    (void)state;
    float block[4] = {0};
    ndx_tensor huge = view_of(NDX_FLOAT32, 3, SHAPE((int64_t)1 << 62, 4, 2), block);
    ndx_tensor negative = view_of(NDX_FLOAT32, 2, SHAPE(2, -3), block);
    ndx_tensor idx = make_index(NDX_INT64, 2, SHAPE(1, 1), VALS(0));
    int64_t ib[2] = {0, 0};
    ndx_tensor huge_idx = view_of(NDX_INT64, 2, SHAPE(INT64_MAX / 2, 4), ib);
    ndx_tensor params = make_float(1, SHAPE(4));
    ndx_error err;
    ndx_tensor out = {0};
    assert_fails(ndx_gather_nd(&huge, &idx, 0, NULL, &out, &err), &err, NDX_E_OVERFLOW, "gather_nd");
    assert_fails(ndx_gather_nd(&negative, &idx, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "gather_nd");
    assert_fails(ndx_gather_nd(&params, &huge_idx, 0, NULL, &out, &err), &err, NDX_E_OVERFLOW, "gather_nd");
    assert_null(out.data);
    test_tensor_free(&idx);
    test_tensor_free(&params);
}

/* The same hostile indices under NDX_BAD_INDICES_IGNORE (TensorFlow's GPU behaviour): no read
 * outside params either; the bad rows come out as zeros, the good one as its slice. */
static void gather_nd_ignore_policy_with_hostile_indices(void **state) {
    (void)state;
    ndx_tensor params = make_float(2, SHAPE(4, 3)); /* 1..12 */
    ndx_tensor idx = make_index(NDX_INT64, 2, SHAPE(5, 1), VALS(1, -1, INT64_MIN, 4, INT64_MAX));
    ndx_options opt = budget_opt(0);
    opt.bad_indices = NDX_BAD_INDICES_IGNORE;
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_gather_nd(&params, &idx, 0, &opt, &out, &err), &err);
    const float want[15] = {4, 5, 6};
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], 5);
    assert_memory_equal(out.data, want, sizeof want);
    ndx_tensor_free(&out);
    test_tensor_free(&params);
    test_tensor_free(&idx);
}

/* ---- scatter_nd and tensor_scatter_nd_* ------------------------------------------------------ */

/* TF Lite ScatterNd wrote outside its output for indices past the output shape or negative
 * (fixed by "Check bounds for reads and writes in scatter_nd", tensorflow#57414). */
static void scatter_nd_out_of_bounds_write(void **state) {
    (void)state;
    ndx_tensor upd = make_float(1, SHAPE(2));
    const int64_t bad[] = {3, -1, INT64_MIN, 1 << 20};
    for (size_t d = 0; d < 3; d++) {
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            if (!fits(index_dtypes[d], bad[b])) continue;
            ndx_tensor idx = make_index(index_dtypes[d], 2, SHAPE(2, 1), VALS(0, bad[b]));
            guarded out = guarded_output(NDX_FLOAT32, 1, SHAPE(3));
            ndx_error err;
            assert_fails(ndx_scatter_nd(&idx, &upd, 1, SHAPE(3), NULL, &out.t, &err), &err,
                         NDX_E_OUT_OF_RANGE, "scatter_nd");
            check_and_free(&out);
            test_tensor_free(&idx);
        }
    }
    test_tensor_free(&upd);
}

/* TensorFlow ScatterNd: "Indices and updates specified for empty output shape" (updates sent
 * into an output without elements), and the segfault on empty indices with a rank-1 index tensor
 * (tensorflow#74915). */
static void scatter_nd_into_empty_output(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor idx = make_index(NDX_INT32, 2, SHAPE(1, 1), VALS(0));
    ndx_tensor upd = make_float(1, SHAPE(1));
    ndx_tensor out = {0};
    assert_fails_either(ndx_scatter_nd(&idx, &upd, 1, SHAPE(0), NULL, &out, &err), &err,
                        NDX_E_OUT_OF_RANGE, NDX_E_INVALID_ARGUMENT, "scatter_nd");
    assert_null(out.data);
    /* rank-1 indices of shape [0] (one row of depth 0) with empty updates: the row needs
     * updates shaped like the whole output */
    ndx_tensor empty_idx = test_tensor(NDX_INT32, 0, 1, SHAPE(0));
    ndx_tensor upd4 = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(0));
    assert_fails(ndx_scatter_nd(&empty_idx, &upd4, 1, SHAPE(4), NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "scatter_nd");
    assert_null(out.data);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    test_tensor_free(&empty_idx);
    test_tensor_free(&upd4);
}

/* TensorFlow ScatterNd / TensorScatter* CHECK-failed ("Check failed: d < dims()") when updates
 * had fewer dimensions than indices' outer dimensions (tensorflow#93680, #94132, #125504). */
static void scatter_updates_rank_too_small(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor idx = make_index(NDX_INT32, 3, SHAPE(4, 1, 1), VALS(4, 3, 1, 7));
    ndx_tensor upd = make_float(1, SHAPE(4));
    ndx_tensor out = {0};
    assert_fails(ndx_scatter_nd(&idx, &upd, 1, SHAPE(8), NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "scatter_nd");
    assert_null(out.data);
    ndx_tensor tensor = make_float(1, SHAPE(8));
    ndx_tensor idx1 = make_index(NDX_INT32, 3, SHAPE(1, 1, 1), VALS(4));
    ndx_tensor upd1 = make_float(1, SHAPE(1));
    for (int op = NDX_SCATTER_UPDATE; op <= NDX_SCATTER_MAX; op++) {
        test_guard g = test_guard_take(&tensor);
        ndx_tensor inplace = tensor;
        assert_fails(ndx_tensor_scatter_nd((ndx_scatter_op)op, &tensor, &idx1, &upd1, NULL, &inplace, &err),
                     &err, NDX_E_INVALID_ARGUMENT, "tensor_scatter_nd");
        assert_untouched(&g, &tensor);
    }
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    test_tensor_free(&tensor);
    test_tensor_free(&idx1);
    test_tensor_free(&upd1);
}

/* CVE-2021-37655 (ResourceScatterUpdate: incomplete validation of the relation between indices
 * and updates shapes gave heap out-of-bounds reads): updates with more or fewer rows than
 * indices, or a wrong slice shape. */
static void scatter_updates_shape_mismatch(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor tensor = make_float(2, SHAPE(3, 2));
    ndx_tensor idx = make_index(NDX_INT64, 2, SHAPE(1, 1), VALS(0));
    const int64_t bad_shapes[][2] = {{5, 2}, {0, 2}, {1, 3}, {1, 1}};
    for (size_t s = 0; s < sizeof bad_shapes / sizeof bad_shapes[0]; s++) {
        ndx_tensor upd = make_float(2, bad_shapes[s]);
        for (int op = NDX_SCATTER_UPDATE; op <= NDX_SCATTER_MAX; op++) {
            test_guard g = test_guard_take(&tensor);
            ndx_tensor inplace = tensor;
            assert_fails(ndx_tensor_scatter_nd((ndx_scatter_op)op, &tensor, &idx, &upd, NULL, &inplace, &err),
                         &err, NDX_E_INVALID_ARGUMENT, "tensor_scatter_nd");
            assert_untouched(&g, &tensor);
        }
        ndx_tensor out = {0};
        assert_fails(ndx_scatter_nd(&idx, &upd, 2, SHAPE(3, 2), NULL, &out, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "scatter_nd");
        assert_null(out.data);
        test_tensor_free(&upd);
    }
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
}

/* A scatter that validated indices while writing left partial updates behind; TensorScatter*
 * in place must check every row first: a bad last row leaves the tensor exactly as it was. Also
 * TensorFlow's "Indices and updates specified for empty input" (rows into an empty tensor). */
static void tensor_scatter_validates_before_writing(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor tensor = make_float(1, SHAPE(5));
    ndx_tensor idx = make_index(NDX_INT32, 2, SHAPE(4, 1), VALS(0, 1, 2, 5));
    ndx_tensor upd = make_float(1, SHAPE(4));
    for (int op = NDX_SCATTER_UPDATE; op <= NDX_SCATTER_MAX; op++) {
        test_guard g = test_guard_take(&tensor);
        ndx_tensor inplace = tensor;
        assert_fails(ndx_tensor_scatter_nd((ndx_scatter_op)op, &tensor, &idx, &upd, NULL, &inplace, &err),
                     &err, NDX_E_OUT_OF_RANGE, "tensor_scatter_nd");
        assert_untouched(&g, &tensor);
    }
    ndx_tensor empty = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(0));
    ndx_tensor idx1 = make_index(NDX_INT32, 2, SHAPE(1, 1), VALS(0));
    ndx_tensor upd1 = make_float(1, SHAPE(1));
    ndx_tensor out = {0};
    assert_fails_either(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &empty, &idx1, &upd1, NULL, &out, &err),
                        &err, NDX_E_OUT_OF_RANGE, NDX_E_INVALID_ARGUMENT, "tensor_scatter_nd");
    assert_null(out.data);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    test_tensor_free(&empty);
    test_tensor_free(&idx1);
    test_tensor_free(&upd1);
}

/* Under NDX_BAD_INDICES_IGNORE the scatter family skips hostile rows instead of writing outside
 * the tensor: only the good rows land. */
static void scatter_ignore_policy_with_hostile_indices(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor tensor = make_float(1, SHAPE(3)); /* 1, 2, 3 */
    ndx_tensor idx = make_index(NDX_INT64, 2, SHAPE(4, 1), VALS(-1, 2, INT64_MIN, 3));
    ndx_tensor upd = make_float(1, SHAPE(4)); /* 1, 2, 3, 4 */
    ndx_options opt = budget_opt(0);
    opt.bad_indices = NDX_BAD_INDICES_IGNORE;
    ndx_tensor out = {0};
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, &opt, &out, &err), &err);
    const float want[3] = {1, 2, 5};
    assert_memory_equal(out.data, want, sizeof want);
    ndx_tensor_free(&out);
    assert_ok(ndx_scatter_nd(&idx, &upd, 1, SHAPE(3), &opt, &out, &err), &err);
    const float want2[3] = {0, 0, 2};
    assert_memory_equal(out.data, want2, sizeof want2);
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

/* Type confusion reaching arithmetic kernels that do not exist for a dtype: min/max on complex,
 * add on strings and bools are refused (NDX_E_UNSUPPORTED), with the tensor unchanged. */
static void tensor_scatter_unsupported_dtypes(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor idx = make_index(NDX_INT32, 2, SHAPE(1, 1), VALS(0));
    struct { ndx_dtype dt; ndx_scatter_op op; } bad[] = {
        {NDX_COMPLEX64, NDX_SCATTER_MIN}, {NDX_COMPLEX128, NDX_SCATTER_MAX},
        {NDX_STRING, NDX_SCATTER_ADD},    {NDX_BOOL, NDX_SCATTER_SUB},
        {NDX_STRING, NDX_SCATTER_MIN},    {NDX_BOOL, NDX_SCATTER_MAX},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ndx_tensor tensor = test_tensor(bad[i].dt, 2, 1, SHAPE(2));
        ndx_tensor upd = test_tensor(bad[i].dt, 2, 1, SHAPE(1));
        test_guard g = test_guard_fill(&tensor, 0x01);
        ndx_tensor inplace = tensor;
        assert_fails(ndx_tensor_scatter_nd(bad[i].op, &tensor, &idx, &upd, NULL, &inplace, &err), &err,
                     NDX_E_UNSUPPORTED, "tensor_scatter_nd");
        assert_untouched(&g, &tensor);
        test_tensor_free(&tensor);
        test_tensor_free(&upd);
    }
    test_tensor_free(&idx);
}

/* ScatterNd's output shape is user data: a negative dimension, a product that overflows, and a
 * representable but enormous output (a huge allocation) that the memory budget must refuse. */
static void scatter_nd_hostile_shapes(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor idx = make_index(NDX_INT64, 2, SHAPE(1, 1), VALS(0));
    ndx_tensor upd = make_float(1, SHAPE(1));
    ndx_tensor out = {0};
    assert_fails(ndx_scatter_nd(&idx, &upd, 1, SHAPE(-3), NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "scatter_nd");
    ndx_tensor upd2 = make_float(2, SHAPE(1, 4));
    assert_fails(ndx_scatter_nd(&idx, &upd2, 2, SHAPE((int64_t)1 << 62, 4), NULL, &out, &err), &err,
                 NDX_E_OVERFLOW, "scatter_nd");
    ndx_options small = budget_opt(1 << 20);
    assert_fails(ndx_scatter_nd(&idx, &upd, 1, SHAPE((int64_t)1 << 40), &small, &out, &err), &err,
                 NDX_E_MEMORY_BUDGET, "scatter_nd");
    assert_null(out.data);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    test_tensor_free(&upd2);
}

/* ---- dynamic_stitch / parallel_dynamic_stitch ------------------------------------------------- */

typedef ndx_status (*stitch_fn)(int, const ndx_tensor *, const ndx_tensor *, const ndx_options *,
                                ndx_tensor *, ndx_error *);
static const stitch_fn stitches[] = {ndx_dynamic_stitch, ndx_parallel_dynamic_stitch};

/* CVE-2023-25659 / GHSA-93vr-9q9m-pj8p (DynamicStitch: indices whose shape did not match data's
 * gave an out-of-bounds read) and CVE-2022-41883 / GHSA-w58w-79xv-6vcj (indices and data lists
 * of different lengths). ndx takes one n for both, so the classes left are: data[m] not shaped
 * indices[m].shape + C, trailing shapes that differ, a dtype that differs, and n < 1. */
static void stitch_shapes_that_disagree(void **state) {
    (void)state;
    ndx_error err;
    for (size_t s = 0; s < 2; s++) {
        ndx_tensor i0 = make_index(NDX_INT32, 1, SHAPE(2), VALS(0, 1));
        ndx_tensor i1 = make_index(NDX_INT32, 1, SHAPE(2), VALS(2, 3));
        ndx_tensor d0 = make_float(2, SHAPE(2, 3));
        ndx_tensor short_rows = make_float(2, SHAPE(1, 3));  /* one row for two indices */
        ndx_tensor other_tail = make_float(2, SHAPE(2, 4));  /* C = [4], not [3] */
        ndx_tensor low_rank = make_float(1, SHAPE(2));       /* C missing */
        ndx_tensor other_type = test_tensor(NDX_FLOAT64, 0, 2, SHAPE(2, 3));
        const ndx_tensor *bad[] = {&short_rows, &other_tail, &low_rank, &other_type};
        for (size_t b = 0; b < 4; b++) {
            ndx_tensor idx[2] = {i0, i1}, data[2] = {d0, *bad[b]};
            ndx_tensor out = {0};
            assert_fails(stitches[s](2, idx, data, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                         "dynamic_stitch");
            assert_null(out.data);
            assert_fails(ndx_dynamic_stitch_shape(2, idx, data, &out, &err), &err,
                         NDX_E_INVALID_ARGUMENT, "dynamic_stitch");
        }
        ndx_tensor out = {0};
        assert_fails(stitches[s](0, &i0, &d0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "dynamic_stitch");
        assert_fails(stitches[s](-1, &i0, &d0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "dynamic_stitch");
        assert_null(out.data);
        test_tensor_free(&i0);
        test_tensor_free(&i1);
        test_tensor_free(&d0);
        test_tensor_free(&short_rows);
        test_tensor_free(&other_tail);
        test_tensor_free(&low_rank);
        test_tensor_free(&other_type);
    }
}

/* DynamicStitch with a negative index (a write before the output) and with a huge index (an
 * allocation sized by attacker data, tensorflow#58354): negative is refused, a huge size is
 * refused by the budget, and a size that overflows is refused outright, also by the shape
 * function. A caller-provided output keeps its bytes. */
static void stitch_negative_and_huge_indices(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor data = make_float(2, SHAPE(2, 2));
    for (size_t s = 0; s < 2; s++) {
        for (size_t d = 0; d < 3; d++) {
            ndx_tensor idx = make_index(index_dtypes[d], 1, SHAPE(2), VALS(0, -1));
            guarded out = guarded_output(NDX_FLOAT32, 2, SHAPE(1, 2));
            assert_fails_either(stitches[s](1, &idx, &data, NULL, &out.t, &err), &err,
                                NDX_E_OUT_OF_RANGE, NDX_E_INVALID_ARGUMENT, "dynamic_stitch");
            check_and_free(&out);
            test_tensor_free(&idx);
        }
        ndx_options small = budget_opt(1 << 20);
        ndx_tensor big = make_index(NDX_INT64, 1, SHAPE(2), VALS(0, (int64_t)1 << 40));
        ndx_tensor out = {0};
        assert_fails(stitches[s](1, &big, &data, &small, &out, &err), &err, NDX_E_MEMORY_BUDGET, "dynamic_stitch");
        assert_null(out.data);
        ndx_tensor too_big = make_index(NDX_INT64, 1, SHAPE(2), VALS(INT64_MAX, 0));
        assert_fails(stitches[s](1, &too_big, &data, &small, &out, &err), &err, NDX_E_OVERFLOW, "dynamic_stitch");
        assert_null(out.data);
        ndx_tensor view = {0};
        assert_fails(ndx_dynamic_stitch_shape(1, &too_big, &data, &view, &err), &err, NDX_E_OVERFLOW,
                     "dynamic_stitch");
        test_tensor_free(&big);
        test_tensor_free(&too_big);
    }
    test_tensor_free(&data);
}

/* ---- dynamic_partition ------------------------------------------------------------------------ */

/* DynamicPartition with partition ids outside [0, num_partitions) (a write past the outputs), also
 * when data has no elements so nothing else would notice; num_partitions of 0 or negative; and
 * partitions not shaped like data's leading dimensions. */
static void partition_ids_out_of_range(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor empty = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(3, 0));
    ndx_tensor data = make_float(2, SHAPE(3, 2));
    const int64_t bad[] = {2, -1, INT64_MIN, (int64_t)1 << 31};
    for (size_t d = 0; d < 3; d++) {
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            if (!fits(index_dtypes[d], bad[b])) continue;
            ndx_tensor ids = make_index(index_dtypes[d], 1, SHAPE(3), VALS(0, bad[b], 1));
            const ndx_tensor *inputs[] = {&empty, &data};
            for (int k = 0; k < 2; k++) {
                ndx_tensor outs[2];
                memset(outs, 0, sizeof outs);
                assert_fails(ndx_dynamic_partition(inputs[k], &ids, 2, NULL, outs, &err), &err,
                             NDX_E_OUT_OF_RANGE, "dynamic_partition");
                assert_null(outs[0].data);
                assert_null(outs[1].data);
                /* caller outputs shaped as if the bad id were 0: untouched */
                guarded o0 = guarded_output(NDX_FLOAT32, 2, SHAPE(2, inputs[k]->shape[1]));
                guarded o1 = guarded_output(NDX_FLOAT32, 2, SHAPE(1, inputs[k]->shape[1]));
                ndx_tensor given[2] = {o0.t, o1.t};
                assert_fails(ndx_dynamic_partition(inputs[k], &ids, 2, NULL, given, &err), &err,
                             NDX_E_OUT_OF_RANGE, "dynamic_partition");
                check_and_free(&o0);
                check_and_free(&o1);
            }
            test_tensor_free(&ids);
        }
    }
    ndx_tensor ids = make_index(NDX_INT32, 1, SHAPE(3), VALS(0, 0, 0));
    ndx_tensor outs[1];
    memset(outs, 0, sizeof outs);
    assert_fails(ndx_dynamic_partition(&data, &ids, 0, NULL, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dynamic_partition");
    assert_fails(ndx_dynamic_partition(&data, &ids, -1, NULL, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dynamic_partition");
    ndx_tensor long_ids = make_index(NDX_INT32, 1, SHAPE(4), VALS(0, 0, 0, 0));
    assert_fails(ndx_dynamic_partition(&data, &long_ids, 1, NULL, outs, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "dynamic_partition");
    assert_null(outs[0].data);
    test_tensor_free(&ids);
    test_tensor_free(&long_ids);
    test_tensor_free(&empty);
    test_tensor_free(&data);
}

/* tf.dynamic_partition with num_partitions 100000000 hung and was killed (tensorflow#40905):
 * per-partition work must stay proportional to what is needed, and any scratch it takes goes
 * through the budget. With many partitions the result is still right; under a tiny budget the
 * call either succeeds or is refused by the budget, writing nothing. */
static void partition_many_partitions(void **state) {
    (void)state;
    enum { NP = 100000 };
    ndx_error err;
    ndx_tensor data = make_float(1, SHAPE(5));
    ndx_tensor ids = make_index(NDX_INT64, 1, SHAPE(5), VALS(NP - 1, 0, NP - 1, 7, 0));
    ndx_tensor *outs = calloc(NP, sizeof *outs);
    assert_non_null(outs);
    assert_ok(ndx_dynamic_partition(&data, &ids, NP, NULL, outs, &err), &err);
    assert_int_equal(outs[0].shape[0], 2);
    assert_int_equal(outs[7].shape[0], 1);
    assert_int_equal(outs[NP - 1].shape[0], 2);
    assert_int_equal(outs[1].shape[0], 0);
    assert_true(((float *)outs[NP - 1].data)[0] == 1.0f && ((float *)outs[NP - 1].data)[1] == 3.0f);
    for (int p = 0; p < NP; p++) ndx_tensor_free(&outs[p]);
    memset(outs, 0, NP * sizeof *outs);
    ndx_options tiny = budget_opt(64);
    ndx_status st = ndx_dynamic_partition(&data, &ids, NP, &tiny, outs, &err);
    if (st != NDX_OK) {
        assert_fails(st, &err, NDX_E_MEMORY_BUDGET, "dynamic_partition");
        for (int p = 0; p < NP; p++) assert_null(outs[p].data);
    }
    for (int p = 0; p < NP; p++) ndx_tensor_free(&outs[p]);
    free(outs);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* ---- sparse ---------------------------------------------------------------------------------- */

/* A sparse tensor: n entries of rank r (row-major `idx`), int32 values 1..n, dense shape `dims`
 * of `ndims` entries (which may disagree with r on purpose). */
static ndx_sparse_tensor literal_sparse(int64_t n, int64_t r, const int64_t *idx, int64_t ndims,
                                     const int64_t *dims) {
    ndx_sparse_tensor sp;
    sp.indices = test_tensor(NDX_INT64, 0, 2, SHAPE(n, r));
    for (int64_t i = 0; i < n * r; i++) ((int64_t *)sp.indices.data)[i] = idx[i];
    sp.values = test_tensor(NDX_INT32, 0, 1, SHAPE(n));
    for (int64_t i = 0; i < n; i++) ((int32_t *)sp.values.data)[i] = (int32_t)(i + 1);
    sp.dense_shape = test_tensor(NDX_INT64, 0, 1, SHAPE(ndims));
    for (int64_t i = 0; i < ndims; i++) ((int64_t *)sp.dense_shape.data)[i] = dims[i];
    return sp;
}

/* Calls sparse_concat with op-allocated outputs and with caller outputs shaped [nnz, r] etc.,
 * expecting `code` and nothing written. */
static void expect_concat_failure(int axis, int n, const ndx_sparse_tensor *in, int expand,
                                  const ndx_options *opt, ndx_status code) {
    ndx_error err;
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    assert_fails(ndx_sparse_concat(axis, n, in, expand, opt, &out, &err), &err, code, "sparse_concat");
    assert_null(out.indices.data);
    assert_null(out.values.data);
    assert_null(out.dense_shape.data);
    int64_t r = n > 0 ? in[0].indices.shape[1] : 1, nnz = 0;
    for (int m = 0; m < n; m++) nnz += in[m].indices.shape[0];
    guarded gi = guarded_output(NDX_INT64, 2, SHAPE(nnz, r));
    guarded gv = guarded_output(NDX_INT32, 1, SHAPE(nnz));
    guarded gd = guarded_output(NDX_INT64, 1, SHAPE(r));
    ndx_sparse_tensor given = {gi.t, gv.t, gd.t};
    ndx_status st = ndx_sparse_concat(axis, n, in, expand, opt, &given, &err);
    assert_int_not_equal(st, NDX_OK);
    assert_int_equal(err.code, st);
    check_and_free(&gi);
    check_and_free(&gv);
    check_and_free(&gd);
}

/* CVE-2021-29534 (SparseConcat CHECK-failed on shapes that did not agree; tensorflow#59416 and
 * #59177 segfaulted on mismatched or empty input lists): dense shapes that differ off the axis
 * without expand_nonconcat_dim, ranks that differ, dtypes that differ, an axis out of range, and
 * no inputs at all. */
static void sparse_concat_mismatched_inputs(void **state) {
    (void)state;
    ndx_sparse_tensor a = literal_sparse(2, 2, VALS(0, 0, 1, 2), 2, VALS(3, 4));
    ndx_sparse_tensor b = literal_sparse(1, 2, VALS(0, 1), 2, VALS(3, 5));
    ndx_sparse_tensor c = literal_sparse(1, 3, VALS(0, 1, 0), 3, VALS(3, 4, 1));
    ndx_sparse_tensor d = literal_sparse(1, 2, VALS(1, 1), 2, VALS(2, 4));
    ndx_sparse_tensor ab[2] = {a, b}, ac[2] = {a, c}, ad[2] = {a, d};
    expect_concat_failure(0, 2, ab, 0, NULL, NDX_E_INVALID_ARGUMENT);
    expect_concat_failure(0, 2, ac, 0, NULL, NDX_E_INVALID_ARGUMENT);
    expect_concat_failure(2, 2, ad, 0, NULL, NDX_E_INVALID_ARGUMENT);
    expect_concat_failure(-3, 2, ad, 0, NULL, NDX_E_INVALID_ARGUMENT);
    expect_concat_failure(INT32_MIN, 2, ad, 0, NULL, NDX_E_INVALID_ARGUMENT);
    expect_concat_failure(0, 0, ad, 0, NULL, NDX_E_INVALID_ARGUMENT);
    ndx_sparse_tensor f = d;
    f.values = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(1));
    ndx_sparse_tensor af[2] = {a, f};
    expect_concat_failure(0, 2, af, 0, NULL, NDX_E_INVALID_ARGUMENT);
    test_tensor_free(&f.values);
    test_sparse_free(&a);
    test_sparse_free(&b);
    test_sparse_free(&c);
    test_sparse_free(&d);
}

/* SparseConcat with rank-0 sparse tensors, values and indices of different lengths
 * (tensorflow#111077: an unchecked inds/vals length gave an out-of-bounds read in the GPU sort),
 * and indices outside dense_shape, negative ones included (tensorflow#80669). */
static void sparse_concat_malformed_sparse_tensors(void **state) {
    (void)state;
    ndx_sparse_tensor good = literal_sparse(1, 2, VALS(0, 0), 2, VALS(3, 4));
    ndx_sparse_tensor rank0 = literal_sparse(1, 0, NULL, 0, NULL);
    ndx_sparse_tensor lengths = literal_sparse(2, 2, VALS(0, 0, 1, 1), 2, VALS(3, 4));
    test_tensor_free(&lengths.values);
    lengths.values = test_tensor(NDX_INT32, 0, 1, SHAPE(3));
    ndx_sparse_tensor negative = literal_sparse(2, 2, VALS(0, 0, -2, -2), 2, VALS(3, 4));
    ndx_sparse_tensor outside = literal_sparse(2, 2, VALS(0, 0, 3, 0), 2, VALS(3, 4));
    ndx_sparse_tensor in[2];
    in[0] = good;
    in[1] = rank0;
    ndx_sparse_tensor r0[2] = {rank0, rank0};
    expect_concat_failure(0, 2, r0, 0, NULL, NDX_E_INVALID_ARGUMENT);
    in[1] = lengths;
    expect_concat_failure(0, 2, in, 0, NULL, NDX_E_INVALID_ARGUMENT);
    in[1] = negative;
    expect_concat_failure(0, 2, in, 0, NULL, NDX_E_OUT_OF_RANGE);
    in[1] = outside;
    expect_concat_failure(1, 2, in, 0, NULL, NDX_E_OUT_OF_RANGE);
    test_sparse_free(&good);
    test_sparse_free(&rank0);
    test_sparse_free(&lengths);
    test_sparse_free(&negative);
    test_sparse_free(&outside);
}

/* SparseConcat overflow from large shapes (tensorflow#80669, #63377, #108661: TensorShape CHECK
 * on RecomputeNumElements): a concatenated dimension past INT64_MAX, and a negative dense_shape
 * entry. */
static void sparse_concat_shape_overflow(void **state) {
    (void)state;
    ndx_sparse_tensor a = literal_sparse(1, 2, VALS(0, 0), 2, VALS(INT64_MAX - 1, 1));
    ndx_sparse_tensor b = literal_sparse(1, 2, VALS(1, 0), 2, VALS(5, 1));
    ndx_sparse_tensor neg = literal_sparse(0, 2, NULL, 2, VALS(-1, 1));
    ndx_sparse_tensor ab[2] = {a, b};
    expect_concat_failure(0, 2, ab, 0, NULL, NDX_E_OVERFLOW);
    ndx_sparse_tensor an[2] = {b, neg};
    expect_concat_failure(0, 2, an, 0, NULL, NDX_E_INVALID_ARGUMENT);
    test_sparse_free(&a);
    test_sparse_free(&b);
    test_sparse_free(&neg);
}

/* SparseToDense sized by attacker data (the TensorShape overflow of CVE-2022-23568, and huge
 * allocations): a dense shape whose count overflows, one that fits int64 but not the budget;
 * repeated indices (TensorFlow validate_indices) and indices outside. */
static void sparse_to_dense_hostile(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor over =
        literal_sparse(1, 2, VALS(0, 0), 2, VALS((int64_t)1 << 40, (int64_t)1 << 40));
    ndx_sparse_tensor big =
        literal_sparse(1, 2, VALS(0, 0), 2, VALS((int64_t)1 << 20, (int64_t)1 << 20));
    ndx_sparse_tensor dup = literal_sparse(2, 2, VALS(1, 1, 1, 1), 2, VALS(2, 2));
    ndx_sparse_tensor out_of = literal_sparse(1, 2, VALS(2, 0), 2, VALS(2, 2));
    ndx_tensor out = {0};
    assert_fails(ndx_sparse_to_dense(&over, NULL, NULL, &out, &err), &err, NDX_E_OVERFLOW, "sparse");
    ndx_tensor view = {0};
    assert_fails(ndx_sparse_to_dense_shape(&over, &view, &err), &err, NDX_E_OVERFLOW, "sparse");
    ndx_options small = budget_opt(1 << 20);
    assert_fails(ndx_sparse_to_dense(&big, NULL, &small, &out, &err), &err, NDX_E_MEMORY_BUDGET, "sparse_to_dense");
    assert_null(out.data);
    guarded g = guarded_output(NDX_INT32, 2, SHAPE(2, 2));
    assert_fails_either(ndx_sparse_to_dense(&dup, NULL, NULL, &g.t, &err), &err, NDX_E_INVALID_ARGUMENT,
                        NDX_E_OUT_OF_RANGE, "sparse_to_dense");
    assert_fails(ndx_sparse_to_dense(&out_of, NULL, NULL, &g.t, &err), &err, NDX_E_OUT_OF_RANGE, "sparse");
    check_and_free(&g);
    test_sparse_free(&over);
    test_sparse_free(&big);
    test_sparse_free(&dup);
    test_sparse_free(&out_of);
}

/* Sparse ops fed malformed SparseTensors (the many SparseTensor validation advisories, e.g.
 * SparseSparseMinimum CVE-2021-29607, SparseTensorDenseAdd CVE-2022-29206): sparse_reorder with
 * values shorter than indices, indices with too few columns, a non-integer dense_shape; and
 * dense_to_sparse of a scalar (a SparseTensor has rank >= 1). */
static void sparse_malformed_views(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor s = literal_sparse(2, 2, VALS(0, 0, 1, 1), 2, VALS(2, 2));
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    ndx_tensor keep = s.values;
    s.values = test_tensor(NDX_INT32, 0, 1, SHAPE(1));
    assert_fails(ndx_sparse_reorder(&s, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "sparse_reorder");
    test_tensor_free(&s.values);
    s.values = keep;
    ndx_tensor keep_shape = s.dense_shape;
    s.dense_shape = test_tensor(NDX_INT64, 0, 1, SHAPE(3));
    ((int64_t *)s.dense_shape.data)[0] = ((int64_t *)s.dense_shape.data)[1] = ((int64_t *)s.dense_shape.data)[2] = 2;
    assert_fails(ndx_sparse_reorder(&s, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "sparse_reorder");
    test_tensor_free(&s.dense_shape);
    s.dense_shape = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(2));
    assert_fails(ndx_sparse_reorder(&s, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "sparse_reorder");
    test_tensor_free(&s.dense_shape);
    s.dense_shape = keep_shape;
    assert_null(out.indices.data);
    assert_null(out.values.data);
    assert_null(out.dense_shape.data);
    test_sparse_free(&s);

    ndx_tensor scalar = make_float(0, NULL);
    assert_fails(ndx_dense_to_sparse(&scalar, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT, "dense_to_sparse");
    assert_null(out.indices.data);
    test_tensor_free(&scalar);
}

/* Bincount / DenseBincount (the advisories' heap reads past weights of another shape than
 * arr, negative sizes, negative values, sizes whose output overflows): each refused, out
 * untouched. */
static void bincount_hostile(void **state) {
    (void)state;
    ndx_tensor arr = make_index(NDX_INT32, 1, (int64_t[]){4}, (int64_t[]){0, 1, 2, 3});
    ndx_tensor rows = make_index(NDX_INT64, 2, (int64_t[]){2, 2}, (int64_t[]){0, 1, 2, 3});
    ndx_tensor short_w = test_tensor_v(NDX_FLOAT32, 0, 1, 1);
    ndx_tensor none = test_tensor_v(NDX_FLOAT32, 0, 1, 0);
    memset(short_w.data, 0, 4);
    ndx_tensor neg = make_index(NDX_INT64, 1, (int64_t[]){2}, (int64_t[]){1, INT64_MIN});
    ndx_options small = budget_opt(1 << 16);
    struct {
        const ndx_tensor *arr, *w;
        int64_t size;
        unsigned flags;
        const ndx_options *opt;
        ndx_status code;
        const char *needle;
    } cases[] = {
        {&arr, &short_w, 4, 0, NULL, NDX_E_INVALID_ARGUMENT, "`weights` must be the same shape"},
        {&rows, &short_w, 4, NDX_BINCOUNT_DENSE, NULL, NDX_E_INVALID_ARGUMENT, "Received [1]"},
        {&arr, &none, -5, 0, NULL, NDX_E_INVALID_ARGUMENT, "size (-5) must be non-negative"},
        {&arr, &none, INT64_MIN, NDX_BINCOUNT_DENSE, NULL, NDX_E_INVALID_ARGUMENT, "size"},
        {&neg, &none, 4, 0, NULL, NDX_E_INVALID_ARGUMENT, "Input arr must be non-negative!"},
        {&rows, &none, INT64_MAX / 2, NDX_BINCOUNT_DENSE, NULL, NDX_E_OVERFLOW, "too large"},
        {&arr, &none, (int64_t)1 << 40, 0, &small, NDX_E_MEMORY_BUDGET, NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ndx_error err;
        ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 1, 4);
        test_guard g = test_guard_fill(&out, 0x3c);
        ndx_status st = ndx_bincount(cases[k].arr, cases[k].size, cases[k].w, cases[k].flags,
                                     cases[k].opt, &out, &err);
        assert_int_not_equal(st, NDX_OK);
        assert_untouched(&g, &out);
        test_tensor_free(&out);
        ndx_tensor mine = {0};
        assert_fails(ndx_bincount(cases[k].arr, cases[k].size, cases[k].w, cases[k].flags,
                                  cases[k].opt, &mine, &err),
                     &err, cases[k].code, cases[k].needle);
        assert_null(mine.data);
    }
    test_tensor_free(&neg);
    test_tensor_free(&none);
    test_tensor_free(&short_w);
    test_tensor_free(&rows);
    test_tensor_free(&arr);
}

/* SparseTensorDenseMatMul fed hostile operands (TensorFlow's advisories on the op: a_shape not
 * of 2 elements, a_indices of another width, indices outside the output or b read and written
 * out of bounds, an output whose size overflows): each refused before anything is written,
 * with int32 values (literal_sparse) and an int32 b. */
static void sparse_dense_matmul_hostile(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor b = test_tensor(NDX_INT32, 0, 2, SHAPE(3, 2));
    memset(b.data, 0, test_nbytes(&b));
    guarded g = guarded_output(NDX_INT32, 2, SHAPE(2, 2));
    /* a_shape of 3 elements with indices of 3 columns, and of 1 with 1 */
    ndx_sparse_tensor r3 = literal_sparse(1, 3, VALS(0, 0, 0), 3, VALS(2, 3, 1));
    assert_fails(ndx_sparse_dense_matmul(&r3, &b, 0, 0, NULL, &g.t, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Tensor 'a_shape' must have 2 elements");
    ndx_sparse_tensor r1 = literal_sparse(1, 1, VALS(0), 1, VALS(3));
    assert_fails(ndx_sparse_dense_matmul(&r1, &b, 0, 0, NULL, &g.t, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Tensor 'a_shape' must have 2 elements");
    /* indices of 3 columns for a 2-element a_shape */
    ndx_sparse_tensor wide = literal_sparse(1, 3, VALS(0, 0, 0), 2, VALS(2, 3));
    assert_fails(ndx_sparse_dense_matmul(&wide, &b, 0, 0, NULL, &g.t, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_dense_matmul");
    /* every hostile coordinate in each column, in each index dtype */
    static const int64_t bad[] = {-1, 2, 3, INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX};
    for (size_t d = 0; d < 3; d++)
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
            for (int col = 0; col < 2; col++) {
                if (!fits(index_dtypes[d], bad[k]) || (col == 1 && bad[k] == 2)) continue;
                int64_t idx[4] = {1, 2, 0, 0};
                idx[2 + col] = bad[k];
                ndx_sparse_tensor a = literal_sparse(2, 2, idx, 2, VALS(2, 3));
                ndx_tensor narrow = make_index(index_dtypes[d], 2, SHAPE(2, 2), idx);
                test_tensor_free(&a.indices);
                a.indices = narrow;
                assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &g.t, &err), &err,
                             NDX_E_OUT_OF_RANGE, col ? "k (" : "m (");
                ndx_tensor none = {0};
                assert_fails(ndx_sparse_dense_matmul(&a, &b, 0, 0, NULL, &none, &err), &err,
                             NDX_E_OUT_OF_RANGE, "from index[1,");
                assert_null(none.data);
                test_sparse_free(&a);
            }
    /* an output whose size overflows: a_shape [2^62, 3] times b [3, 2] */
    ndx_sparse_tensor huge = literal_sparse(1, 2, VALS(0, 0), 2, VALS((int64_t)1 << 62, 3));
    ndx_tensor none = {0};
    assert_fails_either(ndx_sparse_dense_matmul(&huge, &b, 0, 0, NULL, &none, &err), &err,
                        NDX_E_OVERFLOW, NDX_E_INVALID_ARGUMENT, "sparse_dense_matmul");
    assert_null(none.data);
    ndx_options small = budget_opt(1 << 20);
    ndx_sparse_tensor big = literal_sparse(1, 2, VALS(0, 0), 2, VALS((int64_t)1 << 24, 3));
    assert_fails(ndx_sparse_dense_matmul(&big, &b, 0, 0, &small, &none, &err), &err,
                 NDX_E_MEMORY_BUDGET, "sparse_dense_matmul");
    assert_null(none.data);
    check_and_free(&g);
    test_sparse_free(&r3);
    test_sparse_free(&r1);
    test_sparse_free(&wide);
    test_sparse_free(&huge);
    test_sparse_free(&big);
    test_tensor_free(&b);
}

/* ---- sparse fill and the count ops ---------------------------------------------------------- */

/* SparseFillEmptyRows: a default_value that is not a scalar (CVE-2020-15194), an empty
 * dense_shape (CVE-2021-29565), a row index outside dense_shape read as a position
 * (CVE-2021-41224's class), entries under dense_shape[0] = 0, a row count too large to fill; and
 * its gradient with reverse_index_map positions out of range. Nothing written, nothing left. */
static void sparse_fill_empty_rows_hostile(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor sp = literal_sparse(2, 2, VALS(0, 1, 1, 0), 2, VALS(3, 2));
    ndx_tensor def = test_tensor(NDX_INT32, 0, 0, NULL), vec = test_tensor_v(NDX_INT32, 0, 1, 2);
    ndx_sparse_tensor out = {0};
    ndx_tensor ind = {0}, map = {0};
    assert_fails(ndx_sparse_fill_empty_rows(&sp, &vec, NULL, &out, &ind, &map, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "default_value must be a scalar");
    ndx_sparse_tensor no_shape = sp;
    no_shape.dense_shape.shape[0] = 0;
    assert_fails(ndx_sparse_fill_empty_rows(&no_shape, &def, NULL, &out, &ind, &map, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "sparse_fill_empty_rows");
    static const int64_t rows[] = {-1, 3, INT64_MAX, INT64_MIN};
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        ((int64_t *)sp.indices.data)[2] = rows[k];
        assert_fails(ndx_sparse_fill_empty_rows(&sp, &def, NULL, &out, &ind, &map, &err), &err,
                     NDX_E_OUT_OF_RANGE, "sparse_fill_empty_rows: sp_input.indices[1]");
    }
    ((int64_t *)sp.indices.data)[2] = 1;
    ((int64_t *)sp.dense_shape.data)[0] = 0;
    assert_fails(ndx_sparse_fill_empty_rows(&sp, &def, NULL, &out, &ind, &map, &err), &err,
                 NDX_E_OUT_OF_RANGE, "sparse_fill_empty_rows");
    ((int64_t *)sp.dense_shape.data)[0] = (int64_t)1 << 40;
    ndx_options small = budget_opt(1 << 20);
    assert_fails(ndx_sparse_fill_empty_rows(&sp, &def, &small, &out, &ind, &map, &err), &err,
                 NDX_E_MEMORY_BUDGET, "sparse_fill_empty_rows");
    assert_null(out.indices.data);
    assert_null(out.values.data);
    assert_null(ind.data);
    assert_null(map.data);

    ndx_tensor rim = make_index(NDX_INT64, 1, SHAPE(2), VALS(0, 9));
    ndx_tensor grad = make_float(1, SHAPE(3));
    guarded g = guarded_output(NDX_FLOAT32, 1, SHAPE(2)), gd = guarded_output(NDX_FLOAT32, 0, NULL);
    assert_fails(ndx_sparse_fill_empty_rows_grad(&rim, &grad, NULL, &g.t, &gd.t, &err), &err,
                 NDX_E_OUT_OF_RANGE, "Elements in reverse index must be in [0, 3) but got 9");
    ((int64_t *)rim.data)[1] = -5;
    assert_fails(ndx_sparse_fill_empty_rows_grad(&rim, &grad, NULL, &g.t, &gd.t, &err), &err,
                 NDX_E_OUT_OF_RANGE, "got -5");
    check_and_free(&g);
    check_and_free(&gd);
    test_tensor_free(&rim);
    test_tensor_free(&grad);
    test_tensor_free(&def);
    test_tensor_free(&vec);
    test_sparse_free(&sp);
}

/* SparseCountSparseOutput / DenseCountSparseOutput (CVE-2020-15196..15201's class): values
 * shorter than indices, an empty or zero dense_shape, weights of another shape, indices outside
 * dense_shape, a matrix with no rows, a largest value whose + 1 overflows. */
static void count_sparse_output_hostile(void **state) {
    (void)state;
    ndx_error err;
    ndx_count_attrs a = {-1, -1, 0};
    ndx_tensor none = test_tensor_v(NDX_INT32, 0, 1, 0);
    ndx_sparse_tensor sp = literal_sparse(3, 2, VALS(0, 0, 1, 1, 1, 2), 2, VALS(2, 3));
    ndx_sparse_tensor out = {0};
    ndx_sparse_tensor bad = sp;
    bad.values.shape[0] = 2;
    assert_fails(ndx_sparse_count_sparse_output(&bad, &none, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_count_sparse_output");
    bad = sp;
    bad.dense_shape.shape[0] = 0;
    assert_fails(ndx_sparse_count_sparse_output(&bad, &none, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_count_sparse_output");
    ndx_tensor w2 = test_tensor_v(NDX_INT32, 0, 1, 2);
    assert_fails(ndx_sparse_count_sparse_output(&sp, &w2, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Weights and values must have the same shape");
    ((int64_t *)sp.indices.data)[5] = 3;
    assert_fails(ndx_sparse_count_sparse_output(&sp, &none, &a, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "sparse_count_sparse_output: sp.indices[2]");
    ((int64_t *)sp.indices.data)[5] = 2;
    ((int64_t *)sp.dense_shape.data)[0] = 0;
    assert_fails(ndx_sparse_count_sparse_output(&sp, &none, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Cannot allocate 0 batches");
    ndx_tensor rows0 = test_tensor_v(NDX_INT32, 0, 2, 0, 4);
    assert_fails(ndx_dense_count_sparse_output(&rows0, &none, &a, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Shapes dimension cannot be 0");
    ndx_tensor huge = make_index(NDX_INT64, 1, SHAPE(1), VALS(INT64_MAX));
    ndx_tensor none64 = test_tensor_v(NDX_INT64, 0, 1, 0);
    assert_fails(ndx_dense_count_sparse_output(&huge, &none64, &a, NULL, &out, &err), &err,
                 NDX_E_OVERFLOW, "dense_count_sparse_output");
    assert_null(out.indices.data);
    test_tensor_free(&huge);
    test_tensor_free(&none64);
    test_tensor_free(&rows0);
    test_tensor_free(&w2);
    test_tensor_free(&none);
    test_sparse_free(&sp);
}

/* ---- sparse_reduce and sparse_softmax -------------------------------------------------------- */

static ndx_sparse_tensor reduce_input(ndx_dtype it, const int64_t *coords, const int64_t *shape) {
    ndx_sparse_tensor sp;
    sp.indices = make_index(it, 2, SHAPE(2, 2), coords);
    sp.values = make_float(1, SHAPE(2));
    sp.dense_shape = make_index(NDX_INT64, 1, SHAPE(2), shape);
    return sp;
}

/* TensorFlow's SparseReduceSum / SparseReduceMax computed each entry's output offset from indices
 * it never checked against dense_shape: a heap out-of-bounds write (fixed in TF 2.x with a bounds
 * check on the write index). Every coordinate outside its dim, in every index dtype, in both
 * forms and both reductions, must be refused with nothing written. */
static void sparse_reduce_indices_outside_dense_shape(void **state) {
    (void)state;
    const int64_t rows[][2] = {{0, 3}, {-1, 0}, {2, 0}, {1, INT32_MAX}, {INT64_MIN, 1},
                               {(int64_t)1 << 62, 0}};
    int32_t axis = 1;
    ndx_tensor axes = ndx_tensor_make(NDX_INT32, 1, SHAPE(1), &axis);
    for (size_t d = 0; d < 3; d++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            if (!fits(index_dtypes[d], rows[r][0]) || !fits(index_dtypes[d], rows[r][1])) continue;
            ndx_sparse_tensor sp = reduce_input(index_dtypes[d], VALS(0, 1, rows[r][0], rows[r][1]),
                                                VALS(2, 3));
            for (int op = 0; op < 2; op++) {
                guarded out = guarded_output(NDX_FLOAT32, 1, SHAPE(2));
                ndx_error err;
                assert_fails(ndx_sparse_reduce((ndx_sparse_reduce_op)op, &sp, &axes, 0, NULL,
                                               &out.t, &err), &err, NDX_E_OUT_OF_RANGE,
                             "is outside dense_shape [2, 3]");
                check_and_free(&out);
                ndx_sparse_tensor alloc = {0};
                assert_fails(ndx_sparse_reduce_sparse((ndx_sparse_reduce_op)op, &sp, &axes, 0,
                                                      NULL, &alloc, &err), &err,
                             NDX_E_OUT_OF_RANGE, "sparse_reduce_");
                assert_null(alloc.indices.data);
                assert_null(alloc.values.data);
            }
            ndx_tensor soft = {0};
            ndx_error err;
            assert_fails(ndx_sparse_softmax(&sp, NULL, &soft, &err), &err, NDX_E_OUT_OF_RANGE,
                         "sparse_softmax");
            assert_null(soft.data);
            test_sparse_free(&sp);
        }
}

/* TensorFlow's sparse reductions CHECK-failed (aborting the process) on a dense_shape whose
 * product overflows or is negative, and allocated outputs of any size asked. Here: a negative
 * dim or an overflowing volume is an error, and a huge reduced shape is refused by the budget
 * before anything is allocated. */
static void sparse_reduce_hostile_dense_shape(void **state) {
    (void)state;
    int32_t axis = 1;
    ndx_tensor axes = ndx_tensor_make(NDX_INT32, 1, SHAPE(1), &axis);
    ndx_error err;
    ndx_tensor out = {0};
    ndx_sparse_tensor sp = reduce_input(NDX_INT64, VALS(0, 0, 1, 1), VALS(-2, 3));
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &sp, &axes, 0, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "dense_shape[0] = -2 is negative");
    test_sparse_free(&sp);
    sp = reduce_input(NDX_INT64, VALS(0, 0, 1, 1), VALS((int64_t)1 << 40, (int64_t)1 << 40));
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_MAX, &sp, &axes, 0, NULL, &out, &err), &err,
                 NDX_E_OVERFLOW, "sparse_reduce_max");
    assert_null(out.data);
    test_sparse_free(&sp);
    /* An empty input (a dim of 0) whose kept dims count past int64_t once the 0 is reduced. */
    ndx_sparse_tensor empty;
    empty.indices = test_tensor_v(NDX_INT64, 0, 2, 0, 3);
    empty.values = test_tensor_v(NDX_FLOAT32, 0, 1, 0);
    empty.dense_shape = make_index(NDX_INT64, 1, SHAPE(3), VALS(0, (int64_t)1 << 62, 4));
    int32_t zero = 0;
    ndx_tensor axis0 = ndx_tensor_make(NDX_INT32, 0, NULL, &zero);
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &empty, &axis0, 0, NULL, &out, &err),
                 &err, NDX_E_OVERFLOW, "sparse_reduce_sum: the output shape [4611686018427387904, "
                 "4] has more elements than int64_t can count");
    assert_null(out.data);
    test_sparse_free(&empty);
    sp = reduce_input(NDX_INT64, VALS(0, 0, 1, 1), VALS((int64_t)1 << 40, 4));
    ndx_options tight = budget_opt(1 << 20);
    assert_fails(ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &sp, &axes, 1, &tight, &out, &err),
                 &err, NDX_E_MEMORY_BUDGET, "sparse_reduce_sum");
    assert_null(out.data);
    test_sparse_free(&sp);
}

/* TensorFlow's SparseSoftmax read indices of rank < 2 and values that were not a vector as if
 * they were (CVE-2021-29599-class shape validation gaps): each malformed view is refused. */
static void sparse_softmax_malformed_views(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor out = {0};
    ndx_sparse_tensor sp = reduce_input(NDX_INT64, VALS(0, 0, 1, 1), VALS(2, 3));
    sp.indices.rank = 1;
    assert_fails(ndx_sparse_softmax(&sp, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_softmax: sp_input.indices");
    sp.indices.rank = 2;
    sp.values.rank = 2;
    sp.values.shape[1] = 1;
    assert_fails(ndx_sparse_softmax(&sp, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_softmax: sp_input.values");
    sp.values.rank = 1;
    sp.dense_shape.shape[0] = 1;
    assert_fails(ndx_sparse_softmax(&sp, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_softmax");
    sp.dense_shape.shape[0] = 2;
    assert_null(out.data);
    test_sparse_free(&sp);
}

/* ---- sparse arithmetic: SparseAdd, SparseSparseMaximum / Minimum, SparseTensorDenseAdd,
 * SparseAddGrad ---------------------------------------------------------------------------- */

/* Calls the two-sparse op `which` (0 add, 1 maximum, 2 minimum) with op-allocated outputs and
 * with caller outputs, expecting `code` with the op named, and nothing written. */
static void expect_two_failure(int which, const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                               const ndx_options *opt, ndx_status code, const char *needle) {
    ndx_error err;
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    ndx_status st = which == 0   ? ndx_sparse_add(a, b, NULL, opt, &out, &err)
                    : which == 1 ? ndx_sparse_maximum(a, b, opt, &out, &err)
                                 : ndx_sparse_minimum(a, b, opt, &out, &err);
    assert_fails(st, &err, code, needle);
    assert_null(out.indices.data);
    assert_null(out.values.data);
    assert_null(out.dense_shape.data);
    guarded gi = guarded_output(NDX_INT64, 2, SHAPE(2, 2));
    guarded gv = guarded_output(NDX_INT32, 1, SHAPE(2));
    guarded gd = guarded_output(NDX_INT64, 1, SHAPE(2));
    ndx_sparse_tensor given = {gi.t, gv.t, gd.t};
    st = which == 0   ? ndx_sparse_add(a, b, NULL, opt, &given, &err)
         : which == 1 ? ndx_sparse_maximum(a, b, opt, &given, &err)
                      : ndx_sparse_minimum(a, b, opt, &given, &err);
    assert_fails(st, &err, code, needle);
    check_and_free(&gi);
    check_and_free(&gv);
    check_and_free(&gd);
}

/* TensorFlow's advisories on SparseAdd and SparseSparseMinimum / Maximum (indices and values of
 * different lengths, indices outside dense_shape or not a matrix, operands of different ranks
 * read past their ends): each refused before anything is written. */
static void sparse_add_hostile_operands(void **state) {
    (void)state;
    ndx_sparse_tensor good = literal_sparse(2, 2, VALS(0, 0, 1, 2), 2, VALS(3, 4));
    ndx_sparse_tensor outside = literal_sparse(2, 2, VALS(0, 0, 1, INT64_MAX), 2, VALS(3, 4));
    ndx_sparse_tensor negative = literal_sparse(2, 2, VALS(INT64_MIN, 0, 1, 2), 2, VALS(3, 4));
    ndx_sparse_tensor rank3 = literal_sparse(1, 3, VALS(0, 0, 0), 3, VALS(3, 4, 1));
    ndx_sparse_tensor huge = literal_sparse(1, 2, VALS(0, 0), 2, VALS(INT64_MAX, 3));
    ndx_sparse_tensor short_values = literal_sparse(2, 2, VALS(0, 0, 1, 2), 2, VALS(3, 4));
    short_values.values.shape[0] = 1;
    ndx_sparse_tensor flat = literal_sparse(2, 2, VALS(0, 0, 1, 2), 2, VALS(3, 4));
    flat.indices.rank = 1;
    flat.indices.shape[0] = 4;
    static const char *const ops[3] = {"sparse_add", "sparse_maximum", "sparse_minimum"};
    for (int which = 0; which < 3; which++) {
        ndx_options opt = budget_opt((size_t)64 << 20);
        char b_outside[64];
        snprintf(b_outside, sizeof b_outside, "%s: b.indices[1]", ops[which]);
        expect_two_failure(which, &good, &outside, &opt, NDX_E_OUT_OF_RANGE, b_outside);
        expect_two_failure(which, &negative, &good, &opt, NDX_E_OUT_OF_RANGE, "a.indices[0]");
        expect_two_failure(which, &good, &rank3, &opt, NDX_E_INVALID_ARGUMENT,
                           "Operands do not have the same ranks");
        expect_two_failure(which, &huge, &huge, &opt, NDX_E_OVERFLOW, "more elements than");
        expect_two_failure(which, &good, &short_values, &opt, NDX_E_INVALID_ARGUMENT,
                           "b.values has 1 elements but indices has 2 rows");
        expect_two_failure(which, &flat, &good, &opt, NDX_E_INVALID_ARGUMENT,
                           "a.indices has shape [4] but must be a matrix");
    }
    short_values.values.shape[0] = 2;
    flat.indices.rank = 2;
    flat.indices.shape[0] = 2;
    test_sparse_free(&good);
    test_sparse_free(&outside);
    test_sparse_free(&negative);
    test_sparse_free(&rank3);
    test_sparse_free(&huge);
    test_sparse_free(&short_values);
    test_sparse_free(&flat);
}

/* TensorFlow's advisories on SparseTensorDenseAdd (an index outside the dense operand wrote out
 * of bounds) and SparseAddGrad (a gradient shorter than the sum's rows was read past its end):
 * refused, nothing written. */
static void sparse_dense_add_and_grad_hostile(void **state) {
    (void)state;
    ndx_error err;
    int64_t bad[4][2] = {{-1, 0}, {1, 3}, {INT64_MIN, 0}, {0, INT64_MAX}};
    guarded dense = guarded_output(NDX_INT32, 2, SHAPE(2, 3));
    for (int k = 0; k < 4; k++) {
        ndx_sparse_tensor a = literal_sparse(1, 2, bad[k], 2, VALS(2, 3));
        guarded out = guarded_output(NDX_INT32, 2, SHAPE(2, 3));
        assert_fails(ndx_sparse_dense_add(&a, &dense.t, NULL, &out.t, &err), &err,
                     NDX_E_OUT_OF_RANGE, "sparse_dense_add: a.indices[0]");
        check_and_free(&out);
        ndx_tensor mine = {0};
        assert_fails(ndx_sparse_dense_add(&a, &dense.t, NULL, &mine, &err), &err,
                     NDX_E_OUT_OF_RANGE, "sparse_dense_add");
        assert_null(mine.data);
        test_sparse_free(&a);
    }
    check_and_free(&dense);
    ndx_tensor grad = make_index(NDX_INT32, 1, SHAPE(1), VALS(5));
    ndx_tensor rows = make_index(NDX_INT64, 2, SHAPE(2, 2), VALS(0, 0, 1, 1));
    guarded ga = guarded_output(NDX_INT32, 1, SHAPE(2)), gb = guarded_output(NDX_INT32, 1, SHAPE(2));
    assert_fails(ndx_sparse_add_grad(&grad, &rows, &rows, &rows, NULL, &ga.t, &gb.t, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "sparse_add_grad: # elements of backprop_val_grad and # rows of sum_indices "
                 "should match (#nnz of sum): got 1 and 2");
    check_and_free(&ga);
    check_and_free(&gb);
    test_tensor_free(&grad);
    test_tensor_free(&rows);
}

/* SparseSlice (TensorFlow: CHECK failures and overflows on negative or huge start and size):
 * extreme boxes give TensorFlow's clipped shape without overflow, a negative size is refused, a
 * box whose shape cannot be counted is refused, and nothing is written. */
static void sparse_slice_hostile_boxes(void **state) {
    (void)state;
    ndx_sparse_tensor sp;
    sp.indices = make_index(NDX_INT64, 2, SHAPE(2, 2), VALS(0, 1, 3, 2));
    sp.values = make_float(1, SHAPE(2));
    sp.dense_shape = make_index(NDX_INT64, 1, SHAPE(2), VALS(4, 3));
    /* start, size, and the status: the first four have no entry inside */
    const int64_t boxes[][5] = {{INT64_MAX, 0, INT64_MAX, 1, NDX_OK},
                                {0, INT64_MAX, 1, INT64_MAX, NDX_OK},
                                {INT64_MIN, 0, INT64_MAX, 1, NDX_OK}, /* shape [2^63 - 1, 1] */
                                {INT64_MIN, INT64_MIN, 1, 1, NDX_OK},
                                {INT64_MIN, INT64_MIN, INT64_MAX, INT64_MAX, NDX_E_OVERFLOW},
                                {0, 0, -1, 1, NDX_E_INVALID_ARGUMENT},
                                {0, 0, INT64_MIN, 1, NDX_E_INVALID_ARGUMENT}};
    for (size_t k = 0; k < sizeof boxes / sizeof *boxes; k++) {
        ndx_tensor start = make_index(NDX_INT64, 1, SHAPE(2), boxes[k]);
        ndx_tensor size = make_index(NDX_INT64, 1, SHAPE(2), boxes[k] + 2);
        ndx_sparse_tensor out;
        memset(&out, 0, sizeof out);
        ndx_error err;
        ndx_status st = ndx_sparse_slice(&sp, &start, &size, NULL, &out, &err);
        if (boxes[k][4] == NDX_OK) {
            assert_ok(st, &err);
            assert_int_equal(out.indices.shape[0], 0);
            ndx_sparse_free(&out);
        } else {
            assert_fails(st, &err, (ndx_status)boxes[k][4], "sparse_slice");
            assert_null(out.indices.data);
        }
        test_tensor_free(&start);
        test_tensor_free(&size);
    }
    test_sparse_free(&sp);
}

/* SparseSplit (TensorFlow: crashes on a split_dim out of range and on num_split larger than the
 * dimension, and huge allocations for huge num_split): refused before anything is allocated for
 * the pieces. */
static void sparse_split_hostile(void **state) {
    (void)state;
    ndx_sparse_tensor sp;
    sp.indices = make_index(NDX_INT64, 2, SHAPE(2, 2), VALS(0, 1, 3, 2));
    sp.values = make_float(1, SHAPE(2));
    sp.dense_shape = make_index(NDX_INT64, 1, SHAPE(2), VALS(4, (int64_t)1 << 40));
    enum { N = 1 << 16 };
    ndx_sparse_tensor *outs = calloc(N, sizeof *outs);
    ndx_error err;
    assert_fails(ndx_sparse_split(INT64_MIN, 2, &sp, NULL, outs, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_split: axis");
    assert_fails(ndx_sparse_split(0, 5, &sp, NULL, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_split: num_split = 5 must be between 1 and the size");
    assert_fails(ndx_sparse_split(0, -3, &sp, NULL, outs, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_split: num_split = -3");
    ndx_options tight = budget_opt(1 << 16); /* 65536 pieces need more than that to count */
    assert_fails(ndx_sparse_split(1, N, &sp, &tight, outs, &err), &err, NDX_E_MEMORY_BUDGET,
                 "sparse_split");
    for (int p = 0; p < N; p++) assert_null(outs[p].indices.data);
    free(outs);
    test_sparse_free(&sp);
}

/* SparseReshape (TensorFlow: CHECK failures on overflowing shapes, division by zero inferring a
 * -1 beside a 0, indices outside an empty input): each refused, the outputs untouched. */
static void sparse_reshape_hostile(void **state) {
    (void)state;
    const int64_t shapes[][3] = {{INT64_MAX, 2, 1}, {-1, 0, 5}, {-1, -1, 2}, {-2, 1, 1},
                                 {(int64_t)1 << 62, 4, -1}};
    for (int di = 0; di < 3; di++) {
        ndx_dtype dt = index_dtypes[di];
        ndx_tensor idx = make_index(dt, 2, SHAPE(1, 2), VALS(1, 1));
        ndx_tensor in_shape = make_index(NDX_INT64, 1, SHAPE(2), VALS(2, 5));
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
            ndx_tensor ns = make_index(NDX_INT64, 1, SHAPE(3), shapes[k]);
            ndx_tensor oi = test_tensor_v(NDX_INT64, 0, 2, 1, 3), os = test_tensor_v(NDX_INT64, 0, 1, 3);
            test_guard gi = test_guard_fill(&oi, 0x33), gs = test_guard_fill(&os, 0x44);
            ndx_error err;
            assert_fails(ndx_sparse_reshape(&idx, &in_shape, &ns, NULL, &oi, &os, &err), &err,
                         k == 0 || k == 4 ? NDX_E_OVERFLOW : NDX_E_INVALID_ARGUMENT,
                         "sparse_reshape");
            assert_untouched(&gi, &oi);
            assert_untouched(&gs, &os);
            test_tensor_free(&oi);
            test_tensor_free(&os);
            test_tensor_free(&ns);
        }
        /* an entry in an empty tensor */
        ndx_tensor empty = make_index(NDX_INT64, 1, SHAPE(2), VALS(0, 5));
        ndx_tensor ns = make_index(NDX_INT64, 1, SHAPE(1), VALS(0));
        ndx_tensor oi = {0}, os = {0};
        ndx_error err;
        assert_fails(ndx_sparse_reshape(&idx, &empty, &ns, NULL, &oi, &os, &err), &err,
                     NDX_E_OUT_OF_RANGE, "sparse_reshape: input_indices[0]");
        assert_null(oi.data);
        test_tensor_free(&empty);
        test_tensor_free(&ns);
        test_tensor_free(&idx);
        test_tensor_free(&in_shape);
    }
}

/* SparseSliceGrad (TensorFlow: heap reads out of bounds when output_indices do not come from the
 * slice, or have more rows than the input): refused, the output untouched. */
static void sparse_slice_grad_hostile(void **state) {
    (void)state;
    ndx_tensor in_idx = make_index(NDX_INT64, 2, SHAPE(2, 2), VALS(0, 1, 3, 2));
    ndx_tensor start = make_index(NDX_INT64, 1, SHAPE(2), VALS(0, 0));
    ndx_tensor grad = make_float(1, SHAPE(3));
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    test_guard g = test_guard_fill(&out, 0x55);
    ndx_tensor three = make_index(NDX_INT64, 2, SHAPE(3, 2), VALS(0, 1, 3, 2, 3, 2));
    ndx_error err;
    assert_fails(ndx_sparse_slice_grad(&grad, &in_idx, &start, &three, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "more than input_indices' 2");
    ndx_tensor grad1 = make_float(1, SHAPE(1));
    ndx_tensor far = make_index(NDX_INT64, 2, SHAPE(1, 2), VALS(INT64_MAX, INT64_MIN));
    assert_fails(ndx_sparse_slice_grad(&grad1, &in_idx, &start, &far, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_slice_grad: output_indices[0]");
    ndx_tensor start3 = make_index(NDX_INT64, 1, SHAPE(3), VALS(0, 0, 0));
    assert_fails(ndx_sparse_slice_grad(&grad1, &in_idx, &start3, &far, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "input_start has 3 elements");
    assert_untouched(&g, &out);
    test_tensor_free(&start3);
    test_tensor_free(&far);
    test_tensor_free(&grad1);
    test_tensor_free(&three);
    test_tensor_free(&out);
    test_tensor_free(&grad);
    test_tensor_free(&start);
    test_tensor_free(&in_idx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gather_nd_negative_indices),
        cmocka_unit_test(gather_nd_index_past_its_dimension),
        cmocka_unit_test(gather_nd_rows_into_empty_params),
        cmocka_unit_test(gather_nd_bad_shapes),
        cmocka_unit_test(gather_nd_overflowing_views),
        cmocka_unit_test(gather_nd_ignore_policy_with_hostile_indices),
        cmocka_unit_test(scatter_nd_out_of_bounds_write),
        cmocka_unit_test(scatter_nd_into_empty_output),
        cmocka_unit_test(scatter_updates_rank_too_small),
        cmocka_unit_test(scatter_updates_shape_mismatch),
        cmocka_unit_test(tensor_scatter_validates_before_writing),
        cmocka_unit_test(scatter_ignore_policy_with_hostile_indices),
        cmocka_unit_test(tensor_scatter_unsupported_dtypes),
        cmocka_unit_test(scatter_nd_hostile_shapes),
        cmocka_unit_test(stitch_shapes_that_disagree),
        cmocka_unit_test(stitch_negative_and_huge_indices),
        cmocka_unit_test(partition_ids_out_of_range),
        cmocka_unit_test(partition_many_partitions),
        cmocka_unit_test(sparse_concat_mismatched_inputs),
        cmocka_unit_test(sparse_concat_malformed_sparse_tensors),
        cmocka_unit_test(sparse_concat_shape_overflow),
        cmocka_unit_test(sparse_to_dense_hostile),
        cmocka_unit_test(sparse_malformed_views),
        cmocka_unit_test(bincount_hostile),
        cmocka_unit_test(sparse_dense_matmul_hostile),
        cmocka_unit_test(sparse_fill_empty_rows_hostile),
        cmocka_unit_test(count_sparse_output_hostile),
        cmocka_unit_test(sparse_reduce_indices_outside_dense_shape),
        cmocka_unit_test(sparse_reduce_hostile_dense_shape),
        cmocka_unit_test(sparse_softmax_malformed_views),
        cmocka_unit_test(sparse_add_hostile_operands),
        cmocka_unit_test(sparse_dense_add_and_grad_hostile),
        cmocka_unit_test(sparse_slice_hostile_boxes),
        cmocka_unit_test(sparse_split_hostile),
        cmocka_unit_test(sparse_reshape_hostile),
        cmocka_unit_test(sparse_slice_grad_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
