/* sparse_reshape_kinds.c — the kinds of sparse_slice (SparseSlice), its gradient's kernel
 * (SparseSliceGrad), sparse_split (SparseSplit: 3 * num_split outputs, every piece's indices,
 * then every piece's values, then every piece's dense_shape, as TensorFlow orders them) and
 * sparse_reshape (SparseReshape: indices and shapes only; the values do not go through it), and
 * sparse_transpose (SparseTranspose, ndx's own type: TensorFlow builds a Gather and a
 * SparseReorder for tf.sparse.transpose). */
#include <stdlib.h>

#include "core.h"
#include "graph_internal.h"
#include "sparse_kind_parts.h"

/* ---- sparse_slice ------------------------------------------------------------------------- */

static ndx_status infer_sparse_slice(const graph_node *n, const ndx_spec *in,
                                     const ndx_tensor *const *consts, ndx_spec *out,
                                     ndx_error *err) {
    (void)n;
    (void)consts;
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1), result;
    NDX_TRY(ndx_sparse_slice_infer(&sp, &in[3], &in[4], &result, err));
    graph_sparse_specs_out(&result, out);
    return NDX_OK;
}

static ndx_status run_sparse_slice(const graph_node *n, const ndx_tensor *in,
                                   const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1), result = graph_sparse_at(out, 0, 1);
    NDX_TRY(ndx_sparse_slice(&sp, &in[3], &in[4], opt, &result, err));
    graph_sparse_out(&result, out);
    return NDX_OK;
}

static const char *const slice_inputs[] = {"indices", "values", "shape", "start", "size"};
const graph_kind_desc graph_kind_sparse_slice = {
    .kind = GRAPH_SPARSE_SLICE, .type = "SparseSlice", .min_inputs = 5, .max_inputs = 5,
    .inputs = slice_inputs, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    .infer = infer_sparse_slice, .run = run_sparse_slice};

/* ---- SparseSliceGrad ---------------------------------------------------------------------- */

static ndx_status infer_sparse_slice_grad(const graph_node *n, const ndx_spec *in,
                                          const ndx_tensor *const *consts, ndx_spec *out,
                                          ndx_error *err) {
    (void)n;
    (void)consts;
    return ndx_sparse_slice_grad_infer(&in[0], &in[1], &in[2], &in[3], out, err);
}

static ndx_status run_sparse_slice_grad(const graph_node *n, const ndx_tensor *in,
                                        const ndx_options *opt, ndx_tensor *out,
                                        ndx_error *err) {
    (void)n;
    return ndx_sparse_slice_grad(&in[0], &in[1], &in[2], &in[3], opt, out, err);
}

static const char *const slice_grad_inputs[] = {"backprop_val_grad", "input_indices",
                                                "input_start", "output_indices"};
const graph_kind_desc graph_kind_sparse_slice_grad = {
    .kind = GRAPH_SPARSE_SLICE_GRAD, .type = "SparseSliceGrad", .min_inputs = 4,
    .max_inputs = 4, .inputs = slice_grad_inputs, .outputs = 1,
    .infer = infer_sparse_slice_grad, .run = run_sparse_slice_grad};

/* ---- sparse_split ------------------------------------------------------------------------- */

/* split_dim: a scalar of an index dtype. */
static ndx_status check_split_dim(const ndx_spec *s, ndx_error *err) {
    NDX_TRY(ndx_check_index_spec(s, "sparse_split", "split_dim", err));
    if (s->rank != NDX_UNKNOWN && s->rank != 0) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, s);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "sparse_split: split_dim has shape %s but must be a scalar", dims);
    }
    return NDX_OK;
}

static ndx_status infer_sparse_split(const graph_node *n, const ndx_spec *in,
                                     const ndx_tensor *const *consts, ndx_spec *out,
                                     ndx_error *err) {
    int num = n->attrs.count;
    NDX_TRY(check_split_dim(&in[0], err));
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 1, 1), local[8], *pieces = local;
    /* A split_dim known only at run time is checked then; 0 is every rank's axis. */
    int64_t axis = consts[0] ? ndx_read_index(consts[0]->data, consts[0]->dtype, 0) : 0;
    if (num > 8 && !(pieces = malloc((size_t)num * sizeof *pieces)))
        return ndx_fail(err, NDX_E_NO_MEMORY, "sparse_split: out of memory");
    ndx_status st = ndx_sparse_split_infer(axis, num, &sp, pieces, err);
    for (int p = 0; st == NDX_OK && p < num; p++) {
        out[p] = pieces[p].indices;
        out[num + p] = pieces[p].values;
        out[2 * num + p] = pieces[p].dense_shape;
    }
    if (pieces != local) free(pieces);
    return st;
}

