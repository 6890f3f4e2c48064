/* SPDX-License-Identifier: MIT */
/*
 * nvgpu_mem.c - nvmap buffers for the Jetson backend: CREATE -> ALLOC (IOVMM heap,
 * allocation tag in bits 31:16) -> GET_FD -> MAP_BUFFER_EX into our address space ->
 * mmap of the dmabuf fd; freed in the reverse order. Layer: kmd.
 * Facts: docs/hw/nvgpu.md §2 (nvmap), §3.2-3.3 (GPU mapping).
 */
#include "nvgpu_kmd.h"

#include "util_log.h"
#include "hcq_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static uint64_t
nvgpu_mem_round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

void
nvgpu_mem_plan(uint64_t size_B, uint64_t align_B, uint32_t cache, uint64_t *size_out, uint64_t *align_out)
{
    uint64_t align = align_B > NVGPU_PAGE_B ? align_B : NVGPU_PAGE_B;
    uint64_t size = nvgpu_mem_round_up(size_B ? size_B : 1, NVGPU_PAGE_B);
    /* Big cacheable buffers: 2 MiB size and nvmap alignment (§2.4, commit a50a60925);
     * write-combined (ring, USERD, signal) buffers keep 4 KiB. GPU PTEs stay 4 KiB. */
    if (size >= NVGPU_BIG_ALLOC_MIN_B && cache != NVMAP_HANDLE_WRITE_COMBINE &&
        cache != NVMAP_HANDLE_UNCACHEABLE && align < NVGPU_BIG_ALLOC_ALIGN_B)
        align = NVGPU_BIG_ALLOC_ALIGN_B;
    size = nvgpu_mem_round_up(size, align);
    *size_out = size;
    *align_out = align;
}

static void
nvgpu_mem_link(struct nvgpu_kmd *k, struct nvgpu_mem *m)
{
    pthread_mutex_lock(&k->lock);
    m->next = k->mems;
    k->mems = m;
    pthread_mutex_unlock(&k->lock);
}

static void
nvgpu_mem_unlink(struct nvgpu_kmd *k, struct nvgpu_mem *m)
{
    pthread_mutex_lock(&k->lock);
    for (struct nvgpu_mem **p = &k->mems; *p; p = &(*p)->next) {
        if (*p == m) {
            *p = m->next;
            break;
        }
    }
    pthread_mutex_unlock(&k->lock);
}

/* MAP_BUFFER_EX: the kernel picks the VA (top-down, §3.2); no compression, 4 KiB pages.
 * flags 0 as TegraIface (CACHEABLE = GPU L2 caching was never measured on Orin, §3.2). */
static enum hcq_status
nvgpu_mem_gpu_map(struct nvgpu_kmd *k, struct nvgpu_mem *m, uint64_t fixed_va)
{
    struct nvgpu_as_map_buffer_ex_args a = {
        .flags = fixed_va ? NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET : 0,
        .offset = fixed_va,
        .compr_kind = NV_KIND_INVALID,
        .incompr_kind = 0,
        .dmabuf_fd = (uint32_t)m->dmabuf_fd,
        .page_size = NVGPU_PAGE_B,
        .buffer_offset = 0,
        .mapping_size = 0,
    };
    int err = nvgpu_kmd_ioctl(k, k->as_fd, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &a, "MAP_BUFFER_EX");
    if (err)
        return hcq_err(nvgpu_kmd_errno_status(err), "NVGPU_AS_IOCTL_MAP_BUFFER_EX (%llu B): %s",
                       (unsigned long long)m->base.size_B, strerror(err));
    if (!a.offset || a.offset + m->base.size_B > (1ull << 40) || (fixed_va && a.offset != fixed_va))
        return hcq_err(HCQ_ERR_DRIVER, "MAP_BUFFER_EX: VA 0x%llx (expected inside the 40-bit AS)",
                       (unsigned long long)a.offset);
    m->base.va = a.offset;
    m->gpu_mapped = true;
    if (hcq_debug_flags() & HCQ_DEBUG_VM)
        HCQ_LOG_DEBUG("nvgpu: map handle 0x%x %llu B at 0x%llx", (unsigned)m->base.handle,
                      (unsigned long long)m->base.size_B, (unsigned long long)a.offset);
    return HCQ_OK;
}

/* One nvmap buffer; gpu_map: MAP_BUFFER_EX (at fixed_va if non-zero); the CPU mapping at
 * fixed_cpu (MAP_FIXED inside a reservation of ours) or anywhere; link: on the live list. */
