/* test_concat_slice.c — concat, stack, slice, expand_dims and squeeze (src/ops/concat_slice.c) against
 * naive per-element loops on random inputs of every dtype (strings too), at 1 and 2 threads;
 * their inference on partial specs; and every refusal, with TensorFlow's messages, leaving the
 * caller's output untouched. */
#include <stdio.h>

#include "dense_ops.h"
#include "ndx_test.h"

#define U NDX_UNKNOWN

/* The flat index of coordinates c in shape (rank dims). */
static int64_t flat_of(int rank, const int64_t *shape, const int64_t *c) {
    int64_t at = 0;
    for (int d = 0; d < rank; d++) at = at * shape[d] + c[d];
    return at;
}

/* The coordinates of flat index i in shape. */
static void coords_of(int rank, const int64_t *shape, int64_t i, int64_t *c) {
    for (int d = rank - 1; d >= 0; d--) {
        c[d] = shape[d] ? i % shape[d] : 0;
        i = shape[d] ? i / shape[d] : 0;
    }
}

static const unsigned char *elem(const ndx_tensor *t, int64_t i) {
    return (const unsigned char *)t->data + (size_t)i * t->itemsize;
}

static ndx_tensor axis_i64(int64_t *a) { return ndx_tensor_make(NDX_INT64, 0, NULL, a); }

/* concat along a random axis of three random tensors, against: out[c] = values[k][c with
 * c[axis] minus the sizes of the values before k]. */
static void concat_matches_naive_loops(void **state) {
    (void)state;
    test_rng r = {11};
    for (int t = 0; t < test_all_dtypes_count; t++) {
        ndx_dtype dt = test_all_dtypes[t];
        for (int trial = 0; trial < 6; trial++) {
            size_t width = test_random_width(&r, dt);
            int rank = (int)rng_range(&r, 1, 4);
            int axis = (int)rng_below(&r, rank);
            int64_t base[4];
            for (int d = 0; d < rank; d++) base[d] = rng_range(&r, 1, 4);
            ndx_tensor v[3];
            int64_t total = 0;
            for (int k = 0; k < 3; k++) {
                int64_t shape[4];
                memcpy(shape, base, sizeof shape);
                shape[axis] = rng_range(&r, 0, 3);
                total += shape[axis];
                v[k] = test_tensor(dt, width, rank, shape);
                test_fill_random(&r, &v[k]);
            }
            for (int threads = 1; threads <= 2; threads++) {
                ndx_options o = test_options(threads, NDX_BAD_INDICES_ERROR);
                int64_t a = trial % 2 ? axis - rank : axis; /* negative axes too */
                ndx_tensor A = axis_i64(&a), out = {0};
                out.data = NULL;
                ndx_error err;
                assert_ok(ndx_concat(3, v, &A, &o, &out, &err), &err);
                assert_int_equal(out.rank, rank);
                assert_int_equal(out.shape[axis], total);
                assert_int_equal(out.itemsize, v[0].itemsize);
                for (int64_t i = 0; i < test_count(&out); i++) {
                    int64_t c[4];
                    coords_of(rank, out.shape, i, c);
                    int k = 0;
                    while (c[axis] >= v[k].shape[axis]) c[axis] -= v[k++].shape[axis];
                    assert_memory_equal(elem(&out, i), elem(&v[k], flat_of(rank, v[k].shape, c)),
                                        out.itemsize);
                }
                ndx_tensor_free(&out);
            }
            for (int k = 0; k < 3; k++) test_tensor_free(&v[k]);
        }
    }
}

