/* col_seccomp.c - whether the process may be under a seccomp filter, the
 * interposed calls that install one (prctl, syscall), and the read of
 * another stack's words that such a filter allows.
 *
 * The frame-pointer walk of a stack that is not the thread's own reads
 * frames off its first page with process_vm_readv(2), which fails where
 * nothing is mapped instead of faulting (col_unwind_fp.c).  A seccomp
 * filter may forbid that call and kill the process for it (systemd's
 * SystemCallFilter= denies the @debug set, process_vm_readv among them,
 * with SIGSYS by default).  So once a filter is, or may be, installed,
 * those words are copied through a pipe made for the read instead: write(2)
 * fails with EFAULT where process_vm_readv would, and pipe2, write, read
 * and close are calls no program that runs at all can forbid.  The same
 * frames, at 6.1 us a read against 1.1 us (this VM).
 *
 * A filter installed before the program started (inherited through fork
 * and exec) shows in /proc/self/status, read at start-up, before the
 * program could install one that forbids reading it; if the file cannot
 * be read, a filter is assumed.  A filter the program installs later goes
 * through prctl(PR_SET_SECCOMP) or the seccomp system call by syscall(2)
 * (libseccomp uses both): the flag is set before the call is made.  A
 * filter installed with an inline system call instruction is not seen.
 *
 * A filter may also forbid what writing a profile takes (openat, rename,
 * fcntl...) and stop the process for it: sshd's pre-authentication child
 * kills on any call outside its list.  So a filter about to go in is run
 * first on the calls the collector makes after start-up (col_bpf.c); if
 * any of them would stop the process, the profile is written there, with
 * a message that says why it ends, and sealed: no later flush, sample,
 * mapping or libunwind walk (col_sealed).  The program goes on as it
 * would without heapscope.  If the kernel then refuses the filter, the
 * seal is lifted. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect/col_internal.h"

int col_seccomp;
int col_sealed;

/* "Seccomp:\t<mode>" of /proc/self/status: 1 if the mode is not 0 or
 * the file cannot be read; 0 if it has no such line (a kernel without
 * seccomp).  Read through a small buffer, a line's start at a time: the
 * Groups: line before it can be long, and a big buffer here would be
 * pages of the main thread's stack that the program keeps for good. */
static int status_says_filtered(void)
{
    static const char key[] = "Seccomp:";
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    char buf[256];
    size_t at = 0;          /* characters of key matched at this line's start */
    int in_key = 1;         /* still matching key on this line */
    int result = -1;
    ssize_t n;
    while (result < 0 && (n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            result = 1;
            break;
        }
        for (ssize_t i = 0; i < n && result < 0; i++) {
            char c = buf[i];
            if (c == '\n') {
                at = 0;
                in_key = 1;
            } else if (!in_key) {
                continue;
            } else if (at < sizeof key - 1) {
                if (c == key[at])
                    at++;
                else
                    in_key = 0;
            } else if (c != ' ' && c != '\t') {
                result = c != '0';
            }
        }
    }
    close(fd);
    return result < 0 ? 0 : result;
}

void col_seccomp_init(void)
{
    int saved = errno;
    __atomic_store_n(&col_seccomp, status_says_filtered(), __ATOMIC_RELAXED);
    errno = saved;
}

static void note_filter(void)
{
    __atomic_store_n(&col_seccomp, 1, __ATOMIC_SEQ_CST);
}

/* The system calls the collector makes after start-up, with the arguments
 * a filter may look at (1 for a pointer).  Those of a flush (col_flush.c,
 * col_output.c; `flush` 1) must run: one that fails with an errno loses
 * the profile.  The others may fail, as they may without a filter: the
 * timeline's /proc/self/statm, the writer's futex, the collector's memory
 * (col_vm.c), a new thread's stack bounds (pthread_getattr_np asks for its
 * CPU affinity), and the reads of another stack's words
 * (col_seccomp_read). */
#define ARG_FDCWD ((uint64_t)(int64_t)AT_FDCWD)
#define ARG_FD_NONE ((uint64_t)(int64_t)-1)
static const struct {
    int nr, flush;
    const char *name;
    uint64_t args[6];
} calls[] = {
    {SYS_openat, 1, "openat", {ARG_FDCWD, 1, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644}},
    {SYS_openat, 1, "openat", {ARG_FDCWD, 1, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644}},
    {SYS_openat, 1, "openat", {ARG_FDCWD, 1, O_RDONLY | O_CLOEXEC}},
    {SYS_newfstatat, 1, "newfstatat", {ARG_FDCWD, 1, 1}},
    {SYS_prlimit64, 1, "prlimit64", {0, RLIMIT_NOFILE, 0, 1}},
    {SYS_fcntl, 1, "fcntl", {3, F_DUPFD_CLOEXEC, 4096}},
    {SYS_write, 1, "write", {3, 1, 4096}},
    {SYS_pread64, 1, "pread64", {3, 1, 4096}},
    {SYS_readlink, 1, "readlink", {1, 1, 4095}},
    {SYS_rename, 1, "rename", {1, 1}},
    {SYS_close, 1, "close", {3}},
    {SYS_getpid, 1, "getpid", {0}},
    {SYS_mmap, 1, "mmap", {0, 1 << 20, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, ARG_FD_NONE, 0}},
    {SYS_munmap, 1, "munmap", {1, 1 << 20}},
    {SYS_unlink, 0, "unlink", {1}},
    {SYS_read, 0, "read", {3, 1, 8}},
    {SYS_futex, 0, "futex", {1, FUTEX_WAIT_PRIVATE, 0, 1}},
    {SYS_futex, 0, "futex", {1, FUTEX_WAKE_PRIVATE, 1}},
    {SYS_madvise, 0, "madvise", {1, 1 << 20, MADV_DONTNEED}},
    {SYS_sched_getaffinity, 0, "sched_getaffinity", {0, 32, 1}},
    {SYS_pipe2, 0, "pipe2", {1, O_CLOEXEC | O_NONBLOCK}},
};

