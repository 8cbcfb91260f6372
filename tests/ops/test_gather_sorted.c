/* test_gather_sorted.c — gather_nd's by-source copy (src/ops/gather_nd_by_source.c), called
 * directly. gather_nd only takes that path on CPUs where it pays (Intel), so on any other CI
 * machine the public tests would never run it; here it is compared with the shared naive
 * reference (tests/reference/) on every machine that has streaming stores: many rows, bad rows
 * (zeros), batches, 1 to 3 threads, with exactly the scratch the plan asks for (an overrun is an
 * ASan error), and the cases it declines: an output off a cache line, slices that are not whole
 * lines, a budget with no room. */
#include "ndx_test.h"
#include "reference.h"

#include "gather_nd_plan.h"
#include "slice_copy.h"

/* A plan for params [batches, slices, width] of float32 and int64 indices [batches * per, 1]
 * (batch b's rows index params[b]), writing into `out`. */
static gather_plan make_plan(const ndx_tensor *params, const ndx_tensor *indices, int64_t per,
                             void *out) {
    gather_plan p;
    memset(&p, 0, sizeof p);
    p.params = params->data;
    p.params_bytes = test_nbytes(params);
    p.indices = indices->data;
    p.index_dtype = NDX_INT64;
    p.depth = 1;
    p.rows = indices->shape[0];
    p.rows_per_batch = per;
    p.slice_bytes = (size_t)params->shape[2] * sizeof(float);
    ndx_index_plan_init(&p.index, 1, params->shape + 1);
    p.batch_bytes = (size_t)params->shape[1] * p.slice_bytes;
    p.byte_strides[0] = (int64_t)p.slice_bytes;
    p.out = out;
    return p;
}

/* What the copy must produce: row r is params[r / per][indices[r]], or zeros when out of range,
 * which is the shared reference's gather_nd of params by indices seen as [batches, per, 1] with
 * batch_dims 1, under the policy that zeroes bad rows. */
static void reference_batched_rows(const ndx_tensor *params, const ndx_tensor *indices, int64_t per,
                             unsigned char *want, size_t bytes) {
    ndx_tensor rows = *indices;
    rows.rank = 3;
    rows.shape[0] = params->shape[0];
    rows.shape[1] = per;
    rows.shape[2] = 1;
    assert_int_equal(rows.shape[0] * per, indices->shape[0]);
    ndx_options zero_bad = {.bad_indices = NDX_BAD_INDICES_IGNORE};
    ndx_tensor ref = {0};
    char why[REF_WHY];
    assert_int_equal(ref_gather_nd(params, &rows, 1, &zero_bad, &ref, why), REF_OK);
    assert_int_equal(test_nbytes(&ref), bytes);
    memcpy(want, ref.data, bytes);
    ref_tensor_free(&ref);
}

/* Runs the sorted copy with 1, 2 and 3 threads into a 64-byte aligned output pre-filled with
 * 0xAB, and compares every byte with the shared reference. */
static void check_sorted(const ndx_tensor *params, const ndx_tensor *indices, int64_t per) {
    size_t bytes = (size_t)indices->shape[0] * (size_t)params->shape[2] * sizeof(float);
    unsigned char *want = malloc(bytes);
    unsigned char *got = aligned_alloc(64, (bytes + 63) / 64 * 64);
    assert_non_null(want);
    assert_non_null(got);
    reference_batched_rows(params, indices, per, want, bytes);
    for (int t = 1; t <= TEST_THREADS; t++) {
        memset(got, 0xAB, bytes);
        gather_plan p = make_plan(params, indices, per, got);
        if (!NDX_HAVE_STREAMING) {
            assert_int_equal(gather_nd_sorted_applies(&p, 1), 0);
            break;
        }
        assert_int_equal(gather_nd_sorted_applies(&p, 1), 1);
        size_t scratch_bytes = gather_nd_sorted_scratch(&p, t, 256);
        void *scratch = malloc(scratch_bytes);
        assert_non_null(scratch);
        gather_nd_copy_sorted(&p, t, 256, scratch);
        free(scratch);
        assert_memory_equal(got, want, bytes);
    }
    free(got);
    free(want);
}

