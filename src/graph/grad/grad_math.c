/* grad_math.c — the gradients of identity, cast, the elementwise ops (abs, square, sqrt too),
 * reshape, the reductions (sum, mean, max, min), select and fill (TensorFlow's math_grad.py and
 * array_grad.py), and of the kinds that have none. */
#include <stdlib.h>

#include "grad_util.h"

ndx_status grad_none(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    (void)s;
    (void)op;
    (void)dys;
    (void)dxs;
    return NDX_OK;
}

ndx_status grad_identity(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    (void)s;
    (void)op;
    dxs[0] = dys[0];
    return NDX_OK;
}

/* -g, keeping slices slices. */
static graph_grad negated(const grad_ctx *c, const graph_grad *g) {
    if (g->form == GRAPH_GRAD_SLICES)
        return grad_slices_of(g->indices, G_NEG(c, g->values), g->dense_shape);
    return grad_dense_of(G_NEG(c, g->dense));
}

ndx_status grad_neg(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    dxs[0] = negated(&c, &dys[0]);
    return grad_status(&c);
}

/* abs, square, sqrt (TensorFlow's AbsGrad, SquareGrad, SqrtGrad). */
ndx_status grad_unary(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output x = grad_in(&c, 0), y = grad_out(&c, 0);
    ndx_dtype dt = ndx_output_spec(x).dtype;
    if (!grad_dtype_ok(dt)) return NDX_OK;
    ndx_output dy = grad_dense(&c, &dys[0], y), dx;
    switch ((ndx_unary_op)graph_variant(c.n)) {
    case NDX_UNARY_ABS: { /* dy * sign(x); abs takes no complex */
        ndx_output zero = grad_scalar(&c, dt, 0);
        ndx_output sign = G_SUB(&c, G_CAST(&c, G_BIN(&c, NDX_OP_GREATER, x, zero), dt),
                                G_CAST(&c, G_BIN(&c, NDX_OP_LESS, x, zero), dt));
        dx = G_MUL(&c, dy, sign);
        break;
    }
    case NDX_UNARY_SQUARE: /* dy * 2 conj(x) */
        dx = G_MUL(&c, dy, G_MUL(&c, grad_conj(&c, x), grad_scalar(&c, dt, 2)));
        break;
    default: /* sqrt: dy * 0.5 / conj(y) */
        dx = G_DIV(&c, G_MUL(&c, dy, grad_scalar(&c, dt, 0.5)), grad_conj(&c, y));
        break;
    }
    dxs[0] = grad_dense_of(dx);
    return grad_status(&c);
}

ndx_status grad_cast(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_dtype from = ndx_output_spec(grad_in(&c, 0)).dtype;
    if (!grad_dtype_ok(from) || !grad_dtype_ok((ndx_dtype)c.n->attrs.dtype)) return NDX_OK;
    const graph_grad *g = &dys[0];
    if (g->form == GRAPH_GRAD_SLICES)
        dxs[0] = grad_slices_of(g->indices, G_CAST(&c, g->values, from), g->dense_shape);
    else
        dxs[0] = grad_dense_of(G_CAST(&c, g->dense, from));
    return grad_status(&c);
}

/* The two operands' gradients of x op y from gx and gy of the output's shape. */
static void both(const grad_ctx *c, ndx_output gx, ndx_output gy, graph_grad *dxs) {
    ndx_output dx[2];
    grad_unbroadcast(c, gx, gy, dx);
    dxs[0] = grad_dense_of(dx[0]);
    dxs[1] = grad_dense_of(dx[1]);
}

