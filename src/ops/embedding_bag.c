/* embedding_bag.c — ndx_embedding_bag (ndx.h section 5h): TensorFlow's embedding_lookup_sparse
 * and PyTorch's EmbeddingBag in one pass over the ids.
 *
 *   infer  dtypes and ranks on specs;
 *   check  every id read once into int64 scratch and checked against the table's rows, the
 *          bags (sorted segment ids or offsets) read and checked too, before anything is
 *          written;
 *   run    the segment engine's owners: each worker owns a contiguous range of bags and
 *          combines each bag's rows in id order, so the bits are the same at any thread count.
 *          Without weights or max_norm a bag is TensorFlow's sparse_segment_sum/_mean/_sqrt_n of
 *          its rows (segment_sparse_sum, the same bits); otherwise every row is clipped, scaled
 *          by its weight and added in order in the accumulator type (float for float16 and
 *          bfloat16), then divided with div_no_nan and rounded once. */
#include <math.h>
#include <stdio.h>

#include "embedding_bag_plan.h"
#include "half.h"

#define BAG_WORKER_BYTES ((int64_t)1 << 16)

static int is_float(ndx_dtype d) {
    return d == NDX_FLOAT16 || d == NDX_BFLOAT16 || d == NDX_FLOAT32 || d == NDX_FLOAT64;
}

static ndx_status check_index(const ndx_spec *s, const char *what, ndx_error *err) {
    if (s->dtype != NDX_INT32 && s->dtype != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s must be int32 or int64, not %s",
                        what, ndx_dtype_name(s->dtype));
    if (s->rank >= 0 && s->rank != 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s must be 1-D, not of rank %d", what,
                        s->rank);
    return NDX_OK;
}

/* Two dims that must agree, where both are known. */
static ndx_status check_same(int64_t a, int64_t b, const char *what, ndx_error *err) {
    if (a >= 0 && b >= 0 && a != b)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": %s has %lld elements but ids has %lld", what, (long long)a,
                        (long long)b);
    return NDX_OK;
}

static int64_t dim0(const ndx_spec *s) { return s->rank >= 1 ? s->shape[0] : NDX_UNKNOWN; }

ndx_status ndx_embedding_bag_infer(const ndx_spec *params, const ndx_spec *ids,
                                   const ndx_spec *bags, const ndx_spec *weights,
                                   const ndx_embedding_bag_attrs *attrs, ndx_spec *out,
                                   ndx_error *err) {
    ndx_error_clear(err);
    if (!params || !ids || !bags || !attrs || !out)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": params, ids, bags, attrs or out is NULL");
    ndx_bag_form form = attrs->form;
    ndx_segment_op combiner = attrs->combiner;
    if (combiner != NDX_SEGMENT_SUM && combiner != NDX_SEGMENT_MEAN &&
        combiner != NDX_SEGMENT_SQRT_N)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": combiner must be sum, mean or sqrt_n, not %s",
                        ndx_segment_op_name(combiner));
    if (form != NDX_BAGS_SEGMENT_IDS && form != NDX_BAGS_OFFSETS)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": form %d is not an ndx_bag_form",
                        (int)form);
    if (isnan(attrs->max_norm))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": max_norm is NaN");
    if (form == NDX_BAGS_SEGMENT_IDS && attrs->num_bags < NDX_SEGMENTS_FROM_IDS)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": num_bags = %lld is negative",
                        (long long)attrs->num_bags);
    NDX_TRY(ndx_spec_check_as(params, OP, "params", err));
    NDX_TRY(ndx_spec_check_as(ids, OP, "ids", err));
    NDX_TRY(ndx_spec_check_as(bags, OP, "bags", err));
    if (!is_float(params->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED, OP ": params of dtype %s is not supported "
                        "(float16, bfloat16, float32, float64)", ndx_dtype_name(params->dtype));
    if (params->rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": params must be at least 1-D");
    NDX_TRY(check_index(ids, "ids", err));
    const char *bag_name = form == NDX_BAGS_OFFSETS ? "offsets" : "segment_ids";
    NDX_TRY(check_index(bags, bag_name, err));
    if (form == NDX_BAGS_SEGMENT_IDS) NDX_TRY(check_same(dim0(bags), dim0(ids), bag_name, err));
    if (weights) {
        NDX_TRY(ndx_spec_check_as(weights, OP, "weights", err));
        if (weights->dtype != params->dtype)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": weights must have params' dtype %s, not %s",
                            ndx_dtype_name(params->dtype), ndx_dtype_name(weights->dtype));
        if (weights->rank >= 0 && weights->rank != 1)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": weights must be 1-D, not of rank %d", weights->rank);
        NDX_TRY(check_same(dim0(weights), dim0(ids), "weights", err));
    }
    *out = *params;
    if (params->rank > 0)
        out->shape[0] = form == NDX_BAGS_OFFSETS ? dim0(bags)
                        : attrs->num_bags >= 0 ? attrs->num_bags
                                               : NDX_UNKNOWN;
    return NDX_OK;
}

