/* SPDX-License-Identifier: MIT */
/*
 * ops_elementwise.c - CPU twins and descriptors of k_elementwise.cu. Layer: ops.
 * add/mul/relu/casts are exact (IEEE single operations, RNE conversions from
 * ops_half.c); exp uses libm's expf, within 2 ulp of CUDA's (docs/kernels.md).
 */
#include "ops_half.h"
#include "ops_twin.h"

#include <math.h>

/* Translate y (n * y_B bytes) and x (n * x_B bytes); false on fault or n == 0. */
static bool
twin_unary_arrays(struct hcq_twin_launch *l, uint64_t y_va, uint64_t y_B, uint64_t x_va, uint64_t x_B,
                  uint64_t n, void **y, const void **x)
{
    if (!n)
        return false;
    *y = ops_twin_array(l, y_va, n, y_B);
    if (!*y)
        return false;
    *x = ops_twin_array(l, x_va, n, x_B);
    return *x != NULL;
}

/* c, a, b: f32[n]; false on fault or n == 0. */
static bool
twin_binary_arrays(struct hcq_twin_launch *l, uint64_t c_va, uint64_t a_va, uint64_t b_va, uint64_t n,
                   float **c, const float **a, const float **b)
{
    if (!n)
        return false;
    *c = ops_twin_array(l, c_va, n, 4);
    if (!*c)
        return false;
    *a = ops_twin_array(l, a_va, n, 4);
    if (!*a)
        return false;
    *b = ops_twin_array(l, b_va, n, 4);
    return *b != NULL;
}

static void
twin_add_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_add_f32, p);
    float *c;
    const float *a, *b;
    if (!twin_binary_arrays(l, p.c_va, p.a_va, p.b_va, p.n, &c, &a, &b))
        return;
    for (uint64_t i = 0; i < p.n; i++)
        c[i] = a[i] + b[i];
}

static void
twin_mul_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_mul_f32, p);
    float *c;
    const float *a, *b;
    if (!twin_binary_arrays(l, p.c_va, p.a_va, p.b_va, p.n, &c, &a, &b))
        return;
    for (uint64_t i = 0; i < p.n; i++)
        c[i] = a[i] * b[i];
}

static void
twin_exp_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_exp_f32, p);
    float *y;
    const float *x;
    if (!twin_unary_arrays(l, p.y_va, 4, p.x_va, 4, p.n, (void **)&y, (const void **)&x))
        return;
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = expf(x[i]);
}

static void
twin_relu_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_relu_f32, p);
    float *y;
    const float *x;
    if (!twin_unary_arrays(l, p.y_va, 4, p.x_va, 4, p.n, (void **)&y, (const void **)&x))
        return;
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f; /* the kernel's expression: NaN and -0 give +0 */
}

static void
twin_cast_f32_f16(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_cast_f32_f16, p);
    uint16_t *y;
    const float *x;
    if (!twin_unary_arrays(l, p.y_va, 2, p.x_va, 4, p.n, (void **)&y, (const void **)&x))
        return;
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = ops_half_f32_to_f16(x[i]);
}

static void
twin_cast_f16_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_cast_f16_f32, p);
    float *y;
    const uint16_t *x;
    if (!twin_unary_arrays(l, p.y_va, 4, p.x_va, 2, p.n, (void **)&y, (const void **)&x))
        return;
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = ops_half_f16_to_f32(x[i]);
}

static void
twin_cast_f32_bf16(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_cast_f32_bf16, p);
    uint16_t *y;
    const float *x;
    if (!twin_unary_arrays(l, p.y_va, 2, p.x_va, 4, p.n, (void **)&y, (const void **)&x))
        return;
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = ops_half_f32_to_bf16(x[i]);
}

static void
twin_cast_bf16_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_cast_bf16_f32, p);
    float *y;
    const uint16_t *x;
    if (!twin_unary_arrays(l, p.y_va, 4, p.x_va, 2, p.n, (void **)&y, (const void **)&x))
        return;
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = ops_half_bf16_to_f32(x[i]);
}

const struct hcq_kernel_desc ops_elementwise_kernels[] = {
    OPS_KERNEL(k_add_f32, "k_elementwise", twin_add_f32),
    OPS_KERNEL(k_mul_f32, "k_elementwise", twin_mul_f32),
    OPS_KERNEL(k_exp_f32, "k_elementwise", twin_exp_f32),
    OPS_KERNEL(k_relu_f32, "k_elementwise", twin_relu_f32),
    OPS_KERNEL(k_cast_f32_f16, "k_elementwise", twin_cast_f32_f16),
    OPS_KERNEL(k_cast_f16_f32, "k_elementwise", twin_cast_f16_f32),
    OPS_KERNEL(k_cast_f32_bf16, "k_elementwise", twin_cast_f32_bf16),
    OPS_KERNEL(k_cast_bf16_f32, "k_elementwise", twin_cast_bf16_f32),
    {0},
};
