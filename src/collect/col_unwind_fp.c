/* col_unwind_fp.c - the frame-pointer unwinder and its memo.
 *
 * The walk follows the rbp chain from the hook's frame: at each frame it
 * reads two words, the caller's frame pointer (`next`) and the return
 * address (`ra`).  It stops at a return address outside every executable
 * segment (rbp was not a frame pointer there: code built without them),
 * at a `next` that does not lead further up the stack, or at the depth cap.
 *
 * The memo is this thread's previous walk, every frame it visited with the
 * two words it read there and the call-tree node (col_node.c) of the stack
 * from that frame outwards.  It is stored outermost frame first, so that a
 * new walk that reaches one of the memo's frames with the same frame
 * pointer, where every word the previous walk read from there on is
 * unchanged (the walk would repeat itself, and end the same way), keeps
 * that part of the memo in place and only adds its own inner frames: their
 * nodes are looked up under the kept frame's node, one per new frame.  A
 * stack the thread allocated from lately never gets here: the recorder's
 * cache of recent stacks (col_record.h) holds it with its checks.
 *
 * The stopping frame is checked by its reason, not its words: below
 * frameless code rbp holds whatever the program keeps there. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "collect/col_internal.h"
#include "collect/col_memo.h"

_Thread_local col_fp_memo_t *col_fp_memo __attribute__((tls_model("initial-exec")));
static uint64_t foreign_walks, seccomp_cuts;

uint64_t col_unwind_fp_foreign_walks(void)
{
    return __atomic_load_n(&foreign_walks, __ATOMIC_RELAXED);
}

uint64_t col_unwind_fp_seccomp_cuts(void)
{
    return __atomic_load_n(&seccomp_cuts, __ATOMIC_RELAXED);
}

/* The memo's header and arrays, for n visits, in one mapping (or, with
 * base NULL, its size). */
static size_t memo_carve(col_fp_memo_t *m, size_t n)
{
    size_t off = sizeof *m;
    col_fp_visit_t *w = col_memo_layout(m, &off, n * sizeof *w);
    col_chk_t *chk = col_memo_layout(m, &off, n * sizeof *chk);
    uintptr_t *fp = col_memo_layout(m, &off, n * sizeof *fp);
    uintptr_t *next = col_memo_layout(m, &off, n * sizeof *next);
    uintptr_t *ip = col_memo_layout(m, &off, n * sizeof *ip);
    uint32_t *node = col_memo_layout(m, &off, n * sizeof *node);
    uintptr_t *g_ip = col_memo_layout(m, &off, n * sizeof *g_ip);
    uint32_t *g_node = col_memo_layout(m, &off, n * sizeof *g_node);
    uintptr_t *g_fp = col_memo_layout(m, &off, n * sizeof *g_fp);
    col_v2_t *g_want = col_memo_layout(m, &off, n * sizeof *g_want);
    if (m) {
        m->cap = (int)n;
        m->guess.ip = g_ip;
        m->guess.node = g_node;
        m->guess.fp = g_fp;
        m->guess.want = g_want;
        m->w = w;
        m->chk = chk;
        m->tmp_fp = fp;
        m->tmp_next = next;
        m->tmp_ip = ip;
        m->tmp_node = node;
    }
    return off;
}

/* The memo to t, with no walk in it (the next owner's stack is another);
 * unmapped if t has one already. */
void col_unwind_fp_thread_exit(col_thread_t *t)
{
    col_fp_memo_t *m = col_fp_memo;
    if (!m)
        return;
    col_fp_memo = NULL;
    size_t n = (size_t)m->cap;
    if (t->unwind_fp) {
        col_vm_unmap(m, memo_carve(NULL, n));
        return;
    }
    memset(m, 0, sizeof *m);
    memo_carve(m, n);
    t->unwind_fp = m;
}

/* t's memo, if this thread has none yet. */
void col_unwind_fp_thread_attach(col_thread_t *t)
{
    if (!col_fp_memo && t->unwind_fp) {
        col_fp_memo = t->unwind_fp;
        t->unwind_fp = NULL;
    }
}

