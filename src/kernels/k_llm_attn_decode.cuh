// SPDX-License-Identifier: MIT
/*
 * k_llm_attn_decode.cuh - device code of the split-K decode attention (src/kernels/
 * k_llm_attn_decode.cu, which describes the method): the short-context path (one CTA per query
 * head), the online-softmax split path of k_llm_attn_decode, the tile ring of
 * k_llm_attn_decode_long and the merge of the partials. Parameters and protocol:
 * k_llm_attn_decode.h.
 */
#ifndef K_LLM_ATTN_DECODE_CUH
#define K_LLM_ATTN_DECODE_CUH

#include "k_device.h"   /* k_dep_launch, k_dep_wait */
#include "k_gemm_mma.h" /* k_gm_cp16, k_gm_commit, k_gm_wait, k_gm_smem (cp.async) */
#include "k_llm_attn_decode.h"
#include "k_llm_f16x2.cuh" /* h2_split */
#include "k_llm_kv.cuh"

#ifndef WARP
#define WARP 32
#endif
#define NWARP (K_LLM_AD_THREADS / WARP)
#define GS K_LLM_AD_MAX_GS

__device__ __forceinline__ float
ad_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* E consecutive floats (q) */
template <int E>
__device__ __forceinline__ void
ld_row(const float *p, float *v)
{
    if (E == 2) {
        float2 a = *(const float2 *)p;
        v[0] = a.x, v[1] = a.y;
    } else {
        float4 a = *(const float4 *)p;
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    }
}

/* E consecutive cache elements (kv_t) into floats */
template <int E>
__device__ __forceinline__ void
ld_row(const kv_t *p, float *v)
{
    if (E == 2) {
        const float2 a = kv_ld2<false>(p);
        v[0] = a.x, v[1] = a.y;
    } else {
        const float4 a = kv_ld4<false>(p);
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    }
}

template <bool CG>
__device__ __forceinline__ float4
ld_f4(const float *p)
{
    return CG ? __ldcg((const float4 *)p) : *(const float4 *)p;
}

template <bool CG>
__device__ __forceinline__ float4
ld_f4(const kv_t *p)
{
    return kv_ld4<CG>(p);
}

/* One shared scratch for both head sizes of the short-context path (a static __shared__ of a
 * non-template function is one array per kernel, where template functions' arrays add up per
 * instantiation): attn_decode_head2's scores [H2_MAXP], [2 NWARP] and group sums [PG][VQ] float4. */
#define K_LLM_AD_S2_FLOATS (K_LLM_AD_H2_MAXP + 2 * NWARP + 4 * K_LLM_AD_THREADS)
__device__ __forceinline__ float *
ad_s2_scratch()
{
    __shared__ __align__(16) float buf[K_LLM_AD_S2_FLOATS];
    return buf;
}

/* Rows of V for thread (pg, vq) of a three-phase path's last phase: rows row0 + tb + pg + r * PG
 * of the KV head whose row 0 is vb (zeros at and past n, relative to row0). */
