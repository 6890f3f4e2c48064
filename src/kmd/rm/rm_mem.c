/* SPDX-License-Identifier: MIT */
/*
 * rm_mem.c - memory of the RM kernel-driver level: video memory, RM-owned and wrapped
 * system memory, host-pointer import, CPU mappings (BAR1 / sysmem pages) and GPU VA
 * mappings through UVM, plus the GPU VA allocator. Layer: kmd. docs/hw/rm.md §3.
 *
 * Every allocation follows one order and its release runs it backwards:
 *   RM memory object -> VA -> CPU mapping (at the VA) -> UVM external range ->
 *   RM_MAP_MEMORY_DMA -> UVM_MAP_EXTERNAL_ALLOCATION.
 * rm_mem_release() undoes exactly the steps whose flags are set, so every failure path
 * (and mem_free) is the same code and leaks nothing.
 */
#include "rm_priv.h"
#include "rm_status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17 uapi value (same on x86-64 and arm64); older libc */
#endif

#define RM_PAGE_B 0x1000ull
#define RM_BIG_PAGE_B 0x200000ull /* 2 MiB pages for vidmem >= 8 MiB (rm.md §3.1) */
#define RM_BIG_PAGE_MIN_B 0x800000ull

static inline uint64_t
rm_align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

/* ==== GPU VA allocator ==== */

enum hcq_status
rm_va_heap_init(struct rm_va_heap *h, uint64_t base, uint64_t size_B)
{
    memset(h, 0, sizeof *h);
    h->free = malloc(16 * sizeof *h->free);
    if (!h->free)
        return hcq_err(HCQ_ERR_NOMEM, "rm_va_heap_init: free list");
    h->cap = 16;
    h->base = base;
    h->size_B = size_B;
    h->free[0] = (struct rm_va_range){base, size_B};
    h->count = 1;
    return HCQ_OK;
}

void
rm_va_heap_fini(struct rm_va_heap *h)
{
    free(h->free);
    memset(h, 0, sizeof *h);
}

static enum hcq_status
rm_va_insert(struct rm_va_heap *h, uint32_t at, struct rm_va_range r)
{
    if (h->count == h->cap) {
        struct rm_va_range *n = realloc(h->free, 2 * h->cap * sizeof *n);
        if (!n)
            return hcq_err(HCQ_ERR_NOMEM, "rm_va: free list of %u", 2 * h->cap);
        h->free = n;
        h->cap *= 2;
    }
    memmove(&h->free[at + 1], &h->free[at], (h->count - at) * sizeof *h->free);
    h->free[at] = r;
    h->count++;
    return HCQ_OK;
}

static void
rm_va_remove(struct rm_va_heap *h, uint32_t at)
{
    memmove(&h->free[at], &h->free[at + 1], (h->count - at - 1) * sizeof *h->free);
    h->count--;
}

enum hcq_status
rm_va_alloc(struct rm_va_heap *h, uint64_t size_B, uint64_t align_B, uint64_t *va_out)
{
    assert(align_B && (align_B & (align_B - 1)) == 0);
    if (size_B == 0 || size_B > h->size_B)
        return HCQ_ERR_NOMEM;
    for (uint32_t i = 0; i < h->count; i++) {
        struct rm_va_range r = h->free[i];
        uint64_t start = rm_align_up(r.start, align_B);
        if (start < r.start || start - r.start > r.size_B || r.size_B - (start - r.start) < size_B)
            continue;
        uint64_t head = start - r.start, tail = r.size_B - head - size_B;
        if (head && tail) {
            if (rm_va_insert(h, i + 1, (struct rm_va_range){start + size_B, tail}) != HCQ_OK)
                return HCQ_ERR_NOMEM;
            h->free[i].size_B = head;
        } else if (head) {
            h->free[i].size_B = head;
        } else if (tail) {
            h->free[i] = (struct rm_va_range){start + size_B, tail};
        } else {
            rm_va_remove(h, i);
        }
        *va_out = start;
        return HCQ_OK;
    }
    return HCQ_ERR_NOMEM;
}

