/* hs_seccomp.h - a seccomp filter for the test programs that check the
 * collector under one (hs_coroutine.c, hs_convoy.c): it kills the process
 * at the system calls given, as systemd's SystemCallFilter= does, and
 * allows everything else. */
#ifndef HS_SECCOMP_H
#define HS_SECCOMP_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HS_SECCOMP_MAX 8

/* Kill the process at any of the n (at most HS_SECCOMP_MAX) system calls
 * nrs[]; installed through prctl(PR_SET_SECCOMP), or with via_syscall
 * through syscall(SYS_seccomp), as libseccomp may.  0 on success. */
static inline int hs_seccomp_kill(const int *nrs, int n, int via_syscall)
{
    struct sock_filter code[4 + HS_SECCOMP_MAX + 2];
    int k = 0;
    if (n < 1 || n > HS_SECCOMP_MAX)
        return -1;
    code[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                             offsetof(struct seccomp_data, arch));
    code[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    code[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                             offsetof(struct seccomp_data, nr));
    /* call i jumps over the calls after it and the ALLOW, to the KILL */
    for (int i = 0; i < n; i++)
        code[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i],
                                                 (unsigned char)(n - i), 0);
    code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    struct sock_fprog prog = {.len = (unsigned short)k, .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    if (via_syscall)
        return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ? 0 : -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : -1;
}

#endif
