/* wl_suite.h - what every profiler-overhead workload of bench/suite shares:
 * the `-t THREADS -s SCALE` command line, a deterministic random generator,
 * a "run fn on THREADS threads and join" helper, a barrier where workers
 * hold their peak data (ws_hold), and the one result line
 * that bench/run, the CTest smoke tests and `heapscope bench` parse:
 *
 *   wl-NAME threads=N ops=ALLOCATIONS checksum=SUM
 *
 * `ops` is the exact number of allocations the workload itself makes (its
 * formula is in bench/suite/README.md), so a profile of the run can be
 * checked for exact counts.  Header-only (static functions), C and C++. */
#ifndef WL_SUITE_H
#define WL_SUITE_H

#if !defined(_POSIX_C_SOURCE) && !defined(__cplusplus)
#define _POSIX_C_SOURCE 200809L /* pthread barriers; included first by each workload */
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ws_args {
    int threads; /* -t, 1..4096 */
    int scale;   /* -s, 1..4096: multiplies the work */
} ws_args_t;

/* Parse `[-t THREADS] [-s SCALE]` into `a`, whose initial values are the
 * defaults.  Exits with status 2 and a usage line on anything else. */
static void ws_parse(int argc, char **argv, ws_args_t *a)
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

/* xorshift64*: deterministic sizes, slots and choices; one state per thread,
 * seeded with ws_seed(thread index). */
static inline uint64_t ws_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t ws_seed(int tid)
{
    return 0x9E3779B97F4A7C15ULL * (uint64_t)(tid + 1) | 1;
}

/* Exit with status 1 and a message if malloc failed: a workload that ran
 * out of memory must not print a result line. */
static inline void *ws_check(void *p)
{
    if (!p) {
        fprintf(stderr, "wl: out of memory\n");
        exit(1);
    }
    return p;
}

/* One worker's slot: its index, the thread count, the scale, and what it
 * reports back (allocations made, checksum contribution).  Workers add to
 * `sum` inside their loops, so every slot has cache lines of its own
 * (WS_LINE bytes, the array 128-aligned): packed 40 bytes apart, two
 * workers running at once wrote one line at every iteration, and that
 * false sharing made the unprofiled 2-thread runs 1.2-2.8x slower. */
#define WS_LINE 128
typedef struct ws_worker {
    pthread_t th;
    int tid, threads, scale;
    uint64_t ops, sum;
    char pad[WS_LINE - sizeof(pthread_t) - 4 * sizeof(int) /* three, and 4 bytes of alignment */ -
             2 * sizeof(uint64_t)];
} ws_worker_t;
#ifdef __cplusplus
static_assert(sizeof(ws_worker_t) == WS_LINE, "a worker's slot fills its lines");
#else
_Static_assert(sizeof(ws_worker_t) == WS_LINE, "a worker's slot fills its lines");
#endif

/* ws_hold: every worker of a ws_run waits here until all have arrived, so
 * that the data each holds at that point is live in all at once.  A
 * workload whose peak is per-thread data (a table, a queue, a round of
 * blocks) calls it once per run, where that data is largest.  Without it
 * the program's own peak depended on scheduling: at 16 threads on 2 CPUs a
 * 2 ms thread often ended before later ones started, so the unprofiled
 * peak RSS of hash-table moved between 8 and 22 MB from run to run, and
 * a profiled run, slower, overlapped more threads: bench/run's RSS ratio
 * measured that overlap, not the profiler's memory. */
static pthread_barrier_t ws_hold_barrier; /* of the run's threads (ws_run) */

static inline void ws_hold(const ws_worker_t *w)
{
    (void)w;
    pthread_barrier_wait(&ws_hold_barrier);
}

/* Run fn on a->threads threads (each gets its own ws_worker_t), join them,
 * and print the result line with the summed ops and checksum.  Returns 0. */
static inline int ws_run(const char *name, const ws_args_t *a, void *(*fn)(void *))
{
    ws_worker_t *w = (ws_worker_t *)ws_check(aligned_alloc(WS_LINE, (size_t)a->threads * sizeof *w));
    memset(w, 0, (size_t)a->threads * sizeof *w);
    if (pthread_barrier_init(&ws_hold_barrier, NULL, (unsigned)a->threads)) {
        fprintf(stderr, "%s: cannot make the workers' barrier\n", name);
        exit(1);
    }
    for (int t = 0; t < a->threads; t++) {
        w[t].tid = t;
        w[t].threads = a->threads;
        w[t].scale = a->scale;
        if (pthread_create(&w[t].th, NULL, fn, &w[t])) {
            fprintf(stderr, "%s: cannot create thread %d\n", name, t);
            exit(1);
        }
    }
    uint64_t ops = 0, sum = 0;
    for (int t = 0; t < a->threads; t++) {
        pthread_join(w[t].th, NULL);
        ops += w[t].ops;
        sum += w[t].sum;
    }
    free(w);
    pthread_barrier_destroy(&ws_hold_barrier);
    printf("%s threads=%d ops=%llu checksum=%llu\n", name, a->threads, (unsigned long long)ops,
           (unsigned long long)sum);
    return 0;
}

#endif
