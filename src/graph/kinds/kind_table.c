/* kind_table.c — the table of descriptors, one per kind in graph_kind's order, and what is
 * looked up in it: a kind by its TensorFlow type name, the names of a kind's inputs. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "graph_kind.h"

static const graph_kind_desc *const kinds[] = {
    &graph_kind_const,
    &graph_kind_placeholder,
    &graph_kind_identity,
    &graph_kind_gather_nd,
    &graph_kind_scatter_nd,
    &graph_kind_tensor_scatter_update,
    &graph_kind_tensor_scatter_add,
    &graph_kind_tensor_scatter_sub,
    &graph_kind_tensor_scatter_min,
    &graph_kind_tensor_scatter_max,
    &graph_kind_stitch,
    &graph_kind_parallel_stitch,
    &graph_kind_partition,
    &graph_kind_sparse_concat,
    &graph_kind_sparse_reorder,
    &graph_kind_sparse_to_dense,
    &graph_kind_dense_to_sparse,
    &graph_kind_add,
    &graph_kind_sub,
    &graph_kind_mul,
    &graph_kind_floor_div,
    &graph_kind_floor_mod,
    &graph_kind_equal,
    &graph_kind_not_equal,
    &graph_kind_real_div,
    &graph_kind_maximum,
    &graph_kind_minimum,
    &graph_kind_less,
    &graph_kind_less_equal,
    &graph_kind_greater,
    &graph_kind_greater_equal,
    &graph_kind_logical_and,
    &graph_kind_logical_or,
    &graph_kind_neg,
    &graph_kind_zeros_like,
    &graph_kind_ones_like,
    &graph_kind_logical_not,
    &graph_kind_abs,
    &graph_kind_square,
    &graph_kind_sqrt,
    &graph_kind_cast,
    &graph_kind_range,
    &graph_kind_size,
    &graph_kind_shape,
    &graph_kind_broadcast_gradient_args,
    &graph_kind_fill,
    &graph_kind_reshape,
    &graph_kind_sum,
    &graph_kind_mean,
    &graph_kind_max,
    &graph_kind_min,
    &graph_kind_select_v2,
    &graph_kind_where,
    &graph_kind_concat,
    &graph_kind_pack,
    &graph_kind_slice,
    &graph_kind_expand_dims,
    &graph_kind_squeeze,
    &graph_kind_variable,
    &graph_kind_apply_sgd,
    &graph_kind_apply_adagrad,
    &graph_kind_apply_adagrad_v2,
    &graph_kind_scatter_add_var,
    &graph_kind_assign_add_var,
    &graph_kind_assign_sub_var,
    &graph_kind_read_variable,
    &graph_kind_assign_var,
};
static_assert(sizeof kinds / sizeof kinds[0] == GRAPH_KIND_COUNT,
              "one descriptor per graph_kind, in its order");

/* The builders map the public enums onto these runs of kinds by offset. */
static_assert(GRAPH_LOGICAL_OR - GRAPH_ADD + 1 == NDX_BINARY_COUNT,
              "a binary kind per ndx_binary_op");
static_assert(GRAPH_SQRT - GRAPH_NEG + 1 == NDX_UNARY_COUNT, "a unary kind per ndx_unary_op");
static_assert(GRAPH_MIN - GRAPH_SUM + 1 == NDX_REDUCE_COUNT, "a reduction kind per ndx_reduce_op");
static_assert(GRAPH_TENSOR_SCATTER_MAX - GRAPH_TENSOR_SCATTER_UPDATE == NDX_SCATTER_MAX,
              "a tensor_scatter kind per ndx_scatter_op");

const graph_kind_desc *graph_desc(graph_kind kind) { return kinds[kind]; }

graph_kind graph_kind_named(const char *type) {
    for (int k = 0; k < GRAPH_KIND_COUNT; k++)
        if (strcmp(kinds[k]->type, type) == 0) return (graph_kind)k;
    return GRAPH_KIND_COUNT;
}

void graph_input_name(graph_kind kind, int num_inputs, int i, char *buf, size_t cap) {
    const graph_kind_desc *d = kinds[kind];
    if (!d->inputs) {
        snprintf(buf, cap, "'x'");
    } else if (d->group == 0) {
        snprintf(buf, cap, "'%s'", d->inputs[i < d->max_inputs ? i : 0]);
    } else {
        int grouped = num_inputs - d->trailing;
        int n = grouped / d->group > 0 ? grouped / d->group : 1;
        int part = i / n < d->group ? i / n : d->group - 1;
        int after = i - d->group * n; /* the index among the trailing inputs */
        if (d->trailing && after >= 0)
            snprintf(buf, cap, "'%s'", d->inputs[d->group + (after < d->trailing ? after : 0)]);
        else if (d->grouped_parts)
            snprintf(buf, cap, "'inputs[%d].%s'", i % n, d->inputs[part]);
        else
            snprintf(buf, cap, "'%s[%d]'", d->inputs[part], i % n);
    }
}