void
rm_va_free(struct rm_va_heap *h, uint64_t va, uint64_t size_B)
{
    uint32_t i = 0;
    while (i < h->count && h->free[i].start < va)
        i++;
    /* our own bug if the range overlaps a free one or lies outside the heap */
    assert(va >= h->base && va + size_B <= h->base + h->size_B);
    assert(i == 0 || h->free[i - 1].start + h->free[i - 1].size_B <= va);
    assert(i == h->count || va + size_B <= h->free[i].start);
    bool join_prev = i > 0 && h->free[i - 1].start + h->free[i - 1].size_B == va;
    bool join_next = i < h->count && va + size_B == h->free[i].start;
    if (join_prev && join_next) {
        h->free[i - 1].size_B += size_B + h->free[i].size_B;
        rm_va_remove(h, i);
    } else if (join_prev) {
        h->free[i - 1].size_B += size_B;
    } else if (join_next) {
        h->free[i].start = va;
        h->free[i].size_B += size_B;
    } else if (rm_va_insert(h, i, (struct rm_va_range){va, size_B}) != HCQ_OK) {
        HCQ_LOG_WARN("rm_va_free: out of memory; 0x%llx bytes of VA at 0x%llx leaked",
                     (unsigned long long)size_B, (unsigned long long)va);
    }
}

uint64_t
rm_va_heap_free_B(const struct rm_va_heap *h)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h->count; i++)
        sum += h->free[i].size_B;
    return sum;
}

/* ==== Low-region reservation ==== */

static void *
rm_reserve(struct rm_kmd *k, void *addr, uint64_t size_B, int extra_flags)
{
    return k->sys->mmap(k->sys->ctx, addr, size_B, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra_flags, -1, 0);
}

enum hcq_status
rm_mem_init(struct rm_kmd *k)
{
    /* First free 64 GiB slot of [2^36, 2^40) (rm_priv.h): MAP_FIXED_NOREPLACE refuses a
     * taken slot; kernels older than 4.17 treat it as a hint, so also check the address. */
    for (uint64_t base = RM_VA_LOW_FIRST; base + RM_VA_LOW_SLOT_B <= RM_VA_LOW_END;
         base += RM_VA_LOW_SLOT_B) {
        void *p = rm_reserve(k, (void *)(uintptr_t)base, RM_VA_LOW_SLOT_B, MAP_FIXED_NOREPLACE);
        if (p == MAP_FAILED)
            continue;
        if ((uint64_t)(uintptr_t)p != base) {
            k->sys->munmap(k->sys->ctx, p, RM_VA_LOW_SLOT_B);
            continue;
        }
        k->low_reserve = p;
        break;
    }
    /* No slot: AddressSanitizer keeps [~2^31, ~2^41) as its shadow gap on x86-64. Then
     * GPU VAs still come from below 2^40 but CPU mappings go where the kernel puts them
     * (map != va); nothing in the driver needs the two to be equal. */
    uint64_t low = k->low_reserve ? (uint64_t)(uintptr_t)k->low_reserve : RM_VA_LOW_FIRST;
    if (!k->low_reserve)
        HCQ_LOG_DEBUG("rm: [2^36, 2^40) is taken in this process; CPU mappings will differ from GPU VAs");
    enum hcq_status st = rm_va_heap_init(&k->va_low, low, RM_VA_LOW_SLOT_B);
    if (st == HCQ_OK)
        st = rm_va_heap_init(&k->va_high, RM_VA_HIGH_BASE, RM_VA_HIGH_END - RM_VA_HIGH_BASE);
    return st;
}

/* Where the CPU mapping of GPU VA `va` goes: the same address inside our reservation
 * (MAP_FIXED over it), or anywhere when there is no reservation. */
static void *
rm_cpu_addr(struct rm_kmd *k, uint64_t va, int *flags_out)
{
    uint64_t lo = (uint64_t)(uintptr_t)k->low_reserve;
    bool inside = k->low_reserve && va >= lo && va < lo + RM_VA_LOW_SLOT_B;
    *flags_out = inside ? MAP_FIXED : 0;
    return inside ? (void *)(uintptr_t)va : NULL;
}

/* Drop a CPU mapping: put the reservation back when it sits inside it (mapping it over
 * the range replaces the pages in one step, so no other mmap can land there), else unmap. */
