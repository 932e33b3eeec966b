/* hs_single.c - one thread, two allocation sites with known sizes.
 *
 * alloc_site_a: 100 mallocs of 16, 17, ... 115 bytes (6550 bytes), all freed.
 * alloc_site_b:  50 mallocs of 1000 bytes (50000 bytes), 20 freed, 30 leaked.
 * Both sets are live together before any free, so the peak is 56550 bytes.
 * free(NULL) is called 5 times and must not count.  No other allocation:
 * output goes through write(2).  Also used stripped (hs_single_stripped). */
#include <stdlib.h>

#include "hsprog.h"

#define N_A 100
#define N_B 50
#define B_FREED 20

static void *blocks_a[N_A];
static void *blocks_b[N_B];

HS_SITE static void alloc_site_a(void)
{
    for (int i = 0; i < N_A; i++) {
        blocks_a[i] = malloc(16 + (size_t)i);
        if (!blocks_a[i])
            hs_fail("malloc a");
    }
}

HS_SITE static void alloc_site_b(void)
{
    for (int i = 0; i < N_B; i++) {
        blocks_b[i] = malloc(1000);
        if (!blocks_b[i])
            hs_fail("malloc b");
    }
}

HS_SITE static void release_blocks(void)
{
    for (int i = 0; i < N_A; i++)
        free(blocks_a[i]);
    for (int i = 0; i < B_FREED; i++) {
        free(blocks_b[i]);
        blocks_b[i] = NULL;
    }
    for (int i = 0; i < 5; i++)
        free(blocks_b[i]); /* free(NULL) */
}

int main(void)
{
    alloc_site_a();
    alloc_site_b();
    release_blocks();
    hs_escape(blocks_b);
    hs_puts(1, "single done\n");
    return 0;
}
