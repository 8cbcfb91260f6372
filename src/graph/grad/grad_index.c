/* grad_index.c — the gradients of ndx's index ops (TensorFlow's array_grad.py and
 * data_flow_grad.py): gather_nd gives slices of rows; scatter_nd and the tensor_scatters gather
 * the gradient back; dynamic_stitch finds the element that won each output row by stitching
 * position ids; dynamic_partition stitches its partitions' gradients back. */
#include <stdlib.h>

#include "grad_util.h"

/* The forward node's bad-index policy, for the gathers and scatters of its gradient. */
static ndx_gather_nd_attrs gather_policy(const grad_ctx *c) {
    ndx_gather_nd_attrs a = {0, (ndx_bad_indices)c->n->attrs.bad_indices};
    return a;
}

static ndx_scatter_attrs scatter_policy(const grad_ctx *c) {
    ndx_scatter_attrs a = {(ndx_bad_indices)c->n->attrs.bad_indices};
    return a;
}

/* ---- gather_nd ---------------------------------------------------------------------------- */

/* Index rows [rows, batch + depth] of a gather_nd with batch_dims `batch`: each row of indices
 * with its batch coordinates in front (constants, from indices' known shape, stitched in). */
static ndx_output batch_rows(const grad_ctx *c, ndx_output indices, const ndx_spec *is, int batch,
                             int64_t rows, int64_t depth) {
    int64_t width = batch + depth, nb = rows * batch, ni = rows * depth;
    int64_t *buf = malloc((size_t)(nb + nb + ni + 1) * sizeof *buf);
    if (!buf) {
        grad_fail(c, NDX_E_NO_MEMORY, "out of memory");
        return indices;
    }
    int64_t *coords = buf, *at_batch = buf + nb, *at_index = buf + 2 * nb;
    int64_t per_batch = rows; /* index rows per batch coordinate combination */
    for (int b = 0; b < batch; b++)
        per_batch /= is->shape[b] ? is->shape[b] : 1;
    for (int64_t r = 0; r < rows; r++) {
        int64_t rest = per_batch ? r / per_batch : 0;
        for (int b = batch - 1; b >= 0; b--) {
            coords[r * batch + b] = rest % is->shape[b];
            rest /= is->shape[b];
        }
        for (int b = 0; b < batch; b++)
            at_batch[r * batch + b] = r * width + b;
        for (int64_t k = 0; k < depth; k++)
            at_index[r * depth + k] = r * width + batch + k;
    }
    ndx_output parts_at[2] = {grad_i64_vec(c, (int)nb, at_batch),
                              grad_i64_vec(c, (int)ni, at_index)};
    ndx_output data[2] = {grad_i64_vec(c, (int)nb, coords),
                          G_RESHAPE(c, grad_int64(c, indices), grad_i64_vec(c, 1, &ni))};
    free(buf);
    ndx_output flat = G_STITCH(c, 0, 2, parts_at, data);
    return G_RESHAPE(c, flat, grad_i64_vec(c, 2, (const int64_t[]){rows, width}));
}

/* batch_rows when indices' leading dims are known only at run time: row r's batch coordinates
 * are r // (rows per batch combination) written in the batch dims' mixed radix, stitched with
 * the index rows at positions r * width + b (and r * width + batch + k). */