static void
rm_cpu_release(struct rm_kmd *k, void *map, uint64_t size_B)
{
    uint64_t lo = (uint64_t)(uintptr_t)k->low_reserve, p = (uint64_t)(uintptr_t)map;
    if (k->low_reserve && p >= lo && p < lo + RM_VA_LOW_SLOT_B) {
        if (rm_reserve(k, map, size_B, MAP_FIXED) == MAP_FAILED)
            HCQ_LOG_WARN("rm: re-reserving %p (0x%llx bytes) failed: %s", map, (unsigned long long)size_B,
                         strerror(errno));
    } else if (k->sys->munmap(k->sys->ctx, map, size_B) != 0) {
        HCQ_LOG_WARN("rm: munmap %p (0x%llx bytes): %s", map, (unsigned long long)size_B, strerror(errno));
    }
}

void
rm_mem_fini(struct rm_kmd *k)
{
    rm_va_heap_fini(&k->va_high);
    rm_va_heap_fini(&k->va_low);
    if (k->low_reserve)
        k->sys->munmap(k->sys->ctx, k->low_reserve, RM_VA_LOW_SLOT_B);
    k->low_reserve = NULL;
}

/* ==== CPU mapping (rm.md §3.4) ==== */

enum hcq_status
rm_mem_cpu_map(struct rm_kmd *k, uint32_t hmem, uint64_t size_B, uint64_t va, bool via_ctl, void **map_out,
               uint64_t *cookie_out)
{
    const char *path = via_ctl ? "/dev/nvidiactl" : k->dev_path;
    int fd = k->sys->open(k->sys->ctx, path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return hcq_err(HCQ_ERR_IO, "rm: open %s for a CPU mapping: %s", path, strerror(errno));
    enum hcq_status st = HCQ_OK;
    if (!via_ctl) {
        nv_ioctl_register_fd_t reg = {.ctl_fd = k->fd_ctl};
        st = rm_ioctl(k, fd, NV_ESC_IOWR(NV_ESC_REGISTER_FD, sizeof reg), &reg, "NV_ESC_REGISTER_FD");
    }
    nv_ioctl_nvos33_parameters_with_fd m = {
        .params = {.hClient = k->hclient, .hDevice = k->hdevice, .hMemory = hmem, .length = size_B},
        .fd = fd,
    };
    if (st == HCQ_OK)
        st = rm_ioctl(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_MAP_MEMORY, sizeof m), &m, "NV_ESC_RM_MAP_MEMORY");
    if (st == HCQ_OK && m.params.status != 0)
        st = hcq_err(HCQ_ERR_DRIVER, "NV_ESC_RM_MAP_MEMORY hMemory 0x%x (0x%llx bytes): %s (0x%x)", hmem,
                     (unsigned long long)size_B, rm_status_name(m.params.status), m.params.status);
    if (st == HCQ_OK) {
        int fixed;
        void *want = rm_cpu_addr(k, va, &fixed);
        void *p = k->sys->mmap(k->sys->ctx, want, size_B, PROT_READ | PROT_WRITE, MAP_SHARED | fixed, fd, 0);
        if (p == MAP_FAILED || (want && p != want)) {
            st = hcq_err(HCQ_ERR_DRIVER, "rm: mmap of hMemory 0x%x at %p (0x%llx bytes): %s", hmem, want,
                         (unsigned long long)size_B, p == MAP_FAILED ? strerror(errno) : "moved");
            if (want) /* a failed MAP_FIXED may have dropped part of the reservation */
                rm_reserve(k, want, size_B, MAP_FIXED);
            else if (p != MAP_FAILED)
                k->sys->munmap(k->sys->ctx, p, size_B);
            NVOS34_PARAMETERS um = {.hClient = k->hclient,
                                    .hDevice = k->hdevice,
                                    .hMemory = hmem,
                                    .pLinearAddress = m.params.pLinearAddress};
            if (rm_ioctl_raw(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_UNMAP_MEMORY, sizeof um), &um,
                             "NV_ESC_RM_UNMAP_MEMORY", &um.status) < 0)
                HCQ_LOG_DEBUG("rm: NV_ESC_RM_UNMAP_MEMORY after a failed mmap: %s", strerror(errno));
        } else {
            *map_out = p;
            *cookie_out = m.params.pLinearAddress;
        }
    }
    /* RM bound its mapping context to this file; the mapping keeps the file alive. */
    k->sys->close(k->sys->ctx, fd);
    return st;
}

