/* result.c — checking a caller's output view for the lookup (a NULL data is allocated by the
 * lookup itself, through the call's memory: see call.c). */
#include <stdio.h>

#include "mpi_internal.h"

ndx_status mpi_result_check(mpi_call *c, const ndx_tensor *want, const ndx_tensor *out) {
    ndx_error *err = mpi_call_err(c);
    int rank = c->t->rank;
    if (!out)
        return mpi_call_note(c, mpi_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out on rank %d is NULL",
                                         c->op, rank));
    if (!out->data) return NDX_OK;
    ndx_spec exact = ndx_spec_of(want); /* everything known: admits only want's layout */
    if (ndx_spec_admits(&exact, out)) return NDX_OK;
    char have[NDX_DIMS_TEXT], need[NDX_DIMS_TEXT], odd[48] = "";
    int out_rank = out->rank < 0 ? 0 : out->rank > NDX_MAX_RANK ? NDX_MAX_RANK : out->rank;
    ndx_format_dims(have, sizeof have, out_rank, out->shape);
    ndx_format_dims(need, sizeof need, want->rank, want->shape);
    if (out->itemsize != want->itemsize) /* else the two descriptions could read the same */
        snprintf(odd, sizeof odd, " with itemsize %zu (not %zu)", out->itemsize, want->itemsize);
    return mpi_call_note(c, mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                                     "%s: out on rank %d is %s %s%s but the result is %s %s (pass "
                                     "data = NULL to have it allocated)", c->op, rank,
                                     ndx_dtype_name(out->dtype), have, odd,
                                     ndx_dtype_name(want->dtype), need));
}
