/* SPDX-License-Identifier: MIT */
/*
 * emu_nvgpu.c - emulated Jetson Orin (ga10b) kernel driver for emu:ga10b: the model
 * plug-in (emu.h), the ctrl node /dev/nvgpu/igpu0/ctrl (characteristics, topology, AS /
 * TSG / channel creation, the usermode doorbell page) and TSG fds. Layer: emu.
 * What each ioctl accepts follows docs/hw/nvgpu.md (sections cited at each rule).
 */
#include "emu_nvgpu.h"

#include "util_log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Model plumbing ==== */

struct emu_nvgpu *
emu_nvgpu_of(struct emu_dev *d)
{
    return emu_dev_model(d);
}

void
emu_nvgpu_klog(struct emu_nvgpu *m, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = strlen(line);
    HCQ_LOG_DEBUG("%s", line);
    pthread_mutex_lock(&m->klog_lock);
    if (m->klog_B + n + 2 <= sizeof m->klog) { /* full: keep the first lines, they name the first problem */
        memcpy(m->klog + m->klog_B, line, n);
        m->klog_B += n;
        m->klog[m->klog_B++] = '\n';
        m->klog[m->klog_B] = 0;
    }
    pthread_mutex_unlock(&m->klog_lock);
}

const char *
emu_nvgpu_klog_text(struct emu_dev *d)
{
    struct emu_nvgpu *m = emu_nvgpu_of(d);
    return m ? m->klog : "";
}

int
emu_nvgpu_dispatch(struct emu_fd *f, const struct emu_nvgpu_ioctl *table, int n, unsigned long request,
                   void *arg)
{
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    for (int i = 0; i < n; i++) {
        if (table[i].request != request || (table[i].l4t && m && table[i].l4t != m->l4t))
            continue;
        if (emu_inject_ioctl(f->dev, table[i].name, request)) {
            emu_trace(f->dev, "nvgpu %s %s -> -EIO (injected)", f->ops->name, table[i].name);
            return -EIO;
        }
        int rc = table[i].fn(f, arg);
        emu_trace(f->dev, "nvgpu %s %s -> %d", f->ops->name, table[i].name, rc);
        return rc;
    }
    /* The kernel matches the full number, size included: a struct of the wrong size is an
     * unknown ioctl (a 16-byte OPEN_CHANNEL gave ENOTTY, §4.2). */
    emu_trace(f->dev, "nvgpu %s 0x%08lx (nr %u size %u) -> -ENOTTY", f->ops->name, request,
              NVGPU_IOC_NR(request), NVGPU_IOC_SIZE(request));
    return -ENOTTY;
}

static bool
emu_nvgpu_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* ==== TSG fds (nvgpu.md §4.1-4.2) ==== */

struct emu_nvgpu_tsg {
    struct emu_nvgpu *m;
    int refs;
    uint32_t next_async_veid;
    bool veid_used[EMU_NVGPU_MAX_VEIDS];
    struct emu_nvgpu_as *subctx_as[EMU_NVGPU_MAX_VEIDS];
};

void
emu_nvgpu_tsg_unref(void *p)
{
    struct emu_nvgpu_tsg *t = p;
    if (!t || --t->refs > 0)
        return;
    for (uint32_t i = 0; i < EMU_NVGPU_MAX_VEIDS; i++)
        if (t->subctx_as[i])
            emu_nvgpu_as_unref(t->subctx_as[i]);
    free(t);
}

static int
emu_nvgpu_tsg_create_subcontext(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_tsg *t = f->priv;
    struct nvgpu_tsg_create_subcontext_args *a = arg;
    if (a->reserved)
        return -EINVAL;
    struct emu_nvgpu_as *as = emu_nvgpu_as_from_fd(t->m, a->as_fd);
    if (!as)
        return -EINVAL;
    uint32_t veid;
    if (a->type == NVGPU_TSG_SUBCONTEXT_TYPE_SYNC) {
        veid = 0;
    } else if (a->type == NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC) {
        veid = t->next_async_veid; /* async VEIDs start at 1 (observed veid = 1, §4.1) */
        if (veid >= EMU_NVGPU_MAX_VEIDS)
            return -ENOSPC;
    } else {
        return -EINVAL;
    }
    if (t->veid_used[veid])
        return -EEXIST;
    t->veid_used[veid] = true;
    if (a->type == NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC)
        t->next_async_veid++;
    emu_nvgpu_as_ref(as);
    t->subctx_as[veid] = as;
    a->veid = veid;
    return 0;
}

