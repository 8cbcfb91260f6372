/* glue_reduce.c — reduce_sum (see glue.h): each output element summed by one worker, over its
 * reduced elements in row-major order, so results do not depend on the thread count. */
#include "core.h"
#include "glue.h"
#include "half.h"

/* Which dims of a rank-`rank` input `axes` names (reduced[d] = 1), checked as TensorFlow's Sum
 * checks them: each in [-rank, rank), none twice. */
static ndx_status reduced_dims(const ndx_tensor *axes, int rank, int *reduced, ndx_error *err) {
    for (int d = 0; d < rank; d++) reduced[d] = 0;
    int64_t n = ndx_tensor_count(axes);
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ndx_read_index(axes->data, axes->dtype, i);
        if (a < -rank || a >= rank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reduce_sum: axes[%lld] = %lld is out of "
                            "range for an input of rank %d (from %d to %d)", (long long)i,
                            (long long)a, rank, -rank, rank - 1);
        int d = (int)(a < 0 ? a + rank : a);
        if (reduced[d])
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reduce_sum: axes names dim %d twice "
                            "(axes[%lld] = %lld)", d, (long long)i, (long long)a);
        reduced[d] = 1;
    }
    return NDX_OK;
}

static int summable(ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT ||
           k == NDX_KIND_COMPLEX;
}

ndx_status ndx_reduce_sum_infer(const ndx_spec *input, const ndx_spec *axes_spec,
                                const ndx_tensor *axes, int keep_dims, ndx_spec *out,
                                ndx_error *err) {
    int64_t len;
    NDX_TRY(ndx_spec_check(input, "reduce_sum: input", err));
    NDX_TRY(glue_check_int_arg("reduce_sum", "axes", axes_spec, 1, &len, err));
    if (!summable(input->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED, "reduce_sum: dtype %s is not supported",
                        ndx_dtype_name(input->dtype));
    int rank = input->rank;
    int64_t dims[NDX_MAX_RANK];
    *out = ndx_spec_make(input->dtype, NDX_UNKNOWN, NULL);
    out->itemsize = input->itemsize;
    if (rank == NDX_UNKNOWN) return NDX_OK;
    if (!axes) {
        /* Which dims go is not known: with keep_dims every dim may be 1; without, the rank is
         * known when the number of axes is (no axis may come twice). */
        int kept = keep_dims ? rank : len != NDX_UNKNOWN && len <= rank ? rank - (int)len : -1;
        for (int d = 0; d < kept; d++) dims[d] = NDX_UNKNOWN;
        if (kept >= 0) *out = ndx_spec_make(input->dtype, kept, dims);
        out->itemsize = input->itemsize;
        return NDX_OK;
    }
    int reduced[NDX_MAX_RANK], k = 0;
    NDX_TRY(reduced_dims(axes, rank, reduced, err));
    for (int d = 0; d < rank; d++)
        if (!reduced[d]) dims[k++] = input->shape[d];
        else if (keep_dims) dims[k++] = 1;
    *out = ndx_spec_make(input->dtype, k, dims);
    out->itemsize = input->itemsize;
    return NDX_OK;
}

/* The input seen as kept dims (the output's, in order) and reduced dims, with their strides in
 * elements. */
typedef struct sum_job {
    ndx_dtype dtype;
    size_t size;
    const unsigned char *in;
    unsigned char *out;
    int nk, nr;
    int64_t kdims[NDX_MAX_RANK], kstride[NDX_MAX_RANK];
    int64_t rdims[NDX_MAX_RANK], rstride[NDX_MAX_RANK];
    int64_t per_out; /* reduced elements per output element */
} sum_job;

/* Offset (in elements) of output element o's first input element. */
static int64_t base_of(const sum_job *j, int64_t o) {
    int64_t off = 0;
    for (int d = j->nk - 1; d >= 0; d--) {
        off += (o % j->kdims[d]) * j->kstride[d];
        o /= j->kdims[d];
    }
    return off;
}

/* Sums output element o's inputs into ACC (type A) from elements of type T read by TO. */
#define SUM_ELEMENT(T, A, TO, ADD)                                                              \
    do {                                                                                        \
        int64_t idx[NDX_MAX_RANK] = {0}, off = base_of(j, o);                                   \
        for (int64_t r = 0; r < j->per_out; r++) {                                              \
            T v;                                                                                \
            memcpy(&v, j->in + (size_t)off * sizeof v, sizeof v);                               \
            ADD(acc, TO(v));                                                                    \
            for (int d = j->nr - 1; d >= 0; d--) { /* the next reduced element */               \
                off += j->rstride[d];                                                           \
                if (++idx[d] < j->rdims[d]) break;                                              \
                off -= idx[d] * j->rstride[d];                                                  \
                idx[d] = 0;                                                                     \
            }                                                                                   \
        }                                                                                       \
    } while (0)

#define PLUS(acc, v) ((acc) += (v))
#define SAME(v) (v)
#define WIDE(v) ((uint64_t)(v))

typedef struct cf { float re, im; } cf;
typedef struct cd { double re, im; } cd;
#define CPLUS(acc, v) ((acc).re += (v).re, (acc).im += (v).im)

/* Integers in uint64_t (wrapping), narrowed at the end. */
#define SUM_INT(T)                                                                              \
    for (int64_t o = begin; o < end; o++) {                                                     \
        uint64_t acc = 0;                                                                       \
        SUM_ELEMENT(T, uint64_t, WIDE, PLUS);                                                   \
        T r = (T)acc;                                                                           \
        memcpy(j->out + (size_t)o * sizeof r, &r, sizeof r);                                    \
    }

#define SUM_FLOAT(T, A, TO, FROM)                                                               \
    for (int64_t o = begin; o < end; o++) {                                                     \
        A acc = 0;                                                                              \
        SUM_ELEMENT(T, A, TO, PLUS);                                                            \
        T r = FROM(acc);                                                                        \
        memcpy(j->out + (size_t)o * sizeof r, &r, sizeof r);                                    \
    }

#define SUM_COMPLEX(T)                                                                          \
    for (int64_t o = begin; o < end; o++) {                                                     \
        T acc = {0, 0};                                                                         \
        SUM_ELEMENT(T, T, SAME, CPLUS);                                                         \
        memcpy(j->out + (size_t)o * sizeof acc, &acc, sizeof acc);                              \
    }

static void sum_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const sum_job *j = ctx;
    switch (j->dtype) {
    case NDX_INT8: SUM_INT(int8_t) break;
    case NDX_INT16: SUM_INT(int16_t) break;
    case NDX_INT32: SUM_INT(int32_t) break;
    case NDX_INT64: SUM_INT(int64_t) break;
    case NDX_UINT8: SUM_INT(uint8_t) break;
    case NDX_UINT16: SUM_INT(uint16_t) break;
    case NDX_UINT32: SUM_INT(uint32_t) break;
    case NDX_UINT64: SUM_INT(uint64_t) break;
    case NDX_FLOAT16: SUM_FLOAT(uint16_t, float, ndx_half_to_float, ndx_float_to_half) break;
    case NDX_BFLOAT16: SUM_FLOAT(uint16_t, float, ndx_bf16_to_float, ndx_float_to_bf16) break;
    case NDX_FLOAT32: SUM_FLOAT(float, float, SAME, SAME) break;
    case NDX_FLOAT64: SUM_FLOAT(double, double, SAME, SAME) break;
    case NDX_COMPLEX64: SUM_COMPLEX(cf) break;
    default: SUM_COMPLEX(cd) break;
    }
}

