/* col_record.c - the recording paths that are not the common case (the
 * common case is inline in the hooks, col_record.h): a stack not in way 0
 * of the thread's cache of recent stacks (the other ways, or a walk), a
 * size new to a cached stack, sizes above PF_EXACT_SIZE_MAX, a thread's
 * first event and events after its exit, realloc's two halves, and the
 * global heap counter and peak.
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
    if (UT_LIKELY(col_proc.granule_shift == COL_SHADOW_GLIBC_SHIFT)) {
        size_t h = ((const size_t *)ptr)[-1];
        return (h & ~(size_t)7) - ((h & 2) ? 16 : 8);
    }
    return col_real.malloc_usable_size((void *)ptr);
}

/* The shadow tag of a block whose size is not its site's key
 * (col_site_counts_bytes): its slack (usable - requested) + 1 if below COL_TAG_SIDE - 1, else
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
    uint32_t tag = col_tag_of(v);
    if (tag == COL_TAG_SIDE)
        return col_shadow_size_take(ptr);
    return usable_size(ptr) - (tag - 1);
}

/* Publish the thread's pending live-byte change; may set a new peak. */
void col_record_publish_thread(col_thread_t *t)
{
    int64_t h = col_heap_add(t->pending);
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
}

/* The counters to keep beside site in a cache or memo entry (whose site
 * the fast path takes as one of exact size): t's, or NULL for the
 * pseudo-site ((no frames, key 0) is COL_SITE_LOST in the index) or
 * without memory. */
static col_count_t *kept_counters(col_thread_t *t, uint32_t site)
{
    return site != COL_SITE_LOST ? col_thread_count(t, site) : NULL;
}

/* The site of (node, key) from the site index, entered in t's memo.  A
 * stack the full call tree could not take is lost: its blocks go to node 0
 * (no frames) with their size key; a full site table sends them to the
 * pseudo-site COL_SITE_LOST.  Neither is kept in the memo, so that each
 * lost block is counted. */
UT_INLINE uint32_t site_index(col_thread_t *t, uint32_t node, uint64_t key)
{
    int lost = node == COL_NODE_NONE;
    uint32_t site = col_site_get(lost ? 0 : node, key);
    if (UT_UNLIKELY(site == 0)) {
        lost = 1;
        site = COL_SITE_LOST;
    }
    if (UT_UNLIKELY(lost)) {
        UT_BUMP(t->n_lost, 1);
        return site;
    }
    col_count_t *c = kept_counters(t, site);
    if (UT_UNLIKELY(c == NULL))
        return site;
    /* site last, after an empty entry's key and node: a fork taken
     * between these stores leaves the child an empty entry, never a key
     * paired with another key's site (the child may recycle this state) */
    col_site_memo_t *m = col_site_memo(t, node, key);
    m->site = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    m->key = key;
    m->node = node;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    m->site = site;
    return site;
}

/* The node's first site, if it is (node, key)'s; else 0.  Its list's head,
 * so one load and a compare, no cheaper from the memo. */
UT_INLINE uint32_t first_site(uint32_t node, uint64_t key)
{
    if (!col_site_listed(node))
        return 0;
    uint32_t id = __atomic_load_n(&col_node_links[node].site, __ATOMIC_ACQUIRE);
    return id != 0 && col_sites[id].key == key ? id : 0;
}

/* The site of (node, key), after a walk: the node's first site straight
 * from its list, else from t's memo, else from the site index.  So a
 * thread whose stacks each allocate one size never touches the memo's
 * pages (a page of 16 KB a thread); the memo is for a stack's other sizes,
 * and for its first one once a cached stack has shown several
 * (col_record_entry_site). */
