/* wl_size_sweep.c - sizes that cross glibc malloc's thresholds, one band at
 * a time: tcache/fastbin (16-160 B), small bins (161 B-1 KiB), large bins
 * (1-64 KiB), just under the mmap threshold (64-128 KiB) and above it
 * (128 KiB-1 MiB, which glibc serves with mmap/munmap until its dynamic
 * threshold moves).  In each band a thread allocates a batch of random
 * sizes, touches each block, frees them in random order, and repeats, so
 * per-band costs differ between allocators in time and in system calls. */
#include <pthread.h>

#include "wl_alloc.h"

typedef struct band {
    size_t lo, hi;   /* sizes drawn from [lo, hi] */
    size_t batch;    /* blocks live at once */
    int rounds;      /* batches per unit of SCALE */
} band_t;

static const band_t bands[] = {
    {16, 160, 1000, 400},           /* tcache and fastbins */
    {161, 1023, 1000, 200},         /* small bins */
    {1024, 65535, 200, 100},        /* large bins */
    {65536, 131071, 20, 100},       /* under the mmap threshold */
    {131072, 1048576, 8, 100},      /* mmap'ed chunks in glibc */
};

typedef struct part {
    int scale;
    uint64_t seed, ops, sum;
} part_t;

static void *sweep_thread(void *arg)
{
    part_t *p = arg;
    unsigned char *blk[1000];
    for (size_t b = 0; b < sizeof bands / sizeof bands[0]; b++) {
        const band_t *bd = &bands[b];
        for (int r = 0; r < bd->rounds * p->scale; r++) {
            for (size_t i = 0; i < bd->batch; i++) {
                size_t sz = bd->lo + wl_rand(&p->seed) % (bd->hi - bd->lo + 1);
                blk[i] = malloc(sz);
                if (!blk[i])
                    abort();
                blk[i][0] = (unsigned char)i;
                blk[i][sz - 1] = (unsigned char)r;
                p->sum += blk[i][0];
                p->ops++;
            }
            for (size_t i = bd->batch; i > 1; i--) {
                size_t j = wl_rand(&p->seed) % i;
                unsigned char *t = blk[i - 1];
                blk[i - 1] = blk[j];
                blk[j] = t;
            }
            for (size_t i = 0; i < bd->batch; i++, p->ops++)
                free(blk[i]);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    wl_args_t a = {1, 1};
    wl_parse(argc, argv, &a);
    part_t *parts = calloc((size_t)a.threads, sizeof *parts);
    pthread_t *tid = calloc((size_t)a.threads, sizeof *tid);
    for (int t = 0; t < a.threads; t++) {
        parts[t].scale = a.scale;
        parts[t].seed = 0xC0FFEE1234567ULL + (uint64_t)t;
        pthread_create(&tid[t], NULL, sweep_thread, &parts[t]);
    }
    uint64_t ops = 0, sum = 0;
    for (int t = 0; t < a.threads; t++) {
        pthread_join(tid[t], NULL);
        ops += parts[t].ops;
        sum += parts[t].sum;
    }
    free(parts);
    free(tid);
    wl_report("size-sweep", &a, ops, sum);
    return 0;
}
