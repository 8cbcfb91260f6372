/* test_gather_nd.c — gather_nd: TensorFlow's examples as given, batch_dims examples, randomized
 * comparison with a naive reference (every dtype, index dtype, rank up to 8, depth 0..rank,
 * batch_dims 0..2, zero-size dims), depths past TensorFlow's 7, the ignore policy, every error
 * path (nothing written), thread counts 1/2/3, every copy path (elements, slices in order with
 * and without streaming stores, slices in source order, huge slices in pieces) and output
 * handling. */
#include "ndx_test.h"
#include "reference.h"

#include <stdio.h>

#define STRS(...) ((const char *const[]){__VA_ARGS__})

static const ndx_dtype index_dtypes[] = {NDX_INT16, NDX_INT32, NDX_INT64};

/* An index tensor of dtype dt holding `values`. */
static ndx_tensor make_indices(ndx_dtype dt, int rank, const int64_t *shape, const int64_t *values) {
    ndx_tensor t = test_tensor(dt, 0, rank, shape);
    int64_t n = test_count(&t);
    for (int64_t i = 0; i < n; i++) test_set_index(&t, i, values[i]);
    return t;
}

/* Expects the call to fail with `code` and `needle`, leaving a pre-filled `out` unchanged. */
static void expect_failure(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                           const ndx_options *opt, ndx_tensor *out, ndx_status code,
                           const char *needle) {
    ndx_error err;
    test_guard g = test_guard_fill(out, 0x77);
    assert_fails(ndx_gather_nd(params, indices, batch_dims, opt, out, &err), &err, code, needle);
    assert_untouched(&g, out);
}

/* ---- the reference ------------------------------------------------------------------------ */

/* The shared naive reference (tests/reference/): one index row at a time, each slice copied from
 * where its coordinates point; a row with a coordinate outside its dimension gives zeros. `out`
 * must have the result's shape. */
static void reference_gather(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                             ndx_tensor *out) {
    ndx_options zero_bad = {.bad_indices = NDX_BAD_INDICES_IGNORE};
    ndx_tensor ref = {0};
    char why[REF_WHY];
    assert_int_equal(ref_gather_nd(params, indices, batch_dims, &zero_bad, &ref, why), REF_OK);
    assert_int_equal(test_nbytes(&ref), test_nbytes(out));
    if (test_nbytes(out)) memcpy(out->data, ref.data, test_nbytes(out));
    ref_tensor_free(&ref);
}

/* The result's view (data owned by the test): indices.shape[:-1] + params.shape[b + D:]. */
static ndx_tensor expected_view(const ndx_tensor *params, const ndx_tensor *indices,
                                int batch_dims) {
    int64_t shape[2 * NDX_MAX_RANK];
    int rank = 0;
    for (int k = 0; k < indices->rank - 1; k++) shape[rank++] = indices->shape[k];
    for (int k = batch_dims + (int)indices->shape[indices->rank - 1]; k < params->rank; k++)
        shape[rank++] = params->shape[k];
    assert_true(rank <= NDX_MAX_RANK);
    return test_tensor(params->dtype, params->itemsize, rank, shape);
}

/* Runs the op into an output it allocates and into a caller-provided one, for 1, 2 and 3 threads,
 * and compares each with the reference. */
static void check_against_reference(const ndx_tensor *params, const ndx_tensor *indices,
                                    int batch_dims, ndx_bad_indices policy) {
    ndx_tensor want = expected_view(params, indices, batch_dims);
    reference_gather(params, indices, batch_dims, &want);
    ndx_error err;
    ndx_tensor shape_out;
    assert_ok(ndx_gather_nd_shape(params, indices, batch_dims, &shape_out, &err), &err);
    assert_null(shape_out.data);
    assert_int_equal(shape_out.rank, want.rank);
    for (int t = 1; t <= TEST_THREADS; t++) {
        ndx_options opt = test_options(t, policy);
        ndx_tensor got;
        memset(&got, 0, sizeof got);
        assert_ok(ndx_gather_nd(params, indices, batch_dims, &opt, &got, &err), &err);
        if (test_count(&want)) assert_non_null(got.data);
        assert_tensor_eq(&got, &want);
        ndx_tensor_free(&got);
        assert_null(got.data);

        ndx_tensor mine = test_tensor(want.dtype, want.itemsize, want.rank, want.shape);
        memset(mine.data, 0xA5, test_nbytes(&mine));
        assert_ok(ndx_gather_nd(params, indices, batch_dims, &opt, &mine, &err), &err);
        assert_tensor_eq(&mine, &want);
        test_tensor_free(&mine);
    }
    test_tensor_free(&want);
}

/* ---- TensorFlow's examples -------------------------------------------------------------- */

/* Gathers into an output the op allocates, with the default options, and checks it is `want`. */
static void gather_is(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                      const ndx_tensor *want) {
    ndx_error err;
    ndx_tensor got;
    memset(&got, 0, sizeof got);
    assert_ok(ndx_gather_nd(params, indices, batch_dims, NULL, &got, &err), &err);
    assert_tensor_eq(&got, want);
    ndx_tensor_free(&got);
}

/* One example (indices irank, ishape, iv) run for every index dtype: the result must be `want`;
 * with `reference`, check_against_reference runs too. Frees params and want. */
static void example_every_index_dtype(ndx_tensor params, ndx_tensor want, int irank,
                                      const int64_t *ishape, const int64_t *iv, int reference) {
    for (size_t d = 0; d < sizeof index_dtypes / sizeof index_dtypes[0]; d++) {
        ndx_tensor indices = make_indices(index_dtypes[d], irank, ishape, iv);
        gather_is(&params, &indices, 0, &want);
        if (reference) check_against_reference(&params, &indices, 0, NDX_BAD_INDICES_ERROR);
        test_tensor_free(&indices);
    }
    test_tensor_free(&params);
    test_tensor_free(&want);
}

/* One example with string params, run for every index dtype. */
static void string_example(size_t width, int prank, const int64_t *pshape, const char *const *pv,
                           int irank, const int64_t *ishape, const int64_t *iv, int orank,
                           const int64_t *oshape, const char *const *ov) {
    example_every_index_dtype(test_strings(width, prank, pshape, pv),
                              test_strings(width, orank, oshape, ov), irank, ishape, iv, 1);
}

