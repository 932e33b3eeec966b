/* col_memo.h - the check an unwinder's memo makes to know that a walk
 * would repeat itself: the stack words the walk read still hold what they
 * held.
 *
 * Both caching unwinders (col_unwind_fp.c, col_dwarf.c) record, for each
 * step of a walk, the stack words it read (a frame's saved frame pointer
 * and its return address, side by side in the usual frame layout) as one
 * 16-byte check: the address of the two words, the values they held, and
 * a mask of the bits that matter (a lone return address checks only the
 * upper word).  A stack is the memo's from some frame outwards exactly when
 * every check of those frames holds, and checking one is an unaligned
 * 16-byte load, an xor, an and and an or (SSE2, in every x86-64). */
#ifndef COL_MEMO_H
#define COL_MEMO_H

#include <stdint.h>

#include "collect/col_internal.h"

typedef uint64_t col_v2_t __attribute__((vector_size(16)));
typedef uint64_t col_v2u_t __attribute__((vector_size(16), aligned(8))); /* unaligned */

typedef struct col_chk {
    col_v2_t want;        /* the two words the walk read */
    col_v2_t mask;        /* the bits of them that decided the walk */
    const col_v2u_t *at;  /* where they are */
    uint64_t unused;
} col_chk_t;

/* A check of the word at `a` (the two words at a - 8 and a, the lower one
 * ignored), or of the two words at a and a + 8. */
UT_INLINE col_chk_t col_chk_word(uintptr_t a, uint64_t v)
{
    return (col_chk_t){.want = {0, v}, .mask = {0, ~0ull}, .at = (const col_v2u_t *)(a - 8)};
}

UT_INLINE col_chk_t col_chk_pair(uintptr_t a, uint64_t lo, uint64_t hi)
{
    return (col_chk_t){.want = {lo, hi}, .mask = {~0ull, ~0ull}, .at = (const col_v2u_t *)a};
}

/* Do all checks in [c, end) hold? */
UT_INLINE int col_chk_hold(const col_chk_t *c, const col_chk_t *end)
{
    col_v2_t diff = {0, 0};
    for (; c < end; c++)
        diff |= (*c->at ^ c->want) & c->mask;
    return (diff[0] | diff[1]) == 0;
}

/* ---- the frame-pointer unwinder's memo (col_unwind_fp.c) --------------- */

#define COL_FP_VISITS (COL_MAX_DEPTH + 1)
#define COL_FP_UNKNOWN_STACK_SPAN (16u * 1024)
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
    col_chk_t chk[COL_FP_VISITS];
    col_fp_visit_t w[COL_FP_VISITS];
    uint32_t epoch; /* col_modules_epoch() of the walk: code ranges */
    int m;          /* visits; 0: no memo */
    int stop;       /* w[0] is a stopping visit, not a frame */
    int end;        /* COL_FP_END_* */
    uintptr_t code_lo, code_hi; /* the last code range the walk found */
    /* a walk's new visits, innermost first: what the walk read, the
     * return addresses and their nodes */
    col_chk_t tmp_chk[COL_FP_VISITS];
    col_fp_visit_t tmp[COL_FP_VISITS];
    uintptr_t tmp_ip[COL_FP_VISITS];
    uint32_t tmp_node[COL_FP_VISITS];
} col_fp_memo_t;

extern _Thread_local col_fp_memo_t *col_fp_memo __attribute__((tls_model("initial-exec")));

/* Can the walk go from the frame at fp to the one at next?  Everything
 * between our own frame and hi is the thread's stack. */
UT_INLINE int col_fp_next_ok(uintptr_t fp, uintptr_t next, uintptr_t hi)
{
    return next > fp && next <= hi - 2 * sizeof(uintptr_t) && (next & 7) == 0;
}

UT_INLINE uintptr_t col_fp_stack_top(const col_thread_t *t, uintptr_t lo)
{
    return t->stack_hi != UINTPTR_MAX ? t->stack_hi : lo + COL_FP_UNKNOWN_STACK_SPAN;
}

/* Is the stack above frame (the hook's) exactly the memo's walk?  Every
 * word the walk read is unchanged and it would stop the same way. */
