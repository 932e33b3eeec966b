/* peakrss.c - run a command and report the peak RSS of the process that
 * runs a given executable: its own VmHWM, read when it exits.
 *
 *   peakrss [-o FILE] [-e EXE] -- COMMAND [ARGS...]
 *
 * Why not GNU time's %M or wait4's ru_maxrss: for a command that forks,
 * they give the largest process of the tree (the `heapscope run` parent
 * holds ~3.6 MB of mapped libraries, more than a small workload), and even
 * for the process itself Linux keeps, at execve, the high-water mark of the
 * image it replaced (a fork of that parent).  VmHWM in /proc/PID/status is
 * the high-water mark of the process's current image only.
 *
 * How: the command runs under ptrace, following forks, vforks and execs
 * but not threads, and stopping only when a process exits
 * (PTRACE_O_TRACEEXIT), before its memory is released: there VmHWM is read
 * for every process whose /proc/PID/exe is EXE (every process without -e)
 * and the largest is kept.  Signals are passed on unchanged; no system
 * call is traced, so the command runs at full speed.
 *
 * Stopping signals are passed on like any other, so job control does not
 * hold the command (a benchmark helper, not a general tool).
 *
 * Writes the peak in KiB (0 if no process matched) to FILE, or to stderr;
 * exits with the command's status (128+N for a signal), 127 if it could
 * not start, 125 for a usage or ptrace error. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TRACED 4096

static pid_t seen[MAX_TRACED]; /* processes whose first stop we have had */
static int nseen;

/* pid has exited: a later process may get its number. */
static void forget(pid_t pid)
{
    for (int i = 0; i < nseen; i++)
        if (seen[i] == pid) {
            seen[i] = seen[--nseen];
            return;
        }
}

/* 1 the first time pid is seen (its start-up SIGSTOP), else 0. */
static int first_stop(pid_t pid)
{
    for (int i = 0; i < nseen; i++)
        if (seen[i] == pid)
            return 0;
    if (nseen < MAX_TRACED)
        seen[nseen++] = pid;
    return 1;
}

/* VmHWM of pid in KiB, 0 if unreadable. */
static long vm_hwm_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* Whether pid runs exe (a resolved path; NULL matches every process). */
static int runs(pid_t pid, const char *exe)
{
    if (!exe)
        return 1;
    char path[64], got[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, got, sizeof got - 1);
    if (n <= 0)
        return 0;
    got[n] = '\0';
    return strcmp(got, exe) == 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: peakrss [-o FILE] [-e EXE] -- COMMAND [ARGS...]\n");
    return 125;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    char *exe = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "+o:e:")) != -1) {
        if (opt == 'o')
            out = optarg;
        else if (opt == 'e') {
            exe = realpath(optarg, NULL);
            if (!exe) {
                fprintf(stderr, "peakrss: %s: %s\n", optarg, strerror(errno));
                return 125;
            }
        } else
            return usage();
    }
    if (optind >= argc)
        return usage();

    pid_t child = fork();
    if (child < 0) {
        perror("peakrss: fork");
        return 125;
    }
    if (child == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) {
            perror("peakrss: ptrace(TRACEME)");
            _exit(125);
        }
        raise(SIGSTOP); /* wait for the parent to set the options */
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "peakrss: %s: %s\n", argv[optind], strerror(errno));
        _exit(127);
    }

    long peak = 0;
    int status = 125, st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, __WALL)) > 0) {
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            forget(pid);
            if (pid == child)
                status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            continue;
        }
        if (!WIFSTOPPED(st))
            continue;
        int sig = WSTOPSIG(st), event = st >> 16, pass = 0;
        if (event == PTRACE_EVENT_EXIT) {
            long kib = runs(pid, exe) ? vm_hwm_kib(pid) : 0;
            if (kib > peak)
                peak = kib;
        } else if (event == 0 && sig == SIGSTOP && first_stop(pid)) {
            if (pid == child &&
                ptrace(PTRACE_SETOPTIONS, pid, NULL,
                       (void *)(long)(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                                      PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
                                      PTRACE_O_EXITKILL)) != 0) {
                perror("peakrss: ptrace(SETOPTIONS)");
                kill(child, SIGKILL);
                return 125;
            }
        } else if (event == 0) {
            pass = sig; /* a signal for the command: deliver it */
        }
        ptrace(PTRACE_CONT, pid, NULL, (void *)(long)pass);
    }

    FILE *f = out ? fopen(out, "w") : stderr;
    if (!f) {
        fprintf(stderr, "peakrss: %s: %s\n", out, strerror(errno));
        return 125;
    }
    fprintf(f, "%ld\n", peak);
    if (out)
        fclose(f);
    free(exe);
    return status;
}
