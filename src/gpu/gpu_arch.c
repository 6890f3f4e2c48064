/* SPDX-License-Identifier: MIT */
/*
 * gpu_arch.c - the GPU generations this runtime knows, one row each (STYLE 2.6), and the
 * lookups. Layer: gpu (pure data). Sources per column: class numbers rm.md §8.1 and
 * nvgpu.md §1.2 (ga10b); QMD version rm.md §6.1; cbuf0 layout rm.md §0 item 7, §6.5, §8.6;
 * semaphore address width rm.md §8.2; SASS version rm.md §6.6; copy semaphore payload width
 * rm.md §5.4 / §9 item 4; shared-memory maximum per SM from the CUDA C Programming Guide's
 * compute-capability table (8.0: 164 KiB, 8.6: 100, 8.7: 164, 8.9: 100, 9.0: 228,
 * 10.0: 228, 12.0: 100).
 */
#include <string.h>

#include "gpu_arch.h"
#include "gpu_qmd.h"

/* cbuf0 driver-area layouts (rm.md §6.5). */
#define CBUF0_SM8X_SM9X                                                                                      \
    .cbuf0_shared_window_off_B = 0x18, .cbuf0_local_window_off_B = 0x20, .cbuf0_stack_off_B = 0x28,          \
    .cbuf0_min_B = 12 * 4
/* Blackwell (rm.md §8.6, from tinygrad; not run on hardware here). */
#define CBUF0_SM10X_SM12X                                                                                    \
    .cbuf0_shared_window_off_B = 0x2F0, .cbuf0_local_window_off_B = 0x2F8, .cbuf0_stack_off_B = 0x37C,       \
    .cbuf0_min_B = 224 * 4

static const struct hcq_arch hcq_archs[] = {
    {
        .name = "ga100",
        .sm_version = 80,
        .gpfifo_cls = AMPERE_CHANNEL_GPFIFO_A,
        .usermode_cls = TURING_USERMODE_A,
        .compute_cls = AMPERE_COMPUTE_A,
        .copy_cls = AMPERE_DMA_COPY_A,
        .qmd_version = 0x0300,
        .qmd_size_B = 256,
        .qmd = &gpu_qmd_v03_00_ops,
        .cbuf0_params_off_B = 0x160,
        .sem_addr_bits = 40,
        CBUF0_SM8X_SM9X,
        .sass_version = 0x80,
        .max_shared_per_sm_KiB = 164,
        .copy_sem_payload_bits = 32,
        .tested_on_hw = false, /* no source here ran GA100 (tinygrad lists no AMPERE_COMPUTE_A) */
    },
    {
        .name = "ga102",
        .sm_version = 86,
        .gpfifo_cls = AMPERE_CHANNEL_GPFIFO_A,
        .usermode_cls = TURING_USERMODE_A,
        .compute_cls = AMPERE_COMPUTE_B,
        .copy_cls = AMPERE_DMA_COPY_B,
        .qmd_version = 0x0300,
        .qmd_size_B = 256,
        .qmd = &gpu_qmd_v03_00_ops,
        .cbuf0_params_off_B = 0x160,
        .sem_addr_bits = 40,
        CBUF0_SM8X_SM9X,
        .sass_version = 0x86,
        .max_shared_per_sm_KiB = 100,
        .copy_sem_payload_bits = 32,
        .tested_on_hw = true,
    },
    {
        /* Jetson Orin iGPU through nvgpu: GET_CHARACTERISTICS reports compute 0xC7C0,
         * GPFIFO 0xC76F, copy 0xC7B5, SM 0x807 (nvgpu.md §1.2); the doorbell class nvgpu
         * lists is TURING_USERMODE_A (nvgpu.md §6.13). GPFIFO methods are C56F's. */
        .name = "ga10b",
        .sm_version = 87,
        .gpfifo_cls = AMPERE_CHANNEL_GPFIFO_B,
        .usermode_cls = TURING_USERMODE_A,
        .compute_cls = AMPERE_COMPUTE_B,
        .copy_cls = AMPERE_DMA_COPY_B,
        .qmd_version = 0x0300,
        .qmd_size_B = 256,
        .qmd = &gpu_qmd_v03_00_ops,
        .cbuf0_params_off_B = 0x160,
        .sem_addr_bits = 40,
        CBUF0_SM8X_SM9X,
        .sass_version = 0x87,
        .max_shared_per_sm_KiB = 164,
        .copy_sem_payload_bits = 32,
        .tested_on_hw = true,
    },
    {
        .name = "ad102",
        .sm_version = 89,
        .gpfifo_cls = AMPERE_CHANNEL_GPFIFO_A,
        .usermode_cls = TURING_USERMODE_A,
        .compute_cls = ADA_COMPUTE_A,
        .copy_cls = AMPERE_DMA_COPY_B,
        .qmd_version = 0x0300,
        .qmd_size_B = 256,
        .qmd = &gpu_qmd_v03_00_ops,
        .cbuf0_params_off_B = 0x160,
        .sem_addr_bits = 40,
        CBUF0_SM8X_SM9X,
        .sass_version = 0x89,
        .max_shared_per_sm_KiB = 100,
        .copy_sem_payload_bits = 32,
        .tested_on_hw = true,
    },
    {
        /* Verified on H200 (rm.md §0, Appendix A). */
        .name = "gh100",
        .sm_version = 90,
        .gpfifo_cls = HOPPER_CHANNEL_GPFIFO_A,
        .usermode_cls = HOPPER_USERMODE_A,
        .compute_cls = HOPPER_COMPUTE_A,
        .copy_cls = HOPPER_DMA_COPY_A,
        .qmd_version = 0x0400,
        .qmd_size_B = 384,
        .qmd = &gpu_qmd_v04_00_ops,
        .cbuf0_params_off_B = 0x210,
        .cbuf0_param_va_off_B = 0x198, /* H100: SASS reads it */
        .sem_addr_bits = 57,
        CBUF0_SM8X_SM9X,
        .sass_version = 0x90,
        .max_shared_per_sm_KiB = 228,
        .copy_sem_payload_bits = 64,
        .tested_on_hw = true,
    },
    {
        /* Blackwell rows: from tinygrad via rm.md §8.6, never run on hardware. */
        .name = "gb100",
        .sm_version = 100,
        .gpfifo_cls = BLACKWELL_CHANNEL_GPFIFO_A,
        .usermode_cls = HOPPER_USERMODE_A,
        .compute_cls = BLACKWELL_COMPUTE_A,
        .copy_cls = BLACKWELL_DMA_COPY_A,
        .qmd_version = 0x0500,
        .qmd_size_B = 384,
        .qmd = &gpu_qmd_v05_00_ops,
        .cbuf0_params_off_B = 0x380,
        .sem_addr_bits = 57,
        CBUF0_SM10X_SM12X,
        .sass_version = 0xA0,
        .max_shared_per_sm_KiB = 228,
        .copy_sem_payload_bits = 64,
        .tested_on_hw = false,
    },
    {
        /* SASS version from the rm.md §6.6 formula for SM_VERSION 0xC00 (unverified). */
        .name = "gb202",
        .sm_version = 120,
        .gpfifo_cls = BLACKWELL_CHANNEL_GPFIFO_A,
        .usermode_cls = HOPPER_USERMODE_A,
        .compute_cls = BLACKWELL_COMPUTE_B,
        .copy_cls = BLACKWELL_DMA_COPY_B,
        .qmd_version = 0x0500,
        .qmd_size_B = 384,
        .qmd = &gpu_qmd_v05_00_ops,
        .cbuf0_params_off_B = 0x380,
        .sem_addr_bits = 57,
        CBUF0_SM10X_SM12X,
        .sass_version = 0xC0,
        .max_shared_per_sm_KiB = 100,
        .copy_sem_payload_bits = 64,
        .tested_on_hw = false,
    },
};

