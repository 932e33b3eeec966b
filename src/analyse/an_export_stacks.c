/* an_export_stacks.c - the cost figures of the exports and a string
 * interning table (an_export.h, an_export_stacks.h). */
#include "analyse/an_export_stacks.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/an_export.h"
#include "common/ut_grow.h"

static const char *const an_export_cost_names[AN_EXPORT_NCOSTS] = {
    "allocations", "bytes", "leaked", "peak", "temporary",
};

const char *an_export_cost_name(an_export_cost_t c)
{
    return c < AN_EXPORT_NCOSTS ? an_export_cost_names[c] : "?";
}

int an_export_cost_parse(const char *s, an_export_cost_t *c)
{
    for (int i = 0; s && i < AN_EXPORT_NCOSTS; i++)
        if (!strcmp(s, an_export_cost_names[i])) {
            *c = (an_export_cost_t)i;
            return 0;
        }
    return -1;
}

const char *an_export_cost_unit(an_export_cost_t c)
{
    return c == AN_EXPORT_ALLOCATIONS || c == AN_EXPORT_TEMPORARY ? "count" : "bytes";
}

uint64_t an_export_cost_of(const an_stats_t *s, an_export_cost_t c)
{
    switch (c) {
    case AN_EXPORT_ALLOCATIONS: return s->allocations;
    case AN_EXPORT_BYTES: return s->bytes_allocated;
    case AN_EXPORT_LEAKED: return s->leaked_bytes;
    case AN_EXPORT_PEAK: return s->peak_bytes;
    case AN_EXPORT_TEMPORARY: return s->temporary;
    default: return 0;
    }
}

const char *an_export_basename(const char *path)
{
    if (!path)
        return "";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* FNV-1a over the bytes. */
static uint64_t an_xintern_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Double the hash index (and rehash every string).  Returns 0 or -1. */
static int an_xintern_grow(an_xintern_t *t)
{
    size_t cap = t->hash_cap ? t->hash_cap * 2 : 256;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        /* strings are stored with their length in front (see add) */
        size_t len;
        memcpy(&len, t->strs[i] - sizeof len, sizeof len);
        size_t k = an_xintern_hash(t->strs[i], len) & (cap - 1);
        while (h[k])
            k = (k + 1) & (cap - 1);
        h[k] = (uint32_t)i + 1;
    }
    free(t->hash);
    t->hash = h;
    t->hash_cap = cap;
    return 0;
}

uint32_t an_xintern_add(an_xintern_t *t, const char *s, size_t len, int *added)
{
    if (added)
        *added = 0;
    if ((t->n + 1) * 2 > t->hash_cap && an_xintern_grow(t))
        return UINT32_MAX;
    if (t->n >= UINT32_MAX - 1)
        return UINT32_MAX;
    size_t k = an_xintern_hash(s, len) & (t->hash_cap - 1);
    for (; t->hash[k]; k = (k + 1) & (t->hash_cap - 1)) {
        const char *c = t->strs[t->hash[k] - 1];
        size_t clen;
        memcpy(&clen, c - sizeof clen, sizeof clen);
        if (clen == len && !memcmp(c, s, len))
            return t->hash[k] - 1;
    }
    if (ut_grow((void **)&t->strs, &t->cap, t->n + 1, sizeof *t->strs))
        return UINT32_MAX;
    /* [size_t len][bytes][NUL]: the length makes embedded NULs safe */
    char *mem = malloc(sizeof len + len + 1);
    if (!mem)
        return UINT32_MAX;
    memcpy(mem, &len, sizeof len);
    memcpy(mem + sizeof len, s, len);
    mem[sizeof len + len] = '\0';
    t->strs[t->n] = mem + sizeof len;
    t->hash[k] = (uint32_t)t->n + 1;
    if (added)
        *added = 1;
    return (uint32_t)t->n++;
}

uint32_t an_xintern_str(an_xintern_t *t, const char *s)
{
    if (!s)
        s = "";
    return an_xintern_add(t, s, strlen(s), NULL);
}

void an_xintern_free(an_xintern_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i] - sizeof(size_t));
    free(t->strs);
    free(t->hash);
    memset(t, 0, sizeof *t);
}
