/* SPDX-License-Identifier: MIT */
/*
 * pb_build.c - translates a recorded command list (struct hcq_cmdlist) into pushbuffers,
 * cbuf0s and QMDs. Layer: hcq. Two modes share every line of encoding:
 *   stream: memory from the queue's stream ring, submitted as it goes (pb_queue_flush);
 *   graph:  memory from a persistent arena, nothing submitted, every variable location
 *           recorded as a patch (pb_graph.c replays it).
 *
 * Ordering rules (docs/engine.md §2; rm.md §5.5, §6.4):
 *  - consecutive launches are chained through the previous QMD's DEPENDENT_QMD0 (the next
 *    grid starts when the previous one completes), the first is sent with SEND_PCAS;
 *  - a launch that does not continue a chain waits for earlier launches with a host WFI;
 *  - SIGNAL / TIMESTAMP / BARRIER are host semaphore releases (RELEASE_WFI) or WFIs in the
 *    pushbuffer - never QMD release slots, so a QMD's memory can be reused as soon as the
 *    timeline passes it (the QMD-reuse race of nvgpu.md §6.6 cannot happen); the exceptions
 *    write slots of a QMD that is reused only behind them: a TIMESTAMP of the launch just
 *    before it (pb_stamp_fold) and, on rm, the timeline value of a stream segment that ends
 *    with a chained launch (pb_end_by_qmd);
 *  - WAIT is a 64-bit ACQ_CIRC_GEQ host semaphore acquire; it ends a chain;
 *  - copies on a compute queue run on the queue's copy helper channel; a switch between
 *    channels is a release of the channel left and an acquire of it on the channel entered;
 *  - every submission ends on the main channel with the release of its next timeline value
 *    (from the pushbuffer, or from the last QMD: pb_end_by_qmd).
 */
#include "pb_build.h"

#include "gpu_cubin.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
pb_qmd_flush(struct pb_builder *b)
{
    if (b->pend_dst) {
        memcpy(b->pend_dst, b->pend_dw, b->qmd_ops->size_B);
        b->pend_dst = NULL;
    }
}

/* No later launch may chain to what was launched so far. */
void
pb_chain_end(struct pb_builder *b)
{
    pb_qmd_flush(b);
    b->chain = false;
}

/* ==== Patches (graph mode) ==== */

enum hcq_status
pb_patch_add(struct pb_builder *b, const struct pb_patch *p)
{
    struct pb_build_target *g = b->g;
    if (g->patch_count == g->patch_cap) {
        uint32_t cap = g->patch_cap ? g->patch_cap * 2 : 64;
        struct pb_patch *n = realloc(g->patches, (size_t)cap * sizeof(*n));
        if (!n)
            return hcq_err(HCQ_ERR_NOMEM, "graph: %u patches", cap);
        g->patches = n;
        g->patch_cap = cap;
    }
    g->patches[g->patch_count++] = *p;
    return HCQ_OK;
}

/* ==== Semaphores with patchable payloads ==== */

enum pb_val_kind { PB_VAL_CONST, PB_VAL_VAR, PB_VAL_MAIN, PB_VAL_AUX, PB_VAL_NOW };

struct pb_val {
    enum pb_val_kind kind;
    uint64_t value;                /* what to write now */
    uint32_t var;                  /* VAR */
    uint64_t add;                  /* VAR: vars[var] + add; MAIN/AUX: base + add */
    const volatile uint64_t *slot; /* NOW */
};

static enum hcq_status
pb_sem_record(struct pb_builder *b, struct pb_chan *ch, uint32_t pos, const struct pb_val *v)
{
    /* The host semaphore block is header, ADDR_LO, ADDR_HI, PAYLOAD_LO, PAYLOAD_HI, EXECUTE
     * (rm.md §5.2); the payload's place is checked, not assumed. */
    assert(ch->push.overflow || (ch->push.dw[pos + 3] == (uint32_t)v->value &&
                                 ch->push.dw[pos + 4] == (uint32_t)(v->value >> 32)));
    if (!b->g || v->kind == PB_VAL_CONST)
        return HCQ_OK;
    static const enum pb_patch_kind kinds[] = {[PB_VAL_VAR] = PB_PATCH_SEM,
                                               [PB_VAL_MAIN] = PB_PATCH_SEM_MAIN,
                                               [PB_VAL_AUX] = PB_PATCH_SEM_AUX,
                                               [PB_VAL_NOW] = PB_PATCH_SEM_NOW};
    struct pb_patch p = {.kind = kinds[v->kind],
                         .var = v->var,
                         .add = v->add,
                         .pb_chan = ch,
                         .pb_dw = pos + 3,
                         .sig_slot = v->slot};
    return pb_patch_add(b, &p);
}

