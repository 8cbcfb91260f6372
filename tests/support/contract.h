/* contract.h — what the op-contract tests share: partial specs made from real tensors, allocators
 * that count or refuse, and the check that infer agrees with the op it describes. */
#ifndef NDX_TEST_CONTRACT_H
#define NDX_TEST_CONTRACT_H

#include "ndx_test.h"

/* ndx_spec_make, short: the contract tests write many specs. */
static inline ndx_spec spec(ndx_dtype dtype, int rank, const int64_t *shape) {
    return ndx_spec_make(dtype, rank, shape);
}

/* Asserts that spec's dims print as `want` ("[2, ?, 3]", "<unknown rank>"...). */
void test_assert_spec_dims(const ndx_spec *spec, const char *want, const char *file, int line);
#define assert_spec_dims(spec, want) test_assert_spec_dims((spec), (want), __FILE__, __LINE__)

/* The spec of t with each dim unknown with probability 1/3, and (when `rank_too`) the whole rank
 * unknown with probability 1/6. */
ndx_spec test_partial_spec(test_rng *r, const ndx_tensor *t, int rank_too);

/* An allocator that counts what it hands out and refuses every call once `refuse` is set. */
typedef struct test_allocator {
    ndx_allocator base; /* pass &a.base in ndx_options.allocator */
    int refuse;
    int calls;    /* every call to allocate, refused ones too: 0 means none was attempted */
    int live;     /* blocks handed out and not yet released */
    size_t bytes; /* total handed out */
} test_allocator;
void test_allocator_init(test_allocator *a);
/* Frees a block the allocator handed out (an output the op allocated through it). */
void test_allocator_free(test_allocator *a, void *block);

/* What infer said about some inputs: its status, error and output specs. */
typedef struct test_inference {
    ndx_status status;
    ndx_error err;
    ndx_spec specs[8];
} test_inference;

/* infer on the complete specs of the op's inputs (`full`) and on partial ones (`partial`) against
 * the op itself: a complete infer error is the op's error, code and message alike; a partial
 * infer error is also a complete one (an unknown dim never invents an error; which check fires
 * first may differ, since the checks that wait come first); when the op succeeds, every output
 * fits both inferred specs. */
void test_assert_infer_agrees(const test_inference *partial, const test_inference *full,
                              ndx_status op_status, const ndx_error *op_err, int n_outputs,
                              const ndx_tensor *outputs, const char *file, int line);
#define assert_infer_agrees(partial, full, os, oe, n, outs) \
    test_assert_infer_agrees((partial), (full), (os), (oe), (n), (outs), __FILE__, __LINE__)

#endif
