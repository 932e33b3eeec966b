/* hs_unshare.c - a program that moves itself into a new user namespace,
 * as `unshare -U` and sandboxes do: the kernel allows that only to a
 * process with one thread.
 *
 * before_unshare: 3 x malloc(200), kept.  Then unshare(CLONE_NEWUSER),
 * and "unshare ok" or "unshare failed: <errno>" on stdout.  Then
 * after_unshare: 2 x malloc(300), kept.  Exit status 0 either way.  No
 * other allocation. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "hsprog.h"

static void *kept[5];

HS_SITE static void before_unshare(void)
{
    for (int i = 0; i < 3; i++)
        if (!(kept[i] = malloc(200)))
            hs_fail("malloc");
}

HS_SITE static void after_unshare(void)
{
    for (int i = 3; i < 5; i++)
        if (!(kept[i] = malloc(300)))
            hs_fail("malloc");
}

int main(void)
{
    before_unshare();
    if (unshare(CLONE_NEWUSER) == 0) {
        hs_puts(1, "unshare ok\n");
    } else {
        int e = errno;
        hs_puts(1, "unshare failed: ");
        hs_put_u64(1, (uint64_t)e);
        hs_puts(1, "\n");
    }
    after_unshare();
    hs_escape(kept);
    return 0;
}
