/* test_boolean_mask.c — boolean_mask: TensorFlow's documented examples, a randomized comparison
 * with a naive loop written here (every dtype, mask ranks 1..3 at every axis, empty dims, all
 * false and all true), every error (nothing written), the same bytes at 1, 2 and 3 threads,
 * max_memory, the shape function and infer. */
#include "contract.h"
#include "ndx_test.h"


static ndx_tensor make_mask(int rank, const int64_t *shape, const char *bits) {
    ndx_tensor m = test_tensor(NDX_BOOL, 0, rank, shape);
    for (int64_t i = 0; i < test_count(&m); i++) ((uint8_t *)m.data)[i] = bits[i] == '1';
    return m;
}

/* The reference: tensor as [outer, M, inner]; every true mask position in order, its inner
 * block for every outer index. */
static ndx_tensor reference(const ndx_tensor *t, const ndx_tensor *mask, int axis) {
    int k = mask->rank;
    int64_t outer = 1, inner = 1, m = test_count(mask), trues = 0;
    for (int d = 0; d < axis; d++) outer *= t->shape[d];
    for (int d = axis + k; d < t->rank; d++) inner *= t->shape[d];
    for (int64_t i = 0; i < m; i++) trues += ((uint8_t *)mask->data)[i] != 0;
    int64_t shape[NDX_MAX_RANK];
    int r = 0;
    for (int d = 0; d < axis; d++) shape[r++] = t->shape[d];
    shape[r++] = trues;
    for (int d = axis + k; d < t->rank; d++) shape[r++] = t->shape[d];
    ndx_tensor out = test_tensor(t->dtype, t->dtype == NDX_STRING ? t->itemsize : 0, r, shape);
    size_t row = (size_t)inner * t->itemsize;
    unsigned char *dst = out.data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < m; i++)
            if (((uint8_t *)mask->data)[i]) {
                memcpy(dst, (unsigned char *)t->data + ((size_t)(o * m + i)) * row, row);
                dst += row;
            }
    return out;
}

