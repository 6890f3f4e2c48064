/* SPDX-License-Identifier: MIT */
/*
 * k_llm_attn_rows.cu - causal attention of a batch step's tokens, each over its own KV slot:
 * k_llm_attn's contract (k_llm_params.h struct k_llm_attn_params: per-token {pos, slot} at tok_va
 * or positions pos0 + i, soft-cap, window), head_dim 64 or 128, at most 8 query heads per KV head.
 * k_llm_attn_rows (hd 64) / _hd128 (groups of up to 4 query heads per KV head), _g8 / _hd128_g8
 * (up to 8), grid (n_head_kv, n_tok), K_LLM_BLOCK threads: a block serves every query head of one KV head
 * for one token, so each K and V row is read once for the group. k_llm_attn_rows64: the same grid
 * for head size 64 without soft-cap or window (what the engine takes for such models), the warps
 * streaming 16-row tiles on tensor cores (k_llm_attn_warps.cuh).
 *
 * Why: k_llm_attn runs one block per (query head, token) with a warp per position and scalar
 * cache loads: H200 1B batch step at position 192, 29 us per layer for one token, 91 us for 64
 * (26% of the step). Here, per chunk of K_LLM_BLOCK positions: a thread per position reads its
 * K row with 16-byte loads and scores it for every head of the group (the queries in shared
 * memory, read as broadcasts); block max / sum per head (online softmax across chunks); then
 * warp w accumulates positions w, w + 8, .. of P V with each lane on 2 (hd 64) or 4 (hd 128)
 * adjacent elements, the eight warps' sums added in order at the end.
 * Twin: k_llm_attn's (src/ops/ops_llm.c). Tests: test_llm_batch (batch steps against each
 * sequence alone), test_llm_attn_prefill (against double precision).
 * Error: f32 throughout over the f16 cache; sums in another order than k_llm_attn.
 */
#include "k_llm_attn_warps.cuh" /* aw_run64, aw_merge (k_llm_attn_rows64) */
#include "k_llm_kv.cuh"
#include "k_llm_params.h"

#define AR_W (K_LLM_BLOCK / 32) /* warps */

/* shared memory of the largest instantiation (hd 128, 8 heads): the queries, the chunk's scores,
 * the warps' max / sum, the warps' partial outputs */
#define AR_SMEM_F(hd, gm) ((gm) * (hd) + (gm) * K_LLM_BLOCK + AR_W * (gm) + AR_W * (gm) * (hd))

/* Lane's E elements of V row c0 + t (zeros past the chunk's cn rows: their weight is 0 too). */
template <int E>
static __device__ __forceinline__ void
k_ar_ldv(const kv_t *vc, uint32_t kv_dim, uint32_t c0, uint32_t t, uint32_t cn, uint32_t lane, float v[E])
{
    if (t >= cn) {
#pragma unroll
        for (int e = 0; e < E; e++)
            v[e] = 0.0f;
        return;
    }
    const kv_t *vr = vc + (uint64_t)(c0 + t) * kv_dim + lane * E;
    if (E == 2) {
        const float2 f = kv_ld2<false>(vr);
        v[0] = f.x, v[E - 1] = f.y;
    } else {
        const float4 f = kv_ld4<false>(vr);
        v[0] = f.x, v[1 % E] = f.y, v[2 % E] = f.z, v[3 % E] = f.w;
    }
}

