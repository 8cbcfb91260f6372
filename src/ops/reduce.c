/* reduce.c — reduce_sum, reduce_mean, reduce_max and reduce_min (see dense_ops.h): each output
 * element reduced by one worker, over its reduced elements in row-major order, so results do not
 * depend on the thread count. Also the sum of a float product, reduce_sum(a * b), read from a
 * and b (the session's rewrite of that pair): each element's product rounded, then added in the
 * same order, so the same bits as the two ops. */
#include <complex.h>
#include <math.h>
#include <stdio.h>

#include "core.h"
#include "dense_ops.h"
#include "half.h"

const char *ndx_reduce_op_name(ndx_reduce_op op) {
    static const char *const names[NDX_REDUCE_COUNT] = {"reduce_sum", "reduce_mean",
                                                        "reduce_max", "reduce_min"};
    return (unsigned)op < NDX_REDUCE_COUNT ? names[op] : "reduce";
}

/* Which dims of a rank-`rank` input `axes` names (reduced[d] = 1), checked as TensorFlow's
 * reductions check them: each in [-rank, rank), none twice. */
static ndx_status reduced_dims(const char *name, const ndx_tensor *axes, int rank, int *reduced,
                               ndx_error *err) {
    for (int d = 0; d < rank; d++) reduced[d] = 0;
    int64_t n = ndx_tensor_count(axes);
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ndx_read_index(axes->data, axes->dtype, i);
        if (a < -rank || a >= rank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: axes[%lld] = %lld is out of "
                            "range for an input of rank %d (from %d to %d)", name, (long long)i,
                            (long long)a, rank, -rank, rank - 1);
        int d = (int)(a < 0 ? a + rank : a);
        if (reduced[d])
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: axes names dim %d twice "
                            "(axes[%lld] = %lld)", name, d, (long long)i, (long long)a);
        reduced[d] = 1;
    }
    return NDX_OK;
}

/* Sum and mean take every numeric dtype; max and min integers and floats (as TF's Max, Min). */
static int reducible(ndx_reduce_op op, ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT ||
           (k == NDX_KIND_COMPLEX && (op == NDX_REDUCE_SUM || op == NDX_REDUCE_MEAN));
}

