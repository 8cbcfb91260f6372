/* binary.c — elementwise add, sub, mul, floor_div, floor_mod, equal, not_equal, div,
 * maximum, minimum, the comparisons less, less_equal, greater, greater_equal and logical_and,
 * logical_or of two tensors of one dtype, broadcast as NumPy and TensorFlow do (see dense_ops.h). */
#include <complex.h>
#include <math.h>
#include <stdio.h>

#include "dense_ops.h"
#include "core.h"
#include "half.h"

const char *ndx_binary_op_name(ndx_binary_op op) {
    static const char *const names[NDX_BINARY_COUNT] = {
        "add", "sub", "mul", "floor_div", "floor_mod", "equal", "not_equal", "div", "maximum",
        "minimum", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or"};
    return (unsigned)op < NDX_BINARY_COUNT ? names[op] : "binary";
}

static int is_equality(ndx_binary_op op) {
    return op == NDX_BINARY_EQUAL || op == NDX_BINARY_NOT_EQUAL;
}

static int is_ordering(ndx_binary_op op) {
    return op >= NDX_BINARY_LESS && op <= NDX_BINARY_GREATER_EQUAL;
}

static int is_logical(ndx_binary_op op) {
    return op == NDX_BINARY_LOGICAL_AND || op == NDX_BINARY_LOGICAL_OR;
}

/* 1 when `op`'s output is bool. */
static int gives_bool(ndx_binary_op op) {
    return is_equality(op) || is_ordering(op) || is_logical(op);
}

/* 1 when `op` takes `dtype`. */
static int supports(ndx_binary_op op, ndx_dtype dtype) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dtype);
    if (is_equality(op)) return 1;
    if (is_logical(op)) return k == NDX_KIND_BOOL;
    if (is_ordering(op))
        return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT;
    if (k == NDX_KIND_BOOL || k == NDX_KIND_STRING) return 0;
    if (op == NDX_BINARY_REAL_DIV) return k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX;
    return k != NDX_KIND_COMPLEX || op == NDX_BINARY_ADD || op == NDX_BINARY_SUB ||
           op == NDX_BINARY_MUL;
}

/* ---- infer ------------------------------------------------------------------------------- */

static ndx_status shape_conflict(const char *op, const ndx_spec *x, const ndx_spec *y,
                                 ndx_error *err) {
    char xd[NDX_DIMS_TEXT], yd[NDX_DIMS_TEXT];
    ndx_format_spec_dims(xd, sizeof xd, x);
    ndx_format_spec_dims(yd, sizeof yd, y);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: x has shape %s and y has shape %s; they must be equal or one of them a "
                    "scalar, or broadcast: aligned from the right, each pair of dims equal or one "
                    "of them 1",
                    op, xd, yd);
}

/* Dim i (counted from the left of a rank-`rank` result) of sp, 1 where sp has fewer dims. */
static int64_t aligned_dim(const ndx_spec *sp, int rank, int i) {
    int k = i - (rank - sp->rank);
    return k < 0 ? 1 : sp->shape[k];
}

int64_t glue_broadcast_dim(int64_t a, int64_t b) {
    if (ndx_dim_known(a) && ndx_dim_known(b)) return a == b || b == 1 ? a : a == 1 ? b : -2;
    int64_t known = ndx_dim_known(a) ? a : b;
    /* an unknown dim is 1 or equal to the other */
    return ndx_dim_known(known) && known != 1 ? known : NDX_UNKNOWN;
}

