/* concat_slice.c — concat, stack and slice (see dense_ops.h): ops that join tensors along an axis or
 * cut a block out of one. They move bytes, never look at values, so every dtype takes the same
 * path (strings of one width too). */
#include <stdio.h>

#include "core.h"
#include "dense_ops.h"

/* "float32", or "string(5)" for a string of known width. */
static void type_text(char *buf, size_t cap, const ndx_spec *s) {
    if (s->dtype == NDX_STRING && s->itemsize)
        snprintf(buf, cap, "string(%zu)", s->itemsize);
    else
        snprintf(buf, cap, "%s", ndx_dtype_name(s->dtype));
}

/* values[i] of the same type as values[0] (dtype, and width for strings of known width). */
static ndx_status check_same_type(const char *op, int n, const ndx_spec *values,
                                  ndx_error *err) {
    for (int i = 1; i < n; i++) {
        int widths_known = values[0].itemsize && values[i].itemsize;
        if (values[i].dtype == values[0].dtype &&
            (values[0].dtype != NDX_STRING || !widths_known ||
             values[i].itemsize == values[0].itemsize))
            continue;
        char a[32], b[32];
        type_text(a, sizeof a, &values[i]);
        type_text(b, sizeof b, &values[0]);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: values[%d] is %s, but values[0] is %s",
                        op, i, a, b);
    }
    return NDX_OK;
}

static ndx_status check_values(const char *op, int n, const ndx_spec *values, ndx_error *err) {
    if (n < 1 || !values)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: needs at least one value, not %d", op,
                        n);
    for (int i = 0; i < n; i++) {
        char what[48];
        snprintf(what, sizeof what, "%s: values[%d]", op, i);
        NDX_TRY(ndx_spec_check(&values[i], what, err));
    }
    return check_same_type(op, n, values, err);
}

/* The one value of an int32 or int64 argument of one element (axis). */
static ndx_status check_scalar_int(const char *op, const char *what, const ndx_spec *s,
                                   int one_element_ok, ndx_error *err) {
    int64_t len;
    NDX_TRY(glue_check_int_arg(op, what, s, 1, &len, err));
    if (!one_element_ok && s->rank != NDX_UNKNOWN && s->rank != 0) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, s);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s must be a scalar, but has shape %s",
                        op, what, dims);
    }
    if (len != NDX_UNKNOWN && len != 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s must hold a single value, but has "
                        "%lld", op, what, (long long)len);
    return NDX_OK;
}

/* The first known rank among the values (NDX_UNKNOWN when none is), checked to be everyone's. */
static ndx_status common_rank(const char *op, int n, const ndx_spec *values, int *rank,
                              ndx_error *err) {
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (values[i].rank == NDX_UNKNOWN) continue;
        if (first < 0) {
            first = i;
            continue;
        }
        if (values[i].rank == values[first].rank) continue;
        char a[NDX_DIMS_TEXT], b[NDX_DIMS_TEXT];
        ndx_format_spec_dims(a, sizeof a, &values[first]);
        ndx_format_spec_dims(b, sizeof b, &values[i]);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: ranks of all input tensors should "
                        "match: values[%d].shape = %s vs. values[%d].shape = %s", op, first, a, i,
                        b);
    }
    *rank = first < 0 ? NDX_UNKNOWN : values[first].rank;
    return NDX_OK;
}

/* The type of the output: values[0]'s, with the widest string width when one is unknown (the
 * graph widens strings of different widths before the op runs: graph_widths.c). */
static ndx_spec joined_type(int n, const ndx_spec *values, int rank, const int64_t *shape) {
    ndx_spec out = ndx_spec_make(values[0].dtype, rank, shape);
    out.itemsize = values[0].itemsize;
    for (int i = 0; i < n; i++)
        if (values[i].itemsize == 0) out.itemsize = 0;
    return out;
}

/* ---- concat ---------------------------------------------------------------------------------- */

