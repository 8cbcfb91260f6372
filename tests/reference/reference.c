/* reference.c — the naive references (see reference.h). Deliberately simple: every result is built
 * element by element from the definitions in ndx.h, with no shared code from src/ops. */
#include "reference.h"
#include "reference_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers --------------------------------------------------------------------------- */

static ref_verdict say(char *why, ref_verdict v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, REF_WHY, fmt, ap);
    va_end(ap);
    return v;
}

static int is_index_dtype(ndx_dtype d) { return d == NDX_INT16 || d == NDX_INT32 || d == NDX_INT64; }

static int64_t element_count(const ndx_tensor *t) { return ref_count_of(t->rank, t->shape); }

int ref_view_ok(const ndx_tensor *t) {
    if (!t || (int)t->dtype < 0 || (int)t->dtype >= NDX_DTYPE_COUNT) return 0;
    if (t->rank < 0 || t->rank > NDX_MAX_RANK) return 0;
    if (t->dtype == NDX_STRING ? t->itemsize == 0 : t->itemsize != ndx_dtype_size(t->dtype)) return 0;
    int64_t c = element_count(t);
    size_t bytes;
    if (c < 0 || __builtin_mul_overflow((size_t)c, t->itemsize, &bytes) || bytes > (size_t)PTRDIFF_MAX)
        return 0;
    return bytes == 0 || t->data != NULL;
}

/* A tensor the reference owns (zeroed; at least one byte so data is never NULL). NULL data when
 * the size is beyond REF_MAX_BYTES. */
static ndx_tensor make(ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape) {
    ndx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.itemsize = itemsize;
    t.rank = rank;
    for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
    int64_t c = element_count(&t);
    size_t bytes;
    if (c < 0 || __builtin_mul_overflow((size_t)c, itemsize, &bytes) || bytes > REF_MAX_BYTES) return t;
    t.data = calloc(1, bytes ? bytes : 1);
    return t;
}

/* 1 and *bytes when the result fits in REF_MAX_BYTES; the budgets fz_options sets refuse more. */
static int small_enough(ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape) {
    int64_t c = ref_count_of(rank, shape);
    size_t bytes;
    (void)dtype;
    return c >= 0 && !__builtin_mul_overflow((size_t)c, itemsize, &bytes) && bytes <= REF_MAX_BYTES;
}

void ref_tensor_free(ndx_tensor *t) {
    free(t->data);
    t->data = NULL;
}

void ref_sparse_free(ndx_sparse_tensor *sp) {
    ref_tensor_free(&sp->indices);
    ref_tensor_free(&sp->values);
    ref_tensor_free(&sp->dense_shape);
}

/* ---- element arithmetic ------------------------------------------------------------------------ */

int ref_scatter_supports(ndx_scatter_op op, ndx_dtype d) {
    ndx_dtype_kind k = ndx_dtype_kind_of(d);
    switch (op) {
    case NDX_SCATTER_UPDATE: return 1;
    case NDX_SCATTER_ADD:
    case NDX_SCATTER_SUB:
        return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT ||
               k == NDX_KIND_COMPLEX;
    case NDX_SCATTER_MIN:
    case NDX_SCATTER_MAX: return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT;
    default: return 0;
    }
}

/* Integer add/sub wrap around: do them on the unsigned type of the same width. */
#define WRAP(T, U, dst, src, sub)                                                               \
    do {                                                                                        \
        T a_, b_;                                                                               \
        memcpy(&a_, dst, sizeof(T));                                                            \
        memcpy(&b_, src, sizeof(T));                                                            \
        T r_ = (T)(sub ? (U)((U)a_ - (U)b_) : (U)((U)a_ + (U)b_));                              \
        memcpy(dst, &r_, sizeof(T));                                                            \
    } while (0)

/* std::min(current, update) / std::max(current, update): the update wins only when strictly
 * smaller / larger, so a NaN on either side keeps the current value. */
#define PICK(T, dst, src, is_max)                                                               \
    do {                                                                                        \
        T a_, b_;                                                                               \
        memcpy(&a_, dst, sizeof(T));                                                            \
        memcpy(&b_, src, sizeof(T));                                                            \
        if (is_max ? (a_ < b_) : (b_ < a_)) memcpy(dst, &b_, sizeof(T));                        \
    } while (0)

static float half_value(const unsigned char *p, ndx_dtype d) {
    uint16_t h;
    memcpy(&h, p, 2);
    return d == NDX_FLOAT16 ? ndx_float16_to_float(h) : ndx_bfloat16_to_float(h);
}

static void store_half(unsigned char *p, ndx_dtype d, float v) {
    uint16_t h = d == NDX_FLOAT16 ? ndx_float_to_float16(v) : ndx_float_to_bfloat16(v);
    memcpy(p, &h, 2);
}

