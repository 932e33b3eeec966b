/* hs_chdir.c - a program that changes its directory before it allocates,
 * as `make -C DIR` and `git -C DIR` do.
 *
 *   hs_chdir DIR [PROG ARGS...]
 *
 * chdir(DIR), then chdir_site: 3 mallocs of 4242 bytes, all leaked (12726
 * bytes).  With PROG, then execv(PROG, [PROG, ARGS...]) from DIR: the
 * exec'd image keeps the pid and the environment.  No other allocation.
 * The tests check that the profile lands where heapscope was started, not
 * in DIR. */
#include <stdlib.h>

#include "hsprog.h"

#define N 3
#define SIZE 4242

static void *blocks[N];

HS_SITE static void chdir_site(void)
{
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(SIZE);
        if (!blocks[i])
            hs_fail("malloc");
        hs_escape(blocks[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        hs_fail("usage: hs_chdir DIR [PROG ARGS...]");
    if (chdir(argv[1]) != 0)
        hs_fail("chdir");
    chdir_site();
    if (argc > 2) {
        execv(argv[2], argv + 2);
        hs_fail("execv");
    }
    hs_puts(1, "chdir done\n");
    return 0;
}
