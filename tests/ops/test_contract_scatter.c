/* test_contract_scatter.c — the op contract for scatter_nd and tensor_scatter_nd_*:
 *   - infer on partial shapes: what can already fail does, with the op's exact message; what
 *     cannot stays silent and leaves the output's dims unknown; known dims propagate;
 *   - a property test: on random valid and invalid inputs, infer on blurred specs (dims, ranks
 *     and string widths made unknown) admits what the op produces, and each error infer gives is
 *     the op's error;
 *   - scratch exactness: every path run with exactly the plan's scratch (ASan sees an overrun)
 *     gives the public op's bytes; the public op asks its allocator for the outputs plus the
 *     plan's scratch and nothing else; a run after plan needs no allocator at all. */
#include "contract.h"

#include <stdio.h>

#include "core.h"
#include "scatter_nd_plan.h"

#define U NDX_UNKNOWN

/* ---- helpers --------------------------------------------------------------------------------- */

#define SPEC(dt, rank, ...) spec(dt, rank, (const int64_t[]){__VA_ARGS__})

static ndx_spec string_spec(size_t width, int rank, const int64_t *dims) {
    ndx_spec s = ndx_spec_make(NDX_STRING, rank, dims);
    s.itemsize = width;
    return s;
}

static void assert_infer_error(ndx_status st, const ndx_error *err, ndx_status code,
                               const char *message) {
    if (st != code)
        fail_msg("expected %s, got %s: %s", ndx_status_name(code), ndx_status_name(st),
                 err->message);
    assert_string_equal(err->message, message);
}

/* out has dtype dt, itemsize, rank and exactly the dims given (NDX_UNKNOWN where unknown). */
static void assert_spec(const ndx_spec *out, ndx_dtype dt, size_t itemsize, int rank,
                        const int64_t *dims) {
    assert_int_equal(out->dtype, dt);
    assert_int_equal(out->itemsize, itemsize);
    assert_int_equal(out->rank, rank);
    for (int i = 0; i < rank; i++)
        if (out->shape[i] != dims[i])
            fail_msg("dim %d is %lld, expected %lld", i, (long long)out->shape[i],
                     (long long)dims[i]);
}
#define ASSERT_SPEC(out, dt, itemsize, rank, ...)                                                  \
    assert_spec(out, dt, itemsize, rank, (const int64_t[]){__VA_ARGS__})

static ndx_status tinfer(ndx_scatter_op op, ndx_spec t, ndx_spec i, ndx_spec u, ndx_spec *out,
                         ndx_error *err) {
    return ndx_tensor_scatter_nd_infer(op, &t, &i, &u, out, err);
}

/* ---- infer on partial shapes: tensor_scatter_nd_* -------------------------------------------- */

