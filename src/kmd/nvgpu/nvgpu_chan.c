/* SPDX-License-Identifier: MIT */
/*
 * nvgpu_chan.c - GPFIFO channels of the Jetson backend and usermode submit.
 * Bring-up per channel (docs/hw/nvgpu.md §4.2-4.5, §10 step 5): OPEN_CHANNEL -> bind to
 * the AS -> bind to the TSG subcontext -> watchdog off -> dedicated ring + USERD nvmap
 * buffers -> SETUP_BIND (usermode | deterministic) -> ALLOC_OBJ_CTX (compute or copy).
 * Submit (§4.9): GP_PUT in USERD, store barrier, work-submit token to the doorbell word
 * of the mapped ctrl region. Layer: kmd.
 */
#include "nvgpu_kmd.h"

#include "util_log.h"
#include "hcq_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t
nvgpu_chan_ring_bytes(uint32_t entries)
{
    /* The kernel needs >= max(4 KiB, entries*8) and maps the WHOLE dmabuf into the
     * channel's VA: an oversized ring buffer hung ALLOC_OBJ_CTX and froze the board
     * (§4.4 "The freeze"). So: exactly entries*8, rounded to the 4 KiB nvmap page. */
    uint64_t b = (uint64_t)entries * 8u;
    if (b < NVGPU_PAGE_B)
        b = NVGPU_PAGE_B;
    return (b + NVGPU_PAGE_B - 1) & ~(uint64_t)(NVGPU_PAGE_B - 1);
}

static void
nvgpu_chan_link(struct nvgpu_kmd *k, struct nvgpu_chan *c)
{
    pthread_mutex_lock(&k->lock);
    c->next = k->chans;
    k->chans = c;
    pthread_mutex_unlock(&k->lock);
}

