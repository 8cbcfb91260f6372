/* test_segment_reduce.c — unsorted_segment_*, segment_* and sparse_segment_* against the naive
 * references of tests/reference/reference_segment.c (one loop per family, every step rounded to
 * the element type), compared bitwise. Floats
 * are random with fractions, so the order of every sum shows. Also: TensorFlow's documented
 * examples, the empty-segment traps (MIN/MAX fill with the finite extremes, sorted gaps 0),
 * every dtype and op TensorFlow registers and the refusal of the rest, rank-k ids, negative ids,
 * every error leaving the output untouched, the same bits at 1, 2 and 3 threads on inputs large
 * enough for the parallel paths, the memory budget, sizes that overflow, infer against the ops,
 * and ids mutated by another thread during calls. */
#include "contract.h"
#include "reference.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>

/* ---- dtype kinds (the references are tests/reference/reference_segment.c) ------------------- */

static int kind_of(ndx_dtype dt) { return (int)ndx_dtype_kind_of(dt); }
static int is_int(ndx_dtype dt) {
    return kind_of(dt) == NDX_KIND_SIGNED || kind_of(dt) == NDX_KIND_UNSIGNED;
}
static int is_complex(ndx_dtype dt) { return kind_of(dt) == NDX_KIND_COMPLEX; }

/* ---- inputs ---------------------------------------------------------------------------------- */

static const ndx_dtype numeric[] = {NDX_INT8,    NDX_INT16,   NDX_INT32,    NDX_INT64,
                                    NDX_UINT8,   NDX_UINT16,  NDX_UINT32,   NDX_UINT64,
                                    NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                    NDX_COMPLEX64, NDX_COMPLEX128};
enum { NUMERIC = 14 };

/* Integers small; floats random in [-4, 4) with every bit of the dtype's significand, so the
 * order of a sum shows in its result. */
static void fill_values(test_rng *r, ndx_tensor *t) {
    if (is_int(t->dtype)) {
        test_fill_random(r, t);
        return;
    }
    int64_t n = test_count(t) * (is_complex(t->dtype) ? 2 : 1);
    ndx_dtype part = t->dtype == NDX_COMPLEX64 ? NDX_FLOAT32
                     : t->dtype == NDX_COMPLEX128 ? NDX_FLOAT64 : t->dtype;
    size_t w = is_complex(t->dtype) ? t->itemsize / 2 : t->itemsize;
    for (int64_t i = 0; i < n; i++) {
        double x = (double)(rng_next(r) >> 11) / 9007199254740992.0 * 8.0 - 4.0;
        ref_store_real(part, (unsigned char *)t->data + (size_t)i * w, ref_round(part, x));
    }
}

enum { UNSORTED = REF_UNSORTED, SORTED = REF_SORTED, SPARSE = REF_SPARSE };
static int registered(int family, ndx_segment_op op, ndx_dtype dt) {
    return ref_segment_supports((ref_segment_family)family, op, dt);
}

static ndx_status run_family(int family, ndx_segment_op op, const ndx_tensor *data,
                             const ndx_tensor *indices, const ndx_tensor *ids, int64_t nseg,
                             const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    switch (family) {
    case UNSORTED: return ndx_unsorted_segment_reduce(op, data, ids, nseg, opt, out, err);
    case SORTED: return ndx_segment_reduce(op, data, ids, opt, out, err);
    default: return ndx_sparse_segment_reduce(op, data, indices, ids, nseg, opt, out, err);
    }
}

/* A random case of `family`: data [rows, ...] (unsorted: ids of rank 0 to 2 over data's first
 * dims), ids, indices (sparse), num_segments, and the expected output from the reference. */
typedef struct seg_case {
    ndx_tensor data, ids, indices, want;
    int64_t num;
} seg_case;

static void case_free(seg_case *c) {
    test_tensor_free(&c->data);
    test_tensor_free(&c->ids);
    test_tensor_free(&c->indices);
    test_tensor_free(&c->want);
}

static void make_case(test_rng *r, int family, ndx_segment_op op, ndx_dtype dt, ndx_dtype id_dt,
                      int64_t max_rows, seg_case *c) {
    memset(c, 0, sizeof *c);
    int64_t shape[NDX_MAX_RANK];
    int k = family == UNSORTED ? (int)rng_range(r, 0, 2) : 1;
    int rest = (int)rng_range(r, 0, 2);
    for (int i = 0; i < k; i++) shape[i] = rng_range(r, 0, i == 0 ? max_rows : 3);
    if (k == 1 && rng_below(r, 4)) shape[0] = rng_range(r, 1, max_rows); /* mostly rows */
    for (int i = 0; i < rest; i++) shape[k + i] = rng_range(r, rng_below(r, 8) ? 1 : 0, 3);
    int64_t rows = 1;
    for (int i = 0; i < k; i++) rows *= shape[i];
    c->num = rng_range(r, 0, 8);
    if (family == SPARSE) {
        int64_t data_rows = rng_range(r, 1, 6), n = rng_range(r, 0, max_rows);
        int64_t dshape[NDX_MAX_RANK];
        dshape[0] = data_rows;
        for (int i = 0; i < rest; i++) dshape[1 + i] = shape[k + i];
        c->data = test_tensor(dt, 0, 1 + rest, dshape);
        c->indices = test_tensor_v(id_dt, 0, 1, n);
        test_fill_indices(r, &c->indices, 0, data_rows - 1);
        c->ids = test_tensor_v(rng_below(r, 2) ? NDX_INT32 : NDX_INT64, 0, 1, n);
        rows = n;
    } else {
        c->data = test_tensor(dt, 0, k + rest, shape);
        c->ids = test_tensor(id_dt, 0, k, shape);
    }
    fill_values(r, &c->data);
    int64_t id = 0;
    for (int64_t i = 0; i < rows; i++) {
        if (family == UNSORTED) {
            test_set_index(&c->ids, i, c->num ? rng_range(r, -2, c->num - 1) : rng_range(r, -3, -1));
        } else {
            id += rng_below(r, 3) == 0 ? rng_range(r, 1, 3) : 0; /* runs, with gaps */
            test_set_index(&c->ids, i, id);
        }
    }
    if (family == SPARSE) {
        if (rng_below(r, 2))
            c->num = NDX_SEGMENTS_FROM_IDS;
        else
            c->num = (rows ? id + 1 : 0) + rng_range(r, 0, 2);
    }
    int64_t out_rows = family == UNSORTED ? c->num
                       : family == SPARSE && c->num >= 0 ? c->num
                                                          : (rows ? id + 1 : 0);
    int64_t oshape[NDX_MAX_RANK];
    oshape[0] = out_rows;
    for (int i = 0; i < rest; i++) oshape[1 + i] = shape[k + i];
    c->want = test_tensor(dt, 0, 1 + rest, oshape);
    if (family == UNSORTED) ref_unsorted_segment_fill(op, &c->data, &c->ids, &c->want);
    else if (family == SORTED) ref_segment_fill(op, &c->data, &c->ids, &c->want);
    else ref_sparse_segment_fill(op, &c->data, &c->indices, &c->ids, &c->want);
}

