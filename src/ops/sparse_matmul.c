/* sparse_matmul.c — ndx_sparse_dense_matmul (ndx.h section 5d3): TensorFlow's
 * SparseTensorDenseMatMul, a rank-2 SparseTensor A times a dense matrix B.
 *
 *   infer  the specs: A a matrix, B a matrix of A's values' dtype, the inner dims alike;
 *   check  every index read once into scratch (A's output row m and inner column k of each
 *          entry) and checked as TensorFlow's kernel checks it, k first, in entry order, before
 *          anything is written; it also learns whether the entries come grouped by output row
 *          (canonical order without adjoint_a);
 *   plan   the run's scratch, exact: each output row's first entry (and, when the entries are not
 *          grouped by row, a stable counting sort of them by row), and B's conjugate transpose
 *          under adjoint_b;
 *   run    each worker owns a contiguous range of output rows and adds each row's entries in
 *          entry order into it (row m: the sum over entries (m, k) of a * B[k, :], from zero), so
 *          the bits are TensorFlow's order and the same at any thread count. The rows of B an
 *          entry reads are scattered: they are prefetched SPARSE_AHEAD entries early. float16 and
 *          bfloat16 add in float and round once, as TensorFlow's kernel does. */

#include "half.h"
#include "segment_reduce.h"
#include "sparse_tensor.h"

#define OP "sparse_dense_matmul"

static int supported(ndx_dtype d) {
    return d == NDX_FLOAT16 || d == NDX_BFLOAT16 || d == NDX_FLOAT32 || d == NDX_FLOAT64 ||
           d == NDX_INT32 || d == NDX_COMPLEX64 || d == NDX_COMPLEX128;
}

static int64_t dim_or_unknown(const ndx_spec *s, int k) {
    return s->rank == NDX_UNKNOWN ? NDX_UNKNOWN : s->shape[k];
}

ndx_status ndx_sparse_dense_matmul_infer(const ndx_sparse_spec *a, const ndx_spec *b,
                                         int adjoint_a, int adjoint_b, ndx_spec *out,
                                         ndx_error *err) {
    ndx_error_clear(err);
    if (!b || !out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": b or out is NULL");
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(a, OP ": sp_a", &rank, &nnz, err));
    if (rank != NDX_UNKNOWN && rank != 2)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": Tensor 'a_shape' must have 2 elements, not %d", rank);
    NDX_TRY(ndx_spec_check(b, OP ": b", err));
    if (b->rank != NDX_UNKNOWN && b->rank != 2)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": Tensor 'b' is not a matrix (its rank is %d)", b->rank);
    ndx_dtype dt = a->values.dtype;
    if (!supported(dt))
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        OP ": values of dtype %s are not supported (float16, bfloat16, float32, "
                        "float64, int32, complex64, complex128)",
                        ndx_dtype_name(dt));
    if (b->dtype != dt)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": b is %s but sp_a's values are %s", ndx_dtype_name(b->dtype),
                        ndx_dtype_name(dt));
    /* A's dims are dense_shape's values: only B's are known here. */
    *out = ndx_spec_make(dt, 2, (int64_t[]){NDX_UNKNOWN, dim_or_unknown(b, adjoint_b ? 0 : 1)});
    out->itemsize = a->values.itemsize;
    return NDX_OK;
}

/* ---- plan and check ------------------------------------------------------------------------ */

typedef struct matmul_plan {
    const ndx_sparse_tensor *a;
    const ndx_tensor *b;
    int adj_a, adj_b, threads;
    ndx_sparse_view v;           /* dims, nnz, values; idx unused */
    int lhs, rhs;                /* index columns of the output row m and the inner k */
    int64_t rows, cols, inner;   /* the output [rows, cols]; B's inner dim */
    ndx_tensor want;
    int grouped;                 /* the entries' m never decreases */
    int64_t *m, *k;              /* check scratch: each entry's m and k, as checked */
} matmul_plan;

