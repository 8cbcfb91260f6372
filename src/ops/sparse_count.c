/* sparse_count.c — TensorFlow's count ops with a sparse output, DenseCountSparseOutput and
 * SparseCountSparseOutput (the kernels of tf.sparse.bincount).
 *
 * The plan reads each value once (and a sparse input's indices, through the sparse check), keeps
 * the (batch, value, position) of every value counted in scratch and sorts them: the runs of one
 * (batch, value) are then the output entries, in TensorFlow's order, and a run's weights add up
 * in position order, as TensorFlow's map adds them. The run reads only that scratch and the
 * weights, and cannot fail. */
#include <stdlib.h>

#include "scatter_combine.h"
#include "sparse_tensor.h"

#define DENSE "dense_count_sparse_output"
#define SPARSE "sparse_count_sparse_output"

typedef struct {
    int64_t batch, value, pos;
} count_entry;

typedef struct count_plan {
    const char *op;
    int out_rank;        /* 1 or 2 */
    int64_t batches;
    int64_t kept;        /* entries counted */
    int64_t distinct;    /* output entries */
    int64_t size;        /* the last dim of the dense shape */
    count_entry *e;      /* [kept] sorted, in scratch */
    const unsigned char *weights; /* NULL: no weights */
    ndx_dtype wt;        /* the output's dtype */
    size_t wsize;
    int binary;
} count_plan;

/* ---- checks on specs ------------------------------------------------------------------------ */

static int weight_dtype_ok(ndx_dtype d) {
    ndx_dtype_kind k = ndx_dtype_kind_of(d);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || d == NDX_FLOAT32 || d == NDX_FLOAT64;
}

static ndx_status check_common(const char *op, const ndx_spec *values, const ndx_spec *weights,
                               const ndx_count_attrs *attrs, ndx_error *err) {
    if (!attrs) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: attrs is NULL", op);
    if (attrs->minlength < -1 || attrs->maxlength < -1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: minlength (%lld) and maxlength (%lld) must be >= -1", op,
                        (long long)attrs->minlength, (long long)attrs->maxlength);
    if (values->dtype != NDX_INT32 && values->dtype != NDX_INT64)
        return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: values are %s; int32 or int64 only", op,
                        ndx_dtype_name(values->dtype));
    if (weights && !weight_dtype_ok(weights->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        "%s: weights are %s; integers, float32 or float64 only", op,
                        ndx_dtype_name(weights->dtype));
    return NDX_OK;
}

/* weights: 0 elements, or exactly `like`'s shape (TensorFlow's words per op). */
static ndx_status check_weights_shape(const char *op, const ndx_spec *weights,
                                      const ndx_spec *like, const char *like_name,
                                      ndx_error *err) {
    int64_t count;
    if (!weights || weights->rank == NDX_UNKNOWN || like->rank == NDX_UNKNOWN) return NDX_OK;
    /* weights that may have 0 elements (a dim unknown yet) may be the empty tensor */
    if (!ndx_known_product(weights->rank, weights->shape, &count) || count == 0) return NDX_OK;
    int same = weights->rank == like->rank && ndx_dims_agree(like->rank, weights->shape,
                                                              like->shape);
    if (same) return NDX_OK;
    char w[NDX_DIMS_TEXT], d[NDX_DIMS_TEXT];
    ndx_format_spec_dims(w, sizeof w, weights);
    ndx_format_spec_dims(d, sizeof d, like);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: Weights and %s must have the same shape. Weight shape: %s; %s shape: %s",
                    op, like_name, w, like_name, d);
}

static void describe(ndx_sparse_spec *out, int out_rank, ndx_dtype wt) {
    int64_t unknown = NDX_UNKNOWN;
    out->indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){unknown, out_rank});
    out->values = ndx_spec_make(wt, 1, &unknown);
    out->dense_shape = ndx_spec_make(NDX_INT64, 1, (int64_t[]){out_rank});
}

