/* hs_setpairs.c - pairs of stacks that take turns, seen from many frames,
 * so that some pairs share a set of the collector's cache of recent stacks
 * (col_sc_set: one of 32 per thread, chosen by the hook's frame and
 * return address).
 *
 * Sixteen sites, site0 .. site15, each malloc(24) from its own function
 * (64-byte aligned, so that the return addresses differ in many bits).
 * For k = 1 .. PADS, run_pair moves its frame down by 16 x k bytes
 * (alloca) and makes ROUNDS rounds of free(site a) and free(site b), with
 * a = k % 16 and b = (5k + 7) % 16 (never a): both are called from the
 * same frame.
 *   each site: 12 of the 192 pairs take it as a, 12 as b (5k + 7 runs
 *   through every residue in 16 steps, and is never k's): 4,800
 *   allocations of 24 bytes, all freed, all temporary.
 * Then run_pair(16 x (PADS + 1), site0, site1) with LONG_ROUNDS rounds: by
 * then every way 0 of the cache keeps a stack of the first pairs, so these
 * two start in ways 1-7 and must move to way 0.
 *   site0, site1: 10,000 allocations more each.
 * About one pair in 32 shares a set.  A pair's four first allocations
 * walk the stack (each stack is kept at its second sight); after that
 * each allocation is answered by the cache, also when the pair shares a
 * set: e2e_setpairs checks the count of walks HEAPSCOPE_STATS reports.
 * Output through write(2) only. */
#include <alloca.h>
#include <stdlib.h>

#include "hsprog.h"

#define PADS 192
#define ROUNDS 200
#define LONG_ROUNDS 10000
#define SITES 16

#define SITE(i)                                                                                    \
    HS_SITE __attribute__((aligned(64))) static void *site##i(void)                               \
    {                                                                                              \
        return malloc(24);                                                                         \
    }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
SITE(8) SITE(9) SITE(10) SITE(11) SITE(12) SITE(13) SITE(14) SITE(15)

static void *(*const sites[SITES])(void) = {site0,  site1,  site2,  site3, site4,  site5,
                                            site6,  site7,  site8,  site9, site10, site11,
                                            site12, site13, site14, site15};

static void take(void *(*site)(void))
{
    void *p = site();
    if (!p)
        hs_fail("malloc(24)");
    hs_escape(p);
    free(p);
}

HS_SITE static void run_pair(size_t pad, int rounds, void *(*a)(void), void *(*b)(void))
{
    char *p = alloca(pad);
    hs_escape(p);
    for (int r = 0; r < rounds; r++) {
        take(a);
        take(b);
    }
}

int main(void)
{
    for (size_t k = 1; k <= PADS; k++)
        run_pair(16 * k, ROUNDS, sites[k % SITES], sites[(5 * k + 7) % SITES]);
    run_pair(16 * (PADS + 1), LONG_ROUNDS, site0, site1);
    hs_puts(1, "setpairs done\n");
    return 0;
}
