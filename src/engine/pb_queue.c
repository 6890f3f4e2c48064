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

#include <assert.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* USERD word offsets (rm.md §4.2, nvgpu.md §4.7): GPGet is written by the GPU. */
#define PB_USERD_GP_GET 0x88u
#define PB_USERD_GP_PUT 0x8Cu

static void pb_lmem_flush(struct pb_queue *pq);

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
     * launch's critical path on H100 (launch + sync 6.4 -> 5.2 us without it), so
     * the ring's room is counted from the value last read (older than the GPU's, so the room
     * is never overstated) and GPGet is read again only when that says the ring is full.
     * That read had also flushed the CPU's earlier BAR1 writes before the doorbell; the rm
     * kick now reads GPGet back after its doorbell for that (rm_chan_kick). */
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
    if (ch == &pq->main && pq->lm_pos_n)
        pb_lmem_flush(pq); /* from here the emissions are the device's: the kick follows */
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
    /* before any doorbell: a replaced local-memory store waits for this value (race (b)) */
    atomic_store_explicit(&pq->lm_sub, pq->main.tl_last, memory_order_release);
    if (pq->aux)
        st = pb_chan_flush_scratch(pq, pq->aux);
    if (st == HCQ_OK)
        st = pb_chan_flush_scratch(pq, &pq->main);
    if (st != HCQ_OK)
        return st;
    pq->main.tl_flushed = pq->main.tl_last;
    if (pq->aux)
        pq->aux->tl_flushed = pq->aux->tl_last;
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

/* ==== Local memory (rm.md §8.3, nvgpu.md §6.8) ====
 *
 * Every compute channel of a device is in one TSG with one GR context (kmd/rm rm_chan.c,
 * kmd/nvgpu), so the store that SET_SHADER_LOCAL_MEMORY* programs is context state: the last
 * values any channel executed hold for every channel's next grid. Stores kept per queue let one
 * queue set a smaller store over another's larger one, and that queue's next launch with a
 * stack failed on H100 with Xid 13 SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE (the emulator
 * models it, emu_qmd.c). So the device has ONE grow-only store (pd->lmem) that every queue emits:
 *
 * - Fast path: a launch whose local_B fits what its queue emitted last (pq->local_per_thread_B)
 *   emits nothing - one compare, no lock. The context's store never shrinks (below), so what the
 *   queue emitted once still holds for it, whichever queue emitted last.
 * - Slow path (pb_lmem_emit): under pd->lmem.lock the store grows when the launch needs more (a new
 *   allocation, gen + 1) and the queue appends an emission of it to its main pushbuffer (after a
 *   WFI, ending any chain). Other queues need not re-emit: the store they emitted, or a larger one,
 *   stays in the context, and their QMDs ask for no more than they emitted.
 * - (a) An older, smaller emission executing last: another channel may hold an emission of an
 *   older store that has not run yet (queued behind a WAIT on a signal the host sets later, say);
 *   if it ran after ours it would shrink the context again. So emissions run in order on the GPU:
 *   each gets a device-wide sequence number s when it is submitted (pb_lmem_flush, under the lock,
 *   which also writes the store that is current then into its words), waits with a host semaphore
 *   acquire until the device's emission counter (pd->lmem.sem) reached s - 1, sets the store and
 *   releases s (with WFI). Whatever channels carry them, emissions execute in submission order and
 *   each carries a store at least as large as every earlier one's. Ordering on the GPU keeps
 *   queue_submit free of host waits (a queue blocked on a host-set signal cannot deadlock a
 *   submission on another queue); the price: the channel with the later emission stalls until the
 *   earlier one ran, so a host that waits for that channel before setting the signal the earlier
 *   emission sits behind never returns (its wait times out with the channel state). CUDA
 *   synchronizes the whole context when it grows local memory, which has the same cycle.
 * - (b) A replaced store still in use: kernels already running may use it. It is freed
 *   (pb_lmem_retire) once (1) the emission counter passed the first sequence number handed out
 *   after the switch - the context then holds a newer store and never returns to it - and then
 *   (2) every queue's main timeline passed the value it had submitted when (1) was seen: every
 *   kernel that may have started on it has completed. Queues publish that value (lm_sub) before
 *   their doorbell. What is left at device close is freed then.
 * - (c) Graphs carry no store: a graph's QMDs ask for the per-thread size its queue had emitted
 *   when it was built (pb_graph_prepare emits in a stream submission first, never into the graph),
 *   and the context only grows, so a replay after any growth runs on the current store.
 * - (d) Queues register at creation and leave the list at destroy (after their last wait), so
 *   (2) never waits for a queue that is gone; the device frees the rest at close (pb_lmem_fini).
 */

