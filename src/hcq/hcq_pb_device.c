/* SPDX-License-Identifier: MIT */
/*
 * hcq_pb_device.c - the pushbuffer engine's device: wraps a kernel-driver table (struct
 * hcq_kmd: rm, nvgpu, or either on the emulator) into a runtime device (struct
 * hcq_backend_ops), with memory ops, fault polling and the GPU clock. Layer: hcq.
 * Queues, programs and graphs live in hcq_pb_queue.c, hcq_pb_program.c, hcq_pb_graph.c.
 */
#include "hcq_pb.h"

#include "gpu_qmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Memory ==== */

enum hcq_status
hcq_pb_mem_alloc(struct hcq_pb_dev *pd, uint64_t size_B, uint32_t kmd_flags, struct hcq_kmd_mem **mem_out)
{
    struct hcq_kmd_mem *mem = NULL;
    enum hcq_status st = hcq_kmd_mem_alloc(pd->kmd, size_B, 0, kmd_flags, &mem);
    if (st != HCQ_OK)
        return st;
    if ((kmd_flags & HCQ_KMD_MEM_CPU_MAP) && !mem->map) {
        hcq_kmd_mem_free(pd->kmd, mem);
        return hcq_err(HCQ_ERR_DRIVER, "hcq_pb_mem_alloc: kmd returned 0x%llx bytes without the CPU mapping asked for",
                       (unsigned long long)size_B);
    }
    if ((kmd_flags & HCQ_KMD_MEM_LOW_VA) && mem->va + mem->size_B > GPU_PB_VA_LIMIT) {
        uint64_t va = mem->va;
        hcq_kmd_mem_free(pd->kmd, mem);
        return hcq_err(HCQ_ERR_DRIVER, "hcq_pb_mem_alloc: low-VA memory at 0x%llx (expected below 2^40, rm.md §8.2)",
                       (unsigned long long)va);
    }
    *mem_out = mem;
    return HCQ_OK;
}

enum hcq_status
hcq_pb_stream_alloc(struct hcq_pb_dev *pd, uint64_t size_B, struct hcq_kmd_mem **mem_out)
{
    const uint32_t sys = HCQ_KMD_MEM_SYSMEM | HCQ_KMD_MEM_CPU_MAP | HCQ_KMD_MEM_LOW_VA;
    if (pd->stream_flags != sys) {
        enum hcq_status st = hcq_pb_mem_alloc(pd, size_B, pd->stream_flags, mem_out);
        if (st == HCQ_OK || st == HCQ_ERR_DEVICE_LOST)
            return st;
        HCQ_LOG_WARN("stream memory: 0x%llx bytes of CPU-mapped device memory failed (%s); using system memory",
                     (unsigned long long)size_B, hcq_status_str(st));
    }
    return hcq_pb_mem_alloc(pd, size_B, sys, mem_out);
}

static enum hcq_status
hcq_pb_buf_alloc(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct hcq_pb_dev *pd = hcq_pb_dev(dev);
    uint32_t flags;
    if (buf->flags & HCQ_MEM_HOST) {
        /* Host buffers hold signals and staging data: the GPU's semaphores reach them with
         * 40-bit addresses on Ampere (rm.md §8.2), so they live low. */
        flags = HCQ_KMD_MEM_SYSMEM | HCQ_KMD_MEM_CPU_MAP | HCQ_KMD_MEM_LOW_VA;
    } else if (buf->flags & HCQ_MEM_MAPPABLE) {
        flags = HCQ_KMD_MEM_VRAM | HCQ_KMD_MEM_CPU_MAP;
    } else {
        flags = HCQ_KMD_MEM_VRAM;
    }
    struct hcq_kmd_mem *mem = NULL;
    enum hcq_status st = hcq_kmd_mem_alloc(pd->kmd, buf->size_B, 0, flags, &mem);
    if (st != HCQ_OK)
        return st;
    if ((flags & HCQ_KMD_MEM_CPU_MAP) && !mem->map) {
        hcq_kmd_mem_free(pd->kmd, mem);
        return hcq_err(HCQ_ERR_UNSUPPORTED, "buf_alloc: %s buffer of 0x%llx bytes came back without a CPU mapping",
                       (buf->flags & HCQ_MEM_HOST) ? "host" : "mappable", (unsigned long long)buf->size_B);
    }
    buf->va = mem->va;
    buf->map = mem->map;
    buf->priv = mem;
    buf->handle = mem->handle;
    return HCQ_OK;
}

