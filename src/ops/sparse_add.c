/* sparse_add.c — tf.sparse.add of two SparseTensors (SparseAdd, with its threshold) and
 * tf.sparse.maximum / minimum (SparseSparseMaximum / Minimum): the checks, infer and shape
 * functions, and the call around the merge of sparse_merge.c.
 *
 * A call checks both inputs' views and dense shapes, reads every index once into an int64 copy
 * (checked inside the shape; the scan also tells whether each input is in canonical order),
 * counts the merge's output, and only then allocates and writes it. An output the op allocates
 * skips the copy and the count when the indices are int64: the merge checks each row as it
 * reads it (merge_once). */
#include <stdio.h>

#include "sparse_merge.h"

/* ---- dtypes ------------------------------------------------------------------------------ */

int ndx_sparse_add_takes(ndx_dtype dt) {
    switch (dt) {
    case NDX_INT8:
    case NDX_INT16:
    case NDX_INT32:
    case NDX_INT64:
    case NDX_FLOAT32:
    case NDX_FLOAT64:
    case NDX_COMPLEX64:
    case NDX_COMPLEX128: return 1;
    default: return 0;
    }
}

/* SparseSparseMaximum / Minimum: TensorFlow's real number types. */
static int minmax_takes(ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT;
}

/* The dtype of SparseAdd's threshold for values of dtype dt. */
static ndx_dtype threshold_dtype(ndx_dtype dt) {
    return dt == NDX_COMPLEX64 ? NDX_FLOAT32 : dt == NDX_COMPLEX128 ? NDX_FLOAT64 : dt;
}

static const char *op_name(merge_kind kind) {
    return kind == MERGE_ADD ? "sparse_add" : kind == MERGE_MAXIMUM ? "sparse_maximum"
                                                                     : "sparse_minimum";
}

static ndx_status check_value_types(merge_kind kind, const ndx_spec *a, const ndx_spec *b,
                                    ndx_error *err) {
    const char *op = op_name(kind);
    if (a->dtype != b->dtype || a->itemsize != b->itemsize)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: a.values are %s but b.values are %s",
                        op, ndx_dtype_name(a->dtype), ndx_dtype_name(b->dtype));
    if (kind == MERGE_ADD ? !ndx_sparse_add_takes(a->dtype) : !minmax_takes(a->dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        kind == MERGE_ADD
                            ? "%s: values of dtype %s are not supported (int8, int16, int32, "
                              "int64, float32, float64, complex64 or complex128)"
                            : "%s: values of dtype %s are not supported (an integer or float "
                              "dtype)",
                        op, ndx_dtype_name(a->dtype));
    return NDX_OK;
}

static ndx_status check_threshold_spec(const ndx_spec *t, ndx_dtype values, ndx_error *err) {
    if (!t) return NDX_OK;
    NDX_TRY(ndx_spec_check(t, "sparse_add: threshold", err));
    if (t->rank != NDX_UNKNOWN && t->rank != 0) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, t);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "sparse_add: the magnitude threshold must be a scalar: got shape %s",
                        dims);
    }
    ndx_dtype want = threshold_dtype(values);
    if (t->dtype != want)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "sparse_add: threshold must be %s for values of dtype %s, not %s",
                        ndx_dtype_name(want), ndx_dtype_name(values), ndx_dtype_name(t->dtype));
    return NDX_OK;
}

/* ---- infer ------------------------------------------------------------------------------- */

