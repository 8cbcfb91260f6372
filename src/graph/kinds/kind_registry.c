/* kind_registry.c — the public registry of kinds (ndx_kind_count, ndx_kind_info, ndx_kind_find):
 * the descriptor table as language bindings and the `ndx op` command read it, so that a new
 * kind reaches them with no code of theirs. It only reads the table (graph_desc,
 * graph_kind_named). */
#include <assert.h>
#include <string.h>

#include "graph_internal.h"

static_assert(GRAPH_MAX_ATTRS <= NDX_KIND_MAX_ATTRS, "ndx_kind has room for every attribute");

/* The kinds without named inputs take one, 'x' (graph_input_name). */
static const char *const x_name[] = {"x"};

static const ndx_kind_attr_type attr_types[] = {
    [GRAPH_ATTR_INT] = NDX_KIND_ATTR_INT,       [GRAPH_ATTR_BOOL] = NDX_KIND_ATTR_BOOL,
    [GRAPH_ATTR_POLICY] = NDX_KIND_ATTR_POLICY, [GRAPH_ATTR_DTYPE] = NDX_KIND_ATTR_DTYPE,
    [GRAPH_ATTR_VALUE] = NDX_KIND_ATTR_VALUE,   [GRAPH_ATTR_AXES] = NDX_KIND_ATTR_AXES,
};

/* The values ndx_op_by_type accepts for an attribute of this type (graph_build_type.c). */
static void attr_range(const graph_attr_def *a, ndx_kind_attr *out) {
    switch (a->type) {
    case GRAPH_ATTR_INT: out->lo = a->lo, out->hi = a->hi; break;
    case GRAPH_ATTR_BOOL:
    case GRAPH_ATTR_POLICY: out->lo = 0, out->hi = 1; break;
    case GRAPH_ATTR_DTYPE: out->lo = 0, out->hi = NDX_DTYPE_COUNT - 1; break;
    case GRAPH_ATTR_AXES: out->lo = 0, out->hi = UINT32_MAX; break;
    default: out->lo = out->hi = 0; break;
    }
}

int ndx_kind_count(void) { return GRAPH_KIND_COUNT; }

int ndx_kind_find(const char *type) {
    graph_kind k = type ? graph_kind_named(type) : GRAPH_KIND_COUNT;
    return k == GRAPH_KIND_COUNT ? -1 : (int)k;
}

ndx_status ndx_kind_info(int i, ndx_kind *info, ndx_error *err) {
    if (!info) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_kind_info: info is NULL");
    if (i < 0 || i >= GRAPH_KIND_COUNT)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_kind_info: no kind %d (there are %d)",
                        i, GRAPH_KIND_COUNT);
    const graph_kind_desc *d = graph_desc((graph_kind)i);
    memset(info, 0, sizeof *info);
    info->type = d->type;
    info->group = d->group;
    info->grouped_parts = d->grouped_parts;
    info->trailing = d->trailing;
    if (d->group) {
        info->min_inputs = d->group + d->trailing;
        info->max_inputs = -1;
        info->num_input_names = d->group + d->trailing;
    } else {
        info->min_inputs = d->min_inputs;
        info->max_inputs = d->max_inputs;
        info->num_input_names = d->inputs ? d->max_inputs : (d->max_inputs > 0);
    }
    info->input_names = d->inputs ? d->inputs : x_name;
    int counted = d->outputs == GRAPH_OUTPUTS_COUNT || d->outputs == GRAPH_OUTPUTS_COUNT3;
    info->num_outputs = counted ? -1 : d->outputs;
    info->outputs_attr = counted ? d->count_name : NULL;
    info->outputs_per_count = !counted ? 0 : d->outputs == GRAPH_OUTPUTS_COUNT3 ? 3 : 1;
    info->flags = (d->flags & GRAPH_KIND_SPARSE_OUT ? NDX_KIND_SPARSE_OUTPUT : 0u) |
                  (d->flags & GRAPH_KIND_STATEFUL ? NDX_KIND_STATEFUL : 0u) |
                  (d->flags & GRAPH_KIND_MUTATES ? NDX_KIND_MUTATES : 0u) |
                  (i == GRAPH_CONST || i == GRAPH_PLACEHOLDER || i == GRAPH_VARIABLE
                       ? NDX_KIND_OWN_BUILDER
                       : 0u);
    info->num_variables = d->vars;
    info->num_attrs = d->num_attrs;
    for (int j = 0; j < d->num_attrs; j++) {
        const graph_attr_def *a = &d->attrs[j];
        ndx_kind_attr *out = &info->attrs[j];
        out->name = a->name;
        out->type = attr_types[a->type];
        out->def = a->type == GRAPH_ATTR_VALUE ? 0 : a->def;
        attr_range(a, out);
        out->required = (a->flags & GRAPH_ATTR_REQUIRED) != 0;
        out->always_written = (a->flags & GRAPH_ATTR_ALWAYS) != 0;
        out->alias = a->type == GRAPH_ATTR_POLICY ? a->alias : NULL;
    }
    return NDX_OK;
}
