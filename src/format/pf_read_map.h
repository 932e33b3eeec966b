/* pf_read_map.h - a small open-addressing hash map from a pair of 64-bit
 * keys to a 32-bit value.
 *
 * Used by the reader (stack ids, (stack id, size) counter keys) and by the
 * analyser (symbol cache per address).  Keys come from untrusted files, so
 * the hash is seeded per map and mixes every bit; growth keeps the load
 * factor at or below 1/2 so probing always ends.
 */
#ifndef PF_READ_MAP_H
#define PF_READ_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pf_map_slot {
    uint64_t a;
    uint64_t b;
    uint32_t value;
    uint32_t used;
} pf_map_slot_t;

typedef struct pf_map {
    pf_map_slot_t *slots;
    size_t cap;            /* power of two, or 0 before the first insert */
    size_t len;
    uint64_t seed;
} pf_map_t;

/* Start an empty map (no allocation until the first insert). */
void pf_map_init(pf_map_t *m);

/* Look up (a, b).  Returns 1 and sets *value when present, else 0. */
int pf_map_get(const pf_map_t *m, uint64_t a, uint64_t b, uint32_t *value);

/* Insert or overwrite (a, b) -> value.  Returns 0, or -1 when out of
 * memory (the map is unchanged then). */
int pf_map_put(pf_map_t *m, uint64_t a, uint64_t b, uint32_t value);

/* Release the map's memory; it is empty and reusable afterwards. */
void pf_map_free(pf_map_t *m);

#endif
