/* embedding_bag_grad.c — ndx_embedding_bag's gradient (dense_ops.h): the values of its slices,
 * one row per id, and the weights' gradient, each written by the worker that owns the id's bag,
 * from the forward's plan and check step (embedding_bag_plan.h). */
#include <math.h>
#include <stdio.h>

#include "dense_ops.h"
#include "embedding_bag_plan.h"
#include "half.h"

static ndx_status check_dy(const ndx_spec *dy, const ndx_spec *want, ndx_error *err) {
    NDX_TRY(ndx_spec_check_as(dy, OP, "dy", err));
    if (dy->dtype != want->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": dy must be %s, not %s",
                        ndx_dtype_name(want->dtype), ndx_dtype_name(dy->dtype));
    if (dy->rank < 0) return NDX_OK;
    int same = dy->rank == want->rank;
    for (int i = 0; same && i < dy->rank; i++)
        same = dy->shape[i] < 0 || want->shape[i] < 0 || dy->shape[i] == want->shape[i];
    if (!same) {
        char a[NDX_DIMS_TEXT], b[NDX_DIMS_TEXT];
        ndx_format_dims(a, sizeof a, dy->rank, dy->shape);
        ndx_format_dims(b, sizeof b, want->rank, want->shape);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": dy has shape %s, not the output's %s",
                        a, b);
    }
    return NDX_OK;
}

ndx_status ndx_embedding_bag_grad_infer(const ndx_spec *params, const ndx_spec *ids,
                                        const ndx_spec *bags, const ndx_spec *weights,
                                        const ndx_embedding_bag_attrs *attrs,
                                        const ndx_spec *dy, ndx_spec out[2],
                                        ndx_error *err) {
    ndx_spec fwd;
    NDX_TRY(ndx_embedding_bag_infer(params, ids, bags, weights, attrs, &fwd, err));
    if (!dy) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": dy is NULL");
    NDX_TRY(check_dy(dy, &fwd, err));
    out[0] = fwd;
    out[0].shape[0] = ids->rank == 1 ? ids->shape[0] : NDX_UNKNOWN;
    out[1] = fwd;
    out[1].rank = 1;
    out[1].shape[0] = weights ? weights->shape[0] : 0;
    return NDX_OK;
}

typedef struct grad_job {
    const bag_plan *p;
    const int64_t *src, *bags;
    const unsigned char *dy;
    unsigned char *out;      /* d params' rows, one per id */
    unsigned char *dweights; /* NULL without weights */
} grad_job;

/* Bag r's rows of the output and its ids' weight gradients, in the accumulator type A of
 * storage type T. With s_i = clip(x_i) . dy[r] and W the combiner's divisor: d w_i is s_i
 * (sum), (s_i - sum_j w_j s_j / W) / W (mean), s_i / W - sum_j w_j s_j * w_i / W^3 (sqrtn),
 * 0 where W is 0 (div_no_nan). */
#define DEFINE_GRAD(tag, T, A, LOAD, STORE, SQRT)                                               \
    /* clip(x) . g (scaled by max_norm / ||x|| where clipped), and ||x||, ||x||^2, x . g */     \
    static A tag##_dot(const bag_plan *p, const T *x, const T *g, A mn, A *norm, A *l2,        \
                       A *xg) {                                                                 \
        *l2 = 0, *xg = 0;                                                                       \
        for (int64_t k = 0; k < p->slice; k++) {                                                \
            if (p->max_norm >= 0) *l2 += LOAD(x[k]) * LOAD(x[k]);                               \
            *xg += LOAD(x[k]) * LOAD(g[k]);                                                     \
        }                                                                                       \
        *norm = *l2 > 0 ? SQRT(*l2) : 0;                                                        \
        if (p->max_norm < 0) return *xg;                                                        \
        A den = *norm > mn ? *norm : mn;                                                        \
        return *xg * mn / den;                                                                  \
    }                                                                                           \
    static void tag##_grad(const grad_job *j, int64_t r, int64_t first, int64_t end) {          \
        const bag_plan *p = j->p;                                                               \
        const T *w = p->weights ? (const T *)p->weights->data : NULL;                           \
        const T *g = (const T *)(j->dy + (size_t)r * p->row_bytes);                             \
        A wsum = 0, ws = 0, mn = LOAD(STORE((A)p->max_norm)); /* TF: max_norm in T */          \
        A norm, l2, xg;                                                                         \
        for (int64_t q = first; q < end; q++) {                                                 \
            A wq = w ? LOAD(w[q]) : (A)1;                                                       \
            wsum += p->combiner == NDX_SEGMENT_SQRT_N ? wq * wq : wq;                           \
            if (j->dweights && p->combiner != NDX_SEGMENT_SUM) {                                \
                const T *x = (const T *)(p->params + (size_t)j->src[q] * p->row_bytes);         \
                ws += wq * tag##_dot(p, x, g, mn, &norm, &l2, &xg);                             \
            }                                                                                   \
        }                                                                                       \
        A div = p->combiner == NDX_SEGMENT_SQRT_N ? SQRT(wsum) : wsum;                          \
        if (p->combiner == NDX_SEGMENT_SUM) div = 1;                                            \
        /* the rows themselves matter only through clipping and the weights' gradient: */      \
        /* without both, each id's row is dy's row scaled, and the table is not read */         \
        int reads_rows = j->dweights || p->max_norm >= 0;                                       \
        for (int64_t q = first; q < end; q++) {                                                 \
            A wq = w ? LOAD(w[q]) : (A)1;                                                       \
            A scale = div == 0 ? (A)0 : wq / div;                                               \
            T *o = (T *)(j->out + (size_t)q * p->row_bytes);                                    \
            if (!reads_rows) {                                                                  \
                for (int64_t k = 0; k < p->slice; k++) o[k] = STORE(LOAD(g[k]) * scale);        \
                continue;                                                                       \
            }                                                                                   \
            const T *x = (const T *)(p->params + (size_t)j->src[q] * p->row_bytes);             \
            A sq = tag##_dot(p, x, g, mn, &norm, &l2, &xg);                                     \
            int clipped = p->max_norm >= 0 && norm > mn;                                        \
            for (int64_t k = 0; k < p->slice; k++) {                                            \
                A v = LOAD(g[k]);                                                               \
                if (clipped) v = mn / norm * (v - LOAD(x[k]) * xg / l2);                        \
                o[k] = STORE(v * scale);                                                        \
            }                                                                                   \
            if (j->dweights) {                                                                  \
                A dw = sq;                                                                      \
                if (p->combiner == NDX_SEGMENT_MEAN)                                            \
                    dw = div == 0 ? (A)0 : (sq - ws / div) / div;                               \
                else if (p->combiner == NDX_SEGMENT_SQRT_N)                                     \
                    dw = div == 0 ? (A)0 : sq / div - ws * wq / (div * div * div);              \
                ((T *)j->dweights)[q] = STORE(dw);                                              \
            }                                                                                   \
        }                                                                                       \
    }

