/* col_seccomp_calls.c - would a seccomp filter the program is about to
 * install stop the collector?
 *
 * The list below is every system call the collector makes after start-up,
 * with the arguments it passes where a filter may look at them (a number
 * where the call takes one, 1 for a pointer).  Each is run through the
 * filter (col_bpf.c) before the filter goes in (col_seccomp.c).  Those
 * marked `must` have to run: a flush that cannot open, write or rename
 * loses the profile, and a futex wait that fails at once makes the writer
 * spin.  The others may fail with an errno, as they may without a filter
 * (no new thread for the writer, no CPU affinity for a thread's stack
 * bounds, a pipe not made), but must not stop the process.  The collector
 * sleeps only on a futex (col_writer.c, col_idtab.c: never nanosleep under
 * a filter).  glibc 2.33 and later (Debian 12: 2.36): stat(2) is
 * newfstatat. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "collect/col_internal.h"

#define ARG_FDCWD ((uint64_t)(int64_t)AT_FDCWD)
#define ARG_NONE ((uint64_t)(int64_t)-1)
#define ARG_HIGH_FD (UINT64_MAX - 1) /* the profile's descriptor: col_fd_floor() */
/* the flags glibc's pthread_create passes to clone when clone3 fails */
#define THREAD_FLAGS                                                                           \
    (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |        \
     CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

static const struct {
    int nr, must;
    const char *name;
    uint64_t args[6];
} calls[] = {
    /* a flush (col_flush.c, col_output.c) */
    {SYS_openat, 1, "openat", {ARG_FDCWD, 1, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644}},
    {SYS_openat, 1, "openat", {ARG_FDCWD, 1, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644}},
    {SYS_openat, 1, "openat", {ARG_FDCWD, 1, O_WRONLY | O_NONBLOCK | O_CLOEXEC}},
    {SYS_openat, 1, "openat", {ARG_FDCWD, 1, O_RDONLY | O_CLOEXEC}},
    {SYS_newfstatat, 1, "newfstatat", {ARG_FDCWD, 1, 1}},
    {SYS_prlimit64, 1, "prlimit64", {0, RLIMIT_NOFILE, 0, 1}},
    {SYS_fcntl, 1, "fcntl", {3, F_DUPFD_CLOEXEC, ARG_HIGH_FD}},
    {SYS_write, 1, "write", {ARG_HIGH_FD, 1, 4096}},
    {SYS_pread64, 1, "pread64", {3, 1, 4096}},
    {SYS_readlink, 1, "readlink", {1, 1, 4095}},
    {SYS_rename, 1, "rename", {1, 1}},
    {SYS_close, 1, "close", {ARG_HIGH_FD}},
    {SYS_close, 1, "close", {3}},
    {SYS_getpid, 1, "getpid", {0}},
    {SYS_mmap, 1, "mmap", {0, 1 << 20, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, ARG_NONE, 0}},
    {SYS_munmap, 1, "munmap", {1, 1 << 20}},
    {SYS_futex, 1, "futex", {1, FUTEX_WAIT_PRIVATE, 0, 1}},
    {SYS_futex, 1, "futex", {1, FUTEX_WAKE_PRIVATE, 1}},
    {SYS_unlink, 0, "unlink", {1}},
    /* the writer thread: made, named, stopped (col_writer.c) */
    {SYS_clone3, 0, "clone3", {1, 88}},
    {SYS_clone, 0, "clone", {THREAD_FLAGS, 1, 1, 1, 1}},
    {SYS_mprotect, 0, "mprotect", {1, 4096, PROT_NONE}},
    {SYS_rt_sigprocmask, 0, "rt_sigprocmask", {SIG_SETMASK, 1, 1, 8}},
    {SYS_gettid, 0, "gettid", {0}},
    {SYS_prctl, 0, "prctl", {PR_SET_NAME, 1}},
    {SYS_tgkill, 0, "tgkill", {1, 1, 0}},
    {SYS_madvise, 0, "madvise", {1, 1 << 20, MADV_DONTNEED}},
    /* a thread's stack bounds, spin-waits, another stack's words */
    {SYS_sched_getaffinity, 0, "sched_getaffinity", {0, 32, 1}},
    {SYS_sched_yield, 0, "sched_yield", {0}},
    {SYS_pipe2, 0, "pipe2", {1, O_CLOEXEC | O_NONBLOCK}},
    {SYS_read, 0, "read", {3, 1, 8}},
};

#define FILTER_MAX 4096 /* BPF_MAXINSNS */

/* Copy the filter's code (len instructions at at, in the program's
 * memory) into a new mapping, a page at a time (a pipe may hold no more:
 * pipe-user-pages-soft); NULL if it cannot be read or mapped. */
static struct sock_filter *copy_code(const void *at, size_t len)
{
    size_t size = len * sizeof(struct sock_filter), done, n;
    char *code = col_vm_map(size);
    if (!code)
        return NULL;
    for (done = 0; done < size; done += n) {
        n = size - done < 4096 ? size - done : 4096;
        if (col_seccomp_read((const char *)at + done, code + done, n) != 1) {
            col_vm_unmap(code, size);
            return NULL;
        }
    }
    return (struct sock_filter *)code;
}

/* Why the filter at prog (the program's struct sock_fprog) would stop the
 * profile (a sentence's end, in why), or NULL if every call in `calls`
 * would run under it, or fail with an errno where that is allowed.  One
 * that cannot be read is taken to stop it: if the pointer is bad, the
 * kernel refuses the filter (EFAULT), and the seal is lifted. */
const char *col_seccomp_filter_stops(const void *prog, char *why, size_t len)
{
    static const char unread[] = "heapscope could not read (an instruction it does not know, or "
                                 "no memory or pipe to copy it)";
    struct sock_fprog f;
    if (col_seccomp_read(prog, &f, sizeof f) != 1)
        return unread;
    if (f.len == 0 || f.len > FILTER_MAX)
        return NULL; /* the kernel refuses it (EINVAL) */
    struct sock_filter *code = copy_code(f.filter, f.len);
    if (!code)
        return unread;
    int floor = col_fd_floor();
    const char *r = NULL;
    for (size_t i = 0; i < sizeof calls / sizeof *calls && !r; i++) {
        struct seccomp_data d = {.nr = calls[i].nr, .arch = AUDIT_ARCH_X86_64};
        for (int a = 0; a < 6; a++)
            d.args[a] = calls[i].args[a] == ARG_HIGH_FD ? (uint64_t)floor : calls[i].args[a];
        int64_t rv = col_bpf_run(code, f.len, &d);
        if (rv < 0) {
            r = unread;
        } else if (!col_bpf_lets(rv, !calls[i].must)) {
            uint32_t action = (uint32_t)rv & SECCOMP_RET_ACTION_FULL;
            const char *need = calls[i].must ? "writing a profile needs" : "heapscope makes";
            if (action == SECCOMP_RET_ERRNO)
                snprintf(why, len, "makes %s fail, which %s", calls[i].name, need);
            else
                snprintf(why, len, "stops the process at %s (%s), which %s", calls[i].name,
                         action == SECCOMP_RET_TRAP ? "SIGSYS" : "a kill, a tracer or a supervisor",
                         need);
            r = why;
        }
    }
    col_vm_unmap(code, f.len * sizeof *code);
    return r;
}
