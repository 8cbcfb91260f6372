/* pool.h — a session's memory: blocks drawn from one allocator and kept between runs. Every
 * block an op allocates during a run (outputs and scratch) comes from the pool, which hands back
 * a free block that fits before it asks the allocator for a new one. A run replays the choices
 * of the last run with the same plan, so a run with the same shapes gets the same blocks and
 * allocates nothing. Private to the graph layer. */
#ifndef NDX_GRAPH_POOL_H
#define NDX_GRAPH_POOL_H

#include "core.h"

typedef struct pool_block {
    unsigned char *ptr;
    size_t cap;  /* bytes allocated */
    size_t used; /* bytes asked for while in use (what the run's max_memory counts) */
    int in_use;
    int refs;    /* readers still to come, for blocks holding a run's values */
} pool_block;

/* The block chosen by each allocation of one plan's last run, in order. */
typedef struct pool_log {
    int *choice;
    int len, cap;
} pool_log;

typedef struct graph_pool {
    ndx_allocator source;  /* where blocks come from */
    ndx_allocator as_allocator; /* what ops are given: allocates from the pool */
    pool_block *blocks;
    int count, cap;
    size_t held;   /* bytes of every block */
    size_t in_use; /* bytes asked for by blocks in use */
    size_t limit;  /* a run's max_memory; 0: none */
    pool_log *log; /* the running plan's log, or NULL */
    int cursor;    /* allocations so far in this run */
} graph_pool;

/* A pool over `source` (NULL: ndx's own allocator). */
void pool_init(graph_pool *p, const ndx_allocator *source, size_t limit);
/* Gives every block back to the source. */
void pool_free(graph_pool *p);
/* Frees the blocks that are not in use. */
void pool_trim(graph_pool *p);
/* Starts a run that replays (and then records) `log`. */
void pool_begin_run(graph_pool *p, pool_log *log);
/* The index of the in-use block starting at ptr, or -1. */
int pool_find(const graph_pool *p, const void *ptr);
/* Adds k readers to block b. */
void pool_ref(graph_pool *p, int b, int k);
/* Removes k readers from block b; the block is free again when none are left. */
void pool_unref(graph_pool *p, int b, int k);
/* Frees every block in use (a failed run's leftovers). */
/* What a kernel may still take under the run's limit, as its ndx_options.max_memory: the bytes
 * left, or 1 when none are (max_memory 0 would mean no limit); 0 when the run has no limit. */
static inline size_t pool_room(const graph_pool *p) {
    if (!p->limit) return 0;
    return p->in_use < p->limit ? p->limit - p->in_use : 1;
}
void pool_release_all(graph_pool *p);
void pool_log_free(pool_log *log);

#endif /* NDX_GRAPH_POOL_H */