static void test_docstring_examples(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor t = test_tensor_from(NDX_INT32, 0, 1, SHAPE(4), (int32_t[]){0, 1, 2, 3});
    ndx_tensor m = make_mask(1, SHAPE(4), "1010");
    ndx_tensor want = test_tensor_from(NDX_INT32, 0, 1, SHAPE(2), (int32_t[]){0, 2});
    ndx_tensor out = {0};
    assert_ok(ndx_boolean_mask(&t, &m, 0, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&m), test_tensor_free(&t);

    t = test_tensor_from(NDX_INT32, 0, 2, SHAPE(3, 2), (int32_t[]){1, 2, 3, 4, 5, 6});
    m = make_mask(1, SHAPE(3), "101");
    want = test_tensor_from(NDX_INT32, 0, 2, SHAPE(2, 2), (int32_t[]){1, 2, 5, 6});
    assert_ok(ndx_boolean_mask(&t, &m, 0, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&m);
    /* axis 1 and a 2-D mask over both dims */
    m = make_mask(1, SHAPE(2), "01");
    want = test_tensor_from(NDX_INT32, 0, 2, SHAPE(3, 1), (int32_t[]){2, 4, 6});
    assert_ok(ndx_boolean_mask(&t, &m, 1, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&m);
    m = make_mask(2, SHAPE(3, 2), "100111");
    want = test_tensor_from(NDX_INT32, 0, 1, SHAPE(4), (int32_t[]){1, 4, 5, 6});
    assert_ok(ndx_boolean_mask(&t, &m, 0, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&m), test_tensor_free(&t);
}

static void test_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor t = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 3);
    memset(t.data, 0, test_nbytes(&t));
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 1, 1);
    test_guard g = test_guard_fill(&out, 0x19);
    ndx_tensor s = make_mask(0, NULL, "1");
    assert_fails(ndx_boolean_mask(&t, &s, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "mask cannot be scalar.");
    ndx_tensor m = make_mask(1, SHAPE(3), "100");
    assert_fails(ndx_boolean_mask(&t, &m, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "mask dims must match tensor dims: mask.shape = [3] but tensor.shape[0:1] = [2]");
    assert_fails(ndx_boolean_mask(&t, &m, 2, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "mask dims must match tensor dims");
    assert_fails(ndx_boolean_mask(&t, &m, -1, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "negative");
    ndx_tensor m23 = make_mask(2, SHAPE(2, 3), "100100");
    assert_fails(ndx_boolean_mask(&t, &m23, 1, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "mask has rank 2 but tensor has rank 2, fewer than axis + rank(mask) = 3");
    ndx_tensor im = test_tensor_v(NDX_INT32, 0, 1, 2);
    memset(im.data, 0, 8);
    assert_fails(ndx_boolean_mask(&t, &im, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "mask must be bool");
    /* a caller's out of the wrong shape (2 trues of 3 columns make [2, 1]... here [1]) */
    assert_fails(ndx_boolean_mask(&t, &m23, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 NULL);
    assert_untouched(&g, &out);
    /* a caller's out too small for the result, with tensor's bytes right after it: refused as
     * a wrong view, not as memory that overlaps tensor (the view never reaches it) */
    float joint[4] = {9, 1, 2, 3};
    ndx_tensor after = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), joint + 1);
    ndx_tensor m3 = make_mask(1, SHAPE(3), "111");
    ndx_tensor short_out = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(1), joint);
    assert_int_not_equal(ndx_boolean_mask(&after, &m3, 0, NULL, &short_out, &err), NDX_OK);
    assert_non_null(strstr(err.message, "boolean_mask: out"));
    assert_null(strstr(err.message, "overlaps"));
    assert_true(joint[0] == 9 && joint[1] == 1 && joint[2] == 2 && joint[3] == 3);
    test_tensor_free(&m3);
    /* max_memory: 2 positions of 8 bytes and the 8-byte output */
    ndx_options o = {.max_memory = 16 + 8 - 1};
    ndx_tensor mine = {0};
    assert_fails(ndx_boolean_mask(&t, &m23, 0, &o, &mine, &err), &err, NDX_E_MEMORY_BUDGET, NULL);
    assert_true(mine.data == NULL);
    o.max_memory = 16 + 8;
    assert_ok(ndx_boolean_mask(&t, &m23, 0, &o, &mine, &err), &err);
    assert_int_equal(mine.shape[0], 2);
    ndx_tensor_free(&mine);
    ndx_tensor v;
    assert_ok(ndx_boolean_mask_shape(&t, &m23, 0, &v, &err), &err);
    assert_int_equal(v.rank, 1);
    assert_int_equal(v.shape[0], 2);
    assert_true(v.data == NULL);
    test_tensor_free(&im), test_tensor_free(&m23), test_tensor_free(&m), test_tensor_free(&s);
    test_tensor_free(&out), test_tensor_free(&t);
}

static void test_random(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {17};
    for (int d = 0; d < test_all_dtypes_count; d++) {
        ndx_dtype dt = test_all_dtypes[d];
        for (int it = 0; it < 40; it++) {
            int rank = (int)rng_range(&r, 1, 4);
            int k = (int)rng_range(&r, 1, rank);
            int axis = (int)rng_range(&r, 0, rank - k);
            int64_t shape[NDX_MAX_RANK];
            for (int q = 0; q < rank; q++)
                shape[q] = rng_range(&r, rng_below(&r, 10) ? 1 : 0, it % 10 == 0 ? 30 : 5);
            ndx_tensor t = test_tensor(dt, test_random_width(&r, dt), rank, shape);
            test_fill_random(&r, &t);
            ndx_tensor m = test_tensor(NDX_BOOL, 0, k, shape + axis);
            int mode = (int)rng_below(&r, 4); /* 0 all false, 1 all true, else random */
            for (int64_t i = 0; i < test_count(&m); i++)
                ((uint8_t *)m.data)[i] = mode == 0 ? 0 : mode == 1 ? 1 : (uint8_t)rng_below(&r, 2);
            ndx_tensor want = reference(&t, &m, axis);
            for (int th = 1; th <= 3; th++) {
                ndx_options o = test_options(th, NDX_BAD_INDICES_ERROR);
                ndx_tensor out = {0};
                assert_ok(ndx_boolean_mask(&t, &m, axis, &o, &out, &err), &err);
                assert_tensor_eq(&out, &want);
                ndx_tensor_free(&out);
            }
            test_inference full = {0}, part = {0};
            ndx_spec ts = ndx_spec_of(&t), ms = ndx_spec_of(&m);
            full.status = ndx_boolean_mask_infer(&ts, &ms, axis, &full.specs[0], &full.err);
            ndx_spec pt = test_partial_spec(&r, &t, 1), pm = test_partial_spec(&r, &m, 1);
            part.status = ndx_boolean_mask_infer(&pt, &pm, axis, &part.specs[0], &part.err);
            assert_infer_agrees(&part, &full, NDX_OK, &err, 1, &want);
            test_tensor_free(&want), test_tensor_free(&m), test_tensor_free(&t);
        }
    }
}

static void test_infer_partial(void **state) {
    (void)state;
    ndx_error err;
    ndx_spec t = spec(NDX_FLOAT64, 4, SHAPE(2, NDX_UNKNOWN, 4, 5));
    ndx_spec m = spec(NDX_BOOL, 2, SHAPE(3, NDX_UNKNOWN)), o;
    assert_ok(ndx_boolean_mask_infer(&t, &m, 1, &o, &err), &err);
    assert_spec_dims(&o, "[2, ?, 5]");
    assert_fails(ndx_boolean_mask_infer(&t, &m, 3, &o, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "mask dims must match tensor dims");
    ndx_spec u = spec(NDX_BOOL, NDX_UNKNOWN, NULL);
    assert_ok(ndx_boolean_mask_infer(&t, &u, 0, &o, &err), &err);
    assert_int_equal(o.rank, NDX_UNKNOWN);
}

/* Scratch and output through the caller's allocator: only the output is held afterwards. */
static void test_allocator_contract(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor t = test_tensor_v(NDX_INT64, 0, 2, 3000, 3);
    memset(t.data, 7, test_nbytes(&t));
    ndx_tensor m = test_tensor_v(NDX_BOOL, 0, 1, 3000);
    for (int i = 0; i < 3000; i++) ((uint8_t *)m.data)[i] = (uint8_t)(i % 5 != 0);
    test_allocator a;
    test_allocator_init(&a);
    ndx_options o = {.allocator = &a.base};
    ndx_tensor out = {0};
    assert_ok(ndx_boolean_mask(&t, &m, 0, &o, &out, &err), &err);
    assert_int_equal(out.shape[0], 2400);
    assert_int_equal(a.live, 1);
    test_allocator_free(&a, out.data);
    a.refuse = 1;
    out = (ndx_tensor){0};
    assert_fails(ndx_boolean_mask(&t, &m, 0, &o, &out, &err), &err, NDX_E_NO_MEMORY, NULL);
    assert_true(out.data == NULL);
    assert_int_equal(a.live, 0);
    test_tensor_free(&m), test_tensor_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_contract),
        cmocka_unit_test(test_docstring_examples),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_infer_partial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
