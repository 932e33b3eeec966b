/* hs_realloc.c - realloc chains and realloc's edge cases.
 *
 * chain_start:       malloc(16)                          1 alloc,  16 bytes
 * chain_grow:        10 x realloc(p, 16 << i), i = 1..10 10 allocs, 32736 bytes
 *                    (each frees the previous block: chain_start's 1 and 9 of
 *                    its own; chain_end frees the last one)
 * realloc_from_null: 3 x realloc(NULL, 40)               3 allocs, 120 bytes
 * zero_source:       4 x malloc(56), then realloc_to_zero does realloc(p, 0)
 *                    on each: 4 frees and no allocation (glibc returns NULL)
 * fail_source:       malloc(64); realloc_fail asks realloc(p, 2^62), which
 *                    fails and leaves p alone: not counted; then free(p).
 * shrink_source:     malloc(8000), which shrink_chain shrinks to 6000, 4000
 *                    and 1000 bytes: 3 allocs, 11000 bytes, 3 frees of the
 *                    blocks before; then after_shrink mallocs 16000 bytes.
 *                    The heap is 1000 + 16000 then (the realloc_from_null
 *                    blocks are freed by then): the peak, 17000 bytes, above
 *                    chain_grow's 16384, if each shrink lowered the heap.
 * Totals: 24 allocations, 24 frees, 68160 bytes, nothing leaked; peak
 * 17000 bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "hsprog.h"

static volatile size_t huge_size = (size_t)1 << 62;

HS_SITE static char *chain_start(void)
{
    char *p = malloc(16);
    if (!p)
        hs_fail("malloc");
    p[0] = 1;
    return p;
}

HS_SITE static char *chain_grow(char *p)
{
    for (int i = 1; i <= 10; i++) {
        p = realloc(p, (size_t)16 << i);
        if (!p)
            hs_fail("realloc grow");
        p[((size_t)16 << i) - 1] = (char)i;
    }
    return p;
}

HS_SITE static void chain_end(char *p)
{
    free(p);
}

HS_SITE static void realloc_from_null(void **out)
{
    for (int i = 0; i < 3; i++) {
        out[i] = realloc(NULL, 40);
        if (!out[i])
            hs_fail("realloc(NULL)");
    }
}

HS_SITE static void zero_source(void **out)
{
    for (int i = 0; i < 4; i++) {
        out[i] = malloc(56);
        if (!out[i])
            hs_fail("malloc");
    }
}

HS_SITE static void realloc_to_zero(void **blocks)
{
    for (int i = 0; i < 4; i++) {
        void *r = realloc(blocks[i], 0);
        if (r != NULL) /* glibc frees and returns NULL */
            hs_fail("realloc(p, 0) returned a block");
    }
}

HS_SITE static void *fail_source(void)
{
    void *p = malloc(64);
    if (!p)
        hs_fail("malloc");
    return p;
}

HS_SITE static void realloc_fail(void *p)
{
    void *r = realloc(p, huge_size);
    if (r != NULL)
        hs_fail("realloc(p, 2^62) succeeded");
}

HS_SITE static char *shrink_source(void)
{
    char *p = malloc(8000);
    if (!p)
        hs_fail("malloc");
    return p;
}

HS_SITE static char *shrink_chain(char *p)
{
    static const size_t sizes[] = {6000, 4000, 1000};
    for (int i = 0; i < 3; i++) {
        p = realloc(p, sizes[i]);
        if (!p)
            hs_fail("realloc shrink");
        p[sizes[i] - 1] = (char)i;
    }
    return p;
}

HS_SITE static char *after_shrink(void)
{
    char *p = malloc(16000);
    if (!p)
        hs_fail("malloc");
    p[15999] = 1;
    return p;
}

int main(void)
{
    void *fromnull[3];
    void *zero[4];

    chain_end(chain_grow(chain_start()));
    realloc_from_null(fromnull);
    zero_source(zero);
    realloc_to_zero(zero);
    void *p = fail_source();
    realloc_fail(p);
    free(p);
    for (int i = 0; i < 3; i++)
        free(fromnull[i]);
    char *small = shrink_chain(shrink_source());
    char *big = after_shrink();
    free(big);
    free(small);
    hs_puts(1, "realloc done\n");
    return 0;
}
