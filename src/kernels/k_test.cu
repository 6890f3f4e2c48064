/* SPDX-License-Identifier: MIT */
/*
 * k_test.cu - kernels for runtime tests and benchmarks.
 *
 *   k_empty     does nothing (launch latency / throughput benchmarks)
 *   k_axpb_u64  x[i] = x[i] * mul + add (mod 2^64), i < n. Two launches with different
 *               (mul, add) do not commute, so a result proves the order the queue ran
 *               them in (hcq suite: exec_2_kernels_100_times, graphs).
 *
 * Launch: any grid/block (grid-stride over the flat launch; each element is touched by
 *   exactly one thread, so the read-modify-write is race free). Helper: 256 threads.
 * CPU reference: twins in src/ops/ops_memory.c (exact).
 * Test: tests/hcq/hcq_suite.c exec_one_kernel, exec_2_kernels_100_times, graphs, kernel_empty.
 */
#include "k_device.h"
#include "k_params.h"

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
