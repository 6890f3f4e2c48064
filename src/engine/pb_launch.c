/* SPDX-License-Identifier: MIT */
/*
 * pb_launch.c - one launch into the pushbuffer (pb_build.c's LAUNCH commands and the engine's
 * own copy kernel): cbuf0 and QMD built in CPU memory, QMD fields the encoder does not own
 * (FREE_CTA_SLOTS, cbuf0 prefetch), chaining to the previous QMD (DEPENDENT_QMD0) and
 * programmatic dependent launch links. Ordering rules: pb_build.c's header. Layer: hcq.
 */
#include "pb_build.h"

#include "gpu_cubin.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

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
 * on H100 the LLM end-to-end tests (steps mixing PDL and plain launches) computed wrong tokens in
 * most runs; with L1_MEMBAR, L1_SYSMEMBAR or L1_MEMBAR + task chasing every run passed, and
 * task chasing costs least (tg128 Q6_K rm:0, H100: 1335 tokens/s vs 1296 with L1_MEMBAR alone
 * and 1365 unsafe). The CUDA driver writes L1_SYSMEMBAR in its QMDs.
 * Latch ids: a new one per link from a device-wide 32-bit counter that starts at a random point
 * (pb_device.c). Measured on H100 (hcq suite dep_wait_chain, 120 links, streamed and replayed): ids reused
 * inside a chain in flight hang the channel (1, 2, 1, ...) or fault it (Xid 13, one id for every link);
 * unique ids pass, also when a graph replays the same ids after the previous replay. Latch state outlives the
 * channel: after a process whose chain hung on ids 1 and 2, later processes counting ids from 1 computed a
 * wrong token at their first decode step in 2 of 3 and 1 of 2 runs; with the random start 4 of 4 passed
 * (H100). */
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
enum hcq_status
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
enum hcq_status
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

enum hcq_status
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
