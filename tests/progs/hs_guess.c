/* hs_guess.c - two stacks with the same return addresses where they
 * overlap, one a frame longer than the other, allocated alternately after
 * a third: the recorder's guess of the next stack (col_node_next) is always
 * the other of the two, and a frame-pointer walk compared with it must see
 * where each stack ends.
 *
 * guess_base (assembly below) calls its argument with rbp set to a value
 * of its choosing, which the callee saves as its caller's frame pointer:
 *  - stack A: rbp = 1, no frame pointer, so the frame-pointer walk ends
 *    after [guess_leaf, guess_base];
 *  - stack B: rbp = the address of a fake frame {0, guess_marker + 1}, so
 *    the walk goes one frame further, to guess_marker, and ends there.
 * (A DWARF walk sees through both: guess_base's CFA is rsp-based.)
 *
 * 2,000 rounds of guess_other (malloc(8), free) then A or B in turn
 * (guess_leaf: malloc(40), free): 4,000 allocations, 4,000 frees, 96,000
 * bytes; guess_leaf 2,000 of them (80,000 bytes), 1,000 on each stack in
 * fp mode.
 *
 * Valgrind: total heap usage 4,000 allocs, 4,000 frees, 96,000 bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "hsprog.h"

/* guess_base(rbp, fn): call fn with rbp = rbp, keeping the caller's. */
void guess_base(uintptr_t rbp, void (*fn)(void));
__asm__(".text\n"
        ".globl guess_base\n"
        ".type guess_base, @function\n"
        "guess_base:\n"
        "    .cfi_startproc\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rdi, %rbp\n"
        "    call *%rsi\n"
        "    pop %rbp\n"
        "    .cfi_def_cfa_offset 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size guess_base, .-guess_base\n");

HS_SITE void guess_leaf(void)
{
    void *p = malloc(40);
    hs_escape(p);
    free(p);
}

/* Its address is the fake frame's return address: code, never called. */
HS_SITE int guess_marker(void)
{
    return 1;
}

HS_SITE static void guess_other(void)
{
    void *p = malloc(8);
    hs_escape(p);
    free(p);
}

/* Stack B, from a frame of its own (another hook frame than A's). */
HS_SITE static void guess_via(uintptr_t fake)
{
    volatile char pad[256];
    pad[0] = 0;
    guess_base(fake, guess_leaf);
    hs_escape((const void *)pad);
}

int main(void)
{
    /* the fake frame: saved rbp 0 (the walk ends after it), and a return
     * address inside guess_marker */
    volatile uintptr_t fake[2] __attribute__((aligned(16)));
    fake[0] = 0;
    fake[1] = (uintptr_t)guess_marker + 1;
    for (int i = 0; i < 2000; i++) {
        guess_other();
        if (i & 1)
            guess_via((uintptr_t)fake); /* B */
        else
            guess_base(1, guess_leaf); /* A */
    }
    hs_escape((const void *)fake);
    return 0;
}
