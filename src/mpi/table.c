/* table.c — creating a sharded table (collectively agreeing on its description), freeing it, and
 * the local views of a shard. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define OP "ndx_mpi_table_create"

/* What every rank must pass alike, agreed with the outcome in one reduction (agree.c). */
enum {
    DESC_DTYPE,
    DESC_STRATEGY,
    DESC_NUM_ROWS,
    DESC_ROW_RANK,
    DESC_SHAPE_NULL, /* 1: row_shape is NULL where row_rank needs one (then no dims are shared) */
    DESC_SHAPE,
    DESC_LEN = DESC_SHAPE + NDX_MAX_RANK
};

static void desc_name(char *buf, size_t cap, int field) {
    static const char *const names[] = {"dtype", "strategy", "num_rows", "row_rank", "row_shape"};
    if (field < DESC_SHAPE)
        snprintf(buf, cap, "%s", names[field]);
    else
        snprintf(buf, cap, "row_shape[%d]", field - DESC_SHAPE);
}

static void desc_show(char *buf, size_t cap, int field, int64_t value) {
    if (field == DESC_DTYPE && ndx_dtype_is_valid((ndx_dtype)value))
        snprintf(buf, cap, "%s", ndx_dtype_name((ndx_dtype)value));
    else if (field == DESC_STRATEGY && (value == NDX_MPI_MOD || value == NDX_MPI_DIV))
        snprintf(buf, cap, "\"%s\"", ndx_mpi_strategy_name((ndx_mpi_strategy)value));
    else if (field == DESC_SHAPE_NULL)
        snprintf(buf, cap, "%s", value ? "NULL" : "an array");
    else
        snprintf(buf, cap, "%lld", (long long)value);
}

/* This rank's description (row_shape only as far as row_rank is valid and row_shape there: a
 * NULL row_shape is said as such, never as dims of 0 that the rank did not pass). */
static mpi_shared describe(ndx_dtype dtype, int64_t num_rows, int row_rank,
                           const int64_t *row_shape, ndx_mpi_strategy strategy) {
    mpi_shared d;
    memset(&d, 0, sizeof d);
    d.count = DESC_LEN;
    d.name = desc_name;
    d.show = desc_show;
    d.value[DESC_DTYPE] = dtype;
    d.value[DESC_STRATEGY] = strategy;
    d.value[DESC_NUM_ROWS] = num_rows;
    d.value[DESC_ROW_RANK] = row_rank;
    d.value[DESC_SHAPE_NULL] = row_rank > 0 && !row_shape;
    for (int i = 0; row_shape && row_rank <= NDX_MAX_RANK && i < row_rank; i++)
        d.value[DESC_SHAPE + i] = row_shape[i];
    return d;
}

/* Everything this rank can check alone, filling the table's sizes. */
static ndx_status check_local(ndx_mpi_table *t, ndx_dtype dtype, int64_t num_rows, int row_rank,
                              const int64_t *row_shape, ndx_mpi_strategy strategy,
                              ndx_error *err) {
    if (!ndx_dtype_is_valid(dtype))
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT, OP ": dtype %d on rank %d is not a dtype",
                        (int)dtype, t->rank);
    ndx_dtype_kind kind = ndx_dtype_kind_of(dtype);
    if (kind == NDX_KIND_BOOL || kind == NDX_KIND_STRING)
        return mpi_fail(err, NDX_E_UNSUPPORTED,
                        OP ": dtype %s on rank %d is not numeric (tables hold numbers)",
                        ndx_dtype_name(dtype), t->rank);
    if (strategy != NDX_MPI_MOD && strategy != NDX_MPI_DIV)
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT, OP ": strategy %d on rank %d is neither mod nor div",
                        (int)strategy, t->rank);
    if (num_rows < 0 || num_rows > INT64_MAX - t->size)
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT, OP ": num_rows %lld on rank %d is out of range",
                        (long long)num_rows, t->rank);
    if (row_rank < 0 || row_rank >= NDX_MAX_RANK)
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT, OP ": row_rank %d on rank %d is not in [0, %d)",
                        row_rank, t->rank, NDX_MAX_RANK);
    if (row_rank > 0 && !row_shape)
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": row_shape is NULL on rank %d, but row_rank is %d", t->rank, row_rank);
    t->dtype = dtype;
    t->itemsize = ndx_dtype_size(dtype);
    t->row_rank = row_rank;
    t->num_rows = num_rows;
    t->strategy = strategy;
    t->row_elems = 1;
    for (int i = 0; i < row_rank; i++) {
        if (row_shape[i] < 0)
            return mpi_fail(err, NDX_E_INVALID_ARGUMENT, OP ": row_shape[%d] = %lld on rank %d is negative",
                            i, (long long)row_shape[i], t->rank);
        t->row_shape[i] = row_shape[i];
        if (__builtin_mul_overflow(t->row_elems, row_shape[i], &t->row_elems))
            return mpi_fail(err, NDX_E_OVERFLOW, OP ": the row size overflows on rank %d", t->rank);
    }
    if (__builtin_mul_overflow((size_t)t->row_elems, t->itemsize, &t->row_bytes) ||
        t->row_bytes > INT_MAX)
        return mpi_fail(err, NDX_E_OVERFLOW,
                        OP ": a row of %lld %s elements on rank %d is more bytes than one MPI "
                        "element can hold (INT_MAX)", (long long)t->row_elems,
                        ndx_dtype_name(dtype), t->rank);
    t->shard_rows = ndx_mpi_shard_rows(strategy, num_rows, t->size, t->rank);
    if (mpi_rows_bytes(t, t->shard_rows) == SIZE_MAX)
        return mpi_fail(err, NDX_E_OVERFLOW, OP ": the shard's size overflows on rank %d", t->rank);
    return NDX_OK;
}

