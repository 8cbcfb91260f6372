/* segment_infer.c — the shape and dtype checks of the segment reductions on specs (partial
 * shapes), shared by the public infer functions and by the plans (segment_reduce.c), which run
 * them on the views' own specs. A check that needs an unknown dim waits. */
#include "segment_reduce.h"

/* ---- names ---------------------------------------------------------------------------------- */

const char *ndx_segment_op_name(ndx_segment_op op) {
    switch (op) {
    case NDX_SEGMENT_SUM: return "sum";
    case NDX_SEGMENT_PROD: return "prod";
    case NDX_SEGMENT_MIN: return "min";
    case NDX_SEGMENT_MAX: return "max";
    case NDX_SEGMENT_MEAN: return "mean";
    case NDX_SEGMENT_SQRT_N: return "sqrt_n";
    }
    return "invalid";
}

const char *segment_op_label(segment_family family, ndx_segment_op op) {
    static const char *const names[3][6] = {
        {"unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_min",
         "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sqrt_n"},
        {"segment_sum", "segment_prod", "segment_min", "segment_max", "segment_mean",
         "segment_sqrt_n"},
        {"sparse_segment_sum", "sparse_segment_prod", "sparse_segment_min", "sparse_segment_max",
         "sparse_segment_mean", "sparse_segment_sqrt_n"}};
    static const char *const families[3] = {"unsorted_segment_reduce", "segment_reduce",
                                            "sparse_segment_reduce"};
    if ((unsigned)op > (unsigned)NDX_SEGMENT_SQRT_N) return families[family];
    return names[family][op];
}

/* ---- dtypes --------------------------------------------------------------------------------- */

static int is_real(ndx_dtype d) {
    ndx_dtype_kind k = ndx_dtype_kind_of(d);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT;
}

/* TensorFlow's CPU registrations of each family and op (ndx.h section 5g). */
static int op_accepts(segment_family family, ndx_segment_op op, ndx_dtype d) {
    int complex = ndx_dtype_kind_of(d) == NDX_KIND_COMPLEX;
    int floating = ndx_dtype_kind_of(d) == NDX_KIND_FLOAT;
    switch (op) {
    case NDX_SEGMENT_SUM: return is_real(d) || (complex && family != SEGMENT_SPARSE);
    case NDX_SEGMENT_PROD: return is_real(d) || complex;
    case NDX_SEGMENT_MIN:
    case NDX_SEGMENT_MAX: return is_real(d);
    case NDX_SEGMENT_MEAN: return family == SEGMENT_SORTED ? is_real(d) || complex : floating;
    case NDX_SEGMENT_SQRT_N: return floating;
    }
    return 0;
}

/* The op, then the data's dtype: neither needs a dim, so they come first. */
static ndx_status check_op(segment_family family, ndx_segment_op op, const ndx_spec *data,
                           ndx_error *err) {
    const char *name = segment_op_label(family, op);
    if ((unsigned)op > (unsigned)NDX_SEGMENT_SQRT_N)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: op %d is not an ndx_segment_op", name,
                        (int)op);
    if ((family == SEGMENT_SORTED && op == NDX_SEGMENT_SQRT_N) ||
        (family == SEGMENT_SPARSE && op != NDX_SEGMENT_SUM && op != NDX_SEGMENT_MEAN &&
         op != NDX_SEGMENT_SQRT_N))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: TensorFlow has no such op", name);
    if (!op_accepts(family, op, data->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: data of dtype %s is not supported", name,
                        ndx_dtype_name(data->dtype));
    return NDX_OK;
}

/* segment_ids and indices: int32 or int64 (TensorFlow's Tindices), of rank `rank` when known. */
static ndx_status check_ids(const char *op, const char *what, const ndx_spec *ids, int rank,
                            int views, ndx_error *err) {
    if (!views) NDX_TRY(ndx_spec_check_as(ids, op, what, err));
    if (ids->dtype != NDX_INT32 && ids->dtype != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s must be int32 or int64, not %s", op,
                        what, ndx_dtype_name(ids->dtype));
    if (rank >= 0 && ids->rank >= 0 && ids->rank != rank) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, ids);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s should be a vector, not of shape %s",
                        op, what, dims);
    }
    return NDX_OK;
}

/* out = [rows] + data.shape[from:], checked to be addressable when every dim is known. */
static ndx_status make_output(const char *op, const ndx_spec *data, int from, int64_t rows,
                              ndx_spec *out, ndx_error *err) {
    ndx_spec o = *data;
    if (data->rank < 0 || 1 + data->rank - from > NDX_MAX_RANK) {
        o.rank = NDX_UNKNOWN;
    } else {
        o.rank = 1 + data->rank - from;
        o.shape[0] = rows;
        for (int i = from; i < data->rank; i++) o.shape[1 + i - from] = data->shape[i];
        NDX_TRY(ndx_check_output_size(op, o.rank, o.shape, o.itemsize, err));
    }
    if (out) *out = o;
    return NDX_OK;
}

