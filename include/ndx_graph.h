/*
 * ndx_graph.h — programs of ndx ops: TensorFlow's C++ op classes (Scope, Operation, Output,
 * node()) in C, with shapes checked when the program is built and sessions that run it again and
 * again without allocating.
 *
 *   1. Graphs and scopes: a graph owns its nodes; a scope is a cheap value {graph, name prefix}
 *      that every builder takes; sub-scopes prefix names ("embed/GatherNd").
 *   2. Handles: an ndx_operation is one node, an ndx_output one of its results; an output is
 *      what the next builder takes as input (TensorFlow's Output / Input).
 *   3. Builders: one typed function per op of ndx.h, plus const, placeholder, identity and the
 *      glue ops that programs of these ops and their gradients need (equal, not_equal, cast,
 *      add, sub, mul, div, maximum, minimum, floor_div, floor_mod, less, less_equal, greater,
 *      greater_equal, logical_and, logical_or, logical_not, neg, abs, square, sqrt, zeros_like,
 *      ones_like, fill, reshape, reduce_sum, reduce_mean, reduce_max, reduce_min, select,
 *      where, range, size, shape), gather, one_hot, unique, setdiff1d, boolean_mask,
 *      embedding_bag, the segment reductions (unsorted_segment_*, segment_*,
 *      sparse_segment_*), bincount,
 *      dense_bincount, the rest of tf.sparse (sparse_add, sparse_maximum, sparse_minimum,
 *      sparse_dense_add, sparse_add_grad, sparse_dense_cwise, sparse_reduce, sparse_reduce_sparse,
 *      sparse_softmax, sparse_dense_matmul, sparse_slice, sparse_slice_grad, sparse_split,
 *      sparse_reshape, sparse_transpose, sparse_fill_empty_rows, sparse_fill_empty_rows_grad,
 *      dense_count_sparse_output, sparse_count_sparse_output), and
 *      ndx_op_by_type, one generic builder for language bindings (any node by its type name and
 *      attributes), with the registry of kinds that describes what each type takes
 *      (ndx_kind_info).
 *   4. Inspecting a node: name, op type, inputs, output specs, constant value, builder file:line.
 *   5. Sessions: a finished graph made runnable, with feeds, fetches and a memory pool.
 *   6. Saved graphs: the text form.
 *   7. Gradients: the nodes that compute d(ys)/d(xs), dense or as slices of rows.
 *
 * Errors are deferred, as with TensorFlow's Scope: a builder that fails records the graph's
 * *first error* (the caller's file:line, the node's name, then the op's own message naming the
 * argument and dims) and returns a failed handle. Every builder accepts failed handles and
 * passes failure on without crashing; ndx_graph_status reports the first error and a session
 * refuses a graph that has one. Builders and scope functions are macros that record __FILE__
 * and __LINE__. The message is never cut to make room for the location: when the whole does not
 * fit ndx_error's buffer, the file is shortened to its last component, then the file and the
 * node's name lose their beginnings ("...ed/GatherNd").
 *
 * Shapes are inferred at build time by the ops' own infer functions (ndx.h), on partial shapes.
 * Where inputs are constants the graph goes further: a node whose inputs are all constants is
 * computed at build time (folded; the result becomes a constant, up to 16 MiB per node),
 * constant indices are range-checked against whatever dims are known, and dynamic_partition
 * and dynamic_stitch get exact output shapes from constant partitions or indices. A folded node
 * keeps its op and inputs: a run that feeds something it is computed from computes it again
 * (see ndx_feed).
 *
 * Threads: a graph is built by one thread; ndx_graph_finish freezes it, and from then on any
 * number of sessions, in any threads, may share it. One session runs one call at a time.
 */
#ifndef NDX_GRAPH_H
#define NDX_GRAPH_H

#include "ndx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* 1. Graphs and scopes                                                                         */
/* ------------------------------------------------------------------------------------------ */

/* A graph of nodes, opaque: made by ndx_graph_new, filled by the builders. */
typedef struct ndx_graph ndx_graph;

/* Where builders put nodes: the graph and a name prefix (plus, from ndx_scope_named, the exact
 * name of the next node). A value: copy it freely; copies share the graph and its first error. */
typedef struct ndx_scope {
    ndx_graph *graph; /* NULL: a failed scope (ndx_graph_new ran out of memory) */
    uint32_t prefix;  /* private: the prefix's id in the graph */
    uint32_t name;    /* private: an exact name for the next node, 0: none */
} ndx_scope;

/* A new, empty graph, or NULL when memory runs out (every function accepts a NULL graph and a
 * scope of it, and reports "out of memory"). Free it with ndx_graph_free, after its sessions. */
NDX_API ndx_graph *ndx_graph_new(void);
NDX_API void ndx_graph_free(ndx_graph *g);

/* Longest full node name ("embed/inner/GatherNd_3"), prefix included, in bytes. TensorFlow has
 * no limit; ndx has this one so that every graph it saves can be read back (the text reader
 * holds a name in a buffer of this size). A longer name is a build error that names the limit. */
#define NDX_GRAPH_NAME_MAX 4096

/* The root scope: names have no prefix. */
NDX_API ndx_scope ndx_graph_root(ndx_graph *g);
/* A scope whose nodes are named "<prefix><name>/<Op>". `name` must match TensorFlow's rule for
 * node names, [A-Za-z0-9.][A-Za-z0-9_.-]* (any length, up to NDX_GRAPH_NAME_MAX for the full
 * name); a name already used in the parent is made unique as TensorFlow does ("embed",
 * "embed_1"). A bad name is the graph's first error, at the caller's file:line (a macro, like
 * the builders). */
#define ndx_scope_sub(s, name) ndx_scope_sub_at(__FILE__, __LINE__, (s), (name))
NDX_API ndx_scope ndx_scope_sub_at(const char *file, int line, ndx_scope s, const char *name);
/* The same scope, but the next node built with it is named exactly "<prefix><name>" instead of
 * "<prefix><Op>[_k]" (TensorFlow's WithOpName). A name already taken is a build error. */
#define ndx_scope_named(s, name) ndx_scope_named_at(__FILE__, __LINE__, (s), (name))
NDX_API ndx_scope ndx_scope_named_at(const char *file, int line, ndx_scope s, const char *name);

/* NDX_OK, or the graph's first error (copied into err). */
NDX_API ndx_status ndx_graph_status(const ndx_graph *g, ndx_error *err);
/* Freezes the graph: no node can be added after it (a builder then fails), and sessions may be
 * made. Returns ndx_graph_status. Calling it again is harmless. */
