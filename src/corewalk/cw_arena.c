/* cw_arena.c - the walk: every arena of the ring main_arena.next, each
 * arena's heaps, each heap's chunks in address order, and the mmapped
 * chunks found in anonymous mappings; then cw_bins.c classifies free ones.
 *
 * Heaps:
 *   main arena   one brk heap from mp_.sbrk_base (or the start of the
 *                mapping holding top) to the end of the top chunk.
 *                (A non-contiguous main arena, after a failed sbrk, is not
 *                followed: only the part holding top is walked.)
 *   thread arena heap_info-headed heaps aligned to 64 MiB: the heap holding
 *                top, then heap_info.prev back to the arena's first heap,
 *                whose chunks start after the malloc_state.  A heap that is
 *                not the last ends with two fencepost chunks (16, then 0).
 * Chunk sizes are checked (16-aligned, >= 32, inside the heap); a bad one
 * is reported and ends that heap's walk, the others go on.
 */
#include <stdlib.h>
#include <string.h>

#include "cw.h"

#define MAX_ARENAS 4096
#define MAX_HEAPS_PER_ARENA 4096

static int add_heap(cw_walk_t *w, uint64_t start, uint64_t end, uint64_t first, int arena)
{
    cw_heap_t *n = realloc(w->heaps, (w->nheaps + 1) * sizeof *n);
    if (!n)
        return -1;
    w->heaps = n;
    n[w->nheaps] = (cw_heap_t){start, end, first, arena};
    w->nheaps++;
    return 0;
}

/* Marks the mappings overlapping [s, e) as allocator memory (not roots). */
static void set_role(cw_core_t *c, uint64_t s, uint64_t e, int role)
{
    for (size_t i = 0; i < c->nsegs; i++)
        if (c->segs[i].start < e && c->segs[i].end > s)
            c->segs[i].role = role;
}

/* Walks the chunks of heap hi physically up to its end or the top chunk. */
static void walk_heap(cw_walk_t *w, size_t hi)
{
    const cw_heap_t *h = &w->heaps[hi];
    const cw_arena_t *a = &w->arenas[h->arena];
    uint64_t p = h->first;
    while (p + 16 <= h->end) {
        uint64_t sf;
        if (cw_mem_u64(w->core, p + 8, &sf)) {
            cw_walk_problem(w, "heap %#llx: chunk %#llx not in the dump", (unsigned long long)h->start,
                            (unsigned long long)p);
            return;
        }
        uint64_t sz = sf & ~7ull;
        if (p == a->top) {
            cw_chunks_add(w, p, sz, CW_TOP, h->arena, (int)hi);
            return;
        }
        if (sz <= 16 && p + 32 >= h->end)
            return; /* fencepost at the end of a non-last heap */
        if (sz < 32 || (sz & 15) || sz > h->end - p) {
            cw_walk_problem(w, "bad size %#llx of chunk %#llx (heap %#llx): rest of heap skipped",
                            (unsigned long long)sf, (unsigned long long)p, (unsigned long long)h->start);
            return;
        }
        if (cw_chunks_add(w, p, sz, CW_INUSE, h->arena, (int)hi))
            return;
        p += sz;
    }
}

static int read_arena(cw_walk_t *w, uint64_t addr, cw_arena_t *a)
{
    uint8_t m[CW_MSTATE_SIZE];
    if (cw_mem_read(w->core, addr, m, sizeof m))
        return -1;
    memset(a, 0, sizeof *a);
    a->addr = addr;
    memcpy(&a->mutex, m, 4);
    memcpy(&a->top, m + CW_MS_TOP, 8);
    memcpy(&a->next, m + CW_MS_NEXT, 8);
    memcpy(&a->system_mem, m + CW_MS_SYSMEM, 8);
    memcpy(&a->max_system_mem, m + CW_MS_MAXSYSMEM, 8);
    uint64_t tsz = 0;
    if (a->top && !cw_mem_u64(w->core, a->top + 8, &tsz))
        a->topsize = tsz & ~7ull;
    return 0;
}

/* Heaps of the thread arena ai: from top's heap back through prev. */
static void thread_heaps(cw_walk_t *w, cw_core_t *c, int ai)
{
    cw_arena_t *a = &w->arenas[ai];
    uint64_t h = a->top & ~(CW_HEAP_MAX - 1);
    uint64_t hs[MAX_HEAPS_PER_ARENA], sizes[MAX_HEAPS_PER_ARENA];
    int n = 0;
    while (h && n < MAX_HEAPS_PER_ARENA) {
        uint64_t hi[3];
        if (cw_mem_read(c, h, hi, sizeof hi) || hi[0] != a->addr || hi[2] > CW_HEAP_MAX) {
            cw_walk_problem(w, "arena %#llx: bad heap_info at %#llx", (unsigned long long)a->addr,
                            (unsigned long long)h);
            break;
        }
        int seen = 0;
        for (int k = 0; k < n && !seen; k++)
            seen = hs[k] == h;
        for (size_t k = 0; k < w->nheaps && !seen; k++)
            seen = w->heaps[k].start == h;
        if (seen) { /* a prev ring, or a heap another arena claims */
            cw_walk_problem(w, "arena %#llx: heap_info %#llx met twice (prev loops)", (unsigned long long)a->addr,
                            (unsigned long long)h);
            break;
        }
        hs[n] = h;
        sizes[n++] = hi[2];
        if (a->addr - h < 4096)
            break; /* the arena's first heap */
        h = hi[1];
    }
    if (n && a->addr - hs[n - 1] < 4096) {
        uint64_t d = a->addr - hs[n - 1];
        if (d == 32 || d == 48)
            w->lay.heap_info_size = (int)d;
    }
    if (!w->lay.heap_info_size) /* no first heap seen: heap_info.pagesize came with mp_'s hp fields (2.35) */
        w->lay.heap_info_size = w->lay.have_mp && !w->lay.mp_hp_fields ? 32 : 48;
    for (int i = n - 1; i >= 0; i--) {
        uint64_t first = (a->addr - hs[i] < 4096) ? ((a->addr + CW_MSTATE_SIZE + 15) & ~15ull)
                                                   : hs[i] + (uint64_t)w->lay.heap_info_size;
        uint64_t end = hs[i] + sizes[i];
        if (a->top >= hs[i] && a->top < end)
            end = a->top + a->topsize;
        set_role(c, hs[i], hs[i] + sizes[i], CW_ROLE_HEAP);
        add_heap(w, hs[i], end, first, ai);
    }
}

