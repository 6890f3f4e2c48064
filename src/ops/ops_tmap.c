/* SPDX-License-Identifier: MIT */
/*
 * ops_tmap.c - tensor-map encoder (ops_tmap.h). Layout, as the CUDA driver wrote it on H100
 * (tests/hw/logs/h100_s10_tmap_scan.txt; q = 64-bit word):
 *   q0        global address
 *   q1        bits 6:4 rank - 1, 10:7 element type, 14:13 swizzle, 15 NaN fill, 18:17 L2
 *             promotion, 63:32 stride of dimension 1 >> 4 (bits 31:0 of it)
 *   q2, q3    strides of dimensions 2, 3, 4 >> 4 (32 bits each: q2 low, q2 high, q3 low);
 *             q3 35:32 bits 35:32 of dimension 1's
 *   q4, q5    dim - 1 of dimensions 0, 1 (q4) and 2, 3 (q5), 32 bits each; q6 31:0 dimension 4's
 *   q6        bits 32 + 3 i .. +2: element stride - 1 of dimension i; 63:56 box[0] - 1
 *   q7        box[1..4] - 1, a byte each
 *   q8        bytes one copy writes to shared memory (traversed box elements x element size)
 *   q9        the swizzle pattern's span in bytes: 16 (none), 256, 512, 1024 (8 rows of 32,
 *             64, 128 B)
 *   q10..q15  zero
 * Dimensions past the rank read as size 1, box 1, element stride 1 (their fields 0).
 */
#include "ops_tmap.h"
#include "util_log.h"

#include <string.h>

static uint32_t
tmap_elem_B(enum ops_tmap_type t)
{
    switch (t) {
    case OPS_TMAP_U8:
        return 1;
    case OPS_TMAP_U16:
    case OPS_TMAP_F16:
    case OPS_TMAP_BF16:
        return 2;
    case OPS_TMAP_U32:
    case OPS_TMAP_F32:
        return 4;
    }
    return 0;
}

enum hcq_status
ops_tmap_encode(const struct ops_tmap_desc *d, uint64_t out[16])
{
    memset(out, 0, 16 * sizeof *out);
    const uint32_t esz = tmap_elem_B(d->type);
    if (!esz)
        return hcq_err(HCQ_ERR_INVALID, "ops_tmap_encode: element type %d", (int)d->type);
    if (d->rank < 1 || d->rank > 5)
        return hcq_err(HCQ_ERR_INVALID, "ops_tmap_encode: rank %u (expected 1..5)", d->rank);
    if (d->va % 16)
        return hcq_err(HCQ_ERR_INVALID, "ops_tmap_encode: address 0x%llx not 16-byte aligned",
                       (unsigned long long)d->va);
    if ((unsigned)d->swizzle > OPS_TMAP_SWIZZLE_128B || d->l2_promotion > 3)
        return hcq_err(HCQ_ERR_INVALID, "ops_tmap_encode: swizzle %d, L2 promotion %u", (int)d->swizzle,
                       d->l2_promotion);
    uint64_t dim[5], box[5], es[5];
    for (uint32_t i = 0; i < 5; i++) {
        dim[i] = i < d->rank ? d->dim[i] : 1;
        box[i] = i < d->rank ? d->box[i] : 1;
        es[i] = i < d->rank && d->elem_stride[i] ? d->elem_stride[i] : 1;
        if (dim[i] < 1 || dim[i] > (1ull << 32) || box[i] < 1 || box[i] > 256 || es[i] > 8)
            return hcq_err(HCQ_ERR_INVALID,
                           "ops_tmap_encode: dimension %u: size %llu, box %llu, element stride %llu "
                           "(expected 1..2^32, 1..256, 1..8)",
                           i, (unsigned long long)dim[i], (unsigned long long)box[i],
                           (unsigned long long)es[i]);
    }
    for (uint32_t i = 0; i + 1 < d->rank; i++) {
        uint64_t s = d->stride_B[i];
        if (s % 16 || s == 0 || s >= (1ull << 40))
            return hcq_err(HCQ_ERR_INVALID,
                           "ops_tmap_encode: stride %u of %llu bytes (expected a multiple of 16 "
                           "below 2^40)",
                           i + 1, (unsigned long long)s);
        if (i > 0 && s >= (1ull << 36))
            return hcq_err(HCQ_ERR_UNSUPPORTED,
                           "ops_tmap_encode: stride %u of 2^36 bytes or more: its high bits' "
                           "place was not observed",
                           i + 1);
    }
    /* a swizzled row (box[0] elements) must fit the swizzle span, as the driver checks */
    static const uint32_t span[4] = {0, 32, 64, 128};
    if (d->swizzle != OPS_TMAP_SWIZZLE_NONE && box[0] * esz > span[d->swizzle])
        return hcq_err(HCQ_ERR_INVALID,
                       "ops_tmap_encode: a box row of %llu bytes exceeds the %u-byte swizzle",
                       (unsigned long long)(box[0] * esz), span[d->swizzle]);
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
    return HCQ_OK;
}