static ndx_status infer_merge(merge_kind kind, const ndx_sparse_spec *a, const ndx_sparse_spec *b,
                              const ndx_spec *threshold, ndx_sparse_spec *out, ndx_error *err) {
    const char *op = op_name(kind);
    char an[32], bn[32];
    snprintf(an, sizeof an, "%s: a", op);
    snprintf(bn, sizeof bn, "%s: b", op);
    int ra = NDX_UNKNOWN, rb = NDX_UNKNOWN;
    int64_t na = NDX_UNKNOWN, nb = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(a, an, &ra, &na, err));
    NDX_TRY(ndx_sparse_check_specs(b, bn, &rb, &nb, err));
    if (ra != NDX_UNKNOWN && rb != NDX_UNKNOWN && ra != rb)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: Operands do not have the same ranks; got a of rank %d and b of "
                        "rank %d",
                        op, ra, rb);
    NDX_TRY(check_value_types(kind, &a->values, &b->values, err));
    if (kind == MERGE_ADD) NDX_TRY(check_threshold_spec(threshold, a->values.dtype, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", op);
    int rank = ra != NDX_UNKNOWN ? ra : rb;
    int64_t nnz = NDX_UNKNOWN;
    out->indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){nnz, rank});
    out->values = ndx_spec_make(a->values.dtype, 1, &nnz);
    out->values.itemsize = a->values.itemsize;
    out->dense_shape = ndx_spec_make(NDX_INT64, 1, (int64_t[]){rank});
    return NDX_OK;
}

ndx_status ndx_sparse_add_infer(const ndx_sparse_spec *a, const ndx_sparse_spec *b,
                                const ndx_spec *threshold, ndx_sparse_spec *out, ndx_error *err) {
    return infer_merge(MERGE_ADD, a, b, threshold, out, err);
}

ndx_status ndx_sparse_maximum_infer(const ndx_sparse_spec *a, const ndx_sparse_spec *b,
                                    ndx_sparse_spec *out, ndx_error *err) {
    return infer_merge(MERGE_MAXIMUM, a, b, NULL, out, err);
}

ndx_status ndx_sparse_minimum_infer(const ndx_sparse_spec *a, const ndx_sparse_spec *b,
                                    ndx_sparse_spec *out, ndx_error *err) {
    return infer_merge(MERGE_MINIMUM, a, b, NULL, out, err);
}

/* ---- plan -------------------------------------------------------------------------------- */

typedef struct {
    merge_kind kind;
    const char *op;
    const ndx_sparse_tensor *in[2];
    ndx_sparse_view v[2];
    char names[2][32];
    merge_job job;
    size_t open_bytes[2];
} add_plan;

/* Every check but the index values: the views, the dense shapes (the same), the dtypes and the
 * threshold, read here once. */
static ndx_status plan_merge(ndx_call *c, merge_kind kind, const ndx_sparse_tensor *a,
                             const ndx_sparse_tensor *b, const ndx_tensor *threshold,
                             add_plan *p) {
    memset(p, 0, sizeof *p);
    ndx_error *err = c->err;
    p->kind = kind;
    p->op = op_name(kind);
    p->in[0] = a;
    p->in[1] = b;
    snprintf(p->names[0], sizeof p->names[0], "%s: a", p->op);
    snprintf(p->names[1], sizeof p->names[1], "%s: b", p->op);
    /* The checks on shapes and dtypes first, as infer makes them (the same messages). */
    if (!a || !b)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", p->op, a ? "b" : "a");
    ndx_sparse_spec specs[2] = {ndx_sparse_spec_of(a), ndx_sparse_spec_of(b)}, ignored;
    ndx_spec ts;
    if (threshold) ts = ndx_spec_of(threshold);
    NDX_TRY(infer_merge(kind, &specs[0], &specs[1], threshold ? &ts : NULL, &ignored, err));
    for (int m = 0; m < 2; m++)
        NDX_TRY(ndx_sparse_check_views(p->in[m], p->names[m], &p->v[m], err));
    const ndx_sparse_view *va = &p->v[0], *vb = &p->v[1];
    int64_t total;
    if (!ndx_add_i64(va->nnz, vb->nnz, &total))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: the total entry count overflows int64_t", p->op);
    for (int d = 0; d < va->rank; d++)
        if (va->dims[d] != vb->dims[d])
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: Operands' shapes do not match: got %lld and %lld for "
                            "dimension %d",
                            p->op, (long long)va->dims[d], (long long)vb->dims[d], d);
    merge_job *j = &p->job;
    if (kind == MERGE_ADD && threshold) {
        NDX_TRY(ndx_tensor_check(threshold, "sparse_add: threshold", NULL, NULL, err));
        switch (threshold->dtype) {
        case NDX_FLOAT32: {
            float f;
            memcpy(&f, threshold->data, sizeof f);
            j->threshold_f = f;
            break;
        }
        case NDX_FLOAT64: memcpy(&j->threshold_f, threshold->data, sizeof j->threshold_f); break;
        case NDX_INT8: j->threshold_i = *(const int8_t *)threshold->data; break;
        default: j->threshold_i = ndx_read_index(threshold->data, threshold->dtype, 0); break;
        }
    }
    j->kind = kind;
    j->a = va;
    j->b = vb;
    j->rank = va->rank;
    j->threads = c->threads;
    ndx_sparse_strides(va->rank, va->dims, j->strides);
    for (int m = 0; m < 2; m++)
        p->open_bytes[m] = ndx_sparse_open_bytes(p->in[m], &p->v[m], 1, c->threads, 0);
    return NDX_OK;
}

