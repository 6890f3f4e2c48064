/* SPDX-License-Identifier: MIT */
/*
 * pb_queue.c - queues of the pushbuffer engine: kmd channels with their GPFIFO ring and
 * 64-bit timeline, the doorbell, waits with decoded hang reports, local (stack) memory and
 * the queue entry points of struct hcq_backend_ops. Translating a command list into
 * pushbuffers is pb_build.c. Layer: hcq.
 *
 * Submission (rm.md §4.4): pushbuffer words are built in CPU scratch memory, copied into the
 * queue's stream ring (CPU-mapped, GPU VA < 2^40), then one GPFIFO entry per channel points
 * at them and the kmd rings the doorbell. Every submission ends with a host semaphore
 * release (with WFI) of the queue's next timeline value; the stream ring is recycled behind
 * those values, the GPFIFO ring behind the GPU's fetch pointer GPGet (USERD +0x88).
 */
#include "pb.h"

#include "gpu_decode.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* USERD word offsets (rm.md §4.2, nvgpu.md §4.7): GPGet is written by the GPU. */
#define PB_USERD_GP_GET 0x88u
#define PB_USERD_GP_PUT 0x8Cu

/* Busy-poll this long before yielding the CPU in a wait: completion of a short submission
 * takes a few microseconds, and the latency target is <= 5 us (docs/engine.md). */
#define PB_SPIN_NS 50000u
/* Poll the kmd's error notifiers this often while waiting. */
#define PB_CHECK_EVERY_NS 1000000u

static uint32_t
pb_userd_read(const struct kmd_channel *kc, uint32_t off)
{
    return __atomic_load_n((const volatile uint32_t *)(kc->userd + off), __ATOMIC_ACQUIRE);
}

static const char *
pb_engine_name(enum kmd_engine e)
{
    return e == KMD_ENGINE_COMPUTE ? "compute" : e == KMD_ENGINE_COPY ? "copy" : "async copy";
}

static void
pb_chan_describe(struct pb_queue *pq, const struct pb_chan *ch, const char *role, char *buf, size_t buf_B)
{
    if (!ch->kc) {
        if (buf_B)
            buf[0] = '\0';
        return;
    }
    uint64_t seen = __atomic_load_n(ch->tl, __ATOMIC_ACQUIRE);
    snprintf(buf, buf_B,
             "queue %p %s channel (%s, token 0x%x): timeline expected >= %llu, seen %llu; GPGet %u GPPut %u "
             "(CPU put %u, ring of %u)\n",
             (void *)pq->q, role, pb_engine_name(ch->engine), ch->kc->token, (unsigned long long)ch->tl_last,
             (unsigned long long)seen, pb_userd_read(ch->kc, PB_USERD_GP_GET),
             pb_userd_read(ch->kc, PB_USERD_GP_PUT), ch->put, ch->kc->entries);
}

void
pb_queue_describe(struct pb_queue *pq, char *buf, size_t buf_B)
{
    pb_chan_describe(pq, &pq->main, "main", buf, buf_B);
    size_t used = strlen(buf);
    if (pq->aux && used + 1 < buf_B)
        pb_chan_describe(pq, pq->aux, "copy helper", buf + used, buf_B - used);
    for (uint32_t i = 0; i < pq->xch_count && (used = strlen(buf)) + 1 < buf_B; i++)
        pb_chan_describe(pq, pq->xch[i], "split copy", buf + used, buf_B - used);
}

/* On a hang: decode the pushbuffer of the GPFIFO entry the GPU fetched last on ch (when it
 * lies in the stream ring), so the log shows what the channel was executing. */
