/* mp_recurse.c - the recursion figure of the mprof paper as a program:
 * main -> f -> g -> f -> g -> malloc(10), 100 times, nothing freed.
 * mprof's caller/callee pairs count 2,000 bytes over f -> g although only
 * 1,000 were allocated; merging f and g into <cycle 1> gives main a
 * self + desc of exactly 1,000 bytes (100%).  Exactly:
 *   100 allocations of 10 bytes, 1,000 bytes, 0 frees, 1,000 kept. */
#include <stdlib.h>

#include "hsprog.h"

HS_SITE static void *g(int depth);

HS_SITE static void *f(int depth) { void *p = g(depth); hs_escape(p); return p; }

HS_SITE static void *g(int depth)
{
    if (depth == 0) {
        void *p = f(1);
        hs_escape(p);
        return p;
    }
    void *p = malloc(10);
    hs_escape(p);
    return p;
}

int main(void)
{
    for (int i = 0; i < 100; i++)
        hs_escape(f(0));
    return 0;
}
