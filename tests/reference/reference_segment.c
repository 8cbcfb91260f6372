/* reference_segment.c — naive references for ndx.h's segment reductions (5g) and embedding bags
 * (5h), written from TensorFlow's kernels and Python functions as ndx.h describes them: one loop
 * per family, elements held as double (floats, rounded to the element type after every step,
 * which gives exactly the element type's own arithmetic: double has more than twice float's
 * bits, float more than twice float16's and bfloat16's) or as wrapped 64-bit integers. */
#include "reference.h"
#include "reference_util.h"

#include <float.h>
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

/* ---- elements as numbers ------------------------------------------------------------------- */

typedef struct num {
    double re, im; /* floats and complex */
    int64_t i;     /* integers, wrapped to their width (unsigned as their bits) */
} num;

static int kind_of(ndx_dtype dt) { return (int)ndx_dtype_kind_of(dt); }
static int is_int(ndx_dtype dt) {
    return kind_of(dt) == NDX_KIND_SIGNED || kind_of(dt) == NDX_KIND_UNSIGNED;
}
static int is_complex(ndx_dtype dt) { return kind_of(dt) == NDX_KIND_COMPLEX; }

double ref_round(ndx_dtype dt, double x) {
    switch (dt) {
    case NDX_FLOAT16: return ndx_float16_to_float(ndx_float_to_float16((float)x));
    case NDX_BFLOAT16: return ndx_bfloat16_to_float(ndx_float_to_bfloat16((float)x));
    case NDX_FLOAT32:
    case NDX_COMPLEX64: return (float)x;
    default: return x;
    }
}
#define rnd ref_round

/* v wrapped to integer dtype dt. */
static int64_t wrap(ndx_dtype dt, int64_t v) {
    switch (dt) {
    case NDX_INT8: return (int8_t)v;
    case NDX_INT16: return (int16_t)v;
    case NDX_INT32: return (int32_t)v;
    case NDX_UINT8: return (uint8_t)v;
    case NDX_UINT16: return (uint16_t)v;
    case NDX_UINT32: return (uint32_t)v;
    default: return v; /* int64, uint64: the bits */
    }
}

static num load(ndx_dtype dt, const unsigned char *p) {
    num n = {0, 0, 0};
    uint16_t h;
    float f[2];
    double d[2];
    switch (dt) {
    case NDX_INT8: n.i = *(const int8_t *)p; break;
    case NDX_INT16: { int16_t v; memcpy(&v, p, 2); n.i = v; break; }
    case NDX_INT32: { int32_t v; memcpy(&v, p, 4); n.i = v; break; }
    case NDX_INT64: memcpy(&n.i, p, 8); break;
    case NDX_UINT8: n.i = *p; break;
    case NDX_UINT16: { uint16_t v; memcpy(&v, p, 2); n.i = v; break; }
    case NDX_UINT32: { uint32_t v; memcpy(&v, p, 4); n.i = v; break; }
    case NDX_UINT64: memcpy(&n.i, p, 8); break;
    case NDX_FLOAT16: memcpy(&h, p, 2); n.re = ndx_float16_to_float(h); break;
    case NDX_BFLOAT16: memcpy(&h, p, 2); n.re = ndx_bfloat16_to_float(h); break;
    case NDX_FLOAT32: memcpy(f, p, 4); n.re = f[0]; break;
    case NDX_FLOAT64: memcpy(d, p, 8); n.re = d[0]; break;
    case NDX_COMPLEX64: memcpy(f, p, 8); n.re = f[0]; n.im = f[1]; break;
    case NDX_COMPLEX128: memcpy(d, p, 16); n.re = d[0]; n.im = d[1]; break;
    default: abort();
    }
    return n;
}