ndx_status ndx_concat_infer(int n, const ndx_spec *values, const ndx_spec *axis_spec,
                            const ndx_tensor *axis, ndx_spec *out, ndx_error *err) {
    NDX_TRY(check_values("concat", n, values, err));
    NDX_TRY(ndx_spec_check(axis_spec, "concat: axis", err));
    NDX_TRY(check_scalar_int("concat", "axis", axis_spec, 0, err));
    int rank;
    NDX_TRY(common_rank("concat", n, values, &rank, err));
    if (rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "concat: can't concatenate scalars (use "
                        "stack instead)");
    int64_t shape[NDX_MAX_RANK];
    if (rank == NDX_UNKNOWN) {
        *out = joined_type(n, values, NDX_UNKNOWN, shape);
        return NDX_OK;
    }
    if (!axis) { /* any dim may be the axis: only the ranks are checked */
        for (int d = 0; d < rank; d++) shape[d] = NDX_UNKNOWN;
        *out = joined_type(n, values, rank, shape);
        return NDX_OK;
    }
    int64_t a = ndx_read_index(axis->data, axis->dtype, 0);
    if (a < -rank || a >= rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "concat: expected concatenating dimensions "
                        "in the range [%d, %d), but got %lld", -rank, rank, (long long)a);
    if (a < 0) a += rank;
    /* Each dim: the first known one, which every other known one must equal (but the axis's,
     * which add up). */
    int64_t total = 0;
    for (int d = 0; d < rank; d++) shape[d] = NDX_UNKNOWN;
    for (int i = 0; i < n; i++) {
        if (values[i].rank == NDX_UNKNOWN) {
            total = NDX_UNKNOWN;
            continue;
        }
        for (int d = 0; d < rank; d++) {
            int64_t dim = values[i].shape[d];
            if (d == a) {
                if (!ndx_dim_known(dim) || total == NDX_UNKNOWN) total = NDX_UNKNOWN;
                else if (!ndx_add_i64(total, dim, &total))
                    return ndx_fail(err, NDX_E_OVERFLOW, "concat: the output's dim %d overflows "
                                    "int64", d);
                continue;
            }
            if (!ndx_dim_known(dim)) continue;
            if (!ndx_dim_known(shape[d])) {
                shape[d] = dim;
                continue;
            }
            if (shape[d] == dim) continue;
            int j = 0;
            while (values[j].rank == NDX_UNKNOWN || values[j].shape[d] != shape[d]) j++;
            char x[NDX_DIMS_TEXT], y[NDX_DIMS_TEXT];
            ndx_format_spec_dims(x, sizeof x, &values[j]);
            ndx_format_spec_dims(y, sizeof y, &values[i]);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "concat: dimension %d in both shapes "
                            "must be equal: values[%d].shape = %s vs. values[%d].shape = %s", d, j,
                            x, i, y);
        }
    }
    shape[a] = total;
    *out = joined_type(n, values, rank, shape);
    return NDX_OK;
}

/* The copy of concat and stack: the output is `outer` rows, each the inputs' rows one after
 * another; input i's rows are its elements split evenly in `outer`. */
typedef struct join_job {
    int n;
    const ndx_tensor *values;
    int64_t outer;
    size_t row; /* bytes of an output row */
    unsigned char *out;
} join_job;

static void join_rows(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const join_job *j = ctx;
    for (int64_t r = begin; r < end; r++) {
        unsigned char *o = j->out + (size_t)r * j->row;
        for (int i = 0; i < j->n; i++) {
            const ndx_tensor *v = &j->values[i];
            size_t bytes = (size_t)(ndx_tensor_count(v) / j->outer) * v->itemsize;
            if (bytes) memcpy(o, (const unsigned char *)v->data + (size_t)r * bytes, bytes);
            o += bytes;
        }
    }
}

