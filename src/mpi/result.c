/* result.c — the lookup's output view: checking a caller's, or allocating one the way ndx ops do
 * (the options' allocator, else memory ndx_tensor_free releases). */
#define _POSIX_C_SOURCE 200112L /* posix_memalign, also under -std=c11 */
#include <stdlib.h>

#include "mpi_internal.h"

ndx_status mpi_result_check(const char *op, const ndx_mpi_table *t, const ndx_tensor *want,
                            const ndx_tensor *out, ndx_error *err) {
    if (!out) return mpi_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out on rank %d is NULL", op, t->rank);
    if (!out->data) return NDX_OK;
    ndx_spec exact = ndx_spec_of(want); /* everything known: admits only want's layout */
    if (ndx_spec_admits(&exact, out)) return NDX_OK;
    char have[NDX_DIMS_TEXT], need[NDX_DIMS_TEXT];
    int rank = out->rank < 0 ? 0 : out->rank > NDX_MAX_RANK ? NDX_MAX_RANK : out->rank;
    ndx_format_dims(have, sizeof have, rank, out->shape);
    ndx_format_dims(need, sizeof need, want->rank, want->shape);
    return mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: out on rank %d is %s %s but the result is %s %s (pass data = NULL to "
                    "have it allocated)", op, t->rank, ndx_dtype_name(out->dtype), have,
                    ndx_dtype_name(want->dtype), need);
}

void *mpi_result_alloc(const ndx_options *opt, size_t bytes, const char *op, ndx_error *err) {
    if (bytes == SIZE_MAX) {
        mpi_fail(err, NDX_E_OVERFLOW, "%s: the result's size overflows", op);
        return NULL;
    }
    if (opt && opt->max_memory && bytes > opt->max_memory) {
        mpi_fail(err, NDX_E_MEMORY_BUDGET, "%s: the result needs %zu bytes, over max_memory (%zu)",
                 op, bytes, opt->max_memory);
        return NULL;
    }
    void *p = NULL;
    if (opt && opt->allocator)
        p = opt->allocator->allocate(opt->allocator->user, bytes, 64);
    else if (posix_memalign(&p, 64, bytes) != 0)
        p = NULL;
    if (!p) mpi_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate %zu bytes for the result", op, bytes);
    return p;
}

void mpi_result_release(const ndx_options *opt, void *p) {
    if (!p) return;
    if (opt && opt->allocator)
        opt->allocator->release(opt->allocator->user, p);
    else
        free(p);
}