/* A new memo for n visits, or NULL. */
static col_fp_memo_t *memo_map(size_t n)
{
    col_fp_memo_t *m = col_vm_map_for(COL_VM_UNWIND, memo_carve(NULL, n));
    if (m)
        memo_carve(m, n);
    return m;
}

/* This thread's first memo: one page, the most visits that fit (most
 * threads' stacks are shallow; the memo is memory the program pays for
 * in each of its threads: threadtest at 16 threads, a page a thread). */
UT_COLD static col_fp_memo_t *memo_new(void)
{
    if (col_tls_dead)
        return NULL;
    size_t n = (size_t)col_config.max_depth + 1;
    while (n > 2 && memo_carve(NULL, n) > 4096)
        n--;
    return col_fp_memo = memo_map(n);
}

/* A walk needs more than m's visits: m replaced by a memo of max_depth +
 * 1, empty (a memo is only a cache of the last walk); NULL, and m kept,
 * if it cannot be mapped. */
UT_COLD static col_fp_memo_t *memo_grow(col_fp_memo_t *m)
{
    col_fp_memo_t *g = memo_map((size_t)col_config.max_depth + 1);
    if (g) {
        col_vm_unmap(m, memo_carve(NULL, (size_t)m->cap));
        col_fp_memo = g;
    }
    return g;
}

/* Is ra code?  The module of the previous hit is tried first. */
UT_INLINE int is_code(uintptr_t ra, uintptr_t *lo, uintptr_t *hi)
{
    if (ra >= *lo && ra < *hi)
        return 1;
    return col_modules_code_range(ra, lo, hi);
}

/* Would a walk that reaches w[i] repeat the memo's walk from there on?
 * Every word it read at w[0..i] is unchanged (w[i]'s own words first: a
 * visit at the same frame pointer with other words is the common miss),
 * and the outermost visit still ends the walk for the same reason. */
UT_INLINE int memo_holds_from(const col_fp_memo_t *m, int i, uintptr_t hi)
{
    if (!col_chk_hold(&m->chk[i], &m->chk[i + 1]) || !col_chk_hold(&m->chk[0], &m->chk[i]))
        return 0;
    return m->end != COL_FP_END_NEXT || !col_fp_next_ok(m->w[0].fp, *(const uintptr_t *)m->w[0].fp, hi);
}

/* Frames counted in w[0..i]. */
UT_INLINE int frames_upto(const col_fp_memo_t *m, int i)
{
    return i + 1 - m->stop;
}

/* The first frame of the walk from the hook's frame: frame itself, checked
 * to lie on the stack between lo (the walker's own frame) and hi (the
 * stack's top), past heapscope's own frames; 0 if the frame or a link
 * between heapscope's frames is not plausible.  Only heapscope's frames
 * are read, so any stack the program runs on is readable here. */
UT_INLINE uintptr_t walk_start(const void *frame, uintptr_t lo, uintptr_t hi)
{
    uintptr_t fp = (uintptr_t)frame;
    if (fp < lo || (fp & 7) || fp >= hi || hi - fp < 2 * sizeof(uintptr_t))
        return 0;
    while (col_is_self(((const uintptr_t *)fp)[1])) {
        uintptr_t next = ((const uintptr_t *)fp)[0];
        if (!col_fp_next_ok(fp, next, hi))
            return 0;
        fp = next;
    }
    return fp;
}

/* The walk without the memo. */
static uint32_t plain_walk(const col_thread_t *t, const void *frame)
{
    uintptr_t ips[COL_MAX_DEPTH];
    unsigned flags = 0;
    int n = col_unwind_fp_plain(t, frame, ips, col_config.max_depth, &flags);
    return col_node_path(ips, n, (flags & PF_STACK_TRUNCATED) != 0);
}

