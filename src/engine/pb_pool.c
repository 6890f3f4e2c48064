/* SPDX-License-Identifier: MIT */
/*
 * pb_pool.c - the caching pool behind hcq_buf_alloc/free on rm, nvgpu and emu. Layer: hcq.
 *
 * A kernel-driver allocation is slow (RM: memory object, VA range, DMA map, UVM external
 * range, for host memory the pinning of every page: 0.1-8 ms on H100), while an engine
 * that allocates per step needs it in microseconds. So hcq_buf_free keeps the driver block
 * and the next allocation of the same kind and size class gets it back, as CUDA's
 * stream-ordered allocator does with its pools:
 *   - kinds: device memory, CPU-mapped device memory, pinned host memory (a block never
 *     changes kind: its mapping and placement differ);
 *   - size classes: 4 KiB, then powers of two up to 1 MiB, then four per octave (waste
 *     <= 25%), rounded to 64 KiB, and to 2 MiB from 8 MiB on (RM's large-page size there);
 *   - the cache holds at most cap bytes per side (device, host); a free past the cap gives
 *     the block back at once;
 *   - an allocation the driver refuses for lack of memory empties the cache and tries
 *     again, then tries the exact size (no rounding, not cached) before it fails with
 *     HCQ_ERR_NOMEM;
 *   - hcq_device_mem_trim and device close empty it.
 * Reuse has the same rule as a free: the caller frees a buffer only after the GPU work
 * using it completed (hcq_buf_free never waited; a cached block is no different from
 * memory the driver would hand out again).
 */
#include "pb.h"
#include "util_env.h"

#include <stdlib.h>
#include <string.h>

/* Blocks kept per kind at most (bounds the class search, which is linear). */
#define PB_POOL_MAX_BLOCKS 512u

struct pb_block {
    struct pb_block *next; /* in the kind's cache list */
    struct kmd_mem *mem;
    uint64_t class_B; /* 0: exact-size block, never cached */
    uint32_t kind;
};

struct kmd_mem *
pb_block_mem(struct pb_block *b)
{
    return b->mem;
}

static uint64_t
pb_pool_class(uint64_t size_B)
{
    if (size_B <= 4096)
        return 4096;
    if (size_B <= (1ull << 20)) {
        uint64_t c = 4096;
        while (c < size_B)
            c <<= 1;
        return c;
    }
    uint64_t top = 1ull << (63 - __builtin_clzll(size_B));
    uint64_t step = top / 4;
    uint64_t c = (size_B + step - 1) / step * step;
    uint64_t gran = c >= (8ull << 20) ? (2ull << 20) : (64ull << 10);
    return (c + gran - 1) / gran * gran;
}

static uint32_t
pb_pool_kind_flags(uint32_t kind)
{
    switch (kind) {
    case PB_POOL_HOST:
        /* Host buffers hold signals and staging data: the GPU's semaphores reach them with
         * 40-bit addresses on Ampere (rm.md §8.2), so they live low. */
        return KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA;
    case PB_POOL_MAPPED:
        return KMD_MEM_VRAM | KMD_MEM_CPU_MAP;
    default:
        return KMD_MEM_VRAM;
    }
}

static struct pb_pool_side *
pb_pool_side(struct pb_pool *p, uint32_t kind)
{
    return kind == PB_POOL_HOST ? &p->host : &p->device;
}

void
pb_pool_init(struct pb_pool *p, uint64_t device_mem_B)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    const char *cap = getenv("HCQ_POOL_MAX_MB");
    p->enabled = util_env_on("HCQ_POOL");
    uint64_t dev_cap = device_mem_B ? device_mem_B / 8 : (1ull << 30);
    uint64_t host_cap = 1ull << 30;
    if (cap && *cap)
        dev_cap = host_cap = strtoull(cap, NULL, 0) << 20;
    p->device.st.cap_B = p->enabled ? dev_cap : 0;
    p->host.st.cap_B = p->enabled ? host_cap : 0;
}

/* Unlink every cached block (caller holds the lock); returns them as a list. */
static struct pb_block *
pb_pool_take_all(struct pb_pool *p)
{
    struct pb_block *all = NULL;
    for (uint32_t k = 0; k < PB_POOL_KINDS; k++) {
        while (p->cache[k]) {
            struct pb_block *b = p->cache[k];
            p->cache[k] = b->next;
            b->next = all;
            all = b;
        }
        p->cache_count[k] = 0;
    }
    if (all || p->device.st.cached_B || p->host.st.cached_B) {
        p->device.st.trims++;
        p->host.st.trims++;
    }
    return all;
}