template <int HD, int GM>
static __device__ __forceinline__ void
k_ar_body(const struct k_llm_attn_params &p, float *smem)
{
    constexpr int E = HD / 32; /* elements per lane in the P V phase */
    float *qs = smem;
    float(*sc)[K_LLM_BLOCK] = (float(*)[K_LLM_BLOCK])(qs + GM * HD);
    float(*wred)[GM] = (float(*)[GM])(smem + GM * HD + GM * K_LLM_BLOCK);
    float(*red)[GM * HD] = (float(*)[GM * HD])(smem + GM * HD + GM * K_LLM_BLOCK + AR_W * GM);
    const uint32_t G = p.n_head / p.n_head_kv, g0 = blockIdx.x, i = blockIdx.y;
    const uint32_t tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int32_t *tp = (const int32_t *)p.tok_va;
    const uint32_t n_pos = (tp ? (uint32_t)tp[2 * i] : p.pos0 + i) + 1;
    if (n_pos > p.n_ctx)
        return; /* uniform */
    const uint64_t slot0 = tp ? (uint64_t)(uint32_t)tp[2 * i + 1] * p.slot_stride : 0;
    const uint32_t kv_dim = p.n_head_kv * HD;
    const kv_t *kc = (const kv_t *)p.kc_va + slot0 + g0 * HD, *vc = (const kv_t *)p.vc_va + slot0 + g0 * HD;
    const float *q = (const float *)p.q_va + (uint64_t)i * p.q_stride + (uint64_t)g0 * G * HD;
    for (uint32_t j = tid; j < GM * HD; j += K_LLM_BLOCK)
        qs[j] = j < G * HD ? q[j] : 0.0f;
    float m[GM], z[GM], acc[GM][E];
#pragma unroll
    for (int g = 0; g < GM; g++) {
        m[g] = -INFINITY, z[g] = 0.0f;
#pragma unroll
        for (int e = 0; e < E; e++)
            acc[g][e] = 0.0f;
    }
    __syncthreads();
    const uint32_t first = p.window && n_pos > p.window ? n_pos - p.window : 0;
    for (uint32_t c0 = first; c0 < n_pos; c0 += K_LLM_BLOCK) {
        const uint32_t cn = min((uint32_t)K_LLM_BLOCK, n_pos - c0);
        /* 0. this warp's first 8 V rows of the chunk in flight while the scores are computed */
        float vp[8][E];
#pragma unroll
        for (int u = 0; u < 8; u++)
            k_ar_ldv<E>(vc, kv_dim, c0, warp + u * AR_W, cn, lane, vp[u]);
        /* 1. scores of position c0 + tid for every head of the group */
        float s[GM];
#pragma unroll
        for (int g = 0; g < GM; g++)
            s[g] = 0.0f;
        if (tid < cn) {
            const kv_t *kr = kc + (uint64_t)(c0 + tid) * kv_dim;
#pragma unroll
            for (int j = 0; j < HD; j += 8) {
                float4 a, b;
                kv_ld8<false>(kr + j, a, b);
#pragma unroll
                for (int g = 0; g < GM; g++) {
                    const float4 qa = *(const float4 *)&qs[g * HD + j], qb = *(const float4 *)&qs[g * HD + j + 4];
                    s[g] += qa.x * a.x + qa.y * a.y + qa.z * a.z + qa.w * a.w + qb.x * b.x + qb.y * b.y +
                            qb.z * b.z + qb.w * b.w;
                }
            }
        }
#pragma unroll
        for (int g = 0; g < GM; g++) {
            const float r = p.softcap > 0.0f ? p.softcap * tanhf(s[g] * p.scale / p.softcap) : s[g] * p.scale;
            s[g] = tid < cn ? r : -INFINITY;
            float w = s[g];
            for (int o = 16; o > 0; o >>= 1)
                w = fmaxf(w, __shfl_xor_sync(0xffffffffu, w, o));
            if (lane == 0)
                wred[warp][g] = w;
        }
        __syncthreads();
        /* 2. the chunk's max per head rescales the running sums; p = exp(s - max) */
        float alpha[GM];
#pragma unroll
        for (int g = 0; g < GM; g++) {
            float mc = wred[0][g];
#pragma unroll
            for (int w = 1; w < AR_W; w++)
                mc = fmaxf(mc, wred[w][g]);
            const float mn = fmaxf(m[g], mc);
            alpha[g] = __expf(m[g] - mn); /* (first chunk: exp(-inf) = 0) */
            m[g] = mn;
            const float x = tid < cn ? __expf(s[g] - mn) : 0.0f;
            sc[g][tid] = x;
            s[g] = x;
        }
        __syncthreads(); /* wred read by all; sc complete */
#pragma unroll
        for (int g = 0; g < GM; g++) {
            float w = s[g];
            for (int o = 16; o > 0; o >>= 1)
                w += __shfl_xor_sync(0xffffffffu, w, o);
            if (lane == 0)
                wred[warp][g] = w;
        }
        /* 3. P V: warp `warp` over positions warp, warp + 8, ..; lane on E adjacent elements */
#pragma unroll
        for (int g = 0; g < GM; g++)
#pragma unroll
            for (int e = 0; e < E; e++)
                acc[g][e] *= alpha[g];
        /* rows warp + 8u: the 8 prefetched, then 8 at a time in flight (one at a time, each load
         * waiting on the last, made the P V phase most of a 64-sequence step's attention) */
        for (uint32_t t0 = warp; t0 < cn; t0 += 8 * AR_W) {
            if (t0 != warp)
#pragma unroll
                for (int u = 0; u < 8; u++)
                    k_ar_ldv<E>(vc, kv_dim, c0, t0 + u * AR_W, cn, lane, vp[u]);
#pragma unroll
            for (int u = 0; u < 8; u++) {
                const uint32_t t = t0 + u * AR_W;
#pragma unroll
                for (int g = 0; g < GM; g++) {
                    const float pg = t < cn ? sc[g][t] : 0.0f;
#pragma unroll
                    for (int e = 0; e < E; e++)
                        acc[g][e] += pg * vp[u][e];
                }
            }
        }
        __syncthreads(); /* wred (sums) complete; sc free for the next chunk */
#pragma unroll
        for (int g = 0; g < GM; g++) {
            float zc = 0.0f;
#pragma unroll
            for (int w = 0; w < AR_W; w++)
                zc += wred[w][g];
            z[g] = z[g] * alpha[g] + zc;
        }
        __syncthreads(); /* wred is rewritten by the next chunk */
    }
    /* 4. the warps' partial outputs added in warp order, normalized */
#pragma unroll
    for (int g = 0; g < GM; g++)
#pragma unroll
        for (int e = 0; e < E; e++)
            red[warp][g * HD + lane * E + e] = acc[g][e];
    __syncthreads();
    float *out = (float *)p.out_va + (uint64_t)i * p.n_head * HD + (uint64_t)g0 * G * HD;
    for (uint32_t j = tid; j < G * HD; j += K_LLM_BLOCK) {
        float r = 0.0f;
#pragma unroll
        for (int w = 0; w < AR_W; w++)
            r += red[w][j];
        float zg = z[0];
#pragma unroll
        for (int g = 1; g < GM; g++)
            zg = j / HD == (uint32_t)g ? z[g] : zg;
        out[j] = r / zg;
    }
}