ndx_status ndx_reduce_infer(ndx_reduce_op op, const ndx_spec *input, const ndx_spec *axes_spec,
                            const ndx_tensor *axes, int keep_dims, ndx_spec *out,
                            ndx_error *err) {
    if ((unsigned)op >= NDX_REDUCE_COUNT)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reduce: op = %d is not an ndx_reduce_op",
                        (int)op);
    const char *name = ndx_reduce_op_name(op);
    char what[32];
    snprintf(what, sizeof what, "%s: input", name);
    int64_t len;
    NDX_TRY(ndx_spec_check(input, what, err));
    NDX_TRY(glue_check_int_arg(name, "axes", axes_spec, 1, &len, err));
    if (!reducible(op, input->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: dtype %s is not supported", name,
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
    NDX_TRY(reduced_dims(name, axes, rank, reduced, err));
    for (int d = 0; d < rank; d++)
        if (!reduced[d]) dims[k++] = input->shape[d];
        else if (keep_dims) dims[k++] = 1;
    *out = ndx_spec_make(input->dtype, k, dims);
    out->itemsize = input->itemsize;
    return NDX_OK;
}

ndx_status ndx_reduce_sum_infer(const ndx_spec *input, const ndx_spec *axes_spec,
                                const ndx_tensor *axes, int keep_dims, ndx_spec *out,
                                ndx_error *err) {
    return ndx_reduce_infer(NDX_REDUCE_SUM, input, axes_spec, axes, keep_dims, out, err);
}

/* The input seen as kept dims (the output's, in order) and reduced dims, with their strides in
 * elements. */
typedef struct reduce_job {
    ndx_reduce_op op;
    ndx_dtype dtype;
    const unsigned char *in;
    const unsigned char *in2; /* reduce_sum(in * in2): the other factor, else NULL */
    unsigned char *out;
    int nk, nr;
    int64_t kdims[NDX_MAX_RANK], kstride[NDX_MAX_RANK];
    int64_t rdims[NDX_MAX_RANK], rstride[NDX_MAX_RANK];
    int64_t per_out; /* reduced elements per output element */
    int64_t step;    /* the stride of one output's reduced elements in order when that is one
                        stride (one reduced dim, or only trailing ones); 0: it is not */
} reduce_job;

/* Offset (in elements) of output element o's first input element. */
static int64_t base_of(const reduce_job *j, int64_t o) {
    int64_t off = 0;
    for (int d = j->nk - 1; d >= 0; d--) {
        off += (o % j->kdims[d]) * j->kstride[d];
        o /= j->kdims[d];
    }
    return off;
}

/* Steps idx (the position among the reduced dims) and the input offset off to the next reduced
 * element, odometer-wise. */
#define NEXT_REDUCED(j, idx, off)                                                               \
    for (int d = (j)->nr - 1; d >= 0; d--) {                                                    \
        (off) += (j)->rstride[d];                                                               \
        if (++(idx)[d] < (j)->rdims[d]) break;                                                  \
        (off) -= (idx)[d] * (j)->rstride[d];                                                    \
        (idx)[d] = 0;                                                                           \
    }

/* Folds output element o's inputs, in row-major order, into `acc` with COMBINE(acc, TO(v)),
 * reading elements of type T. */
#define REDUCE_ELEMENT(T, TO, COMBINE)                                                          \
    do {                                                                                        \
        int64_t idx[NDX_MAX_RANK] = {0}, off = base_of(j, o);                                   \
        for (int64_t r = 0; r < j->per_out; r++) {                                              \
            T v;                                                                                \
            memcpy(&v, j->in + (size_t)off * sizeof v, sizeof v);                               \
            COMBINE(acc, TO(v));                                                                \
            NEXT_REDUCED(j, idx, off);                                                          \
        }                                                                                       \
    } while (0)

/* One loop over output elements [begin, end): acc (of type A) starts at INIT, folds with
 * COMBINE, and the expression FINISH (of acc) is stored as a T. */
#define REDUCE_LOOP(T, A, INIT, TO, COMBINE, FINISH)                                            \
    for (int64_t o = begin; o < end; o++) {                                                     \
        A acc = INIT;                                                                           \
        REDUCE_ELEMENT(T, TO, COMBINE);                                                         \
        T r_ = FINISH;                                                                          \
        memcpy(j->out + (size_t)o * sizeof r_, &r_, sizeof r_);                                 \
    }

#define PLUS(acc, v) ((acc) += (v))
#define SAME(v) (v)
#define WIDE(v) ((uint64_t)(v))
/* Max and min keep the first of equal values; floats keep the first NaN they meet (TF's Max
 * and Min propagate NaN). */
#define INT_MAX_OF(acc, v) ((acc) = (v) > (acc) ? (v) : (acc))
#define INT_MIN_OF(acc, v) ((acc) = (v) < (acc) ? (v) : (acc))
#define FLOAT_MAX_OF(acc, v) ((acc) = !isnan(acc) && (isnan(v) || (v) > (acc)) ? (v) : (acc))
#define FLOAT_MIN_OF(acc, v) ((acc) = !isnan(acc) && (isnan(v) || (v) < (acc)) ? (v) : (acc))

typedef struct cf { float re, im; } cf;
typedef struct cd { double re, im; } cd;
#define CPLUS(acc, v) ((acc).re += (v).re, (acc).im += (v).im)

/* Integers: sums in uint64_t (wrapping), narrowed at the end; a mean divides the sum, which is
 * TF's: int8 .. int32 summed in int64, uint8 .. uint32 in uint64, 64-bit types wrapping in their
 * own, the quotient truncated toward zero; an empty mean is 0. */
#define MEAN_SIGNED (j->per_out ? (int64_t)acc / j->per_out : 0)
#define MEAN_UNSIGNED (j->per_out ? acc / (uint64_t)j->per_out : 0)
#define INT_CASES(T, MEAN, LOWEST, HIGHEST)                                                     \
    switch (j->op) {                                                                            \
    case NDX_REDUCE_SUM: REDUCE_LOOP(T, uint64_t, 0, WIDE, PLUS, (T)acc) break;                \
    case NDX_REDUCE_MEAN: REDUCE_LOOP(T, uint64_t, 0, WIDE, PLUS, (T)MEAN) break;              \
    case NDX_REDUCE_MAX: REDUCE_LOOP(T, T, LOWEST, SAME, INT_MAX_OF, acc) break;               \
    default: REDUCE_LOOP(T, T, HIGHEST, SAME, INT_MIN_OF, acc) break;                          \
    }

/* Floats in A (float for float16, bfloat16 and float32), rounded once at the end; an empty mean
 * is NaN, an empty max -inf and an empty min +inf (TF's identities). */
#define FLOAT_CASES(T, A, TO, FROM)                                                             \
    switch (j->op) {                                                                            \
    case NDX_REDUCE_SUM: REDUCE_LOOP(T, A, 0, TO, PLUS, FROM(acc)) break;                       \
    case NDX_REDUCE_MEAN:                                                                       \
        REDUCE_LOOP(T, A, 0, TO, PLUS, FROM(j->per_out ? acc / (A)j->per_out : (A)NAN)) break;  \
    case NDX_REDUCE_MAX: REDUCE_LOOP(T, A, -INFINITY, TO, FLOAT_MAX_OF, FROM(acc)) break;       \
    default: REDUCE_LOOP(T, A, INFINITY, TO, FLOAT_MIN_OF, FROM(acc)) break;                    \
    }

/* Complex: sum, or mean as C's complex division by the count (C++'s std::complex, which TF's
 * Mean uses, divides the same way); an empty mean is 0, as TF's CPU kernel gives. */
static cf cf_mean(cf acc, int64_t n) {
    if (!n) return (cf){0, 0};
    float _Complex q = (acc.re + acc.im * _Complex_I) / (float _Complex)(float)n;
    return (cf){crealf(q), cimagf(q)};
}

static cd cd_mean(cd acc, int64_t n) {
    if (!n) return (cd){0, 0};
    double _Complex q = (acc.re + acc.im * _Complex_I) / (double _Complex)(double)n;
    return (cd){creal(q), cimag(q)};
}

#define COMPLEX_CASES(T, MEAN)                                                                  \
    if (j->op == NDX_REDUCE_SUM) {                                                              \
        REDUCE_LOOP(T, T, ((T){0, 0}), SAME, CPLUS, acc)                                        \
    } else {                                                                                    \
        REDUCE_LOOP(T, T, ((T){0, 0}), SAME, CPLUS, MEAN(acc, j->per_out))                      \
    }

/* Float sums and means whose reduced elements are one stride apart (one axis, or trailing dims:
 * j->step), LANES outputs at a time: each output still adds its elements one by one in order
 * from 0 (the same bits as REDUCE_LOOP), but the LANES chains are independent, so the adds
 * overlap instead of each waiting for the last (a row of 64 takes 64 adds' latency one at a
 * time). Returns the first output it did not do. */
enum { LANES = 8 };
/* The element at byte offset `at`: in's, or (PRODUCT) in's times in2's, rounded to T. */
#define ELEMENT_OF(T, at) (memcpy(&v_, j->in + (at), sizeof v_), v_)
#define PRODUCT_OF(T, at)                                                                       \
    (memcpy(&v_, j->in + (at), sizeof v_), memcpy(&w_, j->in2 + (at), sizeof w_), (T)(v_ * w_))
#define SUM_LANES(T, LOAD)                                                                      \
    do {                                                                                        \
        const int64_t n_ = j->per_out;                                                          \
        const size_t step_ = (size_t)j->step * sizeof(T);                                 \
        for (; o + LANES <= end; o += LANES) {                                                  \
            size_t p_[LANES];                                                                   \
            T acc_[LANES];                                                                      \
            for (int k = 0; k < LANES; k++) {                                                   \
                p_[k] = (size_t)base_of(j, o + k) * sizeof(T);                                  \
                acc_[k] = 0;                                                                    \
            }                                                                                   \
            for (int64_t r = 0; r < n_; r++)                                                    \
                for (int k = 0; k < LANES; k++) {                                               \
                    T v_, w_;                                                                   \
                    (void)w_;                                                                   \
                    acc_[k] += LOAD(T, p_[k] + (size_t)r * step_);                              \
                }                                                                               \
            for (int k = 0; k < LANES; k++) {                                                   \
                T r_ = j->op == NDX_REDUCE_MEAN ? acc_[k] / (T)n_ : acc_[k];                    \
                memcpy(j->out + (size_t)(o + k) * sizeof r_, &r_, sizeof r_);                   \
            }                                                                                   \
        }                                                                                       \
    } while (0)

static int64_t sum_lanes(const reduce_job *j, int64_t o, int64_t end) {
    if (j->step == 0 || j->per_out == 0 ||
        (j->op != NDX_REDUCE_SUM && j->op != NDX_REDUCE_MEAN))
        return o;
    if (j->in2 && j->dtype == NDX_FLOAT32)
        SUM_LANES(float, PRODUCT_OF);
    else if (j->in2)
        SUM_LANES(double, PRODUCT_OF);
    else if (j->dtype == NDX_FLOAT32)
        SUM_LANES(float, ELEMENT_OF);
    else if (j->dtype == NDX_FLOAT64)
        SUM_LANES(double, ELEMENT_OF);
    return o;
}

/* reduce_sum(in * in2) over output elements [begin, end) the lanes left: REDUCE_ELEMENT's walk,
 * each element the rounded product. */
#define PRODUCT_LOOP(T)                                                                         \
    for (int64_t o = begin; o < end; o++) {                                                     \
        T acc = 0;                                                                              \
        int64_t idx[NDX_MAX_RANK] = {0}, off = base_of(j, o);                                   \
        for (int64_t r = 0; r < j->per_out; r++) {                                              \
            T v, w;                                                                             \
            memcpy(&v, j->in + (size_t)off * sizeof v, sizeof v);                               \
            memcpy(&w, j->in2 + (size_t)off * sizeof w, sizeof w);                              \
            acc += (T)(v * w);                                                                  \
            NEXT_REDUCED(j, idx, off);                                                          \
        }                                                                                       \
        memcpy(j->out + (size_t)o * sizeof acc, &acc, sizeof acc);                              \
    }

static void reduce_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const reduce_job *j = ctx;
    begin = sum_lanes(j, begin, end);
    if (j->in2) {
        if (j->dtype == NDX_FLOAT32) {
            PRODUCT_LOOP(float)
        } else {
            PRODUCT_LOOP(double)
        }
        return;
    }
    switch (j->dtype) {
    case NDX_INT8: INT_CASES(int8_t, MEAN_SIGNED, INT8_MIN, INT8_MAX) break;
    case NDX_INT16: INT_CASES(int16_t, MEAN_SIGNED, INT16_MIN, INT16_MAX) break;
    case NDX_INT32: INT_CASES(int32_t, MEAN_SIGNED, INT32_MIN, INT32_MAX) break;
    case NDX_INT64: INT_CASES(int64_t, MEAN_SIGNED, INT64_MIN, INT64_MAX) break;
    case NDX_UINT8: INT_CASES(uint8_t, MEAN_UNSIGNED, 0, UINT8_MAX) break;
    case NDX_UINT16: INT_CASES(uint16_t, MEAN_UNSIGNED, 0, UINT16_MAX) break;
    case NDX_UINT32: INT_CASES(uint32_t, MEAN_UNSIGNED, 0, UINT32_MAX) break;
    case NDX_UINT64: INT_CASES(uint64_t, MEAN_UNSIGNED, 0, UINT64_MAX) break;
    case NDX_FLOAT16: FLOAT_CASES(uint16_t, float, ndx_half_to_float, ndx_float_to_half) break;
    case NDX_BFLOAT16: FLOAT_CASES(uint16_t, float, ndx_bf16_to_float, ndx_float_to_bf16) break;
    case NDX_FLOAT32: FLOAT_CASES(float, float, SAME, SAME) break;
    case NDX_FLOAT64: FLOAT_CASES(double, double, SAME, SAME) break;
    case NDX_COMPLEX64: COMPLEX_CASES(cf, cf_mean) break;
    default: COMPLEX_CASES(cd, cd_mean) break;
    }
}

