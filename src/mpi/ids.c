/* ids.c — the checks every rank makes on its own ids before the collective agreement (a
 * well-formed int32 or int64 view whose values all name rows of the table), and the views the
 * steps build over ids and rows. */
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

int64_t mpi_ids_count(mpi_call *c, const ndx_tensor *ids) {
    const ndx_mpi_table *t = c->t;
    ndx_error *err = mpi_call_err(c);
    if (!ids) {
        mpi_call_note(c, mpi_fail(err, NDX_E_INVALID_ARGUMENT, "%s: ids on rank %d is NULL", c->op, t->rank));
        return -1;
    }
    char what[64];
    snprintf(what, sizeof what, "%s: ids on rank %d", c->op, t->rank);
    int64_t count;
    if (mpi_call_note(c, ndx_tensor_check(ids, what, &count, NULL, err)) != NDX_OK) return -1;
    /* int32 or int64, as TensorFlow's embedding_lookup and its resource gathers and scatters
     * take them (ndx's own ops also take int16; a table does not). */
    if (ids->dtype != NDX_INT32 && ids->dtype != NDX_INT64) {
        mpi_call_note(c, mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                                  "%s: ids on rank %d are %s; a table takes int32 or int64 ids", c->op,
                                  t->rank, ndx_dtype_name(ids->dtype)));
        return -1;
    }
    /* The routing's hash keeps up to 64 bytes per id: checking that product here makes every
     * size derived from the count below it safe. */
    if ((uint64_t)count > SIZE_MAX / 64) {
        mpi_call_note(c, mpi_fail(err, NDX_E_OVERFLOW, "%s: %lld ids on rank %d are too many to route",
                                  c->op, (long long)count, t->rank));
        return -1;
    }
    if (ids->rank + t->row_rank > NDX_MAX_RANK) {
        mpi_call_note(c, mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                                  "%s: ids of rank %d on rank %d with rows of rank %d exceed rank %d",
                                  c->op, ids->rank, t->rank, t->row_rank, NDX_MAX_RANK));
        return -1;
    }
    return count;
}

/* The first id outside [0, num_rows) fails, naming its flat position. */
static ndx_status bad_id(mpi_call *c, int64_t i, int64_t id) {
    return mpi_call_note(c, mpi_fail(mpi_call_err(c), NDX_E_OUT_OF_RANGE,
                                     "%s: ids[%lld] = %lld on rank %d is outside [0, %lld)", c->op,
                                     (long long)i, (long long)id, c->t->rank,
                                     (long long)c->t->num_rows));
}

/* One loop per dtype, checked with an unsigned compare (negative ids wrap above num_rows), so
 * the copy vectorises; the failing position is looked for only when one is out of range. */
ndx_status mpi_ids_read(mpi_call *c, const ndx_tensor *ids, int64_t *out) {
    const uint64_t rows = (uint64_t)c->t->num_rows;
    int64_t n = ndx_tensor_count(ids);
    int bad = 0;
    if (ids->dtype == NDX_INT32) {
        const int32_t *in = ids->data;
        for (int64_t i = 0; i < n; i++) {
            out[i] = in[i];
            bad |= (uint64_t)out[i] >= rows;
        }
    } else {
        const int64_t *in = ids->data;
        for (int64_t i = 0; i < n; i++) {
            out[i] = in[i];
            bad |= (uint64_t)out[i] >= rows;
        }
    }
    if (bad)
        for (int64_t i = 0; i < n; i++)
            if ((uint64_t)out[i] >= rows) return bad_id(c, i, out[i]);
    return NDX_OK;
}

ndx_tensor mpi_rows_view(const ndx_mpi_table *t, const ndx_tensor *ids, void *data) {
    int64_t shape[NDX_MAX_RANK];
    memcpy(shape, ids->shape, (size_t)ids->rank * sizeof *shape);
    memcpy(shape + ids->rank, t->row_shape, (size_t)t->row_rank * sizeof *shape);
    return ndx_tensor_make(t->dtype, ids->rank + t->row_rank, shape, data);
}

ndx_tensor mpi_block_view(const ndx_mpi_table *t, int64_t rows, void *data) {
    int64_t shape[NDX_MAX_RANK];
    shape[0] = rows;
    memcpy(shape + 1, t->row_shape, (size_t)t->row_rank * sizeof *shape);
    return ndx_tensor_make(t->dtype, t->row_rank + 1, shape, data);
}

ndx_tensor mpi_index_view(int64_t count, int64_t *data) {
    int64_t shape[2] = {count, 1};
    return ndx_tensor_make(NDX_INT64, 2, shape, data);
}

size_t mpi_rows_bytes(const ndx_mpi_table *t, int64_t rows) {
    size_t bytes;
    if (rows < 0 || __builtin_mul_overflow((size_t)rows, t->row_bytes, &bytes)) return SIZE_MAX;
    return bytes;
}
