/* partition_run.c — dynamic_partition's count and run. Workers take contiguous chunks of rows.
 * The count reads every id once, checks it, counts rows per (chunk, partition) and keeps a copy
 * of it (in 1, 2 or 4 bytes); the run places rows by those copies alone, so the places match
 * the counts even if another thread changes the ids meanwhile. A prefix sum over the chunks
 * gives each chunk the first row it fills in every output, so the run copies all chunks at once
 * and every output still holds its rows in their original order, identical at any thread count. */
#include <stdio.h>

#include "partition_plan.h"
#include "slice_copy.h"

typedef struct {
    const part_plan *plan;
    part_slot *slots; /* one row of `stride` slots per worker */
    void *ids;        /* the copies of the ids (NULL: the count keeps none) */
    size_t stride;
    int streaming; /* rows are whole cache lines into large, line-aligned outputs */
    int64_t bad[NDX_MAX_WORKERS];
} part_job;

/* Pass 1: counts the rows of chunk [b, e) per partition and copies their ids into `copy` (as
 * U, unless copy is NULL); returns the first bad id's position, or -1. Inlined with constant dt
 * and U. */
#define COUNT_IDS(U)                                                                       \
    do {                                                                                   \
        U *to = copy;                                                                      \
        for (int64_t i = b; i < e; i++) {                                                  \
            int64_t id = ndx_read_index(ids, dt, i); /* read once: checked, counted, kept */ \
            if ((uint64_t)id >= np) return i;                                              \
            cnt[id].count++;                                                               \
            if (to) to[i] = (U)id;                                                         \
        }                                                                                  \
    } while (0)

NDX_ALWAYS_INLINE int64_t count_ids(const void *ids, ndx_dtype dt, void *copy, int id_bytes,
                                    part_slot *cnt, uint64_t np, int64_t b, int64_t e) {
    switch (id_bytes) {
    case 1: COUNT_IDS(uint8_t); break;
    case 2: COUNT_IDS(uint16_t); break;
    default: COUNT_IDS(uint32_t); break;
    }
    return -1;
}
#undef COUNT_IDS

/* Two partitions (a boolean mask cast to ids, the commonest use): the count is the sum of the
 * ids, with no counter in memory to carry from one id to the next, and the range check is folded
 * over blocks so the loop vectorizes; a block with a bad id is read again (the copies already
 * made of it are never used: the call fails). Each id is read as the unsigned type U of its
 * width: it is 0 or 1 exactly when U >> 1 is 0 (a negative id has high bits), and a block's
 * sum fits U, so the loop needs no widening. */
#define COUNT_TWO_BLOCK 256
#define COUNT_TWO(T, U)                                                                    \
    do {                                                                                   \
        const T *in = ids;                                                                 \
        uint8_t *to = copy;                                                                \
        for (int64_t s = b; s < e; s += COUNT_TWO_BLOCK) {                                 \
            int64_t end = e - s < COUNT_TWO_BLOCK ? e : s + COUNT_TWO_BLOCK;               \
            U any_bad = 0, sum = 0;                                                        \
            if (to)                                                                        \
                for (int64_t i = s; i < end; i++) {                                        \
                    U id = (U)in[i];                                                       \
                    any_bad |= (U)(id >> 1);                                               \
                    sum = (U)(sum + (id & 1));                                             \
                    to[i] = (uint8_t)(id & 1);                                             \
                }                                                                          \
            else                                                                           \
                for (int64_t i = s; i < end; i++) {                                        \
                    U id = (U)in[i];                                                       \
                    any_bad |= (U)(id >> 1);                                               \
                    sum = (U)(sum + (id & 1));                                             \
                }                                                                          \
            if (any_bad) { /* (s itself if another thread has mended the id meanwhile) */  \
                for (int64_t i = s; i < end; i++)                                          \
                    if ((uint64_t)(int64_t)in[i] > 1) return i;                            \
                return s;                                                                  \
            }                                                                              \
            ones += (int64_t)sum;                                                          \
        }                                                                                  \
    } while (0)