static void store(ndx_dtype dt, unsigned char *p, num n) {
    uint16_t h;
    float f[2];
    double d[2];
    switch (dt) {
    case NDX_INT8: case NDX_UINT8: *p = (unsigned char)n.i; break;
    case NDX_INT16: case NDX_UINT16: h = (uint16_t)n.i; memcpy(p, &h, 2); break;
    case NDX_INT32: case NDX_UINT32: { uint32_t v = (uint32_t)n.i; memcpy(p, &v, 4); break; }
    case NDX_INT64: case NDX_UINT64: memcpy(p, &n.i, 8); break;
    case NDX_FLOAT16: h = ndx_float_to_float16((float)n.re); memcpy(p, &h, 2); break;
    case NDX_BFLOAT16: h = ndx_float_to_bfloat16((float)n.re); memcpy(p, &h, 2); break;
    case NDX_FLOAT32: f[0] = (float)n.re; memcpy(p, f, 4); break;
    case NDX_FLOAT64: memcpy(p, &n.re, 8); break;
    case NDX_COMPLEX64: f[0] = (float)n.re; f[1] = (float)n.im; memcpy(p, f, 8); break;
    case NDX_COMPLEX128: d[0] = n.re; d[1] = n.im; memcpy(p, d, 16); break;
    default: abort();
    }
}

double ref_load_real(ndx_dtype dt, const void *p) { return load(dt, p).re; }
void ref_store_real(ndx_dtype dt, void *p, double x) { store(dt, p, (num){x, 0, 0}); }

static num add(ndx_dtype dt, num a, num b) {
    if (is_int(dt)) return (num){0, 0, wrap(dt, (int64_t)((uint64_t)a.i + (uint64_t)b.i))};
    return (num){rnd(dt, a.re + b.re), rnd(dt, a.im + b.im), 0};
}
static num mul(ndx_dtype dt, num a, num b) {
    if (is_int(dt)) return (num){0, 0, wrap(dt, (int64_t)((uint64_t)a.i * (uint64_t)b.i))};
    if (!is_complex(dt)) return (num){rnd(dt, a.re * b.re), 0, 0};
    return (num){rnd(dt, rnd(dt, a.re * b.re) - rnd(dt, a.im * b.im)),
                 rnd(dt, rnd(dt, a.re * b.im) + rnd(dt, a.im * b.re)), 0};
}
static int less(ndx_dtype dt, num a, num b) {
    if (kind_of(dt) == NDX_KIND_UNSIGNED) return (uint64_t)a.i < (uint64_t)b.i;
    if (is_int(dt)) return a.i < b.i;
    return a.re < b.re;
}
/* a / b: integers truncate (b != 0 here; INT_MIN / -1 cannot occur, b > 0), complex divides each
 * part by b's real part. */
static num divide(ndx_dtype dt, num a, num b) {
    if (kind_of(dt) == NDX_KIND_UNSIGNED) return (num){0, 0, (int64_t)((uint64_t)a.i / (uint64_t)b.i)};
    if (is_int(dt)) return (num){0, 0, wrap(dt, a.i / b.i)};
    return (num){rnd(dt, a.re / b.re), rnd(dt, a.im / b.re), 0};
}
/* T(v), as a C++ conversion: integers wrap; float16 and bfloat16 go through float. */
static num from_int(ndx_dtype dt, int64_t v) {
    if (is_int(dt)) return (num){0, 0, wrap(dt, v)};
    if (dt == NDX_FLOAT64 || dt == NDX_COMPLEX128) return (num){(double)v, 0, 0};
    return (num){rnd(dt, (double)(float)v), 0, 0};
}

/* TensorFlow's combine of a data row into what a segment holds: data.cwiseMin<PropagateNaN>(
 * output) etc.: a NaN held stays, a NaN row is taken (integers have none). */
