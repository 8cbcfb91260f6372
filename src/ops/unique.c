/* unique.c — tf.unique, tf.unique_with_counts (Unique, UniqueV2, UniqueWithCounts[V2]): the
 * distinct slices of x along an axis in order of first occurrence (y), each slice's position
 * in y (idx) and, with counts, how many slices each of y stands for.
 *
 * Infer: TensorFlow's checks on partial shapes (y's axis dim waits for the values). Plan: the
 * views, infer, the geometry and the count's scratch. Count: unique_hash.c. Outputs: checked or
 * allocated, all of them, before the first write. Run: y is gather's copy of x at the first
 * occurrences; idx and counts come from the count's numbers. */
#include "gather_nd_plan.h"
#include "unique_plan.h"

/* TensorFlow's limit for an int32 idx (its kernel applies it to every input). */
#define INT32_ELEMENTS 2147483647

static const char *op_name(int with_counts) {
    return with_counts ? "unique_with_counts" : "unique";
}

/* ---- infer ------------------------------------------------------------------------------- */

/* Every check on a spec valid on its own; *axis_out = the non-negative axis (NDX_UNKNOWN while
 * x's rank is). y gets x's spec with the axis dim unknown (0 when x's is 0), idx [n] and counts
 * [?] of out_idx. */
static ndx_status infer_checked(const ndx_spec *x, int axis, ndx_dtype out_idx, int with_counts,
                                int *axis_out, ndx_spec *y, ndx_spec *idx, ndx_spec *counts,
                                ndx_error *err) {
    const char *op = op_name(with_counts);
    unique_key key;
    if (!unique_key_of(x->dtype, &key))
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        "%s: x of dtype %s is not supported (TensorFlow's Unique takes real "
                        "numbers, bool and strings)",
                        op, ndx_dtype_name(x->dtype));
    if (out_idx != NDX_INT32 && out_idx != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out_idx must be int32 or int64, not %s",
                        op, ndx_dtype_name(out_idx));
    int rank = x->rank;
    *axis_out = NDX_UNKNOWN;
    if (rank != NDX_UNKNOWN) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, x);
        if (axis == NDX_AXIS_NONE && rank != 1)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: unique expects a 1D vector; x has shape %s (pass an axis for "
                            "slices)",
                            op, dims);
        int a = axis == NDX_AXIS_NONE ? 0 : axis < 0 ? axis + rank : axis;
        if (a < 0 || a >= rank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: axis has to be between [0, %d); got %d for x of shape %s", op,
                            rank, axis, dims);
        *axis_out = a;
        int64_t count;
        if (out_idx == NDX_INT32 && ndx_known_product(rank, x->shape, &count) &&
            count > INT32_ELEMENTS)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: unique does not support input tensors larger than %d elements "
                            "with an int32 idx (x has %lld)",
                            op, INT32_ELEMENTS, (long long)count);
    }
    *y = *x;
    *idx = ndx_spec_make(out_idx, 1, (const int64_t[]){NDX_UNKNOWN});
    *counts = *idx;
    if (*axis_out != NDX_UNKNOWN) {
        int64_t n = x->shape[*axis_out];
        y->shape[*axis_out] = n == 0 ? 0 : NDX_UNKNOWN;
        idx->shape[0] = n;
        counts->shape[0] = n == 0 ? 0 : NDX_UNKNOWN;
    }
    return NDX_OK;
}

ndx_status ndx_unique_infer(const ndx_spec *x, int axis, ndx_dtype out_idx, ndx_spec *y,
                            ndx_spec *idx, ndx_spec *counts, ndx_error *err) {
    const char *op = op_name(counts != NULL);
    ndx_error_clear(err);
    if (!x) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: x is NULL", op);
    NDX_TRY(ndx_spec_check_as(x, op, "x", err));
    if (!y || !idx) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: y or idx is NULL", op);
    ndx_spec ys, is, cs;
    int a;
    NDX_TRY(infer_checked(x, axis, out_idx, counts != NULL, &a, &ys, &is, &cs, err));
    *y = ys;
    *idx = is;
    if (counts) *counts = cs;
    return NDX_OK;
}

/* ---- plan -------------------------------------------------------------------------------- */

