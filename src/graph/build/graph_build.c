/* graph_build.c — the builders: each checks its handles, names the node, infers its output specs
 * (its kind's descriptor, graph_kind.h) and, when every input is known at build time, computes
 * it (folding). All of them build through graph_build, as the text reader does. A failure
 * becomes the graph's first error and a failed handle; a builder given a failed handle, or called
 * on a failed graph, returns a failed handle and changes nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "graph_store.h"

/* Folding computes a node at build time only when its outputs fit in this much memory. */
#define GRAPH_FOLD_MAX_BYTES ((size_t)16 << 20)

/* One builder call: where it was made, and the node it is making. */
typedef struct build {
    ndx_scope s;
    const char *file;
    int line;
    graph_kind kind;
    const char *type;
    graph_attrs attrs;
    int num_inputs;
    const ndx_output *inputs;
    int num_outputs;
} build;

static build build_of(ndx_scope s, const char *file, int line, graph_kind kind) {
    build b;
    memset(&b, 0, sizeof b);
    b.s = s;
    b.file = file ? file : "?";
    b.line = line;
    b.kind = kind;
    b.type = graph_desc(kind)->type;
    b.num_outputs = 1;
    return b;
}

/* Records a build error for node `name` (or the op type when the node has no name yet). */
static void build_fail(const build *b, const char *name, ndx_status code, const char *msg) {
    graph_record(b->s.graph, code, b->file, b->line, name ? name : b->type, msg);
}

/* Checks the graph and every input handle; 1 when the node may be built. */
static int build_can_start(const build *b) {
    ndx_graph *g = b->s.graph;
    if (!g || g->failed) return 0;
    if (g->finished) {
        build_fail(b, NULL, NDX_E_INVALID_ARGUMENT,
                   "the graph is finished (ndx_graph_finish); no node can be added to it");
        return 0;
    }
    for (int i = 0; i < b->num_inputs; i++) {
        ndx_output in = b->inputs[i];
        if (in.op.graph == g && ndx_output_ok(in)) continue;
        char what[64], msg[160];
        graph_input_name(b->kind, b->num_inputs, i, what, sizeof what);
        snprintf(msg, sizeof msg, "input %s %s", what,
                 in.op.graph && in.op.graph != g && ndx_output_ok(in)
                     ? "comes from another graph"
                     : "is a failed handle (its builder failed, or it was never built)");
        build_fail(b, NULL, NDX_E_INVALID_ARGUMENT, msg);
        return 0;
    }
    return 1;
}

/* The node's full name: "<prefix><exact name>" from ndx_scope_named, else a unique
 * "<prefix><Type>[_k]". NULL (with the error recorded) when it cannot be had. */
static char *build_name(const build *b) {
    ndx_graph *g = b->s.graph;
    char full[GRAPH_NAME_MAX + 2], shown[64], msg[NDX_ERROR_MESSAGE_SIZE];
    const char *base = b->s.name ? graph_string(g, b->s.name) : b->type;
    const char *prefix = graph_string(g, b->s.prefix);
    if (strlen(prefix) + strlen(base) > GRAPH_NAME_MAX) {
        char shown_prefix[64];
        snprintf(msg, sizeof msg, "the node's full name (\"%s\" + \"%s\") is %zu bytes, longer "
                 "than %d (the limit of a node's full name)",
                 graph_short_name(prefix, shown_prefix, sizeof shown_prefix),
                 graph_short_name(base, shown, sizeof shown), strlen(prefix) + strlen(base),
                 GRAPH_NAME_MAX);
        build_fail(b, NULL, NDX_E_INVALID_ARGUMENT, msg);
        return NULL;
    }
    memcpy(full, prefix, strlen(prefix));
    memcpy(full + strlen(prefix), base, strlen(base) + 1);
    if (b->s.name) {
        char *name = graph_exact_name(g, full);
        if (!name) {
            snprintf(msg, sizeof msg, "the name \"%s\" is already used in this graph",
                     graph_short_name(full, shown, sizeof shown));
            build_fail(b, NULL, NDX_E_INVALID_ARGUMENT,
                       graph_name_taken(g, full) ? msg : "out of memory");
        }
        return name;
    }
    char *name = graph_unique_name(g, full);
    if (!name) build_fail(b, NULL, NDX_E_NO_MEMORY, "out of memory");
    if (name && strlen(name) > GRAPH_NAME_MAX) { /* the suffix "_12" made it too long */
        snprintf(msg, sizeof msg, "the node's full name \"%s\" is longer than %d bytes (the limit "
                 "of a node's full name)", graph_short_name(name, shown, sizeof shown),
                 GRAPH_NAME_MAX);
        build_fail(b, NULL, NDX_E_INVALID_ARGUMENT, msg);
        return NULL;
    }
    return name;
}

