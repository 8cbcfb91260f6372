/* graph_kinds_shape.c — the kinds whose output shape is the value of an input: fill (dims),
 * reshape (shape) and sum (axes). A constant argument gives the exact output spec at build
 * time; otherwise what its length tells. */
#include "grad_util.h"
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
    .outputs = 1, .infer = infer_fill, .run = run_fill, .gradient = grad_fill};

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
    .inputs = reshape_inputs, .outputs = 1, .infer = infer_reshape, .run = run_reshape,
    .gradient = grad_reshape};

static ndx_status infer_sum(const graph_node *n, const ndx_spec *in,
                            const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    return ndx_reduce_sum_infer(&in[0], &in[1], consts[1], n->attrs.keep_dims, out, err);
}

static ndx_status run_sum(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                          ndx_tensor *out, ndx_error *err) {
    return ndx_reduce_sum(&in[0], &in[1], n->attrs.keep_dims, opt, out, err);
}

static const char *const sum_inputs[] = {"input", "axes"};
const graph_kind_desc graph_kind_sum = {
    .kind = GRAPH_SUM, .type = "Sum", .min_inputs = 2, .max_inputs = 2, .inputs = sum_inputs,
    .outputs = 1, .num_attrs = 1,
    .attrs = {{"keep_dims", GRAPH_ATTR_BOOL, offsetof(graph_attrs, keep_dims), 0, 0, 1, 0, NULL}},
    .infer = infer_sum, .run = run_sum, .gradient = grad_sum};
