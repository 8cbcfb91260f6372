/* test_sparse_apply.c — sparse_apply_sgd and sparse_apply_adagrad (V1 and V2, update_slots on
 * and off; duplicates summed first as Keras's optimizer does are checked against a reference of
 * Keras's tf.unique and unsorted_segment_sum) against a naive sequential reference written here: one loop over the entries in
 * index order, real dtypes computed in double and rounded to the element type after every step
 * (which gives exactly the element type's own arithmetic: double has more than twice the bits of
 * float, and float more than twice those of float16 and bfloat16, so the double rounding is
 * innocuous), compared bitwise; complex dtypes computed in complex double, compared within a
 * tolerance. Also: worked examples, every dtype and index dtype, ranks 1 to 3, duplicates, empty
 * indices, bitwise equality at 1, 2 and 3 threads on inputs large enough for the parallel paths,
 * every error path leaving var and accum unchanged, the skip policy, infer on partial specs and
 * against the op on random (often malformed) inputs, the memory the call takes, and indices
 * mutated by another thread during calls. */
#include "contract.h"

#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>

/* glibc defines CMPLX only for GCC; clang has the same builtin. */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

/* ---- elements of any supported dtype, as double (complex) ------------------------------------ */

static const ndx_dtype apply_dtypes[] = {NDX_FLOAT16,  NDX_FLOAT32,   NDX_FLOAT64,
                                         NDX_BFLOAT16, NDX_COMPLEX64, NDX_COMPLEX128};
enum { APPLY_DTYPES = 6 };

/* x rounded to the nearest value of real dtype dt (double -> float -> 16 bits is innocuous, see
 * the top of the file). */
static double round_to(ndx_dtype dt, double x) {
    switch (dt) {
    case NDX_FLOAT16: return ndx_float16_to_float(ndx_float_to_float16((float)x));
    case NDX_BFLOAT16: return ndx_bfloat16_to_float(ndx_float_to_bfloat16((float)x));
    case NDX_FLOAT32: return (float)x;
    default: return x;
    }
}

static double complex get(const ndx_tensor *t, int64_t i) {
    const unsigned char *p = (const unsigned char *)t->data + (size_t)i * t->itemsize;
    uint16_t h;
    float f[2];
    double d[2];
    switch (t->dtype) {
    case NDX_FLOAT16: memcpy(&h, p, 2); return ndx_float16_to_float(h);
    case NDX_BFLOAT16: memcpy(&h, p, 2); return ndx_bfloat16_to_float(h);
    case NDX_FLOAT32: memcpy(f, p, 4); return f[0];
    case NDX_FLOAT64: memcpy(d, p, 8); return d[0];
    case NDX_COMPLEX64: memcpy(f, p, 8); return CMPLX(f[0], f[1]);
    case NDX_COMPLEX128: memcpy(d, p, 16); return CMPLX(d[0], d[1]);
    default: fail_msg("get: dtype %d", (int)t->dtype);
    }
    return 0;
}

static void put(ndx_tensor *t, int64_t i, double complex v) {
    unsigned char *p = (unsigned char *)t->data + (size_t)i * t->itemsize;
    uint16_t h;
    float f[2] = {(float)creal(v), (float)cimag(v)};
    double d[2] = {creal(v), cimag(v)};
    switch (t->dtype) {
    case NDX_FLOAT16:
        h = ndx_float_to_float16(f[0]);
        memcpy(p, &h, 2);
        break;
    case NDX_BFLOAT16:
        h = ndx_float_to_bfloat16(f[0]);
        memcpy(p, &h, 2);
        break;
    case NDX_FLOAT32: memcpy(p, f, 4); break;
    case NDX_FLOAT64: memcpy(p, d, 8); break;
    case NDX_COMPLEX64: memcpy(p, f, 8); break;
    case NDX_COMPLEX128: memcpy(p, d, 16); break;
    default: fail_msg("put: dtype %d", (int)t->dtype);
    }
}

/* Fails unless t still holds the bytes of `before` (a copy taken earlier). */
static void assert_unchanged(const ndx_tensor *before, const ndx_tensor *t) {
    if (memcmp(before->data, t->data, test_nbytes(t)) != 0)
        fail_msg("a failed call wrote to var or accum");
}

static ndx_tensor copy_of(const ndx_tensor *t) {
    return test_tensor_from(t->dtype, 0, t->rank, t->shape, t->data);
}

static ndx_tensor scalar(ndx_dtype dt, double complex v) {
    ndx_tensor t = test_tensor(dt, 0, 0, NULL);
    put(&t, 0, v);
    return t;
}

/* A random value with few significant bits in [lo, hi) (imaginary part too for complex). */
static double complex random_value(test_rng *r, ndx_dtype dt, double lo, double hi) {
    double re = lo + (hi - lo) * (double)rng_below(r, 1024) / 1024.0;
    double im = lo + (hi - lo) * (double)rng_below(r, 1024) / 1024.0;
    return test_is_complex(dt) ? CMPLX(re, im) : re;
}

static void fill(test_rng *r, ndx_tensor *t, double lo, double hi) {
    for (int64_t i = 0; i < test_count(t); i++) put(t, i, random_value(r, t->dtype, lo, hi));
}

/* ---- the reference -----------------------------------------------------------------------------
 */

typedef enum { SGD, ADAGRAD_V1, ADAGRAD_V2 } kind;

typedef struct step {
    kind k;
    int update_slots;
} step;

/* One real step on element `j` of rows (all doubles hold values of dtype dt). */
static void ref_real(ndx_dtype dt, step s, int single, double *v, double *a, double g, double lr,
                     double eps) {
#define R(x) round_to(dt, (x))
    if (s.k == SGD) {
        *v = R(*v - R(lr * g));
        return;
    }
    if (s.update_slots) *a = R(*a + R(g * g));
    double t = R(lr * g), root = R(sqrt(*a)), change;
    if (s.k == ADAGRAD_V2)
        change = R(t / R(root + eps));
    else if (single)
        change = R(t / root);
    else
        change = R(t * R(1.0 / root));
    *v = R(*v - change);
#undef R
}

static void ref_complex(step s, double complex *v, double complex *a, double complex g,
                        double complex lr, double complex eps) {
    if (s.k == SGD) {
        *v -= lr * g;
        return;
    }
    if (s.update_slots) *a += g * g;
    *v -= s.k == ADAGRAD_V2 ? lr * g / (csqrt(*a) + eps) : lr * g / csqrt(*a);
}

/* The whole call, entry by entry in index order; entries out of range are skipped. */
static void reference(step s, ndx_tensor *var, ndx_tensor *accum, const ndx_tensor *lr,
                      const ndx_tensor *eps, const ndx_tensor *grad, const ndx_tensor *indices) {
    int64_t rows = var->shape[0], inner = 1;
    for (int d = 1; d < var->rank; d++) inner *= var->shape[d];
    ndx_dtype dt = var->dtype;
    double complex l = get(lr, 0), e = eps ? get(eps, 0) : 0;
    for (int64_t i = 0; i < indices->shape[0]; i++) {
        int64_t r = test_get_index(indices, i);
        if (r < 0 || r >= rows) continue;
        for (int64_t j = 0; j < inner; j++) {
            int64_t at = r * inner + j;
            double complex v = get(var, at), a = accum ? get(accum, at) : 0,
                           g = get(grad, i * inner + j);
            if (test_is_complex(dt)) {
                ref_complex(s, &v, &a, g, l, e);
            } else {
                double vr = creal(v), ar = creal(a);
                ref_real(dt, s, inner == 1, &vr, &ar, creal(g), creal(l), creal(e));
                v = vr;
                a = ar;
            }
            put(var, at, v);
            if (accum) put(accum, at, a);
        }
    }
}

/* ---- calling the op -----------------------------------------------------------------------------
 */

