/* segment_kinds.c — the kinds of TensorFlow's segment reductions on ndx_unsorted_segment_reduce,
 * ndx_segment_reduce and ndx_sparse_segment_reduce: UnsortedSegmentSum .. SqrtN, SegmentSum ..
 * Mean, SparseSegmentSum/Mean/SqrtN and their WithNumSegments forms. Each kind's variant is its
 * ndx_segment_op. num_segments is a tensor, as in TensorFlow: read when run, and by infer when
 * it is a constant (else the output's row count stays unknown). */
#include "graph_internal.h"

#include <stdio.h>

/* The op's name in messages: "unsorted_segment_sum", "segment_max", "sparse_segment_mean". */
static const char *op_name(const graph_node *n, char *buf, size_t size) {
    const char *prefix = "segment_";
    if (n->kind >= GRAPH_UNSORTED_SEGMENT_SUM && n->kind <= GRAPH_UNSORTED_SEGMENT_SQRT_N)
        prefix = "unsorted_segment_";
    else if (n->kind >= GRAPH_SPARSE_SEGMENT_SUM)
        prefix = "sparse_segment_";
    snprintf(buf, size, "%s%s", prefix, ndx_segment_op_name((ndx_segment_op)graph_variant(n)));
    return buf;
}

/* num_segments: an int32 or int64 scalar. */
static ndx_status check_num_segments(const ndx_spec *s, const char *op, ndx_error *err) {
    NDX_TRY(ndx_check_index_spec(s, op, "num_segments", err));
    if (s->rank != NDX_UNKNOWN && s->rank != 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: num_segments should be a scalar, not shape of rank %d", op, s->rank);
    return NDX_OK;
}

/* Its value, non-negative as TensorFlow requires. */
static ndx_status read_num_segments(const ndx_tensor *t, const char *op, int64_t *v,
                                    ndx_error *err) {
    NDX_TRY(ndx_check_index_tensor(t, op, "num_segments", NULL, err));
    if (t->rank != 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: num_segments should be a scalar, not shape of rank %d", op, t->rank);
    *v = ndx_read_index(t->data, t->dtype, 0);
    if (*v < 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: Input num_segments == %lld must not be "
                        "negative.", op, (long long)*v);
    return NDX_OK;
}

/* The output's row count from input `i` (a constant or run-time num_segments): `unknown` when
 * the kind has no such input or it is not yet known. */
static ndx_status infer_rows(const graph_node *n, const ndx_spec *in,
                             const ndx_tensor *const *consts, int i, int64_t unknown,
                             int64_t *rows, const char *op, ndx_error *err) {
    *rows = unknown;
    if (graph_desc(n->kind)->min_inputs <= i) return NDX_OK;
    NDX_TRY(check_num_segments(&in[i], op, err));
    if (consts[i]) NDX_TRY(read_num_segments(consts[i], op, rows, err));
    return NDX_OK;
}

/* ---- UnsortedSegment* (data, segment_ids, num_segments) ---------------------------------- */

static ndx_status infer_unsorted(const graph_node *n, const ndx_spec *in,
                                 const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    char op[40];
    int64_t rows = 0;
    NDX_TRY(infer_rows(n, in, consts, 2, NDX_UNKNOWN, &rows, op_name(n, op, sizeof op), err));
    return ndx_unsorted_segment_reduce_infer((ndx_segment_op)graph_variant(n), &in[0], &in[1],
                                             rows, out, err);
}

static ndx_status run_unsorted(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                               ndx_tensor *out, ndx_error *err) {
    char op[40];
    int64_t rows = 0;
    NDX_TRY(read_num_segments(&in[2], op_name(n, op, sizeof op), &rows, err));
    return ndx_unsorted_segment_reduce((ndx_segment_op)graph_variant(n), &in[0], &in[1], rows,
                                       opt, out, err);
}

static const char *const unsorted_inputs[] = {"data", "segment_ids", "num_segments"};
#define UNSORTED(KIND, TYPE, OP)                                                                \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 3, .max_inputs = 3,               \
     .inputs = unsorted_inputs, .outputs = 1, .infer = infer_unsorted, .run = run_unsorted}
const graph_kind_desc graph_kind_unsorted_segment_sum =
    UNSORTED(GRAPH_UNSORTED_SEGMENT_SUM, "UnsortedSegmentSum", NDX_SEGMENT_SUM);
const graph_kind_desc graph_kind_unsorted_segment_prod =
    UNSORTED(GRAPH_UNSORTED_SEGMENT_PROD, "UnsortedSegmentProd", NDX_SEGMENT_PROD);
const graph_kind_desc graph_kind_unsorted_segment_min =
    UNSORTED(GRAPH_UNSORTED_SEGMENT_MIN, "UnsortedSegmentMin", NDX_SEGMENT_MIN);
const graph_kind_desc graph_kind_unsorted_segment_max =
    UNSORTED(GRAPH_UNSORTED_SEGMENT_MAX, "UnsortedSegmentMax", NDX_SEGMENT_MAX);
/* TensorFlow composes these two in Python (sum / count); ndx's C op has them as one node. */
const graph_kind_desc graph_kind_unsorted_segment_mean =
    UNSORTED(GRAPH_UNSORTED_SEGMENT_MEAN, "UnsortedSegmentMean", NDX_SEGMENT_MEAN);
const graph_kind_desc graph_kind_unsorted_segment_sqrt_n =
    UNSORTED(GRAPH_UNSORTED_SEGMENT_SQRT_N, "UnsortedSegmentSqrtN", NDX_SEGMENT_SQRT_N);

/* ---- Segment* (data, segment_ids): sorted ids, last id + 1 rows --------------------------- */

static ndx_status infer_sorted(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    return ndx_segment_reduce_infer((ndx_segment_op)graph_variant(n), &in[0], &in[1], out, err);
}

static ndx_status run_sorted(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    return ndx_segment_reduce((ndx_segment_op)graph_variant(n), &in[0], &in[1], opt, out, err);
}

static const char *const sorted_inputs[] = {"data", "segment_ids"};
#define SORTED(KIND, TYPE, OP)                                                                  \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 2, .max_inputs = 2,               \
     .inputs = sorted_inputs, .outputs = 1, .infer = infer_sorted, .run = run_sorted}
