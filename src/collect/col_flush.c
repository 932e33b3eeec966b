/* col_flush.c - writes the whole profile (docs/FORMAT.md) to NAME.tmp and
 * renames it over NAME, so the file on disk is always complete, or empty
 * before the first write.  A process whose only write is its last (at exit
 * or exec: most short-lived processes) writes straight into the empty NAME
 * col_output.c has just created: a reader could meet a partial file there
 * instead of an empty one, neither of them a profile, and the process
 * makes one file, not two and a rename (on ext4 the rename over NAME also
 * forces NAME.tmp's data to disk at once).
 *
 * The call tree is the collector's own (col_node.c): its nodes are written
 * as they are, in id order, each after the MODULE_LOAD/UNLOAD records of
 * the module epoch it was made in.  The stacks are the nodes that
 * allocation sites name (stack id = node id + 1), and the counters of
 * every site are merged across all thread states at every flush, a leaf
 * of 1024 sites at a time.
 *
 * Runs with the writer lock and the re-entrancy guard held.  Its tables
 * are mapped (col_vm.c) or static, and the format writer's buffers are
 * mapped, so the program's arenas never hold them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/col_internal.h"
#include "common/ut_spin.h"
#include "format/pf_writer.h"
#include "heapscope/profile.h"

extern char **environ;

/* ---- stacks: the nodes allocation sites name ----------------------------- */

/* Every distinct node of a site, in the order the sites were made; the
 * profile's stack id of node n is n + 1 (stack 1: node 0, no frames, the
 * pseudo-stack of lost blocks).  Grown incrementally, as sites appear. */
static uint32_t *stack_nodes;      /* the stacks' nodes, [0] = node 0 */
static uint32_t nstacks, cap_stacks;
static uint8_t *stack_seen;        /* by node id: already in stack_nodes */
static uint32_t cap_seen;
static uint32_t seen_written;      /* stack_seen's first bytes, written */
static uint32_t sites_done;        /* sites whose node is in stack_nodes */
static int final_done;
static uint64_t fork_events;       /* events at fork (child) */

/* Table p, of *cap entries of `size` bytes, with room for `need` (mapped,
 * 4096 entries at first, doubled as needed): p itself, or its new place;
 * NULL without memory (p is left as it was). */
static void *table_fit(void *p, uint32_t *cap, uint32_t need, size_t size)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    void *q = col_vm_grow(p, (size_t)*cap * size, (size_t)c * size);
    if (q)
        *cap = c;
    return q;
}

/* Add the nodes of sites (sites_done, nsites] to the stacks; without
 * memory, what is left waits for the next flush. */
static void stacks_update(uint32_t nsites, uint32_t nnodes)
{
    uint32_t cap = cap_seen;
    uint8_t *seen = table_fit(stack_seen, &cap_seen, nnodes + 1, 1);
    if (!seen)
        return;
    stack_seen = seen;
    if (cap_seen != cap)
        seen_written = cap; /* copied into the new table */
    /* the loop below reads seen[node] at random: write its pages first,
     * or each read maps the zero page that the write after it replaces
     * (a fault and a TLB shootdown per page; UT_WRITE_FIRST) */
    if (seen_written < nnodes + 1) {
        memset(seen + seen_written, 0, nnodes + 1 - seen_written);
        seen_written = nnodes + 1;
    }
    if (!nstacks) { /* stack 1, node 0 (no frames), is always written */
        uint32_t *g = table_fit(NULL, &cap_stacks, 1, sizeof *g);
        if (!g)
            return;
        stack_nodes = g;
        g[nstacks++] = 0;
        seen[0] = 1;
    }
    for (uint32_t s = sites_done + 1; s <= nsites; s++) {
        uint32_t node = col_sites[s].node;
        if (!seen[node]) {
            uint32_t *g = table_fit(stack_nodes, &cap_stacks, nstacks + 1, sizeof *g);
            if (!g)
                return;
            stack_nodes = g;
            g[nstacks++] = node;
            seen[node] = 1;
        }
        sites_done = s;
    }
}

/* ---- merged counters ------------------------------------------------------ */

