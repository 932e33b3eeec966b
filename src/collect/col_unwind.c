/* col_unwind.c - the call stack of an allocation, as a node of the call
 * tree (col_node.c).
 *
 * Three unwinders, chosen by HEAPSCOPE_UNWIND:
 *  - fp:        follow the frame-pointer chain (col_unwind_fp.c).  Cheapest;
 *               wrong through code built without frame pointers (it skips
 *               their callers).
 *  - dwarf:     heapscope's cached DWARF CFI unwinder (col_dwarf.c), with
 *               libunwind for the calls whose frames it cannot describe.
 *  - libunwind: unw_backtrace for every call.
 * The dispatch is inline (col_unwind in col_internal.h).  This file holds
 * libunwind, start-up, and HEAPSCOPE_UNWIND_VERIFY, which checks every
 * stack of the caching unwinders against a reference.  All skip the frames
 * of libheapscope.so itself, so frame 0 is the return address into the
 * caller of malloc (or new).
 *
 * Built with COL_FP_ONLY, this is libheapscope-fp.so, which `heapscope run
 * --unwind fp` preloads: frame pointers only, without libunwind, so that
 * neither libunwind nor liblzma (its dependency) is loaded into the
 * program (col_config.c keeps the mode fp). */
#define _GNU_SOURCE
#ifndef COL_FP_ONLY
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>

#include "collect/col_dwarf.h"
#include "collect/col_internal.h"
#include "collect/col_memo.h"
#include "common/ut_spin.h"
#include "heapscope/profile.h"

/* libunwind sets itself up at its first call (unw_backtrace), not at
 * start-up: a program whose stacks heapscope's own unwinders answer never
 * runs its code, so neither its code and data pages (~68 KB of RSS) nor
 * the pipe its memory validation opens (two file descriptors) are added
 * to the program.  In `fp` mode libunwind is never called at all.
 * (liblzma, which libunwind pulls in, still costs ~110 KB of RSS in
 * libheapscope.so whatever the mode: its start-up code runs at load;
 * libheapscope-fp.so loads neither.  Why libunwind is not loaded on demand
 * instead: docs/UNWIND.md.)
 *
 * Its caching policy stays the default, one cache of unwind rules under a
 * lock taken with signals blocked.  UNW_CACHE_PER_THREAD would be one
 * cache per thread only in a libunwind built with --enable-per-thread-cache;
 * Debian's is not, and there it means the one cache without the lock, shared
 * by every thread that unwinds.  (The policy is also the program's own, if
 * it calls libunwind: the library is loaded once.) */
int col_unwind_init(void)
{
#ifndef COL_FP_ONLY
    if (col_config.unwinder == PF_UNWIND_DWARF && col_dwarf_init() != 0)
        col_config.unwinder = PF_UNWIND_LIBUNWIND;
#endif
    return 0;
}

#ifndef COL_FP_ONLY
/* Fork and libunwind: a thread inside unw_backtrace may hold libunwind's
 * cache lock, which would stay locked in a child forked meanwhile, and
 * the child's first walk by libunwind would wait for it for ever.  So a
 * fork waits until no other thread is inside unw_backtrace, and walks
 * that start meanwhile wait for the fork (col_unwind_atfork_*): each side
 * announces itself first, then looks at the other.  The fork's wait is
 * bounded (a thread stopped inside libunwind must not hang the parent). */
static int unw_inside; /* threads inside unw_backtrace */
static int unw_gate;   /* a fork is under way */
static _Thread_local int unw_here __attribute__((tls_model("initial-exec")));    /* this thread: inside */
static _Thread_local int unw_forking __attribute__((tls_model("initial-exec"))); /* this thread forks */

UT_INLINE void unw_enter(void)
{
    for (;;) {
        __atomic_add_fetch(&unw_inside, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&unw_gate, __ATOMIC_SEQ_CST) || unw_forking)
            break;
        __atomic_sub_fetch(&unw_inside, 1, __ATOMIC_SEQ_CST);
        unsigned spins = 0;
        while (__atomic_load_n(&unw_gate, __ATOMIC_ACQUIRE))
            ut_spin_pause(&spins);
    }
    unw_here++;
}

UT_INLINE void unw_leave(void)
{
    unw_here--;
    __atomic_sub_fetch(&unw_inside, 1, __ATOMIC_SEQ_CST);
}

