/* grad_util.c — the compositions of glue ops that the gradient functions share (grad_util.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad_util.h"
#include "graph_store.h"

grad_ctx grad_ctx_of(ndx_scope s, ndx_operation op) {
    grad_ctx c;
    c.s = s;
    c.op = op;
    c.n = graph_node_at(op.graph, op.id);
    c.file = c.n->file;
    c.line = c.n->line;
    return c;
}

ndx_output grad_in(const grad_ctx *c, int i) { return c->n->inputs[i]; }

ndx_output grad_out(const grad_ctx *c, int k) {
    ndx_output o = {c->op, k};
    return o;
}

ndx_status grad_status(const grad_ctx *c) {
    ndx_graph *g = c->s.graph;
    return g->failed ? (g->first.code != NDX_OK ? g->first.code : NDX_E_INVALID_ARGUMENT) : NDX_OK;
}

ndx_status grad_fail(const grad_ctx *c, ndx_status code, const char *msg) {
    char full[NDX_ERROR_MESSAGE_SIZE];
    snprintf(full, sizeof full, "gradient of %s: %s", graph_type_name(c->n), msg);
    graph_record(c->s.graph, code, c->file, c->line, c->n->name, full);
    return grad_status(c);
}

int grad_dtype_ok(ndx_dtype dtype) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dtype);
    return k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX;
}

int grad_is_complex(ndx_dtype dtype) { return ndx_dtype_kind_of(dtype) == NDX_KIND_COMPLEX; }

/* ---- constants ---------------------------------------------------------------------------- */

ndx_output grad_i64(const grad_ctx *c, int64_t v) {
    return ndx_op_const_int_at(c->file, c->line, c->s, NDX_INT64, v);
}

ndx_output grad_i64_vec(const grad_ctx *c, int n, const int64_t *v) {
    static const int64_t none = 0;
    int64_t shape[1] = {n};
    ndx_tensor t = ndx_tensor_make(NDX_INT64, 1, shape, (void *)(n ? v : &none));
    return ndx_op_const_at(c->file, c->line, c->s, &t);
}

ndx_output grad_scalar(const grad_ctx *c, ndx_dtype dtype, double v) {
    return ndx_op_const_float_at(c->file, c->line, c->s, dtype, v);
}

/* ---- shapes -------------------------------------------------------------------------------- */

/* 1 when dims [first, first + count) of spec are all known. */
static int dims_known(const ndx_spec *sp, int first, int count) {
    return sp->rank != NDX_UNKNOWN && ndx_dims_known(count, sp->shape + first);
}

ndx_output grad_dims(const grad_ctx *c, ndx_output x, int first, int count) {
    ndx_spec sp = ndx_output_spec(x);
    if (dims_known(&sp, first, count)) return grad_i64_vec(c, count, sp.shape + first);
    int64_t rows[NDX_MAX_RANK];
    for (int i = 0; i < count; i++)
        rows[i] = first + i;
    int64_t shape[2] = {count, 1};
    ndx_tensor t = ndx_tensor_make(NDX_INT64, 2, shape, rows);
    ndx_output at = ndx_op_const_at(c->file, c->line, c->s, &t);
    ndx_output whole = ndx_op_shape_at(c->file, c->line, c->s, x, NDX_INT64);
    return G_GATHER(c, whole, at, NULL);
}

ndx_output grad_int64(const grad_ctx *c, ndx_output x) {
    return ndx_output_spec(x).dtype == NDX_INT64 ? x : G_CAST(c, x, NDX_INT64);
}

/* A complex scalar re + im i of dtype dt. */
static ndx_output complex_scalar(const grad_ctx *c, ndx_dtype dt, double re, double im) {
    double v128[2] = {re, im};
    float v64[2] = {(float)re, (float)im};
    ndx_tensor t = ndx_tensor_make(dt, 0, NULL, dt == NDX_COMPLEX64 ? (void *)v64 : (void *)v128);
    return ndx_op_const_at(c->file, c->line, c->s, &t);
}

