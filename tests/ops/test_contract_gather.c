/* test_contract_gather.c — gather_nd as infer, plan and run: infer on partial shapes decides what
 * it can and waits for what it cannot, agrees with the op on random inputs, and the plan's
 * scratch is exactly what the run uses. */
#include "contract.h"

#include "gather_nd_plan.h"

#define U NDX_UNKNOWN

/* infer(params, indices, batch_dims) must succeed with an output of `want`. */
static void infers(ndx_spec params, ndx_spec indices, int batch_dims, ndx_spec want) {
    ndx_spec out;
    ndx_error err;
    assert_ok(ndx_gather_nd_infer(&params, &indices, batch_dims, &out, &err), &err);
    char a[128], b[128];
    ndx_format_spec_dims(a, sizeof a, &out);
    ndx_format_spec_dims(b, sizeof b, &want);
    assert_string_equal(a, b);
    assert_int_equal(out.dtype, want.dtype);
    assert_int_equal(out.itemsize, want.itemsize);
}

static void refuses(ndx_spec params, ndx_spec indices, int batch_dims, ndx_status code,
                    const char *message) {
    ndx_spec out;
    ndx_error err;
    ndx_status st = ndx_gather_nd_infer(&params, &indices, batch_dims, &out, &err);
    assert_int_equal(st, code);
    assert_string_equal(err.message, message);
}

static void partial_shapes(void **state) {
    (void)state;
    /* known dims pass through; unknown ones stay unknown */
    infers(spec(NDX_FLOAT32, 2, SHAPE(U, 3)), spec(NDX_INT64, 2, SHAPE(U, 1)), 0,
           spec(NDX_FLOAT32, 2, SHAPE(U, 3)));
    infers(spec(NDX_INT8, 3, SHAPE(4, U, 6)), spec(NDX_INT32, 3, SHAPE(2, 5, 2)), 0,
           spec(NDX_INT8, 3, SHAPE(2, 5, 6)));
    /* unknown rank anywhere, or an unknown depth: the output rank is unknown */
    infers(spec(NDX_FLOAT32, U, NULL), spec(NDX_INT64, 2, SHAPE(7, 1)), 0,
           spec(NDX_FLOAT32, U, NULL));
    infers(spec(NDX_FLOAT32, 2, SHAPE(4, 3)), spec(NDX_INT64, 2, SHAPE(7, U)), 0,
           spec(NDX_FLOAT32, U, NULL));
    infers(spec(NDX_FLOAT32, 2, SHAPE(4, 3)), spec(NDX_INT64, U, NULL), 0,
           spec(NDX_FLOAT32, U, NULL));
    /* batch dims: an unknown one cannot conflict */
    infers(spec(NDX_FLOAT64, 3, SHAPE(U, 5, 2)), spec(NDX_INT16, 3, SHAPE(3, 4, 1)), 1,
           spec(NDX_FLOAT64, 3, SHAPE(3, 4, 2)));
    /* a string of unknown width gives one */
    ndx_spec words = spec(NDX_STRING, 1, SHAPE(U));
    ndx_spec some = spec(NDX_STRING, 1, SHAPE(3));
    some.itemsize = 0;
    infers(words, spec(NDX_INT64, 2, SHAPE(3, 1)), 0, some);
    /* a params with a known zero but unknown other dims might be fine: no error yet */
    infers(spec(NDX_FLOAT32, 2, SHAPE(0, U)), spec(NDX_INT64, 2, SHAPE(U, 1)), 0,
           spec(NDX_FLOAT32, 2, SHAPE(U, U)));
}

