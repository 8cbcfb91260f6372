/* partition_run.c — dynamic_partition's count and run. Workers take contiguous chunks of rows.
 * The count checks every id and counts rows per (chunk, partition). A prefix sum over the chunks
 * gives each chunk the first row it fills in every output, so the run copies all chunks at once
 * and every output still holds its rows in their original order, identical at any thread count. */
#include <stdio.h>

#include "partition_plan.h"
#include "slice_copy.h"

typedef struct {
    const part_plan *plan;
    part_slot *slots; /* one row of `stride` slots per worker */
    size_t stride;
    int streaming; /* rows are whole cache lines into large, line-aligned outputs */
    int64_t bad[NDX_MAX_WORKERS];
} part_job;

/* Pass 1: count the rows of chunk [b, e) per partition, stopping at the first bad id. */
static void count_range(void *ctx, int64_t b, int64_t e, int worker) {
    part_job *job = ctx;
    const part_plan *p = job->plan;
    part_slot *cnt = job->slots + (size_t)worker * job->stride;
    const uint64_t np = (uint64_t)p->np;
    for (int q = 0; q < p->np; q++) cnt[q].count = 0;
    job->bad[worker] = -1;
#define COUNT(T)                                                                           \
    do {                                                                                   \
        const T *id = p->partitions->data;                                                 \
        for (int64_t i = b; i < e; i++) {                                                  \
            if ((uint64_t)(int64_t)id[i] >= np) {                                          \
                job->bad[worker] = i;                                                      \
                return;                                                                    \
            }                                                                              \
            cnt[id[i]].count++;                                                            \
        }                                                                                  \
    } while (0)
    NDX_INDEX_DISPATCH(p->partitions->dtype, COUNT);
#undef COUNT
}

ndx_status ndx_partition_fail_id(const ndx_tensor *partitions, int64_t i, int num_partitions,
                                 ndx_error *err) {
    char where[NDX_DIMS_TEXT] = "";
    const ndx_tensor *t = partitions;
    if (t->rank > 0) ndx_format_position(where, sizeof where, t->rank, t->shape, i);
    return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                    "dynamic_partition: partitions%s = %lld is not in [0, %d)", where,
                    (long long)ndx_read_index(t->data, t->dtype, i), num_partitions);
}

ndx_status ndx_partition_count(const part_plan *p, void *scratch, ndx_error *err) {
    if (p->workers == 0) return NDX_OK;
    part_job job;
    job.plan = p;
    job.slots = scratch;
    job.stride = p->stride;
    ndx_parallel_for(p->threads, p->rows, p->grain, count_range, &job);
    for (int w = 0; w < p->workers; w++) {
        if (job.bad[w] < 0) continue;
        return ndx_partition_fail_id(p->partitions, job.bad[w], p->np, err);
    }
    return NDX_OK;
}

ndx_tensor ndx_partition_output(const part_plan *p, const void *scratch, int q) {
    const part_slot *slots = scratch;
    ndx_tensor want = p->desc;
    for (int w = 0; w < p->workers; w++) want.shape[0] += slots[(size_t)w * p->stride + q].count;
    return want;
}

/* Pass 2: copy the rows of chunk [b, e) to where their partitions' cursors point. The ids were
 * all checked in pass 1. Inlined with constant rb and `store`, so each row size and kind of store
 * gets its own loop. Rows of whole cache lines into large outputs go with streaming stores: each
 * output fills sequentially, so every line is written whole and never read first. Measured on P1
 * (64-byte rows, 8 outputs, AMD EPYC): 18.5 -> 12.4 ms on one thread, 14.2 -> 10.6 on two. (On
 * Intel Xeon they were no faster; with rows that are not whole lines they are several times
 * slower anywhere.) */
static inline void copy_row(unsigned char *dst, const unsigned char *src, size_t rb) {
    memcpy(dst, src, rb);
}

#define PLACE(T)                                                                           \
    do {                                                                                   \
        const T *id = p->partitions->data;                                                 \
        const unsigned char *src = (const unsigned char *)p->data->data + (size_t)b * rb;  \
        for (int64_t i = b; i < e; i++, src += rb) {                                       \
            part_slot *s = &at[id[i]];                                                     \
            unsigned char *dst = s->at;                                                    \
            s->at = dst + rb;                                                              \
            store(dst, src, rb);                                                           \
        }                                                                                  \
    } while (0)

NDX_ALWAYS_INLINE void place_rows(const part_plan *p, part_slot *at, int64_t b, int64_t e,
                                  size_t rb,
                                  void (*store)(unsigned char *, const unsigned char *, size_t)) {
    NDX_INDEX_DISPATCH(p->partitions->dtype, PLACE);
}
#undef PLACE

static void place_range(void *ctx, int64_t b, int64_t e, int worker) {
    part_job *job = ctx;
    const part_plan *p = job->plan;
    part_slot *at = job->slots + (size_t)worker * job->stride;
#if NDX_HAVE_STREAMING
    if (job->streaming) { /* rows of whole lines */
        switch (p->row_bytes) {
        case 64: place_rows(p, at, b, e, 64, ndx_stream_slice); break;
        case 128: place_rows(p, at, b, e, 128, ndx_stream_slice); break;
        default: place_rows(p, at, b, e, p->row_bytes, ndx_stream_slice); break;
        }
        ndx_slices_done(1);
        return;
    }
#endif
    /* Row sizes common enough to get a copy the compiler unrolls. */
    switch (p->row_bytes) {
    case 1: place_rows(p, at, b, e, 1, copy_row); break;
    case 2: place_rows(p, at, b, e, 2, copy_row); break;
    case 4: place_rows(p, at, b, e, 4, copy_row); break;
    case 8: place_rows(p, at, b, e, 8, copy_row); break;
    case 16: place_rows(p, at, b, e, 16, copy_row); break;
    case 32: place_rows(p, at, b, e, 32, copy_row); break;
    case 64: place_rows(p, at, b, e, 64, copy_row); break;
    case 128: place_rows(p, at, b, e, 128, copy_row); break;
    default: place_rows(p, at, b, e, p->row_bytes, copy_row); break;
    }
}

void ndx_partition_run(const part_plan *p, void *scratch, ndx_tensor *outs) {
    part_job job;
    job.plan = p;
    job.slots = scratch;
    job.stride = p->stride;
    job.streaming = NDX_HAVE_STREAMING && p->row_bytes % 64 == 0 &&
                    (size_t)p->rows * p->row_bytes >= NDX_STREAM_MIN_BYTES;
    for (int q = 0; q < p->np; q++) {
        if ((uintptr_t)outs[q].data % 64 != 0) job.streaming = 0;
        /* Turn counts into cursors: chunk w starts after the rows of chunks 0..w-1. */
        unsigned char *at = outs[q].data;
        for (int w = 0; w < p->workers; w++) {
            part_slot *slot = &job.slots[(size_t)w * job.stride + q];
            int64_t c = slot->count;
            slot->at = at;
            if (c > 0 && p->row_bytes > 0) at += (size_t)c * p->row_bytes; /* at may be NULL */
        }
    }
    if (p->workers > 0 && p->row_bytes > 0)
        ndx_parallel_for(p->threads, p->rows, p->grain, place_range, &job);
}