UT_INLINE uint32_t site_get(col_thread_t *t, uint32_t node, uint64_t key)
{
    if (node == COL_NODE_NONE)
        return site_index(t, node, key);
    uint32_t first = first_site(node, key);
    if (first != 0)
        return first;
    /* a memo page is read first here, then written by site_index: a read
     * first would map the zero page that the write replaces */
    UT_WRITE_FIRST(col_site_memo(t, node, key)->site);
    uint32_t site = col_site_memo_site(t, node, key);
    return site != 0 ? site : site_index(t, node, key);
}

/* Keep (key, site) in e, with t's counters of site, for e's next
 * allocation.  Not a lost site (each lost block is counted by site_get),
 * nor one whose counters cannot be mapped. */
static void entry_keep(col_thread_t *t, col_sc_entry_t *e, uint64_t key, uint32_t site)
{
    col_count_t *c = kept_counters(t, site);
    if (c != NULL) {
        e->key = key;
        e->site = site;
        e->cnt = c;
    }
}

/* The site of (e's stack, key), kept in e for its next allocation.  The
 * fast path found none for key in e (nor in the memo), so this asks the
 * index. */
UT_NOINLINE uint32_t col_record_entry_site(col_thread_t *t, col_sc_entry_t *e, uint64_t key)
{
    uint32_t site = site_index(t, e->node, key);
    entry_keep(t, e, key, site);
    return site;
}

/* The ways of set in use (a bit each): only those are read, so a set
 * whose stacks are all first sights (binary-trees') costs no scan of
 * its eight entries, each a line of its own. */
UT_INLINE unsigned sc_used(const col_thread_t *t, const col_sc_set_t *set)
{
    return t->sc_used[set - t->sc];
}

/* The way of set that keeps the stack `node` from frame and ra. */
static col_sc_entry_t *sc_seen(const col_thread_t *t, col_sc_set_t *set, const void *frame,
                               uintptr_t ra, uint32_t node)
{
    for (unsigned used = sc_used(t, set); used; used &= used - 1) {
        col_sc_entry_t *e = &set->way[__builtin_ctz(used)];
        if (e->frame == frame && e->ra == ra && e->node == node)
            return e;
    }
    return NULL;
}

/* A set's ghosts: a word (a hash of frame, return address and node) for
 * each of the last COL_SC_GHOSTS stacks it saw a first time or evicted.
 * A stack is kept at its second sight, so that a program whose stacks
 * come once (binary-trees' come once per tree) does not pay for copying
 * their checks, nor evict the stacks that come back; a first sight takes
 * no way, it only leaves its ghost.  A stack whose ghost is there when it
 * comes back is kept.  Until 2026-11-26 a first sight took a way of its
 * own to wait in, and a later first sight could take it: when more new
 * stacks than a set had free ways came back in turn, each took the next
 * one's way before it came back, none was seen twice, and every one of
 * them was walked at every allocation (sqlite3: ~22 stacks that all
 * allocate from one return address, 0.6 k to 1.8 M walks of its 3.3 M
 * allocations as the address layout fell; ~560 now).  A false match
 * costs a walk and a fill, never a wrong stack: a kept stack is always
 * the walk's own. */
UT_INLINE uint32_t sc_ghost_word(const void *frame, uintptr_t ra, uint32_t node)
{
    uint64_t h = ((uintptr_t)frame ^ ra * 31) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) ^ node;
}

static void sc_ghost_put(col_thread_t *t, col_sc_set_t *set, const void *frame, uintptr_t ra,
                         uint32_t node)
{
    size_t s = (size_t)(set - t->sc);
    t->sc_ghost[s][t->sc_ghost_at[s]++ % COL_SC_GHOSTS] = sc_ghost_word(frame, ra, node);
}

static int sc_ghost_has(const col_thread_t *t, const col_sc_set_t *set, const void *frame,
                        uintptr_t ra, uint32_t node)
{
    const uint32_t *g = t->sc_ghost[set - t->sc];
    uint32_t w = sc_ghost_word(frame, ra, node);
    int has = 0;
    for (int i = 0; i < COL_SC_GHOSTS; i++)
        has |= g[i] == w;
    return has;
}

