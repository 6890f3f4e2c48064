/* SPDX-License-Identifier: MIT */
/*
 * emu_gpu.c - the GPU model's channels: one host thread per channel polls USERD GPPut
 * and the usermode doorbell, fetches GPFIFO entries (rm.md §4.3) and interprets the
 * pushbuffer (§5.1): host methods (semaphores with 32/64-bit payloads and timestamps,
 * acquires that wait, WFI), SET_OBJECT, and the copy engine (§5.4). Compute methods and
 * QMD launches are in emu_qmd.c. Any malformed method, unbound subchannel or unmapped
 * address raises a channel error the driver model reports as the real one would.
 * Timing, caches and ordering between channels beyond semaphores are not modelled.
 * Layer: emu.
 */
#include "emu_gpu.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Errors ==== */

int
emu_chan_fail(struct emu_chan *ch, enum emu_chan_error err, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&ch->err_lock);
    bool first = ch->err == EMU_CHAN_ERR_NONE;
    if (first) {
        ch->err = err;
        snprintf(ch->why, sizeof ch->why, "%s", why);
    }
    pthread_mutex_unlock(&ch->err_lock);
    if (first) {
        char msg[320];
        snprintf(msg, sizeof msg, "channel token 0x%x: Xid %d: %s", ch->desc.token, (int)err, why);
        emu_dev_fault_set(ch->d, msg);
        HCQ_LOG_INFO("emu: %s", msg);
        if (ch->desc.on_error)
            ch->desc.on_error(ch, err, why, ch->desc.user);
    }
    return -1;
}

enum emu_chan_error
emu_chan_error_get(struct emu_chan *ch, char *buf, size_t buf_B)
{
    pthread_mutex_lock(&ch->err_lock);
    enum emu_chan_error e = ch->err;
    if (buf && buf_B)
        snprintf(buf, buf_B, "%s", ch->why);
    pthread_mutex_unlock(&ch->err_lock);
    return e;
}

/* ==== Semaphores (rm.md §5.2, §5.6) ==== */

int
emu_chan_sem_write(struct emu_chan *ch, uint64_t va, uint64_t payload, bool payload64, bool four_words,
                   const char *who)
{
    uint64_t n = four_words ? 16 : payload64 ? 8 : 4;
    if (va & (payload64 || four_words ? 7 : 3))
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION, "%s: semaphore VA 0x%llx misaligned", who,
                             (unsigned long long)va);
    uint8_t *p = emu_mem_ptr(ch->desc.vm, va, n);
    if (!p)
        return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "%s: semaphore VA 0x%llx (%llu bytes) not mapped",
                             who, (unsigned long long)va, (unsigned long long)n);
    if (four_words) /* the 16-byte record: the timestamp lands first, the payload last */
        __atomic_store_n((uint64_t *)(p + 8), emu_now_ns(), __ATOMIC_RELAXED);
    if (payload64 || four_words)
        __atomic_store_n((uint64_t *)p, payload64 ? payload : (uint32_t)payload, __ATOMIC_RELEASE);
    else
        __atomic_store_n((uint32_t *)p, (uint32_t)payload, __ATOMIC_RELEASE);
    return 0;
}

/* Acquire condition of SEM_EXECUTE OPERATION (rm.md §5.2). */
static bool
emu_sem_acquired(uint32_t op, uint64_t v, uint64_t want, bool is64)
{
    switch (op) {
    case 0:
        return v == want; /* ACQUIRE (equal) */
    case 2:
        return v >= want; /* ACQ_STRICT_GEQ */
    case 3:
        return is64 ? (int64_t)(v - want) >= 0 : (int32_t)(uint32_t)(v - want) >= 0; /* ACQ_CIRC_GEQ */
    case 4:
        return (v & want) != 0; /* ACQ_AND */
    case 5:
        return (~(v | want) & (is64 ? ~0ull : 0xFFFFFFFFull)) != 0; /* ACQ_NOR */
    default:
        return false;
    }
}

