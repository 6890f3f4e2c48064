/* SPDX-License-Identifier: MIT */
/*
 * ops_tmap.h - the 128-byte tensor map of Hopper's tensor memory accelerator (TMA), encoded on
 * the host without the CUDA driver (the rm backend has none). cp.async.bulk.tensor reads it from
 * a kernel parameter (__grid_constant__) or global memory; the format is not documented, so the
 * field positions here are the ones the CUDA driver's cuTensorMapEncodeTiled wrote on an H100
 * with driver 580 (tests/hw/tmap_scan.c, its output tests/hw/logs/h100_s10_tmap_scan.txt), one
 * parameter changed at a time. Tiled mode only, no interleave; what the scan did not show
 * (interleaved layouts, strides past dimension 1 of 64 GiB or more) is refused.
 */
#ifndef OPS_TMAP_H
#define OPS_TMAP_H

#include "hcq.h"

#include <stdbool.h>
#include <stdint.h>

/* Element types: the map's own codes (bits 10:7), as observed. */
enum ops_tmap_type {
    OPS_TMAP_U8 = 0,
    OPS_TMAP_U16 = 1,
    OPS_TMAP_U32 = 2,
    OPS_TMAP_F16 = 6,
    OPS_TMAP_F32 = 7,
    OPS_TMAP_BF16 = 10,
};

/* Shared-memory swizzle (bits 14:13), the bytes of a swizzled row: 0 none, 1 32 B, 2 64 B, 3 128 B. */
enum ops_tmap_swizzle {
    OPS_TMAP_SWIZZLE_NONE = 0,
    OPS_TMAP_SWIZZLE_32B,
    OPS_TMAP_SWIZZLE_64B,
    OPS_TMAP_SWIZZLE_128B
};

struct ops_tmap_desc {
    enum ops_tmap_type type;
    uint32_t rank;           /* 1..5 */
    uint64_t va;             /* global address, 16-byte aligned */
    uint64_t dim[5];         /* elements per dimension, dim[0] innermost: 1..2^32 */
    uint64_t stride_B[4];    /* bytes between consecutive indices of dimensions 1..rank-1: multiples of 16 */
    uint32_t box[5];         /* elements copied per dimension: 1..256 */
    uint32_t elem_stride[5]; /* 1..8 (0 reads as 1) */
    enum ops_tmap_swizzle swizzle;
    uint32_t l2_promotion; /* 0 none, 1 64 B, 2 128 B, 3 256 B */
    bool oob_nan;          /* out-of-bounds elements read as NaN (float types) instead of zero */
};

/* Encode d into out (16 quadwords, the layout cp.async.bulk.tensor expects); HCQ_ERR_INVALID
 * (with the reason) for what the CUDA driver refuses, HCQ_ERR_UNSUPPORTED for what was not
 * observed. */
enum hcq_status ops_tmap_encode(const struct ops_tmap_desc *d, uint64_t out[16]);

#endif
