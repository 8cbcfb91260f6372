/* sparse_add_kinds.c — the kinds of ndx's sparse arithmetic (ndx.h 5d1): SparseAdd,
 * SparseSparseMaximum / SparseSparseMinimum, SparseTensorDenseAdd and SparseAddGrad, with
 * TensorFlow's inputs in TensorFlow's order (sparse_kind_parts.h: a sparse tensor is three inputs
 * or outputs). */
#include "graph_internal.h"
#include "sparse_kind_parts.h"

/* ---- SparseAdd ---------------------------------------------------------------------------- */

static const char *const add_inputs[] = {"a_indices", "a_values", "a_shape", "b_indices",
                                         "b_values",  "b_shape",  "thresh"};

static ndx_status infer_sparse_add(const graph_node *n, const ndx_spec *in,
                                   const ndx_tensor *const *consts, ndx_spec *out,
                                   ndx_error *err) {
    (void)n;
    (void)consts;
    ndx_sparse_spec a = graph_sparse_spec_at(in, 0, 1), b = graph_sparse_spec_at(in, 3, 1), sum;
    NDX_TRY(ndx_sparse_add_infer(&a, &b, &in[6], &sum, err));
    graph_sparse_specs_out(&sum, out);
    return NDX_OK;
}

static ndx_status run_sparse_add(const graph_node *n, const ndx_tensor *in,
                                 const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    ndx_sparse_tensor a = graph_sparse_at(in, 0, 1), b = graph_sparse_at(in, 3, 1);
    ndx_sparse_tensor sum = graph_sparse_at(out, 0, 1);
    NDX_TRY(ndx_sparse_add(&a, &b, &in[6], opt, &sum, err));
    graph_sparse_out(&sum, out);
    return NDX_OK;
}

const graph_kind_desc graph_kind_sparse_add = {
    .kind = GRAPH_SPARSE_ADD, .type = "SparseAdd", .min_inputs = 7, .max_inputs = 7,
    .inputs = add_inputs, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    .infer = infer_sparse_add, .run = run_sparse_add};

/* ---- SparseSparseMaximum / SparseSparseMinimum -------------------------------------------- */

static ndx_status infer_sparse_minmax(const graph_node *n, const ndx_spec *in,
                                      const ndx_tensor *const *consts, ndx_spec *out,
                                      ndx_error *err) {
    (void)consts;
    ndx_sparse_spec a = graph_sparse_spec_at(in, 0, 1), b = graph_sparse_spec_at(in, 3, 1), r;
    if (n->kind == GRAPH_SPARSE_SPARSE_MAXIMUM)
        NDX_TRY(ndx_sparse_maximum_infer(&a, &b, &r, err));
    else /* the same rules; the message names sparse_minimum */
        NDX_TRY(ndx_sparse_minimum_infer(&a, &b, &r, err));
    graph_sparse_specs_out(&r, out);
    return NDX_OK;
}

static ndx_status run_sparse_minmax(const graph_node *n, const ndx_tensor *in,
                                    const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_sparse_tensor a = graph_sparse_at(in, 0, 1), b = graph_sparse_at(in, 3, 1);
    ndx_sparse_tensor r = graph_sparse_at(out, 0, 1);
    NDX_TRY((n->kind == GRAPH_SPARSE_SPARSE_MAXIMUM ? ndx_sparse_maximum
                                                    : ndx_sparse_minimum)(&a, &b, opt, &r, err));
    graph_sparse_out(&r, out);
    return NDX_OK;
}

static const char *const minmax_inputs[] = {"a_indices", "a_values", "a_shape",
                                            "b_indices", "b_values", "b_shape"};

const graph_kind_desc graph_kind_sparse_sparse_maximum = {
    .kind = GRAPH_SPARSE_SPARSE_MAXIMUM, .type = "SparseSparseMaximum", .min_inputs = 6,
    .max_inputs = 6, .inputs = minmax_inputs, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    .infer = infer_sparse_minmax, .run = run_sparse_minmax};

const graph_kind_desc graph_kind_sparse_sparse_minimum = {
    .kind = GRAPH_SPARSE_SPARSE_MINIMUM, .type = "SparseSparseMinimum", .min_inputs = 6,
    .max_inputs = 6, .inputs = minmax_inputs, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    .infer = infer_sparse_minmax, .run = run_sparse_minmax};

/* ---- SparseTensorDenseAdd ------------------------------------------------------------------ */

