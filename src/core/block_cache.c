/* block_cache.c — large blocks kept for reuse. A fresh output of tens of MiB costs the kernel a
 * fault and a zeroed page for every page first written (G1's 128 MiB output: 19.7 ms fresh
 * against 10.5 ms into a reused buffer), and a huge page may first need memory compacted. So
 * the default allocator keeps a few large blocks given back to it (by ndx_tensor_free, or as an
 * op's scratch) and hands them out again to calls that want about that size: repeated calls
 * that let ndx allocate their outputs then cost what calls into reused buffers cost.
 *
 * Bounded: at most CACHE_SLOTS blocks and min(1 GiB, physical memory / 8) bytes; the oldest go
 * first. ndx_release_memory() gives everything back. Only blocks of the default allocator enter
 * (posix_memalign'd, 2 MiB aligned, so any alignment ndx asks for is met). */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#include "core.h"

#define CACHE_SLOTS 16
#define CACHE_MAX_BYTES ((size_t)1 << 30)

typedef struct cached_block {
    void *block;
    size_t bytes; /* usable size */
    uint64_t age; /* when it was given back: the smallest is the oldest */
} cached_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cached_block slots[CACHE_SLOTS];
static size_t cached_bytes;
static uint64_t clock_ticks;

static size_t cache_cap(void) {
    size_t physical = ndx_physical_memory();
    return physical && physical / 8 < CACHE_MAX_BYTES ? physical / 8 : CACHE_MAX_BYTES;
}

void *ndx_block_cache_take(size_t bytes) {
    /* A block up to a quarter (and one huge page) larger is close enough: never much waste. */
    size_t most = bytes + bytes / 4 + NDX_HUGE_ALIGN;
    void *found = NULL;
    pthread_mutex_lock(&lock);
    int best = -1;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (slots[i].block && slots[i].bytes >= bytes && slots[i].bytes <= most &&
            (best < 0 || slots[i].bytes < slots[best].bytes))
            best = i;
    if (best >= 0) {
        found = slots[best].block;
        cached_bytes -= slots[best].bytes;
        slots[best] = (cached_block){0};
    }
    pthread_mutex_unlock(&lock);
    return found;
}

/* Keeps `block` (1), or declines it (0): only what the default allocator made large and 2 MiB
 * aligned (so any alignment asked later is met), and what fits under the cap. */
static int keep(void *block) {
    if ((uintptr_t)block % NDX_HUGE_ALIGN != 0) return 0;
    size_t bytes = malloc_usable_size(block), cap = cache_cap();
    if (bytes < NDX_HUGE_BLOCK || bytes > cap) return 0;
    void *evicted[CACHE_SLOTS];
    int n_evicted = 0;
    pthread_mutex_lock(&lock);
    for (;;) { /* make room: the oldest blocks go */
        int used = 0, oldest = -1;
        for (int i = 0; i < CACHE_SLOTS; i++) {
            if (!slots[i].block) continue;
            used++;
            if (oldest < 0 || slots[i].age < slots[oldest].age) oldest = i;
        }
        if (used < CACHE_SLOTS && cached_bytes + bytes <= cap) break;
        evicted[n_evicted++] = slots[oldest].block;
        cached_bytes -= slots[oldest].bytes;
        slots[oldest] = (cached_block){0};
    }
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (slots[i].block) continue;
        slots[i] = (cached_block){block, bytes, ++clock_ticks};
        cached_bytes += bytes;
        break;
    }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n_evicted; i++) free(evicted[i]); /* outside the lock */
    return 1;
}

void ndx_block_release(void *block) {
    if (block && !keep(block)) free(block);
}

size_t ndx_release_memory(void) {
    void *blocks[CACHE_SLOTS];
    int n = 0;
    pthread_mutex_lock(&lock);
    size_t released = cached_bytes;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (slots[i].block) blocks[n++] = slots[i].block;
    for (int i = 0; i < CACHE_SLOTS; i++) slots[i] = (cached_block){0};
    cached_bytes = 0;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++) free(blocks[i]);
    return released;
}
