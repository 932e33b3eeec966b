/* tsan_collector.c - the collector's lock-free tables under ThreadSanitizer.
 *
 * Built with -fsanitize=thread (tests/tsan/CMakeLists.txt) from the
 * collector's own sources, not through the preload library (the TSan
 * runtime cannot be preloaded into another program):
 *
 * - col_node.c, col_site.c, col_idtab.c (the call tree and the allocation
 *   sites): 4 threads intern 40,000 stacks each, drawn from a pool of 6,000
 *   distinct ones that share their outer frames as call stacks do, so they
 *   race to insert the same new nodes and the indexes grow under them.
 *   Half the stacks are built in two steps, the outer frames first and the
 *   inner ones on top with a guess (col_node_stack), the guess right or
 *   wrong; every 5th stack is marked as cut by the depth cap.  Each stack
 *   also gets a site for one of KEYS size keys, more than a node's list
 *   of sites holds (col_node_links), so later ones go through the site
 *   index; the root and the nodes near it have more children than their
 *   lists hold, too.  A fifth thread reads every
 *   published node and site record, as the writer thread does.  After:
 *   every thread got the same node and site for the same stack and key,
 *   distinct stacks have distinct nodes, no key of either table was made
 *   twice, and each node's frames, read back
 *   through its parents (col_node_ips), are the stack's, as are the
 *   frames by depth the fp unwinder keeps of its last guessed stack
 *   (col_guess_set), whatever stacks came before; the reader finds every
 *   published node's modules epoch (col_node_epoch).
 * - col_shadow.c: the same 4 threads mark and clear blocks at interleaved
 *   addresses of the same leaves (racing to install each leaf and to mark
 *   its pages written), and put and take exact sizes in the striped side
 *   table; every value read back is the one the thread wrote.
 * With the argument `backoff` (test unit_tsan_collector_backoff) every
 * wait for a table's lock backs off and sleeps instead
 * (HEAPSCOPE_FAULT_BACKOFF; col_idtab.c), as a thread that keeps trailing
 * another through new stacks does: thousands of times in a run.
 * TSan reports any data race and fails the test (halt_on_error=1).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/col_internal.h"
#include "collect/col_memo.h"

/* What col_node.c, col_site.c, col_idtab.c and col_shadow.c read from
 * the rest of the collector. */
col_process_t col_proc = {.granule_shift = 5};
col_config_t col_config = {.fault_shadow_leaves = -1};
uint32_t col_modules_epoch_value;
int col_seccomp; /* no filter: a back-off sleeps (col_idtab.c) */
int col_sealed;  /* no profile sealed (col_vm.c maps) */

#define THREADS 4
#define POOL 6000
#define ROUNDS 40000
#define DEPTH_MAX 24
#define KEYS (COL_NODE_CHAIN + 2)

static uint32_t got[THREADS][POOL], got_site[THREADS][POOL][KEYS];
static int failures;
static int done;

static void fail(const char *what, long a, long b)
{
    if (__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED) <= 10)
        fprintf(stderr, "FAIL %s (%ld, %ld)\n", what, a, b);
}

/* Stack number k of the pool, innermost frame first: depth 1-24; the
 * innermost frame is k's own, and frame i from the outside depends only on
 * k >> i, so stacks share outer frames (a tree, as call stacks do). */
static int pool_stack(uint32_t k, uintptr_t *ips)
{
    int depth = 1 + (int)(k % DEPTH_MAX);
    ips[0] = 0x400000 + (uintptr_t)k * 0x10;
    for (int i = 1; i < depth; i++) {
        int from_outside = depth - 1 - i;
        ips[i] = 0x800000 + (uintptr_t)(k >> from_outside) * 0x100 + (uintptr_t)from_outside;
    }
    return depth;
}

static int is_cut(uint32_t k)
{
    return k % 5 == 0;
}