static graph_node *node_new(const build *b) {
    graph_node *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = b->kind;
    n->attrs = b->attrs;
    n->line = b->line;
    n->num_inputs = b->num_inputs;
    n->num_outputs = b->num_outputs;
    n->inputs = calloc((size_t)b->num_inputs + 1, sizeof *n->inputs);
    n->specs = calloc((size_t)b->num_outputs + 1, sizeof *n->specs);
    uint32_t file = graph_intern(b->s.graph, b->file);
    if (!n->inputs || !n->specs || !file) {
        graph_free_node(n);
        return NULL;
    }
    n->file = graph_string(b->s.graph, file);
    if (b->num_inputs) memcpy(n->inputs, b->inputs, (size_t)b->num_inputs * sizeof *n->inputs);
    return n;
}

/* A copy of t's bytes in memory of ndx's own allocator (free with ndx_tensor_free). */
static ndx_status copy_tensor(const ndx_tensor *t, ndx_tensor *copy, ndx_error *err) {
    size_t bytes;
    NDX_TRY(ndx_tensor_check(t, "const: value", NULL, &bytes, err));
    ndx_call c;
    NDX_TRY(ndx_call_init(&c, "const", NULL, err));
    int allocated;
    *copy = *t;
    copy->data = NULL;
    NDX_TRY(ndx_call_output(&c, t, copy, 0, "value", &allocated));
    if (bytes) memcpy(copy->data, t->data, bytes);
    return NDX_OK;
}

/* Computes a node whose inputs are all known (`in`), keeping the result as its constant value
 * and exact specs. Too large a result is simply not folded. */
static ndx_status fold(graph_node *n, const ndx_tensor *in, ndx_error *err) {
    n->values = calloc((size_t)n->num_outputs, sizeof *n->values);
    if (!n->values) return ndx_fail(err, NDX_E_NO_MEMORY, "out of memory");
    ndx_status st;
    if (n->kind == GRAPH_IDENTITY) {
        st = copy_tensor(&in[0], &n->values[0], err);
    } else {
        ndx_options o = {0};
        o.bad_indices = n->attrs.bad_indices;
        o.max_memory = GRAPH_FOLD_MAX_BYTES;
        st = graph_kernel(n, in, &o, n->values, err);
    }
    if (st != NDX_OK) {
        free(n->values); /* a failed kernel allocated nothing */
        n->values = NULL;
        return st == NDX_E_MEMORY_BUDGET ? NDX_OK : st;
    }
    for (int i = 0; i < n->num_outputs; i++) n->specs[i] = ndx_spec_of(&n->values[i]);
    return NDX_OK;
}

/* size, shape and the like need only their input's shape: known dims are as good as a
 * constant. */
static int folds_from_spec(const graph_node *n, const ndx_spec *in) {
    return (graph_desc(n->kind)->flags & GRAPH_KIND_SHAPE_ONLY) && in[0].rank != NDX_UNKNOWN &&
           ndx_dims_known(in[0].rank, in[0].shape);
}

/* Infers (and, when it can, folds) node n from its inputs' specs and constants. */
static ndx_status infer_node(ndx_graph *g, graph_node *n, ndx_error *err) {
    ndx_spec in_specs[8], *specs = in_specs;
    const ndx_tensor *in_consts[8], **consts = in_consts;
    ndx_tensor in_values[8], *values = in_values;
    void *heap = NULL;
    if (n->num_inputs > 8) {
        size_t k = (size_t)n->num_inputs;
        heap = malloc(k * (sizeof *specs + sizeof *consts + sizeof *values));
        if (!heap) return ndx_fail(err, NDX_E_NO_MEMORY, "out of memory");
        specs = heap;
        consts = (const ndx_tensor **)(specs + k);
        values = (ndx_tensor *)(consts + k);
    }
    int all_known = 1;
    for (int i = 0; i < n->num_inputs; i++) {
        graph_node *src = graph_node_at(g, n->inputs[i].op.id);
        specs[i] = src->specs[n->inputs[i].index];
        consts[i] = src->values ? &src->values[n->inputs[i].index] : NULL;
        if (consts[i]) values[i] = *consts[i];
        else all_known = 0;
    }
    ndx_status st = graph_infer(n, specs, consts, n->specs, err);
    if (st == NDX_OK && folds_from_spec(n, specs)) {
        /* A view with the right shape; these kinds never read its data. */
        static unsigned char unread;
        values[0] = ndx_view_of_spec(&specs[0]);
        if (values[0].itemsize == 0) values[0].itemsize = 1;
        values[0].data = &unread;
        all_known = 1;
    }
    if (st == NDX_OK && all_known && !(graph_desc(n->kind)->flags & GRAPH_KIND_STATEFUL))
        st = fold(n, values, err);
    free(heap);
    return st;
}

