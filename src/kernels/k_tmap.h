/* SPDX-License-Identifier: MIT */
/*
 * k_tmap.h - the 128-byte tensor map of Hopper's tensor memory accelerator (TMA), encoded on
 * the host without the CUDA driver (the rm backend has none): a pure function shared by the
 * ops launchers (src/ops/ops_tmap.h wraps it with hcq errors) and the LLM engine. The format
 * is not documented; the field positions are the ones the CUDA driver's cuTensorMapEncodeTiled
 * wrote on an H100 with driver 580 (a scan of its output, 2026-11-26, one parameter changed at
 * a time; test_ops.c holds the words it wrote). Tiled mode only, no
 * interleave; what the scan did not show (interleaved layouts, strides past dimension 1 of 64
 * GiB or more) is refused.
 *
 * Layout (q = 64-bit word):
 *   q0        global address
 *   q1        bits 6:4 rank - 1, 10:7 element type, 14:13 swizzle, 15 NaN fill, 18:17 L2
 *             promotion, 63:32 stride of dimension 1 >> 4 (bits 31:0 of it)
 *   q2, q3    strides of dimensions 2, 3, 4 >> 4 (32 bits each: q2 low, q2 high, q3 low);
 *             q3 35:32 bits 35:32 of dimension 1's
 *   q4, q5    dim - 1 of dimensions 0, 1 (q4) and 2, 3 (q5), 32 bits each; q6 31:0 dimension 4's
 *   q6        bits 32 + 3 i .. +2: element stride - 1 of dimension i; 63:56 box[0] - 1
 *   q7        box[1..4] - 1, a byte each
 *   q8        bytes one copy writes to shared memory (traversed box elements x element size)
 *   q9        the swizzle pattern's span in bytes: 16 (none), 256, 512, 1024
 *   q10..q15  zero
 * Dimensions past the rank read as size 1, box 1, element stride 1 (their fields 0).
 */
#ifndef K_TMAP_H
#define K_TMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Element types: the map's own codes (bits 10:7), as observed. */
enum k_tmap_type {
    K_TMAP_U8 = 0,
    K_TMAP_U16 = 1,
    K_TMAP_U32 = 2,
    K_TMAP_F16 = 6,
    K_TMAP_F32 = 7,
    K_TMAP_BF16 = 10,
};

/* Shared-memory swizzle (bits 14:13), the bytes of a swizzled row: 0 none, 1 32 B, 2 64 B, 3 128 B. */
enum k_tmap_swizzle { K_TMAP_SWIZZLE_NONE = 0, K_TMAP_SWIZZLE_32B, K_TMAP_SWIZZLE_64B, K_TMAP_SWIZZLE_128B };

struct k_tmap_desc {
    enum k_tmap_type type;
    uint32_t rank;           /* 1..5 */
    uint64_t va;             /* global address, 16-byte aligned */
    uint64_t dim[5];         /* elements per dimension, dim[0] innermost: 1..2^32 */
    uint64_t stride_B[4];    /* bytes between consecutive indices of dimensions 1..rank-1: multiples of 16 */
    uint32_t box[5];         /* elements copied per dimension: 1..256 */
    uint32_t elem_stride[5]; /* 1..8 (0 reads as 1) */
    enum k_tmap_swizzle swizzle;
    uint32_t l2_promotion; /* 0 none, 1 64 B, 2 128 B, 3 256 B */
    bool oob_nan;          /* out-of-bounds elements read as NaN (float types) instead of zero */
};

static inline uint32_t
k_tmap_elem_B(enum k_tmap_type t)
{
    switch (t) {
    case K_TMAP_U8:
        return 1;
    case K_TMAP_U16:
    case K_TMAP_F16:
    case K_TMAP_BF16:
        return 2;
    case K_TMAP_U32:
    case K_TMAP_F32:
        return 4;
    }
    return 0;
}

/* Encode d into out (16 quadwords). Returns 0, 1 (what the CUDA driver refuses) or 2 (what was
 * not observed), *why a short reason (empty on success). */
