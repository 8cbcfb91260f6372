/* test_unique.c — unique and unique_with_counts: TensorFlow's documented examples (Unique and
 * UniqueV2), NaN and signed zeros as TensorFlow's CPU kernel compares them, a randomized
 * comparison with a quadratic search written here (every dtype, every axis both ways, empty
 * dims, int32 and int64 idx), every error (nothing written), the same bytes at 1, 2 and 3
 * threads, max_memory, the shape function and infer. */
#include "contract.h"
#include "ndx_test.h"

#include <math.h>


static int64_t idx_at(const ndx_tensor *t, int64_t i) {
    return t->dtype == NDX_INT32 ? ((int32_t *)t->data)[i] : ((int64_t *)t->data)[i];
}

/* ---- the reference ------------------------------------------------------------------------ */

/* Element equality as TensorFlow's map keys: == for float32/64 (NaN never equal, -0 == 0),
 * bits for float16/bfloat16 with NaN never equal, bytes for the rest. */
static int elements_equal(ndx_dtype dt, size_t w, const unsigned char *a, const unsigned char *b) {
    switch (dt) {
    case NDX_FLOAT32: { float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4); return x == y; }
    case NDX_FLOAT64: { double x, y; memcpy(&x, a, 8); memcpy(&y, b, 8); return x == y; }
    case NDX_FLOAT16:
    case NDX_BFLOAT16: {
        uint16_t x, y;
        memcpy(&x, a, 2);
        memcpy(&y, b, 2);
        uint16_t inf = dt == NDX_FLOAT16 ? 0x7c00 : 0x7f80;
        return x == y && (x & 0x7fff) <= inf;
    }
    default: return memcmp(a, b, w) == 0;
    }
}

/* x as [outer, n, inner]: slice i equals slice j? */
static int slices_equal(const ndx_tensor *x, int64_t outer, int64_t n, int64_t inner, int64_t i,
                        int64_t j) {
    size_t w = x->itemsize;
    const unsigned char *d = x->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t r = 0; r < inner; r++)
            if (!elements_equal(x->dtype, w, d + ((o * n + i) * inner + r) * w,
                                d + ((o * n + j) * inner + r) * w))
                return 0;
    return 1;
}

/* Checks y, idx and counts against a quadratic search over the slices of x along axis. */
static void check_against_reference(const ndx_tensor *x, int axis, const ndx_tensor *y,
                                    const ndx_tensor *idx, const ndx_tensor *counts) {
    int64_t outer = 1, inner = 1, n = x->shape[axis];
    for (int k = 0; k < axis; k++) outer *= x->shape[k];
    for (int k = axis + 1; k < x->rank; k++) inner *= x->shape[k];
    int64_t *first = malloc((size_t)(n + 1) * sizeof *first);
    int64_t *cnt = calloc((size_t)(n + 1), sizeof *cnt);
    int64_t u = 0;
    assert_int_equal(idx->rank, 1);
    assert_int_equal(idx->shape[0], n);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = 0;
        while (j < u && !slices_equal(x, outer, n, inner, first[j], i)) j++;
        if (j == u) first[u++] = i;
        cnt[j]++;
        assert_int_equal(idx_at(idx, i), j);
    }
    assert_int_equal(y->rank, x->rank);
    for (int k = 0; k < x->rank; k++) assert_int_equal(y->shape[k], k == axis ? u : x->shape[k]);
    /* y's slice j holds x's slice first[j], bit for bit */
    size_t w = x->itemsize;
    for (int64_t j = 0; j < u; j++)
        for (int64_t o = 0; o < outer; o++)
            if (inner > 0)
                assert_memory_equal((unsigned char *)y->data + ((o * u + j) * inner) * w,
                                    (unsigned char *)x->data + ((o * n + first[j]) * inner) * w,
                                    (size_t)inner * w);
    if (counts) {
        assert_int_equal(counts->shape[0], u);
        for (int64_t j = 0; j < u; j++) assert_int_equal(idx_at(counts, j), cnt[j]);
    }
    free(first);
    free(cnt);
}

