#define _POSIX_C_SOURCE 200809L
/* rp_views.c - the known allocations the tests of the report views assert
 * (tests/reports/test_reports_*.py).  Single thread, output by write(2)
 * only, so nothing else is allocated.  In order:
 *
 * leak_big:    1 x malloc(1000), never freed              1 block, 1,000 B
 * leak_small:  called from three lines of main, 1 x malloc(100) each, never
 *              freed: three stacks (same functions, different main lines),
 *              3 blocks, 300 B
 * peak_site:   4 x malloc(50000), held ~40 ms (the timeline sees it), then
 *              freed newest first: peak = 1,000 + 300 + 200,000 = 201,300
 *              (one temporary: the newest block is freed before the
 *              thread allocates again)
 * temp_site:   20 x { malloc(32); free } : 20 temporary allocations, 640 B
 * hist_site:   10 x 24, 5 x 100, 2 x 20000 (bucket [19456, 20479]), freed
 *              oldest first (the last one freed is the newest: 1 temporary)
 * via_a, via_b -> alloc_in(64): 1 each, freed (each temporary); merge by
 *              caller joins them
 *
 * Totals: 1+3+4+20+17+2 = 47 allocations, 43 frees, leaked 1,300 B in 4
 * blocks; 24 temporary (20 + 1 + 1 + 2).  Each malloc call in hist_site's
 * three loops is its own stack (its own return address).
 */
#include <stdlib.h>
#include <time.h>

#include "hsprog.h"

HS_SITE static void *leak_big(void)
{
    void *p = malloc(1000);
    hs_escape(p);
    return p;
}

HS_SITE static void leak_small(void)
{
    hs_escape(malloc(100));
}

HS_SITE static void peak_site(void)
{
    void *b[4];
    for (int i = 0; i < 4; i++) {
        b[i] = malloc(50000);
        hs_escape(b[i]);
    }
    struct timespec ts = {0, 40 * 1000 * 1000};
    nanosleep(&ts, NULL);
    for (int i = 3; i >= 0; i--)
        free(b[i]);
}

HS_SITE static void temp_site(void)
{
    for (int i = 0; i < 20; i++) {
        void *p = malloc(32);
        hs_escape(p);
        free(p);
    }
}

HS_SITE static void hist_site(void)
{
    void *b[17];
    int n = 0;
    for (int i = 0; i < 10; i++)
        b[n++] = malloc(24);
    for (int i = 0; i < 5; i++)
        b[n++] = malloc(100);
    for (int i = 0; i < 2; i++)
        b[n++] = malloc(20000);
    for (int i = 0; i < n; i++) {
        hs_escape(b[i]);
        free(b[i]);
    }
}

HS_SITE static void alloc_in(void)
{
    void *p = malloc(64);
    hs_escape(p);
    free(p);
}

HS_SITE static void via_a(void)
{
    alloc_in();
    hs_escape(NULL);
}

static volatile int via_b_calls; /* keeps via_b's code unlike via_a's (no folding) */

HS_SITE static void via_b(void)
{
    alloc_in();
    via_b_calls++;
}

int main(void)
{
    hs_escape(leak_big());
    leak_small();
    leak_small();
    leak_small();
    peak_site();
    temp_site();
    hist_site();
    via_a();
    via_b();
    hs_puts(1, "views done\n");
    return 0;
}
