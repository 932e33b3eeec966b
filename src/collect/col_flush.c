/* col_flush.c - writes the whole profile (docs/FORMAT.md) to NAME.tmp and
 * renames it over NAME, so the file on disk is always complete.
 *
 * Interned stacks are turned into a call tree (nodes shared by common
 * outer frames) incrementally: each flush only adds the stacks interned
 * since the previous one.  Each node remembers the module epoch it was
 * made in, so nodes land between the right MODULE_LOAD/UNLOAD records.
 * Counters are merged across all thread states at every flush.
 *
 * Runs with the writer lock and the re-entrancy guard held.  Its tables
 * are mapped (col_vm.c), so the program's arenas never hold them; only the
 * small per-record buffer comes from the real allocator. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/col_internal.h"
#include "format/pf_writer.h"
#include "heapscope/profile.h"

extern char **environ;

/* ---- call tree of interned stacks -------------------------------------- */

typedef struct node {
    uint32_t parent;
    uint32_t epoch;
    uintptr_t ip;
} node_t;

static node_t *nodes;           /* node id n at nodes[n - 1] */
static uint32_t nnodes, capnodes;
static uint32_t *node_index;    /* hash of (parent, ip) -> node id */
static uint32_t node_mask;
static uint32_t *stack_leaf;    /* stack id -> leaf node */
static uint32_t stacks_done, cap_leaf;
static int final_done;
static uint64_t fork_events;    /* events at fork (child) */

static uint32_t node_hash(uint32_t parent, uintptr_t ip)
{
    uint64_t h = ((uint64_t)parent * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ip * 0xff51afd7ed558ccdull);
    return (uint32_t)(h ^ (h >> 32));
}

static int node_index_grow(void)
{
    uint32_t cap = node_mask ? (node_mask + 1) * 2 : 4096;
    uint32_t *idx = col_vm_map((size_t)cap * sizeof *idx);
    if (!idx)
        return -1;
    for (uint32_t n = 1; n <= nnodes; n++) {
        uint32_t i = node_hash(nodes[n - 1].parent, nodes[n - 1].ip) & (cap - 1);
        while (idx[i])
            i = (i + 1) & (cap - 1);
        idx[i] = n;
    }
    col_vm_unmap(node_index, node_mask ? (size_t)(node_mask + 1) * sizeof *idx : 0);
    node_index = idx;
    node_mask = cap - 1;
    return 0;
}

/* Node (parent, ip), added if new; 0 on allocation failure. */
static uint32_t node_get(uint32_t parent, uintptr_t ip, uint32_t epoch)
{
    if ((nnodes + 1) * 2 > node_mask + 1 && node_index_grow() < 0)
        return 0;
    uint32_t i = node_hash(parent, ip) & node_mask;
    for (uint32_t n; (n = node_index[i]) != 0; i = (i + 1) & node_mask)
        if (nodes[n - 1].parent == parent && nodes[n - 1].ip == ip)
            return n;
    if (nnodes == capnodes) {
        uint32_t cap = capnodes ? capnodes * 2 : 4096;
        node_t *nn = col_vm_grow(nodes, (size_t)capnodes * sizeof *nn, (size_t)cap * sizeof *nn);
        if (!nn)
            return 0;
        nodes = nn;
        capnodes = cap;
    }
    nodes[nnodes] = (node_t){.parent = parent, .epoch = epoch, .ip = ip};
    node_index[i] = ++nnodes;
    return nnodes;
}

/* Add the stacks interned since the last call to the call tree. */
void col_flush_intern_pending(void)
{
    uint32_t count = col_stack_count();
    if (count + 1 > cap_leaf) {
        uint32_t cap = cap_leaf ? cap_leaf : 1024;
        while (cap < count + 1)
            cap *= 2;
        uint32_t *l = col_vm_grow(stack_leaf, (size_t)cap_leaf * sizeof *l, (size_t)cap * sizeof *l);
        if (!l)
            return;
        stack_leaf = l;
        cap_leaf = cap;
    }
    uint32_t epoch = col_modules_epoch();
    for (uint32_t id = stacks_done + 1; id <= count; id++) {
        const col_stack_rec_t *r = col_stack_get(id);
        uint32_t parent = 0;
        for (uint32_t i = r->depth; i-- > 0;) {
            uint32_t n = node_get(parent, r->ips[i], epoch);
            if (!n)
                return; /* out of memory: retry at the next flush */
            parent = n;
        }
        stack_leaf[id] = parent;
        stacks_done = id;
    }
}

