/* col_unwind.c - the call stack of an allocation, as return addresses.
 *
 * Three unwinders, chosen by HEAPSCOPE_UNWIND:
 *  - fp:        follow the frame-pointer chain.  Cheapest; wrong through
 *               code built without frame pointers (it skips their callers).
 *  - dwarf:     heapscope's cached DWARF CFI unwinder (col_dwarf.c), with
 *               libunwind as the fallback for frames it cannot describe.
 *  - libunwind: unw_backtrace for every call.
 * All skip the leading frames that belong to libheapscope.so itself, so
 * frame 0 is the return address into the caller of malloc (or new). */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <string.h>
#include <sys/mman.h>

#include "collect/col_internal.h"
#include "heapscope/profile.h"

#include "collect/col_dwarf.h"

#define UNKNOWN_STACK_SPAN (16u * 1024)

int col_unwind_init(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    if (col_config.unwinder == PF_UNWIND_DWARF && col_dwarf_init() != 0)
        col_config.unwinder = PF_UNWIND_LIBUNWIND;
    return 0;
}

void col_unwind_modules_changed(void)
{
    unw_flush_cache(unw_local_addr_space, 0, 0);
    col_dwarf_modules_changed();
}

/* Is ra code?  The module of the previous hit is tried first. */
static inline int is_code(uintptr_t ra, uintptr_t *lo, uintptr_t *hi)
{
    if (ra >= *lo && ra < *hi)
        return 1;
    return col_modules_code_range(ra, lo, hi);
}

static inline int is_self(uintptr_t ip)
{
    return ip >= col_proc.self_lo && ip < col_proc.self_hi;
}

/* Keep ips[] from the first address outside libheapscope.so. */
static int drop_own_frames(uintptr_t *ips, int n)
{
    int skip = 0;
    while (skip < n && is_self(ips[skip]))
        skip++;
    for (int i = skip; i < n; i++)
        ips[i - skip] = ips[i];
    return n - skip;
}

/* The previous frame-pointer walk of this thread: every frame it visited
 * (from the first outside heapscope) and the two words it read there, and
 * why it stopped.  If the same frame is visited first again and every
 * decision the walk made would come out the same — the words it followed
 * are unchanged, and the reason it stopped still holds — the walk would
 * repeat itself exactly, so its result is reused.  The stopping frame is
 * checked by its reason, not its words: below frameless code rbp holds
 * whatever the program keeps there, which changes from call to call. */
#define FP_VISITS (COL_MAX_DEPTH + 1)
enum { FP_END_RA, FP_END_NEXT, FP_END_TRUNC };

typedef struct fp_visit {
    uintptr_t fp, next, ra; /* a frame, and the two words the walk read there */
} fp_visit_t;

typedef struct fp_memo {
    uint64_t token, tokens; /* this walk's name; last name handed out */
    uint32_t epoch;
    int nv, n, end;
    fp_visit_t v[FP_VISITS]; /* side by side: the check reads them in order */
    uintptr_t ips[COL_MAX_DEPTH];
} fp_memo_t;

static _Thread_local fp_memo_t *tls_fp_memo __attribute__((tls_model("initial-exec")));
static _Thread_local int tls_exited __attribute__((tls_model("initial-exec")));

/* At thread exit: unmap the thread's unwinder memory; later walks of the
 * exiting thread run without memo or cache. */
void col_unwind_thread_exit(void)
{
    tls_exited = 1;
    if (tls_fp_memo) {
        munmap(tls_fp_memo, sizeof *tls_fp_memo);
        tls_fp_memo = NULL;
    }
    col_dwarf_thread_exit();
}

