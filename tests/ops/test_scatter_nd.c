/* test_scatter_nd.c — tensor_scatter_nd_{update,add,sub,min,max} and scatter_nd checked against a
 * naive dense reference (tests/reference/: one serial loop over the rows in index order), the
 * TensorFlow doc examples, arithmetic corner cases (float16 rounding per step, integer
 * wraparound, NaN in min/max), bool OR and string concatenation, thread counts, in-place runs
 * and every error path. */
#include "ndx_test.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>

#include "half.h"

/* ---- the reference -------------------------------------------------------------------------- */

/* tensor_scatter_nd_<op> and scatter_nd by the shared naive reference (tests/reference/): one
 * serial loop over the rows in index order; rows out of range are skipped, as the IGNORE policy
 * does (the callers' inputs are in range unless they test that policy). */
static ndx_tensor reference_tensor_scatter(ndx_scatter_op op, const ndx_tensor *tensor,
                                           const ndx_tensor *indices, const ndx_tensor *updates) {
    ndx_options skip = {.bad_indices = NDX_BAD_INDICES_IGNORE};
    ndx_tensor out = {0};
    char why[REF_WHY];
    if (ref_tensor_scatter_nd(op, tensor, indices, updates, &skip, &out, why) == REF_ERROR)
        fail_msg("the reference refuses this scatter: %s", why);
    return out;
}

static ndx_tensor reference_scatter_nd(const ndx_tensor *indices, const ndx_tensor *updates,
                                       int rank, const int64_t *shape) {
    ndx_options skip = {.bad_indices = NDX_BAD_INDICES_IGNORE};
    ndx_tensor out = {0};
    char why[REF_WHY];
    if (ref_scatter_nd(indices, updates, rank, shape, &skip, &out, why) == REF_ERROR)
        fail_msg("the reference refuses this scatter_nd: %s", why);
    return out;
}

static ndx_tensor copy_tensor(const ndx_tensor *t) {
    return test_tensor_from(t->dtype, t->itemsize, t->rank, t->shape, t->data);
}

/* ---- values ------------------------------------------------------------------------------ */

/* Random values whose sums are rarely exact (so any change of order shows), full-range integers
 * (so sums wrap), and for min/max some NaNs and signed zeros. */
static void fill_values(test_rng *r, ndx_tensor *t, int specials) {
    int64_t n = test_count(t);
    unsigned char *p = t->data;
    size_t size = t->itemsize;
    ndx_dtype_kind kind = ndx_dtype_kind_of(t->dtype);
    if (kind == NDX_KIND_BOOL || kind == NDX_KIND_STRING) {
        test_fill_random(r, t);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        unsigned char *e = p + (size_t)i * size;
        if (kind == NDX_KIND_SIGNED || kind == NDX_KIND_UNSIGNED) {
            uint64_t v = rng_next(r);
            if (rng_below(r, 4) == 0) v = (uint64_t)rng_range(r, -3, 3); /* near the wrap */
            memcpy(e, &v, size);
            continue;
        }
        for (size_t k = 0; k < (kind == NDX_KIND_COMPLEX ? 2u : 1u); k++) {
            double v = (double)rng_range(r, -1000000, 1000000) / (double)(1 << rng_below(r, 18));
            int special = specials ? (int)rng_below(r, 20) : 99;
            if (special == 0) v = NAN;
            if (special == 1) v = 0.0;
            if (special == 2) v = -0.0;
            switch (t->dtype) {
            case NDX_FLOAT16: {
                uint16_t h = ndx_float_to_half((float)(v / 64));
                memcpy(e, &h, 2);
                break;
            }
            case NDX_BFLOAT16: {
                uint16_t h = ndx_float_to_bf16((float)v);
                memcpy(e, &h, 2);
                break;
            }
            case NDX_FLOAT32:
            case NDX_COMPLEX64: {
                float f = (float)v;
                memcpy(e + 4 * k, &f, 4);
                break;
            }
            default: memcpy(e + 8 * k, &v, 8); break;
            }
        }
    }
}

/* ---- running every way and comparing ------------------------------------------------------- */

static const ndx_scatter_op all_ops[] = {NDX_SCATTER_UPDATE, NDX_SCATTER_ADD, NDX_SCATTER_SUB,
                                         NDX_SCATTER_MIN, NDX_SCATTER_MAX};

static int op_supports(ndx_scatter_op op, ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    int real = k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT;
    if (op == NDX_SCATTER_UPDATE) return 1;
    if (op == NDX_SCATTER_ADD || op == NDX_SCATTER_SUB) return real || k == NDX_KIND_COMPLEX;
    return real;
}

/* tensor_scatter_nd_<op> at 1, 2 and 3 threads, allocating, into a given output and in place,
 * and with a memory budget that leaves no room for scratch: all must equal the reference. */
static void check_tensor_scatter(ndx_scatter_op op, const ndx_tensor *tensor,
                                 const ndx_tensor *indices, const ndx_tensor *updates,
                                 ndx_bad_indices policy) {
    ndx_tensor expect = reference_tensor_scatter(op, tensor, indices, updates);
    ndx_error err;
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = {.num_threads = threads, .bad_indices = policy};

        ndx_tensor out = {0};
        assert_ok(ndx_tensor_scatter_nd(op, tensor, indices, updates, &opt, &out, &err), &err);
        assert_tensor_eq(&out, &expect);
        ndx_tensor_free(&out);

        ndx_tensor given = test_tensor(tensor->dtype, tensor->itemsize, tensor->rank, tensor->shape);
        memset(given.data, 0xA5, test_nbytes(&given));
        assert_ok(ndx_tensor_scatter_nd(op, tensor, indices, updates, &opt, &given, &err), &err);
        assert_tensor_eq(&given, &expect);
        test_tensor_free(&given);

        ndx_tensor inplace = copy_tensor(tensor);
        assert_ok(ndx_tensor_scatter_nd(op, &inplace, indices, updates, &opt, &inplace, &err), &err);
        assert_tensor_eq(&inplace, &expect);
        test_tensor_free(&inplace);
    }
    /* One byte of budget: no scratch fits, so the single-threaded way must give the same. */
    ndx_options tight = {.num_threads = 3, .bad_indices = policy, .max_memory = 1};
    ndx_tensor inplace = copy_tensor(tensor);
    assert_ok(ndx_tensor_scatter_nd(op, &inplace, indices, updates, &tight, &inplace, &err), &err);
    assert_tensor_eq(&inplace, &expect);
    test_tensor_free(&inplace);
    if (test_nbytes(tensor) > 0) {
        tight.max_memory = test_nbytes(tensor); /* the output, and nothing more */
        ndx_tensor out = {0};
        assert_ok(ndx_tensor_scatter_nd(op, tensor, indices, updates, &tight, &out, &err), &err);
        assert_tensor_eq(&out, &expect);
        ndx_tensor_free(&out);
    }
    test_tensor_free(&expect);
}

/* scatter_nd at 1, 2 and 3 threads, allocating and into a given output; the shape function must
 * describe what the op writes. */
static void check_scatter_nd(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                             const int64_t *shape, ndx_bad_indices policy) {
    ndx_tensor expect = reference_scatter_nd(indices, updates, rank, shape);
    ndx_error err;
    ndx_tensor described;
    assert_ok(ndx_scatter_nd_shape(indices, updates, rank, shape, &described, &err), &err);
    assert_null(described.data);
    assert_int_equal(described.itemsize, expect.itemsize);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = {.num_threads = threads, .bad_indices = policy};
        ndx_tensor out = {0};
        assert_ok(ndx_scatter_nd(indices, updates, rank, shape, &opt, &out, &err), &err);
        assert_tensor_eq(&out, &expect);
        ndx_tensor_free(&out);
        ndx_tensor given = test_tensor(expect.dtype, expect.itemsize, rank, shape);
        memset(given.data, 0x5A, test_nbytes(&given));
        assert_ok(ndx_scatter_nd(indices, updates, rank, shape, &opt, &given, &err), &err);
        assert_tensor_eq(&given, &expect);
        test_tensor_free(&given);
    }
    test_tensor_free(&expect);
}

/* ---- random cases ---------------------------------------------------------------------------- */

static const ndx_dtype index_dtypes[] = {NDX_INT16, NDX_INT32, NDX_INT64};

