/* graph_ops.c — what each kind of node is: its TensorFlow type name, its inputs' names, its infer
 * function (the op's own, plus what constant inputs reveal) and its kernel (the op itself). */
#include <stdio.h>
#include <stdlib.h>

#include "gather_nd_plan.h"
#include "graph_internal.h"
#include "index.h"
#include "partition_plan.h"
#include "scatter_infer.h"
#include "stitch_plan.h"

/* ---- names ------------------------------------------------------------------------------- */

const char *graph_scatter_type(ndx_scatter_op op) {
    switch (op) {
    case NDX_SCATTER_UPDATE: return "TensorScatterUpdate";
    case NDX_SCATTER_ADD: return "TensorScatterAdd";
    case NDX_SCATTER_SUB: return "TensorScatterSub";
    case NDX_SCATTER_MIN: return "TensorScatterMin";
    case NDX_SCATTER_MAX: return "TensorScatterMax";
    }
    return "TensorScatter";
}

const char *graph_binary_type(ndx_binary_op op) {
    static const char *const names[NDX_BINARY_COUNT] = {"AddV2",    "Sub",   "Mul",     "FloorDiv",
                                                         "FloorMod", "Equal", "NotEqual"};
    return (unsigned)op < NDX_BINARY_COUNT ? names[op] : NULL;
}

const char *graph_type_name(const graph_node *n) {
    static const char *const names[GRAPH_KIND_COUNT] = {
        "Const",         "Placeholder",  "Identity",      "GatherNd",      "ScatterNd",
        "TensorScatter", "DynamicStitch", "DynamicPartition", "SparseConcat", "SparseReorder",
        "SparseToDense", "DenseToSparse", "Binary",        "Cast",          "Range",
        "Size",          "Shape"};
    switch (n->kind) {
    case GRAPH_TENSOR_SCATTER: return graph_scatter_type(n->attrs.scatter_op);
    case GRAPH_BINARY: return graph_binary_type(n->attrs.binary);
    case GRAPH_STITCH: return n->attrs.parallel ? "ParallelDynamicStitch" : "DynamicStitch";
    default: return names[n->kind];
    }
}

void graph_input_name(graph_kind kind, const graph_attrs *a, int i, char *buf, size_t cap) {
    static const char *const sparse[4] = {"indices", "values", "dense_shape", "default_value"};
    static const char *const two[2][2] = {{"params", "indices"}, {"data", "partitions"}};
    static const char *const three[3][3] = {{"indices", "updates", "shape"},
                                            {"tensor", "indices", "updates"},
                                            {"start", "limit", "delta"}};
    int n = a->count > 0 ? a->count : 1;
    switch (kind) {
    case GRAPH_GATHER_ND: snprintf(buf, cap, "'%s'", two[0][i & 1]); return;
    case GRAPH_PARTITION: snprintf(buf, cap, "'%s'", two[1][i & 1]); return;
    case GRAPH_SCATTER_ND: snprintf(buf, cap, "'%s'", three[0][i % 3]); return;
    case GRAPH_TENSOR_SCATTER: snprintf(buf, cap, "'%s'", three[1][i % 3]); return;
    case GRAPH_RANGE: snprintf(buf, cap, "'%s'", three[2][i % 3]); return;
    case GRAPH_STITCH:
        snprintf(buf, cap, "'%s[%d]'", i < n ? "indices" : "data", i % n);
        return;
    case GRAPH_SPARSE_CONCAT: snprintf(buf, cap, "'inputs[%d].%s'", i % n, sparse[i / n % 3]); return;
    case GRAPH_SPARSE_REORDER:
    case GRAPH_SPARSE_TO_DENSE: snprintf(buf, cap, "'%s'", sparse[i & 3]); return;
    case GRAPH_BINARY: snprintf(buf, cap, "'%s'", i ? "y" : "x"); return;
    default: snprintf(buf, cap, "'x'"); return;
    }
}

/* ---- infer: constants go further than shapes ---------------------------------------------- */

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
                    n->attrs.parallel ? "parallel_dynamic_stitch" : "dynamic_stitch", m,
                    consts[m], i, err);
            if (v > max) max = v;
        }
    }
    if (out->rank >= 1) out->shape[0] = max + 1;
    return NDX_OK;
}

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

/* The sparse tensor whose three parts are in[at], in[at + stride], in[at + 2 * stride]. */
static ndx_sparse_spec sparse_spec_at(const ndx_spec *in, int at, int stride) {
    ndx_sparse_spec sp = {in[at], in[at + stride], in[at + 2 * stride]};
    return sp;
}

static void sparse_specs_out(const ndx_sparse_spec *sp, ndx_spec *out) {
    out[0] = sp->indices;
    out[1] = sp->values;
    out[2] = sp->dense_shape;
}

