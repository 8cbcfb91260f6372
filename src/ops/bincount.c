/* bincount.c — TensorFlow's Bincount and DenseBincount (ndx.h section 5g, "Bincount"): a count
 * (or sum of weights) of each value, in one pass over the values.
 *
 *   infer  the shape and dtype checks on specs;
 *   check  every value read once (its lowest value tracked, several threads): a negative one
 *          fails the call before the output is touched;
 *   count  the zeroed output takes each value's one, or weight (binary_output writes ones); a
 *          value >= size is dropped; a per-row count's rows are shared out among the threads,
 *          each row (and its output row) counted by one in index order.
 * The check is done before the output is taken, so a failed call writes nothing and no scratch is
 * needed for float sums; they are made in index order on one thread, integer counts on several
 * threads into partial bins added up afterwards (exact): the same bits at any thread count.
 * 10M int32 values into 1M bins, Intel Xeon, through the Python module (load 2-4): 97 ms counted
 * through the scatter engine (an int64 copy of the values, owner threads) on one thread, 65 on
 * two; 52 and 51-68 this way; float32 weights 97 / 59 -> 59-89 / 52-59. Tried: partitioning
 * each block of values by bin range first (bins that fit in L2): slower, 43-92 ms against
 * 34-64 direct in a scratch harness; each thread reading every value and adding only its own
 * range of bins: 2.5x slower (the range test mispredicts). */
#include "core.h"
#include "index.h"

static const char *op_label(unsigned flags) {
    return (flags & NDX_BINCOUNT_DENSE) ? "dense_bincount" : "bincount";
}

/* TensorFlow's registrations of T for both ops. */
static int weights_dtype_ok(ndx_dtype d) {
    return d == NDX_INT32 || d == NDX_INT64 || d == NDX_FLOAT32 || d == NDX_FLOAT64;
}

/* A spec's element count, or -1 while a dim is unknown. */
static int64_t known_count(const ndx_spec *s) {
    int64_t n;
    if (s->rank < 0 || !ndx_dims_known(s->rank, s->shape)) return -1;
    return ndx_dims_product(s->rank, s->shape, &n) ? n : -1;
}

/* `views`: the specs are of tensors already checked, and size must be known. */
static ndx_status bincount_infer(const ndx_spec *arr, int64_t size, const ndx_spec *weights,
                                 unsigned flags, int views, ndx_spec *out, ndx_error *err) {
    const char *op = op_label(flags);
    if (!arr || !weights)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: arr or weights is NULL", op);
    if (flags & ~(unsigned)(NDX_BINCOUNT_DENSE | NDX_BINCOUNT_BINARY_OUTPUT))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: flags %#x has unknown bits", op, flags);
    if (!views) {
        NDX_TRY(ndx_spec_check_as(arr, op, "arr", err));
        NDX_TRY(ndx_spec_check_as(weights, op, "weights", err));
    }
    if (arr->dtype != NDX_INT32 && arr->dtype != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: arr must be int32 or int64, not %s", op,
                        ndx_dtype_name(arr->dtype));
    if (!weights_dtype_ok(weights->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        "%s: weights of dtype %s is not supported (int32, int64, float32, "
                        "float64)", op, ndx_dtype_name(weights->dtype));
    if ((flags & NDX_BINCOUNT_DENSE) && arr->rank > 2)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: arr must be at most rank 2 (TensorFlow: Shape must be at most rank 2 "
                        "but is rank %d)", op, arr->rank);
    /* Weights of unknown length may yet be empty: the check waits. */
    if (known_count(weights) > 0 && arr->rank >= 0 &&
        (arr->rank != weights->rank || !ndx_dims_agree(arr->rank, arr->shape, weights->shape))) {
        char dims[NDX_DIMS_TEXT], wdims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, arr);
        ndx_format_spec_dims(wdims, sizeof wdims, weights);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: `weights` must be the same shape as `arr` or a length-0 `Tensor`, "
                        "in which case it acts as all weights equal to 1. Received %s for arr of "
                        "shape %s", op, wdims, dims);
    }
    /* After the shapes, as TensorFlow's kernel checks them. */
    if (size < 0 && !(size == NDX_UNKNOWN && !views))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: size (%lld) must be non-negative", op,
                        (long long)size);
    ndx_spec o = *weights;
    if ((flags & NDX_BINCOUNT_DENSE) && arr->rank < 0) {
        o.rank = NDX_UNKNOWN;
    } else if ((flags & NDX_BINCOUNT_DENSE) && arr->rank == 2) {
        o.rank = 2;
        o.shape[0] = arr->shape[0];
        o.shape[1] = size;
    } else {
        o.rank = 1;
        o.shape[0] = size;
    }
    if (o.rank >= 0) NDX_TRY(ndx_check_output_size(op, o.rank, o.shape, o.itemsize, err));
    if (out) *out = o;
    return NDX_OK;
}

