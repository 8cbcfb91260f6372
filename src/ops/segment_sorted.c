/* segment_sorted.c — the run of segment_* and sparse_segment_*: sorted ids make every segment a
 * run of rows, so the engine's owners need no buckets. Each worker owns a range of output rows,
 * finds where its ids start by binary search in the checked ids, writes its gaps with the
 * default and reduces each of its segments from its rows in order. */
#include "scatter_nd_plan.h" /* scatter_fill_pattern */
#include "segment_reduce.h"

/* Bytes of output and rows per worker below which one thread does it all. */
#define SORTED_WORKER_BYTES ((int64_t)1 << 16)
#define SORTED_SMALL_WORK ((int64_t)1 << 18)

typedef struct sorted_job {
    const segment_plan *p;
    const int64_t *slots; /* the sorted ids */
    const int64_t *src;   /* sparse: the data row of every id; NULL: row i is id i's */
    unsigned char *out;
    unsigned char *scratch;
    size_t acc_bytes; /* sparse: bytes of one accumulator row, rounded to 64 */
    unsigned char gap[16];  /* the element of rows no id names: 0, or 1 for PROD */
    unsigned char init[16]; /* SUM, MEAN, PROD: where a segment of several rows starts */
    int init_nonzero;
    segment_divide_fn divide;
} sorted_job;

static int sorted_workers(const segment_plan *p, int64_t *grain) {
    int64_t out_rows = p->want.shape[0];
    int64_t rb = (int64_t)p->row_bytes > 0 ? (int64_t)p->row_bytes : 1;
    int64_t work = (p->rows + out_rows) * rb; /* views of valid tensors: no overflow */
    *grain = SORTED_WORKER_BYTES / rb;
    if (*grain < 1) *grain = 1;
    if (work < SORTED_SMALL_WORK) *grain = out_rows > 0 ? out_rows : 1;
    return ndx_parallel_workers(p->threads, out_rows, *grain);
}

size_t segment_sorted_scratch(const segment_plan *p) {
    if (p->family != SEGMENT_SPARSE || p->slice == 0) return 0;
    int64_t grain;
    int workers = sorted_workers(p, &grain);
    size_t row = (size_t)p->slice * segment_accumulator_size(p->want.dtype);
    row = (row + 63) / 64 * 64;
    return (size_t)(workers > 0 ? workers : 1) * 2 * row;
}

/* First position in slots[0..n) holding a value >= v. */
static int64_t lower_bound(const int64_t *slots, int64_t n, int64_t v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (slots[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* segment_*: rows [first, first + n) of data into `row`, as Eigen's reducers: one row is
 * copied; MIN and MAX start from the first row (Eigen starts them from +-inf, which the first
 * row always replaces); SUM, MEAN and PROD start from 0 or 1 and take every row; MEAN divides by
 * T(n). */
static void reduce_rows(const sorted_job *j, unsigned char *row, int64_t first, int64_t n) {
    const segment_plan *p = j->p;
    const unsigned char *in = p->data + (size_t)first * p->row_bytes;
    int64_t from = 1;
    memcpy(row, in, p->row_bytes);
    if (n == 1) return;
    if (p->reduce != NDX_SEGMENT_MIN && p->reduce != NDX_SEGMENT_MAX) {
        if (j->init_nonzero)
            scatter_fill_pattern(row, p->row_bytes, j->init, p->want.itemsize);
        else
            memset(row, 0, p->row_bytes);
        from = 0;
    }
    if (p->slice == 1) {
        /* Single elements: the point kernel takes a batch of them at once (all landing on
         * slot 0, in order) instead of one call per row. */
        static const int64_t zeros[256];
        for (int64_t q = from; q < n; q += 256) {
            int64_t m = n - q < 256 ? n - q : 256;
            p->k.points(row, zeros, in + (size_t)q * p->row_bytes, m, p->want.itemsize);
        }
    } else {
        for (int64_t q = from; q < n; q++)
            p->k.run(row, in + (size_t)q * p->row_bytes, p->slice, p->want.itemsize);
    }
    if (p->reduce == NDX_SEGMENT_MEAN) {
        unsigned char divisor[16];
        segment_divisor(p->reduce, p->want.dtype, n, 0, divisor);
        j->divide(row, p->slice, divisor);
    }
}

static void sorted_fn(void *ctx, int64_t r0, int64_t r1, int worker) {
    const sorted_job *j = ctx;
    const segment_plan *p = j->p;
    size_t rb = p->row_bytes;
    int64_t pos = lower_bound(j->slots, p->rows, r0);
    void *acc = NULL, *part = NULL; /* sparse: this worker's two accumulator rows */
    if (j->scratch) {
        acc = j->scratch + (size_t)worker * 2 * j->acc_bytes;
        part = (unsigned char *)acc + j->acc_bytes;
    }
    for (int64_t r = r0; r < r1;) {
        int64_t next = pos < p->rows ? j->slots[pos] : r1; /* >= r: the ids are sorted */
        if (next > r1) next = r1;
        if (next > r) { /* a gap */
            scatter_fill_pattern(j->out + (size_t)r * rb, (size_t)(next - r) * rb, j->gap,
                                 p->want.itemsize);
            r = next;
            continue;
        }
        int64_t end = pos;
        while (end < p->rows && j->slots[end] == r) end++;
        unsigned char *row = j->out + (size_t)r * rb;
        if (j->src)
            segment_sparse_sum(p->want.dtype, p->reduce, p->data, rb, j->src + pos, end - pos,
                               p->rows - end, p->slice, row, acc, part);
        else
            reduce_rows(j, row, pos, end - pos);
        pos = end;
        r++;
    }
}

void segment_sorted_run(const segment_plan *p, const int64_t *slots, const int64_t *src,
                        unsigned char *out, void *scratch) {
    int64_t out_rows = p->want.shape[0];
    if (out_rows == 0 || p->row_bytes == 0) return;
    sorted_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.slots = slots;
    j.src = src;
    j.out = out;
    j.scratch = scratch;
    j.acc_bytes = ((size_t)p->slice * segment_accumulator_size(p->want.dtype) + 63) / 64 * 64;
    /* Gaps: 0, or 1 for PROD (TensorFlow's default_value); min and max too give 0. */
    segment_identity(p->reduce == NDX_SEGMENT_PROD ? NDX_SEGMENT_PROD : NDX_SEGMENT_SUM,
                     p->want.dtype, j.gap);
    j.init_nonzero = segment_identity(p->reduce, p->want.dtype, j.init);
    j.divide = segment_find_divide(p->want.dtype);
    int64_t grain;
    sorted_workers(p, &grain);
    ndx_parallel_for(p->threads, out_rows, grain, sorted_fn, &j);
}