/* dst = op(dst, src) for one element. */
static void combine(ndx_scatter_op op, ndx_dtype d, size_t w, unsigned char *dst,
                    const unsigned char *src) {
    if (op == NDX_SCATTER_UPDATE) {
        memcpy(dst, src, w);
        return;
    }
    int sub = op == NDX_SCATTER_SUB, is_max = op == NDX_SCATTER_MAX;
    if (op == NDX_SCATTER_ADD || op == NDX_SCATTER_SUB) {
        switch (d) {
        case NDX_INT8: WRAP(int8_t, uint8_t, dst, src, sub); break;
        case NDX_UINT8: WRAP(uint8_t, uint8_t, dst, src, sub); break;
        case NDX_INT16: WRAP(int16_t, uint16_t, dst, src, sub); break;
        case NDX_UINT16: WRAP(uint16_t, uint16_t, dst, src, sub); break;
        case NDX_INT32: WRAP(int32_t, uint32_t, dst, src, sub); break;
        case NDX_UINT32: WRAP(uint32_t, uint32_t, dst, src, sub); break;
        case NDX_INT64: WRAP(int64_t, uint64_t, dst, src, sub); break;
        case NDX_UINT64: WRAP(uint64_t, uint64_t, dst, src, sub); break;
        case NDX_FLOAT16:
        case NDX_BFLOAT16: {
            float a = half_value(dst, d), b = half_value(src, d);
            store_half(dst, d, sub ? a - b : a + b);
        } break;
        case NDX_FLOAT32:
        case NDX_COMPLEX64:
            for (size_t k = 0; k < w; k += 4) {
                float a, b;
                memcpy(&a, dst + k, 4);
                memcpy(&b, src + k, 4);
                a = sub ? a - b : a + b;
                memcpy(dst + k, &a, 4);
            }
            break;
        case NDX_FLOAT64:
        case NDX_COMPLEX128:
            for (size_t k = 0; k < w; k += 8) {
                double a, b;
                memcpy(&a, dst + k, 8);
                memcpy(&b, src + k, 8);
                a = sub ? a - b : a + b;
                memcpy(dst + k, &a, 8);
            }
            break;
        default: break;
        }
        return;
    }
    switch (d) {
    case NDX_INT8: PICK(int8_t, dst, src, is_max); break;
    case NDX_UINT8: PICK(uint8_t, dst, src, is_max); break;
    case NDX_INT16: PICK(int16_t, dst, src, is_max); break;
    case NDX_UINT16: PICK(uint16_t, dst, src, is_max); break;
    case NDX_INT32: PICK(int32_t, dst, src, is_max); break;
    case NDX_UINT32: PICK(uint32_t, dst, src, is_max); break;
    case NDX_INT64: PICK(int64_t, dst, src, is_max); break;
    case NDX_UINT64: PICK(uint64_t, dst, src, is_max); break;
    case NDX_FLOAT32: PICK(float, dst, src, is_max); break;
    case NDX_FLOAT64: PICK(double, dst, src, is_max); break;
    case NDX_FLOAT16:
    case NDX_BFLOAT16: {
        float a = half_value(dst, d), b = half_value(src, d);
        if (is_max ? (a < b) : (b < a)) memcpy(dst, src, 2);
    } break;
    default: break;
    }
}

/* Length of a NUL-padded string of width w. */
static size_t str_len(const unsigned char *p, size_t w) {
    size_t n = 0;
    while (n < w && p[n]) n++;
    return n;
}

/* ---- index rows ------------------------------------------------------------------------------ */

/* Flat slice number of row `row` (depth coordinates into dims), or -1 when out of range. */
static int64_t row_offset(const ndx_tensor *idx, int64_t row, int64_t depth, const int64_t *dims) {
    int64_t off = 0;
    for (int64_t k = 0; k < depth; k++) {
        int64_t c = ref_int_at(idx, row * depth + k);
        if (c < 0 || c >= dims[k]) return -1;
        off = off * dims[k] + c;
    }
    return off;
}

/* ---- gather_nd ------------------------------------------------------------------------------- */

ref_verdict ref_gather_nd(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                          const ndx_options *opt, ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!ref_view_ok(params) || !ref_view_ok(indices)) return say(why, REF_ERROR, "malformed view");
    if (!is_index_dtype(indices->dtype)) return say(why, REF_ERROR, "indices dtype");
    if (indices->rank < 1) return say(why, REF_ERROR, "scalar indices");
    int B = batch_dims;
    if (B < 0 || B >= indices->rank || B >= params->rank) return say(why, REF_ERROR, "batch_dims %d", B);
    for (int k = 0; k < B; k++)
        if (indices->shape[k] != params->shape[k]) return say(why, REF_ERROR, "batch dim %d differs", k);
    int64_t D = indices->shape[indices->rank - 1];
    if (D > params->rank - B) return say(why, REF_ERROR, "depth %lld too deep", (long long)D);
    int out_rank = indices->rank - 1 + params->rank - B - (int)D;
    if (out_rank > NDX_MAX_RANK) return say(why, REF_ERROR, "output rank %d", out_rank);
    int64_t shape[2 * NDX_MAX_RANK];
    int r = 0;
    for (int k = 0; k < indices->rank - 1; k++) shape[r++] = indices->shape[k];
    for (int k = B + (int)D; k < params->rank; k++) shape[r++] = params->shape[k];

    int64_t rows = ref_count_of(indices->rank - 1, indices->shape);
    int64_t per_batch = ref_count_of(indices->rank - 1 - B, indices->shape + B);
    int64_t slice = ref_count_of(params->rank - B - (int)D, params->shape + B + D);
    int64_t batch_stride = ref_count_of(params->rank - B, params->shape + B);
    const int64_t *dims = params->shape + B;
    int ignore = opt && opt->bad_indices == NDX_BAD_INDICES_IGNORE;

    int any_bad = 0;
    for (int64_t i = 0; i < rows; i++)
        if (row_offset(indices, i, D, dims) < 0) any_bad = 1;
    if (any_bad && !ignore) return say(why, REF_ERROR, "an index is out of range");
    ref_verdict v = REF_OK;
    if (rows > 0 && element_count(params) == 0) {
        v = REF_EITHER; /* TensorFlow: "Requested more than 0 entries, but params is empty" */
        say(why, v, "index rows into empty params");
    } else {
        say(why, v, "valid");
    }
    if (!small_enough(params->dtype, params->itemsize, out_rank, shape))
        return say(why, REF_ERROR, "output too large");
    *out = make(params->dtype, params->itemsize, out_rank, shape);
    size_t w = params->itemsize;
    for (int64_t i = 0; i < rows; i++) {
        int64_t off = row_offset(indices, i, D, dims);
        if (off < 0 || slice == 0) continue; /* ignored row: stays zero */
        int64_t b = i / per_batch;
        const unsigned char *src = (const unsigned char *)params->data + (size_t)((b * batch_stride + off * slice)) * w;
        memcpy((unsigned char *)out->data + (size_t)(i * slice) * w, src, (size_t)slice * w);
    }
    return v;
}

