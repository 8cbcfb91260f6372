/* index_kinds.c — the kinds of ndx's index ops: gather_nd, scatter_nd, the
 * tensor_scatter_nd ops, dynamic_stitch and dynamic_partition. Their infer functions go further
 * than the ops' own where inputs are constants: constant indices are range-checked against the
 * dims known, and constant partitions, stitch indices and scatter shapes give exact dims. */
#include <stdio.h>
#include <stdlib.h>

#include "gather_nd_plan.h"
#include "graph_internal.h"
#include "index.h"
#include "partition_plan.h"
#include "scatter_infer.h"
#include "stitch_plan.h"

/* Checks constant index rows against the dims a partial spec knows (an unknown dim admits any
 * index >= 0), with the message the op gives at run time. The first `batch` dims of `target`
 * are batch dims (gather_nd's batch_dims); coordinate k must lie in dims[batch + k]. */
static ndx_status check_const_rows(const char *op, const ndx_tensor *indices,
                                   const ndx_spec *target, int batch, const char *target_name,
                                   int gather, ndx_error *err) {
    if (indices->rank < 1 || target->rank == NDX_UNKNOWN) return NDX_OK;
    int depth = (int)indices->shape[indices->rank - 1];
    if (depth > target->rank - batch) return NDX_OK; /* infer reported it */
    int64_t rows;
    if (!ndx_dims_product(indices->rank - 1, indices->shape, &rows) || rows == 0) return NDX_OK;
    for (int64_t r = 0; r < rows; r++) {
        for (int k = 0; k < depth; k++) {
            int64_t c = ndx_read_index(indices->data, indices->dtype, r * depth + k);
            int64_t dim = target->shape[batch + k];
            if (c >= 0 && (!ndx_dim_known(dim) || c < dim)) continue;
            /* A view of the target with its batch dims taken from indices (they are equal). */
            ndx_tensor view = ndx_view_of_spec(target);
            for (int b = 0; b < batch; b++) view.shape[b] = indices->shape[b];
            if (!gather)
                return ndx_fail_bad_index_row(err, op, indices, r, target_name, view.rank,
                                              view.shape);
            int64_t per_batch = 1;
            ndx_dims_product(indices->rank - 1 - batch, indices->shape + batch, &per_batch);
            return ndx_gather_nd_fail_row(&view, indices, batch, per_batch, r, err);
        }
    }
    return NDX_OK;
}

/* ---- gather_nd ---------------------------------------------------------------------------- */

static ndx_status infer_gather_nd(const graph_node *n, const ndx_spec *in,
                                  const ndx_tensor *const *consts, ndx_spec *out,
                                  ndx_error *err) {
    const graph_attrs *a = &n->attrs;
    NDX_TRY(ndx_gather_nd_infer(&in[0], &in[1], a->batch_dims, out, err));
    if (consts[1] && a->bad_indices == NDX_BAD_INDICES_ERROR)
        return check_const_rows("gather_nd", consts[1], &in[0], a->batch_dims, "params", 1, err);
    return NDX_OK;
}

static ndx_status run_gather_nd(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                                ndx_tensor *out, ndx_error *err) {
    return ndx_gather_nd(&in[0], &in[1], n->attrs.batch_dims, opt, out, err);
}

/* The bad-index policy, as the text form reads and writes it (`alias` also reads as ignore). */
#define BAD_INDICES(alias) \
    {"bad_indices", GRAPH_ATTR_POLICY, offsetof(graph_attrs, bad_indices), NDX_BAD_INDICES_ERROR, \
     0, 1, 0, alias}

static const char *const gather_inputs[] = {"params", "indices"};
const graph_kind_desc graph_kind_gather_nd = {
    .kind = GRAPH_GATHER_ND, .type = "GatherNd", .min_inputs = 2, .max_inputs = 2,
    .inputs = gather_inputs, .outputs = 1, .num_attrs = 2,
    .attrs = {{"batch_dims", GRAPH_ATTR_INT, offsetof(graph_attrs, batch_dims), 0, 0, NDX_MAX_RANK,
               0, NULL},
              BAD_INDICES("zero")},
    .infer = infer_gather_nd, .run = run_gather_nd};

/* ---- scatter_nd --------------------------------------------------------------------------- */

