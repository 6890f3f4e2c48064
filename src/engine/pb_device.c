/* SPDX-License-Identifier: MIT */
/*
 * pb_device.c - the pushbuffer engine's device: wraps a kernel-driver table (struct
 * kmd: rm, nvgpu, or either on the emulator) into a runtime device (struct
 * hcq_backend_ops), with memory ops, fault polling and the GPU clock. Layer: hcq.
 * Queues, programs and graphs live in pb_queue.c, pb_program.c, pb_graph.c.
 */
#include "pb.h"

#include "gpu_qmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ==== Memory ==== */

enum hcq_status
pb_mem_alloc(struct pb_dev *pd, uint64_t size_B, uint32_t kmd_flags, struct kmd_mem **mem_out)
{
    struct kmd_mem *mem = NULL;
    enum hcq_status st = kmd_mem_alloc(pd->kmd, size_B, 0, kmd_flags, &mem);
    if (st != HCQ_OK)
        return st;
    if ((kmd_flags & KMD_MEM_CPU_MAP) && !mem->map) {
        kmd_mem_free(pd->kmd, mem);
        return hcq_err(HCQ_ERR_DRIVER,
                       "pb_mem_alloc: kmd returned 0x%llx bytes without the CPU mapping asked for",
                       (unsigned long long)size_B);
    }
    if ((kmd_flags & KMD_MEM_LOW_VA) && mem->va + mem->size_B > GPU_PB_VA_LIMIT) {
        uint64_t va = mem->va;
        kmd_mem_free(pd->kmd, mem);
        return hcq_err(HCQ_ERR_DRIVER,
                       "pb_mem_alloc: low-VA memory at 0x%llx (expected below 2^40, rm.md §8.2)",
                       (unsigned long long)va);
    }
    *mem_out = mem;
    return HCQ_OK;
}

enum hcq_status
pb_stream_alloc(struct pb_dev *pd, uint64_t size_B, struct kmd_mem **mem_out)
{
    const uint32_t sys = KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA;
    if (pd->stream_flags != sys) {
        enum hcq_status st = pb_mem_alloc(pd, size_B, pd->stream_flags, mem_out);
        if (st == HCQ_OK || st == HCQ_ERR_DEVICE_LOST)
            return st;
        HCQ_LOG_WARN(
            "stream memory: 0x%llx bytes of CPU-mapped device memory failed (%s); using system memory",
            (unsigned long long)size_B, hcq_status_str(st));
    }
    return pb_mem_alloc(pd, size_B, sys, mem_out);
}

/* Buffers come from the caching pool (pb_pool.c); buf->priv is the pool's block,
 * except for imported host memory (buf->imported), where it is the kmd_mem. */
static enum hcq_status
pb_buf_alloc(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct pb_dev *pd = pb_dev(dev);
    uint32_t kind = (buf->flags & HCQ_MEM_HOST)       ? PB_POOL_HOST
                    : (buf->flags & HCQ_MEM_MAPPABLE) ? PB_POOL_MAPPED
                                                      : PB_POOL_DEVICE;
    struct pb_block *b = NULL;
    struct kmd_mem *mem = NULL;
    enum hcq_status st = pb_pool_alloc(pd, kind, buf->size_B, &b, &mem);
    if (st != HCQ_OK)
        return st;
    buf->va = mem->va;
    buf->map = mem->map;
    buf->priv = b;
    buf->handle = mem->handle;
    return HCQ_OK;
}

static void
pb_buf_free(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct pb_dev *pd = pb_dev(dev);
    if (buf->imported)
        kmd_mem_free(pd->kmd, (struct kmd_mem *)buf->priv);
    else if (buf->priv)
        pb_pool_free(pd, (struct pb_block *)buf->priv);
    buf->priv = NULL;
}

static void
pb_mem_stats(struct hcq_device *dev, struct hcq_mem_stats *out)
{
    pb_pool_stats(pb_dev(dev), out);
    uint64_t f = 0;
    if (kmd_mem_free_query(pb_dev(dev)->kmd, &f) == HCQ_OK)
        out->driver_free_B = f;
    uint64_t n = 0;
    if (kmd_objects_query(pb_dev(dev)->kmd, &n) == HCQ_OK)
        out->driver_objects = n;
}