/* stack: out[c] = values[c[axis]][c without axis]. */
static void stack_matches_naive_loops(void **state) {
    (void)state;
    test_rng r = {12};
    for (int t = 0; t < test_all_dtypes_count; t++) {
        ndx_dtype dt = test_all_dtypes[t];
        for (int trial = 0; trial < 6; trial++) {
            size_t width = test_random_width(&r, dt);
            int rank = (int)rng_range(&r, 0, 3);
            int axis = (int)rng_range(&r, 0, rank);
            int n = (int)rng_range(&r, 1, 4);
            int64_t shape[4];
            for (int d = 0; d < rank; d++) shape[d] = rng_range(&r, 0, 3);
            ndx_tensor v[4];
            for (int k = 0; k < n; k++) {
                v[k] = test_tensor(dt, width, rank, shape);
                test_fill_random(&r, &v[k]);
            }
            ndx_options o = test_options(1 + trial % 2, NDX_BAD_INDICES_ERROR);
            ndx_tensor out = {0};
            ndx_error err;
            assert_ok(ndx_stack(n, v, trial % 3 ? axis : axis - rank - 1, &o, &out, &err), &err);
            assert_int_equal(out.rank, rank + 1);
            assert_int_equal(out.shape[axis], n);
            for (int64_t i = 0; i < test_count(&out); i++) {
                int64_t c[5], inner[4];
                coords_of(rank + 1, out.shape, i, c);
                for (int d = 0, j = 0; d <= rank; d++)
                    if (d != axis) inner[j++] = c[d];
                const ndx_tensor *src = &v[c[axis]];
                assert_memory_equal(elem(&out, i), elem(src, flat_of(rank, shape, inner)),
                                    out.itemsize);
            }
            ndx_tensor_free(&out);
            for (int k = 0; k < n; k++) test_tensor_free(&v[k]);
        }
    }
}

/* slice: out[c] = input[begin + c]; size -1 runs to the end. */
static void slice_matches_naive_loops(void **state) {
    (void)state;
    test_rng r = {13};
    for (int t = 0; t < test_all_dtypes_count; t++) {
        ndx_dtype dt = test_all_dtypes[t];
        for (int trial = 0; trial < 8; trial++) {
            size_t width = test_random_width(&r, dt);
            int rank = (int)rng_range(&r, 0, 4);
            int64_t shape[4], begin[4], size[4], want[4];
            for (int d = 0; d < rank; d++) {
                shape[d] = rng_range(&r, 0, 5);
                begin[d] = rng_range(&r, 0, shape[d]);
                want[d] = rng_range(&r, 0, shape[d] - begin[d]);
                size[d] = rng_below(&r, 3) == 0 ? -1 : want[d];
                if (size[d] == -1) want[d] = shape[d] - begin[d];
            }
            ndx_tensor x = test_tensor(dt, width, rank, shape);
            test_fill_random(&r, &x);
            int32_t b32[4], s32[4];
            for (int d = 0; d < rank; d++) b32[d] = (int32_t)begin[d], s32[d] = (int32_t)size[d];
            int64_t len = rank;
            ndx_tensor B = trial % 2 ? ndx_tensor_make(NDX_INT64, 1, &len, begin)
                                     : ndx_tensor_make(NDX_INT32, 1, &len, b32);
            ndx_tensor S = trial % 2 ? ndx_tensor_make(NDX_INT64, 1, &len, size)
                                     : ndx_tensor_make(NDX_INT32, 1, &len, s32);
            ndx_options o = test_options(1 + trial % 2, NDX_BAD_INDICES_ERROR);
            ndx_tensor out = {0};
            ndx_error err;
            assert_ok(ndx_slice(&x, &B, &S, &o, &out, &err), &err);
            assert_int_equal(out.rank, rank);
            for (int d = 0; d < rank; d++) assert_int_equal(out.shape[d], want[d]);
            for (int64_t i = 0; i < test_count(&out); i++) {
                int64_t c[4];
                coords_of(rank, out.shape, i, c);
                for (int d = 0; d < rank; d++) c[d] += begin[d];
                assert_memory_equal(elem(&out, i), elem(&x, flat_of(rank, shape, c)),
                                    out.itemsize);
            }
            ndx_tensor_free(&out);
            test_tensor_free(&x);
        }
    }
}

