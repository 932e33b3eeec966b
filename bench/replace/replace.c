/* replace.c - random replacement on a heap larger than the caches: the
 * workload of bench/replace/run.
 *
 * N blocks of 16-112 bytes are allocated, then each round replaces N
 * blocks picked at random: free the slot's block, allocate a new one.
 * The slot, the block's chunk header and (profiled) its shadow word are
 * cache misses; the loop is a handful of instructions besides malloc and
 * free.  Such a loop runs at the speed of its overlapped misses: the CPU
 * starts the next replacement's misses while the current one waits, as
 * long as the instructions between them fit in its reorder buffer.
 *
 * Built several times with PAD independent register additions between the
 * free and the malloc (replace-padN): the same program with PAD more
 * instructions per replacement and no more memory accesses, the yardstick
 * for what a profiler's instructions cost here whatever they do.
 *
 * usage: replace [-n BLOCKS] [-r ROUNDS]
 * prints: replace pad=PAD blocks=N rounds=R ops=ALLOCATIONS ns_per_replace=X
 * (ops: every allocation, the slot array's included; X: the fastest
 * round's time per replacement). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PAD
#define PAD 0
#endif

#define STR_(x) #x
#define STR(x) STR_(x)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* PAD additions on four registers: no memory access, and four chains so
 * that they take little time of their own. */
static inline void pad(void)
{
#if PAD > 0
    __asm__ volatile(".rept " STR(PAD) " / 4\n\t"
                     "add $1, %%r8\n\tadd $1, %%r9\n\tadd $1, %%r10\n\tadd $1, %%r11\n\t"
                     ".endr" ::: "r8", "r9", "r10", "r11", "cc");
#endif
}

static int usage(void)
{
    fprintf(stderr, "usage: replace [-n BLOCKS] [-r ROUNDS]\n");
    return 2;
}

static int arg(const char *s, unsigned long *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || v == 0 || v > (1ul << 30))
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long n = 1000000, rounds = 3;
    for (int i = 1; i < argc; i += 2) {
        unsigned long *opt = strcmp(argv[i], "-n") == 0   ? &n
                             : strcmp(argv[i], "-r") == 0 ? &rounds
                                                          : NULL;
        if (opt == NULL || i + 1 >= argc || arg(argv[i + 1], opt) != 0)
            return usage();
    }
    void **slot = calloc(n, sizeof *slot);
    if (slot == NULL)
        return 1;
    for (unsigned long i = 0; i < n; i++)
        if ((slot[i] = malloc(16 + (i % 7) * 16)) == NULL)
            return 1;
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    double best = 1e30;
    for (unsigned long r = 0; r < rounds; r++) {
        double t0 = now();
        for (unsigned long k = 0; k < n; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            unsigned long i = (unsigned long)(x % n);
            free(slot[i]);
            pad();
            if ((slot[i] = malloc(16 + (k % 7) * 16)) == NULL)
                return 1;
        }
        double dt = now() - t0;
        if (dt < best)
            best = dt;
    }
    for (unsigned long i = 0; i < n; i++)
        free(slot[i]);
    free(slot);
    printf("replace pad=%d blocks=%lu rounds=%lu ops=%lu ns_per_replace=%.1f\n", PAD, n, rounds,
           1 + n + rounds * n, best * 1e9 / (double)n);
    return 0;
}
