/* SPDX-License-Identifier: MIT */
/*
 * gpu_cubin.h - cubin (CUDA ELF) loader: validates the file, lays the loadable sections out
 * as one image, collects per-kernel attributes from .nv.info, records relocations to apply
 * once the image's GPU VA is known, and builds constant bank 0 for a launch.
 * Layer: gpu (pure, no syscalls). Facts: docs/hw/rm.md §6.5, §6.6, §7.
 *
 * ==== Model ====
 * A cubin is a 64-bit little-endian ELF (EM_CUDA 190) with one `.text.<kernel>` per kernel.
 * The loader copies every loadable section (PROGBITS with SHF_ALLOC, plus NOBITS `.nv.global`
 * for __device__ variables, zero-filled) into one image, each aligned to max(sh_addralign,
 * 128) (rm.md §7.4 step 2). The caller allocates image->alloc_B bytes of GPU memory at some
 * VA, calls gpu_cubin_relocate(img, va) (which patches img->data in place: R_CUDA_64,
 * ABS32_LO/HI, with RELA addends), uploads img->data[0..size_B) and invalidates the
 * instruction cache. Kernel k's code is then at va + k->code_off_B.
 * Every header, offset, count and string is checked against the buffer: malformed input
 * returns HCQ_ERR_FORMAT with a message, never reads out of bounds (fuzzed:
 * tests/fuzz/fuzz_cubin.c).
 */
#ifndef GPU_CUBIN_H
#define GPU_CUBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu_arch.h"
#include "gpu_qmd.h"
#include "util_log.h"

/* ELF facts (rm.md §7.1-7.3). */
#define GPU_ELF_EM_CUDA 190u
#define GPU_ELF_SHT_CUDA_INFO 0x70000000u
#define GPU_ELF_EF_CUDA_SM 15 : 8 /* e_flags bits holding the SM number */

/* .nv.info record formats and attributes (rm.md §7.3, cuobjdump's numbering). */
#define EIATTR_FORMAT_NVAL 1
#define EIATTR_FORMAT_BVAL 2
#define EIATTR_FORMAT_HVAL 3
#define EIATTR_FORMAT_SVAL 4
#define EIATTR_MAX_THREADS 0x05
#define EIATTR_PARAM_CBANK 0x0A
#define EIATTR_REQNTID 0x10
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_MIN_STACK_SIZE 0x12
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_CBANK_PARAM_SIZE 0x19
#define EIATTR_MAXREG_COUNT 0x1B
#define EIATTR_EXIT_INSTR_OFFSETS 0x1C
#define EIATTR_CRS_STACK_SIZE                                                                                \
    0x1E /* id from cuobjdump's numbering (not in docs/hw; our sm_87                                         \
          * cubin carries it with value 0): unverified */
#define EIATTR_MAX_STACK_SIZE 0x23
#define EIATTR_REGCOUNT 0x2F
#define EIATTR_NUM_BARRIERS 0x4C
#define EIATTR_CTA_PER_CLUSTER 0x3D
#define EIATTR_EXPLICIT_CLUSTER 0x3E

/* Relocation types (rm.md §7.4). */
#define R_CUDA_64 2u
#define R_CUDA_ABS32_LO_32 0x38u
#define R_CUDA_ABS32_HI_32 0x39u

#define GPU_CUBIN_MAX_PARAMS 256u
#define GPU_CUBIN_SECTION_ALIGN_B 128u    /* minimum placement alignment (rm.md §7.4) */
#define GPU_CUBIN_SHARED_RESERVE_B 0x400u /* system-reserved shared memory (rm.md §6.7) */
#define GPU_CUBIN_LOCAL_RESERVE_B 0x240u  /* stack headroom above the initial SP (rm.md §8.3) */

struct gpu_cubin_param {
    uint32_t ordinal;
    uint32_t offset_B; /* relative to the param base in cbuf0 */
    uint32_t size_B;
};