template <int VR, int PG, bool CG>
__device__ __forceinline__ void
ad_ld_vrows(float4 (&v)[VR], const kv_t *vb, uint32_t kv_dim, uint32_t row0, uint32_t tb, uint32_t n, uint32_t pg,
            uint32_t vq)
{
#pragma unroll
    for (int r = 0; r < VR; r++) {
        const uint32_t t = tb + pg + r * PG;
        v[r] = t < n ? ld_f4<CG>(vb + (size_t)(row0 + t) * kv_dim + 4 * vq) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
}

/* q . K[t] over a row held by LP lanes (8 floats each), summed across them */
template <int LP>
__device__ __forceinline__ float
ad_dot8(float4 q0, float4 q1, float4 k0, float4 k1)
{
    float d = q0.x * k0.x + q0.y * k0.y + q0.z * k0.z + q0.w * k0.w + q1.x * k1.x + q1.y * k1.y + q1.z * k1.z +
              q1.w * k1.w;
#pragma unroll
    for (int o = LP / 2; o > 0; o >>= 1)
        d += __shfl_xor_sync(0xffffffffu, d, o);
    return d;
}

/* Short contexts (n_pos <= p.head_max): one CTA per query head h, which writes the output itself
 * (no partials, fence or counter: at ~64 positions the split path's chain cost more than the
 * work, H100 7.5 us per layer), in three phases with no chain of dependent steps per position.
 * Why three phases: an online softmax over the positions (the form this replaced, in git
 * history) makes every position wait for the previous one's warp reduction and exponentials; at
 * 128 positions that chain, not the bytes (64 KB of K and V), set its time (in-situ profile, H200:
 * 6.4 us per layer, the most of any launch after gate|up and down).
 *   1. scores: HD / 8 lanes per K row (8 floats each), all rows of a round of KR x
 *      (rows per CTA) loaded before any is used; s[t] = q.K[t] * scale into shared memory;
 *   2. softmax: the CTA's max and sum of e^(s - max) (two barriers);
 *   3. out = sum_t p[t] V[t] / sum: HD / 4 threads per V row (a float4 each), PG position
 *      groups; the first VR rows of V are loaded before phase 1 (they do not depend on the
 *      scores), the groups' sums meet in shared memory.
 * n_pos <= K_LLM_AD_H2_MAXP (the score array); larger contexts take the split path. */
template <int HD, bool EARLY = false>
__device__ __forceinline__ void
attn_decode_head2(const struct k_llm_attn_decode_params &p, uint32_t h)
{
    constexpr int LP = HD / 8;                  /* lanes per K row in phase 1 */
    constexpr int RPC = (WARP / LP) * NWARP;    /* K rows per CTA round: 32 (HD 64), 16 (HD 128) */
    constexpr int KR = 4;                       /* rounds of K rows in flight per thread */
    constexpr int VQ = HD / 4;                  /* threads per V row in phase 3 */
    constexpr int PG = K_LLM_AD_THREADS / VQ;   /* position groups: 16 (HD 64), 8 (HD 128) */
    constexpr int VR = 8;                       /* V rows in flight per thread */
    static_assert(K_LLM_AD_H2_MAXP + 2 * NWARP + 4 * PG * VQ <= K_LLM_AD_S2_FLOATS, "scratch");
    float *s_p = ad_s2_scratch(), *s_red = s_p + K_LLM_AD_H2_MAXP;
    float4(*s_acc)[VQ] = (float4(*)[VQ])(s_red + 2 * NWARP);
    const uint32_t n_pos = p.pos + 1, gs = p.n_head / p.n_head_kv, g = h / gs;
    const uint32_t tid = threadIdx.x, lane = tid % WARP, warp = tid / WARP, kv_dim = p.n_head_kv * HD;
    const kv_t *kb = (const kv_t *)(uintptr_t)p.kc_va + g * HD;
    const kv_t *vb = (const kv_t *)(uintptr_t)p.vc_va + g * HD;
    const uint32_t pg = tid / VQ, vq = tid % VQ;
    const uint32_t sub = lane % LP, row = warp * (WARP / LP) + lane / LP;
    float4 v[VR], k0[KR], k1[KR];
    /* EARLY (k_llm_attn_decode; the caller has not waited): the rows before pos were written by
     * earlier decode steps, grids that completed before this step began (the engine waits for
     * every step), so their first V rows and first round of K rows are requested before the
     * PDL wait - one L2/DRAM round trip less after it. Through L2 (.cg): this SM's L1 may hold
     * a line of an earlier sequence at the same position. Row pos is the launch before this
     * one's (its Q|K|V epilogue): loaded after the wait. */
    const uint32_t n_old = EARLY ? p.pos : n_pos;
    ad_ld_vrows<VR, PG, EARLY>(v, vb, kv_dim, 0, 0, n_old, pg, vq);
#pragma unroll
    for (int r = 0; r < KR; r++) {
        const uint32_t t = r * RPC + row;
        if (t < n_old) {
            const kv_t *kr = kb + (size_t)t * kv_dim + 8 * sub;
            kv_ld8<EARLY>(kr, k0[r], k1[r]);
        } else {
            k0[r] = k1[r] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
    }
    if (EARLY) {
        k_dep_launch();
        k_dep_wait();
#pragma unroll
        for (int r = 0; r < VR; r++)
            if (pg + r * PG == p.pos)
                v[r] = ld_f4<false>(vb + (size_t)p.pos * kv_dim + 4 * vq);
#pragma unroll
        for (int r = 0; r < KR; r++)
            if (r * RPC + row == p.pos) {
                const kv_t *kr = kb + (size_t)p.pos * kv_dim + 8 * sub;
                kv_ld8<false>(kr, k0[r], k1[r]);
            }
    }
    /* phase 1 */
    const float *qh = (const float *)(uintptr_t)p.q_va + (size_t)h * HD + 8 * sub;
    float4 q0 = ld_f4<false>(qh), q1 = ld_f4<false>(qh + 4);
    for (uint32_t tb = 0; tb < n_pos; tb += KR * RPC) {
        if (tb) {
#pragma unroll
            for (int r = 0; r < KR; r++) {
                const uint32_t t = tb + r * RPC + row;
                if (t < n_pos) {
                    const kv_t *kr = kb + (size_t)t * kv_dim + 8 * sub;
                    kv_ld8<false>(kr, k0[r], k1[r]);
                } else {
                    k0[r] = k1[r] = make_float4(0.f, 0.f, 0.f, 0.f);
                }
            }
        }
#pragma unroll
        for (int r = 0; r < KR; r++) {
            const float d = ad_dot8<LP>(q0, q1, k0[r], k1[r]);
            const uint32_t t = tb + r * RPC + row;
            if (sub == 0 && t < n_pos)
                s_p[t] = d * p.scale;
        }
    }
    __syncthreads();
    /* phase 2 */
    float mx = -3.0e38f;
    for (uint32_t t = tid; t < n_pos; t += K_LLM_AD_THREADS)
        mx = fmaxf(mx, s_p[t]);
    for (int o = 16; o > 0; o >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    if (lane == 0)
        s_red[warp] = mx;
    __syncthreads();
    float M = s_red[0];
#pragma unroll
    for (int w = 1; w < NWARP; w++)
        M = fmaxf(M, s_red[w]);
    float sum = 0.0f;
    for (uint32_t t = tid; t < n_pos; t += K_LLM_AD_THREADS) {
        const float e = __expf(s_p[t] - M);
        s_p[t] = e;
        sum += e;
    }
    sum = ad_warp_sum(sum);
    if (lane == 0)
        s_red[NWARP + warp] = sum;
    __syncthreads();
    float l = 0.0f;
#pragma unroll
    for (int w = 0; w < NWARP; w++)
        l += s_red[NWARP + w];
    /* phase 3 */
    float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
    for (uint32_t tb = 0;;) {
#pragma unroll
        for (int r = 0; r < VR; r++) {
            const uint32_t t = tb + pg + r * PG;
            const float w = t < n_pos ? s_p[t] : 0.0f;
            a.x += w * v[r].x, a.y += w * v[r].y, a.z += w * v[r].z, a.w += w * v[r].w;
        }
        tb += VR * PG;
        if (tb >= n_pos)
            break;
        ad_ld_vrows<VR, PG, false>(v, vb, kv_dim, 0, tb, n_pos, pg, vq);
    }
    s_acc[pg][vq] = a;
    __syncthreads();
    if (tid < VQ) {
        float4 o = s_acc[0][tid];
#pragma unroll
        for (int j = 1; j < PG; j++) {
            const float4 b = s_acc[j][tid];
            o.x += b.x, o.y += b.y, o.z += b.z, o.w += b.w;
        }
        const float il = 1.0f / l;
        o.x *= il, o.y *= il, o.z *= il, o.w *= il;
        *(float4 *)((float *)(uintptr_t)p.out_va + (size_t)h * HD + 4 * tid) = o;
    }
    __syncthreads(); /* the shared arrays may be reused by the caller's next item */
}

/* ==== Long contexts: tiles of K and V through a cp.async ring (k_llm_attn_decode_long) ==== */

/* Positions per tile: one K tile and one V tile are 2048 elements (4 KiB) each at either head
 * size, 256 chunks of 16 bytes: one chunk of each per thread and tile. */
#define AD_TILE_ELEMS 2048
#define AD_TILE_CHUNKS (AD_TILE_ELEMS / 8)
static_assert(AD_TILE_CHUNKS == K_LLM_AD_THREADS, "one 16-byte chunk of K and one of V per thread and tile");
/* Shared floats of the long path: the ring (K_LLM_AD_TSTAGES x {K, V} tiles), the tile's
 * weights [GS][AD_PW] (a row stride of 40 floats: the B fragments' float2 reads of 16 lanes
 * fall in 16 different bank pairs), rescale factors [GS], max and sum [2][GS]. Its own array
 * (not ad_s2_scratch): k_llm_attn_decode_long holds only this one. */
#define AD_PW 40
#define AD_TILE_FLOATS (K_LLM_AD_TSTAGES * AD_TILE_ELEMS + GS * AD_PW + 3 * GS)
__device__ __forceinline__ float *
ad_tile_scratch()
{
    __shared__ __align__(16) float buf[AD_TILE_FLOATS];
    return buf;
}

/* Copies of tile i (rows row0 .. row0 + n - 1 of KV head g; zeros from n on, not read) into
 * ring stage st. Chunk c of row t sits at chunk position c ^ (t % 8) of its row: the score
 * phase's lanes read 8 rows at the same c, which the swizzle puts in 8 different bank groups. */
template <int HD>
__device__ __forceinline__ void
ad_tile_issue(uint32_t ring_sa, const kv_t *kb, const kv_t *vb, uint32_t kv_dim, uint32_t row0, uint32_t n,
              uint32_t st)
{
    constexpr uint32_t CH = HD / 8; /* chunks per row */
    const uint32_t t = threadIdx.x / CH, c = threadIdx.x % CH;
    const uint32_t dst = ring_sa + ((st * 2 * AD_TILE_CHUNKS) + t * CH + (c ^ (t % 8))) * 16;
    const bool ok = t < n;
    const size_t off = (size_t)(row0 + (ok ? t : 0)) * kv_dim + 8 * c;
    k_gm_cp16(dst, kb + off, ok ? 16 : 0);
    k_gm_cp16(dst + AD_TILE_CHUNKS * 16, vb + off, ok ? 16 : 0);
}

/* CTA (g, s) of the long path over positions [t0, t1): the tiles of K and V stream through a
 * ring of K_LLM_AD_TSTAGES stages (cp.async, K_LLM_AD_TSTAGES - 1 tiles in flight while one is
 * computed), with an online softmax across tiles, on tensor cores (mma.m16n8k16, f16 in, f32
 * accumulate; q and the weights split hi + lo, two mma each, so the result keeps f32 accuracy):
 *   1. warp 0: S^T = K q^T for the tile (rows t, columns the group's heads, padded to 8 with
 *      zero q), the tile's max per head, the new running max m, the factor e^(m_old - m) and
 *      the weights e^(s - m) into shared memory;
 *   2. warp w: out^T[d][h] += V^T P^T for rows d of its 16-row slice (w % (HD / 16)) over tile
 *      rows 16 (w / (HD / 16)) ..: its accumulators rescaled by the factors first.
 * At the end the warps' slices meet in shared memory and the CTA writes the output (one range)
 * or the partial (max, sum, unnormalized sum) per head that ad_merge combines.
 * Why: the three-phase form this replaced loaded 256-row chunks into registers and computed them
 * with no loads in flight: 56 us per layer at depth 32768 on H200 (67 MB of cache, 1.2 TB/s),
 * 69% of a 1B Q4_K_M step; the same ring with f32 FMAs on CUDA cores: 42.5 us. The ranges that
 * end before pos (rows earlier steps wrote) start their copies before the PDL wait. */
template <int HD>
__device__ __forceinline__ void
attn_decode_tiles(const struct k_llm_attn_decode_params &p, uint32_t g, uint32_t s, uint32_t t0, uint32_t t1,
                  bool only)
{
    constexpr uint32_t T = AD_TILE_ELEMS / HD; /* rows per tile: 32 (HD 64), 16 (HD 128) */
    constexpr uint32_t CH = HD / 8;            /* 16-byte chunks per row */
    constexpr uint32_t MT = T / 16, KQ = HD / 16; /* S^T: m16 tiles of rows, k16 steps of q */
    constexpr uint32_t MV = HD / 16, KV = T / 16; /* out^T: m16 slices of d, k16 steps of rows */
    static_assert(MV * KV == NWARP, "one (slice, row step) of out^T per warp");
    static_assert(GS == 8, "heads are the mma's n8 columns");
    constexpr int S = K_LLM_AD_TSTAGES;
    float *ring = ad_tile_scratch();
    float *sw = ring + S * AD_TILE_ELEMS; /* [GS][AD_PW] */
    float *ssc = sw + GS * AD_PW;         /* [GS] */
    float *sml = ssc + GS;                /* max [GS], sum [GS] */
    const uint32_t ring_sa = k_gm_smem(ring);
    const uint32_t gs = p.n_head / p.n_head_kv, kv_dim = p.n_head_kv * HD;
    const uint32_t tid = threadIdx.x, lane = tid % WARP, warp = tid / WARP, gid = lane / 4, tig = lane % 4;
    const kv_t *kb = (const kv_t *)(uintptr_t)p.kc_va + g * HD;
    const kv_t *vb = (const kv_t *)(uintptr_t)p.vc_va + g * HD;
    const uint32_t L = t1 - t0, ntile = (L + T - 1) / T;
    /* the first S - 1 tiles: before the PDL wait where the range ends before pos */
    auto prologue = [&]() {
        for (int i = 0; i < S - 1; i++) {
            if ((uint32_t)i < ntile)
                ad_tile_issue<HD>(ring_sa, kb, vb, kv_dim, t0 + i * T, min(T, L - i * T), i);
            k_gm_commit();
        }
    };
    const bool early = t1 <= p.pos;
    if (early)
        prologue();
    k_dep_launch();
    k_dep_wait();
    if (!early)
        prologue();
    /* warp 0: q^T's B fragments (column gid = head gid, zero past the group), hi and lo */
    uint32_t qb[KQ][4];
    float m0 = -3.0e38f, m1 = -3.0e38f, l0 = 0.0f, l1 = 0.0f; /* heads 2 tig, 2 tig + 1 */
    if (warp == 0) {
        const float *qh = (const float *)(uintptr_t)p.q_va + ((size_t)g * gs + gid) * HD;
#pragma unroll
        for (uint32_t k = 0; k < KQ; k++) {
            float x[4] = {0.f, 0.f, 0.f, 0.f};
            if (gid < gs) {
                const float2 a = *(const float2 *)(qh + 16 * k + 2 * tig);
                const float2 b = *(const float2 *)(qh + 16 * k + 2 * tig + 8);
                x[0] = a.x * p.scale, x[1] = a.y * p.scale, x[2] = b.x * p.scale, x[3] = b.y * p.scale;
            }
            h2_split(x[0], x[1], qb[k][0], qb[k][2]);
            h2_split(x[2], x[3], qb[k][1], qb[k][3]);
        }
    }
    const uint32_t mv = warp % MV, kv = warp / MV;
    float acc[4] = {0.f, 0.f, 0.f, 0.f}; /* out^T rows mv * 16 + gid (+ 8), heads 2 tig (+ 1) */
    for (uint32_t i = 0; i < ntile; i++) {
        k_gm_wait<S - 2>(); /* this thread's copies of tile i have landed */
        __syncthreads();    /* everyone's; and tile i - 1's stage is free */
        {
            const uint32_t j = i + S - 1;
            if (j < ntile)
                ad_tile_issue<HD>(ring_sa, kb, vb, kv_dim, t0 + j * T, min(T, L - j * T), j % S);
            k_gm_commit();
        }
        const uint32_t n = min(T, L - i * T);
        const uint32_t kt_sa = ring_sa + (i % S) * AD_TILE_ELEMS * 4, vt_sa = kt_sa + AD_TILE_CHUNKS * 16;
        if (warp == 0) { /* phase 1 */
            float c[MT][2][4];
#pragma unroll
            for (uint32_t mt = 0; mt < MT; mt++) {
#pragma unroll
                for (int j = 0; j < 4; j++)
                    c[mt][0][j] = c[mt][1][j] = 0.0f;
#pragma unroll
                for (uint32_t k = 0; k < KQ; k++) {
                    const uint32_t row = mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, ck = 2 * k + (lane >> 4);
                    uint32_t a[4];
                    k_gm_ldsm4(a, kt_sa + (row * CH + (ck ^ (row & 7))) * 16);
                    k_gm_mma<false>(c[mt][0], a, qb[k][0], qb[k][1]);
                    k_gm_mma<false>(c[mt][1], a, qb[k][2], qb[k][3]);
                }
            }
            float sc[MT][4], mx0 = -3.0e38f, mx1 = -3.0e38f;
#pragma unroll
            for (uint32_t mt = 0; mt < MT; mt++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const uint32_t t = mt * 16 + gid + 8 * (j / 2);
                    sc[mt][j] = t < n ? c[mt][0][j] + c[mt][1][j] : -3.0e38f;
                    if (j % 2)
                        mx1 = fmaxf(mx1, sc[mt][j]);
                    else
                        mx0 = fmaxf(mx0, sc[mt][j]);
                }
#pragma unroll
            for (int o = 4; o < WARP; o <<= 1) {
                mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, o));
                mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, o));
            }
            const float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1), f0 = __expf(m0 - n0), f1 = __expf(m1 - n1);
            float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
            for (uint32_t mt = 0; mt < MT; mt++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const uint32_t t = mt * 16 + gid + 8 * (j / 2), h = 2 * tig + j % 2;
                    const float e = t < n ? __expf(sc[mt][j] - (j % 2 ? n1 : n0)) : 0.0f;
                    sw[h * AD_PW + t] = e;
                    if (j % 2)
                        s1 += e;
                    else
                        s0 += e;
                }
#pragma unroll
            for (int o = 4; o < WARP; o <<= 1) {
                s0 += __shfl_xor_sync(0xffffffffu, s0, o);
                s1 += __shfl_xor_sync(0xffffffffu, s1, o);
            }
            l0 = l0 * f0 + s0, l1 = l1 * f1 + s1, m0 = n0, m1 = n1;
            if (gid == 0)
                ssc[2 * tig] = f0, ssc[2 * tig + 1] = f1;
        }
        __syncthreads();
        { /* phase 2: out^T slice mv over tile rows 16 kv .. 16 kv + 15 */
            const float f0 = ssc[2 * tig], f1 = ssc[2 * tig + 1];
            acc[0] *= f0, acc[1] *= f1, acc[2] *= f0, acc[3] *= f1;
            const uint32_t j = lane >> 3, tr = kv * 16 + (lane & 7) + (j >> 1) * 8, ck = mv * 2 + (j & 1);
            uint32_t a[4];
            k_gm_ldsm4_t(a, vt_sa + (tr * CH + (ck ^ (tr & 7))) * 16);
            const float2 p0 = *(const float2 *)(sw + gid * AD_PW + kv * 16 + 2 * tig);
            const float2 p1 = *(const float2 *)(sw + gid * AD_PW + kv * 16 + 2 * tig + 8);
            uint32_t b0h, b0l, b1h, b1l;
            h2_split(p0.x, p0.y, b0h, b0l);
            h2_split(p1.x, p1.y, b1h, b1l);
            k_gm_mma<false>(acc, a, b0h, b1h);
            k_gm_mma<false>(acc, a, b0l, b1l);
        }
    }
    k_gm_wait<0>();
    __syncthreads(); /* the ring is free: the warps' slices meet in it */
    float *red = ring; /* [KV][GS][HD] */
    static_assert(KV * GS * HD <= K_LLM_AD_TSTAGES * AD_TILE_ELEMS, "slices fit in the ring");
    {
        const uint32_t d = mv * 16 + gid;
        red[(kv * GS + 2 * tig) * HD + d] = acc[0], red[(kv * GS + 2 * tig + 1) * HD + d] = acc[1];
        red[(kv * GS + 2 * tig) * HD + d + 8] = acc[2], red[(kv * GS + 2 * tig + 1) * HD + d + 8] = acc[3];
    }
    if (warp == 0 && gid == 0)
        sml[2 * tig] = m0, sml[2 * tig + 1] = m1, sml[GS + 2 * tig] = l0, sml[GS + 2 * tig + 1] = l1;
    __syncthreads();
    float *part_all = (float *)(uintptr_t)p.part_va;
    for (uint32_t j = tid; j < gs * HD; j += K_LLM_AD_THREADS) {
        const uint32_t h = j / HD, e = j % HD, hh = g * gs + h;
        float o = 0.0f;
#pragma unroll
        for (uint32_t k = 0; k < KV; k++)
            o += red[(k * GS + h) * HD + e];
        if (only) {
            ((float *)(uintptr_t)p.out_va)[(size_t)hh * HD + e] = o / sml[GS + h];
        } else {
            float *dst = part_all + ((size_t)hh * p.n_split + s) * (HD + 2);
            dst[2 + e] = o;
            if (e == 0)
                dst[0] = sml[h], dst[1] = sml[GS + h];
        }
    }
}

