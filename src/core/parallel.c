/* parallel.c — the one parallel-for every op uses. ndx decides the split itself (contiguous
 * chunks, numbered) so results never depend on scheduling; the chunks run on the calling thread
 * and ndx's own helper threads (pool.c). */
#include "core.h"

int ndx_parallel_workers(int threads, int64_t n, int64_t grain) {
    if (n <= 0) return 0;
    if (grain < 1) grain = 1;
    int64_t by_grain = n / grain;
    if (by_grain < 1) by_grain = 1;
    int64_t w = threads < 1 ? 1 : threads;
    return (int)(w < by_grain ? w : by_grain);
}

int ndx_parallel_for(int threads, int64_t n, int64_t grain, ndx_range_fn fn, void *ctx) {
    int workers = ndx_parallel_workers(threads, n, grain);
    if (workers == 0) return 0;
    if (workers == 1) {
        fn(ctx, 0, n, 0);
        return 1;
    }
    ndx_pool_run(workers, n, fn, ctx);
    return workers;
}

typedef struct {
    unsigned char *dst;
    const unsigned char *src;
} byte_job;

static void zero_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    byte_job *job = ctx;
    memset(job->dst + begin, 0, (size_t)(end - begin));
}

static void copy_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    byte_job *job = ctx;
    memcpy(job->dst + begin, job->src + begin, (size_t)(end - begin));
}

/* Up to this size memcpy keeps its ordinary stores (glibc streams only copies of a sizeable
 * share of the last-level cache) and is the faster loop. */
#define NDX_WARM_MEMCPY_MAX ((size_t)256 << 10)

void ndx_copy_warm(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n <= NDX_WARM_MEMCPY_MAX) {
        memcpy(d, s, n);
        return;
    }
    size_t i = 0;
    for (; i + 64 <= n; i += 64) memcpy(d + i, s + i, 64); /* inlined: ordinary vector stores */
    memcpy(d + i, s + i, n - i);
}

static void copy_warm_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    byte_job *job = ctx;
    ndx_copy_warm(job->dst + begin, job->src + begin, (size_t)(end - begin));
}

/* Below this many bytes a second thread costs more than it saves. */
#define NDX_BYTES_GRAIN ((int64_t)1 << 20)

void ndx_parallel_zero(void *p, size_t n, int threads) {
    byte_job job = {p, NULL};
    ndx_parallel_for(threads, (int64_t)n, NDX_BYTES_GRAIN, zero_range, &job);
}

void ndx_parallel_copy(void *dst, const void *src, size_t n, int threads) {
    if (dst == src) return;
    byte_job job = {dst, src};
    ndx_parallel_for(threads, (int64_t)n, NDX_BYTES_GRAIN, copy_range, &job);
}

void ndx_parallel_copy_warm(void *dst, const void *src, size_t n, int threads) {
    if (dst == src) return;
    byte_job job = {dst, src};
    ndx_parallel_for(threads, (int64_t)n, NDX_BYTES_GRAIN, copy_warm_range, &job);
}