typedef struct random_case {
    ndx_tensor tensor, indices, updates;
} random_case;

/* A target of rank 0 to 10 (sometimes with a zero dimension), index depth 0 to rank, index rows
 * drawn mostly from a small pool (heavy duplicates), some rows out of range if `bad`. */
static random_case make_case(test_rng *r, ndx_dtype dt, int bad) {
    random_case c;
    size_t width = dt == NDX_STRING ? (size_t)rng_range(r, 1, 4) : 0;
    int rank = (int)rng_range(r, 0, 10);
    int64_t shape[NDX_MAX_RANK];
    int has_zero = rng_below(r, 8) == 0;
    for (int i = 0; i < rank; i++) shape[i] = rng_range(r, 1, rank > 4 ? 2 : 4);
    if (has_zero && rank > 0) shape[rng_below(r, rank)] = 0;
    int64_t count = 1;
    for (int i = 0; i < rank; i++) count *= shape[i];
    int depth = (int)rng_range(r, 0, rank);

    int lead = (int)rng_range(r, 0, 3);
    int64_t ishape[4];
    for (int i = 0; i < lead; i++) ishape[i] = rng_range(r, 1, 4);
    if (lead > 0 && (count == 0 || rng_below(r, 10) == 0)) ishape[0] = 0; /* no rows at all */
    if (count == 0 && lead == 0) lead = 1, ishape[0] = 0; /* an empty target takes no rows */
    ishape[lead] = depth;
    ndx_dtype idt = index_dtypes[rng_below(r, 3)];
    c.indices = test_tensor(idt, 0, lead + 1, ishape);
    int64_t rows = 1;
    for (int i = 0; i < lead; i++) rows *= ishape[i];

    int64_t pool[3][NDX_MAX_RANK];
    int pool_size = (int)rng_range(r, 1, 3);
    for (int p = 0; p < pool_size; p++)
        for (int k = 0; k < depth; k++) pool[p][k] = shape[k] ? rng_below(r, shape[k]) : 0;
    for (int64_t row = 0; row < rows; row++) {
        int from_pool = rng_below(r, 10) < 7;
        int p = (int)rng_below(r, pool_size);
        for (int k = 0; k < depth; k++) {
            int64_t v = from_pool ? pool[p][k] : rng_below(r, shape[k]);
            test_set_index(&c.indices, row * depth + k, v);
        }
        if (bad && depth > 0 && rng_below(r, 6) == 0) {
            int k = (int)rng_below(r, depth);
            test_set_index(&c.indices, row * depth + k,
                           rng_below(r, 2) ? shape[k] + rng_below(r, 3) : -1 - rng_below(r, 3));
        }
    }

    c.tensor = test_tensor(dt, width, rank, shape);
    int64_t ushape[NDX_MAX_RANK + 4];
    int urank = 0;
    for (int i = 0; i < lead; i++) ushape[urank++] = ishape[i];
    for (int i = depth; i < rank; i++) ushape[urank++] = shape[i];
    c.updates = test_tensor(dt, width, urank, ushape);
    return c;
}

static void free_case(random_case *c) {
    test_tensor_free(&c->tensor);
    test_tensor_free(&c->indices);
    test_tensor_free(&c->updates);
}

static void random_tensor_scatter(void **state) {
    (void)state;
    test_rng r = {1};
    for (int o = 0; o < 5; o++) {
        for (int d = 0; d < test_all_dtypes_count; d++) {
            ndx_dtype dt = test_all_dtypes[d];
            if (!op_supports(all_ops[o], dt)) continue;
            int specials = all_ops[o] == NDX_SCATTER_MIN || all_ops[o] == NDX_SCATTER_MAX ||
                           all_ops[o] == NDX_SCATTER_UPDATE;
            for (int rep = 0; rep < 12; rep++) {
                random_case c = make_case(&r, dt, 0);
                fill_values(&r, &c.tensor, specials);
                fill_values(&r, &c.updates, specials);
                check_tensor_scatter(all_ops[o], &c.tensor, &c.indices, &c.updates,
                                     NDX_BAD_INDICES_ERROR);
                free_case(&c);
            }
        }
    }
}

/* With NDX_BAD_INDICES_IGNORE, rows out of range are skipped (the reference skips them too). */
static void random_ignore_skips_bad_rows(void **state) {
    (void)state;
    test_rng r = {2};
    for (int o = 0; o < 5; o++) {
        for (int d = 0; d < test_all_dtypes_count; d++) {
            ndx_dtype dt = test_all_dtypes[d];
            if (!op_supports(all_ops[o], dt)) continue;
            for (int rep = 0; rep < 6; rep++) {
                random_case c = make_case(&r, dt, 1);
                fill_values(&r, &c.tensor, 0);
                fill_values(&r, &c.updates, 0);
                check_tensor_scatter(all_ops[o], &c.tensor, &c.indices, &c.updates,
                                     NDX_BAD_INDICES_IGNORE);
                free_case(&c);
            }
        }
    }
}

static void random_scatter_nd(void **state) {
    (void)state;
    test_rng r = {3};
    for (int d = 0; d < test_all_dtypes_count; d++) {
        for (int rep = 0; rep < 16; rep++) {
            int bad = rep % 4 == 3;
            random_case c = make_case(&r, test_all_dtypes[d], bad);
            fill_values(&r, &c.updates, 0);
            check_scatter_nd(&c.indices, &c.updates, c.tensor.rank, c.tensor.shape,
                             bad ? NDX_BAD_INDICES_IGNORE : NDX_BAD_INDICES_ERROR);
            free_case(&c);
        }
    }
}

/* ---- large, duplicate-heavy inputs: every way of splitting the work ------------------------- */

/* `rows` index rows of depth `depth` into `shape`, drawn from `distinct` destinations. */
static ndx_tensor duplicate_heavy_indices(test_rng *r, int64_t rows, int depth, const int64_t *shape,
                                          int64_t distinct) {
    ndx_tensor idx = test_tensor_v(NDX_INT64, 0, 2, rows, depth);
    int64_t *pool = malloc(sizeof(int64_t) * (size_t)(distinct * depth));
    assert_non_null(pool);
    for (int64_t p = 0; p < distinct * depth; p++) pool[p] = rng_below(r, shape[p % depth]);
    for (int64_t i = 0; i < rows; i++) {
        int64_t p = rng_below(r, distinct);
        for (int k = 0; k < depth; k++) test_set_index(&idx, i * depth + k, pool[p * depth + k]);
    }
    free(pool);
    return idx;
}

typedef struct large_case {
    ndx_dtype dtype;
    size_t width;
    int rank;
    int64_t shape[3];
    int depth;
    int64_t rows;
    int64_t distinct;
} large_case;

