/* dynamic_partition.c — dynamic_partition: send each slice data[i...] to outs[partitions[i...]],
 * keeping the slices' row-major order inside every output.
 *
 * A "row" is the slice data[i...] under one element of partitions (the whole tensor when
 * partitions is a scalar). Infer: every shape check, on partial shapes (each output's row count
 * waits for the ids). Plan: the views, infer, the scratch for the counts. Count and run:
 * partition_run.c. */
#include <stdio.h>

#include "partition_plan.h"

#define OP "dynamic_partition"

/* Bytes (ids plus rows) per worker below which a second worker costs more than it saves. */
#define PARTITION_GRAIN_BYTES ((int64_t)1 << 18)

/* Every shape check once the two specs are valid on their own (the plan has checked the views
 * they come from); `out` gets the spec all outputs share. */
static ndx_status infer_checked(const ndx_spec *data, const ndx_spec *partitions,
                                int num_partitions, int have_outs, ndx_spec *outp,
                                ndx_error *err) {
    if (num_partitions < 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: num_partitions = %d; it must be at least 1", OP, num_partitions);
    if (!have_outs) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: outs is NULL", OP);
    ndx_spec out;
    memset(&out, 0, sizeof out);
    out.dtype = data->dtype;
    out.itemsize = data->itemsize;
    out.rank = NDX_UNKNOWN;
    int P = partitions->rank;
    if (P != NDX_UNKNOWN && data->rank != NDX_UNKNOWN) {
        if (data->rank < P || !ndx_dims_agree(P, data->shape, partitions->shape)) {
            char dd[NDX_DIMS_TEXT], pd[NDX_DIMS_TEXT];
            ndx_format_spec_dims(dd, sizeof dd, data);
            ndx_format_spec_dims(pd, sizeof pd, partitions);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: data.shape = %s must start with partitions.shape = %s", OP, dd,
                            pd);
        }
        int extra = data->rank - P;
        if (extra + 1 > NDX_MAX_RANK)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: the outputs would have rank %d; ndx handles ranks up to %d", OP,
                            extra + 1, NDX_MAX_RANK);
        out.rank = extra + 1;
        out.shape[0] = NDX_UNKNOWN;
        for (int k = 0; k < extra; k++) out.shape[k + 1] = data->shape[P + k];
    }
    *outp = out;
    return NDX_OK;
}

static ndx_status partition_infer(const ndx_spec *data, const ndx_spec *partitions,
                                  int num_partitions, int have_outs, ndx_spec *outp,
                                  ndx_error *err) {
    NDX_TRY(ndx_spec_check(data, OP ": data", err));
    NDX_TRY(ndx_check_index_spec(partitions, OP, "partitions", err));
    return infer_checked(data, partitions, num_partitions, have_outs, outp, err);
}

ndx_status ndx_dynamic_partition_infer(const ndx_spec *data, const ndx_spec *partitions,
                                       int num_partitions, ndx_spec *outs, ndx_error *err) {
    ndx_spec out;
    NDX_TRY(partition_infer(data, partitions, num_partitions, outs != NULL, &out, err));
    for (int q = 0; q < num_partitions; q++) outs[q] = out;
    return NDX_OK;
}

ndx_status ndx_partition_plan(ndx_call *c, const ndx_tensor *data, const ndx_tensor *partitions,
                              int num_partitions, int have_outs, part_plan *p) {
    ndx_error *err = c->err;
    memset(p, 0, sizeof *p);
    p->data = data;
    p->partitions = partitions;
    p->np = num_partitions;
    NDX_TRY(ndx_check_view(data, OP ": data", NULL, NULL, err));
    NDX_TRY(ndx_check_index_tensor(partitions, OP, "partitions", &p->rows, err));
    ndx_spec ds = ndx_spec_of(data), ps = ndx_spec_of(partitions), os;
    NDX_TRY(infer_checked(&ds, &ps, num_partitions, have_outs, &os, err));
    int P = partitions->rank, extra = data->rank - P;
    /* A row's size fits whenever there are rows (data is a valid view); without rows, as in
     * data of shape [0, 2^40, 2^40], it may not, and nothing is copied anyway. */
    int64_t row_elems;
    if (p->rows == 0 || !ndx_dims_product(extra, data->shape + P, &row_elems) ||
        !ndx_bytes_of(row_elems, data->itemsize, &p->row_bytes))
        p->row_bytes = 0;
    p->desc = ndx_view_of_spec(&os);
    p->desc.shape[0] = 0;
    p->threads = c->threads;
    /* Each worker owns np slots, so give it at least np rows: scratch stays within the ids'
     * own size order. */
    p->grain = PARTITION_GRAIN_BYTES / (int64_t)(p->row_bytes + partitions->itemsize);
    if (p->grain < num_partitions) p->grain = num_partitions;
    p->workers = ndx_parallel_workers(p->threads, p->rows, p->grain);
    p->stride = ((size_t)num_partitions + 7) & ~(size_t)7; /* workers never share a line */
    p->id_bytes = num_partitions <= 256 ? 1 : num_partitions <= 65536 ? 2 : 4;
    p->ids_at = (size_t)p->workers * p->stride * sizeof(part_slot); /* < 2^44, whole lines */
    /* Whole lines: the call keeps more after the scratch. */
    size_t copies;
    if (!ndx_bytes_of(p->rows, (size_t)p->id_bytes, &copies) ||
        __builtin_add_overflow(p->ids_at, copies + 63, &p->scratch_bytes))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: too many partition ids to copy", OP);
    p->scratch_bytes &= ~(size_t)63;
    return NDX_OK;
}