/* mmapped chunks: page-aligned headers with prev_size 0 and size bits
 * exactly IS_MMAPPED, in anonymous writable mappings that are not heaps. */
static void mmapped_chunks(cw_walk_t *w, cw_core_t *c)
{
    for (size_t i = 0; i < c->nsegs; i++) {
        cw_seg_t *s = &c->segs[i];
        if (s->role != CW_ROLE_OTHER || s->path || !(s->flags & CW_SEG_W) || !s->data)
            continue;
        int is_stack = 0;
        for (size_t t = 0; t < c->nthreads; t++)
            is_stack |= c->threads[t].regs[CW_REG_RSP] >= s->start &&
                        c->threads[t].regs[CW_REG_RSP] < s->end;
        if (is_stack)
            continue;
        uint64_t p = s->start;
        while (p + 16 <= s->end) {
            uint64_t hdr[2];
            if (cw_mem_read(c, p, hdr, sizeof hdr))
                break;
            uint64_t sz = hdr[1] & ~7ull;
            if (hdr[0] == 0 && (hdr[1] & 7) == 2 && sz >= 4096 && !(sz & 0xfff) && sz <= s->end - p) {
                cw_chunks_add(w, p, sz, CW_MMAPPED, -1, -1);
                w->mmapped_found++;
                w->mmapped_found_bytes += sz;
                set_role(c, p, p + sz, CW_ROLE_MMAPPED);
                p += sz;
            } else {
                p += 4096;
            }
        }
    }
}

/* Runs the whole walk on c (which it annotates: segment roles).  Returns
 * 0 and a new walk (free with cw_walk_free), or -1 with err set when no
 * heap is found. */
int cw_walk_run(const cw_core_t *cc, int use_symbols, cw_walk_t **out, char *err, size_t errsz)
{
    cw_core_t *c = (cw_core_t *)cc;
    *out = NULL;
    cw_walk_t *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    w->core = c;
    for (size_t i = 0; i < c->nsegs; i++)
        c->segs[i].role = CW_ROLE_OTHER;
    if (cw_glibc_locate(c, &w->lay, use_symbols, err, errsz)) {
        free(w);
        return -1;
    }
    uint64_t a = w->lay.main_arena;
    do {
        cw_arena_t ar;
        if (read_arena(w, a, &ar)) {
            cw_walk_problem(w, "arena %#llx not in the dump: ring ends", (unsigned long long)a);
            break;
        }
        int again = 0;
        for (size_t k = 1; k < w->narenas && !again; k++)
            again = w->arenas[k].addr == a;
        if (again) {
            cw_walk_problem(w, "arena ring loops at %#llx without coming back to main_arena",
                            (unsigned long long)a);
            break;
        }
        cw_arena_t *n = realloc(w->arenas, (w->narenas + 1) * sizeof *n);
        if (!n)
            break;
        w->arenas = n;
        n[w->narenas++] = ar;
        a = ar.next;
        if (w->narenas >= MAX_ARENAS) {
            cw_walk_problem(w, "arena ring does not close after %d arenas", MAX_ARENAS);
            break;
        }
    } while (a != w->lay.main_arena && a);

    if (!w->narenas) {
        snprintf(err, errsz, "out of memory");
        cw_walk_free(w);
        return -1;
    }
    /* main arena: the brk heap */
    cw_arena_t *m = &w->arenas[0];
    uint64_t start = w->lay.sbrk_base;
    const cw_seg_t *ts = cw_mem_seg(c, m->top);
    if (!start || !ts || start < ts->start || start > m->top) {
        /* the mapping of top; its start is the brk start */
        start = ts ? ts->start : m->top;
    }
    if (m->top) {
        set_role(c, start, m->top + m->topsize, CW_ROLE_HEAP);
        add_heap(w, start, m->top + m->topsize, (start + 15) & ~15ull, 0);
    }
    for (size_t i = 0; i < w->narenas; i++)
        if (w->arenas[i].mutex)
            cw_walk_problem(w, "arena %#llx: its mutex is held (%u): a thread was in malloc or free when "
                            "the memory was copied, its lists may be half updated",
                            (unsigned long long)w->arenas[i].addr, w->arenas[i].mutex);
    for (size_t i = 1; i < w->narenas; i++)
        thread_heaps(w, c, (int)i);
    for (size_t i = 0; i < w->nheaps; i++)
        walk_heap(w, i);
    mmapped_chunks(w, c);
    cw_chunks_sort(w);
    cw_bins_classify(w);
    if (!w->lay.have_mp) {
        w->lay.n_mmaps = (int64_t)w->mmapped_found;
        w->lay.mmapped_mem = w->mmapped_found_bytes;
    }
    *out = w;
    return 0;
}

void cw_walk_free(cw_walk_t *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nproblems; i++)
        free(w->problems[i]);
    free(w->problems);
    free(w->arenas);
    free(w->heaps);
    free(w->chunks);
    free(w);
}
