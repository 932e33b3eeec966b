/* hs_stackhole.c - a thread whose stack lies just below the main thread's,
 * within the main stack's limit, and a frame pointer into the hole between
 * them.
 *
 * main maps a 1 MB stack 6 MB below the top of its own stack (inside the 8
 * MB a stack limit keeps for the main stack's growth) and runs a thread on
 * it.  The thread calls malloc from hole_call, which, like code built
 * without frame pointers, keeps a data word in rbp: an address 256 KB above
 * the thread's stack, which nothing maps and the main stack cannot grow
 * into (the kernel keeps a 1 MB gap below it).  A collector that took the
 * main stack's bounds for this thread would read there directly and die
 * of SIGSEGV; the thread's own bounds put it
 * outside, so the frame-pointer walk reads it as a foreign stack's word,
 * fails, and ends the stack there.
 *
 * Allocations under hole_call: 4 of 24 bytes, freed.  Prints "hole done",
 * or "hole skipped" (exit 0) when the address it wants is taken. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "hsprog.h"

extern void *__libc_stack_end;

/* hole_call(rbp, n): malloc(n) with rbp = rbp, from a frame with no frame
 * pointer of its own. */
void *hole_call(uintptr_t rbp, size_t n);
__asm__(".text\n"
        ".globl hole_call\n"
        ".type hole_call, @function\n"
        "hole_call:\n"
        "  push %rbp\n"
        "  push %rbx\n"
        "  sub $8, %rsp\n"
        "  mov %rdi, %rbp\n"
        "  mov %rsi, %rdi\n"
        "  call malloc@PLT\n"
        "  add $8, %rsp\n"
        "  pop %rbx\n"
        "  pop %rbp\n"
        "  ret\n"
        ".size hole_call, .-hole_call\n");

#define STACK_BYTES ((size_t)1 << 20)

static uintptr_t hole;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++) {
        void *p = hole_call(hole, 24);
        hs_escape(p);
        free(p);
    }
    return NULL;
}

int main(void)
{
    uintptr_t top = ((uintptr_t)__libc_stack_end | 4095) + 1;
    uintptr_t want = (top - ((uintptr_t)6 << 20)) & ~(uintptr_t)0xffff;
    void *stack = mmap((void *)want, STACK_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (stack == MAP_FAILED || (uintptr_t)stack != want) {
        hs_puts(1, "hole skipped\n");
        return 0;
    }
    hole = want + STACK_BYTES + ((uintptr_t)256 << 10);
    pthread_attr_t attr;
    pthread_t tid;
    if (pthread_attr_init(&attr) != 0 || pthread_attr_setstack(&attr, stack, STACK_BYTES) != 0 ||
        pthread_create(&tid, &attr, worker, NULL) != 0)
        hs_fail("pthread_create");
    pthread_join(tid, NULL);
    hs_puts(1, "hole done\n");
    return 0;
}