static void
pb_dump_last_fetched(struct pb_queue *pq, const struct pb_chan *ch)
{
    if (!ch || !ch->kc)
        return;
    uint32_t get = pb_userd_read(ch->kc, PB_USERD_GP_GET);
    uint64_t entry = ch->kc->ring[(get - 1) & (ch->kc->entries - 1)];
    struct gpu_gpfifo_fields f;
    if (gpu_gpfifo_entry_decode(entry, &f) != HCQ_OK)
        return;
    if (f.pb_va < pq->stream->va ||
        f.pb_va + (uint64_t)f.dw_count * 4 > pq->stream->va + pq->stream->size_B) {
        HCQ_LOG_ERROR("hang: %s channel's last fetched pushbuffer is at 0x%llx (%u dwords, a graph's)",
                      pb_engine_name(ch->engine), (unsigned long long)f.pb_va, f.dw_count);
        return;
    }
    const uint32_t *dw = (const uint32_t *)((const uint8_t *)pq->stream->map + (f.pb_va - pq->stream->va));
    uint32_t n = f.dw_count > 512 ? 512 : f.dw_count; /* the tail is what matters less */
    uint32_t *copy = malloc((size_t)n * 4);
    if (!copy)
        return;
    memcpy(copy, dw, (size_t)n * 4);
    HCQ_LOG_ERROR("hang: the %s channel's last fetched GPFIFO entry (GPGet %u) follows",
                  pb_engine_name(ch->engine), get);
    pb_dump_push(pq, ch, f.pb_va, copy, n, HCQ_LOG_LEVEL_ERROR);
    free(copy);
}

/* A wait ran out of time: a hang when the caller allowed a hang-sized timeout (the device is
 * then lost, with the channel state as the reason), else an ordinary timeout. */
static enum hcq_status
pb_wait_expired(struct pb_queue *pq, const char *what, uint64_t timeout_ns)
{
    char state[512];
    pb_queue_describe(pq, state, sizeof state);
    size_t n = strlen(state);
    if (n && state[n - 1] == '\n')
        state[n - 1] = '\0';
    if (timeout_ns >= PB_HANG_NS) {
        pb_dump_last_fetched(pq, &pq->main);
        pb_dump_last_fetched(pq, pq->aux);
        return hcq_device_mark_lost(&pq->pd->base, "GPU hang: %s did not complete within %llu ms: %s", what,
                                    (unsigned long long)(timeout_ns / 1000000), state);
    }
    return hcq_err(HCQ_ERR_TIMEOUT, "%s: not complete after %llu us: %s", what,
                   (unsigned long long)(timeout_ns / 1000), state);
}

enum hcq_status
pb_chan_wait(struct pb_queue *pq, struct pb_chan *ch, uint64_t value, uint64_t timeout_ns)
{
    if (__atomic_load_n(ch->tl, __ATOMIC_ACQUIRE) >= value)
        return HCQ_OK;
    /* The work waited for (or another channel's it depends on) may sit behind a deferred
     * doorbell (kmd_doorbell_flush): ring before waiting, never after. */
    kmd_doorbell_flush(pq->pd->kmd);
    struct hcq_device *dev = &pq->pd->base;
    uint64_t start = hcq_time_ns(), last_check = start;
    for (;;) {
        if (__atomic_load_n(ch->tl, __ATOMIC_ACQUIRE) >= value)
            return HCQ_OK;
        uint64_t now = hcq_time_ns();
        if (now - last_check >= PB_CHECK_EVERY_NS) {
            last_check = now;
            enum hcq_status st = pb_check(dev);
            if (st != HCQ_OK)
                return st;
        }
        if (now - start >= timeout_ns) {
            if (__atomic_load_n(ch->tl, __ATOMIC_ACQUIRE) >= value)
                return HCQ_OK;
            char what[96];
            snprintf(what, sizeof what, "%s timeline value %llu", pb_engine_name(ch->engine),
                     (unsigned long long)value);
            return pb_wait_expired(pq, what, timeout_ns);
        }
        if (now - start >= PB_SPIN_NS)
            sched_yield();
    }
}

