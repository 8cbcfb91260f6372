/* test_segment_reduce.c — unsorted_segment_*, segment_* and sparse_segment_* against a naive
 * reference written here from TensorFlow's kernels and Python functions: one loop per family,
 * elements held as double (floats, rounded to the element type after every step, which gives
 * exactly the element type's own arithmetic: double has more than twice float's bits, float more
 * than twice float16's and bfloat16's) or as wrapped 64-bit integers, compared bitwise. Floats
 * are random with fractions, so the order of every sum shows. Also: TensorFlow's documented
 * examples, the empty-segment traps (MIN/MAX fill with the finite extremes, sorted gaps 0),
 * every dtype and op TensorFlow registers and the refusal of the rest, rank-k ids, negative ids,
 * every error leaving the output untouched, the same bits at 1, 2 and 3 threads on inputs large
 * enough for the parallel paths, the memory budget, sizes that overflow, infer against the ops,
 * and ids mutated by another thread during calls. */
#include "contract.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>

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

/* x rounded to real dtype dt. */
static double rnd(ndx_dtype dt, double x) {
    switch (dt) {
    case NDX_FLOAT16: return ndx_float16_to_float(ndx_float_to_float16((float)x));
    case NDX_BFLOAT16: return ndx_bfloat16_to_float(ndx_float_to_bfloat16((float)x));
    case NDX_FLOAT32:
    case NDX_COMPLEX64: return (float)x;
    default: return x;
    }
}

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
    default: fail_msg("load: dtype %d", (int)dt);
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
    default: fail_msg("store: dtype %d", (int)dt);
    }
}

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
/* a / b: integers truncate (b != 0 here), complex divides each part by b's real part. */
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
    default: fail_msg("identity: dtype %d", (int)dt);
    }
    return n;
}

/* ---- the references --------------------------------------------------------------------------- */

static unsigned char *row_of(const ndx_tensor *t, int64_t r, int64_t slice) {
    return (unsigned char *)t->data + (size_t)(r * slice) * t->itemsize;
}

/* tf.math.unsorted_segment_<op>: identity, combine in index order; MEAN and SQRT_N as TF's
 * Python: the SUM over max(sum of ones in the dtype, 1), or over its sqrt. */
