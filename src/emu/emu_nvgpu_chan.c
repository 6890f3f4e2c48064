/* SPDX-License-Identifier: MIT */
/*
 * emu_nvgpu_chan.c - emulated nvgpu channel fds for emu:ga10b: binding order, watchdog,
 * SETUP_BIND (usermode submit, dedicated exactly-sized ring and USERD dmabufs), engine
 * objects (ALLOC_OBJ_CTX); the GPFIFO itself is run by the emulator's GPU model
 * (emu_chan), which watches USERD GP_PUT and the usermode doorbell word. Layer: emu.
 * Rules: docs/hw/nvgpu.md §4.2-4.10.
 */
#include "emu_nvgpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct emu_nvgpu_chan {
    struct emu_nvgpu *m;
    struct emu_nvgpu_as *as; /* AS bind (one way: a channel cannot be unbound) */
    void *tsg;               /* TSG bind */
    uint32_t veid;
    bool wdt_disabled;
    bool setup; /* SETUP_BIND done */
    uint32_t entries, token;
    struct emu_nvmap_handle *ring, *userd;
    struct emu_chan *ch; /* the GPU model's channel */
    uint32_t classes[2];
    uint32_t class_count;
    struct emu_nvmap_handle *notifier; /* SET_ERROR_NOTIFIER target */
    uint64_t notifier_off;
};

struct emu_nvgpu_as *
emu_nvgpu_chan_as(struct emu_nvgpu_chan *c)
{
    return c->as;
}

struct emu_nvgpu_chan *
emu_nvgpu_chan_from_fd(struct emu_nvgpu *m, int fd)
{
    struct emu_fd *f = emu_fd_lookup(m->dev, fd);
    return f && f->ops == &emu_nvgpu_chan_fd_ops ? f->priv : NULL;
}

int
emu_nvgpu_chan_bind_as(struct emu_nvgpu_chan *c, struct emu_nvgpu_as *as)
{
    if (c->as)
        return -EINVAL; /* already bound; there is no unbind (§4.2) */
    emu_nvgpu_as_ref(as);
    c->as = as;
    return 0;
}

int
emu_nvgpu_chan_bind_tsg(struct emu_nvgpu_chan *c, void *tsg, struct emu_nvgpu_as *subctx_as, uint32_t veid)
{
    if (c->tsg || c->as != subctx_as)
        return -EINVAL;
    c->tsg = tsg;
    c->veid = veid;
    return 0;
}

/* ==== ioctls ==== */

static int
emu_nvgpu_chan_wdt(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_chan *c = f->priv;
    struct nvgpu_channel_wdt_args *a = arg;
    uint32_t op = a->wdt_status & (NVGPU_IOCTL_CHANNEL_DISABLE_WDT | NVGPU_IOCTL_CHANNEL_ENABLE_WDT);
    if (a->wdt_status &
        ~(NVGPU_IOCTL_CHANNEL_DISABLE_WDT | NVGPU_IOCTL_CHANNEL_ENABLE_WDT |
          NVGPU_IOCTL_CHANNEL_WDT_FLAG_SET_TIMEOUT | NVGPU_IOCTL_CHANNEL_WDT_FLAG_DISABLE_DUMP))
        return -EINVAL;
    if (op == NVGPU_IOCTL_CHANNEL_DISABLE_WDT)
        c->wdt_disabled = true;
    else if (op == NVGPU_IOCTL_CHANNEL_ENABLE_WDT)
        c->wdt_disabled = false;
    else
        return -EINVAL;
    return 0;
}

/* SET_ERROR_NOTIFIER (nvgpu.md §4.10): the notification goes to (dmabuf, offset). */
static int
emu_nvgpu_chan_set_error_notifier(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_chan *c = f->priv;
    struct nvgpu_channel_set_error_notifier *a = arg;
    if (a->padding)
        return -EINVAL;
    if (!a->mem) { /* mem 0 removes the notifier */
        emu_nvmap_handle_unref(c->m, c->notifier);
        c->notifier = NULL;
        return 0;
    }
    struct emu_nvmap_handle *h = emu_nvmap_handle_from_fd(c->m, (int)a->mem);
    if (!h || a->offset > h->size_B || sizeof(struct nvgpu_notification) > h->size_B - a->offset)
        return -EINVAL;
    emu_nvmap_handle_ref(h);
    emu_nvmap_handle_unref(c->m, c->notifier);
    c->notifier = h;
    c->notifier_off = a->offset;
    return 0;
}

