/* select_where.c — select (TF's SelectV2: x where condition, else y, the three broadcast
 * together) and where (TF's Where: the coordinates of the true or non-zero elements); see
 * dense_ops.h. */
#include "core.h"
#include "dense_ops.h"

/* ---- select -------------------------------------------------------------------------------- */

/* Dim i of a rank-`rank` result for sp (1 where sp has fewer dims). */
static int64_t aligned(const ndx_spec *sp, int rank, int i) {
    int k = i - (rank - sp->rank);
    return k < 0 ? 1 : sp->shape[k];
}

static ndx_status select_shapes_conflict(const ndx_spec *c, const ndx_spec *x, const ndx_spec *y,
                                         ndx_error *err) {
    char cd[NDX_DIMS_TEXT], xd[NDX_DIMS_TEXT], yd[NDX_DIMS_TEXT];
    ndx_format_spec_dims(cd, sizeof cd, c);
    ndx_format_spec_dims(xd, sizeof xd, x);
    ndx_format_spec_dims(yd, sizeof yd, y);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    "select: condition has shape %s, x %s and y %s; they must broadcast: aligned "
                    "from the right, each dim equal to the others or 1", cd, xd, yd);
}

/* Infer once the three are valid specs. */
static ndx_status select_checked(const ndx_spec *c, const ndx_spec *x, const ndx_spec *y,
                                 ndx_spec *out, ndx_error *err) {
    if (c->dtype != NDX_BOOL)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "select: condition must be bool, not %s",
                        ndx_dtype_name(c->dtype));
    if (x->dtype != y->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "select: x is %s and y is %s; they must have the same dtype",
                        ndx_dtype_name(x->dtype), ndx_dtype_name(y->dtype));
    if (x->itemsize && y->itemsize && x->itemsize != y->itemsize)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "select: x has strings of width %zu and y of width %zu; they must be "
                        "equal", x->itemsize, y->itemsize);
    *out = *x;
    if (!out->itemsize) out->itemsize = y->itemsize;
    if (c->rank == NDX_UNKNOWN || x->rank == NDX_UNKNOWN || y->rank == NDX_UNKNOWN) {
        out->rank = NDX_UNKNOWN;
        return NDX_OK;
    }
    int rank = c->rank > x->rank ? c->rank : x->rank;
    if (y->rank > rank) rank = y->rank;
    out->rank = rank;
    for (int i = 0; i < rank; i++) {
        int64_t d = glue_broadcast_dim(aligned(c, rank, i), aligned(x, rank, i));
        if (d != -2) d = glue_broadcast_dim(d, aligned(y, rank, i));
        /* an unknown result beside a known dim other than 1 still has to agree with it */
        if (d == -2) return select_shapes_conflict(c, x, y, err);
        out->shape[i] = d;
    }
    return NDX_OK;
}

ndx_status ndx_select_infer(const ndx_spec *condition, const ndx_spec *x, const ndx_spec *y,
                            ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(condition, "select: condition", err));
    NDX_TRY(ndx_spec_check(x, "select: x", err));
    NDX_TRY(ndx_spec_check(y, "select: y", err));
    return select_checked(condition, x, y, out, err);
}

/* The output's dims and, for each of the three inputs, its byte stride along each (0 where it is
 * broadcast). */
typedef struct select_job {
    const unsigned char *in[3]; /* condition, x, y */
    unsigned char *out;
    size_t size; /* the element width of x, y and the output */
    int rank;
    int64_t dims[NDX_MAX_RANK];
    size_t stride[3][NDX_MAX_RANK];
} select_job;

static void select_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const select_job *j = ctx;
    int64_t at[NDX_MAX_RANK], rest = begin;
    size_t off[3] = {0, 0, 0};
    for (int d = j->rank - 1; d >= 0; d--) {
        at[d] = rest % j->dims[d];
        rest /= j->dims[d];
        for (int k = 0; k < 3; k++) off[k] += (size_t)at[d] * j->stride[k][d];
    }
    for (int64_t o = begin; o < end; o++) {
        int pick = j->in[0][off[0]] ? 1 : 2;
        memcpy(j->out + (size_t)o * j->size, j->in[pick] + off[pick], j->size);
        for (int d = j->rank - 1; d >= 0; d--) { /* the next output element */
            for (int k = 0; k < 3; k++) off[k] += j->stride[k][d];
            if (++at[d] < j->dims[d]) break;
            for (int k = 0; k < 3; k++) off[k] -= (size_t)at[d] * j->stride[k][d];
            at[d] = 0;
        }
    }
}

