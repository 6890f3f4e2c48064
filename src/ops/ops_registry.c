/* SPDX-License-Identifier: MIT */
/*
 * ops_registry.c - the built-in kernel library's name -> descriptor lookup
 * (hcq_kernel.h): the per-module tables of src/ops plus the LLM engine's kernels.
 * Layer: ops.
 *
 * Adding a kernel needs no change here: add its line to its module's table (ops_*.c).
 * A new module adds its table to ops_tables[] below.
 */
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
};

const struct hcq_kernel_desc *
hcq_kernel_at(uint32_t i)
{
    for (size_t t = 0; t < sizeof ops_tables / sizeof ops_tables[0]; t++)
        for (const struct hcq_kernel_desc *d = ops_tables[t]; d->name; d++)
            if (i-- == 0)
                return d;
    return NULL;
}

const struct hcq_kernel_desc *
hcq_kernel_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t t = 0; t < sizeof ops_tables / sizeof ops_tables[0]; t++)
        for (const struct hcq_kernel_desc *d = ops_tables[t]; d->name; d++)
            if (!strcmp(d->name, name))
                return d;
    return NULL;
}
