/* reference.h — naive reference implementations of every op, written from ndx.h alone (they share
 * no code with src/ops; float16 and bfloat16 round through ndx.h's public conversions, tested on
 * their own in tests/core/test_core.c): plain loops over elements, one index row at a time. The
 * tests and the fuzz harnesses both judge the library against them. Each decides whether
 * the call is valid and, when it is, builds the expected result in tensors it owns.
 *
 * The verdict is REF_OK (the op must accept, unless the memory budget refuses it), REF_ERROR (the
 * op must reject), or REF_EITHER where ndx.h leaves it open or TensorFlow would refuse what ndx
 * may accept (for example index rows into an empty tensor); then an accepting op must still match
 * the result given. `why` receives a short reason for the verdict. */
#ifndef NDX_TEST_REFERENCE_H
#define NDX_TEST_REFERENCE_H

#include <stddef.h>

#include "ndx.h"

typedef enum ref_verdict { REF_OK = 0, REF_ERROR, REF_EITHER } ref_verdict;

#define REF_WHY 192

/* The largest result a reference builds. The tests' large cases need tens of MiB; the fuzz
 * harnesses build the reference with 16 MiB (ndx_reference_fuzz), which is also the budget
 * fz_options sets whenever sizes can grow and the largest output buffer the harnesses hand an op,
 * so a result the reference will not build is one the op must refuse; and no fuzz input spends
 * seconds in the naive loops. */
#ifndef REF_MAX_BYTES
#define REF_MAX_BYTES ((size_t)256 << 20)
#endif

/* The conditions ndx.h gives for a well-formed view (ndx_tensor_check), checked independently. */
int ref_view_ok(const ndx_tensor *t);

/* 1 when `op` accepts elements of dtype d (ndx.h: UPDATE any; ADD, SUB numeric; MIN, MAX integers
 * and floats). */
int ref_scatter_supports(ndx_scatter_op op, ndx_dtype d);

ref_verdict ref_gather_nd(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                          const ndx_options *opt, ndx_tensor *out, char *why);

ref_verdict ref_tensor_scatter_nd(ndx_scatter_op op, const ndx_tensor *tensor,
                                  const ndx_tensor *indices, const ndx_tensor *updates,
                                  const ndx_options *opt, ndx_tensor *out, char *why);

ref_verdict ref_scatter_nd(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                           const int64_t *shape, const ndx_options *opt, ndx_tensor *out,
                           char *why);

ref_verdict ref_dynamic_stitch(int n, const ndx_tensor *indices, const ndx_tensor *data,
                               ndx_tensor *out, char *why);

/* outs: num_partitions tensors (num_partitions >= 1 when the verdict is not REF_ERROR). */
ref_verdict ref_dynamic_partition(const ndx_tensor *data, const ndx_tensor *partitions,
                                  int num_partitions, ndx_tensor *outs, char *why);

/* A sparse tensor as ndx.h defines it: indices [N, R], values [N], dense_shape [R], R >= 1, every
 * index inside dense_shape. ndx.h's SparseTensor says int64 indices, but its general rule lets
 * every index tensor be int16, int32 or int64, and that is what the ops accept. REF_EITHER when
 * the dense shape's element count does not fit in int64 (ndx.h does not say whether such a sparse
 * tensor is valid). */
ref_verdict ref_sparse_valid(const ndx_sparse_tensor *sp, char *why);

ref_verdict ref_sparse_concat(int axis, int n, const ndx_sparse_tensor *inputs,
                              int expand_nonconcat_dim, ndx_sparse_tensor *out, char *why);
ref_verdict ref_sparse_reorder(const ndx_sparse_tensor *in, ndx_sparse_tensor *out, char *why);
ref_verdict ref_sparse_to_dense(const ndx_sparse_tensor *sp, const void *default_value,
                                ndx_tensor *out, char *why);
ref_verdict ref_dense_to_sparse(const ndx_tensor *dense, ndx_sparse_tensor *out, char *why);
/* 1 when the element of `w` bytes at p is dense_to_sparse's zero for dtype d. */
int ref_is_zero(const unsigned char *p, ndx_dtype d, size_t w);

/* ---- segment reductions and embedding bags (ndx.h 5g, 5h; reference_segment.c) ---------------- */

