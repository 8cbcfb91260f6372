/* state_kinds.c — variables and the nodes that update them in place: Variable (TensorFlow's
 * VarHandleOp and ReadVariableOp in one node: the value at the start of the run),
 * ReadVariableOp (the value after the updates of the variable built before it), the sparse
 * optimizer steps ResourceSparseApplyGradientDescent and ResourceSparseApplyAdagrad(V2),
 * ResourceScatterNdAdd (tensor_scatter_nd_add into the variable), AssignAddVariableOp /
 * AssignSubVariableOp and AssignVariableOp, the row scatters ResourceScatterUpdate / Add / Sub /
 * Mul / Div / Min / Max, and ResourceGather (a read of rows of the variable at its place in
 * program order, as ReadVariableOp reads all of it, without the copy).
 *
 * An update has no outputs. A session runs it after every other node of the run: first its
 * `check` (every dtype, shape and index its `run` will see), for every update, and only when all
 * of them pass, each `run`, which writes the variable (in[0], and in[1] for Adagrad's accum: the
 * session's own storage). A run that reads a variable with ReadVariableOp runs every node in build
 * order instead, updates into copies the run commits at its end (session_staged.c); `check` then
 * `run` still. ReadVariableOp has no kernel: sessions give it its value. */
#include <stdio.h>
#include <stdlib.h>

#include "graph_internal.h"
#include "index.h"
#include "string_width.h"
#include "scatter_rows.h"
#include "sparse_apply.h"

/* ---- Variable ----------------------------------------------------------------------------- */

/* 0 when `init` is computed from nothing but constants; else the id of a Placeholder or Variable
 * it reads (nodes come in build order, so one sweep down from it finds every node it needs). */
static uint32_t init_source(ndx_output init, ndx_error *err, int *no_memory) {
    ndx_graph *g = init.op.graph;
    unsigned char *needed = calloc((size_t)init.op.id + 1, 1);
    *no_memory = needed == NULL;
    if (!needed) {
        ndx_fail(err, NDX_E_NO_MEMORY, "out of memory");
        return 0;
    }
    uint32_t found = 0;
    needed[init.op.id] = 1;
    for (uint32_t id = init.op.id; id >= 1 && !found; id--) {
        const graph_node *n = graph_node_at(g, id);
        if (!needed[id] || n->values) continue;
        if (n->kind == GRAPH_PLACEHOLDER || n->kind == GRAPH_VARIABLE) found = id;
        for (int i = 0; i < n->num_inputs; i++) needed[n->inputs[i].op.id] = 1;
    }
    free(needed);
    return found;
}

static ndx_status infer_variable(const graph_node *n, const ndx_spec *in,
                                 const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    if (!consts[0]) {
        int no_memory;
        uint32_t source = init_source(n->inputs[0], err, &no_memory);
        if (no_memory) return NDX_E_NO_MEMORY;
        if (source)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "variable: the initial value must be computed from constants only, "
                            "but it reads the %s '%s'",
                            graph_type_name(graph_node_at(n->inputs[0].op.graph, source)),
                            graph_node_at(n->inputs[0].op.graph, source)->name);
        if (in[0].rank == NDX_UNKNOWN || !ndx_dims_known(in[0].rank, in[0].shape) ||
            (in[0].dtype == NDX_STRING && in[0].itemsize == 0))
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "variable: the initial value's shape must be known when the graph "
                            "is built");
    }
    *out = in[0];
    return NDX_OK;
}

static const char *const variable_inputs[] = {"init"};
const graph_kind_desc graph_kind_variable = {
    .kind = GRAPH_VARIABLE, .type = "Variable", .min_inputs = 1, .max_inputs = 1,
    .inputs = variable_inputs, .outputs = 1, .flags = GRAPH_KIND_STATEFUL,
    .infer = infer_variable};

/* ---- what every update checks -------------------------------------------------------------- */