void
rm_mem_cpu_unmap(struct rm_kmd *k, uint32_t hmem, uint64_t size_B, void *map, uint64_t cookie)
{
    rm_cpu_release(k, map, size_B);
    NVOS34_PARAMETERS um = {
        .hClient = k->hclient, .hDevice = k->hdevice, .hMemory = hmem, .pLinearAddress = cookie};
    if (rm_ioctl_raw(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_UNMAP_MEMORY, sizeof um), &um,
                     "NV_ESC_RM_UNMAP_MEMORY", &um.status) < 0 ||
        um.status)
        HCQ_LOG_DEBUG("rm: NV_ESC_RM_UNMAP_MEMORY hMemory 0x%x: %s", hmem, rm_status_name(um.status));
}

/* ==== GPU mapping (rm.md §3.5) ==== */

/* Whether to map into RM's virtmem object too (NV_ESC_RM_MAP_MEMORY_DMA, step 2 of rm.md §3.5),
 * next to UVM's mapping of the same range: not for GPU-only device memory. The GPU reaches device
 * memory through UVM's mapping; RM's, with its 4 KiB PTEs (RM_MAP_DMA_FLAGS: tinygrad's 0x8110;
 * RM's own page-size choice failed every LLM test on H100), was most of a cold device
 * allocation's time (H100: 4.9 of 7.0 ms for 256 MiB, 1.8 ms more to unmap); without it cold
 * 1 / 16 / 256 MiB alloc + free took 127 / 427 / 5791 -> 80 / 71 / 217 us (CUDA 100 / 118 /
 * 486), the HCQ suite and decode unchanged. Host memory and what the CPU maps or must sit below
 * 2^40 (rings, USERD, pushbuffers, signals) keep the RM mapping, as RM itself may look those
 * ranges up. */

/* Step 2 of rm.md §3.5: the same range in RM's virtmem object (NV_ESC_RM_MAP_MEMORY_DMA). */
static enum hcq_status
rm_mem_dma_map(struct rm_kmd *k, struct rm_mem *m)
{
    uint64_t va = m->base.va;
    NVOS46_PARAMETERS d = {.hClient = k->hclient,
                           .hDevice = k->hdevice,
                           .hDma = k->hvirtmem,
                           .hMemory = m->hmem,
                           .length = m->base.size_B,
                           .flags = RM_MAP_DMA_FLAGS,
                           .dmaOffset = va};
    enum hcq_status st = rm_ioctl(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_MAP_MEMORY_DMA, sizeof d), &d,
                                  "NV_ESC_RM_MAP_MEMORY_DMA");
    if (st != HCQ_OK)
        return st;
    if (d.status != 0)
        return hcq_err(HCQ_ERR_DRIVER, "NV_ESC_RM_MAP_MEMORY_DMA hMemory 0x%x at 0x%llx: %s (0x%x)", m->hmem,
                       (unsigned long long)va, rm_status_name(d.status), d.status);
    m->dma_mapped = true;
    if (d.dmaOffset != va)
        return hcq_err(HCQ_ERR_DRIVER,
                       "NV_ESC_RM_MAP_MEMORY_DMA hMemory 0x%x: dmaOffset 0x%llx (expected 0x%llx)", m->hmem,
                       (unsigned long long)d.dmaOffset, (unsigned long long)va);
    return HCQ_OK;
}