static void run_large(const large_case *lc, const ndx_scatter_op *ops, int n_ops, uint64_t seed) {
    test_rng r = {seed};
    ndx_tensor tensor = test_tensor(lc->dtype, lc->width, lc->rank, lc->shape);
    ndx_tensor idx = duplicate_heavy_indices(&r, lc->rows, lc->depth, lc->shape, lc->distinct);
    int64_t ushape[4];
    int urank = 0;
    ushape[urank++] = lc->rows;
    for (int i = lc->depth; i < lc->rank; i++) ushape[urank++] = lc->shape[i];
    ndx_tensor upd = test_tensor(lc->dtype, lc->width, urank, ushape);
    for (int o = 0; o < n_ops; o++) {
        int specials = ops[o] == NDX_SCATTER_MIN || ops[o] == NDX_SCATTER_MAX;
        fill_values(&r, &tensor, specials);
        fill_values(&r, &upd, specials);
        check_tensor_scatter(ops[o], &tensor, &idx, &upd, NDX_BAD_INDICES_ERROR);
    }
    check_scatter_nd(&idx, &upd, lc->rank, lc->shape, NDX_BAD_INDICES_ERROR);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

static void large_elements_in_blocks(void **state) {
    (void)state;
    /* Single float32 elements: bucketed by block at 2 and 3 threads. */
    large_case f32 = {NDX_FLOAT32, 0, 2, {256, 256}, 2, 70000, 5000};
    run_large(&f32, all_ops, 5, 10);
    /* float16: the rounding at every step must survive the bucketing. */
    large_case f16 = {NDX_FLOAT16, 0, 1, {40000}, 1, 150000, 3000};
    const ndx_scatter_op add_sub[] = {NDX_SCATTER_ADD, NDX_SCATTER_SUB};
    run_large(&f16, add_sub, 2, 11);
    /* A large output at one thread is also cut into blocks. */
    large_case big = {NDX_FLOAT32, 0, 1, {(1 << 20) + 3}, 1, 140000, 100000};
    run_large(&big, add_sub, 1, 12);
}

static void large_narrow_slices(void **state) {
    (void)state;
    const ndx_scatter_op add_update[] = {NDX_SCATTER_ADD, NDX_SCATTER_UPDATE};
    large_case pairs = {NDX_FLOAT32, 0, 2, {20000, 2}, 1, 40000, 2000}; /* 8-byte slices travel */
    run_large(&pairs, add_update, 2, 20);
    large_case c128 = {NDX_COMPLEX128, 0, 1, {30000}, 1, 20000, 500}; /* 16-byte elements */
    run_large(&c128, add_update, 2, 21);
    large_case triples = {NDX_FLOAT64, 0, 2, {5000, 3}, 1, 50000, 700}; /* bucketed by owner */
    run_large(&triples, add_update, 2, 22);
    large_case strings = {NDX_STRING, 5, 2, {3000, 1}, 1, 60000, 400};
    run_large(&strings, add_update + 1, 1, 23);
}

static void large_wide_slices(void **state) {
    (void)state;
    /* Many 800-byte slices, 8-byte indices: each owner walks every row and applies its own. */
    large_case wide = {NDX_FLOAT32, 0, 2, {300, 200}, 1, 2000, 50};
    run_large(&wide, all_ops, 5, 30);
    /* 160-byte slices: too narrow for that, so rows are bucketed by owner (over 1 MB of
     * updates, or one thread does it). */
    large_case medium = {NDX_FLOAT32, 0, 2, {300, 40}, 1, 8000, 50};
    run_large(&medium, all_ops, 5, 33);
    /* Too few slices to share out: every thread takes columns of every slice. */
    const ndx_scatter_op add_max[] = {NDX_SCATTER_ADD, NDX_SCATTER_MAX};
    large_case one = {NDX_INT32, 0, 2, {1, 70000}, 1, 6, 1}; /* every row on one slice */
    run_large(&one, add_max, 2, 31);
    large_case five = {NDX_FLOAT64, 0, 2, {5, 3000}, 1, 40, 5};
    run_large(&five, add_max, 2, 32);
}

/* Budgets from "the output only" up to "everything": whatever scratch fits, the bytes agree. */
static void any_budget_gives_the_same_bytes(void **state) {
    (void)state;
    test_rng r = {50};
    int64_t shape[2] = {300, 300};
    ndx_tensor tensor = test_tensor_v(NDX_FLOAT32, 0, 2, 300, 300);
    ndx_tensor idx = duplicate_heavy_indices(&r, 90000, 2, shape, 9000);
    ndx_tensor upd = test_tensor_v(NDX_FLOAT32, 0, 1, 90000);
    fill_values(&r, &tensor, 0);
    fill_values(&r, &upd, 0);
    ndx_tensor expect = reference_tensor_scatter(NDX_SCATTER_ADD, &tensor, &idx, &upd);
    size_t out_bytes = test_nbytes(&tensor);
    for (size_t extra = 0; extra <= 90000 * 8 + 65536; extra += 40000) {
        for (int threads = 1; threads <= 3; threads += 2) {
            ndx_options opt = {.num_threads = threads, .max_memory = out_bytes + extra};
            ndx_tensor out = {0};
            ndx_error err;
            assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, &opt, &out, &err),
                      &err);
            assert_tensor_eq(&out, &expect);
            ndx_tensor_free(&out);
        }
    }
    test_tensor_free(&expect);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

/* ---- the TensorFlow documentation examples --------------------------------------------------- */

static void documented_examples(void **state) {
    (void)state;
    ndx_error err;
    /* tensor_scatter_nd_add into ones([8]) at [[4], [3], [1], [7]]. */
    int32_t ones8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    ndx_tensor tensor = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){8}, ones8);
    ndx_tensor idx = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){4, 1}, (int32_t[]){4, 3, 1, 7});
    ndx_tensor upd = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){4}, (int32_t[]){9, 10, 11, 12});
    ndx_tensor want = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){8},
                                       (int32_t[]){1, 12, 1, 11, 10, 1, 1, 13});
    ndx_tensor out = {0};
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    test_tensor_free(&want);

    /* tensor_scatter_nd_add of two 4x4 slices into ones([4, 4, 4]) at [[0], [2]]. */
    int32_t ones64[64], slices[32], expect[64];
    for (int i = 0; i < 64; i++) ones64[i] = 1;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 4; k++) slices[s * 16 + i * 4 + k] = 5 + i;
    const int32_t stated[4][4][4] = {{{6, 6, 6, 6}, {7, 7, 7, 7}, {8, 8, 8, 8}, {9, 9, 9, 9}},
                                     {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}},
                                     {{6, 6, 6, 6}, {7, 7, 7, 7}, {8, 8, 8, 8}, {9, 9, 9, 9}},
                                     {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}};
    memcpy(expect, stated, sizeof expect);
    tensor = test_tensor_from(NDX_INT32, 0, 3, (int64_t[]){4, 4, 4}, ones64);
    idx = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){2, 1}, (int32_t[]){0, 2});
    upd = test_tensor_from(NDX_INT32, 0, 3, (int64_t[]){2, 4, 4}, slices);
    want = test_tensor_from(NDX_INT32, 0, 3, (int64_t[]){4, 4, 4}, expect);
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out);
    /* and in place */
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, NULL, &tensor, &err), &err);
    assert_tensor_eq(&tensor, &want);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    test_tensor_free(&want);
}

/* ---- arithmetic corner cases ------------------------------------------------------------------- */

/* One-element helper: tensor [n] of dtype, all rows on element 0 (depth 1), returns element 0. */
static void scatter_on_first(ndx_scatter_op op, ndx_dtype dt, const void *start, int n_updates,
                             const void *updates, void *result) {
    size_t size = ndx_dtype_size(dt);
    ndx_tensor tensor = test_tensor_from(dt, 0, 1, (int64_t[]){1}, start);
    ndx_tensor idx = test_tensor_v(NDX_INT64, 0, 2, n_updates, 1);
    ndx_tensor upd = test_tensor_from(dt, 0, 1, (int64_t[]){n_updates}, updates);
    ndx_error err;
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = {.num_threads = threads, .bad_indices = NDX_BAD_INDICES_ERROR};
        ndx_tensor out = {0};
        assert_ok(ndx_tensor_scatter_nd(op, &tensor, &idx, &upd, &opt, &out, &err), &err);
        if (threads > 1) assert_memory_equal(out.data, result, size);
        memcpy(result, out.data, size);
        ndx_tensor_free(&out);
    }
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

static void half_types_round_every_step(void **state) {
    (void)state;
    /* 2048 + 1 + 1 + 1 in float16: each 2049 ties back to even 2048, so the result stays 2048;
     * summing in float and rounding once would give 2051 -> 2052. */
    uint16_t start = ndx_float_to_half(2048.0f), one = ndx_float_to_half(1.0f), got;
    uint16_t ones[3] = {one, one, one};
    scatter_on_first(NDX_SCATTER_ADD, NDX_FLOAT16, &start, 3, ones, &got);
    assert_int_equal(got, ndx_float_to_half(2048.0f));
    assert_int_not_equal(ndx_float_to_half(2048.0f + 3.0f), ndx_float_to_half(2048.0f));
    /* The same with sub: 2048 - 1 = 2047 is exact in float16 (ulp 1 below 2048), and so on. */
    scatter_on_first(NDX_SCATTER_SUB, NDX_FLOAT16, &start, 3, ones, &got);
    assert_true(ndx_half_to_float(got) == 2045.0f);
    /* bfloat16: 256 + 1 ties to even 256 every time (ulp 2), 259 would round to 260. */
    uint16_t bstart = ndx_float_to_bf16(256.0f), bone = ndx_float_to_bf16(1.0f);
    uint16_t bones[3] = {bone, bone, bone};
    scatter_on_first(NDX_SCATTER_ADD, NDX_BFLOAT16, &bstart, 3, bones, &got);
    assert_int_equal(got, ndx_float_to_bf16(256.0f));
    assert_int_equal(ndx_float_to_bf16(259.0f), ndx_float_to_bf16(260.0f));
    /* scatter_nd rounds at every step too: 2048 then three ones, starting from 0. */
    uint16_t seq[4] = {start, one, one, one};
    ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 2, 4, 1);
    ndx_tensor upd = test_tensor_from(NDX_FLOAT16, 0, 1, (int64_t[]){4}, seq);
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_scatter_nd(&idx, &upd, 1, (int64_t[]){2}, NULL, &out, &err), &err);
    assert_int_equal(((uint16_t *)out.data)[0], ndx_float_to_half(2048.0f));
    assert_int_equal(((uint16_t *)out.data)[1], 0);
    ndx_tensor_free(&out);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