/* Infer once x and y are valid specs (the op has checked the views they come from). */
static ndx_status infer_checked(ndx_binary_op op, const ndx_spec *x, const ndx_spec *y,
                                ndx_spec *out, ndx_error *err) {
    const char *name = ndx_binary_op_name(op);
    if (x->dtype != y->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: x is %s and y is %s; they must have the same dtype", name,
                        ndx_dtype_name(x->dtype), ndx_dtype_name(y->dtype));
    if (!supports(op, x->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: dtype %s is not supported", name,
                        ndx_dtype_name(x->dtype));
    if (x->rank == NDX_UNKNOWN || y->rank == NDX_UNKNOWN) {
        /* An unknown rank may broadcast the other operand to any higher rank: the result's
         * rank is unknown until the run. */
        *out = x->rank == NDX_UNKNOWN ? *x : *y;
    } else {
        int rank = x->rank > y->rank ? x->rank : y->rank;
        *out = *x;
        out->rank = rank;
        for (int i = 0; i < rank; i++) {
            int64_t d = glue_broadcast_dim(aligned_dim(x, rank, i), aligned_dim(y, rank, i));
            if (d == -2) return shape_conflict(name, x, y, err);
            out->shape[i] = d;
        }
    }
    if (gives_bool(op)) {
        out->dtype = NDX_BOOL;
        out->itemsize = 1;
    } else {
        out->dtype = x->dtype;
        out->itemsize = x->itemsize;
    }
    return NDX_OK;
}

ndx_status ndx_binary_infer(ndx_binary_op op, const ndx_spec *x, const ndx_spec *y,
                            ndx_spec *out, ndx_error *err) {
    const char *name = ndx_binary_op_name(op);
    if ((unsigned)op >= NDX_BINARY_COUNT)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "binary: op = %d is not an ndx_binary_op",
                        (int)op);
    NDX_TRY(ndx_spec_check(x, name, err));
    NDX_TRY(ndx_spec_check(y, name, err));
    return infer_checked(op, x, y, out, err);
}

/* ---- the elementwise loops ---------------------------------------------------------------- */

/* The operands and output viewed as `rank` (1 .. NDX_MAX_RANK) collapsed dims of the output:
 * dims[d] elements, and x_stride[d] / y_stride[d] bytes between neighbours (0 where that operand
 * is broadcast). The last dim is walked by the inner loops, the others by an index walk. */
typedef struct binary_job {
    ndx_binary_op op;
    ndx_dtype dtype;
    const unsigned char *x, *y;
    size_t x_size, y_size; /* element widths (strings may differ) */
    unsigned char *out;
    int rank;
    int64_t dims[NDX_MAX_RANK];
    size_t x_stride[NDX_MAX_RANK], y_stride[NDX_MAX_RANK];
} binary_job;

/* One run of the inner loop: `count` elements from xp and yp (x_step and y_step bytes apart;
 * 0 for a broadcast value) into out, element `first` onwards. */
typedef struct binary_run {
    const unsigned char *xp, *yp;
    size_t x_step, y_step;
    unsigned char *out;
    int64_t first, count;
} binary_run;

/* Integer floor division and remainder as TensorFlow's FloorDiv / FloorMod; y != 0 was checked.
 * x / -1 is negation that wraps (INT_MIN / -1 is undefined in C). */
#define SIGNED_FLOOR_DIV(T, a, b)                                                             \
    ((b) == (T)-1 ? (T)(0 - (uint64_t)(a))                                                    \
                  : (T)((a) / (b) - (((a) % (b) != 0) && (((a) < 0) != ((b) < 0)))))
#define SIGNED_FLOOR_MOD(T, a, b)                                                             \
    ((b) == (T)-1 ? (T)0                                                                      \
                  : (T)((a) % (b) + (((a) % (b) != 0 && (((a) % (b) < 0) != ((b) < 0))) ? (b) : 0)))
/* Unsigned: floor division is plain division. */
#define UNSIGNED_FLOOR_DIV(T, a, b) ((T)((a) / (b)))
#define UNSIGNED_FLOOR_MOD(T, a, b) ((T)((a) % (b)))
/* Eigen's maximum and minimum (TF's Maximum / Minimum: std::max and std::min, x when the two
 * are equal, as between +0 and -0); floats propagate NaN first. */
#define MAX_OF(a, b) ((a) < (b) ? (b) : (a))
#define MIN_OF(a, b) ((b) < (a) ? (b) : (a))
#define FMAX_OF(a, b) (isnan(a) ? (a) : isnan(b) ? (b) : MAX_OF(a, b))
#define FMIN_OF(a, b) (isnan(a) ? (a) : isnan(b) ? (b) : MIN_OF(a, b))

static double float_floor_mod(double a, double b) {
    double m = fmod(a, b);
    return m != 0 && ((b < 0) != (m < 0)) ? m + b : m;
}

static float float_floor_modf(float a, float b) {
    float m = fmodf(a, b);
    return m != 0 && ((b < 0) != (m < 0)) ? m + b : m;
}

/* The inner loop for element type T with steps XS and YS: OUT_T out = EXPR(a, b). */
/* The run's fields are read into locals first: the stores go through a char pointer, which
 * may alias *r, so a loop reading r->count each time would not vectorise. */
