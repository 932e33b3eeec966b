/* hs_nocfi_call.S - a frame that no FDE covers, for hs_nocfi.c.
 *
 * nocfi_call(fn, bp): sets rbp to bp and calls fn, then restores rbp.
 * Written without CFI directives, so that .eh_frame has no FDE for it, as
 * for the dynamic loader's start code (_dl_start_user), which runs the
 * libraries' constructors.  libunwind ends a stack at such a frame when
 * its rbp is 0, and otherwise takes rbp for a frame pointer.
 *
 * nocfi_call2 is the same at another address: a return address that
 * libunwind has not seen yet (hs_closefds). */
        .text
        .globl  nocfi_call
        .type   nocfi_call, @function
nocfi_call:
        push    %rbp            /* the stack is 16-byte aligned again */
        mov     %rsi, %rbp
        call    *%rdi
        pop     %rbp
        ret
        .size   nocfi_call, .-nocfi_call

        .globl  nocfi_call2
        .type   nocfi_call2, @function
nocfi_call2:
        push    %rbp
        mov     %rsi, %rbp
        call    *%rdi
        pop     %rbp
        ret
        .size   nocfi_call2, .-nocfi_call2

        .section .note.GNU-stack,"",@progbits