ndx_status grad_binary(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output x = grad_in(&c, 0), y = grad_in(&c, 1), out = grad_out(&c, 0);
    ndx_dtype dt = ndx_output_spec(x).dtype;
    if (!grad_dtype_ok(dt)) return NDX_OK;
    ndx_binary_op kind = (ndx_binary_op)graph_variant(c.n);
    int64_t axes[NDX_MAX_RANK];
    if ((kind == NDX_BINARY_ADD || kind == NDX_BINARY_SUB) && dys[0].form == GRAPH_GRAD_SLICES &&
        grad_broadcast_axes(x, y, out, axes) == 0 &&
        grad_broadcast_axes(y, x, out, axes) == 0) {
        /* Operands of the output's shape: slices pass through. */
        dxs[0] = dys[0];
        dxs[1] = kind == NDX_BINARY_SUB ? negated(&c, &dys[0]) : dys[0];
        return grad_status(&c);
    }
    ndx_output dy = grad_dense(&c, &dys[0], out);
    /* TensorFlow's convention for complex operands: the conjugates of x and y (no-ops for
     * real dtypes; complex maximum, minimum and floor_mod are refused by the forward op). */
    if (kind == NDX_BINARY_MUL || kind == NDX_BINARY_REAL_DIV) {
        x = grad_conj(&c, x);
        y = grad_conj(&c, y);
    }
    switch (kind) {
    case NDX_BINARY_ADD: both(&c, dy, dy, dxs); break;
    case NDX_BINARY_SUB: both(&c, dy, G_NEG(&c, dy), dxs); break;
    case NDX_BINARY_MUL: both(&c, G_MUL(&c, dy, y), G_MUL(&c, x, dy), dxs); break;
    case NDX_BINARY_REAL_DIV:
        both(&c, G_DIV(&c, dy, y), G_NEG(&c, G_DIV(&c, G_DIV(&c, G_MUL(&c, dy, x), y), y)), dxs);
        break;
    case NDX_BINARY_FLOOR_MOD: /* x - floor(x / y) * y */
        both(&c, dy, G_NEG(&c, G_MUL(&c, dy, G_BIN(&c, NDX_OP_FLOOR_DIV, x, y))), dxs);
        break;
    case NDX_BINARY_MAXIMUM:
    case NDX_BINARY_MINIMUM: {
        /* x won where the output equals it (x >= y for maximum, x <= y for minimum, as TF's
         * masks); y gets the rest. */
        ndx_output won = G_CAST(&c, G_EQUAL(&c, out, x), dt);
        ndx_output gx = G_MUL(&c, dy, won);
        both(&c, gx, G_SUB(&c, dy, gx), dxs);
        break;
    }
    default: /* floor_div, the comparisons, the logical ops: not differentiable */ break;
    }
    return grad_status(&c);
}

ndx_status grad_reshape(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output x = grad_in(&c, 0);
    if (!grad_dtype_ok(ndx_output_spec(x).dtype)) return NDX_OK;
    dxs[0] =
        grad_dense_of(G_RESHAPE(&c, grad_dense(&c, &dys[0], grad_out(&c, 0)), grad_shape(&c, x)));
    return grad_status(&c);
}

ndx_status grad_fill(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    dxs[1] = grad_dense_of(grad_sum_all(&c, grad_dense(&c, &dys[0], grad_out(&c, 0))));
    return grad_status(&c);
}

/* dy of a reduce_sum over `axes` broadcast back to x's shape when the build knows too little
 * (TensorFlow's reduced_shape): x's shape with 1 at the axes, stitched at run time, is the shape
 * of dy with kept dims, which ones of x's shape then broadcast. */
static ndx_output spread_at_run_time(const grad_ctx *c, ndx_output dy, ndx_output axes) {
    ndx_output x = grad_in(c, 0), shape = grad_shape(c, x), one = grad_i64(c, 1);
    ndx_output rank = grad_size(c, shape), zero = grad_i64(c, 0);
    ndx_output flat = G_RESHAPE(c, grad_int64(c, axes), grad_i64_vec(c, 1, (const int64_t[]){-1}));
    ndx_output at[2], dims[2];
    at[0] = G_RANGE(c, zero, rank, one);
    at[1] = G_BIN(c, NDX_OP_FLOOR_MOD, G_ADD(c, flat, rank), rank);
    ndx_output count = G_RESHAPE(c, grad_size(c, flat), grad_i64_vec(c, 1, (const int64_t[]){1}));
    dims[0] = shape;
    dims[1] = G_FILL(c, count, one);
    ndx_output kept = G_STITCH(c, 0, 2, at, dims);
    return G_MUL(c, G_RESHAPE(c, dy, kept), G_ONES_LIKE(c, x));
}

/* dy of a reduce_sum over the axes in `reduced` broadcast back to x's shape (x's rank known):
 * dy with x's dims of 1 at the reduced axes times ones of x's dims at the reduced axes and of 1
 * at the others, which the binary op broadcasts to x's shape (no table of x's size). */
static ndx_output spread(const grad_ctx *c, ndx_output dy, const ndx_spec *x, const int *reduced,
                         int keep_dims) {
    ndx_output x_in = grad_in(c, 0);
    int kept = 0, unknown_kept = 0, reduced_known = 1;
    int64_t keep_shape[NDX_MAX_RANK], ones_shape[NDX_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        keep_shape[i] = reduced[i] ? 1 : x->shape[i];
        ones_shape[i] = reduced[i] ? x->shape[i] : 1;
        if (!reduced[i]) kept++;
        if (!reduced[i] && !ndx_dim_known(x->shape[i])) unknown_kept++;
        if (reduced[i] && !ndx_dim_known(x->shape[i])) reduced_known = 0;
    }
    if (kept == 0) /* every axis: dy is one number */
        return G_MUL(c, G_ONES_LIKE(c, x_in), G_RESHAPE(c, dy, grad_i64_vec(c, 0, NULL)));
    if (!keep_dims) {
        if (unknown_kept > 1) return spread_at_run_time(c, dy, grad_in(c, 1));
        dy = G_RESHAPE(c, dy, grad_i64_vec(c, x->rank, keep_shape));
    }
    ndx_dtype dt = x->dtype;
    ndx_output ones = reduced_known ? G_FILL(c, grad_i64_vec(c, x->rank, ones_shape),
                                             G_CAST(c, grad_i64(c, 1), dt))
                                    : G_ONES_LIKE(c, x_in);
    return G_MUL(c, dy, ones);
}

