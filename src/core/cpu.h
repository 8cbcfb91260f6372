/* cpu.h — the one home of compiler and CPU idioms: forced inlining, prefetches, per-CPU function
 * clones, CPU feature queries, the streaming-store threshold and the index dtype dispatch.
 * Private to libndx. */
#ifndef NDX_CPU_H
#define NDX_CPU_H

#include <stddef.h>

#include "ndx.h"

/* A small function in a hot loop, inlined so constant arguments (dtype, depth, width) fold. */
#define NDX_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Prefetch for reading into every cache level, into L2 only, and for writing. */
#if defined(__GNUC__)
#define NDX_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#define NDX_PREFETCH_L2(p) __builtin_prefetch((p), 0, 1)
#define NDX_PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
#else
#define NDX_PREFETCH(p) ((void)(p))
#define NDX_PREFETCH_L2(p) ((void)(p))
#define NDX_PREFETCH_W(p) ((void)(p))
#endif

/* Asks with PREFETCH (one of the above) for every cache line of the first `bytes` of a row, up
 * to 4 KiB: for rows a ring of later entries will use, which land anywhere, so the hardware
 * cannot guess them (the scatters, the sparse apply ops). Wide rows need all 4 KiB: scatter-add
 * of 2 KiB rows into 32 MiB (4 updates per row, one thread, AMD EPYC) took 16.0 ms prefetching
 * 512 bytes of each, 10.9 prefetching all; 512-byte rows were unchanged. The lines are counted
 * from the one p starts in: a row that does not start on a line (NumPy's arrays are 16-byte
 * aligned) spans one line more, and left unasked it cost S1 20 ms instead of 14. */
#define NDX_PREFETCH_SPAN(p, bytes, PREFETCH)                                                   \
    do {                                                                                        \
        uintptr_t at_ = (uintptr_t)(const void *)(p);                                           \
        uintptr_t end_ = at_ + ((bytes) > 4096 ? 4096 : (bytes));                               \
        for (at_ &= ~(uintptr_t)63; at_ < end_; at_ += 64) PREFETCH((const char *)at_);         \
    } while (0)

/* On a function holding a hot loop: it is compiled for AVX-512 and AVX2 as well as the baseline
 * x86-64, and the loader binds the best the CPU has (a GNU ifunc, so glibc only; resolved once,
 * no global state of ours). Index checks are compute-bound on one thread: the sparse scan of C0
 * took 7.6 ms as baseline code, 5.9 with AVX2 and 4.7 with AVX-512 (AMD EPYC). */
/* A function with clones must have a name unique in the library, static or not: clang gives each
 * clone's resolver an external symbol (two static scan_range functions collided at link time).
 * Not under ThreadSanitizer: the clones' resolvers run while the program is being loaded, before
 * the sanitizer's runtime is ready, and the instrumented resolver crashes. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NDX_NO_TARGET_CLONES 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define NDX_NO_TARGET_CLONES 1
#endif
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(NDX_NO_TARGET_CLONES) &&            \
    ((defined(__GNUC__) && !defined(__clang__)) || (defined(__clang__) && __clang_major__ >= 14))
#define NDX_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NDX_MULTIVERSION
#endif

/* What the CPU at hand offers (x86-64; 0 elsewhere). */
static inline int ndx_cpu_has_avx512f(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}
static inline int ndx_cpu_has_avx2(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}
static inline int ndx_cpu_is_intel(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_is("intel");
#else
    return 0;
#endif
}

/* Outputs at least this large are written with non-temporal (streaming) stores: they would
 * only evict the inputs from the cache. */
#define NDX_STREAM_MIN_BYTES ((size_t)8 << 20)

/* The bytes of the last-level cache (the system's L3 size, read once), 0 where it does not say
 * (call.c). */
size_t ndx_last_level_cache_bytes(void);

/* Runs STEP(T) with T the C type of index dtype `dt` (int16_t, int32_t or int64_t; anything
 * else is taken as int16_t, the caller having checked the dtype). */
#define NDX_INDEX_DISPATCH(dt, STEP)                                                         \
    do {                                                                                     \
        switch (dt) {                                                                        \
        case NDX_INT64: STEP(int64_t); break;                                                \
        case NDX_INT32: STEP(int32_t); break;                                                \
        default: STEP(int16_t); break;                                                       \
        }                                                                                    \
    } while (0)

#endif /* NDX_CPU_H */
