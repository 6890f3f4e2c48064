/* SPDX-License-Identifier: MIT */
/*
 * nvgpu_kmd.c - Jetson Orin (ga10b) kernel-driver backend, bring-up and teardown:
 * open /dev/nvmap + /dev/nvgpu/igpu0/ctrl, read the GPU's characteristics, build the
 * address space (with the shader-window reservations), map the doorbell page, open the
 * TSG and its async subcontext. Layer: kmd. Every syscall goes through struct sys,
 * so the same code runs on the kernel and on the emulated driver (emu, emu:ga10b).
 * The sequence is docs/hw/nvgpu.md §1.3 / §10; sections are cited per step.
 */
#include "nvgpu_kmd.h"

#include "util_log.h"
#include "hcq_priv.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void nvgpu_kmd_destroy(struct kmd *kmd);

static const struct kmd_ops nvgpu_kmd_ops = {
    .destroy = nvgpu_kmd_destroy,
    .mem_alloc = nvgpu_mem_alloc,
    .mem_free = nvgpu_mem_free,
    .channel_create = nvgpu_chan_create,
    .channel_destroy = nvgpu_chan_destroy,
    .channel_kick = nvgpu_chan_kick,
    /* Channel faults: each channel has an error notifier the kernel writes (TegraIface used
     * none and learnt of faults only from dmesg, nvgpu.md §6.13); details stay in dmesg. */
    .check = nvgpu_chan_check,
    .doorbell_flush = nvgpu_chan_doorbell_flush,
};

struct nvgpu_kmd *
nvgpu_kmd_from(struct kmd *kmd)
{
    assert(kmd && kmd->ops == &nvgpu_kmd_ops);
    return (struct nvgpu_kmd *)kmd;
}

int
nvgpu_kmd_ioctl(struct nvgpu_kmd *k, int fd, unsigned long req, void *arg, const char *name)
{
    int rc = k->sys->ioctl(k->sys->ctx, fd, req, arg);
    int err = rc < 0 ? (errno ? errno : EIO) : 0;
    if (hcq_debug_flags() & HCQ_DEBUG_IOCTL)
        HCQ_LOG_DEBUG("nvgpu: ioctl fd %d %s (0x%08lx) -> %d%s%s", fd, name, req, rc, err ? " " : "",
                      err ? strerror(err) : "");
    return err;
}

enum hcq_status
nvgpu_kmd_errno_status(int err)
{
    return err == ENOMEM ? HCQ_ERR_NOMEM : HCQ_ERR_DRIVER;
}

/* ==== Discovery (nvgpu.md §1.2, §6.11) ==== */