#define LOOP_STEPS(T, OUT_T, EXPR, XS, YS)                                                    \
    do {                                                                                      \
        const unsigned char *xp_ = r->xp, *yp_ = r->yp;                                       \
        unsigned char *out_ = r->out + (size_t)r->first * sizeof(OUT_T);                      \
        const int64_t count_ = r->count;                                                      \
        for (int64_t i = 0; i < count_; i++) {                                                \
            T a, b;                                                                           \
            memcpy(&a, xp_ + (size_t)i * (XS), sizeof a);                                     \
            memcpy(&b, yp_ + (size_t)i * (YS), sizeof b);                                     \
            OUT_T o = EXPR;                                                                   \
            memcpy(out_ + (size_t)i * sizeof(OUT_T), &o, sizeof o);                           \
        }                                                                                     \
    } while (0)

/* The common layouts (equal shapes; y a scalar; x one number per run, as [B, 1] x [B, N] has)
 * get their steps as constants, so the compiler can vectorise them; the same expression, so the
 * same results. */
#define LOOP(T, OUT_T, EXPR)                                                                  \
    do {                                                                                      \
        const size_t xs_ = r->x_step, ys_ = r->y_step;                                        \
        if (xs_ == sizeof(T) && ys_ == sizeof(T))                                             \
            LOOP_STEPS(T, OUT_T, EXPR, sizeof(T), sizeof(T));                                 \
        else if (xs_ == sizeof(T) && ys_ == 0)                                                \
            LOOP_STEPS(T, OUT_T, EXPR, sizeof(T), 0);                                         \
        else if (xs_ == 0 && ys_ == sizeof(T))                                                \
            LOOP_STEPS(T, OUT_T, EXPR, 0, sizeof(T));                                         \
        else                                                                                  \
            LOOP_STEPS(T, OUT_T, EXPR, xs_, ys_);                                             \
    } while (0)

/* Integers: arithmetic in uint64_t wraps without undefined behaviour. */
#define INT_OPS(T, DIV, MOD)                                                                  \
    switch (j->op) {                                                                          \
    case NDX_BINARY_ADD: LOOP(T, T, (T)((uint64_t)a + (uint64_t)b)); break;                   \
    case NDX_BINARY_SUB: LOOP(T, T, (T)((uint64_t)a - (uint64_t)b)); break;                   \
    case NDX_BINARY_MUL: LOOP(T, T, (T)((uint64_t)a * (uint64_t)b)); break;                   \
    case NDX_BINARY_FLOOR_DIV: LOOP(T, T, DIV(T, a, b)); break;                               \
    case NDX_BINARY_FLOOR_MOD: LOOP(T, T, MOD(T, a, b)); break;                               \
    case NDX_BINARY_EQUAL: LOOP(T, uint8_t, a == b); break;                                   \
    case NDX_BINARY_MAXIMUM: LOOP(T, T, MAX_OF(a, b)); break;                                 \
    case NDX_BINARY_MINIMUM: LOOP(T, T, MIN_OF(a, b)); break;                                 \
    case NDX_BINARY_LESS: LOOP(T, uint8_t, a < b); break;                                     \
    case NDX_BINARY_LESS_EQUAL: LOOP(T, uint8_t, a <= b); break;                              \
    case NDX_BINARY_GREATER: LOOP(T, uint8_t, a > b); break;                                  \
    case NDX_BINARY_GREATER_EQUAL: LOOP(T, uint8_t, a >= b); break;                           \
    default: LOOP(T, uint8_t, a != b); break;                                                 \
    }

/* bool: equal, not_equal and the logical ops (any nonzero byte is true). */
#define BOOL_OPS()                                                                            \
    switch (j->op) {                                                                          \
    case NDX_BINARY_EQUAL: LOOP(uint8_t, uint8_t, (a != 0) == (b != 0)); break;               \
    case NDX_BINARY_LOGICAL_AND: LOOP(uint8_t, uint8_t, (a != 0) & (b != 0)); break;          \
    case NDX_BINARY_LOGICAL_OR: LOOP(uint8_t, uint8_t, (a != 0) | (b != 0)); break;           \
    default: LOOP(uint8_t, uint8_t, (a != 0) != (b != 0)); break;                             \
    }

