/* hs_samekey.c - more stacks than a set of the collector's cache of
 * recent stacks has free ways, all from one frame and return address,
 * taking turns: the pattern of sqlite3, whose ~22 hot stacks all allocate
 * from sqlite3MemMalloc's one call to malloc, called at the same depth
 * from many callers.
 *
 * share() is the one function that calls malloc(24); caller0 .. caller5
 * each call it from the same frame (the same code, called from the same
 * loop), so every allocation's hook sees the same frame and return
 * address, and the six stacks differ only in the caller's return address
 * one frame out.  ROUNDS rounds, each calling caller0 .. caller5 in turn
 * and freeing each block at once:
 *   each callerN: ROUNDS allocations of 24 bytes, all freed, all
 *   temporary.
 * A stack is kept at its second sight.  Until 2026-11-26 a first sight
 * took a way another first sight waited in, so six new stacks in one set
 * evicted each other before any came back, and every allocation was
 * walked; e2e_samekey checks the count of walks HEAPSCOPE_STATS reports.
 * Output through write(2) only. */
#include <stdlib.h>

#include "hsprog.h"

#define ROUNDS 2000
#define CALLERS 6

HS_SITE static void *share(void)
{
    void *p = malloc(24);
    if (!p)
        hs_fail("malloc(24)");
    hs_escape(p);
    return p;
}

/* hs_escape after the call: no tail call, so the caller's frame stays */
#define CALLER(i)                                                                                  \
    HS_SITE static void *caller##i(void)                                                           \
    {                                                                                              \
        void *p = share();                                                                         \
        hs_escape(p);                                                                              \
        return p;                                                                                  \
    }
CALLER(0) CALLER(1) CALLER(2) CALLER(3) CALLER(4) CALLER(5)

static void *(*const callers[CALLERS])(void) = {caller0, caller1, caller2,
                                                caller3, caller4, caller5};

int main(void)
{
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < CALLERS; i++)
            free(callers[i]());
    hs_puts(1, "samekey done\n");
    return 0;
}
