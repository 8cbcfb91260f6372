/* grad_util.h — what the gradient functions (grad_*.c) share: the context of one forward node's
 * gradient (its scope "gradients/<node>_grad/" and its builder's file:line, which every gradient
 * node carries), builders bound to that context, and small compositions of the glue ops
 * (shapes as int64 vectors, sums over every axis, concatenation, masking rows, densifying).
 * Private to the graph layer. */
#ifndef NDX_GRAD_UTIL_H
#define NDX_GRAD_UTIL_H

#include "graph_internal.h"

typedef struct grad_ctx {
    ndx_scope s;      /* where the gradient's nodes go */
    const char *file; /* the forward node's builder call */
    int line;
    const graph_node *n; /* the forward node */
    ndx_operation op;
} grad_ctx;

/* The context of op's gradient in scope s (which gradients.c made for it). */
grad_ctx grad_ctx_of(ndx_scope s, ndx_operation op);
/* Input i and output k of the forward node. */
ndx_output grad_in(const grad_ctx *c, int i);
ndx_output grad_out(const grad_ctx *c, int k);
/* NDX_OK, or the graph's first error's code. */
ndx_status grad_status(const grad_ctx *c);
/* Records a build error naming the forward node; returns its code. */
ndx_status grad_fail(const grad_ctx *c, ndx_status code, const char *msg);
/* 1 for float16, bfloat16, float32, float64, complex64, complex128. */
int grad_dtype_ok(ndx_dtype dtype);
int grad_is_complex(ndx_dtype dtype);

/* The builders, at the forward node's file:line in the gradient's scope. */
#define G_BIN(c, k, a, b) ndx_op_binary_at((c)->file, (c)->line, (c)->s, (k), (a), (b))
#define G_ADD(c, a, b) G_BIN(c, NDX_OP_ADD, a, b)
#define G_SUB(c, a, b) G_BIN(c, NDX_OP_SUB, a, b)
#define G_MUL(c, a, b) G_BIN(c, NDX_OP_MUL, a, b)
#define G_DIV(c, a, b) G_BIN(c, NDX_OP_DIV, a, b)
#define G_EQUAL(c, a, b) G_BIN(c, NDX_OP_EQUAL, a, b)
#define G_NEG(c, x) ndx_op_unary_at((c)->file, (c)->line, (c)->s, NDX_OP_NEG, (x))
#define G_ZEROS_LIKE(c, x) ndx_op_unary_at((c)->file, (c)->line, (c)->s, NDX_OP_ZEROS_LIKE, (x))
#define G_ONES_LIKE(c, x) ndx_op_unary_at((c)->file, (c)->line, (c)->s, NDX_OP_ONES_LIKE, (x))
#define G_CAST(c, x, dt) ndx_op_cast_at((c)->file, (c)->line, (c)->s, (x), (dt))
#define G_RESHAPE(c, x, shape) ndx_op_reshape_at((c)->file, (c)->line, (c)->s, (x), (shape))
#define G_GATHER(c, p, i, attrs)                                                                   \
    ndx_op_gather_nd_at((c)->file, (c)->line, (c)->s, (p), (i), (attrs))
#define G_SCATTER(c, i, u, shape, attrs)                                                           \
    ndx_op_scatter_nd_at((c)->file, (c)->line, (c)->s, (i), (u), (shape), (attrs))
#define G_TSCATTER(c, op, t, i, u, attrs)                                                          \
    ndx_op_tensor_scatter_nd_at((c)->file, (c)->line, (c)->s, (op), (t), (i), (u), (attrs))
#define G_RANGE(c, a, b, d) ndx_op_range_at((c)->file, (c)->line, (c)->s, (a), (b), (d))
#define G_STITCH(c, par, n, i, d)                                                                  \
    ndx_op_dynamic_stitch_at((c)->file, (c)->line, (c)->s, (par), (n), (i), (d))
#define G_FILL(c, dims, v) ndx_op_fill_at((c)->file, (c)->line, (c)->s, (dims), (v))
#define G_SLICE(c, x, b, size) ndx_op_slice_at((c)->file, (c)->line, (c)->s, (x), (b), (size))
#define G_CONCAT(c, n, v, axis) ndx_op_concat_at((c)->file, (c)->line, (c)->s, (n), (v), (axis))
#define G_SHAPE(c, x) ndx_op_shape_at((c)->file, (c)->line, (c)->s, (x), NDX_INT64)
#define G_SUM(c, x, axes, keep)                                                                    \
    ndx_op_reduce_sum_at((c)->file, (c)->line, (c)->s, (x), (axes), (keep))

/* Constants: an int64 scalar, an int64 vector, a scalar of `dtype`. */
ndx_output grad_i64(const grad_ctx *c, int64_t v);
ndx_output grad_i64_vec(const grad_ctx *c, int n, const int64_t *v);
ndx_output grad_scalar(const grad_ctx *c, ndx_dtype dtype, double v);

