/* col_vm.c - the collector's own memory, straight from mmap.
 *
 * Nothing the collector keeps comes from the profiled program's malloc:
 * its tables would show up in the program's arenas (and in its peak RSS),
 * fragment them, and after a flush freed them glibc would keep the pages.
 * Mappings are MAP_NORESERVE, so only the pages touched cost memory, and
 * what a flush frees goes back to the kernel at once.
 *
 * With HEAPSCOPE_STATS=1 each mapping is also kept track of, with what it
 * is for, so that the exit can say what the collector's own memory holds
 * (col_memstat.c).  Without it nothing is kept: the table's pages are
 * never touched. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "collect/col_internal.h"

/* Once the profile is sealed (col_seccomp.c) nothing is mapped, unmapped
 * or released: a filter may forbid it, and nothing recorded then is ever
 * written.  Callers handle NULL as an mmap failure. */
UT_INLINE int sealed(void)
{
    return __atomic_load_n(&col_sealed, __ATOMIC_RELAXED);
}

/* ---- the mappings, for HEAPSCOPE_STATS -------------------------------- */

/* A slot is claimed by an atomic add and published by storing its
 * address last (release), so that the hooks of any thread may map, and a
 * reader sees whole entries; an unmapped entry's address is cleared.
 * Slots are not reused: a process that maps more than COL_VM_TRACKED
 * times says how many it did not keep track of. */
#define COL_VM_TRACKED 4096
typedef struct tracked {
    void *p;
    size_t size;
    col_vm_kind_t kind;
} tracked_t;
static tracked_t tracked[COL_VM_TRACKED];
static unsigned tracked_n, untracked;

static void track(void *p, size_t size, col_vm_kind_t kind)
{
    if (!col_config.stats)
        return;
    unsigned i = __atomic_fetch_add(&tracked_n, 1, __ATOMIC_RELAXED);
    if (i >= COL_VM_TRACKED) {
        __atomic_fetch_add(&untracked, 1, __ATOMIC_RELAXED);
        return;
    }
    tracked[i].size = size;
    tracked[i].kind = kind;
    __atomic_store_n(&tracked[i].p, p, __ATOMIC_RELEASE);
}

/* The entry of mapping p (NULL if none), for unmapping and growing. */
static tracked_t *tracked_at(const void *p)
{
    if (!col_config.stats)
        return NULL;
    unsigned n = __atomic_load_n(&tracked_n, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < n && i < COL_VM_TRACKED; i++)
        if (__atomic_load_n(&tracked[i].p, __ATOMIC_ACQUIRE) == p)
            return &tracked[i];
    return NULL;
}

static void untrack(const void *p)
{
    tracked_t *e = tracked_at(p);
    if (e)
        __atomic_store_n(&e->p, NULL, __ATOMIC_RELEASE);
}

unsigned col_vm_each(void (*fn)(void *p, size_t size, col_vm_kind_t kind, void *arg), void *arg)
{
    unsigned n = __atomic_load_n(&tracked_n, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n && i < COL_VM_TRACKED; i++) {
        void *p = __atomic_load_n(&tracked[i].p, __ATOMIC_ACQUIRE);
        if (p)
            fn(p, tracked[i].size, tracked[i].kind, arg);
    }
    return __atomic_load_n(&untracked, __ATOMIC_RELAXED);
}

/* ---- mapping ------------------------------------------------------------ */

static void *map(col_vm_kind_t kind, size_t size, int flags)
{
    if (sealed())
        return NULL;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    track(p, size, kind);
    return p;
}

void *col_vm_map_for(col_vm_kind_t kind, size_t size)
{
    return map(kind, size, 0);
}

void *col_vm_map(size_t size)
{
    return map(COL_VM_OTHER, size, 0);
}

/* For tables about to be filled anyway: faulting their pages in one by
 * one, on reads first, would map the zero page and then replace it (see
 * UT_WRITE_FIRST). */
void *col_vm_map_populated(col_vm_kind_t kind, size_t size)
{
    return map(kind, size, MAP_POPULATE);
}

void col_vm_unmap(void *p, size_t size)
{
    if (p && size && !sealed()) {
        untrack(p);
        munmap(p, size);
    }
}

/* Give the pages of a mapping that stays mapped back to the kernel: they
 * read as zeros (the shared zero page, no memory) until written again.
 * 0, or -1 if the kernel refused (they are then as they were). */
int col_vm_release(void *p, size_t size)
{
    int saved = errno; /* called from the allocation hooks */
    int rc = sealed() ? -1 : p && size ? madvise(p, size, MADV_DONTNEED) : 0;
    errno = saved;
    return rc == 0 ? 0 : -1;
}

/* A new mapping and a copy, not mremap: ThreadSanitizer does not see
 * mremap (tests/tsan), and growing happens at flushes, not per event. */
void *col_vm_grow(void *p, size_t old_size, size_t new_size)
{
    const tracked_t *e = p ? tracked_at(p) : NULL;
    void *q = map(e ? e->kind : COL_VM_OTHER, new_size, 0);
    if (q && p && old_size) {
        memcpy(q, p, old_size < new_size ? old_size : new_size);
        col_vm_unmap(p, old_size);
    }
    return q;
}
