/* cw_bins.c - classifies the walked chunks from the allocator's own lists:
 * tcache (per-thread structs found among the chunks), fastbins, and the
 * unsorted, small and large bins of every arena.  Also computes each
 * arena's int_mallinfo figures exactly as glibc does (from the lists, not
 * from the physical walk), and detects safe-linking from the data.
 *
 * Checks made on the way (each failure is a problem, the walk goes on):
 *   a list entry that is not the header of a walked chunk, a chunk whose
 *   size is not its bin's, a list that loops, a binned chunk whose next
 *   chunk still has PREV_INUSE set.
 */
#include <stdlib.h>
#include <string.h>

#include "cw.h"

/* Demangles a tcache/fastbin next pointer stored at address pos. */
uint64_t cw_bins_reveal(const cw_walk_t *w, uint64_t pos, uint64_t v)
{
    return w->lay.safe_linking == 1 ? (pos >> 12) ^ v : v;
}

/* 1 if v is 0 or the user pointer of a walked chunk of chunk size sz. */
static int plausible_mem(const cw_walk_t *w, uint64_t v, uint64_t sz)
{
    if (v == 0)
        return 1;
    cw_chunk_t *c = cw_chunks_find(w, v - 16);
    return c && c->size == sz && c->cls == CW_INUSE;
}

/* 1 if chunk ch holds a valid tcache_perthread_struct. */
static int is_tcache_struct(const cw_walk_t *w, const cw_chunk_t *ch, int first_of_heap)
{
    uint16_t counts[CW_TCACHE_BINS];
    uint64_t entries[CW_TCACHE_BINS];
    if (ch->size != CW_TCACHE_STRUCT_CHUNK || ch->cls != CW_INUSE ||
        cw_mem_read(w->core, ch->addr + 16, counts, sizeof counts) ||
        cw_mem_read(w->core, ch->addr + 16 + sizeof counts, entries, sizeof entries))
        return 0;
    int nonempty = 0;
    for (int i = 0; i < CW_TCACHE_BINS; i++) {
        if ((counts[i] == 0) != (entries[i] == 0) || counts[i] > 1024)
            return 0;
        if (entries[i] && !plausible_mem(w, entries[i], 32 + 16 * (uint64_t)i))
            return 0;
        nonempty += counts[i] != 0;
    }
    return nonempty || first_of_heap;
}

/* Votes on safe-linking with the first next pointer of a list, stored at
 * pos (a tcache entry's user memory, or a fastbin chunk's fd field); `hdr`
 * is 16 when the pointers stored are chunk headers (fastbins), 0 when they
 * are user pointers (tcache). */
static void vote(const cw_walk_t *w, uint64_t pos, uint64_t sz, uint64_t hdr, int *plain, int *mangled)
{
    uint64_t v;
    if (cw_mem_u64(w->core, pos, &v))
        return;
    uint64_t r = (pos >> 12) ^ v;
    if (plausible_mem(w, v ? v + hdr : 0, sz))
        (*plain)++;
    if (plausible_mem(w, r ? r + hdr : 0, sz))
        (*mangled)++;
}

static void mark_tcache(cw_walk_t *w, cw_chunk_t *ts)
{
    uint16_t counts[CW_TCACHE_BINS];
    uint64_t entries[CW_TCACHE_BINS];
    cw_mem_read(w->core, ts->addr + 16, counts, sizeof counts);
    cw_mem_read(w->core, ts->addr + 16 + sizeof counts, entries, sizeof entries);
    ts->cls = CW_TCACHE_STRUCT;
    for (int i = 0; i < CW_TCACHE_BINS; i++) {
        uint64_t e = entries[i], sz = 32 + 16 * (uint64_t)i;
        for (unsigned k = 0; k < counts[i] && e; k++) {
            cw_chunk_t *c = cw_chunks_find(w, e - 16);
            if (!c || c->size != sz || c->cls != CW_INUSE) {
                cw_walk_problem(w, "tcache %#llx bin %d: bad entry %#llx (%s)",
                                (unsigned long long)ts->addr, i, (unsigned long long)e,
                                !c ? "not a chunk" : c->cls == CW_TCACHE ? "loop" : "wrong size or state");
                break;
            }
            c->cls = CW_TCACHE;
            uint64_t v;
            if (cw_mem_u64(w->core, e, &v))
                break;
            e = cw_bins_reveal(w, e, v);
        }
    }
}

static void fastbins(cw_walk_t *w, cw_arena_t *a)
{
    for (int i = 0; i < CW_NFASTBINS; i++) {
        uint64_t p;
        if (cw_mem_u64(w->core, a->addr + CW_MS_FASTBINS + 8 * (uint64_t)i, &p))
            continue;
        uint64_t sz = 32 + 16 * (uint64_t)i;
        size_t steps = 0;
        while (p) {
            cw_chunk_t *c = cw_chunks_find(w, p);
            if (!c || c->cls != CW_INUSE || c->size != sz || ++steps > w->nchunks) {
                cw_walk_problem(w, "arena %#llx fastbin %d: bad entry %#llx (%s)",
                                (unsigned long long)a->addr, i, (unsigned long long)p,
                                !c ? "not a chunk" : c->cls == CW_FASTBIN ? "loop" : "wrong size or state");
                break;
            }
            c->cls = CW_FASTBIN;
            a->fastavail += c->size;
            a->nfastblocks++;
            uint64_t v;
            if (cw_mem_u64(w->core, p + 16, &v))
                break;
            p = cw_bins_reveal(w, p + 16, v);
        }
    }
}