static void ref_unsorted(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                         ndx_tensor *out) {
    ndx_dtype dt = data->dtype;
    int64_t rows = test_count(ids), segs = out->shape[0];
    int64_t slice = segs ? test_count(out) / segs : 0;
    num *acc = calloc((size_t)(segs * slice + 1), sizeof *acc);
    num *n = calloc((size_t)segs + 1, sizeof *n);
    for (int64_t k = 0; k < segs * slice; k++) acc[k] = identity(op, dt);
    for (int64_t s = 0; s < segs; s++) n[s] = from_int(dt, 0);
    for (int64_t r = 0; r < rows && slice > 0; r++) {
        int64_t s = test_get_index(ids, r);
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
 * MEAN, PROD from 0 / 1 over every row, MEAN over T(n); gaps 0 (PROD 1). */
static void ref_sorted(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                       ndx_tensor *out) {
    ndx_dtype dt = data->dtype;
    int64_t rows = test_count(ids), segs = out->shape[0];
    int64_t slice = segs ? test_count(out) / segs : 0;
    for (int64_t s = 0; s < segs; s++) {
        int64_t first = -1, count = 0;
        for (int64_t r = 0; r < rows; r++)
            if (test_get_index(ids, r) == s) {
                if (first < 0) first = r;
                count++;
            }
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
 * and a division by m from num = 10 on (m = num or sqrt(num)). */
static void ref_sparse(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *indices,
                       const ndx_tensor *ids, ndx_tensor *out) {
    ndx_dtype dt = data->dtype;
    ndx_dtype at = dt == NDX_FLOAT16 || dt == NDX_BFLOAT16 ? NDX_FLOAT32 : dt;
    int64_t rows = test_count(ids), segs = out->shape[0];
    int64_t slice = segs ? test_count(out) / segs : 0;
    for (int64_t s = 0; s < segs; s++) {
        int64_t src[4096], num_ = 0;
        for (int64_t r = 0; r < rows; r++)
            if (test_get_index(ids, r) == s) src[num_++] = test_get_index(indices, r);
        for (int64_t e = 0; e < slice; e++) {
#define L(q) load(dt, row_of(data, src[q], slice) + e * data->itemsize)
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

/* ---- inputs ---------------------------------------------------------------------------------- */

static const ndx_dtype numeric[] = {NDX_INT8,    NDX_INT16,   NDX_INT32,    NDX_INT64,
                                    NDX_UINT8,   NDX_UINT16,  NDX_UINT32,   NDX_UINT64,
                                    NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                    NDX_COMPLEX64, NDX_COMPLEX128};
enum { NUMERIC = 14 };

/* Integers small; floats random in [-4, 4) with every bit of the dtype's significand, so the
 * order of a sum shows in its result. */
static void fill_values(test_rng *r, ndx_tensor *t) {
    if (is_int(t->dtype)) {
        test_fill_random(r, t);
        return;
    }
    int64_t n = test_count(t) * (is_complex(t->dtype) ? 2 : 1);
    ndx_dtype part = t->dtype == NDX_COMPLEX64 ? NDX_FLOAT32
                     : t->dtype == NDX_COMPLEX128 ? NDX_FLOAT64 : t->dtype;
    size_t w = is_complex(t->dtype) ? t->itemsize / 2 : t->itemsize;
    for (int64_t i = 0; i < n; i++) {
        double x = (double)(rng_next(r) >> 11) / 9007199254740992.0 * 8.0 - 4.0;
        store(part, (unsigned char *)t->data + (size_t)i * w, (num){rnd(part, x), 0, 0});
    }
}

/* Which (family, op, dtype) TensorFlow registers on CPU (an independent copy of the table). */
enum { UNSORTED, SORTED, SPARSE };
static int registered(int family, ndx_segment_op op, ndx_dtype dt) {
    int real = is_int(dt) || kind_of(dt) == NDX_KIND_FLOAT, cx = is_complex(dt);
    int fl = kind_of(dt) == NDX_KIND_FLOAT;
    if (family == SPARSE)
        return op == NDX_SEGMENT_SUM ? real : (op == NDX_SEGMENT_MEAN || op == NDX_SEGMENT_SQRT_N) && fl;
    switch (op) {
    case NDX_SEGMENT_SUM:
    case NDX_SEGMENT_PROD: return real || cx;
    case NDX_SEGMENT_MIN:
    case NDX_SEGMENT_MAX: return real;
    case NDX_SEGMENT_MEAN: return family == SORTED ? real || cx : fl;
    case NDX_SEGMENT_SQRT_N: return family == UNSORTED && fl;
    }
    return 0;
}

static ndx_status run_family(int family, ndx_segment_op op, const ndx_tensor *data,
                             const ndx_tensor *indices, const ndx_tensor *ids, int64_t nseg,
                             const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    switch (family) {
    case UNSORTED: return ndx_unsorted_segment_reduce(op, data, ids, nseg, opt, out, err);
    case SORTED: return ndx_segment_reduce(op, data, ids, opt, out, err);
    default: return ndx_sparse_segment_reduce(op, data, indices, ids, nseg, opt, out, err);
    }
}

/* A random case of `family`: data [rows, ...] (unsorted: ids of rank 0 to 2 over data's first
 * dims), ids, indices (sparse), num_segments, and the expected output from the reference. */
typedef struct seg_case {
    ndx_tensor data, ids, indices, want;
    int64_t num;
} seg_case;

static void case_free(seg_case *c) {
    test_tensor_free(&c->data);
    test_tensor_free(&c->ids);
    test_tensor_free(&c->indices);
    test_tensor_free(&c->want);
}

static void make_case(test_rng *r, int family, ndx_segment_op op, ndx_dtype dt, ndx_dtype id_dt,
                      int64_t max_rows, seg_case *c) {
    memset(c, 0, sizeof *c);
    int64_t shape[NDX_MAX_RANK];
    int k = family == UNSORTED ? (int)rng_range(r, 0, 2) : 1;
    int rest = (int)rng_range(r, 0, 2);
    for (int i = 0; i < k; i++) shape[i] = rng_range(r, 0, i == 0 ? max_rows : 3);
    if (k == 1 && rng_below(r, 4)) shape[0] = rng_range(r, 1, max_rows); /* mostly rows */
    for (int i = 0; i < rest; i++) shape[k + i] = rng_range(r, rng_below(r, 8) ? 1 : 0, 3);
    int64_t rows = 1;
    for (int i = 0; i < k; i++) rows *= shape[i];
    c->num = rng_range(r, 0, 8);
    if (family == SPARSE) {
        int64_t data_rows = rng_range(r, 1, 6), n = rng_range(r, 0, max_rows);
        int64_t dshape[NDX_MAX_RANK];
        dshape[0] = data_rows;
        for (int i = 0; i < rest; i++) dshape[1 + i] = shape[k + i];
        c->data = test_tensor(dt, 0, 1 + rest, dshape);
        c->indices = test_tensor_v(id_dt, 0, 1, n);
        test_fill_indices(r, &c->indices, 0, data_rows - 1);
        c->ids = test_tensor_v(rng_below(r, 2) ? NDX_INT32 : NDX_INT64, 0, 1, n);
        rows = n;
    } else {
        c->data = test_tensor(dt, 0, k + rest, shape);
        c->ids = test_tensor(id_dt, 0, k, shape);
    }
    fill_values(r, &c->data);
    int64_t id = 0;
    for (int64_t i = 0; i < rows; i++) {
        if (family == UNSORTED) {
            test_set_index(&c->ids, i, c->num ? rng_range(r, -2, c->num - 1) : rng_range(r, -3, -1));
        } else {
            id += rng_below(r, 3) == 0 ? rng_range(r, 1, 3) : 0; /* runs, with gaps */
            test_set_index(&c->ids, i, id);
        }
    }
    if (family == SPARSE) {
        if (rng_below(r, 2))
            c->num = NDX_SEGMENTS_FROM_IDS;
        else
            c->num = (rows ? id + 1 : 0) + rng_range(r, 0, 2);
    }
    int64_t out_rows = family == UNSORTED ? c->num
                       : family == SPARSE && c->num >= 0 ? c->num
                                                          : (rows ? id + 1 : 0);
    int64_t oshape[NDX_MAX_RANK];
    oshape[0] = out_rows;
    for (int i = 0; i < rest; i++) oshape[1 + i] = shape[k + i];
    c->want = test_tensor(dt, 0, 1 + rest, oshape);
    if (family == UNSORTED) ref_unsorted(op, &c->data, &c->ids, &c->want);
    else if (family == SORTED) ref_sorted(op, &c->data, &c->ids, &c->want);
    else ref_sparse(op, &c->data, &c->indices, &c->ids, &c->want);
}

/* ---- every family, op, dtype and id dtype against the reference -------------------------------- */

static void random_against_reference(void **state) {
    (void)state;
    test_rng r = {20261129};
    int checked = 0;
    for (int family = UNSORTED; family <= SPARSE; family++)
        for (int op = NDX_SEGMENT_SUM; op <= NDX_SEGMENT_SQRT_N; op++)
            for (int d = 0; d < NUMERIC; d++) {
                if (!registered(family, (ndx_segment_op)op, numeric[d])) continue;
                for (int trial = 0; trial < 12; trial++) {
                    seg_case c;
                    ndx_dtype id_dt = trial % 2 ? NDX_INT64 : NDX_INT32;
                    make_case(&r, family, (ndx_segment_op)op, numeric[d], id_dt, trial < 8 ? 12 : 40, &c);
                    ndx_tensor out = {0};
                    ndx_error err;
                    ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
                    ndx_status s = run_family(family, (ndx_segment_op)op, &c.data, &c.indices,
                                              &c.ids, c.num, &opt, &out, &err);
                    if (s != NDX_OK)
                        fail_msg("family %d op %s dtype %s: %s", family,
                                 ndx_segment_op_name((ndx_segment_op)op),
                                 ndx_dtype_name(numeric[d]), err.message);
                    assert_tensor_eq(&out, &c.want);
                    /* Into a caller's buffer too. */
                    ndx_tensor mine = test_tensor(c.want.dtype, 0, c.want.rank, c.want.shape);
                    assert_ok(run_family(family, (ndx_segment_op)op, &c.data, &c.indices, &c.ids,
                                         c.num, &opt, &mine, &err),
                              &err);
                    assert_tensor_eq(&mine, &c.want);
                    test_tensor_free(&mine);
                    ndx_tensor_free(&out);
                    case_free(&c);
                    checked++;
                }
            }
    assert_true(checked > 500);
}

/* Everything TensorFlow does not register is refused, before anything is written. */
static void unregistered_dtypes_refused(void **state) {
    (void)state;
    const ndx_dtype all[] = {NDX_BOOL, NDX_INT8, NDX_INT16, NDX_INT32, NDX_INT64, NDX_UINT8,
                             NDX_UINT16, NDX_UINT32, NDX_UINT64, NDX_FLOAT16, NDX_BFLOAT16,
                             NDX_FLOAT32, NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128, NDX_STRING};
    for (int family = UNSORTED; family <= SPARSE; family++)
        for (int op = NDX_SEGMENT_SUM; op <= NDX_SEGMENT_SQRT_N; op++)
            for (int d = 0; d < 16; d++) {
                ndx_tensor data = test_tensor_v(all[d], all[d] == NDX_STRING ? 3 : 0, 2, 2, 2);
                ndx_tensor ids = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 1});
                ndx_tensor idx = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 1});
                ndx_tensor out = {0};
                ndx_error err;
                ndx_status s = run_family(family, (ndx_segment_op)op, &data, &idx, &ids, 2, NULL,
                                          &out, &err);
                if (registered(family, (ndx_segment_op)op, all[d])) {
                    assert_ok(s, &err);
                    ndx_tensor_free(&out);
                } else {
                    assert_true(s == NDX_E_UNSUPPORTED || s == NDX_E_INVALID_ARGUMENT);
                    assert_null(out.data);
                }
                test_tensor_free(&data);
                test_tensor_free(&ids);
                test_tensor_free(&idx);
            }
}

/* ---- TensorFlow's documented examples ---------------------------------------------------------- */

static void expect_i32(int family, ndx_segment_op op, const ndx_tensor *data,
                       const ndx_tensor *indices, const ndx_tensor *ids, int64_t nseg, int rows,
                       const int32_t *want) {
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(run_family(family, op, data, indices, ids, nseg, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], rows);
    assert_int_equal(out.shape[1], 4);
    assert_memory_equal(out.data, want, (size_t)rows * 4 * sizeof(int32_t));
    ndx_tensor_free(&out);
}

static void tensorflow_doc_examples(void **state) {
    (void)state;
    /* tf.math.unsorted_segment_sum's: c = [[1,2,3,4],[5,6,7,8],[4,3,2,1]], ids [0,1,0], 2. */
    ndx_tensor c = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){3, 4},
                                    (int32_t[]){1, 2, 3, 4, 5, 6, 7, 8, 4, 3, 2, 1});
    ndx_tensor u = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 1, 0});
    expect_i32(UNSORTED, NDX_SEGMENT_SUM, &c, NULL, &u, 2, 2,
               (int32_t[]){5, 5, 5, 5, 5, 6, 7, 8});
    /* unsorted_segment_max / min / prod: the same data. */
    expect_i32(UNSORTED, NDX_SEGMENT_MAX, &c, NULL, &u, 2, 2, (int32_t[]){4, 3, 3, 4, 5, 6, 7, 8});
    expect_i32(UNSORTED, NDX_SEGMENT_MIN, &c, NULL, &u, 2, 2, (int32_t[]){1, 2, 2, 1, 5, 6, 7, 8});
    expect_i32(UNSORTED, NDX_SEGMENT_PROD, &c, NULL, &u, 2, 2, (int32_t[]){4, 6, 6, 4, 5, 6, 7, 8});
    test_tensor_free(&c);
    test_tensor_free(&u);

    /* tf.math.segment_sum / max / min / prod / mean's: c = [[1,2,3,4],[4,3,2,1],[5,6,7,8]],
     * ids [0,0,1]. */
    c = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){3, 4},
                         (int32_t[]){1, 2, 3, 4, 4, 3, 2, 1, 5, 6, 7, 8});
    ndx_tensor s = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 0, 1});
    expect_i32(SORTED, NDX_SEGMENT_SUM, &c, NULL, &s, 0, 2, (int32_t[]){5, 5, 5, 5, 5, 6, 7, 8});
    expect_i32(SORTED, NDX_SEGMENT_MAX, &c, NULL, &s, 0, 2, (int32_t[]){4, 3, 3, 4, 5, 6, 7, 8});
    expect_i32(SORTED, NDX_SEGMENT_MIN, &c, NULL, &s, 0, 2, (int32_t[]){1, 2, 2, 1, 5, 6, 7, 8});
    expect_i32(SORTED, NDX_SEGMENT_PROD, &c, NULL, &s, 0, 2, (int32_t[]){4, 6, 6, 4, 5, 6, 7, 8});
    test_tensor_free(&c);
    /* segment_mean on floats: [[2.5, 2.5, 2.5, 2.5], [5, 6, 7, 8]]. */
    c = test_tensor_from(NDX_FLOAT32, 0, 2, (int64_t[]){3, 4},
                         (float[]){1, 2, 3, 4, 4, 3, 2, 1, 5, 6, 7, 8});
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_MEAN, &c, &s, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){2.5f, 2.5f, 2.5f, 2.5f, 5, 6, 7, 8}), 32);
    ndx_tensor_free(&out);
    test_tensor_free(&c);
    test_tensor_free(&s);

    /* tf.sparse.segment_sum's: c = [[1,2,3,4],[-1,-2,-3,-4],[5,6,7,8]]. */
    c = test_tensor_from(NDX_INT32, 0, 2, (int64_t[]){3, 4},
                         (int32_t[]){1, 2, 3, 4, -1, -2, -3, -4, 5, 6, 7, 8});
    ndx_tensor i2 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 1});
    ndx_tensor s00 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 0});
    ndx_tensor s01 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 1});
    ndx_tensor s02 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){2}, (int32_t[]){0, 2});
    ndx_tensor i3 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 1, 2});
    ndx_tensor s001 = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 0, 1});
    /* Select two rows, one segment. */
    expect_i32(SPARSE, NDX_SEGMENT_SUM, &c, &i2, &s00, NDX_SEGMENTS_FROM_IDS, 1,
               (int32_t[]){0, 0, 0, 0});
    /* Select two rows, two segments. */
    expect_i32(SPARSE, NDX_SEGMENT_SUM, &c, &i2, &s01, NDX_SEGMENTS_FROM_IDS, 2,
               (int32_t[]){1, 2, 3, 4, -1, -2, -3, -4});
    /* With missing segment ids, and num_segments. */
    expect_i32(SPARSE, NDX_SEGMENT_SUM, &c, &i2, &s02, 4, 4,
               (int32_t[]){1, 2, 3, 4, 0, 0, 0, 0, -1, -2, -3, -4, 0, 0, 0, 0});
    /* Select all rows, two segments: tf.math.segment_sum(c, [0, 0, 1]). */
    expect_i32(SPARSE, NDX_SEGMENT_SUM, &c, &i3, &s001, NDX_SEGMENTS_FROM_IDS, 2,
               (int32_t[]){0, 0, 0, 0, 5, 6, 7, 8});
    test_tensor_free(&c);
    test_tensor_free(&i2);
    test_tensor_free(&s00);
    test_tensor_free(&s01);
    test_tensor_free(&s02);
    test_tensor_free(&i3);
    test_tensor_free(&s001);

    /* segment_reduction_ops_test.py, testSegmentIdsGap: segment_sum of [[1..],...] with ids
     * [0, 0, 2, 2] (no id 1) gives a row of zeros for id 1. */
    c = test_tensor_from(NDX_FLOAT32, 0, 2, (int64_t[]){4, 1}, (float[]){1, 2, 3, 4});
    s = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){4}, (int64_t[]){0, 0, 2, 2});
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_SUM, &c, &s, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){3, 0, 7}), 12);
    ndx_tensor_free(&out);
    test_tensor_free(&c);
    test_tensor_free(&s);
}