uint32_t col_unwind_fp(col_thread_t *t, const void *frame, uint32_t guess)
{
    /* A stack other than the thread's own (a coroutine's, which may be
     * unmapped later) is walked without the memo: its checks, and the
     * recent-stacks cache's copies of them, would read it again. */
    col_fp_memo_t *m = col_fp_memo;
    int foreign = col_fp_foreign(t, (uintptr_t)frame);
    if (UT_UNLIKELY(foreign) || (UT_UNLIKELY(m == NULL) && (m = memo_new()) == NULL)) {
        if (foreign)
            __atomic_add_fetch(&foreign_walks, 1, __ATOMIC_RELAXED);
        return plain_walk(t, frame);
    }
    uintptr_t hi = t->stack_hi, fp = walk_start(frame, (uintptr_t)__builtin_frame_address(0), hi);
    if (fp == 0)
        return 0;
    uintptr_t start = fp;
again:;
    uint32_t epoch = col_modules_epoch();
    if (m->epoch != epoch) { /* other code ranges: nothing of the memo holds */
        m->m = 0;
        m->code_lo = m->code_hi = 0;
    }
    int max = col_config.max_depth;
    /* i scans the memo from the inside out as the walk goes up the stack */
    int i = m->m - 1;
    int keep = -1; /* the memo's visits w[0..keep] are this stack's outer part */
    int k = 0, frames = 0, end = COL_FP_END_NEXT, stop = 0;
    for (;;) {
        while (i >= 0 && m->w[i].fp < fp)
            i--;
        if (i >= 0 && m->w[i].fp == fp) {
            /* the rest may be the previous walk's, if the depths agree:
             * a cut walk only with the same frames cut, else within max */
            int total = frames + frames_upto(m, i);
            if ((m->end == COL_FP_END_TRUNC ? total == max : total <= max) &&
                memo_holds_from(m, i, hi)) {
                keep = i;
                break;
            }
        }
        if (UT_UNLIKELY(k == m->cap))
            goto grow;
        const uintptr_t *f = (const uintptr_t *)fp;
        uintptr_t next = f[0], ra = f[1];
        m->tmp_fp[k] = fp;
        m->tmp_next[k] = next;
        m->tmp_ip[k++] = ra;
        if (ra == 0 || !is_code(ra, &m->code_lo, &m->code_hi)) {
            end = COL_FP_END_RA; /* rbp was not a frame pointer here */
            stop = 1;
            break;
        }
        if (frames == max) {
            end = COL_FP_END_TRUNC;
            stop = 1;
            break;
        }
        frames++;
        if (!col_fp_next_ok(fp, next, hi)) {
            end = COL_FP_END_NEXT;
            break;
        }
        fp = next;
    }
    /* the node the new frames hang under, and where they go in the memo;
     * the visit the walk stopped at (reason RA, NEXT or TRUNC) had only
     * its return address read in the end */
    uint32_t node;
    int at, last = k - 1;
    if (keep >= 0) {
        if (UT_UNLIKELY(keep + 1 + k > m->cap))
            goto grow;
        node = m->w[keep].node;
        at = keep + 1;
        last = -1; /* it went on from every new visit */
    } else {
        node = end == COL_FP_END_TRUNC ? COL_NODE_TRUNC : 0;
        at = 0;
        m->stop = stop;
        m->end = end;
        m->epoch = epoch;
        if (stop) { /* the stopping visit is the outermost, not a frame */
            k--;
            m->w[0] = (col_fp_visit_t){.fp = m->tmp_fp[k], .node = node};
            col_chk_word(&m->chk[0], m->tmp_fp[k] + 8, m->tmp_ip[k]);
            at = 1;
        }
    }
    /* visits [0, k) are frames now */
    col_node_stack(node, m->tmp_ip, k, guess, m->tmp_node);
    for (int j = k - 1; j >= 0; j--, at++) {
        m->w[at] = (col_fp_visit_t){.fp = m->tmp_fp[j], .node = m->tmp_node[j]};
        if (j == last)
            col_chk_word(&m->chk[at], m->tmp_fp[j] + 8, m->tmp_ip[j]);
        else
            col_chk_pair(&m->chk[at], m->tmp_fp[j], m->tmp_next[j], m->tmp_ip[j]);
    }
    m->m = at;
    if (k)
        return m->tmp_node[0];
    return at > m->stop ? node : 0;
grow: /* the memo is too small for this stack: walk again in a bigger one */
    if ((m = memo_grow(m)) == NULL)
        return plain_walk(t, frame);
    fp = start;
    goto again;
}

/* Does the walk stop at a frame whose return address is ra: is ra not
 * code?  The answer for the thread's last such ra is kept in its memo, by
 * modules epoch: a thread's outermost frames do not change. */