static void infer_tensor_scatter_partial(void **state) {
    (void)state;
    ndx_error err;
    ndx_spec out;
    ndx_spec f32u = spec(NDX_FLOAT32, U, NULL), i64u = spec(NDX_INT64, U, NULL);
    /* Nothing known but dtypes: the output is the tensor's spec. */
    assert_ok(tinfer(NDX_SCATTER_ADD, f32u, i64u, f32u, &out, &err), &err);
    assert_int_equal(out.rank, U);
    assert_int_equal(out.dtype, NDX_FLOAT32);
    assert_int_equal(out.itemsize, 4);
    /* The tensor's known dims are the output's. */
    assert_ok(tinfer(NDX_SCATTER_UPDATE, SPEC(NDX_FLOAT32, 2, 4, 3), SPEC(NDX_INT64, 2, U, 2),
                     SPEC(NDX_FLOAT32, 1, U), &out, &err),
              &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 2, 4, 3);
    /* A tensor of unknown rank: indices and updates tell its rank and its dims from D on. */
    assert_ok(tinfer(NDX_SCATTER_MAX, f32u, SPEC(NDX_INT32, 2, 5, 1), SPEC(NDX_FLOAT32, 3, 5, 7, 2),
                     &out, &err),
              &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 3, U, 7, 2);
    assert_ok(tinfer(NDX_SCATTER_MAX, SPEC(NDX_FLOAT32, 3, U, U, 4), SPEC(NDX_INT32, 2, 5, 1),
                     SPEC(NDX_FLOAT32, 3, 5, 6, U), &out, &err),
              &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 3, U, 6, 4);
    /* Index depth above the rank, with the batch of rows unknown. */
    assert_infer_error(tinfer(NDX_SCATTER_ADD, SPEC(NDX_FLOAT32, 2, 4, 3), SPEC(NDX_INT64, 2, U, 3),
                              f32u, &out, &err),
                       &err, NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_add: indices of shape [?, 3] has index depth 3, more "
                       "than the rank 2 of tensor of shape [4, 3]");
    /* A depth of 5 against a tensor of unknown rank: nothing to compare, silent. */
    assert_ok(tinfer(NDX_SCATTER_ADD, f32u, SPEC(NDX_INT64, 2, 2, 5), f32u, &out, &err), &err);
    assert_int_equal(out.rank, U);
    /* An unknown depth decides nothing about updates: silent, and the output stays the tensor. */
    assert_ok(tinfer(NDX_SCATTER_ADD, SPEC(NDX_FLOAT32, 2, 4, U), SPEC(NDX_INT64, 2, 5, U),
                     SPEC(NDX_FLOAT32, 4, 1, 2, 3, 4), &out, &err),
              &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 2, 4, U);
    /* Updates of the wrong rank, and of a wrong known dim. */
    assert_infer_error(tinfer(NDX_SCATTER_ADD, SPEC(NDX_FLOAT32, 2, 4, U), SPEC(NDX_INT64, 2, U, 1),
                              SPEC(NDX_FLOAT32, 3, 7, 5, 2), &out, &err),
                       &err, NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_add: updates has shape [7, 5, 2] but indices of shape "
                       "[?, 1] and tensor of shape [4, ?] need updates of shape [?, ?]");
    assert_infer_error(tinfer(NDX_SCATTER_SUB, SPEC(NDX_FLOAT32, 2, 4, 3), SPEC(NDX_INT64, 2, 5, 1),
                              SPEC(NDX_FLOAT32, 2, 6, U), &out, &err),
                       &err, NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_sub: updates has shape [6, ?] but indices of shape "
                       "[5, 1] and tensor of shape [4, 3] need updates of shape [5, 3]");
    assert_ok(tinfer(NDX_SCATTER_SUB, SPEC(NDX_FLOAT32, 2, 4, 3), SPEC(NDX_INT64, 2, 5, 1),
                     SPEC(NDX_FLOAT32, 2, U, 3), &out, &err),
              &err);
    /* Types: a dtype mismatch needs no dims; string widths differ only when both are known. */
    assert_infer_error(tinfer(NDX_SCATTER_ADD, f32u, i64u, spec(NDX_FLOAT64, U, NULL), &out, &err),
                       &err, NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_add: updates is float64 but tensor is float32");
    assert_ok(tinfer(NDX_SCATTER_UPDATE, string_spec(0, 1, (int64_t[]){3}),
                     SPEC(NDX_INT16, 2, 2, 1), string_spec(5, 1, (int64_t[]){2}), &out, &err),
              &err);
    assert_int_equal(out.itemsize, 5);
    assert_ok(tinfer(NDX_SCATTER_UPDATE, string_spec(4, 1, (int64_t[]){3}),
                     SPEC(NDX_INT16, 2, 2, 1), string_spec(0, 1, (int64_t[]){2}), &out, &err),
              &err);
    assert_int_equal(out.itemsize, 4);
    assert_infer_error(tinfer(NDX_SCATTER_UPDATE, string_spec(4, U, NULL), i64u,
                              string_spec(5, U, NULL), &out, &err),
                       &err, NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_update: updates is string(5) but tensor is string(4)");
    /* The op's dtypes: refused with nothing else known. */
    assert_infer_error(
        tinfer(NDX_SCATTER_ADD, string_spec(0, U, NULL), i64u, string_spec(0, U, NULL), &out, &err),
        &err, NDX_E_UNSUPPORTED,
        "tensor_scatter_nd_add: string tensors are not supported (add and sub take "
        "integers, floats and complex numbers)");
    assert_infer_error(tinfer(NDX_SCATTER_MIN, spec(NDX_COMPLEX64, U, NULL), i64u,
                              spec(NDX_COMPLEX64, U, NULL), &out, &err),
                       &err, NDX_E_UNSUPPORTED,
                       "tensor_scatter_nd_min: complex64 tensors are not supported (min and max "
                       "take integers and real floats)");
    assert_infer_error(tinfer((ndx_scatter_op)9, f32u, i64u, f32u, &out, &err), &err,
                       NDX_E_INVALID_ARGUMENT, "tensor_scatter_nd: op 9 is not an ndx_scatter_op");
    /* Indices: a scalar, a float dtype; a malformed tensor spec. */
    assert_infer_error(tinfer(NDX_SCATTER_UPDATE, f32u, spec(NDX_INT32, 0, NULL), f32u, &out, &err),
                       &err, NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_update: indices is a scalar; it needs a last dimension, "
                       "the index depth");
    assert_infer_error(
        tinfer(NDX_SCATTER_UPDATE, f32u, spec(NDX_FLOAT32, U, NULL), f32u, &out, &err), &err,
        NDX_E_INVALID_ARGUMENT,
        "tensor_scatter_nd_update: indices must be int16, int32 or int64, not float32");
    ndx_spec bad = SPEC(NDX_FLOAT32, 2, -2, U);
    assert_infer_error(tinfer(NDX_SCATTER_UPDATE, bad, i64u, f32u, &out, &err), &err,
                       NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_update: tensor has a negative dimension: shape [-2, -1]");
    /* The empty-output rule: index rows of depth > 0 into a tensor known to be empty fail even
     * with other dims unknown; unknown rows, or rows of depth 0, do not. */
    assert_infer_error(tinfer(NDX_SCATTER_ADD, SPEC(NDX_FLOAT32, 2, U, 0), SPEC(NDX_INT64, 2, 2, 1),
                              f32u, &out, &err),
                       &err, NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_add: indices has 2 index rows but tensor of shape [?, 0] "
                       "has no elements");
    assert_ok(tinfer(NDX_SCATTER_ADD, SPEC(NDX_FLOAT32, 2, U, 0), SPEC(NDX_INT64, 2, U, 1), f32u,
                     &out, &err),
              &err);
    assert_ok(tinfer(NDX_SCATTER_ADD, SPEC(NDX_FLOAT32, 2, U, 0), SPEC(NDX_INT64, 2, 2, 0),
                     SPEC(NDX_FLOAT32, 3, 2, U, 0), &out, &err),
              &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 2, U, 0);
    /* ... and a tensor of unknown rank whose empty dim updates reveal. */
    assert_infer_error(tinfer(NDX_SCATTER_ADD, f32u, SPEC(NDX_INT64, 2, 2, 1),
                              SPEC(NDX_FLOAT32, 2, 2, 0), &out, &err),
                       &err, NDX_E_INVALID_ARGUMENT,
                       "tensor_scatter_nd_add: indices has 2 index rows but tensor of shape [?, 0] "
                       "has no elements");
}

/* ---- infer on partial shapes: scatter_nd ----------------------------------------------------- */

static void infer_scatter_nd_partial(void **state) {
    (void)state;
    ndx_error err;
    ndx_spec out;
    ndx_spec idx = SPEC(NDX_INT64, 2, 5, 1), upd = SPEC(NDX_FLOAT32, 2, 5, 3);
    ndx_spec i64u = spec(NDX_INT64, U, NULL);
    /* An unknown rank: indices and updates tell it, and the dims after the index depth. */
    assert_ok(ndx_scatter_nd_infer(&idx, &upd, U, NULL, &out, &err), &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 2, U, 3);
    assert_ok(ndx_scatter_nd_infer(&idx, &upd, 2, (int64_t[]){U, U}, &out, &err), &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 2, U, 3);
    assert_ok(ndx_scatter_nd_infer(&idx, &upd, 2, (int64_t[]){9, U}, &out, &err), &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 2, 9, 3);
    /* The shape argument's own checks. */
    assert_infer_error(ndx_scatter_nd_infer(&idx, &upd, 2, (int64_t[]){-2, U}, &out, &err), &err,
                       NDX_E_INVALID_ARGUMENT,
                       "scatter_nd: the output shape [-2, ?] has a negative dimension");
    assert_infer_error(ndx_scatter_nd_infer(&idx, &upd, 17, NULL, &out, &err), &err,
                       NDX_E_INVALID_ARGUMENT, "scatter_nd: the output rank 17 is outside 0 to 16");
    assert_infer_error(ndx_scatter_nd_infer(&idx, &upd, -3, NULL, &out, &err), &err,
                       NDX_E_INVALID_ARGUMENT, "scatter_nd: the output rank -3 is outside 0 to 16");
    assert_infer_error(ndx_scatter_nd_infer(&idx, &upd, 2, NULL, &out, &err), &err,
                       NDX_E_INVALID_ARGUMENT, "scatter_nd: shape is NULL but rank is 2");
    /* An overflow the known dims already decide, and one an unknown dim could undo (a 0). */
    ndx_spec f32u = spec(NDX_FLOAT32, U, NULL);
    int64_t big = (int64_t)1 << 40;
    assert_infer_error(ndx_scatter_nd_infer(&i64u, &f32u, 3, (int64_t[]){big, big, U}, &out, &err),
                       &err, NDX_E_OVERFLOW,
                       "scatter_nd: an output of shape [1099511627776, 1099511627776, ?] is too "
                       "large to address");
    assert_ok(ndx_scatter_nd_infer(&i64u, &f32u, 3, (int64_t[]){U, big, big}, &out, &err), &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 3, U, big, big);
    /* Strings: the width is the values' business. */
    ndx_spec supd = string_spec(3, 1, (int64_t[]){5});
    assert_ok(ndx_scatter_nd_infer(&idx, &supd, 1, (int64_t[]){4}, &out, &err), &err);
    ASSERT_SPEC(&out, NDX_STRING, 0, 1, 4);
    /* Updates against the output shape. */
    ndx_spec upd54 = SPEC(NDX_FLOAT32, 2, 5, 4);
    assert_infer_error(ndx_scatter_nd_infer(&idx, &upd54, 2, (int64_t[]){4, 3}, &out, &err), &err,
                       NDX_E_INVALID_ARGUMENT,
                       "scatter_nd: updates has shape [5, 4] but indices of shape [5, 1] and "
                       "output of shape [4, 3] need updates of shape [5, 3]");
    /* The empty-output rule. */
    ndx_spec idx31 = SPEC(NDX_INT64, 2, 3, 1), idx30 = SPEC(NDX_INT64, 2, 3, 0);
    ndx_spec upd30 = SPEC(NDX_FLOAT32, 3, 3, 0, U);
    assert_infer_error(ndx_scatter_nd_infer(&idx31, &f32u, 2, (int64_t[]){0, U}, &out, &err), &err,
                       NDX_E_INVALID_ARGUMENT,
                       "scatter_nd: indices has 3 index rows but output of shape [0, ?] has no "
                       "elements");
    assert_ok(ndx_scatter_nd_infer(&idx30, &upd30, 2, (int64_t[]){0, U}, &out, &err), &err);
    ASSERT_SPEC(&out, NDX_FLOAT32, 4, 2, 0, U);
}

/* ---- the property test ----------------------------------------------------------------------- */

/* 1 when the infer message is the op's, where each "?" of the former stands for one integer of
 * the latter (infer did not know that dim). */
static int same_message(const char *inferred, const char *actual) {
    while (*inferred && *actual) {
        if (*inferred == '?' && (*actual == '-' || (*actual >= '0' && *actual <= '9'))) {
            inferred++;
            if (*actual == '-') actual++;
            while (*actual >= '0' && *actual <= '9')
                actual++;
            continue;
        }
        if (*inferred != *actual) return 0;
        inferred++;
        actual++;
    }
    return *inferred == *actual;
}

typedef enum {
    DEFECT_NONE,
    DEFECT_UPDATES_DIM,   /* a dim of updates one too large */
    DEFECT_UPDATES_RANK,  /* updates with one dim too many */
    DEFECT_DEEP,          /* index depth above the rank */
    DEFECT_UPDATES_DTYPE, /* updates of another dtype (tensor_scatter_nd only) */
    DEFECT_INDEX_DTYPE,   /* float indices */
    DEFECT_INDEX_SCALAR,  /* rank-0 indices */
    DEFECT_EMPTY,         /* index rows of depth > 0 into an empty output */
    DEFECT_NEGATIVE,      /* scatter_nd: a negative output dim */
    DEFECT_RANK,          /* scatter_nd: an output rank out of range */
    DEFECT_COUNT
} defect;

typedef struct contract_case {
    int scatter_nd; /* else tensor_scatter_nd_<op> */
    ndx_scatter_op op;
    ndx_tensor tensor, indices, updates;
    int rank;                        /* scatter_nd's rank argument */
    int64_t shape[NDX_MAX_RANK + 2]; /* scatter_nd's shape argument */
} contract_case;

/* A random case with at most one defect, so that the op has one reason to fail (besides index
 * values out of range, which infer cannot see). */
static contract_case make_contract_case(test_rng *r) {
    contract_case c;
    memset(&c, 0, sizeof c);
    defect d = rng_below(r, 2) ? DEFECT_NONE : (defect)rng_range(r, 1, DEFECT_COUNT - 1);
    c.scatter_nd = rng_below(r, 3) == 0;
    c.op = (ndx_scatter_op)rng_below(r, 5);
    ndx_dtype dt = test_all_dtypes[rng_below(r, test_all_dtypes_count)];
    size_t width = dt == NDX_STRING ? (size_t)rng_range(r, 1, 4) : 0;
    int rank = (int)rng_range(r, 0, 4);
    int64_t shape[NDX_MAX_RANK];
    for (int i = 0; i < rank; i++)
        shape[i] = rng_range(r, 1, 3);
    if (rank > 0 && rng_below(r, 5) == 0) shape[rng_below(r, rank)] = 0;
    int depth = (int)rng_range(r, 0, rank);
    int lead = (int)rng_range(r, 0, 2);
    int64_t ishape[4];
    for (int i = 0; i < lead; i++)
        ishape[i] = rng_range(r, 0, 3);
    int64_t count = 1, rows = 1;
    for (int i = 0; i < rank; i++)
        count *= shape[i];
    for (int i = 0; i < lead; i++)
        rows *= ishape[i];
    if (d == DEFECT_EMPTY) { /* make sure it is one */
        if (rank == 0) rank = 1, shape[0] = 2;
        shape[rng_below(r, rank)] = 0;
        if (depth == 0) depth = 1;
        for (int i = 0; i < lead; i++)
            ishape[i] = rng_range(r, 1, 3);
        count = rows = 1;
    } else if (count == 0 && rows > 0 && depth > 0) { /* keep the rule */
        if (lead == 0)
            depth = 0;
        else
            ishape[0] = 0;
    }
    if (d == DEFECT_DEEP) depth = rank + 1;
    ishape[lead] = depth;
    int irank = lead + 1;
    if (d == DEFECT_INDEX_SCALAR) irank = 0;
    ndx_dtype idt = d == DEFECT_INDEX_DTYPE
                        ? NDX_FLOAT32
                        : (ndx_dtype[]){NDX_INT16, NDX_INT32, NDX_INT64}[rng_below(r, 3)];
    c.indices = test_tensor(idt, 0, irank, ishape);
    int64_t n = test_count(&c.indices), per_row = depth > 0 ? depth : 1;
    for (int64_t k = 0; k < n && ndx_is_index_dtype(idt); k++) {
        int64_t dim = k % per_row < rank ? shape[k % per_row] : 1;
        int64_t v = dim > 0 ? rng_below(r, dim) : 0;
        if (rng_below(r, 40) == 0) v = dim + 1; /* a value error now and then */
        test_set_index(&c.indices, k, v);
    }
    int64_t ushape[NDX_MAX_RANK + 4];
    int urank = 0;
    for (int i = 0; i < lead; i++)
        ushape[urank++] = ishape[i];
    for (int i = depth; i < rank; i++)
        ushape[urank++] = shape[i];
    if (d == DEFECT_UPDATES_DIM && urank > 0) ushape[rng_below(r, urank)] += 1;
    if (d == DEFECT_UPDATES_RANK && urank < NDX_MAX_RANK) ushape[urank++] = 2;
    ndx_dtype udt = dt;
    if (d == DEFECT_UPDATES_DTYPE && !c.scatter_nd)
        udt = dt == NDX_FLOAT64 ? NDX_INT8 : NDX_FLOAT64;
    c.updates = test_tensor(udt, udt == NDX_STRING ? width : 0, urank, ushape);
    test_fill_random(r, &c.updates);
    c.tensor = test_tensor(dt, width, rank, shape);
    test_fill_random(r, &c.tensor);
    c.rank = rank;
    for (int i = 0; i < NDX_MAX_RANK + 2; i++)
        c.shape[i] = i < rank ? shape[i] : 1;
    /* -1 would be NDX_UNKNOWN to infer */
    if (d == DEFECT_NEGATIVE && rank > 0) c.shape[rng_below(r, rank)] = -rng_range(r, 2, 3);
    if (d == DEFECT_RANK) c.rank = rng_below(r, 2) ? -2 : NDX_MAX_RANK + 1;
    return c;
}

static void free_contract_case(contract_case *c) {
    test_tensor_free(&c->tensor);
    test_tensor_free(&c->indices);
    test_tensor_free(&c->updates);
}

/* The spec of t with some dims, sometimes the rank, and sometimes a string's width unknown. */
static ndx_spec blur(test_rng *r, const ndx_tensor *t) {
    ndx_spec s = ndx_spec_of(t);
    if (s.dtype == NDX_STRING && rng_below(r, 3) == 0) s.itemsize = 0;
    if (rng_below(r, 6) == 0) {
        s.rank = U;
        return s;
    }
    for (int i = 0; i < s.rank; i++)
        if (rng_below(r, 3) == 0) s.shape[i] = U;
    return s;
}

static void infer_agrees_with_the_op(void **state) {
    (void)state;
    test_rng r = {77};
    int infer_errors = 0, admitted = 0;
    for (int rep = 0; rep < 6000; rep++) {
        contract_case c = make_contract_case(&r);
        ndx_options opt = {.num_threads = (int)rng_range(&r, 1, 2)};
        ndx_error op_err, inf_err;
        ndx_tensor out = {0};
        ndx_status op_st = c.scatter_nd ? ndx_scatter_nd(&c.indices, &c.updates, c.rank, c.shape,
                                                         &opt, &out, &op_err)
                                        : ndx_tensor_scatter_nd(c.op, &c.tensor, &c.indices,
                                                                &c.updates, &opt, &out, &op_err);
        for (int blurs = 0; blurs < 4; blurs++) {
            int complete = blurs == 0;
            ndx_spec is = complete ? ndx_spec_of(&c.indices) : blur(&r, &c.indices);
            ndx_spec us = complete ? ndx_spec_of(&c.updates) : blur(&r, &c.updates);
            ndx_spec os;
            ndx_status st;
            if (c.scatter_nd) {
                int rank = c.rank;
                int64_t shape[NDX_MAX_RANK + 2];
                memcpy(shape, c.shape, sizeof shape);
                if (!complete && rng_below(&r, 6) == 0) rank = U;
                for (int i = 0; !complete && i < NDX_MAX_RANK + 2; i++)
                    if (shape[i] >= 0 && rng_below(&r, 3) == 0) shape[i] = U;
                st = ndx_scatter_nd_infer(&is, &us, rank, rank == U ? NULL : shape, &os, &inf_err);
            } else {
                ndx_spec ts = complete ? ndx_spec_of(&c.tensor) : blur(&r, &c.tensor);
                st = ndx_tensor_scatter_nd_infer(c.op, &ts, &is, &us, &os, &inf_err);
            }
            if (st != NDX_OK) {
                infer_errors++;
                if (op_st != st || !same_message(inf_err.message, op_err.message))
                    fail_msg("case %d: infer says %s \"%s\", the op %s \"%s\"", rep,
                             ndx_status_name(st), inf_err.message, ndx_status_name(op_st),
                             op_st ? op_err.message : "");
            } else if (op_st == NDX_OK) {
                admitted++;
                if (!ndx_spec_admits(&os, &out))
                    fail_msg("case %d: infer's spec does not admit the output", rep);
            } else if (complete && op_st != NDX_E_OUT_OF_RANGE) {
                /* With nothing unknown, only index values are left to refuse. */
                fail_msg("case %d: infer passed complete specs, the op says %s \"%s\"", rep,
                         ndx_status_name(op_st), op_err.message);
            }
        }
        ndx_tensor_free(&out);
        free_contract_case(&c);
    }
    assert_true(infer_errors > 1000 && admitted > 1000);
}

/* ---- scratch exactness ----------------------------------------------------------------------- */

typedef struct path_case {
    const char *what;
    int scatter_nd;
    ndx_scatter_op op;
    int in_place;
    int threads;
    scatter_path path;
    ndx_tensor tensor, indices, updates;
} path_case;

/* `rows` index rows of depth `depth` into `shape`, from `distinct` destinations. */
static ndx_tensor duplicate_rows(test_rng *r, int64_t rows, int depth, const int64_t *shape,
                                 int64_t distinct) {
    ndx_tensor idx = test_tensor_v(NDX_INT64, 0, 2, rows, depth);
    for (int64_t i = 0; i < rows; i++) {
        uint64_t pick = (uint64_t)rng_below(r, distinct) * 0x9e3779b97f4a7c15ull;
        for (int k = 0; k < depth; k++) {
            test_set_index(&idx, i * depth + k, (int64_t)((pick >> (8 * k)) % (uint64_t)shape[k]));
        }
    }
    return idx;
}

static path_case make_path_case(test_rng *r, const char *what, int scatter_nd, ndx_scatter_op op,
                                int in_place, int threads, scatter_path path, ndx_dtype dt,
                                size_t width, int rank, const int64_t *shape, int depth,
                                int64_t rows, int64_t distinct) {
    path_case pc = {what, scatter_nd, op, in_place, threads, path, {0}, {0}, {0}};
    pc.tensor = test_tensor(dt, width, rank, shape);
    test_fill_random(r, &pc.tensor);
    pc.indices = duplicate_rows(r, rows, depth, shape, distinct);
    int64_t ushape[NDX_MAX_RANK + 1];
    int urank = 0;
    ushape[urank++] = rows;
    for (int i = depth; i < rank; i++)
        ushape[urank++] = shape[i];
    pc.updates = test_tensor(dt, width, urank, ushape);
    test_fill_random(r, &pc.updates);
    return pc;
}

static ndx_status plan_case(ndx_call *c, const path_case *pc, const ndx_tensor *out,
                            scatter_plan *p) {
    if (pc->scatter_nd)
        return ndx_scatter_nd_plan(c, &pc->indices, &pc->updates, pc->tensor.rank, pc->tensor.shape,
                                   out, p);
    return ndx_tensor_scatter_nd_plan(c, pc->op, &pc->tensor, &pc->indices, &pc->updates, out, p);
}

static ndx_status public_op(const path_case *pc, const ndx_options *opt, ndx_tensor *out,
                            ndx_error *err) {
    if (pc->scatter_nd)
        return ndx_scatter_nd(&pc->indices, &pc->updates, pc->tensor.rank, pc->tensor.shape, opt,
                              out, err);
    return ndx_tensor_scatter_nd(pc->op, &pc->tensor, &pc->indices, &pc->updates, opt, out, err);
}

/* Plan under `opt`, then run with exactly the plan's scratch from malloc and an output of our
 * own (the tensor's copy when in place): the bytes must be the public op's. */
static void run_with_exact_scratch(const path_case *pc, const ndx_options *opt,
                                   const ndx_tensor *expect) {
    ndx_error err;
    ndx_call c;
    /* The output is the caller's (or the tensor itself): the plan may use all the room. */
    ndx_tensor out = pc->in_place
                         ? test_tensor_from(pc->tensor.dtype, pc->tensor.itemsize, pc->tensor.rank,
                                            pc->tensor.shape, pc->tensor.data)
                         : test_tensor(NDX_INT8, 0, 0, NULL); /* data, for the plan */
    path_case planned = *pc;
    if (pc->in_place) planned.tensor = out;
    scatter_plan p;
    assert_ok(ndx_call_begin(&c, "test", opt, &out, &err), &err);
    assert_ok(plan_case(&c, &planned, &out, &p), &err);
    if (p.path != pc->path) fail_msg("%s: path %d, expected %d", pc->what, p.path, pc->path);
    if (p.path != SCATTER_DIRECT && p.path != SCATTER_COLUMNS && p.path != SCATTER_OWNED)
        assert_true(p.scratch_bytes > 0);
    void *scratch = NULL;
    if (p.scratch_bytes) assert_int_equal(posix_memalign(&scratch, 64, p.scratch_bytes), 0);
    if (p.path == SCATTER_STRINGS) assert_ok(ndx_scatter_nd_width(&p, scratch, &err), &err);
    if (!pc->in_place) {
        test_tensor_free(&out);
        out = test_tensor(p.want.dtype, p.want.itemsize, p.want.rank, p.want.shape);
        memset(out.data, 0xA5, test_nbytes(&out));
    }
    ndx_scatter_nd_run(&p, &out, scratch);
    free(scratch);
    assert_tensor_eq(&out, expect);
    test_tensor_free(&out);
}

static void check_path_case(const path_case *pc) {
    ndx_error err;
    ndx_options opt = {.num_threads = pc->threads};
    ndx_tensor expect = {0};
    assert_ok(public_op(pc, &opt, &expect, &err), &err);

    /* Exactly the plan's scratch, from malloc (ASan catches an overrun). */
    run_with_exact_scratch(pc, &opt, &expect);

    /* The same run when the allocator fails every call: planning and running allocate nothing. */
    test_allocator failing;
    test_allocator_init(&failing);
    failing.refuse = 1;
    ndx_options no_memory = opt;
    no_memory.allocator = &failing.base;
    run_with_exact_scratch(pc, &no_memory, &expect);
    assert_int_equal(failing.calls, 0);

    /* The public op asks for the output it allocates plus the plan's scratch (when larger than
     * the call's own space), nothing more. */
    test_allocator k;
    test_allocator_init(&k);
    ndx_options counted = opt;
    counted.allocator = &k.base;
    ndx_call c;
    scatter_plan p;
    ndx_tensor fresh = {0};
    assert_ok(ndx_call_begin(&c, "test", &counted, &fresh, &err), &err);
    assert_ok(plan_case(&c, pc, &fresh, &p), &err);
    size_t scratch = p.scratch_bytes;
    assert_ok(public_op(pc, &counted, &fresh, &err), &err);
    assert_tensor_eq(&fresh, &expect);
    size_t out_bytes = test_nbytes(&fresh);
    /* Scratch that fits in the call's own space (ndx_call_scratch) never reaches it. */
    assert_int_equal(k.bytes, out_bytes + (scratch > NDX_CALL_LOCAL ? scratch : 0));
    assert_int_equal(k.live, out_bytes ? 1 : 0); /* only the output is left */
    test_allocator_free(&k, fresh.data);
    ndx_tensor_free(&expect);
}

static void free_path_case(path_case *pc) {
    test_tensor_free(&pc->tensor);
    test_tensor_free(&pc->indices);
    test_tensor_free(&pc->updates);
}

static void scratch_is_exact_on_every_path(void **state) {
    (void)state;
    test_rng r = {90};
    const int64_t small[2] = {6, 3}, grid[2] = {256, 256}, wide[2] = {300, 200}, medium[2] = {300, 40},
                  columns[2] = {2, 70000}, line[1] = {(1 << 20) + 3}, strings[2] = {40, 2};
    path_case cases[] = {
        make_path_case(&r, "direct", 0, NDX_SCATTER_ADD, 0, 1, SCATTER_DIRECT, NDX_FLOAT32, 0, 2,
                       small, 1, 9, 4),
        make_path_case(&r, "columns", 0, NDX_SCATTER_MAX, 0, 3, SCATTER_COLUMNS, NDX_INT32, 0, 2,
                       columns, 1, 6, 2),
        make_path_case(&r, "elements", 0, NDX_SCATTER_ADD, 0, 2, SCATTER_ELEMENTS, NDX_FLOAT32, 0,
                       2, grid, 2, 70000, 5000),
        make_path_case(&r, "elements in place", 0, NDX_SCATTER_MIN, 1, 3, SCATTER_ELEMENTS,
                       NDX_INT16, 0, 2, grid, 2, 140000, 9000),
        make_path_case(&r, "elements on one thread", 0, NDX_SCATTER_SUB, 0, 1, SCATTER_ELEMENTS,
                       NDX_FLOAT32, 0, 1, line, 1, 140000, 100000),
        make_path_case(&r, "rows", 0, NDX_SCATTER_UPDATE, 0, 2, SCATTER_ROWS, NDX_FLOAT32, 0, 2,
                       medium, 1, 8000, 50),
        make_path_case(&r, "rows in place", 0, NDX_SCATTER_ADD, 1, 3, SCATTER_ROWS, NDX_FLOAT64, 0,
                       2, medium, 1, 4000, 300),
        make_path_case(&r, "owned", 0, NDX_SCATTER_UPDATE, 0, 2, SCATTER_OWNED, NDX_FLOAT32, 0, 2,
                       wide, 1, 2000, 50),
        make_path_case(&r, "owned in place", 0, NDX_SCATTER_ADD, 1, 3, SCATTER_OWNED, NDX_FLOAT64,
                       0, 2, wide, 1, 1200, 300),
        make_path_case(&r, "scatter_nd elements", 1, NDX_SCATTER_ADD, 0, 2, SCATTER_ELEMENTS,
                       NDX_INT64, 0, 2, grid, 2, 70000, 3000),
        make_path_case(&r, "scatter_nd rows", 1, NDX_SCATTER_ADD, 0, 3, SCATTER_ROWS, NDX_COMPLEX64,
                       0, 2, medium, 1, 4000, 100),
        make_path_case(&r, "scatter_nd owned", 1, NDX_SCATTER_ADD, 0, 3, SCATTER_OWNED,
                       NDX_COMPLEX64, 0, 2, wide, 1, 1000, 100),
        make_path_case(&r, "scatter_nd strings", 1, NDX_SCATTER_ADD, 0, 2, SCATTER_STRINGS,
                       NDX_STRING, 3, 2, strings, 1, 200, 25),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_path_case(&cases[i]);
        free_path_case(&cases[i]);
    }
}

/* A plan takes a bucketed path only when its scratch fits in what the budget leaves once the
 * output the call allocates is paid for; otherwise the direct path, with no scratch. */
static void no_room_means_no_scratch(void **state) {
    (void)state;
    test_rng r = {91};
    const int64_t grid[2] = {256, 256};
    path_case pc = make_path_case(&r, "elements", 0, NDX_SCATTER_ADD, 0, 2, SCATTER_ELEMENTS,
                                  NDX_FLOAT32, 0, 2, grid, 2, 70000, 5000);
    ndx_error err;
    ndx_call c;
    scatter_plan p;
    ndx_tensor out = {0}, given = test_tensor(NDX_FLOAT32, 0, 2, grid);
    ndx_options unlimited = {.num_threads = 2};
    assert_ok(ndx_call_begin(&c, "test", &unlimited, &out, &err), &err);
    assert_ok(plan_case(&c, &pc, &out, &p), &err);
    assert_int_equal(p.path, SCATTER_ELEMENTS);
    size_t scratch = p.scratch_bytes, out_bytes = test_nbytes(&pc.tensor);
    /* One byte short once the output is allocated: direct, with every row resolved into a slot
     * array before the first write (the error policy), which fits. */
    ndx_options tight = {.num_threads = 2, .max_memory = out_bytes + scratch - 1};
    assert_ok(ndx_call_begin(&c, "test", &tight, &out, &err), &err);
    assert_ok(plan_case(&c, &pc, &out, &p), &err);
    assert_int_equal(p.path, SCATTER_DIRECT);
    assert_int_equal(p.scratch_bytes, 70000 * sizeof(int64_t));
    assert_true(p.slotted);
    /* No room even for the slots: the direct path reads the indices as it goes. */
    ndx_options none = {.num_threads = 2, .max_memory = out_bytes};
    assert_ok(ndx_call_begin(&c, "test", &none, &out, &err), &err);
    assert_ok(plan_case(&c, &pc, &out, &p), &err);
    assert_int_equal(p.path, SCATTER_DIRECT);
    assert_int_equal(p.scratch_bytes, 0);
    assert_false(p.slotted);
    /* The tight budget with the caller's output: room enough. */
    assert_ok(ndx_call_begin(&c, "test", &tight, &out, &err), &err);
    assert_ok(plan_case(&c, &pc, &given, &p), &err);
    assert_int_equal(p.path, SCATTER_ELEMENTS);
    assert_int_equal(p.scratch_bytes, scratch);
    /* Exactly enough with the output allocated: bucketed again. */
    ndx_options exact = {.num_threads = 2, .max_memory = out_bytes + scratch};
    assert_ok(ndx_call_begin(&c, "test", &exact, &out, &err), &err);
    assert_ok(plan_case(&c, &pc, &out, &p), &err);
    assert_int_equal(p.path, SCATTER_ELEMENTS);
    /* Every one of these budgets gives the op the same bytes. */
    ndx_tensor expect = {0};
    assert_ok(public_op(&pc, &unlimited, &expect, &err), &err);
    const ndx_options *budgets[2] = {&tight, &exact};
    for (int b = 0; b < 2; b++) {
        assert_ok(public_op(&pc, budgets[b], &out, &err), &err);
        assert_tensor_eq(&out, &expect);
        ndx_tensor_free(&out);
    }
    ndx_tensor_free(&expect);
    test_tensor_free(&given);
    free_path_case(&pc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(infer_tensor_scatter_partial),
        cmocka_unit_test(infer_scatter_nd_partial),
        cmocka_unit_test(infer_agrees_with_the_op),
        cmocka_unit_test(scratch_is_exact_on_every_path),
        cmocka_unit_test(no_room_means_no_scratch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