/* The way of set to keep a stack in at its second sight: an empty way,
 * else ways 1 to 7 in turn (the thread's count of such fills), so that
 * way 0, the fast path's, keeps a stack it can take.  The stack it held
 * leaves its ghost, so that it is kept again as soon as it comes back. */
static col_sc_entry_t *sc_free_way(col_thread_t *t, col_sc_set_t *set)
{
    size_t s = (size_t)(set - t->sc);
    unsigned used = t->sc_used[s];
    unsigned w = used == (1u << COL_SC_WAYS) - 1 ? 1 + t->sc_victim++ % (COL_SC_WAYS - 1)
                                                 : (unsigned)__builtin_ctz(~used);
    col_sc_entry_t *e = &set->way[w];
    if (e->frame)
        sc_ghost_put(t, set, e->frame, e->ra, e->node);
    t->sc_used[s] = (uint8_t)(used | 1u << w);
    t->sc_touched |= 1u << s;
    t->sc_hits[s][w] = 0; /* a new stack in the way (sc_promote) */
    return e;
}

/* e, a way of set, was just filled: in use if the stack fitted (a deep
 * chunk for it may have emptied the pool's other entries, e among them,
 * before it was filled: col_thread_deep). */
static void sc_filled(col_thread_t *t, col_sc_set_t *set, const col_sc_entry_t *e)
{
    size_t s = (size_t)(set - t->sc);
    unsigned bit = 1u << (e - set->way);
    t->sc_used[s] = (uint8_t)(e->frame ? t->sc_used[s] | bit : t->sc_used[s] & ~bit);
}

/* Swap two entries of a set word by word (no 1 KB copy on the program's
 * stack, which may be a small signal stack); checks kept in an entry
 * move with it. */
static void sc_swap(col_sc_entry_t *a, col_sc_entry_t *b)
{
    int a_in = col_sc_checks_inline(a), b_in = col_sc_checks_inline(b);
    uint64_t *x = (uint64_t *)(void *)a, *y = (uint64_t *)(void *)b;
    for (size_t i = 0; i < sizeof *a / sizeof *x; i++) {
        uint64_t v = x[i];
        x[i] = y[i];
        y[i] = v;
    }
    /* each now holds the other's chk_at and chk_end */
    if (b_in) {
        a->chk_end = a->chk + (a->chk_end - a->chk_at);
        a->chk_at = a->chk;
    }
    if (a_in) {
        b->chk_end = b->chk + (b->chk_end - b->chk_at);
        b->chk_at = b->chk;
    }
}

/* e, a way 1-7 of set, answered an allocation: after COL_SC_PROMOTE such
 * answers since the set last changed its way 0, it becomes way 0, the
 * hooks' inline path.  Way 0 is otherwise never evicted (sc_free_way), so
 * a stack the program no longer uses would keep it for good: python3 in
 * fp mode found 564 of its 9.5 M allocations' stacks in way 0 and 6.4 M
 * in ways 1-3.  Two hot stacks of one set swap places at most once per
 * COL_SC_PROMOTE allocations.  Returns where e's stack now is. */
#define COL_SC_PROMOTE 255
static col_sc_entry_t *sc_promote(col_thread_t *t, col_sc_set_t *set, col_sc_entry_t *e)
{
    uint8_t *hits = t->sc_hits[set - t->sc];
    size_t w = (size_t)(e - set->way);
    if (++hits[w] < COL_SC_PROMOTE)
        return e;
    memset(hits, 0, COL_SC_WAYS);
    sc_swap(&set->way[0], e);
    return &set->way[0];
}

/* A col_node_next word: node (26 bits) | site (24 bits) | size key (14
 * bits: up to PF_EXACT_SIZE_MAX; 0 for a larger key or none, which the
 * site's record then gives). */
