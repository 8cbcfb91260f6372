/* test_one_hot.c — one_hot: TensorFlow's documented examples, a randomized comparison with a
 * naive loop written here (every output dtype, every index dtype, every axis, empty and scalar
 * indices, depth 0), strings of two widths, every error (nothing written), the same bytes at 1,
 * 2 and 3 threads, max_memory, and infer on partial specs. */
#include "contract.h"
#include "ndx_test.h"


static const ndx_dtype id_dtypes[] = {NDX_UINT8, NDX_INT8, NDX_INT16, NDX_INT32, NDX_INT64};

static int64_t get_id(const ndx_tensor *t, int64_t i) {
    switch (t->dtype) {
    case NDX_UINT8: return ((uint8_t *)t->data)[i];
    case NDX_INT8: return ((int8_t *)t->data)[i];
    default: return test_get_index(t, i);
    }
}

static ndx_tensor make_ids(ndx_dtype dt, int rank, const int64_t *shape, const int64_t *values) {
    ndx_tensor t = test_tensor(dt, 0, rank, shape);
    for (int64_t i = 0; i < test_count(&t); i++) {
        if (dt == NDX_UINT8) ((uint8_t *)t.data)[i] = (uint8_t)values[i];
        else if (dt == NDX_INT8) ((int8_t *)t.data)[i] = (int8_t)values[i];
        else test_set_index(&t, i, values[i]);
    }
    return t;
}

static ndx_tensor f32_scalar(float v) { return test_tensor_from(NDX_FLOAT32, 0, 0, NULL, &v); }

/* The reference: the output's every element from its coordinates. */
static void reference(const ndx_tensor *ids, int64_t depth, const ndx_tensor *on,
                      const ndx_tensor *off, int axis, ndx_tensor *out) {
    int a = axis == -1 ? ids->rank : axis;
    size_t w = out->itemsize;
    for (int64_t f = 0; f < test_count(out); f++) {
        int64_t pos[NDX_MAX_RANK], rest = f;
        for (int k = out->rank - 1; k >= 0; k--) {
            pos[k] = rest % out->shape[k];
            rest /= out->shape[k];
        }
        int64_t flat = 0;
        for (int k = 0; k < out->rank; k++)
            if (k != a) flat = flat * out->shape[k] + pos[k];
        const ndx_tensor *v = get_id(ids, flat) == pos[a] ? on : off;
        unsigned char *dst = (unsigned char *)out->data + (size_t)f * w;
        memset(dst, 0, w);
        memcpy(dst, v->data, v->itemsize);
    }
    (void)depth;
}

static ndx_tensor result_view(const ndx_tensor *ids, int64_t depth, size_t width, ndx_dtype dt,
                              int axis) {
    int a = axis == -1 ? ids->rank : axis;
    int64_t shape[NDX_MAX_RANK];
    for (int k = 0, n = 0; k <= ids->rank; k++) shape[k] = k == a ? depth : ids->shape[n++];
    return test_tensor(dt, dt == NDX_STRING ? width : 0, ids->rank + 1, shape);
}

