/* col_ext_jemalloc.c - libheapscope-jemalloc.so: jemalloc's own entry
 * points, interposed beside libheapscope.so (col_ext.h says why this is a
 * library of its own).  Programs built on jemalloc's non-standard API
 * (folly's sized deletes and in-place growth, for one) allocate with
 * mallocx, resize with rallocx and xallocx and free with dallocx and
 * sdallocx; without these hooks those blocks would be missing from the
 * profile, and blocks malloc'd and then freed through them would stay live
 * in it.
 *
 * Each hook calls jemalloc's function (or, in a process without jemalloc,
 * the same call served by the next malloc family: col_ext_jemalloc_real.c)
 * and records through libheapscope.so's heapscope_ext_* functions,
 * referenced weakly: without libheapscope.so the hooks only pass the calls
 * on.
 *
 * What is recorded: mallocx an allocation of the requested size; rallocx,
 * when it succeeds, the free of the old block and the allocation of the
 * new one; xallocx, when it resized the block in place (its result differs
 * from the block's size before, as jemalloc itself decides), the same at
 * one address, the new block's size being size + extra as far as it got;
 * dallocx and sdallocx a free.  Not seen: jemalloc's experimental
 * batch_alloc (only its fallback calls of mallocx), and blocks an arena
 * reset or destroyed through mallctl takes with it, which stay live in the
 * profile. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "collect/col_ext.h"
#include "collect/col_ext_jemalloc.h"
#include "common/ut_compiler.h"

#pragma weak heapscope_ext_alloc
#pragma weak heapscope_ext_free
#pragma weak heapscope_ext_resize

/* The hooks' frame: the stack recorded starts at its caller. */
#define JE_FRAME __builtin_frame_address(0)

UT_EXPORT void *mallocx(size_t size, int flags)
{
    void *p = col_je_real()->mallocx(size, flags);
    if (heapscope_ext_alloc)
        heapscope_ext_alloc(p, size, JE_FRAME);
    return p;
}

/* ---- rallocx and xallocx: resized through heapscope_ext_resize ---- */

typedef struct je_call {
    const col_je_real_t *je;
    size_t extra;
    int flags;
    size_t usize; /* xallocx's result */
} je_call_t;

static void *call_rallocx(void *ptr, size_t *size, void *arg)
{
    je_call_t *c = arg;
    return c->je->rallocx(ptr, *size, c->flags);
}

/* Resized if the real size changed (jemalloc returns the old one when it
 * could not, and keeps a small block in its size class); the block's
 * requested size is then size + extra, as far as the real size goes. */
static void *call_xallocx(void *ptr, size_t *size, void *arg)
{
    je_call_t *c = arg;
    size_t old = c->je->sallocx(ptr, 0);
    c->usize = c->je->xallocx(ptr, *size, c->extra, c->flags);
    if (c->usize == old)
        return NULL;
    size_t want = c->extra > SIZE_MAX - *size ? SIZE_MAX : *size + c->extra;
    *size = c->usize < want ? c->usize : want;
    return ptr;
}

UT_EXPORT void *rallocx(void *ptr, size_t size, int flags)
{
    je_call_t c = {col_je_real(), 0, flags, 0};
    if (heapscope_ext_resize)
        return heapscope_ext_resize(ptr, size, call_rallocx, &c, JE_FRAME);
    return call_rallocx(ptr, &size, &c);
}

UT_EXPORT size_t xallocx(void *ptr, size_t size, size_t extra, int flags)
{
    je_call_t c = {col_je_real(), extra, flags, 0};
    if (heapscope_ext_resize)
        heapscope_ext_resize(ptr, size, call_xallocx, &c, JE_FRAME);
    else
        call_xallocx(ptr, &size, &c);
    return c.usize;
}

/* ---- dallocx and sdallocx ---- */

UT_EXPORT void dallocx(void *ptr, int flags)
{
    if (heapscope_ext_free && !heapscope_ext_free(ptr))
        return;
    col_je_real()->dallocx(ptr, flags);
}

UT_EXPORT void sdallocx(void *ptr, size_t size, int flags)
{
    if (heapscope_ext_free && !heapscope_ext_free(ptr))
        return;
    col_je_real()->sdallocx(ptr, size, flags);
}
