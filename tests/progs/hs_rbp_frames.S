/* hs_rbp_frames.S - frames whose saved rbp the DWARF unwinder reads but
 * needs or does not need, written in assembly so that the layout is
 * exact (a C compiler decides for itself where rbp holds data).  Called
 * from hs_rbp.c, which lists the allocations.
 *
 * rbp_loop(n, out): out[i] = rbp_leaf() for i < n, with i kept in rbp, as
 * code built without frame pointers keeps data there.  rbp_leaf saves rbp
 * (so its frame holds i) and calls malloc(24).  rbp_loop's CFA is
 * rsp-based and it restores rbp from its own frame: no walk uses the i
 * rbp_leaf saved, so the stack of every call is the same.
 *
 * rbp_via_a(mid) and rbp_via_b(mid): rbp_framed(pad, mid), a frame with
 * a frame pointer (CFA = rbp + 16) and pad bytes of locals, calls
 * rbp_pass (mid 0) or rbp_pass_mid (mid 1), which leave rbp alone.
 * rbp_pass calls malloc(24): the walk uses the rbp malloc's hook saved.
 * rbp_pass_mid calls rbp_mid, which saves rbx and then rbp (so the saved
 * rbp is not next to the return address) and calls malloc(24): the walk
 * uses the rbp rbp_mid saved, which rbp_pass_mid passed on.  Or (mid 2)
 * rbp_std, a frame with a frame pointer, which saves rbp_framed's rbp
 * next to its return address and calls malloc(24): the walk uses that
 * saved rbp for rbp_framed's CFA, and the check of the pair must compare
 * it.  via_a's
 * frame is 32 bytes
 * bigger than via_b's and it asks rbp_framed for 32 bytes less, so
 * rbp_pass's frame, and malloc's, lie at the same address under either:
 * the two stacks differ only in rbp (rbp_framed's frame), which the walk
 * of rbp_pass's caller uses, so it must be checked.  And before its call
 * via_b writes, where rbp_framed's frame is under via_a (in rbp_framed's
 * locals under via_b), the two words found there under via_a: the
 * caller's rbp and the return address into via_a.  So every word a walk
 * under via_a read, from rbp_pass up, holds the same under via_b: only
 * rbp itself tells the stacks apart. */
        .text

/* the usual prologue of a frame with a frame pointer: rbp saved next to
 * the return address, then the CFA taken from rbp */
        .macro FRAME_POINTER_PROLOGUE
        pushq %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq %rsp, %rbp
        .cfi_def_cfa_register %rbp
        .endm

/* malloc(24) from a frame whose rsp is 8 bytes off 16: padded around the
 * call, so that malloc starts with the stack aligned */
        .macro MALLOC24_PADDED
        subq $8, %rsp
        .cfi_adjust_cfa_offset 8
        movl $24, %edi
        call malloc@PLT
        addq $8, %rsp
        .cfi_adjust_cfa_offset -8
        .endm

        .globl rbp_leaf
        .type rbp_leaf, @function
rbp_leaf:
        .cfi_startproc
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        movl $24, %edi
        call malloc@PLT
        popq %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbp
        ret
        .cfi_endproc
        .size rbp_leaf, .-rbp_leaf

        .globl rbp_loop
        .type rbp_loop, @function
rbp_loop:
        .cfi_startproc
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        pushq %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbx, 0
        pushq %r12
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r12, 0
        movq %rdi, %rbx
        movq %rsi, %r12
        xorl %ebp, %ebp
1:      cmpq %rbx, %rbp
        jge 2f
        call rbp_leaf
        movq %rax, (%r12,%rbp,8)
        incq %rbp
        jmp 1b
2:      popq %r12
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r12
        popq %rbx
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbx
        popq %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbp
        ret
        .cfi_endproc
        .size rbp_loop, .-rbp_loop

        .globl rbp_mid
        .type rbp_mid, @function
rbp_mid:
        .cfi_startproc
        pushq %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbx, 0
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        MALLOC24_PADDED
        popq %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbp
        popq %rbx
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbx
        ret
        .cfi_endproc
        .size rbp_mid, .-rbp_mid

        .globl rbp_pass_mid
        .type rbp_pass_mid, @function
rbp_pass_mid:
        .cfi_startproc
        subq $8, %rsp
        .cfi_adjust_cfa_offset 8
        call rbp_mid
        addq $8, %rsp
        .cfi_adjust_cfa_offset -8
        ret
        .cfi_endproc
        .size rbp_pass_mid, .-rbp_pass_mid

        .globl rbp_pass
        .type rbp_pass, @function
rbp_pass:
        .cfi_startproc
        MALLOC24_PADDED
        ret
        .cfi_endproc
        .size rbp_pass, .-rbp_pass

/* a frame with a frame pointer: it saves rbp_framed's rbp next to its
 * return address, and its CFA is rbp-based too */
        .globl rbp_std
        .type rbp_std, @function
rbp_std:
        .cfi_startproc
        FRAME_POINTER_PROLOGUE
        movl $24, %edi
        call malloc@PLT
        popq %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size rbp_std, .-rbp_std

        .globl rbp_framed
        .type rbp_framed, @function
rbp_framed:
        .cfi_startproc
        FRAME_POINTER_PROLOGUE
        subq %rdi, %rsp
        cmpq $1, %rsi
        je 1f
        ja 3f
        call rbp_pass
        jmp 2f
1:      call rbp_pass_mid
        jmp 2f
3:      call rbp_std
2:      leave
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size rbp_framed, .-rbp_framed

        .globl rbp_via_a
        .type rbp_via_a, @function
rbp_via_a:
        .cfi_startproc
        subq $40, %rsp
        .cfi_adjust_cfa_offset 40
        movq %rdi, %rsi
        movl $16, %edi
        call rbp_framed
.Lafter_framed_a:
        addq $40, %rsp
        .cfi_adjust_cfa_offset -40
        ret
        .cfi_endproc
        .size rbp_via_a, .-rbp_via_a

        .globl rbp_via_b
        .type rbp_via_b, @function
rbp_via_b:
        .cfi_startproc
        subq $8, %rsp
        .cfi_adjust_cfa_offset 8
        /* rbp_framed's frame under via_a is at 40 and 48 bytes below rsp
         * here; below rsp, above the two words the call writes */
        movq %rbp, -48(%rsp)
        leaq .Lafter_framed_a(%rip), %rax
        movq %rax, -40(%rsp)
        movq %rdi, %rsi
        movl $48, %edi
        call rbp_framed
        addq $8, %rsp
        .cfi_adjust_cfa_offset -8
        ret
        .cfi_endproc
        .size rbp_via_b, .-rbp_via_b

        .section .note.GNU-stack, "", @progbits
