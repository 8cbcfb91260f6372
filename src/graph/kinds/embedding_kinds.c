/* embedding_kinds.c — the kinds of the embedding bag: EmbeddingBag (ndx_embedding_bag, ndx.h)
 * and EmbeddingBagGrad, the values of its gradient's slices (dense_ops.h). Both take five fixed
 * inputs, so that a graph's text names each: params, ids, bags (segment ids, or offsets when
 * the attribute bag_offsets is true), weights (one per id, or an empty vector for none) and
 * max_norm (a float scalar; negative for none); EmbeddingBagGrad takes dy after them. */
#include <math.h>

#include "graph_internal.h"

/* The float scalar max_norm. */
static ndx_status check_max_norm(const ndx_spec *m, ndx_error *err) {
    if (ndx_dtype_kind_of(m->dtype) != NDX_KIND_FLOAT)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "embedding_bag: max_norm must be a float scalar, not %s",
                        ndx_dtype_name(m->dtype));
    if (m->rank != NDX_UNKNOWN && m->rank != 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "embedding_bag: max_norm must be a scalar, not of rank %d", m->rank);
    return NDX_OK;
}

static double max_norm_of(const ndx_tensor *m) {
    switch (m->dtype) {
    case NDX_FLOAT16: return ndx_float16_to_float(*(const uint16_t *)m->data);
    case NDX_BFLOAT16: return ndx_bfloat16_to_float(*(const uint16_t *)m->data);
    case NDX_FLOAT32: return *(const float *)m->data;
    default: return *(const double *)m->data;
    }
}

/* The weights' spec for the op's infer: NULL when an empty vector may stand for none. */
static const ndx_spec *weights_spec(const ndx_spec *w) {
    return w->rank == 1 && w->shape[0] > 0 ? w : NULL;
}

/* Weights: params' dtype, 1-D, checked whatever their length. */
static ndx_status check_weights(const ndx_spec *params, const ndx_spec *w, ndx_error *err) {
    if (w->dtype != params->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "embedding_bag: weights must have params' dtype %s, not %s",
                        ndx_dtype_name(params->dtype), ndx_dtype_name(w->dtype));
    if (w->rank != NDX_UNKNOWN && w->rank != 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "embedding_bag: weights must be 1-D, not of rank %d", w->rank);
    return NDX_OK;
}

/* The weights tensor for the op: NULL for an empty vector beside ids. */
static const ndx_tensor *weights_of(const ndx_tensor *w, const ndx_tensor *ids) {
    return w->shape[0] == 0 && ids->rank == 1 && ids->shape[0] > 0 ? NULL : w;
}

static ndx_bag_form form_of(const graph_node *n) {
    return n->attrs.bag_offsets ? NDX_BAGS_OFFSETS : NDX_BAGS_SEGMENT_IDS;
}

static ndx_status infer_embedding_bag(const graph_node *n, const ndx_spec *in,
                                      const ndx_tensor *const *consts, ndx_spec *out,
                                      ndx_error *err) {
    (void)consts;
    NDX_TRY(check_max_norm(&in[4], err));
    NDX_TRY(check_weights(&in[0], &in[3], err));
    return ndx_embedding_bag_infer(&in[0], &in[1], &in[2], form_of(n), weights_spec(&in[3]),
                                   (ndx_segment_op)n->attrs.combiner, NDX_NO_MAX_NORM, out, err);
}

static ndx_status run_embedding_bag(const graph_node *n, const ndx_tensor *in,
                                    const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return ndx_embedding_bag(&in[0], &in[1], &in[2], form_of(n), weights_of(&in[3], &in[1]),
                             (ndx_segment_op)n->attrs.combiner, max_norm_of(&in[4]), opt, out,
                             err);
}

#define BAG_ATTRS                                                                              \
    {{"combiner", GRAPH_ATTR_INT, offsetof(graph_attrs, combiner), NDX_SEGMENT_MEAN,          \
      NDX_SEGMENT_SUM, NDX_SEGMENT_SQRT_N, GRAPH_ATTR_ALWAYS, NULL},                            \
     {"bag_offsets", GRAPH_ATTR_BOOL, offsetof(graph_attrs, bag_offsets), 0, 0, 1, 0, NULL}}

static const char *const bag_inputs[] = {"params", "ids", "bags", "weights", "max_norm"};
const graph_kind_desc graph_kind_embedding_bag = {
    .kind = GRAPH_EMBEDDING_BAG, .type = "EmbeddingBag", .min_inputs = 5, .max_inputs = 5,
    .inputs = bag_inputs, .outputs = 1, .num_attrs = 2, .attrs = BAG_ATTRS,
    .infer = infer_embedding_bag, .run = run_embedding_bag};

static ndx_status infer_embedding_bag_grad(const graph_node *n, const ndx_spec *in,
                                           const ndx_tensor *const *consts, ndx_spec *out,
                                           ndx_error *err) {
    (void)consts;
    NDX_TRY(check_max_norm(&in[4], err));
    NDX_TRY(check_weights(&in[0], &in[3], err));
    return ndx_embedding_bag_grad_infer(&in[0], &in[1], &in[2], form_of(n),
                                        weights_spec(&in[3]), (ndx_segment_op)n->attrs.combiner,
                                        NDX_NO_MAX_NORM, &in[5], out, err);
}

static ndx_status run_embedding_bag_grad(const graph_node *n, const ndx_tensor *in,
                                         const ndx_options *opt, ndx_tensor *out,
                                         ndx_error *err) {
    return ndx_embedding_bag_grad(&in[0], &in[1], &in[2], form_of(n), weights_of(&in[3], &in[1]),
                                  (ndx_segment_op)n->attrs.combiner, max_norm_of(&in[4]), &in[5],
                                  opt, out, err);
}

static const char *const bag_grad_inputs[] = {"params",  "ids",      "bags",
                                              "weights", "max_norm", "dy"};
const graph_kind_desc graph_kind_embedding_bag_grad = {
    .kind = GRAPH_EMBEDDING_BAG_GRAD, .type = "EmbeddingBagGrad", .min_inputs = 6,
    .max_inputs = 6, .inputs = bag_grad_inputs, .outputs = 1, .num_attrs = 2, .attrs = BAG_ATTRS,
    .infer = infer_embedding_bag_grad, .run = run_embedding_bag_grad};
