/* an_mprof_data.c - reduce a heapscope profile to mprof's data (see
 * an_mprof_data.h): functions with their direct allocations, caller/callee
 * pairs, 5-function leak paths and allocation bins.
 *
 * heapscope keeps, per stack and request size, the allocations, frees and
 * bytes.  mprof's monitor saw the same events one at a time; summing them
 * per (stack, size) gives the same tables, because every mprof figure is a
 * sum over allocations of something that depends only on the chain and the
 * size. */
#include "analyse/an_mprof_data.h"

#include <stdlib.h>
#include <string.h>

#include "heapscope/profile.h"
#include "common/ut_grow.h"

int mp_class(uint64_t n)
{
    if (n <= 32)
        return MP_S;
    if (n <= 256)
        return MP_M;
    if (n <= 2048)
        return MP_L;
    return MP_X;
}

uint64_t mp_sum4(const uint64_t v[MP_NCLASS])
{
    return v[0] + v[1] + v[2] + v[3];
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Rebuild an open-addressing table of `cap` slots for n keys. */
static int rehash(uint32_t **tab, size_t *cap, size_t n,
                  uint64_t (*key)(const mp_t *, size_t), const mp_t *mp)
{
    size_t nc = *cap ? *cap * 2 : 256;
    uint32_t *t = calloc(nc, sizeof *t);
    if (!t)
        return PF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        size_t s = key(mp, i) & (nc - 1);
        while (t[s])
            s = (s + 1) & (nc - 1);
        t[s] = (uint32_t)(i + 1);
    }
    free(*tab);
    *tab = t;
    *cap = nc;
    return 0;
}

static uint64_t func_key(const mp_t *mp, size_t i) { return hash_str(mp->funcs[i].name); }

static uint64_t pair_hash(uint32_t a, uint32_t b)
{
    return ((uint64_t)a * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4full);
}

static uint64_t edge_key(const mp_t *mp, size_t i)
{
    return pair_hash(mp->edges[i].parent, mp->edges[i].child);
}

/* Index of the function `name`, added when new; -1 when out of memory. */
static long func_id(mp_t *mp, const char *name)
{
    if (mp->fhash_cap) {
        size_t s = hash_str(name) & (mp->fhash_cap - 1);
        for (; mp->fhash[s]; s = (s + 1) & (mp->fhash_cap - 1))
            if (!strcmp(mp->funcs[mp->fhash[s] - 1].name, name))
                return (long)mp->fhash[s] - 1;
    }
    if (ut_grow((void **)&mp->funcs, &mp->cap_funcs, mp->n_funcs + 1, sizeof *mp->funcs))
        return -1;
    mp_func_t *f = &mp->funcs[mp->n_funcs];
    memset(f, 0, sizeof *f);
    size_t len = strlen(name) + 1;
    f->name = malloc(len);
    if (!f->name)
        return -1;
    memcpy(f->name, name, len);
    mp->n_funcs++;
    if (2 * mp->n_funcs > mp->fhash_cap || mp->n_funcs == 1) {
        if (rehash(&mp->fhash, &mp->fhash_cap, mp->n_funcs, func_key, mp))
            return -1;
    } else {
        size_t s = hash_str(name) & (mp->fhash_cap - 1);
        while (mp->fhash[s])
            s = (s + 1) & (mp->fhash_cap - 1);
        mp->fhash[s] = (uint32_t)mp->n_funcs;
    }
    return (long)mp->n_funcs - 1;
}

