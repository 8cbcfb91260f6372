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

/* The kind's attributes from (name, value) pairs: defaults for those not given; 1, or 0 with
 * msg set for an unknown name, a name given twice, a bad value or a missing required one. */
static int read_attrs(const graph_kind_desc *d, int num_attrs, const ndx_attr *attrs,
                      graph_attrs *out, char *msg, size_t cap) {
    unsigned given = 0;
    graph_attrs_default(d, out);
    for (int j = 0; j < num_attrs; j++) {
        const char *name = attrs[j].name ? attrs[j].name : "(null)";
        int i = graph_attr_find(d, name);
        if (i < 0) {
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
        size_t lead = (size_t)snprintf(msg, cap, "attribute "); /* then the value's fault */
        if (!graph_attr_value_ok(&d->attrs[i], attrs[j].value, msg + lead, cap - lead)) return 0;
        *graph_attr_field(out, &d->attrs[i]) = (int)(uint32_t)attrs[j].value;
    }
    return graph_attrs_complete(d, given, msg, cap);
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
    if (!graph_arity_ok(d, num_inputs, msg, sizeof msg)) return refuse(file, line, s, d->type, msg);
    graph_attrs a;
    memset(&a, 0, sizeof a);
    if (!read_attrs(d, num_attrs, attrs, &a, msg, sizeof msg))
        return refuse(file, line, s, d->type, msg);
    op.id = graph_build(file, line, s, kind, &a, num_inputs, inputs);
    return op;
}
