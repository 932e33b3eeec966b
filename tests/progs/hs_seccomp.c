/* hs_seccomp.c - a program that installs a seccomp filter, as sandboxed
 * programs do (sshd's pre-authentication child, a decoder).
 *
 *   hs_seccomp kill|errno|syscall|tsync|listener|allowlist|fork|other|refused
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
 *   listener openat: handed to a supervisor (SECCOMP_RET_USER_NOTIF),
 *            installed with SECCOMP_FILTER_FLAG_NEW_LISTENER, which returns
 *            the listener's descriptor; closed at once (openat would then
 *            fail with ENOSYS)
 *   allowlist every call killed but read, write, close, exit, exit_group,
 *            brk, mmap, munmap, mremap, rt_sigreturn and futex, as
 *            sandboxes do (no getpid, no openat)
 *   fork     clone3 fails with ENOSYS (as under systemd), clone of a thread
 *            is killed; then a child does after_site and 5000 mallocs and
 *            frees of 32 bytes, and _exit(0); "child 0" if it did
 *   other    getppid: killed (a call no profiler makes)
 *   refused  a filter the kernel refuses (a jump out of the program):
 *            EINVAL, nothing goes in
 * after_site: 5 x malloc(200), kept (in fork mode, in the child).  Prints "filtered" (or "refused
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
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

#define INSN(x) ((struct sock_filter)x)
#define LOAD(field) INSN(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field)))
#define IF_NR(nr, then, other) INSN(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, then, other))
#define RET(action) INSN(BPF_STMT(BPF_RET | BPF_K, action))

/* The filter of `mode` into code; its length, or 0 for an unknown mode. */
static unsigned short make_filter(const char *mode, struct sock_filter *code)
{
    unsigned short n = 0;
    code[n++] = LOAD(arch);
    code[n++] = INSN(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
    code[n++] = RET(SECCOMP_RET_KILL_PROCESS);
    code[n++] = LOAD(nr);
    if (!strcmp(mode, "allowlist")) {
        static const unsigned allowed[] = {SYS_read, SYS_write, SYS_close, SYS_exit,
                                           SYS_exit_group, SYS_brk, SYS_mmap, SYS_munmap,
                                           SYS_mremap, SYS_rt_sigreturn, SYS_futex};
        const unsigned k = sizeof allowed / sizeof *allowed;
        for (unsigned i = 0; i < k; i++)
            code[n++] = IF_NR(allowed[i], (unsigned char)(k - i), 0);
        code[n++] = RET(SECCOMP_RET_KILL_PROCESS);
        code[n++] = RET(SECCOMP_RET_ALLOW);
        return n;
    }
    if (!strcmp(mode, "fork")) {
        code[n++] = IF_NR(SYS_clone3, 0, 1);
        code[n++] = RET(SECCOMP_RET_ERRNO | ENOSYS);
        code[n++] = IF_NR(SYS_clone, 0, 3);
        code[n++] = LOAD(args[0]);
        code[n++] = INSN(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
        code[n++] = RET(SECCOMP_RET_KILL_PROCESS);
        code[n++] = RET(SECCOMP_RET_ALLOW);
        return n;
    }
    unsigned nr = SYS_openat, action = SECCOMP_RET_KILL_PROCESS;
    if (!strcmp(mode, "errno"))
        action = SECCOMP_RET_ERRNO | EACCES;
    else if (!strcmp(mode, "syscall"))
        action = SECCOMP_RET_TRAP;
    else if (!strcmp(mode, "listener"))
        action = SECCOMP_RET_USER_NOTIF;
    else if (!strcmp(mode, "other"))
        nr = SYS_getppid;
    else if (strcmp(mode, "kill") && strcmp(mode, "tsync") && strcmp(mode, "refused"))
        return 0;
    code[n++] = IF_NR(nr, 0, !strcmp(mode, "refused") ? 9 : 1); /* 9: past the end */
    code[n++] = RET(action);
    code[n++] = RET(SECCOMP_RET_ALLOW);
    return n;
}

/* after_site in a child, with enough other allocations that its writer's
 * periodic check runs (every 4096 events), which would start a thread */
static void fork_child(void)
{
    pid_t pid = fork();
    if (pid < 0)
        hs_fail("fork");
    if (pid == 0) {
        after_site();
        for (int i = 0; i < 5000; i++) {
            void *p = malloc(32);
            hs_escape(p);
            free(p);
        }
        _exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        hs_fail("waitpid");
    hs_puts(1, WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "child 0\n" : "child failed\n");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    struct sock_filter code[32];
    struct sock_fprog prog = {.len = make_filter(mode, code), .filter = code};
    if (!prog.len)
        hs_fail("usage: hs_seccomp kill|errno|syscall|tsync|listener|allowlist|fork|other|refused");
    int tsync = !strcmp(mode, "tsync"), listener = !strcmp(mode, "listener");

    before_site();
    if (tsync) {
        pthread_t th;
        if (pthread_create(&th, NULL, idle, NULL) != 0 || pthread_join(th, NULL) != 0)
            hs_fail("pthread");
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        hs_fail("no_new_privs");
    unsigned flags = tsync ? SECCOMP_FILTER_FLAG_TSYNC
                     : listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
    int rc = !strcmp(mode, "syscall") || flags
                 ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog)
                 : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
    if (listener && rc > 0) { /* the listener: closed, so that openat would fail with ENOSYS */
        close(rc);
        rc = 0;
    }
    if (!strcmp(mode, "refused")) {
        if (rc == 0 || errno != EINVAL)
            hs_fail("the kernel took a filter with a jump past its end");
    } else if (rc != 0) {
        hs_fail("seccomp");
    }
    if (!strcmp(mode, "fork"))
        fork_child();
    else
        after_site();
    if (tsync) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    hs_puts(1, rc == 0 ? "filtered\n" : "refused EINVAL\n");
    exit(0);
}