static enum hcq_status
rm_mem_gpu_map(struct rm_kmd *k, struct rm_mem *m)
{
    uint64_t va = m->base.va, size = m->base.size_B;
    UVM_CREATE_EXTERNAL_RANGE_PARAMS r = {.base = va, .length = size};
    enum hcq_status st =
        rm_uvm(k, k->fd_uvm, UVM_CREATE_EXTERNAL_RANGE, &r, &r.rmStatus, "UVM_CREATE_EXTERNAL_RANGE");
    if (st != HCQ_OK)
        return st;
    m->uvm_range = true;
    const bool gpu_only = !(m->base.flags & (KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA));
    if (!gpu_only && (st = rm_mem_dma_map(k, m)) != HCQ_OK)
        return st;

    UVM_MAP_EXTERNAL_ALLOCATION_PARAMS *x = calloc(1, sizeof *x);
    if (!x)
        return hcq_err(HCQ_ERR_NOMEM, "rm: UVM_MAP_EXTERNAL_ALLOCATION params");
    x->base = va;
    x->length = size;
    memcpy(x->perGpuAttributes[0].gpuUuid, k->uuid, sizeof k->uuid);
    x->perGpuAttributes[0].gpuMappingType = UVM_GPU_MAPPING_TYPE_READ_WRITE_ATOMIC;
    x->gpuAttributesCount = 1;
    x->rmCtrlFd = k->fd_ctl;
    x->hClient = k->hclient;
    x->hMemory = m->hmem;
    st = rm_uvm(k, k->fd_uvm, UVM_MAP_EXTERNAL_ALLOCATION, x, &x->rmStatus, "UVM_MAP_EXTERNAL_ALLOCATION");
    free(x);
    if (st == HCQ_OK && (hcq_debug_flags() & HCQ_DEBUG_VM))
        HCQ_LOG_DEBUG("rm: map hMemory 0x%x at GPU VA 0x%llx (0x%llx bytes)", m->hmem, (unsigned long long)va,
                      (unsigned long long)size);
    return st;
}

/* Undo whatever of rm_mem's steps are done, in reverse order, and free m. */
void
rm_mem_release(struct rm_kmd *k, struct rm_mem *m)
{
    uint64_t va = m->base.va, size = m->base.size_B;
    if (m->uvm_range) {
        UVM_FREE_PARAMS f = {.base = va, .length = size};
        if (rm_uvm(k, k->fd_uvm, UVM_FREE, &f, &f.rmStatus, "UVM_FREE") != HCQ_OK)
            HCQ_LOG_WARN("rm: UVM_FREE 0x%llx failed (range leaked)", (unsigned long long)va);
    }
    if (m->dma_mapped) {
        NVOS47_PARAMETERS u = {.hClient = k->hclient,
                               .hDevice = k->hdevice,
                               .hDma = k->hvirtmem,
                               .hMemory = m->hmem,
                               .dmaOffset = va,
                               .size = size};
        const int rc = rm_ioctl_raw(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_UNMAP_MEMORY_DMA, sizeof u), &u,
                                    "NV_ESC_RM_UNMAP_MEMORY_DMA", &u.status);
        if (rc < 0 || u.status != 0)
            HCQ_LOG_WARN("rm: NV_ESC_RM_UNMAP_MEMORY_DMA hMemory 0x%x: %s (0x%x)", m->hmem,
                         rm_status_name(u.status), u.status);
    }
    if (m->cpu_map_rm)
        rm_mem_cpu_unmap(k, m->hmem, size, m->base.map, m->cpu_cookie);
    else if (m->cpu_map_own)
        rm_cpu_release(k, m->base.map, size);
    if (m->hmem)
        rm_free(k, k->hdevice, m->hmem);
    if (m->heap) {
        pthread_mutex_lock(&k->lock);
        rm_va_free(m->heap, va, size);
        pthread_mutex_unlock(&k->lock);
    }
    free(m);
}

/* VA for m from the low heap (CPU-visible or below 2^40) or the high one. */
enum hcq_status
rm_mem_va(struct rm_kmd *k, struct rm_mem *m, bool low, uint64_t align_B)
{
    pthread_mutex_lock(&k->lock);
    struct rm_va_heap *h = low ? &k->va_low : &k->va_high;
    enum hcq_status st = rm_va_alloc(h, m->base.size_B, align_B, &m->base.va);
    pthread_mutex_unlock(&k->lock);
    if (st != HCQ_OK)
        return hcq_err(HCQ_ERR_NOMEM, "rm: no GPU VA for 0x%llx bytes (align 0x%llx) in the %s region",
                       (unsigned long long)m->base.size_B, (unsigned long long)align_B,
                       low ? "low (< 2^40)" : "high");
    m->heap = h;
    return HCQ_OK;
}

