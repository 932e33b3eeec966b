/* col_hooks_cold.c - slow paths of the malloc hooks (see col_hooks.c).
 *
 * Three situations land here:
 *  - the collector has not started: start it, then take the normal path;
 *  - this thread is inside heapscope (col_inside): call the real
 *    function, record nothing;
 *  - the real allocator is not known yet (dlsym is resolving it on this
 *    thread): serve the block from the static bootstrap arena.  Such blocks
 *    are never freed; free() ignores them, realloc() copies them out. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/col_hooks.h"

/* 1 if the caller should record the call, 0 to pass it through, -1 if the
 * real allocator is unknown (use the bootstrap arena) or must not be used:
 * on the writer thread while it is kept out of glibc's count of threads,
 * where a call of glibc's malloc could meet the program's thread on
 * paths without atomics (col_glibc.c).  The writer allocates nothing;
 * should it ever, the flush names the count (col_writer_boot_allocs). */
int col_cold_mode(void)
{
    if (col_state == COL_UNINIT)
        col_boot_init();
    if (UT_UNLIKELY(col_tls_writer) && __atomic_load_n(&col_writer_hidden, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&col_writer_boot_allocs, 1, __ATOMIC_RELAXED);
        return -1;
    }
    if (col_state == COL_READY && !col_inside())
        return 1;
    return col_real.malloc ? 0 : -1;
}

void *col_cold_malloc(size_t size)
{
    int mode = col_cold_mode();
    if (mode < 0)
        return col_boot_alloc(size, 16);
    void *p = col_real.malloc(size);
    if (mode && p)
        col_record_alloc(p, size, __builtin_frame_address(0));
    return p;
}

int col_cold_free_record(void *ptr)
{
    if (col_boot_owns(ptr))
        return 0;
    int mode = col_cold_mode();
    if (mode < 0)
        return 0; /* only bootstrap blocks exist yet, or the hidden writer's
                   * (it frees nothing of glibc's: better kept than freed) */
    if (mode)
        col_record_free(ptr);
    return 1;
}

void col_cold_free(void *ptr)
{
    if (col_cold_free_record(ptr))
        col_real.free(ptr);
}

void *col_cold_calloc(size_t n, size_t size)
{
    int mode = col_cold_mode();
    if (mode < 0) {
        if (size && n > SIZE_MAX / size)
            return NULL;
        return col_boot_alloc(n * size, 16); /* the arena is zeroed, never reused */
    }
    void *p = col_real.calloc(n, size);
    if (mode && p)
        col_record_alloc(p, n * size, __builtin_frame_address(0));
    return p;
}

void *col_cold_realloc(void *ptr, size_t size)
{
    if (ptr && col_boot_owns(ptr)) {
        /* move a bootstrap block to the real heap */
        size_t old = col_boot_size(ptr);
        void *p = col_cold_malloc(size);
        if (p)
            memcpy(p, ptr, old < size ? old : size);
        return p;
    }
    int mode = col_cold_mode();
    if (mode < 0)
        return ptr ? NULL : col_boot_alloc(size, 16);
    if (!mode)
        return col_real.realloc(ptr, size);
    /* not through realloc(): its fast-path test fails again for a thread
     * not attached yet, or past its exit (the late-events state) */
    return col_record_realloc_slow(ptr, size, __builtin_frame_address(0));
}

int col_cold_posix_memalign(void **out, size_t align, size_t size)
{
    int mode = col_cold_mode();
    if (mode < 0) {
        *out = col_boot_alloc(size, align);
        return *out ? 0 : ENOMEM;
    }
    int rc = col_real.posix_memalign(out, align, size);
    if (mode && rc == 0)
        col_record_alloc(*out, size, __builtin_frame_address(0));
    return rc;
}

static void *aligned_real(enum col_aligned_kind kind, size_t align, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = NULL;
    switch (kind) {
    case COL_ALIGNED_ALLOC:
        if (col_real.aligned_alloc)
            return col_real.aligned_alloc(align, size);
        break;
    case COL_MEMALIGN:
        if (col_real.memalign)
            return col_real.memalign(align, size);
        break;
    case COL_VALLOC:
        if (col_real.valloc)
            return col_real.valloc(size);
        align = page;
        break;
    case COL_PVALLOC:
        if (col_real.pvalloc)
            return col_real.pvalloc(size);
        align = page;
        size = (size + page - 1) & ~(page - 1);
        break;
    }
    int rc = col_real.posix_memalign(&p, align, size);
    if (rc) {
        errno = rc;
        return NULL;
    }
    return p;
}

void *col_cold_aligned(enum col_aligned_kind kind, size_t align, size_t size)
{
    int mode = col_cold_mode();
    if (mode < 0)
        return col_boot_alloc(size, align ? align : 4096);
    void *p = aligned_real(kind, align, size);
    if (mode && p)
        col_record_alloc(p, size, __builtin_frame_address(0));
    return p;
}