static ndx_status unique_plan_make(ndx_call *c, const ndx_tensor *x, int axis, ndx_dtype out_idx,
                                   int with_counts, unique_plan *p) {
    const char *op = op_name(with_counts);
    int64_t count;
    if (!x) return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT, "%s: x is NULL", op);
    NDX_TRY(ndx_tensor_check_as(x, op, "x", &count, NULL, c->err));
    ndx_spec xs = ndx_spec_of(x), ys, is, cs;
    int a;
    NDX_TRY(infer_checked(&xs, axis, out_idx, with_counts, &a, &ys, &is, &cs, c->err));
    memset(p, 0, sizeof *p);
    p->x = x->data;
    p->size = x->itemsize;
    unique_key_of(x->dtype, &p->key);
    p->axis = a;
    p->idx_dtype = out_idx;
    p->y_desc = *x;
    p->y_desc.data = NULL;
    p->n = x->shape[a];
    p->outer = p->inner = 1;
    if (count == 0) {
        p->outer = 0; /* slices of no elements: all equal */
    } else {
        for (int k = 0; k < a; k++) p->outer *= x->shape[k];
        for (int k = a + 1; k < x->rank; k++) p->inner *= x->shape[k];
    }
    p->capacity = 16;
    while (p->capacity < 2 * p->n) p->capacity *= 2; /* n <= count < 2^62 */
    p->wide_slots = p->n > INT32_MAX;
    size_t lists, slots;
    if (__builtin_mul_overflow((size_t)p->n, 3 * sizeof(int64_t), &lists) ||
        __builtin_mul_overflow((size_t)p->capacity, p->wide_slots ? (size_t)8 : (size_t)4,
                               &slots) ||
        __builtin_add_overflow(lists, slots, &p->scratch_bytes))
        return ndx_fail(c->err, NDX_E_OVERFLOW, "%s: too many slices to count", op);
    if (p->n == 0) p->scratch_bytes = 0;
    return NDX_OK;
}

/* ---- outputs and run --------------------------------------------------------------------- */

/* idx from the scratch's numbers (unless the count wrote them there), then counts from idx. */
static void write_numbers(const unique_plan *p, void *scratch, int64_t uniques, ndx_tensor *idx,
                          ndx_tensor *counts, int counted_into_idx) {
    const int64_t *ids = unique_ids(scratch);
    if (counted_into_idx) {
        /* (already there) */
    } else if (p->idx_dtype == NDX_INT32) {
        int32_t *o = idx->data;
        for (int64_t i = 0; i < p->n; i++) o[i] = (int32_t)ids[i];
    } else if (p->n > 0) {
        memcpy(idx->data, ids, (size_t)p->n * sizeof *ids);
    }
    if (!counts || uniques == 0) return;
    if (p->idx_dtype == NDX_INT32) {
        int32_t *o = counts->data;
        const int32_t *numbers = idx->data;
        memset(o, 0, (size_t)uniques * sizeof *o);
        for (int64_t i = 0; i < p->n; i++) o[numbers[i]]++;
    } else {
        int64_t *o = counts->data;
        const int64_t *numbers = idx->data;
        memset(o, 0, (size_t)uniques * sizeof *o);
        for (int64_t i = 0; i < p->n; i++) o[numbers[i]]++;
    }
}

/* The three output views after the count. */
static void describe(const unique_plan *p, int64_t uniques, ndx_tensor *y, ndx_tensor *idx,
                     ndx_tensor *counts) {
    *y = p->y_desc;
    y->shape[p->axis] = uniques;
    *idx = ndx_tensor_make(p->idx_dtype, 1, &p->n, NULL);
    *counts = ndx_tensor_make(p->idx_dtype, 1, &uniques, NULL);
}

/* Plan and count for both entry points: *scratch holds the numbers (the caller releases it).
 * `idx` not NULL: an idx the call allocates (data NULL) is taken first and the count writes the
 * numbers straight into it (*own_idx set; the caller drops it if a later step fails), sparing a
 * copy of n numbers; a caller's idx is written only after every check. */
