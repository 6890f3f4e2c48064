/* SPDX-License-Identifier: MIT */
/*
 * rm_arch_fallback.c - TEMPORARY weak stand-in for hcq_arch_by_compute_class() until
 * src/gpu/gpu_arch.c (helper "gpu") is in main; its strong definition wins at link time.
 * Rows restate docs/hw/rm.md §6.1, §6.5, §8.1, §8.2. Delete this file once gpu_arch.c lands.
 */
#include "gpu_arch.h"

#include <stddef.h>

static const struct hcq_arch rm_arch_rows[] = {
    { "ga100", 80, AMPERE_CHANNEL_GPFIFO_A, AMPERE_USERMODE_A, AMPERE_COMPUTE_A, AMPERE_DMA_COPY_A, 0x0300, 256,
      0x160, 40, NULL, false },
    { "ga102", 86, AMPERE_CHANNEL_GPFIFO_A, TURING_USERMODE_A, AMPERE_COMPUTE_B, AMPERE_DMA_COPY_B, 0x0300, 256,
      0x160, 40, NULL, false },
    { "ad102", 89, AMPERE_CHANNEL_GPFIFO_A, TURING_USERMODE_A, ADA_COMPUTE_A, AMPERE_DMA_COPY_B, 0x0300, 256, 0x160,
      40, NULL, false },
    { "gh100", 90, HOPPER_CHANNEL_GPFIFO_A, HOPPER_USERMODE_A, HOPPER_COMPUTE_A, HOPPER_DMA_COPY_A, 0x0400, 384,
      0x210, 57, NULL, false },
    { "gb100", 100, BLACKWELL_CHANNEL_GPFIFO_A, HOPPER_USERMODE_A, BLACKWELL_COMPUTE_A, BLACKWELL_DMA_COPY_A, 0x0500,
      384, 0x380, 57, NULL, false },
    { "gb202", 120, BLACKWELL_CHANNEL_GPFIFO_B, HOPPER_USERMODE_A, BLACKWELL_COMPUTE_B, BLACKWELL_DMA_COPY_B, 0x0500,
      384, 0x380, 57, NULL, false },
};

__attribute__((weak)) const struct hcq_arch *
hcq_arch_by_compute_class(uint32_t compute_cls)
{
    for (size_t i = 0; i < sizeof rm_arch_rows / sizeof rm_arch_rows[0]; i++)
        if (rm_arch_rows[i].compute_cls == compute_cls)
            return &rm_arch_rows[i];
    return NULL;
}
