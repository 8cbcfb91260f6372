/* shape_kinds.c — the kinds whose output shape is the value of an input: fill (dims),
 * reshape (shape) and the reductions sum, mean, max and min (axes). A constant argument gives
 * the exact output spec at build time; otherwise what its length tells. Beside them select and
 * where (whose output's length is the count of true elements). */
#include "graph_internal.h"

static ndx_status infer_fill(const graph_node *n, const ndx_spec *in,
                             const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)n;
    return ndx_fill_infer(&in[0], consts[0], &in[1], out, err);
}

static ndx_status run_fill(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                           ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_fill(&in[0], &in[1], opt, out, err);
}

static const char *const fill_inputs[] = {"dims", "value"};
const graph_kind_desc graph_kind_fill = {
    .kind = GRAPH_FILL, .type = "Fill", .min_inputs = 2, .max_inputs = 2, .inputs = fill_inputs,
    .outputs = 1, .infer = infer_fill, .run = run_fill};

static ndx_status infer_reshape(const graph_node *n, const ndx_spec *in,
                                const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)n;
    return ndx_reshape_infer(&in[0], &in[1], consts[1], out, err);
}

static ndx_status run_reshape(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                              ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_reshape(&in[0], &in[1], opt, out, err);
}

static const char *const reshape_inputs[] = {"tensor", "shape"};
const graph_kind_desc graph_kind_reshape = {
    .kind = GRAPH_RESHAPE, .type = "Reshape", .min_inputs = 2, .max_inputs = 2,
    .inputs = reshape_inputs, .outputs = 1, .infer = infer_reshape, .run = run_reshape};

/* The reductions: Sum, Mean, Max, Min (their variant is the ndx_reduce_op). */
static ndx_status infer_reduce(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    return ndx_reduce_infer((ndx_reduce_op)graph_variant(n), &in[0], &in[1], consts[1],
                            n->attrs.keep_dims, out, err);
}

static ndx_status run_reduce(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    return ndx_reduce((ndx_reduce_op)graph_variant(n), &in[0], &in[1], n->attrs.keep_dims, opt,
                      out, err);
}

static const char *const reduce_inputs[] = {"input", "axes"};
#define REDUCE(KIND, TYPE, OP)                                                                  \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 2, .max_inputs = 2,               \
     .inputs = reduce_inputs, .outputs = 1, .num_attrs = 1,                                     \
     .attrs = {{"keep_dims", GRAPH_ATTR_BOOL, offsetof(graph_attrs, keep_dims), 0, 0, 1, 0,     \
                NULL}},                                                                         \
     .infer = infer_reduce, .run = run_reduce}
const graph_kind_desc graph_kind_sum = REDUCE(GRAPH_SUM, "Sum", NDX_REDUCE_SUM);
const graph_kind_desc graph_kind_mean = REDUCE(GRAPH_MEAN, "Mean", NDX_REDUCE_MEAN);
const graph_kind_desc graph_kind_max = REDUCE(GRAPH_MAX, "Max", NDX_REDUCE_MAX);
const graph_kind_desc graph_kind_min = REDUCE(GRAPH_MIN, "Min", NDX_REDUCE_MIN);

/* SelectV2 (x where condition, else y) and Where (the coordinates of the true elements). */
static ndx_status infer_select(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)n;
    (void)consts;
    return ndx_select_infer(&in[0], &in[1], &in[2], out, err);
}

static ndx_status run_select(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_select(&in[0], &in[1], &in[2], opt, out, err);
}

static const char *const select_inputs[] = {"condition", "x", "y"};
/* x and y may be strings of different widths: the graph widens them to one (graph_widths.c). */
const graph_kind_desc graph_kind_select_v2 = {
    .kind = GRAPH_SELECT_V2, .type = "SelectV2", .min_inputs = 3, .max_inputs = 3,
    .inputs = select_inputs, .outputs = 1, .width_first = 1, .width_step = 1,
    .infer = infer_select, .run = run_select};

static ndx_status infer_where(const graph_node *n, const ndx_spec *in,
                              const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)n;
    (void)consts;
    return ndx_where_infer(&in[0], out, err);
}

static ndx_status run_where(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                            ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_where(&in[0], opt, out, err);
}

static const char *const where_inputs[] = {"condition"};
const graph_kind_desc graph_kind_where = {
    .kind = GRAPH_WHERE, .type = "Where", .min_inputs = 1, .max_inputs = 1,
    .inputs = where_inputs, .outputs = 1, .infer = infer_where, .run = run_where};
