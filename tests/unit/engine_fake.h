/* SPDX-License-Identifier: MIT */
/*
 * engine_fake.h - a fake kernel driver + GPU for tests/unit/test_engine.c (included
 * once, by that file only; static functions). See the comment below for what it models.
 */
#ifndef HCQ_ENGINE_FAKE_H
#define HCQ_ENGINE_FAKE_H

#include "pb.h"

#include "gpu_decode.h"
#include "gpu_qmd.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== A fake kernel driver and GPU ====
 * Enough of a kmd (host memory behind fake GPU VAs below 2^40, channels with a GPFIFO ring
 * and USERD) and of a GPU (one thread that fetches GPFIFO entries, interprets host
 * semaphores, copy-engine copies and QMD launches of its own program stubs, following
 * dependent-QMD chains) to run the engine end to end in a unit test. It also checks what
 * the engine promises the hardware: windows and local memory programmed before a launch,
 * cbuf0's gridDim equal to the QMD's grid, QMDs of the arch's version, no access to freed
 * memory. (The full emulator is src/emu; this keeps the engine testable on its own.) */

#define FAKE_MAX_MEMS 4096
/* The fake GPU's program stub (struct kmd.program_stub): u64 magic, then the kernel's
 * NUL-terminated name. */
#define FAKE_STUB_MAGIC 0x00425453454B4146ull /* "FAKESTB\0" as a little-endian u64 */
#define FAKE_STUB_B 64u
#define FAKE_MAX_CHANS 16
#define FAKE_ENTRIES 1024u

struct fake_mem {
    struct kmd_mem base;
    void *host;
    bool live;
};

struct fake_chan {
    struct kmd_channel base;
    uint64_t ring[FAKE_ENTRIES];
    uint8_t userd[512];
    /* GPU state */
    bool in_entry;
    struct gpu_push_iter it;
    uint64_t sem_lo, sem_hi, pay_lo, pay_hi;
    uint64_t ce_in, ce_out, ce_sem;
    uint32_t ce_len, ce_pay_lo, ce_pay_hi;
    uint64_t qmd_va;
    uint32_t subc_cls[8];
    bool windows;
    uint32_t local_va_hi; /* SET_SHADER_LOCAL_MEMORY_A until _B makes the device's store current */
    /* a grid whose QMD released a segment's timeline value (slot 1, pb_end_by_qmd) may still
     * run on real hardware: the next SEND_PCAS must come behind a WFI (or a RELEASE_WFI) */
    bool open_grid;
};

struct fake_kmd {
    struct kmd base;
    pthread_mutex_t lock;
    struct fake_mem *mems;
    uint32_t mem_n;
    uint64_t next_va;
    struct fake_chan *chans[FAKE_MAX_CHANS];
    pthread_t thread;
    atomic_bool stop, paused, faulted;
    atomic_uint hold_token; /* channel with this work-submit token does not run (0: none) */
    char fault[256];
    /* local memory is GR context state, one per device as on rm and nvgpu (every compute channel
     * in one TSG): the last SET_SHADER_LOCAL_MEMORY* of any channel holds for all */
    uint64_t local_va, local_per_tpc;
    atomic_uint launches, chained, copies, chan_creates;
    atomic_uint cbuf0_prefetched; /* QMDs run whose cbuf0 has CONSTANT_BUFFER_PREFETCH != 0 */
    atomic_uint qmd_releases;     /* QMD release slots written at a grid's completion */
};

struct muladd_params {
    uint64_t x_va;
    uint32_t n;
    uint32_t k;
};

struct gridlog_params {
    uint64_t out_va;
};

static void *
fake_ptr(struct fake_kmd *k, uint64_t va, uint64_t size_B)
{
    for (uint32_t i = 0; i < k->mem_n; i++) {
        struct fake_mem *m = &k->mems[i];
        if (m->live && va >= m->base.va && va + size_B <= m->base.va + m->base.size_B)
            return (uint8_t *)m->host + (va - m->base.va);
    }
    return NULL;
}