static uint64_t
pb_round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

/* One emission: counter >= seq - 1, the store, counter = seq (PB_LMEM_EMIT_DW dwords). */
static void
pb_lmem_encode(struct gpu_push *p, const struct pb_lmem *lm, uint64_t seq)
{
    gpu_push_sem_acquire_geq(p, lm->sem->va, seq - 1);
    /* MAX_SM_COUNT 0xFF as tinygrad (rm.md §8.3, §9 item 9). */
    gpu_push_compute_local_memory(p, lm->mem->va, lm->per_tpc_B, 0xFF);
    gpu_push_sem_release(p, lm->sem->va, seq, false);
}

/* The store's size for slm bytes per thread (rm.md §8.3), with the LITTER (chip maximum)
 * counts, so floorswept chips are over-provisioned, never short. */
static void
pb_lmem_size(const struct kmd_info *ki, uint32_t slm, uint64_t *per_tpc_out, uint64_t *total_out)
{
    uint32_t gpcs = ki->litter_gpcs ? ki->litter_gpcs : (ki->gpc_count ? ki->gpc_count : 1);
    uint32_t tpc_per_gpc =
        ki->litter_tpc_per_gpc
            ? ki->litter_tpc_per_gpc
            : (ki->tpc_count && ki->gpc_count ? (ki->tpc_count + ki->gpc_count - 1) / ki->gpc_count : 1);
    uint32_t sm_per_tpc = ki->litter_sm_per_tpc ? ki->litter_sm_per_tpc : 2; /* nvgpu.md §6.11 */
    uint32_t warps = ki->max_warps_per_sm ? ki->max_warps_per_sm : 64;
    uint64_t per_tpc = pb_round_up(pb_round_up((uint64_t)slm * 32, 0x200) * warps * sm_per_tpc, 0x8000);
    *per_tpc_out = per_tpc;
    *total_out = pb_round_up(per_tpc * tpc_per_gpc * gpcs, 0x20000);
}

/* Under the lock: a store of slm bytes per thread replaces the current one, which waits on
 * pd->lmem.old for (b). */
static enum hcq_status
pb_lmem_grow(struct pb_dev *pd, uint32_t slm)
{
    struct pb_lmem *lm = &pd->lmem;
    if (lm->old_count == lm->old_cap) {
        uint32_t cap = lm->old_cap ? lm->old_cap * 2 : 4;
        struct pb_lmem_old *n = realloc(lm->old, cap * sizeof *n);
        if (!n)
            return hcq_err(HCQ_ERR_NOMEM, "local memory: %u replaced stores", cap);
        lm->old = n;
        lm->old_cap = cap;
    }
    uint64_t per_tpc, total;
    pb_lmem_size(&pd->kmd->info, slm, &per_tpc, &total);
    struct kmd_mem *mem = NULL;
    enum hcq_status st = kmd_mem_alloc(pd->kmd, total, 0, KMD_MEM_VRAM, &mem);
    if (st != HCQ_OK)
        return st;
    if (lm->mem)
        lm->old[lm->old_count++] = (struct pb_lmem_old){.mem = lm->mem, .seq = lm->seq_next};
    atomic_store_explicit(&lm->old_pending, lm->old_count, memory_order_relaxed);
    lm->mem = mem;
    lm->per_thread_B = slm;
    lm->per_tpc_B = per_tpc;
    lm->gen++;
    HCQ_LOG_DEBUG("%s: local memory store %u: %u B/thread, 0x%llx B/TPC, 0x%llx B at 0x%llx",
                  pd->base.info.spec, lm->gen, slm, (unsigned long long)per_tpc, (unsigned long long)total,
                  (unsigned long long)mem->va);
    return HCQ_OK;
}

