/* SPDX-License-Identifier: MIT */
/*
 * test_hcq_engine.c - unit tests of the pushbuffer engine that need no device: GPFIFO
 * free-slot counting across wraparound, the stream allocator (in-order hand-out, recycling
 * only behind timeline fences, never overlapping memory the simulated GPU has not passed,
 * never straddling the end of the ring), and the whole engine end to end on a fake kmd +
 * GPU (chaining, wraparound under load, copies, 64-bit signals, timestamps, graphs, faults).
 */
#include "harness.h"

#include "hcq_pb.h"
#include "hcq_pb_ring.h"

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
 * semaphores, copy-engine copies and QMD launches of emulator program stubs, following
 * dependent-QMD chains) to run the engine end to end in a unit test. It also checks what
 * the engine promises the hardware: windows and local memory programmed before a launch,
 * cbuf0's gridDim equal to the QMD's grid, QMDs of the arch's version, no access to freed
 * memory. (The full emulator is src/iface/emu; this keeps the engine testable on its own.) */

#define FAKE_MAX_MEMS 4096
#define FAKE_MAX_CHANS 16
#define FAKE_ENTRIES 1024u

struct fake_mem {
    struct hcq_kmd_mem base;
    void *host;
    bool live;
};

struct fake_chan {
    struct hcq_kmd_channel base;
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
    uint64_t local_va, local_per_tpc;
};

struct fake_kmd {
    struct hcq_kmd base;
    pthread_mutex_t lock;
    struct fake_mem *mems;
    uint32_t mem_n;
    uint64_t next_va;
    struct fake_chan *chans[FAKE_MAX_CHANS];
    pthread_t thread;
    atomic_bool stop, paused, faulted;
    atomic_uint hold_token;     /* channel with this work-submit token does not run (0: none) */
    char fault[256];
    atomic_uint launches, chained, copies, chan_creates;
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
fake_mem_alloc(struct hcq_kmd *kmd, uint64_t size_B, uint64_t align_B, uint32_t flags, struct hcq_kmd_mem **mem_out)
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
                           .host = host, .live = true};
    m->base.map = (flags & HCQ_KMD_MEM_CPU_MAP) || k->base.info.unified_memory ? host : NULL;
    m->base.priv = m;
    k->next_va += sz + 65536; /* never reused: a freed VA faults */
    *mem_out = &m->base;
out:
    pthread_mutex_unlock(&k->lock);
    return st;
}

static void
fake_mem_free(struct hcq_kmd *kmd, struct hcq_kmd_mem *mem)
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
fake_channel_create(struct hcq_kmd *kmd, enum hcq_kmd_engine engine, uint32_t entries, struct hcq_kmd_channel **out)
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
    c->base = (struct hcq_kmd_channel){.engine = engine, .ring = c->ring, .entries = FAKE_ENTRIES,
                                       .userd = c->userd, .token = 0x10u + (uint32_t)slot,
                                       .obj_cls = engine == HCQ_KMD_ENGINE_COMPUTE ? kmd->arch->compute_cls
                                                                                   : kmd->arch->copy_cls};
    k->chans[slot] = c;
    atomic_fetch_add(&k->chan_creates, 1);
    pthread_mutex_unlock(&k->lock);
    *out = &c->base;
    return HCQ_OK;
}

static void
fake_channel_destroy(struct hcq_kmd *kmd, struct hcq_kmd_channel *chan)
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
fake_channel_kick(struct hcq_kmd *kmd, struct hcq_kmd_channel *chan, uint32_t put)
{
    (void)kmd;
    __atomic_store_n((uint32_t *)(chan->userd + 0x8C), put, __ATOMIC_RELEASE);
}

