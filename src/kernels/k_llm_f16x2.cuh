// SPDX-License-Identifier: MIT
/*
 * k_llm_f16x2.cuh - f32 values as the f16x2 operands of the attention kernels' mma.m16n8k16:
 * h2_pack (one rounding: the prefill attention's Q and P, k_llm_attn_prefill.cu) and h2_split
 * (hi + lo, so the products keep f32 accuracy: the decode tile ring, k_llm_attn_decode.cuh, and
 * the warp-stream core, k_llm_attn_warps.cuh). One home so the decode kernels need not include
 * the warp core for its split.
 */
#ifndef K_LLM_F16X2_CUH
#define K_LLM_F16X2_CUH

#include <cuda_fp16.h>
#include <stdint.h>

/* two f32 as f16x2 (round to nearest even), a in the low half (the lower column of a fragment) */
__device__ __forceinline__ uint32_t
h2_pack(float a, float b)
{
    const __half2 h = __floats2half2_rn(a, b);
    return *(const uint32_t *)&h;
}

/* Two f32 as f16x2 hi + lo (x = hi + lo to ~2^-22 relative): the f16 mma's operands, so that
 * the products keep f32 accuracy (K and V are f16 already; q and the weights are f32). */
__device__ __forceinline__ void
h2_split(float x, float y, uint32_t &hi, uint32_t &lo)
{
    const __half2 h = __floats2half2_rn(x, y);
    const __half2 l = __floats2half2_rn(x - __low2float(h), y - __high2float(h));
    hi = *(const uint32_t *)&h, lo = *(const uint32_t *)&l;
}

#endif /* K_LLM_F16X2_CUH */