static enum hcq_status
nvgpu_mem_create_at(struct nvgpu_kmd *k, uint64_t size_B, uint64_t align_B, uint32_t cache, bool gpu_map,
                    uint64_t fixed_va, void *fixed_cpu, bool link, struct nvgpu_mem **mem_out)
{
    *mem_out = NULL;
    if (align_B & (align_B - 1))
        return hcq_err(HCQ_ERR_INVALID, "nvgpu_mem_create: align 0x%llx is not a power of two",
                       (unsigned long long)align_B);
    uint64_t size, align;
    nvgpu_mem_plan(size_B, align_B, cache, &size, &align);
    /* CREATE carries a 32-bit size (§5.2). */
    if (size > UINT32_MAX - (NVGPU_BIG_ALLOC_ALIGN_B - 1) || align > (1u << 31))
        return hcq_err(HCQ_ERR_NOMEM,
                       "nvgpu_mem_create: %llu B (align %llu) exceeds NVMAP_IOC_CREATE's 32-bit size",
                       (unsigned long long)size_B, (unsigned long long)align);
    struct nvgpu_mem *m = calloc(1, sizeof *m);
    if (!m)
        return hcq_err(HCQ_ERR_NOMEM, "nvgpu_mem_create: out of host memory");
    m->dmabuf_fd = -1;
    m->base.size_B = size;
    m->base.priv = m;
    enum hcq_status st;

    struct nvmap_create_handle cr = {.size = (uint32_t)size};
    int err = nvgpu_kmd_ioctl(k, k->nvmap_fd, NVMAP_IOC_CREATE, &cr, "NVMAP_IOC_CREATE");
    if (err) {
        st = hcq_err(nvgpu_kmd_errno_status(err), "NVMAP_IOC_CREATE %llu B: %s", (unsigned long long)size,
                     strerror(err));
        goto fail_free;
    }
    m->base.handle = cr.handle;

    /* IOVMM is the only heap that works; the tag silences the per-alloc WARN (§2.2-2.3). */
    m->nvmap_flags = ((uint32_t)NVMAP_ALLOC_TAG_NVHCQ << NVMAP_HANDLE_TAG_SHIFT) | cache;
    struct nvmap_alloc_handle al = {
        .handle = cr.handle,
        .heap_mask = NVMAP_HEAP_IOVMM,
        .flags = m->nvmap_flags,
        .align = (uint32_t)align,
        .numa_nid = 0,
    };
    if (k->l4t == NVGPU_L4T_R35) { /* 16-byte r35 struct, no numa_nid */
        struct nvmap_alloc_handle_r35 a5 = {
            .handle = al.handle, .heap_mask = al.heap_mask, .flags = al.flags, .align = al.align};
        err = nvgpu_kmd_ioctl(k, k->nvmap_fd, NVMAP_IOC_ALLOC_R35, &a5, "NVMAP_IOC_ALLOC");
    } else {
        err = nvgpu_kmd_ioctl(k, k->nvmap_fd, NVMAP_IOC_ALLOC, &al, "NVMAP_IOC_ALLOC");
    }
    if (err) {
        st = hcq_err(nvgpu_kmd_errno_status(err),
                     "NVMAP_IOC_ALLOC handle 0x%x %llu B heap IOVMM flags 0x%08x: %s", cr.handle,
                     (unsigned long long)size, m->nvmap_flags, strerror(err));
        goto fail_handle;
    }

    struct nvmap_create_handle gf = {.handle = cr.handle};
    err = nvgpu_kmd_ioctl(k, k->nvmap_fd, NVMAP_IOC_GET_FD, &gf, "NVMAP_IOC_GET_FD");
    if (err) {
        st = hcq_err(nvgpu_kmd_errno_status(err), "NVMAP_IOC_GET_FD handle 0x%x: %s", cr.handle,
                     strerror(err));
        goto fail_handle;
    }
    m->dmabuf_fd = gf.fd;

    if (gpu_map && (st = nvgpu_mem_gpu_map(k, m, fixed_va)) != HCQ_OK)
        goto fail_handle;

    /* Unified memory: every buffer is CPU-mapped through its dmabuf (never /dev/nvmap).
     * CPU and GPU addresses are kept separate (no MAP_FIXED at the GPU VA, §2.5 [REC]). */
    void *map = k->sys->mmap(k->sys->ctx, fixed_cpu, size, PROT_READ | PROT_WRITE,
                             MAP_SHARED | (fixed_cpu ? MAP_FIXED : 0), m->dmabuf_fd, 0);
    if (map == MAP_FAILED) {
        st = hcq_err(HCQ_ERR_DRIVER, "mmap dmabuf fd %d (%llu B): %s", m->dmabuf_fd, (unsigned long long)size,
                     strerror(errno));
        goto fail_handle;
    }
    m->base.map = map;
    if (link)
        nvgpu_mem_link(k, m);
    *mem_out = m;
    return HCQ_OK;

fail_handle:
    nvgpu_mem_destroy(k, m); /* undoes whatever of map/fd/handle was done */
    return st;
fail_free:
    free(m);
    return st;
}