static void partial_shapes_refused(void **state) {
    (void)state;
    refuses(spec(NDX_FLOAT32, U, NULL), spec(NDX_INT64, 0, NULL), 0, NDX_E_INVALID_ARGUMENT,
            "gather_nd: indices is a scalar; it needs rank >= 1, its last dimension being the "
            "index depth");
    refuses(spec(NDX_FLOAT32, U, NULL), spec(NDX_INT64, U, NULL), -1, NDX_E_INVALID_ARGUMENT,
            "gather_nd: batch_dims = -1 is negative; TensorFlow requires 0 <= batch_dims < "
            "rank(indices) and batch_dims < rank(params)");
    refuses(spec(NDX_FLOAT32, U, NULL), spec(NDX_FLOAT32, 2, SHAPE(U, 1)), 0,
            NDX_E_INVALID_ARGUMENT, "gather_nd: indices must be int16, int32 or int64, not float32");
    refuses(spec(NDX_FLOAT32, 2, SHAPE(U, 3)), spec(NDX_INT64, 2, SHAPE(U, 3)), 0,
            NDX_E_INVALID_ARGUMENT,
            "gather_nd: index depth indices.shape[-1] = 3 is larger than rank(params) - "
            "batch_dims = 2 - 0 = 2");
    refuses(spec(NDX_FLOAT32, 2, SHAPE(2, U)), spec(NDX_INT64, 2, SHAPE(3, U)), 1,
            NDX_E_INVALID_ARGUMENT,
            "gather_nd: batch dimension 0 differs: params.shape[0] = 2 but indices.shape[0] = 3 "
            "(the first batch_dims = 1 dimensions must match)");
    refuses(spec(NDX_FLOAT32, 0, NULL), spec(NDX_INT64, U, NULL), 0, NDX_E_INVALID_ARGUMENT,
            "gather_nd: params is a scalar; TensorFlow requires params to be at least a vector");
    refuses(spec(NDX_FLOAT32, 2, SHAPE(U, -5)), spec(NDX_INT64, 2, SHAPE(U, 1)), 0,
            NDX_E_INVALID_ARGUMENT, "gather_nd: params has a negative dimension: shape [-1, -5]");
    refuses(spec(NDX_FLOAT32, 2, SHAPE(0, 3)), spec(NDX_INT64, 2, SHAPE(2, 1)), 0,
            NDX_E_INVALID_ARGUMENT,
            "gather_nd: indices ask for 2 slices but params is empty (shape [0, 3])");
    refuses(spec(NDX_FLOAT32, 2, SHAPE((int64_t)1 << 40, (int64_t)1 << 40)),
            spec(NDX_INT64, 2, SHAPE(U, 1)), 0, NDX_E_OVERFLOW,
            "gather_nd: params of shape [1099511627776, 1099511627776] is too large to address");
    /* the checks whose message needs a dim it does not have stay silent */
    infers(spec(NDX_FLOAT32, 2, SHAPE(U, 3)), spec(NDX_INT64, U, NULL), 5,
           spec(NDX_FLOAT32, U, NULL));
}

/* Random gathers, many of them wrong on purpose (depth, batch dims, dtypes, empty params). */
static void infer_agrees_with_the_op(void **state) {
    (void)state;
    test_rng r = {9090};
    static const ndx_dtype index_dtypes[] = {NDX_INT16, NDX_INT32, NDX_INT64, NDX_FLOAT32};
    int refused = 0, ran = 0;
    for (int round = 0; round < 3000; round++) {
        int prank = (int)rng_below(&r, 5), irank = (int)rng_below(&r, 4);
        int64_t pshape[NDX_MAX_RANK], ishape[NDX_MAX_RANK];
        for (int k = 0; k < prank; k++) pshape[k] = rng_below(&r, 4);
        int batch_dims = (int)rng_range(&r, -1, 2);
        for (int k = 0; k < irank; k++)
            ishape[k] = k < batch_dims && k < prank && rng_below(&r, 4) ? pshape[k]
                                                                        : rng_below(&r, 4);
        if (irank > 0) ishape[irank - 1] = rng_below(&r, prank + 2);
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        ndx_tensor params = test_tensor(dt, dt == NDX_STRING ? 3 : 0, prank, pshape);
        ndx_tensor indices =
            test_tensor(index_dtypes[rng_below(&r, 4)], 0, irank, ishape);
        test_fill_random(&r, &params);
        if (indices.dtype != NDX_FLOAT32) test_fill_indices(&r, &indices, 0, 3);
        ndx_tensor out = {0};
        ndx_error op_err;
        ndx_status op = ndx_gather_nd(&params, &indices, batch_dims, NULL, &out, &op_err);
        test_inference full, partial;
        ndx_spec ps = ndx_spec_of(&params), is = ndx_spec_of(&indices);
        full.status = ndx_gather_nd_infer(&ps, &is, batch_dims, full.specs, &full.err);
        ps = test_partial_spec(&r, &params, 1);
        is = test_partial_spec(&r, &indices, 1);
        partial.status = ndx_gather_nd_infer(&ps, &is, batch_dims, partial.specs, &partial.err);
        assert_infer_agrees(&partial, &full, op, &op_err, 1, &out);
        refused += partial.status != NDX_OK;
        ran += op == NDX_OK;
        ndx_tensor_free(&out);
        test_tensor_free(&params);
        test_tensor_free(&indices);
    }
    /* both kinds of case were exercised */
    assert_true(refused > 100);
    assert_true(ran > 100);
}