static ndx_output batch_rows_at_run_time(const grad_ctx *c, ndx_output indices, int batch,
                                         int64_t depth) {
    int64_t width = batch + depth;
    ndx_output zero = grad_i64(c, 0), one = grad_i64(c, 1), scalar = grad_i64_vec(c, 0, NULL);
    ndx_output rows = grad_index_rows(c, indices);
    ndx_output r = G_RANGE(c, zero, rows, one), base = G_MUL(c, r, grad_i64(c, width));
    ndx_output radix[NDX_MAX_RANK], combos = one;
    for (int b = 0; b < batch; b++) { /* a dim 0 leaves no rows: 1 keeps the divisions defined */
        radix[b] = G_BIN(c, NDX_OP_MAXIMUM, G_RESHAPE(c, grad_dims(c, indices, b, 1), scalar), one);
        combos = G_MUL(c, combos, radix[b]);
    }
    ndx_output per = G_BIN(c, NDX_OP_MAXIMUM, G_BIN(c, NDX_OP_FLOOR_DIV, rows, combos), one);
    ndx_output rest = G_BIN(c, NDX_OP_FLOOR_DIV, r, per);
    ndx_output at[NDX_MAX_RANK + 1], data[NDX_MAX_RANK + 1];
    for (int b = batch - 1; b >= 0; b--) {
        at[b] = G_ADD(c, base, grad_i64(c, b));
        data[b] = G_BIN(c, NDX_OP_FLOOR_MOD, rest, radix[b]);
        rest = G_BIN(c, NDX_OP_FLOOR_DIV, rest, radix[b]);
    }
    int n = batch;
    if (depth > 0) {
        int64_t cols[NDX_MAX_RANK];
        for (int64_t k = 0; k < depth; k++) cols[k] = batch + k;
        ndx_output col = G_RESHAPE(c, base, grad_i64_vec(c, 2, (const int64_t[]){-1, 1}));
        at[n] = G_ADD(c, col, grad_i64_vec(c, (int)depth, cols));
        data[n++] = grad_index_matrix(c, indices);
    }
    ndx_output flat = G_STITCH(c, 0, n, at, data);
    return G_RESHAPE(c, flat, grad_i64_vec(c, 2, (const int64_t[]){-1, width}));
}

/* gather_nd with the ignore policy read zeros for rows out of range, so their gradient is zero:
 * such a row becomes row 0 with zero values, which any consumer takes. A row is inside when
 * floor_div(coordinate, dim) is 0 for each of its k coordinates (dims taken as at least 1). */
static void zero_bad_rows(const grad_ctx *c, ndx_output params, int64_t k, ndx_output *at,
                          ndx_output *values) {
    ndx_output zero = grad_i64(c, 0), one = grad_i64(c, 1), depth = grad_i64(c, k);
    ndx_output col = grad_i64_vec(c, 2, (const int64_t[]){-1, 1});
    ndx_output wide = grad_i64_vec(c, 2, (const int64_t[]){-1, k});
    ndx_output dims = G_BIN(c, NDX_OP_MAXIMUM, grad_dims(c, params, 0, (int)k), one);
    ndx_output pos = G_RANGE(c, zero, grad_size(c, *at), one); /* over the N * k coordinates */
    ndx_output dim_at = G_GATHER(c, dims, G_RESHAPE(c, G_BIN(c, NDX_OP_FLOOR_MOD, pos, depth), col),
                                 NULL);
    ndx_output inside = G_EQUAL(c, G_BIN(c, NDX_OP_FLOOR_DIV, *at, G_RESHAPE(c, dim_at, wide)), zero);
    ndx_output count = G_SUM(c, G_CAST(c, inside, NDX_INT64), grad_i64_vec(c, 1, &(int64_t){1}), 0);
    ndx_output keep = G_CAST(c, G_EQUAL(c, count, depth), NDX_INT64);
    *values = grad_keep_rows(c, *values, keep);
    ndx_output row_of = G_RESHAPE(c, G_BIN(c, NDX_OP_FLOOR_DIV, pos, depth), col);
    *at = G_MUL(c, *at, G_RESHAPE(c, G_GATHER(c, keep, row_of, NULL), wide));
}

ndx_status grad_gather_nd(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output params = grad_in(&c, 0), indices = grad_in(&c, 1);
    ndx_spec is = ndx_output_spec(indices);
    int batch = c.n->attrs.batch_dims;
    if (!grad_dtype_ok(ndx_output_spec(params).dtype)) return NDX_OK;
    if ((is.rank == NDX_UNKNOWN || !ndx_dim_known(is.shape[is.rank - 1])) && batch == 0) {
        /* no rows of a known width for slices: TensorFlow's dense scatter_nd(indices, dy) */
        ndx_scatter_attrs sa = scatter_policy(&c);
        ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
        dxs[0] = grad_dense_of(G_SCATTER(&c, indices, dy, grad_shape(&c, params), &sa));
        return grad_status(&c);
    }
    if (is.rank == NDX_UNKNOWN || !ndx_dim_known(is.shape[is.rank - 1]))
        return grad_fail(&c, NDX_E_UNSUPPORTED,
                         "with batch_dims > 0, needs the index depth (indices' last dim) known "
                         "at build time");
    int64_t depth = is.shape[is.rank - 1];
    int64_t rows = 1;
    for (int i = 0; i < is.rank - 1; i++)
        rows = ndx_dim_known(is.shape[i]) && rows >= 0 ? rows * is.shape[i] : -1;
    ndx_output at = batch == 0 ? grad_index_matrix(&c, indices)
                    : rows < 0 ? batch_rows_at_run_time(&c, indices, batch, depth)
                               : batch_rows(&c, indices, &is, batch, rows, depth);
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    ndx_output values = G_RESHAPE(&c, dy, grad_rows_shape(&c, indices, params, batch + (int)depth));
    if (c.n->attrs.bad_indices == NDX_BAD_INDICES_IGNORE && batch + depth > 0)
        zero_bad_rows(&c, params, batch + depth, &at, &values);
    dxs[0] = grad_slices_of(at, values, grad_shape(&c, params));
    return grad_status(&c);
}