ndx_output grad_conj(const grad_ctx *c, ndx_output x) {
    ndx_dtype dt = ndx_output_spec(x).dtype;
    if (!grad_is_complex(dt)) return x;
    /* re(x) - i im(x), where casting to a real dtype keeps the real part and im(x) = re(-i x) */
    ndx_dtype real = dt == NDX_COMPLEX64 ? NDX_FLOAT32 : NDX_FLOAT64;
    ndx_output re = G_CAST(c, G_CAST(c, x, real), dt);
    ndx_output im = G_CAST(c, G_CAST(c, G_MUL(c, x, complex_scalar(c, dt, 0, -1)), real), dt);
    return G_SUB(c, re, G_MUL(c, im, complex_scalar(c, dt, 0, 1)));
}

ndx_output grad_shape(const grad_ctx *c, ndx_output x) {
    ndx_spec sp = ndx_output_spec(x);
    if (sp.rank != NDX_UNKNOWN && dims_known(&sp, 0, sp.rank))
        return grad_i64_vec(c, sp.rank, sp.shape);
    return ndx_op_shape_at(c->file, c->line, c->s, x, NDX_INT64);
}

ndx_output grad_size(const grad_ctx *c, ndx_output x) {
    return ndx_op_size_at(c->file, c->line, c->s, x, NDX_INT64);
}

/* Dim 0 of x as an int64 scalar. */
static ndx_output dim0(const grad_ctx *c, ndx_output x) {
    ndx_spec sp = ndx_output_spec(x);
    if (sp.rank >= 1 && ndx_dim_known(sp.shape[0])) return grad_i64(c, sp.shape[0]);
    ndx_output whole = ndx_op_shape_at(c->file, c->line, c->s, x, NDX_INT64);
    int64_t zero = 0, one = 1;
    ndx_tensor t = ndx_tensor_make(NDX_INT64, 1, &one, &zero);
    return G_GATHER(c, whole, ndx_op_const_at(c->file, c->line, c->s, &t), NULL);
}

ndx_output grad_concat0(const grad_ctx *c, int n, const ndx_output *parts) {
    ndx_output *idx = malloc((size_t)n * sizeof *idx);
    if (!idx) {
        grad_fail(c, NDX_E_NO_MEMORY, "out of memory");
        return parts[0];
    }
    ndx_output off = grad_i64(c, 0), one = grad_i64(c, 1);
    for (int m = 0; m < n; m++) {
        ndx_output end = G_ADD(c, off, dim0(c, parts[m]));
        idx[m] = G_RANGE(c, off, end, one);
        off = end;
    }
    ndx_output out = G_STITCH(c, 0, n, idx, parts);
    free(idx);
    return out;
}

ndx_output grad_index_rows(const grad_ctx *c, ndx_output indices) {
    ndx_spec is = ndx_output_spec(indices);
    int64_t rows = 1;
    if (is.rank == NDX_UNKNOWN || !ndx_dim_known(is.shape[is.rank - 1])) {
        grad_fail(c, NDX_E_UNSUPPORTED,
                  "needs the index depth (indices' last dim) known at build "
                  "time");
        return indices;
    }
    for (int i = 0; i < is.rank - 1 && rows >= 0; i++)
        rows = ndx_dim_known(is.shape[i]) ? rows * is.shape[i] : -1;
    if (rows >= 0) return grad_i64(c, rows);
    if (is.shape[is.rank - 1] == 0) /* no coordinates to count: the rows' count of zeros */
        return grad_size(c, G_SUM(c, grad_int64(c, indices), grad_i64(c, is.rank - 1), 0));
    return G_BIN(c, NDX_OP_FLOOR_DIV, grad_size(c, indices), grad_i64(c, is.shape[is.rank - 1]));
}