static enum hcq_status
fake_check(struct hcq_kmd *kmd, char *reason, size_t reason_B)
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
        if (!c->windows || !c->local_va || !c->local_per_tpc || !fake_ptr(k, c->local_va, 1)) {
            fake_set_fault(k, "launch without windows / live local memory", c->local_va);
            return;
        }
        atomic_fetch_add(first ? &k->launches : &k->chained, 1);
        first = false;
        const uint8_t *stub = fake_ptr(k, d.program_va, HCQ_PB_EMU_STUB_B);
        uint64_t magic = 0;
        if (stub)
            memcpy(&magic, stub, 8);
        const uint8_t *cb = fake_ptr(k, d.cbuf[0].va, d.cbuf[0].size_B);
        if (!stub || magic != HCQ_PB_EMU_STUB_MAGIC || !cb || !d.cbuf[0].valid) {
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
        case 0x5C: c->sem_lo = v & ~3u; return true;
        case 0x60: c->sem_hi = v; return true;
        case 0x64: c->pay_lo = v; return true;
        case 0x68: c->pay_hi = v; return true;
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
            uint64_t cur = b64 ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : __atomic_load_n((uint32_t *)p, __ATOMIC_ACQUIRE);
            if (op == 3)
                return (int64_t)(cur - pay) >= 0;
            if (op == 2)
                return cur >= pay;
            fake_set_fault(k, "semaphore operation", op);
            return true;
        }
        default: return true; /* WFI, NON_STALL_INTERRUPT, ...: nothing to do here */
        }
    }
    uint32_t cls = c->subc_cls[w->subc];
    if (cls == k->base.arch->compute_cls && w->subc == 1) {
        switch (m) {
        case 0x7B0: case 0x2A0: c->windows = true; return true;
        case 0x790: c->local_va = (uint64_t)v << 32 | (c->local_va & 0xFFFFFFFFu); return true;
        case 0x794: c->local_va = (c->local_va & ~0xFFFFFFFFull) | v; return true;
        case 0x2E8: c->local_per_tpc = v; return true;
        case 0x2B4: c->qmd_va = (uint64_t)v << 8; return true;
        case 0x2C0: fake_launch(k, c, c->qmd_va); return true;
        default: return true;
        }
    }
    if (cls == k->base.arch->copy_cls && w->subc == 4) {
        switch (m) {
        case 0x400: c->ce_in = (uint64_t)v << 32 | (c->ce_in & 0xFFFFFFFFu); return true;
        case 0x404: c->ce_in = (c->ce_in & ~0xFFFFFFFFull) | v; return true;
        case 0x408: c->ce_out = (uint64_t)v << 32 | (c->ce_out & 0xFFFFFFFFu); return true;
        case 0x40C: c->ce_out = (c->ce_out & ~0xFFFFFFFFull) | v; return true;
        case 0x418: c->ce_len = v; return true;
        case 0x240: c->ce_sem = (uint64_t)v << 32 | (c->ce_sem & 0xFFFFFFFFu); return true;
        case 0x244: c->ce_sem = (c->ce_sem & ~0xFFFFFFFFull) | v; return true;
        case 0x248: c->ce_pay_lo = v; return true;
        case 0x24C: c->ce_pay_hi = v; return true;
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
        default: return true;
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
fake_destroy(struct hcq_kmd *kmd)
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

static const struct hcq_kmd_ops fake_kmd_ops = {
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
    struct hcq_kmd_info *ki = &k->base.info;
    snprintf(ki->name, sizeof ki->name, "fake %s", arch);
    snprintf(ki->driver, sizeof ki->driver, "fake");
    ki->sm_count = 4;
    ki->gpc_count = ki->litter_gpcs = 1;
    ki->tpc_count = ki->litter_tpc_per_gpc = 2;
    ki->litter_sm_per_tpc = 2;
    ki->max_warps_per_sm = 16;
    ki->emulated = true;
    ki->copies_by_cpu = cpu_copies;
    ki->unified_memory = cpu_copies;
    pthread_mutex_init(&k->lock, NULL);
    if (!k->mems || !k->base.arch || pthread_create(&k->thread, NULL, fake_gpu_thread, k) != 0) {
        free(k->mems);
        free(k);
        return hcq_err(HCQ_ERR_INVALID, "fake_open %s", arch);
    }
    *k_out = k;
    return hcq_pb_device_create(&k->base, "fake", "fake:0", dev_out);
}

static const struct hcq_kernel_desc muladd_desc = {"t_muladd", "test", sizeof(struct muladd_params), NULL};
static const struct hcq_kernel_desc gridlog_desc = {"t_gridlog", "test", sizeof(struct gridlog_params), NULL};

static enum hcq_status
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

static void
fake_prog_free(struct hcq_program *p)
{
    if (!p)
        return;
    p->dev->ops->program_unload(p->dev, p);
    free(p);
}

static void
ref_muladd(uint32_t *x, uint32_t n, uint32_t k)
{
    for (uint32_t i = 0; i < n; i++)
        x[i] = x[i] * 3u + k;
}

static const uint32_t one3[3] = {1, 1, 1};

/* GPFIFO: free + pending == entries - 1 for every (put, get), including wrapped indices. */
TEST(gpfifo_free_wraparound)
{
    const uint32_t sizes[] = {2, 8, 1024, 65536};
    for (int s = 0; s < 4; s++) {
        uint32_t n = sizes[s];
        for (int i = 0; i < 2000; i++) {
            uint32_t get = (uint32_t)th_rand() % n;
            uint32_t pending = (uint32_t)th_rand() % n; /* 0 .. n-1 entries in flight */
            uint32_t put = (get + pending) % n;
            CHECKF(hcq_pb_gpfifo_pending(put, get, n) == pending, "n %u put %u get %u: pending %u (expected %u)", n,
                   put, get, hcq_pb_gpfifo_pending(put, get, n), pending);
            CHECKF(hcq_pb_gpfifo_free(put, get, n) == n - 1 - pending, "n %u put %u get %u: free %u (expected %u)", n,
                   put, get, hcq_pb_gpfifo_free(put, get, n), n - 1 - pending);
        }
        /* Full ring: one slot stays empty so put == get always means "empty". */
        CHECK(hcq_pb_gpfifo_free(n - 1, 0, n) == 0);
        CHECK(hcq_pb_gpfifo_free(3 % n, (3 + 1) % n, n) == 0);
        CHECK(hcq_pb_gpfifo_free(5 % n, 5 % n, n) == n - 1);
    }
done:;
}

/* A simulated producer/GPU pair: every chunk handed out is tagged with the timeline value of
 * the submission that uses it; the GPU completes values in order at random times. No chunk
 * may overlap a chunk whose value the GPU has not reached. */
struct live_chunk {
    uint64_t off, size, value;
};

static bool
overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
    return a < b + bn && b < a + an;
}

TEST(ring_recycles_only_behind_fences)
{
    struct hcq_pb_ring r = {0};
    const uint64_t size = 64 * 1024;
    struct live_chunk *live = calloc(100000, sizeof(*live));
    CHECK_OK(hcq_pb_ring_init(&r, size, 64));
    uint32_t live_n = 0;
    uint64_t submitted = 0, completed = 0, handed_B = 0;
    uint32_t wraps = 0, waits = 0;
    uint64_t last_off = 0;
    CHECK(live);
    for (int step = 0; step < 20000; step++) {
        uint64_t n = 1 + th_rand() % 6000;
        uint64_t align = 1ull << (th_rand() % 9); /* 1 .. 256 */
        uint64_t off;
        while (!hcq_pb_ring_alloc(&r, n, align, &off)) {
            /* Full: what a queue does - retire what completed, else wait for the oldest fence
             * (here: the GPU completes it), else fence the unsubmitted part first. */
            uint64_t oldest;
            if (hcq_pb_ring_oldest(&r, &oldest)) {
                CHECK(oldest > completed);
                completed = oldest;
                hcq_pb_ring_retire(&r, completed);
                waits++;
            } else {
                CHECK(hcq_pb_ring_unfenced(&r) > 0); /* an empty ring always fits n <= size/2 */
                CHECK(hcq_pb_ring_fence(&r, ++submitted));
            }
        }
        CHECKF(off % align == 0, "offset 0x%llx not aligned to %llu", (unsigned long long)off,
               (unsigned long long)align);
        CHECKF(off + n <= size, "chunk [0x%llx, +0x%llx) straddles the end", (unsigned long long)off,
               (unsigned long long)n);
        if (off < last_off)
            wraps++;
        last_off = off;
        /* Drop chunks the GPU has passed, then check the new one against the rest. */
        uint32_t k = 0;
        for (uint32_t i = 0; i < live_n; i++)
            if (live[i].value > completed)
                live[k++] = live[i];
        live_n = k;
        for (uint32_t i = 0; i < live_n; i++)
            CHECKF(!overlaps(off, n, live[i].off, live[i].size),
                   "step %d: chunk [0x%llx,+0x%llx) overlaps live [0x%llx,+0x%llx) of value %llu (completed %llu)",
                   step, (unsigned long long)off, (unsigned long long)n, (unsigned long long)live[i].off,
                   (unsigned long long)live[i].size, (unsigned long long)live[i].value,
                   (unsigned long long)completed);
        /* Unsubmitted chunks belong to the next fence. */
        live[live_n++] = (struct live_chunk){off, n, submitted + 1};
        handed_B += n;
        CHECK(hcq_pb_ring_used(&r) <= size);
        /* Submit now and then; the GPU completes now and then. */
        if (th_rand() % 3 == 0) {
            if (!hcq_pb_ring_fence(&r, submitted + 1)) {
                uint64_t oldest;
                CHECK(hcq_pb_ring_oldest(&r, &oldest));
                completed = oldest;
                hcq_pb_ring_retire(&r, completed);
                CHECK(hcq_pb_ring_fence(&r, submitted + 1));
            }
            submitted++;
            CHECK(hcq_pb_ring_unfenced(&r) == 0);
        }
        if (th_rand() % 4 == 0 && completed < submitted) {
            completed += 1 + th_rand() % (submitted - completed);
            hcq_pb_ring_retire(&r, completed);
        }
    }
    CHECKF(wraps > 10 && waits > 10, "the test did not exercise wraparound (%u) and waits (%u)", wraps, waits);
    CHECK(handed_B > 100 * size);
done:
    free(live);
    hcq_pb_ring_fini(&r);
}

TEST(ring_limits)
{
    struct hcq_pb_ring r;
    uint64_t off;
    CHECK(hcq_pb_ring_init(&r, 1000, 4) == HCQ_ERR_INVALID); /* not a 4 KiB multiple */
    CHECK(hcq_pb_ring_init(&r, 4096, 3) == HCQ_ERR_INVALID); /* fences not a power of two */
    CHECK_OK(hcq_pb_ring_init(&r, 8192, 4));
    CHECK(!hcq_pb_ring_alloc(&r, 4097, 4, &off));           /* more than half: never fits */
    CHECK(!hcq_pb_ring_alloc(&r, 0, 4, &off));
    CHECK(hcq_pb_ring_alloc(&r, 4096, 256, &off) && off == 0);
    CHECK(hcq_pb_ring_alloc(&r, 4000, 256, &off) && off == 4096);
    CHECK(!hcq_pb_ring_alloc(&r, 256, 256, &off));          /* 96 bytes left: in use */
    uint64_t v;
    CHECK(!hcq_pb_ring_oldest(&r, &v));
    /* Fence FIFO of 4: fifth fence refused until one retires. */
    for (uint64_t i = 1; i <= 4; i++) {
        CHECK(hcq_pb_ring_fence(&r, i));
        CHECK(hcq_pb_ring_fence(&r, i + 100)); /* nothing new handed out: no new fence */
        if (i < 4)
            CHECK(hcq_pb_ring_alloc(&r, 1, 1, &off));
    }
    CHECK(hcq_pb_ring_oldest(&r, &v) && v == 1);
    hcq_pb_ring_retire(&r, 0);
    CHECK(hcq_pb_ring_used(&r) > 8000);
    hcq_pb_ring_retire(&r, 4);
    CHECK(hcq_pb_ring_used(&r) == 0);
    CHECK(!hcq_pb_ring_oldest(&r, &v));
    /* After everything retired, the wrap skip still fits a half-ring request. */
    CHECK(hcq_pb_ring_alloc(&r, 4096, 4096, &off));
done:
    hcq_pb_ring_fini(&r);
}

TEST(ring_fence_fifo_full)
{
    struct hcq_pb_ring r;
    uint64_t off;
    CHECK_OK(hcq_pb_ring_init(&r, 1 << 20, 8));
    for (uint64_t i = 1; i <= 8; i++) {
        CHECK(hcq_pb_ring_alloc(&r, 64, 64, &off));
        CHECK(hcq_pb_ring_fence(&r, i));
    }
    CHECK(hcq_pb_ring_alloc(&r, 64, 64, &off));
    CHECK(!hcq_pb_ring_fence(&r, 9));
    CHECK(hcq_pb_ring_unfenced(&r) == 64);
    hcq_pb_ring_retire(&r, 3);
    CHECK(hcq_pb_ring_fence(&r, 9));
    CHECK(hcq_pb_ring_unfenced(&r) == 0);
    CHECK(hcq_pb_ring_used(&r) == 6 * 64);
done:
    hcq_pb_ring_fini(&r);
}

/* ==== End-to-end tests on the fake GPU ==== */

#define FAKE_N 777u

static uint32_t *
fill_random(struct hcq_buf *b, uint32_t n, uint32_t *ref)
{
    uint32_t *x = hcq_buf_map(b);
    for (uint32_t i = 0; i < n; i++)
        x[i] = ref[i] = (uint32_t)th_rand();
    return x;
}

/* Hundreds of back-to-back launches in one submission: chained QMDs, in order. */
TEST(fake_launch_chain)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, FAKE_N, ref);
    for (int i = 0; i < 300; i++) {
        struct muladd_params p = {hcq_buf_va(b), FAKE_N, (uint32_t)th_rand()};
        CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
        ref_muladd(ref, FAKE_N, p.k);
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    for (uint32_t i = 0; i < FAKE_N; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
    CHECKF(atomic_load(&k->launches) == 1 && atomic_load(&k->chained) == 299, "%u sent, %u chained (expected 1, 299)",
           atomic_load(&k->launches), atomic_load(&k->chained));
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* Thousands of submissions: the GPFIFO ring (1024) and the stream ring (4 MiB) wrap many
 * times while the GPU lags; results stay in order. */
TEST(fake_stream_wraparound)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    uint32_t ref[64];
    CHECK_OK(fake_open("ga102", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, 64, ref);
    fake_pause(k, true); /* let work pile up first */
    for (int s = 0; s < 3000; s++) {
        if (s == 500)
            fake_pause(k, false);
        for (int i = 0; i < 1 + s % 3; i++) {
            struct muladd_params p = {hcq_buf_va(b), 64, (uint32_t)th_rand()};
            CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
            ref_muladd(ref, 64, p.k);
        }
        CHECK_OK(hcq_queue_submit(q));
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* Copies on a copy queue, and on a compute queue (copy helper channel) between launches. */
static void
fake_copies_on(struct th *t, bool cpu_copies)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *qc, *qx;
    struct hcq_buf *a, *bb, *c, *d;
    struct hcq_signal *sig = NULL;
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open("gh100", cpu_copies, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qc));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qx));
    CHECK_OK(hcq_signal_create(dev, 0, &sig));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &a));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &bb));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &c));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &d));
    fill_random(a, FAKE_N, ref);
    memset(hcq_buf_map(bb), 0xAB, FAKE_N * 4);
    memset(hcq_buf_map(c), 0xCD, FAKE_N * 4);
    memset(hcq_buf_map(d), 0xEF, FAKE_N * 4);
    for (int round = 0; round < 3; round++) {
        struct muladd_params p = {hcq_buf_va(bb), FAKE_N, (uint32_t)th_rand()};
        CHECK_OK(hcq_queue_copy(qc, bb, 0, round ? c : a, 0, FAKE_N * 4));
        CHECK_OK(hcq_queue_launch(qc, prog, one3, one3, &p, sizeof p));
        CHECK_OK(hcq_queue_launch(qc, prog, one3, one3, &p, sizeof p));
        CHECK_OK(hcq_queue_copy(qc, c, 0, bb, 0, FAKE_N * 4));
        ref_muladd(ref, FAKE_N, p.k);
        ref_muladd(ref, FAKE_N, p.k);
    }
    CHECK_OK(hcq_queue_signal(qc, sig, 1));
    CHECK_OK(hcq_queue_submit(qc));
    CHECK_OK(hcq_queue_wait(qx, sig, 1));
    CHECK_OK(hcq_queue_copy(qx, d, 0, c, 0, FAKE_N * 4));
    CHECK_OK(hcq_queue_finish(qx, HCQ_TIMEOUT_DEFAULT_NS));
    const uint32_t *out = hcq_buf_map(d);
    for (uint32_t i = 0; i < FAKE_N; i++)
        CHECKF(out[i] == ref[i], "d[%u] = 0x%08x (expected 0x%08x)", i, out[i], ref[i]);
    CHECKF(cpu_copies ? atomic_load(&k->copies) == 0 : atomic_load(&k->copies) == 7, "%u copy-engine copies",
           atomic_load(&k->copies));