static ndx_status run_sparse_split(const graph_node *n, const ndx_tensor *in,
                                   const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    int num = n->attrs.count;
    ndx_spec dim = ndx_spec_of(&in[0]);
    NDX_TRY(check_split_dim(&dim, err));
    ndx_sparse_tensor sp = graph_sparse_at(in, 1, 1), local[8], *pieces = local;
    ndx_call c;
    void *block = NULL;
    if (num > 8) {
        /* Through the caller's allocator: a session's pool serves it again on the next run. */
        NDX_TRY(ndx_call_init(&c, "sparse_split", opt, err));
        NDX_TRY(ndx_call_scratch(&c, (size_t)num * sizeof *pieces, 0, "pieces", &block));
        pieces = block;
    }
    for (int p = 0; p < num; p++) {
        pieces[p].indices = out[p];
        pieces[p].values = out[num + p];
        pieces[p].dense_shape = out[2 * num + p];
    }
    ndx_status st = ndx_sparse_split(ndx_read_index(in[0].data, in[0].dtype, 0), num, &sp, opt,
                                     pieces, err);
    for (int p = 0; st == NDX_OK && p < num; p++) {
        out[p] = pieces[p].indices;
        out[num + p] = pieces[p].values;
        out[2 * num + p] = pieces[p].dense_shape;
    }
    if (block) ndx_call_release(&c, block);
    return st;
}

static const char *const split_inputs[] = {"split_dim", "indices", "values", "shape"};
const graph_kind_desc graph_kind_sparse_split = {
    .kind = GRAPH_SPARSE_SPLIT, .type = "SparseSplit", .min_inputs = 4, .max_inputs = 4,
    .inputs = split_inputs, .count_name = "num_split", .outputs = GRAPH_OUTPUTS_COUNT3,
    .num_attrs = 1,
    .attrs = {{"num_split", GRAPH_ATTR_INT, offsetof(graph_attrs, count), 0, 1,
               NDX_GRAPH_MAX_ARITY, GRAPH_ATTR_REQUIRED | GRAPH_ATTR_ALWAYS, NULL}},
    .infer = infer_sparse_split, .run = run_sparse_split};

/* ---- sparse_reshape ----------------------------------------------------------------------- */

static ndx_status infer_sparse_reshape(const graph_node *n, const ndx_spec *in,
                                       const ndx_tensor *const *consts, ndx_spec *out,
                                       ndx_error *err) {
    (void)n;
    (void)consts;
    return ndx_sparse_reshape_infer(&in[0], &in[1], &in[2], &out[0], &out[1], err);
}

static ndx_status run_sparse_reshape(const graph_node *n, const ndx_tensor *in,
                                     const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_sparse_reshape(&in[0], &in[1], &in[2], opt, &out[0], &out[1], err);
}

static const char *const reshape_inputs[] = {"input_indices", "input_shape", "new_shape"};
const graph_kind_desc graph_kind_sparse_reshape = {
    .kind = GRAPH_SPARSE_RESHAPE, .type = "SparseReshape", .min_inputs = 3, .max_inputs = 3,
    .inputs = reshape_inputs, .outputs = 2, .infer = infer_sparse_reshape,
    .run = run_sparse_reshape};

/* ---- sparse_transpose --------------------------------------------------------------------- */

static ndx_status infer_sparse_transpose(const graph_node *n, const ndx_spec *in,
                                         const ndx_tensor *const *consts, ndx_spec *out,
                                         ndx_error *err) {
    (void)n;
    (void)consts;
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1), result;
    NDX_TRY(ndx_sparse_transpose_infer(&sp, &in[3], &result, err));
    graph_sparse_specs_out(&result, out);
    return NDX_OK;
}

static ndx_status run_sparse_transpose(const graph_node *n, const ndx_tensor *in,
                                       const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1), result = graph_sparse_at(out, 0, 1);
    NDX_TRY(ndx_sparse_transpose(&sp, &in[3], opt, &result, err));
    graph_sparse_out(&result, out);
    return NDX_OK;
}

static const char *const transpose_inputs[] = {"indices", "values", "dense_shape", "perm"};
const graph_kind_desc graph_kind_sparse_transpose = {
    .kind = GRAPH_SPARSE_TRANSPOSE, .type = "SparseTranspose", .min_inputs = 4, .max_inputs = 4,
    .inputs = transpose_inputs, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    .infer = infer_sparse_transpose, .run = run_sparse_transpose};