struct gpu_cubin_kernel {
    const char *name;    /* points into the image's own copy of the names */
    uint32_t sym_index;  /* ELF symbol index of the kernel function */
    uint64_t code_off_B; /* offset of .text.<name> in the image */
    uint64_t code_size_B;
    uint32_t register_count;  /* EIATTR_REGCOUNT, else .text sh_info bits 31:24 (sm_8x) */
    uint32_t barrier_count;   /* EIATTR_NUM_BARRIERS (0 if absent) */
    uint32_t shared_static_B; /* sh_size of .nv.shared.<name> (0 if absent) */
    uint32_t min_stack_B;     /* EIATTR_MIN_STACK_SIZE */
    uint32_t max_stack_B;     /* EIATTR_MAX_STACK_SIZE */
    uint32_t frame_B;         /* EIATTR_FRAME_SIZE */
    uint32_t param_base_B;    /* EIATTR_PARAM_CBANK offset (0x160 / 0x210 / 0x380) */
    uint32_t param_size_B;    /* EIATTR_PARAM_CBANK size (or CBANK_PARAM_SIZE) */
    uint32_t cbuf0_size_B;    /* sh_size of .nv.constant0.<name> */
    uint32_t max_threads[3];  /* EIATTR_MAX_THREADS (launch bounds), 0 if absent */
    uint32_t reqntid[3];      /* EIATTR_REQNTID, 0 if absent */
    uint32_t maxreg_count;    /* EIATTR_MAXREG_COUNT */
    uint32_t exit_count;      /* number of EIATTR_EXIT_INSTR_OFFSETS entries */
    bool uses_clusters;       /* cluster attributes seen (not supported by the launcher) */
    bool is_entry;            /* a __global__ entry: st_other 0x10 on its symbol (seen on every
                               * kernel of our nvcc 13.0 cubins; not in docs/hw) */
    uint32_t crs_stack_B;     /* EIATTR_CRS_STACK_SIZE if present (pre-Volta call/return
                               * stack; recorded, not used on sm_80+) */
    uint32_t param_count;
    struct gpu_cubin_param params[GPU_CUBIN_MAX_PARAMS]; /* sorted by ordinal */
    /* Per-kernel constant banks .nv.constant<N>.<name>, N != 0: nvcc puts e.g. the jump
     * table of a switch in bank 2 (BRX reads c[0x2][...]); it must be bound as QMD
     * constant buffer N for this kernel, or the branch goes astray and the grid hangs
     * (seen on H200: k_llm_matmul, 2026-11-22). */
    uint32_t kbank_count;
    struct {
        uint32_t index;
        uint64_t off_B;
        uint32_t size_B;
    } kbanks[4];
};

/* A module-wide constant bank (.nv.constantN, N != 0), bound as QMD constant buffer N. */
struct gpu_cubin_bank {
    uint32_t index; /* N */
    uint64_t off_B; /* in the image */
    uint32_t size_B;
};

/* A relocation, resolved to image offsets: at gpu_cubin_relocate(img, va) the value
 * va + target_off_B is written at patch_off_B (R_CUDA_64: 8 bytes; ABS32_LO/HI: the low /
 * high 32 bits into the 4 bytes at patch_off_B, i.e. the instruction's immediate). */
struct gpu_cubin_reloc {
    uint64_t patch_off_B;
    int64_t target_off_B; /* section placement + st_value + addend */
    uint32_t type;
};

#define GPU_CUBIN_MAX_BANKS 16u

struct gpu_cubin_image {
    uint8_t *data; /* size_B bytes to upload (malloc'd, owned) */
    uint64_t size_B;
    uint64_t alloc_B;    /* GPU allocation: round_up(size_B, 4 KiB) + 4 KiB prefetch slack */
    uint32_t sm_version; /* from e_flags (90 for sm_90) */
    uint32_t kernel_count;
    struct gpu_cubin_kernel *kernels;
    uint32_t bank_count;
    struct gpu_cubin_bank banks[GPU_CUBIN_MAX_BANKS];
    uint32_t reloc_count;
    struct gpu_cubin_reloc *relocs;
    uint64_t relocated_va; /* base VA of the last gpu_cubin_relocate, 0 if none */
    char *names;           /* owned copy of kernel names */
};

/* Parse and lay out a cubin. HCQ_ERR_FORMAT with a message for anything malformed,
 * HCQ_ERR_NOMEM. *img_out is NULL on failure. */
HCQ_MUST_CHECK enum hcq_status gpu_cubin_load(const void *elf, size_t elf_B,
                                              struct gpu_cubin_image **img_out);
/* Free (accepts NULL). */
void gpu_cubin_destroy(struct gpu_cubin_image *img);

/* Kernel by name, or NULL. */
const struct gpu_cubin_kernel *gpu_cubin_kernel_find(const struct gpu_cubin_image *img, const char *name);

/* Apply every relocation for the image placed at base_va (may be called again for another
 * VA: patches are recomputed from the recorded targets). HCQ_ERR_INVALID if base_va +
 * target would be negative or past 2^57; patch offsets were checked by gpu_cubin_load. */
HCQ_MUST_CHECK enum hcq_status gpu_cubin_relocate(struct gpu_cubin_image *img, uint64_t base_va);

/* HCQ_ERR_UNSUPPORTED (with a message) if the cubin's SM cannot run on arch
 * (hcq_arch_runs_sm). */
HCQ_MUST_CHECK enum hcq_status gpu_cubin_check_arch(const struct gpu_cubin_image *img,
                                                    const struct hcq_arch *arch);

/* QMD SHARED_MEMORY_SIZE for k plus dynamic shared bytes: round_up(0x400 + static +
 * dynamic, 128) (rm.md §6.7). */
