/* col_shadow.c - which blocks are live, found by address.
 *
 * A two-level shadow map: the block's address, shifted right by the
 * granule (32 bytes under glibc, whose live blocks are never closer; 16
 * otherwise, where only 8-byte blocks lie 8 bytes apart and the second
 * of two in a granule has its value in the leaf's other half), indexes a
 * 32-bit value: (site << 8) | tag, the block's allocation site and how to
 * find its size (col_record.h).  Leaves of 2^20 values are reserved with
 * MAP_NORESERVE on first use, so only pages of the map that cover real
 * heap cost memory (4 bytes per 32-byte granule under glibc, per 16 bytes
 * under other allocators, at most).
 *
 * Blocks whose slack does not fit in 8 bits (page-rounded mmapped chunks,
 * large alignments, other allocators' size classes) keep their exact size
 * in a small side table with striped locks; that is the rare path.
 *
 * The shadow is read and written without locks: a block is only ever
 * touched by the thread that owns it (the program must synchronise the
 * hand-over of a pointer between threads, and the allocator orders reuse
 * of an address after its free). */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "collect/col_internal.h"
#include "common/ut_spin.h"

#define ADDR_BITS 47

/* The map itself; its lookups are inline (col_shadow_leaf, col_internal.h). */
col_shadow_map_t col_shadow;


/* One leaf mapped ahead (address space only, MAP_NORESERVE): when the
 * program has used up its address space (RLIMIT_AS) the next leaf still
 * comes from here, so the blocks it gets in its last megabytes are still
 * tracked.  Refilled whenever a leaf is installed and mmap works. */
static uint32_t *spare_leaf;

/* A leaf and its map of written pages; the map's page is written now, so
 * that its first read does not map the zero page. */
static uint32_t *leaf_new(void)
{
    uint32_t *leaf = col_vm_map_for(COL_VM_SHADOW, COL_SHADOW_LEAF_BYTES);
    if (leaf)
        memset(col_shadow_written(leaf, 0), 0, 4096);
    return leaf;
}

int col_shadow_init(void)
{
    col_shadow.shift = col_proc.granule_shift;
    col_shadow.dir_len = 1ull << (ADDR_BITS - col_shadow.shift - COL_SHADOW_LEAF_GRANULE_BITS);
    col_shadow.dir = col_vm_map_for(COL_VM_SHADOW, col_shadow.dir_len * sizeof *col_shadow.dir);
    spare_leaf = leaf_new();
    return col_shadow.dir ? 0 : -1;
}

/* Fault injection for the tests (HEAPSCOPE_FAULT_SHADOW_LEAVES=N): after N
 * leaves, mapping one fails and the spare is gone, as when the address
 * space is exhausted. */
static long leaves_installed;

static int leaf_fault(void)
{
    long n = col_config.fault_shadow_leaves;
    if (n < 0 || __atomic_add_fetch(&leaves_installed, 1, __ATOMIC_RELAXED) <= n)
        return 0;
    uint32_t *spare = __atomic_exchange_n(&spare_leaf, NULL, __ATOMIC_ACQ_REL);
    if (spare)
        col_vm_unmap(spare, COL_SHADOW_LEAF_BYTES);
    return 1;
}