/* The pair (parent, child), added when new; NULL when out of memory. */
static mp_edge_t *edge_get(mp_t *mp, uint32_t parent, uint32_t child)
{
    if (mp->ehash_cap) {
        size_t s = pair_hash(parent, child) & (mp->ehash_cap - 1);
        for (; mp->ehash[s]; s = (s + 1) & (mp->ehash_cap - 1)) {
            mp_edge_t *e = &mp->edges[mp->ehash[s] - 1];
            if (e->parent == parent && e->child == child)
                return e;
        }
    }
    if (ut_grow((void **)&mp->edges, &mp->cap_edges, mp->n_edges + 1, sizeof *mp->edges))
        return NULL;
    mp_edge_t *e = &mp->edges[mp->n_edges++];
    memset(e, 0, sizeof *e);
    e->parent = parent;
    e->child = child;
    if (2 * mp->n_edges > mp->ehash_cap) {
        if (rehash(&mp->ehash, &mp->ehash_cap, mp->n_edges, edge_key, mp))
            return NULL;
    } else {
        size_t s = pair_hash(parent, child) & (mp->ehash_cap - 1);
        while (mp->ehash[s])
            s = (s + 1) & (mp->ehash_cap - 1);
        mp->ehash[s] = (uint32_t)mp->n_edges;
    }
    return &mp->edges[mp->n_edges - 1];
}

static uint64_t leak_hash(const uint32_t *f, int n, int rooted)
{
    uint64_t h = (uint64_t)rooted * 0x9e3779b97f4a7c15ull + (uint64_t)n;
    for (int i = 0; i < n; i++)
        h = pair_hash((uint32_t)h ^ (uint32_t)(h >> 32), f[i]);
    return h;
}

static uint64_t leak_key(const mp_t *mp, size_t i)
{
    return leak_hash(mp->leaks[i].f, mp->leaks[i].n, mp->leaks[i].rooted);
}

/* The leak record of this path (merged by function names, as mprof's
 * default -leaktable does); NULL when out of memory. */
static mp_leak_t *leak_get(mp_t *mp, const uint32_t *f, int n, int rooted)
{
    uint64_t h = leak_hash(f, n, rooted);
    if (mp->lhash_cap) {
        size_t s = h & (mp->lhash_cap - 1);
        for (; mp->lhash[s]; s = (s + 1) & (mp->lhash_cap - 1)) {
            mp_leak_t *l = &mp->leaks[mp->lhash[s] - 1];
            if (l->n == n && l->rooted == rooted && !memcmp(l->f, f, (size_t)n * sizeof *f))
                return l;
        }
    }
    if (ut_grow((void **)&mp->leaks, &mp->cap_leaks, mp->n_leaks + 1, sizeof *mp->leaks))
        return NULL;
    mp_leak_t *l = &mp->leaks[mp->n_leaks++];
    memset(l, 0, sizeof *l);
    memcpy(l->f, f, (size_t)n * sizeof *f);
    l->n = n;
    l->rooted = rooted;
    if (2 * mp->n_leaks > mp->lhash_cap) {
        if (rehash(&mp->lhash, &mp->lhash_cap, mp->n_leaks, leak_key, mp))
            return NULL;
    } else {
        size_t s = h & (mp->lhash_cap - 1);
        while (mp->lhash[s])
            s = (s + 1) & (mp->lhash_cap - 1);
        mp->lhash[s] = (uint32_t)mp->n_leaks;
    }
    return &mp->leaks[mp->n_leaks - 1];
}

/* Credit one stack's counter entries to functions, pairs, leaks, bins. */
static int add_stack(mp_t *mp, const pf_profile_t *p, const pf_stack_t *st,
                     const uint32_t *chain, size_t d, int rooted)
{
    uint32_t lp[MP_LEAK_DEPTH];
    int ln = d < MP_LEAK_DEPTH ? (int)d : MP_LEAK_DEPTH;
    memcpy(lp, chain, (size_t)ln * sizeof *lp);
    mp_leak_t *leak = NULL;
    for (size_t k = 0; k < st->n_counters; k++) {
        const pf_counter_t *c = &p->counters[st->first_counter + k];
        uint64_t freed = c->bytes_freed < c->bytes_allocated ? c->bytes_freed : c->bytes_allocated;
        uint64_t kept = c->bytes_allocated - freed;
        int cl = mp_class(c->size_lo);
        mp->total_allocs += c->allocations;
        mp->total_bytes += c->bytes_allocated;
        mp->total_frees += c->frees;
        mp->total_kept += kept;
        mp_bin_t *b = (c->size_lo == c->size_hi && c->size_lo < MP_NBINS)
                          ? &mp->bins[c->size_lo] : &mp->big;
        b->allocs += c->allocations;
        b->frees += c->frees;
        b->bytes += c->bytes_allocated;
        b->bytes_freed += freed;
        if (d == 0)
            continue;
        mp_func_t *leaf = &mp->funcs[chain[0]];
        leaf->leaf.bytes[cl] += c->bytes_allocated;
        leaf->leaf.count[cl] += c->allocations;
        leaf->leaf.kept[cl] += kept;
        for (size_t i = 1; i < d; i++) {
            if (chain[i] == chain[i - 1]) {
                mp->funcs[chain[i]].srefs += c->allocations;
                continue;
            }
            mp_edge_t *e = edge_get(mp, chain[i], chain[i - 1]);
            if (!e)
                return PF_ENOMEM;
            e->d.bytes[cl] += c->bytes_allocated;
            e->d.count[cl] += c->allocations;
        }
        if (!leak && !(leak = leak_get(mp, lp, ln, rooted)))
            return PF_ENOMEM;
        leak->allocs += c->allocations;
        leak->bytes += c->bytes_allocated;
        leak->frees += c->frees;
        leak->bytes_freed += freed;
    }
    return PF_OK;
}