static num combine(ndx_segment_op op, ndx_dtype dt, num cur, num x) {
    int minmax = op == NDX_SEGMENT_MIN || op == NDX_SEGMENT_MAX;
    if (minmax && !is_int(dt) && isnan(cur.re)) return cur;
    if (minmax && !is_int(dt) && isnan(x.re)) return x;
    switch (op) {
    case NDX_SEGMENT_PROD: return mul(dt, cur, x);
    case NDX_SEGMENT_MIN: return less(dt, cur, x) ? cur : x;
    case NDX_SEGMENT_MAX: return less(dt, x, cur) ? cur : x;
    default: return add(dt, cur, x);
    }
}

static num identity(ndx_segment_op op, ndx_dtype dt) {
    num n = {0, 0, 0};
    unsigned char b[16];
    if (op == NDX_SEGMENT_PROD) return from_int(dt, 1);
    if (op != NDX_SEGMENT_MIN && op != NDX_SEGMENT_MAX) return n;
    int hi = op == NDX_SEGMENT_MIN;
    switch (dt) {
    case NDX_INT8: n.i = hi ? INT8_MAX : INT8_MIN; break;
    case NDX_INT16: n.i = hi ? INT16_MAX : INT16_MIN; break;
    case NDX_INT32: n.i = hi ? INT32_MAX : INT32_MIN; break;
    case NDX_INT64: n.i = hi ? INT64_MAX : INT64_MIN; break;
    case NDX_UINT8: n.i = hi ? UINT8_MAX : 0; break;
    case NDX_UINT16: n.i = hi ? UINT16_MAX : 0; break;
    case NDX_UINT32: n.i = hi ? UINT32_MAX : 0; break;
    case NDX_UINT64: n.i = hi ? -1 : 0; break;
    case NDX_FLOAT16: n.re = hi ? 65504.0 : -65504.0; break;
    case NDX_BFLOAT16: {
        uint16_t bits = hi ? 0x7f7f : 0xff7f;
        memcpy(b, &bits, 2);
        n = load(dt, b);
        break;
    }
    case NDX_FLOAT32: n.re = hi ? FLT_MAX : -FLT_MAX; break;
    case NDX_FLOAT64: n.re = hi ? DBL_MAX : -DBL_MAX; break;
    default: abort();
    }
    return n;
}

int ref_segment_supports(ref_segment_family family, ndx_segment_op op, ndx_dtype dt) {
    if ((int)dt < 0 || dt >= NDX_DTYPE_COUNT) return 0;
    int real = is_int(dt) || kind_of(dt) == NDX_KIND_FLOAT, cx = is_complex(dt);
    int fl = kind_of(dt) == NDX_KIND_FLOAT;
    if (family == REF_SPARSE)
        return op == NDX_SEGMENT_SUM ? real : (op == NDX_SEGMENT_MEAN || op == NDX_SEGMENT_SQRT_N) && fl;
    switch (op) {
    case NDX_SEGMENT_SUM:
    case NDX_SEGMENT_PROD: return real || cx;
    case NDX_SEGMENT_MIN:
    case NDX_SEGMENT_MAX: return real;
    case NDX_SEGMENT_MEAN: return family == REF_SORTED ? real || cx : fl;
    case NDX_SEGMENT_SQRT_N: return family == REF_UNSORTED && fl;
    }
    return 0;
}

/* ---- the fills: valid inputs, out's view given ------------------------------------------------ */

static unsigned char *row_of(const ndx_tensor *t, int64_t r, int64_t slice) {
    return (unsigned char *)t->data + (size_t)(r * slice) * t->itemsize;
}

/* tf.math.unsorted_segment_<op>: identity, combine in index order; MEAN and SQRT_N as TF's
 * Python: the SUM over max(sum of ones in the dtype, 1), or over its sqrt. */
