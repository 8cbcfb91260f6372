/* grad_sparse_matmul.c — the gradient of SparseTensorDenseMatMul, TensorFlow's
 * _SparseTensorDenseMatMulGrad. With op(A) [M, K] (A, or A's adjoint under adjoint_a), op(B)
 * [K, N] likewise and dy [M, N]:
 *   d op(B) = op(A)^H dy = sparse_dense_matmul(A, dy, adjoint_a = !adjoint_a), and under
 *             adjoint_b dB = (d op(B))^H;
 *   d values: for the entry (r, c), sum over n of dy[r, n] conj(op(B)[c, n]), or under
 *             adjoint_a (the entry is op(A)[c, r] conjugated) conj(dy[c, n]) op(B)[r, n]: a
 *             gather of rows of dy and of op(B) per entry, multiplied and summed, as TensorFlow
 *             writes it.
 * ndx has no transpose op: a conjugate transpose X^H [Q, P] of X [P, Q] is the op's own
 * adjoint_b path, I_Q X^H with I_Q a sparse identity built from range(Q). */
#include "grad_util.h"

/* The sparse identity [q, q] of dtype dt, q an int64 vector [1] known at run time. */
static ndx_sparse_output identity(const grad_ctx *c, ndx_output q, ndx_dtype dt) {
    ndx_output scalar_q = G_RESHAPE(c, q, grad_i64_vec(c, 0, NULL));
    ndx_output r = G_RANGE(c, grad_i64(c, 0), scalar_q, grad_i64(c, 1));
    ndx_output pair[2] = {r, r};
    ndx_sparse_output id;
    id.indices = ndx_op_stack_at(c->file, c->line, c->s, 2, pair, 1);
    id.values = G_FILL(c, q, grad_scalar(c, dt, 1.0));
    ndx_output qq[2] = {q, q};
    id.dense_shape = grad_concat0(c, 2, qq);
    return id;
}

/* x^H for a matrix x whose dim 1 is q. */
static ndx_output adjoint_of(const grad_ctx *c, ndx_output x, ndx_dtype dt) {
    ndx_sparse_output id = identity(c, grad_dims(c, x, 1, 1), dt);
    return ndx_op_sparse_dense_matmul_at(c->file, c->line, c->s, id, x, 0, 1);
}

/* Column `col` of the entries' indices [nnz, 2], as int64 [nnz]. */
static ndx_output index_column(const grad_ctx *c, ndx_output indices, int col) {
    return ndx_op_gather_at(c->file, c->line, c->s, grad_int64(c, indices), grad_i64(c, col),
                            grad_i64(c, 1), NULL);
}

ndx_status grad_sparse_dense_matmul(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                    graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output b = grad_in(&c, 3);
    ndx_dtype dt = ndx_output_spec(b).dtype;
    if (!grad_dtype_ok(dt)) return NDX_OK;
    int adj_a = c.n->attrs.adjoint_a, adj_b = c.n->attrs.adjoint_b;
    ndx_sparse_output a = {grad_in(&c, 0), grad_in(&c, 1), grad_in(&c, 2)};
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));

    ndx_output d_opb = ndx_op_sparse_dense_matmul_at(c.file, c.line, c.s, a, dy, !adj_a, 0);
    dxs[3] = grad_dense_of(adj_b ? adjoint_of(&c, d_opb, dt) : d_opb);

    ndx_output opb = adj_b ? adjoint_of(&c, b, dt) : b;
    ndx_output rows = index_column(&c, a.indices, adj_a ? 1 : 0);
    ndx_output cols = index_column(&c, a.indices, adj_a ? 0 : 1);
    ndx_output parts_dy = ndx_op_gather_at(c.file, c.line, c.s, dy, rows, grad_i64(&c, 0), NULL);
    ndx_output parts_b = ndx_op_gather_at(c.file, c.line, c.s, opb, cols, grad_i64(&c, 0), NULL);
    ndx_output prod = adj_a ? G_MUL(&c, grad_conj(&c, parts_dy), parts_b)
                            : G_MUL(&c, parts_dy, grad_conj(&c, parts_b));
    dxs[1] = grad_dense_of(G_SUM(&c, prod, grad_i64_vec(&c, 1, (int64_t[]){1}), 0));
    return grad_status(&c);
}
