/* cw_live.c - a live process as an address space: every thread is stopped
 * with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT) while its registers and the
 * readable mappings (/proc/PID/maps, /proc/PID/mem) are copied, then
 * detached.  The walk then runs on the copy, like on a core: the process is
 * stopped only for the copy.  A process that was already stopped (SIGSTOP,
 * ^Z) stays stopped: PTRACE_SEIZE keeps its group-stop across the detach.
 * A signal that arrives while a thread is being stopped is given back at
 * the detach.  Threads created during the stop are found by reading
 * /proc/PID/task again until a pass finds none new.
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

/* Stops one thread (PTRACE_SEIZE + PTRACE_INTERRUPT, then waits for its
 * stop).  Returns 0 and, in *sig, a signal the stop took from the thread
 * (a signal-delivery-stop: it must be given back at the detach, or the
 * program would lose it), 1 when the thread is gone (it exited meanwhile),
 * -1 with errno set when it cannot be traced. */
static int stop_thread(int tid, int *sig)
{
    *sig = 0;
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0)
        return errno == ESRCH ? 1 : -1;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) {
        int e = errno;
        ptrace(PTRACE_DETACH, tid, 0, 0);
        errno = e;
        return e == ESRCH ? 1 : -1;
    }
    int st;
    pid_t r;
    while ((r = waitpid(tid, &st, __WALL)) < 0 && errno == EINTR)
        ;
    if (r != tid)
        return errno == ECHILD ? 1 : -1;
    if (!WIFSTOPPED(st))
        return 1; /* exited or killed between the seize and the stop */
    if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
        *sig = WSTOPSIG(st);
    return 0;
}

/* The value of field `key` ("State:", "TracerPid:", "VmSize:") of
 * /proc/PID/status in out; 0, or -1 when the field is absent. */
static int status_field(int pid, const char *key, char *out, size_t outsz)
{
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    int rc = -1;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, k)) {
            const char *v = line + k;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(out, outsz, "%.*s", (int)strcspn(v, "\n"), v);
            rc = 0;
            break;
        }
    fclose(f);
    return rc;
}

/* The start of /proc/PID/cmdline (arguments joined by spaces, printable
 * characters only) into c->command. */
static void read_cmdline(cw_core_t *c, int pid)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/cmdline", pid);
    FILE *f = fopen(p, "rb");
    if (!f)
        return;
    size_t n = fread(c->command, 1, sizeof c->command - 1, f);
    fclose(f);
    while (n && !c->command[n - 1])
        n--;
    for (size_t i = 0; i < n; i++)
        if (c->command[i] < 0x20 || c->command[i] > 0x7e)
            c->command[i] = c->command[i] ? '?' : ' ';
    c->command[n] = 0;
}

