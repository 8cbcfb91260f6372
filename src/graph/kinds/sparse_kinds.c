/* sparse_kinds.c — the kinds of ndx's sparse ops: sparse_concat, sparse_reorder,
 * sparse_to_dense and dense_to_sparse (sparse_kind_parts.h: a sparse tensor is three inputs or
 * outputs). */
#include <stdlib.h>

#include "graph_internal.h"
#include "sparse_kind_parts.h"

const char *const graph_sparse_parts[] = {"indices", "values", "dense_shape", "default_value"};

/* ---- sparse_concat ------------------------------------------------------------------------ */

static ndx_status infer_sparse_concat(const graph_node *n, const ndx_spec *in,
                                      const ndx_tensor *const *consts, ndx_spec *out,
                                      ndx_error *err) {
    (void)consts;
    int count = n->attrs.count;
    ndx_sparse_spec local[8], *inputs = local, result;
    memset(local, 0, sizeof local);
    if (count > 8 && !(inputs = malloc((size_t)count * sizeof *inputs)))
        return ndx_fail(err, NDX_E_NO_MEMORY, "sparse_concat: out of memory");
    for (int i = 0; i < count; i++) inputs[i] = graph_sparse_spec_at(in, i, count);
    ndx_status st =
        ndx_sparse_concat_infer(n->attrs.axis, count, inputs, n->attrs.expand, &result, err);
    if (inputs != local) free(inputs);
    if (st == NDX_OK) graph_sparse_specs_out(&result, out);
    return st;
}

static ndx_status run_sparse_concat(const graph_node *n, const ndx_tensor *in,
                                    const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    int count = n->attrs.count;
    ndx_sparse_tensor local[8], *inputs = local;
    ndx_call c;
    void *block = NULL;
    if (count > 8) {
        /* Through the caller's allocator: a session's pool serves it again on the next run. */
        NDX_TRY(ndx_call_init(&c, "sparse_concat", opt, err));
        NDX_TRY(ndx_call_scratch(&c, (size_t)count * sizeof *inputs, 0, "inputs", &block));
        inputs = block;
    }
    for (int i = 0; i < count; i++) inputs[i] = graph_sparse_at(in, i, count);
    ndx_sparse_tensor result = {out[0], out[1], out[2]};
    ndx_status st =
        ndx_sparse_concat(n->attrs.axis, count, inputs, n->attrs.expand, opt, &result, err);
    if (block) ndx_call_release(&c, block);
    if (st == NDX_OK) graph_sparse_out(&result, out);
    return st;
}

const graph_kind_desc graph_kind_sparse_concat = {
    .kind = GRAPH_SPARSE_CONCAT, .type = "SparseConcat", .group = 3, .grouped_parts = 1,
    .inputs = graph_sparse_parts, .count_name = "n", .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    .width_first = -1, .width_step = 1, .num_attrs = 2,
    .attrs = {{"axis", GRAPH_ATTR_INT, offsetof(graph_attrs, axis), 0, -NDX_MAX_RANK, NDX_MAX_RANK,
               GRAPH_ATTR_REQUIRED | GRAPH_ATTR_ALWAYS, NULL},
              {"expand_nonconcat_dim", GRAPH_ATTR_BOOL, offsetof(graph_attrs, expand), 0, 0, 1, 0,
               NULL}},
    .infer = infer_sparse_concat, .run = run_sparse_concat};

/* ---- sparse_reorder ----------------------------------------------------------------------- */

static ndx_status infer_sparse_reorder(const graph_node *n, const ndx_spec *in,
                                       const ndx_tensor *const *consts, ndx_spec *out,
                                       ndx_error *err) {
    (void)n;
    (void)consts;
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1);
    NDX_TRY(ndx_sparse_reorder_infer(&sp, &sp, err));
    graph_sparse_specs_out(&sp, out);
    return NDX_OK;
}

static ndx_status run_sparse_reorder(const graph_node *n, const ndx_tensor *in,
                                     const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1), result = graph_sparse_at(out, 0, 1);
    NDX_TRY(ndx_sparse_reorder(&sp, opt, &result, err));
    graph_sparse_out(&result, out);
    return NDX_OK;
}

