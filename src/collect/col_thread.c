/* col_thread.c - per-thread counter tables.
 *
 * A thread gets a col_thread_t on its first allocation or free: mmapped,
 * linked into a registry that is never unlinked (the writer walks it
 * without a lock), and recycled when the thread exits.  Its counters are
 * indexed by allocation site (col_site.c), in leaves of 1024 sites mapped
 * on first use that never move, so the writer reads them while the owner
 * counts, and an event finds its counters with two loads and no lookup.
 *
 * After a thread's key destructor ran, its late events (glibc frees its
 * TLS after that) go to one shared state under a spinlock. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collect/col_internal.h"
#include "common/ut_spin.h"

_Thread_local col_thread_t *col_tls_self __attribute__((tls_model("initial-exec")));
_Thread_local col_thread_t *col_tls_fast __attribute__((tls_model("initial-exec")));
_Thread_local int col_tls_dead __attribute__((tls_model("initial-exec")));
_Thread_local uintptr_t col_tls_stack_hi __attribute__((tls_model("initial-exec")));

static col_thread_t *registry;          /* all states, newest first */
static int registry_lock;               /* spinlock for attach/detach */
static col_thread_t *shared_state;      /* late events of exiting threads */
static int shared_lock;
static pthread_key_t exit_key;
static int live_threads, max_live_threads, threads_seen;


static void update_slack(void)
{
    /* read on the hot path without the lock: a plain load on x86-64 */
    __atomic_store_n(&col_heap.slack, live_threads > 1 ? col_config.peak_slack : 0, __ATOMIC_RELAXED);
}

static col_thread_t *state_new(void)
{
    return col_vm_map_for(COL_VM_STATES, sizeof(col_thread_t));
}

/* The most of a thread's stack taken as its own (col_fp_foreign).  With no
 * stack limit (ulimit -s unlimited), glibc reports the main thread's stack
 * as reaching down to the mapping below it, the top of the brk heap, which
 * can later grow into that range: a coroutine stack there is not the
 * thread's.  Frames deeper than this are walked as a foreign stack's. */
#define STACK_TRUSTED_MAX ((uintptr_t)256 << 20)

/* The initial thread (pthread_self() there), if col_thread_init ran in
 * it; a child forked from another thread is not it, and runs on that
 * thread's stack. */
static pthread_t initial_thread;
static int initial_known;

/* The thread's stack: for the initial thread col_mainstack.c's answer,
 * glibc's own without its stdio; for any other glibc's, which it knows
 * without /proc. */
static void set_stack_bounds(col_thread_t *t)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    uintptr_t lo, hi;
    t->stack_lo = 0;
    t->stack_hi = UINTPTR_MAX;
    /* unknown once the profile is sealed: gettid, getpid and the CPU
     * affinity pthread_getattr_np asks for may be forbidden (col_seccomp.c) */
    if (__atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE))
        return;
    if (initial_known && pthread_equal(pthread_self(), initial_thread) &&
        gettid() == getpid()) {
        if (col_main_stack_bounds(STACK_TRUSTED_MAX, &lo, &hi) == 0) {
            t->stack_lo = lo;
            t->stack_hi = hi;
        }
        return;
    }
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            t->stack_hi = (uintptr_t)addr + size;
            t->stack_lo = size > STACK_TRUSTED_MAX ? t->stack_hi - STACK_TRUSTED_MAX
                                                   : (uintptr_t)addr;
        }
        pthread_attr_destroy(&attr);
    }
}

static void on_thread_exit(void *arg)
{
    col_thread_t *t = arg;
    int saved = errno;
    int top = col_guard_enter();
    col_record_publish_thread(t);
    t->last_alloc = NULL;
    col_tls_self = NULL;
    col_tls_dead = 1;
    col_unwind_thread_exit(t);
    ut_spin_lock(&registry_lock);
    __atomic_store_n(&live_threads, live_threads - 1, __ATOMIC_RELAXED);
    update_slack();
    __atomic_store_n(&t->in_use, 0, __ATOMIC_RELEASE);
    ut_spin_unlock(&registry_lock);
    col_guard_leave(top); /* col_tls_self is NULL now: so is col_tls_fast */
    errno = saved;
}

int col_thread_init(void)
{
    if (gettid() == getpid()) {
        initial_thread = pthread_self();
        initial_known = 1;
    }
    shared_state = state_new();
    if (!shared_state)
        return -1;
    shared_state->shared = 1;
    shared_state->in_use = 1;
    shared_state->next = registry;
    registry = shared_state;
    return pthread_key_create(&exit_key, on_thread_exit) == 0 ? 0 : -1;
}

/* Empty the entries of t's sets [from, to), and take their deep checks
 * from them.  An entry in use is written, an empty one only read. */
static void sc_clear(col_thread_t *t, unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++) {
        for (int w = 0; w < COL_SC_WAYS; w++) {
            col_sc_entry_t *x = &t->sc[i].way[w];
            if (x->frame)
                x->frame = NULL;
            if (x->deep_cap)
                x->deep_cap = 0;
        }
        t->sc_used[i] = 0;
    }
}