/* This rank's MPI objects: the duplicated communicator, whose errors come back as codes, and the
 * row datatype. Collective (MPI_Comm_dup): every rank calls it, whatever it found so far. */
static ndx_status make_mpi_objects(ndx_mpi_table *t, MPI_Comm comm, ndx_status local,
                                   ndx_error *err) {
    ndx_error spare;
    ndx_error *e = local == NDX_OK ? err : &spare;
    ndx_status s = mpi_checked(MPI_Comm_dup(comm, &t->comm), OP, t->rank, "MPI_Comm_dup", e);
    if (s != NDX_OK) t->comm = MPI_COMM_NULL;
    if (s == NDX_OK)
        s = mpi_checked(MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN), OP, t->rank,
                        "MPI_Comm_set_errhandler", e);
    if (local != NDX_OK) return local;
    if (s == NDX_OK && t->row_bytes > 0) {
        s = mpi_checked(MPI_Type_contiguous((int)t->row_bytes, MPI_BYTE, &t->row_type), OP,
                        t->rank, "MPI_Type_contiguous", err);
        if (s == NDX_OK)
            s = mpi_checked(MPI_Type_commit(&t->row_type), OP, t->rank, "MPI_Type_commit", err);
    }
    return s;
}

/* Frees what the table holds. MPI_Type_free and MPI_Comm_free can only fail on objects this
 * library made and never handed out; there is nobody to tell (ndx_mpi_table_free returns
 * nothing), so their codes are read and dropped. */
static void table_destroy(ndx_mpi_table *t, int on_heap) {
    if (t->row_type != MPI_DATATYPE_NULL) (void)MPI_Type_free(&t->row_type);
    if (t->comm != MPI_COMM_NULL) (void)MPI_Comm_free(&t->comm);
    if (t->owns_shard) ndx_block_free(NULL, t->shard);
    free(t->counts);
    ndx_block_free(NULL, t->scratch);
    if (on_heap) free(t);
}