NDX_API ndx_status ndx_graph_finish(ndx_graph *g, ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 2. Handles                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* One node of a graph. id 0 is a failed handle (the builder failed, or was given one). */
typedef struct ndx_operation {
    ndx_graph *graph;
    uint32_t id;
} ndx_operation;

/* Result `index` of an operation: what one op feeds to the next. */
typedef struct ndx_output {
    ndx_operation op;
    int index;
} ndx_output;

/* A SparseTensor travels between nodes as its three parts. */
typedef struct ndx_sparse_output {
    ndx_output indices;     /* int64 [N, R] */
    ndx_output values;      /* [N] */
    ndx_output dense_shape; /* int64 [R] */
} ndx_sparse_output;

/* 1 for a live handle of a node that was built; 0 for a failed one. */
NDX_API int ndx_operation_ok(ndx_operation op);
NDX_API int ndx_output_ok(ndx_output out);
/* Output `index` of op (a failed handle when op failed or has no such output). */
NDX_API ndx_output ndx_operation_output(ndx_operation op, int index);
/* Outputs 0, 1 and 2 of op as a sparse tensor (sparse_concat, sparse_reorder, dense_to_sparse). */
NDX_API ndx_sparse_output ndx_operation_sparse_output(ndx_operation op);
/* The spec inferred for an output (dtype NDX_DTYPE_COUNT and rank NDX_UNKNOWN for a failed
 * handle). After folding it is exact. */
NDX_API ndx_spec ndx_output_spec(ndx_output out);
/* The value of an output known at build time (a const, or a folded node), or NULL. Owned by the
 * graph; read-only. A run that feeds the output, or what it is computed from, uses the fed
 * value instead (ndx_feed). */
NDX_API const ndx_tensor *ndx_output_constant(ndx_output out);

/* Nodes in build order (which is an order in which they can run): count, i-th, by full name. */
NDX_API int ndx_graph_node_count(const ndx_graph *g);
NDX_API ndx_operation ndx_graph_node(const ndx_graph *g, int i);
/* The node named `name` ("embed/GatherNd"), or a failed handle. */
NDX_API ndx_operation ndx_graph_find(const ndx_graph *g, const char *name);

/* ------------------------------------------------------------------------------------------ */
/* 3. Builders                                                                                  */
/* ------------------------------------------------------------------------------------------ */
/* Every builder is a macro over an `_at` function that also takes the caller's file and line.
 * Each takes a scope first, then inputs as ndx_outputs, then attributes; each returns the new
 * node's output (or, for several outputs, its operation). Inputs must come from the scope's
 * graph. A builder never fails silently: a failed handle always comes with the graph's first
 * error, set by this builder or an earlier one. */

/* Attributes of gather_nd (NULL: the defaults, batch_dims 0 and NDX_BAD_INDICES_ERROR). */
typedef struct ndx_gather_nd_attrs {
    int batch_dims;
    ndx_bad_indices bad_indices;
} ndx_gather_nd_attrs;

/* Attributes of the scatter family (NULL: NDX_BAD_INDICES_ERROR). */
typedef struct ndx_scatter_attrs {
    ndx_bad_indices bad_indices;
} ndx_scatter_attrs;

/* const: a copy of `value` (any dtype, strings included), owned by the graph. */
#define ndx_op_const(s, value) ndx_op_const_at(__FILE__, __LINE__, (s), (value))
NDX_API ndx_output ndx_op_const_at(const char *file, int line, ndx_scope s, const ndx_tensor *value);
/* Scalar constants of a numeric or bool dtype, from an integer or a double (converted as cast
 * does). */
#define ndx_op_const_int(s, dtype, v) ndx_op_const_int_at(__FILE__, __LINE__, (s), (dtype), (v))
NDX_API ndx_output ndx_op_const_int_at(const char *file, int line, ndx_scope s, ndx_dtype dtype,
                                       int64_t value);
#define ndx_op_const_float(s, dtype, v) ndx_op_const_float_at(__FILE__, __LINE__, (s), (dtype), (v))
NDX_API ndx_output ndx_op_const_float_at(const char *file, int line, ndx_scope s, ndx_dtype dtype,
                                         double value);

/* placeholder: an input that every run must feed, with the dtype and partial shape of `spec`
 * (a string placeholder may leave its width open: itemsize 0; each run's feed then gives it,
 * and may differ from run to run).
 *
 * Strings of different widths. TensorFlow's strings have no width, so where an op gives its
 * inputs one type — dynamic_stitch's data, a tensor_scatter's tensor and updates, sparse_concat's
 * values, sparse_to_dense's values and default_value — a graph takes strings of different
 * widths: the output's width is the widest (open when any of theirs is), and at run time the
 * narrower strings are widened, NUL-padded, into scratch from the session's allocator before the
 * op runs. An open width is resolved in each run: a BORROW or ALLOCATE fetch gets the width the
 * run produced, and an INTO fetch must have exactly that width. */
#define ndx_op_placeholder(s, spec) ndx_op_placeholder_at(__FILE__, __LINE__, (s), (spec))
NDX_API ndx_output ndx_op_placeholder_at(const char *file, int line, ndx_scope s,
                                         const ndx_spec *spec);

/* identity: its input, unchanged (no copy at run time). */
#define ndx_op_identity(s, x) ndx_op_identity_at(__FILE__, __LINE__, (s), (x))
NDX_API ndx_output ndx_op_identity_at(const char *file, int line, ndx_scope s, ndx_output x);

/* gather_nd (TensorFlow's GatherNd), as ndx_gather_nd. */
#define ndx_op_gather_nd(s, params, indices, attrs) \
    ndx_op_gather_nd_at(__FILE__, __LINE__, (s), (params), (indices), (attrs))
NDX_API ndx_output ndx_op_gather_nd_at(const char *file, int line, ndx_scope s, ndx_output params,
                                       ndx_output indices, const ndx_gather_nd_attrs *attrs);

/* ---- gather, one_hot, unique, setdiff1d, boolean_mask ---- */

/* Attributes of gather (NULL: the defaults, batch_dims 0 and NDX_BAD_INDICES_ERROR). */
typedef struct ndx_gather_attrs {
    int batch_dims; /* negative counts from the end of indices' dims */
    ndx_bad_indices bad_indices;
} ndx_gather_attrs;

/* gather (GatherV2, tf.gather), as ndx_gather: `axis` is a scalar int32 or int64 tensor, as in
 * TensorFlow (a constant gives the output's dims at build time; otherwise its rank only).
 * Gradient w.r.t. params: SLICES (section 7). */
#define ndx_op_gather(s, params, indices, axis, attrs) \
    ndx_op_gather_at(__FILE__, __LINE__, (s), (params), (indices), (axis), (attrs))
NDX_API ndx_output ndx_op_gather_at(const char *file, int line, ndx_scope s, ndx_output params,
                                    ndx_output indices, ndx_output axis,
                                    const ndx_gather_attrs *attrs);

/* one_hot (OneHot, tf.one_hot), as ndx_one_hot: `depth` is a scalar int32 or int64 tensor
 * (non-negative; a constant gives the new dim at build time), on_value and off_value scalars
 * of the output's dtype, axis -1 (last) or 0 .. rank(indices). Not differentiable (NONE, as in
 * TensorFlow). */
#define ndx_op_one_hot(s, indices, depth, on_value, off_value, axis) \
    ndx_op_one_hot_at(__FILE__, __LINE__, (s), (indices), (depth), (on_value), (off_value), (axis))
NDX_API ndx_output ndx_op_one_hot_at(const char *file, int line, ndx_scope s, ndx_output indices,
                                     ndx_output depth, ndx_output on_value, ndx_output off_value,
                                     int axis);

/* unique (Unique) and unique_with_counts (UniqueWithCounts), as ndx_unique with NDX_AXIS_NONE:
 * x a vector; outputs y, idx (of out_idx, int32 or int64) and, with with_counts, count, also
 * stored in outs[] when outs is not NULL (2 or 3 of them). No gradient (an error, as in
 * TensorFlow, which registers none). */
#define ndx_op_unique(s, x, out_idx, with_counts, outs) \
    ndx_op_unique_at(__FILE__, __LINE__, (s), (x), (out_idx), (with_counts), (outs))
NDX_API ndx_operation ndx_op_unique_at(const char *file, int line, ndx_scope s, ndx_output x,
                                       ndx_dtype out_idx, int with_counts, ndx_output *outs);

/* unique_v2 (UniqueV2) and, with with_counts, UniqueWithCountsV2: as ndx_unique along `axis`,
 * an int32 or int64 vector of no element (none: x a vector) or one (negative counts from the
 * end); outputs y, idx and, with with_counts, count, also stored in outs[] when outs is not
 * NULL (2 or 3 of them). No gradient. */
#define ndx_op_unique_v2(s, x, axis, out_idx, with_counts, outs) \
    ndx_op_unique_v2_at(__FILE__, __LINE__, (s), (x), (axis), (out_idx), (with_counts), (outs))
NDX_API ndx_operation ndx_op_unique_v2_at(const char *file, int line, ndx_scope s, ndx_output x,
                                          ndx_output axis, ndx_dtype out_idx, int with_counts,
                                          ndx_output *outs);

/* setdiff1d (ListDiff, tf.compat.v1.setdiff1d), as ndx_setdiff1d: x and y vectors of one dtype
 * (a real number type or strings; strings of different widths are widened to the wider);
 * outputs out and idx (of out_idx, int32 or int64), also stored in outs[0..2) when outs is not
 * NULL. No gradient (an error, as in TensorFlow, which registers none). */
#define ndx_op_setdiff1d(s, x, y, out_idx, outs) \
    ndx_op_setdiff1d_at(__FILE__, __LINE__, (s), (x), (y), (out_idx), (outs))
NDX_API ndx_operation ndx_op_setdiff1d_at(const char *file, int line, ndx_scope s, ndx_output x,
                                          ndx_output y, ndx_dtype out_idx, ndx_output *outs);

/* boolean_mask (BooleanMask: ndx's one node for TensorFlow's composition tf.boolean_mask), as
 * ndx_boolean_mask, axis 0 .. rank(tensor) - rank(mask). Gradient w.r.t. tensor: SLICES, the
 * rows of dy at the true positions of mask (what the composition's gather gives). */
#define ndx_op_boolean_mask(s, tensor, mask, axis) \
    ndx_op_boolean_mask_at(__FILE__, __LINE__, (s), (tensor), (mask), (axis))
NDX_API ndx_output ndx_op_boolean_mask_at(const char *file, int line, ndx_scope s,
                                          ndx_output tensor, ndx_output mask, int axis);

/* scatter_nd (ScatterNd), as ndx_scatter_nd; `shape` is a rank-1 int32 or int64 tensor, as in
 * TensorFlow (a constant gives the output's dims at build time). */
#define ndx_op_scatter_nd(s, indices, updates, shape, attrs) \
    ndx_op_scatter_nd_at(__FILE__, __LINE__, (s), (indices), (updates), (shape), (attrs))
NDX_API ndx_output ndx_op_scatter_nd_at(const char *file, int line, ndx_scope s,
                                        ndx_output indices, ndx_output updates, ndx_output shape,
                                        const ndx_scatter_attrs *attrs);

/* tensor_scatter_nd_{update,add,sub,min,max} (TensorScatterUpdate, ...), as
 * ndx_tensor_scatter_nd. At run time the update happens in place when `tensor` is an
 * intermediate result that no other node reads. */
#define ndx_op_tensor_scatter_nd(s, op, tensor, indices, updates, attrs) \
    ndx_op_tensor_scatter_nd_at(__FILE__, __LINE__, (s), (op), (tensor), (indices), (updates), (attrs))
NDX_API ndx_output ndx_op_tensor_scatter_nd_at(const char *file, int line, ndx_scope s,
                                               ndx_scatter_op op, ndx_output tensor,
                                               ndx_output indices, ndx_output updates,
                                               const ndx_scatter_attrs *attrs);
#define ndx_op_tensor_scatter_nd_update(s, t, i, u, a) \
    ndx_op_tensor_scatter_nd(s, NDX_SCATTER_UPDATE, t, i, u, a)
#define ndx_op_tensor_scatter_nd_add(s, t, i, u, a) ndx_op_tensor_scatter_nd(s, NDX_SCATTER_ADD, t, i, u, a)
#define ndx_op_tensor_scatter_nd_sub(s, t, i, u, a) ndx_op_tensor_scatter_nd(s, NDX_SCATTER_SUB, t, i, u, a)
#define ndx_op_tensor_scatter_nd_min(s, t, i, u, a) ndx_op_tensor_scatter_nd(s, NDX_SCATTER_MIN, t, i, u, a)
#define ndx_op_tensor_scatter_nd_max(s, t, i, u, a) ndx_op_tensor_scatter_nd(s, NDX_SCATTER_MAX, t, i, u, a)

/* Counts of variadic nodes: n of dynamic_stitch and sparse_concat and num_partitions of
 * dynamic_partition are from 1 to NDX_GRAPH_MAX_ARITY, the most that keeps every input and output
 * of a node countable by an int (sparse_concat takes 3 inputs per sparse input); TensorFlow's
 * limit is its int attribute. */
#define NDX_GRAPH_MAX_ARITY (0x7fffffff / 3)

/* dynamic_stitch and parallel_dynamic_stitch (DynamicStitch, ParallelDynamicStitch) over n
 * index tensors and n data tensors. Constant indices give the exact output rows. */
#define ndx_op_dynamic_stitch(s, n, indices, data) \
    ndx_op_dynamic_stitch_at(__FILE__, __LINE__, (s), 0, (n), (indices), (data))
#define ndx_op_parallel_dynamic_stitch(s, n, indices, data) \
    ndx_op_dynamic_stitch_at(__FILE__, __LINE__, (s), 1, (n), (indices), (data))
NDX_API ndx_output ndx_op_dynamic_stitch_at(const char *file, int line, ndx_scope s, int parallel,
                                            int n, const ndx_output *indices,
                                            const ndx_output *data);

/* dynamic_partition (DynamicPartition): num_partitions outputs, also stored in outs[] when outs
 * is not NULL (failed handles when the builder fails). Constant partitions give exact counts. */
#define ndx_op_dynamic_partition(s, data, partitions, num_partitions, outs)                       \
    ndx_op_dynamic_partition_at(__FILE__, __LINE__, (s), (data), (partitions), (num_partitions), \
                                (outs))
NDX_API ndx_operation ndx_op_dynamic_partition_at(const char *file, int line, ndx_scope s,
                                                  ndx_output data, ndx_output partitions,
                                                  int num_partitions, ndx_output *outs);

/* sparse_concat (SparseConcat), sparse_reorder (SparseReorder), sparse_to_dense (SparseToDense;
 * default_value NULL: zero, else a scalar output of the values' dtype) and dense_to_sparse. */
#define ndx_op_sparse_concat(s, axis, n, inputs, expand_nonconcat_dim) \
    ndx_op_sparse_concat_at(__FILE__, __LINE__, (s), (axis), (n), (inputs), (expand_nonconcat_dim))
NDX_API ndx_sparse_output ndx_op_sparse_concat_at(const char *file, int line, ndx_scope s,
                                                  int axis, int n, const ndx_sparse_output *inputs,
                                                  int expand_nonconcat_dim);
#define ndx_op_sparse_reorder(s, in) ndx_op_sparse_reorder_at(__FILE__, __LINE__, (s), (in))
NDX_API ndx_sparse_output ndx_op_sparse_reorder_at(const char *file, int line, ndx_scope s,
                                                   ndx_sparse_output in);
#define ndx_op_sparse_to_dense(s, sp, default_value) \
    ndx_op_sparse_to_dense_at(__FILE__, __LINE__, (s), (sp), (default_value))
NDX_API ndx_output ndx_op_sparse_to_dense_at(const char *file, int line, ndx_scope s,
                                             ndx_sparse_output sp, const ndx_output *default_value);
#define ndx_op_dense_to_sparse(s, x) ndx_op_dense_to_sparse_at(__FILE__, __LINE__, (s), (x))
NDX_API ndx_sparse_output ndx_op_dense_to_sparse_at(const char *file, int line, ndx_scope s,
                                                    ndx_output x);

/* Glue. Elementwise ops take two operands of one dtype whose shapes broadcast as NumPy's and
 * TensorFlow's do (aligned at the right; a dim of 1 stretches; beside an operand of unknown
 * rank the result's rank is unknown until the run). add, sub, mul: numeric dtypes (integers
 * wrap); floor_div, floor_mod: integers and floats, TensorFlow's FloorDiv / FloorMod (an
 * integer division by zero fails the run, unless the result is empty); equal, not_equal: any
 * dtype, bool result; div: floats and complex, TensorFlow's RealDiv (IEEE
 * division; there is no integer div); maximum, minimum: integers and floats, TensorFlow's
 * Maximum / Minimum (a NaN operand gives NaN); less, less_equal, greater, greater_equal:
 * integers and floats, TensorFlow's Less / LessEqual / Greater / GreaterEqual, bool result (a
 * NaN operand compares false); logical_and, logical_or: bool only (LogicalAnd / LogicalOr).
 * float16 and bfloat16 are computed in float and rounded to nearest even. */
typedef enum ndx_binary_kind {
    NDX_OP_ADD = 0,
    NDX_OP_SUB,
    NDX_OP_MUL,
    NDX_OP_FLOOR_DIV,
    NDX_OP_FLOOR_MOD,
    NDX_OP_EQUAL,
    NDX_OP_NOT_EQUAL,
    NDX_OP_DIV,
    NDX_OP_MAXIMUM,
    NDX_OP_MINIMUM,
    NDX_OP_LESS,
    NDX_OP_LESS_EQUAL,
    NDX_OP_GREATER,
    NDX_OP_GREATER_EQUAL,
    NDX_OP_LOGICAL_AND,
    NDX_OP_LOGICAL_OR
} ndx_binary_kind;
#define ndx_op_binary(s, kind, a, b) ndx_op_binary_at(__FILE__, __LINE__, (s), (kind), (a), (b))
NDX_API ndx_output ndx_op_binary_at(const char *file, int line, ndx_scope s, ndx_binary_kind kind,
                                    ndx_output a, ndx_output b);
#define ndx_op_add(s, a, b) ndx_op_binary(s, NDX_OP_ADD, a, b)
#define ndx_op_sub(s, a, b) ndx_op_binary(s, NDX_OP_SUB, a, b)
#define ndx_op_mul(s, a, b) ndx_op_binary(s, NDX_OP_MUL, a, b)
#define ndx_op_floor_div(s, a, b) ndx_op_binary(s, NDX_OP_FLOOR_DIV, a, b)
#define ndx_op_floor_mod(s, a, b) ndx_op_binary(s, NDX_OP_FLOOR_MOD, a, b)
#define ndx_op_equal(s, a, b) ndx_op_binary(s, NDX_OP_EQUAL, a, b)
#define ndx_op_not_equal(s, a, b) ndx_op_binary(s, NDX_OP_NOT_EQUAL, a, b)
#define ndx_op_div(s, a, b) ndx_op_binary(s, NDX_OP_DIV, a, b)
#define ndx_op_maximum(s, a, b) ndx_op_binary(s, NDX_OP_MAXIMUM, a, b)
#define ndx_op_minimum(s, a, b) ndx_op_binary(s, NDX_OP_MINIMUM, a, b)
#define ndx_op_less(s, a, b) ndx_op_binary(s, NDX_OP_LESS, a, b)
#define ndx_op_less_equal(s, a, b) ndx_op_binary(s, NDX_OP_LESS_EQUAL, a, b)
#define ndx_op_greater(s, a, b) ndx_op_binary(s, NDX_OP_GREATER, a, b)
#define ndx_op_greater_equal(s, a, b) ndx_op_binary(s, NDX_OP_GREATER_EQUAL, a, b)
#define ndx_op_logical_and(s, a, b) ndx_op_binary(s, NDX_OP_LOGICAL_AND, a, b)
#define ndx_op_logical_or(s, a, b) ndx_op_binary(s, NDX_OP_LOGICAL_OR, a, b)

/* neg (Neg): signed integers (wrapping), floats, complex. zeros_like, ones_like (ZerosLike,
 * OnesLike): x's dtype (any but strings; ones of bool are true) and shape; x's values are never
 * read, so they are constants at build time whenever x's shape is known. logical_not
 * (LogicalNot): bool. abs (Abs): signed integers (abs of the most negative wraps to itself, as
 * TensorFlow's) and floats; complex is refused (its magnitude is TensorFlow's ComplexAbs). square
 * (Square): every numeric dtype (integers wrap). sqrt (Sqrt): floats (a negative gives NaN) and
 * complex (the principal root). The output has x's dtype and shape. */
typedef enum ndx_unary_kind {
    NDX_OP_NEG = 0,
    NDX_OP_ZEROS_LIKE,
    NDX_OP_ONES_LIKE,
    NDX_OP_LOGICAL_NOT,
    NDX_OP_ABS,
    NDX_OP_SQUARE,
    NDX_OP_SQRT
} ndx_unary_kind;
#define ndx_op_unary(s, kind, x) ndx_op_unary_at(__FILE__, __LINE__, (s), (kind), (x))
NDX_API ndx_output ndx_op_unary_at(const char *file, int line, ndx_scope s, ndx_unary_kind kind,
                                   ndx_output x);
#define ndx_op_neg(s, x) ndx_op_unary(s, NDX_OP_NEG, x)
#define ndx_op_zeros_like(s, x) ndx_op_unary(s, NDX_OP_ZEROS_LIKE, x)
#define ndx_op_ones_like(s, x) ndx_op_unary(s, NDX_OP_ONES_LIKE, x)
#define ndx_op_logical_not(s, x) ndx_op_unary(s, NDX_OP_LOGICAL_NOT, x)
#define ndx_op_abs(s, x) ndx_op_unary(s, NDX_OP_ABS, x)
#define ndx_op_square(s, x) ndx_op_unary(s, NDX_OP_SQUARE, x)
#define ndx_op_sqrt(s, x) ndx_op_unary(s, NDX_OP_SQRT, x)

/* fill (Fill): a tensor of shape `dims` (an int32 or int64 vector, dims >= 0) whose every element
 * is the scalar `value` (any dtype). Exact dims at build time when dims is a constant. */
#define ndx_op_fill(s, dims, value) ndx_op_fill_at(__FILE__, __LINE__, (s), (dims), (value))
NDX_API ndx_output ndx_op_fill_at(const char *file, int line, ndx_scope s, ndx_output dims,
                                  ndx_output value);

/* reshape (Reshape): tensor's elements in row-major order, in shape `shape` (an int32 or int64
 * vector; at most one dim -1, the one the element count determines), as tf.reshape. */
#define ndx_op_reshape(s, tensor, shape) \
    ndx_op_reshape_at(__FILE__, __LINE__, (s), (tensor), (shape))
NDX_API ndx_output ndx_op_reshape_at(const char *file, int line, ndx_scope s, ndx_output tensor,
                                     ndx_output shape);

/* reduce_sum (Sum): input summed over `axes` (an int32 or int64 scalar or vector; negative axes
 * count from the end; an axis given twice is an error; no axes: input itself); the reduced dims
 * are dropped, or kept as 1 with keep_dims. Numeric dtypes: integers wrap; float16, bfloat16
 * and float32 are summed in float. Each element is summed in one fixed order (row-major), so
 * results are the same bits at any thread count. */
#define ndx_op_reduce_sum(s, input, axes, keep_dims) \
    ndx_op_reduce_sum_at(__FILE__, __LINE__, (s), (input), (axes), (keep_dims))
NDX_API ndx_output ndx_op_reduce_sum_at(const char *file, int line, ndx_scope s,
                                        ndx_output input, ndx_output axes, int keep_dims);

/* reduce_mean (Mean), reduce_max (Max), reduce_min (Min): input reduced over `axes` as
 * reduce_sum, with its checks, keep_dims and fixed order. mean: numeric dtypes; the sum divided
 * by the count (integers: summed without overflow as TensorFlow's, int8 .. int32 in int64,
 * uint8 .. uint32 in uint64, then divided truncating toward zero; float16 and bfloat16 in
 * float); an empty mean is NaN for floats, 0 for integers and complex. max, min: integers and
 * floats; a NaN among the reduced elements gives NaN; an empty reduction gives -inf / +inf for
 * floats, the lowest / highest value for integers (TensorFlow's identities). */
#define ndx_op_reduce_mean(s, input, axes, keep_dims) \
    ndx_op_reduce_mean_at(__FILE__, __LINE__, (s), (input), (axes), (keep_dims))
NDX_API ndx_output ndx_op_reduce_mean_at(const char *file, int line, ndx_scope s,
                                         ndx_output input, ndx_output axes, int keep_dims);
#define ndx_op_reduce_max(s, input, axes, keep_dims) \
    ndx_op_reduce_max_at(__FILE__, __LINE__, (s), (input), (axes), (keep_dims))
NDX_API ndx_output ndx_op_reduce_max_at(const char *file, int line, ndx_scope s,
                                        ndx_output input, ndx_output axes, int keep_dims);
#define ndx_op_reduce_min(s, input, axes, keep_dims) \
    ndx_op_reduce_min_at(__FILE__, __LINE__, (s), (input), (axes), (keep_dims))
NDX_API ndx_output ndx_op_reduce_min_at(const char *file, int line, ndx_scope s,
                                        ndx_output input, ndx_output axes, int keep_dims);

/* select (SelectV2, TensorFlow 2's tf.where(condition, x, y)): x where `condition` (bool) is
 * true, else y. x and y share one dtype (any; strings of different widths are widened to the
 * wider); condition, x and y broadcast together as the binary ops' operands do. */
#define ndx_op_select(s, condition, x, y) \
    ndx_op_select_at(__FILE__, __LINE__, (s), (condition), (x), (y))
NDX_API ndx_output ndx_op_select_at(const char *file, int line, ndx_scope s, ndx_output condition,
                                    ndx_output x, ndx_output y);

/* where (Where, tf.where(condition)): the coordinates of condition's true elements (bool) or
 * non-zero ones (numeric dtypes; NaN is non-zero), in row-major order, as int64 [N, rank];
 * N is known only at run time. */
#define ndx_op_where(s, condition) ndx_op_where_at(__FILE__, __LINE__, (s), (condition))
NDX_API ndx_output ndx_op_where_at(const char *file, int line, ndx_scope s, ndx_output condition);

/* Joining and cutting along axes; every dtype, strings too (strings of different widths are
 * widened to the widest, as dynamic_stitch's data are). Gradients: see section 7.
 *
 * concat (ConcatV2): the n values (n >= 1, one dtype, one rank >= 1, equal in every dim but
 * `axis`) joined along `axis`, an int32 or int64 scalar (-rank <= axis < rank), as tf.concat.
 * Exact dims at build time when axis is a constant. */
#define ndx_op_concat(s, n, values, axis) \
    ndx_op_concat_at(__FILE__, __LINE__, (s), (n), (values), (axis))
NDX_API ndx_output ndx_op_concat_at(const char *file, int line, ndx_scope s, int n,
                                    const ndx_output *values, ndx_output axis);

/* stack (Pack): the n values (n >= 1, one dtype and shape) stacked along a new dim of n at
 * `axis` (-(rank + 1) <= axis <= rank, checked when the rank is known), as tf.stack. */
#define ndx_op_stack(s, n, values, axis) \
    ndx_op_stack_at(__FILE__, __LINE__, (s), (n), (values), (axis))
NDX_API ndx_output ndx_op_stack_at(const char *file, int line, ndx_scope s, int n,
                                   const ndx_output *values, int axis);

/* slice (Slice): the block of `input` that starts at `begin` and has `size` (vectors of one
 * dtype, int32 or int64, of input's rank); 0 <= begin[i] <= dim i, and size[i] in
 * [0, dim i - begin[i]] or -1 for "to the end", as tf.slice. */
#define ndx_op_slice(s, input, begin, size) \
    ndx_op_slice_at(__FILE__, __LINE__, (s), (input), (begin), (size))
NDX_API ndx_output ndx_op_slice_at(const char *file, int line, ndx_scope s, ndx_output input,
                                   ndx_output begin, ndx_output size);

/* expand_dims (ExpandDims): input with a dim of 1 inserted at `axis` (an int32 or int64 scalar,
 * -rank - 1 <= axis <= rank), as tf.expand_dims. */
#define ndx_op_expand_dims(s, input, axis) \
    ndx_op_expand_dims_at(__FILE__, __LINE__, (s), (input), (axis))
NDX_API ndx_output ndx_op_expand_dims_at(const char *file, int line, ndx_scope s,
                                         ndx_output input, ndx_output axis);

/* squeeze (Squeeze): input without the dims named by axes[0 .. num_axes) (each in
 * [-rank, rank), and each such dim must be 1), or, with num_axes 0, without every dim of 1, as
 * tf.squeeze. The text form writes the attribute squeeze_dims as a list: squeeze_dims=[0, -1].
 * With num_axes 0 and a dim unknown at build time, the output's rank is unknown until the run. */
#define ndx_op_squeeze(s, input, num_axes, axes) \
    ndx_op_squeeze_at(__FILE__, __LINE__, (s), (input), (num_axes), (axes))
NDX_API ndx_output ndx_op_squeeze_at(const char *file, int line, ndx_scope s, ndx_output input,
                                     int num_axes, const int *axes);

/* cast (Cast) to `dtype`: any dtype but strings to any dtype but strings. Float to integer
 * truncates toward zero; NaN gives 0 and values out of range saturate (defined, unlike C). */
#define ndx_op_cast(s, x, dtype) ndx_op_cast_at(__FILE__, __LINE__, (s), (x), (dtype))
NDX_API ndx_output ndx_op_cast_at(const char *file, int line, ndx_scope s, ndx_output x,
                                  ndx_dtype dtype);

/* range (Range): three scalars of one dtype (int32, int64, float32, float64), as tf.range. */
#define ndx_op_range(s, start, limit, delta) \
    ndx_op_range_at(__FILE__, __LINE__, (s), (start), (limit), (delta))
NDX_API ndx_output ndx_op_range_at(const char *file, int line, ndx_scope s, ndx_output start,
                                   ndx_output limit, ndx_output delta);

/* size (Size) and shape (Shape) of x, as a scalar / a vector of dtype int32 or int64. Known at
 * build time whenever x's shape is. */
#define ndx_op_size(s, x, dtype) ndx_op_size_at(__FILE__, __LINE__, (s), (x), (dtype))
NDX_API ndx_output ndx_op_size_at(const char *file, int line, ndx_scope s, ndx_output x,
                                  ndx_dtype dtype);
#define ndx_op_shape(s, x, dtype) ndx_op_shape_at(__FILE__, __LINE__, (s), (x), (dtype))
NDX_API ndx_output ndx_op_shape_at(const char *file, int line, ndx_scope s, ndx_output x,
                                   ndx_dtype dtype);

/* broadcast_gradient_args (BroadcastGradientArgs), as TensorFlow's: s0 and s1 are the shapes of
 * a binary op's operands (int32 or int64 vectors of one dtype); output 0 (r0) and output 1 (r1),
 * vectors of that dtype, are the axes of the broadcast output along which operand 0 and operand
 * 1 were repeated (increasing; an axis where both dims are 1 is in both; none when s0 equals
 * s1), so that d x_i = reshape(reduce_sum(dy, r_i), s_i). Shapes that do not broadcast are a
 * run-time error "broadcast_gradient_args: Incompatible shapes: [2, 3] vs. [4]". The gradients of
 * the binary ops use it when the build cannot tell which axes an operand was broadcast along.
 * The outputs are also stored in outs[0..1] when outs is not NULL. */
#define ndx_op_broadcast_gradient_args(s, s0, s1, outs) \
    ndx_op_broadcast_gradient_args_at(__FILE__, __LINE__, (s), (s0), (s1), (outs))
NDX_API ndx_operation ndx_op_broadcast_gradient_args_at(const char *file, int line, ndx_scope s,
                                                        ndx_output s0, ndx_output s1,
                                                        ndx_output *outs);

/* The embedding bag (ndx's own kind "EmbeddingBag"), as ndx_embedding_bag: params, ids, bags
 * (segment ids, or offsets when `form` is NDX_BAGS_OFFSETS), weights (params' dtype, one per
 * id, or an empty vector [0] for none), max_norm (a float scalar, negative for none) and
 * num_bags (an int32 or int64 scalar: the rows of a segment ids' output, negative for last
 * id + 1) are all inputs; the combiner (NDX_SEGMENT_SUM, _MEAN or _SQRT_N) and the form are
 * attributes (text form: combiner=0|4|5, the ndx_segment_op's value, and
 * bag_offsets=true|false). Its gradient with respect to params is SLICES of the rows the ids
 * touch (values from an EmbeddingBagGrad node); the weights get a dense one (that node's second
 * output), the other inputs none. */
#define ndx_op_embedding_bag(s, params, ids, bags, weights, max_norm, num_bags, combiner, form) \
    ndx_op_embedding_bag_at(__FILE__, __LINE__, (s), (params), (ids), (bags), (weights),         \
                            (max_norm), (num_bags), (combiner), (form))
NDX_API ndx_output ndx_op_embedding_bag_at(const char *file, int line, ndx_scope s,
                                           ndx_output params, ndx_output ids, ndx_output bags,
                                           ndx_output weights, ndx_output max_norm,
                                           ndx_output num_bags, ndx_segment_op combiner,
                                           ndx_bag_form form);

/* ---- segment reductions ---- */

/* unsorted_segment_<op> (UnsortedSegmentSum, ...Prod, ...Min, ...Max, and ndx's own
 * UnsortedSegmentMean and UnsortedSegmentSqrtN, which TensorFlow composes in Python), as
 * ndx_unsorted_segment_reduce: num_segments is a non-negative int32 or int64 scalar tensor, as
 * in TensorFlow (a constant gives the output's rows at build time). Gradient w.r.t. data:
 * DENSE (section 7). */
#define ndx_op_unsorted_segment_reduce(s, op, data, segment_ids, num_segments)                   \
    ndx_op_unsorted_segment_reduce_at(__FILE__, __LINE__, (s), (op), (data), (segment_ids),      \
                                      (num_segments))
NDX_API ndx_output ndx_op_unsorted_segment_reduce_at(const char *file, int line, ndx_scope s,
                                                     ndx_segment_op op, ndx_output data,
                                                     ndx_output segment_ids,
                                                     ndx_output num_segments);

/* segment_<op> (SegmentSum, ...Prod, ...Min, ...Max, ...Mean; not SQRT_N, which TensorFlow
 * lacks), as ndx_segment_reduce: sorted ids, last id + 1 rows. Gradient w.r.t. data: DENSE. */
#define ndx_op_segment_reduce(s, op, data, segment_ids) \
    ndx_op_segment_reduce_at(__FILE__, __LINE__, (s), (op), (data), (segment_ids))
NDX_API ndx_output ndx_op_segment_reduce_at(const char *file, int line, ndx_scope s,
                                            ndx_segment_op op, ndx_output data,
                                            ndx_output segment_ids);

/* sparse_segment_<op> (SparseSegmentSum, ...Mean, ...SqrtN: op NDX_SEGMENT_SUM, _MEAN or
 * _SQRT_N), as ndx_sparse_segment_reduce with NDX_SEGMENTS_FROM_IDS; the _with_num_segments
 * builder makes SparseSegmentSumWithNumSegments etc., num_segments a non-negative int32 or
 * int64 scalar tensor. Gradient w.r.t. data: SLICES of the rows `indices` reads. */
#define ndx_op_sparse_segment_reduce(s, op, data, indices, segment_ids) \
    ndx_op_sparse_segment_reduce_at(__FILE__, __LINE__, (s), (op), (data), (indices), (segment_ids))
NDX_API ndx_output ndx_op_sparse_segment_reduce_at(const char *file, int line, ndx_scope s,
                                                   ndx_segment_op op, ndx_output data,
                                                   ndx_output indices, ndx_output segment_ids);
#define ndx_op_sparse_segment_reduce_with_num_segments(s, op, data, indices, segment_ids, n)     \
    ndx_op_sparse_segment_reduce_with_num_segments_at(__FILE__, __LINE__, (s), (op), (data),     \
                                                      (indices), (segment_ids), (n))
NDX_API ndx_output ndx_op_sparse_segment_reduce_with_num_segments_at(
    const char *file, int line, ndx_scope s, ndx_segment_op op, ndx_output data,
    ndx_output indices, ndx_output segment_ids, ndx_output num_segments);

/* ---- bincount ---- */

/* Bincount (tf.math.bincount's old kernel), as ndx_bincount with no flags: arr int32 of any rank
 * (flattened), size a non-negative int32 scalar tensor (a constant gives the output's length at
 * build time), weights int32, int64, float32 or float64 of arr's shape or of 0 elements (then
 * counts, in weights' dtype); output [size]. No gradient. */
#define ndx_op_bincount(s, arr, size, weights) \
    ndx_op_bincount_at(__FILE__, __LINE__, (s), (arr), (size), (weights))
NDX_API ndx_output ndx_op_bincount_at(const char *file, int line, ndx_scope s, ndx_output arr,
                                      ndx_output size, ndx_output weights);

/* DenseBincount (what tf.math.bincount builds), as ndx_bincount with NDX_BINCOUNT_DENSE: input
 * int32 or int64 of rank <= 2 (rank 2 counts each row: output [rows, size]), size a scalar of
 * input's dtype, weights as Bincount's; binary_output (the text form's attribute
 * binary_output=true|false) gives 1 where a value occurs, else 0. No gradient. */
#define ndx_op_dense_bincount(s, input, size, weights, binary_output)                            \
    ndx_op_dense_bincount_at(__FILE__, __LINE__, (s), (input), (size), (weights), (binary_output))
NDX_API ndx_output ndx_op_dense_bincount_at(const char *file, int line, ndx_scope s,
                                            ndx_output input, ndx_output size, ndx_output weights,
                                            int binary_output);

/* SparseReduceSum and SparseReduceMax (tf.sparse.reduce_sum / reduce_max), as
 * ndx_sparse_reduce: sp reduced over reduction_axes (an int32 or int64 scalar or vector), keep_dims
 * the text form's attribute keep_dims=true|false; a dense output. The _sparse builder makes
 * SparseReduceSumSparse / SparseReduceMaxSparse (output_is_sparse=True), a sparse output. Their
 * gradient: SparseReduceSum's values get dy at each entry's output element (TensorFlow's
 * _SparseReduceSumGrad; axes and dims may be known only at run time); the max and the sparse
 * forms have none (an error, as in TensorFlow). */
#define ndx_op_sparse_reduce(s, op, sp, reduction_axes, keep_dims)                                \
    ndx_op_sparse_reduce_at(__FILE__, __LINE__, (s), (op), (sp), (reduction_axes), (keep_dims))
NDX_API ndx_output ndx_op_sparse_reduce_at(const char *file, int line, ndx_scope s,
                                           ndx_sparse_reduce_op op, ndx_sparse_output sp,
                                           ndx_output reduction_axes, int keep_dims);
#define ndx_op_sparse_reduce_sparse(s, op, sp, reduction_axes, keep_dims)                         \
    ndx_op_sparse_reduce_sparse_at(__FILE__, __LINE__, (s), (op), (sp), (reduction_axes),         \
                                   (keep_dims))
NDX_API ndx_sparse_output ndx_op_sparse_reduce_sparse_at(const char *file, int line, ndx_scope s,
                                                         ndx_sparse_reduce_op op,
                                                         ndx_sparse_output sp,
                                                         ndx_output reduction_axes,
                                                         int keep_dims);
/* SparseSoftmax (tf.sparse.softmax), as ndx_sparse_softmax: the result's values (its indices
 * and dense_shape are sp's). Gradient: TensorFlow's _SparseSoftmaxGrad, (g - row sum of y * g)
 * * y for the values. */
#define ndx_op_sparse_softmax(s, sp) ndx_op_sparse_softmax_at(__FILE__, __LINE__, (s), (sp))
NDX_API ndx_output ndx_op_sparse_softmax_at(const char *file, int line, ndx_scope s,
                                            ndx_sparse_output sp);

/* Any node but Const, Placeholder and Variable (which have their own builders) from its
 * TensorFlow type name ("GatherNd", as in the text form), its inputs in the order the text form
 * lists them (DynamicStitch: every indices, then every data; SparseConcat: every indices, then
 * every values, then every dense_shape) and its attributes named as in the text form (section
 * 6), each an integer: batch_dims, axis, num_partitions; bools (expand_nonconcat_dim,
 * keep_dims, update_slots, sum_duplicates, binary_output) 0 or 1; dtypes (to, out_type) an
 * ndx_dtype; bad_indices an ndx_bad_indices; squeeze_dims (Squeeze) a set of axes as a bit mask, bit a
 * for an axis a >= 0 and bit 15 - a for a < 0 ({0, -1}: 1 | 1 << 16); ConcatV2's inputs are its values,
 * then the axis. Attributes not given take the text form's defaults. TensorFlow's
 * TF_NewOperation and TF_FinishOperation in one call, for language bindings: an unknown type,
 * a wrong count of inputs, an unknown, repeated, missing or out-of-range attribute is a build
 * error like any builder's (the graph's first error, at file:line), and the node is then a
 * failed handle. It builds exactly the node the text form's line would (so the typed builders'
 * extras are not made: a sparse apply's indices must already be a vector). */
typedef struct ndx_attr {
    const char *name; /* "batch_dims" */
    int64_t value;
} ndx_attr;
#define ndx_op_by_type(s, type, num_inputs, inputs, num_attrs, attrs) \
    ndx_op_by_type_at(__FILE__, __LINE__, (s), (type), (num_inputs), (inputs), (num_attrs), (attrs))
NDX_API ndx_operation ndx_op_by_type_at(const char *file, int line, ndx_scope s, const char *type,
                                        int num_inputs, const ndx_output *inputs, int num_attrs,
                                        const ndx_attr *attrs);

/* The registry of node kinds (TensorFlow's OpDef list, as TF_GetAllOpList gives it): what each
 * kind ndx_op_by_type and the text form know takes, read from the graph layer's own table, so
 * that a language binding or a command can build any kind without code of its own per kind.
 * Kinds are numbered 0 .. ndx_kind_count() - 1 (the order may change between versions: look a
 * kind up by its type name). Every string points at static storage. */

/* What an attribute's value is (ndx_attr's int64 value in ndx_op_by_type). */
typedef enum ndx_kind_attr_type {
    NDX_KIND_ATTR_INT = 0, /* an integer in [lo, hi] */
    NDX_KIND_ATTR_BOOL,    /* 0 or 1; the text form's false / true */
    NDX_KIND_ATTR_POLICY,  /* an ndx_bad_indices; the text form's error / ignore, or `alias` */
    NDX_KIND_ATTR_DTYPE,   /* an ndx_dtype; the text form's dtype name */
    NDX_KIND_ATTR_AXES,    /* a set of axes as ndx_op_by_type's bit mask; the text form's [a, ...] */
    NDX_KIND_ATTR_VALUE    /* a Const's value: not an ndx_attr (ndx_op_const builds it) */
} ndx_kind_attr_type;

/* One attribute of a kind. */
typedef struct ndx_kind_attr {
    const char *name;        /* as in the text form and ndx_attr: "batch_dims" */
    ndx_kind_attr_type type;
    int64_t def;             /* the value when not given (0 for VALUE) */
    int64_t lo, hi;          /* the values ndx_op_by_type accepts (INT; BOOL 0..1; POLICY 0..1;
                                DTYPE 0 .. NDX_DTYPE_COUNT - 1; AXES 0 .. UINT32_MAX) */
    int required;            /* 1: it has no default, it must be given */
    int always_written;      /* 1: the text form writes it even when it has its default */
    const char *alias;       /* POLICY: the op's own word for ignore ("zero" for GatherNd, "skip"
                                for the scatters), which the text form reads as ignore; else NULL */
} ndx_kind_attr;

/* The most attributes, and input names, a kind has (room in ndx_kind). */
#define NDX_KIND_MAX_ATTRS 8
#define NDX_KIND_MAX_INPUT_NAMES 8

/* Flags of a kind. */
enum {
    NDX_KIND_SPARSE_OUTPUT = 1, /* outputs 0..2 are a sparse tensor (ndx_operation_sparse_output) */
    NDX_KIND_STATEFUL = 2,      /* a Variable, or reads one: never folded */
    NDX_KIND_MUTATES = 4,       /* updates variables in place (its leading inputs are Variable
                                   nodes); no outputs: run it as a target */
    NDX_KIND_OWN_BUILDER = 8    /* Const, Placeholder, Variable: ndx_op_by_type refuses it */
};

/* What a kind takes and gives. Inputs, in ndx_op_by_type's order: when group is 0, between
 * min_inputs and max_inputs of them, input i named input_names[i]; when group > 0, group * n of
 * them for any n >= 1 (input_names[k] for the k-th run of n, "indices[2]", or with grouped_parts
 * the parts of n tuples, "inputs[1].values"), then `trailing` more (input_names[group + j],
 * ConcatV2's axis); min_inputs is then group + trailing and max_inputs -1 (no fixed bound but
 * NDX_GRAPH_MAX_ARITY). */
typedef struct ndx_kind {
    const char *type;            /* TensorFlow's op type, the text form's name: "GatherNd" */
    int min_inputs, max_inputs;
    int group, grouped_parts, trailing;
    int num_input_names;
    const char *const *input_names;
    int num_outputs;             /* a count; -1: outputs_per_count times the value of the
                                    attribute outputs_attr */
    const char *outputs_attr;    /* "num_partitions" when num_outputs is -1, else NULL */
    int outputs_per_count;       /* when num_outputs is -1: 1, or 3 for SparseSplit (each piece's
                                    indices, values and dense_shape); else 0 */
    unsigned flags;              /* NDX_KIND_SPARSE_OUTPUT, NDX_KIND_STATEFUL, ... */
    int num_variables;           /* NDX_KIND_MUTATES (and ReadVariableOp, ResourceGather): its
                                    leading inputs that are Variable nodes */
    int num_attrs;
    ndx_kind_attr attrs[NDX_KIND_MAX_ATTRS]; /* in the text form's order */
} ndx_kind;

/* How many kinds there are. */
NDX_API int ndx_kind_count(void);
/* Fills *info with kind i (0 <= i < ndx_kind_count()); NDX_E_INVALID_ARGUMENT otherwise. */
NDX_API ndx_status ndx_kind_info(int i, ndx_kind *info, ndx_error *err);
/* The number of the kind whose TensorFlow type name is `type` ("GatherNd"), or -1. */
NDX_API int ndx_kind_find(const char *type);

/* sparse_dense_matmul (SparseTensorDenseMatMul, tf.sparse.sparse_dense_matmul), as
 * ndx_sparse_dense_matmul: the rank-2 sparse tensor a (its adjoint when adjoint_a) times the
 * dense matrix b (its adjoint when adjoint_b), a dense matrix of a's values' dtype. With a's
 * dense_shape constant the output's dims are known at build time. Gradient w.r.t. a's values
 * and b (section 7). */
#define ndx_op_sparse_dense_matmul(s, a, b, adjoint_a, adjoint_b) \
    ndx_op_sparse_dense_matmul_at(__FILE__, __LINE__, (s), (a), (b), (adjoint_a), (adjoint_b))
NDX_API ndx_output ndx_op_sparse_dense_matmul_at(const char *file, int line, ndx_scope s,
                                                 ndx_sparse_output a, ndx_output b,
                                                 int adjoint_a, int adjoint_b);

/* sparse_fill_empty_rows (SparseFillEmptyRows, ndx.h's sparse_fill_empty_rows): TensorFlow's
 * four outputs, output_indices, output_values, empty_row_indicator and reverse_index_map
 * (outputs 0 to 3 of the node). *out (when not NULL) receives the result as a sparse tensor:
 * outputs 0 and 1 with the input's dense_shape (failed handles when the builder fails);
 * empty_row_indicator and reverse_index_map likewise when not NULL. default_value is a scalar of
 * the values' dtype. Its gradient is sparse_fill_empty_rows_grad's (section 7). */
#define ndx_op_sparse_fill_empty_rows(s, sp, default_value, out, empty_row_indicator,           \
                                      reverse_index_map)                                       \
    ndx_op_sparse_fill_empty_rows_at(__FILE__, __LINE__, (s), (sp), (default_value), (out),     \
                                     (empty_row_indicator), (reverse_index_map))
