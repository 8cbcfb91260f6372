/* grad_segment.c — the gradients of the segment reductions, as TensorFlow's math_grad.py
 * defines them, built from the segment kinds themselves and gathers:
 *   sum:    dx = dy gathered by id (a negative id's row gets zeros: bad ids gather as zero);
 *   mean, sqrt_n: dy divided per segment by its count (or its square root) first;
 *   min, max: dy split evenly among the rows equal to their segment's result (ties share it);
 *   prod:   dy * conj(y / x), with TensorFlow's care for zeros (one zero: the product of the
 *           others; more: zero);
 *   sparse: SLICES of data's rows touched, dy gathered by segment id (scaled as above).
 * The sorted Segment* kinds use the unsorted kinds on their (sorted) ids, with the output's row
 * count as num_segments. */
#include "grad_util.h"

/* A gather of rows of x by ids (any shape) where an id outside [0, rows) gives a zero row. */
static ndx_output rows_by_id(const grad_ctx *c, ndx_output x, ndx_output ids) {
    ndx_gather_attrs zero = {0, NDX_BAD_INDICES_IGNORE};
    return ndx_op_gather_at(c->file, c->line, c->s, x, ids, grad_i64(c, 0), &zero);
}

static ndx_output unsorted(const grad_ctx *c, ndx_segment_op op, ndx_output data, ndx_output ids,
                           ndx_output n) {
    return ndx_op_unsorted_segment_reduce_at(c->file, c->line, c->s, op, data, ids, n);
}

/* y's row count as an int64 scalar. */
static ndx_output row_count(const grad_ctx *c, ndx_output y) {
    return G_RESHAPE(c, grad_dims(c, y, 0, 1), grad_i64_vec(c, 0, NULL));
}

/* seg ([N] + tail, tail of `tail` dims) divided row by row by per ([N]). */
static ndx_output divide_rows(const grad_ctx *c, ndx_output seg, ndx_output per, int tail) {
    int64_t dims[NDX_MAX_RANK + 1] = {-1};
    for (int k = 1; k <= tail; k++) dims[k] = 1;
    return G_DIV(c, seg, G_RESHAPE(c, per, grad_i64_vec(c, tail + 1, dims)));
}

/* dy scaled for MEAN (by each segment's count of ids) or SQRT_N (its square root: the sqrt_n
 * reduction of ones); dy itself for SUM. */
static ndx_output scaled_dy(const grad_ctx *c, ndx_segment_op op, ndx_output dy, ndx_output ids,
                            ndx_output n, ndx_dtype dtype, int tail) {
    if (op == NDX_SEGMENT_SUM) return dy;
    ndx_output ones = G_CAST(c, G_ONES_LIKE(c, ids), dtype);
    ndx_segment_op count = op == NDX_SEGMENT_MEAN ? NDX_SEGMENT_SUM : NDX_SEGMENT_SQRT_N;
    return divide_rows(c, dy, unsorted(c, count, ones, ids, n), tail);
}

/* _UnsortedSegmentMinOrMaxGrad: the rows equal to their segment's result share its dy. */
static ndx_output min_max_grad(const grad_ctx *c, ndx_output data, ndx_output ids, ndx_output n,
                               ndx_output y, ndx_output dy) {
    ndx_output selected = G_EQUAL(c, data, rows_by_id(c, y, ids));
    ndx_dtype dtype = ndx_output_spec(data).dtype;
    ndx_output count = unsorted(c, NDX_SEGMENT_SUM, G_CAST(c, selected, dtype), ids, n);
    ndx_output share = rows_by_id(c, G_DIV(c, dy, count), ids);
    return ndx_op_select_at(c->file, c->line, c->s, selected, share, G_ZEROS_LIKE(c, share));
}

/* _UnsortedSegmentProdGrad: dy * y / x where x is not zero; at a zero, the product of the
 * segment's other rows (the non-zero product) when it is the segment's only zero; zero where
 * the segment has more than one. */
