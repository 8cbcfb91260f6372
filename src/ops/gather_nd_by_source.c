/* gather_nd_by_source.c — gather_nd's copy in source order, for a large output of whole, aligned
 * cache lines from a params larger than the caches.
 *
 * Random slice reads cost about twice what sequential ones do (measured for 64-byte to 4-KiB
 * slices), while whole-line streaming stores do not mind being scattered. So the rows are sorted
 * by where their slices lie in params and copied in that order: params is read almost
 * sequentially, out is written scattered. The sort is global, not per worker: each thread then
 * reads one contiguous part of params at full density (20% faster on two cores than each thread
 * sorting its own rows, whose slices are spread over all of params at half the density).
 *
 * One pass over up to PASS_MAX_ROWS rows, in four phases (the same split of rows in A and C):
 *   A  each worker computes the offsets of its rows and counts them per region of params;
 *   B  (one thread) prefix sums give every (region, worker) its place, so the order is stable;
 *   C  each worker moves its rows into region order;
 *   D1 each worker sorts the rows of its regions by finer position (counts in L1);
 *   D2 the sorted sequence is split evenly by position and each worker copies its part, so a
 *      region holding most rows (skewed indices) does not leave the other threads idle.
 * Every row of out is written once, by the worker holding its sorted position: the bytes do not
 * depend on the thread count. */
#include "gather_nd_plan.h"
#include "slice_copy.h"

#if NDX_HAVE_STREAMING

/* Rows sorted per pass (24 bytes of scratch each). A pass must cover many rows: the fewer rows
 * per slice of params, the further apart the reads. */
#define PASS_MAX_ROWS ((int64_t)1 << 21)
/* Regions of params for the first counting sort: few enough that the scatter's write streams
 * stay in L1. */
#define REGIONS 64
/* Most buckets of the second counting sort, within one region: the counts stay in L1. */
#define MAX_FINE ((int64_t)1 << 12)
/* Slices this large are sequential reads by themselves; sorting them gains nothing. */
#define SORT_MAX_SLICE ((size_t)64 << 10)
/* A params this small stays in the caches, where random reads cost no more than sequential. */
#define SORT_MIN_PARAMS ((size_t)8 << 20)
/* Rows below which a worker of the copy phase costs more than it saves. */
#define COPY_GRAIN_ROWS 256

typedef struct source_sort {
    const gather_plan *p;
    int64_t first, n;       /* the rows of this pass */
    int64_t grain;          /* split of rows in phases A and C */
    int workers;            /* of phases A, C and D1 */
    int region_shift;       /* a region covers 2^region_shift bytes of params ... */
    int fine_shift;         /* ... and a fine bucket 2^fine_shift */
    int64_t fine_buckets;   /* per region */
    int64_t *off;           /* [n] by row; after phase C, by sorted position */
    int64_t *reg_off;       /* [n] by region */
    uint32_t *reg_row;      /* [n] by region: row - first */
    uint32_t *sorted_row;   /* [n] by sorted position */
    uint32_t *next;         /* [workers][REGIONS]: rows per region, then where the next goes */
    uint32_t *starts;       /* [REGIONS + 1] */
    int *groups;            /* [workers + 1]: worker w sorts regions groups[w] .. groups[w+1]-1 */
    uint32_t *fine_counts;  /* [workers][fine_buckets + 1] */
} source_sort;

static inline int64_t region_of(const source_sort *s, int64_t off) {
    return off < 0 ? 0 : off >> s->region_shift; /* bad rows (zeros) go first */
}

static void count_regions(void *ctx, int64_t begin, int64_t end, int worker) {
    source_sort *s = ctx;
    gather_row_offsets(s->p, s->first + begin, end - begin, s->off + begin);
    uint32_t *count = s->next + (size_t)worker * REGIONS;
    memset(count, 0, REGIONS * sizeof *count);
    for (int64_t i = begin; i < end; i++) count[region_of(s, s->off[i])]++;
}

