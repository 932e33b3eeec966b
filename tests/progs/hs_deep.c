/* hs_deep.c - stacks deeper than the checks a cache entry holds in itself
 * (COL_SC_CHKS, col_internal.h), which differ only in their outermost
 * frames.
 *
 * main calls deep_side_a or deep_side_b (the same code, so the same frame
 * layout), which recurses through 44 frames of deep_down to deep_leaf;
 * deep_leaf allocates 20 blocks of 40 bytes from one call site and frees
 * them.  Under either side deep_leaf's frame and return address are the
 * same, and so are the words of every frame but the outermost ones: the
 * recorder's cache of recent stacks must keep each side's stack (more
 * than 20 checks: in the entry's chunk of deep checks) and tell them apart by the
 * words of the side's frame.  2,000 rounds, every fourth under side b.
 *
 * Allocations: 40,000, 40,000 frees, 1,600,000 bytes; 30,000 under
 * deep_side_a, 10,000 under deep_side_b. */
#include <stdlib.h>

#include "hsprog.h"

#define DEPTH 44
#define BLOCKS 20

HS_SITE void deep_leaf(void)
{
    void *p[BLOCKS];
    for (int i = 0; i < BLOCKS; i++)
        p[i] = malloc(40);
    for (int i = 0; i < BLOCKS; i++) {
        hs_escape(p[i]);
        free(p[i]);
    }
}

HS_SITE void deep_down(int n)
{
    if (n > 0)
        deep_down(n - 1);
    else
        deep_leaf();
    __asm__ __volatile__("" ::: "memory"); /* not a tail call */
}

HS_SITE void deep_side_a(void)
{
    deep_down(DEPTH);
    __asm__ __volatile__("" ::: "memory");
}

HS_SITE void deep_side_b(void)
{
    deep_down(DEPTH);
    __asm__ __volatile__("" ::: "memory");
}

int main(void)
{
    for (int r = 0; r < 2000; r++) {
        if (r % 4 == 3)
            deep_side_b();
        else
            deep_side_a();
    }
    return 0;
}
