/* math_kinds.c — the kinds that are not ndx's index or sparse ops: Const and Placeholder
 * (no inputs; builders and sessions treat them themselves), Identity, and the glue ops of
 * dense_ops.h. */
#include "graph_internal.h"

const graph_kind_desc graph_kind_const = {
    .kind = GRAPH_CONST, .type = "Const", .outputs = 1, .num_attrs = 1,
    .attrs = {{"value", GRAPH_ATTR_VALUE, 0, 0, 0, 0, GRAPH_ATTR_REQUIRED | GRAPH_ATTR_ALWAYS,
               NULL}}};

const graph_kind_desc graph_kind_placeholder = {
    .kind = GRAPH_PLACEHOLDER, .type = "Placeholder", .outputs = 1};

static const char *const x_input[] = {"x"};

static ndx_status infer_identity(const graph_node *n, const ndx_spec *in,
                                 const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)n;
    (void)consts;
    (void)err;
    out[0] = in[0];
    return NDX_OK;
}

const graph_kind_desc graph_kind_identity = {
    .kind = GRAPH_IDENTITY, .type = "Identity", .min_inputs = 1, .max_inputs = 1,
    .inputs = x_input, .outputs = 1, .infer = infer_identity};

/* ---- the binary ops ----------------------------------------------------------------------- */

static ndx_status infer_binary(const graph_node *n, const ndx_spec *in,
                               const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    return ndx_binary_infer((ndx_binary_op)graph_variant(n), &in[0], &in[1], out, err);
}

static ndx_status run_binary(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    return ndx_binary((ndx_binary_op)graph_variant(n), &in[0], &in[1], opt, out, err);
}

static const char *const xy_inputs[] = {"x", "y"};
#define BINARY(KIND, TYPE, OP)                                                                  \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 2, .max_inputs = 2,               \
     .inputs = xy_inputs, .outputs = 1, .infer = infer_binary, .run = run_binary}
const graph_kind_desc graph_kind_add = BINARY(GRAPH_ADD, "AddV2", NDX_BINARY_ADD);
const graph_kind_desc graph_kind_sub = BINARY(GRAPH_SUB, "Sub", NDX_BINARY_SUB);
const graph_kind_desc graph_kind_mul = BINARY(GRAPH_MUL, "Mul", NDX_BINARY_MUL);
const graph_kind_desc graph_kind_floor_div =
    BINARY(GRAPH_FLOOR_DIV, "FloorDiv", NDX_BINARY_FLOOR_DIV);
const graph_kind_desc graph_kind_floor_mod =
    BINARY(GRAPH_FLOOR_MOD, "FloorMod", NDX_BINARY_FLOOR_MOD);
const graph_kind_desc graph_kind_equal = BINARY(GRAPH_EQUAL, "Equal", NDX_BINARY_EQUAL);
const graph_kind_desc graph_kind_not_equal =
    BINARY(GRAPH_NOT_EQUAL, "NotEqual", NDX_BINARY_NOT_EQUAL);
const graph_kind_desc graph_kind_real_div =
    BINARY(GRAPH_REAL_DIV, "RealDiv", NDX_BINARY_REAL_DIV);
const graph_kind_desc graph_kind_maximum = BINARY(GRAPH_MAXIMUM, "Maximum", NDX_BINARY_MAXIMUM);
const graph_kind_desc graph_kind_minimum = BINARY(GRAPH_MINIMUM, "Minimum", NDX_BINARY_MINIMUM);
const graph_kind_desc graph_kind_less = BINARY(GRAPH_LESS, "Less", NDX_BINARY_LESS);
const graph_kind_desc graph_kind_less_equal =
    BINARY(GRAPH_LESS_EQUAL, "LessEqual", NDX_BINARY_LESS_EQUAL);
const graph_kind_desc graph_kind_greater = BINARY(GRAPH_GREATER, "Greater", NDX_BINARY_GREATER);
const graph_kind_desc graph_kind_greater_equal =
    BINARY(GRAPH_GREATER_EQUAL, "GreaterEqual", NDX_BINARY_GREATER_EQUAL);
const graph_kind_desc graph_kind_logical_and =
    BINARY(GRAPH_LOGICAL_AND, "LogicalAnd", NDX_BINARY_LOGICAL_AND);
const graph_kind_desc graph_kind_logical_or =
    BINARY(GRAPH_LOGICAL_OR, "LogicalOr", NDX_BINARY_LOGICAL_OR);

/* ---- the unary ops ------------------------------------------------------------------------ */

static ndx_status infer_unary(const graph_node *n, const ndx_spec *in,
                              const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    return ndx_unary_infer((ndx_unary_op)graph_variant(n), &in[0], out, err);
}

static ndx_status run_unary(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                            ndx_tensor *out, ndx_error *err) {
    return ndx_unary((ndx_unary_op)graph_variant(n), &in[0], opt, out, err);
}

#define UNARY(KIND, TYPE, OP, FLAGS)                                                            \
    {.kind = KIND, .type = TYPE, .variant = OP, .min_inputs = 1, .max_inputs = 1,               \
     .inputs = x_input, .outputs = 1, .flags = FLAGS, .infer = infer_unary, .run = run_unary}
const graph_kind_desc graph_kind_neg = UNARY(GRAPH_NEG, "Neg", NDX_UNARY_NEG, 0);
/* zeros_like and ones_like read only x's dtype and shape: they fold once the shape is known. */
const graph_kind_desc graph_kind_zeros_like =
    UNARY(GRAPH_ZEROS_LIKE, "ZerosLike", NDX_UNARY_ZEROS_LIKE, GRAPH_KIND_SHAPE_ONLY);
