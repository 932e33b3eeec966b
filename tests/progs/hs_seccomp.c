/* hs_seccomp.c - a program that installs a seccomp filter, as sandboxed
 * programs do (sshd's pre-authentication child, a decoder).
 *
 *   hs_seccomp MODE
 *   hs_seccomp exec PROG [ARGS...]
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
 *   forkpid  getpid killed; then the child of fork mode
 *   yield    sched_yield killed, with TSYNC; 8 threads started before it
 *            then make 100,000 allocations each from 4,096 stacks at once,
 *            after it (contended locks in the collector's tables)
 *   two      tgkill killed, with TSYNC, installed by two threads at once
 *   exec     prlimit64 of RLIMIT_NOFILE killed (glibc's start-up asks for
 *            RLIMIT_STACK only); then, after "filtered", execv(PROG, ARGS):
 *            an image that loaded heapscope again would die at its start
 *   other    getppid: killed (a call no profiler makes)
 *   refused  a filter the kernel refuses (a jump out of the program):
 *            EINVAL, nothing goes in; prints whether LD_PRELOAD still
 *            names libheapscope ("preload kept": the seal, lifted, gave
 *            it back)
 * Then after_site: 5 x malloc(200), kept (in fork mode, in the child).
 * Prints "filtered" (or "refused EINVAL") and exits with 0 through exit(),
 * whose flush would open the profile.  Without a filter-aware profiler,
 * kill ends the process with SIGSYS at that flush, errno loses the
 * profile, and syscall dies of the SIGSYS nobody handles. */
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
#include <sys/resource.h>
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
    if (!strcmp(mode, "exec")) { /* prlimit64(..., RLIMIT_NOFILE, ...) killed */
        code[n++] = IF_NR(SYS_prlimit64, 0, 4);
        code[n++] = LOAD(args[1]);
        code[n++] = INSN(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RLIMIT_NOFILE, 0, 1));
        code[n++] = RET(SECCOMP_RET_KILL_PROCESS);
        code[n++] = RET(SECCOMP_RET_ALLOW);
        code[n++] = RET(SECCOMP_RET_ALLOW);
        return n;
    }
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
    if (!strcmp(mode, "forkpid"))
        nr = SYS_getpid;
    else if (!strcmp(mode, "yield"))
        nr = SYS_sched_yield;
    else if (!strcmp(mode, "two"))
        nr = SYS_tgkill;
    else if (!strcmp(mode, "errno"))
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

/* Many new stacks from 8 threads at once, released by a barrier after the
 * filter is in: the collector's tables meet contended locks, whose waits
 * must not call sched_yield then. */
enum { WORKERS = 8, ROUNDS = 100000 };
static pthread_barrier_t barrier;
typedef void hop_t(unsigned r, int depth);
static hop_t *hops[8];
#define HOP(n)                                                                                 \
    HS_SITE static void hop##n(unsigned r, int depth)                                          \
    {                                                                                          \
        if (depth == 0) {                                                                      \
            void *p = malloc(16 + (r & 63));                                                   \
            hs_escape(p);                                                                      \
            free(p);                                                                           \
            return;                                                                            \
        }                                                                                      \
        hops[(r >> 4) & 7](r * 1103515245u + 12345u, depth - 1);                               \
        hs_escape(&r);                                                                         \
    }
HOP(0) HOP(1) HOP(2) HOP(3) HOP(4) HOP(5) HOP(6) HOP(7)

static void *worker(void *arg)
{
    unsigned r = (unsigned)(uintptr_t)arg * 7919u;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < ROUNDS; i++) {
        r = r * 1664525u + 1013904223u;
        hops[r & 7](r, 5);
    }
    return NULL;
}

static struct sock_fprog two_prog;

/* each of two threads installs the filter with TSYNC, at once */
static void *installer(void *arg)
{
    pthread_barrier_wait(&barrier);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &two_prog) != 0)
        hs_fail("seccomp (two)");
    return arg;
}

static void start(pthread_t *th, int n, void *(*fn)(void *))
{
    if (pthread_barrier_init(&barrier, NULL, (unsigned)n + (fn == worker)) != 0)
        hs_fail("barrier");
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, fn, (void *)(uintptr_t)(i + 1)) != 0)
            hs_fail("pthread_create");
}

static void join(pthread_t *th, int n)
{
    for (int i = 0; i < n; i++)
        if (pthread_join(th[i], NULL) != 0)
            hs_fail("pthread_join");
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
        hs_fail("usage: hs_seccomp kill|errno|syscall|tsync|listener|allowlist|fork|forkpid|"
                "yield|two|exec|other|refused");
    int tsync = !strcmp(mode, "tsync"), listener = !strcmp(mode, "listener");
    int yield = !strcmp(mode, "yield"), two = !strcmp(mode, "two");
    hop_t *all[8] = {hop0, hop1, hop2, hop3, hop4, hop5, hop6, hop7};
    memcpy(hops, all, sizeof hops);
    pthread_t th[WORKERS];

    before_site();
    if (yield)
        start(th, WORKERS, worker);
    if (two) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            hs_fail("no_new_privs");
        two_prog = prog;
        start(th, 2, installer);
        join(th, 2);
        after_site();
        hs_puts(1, "filtered\n");
        exit(0);
    }
    if (tsync && (pthread_create(&th[0], NULL, idle, NULL) != 0 || pthread_join(th[0], NULL) != 0))
        hs_fail("pthread");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        hs_fail("no_new_privs");
    unsigned flags = tsync || yield ? SECCOMP_FILTER_FLAG_TSYNC
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
        const char *preload = getenv("LD_PRELOAD");
        hs_puts(1, preload && strstr(preload, "libheapscope") ? "preload kept\n"
                                                             : "preload dropped\n");
    } else if (rc != 0) {
        hs_fail("seccomp");
    }
    if (!strcmp(mode, "fork") || !strcmp(mode, "forkpid"))
        fork_child();
    else
        after_site();
    if (!strcmp(mode, "exec")) {
        if (argc < 3)
            hs_fail("usage: hs_seccomp exec PROG [ARGS...]");
        hs_puts(1, "filtered\n");
        execv(argv[2], argv + 2);
        hs_fail("execv");
    }
    if (yield) {
        pthread_barrier_wait(&barrier);
        join(th, WORKERS);
    }
    if (tsync) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    hs_puts(1, rc == 0 ? "filtered\n" : "refused EINVAL\n");
    exit(0);
}
