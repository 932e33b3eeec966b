/* hs_threads.c - 16 threads allocating from one site.
 *
 * Thread t (0..15) makes 1000 mallocs of 16 + t bytes in worker_alloc_site
 * (16000 allocations, 1000 * (16 + 17 + ... + 31) = 376000 bytes), waits on
 * a barrier until every thread holds all its blocks (so 376000 bytes are
 * live at once), then frees them all.
 * The main thread creates the threads in spawn_workers; glibc's
 * pthread_create allocates each thread's DTV with calloc from there (the
 * only allocations that are not worker_alloc_site's: 16 of them, live until
 * exit; their size depends on the number of TLS modules). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>

#include "hsprog.h"

#define NTHREADS 16
#define K 1000

static void *blocks[NTHREADS][K];
static pthread_barrier_t all_allocated;

HS_SITE static void worker_alloc_site(int t)
{
    for (int i = 0; i < K; i++)
        if (!(blocks[t][i] = malloc(16 + (size_t)t)))
            hs_fail("malloc");
}

HS_SITE static void worker_release(int t)
{
    for (int i = 0; i < K; i++)
        free(blocks[t][i]);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    worker_alloc_site(t);
    pthread_barrier_wait(&all_allocated);
    worker_release(t);
    return NULL;
}

HS_SITE static void spawn_workers(pthread_t *tid)
{
    for (int t = 0; t < NTHREADS; t++)
        if (pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t) != 0)
            hs_fail("pthread_create");
}

int main(void)
{
    pthread_t tid[NTHREADS];
    pthread_barrier_init(&all_allocated, NULL, NTHREADS);
    spawn_workers(tid);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&all_allocated);
    hs_puts(1, "threads done\n");
    return 0;
}