/* The first `vars` inputs of an update must be distinct Variable nodes' outputs. */
static ndx_status check_var_inputs(const graph_node *n, ndx_error *err) {
    const graph_kind_desc *d = graph_desc(n->kind);
    for (int i = 0; i < d->vars; i++) {
        const ndx_output in = n->inputs[i];
        const graph_node *src = graph_node_at(in.op.graph, in.op.id);
        if (src->kind != GRAPH_VARIABLE)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: input '%s' must be a Variable node's output, not a %s's",
                            d->type, d->inputs[i], graph_type_name(src));
        for (int j = 0; j < i; j++)
            if (n->inputs[j].op.id == in.op.id)
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                "%s: '%s' and '%s' are the same variable", d->type,
                                d->inputs[j], d->inputs[i]);
    }
    return NDX_OK;
}

/* Every row of `indices` (the last dim holds the coordinates) must lie in the first dims of
 * var; the message the ops give at run time otherwise. */
static ndx_status check_rows(const char *op, const ndx_tensor *indices, const ndx_tensor *var,
                             int threads, ndx_error *err) {
    int depth = (int)indices->shape[indices->rank - 1];
    int64_t rows;
    if (!ndx_dims_product(indices->rank - 1, indices->shape, &rows) || rows == 0 || depth == 0)
        return NDX_OK;
    ndx_index_plan plan;
    ndx_index_plan_init(&plan, depth, var->shape);
    int64_t bad = ndx_index_first_bad_row(&plan, indices->data, indices->dtype, rows, threads);
    if (bad < 0) return NDX_OK;
    return ndx_fail_bad_index_row(err, op, indices, bad, "var", var->rank, var->shape);
}

/* check_rows for indices of rank 1, one row number each. */
static ndx_status check_row_numbers(const char *op, const ndx_tensor *indices,
                                    const ndx_tensor *var, int threads, ndx_error *err) {
    ndx_tensor rows = *indices;
    rows.rank = 2;
    rows.shape[1] = 1;
    return check_rows(op, &rows, var, threads, err);
}

/* The kind's infer on the specs of the tensors an update is about to get: the same checks, now
 * on complete shapes. */
static ndx_status infer_on(const graph_node *n, const ndx_tensor *in, ndx_error *err) {
    ndx_spec specs[6];
    for (int i = 0; i < n->num_inputs; i++) specs[i] = ndx_spec_of(&in[i]);
    return graph_desc(n->kind)->infer(n, specs, NULL, NULL, err);
}

/* ---- the sparse optimizer steps ------------------------------------------------------------ */

/* ndx.h: each index is read once into scratch of 8 bytes (the indices are the last input),
 * and summing duplicates takes its links and table beside them. */
static size_t apply_scratch(const graph_node *n, const ndx_tensor *in) {
    int64_t entries = in[n->num_inputs - 1].shape[0];
    return entries > 0 ? sparse_apply_scratch_bytes(entries, n->attrs.sum_duplicates) : 0;
}

static ndx_status infer_apply_sgd(const graph_node *n, const ndx_spec *in,
                                  const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    (void)out;
    NDX_TRY(check_var_inputs(n, err));
    return ndx_sparse_apply_sgd_infer(&in[0], &in[1], &in[2], &in[3], NULL, err);
}

static ndx_status check_apply_sgd(const graph_node *n, const ndx_tensor *in,
                                  const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)out;
    NDX_TRY(infer_on(n, in, err));
    return check_row_numbers("sparse_apply_sgd", &in[3], &in[0], opt->num_threads, err);
}

static ndx_status run_apply_sgd(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                                ndx_tensor *out, ndx_error *err) {
    (void)n;
    (void)out;
    return ndx_sparse_apply_sgd(&in[0], &in[1], &in[2], &in[3], opt, err);
}

static const char *const apply_sgd_inputs[] = {"var", "lr", "grad", "indices"};
const graph_kind_desc graph_kind_apply_sgd = {
    .kind = GRAPH_APPLY_SGD, .type = "ResourceSparseApplyGradientDescent", .min_inputs = 4,
    .max_inputs = 4, .inputs = apply_sgd_inputs, .outputs = 0,
    .flags = GRAPH_KIND_STATEFUL | GRAPH_KIND_MUTATES, .infer = infer_apply_sgd,
    .run = run_apply_sgd, .vars = 1, .check = check_apply_sgd, .scratch = apply_scratch};

