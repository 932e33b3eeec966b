/* hs_seccomp.c - a program that installs a seccomp filter, as sandboxed
 * programs do (sshd's pre-authentication child, a decoder).
 *
 *   hs_seccomp kill|errno|syscall|tsync|other|refused
 *
 * before_site: 3 x malloc(100), kept.  Then a filter goes in (with
 * no_new_privs set first) that lets every call run but:
 *   kill     openat: SECCOMP_RET_KILL_PROCESS (prctl(PR_SET_SECCOMP))
 *   errno    openat: fails with EACCES (prctl)
 *   syscall  openat: SIGSYS (SECCOMP_RET_TRAP), installed with
 *            syscall(SYS_seccomp), as libseccomp does
 *   tsync    openat: killed, with SECCOMP_FILTER_FLAG_TSYNC (every thread,
 *            heapscope's writer too, which runs once the program has
 *            started a thread: one is started and joined first), and
 *            100 ms of sleep after (ten sample periods, at each of which
 *            the writer would open /proc/self/statm)
 *   other    getppid: killed (a call no profiler makes)
 *   refused  a filter the kernel refuses (a jump out of the program):
 *            EINVAL, nothing goes in
 * after_site: 5 x malloc(200), kept.  Prints "filtered" (or "refused
 * EINVAL") and exits with 0 through exit(), whose flush would open the
 * profile.  Without a filter-aware profiler, kill ends the process with
 * SIGSYS at that flush, errno loses the profile, and syscall dies of the
 * SIGSYS nobody handles. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hsprog.h"

static void *kept[8];

HS_SITE static void before_site(void)
{
    for (int i = 0; i < 3; i++)
        if (!(kept[i] = malloc(100)))
            hs_fail("malloc");
    hs_escape(kept);
}

HS_SITE static void after_site(void)
{
    for (int i = 3; i < 8; i++)
        if (!(kept[i] = malloc(200)))
            hs_fail("malloc");
    hs_escape(kept);
}

static void *idle(void *arg)
{
    return arg;
}

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int tsync = !strcmp(mode, "tsync");
    unsigned nr = SYS_openat, action = SECCOMP_RET_KILL_PROCESS;
    if (!strcmp(mode, "errno"))
        action = SECCOMP_RET_ERRNO | EACCES;
    else if (!strcmp(mode, "syscall"))
        action = SECCOMP_RET_TRAP;
    else if (!strcmp(mode, "other"))
        nr = SYS_getppid;
    else if (strcmp(mode, "kill") && strcmp(mode, "refused") && !tsync)
        hs_fail("usage: hs_seccomp kill|errno|syscall|tsync|other|refused");
    struct sock_filter code[] = {
        LOAD(arch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        LOAD(nr),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    if (!strcmp(mode, "refused"))
        code[4].jf = 9; /* past the end */
    struct sock_fprog prog = {.len = sizeof code / sizeof *code, .filter = code};

    before_site();
    if (tsync) {
        pthread_t th;
        if (pthread_create(&th, NULL, idle, NULL) != 0 || pthread_join(th, NULL) != 0)
            hs_fail("pthread");
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        hs_fail("no_new_privs");
    int rc = !strcmp(mode, "syscall") || tsync
                 ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog)
                 : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
    if (!strcmp(mode, "refused")) {
        if (rc == 0 || errno != EINVAL)
            hs_fail("the kernel took a filter with a jump past its end");
    } else if (rc != 0) {
        hs_fail("seccomp");
    }
    after_site();
    if (tsync) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    hs_puts(1, rc == 0 ? "filtered\n" : "refused EINVAL\n");
    exit(0);
}