/* Called by the GPU model, from the channel's thread, on its first error: write the
 * notification as the kernel does (status 0xFFFF, info32 = NVGPU_CHANNEL_* code; the emu
 * error codes are the same numbers) and log what the kernel would print. */
static void
emu_nvgpu_chan_on_error(struct emu_chan *ch, enum emu_chan_error err, const char *why, void *user)
{
    (void)ch;
    struct emu_nvgpu_chan *c = user;
    uint32_t code = err == EMU_CHAN_ERR_MMU_FAULT ? NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT
                    : err == EMU_CHAN_ERR_PBDMA   ? NVGPU_CHANNEL_PBDMA_ERROR
                                                  : NVGPU_CHANNEL_GR_EXCEPTION;
    const char *what = err == EMU_CHAN_ERR_MMU_FAULT ? "mmu fault"
                       : err == EMU_CHAN_ERR_PBDMA   ? "fifo_pbdma intr"
                                                     : "set gr exception notifier";
    emu_nvgpu_klog(c->m, "nvgpu: 17000000.gpu %s: channel token %u: %s", what, c->token, why ? why : "");
    if (!c->notifier)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    volatile struct nvgpu_notification *n =
        (volatile struct nvgpu_notification *)((uint8_t *)emu_bo_host(c->notifier->bo) + c->notifier_off);
    n->time_stamp_ns[0] = (uint32_t)ns;
    n->time_stamp_ns[1] = (uint32_t)(ns >> 32);
    n->info32 = code;
    n->info16 = 0;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    n->status = NVGPU_NOTIFICATION_STATUS_ERROR;
}

static int
emu_nvgpu_chan_setup_bind_check(struct emu_nvgpu_chan *c, const struct nvgpu_channel_setup_bind_args *a,
                                struct emu_nvmap_handle **ring_out, struct emu_nvmap_handle **userd_out)
{
    struct emu_nvgpu *m = c->m;
    if (c->setup)
        return -EEXIST; /* re-running SETUP_BIND (§4.4) */
    if (!c->as) {
        emu_nvgpu_klog(m, "nvgpu: setup_bind: channel not bound to an address space");
        return -EINVAL;
    }
    if (!c->tsg)
        return -EINVAL; /* ga10b channels live in a TSG (§4.1) */
    uint32_t usermode = NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT;
    uint32_t det = NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC;
    if ((a->flags & usermode) && !(a->flags & det)) {
        emu_nvgpu_klog(m, "nvgpu: need deterministic for usermode submit");
        return -EINVAL;
    }
    /* The model runs usermode channels only (SUBMIT_GPFIFO is ENOTTY on them anyway, §4.8);
     * VPR, replayable faults and GPU-mapped usermode resources are not usable on ga10b. */
    if ((a->flags & ~(usermode | det)) || !(a->flags & usermode))
        return -EINVAL;
    if (!c->wdt_disabled) { /* deterministic channels need the watchdog off first (§4.3) */
        emu_nvgpu_klog(m, "nvgpu: setup_bind: deterministic channel with the watchdog enabled");
        return -EINVAL;
    }
    if (a->userd_dmabuf_offset || a->gpfifo_dmabuf_offset) {
        emu_nvgpu_klog(m, "nvgpu: setup_bind: dmabuf offsets: TODO - not yet supported");
        return -EINVAL;
    }
    for (int i = 0; i < 9; i++)
        if (a->reserved[i])
            return -EINVAL;
    uint32_t n = a->num_gpfifo_entries;
    if (n < 2 || (n & (n - 1)) || n > m->chars.max_gpfifo_entries)
        return -EINVAL;
    if (!a->userd_dmabuf_fd || !a->gpfifo_dmabuf_fd)
        return -EINVAL;
    struct emu_nvmap_handle *ring = emu_nvmap_handle_from_fd(m, a->gpfifo_dmabuf_fd);
    struct emu_nvmap_handle *userd = emu_nvmap_handle_from_fd(m, a->userd_dmabuf_fd);
    if (!ring || !userd || ring == userd)
        return -EINVAL;
    uint64_t need = (uint64_t)n * 8u < NVGPU_PAGE_B ? NVGPU_PAGE_B : (uint64_t)n * 8u;
    if (ring->size_B < need || userd->size_B < NVC56F_USERD_B)
        return -EINVAL;
    /* The kernel maps the WHOLE gpfifo dmabuf into the channel's VA. On hardware a 3 MiB
     * ring buffer passed SETUP_BIND, then ALLOC_OBJ_CTX hung and froze the SoC (§4.4); the
     * model refuses anything larger than the ring needs (rounded to the nvmap page). */
    uint64_t exact = (need + NVGPU_PAGE_B - 1) & ~(uint64_t)(NVGPU_PAGE_B - 1);
    if (ring->size_B > exact) {
        emu_nvgpu_klog(m,
                       "emu-nvgpu: setup_bind: gpfifo dmabuf is %llu B for %u entries (%llu B): the whole "
                       "buffer would be mapped and ALLOC_OBJ_CTX hangs on hardware (nvgpu.md §4.4)",
                       (unsigned long long)ring->size_B, n, (unsigned long long)exact);
        return -EINVAL;
    }
    *ring_out = ring;
    *userd_out = userd;
    return 0;
}