#define HCQ_ARCH_COUNT (sizeof hcq_archs / sizeof hcq_archs[0])

const struct hcq_arch *
hcq_arch_at(uint32_t i)
{
    return i < HCQ_ARCH_COUNT ? &hcq_archs[i] : NULL;
}

const struct hcq_arch *
hcq_arch_by_compute_class(uint32_t compute_cls)
{
    /* ga102 and ga10b share AMPERE_COMPUTE_B: the first row (ga102) answers; nvgpu picks
     * ga10b by name or SM. */
    for (uint32_t i = 0; i < HCQ_ARCH_COUNT; i++)
        if (hcq_archs[i].compute_cls == compute_cls)
            return &hcq_archs[i];
    return NULL;
}

const struct hcq_arch *
hcq_arch_by_name(const char *name)
{
    if (!name)
        return NULL;
    for (uint32_t i = 0; i < HCQ_ARCH_COUNT; i++)
        if (strcmp(hcq_archs[i].name, name) == 0)
            return &hcq_archs[i];
    return NULL;
}

const struct hcq_arch *
hcq_arch_by_sm(uint32_t sm_version)
{
    for (uint32_t i = 0; i < HCQ_ARCH_COUNT; i++)
        if (hcq_archs[i].sm_version == sm_version)
            return &hcq_archs[i];
    return NULL;
}

const struct hcq_arch *
hcq_arch_by_sm_code(uint32_t sm_code)
{
    /* 0xMMmm-style codes (rm.md §6.6): 0x807 -> 87, 0x900 -> 90, 0xA00 -> 100, 0xC00 -> 120.
     * tinygrad maps 0xA04 to sm_120 (its FIXME, unverified); kept for parity. */
    if (sm_code == 0xA04)
        return hcq_arch_by_sm(120);
    uint32_t major = (sm_code >> 8) & 0xFF, minor = sm_code & 0xFF;
    if (minor > 9)
        return NULL;
    return hcq_arch_by_sm(major * 10 + minor);
}

bool
hcq_arch_runs_sm(const struct hcq_arch *arch, uint32_t cubin_sm)
{
    /* SASS is compatible within a major version, forward in minor (CUDA binary
     * compatibility rule); sm_100 and sm_120 are different majors. */
    if (!arch || cubin_sm == 0)
        return false;
    return cubin_sm / 10 == arch->sm_version / 10 && cubin_sm % 10 <= arch->sm_version % 10;
}
