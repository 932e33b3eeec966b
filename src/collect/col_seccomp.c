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
 * first on the calls the collector makes after start-up
 * (col_seccomp_calls.c, col_bpf.c); if one a flush needs would not run,
 * or any would stop the process, the profile is written there, with a
 * message that says why it ends, and sealed: no later system call of the
 * collector's own (col_sealed).  The program goes on as it would without
 * heapscope.  If the kernel then refuses the filter, the seal is lifted
 * (unless another filter on its way in holds it too). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
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

/* The program is about to install a seccomp filter: strict mode, or the
 * filter at prog.  Returns 1 if the profile is sealed for it: written now
 * and no more (col_flush_seal), or already sealed by an earlier filter.
 * The line on stderr is written now, while the filter is not in. */
static int filter_coming(int strict, const void *prog)
{
    note_filter();
    if (col_state != COL_READY || col_inside())
        return 0;
    int saved = errno;
    int top = col_guard_enter();
    char why[200];
    /* (already sealed: the filter cannot be read, no pipe is made, and it
     * holds the seal too) */
    const char *stops = strict ? "allows only read, write, exit and sigreturn (strict mode)"
                               : col_seccomp_filter_stops(prog, why, sizeof why);
    if (stops) {
        const char *note = col_flush_seal(stops);
        if (note) {
            col_log("heapscope: %s\n", note);
            col_config_preload_drop(); /* no image it starts loads heapscope again */
        }
    }
    col_guard_leave(top);
    errno = saved;
    return stops != NULL;
}

/* After the call that was to install it (ok: it went in), the seal stays
 * or is lifted. */
static void filter_done(int sealed, int ok)
{
    if (!sealed || ok)
        return;
    int saved = errno;
    if (col_flush_unseal()) {
        col_config_preload_restore();
        col_log("heapscope: the kernel refused that seccomp filter: the profile goes on\n");
    }
    errno = saved;
}

UT_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
    unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    COL_REAL_OR_FAIL(prctl, -1);
    int sealed = 0;
    if (option == PR_SET_SECCOMP)
        sealed = filter_coming(a2 == SECCOMP_MODE_STRICT, (const void *)a3);
    int rc = col_real.prctl(option, a2, a3, a4, a5);
    filter_done(sealed, rc == 0);
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
    COL_REAL_OR_FAIL(syscall, -1);
    /* the kernel takes the number and an int operation in 32 bits */
    int nr = (int)number;
    unsigned op = (unsigned)a1;
    int sealed = 0, listener = 0;
    if (nr == SYS_seccomp && (op == SECCOMP_SET_MODE_STRICT || op == SECCOMP_SET_MODE_FILTER)) {
        sealed = filter_coming(op == SECCOMP_SET_MODE_STRICT, (const void *)a3);
        listener = op == SECCOMP_SET_MODE_FILTER && (a2 & SECCOMP_FILTER_FLAG_NEW_LISTENER);
    } else if (nr == SYS_prctl && op == PR_SET_SECCOMP) {
        sealed = filter_coming((unsigned long)a2 == SECCOMP_MODE_STRICT, (const void *)a3);
    }
    long rc = col_real.syscall(number, a1, a2, a3, a4, a5, a6);
    /* with a listener, success is its descriptor; with TSYNC, a failure
     * can be a thread id */
    filter_done(sealed, rc == 0 || (listener && rc > 0));
    return rc;
}

/* Copy n bytes at `at` into out through a pipe made for it: 1 if copied, 0
 * if they are not all readable (write fails with EFAULT), -1 if no pipe
 * could be made (out of descriptors).  errno is kept.  A pipe of its own
 * each time: one kept open could be closed by the program (a daemon closes
 * every descriptor) and its number reused for one of the program's files. */
int col_seccomp_read(const void *at, void *out, size_t n)
{
    int saved = errno, p[2] = {-1, -1}, rc = -1;
    if (!__atomic_load_n(&col_sealed, __ATOMIC_RELAXED) && pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0 &&
        p[0] >= 0 && p[1] >= 0) {
        rc = write(p[1], at, n) == (ssize_t)n && read(p[0], out, n) == (ssize_t)n;
        close(p[0]);
        close(p[1]);
    }
    errno = saved;
    return rc;
}
