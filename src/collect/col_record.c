/* col_record.c - the recording paths that are not the common case (the
 * common case is inline in the hooks, col_record.h): a stack that is not
 * the previous walk's, a site new to the thread's cache, sizes above
 * PF_EXACT_SIZE_MAX, a thread's first event and events after its exit,
 * realloc's two halves, and the global heap counter and peak.
 *
 * No locks, syscalls or malloc here either, but for the UT_COLD functions
 * at the bottom (a thread attaching, the late-events state's lock). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "collect/col_record.h"
#include "heapscope/profile.h"

col_heap_t col_heap;

static void new_peak(int64_t h);

/* A size that is fixed while the block lives and at least its requested
 * size.  Under glibc it is read straight from the chunk header (what
 * malloc_usable_size computes, glibc 2.26+: chunk size minus 8, or minus
 * 16 for an mmapped chunk); other allocators are asked. */
static size_t usable_size(const void *ptr)
{
    if (UT_LIKELY(col_proc.granule_shift == 5)) {
        size_t h = ((const size_t *)ptr)[-1];
        return (h & ~(size_t)7) - ((h & 2) ? 16 : 8);
    }
    return col_real.malloc_usable_size((void *)ptr);
}

/* The shadow tag of a block of more than PF_EXACT_SIZE_MAX bytes: its
 * slack (usable - requested) + 1 if below COL_TAG_SIDE - 1, else
 * COL_TAG_SIDE with the size in the side table; 0 if the side table
 * cannot take it. */
UT_NOINLINE uint32_t col_record_big_tag(const void *ptr, size_t size)
{
    size_t usable = usable_size(ptr);
    if (usable >= size && usable - size < COL_TAG_SIDE - 1)
        return (uint32_t)(usable - size) + 1;
    return col_shadow_size_put(ptr, size) == 0 ? COL_TAG_SIDE : 0;
}

UT_NOINLINE uint64_t col_record_big_size(const void *ptr, uint32_t v)
{
    uint32_t tag = v & ((1u << COL_TAG_BITS) - 1);
    if (tag == COL_TAG_SIDE)
        return col_shadow_size_take(ptr);
    return usable_size(ptr) - (tag - 1);
}

/* Publish the thread's pending live-byte change; may set a new peak. */
void col_record_publish_thread(col_thread_t *t)
{
    int64_t h = __atomic_add_fetch(&col_heap.live, t->pending, __ATOMIC_RELAXED);
    t->pending = 0;
    if (h > __atomic_load_n(&col_heap.peak, __ATOMIC_RELAXED))
        new_peak(h);
}

/* A block the shadow cannot mark live (its leaf, its counters or the side
 * table could not be mapped: address space exhausted) is only counted as
 * untracked: not on a stack, not in the totals or the heap, so that its
 * free (an unknown free) leaves no false leak behind.  The profile says
 * how many. */
UT_COLD void col_record_untracked(col_thread_t *t)
{
    UT_BUMP(t->n_untracked, 1);
    col_tick(t);
}

/* The site of (node, key), and the thread's one-entry cache of it; lost
 * stacks and a full site table go to the pseudo-site COL_SITE_LOST. */
UT_NOINLINE uint32_t col_record_site(col_thread_t *t, uint32_t node, uint64_t key)
{
    uint32_t site = 0;
    if (UT_LIKELY(node != COL_NODE_NONE))
        site = col_site_get(node, key);
    if (UT_UNLIKELY(site == 0)) {
        UT_BUMP(t->n_lost, 1);
        return COL_SITE_LOST; /* not cached: each one is counted */
    }
    t->site_node = node;
    t->site_key = key;
    t->site_id = site;
    return site;
}

/* An allocation whose stack is not the previous walk's: unwind, and
 * remember the walk for the next allocation.  The stack and site that
 * followed the previous stack last time are the guess (col_pred_t). */
UT_NOINLINE uint32_t col_record_walk(col_thread_t *t, const void *frame, uint64_t key)
{
    uint32_t prev = t->memo_node;
    col_pred_t *p = col_thread_pred(t, prev);
    uint32_t guess = p ? p->node : 0;
    uint32_t node = col_unwind(t, frame, guess);
    t->memo_node = node;
    t->memo_frame = col_unwind_memo() ? frame : NULL;
    t->memo_ra = ((const uintptr_t *)frame)[1];
    if (p && node == guess && p->site && col_sites[p->site].key == key)
        return p->site;
    uint32_t site = col_site_cached(t, node, key);
    if (p && site != COL_SITE_LOST) {
        p->node = node;
        p->site = site;
    }
    return site;
}

/* The hooks that do not inline the fast paths call these. */
void col_record_alloc(void *ptr, size_t size, const void *frame)
{
    col_record_alloc_inline(ptr, size, frame);
}

void col_record_free(void *ptr)
{
    col_record_free_inline(ptr);
}

void col_record_take(void *ptr, col_taken_t *tk)
{
    tk->ptr = ptr;
    tk->value = col_shadow_take(ptr);
    tk->valid = tk->value != 0;
    tk->size = tk->valid ? col_block_size(ptr, tk->value) : 0;
}

void col_record_restore(col_taken_t *tk)
{
    if (!tk->valid)
        return;
    if ((tk->value & ((1u << COL_TAG_BITS) - 1)) == COL_TAG_SIDE)
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
        col_account_free(t, tk->ptr, tk->value >> COL_TAG_BITS, tk->size);
    else
        UT_BUMP(t->n_unknown_frees, 1);
    if (t->shared)
        col_thread_unlock_shared();
    col_tls_guard--;
}

/* ---- cold paths ---------------------------------------------------------- */

/* First event of a thread, or an event after the thread's key destructor
 * ran (then the shared late state is used under its lock). */
UT_COLD void col_record_alloc_cold(void *ptr, size_t size, const void *frame)
{
    int saved = errno;
    col_tls_guard = 1;
    col_thread_t *t = col_thread_attach();
    if (t != NULL) {
        uint32_t node = col_unwind(t, frame, 0);
        if (!t->shared) { /* the next hot-path call may compare with this walk */
            t->memo_node = node;
            t->memo_frame = col_unwind_memo() ? frame : NULL;
            t->memo_ra = ((const uintptr_t *)frame)[1];
        }
        if (t->shared)
            col_thread_lock_shared();
        col_account_alloc(t, ptr, size, col_record_site(t, node, col_size_key(size)));
        if (t->shared)
            col_thread_unlock_shared();
    }
    col_tls_guard = 0;
    errno = saved;
}

UT_COLD void col_record_free_cold(void *ptr)
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
            col_account_free(t, ptr, v >> COL_TAG_BITS, col_block_size(ptr, v));
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

/* Save the counters' live partials as their share of peak `gen`.  peak_gen
 * is stored last, with release, so the writer that sees the new generation
 * also sees the values (see col_flush.c).  The byte partials of a site
 * with an exact size are 0 here (its bytes are counted at the flush). */
UT_COLD void col_record_save_peak(col_count_t *e, uint32_t gen)
{
    __atomic_store_n(&e->peak_blocks, (int64_t)(e->allocs - e->frees), __ATOMIC_RELAXED);
    __atomic_store_n(&e->peak_bytes, (int64_t)(e->bytes - e->bytes_freed), __ATOMIC_RELAXED);
    __atomic_store_n(&e->peak_gen, gen, __ATOMIC_RELEASE);
}