static void bins(cw_walk_t *w, cw_arena_t *a)
{
    a->avail = a->topsize;
    a->nblocks = 1;
    for (int i = 1; i < CW_NBINS; i++) {
        uint64_t bin = a->addr + CW_MS_BINS + (uint64_t)(i - 1) * 16 - 16;
        cw_class_t k = i == 1 ? CW_UNSORTED : i < 64 ? CW_SMALLBIN : CW_LARGEBIN;
        uint64_t p, prev = bin;
        if (cw_mem_u64(w->core, bin + 16, &p))
            continue;
        size_t steps = 0;
        while (p != bin) {
            cw_chunk_t *c = cw_chunks_find(w, p);
            if (!c || c->cls != CW_INUSE || ++steps > w->nchunks) {
                cw_walk_problem(w, "arena %#llx bin %d: bad entry %#llx (%s)", (unsigned long long)a->addr,
                                i, (unsigned long long)p,
                                !c ? "not a chunk" : c->cls == k ? "loop" : "already in another list");
                break;
            }
            c->cls = k;
            a->avail += c->size;
            a->nblocks++;
            uint64_t bk, nsz;
            if (!cw_mem_u64(w->core, p + 24, &bk) && bk != prev)
                cw_walk_problem(w, "arena %#llx bin %d: chunk %#llx bk %#llx, expected %#llx",
                                (unsigned long long)a->addr, i, (unsigned long long)p,
                                (unsigned long long)bk, (unsigned long long)prev);
            if (!cw_mem_u64(w->core, p + c->size + 8, &nsz) && (nsz & 1))
                cw_walk_problem(w, "free chunk %#llx: next chunk has PREV_INUSE set",
                                (unsigned long long)p);
            prev = p;
            if (cw_mem_u64(w->core, p + 16, &p))
                break;
        }
    }
}

/* Classifies every chunk; fills the arenas' mallinfo figures. */
void cw_bins_classify(cw_walk_t *w)
{
    /* tcache structs: the first chunk of a heap, or any 0x290 chunk that is
     * a consistent tcache with entries */
    cw_chunk_t **ts = NULL;
    size_t nts = 0;
    for (size_t i = 0; i < w->nchunks; i++) {
        cw_chunk_t *c = &w->chunks[i];
        int first = c->heap >= 0 && w->heaps[c->heap].first == c->addr;
        if (is_tcache_struct(w, c, first)) {
            cw_chunk_t **n = realloc(ts, (nts + 1) * sizeof *n);
            if (!n)
                break;
            ts = n;
            ts[nts++] = c;
        }
    }
    w->lay.tcache = nts > 0;
    if (!nts) /* glibc 2.26-2.29: char counts, a 0x250 struct first in the heap */
        for (size_t i = 0; i < w->nheaps; i++) {
            cw_chunk_t *c = cw_chunks_find(w, w->heaps[i].first);
            if (c && c->size == 0x250 && c->cls == CW_INUSE) {
                cw_walk_problem(w, "heap %#llx starts with a 0x250 chunk, the tcache of glibc 2.26 to 2.29, "
                                   "which is not read: its free chunks count as in use",
                                (unsigned long long)w->heaps[i].start);
                break;
            }
        }
    int plain = 0, mangled = 0;
    for (size_t t = 0; t < nts; t++) {
        uint64_t entries[CW_TCACHE_BINS];
        if (cw_mem_read(w->core, ts[t]->addr + 16 + 128, entries, sizeof entries))
            continue;
        for (int i = 0; i < CW_TCACHE_BINS; i++)
            if (entries[i])
                vote(w, entries[i], 32 + 16 * (uint64_t)i, 0, &plain, &mangled);
    }
    for (size_t ai = 0; ai < w->narenas; ai++)
        for (int i = 0; i < CW_NFASTBINS; i++) {
            uint64_t p;
            if (!cw_mem_u64(w->core, w->arenas[ai].addr + CW_MS_FASTBINS + 8 * (uint64_t)i, &p) && p)
                vote(w, p + 16, 32 + 16 * (uint64_t)i, 16, &plain, &mangled);
        }
    if (plain || mangled)
        w->lay.safe_linking = mangled > plain;
    for (size_t t = 0; t < nts; t++)
        mark_tcache(w, ts[t]);
    free(ts);
    for (size_t ai = 0; ai < w->narenas; ai++) {
        fastbins(w, &w->arenas[ai]);
        bins(w, &w->arenas[ai]);
    }
}
