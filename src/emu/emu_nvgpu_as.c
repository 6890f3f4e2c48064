/* SPDX-License-Identifier: MIT */
/*
 * emu_nvgpu_as.c - emulated nvgpu address spaces (AS fds) for emu:ga10b: ALLOC_AS
 * validation, ALLOC_SPACE reservations, MAP_BUFFER_EX with the kernel's top-down VA
 * placement, UNMAP_BUFFER, BIND_CHANNEL. Layer: emu. Rules: docs/hw/nvgpu.md §3.
 *
 * The shader windows (§3.4): the compute engine redirects accesses inside the shared and
 * local memory windows (the engine programs them at 0xFE00000000 / 0xFD00000000 on Tegra)
 * to shared/local memory. A buffer that the top-down allocator places inside a window is
 * unreachable by the GPU, which then faulted with MISALIGNED_ADDR in the P0 bug. The model
 * keeps such a buffer CPU-mappable but out of the GPU's page tables, so any GPU access
 * faults, and logs the collision. Reserving both windows with ALLOC_SPACE avoids it.
 */
#include "emu_nvgpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct emu_nvgpu_range {
    uint64_t va, size_B;
    bool reservation;           /* ALLOC_SPACE */
    bool gpu_visible;           /* in the emu_vm (false: inside a shader window) */
    struct emu_nvmap_handle *h; /* mappings */
    struct emu_nvgpu_range *next;
};

struct emu_nvgpu_as {
    struct emu_nvgpu *m;
    int refs;
    struct emu_vm *vm;
    uint64_t start, end;
    struct emu_nvgpu_range *ranges;
};

static const struct {
    uint64_t va;
    const char *name;
} emu_nvgpu_windows[] = {
    {NVGPU_LOCAL_WINDOW_VA, "local"},
    {NVGPU_SHARED_WINDOW_VA, "shared"},
};

struct emu_vm *
emu_nvgpu_as_vm(struct emu_nvgpu_as *as)
{
    return as->vm;
}

void
emu_nvgpu_as_ref(struct emu_nvgpu_as *as)
{
    as->refs++;
}

void
emu_nvgpu_as_unref(struct emu_nvgpu_as *as)
{
    if (!as || --as->refs > 0)
        return;
    while (as->ranges) {
        struct emu_nvgpu_range *r = as->ranges;
        as->ranges = r->next;
        if (r->gpu_visible)
            emu_vm_unmap(as->vm, r->va, 0);
        if (r->h)
            emu_nvmap_handle_unref(as->m, r->h);
        free(r);
    }
    emu_vm_destroy(as->vm);
    free(as);
}

struct emu_nvgpu_as *
emu_nvgpu_as_from_fd(struct emu_nvgpu *m, int fd)
{
    struct emu_fd *f = emu_fd_lookup(m->dev, fd);
    return f && f->ops == &emu_nvgpu_as_fd_ops ? f->priv : NULL;
}

static bool
emu_nvgpu_overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
    return a < b + bn && b < a + an;
}

static struct emu_nvgpu_range *
emu_nvgpu_as_busy(struct emu_nvgpu_as *as, uint64_t va, uint64_t size_B, bool mappings_only)
{
    for (struct emu_nvgpu_range *r = as->ranges; r; r = r->next)
        if ((!mappings_only || !r->reservation) && emu_nvgpu_overlap(va, size_B, r->va, r->size_B))
            return r;
    return NULL;
}

static bool
emu_nvgpu_as_reserved(struct emu_nvgpu_as *as, uint64_t va, uint64_t size_B)
{
    for (struct emu_nvgpu_range *r = as->ranges; r; r = r->next)
        if (r->reservation && va >= r->va && va + size_B <= r->va + r->size_B)
            return true;
    return false;
}

/* The kernel's placement, modelled on the VAs observed (§3.2): top-down from end - 4 MiB,
 * aligned to the buffer's size up to 2 MiB, skipping reservations and mappings. */
static uint64_t
emu_nvgpu_as_place(struct emu_nvgpu_as *as, uint64_t size_B)
{
    uint64_t align = EMU_PAGE_B;
    while (align < size_B && align < NVGPU_BIG_ALLOC_ALIGN_B)
        align <<= 1;
    uint64_t top = as->end - EMU_NVGPU_AS_TOP_GAP_B;
    if (size_B > top - as->start)
        return 0;
    uint64_t va = (top - size_B) & ~(align - 1);
    for (;;) {
        if (va < as->start)
            return 0;
        struct emu_nvgpu_range *r = emu_nvgpu_as_busy(as, va, size_B, false);
        if (!r)
            return va;
        if (r->va < size_B)
            return 0;
        va = (r->va - size_B) & ~(align - 1);
    }
}

