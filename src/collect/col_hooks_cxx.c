/* col_hooks_cxx.c - C++ operator new and delete, interposed like malloc.
 *
 * Under glibc, libstdc++'s operator new calls malloc, so the malloc hook
 * would see it anyway.  But jemalloc, tcmalloc and mimalloc define operator
 * new and delete themselves: in a C++ program linked with (or preloaded
 * with) one of them, `new` never reaches malloc and would be missing from
 * the profile.  libheapscope.so comes first in the symbol search order, so
 * these definitions win (a program's own operator new, in the executable,
 * still wins over ours): each allocates through the real malloc (or
 * posix_memalign) of whatever allocator is in use and records like the
 * malloc hook, its own frame being the hook frame, so the stack starts at
 * the code that said `new`; deletes go to free.
 *
 * Failure keeps C++'s rules: when the real allocator returns NULL, the
 * next definition of the same operator (libstdc++'s, or the allocator's)
 * is called, which runs the new-handler loop and throws std::bad_alloc (or
 * returns NULL for the nothrow forms).  Mangled names are those of x86-64
 * (size_t is `m`); the size and alignment arguments of sized and aligned
 * deletes are not needed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "collect/col_hooks.h"

/* std::nothrow_t, passed by reference: any address will do. */
static const char nothrow_dummy;

/* The allocation failed (or the collector is not ready and the bootstrap
 * path failed): let the next operator `name` decide. */
UT_COLD UT_NOINLINE static void *next_new(const char *name, size_t size, size_t align, int nothrow)
{
    void *next = dlsym(RTLD_NEXT, name);
    if (next) {
        /* function pointers from dlsym's void *, as POSIX says to */
        if (align && nothrow) {
            void *(*f)(size_t, size_t, const void *);
            *(void **)&f = next;
            return f(size, align, &nothrow_dummy);
        }
        if (align) {
            void *(*f)(size_t, size_t);
            *(void **)&f = next;
            return f(size, align);
        }
        if (nothrow) {
            void *(*f)(size_t, const void *);
            *(void **)&f = next;
            return f(size, &nothrow_dummy);
        }
        void *(*f)(size_t);
        *(void **)&f = next;
        return f(size);
    }
    if (nothrow)
        return NULL;
    col_log("heapscope: operator new(%lu) failed and no C++ runtime can throw std::bad_alloc\n",
            (unsigned long)size);
    abort();
}

/* Not ready, or inside heapscope: the malloc hook's cold path. */
UT_COLD UT_NOINLINE static void *cold_new(size_t size, size_t align)
{
    if (align <= 16)
        return col_cold_malloc(size);
    return col_cold_aligned(COL_ALIGNED_ALLOC, align, (size + align - 1) & ~(align - 1));
}

/* The body of every operator new: `size` 0 is made 1, as libstdc++ does. */
#define NEW_BODY(name, align, nothrow)                                                           \
    size_t n = size ? size : 1;                                                                \
    void *p = NULL;                                                                            \
    col_thread_t *t = col_tls_fast;                                                            \
    if (UT_LIKELY(t != NULL)) {                                                                \
        if ((align) <= 16)                                                                     \
            p = col_real.malloc(n);                                                            \
        else if (col_real.posix_memalign(&p, (align), n) != 0)                                 \
            p = NULL;                                                                          \
        if (UT_LIKELY(p != NULL)) {                                                            \
            col_record_alloc_fast(t, p, n, COL_HOOK_FRAME);                                    \
            return p;                                                                          \
        }                                                                                      \
    } else if ((p = cold_new(n, (align))) != NULL) {                                           \
        return p;                                                                              \
    }                                                                                          \
    return next_new(name, n, (align), (nothrow))

/* Declarations, for -Wmissing-prototypes and for the reader: the C++ names
 * of each are in the comment. */
void *_Znwm(size_t size);                                           /* new(size_t) */
void *_Znam(size_t size);                                           /* new[](size_t) */
void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt);             /* new(size_t, nothrow) */
void *_ZnamRKSt9nothrow_t(size_t size, const void *nt);             /* new[](size_t, nothrow) */
void *_ZnwmSt11align_val_t(size_t size, size_t align);              /* new(size_t, align_val_t) */
void *_ZnamSt11align_val_t(size_t size, size_t align);              /* new[](size_t, align_val_t) */
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt);
void _ZdlPv(void *p);                                               /* delete(void *) */
void _ZdaPv(void *p);                                               /* delete[](void *) */
void _ZdlPvm(void *p, size_t size);                                 /* delete(void *, size_t) */
void _ZdaPvm(void *p, size_t size);
void _ZdlPvRKSt9nothrow_t(void *p, const void *nt);
void _ZdaPvRKSt9nothrow_t(void *p, const void *nt);
void _ZdlPvSt11align_val_t(void *p, size_t align);
void _ZdaPvSt11align_val_t(void *p, size_t align);
void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align);
void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt);

UT_EXPORT void *_Znwm(size_t size) { NEW_BODY("_Znwm", 0, 0); }
UT_EXPORT void *_Znam(size_t size) { NEW_BODY("_Znam", 0, 0); }
UT_EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt)
{
    (void)nt;
    NEW_BODY("_ZnwmRKSt9nothrow_t", 0, 1);
}
UT_EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const void *nt)
{
    (void)nt;
    NEW_BODY("_ZnamRKSt9nothrow_t", 0, 1);
}
UT_EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t align)
{
    NEW_BODY("_ZnwmSt11align_val_t", align, 0);
}
UT_EXPORT void *_ZnamSt11align_val_t(size_t size, size_t align)
{
    NEW_BODY("_ZnamSt11align_val_t", align, 0);
}
UT_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    (void)nt;
    NEW_BODY("_ZnwmSt11align_val_tRKSt9nothrow_t", align, 1);
}
UT_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    (void)nt;
    NEW_BODY("_ZnamSt11align_val_tRKSt9nothrow_t", align, 1);
}

UT_EXPORT void _ZdlPv(void *p) { col_hook_free(p); }
UT_EXPORT void _ZdaPv(void *p) { col_hook_free(p); }
UT_EXPORT void _ZdlPvm(void *p, size_t size) { (void)size; col_hook_free(p); }
UT_EXPORT void _ZdaPvm(void *p, size_t size) { (void)size; col_hook_free(p); }
UT_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; col_hook_free(p); }
UT_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; col_hook_free(p); }
UT_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t align) { (void)align; col_hook_free(p); }
UT_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t align) { (void)align; col_hook_free(p); }
UT_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align)
{
    (void)size, (void)align;
    col_hook_free(p);
}
UT_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align)
{
    (void)size, (void)align;
    col_hook_free(p);
}
UT_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt)
{
    (void)align, (void)nt;
    col_hook_free(p);
}
UT_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt)
{
    (void)align, (void)nt;
    col_hook_free(p);
}