/* x as int64 (itself when it is). */
ndx_output grad_int64(const grad_ctx *c, ndx_output x);
/* conj(x) for complex x (from casts: ndx has no conj op), x itself otherwise. */
ndx_output grad_conj(const grad_ctx *c, ndx_output x);
/* x's shape as an int64 vector (a constant when its dims are known); x's element count and its
 * dim 0 as int64 scalars. */
ndx_output grad_shape(const grad_ctx *c, ndx_output x);
ndx_output grad_size(const grad_ctx *c, ndx_output x);
/* dims[first, first + count) of x's shape as an int64 vector (x's rank must be known). */
ndx_output grad_dims(const grad_ctx *c, ndx_output x, int first, int count);
/* The concatenation of n tensors along dim 0 (a dynamic_stitch over consecutive ranges). */
ndx_output grad_concat0(const grad_ctx *c, int n, const ndx_output *parts);
/* The number of index rows N of indices [N..., depth] as an int64 scalar (a constant when its
 * leading dims are known; at depth 0 counted from a sum over the empty last dim). */
ndx_output grad_index_rows(const grad_ctx *c, ndx_output indices);
/* indices [N..., depth] as an int64 matrix [N, depth] (depth known at build time; N found at
 * run time when the build does not know it, depth 0 too). */
ndx_output grad_index_matrix(const grad_ctx *c, ndx_output indices);
/* gather_nd(params, indices, attrs), where an index depth of 0 with batch_dims 0 takes all of
 * params for each row even when params is a scalar (which gather_nd refuses): what the
 * gradients of the scatters gather their dy with. */
ndx_output grad_gather_rows(const grad_ctx *c, ndx_output params, ndx_output indices,
                            const ndx_gather_nd_attrs *attrs);
/* [N] + x.shape[k:] as an int64 vector, N = grad_index_rows(indices) (-1 when x.shape[k:] is
 * known and not empty: reshape then finds N). */
ndx_output grad_rows_shape(const grad_ctx *c, ndx_output indices, ndx_output x, int k);
/* 1 when x is known at build time to have no elements (a dim 0): a gather from it of any row
 * fails, as in TensorFlow, so gradients that would gather from it give zeros instead. */
int grad_known_empty(ndx_output x);
/* The sum of every element of t (a scalar). */
ndx_output grad_sum_all(const grad_ctx *c, ndx_output t);
/* Rows of values ([N] + tail) kept where keep (int64 [N], 0 or 1) is 1, zero elsewhere. */
ndx_output grad_keep_rows(const grad_ctx *c, ndx_output values, ndx_output keep);
/* g as a dense tensor of like's shape: zeros for NONE, scatter_nd (skipping rows out of range)
 * for SLICES. */
ndx_output grad_dense(const grad_ctx *c, const graph_grad *g, ndx_output like);
/* TensorFlow's BroadcastGradientArgs at build time, for operand x of a binary op whose other
 * operand is `other` and whose output is `out`: the axes of out along which x was repeated (out's
 * leading axes beyond x's rank, and those where x has a dim of 1 and out does not) into axes;
 * returns their count, or -1 when the build cannot tell (a rank unknown, or an axis where x's
 * dim is unknown and neither other's nor out's is known to be 1). */
int grad_broadcast_axes(ndx_output x, ndx_output other, ndx_output out, int64_t *axes);
/* Dense gradients gx, gy of the forward binary node's output, for its operands x and y: each
 * summed over the axes along which its operand was broadcast and reshaped to its shape (itself
 * when it was not), into dx[0], dx[1]. Axes the build cannot tell come from a
 * BroadcastGradientArgs node at run time, which also reports shapes that do not broadcast. */
void grad_unbroadcast(const grad_ctx *c, ndx_output gx, ndx_output gy, ndx_output *dx);
/* A dense gradient g of the forward node's output 0 (the broadcast of all its operands, as
 * SelectV2's), for its operand x: summed over the axes along which x was repeated and reshaped
 * to x's shape (g itself when it was not); axes the build cannot tell, at run time. */
ndx_output grad_unbroadcast_to(const grad_ctx *c, ndx_output g, ndx_output x);
/* A gradient of each form. */
graph_grad grad_dense_of(ndx_output dense);
graph_grad grad_slices_of(ndx_output indices, ndx_output values, ndx_output dense_shape);
/* acc += add (see ndx_graph.h: add, concatenation of rows, tensor_scatter_nd_add). */
void grad_accumulate(const grad_ctx *c, graph_grad *acc, const graph_grad *add);

/* The gradient of each kind, as kinds.def names it (grad_math.c, grad_array.c, grad_index.c,
 * grad_sparse.c define them; a function several kinds share is declared once per kind). */
#define NDX_KIND(kind, name, gradient)                                                          \
    ndx_status gradient(ndx_scope s, ndx_operation op, const graph_grad *dys, graph_grad *dxs);
#define NDX_KIND_NO_GRADIENT(kind, name)
#include "kinds.def"

/* The gradient function of a kind, or NULL where kinds.def says it has none. */
graph_grad_fn graph_gradient(graph_kind kind);

#endif /* NDX_GRAD_UTIL_H */
