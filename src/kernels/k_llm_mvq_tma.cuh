// SPDX-License-Identifier: MIT
/*
 * k_llm_mvq_tma.cuh - a body of the int8-activation decode mat-vec (k_llm_matvec_q8, same
 * parameters, sums and epilogues: k_llm_mvq.cuh) whose weights stream through a ring of
 * shared-memory stages per warp, filled by the copy engine of the SM (cp.async.bulk, TMA's
 * non-tensor form) instead of 16-byte loads into registers.
 * Why (bench/notes-decode.md session 6): the register body holds its bytes in flight in
 * registers, so two of its 256-thread CTAs fill an SM's register file and a dependent launch
 * (HCQ_LAUNCH_DEP_WAIT) can place no CTA until one of them exits - the next mat-vec's weight
 * requests wait for the tail of the previous one. Here the bytes in flight live in shared
 * memory and one lane issues them: a CTA per SM keeps ~55-72 KB of weights in flight with few
 * registers, and the next launch's CTA fits beside it (registers and shared memory) and
 * fills its own ring before griddepcontrol.wait. Measured 27-40% slower than the register
 * body on H100 (session 6): kept as an A/B body (NVHCQ_MVQ=tma).
 * Stage = one pass of one unit (a pass: 32 tasks of a row, one lane each - exactly one
 * repacked group, or 4 Q4_K/Q5_K blocks) of both its rows; stages per warp: as many of the
 * launch's largest stage as fit K_LLM_MVQ_TMA_RING_B (2 for Q6_KR pairs .. 8). Launches whose
 * rows are not whole passes or not 16-byte aligned take the register body.
 * PTX facts (ISA 8.x): cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes needs
 * 16-byte aligned addresses and a size multiple of 16; mbarrier expect_tx / try_wait.parity.
 */
#ifndef K_LLM_MVQ_TMA_CUH
#define K_LLM_MVQ_TMA_CUH

#include "k_llm_mvq.cuh"

/* Bytes of one pass of one row of a type (0: not a q8 type). */
__device__ __forceinline__ uint32_t
q8t_pass_B(uint32_t type)
{
    switch (type) {
    case K_LLM_T_Q6_KR: return 1680;
    case K_LLM_T_Q5_KR: return 1408;
    case K_LLM_T_Q4_KR: return 1152;
    case K_LLM_T_Q8_0R: return 1088;
    case K_LLM_T_Q4_0R: return 576;
    case 12: return 576;
    case 13: return 704;
    default: return 0;
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t
q8t_smem(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ uint4
q8t_lds16(uint32_t a)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a));
    return v;
}

__device__ __forceinline__ uint32_t
q8t_lds4(uint32_t a)
{
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
    return v;
}

__device__ __forceinline__ uint32_t
q8t_lds2(uint32_t a)
{
    unsigned short v;
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(a));
    return v;
}

/* Task L (the lane) of the pass held at shared address s: q8_load's offsets, group 0. */
template <uint32_t TYPE>
__device__ __forceinline__ void
q8t_load(uint32_t s, uint32_t L, struct q8_task &r)
{
    if (TYPE == K_LLM_T_Q6_KR) {
        r.a = q8t_lds16(s + 16 * L);
        r.b = q8t_lds16(s + 512 + 16 * L);
        r.c = q8t_lds16(s + 1024 + 16 * L);
        r.s = q8t_lds4(s + 1536 + 4 * L);
        r.d = q8t_lds2(s + 1664 + 2 * (L / 4));
    } else if (TYPE == K_LLM_T_Q5_KR) {
        r.a = q8t_lds16(s + 16 * L);
        r.b = q8t_lds16(s + 512 + 16 * L);
        r.c = q8t_lds16(s + 1024 + 16 * (2 * (L / 4) + L % 2));
        r.e = q8t_lds16(s + 1280 + 16 * (L / 4));
    } else if (TYPE == K_LLM_T_Q4_KR) {
        r.a = q8t_lds16(s + 16 * L);
        r.b = q8t_lds16(s + 512 + 16 * L);
        r.e = q8t_lds16(s + 1024 + 16 * (L / 4));
    } else if (TYPE == 12 || TYPE == 13) {
        const uint32_t bs = TYPE == 12 ? 144 : 176, b = s + bs * (L / 8), pc = L % 8;
        r.c = q8t_lds16(b);
        r.a = q8t_lds16(b + (TYPE == 12 ? 16 : 48) + 16 * pc);
        if (TYPE == 13)
            r.b = q8t_lds16(b + 16 + 16 * (pc % 2));
    } else if (TYPE == K_LLM_T_Q8_0R) {
        r.a = q8t_lds16(s + 16 * L);
        r.b = q8t_lds16(s + 512 + 16 * L);
        r.d = q8t_lds2(s + 1024 + 2 * L);
    } else { /* Q4_0R */
        r.a = q8t_lds16(s + 16 * L);
        r.d = q8t_lds2(s + 512 + 2 * L);
    }
}