static ndx_status matmul_plan_make(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                   int adjoint_a, int adjoint_b, int threads, matmul_plan *p,
                                   ndx_error *err) {
    memset(p, 0, sizeof *p);
    if (!a || !b) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": sp_a or b is NULL");
    /* The views, then infer's checks on their specs, then dense_shape's values: infer's error
     * is the op's. */
    NDX_TRY(ndx_tensor_check(&a->indices, OP ": sp_a.indices", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check(&a->values, OP ": sp_a.values", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check(&a->dense_shape, OP ": sp_a.dense_shape", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check(b, OP ": b", NULL, NULL, err));
    ndx_sparse_spec as = ndx_sparse_spec_of(a);
    ndx_spec bs = ndx_spec_of(b), os;
    NDX_TRY(ndx_sparse_dense_matmul_infer(&as, &bs, adjoint_a, adjoint_b, &os, err));
    NDX_TRY(ndx_sparse_check_views(a, OP ": sp_a", &p->v, err));
    p->a = a;
    p->b = b;
    p->adj_a = adjoint_a != 0;
    p->adj_b = adjoint_b != 0;
    p->threads = threads;
    p->lhs = p->adj_a ? 1 : 0;
    p->rhs = p->adj_a ? 0 : 1;
    p->rows = p->v.dims[p->lhs];
    p->cols = b->shape[p->adj_b ? 0 : 1];
    p->inner = b->shape[p->adj_b ? 1 : 0];
    int64_t inner_a = p->v.dims[p->rhs];
    if (inner_a != p->inner) {
        char bdims[NDX_DIMS_TEXT];
        ndx_format_dims(bdims, sizeof bdims, 2, b->shape);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": Cannot multiply A and B because inner dimension does not match: "
                        "%lld vs. %lld.  Did you forget a transpose?  Dimensions of A: [%lld, "
                        "%lld).  Dimensions of B: %s",
                        (long long)inner_a, (long long)p->inner, (long long)p->v.dims[0],
                        (long long)p->v.dims[1], bdims);
    }
    os.shape[0] = p->rows;
    NDX_TRY(ndx_check_output_size(OP, 2, os.shape, os.itemsize, err));
    p->want = ndx_view_of_spec(&os);
    return NDX_OK;
}

/* The check scratch: m and k of every entry, int64 each. */
static size_t check_bytes(const matmul_plan *p) { return (size_t)p->v.nnz * 2 * sizeof(int64_t); }

/* What one chunk of entries found: its first bad entry (-1: none), whether its m ever
 * decreases. */
typedef struct {
    int64_t first_bad;
    int down;
} check_result;

typedef struct {
    matmul_plan *p;
    check_result res[NDX_SPARSE_MAX_CHUNKS];
    int chunks;
} check_job;

static void check_fn(void *ctx, int64_t c0, int64_t c1, int worker) {
    (void)worker;
    check_job *j = ctx;
    matmul_plan *p = j->p;
    const ndx_tensor *ix = &p->a->indices;
    const int64_t n = p->v.nnz, rows = p->rows, inner = p->inner;
    for (int64_t c = c0; c < c1; c++) {
        int64_t b = ndx_chunk_begin(n, j->chunks, (int)c), e = ndx_chunk_begin(n, j->chunks, (int)c + 1);
        check_result r = {-1, 0};
        int64_t prev = INT64_MIN;
        for (int64_t i = b; i < e; i++) {
            int64_t m = ndx_read_index(ix->data, ix->dtype, 2 * i + p->lhs);
            int64_t k = ndx_read_index(ix->data, ix->dtype, 2 * i + p->rhs);
            if ((uint64_t)k >= (uint64_t)inner || (uint64_t)m >= (uint64_t)rows) {
                p->k[i] = k; /* kept for the message */
                p->m[i] = m;
                r.first_bad = i;
                break;
            }
            p->m[i] = m;
            p->k[i] = k;
            if (m < prev) r.down = 1;
            prev = m;
        }
        j->res[c] = r;
    }
}

/* Reads and checks every entry (TensorFlow's messages: k before m, the first bad entry in
 * entry order) and learns whether the entries are grouped by output row. */
static ndx_status matmul_check(matmul_plan *p, void *scratch, ndx_error *err) {
    int64_t n = p->v.nnz;
    p->m = scratch; /* NULL when there are no entries */
    p->k = n > 0 ? p->m + n : NULL;
    check_job j;
    j.p = p;
    j.chunks = ndx_sparse_chunks(p->threads, n);
    p->grouped = 1;
    if (j.chunks == 0) return NDX_OK;
    ndx_parallel_for(p->threads, j.chunks, 1, check_fn, &j);
    for (int c = 0; c < j.chunks; c++) {
        int64_t i = j.res[c].first_bad;
        if (i >= 0) {
            if ((uint64_t)p->k[i] >= (uint64_t)p->inner)
                return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                                OP ": k (%lld) from index[%lld,%d] out of bounds (>=%lld)",
                                (long long)p->k[i], (long long)i, p->rhs, (long long)p->inner);
            return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                            OP ": m (%lld) from index[%lld,%d] out of bounds (>=%lld)",
                            (long long)p->m[i], (long long)i, p->lhs, (long long)p->rows);
        }
        if (j.res[c].down) p->grouped = 0;
        if (c > 0) {
            int64_t b = ndx_chunk_begin(n, j.chunks, c);
            if (p->m[b] < p->m[b - 1]) p->grouped = 0;
        }
    }
    return NDX_OK;
}

