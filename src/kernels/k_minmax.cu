/* SPDX-License-Identifier: MIT */
/*
 * k_minmax.cu - max and min of each row of a row-major f32 matrix x[rows, cols].
 *
 *   k_max_rows_f32  out[r] = max_c x[r, c]
 *   k_min_rows_f32  out[r] = min_c x[r, c]
 *
 * NaN semantics (what tensor libraries' max/min do, not fmaxf's): a NaN anywhere in the
 * row makes the result NaN. Otherwise the result is the largest (smallest) value with
 * +0 ordered above -0, so the answer does not depend on the reduction order and is exact:
 * the twin's sequential loop and the kernel's tree give the same bits (NaN payloads
 * aside). An empty row gives -Inf (max) / +Inf (min).
 * Launch: one block per row (grid-stride over rows with the flat block index), any block
 *   of up to 1024 threads; strided partials, then a shared-memory tree.
 * CPU reference: twins in src/ops/ops_minmax.c. Test: tests/hcq/hcq_suite_ops.c.
 */
#include "k_device.h"
#include "k_select_params.h"

#define K_MINMAX_MAX_THREADS 1024

/* The larger of a and b (NaN wins; +0 above -0); is_min flips the order. */
static __device__ __forceinline__ float
k_pick(float a, float b, bool is_min)
{
    if (a != a)
        return a;
    if (b != b)
        return b;
    if (a == b) /* equal values: only +-0 differ, by the sign bit */
        return (__float_as_uint(a) >> 31) == (is_min ? 1u : 0u) ? a : b;
    return (is_min ? a < b : a > b) ? a : b;
}

static __device__ __forceinline__ void
k_rows_minmax(uint64_t out_va, uint64_t x_va, uint64_t rows, uint64_t cols, bool is_min)
{
    __shared__ float partial[K_MINMAX_MAX_THREADS];
    const float *x = (const float *)x_va;
    float *out = (float *)out_va;
    const float ident = is_min ? __int_as_float(0x7f800000) : __int_as_float((int)0xff800000u);
    const uint32_t t = k_block_thread(), bs = k_block_size();
    uint32_t pow2 = 1;
    while (pow2 < bs)
        pow2 <<= 1;
    for (uint64_t r = k_block_index(); r < rows; r += k_block_count()) {
        const float *row = x + r * cols;
        float acc = ident;
        for (uint64_t c = t; c < cols; c += bs)
            acc = k_pick(acc, row[c], is_min);
        partial[t] = acc;
        __syncthreads();
        for (uint32_t s = pow2 / 2; s > 0; s >>= 1) {
            if (t < s && t + s < bs)
                partial[t] = k_pick(partial[t], partial[t + s], is_min);
            __syncthreads();
        }
        if (t == 0)
            out[r] = partial[0];
        __syncthreads();
    }
}

extern "C" __global__ void
k_max_rows_f32(const struct k_max_rows_f32_params p)
{
    k_rows_minmax(p.out_va, p.x_va, p.rows, p.cols, false);
}

extern "C" __global__ void
k_min_rows_f32(const struct k_min_rows_f32_params p)
{
    k_rows_minmax(p.out_va, p.x_va, p.rows, p.cols, true);
}
