/* kind_checks.c — the rules a kind's schema sets for a node, each said once: how many inputs it
 * takes, its attributes' defaults, which attributes it needs and which values each attribute
 * takes. The text reader (graph_parse.c), ndx_op_by_type (graph_build_type.c) and the builders
 * (graph_build.c) check through these; each keeps the rest of its message (a file:line:column,
 * the word "attribute") around the text written here. */
#include <stdio.h>
#include <string.h>

#include "graph_kind.h"

int graph_arity_ok(const graph_kind_desc *d, int k, char *msg, size_t cap) {
    if (d->group ? k - d->trailing > 0 && (k - d->trailing) % d->group == 0
                 : k >= d->min_inputs && k <= d->max_inputs)
        return 1;
    char want[32];
    if (d->trailing) snprintf(want, sizeof want, "more than %d", d->trailing);
    else if (d->group == 2) snprintf(want, sizeof want, "an even number of");
    else if (d->group) snprintf(want, sizeof want, "a multiple of %d", d->group);
    else if (d->min_inputs == d->max_inputs) snprintf(want, sizeof want, "%d", d->min_inputs);
    else snprintf(want, sizeof want, "%d or %d", d->min_inputs, d->max_inputs);
    snprintf(msg, cap, "%s takes %s inputs, not %d", d->type, want, k);
    return 0;
}

int *graph_attr_field(graph_attrs *attrs, const graph_attr_def *a) {
    return (int *)((char *)attrs + a->offset);
}

int graph_attr_get(const graph_attrs *attrs, const graph_attr_def *a) {
    return *(const int *)((const char *)attrs + a->offset);
}

void graph_attrs_default(const graph_kind_desc *d, graph_attrs *attrs) {
    for (int i = 0; i < d->num_attrs; i++)
        if (d->attrs[i].type != GRAPH_ATTR_VALUE)
            *graph_attr_field(attrs, &d->attrs[i]) = d->attrs[i].def;
}

int graph_attr_find(const graph_kind_desc *d, const char *name) {
    for (int i = 0; i < d->num_attrs; i++)
        if (strcmp(d->attrs[i].name, name) == 0) return i;
    return -1;
}

int graph_attrs_complete(const graph_kind_desc *d, unsigned given, char *msg, size_t cap) {
    for (int i = 0; i < d->num_attrs; i++)
        if ((d->attrs[i].flags & GRAPH_ATTR_REQUIRED) && !(given & (1u << i))) {
            snprintf(msg, cap, "%s needs the attribute %s", d->type, d->attrs[i].name);
            return 0;
        }
    return 1;
}

int graph_attr_value_ok(const graph_attr_def *a, int64_t v, char *msg, size_t cap) {
    switch (a->type) {
    case GRAPH_ATTR_INT:
        if (v >= a->lo && v <= a->hi) return 1;
        snprintf(msg, cap, "%s = %lld is not in [%lld, %lld]", a->name, (long long)v,
                 (long long)a->lo, (long long)a->hi);
        return 0;
    case GRAPH_ATTR_BOOL:
        if (v == 0 || v == 1) return 1;
        snprintf(msg, cap, "%s = %lld is not a bool (0 or 1)", a->name, (long long)v);
        return 0;
    case GRAPH_ATTR_POLICY:
        if (v == NDX_BAD_INDICES_ERROR || v == NDX_BAD_INDICES_IGNORE) return 1;
        snprintf(msg, cap, "%s = %lld is neither NDX_BAD_INDICES_ERROR nor "
                 "NDX_BAD_INDICES_IGNORE", a->name, (long long)v);
        return 0;
    case GRAPH_ATTR_DTYPE:
        if (v >= 0 && v < NDX_DTYPE_COUNT) return 1;
        snprintf(msg, cap, "%s = %lld is not an ndx_dtype", a->name, (long long)v);
        return 0;
    case GRAPH_ATTR_AXES:
        if (v >= 0 && v <= (int64_t)UINT32_MAX) return 1;
        snprintf(msg, cap, "%s = %lld is not a set of axes (a bit mask of 32 bits)", a->name,
                 (long long)v);
        return 0;
    default:
        snprintf(msg, cap, "%s is a Const's value: build constants with ndx_op_const", a->name);
        return 0;
    }
}