done:
    hcq_signal_destroy(sig);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

TEST(fake_copies)
{
    fake_copies_on(t, false);
}

TEST(fake_copies_by_cpu)
{
    fake_copies_on(t, true);
}

/* Cross-queue ordering with 64-bit values across 2^32: the waiting queue does not run early. */
TEST(fake_signals_64bit)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q1, *q2;
    struct hcq_buf *b;
    struct hcq_signal *sig = NULL;
    uint32_t ref[FAKE_N];
    const uint64_t big = 0x100000005ull;
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q1));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q2));
    CHECK_OK(hcq_signal_create(dev, 0xFFFFFFFFull, &sig));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, FAKE_N, ref);
    struct muladd_params p1 = {hcq_buf_va(b), FAKE_N, 11}, p2 = {hcq_buf_va(b), FAKE_N, 22};
    CHECK_OK(hcq_queue_wait(q2, sig, big));
    CHECK_OK(hcq_queue_launch(q2, prog, one3, one3, &p2, sizeof p2));
    CHECK_OK(hcq_queue_submit(q2));
    /* 0xFFFFFFFF < big even though its low word is larger: q2 must stay blocked. */
    CHECK(hcq_queue_finish(q2, 20 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
    CHECK(x[0] == ref[0]);
    CHECK_OK(hcq_queue_launch(q1, prog, one3, one3, &p1, sizeof p1));
    CHECK_OK(hcq_queue_signal(q1, sig, big));
    CHECK_OK(hcq_queue_submit(q1));
    CHECK_OK(hcq_queue_finish(q2, HCQ_TIMEOUT_DEFAULT_NS));
    ref_muladd(ref, FAKE_N, 11);
    ref_muladd(ref, FAKE_N, 22);
    for (uint32_t i = 0; i < FAKE_N; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
    CHECK(hcq_signal_value(sig) == big);
done:
    hcq_signal_destroy(sig);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* A timestamp writes the device time and leaves the signal's value as it was. */
TEST(fake_timestamp)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q;
    struct hcq_signal *sig = NULL;
    CHECK_OK(fake_open("ga10b", false, &k, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 7, &sig));
    uint64_t t0 = hcq_time_ns();
    CHECK_OK(hcq_queue_timestamp(q, sig));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    uint64_t ts1 = hcq_signal_timestamp_ns(sig);
    CHECKF(hcq_signal_value(sig) == 7, "value %llu (expected 7)", (unsigned long long)hcq_signal_value(sig));
    CHECKF(ts1 >= t0 && ts1 <= hcq_time_ns(), "timestamp %llu outside [%llu, now]", (unsigned long long)ts1,
           (unsigned long long)t0);
    CHECK_OK(hcq_queue_signal(q, sig, 9));
    CHECK_OK(hcq_queue_barrier(q));
    CHECK_OK(hcq_queue_timestamp(q, sig));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK(hcq_signal_value(sig) == 9);
    CHECK(hcq_signal_timestamp_ns(sig) >= ts1);
done:
    hcq_signal_destroy(sig);
    hcq_device_close(dev);
}

/* A graph with variables in a kernel argument, a grid size and signal values, replayed with
 * host checks after each replay, then 200 times back to back (double-buffered patching). */
TEST(fake_graph)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *mul = NULL, *glog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b, *lg;
    struct hcq_signal *go = NULL, *done_sig = NULL;
    struct hcq_graph *g = NULL;
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &mul));
    CHECK_OK(fake_prog(dev, &gridlog_desc, &glog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &go));
    CHECK_OK(hcq_signal_create(dev, 0, &done_sig));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    CHECK_OK(hcq_buf_alloc(dev, 64, HCQ_MEM_HOST, &lg));
    uint32_t *x = fill_random(b, FAKE_N, ref);
    uint32_t *log = hcq_buf_map(lg);
    memset(log, 0, 64);
    uint32_t v_step, v_k, v_grid;
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v_step));
    CHECK_OK(hcq_graph_var(q, &v_k));
    CHECK_OK(hcq_graph_var(q, &v_grid));
    CHECK_OK(hcq_queue_wait_var(q, go, v_step, 0));
    struct muladd_params p = {hcq_buf_va(b), FAKE_N, 0};
    struct hcq_arg_patch patch = {v_k, offsetof(struct muladd_params, k), 4};
    struct hcq_launch l = {.prog = mul, .grid = {1, 1, 1}, .block = {32, 1, 1}, .args = &p, .args_B = sizeof p,
                           .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE}, .patches = &patch, .patch_count = 1};
    CHECK_OK(hcq_queue_launch_ex(q, &l));
    CHECK_OK(hcq_queue_launch_ex(q, &l));
    struct gridlog_params gp = {hcq_buf_va(lg)};
    struct hcq_launch l2 = {.prog = glog, .grid = {0, 1, 0}, .block = {8, 2, 1}, .args = &gp, .args_B = sizeof gp,
                            .grid_var = {v_grid, HCQ_VAR_NONE, v_grid}};
    CHECK_OK(hcq_queue_launch_ex(q, &l2));
    CHECK_OK(hcq_queue_signal_var(q, done_sig, v_step, 1));
    CHECK_OK(hcq_graph_end(q, &g));
    for (uint32_t i = 1; i <= 240; i++) {
        uint32_t kk = (uint32_t)th_rand(), gsz = 1 + i % 7;
        CHECK_OK(hcq_graph_set(g, v_step, i));
        CHECK_OK(hcq_graph_set(g, v_k, kk));
        CHECK_OK(hcq_graph_set(g, v_grid, gsz));
        ref_muladd(ref, FAKE_N, kk);
        ref_muladd(ref, FAKE_N, kk);
        CHECK_OK(hcq_graph_replay(g));
        hcq_signal_set(go, i);
        if (i <= 40) {
            CHECK_OK(hcq_signal_wait(done_sig, i + 1, HCQ_TIMEOUT_DEFAULT_NS));
            CHECKF(log[0] == gsz && log[1] == 1 && log[2] == gsz && log[3] == 8 && log[4] == 2 && log[6] == i,
                   "replay %u: grid %u,%u,%u block %u,%u count %u (expected grid %u,1,%u block 8,2 count %u)", i,
                   log[0], log[1], log[2], log[3], log[4], log[6], gsz, gsz, i);
            for (uint32_t j = 0; j < FAKE_N; j++)
                CHECKF(x[j] == ref[j], "replay %u: x[%u] = 0x%08x (expected 0x%08x)", i, j, x[j], ref[j]);
        }
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK(hcq_signal_value(done_sig) == 241);
    CHECK(log[6] == 240);
    for (uint32_t j = 0; j < FAKE_N; j++)
        CHECKF(x[j] == ref[j], "x[%u] = 0x%08x (expected 0x%08x)", j, x[j], ref[j]);
done:
    hcq_graph_destroy(g);
    hcq_signal_destroy(go);
    hcq_signal_destroy(done_sig);
    fake_prog_free(mul);
    fake_prog_free(glog);
    hcq_device_close(dev);
}

