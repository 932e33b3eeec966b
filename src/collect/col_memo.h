/* col_memo.h - the memos of the caching unwinders: each thread's previous
 * walk, frame by frame, with the checks (col_chk.h) that say whether a new
 * stack repeats it from some frame outwards (the walks themselves), and
 * from which the recorder's cache of recent stacks copies whole stacks
 * (col_unwind_cache). */
#ifndef COL_MEMO_H
#define COL_MEMO_H

#include <stdint.h>

#include "collect/col_internal.h"

/* ---- the last guessed stack (col_unwind_fp_is, col_dwarf_is) ---------- */

/* The return addresses and nodes of the last stack the recorder guessed,
 * by depth: ip[1] the outermost frame, ip[depth] the innermost.  And, for
 * depths 1..valid, where the last walk that found these nodes read each
 * frame: the frame's address (fp) and the two words there, the caller's
 * frame pointer and the return address (want: fp[d - 1] and ip[d], but at
 * depth 1 whatever the outermost frame held), and past depth 1 the frame
 * whose return address ended the walk (end_at, 0 if the walk ended at
 * depth 1's saved frame pointer) with that address and the modules epoch
 * that said it is not code.  A walk of the thread's own stack (whose
 * bound, stack_hi, does not change) that reaches fp[d] at depth d reads
 * the rest of the stack the same way if those words still hold and the
 * modules epoch is the same: it checks them with independent loads
 * instead of following the chain.  Kept in the memo's mapping,
 * max_depth + 1 of each. */
typedef struct col_guess {
    int depth;
    int valid;
    uintptr_t *ip;
    uint32_t *node;
    uintptr_t *fp;
    col_v2_t *want;
    uintptr_t end_at, end_ra;
    uint32_t end_epoch;
} col_guess_t;

/* Make gs hold node g's frames (depth of them, g not cut): only those
 * below the point where g joins the last guess are looked up in the call
 * tree, so the walk that compares a stack with them reads an array.  The
 * frames kept keep their addresses and words; the others lose them. */
UT_INLINE void col_guess_set(col_guess_t *gs, uint32_t g, int depth)
{
    int d = depth;
    for (; d > 0; d--) {
        if (d <= gs->depth && gs->node[d] == g)
            break; /* from here out, the last guess's frames */
        gs->node[d] = g;
        gs->ip[d] = col_nodes[g].ip;
        g = col_nodes[g].parent;
    }
    gs->depth = depth;
    if (gs->valid > d)
        gs->valid = d;
}

/* The depth of node g, if a walk can be compared with it: g is a node,
 * not cut by the depth cap (the walk knows the cap), within max frames;
 * else 0. */
UT_INLINE int col_guess_depth(uint32_t g, int max)
{
    if (g == 0 || g >= COL_NODE_MAX)
        return 0;
    const col_node_t *n = &col_nodes[g];
    return (n->flags & COL_NODE_F_TRUNC) || n->depth > max ? 0 : n->depth;
}

/* ---- the frame-pointer unwinder's memo (col_unwind_fp.c) --------------- */

enum { COL_FP_END_RA, COL_FP_END_NEXT, COL_FP_END_TRUNC };

typedef struct col_fp_visit {
    uintptr_t fp;  /* the frame */
    uint32_t node; /* stack from this frame out; a stopping visit: the base node */
    uint32_t unused;
} col_fp_visit_t;

/* w[0] is the outermost visit, w[m - 1] the innermost; chk[k] is what the
 * walk read at w[k]: the words (next, ra), or only ra at w[0] (where the
 * walk stopped).  When the walk stopped at a return address that is not
 * code, or at the depth cap, w[0] is that stopping visit and not a frame
 * (`stop`): its node is the base of the frames below it, 0 (the root) or
 * COL_NODE_TRUNC.  A walk that stopped at a `next` leading nowhere is
 * checked for that again (below frameless code rbp holds whatever the
 * program keeps there). */
typedef struct col_fp_memo {
    uint32_t epoch; /* col_modules_epoch() of the walk: code ranges */
    int m;          /* visits; 0: no memo */
    int cap;        /* visits the arrays hold: a page's worth, or max_depth + 1 */
    int stop;       /* w[0] is a stopping visit, not a frame */
    int end;        /* COL_FP_END_* */
    uintptr_t code_lo, code_hi; /* the last code range the walk found */
    /* col_unwind_fp_is: the last guessed stack; a return address that is
     * not code in stop_epoch */
    col_guess_t guess;
    uintptr_t stop_ra;
    uint32_t stop_epoch;
    /* The arrays, cap visits each, follow in the same mapping
     * (col_memo_layout).  A thread's memo starts as one page, room for
     * 30 visits, and is mapped again for max_depth + 1
     * visits when a walk needs more (col_unwind_fp.c). */
    col_fp_visit_t *w;
    col_chk_t *chk;
    /* a walk's new visits, innermost first: the frames and the words read
     * there (next; the return addresses in tmp_ip), and the nodes */
    uintptr_t *tmp_fp, *tmp_next, *tmp_ip;
    uint32_t *tmp_node;
} col_fp_memo_t;

extern _Thread_local col_fp_memo_t *col_fp_memo __attribute__((tls_model("initial-exec")));

/* Carving a memo's arrays out of its mapping: *off is where the next array
 * may start (16-byte aligned, for the checks); returns where this one
 * does.  Call with base NULL to size the mapping. */
UT_INLINE void *col_memo_layout(void *base, size_t *off, size_t bytes)
{
    size_t at = (*off + 15) & ~(size_t)15;
    *off = at + bytes;
    return base ? (char *)base + at : NULL;
}

/* Can the walk go from the frame at fp to the one at next?  Everything
 * between our own frame and hi is the thread's stack. */
