/* col_vm.c - the collector's own memory, straight from mmap.
 *
 * Nothing the collector keeps comes from the profiled program's malloc:
 * its tables would show up in the program's arenas (and in its peak RSS),
 * fragment them, and after a flush freed them glibc would keep the pages.
 * Mappings are MAP_NORESERVE, so only the pages touched cost memory, and
 * what a flush frees goes back to the kernel at once. */
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

void *col_vm_map(size_t size)
{
    if (sealed())
        return NULL;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* For tables about to be filled anyway: faulting their pages in one by
 * one, on reads first, would map the zero page and then replace it (see
 * UT_WRITE_FIRST). */
void *col_vm_map_populated(size_t size)
{
    if (sealed())
        return NULL;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void col_vm_unmap(void *p, size_t size)
{
    if (p && size && !sealed())
        munmap(p, size);
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
    void *q = col_vm_map(new_size);
    if (q && p && old_size) {
        memcpy(q, p, old_size < new_size ? old_size : new_size);
        munmap(p, old_size);
    }
    return q;
}
