/* SPDX-License-Identifier: MIT */
/*
 * k_select.cu - selection, comparison, power and integer element types.
 *
 *   k_where_f32     y[i] = c[i] ? a[i] : b[i]      (c bool as u8; any non-zero is true)
 *   k_cmp_f32       out[i] = a[i] OP b[i]          (u8 0/1; IEEE: NaN compares false, NE true)
 *   k_pow_f32       y[i] = powf(a[i], b[i])        (CUDA powf: <= 4 ulp per the CUDA math
 *                                                   documentation; Annex F special cases)
 *   k_pow_i32       y[i] = a[i] ^ b[i]             (int32, wrapping; negative b: see params)
 *   k_add_i32       c[i] = a[i] + b[i]             (int32, wrapping)
 *   k_cast_i8_f32 / k_cast_u8_f32 / k_cast_i32_f32  y[i] = (float)x[i] (cvt.rn)
 *
 * Layouts: flat arrays of n elements (n may be 0); parameters in k_select_params.h.
 * Launch: any grid/block (grid-stride over the flat launch).
 * CPU reference: twins in src/ops/ops_select.c. Test: tests/hcq/hcq_suite_ops.c.
 */
#include "k_device.h"
#include "k_select_params.h"

extern "C" __global__ void
k_where_f32(const struct k_where_f32_params p)
{
    float *y = (float *)p.y_va;
    const uint8_t *c = (const uint8_t *)p.c_va;
    const float *a = (const float *)p.a_va, *b = (const float *)p.b_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = c[i] ? a[i] : b[i];
}

extern "C" __global__ void
k_cmp_f32(const struct k_cmp_f32_params p)
{
    uint8_t *out = (uint8_t *)p.out_va;
    const float *a = (const float *)p.a_va, *b = (const float *)p.b_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count()) {
        float x = a[i], z = b[i];
        bool r;
        switch (p.op) {
        case K_CMP_LT: r = x < z; break;
        case K_CMP_LE: r = x <= z; break;
        case K_CMP_EQ: r = x == z; break;
        case K_CMP_NE: r = !(x == z); break;
        case K_CMP_GT: r = x > z; break;
        default: r = x >= z; break;
        }
        out[i] = r ? 1 : 0;
    }
}

extern "C" __global__ void
k_pow_f32(const struct k_pow_f32_params p)
{
    float *y = (float *)p.y_va;
    const float *a = (const float *)p.a_va, *b = (const float *)p.b_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = powf(a[i], b[i]);
}

extern "C" __global__ void
k_pow_i32(const struct k_pow_i32_params p)
{
    int32_t *y = (int32_t *)p.y_va;
    const int32_t *a = (const int32_t *)p.a_va, *b = (const int32_t *)p.b_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count()) {
        int32_t base = a[i], e = b[i];
        uint32_t r;
        if (e < 0) {
            r = base == 1 ? 1u : base == -1 ? ((e & 1) ? 0xFFFFFFFFu : 1u) : 0u;
        } else {
            /* square and multiply on uint32: wrapping is defined there */
            uint32_t acc = 1u, x = (uint32_t)base, k = (uint32_t)e;
            while (k) {
                if (k & 1u)
                    acc *= x;
                x *= x;
                k >>= 1;
            }
            r = acc;
        }
        y[i] = (int32_t)r;
    }
}

extern "C" __global__ void
k_add_i32(const struct k_add_i32_params p)
{
    uint32_t *c = (uint32_t *)p.c_va;
    const uint32_t *a = (const uint32_t *)p.a_va, *b = (const uint32_t *)p.b_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        c[i] = a[i] + b[i];
}

extern "C" __global__ void
k_cast_i8_f32(const struct k_cast_i8_f32_params p)
{
    float *y = (float *)p.y_va;
    const int8_t *x = (const int8_t *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = (float)x[i];
}

extern "C" __global__ void
k_cast_u8_f32(const struct k_cast_u8_f32_params p)
{
    float *y = (float *)p.y_va;
    const uint8_t *x = (const uint8_t *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = (float)x[i];
}

extern "C" __global__ void
k_cast_i32_f32(const struct k_cast_i32_f32_params p)
{
    float *y = (float *)p.y_va;
    const int32_t *x = (const int32_t *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        y[i] = __int2float_rn(x[i]);
}
