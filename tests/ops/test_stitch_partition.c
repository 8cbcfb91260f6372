/* test_stitch_partition.c — dynamic_stitch, parallel_dynamic_stitch and dynamic_partition:
 * the examples of TensorFlow's documentation (tf.dynamic_stitch), randomized comparisons with
 * the shared naive reference (tests/reference/), partition -> stitch round trips, thread-count
 * independence and every error path (each leaving its outputs untouched). */
#include "ndx_test.h"
#include "reference.h"

#include <stdio.h>

static const ndx_dtype index_dtypes[3] = {NDX_INT16, NDX_INT32, NDX_INT64};

typedef ndx_status (*stitch_fn)(int, const ndx_tensor *, const ndx_tensor *, const ndx_options *,
                                ndx_tensor *, ndx_error *);
static const stitch_fn stitchers[2] = {ndx_dynamic_stitch, ndx_parallel_dynamic_stitch};

/* ---- the reference ------------------------------------------------------------------------ */

/* merged[indices[m][i]] = data[m][i] in (m, i) order over zeros: the shared naive reference. */
static ndx_tensor naive_stitch(int n, const ndx_tensor *ix, const ndx_tensor *d) {
    ndx_tensor out = {0};
    char why[REF_WHY];
    ref_verdict v = ref_dynamic_stitch(n, ix, d, &out, why);
    if (v != REF_OK) fail_msg("the reference refuses this stitch: %s", why);
    return out;
}

/* outs[p] = the rows of data whose id is p, in order: the shared naive reference. */
static void naive_partition(const ndx_tensor *data, const ndx_tensor *ids, int np,
                            ndx_tensor *outs) {
    char why[REF_WHY];
    memset(outs, 0, (size_t)np * sizeof *outs);
    ref_verdict v = ref_dynamic_partition(data, ids, np, outs, why);
    if (v != REF_OK) fail_msg("the reference refuses this partition: %s", why);
}

/* ---- helpers ------------------------------------------------------------------------------- */

static ndx_tensor index_tensor(ndx_dtype dt, int rank, const int64_t *shape,
                               const int64_t *values) {
    ndx_tensor t = test_tensor(dt, 0, rank, shape);
    for (int64_t i = 0; i < test_count(&t); i++) test_set_index(&t, i, values[i]);
    return t;
}

static void free_all(ndx_tensor *t, int n) {
    for (int i = 0; i < n; i++) test_tensor_free(&t[i]);
}

/* Stitches with both ops, threads 1..3, into allocated and caller-given outputs, and compares
 * every result with `want`; also checks the shape function. */
static void check_stitch(int n, const ndx_tensor *ix, const ndx_tensor *d, const ndx_tensor *want) {
    ndx_error err;
    ndx_tensor shape_out;
    assert_ok(ndx_dynamic_stitch_shape(n, ix, d, &shape_out, &err), &err);
    assert_null(shape_out.data);
    assert_int_equal(shape_out.rank, want->rank);
    for (int k = 0; k < want->rank; k++) assert_int_equal(shape_out.shape[k], want->shape[k]);
    assert_int_equal(shape_out.dtype, want->dtype);
    assert_int_equal(shape_out.itemsize, want->itemsize);
    for (int f = 0; f < 2; f++) {
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_tensor out = shape_out;
            assert_ok(stitchers[f](n, ix, d, &opt, &out, &err), &err);
            assert_tensor_eq(&out, want);
            ndx_tensor_free(&out);
            ndx_tensor given = test_tensor(want->dtype, want->itemsize, want->rank, want->shape);
            memset(given.data, 0xa5, test_nbytes(&given)); /* unnamed rows must become zero */
            assert_ok(stitchers[f](n, ix, d, &opt, &given, &err), &err);
            assert_tensor_eq(&given, want);
            test_tensor_free(&given);
        }
    }
}

/* Partitions with threads 1..3, into allocated and caller-given outputs, and compares with the
 * naive reference; also checks the shape function. */
static void check_partition(const ndx_tensor *data, const ndx_tensor *ids, int np) {
    ndx_tensor *want = calloc((size_t)np, sizeof *want);
    ndx_tensor *got = calloc((size_t)np, sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    naive_partition(data, ids, np, want);
    ndx_error err;
    assert_ok(ndx_dynamic_partition_shape(data, ids, np, got, &err), &err);
    for (int p = 0; p < np; p++) {
        assert_null(got[p].data);
        assert_int_equal(got[p].rank, want[p].rank);
        for (int k = 0; k < want[p].rank; k++) assert_int_equal(got[p].shape[k], want[p].shape[k]);
    }
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        for (int p = 0; p < np; p++) got[p].data = NULL;
        assert_ok(ndx_dynamic_partition(data, ids, np, &opt, got, &err), &err);
        for (int p = 0; p < np; p++) {
            assert_tensor_eq(&got[p], &want[p]);
            ndx_tensor_free(&got[p]);
        }
        /* Caller-given outputs, and a mix with allocated ones. */
        for (int p = 0; p < np; p++) {
            if ((p + threads) % 3 == 0) {
                got[p].data = NULL;
            } else {
                got[p] = test_tensor(want[p].dtype, want[p].itemsize, want[p].rank, want[p].shape);
                memset(got[p].data, 0x5a, test_nbytes(&got[p]));
            }
        }
        assert_ok(ndx_dynamic_partition(data, ids, np, &opt, got, &err), &err);
        for (int p = 0; p < np; p++) {
            assert_tensor_eq(&got[p], &want[p]);
            free(got[p].data); /* both kinds were malloc'd */
            got[p].data = NULL;
        }
    }
    free_all(want, np);
    free(want);
    free(got);
}

/* ---- TensorFlow's examples (tf.dynamic_stitch documentation) ------------------------------- */

/* tf.dynamic_stitch's example: indices 6, [4, 1], [[5, 2], [0, 3]] with data rows [10 k + 1, 10 k + 2]. */
static void documented_stitch_example(void **state) {
    (void)state;
    const ndx_dtype value_types[2] = {NDX_FLOAT32, NDX_INT32};
    for (int vt = 0; vt < 2; vt++) {
        for (int it = 0; it < 3; it++) {
            ndx_tensor ix[3], d[3];
            ix[0] = index_tensor(index_dtypes[it], 0, NULL, (int64_t[]){6});
            ix[1] = index_tensor(index_dtypes[it], 1, (int64_t[]){2}, (int64_t[]){4, 1});
            ix[2] = index_tensor(index_dtypes[it], 2, (int64_t[]){2, 2}, (int64_t[]){5, 2, 0, 3});
            const double v0[] = {61, 62}, v1[] = {41, 42, 11, 12},
                         v2[] = {51, 52, 21, 22, 1, 2, 31, 32};
            const double *vals[3] = {v0, v1, v2};
            const int64_t shapes[3][3] = {{2}, {2, 2}, {2, 2, 2}};
            for (int m = 0; m < 3; m++) {
                d[m] = test_tensor(value_types[vt], 0, m + 1, shapes[m]);
                for (int64_t i = 0; i < test_count(&d[m]); i++) {
                    if (value_types[vt] == NDX_FLOAT32)
                        ((float *)d[m].data)[i] = (float)vals[m][i];
                    else
                        ((int32_t *)d[m].data)[i] = (int32_t)vals[m][i];
                }
            }
            ndx_tensor want = test_tensor(value_types[vt], 0, 2, (int64_t[]){7, 2});
            const double merged[14] = {1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62};
            for (int i = 0; i < 14; i++) {
                if (value_types[vt] == NDX_FLOAT32)
                    ((float *)want.data)[i] = (float)merged[i];
                else
                    ((int32_t *)want.data)[i] = (int32_t)merged[i];
            }
            check_stitch(3, ix, d, &want);
            test_tensor_free(&want);
            free_all(ix, 3);
            free_all(d, 3);
        }
    }
}

