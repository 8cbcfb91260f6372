/* memory.c — allocation charged to a per-call budget, and output preparation. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

/* Blocks this large are aligned to 2 MiB and advised to use transparent huge pages: a fresh
 * 4 KiB page costs ~1.6 us to fault in, a huge page a fraction of that per byte. */
#define NDX_HUGE_BLOCK ((size_t)4 << 20)
#define NDX_HUGE_ALIGN ((size_t)2 << 20)

void ndx_budget_init(ndx_budget *b, const ndx_options *opt, const char *op) {
    b->limit = opt ? opt->max_memory : 0;
    b->used = 0;
    b->op = op;
}

size_t ndx_physical_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t bytes;
    if (pages > 0 && page > 0 && !__builtin_mul_overflow((size_t)pages, (size_t)page, &bytes))
        return bytes;
    return 0;
}

ndx_status ndx_acquire(ndx_budget *b, size_t bytes, int zeroed, const char *what, void **p,
                       ndx_error *err) {
    *p = NULL;
    if (bytes == 0) return NDX_OK;
    size_t total;
    if (__builtin_add_overflow(b->used, bytes, &total) || (b->limit && total > b->limit))
        return ndx_fail(err, NDX_E_MEMORY_BUDGET,
                        "%s: %s needs %zu bytes, over the memory budget of %zu bytes "
                        "(%zu already in use by this call)",
                        b->op, what, bytes, b->limit, b->used);
    size_t physical = ndx_physical_memory();
    if (physical && bytes > physical)
        return ndx_fail(err, NDX_E_NO_MEMORY,
                        "%s: %s needs %zu bytes, more than this machine has (%zu bytes)", b->op,
                        what, bytes, physical);
    size_t align = bytes >= NDX_HUGE_BLOCK ? NDX_HUGE_ALIGN : 64;
    void *mem = NULL;
    if (posix_memalign(&mem, align, bytes) != 0 || mem == NULL)
        return ndx_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate %zu bytes for %s", b->op,
                        bytes, what);
#ifdef MADV_HUGEPAGE
    if (bytes >= NDX_HUGE_BLOCK) madvise(mem, bytes & ~(NDX_HUGE_ALIGN - 1), MADV_HUGEPAGE);
#endif
    if (zeroed) memset(mem, 0, bytes);
    b->used = total;
    *p = mem;
    return NDX_OK;
}

void ndx_release(void *p) { free(p); }

void ndx_tensor_free(ndx_tensor *t) {
    if (!t) return;
    free(t->data);
    t->data = NULL;
}

ndx_status ndx_prepare_output(const ndx_tensor *want, ndx_tensor *out, ndx_budget *b, int zeroed,
                              const char *what, int *allocated, ndx_error *err) {
    *allocated = 0;
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", b->op, what);
    int64_t count;
    size_t bytes;
    if (!ndx_dims_product(want->rank, want->shape, &count) ||
        !ndx_bytes_of(count, want->itemsize, &bytes)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, want->rank, want->shape);
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: %s of shape %s is too large to address", b->op,
                        what, dims);
    }
    if (out->data == NULL) {
        void *mem;
        NDX_TRY(ndx_acquire(b, bytes, zeroed, what, &mem, err));
        *out = *want;
        out->data = mem;
        *allocated = mem != NULL;
        return NDX_OK;
    }
    NDX_TRY(ndx_output_matches(b->op, want, out, what, err));
    if (zeroed) memset(out->data, 0, bytes);
    return NDX_OK;
}

ndx_status ndx_output_matches(const char *op, const ndx_tensor *want, const ndx_tensor *out,
                              const char *what, ndx_error *err) {
    int same = out->dtype == want->dtype && out->itemsize == want->itemsize &&
               out->rank == want->rank;
    for (int i = 0; same && i < want->rank; i++) same = out->shape[i] == want->shape[i];
    if (same) return NDX_OK;
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
