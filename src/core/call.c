/* call.c — one call context per public op call: options validated once, threads resolved once,
 * and every block the call allocates drawn from one allocator and charged to one budget. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

/* Blocks of NDX_HUGE_BLOCK or more are aligned to 2 MiB and advised to use transparent huge
 * pages (a fresh 4 KiB page costs ~1.6 us to fault in, a huge page a fraction of that per byte),
 * and are kept for reuse when given back (block_cache.c). */
static void *default_allocate(void *user, size_t bytes, size_t alignment) {
    (void)user;
    if (bytes >= NDX_HUGE_BLOCK) {
        void *kept = ndx_block_cache_take(bytes);
        if (kept) return kept;
        if (alignment < NDX_HUGE_ALIGN) alignment = NDX_HUGE_ALIGN;
    }
    if (alignment <= 16) return malloc(bytes); /* glibc's malloc aligns to 16 */
    void *mem = NULL;
    if (posix_memalign(&mem, alignment, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    if (mem && bytes >= NDX_HUGE_BLOCK) madvise(mem, bytes & ~(NDX_HUGE_ALIGN - 1), MADV_HUGEPAGE);
#endif
    return mem;
}

static void default_release(void *user, void *block) {
    (void)user;
    ndx_block_release(block);
}

/* The cores this process may run on (its affinity mask, as OpenMP counts them). Asking the
 * kernel costs about 0.6 us, more than a small op's work, so the answer is kept. A race only
 * asks twice. */
static int online_cores(void) {
    static _Atomic int cores;
    int n = cores;
    if (n <= 0) {
        cpu_set_t set;
        n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
        if (n <= 0) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
        cores = n = n > 0 ? n : 1;
    }
    return n;
}

size_t ndx_last_level_cache_bytes(void) {
    static _Atomic long bytes = -1; /* a race only asks twice */
    long b = bytes;
    if (b < 0) {
#ifdef _SC_LEVEL3_CACHE_SIZE
        b = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
        bytes = b = b > 0 ? b : 0;
    }
    return (size_t)b;
}

ndx_status ndx_call_begin(ndx_call *c, const char *op, const ndx_options *opt, const void *out,
                          ndx_error *err) {
    if (!out) {
        ndx_error_clear(err);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", op);
    }
    return ndx_call_begin_outs(c, op, opt, err);
}

ndx_status ndx_call_begin_outs(ndx_call *c, const char *op, const ndx_options *opt,
                               ndx_error *err) {
    ndx_error_clear(err);
    return ndx_call_init(c, op, opt, err);
}

ndx_status ndx_call_init(ndx_call *c, const char *op, const ndx_options *opt, ndx_error *err) {
    c->op = op;
    c->err = err;
    c->used = 0;
    c->local_used = 0;
    static const ndx_options defaults; /* all zeros: not rebuilt on the stack per call */
    if (!opt) opt = &defaults;
    if (opt->bad_indices != NDX_BAD_INDICES_ERROR && opt->bad_indices != NDX_BAD_INDICES_IGNORE)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: opt->bad_indices = %d is neither NDX_BAD_INDICES_ERROR nor "
                        "NDX_BAD_INDICES_IGNORE",
                        op, (int)opt->bad_indices);
    if (opt->allocator && (!opt->allocator->allocate || !opt->allocator->release))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: opt->allocator needs both an allocate and a release function", op);
    c->bad_indices = opt->bad_indices;
    c->limit = opt->max_memory;
    int n = opt->num_threads > 0 ? opt->num_threads : online_cores();
    c->threads = n < 1 ? 1 : n > NDX_MAX_WORKERS ? NDX_MAX_WORKERS : n;
    c->custom_allocator = opt->allocator != NULL;
    if (opt->allocator) {
        c->allocator = *opt->allocator;
    } else {
        c->allocator.allocate = default_allocate;
        c->allocator.release = default_release;
        c->allocator.user = NULL;
    }
    return NDX_OK;
}

size_t ndx_call_room(const ndx_call *c) {
    if (!c->limit) return SIZE_MAX;
    return c->used >= c->limit ? 0 : c->limit - c->used;
}

ndx_status ndx_call_acquire(ndx_call *c, size_t bytes, int zeroed, const char *what, void **p) {
    return ndx_call_acquire_aligned(c, bytes, bytes < NDX_SMALL_BLOCK ? 16 : 64, zeroed, what, p);
}

ndx_status ndx_call_acquire_aligned(ndx_call *c, size_t bytes, size_t alignment, int zeroed,
                                    const char *what, void **p) {
    *p = NULL;
    if (bytes == 0) return NDX_OK;
    size_t total;
    if (__builtin_add_overflow(c->used, bytes, &total) || (c->limit && total > c->limit))
        return ndx_fail(c->err, NDX_E_MEMORY_BUDGET,
                        "%s: %s needs %zu bytes, over the memory budget of %zu bytes "
                        "(%zu already in use by this call)",
                        c->op, what, bytes, c->limit, c->used);
    /* No machine has less than a small block: those skip the question (and its call). */
    size_t physical = bytes < NDX_SMALL_BLOCK ? 0 : ndx_physical_memory();
    if (physical && bytes > physical)
        return ndx_fail(c->err, NDX_E_NO_MEMORY,
                        "%s: %s needs %zu bytes, more than this machine has (%zu bytes)", c->op,
                        what, bytes, physical);
    /* ndx's own allocator called directly, where the compiler can inline it. */
    void *mem = c->custom_allocator ? c->allocator.allocate(c->allocator.user, bytes, alignment)
                                    : default_allocate(NULL, bytes, alignment);
    if (!mem)
        return ndx_fail(c->err, NDX_E_NO_MEMORY, "%s: cannot allocate %zu bytes for %s", c->op,
                        bytes, what);
    if (zeroed) memset(mem, 0, bytes);
    c->used = total;
    *p = mem;
    return NDX_OK;
}

static int is_local(const ndx_call *c, const void *p) {
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)c->local;
    return a >= lo && a < lo + sizeof c->local;
}

