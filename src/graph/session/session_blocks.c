/* session_blocks.c — a session's memory pool (see session_blocks.h). */
#include <stdint.h>
#include <stdlib.h>

#include "session_blocks.h"

/* Keeps the choice of allocation number `cursor` in the running plan's log. */
static void log_choice(session_blocks *p, int b) {
    blocks_log *log = p->log;
    if (!log) return;
    if (p->cursor >= log->cap) {
        int cap = log->cap ? log->cap * 2 : 16;
        int *bigger = realloc(log->choice, (size_t)cap * sizeof *bigger);
        if (!bigger) return; /* only a hint is lost */
        log->choice = bigger;
        log->cap = cap;
    }
    log->choice[p->cursor] = b;
    if (p->cursor >= log->len) log->len = p->cursor + 1;
}

static int fits(const held_block *b, size_t bytes, size_t alignment) {
    return b->ptr && !b->in_use && b->cap >= bytes &&
           ((uintptr_t)b->ptr & (alignment - 1)) == 0;
}

/* The block for this allocation: the last run's choice when it still fits, else the smallest
 * free block that fits, else -1. */
static int choose(const session_blocks *p, size_t bytes, size_t alignment) {
    if (p->log && p->cursor < p->log->len) {
        int b = p->log->choice[p->cursor];
        if (b >= 0 && b < p->count && fits(&p->blocks[b], bytes, alignment)) return b;
    }
    int best = -1;
    for (int b = 0; b < p->count; b++)
        if (fits(&p->blocks[b], bytes, alignment) &&
            (best < 0 || p->blocks[b].cap < p->blocks[best].cap))
            best = b;
    return best;
}

/* Block b's slot emptied (its memory released or given away): add_block fills it again. */
static void empty_slot(session_blocks *p, int b) {
    p->held -= p->blocks[b].cap;
    memset(&p->blocks[b], 0, sizeof p->blocks[b]);
}

/* A new block, in an empty slot when there is one. */
static int add_block(session_blocks *p, size_t bytes, size_t alignment) {
    int slot = 0;
    while (slot < p->count && p->blocks[slot].ptr) slot++;
    if (slot == p->count && p->count == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        held_block *bigger = realloc(p->blocks, (size_t)cap * sizeof *bigger);
        if (!bigger) return -1;
        p->blocks = bigger;
        p->cap = cap;
    }
    void *mem = p->source.allocate(p->source.user, bytes, alignment < 64 ? 64 : alignment);
    if (!mem) return -1;
    held_block *b = &p->blocks[slot];
    b->ptr = mem;
    b->cap = bytes;
    b->in_use = 0;
    b->refs = 0;
    p->held += bytes;
    if (slot == p->count) p->count++;
    return slot;
}

static void *blocks_allocate(void *user, size_t bytes, size_t alignment) {
    session_blocks *p = user;
    if (p->limit && (p->in_use > p->limit || bytes > p->limit - p->in_use)) return NULL;
    int b = choose(p, bytes, alignment);
    if (b < 0) b = add_block(p, bytes, alignment);
    if (b < 0) return NULL;
    log_choice(p, b);
    p->cursor++;
    p->blocks[b].in_use = 1;
    p->blocks[b].used = bytes;
    p->blocks[b].refs = 0;
    p->in_use += bytes;
    return p->blocks[b].ptr;
}

static void release_block(session_blocks *p, int b) {
    if (!p->blocks[b].in_use) return;
    p->blocks[b].in_use = 0;
    p->blocks[b].refs = 0;
    p->in_use -= p->blocks[b].used;
}

int blocks_find(const session_blocks *p, const void *ptr) {
    /* Recent blocks are the likely ones; pools hold few blocks. */
    for (int b = p->count - 1; b >= 0; b--)
        if (p->blocks[b].in_use && p->blocks[b].ptr == ptr) return b;
    return -1;
}

static void blocks_release_ptr(void *user, void *ptr) {
    session_blocks *p = user;
    int b = blocks_find(p, ptr);
    if (b >= 0) release_block(p, b);
}

void blocks_init(session_blocks *p, const ndx_allocator *source, size_t limit) {
    memset(p, 0, sizeof *p);
    ndx_call c;
    ndx_options o = {0};
    o.allocator = source;
    ndx_call_init(&c, "session", &o, NULL); /* resolves ndx's own allocator when source is NULL */
    p->source = c.allocator;
    p->as_allocator.allocate = blocks_allocate;
    p->as_allocator.release = blocks_release_ptr;
    p->as_allocator.user = p;
    p->limit = limit;
}

/* Blocks stay in their slots: the session keeps the indices of blocks in use (a borrowed fetch's
 * block is given back by index on the next run), so a freed block leaves an empty slot, which
 * add_block fills again; only empty slots at the end are dropped. */
void blocks_trim(session_blocks *p) {
    for (int b = 0; b < p->count; b++) {
        held_block *h = &p->blocks[b];
        if (h->in_use || !h->ptr) continue;
        p->source.release(p->source.user, h->ptr);
        empty_slot(p, b);
    }
    while (p->count > 0 && !p->blocks[p->count - 1].ptr) p->count--;
}

void blocks_free(session_blocks *p) {
    blocks_release_all(p);
    blocks_trim(p);
    free(p->blocks);
    p->blocks = NULL;
    p->cap = 0;
}

void blocks_begin_run(session_blocks *p, blocks_log *log) {
    p->log = log;
    p->cursor = 0;
}

void blocks_ref(session_blocks *p, int b, int k) {
    if (b >= 0) p->blocks[b].refs += k;
}

void blocks_unref(session_blocks *p, int b, int k) {
    if (b < 0) return;
    p->blocks[b].refs -= k;
    if (p->blocks[b].refs <= 0) release_block(p, b);
}

void blocks_give_away(session_blocks *p, int b) {
    p->in_use -= p->blocks[b].used;
    empty_slot(p, b);
}

void blocks_release_all(session_blocks *p) {
    for (int b = 0; b < p->count; b++) release_block(p, b);
}

void blocks_log_free(blocks_log *log) {
    free(log->choice);
    log->choice = NULL;
    log->len = log->cap = 0;
}
