// SPDX-License-Identifier: MIT
/*
 * k_llm_attn_prefill.cu - causal attention of a batch of tokens (prefill) over the f32 KV
 * cache, tiled so that each K/V row read from memory serves a whole block of queries.
 * Same parameters and result as k_llm_attn (k_llm_params.h struct k_llm_attn_params; CPU
 * twin: ops_llm.c twin_attn), another grid: (n_head, ceil(n_tok / QB)).
 *
 * Why: k_llm_attn runs one CTA per (head, token) and re-reads every K and V row of the
 * context for every query; at pp512 on H100 that was 46% of prefill (11.8 ms per 512 tokens,
 * bench/results/nvidia-h100/llm-2026-11-23-s3-prefill-profile.md).
 *
 * Shape: a CTA takes QB consecutive queries of one head (8 warps x QW queries; QW 8 for
 * head_dim 64, 4 for 128) and walks the keys in tiles of KT = 32 positions up to its last
 * query's position. Per tile: K is staged transposed (Kt[e][j]: lane j reads its key's
 * column conflict-free) and V as rows in shared memory; lane j scores key j against the
 * warp's queries (their rows read as broadcasts through L1), a per-query online softmax
 * (running max m, per-lane partial sums l) rescales the accumulators, and P V is summed with
 * lane d owning output dims d*E .. d*E+E-1 (E = head_dim / 32), p_j broadcast by shuffle.
 * Keys after a query's position get weight 0 (causal). f32 throughout; differs from
 * k_llm_attn only in summation order (tested against a double reference,
 * tests/unit/test_llm_attn_prefill.c).
 */
#include "k_llm_params.h"

#define WARP 32
#define NWARP 8
#define KT 32

