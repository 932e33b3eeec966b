/* wl_alloc.h - what every allocator-oriented workload of bench/alloc shares:
 * the `-t THREADS -s SCALE` command line, a small deterministic random
 * generator, the RSS read back after everything was freed, and the one
 * result line `heapscope bench` parses:
 *
 *   wl-NAME threads=N ops=OPS checksum=SUM rss_after_free_kb=KB
 *
 * Header-only (static functions) so each workload stays one .c file. */
#ifndef WL_ALLOC_H
#define WL_ALLOC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct wl_args {
    int threads; /* -t, at least 1 */
    int scale;   /* -s, at least 1: multiplies the work (or the memory) */
} wl_args_t;

/* Parse `[-t THREADS] [-s SCALE]` into `a` (defaults given by the caller's
 * initial values).  Exits with status 2 and a usage line on bad input. */
static void wl_parse(int argc, char **argv, wl_args_t *a)
{
    for (int i = 1; i < argc; i++) {
        int *dst = !strcmp(argv[i], "-t") ? &a->threads : !strcmp(argv[i], "-s") ? &a->scale : NULL;
        char *end = NULL;
        long v = (dst && i + 1 < argc) ? strtol(argv[i + 1], &end, 10) : 0;
        if (!dst || !end || *end || end == argv[i + 1] || v < 1 || v > 4096) {
            fprintf(stderr, "usage: %s [-t THREADS] [-s SCALE] (both 1..4096)\n", argv[0]);
            exit(2);
        }
        *dst = (int)v;
        i++;
    }
}

/* xorshift64*: deterministic sizes and orders, one state per thread. */
static inline uint64_t wl_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Resident set size now, in KiB, from /proc/self/statm (0 if unreadable). */
static long wl_rss_kb(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Print the result line; call after every block was freed. */
static void wl_report(const char *name, const wl_args_t *a, uint64_t ops, uint64_t checksum)
{
    long rss = wl_rss_kb();
    printf("wl-%s threads=%d ops=%llu checksum=%llu rss_after_free_kb=%ld\n", name, a->threads,
           (unsigned long long)ops, (unsigned long long)checksum, rss);
    fflush(stdout);
}

#endif