uint32_t gpu_cubin_kernel_shared_B(const struct gpu_cubin_kernel *k, uint32_t dynamic_B);
/* CTAs of k with this block shape one SM can hold by registers and threads (1..32). */
uint32_t gpu_cubin_ctas_per_sm(const struct gpu_cubin_kernel *k, const uint32_t block[3]);
/* FREE_CTA_SLOTS_EMPTY_SM as an occupancy (a bound only: as the value it faults multi-wave grids on
 * H100, gpu_cubin_launch.c) for a launch of k with this block and shared_B bytes of shared memory per CTA:
 * CTAs an empty SM holds by threads and registers; 0 for kernels with shared memory of their own. */
uint32_t gpu_cubin_free_cta_slots(const struct gpu_cubin_kernel *k, const uint32_t block[3],
                                  uint32_t shared_B);
/* The default FREE_CTA_SLOTS_EMPTY_SM of V4 QMDs for a grid on sm_count SMs: ceil(CTAs /
 * sm_count) where that is within gpu_cubin_free_cta_slots (one wave), else 0. */
uint32_t gpu_cubin_free_cta_slots_fit(const struct gpu_cubin_kernel *k, const uint32_t block[3],
                                      uint32_t shared_B, const uint32_t grid[3], uint32_t sm_count);
/* Per-thread local memory the kernel needs: round_up(MIN_STACK_SIZE + 0x240, 32) (rm.md §8.3). */
uint32_t gpu_cubin_kernel_local_B(const struct gpu_cubin_kernel *k);
/* Threads per block allowed by the register count (rm.md §7.4 step 7), capped at 1024. */
uint32_t gpu_cubin_kernel_max_threads(const struct gpu_cubin_kernel *k);

/* Once the cbuf0 built by gpu_cbuf0_build has its GPU address cbuf0_va: the address of its
 * parameters at the arch's slot for it (hcq_arch.cbuf0_param_va_off_B; nothing where there is
 * none). Taking a parameter's address (a __grid_constant__ struct, a TMA tensor map) reads it. */
void gpu_cbuf0_set_va(const struct hcq_arch *arch, const struct gpu_cubin_kernel *k, void *cbuf0,
                      uint32_t cbuf0_B, uint64_t cbuf0_va);

/* The parameter window's offset in cbuf0: the cubin's (EIATTR_PARAM_CBANK), else the arch's
 * (k may be NULL). */
uint32_t gpu_cbuf0_param_base(const struct hcq_arch *arch, const struct gpu_cubin_kernel *k);

/* Where the kernel's first parameter starts in its parameter window: 0, except when the
 * compiler aligned it past the window's start - a 64-byte aligned __grid_constant__ struct
 * (TMA tensor maps) starts 0x30 in, so that it lies 64-byte aligned in cbuf0 (0x210 + 0x30 on
 * sm_90; k_gemm_wgmma_tma.cu). The launch copies the argument blob there. */
uint32_t gpu_cubin_kernel_param_lead(const struct gpu_cubin_kernel *k);

/* Bytes of cbuf0 a launch of k with params_B parameter bytes needs: max(.nv.constant0 size,
 * param base + params_B, arch->cbuf0_min_B), rounded up to 16. k may be NULL (then the
 * arch's param offset is the base). */
uint32_t gpu_cbuf0_size(const struct hcq_arch *arch, const struct gpu_cubin_kernel *k, uint32_t params_B);
/* Build cbuf0 into out[0..out_B): zeros, blockDim/gridDim, shared and local windows, the
 * initial stack pointer (rm.md §6.5), and params at the param base. HCQ_ERR_INVALID when
 * out_B < gpu_cbuf0_size() or params_B exceeds the kernel's declared parameter size. */
HCQ_MUST_CHECK enum hcq_status gpu_cbuf0_build(const struct hcq_arch *arch, const struct gpu_cubin_kernel *k,
                                               const uint32_t grid[3], const uint32_t block[3],
                                               uint64_t local_window_va, uint64_t shared_window_va,
                                               const void *params, uint32_t params_B, void *out,
                                               uint32_t out_B);

/* Fill a QMD description for launching k of img (loaded at image_va) on arch: program and
 * prefetch addresses, registers, barriers (at least 1), shared size + SM config for
 * dynamic_shared_B extra bytes, local memory (local_high_B per thread: the size the
 * channel's local memory was set up for, >= gpu_cubin_kernel_local_B(k)), grid/block, cbuf0
 * (cbuf0_va, cbuf0_B) and every module constant bank. Starts from gpu_qmd_desc_init().
 * HCQ_ERR_INVALID for shapes the hardware cannot take (with a message). */
HCQ_MUST_CHECK enum hcq_status gpu_cubin_qmd_desc(struct gpu_qmd_desc *d, const struct hcq_arch *arch,
                                                  const struct gpu_cubin_image *img,
                                                  const struct gpu_cubin_kernel *k, uint64_t image_va,
                                                  const uint32_t grid[3], const uint32_t block[3],
                                                  uint32_t dynamic_shared_B, uint32_t local_high_B,
                                                  uint64_t cbuf0_va, uint32_t cbuf0_B);

#endif /* GPU_CUBIN_H */