static void scatter_regions(void *ctx, int64_t begin, int64_t end, int worker) {
    source_sort *s = ctx;
    uint32_t *next = s->next + (size_t)worker * REGIONS;
    for (int64_t i = begin; i < end; i++) {
        uint32_t at = next[region_of(s, s->off[i])]++;
        s->reg_off[at] = s->off[i];
        s->reg_row[at] = (uint32_t)i;
    }
}

/* Phase B: places for every (region, worker), and regions shared out by row count. */
static void place_regions(source_sort *s) {
    uint32_t at = 0;
    for (int r = 0; r < REGIONS; r++) {
        s->starts[r] = at;
        for (int w = 0; w < s->workers; w++) {
            uint32_t *slot = s->next + (size_t)w * REGIONS + r;
            uint32_t count = *slot;
            *slot = at;
            at += count;
        }
    }
    s->starts[REGIONS] = at;
    int r = 0;
    s->groups[0] = 0;
    for (int w = 1; w < s->workers; w++) {
        int64_t target = s->n * w / s->workers;
        while (r < REGIONS && (int64_t)s->starts[r] < target) r++;
        s->groups[w] = r;
    }
    s->groups[s->workers] = REGIONS;
}

/* Phase D1: rows of region r by fine bucket, into off / sorted_row at the region's place. */
static void sort_region(const source_sort *s, int r, uint32_t *counts) {
    int64_t lo = s->starts[r], n = (int64_t)s->starts[r + 1] - lo;
    if (n == 0) return;
    int64_t mask = s->fine_buckets - 1;
    const int64_t *reg_off = s->reg_off + lo;
    const uint32_t *reg_row = s->reg_row + lo;
#define FINE(o) ((o) < 0 ? 0 : ((o) >> s->fine_shift) & mask)
    memset(counts, 0, (size_t)(s->fine_buckets + 1) * sizeof *counts);
    for (int64_t i = 0; i < n; i++) counts[FINE(reg_off[i]) + 1]++;
    for (int64_t b = 0; b < s->fine_buckets; b++) counts[b + 1] += counts[b];
    for (int64_t i = 0; i < n; i++) {
        uint32_t at = (uint32_t)lo + counts[FINE(reg_off[i])]++;
        s->off[at] = reg_off[i];
        s->sorted_row[at] = reg_row[i];
    }
#undef FINE
}

static void sort_groups(void *ctx, int64_t begin, int64_t end, int worker) {
    source_sort *s = ctx;
    uint32_t *counts = s->fine_counts + (size_t)worker * (size_t)(s->fine_buckets + 1);
    for (int64_t g = begin; g < end; g++)
        for (int r = s->groups[g]; r < s->groups[g + 1]; r++) sort_region(s, r, counts);
}

/* Phase D2. Sorted rows are read nearly in address order, which the hardware prefetcher follows
 * by itself: software prefetches here only compete with it for line-fill buffers (measured
 * slower). */
static void copy_sorted(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const source_sort *s = ctx;
    const gather_plan *p = s->p;
    size_t size = p->slice_bytes;
    unsigned char *dst = p->out + (size_t)s->first * size;
    for (int64_t t = begin; t < end; t++)
        ndx_stream_slice(dst + (size_t)s->sorted_row[t] * size,
                         s->off[t] >= 0 ? p->params + s->off[t] : NULL, size);
    ndx_slices_done(1);
}

/* Whether scattered streaming stores are cheap enough here for sorting to pay. On Intel Xeon
 * (where this path was tuned) it beat the in-order copy; on AMD EPYC, one thread, the in-order
 * copy took 9.5 ms on G1 against 13.6 sorted, and 4.0 ms on G3 against 7.5 (cached stores in
 * sorted order were no better: 12.1 and 6.7). A property of the CPU, read on each call: no
 * global state to set up. A params in the caches reads randomly as fast as sequentially. */
int gather_nd_by_source_pays(const gather_plan *p) {
    return ndx_cpu_is_intel() && p->params_bytes >= SORT_MIN_PARAMS;
}

