/* layout.c — where rows live: TensorFlow's "mod" and "div" partition strategies as arithmetic. */
#include "mpi_internal.h"

const char *ndx_mpi_strategy_name(ndx_mpi_strategy strategy) {
    switch (strategy) {
    case NDX_MPI_MOD: return "mod";
    case NDX_MPI_DIV: return "div";
    }
    return "invalid";
}

static int layout_valid(ndx_mpi_strategy strategy, int64_t num_rows, int num_ranks) {
    return (strategy == NDX_MPI_MOD || strategy == NDX_MPI_DIV) && num_rows >= 0 && num_ranks >= 1;
}

/* Both strategies give rank k the same number of rows: num_rows / P, plus one for the first
 * num_rows % P ranks. They differ only in which rows. */
int64_t ndx_mpi_shard_rows(ndx_mpi_strategy strategy, int64_t num_rows, int num_ranks, int rank) {
    if (!layout_valid(strategy, num_rows, num_ranks) || rank < 0 || rank >= num_ranks) return -1;
    return num_rows / num_ranks + (rank < num_rows % num_ranks);
}

void ndx_mpi_row_owner(ndx_mpi_strategy strategy, int64_t num_rows, int num_ranks, int64_t row,
                       int *owner, int64_t *local_row) {
    int o = -1;
    int64_t l = -1;
    if (layout_valid(strategy, num_rows, num_ranks) && row >= 0 && row < num_rows) {
        if (strategy == NDX_MPI_MOD) {
            o = (int)(row % num_ranks);
            l = row / num_ranks;
        } else {
            int64_t base = num_rows / num_ranks, extra = num_rows % num_ranks;
            int64_t long_part = extra * (base + 1); /* rows held by the longer shards */
            if (row < long_part) {
                o = (int)(row / (base + 1));
                l = row % (base + 1);
            } else { /* base > 0 here, since row < num_rows */
                o = (int)(extra + (row - long_part) / base);
                l = (row - long_part) % base;
            }
        }
    }
    if (owner) *owner = o;
    if (local_row) *local_row = l;
}

int64_t ndx_mpi_row_global(ndx_mpi_strategy strategy, int64_t num_rows, int num_ranks, int rank,
                           int64_t local_row) {
    int64_t rows = ndx_mpi_shard_rows(strategy, num_rows, num_ranks, rank);
    if (rows < 0 || local_row < 0 || local_row >= rows) return -1;
    if (strategy == NDX_MPI_MOD) return local_row * num_ranks + rank;
    int64_t base = num_rows / num_ranks, extra = num_rows % num_ranks;
    return rank * base + (rank < extra ? rank : extra) + local_row;
}
