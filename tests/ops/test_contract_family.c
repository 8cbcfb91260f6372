/* test_contract_family.c — the hostile-input contract of gather, one_hot, unique, setdiff1d,
 * boolean_mask, the segment reductions and embedding_bag, for the classes of bug in TensorFlow's
 * security advisories on those ops (ids and indices out of range or unsorted, huge or negative
 * counts, shapes that disagree, non-scalar or mismatched scalars, bad axes, views whose sizes
 * overflow, NULL and aliased arguments). Each call must fail with a clear error naming the op,
 * before anything is written: a caller's output keeps its bytes, an output the op would allocate
 * stays NULL, and the inputs are unchanged. */
#include "ndx_test.h"

#include <stdio.h>

static ndx_tensor make_float(int rank, const int64_t *shape) {
    ndx_tensor t = test_tensor(NDX_FLOAT32, 0, rank, shape);
    int64_t n = test_count(&t);
    for (int64_t i = 0; i < n; i++) ((float *)t.data)[i] = (float)(i + 1);
    return t;
}

static ndx_tensor make_index(ndx_dtype dt, int64_t n, const int64_t *values) {
    ndx_tensor t = test_tensor(dt, 0, 1, &n);
    for (int64_t i = 0; i < n; i++) test_set_index(&t, i, values[i]);
    return t;
}

/* A call's two output modes: into a caller's buffer of `view` (which must keep its bytes) and
 * allocating (which must leave data NULL). The inputs must keep theirs too. */
typedef ndx_status (*one_output_fn)(const void *ctx, ndx_tensor *out, ndx_error *err);

static void expect_refused(const char *what, one_output_fn call, const void *ctx,
                           ndx_dtype dt, int rank, const int64_t *shape, ndx_status code,
                           const char *needle, const ndx_tensor *const *inputs, int n_inputs) {
    /* code: the status wanted; NDX_E_MEMORY_BUDGET also takes NDX_E_OVERFLOW; NDX_OK takes
     * NDX_E_INVALID_ARGUMENT or NDX_E_OUT_OF_RANGE. */
    test_guard in[6];
    for (int i = 0; i < n_inputs; i++) in[i] = test_guard_take(inputs[i]);
    ndx_tensor mine = test_tensor(dt, 0, rank, shape);
    test_guard g = test_guard_fill(&mine, 0x6b);
    ndx_tensor view = mine;
    ndx_error err;
    ndx_status st = call(ctx, &mine, &err);
    if (st == NDX_OK) fail_msg("%s: accepted", what);
    if (code == NDX_E_MEMORY_BUDGET) /* a size that overflows, or the budget: both are clean */
        assert_true(st == NDX_E_MEMORY_BUDGET || st == NDX_E_OVERFLOW || st == NDX_E_NO_MEMORY);
    else if (code == NDX_OK) /* a bad index or offset: ndx.h leaves the category open */
        assert_true(st == NDX_E_INVALID_ARGUMENT || st == NDX_E_OUT_OF_RANGE);
    else
        assert_fails(st, &err, code, needle);
    assert_non_null(strstr(err.message, needle));
    assert_memory_equal(&mine, &view, sizeof view);
    assert_untouched(&g, &mine);
    test_tensor_free(&mine);
    ndx_tensor alloc = {0};
    st = call(ctx, &alloc, &err);
    assert_int_not_equal(st, NDX_OK);
    assert_non_null(strstr(err.message, needle));
    assert_null(alloc.data);
    for (int i = 0; i < n_inputs; i++) assert_untouched(&in[i], inputs[i]);
}

/* ---- segment reductions ------------------------------------------------------------------------ */

typedef struct {
    int family; /* 0 unsorted, 1 sorted, 2 sparse */
    ndx_segment_op op;
    const ndx_tensor *data, *indices, *ids;
    int64_t num_segments;
    const ndx_options *opt;
} seg_args;

static ndx_status seg_call(const void *ctx, ndx_tensor *out, ndx_error *err) {
    const seg_args *a = ctx;
    switch (a->family) {
    case 0: return ndx_unsorted_segment_reduce(a->op, a->data, a->ids, a->num_segments, a->opt, out, err);
    case 1: return ndx_segment_reduce(a->op, a->data, a->ids, a->opt, out, err);
    default:
        return ndx_sparse_segment_reduce(a->op, a->data, a->indices, a->ids, a->num_segments, a->opt,
                                         out, err);
    }
}

static void seg_refused(const char *what, seg_args a, int64_t out_rows, ndx_status code,
                        const char *needle) {
    const ndx_tensor *inputs[3] = {a.data, a.ids, a.indices ? a.indices : a.ids};
    expect_refused(what, seg_call, &a, NDX_FLOAT32, 2, SHAPE(out_rows, 3), code, needle, inputs,
                   a.data && a.ids ? 3 : 0);
}

