/* sparse_merge.h — the merge of two SparseTensors' entries that SparseAdd and
 * SparseSparseMaximum / Minimum share (TensorFlow's loop over a and b: an entry only in a, only
 * in b, or in both, taken in that loop's order), planned and run in pieces. Private to the
 * sparse ops. */
#ifndef NDX_SPARSE_MERGE_H
#define NDX_SPARSE_MERGE_H

#include "sparse_tensor.h"

typedef enum { MERGE_ADD, MERGE_MAXIMUM, MERGE_MINIMUM } merge_kind;

/* A planned merge of a and b (checked views of the same dense shape, indices read into int64
 * copies). Inputs in canonical order (repeats allowed) are cut into pieces at index rows: a cut
 * at row k starts both inputs at their first entry not before k, where TensorFlow's single loop
 * also stands, so each piece merges on its own and any set of cuts gives the same bytes.
 * Other inputs are merged in one piece, in TensorFlow's order. */
typedef struct merge_job {
    merge_kind kind;
    const ndx_sparse_view *a, *b;
    int rank;
    int64_t strides[NDX_MAX_RANK]; /* row-major: for rows inside the shape, the flat offset
                                      orders rows as their coordinates do */
    double threshold_f;            /* SparseAdd's threshold, for float and complex values */
    int64_t threshold_i;           /* ... for integer values */
    int threads;
    int pieces;
    int64_t a_cut[NDX_SPARSE_MAX_CHUNKS + 1], b_cut[NDX_SPARSE_MAX_CHUNKS + 1];
    int64_t first[NDX_SPARSE_MAX_CHUNKS + 1]; /* each piece's first output entry;
                                                 first[pieces] = the output's entry count */
    int64_t count[NDX_SPARSE_MAX_CHUNKS];     /* ndx_merge_write_once: each piece's entries */
    int64_t *out_idx;
    unsigned char *out_values;
    int stream;                               /* the fused merge: rows written by streaming */
} merge_job;

/* Cuts the inputs into pieces and counts each piece's output (the run reads the values: a sum
 * below the threshold drops out). Sets first[] and returns the output's entry count. */
int64_t ndx_merge_count(merge_job *j);
/* Writes the output's indices and values at out_idx / out_values (first[] as counted). */
void ndx_merge_write(merge_job *j);
/* Cuts into pieces (as ndx_merge_count does). */
void ndx_merge_cut(merge_job *j);
/* The merge in one pass, for an output the op allocates itself: out_idx / out_values hold room
 * for a's plus b's entries; each piece writes where its entries would start if nothing merged
 * or dropped, then the pieces move down in order to close the gaps (a long move on the job's
 * threads). Returns the entry count;
 * the entries are those ndx_merge_count and ndx_merge_write give. */
int64_t ndx_merge_write_once(merge_job *j);
/* ndx_merge_write_once with the index check fused into the merge: a and b are views of the
 * caller's int64 indices not yet checked (idx borrowed, both taken as sorted). Each row is read
 * once, checked inside the dense shape and not before the row before it, and the checked copy is
 * what is written. Returns -1 (the output holds garbage) when a row fails either check; the
 * caller then takes the checked path, which gives the error or merges unsorted inputs. */
int64_t ndx_merge_write_fused(merge_job *j);

/* 1 for the values' dtypes of SparseAdd's CPU kernels (and SparseAddGrad's): TensorFlow's real
 * number types but the unsigned ones, float16 and bfloat16, plus complex. */
int ndx_sparse_add_takes(ndx_dtype dt);

#endif /* NDX_SPARSE_MERGE_H */
