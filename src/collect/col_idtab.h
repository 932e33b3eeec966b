/* col_idtab.h - an insert-only hash index from a key (a 64-bit and a
 * 32-bit part) to a non-zero 32-bit id, read without locks.
 *
 * The collector's two process-wide tables are built on it: the call tree
 * (col_node.c: (return address, parent node) -> node) and the allocation
 * sites (col_site.c: (size key, stack node) -> site).  Both are looked up
 * on every allocation whose stack or size differs from the previous one,
 * by every thread, and written only when something new is seen.
 *
 * Readers: col_idtab_find, no lock.  A slot's key is written before its id,
 * and the id is stored with release and loaded with acquire, so a reader
 * that sees an id sees its key; an id of 0 is an empty slot.  A filled slot
 * never changes while its index is the current one.
 *
 * Writers: under the table's spinlock (col_idtab_lock), first
 * col_idtab_find_locked (another thread may have added the key meanwhile),
 * then col_idtab_reserve_locked, then make the record the id names, then
 * col_idtab_put_locked.  A full index is replaced by one twice its size,
 * published with release.  The old one stays mapped for readers still
 * probing it, but its pages are given back (MADV_DONTNEED): each page
 * reads as zeros from some moment on, empty slots, so such a reader finds
 * nothing and takes the lock, which looks in the new index.  A reader
 * whose slot was zeroed between its id and its key loads reads the id
 * again after the keys: 0 there means "not found", never the id of
 * another key.  That holds because a slot lies within one page (the
 * header is one slot long and the mapping page-aligned): the pages of a
 * released range are zeroed one at a time, and a slot across two could
 * show a zeroed key beside the old id. */
#ifndef COL_IDTAB_H
#define COL_IDTAB_H

#include <stdint.h>

#include "common/ut_compiler.h"

typedef struct col_idtab_slot {
    uint64_t k1;
    uint32_t k2;
    uint32_t id; /* 0: empty; stored last, with release */
} col_idtab_slot_t;

typedef struct col_idtab_index {
    uint32_t mask;
    uint32_t used;
    uint64_t pad; /* the slots start 16 bytes in: none crosses a page */
    col_idtab_slot_t slots[];
} col_idtab_index_t;

_Static_assert(sizeof(col_idtab_index_t) == sizeof(col_idtab_slot_t) &&
                   4096 % sizeof(col_idtab_slot_t) == 0,
               "an index slot must not cross a page (see above)");

typedef struct col_idtab {
    col_idtab_index_t *cur; /* published with release */
    int lock;
} col_idtab_t;

UT_INLINE uint64_t col_idtab_hash(uint64_t k1, uint32_t k2)
{
    uint64_t h = (k1 ^ ((uint64_t)k2 * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

/* The id of (k1, k2), or 0 if it is not in the table (yet). */
UT_INLINE uint32_t col_idtab_find(const col_idtab_t *x, uint64_t k1, uint32_t k2)
{
    const col_idtab_index_t *ix = __atomic_load_n(&x->cur, __ATOMIC_ACQUIRE);
    uint32_t i = (uint32_t)col_idtab_hash(k1, k2) & ix->mask;
    for (;;) {
        const col_idtab_slot_t *s = &ix->slots[i];
        uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
        if (id == 0)
            return 0;
        /* the keys are read (acquire) before the id is read again */
        if (__atomic_load_n(&s->k1, __ATOMIC_ACQUIRE) == k1 &&
            __atomic_load_n(&s->k2, __ATOMIC_ACQUIRE) == k2)
            return __atomic_load_n(&s->id, __ATOMIC_RELAXED);
        i = (i + 1) & ix->mask;
    }
}

/* An empty table of cap slots (a power of two); 0, or -1 without memory. */
int col_idtab_init(col_idtab_t *x, uint32_t cap);
void col_idtab_lock(col_idtab_t *x);
void col_idtab_unlock(col_idtab_t *x);
/* After fork, in the child: the lock is free (only the forking thread is
 * left, and it held the lock around fork). */
void col_idtab_reset_lock(col_idtab_t *x);

/* With the lock held. */
uint32_t col_idtab_find_locked(col_idtab_t *x, uint64_t k1, uint32_t k2);
/* Room for one more key (the index grows at 3/4 full: lookups are few, the
 * recorder's caches answer first); -1 without memory. */
int col_idtab_reserve_locked(col_idtab_t *x);
/* Add a key known to be absent, after col_idtab_reserve_locked. */
void col_idtab_put_locked(col_idtab_t *x, uint64_t k1, uint32_t k2, uint32_t id);

#endif