/* Ids out of range, negative where they may not be, unsorted, and a last id that leaves no room
 * for a row count (TensorFlow's advisories on SegmentSum, UnsortedSegmentSum and the
 * SparseSegment ops reading or writing outside their tensors). */
static void segment_ids_hostile(void **state) {
    (void)state;
    ndx_tensor data = make_float(2, SHAPE(4, 3));
    const ndx_dtype dts[] = {NDX_INT32, NDX_INT64};
    for (int d = 0; d < 2; d++) {
        ndx_dtype dt = dts[d];
        int64_t big = dt == NDX_INT32 ? INT32_MAX : INT64_MAX;
        /* unsorted: an id at or past num_segments */
        const int64_t past[][4] = {{0, 1, 2, 3}, {0, big, 1, 1}, {0, 0, 0, 5}};
        for (int k = 0; k < 3; k++) {
            ndx_tensor ids = make_index(dt, 4, past[k]);
            seg_refused("unsorted id past num_segments", (seg_args){0, NDX_SEGMENT_SUM, &data, NULL, &ids, 3, NULL},
                        3, NDX_E_OUT_OF_RANGE, "unsorted_segment_sum");
            test_tensor_free(&ids);
        }
        /* sorted and sparse: negative, decreasing, or a last id of the dtype's maximum */
        const int64_t bad[][4] = {{-1, 0, 0, 1}, {0, 2, 1, 3}, {0, 0, 1, -5}};
        const ndx_status codes[] = {NDX_E_OUT_OF_RANGE, NDX_E_INVALID_ARGUMENT, NDX_E_OUT_OF_RANGE};
        ndx_tensor rows = make_index(dt, 4, VALS(0, 1, 2, 3));
        for (int k = 0; k < 3; k++) {
            ndx_tensor ids = make_index(dt, 4, bad[k]);
            seg_refused("sorted ids", (seg_args){1, NDX_SEGMENT_MAX, &data, NULL, &ids, 0, NULL}, 4,
                        codes[k], "segment_max");
            seg_refused("sparse ids", (seg_args){2, NDX_SEGMENT_MEAN, &data, &rows, &ids, NDX_SEGMENTS_FROM_IDS, NULL},
                        4, codes[k], "sparse_segment_mean");
            test_tensor_free(&ids);
        }
        if (dt == NDX_INT64) {
            ndx_tensor ids = make_index(dt, 4, VALS(0, 0, 1, INT64_MAX));
            seg_refused("last id INT64_MAX", (seg_args){1, NDX_SEGMENT_SUM, &data, NULL, &ids, 0, NULL}, 2,
                        NDX_E_OVERFLOW, "segment_sum");
            test_tensor_free(&ids);
        }
        /* sparse: indices outside data's rows, and num_segments below the last id */
        const int64_t rows_bad[][4] = {{0, 4, 1, 1}, {-1, 0, 0, 0}, {0, 0, 0, big}};
        ndx_tensor ids = make_index(dt, 4, VALS(0, 1, 1, 2));
        for (int k = 0; k < 3; k++) {
            ndx_tensor idx = make_index(dt, 4, rows_bad[k]);
            seg_refused("sparse indices", (seg_args){2, NDX_SEGMENT_SUM, &data, &idx, &ids, 3, NULL}, 3,
                        NDX_E_OUT_OF_RANGE, "sparse_segment_sum");
            test_tensor_free(&idx);
        }
        seg_refused("sparse num_segments below the last id",
                    (seg_args){2, NDX_SEGMENT_SQRT_N, &data, &rows, &ids, 2, NULL}, 2,
                    NDX_E_OUT_OF_RANGE, "sparse_segment_sqrt_n");
        test_tensor_free(&ids);
        test_tensor_free(&rows);
    }
    test_tensor_free(&data);
}

/* Counts and shapes: negative or huge num_segments, ids that do not match data, int16 ids,
 * dtypes TensorFlow does not register, views whose sizes overflow, NULL tensors. */