typedef struct merged {
    uint64_t allocs, bytes, frees, bytes_freed, temporary;
    int64_t peak_blocks, peak_bytes;
} merged_t;

/* The counters of one leaf's sites, summed over the threads.  The flush
 * merges and writes the sites a leaf at a time (write_counters), so this
 * is all the table it needs, however many sites there are. */
static merged_t merged[COL_COUNT_LEAF];

/* Which of the leaf's sites count bytes (col_site_counts_bytes), found
 * once per leaf: the other sites' bytes are their counts times their size
 * key, multiplied once the threads are summed (leaf_bytes), so that the
 * merge of each thread reads neither col_sites nor multiplies. */
static uint8_t leaf_counted[COL_COUNT_LEAF];

typedef struct totals {
    uint64_t allocs, frees, bytes, bytes_freed, temporary;
    uint64_t unknown_frees, lost, overwrites, events, untracked;
} totals_t;

typedef struct counts {
    uint64_t allocs, bytes, frees, bytes_freed, temporary;
} counts_t;

/* One thread's (t's) counters of one site, read while that thread may
 * change them.  A block's allocation is counted before its free, and the
 * frees (and bytes freed) with release stores, so the frees are read
 * first: the allocations read after them include those of every block
 * whose free they include, on this thread or another.  Then the frees are
 * read again: if they did not change, the allocations read between are
 * this thread's at one moment (a thread that allocates and frees one
 * block at a time shows it live or not, never -1 or +2); a few tries
 * nearly always find one, and else the allocations may include blocks
 * allocated meanwhile.  The temporary allocations, counted after the free,
 * are read before the frees.  Once t's counters have filled (t->carried),
 * the carries are read before and after the counters: the same both times,
 * they are whole with the parities read between (col_count_whole).
 * (Acquire loads throughout, so that the reads happen in this order: plain
 * loads on x86-64.)  Always inline: with two callers GCC kept it out of
 * line, and as a call in merge_thread's loop it cost binary-trees' final
 * flush at 16 threads 5-6 ms more CPU (docs/BENCHMARKS.md). */
UT_INLINE void read_counts(const col_thread_t *t, const col_count_t *e, int counted,
                           uint64_t key, counts_t *r)
{
    const col_count_carry_t *cp = col_count_carry((col_count_t *)e);
    const col_count_bytes_t *bp = col_count_bytes((col_count_t *)e);
    /* the carries only once t has carried: most threads never do, and a
     * read first would map the zero page there (see UT_WRITE_FIRST), as
     * it would in the bytes plane of a site that counts no bytes */
    int carried = __atomic_load_n(&t->carried, __ATOMIC_ACQUIRE);
    col_count_carry_t n = {0, 0, 0, 0};
    uint32_t temporary, frees, allocs;
    uint64_t bytes = 0, bytes_freed = 0;
    if (!carried && !counted && !col_config.fault_slow_reads) {
        /* the common case, the same reads with no carry and no bytes: once
         * through, without the loop's state */
        temporary = __atomic_load_n(&e->temporary, __ATOMIC_ACQUIRE);
        frees = __atomic_load_n(&e->frees, __ATOMIC_ACQUIRE);
        allocs = __atomic_load_n(&e->allocs, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&e->frees, __ATOMIC_ACQUIRE) == frees &&
            !__atomic_load_n(&t->carried, __ATOMIC_ACQUIRE)) {
            r->temporary = temporary;
            r->frees = frees;
            r->allocs = allocs;
            r->bytes_freed = frees * key;
            r->bytes = allocs * key;
            return;
        }
    }
    for (int tries = 1;; tries++) {
        if (carried) {
            n.allocs = __atomic_load_n(&cp->allocs, __ATOMIC_ACQUIRE);
            n.frees = __atomic_load_n(&cp->frees, __ATOMIC_ACQUIRE);
            n.temporary = __atomic_load_n(&cp->temporary, __ATOMIC_ACQUIRE);
        }
        temporary = __atomic_load_n(&e->temporary, __ATOMIC_ACQUIRE);
        frees = __atomic_load_n(&e->frees, __ATOMIC_ACQUIRE);
        if (counted)
            bytes_freed = __atomic_load_n(&bp->bytes_freed, __ATOMIC_ACQUIRE);
        col_fault_slow_read();
        allocs = __atomic_load_n(&e->allocs, __ATOMIC_ACQUIRE);
        if (counted)
            bytes = __atomic_load_n(&bp->bytes, __ATOMIC_ACQUIRE);
        col_fault_slow_read();
        int same = __atomic_load_n(&e->frees, __ATOMIC_ACQUIRE) == frees;
        if (!carried && __atomic_load_n(&t->carried, __ATOMIC_ACQUIRE)) {
            carried = 1; /* a counter filled meanwhile (once only): again, with the carries */
            continue;
        }
        if (carried)
            same = same && __atomic_load_n(&cp->allocs, __ATOMIC_ACQUIRE) == n.allocs &&
                   __atomic_load_n(&cp->frees, __ATOMIC_ACQUIRE) == n.frees &&
                   __atomic_load_n(&cp->temporary, __ATOMIC_ACQUIRE) == n.temporary;
        if (same || tries >= 4)
            break;
    }
    if (UT_LIKELY(!carried)) { /* never filled: each is its low bits */
        r->temporary = temporary;
        r->frees = frees;
        r->allocs = allocs;
    } else {
        r->temporary = col_count_whole(n.temporary, temporary, COL_TEMP_BITS);
        r->frees = col_count_whole(n.frees, frees, COL_COUNT_BITS);
        r->allocs = col_count_whole(n.allocs, allocs, COL_COUNT_BITS);
    }
    r->bytes_freed = counted ? bytes_freed : r->frees * key;
    r->bytes = counted ? bytes : r->allocs * key;
}