static ndx_status infer_scatter_nd(const graph_node *n, const ndx_spec *in,
                                   const ndx_tensor *const *consts, ndx_spec *out,
                                   ndx_error *err) {
    NDX_TRY(ndx_check_index_spec(&in[2], "scatter_nd", "shape", err));
    if (in[2].rank != NDX_UNKNOWN && in[2].rank != 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "scatter_nd: shape must be a vector, but it has rank %d", in[2].rank);
    int rank = in[2].rank == 1 && ndx_dim_known(in[2].shape[0]) && in[2].shape[0] <= INT32_MAX
                   ? (int)in[2].shape[0]
                   : NDX_UNKNOWN;
    int64_t dims[NDX_MAX_RANK];
    const int64_t *shape = NULL;
    if (consts[2] && rank >= 0 && rank <= NDX_MAX_RANK) {
        for (int i = 0; i < rank; i++) {
            dims[i] = ndx_read_index(consts[2]->data, consts[2]->dtype, i);
            if (dims[i] < 0)
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                "scatter_nd: shape[%d] = %lld is negative", i, (long long)dims[i]);
        }
        shape = dims;
    } else if (rank >= 0 && rank <= NDX_MAX_RANK) {
        for (int i = 0; i < rank; i++) dims[i] = NDX_UNKNOWN;
        shape = dims;
    }
    NDX_TRY(ndx_scatter_nd_infer(&in[0], &in[1], rank, shape, out, err));
    if (consts[0] && n->attrs.bad_indices == NDX_BAD_INDICES_ERROR)
        return check_const_rows("scatter_nd", consts[0], out, 0, "output", 0, err);
    return NDX_OK;
}

/* scatter_nd's shape input as dims: a vector of at most NDX_MAX_RANK values. */
static ndx_status read_shape(const ndx_tensor *t, int64_t *dims, int *rank, ndx_error *err) {
    NDX_TRY(ndx_check_index_tensor(t, "scatter_nd", "shape", NULL, err));
    if (t->rank != 1 || t->shape[0] > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "scatter_nd: shape must be a vector of at most %d dims", NDX_MAX_RANK);
    *rank = (int)t->shape[0];
    for (int i = 0; i < *rank; i++) dims[i] = ndx_read_index(t->data, t->dtype, i);
    return NDX_OK;
}

static ndx_status run_scatter_nd(const graph_node *n, const ndx_tensor *in,
                                 const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    int64_t dims[NDX_MAX_RANK];
    int rank = 0;
    NDX_TRY(read_shape(&in[2], dims, &rank, err));
    return ndx_scatter_nd(&in[0], &in[1], rank, dims, opt, out, err);
}

static const char *const scatter_inputs[] = {"indices", "updates", "shape"};
const graph_kind_desc graph_kind_scatter_nd = {
    .kind = GRAPH_SCATTER_ND, .type = "ScatterNd", .min_inputs = 3, .max_inputs = 3,
    .inputs = scatter_inputs, .outputs = 1, .num_attrs = 1, .attrs = {BAD_INDICES("skip")},
    .infer = infer_scatter_nd, .run = run_scatter_nd};

/* ---- tensor_scatter_nd_* ------------------------------------------------------------------ */

static ndx_status infer_tensor_scatter(const graph_node *n, const ndx_spec *in,
                                       const ndx_tensor *const *consts, ndx_spec *out,
                                       ndx_error *err) {
    ndx_scatter_op op = (ndx_scatter_op)graph_variant(n);
    NDX_TRY(ndx_tensor_scatter_nd_infer(op, &in[0], &in[1], &in[2], out, err));
    if (consts[1] && n->attrs.bad_indices == NDX_BAD_INDICES_ERROR)
        return check_const_rows(scatter_tensor_op_label(op), consts[1], out, 0, "tensor", 0, err);
    return NDX_OK;
}

static ndx_status run_tensor_scatter(const graph_node *n, const ndx_tensor *in,
                                     const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return ndx_tensor_scatter_nd((ndx_scatter_op)graph_variant(n), &in[0], &in[1], &in[2], opt,
                                 out, err);
}

static const char *const tensor_scatter_inputs[] = {"tensor", "indices", "updates"};
#define TENSOR_SCATTER(KIND, TYPE, OP)                                                          \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 3, .max_inputs = 3,               \
     .inputs = tensor_scatter_inputs, .outputs = 1, .flags = GRAPH_KIND_IN_PLACE,               \
     .width_first = 0, .width_step = 2, .num_attrs = 1, .attrs = {BAD_INDICES("skip")},         \
     .infer = infer_tensor_scatter, .run = run_tensor_scatter}
const graph_kind_desc graph_kind_tensor_scatter_update =
    TENSOR_SCATTER(GRAPH_TENSOR_SCATTER_UPDATE, "TensorScatterUpdate", NDX_SCATTER_UPDATE);
