// SPDX-License-Identifier: MIT
/*
 * k_llm_attn_prefill.cu - causal attention of a batch of tokens (prefill) over the f16 KV
 * cache, tiled so that each K/V row read from memory serves a whole block of queries.
 * Same parameters and result as k_llm_attn (k_llm_params.h struct k_llm_attn_params; CPU
 * twin: ops_llm.c twin_attn), another grid: (n_head, ceil(n_tok / QB)).
 *
 * Why: k_llm_attn runs one CTA per (head, token) and re-reads every K and V row of the
 * context for every query; at pp512 on H100 that was 46% of prefill (11.8 ms per 512 tokens,
 * 2026-11-23).
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
#include "k_gemm_mma.h" /* cp.async, ldmatrix and mma wrappers (k_gm_cp16, k_gm_ldsm4_t, k_gm_mma) */
#include "k_llm_f16x2.cuh" /* h2_pack */
#include "k_llm_kv.cuh"
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
    const kv_t *kc = (const kv_t *)(uintptr_t)p.kc_va + g * HD;
    const kv_t *vc = (const kv_t *)(uintptr_t)p.vc_va + g * HD;
    for (uint32_t t0 = 0; t0 < t_end; t0 += KT) {
        __syncthreads(); /* the previous tile is consumed */
        /* stage: thread (j = tid % 32, c = tid / 32) loads K row j's float4 columns c, c + 8, ..
         * (writes to kt[e][j] are conflict-free) and V row parts */
        {
            const uint32_t j = threadIdx.x % KT, c = threadIdx.x / KT, t = t0 + j;
#pragma unroll
            for (int r = 0; r < HD / 4 / (NWARP * WARP / KT); r++) {
                const uint32_t e4 = c + r * (NWARP * WARP / KT);
                float4 k4 = t < t_end ? kv_ld4<false>(kc + (size_t)t * kv_dim + 4 * e4) : make_float4(0, 0, 0, 0);
                kt[4 * e4][j] = k4.x, kt[4 * e4 + 1][j] = k4.y, kt[4 * e4 + 2][j] = k4.z, kt[4 * e4 + 3][j] = k4.w;
            }
            for (uint32_t x = threadIdx.x; x < KT * HD / 4; x += NWARP * WARP) {
                const uint32_t row = x / (HD / 4), col = x % (HD / 4), tv = t0 + row;
                float4 v4 = tv < t_end ? kv_ld4<false>(vc + (size_t)tv * kv_dim + 4 * col) : make_float4(0, 0, 0, 0);
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

/* ---- tensor-core path: k_llm_attn_mma (head_dim 64), k_llm_attn_mma_hd128 ----
 *
 * Why: at depth the scalar kernel above is most of prefill (H200 pp512 after 4096 cached
 * positions: 14.4k tokens/s vs llama.cpp's 26.5k, bench/results/nvidia-h200/
 * 2026-11-26-s8-vs-llamacpp-vs3.md; ~25 ms of the 35.6 ms per 512 tokens is attention, ~12
 * TFLOP/s). Same parameters, result and grid rule, with K_LLM_ATTN_MMA_QB (64) queries per
 * CTA and K_LLM_ATTN_MMA_SHARED_B(hd) bytes of dynamic shared memory.
 *
 * Shape: 8 warps; warp w takes query rows 16 (w % 4) .. + 15 of the CTA and, of each tile of
 * TK keys, the half w / 4 (TK / 2 keys), keeping its own online softmax (running max and sum
 * per row) and output accumulators; the two halves are merged through shared memory at the
 * end. K and V tiles are copied from the cache (f16, k_llm_kv.cuh) as they are by cp.async (two
 * stages: the next tile lands while this one is used; keys past the last query are zero-filled),
 * rows padded to HD + 8 halves so that the fragment reads below are free of bank conflicts
 * (a row is 4 words past the one before: rows g = 0..7 and word tq = 0..3 hit 32 banks). S =
 * Q K^T and O += P V run on mma.sync m16n8k16 f16 with f32 accumulation: Q (pre-scaled by
 * scale * log2(e), so the softmax uses exp2) stays in registers as f16 A fragments; K's B
 * fragments are two 32-bit shared loads (two adjacent dims of key g); P goes from two S
 * accumulator tiles to an A fragment in registers (the C layout of keys 0-7 and 8-15 is the A
 * layout of k 0-15), and V's B fragments come from ldmatrix.trans (two 8-dim tiles per x4).
 * Why f16 and not TF32 (m16n8k8, until 2026-11-29): twice the work per mma, a quarter of the
 * shared-memory reads and no conversions, for the same rounding (TF32 and f16 both keep 10
 * mantissa bits; K and V are f16 in the cache already) - pp512 after 32,768 cached positions
 * was 16.1k tokens/s, attention ~24 of its 32 ms (H200, 1B).
 * Precision: Q and P rounded to f16 (to nearest; P in [0, 1]; |q scale log2(e)| must stay
 * below 65504), f32 accumulation, so results differ from the f32 twin by about 1e-3 relative
 * (tests/unit/test_llm_attn_prefill.c states and checks the bound). Needs sm_80+ (mma.sync
 * f16, ldmatrix, cp.async). */
#define AM_PAD 8 /* halves */

__device__ __forceinline__ float
am_exp2(float x)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

template <int HD, int TK>
__device__ __forceinline__ void
attn_mma(const struct k_llm_attn_params &p)
{
    constexpr int LD = HD + AM_PAD; /* shared row stride (cache elements) */
    constexpr int KH = TK / 2;      /* keys per warp per tile */
    constexpr int NT = KH / 8;      /* score tiles (8 keys) per warp */
    constexpr int KS = HD / 16;     /* k steps of Q K^T */
    constexpr int ON = HD / 8;      /* output tiles (8 dims) */
    constexpr int STAGE = 2 * TK * LD;
    constexpr int QB = (int)K_LLM_ATTN_MMA_QB;
    static_assert(QB == 64 && NT % 2 == 0 && ON % 2 == 0 && TK * LD * 4 * K_LLM_KV_B == K_LLM_ATTN_MMA_SHARED_B(HD) &&
                      (ON * 4 + 4) * 128 * 4 <= K_LLM_ATTN_MMA_SHARED_B(HD), "tile shape");
    extern __shared__ __align__(16) float am_smem[];
    const uint32_t h = blockIdx.x, i0 = blockIdx.y * QB, tid = threadIdx.x;
    const uint32_t lane = tid % WARP, warp = tid / WARP, rg = warp & 3, kh = warp >> 2;
    const uint32_t g = lane >> 2, tq = lane & 3;
    if (blockDim.x != NWARP * WARP || p.hd != HD || i0 >= p.n_tok || p.pos0 + p.n_tok > p.n_ctx || !p.n_head_kv ||
        p.n_head % p.n_head_kv)
        return;
    const uint32_t grp = h / (p.n_head / p.n_head_kv), kv_dim = p.n_head_kv * HD;
    const uint32_t i_last = min(i0 + QB, p.n_tok) - 1, t_end = p.pos0 + i_last + 1; /* keys [0, t_end) */
    const kv_t *kc = (const kv_t *)(uintptr_t)p.kc_va + grp * HD;
    const kv_t *vc = (const kv_t *)(uintptr_t)p.vc_va + grp * HD;
    /* this thread's rows (C fragment rows g and g + 8), clamped for loads; their positions */
    const uint32_t ra = min(i0 + 16 * rg + g, p.n_tok - 1), rb = min(i0 + 16 * rg + g + 8, p.n_tok - 1);
    const uint32_t qpa = p.pos0 + ra, qpb = p.pos0 + rb;
    const uint32_t wlo = p.pos0 + min(i0 + 16 * rg, p.n_tok - 1), whi = p.pos0 + min(i0 + 16 * rg + 15, p.n_tok - 1);

    auto load_tile = [&](uint32_t t0, uint32_t st) {
        kv_t *ks = (kv_t *)am_smem + st * STAGE, *vs = ks + TK * LD;
#pragma unroll
        for (int c = tid; c < TK * HD / 8; c += NWARP * WARP) {
            const uint32_t row = c / (HD / 8), col = c % (HD / 8), t = t0 + row;
            const bool on = t < t_end;
            const size_t off = (size_t)(on ? t : 0) * kv_dim + 8 * col;
            k_gm_cp16(k_gm_smem(ks + row * LD + 8 * col), kc + off, on ? 16u : 0u);
            k_gm_cp16(k_gm_smem(vs + row * LD + 8 * col), vc + off, on ? 16u : 0u);
        }
        k_gm_commit();
    };
    const uint32_t n_tiles = (t_end + TK - 1) / TK;
    load_tile(0, 0);

    const float qs = p.scale * 1.4426950408889634f; /* scores in log2 units */
    const float *qa = (const float *)(uintptr_t)p.q_va + (size_t)ra * p.q_stride + h * HD;
    const float *qb = (const float *)(uintptr_t)p.q_va + (size_t)rb * p.q_stride + h * HD;
    /* A fragments of k step s: rows ra / rb, dims 16 s + 2 tq (+1) and 16 s + 8 + 2 tq (+1) */
    uint32_t qf[KS][4];
#pragma unroll
    for (int s = 0; s < KS; s++) {
        const int d = 16 * s + 2 * tq;
        qf[s][0] = h2_pack(qa[d] * qs, qa[d + 1] * qs);
        qf[s][1] = h2_pack(qb[d] * qs, qb[d + 1] * qs);
        qf[s][2] = h2_pack(qa[d + 8] * qs, qa[d + 9] * qs);
        qf[s][3] = h2_pack(qb[d + 8] * qs, qb[d + 9] * qs);
    }
    float o[ON][4];
#pragma unroll
    for (int n = 0; n < ON; n++)
        o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float ma = -1.0e30f, mb = -1.0e30f, la = 0.0f, lb = 0.0f;

    for (uint32_t j = 0; j < n_tiles; j++) {
        if (j + 1 < n_tiles)
            load_tile((j + 1) * TK, (j + 1) & 1);
        else
            k_gm_commit(); /* an empty group: the wait below stays 1 */
        k_gm_wait<1>();
        __syncthreads();
        const kv_t *kw = (const kv_t *)am_smem + (j & 1) * STAGE + kh * KH * LD, *vw = kw + TK * LD;
        const uint32_t k0 = j * TK + kh * KH; /* this warp's first key */
        if (k0 <= whi) {                      /* some row sees some of its keys */
            float s[NT][4];
#pragma unroll
            for (int n = 0; n < NT; n++)
                s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
            for (int k = 0; k < KS; k++) {
#pragma unroll
                for (int n = 0; n < NT; n++) { /* B: dims 16 k + 2 tq (+1) and + 8 of key 8 n + g */
                    const kv_t *kr = kw + (8 * n + g) * LD + 16 * k + 2 * tq;
                    k_gm_mma<false>(s[n], qf[k], *(const uint32_t *)kr, *(const uint32_t *)(kr + 8));
                }
            }
            if (k0 + KH - 1 > wlo) { /* causal: keys after a row's position weigh nothing */
#pragma unroll
                for (int n = 0; n < NT; n++) {
#pragma unroll
                    for (int c = 0; c < 2; c++) {
                        const uint32_t key = k0 + 8 * n + 2 * tq + c;
                        if (key > qpa)
                            s[n][c] = -INFINITY;
                        if (key > qpb)
                            s[n][2 + c] = -INFINITY;
                    }
                }
            }
            float xa = ma, xb = mb;
#pragma unroll
            for (int n = 0; n < NT; n++) {
                xa = fmaxf(xa, fmaxf(s[n][0], s[n][1]));
                xb = fmaxf(xb, fmaxf(s[n][2], s[n][3]));
            }
            xa = fmaxf(xa, __shfl_xor_sync(0xffffffffu, xa, 1));
            xa = fmaxf(xa, __shfl_xor_sync(0xffffffffu, xa, 2));
            xb = fmaxf(xb, __shfl_xor_sync(0xffffffffu, xb, 1));
            xb = fmaxf(xb, __shfl_xor_sync(0xffffffffu, xb, 2));
            const float ca = am_exp2(ma - xa), cb = am_exp2(mb - xb);
            ma = xa, mb = xb;
            la *= ca, lb *= cb;
#pragma unroll
            for (int n = 0; n < NT; n++) {
                s[n][0] = am_exp2(s[n][0] - ma), s[n][1] = am_exp2(s[n][1] - ma);
                s[n][2] = am_exp2(s[n][2] - mb), s[n][3] = am_exp2(s[n][3] - mb);
                la += s[n][0] + s[n][1], lb += s[n][2] + s[n][3];
            }
#pragma unroll
            for (int n = 0; n < ON; n++)
                o[n][0] *= ca, o[n][1] *= ca, o[n][2] *= cb, o[n][3] *= cb;
            /* O += P V over 16 keys at a time: A = score tiles 2 k and 2 k + 1 (keys 16 k + 2 tq
             * (+1) and + 8 of rows g, g + 8); B of dim tiles n, n + 1 by one ldmatrix.x4.trans whose
             * matrices are keys 0-7 / 8-15 of dims 8 n and 8 (n + 1) (lane: key lane % 16, tile
             * n + lane / 16) */
#pragma unroll
            for (int k = 0; k < NT / 2; k++) {
                const uint32_t a[4] = {h2_pack(s[2 * k][0], s[2 * k][1]), h2_pack(s[2 * k][2], s[2 * k][3]),
                                       h2_pack(s[2 * k + 1][0], s[2 * k + 1][1]),
                                       h2_pack(s[2 * k + 1][2], s[2 * k + 1][3])};
                const kv_t *vr = vw + (16 * k + (lane & 15)) * LD + 8 * (lane >> 4);
#pragma unroll
                for (int n = 0; n < ON; n += 2) {
                    uint32_t b[4];
                    k_gm_ldsm4_t(b, k_gm_smem(vr + 8 * n));
                    k_gm_mma<false>(o[n], a, b[0], b[1]);
                    k_gm_mma<false>(o[n + 1], a, b[2], b[3]);
                }
            }
        }
        __syncthreads(); /* this stage is consumed before tile j + 2 lands in it */
    }
    k_gm_wait<0>();

    la += __shfl_xor_sync(0xffffffffu, la, 1);
    la += __shfl_xor_sync(0xffffffffu, la, 2);
    lb += __shfl_xor_sync(0xffffffffu, lb, 1);
    lb += __shfl_xor_sync(0xffffffffu, lb, 2);
    /* merge the two key halves: warps 4..7 publish (o, m, l) per lane, warps 0..3 combine */
    float *xch = am_smem;
    const uint32_t slot = rg * WARP + lane;
    if (kh) {
#pragma unroll
        for (int n = 0; n < ON; n++)
#pragma unroll
            for (int c = 0; c < 4; c++)
                xch[(n * 4 + c) * 128 + slot] = o[n][c];
        xch[(ON * 4) * 128 + slot] = ma, xch[(ON * 4 + 1) * 128 + slot] = mb;
        xch[(ON * 4 + 2) * 128 + slot] = la, xch[(ON * 4 + 3) * 128 + slot] = lb;
    }
    __syncthreads();
    if (kh)
        return;
    const float m2a = xch[(ON * 4) * 128 + slot], m2b = xch[(ON * 4 + 1) * 128 + slot];
    const float l2a = xch[(ON * 4 + 2) * 128 + slot], l2b = xch[(ON * 4 + 3) * 128 + slot];
    const float na = fmaxf(ma, m2a), nb = fmaxf(mb, m2b);
    const float fa = am_exp2(ma - na), f2a = am_exp2(m2a - na), fb = am_exp2(mb - nb), f2b = am_exp2(m2b - nb);
    const float ia = 1.0f / (la * fa + l2a * f2a), ib = 1.0f / (lb * fb + l2b * f2b);
    const uint32_t row_a = i0 + 16 * rg + g, row_b = row_a + 8;
    float *oa = (float *)(uintptr_t)p.out_va + (size_t)row_a * p.n_head * HD + h * HD + 2 * tq;
    float *ob = oa + (size_t)8 * p.n_head * HD;
#pragma unroll
    for (int n = 0; n < ON; n++) {
        const float v0 = (o[n][0] * fa + xch[(n * 4 + 0) * 128 + slot] * f2a) * ia;
        const float v1 = (o[n][1] * fa + xch[(n * 4 + 1) * 128 + slot] * f2a) * ia;
        const float v2 = (o[n][2] * fb + xch[(n * 4 + 2) * 128 + slot] * f2b) * ib;
        const float v3 = (o[n][3] * fb + xch[(n * 4 + 3) * 128 + slot] * f2b) * ib;
        if (row_a < p.n_tok)
            *(float2 *)(oa + 8 * n) = make_float2(v0, v1);
        if (row_b < p.n_tok)
            *(float2 *)(ob + 8 * n) = make_float2(v2, v3);
    }
}

/* grid (n_head, ceil(n_tok / K_LLM_ATTN_MMA_QB)), 256 threads, K_LLM_ATTN_MMA_SHARED_B(hd)
 * bytes of dynamic shared memory (kernel descriptors in ops_llm.c) */
extern "C" __global__ void __launch_bounds__(NWARP * WARP)
k_llm_attn_mma(const struct k_llm_attn_params p)
{
    attn_mma<64, 64>(p);
}

extern "C" __global__ void __launch_bounds__(NWARP * WARP)
k_llm_attn_mma_hd128(const struct k_llm_attn_params p)
{
    attn_mma<128, 32>(p);
}
