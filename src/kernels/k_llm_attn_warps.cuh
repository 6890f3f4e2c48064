// SPDX-License-Identifier: MIT
/*
 * k_llm_attn_warps.cuh - attention of one token's query heads of one KV head (head size 64) over
 * cache rows [t0, t1), by a CTA of K_LLM_BLOCK threads whose warps stream tiles independently:
 * the core of k_llm_attn_rows64 (k_llm_attn_rows.cu, a batch step's tokens).
 *
 * Warp w takes tiles w, w + 8, .. of 16 rows, each loaded straight into registers (16 bytes a
 * lane, the warp's next tile in flight while one is computed), with its own online softmax on
 * tensor cores and no shared memory or barrier in its loop:
 *   S^T = K q^T: mma.m16n8k16 with A = the tile's K (rows t) and B = q^T (columns: the group's
 *   heads, zero past it); a lane holds 16-byte chunks tig and tig + 4 of its rows, which the k
 *   dimension takes in a permuted order - q's B fragments are built in the same order, and a dot
 *   product does not depend on it;
 *   out^T += V^T P^T: A = V^T, B = P^T, both transposed in registers (movmatrix) from the
 *   layouts they arrive in (V's rows as loaded; P as S^T's accumulator); out^T's rows are the
 *   permuted d order the V chunks give, put right when the warps meet.
 * q and the weights are split hi + lo f16 (two mma each), so the sums keep f32 accuracy. The
 * fragment index math was checked against softmax attention by a model of PTX's m16n8k16 and
 * movmatrix layouts (groups 1-8, 1-100 rows). At the end each warp's (max, sum, out) goes to
 * shared memory; aw_merge combines them per (head, element).
 * Why: k_llm_attn_rows walks a block's positions in 256-row chunks with four barriers each:
 * 10.4 us a layer for 8 tokens at 160 positions (H200). With this core a batch step of a
 * LLaMA-3.2-1B Q4_K_M file generates 7.6% / 9.5% more tokens/s at 8 / 64 sequences (H200,
 * 2026-11-29). The single-token decode keeps its shared tile ring (attn_decode_tiles): this core
 * in its place was 6% slower at depth 32768 and no faster at 1024 / 4096 (same call).
 */
#ifndef K_LLM_ATTN_WARPS_CUH
#define K_LLM_ATTN_WARPS_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "k_gemm_mma.h" /* k_gm_mma */
#include "k_llm_f16x2.cuh" /* h2_split */
#include "k_llm_kv.cuh"

#define AW_WARPS 8 /* warps of the CTA (K_LLM_BLOCK / 32) */
#define AW_GS 8    /* query heads per KV head at most: the mma's n8 columns */
#define AW_HD 64
/* shared floats: out [AW_WARPS][AW_GS][AW_HD], max and sum [AW_WARPS][AW_GS] each */
#define AW_SMEM_FLOATS (AW_WARPS * AW_GS * AW_HD + 2 * AW_WARPS * AW_GS)

/* 8x8 b16 matrix transposed within the warp (lane (r, c pair) of the input holds what lane
 * (c pair, r) of the output holds; PTX movmatrix) */
__device__ __forceinline__ uint32_t
ad_movt(uint32_t x)
{
    uint32_t y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
    return y;
}

__device__ __forceinline__ uint32_t
ad_u4(const uint4 &u, int j)
{
    return j == 0 ? u.x : j == 1 ? u.y : j == 2 ? u.z : u.w;
}

/* Rows row0 + gid and row0 + gid + 8 (zeros from n on) of KV head g's K and V, 16-byte chunks
 * tig and tig + 4 of each (head size 64: 8 chunks a row): x[2 r + q] = row gid + 8 r, chunk
 * tig + 4 q. A warp's load covers 8 rows x 64 contiguous bytes. */
__device__ __forceinline__ void
ad_ld_rows64(uint4 (&k)[4], uint4 (&v)[4], const kv_t *kb, const kv_t *vb, uint32_t kv_dim, uint32_t row0,
             uint32_t n, uint32_t gid, uint32_t tig)
{
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const uint32_t row = gid + 8 * r;
#pragma unroll
        for (int q = 0; q < 2; q++) {
            if (row < n) {
                const size_t off = (size_t)(row0 + row) * kv_dim + 8 * (tig + 4 * q);
                k[2 * r + q] = __ldcg((const uint4 *)(kb + off)); /* .cg: L1 may hold an older */
                v[2 * r + q] = __ldcg((const uint4 *)(vb + off)); /* line of these rows */
            } else {
                k[2 * r + q] = v[2 * r + q] = make_uint4(0u, 0u, 0u, 0u);
            }
        }
    }
}

