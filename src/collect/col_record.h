/* col_record.h - what one allocation or one free changes, inline in the
 * hooks (col_hooks.c, col_hooks_cxx.c): the call stack becomes a node of
 * the call tree, the stack and the size key an allocation site whose
 * counters the calling thread bumps, the block is marked live in the
 * shadow map with its site, and the thread's share of the global heap
 * counter is published when it gets large enough (see "Peak" in
 * docs/FORMAT.md).
 *
 * This is the hot path: no locks, no syscalls, no malloc.  Everything
 * that is not the common case is a call into col_record.c: a stack not in
 * way 0 of its set in the thread's cache of recent stacks, a size of the
 * cached stack not in the thread's site memo, a thread's first event, a
 * new peak, sizes above PF_EXACT_SIZE_MAX.
 *
 * The shadow value of a live block is (site << 8) | tag: tag 0 when the
 * block's requested size is its site's size key (every size up to
 * PF_EXACT_SIZE_MAX), so that neither the allocation nor the free reads
 * the allocator's chunk header; for larger sizes (and every block of
 * COL_SITE_LOST, col_site_counts_bytes) the difference to the block's
 * usable size plus one, or COL_TAG_SIDE when the exact size is in the
 * shadow's side table. */
#ifndef COL_RECORD_H
#define COL_RECORD_H

#include "collect/col_internal.h"

#define COL_TAG_BITS 8
#define COL_TAG_EXACT 0u    /* the size is the site's size key */
#define COL_TAG_SIDE 0xffu  /* the size is in the side table */

/* ---- col_record.c ---- */
uint32_t col_record_walk(col_thread_t *t, const void *frame, uint64_t key, col_sc_set_t *set);
uint32_t col_record_entry_site(col_thread_t *t, col_sc_entry_t *e, uint64_t key);
void col_record_alloc_any(col_thread_t *t, void *ptr, size_t size, const void *frame);
void col_record_account_lost(col_thread_t *t, void *ptr, size_t size);
void col_record_free_slow(col_thread_t *t, void *ptr);
void col_record_alloc_cold(void *ptr, size_t size, const void *frame);
void *col_record_realloc_slow(void *ptr, size_t size, const void *frame);
int col_record_free_cold(void *ptr);
int col_record_unknown_free(col_thread_t *t, const void *ptr);
void col_record_save_peak(col_thread_t *t, col_count_t *e, uint32_t gen, int counted);
void col_record_carry(col_thread_t *t, uint32_t *h, uint32_t *carry, uint32_t v);
void col_record_carry_temporary(col_thread_t *t, col_count_t *e, uint32_t v);
void col_record_untracked(col_thread_t *t);
uint32_t col_record_big_tag(const void *ptr, size_t size); /* COL_TAG_*, or 0 on failure */
uint64_t col_record_big_size(const void *ptr, uint32_t v);
void col_record_big_bytes(uint64_t *counter, uint64_t size);
void col_record_report(void); /* HEAPSCOPE_STATS, at exit */

#define COL_TICK_EVENTS 4096

/* Before changing t's counters e (counted: of a site whose bytes are
 * counted): if a new peak was published since they last changed, their
 * current live partials are their share of that peak. */
UT_INLINE void col_peak_check(col_thread_t *t, col_count_t *e, int counted)
{
    uint32_t gen = __atomic_load_n(&col_heap.peak_gen, __ATOMIC_RELAXED);
    if (UT_UNLIKELY(e->peak_gen != gen))
        col_record_save_peak(t, e, gen, counted);
}

/* A free of `size` bytes is about to lower t's balance to -slack or
 * below, which publishes a lower heap: if a peak is open, the heap is
 * leaving it, and its generation begins before any counter changes, so
 * that the counters' shares are those of the peak (within each thread's
 * slack, as the peak itself). */
UT_INLINE void col_peak_leaving(col_thread_t *t, uint64_t size)
{
    if (UT_UNLIKELY(t->pending - (int64_t)size <= -__atomic_load_n(&col_heap.slack, __ATOMIC_RELAXED)) &&
        __atomic_load_n(&col_heap.peak_open, __ATOMIC_RELAXED))
        col_record_peak_close();
}

/* ---- narrow counters (col_internal.h, col_count_t) ---- */

/* Counting by the owner, t: one more in counter h (COL_COUNT_BITS wide),
 * whose carries are in *carry, stored with `order` (a constant once
 * inlined); the allocations and frees of e (the frees with release, for
 * col_flush.c's read_counts) and its temporary allocations. */
UT_INLINE void col_count_add(col_thread_t *t, uint32_t *h, uint32_t *carry, int order)
{
    uint32_t v = *h + 1;
    if (UT_UNLIKELY((v & COL_COUNT_LOW(COL_COUNT_BITS)) == 0))
        col_record_carry(t, h, carry, v);
    else
        __atomic_store_n(h, v, order);
}

