/* array_kinds.c — the kinds that join tensors along an axis or cut a block out of one:
 * concat (ConcatV2: n values, then the axis), stack (Pack), slice (Slice), and the two reshapes
 * that add or drop dims of 1 (ExpandDims, Squeeze). A constant axis, begin or size gives exact
 * output dims at build time. */
#include "graph_internal.h"

static ndx_status infer_concat(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    int count = n->attrs.count;
    return ndx_concat_infer(count, in, &in[count], consts[count], out, err);
}

static ndx_status run_concat(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    return ndx_concat(n->attrs.count, in, &in[n->attrs.count], opt, out, err);
}

/* Strings of different widths among the values are widened to one (graph_widths.c): from
 * input 0, every input (the axis is not a string). */
static const char *const concat_inputs[] = {"values", "axis"};
const graph_kind_desc graph_kind_concat = {
    .kind = GRAPH_CONCAT, .type = "ConcatV2", .group = 1, .trailing = 1, .inputs = concat_inputs,
    .count_name = "n", .outputs = 1, .width_first = 0, .width_step = 1, .infer = infer_concat,
    .run = run_concat};

static ndx_status infer_pack(const graph_node *n, const ndx_spec *in,
                             const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    return ndx_stack_infer(n->attrs.count, in, n->attrs.axis, out, err);
}

static ndx_status run_pack(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                           ndx_tensor *out, ndx_error *err) {
    return ndx_stack(n->attrs.count, in, n->attrs.axis, opt, out, err);
}

static const char *const pack_inputs[] = {"values"};
const graph_kind_desc graph_kind_pack = {
    .kind = GRAPH_PACK, .type = "Pack", .group = 1, .inputs = pack_inputs, .count_name = "n",
    .outputs = 1, .width_first = 0, .width_step = 1, .num_attrs = 1,
    .attrs = {{"axis", GRAPH_ATTR_INT, offsetof(graph_attrs, axis), 0, -NDX_MAX_RANK - 1,
               NDX_MAX_RANK, 0, NULL}},
    .infer = infer_pack, .run = run_pack};

static ndx_status infer_slice(const graph_node *n, const ndx_spec *in,
                              const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)n;
    return ndx_slice_infer(&in[0], &in[1], consts[1], &in[2], consts[2], out, err);
}

static ndx_status run_slice(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                            ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_slice(&in[0], &in[1], &in[2], opt, out, err);
}

static const char *const slice_inputs[] = {"input", "begin", "size"};
const graph_kind_desc graph_kind_slice = {
    .kind = GRAPH_SLICE, .type = "Slice", .min_inputs = 3, .max_inputs = 3,
    .inputs = slice_inputs, .outputs = 1, .infer = infer_slice, .run = run_slice};

static ndx_status infer_expand_dims(const graph_node *n, const ndx_spec *in,
                                    const ndx_tensor *const *consts, ndx_spec *out,
                                    ndx_error *err) {
    (void)n;
    return ndx_expand_dims_infer(&in[0], &in[1], consts[1], out, err);
}

static ndx_status run_expand_dims(const graph_node *n, const ndx_tensor *in,
                                  const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_expand_dims(&in[0], &in[1], opt, out, err);
}

static const char *const expand_dims_inputs[] = {"input", "axis"};
const graph_kind_desc graph_kind_expand_dims = {
    .kind = GRAPH_EXPAND_DIMS, .type = "ExpandDims", .min_inputs = 2, .max_inputs = 2,
    .inputs = expand_dims_inputs, .outputs = 1, .infer = infer_expand_dims,
    .run = run_expand_dims};

static ndx_status infer_squeeze(const graph_node *n, const ndx_spec *in,
                                const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    return ndx_squeeze_infer(&in[0], (uint32_t)n->attrs.squeeze_dims, out, err);
}

static ndx_status run_squeeze(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                              ndx_tensor *out, ndx_error *err) {
    return ndx_squeeze(&in[0], (uint32_t)n->attrs.squeeze_dims, opt, out, err);
}

static const char *const squeeze_inputs[] = {"input"};
const graph_kind_desc graph_kind_squeeze = {
    .kind = GRAPH_SQUEEZE, .type = "Squeeze", .min_inputs = 1, .max_inputs = 1,
    .inputs = squeeze_inputs, .outputs = 1, .num_attrs = 1,
    .attrs = {{"squeeze_dims", GRAPH_ATTR_AXES, offsetof(graph_attrs, squeeze_dims), 0, 0, 0, 0,
               NULL}},
    .infer = infer_squeeze, .run = run_squeeze};