/* Has t never counted anything at e?  (A thread that has carried may
 * have filled a count there back to zero low bits.) */
static int counts_empty(const col_thread_t *t, const col_count_t *e)
{
    return !__atomic_load_n(&e->allocs, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&e->frees, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&t->carried, __ATOMIC_ACQUIRE);
}

/* Thread t's counter leaf l, as another thread reads it: NULL if t has
 * not mapped it (yet). */
static col_count_t *leaf_of(col_thread_t *t, uint32_t l)
{
    if (l >= __atomic_load_n(&t->cnt_leaves, __ATOMIC_ACQUIRE))
        return NULL;
    return __atomic_load_n(&t->cnt[l], __ATOMIC_ACQUIRE);
}

/* How many counters ahead merge_thread asks for (1 KiB, 16 cache lines):
 * a flush reads every thread's counters of every site, 16 MB for
 * binary-trees' 65,536 sites on 16 threads, and waited on memory for 60%
 * of that time before it asked ahead (then 32 counters of 32 bytes: its
 * final flush went from 16 to 10 ms of CPU).  Counters of 16 bytes read
 * the same at 32, 64 and 128 ahead.  The last ones of a leaf ask for its
 * next plane, in the same mapping; a prefetch maps no page. */
#define MERGE_AHEAD 64

/* Add thread t's counters of leaf l's sites, up to site last, to m
 * (indexed by the site's place in the leaf): the bytes only of the sites
 * that count them (leaf_counted).  A counter whose peak_gen is the
 * current generation holds its share of the peak in peak_*; any other has
 * not changed since the peak, so its live partials are that share.  The
 * generation is read after the live values (the owner saves peak_* and
 * then publishes peak_gen before it changes the live values). */
static void merge_thread(merged_t *m, uint32_t l, uint32_t last, uint32_t gen, col_thread_t *t)
{
    col_count_t *leaf = leaf_of(t, l);
    if (!leaf)
        return;
    for (uint32_t i = 0; i < COL_COUNT_LEAF; i++) {
        uint32_t site = (l << COL_COUNT_LEAF_BITS) | i;
        if (site > last)
            return;
        col_count_t *e = &leaf[i];
        __builtin_prefetch(e + MERGE_AHEAD);
        if (counts_empty(t, e))
            continue;
        int counted = leaf_counted[i];
        counts_t r;
        read_counts(t, e, counted, 0, &r); /* (no bytes of an uncounted site) */
        int64_t pk = (int64_t)(r.allocs - r.frees), pb = (int64_t)(r.bytes - r.bytes_freed);
        if (__atomic_load_n(&e->peak_gen, __ATOMIC_ACQUIRE) == gen) {
            /* saved before the live values above changed */
            const col_count_peak_t *p = col_count_peak(e);
            int16_t hot = __atomic_load_n(&e->peak_blocks, __ATOMIC_RELAXED);
            pk = hot != COL_PEAK_COLD ? hot : __atomic_load_n(&p->blocks, __ATOMIC_RELAXED);
            pb = counted ? __atomic_load_n(&p->bytes, __ATOMIC_RELAXED) : 0;
        }
        merged_t *d = &m[i];
        d->allocs += r.allocs;
        d->bytes += r.bytes;
        d->frees += r.frees;
        d->bytes_freed += r.bytes_freed;
        d->temporary += r.temporary;
        d->peak_blocks += pk;
        d->peak_bytes += pb;
    }
}