NDX_API ndx_operation ndx_op_sparse_fill_empty_rows_at(const char *file, int line, ndx_scope s,
                                                       ndx_sparse_output sp,
                                                       ndx_output default_value,
                                                       ndx_sparse_output *out,
                                                       ndx_output *empty_row_indicator,
                                                       ndx_output *reverse_index_map);
/* sparse_fill_empty_rows_grad (SparseFillEmptyRowsGrad): d_values (output 0) and
 * d_default_value (output 1, a scalar) from reverse_index_map and the output values' gradient,
 * each stored when its pointer is not NULL. No gradient of its own, as in TensorFlow. */
#define ndx_op_sparse_fill_empty_rows_grad(s, reverse_index_map, grad_values, d_values,         \
                                           d_default_value)                                    \
    ndx_op_sparse_fill_empty_rows_grad_at(__FILE__, __LINE__, (s), (reverse_index_map),         \
                                          (grad_values), (d_values), (d_default_value))
NDX_API ndx_operation ndx_op_sparse_fill_empty_rows_grad_at(const char *file, int line,
                                                            ndx_scope s,
                                                            ndx_output reverse_index_map,
                                                            ndx_output grad_values,
                                                            ndx_output *d_values,
                                                            ndx_output *d_default_value);

/* dense_count_sparse_output (DenseCountSparseOutput) and sparse_count_sparse_output
 * (SparseCountSparseOutput), ndx.h's count ops of tf.sparse.bincount: a sparse result. weights is
 * a tensor of values' shape or of 0 elements (its dtype is the result's); attrs NULL: minlength
 * and maxlength -1, binary_output 0. No gradient, as in TensorFlow. */