static ndx_status apply(step s, const ndx_tensor *var, const ndx_tensor *accum,
                        const ndx_tensor *lr, const ndx_tensor *eps, const ndx_tensor *grad,
                        const ndx_tensor *indices, const ndx_options *opt, ndx_error *err) {
    if (s.k == SGD) return ndx_sparse_apply_sgd(var, lr, grad, indices, opt, err);
    return ndx_sparse_apply_adagrad(var, accum, lr, s.k == ADAGRAD_V2 ? eps : NULL, grad, indices,
                                    s.update_slots, opt, err);
}

/* Bitwise for real dtypes; complex within a relative tolerance. */
static void assert_close(const ndx_tensor *got, const ndx_tensor *want, const char *what) {
    if (!test_is_complex(got->dtype)) {
        if (memcmp(got->data, want->data, test_nbytes(got)) != 0) {
            for (int64_t i = 0; i < test_count(got); i++)
                if (memcmp((char *)got->data + i * got->itemsize,
                           (char *)want->data + i * got->itemsize, got->itemsize))
                    fail_msg("%s (%s) differs at %lld: %.9g, reference %.9g", what,
                             ndx_dtype_name(got->dtype), (long long)i, creal(get(got, i)),
                             creal(get(want, i)));
        }
        return;
    }
    double tol = got->dtype == NDX_COMPLEX64 ? 1e-4 : 1e-10;
    for (int64_t i = 0; i < test_count(got); i++) {
        double complex a = get(got, i), b = get(want, i);
        if (!(cabs(a - b) <= tol * (1.0 + cabs(b))))
            fail_msg("%s (%s) differs at %lld: %g%+gi, reference %g%+gi", what,
                     ndx_dtype_name(got->dtype), (long long)i, creal(a), cimag(a), creal(b),
                     cimag(b));
    }
}

/* Compares var and accum, the op's step s from var0 and accum0, with the reference's. */
static void assert_reference(step s, const ndx_tensor *var, const ndx_tensor *accum,
                             const ndx_tensor *var0, const ndx_tensor *accum0,
                             const ndx_tensor *lr, const ndx_tensor *eps, const ndx_tensor *grad,
                             const ndx_tensor *indices) {
    ndx_tensor want_var = copy_of(var0), want_accum = copy_of(accum0);
    reference(s, &want_var, s.k == SGD ? NULL : &want_accum, lr, eps, grad, indices);
    assert_close(var, &want_var, "var");
    assert_close(accum, &want_accum, "accum");
    test_tensor_free(&want_var);
    test_tensor_free(&want_accum);
}

/* Runs one case through the op (at `threads`, under `policy`) and the reference, and compares. */
static void check_case(step s, const ndx_tensor *var0, const ndx_tensor *accum0,
                       const ndx_tensor *lr, const ndx_tensor *eps, const ndx_tensor *grad,
                       const ndx_tensor *indices, int threads, ndx_bad_indices policy) {
    ndx_tensor var = copy_of(var0), accum = copy_of(accum0);
    ndx_options opt = test_options(threads, policy);
    ndx_error err;
    assert_ok(apply(s, &var, &accum, lr, eps, grad, indices, &opt, &err), &err);
    assert_reference(s, &var, &accum, var0, accum0, lr, eps, grad, indices);
    test_tensor_free(&var);
    test_tensor_free(&accum);
}

static const step every_step[] = {
    {SGD, 1}, {ADAGRAD_V1, 1}, {ADAGRAD_V1, 0}, {ADAGRAD_V2, 1}, {ADAGRAD_V2, 0}};
enum { STEPS = 5 };

/* ---- worked examples ---------------------------------------------------------------------------
 */

/* var [[1, 2], [3, 4], [5, 6]], indices [0, 2, 0], grad [[1, 1], [2, 2], [3, 3]], lr 0.5:
 *   entry 0, row 0: [1, 2] - 0.5 * [1, 1] = [0.5, 1.5]
 *   entry 1, row 2: [5, 6] - 0.5 * [2, 2] = [4, 5]
 *   entry 2, row 0: [0.5, 1.5] - 0.5 * [3, 3] = [-1, 0]      (the duplicate accumulates)
 * so var = [[-1, 0], [3, 4], [4, 5]]. */
static void worked_sgd(void **state) {
    (void)state;
    float v[6] = {1, 2, 3, 4, 5, 6}, g[6] = {1, 1, 2, 2, 3, 3}, lr = 0.5f;
    int64_t idx[3] = {0, 2, 0};
    ndx_tensor var = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){3, 2}, v);
    ndx_tensor grad = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){3, 2}, g);
    ndx_tensor lrt = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &lr);
    ndx_tensor it = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){3}, idx);
    ndx_error err;
    assert_ok(ndx_sparse_apply_sgd(&var, &lrt, &grad, &it, NULL, &err), &err);
    const float want[6] = {-1, 0, 3, 4, 4, 5};
    assert_memory_equal(v, want, sizeof want);
}

/* The same with Adagrad (V1, update_slots), accum [[15, 15], [1, 1], [12, 12]]:
 *   entry 0, row 0: accum 15 + 1 = 16; var 1 - (0.5 * 1) * (1 / 4) = 0.875 (2 -> 1.875)
 *   entry 1, row 2: accum 12 + 4 = 16; var 5 - (0.5 * 2) * (1 / 4) = 4.75  (6 -> 5.75)
 *   entry 2, row 0: accum 16 + 9 = 25; var 0.875 - (0.5 * 3) * (1 / 5) = 0.875 - 0.3
 * where 1 / 5 rounds to float 0.2f and 1.5 * 0.2f to 0.3f, so row 0 ends as
 * [0.875f - 0.3f, 1.875f - 0.3f]; accum = [[25, 25], [1, 1], [16, 16]].
 * V2 with epsilon 1 instead divides by sqrt(accum) + 1: row 2 gets 5 - 1 / 5 and 6 - 1 / 5;
 * row 0 gets 1 - 0.5 / 5 - 1.5 / 6 = 1 - 0.1 - 0.25 (each step rounded to float). */
static void worked_adagrad(void **state) {
    (void)state;
    float v[6] = {1, 2, 3, 4, 5, 6}, a[6] = {15, 15, 1, 1, 12, 12}, g[6] = {1, 1, 2, 2, 3, 3};
    float lr = 0.5f, eps = 1.0f;
    int32_t idx[3] = {0, 2, 0};
    ndx_tensor var = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){3, 2}, v);
    ndx_tensor accum = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){3, 2}, a);
    ndx_tensor grad = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){3, 2}, g);
    ndx_tensor lrt = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &lr);
    ndx_tensor et = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &eps);
    ndx_tensor it = ndx_tensor_make(NDX_INT32, 1, (int64_t[]){3}, idx);
    ndx_error err;
    assert_ok(ndx_sparse_apply_adagrad(&var, &accum, &lrt, NULL, &grad, &it, 1, NULL, &err), &err);
    const float want_v[6] = {0.875f - 0.3f, 1.875f - 0.3f, 3, 4, 4.75f, 5.75f};
    const float want_a[6] = {25, 25, 1, 1, 16, 16};
    assert_memory_equal(v, want_v, sizeof want_v);
    assert_memory_equal(a, want_a, sizeof want_a);

    float v2[6] = {1, 2, 3, 4, 5, 6}, a2[6] = {15, 15, 1, 1, 12, 12};
    var.data = v2;
    accum.data = a2;
    assert_ok(ndx_sparse_apply_adagrad(&var, &accum, &lrt, &et, &grad, &it, 1, NULL, &err), &err);
    /* entry 0: 0.5 / (4 + 1) = 0.1f; entry 2: 1.5 / (5 + 1) = 0.25; entry 1: 1 / (4 + 1). */
    float tenth = 0.5f / 5.0f, fifth = 1.0f / 5.0f;
    const float want_v2[6] = {(1 - tenth) - 0.25f, (2 - tenth) - 0.25f, 3, 4, 5 - fifth, 6 - fifth};
    assert_memory_equal(v2, want_v2, sizeof want_v2);
    assert_memory_equal(a2, want_a, sizeof want_a);
}

/* ---- against the reference ---------------------------------------------------------------------
 */