static const char *const matrix2[] = {"a", "b", "c", "d"};
static const char *const cube2[] = {"a0", "b0", "c0", "d0", "a1", "b1", "c1", "d1"};

/* Every example of the C++ API's GatherNd page (tf.raw_ops.GatherNd documentation). */
static void documented_string_examples(void **state) {
    (void)state;
    /* Simple indexing into a matrix. */
    string_example(1, 2, SHAPE(2, 2), matrix2, 2, SHAPE(2, 2), VALS(0, 0, 1, 1), 1, SHAPE(2),
                   STRS("a", "d"));
    /* Slice indexing into a matrix. */
    string_example(1, 2, SHAPE(2, 2), matrix2, 2, SHAPE(2, 1), VALS(1, 0), 2, SHAPE(2, 2),
                   STRS("c", "d", "a", "b"));
    /* Indexing into a 3-tensor. */
    string_example(2, 3, SHAPE(2, 2, 2), cube2, 2, SHAPE(1, 1), VALS(1), 3, SHAPE(1, 2, 2),
                   STRS("a1", "b1", "c1", "d1"));
    string_example(2, 3, SHAPE(2, 2, 2), cube2, 2, SHAPE(2, 2), VALS(0, 1, 1, 0), 2, SHAPE(2, 2),
                   STRS("c0", "d0", "a1", "b1"));
    string_example(2, 3, SHAPE(2, 2, 2), cube2, 2, SHAPE(2, 3), VALS(0, 0, 1, 1, 0, 1), 1,
                   SHAPE(2), STRS("b0", "b1"));
    /* Batched indexing into a matrix. */
    string_example(1, 2, SHAPE(2, 2), matrix2, 3, SHAPE(2, 1, 2), VALS(0, 0, 0, 1), 2,
                   SHAPE(2, 1), STRS("a", "b"));
    /* Batched slice indexing into a matrix. */
    string_example(1, 2, SHAPE(2, 2), matrix2, 3, SHAPE(2, 1, 1), VALS(1, 0), 3, SHAPE(2, 1, 2),
                   STRS("c", "d", "a", "b"));
    /* Batched indexing into a 3-tensor (also the string examples of the tf.gather_nd page). */
    string_example(2, 3, SHAPE(2, 2, 2), cube2, 3, SHAPE(2, 1, 1), VALS(1, 0), 4,
                   SHAPE(2, 1, 2, 2), STRS("a1", "b1", "c1", "d1", "a0", "b0", "c0", "d0"));
    string_example(2, 3, SHAPE(2, 2, 2), cube2, 3, SHAPE(2, 2, 2), VALS(0, 1, 1, 0, 0, 0, 1, 1),
                   3, SHAPE(2, 2, 2), STRS("c0", "d0", "a1", "b1", "a0", "b0", "c1", "d1"));
    string_example(2, 3, SHAPE(2, 2, 2), cube2, 3, SHAPE(2, 2, 3),
                   VALS(0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0), 2, SHAPE(2, 2),
                   STRS("b0", "b1", "d0", "c1"));
}

/* One example with np.arange(count) int64 params, run for every index dtype. */
static void arange_example(int prank, const int64_t *pshape, int irank, const int64_t *ishape,
                           const int64_t *iv, int orank, const int64_t *oshape,
                           const int64_t *ov) {
    ndx_tensor params = test_tensor(NDX_INT64, 0, prank, pshape);
    for (int64_t i = 0; i < test_count(&params); i++) ((int64_t *)params.data)[i] = i;
    ndx_tensor want = test_tensor(NDX_INT64, 0, orank, oshape);
    if (test_nbytes(&want)) memcpy(want.data, ov, test_nbytes(&want));
    example_every_index_dtype(params, want, irank, ishape, iv, 0);
}

/* The integer examples of the tf.gather_nd page (np.arange data). */
static void documented_arange_examples(void **state) {
    (void)state;
    /* x = np.reshape(np.arange(30), [5, 6]) */
    arange_example(2, SHAPE(5, 6), 1, SHAPE(2), VALS(1, 2), 0, NULL, VALS(8));
    arange_example(2, SHAPE(5, 6), 2, SHAPE(2, 2), VALS(1, 2, 2, 3), 1, SHAPE(2), VALS(8, 15));
    arange_example(2, SHAPE(5, 6), 2, SHAPE(2, 1), VALS(1, 2), 2, SHAPE(2, 6),
                   VALS(6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17));
    /* x = np.reshape(np.arange(12), [2, 3, 2]) */
    arange_example(3, SHAPE(2, 3, 2), 2, SHAPE(2, 3), VALS(0, 0, 0, 1, 2, 1), 1, SHAPE(2),
                   VALS(0, 11));
    arange_example(3, SHAPE(2, 3, 2), 3, SHAPE(2, 2, 2), VALS(0, 0, 0, 1, 1, 0, 1, 1), 3,
                   SHAPE(2, 2, 2), VALS(0, 1, 2, 3, 6, 7, 8, 9));
    arange_example(3, SHAPE(2, 3, 2), 2, SHAPE(4, 2), VALS(0, 0, 0, 1, 1, 0, 1, 1), 2,
                   SHAPE(4, 2), VALS(0, 1, 2, 3, 6, 7, 8, 9));
}

