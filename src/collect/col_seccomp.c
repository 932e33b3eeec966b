/* col_seccomp.c - whether the process may be under a seccomp filter, and
 * the interposed calls that install one (prctl, syscall).
 *
 * The frame-pointer walk of a stack that is not the thread's own reads
 * frames off its first page with process_vm_readv(2), which fails where
 * nothing is mapped instead of faulting (col_unwind_fp.c).  A seccomp
 * filter may forbid that call and kill the process for it (systemd's
 * SystemCallFilter= denies the @debug set, process_vm_readv among them,
 * with SIGSYS by default).  So once a filter is, or may be, installed,
 * such walks stop where they would need the call, and the profile says how
 * many did (col_unwind_report).
 *
 * A filter installed before the program started (inherited through fork
 * and exec) shows in /proc/self/status, read at start-up, before the
 * program could install one that forbids reading it; if it cannot be read,
 * a filter is assumed.  A filter the program installs later goes through
 * prctl(PR_SET_SECCOMP) or syscall(SYS_seccomp) (libseccomp uses both):
 * the flag is set before the call is made.  A filter installed with an
 * inline system call instruction is not seen. */
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

/* "Seccomp:\t<mode>" of /proc/self/status: 1 if the mode is not 0 or the
 * line cannot be read. */
static int status_says_filtered(void)
{
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 1;
    buf[n] = 0;
    const char *line = strstr(buf, "\nSeccomp:");
    if (!line)
        return 1;
    line += strlen("\nSeccomp:");
    while (*line == ' ' || *line == '\t')
        line++;
    return *line != '0';
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
    if (option == PR_SET_SECCOMP)
        note_filter();
    return col_real.prctl(option, a2, a3, a4, a5);
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
    if (number == SYS_seccomp && (a1 == SECCOMP_SET_MODE_STRICT || a1 == SECCOMP_SET_MODE_FILTER))
        note_filter();
    return col_real.syscall(number, a1, a2, a3, a4, a5, a6);
}
