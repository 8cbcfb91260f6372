/* bincount.c — TensorFlow's Bincount and DenseBincount (ndx.h section 5g, "Bincount") on the
 * segment reductions' engine: a bincount is an unsorted segment sum of the weights (or of ones)
 * whose segment ids are the values.
 *
 *   infer  the shape and dtype checks on specs;
 *   check  every value read once into int64 scratch: a negative one fails the call, one >= size
 *          becomes -1 (a dropped row), a row of a per-row count is offset to its output row;
 *   run    the scatter engine (scatter_nd_plan.h) adds the weights, or ones, into a zeroed
 *          output; binary_output writes ones instead (its last write wins, all are 1).
 * Every block is taken before the first write, so a failed call writes nothing; every output
 * element has one owner applying its values in index order: the same bits at any thread count. */
#include "scatter_nd_plan.h"

static const char *op_label(unsigned flags) {
    return (flags & NDX_BINCOUNT_DENSE) ? "dense_bincount" : "bincount";
}

/* TensorFlow's registrations of T for both ops. */
static int weights_dtype_ok(ndx_dtype d) {
    return d == NDX_INT32 || d == NDX_INT64 || d == NDX_FLOAT32 || d == NDX_FLOAT64;
}

/* A spec's element count, or -1 while a dim is unknown. */
static int64_t known_count(const ndx_spec *s) {
    int64_t n;
    if (s->rank < 0 || !ndx_dims_known(s->rank, s->shape)) return -1;
    return ndx_dims_product(s->rank, s->shape, &n) ? n : -1;
}

/* `views`: the specs are of tensors already checked, and size must be known. */
static ndx_status bincount_infer(const ndx_spec *arr, int64_t size, const ndx_spec *weights,
                                 unsigned flags, int views, ndx_spec *out, ndx_error *err) {
    const char *op = op_label(flags);
    if (!arr || !weights)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: arr or weights is NULL", op);
    if (flags & ~(unsigned)(NDX_BINCOUNT_DENSE | NDX_BINCOUNT_BINARY_OUTPUT))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: flags %#x has unknown bits", op, flags);
    if (!views) {
        NDX_TRY(ndx_spec_check_as(arr, op, "arr", err));
        NDX_TRY(ndx_spec_check_as(weights, op, "weights", err));
    }
    if (arr->dtype != NDX_INT32 && arr->dtype != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: arr must be int32 or int64, not %s", op,
                        ndx_dtype_name(arr->dtype));
    if (!weights_dtype_ok(weights->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        "%s: weights of dtype %s is not supported (int32, int64, float32, "
                        "float64)", op, ndx_dtype_name(weights->dtype));
    if ((flags & NDX_BINCOUNT_DENSE) && arr->rank > 2)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: arr must be at most rank 2 (TensorFlow: Shape must be at most rank 2 "
                        "but is rank %d)", op, arr->rank);
    /* Weights of unknown length may yet be empty: the check waits. */
    if (known_count(weights) > 0 && arr->rank >= 0 &&
        (arr->rank != weights->rank || !ndx_dims_agree(arr->rank, arr->shape, weights->shape))) {
        char dims[NDX_DIMS_TEXT], wdims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, arr);
        ndx_format_spec_dims(wdims, sizeof wdims, weights);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: `weights` must be the same shape as `arr` or a length-0 `Tensor`, "
                        "in which case it acts as all weights equal to 1. Received %s for arr of "
                        "shape %s", op, wdims, dims);
    }
    /* After the shapes, as TensorFlow's kernel checks them. */
    if (size < 0 && !(size == NDX_UNKNOWN && !views))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: size (%lld) must be non-negative", op,
                        (long long)size);
    ndx_spec o = *weights;
    if ((flags & NDX_BINCOUNT_DENSE) && arr->rank < 0) {
        o.rank = NDX_UNKNOWN;
    } else if ((flags & NDX_BINCOUNT_DENSE) && arr->rank == 2) {
        o.rank = 2;
        o.shape[0] = arr->shape[0];
        o.shape[1] = size;
    } else {
        o.rank = 1;
        o.shape[0] = size;
    }
    int64_t count;
    size_t bytes;
    if (o.rank >= 0 && ndx_dims_known(o.rank, o.shape) &&
        (!ndx_dims_product(o.rank, o.shape, &count) || !ndx_bytes_of(count, o.itemsize, &bytes))) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, &o);
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: an output of shape %s is too large to address",
                        op, dims);
    }
    if (out) *out = o;
    return NDX_OK;
}

ndx_status ndx_bincount_infer(const ndx_spec *arr, int64_t size, const ndx_spec *weights,
                              unsigned flags, ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    return bincount_infer(arr, size, weights, flags, 0, out, err);
}

/* ---- the check step ------------------------------------------------------------------------ */

typedef struct read_job {
    const ndx_tensor *arr;
    int64_t size;
    int64_t per_row; /* values per row of a per-row count (0: one row) */
    int64_t *slots;
    ndx_changed negative; /* the lowest position of a negative value */
} read_job;