static uint64_t
emu_sem_reduce(uint32_t red, bool is_unsigned, uint64_t old, uint64_t v, bool is64)
{
    uint64_t mask = is64 ? ~0ull : 0xFFFFFFFFull;
    int64_t so = is64 ? (int64_t)old : (int32_t)(uint32_t)old, sv = is64 ? (int64_t)v : (int32_t)(uint32_t)v;
    switch (red) {
    case 0:
        return (is_unsigned ? (old < v ? old : v) : (uint64_t)(so < sv ? so : sv)) & mask; /* IMIN */
    case 1:
        return (is_unsigned ? (old > v ? old : v) : (uint64_t)(so > sv ? so : sv)) & mask; /* IMAX */
    case 2:
        return (old ^ v) & mask;
    case 3:
        return (old & v) & mask;
    case 4:
        return (old | v) & mask;
    case 5:
        return (old + v) & mask;
    case 6:
        return old >= v ? 0 : (old + 1) & mask; /* INC: wraps at the payload */
    case 7:
        return (old == 0 || old > v) ? v : (old - 1) & mask; /* DEC */
    default:
        return old;
    }
}

static int
emu_host_sem_execute(struct emu_chan *ch, uint32_t data)
{
    uint32_t op = data & 7u;
    bool is64 = (data >> 24) & 1u, ts = (data >> 25) & 1u;
    uint64_t va = ch->sem_va, want = is64 ? ch->sem_payload : (uint32_t)ch->sem_payload;
    if (op == 1)
        return emu_chan_sem_write(ch, va, want, is64, ts, "SEM_EXECUTE RELEASE");
    uint64_t n = is64 ? 8 : 4;
    if (va & (n - 1))
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                             "SEM_EXECUTE: VA 0x%llx misaligned for %u-bit payload", (unsigned long long)va,
                             is64 ? 64u : 32u);
    if (op == 6) { /* REDUCTION */
        void *p = emu_mem_ptr(ch->desc.vm, va, n);
        if (!p)
            return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "SEM_EXECUTE REDUCTION: VA 0x%llx not mapped",
                                 (unsigned long long)va);
        uint32_t red = (data >> 27) & 0xFu;
        bool uns = (data >> 31) & 1u;
        if (is64) {
            uint64_t old = __atomic_load_n((uint64_t *)p, __ATOMIC_ACQUIRE);
            __atomic_store_n((uint64_t *)p, emu_sem_reduce(red, uns, old, want, true), __ATOMIC_RELEASE);
        } else {
            uint32_t old = __atomic_load_n((uint32_t *)p, __ATOMIC_ACQUIRE);
            __atomic_store_n((uint32_t *)p, (uint32_t)emu_sem_reduce(red, uns, old, want, false),
                             __ATOMIC_RELEASE);
        }
        return 0;
    }
    if (op == 7)
        return emu_chan_fail(ch, EMU_CHAN_ERR_PBDMA, "SEM_EXECUTE: reserved OPERATION 7");
    /* Acquire: wait (the real PBDMA waits forever; the host's wait times out instead). The
     * VM lock is dropped while sleeping so the driver can map and unmap meanwhile. */
    uint64_t sleep_ns = 2000;
    for (;;) {
        void *p = emu_mem_ptr(ch->desc.vm, va, n);
        if (!p)
            return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "SEM_EXECUTE ACQUIRE: VA 0x%llx not mapped",
                                 (unsigned long long)va);
        uint64_t v = is64 ? __atomic_load_n((uint64_t *)p, __ATOMIC_ACQUIRE)
                          : __atomic_load_n((uint32_t *)p, __ATOMIC_ACQUIRE);
        if (emu_sem_acquired(op, v, want, is64))
            return 0;
        if (atomic_load(&ch->stop))
            return -1;
        emu_vm_read_unlock(ch->desc.vm);
        emu_sleep_ns(sleep_ns);
        emu_vm_read_lock(ch->desc.vm);
        if (sleep_ns < 200000)
            sleep_ns *= 2;
    }
}

/* ==== Host (GPFIFO class) methods, rm.md §5.2 ==== */

#define EMU_MEM_OP_D_L2_FLUSH_DIRTY 0x10u /* MEM_OP_D OPERATION value (NVIDIA's clc56f.h) */

