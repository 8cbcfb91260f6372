/* sparse_route.h — what sparse_slice and sparse_split share: each entry of a checked input goes
 * to one output piece (or none) with some coordinates shifted, in the input's order. Private to
 * the sparse ops. */
#ifndef NDX_SPARSE_ROUTE_H
#define NDX_SPARSE_ROUTE_H

#include "sparse_tensor.h"

/* Where entries go. A slice has one piece, the box [start, start + size) on every dim (a size
 * <= 0 admits nothing), shifted by -start. A split has `pieces` pieces along `axis`: TensorFlow's
 * first `residual` pieces are `split_size + 1` wide, the rest `split_size`, each shifted by its
 * first coordinate. */
typedef struct sparse_route {
    ndx_sparse_view v; /* the checked copy of the input */
    int pieces;
    int axis; /* the split's axis; -1 for a slice */
    int64_t start[NDX_MAX_RANK], size[NDX_MAX_RANK];
    int64_t split_size, residual;
    int chunks;          /* contiguous ranges of entries, counted and written by one worker each */
    int64_t *counts;     /* [chunks][pieces]: entries; after the count, where each range writes */
    int64_t *totals;     /* [pieces]: entries per piece */
} sparse_route;

/* First coordinate of split piece p along the axis. */
static inline int64_t ndx_route_piece_begin(const sparse_route *r, int64_t p) {
    return p * r->split_size + (p < r->residual ? p : r->residual);
}

/* Checks `sp` and reads its indices into scratch (NDX_E_OUT_OF_RANGE naming the first entry
 * outside dense_shape), then counts the entries of every piece. The route's fields before
 * `chunks` are set by the caller; the checked views are `what`. The call's scratch holds the
 * copy and the counts until ndx_route_release. */
ndx_status ndx_route_count(ndx_call *b, const ndx_sparse_tensor *sp, const char *what,
                           sparse_route *r, void **scratch);
/* Writes every piece's entries into outs[0 .. pieces) (indices and values; dense_shape is the
 * caller's), in the input's order. Cannot fail. */
void ndx_route_write(const sparse_route *r, int threads, ndx_sparse_tensor *outs);

#endif /* NDX_SPARSE_ROUTE_H */