static uint64_t
pb_mem_trim(struct hcq_device *dev)
{
    return pb_pool_trim(pb_dev(dev));
}

static enum hcq_status
pb_buf_import_host(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct pb_dev *pd = pb_dev(dev);
    struct kmd_mem *mem = NULL;
    enum hcq_status st = kmd_mem_import_host(pd->kmd, buf->map, buf->size_B, &mem);
    if (st == HCQ_ERR_UNSUPPORTED)
        return hcq_err(st, "buf_import_host: the %s kernel driver cannot map foreign host memory",
                       dev->info.backend);
    if (st != HCQ_OK)
        return st;
    buf->va = mem->va;
    buf->priv = mem;
    buf->handle = mem->handle;
    return HCQ_OK;
}

static enum hcq_status pb_buf_peer_map(struct hcq_device *dev, struct hcq_buf *buf, struct hcq_buf *alias);

/* Device memory of another engine device mapped into this one by the kmd (rm: NVLink or
 * PCIe peer-to-peer, rm_peer.c); alias is freed like imported memory (pb_buf_free). Host
 * memory is refused quietly: hcq_buf_peer_map imports its pages instead. */
static enum hcq_status
pb_buf_peer_map(struct hcq_device *dev, struct hcq_buf *buf, struct hcq_buf *alias)
{
    struct pb_dev *pd = pb_dev(dev);
    if (buf->dev->ops->buf_peer_map != pb_buf_peer_map)
        return hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "%s is not a device of the pushbuffer engine",
                             buf->dev->info.spec);
    struct pb_dev *owner = pb_dev(buf->dev);
    if ((buf->flags & HCQ_MEM_HOST) || buf->imported || !buf->priv || owner->kmd->info.unified_memory)
        return hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "not device memory");
    if (!pd->kmd->ops->mem_peer_map || pd->kmd->ops != owner->kmd->ops)
        return hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "the %s kernel driver has no peer mappings to %s",
                             dev->info.backend, buf->dev->info.spec);
    struct kmd_mem *m = NULL;
    uint64_t off = 0; /* a small buffer is a slot of a slab: the whole slab is mapped */
    enum hcq_status st = kmd_mem_peer_map(pd->kmd, owner->kmd, pb_block_mem(buf->priv, &off), &m);
    if (st != HCQ_OK)
        return st;
    alias->va = m->va + off;
    alias->map = NULL; /* the CPU reaches it through the owner only */
    alias->priv = m;
    alias->handle = m->handle;
    return HCQ_OK;
}

/* ==== Faults and clock ==== */

enum hcq_status
pb_check(struct hcq_device *dev)
{
    struct pb_dev *pd = pb_dev(dev);
    if (atomic_load(&dev->lost))
        return HCQ_ERR_DEVICE_LOST;
    char reason[256] = "", log[256] = "";
    enum hcq_status st = kmd_check(pd->kmd, reason, sizeof reason);
    if (st == HCQ_OK)
        return HCQ_OK;
    /* the kernel log's detail where the kmd has it (the emulator: e.g. which SKEDCHECK) */
    if (pd->kmd->fault_log)
        pd->kmd->fault_log(pd->kmd->fault_log_ctx, log, sizeof log);
    return hcq_device_mark_lost(dev, "%s kernel driver reports a fault: %s%s%s", dev->info.backend,
                                reason[0] ? reason : "(no reason given)", log[0] ? "; kernel log: " : "",
                                log);
}

static void
pb_flush(struct hcq_device *dev)
{
    kmd_doorbell_flush(pb_dev(dev)->kmd);
}

static void
pb_fault_report(struct hcq_device *dev, char *buf, size_t buf_B)
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
        struct pb_queue *pq = pb_queue(dev->queues[i]);
        if (!pq)
            continue;
        pb_queue_describe(pq, buf + used, buf_B - used);
        used += strlen(buf + used);
    }
    pthread_mutex_unlock(&dev->lock);
}

