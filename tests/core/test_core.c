/* test_core.c — dtype table, tensor checks, overflow-checked sizes, float16/bfloat16 rounding,
 * the parallel-for split, the warm copy, the memory budget and the cache of large blocks. */
#include "ndx_test.h"

#include <math.h>

#include "core.h"
#include "half.h"
#include "index.h"

static void dtype_table(void **state) {
    (void)state;
    assert_string_equal(ndx_dtype_name(NDX_FLOAT32), "float32");
    assert_string_equal(ndx_dtype_name(NDX_BFLOAT16), "bfloat16");
    assert_string_equal(ndx_dtype_name((ndx_dtype)99), "invalid");
    assert_int_equal(ndx_dtype_size(NDX_COMPLEX128), 16);
    assert_int_equal(ndx_dtype_size(NDX_BOOL), 1);
    assert_int_equal(ndx_dtype_size(NDX_STRING), 0);
    assert_int_equal(ndx_dtype_kind_of(NDX_UINT16), NDX_KIND_UNSIGNED);
    assert_int_equal(ndx_dtype_kind_of(NDX_COMPLEX64), NDX_KIND_COMPLEX);
    assert_false(ndx_dtype_is_valid(NDX_DTYPE_COUNT));
    assert_string_equal(ndx_status_name(NDX_E_OUT_OF_RANGE), "out of range");
}

