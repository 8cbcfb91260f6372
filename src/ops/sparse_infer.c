/* sparse_infer.c — the sparse ops' shape checks on partial shapes: a SparseTensor's three specs
 * against each other, and each op's output specs. dense_shape's values are data, so the checks
 * that need them (negative dims, bounds, non-concat dims) belong to the plans. */
#include <stdio.h>

#include "sparse_tensor.h"

ndx_sparse_spec ndx_sparse_spec_of(const ndx_sparse_tensor *sp) {
    ndx_sparse_spec s;
    s.indices = ndx_spec_of(&sp->indices);
    s.values = ndx_spec_of(&sp->values);
    s.dense_shape = ndx_spec_of(&sp->dense_shape);
    return s;
}

/* One of the three specs: well formed, of the wanted rank, of an index dtype when asked. */
static ndx_status check_part(const ndx_spec *t, const char *what, const char *part,
                             int want_rank, int index_dtype, ndx_error *err) {
    char name[160];
    snprintf(name, sizeof name, "%s.%s", what, part);
    NDX_TRY(ndx_spec_check(t, name, err));
    if (index_dtype && !ndx_is_index_dtype(t->dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s must be int16, int32 or int64, not %s",
                        name, ndx_dtype_name(t->dtype));
    if (t->rank != NDX_UNKNOWN && t->rank != want_rank) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, t);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s has shape %s but must be %s", name,
                        dims, want_rank == 2 ? "a matrix [N, R]" : "a vector");
    }
    return NDX_OK;
}

/* The dim of a spec that has rank `rank` when it is known, else unknown. */
static int64_t dim_of(const ndx_spec *s, int k) {
    return s->rank == NDX_UNKNOWN ? NDX_UNKNOWN : s->shape[k];
}

ndx_status ndx_sparse_check_specs(const ndx_sparse_spec *sp, const char *what, int *rank,
                                  int64_t *nnz, ndx_error *err) {
    if (!sp) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s is NULL", what);
    NDX_TRY(check_part(&sp->indices, what, "indices", 2, 1, err));
    NDX_TRY(check_part(&sp->dense_shape, what, "dense_shape", 1, 1, err));
    NDX_TRY(check_part(&sp->values, what, "values", 1, 0, err));
    int64_t r = dim_of(&sp->dense_shape, 0);
    if (r != NDX_UNKNOWN && (r < 1 || r > NDX_MAX_RANK))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s.dense_shape has %lld entries: a SparseTensor has rank 1 to %d", what,
                        (long long)r, NDX_MAX_RANK);
    int64_t columns = dim_of(&sp->indices, 1);
    if (ndx_dims_conflict(columns, r))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s.indices has %lld columns but dense_shape has %lld entries", what,
                        (long long)columns, (long long)r);
    int64_t rows = dim_of(&sp->indices, 0), count = dim_of(&sp->values, 0);
    if (ndx_dims_conflict(rows, count))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s.values has %lld elements but indices has %lld rows", what,
                        (long long)count, (long long)rows);
    *rank = r != NDX_UNKNOWN ? (int)r : columns != NDX_UNKNOWN ? (int)columns : NDX_UNKNOWN;
    *nnz = rows != NDX_UNKNOWN ? rows : count;
    return NDX_OK;
}

/* The specs of a sparse result: indices int64 [nnz, rank], values [nnz], dense_shape int64
 * [rank]; nnz and rank may be unknown. */
static void describe(ndx_sparse_spec *out, int64_t nnz, int rank, const ndx_spec *values) {
    out->indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){nnz, rank});
    out->values = ndx_spec_make(values->dtype, 1, &nnz);
    out->values.itemsize = values->itemsize;
    out->dense_shape = ndx_spec_make(NDX_INT64, 1, (int64_t[]){rank});
}

#define CONCAT "sparse_concat"

ndx_status ndx_sparse_concat_infer(int axis, int n, const ndx_sparse_spec *inputs,
                                   int expand_nonconcat_dim, ndx_sparse_spec *out,
                                   ndx_error *err) {
    (void)expand_nonconcat_dim; /* it only changes what dense_shape's values must be */
    if (n < 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        CONCAT ": n = %d; at least one input is needed", n);
    if (!inputs) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, CONCAT ": inputs is NULL");
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, CONCAT ": out is NULL");
    int rank0 = NDX_UNKNOWN, rank = NDX_UNKNOWN;
    int64_t nnz = 0;
    int nnz_known = 1;
    for (int m = 0; m < n; m++) {
        char name[64];
        snprintf(name, sizeof name, CONCAT ": inputs[%d]", m);
        int r = NDX_UNKNOWN;
        int64_t c = NDX_UNKNOWN;
        NDX_TRY(ndx_sparse_check_specs(&inputs[m], name, &r, &c, err));
        if (m == 0) {
            rank0 = rank = r;
            if (r != NDX_UNKNOWN && (axis < -r || axis >= r))
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                CONCAT ": axis %d is out of range [%d, %d) for inputs of rank %d",
                                axis, -r, r, r);
        } else {
            if (rank0 != NDX_UNKNOWN && r != NDX_UNKNOWN && r != rank0)
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                CONCAT ": inputs[%d] has rank %d but inputs[0] has rank %d", m, r,
                                rank0);
            const ndx_spec *v = &inputs[m].values, *v0 = &inputs[0].values;
            if (!ndx_spec_types_agree(v, v0)) {
                char have[32], want[32];
                ndx_tensor hv = ndx_view_of_spec(v), wv = ndx_view_of_spec(v0);
                ndx_format_type(have, sizeof have, &hv);
                ndx_format_type(want, sizeof want, &wv);
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                CONCAT ": inputs[%d].values are %s but inputs[0].values are %s", m,
                                have, want);
            }
            if (rank == NDX_UNKNOWN) rank = r;
        }
        if (c == NDX_UNKNOWN)
            nnz_known = 0;
        else if (nnz_known && !ndx_add_i64(nnz, c, &nnz))
            return ndx_fail(err, NDX_E_OVERFLOW, CONCAT ": the total entry count overflows int64_t");
    }
    describe(out, nnz_known ? nnz : NDX_UNKNOWN, rank, &inputs[0].values);
    return NDX_OK;
}

ndx_status ndx_sparse_reorder_infer(const ndx_sparse_spec *in, ndx_sparse_spec *out,
                                    ndx_error *err) {
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(in, "sparse_reorder: in", &rank, &nnz, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "sparse_reorder: out is NULL");
    describe(out, nnz, rank, &in->values);
    return NDX_OK;
}

ndx_status ndx_sparse_to_dense_infer(const ndx_sparse_spec *sp, ndx_spec *out, ndx_error *err) {
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(sp, "sparse_to_dense: sp", &rank, &nnz, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "sparse_to_dense: out is NULL");
    *out = ndx_spec_make(sp->values.dtype, rank, NULL); /* dims are dense_shape's values */
    out->itemsize = sp->values.itemsize;
    return NDX_OK;
}

ndx_status ndx_dense_to_sparse_infer(const ndx_spec *dense, ndx_sparse_spec *out,
                                     ndx_error *err) {
    NDX_TRY(ndx_spec_check(dense, "dense_to_sparse: dense", err));
    if (dense->rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "dense_to_sparse: dense is a scalar; a SparseTensor has rank >= 1");
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "dense_to_sparse: out is NULL");
    describe(out, NDX_UNKNOWN, dense->rank, dense); /* the entry count is a count of values */
    return NDX_OK;
}