static void segment_shapes_and_counts(void **state) {
    (void)state;
    ndx_tensor data = make_float(2, SHAPE(4, 3));
    ndx_tensor ids = make_index(NDX_INT64, 4, VALS(0, 0, 1, 1));
    ndx_tensor rows = make_index(NDX_INT64, 4, VALS(0, 1, 2, 3));
    ndx_options budget = test_options(2, NDX_BAD_INDICES_ERROR);
    budget.max_memory = (size_t)1 << 20;
    seg_refused("negative num_segments", (seg_args){0, NDX_SEGMENT_SUM, &data, NULL, &ids, -1, NULL}, 1,
                NDX_E_INVALID_ARGUMENT, "unsorted_segment_sum");
    seg_refused("huge num_segments", (seg_args){0, NDX_SEGMENT_SUM, &data, NULL, &ids, INT64_MAX, &budget}, 1,
                NDX_E_MEMORY_BUDGET, "unsorted_segment_sum");
    seg_refused("huge sparse num_segments",
                (seg_args){2, NDX_SEGMENT_SUM, &data, &rows, &ids, (int64_t)1 << 62, &budget}, 1,
                NDX_E_MEMORY_BUDGET, "sparse_segment_sum");
    ndx_tensor short_ids = make_index(NDX_INT64, 3, VALS(0, 0, 1));
    seg_refused("ids shorter than data", (seg_args){1, NDX_SEGMENT_SUM, &data, NULL, &short_ids, 0, NULL}, 2,
                NDX_E_INVALID_ARGUMENT, "segment_sum");
    seg_refused("unsorted ids not data's leading dims",
                (seg_args){0, NDX_SEGMENT_MIN, &data, NULL, &short_ids, 2, NULL}, 2,
                NDX_E_INVALID_ARGUMENT, "unsorted_segment_min");
    seg_refused("sparse indices and ids of two lengths",
                (seg_args){2, NDX_SEGMENT_SUM, &data, &rows, &short_ids, NDX_SEGMENTS_FROM_IDS, NULL}, 2,
                NDX_E_INVALID_ARGUMENT, "sparse_segment_sum");
    ndx_tensor ids16 = make_index(NDX_INT16, 4, VALS(0, 0, 1, 1));
    seg_refused("int16 ids", (seg_args){1, NDX_SEGMENT_SUM, &data, NULL, &ids16, 0, NULL}, 2,
                NDX_E_INVALID_ARGUMENT, "segment_sum");
    seg_refused("segment_sqrt_n", (seg_args){1, NDX_SEGMENT_SQRT_N, &data, NULL, &ids, 0, NULL}, 2,
                NDX_E_INVALID_ARGUMENT, "segment_sqrt_n");
    seg_refused("an op that is none", (seg_args){0, (ndx_segment_op)9, &data, NULL, &ids, 2, NULL}, 2,
                NDX_E_INVALID_ARGUMENT, "unsorted_segment_reduce");
    ndx_tensor words = test_tensor_v(NDX_STRING, 3, 2, 4, 3);
    seg_refused("strings", (seg_args){0, NDX_SEGMENT_SUM, &words, NULL, &ids, 2, NULL}, 2,
                NDX_E_UNSUPPORTED, "unsorted_segment_sum");
    /* views whose element count overflows, over a small real block */
    ndx_tensor huge = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(INT64_MAX / 2 + 1, 3), data.data);
    ndx_tensor huge_ids = ndx_tensor_make(NDX_INT64, 1, SHAPE(INT64_MAX / 2 + 1), ids.data);
    ndx_tensor out = {0};
    ndx_error err;
    for (int family = 0; family < 3; family++) {
        seg_args a = {family, NDX_SEGMENT_SUM, &huge, &rows, &ids, 2, NULL};
        assert_int_not_equal(seg_call(&a, &out, &err), NDX_OK);
        assert_null(out.data);
        a.data = &data, a.ids = &huge_ids;
        assert_int_not_equal(seg_call(&a, &out, &err), NDX_OK);
        assert_null(out.data);
        a.ids = NULL; /* NULL tensors and a NULL output view */
        assert_int_not_equal(seg_call(&a, &out, &err), NDX_OK);
        a.ids = &ids, a.data = NULL;
        assert_int_not_equal(seg_call(&a, &out, &err), NDX_OK);
        a.data = &data;
        assert_int_not_equal(seg_call(&a, NULL, &err), NDX_OK);
        assert_true(err.message[0] != '\0');
    }
    test_tensor_free(&words);
    test_tensor_free(&ids16);
    test_tensor_free(&short_ids);
    test_tensor_free(&rows);
    test_tensor_free(&ids);
    test_tensor_free(&data);
}

/* ---- embedding_bag ------------------------------------------------------------------------------ */

typedef struct {
    const ndx_tensor *params, *ids, *bags, *weights;
    ndx_embedding_bag_attrs attrs;
    const ndx_options *opt;
} bag_args;

static ndx_status bag_call(const void *ctx, ndx_tensor *out, ndx_error *err) {
    const bag_args *a = ctx;
    return ndx_embedding_bag(a->params, a->ids, a->bags, a->weights, &a->attrs, a->opt, out, err);
}

static void bag_refused(const char *what, bag_args a, int64_t rows, ndx_status code, const char *needle) {
    const ndx_tensor *inputs[4] = {a.params, a.ids, a.bags, a.weights ? a.weights : a.ids};
    expect_refused(what, bag_call, &a, NDX_FLOAT32, 2, SHAPE(rows, 3), code, needle, inputs, 4);
}