__device__ __forceinline__ float
ap_warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float
ap_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <int E, int QW>
__device__ __forceinline__ void
attn_prefill(const struct k_llm_attn_params &p)
{
    constexpr int HD = 32 * E, QB = NWARP * QW;
    __shared__ __align__(16) float kt[HD][KT]; /* K tile, transposed */
    __shared__ __align__(16) float vs[KT][HD];
    const uint32_t h = blockIdx.x, i0 = blockIdx.y * QB;
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    if (p.hd != HD || i0 >= p.n_tok || p.pos0 + p.n_tok > p.n_ctx || p.n_head % p.n_head_kv)
        return;
    const uint32_t g = h / (p.n_head / p.n_head_kv), kv_dim = p.n_head_kv * HD;
    const uint32_t i_last = min(i0 + QB, p.n_tok) - 1, t_end = p.pos0 + i_last + 1; /* keys [0, t_end) */
    /* this warp's queries: token indices qi[w] (clamped for loads), absolute positions */
    const float *qrow[QW];
    uint32_t qpos[QW];
    bool qon[QW];
#pragma unroll
    for (int w = 0; w < QW; w++) {
        uint32_t i = i0 + warp * QW + w;
        qon[w] = i < p.n_tok;
        i = qon[w] ? i : p.n_tok - 1;
        qrow[w] = (const float *)(uintptr_t)p.q_va + (size_t)i * p.q_stride + h * HD;
        qpos[w] = p.pos0 + i;
    }
    float m[QW], l[QW], acc[QW][E];
#pragma unroll
    for (int w = 0; w < QW; w++) {
        m[w] = -3.0e38f, l[w] = 0.0f;
#pragma unroll
        for (int d = 0; d < E; d++)
            acc[w][d] = 0.0f;
    }
    const float *kc = (const float *)(uintptr_t)p.kc_va + g * HD;
    const float *vc = (const float *)(uintptr_t)p.vc_va + g * HD;
    for (uint32_t t0 = 0; t0 < t_end; t0 += KT) {
        __syncthreads(); /* the previous tile is consumed */
        /* stage: thread (j = tid % 32, c = tid / 32) loads K row j's float4 columns c, c + 8, ..
         * (writes to kt[e][j] are conflict-free) and V row parts */
        {
            const uint32_t j = threadIdx.x % KT, c = threadIdx.x / KT, t = t0 + j;
#pragma unroll
            for (int r = 0; r < HD / 4 / (NWARP * WARP / KT); r++) {
                const uint32_t e4 = c + r * (NWARP * WARP / KT);
                float4 k4 = t < t_end ? *(const float4 *)(kc + (size_t)t * kv_dim + 4 * e4) : make_float4(0, 0, 0, 0);
                kt[4 * e4][j] = k4.x, kt[4 * e4 + 1][j] = k4.y, kt[4 * e4 + 2][j] = k4.z, kt[4 * e4 + 3][j] = k4.w;
            }
            for (uint32_t x = threadIdx.x; x < KT * HD / 4; x += NWARP * WARP) {
                const uint32_t row = x / (HD / 4), col = x % (HD / 4), tv = t0 + row;
                float4 v4 = tv < t_end ? *(const float4 *)(vc + (size_t)tv * kv_dim + 4 * col) : make_float4(0, 0, 0, 0);
                *(float4 *)&vs[row][4 * col] = v4;
            }
        }
        __syncthreads();
        /* scores of key t0 + lane against the warp's queries */
        float s[QW];
#pragma unroll
        for (int w = 0; w < QW; w++)
            s[w] = 0.0f;
#pragma unroll 4
        for (int e = 0; e < HD; e += 4) {
            const float k0 = kt[e][lane], k1 = kt[e + 1][lane], k2 = kt[e + 2][lane], k3 = kt[e + 3][lane];
#pragma unroll
            for (int w = 0; w < QW; w++) {
                const float4 q4 = __ldg((const float4 *)(qrow[w] + e));
                s[w] = fmaf(q4.x, k0, fmaf(q4.y, k1, fmaf(q4.z, k2, fmaf(q4.w, k3, s[w]))));
            }
        }
        const uint32_t t = t0 + lane;
#pragma unroll
        for (int w = 0; w < QW; w++) {
            /* causal: keys after the query's position weigh nothing */
            const bool on = t <= qpos[w];
            const float sc = on ? s[w] * p.scale : -3.0e38f;
            const float mn = fmaxf(m[w], ap_warp_max(sc));
            const float c = __expf(m[w] - mn), pj = on ? __expf(sc - mn) : 0.0f;
            m[w] = mn;
            l[w] = l[w] * c + pj;
#pragma unroll
            for (int d = 0; d < E; d++)
                acc[w][d] *= c;
            s[w] = pj; /* p of key t0 + lane */
        }
        const uint32_t kmax = min((uint32_t)KT, t_end - t0);
        for (uint32_t j = 0; j < kmax; j++) {
            float v[E];
            if constexpr (E == 2) {
                const float2 a = *(const float2 *)&vs[j][2 * lane];
                v[0] = a.x, v[1] = a.y;
            } else {
                const float4 a = *(const float4 *)&vs[j][4 * lane];
                v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
            }
#pragma unroll
            for (int w = 0; w < QW; w++) {
                const float pj = __shfl_sync(0xffffffffu, s[w], j);
#pragma unroll
                for (int d = 0; d < E; d++)
                    acc[w][d] = fmaf(pj, v[d], acc[w][d]);
            }
        }
    }
#pragma unroll
    for (int w = 0; w < QW; w++) {
        const float lt = ap_warp_sum(l[w]);
        if (!qon[w])
            continue;
        float *o = (float *)(uintptr_t)p.out_va + (size_t)(i0 + warp * QW + w) * p.n_head * HD + h * HD + E * lane;
#pragma unroll
        for (int d = 0; d < E; d++)
            o[d] = acc[w][d] / lt;
    }
}

/* grid (n_head, ceil(n_tok / K_LLM_ATTN_TILE_QB(hd))), 256 threads; one kernel per head size
 * (each instance has its own shared memory: 16 KB for 64, 32 KB for 128). */
extern "C" __global__ void __launch_bounds__(NWARP * WARP)
k_llm_attn_tile(const struct k_llm_attn_params p)
{
    attn_prefill<2, 8>(p);
}

extern "C" __global__ void __launch_bounds__(NWARP * WARP)
k_llm_attn_tile_hd128(const struct k_llm_attn_params p)
{
    attn_prefill<4, 4>(p);
}
