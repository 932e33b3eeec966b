/* col_record.c - what one allocation or one free changes: the call stack
 * is unwound and interned, the (stack, size) counters of the calling thread
 * are bumped, the block is marked live in the shadow map, and the thread's
 * share of the global heap counter is published when it gets large enough
 * (see "Peak" in docs/FORMAT.md).
 *
 * This is the hot path: no locks, no syscalls, no malloc.  Rare cases go to
 * the UT_COLD functions at the bottom. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "collect/col_internal.h"
#include "heapscope/profile.h"

col_heap_t col_heap;

static void record_alloc_cold(void *ptr, size_t size, const void *frame);
static void record_free_cold(void *ptr);
static void new_peak(int64_t h);
static void save_peak(col_entry_t *e, uint32_t gen);

#define TICK_EVENTS 4096

/* A size that is fixed while the block lives and at least its requested
 * size; the shadow keeps the difference.  Under glibc it is read straight
 * from the chunk header (what malloc_usable_size computes, glibc 2.26+:
 * chunk size minus 8, or minus 16 for an mmapped chunk) to save two calls
 * per block; other allocators are asked. */
UT_INLINE size_t usable_size(const void *ptr)
{
    if (UT_LIKELY(col_proc.granule_shift == 5)) {
        size_t h = ((const size_t *)ptr)[-1];
        return (h & ~(size_t)7) - ((h & 2) ? 16 : 8);
    }
    return col_real.malloc_usable_size((void *)ptr);
}

/* Publish the thread's pending live-byte change; may set a new peak. */
void col_record_publish_thread(col_thread_t *t)
{
    int64_t h = __atomic_add_fetch(&col_heap.live, t->pending, __ATOMIC_RELAXED);
    t->pending = 0;
    if (h > __atomic_load_n(&col_heap.peak, __ATOMIC_RELAXED))
        new_peak(h);
}

/* Before changing an entry: if a new peak was published since the entry
 * last changed, its current live partials are its share of that peak. */
UT_INLINE void peak_check(col_entry_t *e)
{
    uint32_t gen = __atomic_load_n(&col_heap.peak_gen, __ATOMIC_RELAXED);
    if (UT_UNLIKELY(e->peak_gen != gen))
        save_peak(e, gen);
}

UT_INLINE void tick(col_thread_t *t)
{
    if (UT_UNLIKELY(--t->tick == 0)) {
        t->tick = TICK_EVENTS;
        col_writer_tick();
    }
}

/* A block the shadow cannot mark live (its leaf or the side table could not
 * be mapped: address space exhausted) is only counted as untracked: not on
 * a stack, not in the totals or the heap, so that its free (an unknown
 * free) leaves no false leak behind.  The profile says how many. */
UT_COLD static void account_untracked(col_thread_t *t)
{
    UT_BUMP(t->n_untracked, 1);
}

/* Counters, shadow and heap for a block of `size` bytes at ptr from stack id. */
UT_INLINE void account_alloc(col_thread_t *t, void *ptr, size_t size, uint32_t id)
{
    uint32_t *slot = col_shadow_slot(ptr, 1);
    size_t usable = usable_size(ptr);
    size_t slack = usable >= size ? usable - size : COL_SLACK_BIG;
    if (UT_UNLIKELY(slot == NULL ||
                    (slack >= COL_SLACK_BIG && col_shadow_size_put(ptr, size) != 0))) {
        account_untracked(t);
        tick(t);
        return;
    }
    col_entry_t *e = col_thread_entry(t, id, col_size_key(size));
    if (UT_UNLIKELY(e == NULL)) {
        UT_BUMP(t->n_lost, 1);
        id = COL_STACK_LOST;
        e = col_thread_entry(t, id, col_size_key(size));
    }
    if (UT_LIKELY(e != NULL)) {
        peak_check(e);
        UT_BUMP(e->allocs, 1);
        UT_BUMP(e->bytes, size);
    }
    UT_BUMP(t->n_allocs, 1);
    uint32_t v = (id << COL_SLACK_BITS) | (slack < COL_SLACK_BIG ? (uint32_t)slack : COL_SLACK_BIG);
    uint32_t old = __atomic_load_n(slot, __ATOMIC_RELAXED);
    __atomic_store_n(slot, v, __ATOMIC_RELAXED);
    if (UT_UNLIKELY(old != 0))
        UT_BUMP(t->n_shadow_overwrites, 1);
    t->last_alloc = ptr;
    t->pending += (int64_t)size;
    if (t->pending >= __atomic_load_n(&col_heap.slack, __ATOMIC_RELAXED))
        col_record_publish_thread(t);
    tick(t);
}