int gather_nd_sorted_applies(const gather_plan *p, int out_aligned) {
    return out_aligned && p->slice_bytes % 64 == 0 && p->slice_bytes <= SORT_MAX_SLICE;
}

/* The sort's geometry for a pass of up to `pass` rows: region and fine-bucket sizes. */
static void shape_sort(source_sort *s, const gather_plan *p, int64_t pass) {
    s->region_shift = 6;
    while (((p->params_bytes - 1) >> s->region_shift) >= REGIONS) s->region_shift++;
    /* About one fine bucket per row of a region, each at least a cache line. */
    int64_t per_region = pass / REGIONS;
    s->fine_shift = s->region_shift;
    while (s->fine_shift > 6 && ((int64_t)1 << (s->region_shift - s->fine_shift)) < MAX_FINE &&
           ((int64_t)1 << (s->region_shift - s->fine_shift)) < per_region)
        s->fine_shift--;
    s->fine_buckets = (int64_t)1 << (s->region_shift - s->fine_shift);
}

size_t gather_nd_sorted_scratch(const gather_plan *p, int threads, int64_t grain) {
    source_sort s;
    int64_t pass = p->rows < PASS_MAX_ROWS ? p->rows : PASS_MAX_ROWS;
    int workers = ndx_parallel_workers(threads, pass, grain);
    shape_sort(&s, p, pass);
    size_t rows_bytes = (size_t)pass * (2 * sizeof(int64_t) + 2 * sizeof(uint32_t));
    return rows_bytes + (size_t)workers * REGIONS * sizeof(uint32_t) +
           (REGIONS + 1) * sizeof(uint32_t) + (size_t)(workers + 1) * sizeof(int) +
           (size_t)workers * (size_t)(s.fine_buckets + 1) * sizeof(uint32_t);
}

void gather_nd_copy_sorted(const gather_plan *p, int threads, int64_t grain, void *scratch) {
    source_sort s;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.grain = grain;
    int64_t pass = p->rows < PASS_MAX_ROWS ? p->rows : PASS_MAX_ROWS;
    int workers = ndx_parallel_workers(threads, pass, grain);
    shape_sort(&s, p, pass);
    s.off = scratch;
    s.reg_off = s.off + pass;
    s.reg_row = (uint32_t *)(void *)(s.reg_off + pass);
    s.sorted_row = s.reg_row + pass;
    s.next = s.sorted_row + pass;
    s.starts = s.next + (size_t)workers * REGIONS;
    s.fine_counts = s.starts + REGIONS + 1;
    s.groups = (int *)(void *)(s.fine_counts + (size_t)workers * (size_t)(s.fine_buckets + 1));

    for (s.first = 0; s.first < p->rows; s.first += pass) {
        s.n = p->rows - s.first < pass ? p->rows - s.first : pass;
        s.workers = ndx_parallel_workers(threads, s.n, grain);
        ndx_parallel_for(threads, s.n, grain, count_regions, &s);
        place_regions(&s);
        ndx_parallel_for(threads, s.n, grain, scatter_regions, &s);
        ndx_parallel_for(s.workers, s.workers, 1, sort_groups, &s);
        ndx_parallel_for(threads, s.n, COPY_GRAIN_ROWS, copy_sorted, &s);
    }
}

#else

/* No streaming stores: scattered writes would cost more than sorting saves. */
int gather_nd_by_source_pays(const gather_plan *p) {
    (void)p;
    return 0;
}

int gather_nd_sorted_applies(const gather_plan *p, int out_aligned) {
    (void)p, (void)out_aligned;
    return 0;
}

size_t gather_nd_sorted_scratch(const gather_plan *p, int threads, int64_t grain) {
    (void)p, (void)threads, (void)grain;
    return 0;
}

void gather_nd_copy_sorted(const gather_plan *p, int threads, int64_t grain, void *scratch) {
    (void)p, (void)threads, (void)grain, (void)scratch;
}

#endif
