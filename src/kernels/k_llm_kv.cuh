// SPDX-License-Identifier: MIT
/*
 * k_llm_kv.cuh - the KV cache's element on the device: IEEE half (K_LLM_KV_B bytes,
 * k_llm_params.h), written from f32 rounded to nearest even, read into f32. Every kernel
 * that writes the cache (k_llm_rope_kv, the Q|K|V mat-vec epilogues) or reads it (k_llm_attn,
 * the prefill tile/mma kernels, the decode attention) goes through these, so the element type
 * is one change here and in the twins' ops_llm_kv_* (src/ops/ops_llm.h). Why f16 and not f32:
 * decode attention reads the whole cache every step, so its bytes set the step time at depth
 * (1B shape at 32,768 positions: 2.1 GB per token in f32, half that in f16), and a cache of
 * LLaMA-3's 131,072 positions fits in half the memory; llama.cpp's default cache type is f16
 * too, so perplexities compare like for like.
 */
#ifndef K_LLM_KV_CUH
#define K_LLM_KV_CUH

#include <cuda_fp16.h>
#include <stdint.h>

typedef __half kv_t;

__device__ __forceinline__ float
kv_ld(const kv_t *p)
{
    return __half2float(*p);
}

__device__ __forceinline__ void
kv_st(kv_t *p, float x)
{
    *p = __float2half_rn(x);
}

/* two adjacent elements (p 4-byte aligned) */
__device__ __forceinline__ void
kv_st2(kv_t *p, float a, float b)
{
    *(__half2 *)p = __floats2half2_rn(a, b);
}

/* 2 / 4 adjacent elements (p 4- / 8-byte aligned); CG: through L2 (.cg) */
template <bool CG>
__device__ __forceinline__ float2
kv_ld2(const kv_t *p)
{
    const uint32_t u = CG ? __ldcg((const unsigned int *)p) : *(const unsigned int *)p;
    return __half22float2(*(const __half2 *)&u);
}

template <bool CG>
__device__ __forceinline__ float4
kv_ld4(const kv_t *p)
{
    const uint2 u = CG ? __ldcg((const uint2 *)p) : *(const uint2 *)p;
    const float2 a = __half22float2(*(const __half2 *)&u.x), b = __half22float2(*(const __half2 *)&u.y);
    return make_float4(a.x, a.y, b.x, b.y);
}

/* 8 adjacent elements (p 16-byte aligned) in one load */
template <bool CG>
__device__ __forceinline__ void
kv_ld8(const kv_t *p, float4 &a, float4 &b)
{
    const uint4 u = CG ? __ldcg((const uint4 *)p) : *(const uint4 *)p;
    const float2 x = __half22float2(*(const __half2 *)&u.x), y = __half22float2(*(const __half2 *)&u.y);
    const float2 z = __half22float2(*(const __half2 *)&u.z), w = __half22float2(*(const __half2 *)&u.w);
    a = make_float4(x.x, x.y, y.x, y.y), b = make_float4(z.x, z.y, w.x, w.y);
}

#endif /* K_LLM_KV_CUH */