enum hcq_status
nvgpu_mem_create(struct nvgpu_kmd *k, uint64_t size_B, uint64_t align_B, uint32_t cache, bool gpu_map,
                 struct nvgpu_mem **mem_out)
{
    return nvgpu_mem_create_at(k, size_B, align_B, cache, gpu_map, 0, NULL, true, mem_out);
}

uint64_t
nvgpu_mem_max_buf(void)
{
    /* HCQ_NVGPU_MAX_BUF_B lowers the per-buffer cap (tests; an owner chasing a large-buffer
     * problem). From 8 MiB up it is rounded down to 2 MiB so every part keeps the big-buffer
     * size and alignment (nvgpu_mem_plan); below, to 4 KiB pages (parts that small are
     * planned with 4 KiB alignment anyway). */
    const char *e = getenv("HCQ_NVGPU_MAX_BUF_B");
    uint64_t cap = NVGPU_MAX_NVMAP_BUF_B;
    if (e && *e) {
        unsigned long long v = strtoull(e, NULL, 0);
        if (v >= NVGPU_PAGE_B && v < cap)
            cap = v & ~((v >= NVGPU_BIG_ALLOC_MIN_B ? NVGPU_BIG_ALLOC_ALIGN_B : NVGPU_PAGE_B) - 1);
    }
    return cap;
}

/* A device buffer larger than one nvmap buffer: reserve the GPU VA (ALLOC_SPACE) and the
 * CPU VA (PROT_NONE anonymous), then map parts of at most the cap back to back into both,
 * so kernels and the CPU see one contiguous buffer. Weights of a 3B Q8_0 or 8B Q4_K model
 * (> 4 GiB) load this way, with no staging copy: the CPU writes straight into the parts. */
