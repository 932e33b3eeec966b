/* hs_peak.c - the global heap peak and each stack's share of it.
 *
 * base_site:       malloc(5000), live until exit (leaked)
 * warmup_site:     5 x malloc(100), freed before the peak
 * peak_big:        10 x malloc(100000) = 1000000 bytes, then all freed
 * after_peak_site: 3 x malloc(100000) = 300000 bytes, leaked
 * Peak: 1005000 bytes when peak_big's last block is allocated; at that
 * moment base_site holds 5000, peak_big 1000000, the others 0.
 * Totals: 19 allocations, 15 frees, 1305500 bytes; leaked 305000 in 4. */
#include <stdlib.h>

#include "hsprog.h"

static void *big[10];

HS_SITE static void *base_site(void)
{
    void *p = malloc(5000);
    if (!p)
        hs_fail("malloc");
    return p;
}

HS_SITE static void warmup_site(void)
{
    void *w[5];
    for (int i = 0; i < 5; i++)
        if (!(w[i] = malloc(100)))
            hs_fail("malloc");
    for (int i = 0; i < 5; i++)
        free(w[i]);
}

HS_SITE static void peak_big(void)
{
    for (int i = 0; i < 10; i++)
        if (!(big[i] = malloc(100000)))
            hs_fail("malloc");
}

HS_SITE static void after_peak_site(void)
{
    for (int i = 0; i < 3; i++) {
        void *p = malloc(100000);
        if (!p)
            hs_fail("malloc");
        hs_escape(p);
    }
}

int main(void)
{
    void *base = base_site();
    warmup_site();
    peak_big();
    for (int i = 0; i < 10; i++)
        free(big[i]);
    after_peak_site();
    hs_escape(base);
    hs_puts(1, "peak done\n");
    return 0;
}