/* The ranges of a step: L = max(K_LLM_AD_MIN_L, roundup8(ceil(n_pos / n_split))) positions
 * each; returns the number of non-empty ones. */
__device__ __forceinline__ uint32_t
ad_ranges(const struct k_llm_attn_decode_params &p, uint32_t *L_out)
{
    const uint32_t n_pos = p.pos + 1;
    uint32_t L = (n_pos + p.n_split - 1) / p.n_split;
    L = (L + 7) & ~7u;
    /* a floor on the range length (K_LLM_AD_MIN_L; with one range the CTA writes the output
     * itself, skipping the partials, fence and counter) */
    L = L < K_LLM_AD_MIN_L ? K_LLM_AD_MIN_L : L;
    *L_out = L;
    return (n_pos + L - 1) / L;
}

/* The last CTA of group g to finish merges the n_valid partials (k_cta_arrive_last):
 * M = max m_s, out = sum_s acc_s w_s with w_s = e^(m_s - M) / sum_s l_s e^(m_s - M); it resets
 * the counter. Its time is L2 round trips (the partials were just written by other SMs), so
 * the loads are issued in as few rounds as possible: every (head, range)'s max and sum at once
 * into shared memory, each head's weights by one warp, then AD_MERGE_BATCH accumulators of an
 * output element per round - loads with no branch around them (the range index clamped, a zero
 * weight past n_valid), which the compiler issues together. Why: the loop this replaced (max,
 * then sums, range by range) made ~16 dependent rounds at 31 ranges: ~7.5k cycles (4 us) of a
 * depth-4096 step's 11 us attention on H200; a version whose loads sat under `r < n_valid ?`
 * was issued one load at a time (16k cycles). */