/* Adagrad's inputs: var, accum, lr, [epsilon], grad, indices (variant 1: V2, with epsilon). */
static ndx_status infer_apply_adagrad(const graph_node *n, const ndx_spec *in,
                                      const ndx_tensor *const *consts, ndx_spec *out,
                                      ndx_error *err) {
    (void)consts;
    (void)out;
    NDX_TRY(check_var_inputs(n, err));
    int v2 = graph_variant(n);
    return ndx_sparse_apply_adagrad_infer(&in[0], &in[1], &in[2], v2 ? &in[3] : NULL,
                                          &in[3 + v2], &in[4 + v2], NULL, err);
}

static ndx_status check_apply_adagrad(const graph_node *n, const ndx_tensor *in,
                                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)out;
    NDX_TRY(infer_on(n, in, err));
    return check_row_numbers("sparse_apply_adagrad", &in[n->num_inputs - 1], &in[0],
                             opt->num_threads, err);
}

static ndx_status run_apply_adagrad(const graph_node *n, const ndx_tensor *in,
                                    const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)out;
    int v2 = graph_variant(n);
    int flags = (n->attrs.update_slots ? NDX_APPLY_UPDATE_SLOTS : 0) |
                (n->attrs.sum_duplicates ? NDX_APPLY_SUM_DUPLICATES : 0);
    return ndx_sparse_apply_adagrad(&in[0], &in[1], &in[2], v2 ? &in[3] : NULL, &in[3 + v2],
                                    &in[4 + v2], flags, opt, err);
}

#define UPDATE_SLOTS                                                                          \
    {"update_slots", GRAPH_ATTR_BOOL, offsetof(graph_attrs, update_slots), 1, 0, 1, 0, NULL}
#define SUM_DUPLICATES                                                                        \
    {"sum_duplicates", GRAPH_ATTR_BOOL, offsetof(graph_attrs, sum_duplicates), 0, 0, 1, 0, NULL}

static const char *const apply_adagrad_inputs[] = {"var", "accum", "lr", "grad", "indices"};
static const char *const apply_adagrad_v2_inputs[] = {"var",  "accum", "lr",
                                                      "epsilon", "grad", "indices"};
#define APPLY_ADAGRAD(KIND, TYPE, V2, INPUTS)                                                  \
    {.kind = KIND, .type = TYPE, .variant = V2, .min_inputs = 5 + V2, .max_inputs = 5 + V2,    \
     .inputs = INPUTS, .outputs = 0, .flags = GRAPH_KIND_STATEFUL | GRAPH_KIND_MUTATES,        \
     .num_attrs = 2, .attrs = {UPDATE_SLOTS, SUM_DUPLICATES}, .infer = infer_apply_adagrad,   \
     .run = run_apply_adagrad, .vars = 2, .check = check_apply_adagrad,                      \
     .scratch = apply_scratch}
const graph_kind_desc graph_kind_apply_adagrad = APPLY_ADAGRAD(
    GRAPH_APPLY_ADAGRAD, "ResourceSparseApplyAdagrad", 0, apply_adagrad_inputs);
const graph_kind_desc graph_kind_apply_adagrad_v2 = APPLY_ADAGRAD(
    GRAPH_APPLY_ADAGRAD_V2, "ResourceSparseApplyAdagradV2", 1, apply_adagrad_v2_inputs);

/* ---- ResourceScatterNdAdd ------------------------------------------------------------------ */

static ndx_status infer_scatter_add_var(const graph_node *n, const ndx_spec *in,
                                        const ndx_tensor *const *consts, ndx_spec *out,
                                        ndx_error *err) {
    (void)consts;
    (void)out;
    NDX_TRY(check_var_inputs(n, err));
    ndx_spec result;
    return ndx_tensor_scatter_nd_infer(NDX_SCATTER_ADD, &in[0], &in[1], &in[2], &result, err);
}

static ndx_status check_scatter_add_var(const graph_node *n, const ndx_tensor *in,
                                        const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)out;
    NDX_TRY(infer_on(n, in, err));
    return check_rows("tensor_scatter_nd_add", &in[1], &in[0], opt->num_threads, err);
}