/* Floats, computed in C (float16 and bfloat16 in float): TO(a) widens, FROM(r) narrows. */
#define FLOAT_OPS(T, C, TO, FROM, FLOOR, FMOD)                                                \
    switch (j->op) {                                                                          \
    case NDX_BINARY_ADD: LOOP(T, T, FROM((C)TO(a) + (C)TO(b))); break;                        \
    case NDX_BINARY_SUB: LOOP(T, T, FROM((C)TO(a) - (C)TO(b))); break;                        \
    case NDX_BINARY_MUL: LOOP(T, T, FROM((C)TO(a) * (C)TO(b))); break;                        \
    case NDX_BINARY_FLOOR_DIV: LOOP(T, T, FROM(FLOOR((C)TO(a) / (C)TO(b)))); break;           \
    case NDX_BINARY_FLOOR_MOD: LOOP(T, T, FROM(FMOD((C)TO(a), (C)TO(b)))); break;             \
    case NDX_BINARY_EQUAL: LOOP(T, uint8_t, TO(a) == TO(b)); break;                           \
    case NDX_BINARY_REAL_DIV: LOOP(T, T, FROM((C)TO(a) / (C)TO(b))); break;                   \
    case NDX_BINARY_MAXIMUM: LOOP(T, T, FROM(FMAX_OF((C)TO(a), (C)TO(b)))); break;            \
    case NDX_BINARY_MINIMUM: LOOP(T, T, FROM(FMIN_OF((C)TO(a), (C)TO(b)))); break;            \
    case NDX_BINARY_LESS: LOOP(T, uint8_t, TO(a) < TO(b)); break;                             \
    case NDX_BINARY_LESS_EQUAL: LOOP(T, uint8_t, TO(a) <= TO(b)); break;                      \
    case NDX_BINARY_GREATER: LOOP(T, uint8_t, TO(a) > TO(b)); break;                          \
    case NDX_BINARY_GREATER_EQUAL: LOOP(T, uint8_t, TO(a) >= TO(b)); break;                   \
    default: LOOP(T, uint8_t, TO(a) != TO(b)); break;                                         \
    }

#define SAME(v) (v)

typedef struct c64 { float re, im; } c64;
typedef struct c128 { double re, im; } c128;

/* Complex division as C (and C++'s std::complex, which TF's RealDiv uses) computes it. */
static c64 c64_div(c64 a, c64 b) {
    float _Complex q = (a.re + a.im * _Complex_I) / (b.re + b.im * _Complex_I);
    return (c64){crealf(q), cimagf(q)};
}

static c128 c128_div(c128 a, c128 b) {
    double _Complex q = (a.re + a.im * _Complex_I) / (b.re + b.im * _Complex_I);
    return (c128){creal(q), cimag(q)};
}

#define COMPLEX_OPS(T, DIV)                                                                   \
    switch (j->op) {                                                                          \
    case NDX_BINARY_ADD: LOOP(T, T, ((T){a.re + b.re, a.im + b.im})); break;                 \
    case NDX_BINARY_SUB: LOOP(T, T, ((T){a.re - b.re, a.im - b.im})); break;                 \
    case NDX_BINARY_MUL:                                                                      \
        LOOP(T, T, ((T){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}));             \
        break;                                                                                \
    case NDX_BINARY_REAL_DIV: LOOP(T, T, DIV(a, b)); break;                                   \
    case NDX_BINARY_EQUAL: LOOP(T, uint8_t, a.re == b.re && a.im == b.im); break;             \
    default: LOOP(T, uint8_t, a.re != b.re || a.im != b.im); break;                           \
    }

/* Two strings are equal when their bytes are, NUL padding aside (widths may differ). */
static int strings_equal(const unsigned char *a, size_t na, const unsigned char *b, size_t nb) {
    size_t n = na < nb ? na : nb;
    if (memcmp(a, b, n) != 0) return 0;
    for (size_t k = n; k < na; k++)
        if (a[k]) return 0;
    for (size_t k = n; k < nb; k++)
        if (b[k]) return 0;
    return 1;
}

