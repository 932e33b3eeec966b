/* pf_check.h - the check word that ends every record of a profile
 * (docs/FORMAT.md, "Framing"), shared by the writer, the reader and the
 * fuzzer.
 *
 * Since format 2.0 it is XXH32 (libxxhash, compiled in: XXH_INLINE_ALL,
 * so the preload library gains no dependency) of the payload, seeded with
 * the record type: about 10x faster than 1.x's byte-serial FNV-1a, which
 * was 40% of writing a binary-trees profile (65,535 stacks, 2.5 MB) at
 * exit.  A 1.x profile (FNV-1a 32 over the 4 type bytes, then the
 * payload) is still read. */
#ifndef PF_CHECK_H
#define PF_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/ut_varint.h"

/* The check of a record of `type` with payload p[len], in a profile of
 * format version `major`. */
static inline uint32_t pf_check(unsigned major, uint32_t type, const void *p, size_t len)
{
    if (major >= 2)
        return (uint32_t)XXH32(p, len, type);
    uint8_t t[4] = {(uint8_t)type, (uint8_t)(type >> 8), (uint8_t)(type >> 16),
                    (uint8_t)(type >> 24)};
    return ut_fnv32(ut_fnv32(UT_FNV32_INIT, t, 4), p, len);
}

#endif