static enum hcq_status
nvgpu_kmd_characteristics(struct nvgpu_kmd *k)
{
    struct nvgpu_gpu_get_characteristics req = {
        .gpu_characteristics_buf_size = sizeof k->chars,
        .gpu_characteristics_buf_addr = (uint64_t)(uintptr_t)&k->chars,
    };
    memset(&k->chars, 0, sizeof k->chars);
    int err =
        nvgpu_kmd_ioctl(k, k->ctrl_fd, NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, &req, "GET_CHARACTERISTICS");
    if (err)
        return hcq_err(HCQ_ERR_DRIVER, "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS: %s", strerror(err));
    /* The kernel copies min(ours, its) bytes and reports its own size, which names the
     * release (NVIDIA's headers, tests/data/l4t_uapi.tsv): 328 on L4T r36 (r36.2 to
     * r36.4.3 publish identical uapi headers, so one r36 form serves them all), 312 on r35,
     * where numa_domain_id (+4 pad) at 16 does not exist and every later field sits 8
     * bytes lower. Larger than 328: a later r36 that appended fields (new fields go at the
     * end of this struct), read as r36. Anything else is unchecked: refuse it. */
    if (req.gpu_characteristics_buf_size >= NVGPU_CHARS_B_R36) {
        k->l4t = NVGPU_L4T_R36;
    } else if (req.gpu_characteristics_buf_size == NVGPU_CHARS_B_R35) {
        k->l4t = NVGPU_L4T_R35;
        uint8_t *b = (uint8_t *)&k->chars;
        memmove(b + NVGPU_CHARS_R35_SHIFT_AT + NVGPU_CHARS_R35_SHIFT_B, b + NVGPU_CHARS_R35_SHIFT_AT,
                NVGPU_CHARS_B_R35 - NVGPU_CHARS_R35_SHIFT_AT);
        memset(b + NVGPU_CHARS_R35_SHIFT_AT, 0, NVGPU_CHARS_R35_SHIFT_B); /* numa_domain_id: none */
        k->chars.device_instance_id = 0;
    } else {
        return hcq_err(
            HCQ_ERR_UNSUPPORTED,
            "GET_CHARACTERISTICS: kernel struct is %llu bytes (known: >= %u = L4T r36, %u = L4T r35)",
            (unsigned long long)req.gpu_characteristics_buf_size, NVGPU_CHARS_B_R36, NVGPU_CHARS_B_R35);
    }
    const struct nvgpu_gpu_characteristics *c = &k->chars;
    if (!(c->flags & NVGPU_GPU_FLAGS_SUPPORT_USERMODE_SUBMIT))
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "GET_CHARACTERISTICS: flags 0x%llx lack SUPPORT_USERMODE_SUBMIT (1<<30)",
                       (unsigned long long)c->flags);
    /* IO coherence is what lets nvhcq emit no CPU cache maintenance: the GPU snoops the
     * CPU caches and the CPU sees GPU writes (module.c sets it from the device tree's
     * dma-coherent). Without it INNER_CACHEABLE buffers would need NVMAP_IOC_CACHE around
     * every CPU access, which nvhcq does not do: refuse rather than compute wrong. */
    if (!(c->flags & NVGPU_GPU_FLAGS_SUPPORT_IO_COHERENCE))
        return hcq_err(
            HCQ_ERR_UNSUPPORTED,
            "GET_CHARACTERISTICS: flags 0x%llx lack SUPPORT_IO_COHERENCE (1<<20): nvhcq emits no CPU "
            "cache maintenance",
            (unsigned long long)c->flags);
    if (!(c->flags & NVGPU_GPU_FLAGS_SUPPORT_TSG_SUBCONTEXTS))
        return hcq_err(HCQ_ERR_UNSUPPORTED, "GET_CHARACTERISTICS: flags 0x%llx lack TSG_SUBCONTEXTS (1<<22)",
                       (unsigned long long)c->flags);
    /* The compute class alone does not name the chip (ga102 also has AMPERE_COMPUTE_B):
     * match the SM version too. sm_arch_sm_version is 0x807 for SM 8.7 (§1.2). */
    uint32_t sm = ((c->sm_arch_sm_version >> 8) & 0xF) * 10 + (c->sm_arch_sm_version & 0xF);
    k->base.arch = NULL;
    for (uint32_t i = 0; hcq_arch_at(i); i++) {
        const struct hcq_arch *a = hcq_arch_at(i);
        if (a->compute_cls == c->compute_class && a->sm_version == sm) {
            k->base.arch = a;
            break;
        }
    }
    if (!k->base.arch)
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "GET_CHARACTERISTICS: compute_class 0x%04x with sm_%u (0x%x) has no arch row",
                       c->compute_class, sm, c->sm_arch_sm_version);
    if (c->dma_copy_class != k->base.arch->copy_cls)
        return hcq_err(HCQ_ERR_UNSUPPORTED, "GET_CHARACTERISTICS: dma_copy_class 0x%04x (expected 0x%04x)",
                       c->dma_copy_class, k->base.arch->copy_cls);
    if (c->gpu_va_bit_count && c->gpu_va_bit_count < 40)
        return hcq_err(HCQ_ERR_UNSUPPORTED, "GET_CHARACTERISTICS: gpu_va_bit_count %u (expected >= 40)",
                       c->gpu_va_bit_count);
    return HCQ_OK;
}