/* The run's scratch, carved in one order for counting and laying out: the row starts
 * [rows + 1]; unless grouped, the sorted entries' k and entry numbers [nnz] each; under
 * adjoint_b, B's conjugate transpose [inner, cols]; per worker an accumulator row in float for
 * float16 and bfloat16. */
typedef struct {
    int64_t *start, *sk, *se;
    unsigned char *bt;
    float *acc;
    int workers;
    int64_t grain;
} run_layout;

static void carve_run(const matmul_plan *p, ndx_carver *c, run_layout *l) {
    int64_t n = p->v.nnz;
    l->start = ndx_carve(c, (size_t)(p->rows + 1) * sizeof(int64_t));
    l->sk = l->se = NULL;
    if (!p->grouped) {
        l->sk = ndx_carve(c, (size_t)n * sizeof(int64_t));
        l->se = ndx_carve(c, (size_t)n * sizeof(int64_t));
    }
    l->bt = p->adj_b ? ndx_carve(c, (size_t)(p->inner * p->cols) * p->v.itemsize) : NULL;
    /* A worker's rows: about 128K multiply-adds' worth, at least one row (in double: the
     * product of the entries and the columns may leave int64_t). */
    double per_row = p->rows > 0 ? (double)n / (double)p->rows * (double)p->cols + (double)p->cols
                                 : 1.0;
    l->grain = (int64_t)((double)((int64_t)1 << 17) / (per_row > 1.0 ? per_row : 1.0)) + 1;
    l->workers = ndx_parallel_workers(p->threads, p->rows, l->grain);
    int half = p->v.dtype == NDX_FLOAT16 || p->v.dtype == NDX_BFLOAT16;
    l->acc = half ? ndx_carve(c, (size_t)(l->workers > 0 ? l->workers : 1) *
                                     (((size_t)p->cols * sizeof(float) + 63) & ~(size_t)63))
                  : NULL;
}

/* Whether the run's scratch can be counted: B's transpose is as large as B (which exists) and
 * every other block is a few int64 per entry or row; only the sum may overflow. */
static ndx_status run_bytes(const matmul_plan *p, size_t *bytes, ndx_error *err) {
    *bytes = 0;
    if (p->rows == 0 || p->cols == 0 || p->v.nnz == 0) return NDX_OK; /* empty, or zeros */
    size_t rows_b, n_b, bt_b;
    if (!ndx_bytes_of(p->rows + 1, sizeof(int64_t), &rows_b) ||
        !ndx_bytes_of(p->v.nnz, 2 * sizeof(int64_t), &n_b) ||
        !ndx_bytes_of(p->adj_b ? p->inner * p->cols : 0, p->v.itemsize, &bt_b) ||
        rows_b > SIZE_MAX / 4 || n_b > SIZE_MAX / 4 || bt_b > SIZE_MAX / 4)
        return ndx_fail(err, NDX_E_OVERFLOW, OP ": the scratch size overflows size_t");
    ndx_carver c = {NULL, 0};
    run_layout l;
    carve_run(p, &c, &l);
    *bytes = c.used;
    return NDX_OK;
}