static ndx_status infer_sparse_dense_add(const graph_node *n, const ndx_spec *in,
                                         const ndx_tensor *const *consts, ndx_spec *out,
                                         ndx_error *err) {
    (void)n;
    (void)consts;
    ndx_sparse_spec a = graph_sparse_spec_at(in, 0, 1);
    return ndx_sparse_dense_add_infer(&a, &in[3], out, err);
}

static ndx_status run_sparse_dense_add(const graph_node *n, const ndx_tensor *in,
                                       const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    ndx_sparse_tensor a = graph_sparse_at(in, 0, 1);
    return ndx_sparse_dense_add(&a, &in[3], opt, out, err);
}

static const char *const dense_add_inputs[] = {"a_indices", "a_values", "a_shape", "b"};

const graph_kind_desc graph_kind_sparse_tensor_dense_add = {
    .kind = GRAPH_SPARSE_TENSOR_DENSE_ADD, .type = "SparseTensorDenseAdd", .min_inputs = 4,
    .max_inputs = 4, .inputs = dense_add_inputs, .outputs = 1,
    .infer = infer_sparse_dense_add, .run = run_sparse_dense_add};

/* ---- SparseAddGrad ------------------------------------------------------------------------- */

static ndx_status infer_sparse_add_grad(const graph_node *n, const ndx_spec *in,
                                        const ndx_tensor *const *consts, ndx_spec *out,
                                        ndx_error *err) {
    (void)n;
    (void)consts;
    return ndx_sparse_add_grad_infer(&in[0], &in[1], &in[2], &in[3], &out[0], &out[1], err);
}

static ndx_status run_sparse_add_grad(const graph_node *n, const ndx_tensor *in,
                                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_sparse_add_grad(&in[0], &in[1], &in[2], &in[3], opt, &out[0], &out[1], err);
}

static const char *const add_grad_inputs[] = {"backprop_val_grad", "a_indices", "b_indices",
                                              "sum_indices"};

const graph_kind_desc graph_kind_sparse_add_grad = {
    .kind = GRAPH_SPARSE_ADD_GRAD, .type = "SparseAddGrad", .min_inputs = 4, .max_inputs = 4,
    .inputs = add_grad_inputs, .outputs = 2, .infer = infer_sparse_add_grad,
    .run = run_sparse_add_grad};

/* ---- SparseDenseCwiseMul / Div / Add (the descriptor's variant is the ndx_sparse_dense_op) -- */

static ndx_status infer_sparse_dense_cwise(const graph_node *n, const ndx_spec *in,
                                           const ndx_tensor *const *consts, ndx_spec *out,
                                           ndx_error *err) {
    (void)consts;
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1);
    return ndx_sparse_dense_cwise_infer((ndx_sparse_dense_op)graph_desc(n->kind)->variant, &sp,
                                        &in[3], out, err);
}

static ndx_status run_sparse_dense_cwise(const graph_node *n, const ndx_tensor *in,
                                         const ndx_options *opt, ndx_tensor *out,
                                         ndx_error *err) {
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1);
    return ndx_sparse_dense_cwise((ndx_sparse_dense_op)graph_desc(n->kind)->variant, &sp, &in[3],
                                  opt, out, err);
}

static const char *const cwise_inputs[] = {"sp_indices", "sp_values", "sp_shape", "dense"};

#define CWISE_KIND(KIND, TYPE, OP)                                                             \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 4, .max_inputs = 4,             \
     .inputs = cwise_inputs, .outputs = 1, .infer = infer_sparse_dense_cwise,                  \
     .run = run_sparse_dense_cwise}
const graph_kind_desc graph_kind_sparse_dense_cwise_mul =
    CWISE_KIND(GRAPH_SPARSE_DENSE_CWISE_MUL, "SparseDenseCwiseMul", NDX_SPARSE_DENSE_MUL);
const graph_kind_desc graph_kind_sparse_dense_cwise_div =
    CWISE_KIND(GRAPH_SPARSE_DENSE_CWISE_DIV, "SparseDenseCwiseDiv", NDX_SPARSE_DENSE_DIV);
const graph_kind_desc graph_kind_sparse_dense_cwise_add =
    CWISE_KIND(GRAPH_SPARSE_DENSE_CWISE_ADD, "SparseDenseCwiseAdd", NDX_SPARSE_DENSE_ADD);
