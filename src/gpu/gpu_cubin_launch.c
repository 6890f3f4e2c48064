/* SPDX-License-Identifier: MIT */
/*
 * gpu_cubin_launch.c - what a launch of a loaded cubin kernel needs: shared and local memory
 * sizes, the thread limit from its registers, cbuf0 (driver area + parameters) and the QMD
 * description. Layer: gpu (pure). Facts: docs/hw/rm.md §6.5-6.7, §7.4, §8.3. The loader
 * itself is gpu_cubin.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_cubin.h"
#include "util_le.h"

/* ==== Launch helpers ==== */

uint32_t
gpu_cubin_kernel_shared_B(const struct gpu_cubin_kernel *k, uint32_t dynamic_B)
{
    uint64_t b = GPU_CUBIN_SHARED_RESERVE_B + (uint64_t)k->shared_static_B + dynamic_B;
    b = (b + 127) & ~(uint64_t)127; /* rm.md §6.7 */
    return b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
}

/* Registers a warp of k takes: allocated in 256-register units (rm.md §7.4 step 7). */
static uint64_t
regs_per_warp(const struct gpu_cubin_kernel *k)
{
    uint64_t regs = k->register_count ? k->register_count : 1;
    return (regs * 32 + 255) & ~(uint64_t)255;
}

uint32_t
gpu_cubin_ctas_per_sm(const struct gpu_cubin_kernel *k, const uint32_t block[3])
{
    /* 64K registers (per-warp 256-register units, as gpu_cubin_kernel_max_threads), 2048
     * threads and 32 CTAs per SM on sm_80+ */
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    uint64_t warps = (threads + 31) / 32;
    uint64_t per_warp = regs_per_warp(k);
    uint64_t by_regs = warps ? 65536 / (per_warp * warps) : 32, by_threads = threads ? 2048 / threads : 32;
    uint64_t n = by_regs < by_threads ? by_regs : by_threads;
    return n < 1 ? 1 : n > 32 ? 32 : (uint32_t)n;
}

/* FREE_CTA_SLOTS_EMPTY_SM as CTAs of the grid an empty SM holds (gpu_cubin_free_cta_slots_fit
 * below uses it as a bound; the CUDA driver's QMDs have 0). With a nonzero value a grid its
 * predecessor's QMD schedules starts sooner (H100: graph of 300 empty kernels 0.458 -> 0.376
 * us/kernel, 300 dependent kernels 0.70 -> 0.63, 2 CTAs per SM 1.03 -> 0.95). The hardware
 * trusts the value: 1 held a 2-CTA/SM chain to one CTA per SM (2.16 us/kernel), 32 for every grid
 * faulted kernels (Xid 13), and this function's values on every grid faulted grids of more
 * than one wave inside the whole HCQ suite (fill, copy and conv2d; each passed alone) - hence
 * single-wave grids only. The model: kernels without shared memory of their own, the
 * least of 32 CTAs, 64 warps, and the registers counted per SM sub-partition (16K each; a CTA of w
 * warps takes up to ceil(w / 4) warps of one). */
uint32_t
gpu_cubin_free_cta_slots(const struct gpu_cubin_kernel *k, const uint32_t block[3], uint32_t shared_B)
{
    /* no shared memory beyond the reserve (a 128-byte multiple, as gpu_cubin_kernel_shared_B rounds);
     * no kernel (the emulators' built-in stubs for arches the build has no cubin of): 0 */
    if (!k || shared_B > GPU_CUBIN_SHARED_RESERVE_B)
        return 0;
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    uint64_t warps = (threads + 31) / 32;
    uint64_t per_warp = regs_per_warp(k);
    if (!warps || warps > 64 || per_warp > 16384)
        return 0;
    uint64_t by_warps = 64 / warps, by_regs = (16384 / per_warp) / ((warps + 3) / 4);
    uint64_t n = by_warps < by_regs ? by_warps : by_regs;
    return n < 1 ? 0 : n > 32 ? 32 : (uint32_t)n;
}