/* ---- the empty-segment traps -------------------------------------------------------------------- */

static void empty_segment_traps(void **state) {
    (void)state;
    ndx_tensor data = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){3},
                                       (float[]){INFINITY, -INFINITY, 2.0f});
    ndx_tensor ids = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 1, 3});
    ndx_tensor out = {0};
    ndx_error err;
    /* Unsorted MIN starts at the finite max: +inf alone stays FLT_MAX; an empty segment too. */
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){FLT_MAX, -INFINITY, FLT_MAX, 2.0f}), 16);
    ndx_tensor_free(&out);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){INFINITY, -FLT_MAX, -FLT_MAX, 2.0f}), 16);
    ndx_tensor_free(&out);
    /* Sorted: a segment of one row is that row; gaps are 0, min and max too. */
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){INFINITY, -INFINITY, 0.0f, 2.0f}), 16);
    ndx_tensor_free(&out);
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_PROD, &data, &ids, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((float[]){INFINITY, -INFINITY, 1.0f, 2.0f}), 16);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    /* Integers: the dtype's extremes. */
    data = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){5, 6, 7});
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((int32_t[]){5, 6, INT32_MAX, 7}), 16);
    ndx_tensor_free(&out);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((int32_t[]){5, 6, INT32_MIN, 7}), 16);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    /* uint8 and float16 / bfloat16 finite extremes. */
    data = test_tensor_from(NDX_UINT8, 0, 1, (int64_t[]){3}, (uint8_t[]){5, 6, 7});
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, 4, NULL, &out, &err), &err);
    assert_memory_equal(out.data, ((uint8_t[]){5, 6, 255, 7}), 4);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    data = test_tensor_from(NDX_FLOAT16, 0, 1, (int64_t[]){3},
                            (uint16_t[]){0x3c00, 0x3c00, 0x3c00});
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &data, &ids, 4, NULL, &out, &err), &err);
    assert_int_equal(((uint16_t *)out.data)[2], 0xfbff); /* -65504 */
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    data = test_tensor_from(NDX_BFLOAT16, 0, 1, (int64_t[]){3},
                            (uint16_t[]){0x3f80, 0x3f80, 0x3f80});
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MIN, &data, &ids, 4, NULL, &out, &err), &err);
    assert_int_equal(((uint16_t *)out.data)[2], 0x7f7f);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* MEAN's N is a sum of ones in the dtype: float16 stops at 2048, so 3000 ones average to 3000 /
 * 2048 (rounded), and bfloat16 at 256. */