static int
emu_host_method(struct emu_chan *ch, uint32_t subc, uint32_t mthd, uint32_t data)
{
    /* SEM_ADDR_HI is 8 bits (40-bit VA) on C56F, 25 bits (57-bit) on C86F+ (§8.2) */
    uint32_t hi_mask = emu_cls_is_hopper_plus(ch->desc.gpfifo_cls) ? 0x1FFFFFFu : 0xFFu;
    switch (mthd) {
    case 0x000: { /* SET_OBJECT: NVCLASS 15:0 must be an object allocated on this channel */
        uint32_t cls = data & 0xFFFFu, n = atomic_load(&ch->class_count);
        for (uint32_t i = 0; i < n; i++) {
            if (ch->classes[i] == cls) {
                ch->subch_cls[subc] = cls;
                return 0;
            }
        }
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                             "SET_OBJECT on subchannel %u: class 0x%04x is not allocated on this channel",
                             subc, cls);
    }
    case 0x008: /* NOP */
    case 0x020: /* NON_STALL_INTERRUPT */
    case 0x024: /* FB_FLUSH */
    case 0x034: /* MEM_OP_D: OPERATION 31:27; only L2_FLUSH_DIRTY has a modelled effect */
        if ((data >> 27) == EMU_MEM_OP_D_L2_FLUSH_DIRTY)
            emu_vm_l2_flush_locked(ch->desc.vm); /* emu_chan_consume holds the read lock */
        return 0;
    case 0x028:
    case 0x02C:
    case 0x030: /* MEM_OP_A..C: operands; TLBs are not modelled */
    case 0x050: /* SET_REFERENCE */
    case 0x078: /* WFI: work is executed in order, so it is always idle here */
    case 0x080: /* YIELD */
        return 0;
    case 0x05C:
        ch->sem_va = (ch->sem_va & ~0xFFFFFFFFull) | (data & ~3u);
        return 0;
    case 0x060:
        ch->sem_va = (ch->sem_va & 0xFFFFFFFFull) | ((uint64_t)(data & hi_mask) << 32);
        return 0;
    case 0x064:
        ch->sem_payload = (ch->sem_payload & ~0xFFFFFFFFull) | data;
        return 0;
    case 0x068:
        ch->sem_payload = (ch->sem_payload & 0xFFFFFFFFull) | ((uint64_t)data << 32);
        return 0;
    case 0x06C:
        return emu_host_sem_execute(ch, data);
    default:
        return emu_chan_fail(ch, EMU_CHAN_ERR_PBDMA, "illegal host method 0x%03x (data 0x%08x)", mthd, data);
    }
}

/* ==== Copy engine, rm.md §5.4 ==== */

static int
emu_ce_launch(struct emu_chan *ch, uint32_t cls, uint32_t data)
{
    uint32_t xfer = data & 3u, sem = (data >> 3) & 3u;
    bool src_pitch = (data >> 7) & 1u, dst_pitch = (data >> 8) & 1u, multi = (data >> 9) & 1u;
    if (xfer != 0) {
        if (!src_pitch || !dst_pitch || ((data >> 10) & 1u) || ((data >> 12) & 3u))
            return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                                 "LAUNCH_DMA 0x%08x: block-linear, remap or physical copies are not modelled",
                                 data);
        uint32_t lines = multi ? ch->ce_line_count : 1;
        for (uint32_t l = 0; l < lines; l++) {
            uint64_t src = ch->ce_in + (uint64_t)l * ch->ce_pitch_in,
                     dst = ch->ce_out + (uint64_t)l * ch->ce_pitch_out;
            if (ch->ce_line_len == 0)
                break;
            void *s = emu_mem_ptr(ch->desc.vm, src, ch->ce_line_len);
            void *t = emu_mem_ptr(ch->desc.vm, dst, ch->ce_line_len);
            if (!s || !t)
                return emu_chan_fail(
                    ch, EMU_CHAN_ERR_MMU_FAULT, "LAUNCH_DMA: %s VA 0x%llx (+0x%x) not mapped",
                    s ? "destination" : "source", (unsigned long long)(s ? dst : src), ch->ce_line_len);
            memmove(t, s, ch->ce_line_len);
        }
    }
    if ((data >> 19) & 1u)
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                             "LAUNCH_DMA: semaphore reduction is not modelled");
    if (sem == 1 || sem == 2) {
        /* SEMAPHORE_PAYLOAD_SIZE (bit 27) exists on C8B5+ only: Ampere/Ada copy engines
         * release 32 bits (rm.md §5.4, §9 item 4) */
        bool p64 = emu_cls_is_hopper_plus(cls) && ((data >> 27) & 1u);
        return emu_chan_sem_write(ch, ch->ce_sem_va, ch->ce_sem_payload, p64, sem == 2,
                                  "LAUNCH_DMA semaphore");
    }
    return 0;
}