/* The output of concat or stack (spec os, joined along `axis` >= 0) allocated or checked, then
 * filled with each value's run of bytes in turn for every index of the dims before the axis. */
static ndx_status join(ndx_call *c, int n, const ndx_tensor *values, const ndx_spec *os,
                       int axis, ndx_tensor *out) {
    ndx_tensor want = ndx_view_of_spec(os);
    int allocated;
    NDX_TRY(ndx_call_output(c, &want, out, 0, "out", &allocated));
    int64_t outer = 1;
    for (int d = 0; d < axis; d++) outer *= os->shape[d];
    int64_t count = ndx_tensor_count(out);
    if (count == 0 || outer == 0) return NDX_OK;
    join_job j = {n, values, outer, (size_t)(count / outer) * out->itemsize, out->data};
    int64_t grain = GLUE_GRAIN / (count / outer) + 1;
    ndx_parallel_for(c->threads, outer, grain, join_rows, &j);
    return NDX_OK;
}

/* Checks every value's layout and returns their specs in a scratch array (freed by the
 * caller with ndx_call_release). */
static ndx_status value_specs(ndx_call *c, const char *op, int n, const ndx_tensor *values,
                              ndx_spec **specs, ndx_error *err) {
    if (n < 1 || !values)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: needs at least one value, not %d", op,
                        n);
    void *p;
    NDX_TRY(ndx_call_scratch(c, (size_t)n * sizeof **specs, 0, "the values' specs", &p));
    *specs = p;
    for (int i = 0; i < n; i++) {
        char what[48];
        snprintf(what, sizeof what, "%s: values[%d]", op, i);
        ndx_status st = ndx_tensor_check(&values[i], what, NULL, NULL, err);
        if (st != NDX_OK) {
            ndx_call_release(c, p);
            return st;
        }
        (*specs)[i] = ndx_spec_of(&values[i]);
    }
    return NDX_OK;
}

ndx_status ndx_concat(int n, const ndx_tensor *values, const ndx_tensor *axis,
                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "concat", opt, out, err));
    if (!axis) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "concat: axis is NULL");
    NDX_TRY(ndx_tensor_check(axis, "concat: axis", NULL, NULL, err));
    ndx_spec *specs, as = ndx_spec_of(axis), os;
    NDX_TRY(value_specs(&c, "concat", n, values, &specs, err));
    ndx_status st = ndx_concat_infer(n, specs, &as, axis, &os, err);
    ndx_call_release(&c, specs);
    NDX_TRY(st);
    int64_t a = ndx_read_index(axis->data, axis->dtype, 0);
    if (a < 0) a += os.rank;
    return join(&c, n, values, &os, (int)a, out);
}

/* ---- stack ----------------------------------------------------------------------------------- */

ndx_status ndx_stack_infer(int n, const ndx_spec *values, int axis, ndx_spec *out,
                           ndx_error *err) {
    NDX_TRY(check_values("stack", n, values, err));
    int rank;
    NDX_TRY(common_rank("stack", n, values, &rank, err));
    int64_t shape[NDX_MAX_RANK];
    if (rank == NDX_UNKNOWN) {
        *out = joined_type(n, values, NDX_UNKNOWN, shape);
        return NDX_OK;
    }
    if (rank + 1 > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "stack: values of rank %d stack into rank "
                        "%d; ndx tensors have at most %d dims", rank, rank + 1, NDX_MAX_RANK);
    if (axis < -(rank + 1) || axis > rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "stack: axis = %d not in [%d, %d)", axis,
                        -(rank + 1), rank + 1);
    if (axis < 0) axis += rank + 1;
    int64_t dims[NDX_MAX_RANK] = {0};
    for (int d = 0; d < rank; d++) dims[d] = NDX_UNKNOWN;
    for (int i = 0; i < n; i++) {
        if (values[i].rank == NDX_UNKNOWN) continue;
        int bad = 0;
        for (int d = 0; d < rank; d++) {
            if (ndx_dims_conflict(dims[d], values[i].shape[d])) bad = 1;
            else if (!ndx_dim_known(dims[d])) dims[d] = values[i].shape[d];
        }
        if (!bad) continue;
        int j;
        for (j = 0; j < i; j++)
            if (values[j].rank != NDX_UNKNOWN && !ndx_dims_agree(rank, values[j].shape,
                                                                 values[i].shape))
                break;
        char x[NDX_DIMS_TEXT], y[NDX_DIMS_TEXT];
        ndx_format_spec_dims(x, sizeof x, &values[j]);
        ndx_format_spec_dims(y, sizeof y, &values[i]);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "stack: shapes of all inputs must match: "
                        "values[%d].shape = %s != values[%d].shape = %s", j, x, i, y);
    }
    for (int d = 0, k = 0; d <= rank; d++) shape[d] = d == axis ? n : dims[k++];
    *out = joined_type(n, values, rank + 1, shape);
    return NDX_OK;
}