/* Hand t's pool of deep checks out from its start again: every entry
 * whose checks are in it is emptied, and loses its chunk. */
static void pool_start_over(col_thread_t *t)
{
    for (unsigned i = 0; i < COL_SC_SETS; i++)
        for (int w = 0; w < COL_SC_WAYS; w++) {
            col_sc_entry_t *x = &t->sc[i].way[w];
            if (x->deep_cap == 0)
                continue;
            if (!col_sc_checks_inline(x)) {
                x->frame = NULL;
                t->sc_used[i] &= (uint8_t)~(1u << w);
            }
            x->deep_cap = 0;
        }
    t->sc_pool_used = 0;
}

/* A recycled state's recent stacks were the previous owner's: empty them.
 * Their sets are chosen by the frame's offset in the thread's stack, so
 * a state's owners in turn (larson's generations, a thread pool that
 * restarts) running the same code fill the same few sets: those are
 * emptied in place, their pages kept for the next owner, who would write
 * them again.  A state whose owner filled more than half of the sets
 * (256 KB) gives their pages and its pool's back to the kernel instead,
 * all but the first page's entries, which are emptied in place; without
 * madvise, every entry is. */
static void sc_recycle(col_thread_t *t)
{
    uint32_t touched = t->sc_touched;
    t->sc_touched = 0;
    memset(t->sc_ghost, 0, sizeof t->sc_ghost); /* the last owner's stacks */
    memset(t->sc_used, 0, sizeof t->sc_used);   /* every set is emptied below */
    if (__builtin_popcount(touched) <= (int)COL_SC_SETS / 2) {
        for (; touched; touched &= touched - 1) {
            unsigned i = (unsigned)__builtin_ctz(touched);
            sc_clear(t, i, i + 1);
        }
        t->sc_pool_used = 0; /* every entry with a chunk of it was filled */
        return;
    }
    uintptr_t lo = ((uintptr_t)&t->sc[0] + 4095) & ~(uintptr_t)4095;
    uintptr_t hi = (uintptr_t)&t->site_memo[0] & ~(uintptr_t)4095;
    unsigned kept = (unsigned)((lo - (uintptr_t)&t->sc[0] + sizeof t->sc[0] - 1) / sizeof t->sc[0]);
    if (col_vm_release((void *)lo, hi - lo) == 0)
        sc_clear(t, 0, kept); /* the rest read 0 now */
    else
        sc_clear(t, 0, COL_SC_SETS);
    t->sc_pool_used = 0;
}

/* The calling thread's state, attaching one (recycled or new) if needed;
 * the shared late state once the thread is exiting; NULL if no memory. */
col_thread_t *col_thread_attach(void)
{
    if (col_tls_self)
        return col_tls_self;
    if (col_tls_dead)
        return shared_state;
    col_thread_t *t = NULL;
    int fresh = 0;
    ut_spin_lock(&registry_lock);
    for (col_thread_t *s = registry; s; s = s->next)
        if (!s->shared && !__atomic_load_n(&s->in_use, __ATOMIC_ACQUIRE)) {
            t = s;
            break;
        }
    if (t)
        t->in_use = 1;
    ut_spin_unlock(&registry_lock);
    if (!t) {
        t = state_new();
        if (!t)
            return NULL;
        fresh = 1;
        t->in_use = 1;
        ut_spin_lock(&registry_lock);
        t->next = registry;
        __atomic_store_n(&registry, t, __ATOMIC_RELEASE);
        ut_spin_unlock(&registry_lock);
    }
    set_stack_bounds(t);
    col_tls_stack_hi = t->stack_hi;
    /* a new state's recent stacks are empty and not even read: a read
     * would map the zero page that the first write replaces */
    if (!fresh) {
        sc_recycle(t);
        col_unwind_thread_attach(t);
    }
    t->memo_node = 0;
    ut_spin_lock(&registry_lock);
    /* written under registry_lock, read by the writer thread without it */
    int live = live_threads + 1;
    __atomic_store_n(&live_threads, live, __ATOMIC_RELAXED);
    __atomic_store_n(&threads_seen, threads_seen + 1, __ATOMIC_RELAXED);
    if (live > max_live_threads)
        __atomic_store_n(&max_live_threads, live, __ATOMIC_RELAXED);
    update_slack();
    ut_spin_unlock(&registry_lock);
    pthread_setspecific(exit_key, t);
    col_tls_self = t;
    return t;
}

col_thread_t *col_thread_all(void)
{
    return __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
}

int col_thread_live_count(void)
{
    return __atomic_load_n(&live_threads, __ATOMIC_RELAXED);
}

int col_thread_seen(void)
{
    return __atomic_load_n(&threads_seen, __ATOMIC_RELAXED);
}

int col_thread_max_live(void)
{
    return __atomic_load_n(&max_live_threads, __ATOMIC_RELAXED);
}

col_thread_t *col_thread_shared(void)
{
    return shared_state;
}