/* tf.dynamic_stitch's replace -1 entries program: partition x by (x != -1), add 1 to partition
 * 1, stitch back with the partitioned positions. */
static void replace_minus_one_program(void **state) {
    (void)state;
    const float x[6] = {0.1f, -1.f, 5.2f, 4.3f, -1.f, 7.4f};
    const float expect[6] = {1.1f, -1.f, 6.2f, 5.3f, -1.f, 8.4f};
    for (int it = 0; it < 3; it++) {
        ndx_tensor xt = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){6}, x);
        int64_t mask[6], range[6];
        for (int i = 0; i < 6; i++) {
            mask[i] = x[i] != -1.f;
            range[i] = i;
        }
        ndx_tensor cond = index_tensor(index_dtypes[it], 1, (int64_t[]){6}, mask);
        ndx_tensor rng = index_tensor(index_dtypes[it], 1, (int64_t[]){6}, range);
        ndx_error err;
        ndx_tensor parts[2] = {{0}, {0}}, where[2] = {{0}, {0}};
        assert_ok(ndx_dynamic_partition(&xt, &cond, 2, NULL, parts, &err), &err);
        assert_ok(ndx_dynamic_partition(&rng, &cond, 2, NULL, where, &err), &err);
        assert_int_equal(parts[0].shape[0], 2);
        assert_int_equal(parts[1].shape[0], 4);
        for (int64_t i = 0; i < parts[1].shape[0]; i++) ((float *)parts[1].data)[i] += 1.0f;
        ndx_tensor merged = {0};
        assert_ok(ndx_dynamic_stitch(2, where, parts, NULL, &merged, &err), &err);
        ndx_tensor want = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){6}, expect);
        assert_tensor_eq(&merged, &want);
        ndx_tensor_free(&merged);
        test_tensor_free(&want);
        for (int p = 0; p < 2; p++) {
            ndx_tensor_free(&parts[p]);
            ndx_tensor_free(&where[p]);
        }
        test_tensor_free(&xt);
        test_tensor_free(&cond);
        test_tensor_free(&rng);
    }
}

/* TensorFlow's dynamic_partition documentation examples. */
static void partition_doc_examples(void **state) {
    (void)state;
    ndx_error err;
    /* partitions = [0, 0, 1, 1, 0], data = [10, 20, 30, 40, 50] -> [10, 20, 50], [30, 40] */
    ndx_tensor ids = index_tensor(NDX_INT32, 1, (int64_t[]){5}, (int64_t[]){0, 0, 1, 1, 0});
    ndx_tensor data = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){5},
                                       (int32_t[]){10, 20, 30, 40, 50});
    ndx_tensor outs[2] = {{0}, {0}};
    assert_ok(ndx_dynamic_partition(&data, &ids, 2, NULL, outs, &err), &err);
    ndx_tensor w0 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){10, 20, 50});
    ndx_tensor w1 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){30, 40});
    assert_tensor_eq(&outs[0], &w0);
    assert_tensor_eq(&outs[1], &w1);
    free_all(outs, 2);
    test_tensor_free(&w0);
    test_tensor_free(&w1);
    test_tensor_free(&ids);
    test_tensor_free(&data);
    /* partitions = 1, data = [10, 20] -> outputs[0] = [] of shape [0, 2], outputs[1] =
     * [[10, 20]]. */
    ids = index_tensor(NDX_INT32, 0, NULL, (int64_t[]){1});
    data = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){10, 20});
    assert_ok(ndx_dynamic_partition(&data, &ids, 2, NULL, outs, &err), &err);
    w0 = test_tensor(NDX_INT32, 0, 2, (int64_t[]){0, 2});
    w1 = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){1, 2}, (int32_t[]){10, 20});
    assert_tensor_eq(&outs[0], &w0);
    assert_null(outs[0].data);
    assert_tensor_eq(&outs[1], &w1);
    free_all(outs, 2);
    test_tensor_free(&w0);
    test_tensor_free(&w1);
    test_tensor_free(&ids);
    test_tensor_free(&data);
}

/* A scalar partition id routes the whole tensor as one row: outs[p].shape = [1] + data.shape
 * for the chosen p and [0] + data.shape for the others (TensorFlow's kernel). */
static void partition_scalar_ids(void **state) {
    (void)state;
    ndx_error err;
    for (int it = 0; it < 3; it++) {
        ndx_tensor ids = index_tensor(index_dtypes[it], 0, NULL, (int64_t[]){2});
        ndx_tensor data = test_tensor_from(NDX_INT16, 0, 2, (int64_t[]){2, 3},
                                           (int16_t[]){1, 2, 3, 4, 5, 6});
        ndx_tensor outs[3] = {{0}, {0}, {0}};
        assert_ok(ndx_dynamic_partition(&data, &ids, 3, NULL, outs, &err), &err);
        for (int p = 0; p < 3; p++) {
            assert_int_equal(outs[p].rank, 3);
            assert_int_equal(outs[p].shape[0], p == 2);
            assert_int_equal(outs[p].shape[1], 2);
            assert_int_equal(outs[p].shape[2], 3);
        }
        assert_memory_equal(outs[2].data, data.data, 12);
        free_all(outs, 3);
        check_partition(&data, &ids, 3);
        /* A scalar data with a scalar id. */
        ndx_tensor one = test_tensor_from(NDX_FLOAT32, 0, 0, NULL, (float[]){2.5f});
        check_partition(&one, &ids, 4);
        test_tensor_free(&one);
        test_tensor_free(&ids);
        test_tensor_free(&data);
    }
}

/* ---- randomized comparisons ----------------------------------------------------------------- */

/* Random shape of `rank` dims in [lo, hi]. */
static void random_dims(test_rng *r, int rank, int64_t lo, int64_t hi, int64_t *dims) {
    for (int k = 0; k < rank; k++) dims[k] = rng_range(r, lo, hi);
}

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts the index values of t ascending (so the merge path runs). */
static void sort_indices(ndx_tensor *t) {
    int64_t n = test_count(t);
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++) v[i] = test_get_index(t, i);
    qsort(v, (size_t)n, sizeof *v, compare_i64);
    for (int64_t i = 0; i < n; i++) test_set_index(t, i, v[i]);
    free(v);
}

