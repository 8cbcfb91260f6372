/* scatter_combine.h — how the scatter family combines an update with what its destination holds,
 * one small kernel per (op, dtype), generated once per element type in scatter_combine.c.
 *
 * Every kernel reads and writes elements through memcpy, so tensors need no particular
 * alignment. Arithmetic follows TensorFlow's CPU kernels: integers wrap, float16 and bfloat16
 * round back after every step, min/max are std::min(current, update) / std::max(current,
 * update) (a NaN update is ignored, a NaN already there stays), complex add/sub go
 * componentwise, a NaN already in the destination wins a sum (or real product) with a NaN update
 * on every path, and bool's "add" (scatter_nd only) is OR. The segment reductions add a product
 * and their own min and max (ndx_combine_find_segment). */
#ifndef NDX_SCATTER_COMBINE_H
#define NDX_SCATTER_COMBINE_H

#include "core.h"

/* dst[i] = op(dst[i], src[i]) for i in [0, n): one slice of updates landing on one slice. */
typedef void (*ndx_combine_run_fn)(void *restrict dst, const void *restrict src, int64_t n,
                                   size_t itemsize);
/* For k in [0, n), in order: dst[slots[k]] = op(dst[slots[k]], values[k]); slots[k] < 0 is
 * skipped. Single elements landing anywhere in dst (slices of one element). */
typedef void (*ndx_combine_points_fn)(void *restrict dst, const int64_t *restrict slots,
                                      const void *restrict values, int64_t n, size_t itemsize);

/* The same from packed entries, each a uint32 element offset followed by the update element
 * (stride 4 + itemsize, no alignment): how bucketed single elements travel. */
typedef void (*ndx_combine_entries_fn)(void *restrict dst, const void *restrict entries, int64_t n,
                                       size_t itemsize);

/* The variables' row scatters (ResourceScatterMul and ResourceScatterDiv, scatter_rows.h) also
 * multiply and divide: two ops past ndx_scatter_op's own, which only ndx_combine_find and the
 * row scatters take (tensor_scatter_nd refuses them, as TensorFlow has no tensor_scatter_nd_mul).
 * MUL: current * update; DIV: current / update (integers truncate; a zero divisor is the
 * caller's to refuse, and x / -1 wraps as negation; floats IEEE; complex as C's division). */
#define SCATTER_OP_MUL ((ndx_scatter_op)(NDX_SCATTER_MAX + 1))
#define SCATTER_OP_DIV ((ndx_scatter_op)(NDX_SCATTER_MAX + 2))

typedef struct ndx_combine {
    ndx_combine_run_fn run;
    ndx_combine_points_fn points;
    ndx_combine_entries_fn entries;
} ndx_combine;

/* Fills *k with the kernels of `op` on `dtype` (itemsize is the element width, used by UPDATE,
 * which moves bytes of any width including strings). Returns 0 when there are none: ADD/SUB,
 * and SCATTER_OP_MUL/DIV, exist for numbers (and ADD for bool, as OR), MIN/MAX for integers and
 * real floats. Which dtypes an op accepts is the caller's decision; strings' concatenation is
 * below. */
int ndx_combine_find(ndx_scatter_op op, ndx_dtype dtype, size_t itemsize, ndx_combine *k);

/* Fills *k with the combine of segment reduction `op` on `dtype` (segment_reduce.h): ADD for SUM,
 * MEAN and SQRT_N, a product for PROD (every number; complex by the textbook formula), and for
 * MIN and MAX (integers and real floats) TensorFlow's data.cwiseMin<PropagateNaN>(output) /
 * cwiseMax: a NaN on either side is kept (so a segment holding one is NaN); otherwise the update
 * wins unless the current value is strictly smaller / larger. Returns 0 when there is none. */
int ndx_combine_find_segment(ndx_segment_op op, ndx_dtype dtype, ndx_combine *k);

/* ---- strings: scatter_nd's "add" is concatenation ---------------------------------------- */

/* Length of a fixed-width string: the bytes before the first NUL, or the whole width. */
static inline size_t ndx_string_length(const void *s, size_t width) {
    const void *nul = memchr(s, 0, width);
    return nul ? (size_t)((const char *)nul - (const char *)s) : width;
}

/* Appends n strings of src (src_width bytes each) to the n strings of dst (dst_width bytes
 * each, NUL-padded); text that would not fit in dst_width is cut. */
void ndx_string_append_run(void *restrict dst, size_t dst_width, const void *restrict src,
                           size_t src_width, int64_t n);

/* A NaN already in the destination wins over a NaN update, whatever operand order the compiler
 * gives the commutative + and * (it swaps them freely, and the hardware keeps its first
 * operand's NaN): c + c quiets it as the sum would. Without this the scatter's paths (one element
 * at a time, contiguous slices, bucketed entries) disagree in the sign and payload of a NaN sum,
 * so results would differ with the slice width and the thread count. The sums that fold in a
 * register (sparse_reduce.c) take the same rule. */
#define NDX_NAN_FIRST(c, expr) ((c) != (c) ? (c) + (c) : (expr))

/* The segment reductions' max of the current value c and an update u (TensorFlow's
 * cwiseMax<PropagateNaN>): a NaN on either side gives that NaN, the current one first; otherwise
 * the update wins a tie. IS_NAN and LESS as the type needs. The maxima that fold in a register
 * (sparse_reduce.c) take the same rule. */
#define NDX_SEGMENT_MAX_OF(c, u, IS_NAN, LESS) \
    (IS_NAN(c) ? (c) : IS_NAN(u) ? (u) : LESS(u, c) ? (c) : (u))

#endif /* NDX_SCATTER_COMBINE_H */