/* After copies, a copy-engine semaphore with FLUSH_ENABLE before the host release: the
 * LAUNCH_DMA of a copy does not flush (rm.md §5.4, tinygrad's copy word 0x182), its
 * semaphore release does (0x14). The payload goes to a scratch word nobody reads. */
static void
pb_ce_flush(struct pb_builder *b, struct pb_chan *ch)
{
    if (ch->engine == KMD_ENGINE_COMPUTE || !ch->busy)
        return;
    uint64_t va = b->pq->sys->va + PB_SYS_CE_FLUSH;
    /* Four words (payload + timestamp, 16 bytes): tinygrad's copy-queue release 0x14. */
    if (gpu_push_ce_sem_release(&ch->push, b->pd->arch->copy_cls, va, 0, true) != HCQ_OK)
        assert(!"a 32-bit payload fits every copy class");
    ch->busy = false;
}

static enum hcq_status
pb_release(struct pb_builder *b, struct pb_chan *ch, uint64_t va, const struct pb_val *v, bool timestamp)
{
    pb_ce_flush(b, ch);
    uint32_t pos = ch->push.count;
    gpu_push_sem_release(&ch->push, va, v->value, timestamp);
    return pb_sem_record(b, ch, pos, v);
}

static enum hcq_status
pb_acquire(struct pb_builder *b, struct pb_chan *ch, uint64_t va, const struct pb_val *v)
{
    uint32_t pos = ch->push.count;
    gpu_push_sem_acquire_geq(&ch->push, va, v->value);
    return pb_sem_record(b, ch, pos, v);
}

/* Next timeline value of ch, as a (patchable) payload. */
static struct pb_val
pb_tl_next(struct pb_builder *b, struct pb_chan *ch)
{
    uint64_t v = ++ch->tl_last;
    bool is_main = ch == &b->pq->main;
    uint64_t base = !b->g ? 0 : is_main ? b->g->main_base : b->g->aux_base;
    return (struct pb_val){.kind = is_main ? PB_VAL_MAIN : PB_VAL_AUX, .value = v, .add = v - base};
}

/* Make everything emitted on ch so far complete before what follows on ch: a release with
 * WFI of ch's timeline. Returns the value released. */
static enum hcq_status
pb_chan_settle(struct pb_builder *b, struct pb_chan *ch, struct pb_val *v_out)
{
    *v_out = pb_tl_next(b, ch);
    enum hcq_status st = pb_release(b, ch, ch->tl_va, v_out, false);
    ch->busy = false;
    if (ch == &b->pq->main)
        pb_chain_end(b);
    return st;
}

/* Hand over from b->cur to ch (release there, acquire here) so queue order holds across
 * engines. From main to the copy helper in stream mode this is skipped while the main channel has
 * done nothing since the helper last waited for it (pq->main_work): the helper runs its own work
 * in order, and a submission that only copies on the helper then costs no cross-channel wake-up at
 * its start (H100, 2026-11-26, `bench latency copy`: copy_to_compute 14.5-16.5 vs 19.7-21.8 us
 * with every handover, the copy rows unchanged). */
static enum hcq_status
pb_handover(struct pb_builder *b, struct pb_chan *ch)
{
    struct pb_queue *pq = b->pq;
    struct pb_chan *from = b->cur;
    b->cur = ch;
    if (!from || from == ch)
        return HCQ_OK;
    bool to_aux = from == &pq->main && ch == pq->aux && !b->g;
    if (to_aux && !pq->main_work)
        return HCQ_OK;
    struct pb_val v;
    enum hcq_status st = pb_chan_settle(b, from, &v);
    if (st != HCQ_OK)
        return st;
    if (to_aux)
        pq->main_work = false;
    return pb_acquire(b, ch, from->tl_va, &v);
}

