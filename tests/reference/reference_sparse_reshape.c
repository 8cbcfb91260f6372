/* reference_sparse_reshape.c — naive references of sparse_slice, sparse_split, sparse_reshape and
 * sparse_slice_grad (ndx.h section 5d4), written from ndx.h and TensorFlow's kernels: one entry
 * at a time, every output built in tensors of its own. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "reference.h"
#include "reference_util.h"

static ref_verdict say(char *why, ref_verdict v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, REF_WHY, fmt, ap);
    va_end(ap);
    return v;
}

static int index_dtype(ndx_dtype d) { return d == NDX_INT16 || d == NDX_INT32 || d == NDX_INT64; }

static ndx_tensor owned(ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape) {
    ndx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.itemsize = itemsize;
    t.rank = rank;
    int64_t count = 1;
    for (int i = 0; i < rank; i++) {
        t.shape[i] = shape[i];
        count *= shape[i];
    }
    t.data = calloc((size_t)count * itemsize + 1, 1);
    return t;
}

static ndx_sparse_tensor sparse_owned(int64_t n, int R, const ndx_tensor *values) {
    ndx_sparse_tensor s;
    s.indices = owned(NDX_INT64, 8, 2, (int64_t[]){n, R});
    s.values = owned(values->dtype, values->itemsize, 1, &n);
    s.dense_shape = owned(NDX_INT64, 8, 1, (int64_t[]){R});
    return s;
}

static int64_t *at64(ndx_tensor *t, int64_t i) { return (int64_t *)t->data + i; }

static const unsigned char *value_at(const ndx_tensor *t, int64_t i) {
    return (const unsigned char *)t->data + (size_t)i * t->itemsize;
}

/* An index vector of length R. */
static int box_ok(const ndx_tensor *t, int64_t R) {
    return t && ref_view_ok(t) && index_dtype(t->dtype) && t->rank == 1 && t->shape[0] == R;
}

ref_verdict ref_sparse_slice(const ndx_sparse_tensor *sp, const ndx_tensor *start,
                             const ndx_tensor *size, ndx_sparse_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    ref_verdict v = ref_sparse_valid(sp, why);
    if (v == REF_ERROR) return v;
    int R = (int)sp->dense_shape.shape[0];
    if (!box_ok(start, R) || !box_ok(size, R)) return say(why, REF_ERROR, "start or size");
    int64_t dims[NDX_MAX_RANK];
    for (int d = 0; d < R; d++) {
        /* TensorFlow: size if start < dim - size, else dim - start if start < dim, else 0 */
        __int128 s = ref_int_at(start, d), z = ref_int_at(size, d), dim = ref_int_at(&sp->dense_shape, d);
        if (s < dim - z) {
            if (z < 0) return say(why, REF_ERROR, "size[%d] negative", d);
            dims[d] = (int64_t)z;
        } else {
            dims[d] = s < dim ? (int64_t)(dim - s) : 0;
        }
    }
    if (ref_count_of(R, dims) < 0) return say(why, REF_ERROR, "output volume overflows");
    int64_t n = sp->indices.shape[0], kept = 0;
    char *in = calloc((size_t)n + 1, 1);
    for (int64_t i = 0; i < n; i++) {
        in[i] = 1;
        for (int d = 0; d < R; d++) {
            __int128 x = ref_int_at(&sp->indices, i * R + d), s = ref_int_at(start, d);
            if (!(s <= x && x < s + ref_int_at(size, d))) in[i] = 0;
        }
        kept += in[i];
    }
    *out = sparse_owned(kept, R, &sp->values);
    for (int64_t i = 0, k = 0; i < n; i++) {
        if (!in[i]) continue;
        for (int d = 0; d < R; d++)
            *at64(&out->indices, k * R + d) =
                ref_int_at(&sp->indices, i * R + d) - ref_int_at(start, d);
        memcpy((unsigned char *)out->values.data + (size_t)k * sp->values.itemsize,
               value_at(&sp->values, i), sp->values.itemsize);
        k++;
    }
    for (int d = 0; d < R; d++) *at64(&out->dense_shape, d) = dims[d];
    free(in);
    return v;
}

