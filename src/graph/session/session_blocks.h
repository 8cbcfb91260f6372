/* session_blocks.h — a session's memory: blocks drawn from one allocator and kept between runs. Every
 * block an op allocates during a run (outputs and scratch) comes from the pool, which hands back
 * a free block that fits before it asks the allocator for a new one. A run replays the choices
 * of the last run with the same plan, so a run with the same shapes gets the same blocks and
 * allocates nothing. Private to the graph layer. */
#ifndef NDX_GRAPH_SESSION_BLOCKS_H
#define NDX_GRAPH_SESSION_BLOCKS_H

#include "core.h"

typedef struct held_block {
    unsigned char *ptr;
    size_t cap;  /* bytes allocated */
    size_t used; /* bytes asked for while in use (what the run's max_memory counts) */
    int in_use;
    int refs;    /* readers still to come, for blocks holding a run's values */
} held_block;

/* The block chosen by each allocation of one plan's last run, in order. */
typedef struct blocks_log {
    int *choice;
    int len, cap;
} blocks_log;

typedef struct session_blocks {
    ndx_allocator source;  /* where blocks come from */
    ndx_allocator as_allocator; /* what ops are given: allocates from the pool */
    held_block *blocks;
    int count, cap;
    size_t held;   /* bytes of every block */
    size_t in_use; /* bytes asked for by blocks in use */
    size_t limit;  /* a run's max_memory; 0: none */
    blocks_log *log; /* the running plan's log, or NULL */
    int cursor;    /* allocations so far in this run */
} session_blocks;

/* A pool over `source` (NULL: ndx's own allocator). */
void blocks_init(session_blocks *p, const ndx_allocator *source, size_t limit);
/* Gives every block back to the source. */
void blocks_free(session_blocks *p);
/* Frees the blocks that are not in use. */
void blocks_trim(session_blocks *p);
/* Starts a run that replays (and then records) `log`. */
void blocks_begin_run(session_blocks *p, blocks_log *log);
/* The index of the in-use block starting at ptr, or -1. */
int blocks_find(const session_blocks *p, const void *ptr);
/* Adds k readers to block b. */
void blocks_ref(session_blocks *p, int b, int k);
/* Removes k readers from block b; the block is free again when none are left. */
void blocks_unref(session_blocks *p, int b, int k);
/* Block b (in use) leaves the pool: its memory is the caller's now, to release through the
 * source allocator. Its slot stays, empty, for the next block. */
void blocks_give_away(session_blocks *p, int b);
/* What a kernel may still take under the run's limit, as its ndx_options.max_memory: the bytes
 * left, or 1 when none are (max_memory 0 would mean no limit); 0 when the run has no limit. */
static inline size_t blocks_room(const session_blocks *p) {
    if (!p->limit) return 0;
    return p->in_use < p->limit ? p->limit - p->in_use : 1;
}
/* Frees every block in use (a failed run's leftovers). */
void blocks_release_all(session_blocks *p);
void blocks_log_free(blocks_log *log);

#endif /* NDX_GRAPH_SESSION_BLOCKS_H */