/* The next command goes to ch (hand over first); a command on main is work the copy helper
 * must wait for before its next command. */
enum hcq_status
pb_use(struct pb_builder *b, struct pb_chan *ch)
{
    if (ch == &b->pq->main)
        b->pq->main_work = true;
    return pb_handover(b, ch);
}

/* ==== Segments ==== */

/* Whether this stream segment ends with its last QMD's release instead of a host release
 * behind a WFI: only when the segment's last command was a launch on the main compute channel
 * that is still the pending end of a chain, and no other channel took part (H100, `bench latency`:
 * launch + sync 5.8-6.0 -> 4.9-5.0 us). Not on kmds that release from the pushbuffer (Tegra,
 * nvgpu.md §6.6: unverified there, no Jetson here) nor in graphs (their replays end with the
 * patched host release). */
static bool
pb_end_by_qmd(const struct pb_builder *b)
{
    const struct pb_queue *pq = b->pq;
    return !b->g && !b->pd->kmd->info.sem_release_in_push && b->chain && b->pend_dst && b->cur == &pq->main &&
           !pq->aux && pq->main.engine == KMD_ENGINE_COMPUTE &&
           !(pq->main.tl_va >> b->qmd_ops->release_va_bits);
}

/* End the current segment: back on the main channel, release its next timeline value. In
 * stream mode submit it; in graph mode the caller lays it out. */
static enum hcq_status
pb_segment_end(struct pb_builder *b)
{
    struct pb_queue *pq = b->pq;
    /* not work: main only waits for the helper and releases the segment's value */
    enum hcq_status st = pb_handover(b, &pq->main);
    if (st != HCQ_OK)
        return st;
    struct pb_val v;
    if (pb_end_by_qmd(b)) {
        /* The segment's value is released by its last grid's QMD (slot 1, after the grid's
         * L1_SYSMEMBAR) instead of a host release behind a WFI. Every launch of the segment is in
         * that QMD's chain, and the segment began behind a WFI or a settled value, so the value still means
         * "everything before it is done". The channel stays busy: the next launch that does not chain waits
         * for idle first (pb_launch), as after any launch. */
        v = pb_tl_next(b, &pq->main);
        /* The release carries no membar of its own (FE_NONE), as the CUDA driver's QMD
         * releases: the chain's last grid keeps the template's CWD L1_SYSMEMBAR, which makes
         * its writes visible before the grid completes and the release is written (H100:
         * launch + sync 4.27-4.77 vs 4.72-5.43 us with FE_SYSMEMBAR). */
        gpu_qmd_set_release_membar(b->qmd_ops, b->pend_dw, 1, pq->main.tl_va, v.value, 0);
        pb_chain_end(b);
    } else {
        st = pb_chan_settle(b, &pq->main, &v);
        if (st != HCQ_OK)
            return st;
    }
    /* The main channel carries everything submitted so far: a segment that starts on the
     * copy helper must first hand over from it (queue order across submissions). */
    b->cur = &pq->main;
    if (b->g)
        return HCQ_OK;
    return pb_queue_flush(pq);
}

/* Grow c's scratch pushbuffer to hold need_dw more dwords. */
static enum hcq_status
pb_scratch_fit(struct pb_chan *c, uint32_t need_dw)
{
    if (c->push.count + need_dw <= c->push.cap)
        return HCQ_OK;
    uint32_t cap = c->push.cap;
    while (c->push.count + need_dw > cap)
        cap *= 2;
    return pb_push_grow(c, cap);
}

/* Dwords waiting in the scratch of every channel but main. */
static uint32_t
pb_other_dw(const struct pb_queue *pq)
{
    return pq->aux ? pq->aux->push.count : 0;
}

/* Room for one more command of need_dw dwords on ch (stream: end the segment when the
 * scratch or the ring share would overflow; graph: grow the scratch). */