ndx_status ndx_bincount_infer(const ndx_spec *arr, int64_t size, const ndx_spec *weights,
                              unsigned flags, ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    return bincount_infer(arr, size, weights, flags, 0, out, err);
}

/* Values a worker takes at least (the check, a per-row count's rows). */
#define BINCOUNT_GRAIN ((int64_t)1 << 16)

/* ---- the check step ------------------------------------------------------------------------ */

typedef struct check_job {
    const ndx_tensor *arr;
    ndx_changed negative; /* the lowest position of a negative value */
} check_job;

/* The position of the first negative value of v[begin, end), or -1. The lowest value is
 * tracked without a branch (the loop vectorizes); only a range holding a negative is searched. */
#define FIRST_NEGATIVE(T)                                                                      \
    static int64_t first_negative_##T(const T *v, int64_t begin, int64_t end) {                \
        T low = 0;                                                                             \
        for (int64_t i = begin; i < end; i++) low = v[i] < low ? v[i] : low;                   \
        if (low >= 0) return -1;                                                               \
        for (int64_t i = begin; i < end; i++) /* bounded: the value may have changed since */ \
            if (v[i] < 0) return i;                                                            \
        return -1;                                                                             \
    }
FIRST_NEGATIVE(int32_t)
FIRST_NEGATIVE(int64_t)

static void check_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    check_job *j = ctx;
    int64_t bad = j->arr->dtype == NDX_INT32 ? first_negative_int32_t(j->arr->data, begin, end)
                                             : first_negative_int64_t(j->arr->data, begin, end);
    if (bad >= 0) ndx_changed_note(&j->negative, bad);
}

/* Every value read once, before anything is written; fails on the first negative one. */
static ndx_status check_values(ndx_call *c, const ndx_tensor *arr, unsigned flags, int64_t count) {
    check_job j = {arr, {0}};
    ndx_changed_init(&j.negative);
    ndx_parallel_for(c->threads, count, BINCOUNT_GRAIN, check_fn, &j);
    int64_t bad = ndx_changed_row(&j.negative);
    if (bad < 0) return NDX_OK;
    char at[NDX_DIMS_TEXT];
    ndx_format_position(at, sizeof at, arr->rank, arr->shape, bad);
    return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT,
                    "%s: Input arr must be non-negative! arr%s = %lld", op_label(flags), at,
                    (long long)ndx_read_index(arr->data, arr->dtype, bad));
}

/* ---- the count ------------------------------------------------------------------------------- */

/* Values [begin, end) of arr (dtype A, checked non-negative) into out (dtype T): a value v of
 * row r (per_row values a row; 0: one row) lands on cell r * size + v (a value >= size is
 * dropped); adds its weight (w), one (w NULL), or writes one (binary).
 * Each value is read once (the value checked is the value used, whatever another thread writes).
 * In index order: each cell gets its values as any other run gives them. Integers add in U, their
 * unsigned twin: they wrap as TensorFlow's do, without C's signed overflow. */