ndx_status ndx_reduce_sum(const ndx_tensor *input, const ndx_tensor *axes, int keep_dims,
                          const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "reduce_sum", opt, out, err));
    if (!input || !axes)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reduce_sum: input or axes is NULL");
    size_t bytes;
    NDX_TRY(ndx_tensor_check(input, "reduce_sum: input", NULL, &bytes, err));
    NDX_TRY(ndx_tensor_check(axes, "reduce_sum: axes", NULL, NULL, err));
    ndx_spec is = ndx_spec_of(input), as = ndx_spec_of(axes), os;
    NDX_TRY(ndx_reduce_sum_infer(&is, &as, axes, keep_dims, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    int reduced[NDX_MAX_RANK];
    reduced_dims(axes, input->rank, reduced, NULL); /* checked by infer */
    sum_job j = {input->dtype, input->itemsize, input->data, out->data, 0, 0, {0}, {0}, {0}, {0}, 1};
    int64_t stride = 1;
    for (int d = input->rank - 1; d >= 0; d--) {
        int64_t dim = input->shape[d];
        if (reduced[d]) {
            j.rdims[j.nr] = dim;
            j.rstride[j.nr++] = stride;
            j.per_out *= dim;
        } else {
            j.kdims[j.nk] = dim;
            j.kstride[j.nk++] = stride;
        }
        stride *= dim;
    }
    /* Collected innermost first: turn both lists to row-major order. */
    for (int a = 0, b = j.nr - 1; a < b; a++, b--) {
        int64_t t = j.rdims[a]; j.rdims[a] = j.rdims[b]; j.rdims[b] = t;
        t = j.rstride[a]; j.rstride[a] = j.rstride[b]; j.rstride[b] = t;
    }
    for (int a = 0, b = j.nk - 1; a < b; a++, b--) {
        int64_t t = j.kdims[a]; j.kdims[a] = j.kdims[b]; j.kdims[b] = t;
        t = j.kstride[a]; j.kstride[a] = j.kstride[b]; j.kstride[b] = t;
    }
    int64_t n = ndx_tensor_count(out);
    if (j.per_out == 1) { /* nothing summed (no axes, or only dims of 1): the input itself */
        if (bytes && out->data != input->data) memmove(out->data, input->data, bytes);
        return NDX_OK;
    }
    int64_t grain = j.per_out > 0 && j.per_out < GLUE_GRAIN ? GLUE_GRAIN / j.per_out : 1;
    ndx_parallel_for(c.threads, n, grain, sum_range, &j);
    return NDX_OK;
}
