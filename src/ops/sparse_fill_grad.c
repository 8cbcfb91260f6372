/* sparse_fill_grad.c — SparseFillEmptyRowsGrad, the gradient of sparse_fill_empty_rows: each
 * input entry takes the gradient at the output position it moved to, and the default value the
 * sum of the gradients at the positions no entry moved to (the filled rows), added in increasing
 * position as TensorFlow's kernel adds them.
 *
 * The plan copies reverse_index_map into scratch, checking every position, and marks the
 * positions taken; the run gathers from the checked copy and cannot fail. */

#include "scatter_combine.h"
#include "sparse_tensor.h"

#define GRAD "sparse_fill_empty_rows_grad"

static ndx_status check_vector(const ndx_spec *s, const char *what, ndx_error *err) {
    if (s->rank != NDX_UNKNOWN && s->rank != 1) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, s);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, GRAD ": %s must be a vector, saw: %s", what,
                        dims);
    }
    return NDX_OK;
}

static int is_number(ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k != NDX_KIND_BOOL && k != NDX_KIND_STRING;
}

ndx_status ndx_sparse_fill_empty_rows_grad_infer(const ndx_spec *reverse_index_map,
                                                 const ndx_spec *grad_values, ndx_spec *d_values,
                                                 ndx_spec *d_default_value, ndx_error *err) {
    if (!reverse_index_map || !grad_values)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, GRAD ": an input is NULL");
    NDX_TRY(ndx_check_index_spec(reverse_index_map, GRAD, "reverse_index_map", err));
    NDX_TRY(ndx_spec_check(grad_values, GRAD ": grad_values", err));
    NDX_TRY(check_vector(reverse_index_map, "reverse_index_map", err));
    NDX_TRY(check_vector(grad_values, "grad_values", err));
    if (!is_number(grad_values->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED, GRAD ": grad_values are %s; numbers only",
                        ndx_dtype_name(grad_values->dtype));
    if (!d_values || !d_default_value)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, GRAD ": an output is NULL");
    int64_t n = reverse_index_map->rank == 1 ? reverse_index_map->shape[0] : NDX_UNKNOWN;
    *d_values = ndx_spec_make(grad_values->dtype, 1, &n);
    *d_default_value = ndx_spec_make(grad_values->dtype, 0, NULL);
    return NDX_OK;
}

/* Copies the positions into pos, checking each, and marks the positions taken in `taken`
 * (n_full zero bytes). Fails naming the first position outside [0, n_full). */
static ndx_status read_positions(const ndx_tensor *map, int64_t n, int64_t n_full, int64_t *pos,
                                 unsigned char *taken, ndx_error *err) {
    for (int64_t i = 0; i < n; i++) {
        int64_t q = ndx_read_index(map->data, map->dtype, i);
        if ((uint64_t)q >= (uint64_t)n_full)
            return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                            GRAD ": Elements in reverse index must be in [0, %lld) but got %lld",
                            (long long)n_full, (long long)q);
        pos[i] = q;
        taken[q] = 1;
    }
    return NDX_OK;
}

typedef struct {
    const int64_t *pos;
    const unsigned char *grad;
    unsigned char *d_values;
    size_t size;
} gather_job;

static void gather_range(void *ctx, int64_t b, int64_t e, int worker) {
    (void)worker;
    const gather_job *j = ctx;
    for (int64_t i = b; i < e; i++)
        ndx_copy_item(j->d_values + (size_t)i * j->size, j->grad + (size_t)j->pos[i] * j->size,
                      j->size);
}

ndx_status ndx_sparse_fill_empty_rows_grad(const ndx_tensor *reverse_index_map,
                                           const ndx_tensor *grad_values, const ndx_options *opt,
                                           ndx_tensor *d_values, ndx_tensor *d_default_value,
                                           ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, GRAD, opt, d_values, err));
    if (!d_default_value)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, GRAD ": d_default_value is NULL");
    if (!reverse_index_map || !grad_values)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, GRAD ": an input is NULL");
    NDX_TRY(ndx_check_index_tensor(reverse_index_map, GRAD, "reverse_index_map", NULL, err));
    NDX_TRY(ndx_check_view(grad_values, GRAD ": grad_values", NULL, NULL, err));
    ndx_spec ms = ndx_spec_of(reverse_index_map), gs = ndx_spec_of(grad_values), dv, dd;
    NDX_TRY(ndx_sparse_fill_empty_rows_grad_infer(&ms, &gs, &dv, &dd, err));
    int64_t n = reverse_index_map->shape[0], n_full = grad_values->shape[0];
    size_t size = grad_values->itemsize;
    ndx_combine add;
    ndx_combine_find(NDX_SCATTER_ADD, grad_values->dtype, size, &add);

    void *scratch = NULL;
    ndx_carver c = {NULL, 0};
    ndx_carve(&c, (size_t)n * 8);
    ndx_carve(&c, (size_t)n_full);
    NDX_TRY(ndx_call_scratch(&b, c.used, 1, "position scratch", &scratch));
    c = (ndx_carver){scratch, 0};
    int64_t *pos = ndx_carve(&c, (size_t)n * 8);
    unsigned char *taken = ndx_carve(&c, (size_t)n_full);
    ndx_status st = read_positions(reverse_index_map, n, n_full, pos, taken, err);

    ndx_tensor want_v = ndx_view_of_spec(&dv), want_d = ndx_view_of_spec(&dd);
    want_v.itemsize = want_d.itemsize = size;
    int alloc_v = 0, alloc_d = 0;
    if (st == NDX_OK) st = ndx_call_output(&b, &want_v, d_values, 0, "d_values", &alloc_v);
    if (st == NDX_OK) {
        st = ndx_call_output(&b, &want_d, d_default_value, 0, "d_default_value", &alloc_d);
        if (st != NDX_OK) ndx_call_drop_output(&b, d_values, alloc_v);
    }
    if (st == NDX_OK) {
        gather_job j = {pos, grad_values->data, d_values->data, size};
        ndx_parallel_for(b.threads, n, NDX_SPARSE_GRAIN, gather_range, &j);
        unsigned char sum[16] = {0}; /* zero in every number dtype */
        const unsigned char *g = grad_values->data;
        for (int64_t q = 0; q < n_full; q++)
            if (!taken[q]) add.run(sum, g + (size_t)q * size, 1, size);
        memcpy(d_default_value->data, sum, size);
    }
    ndx_call_release(&b, scratch);
    return st;
}
