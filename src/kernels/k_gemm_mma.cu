/* SPDX-License-Identifier: MIT */
/*
 * k_gemm_mma.cu - tensor-core GEMMs, C f32[m, n] = A[m, k] . op(B), f32 accumulation:
 *
 *   k_gemm_f16      A f16[m, k],  B f16[k, n]   (C = A . B)
 *   k_gemm_bf16     A bf16[m, k], B bf16[k, n]  (C = A . B)
 *   k_gemm_f16_nt   A f16[m, k],  B f16[n, k]   (C = A . B^T: weights stored one output
 *                                                row after another, as GGUF does)
 *   k_gemm_bf16_nt  A bf16[m, k], B bf16[n, k]  (C = A . B^T)
 * All row-major and dense (leading dimensions k, n or k, n); one parameter struct
 * (k_gemm_params). The body, tiling, preconditions and error bound: k_gemm_mma.h. Tile
 * here: 128 x 128, 2 x 2 warps of 64 x 64, 3 stages of BK = 32 (48 KiB), 128 threads.
 * Launch: block (K_GM_THREADS = 128, 1, 1); launcher ops_launch_gemm (src/ops/ops_gemm.c).
 * CPU reference: twins in src/ops/ops_gemm.c (double accumulation).
 * Test: tests/hcq/hcq_suite_kernels.c kernel_gemm_*; bench: bench/bench_matmul.c.
 */
#ifndef K_GM_BM
#define K_GM_BM 128
#define K_GM_BN 128
#define K_GM_WM 2
#define K_GM_WN 2
#define K_GM_STAGES 3
#endif
#include "k_gemm_mma.h"
#include "k_params.h"

static __device__ __forceinline__ struct k_gm_args
k_gm_from(const struct k_gemm_params &p)
{
    return k_gm_args{ p.c_va, p.a_va, p.b_va, 0, p.m, p.n, p.k, p.n, 0 };
}

#ifndef K_GM_NO_ENTRIES
extern "C" __global__ void __launch_bounds__(K_GM_THREADS)
k_gemm_f16(const struct k_gemm_params p)
{
    k_gm_body<false, false>(k_gm_from(p));
}

extern "C" __global__ void __launch_bounds__(K_GM_THREADS)
k_gemm_bf16(const struct k_gemm_params p)
{
    k_gm_body<true, false>(k_gm_from(p));
}

extern "C" __global__ void __launch_bounds__(K_GM_THREADS)
k_gemm_f16_nt(const struct k_gemm_params p)
{
    k_gm_body<false, true>(k_gm_from(p));
}

extern "C" __global__ void __launch_bounds__(K_GM_THREADS)
k_gemm_bf16_nt(const struct k_gemm_params p)
{
    k_gm_body<true, true>(k_gm_from(p));
}
#endif
