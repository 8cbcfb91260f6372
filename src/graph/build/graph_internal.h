/* graph_internal.h — what the graph layer's files share: the node record, the op kinds with
 * their infer and kernel functions, and the graph's own bookkeeping. Private to libndx. */
#ifndef NDX_GRAPH_INTERNAL_H
#define NDX_GRAPH_INTERNAL_H

#include "core.h"
#include "graph_kind.h"

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

/* A node's TensorFlow type name ("GatherNd") and the variant of its kind's shared functions
 * (its ndx_scatter_op, ndx_binary_op, or 1 for ParallelDynamicStitch). */
static inline const char *graph_type_name(const graph_node *n) {
    return graph_desc(n->kind)->type;
}
static inline int graph_variant(const graph_node *n) { return graph_desc(n->kind)->variant; }

/* Infers a node's output specs from its input specs and constant inputs (consts[i] NULL when
 * input i is not known at build time): its kind's infer function (the op's own, plus what
 * constants reveal). graph_infer (graph_widths.c) first gives the string inputs
 * that share one type the widest of their widths (unknown when one is): TensorFlow's strings
 * have no width, so they may differ. */
ndx_status graph_infer(const graph_node *n, const ndx_spec *in, const ndx_tensor *const *consts,
                       ndx_spec *out, ndx_error *err);

/* Runs a node's op on complete inputs: outputs with data NULL are allocated through
 * opt->allocator (a session's pool, or ndx's own when folding); GRAPH_IDENTITY and
 * GRAPH_CONST are not kernels (sessions and folding treat them themselves). graph_kernel
 * (graph_widths.c) widens the narrower of the string inputs that share one type into scratch
 * from opt->allocator, then runs its kind's kernel, the op itself. */
ndx_status graph_kernel(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
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
