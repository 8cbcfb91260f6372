/* core.h — what every op stands on: errors, checked size arithmetic, index reading, threads
 * and allocation. Private to libndx; never installed. */
#ifndef NDX_CORE_H
#define NDX_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ndx.h"

/* ---- errors ---------------------------------------------------------------------------- */

/* Fills err (if not NULL) with code and a printf-formatted message; returns code. */
ndx_status ndx_fail(ndx_error *err, ndx_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Clears err to NDX_OK / "" (ops call it on entry so a stale message never survives). */
void ndx_error_clear(ndx_error *err);

/* Return early from a function when a call fails. */
#define NDX_TRY(expr)                                                                        \
    do {                                                                                     \
        ndx_status ndx_try_status_ = (expr);                                                 \
        if (ndx_try_status_ != NDX_OK) return ndx_try_status_;                               \
    } while (0)

/* Writes "[d0, d1, ...]" for `rank` values into buf (always NUL-terminated, "..." if cut). */
void ndx_format_dims(char *buf, size_t cap, int rank, const int64_t *dims);

/* Big enough for any shape ndx prints in a message (longer ones end in "..."). */
#define NDX_DIMS_TEXT 128

/* ---- code for the CPU at hand ------------------------------------------------------------- */

/* On a function holding a hot loop: it is compiled for AVX-512 and AVX2 as well as the baseline
 * x86-64, and the loader binds the best the CPU has (a GNU ifunc, so glibc only; resolved once,
 * no global state of ours). Index checks are compute-bound on one thread: the sparse scan of C0
 * took 7.6 ms as baseline code, 5.9 with AVX2 and 4.7 with AVX-512 (AMD EPYC). */
#if defined(__x86_64__) && defined(__GLIBC__) &&                                             \
    ((defined(__GNUC__) && !defined(__clang__)) || (defined(__clang__) && __clang_major__ >= 14))
#define NDX_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NDX_MULTIVERSION
#endif

/* ---- checked arithmetic ------------------------------------------------------------------ */

/* 1 and *r = a * b (or a + b) when the result fits in int64_t; 0 otherwise. */
static inline int ndx_mul_i64(int64_t a, int64_t b, int64_t *r) {
    return !__builtin_mul_overflow(a, b, r);
}
static inline int ndx_add_i64(int64_t a, int64_t b, int64_t *r) {
    return !__builtin_add_overflow(a, b, r);
}

/* Product of dims[0..n): 1 and *count on success; 0 when a dim is negative or it overflows. */
int ndx_dims_product(int n, const int64_t *dims, int64_t *count);

/* count * itemsize as size_t, also capped at PTRDIFF_MAX; 1 on success. */
int ndx_bytes_of(int64_t count, size_t itemsize, size_t *bytes);

/* ---- tensors ----------------------------------------------------------------------------- */

/* 1 when the dtype can hold indices (int16, int32, int64). */
static inline int ndx_is_index_dtype(ndx_dtype d) {
    return d == NDX_INT16 || d == NDX_INT32 || d == NDX_INT64;
}

/* Element i of an index tensor of dtype d, widened to int64_t. */
static inline int64_t ndx_read_index(const void *base, ndx_dtype d, int64_t i) {
    switch (d) {
    case NDX_INT64: return ((const int64_t *)base)[i];
    case NDX_INT32: return ((const int32_t *)base)[i];
    default: return ((const int16_t *)base)[i];
    }
}

/* Checks that `t` is a well-formed index tensor (ndx_tensor_check plus an index dtype). */
ndx_status ndx_check_index_tensor(const ndx_tensor *t, const char *op, const char *what,
                                  int64_t *count, ndx_error *err);

/* 1 when a and b have the same dtype and itemsize. */
int ndx_same_type(const ndx_tensor *a, const ndx_tensor *b);

/* Writes a type description such as "float32" or "string(8)" into buf. */
void ndx_format_type(char *buf, size_t cap, const ndx_tensor *t);

/* ---- threads ----------------------------------------------------------------------------- */

/* The number of threads an op may use: opt->num_threads, or the online cores when it is 0. */
int ndx_thread_count(const ndx_options *opt);

/* Runs fn(ctx, begin, end, worker) over contiguous chunks of [0, n), one per worker, using at most
 * `threads` workers and at least `grain` items per worker (so small work stays on the calling
 * thread). The split depends only on n, threads and grain, so results are reproducible.
 * Returns the number of workers used (0 when n == 0). */
typedef void (*ndx_range_fn)(void *ctx, int64_t begin, int64_t end, int worker);
int ndx_parallel_for(int threads, int64_t n, int64_t grain, ndx_range_fn fn, void *ctx);

/* How many workers ndx_parallel_for would use, and the chunk bounds of worker w of `workers`. */
int ndx_parallel_workers(int threads, int64_t n, int64_t grain);
static inline int64_t ndx_chunk_begin(int64_t n, int workers, int w) {
    return (int64_t)(((__int128)n * w) / workers);
}

/* ---- memory ------------------------------------------------------------------------------ */

/* Tracks what one call allocates against opt->max_memory. */
typedef struct ndx_budget {
    size_t limit; /* 0: none */
    size_t used;
    const char *op;
} ndx_budget;

void ndx_budget_init(ndx_budget *b, const ndx_options *opt, const char *op);

/* The machine's physical memory in bytes, or 0 when it cannot be told. A single block larger
 * than this is refused before it is tried (it could only fail, thrash, or abort a sanitizer). */
size_t ndx_physical_memory(void);

/* Allocates `bytes` (64-byte aligned, huge pages advised for large blocks) charged to the
 * budget; fails with NDX_E_MEMORY_BUDGET or NDX_E_NO_MEMORY and a message naming `what`.
 * bytes == 0 gives *p = NULL and NDX_OK. Free with ndx_release (or ndx_tensor_free). */
ndx_status ndx_acquire(ndx_budget *b, size_t bytes, int zeroed, const char *what, void **p,
                       ndx_error *err);
void ndx_release(void *p);

/* Makes `out` ready to receive an output described by `want` (dtype, itemsize, rank, shape):
 * if out->data is NULL it allocates (zeroed when asked) and sets *allocated = 1; otherwise it
 * checks that out matches `want` exactly. On success *out holds want's description and data. */
ndx_status ndx_prepare_output(const ndx_tensor *want, ndx_tensor *out, ndx_budget *b, int zeroed,
                              const char *what, int *allocated, ndx_error *err);

/* Sets n bytes at p to zero using up to `threads` threads (first touch spread over cores). */
void ndx_parallel_zero(void *p, size_t n, int threads);
/* Copies n bytes using up to `threads` threads. */
void ndx_parallel_copy(void *dst, const void *src, size_t n, int threads);

#endif /* NDX_CORE_H */
