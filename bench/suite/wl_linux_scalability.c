/* wl_linux_scalability.c - linux-scalability (Lever & Boreham, via the
 * Hoard repository), as in the low-latency heap profiler thesis: each thread
 * allocates its share of blocks, all of 32 bytes, then frees them.  The
 * thesis has 10^7 per thread; here 3,000,000 x SCALE in total, split over
 * the P threads in 10 rounds of allocate-all then free-all (so the live heap
 * stays near 30 MB whatever P is).
 * ops = P * 10 * floor(300000 * SCALE / P). */
#include "wl_suite.h"

#define ROUNDS 10
#define PER_ROUND 300000L
#define BLOCK 32

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    long n = PER_ROUND * w->scale / w->threads;
    char **blocks = (char **)ws_check(malloc((size_t)(n ? n : 1) * sizeof *blocks));
    for (int r = 0; r < ROUNDS; r++) {
        for (long i = 0; i < n; i++) {
            blocks[i] = (char *)ws_check(malloc(BLOCK));
            blocks[i][BLOCK - 1] = (char)(i + r);
        }
        if (r == 0)
            ws_hold(w);
        for (long i = 0; i < n; i++) {
            w->sum += (unsigned char)blocks[i][BLOCK - 1];
            free(blocks[i]);
        }
        w->ops += (uint64_t)n;
    }
    free(blocks);
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-linux-scalability", &a, worker);
}
