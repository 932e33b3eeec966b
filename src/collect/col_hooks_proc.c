/* col_hooks_proc.c - interposed process-level calls: dlopen/dlclose keep
 * the module map right (call-tree nodes made before a dlclose are placed in
 * the profile before the module's unload record), and the exec family writes
 * the profile of the image that is about to be replaced.  The new image is
 * profiled too when LD_PRELOAD still names libheapscope.so.  unshare and
 * setns into a user namespace, which the kernel refuses to a process with
 * more than one thread, are retried with heapscope's writer thread
 * stopped.  pthread_create says that the program is about to have a
 * second thread (col_glibc.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect/col_internal.h"

extern char **environ;

/* (not once the profile is sealed: a seccomp filter may forbid even the
 * getpid of the exec and _exit hooks, col_seccomp.c) */
static int active(void)
{
    return col_state == COL_READY && !col_inside() &&
           !__atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE);
}

UT_EXPORT void *dlopen(const char *file, int mode)
{
    COL_REAL_OR_FAIL(dlopen, NULL);
    void *h = col_real.dlopen(file, mode);
    if (h && active()) {
        int saved = errno;
        int top = col_guard_enter();
        col_writer_lock();
        col_modules_scan();
        col_ext_check();
        col_writer_unlock();
        col_guard_leave(top);
        errno = saved;
    }
    return h;
}

UT_EXPORT int dlclose(void *handle)
{
    if (!col_real.dlclose) {
        col_boot_init();
        if (!col_real.dlclose)
            return -1;
    }
    int on = active();
    if (on) {
        /* the stacks recorded so far belong before the module's unload */
        int top = col_guard_enter();
        col_writer_lock();
        col_modules_scan();
        col_writer_unlock();
        col_guard_leave(top);
    }
    int rc = col_real.dlclose(handle);
    if (on) {
        int saved = errno;
        int top = col_guard_enter();
        col_writer_lock();
        col_modules_scan();
        col_writer_unlock();
        col_guard_leave(top);
        errno = saved;
    }
    return rc;
}

/* Write this image's profile before exec replaces it.  Skipped in a vfork
 * child (different pid, our state is the parent's). */
static void before_exec(void)
{
    if (!active() || (int)getpid() != col_proc.pid)
        return;
    int saved = errno;
    int top = col_guard_enter();
    col_writer_lock();
    col_flush(COL_FLUSH_EXEC);
    col_writer_unlock();
    col_guard_leave(top);
    errno = saved;
}

UT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    if (!col_real.execve)
        col_boot_init();
    before_exec();
    return col_real.execve(path, argv, envp);
}

UT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (!col_real.execvpe)
        col_boot_init();
    before_exec();
    return col_real.execvpe(file, argv, envp);
}

UT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    if (!col_real.fexecve)
        col_boot_init();
    before_exec();
    return col_real.fexecve(fd, argv, envp);
}

UT_EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

UT_EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

#define EXECL_MAX_ARGS 4096

/* Collect execl-style variadic arguments into argv (NULL-terminated);
 * returns -1 with E2BIG if there are too many. */
static int collect_args(char **argv, const char *arg0, va_list ap)
{
    int n = 0;
    argv[n++] = (char *)arg0;
    while (arg0) {
        if (n == EXECL_MAX_ARGS) {
            errno = E2BIG;
            return -1;
        }
        char *a = va_arg(ap, char *);
        argv[n++] = a;
        if (!a)
            break;
    }
    return 0;
}

UT_EXPORT int execl(const char *path, const char *arg, ...)
{
    char *argv[EXECL_MAX_ARGS + 1];
    va_list ap;
    va_start(ap, arg);
    int rc = collect_args(argv, arg, ap);
    va_end(ap);
    return rc < 0 ? -1 : execve(path, argv, environ);
}

UT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char *argv[EXECL_MAX_ARGS + 1];
    va_list ap;
    va_start(ap, arg);
    int rc = collect_args(argv, arg, ap);
    va_end(ap);
    return rc < 0 ? -1 : execvpe(file, argv, environ);
}

UT_EXPORT int execle(const char *path, const char *arg, ...)
{
    char *argv[EXECL_MAX_ARGS + 1];
    va_list ap;
    va_start(ap, arg);
    int rc = collect_args(argv, arg, ap);
    char *const *envp = rc < 0 ? NULL : va_arg(ap, char *const *);
    va_end(ap);
    return rc < 0 ? -1 : execve(path, argv, envp);
}

/* _exit skips atexit handlers and destructors, so our final flush too:
 * write it here (fork children commonly leave this way). */
UT_EXPORT void _exit(int status)
{
    if (active() && (int)getpid() == col_proc.pid) {
        col_guard_enter(); /* never left: the process ends */
        col_writer_lock();
        col_flush(COL_FLUSH_FINAL);
        col_writer_unlock();
    }
    if (col_real.exit_)
        col_real.exit_(status);
    for (;;) /* not through syscall(), which is ours too (col_seccomp.c) */
        __asm__ volatile("syscall" : : "a"(SYS_exit_group), "D"(status) : "rcx", "r11", "memory");
}

UT_EXPORT void _Exit(int status)
{
    _exit(status);
}

/* The call again, with the writer thread stopped, when it failed with
 * EINVAL and the writer may be the reason (the program's own threads
 * would make it fail without heapscope too).  The thread starts again
 * after, in the new namespace.  rc and errno are the last call's. */
static int retry_single_threaded(int rc, int (*call)(int, int), int a, int b)
{
    if (rc == 0 || errno != EINVAL || !active())
        return rc;
    int saved = errno;
    int top = col_guard_enter();
    if (col_writer_pause()) {
        rc = call(a, b);
        saved = errno;
        col_writer_start();
    }
    col_guard_leave(top);
    errno = saved;
    return rc;
}

static int real_unshare(int flags, int unused)
{
    (void)unused;
    return col_real.unshare(flags);
}

static int real_setns(int fd, int nstype)
{
    return col_real.setns(fd, nstype);
}

UT_EXPORT int unshare(int flags)
{
    COL_REAL_OR_FAIL(unshare, -1);
    int rc = col_real.unshare(flags);
    return flags & CLONE_NEWUSER ? retry_single_threaded(rc, real_unshare, flags, 0) : rc;
}

UT_EXPORT int setns(int fd, int nstype)
{
    COL_REAL_OR_FAIL(setns, -1);
    int rc = col_real.setns(fd, nstype);
    /* nstype 0 takes any namespace, a user namespace among them */
    return !nstype || (nstype & CLONE_NEWUSER) ? retry_single_threaded(rc, real_setns, fd, nstype)
                                                : rc;
}

/* Said before the thread exists: from here this thread publishes heap
 * bytes with locked adds (col_heap_add), while glibc 2.36 sets its own
 * per-thread flag only once the new thread runs.  Threads glibc makes for
 * itself (POSIX AIO, SIGEV_THREAD timers) call its internal function and
 * are not seen here. */
UT_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                             void *(*start)(void *), void *arg)
{
    COL_REAL_OR_FAIL(pthread_create, EAGAIN);
    __atomic_store_n(&col_program_threaded, 1, __ATOMIC_RELAXED);
    return col_real.pthread_create(th, attr, start, arg);
}
