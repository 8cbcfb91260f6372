/* sparse_fill_kinds.c — the kinds of the sparse fill ops: SparseFillEmptyRows (TensorFlow's four
 * outputs: output_indices, output_values, empty_row_indicator, reverse_index_map; the result's
 * dense_shape is the input's) and SparseFillEmptyRowsGrad. */
#include "graph_internal.h"
#include "sparse_kind_parts.h"

/* ---- SparseFillEmptyRows ------------------------------------------------------------------ */

static ndx_status infer_fill(const graph_node *n, const ndx_spec *in,
                             const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)n;
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1), result;
    NDX_TRY(ndx_sparse_fill_empty_rows_infer(&sp, &in[3], &result, &out[2], &out[3], err));
    out[0] = result.indices;
    out[1] = result.values;
    const ndx_tensor *shape = consts ? consts[2] : NULL;
    if (shape && shape->rank == 1 && shape->shape[0] >= 1) { /* the indicator has dense_shape[0] */
        int64_t rows = ndx_read_index(shape->data, shape->dtype, 0);
        out[2].shape[0] = rows >= 0 ? rows : NDX_UNKNOWN; /* a negative one fails at run time */
    }
    return NDX_OK;
}

static ndx_status run_fill(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                           ndx_tensor *out, ndx_error *err) {
    (void)n;
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1);
    /* the op writes the result's dense_shape, which is the input's: here, into the stack */
    int64_t shape[NDX_MAX_RANK];
    int64_t rank = in[2].rank == 1 ? in[2].shape[0] : 1;
    if (rank < 1 || rank > NDX_MAX_RANK) rank = 1; /* the op refuses such a dense_shape */
    ndx_sparse_tensor result = {out[0], out[1], ndx_tensor_make(NDX_INT64, 1, &rank, shape)};
    NDX_TRY(ndx_sparse_fill_empty_rows(&sp, &in[3], opt, &result, &out[2], &out[3], err));
    out[0] = result.indices;
    out[1] = result.values;
    return NDX_OK;
}

const graph_kind_desc graph_kind_sparse_fill_empty_rows = {
    .kind = GRAPH_SPARSE_FILL_EMPTY_ROWS, .type = "SparseFillEmptyRows", .min_inputs = 4,
    .max_inputs = 4, .inputs = graph_sparse_parts, .outputs = 4, .width_first = 1,
    .width_step = 2, .infer = infer_fill, .run = run_fill};

/* ---- SparseFillEmptyRowsGrad -------------------------------------------------------------- */

static ndx_status infer_fill_grad(const graph_node *n, const ndx_spec *in,
                                  const ndx_tensor *const *consts, ndx_spec *out,
                                  ndx_error *err) {
    (void)n;
    (void)consts;
    return ndx_sparse_fill_empty_rows_grad_infer(&in[0], &in[1], &out[0], &out[1], err);
}

static ndx_status run_fill_grad(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                                ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_sparse_fill_empty_rows_grad(&in[0], &in[1], opt, &out[0], &out[1], err);
}

static const char *const fill_grad_inputs[] = {"reverse_index_map", "grad_values"};
const graph_kind_desc graph_kind_sparse_fill_empty_rows_grad = {
    .kind = GRAPH_SPARSE_FILL_EMPTY_ROWS_GRAD, .type = "SparseFillEmptyRowsGrad",
    .min_inputs = 2, .max_inputs = 2, .inputs = fill_grad_inputs, .outputs = 2,
    .infer = infer_fill_grad, .run = run_fill_grad};

/* ---- DenseCountSparseOutput, SparseCountSparseOutput ---------------------------------------- */

static ndx_count_attrs count_attrs_of(const graph_node *n) {
    ndx_count_attrs a = {n->attrs.minlength, n->attrs.maxlength, n->attrs.binary_output};
    return a;
}

static ndx_status infer_dense_count(const graph_node *n, const ndx_spec *in,
                                    const ndx_tensor *const *consts, ndx_spec *out,
                                    ndx_error *err) {
    (void)consts;
    ndx_count_attrs a = count_attrs_of(n);
    ndx_sparse_spec result;
    NDX_TRY(ndx_dense_count_sparse_output_infer(&in[0], &in[1], &a, &result, err));
    graph_sparse_specs_out(&result, out);
    return NDX_OK;
}

static ndx_status run_dense_count(const graph_node *n, const ndx_tensor *in,
                                  const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_count_attrs a = count_attrs_of(n);
    ndx_sparse_tensor result = graph_sparse_at(out, 0, 1);
    NDX_TRY(ndx_dense_count_sparse_output(&in[0], &in[1], &a, opt, &result, err));
    graph_sparse_out(&result, out);
    return NDX_OK;
}

static ndx_status infer_sparse_count(const graph_node *n, const ndx_spec *in,
                                     const ndx_tensor *const *consts, ndx_spec *out,
                                     ndx_error *err) {
    (void)consts;
    ndx_count_attrs a = count_attrs_of(n);
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1), result;
    NDX_TRY(ndx_sparse_count_sparse_output_infer(&sp, &in[3], &a, &result, err));
    graph_sparse_specs_out(&result, out);
    return NDX_OK;
}

static ndx_status run_sparse_count(const graph_node *n, const ndx_tensor *in,
                                   const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_count_attrs a = count_attrs_of(n);
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1), result = graph_sparse_at(out, 0, 1);
    NDX_TRY(ndx_sparse_count_sparse_output(&sp, &in[3], &a, opt, &result, err));
    graph_sparse_out(&result, out);
    return NDX_OK;
}

#define COUNT_ATTRS                                                                               \
    .num_attrs = 3,                                                                               \
    .attrs = {{"binary_output", GRAPH_ATTR_BOOL, offsetof(graph_attrs, binary_output), 0, 0, 1,  \
               GRAPH_ATTR_REQUIRED | GRAPH_ATTR_ALWAYS, NULL},                                    \
              {"minlength", GRAPH_ATTR_INT, offsetof(graph_attrs, minlength), -1, -1, INT32_MAX,  \
               0, NULL},                                                                          \
              {"maxlength", GRAPH_ATTR_INT, offsetof(graph_attrs, maxlength), -1, -1, INT32_MAX,  \
               0, NULL}}

static const char *const dense_count_inputs[] = {"values", "weights"};
const graph_kind_desc graph_kind_dense_count_sparse_output = {
    .kind = GRAPH_DENSE_COUNT_SPARSE_OUTPUT, .type = "DenseCountSparseOutput", .min_inputs = 2,
    .max_inputs = 2, .inputs = dense_count_inputs, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    COUNT_ATTRS, .infer = infer_dense_count, .run = run_dense_count};

static const char *const sparse_count_inputs[] = {"indices", "values", "dense_shape", "weights"};
const graph_kind_desc graph_kind_sparse_count_sparse_output = {
    .kind = GRAPH_SPARSE_COUNT_SPARSE_OUTPUT, .type = "SparseCountSparseOutput", .min_inputs = 4,
    .max_inputs = 4, .inputs = sparse_count_inputs, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    COUNT_ATTRS, .infer = infer_sparse_count, .run = run_sparse_count};