/* SM/TPC/GPC counts from what the driver reports (NUM_VSMS, GET_TPC_MASKS), never a
 * hard-coded SMs-per-TPC (nvgpu.md §1.2 topology conflict, §6.11). */
static enum hcq_status
nvgpu_kmd_topology(struct nvgpu_kmd *k)
{
    const struct nvgpu_gpu_characteristics *c = &k->chars;
    struct nvgpu_gpu_get_tpc_masks_args tm = {
        .mask_buf_size = sizeof k->tpc_mask,
        .mask_buf_addr = (uint64_t)(uintptr_t)k->tpc_mask,
    };
    int err = nvgpu_kmd_ioctl(k, k->ctrl_fd, NVGPU_GPU_IOCTL_GET_TPC_MASKS, &tm, "GET_TPC_MASKS");
    if (err)
        return hcq_err(HCQ_ERR_DRIVER, "NVGPU_GPU_IOCTL_GET_TPC_MASKS: %s", strerror(err));
    struct nvgpu_gpu_num_vsms nv = {0};
    err = nvgpu_kmd_ioctl(k, k->ctrl_fd, NVGPU_GPU_IOCTL_NUM_VSMS, &nv, "NUM_VSMS");
    if (err)
        return hcq_err(HCQ_ERR_DRIVER, "NVGPU_GPU_IOCTL_NUM_VSMS: %s", strerror(err));
    k->num_vsms = nv.num_vsms;

    uint32_t gpcs = (uint32_t)__builtin_popcount(c->gpc_mask), tpcs = 0, max_tpc_per_gpc = 0;
    for (uint32_t g = 0; g < NVGPU_MAX_GPCS; g++) {
        if (!(c->gpc_mask & (1u << g)))
            continue;
        uint32_t n = (uint32_t)__builtin_popcount(k->tpc_mask[g]);
        tpcs += n;
        max_tpc_per_gpc = n > max_tpc_per_gpc ? n : max_tpc_per_gpc;
    }
    if (!gpcs || !tpcs || !k->num_vsms || k->num_vsms % tpcs)
        return hcq_err(HCQ_ERR_DRIVER,
                       "topology: gpc_mask 0x%x, %u TPCs, NUM_VSMS %u (expected a multiple of TPCs)",
                       c->gpc_mask, tpcs, k->num_vsms);
    struct kmd_info *info = &k->base.info;
    info->gpc_count = gpcs;
    info->tpc_count = tpcs;
    info->sm_count = k->num_vsms;
    info->max_warps_per_sm = c->sm_arch_warp_count;
    /* Local memory is sized per TPC for the chip maxima (rm.md §8.3); num_tpc_per_gpc is the
     * "architectural max" (§1.2), so take the larger of it and what the masks show. */
    info->litter_gpcs = gpcs > c->num_gpc ? gpcs : c->num_gpc;
    info->litter_tpc_per_gpc = c->num_tpc_per_gpc > max_tpc_per_gpc ? c->num_tpc_per_gpc : max_tpc_per_gpc;
    info->litter_sm_per_tpc = k->num_vsms / tpcs;
    return HCQ_OK;
}

/* ==== Address space (nvgpu.md §3.1, §3.4) ==== */

static enum hcq_status
nvgpu_kmd_reserve_window(struct nvgpu_kmd *k, uint64_t va, const char *what)
{
    struct nvgpu_as_alloc_space_args a = {
        .pages = NVGPU_WINDOW_RESERVE_B / NVGPU_PAGE_B,
        .page_size = NVGPU_PAGE_B,
        .flags = NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET,
        .offset = va,
    };
    int err = nvgpu_kmd_ioctl(k, k->as_fd, NVGPU_AS_IOCTL_ALLOC_SPACE, &a, "ALLOC_SPACE");
    if (err)
        return hcq_err(nvgpu_kmd_errno_status(err), "NVGPU_AS_IOCTL_ALLOC_SPACE %s window 0x%llx + 1 GiB: %s",
                       what, (unsigned long long)va, strerror(err));
    if (a.offset != va)
        return hcq_err(HCQ_ERR_DRIVER, "ALLOC_SPACE %s window: got 0x%llx (expected 0x%llx)", what,
                       (unsigned long long)a.offset, (unsigned long long)va);
    return HCQ_OK;
}