UT_INLINE void account_free(col_thread_t *t, const void *ptr, uint32_t id, uint64_t size)
{
    col_entry_t *e = col_thread_entry(t, id, col_size_key(size));
    if (UT_LIKELY(e != NULL)) {
        peak_check(e);
        UT_BUMP(e->frees, 1);
        UT_BUMP(e->bytes_freed, size);
        if (ptr == t->last_alloc) {
            UT_BUMP(e->temporary, 1);
            t->last_alloc = NULL;
        }
    } else {
        UT_BUMP(t->n_lost, 1);
    }
    UT_BUMP(t->n_frees, 1);
    t->pending -= (int64_t)size;
    if (t->pending <= -__atomic_load_n(&col_heap.slack, __ATOMIC_RELAXED))
        col_record_publish_thread(t);
    tick(t);
}

/* Requested size of a live block from its shadow value. */
static inline uint64_t block_size(const void *ptr, uint32_t v)
{
    uint32_t slack = v & COL_SLACK_BIG;
    if (UT_UNLIKELY(slack == COL_SLACK_BIG))
        return col_shadow_size_take(ptr);
    return usable_size(ptr) - slack;
}

/* The id of a stack other than the previous one (prev): the one that
 * followed prev last time if these are its frames (no hashing, and the
 * records of a repeating pattern are read in order), else interned. */
static uint32_t stack_of(col_thread_t *t, uint32_t prev, const uintptr_t *ips, int n,
                         unsigned flags)
{
    uint32_t guess = prev ? col_thread_next_guess(t, prev) : 0;
    if (guess && col_stack_is(guess, ips, n))
        return guess;
    uint32_t id = col_stack_intern(ips, n, flags);
    if (prev)
        col_thread_set_next(t, prev, id);
    return id;
}

/* An allocation whose stack is not the previous one's walk: unwind (the
 * frames array is only set up here), find the stack's id, count. */
UT_NOINLINE static void record_alloc_walk(col_thread_t *t, void *ptr, size_t size,
                                          const void *frame)
{
    uintptr_t ips[COL_MAX_DEPTH];
    unsigned flags = 0;
    uint64_t token;
    int n = col_unwind(t, frame, ips, col_config.max_depth, &flags, t->memo_token, &token);
    uint32_t id = t->memo_id;
    if (!token || token != t->memo_token) {
        if (!id || !col_stack_is(id, ips, n))
            t->memo_id = id = stack_of(t, id, ips, n, flags);
        t->memo_token = token;
    }
    t->memo_frame = frame;
    t->memo_ra = ((const uintptr_t *)frame)[1];
    account_alloc(t, ptr, size, id);
}

/* The common case first: the unwinder's memo says the stack is exactly the
 * walk of this thread's previous allocation, so its id is memo_id.  The
 * hook's frame and the return address there, compared inline, turn most
 * other stacks away before the memo is consulted. */
void col_record_alloc(void *ptr, size_t size, const void *frame)
{
    col_thread_t *t = col_tls_self;
    if (UT_UNLIKELY(t == NULL)) {
        record_alloc_cold(ptr, size, frame);
        return;
    }
    col_tls_guard = 1;
    if (frame == t->memo_frame && ((const uintptr_t *)frame)[1] == t->memo_ra &&
        UT_LIKELY(t->memo_token != 0) && col_unwind_same(t, frame, t->memo_token))
        account_alloc(t, ptr, size, t->memo_id);
    else
        record_alloc_walk(t, ptr, size, frame);
    col_tls_guard = 0;
}

void col_record_free(void *ptr)
{
    col_thread_t *t = col_tls_self;
    if (UT_UNLIKELY(t == NULL)) {
        record_free_cold(ptr);
        return;
    }
    col_tls_guard = 1; /* a signal handler's malloc must not touch t now */
    uint32_t v = col_shadow_take(ptr);
    if (UT_LIKELY(v != 0))
        account_free(t, ptr, v >> COL_SLACK_BITS, block_size(ptr, v));
    else
        UT_BUMP(t->n_unknown_frees, 1);
    col_tls_guard = 0;
}

