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

/* The LLM engine's kernels (src/ops/ops_llm*.c, helper "llm") are linked in when that
 * module provides ops_llm.h declaring ops_llm_kernels[]: the strong reference then pulls
 * its object out of the static library. Before it exists, an empty table stands in.
 * (A weak definition here alone would not do: the linker takes an archive member only
 * to resolve an undefined symbol, so the llm object would be dropped from programs
 * that do not call into it, and its kernels would vanish from the registry.) */
#if defined(__has_include)
#if __has_include("ops_llm.h")
#include "ops_llm.h"
#define OPS_REGISTRY_HAVE_LLM 1
#endif
#endif
#ifndef OPS_REGISTRY_HAVE_LLM
static const struct hcq_kernel_desc ops_registry_no_llm[] = { { 0 } };
#define ops_llm_kernels ops_registry_no_llm
#endif

static const struct hcq_kernel_desc *const ops_tables[] = {
    ops_memory_kernels,
    ops_elementwise_kernels,
    ops_reduce_kernels,
    ops_matmul_kernels,
    ops_llm_kernels,
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
