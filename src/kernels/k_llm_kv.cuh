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

/* The RoPE rotation of the pair (x0, x1) at pair index j of a head of hd at position pos:
 * theta = pos base^(-2j / hd) (/ freqs[j] where given, times pos_scale where > 0), reduced to
 * [-pi, pi] in double, then the fast sincos - no slow-path local memory (stack), the same value
 * as the twins' sinf / cosf to ~1e-7. k_llm_rope_kv and k_llm_gemm_sk's Q|K|V epilogue both
 * rotate through this, so the two give the same bits. */
__device__ __forceinline__ void
kv_rope_rot(uint32_t pos, uint32_t j, uint32_t hd, float base, const float *freqs, float pos_scale, float x0,
            float x1, float &r0, float &r1)
{
    float theta = (float)pos * powf(base, -2.0f * (float)j / (float)hd);
    if (freqs)
        theta /= freqs[j];
    if (pos_scale > 0.0f) /* (llama.cpp: freq_scale times the unscaled angle) */
        theta *= pos_scale;
    double t = (double)theta;
    t -= 6.283185307179586 * rint(t * 0.15915494309189535);
    float c, s;
    __sincosf((float)t, &s, &c);
    r0 = x0 * c - x1 * s;
    r1 = x0 * s + x1 * c;
}

#endif /* K_LLM_KV_CUH */
