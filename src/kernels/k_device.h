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

/* Programmatic dependent launch (PTX ISA griddepcontrol, sm_90+; no-ops below sm_90 and for
 * a grid launched without a dependency on a running one). k_dep_launch lets the next grid
 * (launched with HCQ_LAUNCH_DEP_WAIT) be scheduled now; k_dep_wait returns when every grid
 * this one depends on has completed and its memory is visible. A kernel launched with
 * HCQ_LAUNCH_DEP_WAIT calls k_dep_wait before it touches memory an earlier kernel writes or
 * reads (include/hcq.h). */
static __device__ __forceinline__ void
k_dep_launch(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

static __device__ __forceinline__ void
k_dep_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Whether this CTA is the last of n to arrive at the counter *cnt: every thread of the CTA
 * calls it, after its global writes that the last CTA reads. The CTA barrier orders those
 * writes before thread 0's atomic add, whose release (gpu scope, cumulative over what the
 * barrier ordered: the PTX ISA memory model) publishes them; its acquire, and the barrier after
 * it, make the earlier CTAs' writes visible to every thread of the last one (read them with
 * __ldcg: the L1 may hold stale lines). It replaced __threadfence (fence.sc.gpu) in every
 * thread around a plain atomicAdd, the same protocol written twice (split-K GEMM, decode
 * attention); an arrival costs ~1.2-1.3k cycles either way (H200, 2026-11-29, per-CTA clock64
 * in a stand-alone launch of the decode attention). Not understood: at 48 ranges (depth 32768)
 * the fence.sc form's whole kernel ran ~4% faster there, its ranges' tile phase too. */
static __device__ __forceinline__ bool
k_cta_arrive_last(uint32_t *cnt, uint32_t n)
{
    __shared__ uint32_t last;
    __syncthreads();
    if (k_block_thread() == 0) {
        uint32_t old;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(cnt) : "memory");
        last = old == n - 1;
    }
    __syncthreads();
    return last != 0;
}

/* The GPU's nanosecond clock (PTX %globaltimer). */
static __device__ __forceinline__ uint64_t
k_globaltimer(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

#endif /* K_DEVICE_H */
