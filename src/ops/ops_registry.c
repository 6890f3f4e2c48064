/* SPDX-License-Identifier: MIT */
/* ops_registry.c - placeholder registry of built-in kernels (helper "kernels" replaces it). */
#include "hcq_kernel.h"

#include <string.h>

static const struct hcq_kernel_desc kernels[] = { { 0 } };

const struct hcq_kernel_desc *
hcq_kernel_at(uint32_t i)
{
    for (uint32_t j = 0; kernels[j].name; j++)
        if (j == i)
            return &kernels[j];
    return NULL;
}

const struct hcq_kernel_desc *
hcq_kernel_find(const char *name)
{
    for (uint32_t i = 0; hcq_kernel_at(i); i++)
        if (!strcmp(kernels[i].name, name))
            return &kernels[i];
    return NULL;
}