/* libunwind's pipe.  At its first walk libunwind makes a pipe, keeps both
 * ends for good, and checks that a page is readable by reading a byte from
 * one end and writing a byte of the page into the other (in a frame with
 * no CFI, a signal frame).  A program that closes every descriptor and
 * reuses the numbers would have its own file read or written there
 * (hs_closefds unwind), and libunwind closes both numbers when the read
 * fails.  libunwind makes it with pipe2 through its PLT, so it comes here:
 * a pipe made by libunwind's code, on a thread inside unw_backtrace, with
 * libunwind's flags, has its ends moved to the top of the program's range,
 * 8 above where the profile is written from (col_fd_high_at): after a
 * program closed everything, libunwind closes its old numbers when it
 * reopens the pipe, and those must not be the profile's by then.  Every
 * other pipe2 (a signal handler's on the same thread among them) is the
 * real one, untouched. */
static uintptr_t unw_text[2]; /* libunwind's code segment, once found */

/* (the loader's lock dl_iterate_phdr takes is recursive, and libunwind
 * makes its pipe outside its own calls of it) */
static int from_libunwind(uintptr_t ra)
{
    if (!__atomic_load_n(&unw_text[1], __ATOMIC_ACQUIRE)) {
        int (*f)(void **, int) = unw_backtrace;
        void *a;
        uintptr_t seg[2];
        memcpy(&a, &f, sizeof a); /* function to object pointer */
        col_modules_path_of(a, seg);
        unw_text[0] = seg[0];
        __atomic_store_n(&unw_text[1], seg[1], __ATOMIC_RELEASE);
    }
    return ra >= unw_text[0] && ra < __atomic_load_n(&unw_text[1], __ATOMIC_ACQUIRE);
}

UT_EXPORT int pipe2(int fds[2], int flags)
{
    COL_REAL_OR_FAIL(pipe2, -1);
    int rc = col_real.pipe2(fds, flags);
    if (rc == 0 && unw_here > 0 && flags == (O_CLOEXEC | O_NONBLOCK) &&
        from_libunwind((uintptr_t)__builtin_return_address(0))) {
        fds[0] = col_fd_high_at(fds[0], 8);
        fds[1] = col_fd_high_at(fds[1], 8);
    }
    return rc;
}
#endif

void col_unwind_atfork_prepare(void)
{
#ifndef COL_FP_ONLY
    unw_forking = 1;
    __atomic_store_n(&unw_gate, 1, __ATOMIC_SEQ_CST);
    /* (a signal handler that forks on a thread inside libunwind: that
     * thread's own walk is not waited for; sealed: no walk runs, and
     * sched_yield may be forbidden) */
    for (long i = 0; i < 200000 && !__atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE) &&
                     __atomic_load_n(&unw_inside, __ATOMIC_SEQ_CST) > unw_here;
         i++)
        sched_yield();
#endif
}

/* The profile was just sealed: wait (bounded) until no other thread is
 * inside unw_backtrace, whose system calls a seccomp filter about to go in
 * may forbid.  Walks that start later see the seal (libunwind_ips). */
void col_unwind_quiesce(void)
{
#ifndef COL_FP_ONLY
    uint64_t until = col_now_ns() + 2000000000u; /* at most 2 s */
    while (__atomic_load_n(&unw_inside, __ATOMIC_SEQ_CST) > unw_here && col_now_ns() < until)
        sched_yield();
#endif
}

void col_unwind_atfork_parent(void)
{
#ifndef COL_FP_ONLY
    __atomic_store_n(&unw_gate, 0, __ATOMIC_RELEASE);
    unw_forking = 0;
#endif
}

/* In the child only this thread is left: its own walk, if a signal
 * handler forked inside one. */
void col_unwind_atfork_child(void)
{
#ifndef COL_FP_ONLY
    __atomic_store_n(&unw_inside, unw_here, __ATOMIC_RELAXED);
    __atomic_store_n(&unw_gate, 0, __ATOMIC_RELEASE);
    unw_forking = 0;
#endif
}