static void random_stitch_case(test_rng *r, ndx_dtype dt, int n, int irank_max, int crank,
                               int64_t dim_hi, int64_t max_index, int sorted) {
    size_t width = test_random_width(r, dt);
    int64_t cdims[NDX_MAX_RANK];
    random_dims(r, crank, 0, 3, cdims);
    if (rng_below(r, 4)) /* mostly non-empty rows */
        for (int k = 0; k < crank; k++) cdims[k] = cdims[k] ? cdims[k] : 1;
    ndx_tensor ix[8], d[8];
    for (int m = 0; m < n; m++) {
        int irank = (int)rng_range(r, 0, irank_max);
        int64_t dims[NDX_MAX_RANK];
        random_dims(r, irank, 0, dim_hi, dims);
        if (rng_below(r, 5) == 0 && irank > 0) dims[0] = 0; /* an empty part */
        ndx_dtype idt = index_dtypes[rng_below(r, 3)];
        ix[m] = test_tensor(idt, 0, irank, dims);
        test_fill_indices(r, &ix[m], 0, max_index);
        if (sorted) sort_indices(&ix[m]);
        for (int k = 0; k < crank; k++) dims[irank + k] = cdims[k];
        d[m] = test_tensor(dt, width, irank + crank, dims);
        test_fill_random(r, &d[m]);
    }
    ndx_tensor want = naive_stitch(n, ix, d);
    check_stitch(n, ix, d, &want);
    test_tensor_free(&want);
    free_all(ix, n);
    free_all(d, n);
}

static void stitch_random_small(void **state) {
    (void)state;
    test_rng r = {1};
    for (int t = 0; t < test_all_dtypes_count; t++) {
        for (int rep = 0; rep < 12; rep++) {
            int n = (int)rng_range(&r, 1, 4);
            int crank = (int)rng_range(&r, 0, 3);
            random_stitch_case(&r, test_all_dtypes[t], n, 3, crank, 3, rng_range(&r, 0, 12),
                               rep % 3 == 0);
        }
    }
}

/* Enough rows that several workers split the output, sorted (merge path) and not. */
static void stitch_random_large(void **state) {
    (void)state;
    test_rng r = {2};
    const ndx_dtype types[4] = {NDX_FLOAT32, NDX_INT8, NDX_COMPLEX128, NDX_STRING};
    for (int t = 0; t < 4; t++) {
        for (int sorted = 0; sorted < 2; sorted++) {
            ndx_dtype dt = types[t];
            size_t width = test_random_width(&r, dt);
            int n = (int)rng_range(&r, 1, 5);
            int64_t row_elems = dt == NDX_INT8 ? 1 : 4;
            ndx_tensor ix[5], d[5];
            for (int m = 0; m < n; m++) {
                int64_t count = rng_range(&r, 20000, 60000);
                ndx_dtype idt = index_dtypes[1 + rng_below(&r, 2)];
                ix[m] = test_tensor(idt, 0, 1, &count);
                test_fill_indices(&r, &ix[m], 0, 150000);
                if (sorted) sort_indices(&ix[m]);
                d[m] = test_tensor(dt, width, 2, (int64_t[]){count, row_elems});
                test_fill_random(&r, &d[m]);
            }
            ndx_tensor want = naive_stitch(n, ix, d);
            check_stitch(n, ix, d, &want);
            test_tensor_free(&want);
            free_all(ix, n);
            free_all(d, n);
        }
    }
}

/* Outputs over 8 MiB with 16-byte-multiple rows take the streaming-store path; also an output
 * whose rows start at an address that is not 16-aligned. */
static void stitch_large_output(void **state) {
    (void)state;
    test_rng r = {3};
    for (int sorted = 0; sorted < 2; sorted++) {
        int64_t count = 200000;
        ndx_tensor ix[2], d[2];
        for (int m = 0; m < 2; m++) {
            ix[m] = test_tensor(NDX_INT32, 0, 1, &count);
            test_fill_indices(&r, &ix[m], 0, 300000);
            if (sorted) {
                for (int64_t i = 0; i < count; i++) test_set_index(&ix[m], i, i * 3 / 2 + m);
            }
            d[m] = test_tensor(NDX_FLOAT64, 0, 2, (int64_t[]){count, 4});
            test_fill_random(&r, &d[m]);
        }
        ndx_tensor want = naive_stitch(2, ix, d);
        check_stitch(2, ix, d, &want);
        /* An output view 8 bytes past a malloc'd block. */
        unsigned char *block = malloc(test_nbytes(&want) + 8);
        assert_non_null(block);
        ndx_tensor out = want;
        out.data = block + 8;
        ndx_options opt = test_options(2, NDX_BAD_INDICES_ERROR);
        ndx_error err;
        assert_ok(ndx_dynamic_stitch(2, ix, d, &opt, &out, &err), &err);
        assert_memory_equal(out.data, want.data, test_nbytes(&want));
        free(block);
        test_tensor_free(&want);
        free_all(ix, 2);
        free_all(d, 2);
    }
}

/* A part sorted on each side of the point where two scanning workers split it, but not across
 * it: it must not be taken for sorted. */
static void stitch_unsorted_at_worker_split(void **state) {
    (void)state;
    test_rng r = {10};
    int64_t count = 140000; /* two scan workers split it at 70000 */
    ndx_tensor ix = test_tensor(NDX_INT32, 0, 1, &count);
    for (int64_t i = 0; i < count; i++) test_set_index(&ix, i, (i + count / 2) % count);
    ndx_tensor d = test_tensor(NDX_INT16, 0, 1, &count);
    test_fill_random(&r, &d);
    ndx_tensor want = naive_stitch(1, &ix, &d);
    check_stitch(1, &ix, &d, &want);
    test_tensor_free(&want);
    test_tensor_free(&ix);
    test_tensor_free(&d);
}

/* Index rank 4 with a trailing rank 4 (data rank 8), and scalar indices with data rank 15. */
static void stitch_high_rank(void **state) {
    (void)state;
    test_rng r = {4};
    ndx_tensor ix[2], d[2];
    for (int m = 0; m < 2; m++) {
        int64_t dims[8] = {2, 1, 2, 2, 2, 1, 2, 3};
        ix[m] = test_tensor(NDX_INT64, 0, 4, dims);
        test_fill_indices(&r, &ix[m], 0, 9);
        d[m] = test_tensor(NDX_UINT16, 0, 8, dims);
        test_fill_random(&r, &d[m]);
    }
    ndx_tensor want = naive_stitch(2, ix, d);
    assert_int_equal(want.rank, 5);
    check_stitch(2, ix, d, &want);
    test_tensor_free(&want);
    free_all(ix, 2);
    free_all(d, 2);

    int64_t dims15[15];
    for (int k = 0; k < 15; k++) dims15[k] = 1 + (k % 3 == 0);
    ix[0] = index_tensor(NDX_INT16, 0, NULL, (int64_t[]){3});
    d[0] = test_tensor(NDX_INT8, 0, 15, dims15);
    test_fill_random(&r, &d[0]);
    want = naive_stitch(1, ix, d);
    assert_int_equal(want.rank, NDX_MAX_RANK);
    check_stitch(1, ix, d, &want);
    test_tensor_free(&want);
    test_tensor_free(&ix[0]);
    test_tensor_free(&d[0]);
}