/* Both keep the bytes and change only the dims. */
static void expand_dims_and_squeeze_keep_the_bytes(void **state) {
    (void)state;
    test_rng r = {14};
    for (int t = 0; t < test_all_dtypes_count; t++) {
        ndx_dtype dt = test_all_dtypes[t];
        ndx_tensor x = test_tensor_v(dt, test_random_width(&r, dt), 4, 1, 3, 1, 2);
        test_fill_random(&r, &x);
        int64_t a = -2;
        ndx_tensor A = axis_i64(&a), out = {0};
        ndx_error err;
        assert_ok(ndx_expand_dims(&x, &A, NULL, &out, &err), &err);
        assert_int_equal(out.rank, 5);
        assert_int_equal(out.shape[3], 1);
        assert_int_equal(out.shape[4], 2);
        assert_memory_equal(out.data, x.data, test_nbytes(&x));
        ndx_tensor_free(&out);
        struct {
            uint32_t dims;
            int rank;
            int64_t shape[4];
        } cases[] = {{0, 2, {3, 2}},
                     {1u << ndx_squeeze_bit(0), 3, {3, 1, 2}},
                     {1u << ndx_squeeze_bit(-2), 3, {1, 3, 2}},
                     {1u << ndx_squeeze_bit(0) | 1u << ndx_squeeze_bit(-4), 3, {3, 1, 2}}};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            ndx_tensor sq = {0};
            assert_ok(ndx_squeeze(&x, cases[c].dims, NULL, &sq, &err), &err);
            assert_int_equal(sq.rank, cases[c].rank);
            assert_memory_equal(sq.shape, cases[c].shape, (size_t)sq.rank * sizeof(int64_t));
            assert_memory_equal(sq.data, x.data, test_nbytes(&x));
            ndx_tensor_free(&sq);
        }
        test_tensor_free(&x);
    }
}

/* Inference on partial specs: what the known dims and constant arguments tell. */
static void inference_on_partial_specs(void **state) {
    (void)state;
    ndx_error err;
    ndx_spec v[2] = {ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3)),
                     ndx_spec_make(NDX_FLOAT32, 2, SHAPE(4, 5))};
    ndx_spec scalar = ndx_spec_make(NDX_INT32, 0, NULL), out;
    int32_t one = 1, zero = 0;
    ndx_tensor A1 = ndx_tensor_make(NDX_INT32, 0, NULL, &one);
    ndx_tensor A0 = ndx_tensor_make(NDX_INT32, 0, NULL, &zero);
    assert_ok(ndx_concat_infer(2, v, &scalar, &A1, &out, &err), &err);
    assert_int_equal(out.shape[0], 4); /* from the second value */
    assert_int_equal(out.shape[1], 8);
    assert_ok(ndx_concat_infer(2, v, &scalar, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], U);
    assert_int_equal(out.shape[1], U);
    /* along axis 0, dims 1 must agree: 3 vs 5 */
    assert_fails(ndx_concat_infer(2, v, &scalar, &A0, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "concat: dimension 1 in both shapes must be equal: values[0].shape = [?, 3] vs. "
                 "values[1].shape = [4, 5]");
    ndx_spec w[2] = {ndx_spec_make(NDX_INT8, 2, SHAPE(U, 3)), ndx_spec_make(NDX_INT8, 2, SHAPE(2, U))};
    assert_ok(ndx_stack_infer(2, w, -1, &out, &err), &err);
    assert_int_equal(out.rank, 3);
    assert_int_equal(out.shape[0], 2);
    assert_int_equal(out.shape[1], 3);
    assert_int_equal(out.shape[2], 2);
    ndx_spec unknown = ndx_spec_make(NDX_INT8, U, NULL);
    assert_ok(ndx_squeeze_infer(&w[0], 0, &out, &err), &err);
    assert_int_equal(out.rank, U); /* the ? may be 1 or not */
    assert_ok(ndx_squeeze_infer(&unknown, 1, &out, &err), &err);
    assert_int_equal(out.rank, U);
    int64_t len2 = 2;
    ndx_spec vec = ndx_spec_make(NDX_INT64, 1, &len2);
    int64_t b[2] = {1, 0}, s[2] = {-1, 2};
    ndx_tensor B = ndx_tensor_make(NDX_INT64, 1, &len2, b), S = ndx_tensor_make(NDX_INT64, 1, &len2, s);
    ndx_spec x = ndx_spec_make(NDX_FLOAT64, 2, SHAPE(U, 3));
    assert_ok(ndx_slice_infer(&x, &vec, &B, &vec, &S, &out, &err), &err);
    assert_int_equal(out.shape[0], U); /* ? - 1 */
    assert_int_equal(out.shape[1], 2);
    ndx_spec x5 = ndx_spec_make(NDX_FLOAT64, 2, SHAPE(5, 3));
    assert_ok(ndx_slice_infer(&x5, &vec, &B, &vec, &S, &out, &err), &err);
    assert_int_equal(out.shape[0], 4);
    assert_ok(ndx_expand_dims_infer(&x, &scalar, NULL, &out, &err), &err);
    assert_int_equal(out.rank, 3);
}

