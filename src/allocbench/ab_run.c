/* ab_run.c - fork/exec of workloads with an allocator swapped in by
 * LD_PRELOAD, timed with CLOCK_MONOTONIC and measured with wait4's rusage
 * (user/system time, peak RSS, page faults).  An exec failure comes back to
 * the parent through a close-on-exec pipe, so "no such program" is an error
 * message rather than a mysterious exit status 127. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allocbench/ab_run.h"
#include "allocbench/ab_verify.h"

/* LD_PRELOAD for allocator `a` and the checker: "alloc.so:checker.so",
 * either part may be missing.  Returns 0, or -1 if it does not fit. */
static int preload_value(const ab_ctx_t *ctx, const ab_alloc_t *a, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s%s%s", a->preload ? a->path : "",
                     a->preload && ctx->checker ? ":" : "", ctx->checker ? ctx->checker : "");
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Read a whole small file into a malloc'ed string (NULL on failure). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n < cap - 1)
            break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    return buf;
}

long ab_find_long(const char *text, const char *key)
{
    const char *p = text ? strstr(text, key) : NULL;
    if (!p)
        return -1;
    char *end;
    long v = strtol(p + strlen(key), &end, 10);
    return end == p + strlen(key) ? -1 : v;
}

/* Child side of a run: redirect stdout to out_fd, set LD_PRELOAD, exec.
 * On failure writes errno to err_fd and exits 127. */
static void child_exec(char *const argv[], const char *preload, int out_fd, int err_fd,
                       const char *verify_file)
{
    if (out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0)
        goto fail;
    if (preload && *preload)
        setenv("LD_PRELOAD", preload, 1);
    else
        unsetenv("LD_PRELOAD");
    if (verify_file)
        setenv(AB_VERIFY_ENV, verify_file, 1);
    execvp(argv[0], argv);
fail:;
    int e = errno;
    if (write(err_fd, &e, sizeof e) < 0)
        _exit(126);
    _exit(127);
}

/* Fork and exec; returns the child's pid, or -1 with errno (from the
 * child's exec if that failed). */
static pid_t spawn(char *const argv[], const char *preload, int out_fd, const char *verify_file)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        child_exec(argv, preload, out_fd, p[1], verify_file);
    }
    close(p[1]);
    int e = 0;
    ssize_t got;
    do
        got = read(p[0], &e, sizeof e);
    while (got < 0 && errno == EINTR);
    close(p[0]);
    if (got == (ssize_t)sizeof e) {
        waitpid(pid, NULL, 0);
        errno = e;
        return -1;
    }
    return pid;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int ab_run_timed(const ab_ctx_t *ctx, const ab_workload_t *w, const ab_alloc_t *a, ab_result_t *r,
                 char *err, size_t errsz)
{
    char preload[2 * PATH_MAX + 2], outp[PATH_MAX + 16], verp[PATH_MAX + 16];
    if (preload_value(ctx, a, preload, sizeof preload) < 0) {
        snprintf(err, errsz, "allocator path too long");
        return -1;
    }
    snprintf(outp, sizeof outp, "%s/stdout", ctx->tmpdir);
    snprintf(verp, sizeof verp, "%s/verify", ctx->tmpdir);
    unlink(verp);
    int out_fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out_fd < 0) {
        snprintf(err, errsz, "cannot create %s: %s", outp, strerror(errno));
        return -1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = spawn(w->argv, preload, out_fd, verp);
    close(out_fd);
    if (pid < 0) {
        snprintf(err, errsz, "cannot run '%s': %s", w->argv[0], strerror(errno));
        return -1;
    }
    int st;
    struct rusage ru;
    pid_t got;
    do
        got = wait4(pid, &st, 0, &ru);
    while (got < 0 && errno == EINTR);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (got < 0) {
        snprintf(err, errsz, "wait4: %s", strerror(errno));
        return -1;
    }
    if (WIFSIGNALED(st)) {
        snprintf(err, errsz, "'%s' under %s was killed by signal %d (%s)", w->name, a->name,
                 WTERMSIG(st), strsignal(WTERMSIG(st)));
        return -1;
    }
    if (WEXITSTATUS(st) != 0) {
        snprintf(err, errsz, "'%s' under %s exited with status %d", w->name, a->name,
                 WEXITSTATUS(st));
        return -1;
    }
    r->wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    r->user_s = tv_s(ru.ru_utime);
    r->sys_s = tv_s(ru.ru_stime);
    r->peak_rss_kb = ru.ru_maxrss;
    r->minflt = ru.ru_minflt;
    r->majflt = ru.ru_majflt;
    char *text = slurp(outp);
    r->rss_after_free_kb = ab_find_long(text, "rss_after_free_kb=");
    r->ops = ab_find_long(text, " ops=");
    free(text);
    ab_verify_read(verp, pid, a, r);
    return 0;
}

int ab_capture(char *const argv[], const char *env_preload, int keep_stderr, char **out)
{
    *out = NULL;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        if (!keep_stderr) {
            int dn = open("/dev/null", O_WRONLY);
            if (dn >= 0)
                dup2(dn, STDERR_FILENO);
        }
        dup2(p[1], STDOUT_FILENO);
        if (env_preload)
            setenv("LD_PRELOAD", env_preload, 1);
        else
            unsetenv("LD_PRELOAD");
        execvp(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf && n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
                cap *= 2;
            }
        }
        char sink[4096];
        char *dst = buf ? buf + n : sink;
        size_t room = buf ? cap - n - 1 : sizeof sink;
        ssize_t got = read(p[0], dst, room);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (buf)
            n += (size_t)got;
    }
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            free(buf);
            return -1;
        }
    if (buf)
        buf[n] = 0;
    *out = buf;
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}