static void tensor_check_rejects_bad_views(void **state) {
    (void)state;
    ndx_error err;
    int64_t huge[3] = {INT64_MAX / 2, 4, 1};
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 3, huge, (void *)&err);
    assert_fails(ndx_tensor_check(&t, "x", NULL, NULL, &err), &err, NDX_E_OVERFLOW, "too large");
    int64_t neg[2] = {2, -1};
    t = ndx_tensor_make(NDX_INT8, 2, neg, (void *)&err);
    assert_fails(ndx_tensor_check(&t, "x", NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "negative dimension");
    int64_t ok[2] = {2, 3};
    t = ndx_tensor_make(NDX_INT8, 2, ok, NULL);
    assert_fails(ndx_tensor_check(&t, "x", NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "NULL");
    t = ndx_tensor_make(NDX_INT8, NDX_MAX_RANK + 1, ok, NULL);
    assert_int_equal(t.rank, -1);
    assert_fails(ndx_tensor_check(&t, "x", NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "rank");
    int64_t zero[2] = {0, 5};
    t = ndx_tensor_make(NDX_FLOAT64, 2, zero, NULL); /* no bytes: NULL data is fine */
    int64_t count;
    size_t bytes;
    assert_int_equal(ndx_tensor_check(&t, "x", &count, &bytes, &err), NDX_OK);
    assert_int_equal(count, 0);
    assert_int_equal(bytes, 0);
    t = ndx_tensor_string(0, 1, ok, (void *)&err);
    assert_fails(ndx_tensor_check(&t, "x", NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "width 0");
    t = ndx_tensor_make(NDX_INT8, 0, NULL, (void *)&err);
    assert_int_equal(ndx_tensor_count(&t), 1);
}

/* float16 rounding checked against values worked out by hand from IEEE 754 binary16. */
static void half_conversions(void **state) {
    (void)state;
    assert_int_equal(ndx_float_to_half(1.0f), 0x3c00);
    assert_int_equal(ndx_float_to_half(-2.0f), 0xc000);
    assert_int_equal(ndx_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(ndx_float_to_half(65520.0f), 0x7c00);       /* rounds up to inf */
    assert_int_equal(ndx_float_to_half(65519.0f), 0x7bff);
    assert_int_equal(ndx_float_to_half(5.9604645e-8f), 0x0001);  /* smallest subnormal */
    assert_int_equal(ndx_float_to_half(2.9802322e-8f), 0x0000);  /* half of it: ties to even */
    assert_int_equal(ndx_float_to_half(6.1035156e-5f), 0x0400);  /* smallest normal */
    assert_int_equal(ndx_float_to_half(1.0f + 1.0f / 2048), 0x3c00); /* tie -> even (down) */
    assert_int_equal(ndx_float_to_half(1.0f + 3.0f / 2048), 0x3c02); /* tie -> even (up) */
    assert_true(isnan(ndx_half_to_float(ndx_float_to_half(NAN))));
    assert_true(ndx_half_to_float(0x7c00) == INFINITY);
    for (uint32_t h = 0; h < 0x10000; h++) { /* every finite half round-trips exactly */
        if ((h & 0x7c00) == 0x7c00) continue;
        assert_int_equal(ndx_float_to_half(ndx_half_to_float((uint16_t)h)), h);
    }
    assert_int_equal(ndx_float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(ndx_float_to_bf16(1.00390625f), 0x3f80); /* tie -> even */
    assert_int_equal(ndx_float_to_bf16(1.01171875f), 0x3f82);
    assert_true(isnan(ndx_bf16_to_float(ndx_float_to_bf16(NAN))));
}

typedef struct { int64_t covered[1000]; } cover; /* chunks are disjoint: no two threads share a cell */
static void mark(void *ctx, int64_t b, int64_t e, int w) {
    (void)w;
    cover *c = ctx;
    for (int64_t i = b; i < e; i++) c->covered[i]++;
}

/* ndx_copy_warm / ndx_parallel_copy_warm copy exactly n bytes, at any alignment and length
 * (around its 64-byte steps and its 256 KiB memcpy limit), on 1-3 threads, and write nothing
 * beyond them: checked byte by byte against the source and a guard. */
static void warm_copy_is_exact(void **state) {
    (void)state;
    size_t cap = ((size_t)256 << 10) + 4096;
    unsigned char *src = malloc(cap + 64), *dst = malloc(cap + 64);
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < cap + 64; i++) src[i] = (unsigned char)(i * 131u + 7u);
    size_t lengths[] = {0, 1, 63, 64, 65, 127, 1000, ((size_t)256 << 10) - 1, (size_t)256 << 10,
                        ((size_t)256 << 10) + 1, ((size_t)256 << 10) + 63, cap - 3};
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
        for (size_t off = 0; off < 3; off++) {
            for (int threads = 0; threads <= 3; threads++) { /* 0: the serial entry */
                size_t n = lengths[k];
                memset(dst, 0xA5, cap + 64);
                if (threads == 0)
                    ndx_copy_warm(dst + off, src + 2 * off + 1, n);
                else
                    ndx_parallel_copy_warm(dst + off, src + 2 * off + 1, n, threads);
                for (size_t i = 0; i < off; i++) assert_int_equal(dst[i], 0xA5);
                assert_int_equal(memcmp(dst + off, src + 2 * off + 1, n), 0);
                for (size_t i = off + n; i < off + n + 32; i++) assert_int_equal(dst[i], 0xA5);
            }
        }
    }
    free(src);
    free(dst);
}

static void parallel_for_covers_once(void **state) {
    (void)state;
    for (int threads = 1; threads <= 5; threads++) {
        for (int64_t n = 0; n < 1000; n += 97) {
            cover c;
            memset(&c, 0, sizeof c);
            int w = ndx_parallel_for(threads, n, 10, mark, &c);
            for (int64_t i = 0; i < n; i++) assert_int_equal(c.covered[i], 1);
            assert_true(w <= threads);
            assert_true(n == 0 ? w == 0 : (w >= 1 && w <= (n / 10 > 0 ? n / 10 : 1)));
        }
    }
    /* the call context resolves threads once: 0 means every core, and NDX_MAX_WORKERS caps it */
    ndx_options opt = {0};
    ndx_call c;
    ndx_error err;
    assert_int_equal(ndx_call_begin(&c, "test_op", &opt, &opt, &err), NDX_OK);
    assert_true(c.threads >= 1);
    opt.num_threads = 3;
    assert_int_equal(ndx_call_begin(&c, "test_op", &opt, &opt, &err), NDX_OK);
    assert_int_equal(c.threads, 3);
    opt.num_threads = 100000;
    assert_int_equal(ndx_call_begin(&c, "test_op", &opt, &opt, &err), NDX_OK);
    assert_int_equal(c.threads, NDX_MAX_WORKERS);
    assert_int_equal(ndx_call_begin(&c, "test_op", NULL, &opt, &err), NDX_OK);
    assert_true(c.threads >= 1);
    /* one spelling of each option in messages, and a NULL output refused first */
    opt.bad_indices = (ndx_bad_indices)7;
    assert_fails(ndx_call_begin(&c, "test_op", &opt, &opt, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "test_op: opt->bad_indices = 7 is neither NDX_BAD_INDICES_ERROR nor "
                 "NDX_BAD_INDICES_IGNORE");
    assert_fails(ndx_call_begin(&c, "test_op", &opt, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "test_op: out is NULL");
}

static void budget_caps_allocation(void **state) {
    (void)state;
    ndx_options opt = {0};
    opt.max_memory = 1000;
    ndx_call b;
    ndx_error err;
    assert_int_equal(ndx_call_begin(&b, "test_op", &opt, &opt, &err), NDX_OK);
    void *p = NULL, *q = NULL;
    assert_int_equal(ndx_call_room(&b), 1000);
    assert_int_equal(ndx_call_acquire(&b, 600, 1, "scratch", &p), NDX_OK);
    assert_non_null(p);
    assert_int_equal(ndx_call_room(&b), 400);
    assert_fails(ndx_call_acquire(&b, 600, 0, "output", &q), &err, NDX_E_MEMORY_BUDGET,
                 "test_op: output needs 600 bytes, over the memory budget of 1000 bytes (600 "
                 "already in use by this call)");
    assert_null(q);
    ndx_call_release(&b, p);
    size_t bytes;
    assert_false(ndx_bytes_of(INT64_MAX, 16, &bytes));
    int64_t dims[3] = {1 << 30, 1 << 30, 1 << 30};
    int64_t count;
    assert_false(ndx_dims_product(3, dims, &count));
    /* Products run left to right, as TensorFlow's shapes: overflow before a 0 is refused. */
    int64_t late_zero[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 0};
    assert_false(ndx_dims_product(3, late_zero, &count));
    int64_t early_zero[3] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
    assert_true(ndx_dims_product(3, early_zero, &count));
    assert_int_equal(count, 0);
    ndx_index_plan plan;
    int64_t huge_then_zero[4] = {(int64_t)1 << 20, 0, (int64_t)1 << 43, (int64_t)1 << 20};
    ndx_index_plan_init(&plan, 4, huge_then_zero); /* UBSan: no signed overflow */
    assert_int_equal(plan.slices, 0);
}

static void format_dims(void **state) {
    (void)state;
    char buf[NDX_DIMS_TEXT];
    int64_t d[3] = {4, 3, -1};
    ndx_format_dims(buf, sizeof buf, 3, d);
    assert_string_equal(buf, "[4, 3, -1]");
    ndx_format_dims(buf, sizeof buf, 0, d);
    assert_string_equal(buf, "[]");
    char small[8];
    ndx_format_dims(small, sizeof small, 3, d);
    assert_string_equal(small, "[4,...]");
}


/* A large output the op allocated, freed, comes back to the next call wanting that size (no new
 * pages); one much larger or smaller does not take it; ndx_release_memory gives all back. */
static void large_blocks_are_kept_for_reuse(void **state) {
    (void)state;
    ndx_release_memory();
    enum { ROWS = 1 << 16, COLS = 32 }; /* 8 MiB of float32: above the 4 MiB threshold */
    float *params = calloc((size_t)ROWS * COLS, sizeof *params);
    int64_t *rows = malloc(ROWS * sizeof *rows);
    assert_non_null(params);
    assert_non_null(rows);
    for (int64_t i = 0; i < ROWS; i++) rows[i] = ROWS - 1 - i, params[i * COLS] = (float)i;
    ndx_tensor p = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){ROWS, COLS}, params);
    ndx_tensor idx = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){ROWS, 1}, rows);
    ndx_tensor out = {0};
    assert_int_equal(ndx_gather_nd(&p, &idx, 0, NULL, &out, NULL), NDX_OK);
    void *first = out.data;
    ndx_tensor_free(&out);
    assert_null(out.data);
    assert_int_equal(ndx_gather_nd(&p, &idx, 0, NULL, &out, NULL), NDX_OK);
    assert_ptr_equal(out.data, first); /* the kept block */
    for (int64_t i = 0; i < ROWS; i += 997) /* and fully rewritten */
        assert_true(((float *)out.data)[i * COLS] == (float)(ROWS - 1 - i));
    ndx_tensor_free(&out);
    /* A quarter of the rows: the 8 MiB block is too big to hand out for 2 MiB. */
    ndx_tensor quarter = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){ROWS / 4, 1}, rows);
    assert_int_equal(ndx_gather_nd(&p, &quarter, 0, NULL, &out, NULL), NDX_OK);
    assert_ptr_not_equal(out.data, first);
    ndx_tensor_free(&out);
    size_t released = ndx_release_memory();
    assert_true(released >= (size_t)ROWS * COLS * sizeof(float));
    assert_int_equal(ndx_release_memory(), 0);
    free(params);
    free(rows);
}

/* An output view that differs from the result only in its itemsize says so. */
static void output_mismatch_names_itemsize(void **state) {
    (void)state;
    int64_t shape[2] = {4, 3};
    float data[12];
    ndx_tensor want = ndx_tensor_make(NDX_FLOAT32, 2, shape, NULL);
    ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 2, shape, data);
    out.itemsize = 8;
    ndx_error err;
    assert_fails(ndx_output_matches("gather_nd", &want, &out, "out", &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out is float32(itemsize 8) [4, 3] but the result is float32 [4, 3]");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dtype_table),
        cmocka_unit_test(tensor_check_rejects_bad_views),
        cmocka_unit_test(half_conversions),
        cmocka_unit_test(parallel_for_covers_once),
        cmocka_unit_test(warm_copy_is_exact),
        cmocka_unit_test(budget_caps_allocation),
        cmocka_unit_test(large_blocks_are_kept_for_reuse),
        cmocka_unit_test(format_dims),
        cmocka_unit_test(output_mismatch_names_itemsize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
