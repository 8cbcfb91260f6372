/* dense_ops.h — the few small ops that programs of ndx's index ops need around them (the replace -1
 * entries program's `x != -1`, `cast`, `+ 1`, `range(size(x))`; a sharded lookup's `ids % shards`, `ids // shards`).
 * The operands of the binary ops are called x and y, as in TensorFlow. They follow the conventions of the public ops (ndx.h): an infer function on partial shapes
 * with the same checks and messages as the op, the op checks everything before it writes, and
 * an output with data == NULL is allocated through the call's allocator (ndx_call_output).
 * Private to libndx: the graph layer builds and runs them. */
#ifndef NDX_GLUE_H
#define NDX_GLUE_H

#include "ndx.h"

/* Elements per worker below which a glue op's loop stays on one thread. */
#define GLUE_GRAIN ((int64_t)1 << 16)

/* Elementwise binary ops with TensorFlow's names and semantics. Both operands share one dtype;
 * their shapes broadcast as in NumPy and TensorFlow: aligned from the right (the shorter one
 * padded with 1s on the left), each pair of dims equal or one of them 1, which is repeated along
 * the other (a scalar broadcasts against anything). Infer on partial shapes: a 1 beside an
 * unknown dim gives unknown, any other known dim wins; an operand of unknown rank is taken as a
 * scalar or of the other's shape.
 *   ADD, SUB, MUL: every numeric dtype (integers wrap; float16/bfloat16 computed in float and
 *     rounded to nearest even; complex).
 *   FLOOR_DIV, FLOOR_MOD: integers and floats (not complex, not bool). Integers: floor division
 *     and a remainder with the sign of the divisor (TF's FloorDiv/FloorMod); a zero divisor is
 *     NDX_E_INVALID_ARGUMENT "floor_div: integer division by zero: y[4] = 0" (checked before any
 *     write; an empty result divides nothing, so it has no such error);
 *     INT_MIN / -1 wraps to INT_MIN and its remainder is 0. Floats: floor(a / b) and
 *     a - floor(a / b) * b computed as TF does (fmod, then + b when the signs differ).
 *   EQUAL, NOT_EQUAL: every dtype including bool and strings (same width); output bool.
 *   REAL_DIV: floats and complex (TF's RealDiv: x / y, IEEE: a zero divisor gives inf or nan;
 *     complex divided as C's complex division, which C++'s std::complex shares).
 *   MAXIMUM, MINIMUM: integers and floats (TF's Maximum / Minimum: a NaN operand gives NaN,
 *     otherwise std::max and std::min, which give x when x and y are equal, +0 and -0 too).
 *   LESS, LESS_EQUAL, GREATER, GREATER_EQUAL: integers and floats (TF's Less, LessEqual,
 *     Greater, GreaterEqual); output bool; IEEE comparisons, so a NaN operand gives false.
 *   LOGICAL_AND, LOGICAL_OR: bool only (TF's LogicalAnd, LogicalOr); output bool.
 * Other dtypes: NDX_E_UNSUPPORTED. */
typedef enum ndx_binary_op {
    NDX_BINARY_ADD = 0,
    NDX_BINARY_SUB,
    NDX_BINARY_MUL,
    NDX_BINARY_FLOOR_DIV,
    NDX_BINARY_FLOOR_MOD,
    NDX_BINARY_EQUAL,
    NDX_BINARY_NOT_EQUAL,
    NDX_BINARY_REAL_DIV,
    NDX_BINARY_MAXIMUM,
    NDX_BINARY_MINIMUM,
    NDX_BINARY_LESS,
    NDX_BINARY_LESS_EQUAL,
    NDX_BINARY_GREATER,
    NDX_BINARY_GREATER_EQUAL,
    NDX_BINARY_LOGICAL_AND,
    NDX_BINARY_LOGICAL_OR,
    NDX_BINARY_COUNT
} ndx_binary_op;

/* Integer division fails on a zero divisor before anything is written: NDX_E_INVALID_ARGUMENT
 * "<op>: integer division by zero: <what>[4] = 0" for the first of the `count` contiguous
 * elements of y that is zero (floor_div, floor_mod, ResourceScatterDiv). */