enum hcq_status
pb_room(struct pb_builder *b, struct pb_chan *ch, uint32_t need_dw, uint64_t stream_B)
{
    struct pb_queue *pq = b->pq;
    uint32_t main_dw = pq->main.push.count, aux_dw = pb_other_dw(pq);
    need_dw += PB_CMD_MAX_DW; /* handover + final release */
    bool full =
        ch->push.count + need_dw > ch->push.cap || pq->main.push.count + PB_CMD_MAX_DW > pq->main.push.cap;
    if (!b->g) {
        uint64_t seg_B = pb_ring_unfenced(&pq->ring) + stream_B + (uint64_t)(main_dw + aux_dw + need_dw) * 4;
        if ((full || seg_B > PB_SEGMENT_MAX_B) && (main_dw || aux_dw)) {
            enum hcq_status st = pb_segment_end(b);
            if (st != HCQ_OK)
                return st;
            full = false;
        }
        if ((uint64_t)need_dw * 4 + stream_B > PB_SEGMENT_MAX_B)
            return hcq_err(HCQ_ERR_UNSUPPORTED,
                           "command %u needs %u pushbuffer dwords + 0x%llx stream bytes (limit 0x%x)",
                           b->cmd_index, need_dw, (unsigned long long)stream_B, PB_SEGMENT_MAX_B);
    }
    enum hcq_status st = pb_scratch_fit(ch, need_dw);
    return st == HCQ_OK ? pb_scratch_fit(&pq->main, need_dw) : st;
}

/* Memory for one launch's cbuf0 + QMD (256-byte aligned: QMD rule rm.md §6.4, cbuf0 64-byte
 * rule on V4/V5 §6.5). */
enum hcq_status
pb_kargs_alloc(struct pb_builder *b, uint32_t size_B, uint8_t **map_out, uint64_t *va_out)
{
    if (b->g) {
        struct pb_build_target *g = b->g;
        uint64_t off = (g->arena_used_B + 255) & ~255ull;
        if (off + size_B > g->arena_B)
            return hcq_err(HCQ_ERR_INVALID,
                           "graph arena overflow at command %u: 0x%llx + 0x%x > 0x%llx (engine bug)",
                           b->cmd_index, (unsigned long long)off, size_B, (unsigned long long)g->arena_B);
        g->arena_used_B = off + size_B;
        *map_out = g->arena_map + off;
        *va_out = g->arena_va + off;
        return HCQ_OK;
    }
    struct pb_queue *pq = b->pq;
    uint64_t off;
    while (!pb_ring_alloc(&pq->ring, size_B, 256, &off)) {
        pb_ring_retire(&pq->ring, __atomic_load_n(pq->main.tl, __ATOMIC_ACQUIRE));
        if (pb_ring_alloc(&pq->ring, size_B, 256, &off))
            break;
        uint64_t oldest;
        if (!pb_ring_oldest(&pq->ring, &oldest))
            return hcq_err(HCQ_ERR_NOMEM, "stream ring: 0x%x launch bytes do not fit (engine bug)", size_B);
        enum hcq_status st = pb_chan_wait(pq, &pq->main, oldest, PB_HANG_NS);
        if (st != HCQ_OK)
            return st;
    }
    *map_out = (uint8_t *)pq->stream->map + off;
    *va_out = pq->stream->va + off;
    return HCQ_OK;
}

/* Whether a copy on this queue runs as the copy kernel on the compute channel: device
 * memory to device memory, or to host memory below PB_D2H_KERNEL_MAX_B (reads of host memory
 * stay on the copy engine, which reaches PCIe speed), non-overlapping, on a dGPU. Measured on H100 (driver
 * 580): the copy engine a GR channel group gets moves 165-190 GB/s (r+w) whatever the LAUNCH_DMA layout
 * (pipelined, multi-line, chunked, PLC off), the copy kernel 1.1 TB/s at 1 MiB and ~3 TB/s from
 * 256 MiB. */
#define PB_D2H_KERNEL_MAX_B (1ull << 20)