#define NEXT_SITE_SHIFT 26
#define NEXT_KEY_SHIFT (NEXT_SITE_SHIFT + 24)
_Static_assert(COL_NODE_MAX == 1u << NEXT_SITE_SHIFT, "a node id fits its field");
_Static_assert(COL_SITE_MAX == 1u << (NEXT_KEY_SHIFT - NEXT_SITE_SHIFT), "a site id fits its field");
_Static_assert(PF_EXACT_SIZE_MAX < 1u << (64 - NEXT_KEY_SHIFT), "an exact size key fits its field");

UT_INLINE uint64_t next_pack(uint32_t node, uint32_t site, uint64_t key)
{
    uint64_t k = key <= PF_EXACT_SIZE_MAX ? key : 0;
    return node | (uint64_t)site << NEXT_SITE_SHIFT | k << NEXT_KEY_SHIFT;
}

UT_INLINE uint32_t next_node(uint64_t w)
{
    return (uint32_t)w & (COL_NODE_MAX - 1);
}

UT_INLINE uint32_t next_site(uint64_t w)
{
    return (uint32_t)(w >> NEXT_SITE_SHIFT) & (COL_SITE_MAX - 1);
}

/* Is w's site (not 0) the one of size key `key`? */
UT_INLINE int next_site_keyed(uint64_t w, uint64_t key)
{
    uint64_t k = w >> NEXT_KEY_SHIFT;
    return k ? k == key : col_sites[next_site(w)].key == key;
}

/* Is the stack above frame the guess?  A walk of the mode's unwinder
 * compared with it, checking in place the words the last such walk read
 * where it meets that walk's frames (col_memo.h).  (Two earlier DWARF
 * versions, a walk compared with the guess frame by frame, and one that
 * stepped frames an earlier walk found under the frame-pointer rule
 * without a lookup by reading every frame's node record, were slower than
 * the memo: docs/BENCHMARKS.md.) */
static int guess_is(const col_thread_t *t, const void *frame, uint32_t guess)
{
    if (col_config.unwinder == PF_UNWIND_FP)
        return col_unwind_fp_is(t, frame, guess);
    if (col_config.unwinder == PF_UNWIND_DWARF)
        return col_dwarf_is(t, frame, guess);
    return 0;
}

/* The stack of this allocation: the guess (the stack that came after the
 * thread's previous one last time), if guess_is finds it, else the
 * unwinder's.
 *
 * Not a guess the cache saw from this frame before and has not kept, or
 * kept before the modules changed (epoch): that stack is about to be
 * cached, from the unwinder's memo.  One it kept in this epoch missed
 * because a word its walk read changed and the stack did not (frameless
 * code keeps data in rbp): walking it again to keep it again would repeat
 * at every allocation, at the cost of a memo walk and, for a deep stack,
 * of copying its checks.  When the guess is taken, *guessed is set and
 * *seen is that entry (NULL: the cache never saw the stack from here). */
static uint32_t walk_stack(col_thread_t *t, const void *frame, uintptr_t ra, col_sc_set_t *set,
                           uint32_t guess, uint32_t epoch, int *guessed, col_sc_entry_t **seen)
{
    *guessed = 0;
    if (guess_is(t, frame, guess)) {
        col_sc_entry_t *e = sc_seen(t, set, frame, ra, guess);
        if (e ? e->epoch == epoch : !sc_ghost_has(t, set, frame, ra, guess)) {
            if (UT_UNLIKELY(col_config.verify_unwind))
                col_unwind_verify_walk(t, frame, guess);
            *guessed = 1;
            *seen = e;
            return guess;
        }
    }
    return col_unwind(t, frame, guess);
}

/* An allocation whose stack is not in way 0 of its set in the thread's
 * cache of recent stacks: the set's other ways in use, else unwind, and
 * keep the stack in the set (at its second sight: sc_ghost_word) for the
 * next allocation from the same frame and return address.
 * The stack and site allocated from after the previous allocation's stack
 * last time are the guess (col_node_next). */
