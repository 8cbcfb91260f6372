/* graph_kind.h — what a kind of node is, said once: one descriptor per kind (graph_kinds_*.c)
 * holds its TensorFlow type name, its inputs and outputs, the schema of its attributes (which the
 * text form's writer writes and its reader reads), its infer function, its kernel and the slot
 * for its gradient. The builders, the text reader and writer, inspection, folding and sessions
 * all look a kind up here. Adding an op is one descriptor, its functions and its public builder.
 * Private to the graph layer. */
#ifndef NDX_GRAPH_KIND_H
#define NDX_GRAPH_KIND_H

#include <stddef.h>

#include "dense_ops.h"
#include "ndx_graph.h"

/* Every kind of node: one TensorFlow op type each. The tensor_scatter kinds follow
 * ndx_scatter_op's order, the binary kinds ndx_binary_op's, the unary kinds ndx_unary_op's and
 * the reductions (Sum .. Min) ndx_reduce_op's (a descriptor's `variant`). */
typedef enum graph_kind {
    GRAPH_CONST = 0,
    GRAPH_PLACEHOLDER,
    GRAPH_IDENTITY,
    GRAPH_GATHER_ND,
    GRAPH_SCATTER_ND,
    GRAPH_TENSOR_SCATTER_UPDATE,
    GRAPH_TENSOR_SCATTER_ADD,
    GRAPH_TENSOR_SCATTER_SUB,
    GRAPH_TENSOR_SCATTER_MIN,
    GRAPH_TENSOR_SCATTER_MAX,
    GRAPH_STITCH,
    GRAPH_PARALLEL_STITCH,
    GRAPH_PARTITION,
    GRAPH_SPARSE_CONCAT,
    GRAPH_SPARSE_REORDER,
    GRAPH_SPARSE_TO_DENSE,
    GRAPH_DENSE_TO_SPARSE,
    GRAPH_ADD,
    GRAPH_SUB,
    GRAPH_MUL,
    GRAPH_FLOOR_DIV,
    GRAPH_FLOOR_MOD,
    GRAPH_EQUAL,
    GRAPH_NOT_EQUAL,
    GRAPH_REAL_DIV,
    GRAPH_MAXIMUM,
    GRAPH_MINIMUM,
    GRAPH_LESS,
    GRAPH_LESS_EQUAL,
    GRAPH_GREATER,
    GRAPH_GREATER_EQUAL,
    GRAPH_LOGICAL_AND,
    GRAPH_LOGICAL_OR,
    GRAPH_NEG,
    GRAPH_ZEROS_LIKE,
    GRAPH_ONES_LIKE,
    GRAPH_LOGICAL_NOT,
    GRAPH_ABS,
    GRAPH_SQUARE,
    GRAPH_SQRT,
    GRAPH_CAST,
    GRAPH_RANGE,
    GRAPH_SIZE,
    GRAPH_SHAPE,
    GRAPH_BROADCAST_GRADIENT_ARGS,
    GRAPH_FILL,
    GRAPH_RESHAPE,
    GRAPH_SUM,
    GRAPH_MEAN,
    GRAPH_MAX,
    GRAPH_MIN,
    GRAPH_SELECT_V2,
    GRAPH_WHERE,
    /* Joining and cutting along axes (array_kinds.c). */
    GRAPH_CONCAT,
    GRAPH_PACK,
    GRAPH_SLICE,
    GRAPH_EXPAND_DIMS,
    GRAPH_SQUEEZE,
    /* Variables and the nodes that update them (state_kinds.c). */
    GRAPH_VARIABLE,
    GRAPH_APPLY_SGD,
    GRAPH_APPLY_ADAGRAD,
    GRAPH_APPLY_ADAGRAD_V2,
    GRAPH_SCATTER_ADD_VAR,
    GRAPH_ASSIGN_ADD_VAR,
    GRAPH_ASSIGN_SUB_VAR,
    GRAPH_READ_VARIABLE,
    GRAPH_ASSIGN_VAR,
    GRAPH_KIND_COUNT
} graph_kind;

/* A node's attributes; each kind reads the fields its schema names (all ints, so that one schema
 * entry can point at any of them). */
typedef struct graph_attrs {
    int batch_dims;  /* gather_nd */
    int bad_indices; /* gather_nd, the scatters: an ndx_bad_indices */
    int count;       /* stitch: n; partition: num_partitions; sparse_concat: n */
    int axis;        /* sparse_concat */
    int expand;      /* sparse_concat: expand_nonconcat_dim */
    int dtype;       /* cast: to; size, shape: out_type (an ndx_dtype) */
    int keep_dims;   /* sum, mean, max, min */
    int update_slots; /* ResourceSparseApplyAdagrad(V2) */
    int squeeze_dims; /* squeeze: a set of axes (GRAPH_ATTR_AXES) */
    int sum_duplicates; /* ResourceSparseApplyAdagrad(V2): NDX_APPLY_SUM_DUPLICATES */
} graph_attrs;