#define FILTER_MAX 4096 /* BPF_MAXINSNS */

/* Why a filter about to be installed would stop a profile (a sentence's
 * end, in why), or NULL if every call in `calls` would run under it (or
 * fail with an errno, where that is allowed).  prog is the program's struct sock_fprog, read through
 * col_seccomp_read: a bad pointer is the kernel's to refuse (EFAULT). */
static const char *filter_stops(const void *prog, char *why, size_t len)
{
    struct sock_fprog f;
    if (col_seccomp_read(prog, &f, sizeof f) != 1 || f.len == 0 || f.len > FILTER_MAX)
        return NULL;
    size_t size = (size_t)f.len * sizeof *f.filter;
    struct sock_filter *code = col_vm_map(size);
    if (!code)
        return NULL;
    const char *r = NULL;
    /* a page at a time: a pipe may hold no more (pipe-user-pages-soft) */
    size_t done, n;
    for (done = 0; done < size; done += n) {
        n = size - done < 4096 ? size - done : 4096;
        if (col_seccomp_read((const char *)f.filter + done, (char *)code + done, n) != 1)
            break;
    }
    if (done == size) {
        for (size_t i = 0; i < sizeof calls / sizeof *calls && !r; i++) {
            struct seccomp_data d = {.nr = calls[i].nr, .arch = AUDIT_ARCH_X86_64};
            memcpy(d.args, calls[i].args, sizeof d.args);
            int64_t rv = col_bpf_run(code, f.len, &d);
            if (rv < 0)
                r = "heapscope cannot read (an instruction or jump it does not know)";
            else if (!col_bpf_lets(rv, !calls[i].flush)) {
                uint32_t action = (uint32_t)rv & SECCOMP_RET_ACTION_FULL;
                const char *need = calls[i].flush ? "writing a profile needs" : "heapscope makes";
                if (action == SECCOMP_RET_ERRNO)
                    snprintf(why, len, "makes %s fail, which %s", calls[i].name, need);
                else
                    snprintf(why, len, "stops the process at %s (%s), which %s", calls[i].name,
                             action == SECCOMP_RET_TRAP ? "SIGSYS" : "a kill, a tracer or a supervisor",
                             need);
                r = why;
            }
        }
    }
    col_vm_unmap(code, size);
    return r;
}

/* The program is about to install a seccomp filter: strict mode, or the
 * filter at prog.  Returns the profile's last message if it was sealed for
 * it, else NULL. */
static const char *filter_coming(int strict, const void *prog)
{
    note_filter();
    if (col_state != COL_READY || col_inside() || __atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE))
        return NULL;
    int saved = errno;
    int top = col_guard_enter();
    char why[160];
    const char *stops = strict ? "allows only read, write, exit and sigreturn (strict mode)"
                               : filter_stops(prog, why, sizeof why);
    const char *note = stops ? col_flush_seal(stops) : NULL;
    col_guard_leave(top);
    errno = saved;
    return note;
}

/* After the call that was to install it: the seal stays, and is told on
 * stderr, if it went in. */
static void filter_done(const char *note, long rc)
{
    if (!note)
        return;
    int saved = errno;
    if (rc == 0)
        col_log("heapscope: %s\n", note);
    else
        col_flush_unseal();
    errno = saved;
}

UT_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
    unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    if (!col_real.prctl)
        col_boot_init();
    if (!col_real.prctl) {
        errno = ENOSYS;
        return -1;
    }
    const char *sealed = NULL;
    if (option == PR_SET_SECCOMP)
        sealed = filter_coming(a2 == SECCOMP_MODE_STRICT, (const void *)a3);
    int rc = col_real.prctl(option, a2, a3, a4, a5);
    filter_done(sealed, rc);
    return rc;
}

/* Every argument register is passed on, as glibc's own syscall() does. */
UT_EXPORT long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
    long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
    va_end(ap);
    if (!col_real.syscall)
        col_boot_init();
    if (!col_real.syscall) {
        errno = ENOSYS;
        return -1;
    }
    /* the kernel takes the number and an int operation in 32 bits */
    int nr = (int)number;
    unsigned op = (unsigned)a1;
    const char *sealed = NULL;
    if (nr == SYS_seccomp && (op == SECCOMP_SET_MODE_STRICT || op == SECCOMP_SET_MODE_FILTER))
        sealed = filter_coming(op == SECCOMP_SET_MODE_STRICT, (const void *)a3);
    else if (nr == SYS_prctl && op == PR_SET_SECCOMP)
        sealed = filter_coming((unsigned long)a2 == SECCOMP_MODE_STRICT, (const void *)a3);
    long rc = col_real.syscall(number, a1, a2, a3, a4, a5, a6);
    filter_done(sealed, rc);
    return rc;
}

/* Copy n bytes at `at` into out through a pipe made for it: 1 if copied, 0
 * if they are not all readable (write fails with EFAULT), -1 if no pipe
 * could be made (out of descriptors).  errno is kept.  A pipe of its own
 * each time: one kept open could be closed by the program (a daemon closes
 * every descriptor) and its number reused for one of the program's files. */
int col_seccomp_read(const void *at, void *out, size_t n)
{
    int saved = errno, p[2], rc = -1;
    if (!__atomic_load_n(&col_sealed, __ATOMIC_RELAXED) && pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
        rc = write(p[1], at, n) == (ssize_t)n && read(p[0], out, n) == (ssize_t)n;
        close(p[0]);
        close(p[1]);
    }
    errno = saved;
    return rc;
}
