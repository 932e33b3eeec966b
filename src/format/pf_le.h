/* pf_le.h - the little-endian 16- and 32-bit fields of a profile's header
 * and record framing (docs/FORMAT.md, "Framing"), read and written byte by
 * byte whatever the host's order.  Shared by the writer, the reader, the
 * packer and the fuzzer. */
#ifndef PF_LE_H
#define PF_LE_H

#include <stdint.h>

static inline uint32_t pf_le16(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8;
}

static inline uint32_t pf_le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline void pf_put_le32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}

#endif
