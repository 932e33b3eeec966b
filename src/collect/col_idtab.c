/* col_idtab.c - the write side of the insert-only id index (col_idtab.h):
 * creation, the insert lock, and growth.  Lookups are inline. */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "collect/col_idtab.h"
#include "collect/col_internal.h"
#include "common/ut_spin.h"

static col_idtab_index_t *index_new(uint32_t cap)
{
    int saved = errno;
    col_idtab_index_t *ix =
        col_vm_map_populated(COL_VM_TREE, sizeof *ix + (size_t)cap * sizeof ix->slots[0]);
    errno = saved;
    if (ix)
        ix->mask = cap - 1;
    return ix;
}

int col_idtab_init(col_idtab_t *x, uint32_t cap, col_idtab_key_fn *key_of)
{
    x->lock = 0;
    x->version = 0;
    x->last = 0;
    x->key_of = key_of;
    x->cur = index_new(cap);
    return x->cur ? 0 : -1;
}

void col_idtab_lock(col_idtab_t *x)
{
    ut_spin_lock(&x->lock);
}

/* This thread's waits (col_idtab_lock_or_wait) since it last took a
 * table's lock itself. */
static _Thread_local unsigned tls_waits __attribute__((tls_model("initial-exec")));

/* A thread that waits COL_IDTAB_CONVOY times in a row without taking the
 * lock itself is trailing another thread through the same new stacks, key
 * by key, and each of its waits takes the lock's and the new records'
 * lines away from the thread making them.  Sleeping for
 * COL_IDTAB_BACKOFF_NS lets the maker run ahead alone; the sleeper then
 * finds the keys made and catches up with lookups (binary-trees at two
 * threads: the first trees took ~58 ms more CPU than at one; BENCHMARKS.md,
 * "Two threads making the same stacks").  Not under a seccomp filter
 * (col_seccomp.c), which might forbid the sleep: there it waits, as
 * before. */
#define COL_IDTAB_CONVOY 8
#define COL_IDTAB_BACKOFF_NS 50000

static void back_off(void)
{
    int saved = errno;
    struct timespec ts = {0, COL_IDTAB_BACKOFF_NS};
    nanosleep(&ts, NULL); /* a signal may cut it short: the caller looks again */
    errno = saved;
}

int col_idtab_lock_or_wait(col_idtab_t *x)
{
    if (ut_spin_trylock(&x->lock)) {
        tls_waits = 0;
        return 1;
    }
    if ((++tls_waits >= COL_IDTAB_CONVOY || col_config.fault_backoff) &&
        !__atomic_load_n(&col_seccomp, __ATOMIC_RELAXED)) {
        tls_waits = 0;
        back_off();
    } else {
        ut_spin_wait(&x->lock);
    }
    return 0;
}

void col_idtab_unlock(col_idtab_t *x)
{
    ut_spin_unlock(&x->lock);
}

void col_idtab_reset_lock(col_idtab_t *x)
{
    x->lock = 0;
}

uint32_t col_idtab_find_locked(col_idtab_t *x, uint64_t k1, uint32_t k2, uint32_t since)
{
    if (__atomic_load_n(&x->version, __ATOMIC_RELAXED) == since)
        return 0;
    return col_idtab_find(x, k1, k2, x->key_of);
}

/* Put a slot (id << 32 | tag) at its tag's place, or the first empty one
 * after it. */
static void put(col_idtab_index_t *ix, uint64_t slot)
{
    uint32_t i = (uint32_t)slot & ix->mask;
    while (ix->slots[i])
        i = (i + 1) & ix->mask;
    __atomic_store_n(&ix->slots[i], slot, __ATOMIC_RELEASE);
    ix->used++;
}

int col_idtab_reserve_locked(col_idtab_t *x)
{
    col_idtab_index_t *ix = x->cur;
    if ((uint64_t)(ix->used + 1) * 4 <= (uint64_t)(ix->mask + 1) * 3)
        return 0;
    if (ix->mask >= 0x7fffffffu)
        return -1;
    col_idtab_index_t *bigger = index_new((ix->mask + 1) * 2);
    if (!bigger)
        return -1;
    for (uint32_t i = 0; i <= ix->mask; i++)
        if (ix->slots[i])
            put(bigger, ix->slots[i]);
    /* the old index stays mapped, as readers may still be probing it, but
     * its memory goes back: a reader there sees empty slots (col_idtab.h) */
    __atomic_store_n(&x->cur, bigger, __ATOMIC_RELEASE);
    col_vm_release(ix, sizeof *ix + ((size_t)ix->mask + 1) * sizeof ix->slots[0]);
    return 0;
}

void col_idtab_put_locked(col_idtab_t *x, uint64_t k1, uint32_t k2, uint32_t id)
{
    put(x->cur, (uint64_t)id << 32 | (col_idtab_hash(k1, k2) >> 32));
    __atomic_store_n(&x->version, x->version + 1, __ATOMIC_RELEASE);
}
