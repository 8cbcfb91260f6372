/* core.h — what every op stands on: errors, checked size arithmetic, index reading, threads
 * and allocation. Private to libndx; never installed. */
#ifndef NDX_CORE_H
#define NDX_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cpu.h"
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



/* Writes the coordinates of element `flat` of a row-major `shape` of rank `rank` as "[a, b]"
 * (a rank-0 shape gives "[]"); zero dims count as one, so any flat value gives something. */
void ndx_format_position(char *buf, size_t cap, int rank, const int64_t *shape, int64_t flat);

/* ---- checked arithmetic ------------------------------------------------------------------ */

/* 1 and *r = a * b (or a + b) when the result fits in int64_t; 0 otherwise. */
static inline int ndx_mul_i64(int64_t a, int64_t b, int64_t *r) {
    return !__builtin_mul_overflow(a, b, r);
}
static inline int ndx_add_i64(int64_t a, int64_t b, int64_t *r) {
    return !__builtin_add_overflow(a, b, r);
}

/* Product of dims[0..n): 1 and *count on success; 0 when a dim is negative or it overflows.
 * Left to right, as TensorFlow's TensorShape adds dimensions: [2^40, 2^40, 0] overflows before
 * the 0 is reached and is refused, [0, 2^40, 2^40] has no elements. Inline, like the helpers
 * below: every op calls them several times, and on small inputs the calls cost more than the
 * arithmetic. */
static inline int ndx_dims_product(int n, const int64_t *dims, int64_t *count) {
    int64_t c = 1;
    for (int i = 0; i < n; i++)
        if (dims[i] < 0 || !ndx_mul_i64(c, dims[i], &c)) return 0;
    *count = c;
    return 1;
}

/* count * itemsize as size_t, also capped at PTRDIFF_MAX; 1 on success. */
static inline int ndx_bytes_of(int64_t count, size_t itemsize, size_t *bytes) {
    size_t b;
    if (count < 0 || __builtin_mul_overflow((size_t)count, itemsize, &b) || b > (size_t)PTRDIFF_MAX)
        return 0;
    *bytes = b;
    return 1;
}

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

/* ndx_dtype_size for the library's own checks, inline (a table lookup; 0 for an invalid dtype). */
extern const unsigned char ndx_dtype_sizes[NDX_DTYPE_COUNT];
static inline size_t ndx_dtype_size_inline(ndx_dtype d) {
    return (unsigned)d < (unsigned)NDX_DTYPE_COUNT ? ndx_dtype_sizes[d] : 0;
}

/* The usual case of ndx_check_layout in one pass: a valid dtype of the right itemsize (not a
 * string), a rank in range, non-negative dims with an addressable product. 0 when anything is
 * off (the full check then finds what, in its order, for the message). */
static inline int ndx_layout_is_plain(ndx_dtype dtype, size_t itemsize, int rank,
                                      const int64_t *shape, int64_t *count, size_t *nbytes) {
    if ((unsigned)dtype >= (unsigned)NDX_DTYPE_COUNT || dtype == NDX_STRING ||
        itemsize != ndx_dtype_size_inline(dtype) || (unsigned)rank > (unsigned)NDX_MAX_RANK)
        return 0;
    int64_t c = 1;
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0 || !ndx_mul_i64(c, shape[i], &c)) return 0;
    return ndx_bytes_of(c, itemsize, nbytes) && (*count = c, 1);
}

/* ndx_tensor_check's usual case, inline (ndx_check_view below calls it first, the full check
 * only when it says 0, to find what is wrong): a plain layout, and data wherever there are
 * bytes. */
static inline int ndx_tensor_is_plain(const ndx_tensor *t, int64_t *count, size_t *nbytes) {
    int64_t c;
    size_t b;
    if (!t || !ndx_layout_is_plain(t->dtype, t->itemsize, t->rank, t->shape, &c, &b) ||
        (b > 0 && t->data == NULL))
        return 0;
    if (count) *count = c;
    if (nbytes) *nbytes = b;
    return 1;
}

/* ndx_tensor_check and ndx_spec_check of an argument called "<op>: <what>", a name made only
 * when there is a message to write (formatting it costs more than a small op's checks). */
ndx_status ndx_tensor_check_as(const ndx_tensor *t, const char *op, const char *what,
                               int64_t *count, size_t *nbytes, ndx_error *err);
ndx_status ndx_spec_check_as(const ndx_spec *s, const char *op, const char *what, ndx_error *err);

/* ndx_tensor_check with its usual case inline: a plain view returns at once; any other goes to
 * the full check, which says what is wrong. Ops check their views with this. */