/* Which of leaf l's first `used` sites count bytes, into leaf_counted. */
static void leaf_find_counted(uint32_t l, uint32_t used)
{
    for (uint32_t i = 0; i < used; i++) {
        uint32_t site = (l << COL_COUNT_LEAF_BITS) | i;
        leaf_counted[i] = (uint8_t)col_site_counts_bytes(site, col_sites[site].key);
    }
}

/* The bytes of leaf l's sites that do not count them, once every thread
 * is merged: their counts times the site's size key. */
static void leaf_bytes(merged_t *m, uint32_t l, uint32_t used)
{
    for (uint32_t i = 0; i < used; i++) {
        if (leaf_counted[i])
            continue;
        uint64_t key = col_sites[(l << COL_COUNT_LEAF_BITS) | i].key;
        merged_t *d = &m[i];
        d->bytes = d->allocs * key;
        d->bytes_freed = d->frees * key;
        d->peak_bytes = d->peak_blocks * (int64_t)key;
    }
}

/* The threads are read one after another, so a block allocated on one
 * already read and freed on one read later has its free counted and not
 * its allocation.  A site of leaf l left with more frees than allocations
 * (or bytes) has its allocations read again from every thread: every free
 * was counted after its allocation, and every thread's frees have been
 * read by now, so this time the allocations cover them. */
static void recount_allocs(merged_t *m, uint32_t l, uint32_t used)
{
    for (uint32_t i = 0; i < used; i++) {
        merged_t *d = &m[i];
        if (d->allocs >= d->frees && d->bytes >= d->bytes_freed)
            continue;
        uint32_t site = (l << COL_COUNT_LEAF_BITS) | i;
        uint64_t key = col_sites[site].key;
        int counted = col_site_counts_bytes(site, key);
        uint64_t allocs = 0, bytes = 0;
        for (col_thread_t *t = col_thread_all(); t; t = t->next) {
            col_count_t *leaf = leaf_of(t, l);
            if (!leaf || counts_empty(t, &leaf[i]))
                continue;
            counts_t r;
            read_counts(t, &leaf[i], counted, key, &r);
            allocs += r.allocs;
            bytes += r.bytes;
        }
        d->allocs = allocs;
        d->bytes = bytes;
    }
}

/* Every thread's event totals. */
static void thread_totals(totals_t *tot)
{
    for (col_thread_t *t = col_thread_all(); t; t = t->next) {
        tot->unknown_frees += __atomic_load_n(&t->n_unknown_frees, __ATOMIC_RELAXED);
        tot->lost += __atomic_load_n(&t->n_lost, __ATOMIC_RELAXED);
        tot->untracked += __atomic_load_n(&t->n_untracked, __ATOMIC_RELAXED);
        tot->overwrites += __atomic_load_n(&t->n_shadow_overwrites, __ATOMIC_RELAXED);
        tot->events += __atomic_load_n(&t->n_allocs, __ATOMIC_RELAXED) +
                       __atomic_load_n(&t->n_frees, __ATOMIC_RELAXED);
    }
}

/* ---- records -------------------------------------------------------------- */

