/* SPDX-License-Identifier: MIT */
/*
 * pb_program.c - programs on the pushbuffer engine: a kernel of a cubin parsed by
 * gpu_cubin, relocated and uploaded to device memory (rm.md §7.4), with the launch facts
 * the builder needs (QMD template, cbuf0 size, parameter window, local memory); or, without
 * a cubin for the chip, the code the kmd's program_stub hook writes (kmd.h: only an
 * emulated driver has one; its GPU model runs the kernel's CPU twin). The engine knows
 * nothing of that code's format. Layer: engine.
 */
#include "pb.h"

#include "gpu_cubin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Code memory: device memory the CPU can write (BAR1 on rm), else system memory. Sizes are
 * rounded up to 64 KiB (the big-page size of vidmem mappings): besides saving page-table
 * entries, a stub and a small cubin then take the same allocation, so the emulator's ioctl
 * goldens are the same for builds with and without nvcc. */
#define PB_CODE_GRANULE_B 0x10000u

static enum hcq_status
pb_code_alloc(struct pb_dev *pd, uint64_t size_B, struct kmd_mem **mem_out)
{
    size_B = (size_B + PB_CODE_GRANULE_B - 1) & ~(uint64_t)(PB_CODE_GRANULE_B - 1);
    enum hcq_status st = pb_mem_alloc(pd, size_B, KMD_MEM_VRAM | KMD_MEM_CPU_MAP, mem_out);
    if (st == HCQ_OK || st == HCQ_ERR_DEVICE_LOST)
        return st;
    HCQ_LOG_DEBUG("program code: no CPU-mapped device memory (%s), using system memory", hcq_status_str(st));
    return pb_mem_alloc(pd, size_B, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP, mem_out);
}

/* Upload the kmd's stub for `name` and describe a plain launch of it. */
static enum hcq_status
pb_program_stub(struct pb_dev *pd, const char *name, struct pb_program *pp)
{
    enum hcq_status st = pb_code_alloc(pd, PB_STUB_CODE_B, &pp->code);
    if (st != HCQ_OK)
        return st;
    st = pd->kmd->program_stub(name, pp->code->map, PB_STUB_CODE_B);
    if (st != HCQ_OK)
        return st;
    pp->stub = true;
    struct gpu_qmd_desc *d = &pp->desc;
    gpu_qmd_desc_init(d);
    d->program_va = pp->code->va;
    d->register_count = 32;
    d->shared_mem_B = GPU_CUBIN_SHARED_RESERVE_B;
    uint32_t carve = gpu_qmd_carveout_KiB(d->shared_mem_B, pd->arch->max_shared_per_sm_KiB);
    d->sm_config_min = d->sm_config_target = gpu_qmd_sm_config(carve);
    d->sm_config_max = gpu_qmd_sm_config(carve);
    d->sass_version = pd->arch->sass_version;
    d->grid[0] = d->grid[1] = d->grid[2] = 1;
    d->block[0] = d->block[1] = d->block[2] = 1;
    return HCQ_OK;
}

/* Relocate and upload the cubin image; fill the QMD template of kernel k (its shared size
 * includes the dynamic shared memory the kernel descriptor asks for). */
static enum hcq_status
pb_program_upload(struct pb_dev *pd, struct pb_program *pp, uint32_t shared_dyn_B)
{
    enum hcq_status st = pb_code_alloc(pd, pp->img->alloc_B, &pp->code);
    if (st != HCQ_OK)
        return st;
    st = gpu_cubin_relocate(pp->img, pp->code->va);
    if (st != HCQ_OK)
        return st;
    memset(pp->code->map, 0, pp->img->alloc_B);
    memcpy(pp->code->map, pp->img->data, pp->img->size_B);
    /* Visible before any submission that launches it; the launch path invalidates the
     * instruction cache at the start of every chain (INVALIDATE_SHADER_CACHES_NO_WFI). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    static const uint32_t one[3] = {1, 1, 1};
    return gpu_cubin_qmd_desc(&pp->desc, pd->arch, pp->img, pp->k, pp->code->va, one, one, shared_dyn_B,
                              pp->local_B, 0, pp->cbuf0_B);
}

void
pb_program_unload(struct hcq_device *dev, struct hcq_program *prog)
{
    struct pb_dev *pd = pb_dev(dev);
    struct pb_program *pp = prog->priv;
    if (!pp)
        return;
    /* A launch of it may still be queued: let every queue drain (bounded) before the code
     * memory goes back. A device that is lost or hangs here loses nothing more by it. */
    if (pp->launched && !atomic_load(&dev->lost) && pb_drain_all(pd, PB_HANG_NS) != HCQ_OK)
        HCQ_LOG_WARN("program %s unloaded while the device did not drain", prog->info.name);
    kmd_mem_free(pd->kmd, pp->code);
    gpu_cubin_destroy(pp->img);
    free(pp);
    prog->priv = NULL;
}