/* ---- the scatter family ------------------------------------------------------------------------ */

/* Shared shape checks: indices rank >= 1, depth D <= rank of target, updates shape
 * indices.shape[:-1] + target[D:]. Returns 0 and a reason when they fail. */
static int scatter_shapes_ok(const ndx_tensor *indices, const ndx_tensor *updates, int trank,
                             const int64_t *tshape, int64_t *depth, char *why) {
    if (!is_index_dtype(indices->dtype)) return say(why, REF_ERROR, "indices dtype"), 0;
    if (indices->rank < 1) return say(why, REF_ERROR, "scalar indices"), 0;
    int64_t D = indices->shape[indices->rank - 1];
    if (D > trank) return say(why, REF_ERROR, "depth %lld > rank %d", (long long)D, trank), 0;
    int want_rank = indices->rank - 1 + trank - (int)D;
    if (updates->rank != want_rank) return say(why, REF_ERROR, "updates rank"), 0;
    for (int k = 0; k < indices->rank - 1; k++)
        if (updates->shape[k] != indices->shape[k]) return say(why, REF_ERROR, "updates outer dims"), 0;
    for (int k = (int)D; k < trank; k++)
        if (updates->shape[indices->rank - 1 + k - D] != tshape[k])
            return say(why, REF_ERROR, "updates slice dims"), 0;
    *depth = D;
    return 1;
}

ref_verdict ref_tensor_scatter_nd(ndx_scatter_op op, const ndx_tensor *tensor,
                                  const ndx_tensor *indices, const ndx_tensor *updates,
                                  const ndx_options *opt, ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if ((int)op < 0 || (int)op > NDX_SCATTER_MAX) return say(why, REF_ERROR, "bad scatter op");
    if (!ref_view_ok(tensor) || !ref_view_ok(indices) || !ref_view_ok(updates))
        return say(why, REF_ERROR, "malformed view");
    if (tensor->dtype != updates->dtype || tensor->itemsize != updates->itemsize)
        return say(why, REF_ERROR, "updates type differs");
    int64_t D;
    if (!scatter_shapes_ok(indices, updates, tensor->rank, tensor->shape, &D, why)) return REF_ERROR;
    if (!ref_scatter_supports(op, tensor->dtype)) return say(why, REF_ERROR, "dtype unsupported");
    int64_t rows = ref_count_of(indices->rank - 1, indices->shape);
    int64_t slice = ref_count_of(tensor->rank - (int)D, tensor->shape + D);
    int ignore = opt && opt->bad_indices == NDX_BAD_INDICES_IGNORE;
    for (int64_t i = 0; i < rows; i++)
        if (row_offset(indices, i, D, tensor->shape) < 0 && !ignore)
            return say(why, REF_ERROR, "index row %lld out of range", (long long)i);
    ref_verdict v = REF_OK;
    say(why, v, "valid");
    if (rows > 0 && element_count(tensor) == 0)
        v = say(why, REF_EITHER, "index rows into an empty tensor"); /* TensorFlow refuses */
    if (!small_enough(tensor->dtype, tensor->itemsize, tensor->rank, tensor->shape))
        return say(why, REF_ERROR, "output too large");
    *out = make(tensor->dtype, tensor->itemsize, tensor->rank, tensor->shape);
    size_t w = tensor->itemsize;
    size_t nbytes = (size_t)element_count(tensor) * w;
    if (nbytes) memcpy(out->data, tensor->data, nbytes);
    for (int64_t i = 0; i < rows; i++) {
        int64_t off = row_offset(indices, i, D, tensor->shape);
        if (off < 0) continue;
        for (int64_t e = 0; e < slice; e++)
            combine(op, tensor->dtype, w, (unsigned char *)out->data + (size_t)(off * slice + e) * w,
                    (const unsigned char *)updates->data + (size_t)(i * slice + e) * w);
    }
    return v;
}

typedef struct piece {
    int64_t dst, seq;
    const unsigned char *src;
    size_t len;
} piece;