void ref_unsorted_segment_fill(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                               ndx_tensor *out) {
    ndx_dtype dt = data->dtype;
    int64_t rows = ref_count_of(ids->rank, ids->shape), segs = out->shape[0];
    int64_t slice = segs ? ref_count_of(out->rank, out->shape) / segs : 0;
    if (slice == 0) return; /* nothing to write (the rows may be many) */
    num *acc = calloc((size_t)(segs * slice + 1), sizeof *acc);
    num *n = calloc((size_t)segs + 1, sizeof *n);
    for (int64_t k = 0; k < segs * slice; k++) acc[k] = identity(op, dt);
    for (int64_t s = 0; s < segs; s++) n[s] = from_int(dt, 0);
    for (int64_t r = 0; r < rows && slice > 0; r++) {
        int64_t s = ref_int_at(ids, r);
        if (s < 0) continue;
        for (int64_t e = 0; e < slice; e++)
            acc[s * slice + e] = combine(op, dt, acc[s * slice + e], load(dt, row_of(data, r, slice) + e * data->itemsize));
        n[s] = add(dt, n[s], from_int(dt, 1));
    }
    for (int64_t s = 0; s < segs; s++)
        for (int64_t e = 0; e < slice; e++) {
            num v = acc[s * slice + e];
            if (op == NDX_SEGMENT_MEAN || op == NDX_SEGMENT_SQRT_N) {
                num d = n[s].re < 1 ? from_int(dt, 1) : n[s];
                if (op == NDX_SEGMENT_SQRT_N) d.re = rnd(dt, sqrt(d.re));
                v = divide(dt, v, d);
            }
            store(dt, row_of(out, s, slice) + e * out->itemsize, v);
        }
    free(acc);
    free(n);
}

/* tf.math.segment_<op> (Eigen's reducers): one row copied; MIN/MAX from the first row; SUM,
 * MEAN, PROD from 0 / 1 over every row, MEAN over T(n); gaps 0 (PROD 1). The ids are sorted, so
 * each segment is one run of rows. */
void ref_segment_fill(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                      ndx_tensor *out) {
    ndx_dtype dt = data->dtype;
    int64_t rows = ref_count_of(ids->rank, ids->shape), segs = out->shape[0];
    int64_t slice = segs ? ref_count_of(out->rank, out->shape) / segs : 0;
    for (int64_t s = 0, first = 0; s < segs && slice > 0; s++) {
        while (first < rows && ref_int_at(ids, first) < s) first++;
        int64_t count = 0;
        while (first + count < rows && ref_int_at(ids, first + count) == s) count++;
        for (int64_t e = 0; e < slice; e++) {
            num v;
            if (count == 0) {
                v = from_int(dt, op == NDX_SEGMENT_PROD ? 1 : 0);
            } else if (count == 1) {
                v = load(dt, row_of(data, first, slice) + e * data->itemsize);
            } else {
                int minmax = op == NDX_SEGMENT_MIN || op == NDX_SEGMENT_MAX;
                v = minmax ? load(dt, row_of(data, first, slice) + e * data->itemsize)
                           : from_int(dt, op == NDX_SEGMENT_PROD ? 1 : 0);
                for (int64_t r = first + minmax; r < first + count; r++)
                    v = combine(op, dt, v, load(dt, row_of(data, r, slice) + e * data->itemsize));
                if (op == NDX_SEGMENT_MEAN) v = divide(dt, v, from_int(dt, count));
            }
            store(dt, row_of(out, s, slice) + e * out->itemsize, v);
        }
    }
}

/* tf.sparse.segment_<op>, SparseSegmentReductionOpBase::ReduceImpl written out: the accumulator
 * is float for the half types; n == 1 copies; else the first num % 8 rows (8 for 0, 9 for 1),
 * times 1 / m for MEAN and SQRT_N when num < 10, then 8 rows at a time summed apart and added,
 * and a division by m from num = 10 on (m = num or sqrt(num)). `src` holds the data row of each
 * id position, `seg` its (sorted) segment. */