/* ---- scatter_nd, tensor_scatter_nd_* ------------------------------------------------------ */

ndx_status grad_scatter_nd(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    ndx_gather_nd_attrs a = gather_policy(&c);
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    dxs[1] = grad_dense_of(grad_known_empty(dy) ? G_ZEROS_LIKE(&c, grad_in(&c, 1))
                                                : grad_gather_rows(&c, dy, grad_in(&c, 0), &a));
    return grad_status(&c);
}

/* What tensor_scatter_nd_update's gradient needs of the shapes, as int64 tensors: the number
 * of index rows N (a scalar), [N] + tensor.shape[depth:], indices.shape[:-1] and
 * tensor.shape[:depth]. */
typedef struct update_dims {
    ndx_output rows, rows_shape, lead, slots;
} update_dims;

static update_dims update_dims_known(const grad_ctx *c, int depth) {
    ndx_output tensor = grad_in(c, 0), indices = grad_in(c, 1);
    update_dims d; /* one statement each: the nodes are built in this order */
    d.rows = grad_index_rows(c, indices);
    d.rows_shape = grad_rows_shape(c, indices, tensor, depth);
    d.lead = grad_dims(c, indices, 0, ndx_output_spec(indices).rank - 1);
    d.slots = grad_dims(c, tensor, 0, depth);
    return d;
}

/* dims [begin, end) of x's shape at run time (begin, end int64 scalars). */
static ndx_output shape_between(const grad_ctx *c, ndx_output x, ndx_output begin,
                                ndx_output end) {
    ndx_output at = G_RESHAPE(c, G_RANGE(c, begin, end, grad_i64(c, 1)),
                              grad_i64_vec(c, 2, (const int64_t[]){-1, 1}));
    return G_GATHER(c, ndx_op_shape_at(c->file, c->line, c->s, x, NDX_INT64), at, NULL);
}

/* update_dims when the index depth is known only at run time. */
static update_dims update_dims_at_run_time(const grad_ctx *c) {
    ndx_output tensor = grad_in(c, 0), indices = grad_in(c, 1);
    ndx_output zero = grad_i64(c, 0), one = grad_i64(c, 1);
    ndx_output index_rank = grad_size(c, grad_shape(c, indices));
    ndx_output rank = grad_size(c, grad_shape(c, tensor));
    ndx_output last = G_SUB(c, index_rank, one);
    ndx_output depth = G_RESHAPE(c, shape_between(c, indices, last, index_rank),
                                 grad_i64_vec(c, 0, NULL));
    update_dims d;
    /* rows of any depth, 0 too: the count of the sums of each row's coordinates */
    d.rows = grad_size(c, G_SUM(c, grad_int64(c, indices), grad_i64(c, -1), 0));
    ndx_output parts[2];
    parts[0] = G_RESHAPE(c, d.rows, grad_i64_vec(c, 1, (const int64_t[]){1}));
    parts[1] = shape_between(c, tensor, depth, rank);
    d.rows_shape = grad_concat0(c, 2, parts);
    /* a trailing dim of 1 on the slots and the row ids: the slots are never a scalar, which
     * gather_nd would refuse at depth 0 */
    ndx_output trail = grad_i64_vec(c, 1, (const int64_t[]){1});
    parts[0] = shape_between(c, indices, zero, last);
    parts[1] = trail;
    d.lead = grad_concat0(c, 2, parts);
    parts[0] = shape_between(c, tensor, zero, depth);
    d.slots = grad_concat0(c, 2, parts);
    return d;
}