static void
hcq_pb_buf_free(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct hcq_pb_dev *pd = hcq_pb_dev(dev);
    hcq_kmd_mem_free(pd->kmd, (struct hcq_kmd_mem *)buf->priv);
    buf->priv = NULL;
}

static enum hcq_status
hcq_pb_buf_import_host(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct hcq_pb_dev *pd = hcq_pb_dev(dev);
    struct hcq_kmd_mem *mem = NULL;
    enum hcq_status st = hcq_kmd_mem_import_host(pd->kmd, buf->map, buf->size_B, &mem);
    if (st == HCQ_ERR_UNSUPPORTED)
        return hcq_err(st, "buf_import_host: the %s kernel driver cannot map foreign host memory", dev->info.backend);
    if (st != HCQ_OK)
        return st;
    buf->va = mem->va;
    buf->priv = mem;
    buf->handle = mem->handle;
    return HCQ_OK;
}

/* ==== Faults and clock ==== */

enum hcq_status
hcq_pb_check(struct hcq_device *dev)
{
    struct hcq_pb_dev *pd = hcq_pb_dev(dev);
    if (atomic_load(&dev->lost))
        return HCQ_ERR_DEVICE_LOST;
    char reason[256] = "";
    enum hcq_status st = hcq_kmd_check(pd->kmd, reason, sizeof reason);
    if (st == HCQ_OK)
        return HCQ_OK;
    return hcq_device_mark_lost(dev, "%s kernel driver reports a fault: %s", dev->info.backend,
                                reason[0] ? reason : "(no reason given)");
}

static void
hcq_pb_fault_report(struct hcq_device *dev, char *buf, size_t buf_B)
{
    if (!buf_B)
        return;
    buf[0] = '\0';
    /* hcq.h: "" when nothing went wrong. */
    if (!atomic_load(&dev->lost))
        return;
    /* The decoded reason comes first: what the kmd's check() said (Xid, MMU fault address)
     * or the hang description, as stored by hcq_device_mark_lost; then each queue's state. */
    if (dev->fault[0])
        snprintf(buf, buf_B, "%s\n", dev->fault);
    size_t used = strlen(buf);
    pthread_mutex_lock(&dev->lock);
    for (uint32_t i = 0; i < dev->queue_count && used + 1 < buf_B; i++) {
        struct hcq_pb_queue *pq = hcq_pb_queue(dev->queues[i]);
        if (!pq)
            continue;
        hcq_pb_queue_describe(pq, buf + used, buf_B - used);
        used += strlen(buf + used);
    }
    pthread_mutex_unlock(&dev->lock);
}

enum hcq_status
hcq_pb_drain_all(struct hcq_pb_dev *pd, uint64_t timeout_ns)
{
    struct hcq_device *dev = &pd->base;
    pthread_mutex_lock(&dev->lock);
    uint32_t n = dev->queue_count;
    struct hcq_queue **qs = n ? malloc(n * sizeof(*qs)) : NULL;
    if (qs)
        memcpy(qs, dev->queues, n * sizeof(*qs));
    pthread_mutex_unlock(&dev->lock);
    if (n && !qs)
        return hcq_err(HCQ_ERR_NOMEM, "hcq_pb_drain_all: %u queues", n);
    enum hcq_status st = HCQ_OK;
    for (uint32_t i = 0; i < n && st == HCQ_OK; i++) {
        struct hcq_pb_queue *pq = hcq_pb_queue(qs[i]);
        if (pq && pq->main.kc)
            st = hcq_pb_chan_wait(pq, &pq->main, pq->main.tl_last, timeout_ns);
    }
    free(qs);
    return st;
}