typedef enum ref_segment_family { REF_UNSORTED = 0, REF_SORTED, REF_SPARSE } ref_segment_family;
/* 1 when the family's op takes dtype d on TensorFlow's CPU (an independent copy of the table). */
int ref_segment_supports(ref_segment_family family, ndx_segment_op op, ndx_dtype d);
/* x rounded to real dtype d (float16, bfloat16 and float32 through their conversions). */
double ref_round(ndx_dtype d, double x);
/* A real element of dtype d (the real part of a complex one) as double, and back. */
double ref_load_real(ndx_dtype d, const void *p);
void ref_store_real(ndx_dtype d, void *p, double x);

/* The fills: valid inputs, and `out` a buffer of the result's view that they fill. Floats are
 * rounded to the element type after every step (the kernels' own arithmetic), so results
 * compare bitwise. sparse_segment's and embedding_bag's rows are grouped by ids in order. */
void ref_unsorted_segment_fill(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                               ndx_tensor *out);
void ref_segment_fill(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                      ndx_tensor *out);
void ref_sparse_segment_fill(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *indices,
                             const ndx_tensor *ids, ndx_tensor *out);
/* seg: the bag of each id (non-decreasing, below out's row count). Without weights and clipping
 * the bags are sparse_segment_<combiner>'s; otherwise rows are added one by one in the
 * accumulator type (float for the half types). */
void ref_embedding_bag_fill(const ndx_tensor *params, const ndx_tensor *ids, const int64_t *seg,
                            const ndx_tensor *weights, ndx_segment_op combiner, double max_norm,
                            ndx_tensor *out);

/* Verdict and result (out allocated by the reference) from any inputs. */
ref_verdict ref_unsorted_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                        const ndx_tensor *ids, int64_t num_segments,
                                        ndx_tensor *out, char *why);
ref_verdict ref_segment_reduce(ndx_segment_op op, const ndx_tensor *data, const ndx_tensor *ids,
                               ndx_tensor *out, char *why);
ref_verdict ref_sparse_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                      const ndx_tensor *indices, const ndx_tensor *ids,
                                      int64_t num_segments, ndx_tensor *out, char *why);
ref_verdict ref_embedding_bag(const ndx_tensor *params, const ndx_tensor *ids,
                              const ndx_tensor *bags, const ndx_tensor *weights,
                              const ndx_embedding_bag_attrs *attrs, ndx_tensor *out, char *why);

/* ---- gather, one_hot, boolean_mask, unique (ndx.h 5a; reference_gather.c) ---------------------- */

/* Fills `out` (the result's view, given) with params gathered along axis (axis and batch_dims
 * already non-negative and valid); indices out of range give zeros. */
void ref_gather_fill(const ndx_tensor *params, const ndx_tensor *indices, int axis, int batch_dims,
                     ndx_tensor *out);
ref_verdict ref_gather(const ndx_tensor *params, const ndx_tensor *indices, int axis,
                       int batch_dims, const ndx_options *opt, ndx_tensor *out, char *why);
ref_verdict ref_one_hot(const ndx_tensor *indices, int64_t depth, const ndx_tensor *on_value,
                        const ndx_tensor *off_value, int axis, ndx_tensor *out, char *why);
ref_verdict ref_boolean_mask(const ndx_tensor *tensor, const ndx_tensor *mask, int axis,
                             ndx_tensor *out, char *why);
/* y, idx and counts (always built; a caller of plain unique ignores counts). */
ref_verdict ref_unique(const ndx_tensor *x, int axis, ndx_dtype out_idx, ndx_tensor *y,
                       ndx_tensor *idx, ndx_tensor *counts, char *why);
/* out and idx of setdiff1d: every element of x compared with every element of y. */
ref_verdict ref_setdiff1d(const ndx_tensor *x, const ndx_tensor *y, ndx_dtype out_idx,
                          ndx_tensor *out, ndx_tensor *idx, char *why);
/* ndx_bincount (ndx.h section 5g2): flags NDX_BINCOUNT_DENSE and NDX_BINCOUNT_BINARY_OUTPUT;
 * sums in index order in the weights' dtype. */