static void mean_count_is_a_sum_of_ones(void **state) {
    (void)state;
    enum { N = 3000 };
    ndx_tensor data = test_tensor_v(NDX_FLOAT16, 0, 1, N);
    ndx_tensor ids = test_tensor_v(NDX_INT32, 0, 1, N);
    for (int i = 0; i < N; i++) {
        ((uint16_t *)data.data)[i] = 0x3c00; /* 1 */
        ((int32_t *)ids.data)[i] = 0;
    }
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MEAN, &data, &ids, 1, NULL, &out, &err), &err);
    /* The sum of 3000 ones in float16 is 2048 too, so the mean is 1. */
    assert_int_equal(((uint16_t *)out.data)[0], 0x3c00);
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    ndx_tensor d32 = test_tensor_v(NDX_FLOAT32, 0, 1, N);
    for (int i = 0; i < N; i++) ((float *)d32.data)[i] = 1.0f;
    ndx_tensor d16 = test_tensor_v(NDX_FLOAT16, 0, 1, N);
    for (int i = 0; i < N; i++) ((uint16_t *)d16.data)[i] = ndx_float_to_float16(0.5f);
    /* float16 halves: the sum sticks at 1024 (1024 + 0.5 rounds back to even), N at 2048. */
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MEAN, &d16, &ids, 1, NULL, &out, &err), &err);
    assert_int_equal(((uint16_t *)out.data)[0], ndx_float_to_float16(0.5f));
    ndx_tensor_free(&out);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_SQRT_N, &d32, &ids, 2, NULL, &out, &err), &err);
    assert_true(((float *)out.data)[0] == 3000.0f / sqrtf(3000.0f));
    assert_true(((float *)out.data)[1] == 0.0f); /* empty: 0 */
    ndx_tensor_free(&out);
    test_tensor_free(&d32);
    test_tensor_free(&d16);
    test_tensor_free(&ids);
}