static void
fake_set_fault(struct fake_kmd *k, const char *what, uint64_t va)
{
    if (!atomic_load(&k->faulted)) {
        snprintf(k->fault, sizeof k->fault, "fake GPU: %s (va 0x%llx)", what, (unsigned long long)va);
        atomic_store(&k->faulted, true);
    }
}

static enum hcq_status
fake_mem_alloc(struct kmd *kmd, uint64_t size_B, uint64_t align_B, uint32_t flags, struct kmd_mem **mem_out)
{
    struct fake_kmd *k = (struct fake_kmd *)kmd;
    (void)align_B;
    pthread_mutex_lock(&k->lock);
    enum hcq_status st = HCQ_OK;
    if (k->mem_n == FAKE_MAX_MEMS) {
        st = hcq_err(HCQ_ERR_NOMEM, "fake: too many allocations");
        goto out;
    }
    uint64_t sz = (size_B + 4095) & ~4095ull;
    void *host = calloc(1, sz);
    if (!host) {
        st = hcq_err(HCQ_ERR_NOMEM, "fake: 0x%llx bytes", (unsigned long long)sz);
        goto out;
    }
    struct fake_mem *m = &k->mems[k->mem_n++];
    *m = (struct fake_mem){.base = {.size_B = sz, .va = k->next_va, .flags = flags, .handle = k->mem_n},
                           .host = host,
                           .live = true};
    m->base.map = (flags & KMD_MEM_CPU_MAP) || k->base.info.unified_memory ? host : NULL;
    m->base.priv = m;
    k->next_va += sz + 65536; /* never reused: a freed VA faults */
    *mem_out = &m->base;
out:
    pthread_mutex_unlock(&k->lock);
    return st;
}

static void
fake_mem_free(struct kmd *kmd, struct kmd_mem *mem)
{
    struct fake_kmd *k = (struct fake_kmd *)kmd;
    pthread_mutex_lock(&k->lock);
    struct fake_mem *m = mem->priv;
    free(m->host);
    m->host = NULL;
    m->live = false;
    pthread_mutex_unlock(&k->lock);
}

static enum hcq_status
fake_channel_create(struct kmd *kmd, enum kmd_engine engine, uint32_t entries, struct kmd_channel **out)
{
    struct fake_kmd *k = (struct fake_kmd *)kmd;
    if (entries != FAKE_ENTRIES)
        return hcq_err(HCQ_ERR_INVALID, "fake: %u entries", entries);
    struct fake_chan *c = calloc(1, sizeof(*c));
    if (!c)
        return HCQ_ERR_NOMEM;
    pthread_mutex_lock(&k->lock);
    int slot = -1;
    for (int i = 0; i < FAKE_MAX_CHANS && slot < 0; i++)
        if (!k->chans[i])
            slot = i;
    if (slot < 0) {
        pthread_mutex_unlock(&k->lock);
        free(c);
        return hcq_err(HCQ_ERR_NOMEM, "fake: too many channels");
    }
    c->base = (struct kmd_channel){.engine = engine,
                                   .ring = c->ring,
                                   .entries = FAKE_ENTRIES,
                                   .userd = c->userd,
                                   .token = 0x10u + (uint32_t)slot,
                                   .obj_cls = engine == KMD_ENGINE_COMPUTE ? kmd->arch->compute_cls
                                                                           : kmd->arch->copy_cls};
    k->chans[slot] = c;
    atomic_fetch_add(&k->chan_creates, 1);
    pthread_mutex_unlock(&k->lock);
    *out = &c->base;
    return HCQ_OK;
}

static void
fake_channel_destroy(struct kmd *kmd, struct kmd_channel *chan)
{
    struct fake_kmd *k = (struct fake_kmd *)kmd;
    pthread_mutex_lock(&k->lock);
    for (int i = 0; i < FAKE_MAX_CHANS; i++)
        if (k->chans[i] == (struct fake_chan *)chan)
            k->chans[i] = NULL;
    pthread_mutex_unlock(&k->lock);
    free(chan);
}

static void
fake_channel_kick(struct kmd *kmd, struct kmd_channel *chan, uint32_t put)
{
    (void)kmd;
    __atomic_store_n((uint32_t *)(chan->userd + 0x8C), put, __ATOMIC_RELEASE);
}