static int stops_at(uintptr_t ra)
{
    if (ra == 0)
        return 1;
    col_fp_memo_t *m = col_fp_memo;
    uint32_t epoch = col_modules_epoch(); /* before the ranges it stands for */
    if (m && m->stop_ra == ra && m->stop_epoch == epoch)
        return 1;
    uintptr_t lo, hi;
    if (col_modules_code_range(ra, &lo, &hi))
        return 0;
    if (m) {
        m->stop_ra = ra;
        m->stop_epoch = epoch;
    }
    return 1;
}

/* Do the words a walk read at depths 1..d of the guess, and past depth 1,
 * still hold?  Every load's address is known: none waits for another. */
UT_INLINE int guess_holds(const col_guess_t *gs, int d, uint32_t epoch)
{
    /* (the arrays in locals: the stack words read may alias gs, so the
     * compiler may otherwise load gs->want again at every frame) */
    const uintptr_t *fp = gs->fp;
    const col_v2_t *want = gs->want;
    col_v2_t d0 = {0, 0}, d1 = {0, 0};
    int k = 1;
    for (; k < d; k += 2) {
        d0 |= *(const col_v2u_t *)fp[k] ^ want[k];
        d1 |= *(const col_v2u_t *)fp[k + 1] ^ want[k + 1];
    }
    if (k == d)
        d0 |= *(const col_v2u_t *)fp[k] ^ want[k];
    d0 |= d1;
    if ((d0[0] | d0[1]) != 0)
        return 0;
    return gs->end_at == 0 ||
           (gs->end_epoch == epoch && ((const uintptr_t *)gs->end_at)[1] == gs->end_ra);
}

/* The walk of col_unwind_fp_plain, comparing each return address with
 * node g's frames instead of keeping it, and then checking that the walk
 * ends there.  The recorder asks this of the stack it guesses
 * (col_node_next): the one that came after the thread's previous stack
 * the last time.  Where stacks repeat in order but too many to cache
 * (recursion: binary trees), this costs a few instructions per frame,
 * less than the memo's checks of the kept frames and its bookkeeping of
 * the new ones.
 *
 * g's return addresses, by depth, come from the last guess's where the
 * two stacks join (col_guess_set): the walk compares each frame with an
 * array.  Where the walk reaches a frame at the address the last walk of
 * the same outer nodes found it (on the thread's own stack, whose bounds
 * are known), the words that walk read from there out are checked in
 * place of following the frame chain, whose loads each wait for the one
 * before: in binary-trees a walk follows one or two new frames and checks
 * the other fifteen.
 *
 * A return address equal to a node's is code without asking: it was when
 * an earlier walk made the node, and nothing that was code stops being
 * code until a module is unloaded.  After that, guesses are not taken. */
int col_unwind_fp_is(const col_thread_t *t, const void *frame, uint32_t g)
{
    col_fp_memo_t *m = col_fp_memo;
    if (m == NULL)
        return 0;
    /* cap - 1 is max_depth, or less while the memo is small: a deeper
     * guess is walked, which grows the memo */
    int depth = col_guess_depth(g, m->cap - 1);
    if (depth == 0 || col_modules_unloaded())
        return 0;
    col_guess_t *gs = &m->guess;
    col_guess_set(gs, g, depth);
    uint32_t epoch = col_modules_epoch(); /* before the ranges it stands for */
    uintptr_t hi = t->stack_hi, fp = 0;
    if (!col_fp_foreign(t, (uintptr_t)frame)) /* another stack is the plain walk's */
        fp = walk_start(frame, (uintptr_t)__builtin_frame_address(0), hi);
    if (fp == 0) {
        gs->valid = 0;
        return 0;
    }
    /* the words a walk of the thread's own stack read are kept for the
     * next walk: everything from any frame of it up to stack_hi is mapped */
    int v = gs->valid;
    gs->valid = 0;
    const uintptr_t *want = gs->ip;
    for (int d = depth;; d--) {
        if (d == v) {
            if (fp == gs->fp[d] && guess_holds(gs, d, epoch)) {
                gs->valid = depth;
                return 1;
            }
            v = 0;
        }
        const uintptr_t *f = (const uintptr_t *)fp;
        uintptr_t next = f[0], ra = f[1];
        if (ra != want[d])
            return 0;
        gs->fp[d] = fp;
        gs->want[d] = (col_v2_t){next, ra};
        if (!col_fp_next_ok(fp, next, hi)) {
            if (d != 1)
                return 0;
            gs->end_at = 0; /* the walk ends with this frame */
            break;
        }
        if (d == 1) {
            /* g's frames are all there; the walk goes no further (else it
             * is a deeper stack, or one the depth cap cuts) */
            uintptr_t end_ra = ((const uintptr_t *)next)[1];
            if (!stops_at(end_ra))
                return 0;
            gs->end_at = next;
            gs->end_ra = end_ra;
            gs->end_epoch = epoch;
            break;
        }
        fp = next;
    }
    gs->valid = depth;
    return 1;
}

