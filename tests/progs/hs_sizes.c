/* hs_sizes.c - many sizes from three stacks, interleaved, so that sizes
 * and stacks compete for the entries of the collector's per-thread site
 * memo (col_site_memo, 1,024 entries) and of its recent-stacks cache.
 *
 * Three rounds.  In each, for s = 1 .. 2500: pa = alloc_a(s) and, in
 * rounds 0 and 1 only, pb = alloc_b(2501 - s); then free(pb), free(pa).
 * Then, in rounds 0 and 1, for j = 0 .. 99: free(alloc_c(8193 + 997 * j)).
 *   alloc_a: 7,500 blocks, 3 of each size 1..2500: 9,378,750 bytes;
 *            2,500 temporary (round 2, where no pb comes between).
 *   alloc_b: 5,000 blocks, 2 of each size 1..2500: 6,252,500 bytes;
 *            all temporary.
 *   alloc_c:   200 blocks, 2 of each of 100 sizes above 8 KiB:
 *            11,508,900 bytes; all temporary.
 * Then 1,000 times: free(alloc_d(s)) for s in 48, 100, 1126, 3000.  Few
 * pairs come between two uses of one, so 48 and 3000 are answered by the
 * memo (its hit path); 100 and 1126 from one stack share a memo entry
 * (1126 ^ (1126 >> 9) = 1124, and 1124 and 100 agree in their low ten
 * bits), so each evicts the other and a memo that did not compare the
 * key would give one the other's site.
 *   alloc_d: 4,000 blocks, 1,000 of each: 4,274,000 bytes; all
 *            temporary.
 * Then 1,000 times: free(alloc_e(s)) and free(calloc_e(s)) for s in 100,
 * 9000, 8192, 8193, 200: one stack's sizes go back and forth across the
 * largest exact size (8192, inlined in the hook) and the first bucket
 * (8193, out of line), through malloc and calloc.
 *   alloc_e, calloc_e: 5,000 blocks each, 1,000 of each size:
 *            25,685,000 bytes each; all temporary.
 * Nothing leaks.  Output through write(2) only. */
#include <stdlib.h>

#include "hsprog.h"

#define ROUNDS 3
#define SIZES 2500
#define BIG 100

HS_SITE static void *alloc_a(size_t n)
{
    return malloc(n);
}

HS_SITE static void *alloc_b(size_t n)
{
    return malloc(n);
}

HS_SITE static void *alloc_c(size_t n)
{
    return malloc(n);
}

HS_SITE static void *alloc_d(size_t n)
{
    return malloc(n);
}

HS_SITE static void *alloc_e(size_t n)
{
    return malloc(n);
}

HS_SITE static void *calloc_e(size_t n)
{
    return calloc(1, n);
}

static void *checked(void *p)
{
    if (!p)
        hs_fail("malloc");
    hs_escape(p);
    return p;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        for (size_t s = 1; s <= SIZES; s++) {
            void *pa = checked(alloc_a(s));
            if (r < 2)
                free(checked(alloc_b(SIZES + 1 - s)));
            free(pa);
        }
        if (r < 2)
            for (size_t j = 0; j < BIG; j++)
                free(checked(alloc_c(8193 + 997 * j)));
    }
    static const size_t cycle[] = {48, 100, 1126, 3000};
    for (int r = 0; r < 1000; r++)
        for (size_t i = 0; i < sizeof cycle / sizeof cycle[0]; i++)
            free(checked(alloc_d(cycle[i])));
    static const size_t edge[] = {100, 9000, 8192, 8193, 200};
    for (int r = 0; r < 1000; r++)
        for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
            free(checked(alloc_e(edge[i])));
            free(checked(calloc_e(edge[i])));
        }
    hs_puts(1, "sizes done\n");
    return 0;
}