ndx_status ndx_select(const ndx_tensor *condition, const ndx_tensor *x, const ndx_tensor *y,
                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "select", opt, out, err));
    if (!condition || !x || !y)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "select: condition, x or y is NULL");
    NDX_TRY(ndx_check_view(condition, "select: condition", NULL, NULL, err));
    NDX_TRY(ndx_check_view(x, "select: x", NULL, NULL, err));
    NDX_TRY(ndx_check_view(y, "select: y", NULL, NULL, err));
    ndx_spec cs = ndx_spec_of(condition), xs = ndx_spec_of(x), ys = ndx_spec_of(y), os;
    NDX_TRY(select_checked(&cs, &xs, &ys, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    select_job j = {{condition->data, x->data, y->data}, out->data, x->itemsize, os.rank,
                    {0}, {{0}}};
    const ndx_tensor *ins[3] = {condition, x, y};
    for (int k = 0; k < 3; k++) {
        size_t stride = ins[k]->itemsize;
        for (int i = os.rank - 1; i >= 0; i--) {
            int kk = i - (os.rank - ins[k]->rank);
            int64_t d = kk < 0 ? 1 : ins[k]->shape[kk];
            j.stride[k][i] = d == 1 ? 0 : stride;
            stride *= (size_t)d;
        }
    }
    for (int i = 0; i < os.rank; i++) j.dims[i] = os.shape[i];
    int64_t n = ndx_tensor_count(out);
    ndx_parallel_for(c.threads, n, GLUE_GRAIN, select_range, &j);
    return NDX_OK;
}

/* ---- where --------------------------------------------------------------------------------- */

ndx_status ndx_where_infer(const ndx_spec *condition, ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(condition, "where: condition", err));
    if (ndx_dtype_kind_of(condition->dtype) == NDX_KIND_STRING)
        return ndx_fail(err, NDX_E_UNSUPPORTED, "where: dtype %s is not supported",
                        ndx_dtype_name(condition->dtype));
    int64_t dims[2] = {NDX_UNKNOWN, condition->rank};
    *out = ndx_spec_make(NDX_INT64, 2, dims);
    return NDX_OK;
}

/* 1 when element i is true or non-zero: floats by value (NaN is, -0 is not), the rest by
 * their bytes. */
static int nonzero(ndx_dtype dt, const unsigned char *p) {
    switch (dt) {
    case NDX_FLOAT16:
    case NDX_BFLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return (h & 0x7fff) != 0;
    }
    case NDX_FLOAT32:
    case NDX_COMPLEX64: {
        float v[2] = {0, 0};
        memcpy(v, p, dt == NDX_FLOAT32 ? 4 : 8);
        return v[0] != 0 || v[1] != 0;
    }
    case NDX_FLOAT64:
    case NDX_COMPLEX128: {
        double v[2] = {0, 0};
        memcpy(v, p, dt == NDX_FLOAT64 ? 8 : 16);
        return v[0] != 0 || v[1] != 0;
    }
    default: {
        size_t size = ndx_dtype_size(dt);
        for (size_t k = 0; k < size; k++)
            if (p[k]) return 1;
        return 0;
    }
    }
}

/* Chunk w of the input: how many it holds (pass 1), then their coordinates from row first[w]
 * on (pass 2). */
typedef struct where_job {
    const ndx_tensor *in;
    int64_t n;
    int chunks;
    int64_t count[NDX_MAX_WORKERS], first[NDX_MAX_WORKERS];
    int64_t *out; /* NULL in pass 1 */
} where_job;

static void where_chunk(void *ctx, int64_t begin, int64_t end, int w) {
    where_job *j = ctx;
    const ndx_tensor *t = j->in;
    const unsigned char *p = t->data;
    int rank = t->rank;
    int64_t found = 0, row = j->first[w];
    for (int64_t i = begin; i < end; i++) {
        if (!nonzero(t->dtype, p + (size_t)i * t->itemsize)) continue;
        found++;
        if (!j->out) continue;
        int64_t rest = i, *coords = j->out + (size_t)row++ * (size_t)rank;
        for (int d = rank - 1; d >= 0; d--) {
            coords[d] = rest % t->shape[d];
            rest /= t->shape[d];
        }
    }
    j->count[w] = found;
}

static void where_pass(where_job *j) {
    if (j->chunks > 1)
        ndx_pool_run(j->chunks, j->n, where_chunk, j);
    else
        where_chunk(j, 0, j->n, 0);
}

ndx_status ndx_where(const ndx_tensor *condition, const ndx_options *opt, ndx_tensor *out,
                     ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "where", opt, out, err));
    if (!condition) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "where: condition is NULL");
    int64_t n;
    NDX_TRY(ndx_check_view(condition, "where: condition", &n, NULL, err));
    ndx_spec cs = ndx_spec_of(condition), os;
    NDX_TRY(ndx_where_infer(&cs, &os, err));
    where_job j = {condition, n, ndx_parallel_workers(c.threads, n, GLUE_GRAIN), {0}, {0}, NULL};
    if (j.chunks < 1) j.chunks = 1;
    where_pass(&j);
    int64_t total = 0;
    for (int w = 0; w < j.chunks; w++) {
        j.first[w] = total;
        total += j.count[w];
    }
    os.shape[0] = total;
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    if (total == 0 || condition->rank == 0) return NDX_OK; /* no coordinates to write */
    j.out = out->data;
    where_pass(&j);
    return NDX_OK;
}
