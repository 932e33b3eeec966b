/* col_dwarf.c - the DWARF unwinder's fast path: a per-thread cache of one
 * rule per return address, and the walk itself (see col_dwarf.h).
 *
 * A step: look the return address up in the thread's direct-mapped cache
 * (a miss parses .eh_frame, col_dwarf_parse.c), compute the CFA from rsp or
 * rbp, load the caller's return address from CFA-8 and, if the frame saved
 * it, rbp.  Every load is checked against the thread's stack bounds and the
 * CFA must grow, so a bad rule ends the walk instead of the program.
 *
 * The module table (text ranges and their .eh_frame_hdr) is rebuilt on a
 * cache miss outside every known module and after dlopen/dlclose; old
 * tables stay mapped for threads still reading them.  Memory comes from
 * mmap only. */
#define _GNU_SOURCE
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "collect/col_dwarf.h"
#include "collect/col_internal.h"
#include "common/ut_compiler.h"

#define MAX_MODULES 1024
#define CACHE_BITS 12
#define CACHE_SIZE (1u << CACHE_BITS)

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

/* The previous walk of this thread, frame by frame: the state (ip, sp,
 * bp) at each frame and the two stack words its step read. */
#define MEMO_MAX 256
enum { MEMO_NONE = 0, MEMO_LAST, MEMO_ZERO, MEMO_TRUNC };

typedef struct cfi_memo {
    uint64_t token; /* names this walk's result */
    int n;
    int end; /* how the walk ended after frame n-1; MEMO_NONE: no memo */
    uintptr_t ip[MEMO_MAX], sp[MEMO_MAX], bp[MEMO_MAX];
    /* the words frame i's step read and what they held; a frame that did
     * not read rbp repeats its return-address slot, and the last frame of
     * a walk that ended at its rule points at `memo_nothing`, so that the
     * check needs no branch per frame */
    uintptr_t ra_slot[MEMO_MAX], bp_slot[MEMO_MAX];
    uintptr_t next_ip[MEMO_MAX], next_bp[MEMO_MAX];
} cfi_memo_t;

typedef struct cfi_cache {
    unsigned gen;
    uint64_t tokens; /* last token handed out */
    int cur; /* memo[cur] is the previous walk */
    cfi_memo_t memo[2];
    cache_entry_t e[CACHE_SIZE];
} cfi_cache_t;

static cfi_modules_t *modules;
static unsigned generation = 1;
static int rebuild_lock;
static _Thread_local cfi_cache_t *tls_cache __attribute__((tls_model("initial-exec")));
static _Thread_local int tls_exited __attribute__((tls_model("initial-exec")));


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
    cfi_modules_t *x = col_vm_map(sizeof *x);
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
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
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

UT_COLD static cfi_rule_t rule_miss(cache_entry_t *e, uintptr_t ra)
{
    cfi_rule_t rule = {0};
    const cfi_module_t *m = module_of(ra - 1);
    if (m && m->hdr)
        rule = col_dwarf_rule_for(ra - 1, m->hdr, m->seg_lo, m->seg_hi);
    e->ip = ra;
    e->rule = rule;
    return rule;
}

/* At thread exit: give the thread's cache back.  Walks after this point
 * (glibc frees TLS late) fall back to libunwind instead of mapping anew. */
void col_dwarf_thread_exit(void)
{
    tls_exited = 1;
    if (tls_cache) {
        munmap(tls_cache, sizeof *tls_cache);
        tls_cache = NULL;
    }
}

UT_COLD static cfi_cache_t *cache_new(void)
{
    if (tls_exited)
        return NULL;
    cfi_cache_t *c = col_vm_map(sizeof *c);
    tls_cache = c;
    return c;
}

UT_INLINE cfi_rule_t rule_of(cfi_cache_t *c, uintptr_t ra)
{
    cache_entry_t *e = &c->e[(ra ^ (ra >> CACHE_BITS)) & (CACHE_SIZE - 1)];
    if (UT_LIKELY(e->ip == ra))
        return e->rule;
    return rule_miss(e, ra);
}

