/* ndx_test.h — what the tests share: a seeded generator, owned test tensors, random fills per
 * dtype, comparisons, the loop over thread counts, and a guard that proves a failed call wrote
 * nothing. Include after
 * <cmocka.h>'s prerequisites (this header includes them). */
#ifndef NDX_TEST_H
#define NDX_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ndx.h"

/* A literal int64 list, for shapes and for index values:
 * ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(3, 4), data), test_tensor_from(..., VALS(0, -1, 2)). */
#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define VALS(...) ((const int64_t[]){__VA_ARGS__})

/* ---- random numbers (splitmix64: tiny, seeded, the same everywhere) ---- */
typedef struct { uint64_t state; } test_rng;
static inline uint64_t rng_next(test_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* Uniform in [0, n) (n > 0). */
static inline int64_t rng_below(test_rng *r, int64_t n) { return (int64_t)(rng_next(r) % (uint64_t)n); }
/* Uniform in [lo, hi]. */
static inline int64_t rng_range(test_rng *r, int64_t lo, int64_t hi) { return lo + rng_below(r, hi - lo + 1); }

/* A string width in [1, 5] for NDX_STRING, else 0 (the dtype's own size). */
static inline size_t test_random_width(test_rng *r, ndx_dtype dt) {
    return dt == NDX_STRING ? (size_t)rng_range(r, 1, 5) : 0;
}

/* Options with `threads` workers and the bad-index `policy`; nothing else set. */
static inline ndx_options test_options(int threads, ndx_bad_indices policy) {
    ndx_options o = {.num_threads = threads, .bad_indices = policy};
    return o;
}

/* A random set of reduction axes of a rank-`rank` tensor: each dim is taken with probability 1/2
 * and, when taken, written negative (d - rank) half the time; the axes are then shuffled. Marks
 * reduced[d] = 1 for every dim taken (the caller zeroes reduced) and returns the count. */
int test_random_axes(test_rng *r, int rank, int64_t *axes, int *reduced);

/* Where element i (row-major) of a tensor of `shape` (rank dims) lands in the output of a
 * reduction over the dims marked in `reduced`: its row-major position there. */
int64_t test_reduced_position(int64_t i, int rank, const int64_t *shape, const int *reduced);

/* Every numeric, bool and string dtype, for loops over dtypes. */
extern const ndx_dtype test_all_dtypes[];
extern const int test_all_dtypes_count;
/* float16, bfloat16, float32, float64 / complex64, complex128. */
static inline int test_is_float(ndx_dtype dt) { return ndx_dtype_kind_of(dt) == NDX_KIND_FLOAT; }
static inline int test_is_complex(ndx_dtype dt) {
    return dt == NDX_COMPLEX64 || dt == NDX_COMPLEX128;
}

/* ---- owned tensors ---- */
/* A tensor whose data the test owns (malloc'd, at least 1 byte so data is never NULL). */
ndx_tensor test_tensor(ndx_dtype dtype, size_t string_width, int rank, const int64_t *shape);
/* Same from a literal shape list: test_tensor_v(NDX_FLOAT32, 0, 2, (int64_t[]){3, 4}). */
#define test_tensor_v(dtype, width, rank, ...) test_tensor(dtype, width, rank, (const int64_t[]){__VA_ARGS__})
/* A tensor holding a copy of `values` (count elements of the dtype's size / width). */
ndx_tensor test_tensor_from(ndx_dtype dtype, size_t string_width, int rank, const int64_t *shape,
                            const void *values);
void test_tensor_free(ndx_tensor *t);
/* Frees the three parts of a sparse tensor built from test tensors. */
void test_sparse_free(ndx_sparse_tensor *sp);
/* Bytes in t (count * itemsize). */
size_t test_nbytes(const ndx_tensor *t);
int64_t test_count(const ndx_tensor *t);

/* Fills t with random values that are exact in every dtype: small integers for arithmetic dtypes
 * (so sums are exact in float16), random bytes-as-text for strings ("" sometimes), 0/1 bools. */
void test_fill_random(test_rng *r, ndx_tensor *t);
/* Fills an index tensor with values in [lo, hi]. */
void test_fill_indices(test_rng *r, ndx_tensor *t, int64_t lo, int64_t hi);
/* Element i of a floating-point tensor (float16, bfloat16, float32, float64) as a double /
 * written from one (rounded to the dtype). */
double test_get_float(const ndx_tensor *t, int64_t i);
void test_put_float(ndx_tensor *t, int64_t i, double v);
/* A float32 or float64 tensor of the given shape holding values of every class: normal, zero of
 * either sign, subnormal, infinite, NaN. */
ndx_tensor test_special_floats(test_rng *r, ndx_dtype dt, int rank, const int64_t *shape);
/* Random bags over n ids for embedding_bag: segment ids (sorted, with gaps) or offsets (with
 * empty bags), of index dtype dt. */
ndx_tensor test_random_bags(test_rng *r, ndx_bag_form form, int64_t n, ndx_dtype dt);
/* A random embedding_bag call of up to max_ids ids: params [1..8, 1..5] of float dtype dt with
 * values exact in float16, ids into it, bags of either index dtype, and weights (some 0). */
typedef struct test_bag_inputs {
    ndx_tensor params, ids, bags, weights;
} test_bag_inputs;
test_bag_inputs test_random_bag_inputs(test_rng *r, ndx_dtype dt, ndx_bag_form form,
                                       int64_t max_ids);
/* Writes value v into element i of an index tensor / reads it. */
void test_set_index(ndx_tensor *t, int64_t i, int64_t v);
int64_t test_get_index(const ndx_tensor *t, int64_t i);

/* Fails the test (with a message naming the first differing element) unless a and b have the
 * same dtype, itemsize, rank, shape and bytes. */
void test_assert_tensor_eq(const ndx_tensor *a, const ndx_tensor *b, const char *file, int line);
#define assert_tensor_eq(a, b) test_assert_tensor_eq((a), (b), __FILE__, __LINE__)

/* The same for sparse tensors: their indices, values and dense_shape, each as assert_tensor_eq. */
void test_assert_sparse_eq(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                           const char *file, int line);
#define assert_sparse_eq(a, b) test_assert_sparse_eq((a), (b), __FILE__, __LINE__)

/* ---- the same bits at 1, 2 and 3 threads ---- */
/* Parallel ops are run at every count from 1 to TEST_THREADS (3 splits most sizes unevenly):
 *     for (int threads = 1; threads <= TEST_THREADS; threads++)
 * and each count must give the bits the first gave. In such a loop, with `out` computed at
 * `threads`: at 1 thread out is kept as *first and the call returns 1 (the caller frees *first
 * after the loop); at any other count out must equal *first (assert_tensor_eq) and the call
 * returns 0 (the caller frees out):
 *     if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out); */
enum { TEST_THREADS = 3 };
int test_keep_first_or_assert_same(ndx_tensor *first, const ndx_tensor *out, int threads,
                                   const char *file, int line);
#define keep_first_or_assert_same(first, out, threads) \
    test_keep_first_or_assert_same((first), (out), (threads), __FILE__, __LINE__)
/* The same for sparse tensors (assert_sparse_eq). */
int test_keep_first_or_assert_same_sparse(ndx_sparse_tensor *first, const ndx_sparse_tensor *out,
                                          int threads, const char *file, int line);
#define keep_first_or_assert_same_sparse(first, out, threads) \
    test_keep_first_or_assert_same_sparse((first), (out), (threads), __FILE__, __LINE__)

/* ---- smaller sweeps under slow instrumentation ---- */
/* 1 when the environment sets NDX_TEST_REDUCED (to anything but "" or "0"). scripts/test.sh sets
 * it for the sanitizer and valgrind runs of the C tests: the few cases whose randomized sweeps are
 * sized for the release build (hundreds of thousands of entries, every dtype times every mode)
 * then run a subset that still takes every path - each dtype, each mode and each kernel at least
 * once. The release run (and a plain ctest) runs every sweep whole. docs/testing.md lists them. */
int test_reduced(void);

/* Strings tensor from C strings: test_strings(width, rank, shape, (const char*[]){"a","b"}) */
ndx_tensor test_strings(size_t width, int rank, const int64_t *shape, const char *const *values);

/* ---- nothing written ---- */
/* Fills t's bytes with a pattern and remembers a copy; test_untouched() asserts it is unchanged. */
typedef struct { void *copy; size_t bytes; } test_guard;
test_guard test_guard_fill(ndx_tensor *t, unsigned char pattern);
/* Remembers t's current bytes (for in-place tensors whose content matters). */
test_guard test_guard_take(const ndx_tensor *t);
void test_guard_check(test_guard *g, const ndx_tensor *t, const char *file, int line);
#define assert_untouched(g, t) test_guard_check((g), (t), __FILE__, __LINE__)

/* Asserts that `status` is `want` and that err carries the same code and a message containing
 * `needle` (NULL: any non-empty message). */
void test_assert_fails(ndx_status status, const ndx_error *err, ndx_status want,
                       const char *needle, const char *file, int line);
#define assert_fails(status, err, want, needle) \
    test_assert_fails((status), (err), (want), (needle), __FILE__, __LINE__)
#define assert_ok(status, err) \
    do { ndx_status s_ = (status); if (s_ != NDX_OK) fail_msg("expected ok, got %s: %s", ndx_status_name(s_), (err)->message); } while (0)

#endif
