/* SPDX-License-Identifier: MIT */
/*
 * ops_select.c - CPU twins and descriptors of k_select.cu (where, comparisons, pow, int32
 * add/pow, 8/32-bit integer to f32 casts). Layer: ops. All exact except pow_f32, which
 * uses libm's powf (correctly rounded or within 1 ulp on glibc) against CUDA's <= 4 ulp:
 * the tests allow 8 ulp between them (docs/kernels.md).
 */
#include "ops_twin.h"
#include "k_select_params.h"

#include <math.h>

/* n elements at each of up to four arrays (sizes elem_B[k]); false on fault or n == 0. */
static bool
twin_arrays(struct hcq_twin_launch *l, uint64_t n, int count, const uint64_t *va, const uint64_t *elem_B,
            void **out)
{
    if (!n)
        return false;
    for (int k = 0; k < count; k++)
        if (!(out[k] = ops_twin_array(l, va[k], n, elem_B[k])))
            return false;
    return true;
}

static void
twin_where_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_where_f32, p);
    void *v[4];
    if (!twin_arrays(l, p.n, 4, (const uint64_t[]){p.y_va, p.c_va, p.a_va, p.b_va},
                     (const uint64_t[]){4, 1, 4, 4}, v))
        return;
    float *y = v[0];
    const uint8_t *c = v[1];
    const float *a = v[2], *b = v[3];
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = c[i] ? a[i] : b[i];
}

static void
twin_cmp_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_cmp_f32, p);
    void *v[3];
    if (!twin_arrays(l, p.n, 3, (const uint64_t[]){p.out_va, p.a_va, p.b_va}, (const uint64_t[]){1, 4, 4}, v))
        return;
    uint8_t *out = v[0];
    const float *a = v[1], *b = v[2];
    for (uint64_t i = 0; i < p.n; i++) {
        float x = a[i], z = b[i];
        bool r;
        switch (p.op) {
        case K_CMP_LT:
            r = x < z;
            break;
        case K_CMP_LE:
            r = x <= z;
            break;
        case K_CMP_EQ:
            r = x == z;
            break;
        case K_CMP_NE:
            r = !(x == z);
            break;
        case K_CMP_GT:
            r = x > z;
            break;
        default:
            r = x >= z;
            break;
        }
        out[i] = r ? 1 : 0;
    }
}

static void
twin_pow_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_pow_f32, p);
    void *v[3];
    if (!twin_arrays(l, p.n, 3, (const uint64_t[]){p.y_va, p.a_va, p.b_va}, (const uint64_t[]){4, 4, 4}, v))
        return;
    float *y = v[0];
    const float *a = v[1], *b = v[2];
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = powf(a[i], b[i]);
}

/* int32 power with the kernel's rules (k_select_params.h). */
int32_t ops_pow_i32(int32_t base, int32_t e);
int32_t
ops_pow_i32(int32_t base, int32_t e)
{
    if (e < 0)
        return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint32_t acc = 1u, x = (uint32_t)base, k = (uint32_t)e;
    while (k) {
        if (k & 1u)
            acc *= x;
        x *= x;
        k >>= 1;
    }
    return (int32_t)acc;
}

static void
twin_pow_i32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_pow_i32, p);
    void *v[3];
    if (!twin_arrays(l, p.n, 3, (const uint64_t[]){p.y_va, p.a_va, p.b_va}, (const uint64_t[]){4, 4, 4}, v))
        return;
    int32_t *y = v[0];
    const int32_t *a = v[1], *b = v[2];
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = ops_pow_i32(a[i], b[i]);
}

static void
twin_add_i32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_add_i32, p);
    void *v[3];
    if (!twin_arrays(l, p.n, 3, (const uint64_t[]){p.c_va, p.a_va, p.b_va}, (const uint64_t[]){4, 4, 4}, v))
        return;
    uint32_t *c = v[0];
    const uint32_t *a = v[1], *b = v[2];
    for (uint64_t i = 0; i < p.n; i++)
        c[i] = a[i] + b[i];
}

static void
twin_cast_i8_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_cast_i8_f32, p);
    void *v[2];
    if (!twin_arrays(l, p.n, 2, (const uint64_t[]){p.y_va, p.x_va}, (const uint64_t[]){4, 1}, v))
        return;
    float *y = v[0];
    const int8_t *x = v[1];
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = (float)x[i];
}

static void
twin_cast_u8_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_cast_u8_f32, p);
    void *v[2];
    if (!twin_arrays(l, p.n, 2, (const uint64_t[]){p.y_va, p.x_va}, (const uint64_t[]){4, 1}, v))
        return;
    float *y = v[0];
    const uint8_t *x = v[1];
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = (float)x[i];
}

static void
twin_cast_i32_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_cast_i32_f32, p);
    void *v[2];
    if (!twin_arrays(l, p.n, 2, (const uint64_t[]){p.y_va, p.x_va}, (const uint64_t[]){4, 4}, v))
        return;
    float *y = v[0];
    const int32_t *x = v[1];
    for (uint64_t i = 0; i < p.n; i++)
        y[i] = (float)x[i]; /* default rounding mode: to nearest even, as cvt.rn */
}

const struct hcq_kernel_desc ops_select_kernels[] = {
    OPS_KERNEL(k_where_f32, "k_select", twin_where_f32),
    OPS_KERNEL(k_cmp_f32, "k_select", twin_cmp_f32),
    OPS_KERNEL(k_pow_f32, "k_select", twin_pow_f32),
    OPS_KERNEL(k_pow_i32, "k_select", twin_pow_i32),
    OPS_KERNEL(k_add_i32, "k_select", twin_add_i32),
    OPS_KERNEL(k_cast_i8_f32, "k_select", twin_cast_i8_f32),
    OPS_KERNEL(k_cast_u8_f32, "k_select", twin_cast_u8_f32),
    OPS_KERNEL(k_cast_i32_f32, "k_select", twin_cast_i32_f32),
    {0},
};