static ndx_status infer_sparse_concat(const graph_node *n, const ndx_spec *in, ndx_spec *out,
                                      ndx_error *err) {
    int count = n->attrs.count;
    ndx_sparse_spec local[8], *inputs = local, result;
    memset(local, 0, sizeof local);
    if (count > 8 && !(inputs = malloc((size_t)count * sizeof *inputs)))
        return ndx_fail(err, NDX_E_NO_MEMORY, "sparse_concat: out of memory");
    for (int i = 0; i < count; i++) inputs[i] = sparse_spec_at(in, i, count);
    ndx_status st =
        ndx_sparse_concat_infer(n->attrs.axis, count, inputs, n->attrs.expand, &result, err);
    if (inputs != local) free(inputs);
    if (st == NDX_OK) sparse_specs_out(&result, out);
    return st;
}

static ndx_status infer_sparse_to_dense(const graph_node *n, const ndx_spec *in,
                                        const ndx_tensor *const *consts, ndx_spec *out,
                                        ndx_error *err) {
    ndx_sparse_spec sp = sparse_spec_at(in, 0, 1);
    NDX_TRY(ndx_sparse_to_dense_infer(&sp, out, err));
    if (n->attrs.has_default) {
        const ndx_spec *d = &in[3];
        if (d->dtype != sp.values.dtype || (d->rank != NDX_UNKNOWN && d->rank != 0) ||
            (d->itemsize && sp.values.itemsize && d->itemsize != sp.values.itemsize)) {
            char dims[NDX_DIMS_TEXT];
            ndx_format_spec_dims(dims, sizeof dims, d);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "sparse_to_dense: default_value must be a scalar of the values' "
                            "dtype and width (%s, %zu bytes), but it is %s %s of %zu bytes",
                            ndx_dtype_name(sp.values.dtype), sp.values.itemsize,
                            ndx_dtype_name(d->dtype), dims, d->itemsize);
        }
    }
    const ndx_tensor *shape = consts[2];
    if (!shape || out->rank < 0) return NDX_OK;
    for (int i = 0; i < out->rank; i++) {
        int64_t d = ndx_read_index(shape->data, shape->dtype, i);
        out->shape[i] = d >= 0 ? d : NDX_UNKNOWN; /* a negative dim fails at run time */
    }
    return NDX_OK;
}

ndx_status graph_infer_op(const graph_node *n, const ndx_spec *in,
                          const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    const graph_attrs *a = &n->attrs;
    if (a->bad_indices != NDX_BAD_INDICES_ERROR && a->bad_indices != NDX_BAD_INDICES_IGNORE)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "bad_indices = %d is neither NDX_BAD_INDICES_ERROR nor "
                        "NDX_BAD_INDICES_IGNORE",
                        (int)a->bad_indices);
    ndx_sparse_spec sp;
    switch (n->kind) {
    case GRAPH_IDENTITY: out[0] = in[0]; return NDX_OK;
    case GRAPH_GATHER_ND:
        NDX_TRY(ndx_gather_nd_infer(&in[0], &in[1], a->batch_dims, out, err));
        if (consts[1] && a->bad_indices == NDX_BAD_INDICES_ERROR)
            return check_const_rows("gather_nd", consts[1], &in[0], a->batch_dims, "params", 1,
                                    err);
        return NDX_OK;
    case GRAPH_SCATTER_ND: return infer_scatter_nd(n, in, consts, out, err);
    case GRAPH_TENSOR_SCATTER:
        NDX_TRY(ndx_tensor_scatter_nd_infer(a->scatter_op, &in[0], &in[1], &in[2], out, err));
        if (consts[1] && a->bad_indices == NDX_BAD_INDICES_ERROR)
            return check_const_rows(scatter_tensor_op_label(a->scatter_op), consts[1], out, 0,
                                    "tensor", 0, err);
        return NDX_OK;
    case GRAPH_STITCH: return infer_stitch(n, in, consts, out, err);
    case GRAPH_PARTITION: return infer_partition(n, in, consts, out, err);
    case GRAPH_SPARSE_CONCAT: return infer_sparse_concat(n, in, out, err);
    case GRAPH_SPARSE_REORDER:
        sp = sparse_spec_at(in, 0, 1);
        NDX_TRY(ndx_sparse_reorder_infer(&sp, &sp, err));
        sparse_specs_out(&sp, out);
        return NDX_OK;
    case GRAPH_SPARSE_TO_DENSE: return infer_sparse_to_dense(n, in, consts, out, err);
    case GRAPH_DENSE_TO_SPARSE:
        NDX_TRY(ndx_dense_to_sparse_infer(&in[0], &sp, err));
        sparse_specs_out(&sp, out);
        return NDX_OK;
    case GRAPH_BINARY: return ndx_binary_infer(a->binary, &in[0], &in[1], out, err);
    case GRAPH_CAST: return ndx_cast_infer(&in[0], a->dtype, out, err);
    case GRAPH_RANGE: return ndx_range_infer(&in[0], &in[1], &in[2], out, err);
    case GRAPH_SIZE: return ndx_size_infer(&in[0], a->dtype, out, err);
    case GRAPH_SHAPE: return ndx_shape_infer(&in[0], a->dtype, out, err);
    default: return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "graph: a node of an unknown kind");
    }
}

