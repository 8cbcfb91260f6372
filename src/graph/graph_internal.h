/* graph_internal.h — what the graph layer's files share: the node record, the op kinds with
 * their infer and kernel functions, and the graph's own bookkeeping. Private to libndx. */
#ifndef NDX_GRAPH_INTERNAL_H
#define NDX_GRAPH_INTERNAL_H

#include "core.h"
#include "glue.h"
#include "ndx_graph.h"

/* Every kind of node, in one order shared by the tables of graph_ops.c. */
typedef enum graph_kind {
    GRAPH_CONST = 0,
    GRAPH_PLACEHOLDER,
    GRAPH_IDENTITY,
    GRAPH_GATHER_ND,
    GRAPH_SCATTER_ND,
    GRAPH_TENSOR_SCATTER,
    GRAPH_STITCH,
    GRAPH_PARTITION,
    GRAPH_SPARSE_CONCAT,
    GRAPH_SPARSE_REORDER,
    GRAPH_SPARSE_TO_DENSE,
    GRAPH_DENSE_TO_SPARSE,
    GRAPH_BINARY,
    GRAPH_CAST,
    GRAPH_RANGE,
    GRAPH_SIZE,
    GRAPH_SHAPE,
    GRAPH_KIND_COUNT
} graph_kind;

/* A node's attributes; each kind reads the fields it has. */
typedef struct graph_attrs {
    int batch_dims;             /* gather_nd */
    ndx_bad_indices bad_indices; /* gather_nd, the scatters */
    ndx_scatter_op scatter_op;  /* tensor_scatter_nd_* */
    int parallel;               /* stitch: ParallelDynamicStitch */
    int count;                  /* stitch: n; partition: num_partitions; sparse_concat: n */
    int axis;                   /* sparse_concat */
    int expand;                 /* sparse_concat: expand_nonconcat_dim */
    int has_default;            /* sparse_to_dense: a default_value input follows the three */
    ndx_binary_op binary;       /* binary */
    ndx_dtype dtype;            /* cast: to; size, shape: out dtype */
} graph_attrs;

typedef struct graph_node {
    char *name;
    graph_kind kind;
    const char *file; /* interned in the graph */
    int line;
    graph_attrs attrs;
    int num_inputs;
    ndx_output *inputs;
    int num_outputs;
    ndx_spec *specs;
    ndx_tensor *values; /* num_outputs constants (a Const, or a folded node), or NULL */
    int64_t first_value; /* index of output 0 among all outputs of the graph */
} graph_node;

/* The type name ("GatherNd") of a node kind, and of a node (binary and scatter kinds differ by
 * attribute). */
const char *graph_type_name(const graph_node *n);

/* TensorFlow's type names of the tensor_scatter_nd ops ("TensorScatterAdd") and of the binary
 * ops ("NotEqual"; NULL for a value outside the enum). */
const char *graph_scatter_type(ndx_scatter_op op);
const char *graph_binary_type(ndx_binary_op op);
/* Writes how input i of a node of this kind is called in messages: "'params'",
 * "'indices[2]'" (dynamic_stitch), "'inputs[1].values'" (sparse_concat). */
void graph_input_name(graph_kind kind, const graph_attrs *a, int i, char *buf, size_t cap);

/* Infers a node's output specs from its input specs and constant inputs (consts[i] NULL when
 * input i is not known at build time): the op's infer function, plus what constants reveal
 * (graph_infer_op, graph_ops.c). graph_infer (graph_widths.c) first gives the string inputs
 * that share one type the widest of their widths (unknown when one is): TensorFlow's strings
 * have no width, so they may differ. */
ndx_status graph_infer(const graph_node *n, const ndx_spec *in, const ndx_tensor *const *consts,
                       ndx_spec *out, ndx_error *err);
ndx_status graph_infer_op(const graph_node *n, const ndx_spec *in,
                          const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err);

/* Runs a node's op on complete inputs: outputs with data NULL are allocated through
 * opt->allocator (a session's pool, or ndx's own when folding); GRAPH_IDENTITY and
 * GRAPH_CONST are not kernels (sessions and folding treat them themselves). graph_kernel
 * (graph_widths.c) widens the narrower of the string inputs that share one type into scratch
 * from opt->allocator, then runs graph_kernel_op (graph_ops.c), the op itself. */
ndx_status graph_kernel(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                        ndx_tensor *out, ndx_error *err);
ndx_status graph_kernel_op(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                           ndx_tensor *out, ndx_error *err);
/* 1 when node n's output 0 may be its input 0 updated in place (a tensor_scatter whose
 * tensor is at least as wide as its updates, which then need no widening of the tensor). */
int graph_in_place_ok(const graph_node *n, const ndx_tensor *in);

/* The node with id `id` (1-based), or NULL. */
graph_node *graph_node_at(const ndx_graph *g, uint32_t id);
/* Total outputs over all nodes (sessions size their tables by it). */
int64_t graph_value_count(const ndx_graph *g);
/* Largest num_inputs and num_outputs of any node. */
int graph_max_inputs(const ndx_graph *g);
int graph_max_outputs(const ndx_graph *g);
/* 1 once ndx_graph_finish succeeded. */
int graph_is_finished(const ndx_graph *g);

/* "file:line: name: " + message, the form of every graph error (node n's file, line and name). */
ndx_status graph_fail_at(ndx_error *err, ndx_status code, const graph_node *n, const char *what);
/* "<file><pos>: <name>: <msg>" (pos ":12" or ":12:5"; no "<name>: " when name is ""), made to
 * fit the error's buffer without ever cutting msg: the file is cut to its last path component,
 * then the file and the name give up their beginnings ("...bed/GatherNd"). */
ndx_status graph_fail_where(ndx_error *err, ndx_status code, const char *file, const char *pos,
                            const char *name, const char *msg);
/* name itself when it is shorter than cap, else its beginning and end around "..." in buf: a
 * name quoted inside a message. */
const char *graph_short_name(const char *name, char *buf, size_t cap);

#endif /* NDX_GRAPH_INTERNAL_H */
