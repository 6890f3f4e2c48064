// SPDX-License-Identifier: MIT
/*
 * k_llm_pf.cuh - the L2 prefetch hint of the decode kernels (struct k_llm_pf, k_llm_matvec.h):
 * the CTAs of a launch split the ranges into slices and each warp's lane 0 issues
 * cp.async.bulk.prefetch.L2 (sm_90+, PTX ISA 8.0: an asynchronous bulk prefetch into L2,
 * size a multiple of 16 bytes) for chunks of its slice. Nothing waits for it.
 */
#ifndef K_LLM_PF_CUH
#define K_LLM_PF_CUH

#include "k_llm_matvec.h"

#define K_LLM_PF_CHUNK 16384u /* bytes per prefetch request */

__device__ __forceinline__ void
k_llm_pf_issue(const struct k_llm_pf &pf)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    if (lane)
        return;
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const uint64_t B = pf.B[r] & ~15u;
        if (!B)
            continue;
        /* this CTA's slice, 16-byte aligned (grids of one or two dimensions) */
        const uint64_t c = blockIdx.x + (uint64_t)gridDim.x * blockIdx.y, nc = (uint64_t)gridDim.x * gridDim.y;
        const uint64_t b = (B * c / nc) & ~15ull, e = (B * (c + 1) / nc) & ~15ull;
        for (uint64_t o = b + (uint64_t)warp * K_LLM_PF_CHUNK; o < e; o += (uint64_t)nw * K_LLM_PF_CHUNK) {
            const uint32_t n = (uint32_t)(e - o < K_LLM_PF_CHUNK ? e - o : K_LLM_PF_CHUNK);
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(pf.va[r] + o), "r"(n) : "memory");
        }
    }
#else
    (void)pf;
#endif
}

#endif /* K_LLM_PF_CUH */