static void integers_wrap_around(void **state) {
    (void)state;
    int8_t i8 = 127, i8u[2] = {1, 1}, i8r;
    scatter_on_first(NDX_SCATTER_ADD, NDX_INT8, &i8, 2, i8u, &i8r);
    assert_int_equal(i8r, -127);
    i8 = -128;
    scatter_on_first(NDX_SCATTER_SUB, NDX_INT8, &i8, 1, i8u, &i8r);
    assert_int_equal(i8r, 127);
    uint8_t u8 = 0, u8u[1] = {1}, u8r;
    scatter_on_first(NDX_SCATTER_SUB, NDX_UINT8, &u8, 1, u8u, &u8r);
    assert_int_equal(u8r, 255);
    int16_t i16 = 32767, i16u[1] = {2}, i16r;
    scatter_on_first(NDX_SCATTER_ADD, NDX_INT16, &i16, 1, i16u, &i16r);
    assert_int_equal(i16r, -32767);
    int32_t i32 = INT32_MIN, i32u[1] = {1}, i32r;
    scatter_on_first(NDX_SCATTER_SUB, NDX_INT32, &i32, 1, i32u, &i32r);
    assert_int_equal(i32r, INT32_MAX);
    int64_t i64 = INT64_MAX, i64u[2] = {1, INT64_MAX}, i64r;
    scatter_on_first(NDX_SCATTER_ADD, NDX_INT64, &i64, 2, i64u, &i64r);
    assert_int_equal(i64r, -1); /* MAX + 1 wraps to MIN; MIN + MAX = -1 */
    uint64_t u64 = 0, u64u[1] = {UINT64_MAX}, u64r;
    scatter_on_first(NDX_SCATTER_ADD, NDX_UINT64, &u64, 1, u64u, &u64r);
    assert_true(u64r == UINT64_MAX);
    scatter_on_first(NDX_SCATTER_SUB, NDX_UINT64, &u64, 1, u64u, &u64r);
    assert_true(u64r == 1);
    uint32_t u32 = 5, u32u[2] = {UINT32_MAX, UINT32_MAX}, u32r;
    scatter_on_first(NDX_SCATTER_ADD, NDX_UINT32, &u32, 2, u32u, &u32r);
    assert_int_equal(u32r, 3);
    /* min/max compare unsigned values as unsigned and signed as signed. */
    uint16_t u16 = 1, u16u[1] = {0xffff}, u16r;
    scatter_on_first(NDX_SCATTER_MAX, NDX_UINT16, &u16, 1, u16u, &u16r);
    assert_int_equal(u16r, 0xffff);
    int16_t s16 = 1, s16u[1] = {-1}, s16r;
    scatter_on_first(NDX_SCATTER_MAX, NDX_INT16, &s16, 1, s16u, &s16r);
    assert_int_equal(s16r, 1);
}

static void min_max_nan_rules(void **state) {
    (void)state;
    /* A NaN already in the tensor stays; a NaN update is ignored; ties keep the current value
     * (so +0 stays +0 against -0). */
    float start[5] = {NAN, 1.0f, 2.0f, NAN, 0.0f};
    float upd[5] = {0.0f, NAN, 1.0f, NAN, -0.0f};
    ndx_tensor tensor = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){5}, start);
    ndx_tensor idx = test_tensor_from(NDX_INT16, 0, 2, (int64_t[]){5, 1}, (int16_t[]){0, 1, 2, 3, 4});
    ndx_tensor u = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){5}, upd);
    ndx_error err;
    ndx_tensor out = {0};
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_MIN, &tensor, &idx, &u, NULL, &out, &err), &err);
    float *m = out.data;
    assert_true(isnan(m[0]) && m[1] == 1.0f && m[2] == 1.0f && isnan(m[3]));
    assert_true(m[4] == 0.0f && !signbit(m[4]));
    ndx_tensor_free(&out);
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_MAX, &tensor, &idx, &u, NULL, &out, &err), &err);
    m = out.data;
    assert_true(isnan(m[0]) && m[1] == 1.0f && m[2] == 2.0f && isnan(m[3]));
    assert_true(m[4] == 0.0f && !signbit(m[4]));
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&u);

    /* The same rules for float64, float16 and bfloat16. */
    double dstart[5] = {NAN, 1.0, 2.0, NAN, -0.0}, dupd[5] = {0.0, NAN, 1.0, NAN, 0.0};
    tensor = test_tensor_from(NDX_FLOAT64, 0, 1, (int64_t[]){5}, dstart);
    u = test_tensor_from(NDX_FLOAT64, 0, 1, (int64_t[]){5}, dupd);
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_MAX, &tensor, &idx, &u, NULL, &out, &err), &err);
    double *dm = out.data;
    assert_true(isnan(dm[0]) && dm[1] == 1.0 && dm[2] == 2.0 && isnan(dm[3]) && signbit(dm[4]));
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&u);
    for (int b = 0; b < 2; b++) {
        ndx_dtype dt = b ? NDX_BFLOAT16 : NDX_FLOAT16;
        uint16_t hs[5], hu[5];
        for (int i = 0; i < 5; i++) {
            hs[i] = dt == NDX_FLOAT16 ? ndx_float_to_float16(start[i]) : ndx_float_to_bfloat16(start[i]);
            hu[i] = dt == NDX_FLOAT16 ? ndx_float_to_float16(upd[i]) : ndx_float_to_bfloat16(upd[i]);
        }
        tensor = test_tensor_from(dt, 0, 1, (int64_t[]){5}, hs);
        u = test_tensor_from(dt, 0, 1, (int64_t[]){5}, hu);
        assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_MIN, &tensor, &idx, &u, NULL, &out, &err), &err);
        uint16_t *hm = out.data;
        assert_int_equal(hm[0], hs[0]);
        assert_int_equal(hm[1], hs[1]);
        assert_int_equal(hm[2], hu[2]);
        assert_int_equal(hm[3], hs[3]);
        assert_int_equal(hm[4], hs[4]);
        ndx_tensor_free(&out);
        test_tensor_free(&tensor);
        test_tensor_free(&u);
    }
    test_tensor_free(&idx);
}

static void update_last_wins_and_complex_add(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor tensor = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){3}, (int64_t[]){7, 8, 9});
    ndx_tensor idx = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){4, 1}, (int32_t[]){2, 0, 2, 2});
    ndx_tensor upd = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){4}, (int64_t[]){1, 2, 3, 4});
    ndx_tensor out = {0};
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_UPDATE, &tensor, &idx, &upd, NULL, &out, &err), &err);
    assert_int_equal(((int64_t *)out.data)[0], 2);
    assert_int_equal(((int64_t *)out.data)[1], 8);
    assert_int_equal(((int64_t *)out.data)[2], 4);
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&upd);

    float cstart[6] = {1, 2, 3, 4, 5, 6}, cupd[8] = {1, 10, 2, 20, 3, 30, 4, 40};
    tensor = test_tensor_from(NDX_COMPLEX64, 0, 1, (int64_t[]){3}, cstart);
    upd = test_tensor_from(NDX_COMPLEX64, 0, 1, (int64_t[]){4}, cupd);
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_SUB, &tensor, &idx, &upd, NULL, &out, &err), &err);
    float *c = out.data; /* [0] -= (2+20i); [2] -= (1+10i) + (3+30i) + (4+40i) */
    assert_true(c[0] == -1 && c[1] == -18 && c[2] == 3 && c[3] == 4 && c[4] == -3 && c[5] == -74);
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&upd);
    test_tensor_free(&idx);
}