static int
emu_nvgpu_as_add(struct emu_nvgpu_as *as, uint64_t va, uint64_t size_B, bool reservation,
                 struct emu_nvgpu_range **r_out)
{
    struct emu_nvgpu_range *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->va = va;
    r->size_B = size_B;
    r->reservation = reservation;
    r->next = as->ranges;
    as->ranges = r;
    *r_out = r;
    return 0;
}

/* ==== ioctls ==== */

static int
emu_nvgpu_as_alloc_space(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_as *as = f->priv;
    struct nvgpu_as_alloc_space_args *a = arg;
    if (!a->pages || !a->page_size || (a->page_size & (a->page_size - 1)) || a->page_size != NVGPU_PAGE_B)
        return -EINVAL; /* ga10b: 4 KiB pages only (big_page_size 0, §1.2) */
    if (a->flags & ~(NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET | NVGPU_AS_ALLOC_SPACE_FLAGS_SPARSE))
        return -EINVAL;
    if (a->padding[0] || a->padding[1])
        return -EINVAL;
    if (a->pages > (as->end - as->start) / a->page_size)
        return -ENOMEM;
    uint64_t size = a->pages * a->page_size, va;
    if (a->flags & NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET) {
        va = a->offset;
        if (va % a->page_size || va < as->start || va > as->end || size > as->end - va)
            return -EINVAL;
        if (emu_nvgpu_as_busy(as, va, size, false))
            return -EBUSY;
    } else {
        va = emu_nvgpu_as_place(as, size);
        if (!va)
            return -ENOMEM;
    }
    struct emu_nvgpu_range *r;
    int rc = emu_nvgpu_as_add(as, va, size, true, &r);
    if (rc == 0)
        a->offset = va;
    return rc;
}

/* FREE_SPACE: the reservation must match an ALLOC_SPACE exactly. The kernel unmaps what
 * is still mapped inside; the model refuses instead (EBUSY), so a caller that frees the
 * space before unmapping its buffers shows up in tests. */
static int
emu_nvgpu_as_free_space(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_as *as = f->priv;
    struct nvgpu_as_free_space_args *a = arg;
    if (a->page_size != NVGPU_PAGE_B || a->padding[0] || a->padding[1] || a->padding[2])
        return -EINVAL;
    for (struct emu_nvgpu_range **p = &as->ranges; *p; p = &(*p)->next) {
        struct emu_nvgpu_range *r = *p;
        if (!r->reservation || r->va != a->offset || r->size_B != a->pages * a->page_size)
            continue;
        for (struct emu_nvgpu_range *q = as->ranges; q; q = q->next)
            if (!q->reservation && emu_nvgpu_overlap(q->va, q->size_B, r->va, r->size_B)) {
                emu_nvgpu_klog(as->m, "emu-nvgpu: free_space 0x%llx with buffers still mapped inside",
                               (unsigned long long)r->va);
                return -EBUSY;
            }
        *p = r->next;
        free(r);
        return 0;
    }
    return -EINVAL;
}

static void
emu_nvgpu_as_check_windows(struct emu_nvgpu_as *as, struct emu_nvgpu_range *r)
{
    for (size_t i = 0; i < sizeof emu_nvgpu_windows / sizeof emu_nvgpu_windows[0]; i++) {
        uint64_t w = emu_nvgpu_windows[i].va;
        if (!emu_nvgpu_overlap(r->va, r->size_B, w, NVGPU_WINDOW_RESERVE_B))
            continue;
        as->m->window_collisions++;
        r->gpu_visible = false;
        emu_nvgpu_klog(
            as->m,
            "emu-nvgpu: buffer 0x%llx+0x%llx mapped inside the shader %s-memory window 0x%llx: GPU "
            "accesses will fault (reserve the window with ALLOC_SPACE, nvgpu.md §3.4)",
            (unsigned long long)r->va, (unsigned long long)r->size_B, emu_nvgpu_windows[i].name,
            (unsigned long long)w);
    }
}

/* Process-wide MAP_BUFFER_EX counts (all, and with GPU L2 / L3 caching asked), for the
 * test that nvhcq never maps GPU-L2-cached (it emits no L2 flush, docs/jetson.md). */