ndx_status ndx_check_divisors(const char *op, const char *what, const ndx_tensor *y,
                              int64_t count, ndx_error *err);

/* "add", "sub", "mul", "floor_div", "floor_mod", "equal", "not_equal", "div", "maximum",
 * "minimum", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or". */
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
/* Every check and error of ndx_range, without the result: *out gets its view with data NULL (a
 * session's range that only a counting partition reads, session_fuse.c). */
ndx_status ndx_range_view(const ndx_tensor *start, const ndx_tensor *limit,
                          const ndx_tensor *delta, const ndx_options *opt, ndx_tensor *out,
                          ndx_error *err);

/* size(x, out_dtype): the element count of x as a scalar of out_dtype (int32 or int64; int32
 * refuses a count above INT32_MAX). shape(x, out_dtype): x's dims as a rank-1 tensor. Any dtype
 * of x; its data is never read. Infer for shape: length = x's rank (unknown when it is). */
ndx_status ndx_size_infer(const ndx_spec *x, ndx_dtype out_dtype, ndx_spec *out, ndx_error *err);
ndx_status ndx_size(const ndx_tensor *x, ndx_dtype out_dtype, const ndx_options *opt,
                    ndx_tensor *out, ndx_error *err);
ndx_status ndx_shape_infer(const ndx_spec *x, ndx_dtype out_dtype, ndx_spec *out, ndx_error *err);
ndx_status ndx_shape_of(const ndx_tensor *x, ndx_dtype out_dtype, const ndx_options *opt,
                        ndx_tensor *out, ndx_error *err);

/* broadcast_gradient_args(s0, s1) (TF's BroadcastGradientArgs): s0 and s1 are the shapes of a
 * binary op's operands (int32 or int64 vectors of one dtype); out[0] and out[1] (r0, r1, vectors
 * of that dtype) are the axes of the broadcast output along which each operand was repeated, in
 * increasing order: the output's leading axes beyond the operand's rank and those where its dim
 * is 1 (an axis where both dims are 1 is in both); none at all when s0 equals s1. Shapes that do
 * not broadcast: NDX_E_INVALID_ARGUMENT "broadcast_gradient_args: Incompatible shapes: [2,3] vs.
 * [4]". Infer: two vectors of unknown length. glue_broadcast_args.c. */
ndx_status ndx_broadcast_gradient_args_infer(const ndx_spec *s0, const ndx_spec *s1,
                                             ndx_spec *out, ndx_error *err);