ref_verdict ref_sparse_split(int64_t axis, int num_split, const ndx_sparse_tensor *sp,
                             ndx_sparse_tensor *outs, char *why) {
    ref_verdict v = ref_sparse_valid(sp, why);
    if (v == REF_ERROR) return v;
    int R = (int)sp->dense_shape.shape[0];
    if (axis < -R || axis >= R) return say(why, REF_ERROR, "axis %lld", (long long)axis);
    int ax = (int)(axis < 0 ? axis + R : axis);
    int64_t width = ref_int_at(&sp->dense_shape, ax);
    if (num_split < 1 || num_split > width) return say(why, REF_ERROR, "num_split %d", num_split);
    int64_t n = sp->indices.shape[0];
    /* piece p covers [first[p], first[p + 1]): the first width % num_split are one wider */
    int64_t *first = calloc((size_t)num_split + 1, sizeof *first);
    for (int p = 0; p < num_split; p++)
        first[p + 1] = first[p] + width / num_split + (p < width % num_split ? 1 : 0);
    for (int p = 0; p < num_split; p++) {
        int64_t count = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t x = ref_int_at(&sp->indices, i * R + ax);
            count += x >= first[p] && x < first[p + 1];
        }
        outs[p] = sparse_owned(count, R, &sp->values);
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t x = ref_int_at(&sp->indices, i * R + ax);
            if (x < first[p] || x >= first[p + 1]) continue;
            for (int d = 0; d < R; d++)
                *at64(&outs[p].indices, k * R + d) =
                    ref_int_at(&sp->indices, i * R + d) - (d == ax ? first[p] : 0);
            memcpy((unsigned char *)outs[p].values.data + (size_t)k * sp->values.itemsize,
                   value_at(&sp->values, i), sp->values.itemsize);
            k++;
        }
        for (int d = 0; d < R; d++)
            *at64(&outs[p].dense_shape, d) =
                d == ax ? first[p + 1] - first[p] : ref_int_at(&sp->dense_shape, d);
    }
    free(first);
    return v;
}

ref_verdict ref_sparse_reshape(const ndx_tensor *indices, const ndx_tensor *input_shape,
                               const ndx_tensor *new_shape, ndx_tensor *out_indices,
                               ndx_tensor *out_shape, char *why) {
    memset(out_indices, 0, sizeof *out_indices);
    memset(out_shape, 0, sizeof *out_shape);
    if (!ref_view_ok(indices) || !ref_view_ok(input_shape) || !ref_view_ok(new_shape) ||
        !index_dtype(indices->dtype) || !index_dtype(input_shape->dtype) ||
        !index_dtype(new_shape->dtype) || indices->rank != 2 || input_shape->rank != 1 ||
        new_shape->rank != 1)
        return say(why, REF_ERROR, "views");
    int64_t R = input_shape->shape[0], Q = new_shape->shape[0], n = indices->shape[0];
    if (R < 1 || R > NDX_MAX_RANK || Q < 1 || Q > NDX_MAX_RANK || indices->shape[1] != R)
        return say(why, REF_ERROR, "ranks");
    int64_t dims[NDX_MAX_RANK], nd[NDX_MAX_RANK];
    for (int d = 0; d < R; d++) dims[d] = ref_int_at(input_shape, d);
    int64_t volume = ref_count_of((int)R, dims);
    if (volume < 0) return say(why, REF_ERROR, "input_shape");
    int64_t known = 1;
    int minus = -1;
    for (int d = 0; d < Q; d++) {
        nd[d] = ref_int_at(new_shape, d);
        if (nd[d] == -1) {
            if (minus >= 0) return say(why, REF_ERROR, "two -1");
            minus = d;
        } else if (nd[d] < 0 || __builtin_mul_overflow(known, nd[d], &known)) {
            return say(why, REF_ERROR, "new_shape[%d]", d);
        }
    }
    if (minus >= 0) {
        if (known == 0 || volume % known) return say(why, REF_ERROR, "cannot infer -1");
        nd[minus] = volume / known;
    } else if (known != volume) {
        return say(why, REF_ERROR, "volumes differ");
    }
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < R; d++) {
            int64_t x = ref_int_at(indices, i * R + d);
            if (x < 0 || x >= dims[d]) return say(why, REF_ERROR, "index outside");
        }
    *out_indices = owned(NDX_INT64, 8, 2, (int64_t[]){n, Q});
    *out_shape = owned(NDX_INT64, 8, 1, &Q);
    for (int d = 0; d < Q; d++) *at64(out_shape, d) = nd[d];
    for (int64_t i = 0; i < n; i++) {
        int64_t flat = 0;
        for (int d = 0; d < R; d++) flat = flat * dims[d] + ref_int_at(indices, i * R + d);
        for (int d = (int)Q - 1; d >= 0; d--) {
            *at64(out_indices, i * Q + d) = flat % nd[d];
            flat /= nd[d];
        }
    }
    return REF_OK;
}

