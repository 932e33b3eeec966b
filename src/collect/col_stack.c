/* col_stack.c - the process-wide table of unique call stacks.
 *
 * A stack is a list of return addresses; interning it gives a dense id
 * (1, 2, ...; id 1 is the pseudo-stack "lost") that the per-thread counters
 * and the shadow map store.  Records are appended to one large reserved
 * region and never move or change, so readers need no lock.  The hash index
 * is read without a lock too: inserts take a spinlock, and a grown index is
 * published with a release store while the old one stays mapped (a reader
 * still probing it may miss the newest stacks and then retries under the
 * lock).  Inserts are rare: one per unique stack. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "collect/col_internal.h"
#include "common/ut_spin.h"
#include "heapscope/profile.h"

#define RECORDS_BYTES (4ull << 30)         /* reserved, touched as used; offset / 8 fits 32 bits */
#define INDEX_INITIAL (1u << 14)

typedef struct stack_index {
    uint32_t mask;
    uint32_t used;
    /* (hash >> 32) << 32 | (record offset / 8 + 1); 0 = empty.  The tag
     * settles most probes without touching a record, and the offset finds
     * the record without going through offsets[]. */
    uint64_t slots[];
} stack_index_t;

static unsigned char *records;
static uint64_t records_used;
static uint64_t *offsets;       /* id -> byte offset in records */
static uint32_t count;          /* last id handed out */
static stack_index_t *index_cur;
static int insert_lock;


static uint64_t stack_hash(const uintptr_t *ips, int depth)
{
    uint64_t h = 0x243f6a8885a308d3ull ^ (uint64_t)depth;
    for (int i = 0; i < depth; i++) {
        h ^= ips[i];
        h *= 0x9fb21c651e98df25ull;
        h ^= h >> 29;
    }
    return h;
}

static stack_index_t *index_new(uint32_t cap)
{
    stack_index_t *x = col_vm_map(sizeof *x + (size_t)cap * sizeof(uint64_t));
    if (x)
        x->mask = cap - 1;
    return x;
}

static uint32_t add_record(const uintptr_t *ips, int depth, unsigned flags, uint64_t h);

int col_stack_init(void)
{
    records = col_vm_map(RECORDS_BYTES);
    offsets = col_vm_map((size_t)COL_MAX_STACKS * sizeof(uint64_t));
    index_cur = index_new(INDEX_INITIAL);
    if (!records || !offsets || !index_cur)
        return -1;
    add_record(NULL, 0, 0, 0); /* id 1: COL_STACK_LOST */
    return 0;
}

const col_stack_rec_t *col_stack_get(uint32_t id)
{
    return (const col_stack_rec_t *)(records + offsets[id]);
}

uint32_t col_stack_count(void)
{
    return __atomic_load_n(&count, __ATOMIC_ACQUIRE);
}

static inline const col_stack_rec_t *slot_rec(uint64_t slot)
{
    return (const col_stack_rec_t *)(records + (uint64_t)((uint32_t)slot - 1) * 8);
}

static inline int same(const col_stack_rec_t *r, const uintptr_t *ips, int depth, uint64_t h)
{
    return r->hash == h && r->depth == (uint32_t)depth &&
           memcmp(r->ips, ips, (size_t)depth * sizeof *ips) == 0;
}

int col_stack_is(uint32_t id, const uintptr_t *ips, int depth)
{
    const col_stack_rec_t *r = col_stack_get(id);
    return r->depth == (uint32_t)depth && memcmp(r->ips, ips, (size_t)depth * sizeof *ips) == 0;
}

static uint32_t find(const stack_index_t *x, const uintptr_t *ips, int depth, uint64_t h)
{
    uint32_t i = (uint32_t)h & x->mask;
    for (;;) {
        uint64_t slot = __atomic_load_n(&x->slots[i], __ATOMIC_ACQUIRE);
        if (slot == 0)
            return 0;
        if ((slot >> 32) == (h >> 32)) {
            const col_stack_rec_t *r = slot_rec(slot);
            if (same(r, ips, depth, h))
                return r->id;
        }
        i = (i + 1) & x->mask;
    }
}

static void index_put(stack_index_t *x, uint32_t id, uint64_t h)
{
    uint32_t i = (uint32_t)h & x->mask;
    while (x->slots[i])
        i = (i + 1) & x->mask;
    uint64_t slot = (h >> 32) << 32 | (offsets[id] / 8 + 1);
    __atomic_store_n(&x->slots[i], slot, __ATOMIC_RELEASE);
    x->used++;
}

/* Append a record (insert lock held, or at init). 0 if full. */
static uint32_t add_record(const uintptr_t *ips, int depth, unsigned flags, uint64_t h)
{
    size_t size = sizeof(col_stack_rec_t) + (size_t)depth * sizeof(uintptr_t);
    if (count + 1 >= COL_MAX_STACKS || records_used + size > RECORDS_BYTES)
        return 0;
    col_stack_rec_t *r = (col_stack_rec_t *)(records + records_used);
    r->hash = h;
    r->depth = (uint16_t)depth;
    r->flags = (uint16_t)flags;
    if (depth)
        memcpy(r->ips, ips, (size_t)depth * sizeof *ips);
    uint32_t id = count + 1;
    r->id = id;
    offsets[id] = records_used;
    records_used += (size + 7) & ~(size_t)7;
    __atomic_store_n(&count, id, __ATOMIC_RELEASE);
    return id;
}

UT_COLD static uint32_t insert(const uintptr_t *ips, int depth, unsigned flags, uint64_t h)
{
    ut_spin_lock(&insert_lock);
    stack_index_t *x = index_cur;
    uint32_t id = find(x, ips, depth, h);
    if (id == 0) {
        id = add_record(ips, depth, flags, h);
        if (id == 0) {
            id = COL_STACK_LOST;
        } else {
            if ((x->used + 1) * 2 > x->mask + 1) {
                stack_index_t *y = index_new((x->mask + 1) * 2);
                if (y) {
                    for (uint32_t s = 0; s <= x->mask; s++)
                        if (x->slots[s])
                            index_put(y, slot_rec(x->slots[s])->id, slot_rec(x->slots[s])->hash);
                    __atomic_store_n(&index_cur, y, __ATOMIC_RELEASE);
                    x = y; /* the old index stays mapped for readers */
                }
            }
            index_put(x, id, h);
        }
    }
    ut_spin_unlock(&insert_lock);
    return id;
}

/* The id of this stack, interning it if new; COL_STACK_LOST if the table
 * is full. */
uint32_t col_stack_intern(const uintptr_t *ips, int depth, unsigned flags)
{
    uint64_t h = stack_hash(ips, depth);
    uint32_t id = find(__atomic_load_n(&index_cur, __ATOMIC_ACQUIRE), ips, depth, h);
    if (UT_LIKELY(id != 0))
        return id;
    return insert(ips, depth, flags, h);
}

void col_stack_atfork_prepare(void)
{
    ut_spin_lock(&insert_lock);
}

void col_stack_atfork_release(void)
{
    ut_spin_unlock(&insert_lock);
}