static void *interner(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
    uintptr_t ips[DEPTH_MAX], back[DEPTH_MAX];
    uint32_t nodes[DEPTH_MAX], prev = 0;
    /* the fp unwinder's last guessed stack, by depth (col_guess_set) */
    uintptr_t g_ip[DEPTH_MAX + 1];
    uint32_t g_node[DEPTH_MAX + 1];
    col_guess_t gs = {.depth = 0, .ip = g_ip, .node = g_node};
    for (int r = 0; r < ROUNDS; r++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint32_t k = (uint32_t)(rng % POOL);
        int n = pool_stack(k, ips), cut = is_cut(k);
        uint32_t node;
        if (rng & (1u << 20)) {
            node = col_node_path(ips, n, cut);
        } else {
            /* outer part first, the inner frames on top with a guess */
            int inner = 1 + (int)((rng >> 24) % (uint64_t)n);
            uint32_t base = inner < n ? col_node_path(ips + inner, n - inner, cut)
                                      : (cut ? COL_NODE_TRUNC : 0);
            uint32_t guess = (rng & (1u << 21)) && got[t][k] ? got[t][k] : prev;
            col_node_stack(base, ips, inner, guess, nodes);
            node = nodes[0];
        }
        if (node == 0 || node == COL_NODE_NONE)
            fail("interning gave no node", k, node);
        else if (got[t][k] && got[t][k] != node)
            fail("one stack, two nodes", got[t][k], node);
        got[t][k] = prev = node;
        unsigned flags = 0;
        int m = col_node_ips(node, back, DEPTH_MAX, &flags);
        if (m != n || memcmp(back, ips, (size_t)n * sizeof *ips) != 0)
            fail("the node's frames are not the stack", k, m);
        if (((flags & PF_STACK_TRUNCATED) != 0) != cut)
            fail("the node's cut flag", k, (long)flags);
        /* as a guess: every frame by depth, whichever stacks came before
         * (only the frames below the join with the last one are read) */
        int gd = col_guess_depth(node, DEPTH_MAX);
        if (gd != (cut ? 0 : n))
            fail("a guess's depth", k, gd);
        if (gd > 0) {
            col_guess_set(&gs, node, gd);
            for (int i = 0; i < n; i++)
                if (gs.ip[n - i] != ips[i])
                    fail("a guess's frames by depth", k, i);
            if (gs.depth != n || gs.node[n] != node)
                fail("a guess's node", k, gs.node[n]);
        }
        int key = (int)((rng >> 32) % KEYS);
        uint32_t site = col_site_get(node, 16 + (uint64_t)key * 8);
        if (site <= COL_SITE_LOST || col_sites[site].node != node ||
            col_sites[site].key != 16 + (uint64_t)key * 8)
            fail("the site's record", k, site);
        else if (got_site[t][k][key] && got_site[t][k][key] != site)
            fail("one site, two ids", got_site[t][k][key], site);
        got_site[t][k][key] = site;
    }
    /* the shadow map: this thread's granules interleave with the others'
     * in every leaf, so the threads race to install the same leaves */
    uint64_t stride = 32 * THREADS;
    for (uint64_t i = 0; i < 200000; i++) {
        void *p = (void *)(uintptr_t)(0x100000000ull + (uint64_t)t * 32 + i * stride * 37);
        uint32_t v = ((uint32_t)(i % 1000 + 2) << 8) | (uint32_t)t;
        if (col_shadow_set(p, v) != 0)
            fail("a fresh shadow value was not 0", t, (long)i);
        if (i % 7 == 0 && col_shadow_size_put(p, i * 4096 + (uint64_t)t) != 0)
            fail("side table put", t, (long)i);
        if (i % 7 == 0 && col_shadow_size_take(p) != i * 4096 + (uint64_t)t)
            fail("side table size", t, (long)i);
        if (col_shadow_take(p) != v)
            fail("shadow value", t, (long)i);
        if (col_shadow_take(p) != 0)
            fail("shadow value after take", t, (long)i);
    }
    return NULL;
}