uint64_t
pb_pool_trim(struct pb_dev *pd)
{
    struct pb_pool *p = &pd->pool_mem;
    pthread_mutex_lock(&p->lock);
    struct pb_block *all = pb_pool_take_all(p);
    uint64_t freed = 0;
    for (struct pb_block *b = all; b; b = b->next) {
        struct pb_pool_side *s = pb_pool_side(p, b->kind);
        s->st.cached_B -= b->class_B;
        s->st.reserved_B -= b->class_B;
        s->st.cached_blocks--;
        s->st.driver_frees++;
        freed += b->class_B;
    }
    pthread_mutex_unlock(&p->lock);
    /* driver calls outside the lock: they take milliseconds */
    while (all) {
        struct pb_block *b = all;
        all = b->next;
        kmd_mem_free(pd->kmd, b->mem);
        free(b);
    }
    return freed;
}

static bool
pb_pool_oom(enum hcq_status st)
{
    return st == HCQ_ERR_NOMEM;
}

enum hcq_status
pb_pool_alloc(struct pb_dev *pd, uint32_t kind, uint64_t size_B, struct pb_block **out,
              struct kmd_mem **mem_out)
{
    struct pb_pool *p = &pd->pool_mem;
    struct pb_pool_side *s = pb_pool_side(p, kind);
    uint64_t class_B = p->enabled ? pb_pool_class(size_B) : 0;
    if (class_B) {
        pthread_mutex_lock(&p->lock);
        for (struct pb_block **pp = &p->cache[kind]; *pp; pp = &(*pp)->next) {
            struct pb_block *b = *pp;
            if (b->class_B != class_B)
                continue;
            *pp = b->next;
            b->next = NULL;
            p->cache_count[kind]--;
            s->st.cached_B -= class_B;
            s->st.cached_blocks--;
            s->st.hits++;
            pthread_mutex_unlock(&p->lock);
            *out = b;
            *mem_out = b->mem;
            return HCQ_OK;
        }
        pthread_mutex_unlock(&p->lock);
    }
    struct pb_block *b = calloc(1, sizeof *b);
    if (!b)
        return hcq_err(HCQ_ERR_NOMEM, "buf_alloc: pool block");
    uint32_t flags = pb_pool_kind_flags(kind);
    struct kmd_mem *mem = NULL;
    enum hcq_status st = kmd_mem_alloc(pd->kmd, class_B ? class_B : size_B, 0, flags, &mem);
    if (pb_pool_oom(st) && pb_pool_trim(pd) > 0)
        st = kmd_mem_alloc(pd->kmd, class_B ? class_B : size_B, 0, flags, &mem);
    if (pb_pool_oom(st) && class_B > size_B) {
        /* the rounding itself may not fit: the exact size, given back at free */
        class_B = 0;
        st = kmd_mem_alloc(pd->kmd, size_B, 0, flags, &mem);
    }
    if (st != HCQ_OK) {
        free(b);
        return st;
    }
    if ((flags & KMD_MEM_CPU_MAP) && !mem->map) {
        kmd_mem_free(pd->kmd, mem);
        free(b);
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "buf_alloc: %s buffer of 0x%llx bytes came back without a CPU mapping",
                       kind == PB_POOL_HOST ? "host" : "mappable", (unsigned long long)size_B);
    }
    b->mem = mem;
    b->class_B = class_B;
    b->kind = kind;
    pthread_mutex_lock(&p->lock);
    s->st.driver_allocs++;
    s->st.reserved_B += class_B ? class_B : mem->size_B;
    if (s->st.reserved_B > s->st.peak_reserved_B)
        s->st.peak_reserved_B = s->st.reserved_B;
    pthread_mutex_unlock(&p->lock);
    *out = b;
    *mem_out = mem;
    return HCQ_OK;
}

void
pb_pool_free(struct pb_dev *pd, struct pb_block *b)
{
    struct pb_pool *p = &pd->pool_mem;
    struct pb_pool_side *s = pb_pool_side(p, b->kind);
    pthread_mutex_lock(&p->lock);
    bool keep = b->class_B && s->st.cached_B + b->class_B <= s->st.cap_B &&
                p->cache_count[b->kind] < PB_POOL_MAX_BLOCKS && !atomic_load(&pd->base.lost);
    if (keep) {
        b->next = p->cache[b->kind];
        p->cache[b->kind] = b;
        p->cache_count[b->kind]++;
        s->st.cached_B += b->class_B;
        s->st.cached_blocks++;
    } else {
        s->st.reserved_B -= b->class_B ? b->class_B : b->mem->size_B;
        s->st.driver_frees++;
    }
    pthread_mutex_unlock(&p->lock);
    if (!keep) {
        kmd_mem_free(pd->kmd, b->mem);
        free(b);
    }
}

void
pb_pool_stats(struct pb_dev *pd, struct hcq_mem_stats *out)
{
    struct pb_pool *p = &pd->pool_mem;
    pthread_mutex_lock(&p->lock);
    out->device = p->device.st;
    out->host = p->host.st;
    pthread_mutex_unlock(&p->lock);
}

void
pb_pool_destroy(struct pb_dev *pd)
{
    pb_pool_trim(pd);
    pthread_mutex_destroy(&pd->pool_mem.lock);
}
