/* SPDX-License-Identifier: MIT */
/*
 * ops_memory.c - CPU twins and descriptors of k_memory.cu (fill, copy) and k_test.cu
 * (empty, axpb, dep_step, grid_mark). Layer: ops. All exact: the GPU result must match bit for bit.
 */
#include "k_stack_hash.h"
#include "ops_twin.h"

static void
twin_fill_u32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_fill_u32, p);
    if (!p.n)
        return;
    uint32_t *dst = ops_twin_array(l, p.dst_va, p.n, 4);
    if (!dst)
        return;
    for (uint64_t i = 0; i < p.n; i++)
        dst[i] = p.value;
}

static void
twin_fill_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_fill_f32, p);
    if (!p.n)
        return;
    float *dst = ops_twin_array(l, p.dst_va, p.n, 4);
    if (!dst)
        return;
    for (uint64_t i = 0; i < p.n; i++)
        dst[i] = p.value;
}

static void
twin_copy_bytes(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_copy_bytes, p);
    if (!p.size_B)
        return;
    uint8_t *dst = ops_twin_array(l, p.dst_va, p.size_B, 1);
    if (!dst)
        return;
    const uint8_t *src = ops_twin_array(l, p.src_va, p.size_B, 1);
    if (!src)
        return;
    /* the kernel's result is undefined for overlapping ranges; memmove is one of them */
    memmove(dst, src, p.size_B);
}

static void
twin_empty(struct hcq_twin_launch *l)
{
    (void)l;
}

static void
twin_axpb_u64(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_axpb_u64, p);
    if (!p.n)
        return;
    uint64_t *x = ops_twin_array(l, p.x_va, p.n, 8);
    if (!x)
        return;
    for (uint64_t i = 0; i < p.n; i++)
        x[i] = x[i] * p.mul + p.add; /* unsigned: wraps mod 2^64 like the kernel */
}

/* k_dep_step: the chain's check and write without the wait or delay (launches run in order). */
static void
twin_dep_step(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_dep_step, p);
    uint64_t n = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    uint32_t *cell = ops_twin_array(l, p.cell_va, 2 * n, 4), *err = ops_twin_array(l, p.err_va, 1, 4);
    if (!cell || !err)
        return;
    for (uint64_t b = 0; b < n; b++)
        if (cell[(p.idx & 1) * n + (b * 7 + 3) % n] != p.idx)
            (*err)++;
    for (uint64_t b = 0; b < n; b++)
        cell[((p.idx + 1) & 1) * n + b] = p.idx + 1;
}

/* k_grid_mark: the same counts in closed form (a 2^31-CTA launch is not walked CTA by CTA):
 * marked = ceil(n / stride) plus the last CTA when it is not a multiple of stride; the
 * largest index in each dimension is the last CTA's. */
static void
twin_grid_mark(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_grid_mark, p);
    uint32_t *o = ops_twin_array(l, p.out_va, 8, 4);
    if (!o || !p.stride)
        return;
    const uint64_t n = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    o[4] = l->grid[0], o[5] = l->grid[1], o[6] = l->grid[2];
    o[0] += (uint32_t)((n + p.stride - 1) / p.stride + ((n - 1) % p.stride != 0));
    for (int d = 0; d < 3; d++)
        if (o[1 + d] < l->grid[d] - 1)
            o[1 + d] = l->grid[d] - 1;
}

/* k_stack_u32 / k_stack_big_u32: k_stack_hash.h's arithmetic, the kernels' own (the twin's
 * words live on the host stack, 4 KiB at most). */
static void
twin_stack(struct hcq_twin_launch *l, uint32_t w)
{
    OPS_TWIN_PARAMS(l, k_stack, p);
    if (!p.n)
        return;
    uint32_t *out = ops_twin_array(l, p.out_va, p.n, 4);
    if (!out)
        return;
    uint32_t words[K_STACK_BIG_WORDS];
    for (uint64_t i = 0; i < p.n; i++)
        out[i] = k_stack_hash(words, w, p.seed, i);
}

static void
twin_stack_u32(struct hcq_twin_launch *l)
{
    twin_stack(l, K_STACK_WORDS);
}

static void
twin_stack_big_u32(struct hcq_twin_launch *l)
{
    twin_stack(l, K_STACK_BIG_WORDS);
}

const struct hcq_kernel_desc ops_memory_kernels[] = {
    OPS_KERNEL(k_fill_u32, "k_memory", twin_fill_u32),
    OPS_KERNEL(k_fill_f32, "k_memory", twin_fill_f32),
    OPS_KERNEL(k_copy_bytes, "k_memory", twin_copy_bytes),
    OPS_KERNEL(k_empty, "k_test", twin_empty),
    OPS_KERNEL(k_axpb_u64, "k_test", twin_axpb_u64),
    OPS_KERNEL(k_dep_step, "k_test", twin_dep_step),
    OPS_KERNEL(k_grid_mark, "k_test", twin_grid_mark),
    /* stack_B as nvcc reports it (sm_90: 1024 / 4096 bytes stack frame), for program stubs */
    {"k_stack_u32", "k_test", sizeof(struct k_stack_params), twin_stack_u32, .stack_B = K_STACK_WORDS * 4},
    {"k_stack_big_u32", "k_test", sizeof(struct k_stack_params), twin_stack_big_u32,
     .stack_B = K_STACK_BIG_WORDS * 4},
    {0},
};
