/* cw_mark.c - leak candidates by a conservative mark, like Valgrind's
 * memcheck leak check but on a dead heap.
 *
 * Candidates: chunks in use (and mmapped chunks); tcache structs and free
 * chunks are allocator state, neither candidates nor scanned.
 * Roots: every thread's registers; each thread's stack from its stack
 * pointer to the end of that mapping (which also holds its TLS and struct
 * pthread for threads other than the main one); every other writable
 * mapping that is not allocator memory (modules' .data/.bss, the main
 * thread's static TLS block, anonymous mappings), minus main_arena and mp_
 * (136 bytes from glibc 2.35, 112 before).
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

/* Reads the words of [a, b) (a 8-aligned) block by block into buf (512
 * words) and hands each block to visit; a word that is not dumped is
 * skipped: with `stop_at_hole` the walk ends there (a chunk's contents),
 * else it jumps to the next dumped byte (a root range, which a corrupt core
 * can make terabytes long).  Never fails a read: blocks stop at the end of
 * what their segment dumped. */
static void each_block(mark_ctx_t *m, uint64_t a, uint64_t b, int stop_at_hole,
                       void (*visit)(mark_ctx_t *, const uint64_t *, size_t, void *), void *arg)
{
    const cw_core_t *core = m->w->core;
    uint64_t buf[512];
    while (a < b && b - a >= 8) {
        uint64_t n = (b - a) / 8, avail = cw_mem_avail(core, a) / 8;
        if (n > 512)
            n = 512;
        if (avail) {
            if (n > avail)
                n = avail;
            cw_mem_read(core, a, buf, (size_t)n * 8);
        } else if (!cw_mem_u64(core, a, buf)) { /* a word across two segments */
            n = 1;
        } else {
            if (stop_at_hole)
                return;
            uint64_t next = cw_mem_next_dumped(core, a + 8);
            if (next >= b || next > UINT64_MAX - 7)
                return;
            a = (next + 7) & ~7ull;
            continue;
        }
        visit(m, buf, (size_t)n, arg);
        a += n * 8;
    }
}

/* Marks (as `state`) every candidate in state `from` that a word of the
 * block points into, pushing it for a later scan. */
struct mark_arg { int from, state; };
static void mark_block(mark_ctx_t *m, const uint64_t *v, size_t n, void *arg)
{
    const struct mark_arg *ma = arg;
    for (size_t i = 0; i < n; i++) {
        cw_chunk_t *c = target(m, v[i]);
        if (c && c->leak == ma->from) {
            c->leak = (uint8_t)ma->state;
            push(m, (size_t)(c - m->w->chunks));
        }
    }
}

static void scan_range(mark_ctx_t *m, uint64_t a, uint64_t b, int from, int state)
{
    struct mark_arg ma = {from, state};
    if (a <= UINT64_MAX - 7)
        each_block(m, (a + 7) & ~7ull, b, 0, mark_block, &ma);
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
        /* allocator state is not a root: main_arena (its bins point at
         * free chunks) and mp_ (sbrk_base) are cut out of the range */
        uint64_t cut[2][2] = {{w->lay.main_arena, w->lay.main_arena + CW_MSTATE_SIZE},
                              {w->lay.mp, w->lay.mp ? w->lay.mp + (w->lay.mp_hp_fields ? 136 : 112) : 0}};
        if (cut[1][0] < cut[0][0]) {
            uint64_t t0 = cut[0][0], t1 = cut[0][1];
            cut[0][0] = cut[1][0], cut[0][1] = cut[1][1], cut[1][0] = t0, cut[1][1] = t1;
        }
        uint64_t a = from;
        for (int k = 0; k < 2; k++) {
            if (!cut[k][0] || cut[k][1] <= a || cut[k][0] >= s->end)
                continue;
            if (cut[k][0] > a)
                scan_range(m, a, cut[k][0], CW_LEAK_NONE, CW_LEAK_REACHABLE);
            a = cut[k][1];
        }
        if (a < s->end)
            scan_range(m, a, s->end, CW_LEAK_NONE, CW_LEAK_REACHABLE);
        drain(m, CW_LEAK_NONE, CW_LEAK_REACHABLE);
    }
    drain(m, CW_LEAK_NONE, CW_LEAK_REACHABLE);
}

/* Clique step over one block of a lost chunk's words: unclaimed lost
 * chunks become indirect (and are walked), earlier leaders indirect. */
static void clique_block(mark_ctx_t *m, const uint64_t *v, size_t n, void *arg)
{
    const cw_chunk_t *leader = arg;
    for (size_t i = 0; i < n; i++) {
        cw_chunk_t *t = target(m, v[i]);
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

/* Walks the lost chunks reachable from leader li: unclaimed ones and
 * earlier leaders become indirect (Valgrind's clique rule).  A chunk's
 * words are read up to the first one not dumped. */
static void clique(mark_ctx_t *m, size_t li)
{
    cw_chunk_t *leader = &m->w->chunks[li];
    push(m, li);
    while (m->n) {
        cw_chunk_t *x = &m->w->chunks[m->stack[--m->n]];
        each_block(m, x->addr + 16, x->addr + x->size, 1, clique_block, leader);
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
        cw_syms_name_at(w->core, s->path, first_word - bias, sym, sizeof sym) || strncmp(sym, "_ZTV", 4))
        return;
    cw_demangle_vtable(sym, dem, sizeof dem);
    snprintf(out, outsz, "vtable for %s", dem);
}
