/* SPDX-License-Identifier: MIT */
/*
 * k_matmul.cu - C = A . B with shared-memory tiles (correct, not tuned).
 *
 *   k_matmul_f32  A f32[m, k], B f32[k, n] -> C f32[m, n]
 *   k_matmul_f16  A f16[m, k], B f16[k, n] (binary16 bits) -> C f32[m, n];
 *                 inputs widened exactly to f32, f32 accumulation
 * All row-major, densely packed (leading dimensions k, n, n).
 *
 * Launch: block must be exactly (16, 16, 1) (K_MM_TILE); any other block shape makes
 *   the kernel return without writing (the twin does the same). Each block computes
 *   16x16 output tiles, tile index = flat block index, grid-stride over the
 *   ceil(m/16) * ceil(n/16) tiles, so any grid covers C. For each 16-wide slice of k
 *   the block stages a tile of A and of B in shared memory (zero-padded at the edges).
 *   Precondition: ceil(m/16) * ceil(n/16) < 2^32.
 *   Helper: grid (ceil(n/16), ceil(m/16)) capped at 65535 each.
 * Tolerance (docs/kernels.md): |err| <= k * 2^-23 * sum_k |a||b| per element.
 * CPU reference: twins in src/ops/ops_matmul.c (double accumulation).
 * Test: tests/hcq/hcq_suite_kernels.c kernel_matmul_f32, kernel_matmul_f16.
 */
#include "k_device.h"
#include "k_params.h"

#define K_MM_TILE 16

static __device__ __forceinline__ float
k_mm_load(const float *p, uint64_t i)
{
    return p[i];
}

static __device__ __forceinline__ float
k_mm_load(const uint16_t *p, uint64_t i)
{
    float x;
    asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(p[i]));
    return x;
}

/* The whole kernel for element type T of A and B (entry points stay plain extern "C"). */
template <typename T>
static __device__ __forceinline__ void
k_mm_body(float *c, const T *a, const T *b, uint32_t m, uint32_t n, uint32_t k)
{
    __shared__ float at[K_MM_TILE][K_MM_TILE];
    __shared__ float bt[K_MM_TILE][K_MM_TILE + 1]; /* +1: no bank conflicts */
    if (blockDim.x != K_MM_TILE || blockDim.y != K_MM_TILE || blockDim.z != 1)
        return; /* uniform over the block: no thread reaches a barrier */
    const uint32_t tx = threadIdx.x, ty = threadIdx.y;
    /* 32-bit tile arithmetic: a 64-bit division would be a called subroutine in the
     * cubin, which our loader would have to place; tiles < 2^32 is a launch precondition */
    const uint32_t tiles_n = (uint32_t)(((uint64_t)n + K_MM_TILE - 1) / K_MM_TILE);
    const uint64_t tiles = (uint64_t)tiles_n * (((uint64_t)m + K_MM_TILE - 1) / K_MM_TILE);
    for (uint64_t tile = k_block_index(); tile < tiles; tile += k_block_count()) {
        const uint32_t t32 = (uint32_t)tile; /* < tiles <= 2^32 */
        const uint64_t row = (uint64_t)(t32 / tiles_n) * K_MM_TILE + ty;
        const uint64_t col = (uint64_t)(t32 % tiles_n) * K_MM_TILE + tx;
        float acc = 0.0f;
        for (uint32_t k0 = 0; k0 < k; k0 += K_MM_TILE) {
            at[ty][tx] = (row < m && k0 + tx < k) ? k_mm_load(a, row * k + k0 + tx) : 0.0f;
            bt[ty][tx] = (k0 + ty < k && col < n) ? k_mm_load(b, (uint64_t)(k0 + ty) * n + col) : 0.0f;
            __syncthreads();
            for (uint32_t kk = 0; kk < K_MM_TILE; kk++)
                acc += at[ty][kk] * bt[kk][tx];
            __syncthreads();
        }
        if (row < m && col < n)
            c[row * n + col] = acc;
    }
}

extern "C" __global__ void
k_matmul_f32(const struct k_matmul_f32_params p)
{
    k_mm_body<float>((float *)p.c_va, (const float *)p.a_va, (const float *)p.b_va, p.m, p.n, p.k);
}

extern "C" __global__ void
k_matmul_f16(const struct k_matmul_f16_params p)
{
    k_mm_body<uint16_t>((float *)p.c_va, (const uint16_t *)p.a_va, (const uint16_t *)p.b_va, p.m, p.n,
                        p.k);
}