void
hcq_pb_clock_calibrate(struct hcq_pb_dev *pd, uint64_t gpu_ns, uint64_t host_ns)
{
    if (gpu_ns == 0 || atomic_load(&pd->clock_calibrated))
        return;
    atomic_store(&pd->clock_offset_ns, (int64_t)(gpu_ns - host_ns));
    atomic_store(&pd->clock_calibrated, true);
}

/* GPU clock (ns), as the semaphore timestamps write it: the host clock plus the offset
 * measured at the first channel's setup submission (the kmd offers no clock query). */
static uint64_t
hcq_pb_device_time_ns(struct hcq_device *dev)
{
    struct hcq_pb_dev *pd = hcq_pb_dev(dev);
    return hcq_time_ns() + (uint64_t)atomic_load(&pd->clock_offset_ns);
}

/* ==== Device ==== */

static void
hcq_pb_device_destroy(struct hcq_device *dev)
{
    struct hcq_pb_dev *pd = hcq_pb_dev(dev);
    for (int e = 0; e < 2; e++)
        for (uint32_t i = 0; i < pd->pool_count[e]; i++)
            hcq_kmd_channel_destroy(pd->kmd, pd->pool[e][i]);
    pthread_mutex_destroy(&pd->pool_lock);
    hcq_kmd_destroy(pd->kmd);
    free(pd);
}

static const struct hcq_backend_ops hcq_pb_ops_template = {
    .name = "hcq",
    .device_destroy = hcq_pb_device_destroy,
    .buf_alloc = hcq_pb_buf_alloc,
    .buf_free = hcq_pb_buf_free,
    .buf_import_host = hcq_pb_buf_import_host,
    .program_load = hcq_pb_program_load,
    .program_unload = hcq_pb_program_unload,
    .queue_create = hcq_pb_queue_create,
    .queue_destroy = hcq_pb_queue_destroy,
    .queue_submit = hcq_pb_queue_submit,
    .queue_idle_wait = hcq_pb_queue_idle_wait,
    .graph_build = hcq_pb_graph_build,
    .graph_replay = hcq_pb_graph_replay,
    .graph_destroy = hcq_pb_graph_destroy,
    .check = hcq_pb_check,
    .fault_report = hcq_pb_fault_report,
    .device_time_ns = hcq_pb_device_time_ns,
};

/* Whether the embedded kernel library has any cubin for this SM version. */
static bool
hcq_pb_have_cubins(uint32_t sm_version)
{
    for (uint32_t i = 0;; i++) {
        const struct hcq_cubin *c = hcq_cubin_at(i);
        if (!c)
            return false;
        if (c->sm_version == sm_version)
            return true;
    }
}

static void
hcq_pb_info_fill(struct hcq_pb_dev *pd, const char *backend_name, const char *spec)
{
    struct hcq_device_info *info = &pd->base.info;
    const struct hcq_kmd_info *ki = &pd->kmd->info;
    snprintf(info->name, sizeof info->name, "%s", ki->name[0] ? ki->name : pd->arch->name);
    snprintf(info->backend, sizeof info->backend, "%s", backend_name);
    snprintf(info->spec, sizeof info->spec, "%s", spec ? spec : backend_name);
    snprintf(info->arch, sizeof info->arch, "sm_%u", pd->arch->sm_version);
    info->sm_version = pd->arch->sm_version;
    info->sm_count = ki->sm_count;
    info->mem_B = ki->vram_B;
    snprintf(info->driver, sizeof info->driver, "%s", ki->driver);
    info->compute_class = pd->arch->compute_cls;
    info->copy_class = pd->arch->copy_cls;
    info->unified_memory = ki->unified_memory;
    info->emulated = ki->emulated;
    /* The emulated GPU runs every built-in kernel through its CPU twin. */
    info->has_kernels = ki->emulated || hcq_pb_have_cubins(pd->arch->sm_version);
}