/* The attribute values no kind runs with: bad-index policies other than error and ignore (the
 * builders' other attributes are checked by the kinds' infer functions). */
static ndx_status check_attrs(const graph_node *n, ndx_error *err) {
    const graph_kind_desc *d = graph_desc(n->kind);
    char msg[160];
    for (int i = 0; i < d->num_attrs; i++) {
        const graph_attr_def *a = &d->attrs[i];
        if (a->type == GRAPH_ATTR_POLICY &&
            !graph_attr_value_ok(a, graph_attr_get(&n->attrs, a), msg, sizeof msg))
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s", msg);
    }
    return NDX_OK;
}

/* Builds the node that `b` describes; its id, or 0 with the graph's first error set. `value`
 * is a Const's value, `spec` a Placeholder's. */
static uint32_t build_node(const build *b, const ndx_tensor *value, const ndx_spec *spec) {
    if (!build_can_start(b)) return 0;
    ndx_graph *g = b->s.graph;
    graph_node *n = node_new(b);
    if (!n) {
        build_fail(b, NULL, NDX_E_NO_MEMORY, "out of memory");
        return 0;
    }
    n->name = build_name(b);
    if (!n->name) {
        graph_free_node(n);
        return 0;
    }
    ndx_error e;
    ndx_status st = NDX_OK;
    if (b->kind == GRAPH_CONST) {
        n->values = calloc(1, sizeof *n->values);
        st = n->values ? copy_tensor(value, n->values, &e)
                       : ndx_fail(&e, NDX_E_NO_MEMORY, "out of memory");
        if (st == NDX_OK) n->specs[0] = ndx_spec_of(n->values);
    } else if (b->kind == GRAPH_PLACEHOLDER) {
        st = spec ? ndx_spec_check(spec, "placeholder: spec", &e)
                  : ndx_fail(&e, NDX_E_INVALID_ARGUMENT, "placeholder: spec is NULL");
        if (st == NDX_OK) n->specs[0] = *spec;
    } else {
        st = check_attrs(n, &e);
        if (st == NDX_OK) st = infer_node(g, n, &e);
    }
    if (st == NDX_OK && !graph_append(g, n)) st = ndx_fail(&e, NDX_E_NO_MEMORY, "out of memory");
    if (st != NDX_OK) {
        build_fail(b, n->name, st, e.message);
        graph_free_node(n);
        return 0;
    }
    graph_name_node(g, n->name, g->count);
    return g->count;
}

/* A variadic kind's count (n, num_partitions): 1 .. NDX_GRAPH_MAX_ARITY, its arrays present. */
static int build_count_ok(const build *b, int n, int arrays_present) {
    if (!b->s.graph || b->s.graph->failed) return 0;
    if (n >= 1 && n <= NDX_GRAPH_MAX_ARITY && arrays_present) return 1;
    char msg[160];
    if (n < 1 || n > NDX_GRAPH_MAX_ARITY)
        snprintf(msg, sizeof msg, "%s = %d is not in [1, %d] (%d: the most a node can have, so "
                 "that its inputs and outputs can be counted by an int)",
                 graph_desc(b->kind)->count_name, n, NDX_GRAPH_MAX_ARITY, NDX_GRAPH_MAX_ARITY);
    else
        snprintf(msg, sizeof msg, "an input array is NULL");
    build_fail(b, NULL, NDX_E_INVALID_ARGUMENT, msg);
    return 0;
}

uint32_t graph_build(const char *file, int line, ndx_scope s, graph_kind kind,
                     const graph_attrs *attrs, int num_inputs, const ndx_output *inputs) {
    const graph_kind_desc *d = graph_desc(kind);
    build b = build_of(s, file, line, kind);
    if (attrs) b.attrs = *attrs;
    b.num_inputs = num_inputs;
    b.inputs = inputs;
    if (d->group) b.attrs.count = (num_inputs - d->trailing) / d->group;
    if (d->count_name && !build_count_ok(&b, b.attrs.count, 1)) return 0;
    b.num_outputs = d->outputs == GRAPH_OUTPUTS_COUNT    ? b.attrs.count
                    : d->outputs == GRAPH_OUTPUTS_COUNT3 ? 3 * b.attrs.count
                                                         : d->outputs;
    return build_node(&b, NULL, NULL);
}

static ndx_output first_output(ndx_scope s, uint32_t id) {
    ndx_output out = {{s.graph, id}, 0};
    return out;
}

/* An op chosen by an enum value outside its enum: the error on the would-be node (of its
 * family's first kind, typed `type`), and the failed output. */