/* ---- kernels ------------------------------------------------------------------------------ */

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

static ndx_sparse_tensor sparse_at(const ndx_tensor *in, int at, int stride) {
    ndx_sparse_tensor sp = {in[at], in[at + stride], in[at + 2 * stride]};
    return sp;
}

static void sparse_out(const ndx_sparse_tensor *sp, ndx_tensor *out) {
    out[0] = sp->indices;
    out[1] = sp->values;
    out[2] = sp->dense_shape;
}

static ndx_status run_sparse_concat(const graph_node *n, const ndx_tensor *in,
                                    const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    int count = n->attrs.count;
    ndx_sparse_tensor local[8], *inputs = local;
    ndx_call c;
    void *block = NULL;
    if (count > 8) {
        /* Through the caller's allocator: a session's pool serves it again on the next run. */
        NDX_TRY(ndx_call_init(&c, "sparse_concat", opt, err));
        NDX_TRY(ndx_call_acquire(&c, (size_t)count * sizeof *inputs, 0, "inputs", &block));
        inputs = block;
    }
    for (int i = 0; i < count; i++) inputs[i] = sparse_at(in, i, count);
    ndx_sparse_tensor result = {out[0], out[1], out[2]};
    ndx_status st =
        ndx_sparse_concat(n->attrs.axis, count, inputs, n->attrs.expand, opt, &result, err);
    if (block) ndx_call_release(&c, block);
    if (st == NDX_OK) sparse_out(&result, out);
    return st;
}

ndx_status graph_kernel_op(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                           ndx_tensor *out, ndx_error *err) {
    const graph_attrs *a = &n->attrs;
    ndx_sparse_tensor sp, result; /* sparse kinds only: other nodes have fewer outputs */
    int64_t dims[NDX_MAX_RANK];
    int rank = 0;
    ndx_status st;
    switch (n->kind) {
    case GRAPH_GATHER_ND: return ndx_gather_nd(&in[0], &in[1], a->batch_dims, opt, out, err);
    case GRAPH_SCATTER_ND:
        NDX_TRY(read_shape(&in[2], dims, &rank, err));
        return ndx_scatter_nd(&in[0], &in[1], rank, dims, opt, out, err);
    case GRAPH_TENSOR_SCATTER:
        return ndx_tensor_scatter_nd(a->scatter_op, &in[0], &in[1], &in[2], opt, out, err);
    case GRAPH_STITCH:
        return a->parallel ? ndx_parallel_dynamic_stitch(a->count, in, in + a->count, opt, out, err)
                           : ndx_dynamic_stitch(a->count, in, in + a->count, opt, out, err);
    case GRAPH_PARTITION: return ndx_dynamic_partition(&in[0], &in[1], a->count, opt, out, err);
    case GRAPH_SPARSE_CONCAT: return run_sparse_concat(n, in, opt, out, err);
    case GRAPH_SPARSE_REORDER:
        sp = sparse_at(in, 0, 1);
        result = sparse_at(out, 0, 1);
        st = ndx_sparse_reorder(&sp, opt, &result, err);
        break;
    case GRAPH_SPARSE_TO_DENSE:
        sp = sparse_at(in, 0, 1);
        if (a->has_default && (in[3].rank != 0 || in[3].dtype != in[1].dtype ||
                               in[3].itemsize != in[1].itemsize)) {
            ndx_spec specs[4] = {ndx_spec_of(&in[0]), ndx_spec_of(&in[1]), ndx_spec_of(&in[2]),
                                 ndx_spec_of(&in[3])};
            const ndx_tensor *none[4] = {NULL, NULL, NULL, NULL};
            ndx_spec ignored;
            return infer_sparse_to_dense(n, specs, none, &ignored, err);
        }
        return ndx_sparse_to_dense(&sp, a->has_default ? in[3].data : NULL, opt, out, err);
    case GRAPH_DENSE_TO_SPARSE:
        result = sparse_at(out, 0, 1);
        st = ndx_dense_to_sparse(&in[0], opt, &result, err);
        break;
    case GRAPH_BINARY: return ndx_binary(a->binary, &in[0], &in[1], opt, out, err);
    case GRAPH_CAST: return ndx_cast(&in[0], a->dtype, opt, out, err);
    case GRAPH_RANGE: return ndx_range(&in[0], &in[1], &in[2], opt, out, err);
    case GRAPH_SIZE: return ndx_size(&in[0], a->dtype, opt, out, err);
    case GRAPH_SHAPE: return ndx_shape_of(&in[0], a->dtype, opt, out, err);
    default:
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "graph: %s is not run by a kernel",
                        graph_type_name(n));
    }
    if (st == NDX_OK) sparse_out(&result, out);
    return st;
}
