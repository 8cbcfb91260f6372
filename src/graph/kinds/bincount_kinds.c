/* bincount_kinds.c — the kinds of TensorFlow's Bincount(arr, size, weights) and
 * DenseBincount(input, size, weights; binary_output) on ndx_bincount. size is a tensor, as in
 * TensorFlow: read when run, and by infer when it is a constant (else the bins stay unknown). */
#include "graph_internal.h"

static const char *op_name(const graph_node *n) {
    return n->kind == GRAPH_DENSE_BINCOUNT ? "dense_bincount" : "bincount";
}

static unsigned flags_of(const graph_node *n) {
    if (n->kind != GRAPH_DENSE_BINCOUNT) return 0;
    return NDX_BINCOUNT_DENSE | (n->attrs.binary_output ? NDX_BINCOUNT_BINARY_OUTPUT : 0);
}

/* Bincount: arr and size int32; DenseBincount: size of the input's dtype (Tidx). size is a
 * scalar. */
static ndx_status check_types(const graph_node *n, const ndx_spec *arr, const ndx_spec *size,
                              ndx_error *err) {
    const char *op = op_name(n);
    if (n->kind == GRAPH_BINCOUNT && arr->dtype != NDX_INT32)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: arr must be int32, not %s", op,
                        ndx_dtype_name(arr->dtype));
    ndx_dtype want = n->kind == GRAPH_BINCOUNT ? NDX_INT32 : arr->dtype;
    if (size->dtype != want)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: size must be %s (the dtype of %s), not %s",
                        op, ndx_dtype_name(want), n->kind == GRAPH_BINCOUNT ? "Bincount's size" :
                        "input", ndx_dtype_name(size->dtype));
    if (size->rank != NDX_UNKNOWN && size->rank != 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: size must be a scalar (TensorFlow: Shape must be rank 0 but is rank "
                        "%d)", op, size->rank);
    return NDX_OK;
}

static ndx_status read_size(const graph_node *n, const ndx_tensor *t, int64_t *size,
                            ndx_error *err) {
    *size = ndx_read_index(t->data, t->dtype, 0);
    if (*size < 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: size (%lld) must be non-negative",
                        op_name(n), (long long)*size);
    return NDX_OK;
}

static ndx_status infer_bincount(const graph_node *n, const ndx_spec *in,
                                 const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    NDX_TRY(check_types(n, &in[0], &in[1], err));
    int64_t size = NDX_UNKNOWN;
    if (consts[1]) NDX_TRY(read_size(n, consts[1], &size, err));
    return ndx_bincount_infer(&in[0], size, &in[2], flags_of(n), out, err);
}

static ndx_status run_bincount(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                               ndx_tensor *out, ndx_error *err) {
    ndx_spec arr, size;
    ndx_spec_fill(&arr, &in[0]);
    ndx_spec_fill(&size, &in[1]);
    NDX_TRY(check_types(n, &arr, &size, err));
    int64_t bins;
    NDX_TRY(read_size(n, &in[1], &bins, err));
    return ndx_bincount(&in[0], bins, &in[2], flags_of(n), opt, out, err);
}

static const char *const bincount_inputs[] = {"arr", "size", "weights"};
const graph_kind_desc graph_kind_bincount = {
    .kind = GRAPH_BINCOUNT, .type = "Bincount", .min_inputs = 3, .max_inputs = 3,
    .inputs = bincount_inputs, .outputs = 1, .infer = infer_bincount, .run = run_bincount};

static const char *const dense_inputs[] = {"input", "size", "weights"};
const graph_kind_desc graph_kind_dense_bincount = {
    .kind = GRAPH_DENSE_BINCOUNT, .type = "DenseBincount", .min_inputs = 3, .max_inputs = 3,
    .inputs = dense_inputs, .outputs = 1, .num_attrs = 1,
    .attrs = {{"binary_output", GRAPH_ATTR_BOOL, offsetof(graph_attrs, binary_output), 0, 0, 1, 0,
               NULL}},
    .infer = infer_bincount, .run = run_bincount};
