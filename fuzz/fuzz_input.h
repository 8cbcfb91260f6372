/* fuzz_input.h — what every harness shares: turning fuzz bytes into dtypes, small shapes, index
 * values (mostly in range, sometimes hostile), filled tensors and options; and the checks that
 * follow a call: a rejected call wrote nothing and said why, an accepted one matches the naive
 * reference in reference.c. Any violated check prints what went wrong and aborts, which both
 * libFuzzer and the corpus replay report as a failure. */
#ifndef NDX_FUZZ_INPUT_H
#define NDX_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "ndx.h"

/* ---- reading fuzz bytes ---------------------------------------------------------------------- */

/* Structural choices come straight from the bytes (so mutations steer them); bulk values come from
 * a generator seeded from the bytes (so a short input still fills large tensors). When the bytes
 * run out every read returns values from the generator, so any input is a complete case. */
typedef struct fz {
    const uint8_t *p;
    size_t left;
    uint64_t rng;
    int hostile; /* this case may carry huge dimensions or indices: options always cap memory */
    int big;     /* this case may be large enough to cross the ops' threading grains */
} fz;

void fz_init(fz *f, const uint8_t *data, size_t size);
uint8_t fz_byte(fz *f);
uint64_t fz_u64(fz *f);
/* Uniform in [lo, hi] (hi - lo < 2^32). */
int64_t fz_range(fz *f, int64_t lo, int64_t hi);
/* 1 with probability about num/den. */
int fz_chance(fz *f, int num, int den);
/* From the generator only (does not consume input bytes). */
uint64_t fz_rand(fz *f);

/* ---- what to build --------------------------------------------------------------------------- */

/* Any valid dtype (strings get a width of 1 to 4 through fz_itemsize). */
ndx_dtype fz_dtype(fz *f);
size_t fz_itemsize(fz *f, ndx_dtype dtype);
/* int16, int32 or int64; rarely (in hostile cases) a dtype that cannot hold indices. */
ndx_dtype fz_index_dtype(fz *f);

/* Writes a shape of rank in [min_rank, max_rank] with dims in [0, max_dim] (zero now and then)
 * whose element count stays at most `max_count`; returns the rank. */
int fz_shape(fz *f, int min_rank, int max_rank, int64_t max_dim, int64_t max_count, int64_t *shape);
/* An element count cap for this case: small, or large in `big` cases. */
int64_t fz_count_cap(fz *f);

/* A coordinate for a dimension of size `dim`: mostly in [0, dim), sometimes -1, dim, INT64_MIN,
 * INT64_MAX, INT32_MIN, a large power of two... (only in hostile cases). */
int64_t fz_coordinate(fz *f, int64_t dim);
/* A dimension given by the caller as a value (scatter_nd's shape, a sparse dense_shape): small,
 * or in hostile cases negative or huge. */
int64_t fz_dim_value(fz *f, int64_t max_dim);

/* Options: 1 to 3 threads, either bad-index policy, and a memory budget that is always set in
 * hostile cases (so a huge size is refused by the budget instead of exhausting the machine). */
ndx_options fz_options(fz *f);

/* ---- tensors the harness owns ----------------------------------------------------------------- */

/* A tensor whose data is allocated at exactly its byte size, so AddressSanitizer catches a read or
 * write one byte past it. Zero-byte tensors get a zero-byte block, or NULL now and then. */
ndx_tensor fz_tensor(fz *f, ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape);
void fz_tensor_free(ndx_tensor *t);
size_t fz_nbytes(const ndx_tensor *t);
int64_t fz_count(const ndx_tensor *t);

/* Fills values that are exact in every dtype (small integers) with some special ones (NaN, -0.0,
 * infinities, extreme integers); bools are 0 or 1; strings are NUL-padded text without interior
 * NULs, "" now and then. */
void fz_fill_values(fz *f, ndx_tensor *t);
/* Fills an index tensor so that, read as rows of `depth` coordinates, coordinate k lies in
 * dims[k] (mostly; see fz_coordinate). */
void fz_fill_index_rows(fz *f, ndx_tensor *t, int depth, const int64_t *dims);
/* Element i of an integer tensor (any integer dtype), widened. */
int64_t fz_get_int(const ndx_tensor *t, int64_t i);
void fz_set_int(ndx_tensor *t, int64_t i, int64_t v);

/* ---- checks ---------------------------------------------------------------------------------- */

