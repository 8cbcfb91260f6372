/* slice_copy.h — type-free kernels that move equal-sized slices, and the gather of slices named
 * by byte offsets into one contiguous block (slice_gather.c). They know sizes, never dtypes: a
 * float32 and an int32 move the same way.
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

#include "cpu.h"

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define NDX_HAVE_STREAMING 1
#else
#define NDX_HAVE_STREAMING 0
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

/* Gathers n slices of `size` bytes: dst[i] = src[offsets[i] ...] for offsets[i] >= 0, zeros for
 * offsets[i] < 0. dst is contiguous (n * size bytes); dst and src must not overlap. */
typedef void (*ndx_slice_gather_fn)(unsigned char *dst, const unsigned char *src,
                                    const int64_t *offsets, int64_t n, size_t size);

/* The gather for slices of `size` bytes written at dst and at any dst + k * size after it
 * (slice_gather.c), chosen once per call: with `streaming`, streaming stores as wide as the CPU
 * and dst's alignment allow (size a multiple of 16 and dst 16-byte aligned at least), else
 * cached stores. After streaming, call ndx_slices_done(1) before other threads read dst. */
ndx_slice_gather_fn ndx_slice_gather_for(const void *dst, size_t size, int streaming);

/* Writes n int64 from blk to dst: with 16-byte non-temporal stores when `stream` (8-byte ones
 * only for an unaligned first or a last word: those alone are slow), else cached. */
NDX_ALWAYS_INLINE void ndx_put_int64s(int64_t *dst, const int64_t *blk, int64_t n, int stream) {
#if NDX_HAVE_STREAMING
    if (stream) {
        int64_t k = 0;
        if ((uintptr_t)dst & 15) {
            _mm_stream_si64((long long *)(void *)dst, (long long)blk[0]);
            k = 1;
        }
        for (; k + 2 <= n; k += 2)
            _mm_stream_si128((__m128i *)(void *)(dst + k),
                             _mm_loadu_si128((const __m128i *)(const void *)(blk + k)));
        if (k < n) _mm_stream_si64((long long *)(void *)(dst + k), (long long)blk[k]);
        return;
    }
#endif
    (void)stream;
    memcpy(dst, blk, (size_t)n * sizeof *dst);
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