/* ---- merged counters ------------------------------------------------------ */

typedef struct merged {
    uint32_t stack_id;
    uint64_t size;
    uint64_t allocs, bytes, frees, bytes_freed, temporary;
    int64_t peak_blocks, peak_bytes;
} merged_t;

typedef struct merge_tab {
    merged_t *e;
    uint32_t mask, used;
} merge_tab_t;

static void merge_free(merge_tab_t *m)
{
    col_vm_unmap(m->e, m->e ? (size_t)(m->mask + 1) * sizeof *m->e : 0);
    m->e = NULL;
}

/* The merge table of the previous flush, kept mapped: a program with many
 * (stack, size) pairs would otherwise fault the whole table in again, and
 * rehash it through every doubling, at each flush. */
static merge_tab_t merge_kept;

static merge_tab_t merge_take(void)
{
    merge_tab_t m = merge_kept;
    merge_kept = (merge_tab_t){0};
    if (m.e)
        memset(m.e, 0, (size_t)(m.mask + 1) * sizeof *m.e);
    m.used = 0;
    return m;
}

static void merge_keep(merge_tab_t *m)
{
    merge_free(&merge_kept);
    merge_kept = *m;
    *m = (merge_tab_t){0};
}

static merged_t *merge_slot(merge_tab_t *m, uint32_t stack_id, uint64_t size)
{
    if ((m->used + 1) * 4 > (m->mask + 1) * 3) { /* at most 3/4 full */
        uint32_t cap = m->mask ? (m->mask + 1) * 2 : 4096;
        merged_t *e = col_vm_map((size_t)cap * sizeof *e);
        if (!e)
            return NULL;
        for (uint32_t i = 0; m->e && i <= m->mask; i++) {
            if (!m->e[i].stack_id)
                continue;
            uint32_t j = (m->e[i].stack_id * 0x9e3779b1u ^ (uint32_t)(m->e[i].size * 0x85ebca6bu)) &
                         (cap - 1);
            while (e[j].stack_id)
                j = (j + 1) & (cap - 1);
            e[j] = m->e[i];
        }
        merge_free(m);
        m->e = e;
        m->mask = cap - 1;
    }
    uint32_t j = (stack_id * 0x9e3779b1u ^ (uint32_t)(size * 0x85ebca6bu)) & m->mask;
    while (m->e[j].stack_id && !(m->e[j].stack_id == stack_id && m->e[j].size == size))
        j = (j + 1) & m->mask;
    if (!m->e[j].stack_id) {
        m->e[j].stack_id = stack_id;
        m->e[j].size = size;
        m->used++;
    }
    return &m->e[j];
}

typedef struct totals {
    uint64_t allocs, frees, bytes, bytes_freed, temporary;
    uint64_t unknown_frees, lost, overwrites, events, untracked;
} totals_t;

/* Sum every thread's entries.  An entry whose peak_gen is the current
 * generation holds its share of the peak in peak_*; any other entry has
 * not changed since the peak, so its live partials are that share.  The
 * generation is re-read after the live values (the owner saves peak_* and
 * then publishes peak_gen before it changes the live values). */
