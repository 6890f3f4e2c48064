/* SPDX-License-Identifier: MIT */
/*
 * emu_mem.c - emulated GPU memory: memfd-backed buffer objects (so CPU mappings alias
 * what the GPU model reads) and page-granular GPU address spaces (sorted VA ranges).
 * Layer: emu.
 */
#include "emu_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ==== Buffer objects ==== */

static int
emu_memfd(void)
{
    /* The raw syscall: memfd_create() needs glibc 2.27, the syscall is older and portable
     * to aarch64 (and qemu-user). */
    return (int)syscall(SYS_memfd_create, "emu-bo", 1u /* MFD_CLOEXEC */);
}

int
emu_bo_create(struct emu_dev *d, uint64_t size_B, struct emu_bo **bo_out)
{
    *bo_out = NULL;
    if (size_B == 0 || size_B > (1ull << 46))
        return -EINVAL;
    uint64_t sz = (size_B + EMU_PAGE_B - 1) & ~(EMU_PAGE_B - 1);
    struct emu_bo *bo = calloc(1, sizeof *bo);
    if (!bo)
        return -ENOMEM;
    bo->memfd = emu_memfd();
    if (bo->memfd < 0)
        goto fail_bo;
    /* Sparse: pages only exist once touched, so GiB-sized local-memory pools are cheap. */
    if (ftruncate(bo->memfd, (off_t)sz) < 0)
        goto fail_memfd;
    bo->host = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, bo->memfd, 0);
    if (bo->host == MAP_FAILED)
        goto fail_memfd;
    bo->dev = d;
    bo->size_B = sz;
    atomic_init(&bo->refs, 1);
    atomic_fetch_add(&emu_live_bos, 1);
    *bo_out = bo;
    return 0;

fail_memfd:;
    int e = errno;
    close(bo->memfd);
    free(bo);
    return -e;
fail_bo:
    e = errno;
    free(bo);
    return -e;
}

int
emu_bo_wrap(struct emu_dev *d, void *host, uint64_t size_B, struct emu_bo **bo_out)
{
    *bo_out = NULL;
    if (!host || size_B == 0 || ((uintptr_t)host & (EMU_PAGE_B - 1)) || (size_B & (EMU_PAGE_B - 1)))
        return -EINVAL;
    /* The kernel pins the pages (get_user_pages): unmapped ones fail. mincore() reports
     * ENOMEM for any unmapped page in the range. */
    size_t pages = (size_t)(size_B / EMU_PAGE_B);
    unsigned char *vec = malloc(pages > 0 ? pages : 1);
    if (!vec)
        return -ENOMEM;
    int r = mincore(host, (size_t)size_B, vec);
    free(vec);
    if (r < 0)
        return -EFAULT;
    struct emu_bo *bo = calloc(1, sizeof *bo);
    if (!bo)
        return -ENOMEM;
    bo->dev = d;
    bo->size_B = size_B;
    bo->memfd = -1;
    bo->host = host;
    atomic_init(&bo->refs, 1);
    atomic_fetch_add(&emu_live_bos, 1);
    *bo_out = bo;
    return 0;
}

void
emu_bo_ref(struct emu_bo *bo)
{
    atomic_fetch_add(&bo->refs, 1);
}

void
emu_bo_unref(struct emu_bo *bo)
{
    if (!bo || atomic_fetch_sub(&bo->refs, 1) != 1)
        return;
    if (bo->memfd >= 0) {
        munmap(bo->host, (size_t)bo->size_B);
        close(bo->memfd);
    }
    free(bo);
    atomic_fetch_sub(&emu_live_bos, 1);
}

uint64_t
emu_bo_size(const struct emu_bo *bo)
{
    return bo->size_B;
}

void *
emu_bo_host(const struct emu_bo *bo)
{
    return bo->host;
}

bool
emu_bo_is_wrapped(const struct emu_bo *bo)
{
    return bo->memfd < 0;
}

/* ==== Address spaces ==== */

int
emu_vm_create(struct emu_dev *d, uint32_t va_bits, struct emu_vm **vm_out)
{
    *vm_out = NULL;
    if (va_bits < 32 || va_bits > 57)
        return -EINVAL;
    struct emu_vm *vm = calloc(1, sizeof *vm);
    if (!vm)
        return -ENOMEM;
    vm->dev = d;
    vm->va_bits = va_bits;
    pthread_rwlock_init(&vm->lock, NULL);
    pthread_mutex_init(&vm->alias_lock, NULL);
    atomic_fetch_add(&emu_live_vms, 1);
    *vm_out = vm;
    return 0;
}

