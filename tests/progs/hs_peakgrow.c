/* hs_peakgrow.c - a heap that grows in four threads at once, then falls:
 * the peak's shares are taken when the heap leaves the peak, not at each
 * of the hundreds of new peaks on the way up (docs/FORMAT.md, "Peak").
 *
 * trigger_site: main, malloc(65536) before any thread starts
 * grow_site:    each of 4 workers, 2000 x malloc(1000) = 2,000,000 bytes
 * Then, while every worker waits: main frees the trigger block, the first
 * fall of the heap (65,536 bytes, above the 16 KiB slack of a thread), and
 * only then do the workers free their blocks.  The heap is never higher
 * than when the trigger is freed, with every worker's blocks live: the
 * peak's shares are grow_site 8,000,000 bytes (8,000 blocks) and
 * trigger_site 65,536, exactly.
 * Totals of the two sites: 8,001 allocations and frees, 8,065,536 bytes.
 *
 * With the argument "keep" nothing is freed: the heap never leaves its
 * peak, which only the final flush closes, with the same shares. */
#define _GNU_SOURCE /* pthread_barrier_t under -std=c11 */
#include <pthread.h>
#include <stdlib.h>

#include "hsprog.h"

#define WORKERS 4
#define BLOCKS 2000
#define SIZE 1000

static pthread_barrier_t grown, fallen;
static void *blocks[WORKERS][BLOCKS];
static int keep;

HS_SITE static void grow_site(void **out)
{
    for (int i = 0; i < BLOCKS; i++)
        if (!(out[i] = malloc(SIZE)))
            hs_fail("malloc");
}

HS_SITE static void *trigger_site(void)
{
    void *p = malloc(65536);
    if (!p)
        hs_fail("malloc");
    return p;
}

static void *worker(void *arg)
{
    void **mine = arg;
    grow_site(mine);
    pthread_barrier_wait(&grown);
    pthread_barrier_wait(&fallen);
    for (int i = 0; i < BLOCKS && !keep; i++)
        free(mine[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    keep = argc > 1 && !strcmp(argv[1], "keep");
    void *trigger = trigger_site();
    hs_escape(trigger);
    if (pthread_barrier_init(&grown, NULL, WORKERS + 1) ||
        pthread_barrier_init(&fallen, NULL, WORKERS + 1))
        hs_fail("pthread_barrier_init");
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&th[i], NULL, worker, blocks[i]))
            hs_fail("pthread_create");
    pthread_barrier_wait(&grown);
    if (!keep)
        free(trigger);
    pthread_barrier_wait(&fallen);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    hs_puts(1, "peakgrow done\n");
    return 0;
}