static ndx_output refuse_variant(ndx_scope s, const char *file, int line, graph_kind first,
                                 const char *type, const char *msg) {
    build b = build_of(s, file, line, first);
    b.type = type;
    if (build_can_start(&b)) build_fail(&b, NULL, NDX_E_INVALID_ARGUMENT, msg);
    return first_output(s, 0);
}

ndx_output graph_refuse_variant(ndx_scope s, const char *file, int line, graph_kind first,
                                const char *type, const char *msg) {
    return refuse_variant(s, file, line, first, type, msg);
}

/* A node of `kind` with one output, or a sparse one, from these inputs. */
static ndx_output build_dense(const char *file, int line, ndx_scope s, graph_kind kind,
                              const graph_attrs *attrs, int num_inputs, const ndx_output *inputs) {
    return first_output(s, graph_build(file, line, s, kind, attrs, num_inputs, inputs));
}

static ndx_sparse_output build_sparse(const char *file, int line, ndx_scope s, graph_kind kind,
                                      const graph_attrs *attrs, int num_inputs,
                                      const ndx_output *inputs) {
    ndx_operation op = {s.graph, graph_build(file, line, s, kind, attrs, num_inputs, inputs)};
    return ndx_operation_sparse_output(op);
}

/* A variadic builder's n: 1 .. NDX_GRAPH_MAX_ARITY, with its arrays present; then its inputs,
 * `group` * n of them, in a new array (NULL with the error recorded). */
static ndx_output *variadic_inputs(const char *file, int line, ndx_scope s, graph_kind kind,
                                   int n, int arrays_present) {
    build b = build_of(s, file, line, kind);
    if (!build_count_ok(&b, n, arrays_present)) return NULL;
    ndx_output *in = malloc((size_t)graph_desc(kind)->group * (size_t)n * sizeof *in);
    if (!in) build_fail(&b, NULL, NDX_E_NO_MEMORY, "out of memory");
    return in;
}

/* ---- the builders ------------------------------------------------------------------------- */

ndx_output ndx_op_const_at(const char *file, int line, ndx_scope s, const ndx_tensor *value) {
    build b = build_of(s, file, line, GRAPH_CONST);
    if (!value) {
        if (build_can_start(&b)) build_fail(&b, NULL, NDX_E_INVALID_ARGUMENT, "value is NULL");
        return first_output(s, 0);
    }
    return first_output(s, build_node(&b, value, NULL));
}

/* A scalar constant converted from `src` (int64 or float64) by cast. */
static ndx_output const_scalar(const char *file, int line, ndx_scope s, ndx_dtype dtype,
                               const ndx_tensor *src) {
    build b = build_of(s, file, line, GRAPH_CONST);
    if (!build_can_start(&b)) return first_output(s, 0);
    uint64_t bytes[2] = {0, 0}; /* the widest scalar: complex128 */
    ndx_tensor value = ndx_tensor_make(dtype, 0, NULL, bytes);
    ndx_options one = {1, NDX_BAD_INDICES_ERROR, 0, NULL};
    ndx_error e;
    if (ndx_cast(src, dtype, &one, &value, &e) != NDX_OK) {
        build_fail(&b, NULL, e.code, e.message);
        return first_output(s, 0);
    }
    return first_output(s, build_node(&b, &value, NULL));
}

ndx_output ndx_op_const_int_at(const char *file, int line, ndx_scope s, ndx_dtype dtype,
                               int64_t value) {
    ndx_tensor src = ndx_tensor_make(NDX_INT64, 0, NULL, &value);
    return const_scalar(file, line, s, dtype, &src);
}

ndx_output ndx_op_const_float_at(const char *file, int line, ndx_scope s, ndx_dtype dtype,
                                 double value) {
    ndx_tensor src = ndx_tensor_make(NDX_FLOAT64, 0, NULL, &value);
    return const_scalar(file, line, s, dtype, &src);
}

ndx_output ndx_op_placeholder_at(const char *file, int line, ndx_scope s, const ndx_spec *spec) {
    build b = build_of(s, file, line, GRAPH_PLACEHOLDER);
    return first_output(s, build_node(&b, NULL, spec));
}

ndx_output ndx_op_identity_at(const char *file, int line, ndx_scope s, ndx_output x) {
    return build_dense(file, line, s, GRAPH_IDENTITY, NULL, 1, &x);
}

ndx_output ndx_op_gather_nd_at(const char *file, int line, ndx_scope s, ndx_output params,
                               ndx_output indices, const ndx_gather_nd_attrs *attrs) {
    graph_attrs a = {0};
    if (attrs) {
        a.batch_dims = attrs->batch_dims;
        a.bad_indices = (int)attrs->bad_indices;
    }
    ndx_output in[2] = {params, indices};
    return build_dense(file, line, s, GRAPH_GATHER_ND, &a, 2, in);
}

