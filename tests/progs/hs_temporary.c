/* hs_temporary.c - temporary allocations versus blocks kept across another.
 *
 * A block is temporary when the allocating thread frees it before it
 * allocates again.
 * temp_loop:  1000 x { malloc(64); free } -> 1000 allocs, 1000 temporary
 * keep_a/keep_b: 100 x { a = keep_a(); b = keep_b(); free(a); free(b) }
 *   keep_a: 100 allocs of 32, 0 temporary (keep_b allocated before a's free)
 *   keep_b: 100 allocs of 48, 100 temporary (only a free came in between)
 * Totals: 1200 allocations, 1200 frees, 72000 bytes, 1100 temporary. */
#include <stdlib.h>

#include "hsprog.h"

HS_SITE static void temp_loop(void)
{
    for (int i = 0; i < 1000; i++) {
        void *p = malloc(64);
        if (!p)
            hs_fail("malloc");
        hs_escape(p);
        free(p);
    }
}

HS_SITE static void *keep_a(void)
{
    void *p = malloc(32);
    if (!p)
        hs_fail("malloc");
    return p;
}

HS_SITE static void *keep_b(void)
{
    void *p = malloc(48);
    if (!p)
        hs_fail("malloc");
    return p;
}

int main(void)
{
    temp_loop();
    for (int i = 0; i < 100; i++) {
        void *a = keep_a();
        void *b = keep_b();
        free(a);
        free(b);
    }
    hs_puts(1, "temporary done\n");
    return 0;
}