static inline ndx_status ndx_check_view(const ndx_tensor *t, const char *what, int64_t *count,
                                        size_t *nbytes, ndx_error *err) {
    if (ndx_tensor_is_plain(t, count, nbytes)) return NDX_OK;
    return ndx_tensor_check(t, what, count, nbytes, err);
}

/* Checks that `t` is a well-formed index tensor (ndx_tensor_check plus an index dtype); the
 * usual case inline, the rest (and every message) in ndx_check_index_tensor_full. */
ndx_status ndx_check_index_tensor_full(const ndx_tensor *t, const char *op, const char *what,
                                       int64_t *count, ndx_error *err);
static inline ndx_status ndx_check_index_tensor(const ndx_tensor *t, const char *op,
                                                const char *what, int64_t *count,
                                                ndx_error *err) {
    if (ndx_tensor_is_plain(t, count, NULL) && ndx_is_index_dtype(t->dtype)) return NDX_OK;
    return ndx_check_index_tensor_full(t, op, what, count, err);
}

/* 1 when a and b have the same dtype and itemsize. */
static inline int ndx_same_type(const ndx_tensor *a, const ndx_tensor *b) {
    return a->dtype == b->dtype && a->itemsize == b->itemsize;
}
/* 1 when a and b have the same dtype, itemsize and shape (inline: every out= is checked so). */
static inline int ndx_same_layout(const ndx_tensor *a, const ndx_tensor *b) {
    if (!ndx_same_type(a, b) || a->rank != b->rank) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* 1 when the byte ranges [a, a + na) and [b, b + nb) share a byte (an output must not share
 * memory with the inputs an op reads while writing it). */
static inline int ndx_overlaps(const void *a, size_t na, const void *b, size_t nb) {
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return na && nb && pa < pb + nb && pb < pa + na;
}

/* Writes a type description such as "float32" or "string(8)" into buf. */
void ndx_format_type(char *buf, size_t cap, const ndx_tensor *t);

/* ---- specs ------------------------------------------------------------------------------- */

/* 1 when the dim is known (not NDX_UNKNOWN). */
static inline int ndx_dim_known(int64_t d) { return d >= 0; }
/* 1 when dims[0..n) are all known. */
static inline int ndx_dims_known(int n, const int64_t *dims) {
    for (int i = 0; i < n; i++)
        if (!ndx_dim_known(dims[i])) return 0;
    return 1;
}
/* 1 when both dims are known and differ: the only case an infer function can refuse. */
static inline int ndx_dims_conflict(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }
/* 1 when no pair of a[i], b[i] (i < n) conflicts: dims that may still turn out the same. */
static inline int ndx_dims_agree(int n, const int64_t *a, const int64_t *b) {
    for (int i = 0; i < n; i++)
        if (ndx_dims_conflict(a[i], b[i])) return 0;
    return 1;
}
/* Product of dims[0..n) of a checked spec: 1 and *count when all are known, else 0. A known zero
 * makes the product 0 even beside unknown dims. */
static inline int ndx_known_product(int n, const int64_t *dims, int64_t *count) {
    int64_t c = 1;
    int known = 1;
    for (int i = 0; i < n; i++) {
        if (dims[i] == 0) {
            *count = 0;
            return 1;
        }
        if (dims[i] < 0) known = 0;
        else if (known && !ndx_mul_i64(c, dims[i], &c)) known = 0;
    }
    if (known) *count = c;
    return known;
}
/* 1 when two specs have one dtype and one width: a width of 0 (a string's, not known yet) cannot
 * differ. */
static inline int ndx_spec_types_agree(const ndx_spec *a, const ndx_spec *b) {
    return a->dtype == b->dtype && (!a->itemsize || !b->itemsize || a->itemsize == b->itemsize);
}
/* ndx_spec_is_complete, inline for the library's own calls (the exported function calls it). */
static inline int ndx_spec_is_complete_inline(const ndx_spec *spec) {
    return spec && spec->itemsize != 0 && spec->rank >= 0 &&
           ndx_dims_known(spec->rank, spec->shape);
}
#define ndx_spec_is_complete(s) ndx_spec_is_complete_inline(s)
/* The same check as ndx_tensor_check on a tensor's layout, shared with ndx_spec_check:
 * `allow_unknown` admits NDX_UNKNOWN rank, dims and string width. */
/* Fails with NDX_E_OVERFLOW ("OP: an output of shape [..] is too large to address") when every
 * dim is known and the output's element count or bytes overflow; an unknown dim passes. */
ndx_status ndx_check_output_size(const char *op, int rank, const int64_t *shape, size_t itemsize,
                                 ndx_error *err);
ndx_status ndx_check_layout(ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape,
                            int allow_unknown, const char *what, int64_t *count, size_t *nbytes,
                            ndx_error *err);
/* ndx_tensor_check without the data: the view's layout only (shape functions work on views whose
 * data does not exist yet). */
ndx_status ndx_tensor_check_layout(const ndx_tensor *t, const char *what, ndx_error *err);
/* The view a complete spec describes, with data NULL. Inline, like ndx_spec_of below: ops make
 * several of both per call, and a call returning the large struct through the stack cost more
 * than a small op's checks (store-forwarding stalls on the copy). */
static inline ndx_tensor ndx_view_of_spec(const ndx_spec *s) {
    ndx_tensor t;
    t.dtype = s->dtype;
    t.itemsize = s->itemsize;
    t.rank = s->rank;
    for (int i = 0; i < NDX_MAX_RANK; i++) t.shape[i] = i < s->rank ? s->shape[i] : 0;
    t.data = NULL;
    return t;
}

/* All zeros, for clearing by assignment (`*out = ndx_zero_spec;`): GCC turns a memset of these
 * structs into `rep stos`, whose start-up costs more than a small op's checks. */
extern const ndx_spec ndx_zero_spec;
extern const ndx_tensor ndx_zero_tensor;

/* *s = ndx_spec_of(t), written in place: returning the struct adds a copy of it. */
static inline void ndx_spec_fill(ndx_spec *s, const ndx_tensor *t) {
    s->dtype = t->dtype;
    s->itemsize = t->itemsize;
    s->rank = t->rank;
    for (int i = 0; i < NDX_MAX_RANK; i++) s->shape[i] = i < t->rank ? t->shape[i] : 0;
}

/* ndx_spec_of, inline for the library's own calls (the exported function calls this). */
static inline ndx_spec ndx_spec_of_inline(const ndx_tensor *t) {
    ndx_spec s;
    ndx_spec_fill(&s, t);
    return s;
}
#define ndx_spec_of(t) ndx_spec_of_inline(t)

/* ndx_spec_check plus an index dtype (int16, int32, int64), as ndx_check_index_tensor. */
ndx_status ndx_check_index_spec(const ndx_spec *s, const char *op, const char *what,
                                ndx_error *err);

/* ---- one call: options, threads, memory ------------------------------------------------- */

/* Most workers any op uses (per-worker results live in fixed arrays of this size). */
#define NDX_MAX_WORKERS 256

/* Bytes of scratch one call keeps in its context (on the stack) for small inputs. */
#define NDX_CALL_LOCAL 4096

/* Everything one public op call needs besides its tensors, made once on entry from the caller's
 * options: the op's name for messages, the workers it may use, the bad-index policy, the memory
 * budget with what the call has taken from it, and the allocator every block comes from. */
typedef struct ndx_call {
    const char *op;
    int threads; /* 1 .. NDX_MAX_WORKERS */
    ndx_bad_indices bad_indices;
    size_t limit; /* max_memory; 0: none */
    size_t used;  /* bytes this call has allocated */
    ndx_allocator allocator;
    int custom_allocator; /* 1: the caller's allocator; 0: ndx's own */
    ndx_error *err;
    size_t local_used; /* bytes of `local` handed out as scratch */
    /* Small scratch comes from here, on the caller's stack (ndx_call_scratch): a small call then
     * allocates nothing but its output. */
    _Alignas(64) unsigned char local[NDX_CALL_LOCAL];
} ndx_call;

/* Starts a call: clears err, refuses a NULL `out` ("<op>: out is NULL"; pass any non-NULL pointer
 * when the op has no output argument), validates the options (one spelling in messages:
 * opt->bad_indices, opt->allocator) and resolves threads, budget and allocator. */
ndx_status ndx_call_begin(ndx_call *c, const char *op, const ndx_options *opt, const void *out,
                          ndx_error *err);
/* ndx_call_begin for an op whose outputs are an array it checks itself (dynamic_partition). */
ndx_status ndx_call_begin_outs(ndx_call *c, const char *op, const ndx_options *opt,
                               ndx_error *err);
/* The part of ndx_call_begin that validates and resolves the options, for callers inside the
 * project that are not ops (the io layer): err is neither cleared nor given an out check. */
ndx_status ndx_call_init(ndx_call *c, const char *op, const ndx_options *opt, ndx_error *err);

/* Bytes the budget still allows (SIZE_MAX without a limit). Plans use it to choose, before
 * anything is allocated, whether an optional scratch-hungry path fits. */
size_t ndx_call_room(const ndx_call *c);

/* Blocks below this many bytes are asked of the allocator with malloc's own alignment (16)
 * instead of 64: an aligned allocation costs glibc several hundred instructions (it splits a
 * larger chunk and merges the rest back), more than a small op's whole work, and nothing that
 * small is copied with aligned or streaming stores. */
#define NDX_SMALL_BLOCK ((size_t)4096)

/* Allocates `bytes` (64-byte aligned, 16 below NDX_SMALL_BLOCK; zeroed when asked) from the call's allocator, charged to
 * its budget; fails with NDX_E_MEMORY_BUDGET or NDX_E_NO_MEMORY and a message naming `what`.
 * bytes == 0 gives *p = NULL and NDX_OK. */
ndx_status ndx_call_acquire(ndx_call *c, size_t bytes, int zeroed, const char *what, void **p);
/* Scratch that lives only until the call returns: as ndx_call_acquire (same budget, same
 * errors, 64-byte aligned), but a block that fits in what is left of c->local is taken from there
 * and never reaches the allocator. Never for memory that outlives the call (outputs). */
ndx_status ndx_call_scratch(ndx_call *c, size_t bytes, int zeroed, const char *what, void **p);
/* Gives a block from ndx_call_acquire or ndx_call_scratch back (NULL is fine; a block of
 * c->local is simply forgotten). The budget is not refunded. */
void ndx_call_release(ndx_call *c, void *p);
/* ndx_call_acquire at a given alignment (ndx_block_alloc promises 64 at every size). */
ndx_status ndx_call_acquire_aligned(ndx_call *c, size_t bytes, size_t alignment, int zeroed,
                                    const char *what, void **p);

/* Makes `out` ready for a result described by `want`: if out->data is NULL it is allocated
 * (zeroed when asked) and *allocated = 1; otherwise out must match want exactly (dtype, itemsize,
 * rank, shape). On success *out holds want's description and data. */
ndx_status ndx_call_output(ndx_call *c, const ndx_tensor *want, ndx_tensor *out, int zeroed,
                           const char *what, int *allocated);
/* Undoes ndx_call_output's allocation when a later step of the call fails. */
void ndx_call_drop_output(ndx_call *c, ndx_tensor *out, int allocated);

/* ---- threads ----------------------------------------------------------------------------- */

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

/* Runs fn over chunks 0 .. chunks - 1 of [0, n) (chunk w is [ndx_chunk_begin(n, chunks, w),
 * ndx_chunk_begin(n, chunks, w + 1)), passed w as its worker), each exactly once, on the calling
 * thread and up to chunks - 1 of ndx's helper threads (pool.c); returns when all are done. */
void ndx_pool_run(int chunks, int64_t n, ndx_range_fn fn, void *ctx);

/* ---- memory ------------------------------------------------------------------------------ */

/* The machine's physical memory in bytes, or 0 when it cannot be told. A single block larger
 * than this is refused before it is tried (it could only fail, thrash, or abort a sanitizer). */
size_t ndx_physical_memory(void);

/* Blocks the default allocator aligns to huge pages, advises to use them, and keeps for reuse:
 * from 2 MiB, so that results of a million 4-byte elements (3.8 MiB, an eager op's under a
 * GradientTape, which keeps two alive) come back warm instead of faulting every page in again
 * each time malloc returns the freed pair to the system. */
#define NDX_HUGE_BLOCK ((size_t)2 << 20)
#define NDX_HUGE_ALIGN ((size_t)2 << 20)
/* The cache of large blocks given back (block_cache.c): take returns a kept block of at least
 * `bytes` (and not much more), or NULL; release gives back a block of the default allocator
 * (NULL is fine), which keeps it when it is large or frees it. */
void *ndx_block_cache_take(size_t bytes);
void ndx_block_release(void *block);

/* NDX_OK when a caller's output view `out` is exactly `want` (dtype, itemsize, rank, shape);
 * otherwise fails with a message showing both. */
ndx_status ndx_output_matches(const char *op, const ndx_tensor *want, const ndx_tensor *out,
                              const char *what, ndx_error *err);

/* Sets n bytes at p to zero using up to `threads` threads (first touch spread over cores). */
void ndx_parallel_zero(void *p, size_t n, int threads);
/* Copies n bytes using up to `threads` threads. */
void ndx_parallel_copy(void *dst, const void *src, size_t n, int threads);
/* Copies n bytes with ordinary stores, so what was written last is still in the cache: for a
 * destination the caller goes on to update at random (a scatter's output). memcpy streams a
 * large copy past the cache, and every update then fetches its row from memory again. */
void ndx_copy_warm(void *dst, const void *src, size_t n);
void ndx_parallel_copy_warm(void *dst, const void *src, size_t n, int threads);

#endif /* NDX_CORE_H */