#define AD_MERGE_BATCH 16
__device__ __forceinline__ void
ad_merge_partials(const struct k_llm_attn_decode_params &p, uint32_t g, uint32_t n_valid, uint32_t hd)
{
    __shared__ float smw[GS][K_LLM_AD_SPLITS_MAX + AD_MERGE_BATCH]; /* max m_s, then the weights w_s */
    __shared__ float sml[GS][K_LLM_AD_SPLITS_MAX];                  /* sum l_s */
    const uint32_t gs = p.n_head / p.n_head_kv;
    const float *part_g = (const float *)(uintptr_t)p.part_va + (size_t)g * gs * p.n_split * (hd + 2);
    for (uint32_t t = threadIdx.x; t < gs * n_valid; t += K_LLM_AD_THREADS) {
        const uint32_t h = t / n_valid, r = t % n_valid;
        const float2 ml = __ldcg((const float2 *)(part_g + ((size_t)h * p.n_split + r) * (hd + 2)));
        smw[h][r] = ml.x, sml[h][r] = ml.y;
    }
    __syncthreads();
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    for (uint32_t h = warp; h < gs; h += NWARP) { /* warp h: head h's weights */
        float M = -3.0e38f;
        for (uint32_t r = lane; r < n_valid; r += WARP)
            M = fmaxf(M, smw[h][r]);
        for (int o = 16; o > 0; o >>= 1)
            M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
        float den = 0.0f;
        for (uint32_t r = lane; r < n_valid; r += WARP)
            den += sml[h][r] * __expf(smw[h][r] - M);
        den = ad_warp_sum(den);
        __syncwarp();
        for (uint32_t r = lane; r < K_LLM_AD_SPLITS_MAX + AD_MERGE_BATCH; r += WARP)
            smw[h][r] = r < n_valid ? __expf(smw[h][r] - M) / den : 0.0f;
    }
    __syncthreads();
    float *out = (float *)(uintptr_t)p.out_va;
    for (uint32_t j = threadIdx.x; j < gs * hd; j += K_LLM_AD_THREADS) {
        const uint32_t h = j / hd, e = j % hd;
        const float *src = part_g + (size_t)h * p.n_split * (hd + 2) + 2 + e;
        float o = 0.0f;
        for (uint32_t r0 = 0; r0 < n_valid; r0 += AD_MERGE_BATCH) {
            float a[AD_MERGE_BATCH];
#pragma unroll
            for (uint32_t u = 0; u < AD_MERGE_BATCH; u++)
                a[u] = __ldcg(src + (size_t)min(r0 + u, n_valid - 1) * (hd + 2));
#pragma unroll
            for (uint32_t u = 0; u < AD_MERGE_BATCH; u++)
                o += a[u] * smw[h][r0 + u];
        }
        out[(g * gs + h) * hd + e] = o;
    }
}