static int by_dst_then_seq(const void *a, const void *b) {
    const piece *x = a, *y = b;
    if (x->dst != y->dst) return (x->dst > y->dst) - (x->dst < y->dst);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

ref_verdict ref_scatter_nd(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                           const int64_t *shape, const ndx_options *opt, ndx_tensor *out,
                           char *why) {
    memset(out, 0, sizeof *out);
    if (!ref_view_ok(indices) || !ref_view_ok(updates)) return say(why, REF_ERROR, "malformed view");
    if (rank < 0 || rank > NDX_MAX_RANK || (rank > 0 && !shape)) return say(why, REF_ERROR, "rank %d", rank);
    int64_t count = ref_count_of(rank, shape);
    if (count < 0) return say(why, REF_ERROR, "shape negative or too large");
    int64_t D;
    if (!scatter_shapes_ok(indices, updates, rank, shape, &D, why)) return REF_ERROR;
    int64_t rows = ref_count_of(indices->rank - 1, indices->shape);
    int64_t slice = ref_count_of(rank - (int)D, shape + D);
    int ignore = opt && opt->bad_indices == NDX_BAD_INDICES_IGNORE;
    for (int64_t i = 0; i < rows; i++)
        if (row_offset(indices, i, D, shape) < 0 && !ignore)
            return say(why, REF_ERROR, "index row %lld out of range", (long long)i);
    ref_verdict v = REF_OK;
    say(why, v, "valid");
    if (rows > 0 && count == 0) v = say(why, REF_EITHER, "index rows into an empty output");
    ndx_dtype d = updates->dtype;
    size_t w = updates->itemsize;
    if (d == NDX_STRING) {
        /* Each destination receives the concatenation of its pieces in index order; the output
         * width is the longest concatenation (at least 1). Pieces sorted by (destination, order)
         * give both without a per-element array (the output may be large and sparsely hit). */
        int64_t pairs = rows * slice, np = 0;
        piece *pc = malloc((size_t)(pairs > 0 ? pairs : 1) * sizeof *pc);
        for (int64_t i = 0; i < rows; i++) {
            int64_t off = row_offset(indices, i, D, shape);
            if (off < 0) continue;
            for (int64_t e = 0; e < slice; e++) {
                const unsigned char *src = (const unsigned char *)updates->data + (size_t)(i * slice + e) * w;
                pc[np].dst = off * slice + e;
                pc[np].seq = np;
                pc[np].src = src;
                pc[np++].len = str_len(src, w);
            }
        }
        qsort(pc, (size_t)np, sizeof *pc, by_dst_then_seq);
        size_t width = 1;
        for (int64_t i = 0; i < np;) {
            size_t total = 0;
            int64_t j = i;
            while (j < np && pc[j].dst == pc[i].dst) total += pc[j++].len;
            if (total > width) width = total;
            i = j;
        }
        if (!small_enough(d, width, rank, shape)) {
            free(pc);
            return say(why, REF_ERROR, "output too large");
        }
        *out = make(d, width, rank, shape);
        for (int64_t i = 0; i < np;) {
            size_t at = 0;
            int64_t j = i;
            for (; j < np && pc[j].dst == pc[i].dst; j++) {
                memcpy((unsigned char *)out->data + (size_t)pc[j].dst * width + at, pc[j].src, pc[j].len);
                at += pc[j].len;
            }
            i = j;
        }
        free(pc);
        return v;
    }
    if (!small_enough(d, w, rank, shape)) return say(why, REF_ERROR, "output too large");
    *out = make(d, w, rank, shape);
    for (int64_t i = 0; i < rows; i++) {
        int64_t off = row_offset(indices, i, D, shape);
        if (off < 0) continue;
        for (int64_t e = 0; e < slice; e++) {
            unsigned char *dst = (unsigned char *)out->data + (size_t)(off * slice + e) * w;
            const unsigned char *src = (const unsigned char *)updates->data + (size_t)(i * slice + e) * w;
            if (d == NDX_BOOL)
                *dst = (unsigned char)(*dst | *src);
            else
                combine(NDX_SCATTER_ADD, d, w, dst, src);
        }
    }
    return v;
}

/* ---- dynamic_stitch / dynamic_partition ------------------------------------------------------ */

ref_verdict ref_dynamic_stitch(int n, const ndx_tensor *indices, const ndx_tensor *data,
                               ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (n < 1 || !indices || !data) return say(why, REF_ERROR, "n = %d", n);
    for (int m = 0; m < n; m++) {
        if (!ref_view_ok(&indices[m]) || !ref_view_ok(&data[m])) return say(why, REF_ERROR, "malformed view %d", m);
        if (!is_index_dtype(indices[m].dtype)) return say(why, REF_ERROR, "indices[%d] dtype", m);
    }
    if (data[0].rank < indices[0].rank) return say(why, REF_ERROR, "data[0] rank");
    int crank = data[0].rank - indices[0].rank;
    const int64_t *C = data[0].shape + indices[0].rank;
    for (int m = 0; m < n; m++) {
        if (data[m].dtype != data[0].dtype || data[m].itemsize != data[0].itemsize)
            return say(why, REF_ERROR, "data[%d] type", m);
        if (data[m].rank != indices[m].rank + crank) return say(why, REF_ERROR, "data[%d] rank", m);
        for (int k = 0; k < indices[m].rank; k++)
            if (data[m].shape[k] != indices[m].shape[k]) return say(why, REF_ERROR, "data[%d] shape", m);
        for (int k = 0; k < crank; k++)
            if (data[m].shape[indices[m].rank + k] != C[k]) return say(why, REF_ERROR, "data[%d] trailing", m);
    }
    int64_t max = -1;
    for (int m = 0; m < n; m++) {
        int64_t c = element_count(&indices[m]);
        for (int64_t i = 0; i < c; i++) {
            int64_t v = ref_int_at(&indices[m], i);
            if (v < 0) return say(why, REF_ERROR, "negative index");
            if (v > max) max = v;
        }
    }
    if (max == INT64_MAX) return say(why, REF_ERROR, "max index + 1 overflows");
    int64_t shape[NDX_MAX_RANK + 1];
    shape[0] = max + 1;
    for (int k = 0; k < crank; k++) shape[1 + k] = C[k];
    if (crank + 1 > NDX_MAX_RANK) return say(why, REF_ERROR, "output rank");
    if (!small_enough(data[0].dtype, data[0].itemsize, crank + 1, shape))
        return say(why, REF_ERROR, "output too large");
    *out = make(data[0].dtype, data[0].itemsize, crank + 1, shape);
    size_t sb = (size_t)ref_count_of(crank, C) * data[0].itemsize;
    for (int m = 0; m < n && sb > 0; m++) {
        int64_t c = element_count(&indices[m]);
        for (int64_t i = 0; i < c; i++) {
            int64_t v = ref_int_at(&indices[m], i);
            memcpy((unsigned char *)out->data + (size_t)v * sb, (const unsigned char *)data[m].data + (size_t)i * sb, sb);
        }
    }
    return say(why, REF_OK, "valid");
}

ref_verdict ref_dynamic_partition(const ndx_tensor *data, const ndx_tensor *partitions,
                                  int num_partitions, ndx_tensor *outs, char *why) {
    if (num_partitions < 1) return say(why, REF_ERROR, "num_partitions %d", num_partitions);
    for (int p = 0; p < num_partitions; p++) memset(&outs[p], 0, sizeof outs[p]);
    if (!ref_view_ok(data) || !ref_view_ok(partitions)) return say(why, REF_ERROR, "malformed view");
    if (!is_index_dtype(partitions->dtype)) return say(why, REF_ERROR, "partitions dtype");
    int P = partitions->rank;
    if (P > data->rank) return say(why, REF_ERROR, "partitions rank");
    for (int k = 0; k < P; k++)
        if (partitions->shape[k] != data->shape[k]) return say(why, REF_ERROR, "partitions shape");
    int64_t n = element_count(partitions);
    int64_t *counts = calloc((size_t)num_partitions, sizeof *counts);
    for (int64_t i = 0; i < n; i++) {
        int64_t p = ref_int_at(partitions, i);
        if (p < 0 || p >= num_partitions) {
            free(counts);
            return say(why, REF_ERROR, "partition id %lld", (long long)p);
        }
        counts[p]++;
    }
    int inner_rank = data->rank - P;
    size_t sb = (size_t)ref_count_of(inner_rank, data->shape + P) * data->itemsize;
    int64_t *filled = calloc((size_t)num_partitions, sizeof *filled);
    for (int p = 0; p < num_partitions; p++) {
        int64_t shape[NDX_MAX_RANK + 1];
        shape[0] = counts[p];
        for (int k = 0; k < inner_rank; k++) shape[1 + k] = data->shape[P + k];
        outs[p] = make(data->dtype, data->itemsize, inner_rank + 1, shape);
    }
    for (int64_t i = 0; i < n && sb > 0; i++) {
        int64_t p = ref_int_at(partitions, i);
        memcpy((unsigned char *)outs[p].data + (size_t)filled[p]++ * sb,
               (const unsigned char *)data->data + (size_t)i * sb, sb);
    }
    free(counts);
    free(filled);
    return say(why, REF_OK, "valid");
}

/* ---- sparse tensors --------------------------------------------------------------------------- */

ref_verdict ref_sparse_valid(const ndx_sparse_tensor *sp, char *why) {
    const ndx_tensor *ix = &sp->indices, *va = &sp->values, *ds = &sp->dense_shape;
    if (!ref_view_ok(ix) || !ref_view_ok(va) || !ref_view_ok(ds)) return say(why, REF_ERROR, "malformed view");
    /* ndx.h: index tensors may be int16, int32 or int64 everywhere an op takes indices. */
    if (!is_index_dtype(ix->dtype) || !is_index_dtype(ds->dtype)) return say(why, REF_ERROR, "index dtype");
    if (ix->rank != 2 || va->rank != 1 || ds->rank != 1) return say(why, REF_ERROR, "ranks");
    int64_t R = ds->shape[0], N = ix->shape[0];
    if (R < 1 || R > NDX_MAX_RANK) return say(why, REF_ERROR, "sparse rank %lld", (long long)R);
    if (ix->shape[1] != R || va->shape[0] != N) return say(why, REF_ERROR, "shapes disagree");
    int64_t dims[NDX_MAX_RANK];
    for (int k = 0; k < R; k++) {
        dims[k] = ref_int_at(ds, k);
        if (dims[k] < 0) return say(why, REF_ERROR, "negative dense_shape");
    }
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = 0; k < R; k++) {
            int64_t c = ref_int_at(ix, i * R + k);
            if (c < 0 || c >= dims[k]) return say(why, REF_ERROR, "entry %lld outside", (long long)i);
        }
    if (ref_count_of((int)R, dims) < 0) return say(why, REF_EITHER, "dense shape count overflows");
    return say(why, REF_OK, "valid");
}

