/* wl_binary_trees.c - binary-trees (gperftools' benchmark, as in the
 * low-latency heap profiler thesis): threads recursively build binary trees
 * of depth 15, one heap allocation per node, walk them and free them.  The
 * left and right children are built from two different call sites, so the
 * call stack of every node's allocation is unique (2^16 - 1 distinct stacks
 * per tree, up to 17 frames deep): the worst case for a stack cache.
 * 32 x SCALE trees in total, tree i built by thread i mod P.
 * ops = 32 * SCALE * 65535 (independent of P). */
#include "wl_suite.h"

#define DEPTH 15
#define TREES 32

typedef struct node {
    struct node *left, *right;
} node_t;

/* Build a tree of `depth` levels below the returned node. */
__attribute__((noinline)) static node_t *bt_build(int depth)
{
    node_t *n = (node_t *)ws_check(malloc(sizeof *n));
    if (depth > 0) {
        n->left = bt_build(depth - 1);  /* call site 1 */
        __asm__ volatile("" ::: "memory");
        n->right = bt_build(depth - 1); /* call site 2: another return address */
        __asm__ volatile("" ::: "memory");
    } else {
        n->left = n->right = NULL;
    }
    return n;
}

/* Count the nodes of the tree and free it. */
__attribute__((noinline)) static uint64_t bt_check_free(node_t *n)
{
    uint64_t c = 1;
    if (n->left) {
        c += bt_check_free(n->left);
        c += bt_check_free(n->right);
    }
    free(n);
    return c;
}

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    for (long i = w->tid; i < (long)TREES * w->scale; i += w->threads) {
        uint64_t nodes = bt_check_free(bt_build(DEPTH));
        w->ops += nodes;
        w->sum += nodes * (uint64_t)(i + 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-binary-trees", &a, worker);
}
