/* cw_mem.c - the target's address space as a sorted list of segments.
 *
 * Both sources (an ELF core, a stopped process) become the same thing: a
 * list of mappings with the bytes that could be read.  Every read of the
 * target goes through cw_mem_read(), which fails (returns -1) instead of
 * reading outside what was dumped, so that corrupt pointers found in the
 * heap never crash the walker.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cw.h"

/* Returns the segment containing `addr`, or NULL (binary search). */
const cw_seg_t *cw_mem_seg(const cw_core_t *c, uint64_t addr)
{
    size_t lo = 0, hi = c->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cw_seg_t *s = &c->segs[mid];
        if (addr < s->start)
            hi = mid;
        else if (addr >= s->end)
            lo = mid + 1;
        else
            return s;
    }
    return NULL;
}

/* Copies n bytes at addr into out; 0 on success, -1 if any byte is
 * unmapped or was not dumped.  Reads may span adjacent segments. */
int cw_mem_read(const cw_core_t *c, uint64_t addr, void *out, size_t n)
{
    uint8_t *o = out;
    while (n > 0) {
        const cw_seg_t *s = cw_mem_seg(c, addr);
        if (!s || !s->data)
            return -1;
        uint64_t off = addr - s->start;
        if (off >= s->datalen)
            return -1;
        uint64_t can = s->datalen - off;
        size_t k = n < can ? n : (size_t)can;
        memcpy(o, s->data + off, k);
        o += k;
        addr += k;
        n -= k;
    }
    return 0;
}

/* The lowest address >= addr whose byte was dumped, or UINT64_MAX: lets a
 * scan jump over holes (a segment's undumped tail, unmapped gaps) instead
 * of failing word by word over a range a corrupt core makes terabytes long. */
uint64_t cw_mem_next_dumped(const cw_core_t *c, uint64_t addr)
{
    size_t lo = 0, hi = c->nsegs; /* first segment with end > addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->segs[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < c->nsegs; i++) {
        const cw_seg_t *s = &c->segs[i];
        uint64_t a = addr > s->start ? addr : s->start;
        if (s->data && a - s->start < s->datalen)
            return a;
    }
    return UINT64_MAX;
}

/* How many bytes from addr on can be read from its segment alone (0 when
 * addr is unmapped or not dumped): lets a scan read in blocks that never
 * fail instead of retrying a failing block word by word. */
uint64_t cw_mem_avail(const cw_core_t *c, uint64_t addr)
{
    const cw_seg_t *s = cw_mem_seg(c, addr);
    if (!s || !s->data || addr - s->start >= s->datalen)
        return 0;
    return s->datalen - (addr - s->start);
}

int cw_mem_u64(const cw_core_t *c, uint64_t addr, uint64_t *out)
{
    return cw_mem_read(c, addr, out, 8);
}

/* Appends a copy of *s; 0 or -1 (out of memory). */
int cw_mem_add_seg(cw_core_t *c, const cw_seg_t *s)
{
    if ((c->nsegs & (c->nsegs - 1)) == 0) {
        size_t cap = c->nsegs ? c->nsegs * 2 : 16;
        cw_seg_t *n = realloc(c->segs, cap * sizeof *n);
        if (!n)
            return -1;
        c->segs = n;
    }
    c->segs[c->nsegs++] = *s;
    return 0;
}

static int seg_cmp(const void *a, const void *b)
{
    const cw_seg_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorts the segments and drops empty or overlapping ones (a corrupt core
 * may list them; the first one wins). */
void cw_mem_sort(cw_core_t *c)
{
    if (c->nsegs) /* segs is NULL when there is none */
        qsort(c->segs, c->nsegs, sizeof *c->segs, seg_cmp);
    size_t k = 0;
    for (size_t i = 0; i < c->nsegs; i++) {
        if (c->segs[i].end <= c->segs[i].start)
            continue;
        if (k && c->segs[i].start < c->segs[k - 1].end)
            continue;
        c->segs[k++] = c->segs[i];
    }
    c->nsegs = k;
}

/* Returns a copy of path owned by c (NULL when out of memory). */
const char *cw_mem_intern(cw_core_t *c, const char *path)
{
    for (size_t i = 0; i < c->npaths; i++)
        if (!strcmp(c->paths[i], path))
            return c->paths[i];
    char **n = realloc(c->paths, (c->npaths + 1) * sizeof *n);
    if (!n)
        return NULL;
    c->paths = n;
    char *p = strdup(path);
    if (!p)
        return NULL;
    c->paths[c->npaths++] = p;
    return p;
}

void cw_core_close(cw_core_t *c)
{
    if (!c)
        return;
    if (c->live)
        for (size_t i = 0; i < c->nsegs; i++)
            free((void *)c->segs[i].data);
    for (size_t i = 0; i < c->npaths; i++)
        free(c->paths[i]);
    free(c->paths);
    free(c->segs);
    free(c->threads);
    if (c->own_buf == 1)
        free(c->buf);
    else if (c->own_buf == 2)
        munmap(c->buf, c->len);
    free(c);
}
