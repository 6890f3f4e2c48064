/* SPDX-License-Identifier: MIT */
/*
 * k_reduce.cu - sums of a row-major f32 matrix x[rows, cols] along either axis.
 *
 *   k_sum_rows_f32  out[r] = sum_c x[r, c]   (reduce axis 1, out is f32[rows])
 *   k_sum_cols_f32  out[c] = sum_r x[r, c]   (reduce axis 0, out is f32[cols])
 *
 * Accumulation is f32 in both; the order differs from the twin, hence a tolerance
 * (docs/kernels.md: |err| <= len * 2^-23 * sum|x|, len the reduced length).
 * Launch, k_sum_rows_f32: one block per row (grid-stride over rows with the flat block
 *   index), any block of up to 1024 threads; each thread adds a strided part of the row,
 *   then a shared-memory tree adds the partials (works for any block size, not only
 *   powers of two). Helper: 256 threads, min(rows, 65535) blocks.
 * Launch, k_sum_cols_f32: one thread per column (grid-stride over the flat launch),
 *   walking down the rows; neighbouring threads read neighbouring columns (coalesced).
 *   Helper: 256 threads, ceil(cols / 256) blocks capped at 65535.
 * A zero-length reduced axis writes 0.
 * CPU reference: twins in src/ops/ops_reduce.c (double accumulation).
 * Test: tests/hcq/hcq_suite_kernels.c kernel_sum_rows_f32, kernel_sum_cols_f32.
 */
#include "k_device.h"
#include "k_params.h"

#define K_SUM_MAX_THREADS 1024 /* CUDA's limit on threads per block */

extern "C" __global__ void
k_sum_rows_f32(const struct k_sum_rows_f32_params p)
{
    __shared__ float partial[K_SUM_MAX_THREADS];
    const float *x = (const float *)p.x_va;
    float *out = (float *)p.out_va;
    const uint32_t t = k_block_thread(), bs = k_block_size();
    uint32_t pow2 = 1;
    while (pow2 < bs)
        pow2 <<= 1;
    for (uint64_t r = k_block_index(); r < p.rows; r += k_block_count()) {
        const float *row = x + r * p.cols;
        float acc = 0.0f;
        for (uint32_t c = t; c < p.cols; c += bs)
            acc += row[c];
        partial[t] = acc;
        __syncthreads();
        for (uint32_t s = pow2 / 2; s > 0; s >>= 1) {
            if (t < s && t + s < bs)
                partial[t] += partial[t + s];
            __syncthreads();
        }
        if (t == 0)
            out[r] = partial[0];
        __syncthreads(); /* partial[] is rewritten by the next row */
    }
}

extern "C" __global__ void
k_sum_cols_f32(const struct k_sum_cols_f32_params p)
{
    const float *x = (const float *)p.x_va;
    float *out = (float *)p.out_va;
    for (uint64_t c = k_thread_index(); c < p.cols; c += k_thread_count()) {
        float acc = 0.0f;
        for (uint64_t r = 0; r < p.rows; r++)
            acc += x[r * p.cols + c];
        out[c] = acc;
    }
}
