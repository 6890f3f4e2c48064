/* SPDX-License-Identifier: MIT */
/*
 * ops_half.c - f16 / bf16 <-> f32 conversions (see ops_half.h). Layer: ops.
 * Bit layouts (IEEE 754-2008): f32 = 1 sign, 8 exponent (bias 127), 23 mantissa;
 * f16 = 1, 5 (bias 15), 10; bf16 = the top 16 bits of an f32.
 */
#include "ops_half.h"

#include <string.h>

static uint32_t
ops_half_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float
ops_half_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Shift m right by s (1..31) rounding to nearest, ties to even. */
static uint32_t
ops_half_shift_rne(uint32_t m, uint32_t s)
{
    uint32_t r = m >> s, rem = m & ((1u << s) - 1), halfway = 1u << (s - 1);
    if (rem > halfway || (rem == halfway && (r & 1)))
        r++;
    return r;
}

uint16_t
ops_half_f32_to_f16(float x)
{
    const uint32_t u = ops_half_bits(x);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: quiet bit + what fits of the payload */
        return (uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x3ff));
    /* 0x477ff000 = 65520, halfway between f16's largest finite 65504 (odd mantissa
     * 0x3ff) and 65536: ties go to the even neighbour, which is Inf */
    if (a >= 0x477ff000u)
        return (uint16_t)(sign | 0x7c00);
    if (a < 0x38800000u) { /* below 2^-14, f16's smallest normal: f16 subnormal or 0 */
        const uint32_t e = a >> 23;
        /* value = m * 2^(e - 150); in units of 2^-24 that is m >> (126 - e) */
        if (e < 102) /* < 2^-25: rounds to 0 (the tie 2^-25 itself is e == 102) */
            return sign;
        const uint32_t m = (a & 0x7fffffu) | 0x800000u;
        return (uint16_t)(sign | ops_half_shift_rne(m, 126 - e)); /* may carry to 0x400 */
    }
    /* normal: rebias the exponent (127 -> 15) and round 23 -> 10 mantissa bits; a
     * carry out of the mantissa correctly bumps the exponent */
    const uint32_t r = ((a >> 23) - 112) << 10 | ((a & 0x7fffffu) >> 13);
    const uint32_t rem = a & 0x1fffu;
    return (uint16_t)(sign | (r + (rem > 0x1000u || (rem == 0x1000u && (r & 1)))));
}

float
ops_half_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    const uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
    if (e == 0x1f) /* Inf, NaN (payload kept, so NaN stays NaN) */
        return ops_half_float(sign | 0x7f800000u | (m << 13));
    if (e == 0) { /* zero or subnormal: m * 2^-24, exact in f32 */
        const float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    return ops_half_float(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t
ops_half_f32_to_bf16(float x)
{
    const uint32_t u = ops_half_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: truncate, force the quiet bit */
        return (uint16_t)((u >> 16) | 0x40);
    /* RNE on the low 16 bits; overflow of the largest finite values carries into the
     * exponent and gives Inf, as IEEE rounding requires */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

float
ops_half_bf16_to_f32(uint16_t h)
{
    return ops_half_float((uint32_t)h << 16);
}