#ifndef COL_FP_ONLY
/* Module changes libunwind's cache has not been flushed for: counted here,
 * flushed by the next thread that walks with libunwind, before its walk.
 * Not by the thread that saw the change, which may be the writer: it
 * never calls into libunwind, whose calls of the C library are bound
 * lazily (col_glibc.c). */
static uint32_t unw_changes, unw_flushed;

static void unw_flush_if_stale(void)
{
    uint32_t c = __atomic_load_n(&unw_changes, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&unw_flushed, __ATOMIC_RELAXED) != c) {
        unw_flush_cache(unw_local_addr_space, 0, 0);
        __atomic_store_n(&unw_flushed, c, __ATOMIC_RELAXED);
    }
}
#endif

void col_unwind_modules_changed(void)
{
    if (col_config.unwinder == PF_UNWIND_FP)
        return;
#ifndef COL_FP_ONLY
    __atomic_add_fetch(&unw_changes, 1, __ATOMIC_RELEASE);
#endif
    col_dwarf_modules_changed();
}

/* Later walks of the exiting thread run without memo or cache. */
void col_unwind_thread_exit(col_thread_t *t)
{
    col_unwind_fp_thread_exit(t);
    col_dwarf_thread_exit(t);
}

void col_unwind_thread_attach(col_thread_t *t)
{
    col_unwind_fp_thread_attach(t);
    col_dwarf_thread_attach(t);
}

#define OWN_FRAMES_MAX 8

/* libunwind's stack of this call, innermost first, without heapscope's
 * frames. */
UT_NOINLINE static int libunwind_ips(uintptr_t *ips, int max, unsigned *flags)
{
    int want = max + OWN_FRAMES_MAX;
    void *buf[COL_MAX_DEPTH + OWN_FRAMES_MAX];
#ifdef COL_FP_ONLY
    int n = 0; /* never asked: the mode is fp */
    (void)buf;
#else
    /* not once the profile is sealed: libunwind opens files and pipes
     * (col_seccomp.c); the seal is looked at after this thread counts
     * itself in, so that col_unwind_quiesce sees it or it sees the seal */
    int n = 0;
    if (!__atomic_load_n(&col_sealed, __ATOMIC_SEQ_CST)) {
        unw_enter();
        if (!__atomic_load_n(&col_sealed, __ATOMIC_SEQ_CST)) {
            unw_flush_if_stale();
            n = unw_backtrace(buf, want);
        }
        unw_leave();
    }
#endif
    if (n < 0)
        n = 0;
    int skip = 0;
    while (skip < n && col_is_self((uintptr_t)buf[skip]))
        skip++;
    /* a full buffer: the stack may go on (cut), whatever heapscope's own
     * frames took of it */
    if (n == want || n - skip > max)
        *flags |= PF_STACK_TRUNCATED;
    n = n - skip > max ? max : n - skip;
    for (int i = 0; i < n; i++)
        ips[i] = (uintptr_t)buf[skip + i];
    return n;
}

static uint64_t fallbacks, verified, differed, guessed, cache_verified, cache_differed;

void col_unwind_verify_cache(uint32_t cached, uint32_t node)
{
    __atomic_add_fetch(&cache_verified, 1, __ATOMIC_RELAXED);
    if (cached != node && __atomic_add_fetch(&cache_differed, 1, __ATOMIC_RELAXED) <= 3)
        col_message_add("the cache of recent stacks said node %u where the walk found %u",
                        (unsigned)cached, (unsigned)node);
}

uint32_t col_unwind_libunwind(int max)
{
    uintptr_t ips[COL_MAX_DEPTH];
    unsigned flags = 0;
    if (col_config.unwinder == PF_UNWIND_DWARF)
        __atomic_add_fetch(&fallbacks, 1, __ATOMIC_RELAXED);
    int n = libunwind_ips(ips, max, &flags);
    return col_node_path(ips, n, (flags & PF_STACK_TRUNCATED) != 0);
}

/* HEAPSCOPE_UNWIND_VERIFY: compare the stack of node with the reference
 * walk of the mode (libunwind for dwarf, the walk without memo for fp). */