struct emu_vm_alias {
    uint64_t va, size_B;
    void *host;
    struct emu_vm_alias *next;
};

/* ==== Non-coherent GPU L2 model ==== */

static void emu_vm_drop_aliases(struct emu_vm *vm);
static uint32_t emu_vm_lower(const struct emu_vm *vm, uint64_t va);

/* Write back the pages of r's L2 view that differ from memory (the GPU dirtied them), then
 * drop every private page so later GPU reads see memory again. Page granularity: a CPU
 * write to a page the GPU also dirtied is overwritten, as a written-back line would be. Not
 * atomic against GPU work of another channel on the same range (the model's flush is for
 * tests that show what a missing flush does, not a cache simulator). */
static void
emu_vm_l2_writeback(const struct emu_vm_range *r)
{
    uint8_t *mem = (uint8_t *)r->bo->host + r->bo_off;
    for (uint64_t off = 0; off < r->size_B; off += EMU_PAGE_B)
        if (memcmp(r->l2 + off, mem + off, EMU_PAGE_B))
            memcpy(mem + off, r->l2 + off, EMU_PAGE_B);
    /* MADV_DONTNEED on a private file mapping: the next access reads the file again */
    madvise(r->l2, r->size_B, MADV_DONTNEED);
}

static void
emu_vm_l2_drop(struct emu_vm_range *r, bool writeback)
{
    if (!r->l2)
        return;
    if (writeback)
        emu_vm_l2_writeback(r);
    munmap(r->l2, r->size_B);
    r->l2 = NULL;
}

int
emu_vm_set_l2(struct emu_vm *vm, uint64_t va)
{
    pthread_rwlock_wrlock(&vm->lock);
    uint32_t i = emu_vm_lower(vm, va);
    int ret = 0;
    if (i == vm->count || vm->r[i].va != va) {
        ret = -ENOENT;
    } else if (vm->r[i].bo->memfd < 0) {
        ret = -EINVAL;
    } else if (!vm->r[i].l2) {
        struct emu_vm_range *r = &vm->r[i];
        void *p = mmap(NULL, r->size_B, PROT_READ | PROT_WRITE, MAP_PRIVATE, r->bo->memfd, (off_t)r->bo_off);
        if (p == MAP_FAILED)
            ret = -errno;
        else
            r->l2 = p;
    }
    pthread_rwlock_unlock(&vm->lock);
    if (ret == 0)
        emu_vm_drop_aliases(vm); /* an alias would bypass the L2 view */
    return ret;
}

void
emu_vm_l2_flush_locked(struct emu_vm *vm)
{
    for (uint32_t i = 0; i < vm->count; i++)
        if (vm->r[i].l2)
            emu_vm_l2_writeback(&vm->r[i]);
}

static void
emu_vm_drop_aliases(struct emu_vm *vm)
{
    pthread_mutex_lock(&vm->alias_lock);
    while (vm->aliases) {
        struct emu_vm_alias *a = vm->aliases;
        vm->aliases = a->next;
        munmap(a->host, a->size_B);
        free(a);
    }
    pthread_mutex_unlock(&vm->alias_lock);
}

/* A host view of [va, va+size_B) when it crosses from range i into the following
 * VA-adjacent ranges (real GPUs translate per page; the CPU twins want one pointer).
 * Read lock held. NULL if a piece is missing or not memfd-backed. */
