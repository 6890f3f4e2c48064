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
 * Small blocks (classes up to 1 MiB) are slots of a slab: one driver allocation of
 * max(2 MiB, 4 classes) cut into equal slots of one class, as CUDA's driver sub-allocates
 * small cuMemAlloc/cuMemHostAlloc blocks. Every driver allocation costs 30-100 us even for
 * 4 KiB (RM object, UVM range and mapping; H100: distinct live 4 KiB device
 * buffers 36 us each against CUDA's 2), so the first allocation of a class pays it once per
 * slab. A free slot counts as cached; an emptied slab stays cached as a whole (trim, the cap,
 * OOM and close give it back) - a slab with live slots cannot be given back. A slab is made
 * only while its free slots fit under the cap, else the block is a whole one as before.
 * A slot's buffer shares the slab's pages with its neighbours: a kernel writing past its end
 * corrupts them rather than faulting, as with CUDA's small allocations. HCQ_POOL_SLAB=0: whole
 * blocks only.
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
/* Sub-allocation: the largest class cut from slabs, the smallest slab, slots per slab. */
#define PB_SUB_MAX_B (1ull << 20)
#define PB_SLAB_MIN_B (2ull << 20)
#define PB_SLAB_MIN_SLOTS 4u
#define PB_SLAB_MAX_SLOTS 512u /* 2 MiB of 4 KiB slots */

struct pb_slab {
    struct pb_slab *next; /* in the kind's slab list */
    struct kmd_mem *mem;
    uint64_t class_B;
    uint32_t kind, slots, used;
    uint64_t free_mask[PB_SLAB_MAX_SLOTS / 64]; /* bit set: slot free */
};

struct pb_block {
    struct pb_block *next; /* in the kind's cache list */
    struct kmd_mem *mem;   /* the driver block, or &view for a slab's slot */
    uint64_t class_B;      /* 0: exact-size block, never cached */
    uint32_t kind;
    struct pb_slab *slab; /* a slot's slab, else NULL */
    uint32_t slot;
    struct kmd_mem view; /* a slot: its part of slab->mem (never passed to the kmd) */
};

struct kmd_mem *
pb_block_mem(struct pb_block *b, uint64_t *offset_out)
{
    if (b->slab) {
        *offset_out = (uint64_t)b->slot * b->slab->class_B;
        return b->slab->mem;
    }
    *offset_out = 0;
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
    /* HCQ_POOL_SLAB=0: whole blocks only, so a kernel writing past a small buffer faults */
    p->slab_on = p->enabled && util_env_on("HCQ_POOL_SLAB");
    uint64_t dev_cap = device_mem_B ? device_mem_B / 8 : (1ull << 30);
    uint64_t host_cap = 1ull << 30;
    if (cap && *cap)
        dev_cap = host_cap = strtoull(cap, NULL, 0) << 20;
    p->device.st.cap_B = p->enabled ? dev_cap : 0;
    p->host.st.cap_B = p->enabled ? host_cap : 0;
}

/* What the driver gets back, collected under the lock and released outside it (driver calls
 * take milliseconds). */
struct pb_release {
    struct pb_block *blocks;
    struct pb_slab *slabs;
};

static void
pb_release_take_block(struct pb_pool *p, struct pb_release *r, struct pb_block *b)
{
    struct pb_pool_side *s = pb_pool_side(p, b->kind);
    s->st.cached_B -= b->class_B;
    s->st.reserved_B -= b->class_B;
    s->st.cached_blocks--;
    s->st.driver_frees++;
    b->next = r->blocks;
    r->blocks = b;
}

/* Unlink the empty slab *pp (caller holds the lock) into r. */
static void
pb_release_take_slab(struct pb_pool *p, struct pb_release *r, struct pb_slab **pp)
{
    struct pb_slab *sl = *pp;
    struct pb_pool_side *s = pb_pool_side(p, sl->kind);
    *pp = sl->next;
    s->st.cached_B -= sl->mem->size_B;
    s->st.reserved_B -= sl->mem->size_B;
    s->st.cached_blocks--;
    s->st.driver_frees++;
    sl->next = r->slabs;
    r->slabs = sl;
}

static uint64_t
pb_release_run(struct pb_dev *pd, struct pb_release *r)
{
    uint64_t freed = 0;
    while (r->blocks) {
        struct pb_block *b = r->blocks;
        r->blocks = b->next;
        freed += b->class_B;
        kmd_mem_free(pd->kmd, b->mem);
        free(b);
    }
    while (r->slabs) {
        struct pb_slab *sl = r->slabs;
        r->slabs = sl->next;
        freed += sl->mem->size_B;
        kmd_mem_free(pd->kmd, sl->mem);
        free(sl);
    }
    return freed;
}

/* Empty slabs, then cached whole blocks of `kind` into r while its side caches more than
 * keep_B (0: all of them; caller holds the lock). */
static void
pb_release_kind(struct pb_pool *p, uint32_t kind, uint64_t keep_B, struct pb_release *r)
{
    struct pb_pool_side *s = pb_pool_side(p, kind);
    for (struct pb_slab **pp = &p->slabs[kind]; *pp && s->st.cached_B > keep_B;) {
        if ((*pp)->used == 0)
            pb_release_take_slab(p, r, pp);
        else
            pp = &(*pp)->next;
    }
    while (p->cache[kind] && s->st.cached_B > keep_B) {
        struct pb_block *b = p->cache[kind];
        p->cache[kind] = b->next;
        p->cache_count[kind]--;
        pb_release_take_block(p, r, b);
    }
}

/* Every cached block and empty slab into r (caller holds the lock). */
static void
pb_pool_take_all(struct pb_pool *p, struct pb_release *r)
{
    if (p->device.st.cached_B || p->host.st.cached_B) {
        p->device.st.trims++;
        p->host.st.trims++;
    }
    for (uint32_t k = 0; k < PB_POOL_KINDS; k++)
        pb_release_kind(p, k, 0, r);
}

/* Over the cap (a slot's free, which cannot be refused): empty slabs, then whole blocks of
 * side s go back until it fits or nothing more can (caller holds the lock). */
static void
pb_pool_shrink(struct pb_pool *p, struct pb_pool_side *s, struct pb_release *r)
{
    for (uint32_t k = 0; k < PB_POOL_KINDS; k++)
        if (pb_pool_side(p, k) == s)
            pb_release_kind(p, k, s->st.cap_B, r);
}

uint64_t
pb_pool_trim(struct pb_dev *pd)
{
    struct pb_pool *p = &pd->pool_mem;
    struct pb_release r = {0};
    pthread_mutex_lock(&p->lock);
    pb_pool_take_all(p, &r);
    pthread_mutex_unlock(&p->lock);
    return pb_release_run(pd, &r);
}

static bool
pb_pool_oom(enum hcq_status st)
{
    return st == HCQ_ERR_NOMEM;
}

/* Slab size for a class that is cut from slabs, 0 for one that is not. */
static uint64_t
pb_slab_size(uint64_t class_B)
{
    if (!class_B || class_B > PB_SUB_MAX_B)
        return 0;
    uint64_t b = class_B * PB_SLAB_MIN_SLOTS;
    return b < PB_SLAB_MIN_B ? PB_SLAB_MIN_B : b;
}

/* Take a free slot of sl into a new block b (caller holds the lock). */
static void
pb_slab_take(struct pb_pool *p, struct pb_slab *sl, struct pb_block *b)
{
    struct pb_pool_side *s = pb_pool_side(p, sl->kind);
    uint32_t w = 0;
    while (!sl->free_mask[w])
        w++;
    const uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(sl->free_mask[w]);
    sl->free_mask[w] &= ~(1ull << (slot % 64));
    if (sl->used++ == 0)
        s->st.cached_blocks--; /* no longer an empty slab */
    s->st.cached_B -= sl->class_B;
    const uint64_t off = (uint64_t)slot * sl->class_B;
    b->slab = sl;
    b->slot = slot;
    b->class_B = sl->class_B;
    b->kind = sl->kind;
    b->view = *sl->mem;
    b->view.size_B = sl->class_B;
    b->view.va = sl->mem->va + off;
    b->view.map = sl->mem->map ? (uint8_t *)sl->mem->map + off : NULL;
    b->view.priv = NULL;
    b->mem = &b->view;
}

/* A slot of class_B from a slab of `kind`: a free one, else a new slab. HCQ_ERR_NOMEM (quiet)
 * when no slab can be had; the caller then makes a whole block. */
static enum hcq_status
pb_slab_alloc(struct pb_dev *pd, uint32_t kind, uint64_t class_B, struct pb_block *b)
{
    struct pb_pool *p = &pd->pool_mem;
    struct pb_pool_side *s = pb_pool_side(p, kind);
    const uint64_t slab_B = pb_slab_size(class_B);
    pthread_mutex_lock(&p->lock);
    for (struct pb_slab *sl = p->slabs[kind]; sl; sl = sl->next) {
        if (sl->class_B == class_B && sl->used < sl->slots) {
            pb_slab_take(p, sl, b);
            s->st.hits++;
            pthread_mutex_unlock(&p->lock);
            return HCQ_OK;
        }
    }
    /* a new slab's free slots count as cached: only while they fit under the cap */
    const bool fits = s->st.cached_B + slab_B - class_B <= s->st.cap_B;
    pthread_mutex_unlock(&p->lock);
    if (!fits)
        return HCQ_ERR_NOMEM;
    struct pb_slab *sl = calloc(1, sizeof *sl);
    if (!sl)
        return hcq_err(HCQ_ERR_NOMEM, "buf_alloc: slab");
    /* aligned to the class, so every slot is */
    const uint32_t flags = pb_pool_kind_flags(kind);
    enum hcq_status st = kmd_mem_alloc(pd->kmd, slab_B, class_B, flags, &sl->mem);
    if (st == HCQ_OK && (flags & KMD_MEM_CPU_MAP) && !sl->mem->map) {
        kmd_mem_free(pd->kmd, sl->mem);
        st = HCQ_ERR_NOMEM; /* the whole-block path reports it */
    }
    if (st != HCQ_OK) {
        free(sl);
        return st;
    }
    sl->class_B = class_B;
    sl->kind = kind;
    sl->slots = (uint32_t)(slab_B / class_B);
    for (uint32_t i = 0; i < sl->slots; i++)
        sl->free_mask[i / 64] |= 1ull << (i % 64);
    pthread_mutex_lock(&p->lock);
    sl->next = p->slabs[kind];
    p->slabs[kind] = sl;
    s->st.driver_allocs++;
    s->st.reserved_B += slab_B;
    s->st.cached_B += slab_B;
    s->st.cached_blocks++; /* empty until the take below */
    if (s->st.reserved_B > s->st.peak_reserved_B)
        s->st.peak_reserved_B = s->st.reserved_B;
    pb_slab_take(p, sl, b);
    pthread_mutex_unlock(&p->lock);
    return HCQ_OK;
}

enum hcq_status
pb_pool_alloc(struct pb_dev *pd, uint32_t kind, uint64_t size_B, struct pb_block **out,
              struct kmd_mem **mem_out)
{
    struct pb_pool *p = &pd->pool_mem;
    struct pb_pool_side *s = pb_pool_side(p, kind);
    uint64_t class_B = p->enabled ? pb_pool_class(size_B) : 0;
    if (p->slab_on && pb_slab_size(class_B) && !atomic_load(&pd->base.lost)) {
        struct pb_block *sb = calloc(1, sizeof *sb);
        if (!sb)
            return hcq_err(HCQ_ERR_NOMEM, "buf_alloc: pool block");
        enum hcq_status st = pb_slab_alloc(pd, kind, class_B, sb);
        if (st == HCQ_OK) {
            *out = sb;
            *mem_out = sb->mem;
            return HCQ_OK;
        }
        free(sb);
        if (!pb_pool_oom(st))
            return st;
        /* no slab (over the cap, or the driver refused one): a whole block of the class */
    }
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
    struct pb_release r = {0};
    const bool lost = atomic_load(&pd->base.lost);
    pthread_mutex_lock(&p->lock);
    if (b->slab) {
        struct pb_slab *sl = b->slab;
        sl->free_mask[b->slot / 64] |= 1ull << (b->slot % 64);
        s->st.cached_B += sl->class_B;
        if (--sl->used == 0) {
            s->st.cached_blocks++;
            if (lost) /* nothing of a lost device is reused */
                for (struct pb_slab **pp = &p->slabs[b->kind]; *pp; pp = &(*pp)->next)
                    if (*pp == sl) {
                        pb_release_take_slab(p, &r, pp);
                        break;
                    }
        }
        pb_pool_shrink(p, s, &r);
        pthread_mutex_unlock(&p->lock);
        free(b);
        pb_release_run(pd, &r);
        return;
    }
    bool keep = b->class_B && s->st.cached_B + b->class_B <= s->st.cap_B &&
                p->cache_count[b->kind] < PB_POOL_MAX_BLOCKS && !lost;
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
