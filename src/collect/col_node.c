/* col_node.c - the process-wide call tree of every stack seen: a node is
 * a return address under its caller's node, the outermost frame at the
 * root, so a node id names a whole stack (the path from the root to it)
 * and stacks share their common outer frames.
 *
 * The unwinders build stacks here from the outside in, and remember the
 * node of every frame of their previous walk: a stack that differs from
 * the previous one only in its inner frames costs one lookup per new
 * frame, with no hashing of the whole stack (col_unwind_fp.c, col_dwarf.c).
 *
 * Node ids are handed out in creation order, 1, 2, 3 ..., so a parent's id
 * is below its children's, and they are what the profile's NODES records
 * hold (docs/FORMAT.md).  Records never move or change once published;
 * lookups (col_node_child, inline in col_internal.h) take no lock, and a
 * new node takes the table's spinlock.  A node's first COL_NODE_CHAIN
 * children are found by its list in col_node_links, the others by the
 * index.
 *
 * A stack cut by the depth cap has lost its outer frames: its outermost
 * kept frame hangs under the pseudo-parent COL_NODE_TRUNC instead of the
 * root, so it never shares nodes with a complete stack, and every node
 * below carries COL_NODE_F_TRUNC. */
#define _GNU_SOURCE
#include <string.h>

#include "collect/col_internal.h"

#define INDEX_INITIAL (1u << 10) /* slots; grows at 3/4 full */

col_node_t *col_nodes;
col_idtab_t col_node_tab;
uint64_t *col_node_next;
col_node_links_t *col_node_links;
static uint32_t limit; /* ids below it can be made */

/* The modules epoch of each node, by runs: nodes are made in id order
 * under the table's lock, and the epoch only grows, so the nodes of one
 * epoch are consecutive ids.  A run is appended (under the lock, before
 * the node's id is published) when a node is made in a new epoch; the
 * profile writer places nodes between the module records by it. */
#define EPOCH_RUNS (1u << 16)
typedef struct epoch_run {
    uint32_t epoch, first; /* nodes first .. (the next run's first - 1) */
} epoch_run_t;
static epoch_run_t *runs;
static uint32_t nruns;       /* published with release */
static uint32_t runs_full;   /* first node made when no run was left; 0: none */

int col_node_init(void)
{
    limit = col_config_id_limit(col_config.fault_nodes, COL_NODE_MAX);
    col_nodes = col_vm_map_for(COL_VM_TREE, (size_t)COL_NODE_MAX * sizeof *col_nodes);
    col_node_next = col_vm_map_for(COL_VM_TREE, (size_t)COL_NODE_MAX * sizeof *col_node_next);
    col_node_links = col_vm_map_for(COL_VM_TREE, (size_t)COL_NODE_MAX * sizeof *col_node_links);
    runs = col_vm_map_for(COL_VM_TREE, EPOCH_RUNS * sizeof *runs);
    if (!col_nodes || !col_node_next || !col_node_links || !runs ||
        col_idtab_init(&col_node_tab, INDEX_INITIAL, col_node_key) != 0)
        return -1;
    /* their first pages: written before anyone reads them */
    col_node_next[0] = 0;
    col_node_links[0] = (col_node_links_t){0, 0, 0};
    return 0;
}

uint32_t col_node_count(void)
{
    return __atomic_load_n(&col_node_tab.last, __ATOMIC_ACQUIRE);
}

/* Node id is made in epoch e (under the lock, before id is published). */
static void epoch_note(uint32_t id, uint32_t e)
{
    uint32_t n = nruns;
    if (n > 0 && runs[n - 1].epoch == e)
        return;
    if (n == EPOCH_RUNS || runs_full) {
        if (!runs_full)
            __atomic_store_n(&runs_full, id, __ATOMIC_RELEASE);
        return;
    }
    runs[n] = (epoch_run_t){.epoch = e, .first = id};
    __atomic_store_n(&nruns, n + 1, __ATOMIC_RELEASE);
}

uint32_t col_node_epoch(uint32_t id)
{
    uint32_t full = __atomic_load_n(&runs_full, __ATOMIC_ACQUIRE);
    if (full && id >= full)
        return UINT32_MAX;
    uint32_t lo = 0, hi = __atomic_load_n(&nruns, __ATOMIC_ACQUIRE);
    while (hi - lo > 1) { /* the last run starting at or before id */
        uint32_t mid = lo + (hi - lo) / 2;
        if (runs[mid].first <= id)
            lo = mid;
        else
            hi = mid;
    }
    return hi > 0 ? runs[lo].epoch : UINT32_MAX;
}

/* Every thread reads these arrays by node id: write each page before the
 * first id on it is out (a read first would map the zero page, and the
 * write after it interrupt every CPU). */