static void *
emu_vm_alias_locked(struct emu_vm *vm, uint32_t i, uint64_t va, uint64_t size_B)
{
    uint64_t start = vm->r[i].va, end = start;
    uint32_t j = i;
    for (; j < vm->count && end < va + size_B; j++) {
        if (vm->r[j].va != end || vm->r[j].bo->memfd < 0 || vm->r[j].l2)
            return NULL; /* an L2-modelled piece would be bypassed: not aliased */
        end += vm->r[j].size_B;
    }
    if (end < va + size_B)
        return NULL;
    void *host = NULL;
    pthread_mutex_lock(&vm->alias_lock);
    for (struct emu_vm_alias *a = vm->aliases; a && !host; a = a->next)
        if (a->va == start && a->size_B == end - start)
            host = a->host;
    if (!host) {
        struct emu_vm_alias *a = calloc(1, sizeof *a);
        void *base = mmap(NULL, end - start, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        bool ok = a && base != MAP_FAILED;
        for (uint32_t k = i; ok && k < j; k++) {
            const struct emu_vm_range *r = &vm->r[k];
            ok = mmap((uint8_t *)base + (r->va - start), r->size_B, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_FIXED, r->bo->memfd, (off_t)r->bo_off) != MAP_FAILED;
        }
        if (ok) {
            *a = (struct emu_vm_alias){start, end - start, base, vm->aliases};
            vm->aliases = a;
            host = base;
        } else {
            if (base != MAP_FAILED)
                munmap(base, end - start);
            free(a);
        }
    }
    pthread_mutex_unlock(&vm->alias_lock);
    return host ? (uint8_t *)host + (va - start) : NULL;
}

void
emu_vm_destroy(struct emu_vm *vm)
{
    if (!vm)
        return;
    emu_vm_drop_aliases(vm);
    pthread_mutex_destroy(&vm->alias_lock);
    for (uint32_t i = 0; i < vm->count; i++) {
        emu_vm_l2_drop(&vm->r[i], false); /* the address space is gone: nothing to write back to */
        emu_bo_unref(vm->r[i].bo);
    }
    free(vm->r);
    pthread_rwlock_destroy(&vm->lock);
    free(vm);
    atomic_fetch_sub(&emu_live_vms, 1);
}

/* Index of the first range whose end is > va (binary search); lock held. */
static uint32_t
emu_vm_lower(const struct emu_vm *vm, uint64_t va)
{
    uint32_t lo = 0, hi = vm->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (vm->r[mid].va + vm->r[mid].size_B <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool
emu_vm_free_locked(const struct emu_vm *vm, uint64_t va, uint64_t size_B)
{
    uint32_t i = emu_vm_lower(vm, va);
    return i == vm->count || vm->r[i].va >= va + size_B;
}

int
emu_vm_map(struct emu_vm *vm, uint64_t va, uint64_t size_B, struct emu_bo *bo, uint64_t bo_off)
{
    if (size_B == 0 || ((va | size_B | bo_off) & (EMU_PAGE_B - 1)) || va + size_B < va ||
        va + size_B > (1ull << vm->va_bits) || bo_off + size_B > bo->size_B || bo_off + size_B < bo_off)
        return -EINVAL;
    pthread_rwlock_wrlock(&vm->lock);
    int ret = 0;
    if (!emu_vm_free_locked(vm, va, size_B)) {
        ret = -EEXIST;
    } else if (vm->count == vm->cap) {
        uint32_t cap = vm->cap ? vm->cap * 2 : 32;
        struct emu_vm_range *n = realloc(vm->r, cap * sizeof *n);
        if (!n)
            ret = -ENOMEM;
        else {
            vm->r = n;
            vm->cap = cap;
        }
    }
    if (ret == 0) {
        uint32_t i = emu_vm_lower(vm, va);
        memmove(&vm->r[i + 1], &vm->r[i], (vm->count - i) * sizeof *vm->r);
        vm->r[i] = (struct emu_vm_range){va, size_B, bo, bo_off, NULL};
        vm->count++;
        emu_bo_ref(bo);
    }
    pthread_rwlock_unlock(&vm->lock);
    if (ret == 0 && (hcq_debug_flags() & HCQ_DEBUG_VM))
        HCQ_LOG_DEBUG("emu vm %p: map 0x%llx..0x%llx", (void *)vm, (unsigned long long)va,
                      (unsigned long long)(va + size_B));
    return ret;
}

int
emu_vm_unmap(struct emu_vm *vm, uint64_t va, uint64_t size_B)
{
    emu_vm_drop_aliases(vm);
    pthread_rwlock_wrlock(&vm->lock);
    uint32_t i = emu_vm_lower(vm, va);
    int ret = -ENOENT;
    struct emu_bo *bo = NULL;
    if (i < vm->count && vm->r[i].va == va && (size_B == 0 || vm->r[i].size_B == size_B)) {
        bo = vm->r[i].bo;
        /* nvgpu flushes the L2 before it unmaps (r36.4.3 page_table.c,
         * nvgpu_gmmu_cache_maint_unmap): dirty lines reach memory */
        emu_vm_l2_drop(&vm->r[i], true);
        memmove(&vm->r[i], &vm->r[i + 1], (vm->count - i - 1) * sizeof *vm->r);
        vm->count--;
        ret = 0;
    }
    pthread_rwlock_unlock(&vm->lock);
    emu_bo_unref(bo);
    return ret;
}

bool
emu_vm_range_free(struct emu_vm *vm, uint64_t va, uint64_t size_B)
{
    pthread_rwlock_rdlock(&vm->lock);
    bool f = emu_vm_free_locked(vm, va, size_B ? size_B : 1);
    pthread_rwlock_unlock(&vm->lock);
    return f;
}

uint64_t
emu_vm_find_free(struct emu_vm *vm, uint64_t size_B, uint64_t align_B, uint64_t lo, uint64_t hi)
{
    if (align_B < EMU_PAGE_B)
        align_B = EMU_PAGE_B;
    size_B = (size_B + EMU_PAGE_B - 1) & ~(EMU_PAGE_B - 1);
    pthread_rwlock_rdlock(&vm->lock);
    uint64_t va = (lo + align_B - 1) & ~(align_B - 1);
    uint64_t found = 0;
    for (uint32_t i = emu_vm_lower(vm, va); va + size_B <= hi && va + size_B > va; i++) {
        if (i == vm->count || vm->r[i].va >= va + size_B) {
            found = va;
            break;
        }
        uint64_t next = (vm->r[i].va + vm->r[i].size_B + align_B - 1) & ~(align_B - 1);
        if (next > va)
            va = next;
    }
    pthread_rwlock_unlock(&vm->lock);
    return found;
}

void *
emu_mem_ptr(struct emu_vm *vm, uint64_t va, uint64_t size_B)
{
    if (size_B == 0)
        size_B = 1;
    if (va + size_B < va)
        return NULL;
    pthread_rwlock_rdlock(&vm->lock);
    void *p = NULL;
    uint32_t i = emu_vm_lower(vm, va);
    if (i < vm->count) {
        const struct emu_vm_range *r = &vm->r[i];
        if (r->va <= va && va + size_B <= r->va + r->size_B)
            p = r->l2 ? r->l2 + (va - r->va) : (uint8_t *)r->bo->host + r->bo_off + (va - r->va);
        else if (r->va <= va)
            p = emu_vm_alias_locked(vm, i, va, size_B);
    }
    pthread_rwlock_unlock(&vm->lock);
    return p;
}

uint32_t
emu_vm_count(struct emu_vm *vm)
{
    pthread_rwlock_rdlock(&vm->lock);
    uint32_t n = vm->count;
    pthread_rwlock_unlock(&vm->lock);
    return n;
}

void
emu_vm_unmap_bo(struct emu_vm *vm, struct emu_bo *bo)
{
    emu_vm_drop_aliases(vm);
    pthread_rwlock_wrlock(&vm->lock);
    uint32_t kept = 0, dropped = 0;
    for (uint32_t i = 0; i < vm->count; i++) {
        if (vm->r[i].bo == bo) {
            emu_vm_l2_drop(&vm->r[i], false); /* the memory was freed */
            dropped++;
        } else
            vm->r[kept++] = vm->r[i];
    }
    vm->count = kept;
    pthread_rwlock_unlock(&vm->lock);
    while (dropped--)
        emu_bo_unref(bo);
}

void
emu_vm_read_lock(struct emu_vm *vm)
{
    pthread_rwlock_rdlock(&vm->lock);
}

void
emu_vm_read_unlock(struct emu_vm *vm)
{
    pthread_rwlock_unlock(&vm->lock);
}

void *
emu_mem_ptr_extent(struct emu_vm *vm, uint64_t va, size_t *avail_out)
{
    pthread_rwlock_rdlock(&vm->lock);
    void *p = NULL;
    *avail_out = 0;
    uint32_t i = emu_vm_lower(vm, va);
    if (i < vm->count && vm->r[i].va <= va) {
        const struct emu_vm_range *r = &vm->r[i];
        p = r->l2 ? r->l2 + (va - r->va) : (uint8_t *)r->bo->host + r->bo_off + (va - r->va);
        *avail_out = (size_t)(r->va + r->size_B - va);
    }
    pthread_rwlock_unlock(&vm->lock);
    return p;
}
