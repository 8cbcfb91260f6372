/* reference_sparse_reduce.c — naive references for ndx.h section 5d2, sparse_reduce and
 * sparse_softmax, written from TensorFlow's kernels: every entry's output element and reduced
 * offset computed coordinate by coordinate, the entries put in (element, reduced offset, input
 * position) order by a stable insertion sort, then each element's entries folded as
 * segment_sum / segment_max fold a segment (ref_segment_fill). */
#include "reference.h"
#include "reference_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ref_verdict say(char *why, ref_verdict v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, REF_WHY, fmt, ap);
    va_end(ap);
    return v;
}

typedef struct {
    int64_t element, offset, position;
} keyed;

/* (element, reduced offset, input position): the position makes the order total, so qsort
 * gives the stable order. */
static int keyed_cmp(const void *pa, const void *pb) {
    const keyed *a = pa, *b = pb;
    if (a->element != b->element) return a->element < b->element ? -1 : 1;
    if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
    return (a->position > b->position) - (a->position < b->position);
}

static ndx_tensor alloc_tensor(ndx_dtype dt, size_t itemsize, int rank, const int64_t *shape) {
    ndx_tensor t = ndx_tensor_make(dt, rank, shape, NULL);
    t.itemsize = itemsize;
    int64_t n = ref_count_of(rank, shape);
    t.data = calloc((size_t)(n > 0 ? n : 1), itemsize ? itemsize : 1);
    return t;
}

/* TensorFlow's reductions of a group: the sum is Eigen's, 0 plus each entry (as the unsorted
 * segment sum folds); the max starts from the first entry (as segment_max does). */
static void fold(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                 ndx_tensor *out) {
    if (op == NDX_SEGMENT_SUM)
        ref_unsorted_segment_fill(op, data, ids, out);
    else
        ref_segment_fill(op, data, ids, out);
}

ref_verdict ref_sparse_reduce(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                              const ndx_tensor *axes, int keep_dims, ndx_tensor *dense,
                              ndx_sparse_tensor *sparse, char *why) {
    ref_verdict v = ref_sparse_valid(sp, why);
    if (v != REF_OK) return v;
    ndx_dtype dt = sp->values.dtype;
    ndx_segment_op sop = op == NDX_SPARSE_REDUCE_MAX ? NDX_SEGMENT_MAX : NDX_SEGMENT_SUM;
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    int ok = k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT ||
             (k == NDX_KIND_COMPLEX && op == NDX_SPARSE_REDUCE_SUM);
    if (!ok) return say(why, REF_ERROR, "dtype");
    int R = (int)sp->dense_shape.shape[0];
    int64_t N = sp->indices.shape[0], dims[NDX_MAX_RANK];
    for (int d = 0; d < R; d++) dims[d] = ref_int_at(&sp->dense_shape, d);
    int reduced[NDX_MAX_RANK];
    for (int d = 0; d < R; d++) reduced[d] = axes == NULL;
    if (axes) {
        if (axes->rank > 1 || (axes->dtype != NDX_INT32 && axes->dtype != NDX_INT64))
            return say(why, REF_ERROR, "axes");
        for (int64_t i = 0; i < ref_count_of(axes->rank, axes->shape); i++) {
            int64_t a = ref_int_at(axes, i);
            if (a < -R || a >= R) return say(why, REF_ERROR, "axis %lld", (long long)a);
            reduced[a < 0 ? a + R : a] = 1;
        }
    }
    int out_rank = 0, nk = 0;
    int64_t out_dims[NDX_MAX_RANK], kept[NDX_MAX_RANK];
    for (int d = 0; d < R; d++) {
        if (!reduced[d]) kept[nk++] = dims[d];
        if (!reduced[d] || keep_dims) out_dims[out_rank++] = reduced[d] ? 1 : dims[d];
    }
    int64_t elements = ref_count_of(nk, kept);
    if (elements < 0) return say(why, REF_ERROR, "the output count overflows");
    size_t w = sp->values.itemsize, out_bytes;
    if (__builtin_mul_overflow((size_t)elements, w, &out_bytes) || out_bytes > REF_MAX_BYTES)
        return say(why, REF_EITHER, "result beyond the reference's size");
    keyed *e = malloc((size_t)(N ? N : 1) * sizeof *e);
    for (int64_t i = 0; i < N; i++) {
        e[i].element = e[i].offset = 0;
        e[i].position = i;
        for (int d = 0; d < R; d++) {
            int64_t c = ref_int_at(&sp->indices, i * R + d);
            if (reduced[d])
                e[i].offset = e[i].offset * dims[d] + c;
            else
                e[i].element = e[i].element * dims[d] + c;
        }
    }
    qsort(e, (size_t)N, sizeof *e, keyed_cmp);
    ndx_tensor data = alloc_tensor(dt, w, 1, &N);
    ndx_tensor ids = alloc_tensor(NDX_INT64, 8, 1, &N), runs = alloc_tensor(NDX_INT64, 8, 1, &N);
    int64_t groups = 0;
    for (int64_t i = 0; i < N; i++) {
        memcpy((unsigned char *)data.data + i * w,
               (const unsigned char *)sp->values.data + e[i].position * w, w);
        groups += i == 0 || e[i].element != e[i - 1].element;
        ((int64_t *)ids.data)[i] = e[i].element;
        ((int64_t *)runs.data)[i] = groups - 1;
    }
    if (dense) {
        *dense = alloc_tensor(dt, w, out_rank, out_dims);
        ndx_tensor flat = *dense;
        flat.rank = 1;
        flat.shape[0] = elements;
        fold(sop, &data, &ids, &flat);
    }
    if (sparse) {
        sparse->indices = alloc_tensor(NDX_INT64, 8, 2, (int64_t[]){groups, out_rank});
        sparse->values = alloc_tensor(dt, w, 1, &groups);
        sparse->dense_shape = alloc_tensor(NDX_INT64, 8, 1, (int64_t[]){out_rank});
        for (int d = 0; d < out_rank; d++) ((int64_t *)sparse->dense_shape.data)[d] = out_dims[d];
        fold(sop, &data, &runs, &sparse->values);
        for (int64_t i = 0, g = -1; i < N; i++) {
            if (i > 0 && e[i].element == e[i - 1].element) continue;
            g++;
            int64_t *row = (int64_t *)sparse->indices.data + g * out_rank, rest = e[i].element;
            for (int d = R - 1, o = out_rank - 1; d >= 0; d--) {
                if (reduced[d]) {
                    if (keep_dims) row[o--] = 0;
                } else {
                    row[o--] = rest % dims[d];
                    rest /= dims[d];
                }
            }
        }
    }
    free(data.data);
    free(ids.data);
    free(runs.data);
    free(e);
    return say(why, REF_OK, "valid");
}