static ndx_output prod_grad(const grad_ctx *c, ndx_output data, ndx_output ids, ndx_output n,
                            ndx_output y, ndx_output dy) {
    ndx_output zero = G_ZEROS_LIKE(c, data);
    ndx_output is_zero = G_EQUAL(c, data, zero);
    ndx_output zeros = unsorted(c, NDX_SEGMENT_SUM, G_CAST(c, is_zero, NDX_INT32), ids, n);
    ndx_output many = G_BIN(c, NDX_OP_GREATER, zeros, grad_scalar(c, NDX_INT32, 1));
    ndx_output g = ndx_op_select_at(c->file, c->line, c->s, many, G_ZEROS_LIKE(c, dy), dy);
    ndx_output non_zero = ndx_op_select_at(c->file, c->line, c->s, is_zero,
                                           G_ONES_LIKE(c, data), data);
    ndx_output non_zero_prod = unsorted(c, NDX_SEGMENT_PROD, non_zero, ids, n);
    ndx_output by_element = G_DIV(c, rows_by_id(c, y, ids), non_zero);
    ndx_output partial = ndx_op_select_at(c->file, c->line, c->s, is_zero,
                                          rows_by_id(c, non_zero_prod, ids), by_element);
    /* conj: ndx's (and TensorFlow's gradient checker's) convention for complex dtypes */
    return G_MUL(c, rows_by_id(c, g, ids), grad_conj(c, partial));
}

/* UnsortedSegment* (data, segment_ids, num_segments) and Segment* (data, segment_ids). */
ndx_status grad_segment(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output data = grad_in(&c, 0), ids = grad_in(&c, 1), y = grad_out(&c, 0);
    ndx_spec ds = ndx_output_spec(data), is = ndx_output_spec(ids);
    if (!grad_dtype_ok(ds.dtype)) return NDX_OK;
    if (ds.rank == NDX_UNKNOWN || is.rank == NDX_UNKNOWN)
        return grad_fail(&c, NDX_E_UNSUPPORTED,
                         "needs the ranks of data and segment_ids known at build time");
    int tail = ds.rank - is.rank;
    ndx_output n = graph_desc(c.n->kind)->min_inputs == 3 ? grad_in(&c, 2) : row_count(&c, y);
    ndx_output dy = grad_dense(&c, &dys[0], y);
    ndx_segment_op sop = (ndx_segment_op)graph_desc(c.n->kind)->variant;
    ndx_output dx;
    if (sop == NDX_SEGMENT_MIN || sop == NDX_SEGMENT_MAX)
        dx = min_max_grad(&c, data, ids, n, y, dy);
    else if (sop == NDX_SEGMENT_PROD)
        dx = prod_grad(&c, data, ids, n, y, dy);
    else
        dx = rows_by_id(&c, scaled_dy(&c, sop, dy, ids, n, ds.dtype, tail), ids);
    dxs[0] = grad_dense_of(dx);
    return grad_status(&c);
}

/* SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]: SLICES of data at `indices`, each row dy's
 * row of its segment (scaled for mean and sqrt_n). */
ndx_status grad_sparse_segment(ndx_scope s, ndx_operation op, const graph_grad *dys,
                               graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output data = grad_in(&c, 0), indices = grad_in(&c, 1), ids = grad_in(&c, 2);
    ndx_output y = grad_out(&c, 0);
    ndx_spec ds = ndx_output_spec(data);
    if (!grad_dtype_ok(ds.dtype)) return NDX_OK;
    if (ds.rank == NDX_UNKNOWN)
        return grad_fail(&c, NDX_E_UNSUPPORTED, "needs the rank of data known at build time");
    ndx_output n = row_count(&c, y);
    ndx_output dy = grad_dense(&c, &dys[0], y);
    ndx_segment_op sop = (ndx_segment_op)graph_desc(c.n->kind)->variant;
    ndx_output values = rows_by_id(&c, scaled_dy(&c, sop, dy, ids, n, ds.dtype, ds.rank - 1), ids);
    ndx_output at = G_RESHAPE(&c, grad_int64(&c, indices),
                              grad_i64_vec(&c, 2, (const int64_t[]){-1, 1}));
    dxs[0] = grad_slices_of(at, values, grad_shape(&c, data));
    return grad_status(&c);
}