static enum hcq_status
nvgpu_kmd_address_space(struct nvgpu_kmd *k)
{
    struct nvgpu_alloc_as_args as = {
        .big_page_size = 0, /* ga10b: no big pages (§3.1) */
        .flags = NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA,
        .va_range_start = NVGPU_VA_RANGE_START,
        .va_range_end = NVGPU_VA_RANGE_END,
        .va_range_split = 0, /* must be 0 with UNIFIED_VA */
    };
    _Static_assert(NVGPU_VA_RANGE_START % NVGPU_VA_PDE_ALIGN_B == 0, "ALLOC_AS start PDE-aligned");
    _Static_assert(NVGPU_VA_RANGE_END % NVGPU_VA_PDE_ALIGN_B == 0, "ALLOC_AS end PDE-aligned");
    int err = nvgpu_kmd_ioctl(k, k->ctrl_fd, NVGPU_GPU_IOCTL_ALLOC_AS, &as, "ALLOC_AS");
    if (err)
        return hcq_err(HCQ_ERR_DRIVER, "NVGPU_GPU_IOCTL_ALLOC_AS [0x%llx, 0x%llx): %s",
                       (unsigned long long)as.va_range_start, (unsigned long long)as.va_range_end,
                       strerror(err));
    k->as_fd = as.as_fd;
    /* Reserve both shader windows before any buffer is mapped: the VA allocator works
     * top-down and would eventually place a buffer inside them (the P0 bug, §3.4). */
    enum hcq_status st = nvgpu_kmd_reserve_window(k, NVGPU_LOCAL_WINDOW_VA, "local");
    if (st == HCQ_OK)
        st = nvgpu_kmd_reserve_window(k, NVGPU_SHARED_WINDOW_VA, "shared");
    if (st != HCQ_OK)
        return st;
    k->windows_reserved = true;
    k->base.info.local_window_va = NVGPU_LOCAL_WINDOW_VA;
    k->base.info.shared_window_va = NVGPU_SHARED_WINDOW_VA;
    return HCQ_OK;
}

/* ==== Scheduling objects (nvgpu.md §1.3 steps 5, 7, 9; §4.1, §4.8) ==== */

static enum hcq_status
nvgpu_kmd_tsg(struct nvgpu_kmd *k)
{
    void *map = k->sys->mmap(k->sys->ctx, NULL, NVGPU_USERMODE_MAP_B, PROT_READ | PROT_WRITE, MAP_SHARED,
                             k->ctrl_fd, 0);
    if (map == MAP_FAILED)
        return hcq_err(HCQ_ERR_DRIVER, "mmap %s (usermode doorbell page, 0x%x B): %s", NVGPU_DEV_CTRL,
                       NVGPU_USERMODE_MAP_B, strerror(errno));
    k->usermode = map;

    int err;
    if (k->l4t == NVGPU_L4T_R35) {
        /* r35: 8-byte OPEN_TSG and no CREATE_SUBCONTEXT; BIND_CHANNEL_EX takes the async
         * VEID directly and the subcontext uses the channel's AS (r35.5 ioctl_tsg.c). */
        struct nvgpu_gpu_open_tsg_args_r35 t = {0};
        err = nvgpu_kmd_ioctl(k, k->ctrl_fd, NVGPU_GPU_IOCTL_OPEN_TSG_R35, &t, "OPEN_TSG");
        if (err)
            return hcq_err(nvgpu_kmd_errno_status(err), "NVGPU_GPU_IOCTL_OPEN_TSG (r35): %s", strerror(err));
        k->tsg_fd = (int)t.tsg_fd;
        if (k->chars.max_veid_count_per_tsg && k->chars.max_veid_count_per_tsg <= NVGPU_R35_ASYNC_VEID)
            return hcq_err(HCQ_ERR_UNSUPPORTED,
                           "L4T r35: max_veid_count_per_tsg %u leaves no async subcontext",
                           k->chars.max_veid_count_per_tsg);
        k->veid = NVGPU_R35_ASYNC_VEID;
        return HCQ_OK;
    }
    struct nvgpu_gpu_open_tsg_args t = {0};
    err = nvgpu_kmd_ioctl(k, k->ctrl_fd, NVGPU_GPU_IOCTL_OPEN_TSG, &t, "OPEN_TSG");
    if (err)
        return hcq_err(nvgpu_kmd_errno_status(err), "NVGPU_GPU_IOCTL_OPEN_TSG: %s", strerror(err));
    k->tsg_fd = t.tsg_fd;

    struct nvgpu_tsg_create_subcontext_args s = {.type = NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC, .as_fd = k->as_fd};
    err = nvgpu_kmd_ioctl(k, k->tsg_fd, NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, &s, "CREATE_SUBCONTEXT");
    if (err)
        return hcq_err(nvgpu_kmd_errno_status(err), "NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT (ASYNC): %s",
                       strerror(err));
    k->veid = s.veid;
    return HCQ_OK;
}