/* One stage (both rows of unit w, pass t / 32) dotted into acc. */
template <uint32_t TYPE>
__device__ __forceinline__ void
q8t_job(const struct q8_rows &w, uint32_t s, uint32_t pb, uint32_t t, const struct q8_sm &sm, float *acc)
{
    struct q8_task r[2];
    q8t_load<TYPE>(s, t % 32, r[0]);
    if (w.has_b)
        q8t_load<TYPE>(s + pb, t % 32, r[1]);
    acc[0] += q8_dot<TYPE>(r[0], t, sm);
    if (w.has_b)
        acc[1] += q8_dot<TYPE>(r[1], t, sm);
}

__device__ __forceinline__ void
q8t_mbar_init(uint32_t bar)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void
q8t_mbar_expect(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void
q8t_bulk(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void
q8t_mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t ok = 0;
    while (!ok)
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(ok)
                     : "r"(bar), "r"(parity)
                     : "memory");
}
#endif

/* Whether every row of the launch is whole passes at 16-byte aligned addresses; the largest
 * pass of its segments in *pb_max. */
__device__ __forceinline__ bool
q8t_ok(const struct k_llm_matvec_params &p, uint32_t *pb_max)
{
    *pb_max = 0;
    if (p.k > K_LLM_MVQ_MAX_K || p.k % 256)
        return false;
#pragma unroll
    for (uint32_t j = 0; j < K_LLM_MV_SEGS; j++) {
        if (j >= p.n_seg)
            break;
        const uint32_t type = j == 0 ? p.seg[0].type : j == 1 ? p.seg[1].type : p.seg[2].type;
        const uint64_t va = j == 0 ? p.seg[0].w_va : j == 1 ? p.seg[1].w_va : p.seg[2].w_va;
        const uint32_t pb = q8t_pass_B(type);
        if (!pb || q8_nt(type, p.k) % 32 || va % 16)
            return false;
        *pb_max = pb > *pb_max ? pb : *pb_max;
    }
    return *pb_max != 0;
}

/* The body. ring: K_LLM_MVQ_TMA_RING_B bytes per warp; bars: K_LLM_MVQ_TMA_SMAX mbarriers
 * per warp (dynamic shared memory, k_llm_matvec.h K_LLM_MVQ_TMA_SHARED_B). */