const graph_kind_desc graph_kind_segment_sum =
    SORTED(GRAPH_SEGMENT_SUM, "SegmentSum", NDX_SEGMENT_SUM);
const graph_kind_desc graph_kind_segment_prod =
    SORTED(GRAPH_SEGMENT_PROD, "SegmentProd", NDX_SEGMENT_PROD);
const graph_kind_desc graph_kind_segment_min =
    SORTED(GRAPH_SEGMENT_MIN, "SegmentMin", NDX_SEGMENT_MIN);
const graph_kind_desc graph_kind_segment_max =
    SORTED(GRAPH_SEGMENT_MAX, "SegmentMax", NDX_SEGMENT_MAX);
const graph_kind_desc graph_kind_segment_mean =
    SORTED(GRAPH_SEGMENT_MEAN, "SegmentMean", NDX_SEGMENT_MEAN);

/* ---- SparseSegment* (data, indices, segment_ids[, num_segments]) --------------------------- */

static ndx_status infer_sparse(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    char op[40];
    int64_t rows = 0;
    NDX_TRY(infer_rows(n, in, consts, 3, NDX_SEGMENTS_FROM_IDS, &rows,
                       op_name(n, op, sizeof op), err));
    ndx_segment_op sop = (ndx_segment_op)graph_variant(n);
    if (rows != NDX_UNKNOWN)
        return ndx_sparse_segment_reduce_infer(sop, &in[0], &in[1], &in[2], rows, out, err);
    /* num_segments comes at run time: the row count is unknown, as without it. */
    return ndx_sparse_segment_reduce_infer(sop, &in[0], &in[1], &in[2], NDX_SEGMENTS_FROM_IDS,
                                           out, err);
}

static ndx_status run_sparse(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    char op[40];
    int64_t rows = NDX_SEGMENTS_FROM_IDS;
    if (graph_desc(n->kind)->min_inputs == 4)
        NDX_TRY(read_num_segments(&in[3], op_name(n, op, sizeof op), &rows, err));
    return ndx_sparse_segment_reduce((ndx_segment_op)graph_variant(n), &in[0], &in[1], &in[2],
                                     rows, opt, out, err);
}

static const char *const sparse_inputs[] = {"data", "indices", "segment_ids", "num_segments"};
#define SPARSE(KIND, TYPE, OP, N)                                                               \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = N, .max_inputs = N,               \
     .inputs = sparse_inputs, .outputs = 1, .infer = infer_sparse, .run = run_sparse}
const graph_kind_desc graph_kind_sparse_segment_sum =
    SPARSE(GRAPH_SPARSE_SEGMENT_SUM, "SparseSegmentSum", NDX_SEGMENT_SUM, 3);
const graph_kind_desc graph_kind_sparse_segment_mean =
    SPARSE(GRAPH_SPARSE_SEGMENT_MEAN, "SparseSegmentMean", NDX_SEGMENT_MEAN, 3);
const graph_kind_desc graph_kind_sparse_segment_sqrt_n =
    SPARSE(GRAPH_SPARSE_SEGMENT_SQRT_N, "SparseSegmentSqrtN", NDX_SEGMENT_SQRT_N, 3);
const graph_kind_desc graph_kind_sparse_segment_sum_with_num_segments = SPARSE(
    GRAPH_SPARSE_SEGMENT_SUM_WITH_NUM_SEGMENTS, "SparseSegmentSumWithNumSegments",
    NDX_SEGMENT_SUM, 4);
const graph_kind_desc graph_kind_sparse_segment_mean_with_num_segments = SPARSE(
    GRAPH_SPARSE_SEGMENT_MEAN_WITH_NUM_SEGMENTS, "SparseSegmentMeanWithNumSegments",
    NDX_SEGMENT_MEAN, 4);
const graph_kind_desc graph_kind_sparse_segment_sqrt_n_with_num_segments = SPARSE(
    GRAPH_SPARSE_SEGMENT_SQRT_N_WITH_NUM_SEGMENTS, "SparseSegmentSqrtNWithNumSegments",
    NDX_SEGMENT_SQRT_N, 4);