static int
emu_nvgpu_tsg_bind_channel_ex(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_tsg *t = f->priv;
    struct nvgpu_tsg_bind_channel_ex_args *a = arg;
    if (!emu_nvgpu_zero(a->reserved, sizeof a->reserved))
        return -EINVAL;
    struct emu_nvgpu_chan *c = emu_nvgpu_chan_from_fd(t->m, a->channel_fd);
    if (!c || a->subcontext_id >= EMU_NVGPU_MAX_VEIDS)
        return -EINVAL;
    /* r35 has no CREATE_SUBCONTEXT: the VEID is any id below max_veid_count_per_tsg and the
     * subcontext takes the channel's AS (r35.5 ioctl_tsg.c bind_channel_ex). */
    if (t->m->l4t == NVGPU_L4T_R35 && !t->veid_used[a->subcontext_id] && emu_nvgpu_chan_as(c)) {
        t->veid_used[a->subcontext_id] = true;
        emu_nvgpu_as_ref(emu_nvgpu_chan_as(c));
        t->subctx_as[a->subcontext_id] = emu_nvgpu_chan_as(c);
    }
    if (!t->veid_used[a->subcontext_id])
        return -EINVAL;
    /* The channel must already be bound to an AS: TSG-before-AS gives EINVAL (§4.2). */
    if (!emu_nvgpu_chan_as(c)) {
        emu_nvgpu_klog(t->m, "nvgpu: tsg bind: channel fd %d has no address space (bind it to the AS first)",
                       a->channel_fd);
        return -EINVAL;
    }
    if (emu_nvgpu_chan_as(c) != t->subctx_as[a->subcontext_id])
        return -EINVAL;
    int rc = emu_nvgpu_chan_bind_tsg(c, t, t->subctx_as[a->subcontext_id], a->subcontext_id);
    if (rc == 0)
        t->refs++;
    return rc;
}

const struct emu_nvgpu_ioctl emu_nvgpu_tsg_ioctls[] = {
    {NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, "NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT", emu_nvgpu_tsg_create_subcontext,
     NVGPU_L4T_R36},
    {NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, "NVGPU_TSG_IOCTL_BIND_CHANNEL_EX", emu_nvgpu_tsg_bind_channel_ex, 0},
};
const int emu_nvgpu_tsg_ioctls_n = (int)(sizeof emu_nvgpu_tsg_ioctls / sizeof emu_nvgpu_tsg_ioctls[0]);

static int
emu_nvgpu_tsg_ioctl(struct emu_fd *f, unsigned long request, void *arg)
{
    return emu_nvgpu_dispatch(f, emu_nvgpu_tsg_ioctls,
                              (int)(sizeof emu_nvgpu_tsg_ioctls / sizeof emu_nvgpu_tsg_ioctls[0]), request,
                              arg);
}

static void
emu_nvgpu_tsg_release(struct emu_fd *f)
{
    emu_nvgpu_tsg_unref(f->priv);
}

const struct emu_fd_ops emu_nvgpu_tsg_fd_ops = {
    .name = "nvgpu-tsg",
    .ioctl = emu_nvgpu_tsg_ioctl,
    .release = emu_nvgpu_tsg_release,
};

/* ==== ctrl fd (nvgpu.md §1.2, §3.1, §4.1-4.2, §4.8) ==== */