UT_COLD static fp_memo_t *fp_memo_new(void)
{
    if (tls_exited)
        return NULL;
    void *p = mmap(NULL, sizeof(fp_memo_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    return tls_fp_memo = p == MAP_FAILED ? NULL : p;
}

/* Can the walk go from the frame at fp to the one at next?  [lo, hi) is
 * mapped: from our own frame up to the top of the stack. */
static inline int fp_next_ok(uintptr_t fp, uintptr_t next, uintptr_t lo, uintptr_t hi)
{
    (void)lo; /* fp >= lo, and next must be above fp */
    return next > fp && next <= hi - 2 * sizeof(uintptr_t) && (next & 7) == 0;
}

/* The words of every visit (m->nv > 0) are unchanged and the walk's end
 * still holds. */
UT_INLINE int fp_memo_words_hold(const fp_memo_t *m, uintptr_t lo, uintptr_t hi)
{
    const fp_visit_t *v = m->v, *last = m->v + m->nv - 1;
    for (; v < last; v++) {
        const uintptr_t *f = (const uintptr_t *)v->fp;
        if (f[0] != v->next || f[1] != v->ra)
            return 0;
    }
    const uintptr_t *f = (const uintptr_t *)last->fp;
    if (f[1] != last->ra)
        return 0; /* the return address decided whether the frame counts */
    return m->end != FP_END_NEXT || !fp_next_ok(last->fp, f[0], lo, hi);
}

UT_INLINE int fp_memo_holds(const fp_memo_t *m, uintptr_t fp, uint32_t epoch, uintptr_t lo,
                         uintptr_t hi)
{
    if (m->nv == 0 || m->v[0].fp != fp || m->epoch != epoch)
        return 0;
    return fp_memo_words_hold(m, lo, hi);
}

/* use_memo 0: a plain walk that neither reads nor writes the memo (for
 * HEAPSCOPE_UNWIND_VERIFY). */
UT_INLINE int unwind_fp(col_thread_t *t, const void *start, uintptr_t *ips, int max,
                                 unsigned *flags, int use_memo, uint64_t expect, uint64_t *token)
{
    *token = 0;
    uintptr_t lo = (uintptr_t)__builtin_frame_address(0);
    uintptr_t hi = t->stack_hi != UINTPTR_MAX ? t->stack_hi : lo + UNKNOWN_STACK_SPAN;
    uintptr_t fp = (uintptr_t)start;
    if (fp < lo || (fp & 7))
        return 0;
    uintptr_t code_lo = 0, code_hi = 0;
    fp_memo_t *m = use_memo ? tls_fp_memo : NULL;
    if (UT_UNLIKELY(m == NULL) && use_memo)
        m = fp_memo_new();
    uint32_t epoch = col_modules_epoch();
    int n = 0, nv = 0, end = FP_END_NEXT;
    if (hi - fp < 2 * sizeof(uintptr_t) || fp >= hi)
        return 0;
    /* heapscope's own frames */
    const uintptr_t *frame = (const uintptr_t *)fp;
    while (frame[1] && is_self(frame[1])) {
        if (!fp_next_ok(fp, frame[0], lo, hi))
            return 0;
        fp = frame[0];
        frame = (const uintptr_t *)fp;
    }
    if (m && fp_memo_holds(m, fp, epoch, lo, hi)) {
        if (m->token != expect)
            memcpy(ips, m->ips, (size_t)m->n * sizeof *ips);
        if (m->end == FP_END_TRUNC)
            *flags |= PF_STACK_TRUNCATED;
        *token = m->token;
        return m->n;
    }
    for (;;) {
        frame = (const uintptr_t *)fp;
        uintptr_t next = frame[0], ra = frame[1];
        if (m && nv < FP_VISITS) {
            m->v[nv++] = (fp_visit_t){.fp = fp, .next = next, .ra = ra};
        }
        if (ra == 0 || !is_code(ra, &code_lo, &code_hi)) {
            end = FP_END_RA; /* rbp was not a frame pointer here */
            break;
        }
        if (n == max) {
            *flags |= PF_STACK_TRUNCATED;
            end = FP_END_TRUNC;
            break;
        }
        ips[n++] = ra;
        if (!fp_next_ok(fp, next, lo, hi)) {
            end = FP_END_NEXT;
            break;
        }
        fp = next;
    }
    if (m) {
        m->nv = nv;
        m->n = n;
        m->end = end;
        m->epoch = epoch;
        memcpy(m->ips, ips, (size_t)n * sizeof *ips);
        m->token = *token = ++m->tokens;
    }
    return n;
}

#define OWN_FRAMES_MAX 8

UT_NOINLINE static int unwind_libunwind(uintptr_t *ips, int max, unsigned *flags)
{
    int want = max + OWN_FRAMES_MAX;
    if (want > COL_MAX_DEPTH)
        want = COL_MAX_DEPTH;
    void *buf[COL_MAX_DEPTH];
    int n = unw_backtrace(buf, want);
    if (n < 0)
        n = 0;
    for (int i = 0; i < n; i++)
        ips[i] = (uintptr_t)buf[i];
    int full = n == want;
    n = drop_own_frames(ips, n);
    if (n > max || (full && n == max)) {
        n = max;
        *flags |= PF_STACK_TRUNCATED;
    }
    return n;
}

static uint64_t fallbacks, verified, differed;

/* HEAPSCOPE_UNWIND_VERIFY: compare a stack with the reference walk for
 * the mode (libunwind for dwarf, an uncached walk for fp). */
UT_COLD static void verify(col_thread_t *t, const void *frame, const uintptr_t *ips, int n,
                           int max)
{
    uintptr_t ref[COL_MAX_DEPTH];
    unsigned flags = 0;
    uint64_t token;
    int m = col_config.unwinder == PF_UNWIND_FP ? unwind_fp(t, frame, ref, max, &flags, 0, 0, &token)
                                               : unwind_libunwind(ref, max, &flags);
    __atomic_add_fetch(&verified, 1, __ATOMIC_RELAXED);
    if (m != n || memcmp(ref, ips, (size_t)n * sizeof *ips) != 0) {
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

/* Add the unwinder's statistics to the profile's messages (at exit). */
void col_unwind_report(void)
{
    if (col_config.verify_unwind && col_config.unwinder == PF_UNWIND_FP)
        col_message_add("fp unwinder verified against an uncached walk: %lu stacks, %lu differed",
                        (unsigned long)verified, (unsigned long)differed);
    else if (col_config.verify_unwind && col_config.unwinder == PF_UNWIND_DWARF)
        col_message_add("dwarf unwinder verified against libunwind: %lu stacks, %lu differed, "
                        "%lu fell back to libunwind",
                        (unsigned long)verified, (unsigned long)differed, (unsigned long)fallbacks);
}

/* The memo check alone, checked first and small (col_record_alloc): a
 * repeated stack costs a few dozen instructions.  The memo's first frame
 * was never heapscope's own, so when the hook's frame is that frame, with
 * the same return address, nothing is to be skipped; the rest is as in
 * fp_memo_holds.  And the walk is the one named token. */
int col_unwind_fp_same(const col_thread_t *t, const void *frame, uint64_t token)
{
    const fp_memo_t *m = tls_fp_memo;
    uintptr_t fp = (uintptr_t)frame;
    if (UT_LIKELY(m != NULL) && m->token == token && m->nv > 0 && m->v[0].fp == fp &&
        ((const uintptr_t *)fp)[1] == m->v[0].ra && m->epoch == col_modules_epoch()) {
        uintptr_t lo = (uintptr_t)__builtin_frame_address(0);
        uintptr_t hi = t->stack_hi != UINTPTR_MAX ? t->stack_hi : lo + UNKNOWN_STACK_SPAN;
        return fp_memo_words_hold(m, lo, hi);
    }
    return 0;
}

/* The walk; a repeated stack is col_unwind_fp_same's, checked first by
 * the caller (col_record_alloc), and again inside unwind_fp. */
int col_unwind_fp(col_thread_t *t, const void *frame, uintptr_t *ips, int max, unsigned *flags,
                  uint64_t expect, uint64_t *token)
{
    return unwind_fp(t, frame, ips, max, flags, 1, expect, token);
}

int col_unwind_dwarf_fallback(uintptr_t *ips, int max, unsigned *flags, uint64_t *token)
{
    __atomic_add_fetch(&fallbacks, 1, __ATOMIC_RELAXED);
    *token = 0;
    return unwind_libunwind(ips, max, flags);
}

int col_unwind_any(col_thread_t *t, const void *frame, uintptr_t *ips, int max, unsigned *flags,
                   uint64_t expect, uint64_t *token)
{
    *token = 0;
    if (UT_UNLIKELY(col_config.verify_unwind))
        expect = 0; /* verification needs the frames */
    switch (col_config.unwinder) {
    case PF_UNWIND_FP: {
        int n = unwind_fp(t, frame, ips, max, flags, 1, expect, token);
        if (UT_UNLIKELY(col_config.verify_unwind))
            verify(t, frame, ips, n, max);
        return n;
    }
    case PF_UNWIND_DWARF: {
        int truncated = 0;
        int n = col_dwarf_backtrace(frame, ips, max, col_proc.self_lo, col_proc.self_hi, t->stack_lo,
                                  t->stack_hi, &truncated, expect, token);
        if (UT_UNLIKELY(n < 0))
            return col_unwind_dwarf_fallback(ips, max, flags, token);
        if (truncated)
            *flags |= PF_STACK_TRUNCATED;
        if (UT_UNLIKELY(col_config.verify_unwind))
            verify(t, frame, ips, n, max);
        return n;
    }
    default:
        return unwind_libunwind(ips, max, flags);
    }
}