UT_COLD static void verify(col_thread_t *t, const void *frame, uint32_t node, int max)
{
    uintptr_t ips[COL_MAX_DEPTH], ref[COL_MAX_DEPTH];
    unsigned flags = 0, ref_flags = 0;
    int n = col_node_ips(node, ips, COL_MAX_DEPTH, &flags);
    int m = col_config.unwinder == PF_UNWIND_FP
                ? col_unwind_fp_plain(t, frame, ref, max, &ref_flags)
                : libunwind_ips(ref, max, &ref_flags);
    __atomic_add_fetch(&verified, 1, __ATOMIC_RELAXED);
    if (m != n || flags != ref_flags || memcmp(ref, ips, (size_t)n * sizeof *ips) != 0) {
        if (__atomic_add_fetch(&differed, 1, __ATOMIC_RELAXED) <= 3) {
            col_message_add("%s unwinder differs from its reference: %d frames %#lx %#lx %#lx vs "
                            "%d frames %#lx %#lx %#lx",
                            col_config.unwinder == PF_UNWIND_FP ? "fp" : "dwarf", n,
                            n > 0 ? (unsigned long)ips[0] : 0, n > 1 ? (unsigned long)ips[1] : 0,
                            n > 2 ? (unsigned long)ips[2] : 0, m, m > 0 ? (unsigned long)ref[0] : 0,
                            m > 1 ? (unsigned long)ref[1] : 0, m > 2 ? (unsigned long)ref[2] : 0);
        }
    }
}

/* HEAPSCOPE_UNWIND_VERIFY: a stack found without the unwinder (the
 * recorder's guess, col_unwind_fp_is or col_dwarf_is), against the
 * reference. */
void col_unwind_verify_walk(col_thread_t *t, const void *frame, uint32_t node)
{
    __atomic_add_fetch(&guessed, 1, __ATOMIC_RELAXED);
    verify(t, frame, node, col_config.max_depth);
}

/* Add the unwinder's statistics to the profile's messages (at exit). */
void col_unwind_report(void)
{
    uint64_t cuts = col_unwind_fp_seccomp_cuts();
    if (cuts)
        col_message_add("%lu frame-pointer walks of a stack not the thread's own (a coroutine's, "
                        "an alternate signal stack) stopped early: the process may be under a "
                        "seccomp filter, so their frames are read through a pipe, and none could "
                        "be made (out of file descriptors)",
                        (unsigned long)cuts);
    if (col_config.verify_unwind)
        col_message_add("cache of recent stacks verified against the unwinder: %lu stacks, "
                        "%lu differed",
                        (unsigned long)cache_verified, (unsigned long)cache_differed);
    if (col_config.verify_unwind && col_config.unwinder == PF_UNWIND_FP)
        col_message_add("fp unwinder verified against an uncached walk: %lu stacks, %lu differed; "
                        "%lu were the guessed next stack; %lu walked on a stack not the thread's own",
                        (unsigned long)verified, (unsigned long)differed, (unsigned long)guessed,
                        (unsigned long)col_unwind_fp_foreign_walks());
    else if (col_config.verify_unwind && col_config.unwinder == PF_UNWIND_DWARF)
        col_message_add("dwarf unwinder verified against libunwind: %lu stacks, %lu differed, "
                        "%lu fell back to libunwind; %lu were the guessed next stack",
                        (unsigned long)verified, (unsigned long)differed, (unsigned long)fallbacks,
                        (unsigned long)guessed);
    else if (col_config.unwinder == PF_UNWIND_DWARF && fallbacks)
        col_message_add("%lu %s walked by libunwind, more slowly: a frame had no rule heapscope's "
                        "DWARF unwinder follows (a CFA expression, a signal frame, code without CFI "
                        "whose rbp is not 0, code outside every module), or the stack was not the "
                        "thread's own",
                        (unsigned long)fallbacks, fallbacks == 1 ? "stack was" : "stacks were");
}

/* The checks of the whole stack of the memo's walk, which started at
 * frame's caller and found node: every word the walk read (for DWARF, a
 * saved rbp only if a frame used it), and for the DWARF unwinder the hook
 * frame's own two words (the caller's rbp, if the walk used it, and
 * return address: its starting state).  The frame-pointer walk that
 * stopped at a saved frame pointer leading nowhere has that word checked
 * as it is.  They go in the entry, or if more than COL_SC_CHKS in its
 * chunk of t's deep checks (col_thread_deep; up to COL_SC_DEEP checks); a
 * stack with more is not kept.
 * The entry is stamped with epoch, read before the walk: a module change
 * during the walk leaves it stale, never wrongly valid. */