static void assert_tensor_eq_shape(const ndx_tensor *a, const ndx_tensor *b) {
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->rank, b->rank);
    for (int i = 0; i < a->rank; i++) assert_int_equal(a->shape[i], b->shape[i]);
}

/* NaN, infinities and signed zeros: MIN and MAX give NaN for a segment holding one and
 * otherwise the later of equal values (TensorFlow's data.cwiseMin<PropagateNaN>(output)), a sorted segment of one row keeps -0.0 while 0 + -0.0
 * is +0.0 elsewhere. Data drawn from those values, every family against the reference. */
static void nan_and_signed_zero_rules(void **state) {
    (void)state;
    test_rng r = {11};
    const float special[] = {NAN, -NAN, 0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY};
    const ndx_dtype dts[] = {NDX_FLOAT32, NDX_FLOAT64, NDX_FLOAT16, NDX_BFLOAT16};
    for (int trial = 0; trial < 400; trial++) {
        int family = trial % 3;
        ndx_dtype dt = dts[(trial / 3) % 4];
        ndx_segment_op op = family == SPARSE ? (ndx_segment_op)(trial % 2 ? NDX_SEGMENT_SUM : NDX_SEGMENT_MEAN)
                                             : (ndx_segment_op)rng_below(&r, 4);
        seg_case c;
        make_case(&r, family, op, dt, NDX_INT32, 12, &c);
        int64_t n = test_count(&c.data);
        for (int64_t i = 0; i < n; i++)
            store(dt, (unsigned char *)c.data.data + (size_t)i * c.data.itemsize,
                  (num){special[rng_below(&r, 8)], 0, 0});
        if (family == UNSORTED) ref_unsorted(op, &c.data, &c.ids, &c.want);
        else if (family == SORTED) ref_sorted(op, &c.data, &c.ids, &c.want);
        else ref_sparse(op, &c.data, &c.indices, &c.ids, &c.want);
        ndx_tensor out = {0};
        ndx_error err;
        assert_ok(run_family(family, op, &c.data, &c.indices, &c.ids, c.num, NULL, &out, &err), &err);
        if (op == NDX_SEGMENT_MIN || op == NDX_SEGMENT_MAX) {
            assert_tensor_eq(&out, &c.want); /* selections: the very bits */
        } else { /* arithmetic on two NaNs may keep either's payload: any NaN for a NaN */
            assert_tensor_eq_shape(&out, &c.want);
            for (int64_t i = 0; i < test_count(&out); i++) {
                num a = load(dt, (unsigned char *)out.data + (size_t)i * out.itemsize);
                num b = load(dt, (unsigned char *)c.want.data + (size_t)i * out.itemsize);
                if (isnan(a.re) && isnan(b.re)) continue;
                if (memcmp(&a.re, &b.re, sizeof a.re) != 0)
                    fail_msg("trial %d element %lld: %g vs %g", trial, (long long)i, a.re, b.re);
            }
        }
        ndx_tensor_free(&out);
        case_free(&c);
    }
    /* Worked: max of [+0, -0] is -0 (the later); sorted sum of one -0 row is -0, of two is +0. */
    ndx_tensor data = test_tensor_from(NDX_FLOAT32, 0, 1, (int64_t[]){3}, (float[]){0.0f, -0.0f, -0.0f});
    ndx_tensor ids = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){3}, (int32_t[]){0, 0, 1});
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_MAX, &data, &ids, 2, NULL, &out, &err), &err);
    assert_true(signbit(((float *)out.data)[0]) && signbit(((float *)out.data)[1]));
    ndx_tensor_free(&out);
    ((float *)data.data)[0] = -0.0f;
    assert_ok(ndx_segment_reduce(NDX_SEGMENT_SUM, &data, &ids, NULL, &out, &err), &err);
    assert_true(!signbit(((float *)out.data)[0]) && signbit(((float *)out.data)[1]));
    ndx_tensor_free(&out);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* ---- refusals: a clear error and the output untouched ----------------------------------------- */

static void refuse(int family, ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *idx,
                   const ndx_tensor *ids, int64_t nseg, int out_rows, ndx_status want,
                   const char *needle) {
    ndx_error err;
    /* Into a caller's buffer of the shape a success would have (when there is one): untouched. */
    if (out_rows >= 0) {
        ndx_tensor out = test_tensor_v(data->dtype, 0, 2, out_rows, data->shape[data->rank - 1]);
        test_guard g = test_guard_fill(&out, 0xa5);
        assert_fails(run_family(family, op, data, idx, ids, nseg, NULL, &out, &err), &err, want,
                     needle);
        assert_untouched(&g, &out);
        test_tensor_free(&out);
    }
    ndx_tensor out = {0};
    assert_fails(run_family(family, op, data, idx, ids, nseg, NULL, &out, &err), &err, want, needle);
    assert_null(out.data);
}

static void bad_inputs_refused(void **state) {
    (void)state;
    ndx_tensor data = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 2);
    test_rng r = {7};
    fill_values(&r, &data);
