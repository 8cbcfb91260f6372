/* glue.h — the few small ops that programs of ndx's index ops need around them (seed 003's
 * `x != -1`, `cast`, `+ 1`, `range(size(x))`; a sharded lookup's `ids % shards`, `ids // shards`).
 * The operands of the binary ops are called x and y, as in TensorFlow. They follow the conventions of the public ops (ndx.h): an infer function on partial shapes
 * with the same checks and messages as the op, the op checks everything before it writes, and
 * an output with data == NULL is allocated through the call's allocator (ndx_call_output).
 * Private to libndx: the graph layer builds and runs them. */
#ifndef NDX_GLUE_H
#define NDX_GLUE_H

#include "ndx.h"

/* Elementwise binary ops with TensorFlow's names and semantics. Both operands share one dtype;
 * their shapes are equal, or one of them is a scalar (rank 0) that is broadcast.
 *   ADD, SUB, MUL: every numeric dtype (integers wrap; float16/bfloat16 computed in float and
 *     rounded to nearest even; complex).
 *   FLOOR_DIV, FLOOR_MOD: integers and floats (not complex, not bool). Integers: floor division
 *     and a remainder with the sign of the divisor (TF's FloorDiv/FloorMod); a zero divisor is
 *     NDX_E_INVALID_ARGUMENT "floor_div: integer division by zero: y[4] = 0" (checked before any
 *     write);
 *     INT_MIN / -1 wraps to INT_MIN and its remainder is 0. Floats: floor(a / b) and
 *     a - floor(a / b) * b computed as TF does (fmod, then + b when the signs differ).
 *   EQUAL, NOT_EQUAL: every dtype including bool and strings (same width); output bool.
 * Other dtypes: NDX_E_UNSUPPORTED. */
typedef enum ndx_binary_op {
    NDX_BINARY_ADD = 0,
    NDX_BINARY_SUB,
    NDX_BINARY_MUL,
    NDX_BINARY_FLOOR_DIV,
    NDX_BINARY_FLOOR_MOD,
    NDX_BINARY_EQUAL,
    NDX_BINARY_NOT_EQUAL,
    NDX_BINARY_COUNT
} ndx_binary_op;

/* "add", "sub", "mul", "floor_div", "floor_mod", "equal", "not_equal". */
const char *ndx_binary_op_name(ndx_binary_op op);

ndx_status ndx_binary_infer(ndx_binary_op op, const ndx_spec *a, const ndx_spec *b, ndx_spec *out,
                            ndx_error *err);
ndx_status ndx_binary(ndx_binary_op op, const ndx_tensor *a, const ndx_tensor *b,
                      const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* cast(x, to): every dtype except strings, to every dtype except strings. Numbers to bool:
 * x != 0; bool to numbers: 0 or 1; complex to real: the real part; real to complex: imaginary 0;
 * float to integer: truncation toward zero, NaN gives 0 and values beyond the target's range
 * saturate to its min or max (defined, where C and TF's CPU leave it undefined); integer to
 * narrower integer: wraps (two's complement); to float16/bfloat16: round to nearest even. */
ndx_status ndx_cast_infer(const ndx_spec *x, ndx_dtype to, ndx_spec *out, ndx_error *err);
ndx_status ndx_cast(const ndx_tensor *x, ndx_dtype to, const ndx_options *opt, ndx_tensor *out,
                    ndx_error *err);

/* range(start, limit, delta): TF's tf.range. Three scalars of one dtype (int32, int64, float32,
 * float64); delta != 0, start <= limit when delta > 0 and start >= limit when delta < 0 (TF's
 * "Requires start <= limit when delta > 0: 5/0" messages); the length is
 * ceil(|limit - start| / |delta|); out[0] = start and out[i + 1] = out[i] + delta, accumulated as
 * TF does. Output: rank 1, the dtype of the inputs. Infer: length unknown. */
ndx_status ndx_range_infer(const ndx_spec *start, const ndx_spec *limit, const ndx_spec *delta,
                           ndx_spec *out, ndx_error *err);
ndx_status ndx_range(const ndx_tensor *start, const ndx_tensor *limit, const ndx_tensor *delta,
                     const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* size(x, out_dtype): the element count of x as a scalar of out_dtype (int32 or int64; int32
 * refuses a count above INT32_MAX). shape(x, out_dtype): x's dims as a rank-1 tensor. Any dtype
 * of x; its data is never read. Infer for shape: length = x's rank (unknown when it is). */
ndx_status ndx_size_infer(const ndx_spec *x, ndx_dtype out_dtype, ndx_spec *out, ndx_error *err);
ndx_status ndx_size(const ndx_tensor *x, ndx_dtype out_dtype, const ndx_options *opt,
                    ndx_tensor *out, ndx_error *err);
ndx_status ndx_shape_infer(const ndx_spec *x, ndx_dtype out_dtype, ndx_spec *out, ndx_error *err);
ndx_status ndx_shape_of(const ndx_tensor *x, ndx_dtype out_dtype, const ndx_options *opt,
                        ndx_tensor *out, ndx_error *err);

#endif /* NDX_GLUE_H */
