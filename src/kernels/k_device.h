/* SPDX-License-Identifier: MIT */
/*
 * k_device.h - device-side helpers shared by the built-in kernels (CUDA only).
 * Layer: kernels.
 *
 * Every kernel indexes its work through a *flat* launch: blocks are numbered
 * x-fastest over the whole 3-D grid, threads x-fastest over the whole 3-D block, so any
 * grid and any block shape cover the work exactly once with a grid-stride loop. The
 * CPU twins (src/ops) rely on that: their result does not depend on the geometry,
 * except where a kernel documents a required block shape (matmul).
 * These read blockDim/gridDim, which the pushbuffer backends put in constant bank 0
 * (docs/hw/rm.md §6.5).
 */
#ifndef K_DEVICE_H
#define K_DEVICE_H

#ifndef __CUDACC__
#error "k_device.h is for CUDA sources only"
#endif

#include <stdint.h>

/* Threads per block (1..1024). */
static __device__ __forceinline__ uint32_t
k_block_size(void)
{
    return blockDim.x * blockDim.y * blockDim.z;
}

/* Flat thread index inside the block. */
static __device__ __forceinline__ uint32_t
k_block_thread(void)
{
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

/* Flat block index inside the grid, and the number of blocks. */
static __device__ __forceinline__ uint64_t
k_block_index(void)
{
    return ((uint64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

static __device__ __forceinline__ uint64_t
k_block_count(void)
{
    return (uint64_t)gridDim.x * gridDim.y * gridDim.z;
}

/* Flat thread index over the launch, and the number of threads (grid-stride step). */
static __device__ __forceinline__ uint64_t
k_thread_index(void)
{
    return k_block_index() * k_block_size() + k_block_thread();
}

static __device__ __forceinline__ uint64_t
k_thread_count(void)
{
    return k_block_count() * k_block_size();
}

#endif /* K_DEVICE_H */
