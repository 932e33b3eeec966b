/* col_thread.c - per-thread counter tables.
 *
 * A thread gets a col_thread_t on its first allocation or free: mmapped,
 * linked into a registry that is never unlinked (the writer walks it
 * without a lock), and recycled when the thread exits.  The table maps
 * (stack id, size key) to a col_entry_t: entries live in fixed chunks that
 * never move, so the writer can read them while the owner adds more; the
 * owner's open-addressing index over them can be rebuilt at will.
 *
 * After a thread's key destructor ran, its late events (glibc frees its
 * TLS after that) go to one shared state under a spinlock. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "collect/col_internal.h"
#include "common/ut_spin.h"

_Thread_local col_thread_t *col_tls_self __attribute__((tls_model("initial-exec")));
static _Thread_local int col_tls_dead __attribute__((tls_model("initial-exec")));

static col_thread_t *registry;          /* all states, newest first */
static int registry_lock;               /* spinlock for attach/detach */
static col_thread_t *shared_state;      /* late events of exiting threads */
static int shared_lock;
static pthread_key_t exit_key;
static int live_threads, max_live_threads, threads_seen;

#define INDEX_INITIAL 1024u


static void update_slack(void)
{
    /* read on the hot path without the lock: a plain load on x86-64 */
    __atomic_store_n(&col_heap.slack, live_threads > 1 ? col_config.peak_slack : 0, __ATOMIC_RELAXED);
}

static col_thread_t *state_new(void)
{
    col_thread_t *t = col_vm_map(sizeof *t);
    if (!t)
        return NULL;
    t->index = col_vm_map(INDEX_INITIAL * sizeof *t->index);
    if (!t->index)
        return NULL;
    t->index_mask = INDEX_INITIAL - 1;
    t->tick = 4096;
    return t;
}

static void set_stack_bounds(col_thread_t *t)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    t->stack_lo = 0;
    t->stack_hi = UINTPTR_MAX;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            t->stack_lo = (uintptr_t)addr;
            t->stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
}

static void on_thread_exit(void *arg)
{
    col_thread_t *t = arg;
    int saved = errno;
    col_tls_guard++;
    col_record_publish_thread(t);
    t->last = NULL;
    t->last_alloc = NULL;
    col_tls_self = NULL;
    col_tls_dead = 1;
    col_unwind_thread_exit();
    ut_spin_lock(&registry_lock);
    __atomic_store_n(&live_threads, live_threads - 1, __ATOMIC_RELAXED);
    update_slack();
    __atomic_store_n(&t->in_use, 0, __ATOMIC_RELEASE);
    ut_spin_unlock(&registry_lock);
    col_tls_guard--;
    errno = saved;
}

int col_thread_init(void)
{
    shared_state = state_new();
    if (!shared_state)
        return -1;
    shared_state->shared = 1;
    shared_state->in_use = 1;
    shared_state->next = registry;
    registry = shared_state;
    return pthread_key_create(&exit_key, on_thread_exit) == 0 ? 0 : -1;
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
        t->in_use = 1;
        ut_spin_lock(&registry_lock);
        t->next = registry;
        __atomic_store_n(&registry, t, __ATOMIC_RELEASE);
        ut_spin_unlock(&registry_lock);
    }
    set_stack_bounds(t);
    t->memo_id = 0; /* the unwinder's memo belongs to the previous owner */
    t->memo_token = 0;
    t->memo_frame = NULL;
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

/* ---- the (stack, size) table -------------------------------------------- */

/* 64 bits: the low 32 (folded) pick the slot, the high 32 are the slot's
 * tag, so a probe rarely reads an entry that is not the one it wants
 * (one stack may have hundreds of size keys). */
static inline uint64_t entry_hash(uint32_t stack_id, uint64_t key)
{
    uint64_t h = ((uint64_t)stack_id * 0x9e3779b97f4a7c15ull) ^ (key * 0xc2b2ae3d27d4eb4full);
    return (h & 0xffffffff00000000ull) | ((uint32_t)(h >> 32) ^ (uint32_t)h);
}

/* An index slot: the tag of the entry's hash and its number + 1 (0 = empty). */
static inline uint64_t index_slot(uint64_t h, uint32_t n)
{
    return (h & 0xffffffff00000000ull) | (n + 1);
}

static inline col_entry_t *entry_at(col_thread_t *t, uint32_t n)
{
    return &t->chunks[n >> COL_CHUNK_BITS][n & (COL_CHUNK_ENTRIES - 1)];
}