static void test_docstring_examples(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor one = f32_scalar(1.0f), zero = f32_scalar(0.0f), five = f32_scalar(5.0f);
    ndx_tensor out = {0};
    /* tf.one_hot([0, 1, 2], 3) */
    ndx_tensor ids = make_ids(NDX_INT32, 1, SHAPE(3), SHAPE(0, 1, 2));
    ndx_tensor want = test_tensor_from(NDX_FLOAT32, 0, 2, SHAPE(3, 3),
                                       (float[]){1, 0, 0, 0, 1, 0, 0, 0, 1});
    assert_ok(ndx_one_hot(&ids, 3, &one, &zero, -1, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&ids);
    /* [0, 2, -1, 1], on 5, axis -1, then axis 0 */
    ids = make_ids(NDX_INT64, 1, SHAPE(4), SHAPE(0, 2, -1, 1));
    want = test_tensor_from(NDX_FLOAT32, 0, 2, SHAPE(4, 3),
                            (float[]){5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 5, 0});
    assert_ok(ndx_one_hot(&ids, 3, &five, &zero, -1, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want);
    want = test_tensor_from(NDX_FLOAT32, 0, 2, SHAPE(3, 4),
                            (float[]){5, 0, 0, 0, 0, 0, 0, 5, 0, 5, 0, 0});
    assert_ok(ndx_one_hot(&ids, 3, &five, &zero, 0, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&ids);
    /* [[0, 2], [1, -1]] -> [2, 2, 3] */
    ids = make_ids(NDX_INT8, 2, SHAPE(2, 2), SHAPE(0, 2, 1, -1));
    want = test_tensor_from(NDX_FLOAT32, 0, 3, SHAPE(2, 2, 3),
                            (float[]){1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0});
    assert_ok(ndx_one_hot(&ids, 3, &one, &zero, -1, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&ids);
    /* strings of two widths (TensorFlow's testStringOneHot-like case): on "1", off "zero" */
    ids = make_ids(NDX_UINT8, 1, SHAPE(2), SHAPE(1, 200));
    ndx_tensor on_s = test_strings(1, 0, NULL, (const char *const[]){"1"});
    ndx_tensor off_s = test_strings(4, 0, NULL, (const char *const[]){"zero"});
    want = test_strings(4, 2, SHAPE(2, 2), (const char *const[]){"zero", "1", "zero", "zero"});
    assert_ok(ndx_one_hot(&ids, 2, &on_s, &off_s, -1, NULL, &out, &err), &err);
    assert_tensor_eq(&out, &want);
    ndx_tensor_free(&out), test_tensor_free(&want), test_tensor_free(&ids);
    test_tensor_free(&on_s), test_tensor_free(&off_s);
    test_tensor_free(&one), test_tensor_free(&zero), test_tensor_free(&five);
}

static void test_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor one = f32_scalar(1.0f), zero = f32_scalar(0.0f);
    ndx_tensor ids = make_ids(NDX_INT32, 2, SHAPE(2, 2), SHAPE(0, 1, 1, 0));
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 3, 2, 2, 3);
    test_guard g = test_guard_fill(&out, 0x42);
    assert_fails(ndx_one_hot(&ids, -1, &one, &zero, -1, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "depth must be non-negative, got: -1");
    assert_fails(ndx_one_hot(&ids, 3, &one, &zero, 3, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "Expected axis to be -1 or between [0, 3).  But received: 3");
    assert_fails(ndx_one_hot(&ids, 3, &one, &zero, -2, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "But received: -2");
    ndx_tensor vec = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    memset(vec.data, 0, 8);
    assert_fails(ndx_one_hot(&ids, 3, &vec, &zero, -1, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "on_value must be a scalar, but got: [2]");
    assert_fails(ndx_one_hot(&ids, 3, &one, &vec, -1, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "off_value must be a scalar");
    int32_t iz = 0;
    ndx_tensor izero = test_tensor_from(NDX_INT32, 0, 0, NULL, &iz);
    assert_fails(ndx_one_hot(&ids, 3, &one, &izero, -1, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "same dtype");
    ndx_tensor fids = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    assert_fails(ndx_one_hot(&fids, 3, &one, &zero, -1, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "indices must be uint8, int8, int16, int32 or int64");
    ndx_tensor wrong = test_tensor_v(NDX_FLOAT32, 0, 3, 2, 2, 4);
    assert_fails(ndx_one_hot(&ids, 3, &one, &zero, -1, NULL, &wrong, &err), &err,
                 NDX_E_INVALID_ARGUMENT, NULL);
    assert_untouched(&g, &out);
    /* max_memory: the 48-byte output does not fit in 47 */
    ndx_options o = {.max_memory = 47};
    ndx_tensor mine = {0};
    assert_fails(ndx_one_hot(&ids, 3, &one, &zero, -1, &o, &mine, &err), &err,
                 NDX_E_MEMORY_BUDGET, NULL);
    assert_true(mine.data == NULL);
    o.max_memory = 48;
    assert_ok(ndx_one_hot(&ids, 3, &one, &zero, -1, &o, &mine, &err), &err);
    ndx_tensor_free(&mine);
    ndx_tensor v;
    assert_ok(ndx_one_hot_shape(&ids, 5, &one, &zero, 1, &v, &err), &err);
    assert_int_equal(v.rank, 3);
    assert_int_equal(v.shape[1], 5);
    test_tensor_free(&wrong), test_tensor_free(&fids), test_tensor_free(&izero);
    test_tensor_free(&vec), test_tensor_free(&out), test_tensor_free(&ids);
    test_tensor_free(&one), test_tensor_free(&zero);
}

static void test_random(void **state) {
    (void)state;
    ndx_error err;
    test_rng r = {5};
    for (int d = 0; d < test_all_dtypes_count; d++) {
        ndx_dtype dt = test_all_dtypes[d];
        for (int it = 0; it < 40; it++) {
            int irank = (int)rng_range(&r, 0, 3);
            int64_t shape[NDX_MAX_RANK];
            int big = it % 8 == 0;
            for (int k = 0; k < irank; k++) shape[k] = rng_range(&r, rng_below(&r, 10) ? 1 : 0, big ? 60 : 5);
            ndx_dtype idt = id_dtypes[rng_below(&r, 5)];
            ndx_tensor ids = test_tensor(idt, 0, irank, shape);
            int64_t depth = rng_range(&r, 0, big ? 40 : 6);
            for (int64_t i = 0; i < test_count(&ids); i++) {
                int64_t v = rng_range(&r, -2, depth + 1);
                if (idt == NDX_UINT8) ((uint8_t *)ids.data)[i] = (uint8_t)(v < 0 ? 255 : v);
                else if (idt == NDX_INT8) ((int8_t *)ids.data)[i] = (int8_t)v;
                else test_set_index(&ids, i, v);
            }
            ndx_tensor on = test_tensor(dt, test_random_width(&r, dt), 0, NULL);
            ndx_tensor off = test_tensor(dt, test_random_width(&r, dt), 0, NULL);
            test_fill_random(&r, &on);
            test_fill_random(&r, &off);
            int axis = (int)rng_range(&r, -1, irank);
            size_t width = on.itemsize > off.itemsize ? on.itemsize : off.itemsize;
            ndx_tensor want = result_view(&ids, depth, width, dt, axis);
            reference(&ids, depth, &on, &off, axis, &want);
            for (int t = 1; t <= 3; t++) {
                ndx_options o = test_options(t, NDX_BAD_INDICES_ERROR);
                ndx_tensor out = {0};
                assert_ok(ndx_one_hot(&ids, depth, &on, &off, axis, &o, &out, &err), &err);
                assert_tensor_eq(&out, &want);
                ndx_tensor_free(&out);
            }
            /* infer agrees on partial specs */
            test_inference full = {0}, part = {0};
            ndx_spec is = ndx_spec_of(&ids), ons = ndx_spec_of(&on), offs = ndx_spec_of(&off);
            full.status = ndx_one_hot_infer(&is, depth, &ons, &offs, axis, &full.specs[0], &full.err);
            ndx_spec pis = test_partial_spec(&r, &ids, 1), pon = test_partial_spec(&r, &on, 1);
            part.status = ndx_one_hot_infer(&pis, depth, &pon, &offs, axis, &part.specs[0], &part.err);
            ndx_tensor out = {0};
            ndx_status s = ndx_one_hot(&ids, depth, &on, &off, axis, NULL, &out, &err);
            assert_infer_agrees(&part, &full, s, &err, 1, &out);
            ndx_tensor_free(&out);
            test_tensor_free(&want), test_tensor_free(&on), test_tensor_free(&off);
            test_tensor_free(&ids);
        }
    }
}

static void test_infer_partial(void **state) {
    (void)state;
    ndx_error err;
    ndx_spec ids = spec(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 4));
    ndx_spec on = spec(NDX_BOOL, 0, NULL), off = spec(NDX_BOOL, NDX_UNKNOWN, NULL), o;
    assert_ok(ndx_one_hot_infer(&ids, 7, &on, &off, 1, &o, &err), &err);
    assert_spec_dims(&o, "[?, 7, 4]");
    assert_int_equal(o.dtype, NDX_BOOL);
    ndx_spec u = spec(NDX_INT32, NDX_UNKNOWN, NULL);
    assert_ok(ndx_one_hot_infer(&u, 7, &on, &off, 5, &o, &err), &err);
    assert_int_equal(o.rank, NDX_UNKNOWN);
    assert_fails(ndx_one_hot_infer(&u, -3, &on, &off, -1, &o, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "depth must be non-negative");
}

/* The output through the caller's allocator; a refused allocation fails with nothing held. */
static void test_allocator_contract(void **state) {
    (void)state;
    ndx_error err;
    ndx_tensor ids = test_tensor_v(NDX_INT32, 0, 1, 100);
    for (int i = 0; i < 100; i++) ((int32_t *)ids.data)[i] = i % 9;
    ndx_tensor on = test_strings(3, 0, NULL, (const char *const[]){"yes"});
    ndx_tensor off = test_strings(1, 0, NULL, (const char *const[]){"n"});
    test_allocator a;
    test_allocator_init(&a);
    ndx_options o = {.allocator = &a.base};
    ndx_tensor out = {0};
    assert_ok(ndx_one_hot(&ids, 8, &on, &off, 0, &o, &out, &err), &err);
    assert_int_equal(out.itemsize, 3);
    assert_int_equal(a.live, 1);
    test_allocator_free(&a, out.data);
    a.refuse = 1;
    out = (ndx_tensor){0};
    assert_fails(ndx_one_hot(&ids, 8, &on, &off, 0, &o, &out, &err), &err, NDX_E_NO_MEMORY, NULL);
    assert_true(out.data == NULL);
    assert_int_equal(a.live, 0);
    test_tensor_free(&on), test_tensor_free(&off), test_tensor_free(&ids);
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
