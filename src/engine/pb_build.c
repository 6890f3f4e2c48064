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
 *  - a large device copy on a copy queue may be split over the queue's channel and extra
 *    channels on other copy engines: they start behind a release of the main channel, and
 *    the main channel acquires each of their releases before anything after the copy;
 *  - every submission ends on the main channel with the release of its next timeline value
 *    (from the pushbuffer, or from the last QMD: pb_end_by_qmd).
 */
#include "pb.h"

#include "gpu_cubin.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scratch dwords a single command may need at most (a copy of <= 2 GiB, cross-channel
 * handover and a release: well under this). Large copies are checked separately. */
#define PB_CMD_MAX_DW 96u
/* The stream part of one segment stays below half the ring (pb_ring_alloc's limit). */
#define PB_SEGMENT_MAX_B (PB_STREAM_B / 2 - 65536u)

struct pb_builder {
    struct pb_queue *pq;
    struct pb_dev *pd;
    const struct hcq_cmdlist *cl;
    const uint64_t *vars;
    struct pb_build_target *g; /* NULL: stream mode */
    struct pb_chan *cur;       /* channel of the previous command (main at a segment start) */
    /* The last launch's QMD stays in CPU memory until its successor is known: chaining
     * patches it, and stream memory may be write-combined BAR1 that must not be read. */
    uint32_t pend_dw[GPU_QMD_MAX_DW];
    uint32_t *pend_dst;     /* where it goes; NULL: nothing pending */
    bool chain;             /* the next launch may chain to the pending QMD */
    uint32_t pend_smem_cfg; /* TARGET_SM_CONFIG_SHARED_MEM_SIZE of the pending QMD */
    const struct gpu_qmd_ops *qmd_ops;
    uint32_t cmd_index;
    uint32_t cpu_copy_end; /* copies_by_cpu: commands [0, this) are host memmoves */
};

/* Write the pending QMD to its place (before any pushbuffer naming it is submitted). */
static void
pb_qmd_flush(struct pb_builder *b)
{
    if (b->pend_dst) {
        memcpy(b->pend_dst, b->pend_dw, b->qmd_ops->size_B);
        b->pend_dst = NULL;
    }
}

/* No later launch may chain to what was launched so far. */
static void
pb_chain_end(struct pb_builder *b)
{
    pb_qmd_flush(b);
    b->chain = false;
}

/* ==== Patches (graph mode) ==== */

static enum hcq_status
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
static enum hcq_status
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
    return !b->g && !b->pd->kmd->info.sem_release_in_push && b->chain && b->pend_dst &&
           b->cur == &pq->main && !pq->aux && pq->main.engine == KMD_ENGINE_COMPUTE &&
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
static enum hcq_status
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
static enum hcq_status
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

/* ==== Commands ==== */

/* Find the (hi, lo) range of a named QMD field in the version's field table. */
static bool
pb_qmd_field(const struct gpu_qmd_ops *ops, const char *name, uint32_t *hi_out, uint32_t *lo_out)
{
    for (uint32_t i = 0; i < ops->field_count; i++) {
        if (strcmp(ops->fields[i].name, name) == 0) {
            *hi_out = ops->fields[i].hi;
            *lo_out = ops->fields[i].lo;
            return true;
        }
    }
    return false;
}

/* CWD_MEMBAR_TYPE of a QMD that schedules a successor (DEPENDENT_QMD0): NONE. The grid's
 * memory barrier at completion is what made each chained kernel cost ~1.1 us of GPU time on
 * H100 (graph of 300 empty kernels: 1.08 -> 0.57 us/kernel; 300 dependent k_axpb_u64 on
 * one counter: 1.41 -> 0.89 us/kernel, every increment seen; L1_MEMBAR costs as much as
 * L1_SYSMEMBAR). The successor reads what its predecessor wrote through L2 (the
 * dependent-chain bench and the hcq suite's chained launches check it); the last QMD of a
 * chain keeps the template's L1_SYSMEMBAR, and every release after it waits for idle
 * (RELEASE_WFI), so what the host or another engine sees is unchanged. pb_launch sets it. */