static enum hcq_status
nvgpu_mem_span_create(struct nvgpu_kmd *k, uint64_t size, uint32_t cache, uint64_t cap,
                      struct nvgpu_mem **mem_out)
{
    *mem_out = NULL;
    struct nvgpu_mem *m = calloc(1, sizeof *m);
    uint32_t n = (uint32_t)((size + cap - 1) / cap);
    if (!m || !(m->parts = calloc(n, sizeof *m->parts))) {
        free(m);
        return hcq_err(HCQ_ERR_NOMEM, "nvgpu_mem_span_create: out of host memory");
    }
    m->dmabuf_fd = -1;
    m->base.size_B = size;
    m->base.priv = m;
    enum hcq_status st;
    struct nvgpu_as_alloc_space_args sp = {.pages = size / NVGPU_PAGE_B,
                                           .page_size = NVGPU_PAGE_B,
                                           .flags = 0,
                                           .align = NVGPU_BIG_ALLOC_ALIGN_B};
    int err = nvgpu_kmd_ioctl(k, k->as_fd, NVGPU_AS_IOCTL_ALLOC_SPACE, &sp, "ALLOC_SPACE");
    if (err) {
        st = hcq_err(nvgpu_kmd_errno_status(err), "NVGPU_AS_IOCTL_ALLOC_SPACE %llu B (span): %s",
                     (unsigned long long)size, strerror(err));
        goto fail;
    }
    m->space_va = sp.offset;
    m->base.va = sp.offset;
    void *cpu = k->sys->mmap(k->sys->ctx, NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (cpu == MAP_FAILED) {
        st = hcq_err(HCQ_ERR_NOMEM, "mmap: %llu B CPU VA reservation (span): %s", (unsigned long long)size,
                     strerror(errno));
        goto fail;
    }
    m->base.map = cpu;
    for (uint64_t off = 0; off < size; off += cap) {
        uint64_t part = size - off < cap ? size - off : cap;
        uint64_t part_align = cap % NVGPU_BIG_ALLOC_ALIGN_B ? NVGPU_PAGE_B : NVGPU_BIG_ALLOC_ALIGN_B;
        st = nvgpu_mem_create_at(k, part, part_align, cache, true, m->space_va + off, (uint8_t *)cpu + off,
                                 false, &m->parts[m->n_parts]);
        if (st != HCQ_OK)
            goto fail;
        m->n_parts++;
    }
    m->gpu_mapped = false; /* the parts hold the mappings */
    nvgpu_mem_link(k, m);
    HCQ_LOG_DEBUG("nvgpu: span %llu B = %u nvmap buffers at 0x%llx", (unsigned long long)size, m->n_parts,
                  (unsigned long long)m->space_va);
    *mem_out = m;
    return HCQ_OK;
fail:
    nvgpu_mem_destroy(k, m);
    return st;
}

void
nvgpu_mem_destroy(struct nvgpu_kmd *k, struct nvgpu_mem *m)
{
    if (!m)
        return;
    nvgpu_mem_unlink(k, m);
    if (m->parts) { /* span: parts first (UNMAP_BUFFER before FREE_SPACE), then the reservations */
        for (uint32_t i = m->n_parts; i-- > 0;)
            nvgpu_mem_destroy(k, m->parts[i]);
        free(m->parts);
        m->parts = NULL;
        if (m->base.map)
            k->sys->munmap(k->sys->ctx, m->base.map, m->base.size_B);
        if (m->space_va) {
            struct nvgpu_as_free_space_args fs = {
                .offset = m->space_va, .pages = m->base.size_B / NVGPU_PAGE_B, .page_size = NVGPU_PAGE_B};
            int err = nvgpu_kmd_ioctl(k, k->as_fd, NVGPU_AS_IOCTL_FREE_SPACE, &fs, "FREE_SPACE");
            if (err)
                HCQ_LOG_WARN("nvgpu: NVGPU_AS_IOCTL_FREE_SPACE 0x%llx: %s", (unsigned long long)m->space_va,
                             strerror(err));
        }
        free(m);
        return;
    }
    /* nvgpu.md §2.1: UNMAP_BUFFER -> munmap -> close(dmabuf) -> FREE(handle by value). */
    if (m->gpu_mapped) {
        struct nvgpu_as_unmap_buffer_args u = {.offset = m->base.va};
        int err = nvgpu_kmd_ioctl(k, k->as_fd, NVGPU_AS_IOCTL_UNMAP_BUFFER, &u, "UNMAP_BUFFER");
        if (err)
            HCQ_LOG_WARN("nvgpu: NVGPU_AS_IOCTL_UNMAP_BUFFER 0x%llx: %s", (unsigned long long)m->base.va,
                         strerror(err));
        m->gpu_mapped = false;
    }
    if (m->base.map)
        k->sys->munmap(k->sys->ctx, m->base.map, m->base.size_B);
    m->base.map = NULL;
    if (m->dmabuf_fd >= 0)
        k->sys->close(k->sys->ctx, m->dmabuf_fd);
    m->dmabuf_fd = -1;
    if (m->base.handle) {
        int err = nvgpu_kmd_ioctl(k, k->nvmap_fd, NVMAP_IOC_FREE, (void *)(uintptr_t)m->base.handle,
                                  "NVMAP_IOC_FREE");
        if (err)
            HCQ_LOG_WARN("nvgpu: NVMAP_IOC_FREE handle 0x%llx: %s", (unsigned long long)m->base.handle,
                         strerror(err));
    }
    free(m);
}

/* ==== kmd_ops ==== */

enum hcq_status
nvgpu_mem_alloc(struct kmd *kmd, uint64_t size_B, uint64_t align_B, uint32_t flags, struct kmd_mem **mem_out)
{
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    *mem_out = NULL;
    /* Cache policy (§2.3): INNER_CACHEABLE (IO-coherent, 17x faster CPU reads than WC)
     * unless the engine asks for an uncached view (rings, signals): WRITE_COMBINE.
     * VRAM vs SYSMEM, CONTIG and LOW_VA need nothing here: one heap, 40-bit VAs. */
    uint32_t cache = (flags & KMD_MEM_UNCACHED) ? NVMAP_HANDLE_WRITE_COMBINE : NVMAP_HANDLE_INNER_CACHEABLE;
    struct nvgpu_mem *m;
    uint64_t plan_B, plan_align, cap = nvgpu_mem_max_buf();
    nvgpu_mem_plan(size_B, align_B, cache, &plan_B, &plan_align);
    enum hcq_status st = plan_B > cap && plan_align <= NVGPU_BIG_ALLOC_ALIGN_B
                             ? nvgpu_mem_span_create(k, plan_B, cache, cap, &m)
                             : nvgpu_mem_create(k, size_B, align_B, cache, true, &m);
    if (st != HCQ_OK)
        return st;
    m->base.flags = flags | KMD_MEM_CPU_MAP;
    *mem_out = &m->base;
    return HCQ_OK;
}

void
nvgpu_mem_free(struct kmd *kmd, struct kmd_mem *mem)
{
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    nvgpu_mem_destroy(k, hcq_container_of(mem, struct nvgpu_mem, base));
}
