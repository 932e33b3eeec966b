/* leaks.c - a program whose every leak is known, for bench/sampled/run:
 * what a sampling heap profiler (jemalloc's, at the rate users run it)
 * reports of it, against heapscope's exact report.
 *
 * Each site's size is one of jemalloc's size classes, and no two sites
 * share a class, so that a jemalloc heap dump's stacks can be told apart
 * by their objects' size alone (no symbolisation needed):
 *
 *   tiny_leak   100 x malloc(48)        =     4,800 bytes, never freed
 *   small_leak  10,000 x malloc(80)     =   800,000 bytes, never freed
 *   big_leak    8 x malloc(1 MiB)       = 8,388,608 bytes, never freed
 *   churn       2,000,000 x malloc(64), each freed at once: no leak
 *
 * Leaked: 10,108 blocks, 9,193,408 bytes.  The leaks are interleaved with
 * the churn, so that each is made while the program allocates.  Prints
 * one line: "leaks blocks=10108 bytes=9193408". */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

static void *keep[10108];
static size_t kept;

static void *check(void *p)
{
    if (p == NULL) {
        fputs("leaks: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

/* The leaks are kept in `keep` only so that the compiler cannot drop
 * them; the program never frees them. */
NOINLINE static void tiny_leak(void)
{
    keep[kept++] = check(malloc(48));
}

NOINLINE static void small_leak(void)
{
    keep[kept++] = check(malloc(80));
}

NOINLINE static void big_leak(void)
{
    char *p = check(malloc(1u << 20));
    p[0] = 1;
    keep[kept++] = p;
}

NOINLINE static void churn(void)
{
    char *volatile p = check(malloc(64));
    p[0] = 1;
    free(p);
}

int main(void)
{
    for (long i = 0; i < 2000000; i++) {
        churn();
        if (i % 200 == 0)
            small_leak();
        if (i % 20000 == 0)
            tiny_leak();
        if (i % 250000 == 0)
            big_leak();
    }
    printf("leaks blocks=%zu bytes=%zu\n", kept, (size_t)100 * 48 + 10000 * 80 + 8 * (1u << 20));
    return 0;
}
