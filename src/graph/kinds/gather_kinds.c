/* gather_kinds.c — the kinds of ndx_gather, ndx_one_hot, ndx_unique, ndx_setdiff1d and
 * ndx_boolean_mask: GatherV2, OneHot, Unique, UniqueWithCounts, UniqueV2, UniqueWithCountsV2,
 * ListDiff and BooleanMask. GatherV2's axis, OneHot's
 * depth and UniqueV2's axis are tensors, as in TensorFlow: read when run, and by infer when they
 * are constants (else the dims they decide stay unknown). */
#include "graph_internal.h"

/* A scalar (or, for UniqueV2, a vector) of an index dtype named `what` of `op`, as a spec. */
static ndx_status check_scalar_spec(const ndx_spec *s, const char *op, const char *what,
                                    ndx_error *err) {
    NDX_TRY(ndx_check_index_spec(s, op, what, err));
    if (s->rank != NDX_UNKNOWN && s->rank != 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s must be a scalar, but it has rank %d",
                        op, what, s->rank);
    return NDX_OK;
}

static ndx_status read_scalar(const ndx_tensor *t, const char *op, const char *what, int64_t *v,
                              ndx_error *err) {
    NDX_TRY(ndx_check_index_tensor(t, op, what, NULL, err));
    if (t->rank != 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s must be a scalar, but it has rank %d",
                        op, what, t->rank);
    *v = ndx_read_index(t->data, t->dtype, 0);
    return NDX_OK;
}

/* ---- GatherV2 ----------------------------------------------------------------------------- */

static ndx_status gather_axis(const ndx_tensor *t, int *axis, ndx_error *err) {
    int64_t v = 0;
    NDX_TRY(read_scalar(t, "gather", "axis", &v, err));
    if (v < -NDX_MAX_RANK || v > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "gather: Expected axis in the range [-%d, %d), but got %lld", NDX_MAX_RANK,
                        NDX_MAX_RANK, (long long)v);
    *axis = (int)v;
    return NDX_OK;
}

static ndx_status infer_gather(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    NDX_TRY(check_scalar_spec(&in[2], "gather", "axis", err));
    int batch = n->attrs.batch_dims;
    if (consts[2]) {
        int axis = 0;
        NDX_TRY(gather_axis(consts[2], &axis, err));
        return ndx_gather_infer(&in[0], &in[1], axis, batch, out, err);
    }
    /* The axis comes at run time: the checks that do not need it (with axis = batch_dims, the
     * lowest it may be, or 0 where batch_dims is already too large), then every dim but the
     * batch dims unknown. */
    int b = batch < 0 && in[1].rank != NDX_UNKNOWN ? batch + in[1].rank : batch;
    int guess = b < 0 || (in[0].rank != NDX_UNKNOWN && b >= in[0].rank) ? 0 : b;
    NDX_TRY(ndx_gather_infer(&in[0], &in[1], guess, batch, out, err));
    for (int k = b < 0 ? 0 : b; k < out->rank; k++) out->shape[k] = NDX_UNKNOWN;
    return NDX_OK;
}

static ndx_status run_gather(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    int axis = 0;
    NDX_TRY(gather_axis(&in[2], &axis, err));
    return ndx_gather(&in[0], &in[1], axis, n->attrs.batch_dims, opt, out, err);
}

static const char *const gather_inputs[] = {"params", "indices", "axis"};
const graph_kind_desc graph_kind_gather_v2 = {
    .kind = GRAPH_GATHER_V2, .type = "GatherV2", .min_inputs = 3, .max_inputs = 3,
    .inputs = gather_inputs, .outputs = 1, .num_attrs = 2,
    .attrs = {{"batch_dims", GRAPH_ATTR_INT, offsetof(graph_attrs, batch_dims), 0, -NDX_MAX_RANK,
               NDX_MAX_RANK, 0, NULL},
              {"bad_indices", GRAPH_ATTR_POLICY, offsetof(graph_attrs, bad_indices),
               NDX_BAD_INDICES_ERROR, 0, 1, 0, "zero"}},
    .infer = infer_gather, .run = run_gather};

/* ---- OneHot ------------------------------------------------------------------------------- */

static ndx_status one_hot_depth(const ndx_tensor *t, int64_t *depth, ndx_error *err) {
    NDX_TRY(read_scalar(t, "one_hot", "depth", depth, err));
    if (*depth < 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "one_hot: depth must be non-negative, got: %lld", (long long)*depth);
    return NDX_OK;
}

