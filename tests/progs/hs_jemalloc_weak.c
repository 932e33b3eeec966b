/* hs_jemalloc_weak.c - a glibc program that uses jemalloc's own API when
 * it finds it (weak references, as code that probes for jemalloc does).
 * Run with `heapscope run --jemalloc`, it finds libheapscope-jemalloc.so's
 * functions, which without jemalloc serve the calls from the C library's
 * malloc family; otherwise it prints "no jemalloc API" and allocates
 * nothing.  With them:
 *
 * weak_alloc:  mallocx(200, MALLOCX_ALIGN(64) | MALLOCX_ZERO), mallocx(50, 0)
 *                                                  2 allocs, 250 bytes
 * weak_grow:   rallocx(p200, 400, MALLOCX_ZERO)    1 alloc, 400 bytes (frees
 *              weak_alloc's first block); xallocx(p, 100000, 0, 0) resizes
 *              nothing (the real size comes back)
 * weak_free:   dallocx of the 400, sdallocx(p50, 50, 0)
 * Totals: 3 allocations, 650 bytes, 3 frees. */
#include <stdint.h>
#include <stdlib.h>

#include "hsprog.h"

/* jemalloc's flags (its header: MALLOCX_ALIGN(a) is lg(a), MALLOCX_ZERO
 * 0x40) */
#define ALIGN_64 6
#define ZERO 0x40

extern void *mallocx(size_t size, int flags) __attribute__((weak));
extern void *rallocx(void *ptr, size_t size, int flags) __attribute__((weak));
extern size_t xallocx(void *ptr, size_t size, size_t extra, int flags) __attribute__((weak));
extern void dallocx(void *ptr, int flags) __attribute__((weak));
extern void sdallocx(void *ptr, size_t size, int flags) __attribute__((weak));

HS_SITE static void weak_alloc(unsigned char **a, void **b)
{
    *a = mallocx(200, ALIGN_64 | ZERO);
    *b = mallocx(50, 0);
    if (!*a || !*b || ((uintptr_t)*a & 63))
        hs_fail("mallocx");
    for (int i = 0; i < 200; i++)
        if ((*a)[i])
            hs_fail("MALLOCX_ZERO");
    (*a)[0] = 7;
}

HS_SITE static unsigned char *weak_grow(unsigned char *a)
{
    unsigned char *p = rallocx(a, 400, ZERO);
    if (!p || p[0] != 7)
        hs_fail("rallocx");
    for (int i = 200; i < 400; i++)
        if (p[i])
            hs_fail("rallocx MALLOCX_ZERO");
    size_t usize = xallocx(p, 100000, 0, 0);
    if (usize < 400 || usize >= 100000)
        hs_fail("xallocx");
    return p;
}

HS_SITE static void weak_free(void *a, void *b)
{
    dallocx(a, 0);
    sdallocx(b, 50, 0);
}

int main(void)
{
    if (!mallocx || !rallocx || !xallocx || !dallocx || !sdallocx) {
        hs_puts(1, "no jemalloc API\n");
        return 0;
    }
    unsigned char *a;
    void *b;
    weak_alloc(&a, &b);
    weak_free(weak_grow(a), b);
    hs_puts(1, "jemalloc API used\n");
    return 0;
}