ndx_status ndx_stack(int n, const ndx_tensor *values, int axis, const ndx_options *opt,
                     ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "stack", opt, out, err));
    ndx_spec *specs, os;
    NDX_TRY(value_specs(&c, "stack", n, values, &specs, err));
    ndx_status st = ndx_stack_infer(n, specs, axis, &os, err);
    ndx_call_release(&c, specs);
    NDX_TRY(st);
    if (axis < 0) axis += os.rank;
    return join(&c, n, values, &os, axis, out);
}

/* ---- slice ----------------------------------------------------------------------------------- */

ndx_status ndx_slice_infer(const ndx_spec *input, const ndx_spec *begin_spec,
                           const ndx_tensor *begin, const ndx_spec *size_spec,
                           const ndx_tensor *size, ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(input, "slice: input", err));
    int64_t blen, slen;
    NDX_TRY(glue_check_int_arg("slice", "begin", begin_spec, 0, &blen, err));
    NDX_TRY(glue_check_int_arg("slice", "size", size_spec, 0, &slen, err));
    if (begin_spec->dtype != size_spec->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "slice: begin and size must have one dtype, "
                        "not %s and %s", ndx_dtype_name(begin_spec->dtype),
                        ndx_dtype_name(size_spec->dtype));
    int64_t len = blen != NDX_UNKNOWN ? blen : slen;
    int rank = input->rank;
    if (rank == NDX_UNKNOWN && len != NDX_UNKNOWN && len <= NDX_MAX_RANK) rank = (int)len;
    if ((rank != NDX_UNKNOWN && ((blen != NDX_UNKNOWN && blen != rank) ||
                                 (slen != NDX_UNKNOWN && slen != rank))) ||
        (blen != NDX_UNKNOWN && slen != NDX_UNKNOWN && blen != slen) || len > NDX_MAX_RANK) {
        char b[NDX_DIMS_TEXT], s[NDX_DIMS_TEXT];
        ndx_format_spec_dims(b, sizeof b, begin_spec);
        ndx_format_spec_dims(s, sizeof s, size_spec);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "slice: expected begin and size arguments "
                        "to be 1-D tensors of size %d (input's rank), but got shapes %s and %s "
                        "instead", rank == NDX_UNKNOWN ? (int)len : rank, b, s);
    }
    int64_t shape[NDX_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        int64_t dim = input->rank == NDX_UNKNOWN ? NDX_UNKNOWN : input->shape[d];
        int64_t b = begin ? ndx_read_index(begin->data, begin->dtype, d) : NDX_UNKNOWN;
        int64_t s = size ? ndx_read_index(size->data, size->dtype, d) : 0;
        if (begin && (b < 0 || (ndx_dim_known(dim) && b > dim)))
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "slice: expected begin[%d] in [0, %lld], "
                            "but got %lld", d, (long long)dim, (long long)b);
        if (size && s < -1)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "slice: expected size[%d] >= -1, but got "
                            "%lld", d, (long long)s);
        if (size && s >= 0 && begin && ndx_dim_known(dim) && s > dim - b)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "slice: expected size[%d] in [0, %lld], "
                            "but got %lld", d, (long long)(dim - b), (long long)s);
        if (size && s >= 0) shape[d] = s;
        else if (size && begin && ndx_dim_known(dim)) shape[d] = dim - b; /* -1: to the end */
        else shape[d] = NDX_UNKNOWN;
    }
    *out = ndx_spec_make(input->dtype, rank, shape);
    out->itemsize = input->itemsize;
    return NDX_OK;
}