ndx_output grad_index_matrix(const grad_ctx *c, ndx_output indices) {
    ndx_spec is = ndx_output_spec(indices);
    int64_t depth = is.shape[is.rank - 1];
    ndx_output flat = grad_int64(c, indices);
    if (depth > 0) return G_RESHAPE(c, flat, grad_i64_vec(c, 2, (const int64_t[]){-1, depth}));
    /* [N, 0]: reshape cannot find N from no elements */
    ndx_output rows = grad_index_rows(c, indices);
    const ndx_tensor *known = ndx_output_constant(rows);
    if (known) {
        int64_t shape[2] = {*(const int64_t *)known->data, 0};
        return G_RESHAPE(c, flat, grad_i64_vec(c, 2, shape));
    }
    ndx_output parts[2];
    parts[0] = G_RESHAPE(c, rows, grad_i64_vec(c, 1, (const int64_t[]){1}));
    parts[1] = grad_i64_vec(c, 1, (const int64_t[]){0});
    return G_RESHAPE(c, flat, grad_concat0(c, 2, parts));
}

ndx_output grad_gather_rows(const grad_ctx *c, ndx_output params, ndx_output indices,
                            const ndx_gather_nd_attrs *attrs) {
    ndx_spec is = ndx_output_spec(indices);
    if (is.rank == NDX_UNKNOWN || is.shape[is.rank - 1] != 0 || (attrs && attrs->batch_dims))
        return G_GATHER(c, params, indices, attrs);
    /* Depth 0 takes the whole of params for each row, a scalar too (which gather_nd refuses):
     * rows of index 0, depth 1, into params with a leading dim of 1. */
    ndx_output zeros = G_SUM(c, grad_int64(c, indices), grad_i64(c, is.rank - 1), 1);
    ndx_spec ps = ndx_output_spec(params);
    ndx_output shape;
    if (ps.rank != NDX_UNKNOWN && dims_known(&ps, 0, ps.rank)) {
        int64_t dims[NDX_MAX_RANK + 1] = {1};
        memcpy(dims + 1, ps.shape, (size_t)ps.rank * sizeof *dims);
        shape = grad_i64_vec(c, ps.rank + 1, dims);
    } else {
        ndx_output parts[2];
        parts[0] = grad_i64_vec(c, 1, (const int64_t[]){1});
        parts[1] = grad_shape(c, params);
        shape = grad_concat0(c, 2, parts);
    }
    return G_GATHER(c, G_RESHAPE(c, params, shape), zeros, attrs);
}

ndx_output grad_rows_shape(const grad_ctx *c, ndx_output indices, ndx_output x, int k) {
    ndx_spec sp = ndx_output_spec(x);
    if (sp.rank == NDX_UNKNOWN) {
        grad_fail(c, NDX_E_INVALID_ARGUMENT, "needs the rank of its input known at build time");
        return indices;
    }
    if (dims_known(&sp, k, sp.rank - k)) {
        int64_t dims[NDX_MAX_RANK + 1], tail = 1;
        for (int i = k; i < sp.rank; i++)
            tail *= dims[1 + i - k] = sp.shape[i];
        const ndx_tensor *r = tail ? NULL : ndx_output_constant(grad_index_rows(c, indices));
        if (tail || r) {
            dims[0] = r ? *(const int64_t *)r->data : -1;
            return grad_i64_vec(c, 1 + sp.rank - k, dims);
        }
    }
    ndx_output rows = grad_index_rows(c, indices);
    ndx_output parts[2]; /* one statement each: the nodes are built in this order */
    parts[0] = G_RESHAPE(c, rows, grad_i64_vec(c, 1, (const int64_t[]){1}));
    parts[1] = grad_dims(c, x, k, sp.rank - k);
    return grad_concat0(c, 2, parts);
}

int grad_known_empty(ndx_output x) {
    ndx_spec sp = ndx_output_spec(x);
    for (int i = 0; sp.rank != NDX_UNKNOWN && i < sp.rank; i++)
        if (sp.shape[i] == 0) return 1;
    return 0;
}