ndx_status ndx_dense_count_sparse_output_infer(const ndx_spec *values, const ndx_spec *weights,
                                               const ndx_count_attrs *attrs,
                                               ndx_sparse_spec *out, ndx_error *err) {
    if (!values) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, DENSE ": values is NULL");
    NDX_TRY(ndx_spec_check(values, DENSE ": values", err));
    if (weights) NDX_TRY(ndx_spec_check(weights, DENSE ": weights", err));
    NDX_TRY(check_common(DENSE, values, weights, attrs, err));
    if (values->rank != NDX_UNKNOWN && values->rank != 1 && values->rank != 2) {
        char d[NDX_DIMS_TEXT];
        ndx_format_spec_dims(d, sizeof d, values);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        DENSE ": Input must be a 1 or 2-dimensional tensor. Got: %s", d);
    }
    NDX_TRY(check_weights_shape(DENSE, weights, values, "data", err));
    if (values->rank == 2 && values->shape[0] == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        DENSE ": Invalid input: Shapes dimension cannot be 0.");
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, DENSE ": out is NULL");
    describe(out, values->rank == 2 ? 2 : values->rank == 1 ? 1 : NDX_UNKNOWN,
             weights ? weights->dtype : values->dtype);
    return NDX_OK;
}

ndx_status ndx_sparse_count_sparse_output_infer(const ndx_sparse_spec *sp,
                                                const ndx_spec *weights,
                                                const ndx_count_attrs *attrs,
                                                ndx_sparse_spec *out, ndx_error *err) {
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(sp, SPARSE ": sp", &rank, &nnz, err));
    if (weights) NDX_TRY(ndx_spec_check(weights, SPARSE ": weights", err));
    NDX_TRY(check_common(SPARSE, &sp->values, weights, attrs, err));
    NDX_TRY(check_weights_shape(SPARSE, weights, &sp->values, "values", err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, SPARSE ": out is NULL");
    describe(out, rank == NDX_UNKNOWN ? NDX_UNKNOWN : rank == 1 ? 1 : 2,
             weights ? weights->dtype : sp->values.dtype);
    return NDX_OK;
}

/* ---- plan: the entries counted, sorted -------------------------------------------------------- */

static int entry_cmp(const void *a, const void *b) {
    const count_entry *x = a, *y = b;
    if (x->batch != y->batch) return x->batch < y->batch ? -1 : 1;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Keeps the counted values of values[0..n) (entry i in batch batch_of[i], or batch i / per when
 * batch_of is NULL), sorts them and sizes the output. */
static ndx_status plan_entries(count_plan *p, const ndx_count_attrs *attrs, const void *values,
                               ndx_dtype vt, int64_t n, const int64_t *rows, int rank,
                               int64_t per, ndx_error *err) {
    int64_t most = 0, k = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ndx_read_index(values, vt, i);
        if (v < 0 || (attrs->maxlength > 0 && v >= attrs->maxlength)) continue;
        p->e[k].batch = rows ? (rank == 1 ? 0 : rows[i * rank]) : i / per;
        p->e[k].value = v;
        p->e[k].pos = i;
        most = v > most ? v : most;
        k++;
    }
    p->kept = k;
    if (k > 1) qsort(p->e, (size_t)k, sizeof *p->e, entry_cmp);
    p->distinct = 0;
    for (int64_t i = 0; i < k; i++)
        p->distinct += i == 0 || p->e[i].batch != p->e[i - 1].batch ||
                       p->e[i].value != p->e[i - 1].value;
    if (attrs->maxlength > 0) {
        p->size = attrs->maxlength;
    } else {
        if (most == INT64_MAX)
            return ndx_fail(err, NDX_E_OVERFLOW, "%s: the largest value %lld + 1 overflows",
                            p->op, (long long)most);
        p->size = most + 1 > attrs->minlength ? most + 1 : attrs->minlength;
    }
    return NDX_OK;
}

/* ---- run ---------------------------------------------------------------------------------- */

/* Writes the integer v as one element of dtype d (an integer dtype, float32 or float64). */
static void put_number(unsigned char *dst, ndx_dtype d, int64_t v) {
    switch (d) {
    case NDX_FLOAT32: { float f = (float)v; memcpy(dst, &f, 4); return; }
    case NDX_FLOAT64: { double f = (double)v; memcpy(dst, &f, 8); return; }
    default: break;
    }
    uint64_t u = (uint64_t)v; /* integers: the low bytes (little-endian), as a cast wraps */
    memcpy(dst, &u, ndx_dtype_size(d));
}