/* A graph that copies on a compute queue uses the copy helper channel at every replay. */
TEST(fake_graph_copies)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *mul = NULL;
    struct hcq_queue *q;
    struct hcq_buf *a, *b;
    struct hcq_graph *g = NULL;
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open("ga102", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &mul));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &a));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    fill_random(a, FAKE_N, ref);
    CHECK_OK(hcq_graph_begin(q));
    struct muladd_params p = {hcq_buf_va(b), FAKE_N, 5};
    CHECK_OK(hcq_queue_copy(q, b, 0, a, 0, FAKE_N * 4));
    CHECK_OK(hcq_queue_launch(q, mul, one3, one3, &p, sizeof p));
    CHECK_OK(hcq_queue_copy(q, a, 0, b, 0, FAKE_N * 4));
    CHECK_OK(hcq_graph_end(q, &g));
    for (int i = 0; i < 50; i++) {
        CHECK_OK(hcq_graph_replay(g));
        ref_muladd(ref, FAKE_N, 5);
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    const uint32_t *out = hcq_buf_map(a);
    for (uint32_t j = 0; j < FAKE_N; j++)
        CHECKF(out[j] == ref[j], "a[%u] = 0x%08x (expected 0x%08x)", j, out[j], ref[j]);
done:
    hcq_graph_destroy(g);
    fake_prog_free(mul);
    hcq_device_close(dev);
}