UT_INLINE int col_fp_next_ok(uintptr_t fp, uintptr_t next, uintptr_t hi)
{
    return next > fp && next <= hi - 2 * sizeof(uintptr_t) && (next & 7) == 0;
}

/* Is fp on a stack whose extent is not known: not the thread's own (a
 * coroutine's, an alternate signal stack), or the thread's own bounds
 * could not be read?  Then nothing says that a word between fp and the
 * top of the thread's stack is mapped: col_unwind_fp_plain reads such a
 * stack's frames through a system call that fails instead of faulting. */
UT_INLINE int col_fp_foreign(const col_thread_t *t, uintptr_t fp)
{
    return t->stack_hi == UINTPTR_MAX || fp < t->stack_lo || fp >= t->stack_hi;
}

/* ---- the DWARF unwinder's memo (col_dwarf.c) ----------------------------- */

/* The previous walk of this thread, frame by frame, outermost first: the
 * state (ip, sp, bp) at each frame and the call-tree node of the stack
 * from that frame out; and, outermost first too, the checks of the stack
 * words each step read: the return address, and rbp when the frame saved
 * it and a frame further out uses it (one 16-byte check when they lie
 * side by side, as in a frame with a frame pointer).  The last frame of a
 * walk that ended at its rule read nothing.
 *
 * rbp only matters to a walk where a rule computes the CFA from it.  In
 * code built without frame pointers rbp is an ordinary register, and the
 * value a frame saved is data: it changes from call to call while the
 * stack stays the same.  So a frame's bp_used says whether the walk from
 * that frame out reads its bp (its rule is rbp-based, or it passes rbp on
 * unsaved to a frame that is), and a bp nothing uses is neither compared
 * when the memo is matched nor checked (col_dwarf.c). */
/* How a walk ended: at a frame whose rule ends the stack (LAST), at a
 * return address of 0 (ZERO), at the depth cap (TRUNC), or at a frame no
 * FDE covers whose rbp is 0 (NOCFI: CFI_RULE_NONE, whose end reads rbp). */
enum { COL_CFI_LAST = 1, COL_CFI_ZERO, COL_CFI_TRUNC, COL_CFI_NOCFI };

typedef struct col_cfi_frame { /* 32 bytes */
    uintptr_t ip, sp, bp;
    uint32_t node;
    uint16_t chk_end; /* the checks of w[0..this] are chk[0, chk_end) */
    uint16_t bp_used; /* the walk from here reads bp: 0xffff, else 0 */
} col_cfi_frame_t;

/* w's bp_used as a mask of a word's bits: ~0 if the walk from w reads
 * its bp, else 0. */
UT_INLINE uintptr_t col_cfi_bp_mask(const col_cfi_frame_t *w)
{
    return (uintptr_t)(intptr_t)(int16_t)w->bp_used;
}

typedef struct col_cfi_new { /* a frame of the current walk (its ip: tmp_ip) */
    uintptr_t sp, bp;
    uintptr_t bp_at;         /* where its step read rbp; 0: not read, 1: no step */
    uintptr_t cfa_rbp;       /* its rule's CFA is rbp-based, or (no step) the end
                              * read rbp (col_dwarf.c's rule_ends): ~0, else 0 */
} col_cfi_new_t;

/* The last stack the recorder guessed, as the DWARF walk compared with it
 * found it (col_dwarf_is): the frames by depth (g: ip[1] the outermost,
 * ip[depth] the innermost) and, for depths 1..g.valid, the state each
 * frame was found in and the words its step read, as checks.  A walk that
 * reaches depth d <= g.valid in the same state (sp, and bp if the walk
 * from there out reads it) repeats the rest of that walk if the checks of
 * depths 1..d hold: the same ip has the same rule while no module is
 * unloaded, and each step's result follows from the rule and the words
 * it read.  Kept in the memo's mapping, max + 1 of each. */
typedef struct col_cfi_step { /* 48 bytes */
    uintptr_t sp, bp;  /* the state the frame was found in (its ip: g.ip) */
    uintptr_t ra_at;   /* where its step read the caller's return address; 0: no step (its rule ends the stack) */
    uintptr_t bp_at;   /* where its step read the caller's rbp; 0: not saved */
    uintptr_t cfa_rbp; /* its rule's CFA is rbp-based, or (no step) the end read rbp: ~0, else 0 */
    uintptr_t used;    /* the walk from this state out reads bp: ~0, else 0 */
} col_cfi_step_t;

typedef struct col_cfi_guess {
    col_guess_t g;  /* ip and node by depth, and valid (its fp and want unused) */
    int extra;      /* some depth's chk2 may be a real check */
    col_cfi_step_t *st;
    /* chk[d]: the words depth d's step read (a check that always holds
     * for a step not taken); chk2[d]: the caller's rbp where the frame
     * saved it apart from the return address and the caller uses it, else
     * a check that always holds */
    col_chk_t *chk, *chk2;
} col_cfi_guess_t;

typedef struct col_cfi_memo {
    uint32_t epoch; /* col_modules_epoch() of the rules the walk used */
    int m;        /* frames in w; 0: no memo */
    int end;      /* how the walk ended after w[0]: COL_CFI_* */
    int max;      /* frames the arrays hold: the depth cap */
    /* The arrays (max frames; twice as many checks) follow in the same
     * mapping (col_memo_layout). */
    col_cfi_frame_t *w;
    col_chk_t *chk;
    col_cfi_new_t *tmp;  /* a walk's new frames, innermost first, */
    uintptr_t *tmp_ip;   /* their return addresses */
    uint32_t *tmp_node;  /* and nodes */
    col_cfi_guess_t guess;
} col_cfi_memo_t;

extern _Thread_local col_cfi_memo_t *col_cfi_memo __attribute__((tls_model("initial-exec")));

#endif
