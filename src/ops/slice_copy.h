/* slice_copy.h — type-free kernels that move equal-sized slices: gathering slices named by byte
 * offsets into one contiguous block. They know sizes, never dtypes: a float32 and an int32 move
 * the same way.
 *
 * - Offsets are known a block ahead, so the source of a later slice is prefetched while the
 *   current one is copied: random reads overlap instead of waiting for each other.
 * - A large destination is written with non-temporal (streaming) stores where the CPU has them:
 *   a normal store first reads the destination line into the cache, which for an output larger
 *   than the cache costs a third of the memory traffic and evicts the source. */
#ifndef NDX_SLICE_COPY_H
#define NDX_SLICE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define NDX_HAVE_STREAMING 1
#else
#define NDX_HAVE_STREAMING 0
#endif

/* Destinations at least this large are written with streaming stores: far beyond what the
 * per-core caches keep, so the lines would be evicted before anyone read them back. */
#define NDX_STREAM_MIN_BYTES ((size_t)8 << 20)

#if defined(__GNUC__)
#define NDX_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#define NDX_PREFETCH_L2(p) __builtin_prefetch((p), 0, 1)
#else
#define NDX_PREFETCH(p) ((void)(p))
#define NDX_PREFETCH_L2(p) ((void)(p))
#endif

/* Cached store of `size` bytes from s (or zeros). */
static inline void ndx_store_cached(unsigned char *d, const unsigned char *s, size_t size) {
    if (s)
        memcpy(d, s, size);
    else
        memset(d, 0, size);
}

#if NDX_HAVE_STREAMING
/* Streaming store of one slice of `size` bytes (a multiple of 16) from s (NULL: zeros) to a
 * 16-byte aligned d. Only whole 16-byte stores: single 4- or 8-byte streaming stores leave
 * write-combining buffers partly filled while loads miss, and measured several times slower than
 * cached stores. Scattered slices are fine when each covers whole 64-byte lines; partial lines
 * written out of order cost twice a cached store. */
static inline void ndx_stream_slice(unsigned char *d, const unsigned char *s, size_t size) {
    if (s)
        for (size_t b = 0; b < size; b += 16)
            _mm_stream_si128((__m128i *)(void *)(d + b),
                             _mm_loadu_si128((const __m128i *)(const void *)(s + b)));
    else
        for (size_t b = 0; b < size; b += 16)
            _mm_stream_si128((__m128i *)(void *)(d + b), _mm_setzero_si128());
}
#endif

/* Slices of any size: every cache line of a slice some slices ahead is prefetched into L2 (into
 * L1 the lines would crowd out the ones being copied), then the slice is stored. About 4 KiB in
 * flight keeps the memory system busy without evicting lines before they are used. */
static inline void ndx_gather_slices_any(unsigned char *dst, const unsigned char *src,
                                         const int64_t *offsets, int64_t n, size_t size,
                                         void (*store)(unsigned char *, const unsigned char *,
                                                       size_t)) {
    int64_t ahead = size >= 4096 ? 1 : size <= 256 ? 16 : (int64_t)(4096 / size);
    size_t lines = size < 4096 ? size : 4096; /* past a page the hardware prefetcher follows */
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i + ahead;
        if (j < n && offsets[j] >= 0)
            for (size_t b = 0; b < lines; b += 64) NDX_PREFETCH_L2(src + offsets[j] + b);
        store(dst + (size_t)i * size, offsets[i] >= 0 ? src + offsets[i] : NULL, size);
    }
}

/* ndx_gather_slices_any with streaming stores, as wide as the CPU has (slice_stream.c): size a
 * multiple of 16 and dst 16-byte aligned. */
void ndx_gather_slices_streamed(unsigned char *dst, const unsigned char *src,
                                const int64_t *offsets, int64_t n, size_t size);

/* Gathers n slices of `size` bytes: dst[i] = src[offsets[i] ...] for offsets[i] >= 0, zeros for
 * offsets[i] < 0. dst is contiguous (n * size bytes); dst and src must not overlap. With
 * `streaming`, slices whose size is a multiple of 16 bypass the cache where the CPU and dst's
 * alignment allow it; call ndx_slices_done(1) before other threads read dst. */
static inline void ndx_gather_slices(void *dst_, const void *src_, const int64_t *offsets,
                                     int64_t n, size_t size, int streaming) {
    unsigned char *dst = dst_;
    const unsigned char *src = src_;
#if NDX_HAVE_STREAMING
    if (streaming && size % 16 == 0 && (uintptr_t)dst % 16 == 0) {
        ndx_gather_slices_streamed(dst, src, offsets, n, size);
        return;
    }
#else
    (void)streaming;
#endif
    ndx_gather_slices_any(dst, src, offsets, n, size, ndx_store_cached);
}

/* Orders streaming stores before whatever follows (another thread reading dst). */
static inline void ndx_slices_done(int streaming) {
#if NDX_HAVE_STREAMING
    if (streaming) _mm_sfence();
#else
    (void)streaming;
#endif
}

#endif /* NDX_SLICE_COPY_H */
