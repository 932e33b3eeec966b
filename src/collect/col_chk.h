/* col_chk.h - the check a memo of a stack walk makes to know that the walk
 * would repeat itself: the stack words the walk read still hold what they
 * held.
 *
 * The caching unwinders (col_unwind_fp.c, col_dwarf.c) record, for each
 * step of a walk, the stack words it read (a frame's saved frame pointer
 * and its return address, side by side in the usual frame layout) as one
 * 16-byte check: the address of the two words, the values they held, and
 * a mask of the bits that matter (a lone return address checks only the
 * upper word).  A stack is a recorded walk's from some frame outwards
 * exactly when every check of those frames holds, and checking one is an
 * unaligned 16-byte load, an xor, an and and an or (SSE2, in every
 * x86-64).  The unwinders' memos (col_memo.h) and the per-thread cache of
 * recent stacks (col_internal.h) keep them. */
#ifndef COL_CHK_H
#define COL_CHK_H

#include <stdint.h>

#include "common/ut_compiler.h"

typedef uint64_t col_v2_t __attribute__((vector_size(16)));
typedef uint64_t col_v2u_t __attribute__((vector_size(16), aligned(8))); /* unaligned */

typedef struct col_chk {
    col_v2_t want;        /* the two words the walk read */
    col_v2_t mask;        /* the bits of them that decided the walk */
    const col_v2u_t *at;  /* where they are */
    uint64_t unused;
} col_chk_t;

/* Make c a check of the word at `a` (the two words at a - 8 and a, the
 * lower one ignored), or of the two words at a and a + 8.  Written field
 * by field in place: a struct built elsewhere and copied in stalls on
 * store forwarding. */
UT_INLINE void col_chk_word(col_chk_t *c, uintptr_t a, uint64_t v)
{
    c->want[0] = 0;
    c->want[1] = v;
    c->mask[0] = 0;
    c->mask[1] = ~0ull;
    c->at = (const col_v2u_t *)(a - 8);
}

/* A check of the two words at a and a + 8 that compares only the bits
 * lo_mask of the first (0 for a saved rbp that no frame of the DWARF
 * walk uses); col_chk_pair compares both whole. */
UT_INLINE void col_chk_pair_masked(col_chk_t *c, uintptr_t a, uint64_t lo, uint64_t hi,
                                   uint64_t lo_mask)
{
    c->want[0] = lo & lo_mask;
    c->want[1] = hi;
    c->mask[0] = lo_mask;
    c->mask[1] = ~0ull;
    c->at = (const col_v2u_t *)a;
}

UT_INLINE void col_chk_pair(col_chk_t *c, uintptr_t a, uint64_t lo, uint64_t hi)
{
    col_chk_pair_masked(c, a, lo, hi, ~0ull);
}

/* Do all checks in [c, end) hold?  Two at a time, into two accumulators:
 * the loads are independent, only the ors chain. */
UT_INLINE int col_chk_hold(const col_chk_t *c, const col_chk_t *end)
{
    col_v2_t d0 = {0, 0}, d1 = {0, 0};
    const col_chk_t *last = c < end ? end - 1 : c; /* (not end - c >= 2: a division) */
    for (; c < last; c += 2) {
        d0 |= (*c[0].at ^ c[0].want) & c[0].mask;
        d1 |= (*c[1].at ^ c[1].want) & c[1].mask;
    }
    if (c < end)
        d0 |= (*c->at ^ c->want) & c->mask;
    d0 |= d1;
    return (d0[0] | d0[1]) == 0;
}

/* Make c a check that always holds (of its own want, under a zero mask):
 * made in place, since it reads itself. */
UT_INLINE void col_chk_none(col_chk_t *c)
{
    c->want[0] = c->want[1] = 0;
    c->mask[0] = c->mask[1] = 0;
    c->at = (const col_v2u_t *)&c->want;
}

/* The checks of a recent-stacks cache entry (col_internal.h) hold?  c[0]
 * is the check of the hook's own frame, at `frame`: the caller's rbp the
 * hook just pushed and the return address the call just pushed.  Loaded
 * as one 16-byte word, those two 8-byte stores, still in the store buffer,
 * cannot be forwarded to the load, which waits for them to reach the
 * cache (threadtest: 0.10x of its 1.40x); so only the rbp is compared
 * here, as an 8-byte load, and the return address by the caller, which
 * has it.  Then c[1..end), an even number of checks, at least two
 * (col_chk_pad_pairs), two at a time into two accumulators: the loads are
 * independent, only the ors chain.  The first three are checked before
 * the loop, which the shallowest entries (three checks: a thread's
 * function allocating, as in threadtest) then skip. */
UT_INLINE int col_chk_hold_framed(const void *frame, const col_chk_t *c, const col_chk_t *end)
{
    col_v2_t d0 = {(*(const uint64_t *)frame ^ c[0].want[0]) & c[0].mask[0], 0};
    d0 |= (*c[1].at ^ c[1].want) & c[1].mask;
    col_v2_t d1 = (*c[2].at ^ c[2].want) & c[2].mask;
    for (c += 3; c < end; c += 2) {
        d0 |= (*c[0].at ^ c[0].want) & c[0].mask;
        d1 |= (*c[1].at ^ c[1].want) & c[1].mask;
    }
    d0 |= d1;
    return (d0[0] | d0[1]) == 0;
}

/* How many checks an entry stores for n (at least one): the hook frame's
 * and an even number, at least two, after it (col_chk_pad_pairs). */
UT_INLINE uint32_t col_chk_padded(uint32_t n)
{
    return n < 3 ? 3 : n | 1;
}

/* Pad n checks (at least one) to col_chk_padded(n): the last repeated
 * (it holds when it does), or checks that always hold after a lone first;
 * returns the new count. */
UT_INLINE uint32_t col_chk_pad_pairs(col_chk_t *c, uint32_t n)
{
    if (n == 1) {
        col_chk_none(&c[1]);
        col_chk_none(&c[2]);
        return 3;
    }
    if (!(n & 1)) {
        c[n] = c[n - 1];
        n++;
    }
    return n;
}

#endif