/* Write value into bits hi..lo of an encoded QMD (callers check hi / 32 == lo / 32). Bits of
 * value above the field's width are dropped, not asserted on as gpu_bits_set does. */
static void
pb_qmd_put(uint32_t *dw, uint32_t hi, uint32_t lo, uint32_t value)
{
    gpu_bits_set(dw, hi, lo, value & gpu_bits_mask(hi - lo + 1));
}

/* Set a named QMD field (within one dword) in an encoded QMD. */
static void
pb_qmd_set(const struct gpu_qmd_ops *ops, uint32_t *dw, const char *name, uint32_t value)
{
    /* One lookup per QMD version and name, kept by the name's address (the callers pass string
     * literals): this runs per chained launch, and a programmatic link sets ten fields - a strcmp
     * search of the field table for each was 30% of pb_build's instructions (callgrind, `bench
     * latency --quick` on emu:gh100). A name not in the cache's 16 entries is looked up every
     * time (correct, only slower). */
    enum { CACHE = 16 };
    static _Thread_local struct {
        const struct gpu_qmd_ops *ops;
        const char *name;
        uint16_t hi, lo;
        bool ok;
    } cache[CACHE];
    static _Thread_local uint32_t used;
    uint32_t hi = 0, lo = 0;
    bool ok = false, found = false;
    for (uint32_t i = 0; i < used && !found; i++) {
        if (cache[i].name == name && cache[i].ops == ops) {
            hi = cache[i].hi;
            lo = cache[i].lo;
            ok = cache[i].ok;
            found = true;
        }
    }
    if (!found) {
        ok = pb_qmd_field(ops, name, &hi, &lo) && hi / 32 == lo / 32;
        if (used < CACHE) {
            cache[used].ops = ops;
            cache[used].name = name;
            cache[used].hi = (uint16_t)hi;
            cache[used].lo = (uint16_t)lo;
            cache[used].ok = ok;
            used++;
        }
    }
    if (ok)
        pb_qmd_put(dw, hi, lo, value);
}

/* Programmatic dependent launch (HCQ_LAUNCH_DEP_WAIT, Hopper QMD V04 fields, gpu_qmd.h): the
 * pending QMD (the producer) pre-exits when its last CTA has launched, which schedules the
 * new QMD (its DEPENDENT_QMD0) while the producer's CTAs still run, and arrives at a latch
 * when it completes; the new QMD waits on that latch in griddepcontrol.wait, invalidating
 * the SM's data caches on the acquire. Where the QMD version lacks the fields nothing changes
 * (the dependent starts when the producer completes).
 * The producer's completion membar: L1_MEMBAR with CWD_MEMBAR_TASK_CHASING_ENABLE. Without a
 * membar (the chain's NONE) the latch could open before the producer's last writes reached L2:
 * on H100 the LLM e2e A/Bs (steps mixing PDL and plain launches) computed wrong tokens in
 * most runs; with L1_MEMBAR, L1_SYSMEMBAR or L1_MEMBAR + task chasing every run passed, and
 * task chasing costs least (tg128 Q6_K rm:0, H100: 1335 tokens/s vs 1296 with L1_MEMBAR alone
 * and 1365 unsafe). The CUDA driver writes L1_SYSMEMBAR in its QMDs.
 * Latch ids: a new one per link from a device-wide 32-bit counter that starts at a random point (pb_device.c). Measured on H100 (hcq suite dep_wait_chain, 120 links, streamed and
 * replayed): ids reused inside a chain in flight hang the channel (1, 2, 1, ...) or fault it
 * (Xid 13, one id for every link); unique ids pass, also when a graph replays the same ids
 * after the previous replay. Latch state outlives the channel: after a process whose chain
 * hung on ids 1 and 2, later processes counting ids from 1 computed a wrong token at their first
 * decode step in 2 of 3 and 1 of 2 runs; with the random start 4 of 4 passed (H100). */
