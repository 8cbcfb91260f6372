/* reference_sparse_fill.h — naive references of the sparse fill ops (ndx.h section 5d5), for the
 * tests and the fuzz harnesses; see reference.h for the verdicts. */
#ifndef NDX_TEST_REFERENCE_SPARSE_FILL_H
#define NDX_TEST_REFERENCE_SPARSE_FILL_H

#include "reference.h"

/* sparse_fill_empty_rows: for each row r in increasing order, the entries whose first coordinate
 * is r in input order, or [r, 0, ...] with *default_value when there are none. Builds out (int64
 * indices and dense_shape), indicator (bool [rows]) and map (int64 [N]); free with
 * ref_sparse_free and ref_tensor_free. */
ref_verdict ref_sparse_fill_empty_rows(const ndx_sparse_tensor *in, const ndx_tensor *default_value,
                                       ndx_sparse_tensor *out, ndx_tensor *indicator,
                                       ndx_tensor *map, char *why);

/* sparse_fill_empty_rows_grad: d_values[i] = grad[map[i]]; d_default the sum, in increasing
 * position, of grad at the positions map does not hold. float64 and int64 only (what the tests
 * check it with); d_values [N] and d_default [] of grad's dtype. */
ref_verdict ref_sparse_fill_empty_rows_grad(const ndx_tensor *map, const ndx_tensor *grad,
                                            ndx_tensor *d_values, ndx_tensor *d_default,
                                            char *why);

/* dense_count_sparse_output (values int32/int64, a vector or a matrix of batch rows): per batch,
 * every value v >= 0 (and < maxlength when > 0) in increasing order with its count, or its
 * weights' sum in input order, or 1 with binary_output. weights: NULL, 0 elements, or values'
 * shape of float64 or int64 (the dtypes the reference adds; others REF_EITHER). */
ref_verdict ref_dense_count_sparse_output(const ndx_tensor *values, const ndx_tensor *weights,
                                          int64_t minlength, int64_t maxlength, int binary,
                                          ndx_sparse_tensor *out, char *why);

#endif