/* ---- plan and check ------------------------------------------------------------------------ */

ndx_status embedding_bag_plan(ndx_call *c, const ndx_tensor *params, const ndx_tensor *ids,
                              const ndx_tensor *bags, const ndx_tensor *weights,
                              const ndx_embedding_bag_attrs *attrs, bag_plan *p) {
    memset(p, 0, sizeof *p);
    if (!params || !ids || !bags)
        return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT, OP ": params, ids or bags is NULL");
    NDX_TRY(ndx_tensor_check_as(params, OP, "params", NULL, NULL, c->err));
    NDX_TRY(ndx_tensor_check_as(ids, OP, "ids", NULL, NULL, c->err));
    NDX_TRY(ndx_tensor_check_as(bags, OP, "bags", NULL, NULL, c->err));
    if (weights) NDX_TRY(ndx_tensor_check_as(weights, OP, "weights", NULL, NULL, c->err));
    ndx_spec ps, is, bs, ws, os;
    ndx_spec_fill(&ps, params);
    ndx_spec_fill(&is, ids);
    ndx_spec_fill(&bs, bags);
    if (weights) ndx_spec_fill(&ws, weights);
    NDX_TRY(ndx_embedding_bag_infer(&ps, &is, &bs, weights ? &ws : NULL, attrs, &os, c->err));
    if (os.shape[0] < 0) os.shape[0] = 0; /* segment ids: known after the check */
    p->want = ndx_view_of_spec(&os);
    p->params = params->data;
    p->vocab = params->shape[0];
    p->n = ids->shape[0];
    ndx_dims_product(os.rank - 1, os.shape + 1, &p->slice);
    p->row_bytes = (size_t)p->slice * os.itemsize;
    p->acc_bytes = ((size_t)p->slice * segment_accumulator_size(os.dtype) + 63) / 64 * 64;
    p->ids = ids;
    p->bags = bags;
    p->weights = weights;
    p->form = attrs->form;
    p->combiner = attrs->combiner;
    p->max_norm = attrs->max_norm;
    p->num_bags = attrs->num_bags;
    p->plain = !weights && attrs->max_norm < 0;
    return NDX_OK;
}

static ndx_status fail_at(ndx_error *err, const char *what, int64_t i, int64_t v,
                          const char *tail) {
    return ndx_fail(err, NDX_E_OUT_OF_RANGE, OP ": %s[%lld] = %lld %s", what, (long long)i,
                    (long long)v, tail);
}

/* ids in [0, vocab) into src; the bags into `bags` (segment ids: >= 0, non-decreasing;
 * offsets: starting at 0, non-decreasing, at most n) and the output's row count. */
