/* graph_build_type.c — ndx_op_by_type: any node but Const, Placeholder and Variable from its
 * TensorFlow type name, inputs and attributes named as in the text form, for language bindings
 * (TensorFlow's TF_NewOperation and TF_FinishOperation in one call). It checks what the text
 * reader checks (the type, the count of inputs, each attribute against the kind's schema), then
 * builds through graph_build as the reader does. */
#include <stdio.h>

#include "graph_store.h"

/* Records a build error of this call (no node yet: it is named by its type). */
static ndx_operation refuse(const char *file, int line, ndx_scope s, const char *type,
                            const char *msg) {
    ndx_operation failed = {s.graph, 0};
    if (s.graph && !s.graph->failed)
        graph_record(s.graph, NDX_E_INVALID_ARGUMENT, file ? file : "?", line,
                     type ? type : "?", msg);
    return failed;
}

/* The count of inputs a kind takes: as many as it takes, or `group` times its count (+ `trailing`). */
static int arity_ok(const graph_kind_desc *d, int k, char *msg, size_t cap) {
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

/* One attribute's value checked against its schema entry: 1, or 0 with msg set. */
static int attr_value_ok(const graph_attr_def *a, int64_t v, char *msg, size_t cap) {
    switch (a->type) {
    case GRAPH_ATTR_INT:
        if (v >= a->lo && v <= a->hi) return 1;
        snprintf(msg, cap, "attribute %s = %lld is not in [%lld, %lld]", a->name, (long long)v,
                 (long long)a->lo, (long long)a->hi);
        return 0;
    case GRAPH_ATTR_BOOL:
        if (v == 0 || v == 1) return 1;
        snprintf(msg, cap, "attribute %s = %lld is not a bool (0 or 1)", a->name, (long long)v);
        return 0;
    case GRAPH_ATTR_POLICY:
        if (v == NDX_BAD_INDICES_ERROR || v == NDX_BAD_INDICES_IGNORE) return 1;
        snprintf(msg, cap, "attribute %s = %lld is neither NDX_BAD_INDICES_ERROR nor "
                 "NDX_BAD_INDICES_IGNORE", a->name, (long long)v);
        return 0;
    case GRAPH_ATTR_DTYPE:
        if (v >= 0 && v < NDX_DTYPE_COUNT) return 1;
        snprintf(msg, cap, "attribute %s = %lld is not an ndx_dtype", a->name, (long long)v);
        return 0;
    case GRAPH_ATTR_AXES:
        if (v >= 0 && v <= (int64_t)UINT32_MAX) return 1;
        snprintf(msg, cap, "attribute %s = %lld is not a set of axes (a bit mask of 32 bits)",
                 a->name, (long long)v);
        return 0;
    default:
        snprintf(msg, cap, "attribute %s is a Const's value: build constants with ndx_op_const",
                 a->name);
        return 0;
    }
}

/* The kind's attributes from (name, value) pairs: defaults for those not given; 1, or 0 with
 * msg set for an unknown name, a name given twice, a bad value or a missing required one. */
static int read_attrs(const graph_kind_desc *d, int num_attrs, const ndx_attr *attrs,
                      graph_attrs *out, char *msg, size_t cap) {
    unsigned given = 0;
    for (int i = 0; i < d->num_attrs; i++)
        if (d->attrs[i].type != GRAPH_ATTR_VALUE)
            *(int *)((char *)out + d->attrs[i].offset) = d->attrs[i].def;
    for (int j = 0; j < num_attrs; j++) {
        const char *name = attrs[j].name ? attrs[j].name : "(null)";
        int i = 0;
        while (i < d->num_attrs && strcmp(d->attrs[i].name, name) != 0) i++;
        if (i == d->num_attrs) {
            char shown[64];
            snprintf(msg, cap, "%s takes no attribute '%s'", d->type,
                     graph_short_name(name, shown, sizeof shown));
            return 0;
        }
        if (given & (1u << i)) {
            snprintf(msg, cap, "attribute '%s' is given twice", name);
            return 0;
        }
        given |= 1u << i;
        if (!attr_value_ok(&d->attrs[i], attrs[j].value, msg, cap)) return 0;
        *(int *)((char *)out + d->attrs[i].offset) = (int)(uint32_t)attrs[j].value;
    }
    for (int i = 0; i < d->num_attrs; i++)
        if ((d->attrs[i].flags & GRAPH_ATTR_REQUIRED) && !(given & (1u << i))) {
            snprintf(msg, cap, "%s needs the attribute %s", d->type, d->attrs[i].name);
            return 0;
        }
    return 1;
}

ndx_operation ndx_op_by_type_at(const char *file, int line, ndx_scope s, const char *type,
                                int num_inputs, const ndx_output *inputs, int num_attrs,
                                const ndx_attr *attrs) {
    ndx_operation op = {s.graph, 0};
    if (!s.graph || s.graph->failed) return op;
    char msg[160], shown[64];
    graph_kind kind = type ? graph_kind_named(type) : GRAPH_KIND_COUNT;
    if (kind == GRAPH_KIND_COUNT) {
        snprintf(msg, sizeof msg, "unknown op type '%s'",
                 type ? graph_short_name(type, shown, sizeof shown) : "(null)");
        return refuse(file, line, s, "?", msg);
    }
    const graph_kind_desc *d = graph_desc(kind);
    if (kind == GRAPH_CONST || kind == GRAPH_PLACEHOLDER || kind == GRAPH_VARIABLE) {
        snprintf(msg, sizeof msg, "%s has its own builder (ndx_op_%s)", d->type,
                 kind == GRAPH_CONST ? "const" : kind == GRAPH_PLACEHOLDER ? "placeholder"
                                                                           : "variable");
        return refuse(file, line, s, d->type, msg);
    }
    if (num_inputs < 0 || (num_inputs > 0 && !inputs) || num_attrs < 0 || (num_attrs > 0 && !attrs))
        return refuse(file, line, s, d->type, "a negative count, or a count without its array");
    if (!arity_ok(d, num_inputs, msg, sizeof msg)) return refuse(file, line, s, d->type, msg);
    graph_attrs a;
    memset(&a, 0, sizeof a);
    if (!read_attrs(d, num_attrs, attrs, &a, msg, sizeof msg))
        return refuse(file, line, s, d->type, msg);
    op.id = graph_build(file, line, s, kind, &a, num_inputs, inputs);
    return op;
}
