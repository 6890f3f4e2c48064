/* SPDX-License-Identifier: MIT */
/*
 * ops_reduce.c - CPU twins and descriptors of k_reduce.cu (sums along either axis of a
 * row-major f32[rows, cols]). Layer: ops. The twins accumulate in double and round once,
 * so they are closer to the exact sum than the kernels' f32 trees (docs/kernels.md).
 */
#include "ops_twin.h"

/* x: f32[rows * cols] and out: f32[out_n]; false on fault or when nothing is written. */
static bool
twin_sum_arrays(struct hcq_twin_launch *l, uint64_t out_va, uint64_t out_n, uint64_t x_va, uint64_t rows,
                uint64_t cols, float **out, const float **x)
{
    if (!out_n)
        return false;
    *out = ops_twin_array(l, out_va, out_n, 4);
    if (!*out)
        return false;
    if (!rows || !cols) { /* nothing to read: the kernel writes zeros */
        *x = NULL;
        return true;
    }
    *x = ops_twin_array(l, x_va, rows * cols, 4); /* both < 2^32: no overflow */
    return *x != NULL;
}

static void
twin_sum_rows_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_sum_rows_f32, p);
    float *out;
    const float *x;
    if (!twin_sum_arrays(l, p.out_va, p.rows, p.x_va, p.rows, p.cols, &out, &x))
        return;
    for (uint64_t r = 0; r < p.rows; r++) {
        double acc = 0.0;
        for (uint64_t c = 0; c < p.cols; c++)
            acc += x[r * p.cols + c];
        out[r] = (float)acc;
    }
}

static void
twin_sum_cols_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_sum_cols_f32, p);
    float *out;
    const float *x;
    if (!twin_sum_arrays(l, p.out_va, p.cols, p.x_va, p.rows, p.cols, &out, &x))
        return;
    for (uint64_t c = 0; c < p.cols; c++) {
        double acc = 0.0;
        for (uint64_t r = 0; r < p.rows; r++)
            acc += x[r * p.cols + c];
        out[c] = (float)acc;
    }
}

const struct hcq_kernel_desc ops_reduce_kernels[] = {
    OPS_KERNEL(k_sum_rows_f32, "k_reduce", twin_sum_rows_f32),
    OPS_KERNEL(k_sum_cols_f32, "k_reduce", twin_sum_cols_f32),
    {0},
};
