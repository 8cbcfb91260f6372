/* segment_reduce.h — the segment reductions (ndx.h section 5g): unsorted_segment_*, segment_*
 * and sparse_segment_*. Private to src/ops.
 *
 * One engine, three parameters sets. Every call reads its ids (and a sparse op's indices) once
 * into int64 scratch and checks them there (the check step), then:
 *   unsorted  the scatter engine (scatter_nd_plan.h) scatters the data rows by the checked ids
 *             into an output that starts as the op's identity, with the op's combine
 *             (scatter_combine.h); MEAN and SQRT_N then divide each row by its count. Narrow
 *             rows into an output that stays in cache skip the copy: one thread checks and
 *             applies the ids in one pass, into scratch (segment_reduce.c, `cached`);
 *   sorted    each segment is a run of rows; owner threads take ranges of output rows and
 *   sparse    reduce each segment's rows in order (segment_sorted.c): the segment_* ops as
 *             Eigen's reducers do, the sparse ops as TensorFlow's sparse kernel groups its sums.
 * Every output row has one owner, which applies its rows in index order: the same bits at any
 * thread count. */
#ifndef NDX_SEGMENT_REDUCE_H
#define NDX_SEGMENT_REDUCE_H

#include "core.h"
#include "scatter_combine.h"

typedef enum segment_family { SEGMENT_UNSORTED, SEGMENT_SORTED, SEGMENT_SPARSE } segment_family;

typedef struct segment_plan {
    const char *op; /* "unsorted_segment_sum", ... */
    segment_family family;
    ndx_segment_op reduce;
    ndx_tensor want;  /* the output, data NULL; sorted and sparse: rows known after the check */
    const unsigned char *data;
    int64_t data_rows;  /* rows of data: what indices address (sparse) */
    int64_t rows;       /* ids: rows reduced */
    int64_t slice;      /* elements per row */
    size_t row_bytes;
    const ndx_tensor *ids;
    const ndx_tensor *indices; /* sparse */
    int64_t num_segments;      /* unsorted and sparse; NDX_SEGMENTS_FROM_IDS: none */
    ndx_combine k;
    int threads;
    int cached; /* unsorted, narrow rows into an output that stays in cache (segment_reduce.c) */
} segment_plan;

/* ---- infer (segment_infer.c) --------------------------------------------------------------- */

/* "unsorted_segment_sum", "segment_max", "sparse_segment_sqrt_n", ... */
const char *segment_op_label(segment_family family, ndx_segment_op op);
/* The checks of each family on specs, as the public infer functions (which call them). `views`:
 * the specs are of views already checked (their layouts are not checked again). */
ndx_status segment_unsorted_infer(ndx_segment_op op, const ndx_spec *data, const ndx_spec *ids,
                                  int64_t num_segments, int views, ndx_spec *out, ndx_error *err);
ndx_status segment_sorted_infer(ndx_segment_op op, const ndx_spec *data, const ndx_spec *ids,
                                int views, ndx_spec *out, ndx_error *err);
ndx_status segment_sparse_infer(ndx_segment_op op, const ndx_spec *data, const ndx_spec *indices,
                                const ndx_spec *ids, int64_t num_segments, int views,
                                ndx_spec *out, ndx_error *err);

/* ---- per-dtype helpers (segment_kernels.c) ------------------------------------------------- */

/* The element every output row of an unsorted reduction starts as, and a sorted SUM/MEAN/PROD
 * segment of several rows starts from: 0 (SUM, MEAN, SQRT_N), 1 (PROD), the dtype's highest
 * (MIN) or lowest (MAX) finite value. Returns 0 when that element is all zero bytes, 1
 * otherwise. */
int segment_identity(ndx_segment_op op, ndx_dtype dtype, void *element);
/* The divisor of a MEAN or SQRT_N row of `count` >= 1 rows, one element of `dtype`: MEAN
 * T(count), SQRT_N sqrt(T(count)). `sum_of_ones`: the count is TensorFlow Python's
 * unsorted_segment_sum of ones in the dtype, which stops growing once 1 no longer changes it. */
void segment_divisor(ndx_segment_op op, ndx_dtype dtype, int64_t count, int sum_of_ones,
                     void *element);
/* row[i] = row[i] / divisor for i in [0, n) (integers truncate; a zero divisor gives 0). */
typedef void (*segment_divide_fn)(void *row, int64_t n, const void *divisor);
segment_divide_fn segment_find_divide(ndx_dtype dtype);

/* Rows of a sparse sum or embedding bag between a row's prefetch (into L2) and its read. The rows are scattered
 * over a table far larger than the caches, so each read waits on memory unless it was asked for
 * early. embedding_bag sum of 1.31M ids over a [1000000, 64] float32 table (huge pages), Intel
 * Xeon, one thread: 178 ms without; into L1 8 ahead 56 ms, 16 54; into L2 16 ahead 53, 32 45,
 * 128 44 (two threads: 85 ms without, 30 at 32 ahead). */
#define SPARSE_AHEAD 32

/* Row src[q] of data, after the prefetch of row src[q + SPARSE_AHEAD] where that is one of the
 * `known` entries of src the caller reads. */
static inline const unsigned char *segment_fetch_row(const unsigned char *data, size_t rb,
                                                     const int64_t *src, int64_t q,
                                                     int64_t known) {
    if (q + SPARSE_AHEAD < known)
        NDX_PREFETCH_SPAN(data + (size_t)src[q + SPARSE_AHEAD] * rb, rb, NDX_PREFETCH_L2);
    return data + (size_t)src[q] * rb;
}

/* TensorFlow's sparse segment sum of one segment: rows data + src[q] * row_bytes for q in
 * [0, n), n >= 1, summed in its grouping and scaled for MEAN and SQRT_N (ndx.h), into `out`
 * (slice elements of the data's dtype). src[n .. n + ahead) are valid rows too, read next: the
 * first of them are prefetched while this segment is summed. acc and part are two rows of the
 * accumulator type (segment_accumulator_size bytes per element each), 64-byte aligned. */
void segment_sparse_sum(ndx_dtype dtype, ndx_segment_op op, const unsigned char *data,
                        size_t row_bytes, const int64_t *src, int64_t n, int64_t ahead,
                        int64_t slice, unsigned char *out, void *acc, void *part);
/* Bytes per element of the sparse sum's accumulator (float for float16 and bfloat16). */
size_t segment_accumulator_size(ndx_dtype dtype);

/* ---- the sorted and sparse run (segment_sorted.c) ------------------------------------------ */

/* Scratch bytes segment_sorted_run needs (per-worker accumulator rows of the sparse ops); 0 on
 * overflow is impossible for valid views. */
size_t segment_sorted_scratch(const segment_plan *p);
/* Writes every row of out (p->want): each segment of the sorted ids `slots` (p->rows of them)
 * reduced from its rows (data rows slots' positions, or for sparse data[src[i]]), gaps 0 (PROD:
 * 1). */
void segment_sorted_run(const segment_plan *p, const int64_t *slots, const int64_t *src,
                        unsigned char *out, void *scratch);

#endif /* NDX_SEGMENT_REDUCE_H */