UT_NOINLINE uint32_t col_record_walk(col_thread_t *t, const void *frame, uint64_t key,
                                     col_sc_set_t *set)
{
    uintptr_t ra = ((const uintptr_t *)frame)[1];
    uint32_t epoch = col_sc_epoch();
    col_sc_entry_t *e = NULL;
    int cached = 0;
    for (unsigned more = sc_used(t, set) & ~1u; more && !cached; more &= more - 1) {
        e = &set->way[__builtin_ctz(more)];
        cached = col_sc_hit(e, frame, ra, epoch);
    }
    if (cached && !col_config.verify_unwind) {
        UT_BUMP(t->n_sc_ways, 1);
        e = sc_promote(t, set, e);
        t->memo_node = e->node;
        return UT_LIKELY(key == e->key) ? e->site : col_record_entry_site(t, e, key);
    }
    if (!cached && UT_UNLIKELY(col_config.verify_unwind)) {
        e = &set->way[0]; /* under verification the fast path never takes one */
        cached = col_sc_hit(e, frame, ra, epoch);
    }
    UT_BUMP(t->n_walks, 1);
    uint32_t prev = t->memo_node;
    uint64_t *next = prev < COL_NODE_MAX ? &col_node_next[prev] : NULL;
    /* acquire: the node and site records it names were made by the thread
     * that stored it, maybe another one (which stored it with release) */
    uint64_t guess = next ? __atomic_load_n(next, __ATOMIC_ACQUIRE) : 0;
    int guessed;
    col_sc_entry_t *seen = NULL;
    uint32_t node = walk_stack(t, frame, ra, set, next_node(guess), epoch, &guessed, &seen);
    if (UT_UNLIKELY(cached))
        col_unwind_verify_cache(e->node, node);
    t->memo_node = node;
    e = NULL;
    if (cached) {
        /* verification: the entry stays, as it would have */
    } else if (guessed && seen) {
        /* the entry stays as it is: the memo is not this walk's, and
         * keeping the stack from there would certify words this walk
         * never read */
    } else if (col_unwind_memo() && node != COL_NODE_NONE) {
        /* (a lost stack is not kept: each of its allocations is counted
         * as lost, by site_get) */
        /* the way that saw this stack before: fill its checks now (its
         * second sight), or again if they no longer hold (a word changed,
         * or the modules did); a taken guess was not seen (walk_stack) */
        col_sc_entry_t *before = guessed ? NULL : sc_seen(t, set, frame, ra, node);
        if (before || (!guessed && sc_ghost_has(t, set, frame, ra, node))) {
            e = before ? before : sc_free_way(t, set);
            col_unwind_cache(t, e, frame, node, epoch);
            sc_filled(t, set, e);
        } else {
            sc_ghost_put(t, set, frame, ra, node); /* first sight */
        }
    }
    /* the guessed site is (node, key)'s if the guessed node is, with the
     * key: the word was stored whole, its site made for its node */
    uint32_t site = next_site(guess);
    if (!(node == next_node(guess) && site && next_site_keyed(guess, key))) {
        site = site_get(t, node, key);
        uint64_t now = next_pack(node, site, key);
        if (next && node != COL_NODE_NONE && site != COL_SITE_LOST && guess != now)
            __atomic_store_n(next, now, __ATOMIC_RELEASE);
    }
    if (e && e->frame && e->epoch)
        entry_keep(t, e, key, site);
    return site;
}

/* The fast path of a size above PF_EXACT_SIZE_MAX (bucketed, its bytes
 * counted), with the same cache of recent stacks; col_tls_fast is NULL. */