/* Double the index and rehash every entry into it.  Owner thread only. */
static int index_grow(col_thread_t *t)
{
    uint32_t cap = (t->index_mask + 1) * 2;
    uint64_t *idx = col_vm_map((size_t)cap * sizeof *idx);
    if (!idx)
        return -1;
    for (uint32_t n = 0; n < t->nentries; n++) {
        col_entry_t *e = entry_at(t, n);
        uint64_t h = entry_hash(e->stack_id, e->size);
        uint32_t i = (uint32_t)h & (cap - 1);
        while (idx[i])
            i = (i + 1) & (cap - 1);
        idx[i] = index_slot(h, n);
    }
    munmap(t->index, (size_t)(t->index_mask + 1) * sizeof *idx);
    t->index = idx;
    t->index_mask = cap - 1;
    return 0;
}

static col_entry_t *entry_hashed(col_thread_t *t, uint32_t stack_id, uint64_t key, uint32_t *num);

/* stack_id's by_id slot, its leaf mapped if needed; NULL without memory. */
static col_byid_t *by_id_slot(col_thread_t *t, uint32_t stack_id)
{
    col_byid_t **leaf = &t->by_id[stack_id >> COL_BYID_BITS];
    if (UT_UNLIKELY(*leaf == NULL)) {
        int saved = errno;
        *leaf = col_vm_map(sizeof(col_byid_t) << COL_BYID_BITS);
        errno = saved;
        if (*leaf == NULL)
            return NULL;
    }
    return &(*leaf)[stack_id & ((1u << COL_BYID_BITS) - 1)];
}

uint32_t col_thread_next_guess(const col_thread_t *t, uint32_t id)
{
    const col_byid_t *leaf = t->by_id[id >> COL_BYID_BITS];
    return leaf ? leaf[id & ((1u << COL_BYID_BITS) - 1)].next : 0;
}

void col_thread_set_next(col_thread_t *t, uint32_t id, uint32_t next)
{
    col_byid_t *b = by_id_slot(t, id);
    if (b)
        b->next = next;
}

col_entry_t *col_thread_entry_slow(col_thread_t *t, uint32_t stack_id, uint64_t key)
{
    const col_byid_t *leaf = t->by_id[stack_id >> COL_BYID_BITS];
    if (UT_LIKELY(leaf != NULL)) {
        uint32_t n = leaf[stack_id & ((1u << COL_BYID_BITS) - 1)].entry;
        if (n) {
            col_entry_t *e = entry_at(t, n - 1);
            if (e->size == key)
                return t->last = e;
        }
    }
    uint32_t num;
    col_entry_t *e = entry_hashed(t, stack_id, key, &num);
    col_byid_t *b = e ? by_id_slot(t, stack_id) : NULL;
    if (b)
        b->entry = num + 1;
    return e;
}

/* The hashed index over all (stack, size key) entries; creates them. */
static col_entry_t *entry_hashed(col_thread_t *t, uint32_t stack_id, uint64_t key, uint32_t *num)
{
    uint64_t h = entry_hash(stack_id, key);
    uint32_t i = (uint32_t)h & t->index_mask;
    for (;;) {
        uint64_t slot = t->index[i];
        if (slot == 0)
            break;
        if ((slot >> 32) == (h >> 32)) {
            col_entry_t *e = entry_at(t, (uint32_t)slot - 1);
            if (e->stack_id == stack_id && e->size == key) {
                *num = (uint32_t)slot - 1;
                return t->last = e;
            }
        }
        i = (i + 1) & t->index_mask;
    }
    /* new entry */
    uint32_t n = t->nentries;
    if ((n >> COL_CHUNK_BITS) >= COL_MAX_CHUNKS)
        return NULL;
    if ((t->index_used + 1) * 2 > t->index_mask + 1) {
        int saved = errno;
        int rc = index_grow(t);
        errno = saved;
        if (rc < 0)
            return NULL;
        i = (uint32_t)h & t->index_mask;
        while (t->index[i])
            i = (i + 1) & t->index_mask;
    }
    col_entry_t **chunk = &t->chunks[n >> COL_CHUNK_BITS];
    if (!*chunk) {
        int saved = errno;
        col_entry_t *c = col_vm_map(COL_CHUNK_ENTRIES * sizeof(col_entry_t));
        errno = saved;
        if (!c)
            return NULL;
        __atomic_store_n(chunk, c, __ATOMIC_RELEASE);
    }
    col_entry_t *e = entry_at(t, n);
    e->stack_id = stack_id;
    e->size = key;
    e->peak_gen = __atomic_load_n(&col_heap.peak_gen, __ATOMIC_RELAXED);
    __atomic_store_n(&t->nentries, n + 1, __ATOMIC_RELEASE);
    t->index[i] = index_slot(h, n);
    t->index_used++;
    *num = n;
    return t->last = e;
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