ndx_output grad_sum_all(const grad_ctx *c, ndx_output t) {
    ndx_spec sp = ndx_output_spec(t);
    ndx_output axes;
    if (sp.rank != NDX_UNKNOWN) {
        int64_t all[NDX_MAX_RANK];
        for (int i = 0; i < sp.rank; i++)
            all[i] = i;
        axes = grad_i64_vec(c, sp.rank, all);
    } else {
        ndx_output rank = grad_size(c, ndx_op_shape_at(c->file, c->line, c->s, t, NDX_INT64));
        axes = G_RANGE(c, grad_i64(c, 0), rank, grad_i64(c, 1));
    }
    return G_SUM(c, t, axes, 0);
}

ndx_output grad_keep_rows(const grad_ctx *c, ndx_output values, ndx_output keep) {
    /* Row r is read from position (r + 1) * keep[r] - 1: itself, or -1, which gather_nd with the
     * ignore policy reads as zeros. */
    if (grad_known_empty(values)) return values;
    ndx_output one = grad_i64(c, 1);
    ndx_output rows = G_RANGE(c, grad_i64(c, 0), dim0(c, values), one);
    ndx_output at = G_SUB(c, G_MUL(c, G_ADD(c, rows, one), keep), one);
    at = G_RESHAPE(c, at, grad_i64_vec(c, 2, (const int64_t[]){-1, 1}));
    ndx_gather_nd_attrs skip = {0, NDX_BAD_INDICES_IGNORE};
    return G_GATHER(c, values, at, &skip);
}

ndx_output grad_dense(const grad_ctx *c, const graph_grad *g, ndx_output like) {
    if (g->form == GRAPH_GRAD_DENSE) return g->dense;
    if (g->form == GRAPH_GRAD_NONE) return G_ZEROS_LIKE(c, like);
    ndx_scatter_attrs skip = {NDX_BAD_INDICES_IGNORE};
    return G_SCATTER(c, g->indices, g->values, g->dense_shape, &skip);
}

int grad_broadcast_axes(ndx_output x, ndx_output other, ndx_output out, int64_t *axes) {
    ndx_spec xs = ndx_output_spec(x), ys = ndx_output_spec(other), os = ndx_output_spec(out);
    if (xs.rank == NDX_UNKNOWN || os.rank == NDX_UNKNOWN) return -1;
    int n = 0, lead = os.rank - xs.rank;
    for (int i = 0; i < os.rank; i++) {
        int64_t d = i < lead ? 1 : xs.shape[i - lead];
        int ky = i - (os.rank - (ys.rank == NDX_UNKNOWN ? os.rank : ys.rank));
        int64_t o = os.shape[i], e = ky < 0 ? 1 : ys.shape[ky];
        if (i < lead || (d == 1 && o != 1))
            axes[n++] = i;                                       /* x repeated along axis i */
        else if (!ndx_dim_known(d) && o != 1 && e != 1) return -1; /* d is 1 or e: unknown */
    }
    return n;
}

/* g summed over the n axes the build found x broadcast along, in x's shape. */
static ndx_output unbroadcast_known(const grad_ctx *c, ndx_output g, ndx_output x, int n,
                                    const int64_t *axes) {
    if (n == 0) return g;
    ndx_output sum = G_SUM(c, g, grad_i64_vec(c, n, axes), 0);
    /* the sum drops x's leading dims; x's own dims of 1 that were summed come back by a reshape */
    int lead = ndx_output_spec(grad_out(c, 0)).rank - ndx_output_spec(x).rank;
    return n == lead ? sum : G_RESHAPE(c, sum, grad_shape(c, x));
}