static void
pb_pdl_link(struct pb_builder *b, uint32_t *next_dw)
{
    uint32_t hi, lo;
    if (!pb_qmd_field(b->qmd_ops, "ENABLE_PROGRAM_PRE_EXIT", &hi, &lo))
        return;
    uint32_t seq = atomic_fetch_add(&b->pd->pdl_seq, 1u);
    uint32_t id = seq ? seq : 1u; /* from the random pdl_seq0, 0 skipped */
    pb_qmd_set(b->qmd_ops, b->pend_dw, "ENABLE_PROGRAM_PRE_EXIT", 1);
    pb_qmd_set(b->qmd_ops, b->pend_dw, "PRE_EXIT_AT_LAST_CTA_LAUNCH", 1);
    pb_qmd_set(b->qmd_ops, b->pend_dw, "ARRIVE_AT_LATCH_VALID", 1);
    pb_qmd_set(b->qmd_ops, b->pend_dw, "ARRIVE_AT_LATCH_ID", id);
    pb_qmd_set(b->qmd_ops, b->pend_dw, "CWD_MEMBAR_TYPE", GPU_QMD_CWD_MEMBAR_TYPE_L1_MEMBAR);
    pb_qmd_set(b->qmd_ops, b->pend_dw, "CWD_MEMBAR_TASK_CHASING_ENABLE", 1);
    pb_qmd_set(b->qmd_ops, next_dw, "WAIT_ON_LATCH_VALID", 1);
    pb_qmd_set(b->qmd_ops, next_dw, "WAIT_ON_LATCH_ID", id);
    pb_qmd_set(b->qmd_ops, next_dw, "LATCH_ACQUIRE_INVALIDATE_SHADER_DATA_CACHE", 1);
    pb_qmd_set(b->qmd_ops, next_dw, "LATCH_ACQUIRE_INVALIDATE_TEXTURE_DATA_CACHE", 1);
}

static enum hcq_status
pb_launch_patches(struct pb_builder *b, const struct hcq_cmd *c, const struct pb_program *pp, uint8_t *cbuf0,
                  uint32_t *qmd, const uint32_t *qmd_dw)
{
    const struct hcq_cmdlist *cl = b->cl;
    enum hcq_status st = HCQ_OK;
    for (uint32_t i = 0; i < c->u.launch.patch_count && st == HCQ_OK; i++) {
        const struct hcq_arg_patch *ap = &cl->patches[c->u.launch.patch_first + i];
        struct pb_patch p = {.kind = ap->size_B == 8 ? PB_PATCH_ARG64 : PB_PATCH_ARG32,
                             .var = ap->var,
                             .map = (uint32_t *)(cbuf0 + pp->param_off_B + ap->offset_B)};
        st = pb_patch_add(b, &p);
    }
    static const char *const v3[3] = {"CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH"};
    static const char *const v4[3] = {"GRID_WIDTH", "GRID_HEIGHT", "GRID_DEPTH"};
    for (uint32_t d = 0; d < 3 && st == HCQ_OK; d++) {
        if (c->u.launch.grid_var[d] == HCQ_VAR_NONE)
            continue;
        uint32_t hi, lo;
        if (!pb_qmd_field(b->qmd_ops, v4[d], &hi, &lo) && !pb_qmd_field(b->qmd_ops, v3[d], &hi, &lo))
            return hcq_err(HCQ_ERR_UNSUPPORTED, "graph: QMD %s has no grid field %s", b->qmd_ops->name,
                           v4[d]);
        if (hi / 32 != lo / 32)
            return hcq_err(HCQ_ERR_UNSUPPORTED, "graph: QMD %s grid field %u:%u spans two dwords",
                           b->qmd_ops->name, hi, lo);
        /* The replay writes the whole dword from this copy: no read of (possibly
         * write-combined) arena memory. */
        struct pb_patch p = {.kind = PB_PATCH_GRID,
                             .var = c->u.launch.grid_var[d],
                             .dim = d,
                             .map = qmd + lo / 32,
                             .qmd_hi = hi,
                             .qmd_lo = lo,
                             .qmd_word = qmd_dw[lo / 32],
                             .aux_map = (uint32_t *)(cbuf0 + GPU_CBUF0_GRID_DIM_OFF_B) + d};
        st = pb_patch_add(b, &p);
    }
    return st;
}