/* The default FREE_CTA_SLOTS_EMPTY_SM on V4 QMDs (pb_build.c): the fewest CTAs per SM that hold
 * the whole grid in one wave - ceil(CTAs / SMs) - where gpu_cubin_free_cta_slots says one wave
 * of it fits; 0 (the hardware's own placement) for every other grid. Why one wave only
 * (H100, 2026-11-27): grids of more
 * than one wave faulted (Xid 13) inside the whole HCQ suite even at their true occupancy, while
 * single-wave grids at that occupancy or at 1 passed the suite and the LLM tests; the smallest
 * value that fits also keeps any error in the occupancy model from mattering. */
uint32_t
gpu_cubin_free_cta_slots_fit(const struct gpu_cubin_kernel *k, const uint32_t block[3], uint32_t shared_B,
                             const uint32_t grid[3], uint32_t sm_count)
{
    uint64_t occ = gpu_cubin_free_cta_slots(k, block, shared_B);
    uint64_t ctas = (uint64_t)grid[0] * grid[1] * grid[2];
    if (!occ || !sm_count || !ctas || ctas > occ * sm_count)
        return 0;
    return (uint32_t)((ctas + sm_count - 1) / sm_count);
}

uint32_t
gpu_cubin_kernel_local_B(const struct gpu_cubin_kernel *k)
{
    uint64_t b = (uint64_t)k->min_stack_B + GPU_CUBIN_LOCAL_RESERVE_B;
    return (uint32_t)((b + 31) & ~(uint64_t)31); /* rm.md §8.3 */
}

uint32_t
gpu_cubin_kernel_max_threads(const struct gpu_cubin_kernel *k)
{
    /* 64K registers per SM, allocated per warp (regs_per_warp) */
    uint64_t per_warp = regs_per_warp(k);
    uint32_t t = (uint32_t)(65536 / per_warp / 4 * 4 * 32);
    return t > 1024 ? 1024 : t;
}

uint32_t
gpu_cubin_kernel_param_lead(const struct gpu_cubin_kernel *k)
{
    return k && k->param_count ? k->params[0].offset_B : 0;
}

uint32_t
gpu_cbuf0_param_base(const struct hcq_arch *arch, const struct gpu_cubin_kernel *k)
{
    return k && k->param_base_B ? k->param_base_B : arch->cbuf0_params_off_B;
}

uint32_t
gpu_cbuf0_size(const struct hcq_arch *arch, const struct gpu_cubin_kernel *k, uint32_t params_B)
{
    uint32_t base = gpu_cbuf0_param_base(arch, k) + gpu_cubin_kernel_param_lead(k);
    uint64_t need = (uint64_t)base + params_B;
    if (k && k->cbuf0_size_B > need)
        need = k->cbuf0_size_B;
    if (arch->cbuf0_min_B > need)
        need = arch->cbuf0_min_B;
    need = (need + 15) & ~(uint64_t)15;
    return need > UINT32_MAX ? UINT32_MAX : (uint32_t)need;
}

enum hcq_status
gpu_cbuf0_build(const struct hcq_arch *arch, const struct gpu_cubin_kernel *k, const uint32_t grid[3],
                const uint32_t block[3], uint64_t local_window_va, uint64_t shared_window_va,
                const void *params, uint32_t params_B, void *out, uint32_t out_B)
{
    const uint32_t lead = gpu_cubin_kernel_param_lead(k);
    if (k && k->param_size_B && params_B > k->param_size_B - lead)
        return hcq_err(HCQ_ERR_INVALID, "gpu_cbuf0_build: kernel %s: %u parameter bytes (expected <= %u)",
                       k->name, params_B, k->param_size_B - lead);
    uint32_t size = gpu_cbuf0_size(arch, k, params_B);
    if (out_B < size)
        return hcq_err(HCQ_ERR_INVALID, "gpu_cbuf0_build: output of %u bytes (expected >= %u)", out_B, size);
    uint8_t *o = out;
    memset(o, 0, size);
    for (int i = 0; i < 3; i++) {
        util_le32_put(o + GPU_CBUF0_BLOCK_DIM_OFF_B + 4 * i, block[i]);
        util_le32_put(o + GPU_CBUF0_GRID_DIM_OFF_B + 4 * i, grid[i]);
    }
    util_le64_put(o + arch->cbuf0_shared_window_off_B, shared_window_va);
    util_le64_put(o + arch->cbuf0_local_window_off_B, local_window_va);
    util_le32_put(o + arch->cbuf0_stack_off_B, GPU_CBUF0_STACK_INIT);
    uint32_t base = gpu_cbuf0_param_base(arch, k) + lead;
    if (params_B)
        memcpy(o + base, params, params_B);
    return HCQ_OK;
}