/* TensorFlow's SparseSoftmax kernel written out: runs of entries sharing all coordinates but
 * the last, each shifted by its max, exponentiated, summed in order, times the sum's inverse. */
ref_verdict ref_sparse_softmax(const ndx_sparse_tensor *sp, ndx_tensor *out, char *why) {
    ref_verdict v = ref_sparse_valid(sp, why);
    if (v != REF_OK) return v;
    ndx_dtype dt = sp->values.dtype;
    if (dt != NDX_FLOAT32 && dt != NDX_FLOAT64) return say(why, REF_ERROR, "dtype");
    int R = (int)sp->dense_shape.shape[0];
    if (R < 2) return say(why, REF_ERROR, "rank");
    int64_t N = sp->indices.shape[0];
    *out = alloc_tensor(dt, sp->values.itemsize, 1, &N);
    for (int64_t b = 0; b < N;) {
        int64_t e = b + 1;
        for (; e < N; e++) {
            int same = 1;
            for (int d = 0; d < R - 1; d++)
                same &= ref_int_at(&sp->indices, e * R + d) == ref_int_at(&sp->indices, (e - 1) * R + d);
            if (!same) break;
        }
        if (dt == NDX_FLOAT32) {
            const float *x = (const float *)sp->values.data;
            float *y = out->data, top = x[b], sum = 0;
            for (int64_t i = b; i < e; i++) top = x[i] > top ? x[i] : top;
            for (int64_t i = b; i < e; i++) sum += (y[i] = expf(x[i] - top));
            float inv = 1 / sum;
            for (int64_t i = b; i < e; i++) y[i] *= inv;
        } else {
            const double *x = (const double *)sp->values.data;
            double *y = out->data, top = x[b], sum = 0;
            for (int64_t i = b; i < e; i++) top = x[i] > top ? x[i] : top;
            for (int64_t i = b; i < e; i++) sum += (y[i] = exp(x[i] - top));
            double inv = 1 / sum;
            for (int64_t i = b; i < e; i++) y[i] *= inv;
        }
        b = e;
    }
    return say(why, REF_OK, "valid");
}