UT_INLINE int in_stack(uintptr_t a, uintptr_t lo, uintptr_t hi)
{
    return a >= lo && a <= hi - sizeof(uintptr_t) && (a & 7) == 0;
}

/* Verify that the memo's walk from frame j on is still the stack: the
 * state at j matched, and each later state follows from the rule (same ip,
 * same cached rule) and the words the step read, so equal words mean equal
 * frames.  The words lie between the current frame and the stack top. */
static const uintptr_t memo_nothing = 0;

UT_INLINE int memo_verify(const cfi_memo_t *m, int j)
{
    uintptr_t diff = 0;
    for (int i = j; i < m->n; i++)
        diff |= (*(const uintptr_t *)m->ra_slot[i] ^ m->next_ip[i]) |
                (*(const uintptr_t *)m->bp_slot[i] ^ m->next_bp[i]);
    return diff == 0;
}

UT_NOINLINE static int dwarf_walk(const void *start, uintptr_t *ips, int max, uintptr_t skip_lo,
                                  uintptr_t skip_hi,
                                  uintptr_t stack_lo, uintptr_t stack_hi, int *truncated,
                                  uint64_t expect, uint64_t *token)
{
    *token = 0;
    cfi_cache_t *c = tls_cache;
    if (UT_UNLIKELY(c == NULL) && (c = cache_new()) == NULL)
        return -1;
    unsigned gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
    if (UT_UNLIKELY(c->gen != gen)) {
        memset(c->e, 0, sizeof c->e);
        c->memo[0].end = c->memo[1].end = MEMO_NONE;
        c->gen = gen;
    }
    if (max > MEMO_MAX)
        max = MEMO_MAX;
    /* start's frame has a frame pointer: begin at its caller */
    uintptr_t self = (uintptr_t)__builtin_frame_address(0);
    uintptr_t fp = (uintptr_t)start;
    if (stack_hi == UINTPTR_MAX || !in_stack(self, stack_lo, stack_hi) || fp < self ||
        !in_stack(fp, stack_lo, stack_hi) || !in_stack(fp + 8, stack_lo, stack_hi))
        return -1; /* unknown stack, or an alternate signal stack */
    stack_lo = self; /* everything the walk reads lies above our own frame */
    uintptr_t sp = fp + 16;
    uintptr_t ip = ((const uintptr_t *)fp)[1];
    uintptr_t bp = ((const uintptr_t *)fp)[0];
    *truncated = 0;
    /* heapscope's own frames (built with frame pointers) by the rbp chain:
     * no rule lookups for the hook and the recording functions */
    while (ip >= skip_lo && ip < skip_hi) {
        if (!in_stack(bp, stack_lo, stack_hi) || !in_stack(bp + 8, stack_lo, stack_hi) || bp < sp)
            return -1;
        ip = ((const uintptr_t *)bp)[1];
        sp = bp + 16;
        bp = ((const uintptr_t *)bp)[0];
    }
    cfi_memo_t *old = &c->memo[c->cur], *nw = &c->memo[c->cur ^ 1];
    int n = 0, j = 0;
    for (;;) {
        /* the rest of the stack may be the previous walk's */
        if (old->end != MEMO_NONE) {
            while (j < old->n && old->sp[j] < sp)
                j++;
            if (j < old->n && old->sp[j] == sp && old->ip[j] == ip && old->bp[j] == bp &&
                memo_verify(old, j)) {
                if (n == 0 && j == 0) { /* the very same stack: keep the memo */
                    if (old->token != expect)
                        memcpy(ips, old->ip, (size_t)old->n * sizeof *ips);
                    *truncated = old->end == MEMO_TRUNC;
                    *token = old->token;
                    return old->n;
                }
                int i = j;
                for (; i < old->n && n < max; i++, n++) {
                    ips[n] = nw->ip[n] = old->ip[i];
                    nw->sp[n] = old->sp[i];
                    nw->bp[n] = old->bp[i];
                    nw->ra_slot[n] = old->ra_slot[i];
                    nw->bp_slot[n] = old->bp_slot[i];
                    nw->next_ip[n] = old->next_ip[i];
                    nw->next_bp[n] = old->next_bp[i];
                }
                if (i < old->n || old->end != MEMO_TRUNC || n == max) {
                    *truncated = i < old->n || old->end == MEMO_TRUNC;
                    nw->n = n;
                    nw->end = *truncated ? MEMO_TRUNC : old->end;
                    nw->token = *token = ++c->tokens;
                    c->cur ^= 1;
                    return n;
                }
                /* the previous walk was cut by the depth cap sooner than
                 * this one is: go on walking from the state after it */
                ip = nw->next_ip[n - 1];
                bp = nw->bp_slot[n - 1] == nw->ra_slot[n - 1] ? nw->bp[n - 1] /* rbp kept */
                                                              : nw->next_bp[n - 1];
                sp = nw->ra_slot[n - 1] + 8;
                j = old->n;
                continue;
            }
        }
        if (n == max) {
            *truncated = 1;
            nw->end = MEMO_TRUNC;
            break;
        }
        ips[n] = nw->ip[n] = ip;
        nw->sp[n] = sp;
        nw->bp[n] = bp;
        nw->ra_slot[n] = nw->bp_slot[n] = (uintptr_t)&memo_nothing;
        nw->next_ip[n] = nw->next_bp[n] = 0;
        n++;
        cfi_rule_t r = rule_of(c, ip);
        if (r.kind == CFI_RULE_LAST) {
            nw->end = MEMO_LAST;
            break;
        }
        if (UT_UNLIKELY(r.kind != CFI_RULE_OK))
            return -1;
        uintptr_t cfa = (r.cfa_rbp ? bp : sp) + (uintptr_t)(intptr_t)r.cfa_off;
        if (UT_UNLIKELY(cfa <= sp || !in_stack(cfa - 8, stack_lo, stack_hi)))
            return -1;
        if (r.rbp_saved) {
            uintptr_t at = cfa + (uintptr_t)(intptr_t)r.rbp_off;
            if (UT_UNLIKELY(!in_stack(at, stack_lo, stack_hi)))
                return -1;
            bp = *(const uintptr_t *)at;
            nw->bp_slot[n - 1] = at;
        } else {
            nw->bp_slot[n - 1] = cfa - 8;
        }
        ip = *(const uintptr_t *)(cfa - 8);
        sp = cfa;
        nw->ra_slot[n - 1] = cfa - 8;
        nw->next_ip[n - 1] = ip;
        nw->next_bp[n - 1] = r.rbp_saved ? bp : ip;
        if (ip == 0) {
            nw->end = MEMO_ZERO;
            break;
        }
    }
    nw->n = n;
    nw->token = *token = ++c->tokens;
    c->cur ^= 1;
    return n;
}

