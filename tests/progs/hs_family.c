/* hs_family.c - calloc, the aligned allocators and reallocarray.
 *
 * calloc_site:          5 x calloc(10, 100)            5 allocs,  5000 bytes
 * calloc_overflow:      calloc(2^62, 16) -> NULL        not counted
 * posix_memalign_site:  3 x posix_memalign(64, 100)     3 allocs,   300 bytes
 * posix_memalign_bad:   posix_memalign(3, 100) EINVAL   not counted
 * aligned_alloc_site:   2 x aligned_alloc(128, 256)     2 allocs,   512 bytes
 * memalign_site:        2 x memalign(32, 72)            2 allocs,   144 bytes
 * valloc_site:          1 x valloc(1000)                1 alloc,   1000 bytes
 * pvalloc_site:         1 x pvalloc(8192)               1 alloc,   8192 bytes
 *                       (a whole number of pages: request = what pvalloc
 *                       gives, so "requested bytes" is unambiguous)
 * reallocarray_site:    reallocarray(NULL, 10, 24)      1 alloc,    240 bytes
 * reallocarray_grow:    reallocarray(p, 20, 24)         1 alloc,    480 bytes,
 *                       frees reallocarray_site's block
 * reallocarray_overflow: reallocarray(p, 2^62, 8) -> NULL, p kept: not counted
 * release_all frees everything.
 * Totals: 16 allocations, 16 frees, 15868 bytes, nothing leaked.
 * The program itself checks each block's alignment and that
 * malloc_usable_size() >= the request; it exits 99 if not.
 * `hs_family no-pvalloc` skips pvalloc_site (Valgrind aborts on pvalloc):
 * then 15 allocations, 15 frees, 7676 bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#include "hsprog.h"

#define MAX_BLOCKS 32

static void *blocks[MAX_BLOCKS];
static int nblocks;
static volatile size_t huge = (size_t)1 << 62;

/* Check alignment and usable size of a fresh block and keep it for release. */
static void keep(void *p, size_t request, size_t align)
{
    if (!p)
        hs_fail("allocation failed");
    if ((uintptr_t)p % align != 0)
        hs_fail("misaligned block");
    if (malloc_usable_size(p) < request)
        hs_fail("malloc_usable_size < request");
    blocks[nblocks++] = p;
}

HS_SITE static void calloc_site(void)
{
    for (int i = 0; i < 5; i++) {
        unsigned char *p = calloc(10, 100);
        keep(p, 1000, 16);
        for (int j = 0; j < 1000; j++)
            if (p[j] != 0)
                hs_fail("calloc memory not zero");
    }
}

HS_SITE static void calloc_overflow(void)
{
    void *p = calloc(huge, 16);
    if (p != NULL)
        hs_fail("calloc overflow returned a block");
}

HS_SITE static void posix_memalign_site(void)
{
    for (int i = 0; i < 3; i++) {
        void *p = NULL;
        if (posix_memalign(&p, 64, 100) != 0)
            hs_fail("posix_memalign");
        keep(p, 100, 64);
    }
}

HS_SITE static void posix_memalign_bad(void)
{
    void *p = NULL;
    if (posix_memalign(&p, 3, 100) != EINVAL)
        hs_fail("posix_memalign(3) did not fail with EINVAL");
}

HS_SITE static void aligned_alloc_site(void)
{
    for (int i = 0; i < 2; i++)
        keep(aligned_alloc(128, 256), 256, 128);
}

HS_SITE static void memalign_site(void)
{
    for (int i = 0; i < 2; i++)
        keep(memalign(32, 72), 72, 32);
}

HS_SITE static void valloc_site(void)
{
    keep(valloc(1000), 1000, (size_t)sysconf(_SC_PAGESIZE));
}

HS_SITE static void pvalloc_site(void)
{
    keep(pvalloc(8192), 8192, (size_t)sysconf(_SC_PAGESIZE));
}

HS_SITE static int *reallocarray_site(void)
{
    int *p = reallocarray(NULL, 10, 24);
    if (!p)
        hs_fail("reallocarray(NULL)");
    if (malloc_usable_size(p) < 240)
        hs_fail("malloc_usable_size < 240");
    return p;
}

HS_SITE static int *reallocarray_grow(int *p)
{
    p = reallocarray(p, 20, 24);
    if (!p)
        hs_fail("reallocarray grow");
    if (malloc_usable_size(p) < 480)
        hs_fail("malloc_usable_size < 480");
    return p;
}

HS_SITE static void reallocarray_overflow(int *p)
{
    if (reallocarray(p, huge, 8) != NULL)
        hs_fail("reallocarray overflow returned a block");
}

HS_SITE static void release_all(void)
{
    for (int i = 0; i < nblocks; i++)
        free(blocks[i]);
}

int main(int argc, char **argv)
{
    int with_pvalloc = !(argc > 1 && strcmp(argv[1], "no-pvalloc") == 0);

    calloc_site();
    calloc_overflow();
    posix_memalign_site();
    posix_memalign_bad();
    aligned_alloc_site();
    memalign_site();
    valloc_site();
    if (with_pvalloc)
        pvalloc_site();
    int *ra = reallocarray_grow(reallocarray_site());
    reallocarray_overflow(ra);
    blocks[nblocks++] = ra;
    release_all();
    hs_puts(1, "family done\n");
    return 0;
}