static enum hcq_status
fake_check(struct kmd *kmd, char *reason, size_t reason_B)
{
    struct fake_kmd *k = (struct fake_kmd *)kmd;
    if (!atomic_load(&k->faulted))
        return HCQ_OK;
    snprintf(reason, reason_B, "%s", k->fault);
    return HCQ_ERR_DEVICE_LOST;
}

/* Run one QMD (and its dependent chain) through the test kernels. */
static void
fake_launch(struct fake_kmd *k, struct fake_chan *c, uint64_t qmd_va)
{
    const struct gpu_qmd_ops *ops = gpu_qmd_ops_by_version(k->base.arch->qmd_version);
    bool first = true;
    while (qmd_va) {
        uint32_t *q = fake_ptr(k, qmd_va, ops->size_B);
        struct gpu_qmd_desc d;
        if (!q || gpu_qmd_decode(ops, q, &d) != HCQ_OK) {
            fake_set_fault(k, q ? "QMD of another version" : "QMD unmapped", qmd_va);
            return;
        }
        if (!c->windows || !k->local_va || !k->local_per_tpc || !fake_ptr(k, k->local_va, 1)) {
            fake_set_fault(k, "launch without windows / live local memory", k->local_va);
            return;
        }
        atomic_fetch_add(first ? &k->launches : &k->chained, 1);
        if (d.cbuf[0].prefetch)
            atomic_fetch_add(&k->cbuf0_prefetched, 1);
        first = false;
        const uint8_t *stub = fake_ptr(k, d.program_va, FAKE_STUB_B);
        uint64_t magic = 0;
        if (stub)
            memcpy(&magic, stub, 8);
        const uint8_t *cb = fake_ptr(k, d.cbuf[0].va, d.cbuf[0].size_B);
        if (!stub || magic != FAKE_STUB_MAGIC || !cb || !d.cbuf[0].valid) {
            fake_set_fault(k, "bad program stub or cbuf0", d.program_va);
            return;
        }
        uint32_t gdim[3];
        memcpy(gdim, cb + 0xC, 12);
        if (memcmp(gdim, d.grid, 12) != 0) {
            fake_set_fault(k, "cbuf0 gridDim differs from the QMD grid", d.cbuf[0].va);
            return;
        }
        const uint8_t *params = cb + k->base.arch->cbuf0_params_off_B;
        const char *name = (const char *)stub + 8;
        if (!strcmp(name, "t_muladd")) {
            struct muladd_params p;
            memcpy(&p, params, sizeof p);
            uint32_t *x = fake_ptr(k, p.x_va, (uint64_t)p.n * 4);
            if (!x) {
                fake_set_fault(k, "t_muladd: x unmapped", p.x_va);
                return;
            }
            for (uint32_t i = 0; i < p.n; i++)
                x[i] = x[i] * 3u + p.k;
        } else if (!strcmp(name, "t_gridlog")) {
            struct gridlog_params p;
            memcpy(&p, params, sizeof p);
            uint32_t *o = fake_ptr(k, p.out_va, 7 * 4);
            if (!o) {
                fake_set_fault(k, "t_gridlog: out unmapped", p.out_va);
                return;
            }
            memcpy(o, d.grid, 12);
            memcpy(o + 3, d.block, 12);
            o[6]++;
        } else {
            fake_set_fault(k, "unknown kernel", d.program_va);
            return;
        }
        /* the QMD's releases at the grid's completion (hcq_queue_timestamp_launch's stamps) */
        for (uint32_t r = 0; r < GPU_QMD_RELEASE_COUNT; r++) {
            const struct gpu_qmd_release *rel = &d.release[r];
            if (!rel->enable)
                continue;
            uint64_t *p = fake_ptr(k, rel->va,
                                   rel->structure_size == GPU_QMD_RELEASE_STRUCTURE_SIZE_FOUR_WORDS ? 16 : 8);
            if (!p) {
                fake_set_fault(k, "QMD release unmapped", rel->va);
                return;
            }
            if (rel->payload64)
                __atomic_store_n(p, rel->payload, __ATOMIC_RELEASE);
            else
                __atomic_store_n((uint32_t *)p, (uint32_t)rel->payload, __ATOMIC_RELEASE);
            if (rel->structure_size == GPU_QMD_RELEASE_STRUCTURE_SIZE_FOUR_WORDS)
                __atomic_store_n(p + 1, hcq_time_ns(), __ATOMIC_RELEASE);
            atomic_fetch_add(&k->qmd_releases, 1);
            if (r == 1)
                c->open_grid = true;
        }
        qmd_va = d.dependent.enable ? d.dependent.qmd_va : 0;
    }
}

