/* SPDX-License-Identifier: MIT */
/* ops_registry.c - placeholder registry of built-in kernels (helper "kernels" replaces it). */
#include "hcq_kernel.h"

#include <string.h>

static const struct hcq_kernel_desc kernels[] = { { 0 } };

/* LLM kernels (src/ops/ops_llm.c), listed after the table above. */
extern const struct hcq_kernel_desc ops_llm_kernels[];
extern const uint32_t ops_llm_kernel_count;

const struct hcq_kernel_desc *
hcq_kernel_at(uint32_t i)
{
    uint32_t j = 0;
    for (; kernels[j].name; j++)
        if (j == i)
            return &kernels[j];
    if (i - j < ops_llm_kernel_count)
        return &ops_llm_kernels[i - j];
    return NULL;
}

const struct hcq_kernel_desc *
hcq_kernel_find(const char *name)
{
    const struct hcq_kernel_desc *d;
    for (uint32_t i = 0; (d = hcq_kernel_at(i)); i++)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}
