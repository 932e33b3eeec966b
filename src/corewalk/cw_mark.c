/* cw_mark.c - leak candidates by a conservative mark, like Valgrind's
 * memcheck leak check but on a dead heap.
 *
 * Candidates: chunks in use (and mmapped chunks); tcache structs and free
 * chunks are allocator state, neither candidates nor scanned.
 * Roots: every thread's registers; each thread's stack from its stack
 * pointer to the end of that mapping (which also holds its TLS and struct
 * pthread for threads other than the main one); every other writable
 * mapping that is not allocator memory (modules' .data/.bss, the main
 * thread's static TLS block, anonymous mappings), minus main_arena and mp_.
 * Any 8-aligned word that points into a candidate's user memory (interior
 * pointers included) marks it; marked chunks are scanned in turn.
 * Unreachable chunks are then split like Valgrind does: walking from each
 * still-unclaimed unreachable chunk in address order, the chunks it reaches
 * are "indirect"; the chunk itself is "direct" (definitely lost) unless a
 * later one reaches it.  So a cycle of two lost blocks gives one of each.
 */
#include <stdlib.h>
#include <string.h>

#include "cw.h"

typedef struct mark_ctx {
    cw_walk_t *w;
    size_t *stack;
    size_t n, cap;
    uint64_t lo, hi;
} mark_ctx_t;

static int candidate(const cw_chunk_t *c)
{
    return c->cls == CW_INUSE || c->cls == CW_MMAPPED;
}

static void push(mark_ctx_t *m, size_t i)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        size_t *s = realloc(m->stack, cap * sizeof *s);
        if (!s)
            return;
        m->stack = s;
        m->cap = cap;
    }
    m->stack[m->n++] = i;
}

/* The candidate whose user memory holds v, or NULL. */
static cw_chunk_t *target(const mark_ctx_t *m, uint64_t v)
{
    if (v < m->lo || v >= m->hi)
        return NULL;
    cw_chunk_t *c = cw_chunks_containing(m->w, v);
    if (!c || !candidate(c) || v < c->addr + 16)
        return NULL;
    return c;
}

/* Marks (as `state`) every candidate in state `from` that a word of
 * [a, b) points into, pushing it for a later scan. */
static void scan_range(mark_ctx_t *m, uint64_t a, uint64_t b, int from, int state)
{
    a = (a + 7) & ~7ull;
    uint64_t buf[512];
    while (a + 8 <= b) {
        size_t n = (size_t)((b - a) / 8);
        if (n > 512)
            n = 512;
        if (cw_mem_read(m->w->core, a, buf, n * 8)) {
            /* partly dumped: go word by word, jumping over holes */
            n = 1;
            if (cw_mem_u64(m->w->core, a, buf)) {
                uint64_t next = cw_mem_next_dumped(m->w->core, a + 8);
                if (next >= b || next == UINT64_MAX)
                    return;
                a = (next + 7) & ~7ull;
                continue;
            }
        }
        for (size_t i = 0; i < n; i++) {
            cw_chunk_t *c = target(m, buf[i]);
            if (c && c->leak == from) {
                c->leak = (uint8_t)state;
                push(m, (size_t)(c - m->w->chunks));
            }
        }
        a += n * 8;
    }
}

static void drain(mark_ctx_t *m, int from, int state)
{
    while (m->n) {
        cw_chunk_t *c = &m->w->chunks[m->stack[--m->n]];
        scan_range(m, c->addr + 16, c->addr + c->size, from, state);
    }
}