static int
emu_ce_method(struct emu_chan *ch, uint32_t cls, uint32_t mthd, uint32_t data)
{
    bool hopper = emu_cls_is_hopper_plus(cls);
    uint32_t hi_mask = hopper ? 0x1FFFFFFu : 0x1FFFFu; /* 57- vs 49-bit VAs (§8.2) */
    switch (mthd) {
    case 0x100:
        return 0; /* NOP */
    case 0x240:
        ch->ce_sem_va = (ch->ce_sem_va & 0xFFFFFFFFull) | ((uint64_t)(data & hi_mask) << 32);
        return 0;
    case 0x244:
        ch->ce_sem_va = (ch->ce_sem_va & ~0xFFFFFFFFull) | data;
        return 0;
    case 0x248:
        ch->ce_sem_payload = (ch->ce_sem_payload & ~0xFFFFFFFFull) | data;
        return 0;
    case 0x24C:
        if (!hopper)
            break; /* SET_SEMAPHORE_PAYLOAD_UPPER is Hopper+ only */
        ch->ce_sem_payload = (ch->ce_sem_payload & 0xFFFFFFFFull) | ((uint64_t)data << 32);
        return 0;
    case 0x260:
    case 0x264:
        return 0; /* SET_SRC/DST_PHYS_MODE: physical copies are refused at launch */
    case 0x300:
        return emu_ce_launch(ch, cls, data);
    case 0x400:
        ch->ce_in = (ch->ce_in & 0xFFFFFFFFull) | ((uint64_t)(data & hi_mask) << 32);
        return 0;
    case 0x404:
        ch->ce_in = (ch->ce_in & ~0xFFFFFFFFull) | data;
        return 0;
    case 0x408:
        ch->ce_out = (ch->ce_out & 0xFFFFFFFFull) | ((uint64_t)(data & hi_mask) << 32);
        return 0;
    case 0x40C:
        ch->ce_out = (ch->ce_out & ~0xFFFFFFFFull) | data;
        return 0;
    case 0x410:
        ch->ce_pitch_in = data;
        return 0;
    case 0x414:
        ch->ce_pitch_out = data;
        return 0;
    case 0x418:
        ch->ce_line_len = data;
        return 0;
    case 0x41C:
        ch->ce_line_count = data;
        return 0;
    default:
        break;
    }
    return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                         "copy class 0x%04x: illegal method 0x%04x (data 0x%08x)", cls, mthd, data);
}

/* ==== Pushbuffer interpreter, rm.md §5.1 ==== */

static int
emu_method(struct emu_chan *ch, uint32_t subc, uint32_t mthd, uint32_t data)
{
    if (mthd < 0x100)
        return emu_host_method(ch, subc, mthd, data);
    uint32_t cls = ch->subch_cls[subc];
    if (!cls)
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                             "method 0x%04x on subchannel %u with no object bound", mthd, subc);
    if ((cls & 0xFF) == 0xB5)
        return emu_ce_method(ch, cls, mthd, data);
    return emu_qmd_method(ch, cls, mthd, data);
}