__device__ __forceinline__ void
ad_merge(const struct k_llm_attn_decode_params &p, uint32_t g, uint32_t n_valid, uint32_t hd)
{
    uint32_t *count = (uint32_t *)(uintptr_t)p.count_va + g;
    if (!k_cta_arrive_last(count, n_valid))
        return;
    ad_merge_partials(p, g, n_valid, hd);
    if (threadIdx.x == 0)
        *count = 0; /* ready for the next launch (a later kernel on the queue) */
}

/* The work of CTA (g, s): KV head g over position range s (returns at once where range s is
 * empty). Every thread of the CTA calls it with the same (g, s). With n_pos <= p.head_max,
 * CTA (g, s < group size) takes query head g * group + s alone (attn_decode_head2). */
template <int E, bool EARLY = false>
__device__ __forceinline__ void
attn_decode(const struct k_llm_attn_decode_params &p, uint32_t g, uint32_t s)
{
    if (p.pos + 1 <= p.head_max && p.pos < p.n_ctx && p.pos < K_LLM_AD_H2_MAXP) {
        const uint32_t gsz = p.n_head / p.n_head_kv;
        if (s < gsz)
            attn_decode_head2<32 * E, EARLY>(p, g * gsz + s); /* it waits itself */
        return; /* (a CTA that exits counts as having launched its dependents) */
    }
    if (EARLY) { /* the caller has not waited (k_llm_attn_decode) */
        k_dep_launch();
        k_dep_wait();
    }
    __shared__ float sm_m[NWARP], sm_l[NWARP], sm_acc[NWARP][32 * E];
    const uint32_t n_pos = p.pos + 1, gs = p.n_head / p.n_head_kv;
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, hd = 32 * E;
    uint32_t L;
    const uint32_t n_valid = ad_ranges(p, &L);
    if (s >= n_valid || p.pos >= p.n_ctx)
        return;
    const uint32_t t0 = s * L, t1 = min(t0 + L, n_pos), kv_dim = p.n_head_kv * hd;
    {
        const kv_t *kc = (const kv_t *)(uintptr_t)p.kc_va + g * hd + lane * E;
        const kv_t *vc = (const kv_t *)(uintptr_t)p.vc_va + g * hd + lane * E;
        float q[GS][E], m[GS], l[GS], acc[GS][E];
#pragma unroll
        for (int h = 0; h < GS; h++) {
            m[h] = -3.0e38f, l[h] = 0.0f;
#pragma unroll
            for (int i = 0; i < E; i++)
                acc[h][i] = 0.0f, q[h][i] = 0.0f;
            if (h < (int)gs) {
                ld_row<E>((const float *)(uintptr_t)p.q_va + (g * gs + h) * hd + lane * E, q[h]);
#pragma unroll
                for (int i = 0; i < E; i++)
                    q[h][i] *= p.scale;
            }
        }
        /* U positions per iteration: their K and V loads are issued together (more bytes in
         * flight per warp than one row at a time, which left the loop latency-bound) */
        const int U = 4;
        for (uint32_t tb = t0 + warp; tb < t1; tb += U * NWARP) {
            float k[U][E], v[U][E];
#pragma unroll
            for (int u = 0; u < U; u++) {
                uint32_t t = tb + u * NWARP;
                if (t < t1) {
                    ld_row<E>(kc + (size_t)t * kv_dim, k[u]);
                    ld_row<E>(vc + (size_t)t * kv_dim, v[u]);
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (tb + u * NWARP >= t1)
                    break;
#pragma unroll
                for (int h = 0; h < GS; h++) {
                    if (h >= (int)gs)
                        break;
                    float d = 0.0f;
#pragma unroll
                    for (int i = 0; i < E; i++)
                        d += q[h][i] * k[u][i];
                    d = ad_warp_sum(d);
                    float mn = fmaxf(m[h], d), c = __expf(m[h] - mn), e = __expf(d - mn);
                    l[h] = l[h] * c + e;
#pragma unroll
                    for (int i = 0; i < E; i++)
                        acc[h][i] = acc[h][i] * c + e * v[u][i];
                    m[h] = mn;
                }
            }
        }
        /* merge the warps, one head at a time, and write this CTA's partial */
        float *part = (float *)(uintptr_t)p.part_va;
        for (uint32_t h = 0; h < gs; h++) {
            float mh = m[0], lh = l[0], ah[E];
#pragma unroll
            for (int i = 0; i < E; i++)
                ah[i] = acc[0][i];
#pragma unroll
            for (int j = 0; j < GS; j++)
                if (j == (int)h) {
                    mh = m[j], lh = l[j];
#pragma unroll
                    for (int i = 0; i < E; i++)
                        ah[i] = acc[j][i];
                }
            if (lane == 0)
                sm_m[warp] = mh, sm_l[warp] = lh;
#pragma unroll
            for (int i = 0; i < E; i++)
                sm_acc[warp][lane * E + i] = ah[i];
            __syncthreads();
            float M = -3.0e38f;
#pragma unroll
            for (int w = 0; w < NWARP; w++)
                M = fmaxf(M, sm_m[w]);
            if (n_valid == 1) { /* the only range: normalize and write the output directly */
                float lt = 0.0f;
#pragma unroll
                for (int w = 0; w < NWARP; w++)
                    lt += sm_l[w] * __expf(sm_m[w] - M);
                float *o = (float *)(uintptr_t)p.out_va + (size_t)(g * gs + h) * hd;
                for (uint32_t e = threadIdx.x; e < hd; e += K_LLM_AD_THREADS) {
                    float a = 0.0f;
#pragma unroll
                    for (int w = 0; w < NWARP; w++)
                        a += sm_acc[w][e] * __expf(sm_m[w] - M);
                    o[e] = a / lt;
                }
                __syncthreads();
                continue;
            }
            float *dst = part + ((size_t)(g * gs + h) * p.n_split + s) * (hd + 2);
            for (uint32_t e = threadIdx.x; e < hd; e += K_LLM_AD_THREADS) {
                float a = 0.0f;
#pragma unroll
                for (int w = 0; w < NWARP; w++)
                    a += sm_acc[w][e] * __expf(sm_m[w] - M);
                dst[2 + e] = a;
            }
            if (threadIdx.x == 0) {
                float lt = 0.0f;
#pragma unroll
                for (int w = 0; w < NWARP; w++)
                    lt += sm_l[w] * __expf(sm_m[w] - M);
                dst[0] = M, dst[1] = lt;
            }
            __syncthreads();
        }
        if (n_valid == 1)
            return;
    }
    ad_merge(p, g, n_valid, hd);
}

/* The work of CTA (g, s) of k_llm_attn_decode_long: KV head g over range s in tiles
 * (attn_decode_tiles), then the group's merge. */
template <int HD>
__device__ __forceinline__ void
attn_decode_long(const struct k_llm_attn_decode_params &p, uint32_t g, uint32_t s)
{
    uint32_t L;
    const uint32_t n_valid = ad_ranges(p, &L);
    if (s >= n_valid || p.pos >= p.n_ctx) {
        k_dep_launch();
        return;
    }
    const uint32_t t0 = s * L, t1 = min(t0 + L, p.pos + 1);
    attn_decode_tiles<HD>(p, g, s, t0, t1, n_valid == 1);
    if (n_valid > 1)
        ad_merge(p, g, n_valid, HD);
}

#endif /* K_LLM_ATTN_DECODE_CUH */