/* Reads and checks both inputs' indices into scratch (of scratch_bytes). */
static ndx_status open_inputs(add_plan *p, int threads, void *scratch, ndx_error *err) {
    ndx_carver cv = {scratch, 0};
    for (int m = 0; m < 2; m++) {
        void *block = ndx_carve(&cv, p->open_bytes[m]);
        NDX_TRY(ndx_sparse_open_all(p->in[m], 1, p->names[m], 0, threads, 0, &p->v[m], block,
                                    err));
    }
    return NDX_OK;
}

/* 1 when the budget leaves room for an output of a's plus b's entries (the one-pass merge). */
static int once_fits(const ndx_call *c, const add_plan *p) {
    int64_t cap = p->v[0].nnz + p->v[1].nnz; /* checked against overflow by the plan */
    size_t idx, val;
    if (!ndx_bytes_of(cap, (size_t)p->v[0].rank * sizeof(int64_t), &idx) ||
        !ndx_bytes_of(cap, p->v[0].itemsize, &val))
        return 0;
    return idx <= ndx_call_room(c) && val <= ndx_call_room(c) - idx;
}

static size_t scratch_bytes(const add_plan *p) {
    ndx_carver cv = {NULL, 0};
    for (int m = 0; m < 2; m++) ndx_carve(&cv, p->open_bytes[m]);
    return cv.used;
}

/* 1 when both inputs' indices are int64, which the fused merge reads where they are. */
static int fusable(const add_plan *p) {
    return p->in[0]->indices.dtype == NDX_INT64 && p->in[1]->indices.dtype == NDX_INT64;
}

/* An output the op allocates: nobody sees it before the call succeeds, so the index check can
 * be fused into the merge (each row read once from the caller, checked, compared, written).
 * Rows outside the shape or out of canonical order send the call down the checked path, which
 * reads the indices into scratch first and gives the same entries, or the error, as always. */
static ndx_status merge_once(ndx_call *c, add_plan *p, void *scratch, ndx_sparse_tensor *out,
                             ndx_error *err) {
    ndx_sparse_tensor cap, saved = *out;
    ndx_sparse_describe(&cap, p->v[0].nnz + p->v[1].nnz, p->v[0].rank, p->v[0].dtype,
                        p->v[0].itemsize);
    int allocated[3] = {0, 0, 0}, prepared = 0;
    int64_t nnz = -1;
    ndx_error quiet; /* a failed allocation here is reported, if at all, by the checked path */
    if (fusable(p) && ndx_sparse_prepare(&cap, out, c, allocated, &quiet) == NDX_OK) {
        prepared = 1;
        for (int m = 0; m < 2; m++) {
            p->v[m].idx = p->in[m]->indices.data;
            p->v[m].sorted = 1;
        }
        p->job.out_idx = out->indices.data;
        p->job.out_values = out->values.data;
        nnz = ndx_merge_write_fused(&p->job);
        for (int m = 0; m < 2; m++) {
            p->v[m].idx = NULL;
            p->v[m].sorted = 0;
        }
    }
    ndx_status st = NDX_OK;
    if (nnz < 0) {
        /* The checked path, into the output already allocated (when it was). */
        st = open_inputs(p, c->threads, scratch, err);
        if (st == NDX_OK && !prepared) st = ndx_sparse_prepare(&cap, out, c, NULL, err);
        else if (st != NDX_OK && prepared) {
            ndx_sparse_drop(out, c, allocated);
            *out = saved;
        }
        if (st != NDX_OK) return st;
        p->job.out_idx = out->indices.data;
        p->job.out_values = out->values.data;
        nnz = ndx_merge_write_once(&p->job);
    }
    out->indices.shape[0] = out->values.shape[0] = nnz;
    int64_t *shape = out->dense_shape.data;
    for (int d = 0; d < p->v[0].rank; d++) shape[d] = p->v[0].dims[d];
    return NDX_OK;
}