/* One entry per head size and group bound (registers and shared memory of its own largest
 * group): k_llm_attn_rows / _hd128 take 1..4 query heads per KV head, the _g8 entries 1..8. A
 * launch whose block, head size or group does not fit writes nothing. */
template <int HD, int GMAX>
static __device__ __forceinline__ void
k_ar_entry(const struct k_llm_attn_params &p)
{
    __shared__ __align__(16) float smem[AR_SMEM_F(HD, GMAX)];
    if (blockDim.x != K_LLM_BLOCK || p.hd != HD || !p.n_head_kv || p.n_head % p.n_head_kv)
        return;
    const uint32_t G = p.n_head / p.n_head_kv;
    if (G == 1)
        k_ar_body<HD, 1>(p, smem);
    else if (G == 2)
        k_ar_body<HD, 2>(p, smem);
    else if (G <= 4)
        k_ar_body<HD, 4>(p, smem);
    else if (GMAX == 8 && G <= 8)
        k_ar_body<HD, GMAX>(p, smem);
}

/* (Forced to three blocks an SM, <= 85 registers, this entry spilled and lost: H200 batch step
 * attention 10.4 vs 9.0 us a layer at 8 sequences, 26.8 vs 21.7 at 64.) */
extern "C" __global__ void __launch_bounds__(K_LLM_BLOCK)
k_llm_attn_rows(const struct k_llm_attn_params p)
{
    k_ar_entry<64, 4>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_BLOCK)
k_llm_attn_rows_g8(const struct k_llm_attn_params p)
{
    k_ar_entry<64, 8>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_BLOCK)
k_llm_attn_rows_hd128(const struct k_llm_attn_params p)
{
    k_ar_entry<128, 4>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_BLOCK)
k_llm_attn_rows_hd128_g8(const struct k_llm_attn_params p)
{
    k_ar_entry<128, 8>(p);
}

/* Head size 64, no soft-cap or window, up to 8 query heads per KV head: block (g, i) runs the
 * warp-stream core (k_llm_attn_warps.cuh) over token i's slot, rows 0 .. pos, and writes the
 * group's outputs. The engine takes it for such models (llm_model.c, PROG_ATTN_ROWS). */
extern "C" __global__ void __launch_bounds__(K_LLM_BLOCK)
k_llm_attn_rows64(const struct k_llm_attn_params p)
{
    __shared__ __align__(16) float sh[AW_SMEM_FLOATS];
    static_assert(K_LLM_BLOCK == 32 * AW_WARPS, "the core's warps");
    /* (uniform: the block returns before the core's barrier, or every thread reaches it) */
    if (blockDim.x != K_LLM_BLOCK || p.hd != AW_HD || !p.n_head_kv || p.n_head % p.n_head_kv ||
        p.n_head / p.n_head_kv > AW_GS || p.softcap > 0.0f || p.window) {
        k_dep_launch(), k_dep_wait();
        return;
    }
    k_dep_launch();
    k_dep_wait(); /* the {pos, slot} array, q and the cache rows may come from the launches before */
    const uint32_t G = p.n_head / p.n_head_kv, g0 = blockIdx.x, i = blockIdx.y;
    const int32_t *tp = (const int32_t *)p.tok_va;
    const uint32_t n_pos = (tp ? (uint32_t)tp[2 * i] : p.pos0 + i) + 1;
    if (n_pos > p.n_ctx)
        return;
    const uint64_t slot0 = tp ? (uint64_t)(uint32_t)tp[2 * i + 1] * p.slot_stride : 0;
    const uint32_t kv_dim = p.n_head_kv * AW_HD;
    const kv_t *kc = (const kv_t *)p.kc_va + slot0 + g0 * AW_HD, *vc = (const kv_t *)p.vc_va + slot0 + g0 * AW_HD;
    const float *q = (const float *)p.q_va + (uint64_t)i * p.q_stride + (uint64_t)g0 * G * AW_HD;
    aw_run64(kc, vc, kv_dim, q, G, p.scale, 0, n_pos, sh);
    float *out = (float *)p.out_va + (uint64_t)i * p.n_head * AW_HD + (uint64_t)g0 * G * AW_HD;
    for (uint32_t j = threadIdx.x; j < G * AW_HD; j += K_LLM_BLOCK) {
        float M, o, l;
        aw_merge(sh, j / AW_HD, j % AW_HD, &M, &o, &l);
        out[j] = o / l;
    }
}