/* ndx_reduce, or with `other` (input's layout, float32 or float64, op SUM) the sum of the
 * products input * other. */
static ndx_status reduce(ndx_reduce_op op, const ndx_tensor *input, const ndx_tensor *other,
                         const ndx_tensor *axes, int keep_dims, const ndx_options *opt,
                         ndx_tensor *out, ndx_error *err) {
    const char *name = ndx_reduce_op_name(op);
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, name, opt, out, err));
    if (!input || !axes)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: input or axes is NULL", name);
    char what[32];
    size_t bytes;
    snprintf(what, sizeof what, "%s: input", name);
    NDX_TRY(ndx_tensor_check(input, what, NULL, &bytes, err));
    if (other) {
        snprintf(what, sizeof what, "%s: the other factor", name);
        NDX_TRY(ndx_tensor_check(other, what, NULL, NULL, err));
        if (op != NDX_REDUCE_SUM || !ndx_same_layout(input, other) ||
            (input->dtype != NDX_FLOAT32 && input->dtype != NDX_FLOAT64))
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: the factors of a product must be "
                            "float32 or float64 tensors of one shape", name);
    }
    snprintf(what, sizeof what, "%s: axes", name);
    NDX_TRY(ndx_tensor_check(axes, what, NULL, NULL, err));
    ndx_spec is = ndx_spec_of(input), as = ndx_spec_of(axes), os = is;
    NDX_TRY(ndx_reduce_infer(op, &is, &as, axes, keep_dims, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    int reduced[NDX_MAX_RANK];
    reduced_dims(name, axes, input->rank, reduced, NULL); /* checked by infer */
    reduce_job j = {op, input->dtype, input->data, other ? other->data : NULL, out->data, 0, 0, {0}, {0}, {0}, {0}, 1, 0};
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
    int trailing = 1; /* the reduced dims are the last ones: one output's inputs are contiguous */
    for (int d = 0; d < input->rank; d++) trailing &= reduced[d] == (d >= input->rank - j.nr);
    j.step = j.nr == 1 ? j.rstride[0] : trailing ? 1 : 0;
    int64_t n = ndx_tensor_count(out);
    if (j.per_out == 1 && other) { /* one element each: the products themselves */
        int64_t count = ndx_tensor_count(input);
        for (int64_t i = 0; i < count && input->dtype == NDX_FLOAT32; i++)
            ((float *)out->data)[i] = ((const float *)input->data)[i] *
                                      ((const float *)other->data)[i];
        for (int64_t i = 0; i < count && input->dtype == NDX_FLOAT64; i++)
            ((double *)out->data)[i] = ((const double *)input->data)[i] *
                                       ((const double *)other->data)[i];
        return NDX_OK;
    }
    if (j.per_out == 1) { /* one element each (no axes, or only dims of 1): the input itself */
        if (bytes && out->data != input->data) memmove(out->data, input->data, bytes);
        return NDX_OK;
    }
    int64_t grain = j.per_out > 0 && j.per_out < GLUE_GRAIN ? GLUE_GRAIN / j.per_out : 1;
    ndx_parallel_for(c.threads, n, grain, reduce_range, &j);
    return NDX_OK;
}

ndx_status ndx_reduce(ndx_reduce_op op, const ndx_tensor *input, const ndx_tensor *axes,
                      int keep_dims, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return reduce(op, input, NULL, axes, keep_dims, opt, out, err);
}

ndx_status ndx_reduce_sum_of_products(const ndx_tensor *a, const ndx_tensor *b,
                                      const ndx_tensor *axes, int keep_dims,
                                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return reduce(NDX_REDUCE_SUM, a, b, axes, keep_dims, opt, out, err);
}

ndx_status ndx_reduce_sum(const ndx_tensor *input, const ndx_tensor *axes, int keep_dims,
                          const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return ndx_reduce(NDX_REDUCE_SUM, input, axes, keep_dims, opt, out, err);
}