/* Emit the device's local-memory store on the main channel for local_B bytes per thread
 * (pb_queue.c "Local memory"). It applies to launches after it: running ones finish first (WFI)
 * and a new chain starts (a chained QMD would not see the methods). main.push has room. */
static enum hcq_status
pb_lmem_first(struct pb_builder *b, uint32_t local_B)
{
    struct pb_chan *ch = &b->pq->main;
    if (ch->busy)
        gpu_push_wfi(&ch->push);
    ch->busy = false;
    pb_chain_end(b);
    return pb_lmem_emit(b->pq, local_B);
}

/* Encode d into qmd_dw, or reuse the queue's last encoding when d describes the same launch
 * but for its cbuf0 address: a stream of launches of one kernel with one grid (launch + sync,
 * back-to-back, a loop) then costs a 384-byte copy and one field instead of every field's
 * encode and checks (~2,800 of the ~5,400 instructions of a launch + sync's submit on emu:gh100
 * under callgrind; on H100 the whole submit took 2.1-2.2 us, 0.9 of it building).
 * The memo is compared byte for byte (d is copied from the program's zeroed template and set
 * field by field, so its padding is stable; a mismatch only costs a full encode). The address
 * has to be what every version holds (256-byte aligned, < 2^40: the stream ring's are). */
static enum hcq_status
pb_qmd_encode_memo(struct pb_builder *b, const struct gpu_qmd_desc *d, uint32_t *qmd_dw)
{
    struct pb_queue *pq = b->pq;
    struct gpu_qmd_desc key;
    memcpy(&key, d, sizeof key);
    key.cbuf[0].va = 0;
    const uint64_t va = d->cbuf[0].va;
    if (pq->qmd_memo_valid && (va & 0xFF) == 0 && va < GPU_QMD_VA_LIMIT &&
        !memcmp(&key, &pq->qmd_memo_desc, sizeof key)) {
        memcpy(qmd_dw, pq->qmd_memo_dw, b->qmd_ops->size_B);
        gpu_qmd_set_cbuf_va(b->qmd_ops, qmd_dw, 0, va);
        return HCQ_OK;
    }
    pq->qmd_memo_valid = false;
    enum hcq_status st = gpu_qmd_encode(b->qmd_ops, d, qmd_dw);
    if (st != HCQ_OK)
        return st;
    memcpy(&pq->qmd_memo_desc, &key, sizeof key);
    memcpy(pq->qmd_memo_dw, qmd_dw, b->qmd_ops->size_B);
    pq->qmd_memo_valid = true;
    return HCQ_OK;
}

/* A launch of prog on the main (compute) channel with these grid, block and arguments. c is
 * the recorded LAUNCH command (graph variables are patched through it), or NULL for the
 * engine's own launches (copies by kernel), which have no variables. */
