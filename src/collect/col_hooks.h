/* col_hooks.h - what the interposed allocation functions (col_hooks.c,
 * col_hooks_cxx.c, col_hooks_cold.c) share: the test for the fast path,
 * the hook's frame (where unwinding starts), and the body of free() and
 * of every operator delete. */
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

#endif