/* ---- every family, op, dtype and id dtype against the reference -------------------------------- */

static void random_against_reference(void **state) {
    (void)state;
    test_rng r = {20261129};
    int checked = 0;
    for (int family = UNSORTED; family <= SPARSE; family++)
        for (int op = NDX_SEGMENT_SUM; op <= NDX_SEGMENT_SQRT_N; op++)
            for (int d = 0; d < NUMERIC; d++) {
                if (!registered(family, (ndx_segment_op)op, numeric[d])) continue;
                for (int trial = 0; trial < 12; trial++) {
                    seg_case c;
                    ndx_dtype id_dt = trial % 2 ? NDX_INT64 : NDX_INT32;
                    make_case(&r, family, (ndx_segment_op)op, numeric[d], id_dt, trial < 8 ? 12 : 40, &c);
                    ndx_tensor out = {0};
                    ndx_error err;
                    ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
                    ndx_status s = run_family(family, (ndx_segment_op)op, &c.data, &c.indices,
                                              &c.ids, c.num, &opt, &out, &err);
                    if (s != NDX_OK)
                        fail_msg("family %d op %s dtype %s: %s", family,
                                 ndx_segment_op_name((ndx_segment_op)op),
                                 ndx_dtype_name(numeric[d]), err.message);
                    assert_tensor_eq(&out, &c.want);
                    /* Into a caller's buffer too. */
                    ndx_tensor mine = test_tensor(c.want.dtype, 0, c.want.rank, c.want.shape);
                    assert_ok(run_family(family, (ndx_segment_op)op, &c.data, &c.indices, &c.ids,
                                         c.num, &opt, &mine, &err),
                              &err);
                    assert_tensor_eq(&mine, &c.want);
                    test_tensor_free(&mine);
                    ndx_tensor_free(&out);
                    case_free(&c);
                    checked++;
                }
            }
    assert_true(checked > 500);
}

/* Everything TensorFlow does not register is refused, before anything is written. */
static void unregistered_dtypes_refused(void **state) {
    (void)state;
    const ndx_dtype all[] = {NDX_BOOL, NDX_INT8, NDX_INT16, NDX_INT32, NDX_INT64, NDX_UINT8,
                             NDX_UINT16, NDX_UINT32, NDX_UINT64, NDX_FLOAT16, NDX_BFLOAT16,
                             NDX_FLOAT32, NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128, NDX_STRING};
    for (int family = UNSORTED; family <= SPARSE; family++)
        for (int op = NDX_SEGMENT_SUM; op <= NDX_SEGMENT_SQRT_N; op++)
            for (int d = 0; d < 16; d++) {
                ndx_tensor data = test_tensor_v(all[d], all[d] == NDX_STRING ? 3 : 0, 2, 2, 2);
                ndx_tensor ids = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 1});
                ndx_tensor idx = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 1});
                ndx_tensor out = {0};
                ndx_error err;
                ndx_status s = run_family(family, (ndx_segment_op)op, &data, &idx, &ids, 2, NULL,
                                          &out, &err);
                if (registered(family, (ndx_segment_op)op, all[d])) {
                    assert_ok(s, &err);
                    ndx_tensor_free(&out);
                } else {
                    assert_true(s == NDX_E_UNSUPPORTED || s == NDX_E_INVALID_ARGUMENT);
                    assert_null(out.data);
                }
                test_tensor_free(&data);
                test_tensor_free(&ids);
                test_tensor_free(&idx);
            }
}

/* ---- TensorFlow's documented examples ---------------------------------------------------------- */

static void expect_i32(int family, ndx_segment_op op, const ndx_tensor *data,
                       const ndx_tensor *indices, const ndx_tensor *ids, int64_t nseg, int rows,
                       const int32_t *want) {
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(run_family(family, op, data, indices, ids, nseg, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], rows);
    assert_int_equal(out.shape[1], 4);
    assert_memory_equal(out.data, want, (size_t)rows * 4 * sizeof(int32_t));
    ndx_tensor_free(&out);
}