const graph_kind_desc graph_kind_sparse_reorder = {
    .kind = GRAPH_SPARSE_REORDER, .type = "SparseReorder", .min_inputs = 3, .max_inputs = 3,
    .inputs = graph_sparse_parts, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    .infer = infer_sparse_reorder, .run = run_sparse_reorder};

/* ---- sparse_to_dense ---------------------------------------------------------------------- */

/* A fourth input is the default value. */
static ndx_status infer_sparse_to_dense(const graph_node *n, const ndx_spec *in,
                                        const ndx_tensor *const *consts, ndx_spec *out,
                                        ndx_error *err) {
    ndx_sparse_spec sp = graph_sparse_spec_at(in, 0, 1);
    NDX_TRY(ndx_sparse_to_dense_infer(&sp, out, err));
    if (n->num_inputs == 4) {
        const ndx_spec *d = &in[3];
        if (!ndx_spec_types_agree(d, &sp.values) || (d->rank != NDX_UNKNOWN && d->rank != 0)) {
            char dims[NDX_DIMS_TEXT];
            ndx_format_spec_dims(dims, sizeof dims, d);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "sparse_to_dense: default_value must be a scalar of the values' "
                            "dtype and width (%s, %zu bytes), but it is %s %s of %zu bytes",
                            ndx_dtype_name(sp.values.dtype), sp.values.itemsize,
                            ndx_dtype_name(d->dtype), dims, d->itemsize);
        }
    }
    const ndx_tensor *shape = consts ? consts[2] : NULL;
    if (!shape || out->rank < 0) return NDX_OK;
    for (int i = 0; i < out->rank; i++) {
        int64_t d = ndx_read_index(shape->data, shape->dtype, i);
        out->shape[i] = d >= 0 ? d : NDX_UNKNOWN; /* a negative dim fails at run time */
    }
    return NDX_OK;
}

static ndx_status run_sparse_to_dense(const graph_node *n, const ndx_tensor *in,
                                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_sparse_tensor sp = graph_sparse_at(in, 0, 1);
    int has_default = n->num_inputs == 4;
    if (has_default && (in[3].rank != 0 || in[3].dtype != in[1].dtype ||
                        in[3].itemsize != in[1].itemsize)) {
        ndx_spec specs[4] = {ndx_spec_of(&in[0]), ndx_spec_of(&in[1]), ndx_spec_of(&in[2]),
                             ndx_spec_of(&in[3])};
        ndx_spec ignored;
        return infer_sparse_to_dense(n, specs, NULL, &ignored, err);
    }
    return ndx_sparse_to_dense(&sp, has_default ? in[3].data : NULL, opt, out, err);
}

const graph_kind_desc graph_kind_sparse_to_dense = {
    .kind = GRAPH_SPARSE_TO_DENSE, .type = "SparseToDense", .min_inputs = 3, .max_inputs = 4,
    .inputs = graph_sparse_parts, .outputs = 1, .width_first = 1, .width_step = 2,
    .infer = infer_sparse_to_dense, .run = run_sparse_to_dense};

/* ---- dense_to_sparse ---------------------------------------------------------------------- */

static ndx_status infer_dense_to_sparse(const graph_node *n, const ndx_spec *in,
                                        const ndx_tensor *const *consts, ndx_spec *out,
                                        ndx_error *err) {
    (void)n;
    (void)consts;
    ndx_sparse_spec sp;
    NDX_TRY(ndx_dense_to_sparse_infer(&in[0], &sp, err));
    graph_sparse_specs_out(&sp, out);
    return NDX_OK;
}

static ndx_status run_dense_to_sparse(const graph_node *n, const ndx_tensor *in,
                                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    (void)n;
    ndx_sparse_tensor result = graph_sparse_at(out, 0, 1);
    NDX_TRY(ndx_dense_to_sparse(&in[0], opt, &result, err));
    graph_sparse_out(&result, out);
    return NDX_OK;
}

static const char *const dense_inputs[] = {"x"};
const graph_kind_desc graph_kind_dense_to_sparse = {
    .kind = GRAPH_DENSE_TO_SPARSE, .type = "DenseToSparse", .min_inputs = 1, .max_inputs = 1,
    .inputs = dense_inputs, .outputs = 3, .flags = GRAPH_KIND_SPARSE_OUT,
    .infer = infer_dense_to_sparse, .run = run_dense_to_sparse};