ndx_status ndx_call_scratch(ndx_call *c, size_t bytes, int zeroed, const char *what, void **p) {
    size_t at = (c->local_used + 63) & ~(size_t)63;
    if (bytes == 0 || bytes > sizeof c->local || at > sizeof c->local - bytes)
        return ndx_call_acquire_aligned(c, bytes, 64, zeroed, what, p);
    *p = NULL;
    size_t total; /* the budget counts it as it would an allocated block */
    if (__builtin_add_overflow(c->used, bytes, &total) || (c->limit && total > c->limit))
        return ndx_call_acquire_aligned(c, bytes, 64, zeroed, what, p); /* which fails alike */
    c->used = total;
    c->local_used = at + bytes;
    if (zeroed) memset(c->local + at, 0, bytes);
    *p = c->local + at;
    return NDX_OK;
}

void ndx_call_release(ndx_call *c, void *p) {
    if (p && !is_local(c, p)) c->allocator.release(c->allocator.user, p);
}

ndx_status ndx_call_output(ndx_call *c, const ndx_tensor *want, ndx_tensor *out, int zeroed,
                           const char *what, int *allocated) {
    *allocated = 0;
    if (!out) return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", c->op, what);
    int64_t count;
    size_t bytes;
    if (!ndx_dims_product(want->rank, want->shape, &count) ||
        !ndx_bytes_of(count, want->itemsize, &bytes)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, want->rank, want->shape);
        return ndx_fail(c->err, NDX_E_OVERFLOW, "%s: %s of shape %s is too large to address",
                        c->op, what, dims);
    }
    if (out->data == NULL) {
        void *mem;
        NDX_TRY(ndx_call_acquire(c, bytes, zeroed, what, &mem));
        *out = *want;
        out->data = mem;
        *allocated = mem != NULL;
        return NDX_OK;
    }
    NDX_TRY(ndx_output_matches(c->op, want, out, what, c->err));
    if (zeroed) memset(out->data, 0, bytes);
    return NDX_OK;
}

void ndx_call_drop_output(ndx_call *c, ndx_tensor *out, int allocated) {
    if (!allocated || !out) return;
    ndx_call_release(c, out->data);
    out->data = NULL;
}