/* ---- examples ---------------------------------------------------------------------------- */

static void test_docstring_examples(void **state) {
    (void)state;
    ndx_error err;
    int32_t xv[9] = {1, 1, 2, 4, 4, 4, 7, 8, 8};
    ndx_tensor x = test_tensor_from(NDX_INT32, 0, 1, SHAPE(9), xv);
    ndx_tensor y = {0}, idx = {0}, counts = {0};
    assert_ok(ndx_unique(&x, NDX_AXIS_NONE, NDX_INT32, NULL, &y, &idx, &counts, &err), &err);
    ndx_tensor wy = test_tensor_from(NDX_INT32, 0, 1, SHAPE(5), (int32_t[]){1, 2, 4, 7, 8});
    ndx_tensor widx = test_tensor_from(NDX_INT32, 0, 1, SHAPE(9), (int32_t[]){0, 0, 1, 2, 2, 2, 3, 4, 4});
    ndx_tensor wc = test_tensor_from(NDX_INT32, 0, 1, SHAPE(5), (int32_t[]){2, 1, 3, 1, 2});
    assert_tensor_eq(&y, &wy);
    assert_tensor_eq(&idx, &widx);
    assert_tensor_eq(&counts, &wc);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), ndx_tensor_free(&counts);
    test_tensor_free(&wy), test_tensor_free(&widx), test_tensor_free(&wc), test_tensor_free(&x);

    /* UniqueV2: [[1, 0, 0], [1, 0, 0], [2, 0, 0]] along axis 0 and axis 1 */
    int64_t mv[9] = {1, 0, 0, 1, 0, 0, 2, 0, 0};
    x = test_tensor_from(NDX_INT64, 0, 2, SHAPE(3, 3), mv);
    assert_ok(ndx_unique(&x, 0, NDX_INT64, NULL, &y, &idx, NULL, &err), &err);
    wy = test_tensor_from(NDX_INT64, 0, 2, SHAPE(2, 3), (int64_t[]){1, 0, 0, 2, 0, 0});
    widx = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), (int64_t[]){0, 0, 1});
    assert_tensor_eq(&y, &wy);
    assert_tensor_eq(&idx, &widx);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), test_tensor_free(&wy), test_tensor_free(&widx);
    assert_ok(ndx_unique(&x, -1, NDX_INT64, NULL, &y, &idx, NULL, &err), &err);
    wy = test_tensor_from(NDX_INT64, 0, 2, SHAPE(3, 2), (int64_t[]){1, 0, 1, 0, 2, 0});
    widx = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), (int64_t[]){0, 1, 1});
    assert_tensor_eq(&y, &wy);
    assert_tensor_eq(&idx, &widx);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), test_tensor_free(&wy), test_tensor_free(&widx);
    test_tensor_free(&x);

    /* strings and bools (TensorFlow's testString, testBool) */
    x = test_strings(2, 1, SHAPE(5), (const char *const[]){"b", "a", "b", "", "a"});
    assert_ok(ndx_unique(&x, NDX_AXIS_NONE, NDX_INT32, NULL, &y, &idx, &counts, &err), &err);
    wy = test_strings(2, 1, SHAPE(3), (const char *const[]){"b", "a", ""});
    assert_tensor_eq(&y, &wy);
    check_against_reference(&x, 0, &y, &idx, &counts);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), ndx_tensor_free(&counts);
    test_tensor_free(&wy), test_tensor_free(&x);
}

