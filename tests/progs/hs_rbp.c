/* hs_rbp.c - stacks through frames that keep data in rbp, and stacks that
 * differ only in rbp (the frames are in hs_rbp_frames.S, which says how).
 *
 * 10 rounds of rbp_loop: 1,000 allocations each from one stack (main ->
 * rbp_loop -> rbp_leaf), each with another value of rbp saved in
 * rbp_leaf's frame; every block freed after its round.  Then three times
 * 4,000 calls, every fourth of rbp_via_b, the others of rbp_via_a, each
 * allocating one block and freeing it (main -> rbp_via_X -> rbp_framed ->
 * rbp_pass the first 4,000 times, -> rbp_pass_mid -> rbp_mid the next,
 * -> rbp_std the last; all from one call site of main).
 *
 * Allocations: 22,000, 22,000 frees, 528,000 bytes (24 each); 10,000
 * under rbp_leaf, 9,000 under rbp_via_a, 3,000 under rbp_via_b, 4,000
 * under rbp_mid, 4,000 under rbp_std. */
#include <stdlib.h>

#include "hsprog.h"

#define ROUNDS 10
#define PER_ROUND 1000
#define VIA_CALLS 4000

void rbp_loop(long n, void **out);
void *rbp_via_a(long mid);
void *rbp_via_b(long mid);

static void *blocks[PER_ROUND];

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        rbp_loop(PER_ROUND, blocks);
        for (int i = 0; i < PER_ROUND; i++) {
            hs_escape(blocks[i]);
            free(blocks[i]);
        }
    }
    for (int i = 0; i < 3 * VIA_CALLS; i++) {
        /* one call site: the return address into main is the same too */
        void *(*volatile via)(long) = i % 4 == 3 ? rbp_via_b : rbp_via_a;
        void *p = via(i / VIA_CALLS);
        hs_escape(p);
        free(p);
    }
    return 0;
}