/* A reduction's dy (Sum, Mean, Max, Min: output 0, input 0 reduced over the axes of input 1)
 * broadcast back to x's shape: from the constant axes when the build knows them and x's rank,
 * at run time otherwise (dy itself when no axis is reduced). */
static ndx_output spread_back(const grad_ctx *c, ndx_output dy) {
    ndx_spec xs = ndx_output_spec(grad_in(c, 0));
    const ndx_tensor *axes = ndx_output_constant(grad_in(c, 1));
    if (!axes || xs.rank == NDX_UNKNOWN) return spread_at_run_time(c, dy, grad_in(c, 1));
    int reduced[NDX_MAX_RANK] = {0};
    int64_t n = ndx_tensor_count(axes);
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ndx_read_index(axes->data, axes->dtype, i);
        reduced[a < 0 ? a + xs.rank : a] = 1;
    }
    return n == 0 ? dy : spread(c, dy, &xs, reduced, c->n->attrs.keep_dims);
}

/* 1 when the build knows that a reduction reduces no axis (constant, empty axes). */
static int reduces_nothing(const grad_ctx *c) {
    const ndx_tensor *axes = ndx_output_constant(grad_in(c, 1));
    return axes && ndx_tensor_count(axes) == 0;
}

ndx_status grad_sum(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 0)).dtype)) return NDX_OK;
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    dxs[0] = grad_dense_of(spread_back(&c, dy));
    return grad_status(&c);
}

/* TensorFlow's MeanGrad: Sum's gradient divided by the number of elements reduced into each
 * output, size(x) // max(size(y), 1) (a constant when both sizes are known at build time). */
ndx_status grad_mean(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_dtype dt = ndx_output_spec(grad_in(&c, 0)).dtype;
    if (!grad_dtype_ok(dt)) return NDX_OK;
    ndx_output y = grad_out(&c, 0), dy = grad_dense(&c, &dys[0], y);
    ndx_output factor = G_BIN(&c, NDX_OP_FLOOR_DIV, grad_size(&c, grad_in(&c, 0)),
                              G_BIN(&c, NDX_OP_MAXIMUM, grad_size(&c, y), grad_i64(&c, 1)));
    dxs[0] = grad_dense_of(G_DIV(&c, spread_back(&c, dy), G_CAST(&c, factor, dt)));
    return grad_status(&c);
}

/* TensorFlow's _MinOrMaxGrad: dy goes to the elements equal to their output, shared equally
 * among ties: indicators = cast(y == x), dx = indicators / sum(indicators) * dy, with y, dy
 * and the count broadcast back to x's shape. */
ndx_status grad_min_max(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output x = grad_in(&c, 0), y = grad_out(&c, 0);
    ndx_dtype dt = ndx_output_spec(x).dtype;
    if (!grad_dtype_ok(dt)) return NDX_OK;
    ndx_output dy = grad_dense(&c, &dys[0], y);
    if (reduces_nothing(&c)) { /* y is x */
        dxs[0] = grad_dense_of(dy);
        return grad_status(&c);
    }
    ndx_output indicators = G_CAST(&c, G_EQUAL(&c, spread_back(&c, y), x), dt);
    ndx_output count = G_SUM(&c, indicators, grad_in(&c, 1), 1);
    ndx_output share = G_DIV(&c, indicators, count);
    dxs[0] = grad_dense_of(G_MUL(&c, share, spread_back(&c, dy)));
    return grad_status(&c);
}

/* TensorFlow's SelectV2 gradient: dy where the condition took x (zeros elsewhere) to x, the
 * rest to y, each summed over the axes its operand was broadcast along; none for the
 * condition. */
ndx_status grad_select(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output cond = grad_in(&c, 0), x = grad_in(&c, 1), y = grad_in(&c, 2), out = grad_out(&c, 0);
    ndx_dtype dt = ndx_output_spec(x).dtype;
    if (!grad_dtype_ok(dt)) return NDX_OK;
    ndx_output dy = grad_dense(&c, &dys[0], out), zero = grad_scalar(&c, dt, 0);
    ndx_output gx = ndx_op_select_at(c.file, c.line, c.s, cond, dy, zero);
    ndx_output gy = ndx_op_select_at(c.file, c.line, c.s, cond, zero, dy);
    dxs[1] = grad_dense_of(grad_unbroadcast_to(&c, gx, x));
    dxs[2] = grad_dense_of(grad_unbroadcast_to(&c, gy, y));
    return grad_status(&c);
}
