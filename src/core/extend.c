/* extend.c — the memory of layers built on ndx (ndx.h, 5f): one block at a time through the
 * same call context the ops use, so the options are validated, the allocator chosen and the
 * budget counted by one piece of code for the ops and for the layers above. */
#include "core.h"

ndx_status ndx_block_alloc(const ndx_options *opt, const char *op, const char *what,
                           size_t bytes, size_t *used, void **block, ndx_error *err) {
    *block = NULL;
    ndx_call c;
    NDX_TRY(ndx_call_init(&c, op, opt, err));
    c.used = used ? *used : 0;
    NDX_TRY(ndx_call_acquire_aligned(&c, bytes, 64, 0, what, block));
    if (used) *used = c.used;
    return NDX_OK;
}

void ndx_block_free(const ndx_options *opt, void *block) {
    if (!block) return;
    ndx_call c;
    /* Options that fail validation allocated nothing through ndx_block_alloc; a block can only
     * come from options that passed, so the allocator resolved here is the one it came from. */
    if (ndx_call_init(&c, "ndx_block_free", opt, NULL) == NDX_OK) ndx_call_release(&c, block);
}