ndx_output ndx_op_scatter_nd_at(const char *file, int line, ndx_scope s, ndx_output indices,
                                ndx_output updates, ndx_output shape,
                                const ndx_scatter_attrs *attrs) {
    graph_attrs a = {0};
    if (attrs) a.bad_indices = (int)attrs->bad_indices;
    ndx_output in[3] = {indices, updates, shape};
    return build_dense(file, line, s, GRAPH_SCATTER_ND, &a, 3, in);
}

ndx_output ndx_op_tensor_scatter_nd_at(const char *file, int line, ndx_scope s, ndx_scatter_op op,
                                       ndx_output tensor, ndx_output indices, ndx_output updates,
                                       const ndx_scatter_attrs *attrs) {
    if ((unsigned)op > (unsigned)(GRAPH_TENSOR_SCATTER_MAX - GRAPH_TENSOR_SCATTER_UPDATE)) {
        char msg[64];
        snprintf(msg, sizeof msg, "tensor_scatter_nd: op %d is not an ndx_scatter_op", (int)op);
        return refuse_variant(s, file, line, GRAPH_TENSOR_SCATTER_UPDATE, "TensorScatter", msg);
    }
    graph_attrs a = {0};
    if (attrs) a.bad_indices = (int)attrs->bad_indices;
    ndx_output in[3] = {tensor, indices, updates};
    return build_dense(file, line, s, (graph_kind)(GRAPH_TENSOR_SCATTER_UPDATE + (int)op), &a, 3,
                       in);
}

ndx_output ndx_op_dynamic_stitch_at(const char *file, int line, ndx_scope s, int parallel, int n,
                                    const ndx_output *indices, const ndx_output *data) {
    graph_kind kind = parallel ? GRAPH_PARALLEL_STITCH : GRAPH_STITCH;
    ndx_output *in = variadic_inputs(file, line, s, kind, n, indices && data);
    if (!in) return first_output(s, 0);
    memcpy(in, indices, (size_t)n * sizeof *in);
    memcpy(in + n, data, (size_t)n * sizeof *in);
    ndx_output out = build_dense(file, line, s, kind, NULL, 2 * n, in);
    free(in);
    return out;
}

ndx_operation ndx_op_dynamic_partition_at(const char *file, int line, ndx_scope s,
                                          ndx_output data, ndx_output partitions,
                                          int num_partitions, ndx_output *outs) {
    graph_attrs a = {0};
    a.count = num_partitions;
    ndx_output in[2] = {data, partitions};
    ndx_operation op = {s.graph, graph_build(file, line, s, GRAPH_PARTITION, &a, 2, in)};
    for (int i = 0; outs && i < num_partitions; i++) outs[i] = ndx_operation_output(op, i);
    return op;
}

ndx_sparse_output ndx_op_sparse_concat_at(const char *file, int line, ndx_scope s, int axis, int n,
                                          const ndx_sparse_output *inputs,
                                          int expand_nonconcat_dim) {
    ndx_sparse_output failed = {first_output(s, 0), first_output(s, 0), first_output(s, 0)};
    ndx_output *in = variadic_inputs(file, line, s, GRAPH_SPARSE_CONCAT, n, inputs != NULL);
    if (!in) return failed;
    /* TensorFlow's order: every indices, then every values, then every shape. */
    for (int i = 0; i < n; i++) {
        in[i] = inputs[i].indices;
        in[n + i] = inputs[i].values;
        in[2 * n + i] = inputs[i].dense_shape;
    }
    graph_attrs a = {0};
    a.axis = axis;
    a.expand = expand_nonconcat_dim != 0;
    ndx_sparse_output out = build_sparse(file, line, s, GRAPH_SPARSE_CONCAT, &a, 3 * n, in);
    free(in);
    return out;
}

ndx_sparse_output ndx_op_sparse_reorder_at(const char *file, int line, ndx_scope s,
                                           ndx_sparse_output sp) {
    ndx_output in[3] = {sp.indices, sp.values, sp.dense_shape};
    return build_sparse(file, line, s, GRAPH_SPARSE_REORDER, NULL, 3, in);
}

ndx_output ndx_op_sparse_to_dense_at(const char *file, int line, ndx_scope s,
                                     ndx_sparse_output sp, const ndx_output *default_value) {
    ndx_output in[4] = {sp.indices, sp.values, sp.dense_shape, {{NULL, 0}, 0}};
    if (default_value) in[3] = *default_value;
    return build_dense(file, line, s, GRAPH_SPARSE_TO_DENSE, NULL, default_value ? 4 : 3, in);
}