/* The warps' loop over rows [t0, t1) of the KV head whose K and V rows start at kb / vb (row
 * stride kv_dim); q: the group's gs heads of AW_HD floats. Leaves each warp's (out, max, sum) in
 * sh (AW_SMEM_FLOATS) and synchronizes the CTA. Every thread of the CTA calls it, after the PDL
 * wait (the rows and q may come from the launches before). */
__device__ __forceinline__ void
aw_run64(const kv_t *kb, const kv_t *vb, uint32_t kv_dim, const float *qg, uint32_t gs, float scale, uint32_t t0,
         uint32_t t1, float *sh)
{
    constexpr uint32_t HD = AW_HD, T = 16;
    float *red = sh;                    /* [AW_WARPS][AW_GS][HD] */
    float *smx = red + AW_WARPS * AW_GS * HD; /* [AW_WARPS][AW_GS] */
    float *ssm = smx + AW_WARPS * AW_GS;      /* [AW_WARPS][AW_GS] */
    const uint32_t tid = threadIdx.x, lane = tid % 32, warp = tid / 32, gid = lane / 4, tig = lane % 4;
    const uint32_t L = t1 - t0, ntile = (L + T - 1) / T;
    uint4 k[4], v[4];
    if (warp < ntile)
        ad_ld_rows64(k, v, kb, vb, kv_dim, t0 + warp * T, min(T, L - warp * T), gid, tig);
    /* q^T's B fragments: k step j (16 of the permuted d), b0 / b1 = lane's list entries 2j / 2j + 1,
     * entry m = chunk tig + 4 (m / 4), pair m % 4: d = 8 (tig + 4 (m / 4)) + 2 (m % 4) */
    uint32_t qb[4][4]; /* [j]: b0 hi, b1 hi, b0 lo, b1 lo */
    {
        const float *qh = qg + (size_t)gid * HD;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float x[4] = {0.f, 0.f, 0.f, 0.f}; /* b0's pair (entry 2 j), b1's (entry 2 j + 1) */
            if (gid < gs) {
#pragma unroll
                for (int b = 0; b < 2; b++) {
                    const int m = 2 * j + b;
                    const float2 a = *(const float2 *)(qh + 8 * (tig + 4 * (m / 4)) + 2 * (m % 4));
                    x[2 * b] = a.x * scale, x[2 * b + 1] = a.y * scale;
                }
            }
            h2_split(x[0], x[1], qb[j][0], qb[j][2]);
            h2_split(x[2], x[3], qb[j][1], qb[j][3]);
        }
    }
    float m0 = -3.0e38f, m1 = -3.0e38f, l0 = 0.0f, l1 = 0.0f; /* heads 2 tig, 2 tig + 1 */
    float acc[4][4];                                            /* out^T m16 tiles of the permuted d */
#pragma unroll
    for (int mt = 0; mt < 4; mt++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            acc[mt][e] = 0.0f;
    for (uint32_t i = warp; i < ntile; i += AW_WARPS) {
        const uint32_t n = min(T, L - i * T);
        uint4 kn[4], vn[4];
        if (i + AW_WARPS < ntile) /* the warp's next tile in flight */
            ad_ld_rows64(kn, vn, kb, vb, kv_dim, t0 + (i + AW_WARPS) * T, min(T, L - (i + AW_WARPS) * T), gid, tig);
        /* S^T: rows gid, gid + 8; columns 2 tig, 2 tig + 1 */
        float ch[4] = {0.f, 0.f, 0.f, 0.f}, cl[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int m0_ = 2 * j, m1_ = 2 * j + 1;
            const uint32_t a[4] = {ad_u4(k[m0_ / 4], m0_ % 4), ad_u4(k[2 + m0_ / 4], m0_ % 4), ad_u4(k[m1_ / 4], m1_ % 4),
                                   ad_u4(k[2 + m1_ / 4], m1_ % 4)};
            k_gm_mma<false>(ch, a, qb[j][0], qb[j][1]);
            k_gm_mma<false>(cl, a, qb[j][2], qb[j][3]);
        }
        const bool ok0 = gid < n, ok1 = gid + 8 < n;
        const float s0 = ok0 ? ch[0] + cl[0] : -3.0e38f, s1 = ok0 ? ch[1] + cl[1] : -3.0e38f;
        const float s2 = ok1 ? ch[2] + cl[2] : -3.0e38f, s3 = ok1 ? ch[3] + cl[3] : -3.0e38f;
        float mx0 = fmaxf(s0, s2), mx1 = fmaxf(s1, s3);
#pragma unroll
        for (int o = 4; o < 32; o <<= 1) {
            mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, o));
            mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, o));
        }
        const float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1), f0 = __expf(m0 - n0), f1 = __expf(m1 - n1);
        const float p0 = ok0 ? __expf(s0 - n0) : 0.0f, p1 = ok0 ? __expf(s1 - n1) : 0.0f;
        const float p2 = ok1 ? __expf(s2 - n0) : 0.0f, p3 = ok1 ? __expf(s3 - n1) : 0.0f;
        float z0 = p0 + p2, z1 = p1 + p3;
