// SPDX-License-Identifier: MIT
/*
 * k_llm_matvec_ab.cu - A/B variants of the int8-activation decode mat-vec k_llm_matvec_q8
 * (same parameters, k_llm_matvec.h; same CPU twin, src/ops/ops_llm_matvec.c; every variant
 * runs in tests/unit/test_llm_matvec.c). Picked by NVHCQ_MVQ=<suffix> (or NVHCQ_MVQ_LONG=1)
 * for measurements only: each lost to the default on H100 (bench/notes-decode.md).
 *  - split: the earlier unit-per-warp body, units strided over the grid, long rows split over
 *    warps, one task per lane and pass; u2: two tasks per lane and pass;
 *  - s3: the default streaming body capped at 80 registers (3 CTAs per SM; spills a little);
 *  - long: one-row SET/ACC launches keep 4 passes of the row in flight;
 *  - p1: the one-pass prologue (x read once, one CTA barrier; RMS factor applied to the sums);
 *    p2: the two-pass prologue with evict-first weights (the default before the one-pass one);
 *    p1cg: the same with x and y through L2 (ld.global.cg);
 *  - nef: the default without the L2 evict-first policy on weight loads (the default before
 *    session 7; the other variants here load weights without it too);
 *  - tma: weights through a shared-memory ring per warp filled by bulk copies (sm_90+;
 *    k_llm_mvq_tma.cuh), one CTA per SM so the next launch's CTA fits beside it;
 *  - <type>_lb3, <type>_ns: the per-type kernels within 85 registers (NVHCQ_MVQ_LB3=1) and with
 *    x' in logical order in shared memory (NVHCQ_MVQ_SWZ=0);
 *  - q4_0x2d, q8_0x2d: gate|up with part of the units handed out at run time (NVHCQ_MVQ_DYN=1);
 *  - q4_0x2_wp, q8_0x2_wp, q6k_wp: the second pass requested between the PDL wait and the prologue
 *    (NVHCQ_MVQ_WP=1).
 */
#include "k_llm_mvq.cuh"
#include "k_llm_mvq_tma.cuh"

/* Launches of one row per unit whose rows take several passes (A/B: NVHCQ_MVQ_LONG=1 picks it
 * for the FFN down projection; measured slower on H100, bench/notes-decode.md). */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_long(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    if (k_llm_mvq_rpu(&p) == 1 && p.mode != K_LLM_MV_SWIGLU && p.mode != K_LLM_MV_ROPE)
        q8_matvec_long(p, sm);
    else
        q8_matvec_stream(p, sm);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 3)
k_llm_matvec_q8_s3(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream(p, sm);
}

/* x and y through L2 (ld.global.cg) instead of L1: measured with PDL (bench/notes-decode.md) */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_cg(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream<true>(p, sm);
}

/* two passes of weights in flight before the PDL wait (the default: one) */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_e2(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream<false, false, true>(p, sm);
}

/* an L2 prefetch of the warp's own rows before the wait (PDL: while the previous launch drains) */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_pfs(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream<false, true>(p, sm);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 3)
k_llm_matvec_q8_split(const struct k_llm_matvec_params p)
{
    q8_matvec_split<1>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_u2(const struct k_llm_matvec_params p)
{
    q8_matvec_split<2>(p);
}

/* Weights through a ring of shared-memory stages per warp (cp.async.bulk), K_LLM_MVQ_TMA_SHARED_B
 * of dynamic shared memory (its descriptor, src/ops/ops_llm_matvec.c); the engine launches one
 * CTA per SM (NVHCQ_MVQ_CPS) so a dependent launch's CTA fits beside each. */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_tma(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    extern __shared__ __align__(128) uint8_t q8t_dyn[];
    q8_matvec_tma(p, sm, q8t_dyn);
}

/* the one-pass prologue (q8_prologue1) */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_p1(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream<false, false, false, true>(p, sm);
}

/* the two-pass prologue with evict-first weights (the default of session 7's main) */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_p2(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream<false, false, false, false, true>(p, sm);
}

/* the one-pass prologue, x and y through L2 */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_p1cg(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream<true, false, false, true>(p, sm);
}

/* the default body with plain weight loads (no L2 evict-first policy: the default until session 7) */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_nef(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream(p, sm);
}

/* lb3 (session 9, NVHCQ_MVQ_LB3=1): the per-type kernels of k_llm_matvec.cu compiled within
 * 85 registers (__launch_bounds__ min 3 CTAs; no spills for these three types on sm_90, Q6_K
 * would spill 70 B). The grid stays 2 CTAs per SM, so one CTA of the next launch (also within
 * 85) fits beside them and a programmatic dependent starts without waiting for a CTA to retire. */
#define K_LLM_MVQ_TYPED_LB3(NAME, T) K_LLM_MVQ_TYPED_KERNEL(NAME, T, 3, true, false)
K_LLM_MVQ_TYPED_LB3(k_llm_matvec_q8_q4k_lb3, K_LLM_T_Q4_KR)
K_LLM_MVQ_TYPED_LB3(k_llm_matvec_q8_q4_0_lb3, K_LLM_T_Q4_0R)
K_LLM_MVQ_TYPED_LB3(k_llm_matvec_q8_q8_0_lb3, K_LLM_T_Q8_0R)

/* ns (session 11, NVHCQ_MVQ_SWZ=0): the per-type kernels of k_llm_matvec.cu with x' in shared
 * memory in logical block order, as before the conflict-free slots (k_llm_mvq_slot). */
#define K_LLM_MVQ_TYPED_NS(NAME, T) K_LLM_MVQ_TYPED_KERNEL(NAME, T, 2, false, false)
K_LLM_MVQ_TYPED_NS(k_llm_matvec_q8_q4k_ns, K_LLM_T_Q4_KR)
K_LLM_MVQ_TYPED_NS(k_llm_matvec_q8_q5k_ns, K_LLM_T_Q5_KR)
K_LLM_MVQ_TYPED_NS(k_llm_matvec_q8_q4_0_ns, K_LLM_T_Q4_0R)
K_LLM_MVQ_TYPED_NS(k_llm_matvec_q8_q8_0_ns, K_LLM_T_Q8_0R)
K_LLM_MVQ_TYPED_NS(k_llm_matvec_q8_q6k_ns, K_LLM_T_Q6_KR)

/* gate|up of Q4_0 / Q8_0 with a quarter of the units handed out at run time (session 19,
 * k_llm_mvq.cuh q8_matvec_dyn; NVHCQ_MVQ_DYN=1): tg128 -5% on H100 (s141). */
K_LLM_MVQ_X2D_KERNEL(k_llm_matvec_q8_q4_0x2d, K_LLM_T_Q4_0R, K_LLM_T_Q4_0R2)
K_LLM_MVQ_X2D_KERNEL(k_llm_matvec_q8_q8_0x2d, K_LLM_T_Q8_0R, K_LLM_T_Q8_0R2)

/* The default Q4_0 / Q8_0 (two groups) and Q6_K kernels with the second pass requested between
 * the PDL wait and the prologue (session 19; NVHCQ_MVQ_WP=1). */
K_LLM_MVQ_X2WP_KERNEL(k_llm_matvec_q8_q4_0x2_wp, K_LLM_T_Q4_0R, K_LLM_T_Q4_0R2)
K_LLM_MVQ_X2WP_KERNEL(k_llm_matvec_q8_q8_0x2_wp, K_LLM_T_Q8_0R, K_LLM_T_Q8_0R2)
K_LLM_MVQ_TYPEDWP_KERNEL(k_llm_matvec_q8_q6k_wp, K_LLM_T_Q6_KR)