void
pb_dump_push(struct pb_queue *pq, const struct pb_chan *ch, uint64_t va, const uint32_t *dw, uint32_t n,
             enum hcq_log_level level)
{
    struct gpu_decode_ctx ctx;
    gpu_decode_ctx_init(&ctx, pq->pd->arch);
    size_t need = gpu_decode_push(&ctx, dw, n, NULL, 0) + 1;
    char *text = malloc(need);
    if (!text)
        return;
    gpu_decode_ctx_init(&ctx, pq->pd->arch);
    gpu_decode_push(&ctx, dw, n, text, need);
    hcq_log(level, "push_dump: queue %p %s channel token 0x%x, %u dwords at 0x%llx:\n%s", (void *)pq->q,
            pb_engine_name(ch->engine), ch->kc->token, n, (unsigned long long)va, text);
    free(text);
}

enum hcq_status
pb_chan_kick(struct pb_queue *pq, struct pb_chan *ch, uint64_t pb_va, uint32_t dw_count)
{
    struct kmd_channel *kc = ch->kc;
    /* Never overwrite an entry the GPU has not fetched (nvgpu.md §4.9 [REC]). GPGet lives in
     * USERD, device memory on rm: reading it is an uncached read across PCIe, ~1.3 us on the
     * launch's critical path on H100 (launch + sync 6.4 -> 5.2 us without it, session 10), so
     * the ring's room is counted from the value last read (older than the GPU's, so the room
     * is never overstated) and GPGet is read again only when that says the ring is full.
     * That read had also flushed the CPU's earlier BAR1 writes before the doorbell; the rm
     * kick now reads GPGet back after its doorbell for that (rm_chan_kick).
     * PB_GPGET_READ=1: read it here on every kick (the old way, A/B). */
    if (pq->pd->gpget_read_always)
        ch->get_seen = pb_userd_read(kc, PB_USERD_GP_GET);
    if (pb_gpfifo_free(ch->put, ch->get_seen, kc->entries) == 0 &&
        pb_gpfifo_free(ch->put, ch->get_seen = pb_userd_read(kc, PB_USERD_GP_GET), kc->entries) == 0) {
        kmd_doorbell_flush(pq->pd->kmd); /* GPGet only moves for entries that were rung */
        uint64_t start = hcq_time_ns();
        while (pb_gpfifo_free(ch->put, ch->get_seen = pb_userd_read(kc, PB_USERD_GP_GET), kc->entries) == 0) {
            uint64_t now = hcq_time_ns();
            if (now - start >= PB_HANG_NS)
                return pb_wait_expired(pq, "GPFIFO ring full: GPGet", PB_HANG_NS);
            enum hcq_status st = pb_check(&pq->pd->base);
            if (st != HCQ_OK)
                return st;
            if (now - start >= PB_SPIN_NS)
                sched_yield();
        }
    }
    struct gpu_gpfifo_fields f = {.pb_va = pb_va, .dw_count = dw_count, .subroutine = true, .sync = false};
    kc->ring[ch->put] = gpu_gpfifo_entry_encode(&f);
    ch->put = (ch->put + 1) & (kc->entries - 1);
    /* Pushbuffer and ring entry must be visible before GPPut/doorbell (rm.md §4.4 step 4);
     * the kmd fences again before its doorbell store. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    kmd_channel_kick(pq->pd->kmd, kc, ch->put);
    return HCQ_OK;
}

/* ==== Channels ==== */

enum hcq_status
pb_push_grow(struct pb_chan *ch, uint32_t cap_dw)
{
    uint32_t *n = realloc(ch->scratch, (size_t)cap_dw * 4);
    if (!n)
        return hcq_err(HCQ_ERR_NOMEM, "pushbuffer scratch of %u dwords", cap_dw);
    ch->scratch = n;
    ch->push.dw = n;
    ch->push.cap = cap_dw;
    return HCQ_OK;
}

/* Give a channel back: to the device's pool when it is idle and healthy, else destroy it. */
static void
pb_chan_fini(struct pb_queue *pq, struct pb_chan *ch)
{
    struct pb_dev *pd = pq->pd;
    if (ch->kc) {
        bool idle = !atomic_load(&pd->base.lost) &&
                    __atomic_load_n(ch->tl, __ATOMIC_ACQUIRE) >= ch->tl_flushed &&
                    pb_gpfifo_pending(ch->put, pb_userd_read(ch->kc, PB_USERD_GP_GET), ch->kc->entries) == 0;
        int e = (int)ch->engine;
        pthread_mutex_lock(&pd->pool_lock);
        if (idle && pd->pool_count[e] < PB_CHAN_POOL) {
            pd->pool[e][pd->pool_count[e]++] = ch->kc;
            ch->kc = NULL;
        }
        pthread_mutex_unlock(&pd->pool_lock);
    }
    kmd_channel_destroy(pd->kmd, ch->kc);
    ch->kc = NULL;
    free(ch->scratch);
    ch->scratch = NULL;
}

/* Copy ch's scratch pushbuffer into the stream ring and put it on the GPFIFO. The caller
 * fences the ring afterwards. */
static enum hcq_status
pb_chan_flush_scratch(struct pb_queue *pq, struct pb_chan *ch)
{
    uint32_t n = ch->push.count;
    if (n == 0)
        return HCQ_OK;
    if (ch->push.overflow)
        return hcq_err(HCQ_ERR_INVALID, "pushbuffer scratch overflow (%u dwords): engine bug", ch->push.cap);
    uint64_t off;
    enum hcq_status st = HCQ_OK;
    while (!pb_ring_alloc(&pq->ring, (uint64_t)n * 4, 64, &off)) {
        uint64_t oldest;
        pb_ring_retire(&pq->ring, __atomic_load_n(pq->main.tl, __ATOMIC_ACQUIRE));
        if (pb_ring_alloc(&pq->ring, (uint64_t)n * 4, 64, &off))
            break;
        if (!pb_ring_oldest(&pq->ring, &oldest))
            return hcq_err(HCQ_ERR_NOMEM,
                           "stream ring: %u pushbuffer dwords do not fit in %u bytes (engine bug)", n,
                           PB_STREAM_B);
        st = pb_chan_wait(pq, &pq->main, oldest, PB_HANG_NS);
        if (st != HCQ_OK)
            return st;
    }
    uint8_t *map = (uint8_t *)pq->stream->map + off;
    uint64_t va = pq->stream->va + off;
    memcpy(map, ch->push.dw, (size_t)n * 4);
    if (pq->pd->debug & HCQ_DEBUG_PUSH_DUMP)
        pb_dump_push(pq, ch, va, ch->push.dw, n, HCQ_LOG_LEVEL_INFO);
    ch->push.count = 0;
    return pb_chan_kick(pq, ch, va, n);
}

enum hcq_status
pb_queue_flush(struct pb_queue *pq)
{
    enum hcq_status st = HCQ_OK;
    if (pq->aux)
        st = pb_chan_flush_scratch(pq, pq->aux);
    for (uint32_t i = 0; i < pq->xch_count && st == HCQ_OK; i++)
        st = pb_chan_flush_scratch(pq, pq->xch[i]);
    if (st == HCQ_OK)
        st = pb_chan_flush_scratch(pq, &pq->main);
    if (st != HCQ_OK)
        return st;
    pq->main.tl_flushed = pq->main.tl_last;
    if (pq->aux)
        pq->aux->tl_flushed = pq->aux->tl_last;
    for (uint32_t i = 0; i < pq->xch_count; i++)
        pq->xch[i]->tl_flushed = pq->xch[i]->tl_last;
    while (!pb_ring_fence(&pq->ring, pq->main.tl_last)) {
        uint64_t oldest = 0;
        if (!pb_ring_oldest(&pq->ring, &oldest))
            break;
        st = pb_chan_wait(pq, &pq->main, oldest, PB_HANG_NS);
        if (st != HCQ_OK)
            return st;
        pb_ring_retire(&pq->ring, __atomic_load_n(pq->main.tl, __ATOMIC_ACQUIRE));
    }
    if (pq->pd->debug & HCQ_DEBUG_PUSH_SYNC)
        return pb_chan_wait(pq, &pq->main, pq->main.tl_last, PB_HANG_NS);
    return HCQ_OK;
}

/* Create a channel, bind its engine object and run the setup submission (rm.md §5.5:
 * compute: SET_OBJECT on subchannel 1 + local/shared windows; copy: SET_OBJECT on 4),
 * ending with the first timeline release, which is waited for: a channel that cannot run
 * this is reported here rather than at the first user submission. */
static enum hcq_status
pb_chan_init(struct pb_queue *pq, struct pb_chan *ch, enum kmd_engine engine, uint32_t tl_off)
{
    struct pb_dev *pd = pq->pd;
    *ch = (struct pb_chan){.engine = engine};
    ch->tl = (volatile uint64_t *)((uint8_t *)pq->sys->map + tl_off);
    ch->tl_va = pq->sys->va + tl_off;
    ch->tl[0] = 0;
    ch->tl[1] = 0;
    enum hcq_status st = pb_push_grow(ch, PB_SCRATCH_DW);
    if (st != HCQ_OK)
        return st;
    gpu_push_init(&ch->push, ch->scratch, PB_SCRATCH_DW);
    int e = (int)engine;
    pthread_mutex_lock(&pd->pool_lock);
    if (pd->pool_count[e])
        ch->kc = pd->pool[e][--pd->pool_count[e]];
    pthread_mutex_unlock(&pd->pool_lock);
    if (!ch->kc) {
        st = kmd_channel_create(pd->kmd, engine, PB_GPFIFO_ENTRIES, &ch->kc);
        if (st != HCQ_OK)
            return st;
    }
    if (ch->kc->entries == 0 || (ch->kc->entries & (ch->kc->entries - 1)) != 0 || !ch->kc->ring ||
        !ch->kc->userd)
        return hcq_err(HCQ_ERR_DRIVER, "%s channel: ring of %u entries (expected a mapped power of two)",
                       pb_engine_name(engine), ch->kc->entries);
    /* A reused channel carries on from where its last queue left the ring; its engine
     * binding and windows are set again below (harmless), its local memory by the queue. */
    ch->put = pb_userd_read(ch->kc, PB_USERD_GP_PUT) & (ch->kc->entries - 1);
    ch->get_seen = pb_userd_read(ch->kc, PB_USERD_GP_GET) & (ch->kc->entries - 1);
    if (engine == KMD_ENGINE_COMPUTE)
        gpu_push_compute_init(&ch->push, pd->arch->compute_cls, pd->local_window_va, pd->shared_window_va);
    else
        gpu_push_copy_init(&ch->push, pd->arch->copy_cls);
    gpu_push_sem_release(&ch->push, ch->tl_va, ++ch->tl_last, true);
    st = pb_chan_flush_scratch(pq, ch);
    if (st != HCQ_OK)
        return st;
    ch->tl_flushed = ch->tl_last;
    st = pb_chan_wait(pq, ch, ch->tl_last, PB_HANG_NS);
    if (st != HCQ_OK)
        return st;
    pb_clock_calibrate(pd, ch->tl[1], hcq_time_ns());
    return HCQ_OK;
}

enum hcq_status
pb_aux_get(struct pb_queue *pq)
{
    if (pq->aux)
        return HCQ_OK;
    struct pb_chan *aux = calloc(1, sizeof(*aux));
    if (!aux)
        return hcq_err(HCQ_ERR_NOMEM, "copy helper channel");
    /* A copy queue's helper is its own asynchronous copy engine (host copies at PCIe speed,
     * device copies the kernel cannot take); a compute queue's stays the GR copy engine. */
    enum kmd_engine kind = pq->q->kind == HCQ_QUEUE_COPY ? KMD_ENGINE_COPY_ASYNC : KMD_ENGINE_COPY;
    enum hcq_status st = pb_chan_init(pq, aux, kind, PB_SYS_AUX_TL);
    if (st != HCQ_OK) {
        pb_chan_fini(pq, aux);
        free(aux);
        return st;
    }
    pq->aux = aux;
    pq->main_work = true; /* the main channel may have work in flight from before */
    HCQ_LOG_DEBUG("queue %p: copy helper channel (token 0x%x) for copies on a compute queue", (void *)pq->q,
                  aux->kc->token);
    return HCQ_OK;
}

void
pb_xch_get(struct pb_queue *pq, uint32_t n)
{
    if (n > PB_CE_SPLIT_MAX - 1)
        n = PB_CE_SPLIT_MAX - 1;
    while (!pq->xch_failed && pq->xch_count < n) {
        struct pb_chan *x = calloc(1, sizeof(*x));
        enum hcq_status st = x ? pb_chan_init(pq, x, KMD_ENGINE_COPY_ASYNC, PB_SYS_XTL(pq->xch_count))
                               : hcq_err(HCQ_ERR_NOMEM, "split copy channel");
        /* A channel the kmd had to put on the GR copy engine would not add bandwidth. */
        if (st == HCQ_OK && x->kc->engine == KMD_ENGINE_COPY_ASYNC) {
            pq->xch[pq->xch_count++] = x;
            HCQ_LOG_DEBUG("queue %p: split copy channel %u (token 0x%x)", (void *)pq->q, pq->xch_count,
                          x->kc->token);
            continue;
        }
        HCQ_LOG_WARN("queue %p: copies split over %u channels at most: %s", (void *)pq->q, 1 + pq->xch_count,
                     st != HCQ_OK ? hcq_last_error() : "no further asynchronous copy engine");
        pq->xch_failed = true;
        if (x) {
            pb_chan_fini(pq, x);
            free(x);
        }
    }
}

/* ==== Local memory (rm.md §8.3, nvgpu.md §6.8) ==== */

static uint64_t
pb_round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

void
pb_local_retire(struct pb_queue *pq, bool all)
{
    /* main.tl is NULL when queue creation failed before the channel existed */
    uint64_t done = pq->main.tl ? __atomic_load_n(pq->main.tl, __ATOMIC_ACQUIRE) : 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < pq->local_old_count; i++) {
        if (all || pq->local_old_value[i] <= done)
            kmd_mem_free(pq->pd->kmd, pq->local_old[i]);
        else {
            pq->local_old[k] = pq->local_old[i];
            pq->local_old_value[k++] = pq->local_old_value[i];
        }
    }
    pq->local_old_count = k;
}

