/* SPDX-License-Identifier: MIT */
/*
 * rm_chan.c - GPFIFO channels of the RM kernel-driver level: the channel group (TSG) and
 * context share made once per kmd, then per channel the GPFIFO ring + USERD area, error
 * notifier, channel object, engine object, work-submit token, UVM registration and TSG
 * schedule (docs/hw/rm.md §2 steps 17-21, §4.1); the doorbell kick (§4.4) and the error
 * notifier poll behind check(). Layer: kmd.
 */
#include "rm_priv.h"
#include "rm_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RM_CHAN_ENTRIES_MIN 64u /* USERD right after the ring stays 512-byte aligned */
#define RM_CHAN_ENTRIES_MAX (1u << 20)

/* Steps 17 and 19, once: TSG on the GR engine, then a context share on our VA space. */
static enum hcq_status
rm_tsg_create(struct rm_kmd *k)
{
    NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS g = {.engineType = NV2080_ENGINE_TYPE_GRAPHICS};
    enum hcq_status st = rm_alloc(k, k->hdevice, KEPLER_CHANNEL_GROUP_A, &g, sizeof g, &k->htsg);
    if (st != HCQ_OK)
        return st;
    NV_CTXSHARE_ALLOCATION_PARAMETERS c = {.hVASpace = k->hvaspace,
                                           .flags = NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC};
    st = rm_alloc(k, k->htsg, FERMI_CONTEXT_SHARE_A, &c, sizeof c, &k->hctxshare);
    if (st != HCQ_OK) {
        rm_free(k, k->hdevice, k->htsg);
        k->htsg = 0;
    }
    return st;
}

static void
rm_chan_link(struct rm_kmd *k, struct rm_chan *c, bool add)
{
    pthread_mutex_lock(&k->lock);
    if (add) {
        c->next = k->chans;
        if (k->chans)
            k->chans->prev = c;
        k->chans = c;
    } else {
        if (c->prev)
            c->prev->next = c->next;
        else
            k->chans = c->next;
        if (c->next)
            c->next->prev = c->prev;
    }
    pthread_mutex_unlock(&k->lock);
}

/* Free what exists of c (objects first, then their memory); c is not linked. */
static void
rm_chan_release(struct rm_kmd *k, struct rm_chan *c)
{
    if (c->hobj) {
        rm_free(k, c->hchan, c->hobj);
        if (c->base.engine == KMD_ENGINE_COMPUTE)
            k->gr_objects--;
    }
    if (c->hchan)
        rm_free(k, k->htsg, c->hchan);
    /* c->uvm_va stays allocated: UVM keeps the channel's range registered until the
     * uvm fd closes (we do not send UVM_UNREGISTER_CHANNEL, whose layout changed across
     * branches), so the range must not be handed out again. */
    if (c->area)
        rm_mem_free(&k->base, &c->area->base);
    if (c->notifier)
        rm_mem_free(&k->base, &c->notifier->base);
    free(c);
}

/* rm.md §4.1 steps 3-4: work-submit token, then UVM_REGISTER_CHANNEL on a fresh range. */
static enum hcq_status
rm_chan_token_register(struct rm_kmd *k, struct rm_chan *c)
{
    NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS t = {.workSubmitToken = 0xFFFFFFFFu};
    enum hcq_status st = rm_control(k, c->hchan, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &t, sizeof t,
                                    "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN", false);
    if (st != HCQ_OK)
        return st;
    if (t.workSubmitToken == 0xFFFFFFFFu)
        return hcq_err(HCQ_ERR_DRIVER,
                       "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN: token left at 0xffffffff");
    c->base.token = t.workSubmitToken;

    pthread_mutex_lock(&k->lock);
    st = rm_va_alloc(&k->va_low, RM_CHANNEL_UVM_RANGE_B, 0x200000, &c->uvm_va);
    pthread_mutex_unlock(&k->lock);
    if (st != HCQ_OK)
        return hcq_err(HCQ_ERR_NOMEM, "rm: no VA for the UVM channel range (64 MiB)");
    UVM_REGISTER_CHANNEL_PARAMS r = {.rmCtrlFd = k->fd_ctl,
                                     .hClient = k->hclient,
                                     .hChannel = c->hchan,
                                     .base = c->uvm_va,
                                     .length = RM_CHANNEL_UVM_RANGE_B};
    memcpy(r.gpuUuid, k->uuid, sizeof k->uuid);
    return rm_uvm(k, k->fd_uvm, UVM_REGISTER_CHANNEL, &r, &r.rmStatus, "UVM_REGISTER_CHANNEL");
}