static void binary_inner(const binary_job *j, const binary_run *r) {
    switch (j->dtype) {
    case NDX_INT8: INT_OPS(int8_t, SIGNED_FLOOR_DIV, SIGNED_FLOOR_MOD); break;
    case NDX_INT16: INT_OPS(int16_t, SIGNED_FLOOR_DIV, SIGNED_FLOOR_MOD); break;
    case NDX_INT32: INT_OPS(int32_t, SIGNED_FLOOR_DIV, SIGNED_FLOOR_MOD); break;
    case NDX_INT64: INT_OPS(int64_t, SIGNED_FLOOR_DIV, SIGNED_FLOOR_MOD); break;
    case NDX_UINT8: INT_OPS(uint8_t, UNSIGNED_FLOOR_DIV, UNSIGNED_FLOOR_MOD); break;
    case NDX_UINT16: INT_OPS(uint16_t, UNSIGNED_FLOOR_DIV, UNSIGNED_FLOOR_MOD); break;
    case NDX_UINT32: INT_OPS(uint32_t, UNSIGNED_FLOOR_DIV, UNSIGNED_FLOOR_MOD); break;
    case NDX_UINT64: INT_OPS(uint64_t, UNSIGNED_FLOOR_DIV, UNSIGNED_FLOOR_MOD); break;
    case NDX_BOOL: BOOL_OPS(); break;
    case NDX_FLOAT16:
        FLOAT_OPS(uint16_t, float, ndx_half_to_float, ndx_float_to_half, floorf,
                  float_floor_modf);
        break;
    case NDX_BFLOAT16:
        FLOAT_OPS(uint16_t, float, ndx_bf16_to_float, ndx_float_to_bf16, floorf,
                  float_floor_modf);
        break;
    case NDX_FLOAT32: FLOAT_OPS(float, float, SAME, SAME, floorf, float_floor_modf); break;
    case NDX_FLOAT64: FLOAT_OPS(double, double, SAME, SAME, floor, float_floor_mod); break;
    case NDX_COMPLEX64: COMPLEX_OPS(c64, c64_div); break;
    case NDX_COMPLEX128: COMPLEX_OPS(c128, c128_div); break;
    default: /* strings: equal / not_equal */
        for (int64_t i = 0; i < r->count; i++) {
            int eq = strings_equal(r->xp + (size_t)i * r->x_step, j->x_size,
                                   r->yp + (size_t)i * r->y_step, j->y_size);
            r->out[r->first + i] = (uint8_t)(j->op == NDX_BINARY_EQUAL ? eq : !eq);
        }
        break;
    }
}

/* Output elements [begin, end): runs along the last dim, the outer dims walked as an odometer
 * carrying each operand's offset. */
static void binary_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const binary_job *j = ctx;
    int last = j->rank - 1;
    int64_t at[NDX_MAX_RANK], rest = begin;
    size_t xo = 0, yo = 0;
    for (int d = last; d >= 0; d--) {
        at[d] = j->dims[d] ? rest % j->dims[d] : 0;
        rest = j->dims[d] ? rest / j->dims[d] : 0;
        xo += (size_t)at[d] * j->x_stride[d];
        yo += (size_t)at[d] * j->y_stride[d];
    }
    binary_run r = {NULL, NULL, j->x_stride[last], j->y_stride[last], j->out, begin, 0};
    while (r.first < end) {
        int64_t left = j->dims[last] - at[last];
        r.count = end - r.first < left ? end - r.first : left;
        r.xp = j->x + xo;
        r.yp = j->y + yo;
        binary_inner(j, &r);
        r.first += r.count;
        /* to the start of the next run */
        xo -= (size_t)at[last] * j->x_stride[last];
        yo -= (size_t)at[last] * j->y_stride[last];
        at[last] = 0;
        for (int d = last - 1; d >= 0; d--) {
            xo += j->x_stride[d];
            yo += j->y_stride[d];
            if (++at[d] < j->dims[d]) break;
            xo -= (size_t)at[d] * j->x_stride[d];
            yo -= (size_t)at[d] * j->y_stride[d];
            at[d] = 0;
        }
    }
}

/* Fills j's collapsed dims and strides for x and y broadcast to the output shape `os`: dims of 1
 * dropped, neighbours merged where both operands are contiguous across them (so equal shapes and
 * scalars become one dim, [B, 1] x [B, N] and [N] x [B, N] two). */
