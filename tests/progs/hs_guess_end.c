/* hs_guess_end.c - two stacks with the same frames where they overlap,
 * one ending where a DWARF walk reads a return address of 0 and the other
 * going on to main, allocated alternately after a third: the recorder's
 * guess of the next stack (col_node_next) is always the other of the two,
 * and a DWARF walk compared with it (col_dwarf_is) must see where each
 * ends.
 *
 * end_base (assembly below) calls its argument; with `hide` set it first
 * writes 0 over its own return address (and puts it back before it
 * returns), so that a DWARF walk ends there: stack A is [end_leaf,
 * end_base], stack B [end_leaf, end_base, end_shift, main, ...].  (A
 * frame-pointer walk sees neither: end_base keeps its caller's rbp, so
 * the walk goes from end_leaf's frame to end_shift's.)
 *
 * 2,000 rounds of end_other (malloc(8), free) then A or B in turn
 * (end_leaf: malloc(40), free): 4,000 allocations, 4,000 frees, 96,000
 * bytes; end_leaf 2,000 of them (80,000 bytes), 1,000 on each stack in
 * dwarf mode.
 *
 * Valgrind: total heap usage 4,000 allocs, 4,000 frees, 96,000 bytes. */
#include <alloca.h>
#include <stdlib.h>

#include "hsprog.h"

/* end_base(fn, hide): call fn, with the return address hidden or not. */
void end_base(void (*fn)(void), long hide);
__asm__(".text\n"
        ".globl end_base\n"
        ".type end_base, @function\n"
        "end_base:\n"
        "    .cfi_startproc\n"
        "    push %rbx\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbx, -16\n"
        "    mov 8(%rsp), %rbx\n" /* the return address */
        "    test %rsi, %rsi\n"
        "    jz 1f\n"
        "    movq $0, 8(%rsp)\n"
        "1:  call *%rdi\n"
        "    mov %rbx, 8(%rsp)\n"
        "    pop %rbx\n"
        "    .cfi_def_cfa_offset 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size end_base, .-end_base\n");

HS_SITE void end_leaf(void)
{
    void *p = malloc(40);
    hs_escape(p);
    free(p);
}

HS_SITE static void end_other(void)
{
    void *p = malloc(8);
    hs_escape(p);
    free(p);
}

/* end_base, from a frame 16 * n bytes deeper: every round's stacks lie
 * somewhere else, so that neither the recorder's cache of recent stacks
 * (keyed by the hook's frame) nor the words of an earlier walk at the same
 * place answer for them, and the walk compared with the guess goes to
 * the end. */
HS_SITE static void end_shift(int n, long hide)
{
    volatile char *pad = alloca(16 * (size_t)n + 16);
    pad[0] = 0;
    end_base(end_leaf, hide);
    hs_escape((const void *)pad);
}

int main(void)
{
    for (int i = 0; i < 2000; i++) {
        end_other();
        end_shift(i, i & 1);
    }
    return 0;
}
