/* grad_array.c — the gradients of concat, stack and slice (TensorFlow's array_grad.py): the
 * first two cut dy back into the pieces their inputs were (slices at run-time offsets when dims
 * are unknown), the last pads dy back to its input's shape with zeros. They need the axis (a
 * constant) and the ranks known at build time. */
#include <stdio.h>

#include "grad_util.h"

/* An int64 vector of `rank` elements: `at` where e[i] (a one-hot at `axis`), `other` elsewhere. */
static ndx_output one_hot(const grad_ctx *c, int rank, int axis, int64_t at, int64_t other) {
    int64_t v[NDX_MAX_RANK];
    for (int i = 0; i < rank; i++) v[i] = i == axis ? at : other;
    return grad_i64_vec(c, rank, v);
}

static ndx_status needs_rank(const grad_ctx *c, const char *what) {
    char msg[128];
    snprintf(msg, sizeof msg, "needs %s known at build time", what);
    return grad_fail(c, NDX_E_UNSUPPORTED, msg);
}

ndx_status grad_concat(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    int n = c.n->attrs.count;
    ndx_spec out = ndx_output_spec(grad_out(&c, 0));
    if (!grad_dtype_ok(out.dtype)) return NDX_OK;
    const ndx_tensor *axis = ndx_output_constant(grad_in(&c, n));
    if (!axis || out.rank == NDX_UNKNOWN) return needs_rank(&c, "a constant axis and the rank");
    int a = (int)ndx_read_index(axis->data, axis->dtype, 0);
    if (a < 0) a += out.rank;
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    ndx_output e = one_hot(&c, out.rank, a, 1, 0);
    int64_t zero = 0;
    ndx_output start = grad_i64_vec(&c, 1, &zero); /* where input i begins along the axis */
    for (int i = 0; i < n; i++) {
        ndx_output x = grad_in(&c, i);
        dxs[i] = grad_dense_of(G_SLICE(&c, dy, G_MUL(&c, start, e), grad_shape(&c, x)));
        if (i + 1 < n) start = G_ADD(&c, start, grad_dims(&c, x, a, 1));
    }
    return grad_status(&c);
}

ndx_status grad_pack(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    int n = c.n->attrs.count;
    ndx_spec out = ndx_output_spec(grad_out(&c, 0));
    if (!grad_dtype_ok(out.dtype)) return NDX_OK;
    if (out.rank == NDX_UNKNOWN) return needs_rank(&c, "the rank of the values");
    int a = c.n->attrs.axis < 0 ? c.n->attrs.axis + out.rank : c.n->attrs.axis;
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    ndx_output size = one_hot(&c, out.rank, a, 1, -1); /* one step along the axis, all else */
    for (int i = 0; i < n; i++) {
        ndx_output piece = G_SLICE(&c, dy, one_hot(&c, out.rank, a, i, 0), size);
        dxs[i] = grad_dense_of(G_RESHAPE(&c, piece, grad_shape(&c, grad_in(&c, i))));
    }
    return grad_status(&c);
}

/* dy padded back to x's shape: along each axis d in turn, zeros of begin[d] before it and of
 * x.shape[d] - begin[d] - size[d] after it (concatenated; ndx has no Pad). */
ndx_status grad_slice(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output x = grad_in(&c, 0), y = grad_out(&c, 0);
    ndx_spec xs = ndx_output_spec(x);
    if (!grad_dtype_ok(xs.dtype)) return NDX_OK;
    if (xs.rank == NDX_UNKNOWN) return needs_rank(&c, "the input's rank");
    ndx_output cur = grad_dense(&c, &dys[0], y);
    ndx_output begin = grad_int64(&c, grad_in(&c, 1));
    ndx_output after = G_SUB(&c, G_SUB(&c, grad_shape(&c, x), begin), grad_shape(&c, y));
    ndx_output zero = grad_scalar(&c, xs.dtype, 0);
    for (int d = 0; d < xs.rank; d++) {
        ndx_output e = one_hot(&c, xs.rank, d, 1, 0);
        ndx_output others = G_MUL(&c, grad_shape(&c, cur), one_hot(&c, xs.rank, d, 0, 1));
        ndx_output parts[3] = {G_FILL(&c, G_ADD(&c, others, G_MUL(&c, begin, e)), zero), cur,
                               G_FILL(&c, G_ADD(&c, others, G_MUL(&c, after, e)), zero)};
        cur = G_CONCAT(&c, 3, parts, grad_i64(&c, d));
    }
    dxs[0] = grad_dense_of(cur);
    return grad_status(&c);
}