/* tf.gather_nd's batch_dims examples (TensorFlow 2 documentation), worked by hand. */
static void batch_dims_examples(void **state) {
    (void)state;
    for (size_t d = 0; d < sizeof index_dtypes / sizeof index_dtypes[0]; d++) {
        ndx_tensor params = test_strings(2, 3, SHAPE(2, 2, 2), cube2);
        struct {
            int irank;
            const int64_t *ishape, *iv;
            int orank;
            const int64_t *oshape;
            const char *const *ov;
        } cases[] = {
            /* indices [[1], [0]]: batch 0 takes row 1, batch 1 takes row 0. */
            {2, SHAPE(2, 1), VALS(1, 0), 2, SHAPE(2, 2), STRS("c0", "d0", "a1", "b1")},
            /* indices [[[1]], [[0]]] */
            {3, SHAPE(2, 1, 1), VALS(1, 0), 3, SHAPE(2, 1, 2), STRS("c0", "d0", "a1", "b1")},
            /* indices [[[1, 0]], [[0, 1]]] */
            {3, SHAPE(2, 1, 2), VALS(1, 0, 0, 1), 2, SHAPE(2, 1), STRS("c0", "b1")},
            /* depth 0: every row takes all of params[b] */
            {3, SHAPE(2, 2, 0), VALS(0), 4, SHAPE(2, 2, 2, 2),
             STRS("a0", "b0", "c0", "d0", "a0", "b0", "c0", "d0", "a1", "b1", "c1", "d1", "a1",
                  "b1", "c1", "d1")},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            ndx_tensor indices = make_indices(index_dtypes[d], cases[c].irank, cases[c].ishape,
                                              cases[c].iv);
            ndx_tensor want = test_strings(2, cases[c].orank, cases[c].oshape, cases[c].ov);
            gather_is(&params, &indices, 1, &want);
            check_against_reference(&params, &indices, 1, NDX_BAD_INDICES_ERROR);
            test_tensor_free(&indices);
            test_tensor_free(&want);
        }
        /* batch_dims = 2 on a [2, 2, 2] params with indices [2, 2, 1]: element [b0, b1, i]. */
        ndx_tensor indices = make_indices(index_dtypes[d], 3, SHAPE(2, 2, 1), VALS(1, 0, 0, 1));
        ndx_tensor want = test_strings(2, 2, SHAPE(2, 2), STRS("b0", "c0", "a1", "d1"));
        gather_is(&params, &indices, 2, &want);
        test_tensor_free(&indices);
        test_tensor_free(&want);
        test_tensor_free(&params);
    }
}

/* ---- randomized comparison -------------------------------------------------------------- */

/* A random dimension, now and then zero. */
static int64_t random_dim(test_rng *r, int allow_zero) {
    if (allow_zero && rng_below(r, 12) == 0) return 0;
    return rng_range(r, 1, 4);
}

/* A random case: params of rank up to max_rank, indices with the given batch_dims. */
static void random_case(test_rng *r, int max_rank, ndx_tensor *params, ndx_tensor *indices,
                        int *batch_dims_out, int allow_zero) {
    int b = (int)rng_range(r, 0, 2);
    int prank = (int)rng_range(r, b > 0 ? b + 1 : 1, max_rank);
    if (prank <= b) prank = b + 1;
    int64_t pshape[NDX_MAX_RANK];
    int64_t total = 1;
    for (int k = 0; k < prank; k++) {
        pshape[k] = random_dim(r, allow_zero);
        if (total * (pshape[k] ? pshape[k] : 1) > 512) pshape[k] = 1;
        total *= pshape[k] ? pshape[k] : 1;
    }
    ndx_dtype dt = test_all_dtypes[rng_below(r, test_all_dtypes_count)];
    size_t width = (size_t)rng_range(r, 1, 5);
    *params = test_tensor(dt, width, prank, pshape);
    test_fill_random(r, params);

    int depth = (int)rng_range(r, 0, prank - b);
    int extra = (int)rng_range(r, 0, 3);
    int irank = b + extra + 1;
    int64_t ishape[NDX_MAX_RANK];
    for (int k = 0; k < b; k++) ishape[k] = pshape[k];
    for (int k = b; k < irank - 1; k++) ishape[k] = random_dim(r, allow_zero);
    ishape[irank - 1] = depth;
    *indices = test_tensor(index_dtypes[rng_below(r, 3)], 0, irank, ishape);
    int64_t rows = test_count(indices) / (depth ? depth : 1);
    for (int64_t row = 0; row < rows && depth; row++)
        for (int k = 0; k < depth; k++) {
            int64_t dim = pshape[b + k];
            test_set_index(indices, row * depth + k, dim ? rng_below(r, dim) : 0);
        }
    *batch_dims_out = b;
}

/* Index rows named by indices.shape[:-1] (1 for a rank-1 indices). */
static int64_t row_count(const ndx_tensor *indices) {
    int64_t n = 1;
    for (int k = 0; k < indices->rank - 1; k++) n *= indices->shape[k];
    return n;
}

static void random_against_reference(void **state) {
    (void)state;
    test_rng r = {20240601};
    for (int trial = 0; trial < 1500; trial++) {
        ndx_tensor params, indices;
        int b;
        random_case(&r, 8, &params, &indices, &b, 1);
        ndx_error err;
        if (row_count(&indices) > 0 && test_count(&params) == 0) {
            /* TensorFlow: "Requested more than 0 entries, but params is empty". */
            ndx_tensor want = expected_view(&params, &indices, b);
            test_guard g = test_guard_fill(&want, 0x5C);
            assert_fails(ndx_gather_nd(&params, &indices, b, NULL, &want, &err), &err,
                         NDX_E_INVALID_ARGUMENT, "params is empty");
            assert_untouched(&g, &want);
            test_tensor_free(&want);
        } else {
            check_against_reference(&params, &indices, b, NDX_BAD_INDICES_ERROR);
        }
        test_tensor_free(&params);
        test_tensor_free(&indices);
    }
}

/* Every dtype with every index dtype on one fixed geometry, slices and elements. */
static void every_dtype(void **state) {
    (void)state;
    test_rng r = {77};
    for (int d = 0; d < test_all_dtypes_count; d++) {
        for (size_t x = 0; x < 3; x++) {
            for (int depth = 0; depth <= 3; depth++) {
                ndx_tensor params = test_tensor(test_all_dtypes[d], 3, 3, SHAPE(3, 4, 5));
                test_fill_random(&r, &params);
                ndx_tensor indices = test_tensor(index_dtypes[x], 0, 3, SHAPE(2, 3, depth));
                for (int64_t i = 0; i < 6; i++)
                    for (int k = 0; k < depth; k++)
                        test_set_index(&indices, i * depth + k, rng_below(&r, params.shape[k]));
                check_against_reference(&params, &indices, 0, NDX_BAD_INDICES_ERROR);
                test_tensor_free(&params);
                test_tensor_free(&indices);
            }
        }
    }
}

