/* SPDX-License-Identifier: MIT */
/*
 * k_llm_quant.h - GGUF quant block layouts, shared by the CUDA kernels (k_llm_*.cu),
 * their CPU twins (src/ops/ops_llm*.c) and the engine (src/llm). Plain C that nvcc also
 * compiles. Layer: kernels (param headers). Layouts: docs/perf/anchors.md §2.4 (facts from
 * ggml-common.h); every size and offset is _Static_assert'ed below (STYLE 2.6).
 * Half-precision fields are raw IEEE binary16 bits (uint16_t).
 */
#ifndef K_LLM_QUANT_H
#define K_LLM_QUANT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert /* nvcc compiles this header as C++ */
#endif

#define LLM_QK 32    /* values per block of the 32-wide formats */
#define LLM_QK_K 256 /* values per super-block of the K formats */

/* Q4_0: x = d * (q - 8), q in 0..15; byte j holds value j (low nibble) and j+16 (high). */
struct llm_block_q4_0 {
    uint16_t d;
    uint8_t qs[LLM_QK / 2];
};
/* Q4_1: x = d * q + m. */
struct llm_block_q4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[LLM_QK / 2];
};
/* Q5_0: x = d * (q - 16); q's 5th bit of value j is bit j of qh (little-endian u32). */
struct llm_block_q5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[LLM_QK / 2];
};
/* Q5_1: x = d * q + m. */
struct llm_block_q5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[LLM_QK / 2];
};
/* Q8_0: x = d * q. */
struct llm_block_q8_0 {
    uint16_t d;
    int8_t qs[LLM_QK];
};
/* Q4_K: 8 sub-blocks of 32, x = d*sc_j*q - dmin*m_j, 6-bit sc/m packed in scales[12]. */
struct llm_block_q4_k {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qs[LLM_QK_K / 2];
};
/* Q5_K: as Q4_K plus a 5th bit per value in qh[32]. */
struct llm_block_q5_k {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qh[LLM_QK_K / 8];
    uint8_t qs[LLM_QK_K / 2];
};
/* Q6_K: 16 sub-blocks of 16, x = d * scales[s] * (q - 32), q = 4 low bits (ql) + 2 high (qh). */
struct llm_block_q6_k {
    uint8_t ql[LLM_QK_K / 2];
    uint8_t qh[LLM_QK_K / 4];
    int8_t scales[LLM_QK_K / 16];
    uint16_t d;
};

/* docs/perf/anchors.md §2.4 (bytes per block) */
_Static_assert(sizeof(struct llm_block_q4_0) == 18, "q4_0 size");
_Static_assert(offsetof(struct llm_block_q4_0, qs) == 2, "q4_0 qs");
_Static_assert(sizeof(struct llm_block_q4_1) == 20, "q4_1 size");
_Static_assert(offsetof(struct llm_block_q4_1, qs) == 4, "q4_1 qs");
_Static_assert(sizeof(struct llm_block_q5_0) == 22, "q5_0 size");
_Static_assert(offsetof(struct llm_block_q5_0, qh) == 2 && offsetof(struct llm_block_q5_0, qs) == 6, "q5_0");
_Static_assert(sizeof(struct llm_block_q5_1) == 24, "q5_1 size");
_Static_assert(offsetof(struct llm_block_q5_1, qh) == 4 && offsetof(struct llm_block_q5_1, qs) == 8, "q5_1");
_Static_assert(sizeof(struct llm_block_q8_0) == 34, "q8_0 size");
_Static_assert(offsetof(struct llm_block_q8_0, qs) == 2, "q8_0 qs");
_Static_assert(sizeof(struct llm_block_q4_k) == 144, "q4_k size");
_Static_assert(offsetof(struct llm_block_q4_k, scales) == 4 && offsetof(struct llm_block_q4_k, qs) == 16,
               "q4_k");
_Static_assert(sizeof(struct llm_block_q5_k) == 176, "q5_k size");
_Static_assert(offsetof(struct llm_block_q5_k, qh) == 16 && offsetof(struct llm_block_q5_k, qs) == 48,
               "q5_k");
