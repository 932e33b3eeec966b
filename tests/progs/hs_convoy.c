/* hs_convoy.c - threads that make the same new stacks at the same moment.
 *
 * 2 workers, released together by a barrier, each build a binary tree of
 * depth 12 in conv_build (the left and right children from two call
 * sites, so each of the 8,191 nodes is allocated from its own stack: 13
 * frames of conv_build at most, under conv_worker) and free it; three
 * rounds, each started by the barrier, so that in the first round the
 * workers meet the same 8,191 new stacks together (the collector's call
 * tree and site table get each key from one thread while the other waits
 * for it or backs off: col_idtab.c).
 *
 * Each of the 8,191 stacks: 6 allocations of 16 bytes (2 workers x 3
 * rounds), all freed; 49,146 in all.  A worker's last allocation of a
 * round, the tree's rightmost leaf, is freed before the worker allocates
 * again: one temporary allocation per worker and round, 6 on that stack.
 * The main thread's other allocations: pthread_create's DTVs (calloc, one
 * per worker, from spawn_workers).
 *
 * With the argument `nosleep` the program first installs a seccomp filter
 * that kills the process at nanosleep(2) and clock_nanosleep(2), through
 * prctl(PR_SET_SECCOMP): the collector must then wait for a key rather
 * than back off and sleep. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hs_seccomp.h"
#include "hsprog.h"

#define NTHREADS 2
#define ROUNDS 3
#define DEPTH 12

typedef struct node {
    struct node *left, *right;
} node_t;

static pthread_barrier_t start;

HS_SITE static node_t *conv_build(int depth)
{
    node_t *n = malloc(sizeof *n);
    if (!n)
        hs_fail("malloc");
    n->left = n->right = NULL;
    if (depth > 0) {
        n->left = conv_build(depth - 1); /* call site 1 */
        hs_escape(n);
        n->right = conv_build(depth - 1); /* call site 2 */
        hs_escape(n);
    }
    return n;
}

static void conv_free(node_t *n)
{
    if (n->left) {
        conv_free(n->left);
        conv_free(n->right);
    }
    free(n);
}

HS_SITE static void *conv_worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&start);
        conv_free(conv_build(DEPTH));
    }
    return NULL;
}

HS_SITE static void spawn_workers(pthread_t *tid)
{
    for (int t = 0; t < NTHREADS; t++)
        if (pthread_create(&tid[t], NULL, conv_worker, NULL) != 0)
            hs_fail("pthread_create");
}

/* Kill the process at nanosleep and clock_nanosleep, allow everything
 * else.  0 on success. */
static int forbid_sleeping(void)
{
    static const int nrs[] = {SYS_nanosleep, SYS_clock_nanosleep};
    return hs_seccomp_kill(nrs, 2, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "nosleep") || forbid_sleeping() != 0)) {
        hs_puts(2, "usage: hs_convoy [nosleep] (or the filter could not be installed)\n");
        return 3;
    }
    pthread_t tid[NTHREADS];
    pthread_barrier_init(&start, NULL, NTHREADS);
    spawn_workers(tid);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&start);
    hs_puts(1, "convoy done\n");
    return 0;
}