ndx_status ndx_mpi_table_create(MPI_Comm comm, ndx_dtype dtype, int64_t num_rows, int row_rank,
                                const int64_t *row_shape, ndx_mpi_strategy strategy,
                                void *shard_memory, ndx_mpi_table **table, ndx_error *err) {
    ndx_error e = {NDX_OK, ""};
    int initialized = 0, finalized = 0;
    if (MPI_Initialized(&initialized) != MPI_SUCCESS) initialized = 0;
    if (initialized && MPI_Finalized(&finalized) != MPI_SUCCESS) finalized = 1;
    if (!table || !initialized || finalized) {
        if (table) *table = NULL;
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                        !table ? OP ": table is NULL" : OP ": MPI is not initialised");
    }
    *table = NULL;
    /* A rank that cannot allocate the table still takes part in the collective calls below (on
     * a table on its stack), so that the others hear of it instead of waiting. */
    ndx_mpi_table *t = calloc(1, sizeof *t), on_stack;
    int on_heap = t != NULL;
    if (!on_heap) {
        memset(&on_stack, 0, sizeof on_stack);
        t = &on_stack;
    }
    t->comm = MPI_COMM_NULL;
    t->row_type = MPI_DATATYPE_NULL;
    /* A communicator that cannot even say its rank and size cannot agree on anything: this
     * rank's failure alone. */
    ndx_status s = mpi_checked(MPI_Comm_rank(comm, &t->rank), OP, -1, "MPI_Comm_rank", &e);
    if (s == NDX_OK) s = mpi_checked(MPI_Comm_size(comm, &t->size), OP, t->rank, "MPI_Comm_size", &e);
    if (s != NDX_OK) {
        if (on_heap) free(t);
        if (err) *err = e;
        return s;
    }

    s = on_heap ? check_local(t, dtype, num_rows, row_rank, row_shape, strategy, &e)
                : mpi_fail(&e, NDX_E_NO_MEMORY, OP ": cannot allocate the table on rank %d", t->rank);
    /* The exchange's count arrays, kept by the table: every later call can take part in the
     * counts' exchange, even one that failed before it could allocate anything. */
    if (s == NDX_OK && !(t->counts = calloc(4 * (size_t)t->size, sizeof *t->counts)))
        s = mpi_fail(&e, NDX_E_NO_MEMORY, OP ": cannot allocate the exchange's counts on rank %d", t->rank);
    s = make_mpi_objects(t, comm, s, &e);
    if (s == NDX_OK) {
        t->owns_shard = shard_memory == NULL;
        t->shard = shard_memory;
        if (t->owns_shard) {
            char where[64];
            snprintf(where, sizeof where, OP " on rank %d", t->rank);
            /* At least a byte: the shard's view is never NULL, even with no bytes. */
            size_t bytes = mpi_rows_bytes(t, t->shard_rows);
            s = ndx_block_alloc(NULL, where, "the shard", bytes ? bytes : 1, NULL, &t->shard, &e);
            if (s == NDX_OK) memset(t->shard, 0, bytes);
        }
    }
    mpi_shared desc = describe(dtype, num_rows, row_rank, row_shape, strategy);
    s = mpi_agree(comm, t->rank, OP, &desc, s, &e);
    if (s != NDX_OK) {
        table_destroy(t, on_heap);
        if (err) *err = e;
        return s;
    }
    *table = t;
    return NDX_OK;
}

void ndx_mpi_table_free(ndx_mpi_table *t) {
    if (t) table_destroy(t, 1);
}

ndx_mpi_table_info ndx_mpi_table_get_info(const ndx_mpi_table *t) {
    ndx_mpi_table_info info;
    memset(&info, 0, sizeof info);
    if (!t) return info;
    info.dtype = t->dtype;
    info.row_rank = t->row_rank;
    memcpy(info.row_shape, t->row_shape, sizeof info.row_shape);
    info.num_rows = t->num_rows;
    info.strategy = t->strategy;
    info.rank = t->rank;
    info.num_ranks = t->size;
    info.shard_rows = t->shard_rows;
    return info;
}

ndx_tensor ndx_mpi_table_shard(const ndx_mpi_table *t) {
    if (!t) return ndx_tensor_make(NDX_FLOAT32, -1, NULL, NULL); /* a view every op refuses */
    return mpi_block_view(t, t->shard_rows, t->shard);
}

ndx_status ndx_mpi_table_load(ndx_mpi_table *t, const ndx_tensor *full, ndx_error *err) {
    if (!t) return mpi_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_mpi_table_load: table is NULL");
    ndx_tensor want = ndx_mpi_table_shard(t);
    want.shape[0] = t->num_rows;
    int same = full && full->dtype == want.dtype && full->itemsize == want.itemsize &&
               full->rank == want.rank;
    for (int i = 0; same && i < want.rank; i++) same = full->shape[i] == want.shape[i];
    if (!same) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, want.rank, want.shape);
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                        "ndx_mpi_table_load: full must be the whole table, %s %s",
                        ndx_dtype_name(want.dtype), dims);
    }
    ndx_status s = ndx_tensor_check(full, "ndx_mpi_table_load: full", NULL, NULL, err);
    if (s != NDX_OK) return s;
    for (int64_t l = 0; t->row_bytes > 0 && l < t->shard_rows; l++) {
        int64_t g = ndx_mpi_row_global(t->strategy, t->num_rows, t->size, t->rank, l);
        memcpy((char *)t->shard + (size_t)l * t->row_bytes,
               (const char *)full->data + (size_t)g * t->row_bytes, t->row_bytes);
    }
    return NDX_OK;
}
