/* wl_ramp.c - the "ramp" memory shape: allocate only, so the heap grows
 * steadily to 64 MiB x SCALE of mixed small and medium blocks (16 B-4 KiB),
 * then free everything at the end.  Allocators that round sizes up or keep
 * per-thread caches show it in the peak RSS; the RSS after the final free
 * shows who gives memory back.  Each of THREADS threads builds its share. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>

#include "wl_alloc.h"

/* All threads hold their share at once before anyone frees: the peak is
 * the whole amount even when the threads do not run side by side. */
static pthread_barrier_t all_allocated;

typedef struct part {
    size_t bytes;
    uint64_t seed, ops, sum;
} part_t;

static void *ramp_thread(void *arg)
{
    part_t *p = arg;
    size_t cap = 1024, n = 0, held = 0;
    void **blk = malloc(cap * sizeof *blk);
    if (!blk)
        abort();
    while (held < p->bytes) {
        size_t sz = (wl_rand(&p->seed) & 7) ? 16 + wl_rand(&p->seed) % 240 : 256 + wl_rand(&p->seed) % 3841;
        if (n == cap) {
            cap *= 2;
            blk = realloc(blk, cap * sizeof *blk);
            if (!blk)
                abort();
        }
        unsigned char *b = malloc(sz);
        if (!b)
            abort();
        memset(b, (int)(n & 0xff), sz); /* every page resident: RSS tracks the heap */
        b[0] = (unsigned char)sz;
        p->sum += b[0];
        blk[n++] = b;
        held += sz;
        p->ops++;
    }
    pthread_barrier_wait(&all_allocated);
    for (size_t i = 0; i < n; i++, p->ops++)
        free(blk[i]);
    free(blk);
    return NULL;
}

int main(int argc, char **argv)
{
    wl_args_t a = {1, 1};
    wl_parse(argc, argv, &a);
    pthread_barrier_init(&all_allocated, NULL, (unsigned)a.threads);
    part_t *parts = calloc((size_t)a.threads, sizeof *parts);
    pthread_t *tid = calloc((size_t)a.threads, sizeof *tid);
    size_t total = ((size_t)64 << 20) * (size_t)a.scale;
    for (int t = 0; t < a.threads; t++) {
        parts[t].bytes = total / (size_t)a.threads;
        parts[t].seed = 0xA5A5A5A5DEADBEEFULL + (uint64_t)t;
        pthread_create(&tid[t], NULL, ramp_thread, &parts[t]);
    }
    uint64_t ops = 0, sum = 0;
    for (int t = 0; t < a.threads; t++) {
        pthread_join(tid[t], NULL);
        ops += parts[t].ops;
        sum += parts[t].sum;
    }
    free(parts);
    free(tid);
    wl_report("ramp", &a, ops, sum);
    return 0;
}