static void write_info(pf_out_t *o, pf_buf_t *b)
{
    pf_buf_reset(b);
    pf_buf_u(b, (uint64_t)col_proc.pid);
    pf_buf_u(b, (uint64_t)col_proc.ppid);
    pf_buf_u(b, col_proc.start_real_ns);
    pf_buf_u(b, col_proc.start_mono_ns);
    pf_buf_u(b, col_proc.flags);
    /* Static, as col_flush's tmp: every flush holds the writer lock, and on
     * the stack they would be 16 KB more of the program's thread that
     * writes the final profile, and of the writer's. */
    static char exe[4096], args[8192];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    pf_buf_str(b, exe);
    /* the command line, from /proc/self/cmdline; pread, which moves no
     * file offset, in case a program thread closed the number meanwhile
     * and reopened it for a file of its own */
    size_t len = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r;
        while (len < sizeof args && (r = pread(fd, args + len, sizeof args - len, (off_t)len)) > 0)
            len += (size_t)r;
        close(fd);
    }
    uint64_t argc = 0;
    for (size_t i = 0; i < len; i++)
        argc += args[i] == 0;
    pf_buf_u(b, argc);
    for (size_t i = 0; i < len && argc;) {
        size_t k = strnlen(args + i, len - i);
        pf_buf_bytes(b, args + i, k);
        i += k + 1;
    }
    pf_buf_u(b, (uint64_t)col_config.unwinder);
    pf_buf_u(b, (uint64_t)col_config.max_depth);
    pf_buf_u(b, col_config.interval_ms);
    pf_buf_u(b, col_config.sample_ms);
    pf_buf_u(b, (uint64_t)col_config.peak_slack);
    pf_buf_str(b, col_proc.allocator);
    pf_out_record(o, PF_REC_INFO, b);
}

static void write_module_load(pf_out_t *o, pf_buf_t *b, const col_module_t *m)
{
    pf_buf_reset(b);
    pf_buf_u(b, m->id);
    pf_buf_u(b, m->t_load);
    pf_buf_u(b, m->bias);
    pf_buf_u(b, m->start);
    pf_buf_u(b, m->end);
    pf_buf_str(b, m->path);
    pf_buf_bytes(b, m->build_id, m->build_id_len);
    pf_out_record(o, PF_REC_MODULE_LOAD, b);
}

static void write_module_unload(pf_out_t *o, pf_buf_t *b, const col_module_t *m)
{
    pf_buf_reset(b);
    pf_buf_u(b, m->id);
    pf_buf_u(b, m->t_unload);
    pf_out_record(o, PF_REC_MODULE_UNLOAD, b);
}

/* Entries per NODES, STACKS or SAMPLES record: the record is built whole
 * in one buffer, and 8192 entries keep that under ~0.5 MB. */
#define RECORD_ENTRIES 8192u

/* Nodes [first, last] (ids), in records of at most RECORD_ENTRIES.  Each
 * is written as deltas (format 3): how far back its parent is, which is
 * mostly 1 (a new stack adds a chain of nodes), and its return address
 * less its parent's, mostly within one module.  About 4 bytes a node
 * instead of 7-10, and the deltas repeat, so zstd takes them to ~1. */
static void write_nodes(pf_out_t *o, pf_buf_t *b, uint32_t first, uint32_t last)
{
    while (first <= last) {
        uint32_t n = last - first + 1;
        if (n > RECORD_ENTRIES)
            n = RECORD_ENTRIES;
        pf_buf_reset(b);
        pf_buf_u(b, first);
        pf_buf_u(b, n);
        for (uint32_t id = first; id < first + n; id++) {
            uint32_t parent = col_nodes[id].parent; /* < id: made before its children */
            uint64_t up_ip = parent ? col_nodes[parent].ip : 0;
            pf_buf_u(b, id - parent);
            pf_buf_s(b, (int64_t)(col_nodes[id].ip - up_ip));
        }
        pf_out_record(o, PF_REC_NODES, b);
        first += n;
    }
}

/* Modules and nodes in epoch order: UNLOADs(e), LOADs(e), then the nodes
 * made after scan e (epoch e + 1). */