static bool
pb_copy_by_kernel(const struct pb_builder *b, const struct hcq_cmd *c, uint64_t dst_off_B, uint64_t src_off_B,
                  uint64_t size_B)
{
    const struct hcq_buf *dst = c->u.copy.dst, *src = c->u.copy.src;
    if (b->pq->main.engine != KMD_ENGINE_COMPUTE || b->pd->kmd->info.unified_memory)
        return false;
    /* Device -> host below PB_D2H_KERNEL_MAX_B by the kernel too, on compute queues: it chains
     * on the main channel, so a small copy between launches (the LLM decode step's 0.5 MB of
     * logits after the output head) needs no handover to the copy helper and back - H100 tg128
     * Q8_0 +0.8%, Q4_K_M +1.2% - and alone it is as fast or faster (4 KiB 5.0 vs 4.3 GB/s, 64 KiB
     * 50.1 vs 35.5, 1 MiB 51.9 vs 52.7; from 16 MiB the copy engine is 2-5% faster). Device ->
     * host on a copy queue stays on the copy engine (not measured otherwise). Host -> device
     * stays on the copy engine (a kernel would read over PCIe at load latency). */
    if ((src->flags & HCQ_MEM_HOST) || ((dst->flags & HCQ_MEM_HOST) && (b->pq->q->kind != HCQ_QUEUE_COMPUTE ||
                                                                        size_B >= PB_D2H_KERNEL_MAX_B)))
        return false;
    if (dst == src && dst_off_B < src_off_B + size_B && src_off_B < dst_off_B + size_B)
        return false; /* k_copy_bytes needs disjoint ranges */
    return true;
}

/* k_copy_bytes' parameters (src/kernels/k_params.h, restated: the engine does not include
 * kernel headers - layering). A different layout fails loudly: pb_launch checks the byte
 * count against the cubin's parameter window, and the hcq suite's copy tests compare data. */
struct pb_copy_params {
    uint64_t dst_va;
    uint64_t src_va;
    uint64_t size_B;
};
_Static_assert(sizeof(struct pb_copy_params) == 24, "k_copy_bytes takes 24 parameter bytes");

/* The copy as k_copy_bytes on the main channel (chained like any launch). Geometry as
 * src/ops' flat launches: 256 threads, one per 16-byte vector, at most 65535 blocks. */
static enum hcq_status
pb_copy_kernel(struct pb_builder *b, const struct hcq_cmd *c, uint64_t dst_off_B, uint64_t src_off_B,
               uint64_t size_B)
{
    struct pb_copy_params p = {
        .dst_va = c->u.copy.dst->va + dst_off_B,
        .src_va = c->u.copy.src->va + src_off_B,
        .size_B = size_B,
    };
    uint64_t items = ((p.dst_va | p.src_va) & 15) == 0 ? (p.size_B + 15) / 16 : p.size_B;
    uint64_t blocks = (items + 255) / 256;
    uint32_t grid[3] = {blocks > 65535 ? 65535 : (uint32_t)blocks, 1, 1};
    const uint32_t block[3] = {256, 1, 1};
    return pb_launch(b, b->pd->copy_prog, grid, block, &p, sizeof p, NULL);
}