/* Ranks up to 16 and index depths above TensorFlow's 7. */
static void deep_indices(void **state) {
    (void)state;
    test_rng r = {99};
    int64_t pshape[NDX_MAX_RANK];
    for (int prank = 8; prank <= NDX_MAX_RANK; prank += 4) {
        for (int k = 0; k < prank; k++) pshape[k] = k % 3 == 0 ? 2 : k % 3 == 1 ? 3 : 1;
        ndx_tensor params = test_tensor(NDX_INT32, 0, prank, pshape);
        for (int k = 0; k < test_count(&params); k++) ((int32_t *)params.data)[k] = k;
        for (int depth = 7; depth <= prank; depth++) {
            for (int b = 0; b <= 2; b++) {
                if (b + depth > prank) continue;
                int64_t ishape[4];
                for (int k = 0; k < b; k++) ishape[k] = pshape[k];
                ishape[b] = 3 + b;
                ishape[b + 1] = depth;
                ndx_tensor indices = test_tensor(index_dtypes[depth % 3], 0, b + 2, ishape);
                int64_t rows = test_count(&indices) / depth;
                for (int64_t row = 0; row < rows; row++)
                    for (int k = 0; k < depth; k++)
                        test_set_index(&indices, row * depth + k,
                                       rng_below(&r, pshape[b + k]));
                check_against_reference(&params, &indices, b, NDX_BAD_INDICES_ERROR);
                /* The last coordinate of row 1 past its dimension: an error, or zeros. */
                int64_t dim = pshape[b + depth - 1];
                test_set_index(&indices, depth + depth - 1, dim);
                ndx_tensor out = expected_view(&params, &indices, b);
                char needle[64];
                snprintf(needle, sizeof needle, ", %lld] is out of range for params",
                         (long long)dim);
                expect_failure(&params, &indices, b, NULL, &out, NDX_E_OUT_OF_RANGE, needle);
                check_against_reference(&params, &indices, b, NDX_BAD_INDICES_IGNORE);
                test_tensor_free(&out);
                test_tensor_free(&indices);
            }
        }
        test_tensor_free(&params);
    }
}