ndx_sparse_output ndx_op_dense_to_sparse_at(const char *file, int line, ndx_scope s,
                                            ndx_output x) {
    return build_sparse(file, line, s, GRAPH_DENSE_TO_SPARSE, NULL, 1, &x);
}

ndx_output ndx_op_binary_at(const char *file, int line, ndx_scope s, ndx_binary_kind kind,
                            ndx_output x, ndx_output y) {
    if ((unsigned)kind > (unsigned)(GRAPH_LOGICAL_OR - GRAPH_ADD))
        return refuse_variant(s, file, line, GRAPH_ADD, "Binary", "kind is not an ndx_binary_kind");
    ndx_output in[2] = {x, y};
    return build_dense(file, line, s, (graph_kind)(GRAPH_ADD + (int)kind), NULL, 2, in);
}

ndx_output ndx_op_cast_at(const char *file, int line, ndx_scope s, ndx_output x, ndx_dtype dtype) {
    graph_attrs a = {0};
    a.dtype = (int)dtype;
    return build_dense(file, line, s, GRAPH_CAST, &a, 1, &x);
}

ndx_output ndx_op_range_at(const char *file, int line, ndx_scope s, ndx_output start,
                           ndx_output limit, ndx_output delta) {
    ndx_output in[3] = {start, limit, delta};
    return build_dense(file, line, s, GRAPH_RANGE, NULL, 3, in);
}

ndx_output ndx_op_size_at(const char *file, int line, ndx_scope s, ndx_output x, ndx_dtype dtype) {
    graph_attrs a = {0};
    a.dtype = (int)dtype;
    return build_dense(file, line, s, GRAPH_SIZE, &a, 1, &x);
}

ndx_output ndx_op_shape_at(const char *file, int line, ndx_scope s, ndx_output x,
                           ndx_dtype dtype) {
    graph_attrs a = {0};
    a.dtype = (int)dtype;
    return build_dense(file, line, s, GRAPH_SHAPE, &a, 1, &x);
}

ndx_operation ndx_op_broadcast_gradient_args_at(const char *file, int line, ndx_scope s,
                                                ndx_output s0, ndx_output s1, ndx_output *outs) {
    ndx_output in[2] = {s0, s1};
    ndx_operation op = {s.graph, graph_build(file, line, s, GRAPH_BROADCAST_GRADIENT_ARGS, NULL, 2,
                                             in)};
    for (int i = 0; outs && i < 2; i++) outs[i] = ndx_operation_output(op, i);
    return op;
}

ndx_output ndx_op_unary_at(const char *file, int line, ndx_scope s, ndx_unary_kind kind,
                           ndx_output x) {
    if ((unsigned)kind > (unsigned)(GRAPH_SQRT - GRAPH_NEG))
        return refuse_variant(s, file, line, GRAPH_NEG, "Unary", "kind is not an ndx_unary_kind");
    return build_dense(file, line, s, (graph_kind)(GRAPH_NEG + (int)kind), NULL, 1, &x);
}

ndx_output ndx_op_fill_at(const char *file, int line, ndx_scope s, ndx_output dims,
                          ndx_output value) {
    ndx_output in[2] = {dims, value};
    return build_dense(file, line, s, GRAPH_FILL, NULL, 2, in);
}

ndx_output ndx_op_reshape_at(const char *file, int line, ndx_scope s, ndx_output tensor,
                             ndx_output shape) {
    ndx_output in[2] = {tensor, shape};
    return build_dense(file, line, s, GRAPH_RESHAPE, NULL, 2, in);
}

ndx_output ndx_op_reduce_sum_at(const char *file, int line, ndx_scope s, ndx_output input,
                                ndx_output axes, int keep_dims) {
    graph_attrs a = {0};
    a.keep_dims = keep_dims != 0;
    ndx_output in[2] = {input, axes};
    return build_dense(file, line, s, GRAPH_SUM, &a, 2, in);
}

static ndx_output reduction(const char *file, int line, ndx_scope s, graph_kind kind,
                            ndx_output input, ndx_output axes, int keep_dims) {
    graph_attrs a = {0};
    a.keep_dims = keep_dims != 0;
    ndx_output in[2] = {input, axes};
    return build_dense(file, line, s, kind, &a, 2, in);
}

ndx_output ndx_op_reduce_mean_at(const char *file, int line, ndx_scope s, ndx_output input,
                                 ndx_output axes, int keep_dims) {
    return reduction(file, line, s, GRAPH_MEAN, input, axes, keep_dims);
}

ndx_output ndx_op_reduce_max_at(const char *file, int line, ndx_scope s, ndx_output input,
                                ndx_output axes, int keep_dims) {
    return reduction(file, line, s, GRAPH_MAX, input, axes, keep_dims);
}