/* ---- run ----------------------------------------------------------------------------------- */

typedef struct {
    const matmul_plan *p;
    run_layout l;
    const int64_t *k;   /* each run position's inner index */
    const int64_t *ent; /* each run position's entry (NULL: the position itself) */
    const unsigned char *b; /* [inner, cols] rows, conjugated already under adjoint_b */
    unsigned char *out;
} run_job;

/* Row starts of grouped entries: start[r] is the first entry whose m >= r; each chunk writes
 * the starts of the rows its entries begin, so every start is written once. */
static void starts_fn(void *ctx, int64_t c0, int64_t c1, int worker) {
    (void)worker;
    run_job *j = ctx;
    const matmul_plan *p = j->p;
    int64_t n = p->v.nnz, *start = j->l.start;
    int chunks = ndx_sparse_chunks(p->threads, n);
    for (int64_t c = c0; c < c1; c++) {
        int64_t b = ndx_chunk_begin(n, chunks, (int)c), e = ndx_chunk_begin(n, chunks, (int)c + 1);
        for (int64_t i = b; i < e; i++) {
            int64_t from = i == 0 ? 0 : p->m[i - 1] + 1;
            for (int64_t r = from; r <= p->m[i]; r++) start[r] = i;
        }
        if (e == n)
            for (int64_t r = p->m[n - 1] + 1; r <= p->rows; r++) start[r] = n;
    }
}

/* Entries not grouped by row: a stable counting sort by m, so each row keeps entry order. */
static void sort_by_row(run_job *j) {
    const matmul_plan *p = j->p;
    int64_t n = p->v.nnz, *start = j->l.start;
    memset(start, 0, (size_t)(p->rows + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) start[p->m[i] + 1]++;
    for (int64_t r = 0; r < p->rows; r++) start[r + 1] += start[r];
    /* start[r] walks forward while filling and ends at start[r + 1]; shift back after. */
    for (int64_t i = 0; i < n; i++) {
        int64_t at = start[p->m[i]]++;
        j->l.sk[at] = p->k[i];
        j->l.se[at] = i;
    }
    for (int64_t r = p->rows; r > 0; r--) start[r] = start[r - 1];
    start[0] = 0;
}

/* B's conjugate transpose: bt[k, n] = conj(b[n, k]), rows [k0, k1). */
static void transpose_fn(void *ctx, int64_t k0, int64_t k1, int worker) {
    (void)worker;
    run_job *j = ctx;
    const matmul_plan *p = j->p;
    size_t sz = p->v.itemsize;
    const unsigned char *b = p->b->data;
    int cplx = p->v.dtype == NDX_COMPLEX64 || p->v.dtype == NDX_COMPLEX128;
    for (int64_t k = k0; k < k1; k++)
        for (int64_t n = 0; n < p->cols; n++) {
            unsigned char *d = j->l.bt + (size_t)(k * p->cols + n) * sz;
            memcpy(d, b + (size_t)(n * p->inner + k) * sz, sz);
            if (cplx && sz == 8) {
                float im;
                memcpy(&im, d + 4, 4);
                im = -im;
                memcpy(d + 4, &im, 4);
            } else if (cplx) {
                double im;
                memcpy(&im, d + 8, 8);
                im = -im;
                memcpy(d + 8, &im, 8);
            }
        }
}

/* Rows [r0, r1) of the product for one storage type T with accumulator A: ROW_INIT zeroes the
 * accumulator of row o, LOAD_A reads entry e's value (conjugated under adjoint_a), FMA adds
 * a * brow[n] into it, ROW_DONE stores it. */
#define MATMUL_ROWS(tag, T, A, ACC, LOAD_A, ADD, STORE)                                          \
    NDX_MULTIVERSION static void sdmm_rows_##tag(run_job *j, int64_t r0, int64_t r1, int worker) {    \
        const matmul_plan *p = j->p;                                                             \
        const int64_t N = p->cols, *start = j->l.start, *kk = j->k, *ent = j->ent;               \
        const size_t rb = (size_t)N * sizeof(T);                                                 \
        const T *vals = (const T *)(const void *)p->v.values;                                    \
        const unsigned char *b = j->b;                                                           \
        const int64_t end = start[r1];                                                           \
        (void)worker;                                                                            \
        for (int64_t r = r0; r < r1; r++) {                                                      \
            T *o = (T *)(void *)(j->out + (size_t)r * rb);                                       \
            A *restrict acc = ACC;                                                               \
            for (int64_t n = 0; n < N; n++) acc[n] = 0;                                          \
            for (int64_t q = start[r]; q < start[r + 1]; q++) {                                  \
                if (q + SPARSE_AHEAD < end)                                                      \
                    NDX_PREFETCH_SPAN(b + (size_t)kk[q + SPARSE_AHEAD] * rb, rb,                 \
                                      NDX_PREFETCH_L2);                                          \
                int64_t e = ent ? ent[q] : q;                                                    \
                const T *restrict br = (const T *)(const void *)(b + (size_t)kk[q] * rb);        \
                LOAD_A;                                                                          \
                for (int64_t n = 0; n < N; n++) ADD;                                             \
            }                                                                                    \
            STORE;                                                                               \
        }                                                                                        \
    }