static int merge_all(merge_tab_t *m, totals_t *tot)
{
    uint32_t gen = __atomic_load_n(&col_heap.peak_gen, __ATOMIC_ACQUIRE);
    for (col_thread_t *t = col_thread_all(); t; t = t->next) {
        uint32_t n = __atomic_load_n(&t->nentries, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < n; i++) {
            col_entry_t *chunk = __atomic_load_n(&t->chunks[i >> COL_CHUNK_BITS], __ATOMIC_ACQUIRE);
            col_entry_t *e = &chunk[i & (COL_CHUNK_ENTRIES - 1)];
            merged_t *d = merge_slot(m, e->stack_id, e->size);
            if (!d)
                return -1;
            uint64_t allocs = __atomic_load_n(&e->allocs, __ATOMIC_RELAXED);
            uint64_t bytes = __atomic_load_n(&e->bytes, __ATOMIC_RELAXED);
            uint64_t frees = __atomic_load_n(&e->frees, __ATOMIC_RELAXED);
            uint64_t bytes_freed = __atomic_load_n(&e->bytes_freed, __ATOMIC_RELAXED);
            uint64_t temporary = __atomic_load_n(&e->temporary, __ATOMIC_RELAXED);
            int64_t pb, pk;
            if (__atomic_load_n(&e->peak_gen, __ATOMIC_ACQUIRE) == gen) {
                pk = __atomic_load_n(&e->peak_blocks, __ATOMIC_RELAXED);
                pb = __atomic_load_n(&e->peak_bytes, __ATOMIC_RELAXED);
            } else {
                pk = (int64_t)(allocs - frees);
                pb = (int64_t)(bytes - bytes_freed);
                if (__atomic_load_n(&e->peak_gen, __ATOMIC_ACQUIRE) == gen) {
                    pk = __atomic_load_n(&e->peak_blocks, __ATOMIC_RELAXED);
                    pb = __atomic_load_n(&e->peak_bytes, __ATOMIC_RELAXED);
                }
            }
            d->allocs += allocs;
            d->bytes += bytes;
            d->frees += frees;
            d->bytes_freed += bytes_freed;
            d->temporary += temporary;
            d->peak_blocks += pk;
            d->peak_bytes += pb;
            tot->allocs += allocs;
            tot->frees += frees;
            tot->bytes += bytes;
            tot->bytes_freed += bytes_freed;
            tot->temporary += temporary;
        }
        tot->unknown_frees += __atomic_load_n(&t->n_unknown_frees, __ATOMIC_RELAXED);
        tot->lost += __atomic_load_n(&t->n_lost, __ATOMIC_RELAXED);
        tot->untracked += __atomic_load_n(&t->n_untracked, __ATOMIC_RELAXED);
        tot->overwrites += __atomic_load_n(&t->n_shadow_overwrites, __ATOMIC_RELAXED);
        tot->events += __atomic_load_n(&t->n_allocs, __ATOMIC_RELAXED) +
                       __atomic_load_n(&t->n_frees, __ATOMIC_RELAXED);
    }
    return 0;
}

/* Entries whose stack could not be added to the call tree (out of memory
 * in col_flush_intern_pending) wait for the next flush. */
static void drop_undefined(merge_tab_t *m)
{
    for (uint32_t i = 0; i <= m->mask && m->e; i++)
        if (m->e[i].stack_id > stacks_done) {
            m->e[i].stack_id = 0;
            m->used--;
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
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    pf_buf_str(b, exe);
    /* the command line, from /proc/self/cmdline */
    char args[8192];
    size_t len = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r;
        while (len < sizeof args && (r = read(fd, args + len, sizeof args - len)) > 0)
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

#define NODES_PER_RECORD 65536u

/* Nodes [first, last] (ids), in records of at most NODES_PER_RECORD. */
static void write_nodes(pf_out_t *o, pf_buf_t *b, uint32_t first, uint32_t last)
{
    while (first <= last) {
        uint32_t n = last - first + 1;
        if (n > NODES_PER_RECORD)
            n = NODES_PER_RECORD;
        pf_buf_reset(b);
        pf_buf_u(b, first);
        pf_buf_u(b, n);
        for (uint32_t id = first; id < first + n; id++) {
            pf_buf_u(b, nodes[id - 1].parent);
            pf_buf_u(b, nodes[id - 1].ip);
        }
        pf_out_record(o, PF_REC_NODES, b);
        first += n;
    }
}

/* Modules and nodes in epoch order: UNLOADs(e), LOADs(e), then the nodes
 * made after scan e (epoch e + 1). */
static void write_modules_and_nodes(pf_out_t *o, pf_buf_t *b)
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
        while (next_node <= nnodes && nodes[next_node - 1].epoch <= e + 1)
            next_node++;
        if (next_node > first)
            write_nodes(o, b, first, next_node - 1);
    }
    if (next_node <= nnodes)
        write_nodes(o, b, next_node, nnodes);
}

static void write_stacks(pf_out_t *o, pf_buf_t *b)
{
    uint32_t first = 1;
    while (first <= stacks_done) {
        uint32_t n = stacks_done - first + 1;
        if (n > NODES_PER_RECORD)
            n = NODES_PER_RECORD;
        pf_buf_reset(b);
        pf_buf_u(b, n);
        for (uint32_t id = first; id < first + n; id++) {
            pf_buf_u(b, id);
            pf_buf_u(b, stack_leaf[id]);
            pf_buf_u(b, col_stack_get(id)->flags);
        }
        pf_out_record(o, PF_REC_STACKS, b);
        first += n;
    }
}

static uint64_t clamp(int64_t v)
{
    return v > 0 ? (uint64_t)v : 0;
}