static void write_modules_and_nodes(pf_out_t *o, pf_buf_t *b, uint32_t nnodes)
{
    size_t nm;
    col_module_t *mods = col_modules_list(&nm);
    uint32_t last_epoch = col_modules_epoch();
    uint32_t next_node = 1;
    for (uint32_t e = 0; e <= last_epoch; e++) {
        for (size_t i = 0; i < nm; i++)
            if (mods[i].t_unload && mods[i].epoch_unload == e)
                write_module_unload(o, b, &mods[i]);
        for (size_t i = 0; i < nm; i++)
            if (mods[i].epoch_load == e)
                write_module_load(o, b, &mods[i]);
        uint32_t first = next_node;
        while (next_node <= nnodes && col_node_epoch(next_node) <= e + 1)
            next_node++;
        if (next_node > first)
            write_nodes(o, b, first, next_node - 1);
    }
    if (next_node <= nnodes)
        write_nodes(o, b, next_node, nnodes);
}

static void write_stacks(pf_out_t *o, pf_buf_t *b)
{
    for (uint32_t first = 0; first < nstacks;) {
        uint32_t n = nstacks - first;
        if (n > RECORD_ENTRIES)
            n = RECORD_ENTRIES;
        pf_buf_reset(b);
        pf_buf_u(b, n);
        /* as deltas (format 3): the id from the stack before's (stacks
         * come in the order their sites were made, mostly of new nodes),
         * the leaf from the id less one, which it always equals here */
        uint64_t prev_id = 0;
        for (uint32_t k = first; k < first + n; k++) {
            uint32_t node = stack_nodes[k];
            uint64_t id = (uint64_t)node + 1;
            pf_buf_s(b, (int64_t)(id - prev_id));
            pf_buf_s(b, 0);
            prev_id = id;
            pf_buf_u(b, node && (col_nodes[node].flags & COL_NODE_F_TRUNC) ? PF_STACK_TRUNCATED : 0);
        }
        pf_out_record(o, PF_REC_STACKS, b);
        first += n;
    }
}

static uint64_t clamp(int64_t v)
{
    return v > 0 ? (uint64_t)v : 0;
}

/* The counters of sites 1 .. last (the ones whose stacks are written),
 * merged over the threads a leaf of sites at a time, one record per leaf
 * with any; their sums go to the totals. */
static void write_counters(pf_out_t *o, pf_buf_t *b, uint32_t last, uint64_t now, totals_t *tot)
{
    col_record_peak_close(); /* an open peak is the heap as it is now */
    uint32_t gen = __atomic_load_n(&col_heap.peak_gen, __ATOMIC_ACQUIRE);
    for (uint32_t l = 0; l <= last >> COL_COUNT_LEAF_BITS; l++) {
        /* the leaf's sites up to last: a program with few sites touches
         * one page of the table, not all 56 KiB of it */
        uint32_t used = last - (l << COL_COUNT_LEAF_BITS) + 1;
        if (used > COL_COUNT_LEAF)
            used = COL_COUNT_LEAF;
        memset(merged, 0, used * sizeof merged[0]);
        leaf_find_counted(l, used);
        for (col_thread_t *t = col_thread_all(); t; t = t->next)
            merge_thread(merged, l, last, gen, t);
        leaf_bytes(merged, l, used);
        recount_allocs(merged, l, used);
        uint32_t first = l ? 0 : 1, n = 0; /* site 0 is no site */
        for (uint32_t i = first; i < used; i++)
            n += merged[i].allocs || merged[i].frees;
        if (!n)
            continue;
        pf_buf_reset(b);
        pf_buf_u(b, now);
        pf_buf_u(b, n);
        for (uint32_t i = first; i < used; i++) {
            const merged_t *d = &merged[i];
            if (!d->allocs && !d->frees)
                continue;
            uint32_t s = (l << COL_COUNT_LEAF_BITS) | i;
            pf_buf_u(b, (uint64_t)col_sites[s].node + 1);
            pf_buf_u(b, col_sites[s].key);
            pf_buf_u(b, col_size_key_hi(col_sites[s].key));
            pf_buf_u(b, d->allocs);
            pf_buf_u(b, d->bytes);
            pf_buf_u(b, d->frees);
            pf_buf_u(b, d->bytes_freed);
            pf_buf_u(b, d->temporary);
            pf_buf_u(b, clamp(d->peak_blocks));
            pf_buf_u(b, clamp(d->peak_bytes));
            tot->allocs += d->allocs;
            tot->frees += d->frees;
            tot->bytes += d->bytes;
            tot->bytes_freed += d->bytes_freed;
            tot->temporary += d->temporary;
        }
        pf_out_record(o, PF_REC_COUNTERS, b);
    }
}

