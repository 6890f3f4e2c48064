/* SPDX-License-Identifier: MIT */
/*
 * ops_minmax.c - CPU twins and descriptors of k_minmax.cu: row max/min of f32 matrices
 * with NaN propagation and +0 > -0 (order-independent, so exact against the kernel).
 * Layer: ops.
 */
#include "ops_twin.h"
#include "k_select_params.h"

#include <math.h>

/* The kernel's k_pick: NaN wins; equal values differ only as +-0, by the sign bit. */
float ops_minmax_pick(float a, float b, bool is_min);
float
ops_minmax_pick(float a, float b, bool is_min)
{
    if (isnan(a))
        return a;
    if (isnan(b))
        return b;
    if (a == b)
        return (signbit(a) != 0) == is_min ? a : b;
    return (is_min ? a < b : a > b) ? a : b;
}

static void
twin_rows(struct hcq_twin_launch *l, uint64_t out_va, uint64_t x_va, uint64_t rows, uint64_t cols,
          bool is_min)
{
    if (!rows)
        return;
    float *out = ops_twin_array(l, out_va, rows, 4);
    if (!out)
        return;
    const float *x = NULL;
    if (cols && rows > UINT64_MAX / cols) {
        l->fault = true;
        l->fault_va = x_va;
        return;
    }
    if (cols && !(x = ops_twin_array(l, x_va, rows * cols, 4)))
        return;
    for (uint64_t r = 0; r < rows; r++) {
        float acc = is_min ? INFINITY : -INFINITY;
        for (uint64_t c = 0; c < cols; c++)
            acc = ops_minmax_pick(acc, x[r * cols + c], is_min);
        out[r] = acc;
    }
}

static void
twin_max_rows_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_max_rows_f32, p);
    twin_rows(l, p.out_va, p.x_va, p.rows, p.cols, false);
}

static void
twin_min_rows_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_min_rows_f32, p);
    twin_rows(l, p.out_va, p.x_va, p.rows, p.cols, true);
}

const struct hcq_kernel_desc ops_minmax_kernels[] = {
    OPS_KERNEL(k_max_rows_f32, "k_minmax", twin_max_rows_f32),
    OPS_KERNEL(k_min_rows_f32, "k_minmax", twin_min_rows_f32),
    {0},
};
