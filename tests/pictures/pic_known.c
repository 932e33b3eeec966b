#define _POSIX_C_SOURCE 200809L
/* pic_known.c - the known allocations the flamegraph and HTML tests assert
 * (tests/pictures/test_pictures_*.py).  Single thread, output by write(2)
 * only, so nothing else is allocated.  main -> pic_work, which calls:
 *
 * pic_alpha:  10 x malloc(100), each freed at once (10 temporary)   1,000 B
 * pic_beta:    5 x malloc(200), never freed (leaked)                1,000 B
 *   pic_gamma (called by pic_beta after its loop):
 *              3 x malloc(1000), all freed together (1 temporary)   3,000 B
 *
 * So under pic_work: 18 allocations, 5,000 B; pic_beta's subtree 8
 * allocations, 4,000 B; leaked 1,000 B, all under pic_beta.  A 40 ms pause
 * between the calls lets the timeline see samples.
 */
#include <stdlib.h>
#include <time.h>

#include "hsprog.h"

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

HS_SITE static void pic_alpha(void)
{
    for (int i = 0; i < 10; i++) {
        void *p = malloc(100);
        hs_escape(p);
        free(p);
    }
}

HS_SITE static void pic_gamma(void)
{
    void *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = malloc(1000);
        hs_escape(p[i]);
    }
    for (int i = 0; i < 3; i++)
        free(p[i]);
}

HS_SITE static void pic_beta(void)
{
    for (int i = 0; i < 5; i++)
        hs_escape(malloc(200));
    pic_gamma();
    hs_escape(NULL);
}

HS_SITE static void pic_work(void)
{
    pic_alpha();
    pause_ms(40);
    pic_beta();
    pause_ms(40);
    hs_escape(NULL);
}

int main(void)
{
    pic_work();
    hs_puts(1, "pic_known done\n");
    return 0;
}
