/* col_output.c - the profile's file name.
 *
 * HEAPSCOPE_OUTPUT is a pattern (%p: pid, %e: program name, %%: %),
 * default "heapscope.%e.%p.hsp", made absolute at start-up (col_config.c)
 * so that a change of directory does not move it.  The first process to
 * claim a name creates the file (O_EXCL); a process that finds it taken
 * (a fork child, an exec'd program with the same pid, a name without %p)
 * uses NAME.<pid>, then NAME.<pid>.1, .2 ...  A fork child or another
 * process than the one `heapscope run` started never takes a name without
 * %p.  The file claimed stays open for the flush that claimed it: when
 * that is the process's last (at exit or exec), it writes into the file
 * directly (col_flush.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/col_internal.h"
#include "heapscope/profile.h"

extern char *program_invocation_short_name;

static char path[4096];
static int state; /* 0 undecided, 1 chosen, -1 impossible */
static int claimed_fd = -1; /* the new file, until col_output_take_claimed */

static void expand(char *out, size_t cap, const char *pattern, int *has_pid)
{
    size_t n = 0;
    *has_pid = 0;
    for (const char *p = pattern; *p && n + 1 < cap; p++) {
        char tmp[64];
        const char *s = NULL;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%d", col_proc.pid);
            s = tmp;
            *has_pid = 1;
            p++;
        } else if (p[0] == '%' && p[1] == 'e') {
            s = program_invocation_short_name && *program_invocation_short_name
                    ? program_invocation_short_name
                    : "program";
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            s = "%";
            p++;
        }
        if (s) {
            size_t k = strlen(s);
            if (n + k >= cap)
                break;
            memcpy(out + n, s, k);
            n += k;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = 0;
}

/* 1 claimed, 0 taken, -1 cannot create (errno set).  An existing path
 * that is not a regular file (/dev/null, /dev/full, a FIFO) is claimed as
 * it is: the profile is written into it directly (col_flush.c), never
 * replaced and never put next to it under another name. */
static int claim(const char *name)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
        claimed_fd = fd;
        return 1;
    }
    struct stat st;
    if (errno == EEXIST && stat(name, &st) == 0 && !S_ISREG(st.st_mode))
        return 1;
    return errno == EEXIST ? 0 : -1;
}

const char *col_output_path(void)
{
    if (state)
        return state > 0 ? path : NULL;
    static char base[4096 - 32]; /* under the writer lock, as path */
    int has_pid;
    expand(base, sizeof base, col_config.output, &has_pid);
    int root = !(col_proc.flags & PF_INFO_FORKED) &&
               (!col_config.root_pid || col_config.root_pid == col_proc.pid);
    int rc = 0;
    if (has_pid || root) {
        snprintf(path, sizeof path, "%s", base);
        rc = claim(path);
    }
    for (int i = 0; rc == 0 && i < 1000; i++) {
        if (has_pid)
            snprintf(path, sizeof path, "%s.%d", base, i + 1);
        else if (i == 0)
            snprintf(path, sizeof path, "%s.%d", base, col_proc.pid);
        else
            snprintf(path, sizeof path, "%s.%d.%d", base, col_proc.pid, i);
        rc = claim(path);
    }
    if (rc <= 0) {
        col_log("heapscope: cannot create the profile %s: %s; no profile will be written\n",
                path, rc < 0 ? col_strerror(errno) : "too many profiles with that name");
        state = -1;
        return NULL;
    }
    state = 1;
    return path;
}

/* Where col_fd_high moves descriptors: 16 below the soft RLIMIT_NOFILE,
 * at most 4096; 0 (nowhere) under a limit of 64. */
int col_fd_floor(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 64)
        return 0;
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4096 + 16 ? 4096 : (int)rl.rlim_cur - 16;
}

/* Descriptors the collector holds longer than a moment (the profile's,
 * for a whole flush) are moved to the top of the program's range, at most
 * 4096: a program that closes the descriptors it did not open (a loop to
 * 256, say) never reaches it, and one that opens files of its own is never
 * given its number while it is ours, so no byte of a profile can land in
 * the program's files.  A program that closes everything makes the
 * flush's writes fail instead (EBADF).  fd is returned as it is if there
 * is no room up there. */
int col_fd_high(int fd)
{
    return col_fd_high_at(fd, 0);
}

/* col_fd_high, `above` numbers higher (still under the limit: above < 16;
 * libunwind's pipe, col_unwind.c) */
int col_fd_high_at(int fd, int above)
{
    int floor = col_fd_floor();
    if (fd < 0 || floor == 0 || fd >= floor)
        return fd;
    int saved = errno;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, floor + above);
    errno = saved;
    if (high < 0)
        return fd;
    close(fd);
    return high;
}

/* Grow the descriptor table up to col_fd_high's floor at start-up, when
 * the program most likely has one thread: growing a table that threads
 * share waits for an RCU grace period (10 ms on this VM), which the first
 * flush would otherwise spend with the profile on a low number. */
void col_fd_prepare(void)
{
    int fd = col_fd_high(open("/", O_PATH | O_CLOEXEC));
    if (fd >= 0)
        close(fd);
}

/* The descriptor of the file col_output_path has just created, once, for
 * the caller to write the first profile into and close; -1 if the path
 * was chosen before, or is a device or FIFO that existed. */
int col_output_take_claimed(void)
{
    int fd = claimed_fd;
    claimed_fd = -1;
    return fd;
}

void col_output_reset_child(void)
{
    state = 0;
    claimed_fd = -1; /* (never open here: flushes hold the writer lock across fork) */
}