#define ndx_op_dense_count_sparse_output(s, values, weights, attrs) \
    ndx_op_dense_count_sparse_output_at(__FILE__, __LINE__, (s), (values), (weights), (attrs))
NDX_API ndx_sparse_output ndx_op_dense_count_sparse_output_at(const char *file, int line,
                                                              ndx_scope s, ndx_output values,
                                                              ndx_output weights,
                                                              const ndx_count_attrs *attrs);
#define ndx_op_sparse_count_sparse_output(s, sp, weights, attrs) \
    ndx_op_sparse_count_sparse_output_at(__FILE__, __LINE__, (s), (sp), (weights), (attrs))
NDX_API ndx_sparse_output ndx_op_sparse_count_sparse_output_at(const char *file, int line,
                                                               ndx_scope s, ndx_sparse_output sp,
                                                               ndx_output weights,
                                                               const ndx_count_attrs *attrs);
/* Sparse arithmetic (ndx.h 5d1). sparse_add (SparseAdd): a + b of two sparse tensors, sums whose
 * magnitude is below `threshold` (a scalar of the values' real dtype; TensorFlow's thresh input)
 * dropped. sparse_maximum / sparse_minimum (SparseSparseMaximum / Minimum): the union of the
 * entries, an absent one counting as zero; no gradient (TensorFlow has none). sparse_dense_add
 * (SparseTensorDenseAdd): a dense output, b with a's entries added (b of a's dense shape).
 * sparse_add_grad (SparseAddGrad): sparse_add's gradient op; outputs 0 and 1 are a_val_grad and
 * b_val_grad (ndx_operation_output); no gradient of its own, as in TensorFlow. */