#define IDS(n, ...) test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){n}, (int32_t[]){__VA_ARGS__})
    ndx_tensor bad = IDS(4, 0, 1, 5, 2);
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &bad, 3, 3, NDX_E_OUT_OF_RANGE,
           "unsorted_segment_sum: segment_ids[2] = 5 is out of range [0, 3)");
    refuse(UNSORTED, NDX_SEGMENT_MEAN, &data, NULL, &bad, 3, 3, NDX_E_OUT_OF_RANGE,
           "segment_ids[2] = 5 is out of range [0, 3)");
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &bad, -1, -1, NDX_E_INVALID_ARGUMENT,
           "num_segments = -1 must not be negative");
    ndx_tensor unsorted = IDS(4, 0, 2, 1, 2);
    refuse(SORTED, NDX_SEGMENT_SUM, &data, NULL, &unsorted, 0, 3, NDX_E_INVALID_ARGUMENT,
           "segment ids are not increasing");
    ndx_tensor negative = IDS(4, -1, 0, 0, 1);
    refuse(SORTED, NDX_SEGMENT_MAX, &data, NULL, &negative, 0, 2, NDX_E_OUT_OF_RANGE,
           "segment_ids[0] = -1 is negative");
    ndx_tensor three = IDS(3, 0, 0, 1);
    refuse(SORTED, NDX_SEGMENT_SUM, &data, NULL, &three, 0, 2, NDX_E_INVALID_ARGUMENT,
           "segment_ids should be the same size as dimension 0 of data");
    ndx_tensor idx = IDS(4, 0, 3, 4, 1);
    ndx_tensor sids = IDS(4, 0, 0, 1, 1);
    refuse(SPARSE, NDX_SEGMENT_SUM, &data, &idx, &sids, NDX_SEGMENTS_FROM_IDS, 2,
           NDX_E_OUT_OF_RANGE, "sparse_segment_sum: indices[2] = 4 is out of range [0, 4)");
    ndx_tensor good_idx = IDS(4, 0, 3, 2, 1);
    refuse(SPARSE, NDX_SEGMENT_MEAN, &data, &good_idx, &sids, 1, 1, NDX_E_OUT_OF_RANGE,
           "segment ids must be < num_segments");
    refuse(SPARSE, NDX_SEGMENT_SQRT_N, &data, &good_idx, &unsorted, NDX_SEGMENTS_FROM_IDS, 3,
           NDX_E_INVALID_ARGUMENT, "segment ids are not increasing");
    refuse(SPARSE, NDX_SEGMENT_SUM, &data, &good_idx, &three, NDX_SEGMENTS_FROM_IDS, -1,
           NDX_E_INVALID_ARGUMENT, "segment_ids and indices should have same size");
    refuse(SPARSE, NDX_SEGMENT_MIN, &data, &good_idx, &sids, NDX_SEGMENTS_FROM_IDS, -1,
           NDX_E_INVALID_ARGUMENT, "TensorFlow has no such op");
    refuse(SORTED, NDX_SEGMENT_SQRT_N, &data, NULL, &sids, 0, -1, NDX_E_INVALID_ARGUMENT,
           "segment_sqrt_n: TensorFlow has no such op");
    /* Rank-2 and scalar ids name the position as TensorFlow's SliceDebugString does. */
    ndx_tensor grid = test_tensor_from(NDX_INT64, 0, 2, (int64_t[]){4, 2},
                                       (int64_t[]){0, 1, 2, 0, 1, 1, 2, 9});
    refuse(UNSORTED, NDX_SEGMENT_MIN, &data, NULL, &grid, 3, -1, NDX_E_OUT_OF_RANGE,
           "unsorted_segment_min: segment_ids[3,1] = 9 is out of range [0, 3)");
    ndx_tensor lone = test_tensor_from(NDX_INT32, 0, 0, NULL, (int32_t[]){4});
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &lone, 3, -1, NDX_E_OUT_OF_RANGE,
           "unsorted_segment_sum: segment_ids = 4 is out of range [0, 3)");
    test_tensor_free(&grid);
    test_tensor_free(&lone);
    /* Ids of another rank or shape. */
    ndx_tensor ids2 = test_tensor_v(NDX_INT32, 0, 2, 4, 3);
    memset(ids2.data, 0, test_nbytes(&ids2));
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &ids2, 2, -1, NDX_E_INVALID_ARGUMENT,
           "data.shape = [4, 2] does not start with segment_ids.shape = [4, 3]");
    refuse(SORTED, NDX_SEGMENT_SUM, &data, NULL, &ids2, 0, -1, NDX_E_INVALID_ARGUMENT,
           "segment_ids should be a vector");
    /* int16 ids: TensorFlow takes int32 and int64. */
    ndx_tensor ids16 = test_tensor_v(NDX_INT16, 0, 1, 4);
    memset(ids16.data, 0, test_nbytes(&ids16));
    refuse(UNSORTED, NDX_SEGMENT_SUM, &data, NULL, &ids16, 2, 2, NDX_E_INVALID_ARGUMENT,
           "segment_ids must be int32 or int64");
    /* Bad op values. */
    refuse(UNSORTED, (ndx_segment_op)17, &data, NULL, &sids, 2, 2, NDX_E_INVALID_ARGUMENT,
           "op 17 is not an ndx_segment_op");
    /* A scalar data for the sorted ops. */
    ndx_tensor scalar = test_tensor_v(NDX_FLOAT32, 0, 0, 0);
    ndx_tensor one = IDS(1, 0);
    ndx_tensor out = {0};
    ndx_error err;
    assert_fails(ndx_segment_reduce(NDX_SEGMENT_SUM, &scalar, &one, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "data must have rank >= 1");
    /* A caller's output of the wrong shape. */
    ndx_tensor wrong = test_tensor_v(NDX_FLOAT32, 0, 2, 3, 3);
    test_guard g = test_guard_fill(&wrong, 0x11);
    assert_fails(ndx_segment_reduce(NDX_SEGMENT_SUM, &data, &sids, NULL, &wrong, &err), &err,
                 NDX_E_INVALID_ARGUMENT, NULL);
    assert_untouched(&g, &wrong);
    /* Negative ids of unsorted ops are dropped, not errors. */
    ndx_tensor drop = IDS(4, -1, 1, -7, 1);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_SUM, &data, &drop, 2, NULL, &out, &err), &err);
    const float *d = data.data, *o = out.data;
    assert_true(o[0] == 0.0f && o[1] == 0.0f);
    assert_true(o[2] == (float)((double)0.0f + d[2] + d[6]) || o[2] == (0.0f + d[2]) + d[6]);
    ndx_tensor_free(&out);
    /* TensorFlow reads no id when data has no elements. */
    ndx_tensor empty = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 0);
    assert_ok(ndx_unsorted_segment_reduce(NDX_SEGMENT_SUM, &empty, &bad, 3, NULL, &out, &err), &err);
    assert_int_equal(out.shape[0], 3);
    ndx_tensor_free(&out);
    ndx_tensor *all[] = {&data, &bad, &unsorted, &negative, &three, &idx, &sids, &good_idx,
                         &ids2, &ids16, &scalar, &one, &wrong, &drop, &empty};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) test_tensor_free(all[i]);