void
pb_local_emit(struct pb_queue *pq)
{
    /* MAX_SM_COUNT 0xFF as tinygrad (rm.md §8.3, §9 item 9). */
    gpu_push_compute_local_memory(&pq->main.push, pq->local->va, pq->local_per_tpc_B, 0xFF);
    pq->local_reemit = false;
}

enum hcq_status
pb_local_reserve(struct pb_queue *pq, uint32_t local_B, bool *changed_out)
{
    struct pb_dev *pd = pq->pd;
    const struct kmd_info *ki = &pd->kmd->info;
    *changed_out = false;
    uint32_t slm = (uint32_t)pb_round_up(local_B, 32);
    if (slm <= pq->local_per_thread_B)
        return HCQ_OK;
    /* LITTER (chip maximum) counts, so floorswept chips are over-provisioned, never short. */
    uint32_t gpcs = ki->litter_gpcs ? ki->litter_gpcs : (ki->gpc_count ? ki->gpc_count : 1);
    uint32_t tpc_per_gpc =
        ki->litter_tpc_per_gpc
            ? ki->litter_tpc_per_gpc
            : (ki->tpc_count && ki->gpc_count ? (ki->tpc_count + ki->gpc_count - 1) / ki->gpc_count : 1);
    uint32_t sm_per_tpc = ki->litter_sm_per_tpc ? ki->litter_sm_per_tpc : 2; /* nvgpu.md §6.11 */
    uint32_t warps = ki->max_warps_per_sm ? ki->max_warps_per_sm : 64;
    uint64_t per_tpc = pb_round_up(pb_round_up((uint64_t)slm * 32, 0x200) * warps * sm_per_tpc, 0x8000);
    uint64_t total = pb_round_up(per_tpc * tpc_per_gpc * gpcs, 0x20000);
    if (pq->local_old_count == PB_LOCAL_OLD_MAX) {
        /* Rare: many growths in flight. Wait for the oldest to retire. */
        enum hcq_status st = pb_chan_wait(pq, &pq->main, pq->local_old_value[0], PB_HANG_NS);
        if (st != HCQ_OK)
            return st;
        pb_local_retire(pq, false);
    }
    struct kmd_mem *mem = NULL;
    enum hcq_status st = kmd_mem_alloc(pd->kmd, total, 0, KMD_MEM_VRAM, &mem);
    if (st != HCQ_OK)
        return st;
    /* The old store may still be used by kernels already submitted: it is freed only once
     * the timeline passes the first release after the switch (the Jetson port freed it
     * at once - the realloc race of nvgpu.md §6.8 - or had to synchronize, which would
     * deadlock a queue blocked on a signal the host sets later). */
    if (pq->local) {
        pq->local_old[pq->local_old_count] = pq->local;
        pq->local_old_value[pq->local_old_count++] = pq->main.tl_last + 1;
    }
    pq->local = mem;
    pq->local_per_thread_B = slm;
    pq->local_per_tpc_B = per_tpc;
    pb_local_emit(pq);
    *changed_out = true;
    HCQ_LOG_DEBUG("queue %p: local memory %u B/thread, 0x%llx B/TPC, 0x%llx B at 0x%llx", (void *)pq->q, slm,
                  (unsigned long long)per_tpc, (unsigned long long)total, (unsigned long long)mem->va);
    return HCQ_OK;
}

