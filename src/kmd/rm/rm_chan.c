/* SPDX-License-Identifier: MIT */
/*
 * rm_chan.c - GPFIFO channels of the RM kernel-driver level: the channel group (TSG) and
 * context share made once per kmd, then per channel the GPFIFO ring + USERD area, error
 * notifier, channel object, engine object, work-submit token, UVM registration and TSG
 * schedule (docs/hw/rm.md §2 steps 17-21, §4.1); the doorbell kick (§4.4) and the error
 * notifier poll behind check(). A copy queue's channel (KMD_ENGINE_COPY_ASYNC) gets a group
 * of its own on an asynchronous copy engine (LCE) picked from the engine list, the way
 * UVM makes its copy channels (docs/rm-backend.md "Copy engines"); the GR copy engine in the
 * compute group stays for compute queues' copy helpers and is the fallback. Layer: kmd.
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

/* ==== Asynchronous copy engines ==== */

static unsigned
rm_lce_index(const struct rm_lce *l)
{
    return RM_ENGINE_TYPE_COPY_IDX(l->engine_type);
}

/* UVM's order for copies inside one GPU (nvidia-uvm uvm_channel.c, compare_ce_for_channel_type,
 * UVM_CHANNEL_TYPE_GPU_INTERNAL: "the number of PCEs is a good measure" of bandwidth): more
 * PCEs first, then engines not meant for NVLink peers, then engines that do not share their
 * PCEs, then the lower index. */
static int
rm_lce_cmp(const void *pa, const void *pb)
{
    const struct rm_lce *a = pa, *b = pb;
    int d = __builtin_popcount(b->pce_mask) - __builtin_popcount(a->pce_mask);
    if (d)
        return d;
    d = !!(a->caps[0] & NV2080_CTRL_CE_CAPS_CE_NVLINK_P2P) -
        !!(b->caps[0] & NV2080_CTRL_CE_CAPS_CE_NVLINK_P2P);
    if (d)
        return d;
    d = !!(a->caps[0] & NV2080_CTRL_CE_CAPS_CE_SHARED) - !!(b->caps[0] & NV2080_CTRL_CE_CAPS_CE_SHARED);
    if (d)
        return d;
    return (int)rm_lce_index(a) - (int)rm_lce_index(b);
}

/* One engine of the list: keep it when it is a copy engine that is not a GR copy engine
 * (those belong to the compute group). Controls the driver refuses only drop the engine. */
static void
rm_lce_consider(struct rm_kmd *k, uint32_t et)
{
    if (!RM_ENGINE_TYPE_IS_COPY(et) || k->lce_count == RM_LCE_MAX)
        return;
    NV2080_CTRL_CE_GET_CAPS_V2_PARAMS caps = {.ceEngineType = et};
    if (rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_CE_GET_CAPS_V2, &caps, sizeof caps,
                   "NV2080_CTRL_CMD_CE_GET_CAPS_V2", true) != HCQ_OK) {
        HCQ_LOG_DEBUG("rm: COPY%u: NV2080_CTRL_CMD_CE_GET_CAPS_V2 refused; not used",
                      RM_ENGINE_TYPE_COPY_IDX(et));
        return;
    }
    if (caps.capsTbl[0] & NV2080_CTRL_CE_CAPS_CE_GRCE)
        return;
    NV2080_CTRL_CE_GET_CE_PCE_MASK_PARAMS pce = {.ceEngineType = et};
    if (rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK, &pce, sizeof pce,
                   "NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK", true) != HCQ_OK)
        pce.pceMask = 0; /* ranked last; still usable */
    k->lces[k->lce_count++] = (struct rm_lce){
        .engine_type = et, .pce_mask = pce.pceMask, .caps = {caps.capsTbl[0], caps.capsTbl[1]}};
}

void
rm_lce_probe(struct rm_kmd *k)
{
    k->lce_count = 0;
    k->lce_off = true;
    const char *env = getenv("HCQ_RM_COPY_ENGINE");
    NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS *e = NULL;
    if (env && strcmp(env, "grce") == 0) {
        snprintf(k->lce_why, sizeof k->lce_why, "HCQ_RM_COPY_ENGINE=grce");
        goto done;
    }
    if (env && *env && strcmp(env, "lce") != 0)
        HCQ_LOG_WARN("rm: HCQ_RM_COPY_ENGINE=%s: expected grce or lce; using lce", env);
    if (!(e = calloc(1, sizeof *e))) {
        snprintf(k->lce_why, sizeof k->lce_why, "no host memory for the engine list");
        goto done;
    }
    if (rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, e, sizeof *e,
                   "NV2080_CTRL_CMD_GPU_GET_ENGINES_V2", true) != HCQ_OK) {
        snprintf(k->lce_why, sizeof k->lce_why, "NV2080_CTRL_CMD_GPU_GET_ENGINES_V2 refused");
        goto done;
    }
    uint32_t n =
        e->engineCount < NV2080_GPU_MAX_ENGINES_LIST_SIZE ? e->engineCount : NV2080_GPU_MAX_ENGINES_LIST_SIZE;
    for (uint32_t i = 0; i < n; i++)
        rm_lce_consider(k, e->engineList[i]);
    if (k->lce_count == 0) {
        snprintf(k->lce_why, sizeof k->lce_why, "no asynchronous copy engine among the %u engines listed", n);
        goto done;
    }
    qsort(k->lces, k->lce_count, sizeof k->lces[0], rm_lce_cmp);
    k->lce_off = false;
