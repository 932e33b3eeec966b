/* hs_signal.c - a profile written on HEAPSCOPE_SIGNAL=USR2.
 *
 * usage: hs_signal PROFILE-PATH   (run with a long --interval)
 * before_signal_site: 3 x malloc(100), kept.  Then raise(SIGUSR2) and wait
 * (up to 10 s) for PROFILE-PATH to be a profile: the collector first claims
 * the name with an empty file (col_output.c), then renames a complete file
 * over it, so an empty file is not yet the profile (waiting only for the
 * name failed 1 run in ~300 under load).  Then after_signal_site: 2 x
 * malloc(100), and SIGKILL:
 * the profile on disk is the one the signal wrote, without after_signal_site.
 * Exits 98 if the file never appears. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "hsprog.h"

HS_SITE static void before_signal_site(void **out)
{
    for (int i = 0; i < 3; i++)
        if (!(out[i] = malloc(100)))
            hs_fail("malloc");
}

HS_SITE static void after_signal_site(void **out)
{
    for (int i = 0; i < 2; i++)
        if (!(out[i] = malloc(100)))
            hs_fail("malloc");
}

int main(int argc, char **argv)
{
    void *before[3], *after[2];
    struct stat st;
    if (argc != 2)
        hs_fail("usage: hs_signal PROFILE");
    before_signal_site(before);
    raise(SIGUSR2);
    int waited_ms = 0;
    while (stat(argv[1], &st) != 0 || st.st_size == 0) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if ((waited_ms += 10) > 10000) {
            hs_puts(2, "hs_signal: no profile after SIGUSR2\n");
            return 98;
        }
    }
    after_signal_site(after);
    hs_escape(before);
    hs_escape(after);
    kill(getpid(), SIGKILL);
    hs_fail("still alive after SIGKILL");
}