static void tensorflow_doc_examples(void **state) {
    (void)state;
    /* tf.math.unsorted_segment_sum's: c = [[1,2,3,4],[5,6,7,8],[4,3,2,1]], ids [0,1,0], 2. */
    ndx_tensor c = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){3, 4},
                                    (int32_t[]){1, 2, 3, 4, 5, 6, 7, 8, 4, 3, 2, 1});
    ndx_tensor u = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 1, 0});
    expect_i32(UNSORTED, NDX_SEGMENT_SUM, &c, NULL, &u, 2, 2,
               (int32_t[]){5, 5, 5, 5, 5, 6, 7, 8});
    /* unsorted_segment_max / min / prod: the same data. */
    expect_i32(UNSORTED, NDX_SEGMENT_MAX, &c, NULL, &u, 2, 2, (int32_t[]){4, 3, 3, 4, 5, 6, 7, 8});
    expect_i32(UNSORTED, NDX_SEGMENT_MIN, &c, NULL, &u, 2, 2, (int32_t[]){1, 2, 2, 1, 5, 6, 7, 8});
    expect_i32(UNSORTED, NDX_SEGMENT_PROD, &c, NULL, &u, 2, 2, (int32_t[]){4, 6, 6, 4, 5, 6, 7, 8});
    test_tensor_free(&c);
    test_tensor_free(&u);

    /* tf.math.segment_sum / max / min / prod / mean's: c = [[1,2,3,4],[4,3,2,1],[5,6,7,8]],
     * ids [0,0,1]. */
    c = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){3, 4},
                         (int32_t[]){1, 2, 3, 4, 4, 3, 2, 1, 5, 6, 7, 8});
    ndx_tensor s = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 0, 1});
    expect_i32(SORTED, NDX_SEGMENT_SUM, &c, NULL, &s, 0, 2, (int32_t[]){5, 5, 5, 5, 5, 6, 7, 8});
    expect_i32(SORTED, NDX_SEGMENT_MAX, &c, NULL, &s, 0, 2, (int32_t[]){4, 3, 3, 4, 5, 6, 7, 8});
    expect_i32(SORTED, NDX_SEGMENT_MIN, &c, NULL, &s, 0, 2, (int32_t[]){1, 2, 2, 1, 5, 6, 7, 8});
    expect_i32(SORTED, NDX_SEGMENT_PROD, &c, NULL, &s, 0, 2, (int32_t[]){4, 6, 6, 4, 5, 6, 7, 8});
    test_tensor_free(&c);
    /* segment_mean on floats: [[2.5, 2.5, 2.5, 2.5], [5, 6, 7, 8]]. */
    c = test_tensor_from(NDX_FLOAT32, 0, 2, (int64_t[]){3, 4},
                         (float[]){1, 2, 3, 4, 4, 3, 2, 1, 5, 6, 7, 8});
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_MEAN, &c, &s, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){2.5f, 2.5f, 2.5f, 2.5f, 5, 6, 7, 8}), 32);
    ndx_tensor_free(&out);
    test_tensor_free(&c);
    test_tensor_free(&s);

    /* tf.sparse.segment_sum's: c = [[1,2,3,4],[-1,-2,-3,-4],[5,6,7,8]]. */
    c = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){3, 4},
                         (int32_t[]){1, 2, 3, 4, -1, -2, -3, -4, 5, 6, 7, 8});
    ndx_tensor i2 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 1});
    ndx_tensor s00 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 0});
    ndx_tensor s01 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 1});
    ndx_tensor s02 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 2});
    ndx_tensor i3 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 1, 2});
    ndx_tensor s001 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 0, 1});
    /* Select two rows, one segment. */
    expect_i32(SPARSE, NDX_SEGMENT_SUM, &c, &i2, &s00, NDX_SEGMENTS_FROM_IDS, 1,
               (int32_t[]){0, 0, 0, 0});
    /* Select two rows, two segments. */
    expect_i32(SPARSE, NDX_SEGMENT_SUM, &c, &i2, &s01, NDX_SEGMENTS_FROM_IDS, 2,
               (int32_t[]){1, 2, 3, 4, -1, -2, -3, -4});
    /* With missing segment ids, and num_segments. */
    expect_i32(SPARSE, NDX_SEGMENT_SUM, &c, &i2, &s02, 4, 4,
               (int32_t[]){1, 2, 3, 4, 0, 0, 0, 0, -1, -2, -3, -4, 0, 0, 0, 0});
    /* Select all rows, two segments: tf.math.segment_sum(c, [0, 0, 1]). */
    expect_i32(SPARSE, NDX_SEGMENT_SUM, &c, &i3, &s001, NDX_SEGMENTS_FROM_IDS, 2,
               (int32_t[]){0, 0, 0, 0, 5, 6, 7, 8});
    test_tensor_free(&c);
    test_tensor_free(&i2);
    test_tensor_free(&s00);
    test_tensor_free(&s01);
    test_tensor_free(&s02);
    test_tensor_free(&i3);
    test_tensor_free(&s001);

    /* segment_reduction_ops_test.py, testSegmentIdsGap: segment_sum of [[1..],...] with ids
     * [0, 0, 2, 2] (no id 1) gives a row of zeros for id 1. */
    c = test_tensor_from(NDX_FLOAT32, 0, 2, (int64_t[]){4, 1}, (float[]){1, 2, 3, 4});
    s = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){4}, (int64_t[]){0, 0, 2, 2});
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_SUM, &c, &s, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){3, 0, 7}), 12);
    ndx_tensor_free(&out);
    test_tensor_free(&c);
    test_tensor_free(&s);
}

/* ---- the empty-segment traps -------------------------------------------------------------------- */

