/* col_dwarf.c - the DWARF unwinder's fast path: a per-thread cache of one
 * rule per return address, the memo of the previous walk, the walk itself
 * (see col_dwarf.h), and the walk compared with the recorder's guess of
 * the stack (col_dwarf_is).
 *
 * A step: look the return address up in the thread's direct-mapped cache
 * (a miss parses .eh_frame, col_dwarf_rule.c), compute the CFA from rsp or
 * rbp, load the caller's return address from CFA-8 and, if the frame saved
 * it, rbp.  Every load is checked against the thread's stack bounds and the
 * CFA must grow, so a bad rule ends the walk instead of the program.
 *
 * The module table (text ranges and their .eh_frame_hdr) is rebuilt when
 * the module map changes (col_modules.c, before it moves to the next
 * epoch, which empties every thread's rules and memo); old tables stay
 * mapped for threads still reading them.  Memory comes from mmap only. */
#define _GNU_SOURCE
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "collect/col_dwarf.h"
#include "collect/col_internal.h"
#include "collect/col_memo.h"
#include "common/ut_compiler.h"

#define MAX_MODULES 1024
#define CACHE_BITS 10
#define CACHE_SIZE (1u << CACHE_BITS)                /* the table inside the cache */
#define CACHE_SMALL (4096 / sizeof(cache_entry_t)) /* a new thread's: one page */
#define CACHE_GROW_AFTER 16                         /* evictions before growing */
#define CACHE_MAX (1u << 14)                        /* a table of its own, at most */

typedef struct cfi_module {
    uintptr_t text_lo, text_hi; /* executable segment */
    uintptr_t hdr;              /* .eh_frame_hdr, 0 if none */
    uintptr_t seg_lo, seg_hi;   /* loaded segment holding it */
} cfi_module_t;

typedef struct cfi_modules {
    size_t n;
    cfi_module_t m[MAX_MODULES];
} cfi_modules_t;

typedef struct cache_entry {
    uintptr_t ip;
    cfi_rule_t rule;
} cache_entry_t;

/* A thread's rules and memo (col_memo.h), in one mapping with the memo's
 * arrays after them; memo.epoch is the modules' epoch of the rules cached.
 * The rules use their first page (CACHE_SMALL entries, mask) until
 * CACHE_GROW_AFTER lookups have evicted another address's rule, then all
 * CACHE_SIZE: the threads of most programs step through a few dozen
 * return addresses, and each thread's cache is memory the program pays
 * for (12 KB a thread less; an interpreter's threads grow theirs at
 * once).  A thread that then evicts as many rules as the table holds
 * runs more code than it fits (a compiler: cc1plus steps through ~13,000
 * return addresses, and its 1,024 entries parsed .eh_frame 73,500 times
 * for 273,000 allocations): its rules move to a table of their own, four
 * times as large, and again, up to CACHE_MAX (256 KB).  Likewise the
 * memo's arrays hold as many frames as fit the page after the rules
 * (memo.max, about ten) until a walk needs more; then the whole is
 * mapped again for max_depth frames, the rules copied (a page and a half
 * less a thread where the stacks are shallow). */
typedef struct cfi_cache {
    cache_entry_t e[CACHE_SIZE]; /* first, so that the small cache is one page */
    cache_entry_t *tab;          /* e, or a mapping of mask + 1 entries */
    uint32_t mask, evictions;    /* evictions since the table last grew */
    col_cfi_memo_t memo;
} cfi_cache_t;
_Static_assert(CACHE_SMALL * sizeof(cache_entry_t) == 4096, "the small cache is one page");

/* Rules read from .eh_frame, and the largest table, for HEAPSCOPE_STATS. */
static unsigned long rules_parsed;
static uint32_t rules_table_max;

/* The memo's arrays for max frames after the cache (or, with c NULL, the
 * mapping's size). */