/* tensor_scatter_nd_update: the updates' gradient only for the rows that won their slot (the
 * last of duplicates, as the op applies them), found by scattering row ids. */
static ndx_output update_winners(const grad_ctx *c, ndx_output gathered, const update_dims *d) {
    ndx_output indices = grad_in(c, 1), updates = grad_in(c, 2);
    ndx_scatter_attrs sa = scatter_policy(c);
    ndx_gather_nd_attrs ga = gather_policy(c);
    ndx_output g = G_RESHAPE(c, gathered, d->rows_shape);
    ndx_output ids = G_RANGE(c, grad_i64(c, 0), d->rows, grad_i64(c, 1));
    ndx_output ishape = G_RESHAPE(c, ids, d->lead);
    ndx_output slots = G_FILL(c, d->slots, grad_i64(c, -1));
    ndx_output won = G_TSCATTER(c, NDX_SCATTER_UPDATE, slots, indices, ishape, &sa);
    ndx_output winner = G_RESHAPE(c, grad_gather_rows(c, won, indices, &ga),
                                  grad_i64_vec(c, 1, (const int64_t[]){-1}));
    ndx_output keep = G_CAST(c, G_EQUAL(c, winner, ids), NDX_INT64);
    return G_RESHAPE(c, grad_keep_rows(c, g, keep), grad_shape(c, updates));
}

/* tensor_scatter_nd_min / _max: TensorFlow's indicators; the gradient of each output element
 * is shared among the inputs equal to it. */
static void min_max(const grad_ctx *c, ndx_output dy, graph_grad *dxs) {
    ndx_output tensor = grad_in(c, 0), indices = grad_in(c, 1), updates = grad_in(c, 2);
    ndx_output out = grad_out(c, 0);
    ndx_dtype dt = ndx_output_spec(tensor).dtype;
    ndx_scatter_attrs sa = scatter_policy(c);
    ndx_gather_nd_attrs ga = gather_policy(c);
    ndx_output x_ind = G_CAST(c, G_EQUAL(c, tensor, out), dt);
    ndx_output y_ind = G_CAST(c, G_EQUAL(c, updates, grad_gather_rows(c, out, indices, &ga)), dt);
    ndx_output ys_ind = G_SCATTER(c, indices, y_ind, grad_shape(c, tensor), &sa);
    ndx_output count = G_ADD(c, x_ind, ys_ind);
    ndx_output share = G_DIV(c, dy, count);
    dxs[0] = grad_dense_of(G_MUL(c, x_ind, share));
    dxs[2] = grad_dense_of(G_MUL(c, grad_gather_rows(c, share, indices, &ga), y_ind));
}

ndx_status grad_tensor_scatter(ndx_scope s, ndx_operation op, const graph_grad *dys,
                               graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output tensor = grad_in(&c, 0), indices = grad_in(&c, 1), updates = grad_in(&c, 2);
    ndx_dtype dt = ndx_output_spec(tensor).dtype;
    if (!grad_dtype_ok(dt)) return NDX_OK;
    ndx_spec is = ndx_output_spec(indices);
    ndx_scatter_op kind = (ndx_scatter_op)graph_variant(c.n);
    ndx_gather_nd_attrs ga = gather_policy(&c);
    ndx_scatter_attrs sa = scatter_policy(&c);
    if (kind == NDX_SCATTER_ADD && dys[0].form == GRAPH_GRAD_SLICES) dxs[0] = dys[0];
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    if (grad_known_empty(dy)) { /* nothing to gather from: the updates reached nothing */
        dxs[0] = grad_dense_of(dy);
        dxs[2] = grad_dense_of(G_ZEROS_LIKE(&c, updates));
        return grad_status(&c);
    }
    ndx_output gathered = grad_gather_rows(&c, dy, indices, &ga);
    switch (kind) {
    case NDX_SCATTER_ADD:
        if (dxs[0].form == GRAPH_GRAD_NONE) dxs[0] = grad_dense_of(dy);
        dxs[2] = grad_dense_of(gathered);
        break;
    case NDX_SCATTER_SUB:
        dxs[0] = grad_dense_of(dy);
        dxs[2] = grad_dense_of(G_NEG(&c, gathered));
        break;
    case NDX_SCATTER_UPDATE: {
        update_dims d = is.rank != NDX_UNKNOWN && ndx_dim_known(is.shape[is.rank - 1])
                            ? update_dims_known(&c, (int)is.shape[is.rank - 1])
                            : update_dims_at_run_time(&c);
        dxs[0] = grad_dense_of(
            G_TSCATTER(&c, NDX_SCATTER_UPDATE, dy, indices, G_ZEROS_LIKE(&c, updates), &sa));
        dxs[2] = grad_dense_of(update_winners(&c, gathered, &d));
        break;
    }
    default:
        if (grad_is_complex(dt)) return grad_fail(&c, NDX_E_UNSUPPORTED, "complex has no order");
        min_max(&c, dy, dxs);
        break;
    }
    return grad_status(&c);
}

