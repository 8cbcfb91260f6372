/* test_contract_stitch.c — dynamic_stitch and dynamic_partition as infer, plan and run: infer on
 * partial shapes decides what it can and waits for what it cannot, agrees with the ops on random
 * inputs, and the plans' scratch is exactly what their runs use. */
#include "contract.h"

#include "partition_plan.h"
#include "stitch_plan.h"

#define U NDX_UNKNOWN

static void stitch_partial_shapes(void **state) {
    (void)state;
    ndx_spec ix[2], d[2], out;
    ndx_error err;
    /* [?] + C, with C taken from whichever part knows each dim */
    ix[0] = spec(NDX_INT32, 1, SHAPE(U));
    ix[1] = spec(NDX_INT32, 2, SHAPE(2, U));
    d[0] = spec(NDX_FLOAT32, 3, SHAPE(U, U, 4));
    d[1] = spec(NDX_FLOAT32, 4, SHAPE(2, U, 3, U));
    assert_ok(ndx_dynamic_stitch_infer(2, ix, d, &out, &err), &err);
    assert_spec_dims(&out, "[?, 3, 4]");
    /* unknown ranks everywhere: the output rank waits */
    ix[0] = spec(NDX_INT64, U, NULL);
    d[0] = spec(NDX_FLOAT32, U, NULL);
    assert_ok(ndx_dynamic_stitch_infer(1, ix, d, &out, &err), &err);
    assert_int_equal(out.rank, U);
    /* refused with unknowns about: a known prefix dim that differs, a trailing shape that
     * differs, a dtype that differs, a float index */
    ix[0] = spec(NDX_INT32, 2, SHAPE(U, 3));
    d[0] = spec(NDX_FLOAT32, 2, SHAPE(U, 4));
    assert_fails(ndx_dynamic_stitch_infer(1, ix, d, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dynamic_stitch: data[0].shape = [?, 4] does not start with indices[0].shape = "
                 "[?, 3]");
    ix[0] = spec(NDX_INT32, 1, SHAPE(U));
    ix[1] = spec(NDX_INT32, 1, SHAPE(U));
    d[0] = spec(NDX_FLOAT32, 2, SHAPE(U, 2));
    d[1] = spec(NDX_FLOAT32, 2, SHAPE(U, 3));
    assert_fails(ndx_dynamic_stitch_infer(2, ix, d, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dynamic_stitch: data[1] has trailing shape [3] after its indices' dims, but "
                 "data[0] has [2]; data[m].shape must be indices[m].shape + the same trailing "
                 "shape");
    d[1] = spec(NDX_INT8, U, NULL);
    assert_fails(ndx_dynamic_stitch_infer(2, ix, d, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dynamic_stitch: data[1] is int8 but data[0] is float32; all data must share "
                 "one dtype");
    ix[1] = spec(NDX_FLOAT64, U, NULL);
    assert_fails(ndx_dynamic_stitch_infer(2, ix, d, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dynamic_stitch: indices[1] must be int16, int32 or int64, not float64");
    assert_fails(ndx_dynamic_stitch_infer(0, ix, d, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dynamic_stitch: n = 0; at least one input is needed");
    /* an unknown data rank cannot be compared with its indices: silent */
    ix[0] = spec(NDX_INT32, 2, SHAPE(2, 2));
    d[0] = spec(NDX_FLOAT32, U, NULL);
    assert_ok(ndx_dynamic_stitch_infer(1, ix, d, &out, &err), &err);
    assert_int_equal(out.rank, U);
}

static void partition_partial_shapes(void **state) {
    (void)state;
    ndx_spec outs[3];
    ndx_error err;
    ndx_spec data = spec(NDX_FLOAT64, 3, SHAPE(U, 5, 7)), parts = spec(NDX_INT32, 2, SHAPE(4, U));
    assert_ok(ndx_dynamic_partition_infer(&data, &parts, 3, outs, &err), &err);
    for (int q = 0; q < 3; q++) assert_spec_dims(&outs[q], "[?, 7]");
    parts = spec(NDX_INT32, U, NULL);
    assert_ok(ndx_dynamic_partition_infer(&data, &parts, 3, outs, &err), &err);
    assert_int_equal(outs[2].rank, U);
    parts = spec(NDX_INT32, 2, SHAPE(U, 6));
    assert_fails(ndx_dynamic_partition_infer(&data, &parts, 3, outs, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "dynamic_partition: data.shape = [?, 5, 7] must start with partitions.shape = "
                 "[?, 6]");
    assert_fails(ndx_dynamic_partition_infer(&data, &parts, 0, outs, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "dynamic_partition: num_partitions = 0; it must be at least 1");
    parts = spec(NDX_UINT8, 1, SHAPE(U));
    assert_fails(ndx_dynamic_partition_infer(&data, &parts, 2, outs, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "dynamic_partition: partitions must be int16, int32 or int64, not uint8");
}

/* Random stitches (2 parts) and partitions, some of them wrong on purpose. */
static void infer_agrees_with_the_ops(void **state) {
    (void)state;
    test_rng r = {4711};
    static const ndx_dtype index_dtypes[] = {NDX_INT16, NDX_INT32, NDX_INT64, NDX_FLOAT32};
    int refused = 0, ran = 0;
    for (int round = 0; round < 2000; round++) {
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        int tail = (int)rng_below(&r, 3);
        int64_t c[2] = {rng_below(&r, 3), rng_below(&r, 3)};
        ndx_tensor ix[2], d[2];
        for (int m = 0; m < 2; m++) {
            int irank = (int)rng_below(&r, 3);
            int64_t ishape[4], dshape[8];
            for (int k = 0; k < irank; k++) ishape[k] = rng_below(&r, 3);
            for (int k = 0; k < irank; k++) dshape[k] = rng_below(&r, 8) ? ishape[k] : 5;
            int t = rng_below(&r, 8) ? tail : tail + 1;
            for (int k = 0; k < t; k++) dshape[irank + k] = rng_below(&r, 8) ? c[k % 2] : 4;
            ix[m] = test_tensor(index_dtypes[rng_below(&r, rng_below(&r, 10) ? 3 : 4)], 0, irank,
                                ishape);
            if (ix[m].dtype != NDX_FLOAT32) test_fill_indices(&r, &ix[m], -1, 6);
            ndx_dtype ddt = rng_below(&r, 10) ? dt : NDX_INT8;
            d[m] = test_tensor(ddt, ddt == NDX_STRING ? 2 : 0, irank + t, dshape);
            test_fill_random(&r, &d[m]);
        }
        ndx_tensor out = {0};
        ndx_error op_err;
        ndx_status op = ndx_dynamic_stitch(2, ix, d, NULL, &out, &op_err);
        test_inference full, partial;
        ndx_spec is[2] = {ndx_spec_of(&ix[0]), ndx_spec_of(&ix[1])};
        ndx_spec ds[2] = {ndx_spec_of(&d[0]), ndx_spec_of(&d[1])};
        full.status = ndx_dynamic_stitch_infer(2, is, ds, full.specs, &full.err);
        for (int m = 0; m < 2; m++) {
            is[m] = test_partial_spec(&r, &ix[m], 1);
            ds[m] = test_partial_spec(&r, &d[m], 1);
        }
        partial.status = ndx_dynamic_stitch_infer(2, is, ds, partial.specs, &partial.err);
        assert_infer_agrees(&partial, &full, op, &op_err, 1, &out);
        refused += full.status != NDX_OK;
        ran += op == NDX_OK;
        ndx_tensor_free(&out);

        /* dynamic_partition of d[0] by ix[0] (ids from -1 to 6 over 3 partitions) */
        ndx_tensor outs[3];
        memset(outs, 0, sizeof outs);
        op = ndx_dynamic_partition(&d[0], &ix[0], 3, NULL, outs, &op_err);
        ndx_spec dsp = ndx_spec_of(&d[0]), psp = ndx_spec_of(&ix[0]);
        full.status = ndx_dynamic_partition_infer(&dsp, &psp, 3, full.specs, &full.err);
        dsp = test_partial_spec(&r, &d[0], 1);
        psp = test_partial_spec(&r, &ix[0], 1);
        partial.status = ndx_dynamic_partition_infer(&dsp, &psp, 3, partial.specs, &partial.err);
        assert_infer_agrees(&partial, &full, op, &op_err, 3, outs);
        refused += full.status != NDX_OK;
        ran += op == NDX_OK;
        for (int q = 0; q < 3; q++) ndx_tensor_free(&outs[q]);
        for (int m = 0; m < 2; m++) {
            test_tensor_free(&ix[m]);
            test_tensor_free(&d[m]);
        }
    }
    assert_true(refused > 100);
    assert_true(ran > 100);
}

/* Unsorted and sorted stitches (winner table, merge cursors) and a partition: each plan's scratch
 * is what its run uses, taken from exactly that many bytes; the public op asks its allocator for
 * exactly outputs + scratch (scratch too large for the call's own space). */
static void plan_scratch_is_exact(void **state) {
    (void)state;
    test_rng r = {31337};
    ndx_error err;
    for (int sorted = 0; sorted < 2; sorted++) {
        ndx_tensor ix[2] = {test_tensor_v(NDX_INT32, 0, 1, 30000),
                            test_tensor_v(NDX_INT64, 0, 1, 30000)};
        ndx_tensor d[2] = {test_tensor_v(NDX_FLOAT32, 0, 2, 30000, 3),
                           test_tensor_v(NDX_FLOAT32, 0, 2, 30000, 3)};
        for (int m = 0; m < 2; m++) {
            test_fill_random(&r, &d[m]);
            for (int64_t i = 0; i < 30000; i++)
                test_set_index(&ix[m], i, sorted ? 2 * i + m : rng_below(&r, 50000));
        }
        ndx_tensor want = {0};
        assert_ok(ndx_dynamic_stitch(2, ix, d, NULL, &want, &err), &err);
        test_allocator a;
        test_allocator_init(&a);
        ndx_options opt = {.num_threads = 2, .allocator = &a.base};
        ndx_call c;
        assert_ok(ndx_call_begin(&c, "dynamic_stitch", &opt, &want, &err), &err);
        stitch_plan p;
        assert_ok(ndx_stitch_plan(&c, 2, ix, d, &p), &err);
        assert_int_equal(p.merge, sorted);
        assert_true(p.scratch_bytes > 0);
        void *data = malloc(test_nbytes(&want));
        void *scratch = malloc(p.scratch_bytes);
        a.refuse = 1;
        ndx_stitch_run(&p, data, scratch);
        ndx_tensor got = p.out;
        got.data = data;
        assert_tensor_eq(&got, &want);
        assert_int_equal(a.calls, 0);
        free(scratch);
        free(data);
        a.refuse = 0;
        got = (ndx_tensor){0};
        assert_ok(ndx_dynamic_stitch(2, ix, d, &opt, &got, &err), &err);
        /* Scratch that fits in the call's own space (ndx_call_scratch) never reaches it. */
        assert_int_equal(a.bytes, test_nbytes(&want) +
                                      (p.scratch_bytes > NDX_CALL_LOCAL ? p.scratch_bytes : 0));
        assert_int_equal(a.live, 1);
        test_allocator_free(&a, got.data);
        ndx_tensor_free(&want);
        for (int m = 0; m < 2; m++) {
            test_tensor_free(&ix[m]);
            test_tensor_free(&d[m]);
        }
    }

    ndx_tensor data = test_tensor_v(NDX_INT16, 0, 2, 40000, 5);
    ndx_tensor ids = test_tensor_v(NDX_INT32, 0, 1, 40000);
    test_fill_random(&r, &data);
    test_fill_indices(&r, &ids, 0, 3);
    ndx_tensor want[4];
    memset(want, 0, sizeof want);
    assert_ok(ndx_dynamic_partition(&data, &ids, 4, NULL, want, &err), &err);
    ndx_call c;
    ndx_options two = {.num_threads = 2};
    assert_ok(ndx_call_begin_outs(&c, "dynamic_partition", &two, &err), &err);
    part_plan p;
    assert_ok(ndx_partition_plan(&c, &data, &ids, 4, 1, &p), &err);
    assert_true(p.scratch_bytes > 0);
    void *scratch = malloc(p.scratch_bytes);
    assert_ok(ndx_partition_count(&p, scratch, 0, &err), &err);
    ndx_tensor got[4];
    size_t total = 0;
    for (int q = 0; q < 4; q++) {
        ndx_partition_describe(&p, scratch, q, &got[q]);
        got[q].data = malloc(test_nbytes(&want[q]) + 1);
        total += test_nbytes(&want[q]);
    }
    ndx_partition_run(&p, scratch, got);
    for (int q = 0; q < 4; q++) {
        assert_tensor_eq(&got[q], &want[q]);
        free(got[q].data);
    }
    free(scratch);
    /* the public op: outputs, the plan's scratch and one pointer per output to undo its own
     * allocations on failure */
    test_allocator a;
    test_allocator_init(&a);
    ndx_options opt = {.num_threads = 2, .allocator = &a.base};
    memset(got, 0, sizeof got);
    assert_ok(ndx_dynamic_partition(&data, &ids, 4, &opt, got, &err), &err);
    assert_int_equal(a.bytes, total + p.scratch_bytes + 4 * sizeof(void *));
    for (int q = 0; q < 4; q++) {
        assert_tensor_eq(&got[q], &want[q]);
        test_allocator_free(&a, got[q].data);
        ndx_tensor_free(&want[q]);
    }
    assert_int_equal(a.live, 0);
    test_tensor_free(&data);
    test_tensor_free(&ids);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stitch_partial_shapes),
        cmocka_unit_test(partition_partial_shapes),
        cmocka_unit_test(infer_agrees_with_the_ops),
        cmocka_unit_test(plan_scratch_is_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