static enum hcq_status
rm_chan_make(struct rm_kmd *k, enum kmd_engine engine, uint32_t entries, bool internal, struct rm_chan **out)
{
    struct kmd *kmd = &k->base;
    enum hcq_status st;
    struct rm_chan *c = calloc(1, sizeof *c);
    if (!c)
        return hcq_err(HCQ_ERR_NOMEM, "rm: channel object");
    c->index = k->chan_count++;
    c->internal = internal;
    c->base.engine = engine;
    c->base.entries = entries;
    c->base.obj_cls = engine == KMD_ENGINE_COMPUTE ? k->compute_cls : k->copy_cls;
    c->base.priv = c;

    /* Ring + USERD in one contiguous, CPU-mapped vidmem area (rm.md §2 step 18, §4.1). */
    uint64_t ring_B = (uint64_t)entries * 8;
    struct kmd_mem *area = NULL;
    st = rm_mem_alloc(kmd, ring_B + RM_USERD_B, 0,
                      KMD_MEM_VRAM | KMD_MEM_CONTIG | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA, &area);
    if (st != HCQ_OK)
        goto fail;
    c->area = area->priv;
    memset(area->map, 0, area->size_B);
    if ((st = rm_mem_alloc_notifier(k, RM_NOTIFIER_B, &c->notifier)) != HCQ_OK)
        goto fail;

    NV_CHANNEL_ALLOC_PARAMS p = {
        .hObjectError = c->notifier->hmem,
        .hObjectBuffer = c->area->hmem,
        .gpFifoOffset = area->va,
        .gpFifoEntries = entries,
        .hContextShare = k->hctxshare,
        .hUserdMemory = {c->area->hmem},
        .userdOffset = {ring_B},
    };
    if ((st = rm_alloc(k, k->htsg, k->gpfifo_cls, &p, sizeof p, &c->hchan)) != HCQ_OK)
        goto fail;
    if ((st = rm_alloc(k, c->hchan, c->base.obj_cls, NULL, 0, &c->hobj)) != HCQ_OK)
        goto fail;
    if (engine == KMD_ENGINE_COMPUTE)
        k->gr_objects++;
    if ((st = rm_chan_token_register(k, c)) != HCQ_OK)
        goto fail;
    /* Step 21. Sent again for every later channel: RM's group schedule walks the members
     * that exist at the call, so a channel added afterwards needs the TSG scheduled again. */
    NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS s = {.bEnable = 1};
    if ((st = rm_control(k, k->htsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &s, sizeof s,
                         "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE", false)) != HCQ_OK)
        goto fail;

    c->base.ring = (volatile uint64_t *)area->map;
    c->base.userd = (volatile uint8_t *)area->map + ring_B;
    rm_chan_link(k, c, true);
    HCQ_LOG_DEBUG("rm: channel %u%s: %s 0x%04x, %u entries at GPU VA 0x%llx, token 0x%x", c->index,
                  internal ? " (GR anchor)" : "", rm_class_name(c->base.obj_cls), c->base.obj_cls, entries,
                  (unsigned long long)area->va, c->base.token);
    *out = c;
    return HCQ_OK;
fail:
    rm_chan_release(k, c);
    return st;
}