/* Every refusal: TensorFlow's message, and nothing written to a given output. */
static void refusals_write_nothing(void **state) {
    (void)state;
    ndx_tensor a = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 3), b = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 4);
    ndx_tensor c = test_tensor_v(NDX_FLOAT64, 0, 2, 2, 3), s1 = test_tensor_v(NDX_FLOAT32, 0, 1, 3);
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 3);
    ndx_tensor str3 = test_tensor_v(NDX_STRING, 3, 1, 2), str4 = test_tensor_v(NDX_STRING, 4, 1, 2);
    int64_t a0 = 0, a2 = 2, am3 = -3;
    ndx_tensor A0 = axis_i64(&a0), A2 = axis_i64(&a2), Am3 = axis_i64(&am3);
    int64_t two = 2, vec2[2] = {0, 1};
    ndx_tensor Avec = ndx_tensor_make(NDX_INT64, 1, &two, vec2);
    float one_f = 1;
    ndx_tensor Afloat = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &one_f);
    ndx_error err;
    ndx_tensor ab[2] = {a, b}, ac[2] = {a, c}, as1[2] = {a, s1}, aa[2] = {a, a}, ss[2] = {str3, str4};
    memset(out.data, 0x5a, test_nbytes(&out));
#define REFUSE(call, needle)                                                                       \
    do {                                                                                           \
        test_guard g = test_guard_take(&out);                                                      \
        assert_fails((call), &err, NDX_E_INVALID_ARGUMENT, (needle));                              \
        assert_untouched(&g, &out);                                                                \
    } while (0)
    REFUSE(ndx_concat(2, ab, &A0, NULL, &out, &err),
           "concat: dimension 1 in both shapes must be equal: values[0].shape = [2, 3] vs. "
           "values[1].shape = [2, 4]");
    REFUSE(ndx_concat(2, aa, &A2, NULL, &out, &err),
           "concat: expected concatenating dimensions in the range [-2, 2), but got 2");
    REFUSE(ndx_concat(2, aa, &Am3, NULL, &out, &err),
           "concat: expected concatenating dimensions in the range [-2, 2), but got -3");
    REFUSE(ndx_concat(2, ac, &A0, NULL, &out, &err),
           "concat: values[1] is float64, but values[0] is float32");
    REFUSE(ndx_concat(2, as1, &A0, NULL, &out, &err),
           "concat: ranks of all input tensors should match: values[0].shape = [2, 3] vs. "
           "values[1].shape = [3]");
    REFUSE(ndx_concat(2, aa, &Avec, NULL, &out, &err), "concat: axis must be a scalar");
    REFUSE(ndx_concat(2, aa, &Afloat, NULL, &out, &err), "concat: axis must be int32 or int64");
    REFUSE(ndx_concat(2, ss, &A0, NULL, &out, &err),
           "concat: values[1] is string(4), but values[0] is string(3)");
    REFUSE(ndx_concat(0, aa, &A0, NULL, &out, &err), "concat: needs at least one value, not 0");
    REFUSE(ndx_stack(2, ab, 0, NULL, &out, &err),
           "stack: shapes of all inputs must match: values[0].shape = [2, 3] != values[1].shape = "
           "[2, 4]");
    REFUSE(ndx_stack(2, aa, 3, NULL, &out, &err), "stack: axis = 3 not in [-3, 3)");
    REFUSE(ndx_expand_dims(&a, &Avec, NULL, &out, &err),
           "expand_dims: axis must hold a single value, but has 2");
    int64_t a4 = 4;
    ndx_tensor A4 = axis_i64(&a4);
    REFUSE(ndx_expand_dims(&a, &A4, NULL, &out, &err),
           "expand_dims: tried to expand dim index 4 for tensor with 2 dimensions");
    REFUSE(ndx_squeeze(&a, 1u << ndx_squeeze_bit(1), NULL, &out, &err),
           "squeeze: can not squeeze dim[1], expected a dimension of 1, got 3");
    REFUSE(ndx_squeeze(&a, 1u << ndx_squeeze_bit(-3), NULL, &out, &err),
           "squeeze: tried to squeeze dim index -3 for tensor with 2 dimensions");
    int64_t bb[2] = {1, 2}, sz[2] = {1, 2};
    ndx_tensor Bv = ndx_tensor_make(NDX_INT64, 1, &two, bb), Sv = ndx_tensor_make(NDX_INT64, 1, &two, sz);
    REFUSE(ndx_slice(&a, &Bv, &Sv, NULL, &out, &err), "slice: expected size[1] in [0, 1], but got 2");
    int64_t b3[2] = {3, 0};
    ndx_tensor B3 = ndx_tensor_make(NDX_INT64, 1, &two, b3);
    REFUSE(ndx_slice(&a, &B3, &Sv, NULL, &out, &err), "slice: expected begin[0] in [0, 2], but got 3");
    int32_t s32[2] = {1, 1};
    ndx_tensor S32 = ndx_tensor_make(NDX_INT32, 1, &two, s32);
    REFUSE(ndx_slice(&a, &Bv, &S32, NULL, &out, &err),
           "slice: begin and size must have one dtype, not int64 and int32");
    int64_t one_len = 1;
    ndx_tensor B1 = ndx_tensor_make(NDX_INT64, 1, &one_len, bb);
    REFUSE(ndx_slice(&a, &B1, &B1, NULL, &out, &err),
           "slice: expected begin and size arguments to be 1-D tensors of size 2 (input's "
                 "rank), but got shapes [1] and [1] instead");
    int64_t m2[2] = {0, -2};
    ndx_tensor M2 = ndx_tensor_make(NDX_INT64, 1, &two, m2);
    REFUSE(ndx_slice(&a, &Avec, &M2, NULL, &out, &err), "slice: expected size[1] >= -1, but got -2");
    /* a given output whose shape is not the result's: [4, 3] for [2, 6] */
    int64_t a1 = 1;
    ndx_tensor A1 = axis_i64(&a1);
    REFUSE(ndx_concat(2, aa, &A1, NULL, &out, &err), "out");
#undef REFUSE
    test_tensor_free(&a);
    test_tensor_free(&b);
    test_tensor_free(&c);
    test_tensor_free(&s1);
    test_tensor_free(&out);
    test_tensor_free(&str3);
    test_tensor_free(&str4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concat_matches_naive_loops),
        cmocka_unit_test(stack_matches_naive_loops),
        cmocka_unit_test(slice_matches_naive_loops),
        cmocka_unit_test(expand_dims_and_squeeze_keep_the_bytes),
        cmocka_unit_test(inference_on_partial_specs),
        cmocka_unit_test(refusals_write_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