static void empty_segment_traps(void **state) {
    (void)state;
    ndx_tensor data = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){3},
                                       (float[]){INFINITY, -INFINITY, 2.0f});
    ndx_tensor ids = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 1, 3});
    ndx_tensor out = {0};
    ndx_error err;
    /* Unsorted MIN starts at the finite max: +inf alone stays FLT_MAX; an empty segment too. */
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){FLT_MAX, -INFINITY, FLT_MAX, 2.0f}), 16);
    ndx_tensor_free(&out);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){INFINITY, -FLT_MAX, -FLT_MAX, 2.0f}), 16);
    ndx_tensor_free(&out);
    /* Sorted: a segment of one row is that row; gaps are 0, min and max too. */
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){INFINITY, -INFINITY, 0.0f, 2.0f}), 16);
    ndx_tensor_free(&out);
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_PROD, &data, &ids, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){INFINITY, -INFINITY, 1.0f, 2.0f}), 16);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    /* Integers: the dtype's extremes. */
    data = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){5, 6, 7});
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((int32_t[]){5, 6, INT32_MAX, 7}), 16);
    ndx_tensor_free(&out);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((int32_t[]){5, 6, INT32_MIN, 7}), 16);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    /* uint8 and float16 / bfloat16 finite extremes. */
    data = test_tensor_from(NDX_UINT8, 0, 1, (int64_t[]){3}, (uint8_t[]){5, 6, 7});
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((uint8_t[]){5, 6, 255, 7}), 4);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    data = test_tensor_from(NDX_FLOAT16, 0, 1, (int64_t[]){3},
                            (uint16_t[]){0x3c00, 0x3c00, 0x3c00});
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &data, &ids, 4, NULL, &out, &err), &err);
    assert_int_equal(((uint16_t *)out.data)[2], 0xfbff); /* -65504 */
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    data = test_tensor_from(NDX_BFLOAT16, 0, 1, (int64_t[]){3},
                            (uint16_t[]){0x3f80, 0x3f80, 0x3f80});
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, 4, NULL, &out, &err), &err);
    assert_int_equal(((uint16_t *)out.data)[2], 0x7f7f);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* MEAN's N is a sum of ones in the dtype: float16 stops at 2048, so 3000 ones average to 3000 /
 * 2048 (rounded), and bfloat16 at 256. */
static void mean_count_is_a_sum_of_ones(void **state) {
    (void)state;
    enum { N = 3000 };
    ndx_tensor data = test_tensor_v(NDX_FLOAT16, 0, 1, N);
    ndx_tensor ids = test_tensor_v(NDX_INT32, 0, 1, N);
    for (int i = 0; i < N; i++) {
        ((uint16_t *)data.data)[i] = 0x3c00; /* 1 */
        ((int32_t *)ids.data)[i] = 0;
    }
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MEAN, &data, &ids, 1, NULL, &out, &err), &err);
    /* The sum of 3000 ones in float16 is 2048 too, so the mean is 1. */
    assert_int_equal(((uint16_t *)out.data)[0], 0x3c00);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    ndx_tensor d32 = test_tensor_v(NDX_FLOAT32, 0, 1, N);
    for (int i = 0; i < N; i++) ((float *)d32.data)[i] = 1.0f;
    ndx_tensor d16 = test_tensor_v(NDX_FLOAT16, 0, 1, N);
    for (int i = 0; i < N; i++) ((uint16_t *)d16.data)[i] = ndx_float_to_float16(0.5f);
    /* float16 halves: the sum sticks at 1024 (1024 + 0.5 rounds back to even), N at 2048. */
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MEAN, &d16, &ids, 1, NULL, &out, &err), &err);
    assert_int_equal(((uint16_t *)out.data)[0], ndx_float_to_float16(0.5f));
    ndx_tensor_free(&out);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_SQRT_N, &d32, &ids, 2, NULL, &out, &err), &err);
    assert_true(((float *)out.data)[0] == 3000.0f / sqrtf(3000.0f));
    assert_true(((float *)out.data)[1] == 0.0f); /* empty: 0 */
    ndx_tensor_free(&out);
    test_tensor_free(&d32);
    test_tensor_free(&d16);
    test_tensor_free(&ids);
}

static void assert_tensor_eq_shape(const ndx_tensor *a, const ndx_tensor *b) {
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->rank, b->rank);
    for (int i = 0; i < a->rank; i++) assert_int_equal(a->shape[i], b->shape[i]);
}

/* NaN, infinities and signed zeros: MIN and MAX give NaN for a segment holding one and
 * otherwise the later of equal values (TensorFlow's data.cwiseMin<PropagateNaN>(output)); a
 * sorted segment of one row keeps -0.0 while 0 + -0.0 is +0.0 elsewhere. Data drawn from those
 * values, every family against the reference. */
static void nan_and_signed_zero_rules(void **state) {
    (void)state;
    test_rng r = {11};
    const float special[] = {NAN, -NAN, 0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY};
    const ndx_dtype dts[] = {NDX_FLOAT32, NDX_FLOAT64, NDX_FLOAT16, NDX_BFLOAT16};
    for (int trial = 0; trial < 400; trial++) {
        int family = trial % 3;
        ndx_dtype dt = dts[(trial / 3) % 4];
        ndx_segment_op op = family == SPARSE ? (ndx_segment_op)(trial % 2 ? NDX_SEGMENT_SUM : NDX_SEGMENT_MEAN)
                                             : (ndx_segment_op)rng_below(&r, 4);
        seg_case c;
        make_case(&r, family, op, dt, NDX_INT32, 12, &c);
        int64_t n = test_count(&c.data);
        for (int64_t i = 0; i < n; i++)
            ref_store_real(dt, (unsigned char *)c.data.data + (size_t)i * c.data.itemsize,
                           special[rng_below(&r, 8)]);
        if (family == UNSORTED) ref_unsorted_segment_fill(op, &c.data, &c.ids, &c.want);
        else if (family == SORTED) ref_segment_fill(op, &c.data, &c.ids, &c.want);
        else ref_sparse_segment_fill(op, &c.data, &c.indices, &c.ids, &c.want);
        ndx_tensor out = {0};
        ndx_error err;
        assert_ok(run_family(family, op, &c.data, &c.indices, &c.ids, c.num, NULL, &out, &err), &err);
        if (op == NDX_SEGMENT_MIN || op == NDX_SEGMENT_MAX) {
            assert_tensor_eq(&out, &c.want); /* selections: the very bits */
        } else { /* arithmetic on two NaNs may keep either's payload: any NaN for a NaN */
            assert_tensor_eq_shape(&out, &c.want);
            for (int64_t i = 0; i < test_count(&out); i++) {
                double a = ref_load_real(dt, (unsigned char *)out.data + (size_t)i * out.itemsize);
                double b = ref_load_real(dt, (unsigned char *)c.want.data + (size_t)i * out.itemsize);
                if (isnan(a) && isnan(b)) continue;
                if (memcmp(&a, &b, sizeof a) != 0)
                    fail_msg("trial %d element %lld: %g vs %g", trial, (long long)i, a, b);
            }
        }
        ndx_tensor_free(&out);
        case_free(&c);
    }
    /* Worked: max of [+0, -0] is -0 (the later); sorted sum of one -0 row is -0, of two is +0. */
    ndx_tensor data = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){3}, (float[]){0.0f, -0.0f, -0.0f});
    ndx_tensor ids = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 0, 1});
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &data, &ids, 2, NULL, &out, &err), &err);
    assert_true(signbit(((float *)out.data)[0]) && signbit(((float *)out.data)[1]));
    ndx_tensor_free(&out);
    ((float *)data.data)[0] = -0.0f;
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_SUM, &data, &ids, NULL, &out, &err), &err);
    assert_true(!signbit(((float *)out.data)[0]) && signbit(((float *)out.data)[1]));
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* ---- refusals: a clear error and the output untouched ----------------------------------------- */