/* Zero-size tensors: no rows, empty params without rows, empty slices with rows. */
static void zero_sizes(void **state) {
    (void)state;
    ndx_error err;
    /* No index rows: the result is empty, even though params is empty too. */
    ndx_tensor empty_params = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(0, 3));
    ndx_tensor no_rows = test_tensor(NDX_INT32, 0, 2, SHAPE(0, 1));
    ndx_tensor got;
    memset(&got, 0, sizeof got);
    assert_ok(ndx_gather_nd(&empty_params, &no_rows, 0, NULL, &got, &err), &err);
    assert_int_equal(got.rank, 2);
    assert_int_equal(got.shape[0], 0);
    assert_int_equal(got.shape[1], 3);
    ndx_tensor_free(&got);
    /* A caller-provided empty output is left as it is. */
    ndx_tensor view = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(0, 3));
    assert_ok(ndx_gather_nd(&empty_params, &no_rows, 0, NULL, &view, &err), &err);
    test_tensor_free(&view);
    test_tensor_free(&no_rows);
    /* Rows present while params is empty: an error even under the ignore policy, even when
     * the slices themselves would be empty. */
    ndx_tensor zero_slices = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(3, 0));
    ndx_tensor one_row = make_indices(NDX_INT64, 2, SHAPE(1, 1), VALS(1));
    ndx_options ignore = test_options(1, NDX_BAD_INDICES_IGNORE);
    memset(&got, 0, sizeof got);
    assert_fails(ndx_gather_nd(&zero_slices, &one_row, 0, &ignore, &got, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "params is empty");
    assert_null(got.data);
    assert_fails(ndx_gather_nd_shape(&empty_params, &one_row, 0, &got, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "params is empty (shape [0, 3])");
    test_tensor_free(&zero_slices);
    test_tensor_free(&one_row);
    test_tensor_free(&empty_params);
    /* Depth 0 with no params elements but no rows either. */
    ndx_tensor p = test_tensor(NDX_INT8, 0, 1, SHAPE(0));
    ndx_tensor idx = test_tensor(NDX_INT16, 0, 3, SHAPE(2, 0, 0));
    memset(&got, 0, sizeof got);
    assert_ok(ndx_gather_nd(&p, &idx, 0, NULL, &got, &err), &err);
    assert_int_equal(got.rank, 3);
    ndx_tensor_free(&got);
    test_tensor_free(&p);
    test_tensor_free(&idx);
}

/* ---- the ignore policy ------------------------------------------------------------------ */

/* An out-of-range value for a coordinate of dimension dim, representable in dt. */
static int64_t bad_coordinate(test_rng *r, ndx_dtype dt, int64_t dim) {
    int64_t lo = dt == NDX_INT16 ? INT16_MIN : dt == NDX_INT32 ? INT32_MIN : INT64_MIN;
    int64_t hi = dt == NDX_INT16 ? INT16_MAX : dt == NDX_INT32 ? INT32_MAX : INT64_MAX;
    switch (rng_below(r, 5)) {
    case 0: return -1;
    case 1: return dim;
    case 2: return lo;
    case 3: return hi;
    default: return dim + rng_range(r, 0, 100);
    }
}

/* Position text of a row as indices[...] prints it: "" for rank-1 indices, else "[i, j]". */
static void row_position(const ndx_tensor *indices, int64_t row, char *buf, size_t cap) {
    int lead = indices->rank - 1;
    int64_t pos[NDX_MAX_RANK];
    for (int k = lead - 1; k >= 0; k--) {
        pos[k] = row % indices->shape[k];
        row /= indices->shape[k];
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < lead; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld%s", k ? ", " : "[",
                                (long long)pos[k], k == lead - 1 ? "]" : "");
}

static void ignore_policy_and_first_bad_row(void **state) {
    (void)state;
    test_rng r = {4242};
    for (int trial = 0; trial < 600; trial++) {
        ndx_tensor params, indices;
        int b;
        random_case(&r, 6, &params, &indices, &b, 0);
        int depth = (int)indices.shape[indices.rank - 1];
        int64_t rows = row_count(&indices);
        int64_t first_bad = -1;
        if (depth > 0) {
            for (int64_t row = 0; row < rows; row++) {
                if (rng_below(&r, 4) != 0) continue;
                int k = (int)rng_below(&r, depth);
                test_set_index(&indices, row * depth + k,
                               bad_coordinate(&r, indices.dtype, params.shape[b + k]));
                if (first_bad < 0) first_bad = row;
            }
        }
        check_against_reference(&params, &indices, b, NDX_BAD_INDICES_IGNORE);
        if (first_bad >= 0) {
            /* The default policy fails on the first bad row, naming it, and writes nothing. */
            ndx_tensor out = expected_view(&params, &indices, b);
            for (int t = 1; t <= TEST_THREADS; t++) {
                ndx_options opt = test_options(t, NDX_BAD_INDICES_ERROR);
                test_guard g = test_guard_fill(&out, 0x3C);
                ndx_error err;
                char pos[256], needle[300];
                row_position(&indices, first_bad, pos, sizeof pos);
                snprintf(needle, sizeof needle, "gather_nd: indices%s = [", pos);
                assert_fails(ndx_gather_nd(&params, &indices, b, &opt, &out, &err), &err,
                             NDX_E_OUT_OF_RANGE, needle);
                assert_untouched(&g, &out);
                ndx_tensor none;
                memset(&none, 0, sizeof none);
                assert_fails(ndx_gather_nd(&params, &indices, b, &opt, &none, &err), &err,
                             NDX_E_OUT_OF_RANGE, needle);
                assert_null(none.data);
            }
            test_tensor_free(&out);
        }
        test_tensor_free(&params);
        test_tensor_free(&indices);
    }
}

/* ---- errors ----------------------------------------------------------------------------- */

static void error_paths(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor params = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(4, 3));
    for (int i = 0; i < 12; i++) ((float *)params.data)[i] = (float)i;
    ndx_tensor out2 = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(2));
    ndx_tensor out1 = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(1));

    /* indices of rank 0 */
    ndx_tensor scalar = make_indices(NDX_INT32, 0, NULL, VALS(1));
    expect_failure(&params, &scalar, 0, NULL, &out1, NDX_E_INVALID_ARGUMENT, "indices is a scalar");
    test_tensor_free(&scalar);

    /* a coordinate out of range: positive, negative, and one whose flat offset would fit */
    ndx_tensor bad = make_indices(NDX_INT64, 2, SHAPE(2, 2), VALS(0, 0, 5, 2));
    expect_failure(&params, &bad, 0, NULL, &out2, NDX_E_OUT_OF_RANGE,
                   "gather_nd: indices[1] = [5, 2] is out of range for params of shape [4, 3]");
    test_tensor_free(&bad);
    bad = make_indices(NDX_INT16, 2, SHAPE(2, 2), VALS(-1, 0, 0, 0));
    expect_failure(&params, &bad, 0, NULL, &out2, NDX_E_OUT_OF_RANGE,
                   "indices[0] = [-1, 0] has a negative index");
    test_tensor_free(&bad);
    bad = make_indices(NDX_INT32, 2, SHAPE(2, 2), VALS(1, 1, 0, 5)); /* 0 * 3 + 5 < 12 */
    expect_failure(&params, &bad, 0, NULL, &out2, NDX_E_OUT_OF_RANGE, "indices[1] = [0, 5]");
    test_tensor_free(&bad);
    /* a rank-1 indices is one row and has no position */
    bad = make_indices(NDX_INT32, 1, SHAPE(2), VALS(4, 0));
    ndx_tensor scalar_out = test_tensor(NDX_FLOAT32, 0, 0, NULL);
    expect_failure(&params, &bad, 0, NULL, &scalar_out, NDX_E_OUT_OF_RANGE,
                   "gather_nd: indices = [4, 0] is out of range");
    test_tensor_free(&bad);
    test_tensor_free(&scalar_out);

    /* index depth larger than params.rank - batch_dims */
    ndx_tensor deep = make_indices(NDX_INT32, 2, SHAPE(1, 3), VALS(0, 0, 0));
    expect_failure(&params, &deep, 0, NULL, &out1, NDX_E_INVALID_ARGUMENT,
                   "index depth indices.shape[-1] = 3 is larger than rank(params) - batch_dims");
    test_tensor_free(&deep);

    /* a non-index dtype, a malformed tensor, NULL out, a bad policy */
    ndx_tensor fidx = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(1, 1));
    expect_failure(&params, &fidx, 0, NULL, &out1, NDX_E_INVALID_ARGUMENT,
                   "must be int16, int32 or int64, not float32");
    test_tensor_free(&fidx);
    ndx_tensor good = make_indices(NDX_INT32, 2, SHAPE(2, 1), VALS(1, 3));
    ndx_tensor broken = params;
    broken.shape[0] = -4;
    ndx_tensor out23 = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(2, 3));
    expect_failure(&broken, &good, 0, NULL, &out23, NDX_E_INVALID_ARGUMENT,
                   "gather_nd: params has a negative dimension");
    assert_fails(ndx_gather_nd(&params, &good, 0, NULL, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out is NULL");
    assert_fails(ndx_gather_nd_shape(&params, &good, 0, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out is NULL");
    ndx_options weird = test_options(1, (ndx_bad_indices)7);
    expect_failure(&params, &good, 0, &weird, &out23, NDX_E_INVALID_ARGUMENT,
                   "opt->bad_indices = 7");

    /* a caller-provided output of the wrong shape or type */
    ndx_tensor wrong = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(3, 2));
    expect_failure(&params, &good, 0, NULL, &wrong, NDX_E_INVALID_ARGUMENT,
                   "out is float32 [3, 2] but the result is float32 [2, 3]");
    test_tensor_free(&wrong);
    wrong = test_tensor(NDX_INT32, 0, 2, SHAPE(2, 3));
    expect_failure(&params, &good, 0, NULL, &wrong, NDX_E_INVALID_ARGUMENT,
                   "out is int32 [2, 3] but the result is float32 [2, 3]");
    test_tensor_free(&wrong);
    wrong = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(6));
    expect_failure(&params, &good, 0, NULL, &wrong, NDX_E_INVALID_ARGUMENT, "pass data = NULL");
    test_tensor_free(&wrong);

    /* out overlapping params */
    ndx_tensor alias = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), params.data);
    test_guard pg = test_guard_take(&params);
    assert_fails(ndx_gather_nd(&params, &good, 0, NULL, &alias, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "overlaps");
    assert_untouched(&pg, &params);

    /* the memory budget, when ndx allocates */
    ndx_options tight = test_options(1, NDX_BAD_INDICES_ERROR);
    tight.max_memory = 8;
    ndx_tensor none;
    memset(&none, 0, sizeof none);
    assert_fails(ndx_gather_nd(&params, &good, 0, &tight, &none, &err), &err,
                 NDX_E_MEMORY_BUDGET, "24 bytes");
    assert_null(none.data);
    tight.max_memory = 24;
    assert_ok(ndx_gather_nd(&params, &good, 0, &tight, &none, &err), &err);
    assert_true(((float *)none.data)[0] == 3.0f && ((float *)none.data)[5] == 11.0f);
    ndx_tensor_free(&none);
    test_tensor_free(&good);

    /* params a scalar: TensorFlow wants at least a vector */
    ndx_tensor sp = test_tensor(NDX_FLOAT32, 0, 0, NULL);
    ndx_tensor d0 = test_tensor(NDX_INT32, 0, 2, SHAPE(2, 0));
    expect_failure(&sp, &d0, 0, NULL, &out2, NDX_E_INVALID_ARGUMENT, "at least a vector");
    test_tensor_free(&sp);
    test_tensor_free(&d0);

    test_tensor_free(&out1);
    test_tensor_free(&out2);
    test_tensor_free(&out23);
    test_tensor_free(&params);
}

