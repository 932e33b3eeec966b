/* wl_shbench.c - shbench (MicroQuill SmartHeap), as in the low-latency heap
 * profiler thesis: threads randomly allocate and free objects of random size
 * 1-1000 bytes.  Each thread runs 4,000,000 x SCALE / P iterations (the
 * thesis: 2*10^6 / P, with a longer inner loop); each iteration picks one of
 * 2048 slots at random, frees what is there and allocates a new object of
 * 1-1000 bytes in it.  What is left is freed at the end.
 * ops = P * floor(4000000 * SCALE / P). */
#include "wl_suite.h"

#define SLOTS 2048
#define ITERS 4000000L

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    uint64_t rng = ws_seed(w->tid);
    long n = ITERS * w->scale / w->threads;
    unsigned char *slot[SLOTS] = {0};
    for (long i = 0; i < n; i++) {
        uint64_t r = ws_rand(&rng);
        size_t k = (size_t)(r % SLOTS), size = 1 + (size_t)((r >> 16) % 1000);
        if (slot[k]) {
            w->sum += slot[k][0];
            free(slot[k]);
        }
        slot[k] = (unsigned char *)ws_check(malloc(size));
        slot[k][0] = (unsigned char)size;
        slot[k][size - 1] = 1;
    }
    ws_hold(w);
    for (size_t k = 0; k < SLOTS; k++)
        free(slot[k]);
    w->ops = (uint64_t)n;
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-shbench", &a, worker);
}