static void refuse(int family, ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *idx,
                   const ndx_tensor *ids, int64_t nseg, int out_rows, ndx_status want,
                   const char *needle) {
    ndx_error err;
    /* Into a caller's buffer of the shape a success would have (when there is one): untouched. */
    if (out_rows >= 0) {
        ndx_tensor out = test_tensor_v(data->dtype, 0, 2, out_rows, data->shape[data->rank - 1]);
        test_guard g = test_guard_fill(&out, 0xa5);
        assert_fails(run_family(family, op, data, idx, ids, nseg, NULL, &out, &err), &err, want,
                     needle);
        assert_untouched(&g, &out);
        test_tensor_free(&out);
    }
    ndx_tensor out = {0};
    assert_fails(run_family(family, op, data, idx, ids, nseg, NULL, &out, &err), &err, want, needle);
    assert_null(out.data);
}

static void bad_inputs_refused(void **state) {
    (void)state;
    ndx_tensor data = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 2);
    test_rng r = {7};
    fill_values(&r, &data);
#define IDS(n, ...) test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){n}, (int32_t[]){__VA_ARGS__})
    ndx_tensor bad = IDS(4, 0, 1, 5, 2);
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &bad, 3, 3, NDX_E_OUT_OF_RANGE,
           "unsorted_segment_sum: segment_ids[2] = 5 is out of range [0, 3)");
    refuse(UNSORTED, NDX_SEGMENT_MEAN, &data, NULL, &bad, 3, 3, NDX_E_OUT_OF_RANGE,
           "segment_ids[2] = 5 is out of range [0, 3)");
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &bad, -1, -1, NDX_E_INVALID_ARGUMENT,
           "num_segments = -1 must not be negative");
    ndx_tensor unsorted = IDS(4, 0, 2, 1, 2);
    refuse(SORTED, NDX_SEGMENT_SUM, &data, NULL, &unsorted, 0, 3, NDX_E_INVALID_ARGUMENT,
           "segment ids are not increasing");
    ndx_tensor negative = IDS(4, -1, 0, 0, 1);
    refuse(SORTED, NDX_SEGMENT_MAX, &data, NULL, &negative, 0, 2, NDX_E_OUT_OF_RANGE,
           "segment_ids[0] = -1 is negative");
    ndx_tensor three = IDS(3, 0, 0, 1);
    refuse(SORTED, NDX_SEGMENT_SUM, &data, NULL, &three, 0, 2, NDX_E_INVALID_ARGUMENT,
           "segment_ids should be the same size as dimension 0 of data");
    ndx_tensor idx = IDS(4, 0, 3, 4, 1);
    ndx_tensor sids = IDS(4, 0, 0, 1, 1);
    refuse(SPARSE, NDX_SEGMENT_SUM, &data, &idx, &sids, NDX_SEGMENTS_FROM_IDS, 2,
           NDX_E_OUT_OF_RANGE, "sparse_segment_sum: indices[2] = 4 is out of range [0, 4)");
    ndx_tensor good_idx = IDS(4, 0, 3, 2, 1);
    refuse(SPARSE, NDX_SEGMENT_MEAN, &data, &good_idx, &sids, 1, 1, NDX_E_OUT_OF_RANGE,
           "segment ids must be < num_segments");
    refuse(SPARSE, NDX_SEGMENT_SQRT_N, &data, &good_idx, &unsorted, NDX_SEGMENTS_FROM_IDS, 3,
           NDX_E_INVALID_ARGUMENT, "segment ids are not increasing");
    refuse(SPARSE, NDX_SEGMENT_SUM, &data, &good_idx, &three, NDX_SEGMENTS_FROM_IDS, -1,
           NDX_E_INVALID_ARGUMENT, "segment_ids and indices should have same size");
    refuse(SPARSE, NDX_SEGMENT_MIN, &data, &good_idx, &sids, NDX_SEGMENTS_FROM_IDS, -1,
           NDX_E_INVALID_ARGUMENT, "TensorFlow has no such op");
    refuse(SORTED, NDX_SEGMENT_SQRT_N, &data, NULL, &sids, 0, -1, NDX_E_INVALID_ARGUMENT,
           "segment_sqrt_n: TensorFlow has no such op");
    /* Rank-2 and scalar ids name the position as TensorFlow's SliceDebugString does. */
    ndx_tensor grid = test_tensor_from(NDX_INT64, 0, 2, (int64_t[]){4, 2},
                                       (int64_t[]){0, 1, 2, 0, 1, 1, 2, 9});
    refuse(UNSORTED, NDX_SEGMENT_MIN, &data, NULL, &grid, 3, -1, NDX_E_OUT_OF_RANGE,
           "unsorted_segment_min: segment_ids[3,1] = 9 is out of range [0, 3)");
    ndx_tensor lone = test_tensor_from(NDX_INT32, 0, 0, NULL, (int32_t[]){4});
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &lone, 3, -1, NDX_E_OUT_OF_RANGE,
           "unsorted_segment_sum: segment_ids = 4 is out of range [0, 3)");
    test_tensor_free(&grid);
    test_tensor_free(&lone);
    /* A bad id after many good ones, into narrow rows (checked as the rows are applied, into
     * scratch): nothing written either. */
    ndx_tensor tall = test_tensor_v(NDX_FLOAT32, 0, 2, 6000, 1);
    fill_values(&r, &tall);
    ndx_tensor late = test_tensor_v(NDX_INT64, 0, 1, 6000);
    for (int64_t i = 0; i < 6000; i++) test_set_index(&late, i, i % 7 - 1);
    test_set_index(&late, 5000, 6);
    refuse(UNSORTED, NDX_SEGMENT_MAX, &tall, NULL, &late, 6, 6, NDX_E_OUT_OF_RANGE,
           "unsorted_segment_max: segment_ids[5000] = 6 is out of range [0, 6)");
    test_tensor_free(&tall);
    test_tensor_free(&late);
    /* Ids of another rank or shape. */
    ndx_tensor ids2 = test_tensor_v(NDX_INT32, 0, 2, 4, 3);
    memset(ids2.data, 0, test_nbytes(&ids2));
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &ids2, 2, -1, NDX_E_INVALID_ARGUMENT,
           "data.shape = [4, 2] does not start with segment_ids.shape = [4, 3]");
    refuse(SORTED, NDX_SEGMENT_SUM, &data, NULL, &ids2, 0, -1, NDX_E_INVALID_ARGUMENT,
           "segment_ids should be a vector");
    /* int16 ids: TensorFlow takes int32 and int64. */
    ndx_tensor ids16 = test_tensor_v(NDX_INT16, 0, 1, 4);
    memset(ids16.data, 0, test_nbytes(&ids16));
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &ids16, 2, 2, NDX_E_INVALID_ARGUMENT,
           "segment_ids must be int32 or int64");
    /* Bad op values. */
    refuse(UNSORTED, (ndx_segment_op)17, &data, NULL, &sids, 2, 2, NDX_E_INVALID_ARGUMENT,
           "op 17 is not an ndx_segment_op");
    /* A scalar data for the sorted ops. */
    ndx_tensor scalar = test_tensor_v(NDX_FLOAT32, 0, 0, 0);
    ndx_tensor one = IDS(1, 0);
    ndx_tensor out = {0};
    ndx_error err;
    assert_fails(ndx_segment_reduce(NDX_SEGMENT_SUM, &scalar, &one, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "data must have rank >= 1");
    /* A caller's output of the wrong shape. */
    ndx_tensor wrong = test_tensor_v(NDX_FLOAT32, 0, 2, 3, 3);
    test_guard g = test_guard_fill(&wrong, 0x11);
    assert_fails(ndx_segment_reduce(NDX_SEGMENT_SUM, &data, &sids, NULL, &wrong, &err), &err,
                 NDX_E_INVALID_ARGUMENT, NULL);
    assert_untouched(&g, &wrong);
    /* Negative ids of unsorted ops are dropped, not errors. */
    ndx_tensor drop = IDS(4, -1, 1, -7, 1);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_SUM, &data, &drop, 2, NULL, &out, &err), &err);
    const float *d = data.data, *o = out.data;
    assert_true(o[0] == 0.0f && o[1] == 0.0f);
    assert_true(o[2] == (float)((double)0.0f + d[2] + d[6]) || o[2] == (0.0f + d[2]) + d[6]);
    ndx_tensor_free(&out);
    /* TensorFlow reads no id when data has no elements. */
    ndx_tensor empty = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 0);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_SUM, &empty, &bad, 3, NULL, &out, &err), &err);
    assert_int_equal(out.shape[0], 3);
    ndx_tensor_free(&out);
    ndx_tensor *all[] = {&data, &bad, &unsorted, &negative, &three, &idx, &sids, &good_idx,
                         &ids2, &ids16, &scalar, &one, &wrong, &drop, &empty};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) test_tensor_free(all[i]);