static void batch_dims_errors(void **state) {
    (void)state;
    ndx_tensor params = test_tensor(NDX_INT16, 0, 3, SHAPE(2, 4, 3));
    ndx_tensor out = test_tensor(NDX_INT16, 0, 2, SHAPE(2, 3));
    ndx_tensor idx = make_indices(NDX_INT32, 2, SHAPE(2, 1), VALS(1, 3));
    expect_failure(&params, &idx, -1, NULL, &out, NDX_E_INVALID_ARGUMENT,
                   "batch_dims = -1 is negative; TensorFlow requires 0 <= batch_dims");
    expect_failure(&params, &idx, 2, NULL, &out, NDX_E_INVALID_ARGUMENT,
                   "batch_dims = 2 must be less than rank(indices) = 2 and rank(params) = 3");
    ndx_tensor idx4 = make_indices(NDX_INT32, 4, SHAPE(2, 4, 3, 0), VALS(0));
    expect_failure(&params, &idx4, 3, NULL, &out, NDX_E_INVALID_ARGUMENT,
                   "batch_dims = 3 must be less than rank(indices) = 4 and rank(params) = 3");
    test_tensor_free(&idx4);
    /* mismatched batch dimensions */
    ndx_tensor idx3 = make_indices(NDX_INT64, 2, SHAPE(3, 1), VALS(0, 0, 0));
    expect_failure(&params, &idx3, 1, NULL, &out, NDX_E_INVALID_ARGUMENT,
                   "batch dimension 0 differs: params.shape[0] = 2 but indices.shape[0] = 3");
    test_tensor_free(&idx3);
    ndx_tensor idxb = make_indices(NDX_INT64, 3, SHAPE(2, 3, 1), VALS(0, 0, 0, 0, 0, 0));
    expect_failure(&params, &idxb, 2, NULL, &out, NDX_E_INVALID_ARGUMENT,
                   "batch dimension 1 differs: params.shape[1] = 4 but indices.shape[1] = 3");
    test_tensor_free(&idxb);
    /* depth too large once batch dimensions are taken */
    ndx_tensor deep = make_indices(NDX_INT16, 2, SHAPE(2, 3), VALS(0, 0, 0, 0, 0, 0));
    expect_failure(&params, &deep, 1, NULL, &out, NDX_E_INVALID_ARGUMENT,
                   "indices.shape[-1] = 3 is larger than rank(params) - batch_dims = 3 - 1 = 2");
    test_tensor_free(&deep);
    /* out of range in batch 1: the message names the params[b] block and its shape */
    ndx_tensor past = make_indices(NDX_INT32, 2, SHAPE(2, 1), VALS(3, 4));
    expect_failure(&params, &past, 1, NULL, &out, NDX_E_OUT_OF_RANGE,
                   "gather_nd: indices[1] = [4] is out of range for params[1] of shape [4, 3]");
    test_tensor_free(&past);
    ndx_tensor neg = make_indices(NDX_INT16, 3, SHAPE(2, 1, 1), VALS(0, -2));
    ndx_tensor out3 = test_tensor(NDX_INT16, 0, 3, SHAPE(2, 1, 3));
    expect_failure(&params, &neg, 1, NULL, &out3, NDX_E_OUT_OF_RANGE,
                   "indices[1, 0] = [-2] has a negative index, which is out of range for "
                   "params[1] of shape [4, 3]");
    test_tensor_free(&neg);
    test_tensor_free(&out3);
    test_tensor_free(&idx);
    test_tensor_free(&out);
    test_tensor_free(&params);
}

