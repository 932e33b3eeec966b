/* hs_plateau.c - heap levels that the heap-over-time samples must show
 * exactly, in a single thread (output by write(2) only, so nothing else is
 * allocated).
 *
 * peak_site:    4 x malloc(50000) = 200,000 bytes, held 40 ms, freed
 * plateau_site: 10 x malloc(1000) = 10,000 bytes, held 40 ms, freed
 *
 * With one thread there is no publication slack, so every sample shows the
 * heap as it is; the plateau is below the 16 KiB slack that threads would
 * keep unpublished, so an implementation that deferred it would show 0.
 * Totals: 14 allocations, 14 frees, 210,000 bytes; peak 200,000. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

#include "hsprog.h"

static void hold(void)
{
    struct timespec ts = {0, 40 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

HS_SITE static void level(int n, size_t size)
{
    void *b[10];
    for (int i = 0; i < n; i++) {
        if (!(b[i] = malloc(size)))
            hs_fail("malloc");
        hs_escape(b[i]);
    }
    hold();
    for (int i = 0; i < n; i++)
        free(b[i]);
}

HS_SITE static void peak_site(void)
{
    level(4, 50000);
}

HS_SITE static void plateau_site(void)
{
    level(10, 1000);
}

int main(void)
{
    peak_site();
    hold();
    plateau_site();
    hs_puts(1, "plateau done\n");
    return 0;
}