/* ==== Queue entry points ==== */

void
pb_queue_destroy(struct hcq_queue *q)
{
    struct pb_queue *pq = pb_queue(q);
    if (!pq)
        return;
    struct pb_dev *pd = pq->pd;
    if (pq->main.kc && !atomic_load(&pd->base.lost)) {
        /* Bounded: a hung queue is reported (device lost) and torn down anyway. */
        if (pb_chan_wait(pq, &pq->main, pq->main.tl_last, PB_HANG_NS) != HCQ_OK)
            HCQ_LOG_WARN("queue %p destroyed with work outstanding", (void *)q);
    }
    if (pq->aux) {
        pb_chan_fini(pq, pq->aux);
        free(pq->aux);
    }
    for (uint32_t i = 0; i < pq->xch_count; i++) {
        pb_chan_fini(pq, pq->xch[i]);
        free(pq->xch[i]);
    }
    pb_chan_fini(pq, &pq->main);
    pb_local_retire(pq, true);
    kmd_mem_free(pd->kmd, pq->local);
    free(pq->argbuf);
    free(pq->copy_by_kernel);
    pb_ring_fini(&pq->ring);
    kmd_mem_free(pd->kmd, pq->stream);
    kmd_mem_free(pd->kmd, pq->sys);
    free(pq);
    q->priv = NULL;
}