/* Queue order across submissions and channels: a copy recorded on a compute queue after a
 * launch (in a later submission) runs on the copy helper, yet not before the launch. */
TEST(fake_copy_after_launch_waits)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *a, *b;
    uint32_t ref[64];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &a));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    fill_random(a, 64, ref);
    memset(hcq_buf_map(b), 0x5A, sizeof ref);
    /* make the copy helper exist first, then hold the compute channel */
    CHECK_OK(hcq_queue_copy(q, b, 0, b, 0, 4));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    struct hcq_pb_queue *pq = hcq_pb_queue(q);
    atomic_store(&k->hold_token, pq->main.kc->token);
    struct muladd_params p = {hcq_buf_va(a), 64, 77};
    CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
    CHECK_OK(hcq_queue_submit(q));
    CHECK_OK(hcq_queue_copy(q, b, 0, a, 0, sizeof ref));
    CHECK_OK(hcq_queue_submit(q));
    CHECK(hcq_queue_finish(q, 20 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
    CHECKF(((uint32_t *)hcq_buf_map(b))[0] == 0x5A5A5A5Au, "the copy ran before the launch it follows");
    atomic_store(&k->hold_token, 0);
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    ref_muladd(ref, 64, 77);
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(((uint32_t *)hcq_buf_map(b))[i] == ref[i], "b[%u] = 0x%08x (expected 0x%08x)", i,
               ((uint32_t *)hcq_buf_map(b))[i], ref[i]);
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* Queues come and go; their channels are reused (no new kmd channel after the first). */
TEST(fake_channel_reuse)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *b;
    uint32_t ref[64];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, 64, ref);
    for (int i = 0; i < 6; i++) {
        struct hcq_queue *q, *qc;
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qc));
        struct muladd_params p = {hcq_buf_va(b), 64, (uint32_t)th_rand()};
        CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
        ref_muladd(ref, 64, p.k);
        CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
        CHECK_OK(hcq_queue_barrier(qc));
        CHECK_OK(hcq_queue_finish(qc, HCQ_TIMEOUT_DEFAULT_NS));
        hcq_queue_destroy(q);
        hcq_queue_destroy(qc);
    }
    CHECKF(atomic_load(&k->chan_creates) == 2, "%u kmd channels created (expected 2)", atomic_load(&k->chan_creates));
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* A short wait on a stalled GPU is a timeout naming the channel state, not a lost device;
 * a fault reported by the driver is a lost device with its reason. */