static int
emu_nvgpu_chan_setup_bind(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_chan *c = f->priv;
    struct emu_nvgpu *m = c->m;
    struct nvgpu_channel_setup_bind_args *a = arg;
    struct emu_nvmap_handle *ring, *userd;
    int rc = emu_nvgpu_chan_setup_bind_check(c, a, &ring, &userd);
    if (rc)
        return rc;
    if (m->next_token == 0)
        return -ENOSPC;
    c->token = m->next_token; /* on_error may run as soon as the channel exists */
    struct emu_chan_desc d = {
        .vm = emu_nvgpu_as_vm(c->as),
        .ring_bo = ring->bo,
        .ring_off = 0,
        .entries = a->num_gpfifo_entries,
        .userd_bo = userd->bo,
        .userd_off = 0,
        .doorbell_bo = m->usermode_bo,
        .doorbell_off = NV_USERMODE_NOTIFY_CHANNEL_PENDING,
        .token = m->next_token,
        .gpfifo_cls = m->arch->gpfifo_cls,
        .on_error = emu_nvgpu_chan_on_error,
        .user = c,
    };
    rc = emu_chan_create(m->dev, &d, &c->ch);
    if (rc < 0)
        return rc;
    emu_nvmap_handle_ref(ring);
    emu_nvmap_handle_ref(userd);
    c->ring = ring;
    c->userd = userd;
    c->entries = a->num_gpfifo_entries;
    c->token = m->next_token--; /* 511, 510, ... (§1.3) */
    c->setup = true;
    a->work_submit_token = c->token;
    /* No GPU VAs for ring/USERD/usermode MMIO: SUPPORT_GPU_MMIO is not set on ga10b (§1.2). */
    a->gpfifo_gpu_va = a->userd_gpu_va = a->usermode_mmio_gpu_va = 0;
    return 0;
}

static int
emu_nvgpu_chan_alloc_obj_ctx(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_chan *c = f->priv;
    struct nvgpu_alloc_obj_ctx_args *a = arg;
    if (!c->setup || a->flags)
        return -EINVAL;
    /* ga10b's classes only: AMPERE_COMPUTE_B and AMPERE_DMA_COPY_B (§4.5). */
    if (a->class_num != c->m->chars.compute_class && a->class_num != c->m->chars.dma_copy_class) {
        emu_nvgpu_klog(c->m, "nvgpu: alloc_obj_ctx: class 0x%04x not supported on ga10b", a->class_num);
        return -EINVAL;
    }
    for (uint32_t i = 0; i < c->class_count; i++)
        if (c->classes[i] == a->class_num)
            return -EEXIST;
    if (c->class_count == 2)
        return -ENOSPC;
    c->classes[c->class_count++] = a->class_num;
    emu_chan_add_class(c->ch, a->class_num);
    /* Every GR context init prints this on ga10b; it is harmless (§8.3). */
    if (a->class_num == c->m->chars.compute_class)
        emu_nvgpu_klog(c->m,
                       "nvgpu: 17000000.gpu tu104_gr_init_commit_rtv_cb: RTV circular buffer not supported");
    emu_chan_set_runnable(c->ch, true);
    a->obj_id = 0;
    return 0;
}