enum hcq_status
pb_program_load(struct hcq_device *dev, const void *cubin, size_t cubin_B, const char *name,
                struct hcq_program *prog)
{
    struct pb_dev *pd = pb_dev(dev);
    const struct hcq_arch *arch = pd->arch;
    bool emulated = pd->kmd->info.emulated;
    bool stubs = pd->kmd->program_stub != NULL;
    struct pb_program *pp = calloc(1, sizeof(*pp));
    if (!pp)
        return hcq_err(HCQ_ERR_NOMEM, "program_load: %zu bytes", sizeof(*pp));
    prog->priv = pp;
    enum hcq_status st = HCQ_OK;
    if (cubin) {
        st = gpu_cubin_load(cubin, cubin_B, &pp->img);
        if (st != HCQ_OK)
            goto fail;
        pp->k = gpu_cubin_kernel_find(pp->img, name);
        if (!pp->k) {
            st = hcq_err(HCQ_ERR_NOT_FOUND, "program_load: no kernel \"%s\" in the cubin (%u kernels)", name,
                         pp->img->kernel_count);
            goto fail;
        }
        st = gpu_cubin_check_arch(pp->img, arch);
        if (st != HCQ_OK)
            goto fail;
        if (pp->k->uses_clusters) {
            st = hcq_err(HCQ_ERR_UNSUPPORTED,
                         "program_load: %s uses thread-block clusters (not supported, rm.md §8.5)", name);
            goto fail;
        }
    } else if (!stubs) {
        st = hcq_err(HCQ_ERR_UNSUPPORTED,
                     "program_load: no cubin of %s for sm_%u (build with nvcc and CUARCH=%u)", name,
                     arch->sm_version, arch->sm_version);
        goto fail;
    }
    /* Parameters: the cubin's window, else the built-in kernel's struct at the arch's base. */
    if (pp->k) {
        const uint32_t lead = gpu_cubin_kernel_param_lead(pp->k);
        pp->param_off_B = gpu_cbuf0_param_base(arch, pp->k) + lead;
        pp->param_B = pp->k->param_size_B - lead;
        pp->local_B = gpu_cubin_kernel_local_B(pp->k);
    } else {
        pp->param_off_B = arch->cbuf0_params_off_B;
        pp->param_B = prog->desc ? prog->desc->params_B : 0;
        /* what gpu_cubin_kernel_local_B gives for the kernel's cubin (its stack + headroom) */
        pp->local_B = (PB_LOCAL_HEADROOM_B + (prog->desc ? prog->desc->stack_B : 0) + 31) & ~31u;
    }
    if (prog->desc && pp->param_B != prog->desc->params_B) {
        st = hcq_err(HCQ_ERR_FORMAT,
                     "program_load: %s takes 0x%x parameter bytes in the cubin (expected 0x%x, k_params.h)",
                     name, pp->param_B, prog->desc->params_B);
        goto fail;
    }
    pp->cbuf0_B = gpu_cbuf0_size(arch, pp->k, pp->param_B);
    pp->kargs_B = ((pp->cbuf0_B + 255) & ~255u) + ((arch->qmd_size_B + 255) & ~255u);
    st = pp->img ? pb_program_upload(pd, pp, prog->desc ? prog->desc->shared_dyn_B : 0)
                 : pb_program_stub(pd, name, pp);
    if (st != HCQ_OK)
        goto fail;

    struct hcq_program_info *info = &prog->info;
    snprintf(info->name, sizeof info->name, "%s", name);
    info->params_B = pp->param_B;
    info->regs = pp->desc.register_count;
    info->shared_B = pp->k ? pp->k->shared_static_B : 0;
    info->local_B = pp->k ? pp->k->min_stack_B : 0;
    info->max_threads = pp->k ? gpu_cubin_kernel_max_threads(pp->k) : 1024;
    /* The emulated GPU runs the CPU twin, whatever was uploaded. */
    info->native = !emulated;
    HCQ_LOG_DEBUG("program %s: %s at 0x%llx, %u regs, cbuf0 0x%x (params 0x%x @ 0x%x), local %u B/thread",
                  name, pp->stub ? "stub" : "code", (unsigned long long)pp->desc.program_va, info->regs,
                  pp->cbuf0_B, pp->param_B, pp->param_off_B, pp->local_B);
    return HCQ_OK;

fail:
    pb_program_unload(dev, prog);
    return st;
}

enum hcq_status
pb_copy_prog_get(struct pb_dev *pd)
{
    enum hcq_status st = HCQ_OK;
    pthread_mutex_lock(&pd->pool_lock);
    if (!pd->copy_prog && !pd->copy_prog_failed) {
        st = hcq_program_load(&pd->base, "k_copy_bytes", &pd->copy_prog);
        if (st != HCQ_OK) {
            HCQ_LOG_INFO("%s: copies stay on the copy engine: k_copy_bytes did not load (%s)",
                         pd->base.info.spec, hcq_last_error());
            pd->copy_prog_failed = true;
        }
    }
    if (!pd->copy_prog)
        st = HCQ_ERR_UNSUPPORTED;
    pthread_mutex_unlock(&pd->pool_lock);
    return st;
}