#define ndx_op_sparse_add(s, a, b, threshold) \
    ndx_op_sparse_add_at(__FILE__, __LINE__, (s), (a), (b), (threshold))
NDX_API ndx_sparse_output ndx_op_sparse_add_at(const char *file, int line, ndx_scope s,
                                               ndx_sparse_output a, ndx_sparse_output b,
                                               ndx_output threshold);
#define ndx_op_sparse_maximum(s, a, b) ndx_op_sparse_maximum_at(__FILE__, __LINE__, (s), (a), (b))
NDX_API ndx_sparse_output ndx_op_sparse_maximum_at(const char *file, int line, ndx_scope s,
                                                   ndx_sparse_output a, ndx_sparse_output b);
#define ndx_op_sparse_minimum(s, a, b) ndx_op_sparse_minimum_at(__FILE__, __LINE__, (s), (a), (b))
NDX_API ndx_sparse_output ndx_op_sparse_minimum_at(const char *file, int line, ndx_scope s,
                                                   ndx_sparse_output a, ndx_sparse_output b);
#define ndx_op_sparse_dense_add(s, a, b) \
    ndx_op_sparse_dense_add_at(__FILE__, __LINE__, (s), (a), (b))
NDX_API ndx_output ndx_op_sparse_dense_add_at(const char *file, int line, ndx_scope s,
                                              ndx_sparse_output a, ndx_output b);
#define ndx_op_sparse_add_grad(s, backprop_val_grad, a_indices, b_indices, sum_indices)          \
    ndx_op_sparse_add_grad_at(__FILE__, __LINE__, (s), (backprop_val_grad), (a_indices),         \
                              (b_indices), (sum_indices))
NDX_API ndx_operation ndx_op_sparse_add_grad_at(const char *file, int line, ndx_scope s,
                                                ndx_output backprop_val_grad,
                                                ndx_output a_indices, ndx_output b_indices,
                                                ndx_output sum_indices);
/* sparse_dense_cwise (SparseDenseCwiseMul / Div / Add by op): the values of sp op dense
 * broadcast to sp's dense shape, one per entry (sp's indices and dense_shape go with them).
 * Mul and Div have TensorFlow's gradient; Add has none, as in TensorFlow. */
#define ndx_op_sparse_dense_cwise(s, op, sp, dense) \
    ndx_op_sparse_dense_cwise_at(__FILE__, __LINE__, (s), (op), (sp), (dense))
NDX_API ndx_output ndx_op_sparse_dense_cwise_at(const char *file, int line, ndx_scope s,
                                                ndx_sparse_dense_op op, ndx_sparse_output sp,
                                                ndx_output dense);
/* sparse_slice (SparseSlice): the entries of sp inside [start, start + size) (int64 vectors, one
 * element per dim), as ndx_sparse_slice; inputs indices, values, shape, start, size. Its
 * values' gradient is SparseSliceGrad's. */
#define ndx_op_sparse_slice(s, sp, start, size) \
    ndx_op_sparse_slice_at(__FILE__, __LINE__, (s), (sp), (start), (size))
NDX_API ndx_sparse_output ndx_op_sparse_slice_at(const char *file, int line, ndx_scope s,
                                                 ndx_sparse_output sp, ndx_output start,
                                                 ndx_output size);
/* sparse_slice_grad (SparseSliceGrad): ndx_sparse_slice_grad's [N] gradient of a slice's input
 * values from its output values' gradient. No gradient of its own. */
#define ndx_op_sparse_slice_grad(s, backprop_val_grad, input_indices, input_start, output_indices) \
    ndx_op_sparse_slice_grad_at(__FILE__, __LINE__, (s), (backprop_val_grad), (input_indices),      \
                                (input_start), (output_indices))
NDX_API ndx_output ndx_op_sparse_slice_grad_at(const char *file, int line, ndx_scope s,
                                               ndx_output backprop_val_grad,
                                               ndx_output input_indices, ndx_output input_start,
                                               ndx_output output_indices);
/* sparse_split (SparseSplit, attribute num_split): split_dim a scalar (int64 in TensorFlow; any
 * index dtype), checked at run time when not a constant; 3 * num_split outputs in TensorFlow's
 * order (every piece's indices, then every piece's values, then every dense_shape), also stored
 * as num_split sparse outputs in outs[] when outs is not NULL. No gradient (as in TensorFlow). */
#define ndx_op_sparse_split(s, split_dim, num_split, sp, outs) \
    ndx_op_sparse_split_at(__FILE__, __LINE__, (s), (split_dim), (num_split), (sp), (outs))
NDX_API ndx_operation ndx_op_sparse_split_at(const char *file, int line, ndx_scope s,
                                             ndx_output split_dim, int num_split,
                                             ndx_sparse_output sp, ndx_sparse_output *outs);
/* sparse_reshape (SparseReshape): outputs 0, output_indices int64 [N, R'], and 1, output_shape
 * int64 [R'], as ndx_sparse_reshape; the values are not an input (the reshaped tensor takes the
 * input's values as they are). No gradient: every input and output is integer. */
#define ndx_op_sparse_reshape(s, input_indices, input_shape, new_shape) \
    ndx_op_sparse_reshape_at(__FILE__, __LINE__, (s), (input_indices), (input_shape), (new_shape))
NDX_API ndx_operation ndx_op_sparse_reshape_at(const char *file, int line, ndx_scope s,
                                               ndx_output input_indices, ndx_output input_shape,
                                               ndx_output new_shape);
/* sparse_transpose (SparseTranspose, ndx's own type: TensorFlow builds tf.sparse.transpose from
 * a Gather and a SparseReorder): ndx_sparse_transpose with perm an index vector of sp's rank.
 * Its values' gradient goes back through the permutation it applied (as sparse_reorder's). */
#define ndx_op_sparse_transpose(s, sp, perm) \
    ndx_op_sparse_transpose_at(__FILE__, __LINE__, (s), (sp), (perm))
NDX_API ndx_sparse_output ndx_op_sparse_transpose_at(const char *file, int line, ndx_scope s,
                                                     ndx_sparse_output sp, ndx_output perm);

/* ------------------------------------------------------------------------------------------ */
/* 4. Inspecting a node (TensorFlow's node())                                                   */
/* ------------------------------------------------------------------------------------------ */

