/* hs_fds.c - what a profiler adds to the file descriptors of the program:
 * after 10 mallocs of 64 bytes from fds_site (all freed), prints
 * "pipes=N low=L", N being how many of its descriptors 3..8191 are pipe
 * ends and L how many of those are below 256 (where the program's own
 * files would go).  It opens none itself, so N counts what was opened in
 * it by others (the collector, and libunwind, whose memory validation
 * opens a pipe when it is set up).  Nothing else allocates: the
 * descriptors are read with readlink(2) on /proc/self/fd. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "hsfd.h"

HS_SITE static void fds_site(void)
{
    void *b[10];
    for (int i = 0; i < 10; i++)
        if ((b[i] = malloc(64)) == NULL)
            hs_fail("malloc");
    hs_escape(b);
    for (int i = 0; i < 10; i++)
        free(b[i]);
}

int main(void)
{
    fds_site();
    int pipes = 0, low = 0;
    for (int fd = 3; fd < 8192; fd++) {
        char target[64];
        if (hs_fd_target(fd, target, sizeof target) > 0 && strncmp(target, "pipe:", 5) == 0) {
            pipes++;
            low += fd < 256;
        }
    }
    hs_puts(1, "pipes=");
    hs_put_u64(1, (uint64_t)pipes);
    hs_puts(1, " low=");
    hs_put_u64(1, (uint64_t)low);
    hs_puts(1, "\n");
    return 0;
}