/* Every indices[m] empty: 0 rows, trailing shape kept. Zero-size trailing dims with many rows. */
static void stitch_zero_size(void **state) {
    (void)state;
    ndx_error err;
    for (int it = 0; it < 3; it++) {
        ndx_tensor ix[2], d[2];
        ix[0] = test_tensor(index_dtypes[it], 0, 1, (int64_t[]){0});
        ix[1] = test_tensor(index_dtypes[it], 0, 2, (int64_t[]){2, 0});
        d[0] = test_tensor(NDX_STRING, 3, 3, (int64_t[]){0, 4, 5});
        d[1] = test_tensor(NDX_STRING, 3, 4, (int64_t[]){2, 0, 4, 5});
        ndx_tensor out = {0};
        assert_ok(ndx_dynamic_stitch(2, ix, d, NULL, &out, &err), &err);
        assert_int_equal(out.rank, 3);
        assert_int_equal(out.shape[0], 0);
        assert_int_equal(out.shape[1], 4);
        assert_int_equal(out.shape[2], 5);
        assert_int_equal(out.itemsize, 3);
        assert_null(out.data);
        free_all(ix, 2);
        free_all(d, 2);
        /* Rows of zero bytes: a huge index costs nothing. */
        ix[0] = index_tensor(index_dtypes[it], 1, (int64_t[]){2}, (int64_t[]){30000, 7});
        d[0] = test_tensor(NDX_FLOAT32, 0, 3, (int64_t[]){2, 3, 0});
        ndx_options opt = test_options(2, NDX_BAD_INDICES_ERROR);
        opt.max_memory = 64;
        out.data = NULL;
        assert_ok(ndx_dynamic_stitch(1, ix, d, &opt, &out, &err), &err);
        assert_int_equal(out.shape[0], 30001);
        assert_int_equal(out.shape[1], 3);
        assert_int_equal(out.shape[2], 0);
        ndx_tensor want = naive_stitch(1, ix, d);
        check_stitch(1, ix, d, &want);
        test_tensor_free(&want);
        test_tensor_free(&ix[0]);
        test_tensor_free(&d[0]);
    }
}

/* No rows, and trailing dims whose product alone would overflow: a valid empty result. */
static void zero_rows_huge_trailing_dims(void **state) {
    (void)state;
    const int64_t big = (int64_t)1 << 40;
    ndx_error err;
    ndx_tensor ix = test_tensor(NDX_INT32, 0, 1, (int64_t[]){0});
    ndx_tensor d = ndx_tensor_make(NDX_FLOAT64, 3, (int64_t[]){0, big, big}, NULL);
    ndx_tensor out = {0};
    assert_ok(ndx_dynamic_stitch(1, &ix, &d, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 3);
    assert_int_equal(out.shape[0], 0);
    assert_int_equal(out.shape[1], big);
    assert_int_equal(out.shape[2], big);
    assert_null(out.data);
    ndx_tensor outs[2] = {{0}, {0}};
    for (int threads = 1; threads <= 2; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        assert_ok(ndx_dynamic_partition(&d, &ix, 2, &opt, outs, &err), &err);
        for (int p = 0; p < 2; p++) {
            assert_int_equal(outs[p].rank, 3);
            assert_int_equal(outs[p].shape[0], 0);
            assert_int_equal(outs[p].shape[2], big);
            assert_null(outs[p].data);
        }
    }
    test_tensor_free(&ix);
}

/* Duplicates across and within parts: the later (m, i) wins; unnamed rows are zero. */
static void stitch_duplicates_last_wins(void **state) {
    (void)state;
    ndx_tensor ix[3], d[3];
    ix[0] = index_tensor(NDX_INT32, 1, (int64_t[]){3}, (int64_t[]){1, 4, 1});
    ix[1] = index_tensor(NDX_INT16, 1, (int64_t[]){2}, (int64_t[]){4, 6});
    ix[2] = index_tensor(NDX_INT64, 1, (int64_t[]){2}, (int64_t[]){6, 6});
    d[0] = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){3}, (int64_t[]){10, 11, 12});
    d[1] = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){2}, (int64_t[]){20, 21});
    d[2] = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){2}, (int64_t[]){30, 31});
    ndx_tensor want = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){7},
                                       (int64_t[]){0, 12, 0, 0, 20, 0, 31});
    check_stitch(3, ix, d, &want);
    test_tensor_free(&want);
    free_all(ix, 3);
    free_all(d, 3);
}

static void random_partition_case(test_rng *r, ndx_dtype dt, int prank, int crank, int np,
                                  int64_t dim_hi) {
    size_t width = test_random_width(r, dt);
    int64_t dims[NDX_MAX_RANK];
    random_dims(r, prank + crank, 0, dim_hi, dims);
    if (rng_below(r, 4))
        for (int k = 0; k < prank + crank; k++) dims[k] = dims[k] ? dims[k] : 1;
    ndx_tensor data = test_tensor(dt, width, prank + crank, dims);
    test_fill_random(r, &data);
    ndx_tensor ids = test_tensor(index_dtypes[rng_below(r, 3)], 0, prank, dims);
    /* Sometimes leave the top partitions empty. */
    test_fill_indices(r, &ids, 0, rng_below(r, 3) ? np - 1 : (np - 1) / 2);
    check_partition(&data, &ids, np);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

static void partition_random_small(void **state) {
    (void)state;
    test_rng r = {5};
    for (int t = 0; t < test_all_dtypes_count; t++) {
        for (int rep = 0; rep < 12; rep++) {
            int prank = (int)rng_range(&r, 0, 3), crank = (int)rng_range(&r, 0, 3);
            random_partition_case(&r, test_all_dtypes[t], prank, crank,
                                  (int)rng_range(&r, 1, 6), 4);
        }
    }
}

static void partition_random_large(void **state) {
    (void)state;
    test_rng r = {6};
    const ndx_dtype types[4] = {NDX_FLOAT32, NDX_UINT8, NDX_BFLOAT16, NDX_STRING};
    for (int t = 0; t < 4; t++) {
        int64_t rows = rng_range(&r, 100000, 200000);
        int64_t row_elems = rng_range(&r, 1, 5);
        ndx_tensor data = test_tensor(types[t], test_random_width(&r, types[t]), 2,
                                      (int64_t[]){rows, row_elems});
        test_fill_random(&r, &data);
        ndx_tensor ids = test_tensor(index_dtypes[t % 3], 0, 1, &rows);
        int np = (int)rng_range(&r, 1, 9);
        test_fill_indices(&r, &ids, 0, np - 1);
        check_partition(&data, &ids, np);
        test_tensor_free(&data);
        test_tensor_free(&ids);
    }
    /* Rows of whole cache lines (64 and 128 bytes) into outputs over 8 MB: streaming stores when
     * every output is line-aligned (those ndx allocates), cached ones in the mixes. */
    for (int64_t width = 16; width <= 32; width *= 2) {
        int64_t rows = 150000 * 16 / width;
        ndx_tensor lines = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){rows, width});
        test_fill_random(&r, &lines);
        ndx_tensor line_ids = test_tensor(NDX_INT32, 0, 1, &rows);
        test_fill_indices(&r, &line_ids, 0, 7);
        check_partition(&lines, &line_ids, 8);
        test_tensor_free(&lines);
        test_tensor_free(&line_ids);
    }
    /* Many partitions relative to rows. */
    ndx_tensor data = test_tensor(NDX_INT32, 0, 1, (int64_t[]){70000});
    test_fill_random(&r, &data);
    ndx_tensor ids = test_tensor(NDX_INT32, 0, 1, (int64_t[]){70000});
    test_fill_indices(&r, &ids, 0, 4999);
    check_partition(&data, &ids, 5000);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* High ranks: partitions of rank 5 over data of rank 9; scalar ids over data of rank 15. */