/* Lexicographic comparison of index rows a and b (R coordinates each). */
static int row_order(const int64_t *a, const int64_t *b, int64_t R) {
    for (int64_t k = 0; k < R; k++)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* Entries as (row, value pointer) so a stable merge sort orders them. */
typedef struct entry {
    int64_t row[NDX_MAX_RANK];
    const unsigned char *value;
} entry;

static void stable_sort(entry *e, int64_t n, int64_t R) {
    /* merge sort: stable and fine for the fuzz sizes. It moves pointers, not the entries (136
     * bytes each), then puts the entries in their order once: the tests' cases of a million
     * entries stay quick under the sanitizers and valgrind. */
    if (n < 2) return;
    const entry **from = malloc((size_t)n * sizeof *from), **to = malloc((size_t)n * sizeof *to);
    entry *sorted = malloc((size_t)n * sizeof *sorted);
    for (int64_t i = 0; i < n; i++) from[i] = &e[i];
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                to[k++] = row_order(from[j]->row, from[i]->row, R) < 0 ? from[j++] : from[i++];
            while (i < mid) to[k++] = from[i++];
            while (j < hi) to[k++] = from[j++];
        }
        const entry **t = from;
        from = to;
        to = t;
    }
    for (int64_t i = 0; i < n; i++) sorted[i] = *from[i];
    memcpy(e, sorted, (size_t)n * sizeof *e);
    free(sorted);
    free(from);
    free(to);
}

