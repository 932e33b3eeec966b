/* pic_many.c - a profile of many distinct stacks, for the HTML report's
 * load-time measurement: `pic_many N` (default 100000) makes N
 * allocations, the i-th through a call path chosen by the 17 low bits of i
 * (pic_left / pic_right at each of 17 levels), so every allocation has its
 * own stack of ~37 frames.  Every tenth block is leaked (N/10 x 48 B),
 * the rest are 16 + (i % 64) bytes and freed at once. */
#include <stdint.h>
#include <stdlib.h>

#include "hsprog.h"

static volatile unsigned sink;

HS_SITE static void pic_rec(unsigned i, int level);

HS_SITE static void pic_left(unsigned i, int level)
{
    pic_rec(i, level);
    sink++; /* no tail call: keep this frame on the stack */
}

HS_SITE static void pic_right(unsigned i, int level)
{
    pic_rec(i, level);
    sink += 2; /* unlike pic_left: the two must not be folded into one */
}

HS_SITE static void pic_rec(unsigned i, int level)
{
    if (level == 0) {
        if (i % 10 == 0) {
            hs_escape(malloc(48));
        } else {
            void *p = malloc(16 + i % 64);
            hs_escape(p);
            free(p);
        }
    } else if (i >> (level - 1) & 1)
        pic_left(i, level - 1);
    else
        pic_right(i, level - 1);
    sink++;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100000;
    for (unsigned i = 0; i < n; i++)
        pic_rec(i, 17);
    hs_puts(1, "pic_many done\n");
    return 0;
}
