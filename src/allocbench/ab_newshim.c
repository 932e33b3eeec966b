/* ab_newshim.c - libheapscope-abnew.so: C++ operator new and delete as
 * plain calls to malloc and free, for the --fragmentation pass only.
 *
 * jemalloc, tcmalloc and mimalloc define operator new/delete themselves.
 * Preloaded, their definitions win over libstdc++'s, so a C++ program's
 * `new` never calls `malloc` and heapscope's collector (which interposes
 * the malloc family) misses those blocks: the live bytes at the peak came
 * out at 77 KB instead of 23 MB for the list workload.  Preloaded between
 * the collector and the allocator, these definitions come first, and
 * every `new` goes through malloc -> collector -> the allocator's malloc,
 * as it does with libstdc++ and glibc.  Timed runs never load this.
 * Allocation failure aborts instead of throwing std::bad_alloc (C cannot
 * throw); the pass measures bytes, it is not a place to recover. */
#define _GNU_SOURCE
#include <stdlib.h>

/* One default-visible definition per mangled name (x86-64, size_t = m). */
#define AB_EXPORT __attribute__((visibility("default")))

static void *ab_new(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

static void *ab_new_aligned(size_t n, size_t align)
{
    void *p = NULL;
    if (align < sizeof(void *))
        align = sizeof(void *);
    if (posix_memalign(&p, align, n ? n : 1) != 0)
        abort();
    return p;
}

static void *ab_new_nothrow(size_t n)
{
    return malloc(n ? n : 1);
}

static void *ab_new_aligned_nothrow(size_t n, size_t align)
{
    void *p = NULL;
    if (align < sizeof(void *))
        align = sizeof(void *);
    return posix_memalign(&p, align, n ? n : 1) == 0 ? p : NULL;
}

/* operator new / new[] (size), (size, nothrow), (size, align), (size, align, nothrow) */
AB_EXPORT void *_Znwm(size_t n) { return ab_new(n); }
AB_EXPORT void *_Znam(size_t n) { return ab_new(n); }
AB_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return ab_new_nothrow(n); }
AB_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt) { (void)nt; return ab_new_nothrow(n); }
AB_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a) { return ab_new_aligned(n, a); }
AB_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a) { return ab_new_aligned(n, a); }
AB_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *nt)
{
    (void)nt;
    return ab_new_aligned_nothrow(n, a);
}
AB_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *nt)
{
    (void)nt;
    return ab_new_aligned_nothrow(n, a);
}

/* operator delete / delete[]: every variant is free(). */
AB_EXPORT void _ZdlPv(void *p) { free(p); }
AB_EXPORT void _ZdaPv(void *p) { free(p); }
AB_EXPORT void _ZdlPvm(void *p, size_t n) { (void)n; free(p); }
AB_EXPORT void _ZdaPvm(void *p, size_t n) { (void)n; free(p); }
AB_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; free(p); }
AB_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; free(p); }
AB_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a) { (void)a; free(p); }
AB_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a) { (void)a; free(p); }
AB_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n; (void)a; free(p); }
AB_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n; (void)a; free(p); }
AB_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{
    (void)a;
    (void)nt;
    free(p);
}
AB_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{
    (void)a;
    (void)nt;
    free(p);
}