_Static_assert(sizeof(struct llm_block_q6_k) == 210, "q6_k size");
_Static_assert(offsetof(struct llm_block_q6_k, qh) == 128 && offsetof(struct llm_block_q6_k, scales) == 192 &&
                   offsetof(struct llm_block_q6_k, d) == 208,
               "q6_k");

/* ==== Block decoders (host C and CUDA device code alike) ==== */

#ifdef __CUDACC__
#include <cuda_fp16.h>
#define K_LLM_FN static __device__ __host__ __forceinline__
#else
#define K_LLM_FN static inline
#endif

/* IEEE binary16 bits -> float (subnormals, inf, nan included). */
K_LLM_FN float
k_llm_f16(uint16_t h)
{
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(h)); /* exact, like the host path below */
#endif
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    uint32_t bits;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (man << 13);
    } else if (exp) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man) { /* subnormal: normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400u));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3FFu) << 13);
    } else {
        bits = sign;
    }
    union {
        uint32_t u;
        float f;
    } v;
    v.u = bits;
    return v.f;
}

K_LLM_FN float
k_llm_bf16(uint16_t h)
{
    union {
        uint32_t u;
        float f;
    } v;
    v.u = (uint32_t)h << 16;
    return v.f;
}

/* Q4_K / Q5_K: 6-bit scale and min of sub-block j (anchors.md §2.4). */
K_LLM_FN void
k_llm_scale_min_k4(const uint8_t *s, int j, uint8_t *sc, uint8_t *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (uint8_t)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *m = (uint8_t)((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
}

/* The same for four sub-blocks at once: byte c of *sc / *m is the scale / min of sub-block 4h + c,
 * from the block's scales[12] read as three little-endian words s0, s1, s2 (the repacked Q4_KR /
 * Q5_KR kernels load the head as one 16-byte piece: k_llm_mvq.cuh's q8_dot, k_llm_gemm.cu). */
K_LLM_FN void
k_llm_scale_min_k4_x4(uint32_t s0, uint32_t s1, uint32_t s2, uint32_t h, uint32_t *sc, uint32_t *m)
{
    *sc = h ? (s2 & 0x0F0F0F0Fu) | ((s0 >> 2) & 0x30303030u) : s0 & 0x3F3F3F3Fu;
    *m = h ? ((s2 >> 4) & 0x0F0F0F0Fu) | ((s1 >> 2) & 0x30303030u) : s1 & 0x3F3F3F3Fu;
}

K_LLM_FN void
k_llm_dq_q4_0(const struct llm_block_q4_0 *b, float *y)
{
    float d = k_llm_f16(b->d);
    for (int j = 0; j < LLM_QK / 2; j++) {
        y[j] = d * (float)((b->qs[j] & 0xF) - 8);
        y[j + LLM_QK / 2] = d * (float)((b->qs[j] >> 4) - 8);
    }
}

K_LLM_FN void
k_llm_dq_q4_1(const struct llm_block_q4_1 *b, float *y)
{
    float d = k_llm_f16(b->d), m = k_llm_f16(b->m);
    for (int j = 0; j < LLM_QK / 2; j++) {
        y[j] = d * (float)(b->qs[j] & 0xF) + m;
        y[j + LLM_QK / 2] = d * (float)(b->qs[j] >> 4) + m;
    }
}

K_LLM_FN uint32_t
k_llm_qh32(const uint8_t *qh)
{
    return (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
}

K_LLM_FN void
k_llm_dq_q5_0(const struct llm_block_q5_0 *b, float *y)
{
    float d = k_llm_f16(b->d);
    uint32_t qh = k_llm_qh32(b->qh);
    for (int j = 0; j < LLM_QK / 2; j++) {
        int q0 = (b->qs[j] & 0xF) | (int)(((qh >> j) & 1) << 4);
        int q1 = (b->qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
        y[j] = d * (float)(q0 - 16);
        y[j + LLM_QK / 2] = d * (float)(q1 - 16);
    }
}

K_LLM_FN void
k_llm_dq_q5_1(const struct llm_block_q5_1 *b, float *y)
{
    float d = k_llm_f16(b->d), m = k_llm_f16(b->m);
    uint32_t qh = k_llm_qh32(b->qh);
    for (int j = 0; j < LLM_QK / 2; j++) {
        int q0 = (b->qs[j] & 0xF) | (int)(((qh >> j) & 1) << 4);
        int q1 = (b->qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
        y[j] = d * (float)q0 + m;
        y[j + LLM_QK / 2] = d * (float)q1 + m;
    }
}

K_LLM_FN void
k_llm_dq_q8_0(const struct llm_block_q8_0 *b, float *y)
{
    float d = k_llm_f16(b->d);
    for (int j = 0; j < LLM_QK; j++)
        y[j] = d * (float)b->qs[j];
}

/* 64 values (chunk c of 4) of a Q4_K block. */
K_LLM_FN void
k_llm_dq_q4_k_chunk(const struct llm_block_q4_k *b, int c, float *y)
{
    float d = k_llm_f16(b->d), dmin = k_llm_f16(b->dmin);
    uint8_t sc, m;
    k_llm_scale_min_k4(b->scales, 2 * c, &sc, &m);
    float d1 = d * sc, m1 = dmin * m;
    k_llm_scale_min_k4(b->scales, 2 * c + 1, &sc, &m);
    float d2 = d * sc, m2 = dmin * m;
    const uint8_t *q = b->qs + 32 * c;
    for (int l = 0; l < 32; l++) {
        y[l] = d1 * (float)(q[l] & 0xF) - m1;
        y[l + 32] = d2 * (float)(q[l] >> 4) - m2;
    }
}

K_LLM_FN void
k_llm_dq_q5_k_chunk(const struct llm_block_q5_k *b, int c, float *y)
{
    float d = k_llm_f16(b->d), dmin = k_llm_f16(b->dmin);
    uint8_t sc, m;
    k_llm_scale_min_k4(b->scales, 2 * c, &sc, &m);
    float d1 = d * sc, m1 = dmin * m;
    k_llm_scale_min_k4(b->scales, 2 * c + 1, &sc, &m);
    float d2 = d * sc, m2 = dmin * m;
    const uint8_t *q = b->qs + 32 * c;
    uint8_t u1 = (uint8_t)(1u << (2 * c)), u2 = (uint8_t)(2u << (2 * c));
    for (int l = 0; l < 32; l++) {
        y[l] = d1 * (float)((q[l] & 0xF) + ((b->qh[l] & u1) ? 16 : 0)) - m1;
        y[l + 32] = d2 * (float)((q[l] >> 4) + ((b->qh[l] & u2) ? 16 : 0)) - m2;
    }
}

/* 128 values (half h of 2) of a Q6_K block. */
K_LLM_FN void
k_llm_dq_q6_k_half(const struct llm_block_q6_k *b, int h, float *y)
{
    float d = k_llm_f16(b->d);
    const uint8_t *ql = b->ql + 64 * h;
    const uint8_t *qh = b->qh + 32 * h;
    const int8_t *sc = b->scales + 8 * h;
    for (int l = 0; l < 32; l++) {
        int is = l / 16;
        int q1 = (int)((ql[l] & 0xF) | ((qh[l] & 3) << 4)) - 32;
        int q2 = (int)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        int q3 = (int)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        int q4 = (int)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is] * (float)q1;
        y[l + 32] = d * sc[is + 2] * (float)q2;
        y[l + 64] = d * sc[is + 4] * (float)q3;
        y[l + 96] = d * sc[is + 6] * (float)q4;
    }
}

/* ==== Repacked rows (the decode layout) ====
 * Q4_0 (18 B), Q8_0 (34 B) and Q6_K (210 B) blocks are only 2-byte aligned, and a warp
 * reading whole blocks per lane issues many small, partly duplicated loads. At load the
 * engine rewrites every row of such a matrix (the file is untouched) in "lane-major" groups:
 * the bytes one lane of k_llm_matvec_q8 needs for one task sit at lane * width in a few
 * arrays, so every warp-wide load is one contiguous 512-byte (or 128/64-byte) run. Same bytes
 * per row as the file, so all row offset arithmetic stays valid. Task L of a group:
 *   Q4_0R  group 1024 values, 576 B:  qs[32][16] | d[32]            (task L = block L)
 *   Q8_0R  group 1024 values, 1088 B: lo[32][16] | hi[32][16] | d[32] (qs 0-15, 16-31)
 *   Q6_KR  group 2048 values, 1680 B: qa[32][16] | qb[32][16] | qh[32][16] | sc[32][4] | d[8]
 *          task L = (block b = L/4, half h = L/2 % 2, l0 = 16 (L % 2)): qa = ql[64h + l0 ..+16],
 *          qb = ql[64h + 32 + l0 ..], qh = qh[32h + l0 ..], sc = scales[8h + l0/16 + {0, 4, 2, 6}],
 *          i.e. the 64 values 256b + 128h + l0 + {0, 32, 64, 96} + 0..15; d[b] per block.
 *   Q5_KR  group 2048 values, 1408 B: qa[32][16] | qb[32][16] | qh[16][16] | head[8][16]
 *          task L = (b, h, l0) as Q6_KR, the same 64 values: qa = qs[64h + l0 ..+16] (low
 *          nibbles: values +0, high: +32), qb = qs[64h + 32 + l0 ..] (+64, +96); their fifth bits
 *          are bits 4h..4h+3 of qh[l0 ..+16], kept whole at qh[2b + l0/16] and read by the two
 *          lanes h = 0, 1; head[b] = the block's d, dmin and 12 scale bytes, read by its 4 lanes.
 *          A byte move like the others: every warp load is one contiguous run
 *          (qh and head with repeated addresses), 44 B per lane and task as in the file. H100
 *          tg128 (alternating): Q5_K_M 1868-1869 vs 1616-1624 tokens/s (+15%), gen-model
 *          q5_k 1947-1950 vs 1585-1586; gate|up 14.29 -> 10.61 us (1.6 -> 2.2 TB/s).
 *   Q4_KR  group 2048 values, 1152 B: qa[32][16] | qb[32][16] | head[8][16]: Q5_KR without qh
 *          (Q4_K's qs sit at block byte 16 instead of 48). H100 tg128 (alternating):
 *          Q4_K_M 1969-1975 vs 1789-1793 (+10%), gen-model q4_k 2128-2131 vs 1828-1830; gate|up
 *          11.60 -> 9.74 us, down 7.93 -> 7.26.
 * The type code is the ggml type | K_LLM_RP; it never appears in a file. Facts about the
 * ggml blocks: docs/perf/anchors.md §2.4. */
#define K_LLM_RP 0x100u
#define K_LLM_T_Q4_0R (K_LLM_RP | 2u)
#define K_LLM_T_Q8_0R (K_LLM_RP | 8u)
#define K_LLM_T_Q6_KR (K_LLM_RP | 14u)
#define K_LLM_T_Q5_KR (K_LLM_RP | 13u)
#define K_LLM_T_Q4_KR (K_LLM_RP | 12u)
/* Not layouts: Q4_0R / Q8_0R read two groups per task (64 values per lane and pass), the bodies
 * of k_llm_matvec_q8_q4_0x2 / _q8_0x2 on rows of whole group pairs (kernel-internal codes). */
#define K_LLM_T_Q4_0R2 (0x200u | K_LLM_T_Q4_0R)
#define K_LLM_T_Q8_0R2 (0x200u | K_LLM_T_Q8_0R)
#define K_LLM_RP_MAX_PARTS 29

/* Values per group of a repacked type, 0 if `type` has no repacked form. */
K_LLM_FN uint32_t
k_llm_rp_group_values(uint32_t type)
{
    switch (type & ~K_LLM_RP) {
    case 2:
    case 8:
        return 1024;
    case 12:
    case 13:
    case 14:
        return 2048;
    default:
        return 0;
    }
}

/* Values per ggml block of a repacked type (its parts are listed per block, k_llm_rp_parts): 256
 * for the K-quants, 32 for Q4_0 / Q8_0. */
K_LLM_FN uint32_t
k_llm_rp_block_values(uint32_t rtype)
{
    return (rtype & ~K_LLM_RP) >= 12 ? LLM_QK_K : LLM_QK;
}

/* The repacked type a matrix of ggml type `type` and rows of k values takes (whole groups
 * only), else `type` itself. */
K_LLM_FN uint32_t
k_llm_rp_of(uint32_t type, uint32_t k)
{
    uint32_t g = k_llm_rp_group_values(type);
    return (type & K_LLM_RP) || !g || k % g ? type : (type | K_LLM_RP);
}

/* The parts of ggml block `blk` of a row in the repacked layout: for part i, `len[i]` bytes
 * at `src[i]` in the ggml block sit at `dst[i]` from the row start. Returns the part count
 * (<= K_LLM_RP_MAX_PARTS; 0: not a repacked type). Shared by the repacker and the readers. */
K_LLM_FN uint32_t
k_llm_rp_parts(uint32_t rtype, uint32_t blk, uint32_t *src, uint32_t *dst, uint32_t *len)
{
    switch (rtype) {
    case K_LLM_T_Q4_0R: {
        uint32_t G = 576 * (blk / 32), L = blk % 32;
        src[0] = 2, dst[0] = G + 16 * L, len[0] = 16;
        src[1] = 0, dst[1] = G + 512 + 2 * L, len[1] = 2;
        return 2;
    }
    case K_LLM_T_Q8_0R: {
        uint32_t G = 1088 * (blk / 32), L = blk % 32;
        src[0] = 2, dst[0] = G + 16 * L, len[0] = 16;
        src[1] = 18, dst[1] = G + 512 + 16 * L, len[1] = 16;
        src[2] = 0, dst[2] = G + 1024 + 2 * L, len[2] = 2;
        return 3;
    }
    case K_LLM_T_Q6_KR: {
        uint32_t G = 1680 * (blk / 8), b = blk % 8, n = 0;
        for (uint32_t h = 0; h < 2; h++)
            for (uint32_t l0 = 0; l0 < 32; l0 += 16) {
                uint32_t L = 4 * b + 2 * h + l0 / 16;
                static const uint8_t so[4] = {0, 4, 2, 6}; /* scale order in sc[L] */
                src[n] = 64 * h + l0, dst[n] = G + 16 * L, len[n++] = 16;
                src[n] = 64 * h + 32 + l0, dst[n] = G + 512 + 16 * L, len[n++] = 16;
                src[n] = 128 + 32 * h + l0, dst[n] = G + 1024 + 16 * L, len[n++] = 16;
                for (uint32_t i = 0; i < 4; i++)
                    src[n] = 192 + 8 * h + l0 / 16 + so[i], dst[n] = G + 1536 + 4 * L + i, len[n++] = 1;
            }
        src[n] = 208, dst[n] = G + 1664 + 2 * b, len[n++] = 2;
        return n;
    }
    case K_LLM_T_Q5_KR:
    case K_LLM_T_Q4_KR: {
        /* block: d, dmin, scales[12] (0..15) | Q5_K: qh[32] (16..47) | qs[128] (Q5_K 48.., Q4_K 16..) */
        const uint32_t q5 = rtype == K_LLM_T_Q5_KR, qs = q5 ? 48 : 16;
        uint32_t G = (q5 ? 1408 : 1152) * (blk / 8), b = blk % 8, n = 0;
        for (uint32_t h = 0; h < 2; h++)
            for (uint32_t l0 = 0; l0 < 32; l0 += 16) {
                uint32_t L = 4 * b + 2 * h + l0 / 16;
                src[n] = qs + 64 * h + l0, dst[n] = G + 16 * L, len[n++] = 16;
                src[n] = qs + 64 * h + 32 + l0, dst[n] = G + 512 + 16 * L, len[n++] = 16;
            }
        for (uint32_t l0 = 0; q5 && l0 < 32; l0 += 16)
            src[n] = 16 + l0, dst[n] = G + 1024 + 16 * (2 * b + l0 / 16), len[n++] = 16;
        src[n] = 0, dst[n] = G + (q5 ? 1280 : 1024) + 16 * b, len[n++] = 16;
        return n;
    }
    default:
        return 0;
    }
}

/* Little-endian u16 at any address. */
K_LLM_FN uint16_t
k_llm_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Value i of a repacked row (k_llm_dq_at's counterpart; same values as the ggml row). */
K_LLM_FN float
k_llm_dq_rp_at(uint32_t rtype, const uint8_t *row, uint32_t i)
{
    switch (rtype) {
    case K_LLM_T_Q4_0R: {
        const uint8_t *g = row + 576 * (size_t)(i / 1024);
        uint32_t L = (i % 1024) / 32, j = i % 32;
        uint8_t qb = g[16 * L + j % 16];
        int q = j < 16 ? (qb & 0xF) : (qb >> 4);
        return k_llm_f16(k_llm_rd16(g + 512 + 2 * L)) * (float)(q - 8);
    }
    case K_LLM_T_Q8_0R: {
        const uint8_t *g = row + 1088 * (size_t)(i / 1024);
        uint32_t L = (i % 1024) / 32, j = i % 32;
        int8_t q = (int8_t)g[(j < 16 ? 0 : 512) + 16 * L + j % 16];
        return k_llm_f16(k_llm_rd16(g + 1024 + 2 * L)) * (float)q;
    }
    case K_LLM_T_Q6_KR: {
        const uint8_t *g = row + 1680 * (size_t)(i / 2048);
        uint32_t w = i % 2048, b = w / 256, j = w % 256, h = j / 128, grp = (j % 128) / 32, l = j % 32;
        uint32_t L = 4 * b + 2 * h + l / 16, ii = l % 16, s = grp % 2, hi = grp / 2;
        uint8_t qlb = g[(s ? 512 : 0) + 16 * L + ii];
        int lo = hi ? (qlb >> 4) : (qlb & 0xF);
        int qh = (g[1024 + 16 * L + ii] >> (2 * grp)) & 3;
        int8_t sc = (int8_t)g[1536 + 4 * L + 2 * s + hi];
        return k_llm_f16(k_llm_rd16(g + 1664 + 2 * b)) * (float)sc * (float)((lo | (qh << 4)) - 32);
    }
    case K_LLM_T_Q5_KR:
    case K_LLM_T_Q4_KR: {
        /* value w of the group: block b, sub-block j = w % 256 / 32 (4h + c), l = w % 32 */
        const int q5 = rtype == K_LLM_T_Q5_KR;
        const uint8_t *g = row + (q5 ? 1408 : 1152) * (size_t)(i / 2048);
        uint32_t w = i % 2048, b = w / 256, j = (w % 256) / 32, l = w % 32, h = j / 4, c = j % 4;
        uint32_t L = 4 * b + 2 * h + l / 16, ii = l % 16;
        uint8_t qb = g[(c < 2 ? 0 : 512) + 16 * L + ii];
        int q = c % 2 ? qb >> 4 : qb & 0xF;
        if (q5)
            q |= ((g[1024 + 16 * (2 * b + l / 16) + ii] >> j) & 1) << 4;
        const uint8_t *hd = g + (q5 ? 1280 : 1024) + 16 * b;
        uint8_t sc, m;
        k_llm_scale_min_k4(hd + 4, (int)j, &sc, &m);
        return k_llm_f16(k_llm_rd16(hd)) * (float)sc * (float)q - k_llm_f16(k_llm_rd16(hd + 2)) * (float)m;
    }
    default:
        return 0;
    }
}

/* Bytes of a row of n values of `type` (ggml numbering, repacked codes included), 0 if the
 * type is not one the LLM kernels read. The one definition the kernels and twins share. */
K_LLM_FN uint64_t
k_llm_row_bytes(uint32_t type, uint64_t n)
{
    switch (type & ~K_LLM_RP) {
    case 0:
        return type & K_LLM_RP ? 0 : 4 * n;
    case 1:
    case 30:
        return type & K_LLM_RP ? 0 : 2 * n;
    case 2:
        return n / LLM_QK * 18;
    case 3:
        return type & K_LLM_RP ? 0 : n / LLM_QK * 20;
    case 6:
        return type & K_LLM_RP ? 0 : n / LLM_QK * 22;
    case 7:
        return type & K_LLM_RP ? 0 : n / LLM_QK * 24;
    case 8:
        return n / LLM_QK * 34;
    case 12:
        return n / LLM_QK_K * 144;
    case 13:
        return n / LLM_QK_K * 176;
    case 14:
        return n / LLM_QK_K * 210;
    default:
        return 0;
    }
}

/* Value i of a row of `type` (ggml numbering: 0 F32, 1 F16, 2 Q4_0, 3 Q4_1, 6 Q5_0, 7 Q5_1,
 * 8 Q8_0, 12 Q4_K, 13 Q5_K, 14 Q6_K, 30 BF16, and the repacked codes above); 0 for others. One value at a
 * time: the simple form the first GPU kernels use (speed comes later). */
K_LLM_FN float
k_llm_dq_at(uint32_t type, const uint8_t *row, uint32_t i)
{
    if (type & K_LLM_RP)
        return k_llm_dq_rp_at(type, row, i);
    switch (type) {
    case 0: {
        float f;
        const uint8_t *p = row + 4 * (size_t)i;
        union {
            uint32_t u;
            float f;
        } v;
        v.u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        f = v.f;
        return f;
    }
    case 1:
        return k_llm_f16((uint16_t)(row[2 * (size_t)i] | row[2 * (size_t)i + 1] << 8));
    case 30:
        return k_llm_bf16((uint16_t)(row[2 * (size_t)i] | row[2 * (size_t)i + 1] << 8));
    case 2: {
        const struct llm_block_q4_0 *b = (const struct llm_block_q4_0 *)row + i / 32;
        uint32_t j = i % 32;
        int q = j < 16 ? (b->qs[j] & 0xF) : (b->qs[j - 16] >> 4);
        return k_llm_f16(b->d) * (float)(q - 8);
    }
    case 3: {
        const struct llm_block_q4_1 *b = (const struct llm_block_q4_1 *)row + i / 32;
        uint32_t j = i % 32;
        int q = j < 16 ? (b->qs[j] & 0xF) : (b->qs[j - 16] >> 4);
        return k_llm_f16(b->d) * (float)q + k_llm_f16(b->m);
    }
    case 6: {
        const struct llm_block_q5_0 *b = (const struct llm_block_q5_0 *)row + i / 32;
        uint32_t j = i % 32;
        int q =
            (j < 16 ? (b->qs[j] & 0xF) : (b->qs[j - 16] >> 4)) | (int)(((k_llm_qh32(b->qh) >> j) & 1) << 4);
        return k_llm_f16(b->d) * (float)(q - 16);
    }
    case 7: {
        const struct llm_block_q5_1 *b = (const struct llm_block_q5_1 *)row + i / 32;
        uint32_t j = i % 32;
        int q =
            (j < 16 ? (b->qs[j] & 0xF) : (b->qs[j - 16] >> 4)) | (int)(((k_llm_qh32(b->qh) >> j) & 1) << 4);
        return k_llm_f16(b->d) * (float)q + k_llm_f16(b->m);
    }
    case 8: {
        const struct llm_block_q8_0 *b = (const struct llm_block_q8_0 *)row + i / 32;
        return k_llm_f16(b->d) * (float)b->qs[i % 32];
    }
    case 12:
    case 13: {
        uint32_t j = i % 256, c = j / 64, w = j % 64, l = w % 32, sub = 2 * c + w / 32;
        const uint8_t *base = row + (size_t)(i / 256) * (type == 12 ? 144 : 176);
        const struct llm_block_q4_k *b4 = (const struct llm_block_q4_k *)base;
        uint8_t sc, m;
        k_llm_scale_min_k4(b4->scales, (int)sub, &sc, &m);
        const uint8_t *qs = type == 12 ? b4->qs : ((const struct llm_block_q5_k *)base)->qs;
        int q = w < 32 ? (qs[32 * c + l] & 0xF) : (qs[32 * c + l] >> 4);
        if (type == 13)
            q += ((((const struct llm_block_q5_k *)base)->qh[l] >> sub) & 1) << 4;
        return k_llm_f16(b4->d) * (float)sc * (float)q - k_llm_f16(b4->dmin) * (float)m;
    }
    case 14: {
        const struct llm_block_q6_k *b = (const struct llm_block_q6_k *)row + i / 256;
        uint32_t j = i % 256, h = j / 128, w = j % 128, grp = w / 32, l = w % 32;
        const uint8_t *ql = b->ql + 64 * h;
        int lo = grp == 0   ? (ql[l] & 0xF)
                 : grp == 1 ? (ql[l + 32] & 0xF)
                 : grp == 2 ? (ql[l] >> 4)
                            : (ql[l + 32] >> 4);
        int hi = (b->qh[32 * h + l] >> (2 * grp)) & 3;
        return k_llm_f16(b->d) * (float)b->scales[8 * h + l / 16 + 2 * grp] * (float)((lo | (hi << 4)) - 32);
    }
    default:
        return 0;
    }
}

#endif /* K_LLM_QUANT_H */