void
rm_mem_publish(struct rm_kmd *k, struct rm_mem *m)
{
    if (m->base.map && (hcq_debug_flags() & (HCQ_DEBUG_TRASH_MEM | HCQ_DEBUG_ZERO_MEM)))
        memset(m->base.map, (hcq_debug_flags() & HCQ_DEBUG_TRASH_MEM) ? 0xAB : 0, m->base.size_B);
    m->base.handle = m->hmem;
    m->base.priv = m;
    pthread_mutex_lock(&k->lock);
    m->next = k->mems;
    if (k->mems)
        k->mems->prev = m;
    k->mems = m;
    pthread_mutex_unlock(&k->lock);
}

/* RM-allocated memory: vidmem (rm.md §3.1) or RM sysmem (§3.2). */
static enum hcq_status
rm_mem_alloc_rm(struct rm_kmd *k, uint64_t size_B, uint64_t align_B, uint32_t flags, bool sysmem,
                bool gpu_map, struct rm_mem **out)
{
    uint64_t page = (!sysmem && size_B >= RM_BIG_PAGE_MIN_B) ? RM_BIG_PAGE_B : RM_PAGE_B;
    uint64_t size = rm_align_up(size_B, page), align = align_B > page ? align_B : page;
    bool contig = flags & KMD_MEM_CONTIG;
    struct rm_mem *m = calloc(1, sizeof *m);
    if (!m)
        return hcq_err(HCQ_ERR_NOMEM, "rm: mem object");
    m->kind = sysmem ? RM_MEM_SYSMEM_RM : RM_MEM_VIDMEM;
    m->base.size_B = size;
    m->base.flags = flags;
    NV_MEMORY_ALLOCATION_PARAMS p = {
        .owner = k->hclient,
        .type = sysmem ? NVOS32_TYPE_NOTIFIER : NVOS32_TYPE_IMAGE,
        .flags = sysmem ? RM_MEM_FLAGS_SYSMEM : RM_MEM_FLAGS_VIDMEM,
        .attr = ((contig ? NVOS32_ATTR_PHYSICALITY_CONTIGUOUS : NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS)
                 << NVOS32_ATTR_PHYSICALITY_SHIFT) |
                (page > RM_PAGE_B ? NVOS32_ATTR_PAGE_SIZE_HUGE << NVOS32_ATTR_PAGE_SIZE_SHIFT : 0) |
                (sysmem ? NVOS32_ATTR_LOCATION_PCI << NVOS32_ATTR_LOCATION_SHIFT : 0),
        .attr2 =
            NVOS32_ATTR2_ZBC_PREFER_NO_ZBC |
            ((sysmem ? NVOS32_ATTR2_GPU_CACHEABLE_NO : NVOS32_ATTR2_GPU_CACHEABLE_YES)
             << NVOS32_ATTR2_GPU_CACHEABLE_SHIFT) |
            (page > RM_PAGE_B ? NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB << NVOS32_ATTR2_PAGE_SIZE_HUGE_SHIFT : 0),
        .format = RM_MEM_FORMAT,
        .size = size,
        .alignment = page,
        .limit = size - 1,
    };
    enum hcq_status st =
        rm_alloc(k, k->hdevice, sysmem ? NV1_MEMORY_SYSTEM : NV1_MEMORY_USER, &p, sizeof p, &m->hmem);
    if (st != HCQ_OK)
        goto fail;
    bool cpu = flags & KMD_MEM_CPU_MAP;
    if ((st = rm_mem_va(k, m, cpu || (flags & KMD_MEM_LOW_VA), align)) != HCQ_OK)
        goto fail;
    if (cpu) {
        if ((st = rm_mem_cpu_map(k, m->hmem, size, m->base.va, sysmem, &m->base.map, &m->cpu_cookie)) !=
            HCQ_OK)
            goto fail;
        m->cpu_map_rm = true;
    }
    if (gpu_map && (st = rm_mem_gpu_map(k, m)) != HCQ_OK)
        goto fail;
    *out = m;
    return HCQ_OK;
fail:
    rm_mem_release(k, m);
    return st;
}

/* System memory the CPU sees at the VA itself: our anonymous pages, wrapped by RM as an OS
 * descriptor (rm.md §3.3; tinygrad's host allocations, signals included). */