enum hcq_status
pb_drain_all(struct pb_dev *pd, uint64_t timeout_ns)
{
    struct hcq_device *dev = &pd->base;
    pthread_mutex_lock(&dev->life_lock); /* no queue of the snapshot is freed while we wait */
    pthread_mutex_lock(&dev->lock);
    uint32_t n = dev->queue_count;
    struct hcq_queue **qs = n ? malloc(n * sizeof(*qs)) : NULL;
    if (qs)
        memcpy(qs, dev->queues, n * sizeof(*qs));
    pthread_mutex_unlock(&dev->lock);
    enum hcq_status st = n && !qs ? hcq_err(HCQ_ERR_NOMEM, "pb_drain_all: %u queues", n) : HCQ_OK;
    for (uint32_t i = 0; i < n && st == HCQ_OK; i++) {
        struct pb_queue *pq = pb_queue(qs[i]);
        if (pq && pq->main.kc)
            st = pb_chan_wait(pq, &pq->main, pq->main.tl_last, timeout_ns);
    }
    pthread_mutex_unlock(&dev->life_lock);
    free(qs);
    return st;
}

void
pb_clock_calibrate(struct pb_dev *pd, uint64_t gpu_ns, uint64_t host_ns)
{
    if (gpu_ns == 0 || atomic_load(&pd->clock_calibrated))
        return;
    atomic_store(&pd->clock_offset_ns, (int64_t)(gpu_ns - host_ns));
    atomic_store(&pd->clock_calibrated, true);
}

/* GPU clock (ns), as the semaphore timestamps write it: the host clock plus the offset
 * measured at the first channel's setup submission (the kmd offers no clock query). */
static uint64_t
pb_device_time_ns(struct hcq_device *dev)
{
    struct pb_dev *pd = pb_dev(dev);
    return hcq_time_ns() + (uint64_t)atomic_load(&pd->clock_offset_ns);
}

/* ==== Device ==== */

static void
pb_device_destroy(struct hcq_device *dev)
{
    struct pb_dev *pd = pb_dev(dev);
    /* pd->copy_prog was freed by hcq_device_close with every other program. */
    for (int e = 0; e < KMD_ENGINE_KINDS; e++)
        for (uint32_t i = 0; i < pd->pool_count[e]; i++)
            kmd_channel_destroy(pd->kmd, pd->pool[e][i]);
    pthread_mutex_destroy(&pd->pool_lock);
    pb_lmem_fini(pd); /* every queue is gone: their kernels are done or the device is lost */
    pthread_mutex_destroy(&pd->lmem.lock);
    pb_pool_destroy(pd);
    kmd_destroy(pd->kmd);
    free(pd);
}

static const struct hcq_backend_ops pb_ops_template = {
    .name = "hcq",
    .device_destroy = pb_device_destroy,
    .buf_alloc = pb_buf_alloc,
    .buf_free = pb_buf_free,
    .buf_import_host = pb_buf_import_host,
    .buf_peer_map = pb_buf_peer_map,
    .program_load = pb_program_load,
    .program_unload = pb_program_unload,
    .queue_create = pb_queue_create,
    .queue_destroy = pb_queue_destroy,
    .queue_submit = pb_queue_submit,
    .queue_idle_wait = pb_queue_idle_wait,
    .graph_build = pb_graph_build,
    .graph_replay = pb_graph_replay,
    .graph_destroy = pb_graph_destroy,
    .check = pb_check,
    .flush = pb_flush,
    .mem_stats = pb_mem_stats,
    .mem_trim = pb_mem_trim,
    .fault_report = pb_fault_report,
    .device_time_ns = pb_device_time_ns,
};

/* Whether the embedded kernel library has any cubin for this SM version. */
static bool
pb_have_cubins(uint32_t sm_version)
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
pb_info_fill(struct pb_dev *pd, const char *backend_name, const char *spec)
{
    struct hcq_device_info *info = &pd->base.info;
    const struct kmd_info *ki = &pd->kmd->info;
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
    info->has_kernels = ki->emulated || pb_have_cubins(pd->arch->sm_version);
}

/* 32 random bits (getrandom; else the clock, pid and an address mixed): a start for ids that
 * must differ between processes, not a secret. */