/* One method write; false: an acquire is not satisfied yet (retry later). */
static bool
fake_method(struct fake_kmd *k, struct fake_chan *c, const struct gpu_push_write *w)
{
    uint32_t m = w->mthd_B, v = w->data;
    if (m == 0) {
        c->subc_cls[w->subc] = v & 0xFFFF;
        return true;
    }
    if (m < 0x100) {
        switch (m) {
        case 0x5C:
            c->sem_lo = v & ~3u;
            return true;
        case 0x60:
            c->sem_hi = v;
            return true;
        case 0x64:
            c->pay_lo = v;
            return true;
        case 0x68:
            c->pay_hi = v;
            return true;
        case 0x6C: {
            uint64_t va = c->sem_lo | c->sem_hi << 32, pay = c->pay_lo | c->pay_hi << 32;
            bool b64 = (v >> 24) & 1;
            uint64_t *p = fake_ptr(k, va, b64 ? 8 : 4);
            if (!p) {
                fake_set_fault(k, "semaphore unmapped", va);
                return true;
            }
            uint32_t op = v & 7;
            if (op == 1) {
                if ((v >> 20) & 1) /* RELEASE_WFI */
                    c->open_grid = false;
                if (b64)
                    __atomic_store_n(p, pay, __ATOMIC_RELEASE);
                else
                    __atomic_store_n((uint32_t *)p, (uint32_t)pay, __ATOMIC_RELEASE);
                if ((v >> 25) & 1) {
                    uint64_t *ts = fake_ptr(k, va + 8, 8);
                    if (ts)
                        __atomic_store_n(ts, hcq_time_ns(), __ATOMIC_RELEASE);
                }
                return true;
            }
            uint64_t cur =
                b64 ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : __atomic_load_n((uint32_t *)p, __ATOMIC_ACQUIRE);
            if (op == 3)
                return (int64_t)(cur - pay) >= 0;
            if (op == 2)
                return cur >= pay;
            fake_set_fault(k, "semaphore operation", op);
            return true;
        }
        case 0x78: /* WFI */
            c->open_grid = false;
            return true;
        default:
            return true; /* NON_STALL_INTERRUPT, ...: nothing to do here */
        }
    }
    uint32_t cls = c->subc_cls[w->subc];
    if (cls == k->base.arch->compute_cls && w->subc == 1) {
        switch (m) {
        case 0x7B0:
        case 0x2A0:
            c->windows = true;
            return true;
        case 0x790:
            c->local_va_hi = v;
            return true;
        case 0x794:
            k->local_va = (uint64_t)c->local_va_hi << 32 | v;
            return true;
        case 0x2E8:
            k->local_per_tpc = v;
            return true;
        case 0x2B4:
            c->qmd_va = (uint64_t)v << 8;
            return true;
        case 0x2C0:
            if (c->open_grid) {
                fake_set_fault(
                    k, "SEND_PCAS while a grid whose QMD ended a segment may still run (no WFI since)",
                    c->qmd_va);
                return true;
            }
            fake_launch(k, c, c->qmd_va);
            return true;
        default:
            return true;
        }
    }
    if (cls == k->base.arch->copy_cls && w->subc == 4) {
        switch (m) {
        case 0x400:
            c->ce_in = (uint64_t)v << 32 | (c->ce_in & 0xFFFFFFFFu);
            return true;
        case 0x404:
            c->ce_in = (c->ce_in & ~0xFFFFFFFFull) | v;
            return true;
        case 0x408:
            c->ce_out = (uint64_t)v << 32 | (c->ce_out & 0xFFFFFFFFu);
            return true;
        case 0x40C:
            c->ce_out = (c->ce_out & ~0xFFFFFFFFull) | v;
            return true;
        case 0x418:
            c->ce_len = v;
            return true;
        case 0x240:
            c->ce_sem = (uint64_t)v << 32 | (c->ce_sem & 0xFFFFFFFFu);
            return true;
        case 0x244:
            c->ce_sem = (c->ce_sem & ~0xFFFFFFFFull) | v;
            return true;
        case 0x248:
            c->ce_pay_lo = v;
            return true;
        case 0x24C:
            c->ce_pay_hi = v;
            return true;
        case 0x300:
            if (v & 3) {
                void *dst = fake_ptr(k, c->ce_out, c->ce_len), *src = fake_ptr(k, c->ce_in, c->ce_len);
                if (!dst || !src) {
                    fake_set_fault(k, "copy unmapped", dst ? c->ce_in : c->ce_out);
                    return true;
                }
                memmove(dst, src, c->ce_len);
                atomic_fetch_add(&k->copies, 1);
            }
            if ((v >> 3) & 3) {
                uint32_t *p = fake_ptr(k, c->ce_sem, 8);
                if (!p)
                    fake_set_fault(k, "copy semaphore unmapped", c->ce_sem);
                else {
                    p[0] = c->ce_pay_lo;
                    if ((v >> 27) & 1)
                        p[1] = c->ce_pay_hi;
                }
            }
            return true;
        default:
            return true;
        }
    }
    fake_set_fault(k, "method on an unbound subchannel", m);
    return true;
}