/* ---- scatter_nd: bools and strings ------------------------------------------------------------ */

static void scatter_nd_bool_or(void **state) {
    (void)state;
    ndx_tensor idx = test_tensor_from(NDX_INT64, 0, 2, (int64_t[]){5, 1}, (int64_t[]){0, 0, 0, 2, 2});
    ndx_tensor upd = test_tensor_from(NDX_BOOL, 0, 1, (int64_t[]){5}, (uint8_t[]){1, 0, 1, 0, 0});
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_scatter_nd(&idx, &upd, 1, (int64_t[]){3}, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((uint8_t[]){1, 0, 0}), 3);
    ndx_tensor_free(&out);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

static void scatter_nd_strings_concatenate(void **state) {
    (void)state;
    /* Three pieces meet at element 1: "abc" + "de" + "f" = "abcdef", wider than any update. */
    ndx_tensor idx = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){5, 1}, (int32_t[]){1, 0, 1, 3, 1});
    ndx_tensor upd = test_strings(3, 1, (int64_t[]){5}, (const char *[]){"abc", "x", "de", "", "f"});
    ndx_error err;
    ndx_tensor shape_out;
    assert_ok(ndx_scatter_nd_shape(&idx, &upd, 1, (int64_t[]){4}, &shape_out, &err), &err);
    assert_int_equal(shape_out.dtype, NDX_STRING);
    assert_int_equal(shape_out.itemsize, 6);
    ndx_tensor out = {0};
    assert_ok(ndx_scatter_nd(&idx, &upd, 1, (int64_t[]){4}, NULL, &out, &err), &err);
    ndx_tensor want = test_strings(6, 1, (int64_t[]){4}, (const char *[]){"x", "abcdef", "", ""});
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out);
    test_tensor_free(&want);
    /* A caller's output of another width is refused before anything is written. */
    ndx_tensor narrow = test_tensor(NDX_STRING, 3, 1, (int64_t[]){4});
    test_guard g = test_guard_fill(&narrow, 0x33);
    assert_fails(ndx_scatter_nd(&idx, &upd, 1, (int64_t[]){4}, NULL, &narrow, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "string(6)");
    assert_untouched(&g, &narrow);
    test_tensor_free(&narrow);
    test_tensor_free(&idx);
    test_tensor_free(&upd);

    /* No rows: every element is "" and the width is 1. Embedded NULs end a string. */
    idx = test_tensor_v(NDX_INT64, 0, 2, 0, 1);
    upd = test_tensor(NDX_STRING, 4, 1, (int64_t[]){0});
    assert_ok(ndx_scatter_nd(&idx, &upd, 1, (int64_t[]){2}, NULL, &out, &err), &err);
    assert_int_equal(out.itemsize, 1);
    assert_memory_equal(out.data, "\0\0", 2);
    ndx_tensor_free(&out);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    idx = test_tensor_from(NDX_INT64, 0, 2, (int64_t[]){2, 1}, (int64_t[]){0, 0});
    upd = test_tensor_from(NDX_STRING, 4, 1, (int64_t[]){2}, "a\0bcxyzw");
    assert_ok(ndx_scatter_nd(&idx, &upd, 1, (int64_t[]){1}, NULL, &out, &err), &err);
    assert_int_equal(out.itemsize, 5);
    assert_memory_equal(out.data, "axyzw", 5);
    ndx_tensor_free(&out);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

/* ---- shapes: depth 0, scalars, empty inputs ---------------------------------------------------- */

static void depth_zero_and_scalars(void **state) {
    (void)state;
    ndx_error err;
    /* Depth 0: every row updates the whole tensor. */
    ndx_tensor tensor = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){2, 2}, (int32_t[]){1, 2, 3, 4});
    ndx_tensor idx = test_tensor_v(NDX_INT64, 0, 2, 2, 0);
    ndx_tensor upd = test_tensor_from(NDX_INT32, 0, 3, (int64_t[]){2, 2, 2},
                                      (int32_t[]){10, 20, 30, 40, 1, 1, 1, 1});
    ndx_tensor out = {0};
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((int32_t[]){12, 23, 34, 45}), 16);
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    /* A scalar tensor takes depth-0 rows; scatter_nd to a scalar sums them. */
    tensor = test_tensor_from(NDX_FLOAT64, 0, 0, NULL, (double[]){1.5});
    idx = test_tensor_v(NDX_INT16, 0, 2, 3, 0);
    upd = test_tensor_from(NDX_FLOAT64, 0, 1, (int64_t[]){3}, (double[]){1, 2, 4});
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_MAX, &tensor, &idx, &upd, NULL, &out, &err), &err);
    assert_true(*(double *)out.data == 4.0);
    ndx_tensor_free(&out);
    assert_ok(ndx_scatter_nd(&idx, &upd, 0, NULL, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 0);
    assert_true(*(double *)out.data == 7.0);
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    /* A rank-1 indices is one index row. */
    tensor = test_tensor_from(NDX_UINT8, 0, 2, (int64_t[]){2, 3}, (uint8_t[]){0, 0, 0, 0, 0, 0});
    idx = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){1, 2});
    upd = test_tensor_from(NDX_UINT8, 0, 0, NULL, (uint8_t[]){9});
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_UPDATE, &tensor, &idx, &upd, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((uint8_t[]){0, 0, 0, 0, 0, 9}), 6);
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

static void empty_inputs(void **state) {
    (void)state;
    ndx_error err;
    /* No rows: the output is a copy of the tensor. */
    ndx_tensor tensor = test_tensor_from(NDX_INT16, 0, 1, (int64_t[]){3}, (int16_t[]){4, 5, 6});
    ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 3, 2, 0, 1);
    ndx_tensor upd = test_tensor_v(NDX_INT16, 0, 2, 2, 0);
    ndx_tensor out = {0};
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_SUB, &tensor, &idx, &upd, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &tensor);
    ndx_tensor_free(&out);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    /* An empty tensor with no rows is fine, data may be NULL. */
    ndx_tensor empty = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){0, 4}, NULL);
    idx = test_tensor_v(NDX_INT64, 0, 2, 0, 1);
    ndx_tensor no_upd = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){0, 4}, NULL);
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &empty, &idx, &no_upd, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], 0);
    ndx_tensor_free(&out);
    assert_ok(ndx_scatter_nd(&idx, &no_upd, 2, (int64_t[]){0, 4}, NULL, &out, &err), &err);
    ndx_tensor_free(&out);
    test_tensor_free(&idx);
}

/* ---- errors ---------------------------------------------------------------------------------- */


/* Runs a failing tensor_scatter_nd both into a given output and in place, and checks that the
 * status and message are right and that neither the output nor the tensor changed. */
static void expect_tensor_scatter_fails(ndx_scatter_op op, ndx_tensor *tensor,
                                        const ndx_tensor *indices, const ndx_tensor *updates,
                                        const ndx_options *opt, ndx_status want,
                                        const char *needle) {
    ndx_error err;
    ndx_tensor out = test_tensor(tensor->dtype, tensor->itemsize, tensor->rank, tensor->shape);
    test_guard g = test_guard_fill(&out, 0xC3);
    test_guard t = test_guard_take(tensor);
    assert_fails(ndx_tensor_scatter_nd(op, tensor, indices, updates, opt, &out, &err), &err, want,
                 needle);
    assert_untouched(&g, &out);
    assert_untouched(&t, tensor);
    t = test_guard_take(tensor);
    assert_fails(ndx_tensor_scatter_nd(op, tensor, indices, updates, opt, tensor, &err), &err,
                 want, needle);
    assert_untouched(&t, tensor);
    ndx_tensor fresh = {0};
    assert_fails(ndx_tensor_scatter_nd(op, tensor, indices, updates, opt, &fresh, &err), &err,
                 want, needle);
    assert_null(fresh.data);
    test_tensor_free(&out);
}

/* ---- scatter into an empty output ------------------------------------------------------------ */

