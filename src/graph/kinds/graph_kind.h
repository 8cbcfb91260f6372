/* graph_kind.h — what a kind of node is, said once: one descriptor per kind (*_kinds.c)
 * holds its TensorFlow type name, its inputs and outputs, the schema of its attributes (which the
 * text form's writer writes and its reader reads), its infer function and its kernel (its
 * gradient is named in kinds.def, beside it). The builders, the text reader and writer, inspection, folding and sessions
 * all look a kind up here. Adding an op is a line in kinds.def, its descriptor, its functions and
 * its public builder.
 * Private to the graph layer. */
#ifndef NDX_GRAPH_KIND_H
#define NDX_GRAPH_KIND_H

#include <stddef.h>

#include "dense_ops.h"
#include "ndx_graph.h"

/* Every kind of node: one TensorFlow op type each, listed once in kinds.def (which says the
 * order the public enums' runs of kinds keep). */
typedef enum graph_kind {
#define NDX_KIND(kind, name, gradient) kind,
#include "kinds.def"
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
    int combiner;       /* EmbeddingBag(Grad): an ndx_segment_op (SUM, MEAN, SQRT_N) */
    int bag_offsets;    /* EmbeddingBag(Grad): 1 for NDX_BAGS_OFFSETS */
    int validate_indices; /* ResourceGather: accepted, as TensorFlow's CPU kernel ignores it */
    int binary_output;  /* DenseBincount, DenseCountSparseOutput, SparseCountSparseOutput */
    int minlength, maxlength; /* DenseCountSparseOutput, SparseCountSparseOutput (-1: none) */
    int adjoint_a, adjoint_b; /* SparseTensorDenseMatMul */
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
 * error's code. kinds.def names each kind's (src/graph/grad: graph_gradient). */
typedef ndx_status (*graph_grad_fn)(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                    graph_grad *dxs);

/* How many outputs a node has. */
enum {
    GRAPH_OUTPUTS_COUNT = -1, /* attrs.count (dynamic_partition's num_partitions) */
    GRAPH_OUTPUTS_COUNT3 = -2 /* 3 * attrs.count (sparse_split's num_split: every piece's
                                 indices, then values, then dense_shape) */
};

/* Flags of a descriptor. */
enum {
    GRAPH_KIND_SPARSE_OUT = 1, /* outputs 0..2 are a sparse tensor (indices, values, dense_shape) */
    GRAPH_KIND_IN_PLACE = 2,   /* output 0 may be input 0 updated in place (when not narrower) */
    GRAPH_KIND_SHAPE_ONLY = 4, /* reads only input 0's dtype and shape: folds once it is known */
    /* Variables and updates (state_kinds.c). */
    GRAPH_KIND_STATEFUL = 8,   /* never folded: a Variable's value lives in each session */
    GRAPH_KIND_MUTATES = 16,   /* updates variables in place (its `vars` leading inputs are
                                  Variable nodes): no outputs, run last, after `check` */
    GRAPH_KIND_READS_VAR = 32  /* reads its variable (input 0, a Variable node's output) as it is
                                  at its place in program order, not at the start of the run:
                                  ResourceGather (session.c gives it the variable itself) */
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

/* ---- the rules of a kind's schema (kind_checks.c) ------------------------------------------ */
/* The text reader, ndx_op_by_type and the builders check a node through these. Each writes its
 * failure into msg (cap bytes); the caller adds what places it (file:line:column, "attribute"). */

/* 1 when a node of kind d may have k inputs: min_inputs..max_inputs, or, with group > 0,
 * group * n (n >= 1) plus `trailing`; else 0 with "AddV2 takes 2 inputs, not 3" in msg. */
int graph_arity_ok(const graph_kind_desc *d, int k, char *msg, size_t cap);
/* Attribute a's int in attrs (not for GRAPH_ATTR_VALUE, which has none). */
int *graph_attr_field(graph_attrs *attrs, const graph_attr_def *a);
int graph_attr_get(const graph_attrs *attrs, const graph_attr_def *a);
/* Sets every attribute of d's schema (but a Const's value) to its default. */
void graph_attrs_default(const graph_kind_desc *d, graph_attrs *attrs);
/* The index in d->attrs of the attribute called `name`, or -1. */
int graph_attr_find(const graph_kind_desc *d, const char *name);
/* 1 when every GRAPH_ATTR_REQUIRED attribute is given (bit i of `given`: d->attrs[i]); else 0
 * with "Cast needs the attribute to" in msg. */
int graph_attrs_complete(const graph_kind_desc *d, unsigned given, char *msg, size_t cap);
/* 1 when v is a value attribute a takes (INT: in [lo, hi]; BOOL: 0 or 1; POLICY: an
 * ndx_bad_indices; DTYPE: an ndx_dtype; AXES: 32 bits; VALUE: never, a Const's value is a
 * tensor); else 0 with "num_partitions = 0 is not in [1, ...]" in msg. */
int graph_attr_value_ok(const graph_attr_def *a, int64_t v, char *msg, size_t cap);

/* The descriptors, graph_kind_<name> for each line of kinds.def (defined in index_kinds.c,
 * sparse_kinds.c, math_kinds.c, shape_kinds.c, array_kinds.c, state_kinds.c,
 * embedding_kinds.c). */
#define NDX_KIND(kind, name, gradient) extern const graph_kind_desc graph_kind_##name;
#include "kinds.def"

#endif /* NDX_GRAPH_KIND_H */
