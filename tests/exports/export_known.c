/* export_known.c - allocations the export tests (test_export_formats.py)
 * check in every format.
 *
 * site_inline:  inl_alloc (always inlined into it) mallocs 10 x 64 bytes,
 *               never freed: 640 bytes leaked, and a Location with two
 *               Line entries (inl_alloc inside site_inline) in pprof
 * site_temp:    5 x malloc(100), each freed at once: 5 temporary
 *               allocations, 500 bytes, none live at the end
 * site_big:     1 x malloc(4096), freed after the peak: the peak is
 *               640 + 4096 = 4736 bytes (site_temp's blocks are gone);
 *               freed before any other allocation, so it is temporary
 *               too (6 temporary allocations in all)
 * Output goes through write(2): no other allocation. */
#include <stdlib.h>

#include "hsprog.h"

static void *keep[10];
static void *volatile sink;

static inline __attribute__((always_inline)) void *inl_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        hs_fail("malloc inline");
    return p;
}

HS_SITE static void site_inline(void)
{
    for (int i = 0; i < 10; i++)
        keep[i] = inl_alloc(64);
}

HS_SITE static void site_temp(void)
{
    for (int i = 0; i < 5; i++) {
        sink = malloc(100);
        if (!sink)
            hs_fail("malloc temp");
        free(sink);
    }
}

HS_SITE static void *site_big(void)
{
    void *p = malloc(4096);
    if (!p)
        hs_fail("malloc big");
    return p;
}

int main(void)
{
    site_inline();
    site_temp();
    void *big = site_big();
    sink = big;
    free(big);
    return 0;
}