static int
emu_segment_run(struct emu_chan *ch, uint64_t va, uint32_t dw_count)
{
    if (dw_count == 0)
        return 0;
    const uint32_t *pb = emu_mem_ptr(ch->desc.vm, va, (uint64_t)dw_count * 4);
    if (!pb)
        return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "pushbuffer VA 0x%llx (%u dwords) not mapped",
                             (unsigned long long)va, dw_count);
    if (hcq_debug_flags() & HCQ_DEBUG_PUSH_DUMP)
        for (uint32_t i = 0; i < dw_count; i++)
            HCQ_LOG_DEBUG("emu pb 0x%llx[%u] = 0x%08x", (unsigned long long)va, i, pb[i]);
    for (uint32_t i = 0; i < dw_count;) {
        uint32_t hdr = pb[i++];
        uint32_t op = hdr >> 29, count = (hdr >> 16) & 0x1FFFu, subc = (hdr >> 13) & 7u,
                 mthd = (hdr & 0xFFFu) << 2;
        if (op == 4) { /* IMMD_DATA_METHOD */
            if (emu_method(ch, subc, mthd, count) < 0)
                return -1;
            continue;
        }
        if (op == 7) /* END_PB_SEGMENT */
            return 0;
        if (op == 0 && count == 0)
            continue; /* a zero-count header does nothing */
        if (op != 1 && op != 3 && op != 5)
            return emu_chan_fail(ch, EMU_CHAN_ERR_PBDMA,
                                 "pushbuffer 0x%llx dword %u: header 0x%08x has SEC_OP %u",
                                 (unsigned long long)va, i - 1, hdr, op);
        if (count > dw_count - i)
            return emu_chan_fail(ch, EMU_CHAN_ERR_PBDMA,
                                 "pushbuffer 0x%llx dword %u: header 0x%08x wants %u dwords, %u left",
                                 (unsigned long long)va, i - 1, hdr, count, dw_count - i);
        for (uint32_t k = 0; k < count; k++) {
            uint32_t m = op == 1 ? mthd + 4 * k : op == 3 ? mthd : (k == 0 ? mthd : mthd + 4);
            if (emu_method(ch, subc, m, pb[i + k]) < 0)
                return -1;
        }
        i += count;
    }
    return 0;
}

/* One GPFIFO entry (rm.md §4.3): 40-bit 4-byte-aligned VA, LENGTH 62:42. */
static int
emu_gpfifo_entry_run(struct emu_chan *ch, uint64_t e)
{
    uint64_t va = e & 0xFFFFFFFFFCull;
    uint32_t dw = (uint32_t)((e >> 42) & 0x1FFFFFu);
    if (e & 1u)
        return emu_chan_fail(ch, EMU_CHAN_ERR_PBDMA,
                             "GPFIFO entry 0x%016llx: conditional FETCH is not modelled",
                             (unsigned long long)e);
    return emu_segment_run(ch, va, dw);
}

/* ==== Doorbell ==== */

static volatile uint32_t *
emu_chan_doorbell(struct emu_chan *ch)
{
    return (volatile uint32_t *)((uint8_t *)emu_bo_host(ch->desc.doorbell_bo) + ch->desc.doorbell_off);
}

static volatile uint32_t *
emu_chan_userd(struct emu_chan *ch)
{
    return (volatile uint32_t *)((uint8_t *)emu_bo_host(ch->desc.userd_bo) + ch->desc.userd_off);
}

static bool
emu_chan_has_work(struct emu_chan *ch)
{
    return __atomic_load_n(&emu_chan_userd(ch)[0x8C / 4], __ATOMIC_ACQUIRE) != ch->get;
}

/* Read and clear the doorbell word; attribute the token to its channel. On hardware every
 * doorbell store is delivered; here it is a plain word, so a store can be overwritten before
 * we see it: any doorbell with a channel's token also lets the other channels on that page
 * that have work run - also when its own channel is idle (its work already run), since the
 * ring it overwrote may be theirs: a driver that rang b then a, a's work already taken on an
 * earlier doorbell, left b waiting forever (test_nvgpu_l4t l4t_doorbell_batch_knob under
 * qemu; test_emu doorbell_overwritten_by_idle_channel). A token no channel owns still runs
 * nothing, as on hardware. Called with d->gpu_lock held. */
