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
    return a->first_word < b->first_word ? -1 : a->first_word > b->first_word;
}

/* Groups the lost chunks by (kind, size, first word); *out is malloc'd,
 * sorted by bytes, with vtable labels resolved.  Returns the count. */
size_t cw_report_leakgroups(const cw_walk_t *w, cw_leakgroup_t **out)
{
    cw_leakgroup_t *g = NULL;
    size_t n = 0;
    for (size_t i = 0; i < w->nchunks; i++) {
        const cw_chunk_t *c = &w->chunks[i];
        if (c->leak != CW_LEAK_DIRECT && c->leak != CW_LEAK_INDIRECT)
            continue;
        uint64_t fw = 0;
        cw_mem_u64(w->core, c->addr + 16, &fw);
        size_t k;
        for (k = 0; k < n; k++)
            if (g[k].kind == c->leak && g[k].size == c->size && g[k].first_word == fw)
                break;
        if (k == n) {
            cw_leakgroup_t *ng = realloc(g, (n + 1) * sizeof *ng);
            if (!ng)
                break;
            g = ng;
            memset(&g[n], 0, sizeof g[n]);
            g[n].kind = c->leak;
            g[n].size = c->size;
            g[n].first_word = fw;
            g[n].example = c->addr + 16;
            cw_mark_label(w, fw, g[n].label, sizeof g[n].label);
            n++;
        }
        g[k].count++;
        g[k].bytes += c->size;
    }
    if (n)
        qsort(g, n, sizeof *g, group_cmp);
    *out = g;
    return n;
}