static size_t cache_carve(cfi_cache_t *c, int max)
{
    size_t off = sizeof *c, n = (size_t)max;
    col_cfi_frame_t *w = col_memo_layout(c, &off, n * sizeof *w);
    col_chk_t *chk = col_memo_layout(c, &off, 2 * n * sizeof *chk);
    col_cfi_new_t *tmp = col_memo_layout(c, &off, n * sizeof *tmp);
    uintptr_t *ip = col_memo_layout(c, &off, n * sizeof *ip);
    uint32_t *node = col_memo_layout(c, &off, n * sizeof *node);
    /* the guess's, by depth 1..max */
    uintptr_t *g_ip = col_memo_layout(c, &off, (n + 1) * sizeof *g_ip);
    uint32_t *g_node = col_memo_layout(c, &off, (n + 1) * sizeof *g_node);
    col_cfi_step_t *g_st = col_memo_layout(c, &off, (n + 1) * sizeof *g_st);
    col_chk_t *g_chk = col_memo_layout(c, &off, (n + 1) * sizeof *g_chk);
    col_chk_t *g_chk2 = col_memo_layout(c, &off, (n + 1) * sizeof *g_chk2);
    if (c) {
        c->memo.guess.g.ip = g_ip;
        c->memo.guess.g.node = g_node;
        c->memo.guess.st = g_st;
        c->memo.guess.chk = g_chk;
        c->memo.guess.chk2 = g_chk2;
        c->memo.max = max;
        c->memo.w = w;
        c->memo.chk = chk;
        c->memo.tmp = tmp;
        c->memo.tmp_ip = ip;
        c->memo.tmp_node = node;
    }
    return off;
}

static cfi_modules_t *modules;
static int rebuild_lock;
static _Thread_local cfi_cache_t *tls_cache __attribute__((tls_model("initial-exec")));
_Thread_local col_cfi_memo_t *col_cfi_memo __attribute__((tls_model("initial-exec")));


static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    cfi_modules_t *x = arg;
    uintptr_t hdr = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    uintptr_t seg_lo = 0, seg_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && hdr >= a && hdr < a + ph->p_memsz) {
            seg_lo = a;
            seg_hi = a + ph->p_memsz;
        }
    }
    for (int i = 0; i < info->dlpi_phnum && x->n < MAX_MODULES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        cfi_module_t *m = &x->m[x->n++];
        m->text_lo = info->dlpi_addr + ph->p_vaddr;
        m->text_hi = m->text_lo + ph->p_memsz;
        m->hdr = seg_lo ? hdr : 0;
        m->seg_lo = seg_lo;
        m->seg_hi = seg_hi;
    }
    return 0;
}

