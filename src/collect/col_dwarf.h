/* col_dwarf.h - heapscope's DWARF call-frame unwinder for x86-64.
 *
 * Walks the stack with the rules of .eh_frame (found through
 * .eh_frame_hdr), so it is right through code built without frame
 * pointers, and caches one rule per return address per thread, so a step
 * is a cache probe and two loads.  Frames whose rules it cannot express
 * (CFA expressions, signal frames, a register other than rsp/rbp as CFA
 * base) make it return COL_UNWIND_FAIL: the caller then uses libunwind for
 * that call. */
#ifndef COL_DWARF_H
#define COL_DWARF_H

#include <stdint.h>

struct col_thread;

int col_dwarf_init(void);
void col_dwarf_modules_changed(void);
void col_dwarf_thread_exit(struct col_thread *t);   /* this thread's cache to t */
void col_dwarf_thread_attach(struct col_thread *t); /* t's cache to this thread */
void col_dwarf_report(void);                         /* HEAPSCOPE_STATS, at exit */

/* The walk itself, col_dwarf_stack, is declared in col_internal.h (the
 * dispatch in col_unwind is inline).  It returns the call-tree node of the
 * stack above `start` (a frame of heapscope's own, with a frame pointer)
 * after skipping leading frames in [skip_lo, skip_hi), reading only
 * [stack_lo, stack_hi); or COL_UNWIND_FAIL if a frame needs libunwind.  It
 * keeps a memo of the thread's previous walk (col_memo.h), outermost frame
 * first with each frame's node, so a stack whose outer part is the
 * previous one's is walked and looked up only for its new inner frames. */

/* ---- internal: the rule of one return address (col_dwarf_rule.c) --------- */

/* NONE: the module has CFI, but no FDE covers the address (hand-written
 * code such as the dynamic loader's _dl_start_user, which runs the
 * libraries' constructors).  libunwind ends the stack at such a frame if
 * its rbp is 0, as the loader's start code leaves it, and walks it by the
 * frame-pointer chain otherwise: the walkers end there too when rbp is 0,
 * and leave the rest to libunwind. */
enum { CFI_RULE_BAD = 0, CFI_RULE_OK = 1, CFI_RULE_LAST = 2, CFI_RULE_NONE = 3 };

typedef struct cfi_rule {   /* 8 bytes: a cache entry is 16 */
    uint8_t kind;       /* CFI_RULE_* ; LAST: return address undefined */
                        /* (the fields below only for OK) */
    uint8_t cfa_rbp : 1;   /* CFA base: 1 rbp, 0 rsp */
    uint8_t rbp_saved : 1; /* rbp restored from CFA + rbp_off */
    int16_t rbp_off;
    int32_t cfa_off;
} cfi_rule_t;

/* Rule for the instruction at pc (a return address - 1) from the module's
 * .eh_frame_hdr at hdr.  Every read stays in [seg_lo, seg_hi), the loaded
 * segment that holds .eh_frame_hdr and .eh_frame.  kind NONE if no FDE
 * covers pc, BAD if the rule cannot be expressed or the data is
 * malformed. */
cfi_rule_t col_dwarf_rule_for(uintptr_t pc, uintptr_t hdr, uintptr_t seg_lo, uintptr_t seg_hi);

#endif
