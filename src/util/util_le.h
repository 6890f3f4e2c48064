/* SPDX-License-Identifier: MIT */
/*
 * util_le.h - little-endian loads and stores at any alignment, for parsers of binary formats
 * (cubin ELF in src/gpu and src/emu). Byte by byte, so they are correct on any host and never
 * make an unaligned access. Layer: util.
 */
#ifndef UTIL_LE_H
#define UTIL_LE_H

#include <stdint.h>

static inline uint16_t
util_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
util_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
util_le64(const uint8_t *p)
{
    return (uint64_t)util_le32(p) | (uint64_t)util_le32(p + 4) << 32;
}

static inline void
util_le32_put(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
util_le64_put(uint8_t *p, uint64_t v)
{
    util_le32_put(p, (uint32_t)v);
    util_le32_put(p + 4, (uint32_t)(v >> 32));
}

#endif /* UTIL_LE_H */