static void sparse_fill(ndx_segment_op op, const ndx_tensor *data, const int64_t *src,
                        const int64_t *seg, int64_t rows, ndx_tensor *out) {
    ndx_dtype dt = data->dtype;
    ndx_dtype at = dt == NDX_FLOAT16 || dt == NDX_BFLOAT16 ? NDX_FLOAT32 : dt;
    int64_t segs = out->shape[0];
    int64_t slice = segs ? ref_count_of(out->rank, out->shape) / segs : 0;
    for (int64_t s = 0, first = 0; s < segs && slice > 0; s++) {
        while (first < rows && seg[first] < s) first++;
        int64_t num_ = 0;
        while (first + num_ < rows && seg[first + num_] == s) num_++;
        const int64_t *run = src + first;
        for (int64_t e = 0; e < slice; e++) {
#define L(q) load(dt, row_of(data, run[q], slice) + e * data->itemsize)
            num v = from_int(at, 0);
            if (num_ == 1) {
                v = L(0);
            } else if (num_ > 1) {
                int64_t r = num_ % 8;
                if (r == 0) r = 8;
                if (r == 1) r = 9;
                v = L(0);
                for (int64_t q = 1; q < r; q++) v = add(at, v, L(q));
                int scaled = op != NDX_SEGMENT_SUM;
                double m = op == NDX_SEGMENT_MEAN ? rnd(at, (double)num_) : rnd(at, sqrt((double)num_));
                if (scaled && num_ < 10) v = mul(at, v, (num){rnd(at, 1.0 / m), 0, 0});
                for (; r < num_; r += 8) {
                    num part = L(r);
                    for (int64_t q = 1; q < 8; q++) part = add(at, part, L(r + q));
                    v = add(at, v, part);
                }
                if (scaled && num_ >= 10) v = divide(at, v, (num){m, 0, 0});
            }
#undef L
            store(dt, row_of(out, s, slice) + e * out->itemsize, v);
        }
    }
}

/* Reads an index tensor of n elements into int64 (NULL for n == 0 is fine: never read). */
static int64_t *read_all(const ndx_tensor *t, int64_t n) {
    int64_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) abort();
    for (int64_t i = 0; i < n; i++) v[i] = ref_int_at(t, i);
    return v;
}

void ref_sparse_segment_fill(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *indices,
                             const ndx_tensor *ids, ndx_tensor *out) {
    int64_t rows = ref_count_of(ids->rank, ids->shape);
    int64_t *src = read_all(indices, rows), *seg = read_all(ids, rows);
    sparse_fill(op, data, src, seg, rows, out);
    free(src);
    free(seg);
}

/* ---- verdicts --------------------------------------------------------------------------------- */

static int id_dtype(ndx_dtype d) { return d == NDX_INT32 || d == NDX_INT64; }

/* out = [rows] + data.shape[from:] of data's dtype, zeroed; 0 when it is too large to build. */
static int make_rows(const ndx_tensor *data, int from, int64_t rows, ndx_tensor *out) {
    memset(out, 0, sizeof *out);
    out->dtype = data->dtype;
    out->itemsize = data->itemsize;
    out->rank = 1 + data->rank - from;
    if (out->rank > NDX_MAX_RANK) return 0;
    out->shape[0] = rows;
    for (int k = from; k < data->rank; k++) out->shape[1 + k - from] = data->shape[k];
    int64_t c = ref_count_of(out->rank, out->shape);
    size_t bytes;
    if (c < 0 || __builtin_mul_overflow((size_t)c, out->itemsize, &bytes) || bytes > REF_MAX_BYTES)
        return 0;
    out->data = calloc(1, bytes ? bytes : 1);
    return out->data != NULL;
}

/* Sorted ids of n entries (>= 0, non-decreasing): 1 and *rows = last + 1 (0 without ids). */
static int sorted_ids(const ndx_tensor *ids, int64_t n, int64_t *rows, char *why, const char *op) {
    int64_t prev = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ref_int_at(ids, i);
        if (v < 0) return say(why, REF_ERROR, "%s: segment_ids[%lld] < 0", op, (long long)i), 0;
        if (v < prev) return say(why, REF_ERROR, "%s: ids decrease at %lld", op, (long long)i), 0;
        prev = v;
    }
    if (n > 0 && prev == INT64_MAX) return say(why, REF_ERROR, "%s: last id + 1 overflows", op), 0;
    *rows = n > 0 ? prev + 1 : 0;
    return 1;
}