enum hcq_status
pb_lmem_emit(struct pb_queue *pq, uint32_t local_B)
{
    struct pb_dev *pd = pq->pd;
    struct pb_lmem *lm = &pd->lmem;
    uint32_t slm = (uint32_t)pb_round_up(local_B, 32);
    enum hcq_status st = HCQ_OK;
    if (pq->lm_pos_n == pq->lm_pos_cap) {
        uint32_t cap = pq->lm_pos_cap ? pq->lm_pos_cap * 2 : 4;
        uint32_t *n = realloc(pq->lm_pos, cap * sizeof *n);
        if (!n)
            return hcq_err(HCQ_ERR_NOMEM, "local memory: %u emissions", cap);
        pq->lm_pos = n;
        pq->lm_pos_cap = cap;
    }
    pthread_mutex_lock(&lm->lock);
    if (!lm->sem) {
        st = pb_mem_alloc(pd, PB_SYS_B, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA, &lm->sem);
        if (st != HCQ_OK)
            goto out;
        memset(lm->sem->map, 0, PB_SYS_B);
        lm->seq_next = 1;
    }
    if (!lm->mem || slm > lm->per_thread_B) {
        st = pb_lmem_grow(pd, slm);
        if (st != HCQ_OK)
            goto out;
    }
    /* The words are written again at submission, with the sequence number and the store
     * current then (pb_lmem_flush); these hold the place. */
    pq->lm_pos[pq->lm_pos_n++] = pq->main.push.count;
    pb_lmem_encode(&pq->main.push, lm, lm->seq_next);
    pq->local_per_thread_B = lm->per_thread_B;
out:
    pthread_mutex_unlock(&lm->lock);
    return st;
}

/* Submission of main.push (pb_chan_flush_scratch): give its emissions their sequence numbers
 * and the current store, in order, under the lock (race (a) above). */
static void
pb_lmem_flush(struct pb_queue *pq)
{
    struct pb_lmem *lm = &pq->pd->lmem;
    pthread_mutex_lock(&lm->lock);
    for (uint32_t i = 0; i < pq->lm_pos_n; i++) {
        struct gpu_push p;
        gpu_push_init(&p, pq->main.push.dw + pq->lm_pos[i], PB_LMEM_EMIT_DW);
        pb_lmem_encode(&p, lm, lm->seq_next++);
        assert(p.count == PB_LMEM_EMIT_DW && !p.overflow);
    }
    pq->lm_pos_n = 0;
    pq->local_per_thread_B = pq->local_flushed_B = lm->per_thread_B;
    pthread_mutex_unlock(&lm->lock);
}

void
pb_lmem_drop(struct pb_queue *pq)
{
    pq->lm_pos_n = 0;
    pq->local_per_thread_B = pq->local_flushed_B;
}

/* Under the lock: (b) for one replaced store; true when it can be freed. */
static bool
pb_lmem_old_done(struct pb_lmem *lm, struct pb_lmem_old *o, uint64_t counter)
{
    if (!o->armed) {
        if ((int64_t)(counter - o->seq) < 0)
            return false;
        /* (1) seen: from now on no grid starts on it; wait for what each queue submitted */
        o->waits = lm->queue_count ? malloc(lm->queue_count * sizeof *o->waits) : NULL;
        if (lm->queue_count && !o->waits)
            return false; /* try again later */
        for (uint32_t i = 0; i < lm->queue_count; i++)
            o->waits[i] = (struct pb_lmem_wait){
                .pq = lm->queues[i],
                .value = atomic_load_explicit(&lm->queues[i]->lm_sub, memory_order_acquire)};
        o->wait_count = lm->queue_count;
        o->armed = true;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < o->wait_count; i++)
        if (__atomic_load_n(o->waits[i].pq->main.tl, __ATOMIC_ACQUIRE) < o->waits[i].value)
            o->waits[k++] = o->waits[i];
    o->wait_count = k;
    return k == 0;
}

static void
pb_lmem_retire_locked(struct pb_dev *pd, bool all)
{
    struct pb_lmem *lm = &pd->lmem;
    uint64_t counter = lm->sem ? __atomic_load_n((volatile uint64_t *)lm->sem->map, __ATOMIC_ACQUIRE) : 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < lm->old_count; i++) {
        struct pb_lmem_old *o = &lm->old[i];
        if (all || pb_lmem_old_done(lm, o, counter)) {
            kmd_mem_free(pd->kmd, o->mem);
            free(o->waits);
        } else {
            lm->old[k++] = *o;
        }
    }
    lm->old_count = k;
    atomic_store_explicit(&lm->old_pending, k, memory_order_relaxed);
}