static void every_dtype_rank_and_index_dtype(void **state) {
    (void)state;
    test_rng r = {11};
    const int64_t shapes[3][3] = {{7}, {9, 5}, {6, 3, 4}};
    const int ranks[3] = {1, 2, 3};
    for (int d = 0; d < APPLY_DTYPES; d++) {
        ndx_dtype dt = apply_dtypes[d];
        for (int sh = 0; sh < 3; sh++)
            for (int ix = 0; ix < 2; ix++)
                for (int st = 0; st < STEPS; st++)
                    for (int trial = 0; trial < 3; trial++) {
                        int rank = ranks[sh];
                        ndx_tensor var = test_tensor(dt, 0, rank, shapes[sh]);
                        ndx_tensor accum = test_tensor(dt, 0, rank, shapes[sh]);
                        int64_t n = trial == 0 ? 0 : rng_range(&r, 1, 20);
                        int64_t gshape[3] = {n, shapes[sh][1], shapes[sh][2]};
                        ndx_tensor grad = test_tensor(dt, 0, rank, gshape);
                        ndx_tensor idx = test_tensor(ix ? NDX_INT64 : NDX_INT32, 0, 1, &n);
                        /* Few rows, many entries: duplicates in every case. */
                        test_fill_indices(&r, &idx, 0, shapes[sh][0] - 1);
                        fill(&r, &var, -4, 4);
                        fill(&r, &accum, 0.25, 4);
                        fill(&r, &grad, -2, 2);
                        ndx_tensor lr = scalar(dt, test_is_complex(dt) ? CMPLX(0.25, 0.125) : 0.25);
                        ndx_tensor eps = scalar(dt, 0.125);
                        check_case(every_step[st], &var, &accum, &lr, &eps, &grad, &idx,
                                   1 + trial % 2, NDX_BAD_INDICES_ERROR);
                        test_tensor_free(&var);
                        test_tensor_free(&accum);
                        test_tensor_free(&grad);
                        test_tensor_free(&idx);
                        test_tensor_free(&lr);
                        test_tensor_free(&eps);
                    }
    }
}

/* Rows of one element in a rank-3 var ([5, 1, 1]) use V1's division form, as a rank-1 var. */
static void single_element_rows(void **state) {
    (void)state;
    test_rng r = {12};
    ndx_tensor var = test_tensor_v(NDX_FLOAT32, 0, 3, 5, 1, 1);
    ndx_tensor accum = test_tensor_v(NDX_FLOAT32, 0, 3, 5, 1, 1);
    ndx_tensor grad = test_tensor_v(NDX_FLOAT32, 0, 3, 40, 1, 1);
    ndx_tensor idx = test_tensor_v(NDX_INT64, 0, 1, 40);
    test_fill_indices(&r, &idx, 0, 4);
    fill(&r, &var, -4, 4);
    fill(&r, &accum, 0.1, 3);
    fill(&r, &grad, -2, 2);
    ndx_tensor lr = scalar(NDX_FLOAT32, 0.3);
    check_case(every_step[1], &var, &accum, &lr, NULL, &grad, &idx, 1, NDX_BAD_INDICES_ERROR);
    test_tensor_free(&var);
    test_tensor_free(&accum);
    test_tensor_free(&grad);
    test_tensor_free(&idx);
    test_tensor_free(&lr);
}

/* ---- thread counts -----------------------------------------------------------------------------
 */

/* Large enough for the owned path (many rows) and the columns path (3 rows of 2048): results at
 * 1, 2 and 3 threads are the same bytes, and the reference's. Half the entries crowd into a few
 * rows, so duplicates are everywhere. */
static void same_bits_at_any_thread_count(void **state) {
    (void)state;
    test_rng r = {13};
    const struct {
        ndx_dtype dt;
        int64_t rows, cols, entries;
    } cases[] = {
        {NDX_FLOAT32, 4096, 64, 16384},
        {NDX_BFLOAT16, 2048, 96, 8192},
        {NDX_COMPLEX128, 1024, 16, 4096},
        {NDX_FLOAT32, 3, 2048, 200},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ndx_dtype dt = cases[c].dt;
        int64_t shape[2] = {cases[c].rows, cases[c].cols};
        int64_t gshape[2] = {cases[c].entries, cases[c].cols};
        ndx_tensor var0 = test_tensor(dt, 0, 2, shape), accum0 = test_tensor(dt, 0, 2, shape);
        ndx_tensor grad = test_tensor(dt, 0, 2, gshape);
        ndx_tensor idx = test_tensor(NDX_INT64, 0, 1, &cases[c].entries);
        for (int64_t i = 0; i < cases[c].entries; i++)
            test_set_index(
                &idx, i, rng_below(&r, rng_below(&r, 2) && cases[c].rows > 7 ? 7 : cases[c].rows));
        fill(&r, &var0, -4, 4);
        fill(&r, &accum0, 0.25, 4);
        fill(&r, &grad, -1, 1);
        ndx_tensor lr = scalar(dt, 0.01), eps = scalar(dt, 1e-3);
        for (int st = 0; st < STEPS; st++) {
            ndx_tensor first_var = {0}, first_accum = {0};
            for (int threads = 1; threads <= TEST_THREADS; threads++) {
                ndx_tensor var = copy_of(&var0), accum = copy_of(&accum0);
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                assert_ok(apply(every_step[st], &var, &accum, &lr, &eps, &grad, &idx, &opt, &err),
                          &err);
                int kept = keep_first_or_assert_same(&first_var, &var, threads);
                keep_first_or_assert_same(&first_accum, &accum, threads);
                if (!kept) {
                    test_tensor_free(&var);
                    test_tensor_free(&accum);
                }
            }
            assert_reference(every_step[st], &first_var, &first_accum, &var0, &accum0, &lr, &eps,
                             &grad, &idx);
            test_tensor_free(&first_var);
            test_tensor_free(&first_accum);
        }
        test_tensor_free(&var0);
        test_tensor_free(&accum0);
        test_tensor_free(&grad);
        test_tensor_free(&idx);
        test_tensor_free(&lr);
        test_tensor_free(&eps);
    }
}

/* ---- empty and skipped -------------------------------------------------------------------------
 */

static void empty_indices_change_nothing(void **state) {
    (void)state;
    test_rng r = {14};
    for (int rows = 0; rows <= 3; rows += 3) {
        ndx_tensor var = test_tensor_v(NDX_FLOAT32, 0, 2, rows, 4);
        ndx_tensor accum = test_tensor_v(NDX_FLOAT32, 0, 2, rows, 4);
        ndx_tensor grad = test_tensor_v(NDX_FLOAT32, 0, 2, 0, 4);
        ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 1, 0);
        ndx_tensor lr = scalar(NDX_FLOAT32, 0.5);
        fill(&r, &var, -1, 1);
        fill(&r, &accum, 1, 2);
        ndx_tensor gv = copy_of(&var), ga = copy_of(&accum);
        ndx_error err;
        for (int st = 0; st < STEPS; st++) {
            assert_ok(apply(every_step[st], &var, &accum, &lr, &lr, &grad, &idx, NULL, &err), &err);
            assert_unchanged(&gv, &var);
            assert_unchanged(&ga, &accum);
        }
        test_tensor_free(&gv);
        test_tensor_free(&ga);
        test_tensor_free(&var);
        test_tensor_free(&accum);
        test_tensor_free(&grad);
        test_tensor_free(&idx);
        test_tensor_free(&lr);
    }
}