void col_unwind_cache(col_thread_t *t, col_sc_entry_t *e, const void *frame, uint32_t node,
                      uint32_t epoch)
{
    const uintptr_t *f = (const uintptr_t *)frame;
    const col_fp_memo_t *fm = NULL;
    const col_cfi_memo_t *cm = NULL;
    uint32_t n, skip = 0;
    e->frame = NULL;
    if (col_config.unwinder == PF_UNWIND_FP) {
        fm = col_fp_memo;
        if (!fm || fm->m <= fm->stop || fm->w[fm->m - 1].fp != (uintptr_t)frame ||
            fm->w[fm->m - 1].node != node)
            return;
        n = (uint32_t)fm->m;
    } else if (col_config.unwinder == PF_UNWIND_DWARF) {
        cm = col_cfi_memo;
        if (!cm || cm->m <= 0 || cm->w[cm->m - 1].sp != (uintptr_t)frame + 16 ||
            cm->w[cm->m - 1].node != node)
            return;
        /* A walk that ended at the outermost frame's rule (clone3 under a
         * thread, _start under main) read, one frame in, the return
         * address into that outermost function.  When that frame is the C
         * library's (start_thread, __libc_start_main), it is the thread's
         * entry, which lives as long as the thread and is only ever
         * called from there: the checks of its callee's return address
         * still say that it is where it was, and its own words are left
         * out (on threadtest 2 checks of 4: DWARF's entries then cost what
         * fp's do).  Not for a frame of the program's own under such a
         * rule (a fiber's entry below a trampoline that ends the stack,
         * clone()'s function): the program may call it again at the same
         * address from elsewhere, and only those words tell the two
         * stacks apart (hs_fiber_entry). */
        if (cm->end == COL_CFI_LAST && cm->m >= 3 && col_modules_in_libc(cm->w[1].ip))
            skip = cm->w[1].chk_end;
        n = cm->w[cm->m - 1].chk_end + 1 - skip;
    } else {
        return;
    }
    uint32_t total = col_chk_padded(n);
    if (total > COL_SC_DEEP)
        return;
    col_chk_t *c = total <= COL_SC_CHKS ? e->chk : col_thread_deep(t, e, total);
    /* the hook frame's check first (col_chk_hold_framed) */
    if (fm) {
        /* the memo's visits are outermost first: the hook frame's is last */
        c[0] = fm->chk[n - 1];
        memcpy(c + 1, fm->chk, (n - 1) * sizeof *c);
        if (fm->end == COL_FP_END_NEXT) /* the outermost visit's, as it is now */
            col_chk_pair(&c[n == 1 ? 0 : 1], fm->w[0].fp, *(const uintptr_t *)fm->w[0].fp,
                         fm->chk[0].want[1]);
        if ((uintptr_t)c[0].at != (uintptr_t)frame || c[0].want[1] != f[1])
            return; /* (cannot happen: the memo's innermost visit is frame) */
    } else {
        /* the hook's caller's rbp only if the walk from there used it */
        col_chk_pair_masked(&c[0], (uintptr_t)frame, f[0], f[1],
                            col_cfi_bp_mask(&cm->w[cm->m - 1]));
        memcpy(c + 1, cm->chk + skip, (n - 1) * sizeof *c);
    }
    e->ra = f[1];
    e->node = node;
    e->chk_at = c;
    e->chk_end = c + col_chk_pad_pairs(c, n);
    e->epoch = epoch;
    e->key = UINT64_MAX; /* no size has this key */
    e->frame = frame;
}

/* The libunwind mode, and the caching modes under verification. */
uint32_t col_unwind_any(col_thread_t *t, const void *frame, uint32_t guess)
{
    int max = col_config.max_depth;
    uint32_t node;
    switch (col_config.unwinder) {
    case PF_UNWIND_FP:
        node = col_unwind_fp(t, frame, guess);
        break;
    case PF_UNWIND_DWARF:
        node = col_unwind_dwarf(t, frame, guess);
        break;
    default:
        return col_unwind_libunwind(max);
    }
    if (UT_UNLIKELY(col_config.verify_unwind) && node != COL_NODE_NONE)
        verify(t, frame, node, max);
    return node;
}
