/* SPDX-License-Identifier: MIT */
/*
 * k_elementwise.cu - element-wise f32 arithmetic and float format conversions.
 *
 *   k_add_f32 / k_mul_f32   c[i] = a[i] + b[i] / a[i] * b[i]   (IEEE, round to nearest)
 *   k_exp_f32               y[i] = expf(x[i])                  (CUDA expf, <= 2 ulp)
 *   k_relu_f32              y[i] = x[i] > 0 ? x[i] : +0        (NaN -> +0, -0 -> +0)
 *   k_cast_f32_f16 / _bf16  y[i] = x[i] rounded to nearest even (cvt.rn; NaN -> NaN,
 *                           overflow -> Inf)
 *   k_cast_f16_f32 / bf16_f32  exact widening
 * f16/bf16 values travel as their 16-bit patterns (uint16_t). Conversions use PTX cvt
 * directly so no CUDA header is needed (cvt.rn.bf16.f32 needs sm_80, our oldest arch).
 *
 * Layouts: flat arrays of n elements; parameters in k_params.h.
 * Launch: any grid/block (grid-stride over the flat launch); helpers: 256 threads,
 *   ceil(n / 256) blocks capped at 65535 (src/ops/ops_elementwise.c).
 * CPU reference: twins in src/ops/ops_elementwise.c (conversions in src/ops/ops_half.c).
 * Test: tests/hcq/hcq_suite_kernels.c kernel_* (tolerances in docs/kernels.md: exact except exp).
 */
#include "k_device.h"
#include "k_params.h"

static __device__ __forceinline__ uint16_t
k_f32_to_f16_bits(float x)
{
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}

static __device__ __forceinline__ float
k_f16_bits_to_f32(uint16_t h)
{
    float x;
    asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(h));
    return x;
}

static __device__ __forceinline__ uint16_t
k_f32_to_bf16_bits(float x)
{
    uint16_t h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}

extern "C" __global__ void
k_add_f32(const struct k_add_f32_params p)
{
    float *c = (float *)p.c_va;
    const float *a = (const float *)p.a_va, *b = (const float *)p.b_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        c[i] = a[i] + b[i];
}

extern "C" __global__ void
k_mul_f32(const struct k_mul_f32_params p)
{
    float *c = (float *)p.c_va;
    const float *a = (const float *)p.a_va, *b = (const float *)p.b_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        c[i] = a[i] * b[i];
}

extern "C" __global__ void
k_exp_f32(const struct k_exp_f32_params p)
{
    float *y = (float *)p.y_va;
    const float *x = (const float *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = expf(x[i]);
}

extern "C" __global__ void
k_relu_f32(const struct k_relu_f32_params p)
{
    float *y = (float *)p.y_va;
    const float *x = (const float *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

extern "C" __global__ void
k_cast_f32_f16(const struct k_cast_f32_f16_params p)
{
    uint16_t *y = (uint16_t *)p.y_va;
    const float *x = (const float *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = k_f32_to_f16_bits(x[i]);
}

extern "C" __global__ void
k_cast_f16_f32(const struct k_cast_f16_f32_params p)
{
    float *y = (float *)p.y_va;
    const uint16_t *x = (const uint16_t *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = k_f16_bits_to_f32(x[i]);
}

extern "C" __global__ void
k_cast_f32_bf16(const struct k_cast_f32_bf16_params p)
{
    uint16_t *y = (uint16_t *)p.y_va;
    const float *x = (const float *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = k_f32_to_bf16_bits(x[i]);
}

extern "C" __global__ void
k_cast_bf16_f32(const struct k_cast_bf16_f32_params p)
{
    float *y = (float *)p.y_va;
    const uint16_t *x = (const uint16_t *)p.x_va;
    /* bf16 is the top half of an f32: widening is a shift, exact for every value */
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = __uint_as_float((uint32_t)x[i] << 16);
}