#undef IDS
}

/* ---- the same bits at 1, 2 and 3 threads ------------------------------------------------------- */

static void same_bits_at_any_thread_count(void **state) {
    (void)state;
    test_rng r = {99};
    /* Single elements into a small output (applied by one thread from the ids), wide rows
     * (rows / owned), few wide rows (columns), single elements into a large output (the bucketed
     * elements path), for every family. */
    const int64_t shapes[][2] = {{300000, 1}, {20000, 96}, {4000, 1024}, {300000, 1}};
    const int64_t segs[] = {5000, 700, 3, 400000};
    for (int s = 0; s < 4; s++)
        for (int family = UNSORTED; family <= SPARSE; family++) {
            ndx_segment_op op = family == SPARSE ? NDX_SEGMENT_MEAN : NDX_SEGMENT_SUM;
            ndx_tensor data = test_tensor(NDX_FLOAT32, 0, 2, shapes[s]);
            fill_values(&r, &data);
            int64_t n = shapes[s][0];
            ndx_tensor ids = test_tensor_v(NDX_INT64, 0, 1, n);
            ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 1, n);
            test_fill_indices(&r, &idx, 0, n - 1);
            for (int64_t i = 0; i < n; i++)
                test_set_index(&ids, i, family == UNSORTED ? rng_range(&r, -1, segs[s] - 1)
                                                           : i * segs[s] / n);
            ndx_tensor outs[3];
            for (int t = 0; t < 3; t++) {
                ndx_options opt = test_options(t + 1, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                outs[t] = (ndx_tensor){0};
                assert_ok(run_family(family, op, &data, &idx, &ids, segs[s], &opt, &outs[t], &err),
                          &err);
            }
            assert_tensor_eq(&outs[0], &outs[1]);
            assert_tensor_eq(&outs[0], &outs[2]);
            if ((s == 0 || s == 3) && family == UNSORTED) { /* and the reference agrees */
                ndx_tensor want = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){segs[s], 1});
                ref_unsorted_segment_fill(op, &data, &ids, &want);
                assert_tensor_eq(&outs[0], &want);
                test_tensor_free(&want);
            }
            for (int t = 0; t < 3; t++) ndx_tensor_free(&outs[t]);
            test_tensor_free(&data);
            test_tensor_free(&ids);
            test_tensor_free(&idx);
        }
}