/* NaN and signed zeros, as TensorFlow's CPU kernel keys them. */
static void test_nan_and_zeros(void **state) {
    (void)state;
    ndx_error err;
    float fv[6] = {NAN, 0.0f, -0.0f, NAN, 1.0f, 0.0f};
    ndx_tensor x = test_tensor_from(NDX_FLOAT32, 0, 1, SHAPE(6), fv);
    ndx_tensor y = {0}, idx = {0}, counts = {0};
    assert_ok(ndx_unique(&x, 0, NDX_INT64, NULL, &y, &idx, &counts, &err), &err);
    /* [nan, 0, nan, 1]: each NaN its own value; -0.0 joins 0.0, which came first */
    assert_int_equal(y.shape[0], 4);
    float *yv = y.data;
    assert_true(isnan(yv[0]) && isnan(yv[2]));
    assert_true(yv[1] == 0.0f && !signbit(yv[1]));
    int64_t want_idx[6] = {0, 1, 1, 2, 3, 1};
    for (int i = 0; i < 6; i++) assert_int_equal(((int64_t *)idx.data)[i], want_idx[i]);
    int64_t want_counts[4] = {1, 3, 1, 1};
    for (int i = 0; i < 4; i++) assert_int_equal(((int64_t *)counts.data)[i], want_counts[i]);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), ndx_tensor_free(&counts), test_tensor_free(&x);
    /* -0.0 first: y keeps -0.0 */
    double dv[2] = {-0.0, 0.0};
    x = test_tensor_from(NDX_FLOAT64, 0, 1, SHAPE(2), dv);
    assert_ok(ndx_unique(&x, 0, NDX_INT32, NULL, &y, &idx, NULL, &err), &err);
    assert_int_equal(y.shape[0], 1);
    assert_true(signbit(((double *)y.data)[0]));
    ndx_tensor_free(&y), ndx_tensor_free(&idx), test_tensor_free(&x);
    /* float16: the bits are the key, so -0.0 and 0.0 are two values */
    uint16_t hv[3] = {0x8000, 0x0000, 0x8000};
    x = test_tensor_from(NDX_FLOAT16, 0, 1, SHAPE(3), hv);
    assert_ok(ndx_unique(&x, 0, NDX_INT32, NULL, &y, &idx, NULL, &err), &err);
    assert_int_equal(y.shape[0], 2);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), test_tensor_free(&x);
    /* slices holding a NaN never match */
    float sv[4] = {1, NAN, 1, NAN};
    x = test_tensor_from(NDX_FLOAT32, 0, 2, SHAPE(2, 2), sv);
    assert_ok(ndx_unique(&x, 0, NDX_INT32, NULL, &y, &idx, NULL, &err), &err);
    assert_int_equal(y.shape[0], 2);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), test_tensor_free(&x);
}