static ndx_sparse_tensor sparse_from_entries(const entry *e, int64_t n, int64_t R, const int64_t *dims,
                                             ndx_dtype dtype, size_t w) {
    ndx_sparse_tensor sp;
    int64_t ishape[2] = {n, R}, vshape[1] = {n}, dshape[1] = {R};
    sp.indices = make(NDX_INT64, 8, 2, ishape);
    sp.values = make(dtype, w, 1, vshape);
    sp.dense_shape = make(NDX_INT64, 8, 1, dshape);
    for (int64_t i = 0; i < n; i++) {
        memcpy((int64_t *)sp.indices.data + i * R, e[i].row, (size_t)R * 8);
        memcpy((unsigned char *)sp.values.data + (size_t)i * w, e[i].value, w);
    }
    memcpy(sp.dense_shape.data, dims, (size_t)R * 8);
    return sp;
}

static entry *read_entries(const ndx_sparse_tensor *sp, int64_t *n, int64_t *R) {
    *n = sp->indices.shape[0];
    *R = sp->indices.shape[1];
    entry *e = calloc((size_t)*n + 1, sizeof *e);
    for (int64_t i = 0; i < *n; i++) {
        for (int64_t k = 0; k < *R; k++) e[i].row[k] = ref_int_at(&sp->indices, i * *R + k);
        e[i].value = (const unsigned char *)sp->values.data + (size_t)i * sp->values.itemsize;
    }
    return e;
}

ref_verdict ref_sparse_reorder(const ndx_sparse_tensor *in, ndx_sparse_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    ref_verdict v = ref_sparse_valid(in, why);
    if (v == REF_ERROR) return v;
    int64_t n, R;
    entry *e = read_entries(in, &n, &R);
    stable_sort(e, n, R);
    int64_t dims[NDX_MAX_RANK];
    for (int k = 0; k < R; k++) dims[k] = ref_int_at(&in->dense_shape, k);
    *out = sparse_from_entries(e, n, R, dims, in->values.dtype, in->values.itemsize);
    free(e);
    return v;
}

ref_verdict ref_sparse_concat(int axis, int n, const ndx_sparse_tensor *inputs,
                              int expand_nonconcat_dim, ndx_sparse_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (n < 1 || !inputs) return say(why, REF_ERROR, "n = %d", n);
    ref_verdict v = REF_OK;
    for (int m = 0; m < n; m++) {
        ref_verdict vm = ref_sparse_valid(&inputs[m], why);
        if (vm == REF_ERROR) return vm;
        if (vm == REF_EITHER) v = REF_EITHER;
    }
    int64_t R = inputs[0].dense_shape.shape[0];
    for (int m = 1; m < n; m++) {
        if (inputs[m].dense_shape.shape[0] != R) return say(why, REF_ERROR, "ranks differ");
        if (inputs[m].values.dtype != inputs[0].values.dtype ||
            inputs[m].values.itemsize != inputs[0].values.itemsize)
            return say(why, REF_ERROR, "dtypes differ");
    }
    int64_t ax = axis < 0 ? (int64_t)axis + R : axis;
    if (ax < 0 || ax >= R) return say(why, REF_ERROR, "axis %d", axis);
    int64_t dims[NDX_MAX_RANK];
    int64_t *offset = calloc((size_t)n, sizeof *offset);
    for (int k = 0; k < R; k++) dims[k] = k == ax ? 0 : ref_int_at(&inputs[0].dense_shape, k);
    for (int m = 0; m < n; m++) {
        for (int k = 0; k < R; k++) {
            int64_t d = ref_int_at(&inputs[m].dense_shape, k);
            if (k == ax) {
                offset[m] = dims[k];
                if (__builtin_add_overflow(dims[k], d, &dims[k])) {
                    free(offset);
                    return say(why, REF_ERROR, "concat dim overflows");
                }
            } else if (expand_nonconcat_dim) {
                if (d > dims[k]) dims[k] = d;
            } else if (d != dims[k]) {
                free(offset);
                return say(why, REF_ERROR, "dim %d differs", k);
            }
        }
    }
    if (ref_count_of((int)R, dims) < 0) v = REF_EITHER;
    if (n == 1) v = REF_EITHER; /* TensorFlow's SparseConcat takes at least two inputs */
    int64_t total = 0;
    for (int m = 0; m < n; m++) total += inputs[m].indices.shape[0];
    entry *all = calloc((size_t)total + 1, sizeof *all);
    int64_t at = 0;
    for (int m = 0; m < n; m++) {
        int64_t nm, Rm;
        entry *e = read_entries(&inputs[m], &nm, &Rm);
        for (int64_t i = 0; i < nm; i++) {
            e[i].row[ax] += offset[m];
            all[at++] = e[i];
        }
        free(e);
    }
    free(offset);
    stable_sort(all, total, R);
    *out = sparse_from_entries(all, total, R, dims, inputs[0].values.dtype, inputs[0].values.itemsize);
    free(all);
    return v == REF_OK ? say(why, REF_OK, "valid") : say(why, v, "valid, but TensorFlow may refuse");
}