UT_INLINE void col_count_add_alloc(col_thread_t *t, col_count_t *e)
{
    col_count_add(t, &e->allocs, &col_count_carry(e)->allocs, __ATOMIC_RELAXED);
}

UT_INLINE void col_count_add_free(col_thread_t *t, col_count_t *e)
{
    col_count_add(t, &e->frees, &col_count_carry(e)->frees, __ATOMIC_RELEASE);
}

UT_INLINE void col_count_add_temporary(col_thread_t *t, col_count_t *e)
{
    uint32_t v = e->temporary + 1u;
    if (UT_UNLIKELY((v & COL_COUNT_LOW(COL_TEMP_BITS)) == 0))
        col_record_carry_temporary(t, e, v);
    else
        __atomic_store_n(&e->temporary, (uint16_t)v, __ATOMIC_RELAXED);
}

/* Every COL_TICK_EVENTS allocations of a thread: the writer's cold check
 * (col_writer_tick). */
UT_INLINE void col_count_alloc(col_thread_t *t)
{
    uint64_t n = t->n_allocs + 1;
    UT_BUMP(t->n_allocs, 1);
    if (UT_UNLIKELY((n & (COL_TICK_EVENTS - 1)) == 0))
        col_writer_tick();
}

/* Counters e (t's of `site`, NULL if they could not be mapped), shadow
 * and heap for a block of `size` bytes at ptr; counted:
 * col_site_counts_bytes(site, size), a constant 0 on the fast path. */
UT_INLINE void col_account_block(col_thread_t *t, void *ptr, size_t size, uint32_t site,
                                 col_count_t *e, int counted)
{
    uint32_t i, *leaf = col_shadow_leaf(ptr, 1, &i);
    if (UT_UNLIKELY(e == NULL || leaf == NULL)) {
        col_record_untracked(t);
        return;
    }
    uint32_t tag = COL_TAG_EXACT;
    if (UT_UNLIKELY(counted) && (tag = col_record_big_tag(ptr, size)) == 0) {
        col_record_untracked(t);
        return;
    }
    col_peak_check(t, e, counted);
    col_count_add_alloc(t, e);
    if (UT_UNLIKELY(counted))
        col_record_big_bytes(&col_count_bytes(e)->bytes, size); /* else allocs x key */
    if (UT_UNLIKELY(col_shadow_exchange(leaf, i, (site << COL_TAG_BITS) | tag) != 0))
        UT_BUMP(t->n_shadow_overwrites, 1);
    t->last_alloc = ptr;
    t->pending += (int64_t)size;
    if (t->pending >= __atomic_load_n(&col_heap.slack, __ATOMIC_RELAXED))
        col_record_publish_thread(t);
    col_count_alloc(t);
}

/* Counters, shadow and heap for a block of `size` bytes at ptr from
 * `site`. */
UT_INLINE void col_account_alloc(col_thread_t *t, void *ptr, size_t size, uint32_t site)
{
    col_account_block(t, ptr, size, site, col_thread_count(t, site),
                      col_site_counts_bytes(site, size));
}

/* The tag of a block's shadow value v (COL_TAG_*). */
UT_INLINE uint32_t col_tag_of(uint32_t v)
{
    return v & ((1u << COL_TAG_BITS) - 1);
}

/* Is the size of the block with shadow value v its site's size key?  (Else
 * its bytes are counted: col_site_counts_bytes said so at allocation.) */
UT_INLINE int col_tag_exact(uint32_t v)
{
    return col_tag_of(v) == COL_TAG_EXACT;
}

/* Requested size of a live block from its shadow value. */
UT_INLINE uint64_t col_block_size(const void *ptr, uint32_t v)
{
    if (UT_LIKELY(col_tag_exact(v)))
        return col_sites[v >> COL_TAG_BITS].key;
    return col_record_big_size(ptr, v);
}

/* t's balance, lowered: published at or below -slack (a lower heap makes
 * no peak). */
UT_INLINE void col_account_lower(col_thread_t *t)
{
    if (t->pending <= -__atomic_load_n(&col_heap.slack, __ATOMIC_RELAXED))
        col_record_publish_thread(t);
}

/* A live block of `size` bytes with shadow value v is freed by thread t:
 * its counters, and t's balance lowered but not yet published (an open
 * peak is closed first if the balance will be: col_peak_leaving). */