UT_NOINLINE void col_record_alloc_any(col_thread_t *t, void *ptr, size_t size, const void *frame)
{
    uint64_t key = col_size_key(size);
    uintptr_t ra = ((const uintptr_t *)frame)[1];
    col_sc_set_t *set = col_sc_set(t->sc, col_tls_stack_hi, frame, ra);
    col_sc_entry_t *e = &set->way[0];
    int hit = col_sc_hit(e, frame, ra, col_modules_epoch());
    uint32_t site;
    col_count_t *c = NULL;
    if (hit && key == e->key) {
        t->memo_node = e->node;
        site = e->site;
        c = e->cnt;
    } else {
        site = col_record_site_miss(t, frame, key, set, hit, &c);
    }
    /* the counters the entry or the site memo kept, else looked up */
    col_account_block(t, ptr, size, site, c ? c : col_thread_count(t, site),
                      col_site_counts_bytes(site, size));
}

/* With HEAPSCOPE_STATS=1, at exit: how the allocations found their
 * stacks, as a profile message (the cost of a program under heapscope
 * depends on it: way 0 is the hooks' inline path, ways 1-7 a call, a walk
 * reads the stack). */
void col_record_report(void)
{
    if (!col_config.stats)
        return;
    uint64_t allocs = 0, ways = 0, walks = 0;
    for (col_thread_t *t = col_thread_all(); t; t = t->next) {
        allocs += __atomic_load_n(&t->n_allocs, __ATOMIC_RELAXED);
        ways += __atomic_load_n(&t->n_sc_ways, __ATOMIC_RELAXED);
        walks += __atomic_load_n(&t->n_walks, __ATOMIC_RELAXED);
    }
    uint64_t way0 = allocs > ways + walks ? allocs - ways - walks : 0;
    col_message_add("HEAPSCOPE_STATS: stacks of %lu allocations: %lu from way 0 of the cache of "
                    "recent stacks, %lu from ways 1-%d, %lu walked",
                    (unsigned long)allocs, (unsigned long)way0, (unsigned long)ways,
                    COL_SC_WAYS - 1, (unsigned long)walks);
    col_message_add("HEAPSCOPE_STATS: generations of the peak's shares so far: %u (each "
                    "saved by the threads' counters as they next change)",
                    __atomic_load_n(&col_heap.peak_gen, __ATOMIC_RELAXED));
}

/* A block of the pseudo-site COL_SITE_LOST (the site table is full). */
UT_NOINLINE void col_record_account_lost(col_thread_t *t, void *ptr, size_t size)
{
    col_account_alloc(t, ptr, size, COL_SITE_LOST);
}

/* The hooks that do not inline the fast paths, and the cold paths, call
 * these. */
void col_record_alloc(void *ptr, size_t size, const void *frame)
{
    col_thread_t *t = col_tls_fast;
    if (t != NULL)
        col_record_alloc_fast(t, ptr, size, frame);
    else
        col_record_alloc_cold(ptr, size, frame);
}

/* A free col_record_free_quick declined, then the real free (a tail call
 * of the free hooks). */
UT_NOINLINE void col_record_free_slow(col_thread_t *t, void *ptr)
{
    if (col_record_free_fast(t, ptr))
        col_real.free(ptr);
}

int col_record_free(void *ptr)
{
    col_thread_t *t = col_tls_fast;
    return t != NULL ? col_record_free_fast(t, ptr) : col_record_free_cold(ptr);
}

/* realloc(ptr, size) off the realloc hook's inline path, for any thread
 * the collector may record, attached or not (col_record_alloc and
 * col_record_commit_free attach it): the old block is taken out of the
 * shadow before the real realloc, then its free is committed, or it is
 * put back if realloc failed; the new block is an allocation from the
 * stack above frame. */
UT_NOINLINE void *col_record_realloc_slow(void *ptr, size_t size, const void *frame)
{
    void *p;
    if (ptr == NULL) {
        if ((p = col_real.malloc(size)) != NULL)
            col_record_alloc(p, size, frame);
        return p;
    }
    col_taken_t old;
    col_record_take(ptr, &old);
    p = col_real.realloc(ptr, size);
    if (UT_UNLIKELY(p == NULL && size != 0)) {
        col_record_restore(&old); /* failed: the old block lives on */
        return NULL;
    }
    col_record_commit_free(&old);
    if (p != NULL)
        col_record_alloc(p, size, frame);
    return p;
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
    if (col_tag_of(tk->value) == COL_TAG_SIDE)
        col_shadow_size_put(tk->ptr, tk->size);
    col_shadow_set(tk->ptr, tk->value);
}