/* Map leaf d on its first use; two threads may race, one leaf wins. */
UT_COLD uint32_t *col_shadow_leaf_install(uint64_t d)
{
    if (UT_UNLIKELY(leaf_fault()))
        return NULL;
    uint32_t *leaf = leaf_new();
    if (!leaf) {
        leaf = __atomic_exchange_n(&spare_leaf, NULL, __ATOMIC_ACQ_REL);
        if (!leaf)
            return NULL;
    } else if (__atomic_load_n(&spare_leaf, __ATOMIC_RELAXED) == NULL) {
        uint32_t *spare = leaf_new();
        uint32_t *none = NULL;
        if (spare && !__atomic_compare_exchange_n(&spare_leaf, &none, spare, 0, __ATOMIC_ACQ_REL,
                                                  __ATOMIC_RELAXED))
            col_vm_unmap(spare, COL_SHADOW_LEAF_BYTES);
    }
    uint32_t *expect = NULL;
    if (!__atomic_compare_exchange_n(&col_shadow.dir[d], &expect, leaf, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        col_vm_unmap(leaf, COL_SHADOW_LEAF_BYTES);
        return expect;
    }
    return leaf;
}

/* ---- side table of exact sizes ----------------------------------------- */

#define STRIPES 64

typedef struct side_entry {
    uintptr_t ptr; /* 0 = empty */
    uint64_t size;
} side_entry_t;

typedef struct stripe {
    int lock;
    uint32_t mask, used;
    side_entry_t *tab;
    char pad[UT_CACHE_LINE - 24];
} stripe_t;

static stripe_t stripes[STRIPES] UT_ALIGNED(UT_CACHE_LINE);

static inline uint32_t side_hash(uintptr_t p)
{
    uint64_t h = (uint64_t)p * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

static stripe_t *stripe_of(uintptr_t p)
{
    return &stripes[(p >> 12) % STRIPES];
}

static void side_insert(stripe_t *s, uintptr_t p, uint64_t size)
{
    uint32_t i = side_hash(p) & s->mask;
    while (s->tab[i].ptr && s->tab[i].ptr != p)
        i = (i + 1) & s->mask;
    if (!s->tab[i].ptr)
        s->used++;
    s->tab[i].ptr = p;
    s->tab[i].size = size;
}

static int side_grow(stripe_t *s)
{
    uint32_t cap = s->tab ? (s->mask + 1) * 2 : 256;
    side_entry_t *old = s->tab;
    uint32_t old_cap = s->tab ? s->mask + 1 : 0;
    side_entry_t *tab = col_vm_map_for(COL_VM_SHADOW, (size_t)cap * sizeof *tab);
    if (!tab)
        return -1;
    s->tab = tab;
    s->mask = cap - 1;
    s->used = 0;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].ptr)
            side_insert(s, old[i].ptr, old[i].size);
    if (old)
        col_vm_unmap(old, (size_t)old_cap * sizeof *old);
    return 0;
}

int col_shadow_size_put(const void *ptr, uint64_t size)
{
    uintptr_t p = (uintptr_t)ptr;
    stripe_t *s = stripe_of(p);
    ut_spin_lock(&s->lock);
    /* Grow at half full; past that, a full table still takes entries up to
     * 7/8 (probes get longer, nothing is lost) while mmap fails. */
    if (!s->tab || (s->used + 1) * 2 > s->mask + 1) {
        if (side_grow(s) < 0 && (!s->tab || (s->used + 1) * 8 > (s->mask + 1) * 7)) {
            ut_spin_unlock(&s->lock);
            return -1;
        }
    }
    side_insert(s, p, size);
    ut_spin_unlock(&s->lock);
    return 0;
}

/* Remove ptr's exact size (backward-shift deletion keeps probes short). */
uint64_t col_shadow_size_take(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    stripe_t *s = stripe_of(p);
    uint64_t size = 0;
    ut_spin_lock(&s->lock);
    if (s->tab) {
        uint32_t i = side_hash(p) & s->mask;
        while (s->tab[i].ptr && s->tab[i].ptr != p)
            i = (i + 1) & s->mask;
        if (s->tab[i].ptr == p) {
            size = s->tab[i].size;
            s->tab[i].ptr = 0;
            s->used--;
            uint32_t j = i;
            for (;;) {
                j = (j + 1) & s->mask;
                if (!s->tab[j].ptr)
                    break;
                uint32_t home = side_hash(s->tab[j].ptr) & s->mask;
                /* move j back to i if its home is not in (i, j] cyclically */
                if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
                    s->tab[i] = s->tab[j];
                    s->tab[j].ptr = 0;
                    i = j;
                }
            }
        }
    }
    ut_spin_unlock(&s->lock);
    return size;
}

void col_shadow_atfork_prepare(void)
{
    for (int i = 0; i < STRIPES; i++)
        ut_spin_lock(&stripes[i].lock);
}

void col_shadow_atfork_release(void)
{
    for (int i = 0; i < STRIPES; i++)
        ut_spin_unlock(&stripes[i].lock);
}