UT_INLINE void col_account_free_unpublished(col_thread_t *t, const void *ptr, uint32_t v,
                                            uint64_t size)
{
    col_peak_leaving(t, size);
    col_count_t *e = col_thread_count(t, v >> COL_TAG_BITS);
    if (UT_LIKELY(e != NULL)) {
        col_peak_check(t, e, !col_tag_exact(v));
        col_count_add_free(t, e);
        if (UT_UNLIKELY(!col_tag_exact(v)))
            col_record_big_bytes(&col_count_bytes(e)->bytes_freed, size);
        if (ptr == t->last_alloc) {
            col_count_add_temporary(t, e);
            t->last_alloc = NULL;
        }
    } else {
        UT_BUMP(t->n_lost, 1);
    }
    UT_BUMP_RELEASE(t->n_frees, 1);
    t->pending -= (int64_t)size;
}

/* A live block of `size` bytes with shadow value v is freed by thread t. */
UT_INLINE void col_account_free(col_thread_t *t, const void *ptr, uint32_t v, uint64_t size)
{
    col_account_free_unpublished(t, ptr, v, size);
    col_account_lower(t);
}

/* t's memo entry for (node, key).  Small sizes from one stack fall in
 * distinct entries; sizes above PF_EXACT_SIZE_MAX, keyed by bucket, have
 * their low bits clear, hence the shift. */
UT_INLINE col_site_memo_t *col_site_memo(col_thread_t *t, uint32_t node, uint64_t key)
{
    uint32_t i = (uint32_t)(key ^ (key >> 9)) + node * 0x9e3779b9u;
    return &t->site_memo[i & (COL_SITE_MEMO - 1)];
}

/* The site of (node, key) if t's memo has it, else 0 (an empty entry's
 * site). */
UT_INLINE uint32_t col_site_memo_site(col_thread_t *t, uint32_t node, uint64_t key)
{
    const col_site_memo_t *m = col_site_memo(t, node, key);
    return m->node == node && m->key == key ? m->site : 0;
}

/* col_site_memo_site, with t's counters of the site in *cnt (mapped when
 * the entry was made: site_index). */
UT_INLINE uint32_t col_site_memo_find(col_thread_t *t, uint32_t node, uint64_t key,
                                      col_count_t **cnt)
{
    uint32_t site = col_site_memo_site(t, node, key);
    if (UT_LIKELY(site != 0))
        *cnt = col_thread_count_mapped(t, site);
    return site;
}

/* The site of an allocation of size key `key` above frame that way 0 of
 * its cache set does not answer with its own key: way 0 holds the stack
 * (hit) and t's site memo has the pair, with t's counters of it in *cnt;
 * else the site index (hit) or the other ways and a walk, *cnt untouched. */
UT_INLINE uint32_t col_record_site_miss(col_thread_t *t, const void *frame, uint64_t key,
                                        col_sc_set_t *set, int hit, col_count_t **cnt)
{
    if (!hit)
        return col_record_walk(t, frame, key, set); /* the other ways first */
    col_sc_entry_t *e = &set->way[0];
    t->memo_node = e->node;
    uint32_t site = col_site_memo_find(t, e->node, key, cnt); /* another size */
    return UT_LIKELY(site != 0) ? site : col_record_entry_site(t, e, key);
}

/* An allocation of `size` bytes at ptr (not NULL) by the hook whose frame
 * is `frame` (built with a frame pointer; unwinding starts at its caller),
 * on thread state t, which was col_tls_fast and is now NULL (so that a
 * signal handler's malloc leaves t alone).  The common case first: a
 * size up to PF_EXACT_SIZE_MAX (its own size key, its bytes not counted)
 * from a stack the thread allocated from lately, found by the hook's frame
 * and return address (col_sc_entry_t) with every stack word its walk read
 * unchanged, and the entry's size; no unwinding, and the entry has the
 * counters.  Larger sizes take col_record_alloc_any. */
UT_INLINE void col_record_alloc_on(col_thread_t *t, void *ptr, size_t size, const void *frame)
{
    if (UT_UNLIKELY(size > PF_EXACT_SIZE_MAX)) {
        col_record_alloc_any(t, ptr, size, frame);
        return;
    }
    uintptr_t ra = ((const uintptr_t *)frame)[1];
    col_sc_set_t *set = col_sc_set(t->sc, col_tls_stack_hi, frame, ra);
    col_sc_entry_t *e = &set->way[0];
    int hit = col_sc_hit(e, frame, ra, col_modules_epoch());
    uint32_t site;
    col_count_t *c;
    if (UT_LIKELY(hit) && UT_LIKELY(size == e->key)) {
        t->memo_node = e->node;
        site = e->site;
        c = e->cnt;
    } else {
        c = NULL;
        site = col_record_site_miss(t, frame, size, set, hit, &c);
        if (UT_UNLIKELY(c == NULL)) { /* not from the memo */
            if (UT_UNLIKELY(site == COL_SITE_LOST)) { /* its bytes are counted */
                col_record_account_lost(t, ptr, size);
                return;
            }
            c = col_thread_count(t, site);
        }
    }
    col_account_block(t, ptr, size, site, c, 0);
}