static void read_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    read_job *j = ctx;
    const void *base = j->arr->data;
    ndx_dtype dt = j->arr->dtype;
    int64_t size = j->size, per_row = j->per_row, first_bad = -1;
    for (int64_t i = begin; i < end; i++) {
        int64_t v = ndx_read_index(base, dt, i);
        if (v < 0 && first_bad < 0) first_bad = i;
        /* row * size + v < rows * size: the output's element count, which fits. A negative
         * value stays as read (for the message; the scatter drops negative slots). */
        j->slots[i] = v < 0 ? v : v >= size ? -1 : (per_row ? i / per_row * size : 0) + v;
    }
    if (first_bad >= 0) ndx_changed_note(&j->negative, first_bad);
}

/* The values' copy, in `slots` (count of them); fails on the first negative one. */
static ndx_status read_values(ndx_call *c, const ndx_tensor *arr, int64_t size, unsigned flags,
                              int64_t count, int64_t *slots) {
    read_job j = {arr, size, 0, slots, {0}};
    if ((flags & NDX_BINCOUNT_DENSE) && arr->rank == 2) j.per_row = arr->shape[1];
    ndx_changed_init(&j.negative);
    ndx_parallel_for(c->threads, count, (int64_t)1 << 15, read_fn, &j);
    int64_t bad = ndx_changed_row(&j.negative);
    if (bad < 0) return NDX_OK;
    char at[NDX_DIMS_TEXT];
    ndx_format_position(at, sizeof at, arr->rank, arr->shape, bad);
    return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT,
                    "%s: Input arr must be non-negative! arr%s = %lld", op_label(flags), at,
                    (long long)slots[bad]);
}

/* ---- the call -------------------------------------------------------------------------------- */

/* `count` ones of the output's dtype: what a count (or binary_output) scatters. */
static void fill_ones(void *ones, ndx_dtype dtype, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        switch (dtype) {
        case NDX_INT32: ((int32_t *)ones)[i] = 1; break;
        case NDX_INT64: ((int64_t *)ones)[i] = 1; break;
        case NDX_FLOAT32: ((float *)ones)[i] = 1.0f; break;
        default: ((double *)ones)[i] = 1.0; break;
        }
    }
}

static ndx_status run(ndx_call *c, const ndx_tensor *arr, int64_t size, const ndx_tensor *weights,
                      unsigned flags, const ndx_tensor *want, ndx_tensor *out) {
    int64_t count = ndx_tensor_count(arr), cells = ndx_tensor_count(want);
    int counted = ndx_tensor_count(weights) == 0 || (flags & NDX_BINCOUNT_BINARY_OUTPUT);
    int64_t *slots = NULL;
    void *ones = NULL, *scratch = NULL;
    /* count values of a valid view: neither block overflows */
    ndx_status s = ndx_call_scratch(c, (size_t)count * sizeof(int64_t), 0, "the checked values",
                                    (void **)&slots);
    if (s == NDX_OK) s = read_values(c, arr, size, flags, count, slots);
    if (cells == 0) count = 0; /* nothing to add into; the negatives were still refused */
    if (s == NDX_OK && counted)
        s = ndx_call_scratch(c, (size_t)count * want->itemsize, 0, "the ones counted", &ones);
    if (s == NDX_OK) {
        if (ones) fill_ones(ones, want->dtype, count);
        /* The output as one run of cells: each value lands on one cell. */
        ndx_tensor cells_view = ndx_tensor_make(want->dtype, 1, &cells, NULL);
        ndx_combine k;
        ndx_combine_find((flags & NDX_BINCOUNT_BINARY_OUTPUT) ? NDX_SCATTER_UPDATE
                                                               : NDX_SCATTER_ADD,
                         want->dtype, want->itemsize, &k);
        scatter_plan sp;
        ndx_scatter_slots_plan(c, c->op, slots, count, counted ? ones : weights->data,
                               &cells_view, NULL, &k, out, &sp);
        int allocated = 0;
        s = ndx_call_scratch(c, sp.scratch_bytes, 0, "scatter buckets", &scratch);
        if (s == NDX_OK) s = ndx_call_output(c, want, out, 0, "out", &allocated);
        if (s == NDX_OK) {
            cells_view.data = out->data;
            ndx_scatter_nd_run(&sp, &cells_view, scratch); /* the slots are checked */
        }
    }
    ndx_call_release(c, scratch);
    ndx_call_release(c, ones);
    ndx_call_release(c, slots);
    return s;
}

ndx_status ndx_bincount(const ndx_tensor *arr, int64_t size, const ndx_tensor *weights,
                        unsigned flags, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, op_label(flags), opt, out, err));
    if (!arr || !weights)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: arr or weights is NULL", c.op);
    NDX_TRY(ndx_tensor_check_as(arr, c.op, "arr", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check_as(weights, c.op, "weights", NULL, NULL, err));
    ndx_spec as, ws, os;
    ndx_spec_fill(&as, arr);
    ndx_spec_fill(&ws, weights);
    NDX_TRY(bincount_infer(&as, size, &ws, flags, 1, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    return run(&c, arr, size, weights, flags, &want, out);
}