static enum hcq_status
rm_mem_wrap(struct rm_kmd *k, void *ptr, uint64_t size, uint32_t flags, struct rm_mem *m)
{
    pthread_mutex_lock(&k->lock);
    uint32_t h = k->next_handle++;
    pthread_mutex_unlock(&k->lock);
    nv_ioctl_nvos02_parameters_with_fd a = {
        .params = {.hRoot = k->hclient,
                   .hObjectParent = k->hdevice,
                   .hObjectNew = h,
                   .hClass = NV01_MEMORY_SYSTEM_OS_DESCRIPTOR,
                   .flags = RM_OSDESC_FLAGS,
                   .pMemory = rm_p64(ptr),
                   .limit = size - 1},
        .fd = -1,
    };
    (void)flags;
    enum hcq_status st =
        rm_ioctl(k, k->fd_dev, NV_ESC_IOWR(NV_ESC_RM_ALLOC_MEMORY, sizeof a), &a, "NV_ESC_RM_ALLOC_MEMORY");
    if (st != HCQ_OK)
        return st;
    if (a.params.status != 0)
        return hcq_err(HCQ_ERR_DRIVER,
                       "NV_ESC_RM_ALLOC_MEMORY class %s (0x%x) at %p (0x%llx bytes): %s (0x%x)",
                       rm_class_name(NV01_MEMORY_SYSTEM_OS_DESCRIPTOR), NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, ptr,
                       (unsigned long long)size, rm_status_name(a.params.status), a.params.status);
    m->hmem = a.params.hObjectNew ? a.params.hObjectNew : h;
    atomic_fetch_add(&k->objects, 1);
    return HCQ_OK;
}

/* Pinned host memory: anonymous private pages, MADV_DONTFORK so a child's copy-on-write cannot
 * move a pinned page, and MADV_HUGEPAGE with 2 MiB alignment from 2 MiB up - one fault and one
 * zeroing per 2 MiB instead of 512 where the kernel's THP mode is madvise or always. Pinned host
 * memory is pinning-bound; H100 (THP madvise, shmem THP never), 16 / 256 MiB fresh: 6.4 / 97 ms
 * with shared anonymous pages, 5.1 / 82 private, 3.8 / 46 with the huge-page advice (CUDA 7.0 /
 * 98). A forked child does not inherit these buffers (CUDA's are unusable there too). */
static enum hcq_status
rm_mem_alloc_host(struct rm_kmd *k, uint64_t size_B, uint64_t align_B, uint32_t flags, struct rm_mem **out)
{
    uint64_t size = rm_align_up(size_B, RM_PAGE_B), align = align_B > RM_PAGE_B ? align_B : RM_PAGE_B;
    if (size >= RM_BIG_PAGE_B && align < RM_BIG_PAGE_B)
        align = RM_BIG_PAGE_B; /* THP needs 2 MiB-aligned ranges; a tail stays in 4 KiB pages */
    struct rm_mem *m = calloc(1, sizeof *m);
    if (!m)
        return hcq_err(HCQ_ERR_NOMEM, "rm: mem object");
    m->kind = RM_MEM_OSDESC_ANON;
    m->base.size_B = size;
    m->base.flags = flags;
    enum hcq_status st = rm_mem_va(k, m, true, align);
    if (st != HCQ_OK)
        goto fail;
    int fixed;
    void *want = rm_cpu_addr(k, m->base.va, &fixed);
    void *p = k->sys->mmap(k->sys->ctx, want, size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
    if (p == MAP_FAILED || (want && p != want)) {
        st = hcq_err(HCQ_ERR_NOMEM, "rm: anonymous mmap at %p (0x%llx bytes): %s", want,
                     (unsigned long long)size, p == MAP_FAILED ? strerror(errno) : "moved");
        if (want) /* restore the reservation whatever happened */
            rm_reserve(k, want, size, MAP_FIXED);
        else if (p != MAP_FAILED)
            k->sys->munmap(k->sys->ctx, p, size);
        goto fail;
    }
    m->cpu_map_own = true;
    m->base.map = p;
    if (k->sys->madvise) {
        /* advice only: where the kernel refuses it the memory still works */
        if (k->sys->madvise(k->sys->ctx, p, size, MADV_DONTFORK) != 0)
            HCQ_LOG_DEBUG("rm: MADV_DONTFORK on %p: %s", p, strerror(errno));
        if (size >= RM_BIG_PAGE_B && k->sys->madvise(k->sys->ctx, p, size, MADV_HUGEPAGE) != 0)
            HCQ_LOG_DEBUG("rm: MADV_HUGEPAGE on %p: %s", p, strerror(errno));
    }
    if ((st = rm_mem_wrap(k, p, size, flags, m)) != HCQ_OK)
        goto fail;
    if ((st = rm_mem_gpu_map(k, m)) != HCQ_OK)
        goto fail;
    *out = m;
    return HCQ_OK;
fail:
    rm_mem_release(k, m);
    return st;
}

/* ==== kmd ops ==== */

enum hcq_status
rm_mem_alloc(struct kmd *kmd, uint64_t size_B, uint64_t align_B, uint32_t flags, struct kmd_mem **mem_out)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    *mem_out = NULL;
    if (size_B == 0 || size_B > (1ull << 40) || (align_B & (align_B - 1)) != 0 || align_B > (1ull << 32))
        return hcq_err(HCQ_ERR_INVALID,
                       "rm_mem_alloc: size 0x%llx align 0x%llx (expected size 1..2^40, align a "
                       "power of two <= 2^32)",
                       (unsigned long long)size_B, (unsigned long long)align_B);
    struct rm_mem *m = NULL;
    enum hcq_status st;
    if ((flags & KMD_MEM_SYSMEM) && (flags & KMD_MEM_CPU_MAP))
        st = rm_mem_alloc_host(k, size_B, align_B, flags, &m);
    else
        st = rm_mem_alloc_rm(k, size_B, align_B, flags, flags & KMD_MEM_SYSMEM, true, &m);
    if (st != HCQ_OK)
        return st;
    rm_mem_publish(k, m);
    *mem_out = &m->base;
    return HCQ_OK;
}

