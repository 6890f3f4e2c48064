/* SPDX-License-Identifier: MIT */
/*
 * k_memory.cu - fill and copy kernels.
 *
 *   k_fill_u32    dst[i] = value (u32 pattern), i < n
 *   k_fill_f32    dst[i] = value (f32), i < n
 *   k_copy_bytes  dst[0..size_B) = src[0..size_B); 16-byte vectors when both
 *                 addresses are 16-byte aligned, 4-byte words when 4-aligned,
 *                 bytes otherwise; the tail after the last whole vector is copied
 *                 byte by byte. Ranges must not overlap.
 *
 * Layouts: flat arrays; parameters in k_params.h.
 * Launch: any grid/block (grid-stride over the flat launch, k_device.h); the helpers in
 *   src/ops/ops_memory.c use 256 threads and ceil(n / 256) blocks capped at 65535.
 * CPU reference: the twins in src/ops/ops_memory.c (exact, bit for bit).
 * Test: tests/hcq/hcq_suite_kernels.c kernel_fill_u32, kernel_fill_f32, kernel_copy_bytes,
 *   exec_update_fuzz (random geometries against the twin).
 */
#include "k_device.h"
#include "k_params.h"

extern "C" __global__ void
k_fill_u32(const struct k_fill_u32_params p)
{
    uint32_t *dst = (uint32_t *)p.dst_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        dst[i] = p.value;
}

extern "C" __global__ void
k_fill_f32(const struct k_fill_f32_params p)
{
    float *dst = (float *)p.dst_va;
    for (uint64_t i = k_thread_index(); i < p.n; i += k_thread_count())
        dst[i] = p.value;
}

extern "C" __global__ void
k_copy_bytes(const struct k_copy_bytes_params p)
{
    const uint64_t tid = k_thread_index(), step = k_thread_count();
    uint64_t done_B = 0;
    if (((p.dst_va | p.src_va) & 15) == 0) {
        uint4 *d = (uint4 *)p.dst_va;
        const uint4 *s = (const uint4 *)p.src_va;
        const uint64_t n = p.size_B / 16;
        for (uint64_t i = tid; i < n; i += step)
            d[i] = s[i];
        done_B = n * 16;
    } else if (((p.dst_va | p.src_va) & 3) == 0) {
        uint32_t *d = (uint32_t *)p.dst_va;
        const uint32_t *s = (const uint32_t *)p.src_va;
        const uint64_t n = p.size_B / 4;
        for (uint64_t i = tid; i < n; i += step)
            d[i] = s[i];
        done_B = n * 4;
    }
    uint8_t *d8 = (uint8_t *)p.dst_va;
    const uint8_t *s8 = (const uint8_t *)p.src_va;
    for (uint64_t i = done_B + tid; i < p.size_B; i += step)
        d8[i] = s8[i];
}
