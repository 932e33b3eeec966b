/* hs_manyret.c - one function that calls the allocating function from
 * 3,000 places, so that a DWARF walk steps through 3,000 return addresses
 * in turn: more than the 1,024 rules a thread's table of DWARF rules
 * holds before it grows (src/collect/col_dwarf.c), as a compiler's
 * thousands of call sites do.
 *
 * hub() calls take() from CALLS call sites in a row; main calls hub()
 * ROUNDS times.  take() mallocs 24 bytes and frees them.
 *   each of the 3,000 stacks take <- hub (at its own return address) <-
 *   main: 20 allocations of 24 bytes, all freed, all temporary; 60,000 in
 *   all.
 * The cache of recent stacks cannot hold them (they all come from one
 * frame of take's, so they share one set), and each walk reads the rule
 * of its own return address in hub: a table that never grew would read
 * .eh_frame ~60,000 times.  e2e_manyret checks every stack's count, and
 * how many rules were read (HEAPSCOPE_STATS).  Output through write(2)
 * only. */
#include <stdlib.h>

#include "hsprog.h"

#define ROUNDS 20

HS_SITE static void take(void)
{
    void *p = malloc(24);
    if (!p)
        hs_fail("malloc(24)");
    hs_escape(p);
    free(p);
}

#define C1 take();
#define C10 C1 C1 C1 C1 C1 C1 C1 C1 C1 C1
#define C100 C10 C10 C10 C10 C10 C10 C10 C10 C10 C10
#define C1000 C100 C100 C100 C100 C100 C100 C100 C100 C100 C100

/* CALLS = 3,000 call sites */
HS_SITE static void hub(void)
{
    C1000 C1000 C1000
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++)
        hub();
    hs_puts(1, "manyret done\n");
    return 0;
}
