/* SPDX-License-Identifier: MIT */
/*
 * gpu_arch.h - GPU generations as data (STYLE 2.6): one row per generation with its
 * class numbers, QMD version and constant-bank layout. Layer: gpu (pure, no syscalls).
 * Sources: docs/hw/rm.md §6.1, §6.5, §8.1; docs/hw/nvgpu.md §1.2 (ga10b classes).
 */
#ifndef GPU_ARCH_H
#define GPU_ARCH_H

#include <stdbool.h>
#include <stdint.h>

/* Class numbers, NVIDIA's names (cl*.h of open-gpu-doc, as listed in docs/hw/rm.md §8.1). */
#define AMPERE_CHANNEL_GPFIFO_A 0xC56Fu
#define AMPERE_CHANNEL_GPFIFO_B 0xC76Fu /* ga10b (nvgpu.md §1.2: gpfifo_class 0xC76F); C56F methods */
#define HOPPER_CHANNEL_GPFIFO_A 0xC86Fu
#define BLACKWELL_CHANNEL_GPFIFO_A 0xC96Fu
#define BLACKWELL_CHANNEL_GPFIFO_B 0xCA6Fu
#define TURING_USERMODE_A 0xC461u
#define AMPERE_USERMODE_A 0xC561u
#define HOPPER_USERMODE_A 0xC661u
#define AMPERE_COMPUTE_A 0xC6C0u
#define AMPERE_COMPUTE_B 0xC7C0u
#define ADA_COMPUTE_A 0xC9C0u
#define HOPPER_COMPUTE_A 0xCBC0u
#define BLACKWELL_COMPUTE_A 0xCDC0u
#define BLACKWELL_COMPUTE_B 0xCEC0u
#define AMPERE_DMA_COPY_A 0xC6B5u
#define AMPERE_DMA_COPY_B 0xC7B5u
#define HOPPER_DMA_COPY_A 0xC8B5u
#define BLACKWELL_DMA_COPY_A 0xC9B5u
#define BLACKWELL_DMA_COPY_B 0xCAB5u

struct gpu_qmd_ops; /* gpu_qmd.h: the encoder/decoder of one QMD version */

struct hcq_arch {
    const char *name;    /* "gh100" */
    uint32_t sm_version; /* 90 */
    uint32_t gpfifo_cls;
    uint32_t usermode_cls;
    uint32_t compute_cls;
    uint32_t copy_cls;
    uint32_t qmd_version;          /* 0x0300, 0x0400, 0x0500 (major << 8 | minor) */
    uint32_t qmd_size_B;           /* 256 (V3) or 384 (V4, V5) */
    uint32_t cbuf0_params_off_B;   /* kernel parameters in constant bank 0: 0x160 / 0x210 / 0x380 */
    uint32_t sem_addr_bits;        /* host semaphore / QMD release address width: 40 or 57 */
    const struct gpu_qmd_ops *qmd; /* encoder of qmd_version (gpu_qmd.h) */
    bool tested_on_hw;             /* false for rows never run on real hardware */
    /* Added by gpu (append-only below this line). */
    uint32_t cbuf0_shared_window_off_B; /* u64 generic->shared window base in cbuf0 (rm.md §6.5) */
    uint32_t cbuf0_local_window_off_B;  /* u64 generic->local window base */
    uint32_t cbuf0_stack_off_B;         /* u32 initial stack pointer (GPU_CBUF0_STACK_INIT) */
    uint32_t cbuf0_min_B;               /* smallest cbuf0 (12 dwords; 224 on Blackwell) */
    uint32_t sass_version;              /* QMD SASS_VERSION: 0x86 ... (rm.md §6.6) */
    uint32_t max_shared_per_sm_KiB;     /* largest shared-memory carve-out (CUDA programming guide) */
    uint32_t copy_sem_payload_bits;     /* copy-engine semaphore payload: 32, or 64 on Hopper+ */
    uint32_t cbuf0_param_va_off_B;      /* u64 GPU address of the parameters (cbuf0 + parameter
                                           base): sm_90 code forms generic parameter addresses from
                                           it (ULDC.64 c[0x0][0x198]: a TMA copy's tensor map);
                                           0 where not known */
};

/* blockDim at 0x0/0x4/0x8 and gridDim at 0xC/0x10/0x14 of cbuf0 on every arch here
 * (rm.md §6.5; not checked on Blackwell). */
#define GPU_CBUF0_BLOCK_DIM_OFF_B 0x00u
#define GPU_CBUF0_GRID_DIM_OFF_B 0x0Cu
/* Initial stack pointer: 16 MiB - 0x240 (rm.md §8.3, tinygrad's value). */
#define GPU_CBUF0_STACK_INIT 0xFFFDC0u

/* Row whose compute class is `compute_cls`, or NULL. */
const struct hcq_arch *hcq_arch_by_compute_class(uint32_t compute_cls);
/* Row by name ("gh100", "ga102", "ga10b"), or NULL. */
const struct hcq_arch *hcq_arch_by_name(const char *name);
/* Row i, NULL past the end. */
const struct hcq_arch *hcq_arch_at(uint32_t i);
/* Row by SM version (87 -> ga10b), or NULL. */
const struct hcq_arch *hcq_arch_by_sm(uint32_t sm_version);
/* Row from a GR SM_VERSION code (0x807, 0x900: rm.md §6.6, nvgpu.md §1.2), or NULL. */
const struct hcq_arch *hcq_arch_by_sm_code(uint32_t sm_code);
/* True when a cubin built for sm_version cubin_sm runs on arch: same major, cubin minor <=
 * device minor (sm_80 code runs on sm_86/87; sm_90 code does not run on sm_100). */
bool hcq_arch_runs_sm(const struct hcq_arch *arch, uint32_t cubin_sm);

#endif /* GPU_ARCH_H */