/* col_record_alloc_on, with t kept from signal handlers meanwhile. */
UT_INLINE void col_record_alloc_fast(col_thread_t *t, void *ptr, size_t size, const void *frame)
{
    col_tls_fast = NULL; /* a signal handler's malloc must not touch t now */
    col_record_alloc_on(t, ptr, size, frame);
    col_tls_fast = t;
}

/* A realloc on t's fast path (the realloc hook) resized the block at ptr,
 * whose shadow value v, of an exact size, it took out of the shadow, to
 * `size` bytes (not 0) at p: the free and the allocation accounted in one
 * go, t's balance published at most once, as the heap is after both (the
 * heap between them is lower than before, so never a peak). */
UT_INLINE void col_record_realloc_fast(col_thread_t *t, const void *ptr, uint32_t v, void *p,
                                       size_t size, const void *frame)
{
    col_tls_fast = NULL;
    col_account_free_unpublished(t, ptr, v, col_sites[v >> COL_TAG_BITS].key);
    col_record_alloc_on(t, p, size, frame); /* if tracked, publishes a balance >= slack */
    if (t->pending < 0)
        col_account_lower(t);
    col_tls_fast = t;
}

/* The common free, all or nothing: ptr (not NULL) is a live block of an
 * exact size whose counters t has, no generation of the peak came since
 * they last changed, none of them fills, and the free does not leave an
 * open peak (col_peak_leaving).  Then the free is accounted and 1
 * returned, with no call made (so the free hook saves no registers); else
 * nothing of t has changed, col_tls_fast is left NULL and 0 returned:
 * col_record_free_slow does it all.  A balance at or below -slack (every
 * free of a lone thread, whose slack is 0) is published here: a free
 * lowers the heap, so it cannot make a new peak. */
UT_INLINE int col_record_free_quick(col_thread_t *t, void *ptr)
{
    col_tls_fast = NULL; /* before t's fields are read: see alloc */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint32_t i, *leaf = col_shadow_leaf(ptr, 0, &i);
    if (UT_UNLIKELY(leaf == NULL))
        return 0;
    uint32_t v = __atomic_load_n(&leaf[i], __ATOMIC_RELAXED);
    if (UT_UNLIKELY(v == 0 || !col_tag_exact(v)))
        return 0;
    uint32_t site = v >> COL_TAG_BITS;
    col_count_t *e = col_thread_count_mapped(t, site);
    /* neither of the counters below may fill here (col_record_carry is a
     * call); their next values are loaded again for the stores, as keeping
     * them would cost the hook registers to save */
    int temp = ptr == t->last_alloc;
    if (UT_UNLIKELY(e == NULL ||
                    e->peak_gen != __atomic_load_n(&col_heap.peak_gen, __ATOMIC_RELAXED) ||
                    ((e->frees + 1) & COL_COUNT_LOW(COL_COUNT_BITS)) == 0 ||
                    (temp && ((e->temporary + 1u) & COL_COUNT_LOW(COL_TEMP_BITS)) == 0)))
        return 0;
    int64_t pending = t->pending - (int64_t)col_sites[site].key;
    if (pending <= -__atomic_load_n(&col_heap.slack, __ATOMIC_RELAXED)) {
        if (UT_UNLIKELY(__atomic_load_n(&col_heap.peak_open, __ATOMIC_RELAXED)))
            return 0; /* leaving a peak (col_peak_leaving) */
        col_heap_add(pending);
        pending = 0;
    }
    __atomic_store_n(&leaf[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&e->frees, e->frees + 1, __ATOMIC_RELEASE);
    if (temp) {
        __atomic_store_n(&e->temporary, (uint16_t)(e->temporary + 1u), __ATOMIC_RELAXED);
        t->last_alloc = NULL;
    }
    UT_BUMP_RELEASE(t->n_frees, 1);
    t->pending = pending;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    col_tls_fast = t;
    return 1;
}

/* ptr (not NULL) is about to be freed, on thread state t, which was
 * col_tls_fast.  Returns 0 when the real free must not see it: a block of
 * the bootstrap arena (col_boot.c), which the shadow never knows, so only
 * an unknown block is asked about. */
UT_INLINE int col_record_free_fast(col_thread_t *t, void *ptr)
{
    col_tls_fast = NULL;
    uint32_t v = col_shadow_take(ptr);
    int real = 1;
    if (UT_LIKELY(v != 0))
        col_account_free(t, ptr, v, col_block_size(ptr, v));
    else
        real = col_record_unknown_free(t, ptr);
    col_tls_fast = t;
    return real;
}

#endif