/* NDX_BAD_INDICES_IGNORE skips entries out of range (the reference skips them too). */
static void ignore_policy_skips_bad_entries(void **state) {
    (void)state;
    test_rng r = {15};
    ndx_tensor var0 = test_tensor_v(NDX_FLOAT64, 0, 2, 6, 3);
    ndx_tensor accum0 = test_tensor_v(NDX_FLOAT64, 0, 2, 6, 3);
    ndx_tensor grad = test_tensor_v(NDX_FLOAT64, 0, 2, 30, 3);
    ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 1, 30);
    test_fill_indices(&r, &idx, -3, 8);
    fill(&r, &var0, -1, 1);
    fill(&r, &accum0, 1, 2);
    fill(&r, &grad, -1, 1);
    ndx_tensor lr = scalar(NDX_FLOAT64, 0.5), eps = scalar(NDX_FLOAT64, 0.25);
    for (int st = 0; st < STEPS; st++)
        check_case(every_step[st], &var0, &accum0, &lr, &eps, &grad, &idx, 2,
                   NDX_BAD_INDICES_IGNORE);
    test_tensor_free(&var0);
    test_tensor_free(&accum0);
    test_tensor_free(&grad);
    test_tensor_free(&idx);
    test_tensor_free(&lr);
    test_tensor_free(&eps);
}

/* ---- errors ------------------------------------------------------------------------------------
 */

/* A valid Adagrad V2 call on float32 var [5, 3] with 4 entries, which each error case spoils. */
typedef struct fixture {
    ndx_tensor var, accum, lr, eps, grad, idx;
} fixture;

static fixture make_fixture(test_rng *r) {
    fixture f;
    f.var = test_tensor_v(NDX_FLOAT32, 0, 2, 5, 3);
    f.accum = test_tensor_v(NDX_FLOAT32, 0, 2, 5, 3);
    f.grad = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 3);
    f.idx = test_tensor_v(NDX_INT64, 0, 1, 4);
    f.lr = scalar(NDX_FLOAT32, 0.5);
    f.eps = scalar(NDX_FLOAT32, 0.1);
    fill(r, &f.var, -1, 1);
    fill(r, &f.accum, 1, 2);
    fill(r, &f.grad, -1, 1);
    test_fill_indices(r, &f.idx, 0, 4);
    return f;
}

static void free_fixture(fixture *f) {
    test_tensor_free(&f->var);
    test_tensor_free(&f->accum);
    test_tensor_free(&f->lr);
    test_tensor_free(&f->eps);
    test_tensor_free(&f->grad);
    test_tensor_free(&f->idx);
}

/* Both ops (sgd where the case concerns it) fail with `want` and `needle`, leaving var and accum
 * as they were, at 1 and 2 threads. */
static void expect_failure(fixture *f, int sgd_too, const ndx_options *opt, ndx_status want,
                           const char *needle) {
    ndx_tensor gv = copy_of(&f->var), ga = copy_of(&f->accum);
    ndx_error err;
    for (int threads = 1; threads <= 2; threads++) {
        ndx_options o = opt ? *opt : test_options(threads, NDX_BAD_INDICES_ERROR);
        if (!opt) o.num_threads = threads;
        assert_fails(ndx_sparse_apply_adagrad(&f->var, &f->accum, &f->lr, &f->eps, &f->grad,
                                              &f->idx, 1, &o, &err),
                     &err, want, needle);
        assert_unchanged(&gv, &f->var);
        assert_unchanged(&ga, &f->accum);
        if (!sgd_too) continue;
        assert_fails(ndx_sparse_apply_sgd(&f->var, &f->lr, &f->grad, &f->idx, &o, &err), &err, want,
                     needle);
        assert_unchanged(&gv, &f->var);
    }
    test_tensor_free(&gv);
    test_tensor_free(&ga);
}

static void bad_indices_fail_and_write_nothing(void **state) {
    (void)state;
    test_rng r = {16};
    fixture f = make_fixture(&r);
    test_set_index(&f.idx, 2, 5);
    expect_failure(&f, 1, NULL, NDX_E_OUT_OF_RANGE,
                   "indices[2] = 5 is out of range for var of shape [5, 3] (rows 0 to 4)");
    test_set_index(&f.idx, 1, -1);
    expect_failure(&f, 1, NULL, NDX_E_OUT_OF_RANGE, "indices[1] = -1 is negative");
    free_fixture(&f);
    /* int32 indices, the bad one far into a long list (the parallel read names the first). */
    ndx_tensor var = test_tensor_v(NDX_FLOAT32, 0, 2, 100, 8);
    ndx_tensor accum = test_tensor_v(NDX_FLOAT32, 0, 2, 100, 8);
    ndx_tensor grad = test_tensor_v(NDX_FLOAT32, 0, 2, 100000, 8);
    ndx_tensor idx = test_tensor_v(NDX_INT32, 0, 1, 100000);
    test_fill_indices(&r, &idx, 0, 99);
    test_set_index(&idx, 77777, 100);
    test_set_index(&idx, 99999, -5);
    fill(&r, &var, -1, 1);
    fill(&r, &accum, 1, 2);
    fixture big = {var, accum, scalar(NDX_FLOAT32, 0.5), scalar(NDX_FLOAT32, 0.1), grad, idx};
    expect_failure(&big, 1, NULL, NDX_E_OUT_OF_RANGE, "indices[77777] = 100 is out of range");
    free_fixture(&big);
    /* A var with no rows takes no index. */
    fixture e = make_fixture(&r);
    e.var.shape[0] = e.accum.shape[0] = 0;
    expect_failure(&e, 1, NULL, NDX_E_OUT_OF_RANGE, "for var of shape [0, 3] (no rows)");
    e.var.shape[0] = e.accum.shape[0] = 5;
    free_fixture(&e);
}

