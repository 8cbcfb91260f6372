/* graph_build_sparse_matmul.c — the builder of sparse_dense_matmul (ndx_graph.h); its kind is in
 * sparse_matmul_kinds.c. */
#include "graph_store.h"

ndx_output ndx_op_sparse_dense_matmul_at(const char *file, int line, ndx_scope s,
                                         ndx_sparse_output a, ndx_output b, int adjoint_a,
                                         int adjoint_b) {
    graph_attrs attrs;
    memset(&attrs, 0, sizeof attrs);
    attrs.adjoint_a = adjoint_a != 0;
    attrs.adjoint_b = adjoint_b != 0;
    ndx_output in[4] = {a.indices, a.values, a.dense_shape, b};
    ndx_output out = {{s.graph, graph_build(file, line, s, GRAPH_SPARSE_DENSE_MATMUL, &attrs, 4, in)},
                      0};
    return out;
}
