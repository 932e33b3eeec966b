/* cw_chunks.c - the walk's chunk table (sorted by address) and its problem
 * list: corruption met during the walk is recorded here, never asserted. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cw.h"

const char *cw_class_name(cw_class_t k)
{
    static const char *n[CW_NCLASS] = {"in_use", "tcache", "fastbin", "unsorted", "smallbin",
                                       "largebin", "top", "tcache_struct", "mmapped"};
    return k < CW_NCLASS ? n[k] : "?";
}

/* Appends a chunk; 0 or -1 (out of memory, recorded as a problem). */
int cw_chunks_add(cw_walk_t *w, uint64_t addr, uint64_t size, cw_class_t k, int arena, int heap)
{
    if (w->nchunks == w->capchunks) {
        size_t cap = w->capchunks ? w->capchunks * 2 : 1024;
        cw_chunk_t *n = realloc(w->chunks, cap * sizeof *n);
        if (!n)
            return -1;
        w->chunks = n;
        w->capchunks = cap;
    }
    cw_chunk_t *c = &w->chunks[w->nchunks++];
    memset(c, 0, sizeof *c);
    c->addr = addr;
    c->size = size;
    c->cls = (uint8_t)k;
    c->arena = (int16_t)arena;
    c->heap = heap;
    return 0;
}

static int chunk_cmp(const void *a, const void *b)
{
    const cw_chunk_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void cw_chunks_sort(cw_walk_t *w)
{
    if (w->nchunks) /* chunks is NULL when none was found: qsort(NULL, 0) is undefined */
        qsort(w->chunks, w->nchunks, sizeof *w->chunks, chunk_cmp);
}

/* The chunk whose header is at addr, or NULL. */
cw_chunk_t *cw_chunks_find(const cw_walk_t *w, uint64_t addr)
{
    cw_chunk_t *c = cw_chunks_containing(w, addr);
    return c && c->addr == addr ? c : NULL;
}

/* The chunk whose [addr, addr + size) contains a, or NULL. */
cw_chunk_t *cw_chunks_containing(const cw_walk_t *w, uint64_t a)
{
    size_t lo = 0, hi = w->nchunks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        cw_chunk_t *c = &w->chunks[mid];
        if (a < c->addr)
            hi = mid;
        else if (a >= c->addr + c->size)
            lo = mid + 1;
        else
            return c;
    }
    return NULL;
}

/* Records one corruption/oddity message (printf format); capped at 1000. */
void cw_walk_problem(cw_walk_t *w, const char *fmt, ...)
{
    if (w->nproblems >= 1000)
        return;
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **n = realloc(w->problems, (w->nproblems + 1) * sizeof *n);
    if (!n)
        return;
    w->problems = n;
    w->problems[w->nproblems] = strdup(buf);
    if (w->problems[w->nproblems])
        w->nproblems++;
}