ndx_status embedding_bag_check(ndx_call *c, bag_plan *p, int64_t *src, int64_t *bags) {
    char tail[96];
    for (int64_t i = 0; i < p->n; i++) {
        int64_t v = ndx_read_index(p->ids->data, p->ids->dtype, i);
        if ((uint64_t)v >= (uint64_t)p->vocab) {
            snprintf(tail, sizeof tail, "is not in [0, %lld)", (long long)p->vocab);
            return fail_at(c->err, "ids", i, v, tail);
        }
        src[i] = v;
    }
    int64_t count = p->bags->shape[0], prev = 0;
    const char *what = p->form == NDX_BAGS_OFFSETS ? "offsets" : "segment_ids";
    for (int64_t i = 0; i < count; i++) {
        int64_t v = ndx_read_index(p->bags->data, p->bags->dtype, i);
        if (v < 0) return fail_at(c->err, what, i, v, "is negative");
        if (v < prev)
            return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT,
                            OP ": %s are not increasing: %s[%lld] = %lld after %lld", what, what,
                            (long long)i, (long long)v, (long long)prev);
        if (p->form == NDX_BAGS_OFFSETS && i == 0 && v != 0)
            return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT,
                            OP ": offsets[0] = %lld, but the first bag must start at 0",
                            (long long)v);
        if (p->form == NDX_BAGS_OFFSETS && v > p->n) {
            snprintf(tail, sizeof tail, "is past the %lld ids", (long long)p->n);
            return fail_at(c->err, what, i, v, tail);
        }
        bags[i] = prev = v;
    }
    if (p->form == NDX_BAGS_SEGMENT_IDS) {
        if (count > 0 && prev == INT64_MAX)
            return ndx_fail(c->err, NDX_E_OVERFLOW, OP ": segment_ids[%lld] = %lld leaves no "
                            "room for an output row count", (long long)(count - 1),
                            (long long)prev);
        p->want.shape[0] = count > 0 ? prev + 1 : 0;
        if (p->num_bags >= 0) {
            if (p->want.shape[0] > p->num_bags)
                return ndx_fail(c->err, NDX_E_OUT_OF_RANGE,
                                OP ": segment ids must be < num_bags: segment_ids[%lld] = %lld, "
                                "num_bags = %lld",
                                (long long)(count - 1), (long long)prev, (long long)p->num_bags);
            p->want.shape[0] = p->num_bags;
        }
    }
    NDX_TRY(ndx_check_output_size(OP, p->want.rank, p->want.shape, p->want.itemsize, c->err));
    int64_t out_rows = p->want.shape[0];
    int64_t rb = p->row_bytes > 0 ? (int64_t)p->row_bytes : 1;
    p->grain = BAG_WORKER_BYTES / rb;
    if (p->grain < 1) p->grain = 1;
    p->workers = ndx_parallel_workers(c->threads, out_rows, p->grain);
    return NDX_OK;
}

/* ---- run ----------------------------------------------------------------------------------- */

typedef struct bag_job {
    const bag_plan *p;
    const int64_t *src, *bags;
    unsigned char *out;
    unsigned char *scratch; /* per worker: two accumulator rows */
} bag_job;

/* The weighted or clipped combine, in the accumulator type A of storage type T: each row of
 * the bag clipped as TensorFlow's clip_by_norm (x * max_norm / max(||row||, max_norm)), scaled
 * by its weight and added in order; then div_no_nan by the weights' sum (MEAN) or the square
 * root of their squares' sum (SQRT_N). */
#define DEFINE_BAG(tag, T, A, LOAD, STORE, SQRT)                                                \
    static void tag##_bag(const bag_plan *p, const int64_t *src, int64_t first, int64_t n,      \
                          unsigned char *out, A *acc) {                                         \
        const T *w = p->weights ? (const T *)p->weights->data : NULL;                           \
        int64_t d = p->slice;                                                                   \
        A wsum = 0, mn = LOAD(STORE((A)p->max_norm)); /* TF: max_norm in T */          \
        for (int64_t k = 0; k < d; k++) acc[k] = 0;                                             \
        for (int64_t q = first; q < first + n; q++) {                                           \
            const T *row = (const T *)segment_fetch_row(p->params, p->row_bytes, src, q, p->n); \
            A wq = w ? LOAD(w[q]) : (A)1;                                                       \
            A den = 0;                                                                          \
            if (p->max_norm >= 0) {                                                             \
                A l2 = 0;                                                                       \
                for (int64_t k = 0; k < d; k++) l2 += LOAD(row[k]) * LOAD(row[k]);              \
                A norm = l2 > 0 ? SQRT(l2) : l2;                                                \
                den = norm > mn ? norm : mn;                                                    \
            }                                                                                   \
            for (int64_t k = 0; k < d; k++) {                                                   \
                A x = LOAD(row[k]);                                                             \
                if (p->max_norm >= 0) x = x * mn / den;                                         \
                acc[k] += wq * x;                                                               \
            }                                                                                   \
            wsum += p->combiner == NDX_SEGMENT_SQRT_N ? wq * wq : wq;                           \
        }                                                                                       \
        A div = p->combiner == NDX_SEGMENT_SQRT_N ? SQRT(wsum) : wsum;                          \
        T *o = (T *)out;                                                                        \
        for (int64_t k = 0; k < d; k++) {                                                       \
            A v = acc[k];                                                                       \
            if (p->combiner != NDX_SEGMENT_SUM) v = div == 0 ? (A)0 : v / div;                  \
            o[k] = STORE(v);                                                                    \
        }                                                                                       \
    }

