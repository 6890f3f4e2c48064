/* SPDX-License-Identifier: MIT */
/*
 * emu_nvmap.c - emulated /dev/nvmap for emu:ga10b: handles (CREATE / ALLOC / GET_FD /
 * FREE), dmabuf fds and their mmap, GET_AVAILABLE_HEAPS, WRITE/READ. Layer: emu.
 * Rules from docs/hw/nvgpu.md §2 (cited per check).
 */
#include "emu_nvgpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ==== Handles ==== */

static struct emu_nvmap_handle *
emu_nvmap_handle_find(struct emu_nvgpu *m, uint32_t id)
{
    for (struct emu_nvmap_handle *h = m->handles; h; h = h->next)
        if (h->id == id && !h->freed)
            return h;
    return NULL;
}

void
emu_nvmap_handle_ref(struct emu_nvmap_handle *h)
{
    h->refs++;
}

void
emu_nvmap_handle_unref(struct emu_nvgpu *m, struct emu_nvmap_handle *h)
{
    if (!h || --h->refs > 0)
        return;
    for (struct emu_nvmap_handle **p = &m->handles; *p; p = &(*p)->next) {
        if (*p == h) {
            *p = h->next;
            break;
        }
    }
    if (h->bo)
        emu_bo_unref(h->bo); /* CPU mappings and GPU mappings hold their own bo refs */
    free(h);
}

/* ==== dmabuf fds ==== */

struct emu_nvmap_handle *
emu_nvmap_handle_from_fd(struct emu_nvgpu *m, int fd)
{
    struct emu_fd *f = emu_fd_lookup(m->dev, fd);
    return f && f->ops == &emu_nvmap_dmabuf_fd_ops ? f->priv : NULL;
}

static int
emu_nvmap_dmabuf_ioctl(struct emu_fd *f, unsigned long request, void *arg)
{
    (void)arg;
    emu_trace(f->dev, "nvgpu dmabuf 0x%08lx -> -ENOTTY", request);
    return -ENOTTY;
}

static int
emu_nvmap_dmabuf_mmap(struct emu_fd *f, uint64_t offset, uint64_t len, int prot, struct emu_bo **bo_out,
                      uint64_t *bo_off_out)
{
    (void)prot;
    struct emu_nvmap_handle *h = f->priv;
    if (!len || offset > h->size_B || len > h->size_B - offset || offset % EMU_PAGE_B)
        return -EINVAL;
    *bo_out = h->bo;
    *bo_off_out = offset;
    return 0;
}

static void
emu_nvmap_dmabuf_release(struct emu_fd *f)
{
    emu_nvmap_handle_unref(emu_nvgpu_of(f->dev), f->priv);
}

const struct emu_fd_ops emu_nvmap_dmabuf_fd_ops = {
    .name = "dmabuf",
    .ioctl = emu_nvmap_dmabuf_ioctl,
    .mmap = emu_nvmap_dmabuf_mmap,
    .release = emu_nvmap_dmabuf_release,
};

/* ==== /dev/nvmap ioctls ==== */

static int
emu_nvmap_create(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    struct nvmap_create_handle *a = arg;
    if (!a->size)
        return -EINVAL;
    /* A test can lower the per-buffer cap (emu opts nvmap_max=) so spanning is exercised
     * without allocating 4 GiB. */
    uint64_t cap = emu_dev_opts(f->dev)->nvmap_max ? emu_dev_opts(f->dev)->nvmap_max : NVGPU_MAX_NVMAP_BUF_B;
    if (a->size > cap) {
        emu_nvgpu_klog(m, "nvmap: create: %u B above the model's per-buffer cap %llu B", a->size,
                       (unsigned long long)cap);
        return -ENOMEM;
    }
    struct emu_nvmap_handle *h = calloc(1, sizeof *h);
    if (!h)
        return -ENOMEM;
    h->id = m->next_handle++; /* bit 31 set, e.g. 0x80000015 (§2.1) */
    h->size_B = ((uint64_t)a->size + EMU_PAGE_B - 1) & ~(EMU_PAGE_B - 1);
    h->refs = 1;
    h->next = m->handles;
    m->handles = h;
    a->handle = h->id;
    return 0;
}

