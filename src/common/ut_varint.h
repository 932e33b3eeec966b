/* ut_varint.h - LEB128 varints and the FNV-1a check used by the profile
 * format (docs/FORMAT.md).  Header-only so that both the collector (which
 * must not allocate) and the analyser share one definition.
 *
 * Encoders write into a caller-provided buffer of at least UT_VARINT_MAX
 * bytes and return the number of bytes written.  Decoders never read past
 * `end`; they return 0 on success and -1 on a truncated or over-long varint.
 */
#ifndef UT_VARINT_H
#define UT_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define UT_VARINT_MAX 10

static inline size_t ut_varint_put(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static inline uint64_t ut_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t ut_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Decode one unsigned varint at *p (advanced on success). */
static inline int ut_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    const uint8_t *s = *p;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (s >= end)
            return -1;
        uint8_t b = *s++;
        if (shift == 63 && b > 1)
            return -1; /* does not fit in 64 bits */
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *p = s;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* FNV-1a 32-bit, continued from `h` (start with UT_FNV32_INIT). */
#define UT_FNV32_INIT 0x811c9dc5u
static inline uint32_t ut_fnv32(uint32_t h, const void *data, size_t len)
{
    const uint8_t *b = data;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x01000193u;
    }
    return h;
}

#endif