static int
emu_nvgpu_ctrl_get_characteristics(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    struct nvgpu_gpu_get_characteristics *a = arg;
    if (!a->gpu_characteristics_buf_addr)
        return -EFAULT;
    /* The kernel's struct: r36 as stored; r35 has no numa_domain_id (+4 pad) at 16, so
     * everything after moves 8 bytes down and the struct ends before device_instance_id. */
    uint8_t img[NVGPU_CHARS_B_R36];
    size_t kernel_B = NVGPU_CHARS_B_R36;
    memcpy(img, &m->chars, sizeof img);
    if (m->l4t == NVGPU_L4T_R35) {
        memmove(img + NVGPU_CHARS_R35_SHIFT_AT, img + NVGPU_CHARS_R35_SHIFT_AT + NVGPU_CHARS_R35_SHIFT_B,
                NVGPU_CHARS_B_R35 - NVGPU_CHARS_R35_SHIFT_AT);
        kernel_B = NVGPU_CHARS_B_R35;
    }
    /* Copy min(ours, the caller's) bytes and report the kernel's size (§1.2; the same in
     * r35.5 and r36.2 ioctl_ctrl.c). */
    size_t n =
        a->gpu_characteristics_buf_size < kernel_B ? (size_t)a->gpu_characteristics_buf_size : kernel_B;
    memcpy((void *)(uintptr_t)a->gpu_characteristics_buf_addr, img, n);
    a->gpu_characteristics_buf_size = m->chars_B_report ? m->chars_B_report : kernel_B;
    return 0;
}

static int
emu_nvgpu_ctrl_get_tpc_masks(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    struct nvgpu_gpu_get_tpc_masks_args *a = arg;
    uint32_t need = (uint32_t)sizeof m->tpc_mask; /* one u32 per GPC up to fls(gpc_mask) */
    /* As the kernel: copy what fits, report the full size (nvgpu-ctrl.h). */
    if (a->mask_buf_size) {
        if (!a->mask_buf_addr)
            return -EFAULT;
        memcpy((void *)(uintptr_t)a->mask_buf_addr, m->tpc_mask,
               a->mask_buf_size < need ? a->mask_buf_size : need);
    }
    a->mask_buf_size = need;
    return 0;
}

static int
emu_nvgpu_ctrl_num_vsms(struct emu_fd *f, void *arg)
{
    struct nvgpu_gpu_num_vsms *a = arg;
    a->num_vsms = emu_nvgpu_of(f->dev)->num_vsms;
    a->reserved = 0;
    return 0;
}

static int
emu_nvgpu_ctrl_zcull_get_ctx_size(struct emu_fd *f, void *arg)
{
    (void)f;
    ((struct nvgpu_gpu_zcull_get_ctx_size_args *)arg)->size = EMU_NVGPU_ZCULL_CTX_B;
    return 0;
}

static int
emu_nvgpu_ctrl_alloc_as(struct emu_fd *f, void *arg)
{
    struct nvgpu_alloc_as_args *a = arg;
    int fd;
    int rc = emu_nvgpu_as_create(emu_nvgpu_of(f->dev), a, &fd);
    if (rc == 0)
        a->as_fd = fd;
    return rc;
}

static int emu_nvgpu_tsg_new(struct emu_fd *f, int *fd_out);

static int
emu_nvgpu_ctrl_open_tsg(struct emu_fd *f, void *arg)
{
    struct nvgpu_gpu_open_tsg_args *a = arg;
    /* All inputs zero (§4.1): no sharing token, no flags. */
    if (a->flags || a->source_device_instance_id || a->share_token)
        return -EINVAL;
    int fd;
    int rc = emu_nvgpu_tsg_new(f, &fd);
    if (rc == 0)
        a->tsg_fd = fd;
    return rc;
}

static int
emu_nvgpu_ctrl_open_tsg_r35(struct emu_fd *f, void *arg)
{
    struct nvgpu_gpu_open_tsg_args_r35 *a = arg;
    if (a->reserved) /* "must be zero" (r35.5 nvgpu-ctrl.h) */
        return -EINVAL;
    int fd;
    int rc = emu_nvgpu_tsg_new(f, &fd);
    if (rc == 0)
        a->tsg_fd = (uint32_t)fd;
    return rc;
}

static int
emu_nvgpu_tsg_new(struct emu_fd *f, int *fd_out)
{
    struct emu_nvgpu_tsg *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->m = emu_nvgpu_of(f->dev);
    t->refs = 1;
    t->next_async_veid = 1;
    struct emu_fd *tf;
    int fd = emu_fd_create(f->dev, &emu_nvgpu_tsg_fd_ops, t, &tf);
    if (fd < 0) {
        free(t);
        return fd;
    }
    *fd_out = fd;
    return 0;
}