TEST(fake_timeout_and_fault)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q;
    char report[1024];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    fake_pause(k, true);
    CHECK_OK(hcq_queue_barrier(q));
    CHECK(hcq_queue_finish(q, 10 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
    CHECKF(strstr(hcq_last_error(), "timeline expected >=") && strstr(hcq_last_error(), "GPGet"), "message: %s",
           hcq_last_error());
    CHECK_OK(hcq_device_check(dev));
    fake_pause(k, false);
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    fake_set_fault(k, "injected MMU fault", 0xdead000);
    CHECK(hcq_device_check(dev) == HCQ_ERR_DEVICE_LOST);
    CHECK(hcq_queue_barrier(q) == HCQ_ERR_DEVICE_LOST);
    CHECK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS) == HCQ_ERR_DEVICE_LOST);
    hcq_device_fault_report(dev, report, sizeof report);
    CHECKF(strstr(report, "queue") != NULL, "report: %s", report);
done:
    hcq_device_close(dev);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(gpfifo_free_wraparound),
        TH_CASE(ring_recycles_only_behind_fences),
        TH_CASE(ring_limits),
        TH_CASE(ring_fence_fifo_full),
        TH_CASE(fake_launch_chain),
        TH_CASE(fake_stream_wraparound),
        TH_CASE(fake_copies),
        TH_CASE(fake_copies_by_cpu),
        TH_CASE(fake_signals_64bit),
        TH_CASE(fake_timestamp),
        TH_CASE(fake_graph),
        TH_CASE(fake_graph_copies),
        TH_CASE(fake_copy_after_launch_waits),
        TH_CASE(fake_channel_reuse),
        TH_CASE(fake_timeout_and_fault),
    };
    return th_run("hcq_engine", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