ndx_output ndx_op_reduce_min_at(const char *file, int line, ndx_scope s, ndx_output input,
                                ndx_output axes, int keep_dims) {
    return reduction(file, line, s, GRAPH_MIN, input, axes, keep_dims);
}

ndx_output ndx_op_select_at(const char *file, int line, ndx_scope s, ndx_output condition,
                            ndx_output x, ndx_output y) {
    ndx_output in[3] = {condition, x, y};
    return build_dense(file, line, s, GRAPH_SELECT_V2, NULL, 3, in);
}

ndx_output ndx_op_where_at(const char *file, int line, ndx_scope s, ndx_output condition) {
    return build_dense(file, line, s, GRAPH_WHERE, NULL, 1, &condition);
}

/* ---- gather, one_hot, unique, boolean_mask (gather_kinds.c) ------------------------------- */

ndx_output ndx_op_gather_at(const char *file, int line, ndx_scope s, ndx_output params,
                            ndx_output indices, ndx_output axis, const ndx_gather_attrs *attrs) {
    graph_attrs a = {0};
    if (attrs) {
        a.batch_dims = attrs->batch_dims;
        a.bad_indices = (int)attrs->bad_indices;
    }
    ndx_output in[3] = {params, indices, axis};
    return build_dense(file, line, s, GRAPH_GATHER_V2, &a, 3, in);
}

ndx_output ndx_op_one_hot_at(const char *file, int line, ndx_scope s, ndx_output indices,
                             ndx_output depth, ndx_output on_value, ndx_output off_value,
                             int axis) {
    graph_attrs a = {0};
    a.axis = axis;
    ndx_output in[4] = {indices, depth, on_value, off_value};
    return build_dense(file, line, s, GRAPH_ONE_HOT, &a, 4, in);
}

/* A node of several outputs, also stored in outs[0..count) when outs is not NULL. */
static ndx_operation build_outputs(const char *file, int line, ndx_scope s, graph_kind kind,
                                   const graph_attrs *a, int n, const ndx_output *in, int count,
                                   ndx_output *outs) {
    ndx_operation op = {s.graph, graph_build(file, line, s, kind, a, n, in)};
    for (int i = 0; outs && i < count; i++) outs[i] = ndx_operation_output(op, i);
    return op;
}

ndx_operation ndx_op_unique_at(const char *file, int line, ndx_scope s, ndx_output x,
                               ndx_dtype out_idx, int with_counts, ndx_output *outs) {
    graph_attrs a = {0};
    a.dtype = (int)out_idx;
    graph_kind kind = with_counts ? GRAPH_UNIQUE_WITH_COUNTS : GRAPH_UNIQUE;
    return build_outputs(file, line, s, kind, &a, 1, &x, with_counts ? 3 : 2, outs);
}

ndx_operation ndx_op_unique_v2_at(const char *file, int line, ndx_scope s, ndx_output x,
                                  ndx_output axis, ndx_dtype out_idx, int with_counts,
                                  ndx_output *outs) {
    graph_attrs a = {0};
    a.dtype = (int)out_idx;
    ndx_output in[2] = {x, axis};
    graph_kind kind = with_counts ? GRAPH_UNIQUE_WITH_COUNTS_V2 : GRAPH_UNIQUE_V2;
    return build_outputs(file, line, s, kind, &a, 2, in, with_counts ? 3 : 2, outs);
}

ndx_operation ndx_op_setdiff1d_at(const char *file, int line, ndx_scope s, ndx_output x,
                                  ndx_output y, ndx_dtype out_idx, ndx_output *outs) {
    graph_attrs a = {0};
    a.dtype = (int)out_idx;
    ndx_output in[2] = {x, y};
    return build_outputs(file, line, s, GRAPH_LIST_DIFF, &a, 2, in, 2, outs);
}

ndx_output ndx_op_boolean_mask_at(const char *file, int line, ndx_scope s, ndx_output tensor,
                                  ndx_output mask, int axis) {
    graph_attrs a = {0};
    a.axis = axis;
    ndx_output in[2] = {tensor, mask};
    return build_dense(file, line, s, GRAPH_BOOLEAN_MASK, &a, 2, in);
}

/* ---- segment reductions (segment_kinds.c) --------------------------------------------------- */

/* Refuses an op outside [0, count) of ndx_segment_op as a build error of the family's first
 * kind; else the kind `first + op`. */
static int segment_kind(ndx_scope s, const char *file, int line, graph_kind first,
                        const char *type, ndx_segment_op op, int count, ndx_output *refused) {
    if ((int)op >= 0 && (int)op < count) return (int)first + (int)op;
    char msg[80];
    snprintf(msg, sizeof msg, "%s: op %d is not one of its ndx_segment_op values", type, (int)op);
    *refused = refuse_variant(s, file, line, first, type, msg);
    return -1;
}