static ndx_status plan_and_count(ndx_call *c, const ndx_tensor *x, int axis, ndx_dtype out_idx,
                                 int with_counts, unique_plan *p, void **scratch,
                                 int64_t *uniques, ndx_tensor *idx, int *own_idx) {
    *scratch = NULL;
    NDX_TRY(unique_plan_make(c, x, axis, out_idx, with_counts, p));
    NDX_TRY(ndx_call_scratch(c, p->scratch_bytes, 0, "the count of unique slices", scratch));
    void *numbers = NULL;
    if (idx && idx->data == NULL && p->n > 0) {
        ndx_tensor want = ndx_tensor_make(p->idx_dtype, 1, &p->n, NULL);
        ndx_status s = ndx_call_output(c, &want, idx, 0, "idx", own_idx);
        if (s != NDX_OK) {
            ndx_call_release(c, *scratch);
            *scratch = NULL;
            return s;
        }
        numbers = idx->data;
    }
    *uniques = ndx_unique_count(p, *scratch, numbers);
    return NDX_OK;
}

ndx_status ndx_unique_shape(const ndx_tensor *x, int axis, ndx_dtype out_idx, ndx_tensor *y,
                            ndx_tensor *idx, ndx_tensor *counts, ndx_error *err) {
    ndx_call c;
    const char *op = op_name(counts != NULL);
    NDX_TRY(ndx_call_begin_outs(&c, op, NULL, err));
    if (!y || !idx) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: y or idx is NULL", op);
    unique_plan p;
    void *scratch;
    int64_t uniques;
    NDX_TRY(plan_and_count(&c, x, axis, out_idx, counts != NULL, &p, &scratch, &uniques, NULL,
                           NULL));
    ndx_tensor cs;
    describe(&p, uniques, y, idx, &cs);
    if (counts) *counts = cs;
    ndx_call_release(&c, scratch);
    return NDX_OK;
}

ndx_status ndx_unique(const ndx_tensor *x, int axis, ndx_dtype out_idx, const ndx_options *opt,
                      ndx_tensor *y, ndx_tensor *idx, ndx_tensor *counts, ndx_error *err) {
    ndx_call c;
    const char *op = op_name(counts != NULL);
    NDX_TRY(ndx_call_begin_outs(&c, op, opt, err));
    if (!y || !idx) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: y or idx is NULL", op);
    unique_plan p;
    void *scratch;
    int64_t uniques;
    ndx_tensor ty = *y, tidx = *idx, tcounts = counts ? *counts : ndx_zero_tensor;
    int own_y = 0, own_idx = 0, own_counts = 0;
    NDX_TRY(plan_and_count(&c, x, axis, out_idx, counts != NULL, &p, &scratch, &uniques, &tidx,
                           &own_idx));
    int counted_into_idx = own_idx;
    /* Every output checked or allocated before any is written; undone on failure. */
    ndx_tensor want_y, want_idx, want_counts;
    describe(&p, uniques, &want_y, &want_idx, &want_counts);
    ndx_status st = ndx_call_output(&c, &want_y, &ty, 0, "y", &own_y);
    if (st == NDX_OK && !own_idx) st = ndx_call_output(&c, &want_idx, &tidx, 0, "idx", &own_idx);
    if (st == NDX_OK && counts)
        st = ndx_call_output(&c, &want_counts, &tcounts, 0, "counts", &own_counts);
    /* y: x gathered at the first occurrences (their numbers' order). */
    gather_plan gp;
    ndx_tensor firsts =
        ndx_tensor_make(NDX_INT64, 1, &uniques, scratch ? unique_first(&p, scratch) : NULL);
    size_t y_bytes = 0, x_bytes = 0;
    ndx_tensor_check(&ty, "y", NULL, &y_bytes, NULL);
    ndx_tensor_check(x, "x", NULL, &x_bytes, NULL);
    if (st == NDX_OK && ndx_overlaps(ty.data, y_bytes, x->data, x_bytes))
        st = ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                      "%s: y overlaps x; it must be separate memory", op);
    if (st == NDX_OK) st = ndx_gather_plan(&c, x, &firsts, p.axis, 0, ty.data, &gp);
    int64_t changed;
    if (st == NDX_OK) st = ndx_gather_execute(&c, &gp, ty.data, &changed);
    if (st != NDX_OK) {
        ndx_call_drop_output(&c, &ty, own_y);
        ndx_call_drop_output(&c, &tidx, own_idx);
        ndx_call_drop_output(&c, &tcounts, own_counts);
        ndx_call_release(&c, scratch);
        return st;
    }
    write_numbers(&p, scratch, uniques, &tidx, counts ? &tcounts : NULL, counted_into_idx);
    ndx_call_release(&c, scratch);
    *y = ty;
    *idx = tidx;
    if (counts) *counts = tcounts;
    return NDX_OK;
}