/* TensorFlow's rule (ScatterNdShapeHelper in common_shape_fns.cc, ValidEmptyOutputShape in
 * scatter_nd_op.cc): when the output has no elements, it is an error if indices or updates has
 * elements; with both empty the result is the empty output. Counted here straight from the
 * shapes, for every variant: scatter_nd (numbers and strings) and tensor_scatter_nd_* with every
 * op, allocating, into a given output and in place, and the shape functions. */
static void check_empty_output_case(int rank, const int64_t *shape, int lead, const int64_t *ishape,
                                    int depth) {
    int64_t ifull[4], ushape[8];
    int urank = 0;
    for (int i = 0; i < lead; i++) ifull[i] = ushape[urank++] = ishape[i];
    ifull[lead] = depth;
    for (int i = depth; i < rank; i++) ushape[urank++] = shape[i];
    ndx_tensor idx = test_tensor(NDX_INT32, 0, lead + 1, ifull);
    int64_t index_count = test_count(&idx), update_count = 1, rows = 1;
    for (int i = 0; i < urank; i++) update_count *= ushape[i];
    for (int i = 0; i < lead; i++) rows *= ishape[i];
    int refused = index_count > 0 || update_count > 0;
    char dims[64], needle[160];
    ndx_format_dims(dims, sizeof dims, rank, shape);
    ndx_error err;
    for (int strings = 0; strings < 2; strings++) {
        ndx_dtype dt = strings ? NDX_STRING : NDX_FLOAT32;
        size_t width = strings ? 3 : 0;
        ndx_tensor upd = test_tensor(dt, width, urank, ushape);
        ndx_tensor tensor = test_tensor(dt, width, rank, shape);
        for (int o = 0; o < 5; o++) {
            if (strings && all_ops[o] != NDX_SCATTER_UPDATE) continue;
            snprintf(needle, sizeof needle,
                     "tensor_scatter_nd_%s: indices has %lld index rows but tensor of shape %s "
                     "has no elements",
                     ndx_scatter_op_name(all_ops[o]), (long long)rows, dims);
            if (refused) {
                expect_tensor_scatter_fails(all_ops[o], &tensor, &idx, &upd, NULL,
                                            NDX_E_INVALID_ARGUMENT, needle);
                continue;
            }
            ndx_tensor out = {0};
            assert_ok(ndx_tensor_scatter_nd(all_ops[o], &tensor, &idx, &upd, NULL, &out, &err),
                      &err);
            assert_tensor_eq(&out, &tensor);
            ndx_tensor_free(&out);
            ndx_tensor given = test_tensor(dt, width, rank, shape);
            assert_ok(ndx_tensor_scatter_nd(all_ops[o], &tensor, &idx, &upd, NULL, &given, &err),
                      &err);
            assert_tensor_eq(&given, &tensor);
            test_tensor_free(&given);
            assert_ok(ndx_tensor_scatter_nd(all_ops[o], &tensor, &idx, &upd, NULL, &tensor, &err),
                      &err);
        }
        ndx_tensor described;
        ndx_status st = ndx_tensor_scatter_nd_shape(&tensor, &idx, &upd, &described, &err);
        if (refused)
            assert_fails(st, &err, NDX_E_INVALID_ARGUMENT, "has no elements");
        else
            assert_ok(st, &err);

        /* scatter_nd: an empty output of the updates' dtype (strings of width 1). */
        snprintf(needle, sizeof needle,
                 "scatter_nd: indices has %lld index rows but output of shape %s has no elements",
                 (long long)rows, dims);
        ndx_tensor out = {0};
        st = ndx_scatter_nd(&idx, &upd, rank, shape, NULL, &out, &err);
        if (refused) {
            assert_fails(st, &err, NDX_E_INVALID_ARGUMENT, needle);
            assert_null(out.data);
            assert_fails(ndx_scatter_nd_shape(&idx, &upd, rank, shape, &described, &err), &err,
                         NDX_E_INVALID_ARGUMENT, needle);
        } else {
            assert_ok(st, &err);
            ndx_tensor want = test_tensor(dt, strings ? 1 : 0, rank, shape);
            assert_tensor_eq(&out, &want);
            ndx_tensor_free(&out);
            assert_ok(ndx_scatter_nd_shape(&idx, &upd, rank, shape, &described, &err), &err);
            assert_int_equal(described.itemsize, want.itemsize);
            ndx_tensor given = test_tensor(dt, strings ? 1 : 0, rank, shape);
            assert_ok(ndx_scatter_nd(&idx, &upd, rank, shape, NULL, &given, &err), &err);
            test_tensor_free(&given);
            test_tensor_free(&want);
        }
        test_tensor_free(&upd);
        test_tensor_free(&tensor);
    }
    test_tensor_free(&idx);
}

static void empty_output_rule(void **state) {
    (void)state;
    /* The zero in front, in the middle, at the end; and a rank-1 output. */
    const int64_t shapes[4][3] = {{0, 3, 2}, {3, 0, 2}, {3, 2, 0}, {0}};
    const int ranks[4] = {3, 3, 3, 1};
    /* Index rows: one (rank-1 indices), two, none, and none in a 2-d grid. */
    const int64_t leads[4][2] = {{0, 0}, {2, 0}, {0, 0}, {2, 0}};
    const int lead_ranks[4] = {0, 1, 1, 2};
    int errors = 0, results = 0;
    for (int s = 0; s < 4; s++)
        for (int l = 0; l < 4; l++)
            for (int depth = 0; depth <= ranks[s]; depth++) {
                check_empty_output_case(ranks[s], shapes[s], lead_ranks[l], leads[l], depth);
                int64_t rows = 1;
                for (int i = 0; i < lead_ranks[l]; i++) rows *= leads[l][i];
                if (rows > 0 && depth > 0) errors++;
                else results++;
            }
    /* Both outcomes were exercised, depth 0 with rows among the results. */
    assert_true(errors > 0 && results > 0);
    /* The documented cases by hand: rows of depth 0 into [0, 3] with updates [2, 0, 3] give the
     * empty output (ndx refused them before); rows of depth 1 are refused. */
    ndx_error err;
    ndx_tensor tensor = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){0, 3}, NULL);
    ndx_tensor idx0 = test_tensor_v(NDX_INT64, 0, 2, 2, 0);
    ndx_tensor upd0 = ndx_tensor_make(NDX_INT64, 3, (int64_t[]){2, 0, 3}, NULL);
    ndx_tensor out = {0};
    assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx0, &upd0, NULL, &out, &err),
              &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], 0);
    assert_int_equal(out.shape[1], 3);
    ndx_tensor_free(&out);
    ndx_tensor idx1 = test_tensor_v(NDX_INT64, 0, 2, 2, 1);
    ndx_tensor upd1 = test_tensor_v(NDX_INT64, 0, 2, 2, 3);
    assert_fails(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx1, &upd1, NULL, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT,
                 "tensor_scatter_nd_add: indices has 2 index rows but tensor of shape [0, 3] has "
                 "no elements");
    assert_null(out.data);
    test_tensor_free(&idx0);
    test_tensor_free(&idx1);
    test_tensor_free(&upd1);
}