static ndx_status infer_one_hot(const graph_node *n, const ndx_spec *in,
                                const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    NDX_TRY(check_scalar_spec(&in[1], "one_hot", "depth", err));
    int axis = n->attrs.axis;
    int64_t depth = 0;
    if (consts[1]) NDX_TRY(one_hot_depth(consts[1], &depth, err));
    NDX_TRY(ndx_one_hot_infer(&in[0], depth, &in[2], &in[3], axis, out, err));
    if (!consts[1] && out->rank != NDX_UNKNOWN)
        out->shape[axis == -1 ? out->rank - 1 : axis] = NDX_UNKNOWN;
    return NDX_OK;
}

static ndx_status run_one_hot(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                              ndx_tensor *out, ndx_error *err) {
    int64_t depth = 0;
    NDX_TRY(one_hot_depth(&in[1], &depth, err));
    return ndx_one_hot(&in[0], depth, &in[2], &in[3], n->attrs.axis, opt, out, err);
}

static const char *const one_hot_inputs[] = {"indices", "depth", "on_value", "off_value"};
const graph_kind_desc graph_kind_one_hot = {
    .kind = GRAPH_ONE_HOT, .type = "OneHot", .min_inputs = 4, .max_inputs = 4,
    .inputs = one_hot_inputs, .outputs = 1, .width_first = 2, .width_step = 1, .num_attrs = 1,
    .attrs = {{"axis", GRAPH_ATTR_INT, offsetof(graph_attrs, axis), -1, -1, NDX_MAX_RANK, 0,
               NULL}},
    .infer = infer_one_hot, .run = run_one_hot};

/* ---- Unique, UniqueWithCounts, UniqueV2, UniqueWithCountsV2 ------------------------------- */

/* UniqueV2's axis: a vector of no element (none: x must be a vector) or one. */
static ndx_status unique_axis(const ndx_tensor *t, int *axis, ndx_error *err) {
    NDX_TRY(ndx_check_index_tensor(t, "unique", "axis", NULL, err));
    if (t->rank != 1 || t->shape[0] > 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "unique: axis expects a 1D vector with 1 element, but it has rank %d "
                        "and %lld elements", t->rank, t->rank == 1 ? (long long)t->shape[0] : 1LL);
    if (t->shape[0] == 0) {
        *axis = NDX_AXIS_NONE;
        return NDX_OK;
    }
    int64_t v = ndx_read_index(t->data, t->dtype, 0);
    if (v < -NDX_MAX_RANK || v >= NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "unique: axis %lld is out of range",
                        (long long)v);
    *axis = (int)v;
    return NDX_OK;
}

/* The V2 kinds take the axis as their second input. */
static int unique_has_axis(const graph_node *n) { return graph_desc(n->kind)->min_inputs == 2; }

static ndx_status infer_unique(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    int axis = NDX_AXIS_NONE;
    int counts = graph_desc(n->kind)->outputs == 3;
    if (unique_has_axis(n)) {
        NDX_TRY(ndx_check_index_spec(&in[1], "unique", "axis", err));
        if (!consts[1]) { /* the axis comes at run time: x's rank is kept, every dim unknown */
            ndx_spec x = in[0];
            for (int k = 0; x.rank != NDX_UNKNOWN && k < x.rank; k++) x.shape[k] = NDX_UNKNOWN;
            NDX_TRY(ndx_unique_infer(&x, x.rank == NDX_UNKNOWN ? NDX_AXIS_NONE : 0,
                                     (ndx_dtype)n->attrs.dtype, &out[0], &out[1],
                                     counts ? &out[2] : NULL, err));
            out[0].rank = in[0].rank;
            for (int k = 0; x.rank != NDX_UNKNOWN && k < x.rank; k++)
                out[0].shape[k] = NDX_UNKNOWN;
            return NDX_OK;
        }
        NDX_TRY(unique_axis(consts[1], &axis, err));
    }
    return ndx_unique_infer(&in[0], axis, (ndx_dtype)n->attrs.dtype, &out[0], &out[1],
                            counts ? &out[2] : NULL, err);
}

static ndx_status run_unique(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    int axis = NDX_AXIS_NONE;
    if (unique_has_axis(n)) NDX_TRY(unique_axis(&in[1], &axis, err));
    int counts = graph_desc(n->kind)->outputs == 3;
    return ndx_unique(&in[0], axis, (ndx_dtype)n->attrs.dtype, opt, &out[0], &out[1],
                      counts ? &out[2] : NULL, err);
}

