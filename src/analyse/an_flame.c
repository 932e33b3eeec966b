/* an_flame.c - build the merged frame tree (an_flame.h) that the SVG
 * flamegraph and the HTML report draw.  Names and (parent, name) pairs are
 * found through open-addressing hash tables so that a profile of 100,000
 * stacks builds in time linear in its frames. */
#include "analyse/an_flame.h"
#include "common/ut_grow.h"

#include <stdlib.h>
#include <string.h>

static const char *const cost_names[AN_FLAME_NCOSTS] = {
    "allocations", "bytes", "leaked", "peak", "temporary",
};

const char *an_flame_cost_name(an_flame_cost_t c)
{
    return (unsigned)c < AN_FLAME_NCOSTS ? cost_names[c] : "?";
}

int an_flame_cost_parse(const char *s, an_flame_cost_t *c)
{
    for (int i = 0; s && i < AN_FLAME_NCOSTS; i++)
        if (!strcmp(s, cost_names[i])) {
            *c = (an_flame_cost_t)i;
            return 0;
        }
    return -1;
}

void an_flame_stack_costs(const an_stats_t *s, uint64_t cost[AN_FLAME_NCOSTS])
{
    cost[AN_FLAME_ALLOCATIONS] = s->allocations;
    cost[AN_FLAME_BYTES] = s->bytes_allocated;
    cost[AN_FLAME_LEAKED] = s->leaked_bytes;
    cost[AN_FLAME_PEAK] = s->peak_bytes;
    cost[AN_FLAME_TEMPORARY] = s->temporary;
}

an_flame_class_t an_flame_module_class(const pf_profile_t *p, int32_t module)
{
    if (module < 0 || (size_t)module >= p->n_modules || !p->modules[module].path)
        return AN_FLAME_OTHER;
    const char *path = p->modules[module].path;
    if (module == 0 || (p->info.exe && !strcmp(path, p->info.exe)))
        return AN_FLAME_PROGRAM;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) || !strncmp(base, "ld-linux", 8))
        return AN_FLAME_LIBC;
    if (!strncmp(base, "libstdc++", 9) || !strncmp(base, "libgcc_s", 8))
        return AN_FLAME_LIBSTDCXX;
    return AN_FLAME_OTHER;
}

/* FNV-1a of a string, and a mix of two 32-bit numbers. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static uint64_t hash_pair(uint32_t a, uint32_t b)
{
    uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
}

/* Grow a table of uint32 slots (UINT32_MAX = empty) to twice its size and
 * reinsert the entries 0..n) with hash `fn`.  Returns 0 or -1. */
static int rehash(an_flame_t *f, uint32_t **tab, size_t *cap, size_t n,
                  uint64_t (*fn)(const an_flame_t *, uint32_t))
{
    size_t ncap = *cap ? *cap * 2 : 1024;
    uint32_t *t = malloc(ncap * sizeof *t);
    if (!t)
        return -1;
    memset(t, 0xff, ncap * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        size_t k = fn(f, (uint32_t)i) & (ncap - 1);
        while (t[k] != UINT32_MAX)
            k = (k + 1) & (ncap - 1);
        t[k] = (uint32_t)i;
    }
    free(*tab);
    *tab = t;
    *cap = ncap;
    return 0;
}

static uint64_t name_key(const an_flame_t *f, uint32_t i)
{
    return hash_str(f->names[i]);
}

static uint64_t node_key(const an_flame_t *f, uint32_t i)
{
    return hash_pair(f->nodes[i].parent, f->nodes[i].name);
}

uint32_t an_flame_intern(an_flame_t *f, const char *name)
{
    if (f->n_names * 2 >= f->name_hash_cap &&
        rehash(f, &f->name_hash, &f->name_hash_cap, f->n_names, name_key))
        return UINT32_MAX;
    size_t k = hash_str(name) & (f->name_hash_cap - 1);
    for (; f->name_hash[k] != UINT32_MAX; k = (k + 1) & (f->name_hash_cap - 1))
        if (!strcmp(f->names[f->name_hash[k]], name))
            return f->name_hash[k];
    if (ut_grow((void **)&f->names, &f->cap_names, f->n_names + 1, sizeof *f->names))
        return UINT32_MAX;
    size_t len = strlen(name) + 1;
    char *copy = malloc(len);
    if (!copy)
        return UINT32_MAX;
    memcpy(copy, name, len);
    f->names[f->n_names] = copy;
    f->name_hash[k] = (uint32_t)f->n_names;
    return (uint32_t)f->n_names++;
}

/* The child of `parent` called `name`, created (class cls) if new.
 * Returns its index or UINT32_MAX (no memory). */
static uint32_t child(an_flame_t *f, uint32_t parent, uint32_t name, uint8_t cls)
{
    if (f->n_nodes * 2 >= f->node_hash_cap &&
        rehash(f, &f->node_hash, &f->node_hash_cap, f->n_nodes, node_key))
        return UINT32_MAX;
    size_t k = hash_pair(parent, name) & (f->node_hash_cap - 1);
    for (; f->node_hash[k] != UINT32_MAX; k = (k + 1) & (f->node_hash_cap - 1)) {
        const an_flame_node_t *n = &f->nodes[f->node_hash[k]];
        if (n->parent == parent && n->name == name && f->node_hash[k] != 0)
            return f->node_hash[k];
    }
    if (ut_grow((void **)&f->nodes, &f->cap_nodes, f->n_nodes + 1, sizeof *f->nodes))
        return UINT32_MAX;
    an_flame_node_t *n = &f->nodes[f->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->parent = parent;
    n->depth = f->n_nodes ? f->nodes[parent].depth + 1 : 0;
    n->cls = cls;
    f->node_hash[k] = (uint32_t)f->n_nodes;
    return (uint32_t)f->n_nodes++;
}

int an_flame_build(an_flame_t *f, an_report_t *r, int reverse)
{
    memset(f, 0, sizeof *f);
    uint32_t all = an_flame_intern(f, "all");
    if (all == UINT32_MAX || child(f, 0, all, AN_FLAME_OTHER) != 0)
        return PF_ENOMEM;
    for (size_t i = 0; i < r->model.n_stats; i++) {
        const an_stats_t *s = &r->model.stats[i];
        uint64_t cost[AN_FLAME_NCOSTS];
        an_flame_stack_costs(s, cost);
        int rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[s->stack]);
        if (rc)
            return rc;
        uint32_t node = 0;
        for (int k = 0; k < AN_FLAME_NCOSTS; k++)
            f->nodes[0].cost[k] = an_add(f->nodes[0].cost[k], cost[k]);
        size_t n = r->frames.n;
        for (size_t j = 0; j < n; j++) {
            const an_frame_t *fr = &r->frames.v[reverse ? j : n - 1 - j];
            uint32_t name = an_flame_intern(f, fr->function ? fr->function : "??");
            if (name == UINT32_MAX)
                return PF_ENOMEM;
            node = child(f, node, name, (uint8_t)an_flame_module_class(r->prof, fr->module));
            if (node == UINT32_MAX)
                return PF_ENOMEM;
            for (int k = 0; k < AN_FLAME_NCOSTS; k++)
                f->nodes[node].cost[k] = an_add(f->nodes[node].cost[k], cost[k]);
        }
    }
    return PF_OK;
}

void an_flame_free(an_flame_t *f)
{
    for (size_t i = 0; i < f->n_names; i++)
        free(f->names[i]);
    free(f->names);
    free(f->nodes);
    free(f->name_hash);
    free(f->node_hash);
    memset(f, 0, sizeof *f);
}