void col_thread_lock_shared(void)
{
    ut_spin_lock(&shared_lock);
}

void col_thread_unlock_shared(void)
{
    ut_spin_unlock(&shared_lock);
}

/* ---- counters by site -------------------------------------------------- */

#define COL_LEAF_BYTES (COL_COUNT_LEAF * sizeof(col_count_t) * COL_COUNT_PLANES)
#define COL_LEAF_MAP_MAX 64u /* leaves in one mapping (4 MB of address space) */

/* A new leaf of counters for t: the next spare one of t's last mapping,
 * else from a new mapping of as many leaves as t has mapped so far (1, 1,
 * 2, 4 ... up to COL_LEAF_MAP_MAX).  A thread counting many sites, such
 * as each of binary-trees' (65,535 sites, 64 leaves), makes 7 mmap calls,
 * not 64: each takes the process's mmap lock for writing, which glibc's
 * arena growth (an mprotect per page) and page faults wait on.  Pages
 * not written cost nothing (MAP_NORESERVE), but the address space counts
 * against RLIMIT_AS, so a mapping refused is asked again for one leaf.
 * Leaves are never unmapped. */
static col_count_t *count_leaf_take(col_thread_t *t)
{
    if (t->leaf_spare_n == 0) {
        uint32_t n = t->leaf_mapped ? t->leaf_mapped : 1;
        if (n > COL_LEAF_MAP_MAX)
            n = COL_LEAF_MAP_MAX;
        char *p = n > 1 && col_config.fault_count_maps
                      ? NULL
                      : col_vm_map_for(COL_VM_COUNTERS, n * COL_LEAF_BYTES);
        if (!p && n > 1) {
            n = 1;
            p = col_vm_map_for(COL_VM_COUNTERS, COL_LEAF_BYTES);
        }
        if (!p)
            return NULL;
        t->leaf_spare = p;
        t->leaf_spare_n = n;
        t->leaf_mapped += n;
    }
    col_count_t *leaf = (col_count_t *)t->leaf_spare;
    t->leaf_spare += COL_LEAF_BYTES;
    t->leaf_spare_n--;
    return leaf;
}

/* Map the leaf holding site's counters (owner thread, or the shared state
 * under its lock).  Published with release: the writer reads leaves while
 * the owner counts. */
UT_COLD col_count_t *col_thread_count_slow(col_thread_t *t, uint32_t site)
{
    uint32_t l = site >> COL_COUNT_LEAF_BITS;
    if (l >= COL_COUNT_LEAVES)
        return NULL;
    int saved = errno;
    col_count_t *leaf = count_leaf_take(t);
    errno = saved;
    if (!leaf)
        return NULL;
    __atomic_store_n(&t->cnt[l], leaf, __ATOMIC_RELEASE);
    if (l + 1 > t->cnt_leaves)
        __atomic_store_n(&t->cnt_leaves, l + 1, __ATOMIC_RELEASE);
    col_count_t *e = &leaf[site & (COL_COUNT_LEAF - 1)];
    UT_WRITE_FIRST(e->peak_blocks); /* as col_thread_count_mapped */
    return e;
}

/* ---- deep checks of the recent-stacks cache ------------------------------ */

/* Chunks are handed out from the start of the pool, in multiples of 16
 * checks, one per entry (way) that ever kept a deep stack, and kept by
 * it: the stacks an entry keeps one after another are about as deep, so
 * it seldom grows (its old chunk is then lost until the pool starts
 * over).  A full pool starts over: every entry holding a deep stack is
 * emptied (the next two allocations from it walk again).  The pages
 * touched are about the checks the cache holds, not 6 KB per entry. */
col_chk_t *col_thread_deep(col_thread_t *t, col_sc_entry_t *e, uint32_t n)
{
    if (e->deep_cap >= n)
        return &t->sc_pool[e->deep_off];
    uint32_t cap = (n + 15) & ~15u;
    if (t->sc_pool_used + cap > COL_SC_POOL)
        pool_start_over(t);
    e->deep_off = (uint16_t)t->sc_pool_used;
    e->deep_cap = (uint16_t)cap;
    t->sc_pool_used += cap;
    return &t->sc_pool[e->deep_off];
}

/* ---- fork --------------------------------------------------------------- */

void col_thread_atfork_prepare(void)
{
    ut_spin_lock(&registry_lock);
    ut_spin_lock(&shared_lock);
}

void col_thread_atfork_parent(void)
{
    ut_spin_unlock(&shared_lock);
    ut_spin_unlock(&registry_lock);
}

/* Only the forking thread survives: every other state is free again (its
 * counters stay, they describe the inherited heap). */
void col_thread_atfork_child(void)
{
    live_threads = 0;
    for (col_thread_t *s = registry; s; s = s->next) {
        if (s->shared)
            continue;
        if (s == col_tls_self) {
            live_threads++;
        } else {
            /* publish what the vanished thread had not */
            col_heap.live += s->pending;
            s->pending = 0;
            s->in_use = 0;
        }
    }
    update_slack();
    shared_lock = 0;
    registry_lock = 0;
}