/* ---- memory and sizes ---------------------------------------------------------------------------- */

static void memory_budget_and_overflow(void **state) {
    (void)state;
    /* Rows of 32 bytes: unsorted ones too wide to be applied from the ids (below). */
    ndx_tensor data = test_tensor_v(NDX_FLOAT32, 0, 2, 1000, 8);
    memset(data.data, 0, test_nbytes(&data));
    ndx_tensor ids = test_tensor_v(NDX_INT32, 0, 1, 1000);
    for (int i = 0; i < 1000; i++) ((int32_t *)ids.data)[i] = i / 10;
    ndx_error err;
    for (int family = UNSORTED; family <= SPARSE; family++) {
        /* The ids' copy alone is 8000 bytes. */
        ndx_options opt = {.num_threads = 1, .max_memory = 4000};
        ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, 100, 8);
        test_guard g = test_guard_fill(&out, 0x5a);
        assert_fails(run_family(family, NDX_SEGMENT_SUM, &data, &ids, &ids, 100, &opt, &out, &err),
                     &err, NDX_E_MEMORY_BUDGET, "the checked segment ids needs 8000 bytes");
        assert_untouched(&g, &out);
        /* Enough for the copy and the output it allocates. */
        opt.max_memory = 8000 + (family == SPARSE ? 8000 : 0) + 3200 + 4096;
        ndx_tensor mine = {0};
        assert_ok(run_family(family, NDX_SEGMENT_SUM, &data, &ids, &ids, 100, &opt, &mine, &err),
                  &err);
        ndx_tensor_free(&mine);
        test_tensor_free(&out);
    }
    /* Narrow unsorted rows are applied from the ids into a copy of the segments in scratch:
     * 100 x 4 bytes here. */
    ndx_tensor narrow = test_tensor_v(NDX_FLOAT32, 0, 2, 1000, 1);
    memset(narrow.data, 0, test_nbytes(&narrow));
    ndx_options tight = {.num_threads = 1, .max_memory = 300};
    ndx_tensor small = test_tensor_v(NDX_FLOAT32, 0, 2, 100, 1);
    test_guard sg = test_guard_fill(&small, 0x5a);
    assert_fails(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &narrow, &ids, 100, &tight, &small,
                                             &err),
                 &err, NDX_E_MEMORY_BUDGET, "the segments needs 400 bytes");
    assert_untouched(&sg, &small);
    tight.max_memory = 800 + 4096; /* the copy and the output it allocates */
    ndx_tensor fresh = {0};
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &narrow, &ids, 100, &tight, &fresh,
                                          &err),
              &err);
    ndx_tensor_free(&fresh);
    test_tensor_free(&small);
    test_tensor_free(&narrow);
    /* Sizes: [2^62] + [8] floats cannot be addressed. */
    ndx_tensor out = {0};
    assert_fails(ndx_unsorted_segment_reduce(NDX_SEGMENT_SUM, &data, &ids, (int64_t)1 << 62, NULL,
                                             &out, &err),
                 &err, NDX_E_OVERFLOW, "too large to address");
    ndx_tensor big = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){1}, (int64_t[]){INT64_MAX});
    ndx_tensor row = test_tensor_v(NDX_FLOAT32, 0, 2, 1, 4);
    assert_fails(ndx_segment_reduce(NDX_SEGMENT_SUM, &row, &big, NULL, &out, &err), &err,
                 NDX_E_OVERFLOW, NULL);
    ((int64_t *)big.data)[0] = (int64_t)1 << 61;
    assert_fails(ndx_segment_reduce(NDX_SEGMENT_SUM, &row, &big, NULL, &out, &err), &err,
                 NDX_E_OVERFLOW, "too large to address");
    assert_null(out.data);
    test_tensor_free(&big);
    test_tensor_free(&row);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* ---- infer ------------------------------------------------------------------------------------------ */