done:
    free(e);
    k->base.info.async_copy_engines = k->lce_off ? 0 : k->lce_count;
    if (k->lce_off) {
        HCQ_LOG_INFO("rm: copy queues use the GR copy engine: %s", k->lce_why);
        return;
    }
    char list[RM_LCE_MAX * 24] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < k->lce_count && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%sCOPY%u (PCEs 0x%x%s)", i ? ", " : "",
                                 rm_lce_index(&k->lces[i]), k->lces[i].pce_mask,
                                 k->lces[i].caps[0] & NV2080_CTRL_CE_CAPS_CE_SHARED ? ", shared" : "");
    HCQ_LOG_INFO("rm: copy queues use asynchronous copy engines, best first: %s", list);
}

/* The usable LCE with the fewest channels of ours (ties: the better ranked), its count taken;
 * -1 when none is left. */
static int
rm_lce_take(struct rm_kmd *k)
{
    int best = -1;
    pthread_mutex_lock(&k->lock);
    for (uint32_t i = 0; !k->lce_off && i < k->lce_count; i++)
        if (!k->lces[i].failed && (best < 0 || k->lces[i].chans < k->lces[best].chans))
            best = (int)i;
    if (best >= 0)
        k->lces[best].chans++;
    pthread_mutex_unlock(&k->lock);
    return best;
}

/* A channel could not be made on LCE i: never try it again; with none left, copy queues go
 * to the GR copy engine from now on. */
static void
rm_lce_fail(struct rm_kmd *k, int i, enum hcq_status st)
{
    pthread_mutex_lock(&k->lock);
    k->lces[i].failed = true;
    uint32_t left = 0;
    for (uint32_t j = 0; j < k->lce_count; j++)
        left += !k->lces[j].failed;
    if (left == 0) {
        k->lce_off = true;
        snprintf(k->lce_why, sizeof k->lce_why, "making a channel failed on every asynchronous copy engine");
    }
    k->base.info.async_copy_engines = left;
    pthread_mutex_unlock(&k->lock);
    HCQ_LOG_WARN("rm: no copy channel on COPY%u (%s: %s); %s", rm_lce_index(&k->lces[i]), hcq_status_str(st),
                 hcq_last_error(),
                 left ? "trying the next asynchronous copy engine" : "using the GR copy engine");
}

/* ==== Channels ==== */

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
        rm_free(k, c->htsg, c->hchan);
    if (c->lce >= 0) {
        if (c->htsg)
            rm_free(k, k->hdevice, c->htsg);
        pthread_mutex_lock(&k->lock);
        k->lces[c->lce].chans--;
        pthread_mutex_unlock(&k->lock);
    }
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

/* The group of a channel on LCE c->lce, as UVM makes its copy channels' groups
 * (nv_gpu_ops.c nvGpuOpsTsgAllocate): KEPLER_CHANNEL_GROUP_A with the engine type and our VA
 * space; its channel takes the VA space from it (no context share: subcontexts are GR's). */
static enum hcq_status
rm_chan_group(struct rm_kmd *k, struct rm_chan *c)
{
    if (c->lce < 0) {
        c->htsg = k->htsg;
        return HCQ_OK;
    }
    NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS g = {.hVASpace = k->hvaspace,
                                                .engineType = k->lces[c->lce].engine_type};
    return rm_alloc(k, k->hdevice, KEPLER_CHANNEL_GROUP_A, &g, sizeof g, &c->htsg);
}

/* Step 21, on the channel's group. The GR group's is sent again for every later channel:
 * RM's group schedule walks the members that exist at the call, so a channel added
 * afterwards needs the TSG scheduled again. An LCE channel is alone in its group. (UVM
 * schedules its copy channels with NVA06F_CTRL_CMD_GPFIFO_SCHEDULE on the channel; for a
 * one-channel group the group's schedule is the same request, and the one we already use.) */