#undef IDS
}

/* ---- the same bits at 1, 2 and 3 threads ------------------------------------------------------- */

static void same_bits_at_any_thread_count(void **state) {
    (void)state;
    test_rng r = {99};
    /* Single elements (the bucketed elements path), wide rows (rows / owned), few wide rows
     * (columns), for every family. */
    const int64_t shapes[][2] = {{300000, 1}, {20000, 96}, {4000, 1024}};
    const int64_t segs[] = {5000, 700, 3};
    for (int s = 0; s < 3; s++)
        for (int family = UNSORTED; family <= SPARSE; family++) {
            ndx_segment_op op = family == SPARSE ? NDX_SEGMENT_MEAN : NDX_SEGMENT_SUM;
            ndx_tensor data = test_tensor(NDX_FLOAT32, 0, 2, shapes[s]);
            fill_values(&r, &data);
            int64_t n = shapes[s][0];
            ndx_tensor ids = test_tensor_v(NDX_INT64, 0, 1, n);
            ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 1, n);
            test_fill_indices(&r, &idx, 0, n - 1);
            for (int64_t i = 0; i < n; i++)
                test_set_index(&ids, i, family == UNSORTED ? rng_range(&r, -1, segs[s] - 1)
                                                           : i * segs[s] / n);
            ndx_tensor outs[3];
            for (int t = 0; t < 3; t++) {
                ndx_options opt = test_options(t + 1, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                outs[t] = (ndx_tensor){0};
                assert_ok(run_family(family, op, &data, &idx, &ids, segs[s], &opt, &outs[t], &err),
                          &err);
            }
            assert_tensor_eq(&outs[0], &outs[1]);
            assert_tensor_eq(&outs[0], &outs[2]);
            if (s == 0 && family == UNSORTED) { /* and the reference agrees */
                ndx_tensor want = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){segs[s], 1});
                ref_unsorted(op, &data, &ids, &want);
                assert_tensor_eq(&outs[0], &want);
                test_tensor_free(&want);
            }
            for (int t = 0; t < 3; t++) ndx_tensor_free(&outs[t]);
            test_tensor_free(&data);
            test_tensor_free(&ids);
            test_tensor_free(&idx);
        }
}

/* ---- memory and sizes ---------------------------------------------------------------------------- */

static void memory_budget_and_overflow(void **state) {
    (void)state;
    ndx_tensor data = test_tensor_v(NDX_FLOAT32, 0, 2, 1000, 4);
    memset(data.data, 0, test_nbytes(&data));
    ndx_tensor ids = test_tensor_v(NDX_INT32, 0, 1, 1000);
    for (int i = 0; i < 1000; i++) ((int32_t *)ids.data)[i] = i / 10;
    ndx_error err;
    for (int family = UNSORTED; family <= SPARSE; family++) {
        /* The ids' copy alone is 8000 bytes. */
        ndx_options opt = {.num_threads = 1, .max_memory = 4000};
        ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, 100, 4);
        test_guard g = test_guard_fill(&out, 0x5a);
        assert_fails(run_family(family, NDX_SEGMENT_SUM, &data, &ids, &ids, 100, &opt, &out, &err),
                     &err, NDX_E_MEMORY_BUDGET, "the checked segment ids needs 8000 bytes");
        assert_untouched(&g, &out);
        /* Enough for the copy and the output it allocates. */
        opt.max_memory = 8000 + (family == SPARSE ? 8000 : 0) + 1600 + 4096;
        ndx_tensor mine = {0};
        assert_ok(run_family(family, NDX_SEGMENT_SUM, &data, &ids, &ids, 100, &opt, &mine, &err),
                  &err);
        ndx_tensor_free(&mine);
        test_tensor_free(&out);
    }
    /* Sizes: [2^62] + [4] floats cannot be addressed. */
    ndx_tensor out = {0};
    assert_fails(ndx_unsorted_segment_reduce(NDX_SEGMENT_SUM, &data, &ids, (int64_t)1 << 62, NULL,
                                             &out, &err),
                 &err, NDX_E_OVERFLOW, "too large to address");
    ndx_tensor big = test_tensor_from(NDX_INT64, 0, 1, (int64_t[]){1}, (int64_t[]){INT64_MAX});
    ndx_tensor row = test_tensor_v(NDX_FLOAT32, 0, 2, 1, 4);
    assert_fails(ndx_segment_reduce(NDX_SEGMENT_SUM, &row, &big, NULL, &out, &err), &err,
                 NDX_E_OVERFLOW, NULL);
    ((int64_t *)big.data)[0] = (int64_t)1 << 61;
    assert_fails(ndx_segment_reduce(NDX_SEGMENT_SUM, &row, &big, NULL, &out, &err), &err,
                 NDX_E_OVERFLOW, "too large to address");
    assert_null(out.data);
    test_tensor_free(&big);
    test_tensor_free(&row);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

/* ---- infer ------------------------------------------------------------------------------------------ */