static ndx_status run_scatter_add_var(const graph_node *n, const ndx_tensor *in,
                                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    (void)out;
    ndx_tensor var = in[0]; /* the output is the variable itself: updated in place */
    return ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &in[0], &in[1], &in[2], opt, &var, err);
}

static const char *const scatter_add_var_inputs[] = {"var", "indices", "updates"};
const graph_kind_desc graph_kind_scatter_add_var = {
    .kind = GRAPH_SCATTER_ADD_VAR, .type = "ResourceScatterNdAdd", .min_inputs = 3,
    .max_inputs = 3, .inputs = scatter_add_var_inputs, .outputs = 0,
    .flags = GRAPH_KIND_STATEFUL | GRAPH_KIND_MUTATES, .infer = infer_scatter_add_var,
    .run = run_scatter_add_var, .vars = 1, .check = check_scatter_add_var};

/* ---- AssignAddVariableOp, AssignSubVariableOp ----------------------------------------------- */

static ndx_status check_value_shape(const char *op, const ndx_spec *in, ndx_error *err);

static ndx_status infer_assign_var(const graph_node *n, const ndx_spec *in,
                                   const ndx_tensor *const *consts, ndx_spec *out,
                                   ndx_error *err) {
    (void)consts;
    (void)out;
    NDX_TRY(check_var_inputs(n, err));
    const char *op = graph_type_name(n);
    ndx_spec result;
    NDX_TRY(ndx_binary_infer((ndx_binary_op)graph_variant(n), &in[0], &in[1], &result, err));
    return check_value_shape(op, in, err);
}

/* in[1], the value, must have the variable's (in[0]'s) shape where it is known. */
static ndx_status check_value_shape(const char *op, const ndx_spec *in, ndx_error *err) {
    if (in[1].rank == NDX_UNKNOWN) return NDX_OK;
    int same = in[1].rank == in[0].rank;
    for (int i = 0; same && i < in[0].rank; i++)
        same = !ndx_dim_known(in[1].shape[i]) || in[1].shape[i] == in[0].shape[i];
    if (same) return NDX_OK;
    char want[NDX_DIMS_TEXT], got[NDX_DIMS_TEXT];
    ndx_format_spec_dims(want, sizeof want, &in[0]);
    ndx_format_spec_dims(got, sizeof got, &in[1]);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: value has shape %s, but the variable has shape %s", op, got, want);
}

static ndx_status check_assign_var(const graph_node *n, const ndx_tensor *in,
                                   const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)opt;
    (void)out;
    return infer_on(n, in, err);
}

static ndx_status run_assign_var(const graph_node *n, const ndx_tensor *in,
                                 const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)out;
    ndx_tensor var = in[0]; /* elementwise, into the variable itself */
    return ndx_binary((ndx_binary_op)graph_variant(n), &in[0], &in[1], opt, &var, err);
}

static const char *const assign_var_inputs[] = {"var", "value"};
#define ASSIGN_VAR(KIND, TYPE, OP)                                                              \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 2, .max_inputs = 2,               \
     .inputs = assign_var_inputs, .outputs = 0, .flags = GRAPH_KIND_STATEFUL | GRAPH_KIND_MUTATES, \
     .infer = infer_assign_var, .run = run_assign_var, .vars = 1, .check = check_assign_var}
const graph_kind_desc graph_kind_assign_add_var =
    ASSIGN_VAR(GRAPH_ASSIGN_ADD_VAR, "AssignAddVariableOp", NDX_BINARY_ADD);
const graph_kind_desc graph_kind_assign_sub_var =
    ASSIGN_VAR(GRAPH_ASSIGN_SUB_VAR, "AssignSubVariableOp", NDX_BINARY_SUB);

/* ---- AssignVariableOp ---------------------------------------------------------------------- */

/* The value must have the variable's dtype and shape; a string value may be narrower (it is
 * NUL-padded to the variable's width), not wider. */
static ndx_status infer_assign(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    (void)out;
    NDX_TRY(check_var_inputs(n, err));
    if (in[1].dtype != in[0].dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "AssignVariableOp: value is %s, but the variable is %s",
                        ndx_dtype_name(in[1].dtype), ndx_dtype_name(in[0].dtype));
    if (in[0].dtype == NDX_STRING && in[1].itemsize > in[0].itemsize)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "AssignVariableOp: value holds strings of %zu bytes, but the variable "
                        "holds strings of at most %zu",
                        in[1].itemsize, in[0].itemsize);
    return check_value_shape("AssignVariableOp", in, err);
}