static void tensor_scatter_errors(void **state) {
    (void)state;
    ndx_tensor tensor = test_tensor_from(NDX_FLOAT32, 0, 2, (int64_t[]){4, 3},
                                         (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    ndx_tensor idx = test_tensor_from(NDX_INT64, 0, 2, (int64_t[]){2, 2}, (int64_t[]){0, 1, 5, 2});
    ndx_tensor upd = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){2}, (float[]){1, 2});
    ndx_options opt = {.num_threads = 2, .bad_indices = NDX_BAD_INDICES_ERROR};

    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &idx, &upd, &opt, NDX_E_OUT_OF_RANGE,
                                "tensor_scatter_nd_add: indices[1] = [5, 2] is out of range for "
                                "tensor of shape [4, 3]");
    test_set_index(&idx, 2, -1);
    expect_tensor_scatter_fails(NDX_SCATTER_MIN, &tensor, &idx, &upd, &opt, NDX_E_OUT_OF_RANGE,
                                "negative");
    /* [1, 3] is flat offset 6, inside the 12 elements, but column 3 of 3: each coordinate is
     * checked against its own dimension. */
    test_set_index(&idx, 2, 1);
    test_set_index(&idx, 3, 3);
    expect_tensor_scatter_fails(NDX_SCATTER_UPDATE, &tensor, &idx, &upd, &opt, NDX_E_OUT_OF_RANGE,
                                "indices[1] = [1, 3] is out of range");
    test_set_index(&idx, 3, 0);

    expect_tensor_scatter_fails((ndx_scatter_op)9, &tensor, &idx, &upd, &opt,
                                NDX_E_INVALID_ARGUMENT, "not an ndx_scatter_op");
    ndx_options bad_policy = {.num_threads = 1, .bad_indices = (ndx_bad_indices)5};
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &idx, &upd, &bad_policy,
                                NDX_E_INVALID_ARGUMENT, "bad_indices");

    /* updates of the wrong shape or type; the message names both shapes. */
    ndx_tensor upd3 = test_tensor_v(NDX_FLOAT32, 0, 1, 3);
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &idx, &upd3, &opt, NDX_E_INVALID_ARGUMENT,
                                "updates has shape [3] but indices of shape [2, 2] and tensor of "
                                "shape [4, 3] need updates of shape [2]");
    ndx_tensor upd64 = test_tensor_v(NDX_FLOAT64, 0, 1, 2);
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &idx, &upd64, &opt,
                                NDX_E_INVALID_ARGUMENT, "updates is float64 but tensor is float32");
    ndx_tensor idx1 = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){2, 1}, (int32_t[]){0, 1});
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &idx1, &upd, &opt, NDX_E_INVALID_ARGUMENT,
                                "need updates of shape [2, 3]");
    /* Index depth above the rank, float indices, scalar indices. */
    ndx_tensor idx3 = test_tensor_v(NDX_INT32, 0, 2, 2, 3);
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &idx3, &upd, &opt, NDX_E_INVALID_ARGUMENT,
                                "index depth 3, more than the rank 2");
    ndx_tensor fidx = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 2);
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &fidx, &upd, &opt, NDX_E_INVALID_ARGUMENT,
                                "indices must be int16, int32 or int64");
    ndx_tensor sidx = test_tensor_v(NDX_INT32, 0, 0, 0);
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &sidx, &upd, &opt, NDX_E_INVALID_ARGUMENT,
                                "scalar");
    /* A malformed updates view. */
    ndx_tensor neg = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){-2}, upd.data);
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &idx, &neg, &opt, NDX_E_INVALID_ARGUMENT,
                                "negative dimension");
    /* The output view must match, and the budget must hold the output. */
    ndx_error err;
    ndx_tensor wrong = test_tensor_v(NDX_FLOAT32, 0, 2, 3, 4);
    test_guard g = test_guard_fill(&wrong, 0x11);
    assert_fails(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, &opt, &wrong, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "[3, 4]");
    assert_untouched(&g, &wrong);
    test_tensor_free(&wrong);
    assert_fails(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, &opt, NULL, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "out is NULL");
    ndx_options small = {.num_threads = 1, .max_memory = 8};
    ndx_tensor fresh = {0};
    assert_fails(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tensor, &idx, &upd, &small, &fresh, &err),
                 &err, NDX_E_MEMORY_BUDGET, "48 bytes");
    assert_null(fresh.data);
    assert_fails(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, NULL, &idx, &upd, &opt, &fresh, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "tensor is NULL");

    /* Rows but nothing to update. */
    ndx_tensor empty = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 0);
    ndx_tensor empty_upd = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 0);
    ndx_tensor one_col = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){2, 1}, (int32_t[]){0, 1});
    expect_tensor_scatter_fails(NDX_SCATTER_ADD, &empty, &one_col, &empty_upd, &opt,
                                NDX_E_INVALID_ARGUMENT,
                                "indices has 2 index rows but tensor of shape [4, 0] has no elements");

    test_tensor_free(&upd3);
    test_tensor_free(&upd64);
    test_tensor_free(&idx1);
    test_tensor_free(&idx3);
    test_tensor_free(&fidx);
    test_tensor_free(&sidx);
    test_tensor_free(&empty);
    test_tensor_free(&empty_upd);
    test_tensor_free(&one_col);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

static void unsupported_dtypes(void **state) {
    (void)state;
    ndx_options opt = {.num_threads = 1, .bad_indices = NDX_BAD_INDICES_ERROR};
    ndx_tensor idx = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){1, 1}, (int32_t[]){0});
    for (int d = 0; d < test_all_dtypes_count; d++) {
        ndx_dtype dt = test_all_dtypes[d];
        size_t w = dt == NDX_STRING ? 3 : 0;
        ndx_tensor tensor = test_tensor_v(dt, w, 1, 2);
        ndx_tensor upd = test_tensor_v(dt, w, 1, 1);
        for (int o = 0; o < 5; o++) {
            if (op_supports(all_ops[o], dt)) continue;
            char needle[64];
            snprintf(needle, sizeof needle, "tensor_scatter_nd_%s: %s tensors are not supported",
                     ndx_scatter_op_name(all_ops[o]), ndx_dtype_name(dt));
            expect_tensor_scatter_fails(all_ops[o], &tensor, &idx, &upd, &opt, NDX_E_UNSUPPORTED,
                                        needle);
        }
        test_tensor_free(&tensor);
        test_tensor_free(&upd);
    }
    test_tensor_free(&idx);
    assert_string_equal(ndx_scatter_op_name(NDX_SCATTER_UPDATE), "update");
    assert_string_equal(ndx_scatter_op_name(NDX_SCATTER_MAX), "max");
    assert_string_equal(ndx_scatter_op_name((ndx_scatter_op)7), "invalid");
}

/* A bad row at the very end of a large input: every way of running checks all rows first. */
static void late_bad_row_leaves_tensor_untouched(void **state) {
    (void)state;
    test_rng r = {40};
    int64_t shape[2] = {256, 256};
    ndx_tensor tensor = test_tensor_v(NDX_FLOAT32, 0, 2, 256, 256);
    fill_values(&r, &tensor, 0);
    ndx_tensor idx = duplicate_heavy_indices(&r, 80000, 2, shape, 4000);
    test_set_index(&idx, 79999 * 2 + 1, 256);
    ndx_tensor upd = test_tensor_v(NDX_FLOAT32, 0, 1, 80000);
    fill_values(&r, &upd, 0);
    ndx_tensor wide = test_tensor_v(NDX_FLOAT32, 0, 2, 8, 4096);
    ndx_tensor widx = duplicate_heavy_indices(&r, 100, 1, (int64_t[]){8, 4096}, 5);
    test_set_index(&widx, 99, -3);
    ndx_tensor wupd = test_tensor_v(NDX_FLOAT32, 0, 2, 100, 4096);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = {.num_threads = threads, .bad_indices = NDX_BAD_INDICES_ERROR};
        expect_tensor_scatter_fails(NDX_SCATTER_ADD, &tensor, &idx, &upd, &opt, NDX_E_OUT_OF_RANGE,
                                    ", 256] is out of range for tensor of shape [256, 256]");
        expect_tensor_scatter_fails(NDX_SCATTER_MAX, &wide, &widx, &wupd, &opt, NDX_E_OUT_OF_RANGE,
                                    "indices[99] = [-3] has a negative index");
        ndx_error err;
        ndx_tensor out = {0};
        assert_fails(ndx_scatter_nd(&idx, &upd, 2, shape, &opt, &out, &err), &err,
                     NDX_E_OUT_OF_RANGE, "for output of shape [256, 256]");
        assert_null(out.data);
    }
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    test_tensor_free(&wide);
    test_tensor_free(&widx);
    test_tensor_free(&wupd);
}