static enum hcq_status
pb_cmd_copy(struct pb_builder *b, const struct hcq_cmd *c)
{
    struct pb_queue *pq = b->pq;
    const struct hcq_buf *dst = c->u.copy.dst, *src = c->u.copy.src;
    uint64_t dst_off_B, src_off_B, size_B;
    enum hcq_status st;
    bool patched = b->g && hcq_cmd_copy_is_variable(c);
    hcq_cmd_copy_resolve(c, b->vars, &dst_off_B, &src_off_B, &size_B);
    if (patched) /* laid out for the largest size; each replay patches every chunk */
        size_B = c->u.copy.size_B;
    if (size_B == 0)
        return HCQ_OK;
    if (b->cmd_index < b->cpu_copy_end) {
        /* Tegra: device memory is host memory and the queue was idle with nothing before
         * this copy in the list (pb_cpu_copy_end): a memmove now is in queue order and
         * beats a DMA through the copy engine (nvgpu.md §6.7). */
        memmove((uint8_t *)dst->map + dst_off_B, (const uint8_t *)src->map + src_off_B, size_B);
        return HCQ_OK;
    }
    if (pq->copy_by_kernel[b->cmd_index]) /* decided by pb_build's prepare pass */
        return pb_copy_kernel(b, c, dst_off_B, src_off_B, size_B);
    struct pb_chan *ch = &pq->main;
    if (ch->engine == KMD_ENGINE_COMPUTE) {
        if (!pq->aux)
            return hcq_err(HCQ_ERR_INVALID,
                           "copy on a compute queue without its copy helper channel (engine bug)");
        ch = pq->aux;
    }
    st = pb_room(b, ch, gpu_push_ce_copy_dw(size_B), 0);
    if (st != HCQ_OK)
        return st;
    st = pb_use(b, ch);
    if (st != HCQ_OK)
        return st;
    ch->busy = true;
    if (!patched) {
        gpu_push_ce_copy(&ch->push, dst->va + dst_off_B, src->va + src_off_B, size_B);
        return HCQ_OK;
    }
    /* One patch per chunk: a replay rewrites its addresses and length, and turns chunks
     * past the replay's size into launches that transfer nothing. */
    for (uint64_t done = 0, k = 0; done < size_B && st == HCQ_OK; done += GPU_CE_MAX_LINE_B, k++) {
        uint32_t n = size_B - done > GPU_CE_MAX_LINE_B ? GPU_CE_MAX_LINE_B : (uint32_t)(size_B - done);
        uint32_t pos = ch->push.count;
        gpu_push_ce_copy(&ch->push, dst->va + dst_off_B + done, src->va + src_off_B + done, n);
        assert(ch->push.overflow || ch->push.count - pos == GPU_PUSH_CE_COPY_CHUNK_DW);
        struct pb_patch p = {
            .kind = PB_PATCH_COPY, .dim = (uint32_t)k, .pb_chan = ch, .pb_dw = pos, .cmd = c};
        st = pb_patch_add(b, &p);
    }
    return st;
}

/* Value a TIMESTAMP leaves in its signal: the release that carries the timestamp also
 * writes a payload (rm.md §5.6's 16-byte record), so it rewrites the value the signal has
 * then: the last SIGNAL to it earlier in this list, else what the host sees now. */
static struct pb_val
pb_timestamp_value(struct pb_builder *b, const struct hcq_signal *sig)
{
    for (uint32_t i = b->cmd_index; i-- > 0;) {
        const struct hcq_cmd *p = &b->cl->cmds[i];
        if (p->kind == HCQ_CMD_SIGNAL && p->u.sig.sig == sig) {
            uint64_t v = hcq_cmd_value(p->u.sig.var, p->u.sig.add, b->vars);
            if (p->u.sig.var == HCQ_VAR_NONE)
                return (struct pb_val){.kind = PB_VAL_CONST, .value = v};
            return (struct pb_val){.kind = PB_VAL_VAR, .value = v, .var = p->u.sig.var, .add = p->u.sig.add};
        }
    }
    return (struct pb_val){.kind = PB_VAL_NOW, .value = *sig->slot, .slot = sig->slot};
}

/* hcq_queue_timestamp_launch in stream mode: the pending QMD is that launch's (the core checks
 * that the launch is the previous command), so its release slot 0 writes the value the signal
 * has then (pb_timestamp_value) and the device time at the grid's completion (FOUR_WORDS,
 * gpu_qmd_set_release): no WFI, the chain and any programmatic link stay. False where that cannot be done
 * (graphs, whose replays would need the value patched; no pending QMD; a signal address the QMD version's
 * release cannot reach): the caller records an ordinary timestamp. */
static bool
pb_stamp_fold(struct pb_builder *b, const struct hcq_cmd *c)
{
    const struct hcq_signal *sig = c->u.ts.sig;
    if (b->g || !b->chain || !b->pend_dst || b->cur != &b->pq->main || sig->va >> b->qmd_ops->release_va_bits)
        return false;
    const struct pb_val v = pb_timestamp_value(b, sig);
    if (v.kind == PB_VAL_VAR)
        return false;
    gpu_qmd_set_release(b->qmd_ops, b->pend_dw, 0, sig->va, v.value);
    return true;
}