/* (Integers only: its AVX-512 and AVX2 clones give the same counts and copies.) */
NDX_MULTIVERSION static int64_t count_two(const void *ids, ndx_dtype dt, uint8_t *copy,
                                          part_slot *cnt, int64_t b, int64_t e) {
    int64_t ones = 0;
    switch (dt) {
    case NDX_INT64: COUNT_TWO(int64_t, uint64_t); break;
    case NDX_INT32: COUNT_TWO(int32_t, uint32_t); break;
    default: COUNT_TWO(int16_t, uint16_t); break;
    }
    cnt[0].count = (e - b) - ones;
    cnt[1].count = ones;
    return -1;
}
#undef COUNT_TWO

static void count_range(void *ctx, int64_t b, int64_t e, int worker) {
    part_job *job = ctx;
    const part_plan *p = job->plan;
    part_slot *cnt = job->slots + (size_t)worker * job->stride;
    const uint64_t np = (uint64_t)p->np;
    for (int q = 0; q < p->np; q++) cnt[q].count = 0;
    const void *ids = p->partitions->data;
    int64_t bad;
    if (p->np == 2) /* (then id_bytes is 1) */
        bad = count_two(ids, p->partitions->dtype, job->ids, cnt, b, e);
    else if (p->partitions->dtype == NDX_INT64)
        bad = count_ids(ids, NDX_INT64, job->ids, p->id_bytes, cnt, np, b, e);
    else if (p->partitions->dtype == NDX_INT32)
        bad = count_ids(ids, NDX_INT32, job->ids, p->id_bytes, cnt, np, b, e);
    else
        bad = count_ids(ids, NDX_INT16, job->ids, p->id_bytes, cnt, np, b, e);
    job->bad[worker] = bad;
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

ndx_status ndx_partition_count(const part_plan *p, void *scratch, int counts_only,
                                ndx_error *err) {
    if (p->workers == 0) return NDX_OK;
    part_job job;
    job.plan = p;
    job.slots = scratch;
    job.ids = counts_only ? NULL : (unsigned char *)scratch + p->ids_at;
    job.stride = p->stride;
    ndx_parallel_for(p->threads, p->rows, p->grain, count_range, &job);
    for (int w = 0; w < p->workers; w++) {
        if (job.bad[w] < 0) continue;
        return ndx_partition_fail_id(p->partitions, job.bad[w], p->np, err);
    }
    return NDX_OK;
}

void ndx_partition_describe(const part_plan *p, const void *scratch, int q, ndx_tensor *out) {
    const part_slot *slots = scratch;
    int64_t rows = 0;
    for (int w = 0; w < p->workers; w++) rows += slots[(size_t)w * p->stride + q].count;
    /* Field by field: this runs for every output of every call, and a whole-struct copy (or a
     * returned one) moves all NDX_MAX_RANK dims twice. */
    out->dtype = p->desc.dtype;
    out->itemsize = p->desc.itemsize;
    out->rank = p->desc.rank;
    out->shape[0] = rows;
    for (int i = 1; i < NDX_MAX_RANK; i++) out->shape[i] = p->desc.shape[i];
}

/* Pass 2: copy the rows of chunk [b, e) to where their partitions' cursors point, by the copies
 * pass 1 made of the ids it checked. Inlined with constant rb and `store`, so each row size and
 * kind of store gets its own loop. Rows of whole cache lines into large outputs go with
 * streaming stores: each output fills sequentially, so every line is written whole and never
 * read first. Measured on P1
 * (64-byte rows, 8 outputs, AMD EPYC): 18.5 -> 12.4 ms on one thread, 14.2 -> 10.6 on two. (On
 * Intel Xeon they were no faster; with rows that are not whole lines they are several times
 * slower anywhere.) */
static inline void copy_row(unsigned char *dst, const unsigned char *src, size_t rb) {
    memcpy(dst, src, rb);
}

#define PLACE(U)                                                                           \
    do {                                                                                   \
        const U *id = ids;                                                                 \
        const unsigned char *src = (const unsigned char *)p->data->data + (size_t)b * rb;  \
        for (int64_t i = b; i < e; i++, src += rb) {                                       \
            part_slot *s = &at[id[i]];                                                     \
            unsigned char *dst = s->at;                                                    \
            s->at = dst + rb;                                                              \
            store(dst, src, rb);                                                           \
        }                                                                                  \
    } while (0)

/* Two partitions: both cursors stay in registers and every row is stored without a branch (a
 * cursor kept in memory makes each row wait for the previous row's update of it). */
NDX_ALWAYS_INLINE void place_two(const uint8_t *id, part_slot *at, const unsigned char *src,
                                 int64_t b, int64_t e, size_t rb,
                                 void (*store)(unsigned char *, const unsigned char *, size_t)) {
    uintptr_t to0 = (uintptr_t)at[0].at, to1 = (uintptr_t)at[1].at;
    for (int64_t i = b; i < e; i++, src += rb) {
        uintptr_t one = id[i], pick1 = (uintptr_t)0 - one; /* masks, not a branch: ids are random */
        store((unsigned char *)((to0 & ~pick1) | (to1 & pick1)), src, rb);
        to0 += (one ^ 1) * rb;
        to1 += one * rb;
    }
    at[0].at = (unsigned char *)to0;
    at[1].at = (unsigned char *)to1;
}

NDX_ALWAYS_INLINE void place_rows(const part_plan *p, const void *ids, part_slot *at, int64_t b,
                                  int64_t e, size_t rb,
                                  void (*store)(unsigned char *, const unsigned char *, size_t)) {
    if (p->np == 2) {
        const unsigned char *src = (const unsigned char *)p->data->data + (size_t)b * rb;
        int64_t i = b;
        if (store == copy_row) { /* whole steps of rows first (partition_two.c) */
            unsigned char *to[2] = {at[0].at, at[1].at};
            i = ndx_partition_place_two(ids, to, src, b, e, rb);
            at[0].at = to[0];
            at[1].at = to[1];
        }
        place_two(ids, at, src + (size_t)(i - b) * rb, i, e, rb, store);
        return;
    }
    switch (p->id_bytes) {
    case 1: PLACE(uint8_t); break;
    case 2: PLACE(uint16_t); break;
    default: PLACE(uint32_t); break;
    }
}
#undef PLACE

static void place_range(void *ctx, int64_t b, int64_t e, int worker) {
    part_job *job = ctx;
    const part_plan *p = job->plan;
    part_slot *at = job->slots + (size_t)worker * job->stride;
#if NDX_HAVE_STREAMING
    if (job->streaming) { /* rows of whole lines */
        switch (p->row_bytes) {
        case 64: place_rows(p, job->ids, at, b, e, 64, ndx_stream_slice); break;
        case 128: place_rows(p, job->ids, at, b, e, 128, ndx_stream_slice); break;
        default: place_rows(p, job->ids, at, b, e, p->row_bytes, ndx_stream_slice); break;
        }
        ndx_slices_done(1);
        return;
    }
#endif
    /* Row sizes common enough to get a copy the compiler unrolls. */
    switch (p->row_bytes) {
    case 1: place_rows(p, job->ids, at, b, e, 1, copy_row); break;
    case 2: place_rows(p, job->ids, at, b, e, 2, copy_row); break;
    case 4: place_rows(p, job->ids, at, b, e, 4, copy_row); break;
    case 8: place_rows(p, job->ids, at, b, e, 8, copy_row); break;
    case 16: place_rows(p, job->ids, at, b, e, 16, copy_row); break;
    case 32: place_rows(p, job->ids, at, b, e, 32, copy_row); break;
    case 64: place_rows(p, job->ids, at, b, e, 64, copy_row); break;
    case 128: place_rows(p, job->ids, at, b, e, 128, copy_row); break;
    default: place_rows(p, job->ids, at, b, e, p->row_bytes, copy_row); break;
    }
}

void ndx_partition_run(const part_plan *p, void *scratch, ndx_tensor *outs) {
    part_job job;
    job.plan = p;
    job.slots = scratch;
    job.ids = (unsigned char *)scratch + p->ids_at;
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

/* ---- undone: the rows of the parts back to the positions of their ids ---------------------- */

typedef struct {
    const part_plan *plan;
    part_slot *slots; /* one row of `stride` slots per worker: its next row of each part */
    const void *ids;
    unsigned char *out;
    size_t rb;
} unrun_job;

#define TAKE(U)                                                                            \
    do {                                                                                   \
        const U *id = ids;                                                                 \
        for (int64_t i = b; i < e; i++, dst += rb) {                                       \
            part_slot *s = &at[id[i]];                                                     \
            memcpy(dst, s->at, rb);                                                        \
            s->at += rb;                                                                   \
        }                                                                                  \
    } while (0)

/* Rows [b, e) of out from the parts' cursors; inlined with constant rb. Two parts: both cursors
 * in registers, the source picked by masks (ids are random), as place_two. */
NDX_ALWAYS_INLINE void take_rows(const part_plan *p, const void *ids, part_slot *at,
                                 unsigned char *dst, int64_t b, int64_t e, size_t rb) {
    if (p->np == 2) {
        const uint8_t *id = ids;
        const unsigned char *from[2] = {at[0].at, at[1].at};
        int64_t i = ndx_partition_take_two(id, from, dst, b, e, rb); /* whole steps first */
        dst += (size_t)(i - b) * rb;
        uintptr_t from0 = (uintptr_t)from[0], from1 = (uintptr_t)from[1];
        for (; i < e; i++, dst += rb) {
            uintptr_t one = id[i], pick1 = (uintptr_t)0 - one;
            memcpy(dst, (const unsigned char *)((from0 & ~pick1) | (from1 & pick1)), rb);
            from0 += (one ^ 1) * rb;
            from1 += one * rb;
        }
        return;
    }
    switch (p->id_bytes) {
    case 1: TAKE(uint8_t); break;
    case 2: TAKE(uint16_t); break;
    default: TAKE(uint32_t); break;
    }
}
#undef TAKE

static void unrun_range(void *ctx, int64_t b, int64_t e, int worker) {
    unrun_job *job = ctx;
    const part_plan *p = job->plan;
    part_slot *at = job->slots + (size_t)worker * p->stride;
    unsigned char *dst = job->out + (size_t)b * job->rb;
    switch (job->rb) {
    case 1: take_rows(p, job->ids, at, dst, b, e, 1); break;
    case 2: take_rows(p, job->ids, at, dst, b, e, 2); break;
    case 4: take_rows(p, job->ids, at, dst, b, e, 4); break;
    case 8: take_rows(p, job->ids, at, dst, b, e, 8); break;
    case 16: take_rows(p, job->ids, at, dst, b, e, 16); break;
    default: take_rows(p, job->ids, at, dst, b, e, job->rb); break;
    }
}

void ndx_partition_unrun(const part_plan *p, void *scratch, const ndx_tensor *parts,
                         size_t row_bytes, void *out) {
    if (p->workers == 0 || row_bytes == 0) return;
    unrun_job job = {p, scratch, (unsigned char *)scratch + p->ids_at, out, row_bytes};
    for (int q = 0; q < p->np; q++) { /* counts to cursors: chunk w after chunks 0..w-1 */
        unsigned char *at = parts[q].data;
        for (int w = 0; w < p->workers; w++) {
            part_slot *slot = &job.slots[(size_t)w * p->stride + q];
            int64_t c = slot->count;
            slot->at = at;
            if (c > 0) at += (size_t)c * row_bytes;
        }
    }
    ndx_parallel_for(p->threads, p->rows, p->grain, unrun_range, &job);
}
