/* hs_fork.c - fork children allocate and write their own profiles.
 *
 * parent_before_fork:      4 x malloc(300) = 1200 bytes, kept (both children
 *                          inherit these live blocks)
 * first child, child_site: 5 x malloc(200) = 1000 bytes, never freed; leaves
 *                          with exit(0)
 * second child, child_underscore_exit_site: 3 x malloc(150) = 450 bytes,
 *                          never freed; leaves with _exit(0), which skips
 *                          atexit handlers and destructors
 * parent_after_fork:       2 x malloc(700) = 1400 bytes, kept (after both
 *                          children have exited)
 * The parent writes "children <pid1> <pid2>\n" to stdout and exits 0 if both
 * children exited 0.  Under `heapscope run -o OUT` the parent writes OUT and
 * each child OUT.<pid>.
 * Valgrind: parent 6 allocs, 2600 bytes; first child 9 allocs, 2200 bytes;
 * second child 7 allocs, 1650 bytes (a child's figures include what it
 * inherited); no frees anywhere. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "hsprog.h"

HS_SITE static void parent_before_fork(void **out)
{
    for (int i = 0; i < 4; i++)
        if (!(out[i] = malloc(300)))
            hs_fail("malloc");
}

HS_SITE static void child_site(void)
{
    for (int i = 0; i < 5; i++) {
        void *p = malloc(200);
        if (!p)
            hs_fail("malloc");
        hs_escape(p);
    }
}

HS_SITE static void child_underscore_exit_site(void)
{
    for (int i = 0; i < 3; i++) {
        void *p = malloc(150);
        if (!p)
            hs_fail("malloc");
        hs_escape(p);
    }
}

HS_SITE static void parent_after_fork(void **out)
{
    for (int i = 0; i < 2; i++)
        if (!(out[i] = malloc(700)))
            hs_fail("malloc");
}

/* Fork a child that runs body and leaves with exit(0) or _exit(0); wait for
 * it.  Returns its pid, or -1 if it did not exit with status 0. */
static pid_t fork_child(void (*body)(void), int use_underscore_exit)
{
    pid_t pid = fork();
    if (pid < 0)
        hs_fail("fork");
    if (pid == 0) {
        body();
        if (use_underscore_exit)
            _exit(0);
        exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        hs_fail("waitpid");
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? pid : -1;
}

int main(void)
{
    void *before[4], *after[2];
    parent_before_fork(before);
    pid_t c1 = fork_child(child_site, 0);
    pid_t c2 = fork_child(child_underscore_exit_site, 1);
    parent_after_fork(after);
    hs_escape(before);
    hs_escape(after);
    if (c1 < 0 || c2 < 0)
        hs_fail("a child failed");
    hs_puts(1, "children ");
    hs_put_u64(1, (uint64_t)c1);
    hs_puts(1, " ");
    hs_put_u64(1, (uint64_t)c2);
    hs_puts(1, "\n");
    return 0;
}
