/* col_ext_jemalloc.c - libheapscope-jemalloc.so: jemalloc's own entry
 * points, interposed beside libheapscope.so (col_ext.h says why this is a
 * library of its own).  Programs built on jemalloc's non-standard API
 * (folly's sized deletes and in-place growth, for one) allocate with
 * mallocx, resize with rallocx and xallocx and free with dallocx and
 * sdallocx; without these hooks those blocks would be missing from the
 * profile, and blocks malloc'd and then freed through them would stay live
 * in it.
 *
 * Each hook calls jemalloc's function (the next definition after this
 * library, found with dlsym(RTLD_NEXT) at its first call) and records through
 * libheapscope.so's heapscope_ext_* functions, referenced weakly: without
 * libheapscope.so the hooks only pass the calls on.  Without jemalloc
 * (an image exec'd with the same LD_PRELOAD), mallocx and rallocx fail
 * with ENOMEM, xallocx resizes nothing, and dallocx and sdallocx free with
 * the C library's free. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/col_ext.h"
#include "common/ut_compiler.h"

#pragma weak heapscope_ext_alloc
#pragma weak heapscope_ext_free
#pragma weak heapscope_ext_resize

typedef void *(*mallocx_fn)(size_t, int);
typedef void *(*rallocx_fn)(void *, size_t, int);
typedef size_t (*xallocx_fn)(void *, size_t, size_t, int);
typedef void (*dallocx_fn)(void *, int);
typedef void (*sdallocx_fn)(void *, size_t, int);
typedef void (*free_fn)(void *);

enum { JE_MALLOCX, JE_RALLOCX, JE_XALLOCX, JE_DALLOCX, JE_SDALLOCX, JE_FREE, JE_COUNT };
static const char *const je_names[JE_COUNT] = {"mallocx", "rallocx", "xallocx",
                                               "dallocx", "sdallocx", "free"};
static void *je_fns[JE_COUNT];
static int je_found[JE_COUNT];

/* jemalloc's function i (the C library's free for JE_FREE), or NULL when
 * the process has none.  Looked up at its first call, not in a
 * constructor: a lookup that fails allocates dlerror's message, and in a
 * program without jemalloc (--jemalloc, or an image exec'd with the same
 * LD_PRELOAD) those allocations would be the program's in its profile.
 * Two threads may both look: they store the same value. */
static void *je_fn(int i)
{
    if (UT_LIKELY(__atomic_load_n(&je_found[i], __ATOMIC_ACQUIRE)))
        return __atomic_load_n(&je_fns[i], __ATOMIC_RELAXED);
    void *f = dlsym(RTLD_NEXT, je_names[i]);
    __atomic_store_n(&je_fns[i], f, __ATOMIC_RELAXED);
    __atomic_store_n(&je_found[i], 1, __ATOMIC_RELEASE);
    return f;
}

/* The hooks' frame: the stack recorded starts at its caller. */
#define JE_FRAME __builtin_frame_address(0)

UT_EXPORT void *mallocx(size_t size, int flags)
{
    mallocx_fn f;
    *(void **)&f = je_fn(JE_MALLOCX);
    if (UT_UNLIKELY(f == NULL)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = f(size, flags);
    if (heapscope_ext_alloc)
        heapscope_ext_alloc(p, size, JE_FRAME);
    return p;
}

/* ---- rallocx and xallocx: resized through heapscope_ext_resize ---- */

typedef struct je_call {
    void *fn;
    size_t extra;
    int flags;
    size_t usize; /* xallocx's result */
} je_call_t;

static void *call_rallocx(void *ptr, size_t *size, void *arg)
{
    je_call_t *c = arg;
    rallocx_fn f;
    *(void **)&f = c->fn;
    return f(ptr, *size, c->flags);
}

/* xallocx grew or shrank the block in place if it returned at least size;
 * what the caller asked for is then size + extra, as far as it got. */
static void *call_xallocx(void *ptr, size_t *size, void *arg)
{
    je_call_t *c = arg;
    xallocx_fn f;
    *(void **)&f = c->fn;
    c->usize = f(ptr, *size, c->extra, c->flags);
    if (c->usize < *size)
        return NULL;
    size_t want = c->extra > SIZE_MAX - *size ? SIZE_MAX : *size + c->extra;
    *size = c->usize < want ? c->usize : want;
    return ptr;
}

UT_EXPORT void *rallocx(void *ptr, size_t size, int flags)
{
    je_call_t c = {je_fn(JE_RALLOCX), 0, flags, 0};
    if (UT_UNLIKELY(c.fn == NULL)) {
        errno = ENOMEM;
        return NULL;
    }
    if (heapscope_ext_resize)
        return heapscope_ext_resize(ptr, size, call_rallocx, &c, JE_FRAME);
    return call_rallocx(ptr, &size, &c);
}

UT_EXPORT size_t xallocx(void *ptr, size_t size, size_t extra, int flags)
{
    je_call_t c = {je_fn(JE_XALLOCX), extra, flags, 0};
    if (UT_UNLIKELY(c.fn == NULL))
        return 0; /* less than size: not resized */
    if (heapscope_ext_resize)
        heapscope_ext_resize(ptr, size, call_xallocx, &c, JE_FRAME);
    else
        call_xallocx(ptr, &size, &c);
    return c.usize;
}

/* ---- dallocx and sdallocx ---- */

/* Without jemalloc the block can only be the C library's. */
static void je_free_fallback(void *ptr)
{
    free_fn f;
    *(void **)&f = je_fn(JE_FREE);
    if (f)
        f(ptr);
}

UT_EXPORT void dallocx(void *ptr, int flags)
{
    if (heapscope_ext_free && !heapscope_ext_free(ptr))
        return;
    dallocx_fn f;
    *(void **)&f = je_fn(JE_DALLOCX);
    if (UT_LIKELY(f != NULL))
        f(ptr, flags);
    else
        je_free_fallback(ptr);
}

UT_EXPORT void sdallocx(void *ptr, size_t size, int flags)
{
    if (heapscope_ext_free && !heapscope_ext_free(ptr))
        return;
    sdallocx_fn f;
    *(void **)&f = je_fn(JE_SDALLOCX);
    if (UT_LIKELY(f != NULL))
        f(ptr, size, flags);
    else
        je_free_fallback(ptr);
}