ref_verdict ref_sparse_to_dense(const ndx_sparse_tensor *sp, const void *default_value,
                                ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    ref_verdict v = ref_sparse_valid(sp, why);
    if (v == REF_ERROR) return v;
    int64_t R = sp->dense_shape.shape[0];
    int64_t dims[NDX_MAX_RANK];
    for (int k = 0; k < R; k++) dims[k] = ref_int_at(&sp->dense_shape, k);
    ndx_dtype d = sp->values.dtype;
    size_t w = sp->values.itemsize;
    if (!small_enough(d, w, (int)R, dims) || !small_enough(d, 1, (int)R, dims))
        return say(why, REF_ERROR, "dense output too large");
    *out = make(d, w, (int)R, dims);
    int64_t count = ref_count_of((int)R, dims);
    if (default_value)
        for (int64_t i = 0; i < count; i++) memcpy((unsigned char *)out->data + (size_t)i * w, default_value, w);
    unsigned char *seen = calloc((size_t)count + 1, 1);
    int64_t N = sp->indices.shape[0];
    for (int64_t i = 0; i < N; i++) {
        int64_t off = row_offset(&sp->indices, i, R, dims);
        if (seen[off]) {
            free(seen);
            ref_tensor_free(out);
            return say(why, REF_ERROR, "repeated index");
        }
        seen[off] = 1;
        memcpy((unsigned char *)out->data + (size_t)off * w, (const unsigned char *)sp->values.data + (size_t)i * w, w);
    }
    free(seen);
    return say(why, REF_OK, "valid");
}

int ref_is_zero(const unsigned char *p, ndx_dtype d, size_t w) {
    switch (d) {
    case NDX_FLOAT16:
    case NDX_BFLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return (h & 0x7fff) == 0;
    }
    case NDX_FLOAT32: { float x; memcpy(&x, p, 4); return x == 0.0f; }
    case NDX_FLOAT64: { double x; memcpy(&x, p, 8); return x == 0.0; }
    case NDX_COMPLEX64: { float x, y; memcpy(&x, p, 4); memcpy(&y, p + 4, 4); return x == 0.0f && y == 0.0f; }
    case NDX_COMPLEX128: { double x, y; memcpy(&x, p, 8); memcpy(&y, p + 8, 8); return x == 0.0 && y == 0.0; }
    default:
        for (size_t i = 0; i < w; i++)
            if (p[i]) return 0;
        return 1;
    }
}

ref_verdict ref_dense_to_sparse(const ndx_tensor *dense, ndx_sparse_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!ref_view_ok(dense)) return say(why, REF_ERROR, "malformed view");
    if (dense->rank < 1) return say(why, REF_ERROR, "scalar");
    int R = dense->rank;
    int64_t count = element_count(dense);
    size_t w = dense->itemsize;
    entry *e = calloc((size_t)count + 1, sizeof *e);
    int64_t n = 0;
    for (int64_t i = 0; i < count; i++) {
        const unsigned char *p = (const unsigned char *)dense->data + (size_t)i * w;
        if (ref_is_zero(p, dense->dtype, w)) continue;
        int64_t rest = i;
        for (int k = R - 1; k >= 0; k--) {
            e[n].row[k] = rest % dense->shape[k];
            rest /= dense->shape[k];
        }
        e[n++].value = p;
    }
    *out = sparse_from_entries(e, n, R, dense->shape, dense->dtype, w);
    free(e);
    return say(why, REF_OK, "valid");
}

/* ---- comparing sparse results ------------------------------------------------------------------ */

static int value_equal(const unsigned char *a, const unsigned char *b, ndx_dtype d, size_t w) {
    if (memcmp(a, b, w) == 0) return 1;
    ndx_dtype_kind k = ndx_dtype_kind_of(d);
    if (k != NDX_KIND_FLOAT && k != NDX_KIND_COMPLEX) return 0;
    /* both NaN in every part that differs */
    size_t part = d == NDX_FLOAT16 || d == NDX_BFLOAT16 ? 2 : d == NDX_FLOAT32 || d == NDX_COMPLEX64 ? 4 : 8;
    for (size_t o = 0; o < w; o += part) {
        if (memcmp(a + o, b + o, part) == 0) continue;
        double x, y;
        if (part == 2) {
            x = half_value(a + o, d);
            y = half_value(b + o, d);
        } else if (part == 4) {
            float fx, fy;
            memcpy(&fx, a + o, 4);
            memcpy(&fy, b + o, 4);
            x = fx;
            y = fy;
        } else {
            memcpy(&x, a + o, 8);
            memcpy(&y, b + o, 8);
        }
        if (!(isnan(x) && isnan(y))) return 0;
    }
    return 1;
}