#define COUNT_INTO(A, T, U)                                                                    \
    static void count_##A##_##T(const A *v, const T *w, int binary, int64_t begin,             \
                                int64_t end, int64_t size, int64_t per_row, T *out) {          \
        uint64_t span = (uint64_t)size;                                                        \
        for (int64_t i = begin; i < end;) {                                                    \
            int64_t row_end = per_row ? (i / per_row + 1) * per_row : end;                     \
            row_end = row_end < end ? row_end : end;                                           \
            U *cells = (U *)out + (per_row ? i / per_row * size : 0);                          \
            if (binary) {                                                                      \
                for (; i < row_end; i++) {                                                     \
                    const A x = v[i];                                                          \
                    if ((uint64_t)x < span) cells[x] = (U)1;                                   \
                }                                                                              \
            } else if (w) {                                                                    \
                for (; i < row_end; i++) {                                                     \
                    const A x = v[i];                                                          \
                    if ((uint64_t)x < span) cells[x] += (U)w[i];                               \
                }                                                                              \
            } else {                                                                           \
                for (; i < row_end; i++) {                                                     \
                    const A x = v[i];                                                          \
                    if ((uint64_t)x < span) cells[x] += (U)1;                                  \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }
#define COUNT_INTO_ALL(A)                                                                      \
    COUNT_INTO(A, int32_t, uint32_t)                                                           \
    COUNT_INTO(A, int64_t, uint64_t) COUNT_INTO(A, float, float) COUNT_INTO(A, double, double)
COUNT_INTO_ALL(int32_t)
COUNT_INTO_ALL(int64_t)

typedef struct count_job {
    const void *arr, *weights; /* weights NULL: ones */
    ndx_dtype arr_dtype, dtype;
    int binary;
    int64_t count, size, per_row;
    void *out;
} count_job;

static void count_range(const count_job *j, int64_t begin, int64_t end) {
#define COUNT_CASE(A, T)                                                                       \
    count_##A##_##T(j->arr, j->weights, j->binary, begin, end, j->size, j->per_row, j->out)
#define COUNT_DTYPES(A)                                                                        \
    switch (j->dtype) {                                                                        \
    case NDX_INT32: COUNT_CASE(A, int32_t); break;                                             \
    case NDX_INT64: COUNT_CASE(A, int64_t); break;                                             \
    case NDX_FLOAT32: COUNT_CASE(A, float); break;                                             \
    default: COUNT_CASE(A, double); break;                                                     \
    }
    if (j->arr_dtype == NDX_INT32) {
        COUNT_DTYPES(int32_t)
    } else {
        COUNT_DTYPES(int64_t)
    }
#undef COUNT_DTYPES
#undef COUNT_CASE
}

/* A per-row count: each worker takes whole rows (their values and their output rows). */
static void count_rows_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const count_job *j = ctx;
    count_range(j, begin * j->per_row, end * j->per_row);
}

/* An integer count on several workers: worker w counts its chunk of the values into partial w
 * (partial 0 is the output); integer sums are exact in any order, so adding the partials up
 * afterwards gives the same bits as one thread. */
typedef struct partial_job {
    count_job count;
    unsigned char *partials; /* workers - 1 zeroed outputs after the output itself */
    int workers;
} partial_job;

static void count_partial_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    partial_job *p = ctx;
    count_job j = p->count;
    size_t bytes = (size_t)j.size * ndx_dtype_sizes[j.dtype];
    if (worker > 0) j.out = p->partials + (size_t)(worker - 1) * bytes;
    count_range(&j, begin, end);
}

#define SUM_PARTIALS(T)                                                                        \
    static void sum_partials_##T(T *out, const T *partials, int64_t size, int others,          \
                                 int64_t begin, int64_t end) {                                 \
        for (int k = 0; k < others; k++)                                                       \
            for (int64_t i = begin; i < end; i++) out[i] += partials[(size_t)k * size + i];    \
    }
