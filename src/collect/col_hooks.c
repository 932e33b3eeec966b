/* col_hooks.c - the interposed malloc family.  libheapscope.so exports
 * these, operator new and delete (col_hooks_cxx.c), dlopen, dlclose, the
 * exec family, unshare, setns and pthread_create (col_hooks_proc.c),
 * prctl and syscall (col_seccomp.c), pipe2 for libunwind's pipe
 * (col_unwind.c, not in libheapscope-fp.so), and heapscope_*
 * (tests/check_exports.sh checks the list).
 *
 * Each hook: take the fast path when the collector is ready and this thread
 * is not inside heapscope itself, call the real function, record, return.
 * Everything unusual (start-up, re-entry, bootstrap blocks from dlsym) goes
 * to col_hooks_cold.c.  Allocations are recorded after the real call
 * succeeds; frees are recorded before the real free, so that the address
 * cannot be handed to another thread while we still look at it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "collect/col_hooks.h"

UT_EXPORT void *malloc(size_t size)
{
    col_thread_t *t = col_tls_fast;
    if (UT_UNLIKELY(t == NULL))
        return col_cold_malloc(size);
    void *p = col_real.malloc(size);
    if (UT_LIKELY(p != NULL))
        col_record_alloc_fast(t, p, size, COL_HOOK_FRAME);
    return p;
}

UT_EXPORT void free(void *ptr)
{
    col_hook_free(ptr);
}

UT_EXPORT void *calloc(size_t n, size_t size)
{
    col_thread_t *t = col_tls_fast;
    if (UT_UNLIKELY(t == NULL))
        return col_cold_calloc(n, size);
    void *p = col_real.calloc(n, size);
    if (UT_LIKELY(p != NULL))
        col_record_alloc_fast(t, p, n * size, COL_HOOK_FRAME); /* no overflow: calloc succeeded */
    return p;
}

/* The old block is taken out of the shadow before the real realloc, so
 * that its address, once freed, cannot be recorded by another thread
 * first, and put back if realloc fails.  Here: a thread on the fast path
 * growing or shrinking a live block of an exact size, or allocating (ptr
 * NULL).  A thread off the fast path and a bootstrap block go to the cold
 * path (col_cold_realloc); an unknown block, one whose bytes are counted
 * (above PF_EXACT_SIZE_MAX, or of COL_SITE_LOST) and a size of 0 to
 * col_record_realloc_slow. */
UT_EXPORT void *realloc(void *ptr, size_t size)
{
    col_thread_t *t = col_tls_fast;
    if (UT_UNLIKELY(t == NULL) || UT_UNLIKELY(col_boot_owns(ptr)))
        return col_cold_realloc(ptr, size);
    void *p;
    if (ptr == NULL) {
        if ((p = col_real.malloc(size)) != NULL)
            col_record_alloc_fast(t, p, size, COL_HOOK_FRAME);
        return p;
    }
    uint32_t i, *leaf = col_shadow_leaf(ptr, 0, &i);
    uint32_t v = UT_LIKELY(leaf != NULL) ? __atomic_load_n(&leaf[i], __ATOMIC_RELAXED) : 0;
    if (UT_UNLIKELY(v == 0 || !col_tag_exact(v) || size == 0))
        return col_record_realloc_slow(ptr, size, COL_HOOK_FRAME);
    __atomic_store_n(&leaf[i], 0, __ATOMIC_RELAXED);
    p = col_real.realloc(ptr, size);
    if (UT_UNLIKELY(p == NULL)) {
        __atomic_store_n(&leaf[i], v, __ATOMIC_RELAXED); /* the old block lives on */
        return NULL;
    }
    col_record_realloc_fast(t, ptr, v, p, size, COL_HOOK_FRAME);
    return p;
}

UT_EXPORT void *reallocarray(void *ptr, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(ptr, n * size);
}

UT_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (!COL_HOOK_FAST())
        return col_cold_posix_memalign(out, align, size);
    int rc = col_real.posix_memalign(out, align, size);
    if (UT_LIKELY(rc == 0))
        col_record_alloc(*out, size, COL_HOOK_FRAME);
    return rc;
}

UT_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (!COL_HOOK_FAST() || !col_real.aligned_alloc)
        return col_cold_aligned(COL_ALIGNED_ALLOC, align, size);
    void *p = col_real.aligned_alloc(align, size);
    if (UT_LIKELY(p != NULL))
        col_record_alloc(p, size, COL_HOOK_FRAME);
    return p;
}

UT_EXPORT void *memalign(size_t align, size_t size)
{
    if (!COL_HOOK_FAST() || !col_real.memalign)
        return col_cold_aligned(COL_MEMALIGN, align, size);
    void *p = col_real.memalign(align, size);
    if (UT_LIKELY(p != NULL))
        col_record_alloc(p, size, COL_HOOK_FRAME);
    return p;
}

UT_EXPORT void *valloc(size_t size)
{
    if (!COL_HOOK_FAST() || !col_real.valloc)
        return col_cold_aligned(COL_VALLOC, 0, size);
    void *p = col_real.valloc(size);
    if (UT_LIKELY(p != NULL))
        col_record_alloc(p, size, COL_HOOK_FRAME);
    return p;
}

UT_EXPORT void *pvalloc(size_t size)
{
    if (!COL_HOOK_FAST() || !col_real.pvalloc)
        return col_cold_aligned(COL_PVALLOC, 0, size);
    void *p = col_real.pvalloc(size);
    if (UT_LIKELY(p != NULL))
        col_record_alloc(p, size, COL_HOOK_FRAME);
    return p;
}

UT_EXPORT size_t malloc_usable_size(void *ptr)
{
    if (ptr && UT_UNLIKELY(col_boot_owns(ptr)))
        return col_boot_size(ptr);
    if (UT_UNLIKELY(!col_real.malloc_usable_size))
        return 0;
    return col_real.malloc_usable_size(ptr);
}