static ndx_status run_assign(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    (void)n;
    (void)out;
    (void)err;
    int64_t count = ndx_tensor_count(&in[0]);
    if (count <= 0) return NDX_OK;
    if (in[1].itemsize != in[0].itemsize) /* a narrower string value (checked) */
        ndx_strings_widen(in[0].data, in[0].itemsize, &in[1]);
    else if (in[0].data != in[1].data)
        ndx_parallel_copy(in[0].data, in[1].data, (size_t)count * in[0].itemsize,
                          opt->num_threads);
    return NDX_OK;
}

static const char *const assign_inputs[] = {"var", "value"};
const graph_kind_desc graph_kind_assign_var = {
    .kind = GRAPH_ASSIGN_VAR, .type = "AssignVariableOp", .min_inputs = 2, .max_inputs = 2,
    .inputs = assign_inputs, .outputs = 0, .flags = GRAPH_KIND_STATEFUL | GRAPH_KIND_MUTATES,
    .infer = infer_assign, .run = run_assign, .vars = 1, .check = check_assign_var};

/* ---- ReadVariableOp ------------------------------------------------------------------------ */

static ndx_status infer_read_variable(const graph_node *n, const ndx_spec *in,
                                      const ndx_tensor *const *consts, ndx_spec *out,
                                      ndx_error *err) {
    (void)consts;
    NDX_TRY(check_var_inputs(n, err));
    out[0] = in[0];
    return NDX_OK;
}

static const char *const read_variable_inputs[] = {"var"};
const graph_kind_desc graph_kind_read_variable = {
    .kind = GRAPH_READ_VARIABLE, .type = "ReadVariableOp", .min_inputs = 1, .max_inputs = 1,
    .inputs = read_variable_inputs, .outputs = 1, .flags = GRAPH_KIND_STATEFUL,
    .infer = infer_read_variable, .vars = 1};

/* ---- ResourceScatterUpdate, Add, Sub, Mul, Div, Min, Max ---------------------------------- */

/* The variant is the combine (an ndx_scatter_op, or SCATTER_OP_MUL / SCATTER_OP_DIV). */
static ndx_status infer_scatter_rows(const graph_node *n, const ndx_spec *in,
                                     const ndx_tensor *const *consts, ndx_spec *out,
                                     ndx_error *err) {
    (void)consts;
    (void)out;
    NDX_TRY(check_var_inputs(n, err));
    return ndx_scatter_rows_infer(graph_type_name(n), (ndx_scatter_op)graph_variant(n), &in[0],
                                  &in[1], &in[2], err);
}

static ndx_status check_scatter_rows(const graph_node *n, const ndx_tensor *in,
                                     const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)out;
    NDX_TRY(check_var_inputs(n, err));
    return ndx_scatter_rows_check(graph_type_name(n), (ndx_scatter_op)graph_variant(n), &in[0],
                                  &in[1], &in[2], opt->num_threads, err);
}

static ndx_status run_scatter_rows(const graph_node *n, const ndx_tensor *in,
                                   const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)out;
    return ndx_scatter_rows(graph_type_name(n), (ndx_scatter_op)graph_variant(n), &in[0], &in[1],
                            &in[2], opt, err);
}

static size_t scatter_rows_scratch(const graph_node *n, const ndx_tensor *in) {
    (void)n;
    return ndx_scatter_rows_scratch(&in[0], &in[1], &in[2]);
}

static const char *const scatter_rows_inputs[] = {"resource", "indices", "updates"};
#define SCATTER_ROWS(KIND, TYPE, OP)                                                           \
    {.kind = KIND, .type = TYPE, .variant = (int)(OP), .min_inputs = 3, .max_inputs = 3,       \
     .inputs = scatter_rows_inputs, .outputs = 0,                                              \
     .flags = GRAPH_KIND_STATEFUL | GRAPH_KIND_MUTATES, .infer = infer_scatter_rows,           \
     .run = run_scatter_rows, .vars = 1, .check = check_scatter_rows,                          \
     .scratch = scatter_rows_scratch}
