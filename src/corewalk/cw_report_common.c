/* cw_report_common.c - figures both report formats print: glibc's
 * mallinfo2 recomputed from the walk, per-class counts, leak groups. */
#include <stdlib.h>
#include <string.h>

#include "cw.h"
#include "cw_report.h"

/* mallinfo2 as glibc's __libc_mallinfo2 computes it: int_mallinfo summed
 * over the arenas (top counts as one free ordinary block; tcache chunks
 * are not in the lists it walks, so they count as in use), hblks and
 * hblkhd from mp_ (or, without mp_, the mmapped chunks found), keepcost
 * the main arena's top. */
void cw_report_mallinfo(const cw_walk_t *w, cw_mallinfo_t *mi)
{
    memset(mi, 0, sizeof *mi);
    for (size_t i = 0; i < w->narenas; i++) {
        const cw_arena_t *a = &w->arenas[i];
        mi->smblks += a->nfastblocks;
        mi->ordblks += a->nblocks;
        mi->fordblks += a->fastavail + a->avail;
        mi->uordblks += a->system_mem - a->avail - a->fastavail;
        mi->arena += a->system_mem;
        mi->fsmblks += a->fastavail;
    }
    mi->hblks = (uint64_t)w->lay.n_mmaps;
    mi->hblkhd = w->lay.mmapped_mem;
    mi->keepcost = w->narenas ? w->arenas[0].topsize : 0;
}

/* Per-class chunk counts and bytes, for one arena (ai >= 0) or all. */
void cw_report_classes(const cw_walk_t *w, int ai, uint64_t n[CW_NCLASS], uint64_t b[CW_NCLASS])
{
    memset(n, 0, CW_NCLASS * sizeof *n);
    memset(b, 0, CW_NCLASS * sizeof *b);
    for (size_t i = 0; i < w->nchunks; i++) {
        const cw_chunk_t *c = &w->chunks[i];
        if (ai >= 0 && c->arena != ai)
            continue;
        n[c->cls]++;
        b[c->cls] += c->size;
    }
}

static int group_cmp(const void *x, const void *y)
{
    const cw_leakgroup_t *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    if (a->first_word != b->first_word)
        return a->first_word < b->first_word ? -1 : 1;
    return a->kind - b->kind;
}

typedef struct lost { int kind; uint64_t size, first_word, addr; } lost_t;

static int lost_cmp(const void *x, const void *y)
{
    const lost_t *a = x, *b = y;
    if (a->kind != b->kind)
        return a->kind - b->kind;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    if (a->first_word != b->first_word)
        return a->first_word < b->first_word ? -1 : 1;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Groups the lost chunks by (kind, size, first word); *out is malloc'd,
 * sorted by bytes, with vtable labels resolved; the example of a group is
 * its lowest address.  Returns the count (0 and *out NULL when there is
 * nothing lost or no memory).  Sorting, not searching: O(n log n) for
 * cores with millions of lost chunks. */
size_t cw_report_leakgroups(const cw_walk_t *w, cw_leakgroup_t **out)
{
    *out = NULL;
    size_t nl = 0;
    for (size_t i = 0; i < w->nchunks; i++)
        nl += w->chunks[i].leak == CW_LEAK_DIRECT || w->chunks[i].leak == CW_LEAK_INDIRECT;
    lost_t *l = nl ? malloc(nl * sizeof *l) : NULL;
    if (!l)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < w->nchunks; i++) {
        const cw_chunk_t *c = &w->chunks[i];
        if (c->leak != CW_LEAK_DIRECT && c->leak != CW_LEAK_INDIRECT)
            continue;
        uint64_t fw = 0;
        cw_mem_u64(w->core, c->addr + 16, &fw);
        l[k++] = (lost_t){c->leak, c->size, fw, c->addr};
    }
    qsort(l, nl, sizeof *l, lost_cmp);
    size_t ng = 1;
    for (size_t i = 1; i < nl; i++)
        ng += l[i].kind != l[i - 1].kind || l[i].size != l[i - 1].size || l[i].first_word != l[i - 1].first_word;
    cw_leakgroup_t *g = calloc(ng, sizeof *g);
    if (!g) {
        free(l);
        return 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < nl; i++) {
        if (!n || g[n - 1].kind != l[i].kind || g[n - 1].size != l[i].size || g[n - 1].first_word != l[i].first_word) {
            g[n].kind = l[i].kind;
            g[n].size = l[i].size;
            g[n].first_word = l[i].first_word;
            g[n].example = l[i].addr + 16;
            cw_mark_label(w, l[i].first_word, g[n].label, sizeof g[n].label);
            n++;
        }
        g[n - 1].count++;
        g[n - 1].bytes += l[i].size;
    }
    free(l);
    qsort(g, n, sizeof *g, group_cmp);
    *out = g;
    return n;
}