/* The very-same-stack case, checked first and small (col_record_alloc):
 * the hook's caller frame is the previous walk's first frame (same sp,
 * return address and rbp; that frame was checked to lie in this thread's
 * stack and is never one of heapscope's own), every word the walk followed
 * is unchanged, so the walk would repeat itself, and it is the walk named
 * token. */
int col_dwarf_same(const void *start, uint64_t token)
{
    const cfi_cache_t *c = tls_cache;
    if (UT_LIKELY(c != NULL) && c->gen == __atomic_load_n(&generation, __ATOMIC_ACQUIRE)) {
        const cfi_memo_t *old = &c->memo[c->cur];
        const uintptr_t *f = (const uintptr_t *)start;
        return old->token == token && old->end != MEMO_NONE && old->n > 0 &&
               old->sp[0] == (uintptr_t)start + 16 && old->ip[0] == f[1] &&
               old->bp[0] == f[0] && memo_verify(old, 0);
    }
    return 0;
}

/* The walk itself; the very-same-stack case is col_dwarf_same's, checked
 * first by the caller (col_record_alloc), and again inside dwarf_walk. */
int col_dwarf_backtrace(const void *start, uintptr_t *ips, int max, uintptr_t skip_lo,
                        uintptr_t skip_hi, uintptr_t stack_lo, uintptr_t stack_hi, int *truncated,
                        uint64_t expect, uint64_t *token)
{
    return dwarf_walk(start, ips, max, skip_lo, skip_hi, stack_lo, stack_hi, truncated, expect,
                      token);
}