ref_verdict ref_bincount(const ndx_tensor *arr, int64_t size, const ndx_tensor *weights,
                         unsigned flags, ndx_tensor *out, char *why);

/* ---- sparse_reduce and sparse_softmax (ndx.h 5d2; reference_sparse_reduce.c) ------------------ */

/* The dense result (dense != NULL) and/or the sparse one (sparse != NULL), allocated here.
 * axes NULL: every dim. */
ref_verdict ref_sparse_reduce(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                              const ndx_tensor *axes, int keep_dims, ndx_tensor *dense,
                              ndx_sparse_tensor *sparse, char *why);
/* The output values [nnz], allocated here. */
ref_verdict ref_sparse_softmax(const ndx_sparse_tensor *sp, ndx_tensor *out, char *why);

/* Frees what a reference built. */
void ref_tensor_free(ndx_tensor *t);
void ref_sparse_free(ndx_sparse_tensor *sp);

/* 1 when got holds want's entries in the same index order (indices compared by value, whatever
 * index dtype got uses). With `ties`, values of entries with equal index rows may come in any
 * order among themselves (sparse_concat does not promise a stable order for duplicates within one
 * input). Floats compare with NaN equal to NaN. */
int ref_sparse_equal(const ndx_sparse_tensor *got, const ndx_sparse_tensor *want, int ties,
                     char *why);

/* sparse_dense_matmul (reference_sparse_matmul.c): op(A) densified, times op(B), in float64
 * (complex128 for complex, wrapping int32 for int32) into *out, and into *magnitude (float64)
 * the sum of |a||b| over each output element's terms, which bounds its rounding error. Both are
 * malloc'd (ref_tensor_free). */
ref_verdict ref_sparse_dense_matmul(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                    int adjoint_a, int adjoint_b, ndx_tensor *out,
                                    ndx_tensor *magnitude, char *why);
/* ---- sparse arithmetic (ndx.h 5d1; reference_sparse_add.c) ------------------------------- */
/* SparseAdd (threshold NULL: 0) and SparseSparseMaximum / Minimum: TensorFlow's loop over a and
 * b in their given order. */
ref_verdict ref_sparse_add(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                           const ndx_tensor *threshold, ndx_sparse_tensor *out, char *why);
ref_verdict ref_sparse_minmax(int maximum, const ndx_sparse_tensor *a,
                              const ndx_sparse_tensor *b, ndx_sparse_tensor *out, char *why);
/* SparseTensorDenseAdd: b, then each entry added at its index in entry order. */
ref_verdict ref_sparse_dense_add(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                 ndx_tensor *out, char *why);
/* SparseAddGrad: TensorFlow's walk; ga / gb zero where it assigns nothing. */
ref_verdict ref_sparse_add_grad(const ndx_tensor *grad, const ndx_tensor *a_indices,
                                const ndx_tensor *b_indices, const ndx_tensor *sum_indices,
                                ndx_tensor *ga, ndx_tensor *gb, char *why);
/* ndx.h section 5d4: sparse_slice (out: the kept entries in input order), sparse_split (outs:
 * num_split tensors), sparse_reshape and sparse_slice_grad (reference_sparse_reshape.c). */
ref_verdict ref_sparse_slice(const ndx_sparse_tensor *sp, const ndx_tensor *start,
                             const ndx_tensor *size, ndx_sparse_tensor *out, char *why);
ref_verdict ref_sparse_split(int64_t axis, int num_split, const ndx_sparse_tensor *sp,
                             ndx_sparse_tensor *outs, char *why);
ref_verdict ref_sparse_reshape(const ndx_tensor *indices, const ndx_tensor *input_shape,
                               const ndx_tensor *new_shape, ndx_tensor *out_indices,
                               ndx_tensor *out_shape, char *why);
/* perm NULL: the dims reversed. */
ref_verdict ref_sparse_transpose(const ndx_sparse_tensor *sp, const ndx_tensor *perm,
                                 ndx_sparse_tensor *out, char *why);
ref_verdict ref_sparse_slice_grad(const ndx_tensor *grad, const ndx_tensor *input_indices,
                                  const ndx_tensor *input_start,
                                  const ndx_tensor *output_indices, ndx_tensor *out, char *why);

#endif /* NDX_TEST_REFERENCE_H */