static uint32_t emu_nvgpu_maps_seen, emu_nvgpu_maps_cached;

void
emu_nvgpu_map_flags_seen(uint32_t *maps, uint32_t *cached)
{
    *maps = __atomic_load_n(&emu_nvgpu_maps_seen, __ATOMIC_RELAXED);
    *cached = __atomic_load_n(&emu_nvgpu_maps_cached, __ATOMIC_RELAXED);
}

static int
emu_nvgpu_as_map_buffer_ex(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_as *as = f->priv;
    struct nvgpu_as_map_buffer_ex_args *a = arg;
    __atomic_add_fetch(&emu_nvgpu_maps_seen, 1, __ATOMIC_RELAXED);
    if (a->flags & (NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE | NVGPU_AS_MAP_BUFFER_FLAGS_L3_ALLOC))
        __atomic_add_fetch(&emu_nvgpu_maps_cached, 1, __ATOMIC_RELAXED);
    uint32_t known = NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET | NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE |
                     NVGPU_AS_MAP_BUFFER_FLAGS_UNMAPPED_PTE | NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS |
                     NVGPU_AS_MAP_BUFFER_FLAGS_L3_ALLOC | NVGPU_AS_MAP_BUFFER_FLAGS_SYSTEM_COHERENT |
                     NVGPU_AS_MAP_BUFFER_FLAGS_TEGRA_RAW | (3u << 10);
    if (a->flags & ~known)
        return -EINVAL;
    /* "At least one of compr_kind/incompr_kind must be valid" (§3.2). */
    if (a->compr_kind == NV_KIND_INVALID && a->incompr_kind == NV_KIND_INVALID)
        return -EINVAL;
    if (a->page_size != NVGPU_PAGE_B)
        return -EINVAL;
    struct emu_nvmap_handle *h = emu_nvmap_handle_from_fd(as->m, (int)a->dmabuf_fd);
    if (!h)
        return -EINVAL;
    uint64_t size = a->mapping_size ? a->mapping_size : h->size_B - a->buffer_offset;
    if (a->buffer_offset % EMU_PAGE_B || size % EMU_PAGE_B || a->buffer_offset > h->size_B ||
        size > h->size_B - a->buffer_offset || !size)
        return -EINVAL;
    uint64_t va;
    if (a->flags & NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET) {
        va = a->offset;
        if (va % EMU_PAGE_B || va < as->start || va > as->end || size > as->end - va ||
            emu_nvgpu_as_busy(as, va, size, true))
            return -EINVAL;
    } else {
        va = emu_nvgpu_as_place(as, size);
        if (!va)
            return -ENOMEM;
    }
    struct emu_nvgpu_range *r;
    int rc = emu_nvgpu_as_add(as, va, size, false, &r);
    if (rc)
        return rc;
    r->h = h;
    emu_nvmap_handle_ref(h);
    r->gpu_visible = true;
    if (!emu_nvgpu_as_reserved(as, va, size))
        emu_nvgpu_as_check_windows(as, r);
    if (r->gpu_visible) {
        rc = emu_vm_map(as->vm, va, size, h->bo, a->buffer_offset);
        /* l2=noncoherent: a CACHEABLE mapping (no PTE volatile bit) lets the L2 keep the
         * GPU's writes; without the option the model has no L2 and every mapping is
         * coherent. nvhcq never asks CACHEABLE (docs/jetson.md "Coherence"). */
        if (!rc && (a->flags & NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE) &&
            emu_dev_opts(as->m->dev)->l2_noncoherent && (rc = emu_vm_set_l2(as->vm, va)) != 0)
            emu_vm_unmap(as->vm, va, 0);
        if (rc) {
            r->gpu_visible = false; /* undone by the unmap below */
            as->ranges = r->next;
            emu_nvmap_handle_unref(as->m, h);
            free(r);
            return rc;
        }
    }
    a->offset = va;
    return 0;
}

static int
emu_nvgpu_as_unmap_buffer(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_as *as = f->priv;
    struct nvgpu_as_unmap_buffer_args *a = arg;
    for (struct emu_nvgpu_range **p = &as->ranges; *p; p = &(*p)->next) {
        struct emu_nvgpu_range *r = *p;
        if (r->reservation || r->va != a->offset)
            continue;
        *p = r->next;
        if (r->gpu_visible)
            emu_vm_unmap(as->vm, r->va, 0);
        emu_nvmap_handle_unref(as->m, r->h);
        free(r);
        return 0;
    }
    return -EINVAL;
}

