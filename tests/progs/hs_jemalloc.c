/* hs_jemalloc.c - jemalloc's own API, linked with libjemalloc (its
 * DT_NEEDED entry is what `heapscope run` looks for to preload
 * libheapscope-jemalloc.so).  All sizes are requested sizes.
 *
 * mallocx_site:  5 x mallocx(100, 0)                 5 allocs, 500 bytes,
 *                freed by dallocx_site (dallocx)
 * aligned_site:  3 x mallocx(200, MALLOCX_ALIGN(64) | MALLOCX_ZERO)
 *                                                     3 allocs, 600 bytes,
 *                freed by sdallocx_site (sdallocx)
 * malloc_site:   4 x malloc(48)                      4 allocs, 192 bytes,
 *                freed by sdallocx_site (sdallocx: a block of the standard
 *                API freed through jemalloc's)
 * grow_start:    mallocx(16)                         1 alloc, 16 bytes
 * grow_site:     6 x rallocx(p, 16 << i, 0), i = 1..6
 *                                                     6 allocs, 2016 bytes
 *                (each frees the block before: grow_start's and 5 of its
 *                own); grow_end frees the last with free()
 * fit_start:     mallocx(65536, 0)                   1 alloc, 65536 bytes
 * fit_site:      xallocx(p, 32768, 0, 0) shrinks it in place (real size
 *                32768): frees fit_start's block, 1 alloc of 32768 bytes;
 *                xallocx(p, 16000, 4000, 0) shrinks it to real size 20480:
 *                frees that, 1 alloc of 20000 bytes (size + extra);
 *                xallocx(p, 1 MiB, 0, 0) cannot grow it: nothing changes
 *                                                     2 allocs, 52768 bytes
 * noop_start:    mallocx(4000, 0)                    1 alloc, 4000 bytes
 *                (size class 4096)
 * noop_site:     xallocx(q, 4096, 0, 0) and xallocx(q, 100, 0, 0) leave it
 *                in its size class: not resized, nothing recorded
 * fit_end:       sdallocx of both blocks
 * fail_start:    mallocx(64, 0)                      1 alloc, 64 bytes;
 *                rallocx(p, 2^62, 0) fails and leaves it; dallocx_site
 *                frees it
 * leak_site:     mallocx(300, 0), never freed        1 alloc, 300 bytes
 * Totals: 25 allocations, 125,992 bytes; 24 frees; 300 bytes leaked.
 *
 * `hs_jemalloc threads`: instead, 4 threads each run 20,000 times
 * thread_site: mallocx(32, 0), then resize_site: rallocx(p, 64, 0), then
 * sdallocx(p, 64, 0): thread_site 80,000 allocs, 2,560,000 bytes;
 * resize_site 80,000 allocs, 5,120,000 bytes; all freed. */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hsprog.h"

static volatile size_t huge_size = (size_t)1 << 62;

HS_SITE static void mallocx_site(void **out)
{
    for (int i = 0; i < 5; i++)
        if (!(out[i] = mallocx(100, 0)))
            hs_fail("mallocx");
}

HS_SITE static void aligned_site(void **out)
{
    for (int i = 0; i < 3; i++) {
        unsigned char *p = mallocx(200, MALLOCX_ALIGN(64) | MALLOCX_ZERO);
        if (!p || ((uintptr_t)p & 63) != 0)
            hs_fail("mallocx aligned");
        for (int k = 0; k < 200; k++)
            if (p[k])
                hs_fail("MALLOCX_ZERO");
        out[i] = p;
    }
}

HS_SITE static void malloc_site(void **out)
{
    for (int i = 0; i < 4; i++)
        if (!(out[i] = malloc(48)))
            hs_fail("malloc");
}

HS_SITE static void dallocx_site(void **blocks, int n)
{
    for (int i = 0; i < n; i++)
        dallocx(blocks[i], 0);
}

HS_SITE static void sdallocx_site(void **blocks, int n, size_t size, int flags)
{
    for (int i = 0; i < n; i++)
        sdallocx(blocks[i], size, flags);
}

HS_SITE static char *grow_start(void)
{
    char *p = mallocx(16, 0);
    if (!p)
        hs_fail("mallocx");
    p[0] = 1;
    return p;
}

HS_SITE static char *grow_site(char *p)
{
    for (int i = 1; i <= 6; i++) {
        if (!(p = rallocx(p, (size_t)16 << i, 0)))
            hs_fail("rallocx");
        if (p[0] != 1)
            hs_fail("rallocx lost the contents");
        p[((size_t)16 << i) - 1] = (char)i;
    }
    return p;
}

HS_SITE static void grow_end(char *p)
{
    free(p);
}

HS_SITE static char *fit_start(void)
{
    char *p = mallocx(65536, 0);
    if (!p)
        hs_fail("mallocx");
    return p;
}

HS_SITE static void fit_site(char *p)
{
    if (xallocx(p, 32768, 0, 0) != 32768)
        hs_fail("xallocx(32768) did not shrink in place");
    if (xallocx(p, 16000, 4000, 0) != 20480)
        hs_fail("xallocx(16000, 4000) did not shrink to 20480");
    if (xallocx(p, (size_t)1 << 20, 0, 0) != 20480)
        hs_fail("xallocx(1 MiB) changed the block");
}

HS_SITE static char *noop_start(void)
{
    char *q = mallocx(4000, 0);
    if (!q)
        hs_fail("mallocx");
    return q;
}

HS_SITE static void noop_site(char *q)
{
    if (xallocx(q, 4096, 0, 0) != 4096 || xallocx(q, 100, 0, 0) != 4096)
        hs_fail("xallocx changed a small block's size class");
}

HS_SITE static void fit_end(char *p, char *q)
{
    sdallocx(p, 20000, 0);
    sdallocx(q, 4000, 0);
}

HS_SITE static void *fail_start(void)
{
    void *p = mallocx(64, 0);
    if (!p)
        hs_fail("mallocx");
    return p;
}

HS_SITE static void fail_site(void *p)
{
    if (rallocx(p, huge_size, 0) != NULL)
        hs_fail("rallocx(2^62) succeeded");
}

HS_SITE static void *leak_site(void)
{
    void *p = mallocx(300, 0);
    hs_escape(p);
    return p;
}

#define THREADS 4
#define ROUNDS 20000

HS_SITE static void *thread_site(void)
{
    void *p = mallocx(32, 0);
    if (!p)
        hs_fail("mallocx");
    return p;
}

HS_SITE static void *resize_site(void *p)
{
    if (!(p = rallocx(p, 64, 0)))
        hs_fail("rallocx");
    return p;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++)
        sdallocx(resize_site(thread_site()), 64, 0);
    return NULL;
}

static int threads(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, NULL))
            hs_fail("pthread_create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    hs_puts(1, "jemalloc threads done\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "threads"))
        return threads();
    void *a[5], *b[3], *c[4];
    mallocx_site(a);
    aligned_site(b);
    malloc_site(c);
    dallocx_site(a, 5);
    sdallocx_site(b, 3, 200, MALLOCX_ALIGN(64));
    sdallocx_site(c, 4, 48, 0);
    grow_end(grow_site(grow_start()));
    char *f = fit_start();
    fit_site(f);
    char *q = noop_start();
    noop_site(q);
    fit_end(f, q);
    void *g = fail_start();
    fail_site(g);
    dallocx_site(&g, 1);
    hs_escape(leak_site());
    hs_puts(1, "jemalloc done\n");
    return 0;
}