static void shape_and_dtype_errors_write_nothing(void **state) {
    (void)state;
    test_rng r = {17};
    fixture f = make_fixture(&r);
    ndx_tensor keep;

    keep = f.accum;
    f.accum.shape[1] = 2;
    expect_failure(&f, 0, NULL, NDX_E_INVALID_ARGUMENT,
                   "accum has shape [5, 2] but var has shape [5, 3]");
    f.accum = keep;

    keep = f.accum;
    f.accum.dtype = NDX_INT32;
    expect_failure(&f, 0, NULL, NDX_E_INVALID_ARGUMENT,
                   "accum must have var's dtype float32, not int32");
    f.accum = keep;

    keep = f.lr;
    f.lr = test_tensor_v(NDX_FLOAT32, 0, 1, 1);
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT, "lr must be a scalar, not of shape [1]");
    test_tensor_free(&f.lr);
    f.lr = scalar(NDX_FLOAT64, 0.5);
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT,
                   "lr must have var's dtype float32, not float64");
    test_tensor_free(&f.lr);
    f.lr = keep;

    keep = f.eps;
    f.eps = test_tensor_v(NDX_FLOAT32, 0, 1, 2);
    expect_failure(&f, 0, NULL, NDX_E_INVALID_ARGUMENT, "epsilon must be a scalar");
    test_tensor_free(&f.eps);
    f.eps = keep;

    keep = f.idx;
    f.idx = test_tensor_v(NDX_INT16, 0, 1, 4);
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT,
                   "indices must be int32 or int64 (TensorFlow's Tindices), not int16");
    test_tensor_free(&f.idx);
    f.idx = test_tensor_v(NDX_INT64, 0, 2, 4, 1);
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT,
                   "indices must have rank 1, not shape [4, 1]");
    test_tensor_free(&f.idx);
    f.idx = keep;

    keep = f.grad;
    f.grad.shape[0] = 3;
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT,
                   "grad has shape [3, 3] but var of shape [5, 3] and indices of shape [4] need "
                   "grad of shape [4, 3]");
    f.grad.shape[0] = 4;
    f.grad.shape[1] = 2;
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT, "need grad of shape [4, 3]");
    f.grad = keep;
    f.grad.rank = 1;
    f.grad.shape[0] = 4;
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT, "grad has shape [4] but");
    f.grad = keep;
    f.grad.dtype = NDX_FLOAT64;
    f.grad.itemsize = 8;
    f.grad.shape[1] = 1; /* same bytes, so the view itself is fine */
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT, "grad must have var's dtype float32");
    f.grad = keep;

    /* Unsupported dtypes, before any shape check. */
    ndx_tensor iv = test_tensor_v(NDX_INT32, 0, 2, 5, 3);
    keep = f.var;
    f.var = iv;
    expect_failure(&f, 1, NULL, NDX_E_UNSUPPORTED, "var of dtype int32 is not supported");
    f.var = keep;
    test_tensor_free(&iv);

    /* A scalar var has no rows. */
    ndx_tensor sv = scalar(NDX_FLOAT32, 1), sa = scalar(NDX_FLOAT32, 1);
    fixture s = f;
    s.var = sv;
    s.accum = sa;
    expect_failure(&s, 1, NULL, NDX_E_INVALID_ARGUMENT, "var must have rank >= 1");
    test_tensor_free(&sv);
    test_tensor_free(&sa);

    /* In-place tensors that share memory. */
    keep = f.grad;
    f.grad.data = (float *)f.var.data + 3;
    f.grad.shape[0] = 4;
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT, "var and grad share memory");
    f.grad = keep;
    keep = f.accum;
    f.accum.data = f.var.data;
    expect_failure(&f, 0, NULL, NDX_E_INVALID_ARGUMENT, "var and accum share memory");
    f.accum = keep;

    /* NULL arguments and malformed views. */
    ndx_error err;
    assert_fails(ndx_sparse_apply_sgd(NULL, &f.lr, &f.grad, &f.idx, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_apply_sgd: var is NULL");
    assert_fails(
        ndx_sparse_apply_adagrad(&f.var, NULL, &f.lr, NULL, &f.grad, &f.idx, 1, NULL, &err), &err,
        NDX_E_INVALID_ARGUMENT, "sparse_apply_adagrad: accum is NULL");
    keep = f.grad;
    f.grad.data = NULL;
    expect_failure(&f, 1, NULL, NDX_E_INVALID_ARGUMENT,
                   "grad has 48 bytes of data but data is NULL");
    f.grad = keep;

    /* Options: a bad policy value; a budget too small for the index scratch (32 bytes). */
    ndx_options bad = {.bad_indices = (ndx_bad_indices)7};
    expect_failure(&f, 1, &bad, NDX_E_INVALID_ARGUMENT, "opt->bad_indices = 7");
    ndx_options tight = {.num_threads = 1, .max_memory = 16};
    expect_failure(&f, 1, &tight, NDX_E_MEMORY_BUDGET, "index scratch");
    free_fixture(&f);

    /* Adagrad refuses rows with no element (TensorFlow's "Inner dimension should be greater than
     * zero"); sgd takes them and checks the indices all the same. */
    ndx_tensor zv = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 0),
               za = test_tensor_v(NDX_FLOAT32, 0, 2, 4, 0);
    ndx_tensor zg = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 0), zi = test_tensor_v(NDX_INT32, 0, 1, 2);
    ndx_tensor lr = scalar(NDX_FLOAT32, 0.5);
    test_set_index(&zi, 0, 3);
    test_set_index(&zi, 1, 1);
    assert_fails(ndx_sparse_apply_adagrad(&zv, &za, &lr, NULL, &zg, &zi, 1, NULL, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "var of shape [4, 0] has no element per row");
    assert_ok(ndx_sparse_apply_sgd(&zv, &lr, &zg, &zi, NULL, &err), &err);
    test_set_index(&zi, 1, 4);
    assert_fails(ndx_sparse_apply_sgd(&zv, &lr, &zg, &zi, NULL, &err), &err, NDX_E_OUT_OF_RANGE,
                 "indices[1] = 4 is out of range");
    test_tensor_free(&zv);
    test_tensor_free(&za);
    test_tensor_free(&zg);
    test_tensor_free(&zi);
    test_tensor_free(&lr);
}

/* ---- infer ----------------------------------------------------------------------------------- */