static void embedding_bag_hostile(void **state) {
    (void)state;
    ndx_tensor params = make_float(2, SHAPE(5, 3));
    ndx_tensor ids = make_index(NDX_INT64, 4, VALS(0, 4, 2, 2));
    ndx_tensor segs = make_index(NDX_INT32, 4, VALS(0, 0, 1, 2));
    ndx_tensor offs = make_index(NDX_INT32, 3, VALS(0, 2, 3));
    ndx_embedding_bag_attrs by_ids = {NDX_BAGS_SEGMENT_IDS, NDX_SEGMENT_MEAN, NDX_NO_MAX_NORM, NDX_SEGMENTS_FROM_IDS};
    ndx_embedding_bag_attrs by_offs = {NDX_BAGS_OFFSETS, NDX_SEGMENT_SUM, 1.0, NDX_SEGMENTS_FROM_IDS};
    /* ids outside the table, in both forms */
    const int64_t bad_ids[][4] = {{0, 5, 1, 1}, {-1, 0, 0, 0}, {0, 0, 0, INT64_MAX}, {INT64_MIN, 0, 0, 0}};
    for (int k = 0; k < 4; k++) {
        ndx_tensor b = make_index(NDX_INT64, 4, bad_ids[k]);
        bag_refused("id out of range", (bag_args){&params, &b, &segs, NULL, by_ids, NULL}, 3,
                    NDX_E_OUT_OF_RANGE, "embedding_bag");
        bag_refused("id out of range (offsets)", (bag_args){&params, &b, &offs, NULL, by_offs, NULL}, 3,
                    NDX_E_OUT_OF_RANGE, "embedding_bag");
        test_tensor_free(&b);
    }
    /* offsets: not starting at 0, decreasing, past the ids, negative */
    const int64_t bad_offs[][3] = {{1, 2, 3}, {0, 3, 2}, {0, 2, 5}, {0, -1, 3}, {0, 2, INT32_MAX}};
    for (int k = 0; k < 5; k++) {
        ndx_tensor o = make_index(NDX_INT32, 3, bad_offs[k]);
        bag_refused("bad offsets", (bag_args){&params, &ids, &o, NULL, by_offs, NULL}, 3, NDX_OK,
                    "embedding_bag");
        test_tensor_free(&o);
    }
    /* segment ids: negative, decreasing, one too few, at or past num_bags */
    const int64_t bad_segs[][4] = {{-1, 0, 0, 1}, {0, 1, 0, 1}};
    for (int k = 0; k < 2; k++) {
        ndx_tensor s = make_index(NDX_INT32, 4, bad_segs[k]);
        ndx_tensor o = {0};
        ndx_error err;
        ndx_status st = ndx_embedding_bag(&params, &ids, &s, NULL, &by_ids, NULL, &o, &err);
        assert_true(st == NDX_E_INVALID_ARGUMENT || st == NDX_E_OUT_OF_RANGE);
        assert_non_null(strstr(err.message, "embedding_bag"));
        assert_null(o.data);
        test_tensor_free(&s);
    }
    ndx_tensor three = make_index(NDX_INT32, 3, VALS(0, 0, 1));
    bag_refused("one segment id short", (bag_args){&params, &ids, &three, NULL, by_ids, NULL}, 2,
                NDX_E_INVALID_ARGUMENT, "embedding_bag");
    ndx_embedding_bag_attrs two_bags = by_ids;
    two_bags.num_bags = 2;
    bag_refused("num_bags below the last id", (bag_args){&params, &ids, &segs, NULL, two_bags, NULL}, 2,
                NDX_E_OUT_OF_RANGE, "num_bags");
    ndx_embedding_bag_attrs huge_bags = by_ids;
    huge_bags.num_bags = (int64_t)1 << 62;
    ndx_options budget = test_options(1, NDX_BAD_INDICES_ERROR);
    budget.max_memory = (size_t)1 << 20;
    bag_refused("huge num_bags", (bag_args){&params, &ids, &segs, NULL, huge_bags, &budget}, 2,
                NDX_E_MEMORY_BUDGET, "embedding_bag");
    /* weights of the wrong length or dtype; a combiner, form or table dtype it has not */
    ndx_tensor w3 = make_float(1, SHAPE(3));
    ndx_tensor w64 = test_tensor_v(NDX_FLOAT64, 0, 1, 4);
    bag_refused("weights short", (bag_args){&params, &ids, &segs, &w3, by_ids, NULL}, 3,
                NDX_E_INVALID_ARGUMENT, "embedding_bag");
    bag_refused("weights float64", (bag_args){&params, &ids, &segs, &w64, by_ids, NULL}, 3,
                NDX_E_INVALID_ARGUMENT, "embedding_bag");
    ndx_embedding_bag_attrs prod = by_ids;
    prod.combiner = NDX_SEGMENT_PROD;
    bag_refused("combiner prod", (bag_args){&params, &ids, &segs, NULL, prod, NULL}, 3,
                NDX_E_INVALID_ARGUMENT, "embedding_bag");
    ndx_embedding_bag_attrs form = by_ids;
    form.form = (ndx_bag_form)7;
    bag_refused("form 7", (bag_args){&params, &ids, &segs, NULL, form, NULL}, 3,
                NDX_E_INVALID_ARGUMENT, "embedding_bag");
    ndx_tensor table = test_tensor_v(NDX_INT32, 0, 2, 5, 3);
    ndx_tensor out = {0};
    ndx_error err;
    ndx_status st = ndx_embedding_bag(&table, &ids, &segs, NULL, &by_ids, NULL, &out, &err);
    assert_true(st == NDX_E_UNSUPPORTED || st == NDX_E_INVALID_ARGUMENT);
    assert_null(out.data);
    /* NULL arguments and overflowing views */
    assert_int_not_equal(ndx_embedding_bag(&params, &ids, &segs, NULL, NULL, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_embedding_bag(NULL, &ids, &segs, NULL, &by_ids, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_embedding_bag(&params, NULL, &segs, NULL, &by_ids, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_embedding_bag(&params, &ids, NULL, NULL, &by_ids, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_embedding_bag(&params, &ids, &segs, NULL, &by_ids, NULL, NULL, &err), NDX_OK);
    ndx_tensor huge = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(INT64_MAX / 2 + 1, 3), params.data);
    assert_int_not_equal(ndx_embedding_bag(&huge, &ids, &segs, NULL, &by_ids, NULL, &out, &err), NDX_OK);
    assert_null(out.data);
    test_tensor_free(&table);
    test_tensor_free(&w3);
    test_tensor_free(&w64);
    test_tensor_free(&three);
    test_tensor_free(&offs);
    test_tensor_free(&segs);
    test_tensor_free(&ids);
    test_tensor_free(&params);
}

/* ---- gather, one_hot, boolean_mask, unique --------------------------------------------------------- */

typedef struct {
    int which;
    const ndx_tensor *a, *b, *on, *off;
    int axis, batch_dims;
    int64_t depth;
    const ndx_options *opt;
} dense_args;

static ndx_status dense_call(const void *ctx, ndx_tensor *out, ndx_error *err) {
    const dense_args *a = ctx;
    switch (a->which) {
    case 0: return ndx_gather(a->a, a->b, a->axis, a->batch_dims, a->opt, out, err);
    case 1: return ndx_one_hot(a->a, a->depth, a->on, a->off, a->axis, a->opt, out, err);
    default: return ndx_boolean_mask(a->a, a->b, a->axis, a->opt, out, err);
    }
}

static void dense_refused(const char *what, dense_args a, int rank, const int64_t *shape,
                          ndx_status code, const char *needle) {
    const ndx_tensor *inputs[4] = {a.a, a.b ? a.b : a.a, a.on ? a.on : a.a, a.off ? a.off : a.a};
    expect_refused(what, dense_call, &a, NDX_FLOAT32, rank, shape, code, needle, inputs, 4);
}

static void gather_one_hot_mask_hostile(void **state) {
    (void)state;
    ndx_tensor params = make_float(2, SHAPE(4, 3));
    ndx_tensor idx = make_index(NDX_INT32, 2, VALS(1, 3));
    ndx_tensor bad = make_index(NDX_INT64, 2, VALS(1, INT64_MIN));
    dense_refused("gather: an index past the axis", (dense_args){0, &params, &bad, NULL, NULL, 0, 0, 0, NULL},
                  2, SHAPE(2, 3), NDX_E_OUT_OF_RANGE, "gather");
    dense_refused("gather: axis 2", (dense_args){0, &params, &idx, NULL, NULL, 2, 0, 0, NULL}, 2,
                  SHAPE(2, 3), NDX_E_INVALID_ARGUMENT, "gather");
    dense_refused("gather: axis -3", (dense_args){0, &params, &idx, NULL, NULL, -3, 0, 0, NULL}, 2,
                  SHAPE(2, 3), NDX_E_INVALID_ARGUMENT, "gather");
    dense_refused("gather: batch_dims past indices' rank", (dense_args){0, &params, &idx, NULL, NULL, 1, 2, 0, NULL},
                  2, SHAPE(2, 3), NDX_E_INVALID_ARGUMENT, "gather");
    ndx_tensor scalar = make_float(0, NULL);
    dense_refused("gather: scalar params", (dense_args){0, &scalar, &idx, NULL, NULL, 0, 0, 0, NULL}, 1,
                  SHAPE(2), NDX_E_INVALID_ARGUMENT, "gather");
    /* an output that shares memory with params */
    ndx_tensor alias = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), params.data);
    test_guard pg = test_guard_take(&params);
    ndx_error err;
    assert_fails(ndx_gather(&params, &idx, 0, 0, NULL, &alias, &err), &err, NDX_E_INVALID_ARGUMENT, "gather");
    assert_untouched(&pg, &params);

    float one = 1, zero = 0;
    ndx_tensor on = test_tensor_from(NDX_FLOAT32, 0, 0, NULL, &one), off = test_tensor_from(NDX_FLOAT32, 0, 0, NULL, &zero);
    ndx_tensor vec_on = test_tensor_from(NDX_FLOAT32, 0, 1, SHAPE(1), &one);
    ndx_tensor int_off = test_tensor_v(NDX_INT32, 0, 0, 0);
    dense_refused("one_hot: negative depth", (dense_args){1, &idx, NULL, &on, &off, -1, 0, -1, NULL}, 2,
                  SHAPE(2, 1), NDX_E_INVALID_ARGUMENT, "one_hot");
    dense_refused("one_hot: on_value a vector", (dense_args){1, &idx, NULL, &vec_on, &off, -1, 0, 4, NULL}, 2,
                  SHAPE(2, 4), NDX_E_INVALID_ARGUMENT, "one_hot");
    dense_refused("one_hot: on and off of two dtypes", (dense_args){1, &idx, NULL, &on, &int_off, -1, 0, 4, NULL},
                  2, SHAPE(2, 4), NDX_E_INVALID_ARGUMENT, "one_hot");
    dense_refused("one_hot: axis 2 of a vector", (dense_args){1, &idx, NULL, &on, &off, 2, 0, 4, NULL}, 2,
                  SHAPE(2, 4), NDX_E_INVALID_ARGUMENT, "one_hot");
    dense_refused("one_hot: axis -2", (dense_args){1, &idx, NULL, &on, &off, -2, 0, 4, NULL}, 2,
                  SHAPE(2, 4), NDX_E_INVALID_ARGUMENT, "one_hot");
    ndx_options budget = test_options(1, NDX_BAD_INDICES_ERROR);
    budget.max_memory = (size_t)1 << 20;
    dense_refused("one_hot: huge depth", (dense_args){1, &idx, NULL, &on, &off, -1, 0, INT64_MAX, &budget}, 2,
                  SHAPE(2, 4), NDX_E_MEMORY_BUDGET, "one_hot");
    dense_refused("one_hot: float indices", (dense_args){1, &params, NULL, &on, &off, -1, 0, 4, NULL}, 2,
                  SHAPE(2, 4), NDX_E_INVALID_ARGUMENT, "one_hot");

    ndx_tensor mask = test_tensor_v(NDX_BOOL, 0, 1, 4), mask3 = test_tensor_v(NDX_BOOL, 0, 1, 3);
    memset(mask.data, 1, 4);
    memset(mask3.data, 1, 3);
    ndx_tensor scalar_mask = test_tensor_v(NDX_BOOL, 0, 0, 0);
    dense_refused("boolean_mask: scalar mask", (dense_args){2, &params, &scalar_mask, NULL, NULL, 0, 0, 0, NULL},
                  2, SHAPE(4, 3), NDX_E_INVALID_ARGUMENT, "boolean_mask");
    dense_refused("boolean_mask: dims differ", (dense_args){2, &params, &mask3, NULL, NULL, 0, 0, 0, NULL}, 2,
                  SHAPE(3, 3), NDX_E_INVALID_ARGUMENT, "boolean_mask");
    dense_refused("boolean_mask: negative axis", (dense_args){2, &params, &mask, NULL, NULL, -1, 0, 0, NULL}, 2,
                  SHAPE(4, 3), NDX_E_INVALID_ARGUMENT, "boolean_mask");
    dense_refused("boolean_mask: axis past the end", (dense_args){2, &params, &mask3, NULL, NULL, 2, 0, 0, NULL},
                  2, SHAPE(4, 3), NDX_E_INVALID_ARGUMENT, "boolean_mask");
    dense_refused("boolean_mask: int32 mask", (dense_args){2, &params, &idx, NULL, NULL, 0, 0, 0, NULL}, 2,
                  SHAPE(2, 3), NDX_E_INVALID_ARGUMENT, "boolean_mask");
    /* overflowing views and NULLs */
    ndx_tensor huge = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(INT64_MAX / 2 + 1, 3), params.data);
    ndx_tensor out = {0};
    assert_int_not_equal(ndx_gather(&huge, &idx, 0, 0, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_boolean_mask(&huge, &mask, 0, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_one_hot(&huge, 4, &on, &off, -1, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_gather(NULL, &idx, 0, 0, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_one_hot(&idx, 4, NULL, &off, -1, NULL, &out, &err), NDX_OK);
    assert_int_not_equal(ndx_boolean_mask(&params, NULL, 0, NULL, &out, &err), NDX_OK);
    assert_null(out.data);
    test_tensor_free(&scalar_mask);
    test_tensor_free(&mask3);
    test_tensor_free(&mask);
    test_tensor_free(&int_off);
    test_tensor_free(&vec_on);
    test_tensor_free(&on);
    test_tensor_free(&off);
    test_tensor_free(&scalar);
    test_tensor_free(&bad);
    test_tensor_free(&idx);
    test_tensor_free(&params);
}

/* unique: axes out of range (TensorFlow's UniqueV2 advisory read outside x for a bad axis),
 * scalars, complex values, out_idx not an index dtype, outputs of the wrong view, y aliasing x. */
static void unique_hostile(void **state) {
    (void)state;
    ndx_tensor x = make_float(2, SHAPE(3, 2));
    ndx_tensor scalar = make_float(0, NULL);
    ndx_tensor cx = test_tensor_v(NDX_COMPLEX64, 0, 1, 3);
    test_guard xg = test_guard_take(&x);
    struct {
        const ndx_tensor *x;
        int axis;
        ndx_dtype out_idx;
        ndx_status code;
    } cases[] = {
        {&x, 2, NDX_INT32, NDX_E_INVALID_ARGUMENT},
        {&x, -3, NDX_INT64, NDX_E_INVALID_ARGUMENT},
        {&x, NDX_AXIS_NONE, NDX_INT32, NDX_E_INVALID_ARGUMENT}, /* not a vector */
        {&scalar, 0, NDX_INT32, NDX_E_INVALID_ARGUMENT},
        {&x, 0, NDX_FLOAT32, NDX_E_INVALID_ARGUMENT},
        {&x, 0, NDX_INT16, NDX_E_INVALID_ARGUMENT},
        {&cx, 0, NDX_INT32, NDX_E_UNSUPPORTED},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ndx_tensor y = {0}, idx = {0}, counts = {0};
        ndx_error err;
        ndx_status st = ndx_unique(cases[k].x, cases[k].axis, cases[k].out_idx, NULL, &y, &idx, &counts, &err);
        if (st == NDX_OK) fail_msg("unique case %zu accepted", k);
        assert_non_null(strstr(err.message, "unique"));
        assert_null(y.data), assert_null(idx.data), assert_null(counts.data);
        st = ndx_unique_shape(cases[k].x, cases[k].axis, cases[k].out_idx, &y, &idx, &counts, &err);
        assert_int_not_equal(st, NDX_OK);
    }
    /* caller outputs, one of them a row too long: all three keep their bytes */
    for (int wrong = 0; wrong < 3; wrong++) {
        ndx_tensor y = test_tensor_v(NDX_FLOAT32, 0, 2, wrong == 0 ? 4 : 3, 2);
        ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 1, wrong == 1 ? 4 : 3);
        ndx_tensor counts = test_tensor_v(NDX_INT32, 0, 1, wrong == 2 ? 4 : 3);
        test_guard g[3] = {test_guard_fill(&y, 0x6b), test_guard_fill(&idx, 0x6b), test_guard_fill(&counts, 0x6b)};
        ndx_error err;
        assert_int_not_equal(ndx_unique(&x, 0, NDX_INT32, NULL, &y, &idx, &counts, &err), NDX_OK);
        assert_non_null(strstr(err.message, "unique"));
        assert_untouched(&g[0], &y), assert_untouched(&g[1], &idx), assert_untouched(&g[2], &counts);
        test_tensor_free(&y), test_tensor_free(&idx), test_tensor_free(&counts);
    }
    /* y sharing x's memory */
    ndx_tensor y = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(3, 2), x.data), idx = {0};
    ndx_error err;
    assert_fails(ndx_unique(&x, 0, NDX_INT32, NULL, &y, &idx, NULL, &err), &err, NDX_E_INVALID_ARGUMENT, "unique");
    assert_null(idx.data);
    assert_untouched(&xg, &x);
    /* NULLs and an overflowing view */
    ndx_tensor a = {0}, b = {0};
    assert_int_not_equal(ndx_unique(NULL, 0, NDX_INT32, NULL, &a, &b, NULL, &err), NDX_OK);
    assert_int_not_equal(ndx_unique(&x, 0, NDX_INT32, NULL, NULL, &b, NULL, &err), NDX_OK);
    assert_int_not_equal(ndx_unique(&x, 0, NDX_INT32, NULL, &a, NULL, NULL, &err), NDX_OK);
    ndx_tensor huge = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(INT64_MAX / 2 + 1, 3), x.data);
    assert_int_not_equal(ndx_unique(&huge, 0, NDX_INT64, NULL, &a, &b, NULL, &err), NDX_OK);
    assert_null(a.data), assert_null(b.data);
    test_tensor_free(&cx);
    test_tensor_free(&scalar);
    test_tensor_free(&x);
}

/* setdiff1d: x or y not a vector, dtypes that differ (strings of two widths too), bool and
 * complex, out_idx not int32 or int64, x of 2^31 - 1 elements (TensorFlow's limit, refused before
 * a read), outputs of the wrong view, out aliasing x, NULLs and an overflowing view. */
static void setdiff1d_hostile(void **state) {
    (void)state;
    ndx_tensor v = make_float(1, SHAPE(3)), m = make_float(2, SHAPE(3, 2));
    ndx_tensor scalar = make_float(0, NULL), iv = test_tensor_v(NDX_INT32, 0, 1, 3);
    ndx_tensor cx = test_tensor_v(NDX_COMPLEX64, 0, 1, 3), bx = test_tensor_v(NDX_BOOL, 0, 1, 3);
    ndx_tensor s2 = test_strings(2, 1, SHAPE(1), (const char *const[]){"a"});
    ndx_tensor s3 = test_strings(3, 1, SHAPE(1), (const char *const[]){"a"});
    memset(iv.data, 0, 12), memset(cx.data, 0, 24), memset(bx.data, 0, 3);
    ndx_tensor big = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(INT32_MAX), v.data);
    test_guard vg = test_guard_take(&v);
    struct {
        const ndx_tensor *x, *y;
        ndx_dtype out_idx;
        ndx_status code;
    } cases[] = {
        {&m, &v, NDX_INT32, NDX_E_INVALID_ARGUMENT},      {&v, &m, NDX_INT32, NDX_E_INVALID_ARGUMENT},
        {&scalar, &v, NDX_INT32, NDX_E_INVALID_ARGUMENT}, {&v, &scalar, NDX_INT64, NDX_E_INVALID_ARGUMENT},
        {&v, &iv, NDX_INT32, NDX_E_INVALID_ARGUMENT},     {&s2, &s3, NDX_INT32, NDX_E_INVALID_ARGUMENT},
        {&cx, &cx, NDX_INT32, NDX_E_UNSUPPORTED},         {&bx, &bx, NDX_INT32, NDX_E_UNSUPPORTED},
        {&v, &v, NDX_FLOAT32, NDX_E_INVALID_ARGUMENT},    {&v, &v, NDX_INT16, NDX_E_INVALID_ARGUMENT},
        {&big, &v, NDX_INT64, NDX_E_INVALID_ARGUMENT},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ndx_tensor out = {0}, idx = {0};
        ndx_error err;
        ndx_status st = ndx_setdiff1d(cases[k].x, cases[k].y, cases[k].out_idx, NULL, &out, &idx, &err);
        if (st != cases[k].code) fail_msg("setdiff1d case %zu: status %d, %s", k, (int)st, err.message);
        assert_non_null(strstr(err.message, "setdiff1d"));
        assert_null(out.data), assert_null(idx.data);
        assert_int_equal(ndx_setdiff1d_shape(cases[k].x, cases[k].y, cases[k].out_idx, &out, &idx, &err),
                         cases[k].code);
        ndx_spec xs = ndx_spec_of(cases[k].x), ys = ndx_spec_of(cases[k].y), os, is;
        assert_int_equal(ndx_setdiff1d_infer(&xs, &ys, cases[k].out_idx, &os, &is, &err), cases[k].code);
    }
    /* caller outputs (v minus nothing: 3 values), one of them a value too long: both keep their bytes */
    ndx_tensor none = make_float(1, SHAPE(0));
    for (int wrong = 0; wrong < 2; wrong++) {
        ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 1, wrong == 0 ? 4 : 3);
        ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 1, wrong == 1 ? 4 : 3);
        test_guard g[2] = {test_guard_fill(&out, 0x6b), test_guard_fill(&idx, 0x6b)};
        ndx_error err;
        assert_int_not_equal(ndx_setdiff1d(&v, &none, NDX_INT32, NULL, &out, &idx, &err), NDX_OK);
        assert_non_null(strstr(err.message, "setdiff1d"));
        assert_untouched(&g[0], &out), assert_untouched(&g[1], &idx);
        test_tensor_free(&out), test_tensor_free(&idx);
    }
    /* out sharing x's memory */
    ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), v.data), idx = {0};
    ndx_error err;
    assert_fails(ndx_setdiff1d(&v, &none, NDX_INT32, NULL, &out, &idx, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "setdiff1d: out overlaps x");
    assert_null(idx.data);
    assert_untouched(&vg, &v);
    /* NULLs and an overflowing view */
    ndx_tensor a = {0}, b = {0};
    assert_int_not_equal(ndx_setdiff1d(NULL, &v, NDX_INT32, NULL, &a, &b, &err), NDX_OK);
    assert_int_not_equal(ndx_setdiff1d(&v, NULL, NDX_INT32, NULL, &a, &b, &err), NDX_OK);
    assert_int_not_equal(ndx_setdiff1d(&v, &v, NDX_INT32, NULL, NULL, &b, &err), NDX_OK);
    assert_int_not_equal(ndx_setdiff1d(&v, &v, NDX_INT32, NULL, &a, NULL, &err), NDX_OK);
    ndx_tensor huge = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(INT64_MAX / 2 + 1), v.data);
    assert_int_not_equal(ndx_setdiff1d(&v, &huge, NDX_INT64, NULL, &a, &b, &err), NDX_OK);
    assert_null(a.data), assert_null(b.data);
    test_tensor_free(&none), test_tensor_free(&s2), test_tensor_free(&s3);
    test_tensor_free(&cx), test_tensor_free(&bx), test_tensor_free(&iv);
    test_tensor_free(&scalar), test_tensor_free(&m), test_tensor_free(&v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(segment_ids_hostile),
        cmocka_unit_test(segment_shapes_and_counts),
        cmocka_unit_test(embedding_bag_hostile),
        cmocka_unit_test(gather_one_hot_mask_hostile),
        cmocka_unit_test(unique_hostile),
        cmocka_unit_test(setdiff1d_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
