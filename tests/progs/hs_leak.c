/* hs_leak.c - leaks from two known functions, one tidy site.
 *
 * leak_small_nodes: 7 x malloc(48)   = 336 bytes, never freed (unreachable)
 * leak_big_buffers: 3 x malloc(1000) = 3000 bytes, never freed (unreachable)
 * tidy_site:        5 x malloc(200)  = 1000 bytes, all freed
 * Totals: 15 allocations, 5 frees, 4336 bytes; leaked 3336 bytes in 10 blocks. */
#include <stdlib.h>

#include "hsprog.h"

HS_SITE static void leak_small_nodes(void)
{
    for (int i = 0; i < 7; i++) {
        void *p = malloc(48);
        if (!p)
            hs_fail("malloc");
        hs_escape(p); /* and forget it: a real leak */
    }
}

HS_SITE static void leak_big_buffers(void)
{
    for (int i = 0; i < 3; i++) {
        char *p = malloc(1000);
        if (!p)
            hs_fail("malloc");
        p[0] = 'x';
        hs_escape(p);
    }
}

HS_SITE static void tidy_site(void **out)
{
    for (int i = 0; i < 5; i++) {
        out[i] = malloc(200);
        if (!out[i])
            hs_fail("malloc");
    }
}

int main(void)
{
    void *tidy[5];
    leak_small_nodes();
    tidy_site(tidy);
    leak_big_buffers();
    for (int i = 0; i < 5; i++)
        free(tidy[i]);
    hs_puts(1, "leak done\n");
    return 0;
}
