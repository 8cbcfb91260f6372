/* setdiff1d.c — tf.compat.v1.setdiff1d (ListDiff): the values of the vector x that are not in
 * the vector y, in x's order, with their positions in x.
 *
 * Infer: TensorFlow's checks on partial shapes (the outputs' size waits for the values). Plan:
 * the views, infer, and the scratch: the kept positions and a hash set of y. Count: y's distinct
 * values into the set (open addressing, linear probing, at most half full), then every element
 * of x looked up once, in order, its position kept when absent; values compare as unique's do
 * (unique_key.h), which is TensorFlow's std::unordered_set equality. Outputs: checked or
 * allocated, both, before the first write. Run: out and idx from the kept positions. */
#include "unique_key.h"

/* TensorFlow's limit on x, for either out_idx ("x too large for int32 indexing"). */
#define INT32_ELEMENTS 2147483647

static const char op[] = "setdiff1d";

typedef struct setdiff_plan {
    const unsigned char *x, *y;
    size_t size;          /* element bytes */
    unique_key key;
    int64_t n, m;         /* the lengths of x and y */
    ndx_dtype dtype, idx_dtype;
    int64_t capacity;     /* hash set slots: a power of two >= 2m (>= 16) */
    size_t scratch_bytes; /* kept positions [n] (8 bytes each), then the slots (8 bytes each) */
} setdiff_plan;

/* ---- infer ------------------------------------------------------------------------------- */

static ndx_status check_vector(const ndx_spec *s, const char *what, ndx_error *err) {
    if (s->rank == NDX_UNKNOWN || s->rank == 1) return NDX_OK;
    char dims[NDX_DIMS_TEXT];
    ndx_format_spec_dims(dims, sizeof dims, s);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s should be a 1D vector, but it has shape %s",
                    op, what, dims);
}

/* Every check on specs valid on their own; out = [?] of x's type, idx = [?] of out_idx (both 0
 * when x is known to be empty). */
static ndx_status infer_checked(const ndx_spec *x, const ndx_spec *y, ndx_dtype out_idx,
                                ndx_spec *out, ndx_spec *idx, ndx_error *err) {
    unique_key key;
    if (!unique_key_of(x->dtype, &key) || x->dtype == NDX_BOOL)
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        "%s: x of dtype %s is not supported (TensorFlow's ListDiff takes real "
                        "numbers and strings)",
                        op, ndx_dtype_name(x->dtype));
    if (y->dtype != x->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: y must have x's dtype %s, not %s", op,
                        ndx_dtype_name(x->dtype), ndx_dtype_name(y->dtype));
    if (x->dtype == NDX_STRING && x->itemsize && y->itemsize && x->itemsize != y->itemsize)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: y's strings are %zu bytes wide but x's %zu; they must be one width",
                        op, y->itemsize, x->itemsize);
    if (out_idx != NDX_INT32 && out_idx != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out_idx must be int32 or int64, not %s",
                        op, ndx_dtype_name(out_idx));
    NDX_TRY(check_vector(x, "x", err));
    NDX_TRY(check_vector(y, "y", err));
    int64_t n = x->rank == 1 ? x->shape[0] : NDX_UNKNOWN;
    if (n >= INT32_ELEMENTS)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: x too large for int32 indexing (%lld elements; at most %d)", op,
                        (long long)n, INT32_ELEMENTS - 1);
    int64_t k = n == 0 ? 0 : NDX_UNKNOWN;
    *out = ndx_spec_make(x->dtype, 1, &k);
    out->itemsize = x->itemsize ? x->itemsize : y->itemsize;
    *idx = ndx_spec_make(out_idx, 1, &k);
    return NDX_OK;
}

ndx_status ndx_setdiff1d_infer(const ndx_spec *x, const ndx_spec *y, ndx_dtype out_idx,
                               ndx_spec *out, ndx_spec *idx, ndx_error *err) {
    ndx_error_clear(err);
    if (!x || !y) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: x or y is NULL", op);
    NDX_TRY(ndx_spec_check_as(x, op, "x", err));
    NDX_TRY(ndx_spec_check_as(y, op, "y", err));
    if (!out || !idx) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out or idx is NULL", op);
    ndx_spec os, is;
    NDX_TRY(infer_checked(x, y, out_idx, &os, &is, err));
    *out = os;
    *idx = is;
    return NDX_OK;
}

