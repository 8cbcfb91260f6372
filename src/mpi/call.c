/* call.c — one collective call on one rank: the memory it takes under the caller's options, and
 * its first failure. Blocks come from libndx's ndx_block_alloc, so opt->allocator and
 * opt->max_memory cover the exchange's scratch as they cover an op's, and a result allocated
 * here is one ndx_tensor_free takes. */
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

void mpi_call_begin(mpi_call *c, ndx_mpi_table *t, const char *op, const ndx_options *opt,
                    ndx_error *err) {
    memset(c, 0, sizeof *c);
    c->t = t;
    c->op = op;
    c->opt = opt;
    c->own_allocator = !opt || !opt->allocator;
    c->err = err;
    snprintf(c->where, sizeof c->where, "%s on rank %d", op, t->rank);
}

ndx_error *mpi_call_err(mpi_call *c) { return c->status == NDX_OK ? c->err : &c->spare; }

ndx_status mpi_call_note(mpi_call *c, ndx_status s) {
    if (c->status == NDX_OK) c->status = s;
    return c->status;
}

ndx_status mpi_call_ndx(mpi_call *c, ndx_status s) {
    if (s != NDX_OK && c->status == NDX_OK && c->err) {
        char inner[NDX_ERROR_MESSAGE_SIZE];
        memcpy(inner, c->err->message, sizeof inner);
        mpi_fail(c->err, s, "%s: %s", c->where, inner);
    }
    return mpi_call_note(c, s);
}

void *mpi_take_block(mpi_call *c, size_t bytes, const char *what) {
    static max_align_t nothing; /* 0 bytes: a valid pointer that is never written */
    if (bytes == 0) return &nothing;
    ndx_error *err = mpi_call_err(c);
    if (bytes == SIZE_MAX) {
        mpi_call_note(c, mpi_fail(err, NDX_E_OVERFLOW, "%s: the size of %s overflows", c->where, what));
        return NULL;
    }
    if (c->num_blocks == MPI_CALL_BLOCKS) { /* a bug in this library, not the caller's */
        mpi_call_note(c, mpi_fail(err, NDX_E_NO_MEMORY, "%s: too many blocks for %s", c->where, what));
        return NULL;
    }
    void *p;
    ndx_status s = ndx_block_alloc(c->opt, c->where, what, bytes, &c->used, &p, err);
    if (s != NDX_OK) {
        mpi_call_note(c, s);
        return NULL;
    }
    c->blocks[c->num_blocks++] = p;
    return p;
}

void *mpi_take(mpi_call *c, size_t bytes, const char *what) {
    enum { ALIGN = 64 };
    if (bytes == 0 || bytes == SIZE_MAX || !c->own_allocator) return mpi_take_block(c, bytes, what);
    size_t rounded = bytes > SIZE_MAX - ALIGN ? SIZE_MAX : (bytes + ALIGN - 1) / ALIGN * ALIGN;
    c->demand = rounded > SIZE_MAX - c->demand ? SIZE_MAX : c->demand + rounded;
    ndx_mpi_table *t = c->t;
    size_t limit = c->opt ? c->opt->max_memory : 0;
    int fits_budget = !limit || (c->used <= limit && bytes <= limit - c->used);
    /* Over the budget, ndx_block_alloc says so in ndx's words. */
    if (!fits_budget || rounded > t->scratch_bytes - c->scratch_used)
        return mpi_take_block(c, bytes, what);
    void *p = (char *)t->scratch + c->scratch_used;
    c->scratch_used += rounded;
    c->used += bytes;
    return p;
}

ndx_options mpi_call_options(const mpi_call *c) {
    ndx_options o = c->opt ? *c->opt : (ndx_options){0};
    if (o.max_memory) /* 1, not 0, when nothing is left: 0 would mean no limit */
        o.max_memory = c->used < o.max_memory ? o.max_memory - c->used : 1;
    return o;
}

void mpi_call_end(mpi_call *c, const void *keep) {
    for (int i = 0; i < c->num_blocks; i++)
        if (c->blocks[i] != keep) ndx_block_free(c->opt, c->blocks[i]);
    c->num_blocks = 0;
    ndx_mpi_table *t = c->t;
    if (c->demand > t->scratch_bytes && c->demand != SIZE_MAX) {
        /* Next time this call fits; if the memory is not there, the next call allocates as
         * this one did. */
        ndx_block_free(NULL, t->scratch);
        t->scratch = NULL;
        t->scratch_bytes = 0;
        ndx_error ignored;
        if (ndx_block_alloc(NULL, c->where, "the table's scratch", c->demand, NULL, &t->scratch,
                            &ignored) == NDX_OK)
            t->scratch_bytes = c->demand;
    }
}