static void infer_on_partial_specs(void **state) {
    (void)state;
    ndx_spec out;
    ndx_error err;
    ndx_spec data = spec(NDX_FLOAT32, 3, (int64_t[]){4, NDX_UNKNOWN, 5});
    ndx_spec ids = spec(NDX_INT32, 2, (int64_t[]){NDX_UNKNOWN, 3});
    assert_ok(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_MAX, &data, &ids, 7, &out, &err), &err);
    assert_spec_dims(&out, "[7, 5]");
    assert_ok(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_MAX, &data, &ids, NDX_UNKNOWN, &out, &err),
              &err);
    assert_spec_dims(&out, "[?, 5]");
    ndx_spec bad = spec(NDX_INT32, 2, (int64_t[]){5, 3});
    assert_fails(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_SUM, &data, &bad, 7, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "does not start with");
    ndx_spec unknown = spec(NDX_INT64, NDX_UNKNOWN, NULL);
    assert_ok(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_SUM, &data, &unknown, 7, &out, &err), &err);
    assert_int_equal(out.rank, NDX_UNKNOWN);
    ndx_spec cx = spec(NDX_COMPLEX64, 1, (int64_t[]){4});
    ndx_spec v = spec(NDX_INT32, 1, (int64_t[]){NDX_UNKNOWN});
    assert_fails(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_MIN, &cx, &v, 2, &out, &err), &err,
                 NDX_E_UNSUPPORTED, "complex64");
    assert_ok(ndx_segment_reduce_infer(NDX_SEGMENT_MEAN, &cx, &v, &out, &err), &err);
    assert_spec_dims(&out, "[?]");
    ndx_spec d2 = spec(NDX_BFLOAT16, 2, (int64_t[]){NDX_UNKNOWN, 8});
    assert_ok(ndx_sparse_segment_reduce_infer(NDX_SEGMENT_SQRT_N, &d2, &v, &v, 9, &out, &err), &err);
    assert_spec_dims(&out, "[9, 8]");
    assert_ok(ndx_sparse_segment_reduce_infer(NDX_SEGMENT_SUM, &d2, &v, &v, NDX_SEGMENTS_FROM_IDS,
                                              &out, &err),
              &err);
    assert_spec_dims(&out, "[?, 8]");
    ndx_spec three = spec(NDX_INT32, 1, (int64_t[]){3});
    ndx_spec four = spec(NDX_INT64, 1, (int64_t[]){4});
    assert_fails(ndx_sparse_segment_reduce_infer(NDX_SEGMENT_SUM, &d2, &three, &four, 9, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "should have same size");
    /* Infer agrees with the ops on random complete inputs (the messages included). */
    test_rng r = {3};
    for (int trial = 0; trial < 200; trial++) {
        int family = (int)rng_below(&r, 3);
        ndx_segment_op op = (ndx_segment_op)rng_below(&r, 6);
        seg_case c;
        make_case(&r, family, NDX_SEGMENT_SUM, NDX_FLOAT32, NDX_INT32, 6, &c);
        if (rng_below(&r, 4) == 0) { /* a mismatched shape now and then */
            c.ids.shape[0] += 1;
            c.ids.data = realloc(c.ids.data, test_nbytes(&c.ids) + 8);
            memset(c.ids.data, 0, test_nbytes(&c.ids));
        }
        ndx_spec ds = ndx_spec_of(&c.data), is = ndx_spec_of(&c.ids), xs = ndx_spec_of(&c.indices);
        ndx_spec o;
        ndx_error ierr, oerr;
        ndx_status si = family == UNSORTED ? ndx_unsorted_segment_reduce_infer(op, &ds, &is, c.num, &o, &ierr)
                        : family == SORTED ? ndx_segment_reduce_infer(op, &ds, &is, &o, &ierr)
                                           : ndx_sparse_segment_reduce_infer(op, &ds, &xs, &is, c.num, &o, &ierr);
        ndx_tensor result = {0};
        ndx_status so = run_family(family, op, &c.data, &c.indices, &c.ids, c.num, NULL, &result, &oerr);
        if (si != NDX_OK) {
            assert_int_equal(so, si);
            assert_string_equal(oerr.message, ierr.message);
        } else if (so == NDX_OK) {
            assert_true(ndx_spec_admits(&o, &result) || (o.shape[0] == NDX_UNKNOWN));
        }
        ndx_tensor_free(&result);
        case_free(&c);
    }
}

/* ---- ids changed by another thread during calls ------------------------------------------------- */

typedef struct flipper {
    ndx_tensor *ids;
    _Atomic int stop;
} flipper;

static void *flip(void *arg) {
    flipper *f = arg;
    uint64_t x = 1;
    int64_t n = test_count(f->ids);
    while (!f->stop) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t i = (int64_t)((x >> 33) % (uint64_t)n);
        int64_t v = (int64_t)((x >> 20) % 9) - 3; /* -3 .. 5: some out of range */
        ((int64_t *)f->ids->data)[i] = v;
    }
    return NULL;
}

static void ids_mutated_during_calls(void **state) {
    (void)state;
    ndx_tensor data = test_tensor_v(NDX_FLOAT32, 0, 2, 5000, 3);
    test_rng r = {5};
    fill_values(&r, &data);
    ndx_tensor ids = test_tensor_v(NDX_INT64, 0, 1, 5000);
    memset(ids.data, 0, test_nbytes(&ids));
    flipper f = {&ids, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, flip, &f), 0);
    for (int i = 0; i < 200; i++) {
        int family = i % 3;
        ndx_options opt = test_options(1 + i % 3, NDX_BAD_INDICES_ERROR);
        ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, 3, 3);
        ndx_tensor mine = {0};
        ndx_error err;
        ndx_status s = run_family(family, NDX_SEGMENT_MAX == 0 ? NDX_SEGMENT_SUM : NDX_SEGMENT_SUM,
                                  &data, &ids, &ids, 3, &opt, family == UNSORTED ? &out : &mine,
                                  &err);
        assert_true(s == NDX_OK || s == NDX_E_OUT_OF_RANGE || s == NDX_E_INVALID_ARGUMENT);
        ndx_tensor_free(&mine);
        test_tensor_free(&out);
    }
    f.stop = 1;
    pthread_join(th, NULL);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tensorflow_doc_examples),
        cmocka_unit_test(random_against_reference),
        cmocka_unit_test(unregistered_dtypes_refused),
        cmocka_unit_test(empty_segment_traps),
        cmocka_unit_test(mean_count_is_a_sum_of_ones),
        cmocka_unit_test(nan_and_signed_zero_rules),
        cmocka_unit_test(bad_inputs_refused),
        cmocka_unit_test(same_bits_at_any_thread_count),
        cmocka_unit_test(memory_budget_and_overflow),
        cmocka_unit_test(infer_on_partial_specs),
        cmocka_unit_test(ids_mutated_during_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
