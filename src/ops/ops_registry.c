/* SPDX-License-Identifier: MIT */
/*
 * ops_registry.c - registers the built-in kernel library with core's registry
 * (hcq_kernel.h, src/core/hcq_kernel.c): the per-module tables of src/ops plus the LLM
 * engine's kernels, in this order (hcq_kernel_at numbers them so). Layer: ops.
 *
 * Registration runs at program load (a constructor). A static library only links the
 * objects something references, so this object needs a reference: the cpu backend, which
 * runs every kernel through these twins and which core's backend table always links, calls
 * ops_kernels_register() when it opens (src/backend/cpu/cpu_dev.c).
 *
 * Adding a kernel needs no change here: add its line to its module's table (ops_*.c).
 * A new module adds its table to ops_tables[] below.
 */
#include "ops.h"
#include "ops_twin.h"

/* The LLM engine's kernels (src/ops/ops_llm.c). Referencing its table by name (a strong
 * reference) is what pulls that object out of the static library into every program;
 * a weak fallback definition here would let the linker drop it from programs that do
 * not call into the LLM engine, and its kernels would vanish from the registry. */
#include "ops_llm.h"

static const struct hcq_kernel_desc *const ops_tables[] = {
    ops_memory_kernels,
    ops_elementwise_kernels,
    ops_reduce_kernels,
    ops_matmul_kernels,
    ops_gemm_kernels,
    ops_select_kernels,
    ops_minmax_kernels,
    ops_conv_kernels,
    ops_pool_kernels,
    ops_llm_kernels,
    ops_llm_gemm_kernels,
    ops_llm_matvec_kernels,
    ops_llm_attn_decode_kernels,
    ops_llm_sample_kernels,
};

void
ops_kernels_register(void)
{
    for (size_t t = 0; t < sizeof ops_tables / sizeof ops_tables[0]; t++)
        (void)hcq_kernel_register(ops_tables[t]); /* a handful of tables, far below the cap */
}

/* At load time, before main() and before any device opens: hcq_kernel_find answers the
 * same from the first call on as when core called into this file directly. */
__attribute__((constructor)) static void
ops_kernels_register_at_load(void)
{
    ops_kernels_register();
}

static void *
ops_host_ptr(void *ctx, uint64_t va, uint64_t size_B)
{
    (void)ctx;
    (void)size_B;
    return (void *)(uintptr_t)va;
}

bool
ops_twin_run_host(const char *name, const void *params, uint64_t n)
{
    const struct hcq_kernel_desc *k = hcq_kernel_find(name);
    if (!k || !k->twin)
        return false;
    struct hcq_twin_launch l = {.params = params, .ptr = ops_host_ptr};
    ops_geometry_flat(n, l.grid, l.block);
    k->twin(&l);
    return !l.fault;
}
