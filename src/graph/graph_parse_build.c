/* graph_parse_build.c — the node a line of the text form describes, built through the same
 * builders as a C program's, so shapes are inferred and checked as they are there. */
#include <stdlib.h>

#include "graph_parse.h"

/* Builds the node a line describes through the builders of ndx_graph.h. */
ndx_status gp_build_line(parser *ps, const op_entry *e, node_line *nl) {
    ndx_graph *g = ps->g;
    ndx_scope s = graph_scope_exact(g, nl->name);
    const char *f = ps->source;
    int L = ps->line, n = nl->num_inputs;
    ndx_output *in = nl->inputs;
    ndx_output out = {{g, 0}, 0};
    ndx_operation op = {g, 0};
    ndx_scatter_attrs sa = {nl->bad_ignore ? NDX_BAD_INDICES_IGNORE : NDX_BAD_INDICES_ERROR};
    const char *t = e->type;
    if (!strcmp(t, "Placeholder")) {
        out = ndx_op_placeholder_at(f, L, s, &nl->specs[0]);
    } else if (!strcmp(t, "Identity")) {
        out = ndx_op_identity_at(f, L, s, in[0]);
    } else if (!strcmp(t, "GatherNd")) {
        ndx_gather_nd_attrs ga = {(int)nl->batch_dims, sa.bad_indices};
        out = ndx_op_gather_nd_at(f, L, s, in[0], in[1], &ga);
    } else if (!strcmp(t, "ScatterNd")) {
        out = ndx_op_scatter_nd_at(f, L, s, in[0], in[1], in[2], &sa);
    } else if (!strncmp(t, "TensorScatter", 13)) {
        static const char *const names[5] = {"Update", "Add", "Sub", "Min", "Max"};
        int k = 0;
        while (strcmp(t + 13, names[k]) != 0) k++;
        out = ndx_op_tensor_scatter_nd_at(f, L, s, (ndx_scatter_op)k, in[0], in[1], in[2], &sa);
    } else if (!strcmp(t, "DynamicStitch") || !strcmp(t, "ParallelDynamicStitch")) {
        out = ndx_op_dynamic_stitch_at(f, L, s, t[0] == 'P', n / 2, in, in + n / 2);
    } else if (!strcmp(t, "DynamicPartition")) {
        op = ndx_op_dynamic_partition_at(f, L, s, in[0], in[1], (int)nl->num_partitions, NULL);
    } else if (!strcmp(t, "SparseConcat")) {
        int k = n / 3;
        ndx_sparse_output *sp = malloc((size_t)k * sizeof *sp);
        if (!sp) return ndx_fail(ps->err, NDX_E_NO_MEMORY, "%s: out of memory", f);
        for (int i = 0; i < k; i++) {
            sp[i].indices = in[i];
            sp[i].values = in[k + i];
            sp[i].dense_shape = in[2 * k + i];
        }
        op = ndx_op_sparse_concat_at(f, L, s, (int)nl->axis, k, sp, nl->expand).indices.op;
        free(sp);
    } else if (!strcmp(t, "SparseReorder") || !strcmp(t, "DenseToSparse")) {
        ndx_sparse_output sp = {in[0], in[n > 1], in[n > 2 ? 2 : 0]};
        op = (t[0] == 'S' ? ndx_op_sparse_reorder_at(f, L, s, sp)
                          : ndx_op_dense_to_sparse_at(f, L, s, in[0]))
                 .indices.op;
    } else if (!strcmp(t, "SparseToDense")) {
        ndx_sparse_output sp = {in[0], in[1], in[2]};
        out = ndx_op_sparse_to_dense_at(f, L, s, sp, n == 4 ? &in[3] : NULL);
    } else if (!strcmp(t, "Cast")) {
        out = ndx_op_cast_at(f, L, s, in[0], nl->to);
    } else if (!strcmp(t, "Range")) {
        out = ndx_op_range_at(f, L, s, in[0], in[1], in[2]);
    } else if (!strcmp(t, "Size") || !strcmp(t, "Shape")) {
        ndx_dtype dt = nl->given & A_OUT ? nl->out_type : NDX_INT32;
        out = t[1] == 'i' ? ndx_op_size_at(f, L, s, in[0], dt) : ndx_op_shape_at(f, L, s, in[0], dt);
    } else { /* the binary ops, in ndx_binary_kind's order */
        static const char *const names[7] = {"AddV2", "Sub", "Mul", "FloorDiv", "FloorMod",
                                             "Equal", "NotEqual"};
        int k = 0;
        while (strcmp(t, names[k]) != 0) k++;
        out = ndx_op_binary_at(f, L, s, (ndx_binary_kind)k, in[0], in[1]);
    }
    if (!op.id) op = out.op;
    if (ndx_operation_ok(op)) return NDX_OK;
    ndx_status st = ndx_graph_status(g, ps->err); /* the builder's error, at this line */
    return st != NDX_OK ? st : NDX_E_FORMAT;
}