static void partition_high_rank(void **state) {
    (void)state;
    test_rng r = {7};
    int64_t dims[9] = {2, 1, 3, 2, 2, 2, 1, 2, 2};
    ndx_tensor data = test_tensor(NDX_COMPLEX64, 0, 9, dims);
    test_fill_random(&r, &data);
    ndx_tensor ids = test_tensor(NDX_INT16, 0, 5, dims);
    test_fill_indices(&r, &ids, 0, 2);
    check_partition(&data, &ids, 3);
    test_tensor_free(&data);
    test_tensor_free(&ids);
    int64_t dims15[15];
    for (int k = 0; k < 15; k++) dims15[k] = 1 + (k % 4 == 0);
    data = test_tensor(NDX_BOOL, 0, 15, dims15);
    test_fill_random(&r, &data);
    ids = index_tensor(NDX_INT64, 0, NULL, (int64_t[]){1});
    check_partition(&data, &ids, 2);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* Zero-size data, empty partitions: shapes still right, ids still checked (see errors). */
static void partition_zero_size(void **state) {
    (void)state;
    ndx_tensor data = test_tensor(NDX_FLOAT16, 0, 2, (int64_t[]){6, 0});
    ndx_tensor ids = index_tensor(NDX_INT32, 1, (int64_t[]){6}, (int64_t[]){0, 2, 2, 0, 2, 2});
    check_partition(&data, &ids, 4);
    test_tensor_free(&data);
    test_tensor_free(&ids);
    data = test_tensor(NDX_STRING, 2, 3, (int64_t[]){0, 3, 2});
    ids = test_tensor(NDX_INT16, 0, 1, (int64_t[]){0});
    check_partition(&data, &ids, 3);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* partition(data) and partition(positions) with the same ids, stitched, give data back. */
static void partition_stitch_round_trip(void **state) {
    (void)state;
    test_rng r = {9};
    for (int t = 0; t < test_all_dtypes_count; t++) {
        for (int rep = 0; rep < 6; rep++) {
            ndx_dtype dt = test_all_dtypes[t];
            int prank = (int)rng_range(&r, 1, 3), crank = (int)rng_range(&r, 0, 2);
            int64_t dims[NDX_MAX_RANK];
            random_dims(&r, prank + crank, 1, rep == 5 ? 40 : 4, dims);
            ndx_tensor data = test_tensor(dt, test_random_width(&r, dt), prank + crank, dims);
            test_fill_random(&r, &data);
            ndx_dtype idt = index_dtypes[rng_below(&r, 3)];
            ndx_tensor ids = test_tensor(idt, 0, prank, dims);
            int np = (int)rng_range(&r, 1, 5);
            test_fill_indices(&r, &ids, 0, np - 1);
            ndx_tensor pos = test_tensor(idt, 0, prank, dims);
            for (int64_t i = 0; i < test_count(&pos); i++) test_set_index(&pos, i, i);
            ndx_tensor parts[5], where[5];
            ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
            ndx_error err;
            for (int p = 0; p < np; p++) parts[p].data = where[p].data = NULL;
            assert_ok(ndx_dynamic_partition(&data, &ids, np, &opt, parts, &err), &err);
            assert_ok(ndx_dynamic_partition(&pos, &ids, np, &opt, where, &err), &err);
            ndx_tensor merged = {0};
            assert_ok(ndx_dynamic_stitch(np, where, parts, &opt, &merged, &err), &err);
            /* merged is data with its partition dims flattened into one. */
            assert_int_equal(merged.rank, 1 + crank);
            assert_int_equal(merged.shape[0], test_count(&ids));
            assert_int_equal(test_nbytes(&merged), test_nbytes(&data));
            assert_memory_equal(merged.data, data.data, test_nbytes(&data));
            ndx_tensor_free(&merged);
            free_all(parts, np);
            free_all(where, np);
            test_tensor_free(&data);
            test_tensor_free(&ids);
            test_tensor_free(&pos);
        }
    }
}

/* ---- errors ---------------------------------------------------------------------------------- */

/* Runs a stitch expected to fail against a guarded caller output (when `shape` is given) and an
 * unallocated one, checking the status, the message and that nothing was written. */
static void expect_stitch_fails(int n, const ndx_tensor *ix, const ndx_tensor *d,
                                const ndx_options *opt, ndx_status want, const char *needle,
                                int out_rank, const int64_t *out_shape) {
    ndx_error err;
    for (int f = 0; f < 2; f++) {
        ndx_tensor out = {0};
        out.dtype = NDX_FLOAT32;
        assert_fails(stitchers[f](n, ix, d, opt, &out, &err), &err, want, needle);
        assert_null(out.data);
        if (out_shape) {
            ndx_tensor given = test_tensor(NDX_FLOAT32, 0, out_rank, out_shape);
            test_guard g = test_guard_fill(&given, 0x77);
            ndx_tensor before = given;
            assert_fails(stitchers[f](n, ix, d, opt, &given, &err), &err, want, NULL);
            assert_untouched(&g, &given);
            assert_memory_equal(&before, &given, sizeof given);
            test_tensor_free(&given);
        }
    }
    ndx_tensor shape_out;
    ndx_status s = ndx_dynamic_stitch_shape(n, ix, d, &shape_out, &err);
    if (want == NDX_E_MEMORY_BUDGET || want == NDX_E_NO_MEMORY)
        assert_ok(s, &err); /* the shape function allocates nothing */
    else
        assert_fails(s, &err, want, needle);
}

static void stitch_errors(void **state) {
    (void)state;
    ndx_tensor ix[2], d[2];
    int64_t out2[2] = {8, 2};
    for (int it = 0; it < 3; it++) {
        /* A negative index, named by part, position and value. */
        ix[0] = index_tensor(index_dtypes[it], 1, (int64_t[]){2}, (int64_t[]){0, 1});
        ix[1] = index_tensor(index_dtypes[it], 2, (int64_t[]){2, 2}, (int64_t[]){3, 2, 5, -3});
        d[0] = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){2, 2});
        d[1] = test_tensor(NDX_FLOAT32, 0, 3, (int64_t[]){2, 2, 2});
        expect_stitch_fails(2, ix, d, NULL, NDX_E_OUT_OF_RANGE, "indices[1][1, 1] = -3", 2, out2);
        expect_stitch_fails(2, ix, d, NULL, NDX_E_OUT_OF_RANGE, "negative", 2, out2);
        /* Shapes are checked before any index is read: with data[1] of the wrong shape too, the
         * shape is what the error names, whatever the indices hold. */
        test_tensor_free(&d[1]);
        d[1] = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){3, 2});
        expect_stitch_fails(2, ix, d, NULL, NDX_E_INVALID_ARGUMENT,
                            "data[1].shape = [3, 2] does not start with indices[1].shape = [2, 2]",
                            2, out2);
        test_set_index(&ix[1], 3, 4);
        /* data[1].shape does not start with indices[1].shape. */
        expect_stitch_fails(2, ix, d, NULL, NDX_E_INVALID_ARGUMENT,
                            "data[1].shape = [3, 2] does not start with indices[1].shape = [2, 2]",
                            2, out2);
        /* Trailing shapes differ. */
        test_tensor_free(&d[1]);
        d[1] = test_tensor(NDX_FLOAT32, 0, 3, (int64_t[]){2, 2, 3});
        expect_stitch_fails(2, ix, d, NULL, NDX_E_INVALID_ARGUMENT, "trailing shape [3]", 2,
                            out2);
        test_tensor_free(&d[1]);
        d[1] = test_tensor(NDX_FLOAT32, 0, 4, (int64_t[]){2, 2, 2, 1});
        expect_stitch_fails(2, ix, d, NULL, NDX_E_INVALID_ARGUMENT, "data[0] has [2]", 2, out2);
        /* Dtypes differ; string widths differ. */
        test_tensor_free(&d[1]);
        d[1] = test_tensor(NDX_INT32, 0, 3, (int64_t[]){2, 2, 2});
        expect_stitch_fails(2, ix, d, NULL, NDX_E_INVALID_ARGUMENT,
                            "data[1] is int32 but data[0] is float32", 2, out2);
        free_all(d, 2);
        d[0] = test_tensor(NDX_STRING, 4, 2, (int64_t[]){2, 2});
        d[1] = test_tensor(NDX_STRING, 5, 3, (int64_t[]){2, 2, 2});
        expect_stitch_fails(2, ix, d, NULL, NDX_E_INVALID_ARGUMENT,
                            "data[1] is string(5) but data[0] is string(4)", 2, out2);
        free_all(d, 2);
        free_all(ix, 2);
    }
    /* n < 1, NULL arrays, a non-integer index tensor, a malformed data view. */
    ix[0] = index_tensor(NDX_INT32, 1, (int64_t[]){2}, (int64_t[]){0, 1});
    d[0] = test_tensor(NDX_FLOAT32, 0, 1, (int64_t[]){2});
    expect_stitch_fails(0, ix, d, NULL, NDX_E_INVALID_ARGUMENT, "n = 0", 1, (int64_t[]){2});
    expect_stitch_fails(-2, ix, d, NULL, NDX_E_INVALID_ARGUMENT, "n = -2", 1, (int64_t[]){2});
    expect_stitch_fails(1, NULL, d, NULL, NDX_E_INVALID_ARGUMENT, "indices is NULL", 1,
                        (int64_t[]){2});
    expect_stitch_fails(1, ix, NULL, NULL, NDX_E_INVALID_ARGUMENT, "data is NULL", 1,
                        (int64_t[]){2});
    expect_stitch_fails(1, d, d, NULL, NDX_E_INVALID_ARGUMENT, "indices[0] must be int16", 1,
                        (int64_t[]){2});
    void *keep = d[0].data;
    d[0].data = NULL;
    expect_stitch_fails(1, ix, d, NULL, NDX_E_INVALID_ARGUMENT, "data[0]", 1, (int64_t[]){2});
    d[0].data = keep;
    ndx_error err;
    ndx_options opt = test_options(1, NDX_BAD_INDICES_ERROR);
    assert_fails(ndx_dynamic_stitch(1, ix, d, &opt, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out is NULL");
    test_tensor_free(&ix[0]);
    test_tensor_free(&d[0]);
}

/* A caller-given output of the wrong shape or dtype. */
static void stitch_output_mismatch(void **state) {
    (void)state;
    ndx_tensor ix = index_tensor(NDX_INT64, 1, (int64_t[]){2}, (int64_t[]){0, 2});
    ndx_tensor d = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){2, 3});
    ndx_error err;
    const int64_t bad_shapes[3][2] = {{2, 3}, {3, 2}, {4, 3}};
    for (int b = 0; b < 3; b++) {
        ndx_tensor given = test_tensor(NDX_FLOAT32, 0, 2, bad_shapes[b]);
        test_guard g = test_guard_fill(&given, 0x33);
        assert_fails(ndx_dynamic_stitch(1, &ix, &d, NULL, &given, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "the result is float32 [3, 3]");
        assert_untouched(&g, &given);
        test_tensor_free(&given);
    }
    ndx_tensor given = test_tensor(NDX_INT32, 0, 2, (int64_t[]){3, 3});
    test_guard g = test_guard_fill(&given, 0x33);
    assert_fails(ndx_parallel_dynamic_stitch(1, &ix, &d, NULL, &given, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "output is int32");
    assert_untouched(&g, &given);
    test_tensor_free(&given);
    test_tensor_free(&ix);
    test_tensor_free(&d);
}

/* Huge indices: a clean error before any allocation (budget) or any arithmetic overflow. */
static void stitch_huge_index(void **state) {
    (void)state;
    ndx_tensor ix = index_tensor(NDX_INT64, 1, (int64_t[]){2}, (int64_t[]){3, 1000000000000000});
    ndx_tensor d = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){2, 16});
    ndx_options opt = test_options(2, NDX_BAD_INDICES_ERROR);
    opt.max_memory = (size_t)1 << 20;
    expect_stitch_fails(1, &ix, &d, &opt, NDX_E_MEMORY_BUDGET,
                        "indices[0][1] = 1000000000000000", 0, NULL);
    expect_stitch_fails(1, &ix, &d, &opt, NDX_E_MEMORY_BUDGET,
                        "over the memory budget of 1048576 bytes", 0, NULL);
    /* No budget: still refused up front, as more memory than any machine has. */
    expect_stitch_fails(1, &ix, &d, NULL, NDX_E_NO_MEMORY, "more than this machine has", 0,
                        NULL);
    expect_stitch_fails(1, &ix, &d, NULL, NDX_E_NO_MEMORY, "indices[0][1] = 1000000000000000", 0,
                        NULL);
    /* A caller output: the shape must match, whatever the budget. */
    ndx_tensor given = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){4, 16});
    test_guard g = test_guard_fill(&given, 0x11);
    ndx_error err;
    assert_fails(ndx_dynamic_stitch(1, &ix, &d, NULL, &given, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "[1000000000000001, 16]");
    assert_untouched(&g, &given);
    test_tensor_free(&given);
    /* Room for the output but not for the scratch (sorted and unsorted indices): refused before
     * anything is allocated. */
    for (int sorted = 0; sorted < 2; sorted++) {
        test_set_index(&ix, 0, sorted ? 5 : 10000);
        test_set_index(&ix, 1, sorted ? 10000 : 5);
        opt.max_memory = 10001 * 64 + 50;
        ndx_tensor out = {0};
        assert_fails(ndx_dynamic_stitch(1, &ix, &d, &opt, &out, &err), &err,
                     NDX_E_MEMORY_BUDGET, "over the memory budget");
        assert_null(out.data);
        opt.max_memory = 0;
        assert_ok(ndx_dynamic_stitch(1, &ix, &d, &opt, &out, &err), &err);
        ndx_tensor_free(&out);
    }
    /* Overflow: the row count, the element count and the byte count. */
    test_set_index(&ix, 1, INT64_MAX);
    expect_stitch_fails(1, &ix, &d, NULL, NDX_E_OVERFLOW, "9223372036854775807", 2,
                        (int64_t[]){4, 16});
    test_set_index(&ix, 1, INT64_MAX / 8);
    expect_stitch_fails(1, &ix, &d, NULL, NDX_E_OVERFLOW, "too large to address", 2,
                        (int64_t[]){4, 16});
    ndx_tensor d8 = test_tensor(NDX_COMPLEX64, 0, 1, (int64_t[]){2});
    test_set_index(&ix, 1, INT64_MAX / 4); /* fits as a count, not as bytes */
    expect_stitch_fails(1, &ix, &d8, NULL, NDX_E_OVERFLOW, "too large to address", 1,
                        (int64_t[]){4});
    test_tensor_free(&d8);
    test_tensor_free(&ix);
    test_tensor_free(&d);
}