static void collapse(binary_job *j, const ndx_tensor *x, const ndx_tensor *y,
                     const ndx_spec *os) {
    size_t xs = x->itemsize, ys = y->itemsize;
    int64_t dims[NDX_MAX_RANK];
    size_t xst[NDX_MAX_RANK], yst[NDX_MAX_RANK];
    /* strides of each output dim, innermost first */
    for (int i = os->rank - 1; i >= 0; i--) {
        int kx = i - (os->rank - x->rank), ky = i - (os->rank - y->rank);
        int64_t dx = kx < 0 ? 1 : x->shape[kx], dy = ky < 0 ? 1 : y->shape[ky];
        dims[i] = os->shape[i];
        xst[i] = dx == 1 ? 0 : xs;
        yst[i] = dy == 1 ? 0 : ys;
        xs *= (size_t)dx;
        ys *= (size_t)dy;
    }
    int n = 0;
    for (int i = 0; i < os->rank; i++) {
        if (dims[i] == 1) continue;
        if (n > 0 && j->x_stride[n - 1] == xst[i] * (size_t)dims[i] &&
            j->y_stride[n - 1] == yst[i] * (size_t)dims[i]) {
            j->dims[n - 1] *= dims[i];
            j->x_stride[n - 1] = xst[i];
            j->y_stride[n - 1] = yst[i];
            continue;
        }
        j->dims[n] = dims[i];
        j->x_stride[n] = xst[i];
        j->y_stride[n] = yst[i];
        n++;
    }
    if (n == 0) { /* one element */
        j->dims[0] = 1;
        j->x_stride[0] = j->y_stride[0] = 0;
        n = 1;
    }
    j->rank = n;
}

/* ---- the op ------------------------------------------------------------------------------ */

ndx_status ndx_check_divisors(const char *op, const char *what, const ndx_tensor *y,
                              int64_t count, ndx_error *err) {
    for (int64_t i = 0; i < count; i++) {
        const unsigned char *e = (const unsigned char *)y->data + (size_t)i * y->itemsize;
        size_t k = 0;
        while (k < y->itemsize && e[k] == 0) k++;
        if (k < y->itemsize) continue;
        char where[NDX_DIMS_TEXT] = "";
        if (y->rank > 0) ndx_format_position(where, sizeof where, y->rank, y->shape, i);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: integer division by zero: %s%s = 0", op, what, where);
    }
    return NDX_OK;
}

ndx_status ndx_binary(ndx_binary_op op, const ndx_tensor *x, const ndx_tensor *y,
                      const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    const char *name = ndx_binary_op_name(op);
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, name, opt, out, err));
    if (!x || !y) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: x or y is NULL", name);
    int64_t nx, ny;
    NDX_TRY(ndx_check_view(x, name, &nx, NULL, err));
    NDX_TRY(ndx_check_view(y, name, &ny, NULL, err));
    if ((unsigned)op >= NDX_BINARY_COUNT)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "binary: op = %d is not an ndx_binary_op",
                        (int)op);
    /* Valid views make valid specs: infer without checking them again. */
    ndx_spec xs = ndx_spec_of(x), ys = ndx_spec_of(y), os;
    NDX_TRY(infer_checked(op, &xs, &ys, &os, err));
    ndx_dtype_kind kind = ndx_dtype_kind_of(x->dtype);
    int64_t results = 0;
    ndx_dims_product(os.rank, os.shape, &results); /* checked: the output's own shape */
    /* An empty result divides nothing (TensorFlow returns before dividing); else every element
     * of y is a divisor. */
    if ((op == NDX_BINARY_FLOOR_DIV || op == NDX_BINARY_FLOOR_MOD) &&
        (kind == NDX_KIND_SIGNED || kind == NDX_KIND_UNSIGNED) && results > 0)
        NDX_TRY(ndx_check_divisors(name, "y", y, ny, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    int64_t n = ndx_tensor_count(out);
    binary_job j; /* collapse fills dims and strides up to j.rank */
    j.op = op;
    j.dtype = x->dtype;
    j.x = x->data;
    j.y = y->data;
    j.x_size = x->itemsize;
    j.y_size = y->itemsize;
    j.out = out->data;
    collapse(&j, x, y, &os);
    if (j.rank == 1 && n <= GLUE_GRAIN) { /* same shapes or a scalar, one worker: one run */
        binary_run r = {j.x, j.y, j.x_stride[0], j.y_stride[0], j.out, 0, n};
        if (n > 0) binary_inner(&j, &r);
        return NDX_OK;
    }
    ndx_parallel_for(c.threads, n, GLUE_GRAIN, binary_range, &j);
    return NDX_OK;
}