/* ---- the attribute schema ----------------------------------------------------------------- */

typedef enum graph_attr_type {
    GRAPH_ATTR_INT,    /* an integer in [lo, hi] */
    GRAPH_ATTR_BOOL,   /* true | false */
    GRAPH_ATTR_POLICY, /* bad_indices: error | ignore (and `alias`, read as ignore) */
    GRAPH_ATTR_DTYPE,  /* a dtype's name */
    GRAPH_ATTR_VALUE,  /* a Const's value: [e, ...] or @NAME (graph_text.c, graph_parse_value.c) */
    GRAPH_ATTR_AXES    /* a set of axes, [0, -1]: an int bit mask of ndx_squeeze_bit (dense_ops.h) */
} graph_attr_type;

enum {
    GRAPH_ATTR_REQUIRED = 1, /* the reader needs it (no default) */
    GRAPH_ATTR_ALWAYS = 2    /* the writer writes it even when it has its default */
};

typedef struct graph_attr_def {
    const char *name;     /* as in the text form: "batch_dims" */
    graph_attr_type type;
    size_t offset;        /* of its int in graph_attrs (VALUE: unused) */
    int def;              /* the default, which the writer leaves out */
    int64_t lo, hi;       /* INT: the range the reader accepts */
    unsigned flags;       /* GRAPH_ATTR_REQUIRED, GRAPH_ATTR_ALWAYS */
    const char *alias;    /* POLICY: another word for ignore ("zero", "skip") */
} graph_attr_def;

#define GRAPH_MAX_ATTRS 4

/* ---- the descriptor ------------------------------------------------------------------------ */

struct graph_node;

typedef ndx_status (*graph_infer_fn)(const struct graph_node *n, const ndx_spec *in,
                                     const ndx_tensor *const *consts, ndx_spec *out,
                                     ndx_error *err);