static int
emu_nvgpu_ctrl_open_channel(struct emu_fd *f, void *arg)
{
    struct nvgpu_gpu_open_channel_args *a = arg;
    /* -1 = the primary graphics runlist; ga10b has GR + async copy engines on it (§4.2). */
    if (a->runlist_id != -1 && a->runlist_id != 0)
        return -EINVAL;
    int fd;
    int rc = emu_nvgpu_chan_open(emu_nvgpu_of(f->dev), &fd);
    if (rc == 0)
        a->channel_fd = fd;
    return rc;
}

const struct emu_nvgpu_ioctl emu_nvgpu_ctrl_ioctls[] = {
    {NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE, "NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE",
     emu_nvgpu_ctrl_zcull_get_ctx_size, 0},
    {NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS",
     emu_nvgpu_ctrl_get_characteristics, 0},
    {NVGPU_GPU_IOCTL_ALLOC_AS, "NVGPU_GPU_IOCTL_ALLOC_AS", emu_nvgpu_ctrl_alloc_as, 0},
    {NVGPU_GPU_IOCTL_OPEN_TSG, "NVGPU_GPU_IOCTL_OPEN_TSG", emu_nvgpu_ctrl_open_tsg, NVGPU_L4T_R36},
    {NVGPU_GPU_IOCTL_GET_TPC_MASKS, "NVGPU_GPU_IOCTL_GET_TPC_MASKS", emu_nvgpu_ctrl_get_tpc_masks, 0},
    {NVGPU_GPU_IOCTL_OPEN_CHANNEL, "NVGPU_GPU_IOCTL_OPEN_CHANNEL", emu_nvgpu_ctrl_open_channel, 0},
    {NVGPU_GPU_IOCTL_NUM_VSMS, "NVGPU_GPU_IOCTL_NUM_VSMS", emu_nvgpu_ctrl_num_vsms, 0},
    {NVGPU_GPU_IOCTL_OPEN_TSG_R35, "NVGPU_GPU_IOCTL_OPEN_TSG", emu_nvgpu_ctrl_open_tsg_r35, NVGPU_L4T_R35},
};
const int emu_nvgpu_ctrl_ioctls_n = (int)(sizeof emu_nvgpu_ctrl_ioctls / sizeof emu_nvgpu_ctrl_ioctls[0]);

static int
emu_nvgpu_ctrl_ioctl(struct emu_fd *f, unsigned long request, void *arg)
{
    return emu_nvgpu_dispatch(f, emu_nvgpu_ctrl_ioctls,
                              (int)(sizeof emu_nvgpu_ctrl_ioctls / sizeof emu_nvgpu_ctrl_ioctls[0]), request,
                              arg);
}

/* mmap of the ctrl fd = the usermode register page (gk20a_ctrl_dev_mmap, §4.8). */
static int
emu_nvgpu_ctrl_mmap(struct emu_fd *f, uint64_t offset, uint64_t len, int prot, struct emu_bo **bo_out,
                    uint64_t *bo_off_out)
{
    (void)prot;
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    if (offset || !len || len > NVGPU_USERMODE_MAP_B)
        return -EINVAL;
    *bo_out = m->usermode_bo;
    *bo_off_out = 0;
    return 0;
}

static const struct emu_fd_ops emu_nvgpu_ctrl_fd_ops = {
    .name = "nvgpu-ctrl",
    .ioctl = emu_nvgpu_ctrl_ioctl,
    .mmap = emu_nvgpu_ctrl_mmap,
};

/* ==== The model ==== */

static int
emu_nvgpu_open(struct emu_dev *d, const char *path, int flags, struct emu_fd **f_out)
{
    (void)flags;
    struct emu_nvgpu *m = emu_nvgpu_of(d);
    if (!strcmp(path, NVGPU_DEV_NVMAP))
        return emu_nvmap_open(m, f_out);
    if (!strcmp(path, NVGPU_DEV_CTRL))
        return emu_fd_create(d, &emu_nvgpu_ctrl_fd_ops, m, f_out);
    return -ENOENT;
}

static void
emu_nvgpu_destroy(struct emu_dev *d)
{
    struct emu_nvgpu *m = emu_nvgpu_of(d);
    if (!m)
        return;
    while (m->handles) { /* handles leaked by the program under test (never FREEd) */
        struct emu_nvmap_handle *h = m->handles;
        m->handles = h->next;
        if (h->bo)
            emu_bo_unref(h->bo);
        free(h);
    }
    if (m->usermode_bo)
        emu_bo_unref(m->usermode_bo);
    pthread_mutex_destroy(&m->klog_lock);
    free(m);
}