static int
emu_nvgpu_chan_get_user_syncpoint(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_chan *c = f->priv;
    struct nvgpu_get_user_syncpoint_args *a = arg;
    if (!c->setup)
        return -EINVAL;
    a->gpu_va = 0xFFFFE10000ull; /* observed, above va_range_end (§3.2, §4.10) */
    a->syncpoint_id = 17;
    a->syncpoint_max = 0;
    return 0;
}

/* r35 SETUP_BIND: the same first 40 bytes, then reserved[10] (no GPU VA outputs). */
static int
emu_nvgpu_chan_setup_bind_r35(struct emu_fd *f, void *arg)
{
    struct nvgpu_channel_setup_bind_args_r35 *a = arg;
    for (unsigned i = 0; i < sizeof a->reserved / sizeof a->reserved[0]; i++)
        if (a->reserved[i])
            return -EINVAL;
    struct nvgpu_channel_setup_bind_args b = {
        .num_gpfifo_entries = a->num_gpfifo_entries,
        .num_inflight_jobs = a->num_inflight_jobs,
        .flags = a->flags,
        .userd_dmabuf_fd = a->userd_dmabuf_fd,
        .gpfifo_dmabuf_fd = a->gpfifo_dmabuf_fd,
        .userd_dmabuf_offset = a->userd_dmabuf_offset,
        .gpfifo_dmabuf_offset = a->gpfifo_dmabuf_offset,
    };
    int rc = emu_nvgpu_chan_setup_bind(f, &b);
    if (rc == 0)
        a->work_submit_token = b.work_submit_token;
    return rc;
}

const struct emu_nvgpu_ioctl emu_nvgpu_chan_ioctls[] = {
    {NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX", emu_nvgpu_chan_alloc_obj_ctx, 0},
    {NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, "NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER",
     emu_nvgpu_chan_set_error_notifier, 0},
    {NVGPU_IOCTL_CHANNEL_WDT, "NVGPU_IOCTL_CHANNEL_WDT", emu_nvgpu_chan_wdt, 0},
    {NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT, "NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT",
     emu_nvgpu_chan_get_user_syncpoint, 0},
    {NVGPU_IOCTL_CHANNEL_SETUP_BIND, "NVGPU_IOCTL_CHANNEL_SETUP_BIND", emu_nvgpu_chan_setup_bind,
     NVGPU_L4T_R36},
    {NVGPU_IOCTL_CHANNEL_SETUP_BIND_R35, "NVGPU_IOCTL_CHANNEL_SETUP_BIND", emu_nvgpu_chan_setup_bind_r35,
     NVGPU_L4T_R35},
};
const int emu_nvgpu_chan_ioctls_n = (int)(sizeof emu_nvgpu_chan_ioctls / sizeof emu_nvgpu_chan_ioctls[0]);

static int
emu_nvgpu_chan_ioctl(struct emu_fd *f, unsigned long request, void *arg)
{
    return emu_nvgpu_dispatch(f, emu_nvgpu_chan_ioctls,
                              (int)(sizeof emu_nvgpu_chan_ioctls / sizeof emu_nvgpu_chan_ioctls[0]), request,
                              arg);
}

static void
emu_nvgpu_chan_release(struct emu_fd *f)
{
    struct emu_nvgpu_chan *c = f->priv;
    if (c->ch)
        emu_chan_destroy(c->ch);
    emu_nvmap_handle_unref(c->m, c->ring);
    emu_nvmap_handle_unref(c->m, c->userd);
    emu_nvmap_handle_unref(c->m, c->notifier);
    emu_nvgpu_tsg_unref(c->tsg);
    emu_nvgpu_as_unref(c->as);
    free(c);
}

const struct emu_fd_ops emu_nvgpu_chan_fd_ops = {
    .name = "nvgpu-channel",
    .ioctl = emu_nvgpu_chan_ioctl,
    .release = emu_nvgpu_chan_release,
};

int
emu_nvgpu_chan_open(struct emu_nvgpu *m, int *fd_out)
{
    struct emu_nvgpu_chan *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->m = m;
    struct emu_fd *f;
    int fd = emu_fd_create(m->dev, &emu_nvgpu_chan_fd_ops, c, &f);
    if (fd < 0) {
        free(c);
        return fd;
    }
    *fd_out = fd;
    return 0;
}