/* ---- plan -------------------------------------------------------------------------------- */

static ndx_status plan_make(ndx_call *c, const ndx_tensor *x, const ndx_tensor *y,
                            ndx_dtype out_idx, setdiff_plan *p) {
    if (!x || !y) return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT, "%s: x or y is NULL", op);
    NDX_TRY(ndx_tensor_check_as(x, op, "x", NULL, NULL, c->err));
    NDX_TRY(ndx_tensor_check_as(y, op, "y", NULL, NULL, c->err));
    ndx_spec xs = ndx_spec_of(x), ys = ndx_spec_of(y), os, is;
    NDX_TRY(infer_checked(&xs, &ys, out_idx, &os, &is, c->err));
    memset(p, 0, sizeof *p);
    p->x = x->data;
    p->y = y->data;
    p->size = x->itemsize;
    unique_key_of(x->dtype, &p->key);
    p->n = x->shape[0];
    p->m = y->shape[0];
    p->dtype = x->dtype;
    p->idx_dtype = out_idx;
    p->capacity = 16;
    while (p->capacity < 2 * p->m) p->capacity *= 2; /* m < 2^62: y's bytes fit in size_t */
    size_t kept, slots;
    if (__builtin_mul_overflow((size_t)p->n, sizeof(int64_t), &kept) ||
        __builtin_mul_overflow((size_t)p->capacity, sizeof(int64_t), &slots) ||
        __builtin_add_overflow(kept, slots, &p->scratch_bytes))
        return ndx_fail(c->err, NDX_E_OVERFLOW, "%s: y too large for its hash set", op);
    if (p->n == 0) p->scratch_bytes = 0; /* nothing to look up: y is never read */
    return NDX_OK;
}

/* ---- count ------------------------------------------------------------------------------- */

/* The set's slots hold a position in y + 1 (0: empty); a slot's value is y's element there. */

/* The slot where e is, or the empty slot where its probe ends (*found 0). */
NDX_ALWAYS_INLINE uint64_t probe(const setdiff_plan *p, const int64_t *slots, uint64_t h,
                                 const unsigned char *e, unique_key key, size_t size,
                                 int *found) {
    uint64_t mask = (uint64_t)p->capacity - 1, s = h & mask;
    for (;; s = (s + 1) & mask) {
        int64_t j = slots[s] - 1;
        if (j < 0) break;
        if (elements_equal(p->y + (size_t)j * size, e, key, size)) {
            *found = 1;
            return s;
        }
    }
    *found = 0;
    return s;
}

/* Fills the set with y's values (a NaN, equal to nothing, is left out), then writes to kept[]
 * the positions of x's elements the set lacks; returns how many. Single-threaded, so nothing
 * depends on threads. Cannot fail. */
NDX_ALWAYS_INLINE int64_t count_with(const setdiff_plan *p, void *scratch, unique_key key,
                                     size_t size) {
    int64_t *kept = scratch, *slots = kept + p->n;
    memset(slots, 0, (size_t)p->capacity * sizeof *slots);
    for (int64_t j = 0; j < p->m; j++) {
        const unsigned char *e = p->y + (size_t)j * size;
        int nan = 0, found;
        uint64_t h = element_hash(e, key, size, &nan);
        if (nan) continue;
        uint64_t s = probe(p, slots, h, e, key, size, &found);
        if (!found) slots[s] = j + 1;
    }
    int64_t k = 0;
    for (int64_t i = 0; i < p->n; i++) {
        const unsigned char *e = p->x + (size_t)i * size;
        int nan = 0, found = 0;
        uint64_t h = element_hash(e, key, size, &nan);
        if (!nan) probe(p, slots, h, e, key, size, &found);
        if (!found) kept[k++] = i;
    }
    return k;
}