static enum hcq_status
pb_cmd_sync(struct pb_builder *b, const struct hcq_cmd *c)
{
    struct pb_queue *pq = b->pq;
    if (c->kind == HCQ_CMD_TIMESTAMP && c->u.ts.of_launch && pb_stamp_fold(b, c))
        return HCQ_OK;
    /* Signals, waits, timestamps and barriers go where the previous command went: that is
     * the work they order against (a later command on the other channel hands over). */
    struct pb_chan *ch = b->cur;
    enum hcq_status st = pb_room(b, ch, 32, 0);
    if (st != HCQ_OK)
        return st;
    ch = b->cur;
    st = pb_use(b, ch);
    if (st != HCQ_OK)
        return st;
    bool is_main = ch == &pq->main;
    switch (c->kind) {
    case HCQ_CMD_SIGNAL:
    case HCQ_CMD_WAIT: {
        const struct hcq_signal *sig = c->u.sig.sig;
        struct pb_val v = {.kind = c->u.sig.var == HCQ_VAR_NONE ? PB_VAL_CONST : PB_VAL_VAR,
                           .value = hcq_cmd_value(c->u.sig.var, c->u.sig.add, b->vars),
                           .var = c->u.sig.var,
                           .add = c->u.sig.add};
        if (c->kind == HCQ_CMD_WAIT) {
            /* A chained QMD would start without looking at the acquire: end the chain. */
            if (is_main)
                pb_chain_end(b);
            return pb_acquire(b, ch, sig->va, &v);
        }
        st = pb_release(b, ch, sig->va, &v, false);
        break;
    }
    case HCQ_CMD_TIMESTAMP: {
        struct pb_val v = pb_timestamp_value(b, c->u.ts.sig);
        st = pb_release(b, ch, c->u.ts.sig->va, &v, true);
        break;
    }
    case HCQ_CMD_BARRIER:
        pb_ce_flush(b, ch);
        gpu_push_wfi(&ch->push);
        if (ch->engine == KMD_ENGINE_COMPUTE)
            gpu_push_invalidate_shader_caches(&ch->push, true);
        break;
    default:
        return hcq_err(HCQ_ERR_INVALID, "command %u: kind %d", b->cmd_index, (int)c->kind);
    }
    /* Releases and barriers wait for idle: nothing of this channel runs past them. */
    ch->busy = false;
    if (is_main)
        pb_chain_end(b);
    return st;
}

/* copies_by_cpu kmds (Tegra): how many leading commands of the list are copies the CPU
 * may do at once, in queue order, without waiting: the queue must already be idle (its
 * main timeline, which covers the copy helper, reached everything submitted) and only
 * such copies may come before. Any later copy - behind a WAIT, a launch, or work still
 * running - goes through the copy engine: a host memmove there would have to wait for
 * the GPU inside queue_submit, and a WAIT on a signal set after the submit would then
 * never be satisfied (the deadlock of test_nvgpu's cross_queue_copy). Graphs never copy
 * by CPU (a replay runs on the GPU). */
static uint32_t
pb_cpu_copy_end(const struct pb_queue *pq, const struct hcq_cmdlist *cl, bool graph)
{
    if (graph || !pq->pd->kmd->info.copies_by_cpu)
        return 0;
    if (pq->main.push.count || (pq->aux && pq->aux->push.count) ||
        __atomic_load_n(pq->main.tl, __ATOMIC_ACQUIRE) < pq->main.tl_last)
        return 0;
    uint32_t i = 0;
    while (i < cl->count && cl->cmds[i].kind == HCQ_CMD_COPY &&
           (cl->cmds[i].u.copy.size_B == 0 || (cl->cmds[i].u.copy.dst->map && cl->cmds[i].u.copy.src->map)))
        i++;
    return i;
}

