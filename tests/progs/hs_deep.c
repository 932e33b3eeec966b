/* hs_deep.c - stacks deeper than the checks a cache entry holds in itself
 * (COL_SC_CHKS, col_internal.h), which differ only in their outermost
 * frames.
 *
 * main calls deep_side_a or deep_side_b (the same code, so the same frame
 * layout), which recurses through 44 frames of deep_down to deep_leaf;
 * deep_leaf allocates 20 blocks of 40 bytes from one call site and frees
 * them.  Under either side deep_leaf's frame and return address are the
 * same, and so are the words of every frame but the outermost ones: the
 * recorder's cache of recent stacks must keep each side's stack (more
 * than 20 checks: in the entry's chunk of deep checks) and tell them apart by the
 * words of the side's frame.  2,000 rounds, every fourth under side b.
 *
 * `hs_deep N` runs the rounds in N threads one after another (2000 / N
 * rounds each, N divides 2000), each started when the last has exited: every thread
 * after the first takes over the state the last one left, whose recent
 * stacks and deep checks are emptied and their pages given back.
 *
 * Allocations: 40,000, 40,000 frees, 1,600,000 bytes; 30,000 under
 * deep_side_a, 10,000 under deep_side_b. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "hsprog.h"

#define DEPTH 44
#define BLOCKS 20

HS_SITE void deep_leaf(void)
{
    void *p[BLOCKS];
    for (int i = 0; i < BLOCKS; i++)
        p[i] = malloc(40);
    for (int i = 0; i < BLOCKS; i++) {
        hs_escape(p[i]);
        free(p[i]);
    }
}

HS_SITE void deep_down(int n)
{
    if (n > 0)
        deep_down(n - 1);
    else
        deep_leaf();
    __asm__ __volatile__("" ::: "memory"); /* not a tail call */
}

HS_SITE void deep_side_a(void)
{
    deep_down(DEPTH);
    __asm__ __volatile__("" ::: "memory");
}

HS_SITE void deep_side_b(void)
{
    deep_down(DEPTH);
    __asm__ __volatile__("" ::: "memory");
}

#define ROUNDS 2000

static void rounds(int from, int to)
{
    for (int r = from; r < to; r++) {
        if (r % 4 == 3)
            deep_side_b();
        else
            deep_side_a();
    }
}

static int per_thread;

static void *worker(void *arg)
{
    int first = (int)(intptr_t)arg;
    rounds(first, first + per_thread);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 0;
    if (threads <= 0) {
        rounds(0, ROUNDS);
        return 0;
    }
    if (ROUNDS % threads != 0)
        hs_fail("the number of threads must divide 2000");
    per_thread = ROUNDS / threads;
    for (int i = 0; i < threads; i++) {
        pthread_t tid;
        if (pthread_create(&tid, NULL, worker, (void *)(intptr_t)(i * per_thread)) != 0)
            hs_fail("pthread_create");
        pthread_join(tid, NULL);
    }
    return 0;
}
