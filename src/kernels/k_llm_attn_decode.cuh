// SPDX-License-Identifier: MIT
/*
 * k_llm_attn_decode.cuh - device code of the split-K decode attention, shared by its kernel
 * (src/kernels/k_llm_attn_decode.cu, which describes the method) and the persistent decode
 * kernel (src/kernels/k_llm_decode.cu, which runs it as one phase). Parameters and protocol:
 * k_llm_attn_decode.h.
 */
#ifndef K_LLM_ATTN_DECODE_CUH
#define K_LLM_ATTN_DECODE_CUH

#include "k_device.h" /* k_dep_launch, k_dep_wait */
#include "k_llm_attn_decode.h"
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

/* E consecutive floats; CG: through L2 (the persistent decode kernel reads q and the KV row
 * that other CTAs of the same launch wrote). */
template <int E, bool CG>
__device__ __forceinline__ void
ld_row(const float *p, float *v)
{
    if (E == 2) {
        float2 a = CG ? __ldcg((const float2 *)p) : *(const float2 *)p;
        v[0] = a.x, v[1] = a.y;
    } else {
        float4 a = CG ? __ldcg((const float4 *)p) : *(const float4 *)p;
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    }
}

/* E consecutive cache elements (kv_t) into floats */
template <int E, bool CG>
__device__ __forceinline__ void
ld_row(const kv_t *p, float *v)
{
    if (E == 2) {
        const float2 a = kv_ld2<CG>(p);
        v[0] = a.x, v[1] = a.y;
    } else {
        const float4 a = kv_ld4<CG>(p);
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

#define K_LLM_AD_S2_MAXL 256
/* One shared scratch for both head sizes and both paths (a static __shared__ of a non-template
 * function is one array per kernel, where template functions' arrays add up per instantiation):
 * attn_decode_split2's scores [GS][MAXL], max/sum [2 GS], q [GS][128], group sums [NWARP][32]
 * float4, rescale factors [GS]; attn_decode_head2's scores [H2_MAXP], [2 NWARP] and group sums [PG][VQ] float4 fit in it. */
#define K_LLM_AD_S2_FLOATS (GS * K_LLM_AD_S2_MAXL + 2 * GS + GS * 128 + NWARP * 32 * 4 + GS)
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
template <int HD, bool CG, bool EARLY = false>
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
    ad_ld_vrows<VR, PG, CG || EARLY>(v, vb, kv_dim, 0, 0, n_old, pg, vq);
#pragma unroll
    for (int r = 0; r < KR; r++) {
        const uint32_t t = r * RPC + row;
        if (t < n_old) {
            const kv_t *kr = kb + (size_t)t * kv_dim + 8 * sub;
            kv_ld8<CG || EARLY>(kr, k0[r], k1[r]);
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
                v[r] = ld_f4<CG>(vb + (size_t)p.pos * kv_dim + 4 * vq);
#pragma unroll
        for (int r = 0; r < KR; r++)
            if (r * RPC + row == p.pos) {
                const kv_t *kr = kb + (size_t)p.pos * kv_dim + 8 * sub;
                kv_ld8<CG>(kr, k0[r], k1[r]);
            }
    }
    /* phase 1 */
    const float *qh = (const float *)(uintptr_t)p.q_va + (size_t)h * HD + 8 * sub;
    float4 q0 = ld_f4<CG>(qh), q1 = ld_f4<CG>(qh + 4);
    for (uint32_t tb = 0; tb < n_pos; tb += KR * RPC) {
        if (tb) {
#pragma unroll
            for (int r = 0; r < KR; r++) {
                const uint32_t t = tb + r * RPC + row;
                if (t < n_pos) {
                    const kv_t *kr = kb + (size_t)t * kv_dim + 8 * sub;
                    kv_ld8<CG>(kr, k0[r], k1[r]);
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
        ad_ld_vrows<VR, PG, CG>(v, vb, kv_dim, 0, tb, n_pos, pg, vq);
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

/* Long contexts, second form of the split path (SPLITV 1 = the online softmax per
 * warp below, what k_llm_attn_decode keeps; k_llm_attn_decode_long and the persistent kernel
 * take this one). CTA
 * (g, s) takes the gs query heads of KV head g over positions [t0, t1) in the three phases of
 * attn_decode_head2, so no position waits for the previous one's warp reductions and
 * exponentials (the chain that made the split path ~20 us per layer at 4096 positions on H200):
 *   1. scores of every (head, position): HD / 8 lanes per K row, KR rounds of rows in flight,
 *      q of the group's heads in shared memory; s[h][t] into shared memory;
 *   2. per head (warp h): max and sum of e^(s - max), p kept in shared memory;
 *   3. a[h] = sum_t p[h][t] V[t]: HD / 4 threads per V row, the first VR rows loaded before
 *      phase 1; per head, the position groups meet in shared memory.
 * Then the partial (max, sum, unnormalized sum) per head, or the output when the range is the
 * only one - the same format and merge as SPLITV 1. A range longer than K_LLM_AD_S2_MAXL positions
 * (the score array; past 32 x 256 positions with the engine's 32 splits) runs as chunks of that
 * many, each through the three phases, their maxima and sums merged as they come (online
 * softmax across chunks: the accumulators rescaled by e^(old max - new max)). Why: the online
 * softmax per position of SPLITV 1 left tg at depth 32768 at 466 tokens/s on H200 (1B Q4_K_M),
 * a chain of warp reductions per position with 4-byte loads (head_dim 64, f16). */
template <int HD, bool CG>
__device__ __forceinline__ void
attn_decode_split2(const struct k_llm_attn_decode_params &p, uint32_t g, uint32_t s, uint32_t t0, uint32_t t1,
                   bool only, float *so = nullptr)
{
    constexpr int LP = HD / 8;               /* lanes per K row in phase 1 */
    constexpr int RPC = (WARP / LP) * NWARP; /* K rows per CTA round: 32 (HD 64), 16 (HD 128) */
    constexpr int KR = 4;                    /* rounds of K rows in flight per thread */
    constexpr int VQ = HD / 4;               /* threads per V row in phase 3 */
    constexpr int PG = K_LLM_AD_THREADS / VQ; /* position groups: 16 (HD 64), 8 (HD 128) */
    constexpr int VR = 8;                    /* V rows in flight per thread */
    float *sp = ad_s2_scratch();             /* [GS][MAXL] */
    float *sml = sp + GS * K_LLM_AD_S2_MAXL; /* max [GS], sum [GS] */
    float *sq = sml + 2 * GS;                /* q [GS][HD] */
    float4 *sacc = (float4 *)(sq + GS * 128); /* [NWARP][VQ] */
    float *ssc = (float *)(sacc + NWARP * 32);  /* rescale factors [GS] */
    const uint32_t gs = p.n_head / p.n_head_kv;
    const uint32_t tid = threadIdx.x, lane = tid % WARP, warp = tid / WARP, kv_dim = p.n_head_kv * HD;
    const kv_t *kb = (const kv_t *)(uintptr_t)p.kc_va + g * HD;
    const kv_t *vb = (const kv_t *)(uintptr_t)p.vc_va + g * HD;
    const uint32_t pg = tid / VQ, vq = tid % VQ;
    float4 v[VR];
    ad_ld_vrows<VR, PG, CG>(v, vb, kv_dim, t0, 0, min(t1 - t0, (uint32_t)K_LLM_AD_S2_MAXL), pg, vq);
    for (uint32_t i = tid; i < gs * HD; i += K_LLM_AD_THREADS)
        sq[i] = (CG ? __ldcg((const float *)(uintptr_t)p.q_va + (size_t)g * gs * HD + i)
                    : ((const float *)(uintptr_t)p.q_va)[(size_t)g * gs * HD + i]) *
                p.scale;
    if (tid < GS)
        sml[tid] = -3.0e38f, sml[GS + tid] = 0.0f;
    __syncthreads();
    float4 a[GS];
#pragma unroll
    for (int h = 0; h < GS; h++)
        a[h] = make_float4(0.f, 0.f, 0.f, 0.f);
    const uint32_t sub = lane % LP, row = warp * (WARP / LP) + lane / LP;
    for (uint32_t c0 = t0; c0 < t1; c0 += K_LLM_AD_S2_MAXL) {
        const uint32_t n = min(t1 - c0, (uint32_t)K_LLM_AD_S2_MAXL);
        if (c0 != t0)
            ad_ld_vrows<VR, PG, CG>(v, vb, kv_dim, c0, 0, n, pg, vq);
        /* phase 1 */
        for (uint32_t tb = 0; tb < n; tb += KR * RPC) {
            float4 k0[KR], k1[KR];
#pragma unroll
            for (int r = 0; r < KR; r++) {
                const uint32_t t = tb + r * RPC + row;
                if (t < n) {
                    const kv_t *kr = kb + (size_t)(c0 + t) * kv_dim + 8 * sub;
                    kv_ld8<CG>(kr, k0[r], k1[r]);
                } else {
                    k0[r] = k1[r] = make_float4(0.f, 0.f, 0.f, 0.f);
                }
            }
#pragma unroll
            for (int h = 0; h < GS; h++) {
                if (h >= (int)gs)
                    break;
                const float4 q0 = *(const float4 *)(sq + h * HD + 8 * sub), q1 = *(const float4 *)(sq + h * HD + 8 * sub + 4);
#pragma unroll
                for (int r = 0; r < KR; r++) {
                    const float d = ad_dot8<LP>(q0, q1, k0[r], k1[r]);
                    const uint32_t t = tb + r * RPC + row;
                    if (sub == 0 && t < n)
                        sp[h * K_LLM_AD_S2_MAXL + t] = d;
                }
            }
        }
        __syncthreads();
        /* phase 2: warp h takes head h: the chunk's max merged into the running one */
        for (uint32_t h = warp; h < gs; h += NWARP) {
            float *ph = sp + h * K_LLM_AD_S2_MAXL;
            float mx = sml[h];
            for (uint32_t t = lane; t < n; t += WARP)
                mx = fmaxf(mx, ph[t]);
            for (int o = 16; o > 0; o >>= 1)
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
            float sum = 0.0f;
            for (uint32_t t = lane; t < n; t += WARP) {
                const float e = __expf(ph[t] - mx);
                ph[t] = e;
                sum += e;
            }
            sum = ad_warp_sum(sum);
            if (lane == 0) {
                const float c = __expf(sml[h] - mx); /* 0 for the first chunk */
                ssc[h] = c, sml[h] = mx, sml[GS + h] = sml[GS + h] * c + sum;
            }
        }
        __syncthreads();
        /* phase 3 */
#pragma unroll
        for (int h = 0; h < GS; h++) {
            if (h >= (int)gs)
                break;
            const float c = ssc[h];
            a[h].x *= c, a[h].y *= c, a[h].z *= c, a[h].w *= c;
        }
        for (uint32_t tb = 0;;) {
#pragma unroll
            for (int r = 0; r < VR; r++) {
                const uint32_t t = tb + pg + r * PG;
#pragma unroll
                for (int h = 0; h < GS; h++) {
                    if (h >= (int)gs)
                        break;
                    const float w = t < n ? sp[h * K_LLM_AD_S2_MAXL + t] : 0.0f;
                    a[h].x += w * v[r].x, a[h].y += w * v[r].y, a[h].z += w * v[r].z, a[h].w += w * v[r].w;
                }
            }
            tb += VR * PG;
            if (tb >= n)
                break;
            ad_ld_vrows<VR, PG, CG>(v, vb, kv_dim, c0, tb, n, pg, vq);
        }
        __syncthreads(); /* the scores and factors are rewritten by the next chunk */
    }
    float *part = (float *)(uintptr_t)p.part_va;
#pragma unroll
    for (int h = 0; h < GS; h++) {
        if (h >= (int)gs)
            break;
        float4 b = a[h];
        if (VQ < WARP) { /* the warp's position groups first (HD 64: two per warp) */
#pragma unroll
            for (int o = VQ; o < WARP; o <<= 1) {
                b.x += __shfl_xor_sync(0xffffffffu, b.x, o), b.y += __shfl_xor_sync(0xffffffffu, b.y, o);
                b.z += __shfl_xor_sync(0xffffffffu, b.z, o), b.w += __shfl_xor_sync(0xffffffffu, b.w, o);
            }
        }
        if (lane < VQ)
            sacc[warp * VQ + lane] = b;
        __syncthreads();
        if (tid < VQ) {
            float4 o = sacc[tid];
#pragma unroll
            for (int w = 1; w < NWARP; w++) {
                const float4 c = sacc[w * VQ + tid];
                o.x += c.x, o.y += c.y, o.z += c.z, o.w += c.w;
            }
            const uint32_t hh = g * gs + h;
            if (only) {
                const float il = 1.0f / sml[GS + h];
                o.x *= il, o.y *= il, o.z *= il, o.w *= il;
                /* so: the group's output into shared memory instead ([gs][HD]; k_llm_attn_o) */
                *(float4 *)(so ? so + h * HD + 4 * tid : (float *)(uintptr_t)p.out_va + (size_t)hh * HD + 4 * tid) = o;
            } else {
                float *dst = part + ((size_t)hh * p.n_split + s) * (HD + 2);
                dst[2 + 4 * tid] = o.x, dst[3 + 4 * tid] = o.y, dst[4 + 4 * tid] = o.z, dst[5 + 4 * tid] = o.w;
                if (tid == 0)
                    dst[0] = sml[h], dst[1] = sml[GS + h];
            }
        }
        __syncthreads();
    }
}

/* The work of CTA (g, s): KV head g over position range s (returns at once where range s is
 * empty). Every thread of the CTA calls it with the same (g, s). With n_pos <= p.head_max,
 * CTA (g, s < group size) takes query head g * group + s alone (attn_decode_head2). */
template <int E, bool CG, int SPLITV = 1, bool EARLY = false>
__device__ __forceinline__ void
attn_decode(const struct k_llm_attn_decode_params &p, uint32_t g, uint32_t s)
{
    if (p.pos + 1 <= p.head_max && p.pos < p.n_ctx && p.pos < K_LLM_AD_H2_MAXP) {
        const uint32_t gsz = p.n_head / p.n_head_kv;
        if (s < gsz)
            attn_decode_head2<32 * E, CG, EARLY>(p, g * gsz + s); /* it waits itself */
        return; /* (a CTA that exits counts as having launched its dependents) */
    }
    if (EARLY) { /* the caller has not waited (k_llm_attn_decode) */
        k_dep_launch();
        k_dep_wait();
    }
    __shared__ float sm_m[NWARP], sm_l[NWARP], sm_acc[NWARP][32 * E];
    __shared__ bool last;
    const uint32_t n_pos = p.pos + 1, gs = p.n_head / p.n_head_kv;
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, hd = 32 * E;
    uint32_t L = (n_pos + p.n_split - 1) / p.n_split;
    L = (L + 7) & ~7u;
    /* a floor on the range length (K_LLM_AD_MIN_L; with one range the CTA writes the output
     * itself, skipping the partials, fence and counter) */
    L = L < K_LLM_AD_MIN_L ? K_LLM_AD_MIN_L : L;
    const uint32_t n_valid = (n_pos + L - 1) / L;
    if (s >= n_valid || p.pos >= p.n_ctx)
        return;
    const uint32_t t0 = s * L, t1 = min(t0 + L, n_pos), kv_dim = p.n_head_kv * hd;
    if (SPLITV == 2) {
        attn_decode_split2<32 * E, CG>(p, g, s, t0, t1, n_valid == 1);
        if (n_valid == 1)
            return;
        goto merge; /* (the split path's two forms meet at the merge) */
    }
    { /* SPLITV 1, or ranges longer than K_LLM_AD_S2_MAXL */
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
                ld_row<E, CG>((const float *)(uintptr_t)p.q_va + (g * gs + h) * hd + lane * E, q[h]);
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
                    ld_row<E, CG>(kc + (size_t)t * kv_dim, k[u]);
                    ld_row<E, CG>(vc + (size_t)t * kv_dim, v[u]);
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
merge:
    /* the last CTA of the group merges the partials */
    __threadfence();
    __syncthreads();
    unsigned int *count = (unsigned int *)(uintptr_t)p.count_va + g;
    if (threadIdx.x == 0)
        last = atomicAdd(count, 1u) == n_valid - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    const float *part_all = (const float *)(uintptr_t)p.part_va;
    float *out = (float *)(uintptr_t)p.out_va;
    for (uint32_t j = threadIdx.x; j < gs * hd; j += K_LLM_AD_THREADS) {
        uint32_t h = j / hd, e = j % hd;
        const float *src = part_all + (size_t)(g * gs + h) * p.n_split * (hd + 2);
        float M = -3.0e38f;
        for (uint32_t r = 0; r < n_valid; r++)
            M = fmaxf(M, __ldcg(src + r * (hd + 2)));
        float num = 0.0f, den = 0.0f;
        for (uint32_t r = 0; r < n_valid; r++) {
            const float *pr = src + r * (hd + 2);
            float c = __expf(__ldcg(pr) - M);
            den += __ldcg(pr + 1) * c;
            num += __ldcg(pr + 2 + e) * c;
        }
        out[(g * gs + h) * hd + e] = num / den;
    }
    if (threadIdx.x == 0)
        *count = 0; /* ready for the next launch (a later kernel on the queue) */
}

#endif /* K_LLM_ATTN_DECODE_CUH */