UT_INLINE int col_unwind_fp_same(const col_thread_t *t, const void *frame)
{
    const col_fp_memo_t *m = col_fp_memo;
    if (UT_UNLIKELY(m == NULL) || m->m <= m->stop || m->w[m->m - 1].fp != (uintptr_t)frame ||
        m->epoch != col_modules_epoch() || !col_chk_hold(&m->chk[0], &m->chk[m->m]))
        return 0;
    if (UT_LIKELY(m->end != COL_FP_END_NEXT))
        return 1;
    uintptr_t lo = (uintptr_t)__builtin_frame_address(0);
    return !col_fp_next_ok(m->w[0].fp, *(const uintptr_t *)m->w[0].fp, col_fp_stack_top(t, lo));
}

/* ---- the DWARF unwinder's memo (col_dwarf.c) ----------------------------- */

/* The previous walk of this thread, frame by frame, outermost first: the
 * state (ip, sp, bp) at each frame and the call-tree node of the stack
 * from that frame out; and, outermost first too, the checks of the stack
 * words each step read: the return address, and rbp when the frame saved
 * it (one 16-byte check when they lie side by side, as in a frame with a
 * frame pointer).  The last frame of a walk that ended at its rule read
 * nothing. */
#define COL_CFI_MEMO_MAX 256
enum { COL_CFI_LAST = 1, COL_CFI_ZERO, COL_CFI_TRUNC };

typedef struct col_cfi_frame {
    uintptr_t ip, sp, bp;
    uint32_t node;
    uint32_t chk_end; /* the checks of w[0..this] are chk[0, chk_end) */
} col_cfi_frame_t;

typedef struct col_cfi_new { /* a frame of the current walk */
    uintptr_t ip, sp, bp;
    uintptr_t bp_at;         /* where its step read rbp; 0: not read, 1: no step */
} col_cfi_new_t;

typedef struct col_cfi_memo {
    unsigned gen; /* col_dwarf_generation of the rules the walk used */
    int m;        /* frames in w; 0: no memo */
    int end;      /* how the walk ended after w[0]: COL_CFI_* */
    col_cfi_frame_t w[COL_CFI_MEMO_MAX];
    col_chk_t chk[2 * COL_CFI_MEMO_MAX];
    col_cfi_new_t tmp[COL_CFI_MEMO_MAX]; /* a walk's new frames, innermost first, */
    uintptr_t tmp_ip[COL_CFI_MEMO_MAX];  /* their return addresses */
    uint32_t tmp_node[COL_CFI_MEMO_MAX]; /* and nodes */
} col_cfi_memo_t;

extern _Thread_local col_cfi_memo_t *col_cfi_memo __attribute__((tls_model("initial-exec")));
extern unsigned col_dwarf_generation; /* bumped when the module map changes */

/* The very-same-stack case: the hook's caller frame is the previous walk's
 * innermost frame (same sp, return address and rbp; that frame was checked
 * to lie in this thread's stack and is never one of heapscope's own), and
 * every word the walk followed is unchanged, so the walk would repeat
 * itself. */
UT_INLINE int col_dwarf_same(const void *start)
{
    const col_cfi_memo_t *m = col_cfi_memo;
    if (UT_UNLIKELY(m == NULL) || m->m <= 0 ||
        m->gen != __atomic_load_n(&col_dwarf_generation, __ATOMIC_ACQUIRE))
        return 0;
    const col_cfi_frame_t *in = &m->w[m->m - 1];
    const uintptr_t *f = (const uintptr_t *)start;
    return in->sp == (uintptr_t)start + 16 && in->ip == f[1] && in->bp == f[0] &&
           col_chk_hold(m->chk, &m->chk[in->chk_end]);
}

/* Is the stack above frame exactly the previous walk of this thread?  Only
 * asked when the caller kept that walk's frame (col_record_walk keeps none
 * in the modes without a memo). */
UT_INLINE int col_unwind_same(const col_thread_t *t, const void *frame)
{
    if (col_config.unwinder == PF_UNWIND_DWARF)
        return col_dwarf_same(frame);
    return col_unwind_fp_same(t, frame);
}

#endif