ndx_status ndx_broadcast_gradient_args(const ndx_tensor *s0, const ndx_tensor *s1,
                                       const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* Elementwise ops of one tensor (TensorFlow's Neg, ZerosLike, OnesLike, LogicalNot, Abs,
 * Square, Sqrt); the output has x's dtype and shape.
 *   NEG: signed integers (wrapping: -INT_MIN is INT_MIN), floats (the sign flips, NaN's too),
 *     complex.
 *   ZEROS_LIKE, ONES_LIKE: every dtype but strings (ones_like of bool is true); x's data is never
 *     read.
 *   LOGICAL_NOT: bool.
 *   ABS: signed integers (wrapping: abs(INT_MIN) is INT_MIN, as TF's) and floats (the sign bit
 *     cleared). Complex is refused: TF's tf.abs of complex is ComplexAbs, whose output is real.
 *   SQUARE: every numeric dtype (integers wrap; complex x * x).
 *   SQRT: floats (IEEE: a negative gives NaN) and complex (C's csqrt, the principal root).
 * float16 and bfloat16 are computed in float and rounded to nearest even.
 * Other dtypes: NDX_E_UNSUPPORTED. */
typedef enum ndx_unary_op {
    NDX_UNARY_NEG = 0,
    NDX_UNARY_ZEROS_LIKE,
    NDX_UNARY_ONES_LIKE,
    NDX_UNARY_LOGICAL_NOT,
    NDX_UNARY_ABS,
    NDX_UNARY_SQUARE,
    NDX_UNARY_SQRT,
    NDX_UNARY_COUNT
} ndx_unary_op;

/* "neg", "zeros_like", "ones_like", "logical_not", "abs", "square", "sqrt". */
const char *ndx_unary_op_name(ndx_unary_op op);
ndx_status ndx_unary_infer(ndx_unary_op op, const ndx_spec *x, ndx_spec *out, ndx_error *err);
ndx_status ndx_unary(ndx_unary_op op, const ndx_tensor *x, const ndx_options *opt,
                     ndx_tensor *out, ndx_error *err);

/* An argument of dims or axes (fill's dims, reshape's shape, reduce_sum's axes): int32 or int64,
 * a vector (or, with scalar_ok, a scalar: one element). *len: its element count, or NDX_UNKNOWN.
 * The error names "op: what" (fill_reshape.c). */
ndx_status glue_check_int_arg(const char *op, const char *what, const ndx_spec *s, int scalar_ok,
                              int64_t *len, ndx_error *err);

/* fill(dims, value) (TF's Fill): a tensor of shape `dims` (a vector of int32 or int64, each
 * >= 0) whose every element is the scalar `value` (any dtype, strings too). Infer: `dims` is
 * NULL when its value is not known (the rank is still its length when that is known). */
ndx_status ndx_fill_infer(const ndx_spec *dims_spec, const ndx_tensor *dims,
                          const ndx_spec *value, ndx_spec *out, ndx_error *err);
ndx_status ndx_fill(const ndx_tensor *dims, const ndx_tensor *value, const ndx_options *opt,
                    ndx_tensor *out, ndx_error *err);

/* reshape(tensor, shape) (TF's Reshape): tensor's elements, in row-major order, in a tensor of
 * shape `shape` (a vector of int32 or int64; dims >= 0 except at most one -1, which takes what
 * the element count leaves). Infer: `shape` NULL when its value is not known. */
ndx_status ndx_reshape_infer(const ndx_spec *tensor, const ndx_spec *shape_spec,
                             const ndx_tensor *shape, ndx_spec *out, ndx_error *err);
ndx_status ndx_reshape(const ndx_tensor *tensor, const ndx_tensor *shape, const ndx_options *opt,
                       ndx_tensor *out, ndx_error *err);

/* The reductions (TF's Sum, Mean, Max, Min): input reduced over the dims `axes` names (an int32
 * or int64 scalar or vector; -rank <= axis < rank; no axis twice; none: input itself), those
 * dims dropped, or kept as 1 with keep_dims. Each output element is reduced in one fixed order
 * (its reduced elements in row-major order), so a result is the same bits at any thread count.
 * Errors name the op: "reduce_mean: axes[0] = 2 is out of range for an input of rank 2 (from -2
 * to 1)". Infer: `axes` NULL when its value is not known.
 *   SUM: numeric dtypes (integers wrap; float16 and bfloat16 summed in float, float32 in float,
 *     rounded once at the end); an empty reduction gives 0.
 *   MEAN: numeric dtypes; the sum (integers: int8 .. int32 summed in int64, uint8 .. uint32 in
 *     uint64, 64-bit ones wrapping, as TF's) divided by the count, integers truncating toward
 *     zero; float16 and bfloat16 in float. Empty: NaN for floats, 0 for integers and complex (TF's
 *     CPU identities).
 *   MAX, MIN: integers and floats (not complex); a NaN among the reduced elements gives NaN (TF's
 *     reducers propagate it). Empty: the identity, -inf / +inf for floats, the lowest / highest
 *     value for integers. */
typedef enum ndx_reduce_op {
    NDX_REDUCE_SUM = 0,
    NDX_REDUCE_MEAN,
    NDX_REDUCE_MAX,
    NDX_REDUCE_MIN,
    NDX_REDUCE_COUNT
} ndx_reduce_op;

/* "reduce_sum", "reduce_mean", "reduce_max", "reduce_min". */
const char *ndx_reduce_op_name(ndx_reduce_op op);
ndx_status ndx_reduce_infer(ndx_reduce_op op, const ndx_spec *input, const ndx_spec *axes_spec,
                            const ndx_tensor *axes, int keep_dims, ndx_spec *out,
                            ndx_error *err);
ndx_status ndx_reduce(ndx_reduce_op op, const ndx_tensor *input, const ndx_tensor *axes,
                      int keep_dims, const ndx_options *opt, ndx_tensor *out, ndx_error *err);
/* ndx_reduce_infer and ndx_reduce with NDX_REDUCE_SUM. */
ndx_status ndx_reduce_sum_infer(const ndx_spec *input, const ndx_spec *axes_spec,
                                const ndx_tensor *axes, int keep_dims, ndx_spec *out,
                                ndx_error *err);
ndx_status ndx_reduce_sum(const ndx_tensor *input, const ndx_tensor *axes, int keep_dims,
                          const ndx_options *opt, ndx_tensor *out, ndx_error *err);
/* reduce_sum(a * b, axes) with no product tensor: a and b float32 or float64 of one layout; each
 * product rounded to the dtype, then summed as ndx_reduce_sum sums (the same bits as ndx_mul then
 * ndx_reduce_sum). The session's rewrite of that pair. */
ndx_status ndx_reduce_sum_of_products(const ndx_tensor *a, const ndx_tensor *b,
                                      const ndx_tensor *axes, int keep_dims,
                                      const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* The broadcast of two dims (binary.c's rule, NDX_UNKNOWN where it depends on an unknown
 * dim); -2 when they conflict. */
int64_t glue_broadcast_dim(int64_t a, int64_t b);

/* select(condition, x, y) (TF's SelectV2, TF2's tf.where(condition, x, y)): x where condition
 * is true, else y. condition is bool; x and y share one dtype (any, strings too: the output's
 * width is the wider of theirs, padded with NULs); the three shapes broadcast together as the
 * binary ops' do. */
ndx_status ndx_select_infer(const ndx_spec *condition, const ndx_spec *x, const ndx_spec *y,
                            ndx_spec *out, ndx_error *err);
ndx_status ndx_select(const ndx_tensor *condition, const ndx_tensor *x, const ndx_tensor *y,
                      const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* where(condition) (TF's Where, TF2's tf.where(condition)): the coordinates of condition's true
 * elements (bool) or non-zero ones (numeric dtypes; NaN counts as non-zero, -0 as zero; complex
 * when either part is), in row-major order: int64 [N, rank]. Infer: N unknown. */
ndx_status ndx_where_infer(const ndx_spec *condition, ndx_spec *out, ndx_error *err);
ndx_status ndx_where(const ndx_tensor *condition, const ndx_options *opt, ndx_tensor *out,
                     ndx_error *err);

/* The end of reshape, expand_dims and squeeze: out (allocated when its data is NULL) gets
 * tensor's bytes as `spec` (of the same element count, checked by the caller). */
struct ndx_call;
ndx_status glue_reshape_to(struct ndx_call *c, const ndx_tensor *tensor, const ndx_spec *spec,
                           ndx_tensor *out);

/* ---- joining and cutting (concat_slice.c): every dtype, strings of one width too ------------ */

/* concat(values, axis) (TF's ConcatV2): n >= 1 values of one dtype and rank >= 1, equal in every
 * dim but `axis` (an int32 or int64 scalar, -rank <= axis < rank), joined along it. TF's checks
 * and messages ("concat: dimension 1 in both shapes must be equal: values[0].shape = [2,3] vs.
 * values[1].shape = [2,4]"). Infer: `axis` NULL when its value is not known (every dim unknown
 * then); the axis dim is unknown when any value's is. */
ndx_status ndx_concat_infer(int n, const ndx_spec *values, const ndx_spec *axis_spec,
                            const ndx_tensor *axis, ndx_spec *out, ndx_error *err);
ndx_status ndx_concat(int n, const ndx_tensor *values, const ndx_tensor *axis,
                      const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* stack(values, axis) (TF's Pack): n >= 1 values of one dtype and shape, stacked along a new dim
 * of n at `axis` (-(rank + 1) <= axis <= rank). */
ndx_status ndx_stack_infer(int n, const ndx_spec *values, int axis, ndx_spec *out,
                           ndx_error *err);
ndx_status ndx_stack(int n, const ndx_tensor *values, int axis, const ndx_options *opt,
                     ndx_tensor *out, ndx_error *err);

/* slice(input, begin, size) (TF's Slice): the block of input starting at `begin` of `size`
 * (vectors of one dtype, int32 or int64, of length rank(input)); 0 <= begin[i] <= dim i and
 * 0 <= size[i] <= dim i - begin[i], or size[i] = -1 for "to the end". Infer: begin or size NULL
 * when not known. */
ndx_status ndx_slice_infer(const ndx_spec *input, const ndx_spec *begin_spec,
                           const ndx_tensor *begin, const ndx_spec *size_spec,
                           const ndx_tensor *size, ndx_spec *out, ndx_error *err);
ndx_status ndx_slice(const ndx_tensor *input, const ndx_tensor *begin, const ndx_tensor *size,
                     const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* expand_dims(input, axis) (TF's ExpandDims): input with a dim of 1 inserted at `axis` (an int32
 * or int64 holding one value, -rank - 1 <= axis <= rank). Infer: axis NULL when not known. */
ndx_status ndx_expand_dims_infer(const ndx_spec *input, const ndx_spec *axis_spec,
                                 const ndx_tensor *axis, ndx_spec *out, ndx_error *err);
ndx_status ndx_expand_dims(const ndx_tensor *input, const ndx_tensor *axis,
                           const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* squeeze(input, squeeze_dims) (TF's Squeeze): input without the dims of 1 that squeeze_dims
 * names, a set of axes as a bit mask (bit ndx_squeeze_bit(a) for axis a: a for 0 <= a < 16,
 * 15 - a for -16 <= a < 0, so that a negative axis means the same at any rank); an empty set
 * drops every dim of 1. A named dim that is not 1 is an error ("squeeze: can not squeeze dim[1],
 * expected a dimension of 1, got 3"), as an axis out of [-rank, rank) is. */
int ndx_squeeze_bit(int axis); /* -1 for an axis outside [-16, 16) */
ndx_status ndx_squeeze_infer(const ndx_spec *input, uint32_t squeeze_dims, ndx_spec *out,
                             ndx_error *err);
ndx_status ndx_squeeze(const ndx_tensor *input, uint32_t squeeze_dims, const ndx_options *opt,
                       ndx_tensor *out, ndx_error *err);

/* The gradient of ndx_embedding_bag (ndx.h). out[0], with respect to its params, as the values
 * of slices whose indices are the ids: row i is d loss / d params[ids[i]] through id i alone,
 * dy[b] * w_i / divisor_b (b id i's bag, divisor_b 1, sum(w) or sqrt(sum(w^2)) of the combiner;
 * 0 when it is 0), then, when max_norm >= 0 clipped row i, through clip_by_norm's Jacobian
 * (max_norm / ||x|| * (g - x (x . g) / ||x||^2) where ||x|| > max_norm). out[1], with respect
 * to the weights ([ids], or [0] without weights): with s_i = clip(x_i) . dy[b], s_i (sum),
 * (s_i - sum_j w_j s_j / W) / W (mean), s_i / W - w_i sum_j w_j s_j / W^3 (sqrtn), 0 where W
 * is 0. dy: the forward's output shape and params' dtype. Outputs of params' dtype; float16 and
 * bfloat16 computed in float. Same checks as the forward, and dy's. */
ndx_status ndx_embedding_bag_grad_infer(const ndx_spec *params, const ndx_spec *ids,
                                        const ndx_spec *bags, const ndx_spec *weights,
                                        const ndx_embedding_bag_attrs *attrs,
                                        const ndx_spec *dy, ndx_spec out[2], ndx_error *err);
ndx_status ndx_embedding_bag_grad(const ndx_tensor *params, const ndx_tensor *ids,
                                  const ndx_tensor *bags, const ndx_tensor *weights,
                                  const ndx_embedding_bag_attrs *attrs, const ndx_tensor *dy,
                                  const ndx_options *opt, ndx_tensor out[2], ndx_error *err);

#endif /* NDX_GLUE_H */