static void pages_note(uint32_t id)
{
    if ((id & (4096 / sizeof *col_node_next - 1)) == 0)
        __atomic_store_n(&col_node_next[id], 0, __ATOMIC_RELAXED);
    /* (an entry may straddle two pages: the one its end is on) */
    uint64_t end = ((uint64_t)id + 1) * sizeof *col_node_links - 1;
    if (end / 4096 != (end - sizeof *col_node_links) / 4096)
        __atomic_store_n(&col_node_links[id].site, 0, __ATOMIC_RELAXED);
}

/* The node (parent, ip), made now, unless another thread made it since
 * the caller's lookup (after the index's version `since`, read before the
 * parent's list); COL_NODE_NONE if the table is full.  A thread that
 * finds the table's lock taken waits (or backs off) and looks again
 * without it (col_listed_lock): two threads running the same code meet the
 * same new stacks together, and queueing for the lock cost binary-trees
 * at two threads ~10% of its time.  The first
 * COL_NODE_CHAIN children of a node go in its list (col_node_links), the
 * others in the index: a lookup whose list ended short needs no probe of
 * the index (a child put there after the list was full moved the
 * version). */
UT_COLD uint32_t col_node_add(uint32_t parent, uintptr_t ip, uint32_t since)
{
    uint32_t *head = parent != COL_NODE_TRUNC ? &col_node_links[parent].child : NULL;
    uint32_t id = col_listed_lock(&col_node_tab, head, ip, parent, col_node_key, col_node_next_child,
                                  &since);
    if (id != 0)
        return id; /* the holder made it */
    col_listed_at_t at;
    id = col_listed_find_locked(&col_node_tab, head, ip, parent, col_node_key, col_node_next_child,
                                since, &at);
    if (id == 0) {
        if ((id = col_listed_new_id_locked(&col_node_tab, &at, limit)) == 0) {
            id = COL_NODE_NONE;
        } else {
            col_node_t *n = &col_nodes[id];
            n->ip = ip;
            if (parent == COL_NODE_TRUNC) {
                n->parent = 0;
                n->depth = 1;
                n->flags = COL_NODE_F_TRUNC;
            } else {
                n->parent = parent;
                n->depth = parent ? (uint16_t)(col_nodes[parent].depth + 1) : 1;
                n->flags = parent ? col_nodes[parent].flags : 0;
            }
            epoch_note(id, col_modules_epoch());
            pages_note(id);
            col_listed_put_locked(&col_node_tab, &at, ip, parent, col_node_next_child, id);
        }
    }
    col_idtab_unlock(&col_node_tab);
    return id;
}

uint32_t col_node_path(const uintptr_t *ips, int n, int truncated)
{
    uint32_t node = truncated && n > 0 ? COL_NODE_TRUNC : 0;
    for (int i = n - 1; i >= 0; i--)
        node = col_node_child(node, ips[i]);
    return node;
}

/* Is g the stack of frames ips[0..n) (innermost first) on top of base?
 * Then out[j] is the node of frame j (the stack from frame j out). */
static int guess_holds(uint32_t g, uint32_t base, const uintptr_t *ips, int n, uint32_t *out)
{
    for (int j = 0; j < n; j++) {
        if (g == 0 || g >= COL_NODE_NONE - 1 || col_nodes[g].ip != ips[j])
            return 0;
        out[j] = g;
        if (j + 1 < n)
            g = col_nodes[g].parent;
    }
    uint64_t ip;
    uint32_t parent; /* as the index keys it: 0, COL_NODE_TRUNC or a node */
    col_node_key(g, &ip, &parent);
    return parent == base;
}

void col_node_stack(uint32_t base, const uintptr_t *ips, int n, uint32_t guess, uint32_t *out)
{
    if (n <= 0 || (guess && guess_holds(guess, base, ips, n, out)))
        return;
    uint32_t node = base;
    for (int j = n - 1; j >= 0; j--)
        out[j] = node = col_node_child(node, ips[j]);
}

int col_node_ips(uint32_t node, uintptr_t *ips, int max, unsigned *flags)
{
    int n = 0;
    if (node == COL_NODE_NONE)
        return 0;
    if (node && (col_nodes[node].flags & COL_NODE_F_TRUNC))
        *flags |= PF_STACK_TRUNCATED;
    for (; node && n < max; node = col_nodes[node].parent)
        ips[n++] = col_nodes[node].ip;
    return n;
}

void col_node_atfork_prepare(void)
{
    col_idtab_lock(&col_node_tab);
}

void col_node_atfork_parent(void)
{
    col_idtab_unlock(&col_node_tab);
}

void col_node_atfork_child(void)
{
    col_idtab_reset_lock(&col_node_tab);
}