void
gpu_cbuf0_set_va(const struct hcq_arch *arch, const struct gpu_cubin_kernel *k, void *cbuf0, uint32_t cbuf0_B,
                 uint64_t cbuf0_va)
{
    const uint32_t off = arch->cbuf0_param_va_off_B;
    if (!off || off + 8 > cbuf0_B)
        return;
    util_le64_put((uint8_t *)cbuf0 + off, cbuf0_va + gpu_cbuf0_param_base(arch, k));
}

#define INVALID(...) hcq_err(HCQ_ERR_INVALID, "gpu_cubin_qmd_desc: " __VA_ARGS__)

static enum hcq_status
check_shape(const struct gpu_cubin_kernel *k, const uint32_t grid[3], const uint32_t block[3])
{
    /* rm.md §7.4 step 7 */
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    uint64_t max_t = gpu_cubin_kernel_max_threads(k);
    if (k->max_threads[0]) { /* __launch_bounds__ */
        uint64_t lb = (uint64_t)k->max_threads[0] * (k->max_threads[1] ? k->max_threads[1] : 1) *
                      (k->max_threads[2] ? k->max_threads[2] : 1);
        if (lb < max_t)
            max_t = lb;
    }
    if (threads == 0 || threads > max_t)
        return INVALID("kernel %s: block %ux%ux%u = %" PRIu64 " threads (expected 1..%" PRIu64
                       " for %u registers and its launch bounds)",
                       k->name, block[0], block[1], block[2], threads, max_t, k->register_count);
    if (block[0] > 1024 || block[1] > 1024 || block[2] > 64)
        return INVALID("kernel %s: block %ux%ux%u (expected <= 1024x1024x64)", k->name, block[0], block[1],
                       block[2]);
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0 || grid[0] > 0x7FFFFFFFu || grid[1] > 65535 ||
        grid[2] > 65535)
        return INVALID("kernel %s: grid %ux%ux%u (expected 1..2^31-1 x 1..65535 x 1..65535)", k->name,
                       grid[0], grid[1], grid[2]);
    if (k->uses_clusters)
        return hcq_err(HCQ_ERR_UNSUPPORTED, "gpu_cubin_qmd_desc: kernel %s uses thread-block clusters",
                       k->name);
    return HCQ_OK;
}