static int
emu_nvmap_alloc(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    struct nvmap_alloc_handle *a = arg;
    struct emu_nvmap_handle *h = emu_nvmap_handle_find(m, a->handle);
    if (!h)
        return -EINVAL;
    if (h->allocated)
        return -EEXIST;
    /* Heaps (§2.2): only IOVMM works; SYSMEM gives ENOMEM, the carveouts are absent. */
    if (!(a->heap_mask & NVMAP_HEAP_IOVMM)) {
        emu_nvgpu_klog(m, "nvmap: nvmap_alloc_handle: no usable heap in mask 0x%08x (use IOVMM 1<<30)",
                       a->heap_mask);
        return -ENOMEM;
    }
    /* Allocation tag (§2.3): the real kernel WARNs "tag not specified" on every untagged
     * allocation; the model refuses, so a regression fails CI instead of spamming dmesg. */
    if (!(a->flags & NVMAP_HANDLE_TAG_MASK)) {
        m->tag_warnings++;
        emu_nvgpu_klog(m, "nvmap: WARNING: nvmap_alloc_handle: allocation tag not specified (flags 0x%08x)",
                       a->flags);
        return -EINVAL;
    }
    uint32_t known = NVMAP_HANDLE_TAG_MASK | NVMAP_HANDLE_CACHE_FLAG_MASK | NVMAP_HANDLE_SECURE |
                     NVMAP_HANDLE_KIND_SPECIFIED | NVMAP_HANDLE_COMPR_SPECIFIED | NVMAP_HANDLE_ZEROED_PAGES |
                     NVMAP_HANDLE_PHYS_CONTIG | NVMAP_HANDLE_CACHE_SYNC | NVMAP_HANDLE_CACHE_SYNC_AT_RESERVE |
                     NVMAP_HANDLE_RO;
    if (a->flags & ~known)
        return -EINVAL;
    /* SECURE buffers are for VPR, not CPU-mappable compute memory. */
    if (a->flags & NVMAP_HANDLE_SECURE)
        return -EINVAL;
    if (a->align && ((a->align & (a->align - 1)) || a->align < EMU_PAGE_B))
        return -EINVAL;
    if (a->numa_nid != 0 && a->numa_nid != -1)
        return -EINVAL;
    if (emu_inject_alloc(f->dev)) {
        emu_nvgpu_klog(m, "nvmap: nvmap_alloc_handle: out of memory (%llu B, injected)",
                       (unsigned long long)h->size_B);
        return -ENOMEM;
    }
    int rc = emu_bo_create(f->dev, h->size_B, &h->bo);
    if (rc < 0)
        return rc;
    h->allocated = true;
    h->heap_mask = a->heap_mask;
    h->flags = a->flags;
    h->align = a->align;
    return 0;
}

static int
emu_nvmap_get_fd(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    struct nvmap_create_handle *a = arg; /* handle in @4, fd out @0 (§2.1) */
    struct emu_nvmap_handle *h = emu_nvmap_handle_find(m, a->handle);
    if (!h || !h->allocated)
        return -EINVAL;
    struct emu_fd *df;
    int fd = emu_fd_create(f->dev, &emu_nvmap_dmabuf_fd_ops, h, &df);
    if (fd < 0)
        return fd;
    emu_nvmap_handle_ref(h);
    a->fd = fd;
    return 0;
}

static int
emu_nvmap_free(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    /* The handle is the argument itself, by value (_IO('N',4), §2.1). */
    uint32_t id = (uint32_t)(uintptr_t)arg;
    struct emu_nvmap_handle *h = emu_nvmap_handle_find(m, id);
    if (!h)
        return -EINVAL;
    h->freed = true;
    emu_nvmap_handle_unref(m, h); /* dmabuf fds and mappings keep the memory alive */
    return 0;
}

static int
emu_nvmap_get_available_heaps(struct emu_fd *f, void *arg)
{
    (void)f;
    /* Faithfully odd (§2.2): only VPR and FSI are reported, yet IOVMM is what works. */
    ((struct nvmap_available_heaps *)arg)->heaps = NVMAP_HEAP_CARVEOUT_VPR | NVMAP_HEAP_CARVEOUT_FSI;
    return 0;
}

