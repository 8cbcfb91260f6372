/* sparse_reduce_kinds.c — the kinds of ndx_sparse_reduce, ndx_sparse_reduce_sparse and
 * ndx_sparse_softmax (ndx.h 5d2): SparseReduceSum, SparseReduceMax, SparseReduceSumSparse,
 * SparseReduceMaxSparse and SparseSoftmax, TensorFlow's type names and inputs (a sparse tensor as
 * three inputs, sparse_kind_parts.h; the reductions' axes a fourth). */
#include "graph_internal.h"
#include "sparse_kind_parts.h"

static const char *const reduce_inputs[] = {"indices", "values", "dense_shape", "reduction_axes"};

static ndx_status infer_sparse_reduce(const graph_node *n, const ndx_spec *in,
                                      const ndx_tensor *const *consts, ndx_spec *out,
                                      ndx_error *err) {
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1);
    return ndx_sparse_reduce_infer((ndx_sparse_reduce_op)graph_variant(n), &sp, &in[3],
                                   consts ? consts[3] : NULL, n->attrs.keep_dims, out, err);
}

static ndx_status run_sparse_reduce(const graph_node *n, const ndx_tensor *in,
                                    const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1);
    return ndx_sparse_reduce((ndx_sparse_reduce_op)graph_variant(n), &sp, &in[3],
                             n->attrs.keep_dims, opt, out, err);
}

static ndx_status infer_sparse_reduce_sparse(const graph_node *n, const ndx_spec *in,
                                             const ndx_tensor *const *consts, ndx_spec *out,
                                             ndx_error *err) {
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1), result;
    NDX_TRY(ndx_sparse_reduce_sparse_infer((ndx_sparse_reduce_op)graph_variant(n), &sp, &in[3],
                                           consts ? consts[3] : NULL, n->attrs.keep_dims,
                                           &result, err));
    graph_sparse_specs_out(&result, out);
    return NDX_OK;
}

static ndx_status run_sparse_reduce_sparse(const graph_node *n, const ndx_tensor *in,
                                           const ndx_options *opt, ndx_tensor *out,
                                           ndx_error *err) {
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1), result = graph_sparse_at(out, 0, 1);
    NDX_TRY(ndx_sparse_reduce_sparse((ndx_sparse_reduce_op)graph_variant(n), &sp, &in[3],
                                     n->attrs.keep_dims, opt, &result, err));
    graph_sparse_out(&result, out);
    return NDX_OK;
}

/* keep_dims: TensorFlow's attribute name (tf.sparse.reduce_sum's keepdims). */
#define SPARSE_REDUCE(KIND, TYPE, OP, OUTPUTS, FLAGS, INFER, RUN)                                 \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 4, .max_inputs = 4,                 \
     .inputs = reduce_inputs, .outputs = OUTPUTS, .flags = FLAGS, .num_attrs = 1,                \
     .attrs = {{"keep_dims", GRAPH_ATTR_BOOL, offsetof(graph_attrs, keep_dims), 0, 0, 1, 0,      \
                NULL}},                                                                          \
     .infer = INFER, .run = RUN}
const graph_kind_desc graph_kind_sparse_reduce_sum =
    SPARSE_REDUCE(GRAPH_SPARSE_REDUCE_SUM, "SparseReduceSum", NDX_SPARSE_REDUCE_SUM, 1, 0,
                  infer_sparse_reduce, run_sparse_reduce);
const graph_kind_desc graph_kind_sparse_reduce_max =
    SPARSE_REDUCE(GRAPH_SPARSE_REDUCE_MAX, "SparseReduceMax", NDX_SPARSE_REDUCE_MAX, 1, 0,
                  infer_sparse_reduce, run_sparse_reduce);
const graph_kind_desc graph_kind_sparse_reduce_sum_sparse =
    SPARSE_REDUCE(GRAPH_SPARSE_REDUCE_SUM_SPARSE, "SparseReduceSumSparse", NDX_SPARSE_REDUCE_SUM,
                  3, GRAPH_KIND_SPARSE_OUT, infer_sparse_reduce_sparse, run_sparse_reduce_sparse);
const graph_kind_desc graph_kind_sparse_reduce_max_sparse =
    SPARSE_REDUCE(GRAPH_SPARSE_REDUCE_MAX_SPARSE, "SparseReduceMaxSparse", NDX_SPARSE_REDUCE_MAX,
                  3, GRAPH_KIND_SPARSE_OUT, infer_sparse_reduce_sparse, run_sparse_reduce_sparse);

/* ---- SparseSoftmax: the values of the result (its indices and dense_shape are the input's) -- */

static ndx_status infer_sparse_softmax(const graph_node *n, const ndx_spec *in,
                                       const ndx_tensor *const *consts, ndx_spec *out,
                                       ndx_error *err) {
    (void)n;
    (void)consts;
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1);
    return ndx_sparse_softmax_infer(&sp, out, err);
}

static ndx_status run_sparse_softmax(const graph_node *n, const ndx_tensor *in,
                                     const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1);
    return ndx_sparse_softmax(&sp, opt, out, err);
}

const graph_kind_desc graph_kind_sparse_softmax = {
    .kind = GRAPH_SPARSE_SOFTMAX, .type = "SparseSoftmax", .min_inputs = 3, .max_inputs = 3,
    .inputs = graph_sparse_parts, .outputs = 1, .infer = infer_sparse_softmax,
    .run = run_sparse_softmax};