static void run(const count_plan *p, ndx_sparse_tensor *out) {
    int64_t *idx = out->indices.data, *shape = out->dense_shape.data;
    unsigned char *val = out->values.data;
    ndx_combine add;
    ndx_combine_find(NDX_SCATTER_ADD, p->wt, p->wsize, &add);
    int64_t o = -1, run_length = 0;
    for (int64_t i = 0; i < p->kept; i++) {
        const count_entry *e = &p->e[i];
        int starts = i == 0 || e->batch != p->e[i - 1].batch || e->value != p->e[i - 1].value;
        if (starts) {
            if (o >= 0 && !p->weights && !p->binary)
                put_number(val + (size_t)o * p->wsize, p->wt, run_length);
            o++;
            run_length = 0;
            if (p->out_rank == 1) {
                idx[o] = e->value;
            } else {
                idx[2 * o] = e->batch;
                idx[2 * o + 1] = e->value;
            }
            if (p->binary)
                put_number(val + (size_t)o * p->wsize, p->wt, 1);
            else if (p->weights)
                memset(val + (size_t)o * p->wsize, 0, p->wsize);
        }
        run_length++;
        if (p->weights && !p->binary)
            add.run(val + (size_t)o * p->wsize, p->weights + (size_t)e->pos * p->wsize, 1,
                    p->wsize);
    }
    if (o >= 0 && !p->weights && !p->binary)
        put_number(val + (size_t)o * p->wsize, p->wt, run_length);
    if (p->out_rank == 1) {
        shape[0] = p->size;
    } else {
        shape[0] = p->batches;
        shape[1] = p->size;
    }
}

/* Allocates the entries' scratch, plans, prepares the outputs and runs (unless only shaping). */
static ndx_status finish(ndx_call *b, count_plan *p, const ndx_count_attrs *attrs,
                         const void *values, ndx_dtype vt, int64_t n, const int64_t *rows,
                         int rank, int64_t per, int shape_only, ndx_sparse_tensor *out) {
    void *scratch = NULL;
    if ((uint64_t)n > SIZE_MAX / sizeof(count_entry))
        return ndx_fail(b->err, NDX_E_OVERFLOW, "%s: too many values", p->op);
    NDX_TRY(ndx_call_scratch(b, (size_t)n * sizeof(count_entry), 0, "count scratch", &scratch));
    p->e = scratch;
    ndx_status st = plan_entries(p, attrs, values, vt, n, rows, rank, per, b->err);
    ndx_sparse_tensor want;
    if (st == NDX_OK) {
        ndx_sparse_describe(&want, p->distinct, p->out_rank, p->wt, p->wsize);
        if (shape_only)
            *out = want;
        else
            st = ndx_sparse_prepare(&want, out, b, NULL, b->err);
    }
    if (st == NDX_OK && !shape_only) run(p, out);
    ndx_call_release(b, scratch);
    return st;
}

static ndx_status weights_of(count_plan *p, const ndx_tensor *weights, const ndx_tensor *values,
                             const char *op, ndx_error *err) {
    p->wt = weights ? weights->dtype : values->dtype;
    p->wsize = ndx_dtype_size(p->wt);
    int64_t wc = 0;
    if (weights) NDX_TRY(ndx_check_view(weights, op, &wc, NULL, err));
    p->weights = wc > 0 ? weights->data : NULL;
    return NDX_OK;
}

