/* sparse_kind_parts.h — how the sparse kinds' descriptors (sparse_*kinds.c) read a sparse tensor
 * from their inputs and write one to their outputs: a sparse tensor is three inputs or outputs,
 * indices, values and dense_shape. */
#ifndef NDX_SPARSE_KIND_PARTS_H
#define NDX_SPARSE_KIND_PARTS_H

#include "ndx.h"

/* The input names "indices", "values", "dense_shape", "default_value". */
extern const char *const graph_sparse_parts[];

/* The sparse tensor whose three parts are in[at], in[at + stride], in[at + 2 * stride]. */
static inline ndx_sparse_spec graph_sparse_spec_at(const ndx_spec *in, int at, int stride) {
    ndx_sparse_spec sp = {in[at], in[at + stride], in[at + 2 * stride]};
    return sp;
}

static inline void graph_sparse_specs_out(const ndx_sparse_spec *sp, ndx_spec *out) {
    out[0] = sp->indices;
    out[1] = sp->values;
    out[2] = sp->dense_shape;
}

static inline ndx_sparse_tensor graph_sparse_at(const ndx_tensor *in, int at, int stride) {
    ndx_sparse_tensor sp = {in[at], in[at + stride], in[at + 2 * stride]};
    return sp;
}

static inline void graph_sparse_out(const ndx_sparse_tensor *sp, ndx_tensor *out) {
    out[0] = sp->indices;
    out[1] = sp->values;
    out[2] = sp->dense_shape;
}

#endif