static ndx_status check_data(const char *op, const ndx_spec *data, int min_rank, int views,
                             ndx_error *err) {
    if (!views) NDX_TRY(ndx_spec_check_as(data, op, "data", err));
    if (data->rank >= 0 && data->rank < min_rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: data must have rank >= 1 (TensorFlow: Shape must be at least rank 1), "
                        "not a scalar", op);
    return NDX_OK;
}

/* ---- the three families ---------------------------------------------------------------------- */

ndx_status segment_unsorted_infer(ndx_segment_op op, const ndx_spec *data, const ndx_spec *ids,
                                  int64_t num_segments, int views, ndx_spec *out, ndx_error *err) {
    const char *name = segment_op_label(SEGMENT_UNSORTED, op);
    if (!views) NDX_TRY(ndx_spec_check_as(data, name, "data", err));
    NDX_TRY(check_op(SEGMENT_UNSORTED, op, data, err));
    NDX_TRY(check_ids(name, "segment_ids", ids, -1, views, err));
    if (num_segments < 0 && !(num_segments == NDX_UNKNOWN && !views))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: num_segments = %lld must not be negative", name,
                        (long long)num_segments);
    if (data->rank >= 0 && ids->rank >= 0) {
        if (ids->rank > data->rank || !ndx_dims_agree(ids->rank, ids->shape, data->shape)) {
            char d[NDX_DIMS_TEXT], s[NDX_DIMS_TEXT];
            ndx_format_spec_dims(d, sizeof d, data);
            ndx_format_spec_dims(s, sizeof s, ids);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: data.shape = %s does not start with segment_ids.shape = %s", name,
                            d, s);
        }
        return make_output(name, data, ids->rank, num_segments, out, err);
    }
    ndx_spec o = *data;
    o.rank = NDX_UNKNOWN;
    if (out) *out = o;
    return NDX_OK;
}

ndx_status segment_sorted_infer(ndx_segment_op op, const ndx_spec *data, const ndx_spec *ids,
                                int views, ndx_spec *out, ndx_error *err) {
    const char *name = segment_op_label(SEGMENT_SORTED, op);
    NDX_TRY(check_data(name, data, 1, views, err));
    NDX_TRY(check_op(SEGMENT_SORTED, op, data, err));
    NDX_TRY(check_ids(name, "segment_ids", ids, 1, views, err));
    if (data->rank >= 1 && ids->rank == 1 && ndx_dims_conflict(ids->shape[0], data->shape[0]))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: segment_ids should be the same size as dimension 0 of data: %lld ids "
                        "for %lld rows",
                        name, (long long)ids->shape[0], (long long)data->shape[0]);
    return make_output(name, data, 1, NDX_UNKNOWN, out, err);
}

ndx_status segment_sparse_infer(ndx_segment_op op, const ndx_spec *data, const ndx_spec *indices,
                                const ndx_spec *ids, int64_t num_segments, int views,
                                ndx_spec *out, ndx_error *err) {
    const char *name = segment_op_label(SEGMENT_SPARSE, op);
    NDX_TRY(check_data(name, data, 1, views, err));
    NDX_TRY(check_op(SEGMENT_SPARSE, op, data, err));
    NDX_TRY(check_ids(name, "indices", indices, 1, views, err));
    NDX_TRY(check_ids(name, "segment_ids", ids, 1, views, err));
    if (num_segments < NDX_SEGMENTS_FROM_IDS)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: num_segments = %lld must not be negative (NDX_SEGMENTS_FROM_IDS: "
                        "none)",
                        name, (long long)num_segments);
    if (indices->rank == 1 && ids->rank == 1 && ndx_dims_conflict(ids->shape[0], indices->shape[0]))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: segment_ids and indices should have same size: %lld ids, %lld "
                        "indices",
                        name, (long long)ids->shape[0], (long long)indices->shape[0]);
    return make_output(name, data, 1, num_segments >= 0 ? num_segments : NDX_UNKNOWN, out, err);
}

/* ---- public infer ----------------------------------------------------------------------------- */

ndx_status ndx_unsorted_segment_reduce_infer(ndx_segment_op op, const ndx_spec *data,
                                             const ndx_spec *segment_ids, int64_t num_segments,
                                             ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    if (!data || !segment_ids)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: data or segment_ids is NULL",
                        segment_op_label(SEGMENT_UNSORTED, op));
    return segment_unsorted_infer(op, data, segment_ids, num_segments, 0, out, err);
}

ndx_status ndx_segment_reduce_infer(ndx_segment_op op, const ndx_spec *data,
                                    const ndx_spec *segment_ids, ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    if (!data || !segment_ids)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: data or segment_ids is NULL",
                        segment_op_label(SEGMENT_SORTED, op));
    return segment_sorted_infer(op, data, segment_ids, 0, out, err);
}

ndx_status ndx_sparse_segment_reduce_infer(ndx_segment_op op, const ndx_spec *data,
                                           const ndx_spec *indices, const ndx_spec *segment_ids,
                                           int64_t num_segments, ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    if (!data || !indices || !segment_ids)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: data, indices or segment_ids is NULL",
                        segment_op_label(SEGMENT_SPARSE, op));
    return segment_sparse_infer(op, data, indices, segment_ids, num_segments, 0, out, err);
}
