/* embedding_kinds.c — the kinds of the embedding bag: EmbeddingBag (ndx_embedding_bag, ndx.h)
 * and EmbeddingBagGrad, the values of its gradient's slices (dense_ops.h). Both take six fixed
 * inputs, so that a graph's text names each: params, ids, bags (segment ids, or offsets when
 * the attribute bag_offsets is true), weights (one per id, or an empty vector for none),
 * max_norm (a float scalar; negative for none) and num_bags (an integer scalar: the output's
 * rows for segment ids, negative for last id + 1); EmbeddingBagGrad takes dy after them and
 * gives two outputs, the rows of the table's gradient slices and the weights' gradient. */
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

/* num_bags: an int32 or int64 scalar. */
static ndx_status check_num_bags(const ndx_spec *m, ndx_error *err) {
    if (m->dtype != NDX_INT32 && m->dtype != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "embedding_bag: num_bags must be int32 or int64, not %s",
                        ndx_dtype_name(m->dtype));
    if (m->rank != NDX_UNKNOWN && m->rank != 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "embedding_bag: num_bags must be a scalar, not of rank %d", m->rank);
    return NDX_OK;
}

/* The op's attributes; max_norm and num_bags from their tensors when known (NULL: not yet,
 * which infer treats as no clipping and rows unknown). */
static ndx_embedding_bag_attrs attrs_of(const graph_node *n, const ndx_tensor *max_norm,
                                        const ndx_tensor *num_bags) {
    ndx_embedding_bag_attrs a;
    a.form = n->attrs.bag_offsets ? NDX_BAGS_OFFSETS : NDX_BAGS_SEGMENT_IDS;
    a.combiner = (ndx_segment_op)n->attrs.combiner;
    a.max_norm = max_norm ? max_norm_of(max_norm) : NDX_NO_MAX_NORM;
    a.num_bags = NDX_SEGMENTS_FROM_IDS;
    if (num_bags) {
        int64_t v = ndx_read_index(num_bags->data, num_bags->dtype, 0);
        a.num_bags = v < 0 ? NDX_SEGMENTS_FROM_IDS : v;
    }
    return a;
}

static ndx_status infer_common(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_embedding_bag_attrs *a,
                               ndx_error *err) {
    NDX_TRY(check_max_norm(&in[4], err));
    NDX_TRY(check_num_bags(&in[5], err));
    NDX_TRY(check_weights(&in[0], &in[3], err));
    *a = attrs_of(n, NULL, consts[5] && consts[5]->rank == 0 ? consts[5] : NULL);
    return NDX_OK;
}

static ndx_status infer_embedding_bag(const graph_node *n, const ndx_spec *in,
                                      const ndx_tensor *const *consts, ndx_spec *out,
                                      ndx_error *err) {
    ndx_embedding_bag_attrs a;
    NDX_TRY(infer_common(n, in, consts, &a, err));
    return ndx_embedding_bag_infer(&in[0], &in[1], &in[2], weights_spec(&in[3]), &a, out, err);
}

static ndx_status run_embedding_bag(const graph_node *n, const ndx_tensor *in,
                                    const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_embedding_bag_attrs a = attrs_of(n, &in[4], &in[5]);
    return ndx_embedding_bag(&in[0], &in[1], &in[2], weights_of(&in[3], &in[1]), &a, opt, out,
                             err);
}

#define BAG_ATTRS                                                                              \
    {{"combiner", GRAPH_ATTR_INT, offsetof(graph_attrs, combiner), NDX_SEGMENT_MEAN,          \
      NDX_SEGMENT_SUM, NDX_SEGMENT_SQRT_N, GRAPH_ATTR_ALWAYS, NULL},                            \
     {"bag_offsets", GRAPH_ATTR_BOOL, offsetof(graph_attrs, bag_offsets), 0, 0, 1, 0, NULL}}

static const char *const bag_inputs[] = {"params",  "ids",      "bags",
                                         "weights", "max_norm", "num_bags"};
const graph_kind_desc graph_kind_embedding_bag = {
    .kind = GRAPH_EMBEDDING_BAG, .type = "EmbeddingBag", .min_inputs = 6, .max_inputs = 6,
    .inputs = bag_inputs, .outputs = 1, .num_attrs = 2, .attrs = BAG_ATTRS,
    .infer = infer_embedding_bag, .run = run_embedding_bag};

static ndx_status infer_embedding_bag_grad(const graph_node *n, const ndx_spec *in,
                                           const ndx_tensor *const *consts, ndx_spec *out,
                                           ndx_error *err) {
    ndx_embedding_bag_attrs a;
    NDX_TRY(infer_common(n, in, consts, &a, err));
    NDX_TRY(ndx_embedding_bag_grad_infer(&in[0], &in[1], &in[2], weights_spec(&in[3]), &a,
                                         &in[6], out, err));
    out[1].shape[0] = in[3].rank == 1 ? in[3].shape[0] : NDX_UNKNOWN; /* as the weights */
    return NDX_OK;
}

static ndx_status run_embedding_bag_grad(const graph_node *n, const ndx_tensor *in,
                                         const ndx_options *opt, ndx_tensor *out,
                                         ndx_error *err) {
    ndx_embedding_bag_attrs a = attrs_of(n, &in[4], &in[5]);
    return ndx_embedding_bag_grad(&in[0], &in[1], &in[2], weights_of(&in[3], &in[1]), &a,
                                  &in[6], opt, out, err);
}

static const char *const bag_grad_inputs[] = {"params",   "ids",      "bags", "weights",
                                              "max_norm", "num_bags", "dy"};
const graph_kind_desc graph_kind_embedding_bag_grad = {
    .kind = GRAPH_EMBEDDING_BAG_GRAD, .type = "EmbeddingBagGrad", .min_inputs = 7,
    .max_inputs = 7, .inputs = bag_grad_inputs, .outputs = 2, .num_attrs = 2, .attrs = BAG_ATTRS,
    .infer = infer_embedding_bag_grad, .run = run_embedding_bag_grad};