const graph_kind_desc graph_kind_ones_like =
    UNARY(GRAPH_ONES_LIKE, "OnesLike", NDX_UNARY_ONES_LIKE, GRAPH_KIND_SHAPE_ONLY);
const graph_kind_desc graph_kind_logical_not =
    UNARY(GRAPH_LOGICAL_NOT, "LogicalNot", NDX_UNARY_LOGICAL_NOT, 0);
const graph_kind_desc graph_kind_abs = UNARY(GRAPH_ABS, "Abs", NDX_UNARY_ABS, 0);
const graph_kind_desc graph_kind_square =
    UNARY(GRAPH_SQUARE, "Square", NDX_UNARY_SQUARE, 0);
const graph_kind_desc graph_kind_sqrt = UNARY(GRAPH_SQRT, "Sqrt", NDX_UNARY_SQRT, 0);

/* ---- cast, range, size, shape ------------------------------------------------------------- */

static ndx_status infer_cast(const graph_node *n, const ndx_spec *in,
                             const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    return ndx_cast_infer(&in[0], (ndx_dtype)n->attrs.dtype, out, err);
}

static ndx_status run_cast(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                           ndx_tensor *out, ndx_error *err) {
    return ndx_cast(&in[0], (ndx_dtype)n->attrs.dtype, opt, out, err);
}

const graph_kind_desc graph_kind_cast = {
    .kind = GRAPH_CAST, .type = "Cast", .min_inputs = 1, .max_inputs = 1, .inputs = x_input,
    .outputs = 1, .num_attrs = 1,
    .attrs = {{"to", GRAPH_ATTR_DTYPE, offsetof(graph_attrs, dtype), 0, 0, 0,
               GRAPH_ATTR_REQUIRED | GRAPH_ATTR_ALWAYS, NULL}},
    .infer = infer_cast, .run = run_cast};

static ndx_status infer_range(const graph_node *n, const ndx_spec *in,
                              const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)n;
    (void)consts;
    return ndx_range_infer(&in[0], &in[1], &in[2], out, err);
}

static ndx_status run_range(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                            ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_range(&in[0], &in[1], &in[2], opt, out, err);
}

static const char *const range_inputs[] = {"start", "limit", "delta"};
const graph_kind_desc graph_kind_range = {
    .kind = GRAPH_RANGE, .type = "Range", .min_inputs = 3, .max_inputs = 3,
    .inputs = range_inputs, .outputs = 1, .infer = infer_range, .run = run_range};

static ndx_status infer_size(const graph_node *n, const ndx_spec *in,
                             const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    return ndx_size_infer(&in[0], (ndx_dtype)n->attrs.dtype, out, err);
}

static ndx_status run_size(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                           ndx_tensor *out, ndx_error *err) {
    return ndx_size(&in[0], (ndx_dtype)n->attrs.dtype, opt, out, err);
}

static ndx_status infer_shape(const graph_node *n, const ndx_spec *in,
                              const ndx_tensor *const *consts, ndx_spec *out, ndx_error *err) {
    (void)consts;
    return ndx_shape_infer(&in[0], (ndx_dtype)n->attrs.dtype, out, err);
}

static ndx_status run_shape(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                            ndx_tensor *out, ndx_error *err) {
    return ndx_shape_of(&in[0], (ndx_dtype)n->attrs.dtype, opt, out, err);
}

/* out_type: int32 unless given, and always written. */
#define OUT_TYPE                                                                                \
    {"out_type", GRAPH_ATTR_DTYPE, offsetof(graph_attrs, dtype), NDX_INT32, 0, 0,                \
     GRAPH_ATTR_ALWAYS, NULL}
const graph_kind_desc graph_kind_size = {
    .kind = GRAPH_SIZE, .type = "Size", .min_inputs = 1, .max_inputs = 1, .inputs = x_input,
    .outputs = 1, .flags = GRAPH_KIND_SHAPE_ONLY, .num_attrs = 1, .attrs = {OUT_TYPE},
    .infer = infer_size, .run = run_size};
const graph_kind_desc graph_kind_shape = {
    .kind = GRAPH_SHAPE, .type = "Shape", .min_inputs = 1, .max_inputs = 1, .inputs = x_input,
    .outputs = 1, .flags = GRAPH_KIND_SHAPE_ONLY, .num_attrs = 1, .attrs = {OUT_TYPE},
    .infer = infer_shape, .run = run_shape};

/* ---- broadcast_gradient_args -------------------------------------------------------------- */

static ndx_status infer_bcast_args(const graph_node *n, const ndx_spec *in,
                                   const ndx_tensor *const *consts, ndx_spec *out,
                                   ndx_error *err) {
    (void)n;
    (void)consts;
    return ndx_broadcast_gradient_args_infer(&in[0], &in[1], out, err);
}

static ndx_status run_bcast_args(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                                 ndx_tensor *out, ndx_error *err) {
    (void)n;
    return ndx_broadcast_gradient_args(&in[0], &in[1], opt, out, err);
}

static const char *const bcast_args_inputs[] = {"s0", "s1"};
const graph_kind_desc graph_kind_broadcast_gradient_args = {
    .kind = GRAPH_BROADCAST_GRADIENT_ARGS, .type = "BroadcastGradientArgs", .min_inputs = 2,
    .max_inputs = 2, .inputs = bcast_args_inputs, .outputs = 2, .infer = infer_bcast_args,
    .run = run_bcast_args};