#pragma unroll
        for (int o = 4; o < 32; o <<= 1) {
            z0 += __shfl_xor_sync(0xffffffffu, z0, o);
            z1 += __shfl_xor_sync(0xffffffffu, z1, o);
        }
        l0 = l0 * f0 + z0, l1 = l1 * f1 + z1, m0 = n0, m1 = n1;
        /* P^T's B fragments: S^T's layout packed (rows t, columns heads) and transposed */
        uint32_t x0h, x0l, x1h, x1l;
        h2_split(p0, p1, x0h, x0l);
        h2_split(p2, p3, x1h, x1l);
        const uint32_t b0h = ad_movt(x0h), b0l = ad_movt(x0l), b1h = ad_movt(x1h), b1l = ad_movt(x1l);
#pragma unroll
        for (int mt = 0; mt < 4; mt++) {
            acc[mt][0] *= f0, acc[mt][1] *= f1, acc[mt][2] *= f0, acc[mt][3] *= f1;
            /* V^T rows: the blocks (q, j) = (mt / 2, 2 (mt % 2)) and (mt / 2, 2 (mt % 2) + 1) */
            const int q = mt / 2, jl = 2 * (mt % 2);
            const uint32_t a[4] = {ad_movt(ad_u4(v[q], jl)), ad_movt(ad_u4(v[q], jl + 1)),
                                   ad_movt(ad_u4(v[2 + q], jl)), ad_movt(ad_u4(v[2 + q], jl + 1))};
            k_gm_mma<false>(acc[mt], a, b0h, b1h);
            k_gm_mma<false>(acc[mt], a, b0l, b1l);
        }
#pragma unroll
        for (int e = 0; e < 4; e++)
            k[e] = kn[e], v[e] = vn[e];
    }
    /* the warps meet: out^T row gid of block (q, j) is d = 32 q + 8 (gid / 2) + 2 j + gid % 2 */
#pragma unroll
    for (int mt = 0; mt < 4; mt++) {
        const int q = mt / 2, jl = 2 * (mt % 2);
        const uint32_t dlo = 32 * q + 8 * (gid / 2) + 2 * jl + gid % 2, dhi = dlo + 2;
        float *rw = red + (size_t)warp * AW_GS * HD;
        rw[(2 * tig) * HD + dlo] = acc[mt][0], rw[(2 * tig + 1) * HD + dlo] = acc[mt][1];
        rw[(2 * tig) * HD + dhi] = acc[mt][2], rw[(2 * tig + 1) * HD + dhi] = acc[mt][3];
    }
    if (gid == 0) {
        smx[warp * AW_GS + 2 * tig] = m0, smx[warp * AW_GS + 2 * tig + 1] = m1;
        ssm[warp * AW_GS + 2 * tig] = l0, ssm[warp * AW_GS + 2 * tig + 1] = l1;
    }
    __syncthreads();
}

/* Head h, element e (of the original d order) over the warps aw_run64 left in sh: the common max
 * M, the unnormalized output o and the sum l (out = o / l). */
__device__ __forceinline__ void
aw_merge(const float *sh, uint32_t h, uint32_t e, float *M_out, float *o_out, float *l_out)
{
    const float *red = sh, *smx = sh + AW_WARPS * AW_GS * AW_HD, *ssm = smx + AW_WARPS * AW_GS;
    float M = -3.0e38f;
#pragma unroll
    for (int w = 0; w < AW_WARPS; w++)
        M = fmaxf(M, smx[w * AW_GS + h]);
    float o = 0.0f, l = 0.0f;
#pragma unroll
    for (int w = 0; w < AW_WARPS; w++) {
        const float c = __expf(smx[w * AW_GS + h] - M);
        o += red[((size_t)w * AW_GS + h) * AW_HD + e] * c;
        l += ssm[w * AW_GS + h] * c;
    }
    *M_out = M, *o_out = o, *l_out = l;
}

#endif /* K_LLM_ATTN_WARPS_CUH */
