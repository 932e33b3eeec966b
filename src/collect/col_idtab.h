/* col_idtab.h - an insert-only hash index from a key (a 64-bit and a
 * 32-bit part) to a non-zero 32-bit id, read without locks.
 *
 * The collector's two process-wide tables are built on it: the call tree
 * (col_node.c: (return address, parent node) -> node) and the allocation
 * sites (col_site.c: (size key, stack node) -> site), for the keys past
 * the first COL_NODE_CHAIN of a node, which are in its lists
 * (col_node_links).  Both are looked up by every thread when the
 * recorder's caches do not answer, and written only when something new is
 * seen.
 *
 * The owners rely on one rule when a lookup saw a node's list short: a key
 * is put in the index only once its node's list is full, and lists never
 * shrink, so with the version read before the list, an unmoved version
 * says no key of that node is in the index (col_node_add).
 *
 * The index keeps no keys: a slot is 8 bytes, the id and 32 bits of the
 * key's hash (the tag), and the key itself is read from the record the id
 * names (the table's key_of), which never changes once made.  So an index
 * costs 8 bytes per slot, and a slot is read in one load, never torn.
 *
 * Readers: col_idtab_find, no lock.  A record is written before its id is
 * stored (with release; loaded with acquire), so a reader that sees an id
 * sees its record; a slot of 0 is empty.
 *
 * Writers: under the table's spinlock (col_idtab_lock), first
 * col_idtab_find_locked (another thread may have added the key meanwhile;
 * not if no key was put since the writer's own lookup: the table's
 * version says), then col_idtab_reserve_locked, then make the record the id names, then
 * col_idtab_put_locked.  A full index is replaced by one twice its size,
 * published with release.  The old one stays mapped for readers still
 * probing it, but its pages are given back (MADV_DONTNEED): each reads as
 * zeros from some moment on, empty slots, so such a reader finds nothing
 * (or, before the zeroing, a slot whose record it checks as always) and
 * takes the lock, which looks in the new index.
 *
 * A slot's place is its tag's low bits, so that growing the index moves
 * slots without reading the records' keys. */
#ifndef COL_IDTAB_H
#define COL_IDTAB_H

#include <stdint.h>

#include "common/ut_compiler.h"

/* The key of the record with id `id` (made before the id was put). */
typedef void col_idtab_key_fn(uint32_t id, uint64_t *k1, uint32_t *k2);

typedef struct col_idtab_index {
    uint32_t mask;
    uint32_t used;
    uint64_t slots[]; /* id << 32 | tag; 0: empty; stored with release */
} col_idtab_index_t;

/* Two cache lines: what every lookup reads, and the writers' line (the
 * lock, and the last id the table's owner handed out under it), so that
 * a thread making records does not take the lookups' line away from the
 * other threads at each insert, nor the globals the linker puts next to
 * the table. */
typedef struct col_idtab {
    col_idtab_index_t *cur; /* published with release */
    col_idtab_key_fn *key_of;
    uint32_t version;       /* keys put so far; stored with release */
    _Alignas(64) int lock;
    uint32_t last;          /* the owner's last id, published with release */
    char pad[64 - sizeof(int) - sizeof(uint32_t)];
} col_idtab_t;

UT_INLINE uint64_t col_idtab_hash(uint64_t k1, uint32_t k2)
{
    uint64_t h = (k1 ^ ((uint64_t)k2 * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

/* The id of (k1, k2), or 0 if it is not in the table (yet).  key_of is
 * x's, passed here so that it is inlined. */
UT_INLINE uint32_t col_idtab_find(const col_idtab_t *x, uint64_t k1, uint32_t k2,
                                  col_idtab_key_fn *key_of)
{
    const col_idtab_index_t *ix = __atomic_load_n(&x->cur, __ATOMIC_ACQUIRE);
    uint64_t h = col_idtab_hash(k1, k2);
    uint32_t tag = (uint32_t)(h >> 32), i = tag & ix->mask;
    for (;;) {
        uint64_t s = __atomic_load_n(&ix->slots[i], __ATOMIC_ACQUIRE);
        if (s == 0)
            return 0;
        if ((uint32_t)s == tag) {
            uint32_t id = (uint32_t)(s >> 32), b;
            uint64_t a;
            key_of(id, &a, &b);
            if (a == k1 && b == k2)
                return id;
        }
        i = (i + 1) & ix->mask;
    }
}

/* An empty table of cap slots (a power of two), whose records' keys
 * key_of gives; 0, or -1 without memory. */
int col_idtab_init(col_idtab_t *x, uint32_t cap, col_idtab_key_fn *key_of);
void col_idtab_lock(col_idtab_t *x);
/* Take x's lock if no other thread holds it (1), else wait until it is
 * free and return 0 without it.  Threads that run the same code meet the
 * same new keys at the same time: a writer that finds the lock taken is
 * most often waiting for the very key the holder is adding, so it looks
 * again without the lock before it tries again (col_listed_lock), rather
 * than queueing for the lock behind the holder and making the holder's
 * next insert wait for it in turn.  A thread that keeps finding it taken
 * (it trails the holder key by key) sleeps a moment instead of waiting,
 * and returns 0 all the same (col_idtab.c). */
int col_idtab_lock_or_wait(col_idtab_t *x);
void col_idtab_unlock(col_idtab_t *x);
/* After fork, in the child: the lock is free (only the forking thread is
 * left, and it held the lock around fork). */
void col_idtab_reset_lock(col_idtab_t *x);

/* The table's version, read before a lookup whose miss leads to an insert
 * (col_idtab_find_locked). */
UT_INLINE uint32_t col_idtab_version(const col_idtab_t *x)
{
    return __atomic_load_n(&x->version, __ATOMIC_ACQUIRE);
}

/* With the lock held: the id of (k1, k2), for a writer whose lookup
 * without the lock, made after reading the version `since`, found
 * nothing: only a key put since then can be there. */
uint32_t col_idtab_find_locked(col_idtab_t *x, uint64_t k1, uint32_t k2, uint32_t since);
/* Room for one more key (the index grows at 3/4 full: lookups are few, the
 * recorder's caches answer first); -1 without memory. */
int col_idtab_reserve_locked(col_idtab_t *x);
/* Add the key of record id, known to be absent, after
 * col_idtab_reserve_locked and after the record is made. */
void col_idtab_put_locked(col_idtab_t *x, uint64_t k1, uint32_t k2, uint32_t id);

#endif