ndx_status ndx_dynamic_partition_shape(const ndx_tensor *data, const ndx_tensor *partitions,
                                       int num_partitions, ndx_tensor *outs, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin_outs(&c, OP, NULL, err)); /* outs is checked by the plan */
    c.threads = 1;
    part_plan p;
    NDX_TRY(ndx_partition_plan(&c, data, partitions, num_partitions, outs != NULL, &p));
    /* The count's own pass (each id read once), without the copies of the ids. */
    void *scratch;
    NDX_TRY(ndx_call_scratch(&c, p.ids_at, 0, "the partition counts", &scratch));
    ndx_status s = ndx_partition_count(&p, scratch, 1, err);
    if (s == NDX_OK)
        for (int q = 0; q < num_partitions; q++) {
            ndx_partition_describe(&p, scratch, q, &outs[q]);
            outs[q].data = NULL;
        }
    ndx_call_release(&c, scratch);
    return s;
}

ndx_status ndx_partition_counted(const ndx_tensor *data, const ndx_tensor *partitions,
                                 int num_partitions, const ndx_options *opt, part_plan *p,
                                 void **scratch, ndx_tensor *outs, ndx_error *err) {
    ndx_call c;
    *scratch = NULL;
    NDX_TRY(ndx_call_begin_outs(&c, OP, opt, err));
    NDX_TRY(ndx_partition_plan(&c, data, partitions, num_partitions, outs != NULL, p));
    void *mem; /* outlives the call: from the allocator, never c.local */
    NDX_TRY(ndx_call_acquire_aligned(&c, p->scratch_bytes, 64, 0, "the partition counts", &mem));
    ndx_status s = ndx_partition_count(p, mem, 0, err);
    if (s != NDX_OK) {
        ndx_call_release(&c, mem);
        return s;
    }
    for (int q = 0; q < num_partitions; q++) {
        ndx_partition_describe(p, mem, q, &outs[q]);
        outs[q].data = NULL;
    }
    *scratch = mem;
    return NDX_OK;
}

ndx_status ndx_dynamic_partition(const ndx_tensor *data, const ndx_tensor *partitions,
                                 int num_partitions, const ndx_options *opt, ndx_tensor *outs,
                                 ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin_outs(&c, OP, opt, err)); /* outs is checked by the plan */
    part_plan p;
    NDX_TRY(ndx_partition_plan(&c, data, partitions, num_partitions, outs != NULL, &p));
    /* The scratch of count and run, then one record per output of whether this call allocated
     * it, so a failure part way through the outputs undoes only its own allocations. */
    const int np = num_partitions;
    size_t mine_bytes = (size_t)np * sizeof(void *);
    unsigned char *scratch;
    NDX_TRY(ndx_call_scratch(&c, p.scratch_bytes + mine_bytes, 0, "the partition counts",
                             (void **)&scratch));
    void **mine = (void **)(scratch + p.scratch_bytes);
    ndx_status s = ndx_partition_count(&p, scratch, 0, err);
    /* Check or allocate every output before writing any; on failure undo the allocations. */
    int q = 0;
    for (; s == NDX_OK && q < np; q++) {
        ndx_tensor want, tmp = outs[q];
        want.data = NULL;
        ndx_partition_describe(&p, scratch, q, &want);
        static const char *const names[8] = {"outs[0]", "outs[1]", "outs[2]", "outs[3]",
                                             "outs[4]", "outs[5]", "outs[6]", "outs[7]"};
        char what[32]; /* made only past the names at hand: this runs for every output */
        if (q >= 8) snprintf(what, sizeof what, "outs[%d]", q);
        int allocated;
        s = ndx_call_output(&c, &want, &tmp, 0, q < 8 ? names[q] : what, &allocated);
        mine[q] = allocated ? tmp.data : NULL;
        if (s == NDX_OK) outs[q].data = tmp.data; /* described below, once all are ready */
    }
    if (s != NDX_OK) {
        for (int r = 0; r + 1 < q; r++)
            if (mine[r]) {
                ndx_call_release(&c, mine[r]);
                outs[r].data = NULL;
            }
    } else {
        for (int r = 0; r < np; r++) ndx_partition_describe(&p, scratch, r, &outs[r]);
        ndx_partition_run(&p, scratch, outs);
    }
    ndx_call_release(&c, scratch);
    return s;
}