/* The whole call: plan, read the indices, count, then (unless shape_only) write. */
static ndx_status run_merge(merge_kind kind, const ndx_sparse_tensor *a,
                            const ndx_sparse_tensor *b, const ndx_tensor *threshold,
                            const ndx_options *opt, ndx_sparse_tensor *out, int shape_only,
                            ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, op_name(kind), opt, out, err));
    add_plan p;
    NDX_TRY(plan_merge(&c, kind, a, b, threshold, &p));
    void *scratch = NULL;
    int64_t nnz = 0;
    ndx_status st = ndx_call_scratch(&c, scratch_bytes(&p), 0, "index scratch", &scratch);
    /* An output the op allocates (and may make as large as a's plus b's entries) takes the
     * merge in one pass; an output the caller gives needs the count first. */
    int once = !shape_only && !out->indices.data && !out->values.data &&
               !out->dense_shape.data && once_fits(&c, &p);
    if (st == NDX_OK && once) {
        st = merge_once(&c, &p, scratch, out, err);
        ndx_call_release(&c, scratch);
        return st;
    }
    if (st == NDX_OK) st = open_inputs(&p, c.threads, scratch, err);
    if (st == NDX_OK) nnz = ndx_merge_count(&p.job);
    ndx_sparse_tensor want;
    if (st == NDX_OK) ndx_sparse_describe(&want, nnz, p.v[0].rank, p.v[0].dtype, p.v[0].itemsize);
    if (st == NDX_OK && shape_only) {
        *out = want;
    } else if (st == NDX_OK) {
        st = ndx_sparse_prepare(&want, out, &c, NULL, err);
        if (st == NDX_OK) {
            p.job.out_idx = out->indices.data;
            p.job.out_values = out->values.data;
            if (nnz > 0) ndx_merge_write(&p.job);
            int64_t *shape = out->dense_shape.data;
            for (int d = 0; d < p.v[0].rank; d++) shape[d] = p.v[0].dims[d];
        }
    }
    ndx_call_release(&c, scratch);
    return st;
}

ndx_status ndx_sparse_add_shape(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                                const ndx_tensor *threshold, ndx_sparse_tensor *out,
                                ndx_error *err) {
    return run_merge(MERGE_ADD, a, b, threshold, NULL, out, 1, err);
}

ndx_status ndx_sparse_add(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                          const ndx_tensor *threshold, const ndx_options *opt,
                          ndx_sparse_tensor *out, ndx_error *err) {
    return run_merge(MERGE_ADD, a, b, threshold, opt, out, 0, err);
}

ndx_status ndx_sparse_maximum_shape(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                                    ndx_sparse_tensor *out, ndx_error *err) {
    return run_merge(MERGE_MAXIMUM, a, b, NULL, NULL, out, 1, err);
}

ndx_status ndx_sparse_maximum(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                              const ndx_options *opt, ndx_sparse_tensor *out, ndx_error *err) {
    return run_merge(MERGE_MAXIMUM, a, b, NULL, opt, out, 0, err);
}

ndx_status ndx_sparse_minimum_shape(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                                    ndx_sparse_tensor *out, ndx_error *err) {
    return run_merge(MERGE_MINIMUM, a, b, NULL, NULL, out, 1, err);
}

ndx_status ndx_sparse_minimum(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                              const ndx_options *opt, ndx_sparse_tensor *out, ndx_error *err) {
    return run_merge(MERGE_MINIMUM, a, b, NULL, opt, out, 0, err);
}