/* Run channel c until it stalls or runs dry; true if anything happened. */
static bool
fake_chan_run(struct fake_kmd *k, struct fake_chan *c)
{
    bool progress = false;
    for (int budget = 0; budget < 4096 && !atomic_load(&k->faulted); budget++) {
        uint32_t get = *(volatile uint32_t *)(c->userd + 0x88);
        uint32_t put = __atomic_load_n((uint32_t *)(c->userd + 0x8C), __ATOMIC_ACQUIRE);
        if (!c->in_entry) {
            if (get == put)
                return progress;
            struct gpu_gpfifo_fields f;
            const uint32_t *pb = NULL;
            if (gpu_gpfifo_entry_decode(c->ring[get], &f) == HCQ_OK)
                pb = fake_ptr(k, f.pb_va, (uint64_t)f.dw_count * 4);
            if (!pb) {
                fake_set_fault(k, "GPFIFO entry / pushbuffer unmapped", f.pb_va);
                return progress;
            }
            gpu_push_iter_init(&c->it, pb, f.dw_count);
            c->in_entry = true;
        }
        struct gpu_push_iter save = c->it;
        struct gpu_push_write w;
        if (gpu_push_iter_next(&c->it, &w)) {
            if (!fake_method(k, c, &w)) {
                c->it = save; /* acquire not satisfied: retry later */
                return progress;
            }
            progress = true;
            continue;
        }
        if (c->it.status != HCQ_OK)
            fake_set_fault(k, c->it.error, 0);
        c->in_entry = false;
        __atomic_store_n((uint32_t *)(c->userd + 0x88), (get + 1) & (FAKE_ENTRIES - 1), __ATOMIC_RELEASE);
        progress = true;
    }
    return progress;
}

static void *
fake_gpu_thread(void *arg)
{
    struct fake_kmd *k = arg;
    while (!atomic_load(&k->stop)) {
        bool progress = false;
        pthread_mutex_lock(&k->lock);
        if (!atomic_load(&k->paused))
            for (int i = 0; i < FAKE_MAX_CHANS; i++)
                if (k->chans[i] && k->chans[i]->base.token != atomic_load(&k->hold_token))
                    progress |= fake_chan_run(k, k->chans[i]);
        pthread_mutex_unlock(&k->lock);
        if (!progress)
            sched_yield();
    }
    return NULL;
}