/* Prints "fuzz check failed: ..." and aborts. */
void fz_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;
#define FZ_CHECK(cond, ...)                                                                     \
    do {                                                                                        \
        if (!(cond)) fz_fail(__VA_ARGS__);                                                      \
    } while (0)

/* A copy of a tensor's bytes and of its view, to prove later that nothing changed. */
typedef struct fz_snapshot {
    ndx_tensor view;
    const void *block; /* the memory watched (t->data, kept even if a poisoned view drops it) */
    void *bytes;
    size_t nbytes;
} fz_snapshot;
/* Watches a well-formed view's data. */
fz_snapshot fz_snapshot_take(const ndx_tensor *t);
/* Watches `nbytes` at `block` (the real allocation behind a possibly poisoned view). */
fz_snapshot fz_snapshot_of(const ndx_tensor *t, const void *block, size_t nbytes);
/* Aborts unless t's view and the watched bytes equal the snapshot. */
void fz_snapshot_check(const fz_snapshot *s, const ndx_tensor *t, const char *what);
void fz_snapshot_free(fz_snapshot *s);
/* Fills t's bytes with a pattern (an output the caller provides). */
void fz_fill_pattern(ndx_tensor *t, unsigned char pattern);

/* A rejected call: status is not NDX_OK, err carries the same code and one non-empty line that
 * starts with `op`. */
void fz_check_rejection(ndx_status status, const ndx_error *err, const char *op);
/* An accepted call: err was cleared or left alone (no check); status is NDX_OK. Aborts with the
 * message otherwise. */
void fz_check_accepted(ndx_status status, const ndx_error *err, const char *op);

/* Aborts unless a and b have the same dtype, itemsize, rank and shape and equal elements; for
 * float kinds two NaNs count as equal (payloads may differ with operand order). */
void fz_expect_equal(const ndx_tensor *got, const ndx_tensor *want, const char *what);
/* Same but bitwise: results at different thread counts or output modes must be identical. */
void fz_expect_identical(const ndx_tensor *a, const ndx_tensor *b, const char *what);
/* Aborts unless the views describe the same dtype, itemsize, rank and shape. */
void fz_expect_same_view(const ndx_tensor *got, const ndx_tensor *want, const char *what);

/* Makes a view malformed in one of the ways ndx_tensor_check refuses (negative or overflowing
 * dimension, bad rank, dtype or itemsize, NULL data); the data pointer is kept so the harness
 * can still free it, and so an op that reads anyway is caught by AddressSanitizer. */
void fz_poison(fz *f, ndx_tensor *t);

/* Checks a call's status against a reference verdict (a ref_verdict from reference.h): REF_ERROR
 * must be rejected, REF_OK accepted unless the memory budget (or the allocator) refused it.
 * Returns 1 when the op accepted. */
int fz_judge(int verdict, const char *why, ndx_status status, const ndx_error *err, const char *op,
             const ndx_options *opt);

/* Runs an op with one dense output through every output mode and checks it:
 *  - the shape function agrees with the reference on validity and on the output view;
 *  - the op is called with out->data NULL (it allocates), with a caller buffer of exactly the
 *    right view, or with a wrong view (which it must refuse, writing nothing);
 *  - an accepted result equals `expected`, and a second run at another thread count in the other
 *    output mode gives identical bytes;
 *  - a rejected call leaves the caller's buffer and view untouched (or data NULL).
 * `shape_may_disagree`: the shape function cannot know the result view (e.g. string widths that
 * depend on which rows the bad-index policy skips). */
typedef ndx_status (*fz_shape_fn)(void *ctx, ndx_tensor *out, ndx_error *err);
typedef ndx_status (*fz_call_fn)(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err);
void fz_run_single(fz *f, const char *op, void *ctx, fz_shape_fn shape, fz_call_fn call,
                   const ndx_options *opt, int verdict, const char *why, const ndx_tensor *expected,
                   int shape_may_disagree);

/* 1 when NDX_FUZZ_VERBOSE is set: harnesses then print each case before running it. */
int fz_verbose(void);
/* Prints "name: float32(…) [2, 3] = {…}" (the first elements) to stderr. */
void fz_dump(const char *name, const ndx_tensor *t);

/* A short description of a tensor for failure messages ("float32 [2, 3]"). */
const char *fz_describe(const ndx_tensor *t, char *buf, size_t cap);

#endif /* NDX_FUZZ_INPUT_H */
