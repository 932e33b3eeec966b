/* cw_live.c - a live process as an address space: every thread is stopped
 * with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT) while its registers and the
 * readable mappings (/proc/PID/maps, /proc/PID/mem) are copied, then
 * detached.  The walk then runs on the copy, like on a core: the process is
 * stopped only for the copy.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cw.h"

#define CW_LIVE_MAX_SEG (1ull << 30) /* larger mappings are not copied */

/* Stops one thread; 0 or -1. */
static int stop_thread(int tid)
{
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0)
        return -1;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) {
        ptrace(PTRACE_DETACH, tid, 0, 0);
        return -1;
    }
    int st;
    if (waitpid(tid, &st, __WALL) != tid) {
        ptrace(PTRACE_DETACH, tid, 0, 0);
        return -1;
    }
    return 0;
}

static int read_maps(cw_core_t *c, int pid, int memfd)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/maps", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        unsigned long long s, e, off;
        char perms[8];
        int n = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &s, &e, perms, &off, &n) < 4)
            continue;
        char *path = line + n;
        while (*path == ' ')
            path++;
        path[strcspn(path, "\n")] = 0;
        cw_seg_t seg = {0};
        seg.start = s;
        seg.end = e;
        seg.flags = (perms[0] == 'r' ? CW_SEG_R : 0) | (perms[1] == 'w' ? CW_SEG_W : 0) |
                    (perms[2] == 'x' ? CW_SEG_X : 0);
        if (path[0] == '/') {
            seg.path = cw_mem_intern(c, path);
            seg.file_ofs = off;
        }
        int skip = !strcmp(path, "[vvar]") || !strcmp(path, "[vsyscall]") ||
                   !(seg.flags & CW_SEG_R) || e - s > CW_LIVE_MAX_SEG;
        if (!skip) {
            uint8_t *d = malloc(e - s);
            if (d) {
                ssize_t k = pread(memfd, d, e - s, (off_t)s);
                if (k > 0) {
                    seg.data = d;
                    seg.datalen = (uint64_t)k;
                } else {
                    free(d);
                }
            }
        }
        if (cw_mem_add_seg(c, &seg)) {
            free((void *)seg.data);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

/* Stops every thread of pid, copies registers and memory, resumes it.
 * Returns 0 and a new core, or -1 with err set (no such process, no
 * permission to trace it). */
int cw_core_open_pid(int pid, cw_core_t **out, char *err, size_t errsz)
{
    *out = NULL;
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/task", pid);
    DIR *d = opendir(p);
    if (!d) {
        snprintf(err, errsz, "process %d: %s", pid, strerror(errno));
        return -1;
    }
    cw_core_t *c = calloc(1, sizeof *c);
    if (!c) {
        closedir(d);
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    c->live = 1;
    c->pid = pid;
    c->has_nt_file = 1;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int tid = atoi(de->d_name);
        if (tid <= 0)
            continue;
        if (stop_thread(tid)) {
            snprintf(err, errsz, "cannot stop thread %d of process %d with ptrace: %s", tid, pid,
                     strerror(errno));
            rc = -1;
            continue;
        }
        cw_thread_t *t = realloc(c->threads, (c->nthreads + 1) * sizeof *t);
        if (!t) {
            ptrace(PTRACE_DETACH, tid, 0, 0);
            rc = -1;
            continue;
        }
        c->threads = t;
        struct user_regs_struct r;
        memset(&r, 0, sizeof r);
        ptrace(PTRACE_GETREGS, tid, 0, &r);
        t[c->nthreads].tid = tid;
        memcpy(t[c->nthreads].regs, &r, sizeof r < CW_NREGS * 8 ? sizeof r : CW_NREGS * 8);
        c->nthreads++;
    }
    closedir(d);
    if (rc == 0) {
        snprintf(p, sizeof p, "/proc/%d/mem", pid);
        int fd = open(p, O_RDONLY);
        if (fd < 0 || read_maps(c, pid, fd)) {
            snprintf(err, errsz, "cannot read the memory of process %d: %s", pid, strerror(errno));
            rc = -1;
        }
        if (fd >= 0)
            close(fd);
    }
    for (size_t i = 0; i < c->nthreads; i++)
        ptrace(PTRACE_DETACH, c->threads[i].tid, 0, 0);
    if (rc) {
        cw_core_close(c);
        return -1;
    }
    cw_mem_sort(c);
    *out = c;
    return 0;
}