/* float and double: in place in the output row. */
MATMUL_ROWS(f32, float, float, o, float a = vals[e], acc[n] += a * br[n], (void)0)
MATMUL_ROWS(f64, double, double, o, double a = vals[e], acc[n] += a * br[n], (void)0)
/* int32 wraps, as TensorFlow's does on the machines it runs on. */
MATMUL_ROWS(i32, int32_t, int32_t, o, uint32_t a = (uint32_t)vals[e],
            acc[n] = (int32_t)((uint32_t)acc[n] + a * (uint32_t)br[n]), (void)0)
/* float16 and bfloat16: a float row per worker, rounded once into the output. */
#define HALF_ACC (j->l.acc + (size_t)worker * ((((size_t)N * sizeof(float) + 63) & ~(size_t)63) / sizeof(float)))
MATMUL_ROWS(f16, uint16_t, float, HALF_ACC, float a = ndx_half_to_float(vals[e]),
            acc[n] += a * ndx_half_to_float(br[n]),
            for (int64_t n = 0; n < N; n++) o[n] = ndx_float_to_half(acc[n]))
MATMUL_ROWS(bf16, uint16_t, float, HALF_ACC, float a = ndx_bf16_to_float(vals[e]),
            acc[n] += a * ndx_bf16_to_float(br[n]),
            for (int64_t n = 0; n < N; n++) o[n] = ndx_float_to_bf16(acc[n]))