static void write_samples(pf_out_t *o, pf_buf_t *b)
{
    size_t n;
    const col_sample_t *s = col_samples(&n);
    for (size_t i = 0; i < n;) {
        size_t k = n - i > RECORD_ENTRIES ? RECORD_ENTRIES : n - i;
        pf_buf_reset(b);
        pf_buf_u(b, k);
        for (size_t j = i; j < i + k; j++) {
            pf_buf_u(b, s[j].t);
            pf_buf_u(b, s[j].heap);
            pf_buf_u(b, s[j].rss);
            pf_buf_u(b, s[j].allocs);
            pf_buf_u(b, s[j].frees);
        }
        pf_out_record(o, PF_REC_SAMPLES, b);
        i += k;
    }
}

/* The message of the flush that seals the profile (col_flush_seal): why it
 * ends there; empty otherwise. */
static char seal_note[320];

static void write_totals(pf_out_t *o, pf_buf_t *b, const totals_t *tot, uint64_t now, int final)
{
    int max_live = col_thread_max_live();
    pf_buf_reset(b);
    pf_buf_u(b, now);
    pf_buf_u(b, (final ? PF_TOTALS_FINAL : 0) | (seal_note[0] ? PF_TOTALS_SEALED : 0));
    pf_buf_u(b, tot->allocs);
    pf_buf_u(b, tot->frees);
    pf_buf_u(b, tot->bytes);
    pf_buf_u(b, tot->bytes_freed);
    pf_buf_u(b, tot->temporary);
    pf_buf_u(b, clamp(__atomic_load_n(&col_heap.peak, __ATOMIC_RELAXED)));
    pf_buf_u(b, col_heap.peak_t);
    pf_buf_u(b, max_live > 1 ? (uint64_t)max_live * (uint64_t)col_config.peak_slack : 0);
    pf_buf_u(b, (uint64_t)col_thread_seen());
    pf_buf_u(b, tot->unknown_frees);
    pf_buf_u(b, tot->lost);
    pf_buf_u(b, tot->overwrites);
    pf_buf_u(b, nstacks ? nstacks - 1 : 0); /* without the "lost" pseudo-stack */
    pf_buf_u(b, col_rss_peak());
    pf_buf_u(b, tot->untracked); /* appended in format 1.1 */
    pf_out_record(o, PF_REC_TOTALS, b);
}

static void write_messages(pf_out_t *o, pf_buf_t *b)
{
    for (size_t i = 0; i < col_message_count(); i++) {
        pf_buf_reset(b);
        pf_buf_str(b, col_message_get(i));
        pf_out_record(o, PF_REC_MESSAGE, b);
    }
    if (seal_note[0]) {
        pf_buf_reset(b);
        pf_buf_str(b, seal_note);
        pf_out_record(o, PF_REC_MESSAGE, b);
    }
}

/* ---- flush ---------------------------------------------------------------- */

static pf_out_t out;
static int reported_error;

int col_flush_finished(void)
{
    return final_done;
}

static int seal_refs;  /* filters on their way in or in that seal it (writer lock) */
static int seal_ready; /* the first has stopped the writer and the walks */

const char *col_flush_seal(const char *stops)
{
    col_writer_lock();
    int first = seal_refs++ == 0;
    if (first) {
        uint64_t ms = (col_now_ns() - col_proc.start_mono_ns) / 1000000u;
        snprintf(seal_note, sizeof seal_note,
                 "the program installed a seccomp filter at %lu.%03lu s that %s: the profile "
                 "ends there (live blocks are those of then), and nothing the program did after "
                 "is in it",
                 (unsigned long)(ms / 1000), (unsigned long)(ms % 1000), stops);
        col_sample_take(); /* the last: peak RSS and the peak's time as of now */
        col_flush(COL_FLUSH_PERIODIC);
        __atomic_store_n(&col_sealed, 1, __ATOMIC_SEQ_CST);
    }
    col_writer_unlock();
    if (!first) {
        /* another thread seals: this filter too waits until that is done */
        unsigned spins = 0;
        while (!__atomic_load_n(&seal_ready, __ATOMIC_ACQUIRE))
            ut_spin_pause(&spins);
        return NULL;
    }
    /* before the filter is in (with TSYNC it covers them too): the writer
     * thread gone, and no libunwind walk under way in another thread */
    col_writer_pause();
    col_unwind_quiesce();
    __atomic_store_n(&seal_ready, 1, __ATOMIC_RELEASE);
    return seal_note;
}

