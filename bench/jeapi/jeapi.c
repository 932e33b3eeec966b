/* jeapi.c - hs-bench-jeapi API PAIRS: PAIRS allocations and frees of small
 * blocks through jemalloc's standard API (API "malloc": malloc and free)
 * or its own (API "mallocx": mallocx and sdallocx), 64 blocks live at a
 * time, sizes 16-72 bytes; prints the nanoseconds per pair, timed inside
 * the program (bench/jeapi/run compares them with and without heapscope). */
#define _GNU_SOURCE
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 64

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The allocating and freeing calls, not inlined into one loop, as a
 * program's would be from different places. */
__attribute__((noinline)) static void *alloc_std(size_t n) { return malloc(n); }
__attribute__((noinline)) static void free_std(void *p, size_t n) { (void)n; free(p); }
__attribute__((noinline)) static void *alloc_x(size_t n) { return mallocx(n, 0); }
__attribute__((noinline)) static void free_x(void *p, size_t n) { sdallocx(p, n, 0); }

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "malloc") && strcmp(argv[1], "mallocx"))) {
        fprintf(stderr, "usage: hs-bench-jeapi malloc|mallocx PAIRS\n");
        return 2;
    }
    int x = !strcmp(argv[1], "mallocx");
    long pairs = atol(argv[2]);
    void *slot[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        unsigned k = (unsigned)i & (SLOTS - 1);
        if (slot[k])
            x ? free_x(slot[k], size[k]) : free_std(slot[k], size[k]);
        size[k] = 16 + ((i * 7) & 7) * 8;
        slot[k] = x ? alloc_x(size[k]) : alloc_std(size[k]);
        if (!slot[k])
            return 1;
        *(volatile char *)slot[k] = 1;
    }
    double t1 = now_ns();
    for (unsigned k = 0; k < SLOTS; k++)
        if (slot[k])
            x ? free_x(slot[k], size[k]) : free_std(slot[k], size[k]);
    printf("%.2f\n", (t1 - t0) / (double)pairs);
    return 0;
}