ref_verdict ref_unsorted_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                        const ndx_tensor *ids, int64_t num_segments,
                                        ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!data || !ids || !ref_view_ok(data) || !ref_view_ok(ids)) return say(why, REF_ERROR, "malformed view");
    if (!ref_segment_supports(REF_UNSORTED, op, data->dtype)) return say(why, REF_ERROR, "op/dtype unsupported");
    if (!id_dtype(ids->dtype)) return say(why, REF_ERROR, "segment_ids dtype");
    if (ids->rank > data->rank) return say(why, REF_ERROR, "ids rank above data's");
    for (int k = 0; k < ids->rank; k++)
        if (ids->shape[k] != data->shape[k]) return say(why, REF_ERROR, "ids dim %d differs", k);
    if (num_segments < 0) return say(why, REF_ERROR, "negative num_segments");
    if (ref_count_of(data->rank, data->shape) > 0) {
        int64_t n = ref_count_of(ids->rank, ids->shape);
        for (int64_t i = 0; i < n; i++)
            if (ref_int_at(ids, i) >= num_segments) return say(why, REF_ERROR, "id %lld out of range", (long long)i);
    }
    if (!make_rows(data, ids->rank, num_segments, out)) return say(why, REF_ERROR, "output too large");
    ref_unsorted_segment_fill(op, data, ids, out);
    return say(why, REF_OK, "valid");
}

ref_verdict ref_segment_reduce(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                               ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!data || !ids || !ref_view_ok(data) || !ref_view_ok(ids)) return say(why, REF_ERROR, "malformed view");
    if (!ref_segment_supports(REF_SORTED, op, data->dtype)) return say(why, REF_ERROR, "op/dtype unsupported");
    if (!id_dtype(ids->dtype)) return say(why, REF_ERROR, "segment_ids dtype");
    if (data->rank < 1 || ids->rank != 1 || ids->shape[0] != data->shape[0])
        return say(why, REF_ERROR, "shapes");
    int64_t rows;
    if (!sorted_ids(ids, ids->shape[0], &rows, why, "segment")) return REF_ERROR;
    if (!make_rows(data, 1, rows, out)) return say(why, REF_ERROR, "output too large");
    ref_segment_fill(op, data, ids, out);
    return say(why, REF_OK, "valid");
}

ref_verdict ref_sparse_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                      const ndx_tensor *indices, const ndx_tensor *ids,
                                      int64_t num_segments, ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!data || !ids || !indices || !ref_view_ok(data) || !ref_view_ok(ids) || !ref_view_ok(indices))
        return say(why, REF_ERROR, "malformed view");
    if (!ref_segment_supports(REF_SPARSE, op, data->dtype)) return say(why, REF_ERROR, "op/dtype unsupported");
    if (!id_dtype(ids->dtype) || !id_dtype(indices->dtype)) return say(why, REF_ERROR, "index dtype");
    if (data->rank < 1 || ids->rank != 1 || indices->rank != 1 || ids->shape[0] != indices->shape[0])
        return say(why, REF_ERROR, "shapes");
    int64_t n = ids->shape[0], rows;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ref_int_at(indices, i);
        if (v < 0 || v >= data->shape[0]) return say(why, REF_ERROR, "indices[%lld] out of range", (long long)i);
    }
    if (!sorted_ids(ids, n, &rows, why, "sparse_segment")) return REF_ERROR;
    ref_verdict v = REF_OK;
    if (num_segments >= 0) {
        if (rows > num_segments) return say(why, REF_ERROR, "an id >= num_segments");
        rows = num_segments;
    } else if (num_segments != NDX_SEGMENTS_FROM_IDS) {
        v = REF_EITHER; /* ndx.h: any negative count means "from the ids"; TensorFlow has none */
    }
    if (!make_rows(data, 1, rows, out)) return say(why, REF_ERROR, "output too large");
    ref_sparse_segment_fill(op, data, indices, ids, out);
    return say(why, v, "valid");
}