/* Output rank above NDX_MAX_RANK: scalar indices with data of rank 16. */
static void stitch_rank_limit(void **state) {
    (void)state;
    int64_t dims[16];
    for (int k = 0; k < 16; k++) dims[k] = 1;
    ndx_tensor ix = index_tensor(NDX_INT32, 0, NULL, (int64_t[]){0});
    ndx_tensor d = test_tensor(NDX_FLOAT32, 0, 16, dims);
    expect_stitch_fails(1, &ix, &d, NULL, NDX_E_INVALID_ARGUMENT, "rank 17", 1, (int64_t[]){1});
    test_tensor_free(&ix);
    test_tensor_free(&d);
}

/* Runs a partition expected to fail with guarded caller outputs mixed with unallocated ones. */
static void expect_partition_fails(const ndx_tensor *data, const ndx_tensor *ids, int np,
                                   const ndx_options *opt, ndx_status want, const char *needle) {
    ndx_error err;
    int slots = np > 0 ? np : 1;
    ndx_tensor *outs = calloc((size_t)slots, sizeof *outs);
    test_guard *guards = calloc((size_t)slots, sizeof *guards);
    ndx_tensor *before = calloc((size_t)slots, sizeof *before);
    assert_non_null(outs);
    assert_non_null(guards);
    assert_non_null(before);
    for (int p = 0; p < slots; p++) {
        if (p % 2) {
            outs[p] = test_tensor(NDX_INT8, 0, 1, (int64_t[]){3});
            guards[p] = test_guard_fill(&outs[p], 0x44);
        } else {
            outs[p].rank = 1;
            outs[p].shape[0] = 99;
        }
        before[p] = outs[p];
    }
    assert_fails(ndx_dynamic_partition(data, ids, np, opt, outs, &err), &err, want, needle);
    for (int p = 0; p < slots; p++) {
        assert_memory_equal(&before[p], &outs[p], sizeof outs[p]);
        if (p % 2) {
            assert_untouched(&guards[p], &outs[p]);
            test_tensor_free(&outs[p]);
        }
    }
    if (!opt || !opt->max_memory)
        assert_fails(ndx_dynamic_partition_shape(data, ids, np, outs, &err), &err, want, needle);
    free(outs);
    free(guards);
    free(before);
}