const graph_kind_desc graph_kind_tensor_scatter_add =
    TENSOR_SCATTER(GRAPH_TENSOR_SCATTER_ADD, "TensorScatterAdd", NDX_SCATTER_ADD);
const graph_kind_desc graph_kind_tensor_scatter_sub =
    TENSOR_SCATTER(GRAPH_TENSOR_SCATTER_SUB, "TensorScatterSub", NDX_SCATTER_SUB);
const graph_kind_desc graph_kind_tensor_scatter_min =
    TENSOR_SCATTER(GRAPH_TENSOR_SCATTER_MIN, "TensorScatterMin", NDX_SCATTER_MIN);
const graph_kind_desc graph_kind_tensor_scatter_max =
    TENSOR_SCATTER(GRAPH_TENSOR_SCATTER_MAX, "TensorScatterMax", NDX_SCATTER_MAX);

/* ---- dynamic_stitch ----------------------------------------------------------------------- */

static ndx_status infer_stitch(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    int count = n->attrs.count;
    NDX_TRY(ndx_dynamic_stitch_infer(count, in, in + count, out, err));
    int64_t max = -1;
    for (int m = 0; m < count; m++) {
        if (!consts[m]) return NDX_OK;
        int64_t size = ndx_tensor_count(consts[m]);
        for (int64_t i = 0; i < size; i++) {
            int64_t v = ndx_read_index(consts[m]->data, consts[m]->dtype, i);
            if (v < 0)
                return ndx_stitch_fail_negative(
                    graph_variant(n) ? "parallel_dynamic_stitch" : "dynamic_stitch", m,
                    consts[m], i, err);
            if (v > max) max = v;
        }
    }
    if (out->rank >= 1) out->shape[0] = max + 1;
    return NDX_OK;
}

static ndx_status run_stitch(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    int count = n->attrs.count;
    return graph_variant(n) ? ndx_parallel_dynamic_stitch(count, in, in + count, opt, out, err)
                            : ndx_dynamic_stitch(count, in, in + count, opt, out, err);
}

static const char *const stitch_inputs[] = {"indices", "data"};
#define STITCH(KIND, TYPE, PARALLEL)                                                            \
    {.kind = KIND, .type = TYPE, .variant = PARALLEL, .group = 2, .inputs = stitch_inputs,      \
     .count_name = "n", .outputs = 1, .width_first = -1, .width_step = 1, .infer = infer_stitch, \
     .run = run_stitch}
const graph_kind_desc graph_kind_stitch = STITCH(GRAPH_STITCH, "DynamicStitch", 0);
const graph_kind_desc graph_kind_parallel_stitch =
    STITCH(GRAPH_PARALLEL_STITCH, "ParallelDynamicStitch", 1);

/* ---- dynamic_partition -------------------------------------------------------------------- */

static ndx_status infer_partition(const graph_node *n, const ndx_spec *in,
                                  const ndx_tensor *const *consts, ndx_spec *out,
                                  ndx_error *err) {
    int np = n->attrs.count;
    NDX_TRY(ndx_dynamic_partition_infer(&in[0], &in[1], np, out, err));
    const ndx_tensor *ids = consts[1];
    if (!ids) return NDX_OK;
    int64_t size = ndx_tensor_count(ids);
    for (int p = 0; p < np; p++)
        if (out[p].rank >= 1) out[p].shape[0] = 0;
    for (int64_t i = 0; i < size; i++) {
        int64_t v = ndx_read_index(ids->data, ids->dtype, i);
        if (v < 0 || v >= np) return ndx_partition_fail_id(ids, i, np, err);
        if (out[v].rank >= 1) out[v].shape[0]++;
    }
    return NDX_OK;
}

static ndx_status run_partition(const graph_node *n, const ndx_tensor *in,
                                const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return ndx_dynamic_partition(&in[0], &in[1], n->attrs.count, opt, out, err);
}

static const char *const partition_inputs[] = {"data", "partitions"};
const graph_kind_desc graph_kind_partition = {
    .kind = GRAPH_PARTITION, .type = "DynamicPartition", .min_inputs = 2, .max_inputs = 2,
    .inputs = partition_inputs, .count_name = "num_partitions", .outputs = GRAPH_OUTPUTS_COUNT,
    .num_attrs = 1,
    .attrs = {{"num_partitions", GRAPH_ATTR_INT, offsetof(graph_attrs, count), 0, 1,
               NDX_GRAPH_MAX_ARITY, GRAPH_ATTR_REQUIRED | GRAPH_ATTR_ALWAYS, NULL}},
    .infer = infer_partition, .run = run_partition};