static uint64_t size_hi(uint64_t key)
{
    if (key <= PF_EXACT_SIZE_MAX)
        return key;
    unsigned top = 63u - (unsigned)__builtin_clzll(key);
    uint64_t step = 1ull << (top - 4);
    return (key & ~(step - 1)) + step - 1;
}

static void write_counters(pf_out_t *o, pf_buf_t *b, const merge_tab_t *m, uint64_t now)
{
    uint32_t left = m->used;
    uint32_t i = 0;
    while (left) {
        uint32_t n = left > NODES_PER_RECORD ? NODES_PER_RECORD : left;
        pf_buf_reset(b);
        pf_buf_u(b, now);
        pf_buf_u(b, n);
        for (uint32_t k = 0; k < n; i++) {
            const merged_t *d = &m->e[i];
            if (!d->stack_id)
                continue;
            pf_buf_u(b, d->stack_id);
            pf_buf_u(b, d->size);
            pf_buf_u(b, size_hi(d->size));
            pf_buf_u(b, d->allocs);
            pf_buf_u(b, d->bytes);
            pf_buf_u(b, d->frees);
            pf_buf_u(b, d->bytes_freed);
            pf_buf_u(b, d->temporary);
            pf_buf_u(b, clamp(d->peak_blocks));
            pf_buf_u(b, clamp(d->peak_bytes));
            k++;
        }
        pf_out_record(o, PF_REC_COUNTERS, b);
        left -= n;
    }
}

static void write_samples(pf_out_t *o, pf_buf_t *b)
{
    size_t n;
    const col_sample_t *s = col_samples(&n);
    for (size_t i = 0; i < n;) {
        size_t k = n - i > NODES_PER_RECORD ? NODES_PER_RECORD : n - i;
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

static void write_totals(pf_out_t *o, pf_buf_t *b, const totals_t *tot, uint64_t now, int final)
{
    int max_live = col_thread_max_live();
    pf_buf_reset(b);
    pf_buf_u(b, now);
    pf_buf_u(b, final ? PF_TOTALS_FINAL : 0);
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
    pf_buf_u(b, col_stack_count() - 1); /* without the "lost" pseudo-stack */
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
}

/* ---- flush ---------------------------------------------------------------- */

static pf_out_t out;
static int reported_error;

int col_flush_finished(void)
{
    return final_done;
}

void col_flush_reset_child(void)
{
    totals_t tot = {0};
    for (col_thread_t *t = col_thread_all(); t; t = t->next)
        tot.events += t->n_allocs + t->n_frees;
    fork_events = tot.events;
    final_done = 0;
}

/* Write the profile.  kind: COL_FLUSH_PERIODIC, _FINAL (at exit: adds END,
 * no later flush) or _EXEC (before exec: adds END with reason exec).
 * Returns 0, or -1 if it could not be written (reported once on stderr). */
int col_flush(int kind)
{
    if (final_done)
        return 0;
    col_modules_scan();
    col_flush_intern_pending();
    if (kind != COL_FLUSH_PERIODIC) {
        col_sample_take();
        final_done = kind == COL_FLUSH_FINAL;
    }
    merge_tab_t m = merge_take();
    totals_t tot = {0};
    int rc = merge_all(&m, &tot);
    /* Threads keep interning while merge_all reads their entries: add the
     * stacks of entries made since the first call, so that every COUNTERS
     * entry names a stack the profile defines (found by tsan_pipeline). */
    col_flush_intern_pending();
    if (rc == 0)
        drop_undefined(&m);
    /* a fork child that never allocated leaves no profile behind */
    if (rc == 0 && (col_proc.flags & PF_INFO_FORKED) && tot.events == fork_events) {
        merge_keep(&m);
        return 0;
    }
    const char *path = rc == 0 ? col_output_path() : NULL;
    if (!path) {
        merge_keep(&m);
        return -1;
    }
    /* A device or FIFO named as the output (col_output.c) is written
     * directly: renaming NAME.tmp over it would replace the device. */
    struct stat st;
    int direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = direct ? open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                    : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = errno;
    } else {
        uint64_t now = col_now_ns() - col_proc.start_mono_ns;
        pf_buf_t b = {0};
        pf_out_begin(&out, fd);
        write_info(&out, &b);
        write_modules_and_nodes(&out, &b);
        write_stacks(&out, &b);
        write_counters(&out, &b, &m, now);
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
    merge_keep(&m);
    if (rc) {
        if (!reported_error)
            col_log("heapscope: cannot write the profile %s: %s\n", path, strerror(rc));
        reported_error = 1;
        return -1;
    }
    return 0;
}