/* Two partitions take their own count (a sum, the range check folded over blocks of 256 ids)
 * and placement (cursors in registers): rows of every size class, lengths around the blocks,
 * every index dtype, against the reference; and the first bad id is the one named, wherever it
 * sits in its block, whether too big or negative. */
static void partition_two(void **state) {
    (void)state;
    test_rng r = {21};
    const int64_t lengths[] = {1, 7, 255, 256, 257, 1000, 4099, 70001};
    const int64_t row_elems[] = {1, 2, 3, 16, 33};
    for (int li = 0; li < 8; li++)
        for (int ri = 0; ri < 5; ri++) {
            int64_t n = lengths[li];
            ndx_tensor data = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){n, row_elems[ri]});
            test_fill_random(&r, &data);
            ndx_tensor ids = test_tensor(index_dtypes[(li + ri) % 3], 0, 1, &n);
            test_fill_indices(&r, &ids, 0, 1);
            check_partition(&data, &ids, 2);
            test_tensor_free(&data);
            test_tensor_free(&ids);
        }
    const int64_t at[] = {0, 1, 255, 256, 511, 700, 999};
    for (int it = 0; it < 3; it++)
        for (int k = 0; k < 7; k++) {
            int64_t n = 1000;
            ndx_tensor data = test_tensor(NDX_INT32, 0, 1, &n);
            ndx_tensor ids = test_tensor(index_dtypes[it], 0, 1, &n);
            test_fill_indices(&r, &ids, 0, 1);
            int64_t bad = k % 2 ? -1 : 2 + k;
            test_set_index(&ids, at[k], bad);
            if (at[k] + 300 < n) test_set_index(&ids, at[k] + 300, 9); /* a later one too */
            char needle[64];
            snprintf(needle, sizeof needle, "partitions[%lld] = %lld is not in [0, 2)",
                     (long long)at[k], (long long)bad);
            for (int threads = 1; threads <= 2; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                expect_partition_fails(&data, &ids, 2, &opt, NDX_E_OUT_OF_RANGE, needle);
            }
            test_tensor_free(&data);
            test_tensor_free(&ids);
        }
}

