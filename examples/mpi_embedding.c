/* A sharded embedding table on 2 ranks: 10 rows of 3 float32 split "mod" (even rows on rank 0,
 * odd rows on rank 1). Each rank looks up its own ids, both add gradients, and a bad id on one
 * rank fails on both. Rank 0 prints what both ranks got.
 *   mpirun -n 2 ./mpi_embedding */
#include <stdio.h>

#include <ndx_mpi.h>

/* Prints one rank's rows; rank 1's come to rank 0 as a message. */
static void show(const char *what, int rank, const float *rows, int count, MPI_Comm comm) {
    float theirs[4 * 3];
    if (rank == 1) {
        MPI_Send(rows, count * 3, MPI_FLOAT, 0, 0, comm);
        return;
    }
    for (int r = 0; r < 2; r++) {
        const float *v = rows;
        int n = count;
        if (r == 1) {
            MPI_Status st;
            MPI_Recv(theirs, 4 * 3, MPI_FLOAT, 1, 0, comm, &st);
            MPI_Get_count(&st, MPI_FLOAT, &n);
            n /= 3;
            v = theirs;
        }
        printf("%s rank %d:", what, r);
        for (int i = 0; i < n; i++) printf(" [%g %g %g]", v[3 * i], v[3 * i + 1], v[3 * i + 2]);
        printf("\n");
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ndx_error err;
    ndx_mpi_table *table;
    const int64_t dims[1] = {3};
    if (ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, 10, 1, dims, NDX_MPI_MOD, NULL, &table,
                             &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Fill this rank's shard: row g holds g, 10 g, 100 g. */
    ndx_mpi_table_info info = ndx_mpi_table_get_info(table);
    ndx_tensor shard = ndx_mpi_table_shard(table);
    float *w = shard.data;
    for (int64_t l = 0; l < info.shard_rows; l++) {
        int64_t g = ndx_mpi_row_global(NDX_MPI_MOD, 10, info.num_ranks, rank, l);
        w[3 * l] = (float)g, w[3 * l + 1] = 10.0f * g, w[3 * l + 2] = 100.0f * g;
    }

    /* Lookup: rank 0 asks for rows 7, 2, 7; rank 1 for rows 0 and 9. */
    int64_t ids0[3] = {7, 2, 7}, ids1[2] = {0, 9};
    int64_t count = rank == 0 ? 3 : 2;
    ndx_tensor ids = ndx_tensor_make(NDX_INT64, 1, &count, rank == 0 ? ids0 : ids1);
    ndx_tensor rows = {.data = NULL}; /* the library allocates [count, 3] */
    if (ndx_mpi_lookup(table, &ids, NULL, &rows, NULL, &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    show("lookup", rank, rows.data, (int)count, MPI_COMM_WORLD);

    /* Update: both ranks add 0.5 to each element of the rows they looked up (rank 0 hits row 7
     * twice), as gradients are applied with scatter-add. */
    float grads[3 * 3];
    for (int i = 0; i < 9; i++) grads[i] = 0.5f;
    int64_t gshape[2] = {count, 3};
    ndx_tensor updates = ndx_tensor_make(NDX_FLOAT32, 2, gshape, grads);
    if (ndx_mpi_update(table, NDX_SCATTER_ADD, &ids, &updates, NULL, NULL, &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (ndx_mpi_lookup(table, &ids, NULL, &rows, NULL, &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    show("after add", rank, rows.data, (int)count, MPI_COMM_WORLD);
    ndx_tensor_free(&rows);

    /* A bad id on rank 1 only: both ranks fail, with the same message, and nothing moves. */
    ids1[1] = 12;
    ndx_tensor none = {.data = NULL};
    ndx_status s = ndx_mpi_lookup(table, &ids, NULL, &none, NULL, &err);
    int all_failed = 0, failed = s == NDX_E_OUT_OF_RANGE;
    MPI_Reduce(&failed, &all_failed, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d ranks failed: %s: %s\n", all_failed, ndx_status_name(s), err.message);

    ndx_mpi_table_free(table);
    MPI_Finalize();
    return 0;
}