int mp_build(mp_t *mp, an_report_t *r)
{
    memset(mp, 0, sizeof *mp);
    const pf_profile_t *p = r->prof;
    uint32_t *chain = malloc(PF_READ_MAX_DEPTH * 2 * sizeof *chain);
    if (!chain)
        return PF_ENOMEM;
    int rc = PF_OK;
    for (size_t s = 0; s < p->n_stacks && rc == PF_OK; s++) {
        const pf_stack_t *st = &p->stacks[s];
        if ((rc = an_frames_get(&r->frames, p, r->syms, st)) != PF_OK)
            break;
        size_t d = 0;
        int rooted = 0;
        for (size_t i = 0; i < r->frames.n && d < PF_READ_MAX_DEPTH * 2; i++) {
            long id = func_id(mp, r->frames.v[i].function);
            if (id < 0) {
                rc = PF_ENOMEM;
                break;
            }
            chain[d++] = (uint32_t)id;
            if (!strcmp(r->frames.v[i].function, "main")) {
                rooted = 1;   /* mprof's walk stops at main */
                break;
            }
        }
        int cut = (st->flags & PF_STACK_TRUNCATED) != 0;
        mp->truncated_stacks += cut;
        if (rc == PF_OK)
            rc = add_stack(mp, p, st, chain, d, rooted || (!cut && d <= MP_LEAK_DEPTH));
    }
    free(chain);
    return rc;
}

void mp_free(mp_t *mp)
{
    for (size_t i = 0; i < mp->n_funcs; i++)
        free(mp->funcs[i].name);
    free(mp->funcs);
    free(mp->fhash);
    free(mp->edges);
    free(mp->ehash);
    free(mp->leaks);
    free(mp->lhash);
    memset(mp, 0, sizeof *mp);
}

void mp_breakdown(char buf[13], const uint64_t v[MP_NCLASS], uint64_t denom)
{
    char cell[MP_NCLASS][8];
    for (int c = 0; c < MP_NCLASS; c++) {
        double pc = denom ? 100.0 * (double)v[c] / (double)denom : 0.0;
        long ip = (long)pc;
        if (v[c] == 0 || (ip == 0 && pc < 0.00001))
            strcpy(cell[c], "");
        else if (ip == 0)
            strcpy(cell[c], ".");
        else if (ip >= 100)
            strcpy(cell[c], "**");
        else
            snprintf(cell[c], sizeof cell[c], "%d", (int)(ip % 100));
    }
    snprintf(buf, 13, " %2.2s %2.2s %2.2s %2.2s", cell[0], cell[1], cell[2], cell[3]);
}

void mp_percent(char buf[8], uint64_t v, uint64_t denom)
{
    if (v == 0 || denom == 0)
        buf[0] = 0;
    else if (v >= denom)
        snprintf(buf, 8, "(**)");
    else if ((v * 100) / denom == 0)
        snprintf(buf, 8, "(.)");
    else
        snprintf(buf, 8, "(%d)", (int)((v * 100) / denom));
}