static void
nvgpu_kmd_fill_info(struct nvgpu_kmd *k)
{
    struct kmd_info *info = &k->base.info;
    const struct nvgpu_gpu_characteristics *c = &k->chars;
    char chip[9] = {0};
    memcpy(chip, c->chipname, 8);
    snprintf(info->name, sizeof info->name, "NVIDIA Tegra iGPU %s (arch 0x%x impl 0x%x, sm_%u%u)",
             chip[0] ? chip : k->base.arch->name, c->arch, c->impl, (c->sm_arch_sm_version >> 8) & 0xF,
             c->sm_arch_sm_version & 0xF);
    snprintf(info->driver, sizeof info->driver, "nvgpu+nvmap (usermode submit), L4T %s ABI",
             k->l4t == NVGPU_L4T_R35 ? "r35 (JetPack 5)" : "r36 (JetPack 6)");
    /* Unified memory: device memory is the SoC's DRAM (on_board_video_memory_size is 0). */
    long pages = sysconf(_SC_PHYS_PAGES), page_B = sysconf(_SC_PAGESIZE);
    info->vram_B = c->on_board_video_memory_size ? c->on_board_video_memory_size
                   : (pages > 0 && page_B > 0)   ? (uint64_t)pages * (uint64_t)page_B
                                                 : 0;
    info->unified_memory = true;
    info->has_uvm = false;            /* no nvidia-uvm on JetPack 6 (nvgpu.md header) */
    info->sem_release_in_push = true; /* the QMD-reuse race (§6.6) */
    info->copies_by_cpu = true;       /* host<->device copies: sync + memcpy (§6.7) */
}

/* ==== Create / destroy ==== */

static void
nvgpu_kmd_close_fd(struct nvgpu_kmd *k, int *fd)
{
    if (*fd >= 0)
        k->sys->close(k->sys->ctx, *fd);
    *fd = -1;
}