/* ---- embedding bags --------------------------------------------------------------------------- */

static double get_real(const ndx_tensor *t, int64_t i) {
    return load(t->dtype, (const unsigned char *)t->data + (size_t)i * t->itemsize).re;
}

/* x rounded to the accumulator type of dtype dt. */
static double acc_round(ndx_dtype dt, double x) { return dt == NDX_FLOAT64 ? x : (double)(float)x; }

/* TensorFlow's embedding_lookup_sparse, one step at a time in the accumulator type (the rows
 * clipped, weighted, added in id order). seg: each id's bag, non-decreasing. */
static void bag_fill_stepwise(const ndx_tensor *params, const int64_t *id, const int64_t *seg,
                              int64_t n, const ndx_tensor *weights, ndx_segment_op combiner,
                              double max_norm, ndx_tensor *want) {
    ndx_dtype dt = params->dtype;
    int64_t rows = want->shape[0], d = rows ? ref_count_of(want->rank, want->shape) / rows : 0;
    double *acc = malloc((size_t)(d > 0 ? d : 1) * sizeof *acc);
    if (!acc) abort();
    double mn = ref_round(dt, max_norm); /* TensorFlow converts max_norm to the table's dtype */
    for (int64_t r = 0, i = 0; r < rows && d > 0; r++) {
        double wsum = 0;
        for (int64_t k = 0; k < d; k++) acc[k] = 0;
        while (i < n && seg[i] < r) i++;
        for (; i < n && seg[i] == r; i++) {
            double w = weights ? get_real(weights, i) : 1, den = 0;
            if (max_norm >= 0) {
                double l2 = 0;
                for (int64_t k = 0; k < d; k++) {
                    double x = get_real(params, id[i] * d + k);
                    l2 = acc_round(dt, l2 + acc_round(dt, x * x));
                }
                double norm = l2 > 0 ? acc_round(dt, sqrt(l2)) : l2;
                den = norm > mn ? norm : mn;
            }
            for (int64_t k = 0; k < d; k++) {
                double x = get_real(params, id[i] * d + k);
                if (max_norm >= 0) x = acc_round(dt, acc_round(dt, x * mn) / den);
                acc[k] = acc_round(dt, acc[k] + acc_round(dt, w * x));
            }
            double term = combiner == NDX_SEGMENT_SQRT_N ? acc_round(dt, w * w) : w;
            wsum = acc_round(dt, wsum + term);
        }
        double div = combiner == NDX_SEGMENT_SQRT_N ? acc_round(dt, sqrt(wsum)) : wsum;
        for (int64_t k = 0; k < d; k++) {
            double v = acc[k];
            if (combiner != NDX_SEGMENT_SUM) v = div == 0 ? 0 : acc_round(dt, v / div);
            ref_store_real(dt, (unsigned char *)want->data + (size_t)(r * d + k) * want->itemsize, v);
        }
    }
    free(acc);
}

void ref_embedding_bag_fill(const ndx_tensor *params, const ndx_tensor *ids, const int64_t *seg,
                            const ndx_tensor *weights, ndx_segment_op combiner, double max_norm,
                            ndx_tensor *want) {
    int64_t n = ids->shape[0];
    int64_t *id = read_all(ids, n);
    if (!weights && max_norm < 0) /* ndx.h: then exactly sparse_segment_<combiner> */
        sparse_fill(combiner, params, id, seg, n, want);
    else
        bag_fill_stepwise(params, id, seg, n, weights, combiner, max_norm, want);
    free(id);
}