static void infer_on_partial_specs(void **state) {
    (void)state;
    ndx_spec out;
    ndx_error err;
    ndx_spec data = spec(NDX_FLOAT32, 3, (int64_t[]){4, NDX_UNKNOWN, 5});
    ndx_spec ids = spec(NDX_INT32, 2, (int64_t[]){NDX_UNKNOWN, 3});
    assert_ok(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_MAX, &data, &ids, 7, &out, &err), &err);
    assert_spec_dims(&out, "[7, 5]");
    assert_ok(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_MAX, &data, &ids, NDX_UNKNOWN, &out, &err),
              &err);
    assert_spec_dims(&out, "[?, 5]");
    ndx_spec bad = spec(NDX_INT32, 2, (int64_t[]){5, 3});
    assert_fails(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_SUM, &data, &bad, 7, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "does not start with");
    ndx_spec unknown = spec(NDX_INT64, NDX_UNKNOWN, NULL);
    assert_ok(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_SUM, &data, &unknown, 7, &out, &err), &err);
    assert_int_equal(out.rank, NDX_UNKNOWN);
    ndx_spec cx = spec(NDX_COMPLEX64, 1, (int64_t[]){4});
    ndx_spec v = spec(NDX_INT32, 1, (int64_t[]){NDX_UNKNOWN});
    assert_fails(ndx_unsorted_segment_reduce_infer(NDX_SEGMENT_MIN, &cx, &v, 2, &out, &err), &err,
                 NDX_E_UNSUPPORTED, "complex64");
    assert_ok(ndx_segment_reduce_infer(NDX_SEGMENT_MEAN, &cx, &v, &out, &err), &err);
    assert_spec_dims(&out, "[?]");
    ndx_spec d2 = spec(NDX_BFLOAT16, 2, (int64_t[]){NDX_UNKNOWN, 8});
    assert_ok(ndx_sparse_segment_reduce_infer(NDX_SEGMENT_SQRT_N, &d2, &v, &v, 9, &out, &err), &err);
    assert_spec_dims(&out, "[9, 8]");
    assert_ok(ndx_sparse_segment_reduce_infer(NDX_SEGMENT_SUM, &d2, &v, &v, NDX_SEGMENTS_FROM_IDS,
                                              &out, &err),
              &err);
    assert_spec_dims(&out, "[?, 8]");
    ndx_spec three = spec(NDX_INT32, 1, (int64_t[]){3});
    ndx_spec four = spec(NDX_INT64, 1, (int64_t[]){4});
    assert_fails(ndx_sparse_segment_reduce_infer(NDX_SEGMENT_SUM, &d2, &three, &four, 9, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "should have same size");
    /* Infer agrees with the ops on random complete inputs (the messages included). */
    test_rng r = {3};
    for (int trial = 0; trial < 200; trial++) {
        int family = (int)rng_below(&r, 3);
        ndx_segment_op op = (ndx_segment_op)rng_below(&r, 6);
        seg_case c;
        make_case(&r, family, NDX_SEGMENT_SUM, NDX_FLOAT32, NDX_INT32, 6, &c);
        if (rng_below(&r, 4) == 0) { /* a mismatched shape now and then */
            c.ids.shape[0] += 1;
            c.ids.data = realloc(c.ids.data, test_nbytes(&c.ids) + 8);
            memset(c.ids.data, 0, test_nbytes(&c.ids));
        }
        ndx_spec ds = ndx_spec_of(&c.data), is = ndx_spec_of(&c.ids), xs = ndx_spec_of(&c.indices);
        ndx_spec o;
        ndx_error ierr, oerr;
        ndx_status si = family == UNSORTED ? ndx_unsorted_segment_reduce_infer(op, &ds, &is, c.num, &o, &ierr)
                        : family == SORTED ? ndx_segment_reduce_infer(op, &ds, &is, &o, &ierr)
                                           : ndx_sparse_segment_reduce_infer(op, &ds, &xs, &is, c.num, &o, &ierr);
        ndx_tensor result = {0};
        ndx_status so = run_family(family, op, &c.data, &c.indices, &c.ids, c.num, NULL, &result, &oerr);
        if (si != NDX_OK) {
            assert_int_equal(so, si);
            assert_string_equal(oerr.message, ierr.message);
        } else if (so == NDX_OK) {
            assert_true(ndx_spec_admits(&o, &result) || (o.shape[0] == NDX_UNKNOWN));
        }
        ndx_tensor_free(&result);
        case_free(&c);
    }
}

/* ---- ids changed by another thread during calls ------------------------------------------------- */

typedef struct flipper {
    ndx_tensor *ids;
    _Atomic int stop;
} flipper;

static void *flip(void *arg) {
    flipper *f = arg;
    uint64_t x = 1;
    int64_t n = test_count(f->ids);
    while (!f->stop) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t i = (int64_t)((x >> 33) % (uint64_t)n);
        int64_t v = (int64_t)((x >> 20) % 9) - 3; /* -3 .. 5: some out of range */
        ((int64_t *)f->ids->data)[i] = v;
    }
    return NULL;
}

static void ids_mutated_during_calls(void **state) {
    (void)state;
    ndx_tensor data = test_tensor_v(NDX_FLOAT32, 0, 2, 5000, 3);
    test_rng r = {5};
    fill_values(&r, &data);
    ndx_tensor ids = test_tensor_v(NDX_INT64, 0, 1, 5000);
    memset(ids.data, 0, test_nbytes(&ids));
    flipper f = {&ids, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, flip, &f), 0);
    for (int i = 0; i < 200; i++) {
        int family = i % 3;
        ndx_options opt = test_options(1 + i % 3, NDX_BAD_INDICES_ERROR);
        ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, 3, 3);
        ndx_tensor mine = {0};
        ndx_error err;
        ndx_status s = run_family(family, NDX_SEGMENT_MAX == 0 ? NDX_SEGMENT_SUM : NDX_SEGMENT_SUM,
                                  &data, &ids, &ids, 3, &opt, family == UNSORTED ? &out : &mine,
                                  &err);
        assert_true(s == NDX_OK || s == NDX_E_OUT_OF_RANGE || s == NDX_E_INVALID_ARGUMENT);
        ndx_tensor_free(&mine);
        test_tensor_free(&out);
    }
    f.stop = 1;
    pthread_join(th, NULL);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tensorflow_doc_examples),
        cmocka_unit_test(random_against_reference),
        cmocka_unit_test(unregistered_dtypes_refused),
        cmocka_unit_test(empty_segment_traps),
        cmocka_unit_test(mean_count_is_a_sum_of_ones),
        cmocka_unit_test(nan_and_signed_zero_rules),
        cmocka_unit_test(bad_inputs_refused),
        cmocka_unit_test(same_bits_at_any_thread_count),
        cmocka_unit_test(memory_budget_and_overflow),
        cmocka_unit_test(infer_on_partial_specs),
        cmocka_unit_test(ids_mutated_during_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