/* ---- dynamic_stitch ----------------------------------------------------------------------- */

ndx_status grad_stitch(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    int n = c.n->attrs.count;
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, n)).dtype)) return NDX_OK;
    ndx_output *pos = malloc(2 * (size_t)n * sizeof *pos);
    if (!pos) return grad_fail(&c, NDX_E_NO_MEMORY, "out of memory");
    ndx_output *flat = pos + n;
    /* Every data element's position id, in the forward op's order; stitched like the data, the
     * id left in each output row is the element that won it. */
    ndx_output one = grad_i64(&c, 1), off = grad_i64(&c, 0);
    ndx_output col = grad_i64_vec(&c, 2, (const int64_t[]){-1, 1});
    for (int m = 0; m < n; m++) {
        ndx_output idx = grad_in(&c, m);
        ndx_output end = G_ADD(&c, off, grad_size(&c, idx));
        flat[m] = G_RANGE(&c, off, end, one);
        pos[m] = G_RESHAPE(&c, flat[m], grad_shape(&c, idx));
        off = end;
    }
    ndx_output won = G_STITCH(&c, graph_variant(c.n), n, c.n->inputs, pos);
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    for (int m = 0; m < n; m++) {
        ndx_output at = G_RESHAPE(&c, grad_in(&c, m), col);
        ndx_output keep = G_CAST(&c, G_EQUAL(&c, G_GATHER(&c, won, at, NULL), flat[m]), NDX_INT64);
        ndx_output data = grad_in(&c, n + m);
        if (grad_known_empty(dy)) {
            dxs[n + m] = grad_dense_of(G_ZEROS_LIKE(&c, data));
            continue;
        }
        ndx_output g = grad_keep_rows(&c, G_GATHER(&c, dy, at, NULL), keep);
        dxs[n + m] = grad_dense_of(G_RESHAPE(&c, g, grad_shape(&c, data)));
    }
    free(pos);
    return grad_status(&c);
}

/* ---- dynamic_partition -------------------------------------------------------------------- */

ndx_status grad_partition(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    int np = c.n->attrs.count;
    ndx_output data = grad_in(&c, 0), parts = grad_in(&c, 1);
    if (!grad_dtype_ok(ndx_output_spec(data).dtype)) return NDX_OK;
    ndx_output *buf = malloc(2 * (size_t)np * sizeof *buf);
    if (!buf) return grad_fail(&c, NDX_E_NO_MEMORY, "out of memory");
    ndx_output *where = buf, *grads = buf + np;
    /* Where each partition's rows came from: partition the position ids like the data. */
    ndx_output ids =
        G_RESHAPE(&c, G_RANGE(&c, grad_i64(&c, 0), grad_size(&c, parts), grad_i64(&c, 1)),
                  grad_shape(&c, parts));
    ndx_op_dynamic_partition_at(c.file, c.line, c.s, ids, parts, np, where);
    for (int k = 0; k < np; k++)
        grads[k] = grad_dense(&c, &dys[k], grad_out(&c, k));
    ndx_output back = ndx_op_dynamic_stitch_at(c.file, c.line, c.s, 1, np, where, grads);
    dxs[0] = grad_dense_of(G_RESHAPE(&c, back, grad_shape(&c, data)));
    free(buf);
    return grad_status(&c);
}