static inline int
k_tmap_encode(const struct k_tmap_desc *d, uint64_t out[16], const char **why)
{
    memset(out, 0, 16 * sizeof *out);
    const uint32_t esz = k_tmap_elem_B(d->type);
    if (!esz)
        return *why = "element type not encodable", 1;
    if (d->rank < 1 || d->rank > 5)
        return *why = "rank not 1..5", 1;
    if (d->va % 16)
        return *why = "address not 16-byte aligned", 1;
    if ((unsigned)d->swizzle > K_TMAP_SWIZZLE_128B || d->l2_promotion > 3)
        return *why = "swizzle or L2 promotion out of range", 1;
    uint64_t dim[5], box[5], es[5];
    for (uint32_t i = 0; i < 5; i++) {
        dim[i] = i < d->rank ? d->dim[i] : 1;
        box[i] = i < d->rank ? d->box[i] : 1;
        es[i] = i < d->rank && d->elem_stride[i] ? d->elem_stride[i] : 1;
        if (dim[i] < 1 || dim[i] > (1ull << 32) || box[i] < 1 || box[i] > 256 || es[i] > 8)
            return *why = "a dimension's size (1..2^32), box (1..256) or element stride (1..8) out of range",
                   1;
    }
    for (uint32_t i = 0; i + 1 < d->rank; i++) {
        uint64_t s = d->stride_B[i];
        if (s % 16 || s == 0 || s >= (1ull << 40))
            return *why = "a stride not a multiple of 16 below 2^40", 1;
        if (i > 0 && s >= (1ull << 36))
            return *why = "a stride past dimension 1 of 2^36 bytes or more (the place of its high bits was "
                          "not observed)",
                   2;
    }
    /* a swizzled row (box[0] elements) must fit the swizzle span, as the driver checks */
    static const uint32_t span[4] = {0, 32, 64, 128};
    if (d->swizzle != K_TMAP_SWIZZLE_NONE && box[0] * esz > span[d->swizzle])
        return *why = "a box row is wider than the swizzle span", 1;
    uint64_t s4[4] = {0, 0, 0, 0};
    for (uint32_t i = 0; i + 1 < d->rank; i++)
        s4[i] = d->stride_B[i] >> 4;
    out[0] = d->va;
    out[1] = (uint64_t)(d->rank - 1) << 4 | (uint64_t)d->type << 7 | (uint64_t)d->swizzle << 13 |
             (uint64_t)(d->oob_nan ? 1 : 0) << 15 | (uint64_t)d->l2_promotion << 17 |
             (s4[0] & 0xFFFFFFFFull) << 32;
    out[2] = (s4[1] & 0xFFFFFFFFull) | (s4[2] & 0xFFFFFFFFull) << 32;
    out[3] = (s4[3] & 0xFFFFFFFFull) | (s4[0] >> 32) << 32;
    out[4] = (dim[0] - 1) | (dim[1] - 1) << 32;
    out[5] = (dim[2] - 1) | (dim[3] - 1) << 32;
    out[6] = (dim[4] - 1) | (box[0] - 1) << 56;
    for (uint32_t i = 0; i < 5; i++)
        out[6] |= (es[i] - 1) << (32 + 3 * i);
    out[7] = (box[1] - 1) | (box[2] - 1) << 8 | (box[3] - 1) << 16 | (box[4] - 1) << 24;
    uint64_t bytes = esz;
    for (uint32_t i = 0; i < 5; i++)
        bytes *= box[i] / es[i];
    out[8] = bytes;
    static const uint64_t atom[4] = {16, 256, 512, 1024};
    out[9] = atom[d->swizzle];
    return *why = "", 0;
}

/* A row-major 2-D operand of 16-bit elements (f16 / bf16), `cols` per row (the inner
 * dimension) by `rows`, read in boxes of 64 x box_rows with the 128-byte swizzle: the operands
 * of the TMA-fed wgmma GEMMs (k_gemm_wgmma.cu). An empty dimension (a product with k = 0, which
 * issues no copy) still gets a valid map: size 1, its row stride rounded up to 16 bytes (real
 * rows are multiples of 8 values). */
static inline struct k_tmap_desc
k_tmap_rows16(enum k_tmap_type type, uint64_t va, uint64_t cols, uint64_t rows, uint32_t box_rows)
{
    const uint64_t c = cols ? cols : 1, r = rows ? rows : 1;
    const struct k_tmap_desc d = {.type = type,
                                  .rank = 2,
                                  .va = va,
                                  .dim = {c, r},
                                  .stride_B = {(c * 2 + 15) / 16 * 16},
                                  .box = {64, box_rows},
                                  .swizzle = K_TMAP_SWIZZLE_128B};
    return d;
}

#endif /* K_TMAP_H */