enum hcq_status
rm_mem_alloc_notifier(struct rm_kmd *k, uint64_t size_B, struct rm_mem **mem_out)
{
    struct rm_mem *m = NULL;
    enum hcq_status st = rm_mem_alloc_rm(k, size_B, 0, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP, true, false, &m);
    if (st != HCQ_OK)
        return st;
    memset(m->base.map, 0, m->base.size_B);
    rm_mem_publish(k, m);
    *mem_out = m;
    return HCQ_OK;
}

enum hcq_status
rm_mem_import_host(struct kmd *kmd, void *ptr, uint64_t size_B, struct kmd_mem **mem_out)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    *mem_out = NULL;
    if (!ptr || ((uintptr_t)ptr & (RM_PAGE_B - 1)) || size_B == 0 || size_B > (1ull << 40))
        return hcq_err(HCQ_ERR_INVALID,
                       "rm_mem_import_host: %p, 0x%llx bytes (expected a page-aligned pointer, "
                       "size 1..2^40)",
                       ptr, (unsigned long long)size_B);
    struct rm_mem *m = calloc(1, sizeof *m);
    if (!m)
        return hcq_err(HCQ_ERR_NOMEM, "rm: mem object");
    m->kind = RM_MEM_OSDESC_USER;
    m->base.size_B = rm_align_up(size_B, RM_PAGE_B);
    m->base.flags = KMD_MEM_SYSMEM;
    m->base.map = ptr;
    /* small imports get a VA below 2^40 so they can also hold signals or pushbuffers */
    enum hcq_status st = rm_mem_va(k, m, m->base.size_B <= (1ull << 32), RM_PAGE_B);
    if (st == HCQ_OK)
        st = rm_mem_wrap(k, ptr, m->base.size_B, 0, m);
    if (st == HCQ_OK)
        st = rm_mem_gpu_map(k, m);
    if (st != HCQ_OK) {
        rm_mem_release(k, m);
        return st;
    }
    rm_mem_publish(k, m);
    *mem_out = &m->base;
    return HCQ_OK;
}

void
rm_mem_free(struct kmd *kmd, struct kmd_mem *mem)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    struct rm_mem *m = mem->priv;
    assert(m && &m->base == mem);
    pthread_mutex_lock(&k->lock);
    if (m->prev)
        m->prev->next = m->next;
    else
        k->mems = m->next;
    if (m->next)
        m->next->prev = m->prev;
    pthread_mutex_unlock(&k->lock);
    rm_mem_release(k, m);
}
