/* cw_frag.c - fragmentation figures of a walk.
 *
 * Free means free for the allocator: tcache, fastbin, unsorted, small and
 * large bin chunks and the top chunks.  fragmentation = 1 - largest/total
 * over those; the histogram leaves the tops out (they are not holes).
 * Pinned memory: in each heap, the free bytes (tops excluded) below the
 * highest live chunk (in use, or a tcache struct), which trimming cannot
 * give back while that chunk lives; the chunk is named.
 */
#include <stdlib.h>
#include <string.h>

#include "cw.h"

static int is_free(int k)
{
    return k == CW_TCACHE || k == CW_FASTBIN || k == CW_UNSORTED || k == CW_SMALLBIN ||
           k == CW_LARGEBIN || k == CW_TOP;
}

/* Fills f (arrays owned by f: cw_frag_free). */
void cw_frag_compute(const cw_walk_t *w, cw_frag_t *f)
{
    memset(f, 0, sizeof *f);
    size_t nh = w->nheaps ? w->nheaps : 1;
    f->pinned_bytes = calloc(nh, sizeof *f->pinned_bytes);
    f->pin_addr = calloc(nh, sizeof *f->pin_addr);
    f->pin_size = calloc(nh, sizeof *f->pin_size);
    for (size_t i = 0; i < w->narenas; i++)
        f->footprint += w->arenas[i].system_mem;
    for (size_t i = 0; i < w->nchunks; i++) {
        const cw_chunk_t *c = &w->chunks[i];
        f->free_by_class[c->cls] += c->size;
        if (c->cls == CW_MMAPPED)
            f->footprint += c->size;
        if (!is_free(c->cls)) {
            f->inuse_bytes += c->size;
            if (c->heap >= 0 && f->pin_addr && c->addr >= f->pin_addr[c->heap]) {
                f->pin_addr[c->heap] = c->addr;
                f->pin_size[c->heap] = c->size;
            }
            continue;
        }
        f->total_free += c->size;
        if (c->size > f->largest_free)
            f->largest_free = c->size;
        if (c->cls != CW_TOP) {
            int b = 0;
            while (b < 39 && (2ull << b) <= c->size)
                b++;
            f->hist[b]++;
            f->hist_bytes[b] += c->size;
        }
    }
    if (!f->pinned_bytes || !f->pin_addr)
        return;
    for (size_t i = 0; i < w->nchunks; i++) {
        const cw_chunk_t *c = &w->chunks[i];
        if (c->heap >= 0 && is_free(c->cls) && c->cls != CW_TOP && c->addr < f->pin_addr[c->heap])
            f->pinned_bytes[c->heap] += c->size;
    }
}

void cw_frag_free(cw_frag_t *f)
{
    free(f->pinned_bytes);
    free(f->pin_addr);
    free(f->pin_size);
}