ref_verdict ref_embedding_bag(const ndx_tensor *params, const ndx_tensor *ids,
                              const ndx_tensor *bags, const ndx_tensor *weights,
                              const ndx_embedding_bag_attrs *attrs, ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!params || !ids || !bags || !attrs || !ref_view_ok(params) || !ref_view_ok(ids) ||
        !ref_view_ok(bags) || (weights && !ref_view_ok(weights)))
        return say(why, REF_ERROR, "malformed view or NULL");
    ndx_dtype dt = params->dtype;
    if (kind_of(dt) != NDX_KIND_FLOAT || params->rank < 1) return say(why, REF_ERROR, "params");
    if (!id_dtype(ids->dtype) || !id_dtype(bags->dtype) || ids->rank != 1 || bags->rank != 1)
        return say(why, REF_ERROR, "ids or bags");
    ndx_segment_op c = attrs->combiner;
    if (c != NDX_SEGMENT_SUM && c != NDX_SEGMENT_MEAN && c != NDX_SEGMENT_SQRT_N)
        return say(why, REF_ERROR, "combiner");
    if (attrs->form != NDX_BAGS_SEGMENT_IDS && attrs->form != NDX_BAGS_OFFSETS)
        return say(why, REF_ERROR, "form");
    int64_t n = ids->shape[0], count = bags->shape[0], V = params->shape[0], rows;
    if (weights && (weights->dtype != dt || weights->rank != 1 || weights->shape[0] != n))
        return say(why, REF_ERROR, "weights");
    if (isnan(attrs->max_norm)) return say(why, REF_EITHER, "NaN max_norm (ndx.h does not say)");
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ref_int_at(ids, i);
        if (v < 0 || v >= V) return say(why, REF_ERROR, "ids[%lld] out of range", (long long)i);
    }
    int64_t *seg = malloc((size_t)(n > 0 ? n : 1) * sizeof *seg);
    if (!seg) abort();
    ref_verdict v = REF_OK;
    if (attrs->form == NDX_BAGS_SEGMENT_IDS) {
        if (count != n) return free(seg), say(why, REF_ERROR, "one segment id per id");
        if (!sorted_ids(bags, n, &rows, why, "embedding_bag")) return free(seg), REF_ERROR;
        for (int64_t i = 0; i < n; i++) seg[i] = ref_int_at(bags, i);
        if (attrs->num_bags >= 0) {
            if (rows > attrs->num_bags) return free(seg), say(why, REF_ERROR, "id >= num_bags");
            rows = attrs->num_bags;
        } else if (attrs->num_bags != NDX_SEGMENTS_FROM_IDS) {
            v = REF_EITHER;
        }
    } else {
        for (int64_t b = 0; b < count; b++) {
            int64_t o = ref_int_at(bags, b);
            if ((b == 0 && o != 0) || o < 0 || o > n || (b > 0 && o < ref_int_at(bags, b - 1)))
                return free(seg), say(why, REF_ERROR, "offsets[%lld] = %lld", (long long)b, (long long)o);
        }
        if (count == 0 && n > 0) v = REF_EITHER; /* ids in no bag: ndx.h does not say */
        for (int64_t b = 0; b < count; b++) {
            int64_t end = b + 1 < count ? ref_int_at(bags, b + 1) : n;
            for (int64_t i = ref_int_at(bags, b); i < end; i++) seg[i] = b;
        }
        for (int64_t i = 0; count == 0 && i < n; i++) seg[i] = 0;
        rows = count;
    }
    if (!make_rows(params, 1, rows, out)) return free(seg), say(why, REF_ERROR, "output too large");
    if (count > 0 || attrs->form == NDX_BAGS_SEGMENT_IDS)
        ref_embedding_bag_fill(params, ids, seg, weights, c, attrs->max_norm, out);
    free(seg);
    return say(why, v, "valid");
}
