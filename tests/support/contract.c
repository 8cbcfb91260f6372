/* contract.c — partial specs, counting allocators and the infer-agrees-with-op check. */
#include "contract.h"

#include <stdio.h>

ndx_spec test_partial_spec(test_rng *r, const ndx_tensor *t, int rank_too) {
    ndx_spec s = ndx_spec_of(t);
    if (rank_too && rng_below(r, 6) == 0) {
        s.rank = NDX_UNKNOWN;
        return s;
    }
    for (int i = 0; i < s.rank; i++)
        if (rng_below(r, 3) == 0) s.shape[i] = NDX_UNKNOWN;
    return s;
}

void test_assert_spec_dims(const ndx_spec *spec, const char *want, const char *file, int line) {
    char text[128];
    ndx_format_spec_dims(text, sizeof text, spec);
    if (strcmp(text, want) != 0)
        fail_msg("%s:%d: spec dims %s, expected %s", file, line, text, want);
}

static void *counting_allocate(void *user, size_t bytes, size_t alignment) {
    test_allocator *a = user;
    a->calls++;
    if (a->refuse) return NULL;
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void *p = aligned_alloc(alignment, rounded);
    if (p) {
        a->live++;
        a->bytes += bytes;
    }
    return p;
}

static void counting_release(void *user, void *block) {
    test_allocator *a = user;
    if (block) a->live--;
    free(block);
}

void test_allocator_init(test_allocator *a) {
    memset(a, 0, sizeof *a);
    a->base.allocate = counting_allocate;
    a->base.release = counting_release;
    a->base.user = a;
}

void test_allocator_free(test_allocator *a, void *block) { counting_release(a, block); }

static void assert_admits(const ndx_spec *spec, const ndx_tensor *t, const char *which, int k,
                          const char *file, int line) {
    if (ndx_spec_admits(spec, t)) return;
    char want[128], have[128];
    ndx_format_spec_dims(want, sizeof want, spec);
    ndx_format_dims(have, sizeof have, t->rank, t->shape);
    fail_msg("%s:%d: output %d is %s %s (itemsize %zu) but infer on %s specs said %s %s "
             "(itemsize %zu)",
             file, line, k, ndx_dtype_name(t->dtype), have, t->itemsize, which,
             ndx_dtype_name(spec->dtype), want, spec->itemsize);
}

void test_assert_infer_agrees(const test_inference *partial, const test_inference *full,
                              ndx_status op_status, const ndx_error *op_err, int n_outputs,
                              const ndx_tensor *outputs, const char *file, int line) {
    if (full->status != NDX_OK &&
        (op_status != full->status || strcmp(op_err->message, full->err.message) != 0))
        fail_msg("%s:%d: infer refused (%s: %s) but the op gave %s: %s", file, line,
                 ndx_status_name(full->status), full->err.message, ndx_status_name(op_status),
                 op_err->message);
    if (partial->status != NDX_OK && full->status == NDX_OK)
        fail_msg("%s:%d: infer refused partial specs (%s: %s) but accepted the complete ones",
                 file, line, ndx_status_name(partial->status), partial->err.message);
    if (op_status != NDX_OK) return; /* values the specs cannot see (an index out of range...) */
    if (full->status != NDX_OK || partial->status != NDX_OK)
        fail_msg("%s:%d: the op succeeded but infer refused: %s", file, line,
                 full->status != NDX_OK ? full->err.message : partial->err.message);
    for (int k = 0; k < n_outputs; k++) {
        assert_admits(&full->specs[k], &outputs[k], "complete", k, file, line);
        assert_admits(&partial->specs[k], &outputs[k], "partial", k, file, line);
    }
}