void grad_unbroadcast(const grad_ctx *c, ndx_output gx, ndx_output gy, ndx_output *dx) {
    ndx_output xy[2] = {grad_in(c, 0), grad_in(c, 1)}, g[2] = {gx, gy}, r[2];
    int64_t axes[2][NDX_MAX_RANK];
    int n[2];
    for (int k = 0; k < 2; k++)
        n[k] = grad_broadcast_axes(xy[k], xy[1 - k], grad_out(c, 0), axes[k]);
    if (n[0] < 0 || n[1] < 0) { /* TensorFlow's way: the axes from both shapes at run time */
        ndx_output sx = grad_shape(c, xy[0]), sy = grad_shape(c, xy[1]);
        ndx_op_broadcast_gradient_args_at(c->file, c->line, c->s, sx, sy, r);
    }
    for (int k = 0; k < 2; k++)
        dx[k] = n[k] >= 0 ? unbroadcast_known(c, g[k], xy[k], n[k], axes[k])
                          : G_RESHAPE(c, G_SUM(c, g[k], r[k], 0), grad_shape(c, xy[k]));
}

ndx_output grad_unbroadcast_to(const grad_ctx *c, ndx_output g, ndx_output x) {
    ndx_output out = grad_out(c, 0), r[2];
    int64_t axes[NDX_MAX_RANK];
    int n = grad_broadcast_axes(x, out, out, axes);
    if (n >= 0) return unbroadcast_known(c, g, x, n, axes);
    ndx_op_broadcast_gradient_args_at(c->file, c->line, c->s, grad_shape(c, x), grad_shape(c, out),
                                      r);
    return G_RESHAPE(c, G_SUM(c, g, r[0], 0), grad_shape(c, x));
}

graph_grad grad_dense_of(ndx_output dense) {
    graph_grad g;
    memset(&g, 0, sizeof g);
    g.form = GRAPH_GRAD_DENSE;
    g.dense = dense;
    return g;
}

graph_grad grad_slices_of(ndx_output indices, ndx_output values, ndx_output dense_shape) {
    graph_grad g;
    memset(&g, 0, sizeof g);
    g.form = GRAPH_GRAD_SLICES;
    g.indices = indices;
    g.values = values;
    g.dense_shape = dense_shape;
    return g;
}

/* The depth k of slices' index rows, or NDX_UNKNOWN. */
static int64_t slices_depth(const graph_grad *g) {
    ndx_spec sp = ndx_output_spec(g->indices);
    return sp.rank == 2 ? sp.shape[1] : NDX_UNKNOWN;
}

void grad_accumulate(const grad_ctx *c, graph_grad *acc, const graph_grad *add) {
    if (add->form == GRAPH_GRAD_NONE) return;
    if (acc->form == GRAPH_GRAD_NONE) {
        *acc = *add;
        return;
    }
    if (acc->form == GRAPH_GRAD_SLICES && add->form == GRAPH_GRAD_SLICES) {
        int64_t ka = slices_depth(acc), kb = slices_depth(add);
        if (ka != NDX_UNKNOWN && ka == kb) {
            ndx_output idx[2] = {acc->indices, add->indices}, val[2] = {acc->values, add->values};
            *acc =
                grad_slices_of(grad_concat0(c, 2, idx), grad_concat0(c, 2, val), acc->dense_shape);
            return;
        }
    }
    const graph_grad *dense = acc->form == GRAPH_GRAD_DENSE ? acc : add;
    const graph_grad *other = dense == acc ? add : acc;
    if (other->form == GRAPH_GRAD_SLICES && dense->form == GRAPH_GRAD_DENSE) {
        ndx_scatter_attrs skip = {NDX_BAD_INDICES_IGNORE};
        *acc = grad_dense_of(
            G_TSCATTER(c, NDX_SCATTER_ADD, dense->dense, other->indices, other->values, &skip));
        return;
    }
    /* dense + dense, or slices of different depths: both dense. */
    ndx_output a = grad_dense(c, acc, acc->dense), b = grad_dense(c, add, add->dense);
    *acc = grad_dense_of(G_ADD(c, a, b));
}
