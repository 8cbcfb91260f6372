/* ndx_test.c — shared test helpers (see ndx_test.h). */
#include "ndx_test.h"

#include <math.h>
#include <stdio.h>

#include "half.h"

const ndx_dtype test_all_dtypes[] = {
    NDX_BOOL,    NDX_INT8,     NDX_INT16,   NDX_INT32,   NDX_INT64,     NDX_UINT8,
    NDX_UINT16,  NDX_UINT32,   NDX_UINT64,  NDX_FLOAT16, NDX_BFLOAT16,  NDX_FLOAT32,
    NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128, NDX_STRING,
};
const int test_all_dtypes_count = (int)(sizeof test_all_dtypes / sizeof test_all_dtypes[0]);

int test_reduced(void) {
    const char *v = getenv("NDX_TEST_REDUCED");
    return v && *v && strcmp(v, "0") != 0;
}

int64_t test_count(const ndx_tensor *t) {
    int64_t c = 1;
    for (int i = 0; i < t->rank; i++) c *= t->shape[i];
    return c;
}

size_t test_nbytes(const ndx_tensor *t) { return (size_t)test_count(t) * t->itemsize; }

ndx_tensor test_tensor(ndx_dtype dtype, size_t string_width, int rank, const int64_t *shape) {
    ndx_tensor t = dtype == NDX_STRING ? ndx_tensor_string(string_width, rank, shape, NULL)
                                       : ndx_tensor_make(dtype, rank, shape, NULL);
    size_t n = test_nbytes(&t);
    t.data = calloc(n ? n : 1, 1);
    assert_non_null(t.data);
    return t;
}

ndx_tensor test_tensor_from(ndx_dtype dtype, size_t string_width, int rank, const int64_t *shape,
                            const void *values) {
    ndx_tensor t = test_tensor(dtype, string_width, rank, shape);
    if (test_nbytes(&t)) memcpy(t.data, values, test_nbytes(&t));
    return t;
}

ndx_tensor test_strings(size_t width, int rank, const int64_t *shape, const char *const *values) {
    ndx_tensor t = test_tensor(NDX_STRING, width, rank, shape);
    int64_t n = test_count(&t);
    for (int64_t i = 0; i < n; i++) {
        size_t len = strlen(values[i]);
        assert_true(len <= width);
        memcpy((char *)t.data + i * width, values[i], len);
    }
    return t;
}

void test_tensor_free(ndx_tensor *t) {
    free(t->data);
    t->data = NULL;
}

void test_sparse_free(ndx_sparse_tensor *sp) {
    test_tensor_free(&sp->indices);
    test_tensor_free(&sp->values);
    test_tensor_free(&sp->dense_shape);
}

void test_fill_random(test_rng *r, ndx_tensor *t) {
    int64_t n = test_count(t);
    unsigned char *p = t->data;
    for (int64_t i = 0; i < n; i++) {
        unsigned char *e = p + i * t->itemsize;
        int64_t v = rng_range(r, -20, 20);
        switch (t->dtype) {
        case NDX_BOOL: *e = (unsigned char)(v & 1); break;
        case NDX_INT8: *(int8_t *)e = (int8_t)v; break;
        case NDX_UINT8: *(uint8_t *)e = (uint8_t)(v + 20); break;
        case NDX_INT16: *(int16_t *)e = (int16_t)v; break;
        case NDX_UINT16: *(uint16_t *)e = (uint16_t)(v + 20); break;
        case NDX_INT32: *(int32_t *)e = (int32_t)v; break;
        case NDX_UINT32: *(uint32_t *)e = (uint32_t)(v + 20); break;
        case NDX_INT64: *(int64_t *)e = v; break;
        case NDX_UINT64: *(uint64_t *)e = (uint64_t)(v + 20); break;
        case NDX_FLOAT16: *(uint16_t *)e = ndx_float_to_half((float)v); break;
        case NDX_BFLOAT16: *(uint16_t *)e = ndx_float_to_bf16((float)v); break;
        case NDX_FLOAT32: *(float *)e = (float)v; break;
        case NDX_FLOAT64: *(double *)e = (double)v; break;
        case NDX_COMPLEX64: ((float *)e)[0] = (float)v; ((float *)e)[1] = (float)rng_range(r, -9, 9); break;
        case NDX_COMPLEX128: ((double *)e)[0] = (double)v; ((double *)e)[1] = (double)rng_range(r, -9, 9); break;
        case NDX_STRING: {
            memset(e, 0, t->itemsize);
            size_t len = (size_t)rng_below(r, (int64_t)t->itemsize + 1);
            for (size_t k = 0; k < len; k++) e[k] = (unsigned char)('a' + rng_below(r, 26));
            break;
        }
        default: fail_msg("test_fill_random: dtype %d", (int)t->dtype);
        }
    }
}