static ndx_status dense_count(const ndx_tensor *values, const ndx_tensor *weights,
                              const ndx_count_attrs *attrs, const ndx_options *opt,
                              int shape_only, ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, DENSE, opt, out, err));
    if (!values) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, DENSE ": values is NULL");
    int64_t n;
    NDX_TRY(ndx_check_view(values, DENSE ": values", &n, NULL, err));
    ndx_spec vs = ndx_spec_of(values), ws;
    if (weights) {
        NDX_TRY(ndx_check_view(weights, DENSE ": weights", NULL, NULL, err));
        ws = ndx_spec_of(weights);
    }
    ndx_sparse_spec ignored;
    NDX_TRY(ndx_dense_count_sparse_output_infer(&vs, weights ? &ws : NULL, attrs, &ignored, err));
    count_plan p;
    memset(&p, 0, sizeof p);
    p.op = DENSE;
    p.binary = attrs->binary_output != 0;
    p.out_rank = values->rank;
    p.batches = values->rank == 2 ? values->shape[0] : 1;
    NDX_TRY(weights_of(&p, weights, values, DENSE ": weights", err));
    int64_t per = values->rank == 2 ? values->shape[1] : n;
    return finish(&b, &p, attrs, values->data, values->dtype, n, NULL, 1, per ? per : 1,
                  shape_only, out);
}

ndx_status ndx_dense_count_sparse_output_shape(const ndx_tensor *values, const ndx_tensor *weights,
                                               const ndx_count_attrs *attrs,
                                               ndx_sparse_tensor *out, ndx_error *err) {
    return dense_count(values, weights, attrs, NULL, 1, out, err);
}

ndx_status ndx_dense_count_sparse_output(const ndx_tensor *values, const ndx_tensor *weights,
                                         const ndx_count_attrs *attrs, const ndx_options *opt,
                                         ndx_sparse_tensor *out, ndx_error *err) {
    return dense_count(values, weights, attrs, opt, 0, out, err);
}

static ndx_status sparse_count(const ndx_sparse_tensor *sp, const ndx_tensor *weights,
                               const ndx_count_attrs *attrs, const ndx_options *opt,
                               int shape_only, ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, SPARSE, opt, out, err));
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_check_all(sp, 1, SPARSE, SPARSE ": sp", 0, &v, err));
    ndx_sparse_spec ss = ndx_sparse_spec_of(sp), ignored;
    ndx_spec ws;
    if (weights) {
        NDX_TRY(ndx_check_view(weights, SPARSE ": weights", NULL, NULL, err));
        ws = ndx_spec_of(weights);
    }
    NDX_TRY(ndx_sparse_count_sparse_output_infer(&ss, weights ? &ws : NULL, attrs, &ignored, err));
    count_plan p;
    memset(&p, 0, sizeof p);
    p.op = SPARSE;
    p.binary = attrs->binary_output != 0;
    p.out_rank = v.rank == 1 ? 1 : 2;
    p.batches = v.rank == 1 ? 1 : v.dims[0];
    if (p.batches <= 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        SPARSE ": Cannot allocate %lld batches, is the dense shape too wide?",
                        (long long)p.batches);
    NDX_TRY(weights_of(&p, weights, &sp->values, SPARSE ": weights", err));
    /* the indices, read once into scratch and checked there */
    void *check = NULL;
    size_t bytes = ndx_sparse_open_bytes(sp, &v, 1, b.threads, 0);
    NDX_TRY(ndx_call_scratch(&b, bytes, 0, "index scratch", &check));
    ndx_status st = ndx_sparse_open_all(sp, 1, SPARSE ": sp", 0, b.threads, 0, &v, check, err);
    if (st == NDX_OK)
        st = finish(&b, &p, attrs, sp->values.data, sp->values.dtype, v.nnz, v.idx, v.rank, 1,
                    shape_only, out);
    ndx_call_release(&b, check);
    return st;
}

ndx_status ndx_sparse_count_sparse_output_shape(const ndx_sparse_tensor *sp,
                                                const ndx_tensor *weights,
                                                const ndx_count_attrs *attrs,
                                                ndx_sparse_tensor *out, ndx_error *err) {
    return sparse_count(sp, weights, attrs, NULL, 1, out, err);
}

ndx_status ndx_sparse_count_sparse_output(const ndx_sparse_tensor *sp, const ndx_tensor *weights,
                                          const ndx_count_attrs *attrs, const ndx_options *opt,
                                          ndx_sparse_tensor *out, ndx_error *err) {
    return sparse_count(sp, weights, attrs, opt, 0, out, err);
}