static enum hcq_status
rm_chan_schedule(struct rm_kmd *k, struct rm_chan *c)
{
    NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS s = {.bEnable = 1};
    return rm_control(k, c->htsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &s, sizeof s,
                      "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE", false);
}

/* A channel of `engine` in the GR group (lce < 0; the caller made the group) or in a group
 * of its own on LCE `lce` (whose channel count the caller took). */
static enum hcq_status
rm_chan_make(struct rm_kmd *k, enum kmd_engine engine, uint32_t entries, bool internal, int lce,
             struct rm_chan **out)
{
    struct kmd *kmd = &k->base;
    enum hcq_status st;
    struct rm_chan *c = calloc(1, sizeof *c);
    if (!c) {
        if (lce >= 0) {
            pthread_mutex_lock(&k->lock);
            k->lces[lce].chans--;
            pthread_mutex_unlock(&k->lock);
        }
        return hcq_err(HCQ_ERR_NOMEM, "rm: channel object");
    }
    c->index = k->chan_count++;
    c->internal = internal;
    c->lce = lce;
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

    if ((st = rm_chan_group(k, c)) != HCQ_OK)
        goto fail;
    /* LCE: the channel names its engine and inherits the group's VA space (hVASpace 0), and
     * the copy object says which engine it drives (NVB0B5 VERSION_1), both as UVM does. */
    uint32_t et = lce >= 0 ? k->lces[lce].engine_type : 0;
    NV_CHANNEL_ALLOC_PARAMS p = {
        .hObjectError = c->notifier->hmem,
        .hObjectBuffer = c->area->hmem,
        .gpFifoOffset = area->va,
        .gpFifoEntries = entries,
        .hContextShare = lce >= 0 ? 0 : k->hctxshare,
        .hUserdMemory = {c->area->hmem},
        .userdOffset = {ring_B},
        .engineType = et,
    };
    if ((st = rm_alloc(k, c->htsg, k->gpfifo_cls, &p, sizeof p, &c->hchan)) != HCQ_OK)
        goto fail;
    NVB0B5_ALLOCATION_PARAMETERS ce = {.version = NVB0B5_ALLOCATION_PARAMETERS_VERSION_1, .engineType = et};
    if ((st = rm_alloc(k, c->hchan, c->base.obj_cls, lce >= 0 ? &ce : NULL, lce >= 0 ? sizeof ce : 0,
                       &c->hobj)) != HCQ_OK)
        goto fail;
    if (engine == KMD_ENGINE_COMPUTE)
        k->gr_objects++;
    if ((st = rm_chan_token_register(k, c)) != HCQ_OK)
        goto fail;
    if ((st = rm_chan_schedule(k, c)) != HCQ_OK)
        goto fail;

    c->base.ring = (volatile uint64_t *)area->map;
    c->base.userd = (volatile uint8_t *)area->map + ring_B;
    rm_chan_link(k, c, true);
    char where[16] = "GR group";
    if (lce >= 0)
        snprintf(where, sizeof where, "COPY%u", rm_lce_index(&k->lces[lce]));
    HCQ_LOG_DEBUG("rm: channel %u%s: %s 0x%04x on %s, %u entries at GPU VA 0x%llx, token 0x%x", c->index,
                  internal ? " (GR anchor)" : "", rm_class_name(c->base.obj_cls), c->base.obj_cls, where,
                  entries, (unsigned long long)area->va, c->base.token);
    *out = c;
    return HCQ_OK;
fail:
    rm_chan_release(k, c);
    return st;
}

static enum hcq_status rm_chan_create_locked(struct rm_kmd *k, enum kmd_engine engine, uint32_t entries,
                                             struct kmd_channel **chan_out);

/* Serialized (k->chan_lock): the first channel makes the TSG (k->htsg was tested and set with no
 * lock), a copy channel may first need the GR anchor (gr_objects), and the group schedule walks
 * the members that exist at the call. Three queues created at once from three threads once failed
 * NV_ERR_INVALID_OBJECT_PARENT on emu:gh100 without it (hcq suite
 * queues_made_in_threads exercises the path). Channels are made rarely: the lock costs nothing. */
enum hcq_status
rm_chan_create(struct kmd *kmd, enum kmd_engine engine, uint32_t entries, struct kmd_channel **chan_out)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    pthread_mutex_lock(&k->chan_lock);
    enum hcq_status st = rm_chan_create_locked(k, engine, entries, chan_out);
    pthread_mutex_unlock(&k->chan_lock);
    return st;
}