void test_set_index(ndx_tensor *t, int64_t i, int64_t v) {
    switch (t->dtype) {
    case NDX_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
    case NDX_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case NDX_INT64: ((int64_t *)t->data)[i] = v; break;
    default: fail_msg("test_set_index: not an index dtype");
    }
}

int64_t test_get_index(const ndx_tensor *t, int64_t i) {
    switch (t->dtype) {
    case NDX_INT16: return ((const int16_t *)t->data)[i];
    case NDX_INT32: return ((const int32_t *)t->data)[i];
    case NDX_INT64: return ((const int64_t *)t->data)[i];
    default: fail_msg("test_get_index: not an index dtype");
    }
    return 0;
}

int test_random_axes(test_rng *r, int rank, int64_t *axes, int *reduced) {
    int naxes = 0;
    for (int d = 0; d < rank; d++) {
        if (rng_below(r, 2)) continue;
        reduced[d] = 1;
        axes[naxes++] = rng_below(r, 2) ? d - rank : d;
    }
    for (int i = naxes - 1; i > 0; i--) {
        int j = (int)rng_below(r, i + 1);
        int64_t t = axes[i];
        axes[i] = axes[j];
        axes[j] = t;
    }
    return naxes;
}

int64_t test_reduced_position(int64_t i, int rank, const int64_t *shape, const int *reduced) {
    int64_t rest = i, at = 0, scale = 1;
    for (int d = rank - 1; d >= 0; d--) {
        int64_t c = rest % shape[d];
        rest /= shape[d];
        if (reduced[d]) continue;
        at += c * scale;
        scale *= shape[d];
    }
    return at;
}

void test_fill_indices(test_rng *r, ndx_tensor *t, int64_t lo, int64_t hi) {
    int64_t n = test_count(t);
    for (int64_t i = 0; i < n; i++) test_set_index(t, i, rng_range(r, lo, hi));
}

double test_get_float(const ndx_tensor *t, int64_t i) {
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case NDX_FLOAT16: return ndx_float16_to_float(((const uint16_t *)p)[i]);
    case NDX_BFLOAT16: return ndx_bfloat16_to_float(((const uint16_t *)p)[i]);
    case NDX_FLOAT32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

void test_put_float(ndx_tensor *t, int64_t i, double v) {
    unsigned char *p = t->data;
    switch (t->dtype) {
    case NDX_FLOAT16: ((uint16_t *)p)[i] = ndx_float_to_float16((float)v); break;
    case NDX_BFLOAT16: ((uint16_t *)p)[i] = ndx_float_to_bfloat16((float)v); break;
    case NDX_FLOAT32: ((float *)p)[i] = (float)v; break;
    default: ((double *)p)[i] = v; break;
    }
}

static double special_float(test_rng *r, ndx_dtype dt) {
    switch (rng_below(r, 12)) {
    case 0: return rng_below(r, 2) ? 0.0 : -0.0;
    case 1: return rng_below(r, 2) ? INFINITY : -INFINITY;
    case 2: return NAN;
    case 3: return (dt == NDX_FLOAT32 ? 1e-40 : 1e-310) * (double)rng_range(r, -3, 3);
    default: return (double)rng_range(r, -2000, 2000) / 128.0;
    }
}

ndx_tensor test_special_floats(test_rng *r, ndx_dtype dt, int rank, const int64_t *shape) {
    ndx_tensor t = test_tensor(dt, 0, rank, shape);
    int64_t n = test_count(&t);
    for (int64_t i = 0; i < n; i++) test_put_float(&t, i, special_float(r, dt));
    return t;
}

ndx_tensor test_random_bags(test_rng *r, ndx_bag_form form, int64_t n, ndx_dtype dt) {
    if (form == NDX_BAGS_SEGMENT_IDS) {
        ndx_tensor seg = test_tensor_v(dt, 0, 1, n);
        int64_t s = rng_below(r, 2);
        for (int64_t i = 0; i < n; i++) {
            test_set_index(&seg, i, s);
            s += rng_below(r, 4) == 0 ? rng_below(r, 3) + 1 : 0;
        }
        return seg;
    }
    int64_t count = rng_range(r, 1, 8);
    ndx_tensor off = test_tensor_v(dt, 0, 1, count);
    int64_t pos = 0;
    for (int64_t b = 0; b < count; b++) {
        test_set_index(&off, b, b == 0 ? 0 : pos);
        if (pos < n && rng_below(r, 4)) pos += rng_below(r, n - pos + 1);
    }
    return off;
}

test_bag_inputs test_random_bag_inputs(test_rng *r, ndx_dtype dt, ndx_bag_form form,
                                       int64_t max_ids) {
    test_bag_inputs in;
    int64_t vocab = rng_range(r, 1, 9), d = rng_range(r, 1, 6), n = rng_range(r, 0, max_ids);
    in.params = test_tensor_v(dt, 0, 2, vocab, d);
    for (int64_t i = 0; i < vocab * d; i++)
        test_put_float(&in.params, i, (double)rng_range(r, -300, 300) / 37);
    in.ids = test_tensor_v(rng_below(r, 2) ? NDX_INT32 : NDX_INT64, 0, 1, n);
    test_fill_indices(r, &in.ids, 0, vocab - 1);
    in.bags = test_random_bags(r, form, n, rng_below(r, 2) ? NDX_INT32 : NDX_INT64);
    in.weights = test_tensor_v(dt, 0, 1, n);
    for (int64_t i = 0; i < n; i++)
        test_put_float(&in.weights, i,
                       rng_below(r, 5) == 0 ? 0 : (double)rng_range(r, -40, 90) / 16);
    return in;
}

void test_assert_tensor_eq(const ndx_tensor *a, const ndx_tensor *b, const char *file, int line) {
    char where[512];
    snprintf(where, sizeof where, "%s:%d", file, line);
    if (a->dtype != b->dtype || a->itemsize != b->itemsize)
        fail_msg("%s: dtype %s/%zu vs %s/%zu", where, ndx_dtype_name(a->dtype), a->itemsize,
                 ndx_dtype_name(b->dtype), b->itemsize);
    if (a->rank != b->rank) fail_msg("%s: rank %d vs %d", where, a->rank, b->rank);
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i])
            fail_msg("%s: shape[%d] %lld vs %lld", where, i, (long long)a->shape[i],
                     (long long)b->shape[i]);
    size_t n = test_nbytes(a);
    if (n && memcmp(a->data, b->data, n) != 0) {
        const unsigned char *pa = a->data, *pb = b->data;
        size_t k = 0;
        while (pa[k] == pb[k]) k++;
        fail_msg("%s: element %zu differs (byte %zu: %u vs %u)", where, k / a->itemsize, k,
                 pa[k], pb[k]);
    }
}

