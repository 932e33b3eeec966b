/* hs_counters.c - counts past the width of the collector's hot counters.
 *
 * A thread's counters of a site keep 31 bits of allocations and frees, 15
 * of temporary allocations and 16 of its share of the peak; what does not
 * fit is carried to the leaf's other planes (col_internal.h, col_count_t).
 * Everything here runs on the main thread, but for handed_site:
 *
 * temp_pairs:   100,000 x malloc(32) + free: 100,000 temporary (three
 *               carries of the 15-bit count)
 * many_live:    40,000 x malloc(48), all live at once (1,920,000 bytes: the
 *               peak, and a share of 40,000 blocks, over 16 bits), then freed
 *               in order: the last one is temporary
 * handed_site:  a second thread's 50 x malloc(64), freed by main after the
 *               thread has exited (a negative live partial on main)
 *
 * Totals of the three sites: 140,050 allocations and frees, 5,123,200
 * bytes; nothing leaked. */
#include <pthread.h>
#include <stdlib.h>

#include "hsprog.h"

#define PAIRS 100000
#define LIVE 40000
#define HANDED 50

static void *live[LIVE];
static void *handed[HANDED];

HS_SITE static void temp_pairs(void)
{
    for (int i = 0; i < PAIRS; i++) {
        void *p = malloc(32);
        if (!p)
            hs_fail("malloc");
        hs_escape(p);
        free(p);
    }
}

HS_SITE static void many_live(void)
{
    for (int i = 0; i < LIVE; i++)
        if (!(live[i] = malloc(48)))
            hs_fail("malloc");
}

HS_SITE static void handed_site(void)
{
    for (int i = 0; i < HANDED; i++)
        if (!(handed[i] = malloc(64)))
            hs_fail("malloc");
}

static void *worker(void *arg)
{
    (void)arg;
    handed_site();
    return NULL;
}

int main(void)
{
    temp_pairs();
    many_live();
    for (int i = 0; i < LIVE; i++)
        free(live[i]);
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, NULL) != 0)
        hs_fail("pthread");
    for (int i = 0; i < HANDED; i++)
        free(handed[i]);
    hs_puts(1, "counters done\n");
    return 0;
}