enum hcq_status
pb_queue_create(struct hcq_device *dev, struct hcq_queue *q)
{
    struct pb_dev *pd = pb_dev(dev);
    struct pb_queue *pq = calloc(1, sizeof(*pq));
    if (!pq)
        return hcq_err(HCQ_ERR_NOMEM, "queue_create: %zu bytes", sizeof(*pq));
    pq->pd = pd;
    pq->q = q;
    q->priv = pq;
    const uint32_t low = KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA;
    enum hcq_status st = pb_mem_alloc(pd, PB_SYS_B, low, &pq->sys);
    if (st != HCQ_OK)
        goto fail;
    memset(pq->sys->map, 0, PB_SYS_B);
    st = pb_stream_alloc(pd, PB_STREAM_B, &pq->stream);
    if (st != HCQ_OK)
        goto fail;
    st = pb_ring_init(&pq->ring, PB_STREAM_B, PB_STREAM_FENCES);
    if (st != HCQ_OK)
        goto fail;
    /*
     * A copy queue on a discrete GPU runs like a compute queue: device-to-device copies are the
     * copy kernel on a compute channel of its own, everything else goes to its helper on an
     * asynchronous copy engine (pb_aux_get). Measured on H100 (docs/status.md): the best copy
     * engine moves 0.7-1.1 TB/s from 1 MiB, splitting over the others only slows it down, while
     * the kernel reaches cuMemcpyDtoDAsync's 3-3.8 TB/s (which runs on the SMs too: no copy
     * engine moves that). PB_COPYQ=ce: the copy queue is one asynchronous copy engine channel,
     * as on unified-memory Tegra.
     */
    enum kmd_engine engine = KMD_ENGINE_COMPUTE;
    const char *cq = getenv("PB_COPYQ");
    if (q->kind == HCQ_QUEUE_COPY && (pd->kmd->info.unified_memory || (cq && !strcmp(cq, "ce"))))
        engine = KMD_ENGINE_COPY_ASYNC;
    st = pb_chan_init(pq, &pq->main, engine, PB_SYS_MAIN_TL);
    if (st != HCQ_OK)
        goto fail;
    if (engine == KMD_ENGINE_COMPUTE && q->kind == HCQ_QUEUE_COMPUTE) {
        /* Local memory for kernels without stack needs, as tinygrad sets up at init
         * (rm.md §5.5): most launches then never grow it. A copy queue reserves it at its first
         * copy kernel (pb_launch), so queues that only move host data never hold it. */
        bool changed;
        st = pb_local_reserve(pq, PB_LOCAL_HEADROOM_B, &changed);
        if (st != HCQ_OK)
            goto fail;
        gpu_push_sem_release(&pq->main.push, pq->main.tl_va, ++pq->main.tl_last, false);
        st = pb_queue_flush(pq);
        if (st != HCQ_OK)
            goto fail;
    }
    return HCQ_OK;

fail:
    pb_queue_destroy(q);
    return st;
}