enum hcq_status
pb_build(struct pb_queue *pq, const struct hcq_cmdlist *cl, const uint64_t *vars,
         struct pb_build_target *graph)
{
    struct pb_builder b = {
        .pq = pq,
        .pd = pq->pd,
        .cl = cl,
        .vars = vars,
        .g = graph,
        .cur = &pq->main,
        .qmd_ops = pq->pd->arch->qmd ? pq->pd->arch->qmd : gpu_qmd_ops_by_version(pq->pd->arch->qmd_version),
    };
    enum hcq_status st = HCQ_OK;
    b.cpu_copy_end = pb_cpu_copy_end(pq, cl, graph != NULL);
    /* Prepare what commands need before building (allocations stay off the per-command path)
     * and decide once where each copy runs (pb_cmd_copy reads pq->copy_by_kernel). */
    if (cl->count > pq->copy_by_kernel_n) {
        uint8_t *n = realloc(pq->copy_by_kernel, cl->count);
        if (!n)
            return hcq_err(HCQ_ERR_NOMEM, "copy placement of %u commands", cl->count);
        pq->copy_by_kernel = n;
        pq->copy_by_kernel_n = cl->count;
    }
    if (cl->count)
        memset(pq->copy_by_kernel, 0, cl->count);
    uint32_t args_max = 0, local_max = 0;
    for (uint32_t i = 0; i < cl->count && st == HCQ_OK; i++) {
        const struct hcq_cmd *c = &cl->cmds[i];
        if (c->kind == HCQ_CMD_LAUNCH && c->u.launch.args_B > args_max)
            args_max = c->u.launch.args_B;
        if (c->kind == HCQ_CMD_LAUNCH &&
            ((const struct pb_program *)c->u.launch.prog->priv)->local_B > local_max)
            local_max = ((const struct pb_program *)c->u.launch.prog->priv)->local_B;
        if (c->kind == HCQ_CMD_COPY && i >= b.cpu_copy_end && pq->main.engine == KMD_ENGINE_COMPUTE) {
            /* a copy whose offsets/size a graph patches stays on the copy engine (its patch
             * points rewrite CE methods); the others may run as a kernel */
            uint64_t d_off, s_off, n_B;
            hcq_cmd_copy_resolve(c, vars, &d_off, &s_off, &n_B);
            if (!(graph && hcq_cmd_copy_is_variable(c)) && pb_copy_by_kernel(&b, c, d_off, s_off, n_B) &&
                pb_copy_prog_get(pq->pd) == HCQ_OK) {
                pq->copy_by_kernel[i] = 1;
                const struct pb_program *cp = pq->pd->copy_prog->priv;
                if (cp->local_B > local_max)
                    local_max = cp->local_B;
                continue;
            }
            st = pb_aux_get(pq);
        }
    }
    if (st == HCQ_OK && args_max > pq->argbuf_B) {
        uint8_t *n = realloc(pq->argbuf, args_max);
        if (!n)
            return hcq_err(HCQ_ERR_NOMEM, "argument scratch of %u bytes", args_max);
        pq->argbuf = n;
        pq->argbuf_B = args_max;
    }
    /* The list's largest local-memory need, emitted before its first command rather than at its
     * launch: an emission behind a WAIT of the list would hold up every later emission of the
     * device until the WAIT passes (pb_queue.c "Local memory", (a)). Graphs emitted theirs in
     * pb_graph_prepare. */
    if (st == HCQ_OK && !graph && local_max > pq->local_per_thread_B) {
        st = pb_room(&b, &pq->main, PB_LMEM_EMIT_DW + 2, 0);
        if (st == HCQ_OK)
            st = pb_use(&b, &pq->main);
        if (st == HCQ_OK)
            st = pb_lmem_first(&b, local_max);
    }
    for (uint32_t i = 0; i < cl->count && st == HCQ_OK; i++) {
        const struct hcq_cmd *c = &cl->cmds[i];
        b.cmd_index = i;
        switch (c->kind) {
        case HCQ_CMD_LAUNCH:
            st = pb_cmd_launch(&b, c);
            break;
        case HCQ_CMD_COPY:
            st = pb_cmd_copy(&b, c);
            break;
        default:
            st = pb_cmd_sync(&b, c);
            break;
        }
    }
    if (st == HCQ_OK)
        st = pb_segment_end(&b);
    if (st != HCQ_OK && !graph) {
        /* Nothing half-built may reach the GPU with a later submission, and the timeline
         * values it would have released are not waited for. */
        pq->main.push.count = 0;
        pq->main.tl_last = pq->main.tl_flushed;
        pq->main_work = true; /* a dropped handover may have cleared it */
        pb_lmem_drop(pq);     /* its emissions were dropped with main.push */
        if (pq->aux) {
            pq->aux->push.count = 0;
            pq->aux->tl_last = pq->aux->tl_flushed;
        }
    }
    return st;
}