static void
emu_doorbell_poll_locked(struct emu_dev *d, struct emu_chan *self)
{
    volatile uint32_t *w = emu_chan_doorbell(self);
    uint32_t tok = __atomic_exchange_n(w, EMU_DOORBELL_IDLE, __ATOMIC_ACQ_REL);
    if (tok == EMU_DOORBELL_IDLE || (d->opts.drop_doorbell && ++d->doorbells_seen >= d->opts.drop_doorbell))
        return;
    struct emu_chan *target = NULL;
    for (uint32_t i = 0; i < d->chan_count; i++)
        if (d->chans[i]->desc.token == tok && emu_chan_doorbell(d->chans[i]) == w)
            target = d->chans[i];
    if (!target) {
        HCQ_LOG_DEBUG("emu: doorbell with unknown token 0x%x ignored", tok);
        return;
    }
    atomic_store(&target->rung, true);
    const bool idle = !emu_chan_has_work(target);
    for (uint32_t i = 0; i < d->chan_count; i++)
        if (d->chans[i] != target && emu_chan_doorbell(d->chans[i]) == w && emu_chan_has_work(d->chans[i])) {
            atomic_store(&d->chans[i]->lenient, true);
            /* the price of the rule: a driver ringing the wrong (idle) channel is not caught here */
            if (idle)
                HCQ_LOG_DEBUG("emu: doorbell for idle channel 0x%x also runs channel 0x%x's work", tok,
                              d->chans[i]->desc.token);
        }
}

/* ==== The channel thread ==== */

static uint64_t
emu_chan_ring_entry(struct emu_chan *ch, uint32_t idx, bool *ok)
{
    const uint64_t *ring;
    if (ch->desc.ring_bo)
        ring = (const uint64_t *)((uint8_t *)emu_bo_host(ch->desc.ring_bo) + ch->desc.ring_off);
    else
        ring = emu_mem_ptr(ch->desc.vm, ch->desc.ring_va, (uint64_t)ch->desc.entries * 8);
    *ok = ring != NULL;
    return ring ? __atomic_load_n(&ring[idx], __ATOMIC_ACQUIRE) : 0;
}

static void
emu_chan_consume(struct emu_chan *ch)
{
    volatile uint32_t *userd = emu_chan_userd(ch);
    uint32_t put = __atomic_load_n(&userd[0x8C / 4], __ATOMIC_ACQUIRE);
    if (put >= ch->desc.entries) {
        emu_chan_fail(ch, EMU_CHAN_ERR_PBDMA, "USERD GPPut %u beyond the ring's %u entries", put,
                      ch->desc.entries);
        return;
    }
    emu_vm_read_lock(ch->desc.vm);
    while (ch->get != put && !atomic_load(&ch->stop)) {
        bool ok;
        uint64_t e = emu_chan_ring_entry(ch, ch->get, &ok);
        int r = ok ? emu_gpfifo_entry_run(ch, e)
                   : emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "GPFIFO ring VA 0x%llx not mapped",
                                   (unsigned long long)ch->desc.ring_va);
        if (r < 0)
            break;
        ch->get = (ch->get + 1) & (ch->desc.entries - 1);
        __atomic_store_n(&userd[0x88 / 4], ch->get, __ATOMIC_RELEASE); /* GPGet */
    }
    emu_vm_read_unlock(ch->desc.vm);
}

static void *
emu_chan_thread(void *arg)
{
    struct emu_chan *ch = arg;
    struct emu_dev *d = ch->d;
    uint64_t sleep_ns = 10000;
    while (!atomic_load(&ch->stop)) {
        pthread_mutex_lock(&d->gpu_lock);
        emu_doorbell_poll_locked(d, ch);
        pthread_mutex_unlock(&d->gpu_lock);
        bool go = !atomic_load(&ch->hung) && atomic_load(&ch->runnable) &&
                  emu_chan_error_get(ch, NULL, 0) == EMU_CHAN_ERR_NONE && emu_chan_has_work(ch) &&
                  (atomic_load(&ch->rung) || atomic_load(&ch->lenient));
        if (!go) {
            emu_sleep_ns(sleep_ns);
            if (sleep_ns < 500000)
                sleep_ns += sleep_ns / 2;
            continue;
        }
        sleep_ns = 10000;
        atomic_store(&ch->rung, false);
        atomic_store(&ch->lenient, false);
        emu_chan_consume(ch);
    }
    return NULL;
}