/* Reads every published record, as the profile writer does. */
static void *reader(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        uint32_t n = col_node_count();
        for (uint32_t id = 1; id <= n; id++) {
            const col_node_t *r = &col_nodes[id];
            if (r->parent >= id || r->depth == 0 || r->depth > DEPTH_MAX ||
                (r->parent && r->depth != col_nodes[r->parent].depth + 1))
                fail("record of a published node", id, r->parent);
            if (col_node_epoch(id) != col_modules_epoch_value) /* its run */
                fail("a published node's modules epoch", id, col_node_epoch(id));
        }
        uint32_t ns = col_site_count();
        for (uint32_t id = COL_SITE_LOST + 1; id <= ns; id++)
            if (col_sites[id].node == 0 || col_sites[id].node > col_node_count())
                fail("record of a published site", id, col_sites[id].node);
    }
    return NULL;
}

typedef struct rec_key {
    uint64_t a;
    uint32_t b;
} rec_key_t;

static int key_cmp(const void *x, const void *y)
{
    const rec_key_t *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

/* How many of records 1..n have the key of another (key_of gives it). */
static int dup_keys(uint32_t n, col_idtab_key_fn *key_of)
{
    rec_key_t *keys = calloc((size_t)n + 1, sizeof *keys);
    if (keys == NULL)
        return -1;
    for (uint32_t id = 1; id <= n; id++)
        key_of(id, &keys[id - 1].a, &keys[id - 1].b);
    qsort(keys, n, sizeof *keys, key_cmp);
    int dups = 0;
    for (uint32_t i = 1; i < n; i++)
        dups += key_cmp(&keys[i - 1], &keys[i]) == 0;
    free(keys);
    return dups;
}

int main(int argc, char **argv)
{
    col_config.fault_backoff = argc > 1 && !strcmp(argv[1], "backoff");
    if (col_node_init() != 0 || col_site_init() != 0 || col_shadow_init() != 0) {
        fprintf(stderr, "FAIL init\n");
        return 1;
    }
    pthread_t th[THREADS], rd;
    pthread_create(&rd, NULL, reader, NULL);
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, interner, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    pthread_join(rd, NULL);

    uint32_t nodes = col_node_count();
    uint32_t *owner = calloc((size_t)nodes + 1, sizeof *owner);
    uint32_t stacks = 0;
    for (uint32_t k = 0; k < POOL; k++) {
        uint32_t id = 0;
        for (int t = 0; t < THREADS; t++) {
            if (!got[t][k])
                continue;
            if (id && got[t][k] != id)
                fail("threads disagree on a stack's node", id, got[t][k]);
            id = got[t][k];
            for (int key = 0; key < KEYS; key++)
                for (int u = 0; u < t; u++)
                    if (got_site[t][k][key] && got_site[u][k][key] &&
                        got_site[t][k][key] != got_site[u][k][key])
                        fail("threads disagree on a site", k, key);
        }
        if (!id)
            continue; /* never drawn */
        stacks++;
        if (id > nodes || owner[id])
            fail("two stacks share a node", k, id);
        else
            owner[id] = k + 1;
    }
    free(owner);
    /* no two records of either table have the same key, whichever stacks
     * were drawn: the lists and the indexes together made each key once */
    int dup_nodes = dup_keys(nodes, col_node_key);
    int dup_sites = dup_keys(col_site_count(), col_site_key);
    if (dup_nodes || dup_sites)
        fail("keys made twice (nodes, sites)", dup_nodes, dup_sites);
    /* the keys past the nodes' lists went through the indexes, which grew
     * while the threads raced (from 1,024 and 256 slots) */
    uint32_t node_slots = col_node_tab.cur->mask + 1, site_slots = col_site_tab.cur->mask + 1;
    if (node_slots < 4096 || site_slots < 4096)
        fail("the indexes did not grow", node_slots, site_slots);
    printf("tsan_collector%s: %u stacks, %u nodes, %u sites interned by %d threads, "
           "index slots %u and %u, %d failures\n",
           col_config.fault_backoff ? " (backoff)" : "", stacks, nodes, col_site_count(), THREADS,
           node_slots, site_slots, failures);
    return failures != 0;
}