static enum hcq_status
pb_launch(struct pb_builder *b, const struct hcq_program *prog, uint32_t grid[3], const uint32_t block[3],
          const void *args, uint32_t args_B, const struct hcq_cmd *c)
{
    struct pb_queue *pq = b->pq;
    struct pb_dev *pd = b->pd;
    struct pb_chan *ch = &pq->main;
    struct pb_program *pp = prog->priv;
    pp->launched = true;
    if (ch->engine != KMD_ENGINE_COMPUTE)
        return hcq_err(HCQ_ERR_INVALID, "launch of %s recorded on a copy queue", prog->info.name);
    if (args_B != pp->param_B)
        return hcq_err(HCQ_ERR_INVALID, "launch of %s: 0x%x argument bytes (expected 0x%x)", prog->info.name,
                       args_B, pp->param_B);
    /* The fast path: the device's store as this queue last emitted it holds the kernel's local
     * memory (pb_build emits a list's largest need before its first command, so this is rare). */
    const bool emit = pp->local_B > pq->local_per_thread_B;
    enum hcq_status st = pb_room(b, ch, 32 + (emit ? PB_LMEM_EMIT_DW + 2 : 0), pp->kargs_B);
    if (st != HCQ_OK)
        return st;
    st = pb_use(b, ch);
    if (st != HCQ_OK)
        return st;
    if (pp->local_B > pq->local_per_thread_B) {
        if (b->g)
            return hcq_err(HCQ_ERR_INVALID, "graph: local memory not reserved for %s (engine bug)",
                           prog->info.name);
        st = pb_lmem_first(b, pp->local_B);
        if (st != HCQ_OK)
            return st;
    }

    /* cbuf0, QMD. */
    uint8_t *map = NULL;
    uint64_t va = 0;
    st = pb_kargs_alloc(b, pp->kargs_B, &map, &va);
    if (st != HCQ_OK)
        return st;
    uint32_t cbuf0_span = (pp->cbuf0_B + 255) & ~255u;
    uint32_t *qmd = (uint32_t *)(map + cbuf0_span);
    uint64_t qmd_va = va + cbuf0_span;
    /* cbuf0 is built in CPU memory and copied to the ring in one pass, instead of zeroed there
     * and then stored field by field: on rm the ring is device memory written through a
     * write-combined BAR1 mapping, where stores that come back to a line already sent go out as
     * partial writes (H100, `bench latency`: back-to-back 0.461 / 0.505 -> 0.451 / 0.452
     * us/kernel, launch + sync 4.06 / 4.39 -> 3.95 / 4.03 us). Larger cbuf0s (over 2 KiB of
     * parameters and constants) are built in place. */
    uint8_t cb_tmp[2048];
    uint8_t *cb = pp->cbuf0_B <= sizeof cb_tmp ? cb_tmp : map;
    st = gpu_cbuf0_build(pd->arch, pp->k, grid, block, pd->local_window_va, pd->shared_window_va, args,
                         args_B, cb, pp->cbuf0_B);
    if (st != HCQ_OK)
        return st;
    gpu_cbuf0_set_va(pd->arch, pp->k, cb, pp->cbuf0_B, va);
    if (cb != map)
        memcpy(map, cb, pp->cbuf0_B);
    struct gpu_qmd_desc d; /* copied whole (padding too) and set field by field: pb_qmd_encode_memo */
    memcpy(&d, &pp->desc, sizeof d);
    memcpy(d.grid, grid, sizeof d.grid);
    memcpy(d.block, block, sizeof d.block);
    d.cbuf[0].va = va;
    d.cbuf[0].size_B = pp->cbuf0_B;
    d.cbuf[0].valid = true;
    d.cbuf[0].invalidate = true;
    d.cbuf[0].prefetch = 0;
    /* FREE_CTA_SLOTS_EMPTY_SM of V4 QMDs (the other encoders have no such field):
     * gpu_cubin_free_cta_slots_fit - ceil(CTAs / SMs) for grids that fit one wave by the
     * occupancy model, 0 (the hardware's own placement, as the CUDA driver's QMDs) for the rest.
     * A nonzero value starts a chained grid sooner (H100: graph of 300 empty kernels 0.458 ->
     * 0.376 us/kernel, 300 dependent kernels 0.70 -> 0.63, 2 CTAs per SM 1.03 -> 0.95; decode
     * unchanged: its kernels have shared memory of their own, 0). The hardware trusts the value:
     * 32 everywhere, or the occupancy on grids of more than one wave, faulted kernels (Xid 13).
     * A graph launch whose grid comes from a variable is patched at every replay (pb_graph.c) to
     * grids the value here did not see: 0 there (a grid grown past one wave at a recorded value
     * is what faulted). */
    bool grid_var = false;
    for (int i = 0; b->g && c && c->kind == HCQ_CMD_LAUNCH && i < 3; i++)
        grid_var |= c->u.launch.grid_var[i] != HCQ_VAR_NONE;
    const uint32_t sms = grid_var ? 0 : pd->kmd->info.sm_count;
    d.free_cta_slots = gpu_cubin_free_cta_slots_fit(pp->k, block, d.shared_mem_B, grid, sms);
    /* cbuf0 with CONSTANT_BUFFER_PREFETCH = 1, as the CUDA driver's QMDs carry on a bank: the
     * constants are fetched ahead of the grid, so a chained launch no longer waits for them
     * (H100, `bench latency`: graph of 300 empty kernels 0.566 -> 0.461 us/kernel, back-to-back
     * 0.659 -> 0.510, 300 dependent kernels as a graph 0.895 -> 0.686 and streamed 0.984 ->
     * 0.685; value 2 changed nothing; decode unchanged). On V4 (Hopper, measured); V5 has the
     * field but is not verified on a GPU here, so it stays 0 there; V3 has none. */
    if (b->qmd_ops->version >= 0x0400)
        d.cbuf[0].prefetch = (uint8_t)(b->qmd_ops->version < 0x0500 ? 1 : 0);
    d.local_mem_high_B = pq->local_per_thread_B;
    uint32_t qmd_dw[GPU_QMD_MAX_DW];
    st = pb_qmd_encode_memo(b, &d, qmd_dw);
    if (st != HCQ_OK)
        return st;
    if (b->g && c) {
        st = pb_launch_patches(b, c, pp, map, qmd, qmd_dw);
        if (st != HCQ_OK)
            return st;
    }
    if (pd->debug & HCQ_DEBUG_QMD_DUMP) {
        char text[4096];
        gpu_qmd_dump(b->qmd_ops, qmd_dw, text, sizeof text);
        /* the header carries what a log line cut at its length limit would lose from the fields */
        HCQ_LOG_INFO("qmd_dump: %s grid %u,%u,%u block %u,%u,%u regs %u shared 0x%x free_cta_slots %u QMD at "
                     "0x%llx cbuf0 at 0x%llx:\n%s",
                     prog->info.name, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                     d.register_count, d.shared_mem_B, d.free_cta_slots, (unsigned long long)qmd_va,
                     (unsigned long long)va, text);
    }

    if (b->chain) {
        /* Back-to-back: the previous grid schedules this one when it completes (rm.md §5.5),
         * without a memory barrier of its own (the CWD_MEMBAR_TYPE comment above says why). */
        gpu_qmd_set_dependent(b->qmd_ops, b->pend_dw, qmd_va);
        pb_qmd_set(b->qmd_ops, b->pend_dw, "CWD_MEMBAR_TYPE", GPU_QMD_CWD_MEMBAR_TYPE_NONE);
        if (c && (c->u.launch.flags & HCQ_LAUNCH_DEP_WAIT))
            pb_pdl_link(b, qmd_dw);
        pb_qmd_flush(b);
    } else {
        pb_qmd_flush(b);
        if (ch->busy)
            gpu_push_wfi(&ch->push); /* an earlier launch may still run (after a WAIT) */
        /* instruction, global data and constant caches at each chain start: a program upload
         * needs the first; the QMD's own per-launch bits cover L1 data and cbuf0's bank */
        gpu_push_invalidate_shader_caches_no_wfi(&ch->push, 7);
        gpu_push_launch(&ch->push, qmd_va);
    }
    memcpy(b->pend_dw, qmd_dw, b->qmd_ops->size_B);
    b->pend_dst = qmd;
    b->pend_smem_cfg = d.sm_config_target;
    b->chain = true;
    ch->busy = true;
    return HCQ_OK;
}

static enum hcq_status
pb_cmd_launch(struct pb_builder *b, const struct hcq_cmd *c)
{
    uint32_t grid[3];
    hcq_cmd_launch_grid(c, b->vars, grid);
    for (int d = 0; d < 3; d++)
        if (b->g && grid[d] == 0)
            grid[d] = 1; /* a grid variable not set yet: patched at every replay */
    const void *args = b->cl->args + c->u.launch.args_off_B;
    if (b->vars && c->u.launch.patch_count) {
        hcq_cmd_launch_args(b->cl, c, b->vars, b->pq->argbuf);
        args = b->pq->argbuf;
    }
    return pb_launch(b, c->u.launch.prog, grid, c->u.launch.block, args, c->u.launch.args_B, c);
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
    if ((src->flags & HCQ_MEM_HOST) ||
        ((dst->flags & HCQ_MEM_HOST) && (b->pq->q->kind != HCQ_QUEUE_COMPUTE || size_B >= PB_D2H_KERNEL_MAX_B)))
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