enum hcq_status
pb_queue_submit(struct hcq_queue *q, const struct hcq_cmdlist *cl, const uint64_t *vars)
{
    struct pb_queue *pq = pb_queue(q);
    if (atomic_load(&pq->pd->base.lost))
        return hcq_err(HCQ_ERR_DEVICE_LOST, "queue_submit: device lost: %s", pq->pd->base.fault);
    if (cl->count == 0)
        return HCQ_OK;
    if (pq->local_old_count)
        pb_local_retire(pq, false);
    return pb_build(pq, cl, vars, NULL);
}

enum hcq_status
pb_queue_idle_wait(struct hcq_queue *q, uint64_t timeout_ns)
{
    struct pb_queue *pq = pb_queue(q);
    if (atomic_load(&pq->pd->base.lost))
        return hcq_err(HCQ_ERR_DEVICE_LOST, "queue_idle_wait: device lost: %s", pq->pd->base.fault);
    /* Every submission ends on the main channel (after the copy helper's work), so the
     * main timeline covers both. */
    enum hcq_status st = pb_chan_wait(pq, &pq->main, pq->main.tl_last, timeout_ns);
    if (st == HCQ_OK) {
        pb_ring_retire(&pq->ring, pq->main.tl_last);
        pb_local_retire(pq, false);
    }
    return st;
}