static void infer_on_partial_specs(void **state) {
    (void)state;
    const int64_t U = NDX_UNKNOWN;
    ndx_spec var = spec(NDX_FLOAT32, 2, (int64_t[]){U, U});
    ndx_spec accum = spec(NDX_FLOAT32, 2, (int64_t[]){100, U});
    ndx_spec lr = spec(NDX_FLOAT32, 0, NULL);
    ndx_spec grad = spec(NDX_FLOAT32, 2, (int64_t[]){U, 8});
    ndx_spec idx = spec(NDX_INT32, 1, (int64_t[]){U});
    ndx_spec out;
    ndx_error err;
    assert_ok(ndx_sparse_apply_adagrad_infer(&var, &accum, &lr, &lr, &grad, &idx, &out, &err),
              &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], 100);
    assert_int_equal(out.shape[1], 8);
    assert_ok(ndx_sparse_apply_sgd_infer(&var, &lr, &grad, &idx, &out, &err), &err);
    assert_int_equal(out.shape[0], U);
    assert_int_equal(out.shape[1], 8);
    /* An unknown rank takes grad's. */
    ndx_spec any = spec(NDX_FLOAT32, U, NULL);
    assert_ok(ndx_sparse_apply_sgd_infer(&any, &lr, &grad, &idx, &out, &err), &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[1], 8);
    assert_ok(ndx_sparse_apply_sgd_infer(&any, &any, &any, &idx, NULL, &err), &err);
    /* What the specs already show is refused with the op's own message. */
    ndx_spec grad3 = spec(NDX_FLOAT32, 2, (int64_t[]){3, 8});
    ndx_spec idx4 = spec(NDX_INT32, 1, (int64_t[]){4});
    assert_fails(ndx_sparse_apply_sgd_infer(&var, &lr, &grad3, &idx4, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "sparse_apply_sgd: grad has shape [3, 8] but var of shape [?, ?] and indices of "
                 "shape [4] need grad of shape [4, ?]");
    ndx_spec v5 = spec(NDX_FLOAT32, 2, (int64_t[]){5, 3}),
             a5 = spec(NDX_FLOAT32, 2, (int64_t[]){5, 2});
    assert_fails(ndx_sparse_apply_adagrad_infer(&v5, &a5, &lr, NULL, &grad, &idx, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "accum has shape [5, 2] but var has shape [5, 3]");
    ndx_spec c = spec(NDX_COMPLEX64, 1, (int64_t[]){U}), s = spec(NDX_STRING, 1, (int64_t[]){U});
    assert_fails(ndx_sparse_apply_sgd_infer(&s, &lr, &grad, &idx, &out, &err), &err,
                 NDX_E_UNSUPPORTED, "var of dtype string is not supported");
    assert_fails(ndx_sparse_apply_sgd_infer(&c, &lr, &grad, &idx, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "lr must have var's dtype complex64, not float32");
    ndx_spec i16 = spec(NDX_INT16, 1, (int64_t[]){U});
    assert_fails(ndx_sparse_apply_sgd_infer(&var, &lr, &grad, &i16, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "not int16");
    ndx_spec zero = spec(NDX_FLOAT32, 3, (int64_t[]){U, 0, U});
    assert_fails(ndx_sparse_apply_adagrad_infer(&zero, &zero, &lr, NULL, &any, &idx, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "no element per row (dim 1 is 0)");
    assert_ok(ndx_sparse_apply_sgd_infer(&zero, &lr, &any, &idx, &out, &err), &err);
}

/* The op and infer agree on concrete tensors: whatever infer refuses, the op refuses alike. */
static void infer_agrees_with_the_op(void **state) {
    (void)state;
    test_rng r = {18};
    fixture f = make_fixture(&r);
    f.grad.shape[0] = 3;
    ndx_spec v = ndx_spec_of(&f.var), a = ndx_spec_of(&f.accum), l = ndx_spec_of(&f.lr),
             e = ndx_spec_of(&f.eps), g = ndx_spec_of(&f.grad), i = ndx_spec_of(&f.idx);
    ndx_error e1, e2;
    ndx_status s1 = ndx_sparse_apply_adagrad_infer(&v, &a, &l, &e, &g, &i, NULL, &e1);
    ndx_status s2 =
        ndx_sparse_apply_adagrad(&f.var, &f.accum, &f.lr, &f.eps, &f.grad, &f.idx, 1, NULL, &e2);
    assert_int_equal(s1, NDX_E_INVALID_ARGUMENT);
    assert_int_equal(s2, s1);
    assert_string_equal(e1.message, e2.message);
    f.grad.shape[0] = 4;
    free_fixture(&f);
}

/* ---- infer against the op on random inputs, many malformed ------------------------------------
 */

static ndx_dtype some_other_dtype(test_rng *r, ndx_dtype dt) {
    ndx_dtype o = rng_below(r, 2) ? NDX_INT32 : apply_dtypes[rng_below(r, APPLY_DTYPES)];
    return o == dt ? NDX_FLOAT64 + (dt == NDX_FLOAT64) : o;
}

static void fill_any(test_rng *r, ndx_tensor *t, double lo, double hi) {
    int ok = 0;
    for (int d = 0; d < APPLY_DTYPES; d++) ok |= t->dtype == apply_dtypes[d];
    if (ok)
        fill(r, t, lo, hi);
    else
        test_fill_random(r, t);
}

/* Perturbs one dim of `dims` (rank n) now and then. */
static void maybe_spoil(test_rng *r, int n, int64_t *dims) {
    if (n > 0 && rng_below(r, 8) == 0) dims[rng_below(r, n)] += rng_range(r, 1, 2);
}

static void infer_agrees_on_random_inputs(void **state) {
    (void)state;
    test_rng r = {20};
    int ran = 0, refused = 0, refused_early = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int adagrad = trial % 2, v2 = adagrad && rng_below(&r, 2);
        ndx_dtype dt = rng_below(&r, 12) == 0 ? some_other_dtype(&r, NDX_FLOAT32)
                                              : apply_dtypes[rng_below(&r, APPLY_DTYPES)];
        int rank = rng_below(&r, 10) == 0 ? 0 : (int)rng_range(&r, 1, 3);
        int64_t dims[4] = {rng_range(&r, 0, 5), rng_range(&r, 0, 3), rng_range(&r, 1, 3), 2};
        if (rng_below(&r, 6)) dims[1] = rng_range(&r, 1, 3); /* zero inner dims now and then */
        int64_t adims[4], gdims[4], n = rng_range(&r, 0, 6);
        memcpy(adims, dims, sizeof dims);
        maybe_spoil(&r, rank, adims);
        gdims[0] = n;
        for (int d = 1; d < 4; d++) gdims[d] = dims[d];
        int grank = rng_below(&r, 10) == 0 ? rank + (int)rng_range(&r, -1, 1) : rank;
        if (grank < 0) grank = 0;
        maybe_spoil(&r, grank, gdims);
        ndx_tensor var = test_tensor(dt, 0, rank, dims);
        ndx_tensor accum =
            test_tensor(rng_below(&r, 12) ? dt : some_other_dtype(&r, dt), 0, rank, adims);
        ndx_tensor grad =
            test_tensor(rng_below(&r, 12) ? dt : some_other_dtype(&r, dt), 0, grank, gdims);
        ndx_dtype lt = rng_below(&r, 12) ? dt : some_other_dtype(&r, dt);
        ndx_tensor lr =
            rng_below(&r, 12) ? test_tensor(lt, 0, 0, NULL) : test_tensor_v(lt, 0, 1, 1);
        ndx_tensor eps = test_tensor(rng_below(&r, 12) ? dt : some_other_dtype(&r, dt), 0, 0, NULL);
        ndx_dtype it = rng_below(&r, 12) == 0 ? NDX_INT16
                       : rng_below(&r, 2)     ? NDX_INT32
                                              : NDX_INT64;
        ndx_tensor idx = rng_below(&r, 12) ? test_tensor(it, 0, 1, &n)
                                           : test_tensor(it, 0, 2, (int64_t[]){n, 1});
        int64_t rows = rank > 0 ? dims[0] : 1;
        if (rng_below(&r, 4) == 0 || rows == 0)
            test_fill_indices(&r, &idx, -1, rows);
        else
            test_fill_indices(&r, &idx, 0, rows - 1);
        fill_any(&r, &var, -2, 2);
        fill_any(&r, &accum, 0.5, 2);
        fill_any(&r, &grad, -1, 1);
        fill_any(&r, &lr, 0.1, 0.5);
        fill_any(&r, &eps, 0.1, 0.5);
        test_inference full = {0}, partial = {0};
        ndx_spec sv = ndx_spec_of(&var), sa = ndx_spec_of(&accum), sl = ndx_spec_of(&lr),
                 se = ndx_spec_of(&eps), sg = ndx_spec_of(&grad), si = ndx_spec_of(&idx);
        ndx_spec pv = test_partial_spec(&r, &var, 1), pa = test_partial_spec(&r, &accum, 1),
                 pl = test_partial_spec(&r, &lr, 1), pe = test_partial_spec(&r, &eps, 1),
                 pg = test_partial_spec(&r, &grad, 1), pi = test_partial_spec(&r, &idx, 1);
        ndx_tensor before_var = copy_of(&var), before_accum = copy_of(&accum);
        ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
        ndx_error err;
        ndx_status s;
        if (adagrad) {
            full.status = ndx_sparse_apply_adagrad_infer(&sv, &sa, &sl, v2 ? &se : NULL, &sg, &si,
                                                         &full.specs[0], &full.err);
            partial.status = ndx_sparse_apply_adagrad_infer(&pv, &pa, &pl, v2 ? &pe : NULL, &pg,
                                                            &pi, &partial.specs[0], &partial.err);
            s = ndx_sparse_apply_adagrad(&var, &accum, &lr, v2 ? &eps : NULL, &grad, &idx, 1, &opt,
                                         &err);
        } else {
            full.status = ndx_sparse_apply_sgd_infer(&sv, &sl, &sg, &si, &full.specs[0], &full.err);
            partial.status =
                ndx_sparse_apply_sgd_infer(&pv, &pl, &pg, &pi, &partial.specs[0], &partial.err);
            s = ndx_sparse_apply_sgd(&var, &lr, &grad, &idx, &opt, &err);
        }
        assert_infer_agrees(&partial, &full, s, &err, 1, &var);
        ran += s == NDX_OK;
        refused += s != NDX_OK;
        refused_early += partial.status != NDX_OK;
        if (s != NDX_OK) {
            assert_unchanged(&before_var, &var);
            assert_unchanged(&before_accum, &accum);
        }
        test_tensor_free(&before_var);
        test_tensor_free(&before_accum);
        test_tensor_free(&var);
        test_tensor_free(&accum);
        test_tensor_free(&grad);
        test_tensor_free(&lr);
        test_tensor_free(&eps);
        test_tensor_free(&idx);
    }
    /* The inputs are neither all good nor all bad, and partial specs refuse some already. */
    assert_true(ran > 300 && refused > 300 && refused_early > 100);
}

/* ---- memory ------------------------------------------------------------------------------------
 */

/* A small call keeps its index scratch (8 bytes per entry) in the call's own space: the caller's
 * allocator is never asked (so one that refuses changes nothing), while the budget still counts
 * those bytes and a budget one byte short fails the call cleanly, before any write. */
static void memory_is_the_index_scratch(void **state) {
    (void)state;
    test_rng r = {21};
    fixture f = make_fixture(&r);
    test_allocator a;
    test_allocator_init(&a);
    ndx_options opt = {.num_threads = 2, .allocator = &a.base};
    ndx_error err;
    assert_ok(
        ndx_sparse_apply_adagrad(&f.var, &f.accum, &f.lr, &f.eps, &f.grad, &f.idx, 1, &opt, &err),
        &err);
    assert_int_equal(a.calls, 0);
    ndx_options budget = {.max_memory = 4 * sizeof(int64_t)};
    assert_ok(ndx_sparse_apply_sgd(&f.var, &f.lr, &f.grad, &f.idx, &budget, &err), &err);
    budget.max_memory--;
    expect_failure(&f, 1, &budget, NDX_E_MEMORY_BUDGET, "index scratch");
    a.refuse = 1;
    assert_ok(ndx_sparse_apply_sgd(&f.var, &f.lr, &f.grad, &f.idx, &opt, &err), &err);
    assert_int_equal(a.calls, 0);
    free_fixture(&f);
}

/* ---- duplicates summed first (NDX_APPLY_SUM_DUPLICATES, Keras's step) ------------------------- */

/* Keras's step, written as Keras's optimizer does it: the distinct indices in order of first
 * appearance (tf.unique), each one's gradient rows summed from zero in index order with every
 * addition rounded to the dtype (tf.math.unsorted_segment_sum), then one kernel step per
 * distinct index with that sum. Entries out of range are skipped. */
static void reference_summed(step s, ndx_tensor *var, ndx_tensor *accum, const ndx_tensor *lr,
                             const ndx_tensor *eps, const ndx_tensor *grad,
                             const ndx_tensor *indices) {
    int64_t rows = var->shape[0], inner = 1, n = indices->shape[0];
    for (int d = 1; d < var->rank; d++) inner *= var->shape[d];
    ndx_dtype dt = var->dtype;
    double complex l = get(lr, 0), e = eps ? get(eps, 0) : 0;
    /* unsorted_segment_sum: per row, zero plus its entries' rows in index order */
    double complex *sum = test_calloc((size_t)(rows * inner + 1), sizeof *sum);
    int64_t *first = test_malloc((size_t)(rows + 1) * sizeof *first);
    for (int64_t r = 0; r < rows; r++) first[r] = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = test_get_index(indices, i);
        if (r < 0 || r >= rows) continue;
        if (first[r] < 0) first[r] = i;
        for (int64_t j = 0; j < inner; j++) {
            double complex g = sum[r * inner + j] + get(grad, i * inner + j);
            if (!test_is_complex(dt)) g = round_to(dt, creal(g));
            if (dt == NDX_COMPLEX64) g = CMPLX((float)creal(g), (float)cimag(g));
            sum[r * inner + j] = g;
        }
    }
    /* unique: one step per distinct row, with its sum */
    for (int64_t i = 0; i < n; i++) {
        int64_t r = test_get_index(indices, i);
        if (r < 0 || r >= rows || first[r] != i) continue;
        for (int64_t j = 0; j < inner; j++) {
            int64_t at = r * inner + j;
            double complex v = get(var, at), a = get(accum, at), g = sum[at];
            if (test_is_complex(dt)) {
                ref_complex(s, &v, &a, g, l, e);
            } else {
                double vr = creal(v), ar = creal(a);
                ref_real(dt, s, inner == 1, &vr, &ar, creal(g), creal(l), creal(e));
                v = vr;
                a = ar;
            }
            put(var, at, v);
            put(accum, at, a);
        }
    }
    test_free(sum);
    test_free(first);
}

static int summed_flags(step s) {
    return NDX_APPLY_SUM_DUPLICATES | (s.update_slots ? NDX_APPLY_UPDATE_SLOTS : 0);
}

/* The case as Keras computes it (tf.keras.optimizers.Adagrad(0.1), accumulators 0.1,
 * epsilon 1e-7): var row 0 = [0, 0], grad rows for ids [0, 0] = [[1, -1], [2, -3]]:
 *   summed g = [3, -4]; accum = 0.1 + 9 = 9.1, 0.1 + 16 = 16.1;
 *   var = -0.1 * 3 / (sqrt(9.1) + 1e-7) = -0.099449..., +0.4 / (sqrt(16.1) + 1e-7) = 0.099689...
 * where the step once per entry gives -0.1/sqrt(1.1) - 0.2/sqrt(5.1) = -0.183904... instead. */
static void worked_summed_adagrad(void **state) {
    (void)state;
    float v[4] = {0, 0, 5, 5}, a[4] = {0.1f, 0.1f, 0.1f, 0.1f}, g[4] = {1, -1, 2, -3};
    float lr = 0.1f, eps = 1e-7f;
    int64_t idx[2] = {0, 0};
    ndx_tensor var = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 2}, v);
    ndx_tensor accum = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 2}, a);
    ndx_tensor grad = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 2}, g);
    ndx_tensor lrt = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &lr);
    ndx_tensor et = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &eps);
    ndx_tensor it = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){2}, idx);
    ndx_error err;
    assert_ok(ndx_sparse_apply_adagrad(&var, &accum, &lrt, &et, &grad, &it,
                                       NDX_APPLY_UPDATE_SLOTS | NDX_APPLY_SUM_DUPLICATES, NULL,
                                       &err),
              &err);
    assert_true(fabs(v[0] - -0.1 * 3 / (sqrt(9.1) + 1e-7)) < 1e-6);
    assert_true(fabs(v[1] - 0.1 * 4 / (sqrt(16.1) + 1e-7)) < 1e-6);
    assert_true(fabs(a[0] - 9.1) < 1e-5 && fabs(a[1] - 16.1) < 1e-5);
    assert_true(v[2] == 5 && v[3] == 5 && a[2] == 0.1f && a[3] == 0.1f);
    /* the raw kernel, once per entry: a different row 0 */
    float v1[4] = {0, 0, 5, 5}, a1[4] = {0.1f, 0.1f, 0.1f, 0.1f};
    var.data = v1;
    accum.data = a1;
    assert_ok(ndx_sparse_apply_adagrad(&var, &accum, &lrt, &et, &grad, &it,
                                       NDX_APPLY_UPDATE_SLOTS, NULL, &err),
              &err);
    assert_true(fabs(v1[0] - (-0.1 / sqrt(1.1) - 0.2 / sqrt(5.1))) < 1e-6);
    /* a flag ndx does not know */
    assert_fails(ndx_sparse_apply_adagrad(&var, &accum, &lrt, &et, &grad, &it, 4, NULL, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "flags 4");
}