/* The free of a taken block, on t. */
static void account_taken(col_thread_t *t, const col_taken_t *tk)
{
    if (tk->valid)
        col_account_free(t, tk->ptr, tk->value, tk->size);
    else
        UT_BUMP(t->n_unknown_frees, 1);
}

void col_record_commit_free(col_taken_t *tk)
{
    col_thread_t *t = col_tls_fast;
    if (UT_LIKELY(t != NULL)) {
        col_tls_fast = NULL;
        account_taken(t, tk);
        col_tls_fast = t;
        return;
    }
    int saved = errno;
    int top = col_guard_enter();
    t = col_thread_attach();
    if (t != NULL) {
        if (t->shared)
            col_thread_lock_shared();
        account_taken(t, tk);
        if (t->shared)
            col_thread_unlock_shared();
    }
    col_guard_leave(top);
    errno = saved;
}

/* ---- cold paths ---------------------------------------------------------- */

/* First event of a thread, or an event after the thread's key destructor
 * ran (then the shared late state is used under its lock). */
UT_COLD void col_record_alloc_cold(void *ptr, size_t size, const void *frame)
{
    int saved = errno;
    int top = col_guard_enter();
    col_thread_t *t = col_thread_attach();
    if (t != NULL) {
        uint32_t node = col_unwind(t, frame, 0);
        if (!t->shared)
            t->memo_node = node;
        if (t->shared)
            col_thread_lock_shared();
        col_account_alloc(t, ptr, size, site_get(t, node, col_size_key(size)));
        if (t->shared)
            col_thread_unlock_shared();
    }
    col_guard_leave(top); /* the fast path is open to the thread from now on */
    errno = saved;
}

/* A free of a block the shadow does not know: a bootstrap block (not for
 * the real free, returns 0), or one heapscope never saw allocated. */
UT_NOINLINE int col_record_unknown_free(col_thread_t *t, const void *ptr)
{
    if (col_boot_owns(ptr))
        return 0;
    UT_BUMP(t->n_unknown_frees, 1);
    return 1;
}

UT_COLD int col_record_free_cold(void *ptr)
{
    if (col_boot_owns(ptr))
        return 0;
    int saved = errno;
    int top = col_guard_enter();
    col_thread_t *t = col_thread_attach();
    if (t != NULL) {
        if (t->shared)
            col_thread_lock_shared();
        col_taken_t tk;
        col_record_take(ptr, &tk);
        account_taken(t, &tk);
        if (t->shared)
            col_thread_unlock_shared();
    }
    col_guard_leave(top);
    errno = saved;
    return 1;
}

/* A published heap of h bytes: a new peak if above the last, left open
 * for col_record_peak_close (the flag is written once per generation, not
 * at every peak of a growing heap). */