#define ID(x) (x)
DEFINE_GRAD(f16, uint16_t, float, ndx_half_to_float, ndx_float_to_half, sqrtf)
DEFINE_GRAD(bf16, uint16_t, float, ndx_bf16_to_float, ndx_float_to_bf16, sqrtf)
DEFINE_GRAD(f32, float, float, ID, ID, sqrtf)
DEFINE_GRAD(f64, double, double, ID, ID, sqrt)

static void grad_fn(void *ctx, int64_t r0, int64_t r1, int worker) {
    (void)worker;
    const grad_job *j = ctx;
    const bag_plan *p = j->p;
    int64_t pos = bag_start(p, j->bags, r0);
    for (int64_t r = r0; r < r1; r++) {
        int64_t first, end;
        bag_span(p, j->bags, r, &pos, &first, &end);
        switch (p->want.dtype) {
        case NDX_FLOAT16: f16_grad(j, r, first, end); break;
        case NDX_BFLOAT16: bf16_grad(j, r, first, end); break;
        case NDX_FLOAT32: f32_grad(j, r, first, end); break;
        default: f64_grad(j, r, first, end); break;
        }
    }
}

ndx_status ndx_embedding_bag_grad(const ndx_tensor *params, const ndx_tensor *ids,
                                  const ndx_tensor *bags, const ndx_tensor *weights,
                                  const ndx_embedding_bag_attrs *attrs, const ndx_tensor *dy,
                                  const ndx_options *opt, ndx_tensor out[2], ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, out, err));
    bag_plan p;
    NDX_TRY(embedding_bag_plan(&c, params, ids, bags, weights, attrs, &p));
    if (!dy) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": dy is NULL");
    NDX_TRY(ndx_tensor_check_as(dy, OP, "dy", NULL, NULL, err));
    int64_t *src = NULL, *checked = NULL;
    int allocated = 0;
    ndx_status s = ndx_call_scratch(&c, (size_t)p.n * sizeof(int64_t), 0, "the checked ids",
                                    (void **)&src);
    if (s == NDX_OK)
        s = ndx_call_scratch(&c, (size_t)bags->shape[0] * sizeof(int64_t), 0, "the checked bags",
                             (void **)&checked);
    if (s == NDX_OK) s = embedding_bag_check(&c, &p, src, checked);
    ndx_spec ds, ws = ndx_spec_of(&p.want);
    ndx_spec_fill(&ds, dy);
    if (s == NDX_OK) s = check_dy(&ds, &ws, err);
    ndx_tensor want = p.want, want_w = p.want;
    want.shape[0] = p.n;
    want_w.rank = 1;
    want_w.shape[0] = weights ? p.n : 0;
    int allocated_w = 0;
    if (s == NDX_OK) s = ndx_call_output(&c, &want, &out[0], 0, "out[0]", &allocated);
    if (s == NDX_OK) {
        s = ndx_call_output(&c, &want_w, &out[1], 0, "out[1]", &allocated_w);
        if (s != NDX_OK) ndx_call_drop_output(&c, &out[0], allocated);
    }
    if (s == NDX_OK) {
        /* Ids in no bag (no offsets at all) and empty rows have a gradient of 0. */
        if (bags->shape[0] == 0 || p.row_bytes == 0) {
            if (p.n > 0 && p.row_bytes > 0) memset(out[0].data, 0, (size_t)p.n * p.row_bytes);
            if (weights && p.n > 0) memset(out[1].data, 0, (size_t)p.n * want_w.itemsize);
        } else {
            grad_job j = {&p, src, checked, dy->data, out[0].data, weights ? out[1].data : NULL};
            ndx_parallel_for(c.threads, p.want.shape[0], p.grain, grad_fn, &j);
        }
    }
    ndx_call_release(&c, checked);
    ndx_call_release(&c, src);
    return s;
}
