/* SPDX-License-Identifier: MIT */
/*
 * k_test.cu - kernels for runtime tests and benchmarks.
 *
 *   k_empty     does nothing (launch latency / throughput benchmarks)
 *   k_axpb_u64  x[i] = x[i] * mul + add (mod 2^64), i < n. Two launches with different
 *               (mul, add) do not commute, so a result proves the order the queue ran
 *               them in (hcq suite: exec_2_kernels_100_times, graphs).
 *   k_dep_step  one link of a chain of dependent launches (struct k_dep_step_params): a
 *               launch that started before its predecessor finished, or read stale data,
 *               counts a mismatch (hcq suite: dep_wait_chain; bench latency dep_chain_pdl).
 *   k_grid_mark every stride-th CTA and the last one count themselves and report their
 *               blockIdx; CTA 0 reports gridDim (hcq suite: kernel_grid_mark).
 *   k_stack_u32, k_stack_big_u32
 *               out[i] = a hash of (seed, i) through a local array of 1 KiB / 4 KiB written
 *               and read at run-time indices: kernels whose stack (local memory) is far above
 *               the engine's default headroom (hcq suite: local_memory_*); the hash is
 *               k_stack_hash.h, shared with the twin and the suite.
 *
 * Launch: any grid/block (grid-stride over the flat launch; each element is touched by
 *   exactly one thread, so the read-modify-write is race free). Helper: 256 threads.
 * CPU reference: twins in src/ops/ops_memory.c (exact).
 * Test: tests/hcq/hcq_suite.c exec_one_kernel, exec_2_kernels_100_times, graphs, kernel_empty;
 * tests/hcq/hcq_suite_lmem.c (k_stack_*).
 */
#include "k_device.h"
#include "k_params.h"
#include "k_stack_hash.h"

extern "C" __global__ void
k_empty(const struct k_empty_params p)
{
    (void)p;
}

extern "C" __global__ void
k_axpb_u64(const struct k_axpb_u64_params p)
{
    uint64_t *x = (uint64_t *)p.x_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        x[i] = x[i] * p.mul + p.add;
}

extern "C" __global__ void
k_grid_mark(const struct k_grid_mark_params p)
{
    if (k_block_thread() != 0)
        return;
    const uint64_t b = k_block_index(), n = k_block_count();
    uint32_t *o = (uint32_t *)p.out_va;
    if (b == 0) {
        o[4] = gridDim.x;
        o[5] = gridDim.y;
        o[6] = gridDim.z;
    }
    if (b % p.stride != 0 && b != n - 1)
        return;
    atomicAdd(&o[0], 1u);
    atomicMax(&o[1], blockIdx.x);
    atomicMax(&o[2], blockIdx.y);
    atomicMax(&o[3], blockIdx.z);
}

extern "C" __global__ void
k_dep_step(const struct k_dep_step_params p)
{
    if (p.wait & 1) {
        k_dep_launch();
        k_dep_wait();
    }
    const uint32_t n = (uint32_t)k_block_count(), b = (uint32_t)k_block_index();
    uint32_t *cell = (uint32_t *)p.cell_va;
    if (k_block_thread() == 0) {
        /* another CTA's cell: written by a CTA of the previous launch on another SM */
        uint32_t other = (uint32_t)(((uint64_t)b * 7 + 3) % n);
        /* plain: the same half was read two launches ago, so a stale line in this SM's L1
         * would show unless the wait invalidated it */
        const uint32_t *src = &cell[(p.idx & 1) * n + other];
        uint32_t v = (p.wait & 2) ? *src : *(const volatile uint32_t *)src;
        if (v != p.idx)
            atomicAdd((uint32_t *)p.err_va, 1u);
        if (p.delay_ns) {
            uint64_t t0 = k_globaltimer();
            while (k_globaltimer() - t0 < p.delay_ns) {
            }
        }
        cell[((p.idx + 1) & 1) * n + b] = p.idx + 1;
    }
}

extern "C" __global__ void
k_stack_u32(const struct k_stack_params p)
{
    uint32_t words[K_STACK_WORDS];
    uint32_t *out = (uint32_t *)p.out_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        out[i] = k_stack_hash(words, K_STACK_WORDS, p.seed, i);
}

extern "C" __global__ void
k_stack_big_u32(const struct k_stack_params p)
{
    uint32_t words[K_STACK_BIG_WORDS];
    uint32_t *out = (uint32_t *)p.out_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        out[i] = k_stack_hash(words, K_STACK_BIG_WORDS, p.seed, i);
}