/* Every dtype, ranks 1 and 2, V1 and V2, with and without update_slots, many repeats, skipped
 * entries, and 1 to 3 threads on sizes large enough for every path: the same bytes as the
 * Keras reference (complex within a tolerance) and as each other. */
static void summed_duplicates_against_keras_reference(void **state) {
    (void)state;
    test_rng r = {31};
    const step steps[] = {{ADAGRAD_V1, 1}, {ADAGRAD_V1, 0}, {ADAGRAD_V2, 1}, {ADAGRAD_V2, 0}};
    const struct {
        int64_t rows, cols, entries;
    } sizes[] = {{7, 0, 40}, {9, 3, 50}, {4096, 64, 16384}, {3, 2048, 200}, {2000, 5, 3000}};
    for (int d = 0; d < APPLY_DTYPES; d++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            ndx_dtype dt = apply_dtypes[d];
            if (sizes[z].entries > 1000 && dt != NDX_FLOAT32 && dt != NDX_BFLOAT16) continue;
            int rank = sizes[z].cols ? 2 : 1;
            int64_t shape[2] = {sizes[z].rows, sizes[z].cols};
            int64_t gshape[2] = {sizes[z].entries, sizes[z].cols};
            ndx_tensor var0 = test_tensor(dt, 0, rank, shape), accum0 = test_tensor(dt, 0, rank, shape);
            ndx_tensor grad = test_tensor(dt, 0, rank, gshape);
            ndx_tensor idx = test_tensor(z % 2 ? NDX_INT32 : NDX_INT64, 0, 1, &sizes[z].entries);
            for (int64_t i = 0; i < sizes[z].entries; i++) /* half the entries on 7 hot rows */
                test_set_index(&idx, i, rng_below(&r, rng_below(&r, 2) && sizes[z].rows > 7
                                                          ? 7
                                                          : sizes[z].rows));
            fill(&r, &var0, -4, 4);
            fill(&r, &accum0, 0.25, 4);
            fill(&r, &grad, -1, 1);
            ndx_tensor lr = scalar(dt, 0.01), eps = scalar(dt, 1e-3);
            for (size_t st = 0; st < sizeof steps / sizeof steps[0]; st++) {
                ndx_tensor want_var = copy_of(&var0), want_accum = copy_of(&accum0);
                reference_summed(steps[st], &want_var, &want_accum, &lr, &eps, &grad, &idx);
                ndx_tensor first = {0};
                for (int threads = 1; threads <= TEST_THREADS; threads++) {
                    ndx_tensor var = copy_of(&var0), accum = copy_of(&accum0);
                    ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                    ndx_error err;
                    assert_ok(ndx_sparse_apply_adagrad(&var, &accum, &lr,
                                                       steps[st].k == ADAGRAD_V2 ? &eps : NULL,
                                                       &grad, &idx, summed_flags(steps[st]), &opt,
                                                       &err),
                              &err);
                    assert_close(&var, &want_var, "var");
                    assert_close(&accum, &want_accum, "accum");
                    if (!keep_first_or_assert_same(&first, &var, threads)) test_tensor_free(&var);
                    test_tensor_free(&accum);
                }
                test_tensor_free(&first);
                test_tensor_free(&want_var);
                test_tensor_free(&want_accum);
            }
            /* bad entries skipped (bad_indices ignore) are in no sum */
            int64_t n = sizes[z].entries;
            test_set_index(&idx, n - 1, -3);
            test_set_index(&idx, n / 2, sizes[z].rows + 5);
            ndx_tensor want_var = copy_of(&var0), want_accum = copy_of(&accum0);
            reference_summed(steps[2], &want_var, &want_accum, &lr, &eps, &grad, &idx);
            ndx_tensor var = copy_of(&var0), accum = copy_of(&accum0);
            ndx_options opt = test_options(2, NDX_BAD_INDICES_IGNORE);
            ndx_error err;
            assert_ok(ndx_sparse_apply_adagrad(&var, &accum, &lr, &eps, &grad, &idx,
                                               summed_flags(steps[2]), &opt, &err),
                      &err);
            assert_close(&var, &want_var, "var (skipped entries)");
            assert_close(&accum, &want_accum, "accum (skipped entries)");
            /* and under the error policy they fail the call, writing nothing */
            ndx_options strict = test_options(2, NDX_BAD_INDICES_ERROR);
            ndx_tensor before = copy_of(&var);
            assert_fails(ndx_sparse_apply_adagrad(&var, &accum, &lr, &eps, &grad, &idx,
                                                  summed_flags(steps[2]), &strict, &err),
                         &err, NDX_E_OUT_OF_RANGE, "is out of range");
            assert_unchanged(&before, &var);
            test_tensor_free(&before);
            test_tensor_free(&var);
            test_tensor_free(&accum);
            test_tensor_free(&want_var);
            test_tensor_free(&want_accum);
            test_tensor_free(&var0);
            test_tensor_free(&accum0);
            test_tensor_free(&grad);
            test_tensor_free(&idx);
            test_tensor_free(&lr);
            test_tensor_free(&eps);
        }
}