enum hcq_status
hcq_pb_device_create(struct hcq_kmd *kmd, const char *backend_name, const char *spec, struct hcq_device **dev_out)
{
    enum hcq_status st;
    *dev_out = NULL;
    if (!kmd->arch) {
        st = hcq_err(HCQ_ERR_UNSUPPORTED, "hcq_pb_device_create: %s kmd has no architecture row", backend_name);
        goto fail_kmd;
    }
    const struct gpu_qmd_ops *qmd = kmd->arch->qmd ? kmd->arch->qmd : gpu_qmd_ops_by_version(kmd->arch->qmd_version);
    if (!qmd) {
        st = hcq_err(HCQ_ERR_UNSUPPORTED, "hcq_pb_device_create: %s: no encoder for QMD version 0x%04x",
                     kmd->arch->name, kmd->arch->qmd_version);
        goto fail_kmd;
    }
    struct hcq_pb_dev *pd = calloc(1, sizeof(*pd));
    if (!pd) {
        st = hcq_err(HCQ_ERR_NOMEM, "hcq_pb_device_create: %zu bytes", sizeof(*pd));
        goto fail_kmd;
    }
    pd->ops = hcq_pb_ops_template;
    pd->ops.name = backend_name;
    pd->kmd = kmd;
    pd->arch = kmd->arch;
    pd->debug = hcq_debug_flags();
    if (kmd->info.unified_memory) {
        pd->local_window_va = HCQ_PB_TEGRA_LOCAL_WINDOW_VA;
        pd->shared_window_va = HCQ_PB_TEGRA_SHARED_WINDOW_VA;
    } else {
        pd->local_window_va = HCQ_PB_RM_LOCAL_WINDOW_VA;
        pd->shared_window_va = HCQ_PB_RM_SHARED_WINDOW_VA;
    }
    if (pthread_mutex_init(&pd->pool_lock, NULL) != 0) {
        free(pd);
        st = hcq_err(HCQ_ERR_NOMEM, "hcq_pb_device_create: pthread_mutex_init failed");
        goto fail_kmd;
    }
    /* Pushbuffers, cbuf0s and QMDs: device memory the CPU writes through BAR1 on rm, so
     * the GPU fetches them locally instead of across PCIe for every launch; on Tegra device
     * memory is system memory anyway. HCQ_PB_STREAM_MEM=sysmem|vram overrides (bring-up). */
    const char *sm = getenv("HCQ_PB_STREAM_MEM");
    bool vram = !kmd->info.unified_memory;
    if (sm && !strcmp(sm, "sysmem"))
        vram = false;
    else if (sm && !strcmp(sm, "vram"))
        vram = true;
    pd->stream_flags = (vram ? HCQ_KMD_MEM_VRAM : HCQ_KMD_MEM_SYSMEM) | HCQ_KMD_MEM_CPU_MAP | HCQ_KMD_MEM_LOW_VA;
    st = hcq_device_init_base(&pd->base, &pd->ops);
    if (st != HCQ_OK) {
        pthread_mutex_destroy(&pd->pool_lock);
        free(pd);
        goto fail_kmd;
    }
    hcq_pb_info_fill(pd, backend_name, spec);
    HCQ_LOG_INFO("%s: %s (%s, %s), %u SMs, compute 0x%04X copy 0x%04X QMD %s%s", pd->base.info.spec,
                 pd->base.info.name, pd->arch->name, pd->base.info.arch, pd->base.info.sm_count,
                 pd->arch->compute_cls, pd->arch->copy_cls, qmd->name, kmd->info.emulated ? " (emulated)" : "");
    *dev_out = &pd->base;
    return HCQ_OK;

fail_kmd:
    hcq_kmd_destroy(kmd);
    return st;
}