const graph_kind_desc graph_kind_resource_scatter_add =
    SCATTER_ROWS(GRAPH_RESOURCE_SCATTER_ADD, "ResourceScatterAdd", NDX_SCATTER_ADD);
const graph_kind_desc graph_kind_resource_scatter_sub =
    SCATTER_ROWS(GRAPH_RESOURCE_SCATTER_SUB, "ResourceScatterSub", NDX_SCATTER_SUB);
const graph_kind_desc graph_kind_resource_scatter_mul =
    SCATTER_ROWS(GRAPH_RESOURCE_SCATTER_MUL, "ResourceScatterMul", SCATTER_OP_MUL);
const graph_kind_desc graph_kind_resource_scatter_div =
    SCATTER_ROWS(GRAPH_RESOURCE_SCATTER_DIV, "ResourceScatterDiv", SCATTER_OP_DIV);
const graph_kind_desc graph_kind_resource_scatter_min =
    SCATTER_ROWS(GRAPH_RESOURCE_SCATTER_MIN, "ResourceScatterMin", NDX_SCATTER_MIN);
const graph_kind_desc graph_kind_resource_scatter_max =
    SCATTER_ROWS(GRAPH_RESOURCE_SCATTER_MAX, "ResourceScatterMax", NDX_SCATTER_MAX);
const graph_kind_desc graph_kind_resource_scatter_update =
    SCATTER_ROWS(GRAPH_RESOURCE_SCATTER_UPDATE, "ResourceScatterUpdate", NDX_SCATTER_UPDATE);

/* ---- ResourceGather ------------------------------------------------------------------------ */

/* ndx_gather(var, indices, axis = batch_dims, batch_dims), as TensorFlow's kernel gathers; a
 * negative batch_dims counts from the end of indices' dims. validate_indices is accepted and
 * ignored, as on TensorFlow's CPU: indices are always checked. */
static int resource_gather_batch(const graph_node *n, int indices_rank) {
    int b = n->attrs.batch_dims;
    return b < 0 && indices_rank != NDX_UNKNOWN ? b + indices_rank : b;
}

static ndx_status infer_resource_gather(const graph_node *n, const ndx_spec *in,
                                        const ndx_tensor *const *consts, ndx_spec *out,
                                        ndx_error *err) {
    (void)consts;
    NDX_TRY(check_var_inputs(n, err));
    int b = resource_gather_batch(n, in[1].rank);
    if (b < 0) { /* negative, and indices' rank unknown: the result's too */
        NDX_TRY(ndx_check_index_spec(&in[1], "ResourceGather", "indices", err));
        *out = ndx_spec_make(in[0].dtype, NDX_UNKNOWN, NULL);
        out->itemsize = in[0].itemsize;
        return NDX_OK;
    }
    return ndx_gather_infer(&in[0], &in[1], b, b, out, err);
}

static ndx_status run_resource_gather(const graph_node *n, const ndx_tensor *in,
                                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    int b = resource_gather_batch(n, in[1].rank);
    return ndx_gather(&in[0], &in[1], b, b, opt, out, err);
}

static const char *const resource_gather_inputs[] = {"resource", "indices"};
const graph_kind_desc graph_kind_resource_gather = {
    .kind = GRAPH_RESOURCE_GATHER, .type = "ResourceGather", .min_inputs = 2, .max_inputs = 2,
    .inputs = resource_gather_inputs, .outputs = 1,
    .flags = GRAPH_KIND_STATEFUL | GRAPH_KIND_READS_VAR, .num_attrs = 2,
    .attrs = {{"batch_dims", GRAPH_ATTR_INT, offsetof(graph_attrs, batch_dims), 0, -NDX_MAX_RANK,
               NDX_MAX_RANK, 0, NULL},
              {"validate_indices", GRAPH_ATTR_BOOL, offsetof(graph_attrs, validate_indices), 1,
               0, 1, 0, NULL}},
    .infer = infer_resource_gather, .run = run_resource_gather, .vars = 1};