typedef struct slice_job {
    int rank;
    const int64_t *in_shape, *begin, *out_shape;
    size_t itemsize;
    const unsigned char *in;
    unsigned char *out;
} slice_job;

/* Output rows (every dim but the last) [begin, end): each a contiguous run of the input. */
static void slice_rows(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const slice_job *j = ctx;
    int last = j->rank - 1;
    size_t row = (size_t)j->out_shape[last] * j->itemsize;
    for (int64_t r = begin; r < end; r++) {
        int64_t rest = r, at = 0, stride = 1;
        /* The input offset of the row's first element, from its coordinates. */
        for (int d = last; d >= 0; d--) {
            int64_t coord = d == last ? 0 : rest % j->out_shape[d];
            if (d != last) rest /= j->out_shape[d];
            at += (j->begin[d] + coord) * stride;
            stride *= j->in_shape[d];
        }
        memcpy(j->out + (size_t)r * row, j->in + (size_t)at * j->itemsize, row);
    }
}

ndx_status ndx_slice(const ndx_tensor *input, const ndx_tensor *begin, const ndx_tensor *size,
                     const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "slice", opt, out, err));
    if (!input || !begin || !size)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "slice: input, begin or size is NULL");
    NDX_TRY(ndx_tensor_check(input, "slice: input", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check(begin, "slice: begin", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check(size, "slice: size", NULL, NULL, err));
    ndx_spec is = ndx_spec_of(input), bs = ndx_spec_of(begin), ss = ndx_spec_of(size), os;
    NDX_TRY(ndx_slice_infer(&is, &bs, begin, &ss, size, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    int64_t count = ndx_tensor_count(out);
    if (count == 0) return NDX_OK;
    if (input->rank == 0) {
        memcpy(out->data, input->data, input->itemsize);
        return NDX_OK;
    }
    int64_t starts[NDX_MAX_RANK];
    for (int d = 0; d < input->rank; d++) starts[d] = ndx_read_index(begin->data, begin->dtype, d);
    slice_job j = {input->rank, input->shape, starts, out->shape, input->itemsize, input->data,
                   out->data};
    int64_t row = out->shape[input->rank - 1];
    ndx_parallel_for(c.threads, count / row, GLUE_GRAIN / row + 1, slice_rows, &j);
    return NDX_OK;
}

/* ---- expand_dims and squeeze -------------------------------------------------------------- */

ndx_status ndx_expand_dims_infer(const ndx_spec *input, const ndx_spec *axis_spec,
                                 const ndx_tensor *axis, ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(input, "expand_dims: input", err));
    NDX_TRY(ndx_spec_check(axis_spec, "expand_dims: axis", err));
    NDX_TRY(check_scalar_int("expand_dims", "axis", axis_spec, 1, err));
    int rank = input->rank;
    int64_t shape[NDX_MAX_RANK];
    if (rank == NDX_UNKNOWN) {
        *out = ndx_spec_make(input->dtype, NDX_UNKNOWN, shape);
        out->itemsize = input->itemsize;
        return NDX_OK;
    }
    if (rank + 1 > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "expand_dims: input has rank %d; ndx "
                        "tensors have at most %d dims", rank, NDX_MAX_RANK);
    int64_t a = NDX_UNKNOWN;
    if (axis) {
        a = ndx_read_index(axis->data, axis->dtype, 0);
        if (a < -1 - rank || a > rank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "expand_dims: tried to expand dim index "
                            "%lld for tensor with %d dimensions", (long long)a, rank);
        if (a < 0) a += rank + 1;
    }
    for (int d = 0, k = 0; d <= rank; d++)
        shape[d] = a == NDX_UNKNOWN ? NDX_UNKNOWN : d == a ? 1 : input->shape[k++];
    *out = ndx_spec_make(input->dtype, rank + 1, shape);
    out->itemsize = input->itemsize;
    return NDX_OK;
}

ndx_status ndx_expand_dims(const ndx_tensor *input, const ndx_tensor *axis,
                           const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "expand_dims", opt, out, err));
    if (!input || !axis)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "expand_dims: input or axis is NULL");
    NDX_TRY(ndx_tensor_check(input, "expand_dims: input", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check(axis, "expand_dims: axis", NULL, NULL, err));
    ndx_spec is = ndx_spec_of(input), as = ndx_spec_of(axis), os;
    NDX_TRY(ndx_expand_dims_infer(&is, &as, axis, &os, err));
    return glue_reshape_to(&c, input, &os, out);
}

