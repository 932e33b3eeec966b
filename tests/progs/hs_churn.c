/* hs_churn.c - threads started one after another, each on the thread
 * state (and usually the stack) the previous one left, running one of two
 * kinds of deep code in turn.
 *
 * heapscope hands an exited thread's state, with its unwinder's memo and
 * DWARF rules, to the next thread, and empties in place the sets of the
 * recent-stacks cache the last owner filled (col_thread.c); the sets are
 * picked by the frame's offset from the stack's top, so both kinds use
 * the same ones.  A memo or a cache entry (whose checks past 20 live in the
 * state's pool of deep checks) left over from the other kind would put an
 * allocation under the wrong stack.
 *
 *   40 threads, one at a time, thread i of kind i % 2:
 *     kind 0: 24 frames of deep, then leaf_a: 50 x malloc(40), each freed
 *     kind 1: 30 frames of deep, then leaf_b: 50 x malloc(56), each freed
 *   so 1000 allocations in leaf_a's stack and 1000 in leaf_b's. */
#include <pthread.h>
#include <stdlib.h>

#include "hsprog.h"

#define THREADS 40
#define PER_THREAD 50

static HS_SITE void leaf_a(void)
{
    for (int i = 0; i < PER_THREAD; i++) {
        void *p = malloc(40);
        hs_escape(p);
        free(p);
    }
}

static HS_SITE void leaf_b(void)
{
    for (int i = 0; i < PER_THREAD; i++) {
        void *p = malloc(56);
        hs_escape(p);
        free(p);
    }
}

/* n + 1 frames of recursion, which the compiler keeps as calls (work
 * after the call), then leaf. */
static HS_SITE int deep(int n, void (*leaf)(void))
{
    if (n == 0) {
        leaf();
        return 0;
    }
    int r = deep(n - 1, leaf);
    hs_escape(&r);
    return r + 1;
}

static void *kind_a(void *arg)
{
    (void)arg;
    hs_escape((void *)(intptr_t)deep(23, leaf_a));
    return NULL;
}

static void *kind_b(void *arg)
{
    (void)arg;
    hs_escape((void *)(intptr_t)deep(29, leaf_b));
    return NULL;
}

int main(void)
{
    for (int i = 0; i < THREADS; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, i % 2 ? kind_b : kind_a, NULL) || pthread_join(th, NULL))
            return 2;
    }
    return 0;
}