/* Results whose rank or size ndx cannot describe. */
static void oversized_results(void **state) {
    (void)state;
    ndx_error err;
    int64_t ones[NDX_MAX_RANK];
    for (int k = 0; k < NDX_MAX_RANK; k++) ones[k] = 1;
    ndx_tensor params = test_tensor(NDX_INT8, 0, NDX_MAX_RANK, ones);
    ones[NDX_MAX_RANK - 1] = 0;
    ndx_tensor idx = test_tensor(NDX_INT32, 0, NDX_MAX_RANK, ones);
    ndx_tensor out;
    assert_fails(ndx_gather_nd_shape(&params, &idx, 0, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "the result would have rank 15 + 16 = 31");
    test_tensor_free(&params);
    test_tensor_free(&idx);

    ndx_tensor p2 = test_tensor(NDX_FLOAT64, 0, 2, SHAPE(3, 4));
    /* [2^31, 2^31, 0] holds nothing, but names 2^62 rows of 12 elements each */
    ndx_tensor huge = ndx_tensor_make(NDX_INT64, 3, SHAPE((int64_t)1 << 31, (int64_t)1 << 31, 0),
                                      NULL);
    memset(&out, 0, sizeof out);
    assert_fails(ndx_gather_nd(&p2, &huge, 0, NULL, &out, &err), &err, NDX_E_OVERFLOW,
                 "the result of shape [2147483648, 2147483648, 3, 4] is too large to address");
    assert_null(out.data);
    test_tensor_free(&p2);
}

/* ---- threads, streaming and layout ------------------------------------------------------ */

/* Runs into a caller-provided output `shift` bytes past a 64-byte boundary and compares with
 * the reference. */
static void check_output_at(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                            const ndx_options *opt, size_t shift) {
    ndx_tensor want = expected_view(params, indices, batch_dims);
    reference_gather(params, indices, batch_dims, &want);
    void *mem = NULL;
    assert_int_equal(posix_memalign(&mem, 64, test_nbytes(&want) + shift), 0);
    memset(mem, 0xEE, test_nbytes(&want) + shift);
    ndx_tensor got =
        ndx_tensor_make(want.dtype, want.rank, want.shape, (unsigned char *)mem + shift);
    ndx_error err;
    assert_ok(ndx_gather_nd(params, indices, batch_dims, opt, &got, &err), &err);
    assert_tensor_eq(&got, &want);
    free(mem);
    test_tensor_free(&want);
}

static void check_aligned_output(const ndx_tensor *params, const ndx_tensor *indices,
                                 int batch_dims, const ndx_options *opt) {
    check_output_at(params, indices, batch_dims, opt, 0);
}

/* Large enough that several workers run and the output is written with streaming stores. */
static void large_gathers(void **state) {
    (void)state;
    test_rng r = {555};
    /* slices of 256 bytes into a 10 MB output */
    ndx_tensor params = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(4096, 64));
    test_fill_random(&r, &params);
    ndx_tensor indices = test_tensor(NDX_INT32, 0, 2, SHAPE(40000, 1));
    test_fill_indices(&r, &indices, 0, 4095);
    check_against_reference(&params, &indices, 0, NDX_BAD_INDICES_ERROR);
    for (int64_t i = 0; i < 40000; i += 997) test_set_index(&indices, i, -1 - i);
    check_against_reference(&params, &indices, 0, NDX_BAD_INDICES_IGNORE);

    /* a caller-provided output that is not 16-byte aligned takes the cached path */
    ndx_options opt = test_options(2, NDX_BAD_INDICES_IGNORE);
    check_output_at(&params, &indices, 0, &opt, 4);
    test_tensor_free(&indices);
    test_tensor_free(&params);

    /* Streaming stores of every width: 48-byte slices (16 bytes per store), then 64-byte slices
     * into outputs aligned to 64 bytes (the widest stores the CPU has) and to 16 only. */
    for (int64_t width = 12; width <= 16; width += 4) {
        ndx_tensor sp = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(4096, width));
        test_fill_random(&r, &sp);
        ndx_tensor si = test_tensor(NDX_INT64, 0, 2, SHAPE(180000, 1));
        test_fill_indices(&r, &si, 0, 4095);
        ndx_options two = test_options(2, NDX_BAD_INDICES_ERROR);
        for (size_t shift = 0; shift <= 16; shift += 16) check_output_at(&sp, &si, 0, &two, shift);
        test_tensor_free(&si);
        test_tensor_free(&sp);
    }

    /* elements (depth 2) and 16-byte elements, many rows */
    ndx_tensor c = test_tensor(NDX_COMPLEX128, 0, 2, SHAPE(300, 200));
    test_fill_random(&r, &c);
    ndx_tensor pairs = test_tensor(NDX_INT64, 0, 2, SHAPE(600000, 2));
    for (int64_t i = 0; i < 600000; i++) {
        test_set_index(&pairs, 2 * i, rng_below(&r, 300));
        test_set_index(&pairs, 2 * i + 1, rng_below(&r, 200));
    }
    check_against_reference(&c, &pairs, 0, NDX_BAD_INDICES_ERROR);
    test_tensor_free(&c);
    ndx_tensor f = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(300, 200));
    test_fill_random(&r, &f);
    check_against_reference(&f, &pairs, 0, NDX_BAD_INDICES_ERROR);

    /* the first bad row is reported whichever worker's range holds it */
    ndx_tensor out = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(600000));
    test_set_index(&pairs, 2 * 590000 + 1, 200);
    test_set_index(&pairs, 2 * 250000, 300);
    for (int t = 1; t <= TEST_THREADS; t++) {
        ndx_options o = test_options(t, NDX_BAD_INDICES_ERROR);
        expect_failure(&f, &pairs, 0, &o, &out, NDX_E_OUT_OF_RANGE,
                       "indices[250000] = [300, ");
    }
    test_set_index(&pairs, 2 * 7, -5);
    for (int t = 1; t <= TEST_THREADS; t++) {
        ndx_options o = test_options(t, NDX_BAD_INDICES_ERROR);
        expect_failure(&f, &pairs, 0, &o, &out, NDX_E_OUT_OF_RANGE, "indices[7] = [-5, ");
    }
    /* ignored, those rows give zeros; the prefetch ring carries them like any other row */
    check_against_reference(&f, &pairs, 0, NDX_BAD_INDICES_IGNORE);
    test_tensor_free(&out);
    test_tensor_free(&f);
    test_tensor_free(&pairs);

    /* batch_dims = 1 with many rows per batch, as in per-example lookups */
    ndx_tensor bp = test_tensor(NDX_INT16, 0, 3, SHAPE(8, 500, 16));
    test_fill_random(&r, &bp);
    ndx_tensor bi = test_tensor(NDX_INT16, 0, 3, SHAPE(8, 3000, 1));
    test_fill_indices(&r, &bi, 0, 499);
    check_against_reference(&bp, &bi, 1, NDX_BAD_INDICES_ERROR);
    test_tensor_free(&bp);
    test_tensor_free(&bi);
}

/* Large params, large outputs of whole cache lines: on CPUs where it pays, the rows are copied in
 * the order of their slices in params (test_gather_sorted.c runs that copy on every CPU). */