static int64_t setdiff_count(const setdiff_plan *p, void *scratch) {
    if (p->n == 0) return 0;
    switch (p->key) { /* each key and size its own loop */
    case UNIQUE_F32: return count_with(p, scratch, UNIQUE_F32, 4);
    case UNIQUE_F64: return count_with(p, scratch, UNIQUE_F64, 8);
    case UNIQUE_F16: return count_with(p, scratch, UNIQUE_F16, 2);
    case UNIQUE_BF16: return count_with(p, scratch, UNIQUE_BF16, 2);
    case UNIQUE_STRING: return count_with(p, scratch, UNIQUE_STRING, p->size);
    default:
        switch (p->size) {
        case 1: return count_with(p, scratch, UNIQUE_BYTES, 1);
        case 2: return count_with(p, scratch, UNIQUE_BYTES, 2);
        case 4: return count_with(p, scratch, UNIQUE_BYTES, 4);
        default: return count_with(p, scratch, UNIQUE_BYTES, 8);
        }
    }
}

/* ---- outputs and run --------------------------------------------------------------------- */

static void describe(const setdiff_plan *p, int64_t k, ndx_tensor *out, ndx_tensor *idx) {
    *out = ndx_tensor_make(p->dtype, 1, &k, NULL);
    out->itemsize = p->size;
    *idx = ndx_tensor_make(p->idx_dtype, 1, &k, NULL);
}

static ndx_status plan_and_count(ndx_call *c, const ndx_tensor *x, const ndx_tensor *y,
                                 ndx_dtype out_idx, setdiff_plan *p, void **scratch, int64_t *k) {
    *scratch = NULL;
    NDX_TRY(plan_make(c, x, y, out_idx, p));
    NDX_TRY(ndx_call_scratch(c, p->scratch_bytes, 0, "the kept positions and y's hash set",
                             scratch));
    *k = setdiff_count(p, *scratch);
    return NDX_OK;
}

ndx_status ndx_setdiff1d_shape(const ndx_tensor *x, const ndx_tensor *y, ndx_dtype out_idx,
                               ndx_tensor *out, ndx_tensor *idx, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin_outs(&c, op, NULL, err));
    if (!out || !idx) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out or idx is NULL", op);
    setdiff_plan p;
    void *scratch;
    int64_t k;
    NDX_TRY(plan_and_count(&c, x, y, out_idx, &p, &scratch, &k));
    describe(&p, k, out, idx);
    ndx_call_release(&c, scratch);
    return NDX_OK;
}

ndx_status ndx_setdiff1d(const ndx_tensor *x, const ndx_tensor *y, ndx_dtype out_idx,
                         const ndx_options *opt, ndx_tensor *out, ndx_tensor *idx,
                         ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin_outs(&c, op, opt, err));
    if (!out || !idx) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out or idx is NULL", op);
    setdiff_plan p;
    void *scratch;
    int64_t k;
    NDX_TRY(plan_and_count(&c, x, y, out_idx, &p, &scratch, &k));
    /* Both outputs checked or allocated before either is written; undone on failure. */
    ndx_tensor want_out, want_idx, to = *out, ti = *idx;
    int own_out = 0, own_idx = 0;
    describe(&p, k, &want_out, &want_idx);
    ndx_status st = ndx_call_output(&c, &want_out, &to, 0, "out", &own_out);
    if (st == NDX_OK) st = ndx_call_output(&c, &want_idx, &ti, 0, "idx", &own_idx);
    size_t out_bytes = (size_t)k * p.size, x_bytes = (size_t)p.n * p.size;
    if (st == NDX_OK && ndx_overlaps(to.data, out_bytes, x->data, x_bytes))
        st = ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                      "%s: out overlaps x; it must be separate memory", op);
    if (st != NDX_OK) {
        ndx_call_drop_output(&c, &to, own_out);
        ndx_call_drop_output(&c, &ti, own_idx);
        ndx_call_release(&c, scratch);
        return st;
    }
    const int64_t *kept = scratch;
    unsigned char *o = to.data;
    for (int64_t i = 0; i < k; i++)
        memcpy(o + (size_t)i * p.size, p.x + (size_t)kept[i] * p.size, p.size);
    if (p.idx_dtype == NDX_INT32) {
        int32_t *w = ti.data;
        for (int64_t i = 0; i < k; i++) w[i] = (int32_t)kept[i];
    } else if (k > 0) {
        memcpy(ti.data, kept, (size_t)k * sizeof *kept);
    }
    ndx_call_release(&c, scratch);
    *out = to;
    *idx = ti;
    return NDX_OK;
}