static void
nvgpu_chan_unlink(struct nvgpu_kmd *k, struct nvgpu_chan *c)
{
    pthread_mutex_lock(&k->lock);
    for (struct nvgpu_chan **p = &k->chans; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    pthread_mutex_unlock(&k->lock);
}

/* OPEN_CHANNEL and the binds, in the only order the kernel accepts (§4.2). */
static enum hcq_status
nvgpu_chan_open_bind(struct nvgpu_kmd *k, struct nvgpu_chan *c)
{
    struct nvgpu_gpu_open_channel_args o = {.runlist_id = -1};
    int err = nvgpu_kmd_ioctl(k, k->ctrl_fd, NVGPU_GPU_IOCTL_OPEN_CHANNEL, &o, "OPEN_CHANNEL");
    if (err)
        return hcq_err(nvgpu_kmd_errno_status(err), "NVGPU_GPU_IOCTL_OPEN_CHANNEL: %s", strerror(err));
    c->fd = o.channel_fd;

    /* AS bind first: binding to the TSG before the AS gives EINVAL (§4.2). */
    struct nvgpu_as_bind_channel_args ab = {.channel_fd = (uint32_t)c->fd};
    err = nvgpu_kmd_ioctl(k, k->as_fd, NVGPU_AS_IOCTL_BIND_CHANNEL, &ab, "AS_BIND_CHANNEL");
    if (err)
        return hcq_err(HCQ_ERR_DRIVER, "NVGPU_AS_IOCTL_BIND_CHANNEL channel fd %d: %s", c->fd, strerror(err));

    struct nvgpu_tsg_bind_channel_ex_args tb = {.channel_fd = c->fd, .subcontext_id = k->veid};
    err = nvgpu_kmd_ioctl(k, k->tsg_fd, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &tb, "TSG_BIND_CHANNEL_EX");
    if (err)
        return hcq_err(HCQ_ERR_DRIVER, "NVGPU_TSG_IOCTL_BIND_CHANNEL_EX channel fd %d veid %u: %s", c->fd,
                       k->veid, strerror(err));

    /* Watchdog off: required before SETUP_BIND of a deterministic channel and keeps long
     * kernels alive (§4.3). */
    struct nvgpu_channel_wdt_args w = {.wdt_status = NVGPU_IOCTL_CHANNEL_DISABLE_WDT, .timeout_ms = 0};
    err = nvgpu_kmd_ioctl(k, c->fd, NVGPU_IOCTL_CHANNEL_WDT, &w, "CHANNEL_WDT");
    if (err)
        return hcq_err(HCQ_ERR_DRIVER, "NVGPU_IOCTL_CHANNEL_WDT (DISABLE_WDT): %s", strerror(err));

    /* Error notifier: where the kernel reports this channel's faults (MMU fault, PBDMA, GR
     * exception) so waits can end in DEVICE_LOST instead of a timeout. 4 KiB, not the 48 MB
     * tinygrad allocated per channel (§9 item 13). */
    enum hcq_status st =
        nvgpu_mem_create(k, NVGPU_PAGE_B, 0, NVMAP_HANDLE_WRITE_COMBINE, false, &c->notifier);
    if (st != HCQ_OK)
        return st;
    memset(c->notifier->base.map, 0, NVGPU_PAGE_B);
    struct nvgpu_channel_set_error_notifier en = {
        .offset = 0,
        .size = sizeof(struct nvgpu_notification),
        .mem = (uint32_t)c->notifier->dmabuf_fd,
    };
    err = nvgpu_kmd_ioctl(k, c->fd, NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, &en, "SET_ERROR_NOTIFIER");
    if (err) {
        /* Not used by TegraIface, so unproven on hardware: carry on without it (faults then
         * surface as wait timeouts, as there) rather than refuse to open the channel. */
        HCQ_LOG_WARN(
            "nvgpu: NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER: %s; channel faults will show as timeouts",
            strerror(err));
        nvgpu_mem_destroy(k, c->notifier);
        c->notifier = NULL;
    }
    return HCQ_OK;
}

static enum hcq_status
nvgpu_chan_setup_bind(struct nvgpu_kmd *k, struct nvgpu_chan *c, uint32_t entries)
{
    /* Ring and USERD: one dedicated write-combined buffer each, both at offset 0, not
     * mapped into our AS (the kernel maps them for the channel, §4.4, §4.6). */
    enum hcq_status st =
        nvgpu_mem_create(k, nvgpu_chan_ring_bytes(entries), 0, NVMAP_HANDLE_WRITE_COMBINE, false, &c->ring);
    if (st != HCQ_OK)
        return st;
    st = nvgpu_mem_create(k, NVC56F_USERD_B, 0, NVMAP_HANDLE_WRITE_COMBINE, false, &c->userd);
    if (st != HCQ_OK)
        return st;
    memset(c->userd->base.map, 0, NVC56F_USERD_B);

    struct nvgpu_channel_setup_bind_args sb = {
        .num_gpfifo_entries = entries,
        .num_inflight_jobs = 0,
        /* USERMODE_SUPPORT requires DETERMINISTIC (EINVAL otherwise, §4.4). */
        .flags =
            NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT | NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC,
        .userd_dmabuf_fd = c->userd->dmabuf_fd,
        .gpfifo_dmabuf_fd = c->ring->dmabuf_fd,
        .userd_dmabuf_offset = 0, /* non-zero offsets: EINVAL ("not yet supported") */
        .gpfifo_dmabuf_offset = 0,
    };
    int err;
    if (k->l4t == NVGPU_L4T_R35) { /* 80-byte r35 struct: the same first 40 bytes */
        struct nvgpu_channel_setup_bind_args_r35 s5 = {
            .num_gpfifo_entries = sb.num_gpfifo_entries,
            .flags = sb.flags,
            .userd_dmabuf_fd = sb.userd_dmabuf_fd,
            .gpfifo_dmabuf_fd = sb.gpfifo_dmabuf_fd,
        };
        err = nvgpu_kmd_ioctl(k, c->fd, NVGPU_IOCTL_CHANNEL_SETUP_BIND_R35, &s5, "SETUP_BIND");
        sb.work_submit_token = s5.work_submit_token;
    } else {
        err = nvgpu_kmd_ioctl(k, c->fd, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb, "SETUP_BIND");
    }
    if (err)
        return hcq_err(nvgpu_kmd_errno_status(err),
                       "NVGPU_IOCTL_CHANNEL_SETUP_BIND %u entries flags 0x%x: %s", entries, sb.flags,
                       strerror(err));
    c->base.token = sb.work_submit_token;
    c->base.ring = c->ring->base.map;
    c->base.userd = c->userd->base.map;
    c->base.entries = entries;
    return HCQ_OK;
}

enum hcq_status
nvgpu_chan_create(struct kmd *kmd, enum kmd_engine engine, uint32_t entries, struct kmd_channel **chan_out)
{
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    *chan_out = NULL;
    uint32_t max_entries = k->chars.max_gpfifo_entries ? k->chars.max_gpfifo_entries : (1u << 28);
    /* Owner knob (docs/jetson.md): HCQ_NVGPU_GPFIFO_ENTRIES=N replaces the engine's ring
     * size without a rebuild (tinygrad never tried anything but 1024, nvgpu.md §9 item 7).
     * The engine reads the size back from the channel, so any valid power of two works. */
    const char *env = getenv("HCQ_NVGPU_GPFIFO_ENTRIES");
    if (env && *env) {
        char *end = NULL;
        unsigned long v = strtoul(env, &end, 0);
        if (!end || *end || v < 2 || (v & (v - 1)) || v > max_entries)
            return hcq_err(HCQ_ERR_INVALID, "HCQ_NVGPU_GPFIFO_ENTRIES=%s: expected a power of two in [2, %u]",
                           env, max_entries);
        entries = (uint32_t)v;
    }
    if (entries < 2 || (entries & (entries - 1)) || entries > max_entries)
        return hcq_err(HCQ_ERR_INVALID,
                       "nvgpu_chan_create: %u GPFIFO entries (expected a power of two in [2, %u])", entries,
                       max_entries);
    uint32_t cls = engine == KMD_ENGINE_COMPUTE ? k->chars.compute_class : k->chars.dma_copy_class;

    struct nvgpu_chan *c = calloc(1, sizeof *c);
    if (!c)
        return hcq_err(HCQ_ERR_NOMEM, "nvgpu_chan_create: out of host memory");
    c->fd = -1;
    /* nvgpu has one copy engine for us: a copy queue's COPY_ASYNC channel is a COPY one. */
    c->base.engine = engine == KMD_ENGINE_COMPUTE ? KMD_ENGINE_COMPUTE : KMD_ENGINE_COPY;
    c->base.priv = c;
    nvgpu_chan_link(k, c);
    enum hcq_status st = nvgpu_chan_open_bind(k, c);
    if (st != HCQ_OK)
        goto fail_chan;
    if ((st = nvgpu_chan_setup_bind(k, c, entries)) != HCQ_OK)
        goto fail_chan;

    /* GR context creation takes ~1 s for compute on hardware (§4.5); no timeout applies. */
    struct nvgpu_alloc_obj_ctx_args oc = {.class_num = cls, .flags = 0};
    int err = nvgpu_kmd_ioctl(k, c->fd, NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, &oc, "ALLOC_OBJ_CTX");
    if (err) {
        st = hcq_err(nvgpu_kmd_errno_status(err), "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX class 0x%04x: %s", cls,
                     strerror(err));
        goto fail_chan;
    }
    c->base.obj_cls = cls;
    *chan_out = &c->base;
    return HCQ_OK;

fail_chan:
    nvgpu_chan_destroy(kmd, &c->base); /* accepts the partially built channel */
    return st;
}

void
nvgpu_chan_destroy(struct kmd *kmd, struct kmd_channel *chan)
{
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    struct nvgpu_chan *c = hcq_container_of(chan, struct nvgpu_chan, base);
    nvgpu_chan_unlink(k, c);
    /* Channel fd first (it holds the ring/USERD mappings), then the buffers (§4.11). */
    if (c->fd >= 0)
        k->sys->close(k->sys->ctx, c->fd);
    c->fd = -1;
    nvgpu_mem_destroy(k, c->ring);
    nvgpu_mem_destroy(k, c->userd);
    nvgpu_mem_destroy(k, c->notifier);
    free(c);
}

/* ==== Faults (error notifiers) ==== */

const char *
nvgpu_chan_error_name(uint32_t code)
{
    switch (code) { /* L4T uapi nvgpu.h, struct nvgpu_notification info32 */
    case NVGPU_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT:
        return "FIFO idle timeout";
    case NVGPU_CHANNEL_GR_ERROR_SW_METHOD:
        return "GR software method error";
    case NVGPU_CHANNEL_GR_EXCEPTION:
        return "GR exception (bad method, QMD or program)";
    case NVGPU_CHANNEL_GR_SEMAPHORE_TIMEOUT:
        return "GR semaphore timeout";
    case NVGPU_CHANNEL_GR_ILLEGAL_NOTIFY:
        return "GR illegal notify";
    case NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT:
        return "MMU fault (bad or unmapped GPU VA)";
    case NVGPU_CHANNEL_PBDMA_ERROR:
        return "PBDMA error (bad pushbuffer or GPFIFO entry)";
    case NVGPU_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD:
        return "FECS unimplemented firmware method";
    case NVGPU_CHANNEL_RESETCHANNEL_VERIF_ERROR:
        return "channel reset verification error";
    case NVGPU_CHANNEL_PBDMA_PUSHBUFFER_CRC_MISMATCH:
        return "PBDMA pushbuffer CRC mismatch";
    default:
        return "unknown channel error";
    }
}

enum hcq_status
nvgpu_chan_check(struct kmd *kmd, char *reason, size_t reason_B)
{
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    enum hcq_status st = HCQ_OK;
    /* Every wait loop polls check(): ringing here too bounds a deferred doorbell's delay
     * to one poll period even on a wait path that forgot to flush first. */
    nvgpu_chan_doorbell_flush(kmd);
    pthread_mutex_lock(&k->lock);
    for (struct nvgpu_chan *c = k->chans; c && st == HCQ_OK; c = c->next) {
        if (!c->notifier || !c->notifier->base.map)
            continue;
        const volatile struct nvgpu_notification *n = c->notifier->base.map;
        if (n->status != NVGPU_NOTIFICATION_STATUS_ERROR)
            continue;
        uint32_t code = n->info32;
        if (reason && reason_B)
            snprintf(reason, reason_B,
                     "nvgpu %s channel (token %u) error notifier: %s (NVGPU_CHANNEL code %u); details in the "
                     "kernel log (dmesg | grep nvgpu)",
                     c->base.engine == KMD_ENGINE_COMPUTE ? "compute" : "copy", c->base.token,
                     nvgpu_chan_error_name(code), code);
        st = HCQ_ERR_DEVICE_LOST;
    }
    pthread_mutex_unlock(&k->lock);
    return st;
}

/* Store barrier between the WC ring/USERD writes and the doorbell store (§4.9 step 4):
 * on aarch64 a `dsb st` so the writes are globally visible before the device sees the
 * token; elsewhere a full fence (the emulator runs on x86-64 too). */
static inline void
nvgpu_chan_wmb(void)
{
#if defined(__aarch64__)
    __asm__ __volatile__("dsb st" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* ==== Submission: GP_PUT, then the doorbell (now, or batched) ==== */

static atomic_ullong nvgpu_kicks, nvgpu_rings;

void
nvgpu_chan_doorbell_stats(uint64_t *kicks, uint64_t *rings)
{
    *kicks = atomic_load(&nvgpu_kicks);
    *rings = atomic_load(&nvgpu_rings);
}

enum hcq_status
nvgpu_chan_doorbell_batch(uint32_t *batch_out)
{
    *batch_out = 1;
    const char *env = getenv("HCQ_NVGPU_DOORBELL_BATCH");
    if (!env || !*env)
        return HCQ_OK;
    char *end = NULL;
    unsigned long v = strtoul(env, &end, 10);
    if (!end || *end || v < 1 || v > 1024)
        return hcq_err(HCQ_ERR_INVALID, "HCQ_NVGPU_DOORBELL_BATCH=%s: expected 1..1024", env);
    *batch_out = (uint32_t)v;
    return HCQ_OK;
}

/* The doorbell store for one channel. It carries only the token (§4.8): the host then
 * reads GP_PUT, so one ring covers every GP_PUT written before it (inferred; what
 * emu:ga10b does; batching beyond one ring per kick is untried on Orin). */
static void
nvgpu_chan_ring(struct nvgpu_kmd *k, const struct kmd_channel *chan)
{
    volatile uint32_t *doorbell = (volatile uint32_t *)(k->usermode + NV_USERMODE_NOTIFY_CHANNEL_PENDING);
    nvgpu_chan_wmb(); /* GP_PUT before the doorbell: the GPU does not poll USERD (§4.8) */
    *doorbell = chan->token;
    atomic_fetch_add(&nvgpu_rings, 1);
}

void
nvgpu_chan_kick(struct kmd *kmd, struct kmd_channel *chan, uint32_t put)
{
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    struct nvgpu_chan *c = (struct nvgpu_chan *)chan;
    volatile uint32_t *gp_put = (volatile uint32_t *)(chan->userd + NVC56F_GP_PUT);
    nvgpu_chan_wmb(); /* ring entries before GP_PUT */
    *gp_put = put % chan->entries;
    atomic_fetch_add(&nvgpu_kicks, 1);
    /* HCQ_NVGPU_DOORBELL_BATCH=N: ring on every Nth kick; the rest wait for the next Nth or
     * for nvgpu_chan_doorbell_flush, which the engine calls before every wait. The counter
     * is taken by exchange, so a kick and a flush racing ring at most once each and never
     * leave a counted kick unrung. */
    if (k->doorbell_batch <= 1 || atomic_fetch_add(&c->unrung, 1) + 1 >= k->doorbell_batch) {
        if (k->doorbell_batch > 1 && atomic_exchange(&c->unrung, 0) == 0)
            return; /* a flush rang for these meanwhile */
        nvgpu_chan_ring(k, chan);
    }
}

void
nvgpu_chan_doorbell_flush(struct kmd *kmd)
{
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    if (k->doorbell_batch <= 1)
        return; /* every kick rang */
    pthread_mutex_lock(&k->lock);
    for (struct nvgpu_chan *c = k->chans; c; c = c->next)
        if (atomic_exchange(&c->unrung, 0) != 0)
            nvgpu_chan_ring(k, &c->base);
    pthread_mutex_unlock(&k->lock);
}