static void large_params_whole_lines(void **state) {
    (void)state;
    test_rng r = {8080};
    /* 64-byte slices from a 16 MiB params (every region of the sort used) into a 19 MB output,
     * 300000 rows */
    const int64_t slices = 262144;
    ndx_tensor params = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(slices, 16));
    test_fill_random(&r, &params);
    for (int64_t i = 0; i < slices * 16; i += 16) ((float *)params.data)[i] = (float)(i / 16);
    ndx_tensor indices = test_tensor(NDX_INT64, 0, 2, SHAPE(300000, 1));
    test_fill_indices(&r, &indices, 0, slices - 1);
    check_against_reference(&params, &indices, 0, NDX_BAD_INDICES_ERROR);
    for (int t = 1; t <= TEST_THREADS; t++) {
        ndx_options o = test_options(t, NDX_BAD_INDICES_ERROR);
        check_aligned_output(&params, &indices, 0, &o);
    }
    /* bad rows give zeros */
    for (int64_t i = 5; i < 300000; i += 1013) test_set_index(&indices, i, i % 2 ? -7 : slices);
    ndx_options ignore = test_options(2, NDX_BAD_INDICES_IGNORE);
    check_aligned_output(&params, &indices, 0, &ignore);
    check_against_reference(&params, &indices, 0, NDX_BAD_INDICES_IGNORE);
    /* a budget that holds the output but no scratch: the same bytes, another way */
    test_fill_indices(&r, &indices, 0, slices - 1);
    ndx_tensor want = expected_view(&params, &indices, 0);
    reference_gather(&params, &indices, 0, &want);
    ndx_options tight = test_options(2, NDX_BAD_INDICES_ERROR);
    tight.max_memory = test_nbytes(&want);
    ndx_tensor got;
    memset(&got, 0, sizeof got);
    ndx_error err;
    assert_ok(ndx_gather_nd(&params, &indices, 0, &tight, &got, &err), &err);
    assert_tensor_eq(&got, &want);
    ndx_tensor_free(&got);
    test_tensor_free(&want);
    test_tensor_free(&indices);
    test_tensor_free(&params);

    /* batch_dims = 1, 256-byte slices, 10 MB params and output */
    ndx_tensor bp = test_tensor(NDX_INT32, 0, 3, SHAPE(4, 10000, 64));
    for (int64_t i = 0; i < 4 * 10000 * 64; i++) ((int32_t *)bp.data)[i] = (int32_t)i;
    ndx_tensor bi = test_tensor(NDX_INT32, 0, 3, SHAPE(4, 10000, 1));
    test_fill_indices(&r, &bi, 0, 9999);
    check_against_reference(&bp, &bi, 1, NDX_BAD_INDICES_ERROR);
    ndx_options two = test_options(2, NDX_BAD_INDICES_ERROR);
    check_aligned_output(&bp, &bi, 1, &two);
    test_tensor_free(&bp);
    test_tensor_free(&bi);
}

/* A few rows of slices of several MiB: copied in pieces so that every thread has work. */
static void few_huge_slices(void **state) {
    (void)state;
    test_rng r = {31337};
    /* depth 1, three rows of 2.4 MB slices, one of them out of range under the ignore policy */
    ndx_tensor params = test_tensor(NDX_INT32, 0, 2, SHAPE(3, 600000));
    test_fill_random(&r, &params);
    ndx_tensor indices = make_indices(NDX_INT16, 2, SHAPE(3, 1), VALS(2, 0, 2));
    check_against_reference(&params, &indices, 0, NDX_BAD_INDICES_ERROR);
    test_set_index(&indices, 1, 3);
    check_against_reference(&params, &indices, 0, NDX_BAD_INDICES_IGNORE);
    test_tensor_free(&indices);
    /* depth 0: every row copies all of params */
    ndx_tensor none = test_tensor(NDX_INT64, 0, 2, SHAPE(2, 0));
    check_against_reference(&params, &none, 0, NDX_BAD_INDICES_ERROR);
    test_tensor_free(&none);
    test_tensor_free(&params);
    /* depth 0 with batch_dims = 1: every row copies its params[b] */
    ndx_tensor bp = test_tensor(NDX_FLOAT16, 0, 3, SHAPE(2, 3, 400000));
    test_fill_random(&r, &bp);
    ndx_tensor bi = test_tensor(NDX_INT32, 0, 3, SHAPE(2, 2, 0));
    check_against_reference(&bp, &bi, 1, NDX_BAD_INDICES_ERROR);
    test_tensor_free(&bi);
    test_tensor_free(&bp);
}

/* The shape function fills the view and never needs data. */
static void shape_function(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor params = ndx_tensor_string(7, 3, SHAPE(5, 6, 2), (void *)&err);
    ndx_tensor indices = ndx_tensor_make(NDX_INT16, 3, SHAPE(4, 3, 1), (void *)&err);
    ndx_tensor out;
    memset(&out, 0x11, sizeof out);
    assert_ok(ndx_gather_nd_shape(&params, &indices, 0, &out, &err), &err);
    assert_int_equal(out.dtype, NDX_STRING);
    assert_int_equal(out.itemsize, 7);
    assert_int_equal(out.rank, 4);
    assert_int_equal(out.shape[0], 4);
    assert_int_equal(out.shape[1], 3);
    assert_int_equal(out.shape[2], 6);
    assert_int_equal(out.shape[3], 2);
    assert_null(out.data);
    assert_int_equal(err.code, NDX_OK);
    indices.shape[0] = 5;
    indices.shape[2] = 2;
    assert_ok(ndx_gather_nd_shape(&params, &indices, 1, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], 5);
    assert_int_equal(out.shape[1], 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(documented_string_examples),
        cmocka_unit_test(documented_arange_examples),
        cmocka_unit_test(batch_dims_examples),
        cmocka_unit_test(random_against_reference),
        cmocka_unit_test(every_dtype),
        cmocka_unit_test(deep_indices),
        cmocka_unit_test(zero_sizes),
        cmocka_unit_test(ignore_policy_and_first_bad_row),
        cmocka_unit_test(error_paths),
        cmocka_unit_test(batch_dims_errors),
        cmocka_unit_test(oversized_results),
        cmocka_unit_test(large_gathers),
        cmocka_unit_test(large_params_whole_lines),
        cmocka_unit_test(few_huge_slices),
        cmocka_unit_test(shape_function),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