UT_COLD static void new_peak(int64_t h)
{
    int64_t old = __atomic_load_n(&col_heap.peak, __ATOMIC_RELAXED);
    while (h > old) {
        if (__atomic_compare_exchange_n(&col_heap.peak, &old, h, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            if (!__atomic_load_n(&col_heap.peak_open, __ATOMIC_RELAXED))
                __atomic_store_n(&col_heap.peak_open, 1, __ATOMIC_RELEASE);
            return;
        }
    }
}

/* If a peak is open, a new generation: every counter's live partials as
 * they are now are its share of that peak, saved lazily before they next
 * change (col_peak_check).  Called before a free that publishes a lower
 * heap changes any counter, and by the flush before it reads them; one of
 * two threads closing the same peak makes the generation. */
UT_COLD void col_record_peak_close(void)
{
    if (__atomic_exchange_n(&col_heap.peak_open, 0, __ATOMIC_ACQ_REL)) {
        __atomic_add_fetch(&col_heap.peak_gen, 1, __ATOMIC_RELEASE);
    }
}

/* Save t's counters e's live partials as their share of peak `gen`.  A
 * site of exact sizes keeps its block count in the hot part when it fits
 * (its bytes are that times the size key), so that a peak does not touch
 * the peak plane of every such site; a counted site (counted) saves blocks
 * and bytes in the peak plane.  peak_gen is stored last, with release, so
 * the writer that sees the new generation also sees the values (see
 * col_flush.c). */
UT_COLD void col_record_save_peak(col_thread_t *t, col_count_t *e, uint32_t gen, int counted)
{
    /* the carry plane only once t has carried (else it may be unwritten) */
    static const col_count_carry_t none;
    const col_count_carry_t *n = t->carried ? col_count_carry(e) : &none;
    int64_t blocks = (int64_t)(col_count_whole(n->allocs, e->allocs, COL_COUNT_BITS) -
                               col_count_whole(n->frees, e->frees, COL_COUNT_BITS));
    if (!counted && blocks > COL_PEAK_COLD && blocks <= INT16_MAX && !col_config.fault_peak_cold) {
        __atomic_store_n(&e->peak_blocks, (int16_t)blocks, __ATOMIC_RELAXED);
    } else {
        col_count_peak_t *p = col_count_peak(e);
        const col_count_bytes_t *b = col_count_bytes(e);
        UT_WRITE_FIRST(p->blocks);
        __atomic_store_n(&p->blocks, blocks, __ATOMIC_RELAXED);
        __atomic_store_n(&p->bytes, counted ? (int64_t)(b->bytes - b->bytes_freed) : 0,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&e->peak_blocks, COL_PEAK_COLD, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&e->peak_gen, gen, __ATOMIC_RELEASE);
}

/* A carry of t, to *carry, is about to begin: the state is marked first,
 * so that a reader that saw it unmarked after reading a counter knows the
 * counter had never filled. */
static void carry_begin(col_thread_t *t, uint32_t *carry)
{
    if (!t->carried)
        __atomic_store_n(&t->carried, 1, __ATOMIC_RELEASE);
    UT_WRITE_FIRST(*carry);
}

/* ... and ends, once the counter holds its low bits clear and its parity
 * flipped: a reader that finds the carry one behind the parity counts it
 * in (col_count_whole). */
static void carry_end(uint32_t *carry)
{
    if (col_config.fault_slow_carry)
        col_fault_slow_read_now();
    __atomic_store_n(carry, *carry + 1, __ATOMIC_RELEASE);
}

/* The low bits of t's counter h (allocations or frees) filled: v has them
 * clear and its parity flipped. */
UT_COLD void col_record_carry(col_thread_t *t, uint32_t *h, uint32_t *carry, uint32_t v)
{
    carry_begin(t, carry);
    __atomic_store_n(h, v & COL_COUNT_HELD(COL_COUNT_BITS), __ATOMIC_RELEASE);
    carry_end(carry);
}

/* The same for the temporary allocations of e (COL_TEMP_BITS). */
UT_COLD void col_record_carry_temporary(col_thread_t *t, col_count_t *e, uint32_t v)
{
    uint32_t *carry = &col_count_carry(e)->temporary;
    carry_begin(t, carry);
    __atomic_store_n(&e->temporary, (uint16_t)(v & COL_COUNT_HELD(COL_TEMP_BITS)), __ATOMIC_RELEASE);
    carry_end(carry);
}

/* The byte counters of sizes above PF_EXACT_SIZE_MAX, in the bytes plane. */
UT_NOINLINE void col_record_big_bytes(uint64_t *counter, uint64_t size)
{
    UT_WRITE_FIRST(*counter);
    UT_BUMP_RELEASE(*counter, size); /* bytes_freed: see col_flush.c's read_counts */
}