__device__ __forceinline__ void
q8_matvec_tma(const struct k_llm_matvec_params &p, struct q8_sm &sm, uint8_t *dyn)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t pb_max;
    if (!q8t_ok(p, &pb_max)) {
        q8_matvec_stream(p, sm);
        return;
    }
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, k = p.k;
    const uint32_t stride = 2 * pb_max, S0 = K_LLM_MVQ_TMA_RING_B / stride;
    const uint32_t S = S0 < K_LLM_MVQ_TMA_SMAX ? S0 : K_LLM_MVQ_TMA_SMAX;
    const uint32_t ring = q8t_smem(dyn + (size_t)warp * K_LLM_MVQ_TMA_RING_B);
    const uint32_t bars = q8t_smem(dyn + (size_t)NW * K_LLM_MVQ_TMA_RING_B) + 8 * K_LLM_MVQ_TMA_SMAX * warp;
    uint32_t ub, ue;
    q8_warp_units(p, &ub, &ue);

    if (lane == 0)
        for (uint32_t s = 0; s < S; s++)
            q8t_mbar_init(bars + 8 * s);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncwarp();

    /* issue cursor: the next (unit, pass) to request; every lane keeps it, lane 0 issues */
    struct q8_rows wi;
    uint32_t iu = ub, ip = 0, ipn = 0, ipb = 0, ij = 0;
    if (iu < ue) {
        q8_rows_of(p, iu, wi);
        ipn = q8_nt(wi.type, k) / 32, ipb = q8t_pass_B(wi.type);
    }
    auto issue = [&]() {
        const uint32_t s = ij % S, dst = ring + s * stride, bar = bars + 8 * s;
        if (lane == 0) {
            q8t_mbar_expect(bar, ipb * (wi.has_b ? 2 : 1));
            q8t_bulk(dst, wi.ra + (size_t)ip * ipb, ipb, bar);
            if (wi.has_b)
                q8t_bulk(dst + pb_max, wi.rb + (size_t)ip * ipb, ipb, bar);
        }
        ij++;
        if (++ip == ipn) {
            ip = 0;
            if (++iu < ue) {
                q8_rows_of(p, iu, wi);
                ipn = q8_nt(wi.type, k) / 32, ipb = q8t_pass_B(wi.type);
            }
        }
    };
    for (uint32_t s = 0; s < S && iu < ue; s++)
        issue();
    k_llm_pf_issue(p.pf);
    /* weights only before the wait (never written); x and y after it (k_llm_mvq.cuh) */
    k_dep_launch();
    k_dep_wait();
    q8_prologue<false>(p, sm);

    const q8_epi_std<false> epi{p};
    struct q8_rows wc;
    uint32_t cu = ub, cp = 0, cpn = 0, j = 0;
    if (cu < ue) {
        q8_rows_of(p, cu, wc);
        cpn = q8_nt(wc.type, k) / 32;
    }
    float acc[2] = {0.0f, 0.0f};
    while (cu < ue) {
        const uint32_t s = j % S, st = ring + s * stride;
        q8t_mbar_wait(bars + 8 * s, (j / S) & 1);
        const uint32_t t = cp * 32 + lane;
        switch (wc.type) {
        case 12: q8t_job<12>(wc, st, pb_max, t, sm, acc); break;
        case 13: q8t_job<13>(wc, st, pb_max, t, sm, acc); break;
        case K_LLM_T_Q4_0R: q8t_job<K_LLM_T_Q4_0R>(wc, st, pb_max, t, sm, acc); break;
        case K_LLM_T_Q8_0R: q8t_job<K_LLM_T_Q8_0R>(wc, st, pb_max, t, sm, acc); break;
        case K_LLM_T_Q6_KR: q8t_job<K_LLM_T_Q6_KR>(wc, st, pb_max, t, sm, acc); break;
        case K_LLM_T_Q5_KR: q8t_job<K_LLM_T_Q5_KR>(wc, st, pb_max, t, sm, acc); break;
        case K_LLM_T_Q4_KR: q8t_job<K_LLM_T_Q4_KR>(wc, st, pb_max, t, sm, acc); break;
        default: break;
        }
        /* every lane has used its bytes of stage s (the dot above consumed them): refill it */
        __syncwarp();
        if (iu < ue)
            issue();
        j++;
        if (++cp == cpn) {
            float a = mvq_warp_sum(acc[0]), b = mvq_warp_sum(acc[1]);
            acc[0] = acc[1] = 0.0f;
            if (lane == 0)
                epi(wc, a, b);
            cp = 0;
            if (++cu < ue) {
                q8_rows_of(p, cu, wc);
                cpn = q8_nt(wc.type, k) / 32;
            }
        }
    }
#else
    (void)dyn;
    q8_matvec_stream(p, sm);
#endif
}

#endif /* K_LLM_MVQ_TMA_CUH */