#define ID(x) (x)
DEFINE_BAG(f16, uint16_t, float, ndx_half_to_float, ndx_float_to_half, sqrtf)
DEFINE_BAG(bf16, uint16_t, float, ndx_bf16_to_float, ndx_float_to_bf16, sqrtf)
DEFINE_BAG(f32, float, float, ID, ID, sqrtf)
DEFINE_BAG(f64, double, double, ID, ID, sqrt)

static void weighted_bag(const bag_plan *p, const int64_t *src, int64_t first, int64_t n,
                         unsigned char *out, void *acc) {
    switch (p->want.dtype) {
    case NDX_FLOAT16: f16_bag(p, src, first, n, out, acc); break;
    case NDX_BFLOAT16: bf16_bag(p, src, first, n, out, acc); break;
    case NDX_FLOAT32: f32_bag(p, src, first, n, out, acc); break;
    default: f64_bag(p, src, first, n, out, acc); break;
    }
}

static void bag_fn(void *ctx, int64_t r0, int64_t r1, int worker) {
    const bag_job *j = ctx;
    const bag_plan *p = j->p;
    unsigned char *acc = j->scratch + (size_t)worker * 2 * p->acc_bytes;
    unsigned char *part = acc + p->acc_bytes;
    int64_t pos = bag_start(p, j->bags, r0);
    for (int64_t r = r0; r < r1; r++) {
        int64_t first, end;
        bag_span(p, j->bags, r, &pos, &first, &end);
        unsigned char *row = j->out + (size_t)r * p->row_bytes;
        if (end == first)
            memset(row, 0, p->row_bytes); /* an empty bag: 0, as TensorFlow's */
        else if (p->plain)
            segment_sparse_sum(p->want.dtype, p->combiner, p->params, p->row_bytes,
                               j->src + first, end - first, p->n - end, p->slice, row, acc,
                               part);
        else
            weighted_bag(p, j->src, first, end - first, row, acc);
    }
}

static ndx_status execute(ndx_call *c, bag_plan *p, ndx_tensor *out, int write) {
    int64_t *src = NULL, *bags = NULL;
    void *scratch = NULL;
    int allocated = 0;
    size_t count = (size_t)p->bags->shape[0];
    ndx_status s = ndx_call_scratch(c, (size_t)p->n * sizeof(int64_t), 0, "the checked ids",
                                    (void **)&src);
    if (s == NDX_OK)
        s = ndx_call_scratch(c, count * sizeof(int64_t), 0, "the checked bags", (void **)&bags);
    if (s == NDX_OK) s = embedding_bag_check(c, p, src, bags);
    if (s == NDX_OK && write) {
        size_t workers = (size_t)(p->workers > 0 ? p->workers : 1);
        s = ndx_call_scratch(c, p->slice ? workers * 2 * p->acc_bytes : 0, 0,
                             "embedding_bag accumulators", &scratch);
        if (s == NDX_OK) s = ndx_call_output(c, &p->want, out, 0, "out", &allocated);
        if (s == NDX_OK && p->row_bytes > 0) {
            bag_job j = {p, src, bags, out->data, scratch};
            ndx_parallel_for(c->threads, p->want.shape[0], p->grain, bag_fn, &j);
        }
    } else if (s == NDX_OK) {
        *out = p->want;
    }
    ndx_call_release(c, scratch);
    ndx_call_release(c, bags);
    ndx_call_release(c, src);
    return s;
}

ndx_status ndx_embedding_bag(const ndx_tensor *params, const ndx_tensor *ids,
                             const ndx_tensor *bags, const ndx_tensor *weights,
                             const ndx_embedding_bag_attrs *attrs, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, out, err));
    bag_plan p;
    NDX_TRY(embedding_bag_plan(&c, params, ids, bags, weights, attrs, &p));
    return execute(&c, &p, out, 1);
}

ndx_status ndx_embedding_bag_shape(const ndx_tensor *params, const ndx_tensor *ids,
                                   const ndx_tensor *bags, const ndx_tensor *weights,
                                   const ndx_embedding_bag_attrs *attrs, ndx_tensor *out,
                                   ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, NULL, out, err));
    bag_plan p;
    NDX_TRY(embedding_bag_plan(&c, params, ids, bags, weights, attrs, &p));
    return execute(&c, &p, out, 0);
}