/* complex: pairs (re, im); a * b = (ar br - ai bi, ar bi + ai br), added to the output. */
#define MATMUL_COMPLEX(tag, R)                                                                   \
    typedef struct {                                                                             \
        R re, im;                                                                                \
    } tag##_t;                                                                                   \
    static void sdmm_rows_##tag(run_job *j, int64_t r0, int64_t r1, int worker) {                     \
        const matmul_plan *p = j->p;                                                             \
        const int64_t N = p->cols, *start = j->l.start, *kk = j->k, *ent = j->ent;               \
        const size_t rb = (size_t)N * sizeof(tag##_t);                                           \
        const tag##_t *vals = (const tag##_t *)(const void *)p->v.values;                        \
        const int64_t end = start[r1];                                                           \
        (void)worker;                                                                            \
        for (int64_t r = r0; r < r1; r++) {                                                      \
            tag##_t *o = (tag##_t *)(void *)(j->out + (size_t)r * rb);                           \
            for (int64_t n = 0; n < N; n++) o[n].re = o[n].im = 0;                               \
            for (int64_t q = start[r]; q < start[r + 1]; q++) {                                  \
                if (q + SPARSE_AHEAD < end)                                                      \
                    NDX_PREFETCH_SPAN(j->b + (size_t)kk[q + SPARSE_AHEAD] * rb, rb,              \
                                      NDX_PREFETCH_L2);                                          \
                tag##_t a = vals[ent ? ent[q] : q];                                              \
                if (p->adj_a) a.im = -a.im;                                                      \
                const tag##_t *br = (const tag##_t *)(const void *)(j->b + (size_t)kk[q] * rb);  \
                for (int64_t n = 0; n < N; n++) {                                                \
                    R re = a.re * br[n].re - a.im * br[n].im;                                    \
                    R im = a.re * br[n].im + a.im * br[n].re;                                    \
                    o[n].re += re;                                                               \
                    o[n].im += im;                                                               \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }
MATMUL_COMPLEX(c64, float)
MATMUL_COMPLEX(c128, double)

static void rows_fn(void *ctx, int64_t r0, int64_t r1, int worker) {
    run_job *j = ctx;
    switch (j->p->v.dtype) {
    case NDX_FLOAT32: sdmm_rows_f32(j, r0, r1, worker); break;
    case NDX_FLOAT64: sdmm_rows_f64(j, r0, r1, worker); break;
    case NDX_INT32: sdmm_rows_i32(j, r0, r1, worker); break;
    case NDX_FLOAT16: sdmm_rows_f16(j, r0, r1, worker); break;
    case NDX_BFLOAT16: sdmm_rows_bf16(j, r0, r1, worker); break;
    case NDX_COMPLEX64: sdmm_rows_c64(j, r0, r1, worker); break;
    default: sdmm_rows_c128(j, r0, r1, worker); break;
    }
}

static void matmul_run(const matmul_plan *p, void *scratch, ndx_tensor *out) {
    run_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.out = out->data;
    if (p->rows == 0 || p->cols == 0) return;
    int64_t n = p->v.nnz;
    if (n == 0) {
        ndx_parallel_zero(out->data, (size_t)(p->rows * p->cols) * p->v.itemsize, p->threads);
        return;
    }
    ndx_carver c = {scratch, 0};
    carve_run(p, &c, &j.l);
    if (p->grouped) {
        ndx_parallel_for(p->threads, ndx_sparse_chunks(p->threads, n), 1, starts_fn, &j);
        j.k = p->k;
        j.ent = NULL;
    } else {
        sort_by_row(&j);
        j.k = j.l.sk;
        j.ent = j.l.se;
    }
    j.b = p->b->data;
    if (p->adj_b) {
        int64_t grain = ((int64_t)1 << 16) / (p->cols * (int64_t)p->v.itemsize + 1) + 1;
        ndx_parallel_for(p->threads, p->inner, grain, transpose_fn, &j);
        j.b = j.l.bt;
    }
    ndx_parallel_for(p->threads, p->rows, j.l.grain, rows_fn, &j);
}

/* ---- the public calls ------------------------------------------------------------------------ */

static ndx_status execute(const ndx_sparse_tensor *a, const ndx_tensor *b, int adjoint_a,
                          int adjoint_b, const ndx_options *opt, ndx_tensor *out, int write,
                          ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, write ? opt : NULL, out, err));
    matmul_plan p;
    NDX_TRY(matmul_plan_make(a, b, adjoint_a, adjoint_b, c.threads, &p, err));
    if (!write) {
        *out = p.want;
        return NDX_OK;
    }
    void *check = NULL, *run = NULL;
    size_t bytes = 0;
    int allocated = 0;
    ndx_status s = ndx_call_scratch(&c, check_bytes(&p), 0, OP " index scratch", &check);
    if (s == NDX_OK) s = matmul_check(&p, check, err);
    if (s == NDX_OK) s = run_bytes(&p, &bytes, err);
    if (s == NDX_OK) s = ndx_call_scratch(&c, bytes, 0, OP " scratch", &run);
    if (s == NDX_OK) s = ndx_call_output(&c, &p.want, out, 0, "out", &allocated);
    if (s == NDX_OK) matmul_run(&p, run, out);
    ndx_call_release(&c, run);
    ndx_call_release(&c, check);
    return s;
}

ndx_status ndx_sparse_dense_matmul_shape(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                         int adjoint_a, int adjoint_b, ndx_tensor *out,
                                         ndx_error *err) {
    return execute(a, b, adjoint_a, adjoint_b, NULL, out, 0, err);
}

ndx_status ndx_sparse_dense_matmul(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                   int adjoint_a, int adjoint_b, const ndx_options *opt,
                                   ndx_tensor *out, ndx_error *err) {
    return execute(a, b, adjoint_a, adjoint_b, opt, out, 1, err);
}
