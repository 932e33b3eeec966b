/* single.c - hs-bench-single: a single-threaded program that churns small
 * blocks through glibc's fastbins, for bench/overhead (docs/BENCHMARKS.md,
 * "Single-threaded programs").
 *
 * hs-bench-single ROUNDS [thread]: ROUNDS x (64 malloc of 16-40 bytes,
 * then their 64 frees), all in main; with "thread", in one worker thread
 * instead (then glibc takes its locked paths, as it does once any second
 * thread exists).  Prints a checksum of the addresses. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *work(void *arg)
{
    long rounds = (long)arg;
    void *v[64];
    unsigned long sum = 0;
    for (long i = 0; i < rounds; i++) {
        for (int j = 0; j < 64; j++)
            if (!(v[j] = malloc(16 + (size_t)(j & 3) * 8)))
                abort();
        for (int j = 0; j < 64; j++) {
            sum += (unsigned long)v[j];
            free(v[j]);
        }
    }
    return (void *)sum;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 100000;
    void *sum;
    if (argc > 2) {
        pthread_t th;
        if (pthread_create(&th, NULL, work, (void *)rounds) || pthread_join(th, &sum))
            return 1;
    } else {
        sum = work((void *)rounds);
    }
    printf("%lu\n", (unsigned long)sum);
    return 0;
}
