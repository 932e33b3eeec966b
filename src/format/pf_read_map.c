/* pf_read_map.c - the (u64, u64) -> u32 hash map of pf_read_map.h.
 *
 * Linear probing over a power-of-two table kept at most half full.  The
 * seed comes from the map's own address (randomised by ASLR), so a crafted
 * profile cannot predict collisions; output never depends on the hash
 * because nobody iterates the map.
 */
#include "format/pf_read_map.h"

#include <stdlib.h>

static uint64_t pf_map_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static size_t pf_map_hash(const pf_map_t *m, uint64_t a, uint64_t b)
{
    return (size_t)pf_map_mix(pf_map_mix(a ^ m->seed) + b);
}

void pf_map_init(pf_map_t *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->len = 0;
    m->seed = pf_map_mix((uint64_t)(uintptr_t)m ^ 0x9e3779b97f4a7c15ull);
}

int pf_map_get(const pf_map_t *m, uint64_t a, uint64_t b, uint32_t *value)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = pf_map_hash(m, a, b) & mask;; i = (i + 1) & mask) {
        const pf_map_slot_t *s = &m->slots[i];
        if (!s->used)
            return 0;
        if (s->a == a && s->b == b) {
            *value = s->value;
            return 1;
        }
    }
}

/* Put without growing; the table must have a free slot. */
static void pf_map_place(pf_map_t *m, uint64_t a, uint64_t b, uint32_t value)
{
    size_t mask = m->cap - 1;
    for (size_t i = pf_map_hash(m, a, b) & mask;; i = (i + 1) & mask) {
        pf_map_slot_t *s = &m->slots[i];
        if (!s->used) {
            s->a = a;
            s->b = b;
            s->value = value;
            s->used = 1;
            m->len++;
            return;
        }
        if (s->a == a && s->b == b) {
            s->value = value;
            return;
        }
    }
}

/* Double the table (or create it).  Returns 0 or -1 when out of memory. */
static int pf_map_grow(pf_map_t *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    if (ncap < m->cap || ncap > SIZE_MAX / sizeof(pf_map_slot_t))
        return -1;
    pf_map_slot_t *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return -1;
    pf_map_slot_t *old = m->slots;
    size_t ocap = m->cap;
    m->slots = ns;
    m->cap = ncap;
    m->len = 0;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].used)
            pf_map_place(m, old[i].a, old[i].b, old[i].value);
    free(old);
    return 0;
}

int pf_map_put(pf_map_t *m, uint64_t a, uint64_t b, uint32_t value)
{
    if ((m->len + 1) * 2 > m->cap && pf_map_grow(m))
        return -1;
    pf_map_place(m, a, b, value);
    return 0;
}

void pf_map_free(pf_map_t *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = 0;
    m->len = 0;
}