/* The scratch of a summed call: 8 bytes per index for the rows, 8 for the links and a table of
 * 8-byte buckets (a power of two, at least twice the indices): 4 indices take 32 + 32 + 64. */
static void summed_scratch_is_charged(void **state) {
    (void)state;
    test_rng r = {32};
    fixture f = make_fixture(&r);
    ndx_options budget = {.max_memory = 128};
    ndx_error err;
    int flags = NDX_APPLY_UPDATE_SLOTS | NDX_APPLY_SUM_DUPLICATES;
    assert_ok(ndx_sparse_apply_adagrad(&f.var, &f.accum, &f.lr, &f.eps, &f.grad, &f.idx, flags,
                                       &budget, &err),
              &err);
    budget.max_memory--;
    ndx_tensor gv = copy_of(&f.var);
    assert_fails(ndx_sparse_apply_adagrad(&f.var, &f.accum, &f.lr, &f.eps, &f.grad, &f.idx, flags,
                                          &budget, &err),
                 &err, NDX_E_MEMORY_BUDGET, "index scratch");
    assert_unchanged(&gv, &f.var);
    test_tensor_free(&gv);
    free_fixture(&f);
}

/* ---- indices changed by another thread ----------------------------------------------------------
 */

typedef struct flipper {
    int64_t *idx;
    int64_t n;
    int stop; /* read and written atomically: only the index writes race, on purpose */
} flipper;

/* Flips entries between rows in range and values far outside (negative and huge) as fast as it
 * can. The writes race with the op's reads by design; each 8-byte store is atomic on the CPUs
 * this runs on, and the op reads every index once into its own scratch. */
static void *flip(void *arg) {
    flipper *f = arg;
    uint64_t k = 0;
    while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
        int64_t at = (int64_t)(k % (uint64_t)f->n);
        int64_t v = (k / 7) % 3 == 0 ? -1000000007 : (k / 7) % 3 == 1 ? INT64_C(1) << 40 : at % 50;
        __atomic_store_n(&f->idx[at], v, __ATOMIC_RELAXED);
        k += 13;
    }
    return NULL;
}

static void indices_mutated_during_calls(void **state) {
    (void)state;
    test_rng r = {19};
    ndx_tensor var = test_tensor_v(NDX_FLOAT32, 0, 2, 50, 64);
    ndx_tensor accum = test_tensor_v(NDX_FLOAT32, 0, 2, 50, 64);
    ndx_tensor grad = test_tensor_v(NDX_FLOAT32, 0, 2, 4096, 64);
    ndx_tensor idx = test_tensor_v(NDX_INT64, 0, 1, 4096);
    ndx_tensor lr = scalar(NDX_FLOAT32, 1e-3), eps = scalar(NDX_FLOAT32, 0.5);
    test_fill_indices(&r, &idx, 0, 49);
    fill(&r, &var, -1, 1);
    fill(&r, &accum, 1, 2);
    fill(&r, &grad, -1, 1);
    flipper fl = {idx.data, 4096, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, flip, &fl), 0);
    int ok = 0, refused = 0;
    for (int call = 0; call < 300; call++) {
        ndx_options opt = test_options(1 + call % 3, call % 5 == 4 ? NDX_BAD_INDICES_IGNORE
                                                                   : NDX_BAD_INDICES_ERROR);
        ndx_error err;
        ndx_status s =
            apply(every_step[call % STEPS], &var, &accum, &lr, &eps, &grad, &idx, &opt, &err);
        if (s == NDX_OK) {
            ok++;
        } else {
            assert_int_equal(s, NDX_E_OUT_OF_RANGE);
            assert_non_null(strstr(err.message, "out of range"));
            refused++;
        }
    }
    __atomic_store_n(&fl.stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    assert_int_equal(ok + refused, 300);
    assert_true(ok > 0); /* the skipping calls always succeed */
    /* Every value stays finite: nothing outside var and accum was read as a row of them. */
    for (int64_t i = 0; i < test_count(&var); i++) assert_true(isfinite(creal(get(&var, i))));
    test_tensor_free(&var);
    test_tensor_free(&accum);
    test_tensor_free(&grad);
    test_tensor_free(&idx);
    test_tensor_free(&lr);
    test_tensor_free(&eps);
}

int main(int argc, char **argv) {
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(worked_sgd),
        cmocka_unit_test(worked_adagrad),
        cmocka_unit_test(every_dtype_rank_and_index_dtype),
        cmocka_unit_test(single_element_rows),
        cmocka_unit_test(same_bits_at_any_thread_count),
        cmocka_unit_test(empty_indices_change_nothing),
        cmocka_unit_test(ignore_policy_skips_bad_entries),
        cmocka_unit_test(bad_indices_fail_and_write_nothing),
        cmocka_unit_test(shape_and_dtype_errors_write_nothing),
        cmocka_unit_test(infer_on_partial_specs),
        cmocka_unit_test(infer_agrees_with_the_op),
        cmocka_unit_test(infer_agrees_on_random_inputs),
        cmocka_unit_test(memory_is_the_index_scratch),
        cmocka_unit_test(indices_mutated_during_calls),
        cmocka_unit_test(worked_summed_adagrad),
        cmocka_unit_test(summed_duplicates_against_keras_reference),
        cmocka_unit_test(summed_scratch_is_charged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
