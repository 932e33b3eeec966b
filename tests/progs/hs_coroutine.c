/* hs_coroutine.c - allocations on a coroutine's stack (ucontext, on an
 * mmap'd stack below the thread's own), from a function that leaves a
 * frame pointer leading to an unreadable page: the stack is not the
 * thread's, so nothing tells the frame-pointer walk how far up it is
 * mapped.  A walk that follows the chain with plain loads faults there.
 *
 * The stack is the low 64 KiB of a 128 KiB mapping whose high 64 KiB are
 * PROT_NONE.  In the coroutine, coro_body calls coro_stray(p, 24), which
 * sets rbp to an address in the PROT_NONE half (above the coroutine's
 * frames, below the thread's stack) and calls malloc; coro_body frees the
 * block; then coro_site allocates 40 bytes with a sound frame chain and
 * frees it; 100 times.  Back on the thread's stack, main_site allocates
 * and frees 56 bytes.
 *
 * Allocations: 201, 201 frees, 6,456 bytes (100 x 24 + 100 x 40 + 56).
 *
 * coro_body has 6 KiB of locals, so that a walk from coro_site reads more
 * than one page of the coroutine's stack.
 *
 * With an argument, `prctl` or `syscall`, the program first installs a
 * seccomp filter that kills the process at any process_vm_readv(2) (as
 * systemd's SystemCallFilter= does to the @debug set), through
 * prctl(PR_SET_SECCOMP) or syscall(SYS_seccomp), as libseccomp may; with
 * `prctl-exec` it installs it and runs itself again (argument `inherited`),
 * under the inherited filter.  The program never makes that call. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "hs_seccomp.h"
#include "hsprog.h"

#define STACK (64 * 1024)

/* coro_stray(rbp, size): malloc(size) with rbp = rbp, keeping the
 * caller's. */
void *coro_stray(uintptr_t rbp, size_t size);
__asm__(".text\n"
        ".globl coro_stray\n"
        ".type coro_stray, @function\n"
        "coro_stray:\n"
        "    .cfi_startproc\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rdi, %rbp\n"
        "    mov %rsi, %rdi\n"
        "    call malloc\n"
        "    pop %rbp\n"
        "    .cfi_def_cfa_offset 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size coro_stray, .-coro_stray\n");

static ucontext_t main_ctx, coro_ctx;
static uintptr_t stray;

HS_SITE void coro_site(void)
{
    void *p = malloc(40);
    hs_escape(p);
    free(p);
}

HS_SITE void coro_body(void)
{
    /* 6 KiB of locals: coro_site's frame is a page or more below this
     * one, so a walk from it must read another page of the stack */
    volatile char pad[6 * 1024];
    pad[0] = 1;
    hs_escape((void *)pad);
    for (int i = 0; i < 100; i++) {
        void *p = coro_stray(stray, 24);
        hs_escape(p);
        free(p);
        coro_site();
    }
}

HS_SITE void main_site(void)
{
    void *p = malloc(56);
    hs_escape(p);
    free(p);
}

/* Kill the process at process_vm_readv, allow everything else; through
 * prctl or the seccomp system call.  0 on success. */
static int forbid_process_vm_readv(const char *how)
{
    static const int nrs[] = {SYS_process_vm_readv};
    if (strcmp(how, "prctl") && strcmp(how, "syscall"))
        return -1;
    return hs_seccomp_kill(nrs, 1, !strcmp(how, "syscall"));
}

int main(int argc, char **argv)
{
    /* prctl-exec: the filter, then this program again, which inherits it */
    int reexec = argc > 1 && !strcmp(argv[1], "prctl-exec");
    if (argc > 1 && strcmp(argv[1], "inherited") &&
        forbid_process_vm_readv(reexec ? "prctl" : argv[1]) != 0) {
        hs_puts(2, "hs_coroutine: cannot install the seccomp filter\n");
        return 3;
    }
    if (reexec) {
        char *args[] = {argv[0], "inherited", NULL};
        execv(argv[0], args);
        return 4;
    }
    char *map = mmap(NULL, 2 * STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + STACK, STACK, PROT_NONE) != 0)
        return 2;
    stray = (uintptr_t)(map + STACK + 256);
    if (getcontext(&coro_ctx) != 0)
        return 2;
    coro_ctx.uc_stack.ss_sp = map;
    coro_ctx.uc_stack.ss_size = STACK;
    coro_ctx.uc_link = &main_ctx;
    makecontext(&coro_ctx, coro_body, 0);
    if (swapcontext(&main_ctx, &coro_ctx) != 0)
        return 2;
    main_site();
    hs_puts(1, "coroutine done\n");
    return 0;
}