static int
emu_nvmap_rw(struct emu_fd *f, void *arg, bool write)
{
    struct emu_nvgpu *m = emu_nvgpu_of(f->dev);
    struct nvmap_rw_handle *a = arg;
    struct emu_nvmap_handle *h = emu_nvmap_handle_find(m, a->handle);
    if (!h || !h->allocated || !a->addr || !a->elem_size)
        return -EINVAL;
    uint8_t *mem = emu_bo_host(h->bo);
    for (uint64_t i = 0; i < a->count; i++) {
        uint64_t off = a->offset + i * a->hmem_stride;
        if (off > h->size_B || a->elem_size > h->size_B - off)
            return -EINVAL;
        uint8_t *user = (uint8_t *)(uintptr_t)(a->addr + i * a->user_stride);
        if (write)
            memcpy(mem + off, user, a->elem_size);
        else
            memcpy(user, mem + off, a->elem_size);
    }
    return 0;
}

static int
emu_nvmap_write(struct emu_fd *f, void *arg)
{
    return emu_nvmap_rw(f, arg, true);
}

static int
emu_nvmap_read(struct emu_fd *f, void *arg)
{
    return emu_nvmap_rw(f, arg, false);
}

/* r35 ALLOC: 16 bytes, no numa_nid. */
static int
emu_nvmap_alloc_r35(struct emu_fd *f, void *arg)
{
    const struct nvmap_alloc_handle_r35 *a = arg;
    struct nvmap_alloc_handle b = {
        .handle = a->handle, .heap_mask = a->heap_mask, .flags = a->flags, .align = a->align};
    return emu_nvmap_alloc(f, &b);
}

const struct emu_nvgpu_ioctl emu_nvmap_ioctls[] = {
    {NVMAP_IOC_CREATE, "NVMAP_IOC_CREATE", emu_nvmap_create, 0},
    {NVMAP_IOC_ALLOC, "NVMAP_IOC_ALLOC", emu_nvmap_alloc, NVGPU_L4T_R36},
    {NVMAP_IOC_FREE, "NVMAP_IOC_FREE", emu_nvmap_free, 0},
    {NVMAP_IOC_WRITE, "NVMAP_IOC_WRITE", emu_nvmap_write, 0},
    {NVMAP_IOC_READ, "NVMAP_IOC_READ", emu_nvmap_read, 0},
    {NVMAP_IOC_GET_FD, "NVMAP_IOC_GET_FD", emu_nvmap_get_fd, 0},
    {NVMAP_IOC_GET_AVAILABLE_HEAPS, "NVMAP_IOC_GET_AVAILABLE_HEAPS", emu_nvmap_get_available_heaps, 0},
    {NVMAP_IOC_ALLOC_R35, "NVMAP_IOC_ALLOC", emu_nvmap_alloc_r35, NVGPU_L4T_R35},
};
const int emu_nvmap_ioctls_n = (int)(sizeof emu_nvmap_ioctls / sizeof emu_nvmap_ioctls[0]);

static int
emu_nvmap_ioctl(struct emu_fd *f, unsigned long request, void *arg)
{
    return emu_nvgpu_dispatch(f, emu_nvmap_ioctls,
                              (int)(sizeof emu_nvmap_ioctls / sizeof emu_nvmap_ioctls[0]), request, arg);
}

/* Never mmap /dev/nvmap itself, only dmabuf fds (§2.1 step 5). */
static int
emu_nvmap_mmap(struct emu_fd *f, uint64_t offset, uint64_t len, int prot, struct emu_bo **bo_out,
               uint64_t *bo_off_out)
{
    (void)offset, (void)len, (void)prot, (void)bo_out, (void)bo_off_out;
    emu_nvgpu_klog(emu_nvgpu_of(f->dev),
                   "nvmap: mmap of /dev/nvmap refused (mmap the dmabuf fd from GET_FD)");
    return -EINVAL;
}

const struct emu_fd_ops emu_nvmap_fd_ops = {
    .name = "nvmap",
    .ioctl = emu_nvmap_ioctl,
    .mmap = emu_nvmap_mmap,
};

int
emu_nvmap_open(struct emu_nvgpu *m, struct emu_fd **f_out)
{
    return emu_fd_create(m->dev, &emu_nvmap_fd_ops, m, f_out);
}
