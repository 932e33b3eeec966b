/* hs_recurse.c - stacks that are all different, and deep: the worst case
 * for a cache of stacks and the richest for an unwinder's partial reuse of
 * its previous walk.
 *
 * Builds a binary tree of depth 11 (4,095 nodes) recursively, the left and
 * right children from two different call sites, so that every node's
 * allocation has its own stack (11 + 1 frames of rec_build plus main's);
 * frees it; three times (12,285 allocations of 16 bytes, all freed).  Then
 * one chain of 100 nested calls allocates 24 bytes at every level on the
 * way down and again on the way up (200 allocations, all freed): stacks
 * deeper than the default depth cap of 64, cut at it.
 *
 * Valgrind: total heap usage 12,485 allocs, 12,485 frees, 201,360 bytes. */
#include <stdlib.h>

#include "hsprog.h"

typedef struct node {
    struct node *left, *right;
} node_t;

HS_SITE static node_t *rec_build(int depth)
{
    node_t *n = malloc(sizeof *n);
    if (!n)
        abort();
    if (depth > 0) {
        n->left = rec_build(depth - 1); /* call site 1 */
        hs_escape(n);
        n->right = rec_build(depth - 1); /* call site 2 */
        hs_escape(n);
    } else {
        n->left = n->right = NULL;
    }
    return n;
}

HS_SITE static void rec_free(node_t *n)
{
    if (n->left) {
        rec_free(n->left);
        rec_free(n->right);
    }
    free(n);
}

/* level 0..99: allocate, go one deeper, allocate again on the way back */
HS_SITE static void rec_chain(int level)
{
    void *down = malloc(24);
    hs_escape(down);
    if (level < 99)
        rec_chain(level + 1);
    void *up = malloc(24);
    hs_escape(up);
    free(up);
    free(down);
}

int main(void)
{
    for (int i = 0; i < 3; i++)
        rec_free(rec_build(11));
    rec_chain(0);
    hs_puts(1, "recurse done\n");
    return 0;
}