/* ---- gather, boolean_mask ----------------------------------------------------------------- */
/* Both give SLICES of rows of depth k into the input: each row of dy's first dims names where it
 * was read from, so dx is the sum of dy's rows placed there (TensorFlow's _GatherV2Grad, whose
 * transposes and unsorted_segment_sum compute the same sum densely for axis > 0). */

/* The positions of dy's first `lead` dims, int64 [N, lead] in row-major order. */
static ndx_output lead_coords(const grad_ctx *c, ndx_output dy, int lead) {
    ndx_output ones = G_FILL(c, grad_dims(c, dy, 0, lead), grad_i64(c, 1));
    return ndx_op_where_at(c->file, c->line, c->s, ones);
}

/* Columns cols[0..n) of an int64 matrix. */
static ndx_output columns(const grad_ctx *c, ndx_output m, int n, const int64_t *cols) {
    return ndx_op_gather_at(c->file, c->line, c->s, m, grad_i64_vec(c, n, cols), grad_i64(c, 1),
                            NULL);
}

/* Columns 0 .. n - 1 of an int64 matrix. */
static ndx_output first_columns(const grad_ctx *c, ndx_output m, int n) {
    int64_t cols[NDX_MAX_RANK];
    for (int i = 0; i < n; i++) cols[i] = i;
    return columns(c, m, n, cols);
}

/* dy as rows: [N] + x.shape[k:] with N the rows of `at` (int64 [N, depth]). */
static ndx_output rows_of(const grad_ctx *c, ndx_output dy, ndx_output at, ndx_output x, int k) {
    int rank = ndx_output_spec(x).rank;
    ndx_output parts[2] = {grad_dims(c, at, 0, 1), grad_dims(c, x, k, rank - k)};
    return G_RESHAPE(c, dy, grad_concat0(c, 2, parts));
}

/* at [N, k] with the columns of more [N, m] after its own. */
static ndx_output join_columns(const grad_ctx *c, ndx_output at, ndx_output more) {
    ndx_output both[2] = {at, more};
    return G_CONCAT(c, 2, both, grad_i64(c, 1));
}

/* The gradient of a gather along `axis` (>= 0) with `batch` (>= 0) batch dims of params (input
 * 0) by indices (input 1, of rank is_rank): the rows read, as slices. */
static ndx_status gather_grad(const grad_ctx *c, int axis, int batch, int is_rank,
                              const graph_grad *dys, graph_grad *dxs) {
    ndx_output params = grad_in(c, 0), indices = grad_in(c, 1);
    ndx_output dy = grad_dense(c, &dys[0], grad_out(c, 0));
    ndx_output at;
    if (axis == 0) { /* batch_dims 0 too: TensorFlow's IndexedSlices, the indices as rows */
        at = G_RESHAPE(c, grad_int64(c, indices), grad_i64_vec(c, 2, (const int64_t[]){-1, 1}));
    } else {
        /* dy's dims before params' trailing ones are (b..., o..., j...): row (b, o, j) was read
         * from params[b..., o..., indices[b..., j...]]. */
        int lead = axis + is_rank - batch;
        ndx_output coords = lead_coords(c, dy, lead);
        int64_t cols[NDX_MAX_RANK];
        for (int k = 0; k < batch; k++) cols[k] = k;
        for (int k = batch; k < is_rank; k++) cols[k] = axis + (k - batch);
        ndx_output picked = grad_gather_rows(c, indices, columns(c, coords, is_rank, cols), NULL);
        ndx_output idx = G_RESHAPE(c, grad_int64(c, picked),
                                   grad_i64_vec(c, 2, (const int64_t[]){-1, 1}));
        at = join_columns(c, first_columns(c, coords, axis), idx);
    }
    ndx_output values = rows_of(c, dy, at, params, axis + 1);
    if (c->n->attrs.bad_indices == NDX_BAD_INDICES_IGNORE)
        zero_bad_rows(c, params, axis + 1, &at, &values);
    dxs[0] = grad_slices_of(at, values, grad_shape(c, params));
    return grad_status(c);
}

