/* wl_cache_scratch.c - passive false sharing, after Hoard's cache-scratch:
 * the main thread allocates one small (8 B) object per worker, back to back,
 * so they likely share a cache line, and hands one to each of THREADS
 * workers (default 2).  Each worker frees it, then repeatedly allocates an
 * object of the same size and writes it many times.  An allocator that
 * reuses the freed block in the worker's thread keeps the neighbours on one
 * cache line and the writes ping-pong it between cores; one with per-thread
 * heaps gives each worker its own line.  Compare wall time. */
#include <pthread.h>

#include "wl_alloc.h"

#define OBJ_SIZE 8
#define ROUNDS 10000     /* allocations per worker, per unit of SCALE */
#define WRITES 2000      /* writes to each allocation */

typedef struct part {
    char *given; /* allocated by the main thread */
    int rounds;
    uint64_t ops, sum;
} part_t;

static void *scratch_thread(void *arg)
{
    part_t *p = arg;
    free(p->given);
    p->ops++;
    for (int r = 0; r < p->rounds; r++) {
        volatile char *o = malloc(OBJ_SIZE);
        if (!o)
            abort();
        for (int w = 0; w < WRITES; w++)
            for (int k = 0; k < OBJ_SIZE; k++)
                o[k] = (char)(o[k] + w);
        p->sum += (unsigned char)o[0];
        free((void *)o);
        p->ops += 2;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    wl_args_t a = {2, 1};
    wl_parse(argc, argv, &a);
    part_t *parts = calloc((size_t)a.threads, sizeof *parts);
    pthread_t *tid = calloc((size_t)a.threads, sizeof *tid);
    for (int t = 0; t < a.threads; t++) {
        parts[t].given = malloc(OBJ_SIZE);
        if (!parts[t].given)
            abort();
        memset(parts[t].given, t, OBJ_SIZE);
        parts[t].rounds = ROUNDS * a.scale;
    }
    for (int t = 0; t < a.threads; t++)
        pthread_create(&tid[t], NULL, scratch_thread, &parts[t]);
    uint64_t ops = (uint64_t)a.threads, sum = 0;
    for (int t = 0; t < a.threads; t++) {
        pthread_join(tid[t], NULL);
        ops += parts[t].ops;
        sum += parts[t].sum;
    }
    free(parts);
    free(tid);
    wl_report("cache-scratch", &a, ops, sum);
    return 0;
}
