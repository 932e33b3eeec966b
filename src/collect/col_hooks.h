/* col_hooks.h - what the interposed allocation functions (col_hooks.c,
 * col_hooks_cxx.c, col_hooks_cold.c) share: the test for the fast path,
 * the hook's frame (where unwinding starts), the body of free() and of
 * every operator delete, and the recorded realloc. */
#ifndef COL_HOOKS_H
#define COL_HOOKS_H

#include "collect/col_hooks_cold.h"
#include "collect/col_record.h"

/* The thread's state, when the collector is ready, the thread attached and
 * not inside heapscope; else NULL (the cold paths decide). */
#define COL_HOOK_FAST() UT_LIKELY(col_tls_fast != NULL)
/* The hook's own frame: the unwinders start at its caller. */
#define COL_HOOK_FRAME __builtin_frame_address(0)

/* free(ptr): recorded before the real free, so that the address cannot be
 * handed to another thread while we still look at it. */
UT_INLINE void col_hook_free(void *ptr)
{
    if (UT_UNLIKELY(ptr == NULL))
        return;
    col_thread_t *t = col_tls_fast;
    if (UT_UNLIKELY(t == NULL)) {
        col_cold_free(ptr);
        return;
    }
    if (UT_LIKELY(col_record_free_quick(t, ptr)))
        col_real.free(ptr);
    else
        col_record_free_slow(t, ptr);
}

/* realloc(ptr, size), recorded: the old block is taken out of the shadow
 * before the real realloc (so that its address, once freed, cannot be
 * recorded by another thread first), then its free is committed, or it is
 * put back if realloc failed; the new block is an allocation from the
 * stack above frame.  For any thread the collector may record, attached
 * or not (col_record_alloc and col_record_commit_free attach it). */
UT_INLINE void *col_hook_realloc(void *ptr, size_t size, const void *frame)
{
    void *p;
    if (ptr == NULL) {
        if ((p = col_real.malloc(size)) != NULL)
            col_record_alloc(p, size, frame);
        return p;
    }
    col_taken_t old;
    col_record_take(ptr, &old);
    p = col_real.realloc(ptr, size);
    if (UT_UNLIKELY(p == NULL && size != 0)) {
        col_record_restore(&old); /* failed: the old block lives on */
        return NULL;
    }
    col_record_commit_free(&old);
    if (p != NULL)
        col_record_alloc(p, size, frame);
    return p;
}

#endif