#define OUT_IDX                                                                                  \
    {"out_idx", GRAPH_ATTR_DTYPE, offsetof(graph_attrs, dtype), NDX_INT32, 0, 0, 0, NULL}

static const char *const unique_inputs[] = {"x", "axis"};
const graph_kind_desc graph_kind_unique = {
    .kind = GRAPH_UNIQUE, .type = "Unique", .min_inputs = 1, .max_inputs = 1,
    .inputs = unique_inputs, .outputs = 2, .num_attrs = 1, .attrs = {OUT_IDX},
    .infer = infer_unique, .run = run_unique};
const graph_kind_desc graph_kind_unique_with_counts = {
    .kind = GRAPH_UNIQUE_WITH_COUNTS, .type = "UniqueWithCounts", .min_inputs = 1,
    .max_inputs = 1, .inputs = unique_inputs, .outputs = 3, .num_attrs = 1, .attrs = {OUT_IDX},
    .infer = infer_unique, .run = run_unique};
const graph_kind_desc graph_kind_unique_v2 = {
    .kind = GRAPH_UNIQUE_V2, .type = "UniqueV2", .min_inputs = 2, .max_inputs = 2,
    .inputs = unique_inputs, .outputs = 2, .num_attrs = 1, .attrs = {OUT_IDX},
    .infer = infer_unique, .run = run_unique};
const graph_kind_desc graph_kind_unique_with_counts_v2 = {
    .kind = GRAPH_UNIQUE_WITH_COUNTS_V2, .type = "UniqueWithCountsV2", .min_inputs = 2,
    .max_inputs = 2, .inputs = unique_inputs, .outputs = 3, .num_attrs = 1, .attrs = {OUT_IDX},
    .infer = infer_unique, .run = run_unique};

/* ---- ListDiff ----------------------------------------------------------------------------- */

static ndx_status infer_list_diff(const graph_node *n, const ndx_spec *in,
                                  const ndx_tensor *const *consts, ndx_spec *out,
                                  ndx_error *err) {
    (void)consts;
    return ndx_setdiff1d_infer(&in[0], &in[1], (ndx_dtype)n->attrs.dtype, &out[0], &out[1], err);
}

static ndx_status run_list_diff(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                                ndx_tensor *out, ndx_error *err) {
    return ndx_setdiff1d(&in[0], &in[1], (ndx_dtype)n->attrs.dtype, opt, &out[0], &out[1], err);
}

/* x and y share one string type (of any widths in a graph; graph_widths.c widens them). */
static const char *const list_diff_inputs[] = {"x", "y"};
const graph_kind_desc graph_kind_list_diff = {
    .kind = GRAPH_LIST_DIFF, .type = "ListDiff", .min_inputs = 2, .max_inputs = 2,
    .inputs = list_diff_inputs, .outputs = 2, .width_first = 0, .width_step = 1,
    .num_attrs = 1, .attrs = {OUT_IDX}, .infer = infer_list_diff, .run = run_list_diff};

/* ---- BooleanMask -------------------------------------------------------------------------- */
/* TensorFlow composes tf.boolean_mask in Python (Reshape, Where, GatherV2); ndx runs it as one
 * node, ndx_boolean_mask, with the composition's gradient (grad_index.c). */

static ndx_status infer_boolean_mask(const graph_node *n, const ndx_spec *in,
                                     const ndx_tensor *const *consts, ndx_spec *out,
                                     ndx_error *err) {
    (void)consts;
    return ndx_boolean_mask_infer(&in[0], &in[1], n->attrs.axis, out, err);
}

static ndx_status run_boolean_mask(const graph_node *n, const ndx_tensor *in,
                                   const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return ndx_boolean_mask(&in[0], &in[1], n->attrs.axis, opt, out, err);
}

static const char *const boolean_mask_inputs[] = {"tensor", "mask"};
const graph_kind_desc graph_kind_boolean_mask = {
    .kind = GRAPH_BOOLEAN_MASK, .type = "BooleanMask", .min_inputs = 2, .max_inputs = 2,
    .inputs = boolean_mask_inputs, .outputs = 1, .num_attrs = 1,
    .attrs = {{"axis", GRAPH_ATTR_INT, offsetof(graph_attrs, axis), 0, 0, NDX_MAX_RANK, 0, NULL}},
    .infer = infer_boolean_mask, .run = run_boolean_mask};
