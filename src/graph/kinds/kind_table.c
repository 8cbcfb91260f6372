/* kind_table.c — the table of descriptors, one per line of kinds.def in graph_kind's order, and
 * what is looked up in it: a kind by its TensorFlow type name, the names of a kind's inputs. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "graph_kind.h"

static const graph_kind_desc *const kinds[] = {
#define NDX_KIND(kind, name) [kind] = &graph_kind_##name,
#include "kinds.def"
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