int col_flush_unseal(void)
{
    col_writer_lock();
    int lifted = seal_refs > 0 && --seal_refs == 0;
    if (lifted) {
        __atomic_store_n(&col_sealed, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&seal_ready, 0, __ATOMIC_RELEASE);
        seal_note[0] = 0;
    }
    col_writer_unlock();
    return lifted;
}

void col_flush_reset_child(void)
{
    totals_t tot = {0};
    thread_totals(&tot);
    fork_events = tot.events;
    final_done = 0;
}

/* Write the profile.  kind: COL_FLUSH_PERIODIC, _FINAL (at exit: adds END,
 * no later flush) or _EXEC (before exec: adds END with reason exec).
 * Returns 0, or -1 if it could not be written (reported once on stderr). */
int col_flush(int kind)
{
    if (final_done || __atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE))
        return 0;
    col_modules_scan();
    if (kind != COL_FLUSH_PERIODIC) {
        col_sample_take();
        final_done = kind == COL_FLUSH_FINAL;
    }
    /* Sites made while the counters are read wait for the next flush; the
     * nodes of every site counted are made before the site. */
    uint32_t nsites = col_site_count();
    totals_t tot = {0};
    thread_totals(&tot);
    uint32_t nnodes = col_node_count();
    stacks_update(nsites, nnodes);
    /* a fork child that never allocated leaves no profile behind */
    if ((col_proc.flags & PF_INFO_FORKED) && tot.events == fork_events)
        return 0;
    const char *path = col_output_path();
    if (!path)
        return -1;
    int rc;
    /* The file just claimed by a last flush, and a device or FIFO named
     * as the output (col_output.c), are written directly: renaming
     * NAME.tmp over the device would replace it. */
    int fd = col_output_take_claimed(), direct = fd >= 0;
    if (direct && kind == COL_FLUSH_PERIODIC) {
        close(fd); /* the empty file stays until a complete one replaces it */
        fd = -1;
        direct = 0;
    }
    static char tmp[4200]; /* see write_info */
    if (!direct) {
        struct stat st;
        direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        fd = direct ? open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                    : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    fd = col_fd_high(fd);
    if (fd < 0) {
        rc = errno;
    } else {
        uint64_t now = col_now_ns() - col_proc.start_mono_ns;
        pf_buf_t b = {0};
        pf_out_begin(&out, fd);
        write_info(&out, &b);
        write_modules_and_nodes(&out, &b, nnodes);
        write_stacks(&out, &b);
        /* without memory for every stack, the sites up to sites_done (the
         * others wait for the next flush, in the totals too) */
        write_counters(&out, &b, sites_done, now, &tot);
        write_samples(&out, &b);
        write_totals(&out, &b, &tot, now, kind == COL_FLUSH_FINAL);
        write_messages(&out, &b);
        if (kind != COL_FLUSH_PERIODIC) {
            pf_buf_reset(&b);
            pf_buf_u(&b, now);
            pf_buf_u(&b, kind == COL_FLUSH_EXEC ? PF_END_EXEC : PF_END_EXIT);
            pf_out_record(&out, PF_REC_END, &b);
        }
        pf_buf_free(&b);
        rc = pf_out_end(&out);
        if (close(fd) < 0 && !rc)
            rc = errno;
        if (!rc && !direct && rename(tmp, path) < 0)
            rc = errno;
        if (rc && !direct)
            unlink(tmp);
    }
    if (rc) {
        if (!reported_error)
            col_log("heapscope: cannot write the profile %s: %s\n", path, col_strerror(rc));
        reported_error = 1;
        return -1;
    }
    return 0;
}