enum hcq_status
gpu_cubin_qmd_desc(struct gpu_qmd_desc *d, const struct hcq_arch *arch, const struct gpu_cubin_image *img,
                   const struct gpu_cubin_kernel *k, uint64_t image_va, const uint32_t grid[3],
                   const uint32_t block[3], uint32_t dynamic_shared_B, uint32_t local_high_B,
                   uint64_t cbuf0_va, uint32_t cbuf0_B)
{
    enum hcq_status st = check_shape(k, grid, block);
    if (st != HCQ_OK)
        return st;
    gpu_qmd_desc_init(d);
    d->program_va = image_va + k->code_off_B;
    /* prefetch covers the code from the 256-byte line holding its start (rm.md §6.2) */
    d->prefetch_va = d->program_va & ~(uint64_t)0xFF;
    d->prefetch_size = gpu_qmd_prefetch_size(k->code_size_B + (d->program_va & 0xFF));
    d->register_count = k->register_count;
    d->barrier_count = k->barrier_count > 1 ? k->barrier_count : 1; /* tinygrad: always 1 */
    d->shared_mem_B = gpu_cubin_kernel_shared_B(k, dynamic_shared_B);
    uint32_t carve = gpu_qmd_carveout_KiB(d->shared_mem_B, arch->max_shared_per_sm_KiB);
    if (carve == 0)
        return INVALID("kernel %s: %u bytes of shared memory (more than %s's %u KiB)", k->name,
                       d->shared_mem_B, arch->name, arch->max_shared_per_sm_KiB);
    uint32_t max_carve = arch->max_shared_per_sm_KiB < 100 ? arch->max_shared_per_sm_KiB : 100;
    /* MIN fits one CTA (tinygrad's choice); TARGET fits as many CTAs as the registers and
     * threads allow, so kernels with tens of KiB of shared memory keep the occupancy the
     * CUDA driver gives them (e.g. 2 x 49 KiB GEMM CTAs need the 100 KiB carve-out, not
     * 64); MAX is at least TARGET (NVK sets the largest legal one). */
    uint32_t target =
        gpu_qmd_carveout_KiB(d->shared_mem_B * gpu_cubin_ctas_per_sm(k, block), arch->max_shared_per_sm_KiB);
    if (target < carve) /* more CTAs than any carve-out holds: the largest one */
        target = gpu_qmd_carveout_KiB(arch->max_shared_per_sm_KiB * 1024u, arch->max_shared_per_sm_KiB);
    /* TARGET of every kernel at least GPU_QMD_UNIFORM_CARVEOUT_KIB (or the SM's largest
     * carve-out below that): grids with different TARGETs do not share an SM (the carve-out
     * changes only on an idle SM), so a dependent grid that starts early
     * (HCQ_LAUNCH_DEP_WAIT) could not fill the SMs its predecessor's CTAs leave. Measured on
     * H100, tg128 with PDL: Q6_K 1287 -> 1374, Q4_K_M 1330 -> 1508, Q8_0 1146 -> 1254 tok/s
     * against a carve-out per kernel; 228 KiB measured the same as 100. */
    {
        const uint32_t want = GPU_QMD_UNIFORM_CARVEOUT_KIB < arch->max_shared_per_sm_KiB
                                  ? GPU_QMD_UNIFORM_CARVEOUT_KIB
                                  : arch->max_shared_per_sm_KiB;
        const uint32_t f = gpu_qmd_carveout_KiB(want * 1024u, arch->max_shared_per_sm_KiB);
        if (f > target)
            target = f;
    }
    if (target < carve)
        target = carve;
    d->sm_config_min = gpu_qmd_sm_config(carve);
    d->sm_config_target = gpu_qmd_sm_config(target);
    d->sm_config_max = gpu_qmd_sm_config(target > max_carve ? target : max_carve); /* tinygrad 0x1a */
    if (local_high_B < gpu_cubin_kernel_local_B(k))
        return INVALID("kernel %s: local memory %u bytes/thread (expected >= %u)", k->name, local_high_B,
                       gpu_cubin_kernel_local_B(k));
    d->local_mem_high_B = local_high_B;
    for (int i = 0; i < 3; i++) {
        d->grid[i] = grid[i];
        d->block[i] = block[i];
    }
    d->cbuf[0] = (struct gpu_qmd_cbuf){
        .va = cbuf0_va, .size_B = (cbuf0_B + 15) & ~15u, .valid = true, .invalidate = true};
    for (uint32_t i = 0; i < img->bank_count; i++) {
        const struct gpu_cubin_bank *b = &img->banks[i];
        d->cbuf[b->index] = (struct gpu_qmd_cbuf){
            .va = image_va + b->off_B, .size_B = (b->size_B + 15) & ~15u, .valid = true};
    }
    for (uint32_t i = 0; i < k->kbank_count; i++)
        d->cbuf[k->kbanks[i].index] = (struct gpu_qmd_cbuf){
            .va = image_va + k->kbanks[i].off_B, .size_B = (k->kbanks[i].size_B + 15) & ~15u, .valid = true};
    d->sass_version = arch->sass_version;
    return HCQ_OK;
}