/* The plan's scratch is what the run uses; the run allocates nothing; the public op takes from
 * the allocator exactly its output and the plan's scratch. */
static void plan_scratch_is_exact(void **state) {
    (void)state;
    test_rng r = {777};
    ndx_tensor params = test_tensor_v(NDX_FLOAT32, 0, 2, 5000, 16);
    ndx_tensor indices = test_tensor_v(NDX_INT32, 0, 2, 20000, 1);
    test_fill_random(&r, &params);
    test_fill_indices(&r, &indices, 0, 4999);
    ndx_tensor want = {0};
    ndx_error err;
    assert_ok(ndx_gather_nd(&params, &indices, 0, NULL, &want, &err), &err);

    test_allocator a;
    test_allocator_init(&a);
    ndx_options opt = {.num_threads = 2, .allocator = &a.base};
    ndx_call c;
    ndx_tensor out = {0};
    assert_ok(ndx_call_begin(&c, "gather_nd", &opt, &out, &err), &err);
    gather_plan p;
    assert_ok(ndx_gather_nd_plan(&c, &params, &indices, 0, NULL, &p), &err);
    assert_int_equal(a.calls, 0); /* planning allocates nothing */
    void *data = malloc(test_nbytes(&want));
    void *scratch = p.scratch_bytes ? malloc(p.scratch_bytes) : NULL;
    a.refuse = 1;
    ndx_gather_nd_run(&p, data, scratch);
    out = p.want;
    out.data = data;
    assert_tensor_eq(&out, &want);
    assert_int_equal(a.calls, 0);
    free(scratch);
    free(data);

    /* the public op, through the counting allocator */
    a.refuse = 0;
    out = (ndx_tensor){0};
    assert_ok(ndx_gather_nd(&params, &indices, 0, &opt, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    assert_int_equal(a.bytes, test_nbytes(&want) + p.scratch_bytes);
    assert_int_equal(a.live, 1); /* only the output is still held */
    test_allocator_free(&a, out.data);
    /* an allocator that refuses: the op fails cleanly, naming what it could not get */
    a.refuse = 1;
    out = (ndx_tensor){0};
    assert_fails(ndx_gather_nd(&params, &indices, 0, &opt, &out, &err), &err, NDX_E_NO_MEMORY,
                 "gather_nd: cannot allocate");
    assert_null(out.data);
    /* an allocator missing a function is refused before anything else */
    ndx_allocator half = {.allocate = a.base.allocate};
    ndx_options bad = {.allocator = &half};
    assert_fails(ndx_gather_nd(&params, &indices, 0, &bad, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "gather_nd: opt->allocator needs both an allocate and a release function");
    ndx_tensor_free(&want);
    test_tensor_free(&params);
    test_tensor_free(&indices);
}

/* The shape function works on views whose data does not exist yet. */
static void shape_without_data(void **state) {
    (void)state;
    ndx_tensor params = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), NULL);
    ndx_tensor indices = ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 1), NULL);
    ndx_tensor out;
    ndx_error err;
    assert_ok(ndx_gather_nd_shape(&params, &indices, 0, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], 2);
    assert_int_equal(out.shape[1], 3);
    assert_null(out.data);
    /* a negative dim is still refused in a view (-1 means unknown only in specs) */
    params.shape[0] = -1;
    assert_fails(ndx_gather_nd_shape(&params, &indices, 0, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "gather_nd: params has a negative dimension: shape [-1, 3]");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(partial_shapes),
        cmocka_unit_test(partial_shapes_refused),
        cmocka_unit_test(infer_agrees_with_the_op),
        cmocka_unit_test(plan_scratch_is_exact),
        cmocka_unit_test(shape_without_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
