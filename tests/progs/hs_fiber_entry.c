/* hs_fiber_entry.c - one function, fiber_entry, first run as a fiber on a
 * stack of its own (an array in a frame of main's stack) below a
 * trampoline that ends the stack for unwinders (.cfi_undefined rip, as
 * clone()'s child and fiber libraries do), then called the plain way from
 * fiber_plain, at the very same stack address.  The two stacks of
 * fiber_leaf's allocations differ only in the return address of
 * fiber_entry's frame: into fiber_tramp, or into fiber_plain.  A DWARF
 * walk ends at fiber_tramp's rule, so a cache of recent stacks that left
 * the words of the frame one in from the outermost unchecked would give
 * the second stack the first's (heapscope leaves them out only for the C
 * library's thread entries: col_unwind_cache).
 *
 * fiber_leaf: 4 x malloc(24) under the fiber, 4 under fiber_plain, all
 * freed at the end: 8 allocations, 8 frees, 192 bytes.  Exit status 2 if
 * fiber_plain's frame could not be placed where the fiber's was. */
#include <alloca.h>
#include <stdint.h>
#include <stdlib.h>

#include "hsprog.h"

/* fiber_tramp(fn, top): call fn on the stack that ends at top. */
void fiber_tramp(void (*fn)(void), void *top);
__asm__(".text\n"
        ".globl fiber_tramp\n"
        ".type fiber_tramp, @function\n"
        "fiber_tramp:\n"
        "  .cfi_startproc\n"
        "  push %rbp\n"
        "  .cfi_def_cfa_offset 16\n"
        "  .cfi_offset rbp, -16\n"
        "  mov %rsp, %rbp\n"
        "  .cfi_def_cfa_register rbp\n"
        "  mov %rsi, %rsp\n"
        "  .cfi_undefined rip\n"
        "  call *%rdi\n"
        "  mov %rbp, %rsp\n"
        "  pop %rbp\n"
        "  ret\n"
        "  .cfi_endproc\n"
        "  .size fiber_tramp, .-fiber_tramp\n");

static void *blocks[8];
static int nblocks;
static volatile int allocate;
static volatile uintptr_t entry_cfa; /* fiber_entry's CFA, last call */
static uintptr_t fiber_top;

static HS_SITE void fiber_leaf(void)
{
    for (int i = 0; i < 4; i++)
        blocks[nblocks++] = malloc(24);
    hs_escape(blocks);
}

static HS_SITE void fiber_entry(void)
{
    entry_cfa = (uintptr_t)__builtin_frame_address(0) + 16;
    if (allocate)
        fiber_leaf();
}

static HS_SITE void fiber_run(void)
{
    char stack[16384];
    fiber_top = ((uintptr_t)stack + sizeof stack - 64) & ~(uintptr_t)15;
    allocate = 1;
    fiber_tramp(fiber_entry, (void *)fiber_top);
    hs_escape(stack);
}

/* fiber_entry from here, with pad bytes of this frame below it. */
static HS_SITE void fiber_plain(size_t pad)
{
    volatile char *p = alloca(pad);
    p[0] = 0;
    fiber_entry();
    hs_escape((const void *)(uintptr_t)p);
}

int main(void)
{
    fiber_run();
    allocate = 0;
    entry_cfa = 0;
    size_t pad = 16;
    for (int tries = 0; tries < 20 && entry_cfa != fiber_top; tries++) {
        fiber_plain(pad);
        pad += entry_cfa - fiber_top;
    }
    if (entry_cfa != fiber_top) {
        hs_puts(2, "hs_fiber_entry: cannot place fiber_plain's frame at the fiber's\n");
        return 2;
    }
    allocate = 1;
    fiber_plain(pad);
    for (int i = 0; i < nblocks; i++)
        free(blocks[i]);
    return 0;
}