int ndx_squeeze_bit(int axis) {
    if (axis >= 0 && axis < NDX_MAX_RANK) return axis;
    if (axis < 0 && axis >= -NDX_MAX_RANK) return NDX_MAX_RANK - 1 - axis;
    return -1;
}

ndx_status ndx_squeeze_infer(const ndx_spec *input, uint32_t squeeze_dims, ndx_spec *out,
                             ndx_error *err) {
    NDX_TRY(ndx_spec_check(input, "squeeze: input", err));
    int rank = input->rank;
    int64_t shape[NDX_MAX_RANK];
    *out = ndx_spec_make(input->dtype, NDX_UNKNOWN, shape);
    out->itemsize = input->itemsize;
    if (rank == NDX_UNKNOWN) return NDX_OK;
    int drop[NDX_MAX_RANK] = {0};
    for (int b = 0; b < 2 * NDX_MAX_RANK; b++) {
        if (!(squeeze_dims >> b & 1u)) continue;
        int a = b < NDX_MAX_RANK ? b : NDX_MAX_RANK - 1 - b; /* ndx_squeeze_bit's inverse */
        if (a < -rank || a >= rank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "squeeze: tried to squeeze dim index %d "
                            "for tensor with %d dimensions", a, rank);
        drop[a < 0 ? a + rank : a] = 1;
    }
    int k = 0;
    for (int d = 0; d < rank; d++) {
        int64_t dim = input->shape[d];
        if (squeeze_dims == 0) { /* every dim of 1; an unknown one may be 1 or not */
            if (!ndx_dim_known(dim)) return NDX_OK;
            if (dim != 1) shape[k++] = dim;
        } else if (!drop[d]) {
            shape[k++] = dim;
        } else if (ndx_dim_known(dim) && dim != 1) {
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "squeeze: can not squeeze dim[%d], "
                            "expected a dimension of 1, got %lld", d, (long long)dim);
        }
    }
    *out = ndx_spec_make(input->dtype, k, shape);
    out->itemsize = input->itemsize;
    return NDX_OK;
}

ndx_status ndx_squeeze(const ndx_tensor *input, uint32_t squeeze_dims, const ndx_options *opt,
                       ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "squeeze", opt, out, err));
    if (!input) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "squeeze: input is NULL");
    NDX_TRY(ndx_tensor_check(input, "squeeze: input", NULL, NULL, err));
    ndx_spec is = ndx_spec_of(input), os;
    NDX_TRY(ndx_squeeze_infer(&is, squeeze_dims, &os, err));
    return glue_reshape_to(&c, input, &os, out);
}