ndx_status grad_gather_v2(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_spec ps = ndx_output_spec(grad_in(&c, 0)), is = ndx_output_spec(grad_in(&c, 1));
    if (!grad_dtype_ok(ps.dtype)) return NDX_OK;
    const ndx_tensor *axis_value = ndx_output_constant(grad_in(&c, 2));
    if (!axis_value || ps.rank == NDX_UNKNOWN || is.rank == NDX_UNKNOWN)
        return grad_fail(&c, NDX_E_UNSUPPORTED,
                         "needs a constant axis and the ranks of params and indices known at "
                         "build time");
    int axis = (int)ndx_read_index(axis_value->data, axis_value->dtype, 0);
    int batch = c.n->attrs.batch_dims;
    if (axis < 0) axis += ps.rank;
    if (batch < 0) batch += is.rank;
    return gather_grad(&c, axis, batch, is.rank, dys, dxs);
}

/* ResourceGather: the variable's gradient is the rows read, as TensorFlow's IndexedSlices
 * (values dy, indices the ids); with batch_dims > 0 the slices of the gather along axis
 * batch_dims (which TensorFlow's gradient, written for batch_dims 0, does not handle). */
ndx_status grad_resource_gather(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_spec ps = ndx_output_spec(grad_in(&c, 0)), is = ndx_output_spec(grad_in(&c, 1));
    if (!grad_dtype_ok(ps.dtype)) return NDX_OK;
    if (is.rank == NDX_UNKNOWN)
        return grad_fail(&c, NDX_E_UNSUPPORTED, "needs the rank of indices known at build time");
    int batch = c.n->attrs.batch_dims;
    if (batch < 0) batch += is.rank;
    return gather_grad(&c, batch, batch, is.rank, dys, dxs);
}

ndx_status grad_boolean_mask(ndx_scope s, ndx_operation op, const graph_grad *dys,
                             graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output tensor = grad_in(&c, 0), mask = grad_in(&c, 1);
    ndx_spec ts = ndx_output_spec(tensor), ms = ndx_output_spec(mask);
    if (!grad_dtype_ok(ts.dtype)) return NDX_OK;
    if (ts.rank == NDX_UNKNOWN || ms.rank == NDX_UNKNOWN)
        return grad_fail(&c, NDX_E_UNSUPPORTED,
                         "needs the ranks of tensor and mask known at build time");
    int axis = c.n->attrs.axis;
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    ndx_output trues = ndx_op_where_at(c.file, c.line, c.s, mask); /* [n, rank(mask)] */
    ndx_output at = trues;
    if (axis > 0) { /* row (o..., j) of dy was read at (o..., trues[j]) */
        ndx_output coords = lead_coords(&c, dy, axis + 1);
        int64_t last = axis;
        ndx_output j = columns(&c, coords, 1, &last);
        at = join_columns(&c, first_columns(&c, coords, axis), G_GATHER(&c, trues, j, NULL));
    }
    ndx_output values = rows_of(&c, dy, at, tensor, axis + ms.rank);
    dxs[0] = grad_slices_of(at, values, grad_shape(&c, tensor));
    return grad_status(&c);
}

/* ---- embedding_bag -------------------------------------------------------------------------- */

/* d params: slices of the rows the ids touched (never a dense table): indices the ids, values
 * EmbeddingBagGrad's rows (each dy row of the id's bag scaled by its weight over the combiner's
 * divisor, through max_norm's clipping); d weights: its second output. The ids, bags, max_norm
 * and num_bags get none. */
ndx_status grad_embedding_bag(ndx_scope s, ndx_operation op, const graph_grad *dys,
                              graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output params = grad_in(&c, 0), ids = grad_in(&c, 1);
    ndx_output in[7] = {params,         ids,           grad_in(&c, 2),
                        grad_in(&c, 3), grad_in(&c, 4), grad_in(&c, 5),
                        grad_dense(&c, &dys[0], grad_out(&c, 0))};
    ndx_attr attrs[2] = {{"combiner", c.n->attrs.combiner},
                         {"bag_offsets", c.n->attrs.bag_offsets}};
    ndx_operation values =
        ndx_op_by_type_at(c.file, c.line, c.s, "EmbeddingBagGrad", 7, in, 2, attrs);
    static const int64_t column[2] = {-1, 1};
    ndx_output rows = grad_index_matrix(&c, G_RESHAPE(&c, ids, grad_i64_vec(&c, 2, column)));
    dxs[0] = grad_slices_of(rows, (ndx_output){values, 0}, grad_shape(&c, params));
    dxs[3] = grad_dense_of((ndx_output){values, 1});
    return grad_status(&c);
}