/* ==== Lifetime ==== */

int
emu_chan_create(struct emu_dev *d, const struct emu_chan_desc *desc, struct emu_chan **ch_out)
{
    *ch_out = NULL;
    if (!desc->vm || !desc->userd_bo || !desc->doorbell_bo || desc->entries < 2 ||
        (desc->entries & (desc->entries - 1)) || desc->doorbell_off + 4 > emu_bo_size(desc->doorbell_bo) ||
        desc->userd_off + 0x90 > emu_bo_size(desc->userd_bo) ||
        (desc->ring_bo && desc->ring_off + (uint64_t)desc->entries * 8 > emu_bo_size(desc->ring_bo)))
        return -EINVAL;
    struct emu_chan *ch = calloc(1, sizeof *ch);
    if (!ch)
        return -ENOMEM;
    ch->d = d;
    ch->desc = *desc;
    pthread_mutex_init(&ch->err_lock, NULL);
    emu_bo_ref(desc->userd_bo);
    emu_bo_ref(desc->doorbell_bo);
    if (desc->ring_bo)
        emu_bo_ref(desc->ring_bo);
    /* GPGet starts where GPPut is (a fresh USERD reads 0 / 0) */
    ch->get = emu_chan_userd(ch)[0x8C / 4] & (desc->entries - 1);
    uint32_t zero = 0;
    __atomic_compare_exchange_n(emu_chan_doorbell(ch), &zero, EMU_DOORBELL_IDLE, false, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);

    pthread_mutex_lock(&d->gpu_lock);
    int err = 0;
    if (d->chan_count == d->chan_cap) {
        uint32_t cap = d->chan_cap ? d->chan_cap * 2 : 8;
        struct emu_chan **n = realloc(d->chans, cap * sizeof *n);
        if (!n)
            err = -ENOMEM;
        else {
            d->chans = n;
            d->chan_cap = cap;
        }
    }
    if (!err)
        d->chans[d->chan_count++] = ch;
    pthread_mutex_unlock(&d->gpu_lock);
    if (!err && pthread_create(&ch->thread, NULL, emu_chan_thread, ch) != 0)
        err = -EAGAIN;
    if (err) {
        emu_chan_destroy(ch);
        return err;
    }
    ch->thread_started = true;
    atomic_fetch_add(&emu_live_threads, 1);
    atomic_fetch_add(&emu_live_chans, 1);
    *ch_out = ch;
    return 0;
}

void
emu_chan_destroy(struct emu_chan *ch)
{
    if (!ch)
        return;
    struct emu_dev *d = ch->d;
    atomic_store(&ch->stop, true);
    if (ch->thread_started) {
        pthread_join(ch->thread, NULL);
        atomic_fetch_sub(&emu_live_threads, 1);
        atomic_fetch_sub(&emu_live_chans, 1);
    }
    pthread_mutex_lock(&d->gpu_lock);
    for (uint32_t i = 0; i < d->chan_count; i++) {
        if (d->chans[i] == ch) {
            d->chans[i] = d->chans[--d->chan_count];
            break;
        }
    }
    pthread_mutex_unlock(&d->gpu_lock);
    emu_bo_unref(ch->desc.userd_bo);
    emu_bo_unref(ch->desc.doorbell_bo);
    emu_bo_unref(ch->desc.ring_bo);
    pthread_mutex_destroy(&ch->err_lock);
    free(ch);
}

void
emu_chan_add_class(struct emu_chan *ch, uint32_t cls)
{
    uint32_t n = atomic_load(&ch->class_count);
    if (n < EMU_CHAN_MAX_CLASSES) {
        ch->classes[n] = cls;
        atomic_store(&ch->class_count, n + 1);
    }
}

void
emu_chan_set_runnable(struct emu_chan *ch, bool runnable)
{
    atomic_store(&ch->runnable, runnable);
}

uint32_t
emu_chan_token(const struct emu_chan *ch)
{
    return ch->desc.token;
}

void
emu_gpu_fini(struct emu_dev *d)
{
    (void)d; /* channels belong to the driver model, which destroyed them before */
}