static const struct emu_model_ops emu_nvgpu_model_ops = {
    .name = "nvgpu",
    .open = emu_nvgpu_open,
    .destroy = emu_nvgpu_destroy,
};

/* What GET_CHARACTERISTICS reports on a Jetson AGX Orin 64GB (nvgpu.md §1.2; topology
 * 2 GPC x 4 TPC x 2 SM = 16 SMs, the published part). */
static void
emu_nvgpu_chars_init(struct emu_nvgpu *m)
{
    struct nvgpu_gpu_characteristics *c = &m->chars;
    memset(c, 0, sizeof *c);
    c->arch = NVGPU_GPU_ARCH_GA100;
    c->impl = NVGPU_GPU_IMPL_GA10B;
    c->num_gpc = 2;
    c->L2_cache_size = 4u << 20;
    c->on_board_video_memory_size = 0;
    c->num_tpc_per_gpc = 4;
    c->big_page_size = 0;
    c->compression_page_size = 64u << 10;
    c->pde_coverage_bit_count = 47;
    c->flags = NVGPU_GPU_FLAGS_SUPPORT_TSG | NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_SUBMIT_NO_JOBTRACKING |
               NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_SUBMIT_FULL | NVGPU_GPU_FLAGS_SUPPORT_IO_COHERENCE |
               NVGPU_GPU_FLAGS_SUPPORT_TSG_SUBCONTEXTS | NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_OPTS |
               NVGPU_GPU_FLAGS_SUPPORT_USERMODE_SUBMIT;
    c->compute_class = m->arch->compute_cls;
    c->gpfifo_class = EMU_NVGPU_GPFIFO_CLASS;
    c->dma_copy_class = m->arch->copy_cls;
    c->gpc_mask = 0x3;
    c->sm_arch_sm_version = 0x807;
    c->sm_arch_warp_count = 48;
    c->gpu_va_bit_count = 40;
    c->max_freq = 1300500000ull;
    c->max_gpfifo_entries = 1u << 28;
    c->max_veid_count_per_tsg = EMU_NVGPU_MAX_VEIDS;
    c->max_gpc_count = 2;
    memcpy(c->chipname, "ga10b", 5);
    m->tpc_mask[0] = 0xF;
    m->tpc_mask[1] = 0xF;
    m->num_vsms = 16;
}

enum hcq_status
emu_nvgpu_model_create(struct emu_dev *d)
{
    const struct hcq_arch *arch = emu_dev_arch(d);
    if (!arch)
        return hcq_err(HCQ_ERR_INVALID, "emu_nvgpu_model_create: device has no arch row");
    struct emu_nvgpu *m = calloc(1, sizeof *m);
    if (!m)
        return hcq_err(HCQ_ERR_NOMEM, "emu_nvgpu_model_create: out of host memory");
    m->dev = d;
    m->arch = arch;
    m->next_handle = 0x80000001u;
    m->next_token = EMU_NVGPU_FIRST_TOKEN;
    m->l4t = emu_dev_opts(d)->l4t == NVGPU_L4T_R35 ? NVGPU_L4T_R35 : NVGPU_L4T_R36;
    pthread_mutex_init(&m->klog_lock, NULL);
    emu_nvgpu_chars_init(m);
    int rc = emu_bo_create(d, NVGPU_USERMODE_MAP_B, &m->usermode_bo);
    if (rc < 0) {
        pthread_mutex_destroy(&m->klog_lock);
        free(m);
        return hcq_err(HCQ_ERR_NOMEM, "emu_nvgpu_model_create: usermode page: %s", strerror(-rc));
    }
    /* what GET_CHARACTERISTICS reports; Orin has 2 SMs per TPC (kmd/nvgpu assumes it too) */
    emu_dev_set_gr(d, m->chars.sm_arch_warp_count, 2,
                   (uint32_t)__builtin_popcount(m->tpc_mask[0]) +
                       (uint32_t)__builtin_popcount(m->tpc_mask[1]));
    emu_dev_set_model(d, &emu_nvgpu_model_ops, m);
    return HCQ_OK;
}
