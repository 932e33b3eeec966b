/* hs_guess_outer.c - stacks that differ only in an outer frame found at
 * the same address: where the unwinders check a guessed stack's outer
 * frames in place (col_unwind_fp_is, col_dwarf_is), the difference is in
 * the words there, and must be seen.
 *
 * main calls guess_mid_x or guess_mid_y (the same code, so the same frame
 * layout), which call guess_mid, which builds a binary tree of depth 4 in
 * post-order through
 * guess_build: left child, right child (another call site), then the node
 * itself, 24 bytes; then the tree is freed.  The first allocation of a
 * tree is its leftmost leaf, whose frame and return address the other 15
 * leaves share, so the recorder's cache of recent stacks does not keep it
 * and the recorder guesses it: the stack that came after the previous
 * tree's root last time.  1,500 rounds, every third tree under mid_y: a
 * mid_y tree comes after an mid_x tree whose successor last time was
 * another mid_x tree, so its leftmost leaf is guessed under mid_x, with
 * every frame where the walk finds it and only the words of mid_y's call
 * different.  (guess_mid is the guessed stack's frame that the DWARF walk
 * reaches in the same state: the return address into mid_y is a word its
 * step reads, where a frame-pointer walk reads it in mid_y's frame.)
 *
 * Allocations: 46,500 (31 per tree), 46,500 frees, 1,116,000 bytes;
 * 31,000 under guess_mid_x, 15,500 under guess_mid_y. */
#include <stdlib.h>

#include "hsprog.h"

typedef struct gnode {
    struct gnode *left, *right;
    long pad;
} gnode_t;

HS_SITE gnode_t *guess_build(int depth)
{
    gnode_t *l = NULL, *r = NULL;
    if (depth > 0) {
        l = guess_build(depth - 1);
        __asm__ __volatile__("" ::: "memory"); /* a second call site */
        r = guess_build(depth - 1);
        __asm__ __volatile__("" ::: "memory");
    }
    gnode_t *n = malloc(sizeof *n);
    if (n) {
        n->left = l;
        n->right = r;
    }
    return n;
}

static void tree_free(gnode_t *n)
{
    if (!n)
        return;
    tree_free(n->left);
    tree_free(n->right);
    free(n);
}

HS_SITE void guess_mid(void)
{
    tree_free(guess_build(4));
    __asm__ __volatile__("" ::: "memory"); /* not a tail call */
}

HS_SITE void guess_mid_x(void)
{
    guess_mid();
    __asm__ __volatile__("" ::: "memory");
}

HS_SITE void guess_mid_y(void)
{
    guess_mid();
    __asm__ __volatile__("" ::: "memory");
}

int main(void)
{
    for (int r = 0; r < 1500; r++) {
        if (r % 3 == 2)
            guess_mid_y();
        else
            guess_mid_x();
    }
    return 0;
}