/* Rebuild the module table (cold, any thread). */
static void modules_rebuild(void)
{
    if (__atomic_exchange_n(&rebuild_lock, 1, __ATOMIC_ACQUIRE))
        return; /* another thread is at it; this call falls back */
    cfi_modules_t *x = col_vm_map_for(COL_VM_UNWIND, sizeof *x);
    if (x) {
        x->n = 0;
        dl_iterate_phdr(add_module, x);
        __atomic_store_n(&modules, x, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&rebuild_lock, 0, __ATOMIC_RELEASE);
}

int col_dwarf_init(void)
{
    modules_rebuild();
    return modules ? 0 : -1;
}

void col_dwarf_modules_changed(void)
{
    modules_rebuild();
}

/* The module whose code holds ip, or NULL.  A miss does not rebuild the
 * table: that happens when the module map changes (dlopen/dlclose and the
 * writer's periodic scan), so code outside every module (a JIT) cannot
 * make each lookup allocate a new table. */
static const cfi_module_t *module_of(uintptr_t ip)
{
    const cfi_modules_t *x = __atomic_load_n(&modules, __ATOMIC_ACQUIRE);
    for (size_t i = 0; x && i < x->n; i++)
        if (ip >= x->m[i].text_lo && ip < x->m[i].text_hi)
            return &x->m[i];
    return NULL;
}

/* The entry of ra in a table of mask + 1 entries. */
UT_INLINE cache_entry_t *rule_slot(cache_entry_t *tab, uint32_t mask, uintptr_t ra)
{
    return &tab[(ra ^ (ra >> CACHE_BITS)) & mask];
}

/* The entry of ra in c. */
UT_INLINE cache_entry_t *rule_entry(cfi_cache_t *c, uintptr_t ra)
{
    return rule_slot(c->tab, c->mask, ra);
}

/* A thread's table now holds n entries: the largest, for HEAPSCOPE_STATS. */
static void table_max_raise(uint32_t n)
{
    for (uint32_t m = __atomic_load_n(&rules_table_max, __ATOMIC_RELAXED); m < n;)
        if (__atomic_compare_exchange_n(&rules_table_max, &m, n, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            break;
}

/* The table's entries, if it is a mapping of its own, unmapped. */
static void table_unmap(cfi_cache_t *c)
{
    if (c->tab != c->e)
        col_vm_unmap(c->tab, (c->mask + 1) * sizeof c->tab[0]);
}

/* The table grows: the small one becomes all of e, its other pages
 * written first (see cache_new) and its rules dropped, as their entries
 * move; a full e (or a table of its own) moves to a mapping four times as
 * large, every page mapped at once (a lookup that read a page never
 * written would map the zero page, and the store after it cost a TLB
 * flush), with its rules.  Nothing changes if that cannot be mapped. */
UT_COLD static void cache_grow(cfi_cache_t *c)
{
    c->evictions = 0;
    if (c->mask < CACHE_SIZE - 1) {
        for (size_t i = CACHE_SMALL; i < CACHE_SIZE; i += CACHE_SMALL)
            UT_WRITE_FIRST(c->e[i]);
        memset(c->e, 0, CACHE_SMALL * sizeof c->e[0]);
        c->mask = CACHE_SIZE - 1;
        table_max_raise(CACHE_SIZE);
        return;
    }
    uint32_t n = (c->mask + 1) * 4;
    cache_entry_t *t = col_vm_map_populated(COL_VM_UNWIND, n * sizeof *t);
    if (t == NULL)
        return;
    for (uint32_t i = 0; i <= c->mask; i++)
        if (c->tab[i].ip != 0)
            *rule_slot(t, n - 1, c->tab[i].ip) = c->tab[i];
    table_unmap(c);
    c->tab = t;
    c->mask = n - 1;
    table_max_raise(n);
}

/* ra's entry in c, filled with its rule (kind BAD where there is none);
 * e (its entry) held another address's rule or none.  A table that has
 * evicted CACHE_GROW_AFTER rules (the small one) or as many as it holds
 * grows. */
UT_COLD static cache_entry_t *rule_miss(cfi_cache_t *c, cache_entry_t *e, uintptr_t ra)
{
    if (e->ip != 0 && c->mask < CACHE_MAX - 1 &&
        ++c->evictions >= (c->mask < CACHE_SIZE - 1 ? CACHE_GROW_AFTER : c->mask + 1)) {
        cache_grow(c);
        e = rule_entry(c, ra);
    }
    cfi_rule_t rule = {0};
    const cfi_module_t *m = module_of(ra - 1);
    if (m && m->hdr)
        rule = col_dwarf_rule_for(ra - 1, m->hdr, m->seg_lo, m->seg_hi);
    if (col_config.stats) /* a line every thread would write otherwise */
        __atomic_fetch_add(&rules_parsed, 1, __ATOMIC_RELAXED);
    e->ip = ra;
    e->rule = rule;
    return e;
}

/* With HEAPSCOPE_STATS=1, at exit, if any thread walked by DWARF rules:
 * how many rules were read from .eh_frame, and the largest table. */
void col_dwarf_report(void)
{
    unsigned long parsed = __atomic_load_n(&rules_parsed, __ATOMIC_RELAXED);
    uint32_t table_max = __atomic_load_n(&rules_table_max, __ATOMIC_RELAXED);
    if (col_config.stats && table_max != 0)
        col_message_add("HEAPSCOPE_STATS: DWARF rules: %lu read from .eh_frame, largest rule "
                        "table of a thread %u entries",
                        parsed, (unsigned)table_max);
}

/* At thread exit: the thread's cache to t, its rules kept (memo.epoch
 * says which modules they are of) and its walk forgotten (the next
 * owner's stack is another); unmapped if t has one already.  Walks after
 * this point (glibc frees TLS late) fall back to libunwind instead of
 * mapping anew. */
void col_dwarf_thread_exit(col_thread_t *t)
{
    cfi_cache_t *c = tls_cache;
    if (!c)
        return;
    col_cfi_memo = NULL;
    tls_cache = NULL;
    int max = c->memo.max;
    if (t->unwind_cfi) {
        table_unmap(c);
        col_vm_unmap(c, cache_carve(NULL, max));
        return;
    }
    uint32_t epoch = c->memo.epoch;
    memset(&c->memo, 0, sizeof c->memo);
    cache_carve(c, max);
    c->memo.epoch = epoch;
    t->unwind_cfi = c;
}

/* t's cache, if this thread has none yet. */
void col_dwarf_thread_attach(col_thread_t *t)
{
    if (!tls_cache && t->unwind_cfi) {
        tls_cache = t->unwind_cfi;
        col_cfi_memo = &tls_cache->memo;
        t->unwind_cfi = NULL;
    }
}

/* The thread's cache is c, or NULL. */
static cfi_cache_t *cache_set(cfi_cache_t *c)
{
    tls_cache = c;
    col_cfi_memo = c ? &c->memo : NULL;
    return c;
}

/* A cache whose memo holds max frames, or NULL. */
static cfi_cache_t *cache_map(int max)
{
    cfi_cache_t *c = col_vm_map_for(COL_VM_UNWIND, cache_carve(NULL, max));
    if (c)
        cache_carve(c, max);
    return c;
}

/* A walk needs more frames than c's memo holds: c replaced by a cache
 * whose memo holds max_depth, with c's rules and an empty memo (it is only
 * a cache of the last walk); NULL, c kept, if it cannot be mapped. */
UT_COLD static cfi_cache_t *memo_grow(cfi_cache_t *c)
{
    cfi_cache_t *g = cache_map(col_config.max_depth);
    if (g == NULL)
        return NULL;
    if (c->tab == c->e)
        memcpy(g->e, c->e, (c->mask + 1) * sizeof c->e[0]); /* the pages in use */
    g->tab = c->tab == c->e ? g->e : c->tab;
    g->mask = c->mask;
    g->evictions = c->evictions;
    g->memo.epoch = c->memo.epoch;
    col_vm_unmap(c, cache_carve(NULL, c->memo.max));
    return cache_set(g);
}

UT_COLD static cfi_cache_t *cache_new(void)
{
    if (col_tls_dead)
        return NULL;
    int max = col_config.max_depth;
    while (max > 2 && cache_carve(NULL, max) > sizeof(cache_entry_t) * CACHE_SIZE + 4096)
        max--;
    cfi_cache_t *c = cache_map(max);
    if (c) {
        /* no rules yet, so none of another epoch: the walk need not clear
         * them.  Their page is written before the first lookup reads it: a
         * lookup maps the zero page, and the rule it then stores replaces
         * it with a TLB flush on every CPU the program runs on
         * (UT_WRITE_FIRST); a recycled state keeps it
         * (col_dwarf_thread_exit). */
        UT_WRITE_FIRST(c->e[0]);
        c->tab = c->e;
        c->mask = CACHE_SMALL - 1;
        table_max_raise(CACHE_SMALL);
        c->memo.epoch = col_modules_epoch();
    }
    return cache_set(c);
}

/* The rule of ra, in its cache entry: read field by field where it is (a
 * copy of the packed struct costs a dozen instructions to unpack).  Good
 * until the next call (which may grow the cache). */
UT_INLINE const cfi_rule_t *rule_of(cfi_cache_t *c, uintptr_t ra)
{
    cache_entry_t *e = rule_entry(c, ra);
    if (UT_UNLIKELY(e->ip != ra))
        e = rule_miss(c, e, ra);
    return &e->rule;
}

/* A word at a lies in [lo, hi). */
UT_INLINE int in_stack(uintptr_t a, uintptr_t lo, uintptr_t hi)
{
    return a - lo <= hi - sizeof(uintptr_t) - lo;
}

/* The first state of a walk from start (a frame of heapscope's own, with
 * a frame pointer): its caller's, past heapscope's frames ([skip_lo,
 * skip_hi)) by the rbp chain, with no rule lookups for the hook and the
 * recording functions.  0 if start is not on the thread's known stack
 * (an alternate signal stack) or a link is not plausible.  *lo becomes
 * the walker's own frame: everything a walk reads lies above it. */
UT_INLINE int walk_start(const void *start, uintptr_t skip_lo, uintptr_t skip_hi, uintptr_t *lo,
                         uintptr_t hi, uintptr_t self, uintptr_t *ip, uintptr_t *sp, uintptr_t *bp)
{
    uintptr_t fp = (uintptr_t)start;
    if (hi == UINTPTR_MAX || !in_stack(self, *lo, hi) || fp < self || !in_stack(fp, *lo, hi) ||
        !in_stack(fp + 8, *lo, hi))
        return 0;
    *lo = self;
    *sp = fp + 16;
    *ip = ((const uintptr_t *)fp)[1];
    *bp = ((const uintptr_t *)fp)[0];
    while (*ip >= skip_lo && *ip < skip_hi) {
        uintptr_t b = *bp;
        if (!in_stack(b, *lo, hi) || !in_stack(b + 8, *lo, hi) || b < *sp)
            return 0;
        *ip = ((const uintptr_t *)b)[1];
        *sp = b + 16;
        *bp = ((const uintptr_t *)b)[0];
    }
    return 1;
}

/* Does the walk end at a frame of rule r (not OK) found with rbp = bp:
 * its rule ends the stack, or no FDE covers it and bp is 0 (CFI_RULE_NONE,
 * as libunwind has it)?  Else the stack is libunwind's.  *reads_bp: ~0
 * if the answer read bp (NONE), else 0. */
UT_INLINE int rule_ends(const cfi_rule_t *r, uintptr_t bp, uintptr_t *reads_bp)
{
    *reads_bp = r->kind == CFI_RULE_NONE ? ~(uintptr_t)0 : 0;
    return r->kind == CFI_RULE_LAST || (r->kind == CFI_RULE_NONE && bp == 0);
}

/* One step by rule r (kind OK) from the state (*ip, *sp, *bp) to the
 * caller's: the CFA from rsp or rbp, the return address at CFA - 8 and, if
 * the frame saved it, rbp (*bp_at: where, else 0).  0 if the CFA does not
 * grow or a word lies outside [lo, hi). */
UT_INLINE int cfi_step(const cfi_rule_t *r, uintptr_t lo, uintptr_t hi, uintptr_t *ip,
                       uintptr_t *sp, uintptr_t *bp, uintptr_t *bp_at)
{
    uintptr_t cfa = (r->cfa_rbp ? *bp : *sp) + (uintptr_t)(intptr_t)r->cfa_off;
    if (UT_UNLIKELY(cfa <= *sp || !in_stack(cfa - 8, lo, hi)))
        return 0;
    *ip = *(const uintptr_t *)(cfa - 8);
    *sp = cfa;
    *bp_at = 0;
    if (r->rbp_saved) {
        uintptr_t at = cfa + (uintptr_t)(intptr_t)r->rbp_off;
        if (UT_UNLIKELY(!in_stack(at, lo, hi)))
            return 0;
        *bp = *(const uintptr_t *)at;
        *bp_at = at;
    }
    return 1;
}

/* The checks of one step, which read the caller's return address
 * (next_ip) at ra_at and, if bp_at is not 0, its rbp (next_bp) at bp_at:
 * one 16-byte check in *c when the two lie side by side (the rbp compared
 * only under `used`: the caller's state reads it), else the return
 * address's in *c and, if the rbp is used, its own in *c2.  Returns how
 * many it wrote: 1 or 2.  The memo's walk (col_dwarf_stack) and the
 * guess's (guess_fill) both make their checks with it, in place. */
UT_INLINE int step_checks(col_chk_t *c, col_chk_t *c2, uintptr_t ra_at, uintptr_t bp_at,
                          uintptr_t next_ip, uintptr_t next_bp, uintptr_t used)
{
    if (bp_at == ra_at - 8) {
        col_chk_pair_masked(c, bp_at, next_bp, next_ip, used);
        return 1;
    }
    col_chk_word(c, ra_at, next_ip);
    if (bp_at == 0 || !used)
        return 1;
    col_chk_word(c2, bp_at, next_bp);
    return 2;
}

/* The bp mask of the state before a step (col_memo.h's bp_used): used if
 * the step's rule takes the CFA from rbp, or if the step left rbp to the
 * caller as it was and the caller's state (`used`) reads it. */
UT_INLINE uintptr_t step_used(uintptr_t cfa_rbp, uintptr_t bp_at, uintptr_t used)
{
    return cfa_rbp | (bp_at == 0 ? used : 0);
}

/* Would a walk that reaches w[i] (same ip, sp and bp) repeat the memo's
 * walk from there on?  Each later state follows from the rule (same ip,
 * same cached rule) and the words the step read, so equal words mean
 * equal frames.  w[i]'s own checks first: a frame at the same place with
 * other words is the common miss.  The words lie between the current
 * frame and the stack top. */
UT_INLINE int memo_holds_from(const col_cfi_memo_t *m, int i)
{
    const col_chk_t *own = &m->chk[i ? m->w[i - 1].chk_end : 0];
    return col_chk_hold(own, &m->chk[m->w[i].chk_end]) && col_chk_hold(m->chk, own);
}

/* The walk: from the hook's caller up, reusing the memo's outer frames
 * where the walk meets them (see col_dwarf.h). */
UT_NOINLINE uint32_t col_dwarf_stack(const void *start, int max, uintptr_t skip_lo,
                                     uintptr_t skip_hi, uintptr_t stack_lo, uintptr_t stack_hi,
                                     uint32_t guess)
{
    cfi_cache_t *c = tls_cache;
    if (UT_UNLIKELY(c == NULL) && (c = cache_new()) == NULL)
        return COL_UNWIND_FAIL;
    if (max > col_config.max_depth) /* what a grown memo holds */
        max = col_config.max_depth;
    uintptr_t stack_lo0 = stack_lo;
again:;
    uint32_t epoch = col_modules_epoch();
    if (UT_UNLIKELY(c->memo.epoch != epoch)) {
        memset(c->tab, 0, (c->mask + 1) * sizeof c->tab[0]); /* the pages in use */
        c->memo.m = 0;
        c->memo.epoch = epoch;
    }
    stack_lo = stack_lo0;
    col_cfi_memo_t *m = &c->memo;
    uintptr_t ip, sp, bp;
    if (!walk_start(start, skip_lo, skip_hi, &stack_lo, stack_hi,
                    (uintptr_t)__builtin_frame_address(0), &ip, &sp, &bp))
        goto fail; /* unknown stack, or an alternate signal stack */
    /* i scans the memo from the inside out as the walk goes up the stack */
    int i = m->m - 1, keep = -1, k = 0, end = COL_CFI_LAST;
    col_cfi_new_t *tmp = m->tmp;
    for (;;) {
        while (i >= 0 && m->w[i].sp < sp)
            i--;
        if (i >= 0 && m->w[i].sp == sp && m->w[i].ip == ip &&
            (m->w[i].bp == bp || !m->w[i].bp_used)) {
            /* the rest may be the previous walk's, if the depths agree:
             * a cut walk only with the same frames cut, else within max */
            int total = k + i + 1;
            if ((m->end == COL_CFI_TRUNC ? total == max : total <= max) && memo_holds_from(m, i)) {
                keep = i;
                break;
            }
        }
        if (k == max) {
            end = COL_CFI_TRUNC;
            break;
        }
        if (UT_UNLIKELY(k == m->max))
            goto grow;
        m->tmp_ip[k] = ip;
        col_cfi_new_t *f = &tmp[k++];
        f->sp = sp;
        f->bp = bp;
        f->bp_at = 1; /* no step (yet) */
        const cfi_rule_t *r = rule_of(c, ip);
        if (UT_UNLIKELY(r->kind != CFI_RULE_OK)) {
            if (!rule_ends(r, bp, &f->cfa_rbp))
                goto fail;
            end = r->kind == CFI_RULE_LAST ? COL_CFI_LAST : COL_CFI_NOCFI;
            break;
        }
        f->cfa_rbp = -(uintptr_t)r->cfa_rbp;
        if (UT_UNLIKELY(!cfi_step(r, stack_lo, stack_hi, &ip, &sp, &bp, &f->bp_at)))
            goto fail;
        if (ip == 0) {
            end = COL_CFI_ZERO;
            break;
        }
    }
    /* the node the new frames hang under, and where they go in the memo */
    uint32_t node, nchk;
    uintptr_t used = 0; /* ~0 if the state the outermost new frame stepped to uses bp */
    int at;
    if (keep >= 0) {
        if (UT_UNLIKELY(keep + 1 + k > m->max))
            goto grow;
        node = m->w[keep].node;
        nchk = m->w[keep].chk_end;
        used = col_cfi_bp_mask(&m->w[keep]);
        at = keep + 1;
    } else {
        node = end == COL_CFI_TRUNC ? COL_NODE_TRUNC : 0;
        nchk = 0;
        at = 0;
        m->end = end;
    }
    /* frame j's step made its caller's state (frame j + 1's, or for the
     * outermost new frame the state the walk ended in): it read the return
     * address at cfa - 8 (the caller's sp - 8), and maybe rbp, which is
     * checked only if the caller's state uses it (`used`, col_memo.h);
     * then frame j's own bp is used if its rule takes the CFA from rbp, or
     * if it left rbp to its caller as it was and the caller uses it */
    col_node_stack(node, m->tmp_ip, k, guess, m->tmp_node);
    for (int j = k - 1; j >= 0; j--, at++) {
        const col_cfi_new_t *f = &tmp[j];
        node = m->tmp_node[j];
        if (f->bp_at != 1) {
            int last = j + 1 == k;
            uintptr_t ra_at = (last ? sp : tmp[j + 1].sp) - 8;
            uintptr_t next_ip = last ? ip : m->tmp_ip[j + 1], next_bp = last ? bp : tmp[j + 1].bp;
            nchk += (uint32_t)step_checks(&m->chk[nchk], &m->chk[nchk + 1], ra_at, f->bp_at,
                                          next_ip, next_bp, used);
            /* a saved rbp: the caller's came from the stack, not from here */
            used = step_used(f->cfa_rbp, f->bp_at, used);
        } else {
            used = f->cfa_rbp; /* the walk ended here: it read bp only without an FDE */
        }
        m->w[at] = (col_cfi_frame_t){.ip = m->tmp_ip[j], .sp = f->sp, .bp = f->bp, .node = node,
                                     .chk_end = (uint16_t)nchk, .bp_used = (uint16_t)used};
    }
    m->m = at;
    return at ? node : 0;
grow: /* the memo is too small for this stack: walk again in a bigger one */
    if ((c = memo_grow(c)) != NULL)
        goto again;
fail:
    m->m = 0; /* the caller's stack comes from libunwind: no memo of it */
    return COL_UNWIND_FAIL;
}

/* ---- the guess (col_dwarf_is) ------------------------------------------- */

/* Do the words the steps of depths 1..d read still hold? */
UT_INLINE int guess_holds(const col_cfi_guess_t *gs, int d)
{
    if (!col_chk_hold(&gs->chk[1], &gs->chk[d + 1]))
        return 0;
    return !gs->extra || col_chk_hold(&gs->chk2[1], &gs->chk2[d + 1]);
}

/* The checks of the steps of depths lo..hi, which this walk took, outer
 * first: as col_dwarf_stack makes the memo's, each step's saved rbp is
 * checked only where the state it made uses it (depth d - 1's `used`; the
 * state after depth 1's step is the end of the walk). */
static void guess_fill(col_cfi_guess_t *gs, int lo, int hi)
{
    uintptr_t used = lo > 1 ? gs->st[lo - 1].used : 0;
    for (int d = lo; d <= hi; d++) {
        col_cfi_step_t *s = &gs->st[d];
        col_chk_t *c = &gs->chk[d], *c2 = &gs->chk2[d];
        int n = 1;
        if (s->ra_at == 0) {
            col_chk_none(c);
            used = s->cfa_rbp; /* the walk ended here: it read bp only without an FDE */
        } else {
            uintptr_t next_ip = d > 1 ? gs->g.ip[d - 1] : 0;
            uintptr_t next_bp = d > 1 ? gs->st[d - 1].bp : 0;
            n = step_checks(c, c2, s->ra_at, s->bp_at, next_ip, next_bp, used);
            used = step_used(s->cfa_rbp, s->bp_at, used);
        }
        if (n == 2 && !gs->extra) { /* the first: every other depth's chk2 holds */
            for (int k = 1; k <= hi; k++)
                if (k != d)
                    col_chk_none(&gs->chk2[k]);
            gs->extra = 1;
        } else if (n == 1 && gs->extra) { /* (else no chk2 is read) */
            col_chk_none(c2);
        }
        s->used = used;
    }
}

/* The DWARF walk, comparing each frame with node g's instead of keeping
 * it, and checking that the walk ends after g's outermost frame: the
 * recorder asks this of the stack it guesses (col_node_next), as
 * col_unwind_fp_is does in fp mode.  Where the walk reaches a depth in
 * the state the last walk of the same outer frames found it, the words
 * that walk read from there out are checked in place of stepping on
 * (col_cfi_guess_t): in binary-trees a walk steps through one or two new
 * frames and checks the other fifteen, without the memo's bookkeeping of
 * the new frames or their node lookups.
 *
 * Not after a module was unloaded (an address that had a rule might now
 * have another), nor when the modules changed since this thread's rules
 * were cached (the memo's walk clears them first). */
int col_dwarf_is(const col_thread_t *t, const void *frame, uint32_t g)
{
    cfi_cache_t *c = tls_cache;
    int depth = col_guess_depth(g, col_config.max_depth);
    if (depth == 0 || c == NULL || col_modules_unloaded() ||
        c->memo.epoch != col_modules_epoch() || depth > c->memo.max)
        return 0;
    uintptr_t lo = t->stack_lo, hi = t->stack_hi, ip, sp, bp;
    if (!walk_start(frame, col_proc.self_lo, col_proc.self_hi, &lo, hi,
                    (uintptr_t)__builtin_frame_address(0), &ip, &sp, &bp))
        return 0;
    col_cfi_guess_t *gs = &c->memo.guess;
    col_guess_set(&gs->g, g, depth);
    /* depths 1..v hold what the last walk found there, until this walk
     * reaches depth v in another state: from then on it rewrites them */
    int v = gs->g.valid, d = depth;
    for (;; d--) {
        if (ip != gs->g.ip[d])
            return 0;
        col_cfi_step_t *s = &gs->st[d];
        if (d == v) {
            if (sp == s->sp && ((bp ^ s->bp) & s->used) == 0 && guess_holds(gs, d))
                break;
            gs->g.valid = v = 0;
            gs->extra = 0;
        }
        s->sp = sp;
        s->bp = bp;
        const cfi_rule_t *r = rule_of(c, ip);
        if (r->kind != CFI_RULE_OK) {
            /* the stack ends above g's outermost frame, or is libunwind's */
            if (d != 1 || !rule_ends(r, bp, &s->cfa_rbp))
                return 0;
            s->ra_at = s->bp_at = 0;
            break;
        }
        s->cfa_rbp = -(uintptr_t)r->cfa_rbp;
        if (!cfi_step(r, lo, hi, &ip, &sp, &bp, &s->bp_at))
            return 0;
        s->ra_at = sp - 8;
        if (d == 1) {
            if (ip != 0)
                return 0; /* the stack goes on past g's outermost frame */
            break;
        }
    }
    guess_fill(gs, v + 1, depth);
    gs->g.valid = depth;
    return 1;
}