int ref_sparse_equal(const ndx_sparse_tensor *got, const ndx_sparse_tensor *want, int ties,
                     char *why) {
    const ndx_tensor *gi = &got->indices, *wi = &want->indices;
    if (gi->rank != 2 || gi->shape[0] != wi->shape[0] || gi->shape[1] != wi->shape[1] ||
        !is_index_dtype(gi->dtype))
        return say(why, 0, "indices view differs"), 0;
    if (got->values.rank != 1 || got->values.shape[0] != want->values.shape[0] ||
        got->values.dtype != want->values.dtype || got->values.itemsize != want->values.itemsize)
        return say(why, 0, "values view differs"), 0;
    if (got->dense_shape.rank != 1 || got->dense_shape.shape[0] != want->dense_shape.shape[0] ||
        !is_index_dtype(got->dense_shape.dtype))
        return say(why, 0, "dense_shape view differs"), 0;
    int64_t N = wi->shape[0], R = wi->shape[1];
    for (int64_t k = 0; k < R; k++)
        if (ref_int_at(&got->dense_shape, k) != ref_int_at(&want->dense_shape, k))
            return say(why, 0, "dense_shape[%lld] differs", (long long)k), 0;
    for (int64_t i = 0; i < N * R; i++)
        if (ref_int_at(gi, i) != ref_int_at(wi, i))
            return say(why, 0, "indices element %lld differs", (long long)i), 0;
    size_t w = want->values.itemsize;
    ndx_dtype d = want->values.dtype;
    const unsigned char *gv = got->values.data, *wv = want->values.data;
    if (!ties) {
        for (int64_t i = 0; i < N; i++)
            if (!value_equal(gv + (size_t)i * w, wv + (size_t)i * w, d, w))
                return say(why, 0, "value of entry %lld differs", (long long)i), 0;
        return 1;
    }
    /* Values: within each run of equal index rows, every wanted value must be matched once. */
    unsigned char *used = calloc((size_t)N + 1, 1);
    for (int64_t lo = 0; lo < N;) {
        int64_t hi = lo + 1;
        while (hi < N) {
            int same = 1;
            for (int64_t k = 0; k < R && same; k++) same = ref_int_at(wi, hi * R + k) == ref_int_at(wi, lo * R + k);
            if (!same) break;
            hi++;
        }
        for (int64_t i = lo; i < hi; i++) {
            int found = 0;
            for (int64_t j = lo; j < hi && !found; j++)
                if (!used[j] && value_equal(gv + (size_t)j * w, wv + (size_t)i * w, d, w)) used[j] = 1, found = 1;
            if (!found) {
                free(used);
                return say(why, 0, "value of entry %lld differs", (long long)i), 0;
            }
        }
        lo = hi;
    }
    free(used);
    return 1;
}

/* ---- bincount ------------------------------------------------------------------------------- */

ref_verdict ref_bincount(const ndx_tensor *arr, int64_t size, const ndx_tensor *weights,
                         unsigned flags, ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!arr || !weights || !ref_view_ok(arr) || !ref_view_ok(weights))
        return say(why, REF_ERROR, "malformed view");
    if (flags & ~(unsigned)(NDX_BINCOUNT_DENSE | NDX_BINCOUNT_BINARY_OUTPUT))
        return say(why, REF_ERROR, "flags");
    if (arr->dtype != NDX_INT32 && arr->dtype != NDX_INT64) return say(why, REF_ERROR, "arr dtype");
    ndx_dtype wt = weights->dtype;
    if (wt != NDX_INT32 && wt != NDX_INT64 && wt != NDX_FLOAT32 && wt != NDX_FLOAT64)
        return say(why, REF_ERROR, "weights dtype");
    if (size < 0) return say(why, REF_ERROR, "negative size");
    int dense = (flags & NDX_BINCOUNT_DENSE) != 0;
    if (dense && arr->rank > 2) return say(why, REF_ERROR, "arr rank");
    int64_t n = element_count(arr), nw = element_count(weights);
    if (nw != 0) {
        if (weights->rank != arr->rank) return say(why, REF_ERROR, "weights rank");
        for (int k = 0; k < arr->rank; k++)
            if (weights->shape[k] != arr->shape[k]) return say(why, REF_ERROR, "weights shape");
    }
    int per_row = dense && arr->rank == 2;
    int64_t shape[2] = {per_row ? arr->shape[0] : size, size};
    int rank = per_row ? 2 : 1;
    if (per_row && shape[0] > 0 && size > INT64_MAX / shape[0])
        return say(why, REF_ERROR, "output elements overflow");
    if (!small_enough(wt, weights->itemsize, rank, shape)) return say(why, REF_ERROR, "output too large");
    for (int64_t i = 0; i < n; i++)
        if (ref_int_at(arr, i) < 0) return say(why, REF_ERROR, "negative value");
    *out = make(wt, weights->itemsize, rank, shape);
    int64_t cols = per_row ? arr->shape[1] : 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ref_int_at(arr, i);
        if (v >= size) continue;
        int64_t at = (per_row ? i / cols * size : 0) + v;
        int weighted = nw != 0 && !(flags & NDX_BINCOUNT_BINARY_OUTPUT);
        const unsigned char *w = weighted ? (const unsigned char *)weights->data +
                                                (size_t)i * weights->itemsize : NULL;
        unsigned char *o = (unsigned char *)out->data + (size_t)at * weights->itemsize;
        int binary = (flags & NDX_BINCOUNT_BINARY_OUTPUT) != 0;
        switch (wt) {
        case NDX_INT32: {
            int32_t a, b = 1;
            memcpy(&a, o, 4);
            if (weighted) memcpy(&b, w, 4);
            a = binary ? 1 : (int32_t)((uint32_t)a + (uint32_t)b);
            memcpy(o, &a, 4);
            break;
        }
        case NDX_INT64: {
            int64_t a, b = 1;
            memcpy(&a, o, 8);
            if (weighted) memcpy(&b, w, 8);
            a = binary ? 1 : (int64_t)((uint64_t)a + (uint64_t)b);
            memcpy(o, &a, 8);
            break;
        }
        case NDX_FLOAT32: {
            float a, b = 1;
            memcpy(&a, o, 4);
            if (weighted) memcpy(&b, w, 4);
            a = binary ? 1.0f : a + b;
            memcpy(o, &a, 4);
            break;
        }
        default: {
            double a, b = 1;
            memcpy(&a, o, 8);
            if (weighted) memcpy(&b, w, 8);
            a = binary ? 1.0 : a + b;
            memcpy(o, &a, 8);
            break;
        }
        }
    }
    return say(why, REF_OK, "valid");
}