/* Why thread tid of pid cannot be traced (errno e from ptrace) in err. */
static void explain_trace_failure(int pid, int tid, int e, char *err, size_t errsz)
{
    char tracer[32];
    if (e == EPERM && !status_field(tid, "TracerPid:", tracer, sizeof tracer) && atoi(tracer) > 0)
        snprintf(err, errsz, "process %d is already traced by process %s (a debugger?): detach it first",
                 pid, tracer);
    else if (e == EPERM)
        snprintf(err, errsz, "not permitted to trace process %d (%s): run as its user or as root, and "
                 "check /proc/sys/kernel/yama/ptrace_scope", pid, strerror(e));
    else
        snprintf(err, errsz, "cannot stop thread %d of process %d with ptrace: %s", tid, pid, strerror(e));
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

/* Stops every thread of pid into c->threads, reading /proc/PID/task
 * again until a pass finds no thread that is not stopped yet (threads may
 * be created while the others are being stopped).
 * Returns 0, or -1 with err set; the threads stopped so far are in c (to
 * be detached by the caller) with the signals to give back in sigs. */
static int stop_all(cw_core_t *c, int pid, int **sigs, char *err, size_t errsz)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/task", pid);
    for (int pass = 0; pass < 1000; pass++) {
        DIR *d = opendir(p);
        if (!d) {
            snprintf(err, errsz, "process %d: %s", pid, strerror(errno));
            return -1;
        }
        int added = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            int tid = atoi(de->d_name);
            if (tid <= 0)
                continue;
            size_t k;
            for (k = 0; k < c->nthreads && c->threads[k].tid != tid; k++)
                ;
            if (k < c->nthreads)
                continue;
            int sig, r = stop_thread(tid, &sig);
            if (r == 1)
                continue; /* gone meanwhile */
            if (r < 0) {
                explain_trace_failure(pid, tid, errno, err, errsz);
                closedir(d);
                return -1;
            }
            cw_thread_t *t = realloc(c->threads, (c->nthreads + 1) * sizeof *t);
            int *s = realloc(*sigs, (c->nthreads + 1) * sizeof *s);
            if (s)
                *sigs = s;
            if (t)
                c->threads = t;
            if (!t || !s) {
                ptrace(PTRACE_DETACH, tid, 0, sig);
                snprintf(err, errsz, "out of memory");
                closedir(d);
                return -1;
            }
            struct user_regs_struct r8;
            memset(&r8, 0, sizeof r8);
            ptrace(PTRACE_GETREGS, tid, 0, &r8);
            memset(&t[c->nthreads], 0, sizeof t[0]);
            t[c->nthreads].tid = tid;
            memcpy(t[c->nthreads].regs, &r8, sizeof r8 < CW_NREGS * 8 ? sizeof r8 : CW_NREGS * 8);
            (*sigs)[c->nthreads] = sig;
            c->nthreads++;
            added = 1;
        }
        closedir(d);
        if (!added)
            return c->nthreads ? 0 : (snprintf(err, errsz, "process %d has no thread left", pid), -1);
    }
    snprintf(err, errsz, "process %d keeps creating threads: could not stop them all", pid);
    return -1;
}

/* Stops every thread of pid, copies registers and memory, lets it go on
 * (a process that was stopped, e.g. by SIGSTOP, stays stopped).  Returns 0
 * and a new core, or -1 with err set: no such process, a zombie, a kernel
 * thread, already traced, no permission to trace it. */
int cw_core_open_pid(int pid, cw_core_t **out, char *err, size_t errsz)
{
    *out = NULL;
    char p[64], state[64], vm[64], nthreads[32];
    if (status_field(pid, "State:", state, sizeof state)) {
        snprintf(p, sizeof p, "/proc/%d", pid);
        snprintf(err, errsz, "process %d: %s", pid, access(p, F_OK) ? strerror(ESRCH) : "cannot read its status");
        return -1;
    }
    /* a leader that called pthread_exit is a zombie with live threads */
    if ((state[0] == 'Z' || state[0] == 'X') &&
        (status_field(pid, "Threads:", nthreads, sizeof nthreads) || atoi(nthreads) <= 1)) {
        snprintf(err, errsz, "process %d is a zombie (it has exited; its memory is gone)", pid);
        return -1;
    }
    if (status_field(pid, "VmSize:", vm, sizeof vm)) {
        snprintf(err, errsz, "process %d has no user memory (a kernel thread?)", pid);
        return -1;
    }
    cw_core_t *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    c->live = 1;
    c->pid = pid;
    c->proc_pid = pid;
    c->has_nt_file = 1;
    read_cmdline(c, pid);
    int *sigs = NULL;
    int rc = stop_all(c, pid, &sigs, err, errsz);
    if (rc == 0) {
        snprintf(p, sizeof p, "/proc/%d/mem", pid);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read_maps(c, pid, fd)) {
            snprintf(err, errsz, "cannot read the memory of process %d: %s", pid, strerror(errno));
            rc = -1;
        }
        if (fd >= 0)
            close(fd);
    }
    for (size_t i = 0; i < c->nthreads; i++)
        ptrace(PTRACE_DETACH, c->threads[i].tid, 0, sigs[i]);
    free(sigs);
    if (rc) {
        cw_core_close(c);
        return -1;
    }
    cw_mem_sort(c);
    if (c->nsegs == 0) {
        snprintf(err, errsz, "process %d has no readable memory", pid);
        cw_core_close(c);
        return -1;
    }
    *out = c;
    return 0;
}