static void
nvgpu_kmd_destroy(struct kmd *kmd)
{
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    /* Teardown order of nvgpu.md §4.11: channels, buffers, TSG, AS, ctrl, nvmap. */
    while (k->chans)
        nvgpu_chan_destroy(kmd, &k->chans->base);
    while (k->mems)
        nvgpu_mem_destroy(k, k->mems);
    if (k->usermode)
        k->sys->munmap(k->sys->ctx, (void *)k->usermode, NVGPU_USERMODE_MAP_B);
    nvgpu_kmd_close_fd(k, &k->tsg_fd);
    nvgpu_kmd_close_fd(k, &k->as_fd);
    nvgpu_kmd_close_fd(k, &k->ctrl_fd);
    nvgpu_kmd_close_fd(k, &k->nvmap_fd);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

enum hcq_status
nvgpu_kmd_create(const struct sys *sys, int index, struct kmd **kmd_out)
{
    *kmd_out = NULL;
    if (index != 0)
        return hcq_err_quiet(HCQ_ERR_NOT_FOUND, "nvgpu: device %d: Tegra has one iGPU (igpu0)", index);
    struct nvgpu_kmd *k = calloc(1, sizeof *k);
    if (!k)
        return hcq_err(HCQ_ERR_NOMEM, "nvgpu_kmd_create: out of host memory");
    k->base.ops = &nvgpu_kmd_ops;
    k->sys = sys;
    k->nvmap_fd = k->ctrl_fd = k->as_fd = k->tsg_fd = -1;
    pthread_mutex_init(&k->lock, NULL);

    enum hcq_status st;
    /* O_SYNC as TegraIface opens it (§1.1). */
    k->nvmap_fd = sys->open(sys->ctx, NVGPU_DEV_NVMAP, O_RDWR | O_SYNC | O_CLOEXEC);
    if (k->nvmap_fd < 0) {
        int err = errno;
        st = err == ENOENT ? hcq_err_quiet(HCQ_ERR_NOT_FOUND, "nvgpu: %s: %s", NVGPU_DEV_NVMAP, strerror(err))
                           : hcq_err(HCQ_ERR_DRIVER, "open %s: %s%s", NVGPU_DEV_NVMAP, strerror(err),
                                     err == EACCES ? " (add the user to the video group)" : "");
        goto fail_kmd;
    }
    k->ctrl_fd = sys->open(sys->ctx, NVGPU_DEV_CTRL, O_RDWR | O_CLOEXEC);
    if (k->ctrl_fd < 0) {
        int err = errno;
        st = err == ENOENT ? hcq_err_quiet(HCQ_ERR_NOT_FOUND, "nvgpu: %s: %s", NVGPU_DEV_CTRL, strerror(err))
                           : hcq_err(HCQ_ERR_DRIVER, "open %s: %s%s", NVGPU_DEV_CTRL, strerror(err),
                                     err == EACCES ? " (add the user to the video group)" : "");
        goto fail_kmd;
    }
    /* Read once here, after the device nodes opened (a machine without them reports
     * NOT_FOUND as before, whatever the knob says). */
    if ((st = nvgpu_chan_doorbell_batch(&k->doorbell_batch)) != HCQ_OK)
        goto fail_kmd;
    if ((st = nvgpu_kmd_characteristics(k)) != HCQ_OK)
        goto fail_kmd;
    if ((st = nvgpu_kmd_topology(k)) != HCQ_OK)
        goto fail_kmd;
    if ((st = nvgpu_kmd_address_space(k)) != HCQ_OK)
        goto fail_kmd;
    if ((st = nvgpu_kmd_tsg(k)) != HCQ_OK)
        goto fail_kmd;
    nvgpu_kmd_fill_info(k);
    *kmd_out = &k->base;
    return HCQ_OK;

fail_kmd:
    /* destroy accepts the partially built object: every fd is -1 or open. */
    nvgpu_kmd_destroy(&k->base);
    return st;
}

/* ==== The runtime backend "nvgpu" ==== */

enum hcq_status
hcq_nvgpu_open(const char *arg, struct hcq_device **dev_out)
{
    *dev_out = NULL;
    int index = 0;
    if (arg && *arg) {
        char *end = NULL;
        long v = strtol(arg, &end, 10);
        if (*end || v < 0 || v > 64)
            return hcq_err(HCQ_ERR_INVALID, "nvgpu: bad device index '%s' (expected nvgpu:0)", arg);
        index = (int)v;
    }
    struct kmd *kmd = NULL;
    enum hcq_status st = nvgpu_kmd_create(&sys_os, index, &kmd);
    if (st != HCQ_OK)
        return st;
    char spec[16];
    snprintf(spec, sizeof spec, "nvgpu:%d", index);
    return pb_device_create(kmd, "nvgpu", spec, dev_out);
}