static void partition_errors(void **state) {
    (void)state;
    for (int it = 0; it < 3; it++) {
        ndx_dtype idt = index_dtypes[it];
        ndx_tensor data = test_tensor(NDX_INT8, 0, 2, (int64_t[]){3, 2});
        ndx_tensor ids = index_tensor(idt, 1, (int64_t[]){3}, (int64_t[]){0, 1, 0});
        expect_partition_fails(&data, &ids, 0, NULL, NDX_E_INVALID_ARGUMENT,
                               "num_partitions = 0");
        expect_partition_fails(&data, &ids, -4, NULL, NDX_E_INVALID_ARGUMENT,
                               "num_partitions = -4");
        /* Ids out of range: too big, negative; in a 2-D partitions. */
        test_set_index(&ids, 2, 4);
        expect_partition_fails(&data, &ids, 4, NULL, NDX_E_OUT_OF_RANGE,
                               "partitions[2] = 4 is not in [0, 4)");
        test_set_index(&ids, 1, -1);
        expect_partition_fails(&data, &ids, 4, NULL, NDX_E_OUT_OF_RANGE,
                               "partitions[1] = -1 is not in [0, 4)");
        test_tensor_free(&ids);
        ids = index_tensor(idt, 2, (int64_t[]){3, 2}, (int64_t[]){0, 1, 1, 0, 0, 7});
        expect_partition_fails(&data, &ids, 2, NULL, NDX_E_OUT_OF_RANGE,
                               "partitions[2, 1] = 7 is not in [0, 2)");
        test_tensor_free(&ids);
        /* ... even when data is empty. */
        test_tensor_free(&data);
        data = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){3, 0});
        ids = index_tensor(idt, 1, (int64_t[]){3}, (int64_t[]){0, 1, 5});
        expect_partition_fails(&data, &ids, 4, NULL, NDX_E_OUT_OF_RANGE,
                               "partitions[2] = 5 is not in [0, 4)");
        test_tensor_free(&ids);
        /* A scalar id. */
        ids = index_tensor(idt, 0, NULL, (int64_t[]){3});
        expect_partition_fails(&data, &ids, 3, NULL, NDX_E_OUT_OF_RANGE,
                               "partitions = 3 is not in [0, 3)");
        test_tensor_free(&ids);
        /* data.shape must start with partitions.shape. */
        ids = index_tensor(idt, 1, (int64_t[]){2}, (int64_t[]){0, 1});
        expect_partition_fails(&data, &ids, 2, NULL, NDX_E_INVALID_ARGUMENT,
                               "data.shape = [3, 0] must start with partitions.shape = [2]");
        test_tensor_free(&ids);
        ids = test_tensor(idt, 0, 3, (int64_t[]){3, 0, 1});
        expect_partition_fails(&data, &ids, 2, NULL, NDX_E_INVALID_ARGUMENT,
                               "must start with partitions.shape = [3, 0, 1]");
        test_tensor_free(&ids);
        test_tensor_free(&data);
    }
    /* Non-integer ids, malformed data, NULL outs, output rank above the limit. */
    ndx_tensor data = test_tensor(NDX_INT8, 0, 1, (int64_t[]){3});
    ndx_tensor fids = test_tensor(NDX_FLOAT32, 0, 1, (int64_t[]){3});
    expect_partition_fails(&data, &fids, 2, NULL, NDX_E_INVALID_ARGUMENT,
                           "partitions must be int16, int32 or int64, not float32");
    test_tensor_free(&fids);
    ndx_tensor ids = index_tensor(NDX_INT32, 1, (int64_t[]){3}, (int64_t[]){0, 0, 1});
    void *keep = data.data;
    data.data = NULL;
    expect_partition_fails(&data, &ids, 2, NULL, NDX_E_INVALID_ARGUMENT, "data");
    data.data = keep;
    ndx_error err;
    assert_fails(ndx_dynamic_partition(&data, &ids, 2, NULL, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "outs is NULL");
    test_tensor_free(&data);
    test_tensor_free(&ids);
    int64_t dims[16];
    for (int k = 0; k < 16; k++) dims[k] = 1;
    data = test_tensor(NDX_INT8, 0, 16, dims);
    ids = index_tensor(NDX_INT16, 0, NULL, (int64_t[]){0});
    expect_partition_fails(&data, &ids, 1, NULL, NDX_E_INVALID_ARGUMENT, "rank 17");
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* A caller output of the wrong shape, and a budget too small: nothing written, nothing leaked
 * (outputs allocated before the failure are released — the sanitizer build checks). */
static void partition_output_errors(void **state) {
    (void)state;
    ndx_tensor data = test_tensor(NDX_FLOAT64, 0, 2, (int64_t[]){5, 3});
    ndx_tensor ids = index_tensor(NDX_INT64, 1, (int64_t[]){5}, (int64_t[]){2, 0, 2, 1, 2});
    ndx_error err;
    ndx_tensor outs[3];
    test_guard g[3];
    const int64_t wrong[2] = {2, 3}; /* outs[2] needs [3, 3] */
    memset(outs, 0, sizeof outs);
    outs[1] = test_tensor(NDX_FLOAT64, 0, 2, (int64_t[]){1, 3});
    outs[2] = test_tensor(NDX_FLOAT64, 0, 2, wrong);
    g[1] = test_guard_fill(&outs[1], 0x21);
    g[2] = test_guard_fill(&outs[2], 0x22);
    assert_fails(ndx_dynamic_partition(&data, &ids, 3, NULL, outs, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "outs[2] is float64 [2, 3] but the result is float64 [3, 3]");
    assert_null(outs[0].data);
    assert_untouched(&g[1], &outs[1]);
    assert_untouched(&g[2], &outs[2]);
    test_tensor_free(&outs[2]);
    outs[2] = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){3, 3});
    g[2] = test_guard_fill(&outs[2], 0x22);
    assert_fails(ndx_dynamic_partition(&data, &ids, 3, NULL, outs, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "outs[2] is float32");
    assert_untouched(&g[2], &outs[2]);
    test_tensor_free(&outs[1]);
    test_tensor_free(&outs[2]);
    /* The budget: every output allocated by the op. */
    memset(outs, 0, sizeof outs);
    ndx_options opt = test_options(1, NDX_BAD_INDICES_ERROR);
    opt.max_memory = 100;
    expect_partition_fails(&data, &ids, 3, &opt, NDX_E_MEMORY_BUDGET, "over the memory budget");
    opt.max_memory = 0;
    assert_ok(ndx_dynamic_partition(&data, &ids, 3, &opt, outs, &err), &err);
    free_all(outs, 3);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(documented_stitch_example),
        cmocka_unit_test(replace_minus_one_program),
        cmocka_unit_test(partition_doc_examples),
        cmocka_unit_test(partition_scalar_ids),
        cmocka_unit_test(stitch_random_small),
        cmocka_unit_test(stitch_random_large),
        cmocka_unit_test(stitch_large_output),
        cmocka_unit_test(stitch_unsorted_at_worker_split),
        cmocka_unit_test(stitch_high_rank),
        cmocka_unit_test(stitch_zero_size),
        cmocka_unit_test(zero_rows_huge_trailing_dims),
        cmocka_unit_test(stitch_duplicates_last_wins),
        cmocka_unit_test(partition_random_small),
        cmocka_unit_test(partition_random_large),
        cmocka_unit_test(partition_high_rank),
        cmocka_unit_test(partition_zero_size),
        cmocka_unit_test(partition_stitch_round_trip),
        cmocka_unit_test(stitch_errors),
        cmocka_unit_test(stitch_output_mismatch),
        cmocka_unit_test(stitch_huge_index),
        cmocka_unit_test(stitch_rank_limit),
        cmocka_unit_test(partition_errors),
        cmocka_unit_test(partition_two),
        cmocka_unit_test(partition_output_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