typedef ndx_status (*graph_run_fn)(const struct graph_node *n, const ndx_tensor *in,
                                   const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* A gradient flowing into, or out of, one output: nothing, a dense tensor, or slices of rows
 * (ndx_gradient, ndx_graph.h), what gather_nd and the other index ops give their params without
 * densifying. */
typedef ndx_gradient graph_grad;
#define GRAPH_GRAD_NONE NDX_GRADIENT_NONE
#define GRAPH_GRAD_DENSE NDX_GRADIENT_DENSE
#define GRAPH_GRAD_SLICES NDX_GRADIENT_SLICES

/* The gradient of one node (gradients.c calls it): given the node `op` and
 * dys[k], the gradient of the loss with respect to its output k (NONE where output k does not
 * reach the loss), builds in scope s the nodes that compute dxs[i], the gradient with respect to
 * input i (left NONE where there is none: indices, shapes, integer inputs). It builds with the
 * public builders, so its errors are the graph's deferred first error; it returns NDX_OK or that
 * error's code. NULL in a descriptor: the kind has no gradient (yet). */
typedef ndx_status (*graph_grad_fn)(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                    graph_grad *dxs);

/* How many outputs a node has. */
enum { GRAPH_OUTPUTS_COUNT = -1 /* attrs.count (dynamic_partition's num_partitions) */ };

/* Flags of a descriptor. */
enum {
    GRAPH_KIND_SPARSE_OUT = 1, /* outputs 0..2 are a sparse tensor (indices, values, dense_shape) */
    GRAPH_KIND_IN_PLACE = 2,   /* output 0 may be input 0 updated in place (when not narrower) */
    GRAPH_KIND_SHAPE_ONLY = 4, /* reads only input 0's dtype and shape: folds once it is known */
    /* Variables and updates (state_kinds.c). */
    GRAPH_KIND_STATEFUL = 8,   /* never folded: a Variable's value lives in each session */
    GRAPH_KIND_MUTATES = 16    /* updates variables in place (its `vars` leading inputs are
                                  Variable nodes): no outputs, run last, after `check` */
};

typedef struct graph_kind_desc {
    graph_kind kind;           /* its own index in the table (checked by the tests) */
    const char *type;          /* TensorFlow's op type, the text form's name: "GatherNd" */
    int variant;               /* the ndx_scatter_op / ndx_binary_op / parallel flag it runs */
    /* Inputs: min..max of them; or, with group > 0, group * n of them (n >= 1), named
     * inputs[k] for k = i / n ("indices[2]") or, with grouped_parts, "inputs[i % n].<part>". */
    int min_inputs, max_inputs, group;
    int grouped_parts;
    int trailing;              /* with group > 0: inputs after the group * n (ConcatV2's axis),
                                  named inputs[group + j] */
    const char *const *inputs;
    const char *count_name;    /* the builder's name of n or num_partitions ("n"), or NULL */
    int outputs;               /* a count, or GRAPH_OUTPUTS_COUNT */
    unsigned flags;
    /* String inputs that share one type (graph_widths.c): from input width_first every
       width_step-th to the last input; width_first -1: attrs.count of them from input
       attrs.count (a grouped kind's second part); width_step 0: none. */
    int width_first, width_step;
    int num_attrs;
    graph_attr_def attrs[GRAPH_MAX_ATTRS];
    graph_infer_fn infer;      /* NULL: Const and Placeholder, which have no inputs */
    graph_run_fn run;          /* NULL: Const, Placeholder, Identity (sessions alias it) */
    graph_grad_fn gradient;    /* NULL: none yet */
    /* GRAPH_KIND_MUTATES (and ReadVariableOp): how many leading inputs are variables; the
       checks that run before any variable changes (every dtype, shape and index `run` will
       see); and the scratch `run` asks of its allocator (NULL: none; a kind whose op can do
       without, as tensor_scatter's direct path does, says 0), which the session reserves
       before any update runs, so that `run` cannot fail. */
    int vars;
    graph_run_fn check;
    size_t (*scratch)(const struct graph_node *n, const ndx_tensor *in);
} graph_kind_desc;

/* The descriptor of a kind (kind < GRAPH_KIND_COUNT). */
const graph_kind_desc *graph_desc(graph_kind kind);
/* The kind whose TensorFlow type name is `type`, or GRAPH_KIND_COUNT. */
graph_kind graph_kind_named(const char *type);
/* Writes how input i of a node of this kind (n inputs) is called in messages: "'params'",
 * "'indices[2]'", "'inputs[1].values'". */
void graph_input_name(graph_kind kind, int num_inputs, int i, char *buf, size_t cap);

/* The descriptors, by family (index_kinds.c, sparse_kinds.c, math_kinds.c, shape_kinds.c,
 * array_kinds.c, state_kinds.c). */
extern const graph_kind_desc graph_kind_const, graph_kind_placeholder, graph_kind_identity,
    graph_kind_gather_nd, graph_kind_scatter_nd, graph_kind_tensor_scatter_update,
    graph_kind_tensor_scatter_add, graph_kind_tensor_scatter_sub, graph_kind_tensor_scatter_min,
    graph_kind_tensor_scatter_max, graph_kind_stitch, graph_kind_parallel_stitch,
    graph_kind_partition, graph_kind_sparse_concat, graph_kind_sparse_reorder,
    graph_kind_sparse_to_dense, graph_kind_dense_to_sparse, graph_kind_add, graph_kind_sub,
    graph_kind_mul, graph_kind_floor_div, graph_kind_floor_mod, graph_kind_equal,
    graph_kind_not_equal, graph_kind_real_div, graph_kind_maximum, graph_kind_minimum,
    graph_kind_neg, graph_kind_zeros_like, graph_kind_ones_like, graph_kind_cast, graph_kind_range,
    graph_kind_size, graph_kind_shape, graph_kind_fill, graph_kind_reshape, graph_kind_sum;
extern const graph_kind_desc graph_kind_broadcast_gradient_args;
extern const graph_kind_desc graph_kind_less, graph_kind_less_equal, graph_kind_greater,
    graph_kind_greater_equal, graph_kind_logical_and, graph_kind_logical_or,
    graph_kind_logical_not, graph_kind_abs, graph_kind_square, graph_kind_sqrt;
extern const graph_kind_desc graph_kind_mean, graph_kind_max, graph_kind_min,
    graph_kind_select_v2, graph_kind_where;
extern const graph_kind_desc graph_kind_concat, graph_kind_pack, graph_kind_slice,
    graph_kind_expand_dims, graph_kind_squeeze;
extern const graph_kind_desc graph_kind_variable, graph_kind_apply_sgd, graph_kind_apply_adagrad,
    graph_kind_apply_adagrad_v2, graph_kind_scatter_add_var, graph_kind_assign_add_var,
    graph_kind_assign_sub_var, graph_kind_read_variable, graph_kind_assign_var;

#endif /* NDX_GRAPH_KIND_H */