void test_assert_sparse_eq(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                           const char *file, int line) {
    test_assert_tensor_eq(&a->indices, &b->indices, file, line);
    test_assert_tensor_eq(&a->values, &b->values, file, line);
    test_assert_tensor_eq(&a->dense_shape, &b->dense_shape, file, line);
}

int test_keep_first_or_assert_same(ndx_tensor *first, const ndx_tensor *out, int threads,
                                   const char *file, int line) {
    if (threads == 1) {
        *first = *out;
        return 1;
    }
    test_assert_tensor_eq(out, first, file, line);
    return 0;
}

int test_keep_first_or_assert_same_sparse(ndx_sparse_tensor *first, const ndx_sparse_tensor *out,
                                          int threads, const char *file, int line) {
    if (threads == 1) {
        *first = *out;
        return 1;
    }
    test_assert_sparse_eq(out, first, file, line);
    return 0;
}

test_guard test_guard_take(const ndx_tensor *t) {
    test_guard g;
    g.bytes = test_nbytes(t);
    g.copy = malloc(g.bytes ? g.bytes : 1);
    assert_non_null(g.copy);
    if (g.bytes) memcpy(g.copy, t->data, g.bytes);
    return g;
}

test_guard test_guard_fill(ndx_tensor *t, unsigned char pattern) {
    if (test_nbytes(t)) memset(t->data, pattern, test_nbytes(t));
    return test_guard_take(t);
}

void test_guard_check(test_guard *g, const ndx_tensor *t, const char *file, int line) {
    if (g->bytes && memcmp(g->copy, t->data, g->bytes) != 0)
        fail_msg("%s:%d: a failed call wrote to its output", file, line);
    free(g->copy);
    g->copy = NULL;
}

void test_assert_fails(ndx_status status, const ndx_error *err, ndx_status want,
                       const char *needle, const char *file, int line) {
    if (status != want)
        fail_msg("%s:%d: expected %s, got %s (%s)", file, line, ndx_status_name(want),
                 ndx_status_name(status), err->message);
    if (err->code != want) fail_msg("%s:%d: err->code disagrees with the status", file, line);
    if (err->message[0] == '\0') fail_msg("%s:%d: empty error message", file, line);
    if (needle && !strstr(err->message, needle))
        fail_msg("%s:%d: message \"%s\" lacks \"%s\"", file, line, err->message, needle);
}