static void test_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor x = test_tensor_v(NDX_INT32, 0, 2, 2, 3);
    memset(x.data, 0, test_nbytes(&x));
    ndx_tensor y = {0}, idx = {0}, counts = {0};
    assert_fails(ndx_unique(&x, NDX_AXIS_NONE, NDX_INT32, NULL, &y, &idx, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "unique expects a 1D vector");
    assert_fails(ndx_unique(&x, 2, NDX_INT32, NULL, &y, &idx, &counts, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "unique_with_counts: axis has to be between [0, 2)");
    assert_fails(ndx_unique(&x, -3, NDX_INT32, NULL, &y, &idx, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "axis has to be between [0, 2)");
    assert_fails(ndx_unique(&x, 0, NDX_INT16, NULL, &y, &idx, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out_idx must be int32 or int64");
    ndx_tensor s = test_tensor_v(NDX_INT32, 0, 0);
    assert_fails(ndx_unique(&s, 0, NDX_INT32, NULL, &y, &idx, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "axis has to be between [0, 0)");
    ndx_tensor cx = test_tensor_v(NDX_COMPLEX64, 0, 1, 3);
    assert_fails(ndx_unique(&cx, 0, NDX_INT32, NULL, &y, &idx, NULL, &err), &err,
                 NDX_E_UNSUPPORTED, "complex64");
    assert_true(y.data == NULL && idx.data == NULL && counts.data == NULL);
    /* a caller's output of the wrong shape: nothing written, nothing left allocated */
    ndx_tensor v = test_tensor_v(NDX_INT32, 0, 1, 6);
    for (int i = 0; i < 6; i++) ((int32_t *)v.data)[i] = i % 2;
    ndx_tensor wrong_idx = test_tensor_v(NDX_INT32, 0, 1, 5);
    test_guard g = test_guard_fill(&wrong_idx, 0x21);
    assert_fails(ndx_unique(&v, 0, NDX_INT32, NULL, &y, &wrong_idx, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "idx");
    assert_untouched(&g, &wrong_idx);
    assert_true(y.data == NULL);
    ndx_tensor good_idx = test_tensor_v(NDX_INT32, 0, 1, 6);
    ndx_tensor wrong_counts = test_tensor_v(NDX_INT32, 0, 1, 3);
    test_guard gi = test_guard_fill(&good_idx, 0x22);
    assert_fails(ndx_unique(&v, 0, NDX_INT32, NULL, &y, &good_idx, &wrong_counts, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "counts");
    assert_untouched(&gi, &good_idx);
    assert_true(y.data == NULL);
    /* max_memory: 16 bytes per slice and 16 slots of 8 bytes, plus outputs */
    ndx_options o = {.max_memory = 6 * 16 + 16 * 8 - 1};
    assert_fails(ndx_unique(&v, 0, NDX_INT32, &o, &y, &idx, NULL, &err), &err,
                 NDX_E_MEMORY_BUDGET, NULL);
    assert_true(y.data == NULL && idx.data == NULL);
    o.max_memory = 6 * 16 + 16 * 8 + 2 * 4 + 6 * 4;
    assert_ok(ndx_unique(&v, 0, NDX_INT32, &o, &y, &idx, NULL, &err), &err);
    ndx_tensor_free(&y), ndx_tensor_free(&idx);
    /* the shape function */
    ndx_tensor vy, vi, vc;
    assert_ok(ndx_unique_shape(&v, 0, NDX_INT64, &vy, &vi, &vc, &err), &err);
    assert_int_equal(vy.shape[0], 2);
    assert_int_equal(vi.shape[0], 6);
    assert_int_equal(vc.shape[0], 2);
    assert_int_equal(vc.dtype, NDX_INT64);
    assert_true(vy.data == NULL);
    test_tensor_free(&good_idx), test_tensor_free(&wrong_counts), test_tensor_free(&wrong_idx);
    test_tensor_free(&v), test_tensor_free(&cx), test_tensor_free(&s), test_tensor_free(&x);
}

/* Values drawn from a few, so repeats are common; some floats made NaN or -0.0. */
static void fill_repeating(test_rng *r, ndx_tensor *t) {
    int64_t n = test_count(t);
    if (n == 0) return;
    ndx_tensor pool = test_tensor(t->dtype, t->dtype == NDX_STRING ? t->itemsize : 0, 1,
                                  (const int64_t[]){4});
    test_fill_random(r, &pool);
    size_t w = t->itemsize;
    for (int64_t i = 0; i < n; i++)
        memcpy((unsigned char *)t->data + (size_t)i * w,
               (unsigned char *)pool.data + (size_t)rng_below(r, 4) * w, w);
    for (int64_t i = 0; i < n; i++) {
        if (rng_below(r, 10) != 0) continue;
        unsigned char *e = (unsigned char *)t->data + (size_t)i * w;
        if (t->dtype == NDX_FLOAT32) { float v = rng_below(r, 2) ? NAN : -0.0f; memcpy(e, &v, 4); }
        if (t->dtype == NDX_FLOAT64) { double v = rng_below(r, 2) ? NAN : -0.0; memcpy(e, &v, 8); }
        if (t->dtype == NDX_FLOAT16) { uint16_t v = rng_below(r, 2) ? 0x7e00 : 0x8000; memcpy(e, &v, 2); }
        if (t->dtype == NDX_BFLOAT16) { uint16_t v = rng_below(r, 2) ? 0x7fc0 : 0x8000; memcpy(e, &v, 2); }
    }
    test_tensor_free(&pool);
}

static void test_random(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {11};
    for (int d = 0; d < test_all_dtypes_count; d++) {
        ndx_dtype dt = test_all_dtypes[d];
        if (dt == NDX_COMPLEX64 || dt == NDX_COMPLEX128) continue;
        for (int it = 0; it < 40; it++) {
            int rank = (int)rng_range(&r, 1, 3);
            int64_t shape[NDX_MAX_RANK];
            int64_t hi = it % 10 == 0 ? 300 : 5;
            for (int k = 0; k < rank; k++)
                shape[k] = rng_range(&r, rng_below(&r, 10) ? 1 : 0, rank == 1 ? hi : 5);
            if (rank > 1 && it % 7 == 0) shape[0] = 1;
            ndx_tensor x = test_tensor(dt, test_random_width(&r, dt), rank, shape);
            fill_repeating(&r, &x);
            int axis = (int)rng_range(&r, 0, rank - 1);
            int use_axis = rng_below(&r, 2) ? axis - rank : axis;
            if (rank == 1 && rng_below(&r, 3) == 0) use_axis = NDX_AXIS_NONE;
            ndx_dtype out_idx = rng_below(&r, 2) ? NDX_INT32 : NDX_INT64;
            ndx_tensor y1 = {0}, i1 = {0}, c1 = {0};
            assert_ok(ndx_unique(&x, use_axis, out_idx, NULL, &y1, &i1, &c1, &err), &err);
            check_against_reference(&x, axis, &y1, &i1, &c1);
            for (int t = 2; t <= 3; t++) {
                ndx_options o = test_options(t, NDX_BAD_INDICES_ERROR);
                ndx_tensor y = {0}, idx = {0};
                assert_ok(ndx_unique(&x, use_axis, out_idx, &o, &y, &idx, NULL, &err), &err);
                assert_tensor_eq(&y, &y1);
                assert_tensor_eq(&idx, &i1);
                ndx_tensor_free(&y), ndx_tensor_free(&idx);
            }
            /* into the caller's buffers, as the shape function describes them */
            ndx_tensor vy, vi, vc;
            assert_ok(ndx_unique_shape(&x, use_axis, out_idx, &vy, &vi, &vc, &err), &err);
            ndx_tensor y = test_tensor(vy.dtype, vy.dtype == NDX_STRING ? vy.itemsize : 0, vy.rank, vy.shape);
            ndx_tensor idx = test_tensor(vi.dtype, 0, 1, vi.shape);
            ndx_tensor cnt = test_tensor(vc.dtype, 0, 1, vc.shape);
            assert_ok(ndx_unique(&x, use_axis, out_idx, NULL, &y, &idx, &cnt, &err), &err);
            assert_tensor_eq(&y, &y1);
            assert_tensor_eq(&idx, &i1);
            assert_tensor_eq(&cnt, &c1);
            /* infer agrees */
            test_inference full = {0}, part = {0};
            ndx_spec xs = ndx_spec_of(&x), px = test_partial_spec(&r, &x, 1);
            full.status = ndx_unique_infer(&xs, use_axis, out_idx, &full.specs[0], &full.specs[1],
                                           &full.specs[2], &full.err);
            part.status = ndx_unique_infer(&px, use_axis, out_idx, &part.specs[0], &part.specs[1],
                                           &part.specs[2], &part.err);
            ndx_tensor outs[3] = {y1, i1, c1};
            assert_infer_agrees(&part, &full, NDX_OK, &err, 3, outs);
            test_tensor_free(&y), test_tensor_free(&idx), test_tensor_free(&cnt);
            ndx_tensor_free(&y1), ndx_tensor_free(&i1), ndx_tensor_free(&c1);
            test_tensor_free(&x);
        }
    }
}

/* A larger vector with many distinct values: the table grows past its first size. */
static void test_many_values(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {3};
    int64_t n = 20000;
    ndx_tensor x = test_tensor(NDX_INT64, 0, 1, &n);
    for (int64_t i = 0; i < n; i++) ((int64_t *)x.data)[i] = (int64_t)rng_below(&r, 5000) * 1000003;
    ndx_tensor y = {0}, idx = {0}, counts = {0};
    assert_ok(ndx_unique(&x, 0, NDX_INT32, NULL, &y, &idx, &counts, &err), &err);
    check_against_reference(&x, 0, &y, &idx, &counts);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), ndx_tensor_free(&counts), test_tensor_free(&x);
    /* NaNs among many values (the table is rebuilt with them in it), and signed zeros */
    int64_t m = 9000; /* 3000 NaNs and 700 numbers: past the table's first 4096 slots */
    x = test_tensor(NDX_FLOAT32, 0, 1, &m);
    float *f = x.data;
    for (int64_t i = 0; i < m; i++)
        f[i] = i % 3 == 0 ? NAN : i % 7 == 0 ? (i % 2 ? -0.0f : 0.0f) : (float)(i % 700);
    assert_ok(ndx_unique(&x, 0, NDX_INT64, NULL, &y, &idx, &counts, &err), &err);
    check_against_reference(&x, 0, &y, &idx, &counts);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), ndx_tensor_free(&counts), test_tensor_free(&x);
    /* slices: rows of a [2000, 3] matrix along axis 0 and its columns of a [3, 2000] one */
    x = test_tensor_v(NDX_INT16, 0, 2, 2000, 3);
    int16_t *h = x.data;
    for (int64_t i = 0; i < 6000; i++) h[i] = (int16_t)rng_below(&r, 9);
    assert_ok(ndx_unique(&x, 0, NDX_INT32, NULL, &y, &idx, &counts, &err), &err);
    check_against_reference(&x, 0, &y, &idx, &counts);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), ndx_tensor_free(&counts);
    x.shape[0] = 3;
    x.shape[1] = 2000;
    assert_ok(ndx_unique(&x, 1, NDX_INT32, NULL, &y, &idx, &counts, &err), &err);
    check_against_reference(&x, 1, &y, &idx, &counts);
    ndx_tensor_free(&y), ndx_tensor_free(&idx), ndx_tensor_free(&counts), test_tensor_free(&x);
}

/* Scratch and outputs through the caller's allocator: after a call only the three outputs are
 * held; a refused allocation fails cleanly with nothing held and no output set. */
static void test_allocator_contract(void **state) {
    (void)state;
    ndx_error err;
    int64_t n = 4000;
    ndx_tensor x = test_tensor(NDX_INT32, 0, 1, &n);
    for (int64_t i = 0; i < n; i++) ((int32_t *)x.data)[i] = (int32_t)(i % 37);
    test_allocator a;
    test_allocator_init(&a);
    ndx_options o = {.allocator = &a.base};
    ndx_tensor y = {0}, idx = {0}, counts = {0};
    assert_ok(ndx_unique(&x, 0, NDX_INT32, &o, &y, &idx, &counts, &err), &err);
    assert_int_equal(a.live, 3);
    test_allocator_free(&a, y.data), test_allocator_free(&a, idx.data);
    test_allocator_free(&a, counts.data);
    a.refuse = 1;
    y = idx = counts = (ndx_tensor){0};
    assert_fails(ndx_unique(&x, 0, NDX_INT32, &o, &y, &idx, &counts, &err), &err,
                 NDX_E_NO_MEMORY, NULL);
    assert_true(y.data == NULL && idx.data == NULL && counts.data == NULL);
    assert_int_equal(a.live, 0);
    /* idx is taken before the count (which writes into it); a budget with room for the count's
     * scratch and idx but not y fails after the count, and idx is given back. */
    a.refuse = 0;
    o.max_memory = 4000 * 24 + 8192 * 4 + 4000 * 4 + 100; /* 37 values of y: 148 bytes */
    assert_fails(ndx_unique(&x, 0, NDX_INT32, &o, &y, &idx, &counts, &err), &err,
                 NDX_E_MEMORY_BUDGET, "y needs 148 bytes");
    assert_true(y.data == NULL && idx.data == NULL && counts.data == NULL);
    assert_int_equal(a.live, 0);
    test_tensor_free(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_contract),
        cmocka_unit_test(test_docstring_examples), cmocka_unit_test(test_nan_and_zeros),
        cmocka_unit_test(test_errors),             cmocka_unit_test(test_random),
        cmocka_unit_test(test_many_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