static uint32_t
pb_random_u32(void)
{
    uint32_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x =
        (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&r;
    x ^= x >> 29;
    return (uint32_t)(x * 0xBF58476D1CE4E5B9ull >> 32);
}

enum hcq_status
pb_device_create(struct kmd *kmd, const char *backend_name, const char *spec, struct hcq_device **dev_out)
{
    enum hcq_status st;
    *dev_out = NULL;
    if (!kmd->arch) {
        st = hcq_err(HCQ_ERR_UNSUPPORTED, "pb_device_create: %s kmd has no architecture row", backend_name);
        goto fail_kmd;
    }
    const struct gpu_qmd_ops *qmd =
        kmd->arch->qmd ? kmd->arch->qmd : gpu_qmd_ops_by_version(kmd->arch->qmd_version);
    if (!qmd) {
        st = hcq_err(HCQ_ERR_UNSUPPORTED, "pb_device_create: %s: no encoder for QMD version 0x%04x",
                     kmd->arch->name, kmd->arch->qmd_version);
        goto fail_kmd;
    }
    struct pb_dev *pd = calloc(1, sizeof(*pd));
    if (!pd) {
        st = hcq_err(HCQ_ERR_NOMEM, "pb_device_create: %zu bytes", sizeof(*pd));
        goto fail_kmd;
    }
    pd->ops = pb_ops_template;
    pd->ops.name = backend_name;
    pd->kmd = kmd;
    pd->arch = kmd->arch;
    pd->debug = hcq_debug_flags();
    /* latch ids start at a random point: a process must not meet latch state an earlier one
     * left on the GPU (pb_build.c pb_pdl_link) */
    pd->pdl_seq0 = pb_random_u32();
    atomic_store(&pd->pdl_seq, pd->pdl_seq0);
    if (kmd->info.unified_memory) {
        pd->local_window_va = PB_TEGRA_LOCAL_WINDOW_VA;
        pd->shared_window_va = PB_TEGRA_SHARED_WINDOW_VA;
    } else {
        pd->local_window_va = PB_RM_LOCAL_WINDOW_VA;
        pd->shared_window_va = PB_RM_SHARED_WINDOW_VA;
    }
    if (pthread_mutex_init(&pd->pool_lock, NULL) != 0) {
        free(pd);
        st = hcq_err(HCQ_ERR_NOMEM, "pb_device_create: pthread_mutex_init failed");
        goto fail_kmd;
    }
    if (pthread_mutex_init(&pd->lmem.lock, NULL) != 0) {
        pthread_mutex_destroy(&pd->pool_lock);
        free(pd);
        st = hcq_err(HCQ_ERR_NOMEM, "pb_device_create: pthread_mutex_init failed");
        goto fail_kmd;
    }
    /* Pushbuffers, cbuf0s and QMDs: device memory the CPU writes through BAR1 on rm, so
     * the GPU fetches them locally instead of across PCIe for every launch; on Tegra device
     * memory is system memory anyway. */
    pd->stream_flags =
        (kmd->info.unified_memory ? KMD_MEM_SYSMEM : KMD_MEM_VRAM) | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA;
    st = hcq_device_init_base(&pd->base, &pd->ops);
    if (st != HCQ_OK) {
        pthread_mutex_destroy(&pd->lmem.lock);
        pthread_mutex_destroy(&pd->pool_lock);
        free(pd);
        goto fail_kmd;
    }
    pb_info_fill(pd, backend_name, spec);
    pb_pool_init(&pd->pool_mem, pd->base.info.mem_B);
    HCQ_LOG_INFO("%s: %s (%s, %s), %u SMs, compute 0x%04X copy 0x%04X QMD %s%s", pd->base.info.spec,
                 pd->base.info.name, pd->arch->name, pd->base.info.arch, pd->base.info.sm_count,
                 pd->arch->compute_cls, pd->arch->copy_cls, qmd->name,
                 kmd->info.emulated ? " (emulated)" : "");
    *dev_out = &pd->base;
    return HCQ_OK;

fail_kmd:
    kmd_destroy(kmd);
    return st;
}