/* The two words of the frame at fp (the caller's frame pointer and the
 * return address).  On the thread's own stack they are read.  On a
 * foreign one (col_fp_foreign), where a frame pointer may lead anywhere,
 * through process_vm_readv(2), which fails where nothing readable is
 * mapped (or, under a seccomp filter, which may forbid that call, through
 * a pipe: col_seccomp.c), unless they lie on *page, the page such a read
 * found readable last in this walk; 0 if they cannot be read (or no pipe
 * could be made: counted).  errno is kept. */
static int frame_words(uintptr_t fp, int foreign, uintptr_t *page, uintptr_t w[2])
{
    uintptr_t p = fp & ~(uintptr_t)4095, last = (fp + 15) & ~(uintptr_t)4095;
    if (!foreign || (p == *page && last == p)) {
        w[0] = ((const uintptr_t *)fp)[0];
        w[1] = ((const uintptr_t *)fp)[1];
        return 1;
    }
    if (__atomic_load_n(&col_seccomp, __ATOMIC_RELAXED)) {
        int rc = col_seccomp_read((const void *)fp, w, 2 * sizeof *w);
        if (rc < 0)
            __atomic_add_fetch(&seccomp_cuts, 1, __ATOMIC_RELAXED);
        if (rc <= 0)
            return 0;
    } else {
        int saved = errno;
        struct iovec local = {.iov_base = w, .iov_len = 2 * sizeof *w};
        struct iovec remote = {.iov_base = (void *)fp, .iov_len = 2 * sizeof *w};
        ssize_t got = process_vm_readv(col_proc.pid, &local, 1, &remote, 1, 0); /* kept across fork */
        errno = saved;
        if (got != (ssize_t)(2 * sizeof *w))
            return 0;
    }
    if (last == p)
        *page = p;
    return 1;
}

/* The walk without the memo (the reference of HEAPSCOPE_UNWIND_VERIFY,
 * the walk of a thread whose memo cannot be mapped, and the walk of a
 * foreign stack, whose words are read with frame_words and whose frame
 * pointers are only required to go up: an unreadable frame ends it). */
int col_unwind_fp_plain(const col_thread_t *t, const void *frame, uintptr_t *ips, int max,
                        unsigned *flags)
{
    uintptr_t lo = (uintptr_t)__builtin_frame_address(0);
    int foreign = col_fp_foreign(t, (uintptr_t)frame);
    uintptr_t hi = foreign ? UINTPTR_MAX : t->stack_hi;
    uintptr_t fp = walk_start(frame, lo, hi);
    if (fp == 0)
        return 0;
    /* the page of our own frame is readable: the walk starts on it */
    uintptr_t page = lo & ~(uintptr_t)4095, code_lo = 0, code_hi = 0;
    int n = 0;
    for (;;) {
        uintptr_t w[2];
        if (!frame_words(fp, foreign, &page, w))
            return n;
        uintptr_t next = w[0], ra = w[1];
        if (ra == 0 || !is_code(ra, &code_lo, &code_hi))
            return n;
        if (n == max) {
            *flags |= PF_STACK_TRUNCATED;
            return n;
        }
        ips[n++] = ra;
        if (!col_fp_next_ok(fp, next, hi))
            return n;
        fp = next;
    }
}
