/* hs_sigkill.c - killed with SIGKILL after a flush interval.
 *
 *   hs_sigkill [MS]
 *
 * before_kill_site:  20 x malloc(512) = 10240 bytes, kept
 * freed_before_kill:  6 x malloc(64)  =   384 bytes, freed
 * Then it sleeps MS milliseconds (default 800: run it with --interval 100
 * for several flushes) and sends itself SIGKILL.  The profile on disk is
 * the last flush's. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "hsprog.h"

HS_SITE static void before_kill_site(void **out)
{
    for (int i = 0; i < 20; i++)
        if (!(out[i] = malloc(512)))
            hs_fail("malloc");
}

HS_SITE static void freed_before_kill(void)
{
    void *p[6];
    for (int i = 0; i < 6; i++)
        if (!(p[i] = malloc(64)))
            hs_fail("malloc");
    for (int i = 0; i < 6; i++)
        free(p[i]);
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 800;
    if (ms < 0 || ms > 999)
        hs_fail("usage: hs_sigkill [MS], MS < 1000");
    void *kept[20];
    before_kill_site(kept);
    freed_before_kill();
    hs_escape(kept);
    struct timespec ts = {0, ms * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    kill(getpid(), SIGKILL);
    hs_fail("still alive after SIGKILL");
}
