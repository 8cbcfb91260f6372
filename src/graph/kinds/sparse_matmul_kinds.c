/* sparse_matmul_kinds.c — the kind of ndx_sparse_dense_matmul: SparseTensorDenseMatMul, with
 * TensorFlow's four inputs (a_indices, a_values, a_shape, b) and attributes adjoint_a,
 * adjoint_b. */
#include "graph_internal.h"
#include "sparse_kind_parts.h"

static const char *const matmul_inputs[] = {"a_indices", "a_values", "a_shape", "b"};

/* With a_shape known at build time the output's rows are known too. */
static ndx_status infer_sparse_dense_matmul(const graph_node *n, const ndx_spec *in,
                                            const ndx_tensor *const *consts, ndx_spec *out,
                                            ndx_error *err) {
    ndx_sparse_spec a = graph_sparse_spec_at(in, 0, 1);
    NDX_TRY(ndx_sparse_dense_matmul_infer(&a, &in[3], n->attrs.adjoint_a, n->attrs.adjoint_b,
                                          out, err));
    const ndx_tensor *shape = consts ? consts[2] : NULL;
    if (shape && shape->rank == 1 && shape->shape[0] == 2) {
        int64_t rows = ndx_read_index(shape->data, shape->dtype, n->attrs.adjoint_a ? 1 : 0);
        out->shape[0] = rows >= 0 ? rows : NDX_UNKNOWN; /* a negative dim fails at run time */
    }
    return NDX_OK;
}

static ndx_status run_sparse_dense_matmul(const graph_node *n, const ndx_tensor *in,
                                          const ndx_options *opt, ndx_tensor *out,
                                          ndx_error *err) {
    ndx_sparse_tensor a = graph_sparse_at(in, 0, 1);
    return ndx_sparse_dense_matmul(&a, &in[3], n->attrs.adjoint_a, n->attrs.adjoint_b, opt, out,
                                   err);
}

const graph_kind_desc graph_kind_sparse_dense_matmul = {
    .kind = GRAPH_SPARSE_DENSE_MATMUL, .type = "SparseTensorDenseMatMul", .min_inputs = 4,
    .max_inputs = 4, .inputs = matmul_inputs, .outputs = 1, .num_attrs = 2,
    .attrs = {{"adjoint_a", GRAPH_ATTR_BOOL, offsetof(graph_attrs, adjoint_a), 0, 0, 1, 0, NULL},
              {"adjoint_b", GRAPH_ATTR_BOOL, offsetof(graph_attrs, adjoint_b), 0, 0, 1, 0, NULL}},
    .infer = infer_sparse_dense_matmul, .run = run_sparse_dense_matmul};
