/* hs_spacing.c - many small blocks live at once, for allocators that place
 * blocks 8 bytes apart (jemalloc's and tcmalloc's 8-byte class), where two
 * blocks share one of the shadow map's 16-byte granules (col_shadow_leaf).
 *
 *   tiny_site:  4,096 x malloc(8):           32,768 bytes
 *   small_site: 512 x malloc(s) for s = 16, 24, 32, 40, 48, 56, 64, in
 *               turn:                        3,584 blocks, 143,360 bytes
 * All 7,680 are live together.  Then the program prints how many pairs of
 * neighbouring live blocks are 8 bytes apart ("pairs 8 apart: N") and how
 * many blocks start 8 bytes into a 16-byte granule, of each site
 * ("odd tiny: N", "odd small: N"), and frees the blocks in two passes,
 * odd indexes first.  It keeps the first 100 tiny blocks (800 bytes) and
 * the first 10 small blocks of each size (2,800 bytes) live at exit:
 *   tiny_site:  4,096 allocations, 3,996 frees, 800 bytes leaked
 *   small_site: 3,584 allocations, 3,514 frees, 2,800 bytes leaked
 * Output through write(2) only. */
#include <stdlib.h>

#include "hsprog.h"

#define TINY 4096
#define PER_SIZE 512
#define SIZES 7
#define SMALL (PER_SIZE * SIZES)
#define TINY_KEPT 100
#define SMALL_KEPT 10 /* of each size */

static void *tiny[TINY];
static void *small[SMALL];
static uintptr_t sorted[TINY + SMALL];

HS_SITE static void *tiny_site(void)
{
    return malloc(8);
}

HS_SITE static void *small_site(size_t n)
{
    return malloc(n);
}

/* Shell sort: glibc's qsort may call malloc. */
static void sort(uintptr_t *a, size_t n)
{
    for (size_t gap = n / 2; gap > 0; gap /= 2)
        for (size_t i = gap; i < n; i++) {
            uintptr_t v = a[i];
            size_t j = i;
            for (; j >= gap && a[j - gap] > v; j -= gap)
                a[j] = a[j - gap];
            a[j] = v;
        }
}

static uint64_t odd(void *const *blocks, size_t n)
{
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((uintptr_t)blocks[i] & 15) == 8;
    return k;
}

static void say(const char *what, uint64_t v)
{
    hs_puts(1, what);
    hs_put_u64(1, v);
    hs_puts(1, "\n");
}

int main(void)
{
    for (size_t i = 0; i < TINY; i++)
        if (!(tiny[i] = tiny_site()))
            hs_fail("malloc(8)");
    for (size_t i = 0; i < SMALL; i++)
        if (!(small[i] = small_site(16 + 8 * (i / PER_SIZE))))
            hs_fail("malloc(small)");

    size_t n = 0;
    for (size_t i = 0; i < TINY; i++)
        sorted[n++] = (uintptr_t)tiny[i];
    for (size_t i = 0; i < SMALL; i++)
        sorted[n++] = (uintptr_t)small[i];
    sort(sorted, n);
    uint64_t pairs = 0;
    for (size_t i = 1; i < n; i++) {
        if (sorted[i] == sorted[i - 1])
            hs_fail("two live blocks at one address");
        pairs += sorted[i] - sorted[i - 1] == 8;
    }
    say("pairs 8 apart: ", pairs);
    say("odd tiny: ", odd(tiny, TINY));
    say("odd small: ", odd(small, SMALL));

    for (int pass = 1; pass >= 0; pass--) {
        for (size_t i = (size_t)pass; i < TINY; i += 2)
            if (i >= TINY_KEPT)
                free(tiny[i]);
        for (size_t i = (size_t)pass; i < SMALL; i += 2)
            if (i % PER_SIZE >= SMALL_KEPT)
                free(small[i]);
    }
    return 0;
}
