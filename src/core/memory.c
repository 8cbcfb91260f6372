/* memory.c — the machine's memory, freeing what the default allocator gave, and comparing a
 * caller's output view with the result. Allocation itself is the call context's (call.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core.h"

size_t ndx_physical_memory(void) {
    /* Asked once: sysconf(_SC_PHYS_PAGES) is a sysinfo system call, too slow for every block a
     * small graph node allocates. A race only computes the same value twice. */
    static _Atomic size_t known; /* 0: not asked yet; SIZE_MAX: cannot be told */
    size_t bytes = known;
    if (bytes) return bytes == SIZE_MAX ? 0 : bytes;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (!(pages > 0 && page > 0 && !__builtin_mul_overflow((size_t)pages, (size_t)page, &bytes)))
        bytes = SIZE_MAX;
    known = bytes;
    return bytes == SIZE_MAX ? 0 : bytes;
}

void ndx_tensor_free(ndx_tensor *t) {
    if (!t) return;
    ndx_block_release(t->data);
    t->data = NULL;
}

ndx_status ndx_output_matches(const char *op, const ndx_tensor *want, const ndx_tensor *out,
                              const char *what, ndx_error *err) {
    if (ndx_same_layout(out, want)) return NDX_OK;
    char have_dims[NDX_DIMS_TEXT], want_dims[NDX_DIMS_TEXT], have_t[32], want_t[32];
    int rank = out->rank < 0 ? 0 : out->rank > NDX_MAX_RANK ? NDX_MAX_RANK : out->rank;
    ndx_format_dims(have_dims, sizeof have_dims, rank, out->shape);
    ndx_format_dims(want_dims, sizeof want_dims, want->rank, want->shape);
    ndx_format_type(have_t, sizeof have_t, out);
    ndx_format_type(want_t, sizeof want_t, want);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: %s is %s %s but the result is %s %s (pass data = NULL to have ndx "
                    "allocate it)",
                    op, what, have_t, have_dims, want_t, want_dims);
}
