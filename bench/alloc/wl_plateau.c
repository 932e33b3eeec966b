/* wl_plateau.c - the "plateau" memory shape: allocate everything up front,
 * then work on it, then free it all.  Holds exactly 100 MiB x SCALE of
 * requested bytes (blocks of 1-8 KiB, every byte written), so the peak RSS
 * of any allocator must be at least that: the bench tests rely on it.
 * The THREADS threads each own an equal share of the blocks, wait until
 * all shares are allocated, and make 4 x SCALE read-modify-write passes. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>

#include "wl_alloc.h"

/* All threads hold their share at once before anyone frees: the peak is
 * the whole amount even when the threads do not run side by side. */
static pthread_barrier_t all_allocated;

#define PLATEAU_BYTES (100u << 20) /* per unit of SCALE */

typedef struct part {
    size_t bytes; /* this thread's share of the plateau */
    int passes;
    uint64_t seed, ops, sum;
} part_t;

static void *plateau_thread(void *arg)
{
    part_t *p = arg;
    size_t cap = p->bytes / 1024 + 1, n = 0, held = 0;
    unsigned char **blk = malloc(cap * sizeof *blk);
    size_t *len = malloc(cap * sizeof *len);
    if (!blk || !len)
        abort();
    while (held < p->bytes) {
        size_t sz = 1024 + wl_rand(&p->seed) % 7169; /* 1 KiB .. 8 KiB */
        if (sz > p->bytes - held)
            sz = p->bytes - held;
        blk[n] = malloc(sz);
        if (!blk[n])
            abort();
        memset(blk[n], (int)(n & 0xff), sz);
        len[n++] = sz;
        held += sz;
        p->ops++;
    }
    pthread_barrier_wait(&all_allocated);
    for (int pass = 0; pass < p->passes; pass++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < len[i]; j += 64) {
                blk[i][j] += 1;
                p->sum += blk[i][j];
            }
    for (size_t i = 0; i < n; i++, p->ops++)
        free(blk[i]);
    free(blk);
    free(len);
    return NULL;
}

int main(int argc, char **argv)
{
    wl_args_t a = {1, 1};
    wl_parse(argc, argv, &a);
    pthread_barrier_init(&all_allocated, NULL, (unsigned)a.threads);
    part_t *parts = calloc((size_t)a.threads, sizeof *parts);
    pthread_t *tid = calloc((size_t)a.threads, sizeof *tid);
    size_t total = (size_t)PLATEAU_BYTES * (size_t)a.scale;
    for (int t = 0; t < a.threads; t++) {
        parts[t].bytes = total / (size_t)a.threads + (t == 0 ? total % (size_t)a.threads : 0);
        parts[t].passes = 4 * a.scale;
        parts[t].seed = 0x9E3779B97F4A7C15ULL + (uint64_t)t;
        pthread_create(&tid[t], NULL, plateau_thread, &parts[t]);
    }
    uint64_t ops = 0, sum = 0;
    for (int t = 0; t < a.threads; t++) {
        pthread_join(tid[t], NULL);
        ops += parts[t].ops;
        sum += parts[t].sum;
    }
    free(parts);
    free(tid);
    wl_report("plateau", &a, ops, sum);
    return 0;
}