static void scatter_nd_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor idx = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){2, 1}, (int32_t[]){0, 4});
    ndx_tensor upd = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){2, 2}, (int32_t[]){1, 2, 3, 4});
    ndx_tensor out = test_tensor_v(NDX_INT32, 0, 2, 4, 2);
    test_guard g = test_guard_fill(&out, 0x77);
    assert_fails(ndx_scatter_nd(&idx, &upd, 2, (int64_t[]){4, 2}, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "scatter_nd: indices[1] = [4] is out of range for output of shape [4, 2]");
    assert_untouched(&g, &out);
    g = test_guard_take(&out);
    assert_fails(ndx_scatter_nd(&idx, &upd, 2, (int64_t[]){4, 3}, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "need updates of shape [2, 3]");
    assert_fails(ndx_scatter_nd(&idx, &upd, -1, (int64_t[]){4, 2}, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "rank -1");
    assert_fails(ndx_scatter_nd(&idx, &upd, 2, NULL, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "shape is NULL");
    assert_fails(ndx_scatter_nd(&idx, &upd, 2, (int64_t[]){-4, 2}, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "negative dimension");
    assert_fails(ndx_scatter_nd(&idx, &upd, 3, (int64_t[]){INT64_MAX / 2, 4, 2}, NULL, &out, &err),
                 &err, NDX_E_OVERFLOW, "too large");
    assert_fails(ndx_scatter_nd(&idx, &upd, 2, (int64_t[]){0, 2}, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "has no elements");
    ndx_options bad_policy = {.num_threads = 1, .bad_indices = (ndx_bad_indices)-1};
    assert_fails(ndx_scatter_nd(&idx, &upd, 2, (int64_t[]){4, 2}, &bad_policy, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "bad_indices");
    assert_fails(ndx_scatter_nd(&idx, &upd, 2, (int64_t[]){4, 2}, NULL, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out is NULL");
    ndx_tensor shaped;
    assert_fails(ndx_scatter_nd_shape(&idx, &upd, 2, (int64_t[]){4, 3}, &shaped, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "scatter_nd: updates has shape [2, 2]");
    assert_fails(ndx_tensor_scatter_nd_shape(&out, &idx, &out, &shaped, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "tensor_scatter_nd: updates has shape [4, 2]");
    assert_untouched(&g, &out);
    /* Out of range rows with the ignore policy are skipped, not reported. */
    ndx_options ignore = {.num_threads = 2, .bad_indices = NDX_BAD_INDICES_IGNORE};
    assert_ok(ndx_scatter_nd(&idx, &upd, 2, (int64_t[]){4, 2}, &ignore, &out, &err), &err);
    assert_memory_equal(out.data, ((int32_t[]){1, 2, 0, 0, 0, 0, 0, 0}), 32);
    /* The string width ignores them too. */
    ndx_tensor sidx = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){3, 1}, (int32_t[]){0, 9, 0});
    ndx_tensor supd = test_strings(2, 1, (int64_t[]){3}, (const char *[]){"ab", "cd", "e"});
    assert_ok(ndx_scatter_nd_shape(&sidx, &supd, 1, (int64_t[]){2}, &shaped, &err), &err);
    assert_int_equal(shaped.itemsize, 3);
    ndx_tensor sout = {0};
    assert_ok(ndx_scatter_nd(&sidx, &supd, 1, (int64_t[]){2}, &ignore, &sout, &err), &err);
    assert_memory_equal(sout.data, "abe\0\0\0", 6);
    ndx_tensor_free(&sout);
    assert_fails(ndx_scatter_nd(&sidx, &supd, 1, (int64_t[]){2}, NULL, &sout, &err), &err,
                 NDX_E_OUT_OF_RANGE, "indices[1] = [9]");
    assert_null(sout.data);
    ndx_options tiny = {.num_threads = 1, .max_memory = 16};
    ndx_tensor big_idx = test_tensor_v(NDX_INT32, 0, 2, 4, 1);
    ndx_tensor big_upd = test_strings(2, 1, (int64_t[]){4}, (const char *[]){"ab", "cd", "e", "f"});
    assert_fails(ndx_scatter_nd(&big_idx, &big_upd, 1, (int64_t[]){2}, &tiny, &sout, &err), &err,
                 NDX_E_MEMORY_BUDGET, "over the memory budget");
    assert_null(sout.data);
    test_tensor_free(&big_idx);
    test_tensor_free(&big_upd);
    test_tensor_free(&sidx);
    test_tensor_free(&supd);
    test_tensor_free(&out);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
}

static void shape_functions(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor tensor = test_tensor_v(NDX_STRING, 7, 3, 2, 3, 4);
    ndx_tensor idx = test_tensor_v(NDX_INT16, 0, 3, 5, 6, 2);
    ndx_tensor upd = test_tensor_v(NDX_STRING, 7, 3, 5, 6, 4);
    ndx_tensor out;
    memset(&out, 0xff, sizeof out);
    assert_ok(ndx_tensor_scatter_nd_shape(&tensor, &idx, &upd, &out, &err), &err);
    assert_int_equal(out.dtype, NDX_STRING);
    assert_int_equal(out.itemsize, 7);
    assert_int_equal(out.rank, 3);
    assert_int_equal(out.shape[2], 4);
    assert_null(out.data);
    ndx_tensor nidx = test_tensor_v(NDX_INT64, 0, 2, 5, 1);
    ndx_tensor nupd = test_tensor_v(NDX_COMPLEX128, 0, 3, 5, 3, 2);
    assert_ok(ndx_scatter_nd_shape(&nidx, &nupd, 3, (int64_t[]){9, 3, 2}, &out, &err), &err);
    assert_int_equal(out.dtype, NDX_COMPLEX128);
    assert_int_equal(out.itemsize, 16);
    assert_int_equal(out.shape[0], 9);
    test_tensor_free(&tensor);
    test_tensor_free(&idx);
    test_tensor_free(&upd);
    test_tensor_free(&nidx);
    test_tensor_free(&nupd);
}

/* A NaN already in the destination wins over a NaN update, on every path: slices of one
 * element and of four, float32 and float64, at 1 and 3 threads (-NaN there, +NaN added: -NaN). */
static void nan_sums_keep_the_destination_nan(void **state) {
    (void)state;
    for (int width = 1; width <= 4; width += 3) {
        float t[4];
        double td[4];
        float u[4];
        double ud[4];
        uint32_t neg = 0xffc00000u, pos = 0x7fc00001u;
        uint64_t negd = 0xfff8000000000000ull, posd = 0x7ff8000000000001ull;
        for (int i = 0; i < 4; i++) {
            memcpy(&t[i], &neg, 4), memcpy(&u[i], &pos, 4);
            memcpy(&td[i], &negd, 8), memcpy(&ud[i], &posd, 8);
        }
        int64_t idx[1] = {0};
        ndx_tensor it = ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 1), idx);
        for (int threads = 1; threads <= 3; threads += 2) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_error err;
            ndx_tensor tt = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(1, width), t);
            ndx_tensor ut = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(1, width), u);
            ndx_tensor out = {0};
            assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tt, &it, &ut, &opt, &out, &err), &err);
            for (int i = 0; i < width; i++) assert_memory_equal((float *)out.data + i, &neg, 4);
            ndx_tensor_free(&out);
            tt = ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(1, width), td);
            ut = ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(1, width), ud);
            assert_ok(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &tt, &it, &ut, &opt, &out, &err), &err);
            for (int i = 0; i < width; i++) assert_memory_equal((double *)out.data + i, &negd, 8);
            ndx_tensor_free(&out);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(documented_examples),
        cmocka_unit_test(half_types_round_every_step),
        cmocka_unit_test(integers_wrap_around),
        cmocka_unit_test(min_max_nan_rules),
        cmocka_unit_test(update_last_wins_and_complex_add),
        cmocka_unit_test(scatter_nd_bool_or),
        cmocka_unit_test(scatter_nd_strings_concatenate),
        cmocka_unit_test(depth_zero_and_scalars),
        cmocka_unit_test(empty_inputs),
        cmocka_unit_test(empty_output_rule),
        cmocka_unit_test(random_tensor_scatter),
        cmocka_unit_test(random_ignore_skips_bad_rows),
        cmocka_unit_test(random_scatter_nd),
        cmocka_unit_test(large_elements_in_blocks),
        cmocka_unit_test(large_narrow_slices),
        cmocka_unit_test(large_wide_slices),
        cmocka_unit_test(any_budget_gives_the_same_bytes),
        cmocka_unit_test(tensor_scatter_errors),
        cmocka_unit_test(unsupported_dtypes),
        cmocka_unit_test(late_bad_row_leaves_tensor_untouched),
        cmocka_unit_test(scatter_nd_errors),
        cmocka_unit_test(shape_functions),
        cmocka_unit_test(nan_sums_keep_the_destination_nan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