void col_record_take(void *ptr, col_taken_t *tk)
{
    tk->ptr = ptr;
    tk->value = col_shadow_take(ptr);
    tk->valid = tk->value != 0;
    tk->size = tk->valid ? block_size(ptr, tk->value) : 0;
}

void col_record_restore(col_taken_t *tk)
{
    if (!tk->valid)
        return;
    if ((tk->value & COL_SLACK_BIG) == COL_SLACK_BIG)
        col_shadow_size_put(tk->ptr, tk->size);
    col_shadow_set(tk->ptr, tk->value);
}

void col_record_commit_free(col_taken_t *tk)
{
    col_thread_t *t = col_tls_self;
    if (UT_UNLIKELY(t == NULL)) {
        int saved = errno;
        col_tls_guard++;
        t = col_thread_attach();
        col_tls_guard--;
        errno = saved;
        if (t == NULL)
            return;
    }
    col_tls_guard++;
    if (t->shared)
        col_thread_lock_shared();
    if (tk->valid)
        account_free(t, tk->ptr, tk->value >> COL_SLACK_BITS, tk->size);
    else
        UT_BUMP(t->n_unknown_frees, 1);
    if (t->shared)
        col_thread_unlock_shared();
    col_tls_guard--;
}

/* ---- cold paths ---------------------------------------------------------- */

/* First event of a thread, or an event after the thread's key destructor
 * ran (then the shared late state is used under its lock). */
UT_COLD static void record_alloc_cold(void *ptr, size_t size, const void *frame)
{
    int saved = errno;
    col_tls_guard = 1;
    col_thread_t *t = col_thread_attach();
    if (t != NULL) {
        uintptr_t ips[COL_MAX_DEPTH];
        unsigned flags = 0;
        uint64_t token;
        int n = col_unwind(t, frame, ips, col_config.max_depth, &flags, 0, &token);
        uint32_t id = col_stack_intern(ips, n, flags);
        if (!t->shared) { /* the next hot-path call may compare with this walk */
            t->memo_id = id;
            t->memo_token = token;
            t->memo_frame = frame;
            t->memo_ra = ((const uintptr_t *)frame)[1];
        }
        if (t->shared)
            col_thread_lock_shared();
        account_alloc(t, ptr, size, id);
        if (t->shared)
            col_thread_unlock_shared();
    }
    col_tls_guard = 0;
    errno = saved;
}

UT_COLD static void record_free_cold(void *ptr)
{
    int saved = errno;
    col_tls_guard = 1;
    col_thread_t *t = col_thread_attach();
    if (t != NULL) {
        if (t->shared)
            col_thread_lock_shared();
        uint32_t v = col_shadow_take(ptr);
        if (v == 0)
            UT_BUMP(t->n_unknown_frees, 1);
        else
            account_free(t, ptr, v >> COL_SLACK_BITS, block_size(ptr, v));
        if (t->shared)
            col_thread_unlock_shared();
    }
    col_tls_guard = 0;
    errno = saved;
}

UT_COLD static void new_peak(int64_t h)
{
    int64_t old = __atomic_load_n(&col_heap.peak, __ATOMIC_RELAXED);
    while (h > old) {
        if (__atomic_compare_exchange_n(&col_heap.peak, &old, h, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            __atomic_add_fetch(&col_heap.peak_gen, 1, __ATOMIC_RELEASE);
            return;
        }
    }
}

/* Save the entry's live partials as its share of peak `gen`.  peak_gen is
 * stored last, with release, so the writer that sees the new generation
 * also sees the values (see col_flush.c). */
UT_COLD static void save_peak(col_entry_t *e, uint32_t gen)
{
    __atomic_store_n(&e->peak_blocks, (int64_t)(e->allocs - e->frees), __ATOMIC_RELAXED);
    __atomic_store_n(&e->peak_bytes, (int64_t)(e->bytes - e->bytes_freed), __ATOMIC_RELAXED);
    __atomic_store_n(&e->peak_gen, gen, __ATOMIC_RELEASE);
}