static void
fake_destroy(struct kmd *kmd)
{
    struct fake_kmd *k = (struct fake_kmd *)kmd;
    atomic_store(&k->stop, true);
    pthread_join(k->thread, NULL);
    for (uint32_t i = 0; i < k->mem_n; i++)
        free(k->mems[i].host);
    free(k->mems);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

/* Stop or restart the fake GPU; once this returns it is not in the middle of anything. */
static void
fake_pause(struct fake_kmd *k, bool paused)
{
    pthread_mutex_lock(&k->lock);
    atomic_store(&k->paused, paused);
    pthread_mutex_unlock(&k->lock);
}

static enum hcq_status
fake_program_stub(const char *name, void *dst, size_t dst_B)
{
    size_t n = strlen(name);
    if (n == 0 || n + 9 > FAKE_STUB_B || dst_B < FAKE_STUB_B)
        return HCQ_ERR_INVALID;
    uint64_t magic = FAKE_STUB_MAGIC;
    memcpy(dst, &magic, 8);
    memcpy((uint8_t *)dst + 8, name, n + 1);
    return HCQ_OK;
}

static const struct kmd_ops fake_kmd_ops = {
    .destroy = fake_destroy,
    .mem_alloc = fake_mem_alloc,
    .mem_free = fake_mem_free,
    .channel_create = fake_channel_create,
    .channel_destroy = fake_channel_destroy,
    .channel_kick = fake_channel_kick,
    .check = fake_check,
};

static enum hcq_status
fake_open(const char *arch, bool cpu_copies, struct fake_kmd **k_out, struct hcq_device **dev_out)
{
    struct fake_kmd *k = calloc(1, sizeof(*k));
    if (!k)
        return HCQ_ERR_NOMEM;
    k->mems = calloc(FAKE_MAX_MEMS, sizeof(*k->mems));
    k->base.ops = &fake_kmd_ops;
    k->base.arch = hcq_arch_by_name(arch);
    k->next_va = 0x1000000000ull;
    struct kmd_info *ki = &k->base.info;
    snprintf(ki->name, sizeof ki->name, "fake %s", arch);
    snprintf(ki->driver, sizeof ki->driver, "fake");
    ki->sm_count = 4;
    ki->gpc_count = ki->litter_gpcs = 1;
    ki->tpc_count = ki->litter_tpc_per_gpc = 2;
    ki->litter_sm_per_tpc = 2;
    ki->max_warps_per_sm = 16;
    ki->emulated = true;
    k->base.program_stub = fake_program_stub;
    ki->copies_by_cpu = cpu_copies;
    ki->unified_memory = cpu_copies;
    pthread_mutex_init(&k->lock, NULL);
    if (!k->mems || !k->base.arch || pthread_create(&k->thread, NULL, fake_gpu_thread, k) != 0) {
        free(k->mems);
        free(k);
        return hcq_err(HCQ_ERR_INVALID, "fake_open %s", arch);
    }
    *k_out = k;
    return pb_device_create(&k->base, "fake", "fake:0", dev_out);
}

static const struct hcq_kernel_desc muladd_desc = {"t_muladd", "test", sizeof(struct muladd_params), NULL};
static const struct hcq_kernel_desc gridlog_desc = {"t_gridlog", "test", sizeof(struct gridlog_params), NULL};

static inline enum hcq_status
fake_prog(struct hcq_device *dev, const struct hcq_kernel_desc *desc, struct hcq_program **out)
{
    struct hcq_program *p = calloc(1, sizeof(*p));
    if (!p)
        return HCQ_ERR_NOMEM;
    p->dev = dev;
    p->desc = desc;
    enum hcq_status st = dev->ops->program_load(dev, NULL, 0, desc->name, p);
    if (st != HCQ_OK) {
        free(p);
        return st;
    }
    *out = p;
    return HCQ_OK;
}

static inline void
fake_prog_free(struct hcq_program *p)
{
    if (!p)
        return;
    p->dev->ops->program_unload(p->dev, p);
    free(p);
}

static inline void
ref_muladd(uint32_t *x, uint32_t n, uint32_t k)
{
    for (uint32_t i = 0; i < n; i++)
        x[i] = x[i] * 3u + k;
}

static const uint32_t one3[3] = {1, 1, 1};

#endif /* HCQ_ENGINE_FAKE_H */