static void scan_roots(mark_ctx_t *m)
{
    cw_walk_t *w = m->w;
    const cw_core_t *c = w->core;
    for (size_t t = 0; t < c->nthreads; t++)
        for (int r = 0; r < CW_NREGS; r++) {
            cw_chunk_t *ch = target(m, c->threads[t].regs[r]);
            if (ch && ch->leak == CW_LEAK_NONE) {
                ch->leak = CW_LEAK_REACHABLE;
                push(m, (size_t)(ch - w->chunks));
            }
        }
    for (size_t i = 0; i < c->nsegs; i++) {
        const cw_seg_t *s = &c->segs[i];
        if (s->role != CW_ROLE_OTHER || !(s->flags & CW_SEG_W) || !s->data)
            continue;
        uint64_t from = s->start;
        for (size_t t = 0; t < c->nthreads; t++) {
            uint64_t sp = c->threads[t].regs[CW_REG_RSP];
            if (sp >= s->start && sp < s->end)
                from = sp;
        }
        uint64_t ma = w->lay.main_arena, me = ma + CW_MSTATE_SIZE;
        if (ma >= from && me <= s->end) {
            scan_range(m, from, ma, CW_LEAK_NONE, CW_LEAK_REACHABLE);
            scan_range(m, me, s->end, CW_LEAK_NONE, CW_LEAK_REACHABLE);
        } else {
            scan_range(m, from, s->end, CW_LEAK_NONE, CW_LEAK_REACHABLE);
        }
        drain(m, CW_LEAK_NONE, CW_LEAK_REACHABLE);
    }
    drain(m, CW_LEAK_NONE, CW_LEAK_REACHABLE);
}

/* Walks the lost chunks reachable from leader li: unclaimed ones and
 * earlier leaders become indirect (Valgrind's clique rule). */
static void clique(mark_ctx_t *m, size_t li)
{
    cw_chunk_t *leader = &m->w->chunks[li];
    push(m, li);
    while (m->n) {
        cw_chunk_t *x = &m->w->chunks[m->stack[--m->n]];
        for (uint64_t a = x->addr + 16; a + 8 <= x->addr + x->size; a += 8) {
            uint64_t v;
            if (cw_mem_u64(m->w->core, a, &v))
                break;
            cw_chunk_t *t = target(m, v);
            if (!t || t == leader)
                continue;
            if (t->leak == CW_LEAK_NONE) {
                t->leak = CW_LEAK_INDIRECT;
                push(m, (size_t)(t - m->w->chunks));
            } else if (t->leak == CW_LEAK_DIRECT) {
                t->leak = CW_LEAK_INDIRECT;
            }
        }
    }
}

/* Marks every chunk's `leak` and counts the outcome into out. */
void cw_mark_run(cw_walk_t *w, cw_leaks_t *out)
{
    memset(out, 0, sizeof *out);
    mark_ctx_t m = {w, NULL, 0, 0, UINT64_MAX, 0};
    for (size_t i = 0; i < w->nchunks; i++) {
        w->chunks[i].leak = CW_LEAK_NONE;
        if (candidate(&w->chunks[i])) {
            if (w->chunks[i].addr < m.lo)
                m.lo = w->chunks[i].addr;
            if (w->chunks[i].addr + w->chunks[i].size > m.hi)
                m.hi = w->chunks[i].addr + w->chunks[i].size;
        }
    }
    scan_roots(&m);
    for (size_t i = 0; i < w->nchunks; i++) {
        cw_chunk_t *c = &w->chunks[i];
        if (!candidate(c) || c->leak != CW_LEAK_NONE)
            continue;
        c->leak = CW_LEAK_DIRECT;
        clique(&m, i);
    }
    for (size_t i = 0; i < w->nchunks; i++) {
        const cw_chunk_t *c = &w->chunks[i];
        if (c->leak == CW_LEAK_REACHABLE)
            out->reachable++;
        else if (c->leak == CW_LEAK_DIRECT) {
            out->direct++;
            out->direct_bytes += c->size;
        } else if (c->leak == CW_LEAK_INDIRECT) {
            out->indirect++;
            out->indirect_bytes += c->size;
        }
    }
    free(m.stack);
}

/* Names what a leaked chunk's first word points at: "vtable for ns::C"
 * when it is inside a _ZTV symbol of a mapped module, else "". */
void cw_mark_label(const cw_walk_t *w, uint64_t first_word, char *out, size_t outsz)
{
    out[0] = 0;
    const cw_seg_t *s = cw_mem_seg(w->core, first_word);
    uint64_t bias;
    char sym[512], dem[512];
    if (!s || !s->path || cw_syms_bias(w->core, s->path, &bias) ||
        cw_syms_name_at(s->path, first_word - bias, sym, sizeof sym) || strncmp(sym, "_ZTV", 4))
        return;
    cw_demangle_vtable(sym, dem, sizeof dem);
    snprintf(out, outsz, "vtable for %s", dem);
}
