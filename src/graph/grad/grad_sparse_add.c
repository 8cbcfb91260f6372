/* grad_sparse_add.c — the gradients of ndx's sparse arithmetic (TensorFlow's sparse_grad.py):
 * SparseAdd through SparseAddGrad, SparseTensorDenseAdd by a gather_nd of the output's gradient.
 * SparseDenseCwiseMul / Div as TensorFlow writes it. SparseSparseMaximum / Minimum, SparseAddGrad
 * and SparseDenseCwiseAdd have none (kinds.def), as in TensorFlow. */
#include "grad_util.h"

/* d a_values, d b_values = SparseAddGrad(d sum_values, a_indices, b_indices, sum_indices). The
 * threshold needs no care: an entry it dropped is not in sum_indices, so it gets 0. */
ndx_status grad_sparse_add(ndx_scope s, ndx_operation op, const graph_grad *dys,
                           graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype) || dys[1].form == GRAPH_GRAD_NONE)
        return NDX_OK;
    ndx_output dv = grad_dense(&c, &dys[1], grad_out(&c, 1));
    ndx_operation g = ndx_op_sparse_add_grad_at(c.file, c.line, c.s, dv, grad_in(&c, 0),
                                                grad_in(&c, 3), grad_out(&c, 0));
    dxs[1] = grad_dense_of(ndx_operation_output(g, 0));
    dxs[4] = grad_dense_of(ndx_operation_output(g, 1));
    return grad_status(&c);
}

/* d a_values = gather_nd(dy, a_indices); d b = dy. */
ndx_status grad_sparse_tensor_dense_add(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                        graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    dxs[1] = grad_dense_of(G_GATHER(&c, dy, grad_in(&c, 0), NULL));
    dxs[3] = grad_dense_of(dy);
    return grad_status(&c);
}

/* The indices of each entry's dense element, [N, rank(dense)], and dense's shape (int64): sp's
 * indices divided by sp's dense shape over dense's (padded with leading 1s), cut to dense's
 * rank. With both ranks known the padding is a constant; else its length is a node too, as in
 * TensorFlow. */
static ndx_output scaled_indices(grad_ctx *c, ndx_output y, ndx_output *y_shape, int *dynamic) {
    ndx_spec xs = ndx_output_spec(grad_in(c, 2)), ys = ndx_output_spec(y);
    ndx_output x_shape = grad_int64(c, grad_in(c, 2));
    *y_shape = grad_shape(c, y);
    ndx_output aug = *y_shape, begin = *y_shape; /* begin: the cut's start, when there is one */
    int cut = 1;
    *dynamic = !(xs.rank == 1 && xs.shape[0] >= 0 && ys.rank >= 0);
    if (xs.rank == 1 && xs.shape[0] >= 0 && ys.rank >= 0) {
        int k = (int)xs.shape[0] - ys.rank;
        if (k > 0) {
            int64_t ones[NDX_MAX_RANK];
            for (int d = 0; d < k; d++) ones[d] = 1;
            ndx_output parts[2] = {grad_i64_vec(c, k, ones), *y_shape};
            aug = grad_concat0(c, 2, parts);
            begin = grad_i64_vec(c, 2, (const int64_t[]){0, k});
        } else {
            cut = 0;
        }
    } else {
        ndx_output added = G_RESHAPE(c, G_SUB(c, grad_size(c, x_shape), grad_size(c, *y_shape)),
                                     grad_i64_vec(c, 1, (const int64_t[]){1}));
        ndx_output parts[2] = {G_FILL(c, added, grad_i64(c, 1)), *y_shape};
        aug = grad_concat0(c, 2, parts);
        ndx_output zero_k[2] = {grad_i64_vec(c, 1, (const int64_t[]){0}), added};
        begin = grad_concat0(c, 2, zero_k);
    }
    ndx_output scaling = G_BIN(c, NDX_OP_FLOOR_DIV, x_shape, aug);
    ndx_output scaled = G_BIN(c, NDX_OP_FLOOR_DIV, grad_int64(c, grad_in(c, 0)), scaling);
    if (cut)
        scaled = G_SLICE(c, scaled, begin, grad_i64_vec(c, 2, (const int64_t[]){-1, -1}));
    return scaled;
}

/* SparseDenseCwiseMul / Div, as TensorFlow's _SparseDenseCwiseMulOrDivGrad: each entry's dense
 * element d is at scaled_indices; d sp values = dy * d (dy / d), and d dense = dy * sp values
 * (dy * -sp values / d²) added at those indices (repeats add up: SparseTensorDenseAdd). Ranks
 * known only at run time work too: then dense is read as [1, dense's shape...] (and the indices
 * get a 0 column), since it may turn out a scalar, which gather_nd and the add do not take. */
ndx_status grad_sparse_dense_cwise(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                   graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output x_values = grad_in(&c, 1), y = grad_in(&c, 3);
    if (!grad_dtype_ok(ndx_output_spec(x_values).dtype)) return NDX_OK;
    ndx_output dv = grad_dense(&c, &dys[0], grad_out(&c, 0));
    ndx_output y_shape;
    int dynamic;
    ndx_output scaled = scaled_indices(&c, y, &y_shape, &dynamic);
    ndx_output at = scaled, lifted = y, lifted_shape = y_shape;
    if (dynamic) {
        ndx_output one = grad_i64_vec(&c, 1, (const int64_t[]){1});
        ndx_output shape_parts[2] = {one, y_shape};
        lifted_shape = grad_concat0(&c, 2, shape_parts);
        lifted = G_RESHAPE(&c, y, lifted_shape);
        ndx_output n = G_RESHAPE(&c, grad_size(&c, x_values), one);
        ndx_output column_dims[2] = {n, one};
        ndx_output columns[2] = {G_FILL(&c, grad_concat0(&c, 2, column_dims), grad_i64(&c, 0)),
                                 scaled};
        at = G_CONCAT(&c, 2, columns, grad_i64(&c, 1));
    }
    ndx_output d = G_GATHER(&c, lifted, at, NULL);
    int mul = c.n->kind == GRAPH_SPARSE_DENSE_CWISE_MUL;
    ndx_output dx = mul ? G_MUL(&c, dv, d) : G_DIV(&c, dv, d);
    ndx_output dy_val =
        mul ? G_MUL(&c, dv, x_values)
            : G_MUL(&c, dv, G_NEG(&c, G_DIV(&c, x_values, G_MUL(&c, d, d))));
    ndx_output dy;
    if (ndx_output_spec(y).rank == 0) { /* a scalar dense operand: every entry read it */
        dy = grad_sum_all(&c, dy_val);
    } else {
        ndx_sparse_output sp = {at, dy_val, lifted_shape};
        dy = ndx_op_sparse_dense_add_at(c.file, c.line, c.s, sp, G_ZEROS_LIKE(&c, lifted));
        if (dynamic) dy = G_RESHAPE(&c, dy, y_shape);
    }
    dxs[1] = grad_dense_of(dx);
    dxs[3] = grad_dense_of(dy);
    return grad_status(&c);
}
