/* SPDX-License-Identifier: MIT */
/*
 * gpu_bits.h - bit fields written once as NVIDIA-style "hi:lo" ranges (STYLE 2.6) and the
 * checked helpers that set and get them, in method data words and in QMDs.
 * Layer: gpu (pure, no syscalls).
 *
 * A field is defined the way docs/hw/rm.md quotes it (and NVIDIA's class headers spell it):
 *     #define NVC56F_SEM_EXECUTE_OPERATION 2:0
 * GPU_HI()/GPU_LO() pull the two numbers out with the conditional-operator idiom
 * ((1 ? 2:0) == 2, (0 ? 2:0) == 0), so a range is written once and read everywhere.
 * Array fields are function-like macros of the index returning a range.
 */
#ifndef GPU_BITS_H
#define GPU_BITS_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#define GPU_HI(range) (1 ? range)
#define GPU_LO(range) (0 ? range)
#define GPU_WIDTH(range) (GPU_HI(range) - GPU_LO(range) + 1)

/* Mask of `width` low bits, width 1..64. */
static inline uint64_t
gpu_bits_mask(unsigned width)
{
    return width >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);
}

/* True when v fits in bits hi..lo. */
static inline bool
gpu_bits_fit(unsigned hi, unsigned lo, uint64_t v)
{
    return (v & ~gpu_bits_mask(hi - lo + 1)) == 0;
}

/* Value v placed at bits hi..lo of a 32-bit method data word. Asserts that it fits
 * (an encoder bug otherwise, as in Mesa's generated packers). */
static inline uint32_t
gpu_bits_field32(unsigned hi, unsigned lo, uint64_t v)
{
    assert(hi < 32 && lo <= hi);
    assert(gpu_bits_fit(hi, lo, v));
    /* masked too, so an NDEBUG build cannot spill into the neighbouring fields */
    return (uint32_t)((v & gpu_bits_mask(hi - lo + 1)) << lo);
}

/* Bits hi..lo of a 32-bit word. */
static inline uint32_t
gpu_bits_get32(unsigned hi, unsigned lo, uint32_t word)
{
    return (uint32_t)((word >> lo) & gpu_bits_mask(hi - lo + 1));
}

/* Set bits hi..lo (absolute bit numbers, LSB = bit 0 of dword 0; dwords little-endian as in
 * docs/hw/rm.md header) of a dword array to v, clearing them first. A field may span
 * dwords; width up to 64. Asserts that v fits. */
static inline void
gpu_bits_set(uint32_t *dw, unsigned hi, unsigned lo, uint64_t v)
{
    assert(lo <= hi && hi - lo < 64);
    assert(gpu_bits_fit(hi, lo, v));
    unsigned bit = lo;
    while (bit <= hi) {
        unsigned idx = bit / 32, off = bit % 32;
        unsigned take = 32 - off;
        if (take > hi - bit + 1)
            take = hi - bit + 1;
        uint32_t m = (uint32_t)gpu_bits_mask(take) << off;
        dw[idx] = (dw[idx] & ~m) | ((uint32_t)(v << off) & m);
        v >>= take;
        bit += take;
    }
}

/* Bits hi..lo of a dword array (see gpu_bits_set). */
static inline uint64_t
gpu_bits_get(const uint32_t *dw, unsigned hi, unsigned lo)
{
    assert(lo <= hi && hi - lo < 64);
    uint64_t v = 0;
    unsigned bit = lo, shift = 0;
    while (bit <= hi) {
        unsigned idx = bit / 32, off = bit % 32;
        unsigned take = 32 - off;
        if (take > hi - bit + 1)
            take = hi - bit + 1;
        v |= (uint64_t)((dw[idx] >> off) & (uint32_t)gpu_bits_mask(take)) << shift;
        shift += take;
        bit += take;
    }
    return v;
}

/* Method data fields: GPU_FLD(NVC56F_SEM_EXECUTE_OPERATION, 1), or with a named value
 * GPU_FLD_DEF(NVC56F_SEM_EXECUTE, OPERATION, RELEASE) ->
 * GPU_FLD(NVC56F_SEM_EXECUTE_OPERATION, NVC56F_SEM_EXECUTE_OPERATION_RELEASE). */
#define GPU_FLD(range, v) gpu_bits_field32(GPU_HI(range), GPU_LO(range), (v))
#define GPU_FLD_DEF(mthd, field, name) GPU_FLD(mthd##_##field, mthd##_##field##_##name)
#define GPU_FLD_GET(range, word) gpu_bits_get32(GPU_HI(range), GPU_LO(range), (word))

/* QMD fields: QMD_SET(q, NVCBC0_QMDV04_00, GRID_WIDTH, x);
 * array fields: QMD_SETI(q, NVCBC0_QMDV04_00, CONSTANT_BUFFER_VALID, i, 1). */
#define QMD_SET(q, ver, field, v) gpu_bits_set((q), GPU_HI(ver##_##field), GPU_LO(ver##_##field), (v))
#define QMD_GET(q, ver, field) gpu_bits_get((q), GPU_HI(ver##_##field), GPU_LO(ver##_##field))
#define QMD_SETI(q, ver, field, i, v)                                                                        \
    gpu_bits_set((q), GPU_HI(ver##_##field(i)), GPU_LO(ver##_##field(i)), (v))
#define QMD_GETI(q, ver, field, i) gpu_bits_get((q), GPU_HI(ver##_##field(i)), GPU_LO(ver##_##field(i)))

#endif /* GPU_BITS_H */
