/* wl_queue.c - queue (the low-latency heap profiler thesis's own workload):
 * each thread keeps a queue of allocated objects; each iteration randomly
 * either allocates a new object (16-128 bytes) and pushes it to the front,
 * or frees and removes the last one (pushes twice as likely as pops, and a
 * push whenever the queue is empty), until the thread has made its
 * 1,500,000 x SCALE / P allocations (the thesis caps them at 3*10^7 per
 * thread).  What is left in the queue is freed at the end; the queue peaks
 * at about a third of the allocations, ~30 MB at the default scale.
 * ops = P * floor(1500000 * SCALE / P). */
#include "wl_suite.h"

#define ALLOCS 1500000L

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    uint64_t rng = ws_seed(w->tid);
    size_t cap = (size_t)(ALLOCS * w->scale / w->threads), made = 0;
    /* ring buffer: front at head - 1, back at tail; never holds more than cap */
    unsigned char **ring = (unsigned char **)ws_check(malloc((cap ? cap : 1) * sizeof *ring));
    size_t head = 0, tail = 0; /* head - tail objects queued */
    while (made < cap) {
        uint64_t r = ws_rand(&rng);
        if (head == tail || r % 3 != 0) {
            size_t size = 16 + (size_t)((r >> 8) % 113);
            unsigned char *o = (unsigned char *)ws_check(malloc(size));
            o[0] = (unsigned char)size;
            ring[head++ % cap] = o;
            made++;
        } else {
            unsigned char *o = ring[tail++ % cap];
            w->sum += o[0];
            free(o);
        }
    }
    ws_hold(w);
    while (tail != head) {
        unsigned char *o = ring[tail++ % cap];
        w->sum += o[0];
        free(o);
    }
    free(ring);
    w->ops = made;
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-queue", &a, worker);
}
