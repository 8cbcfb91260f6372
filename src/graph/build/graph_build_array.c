/* graph_build_array.c — the builders of concat, stack, slice, expand_dims and squeeze
 * (ndx_graph.h); their kinds are in array_kinds.c. */
#include <stdio.h>
#include <stdlib.h>

#include "graph_store.h"

static ndx_output output_of(ndx_scope s, uint32_t id) {
    ndx_output out = {{s.graph, id}, 0};
    return out;
}

/* Records a build error of a call that makes no node (it is named by its op type). */
static ndx_output refuse(const char *file, int line, ndx_scope s, graph_kind kind,
                         const char *msg) {
    if (s.graph && !s.graph->failed && !s.graph->finished)
        graph_record(s.graph, NDX_E_INVALID_ARGUMENT, file ? file : "?", line,
                     graph_desc(kind)->type, msg);
    return output_of(s, 0);
}

ndx_output ndx_op_concat_at(const char *file, int line, ndx_scope s, int n,
                            const ndx_output *values, ndx_output axis) {
    if (!values && n > 0) return refuse(file, line, s, GRAPH_CONCAT, "values is NULL");
    if (n < 1 || n > NDX_GRAPH_MAX_ARITY) {
        char msg[96];
        snprintf(msg, sizeof msg, "n = %d is not in [1, %d]", n, NDX_GRAPH_MAX_ARITY);
        return refuse(file, line, s, GRAPH_CONCAT, msg);
    }
    ndx_output *in = malloc(((size_t)n + 1) * sizeof *in);
    if (!in) return refuse(file, line, s, GRAPH_CONCAT, "out of memory");
    memcpy(in, values, (size_t)n * sizeof *in);
    in[n] = axis;
    uint32_t id = graph_build(file, line, s, GRAPH_CONCAT, NULL, n + 1, in);
    free(in);
    return output_of(s, id);
}

ndx_output ndx_op_stack_at(const char *file, int line, ndx_scope s, int n,
                           const ndx_output *values, int axis) {
    if (!values && n > 0) return refuse(file, line, s, GRAPH_PACK, "values is NULL");
    graph_attrs a;
    memset(&a, 0, sizeof a);
    a.axis = axis;
    return output_of(s, graph_build(file, line, s, GRAPH_PACK, &a, n > 0 ? n : 0, values));
}

ndx_output ndx_op_slice_at(const char *file, int line, ndx_scope s, ndx_output input,
                           ndx_output begin, ndx_output size) {
    ndx_output in[3] = {input, begin, size};
    return output_of(s, graph_build(file, line, s, GRAPH_SLICE, NULL, 3, in));
}

ndx_output ndx_op_expand_dims_at(const char *file, int line, ndx_scope s, ndx_output input,
                                 ndx_output axis) {
    ndx_output in[2] = {input, axis};
    return output_of(s, graph_build(file, line, s, GRAPH_EXPAND_DIMS, NULL, 2, in));
}

ndx_output ndx_op_squeeze_at(const char *file, int line, ndx_scope s, ndx_output input,
                             int num_axes, const int *axes) {
    if (num_axes < 0 || (num_axes > 0 && !axes))
        return refuse(file, line, s, GRAPH_SQUEEZE, "a negative count, or axes NULL");
    uint32_t mask = 0;
    for (int i = 0; i < num_axes; i++) {
        int bit = ndx_squeeze_bit(axes[i]);
        if (bit < 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "squeeze: axes[%d] = %d is not in [%d, %d)", i, axes[i],
                     -NDX_MAX_RANK, NDX_MAX_RANK);
            return refuse(file, line, s, GRAPH_SQUEEZE, msg);
        }
        mask |= 1u << bit;
    }
    graph_attrs a;
    memset(&a, 0, sizeof a);
    a.squeeze_dims = (int)mask;
    return output_of(s, graph_build(file, line, s, GRAPH_SQUEEZE, &a, 1, &input));
}