ref_verdict ref_sparse_slice_grad(const ndx_tensor *grad, const ndx_tensor *input_indices,
                                  const ndx_tensor *input_start,
                                  const ndx_tensor *output_indices, ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!ref_view_ok(grad) || !ref_view_ok(input_indices) || !ref_view_ok(input_start) ||
        !ref_view_ok(output_indices) || grad->rank != 1 || input_indices->rank != 2 ||
        output_indices->rank != 2 || input_start->rank != 1 ||
        !index_dtype(input_indices->dtype) || !index_dtype(output_indices->dtype) ||
        !index_dtype(input_start->dtype) || grad->dtype == NDX_BOOL || grad->dtype == NDX_STRING)
        return say(why, REF_ERROR, "views");
    int64_t n = input_indices->shape[0], m = output_indices->shape[0];
    int64_t R = input_indices->shape[1];
    if (output_indices->shape[1] != R || input_start->shape[0] != R || grad->shape[0] != m ||
        m > n)
        return say(why, REF_ERROR, "shapes");
    /* TensorFlow's walk: output entry j matches the next input entry at its place */
    int64_t *from = calloc((size_t)m + 1, sizeof *from), j = 0;
    for (int64_t i = 0; i < n && j < m; i++) {
        int same = 1;
        for (int64_t d = 0; d < R; d++) { /* (a sum past int64 matches nothing) */
            int64_t at;
            if (__builtin_add_overflow(ref_int_at(output_indices, j * R + d),
                                       ref_int_at(input_start, d), &at) ||
                ref_int_at(input_indices, i * R + d) != at)
                same = 0;
        }
        if (same) from[j++] = i;
    }
    if (j != m) {
        free(from);
        return say(why, REF_ERROR, "unmatched output entry %lld", (long long)j);
    }
    *out = owned(grad->dtype, grad->itemsize, 1, &n);
    for (int64_t k = 0; k < m; k++)
        memcpy((unsigned char *)out->data + (size_t)from[k] * grad->itemsize, value_at(grad, k),
               grad->itemsize);
    free(from);
    return REF_OK;
}

ref_verdict ref_sparse_transpose(const ndx_sparse_tensor *sp, const ndx_tensor *perm,
                                 ndx_sparse_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    ref_verdict v = ref_sparse_valid(sp, why);
    if (v == REF_ERROR) return v;
    int R = (int)sp->dense_shape.shape[0];
    int p[NDX_MAX_RANK], seen[NDX_MAX_RANK] = {0};
    for (int d = 0; d < R; d++) {
        if (!perm) {
            p[d] = R - 1 - d;
            continue;
        }
        if (!box_ok(perm, R)) return say(why, REF_ERROR, "perm");
        int64_t x = ref_int_at(perm, d);
        if (x < 0 || x >= R || seen[x]++) return say(why, REF_ERROR, "perm not a permutation");
        p[d] = (int)x;
    }
    /* the entries with permuted indices, then the stable sort of ref_sparse_reorder */
    int64_t n = sp->indices.shape[0];
    ndx_sparse_tensor moved = sparse_owned(n, R, &sp->values);
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < R; d++)
            *at64(&moved.indices, i * R + d) = ref_int_at(&sp->indices, i * R + p[d]);
    if (n) memcpy(moved.values.data, sp->values.data, (size_t)n * sp->values.itemsize);
    for (int d = 0; d < R; d++) *at64(&moved.dense_shape, d) = ref_int_at(&sp->dense_shape, p[d]);
    ref_verdict r = ref_sparse_reorder(&moved, out, why);
    ref_sparse_free(&moved);
    return r == REF_ERROR ? r : v;
}