/* What ndx_node_info tells of one node. */
typedef struct ndx_node {
    const char *name;          /* "embed/GatherNd" */
    const char *type;          /* TensorFlow's op type: "GatherNd", "DynamicPartition", "Const" */
    const char *file;          /* the builder call's __FILE__ and __LINE__ */
    int line;
    int num_inputs;
    const ndx_output *inputs;  /* in the builder's argument order */
    int num_outputs;
    const ndx_spec *outputs;   /* each output's inferred dtype and partial shape */
} ndx_node;

/* Fills *node (pointers owned by the graph, valid while it lives); NDX_E_INVALID_ARGUMENT for a
 * failed handle. */
NDX_API ndx_status ndx_node_info(ndx_operation op, ndx_node *node, ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5. Sessions                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* A session, opaque: a finished graph made runnable (ndx_session_new). */
typedef struct ndx_session ndx_session;

/* A session's options (NULL or zeroed: the defaults). Each node's own bad-index policy is an
 * attribute of the node. */
typedef struct ndx_session_options {
    int num_threads;                /* as ndx_options: 0 every core, n at most n */
    size_t max_memory;              /* most bytes one run may hold at once (intermediate
                                       results, scratch, borrowed fetches); 0: no limit */
    const ndx_allocator *allocator; /* where the pool gets memory; NULL: ndx's own */
} ndx_session_options;

/* A session over a finished graph (ndx_graph_finish): NULL with err set when the graph is not
 * finished, has an error, or memory runs out. The graph must outlive the session. */
NDX_API ndx_session *ndx_session_new(const ndx_graph *g, const ndx_session_options *opt,
                                     ndx_error *err);
/* Frees the session, its pool and its borrowed results. */
NDX_API void ndx_session_free(ndx_session *s);

/* A value given to a run for an output: a placeholder (which must be fed) or any other output,
 * a Const, a folded node or a node computed at run time. As in TensorFlow, a fed output replaces
 * its producer for that run: the nodes it depends on need not run, and every node computed from
 * it, folded ones included, sees the fed value (a run of c = Const(2), y = c * 3 with c fed 5
 * gives y = 15). The data is read during the run only. It must fit the output's spec, checked
 * before any node runs (the error names the node): a Const's and a folded node's shapes are
 * exact, so their feeds must have exactly that shape and dtype. Specs inferred from a constant's
 * value (dynamic_partition's counts from constant partitions, dynamic_stitch's rows,
 * scatter_nd's dims) describe the graph as built: when that constant is fed, the ops check
 * their inputs at run time as always (a fed index is range-checked again), results may have
 * other dims than those specs, and a feed of a node downstream must still fit its spec. */
typedef struct ndx_feed {
    ndx_output output;
    ndx_tensor value;
} ndx_feed;

/* How a fetch hands a result to the caller. */
typedef enum ndx_fetch_mode {
    NDX_FETCH_BORROW = 0, /* value points into memory of the session (or of a feed or constant)
                             that stays valid, read-only, until the next run or ndx_session_free:
                             no copy */
    NDX_FETCH_INTO,       /* copied into the caller's value, which must have the result's exact
                             dtype, itemsize and shape */
    NDX_FETCH_ALLOCATE    /* a new block for the caller (free it with ndx_tensor_free, or the
                             session's allocator if it has one): the block the run computed
                             the value in when nothing else of the run reads it (no copy; the
                             session allocates it again next run), else a copy */
} ndx_fetch_mode;

/* A result a run gives back: which output, how (mode), and its value (see ndx_fetch_mode). */
typedef struct ndx_fetch {
    ndx_output output;
    ndx_fetch_mode mode;
    ndx_tensor value;
} ndx_fetch;

/* Runs the nodes the fetches need, given the feeds. Before any node runs, every feed is checked
 * against its output's spec and every placeholder needed must be fed. Results reach the fetches
 * only after every node succeeded: a run that fails leaves every fetch (and every caller buffer)
 * as it was. Every error about a feed, a fetch or a node (a feed that does not fit, a feed
 * given twice, a caller buffer that does not match, a fetch block the allocator refuses, a
 * node that fails) names the node and the file:line of its builder; only errors about the call
 * itself (a NULL session, counts without arrays, a failed or foreign handle, no memory for the
 * plan) have no node to name. The plan for a set of feeds and fetches is made on the first run
 * with that set and kept; a later run with the same set and the same shapes allocates nothing
 * (with INTO or BORROW fetches) and computes no folded node again unless a feed requires it. */
NDX_API ndx_status ndx_session_run(ndx_session *s, int num_feeds, const ndx_feed *feeds,
                                   int num_fetches, ndx_fetch *fetches, ndx_error *err);

/* Gives back to the allocator every pooled block that holds nothing (borrowed results of the last
 * run stay valid). The next run allocates again what it needs. */
NDX_API void ndx_session_trim(ndx_session *s);
/* Bytes the pool holds now, in use or free (for monitoring, and the tests of trim). */
NDX_API size_t ndx_session_pool_bytes(const ndx_session *s);
/* How many of the plans' rewrites the last run took (docs/graphs.md, "Building and running",
 * describes when they apply; results and errors are the ops' own): stitches of a partition of a
 * range placed in one pass (the idiom dynamic_stitch(dynamic_partition(range(n), ids, N),
 * data)), multiplies by ones left unwritten, their readers multiplying by the other operand
 * (reduce_sum's gradient spreading dy over the reduced axes), sums of a product computed from
 * its operands, and sparse SGD / Adagrad updates that made their gradient's scaled rows
 * themselves. 0 before any run, and for a
 * rewrite the run did not reach or whose inputs did not fit at run time (ids that do not match
 * the range, an operand not all ones: the ops then ran one by one). */
NDX_API int ndx_session_fused_stitches(const ndx_session *s);

/* ------------------------------------------------------------------------------------------ */
/* 6. Saved graphs                                                                              */
/* ------------------------------------------------------------------------------------------ */
/* The text form: a version line, then one line per node in build order,
 *
 *   ndx-graph 1
 *   x = Placeholder() : float32[?]
 *   Const = Const() value=[-1] : float32[]
 *   NotEqual = NotEqual(x, Const) : bool[?]
 *   DynamicPartition = DynamicPartition(x, Cast) num_partitions=2 : float32[?], float32[?]
 *   AddV2 = AddV2(DynamicPartition:1, Const_1) : float32[?]
 *
 * NAME = Op(inputs) attributes : output specs. Inputs name earlier nodes (`name:k` for output k
 * > 0). Attributes: GatherNd batch_dims=N bad_indices=error|ignore (zero is read as ignore);
 * ScatterNd and TensorScatter* bad_indices=error|ignore (skip is read as ignore; the canonical
 * text writes ignore); DynamicPartition num_partitions=N; SparseConcat axis=N
 * expand_nonconcat_dim=true|false; Cast to=DTYPE; Size and Shape out_type=int32|int64; Sum,
 * Mean, Max and Min keep_dims=true|false; Pack axis=N; Squeeze squeeze_dims=[a, ...] (axes;
 * none or []: every dim of 1); Const value=[e, ...] (row-major; strings quoted with \" \\ \n \t \xHH escapes; complex as (re, im);
 * nan, inf, -inf) or value=@NAME, the member NAME.npy of the .npz beside the text (saving puts
 * constants of more than 64 elements there). Specs: dtype, string(W) for a string width
 * (string alone: open, for a Placeholder), [d, ?, ...] with ? for an unknown dim, [*] for an unknown rank; a Placeholder's and a Const's
 * are required, other nodes' are checked against what the graph infers. '#' starts a comment.
 * DynamicStitch takes its n indices then its n data; SparseConcat every indices, then every
 * values, then every dense_shape. */

/* Writes g as `path` (the text) and, when it has large constants, the .npz beside it ("g.txt"
 * -> "g.npz"; other names get ".npz" appended). Each file is written atomically. The text is
 * canonical: saving a loaded graph writes the same bytes. */
NDX_API ndx_status ndx_graph_save(const ndx_graph *g, const char *path, ndx_error *err);
/* Reads a graph saved by ndx_graph_save or written by hand, building its nodes with the
 * builders (so every shape is checked as in C; each node's file:line is the text's). Returns a
 * new graph (not finished), or NULL with err naming the file, line and column of the first
 * problem. Limits: 256 MiB of text, 1,000,000 nodes, names of NDX_GRAPH_NAME_MAX bytes,
 * NDX_GRAPH_MAX_ARITY partitions or inputs per node, 2^20 inline elements and 1 GiB per inline
 * constant, 1 GiB per .npz member; each error names its limit. */
NDX_API ndx_graph *ndx_graph_load(const char *path, ndx_error *err);
/* The canonical text of g in a new NUL-terminated buffer (free it with free()); large
 * constants appear as value=@NAME. */
NDX_API ndx_status ndx_graph_to_text(const ndx_graph *g, char **text, size_t *len,
                                     ndx_error *err);
/* Reads a graph from text in memory (no .npz: value=@NAME is an error); `source` names it in
 * messages and in the nodes' file:line. */
NDX_API ndx_graph *ndx_graph_from_text(const char *text, size_t len, const char *source,
                                       ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 7. Gradients                                                                                 */
/* ------------------------------------------------------------------------------------------ */
/* TensorFlow's AddSymbolicGradients / TF_AddGradients in C: one call adds to the graph the nodes
 * that compute d(sum over i of ys[i] * dys[i]) / d(xs[j]). They are ordinary nodes: shapes
 * inferred at build time, folded where their inputs are constants, saved and loaded with the
 * text form, run by sessions (bitwise the same at any thread count, as every ndx op is), drawn by
 * `ndx graph dot`. They are named "<scope>gradients/<forward node>_grad/<Op>" ("gradients_1/..."
 * for a second call), and carry the forward node's builder file:line, so that an error in a
 * gradient names the forward node and the line that built it.
 *
 * A gradient is one of three forms:
 *   NONE   no y depends on x (TensorFlow's NoGradient / None);
 *   DENSE  `dense`, a tensor of x's dtype and shape;
 *   SLICES TensorFlow's IndexedSlices generalised to index rows of depth k: `indices` int64
 *          [N, k] are rows into x's first k dims, `values` [N] + x.shape[k:] and `dense_shape`
 *          int64 [rank(x)]. The gradient is the sum over r of values[r] placed at indices[r]
 *          (duplicate rows add), which is exactly what
 *            scatter_nd(indices, values, dense_shape)      and
 *            tensor_scatter_nd_add(x, indices, values)
 *          compute. TensorFlow's IndexedSlices (1-D indices along axis 0) is the k = 1 case:
 *          reshape indices to [N] for an op that takes 1-D indices (a sparse apply).
 * The gradient of a gather (gather_nd, and everything that is one: dense_to_sparse's values) is
 * SLICES: gathering 1,000 rows of a [10,000,000, 64] table gives a gradient of 1,000 rows, never
 * a dense table. Slices stay slices through identity, add, sub and neg of equal shapes; where
 * one x is used several times its gradients add up: dense + dense with add, slices + slices by
 * concatenating their rows (TensorFlow's aggregation of IndexedSlices: still sparse), dense +
 * slices with tensor_scatter_nd_add, always in the order of the consuming nodes (by id,
 * latest first), so the same graph gives the same bits. An op that needs a dense gradient
 * densifies slices with scatter_nd.
 *
 * A gather_nd with NDX_BAD_INDICES_IGNORE read zeros for the rows out of range, so their
 * gradient is zero: in its slices each such row is row 0 (all coordinates 0) with zero values,
 * so every index in the slices is in range and any consumer takes them.
 *
 * `dys` may be NULL: ones for every y. Each dys[i] must have ys[i]'s dtype and a shape that agrees
 * with ys[i]'s wherever both are known. ys must be float16, bfloat16, float32, float64,
 * complex64 or complex128; xs too (an integer x, such as indices, partitions or a shape, has no
 * gradient: asking for one is an error that names the op that uses it). Every y and x must be an
 * output of the scope's graph. Inputs that are integer (indices, partitions, shapes) get NONE
 * inside the backward pass. Each error is a build error of the graph (its first error, naming
 * the node at fault), and dxs[] is left NONE: an error in the arguments (at the caller's
 * file:line) adds nothing; an error met on the way back (an op on a path from an x to a y
 * that has no gradient, or a gradient that needs what the graph does not know at build time)
 * names the forward node and its
 * builder's file:line, and leaves the graph failed like any builder's error. Dims need not be
 * known at build time (a variable batch, an input signature's None): where the build cannot
 * tell which axes an operand of a binary op was broadcast along (both [?, 2] operands of a mul,
 * or a rank unknown), a BroadcastGradientArgs node finds them at run time, as in TensorFlow,
 * and reports shapes that do not broadcast; where it can, the axes are constants and no such
 * node is built. reduce_sum's gradient takes unknown dims, an unknown rank and axes computed at
 * run time, and so do those of reduce_mean, reduce_max and reduce_min. Every index op
 * differentiates at every index depth it takes, 0 included (each row is the whole tensor, a
 * scalar too), with indices' leading dims known or not. What must be known at build time: the
 * index depth of gather_nd with batch_dims > 0 (with batch_dims 0 and an unknown depth, its
 * gradient is TensorFlow's dense scatter_nd(indices, dy, shape(params))); the axis and the rank
 * of concat's inputs, and the rank of stack's and slice's.
 *
 * Formulas (TensorFlow's, python/ops/array_grad.py, data_flow_grad.py, math_grad.py):
 *   gather_nd(p, i, b)          dp = SLICES(rows of i with their batch coordinates, dy); with
 *                               the ignore policy, rows out of range give row 0 and zeros
 *   scatter_nd(i, u, shape)     du = gather_nd(dy, i)
 *   tensor_scatter_nd_add       dt = dy, du = gather_nd(dy, i)      (sub: du = -gather_nd(dy, i))
 *   tensor_scatter_nd_update    dt = tensor_scatter_nd_update(dy, i, 0); du = gather_nd(dy, i)
 *                               for the row that won its slot, 0 for rows a later duplicate
 *                               overwrote (exact; TensorFlow gives every duplicate the gradient)
 *   tensor_scatter_nd_min/max   indicator of x == out and of u == out, dy shared among ties
 *   dynamic_stitch (both)       d data[m] = gather(dy, indices[m]) where (m, i) won its output
 *                               row (positions stitched to find the winners), 0 elsewhere
 *   dynamic_partition           the partitions' gradients stitched back to data's positions
 *   sparse_concat, _reorder,    d values through the op's permutation of the values
 *   sparse_transpose
 *   sparse_to_dense             d values = gather_nd(dy, indices); d default = sum(dy) - sum(d values)
 *   dense_to_sparse             dx = SLICES(indices, d values, shape(x))
 *   sparse_fill_empty_rows      sparse_fill_empty_rows_grad(reverse_index_map, d output values):
 *                               d values = its gather, d default_value = the sum over the
 *                               filled rows; sparse_fill_empty_rows_grad: no gradient
 *   dense_/sparse_count_sparse_output  no gradient (as in TensorFlow)
 *   sparse_slice                d values = sparse_slice_grad(d out values, indices, start,
 *                               out indices): each kept entry's gradient, 0 elsewhere;
 *                               sparse_reshape: NONE (integers only); sparse_split and
 *                               sparse_slice_grad: no gradient (as in TensorFlow)
 *   gather(p, i, axis, b)       dp = SLICES(rows (b..., o..., i[b..., j...]) over dy's leading
 *                               dims, dy's rows); axis must be a constant, the ranks known
 *   ResourceGather(v, i, b)     dv = SLICES(i's rows, dy's rows) (b = 0: TensorFlow's
 *                               IndexedSlices; b > 0 as gather's with axis b); no gradient for
 *                               the row scatters ResourceScatterAdd .. ResourceScatterUpdate
 *   boolean_mask(t, m, axis)    dt = SLICES(rows (o..., where(m)[j]), dy's rows)
 *   one_hot                     NONE;  unique, unique_with_counts, unique_v2: no gradient
 *   setdiff1d (ListDiff)        no gradient (as in TensorFlow)
 *   bincount, dense_bincount    no gradient (as in TensorFlow)
 *   identity, add, sub, neg     dy, -dy, each summed over the axes its operand was broadcast along
 *                               (TensorFlow's BroadcastGradientArgs: constants when the build
 *                               knows them, else that node at run time) and reshaped to it
 *   mul, div                    dy * conj(y), conj(x) * dy; dy / conj(y), -dy * conj(x) /
 *                               conj(y) / conj(y) (TensorFlow's convention for complex dtypes;
 *                               conj is built from casts, as ndx has no conj op)
 *   maximum, minimum            dy where x won (x >= y for maximum, x <= y for minimum), else to y
 *   cast                        cast back (float and complex to float and complex), else NONE
 *   reshape                     reshape(dy, shape(x))
 *   reduce_sum                  dy broadcast over the reduced axes
 *   reduce_mean                 reduce_sum's divided by size(x) // max(size(y), 1)
 *   reduce_max, reduce_min      indicators = cast(x == y broadcast), dy broadcast *
 *                               indicators / sum(indicators) (ties share dy equally)
 *   select                      select(c, dy, 0) to x, select(c, 0, dy) to y, each summed over
 *                               the axes it was broadcast along; NONE for the condition
 *   fill                        d value = sum(dy)
 *   embedding_bag               d params = SLICES(ids, dy of each id's bag * its weight /
 *                               the combiner's divisor, through max_norm's clipping);
 *                               d weights dense (sum: clip(row) . dy of the bag; mean and
 *                               sqrtn: their quotient rules, 0 where the divisor is 0)
 *   concat, stack               each input's slice of dy (stack's reshaped to the input's
 *                               shape); concat needs a constant axis, both the rank known
 *   expand_dims, squeeze        reshape(dy, shape(input))
 *   unsorted_segment_* and     (math_grad.py; the sorted ones with their output's rows as
 *   segment_* (data, ids, n)    num_segments) sum: d data = gather(dy, ids), a negative id's row
 *                               0; mean, sqrt_n: dy / count (sqrt(count)) per segment first;
 *                               min, max: dy shared among the rows equal to their segment's
 *                               result (ties split it evenly); prod: dy * y / x, at a segment's
 *                               only zero the product of its other rows, 0 where it has two or
 *                               more zeros; the ranks of data and ids known at build time
 *   sparse_segment_*            d data = SLICES(indices, gather(dy scaled as above, ids))
 *   slice                       dy padded back to the input's shape with zeros (a concat of
 *                               zeros along each axis; the rank must be known)
 *   floor_mod                   dy, -dy * floor_div(x, y)
 *   abs                         dy * sign(x) (sign(0) = 0)
 *   square                      dy * 2 conj(x)
 *   sqrt                        dy * 0.5 / conj(y) (TensorFlow's SqrtGrad)
 *   sparse_dense_matmul(a, b,   d b = sparse_dense_matmul(a, dy, !adj_a), conjugate-transposed
 *     adj_a, adj_b)             under adj_b; d a.values (entry (r, c)) = sum_n dy[r, n]
 *                               conj(op(b)[c, n]), under adj_a conj(dy[c, n]) op(b)[r, n]
 *                               (TensorFlow's _SparseTensorDenseMatMulGrad); NONE for the
 *                               indices and dense_shape
 *   sparse_reduce_sum           d values = gather_nd(reshape(dy, dense_shape with 1 at the
 *                               axes), indices with 0 at the axes); sparse_reduce_max and the
 *                               _sparse forms: no gradient (as in TensorFlow)
 *   sparse_softmax              d values = (g - row sum of y * g) * y (the row sum a
 *                               sparse_reduce_sum over the last dim, gathered at each entry)
 *   sparse_add(a, b, t)         d a values, d b values = sparse_add_grad(d sum values, a's, b's
 *                               and the sum's indices): each entry the gradient of its sum
 *                               entry, 0 where the threshold dropped it
 *   sparse_dense_add(a, b)      d a values = gather_nd(dy, a's indices); d b = dy
 *   sparse_maximum, _minimum,   no gradient (as in TensorFlow)
 *   sparse_add_grad, sparse_dense_cwise ADD
 *   sparse_dense_cwise MUL, DIV d sp values = dy * d, dy / d; d dense = dy * sp values,
 *                               dy * (-sp values / d²), added at each entry's dense index (d: the
 *                               dense element each entry read; TensorFlow's formulas; the ranks
 *                               of sp and dense known at build time)
 *   zeros_like, ones_like, shape, size, range, equal, not_equal, floor_div, less, less_equal,
 *   greater, greater_equal, logical_and, logical_or, logical_not, where: NONE (not
 *   differentiable). */
typedef enum ndx_gradient_form {
    NDX_GRADIENT_NONE = 0,
    NDX_GRADIENT_DENSE,
    NDX_GRADIENT_SLICES
} ndx_gradient_form;

/* The gradient of one x, in its form: NONE; DENSE, one output; or SLICES, TensorFlow's
 * IndexedSlices (rows `values` at row numbers `indices` of a tensor of shape `dense_shape`). */
typedef struct ndx_gradient {
    ndx_gradient_form form;
    ndx_output dense;                        /* DENSE */
    ndx_output values, indices, dense_shape; /* SLICES */
} ndx_gradient;

/* Adds the gradients of ys (ny >= 1) with respect to xs (nx >= 0) to s's graph; dxs[j] receives
 * x[j]'s. NDX_OK, or the graph's first error's code (see above). */
#define ndx_graph_gradients(s, ny, ys, dys, nx, xs, dxs) \
    ndx_graph_gradients_at(__FILE__, __LINE__, (s), (ny), (ys), (dys), (nx), (xs), (dxs))
NDX_API ndx_status ndx_graph_gradients_at(const char *file, int line, ndx_scope s, int ny,
                                          const ndx_output *ys, const ndx_output *dys, int nx,
                                          const ndx_output *xs, ndx_gradient *dxs);

/* A stretch of a graph's nodes in build order: ndx_graph_node(g, i) for begin <= i < end. Take
 * begin = ndx_graph_node_count(g) where recording starts and end = ndx_graph_node_count(g) where
 * it stops: the range holds the nodes built in between. */
typedef struct ndx_node_range {
    int begin, end;
} ndx_node_range;

/* ndx_graph_gradients where only the nodes in ranges[0..nranges) carry gradients: TensorFlow's
 * GradientTape, which differentiates the ops run while it recorded. A path from an x to a y
 * through a node outside every range contributes nothing (a y built outside them gets NONE for
 * every x other than itself); xs themselves may be anywhere, and so may ReadVariableOp nodes,
 * which stand for their variable as its Variable node does (one read serves every read between
 * two updates, wherever it was built). The nodes the call adds are built
 * after the ranges (a tape recording them takes them into its next range: second derivatives).
 * nranges >= 0 (0: every dxs[j] NONE unless xs[j] is a y), and each range has
 * 0 <= begin <= end <= ndx_graph_node_count(g), else an argument error that adds nothing. */
#define ndx_graph_gradients_within(s, ny, ys, dys, nx, xs, dxs, nranges, ranges)            \
    ndx_graph_gradients_within_at(__FILE__, __LINE__, (s), (ny), (ys), (dys), (nx), (xs), (dxs), \
                                  (nranges), (ranges))
NDX_API ndx_status ndx_graph_gradients_within_at(const char *file, int line, ndx_scope s, int ny,
                                                 const ndx_output *ys, const ndx_output *dys,
                                                 int nx, const ndx_output *xs, ndx_gradient *dxs,
                                                 int nranges, const ndx_node_range *ranges);

/* A gradient as a dense tensor: DENSE's own output, or scatter_nd of SLICES (skipping rows out
 * of range). NONE is a build error (there is no tensor: use zeros_like(x)). */
#define ndx_gradient_to_dense(s, g) ndx_gradient_to_dense_at(__FILE__, __LINE__, (s), (g))
NDX_API ndx_output ndx_gradient_to_dense_at(const char *file, int line, ndx_scope s,
                                            ndx_gradient g);

/* x + scale * g, with scale a scalar of x's dtype (for gradient descent, -learning_rate): add for
 * DENSE, tensor_scatter_nd_add(x, indices, scale * values) for SLICES (in place when x is an
 * intermediate result no other node reads; rows out of range skipped), x itself for NONE. */
#define ndx_gradient_apply(s, x, g, scale) \
    ndx_gradient_apply_at(__FILE__, __LINE__, (s), (x), (g), (scale))
NDX_API ndx_output ndx_gradient_apply_at(const char *file, int line, ndx_scope s, ndx_output x,
                                         ndx_gradient g, ndx_output scale);

/* ------------------------------------------------------------------------------------------ */
/* 8. Variables and training steps                                                              */
/* ------------------------------------------------------------------------------------------ */
/* A Variable node (TensorFlow's resource variable: VarHandleOp and ReadVariableOp in one node)
 * holds a tensor that lives in each session and persists from run to run. Its output is the
 * variable's value at the start of the run. Update nodes (the optimizer steps, scatter-add,
 * assign-add, assign) change variables in place; they have no outputs, and a run runs them only
 * when they are among its targets (ndx_session_run_targets) or a ReadVariableOp it needs comes
 * after them (see "Program order" below).
 *
 * All or nothing. A run computes every other node first; then it checks every update it runs
 * (dtypes, shapes and every index, with the messages the ops give), and only when all pass does
 * it apply them, in build order. A run that fails anywhere (a feed, a node, a fetch, an update's
 * check) leaves every variable, and every fetch, as it was. Every read of a Variable node's
 * output in a run (a node's input, a fetch, an update's lr or grad computed from a variable)
 * sees its value at the start of the run, whatever the run updates. The updates' scratch (8
 * bytes per index of a sparse step, more when Adagrad sums duplicates) is reserved with the
 * checks, under the run's max_memory, so
 * once the checks pass nothing can fail: an allocator that refuses memory fails the run before
 * any update. Naming an update twice among the targets runs it once. Feeding a Variable's
 * output gives its readers in that run the fed value; updates still change the variable itself.
 *
 * Program order (TensorFlow 2's automatic control dependencies). A ReadVariableOp node
 * (ndx_op_read_variable) and a ResourceGather node (ndx_op_resource_gather, which reads the rows it
 * gathers from the variable itself, no copy) read a variable after the updates of that variable
 * built before it: build order is program order. A run that needs such a read (a ResourceGather:
 * one with an update of its variable built before it) also runs every update of the variable built
 * before it (as if they were targets), and such a run takes another path: every node runs in build
 * order, each update at its place, into the run's own copy of its variable (made at the variable's
 * first update in the run, from the pool: counted by max_memory); a ReadVariableOp gives a copy of
 * that copy as it is at its place (or, before any update of the variable in the run, the variable
 * itself), a ResourceGather gathers from it as it is there, and only once every node and fetch
 * succeeded do the copies replace the variables. So all or nothing still holds: a failure anywhere
 * (an update's check or run included) leaves every variable as it was. A ReadVariableOp or
 * ResourceGather reads the variable itself, whatever is fed to the Variable node's output. Runs
 * with no such read take the path above, unchanged (no copies); a ResourceGather there reads the
 * variable at the start of the run, as its place in program order says. Two updates of one variable
 * always apply in build order; the Variable node's output stays the value at the start of the run,
 * even in a graph that reads it again after an update.
 *
 * In the text form (section 6): `table = Variable(init) : float32[4, 2]`; an update has no outputs,
 * so no ` : specs` (`step = ResourceSparseApplyGradientDescent(table, lr, grad, ids)`);
 * ResourceSparseApplyAdagrad and ...V2 take update_slots=true|false (default true) and
 * sum_duplicates=true|false (default false: NDX_APPLY_SUM_DUPLICATES, Keras's step); the other
 * updates are ResourceScatterNdAdd, ResourceScatterAdd .. ResourceScatterUpdate,
 * AssignAddVariableOp, AssignSubVariableOp and AssignVariableOp; a read after them is `now =
 * ReadVariableOp(table) : float32[4, 2]`. The text keeps build order, so a saved graph keeps its
 * program order, and graphs with no ReadVariableOp run as they always did.
 *
 * The updates are ndx.h's (section 5e): duplicate indices apply one after another in index
 * order (or, for Adagrad with sum_duplicates, once with their sum), so the results are the same
 * bits at any thread count. Each session keeps its own copy
 * of every variable, made from the initial value when the session is created. */

/* Variable: a variable of the dtype and (full, exact) shape of `init`, initialised to its
 * value. init must be computed from constants only (no placeholder, no variable) and have a
 * shape known at build time: a Const (a copy of a caller's buffer: ndx_op_const), or nodes
 * computed from constants (ndx_op_fill of a constant dims and value, a cast of a Const, ...).
 * A value known at build time (a Const, a folded node) is copied into each new session; a larger
 * one (past folding's 16 MiB) is computed once by each new session, straight into the variable,
 * and the pool keeps nothing of it. The storage comes from the session's allocator and is not
 * counted by max_memory (which is per run). Name the node with ndx_scope_named: sessions read,
 * write, save and load variables by their node's name. */
#define ndx_op_variable(s, init) ndx_op_variable_at(__FILE__, __LINE__, (s), (init))
NDX_API ndx_output ndx_op_variable_at(const char *file, int line, ndx_scope s, ndx_output init);

/* The updates. `var` and `accum` must be outputs of Variable nodes (two different ones). The
 * sparse steps take the gradient as IndexedSlices: rows `grad` and their row numbers `indices`,
 * int32 or int64, a vector [n] or a matrix [n, 1] (which the builder reshapes to [n] with a
 * Reshape node of its own).
 *
 * apply_sgd (ResourceSparseApplyGradientDescent): ndx_sparse_apply_sgd(var, lr, grad, indices).
 * apply_adagrad (ResourceSparseApplyAdagrad, or ResourceSparseApplyAdagradV2 with an epsilon):
 *   ndx_sparse_apply_adagrad(var, accum, lr, epsilon, grad, indices, flags): flags
 *   NDX_APPLY_UPDATE_SLOTS (TensorFlow's default) and NDX_APPLY_SUM_DUPLICATES (Keras's step)
 *   become the attrs update_slots and sum_duplicates; other bits are ignored. The sum's
 *   scratch (ndx.h) is reserved with the checks, as the indices' is.
 * scatter_nd_add_variable (ResourceScatterNdAdd): var = tensor_scatter_nd_add(var, indices,
 *   updates) in place, for a gradient in slices form of any index depth.
 * assign_add_variable, assign_sub_variable (AssignAddVariableOp, AssignSubVariableOp):
 *   var += value, var -= value, value of var's dtype and shape (a dense gradient step).
 * assign_variable (AssignVariableOp): var = value, value of var's dtype and shape (checked when
 *   the graph is built where known, else when the run checks the update; a string value may be
 *   narrower than the variable's strings, NUL-padded to their width). */
#define ndx_op_apply_sgd(s, var, lr, grad, indices) \
    ndx_op_apply_sgd_at(__FILE__, __LINE__, (s), (var), (lr), (grad), (indices))
NDX_API ndx_operation ndx_op_apply_sgd_at(const char *file, int line, ndx_scope s, ndx_output var,
                                          ndx_output lr, ndx_output grad, ndx_output indices);
#define ndx_op_apply_adagrad(s, var, accum, lr, epsilon, grad, indices, flags)                   \
    ndx_op_apply_adagrad_at(__FILE__, __LINE__, (s), (var), (accum), (lr), (epsilon), (grad),    \
                            (indices), (flags))
NDX_API ndx_operation ndx_op_apply_adagrad_at(const char *file, int line, ndx_scope s,
                                              ndx_output var, ndx_output accum, ndx_output lr,
                                              const ndx_output *epsilon, ndx_output grad,
                                              ndx_output indices, int flags);
#define ndx_op_scatter_nd_add_variable(s, var, indices, updates) \
    ndx_op_scatter_nd_add_variable_at(__FILE__, __LINE__, (s), (var), (indices), (updates))
NDX_API ndx_operation ndx_op_scatter_nd_add_variable_at(const char *file, int line, ndx_scope s,
                                                        ndx_output var, ndx_output indices,
                                                        ndx_output updates);
#define ndx_op_assign_add_variable(s, var, value) \
    ndx_op_assign_add_variable_at(__FILE__, __LINE__, (s), (var), (value), 0)
#define ndx_op_assign_sub_variable(s, var, value) \
    ndx_op_assign_add_variable_at(__FILE__, __LINE__, (s), (var), (value), 1)
NDX_API ndx_operation ndx_op_assign_add_variable_at(const char *file, int line, ndx_scope s,
                                                    ndx_output var, ndx_output value,
                                                    int subtract);
#define ndx_op_assign_variable(s, var, value) \
    ndx_op_assign_variable_at(__FILE__, __LINE__, (s), (var), (value))
NDX_API ndx_operation ndx_op_assign_variable_at(const char *file, int line, ndx_scope s,
                                                ndx_output var, ndx_output value);

/* The row scatters, TensorFlow's ResourceScatterAdd, ...Sub, ...Mul, ...Div, ...Min, ...Max and
 * ...Update (Variable.scatter_add etc.): for each position i of `indices` (int32 or int64, any
 * shape; int16 too, as ndx's other index ops), row indices[i] of the variable combined with
 * updates[i, ...]: `updates` of var's dtype and of shape indices.shape + var.shape[1:], or a
 * scalar combined with every element of every row named. var must have rank >= 1. The updates
 * of a repeated index apply one after another in the order of the flattened indices (UPDATE:
 * the last one wins), as tensor_scatter_nd's duplicates do, so the results are the same bits at
 * any thread count. Arithmetic as the scatters' (ndx.h section 5b): integers wrap, float16 and
 * bfloat16 round after every step, MIN/MAX keep the current value on a tie or a NaN update;
 * MUL multiplies, DIV divides (integers truncate, x / -1 wraps; floats IEEE; complex as C's
 * division). Dtypes: UPDATE every dtype (strings of the variable's width); ADD, SUB, MUL, DIV
 * every number; MIN, MAX integers and real floats; others NDX_E_UNSUPPORTED when built. An
 * index outside [0, var.shape[0]) fails the run before any variable changes, with TensorFlow's
 * words: "ResourceScatterAdd: indices[3] = 9 is not in [0, 5)"; so does an integer DIV by zero
 * ("ResourceScatterDiv: integer division by zero: updates[2] = 0"; TensorFlow's CPU kernel
 * would trap). Not differentiable (no gradient, as in TensorFlow). The text form names the
 * inputs resource, indices, updates: `ResourceScatterMax(table, ids, rows)`. */
typedef enum ndx_resource_scatter_op {
    NDX_RESOURCE_SCATTER_ADD = 0,
    NDX_RESOURCE_SCATTER_SUB,
    NDX_RESOURCE_SCATTER_MUL,
    NDX_RESOURCE_SCATTER_DIV,
    NDX_RESOURCE_SCATTER_MIN,
    NDX_RESOURCE_SCATTER_MAX,
    NDX_RESOURCE_SCATTER_UPDATE
} ndx_resource_scatter_op;
#define ndx_op_resource_scatter(s, op, var, indices, updates) \
    ndx_op_resource_scatter_at(__FILE__, __LINE__, (s), (op), (var), (indices), (updates))
NDX_API ndx_operation ndx_op_resource_scatter_at(const char *file, int line, ndx_scope s,
                                                 ndx_resource_scatter_op op, ndx_output var,
                                                 ndx_output indices, ndx_output updates);

/* ResourceGather (Variable.sparse_read, and tf.gather / tf.nn.embedding_lookup on a variable):
 * gather(var, indices, axis = batch_dims, batch_dims) (section 3's ndx_op_gather) of the
 * variable as it is at this node in program order, as ReadVariableOp reads it, but without
 * copying the variable: the rows come straight from it. A negative batch_dims counts from the
 * end of indices' dims. The text form's attributes are batch_dims (default 0) and
 * validate_indices (default true; accepted and ignored, as TensorFlow's CPU kernel does:
 * indices are always checked). Its gradient is the variable's, as slices: TensorFlow's
 * IndexedSlices(dy's rows, indices, shape(var)), which the sparse steps take. */
#define ndx_op_resource_gather(s, var, indices, batch_dims) \
    ndx_op_resource_gather_at(__FILE__, __LINE__, (s), (var), (indices), (batch_dims))
NDX_API ndx_output ndx_op_resource_gather_at(const char *file, int line, ndx_scope s,
                                             ndx_output var, ndx_output indices, int batch_dims);

/* ReadVariableOp: the value of variable `var` (a Variable node's output) after every update of
 * it built before this node (see "Program order" above); its gradient is the gradient of the
 * variable (passed through, as TensorFlow's). */
#define ndx_op_read_variable(s, var) ndx_op_read_variable_at(__FILE__, __LINE__, (s), (var))
NDX_API ndx_output ndx_op_read_variable_at(const char *file, int line, ndx_scope s,
                                           ndx_output var);

/* ndx_session_run with targets (TensorFlow's run(fetches, targets)): also runs the nodes
 * `targets` names (updates, or any node) and what they need, without fetching anything from
 * them. ndx_session_run is this with no targets. The plan is kept per set of feeds, fetches and
 * targets. */
NDX_API ndx_status ndx_session_run_targets(ndx_session *s, int num_feeds, const ndx_feed *feeds,
                                           int num_fetches, ndx_fetch *fetches, int num_targets,
                                           const ndx_operation *targets, ndx_error *err);

/* A session's variables, by Variable node (ndx_graph_find gives it from its name).
 * read: copies the value into `into` (a view of the variable's exact dtype, itemsize and shape).
 * write: replaces the value with `value` (checked the same way; nothing changes on failure).
 * Errors name the node and the file:line of its builder. Not during a run of the session. */
NDX_API ndx_status ndx_session_read_variable(ndx_session *s, ndx_operation var,
                                             ndx_tensor *into, ndx_error *err);
NDX_API ndx_status ndx_session_write_variable(ndx_session *s, ndx_operation var,
                                              const ndx_tensor *value, ndx_error *err);
/* Every variable of the session as an .npz written atomically at `path`, one member per
 * variable named after its node (NAME.npy). */
NDX_API ndx_status ndx_session_save_variables(const ndx_session *s, const char *path,
                                              ndx_error *err);
/* Reads every variable of the session from such an .npz: each must have its member, of its
 * dtype and shape (else an error naming the variable and the file), and every member must name
 * a variable (else an error naming the member). All or nothing: a load that fails changes no
 * variable. */
NDX_API ndx_status ndx_session_load_variables(ndx_session *s, const char *path, ndx_error *err);

#ifdef __cplusplus
}
#endif

#endif /* NDX_GRAPH_H */