static void many_rows_with_bad_ones(void **state) {
    (void)state;
    test_rng r = {4242};
    /* 64-byte slices from a 16 MiB params into a 19 MB output */
    const int64_t slices = 262144, rows = 300000;
    ndx_tensor params = test_tensor(NDX_FLOAT32, 0, 3, SHAPE(1, slices, 16));
    test_fill_random(&r, &params);
    ndx_tensor indices = test_tensor(NDX_INT64, 0, 2, SHAPE(rows, 1));
    test_fill_indices(&r, &indices, 0, slices - 1);
    check_sorted(&params, &indices, rows);
    /* out-of-range rows (possible under NDX_BAD_INDICES_IGNORE) become zeros */
    for (int64_t i = 5; i < rows; i += 1013) test_set_index(&indices, i, i % 2 ? -7 : slices);
    check_sorted(&params, &indices, rows);
    /* every row the same slice: one region holds them all, split among the threads */
    for (int64_t i = 0; i < rows; i++) test_set_index(&indices, i, 77);
    check_sorted(&params, &indices, rows);
    test_tensor_free(&indices);
    test_tensor_free(&params);
}

static void batches_of_wide_slices(void **state) {
    (void)state;
    test_rng r = {5151};
    /* 4 batches of 10000 slices of 256 bytes; each batch's rows index its own params block */
    ndx_tensor params = test_tensor(NDX_FLOAT32, 0, 3, SHAPE(4, 10000, 64));
    test_fill_random(&r, &params);
    ndx_tensor indices = test_tensor(NDX_INT64, 0, 2, SHAPE(4 * 9000, 1));
    test_fill_indices(&r, &indices, 0, 9999);
    check_sorted(&params, &indices, 9000);
    test_tensor_free(&indices);
    test_tensor_free(&params);
}

static void declines_what_it_cannot_do(void **state) {
    (void)state;
    test_rng r = {6161};
    ndx_tensor params = test_tensor(NDX_FLOAT32, 0, 3, SHAPE(1, 4096, 16));
    test_fill_random(&r, &params);
    ndx_tensor indices = test_tensor(NDX_INT64, 0, 2, SHAPE(5000, 1));
    test_fill_indices(&r, &indices, 0, 4095);
    size_t bytes = 5000 * 64;
    unsigned char *out = aligned_alloc(64, bytes + 64);
    assert_non_null(out);
    unsigned char *untouched = malloc(bytes + 64);
    assert_non_null(untouched);
    memset(out, 0xCD, bytes + 64);
    memset(untouched, 0xCD, bytes + 64);
    /* a budget with no room for the scratch: the plan keeps the in-order copy */
    gather_plan p = make_plan(&params, &indices, 5000, out);
    p.threads = 2;
    gather_nd_choose_path(&p, 1, 1);
    assert_int_equal(p.by_source, 0);
    assert_int_equal(p.scratch_bytes, 0);
    /* with room, it sorts exactly where sorting pays and applies, and then asks for scratch */
    gather_nd_choose_path(&p, 1, SIZE_MAX);
    assert_int_equal(p.by_source, gather_nd_by_source_pays(&p) && p.streaming &&
                                      gather_nd_sorted_applies(&p, 1));
    assert_int_equal(p.scratch_bytes > 0, p.by_source);
    /* an output that is not 64-byte aligned */
    p = make_plan(&params, &indices, 5000, out + 16);
    assert_int_equal(gather_nd_sorted_applies(&p, (uintptr_t)(out + 16) % 64 == 0), 0);
    /* slices that are not whole cache lines: params [1, 4096, 8] seen as 32-byte slices */
    params.shape[1] = 8192;
    params.shape[2] = 8;
    p = make_plan(&params, &indices, 5000, out);
    assert_int_equal(gather_nd_sorted_applies(&p, 1), 0);
    assert_memory_equal(out, untouched, bytes + 64);

    free(untouched);
    free(out);
    test_tensor_free(&indices);
    test_tensor_free(&params);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_rows_with_bad_ones),
        cmocka_unit_test(batches_of_wide_slices),
        cmocka_unit_test(declines_what_it_cannot_do),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