static enum hcq_status
rm_chan_create_locked(struct rm_kmd *k, enum kmd_engine engine, uint32_t entries,
                      struct kmd_channel **chan_out)
{
    *chan_out = NULL;
    if (entries < RM_CHAN_ENTRIES_MIN || entries > RM_CHAN_ENTRIES_MAX || (entries & (entries - 1)) ||
        (unsigned)engine >= KMD_ENGINE_KINDS)
        return hcq_err(HCQ_ERR_INVALID,
                       "rm_chan_create: engine %d, %u entries (expected compute/copy/async copy, a power of "
                       "two in %u..%u)",
                       (int)engine, entries, RM_CHAN_ENTRIES_MIN, RM_CHAN_ENTRIES_MAX);
    enum hcq_status st;
    struct rm_chan *c = NULL;
    if (engine == KMD_ENGINE_COPY_ASYNC) {
        for (int lce; (lce = rm_lce_take(k)) >= 0;) {
            if ((st = rm_chan_make(k, engine, entries, false, lce, &c)) == HCQ_OK) {
                *chan_out = &c->base;
                return HCQ_OK;
            }
            rm_lce_fail(k, lce, st);
        }
        engine = KMD_ENGINE_COPY; /* the GR copy engine, as before LCEs were used */
    }
    if (!k->htsg && (st = rm_tsg_create(k)) != HCQ_OK)
        return st;
    /*
     * UVM_REGISTER_CHANNEL retains the TSG's GR context buffers, which exist only once a
     * compute-class object lives in the TSG. Seen on H200 / 580.159.04 (docs/rm-backend.md, bring-up):
     * a copy channel made first in a fresh TSG failed UVM_REGISTER_CHANNEL with
     * NV_ERR_INVALID_OBJECT (dmesg: "Check failed: pGrCtxBufferMemDesc != NULL",
     * "nvGpuOpsRetainChannel: Object not valid"), while compute-then-copy (rm.md §2's
     * order) works. So a copy channel with no compute object in the TSG first gets a
     * small idle compute channel of the kmd's own, kept until the kmd is destroyed.
     */
    if (engine == KMD_ENGINE_COPY && k->gr_objects == 0 &&
        (st = rm_chan_make(k, KMD_ENGINE_COMPUTE, RM_CHAN_ENTRIES_MIN, true, -1, &c)) != HCQ_OK)
        return st;
    if ((st = rm_chan_make(k, engine, entries, false, -1, &c)) != HCQ_OK)
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
    pthread_mutex_lock(&k->chan_lock);
    rm_chan_release(k, c);
    pthread_mutex_unlock(&k->chan_lock);
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

/* The ring and USERD live in device memory the CPU writes through BAR1 (rm_chan_make), as do
 * the engine's pushbuffers. Those writes are posted: the doorbell (BAR0) can reach the GPU's
 * host before the GPPut store has landed in device memory, and the host then reads the old
 * GPPut, finds nothing to do and never looks again (H100: a channel hung at
 * GPGet 60 / GPPut 61 after the engine stopped reading GPGet before each kick - that read
 * had flushed the earlier writes by accident). A read through BAR1 cannot pass the writes
 * before it (PCIe ordering), so once the read of GPGet returns everything written so far
 * is in device memory; if the GPU has not fetched up to `put` by then, the doorbell is
 * rung again (a ring of a channel with nothing new is ignored). The first ring goes out
 * before the read, so the GPU starts as soon as it can and the CPU's ~1 us read overlaps
 * it. */
void
rm_chan_kick(struct kmd *kmd, struct kmd_channel *chan, uint32_t put)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    volatile uint32_t *db = (volatile uint32_t *)(k->usermode + NVC361_NOTIFY_CHANNEL_PENDING);
    put &= chan->entries - 1;
    rm_store_fence();
    *(volatile uint32_t *)(chan->userd + RM_USERD_GP_PUT) = put;
    rm_store_fence();
    *db = chan->token;
    chan->rings++;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the read below after the doorbell store */
    uint32_t get = *(volatile uint32_t *)(chan->userd + RM_USERD_GP_GET);
    if (get != put) {
        rm_store_fence();
        *db = chan->token;
        chan->rings++;
    }
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
        char where[16] = "GR group";
        if (c->lce >= 0)
            snprintf(where, sizeof where, "COPY%u", rm_lce_index(&k->lces[c->lce]));
        if (reason && reason_B)
            snprintf(reason, reason_B,
                     "rm: channel %u (%s 0x%04x on %s, token 0x%x): Xid %u (%s), info16 0x%x, status 0x%x",
                     c->index, rm_class_name(c->base.obj_cls), c->base.obj_cls, where, c->base.token, info32,
                     rm_xid_name(info32), info16, status);
        st = HCQ_ERR_DEVICE_LOST;
        break;
    }
    pthread_mutex_unlock(&k->lock);
    return st;
}