SUM_PARTIALS(uint32_t)
SUM_PARTIALS(uint64_t)

static void sum_partials_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    partial_job *p = ctx;
    if (p->count.dtype == NDX_INT32)
        sum_partials_uint32_t(p->count.out, (const uint32_t *)p->partials, p->count.size,
                             p->workers - 1, begin, end);
    else
        sum_partials_uint64_t(p->count.out, (const uint64_t *)p->partials, p->count.size,
                             p->workers - 1, begin, end);
}

/* ---- the call -------------------------------------------------------------------------------- */

static ndx_status run(ndx_call *c, const ndx_tensor *arr, int64_t size, const ndx_tensor *weights,
                      unsigned flags, const ndx_tensor *want, ndx_tensor *out) {
    int64_t count = ndx_tensor_count(arr), cells = ndx_tensor_count(want);
    NDX_TRY(check_values(c, arr, flags, count));
    count_job j = {arr->data, ndx_tensor_count(weights) ? weights->data : NULL, arr->dtype,
                   want->dtype, (flags & NDX_BINCOUNT_BINARY_OUTPUT) != 0, count, size, 0, NULL};
    int rows = (flags & NDX_BINCOUNT_DENSE) && arr->rank == 2;
    /* Integer sums of one row on several workers, when the budget has room for the partials
     * (taken before the output, so a failure writes nothing). */
    partial_job p = {j, NULL, 1};
    size_t out_bytes = (size_t)cells * want->itemsize; /* a valid output: no overflow */
    if (!rows && !j.binary && (want->dtype == NDX_INT32 || want->dtype == NDX_INT64) &&
        cells > 0) {
        int workers = ndx_parallel_workers(c->threads, count, BINCOUNT_GRAIN);
        size_t room = ndx_call_room(c), owed = out->data ? 0 : out_bytes;
        if (workers > 1 && room >= owed && out_bytes <= (room - owed) / (size_t)(workers - 1)) {
            NDX_TRY(ndx_call_scratch(c, out_bytes * (size_t)(workers - 1), 1, "partial counts",
                                     (void **)&p.partials));
            p.workers = workers;
        }
    }
    int allocated = 0;
    ndx_status s = ndx_call_output(c, want, out, 1, "out", &allocated);
    if (s == NDX_OK && !allocated && out_bytes > 0) memset(out->data, 0, out_bytes);
    if (s != NDX_OK || cells == 0 || count == 0) {
        ndx_call_release(c, p.partials);
        return s;
    }
    j.out = p.count.out = out->data;
    if (rows) {
        j.per_row = arr->shape[1];
        int64_t row_grain = BINCOUNT_GRAIN / j.per_row;
        ndx_parallel_for(c->threads, arr->shape[0], row_grain > 0 ? row_grain : 1, count_rows_fn,
                         &j);
    } else if (p.workers > 1) {
        ndx_parallel_for(p.workers, count, BINCOUNT_GRAIN, count_partial_fn, &p);
        ndx_parallel_for(p.workers, cells, BINCOUNT_GRAIN, sum_partials_fn, &p);
        ndx_call_release(c, p.partials);
    } else {
        count_range(&j, 0, count); /* float sums: index order, one thread */
    }
    return NDX_OK;
}

ndx_status ndx_bincount(const ndx_tensor *arr, int64_t size, const ndx_tensor *weights,
                        unsigned flags, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, op_label(flags), opt, out, err));
    if (!arr || !weights)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: arr or weights is NULL", c.op);
    NDX_TRY(ndx_tensor_check_as(arr, c.op, "arr", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check_as(weights, c.op, "weights", NULL, NULL, err));
    ndx_spec as, ws, os;
    ndx_spec_fill(&as, arr);
    ndx_spec_fill(&ws, weights);
    NDX_TRY(bincount_infer(&as, size, &ws, flags, 1, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    return run(&c, arr, size, weights, flags, &want, out);
}