ndx_output ndx_op_unsorted_segment_reduce_at(const char *file, int line, ndx_scope s,
                                             ndx_segment_op op, ndx_output data,
                                             ndx_output segment_ids, ndx_output num_segments) {
    ndx_output r;
    int k = segment_kind(s, file, line, GRAPH_UNSORTED_SEGMENT_SUM, "UnsortedSegment", op, 6, &r);
    if (k < 0) return r;
    ndx_output in[3] = {data, segment_ids, num_segments};
    return build_dense(file, line, s, (graph_kind)k, NULL, 3, in);
}

ndx_output ndx_op_segment_reduce_at(const char *file, int line, ndx_scope s, ndx_segment_op op,
                                    ndx_output data, ndx_output segment_ids) {
    ndx_output r;
    int k = segment_kind(s, file, line, GRAPH_SEGMENT_SUM, "Segment", op, 5, &r);
    if (k < 0) return r;
    ndx_output in[2] = {data, segment_ids};
    return build_dense(file, line, s, (graph_kind)k, NULL, 2, in);
}

/* SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]: SUM, MEAN, SQRT_N are 0, 4, 5. */
static int sparse_segment_kind(ndx_scope s, const char *file, int line, ndx_segment_op op,
                               int with_n, ndx_output *refused) {
    graph_kind first = with_n ? GRAPH_SPARSE_SEGMENT_SUM_WITH_NUM_SEGMENTS
                              : GRAPH_SPARSE_SEGMENT_SUM;
    if (op == NDX_SEGMENT_SUM) return (int)first;
    if (op == NDX_SEGMENT_MEAN || op == NDX_SEGMENT_SQRT_N)
        return (int)first + (int)op - (int)NDX_SEGMENT_MEAN + 1;
    return segment_kind(s, file, line, first, "SparseSegment", op, 0, refused);
}

ndx_output ndx_op_sparse_segment_reduce_at(const char *file, int line, ndx_scope s,
                                           ndx_segment_op op, ndx_output data,
                                           ndx_output indices, ndx_output segment_ids) {
    ndx_output r;
    int k = sparse_segment_kind(s, file, line, op, 0, &r);
    if (k < 0) return r;
    ndx_output in[3] = {data, indices, segment_ids};
    return build_dense(file, line, s, (graph_kind)k, NULL, 3, in);
}

ndx_output ndx_op_sparse_segment_reduce_with_num_segments_at(
    const char *file, int line, ndx_scope s, ndx_segment_op op, ndx_output data,
    ndx_output indices, ndx_output segment_ids, ndx_output num_segments) {
    ndx_output r;
    int k = sparse_segment_kind(s, file, line, op, 1, &r);
    if (k < 0) return r;
    ndx_output in[4] = {data, indices, segment_ids, num_segments};
    return build_dense(file, line, s, (graph_kind)k, NULL, 4, in);
}

ndx_output ndx_op_embedding_bag_at(const char *file, int line, ndx_scope s, ndx_output params,
                                   ndx_output ids, ndx_output bags, ndx_output weights,
                                   ndx_output max_norm, ndx_output num_bags,
                                   ndx_segment_op combiner, ndx_bag_form form) {
    if (form != NDX_BAGS_SEGMENT_IDS && form != NDX_BAGS_OFFSETS) {
        char msg[64];
        snprintf(msg, sizeof msg, "embedding_bag: form %d is not an ndx_bag_form", (int)form);
        return refuse_variant(s, file, line, GRAPH_EMBEDDING_BAG, "EmbeddingBag", msg);
    }
    graph_attrs a = {0};
    a.combiner = (int)combiner;
    a.bag_offsets = form == NDX_BAGS_OFFSETS;
    ndx_output in[6] = {params, ids, bags, weights, max_norm, num_bags};
    return build_dense(file, line, s, GRAPH_EMBEDDING_BAG, &a, 6, in);
}

/* ---- bincount (bincount_kinds.c) ------------------------------------------------------------- */

ndx_output ndx_op_bincount_at(const char *file, int line, ndx_scope s, ndx_output arr,
                              ndx_output size, ndx_output weights) {
    ndx_output in[3] = {arr, size, weights};
    return build_dense(file, line, s, GRAPH_BINCOUNT, NULL, 3, in);
}

ndx_output ndx_op_dense_bincount_at(const char *file, int line, ndx_scope s, ndx_output input,
                                    ndx_output size, ndx_output weights, int binary_output) {
    graph_attrs a = {0};
    a.binary_output = binary_output != 0;
    ndx_output in[3] = {input, size, weights};
    return build_dense(file, line, s, GRAPH_DENSE_BINCOUNT, &a, 3, in);
}