enum hcq_status
rm_chan_create(struct kmd *kmd, enum kmd_engine engine, uint32_t entries, struct kmd_channel **chan_out)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    *chan_out = NULL;
    if (entries < RM_CHAN_ENTRIES_MIN || entries > RM_CHAN_ENTRIES_MAX || (entries & (entries - 1)) ||
        (engine != KMD_ENGINE_COMPUTE && engine != KMD_ENGINE_COPY))
        return hcq_err(HCQ_ERR_INVALID,
                       "rm_chan_create: engine %d, %u entries (expected compute/copy, a power of "
                       "two in %u..%u)",
                       (int)engine, entries, RM_CHAN_ENTRIES_MIN, RM_CHAN_ENTRIES_MAX);
    enum hcq_status st;
    if (!k->htsg && (st = rm_tsg_create(k)) != HCQ_OK)
        return st;
    /*
     * UVM_REGISTER_CHANNEL retains the TSG's GR context buffers, which exist only once a
     * compute-class object lives in the TSG. Seen on H200 / 580.159.04 (docs/rm-backend.md, run 2):
     * a copy channel made first in a fresh TSG failed UVM_REGISTER_CHANNEL with
     * NV_ERR_INVALID_OBJECT (dmesg: "Check failed: pGrCtxBufferMemDesc != NULL",
     * "nvGpuOpsRetainChannel: Object not valid"), while compute-then-copy (rm.md §2's
     * order) works. So a copy channel with no compute object in the TSG first gets a
     * small idle compute channel of the kmd's own, kept until the kmd is destroyed.
     */
    struct rm_chan *c = NULL;
    if (engine == KMD_ENGINE_COPY && k->gr_objects == 0 &&
        (st = rm_chan_make(k, KMD_ENGINE_COMPUTE, RM_CHAN_ENTRIES_MIN, true, &c)) != HCQ_OK)
        return st;
    if ((st = rm_chan_make(k, engine, entries, false, &c)) != HCQ_OK)
        return st;
    *chan_out = &c->base;
    return HCQ_OK;
}

void
rm_chan_destroy(struct kmd *kmd, struct kmd_channel *chan)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    struct rm_chan *c = chan->priv;
    assert(c && &c->base == chan);
    rm_chan_link(k, c, false);
    rm_chan_release(k, c);
}

/* rm.md §4.4: ring entry and pushbuffer are written by the caller; make them (and then
 * GPPut) visible before the doorbell. BAR1 mappings may be write-combined, which the
 * plain atomic fence does not order on x86, hence sfence; aarch64 needs a full-system
 * store barrier before a device write. */
static inline void
rm_store_fence(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#if defined(__x86_64__)
    __asm__ __volatile__("sfence" ::: "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("dsb st" ::: "memory");
#endif
}

void
rm_chan_kick(struct kmd *kmd, struct kmd_channel *chan, uint32_t put)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    rm_store_fence();
    *(volatile uint32_t *)(chan->userd + RM_USERD_GP_PUT) = put & (chan->entries - 1);
    rm_store_fence();
    *(volatile uint32_t *)(k->usermode + NVC361_NOTIFY_CHANNEL_PENDING) = chan->token;
}

/* The error notifier of each channel (rm_abi.h NvNotification): RM fills record 0 with
 * the Xid code in info32 when it tears the channel down. */
enum hcq_status
rm_chan_check(struct kmd *kmd, char *reason, size_t reason_B)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    enum hcq_status st = HCQ_OK;
    pthread_mutex_lock(&k->lock);
    for (struct rm_chan *c = k->chans; c; c = c->next) {
        const volatile NvNotification *n =
            (const volatile NvNotification *)c->notifier->base.map + NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR;
        uint32_t info32 = n->info32;
        uint16_t info16 = n->info16, status = n->status;
        if (!info32 && !status)
            continue;
        if (reason && reason_B)
            snprintf(reason, reason_B,
                     "rm: channel %u (%s 0x%04x, token 0x%x): Xid %u (%s), info16 0x%x, status 0x%x",
                     c->index, rm_class_name(c->base.obj_cls), c->base.obj_cls, c->base.token, info32,
                     rm_xid_name(info32), info16, status);
        st = HCQ_ERR_DEVICE_LOST;
        break;
    }
    pthread_mutex_unlock(&k->lock);
    return st;
}