void
pb_lmem_retire(struct pb_dev *pd, bool all)
{
    pthread_mutex_lock(&pd->lmem.lock);
    pb_lmem_retire_locked(pd, all);
    pthread_mutex_unlock(&pd->lmem.lock);
}

enum hcq_status
pb_lmem_register(struct pb_queue *pq)
{
    struct pb_lmem *lm = &pq->pd->lmem;
    enum hcq_status st = HCQ_OK;
    pthread_mutex_lock(&lm->lock);
    if (lm->queue_count == lm->queue_cap) {
        uint32_t cap = lm->queue_cap ? lm->queue_cap * 2 : 8;
        struct pb_queue **n = realloc(lm->queues, cap * sizeof *n);
        if (!n) {
            st = hcq_err(HCQ_ERR_NOMEM, "local memory: %u queues", cap);
            goto out;
        }
        lm->queues = n;
        lm->queue_cap = cap;
    }
    lm->queues[lm->queue_count++] = pq;
    pq->lm_registered = true;
out:
    pthread_mutex_unlock(&lm->lock);
    return st;
}

void
pb_lmem_unregister(struct pb_queue *pq)
{
    if (!pq->lm_registered)
        return;
    struct pb_lmem *lm = &pq->pd->lmem;
    pthread_mutex_lock(&lm->lock);
    uint32_t k = 0;
    for (uint32_t i = 0; i < lm->queue_count; i++)
        if (lm->queues[i] != pq)
            lm->queues[k++] = lm->queues[i];
    lm->queue_count = k;
    /* its kernels are done (the caller waited) or the device is lost: nothing to wait for */
    for (uint32_t i = 0; i < lm->old_count; i++) {
        struct pb_lmem_old *o = &lm->old[i];
        uint32_t n = 0;
        for (uint32_t j = 0; j < o->wait_count; j++)
            if (o->waits[j].pq != pq)
                o->waits[n++] = o->waits[j];
        o->wait_count = n;
    }
    pq->lm_registered = false;
    pb_lmem_retire_locked(pq->pd, false);
    pthread_mutex_unlock(&lm->lock);
}

void
pb_lmem_fini(struct pb_dev *pd)
{
    struct pb_lmem *lm = &pd->lmem;
    pb_lmem_retire_locked(pd, true);
    kmd_mem_free(pd->kmd, lm->mem);
    kmd_mem_free(pd->kmd, lm->sem);
    free(lm->old);
    free(lm->queues);
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
    pb_chan_fini(pq, &pq->main);
    /* after the wait above: its kernels no longer hold a replaced store (or the device is lost) */
    pb_lmem_unregister(pq);
    free(pq->lm_pos);
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
     * asynchronous copy engine (pb_aux_get). Measured on H100: the best copy engine moves
     * 0.7-1.1 TB/s from 1 MiB, splitting a copy over the others only slowed it down, while the
     * kernel reaches cuMemcpyDtoDAsync's 3-3.8 TB/s (which runs on the SMs too: no copy engine
     * moves that). On unified-memory Tegra the copy queue is one asynchronous copy engine channel.
     */
    enum kmd_engine engine = KMD_ENGINE_COMPUTE;
    if (q->kind == HCQ_QUEUE_COPY && pd->kmd->info.unified_memory)
        engine = KMD_ENGINE_COPY_ASYNC;
    st = pb_chan_init(pq, &pq->main, engine, PB_SYS_MAIN_TL);
    if (st == HCQ_OK && engine == KMD_ENGINE_COMPUTE)
        st = pb_lmem_register(pq);
    if (st != HCQ_OK)
        goto fail;
    if (engine == KMD_ENGINE_COMPUTE && q->kind == HCQ_QUEUE_COMPUTE) {
        /* The device's local memory, at least for kernels without stack needs, as tinygrad sets
         * it up at init (rm.md §5.5): most launches then never emit. A copy queue emits at its
         * first copy kernel (pb_build), so a queue that only moves host data never does. */
        st = pb_lmem_emit(pq, PB_LOCAL_HEADROOM_B);
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
    if (atomic_load_explicit(&pq->pd->lmem.old_pending, memory_order_relaxed))
        pb_lmem_retire(pq->pd, false);
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
        if (atomic_load_explicit(&pq->pd->lmem.old_pending, memory_order_relaxed))
            pb_lmem_retire(pq->pd, false);
    }
    return st;
}