static int
emu_nvgpu_as_bind_channel(struct emu_fd *f, void *arg)
{
    struct emu_nvgpu_as *as = f->priv;
    struct nvgpu_as_bind_channel_args *a = arg;
    struct emu_nvgpu_chan *c = emu_nvgpu_chan_from_fd(as->m, (int)a->channel_fd);
    if (!c)
        return -EINVAL;
    return emu_nvgpu_chan_bind_as(c, as); /* takes an AS reference */
}

const struct emu_nvgpu_ioctl emu_nvgpu_as_ioctls[] = {
    {NVGPU_AS_IOCTL_BIND_CHANNEL, "NVGPU_AS_IOCTL_BIND_CHANNEL", emu_nvgpu_as_bind_channel, 0},
    {NVGPU_AS_IOCTL_UNMAP_BUFFER, "NVGPU_AS_IOCTL_UNMAP_BUFFER", emu_nvgpu_as_unmap_buffer, 0},
    {NVGPU_AS_IOCTL_ALLOC_SPACE, "NVGPU_AS_IOCTL_ALLOC_SPACE", emu_nvgpu_as_alloc_space, 0},
    {NVGPU_AS_IOCTL_FREE_SPACE, "NVGPU_AS_IOCTL_FREE_SPACE", emu_nvgpu_as_free_space, 0},
    {NVGPU_AS_IOCTL_MAP_BUFFER_EX, "NVGPU_AS_IOCTL_MAP_BUFFER_EX", emu_nvgpu_as_map_buffer_ex, 0},
};
const int emu_nvgpu_as_ioctls_n = (int)(sizeof emu_nvgpu_as_ioctls / sizeof emu_nvgpu_as_ioctls[0]);

static int
emu_nvgpu_as_ioctl(struct emu_fd *f, unsigned long request, void *arg)
{
    return emu_nvgpu_dispatch(f, emu_nvgpu_as_ioctls,
                              (int)(sizeof emu_nvgpu_as_ioctls / sizeof emu_nvgpu_as_ioctls[0]), request,
                              arg);
}

static void
emu_nvgpu_as_release(struct emu_fd *f)
{
    emu_nvgpu_as_unref(f->priv);
}

const struct emu_fd_ops emu_nvgpu_as_fd_ops = {
    .name = "nvgpu-as",
    .ioctl = emu_nvgpu_as_ioctl,
    .release = emu_nvgpu_as_release,
};

/* ALLOC_AS on the ctrl fd (§3.1). */
int
emu_nvgpu_as_create(struct emu_nvgpu *m, const struct nvgpu_alloc_as_args *a, int *fd_out)
{
    if (a->big_page_size) /* ga10b has no big pages */
        return -EINVAL;
    if (a->flags != NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA || a->reserved)
        return -EINVAL; /* the model supports the kernel-managed unified VA only */
    for (int i = 0; i < 6; i++)
        if (a->padding[i])
            return -EINVAL;
    /* Non-zero and PDE-aligned (2 MiB works; pde_coverage_bit_count does not, §3.1). */
    if (!a->va_range_start || !a->va_range_end || a->va_range_start % NVGPU_VA_PDE_ALIGN_B ||
        a->va_range_end % NVGPU_VA_PDE_ALIGN_B || a->va_range_start >= a->va_range_end ||
        a->va_range_end > (1ull << m->chars.gpu_va_bit_count))
        return -EINVAL;
    if (a->va_range_split) /* must be 0 with UNIFIED_VA */
        return -EINVAL;
    if (a->va_range_end - a->va_range_start <= EMU_NVGPU_AS_TOP_GAP_B)
        return -EINVAL;
    struct emu_nvgpu_as *as = calloc(1, sizeof *as);
    if (!as)
        return -ENOMEM;
    as->m = m;
    as->refs = 1;
    as->start = a->va_range_start;
    as->end = a->va_range_end;
    int rc = emu_vm_create(m->dev, m->chars.gpu_va_bit_count, &as->vm);
    if (rc < 0) {
        free(as);
        return rc;
    }
    struct emu_fd *f;
    int fd = emu_fd_create(m->dev, &emu_nvgpu_as_fd_ops, as, &f);
    if (fd < 0) {
        emu_nvgpu_as_unref(as);
        return fd;
    }
    *fd_out = fd;
    return 0;
}
