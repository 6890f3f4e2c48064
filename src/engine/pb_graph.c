/* SPDX-License-Identifier: MIT */
/*
 * pb_graph.c - graphs on the pushbuffer engine: a command list laid out once into
 * persistent memory (pushbuffers, cbuf0s, QMDs chained as in a stream submission), with
 * the location of every variable use remembered: kernel-argument fields in cbuf0, grid
 * dimensions in the QMD (and cbuf0's gridDim), semaphore payloads in the pushbuffer, and
 * the queue-timeline payloads that change with every replay. A replay patches those words
 * and puts ONE GPFIFO entry on the queue's channel (two when the graph copies on a compute
 * queue: one for the copy helper channel). Layer: hcq.
 *
 * The layout is built twice (double buffering): replay n patches copy n % 2 while the GPU may
 * still run replay n - 1 from the other copy; before patching a copy, the engine waits for
 * the timeline value of the replay that last used it, so the GPU never reads a half-patched
 * QMD (the hardware also writes QMDs back while running them, rm.md §6.4).
 */
#include "pb.h"

#include "gpu_cubin.h"

#include <stdlib.h>
#include <string.h>

struct pb_graph_buf {
    struct kmd_mem *mem;
    struct pb_build_target t;
    uint64_t last_value; /* main timeline value of the last replay from it, 0: none */
};

struct pb_graph {
    struct pb_queue *pq;
    struct pb_graph_buf buf[2];
    uint32_t next; /* copy the next replay uses */
};

/* Upper bound of the pushbuffer dwords one channel may need for cl (per command: the
 * command itself, a channel handover and a copy-engine flush). */
static uint64_t
pb_graph_dw_bound(const struct hcq_cmdlist *cl)
{
    uint64_t dw = 64;
    for (uint32_t i = 0; i < cl->count; i++) {
        const struct hcq_cmd *c = &cl->cmds[i];
        dw += 48;
        if (c->kind == HCQ_CMD_COPY)
            dw += gpu_push_ce_copy_dw(c->u.copy.size_B);
    }
    return dw;
}

/* Submit what local-memory setup left in the main scratch (with a timeline release). */
static enum hcq_status
pb_graph_prepare(struct pb_queue *pq, const struct hcq_cmdlist *cl)
{
    uint32_t local_max = 0;
    bool copies = false;
    for (uint32_t i = 0; i < cl->count; i++) {
        const struct hcq_cmd *c = &cl->cmds[i];
        if (c->kind == HCQ_CMD_LAUNCH) {
            const struct pb_program *pp = c->u.launch.prog->priv;
            if (pp->local_B > local_max)
                local_max = pp->local_B;
        }
        if (c->kind == HCQ_CMD_COPY && c->u.copy.size_B)
            copies = true;
    }
    enum hcq_status st = HCQ_OK;
    if (copies && pq->main.engine == KMD_ENGINE_COMPUTE)
        st = pb_aux_get(pq);
    /* Copies may run as the copy kernel: its local memory too (a copy queue reserves none
     * before its first kernel). */
    if (st == HCQ_OK && copies && pq->main.engine == KMD_ENGINE_COMPUTE &&
        !pq->pd->kmd->info.unified_memory && pb_copy_prog_get(pq->pd) == HCQ_OK) {
        const struct pb_program *cp = pq->pd->copy_prog->priv;
        if (cp->local_B > local_max)
            local_max = cp->local_B;
    }
    /* The graph's launches ask for what the queue emitted (pb_queue.c "Local memory", (c)): emit
     * in a stream submission now, so the graph itself never carries a store. */
    if (st != HCQ_OK || local_max <= pq->local_per_thread_B)
        return st;
    if (pq->main.busy)
        gpu_push_wfi(&pq->main.push);
    st = pb_lmem_emit(pq, local_max);
    if (st != HCQ_OK)
        return st;
    gpu_push_sem_release(&pq->main.push, pq->main.tl_va, ++pq->main.tl_last, false);
    pq->main_work = true; /* new local-memory state on main */
    return pb_queue_flush(pq);
}

/* Copy a channel's scratch pushbuffer into the arena; patches pointing into that scratch
 * now point into the arena. */
static enum hcq_status
pb_graph_lay_out(struct pb_queue *pq, struct pb_build_target *t, struct pb_chan *ch, uint64_t *va_out,
                 uint32_t *dw_out)
{
    uint32_t pq_debug = pq->pd->debug;
    *va_out = 0;
    *dw_out = 0;
    if (!ch || ch->push.count == 0)
        return HCQ_OK;
    if (ch->push.overflow)
        return hcq_err(HCQ_ERR_INVALID, "graph: pushbuffer scratch overflow (engine bug)");
    uint64_t off = (t->arena_used_B + 63) & ~63ull;
    uint64_t size_B = (uint64_t)ch->push.count * 4;
    if (off + size_B > t->arena_B)
        return hcq_err(HCQ_ERR_INVALID, "graph arena overflow laying out %u dwords (engine bug)",
                       ch->push.count);
    uint32_t *dst = (uint32_t *)(t->arena_map + off);
    memcpy(dst, ch->push.dw, size_B);
    t->arena_used_B = off + size_B;
    for (uint32_t i = 0; i < t->patch_count; i++) {
        struct pb_patch *p = &t->patches[i];
        if (p->pb_chan == ch) {
            p->map = dst + p->pb_dw;
            p->pb_chan = NULL;
        }
    }
    *va_out = t->arena_va + off;
    *dw_out = ch->push.count;
    if (pq_debug & HCQ_DEBUG_PUSH_DUMP)
        pb_dump_push(pq, ch, *va_out, ch->push.dw, ch->push.count, HCQ_LOG_LEVEL_INFO);
    return HCQ_OK;
}

static enum hcq_status
pb_graph_build_one(struct pb_graph *pg, struct hcq_graph *g, struct pb_graph_buf *gb, uint64_t arena_B)
{
    struct pb_queue *pq = pg->pq;
    enum hcq_status st = pb_stream_alloc(pq->pd, arena_B, &gb->mem);
    if (st != HCQ_OK)
        return st;
    struct pb_build_target *t = &gb->t;
    t->arena_map = gb->mem->map;
    t->arena_va = gb->mem->va;
    t->arena_B = arena_B;
    t->main_base = pq->main.tl_last;
    t->aux_base = pq->aux ? pq->aux->tl_last : 0;
    /* A replay may follow a stream segment whose last grid released its value from its QMD
     * and may still run (pb_build.c pb_end_by_qmd): the graph's first launch on main must
     * come behind a WFI, so it is built as if main were busy. Building submits nothing, so
     * the channels' real state is put back afterwards (a stream launch after this build
     * still needs its WFI). */
    const bool main_busy = pq->main.busy, aux_busy = pq->aux && pq->aux->busy;
    pq->main.busy = true;
    st = pb_build(pq, &g->cl, g->vars, t);
    pq->main.busy = main_busy;
    if (pq->aux)
        pq->aux->busy = aux_busy;
    t->main_count = (uint32_t)(pq->main.tl_last - t->main_base);
    t->aux_count = pq->aux ? (uint32_t)(pq->aux->tl_last - t->aux_base) : 0;
    if (st == HCQ_OK)
        st = pb_graph_lay_out(pq, t, &pq->main, &t->main_pb_va, &t->main_pb_dw);
    if (st == HCQ_OK)
        st = pb_graph_lay_out(pq, t, pq->aux, &t->aux_pb_va, &t->aux_pb_dw);
    /* Building released nothing: the values come back at each replay. */
    pq->main.tl_last = t->main_base;
    pq->main.push.count = 0;
    if (pq->aux) {
        pq->aux->tl_last = t->aux_base;
        pq->aux->push.count = 0;
    }
    return st;
}

void
pb_graph_destroy(struct hcq_graph *g)
{
    struct pb_graph *pg = g->priv;
    if (!pg)
        return;
    struct pb_queue *pq = pg->pq;
    for (int i = 0; i < 2; i++) {
        struct pb_graph_buf *gb = &pg->buf[i];
        if (gb->last_value && !atomic_load(&pq->pd->base.lost) &&
            pb_chan_wait(pq, &pq->main, gb->last_value, PB_HANG_NS) != HCQ_OK)
            HCQ_LOG_WARN("graph %p destroyed while a replay was outstanding", (void *)g);
    }
    for (int i = 0; i < 2; i++) {
        kmd_mem_free(pq->pd->kmd, pg->buf[i].mem);
        free(pg->buf[i].t.patches);
    }
    free(pg);
    g->priv = NULL;
}

enum hcq_status
pb_graph_build(struct hcq_graph *g)
{
    struct pb_queue *pq = pb_queue(g->q);
    if (atomic_load(&pq->pd->base.lost))
        return hcq_err(HCQ_ERR_DEVICE_LOST, "graph_build: device lost: %s", pq->pd->base.fault);
    struct pb_graph *pg = calloc(1, sizeof(*pg));
    if (!pg)
        return hcq_err(HCQ_ERR_NOMEM, "graph_build: %zu bytes", sizeof(*pg));
    pg->pq = pq;
    g->priv = pg;
    enum hcq_status st = pb_graph_prepare(pq, &g->cl);
    if (st != HCQ_OK)
        goto fail;
    uint64_t kargs_B = 0;
    for (uint32_t i = 0; i < g->cl.count; i++) {
        const struct hcq_cmd *c = &g->cl.cmds[i];
        if (c->kind == HCQ_CMD_LAUNCH)
            kargs_B += ((const struct pb_program *)c->u.launch.prog->priv)->kargs_B + 256;
    }
    uint64_t arena_B = (kargs_B + 2 * pb_graph_dw_bound(&g->cl) * 4 + 256 + 4095) & ~4095ull;
    for (int i = 0; i < 2 && st == HCQ_OK; i++)
        st = pb_graph_build_one(pg, g, &pg->buf[i], arena_B);
    if (st != HCQ_OK)
        goto fail;
    HCQ_LOG_DEBUG("graph %p: %u commands, %u + %u pushbuffer dwords, %u patches, 2 x 0x%llx arena bytes",
                  (void *)g, g->cl.count, pg->buf[0].t.main_pb_dw, pg->buf[0].t.aux_pb_dw,
                  pg->buf[0].t.patch_count, (unsigned long long)arena_B);
    return HCQ_OK;

fail:
    pb_graph_destroy(g);
    return st;
}

/* Check the values grid variables take before anything is patched. */
static enum hcq_status
pb_graph_check_vars(const struct pb_build_target *t, const uint64_t *vars)
{
    for (uint32_t i = 0; i < t->patch_count; i++) {
        const struct pb_patch *p = &t->patches[i];
        if (p->kind != PB_PATCH_GRID)
            continue;
        uint64_t v = vars[p->var];
        uint32_t width = p->qmd_hi - p->qmd_lo + 1;
        if (v == 0 || (width < 64 && (v >> width) != 0))
            return hcq_err(HCQ_ERR_INVALID,
                           "graph_replay: grid[%u] = variable %u = %llu (expected 1 .. 2^%u - 1)", p->dim,
                           p->var, (unsigned long long)v, width);
    }
    return HCQ_OK;
}

static void
pb_graph_patch(const struct pb_build_target *t, const uint64_t *vars, uint64_t main_base, uint64_t aux_base)
{
    for (uint32_t i = 0; i < t->patch_count; i++) {
        const struct pb_patch *p = &t->patches[i];
        uint64_t v;
        switch (p->kind) {
        case PB_PATCH_ARG32:
            *p->map = (uint32_t)vars[p->var];
            continue;
        case PB_PATCH_ARG64:
            memcpy(p->map, &vars[p->var], 8);
            continue;
        case PB_PATCH_GRID: {
            uint32_t word = p->qmd_word;
            gpu_bits_set(&word, p->qmd_hi % 32, p->qmd_lo % 32, vars[p->var]);
            *p->map = word;
            *p->aux_map = (uint32_t)vars[p->var];
            continue;
        }
        case PB_PATCH_SEM:
            v = vars[p->var] + p->add;
            break;
        case PB_PATCH_SEM_MAIN:
            v = main_base + p->add;
            break;
        case PB_PATCH_SEM_AUX:
            v = aux_base + p->add;
            break;
        case PB_PATCH_COPY: {
            /* chunk `dim` of a copy laid out for its largest size (core checked the bounds) */
            uint64_t doff, soff, size, start = (uint64_t)p->dim * GPU_CE_MAX_LINE_B;
            hcq_cmd_copy_resolve(p->cmd, vars, &doff, &soff, &size);
            uint64_t n = size > start ? size - start : 0;
            gpu_push_ce_copy_chunk_patch(p->map, p->cmd->u.copy.dst->va + doff + start,
                                         p->cmd->u.copy.src->va + soff + start,
                                         (uint32_t)(n > GPU_CE_MAX_LINE_B ? GPU_CE_MAX_LINE_B : n));
            continue;
        }
        case PB_PATCH_SEM_NOW:
        default:
            v = *p->sig_slot;
            break;
        }
        p->map[0] = (uint32_t)v;
        p->map[1] = (uint32_t)(v >> 32);
    }
}

enum hcq_status
pb_graph_replay(struct hcq_graph *g)
{
    struct pb_graph *pg = g->priv;
    struct pb_queue *pq = pg->pq;
    if (atomic_load(&pq->pd->base.lost))
        return hcq_err(HCQ_ERR_DEVICE_LOST, "graph_replay: device lost: %s", pq->pd->base.fault);
    struct pb_graph_buf *gb = &pg->buf[pg->next];
    const struct pb_build_target *t = &gb->t;
    enum hcq_status st = pb_graph_check_vars(t, g->vars);
    if (st != HCQ_OK)
        return st;
    /* The GPU must be done with this copy before it is patched. */
    if (gb->last_value) {
        st = pb_chan_wait(pq, &pq->main, gb->last_value, PB_HANG_NS);
        if (st != HCQ_OK)
            return st;
    }
    uint64_t main_base = pq->main.tl_last, aux_base = pq->aux ? pq->aux->tl_last : 0;
    pb_graph_patch(t, g->vars, main_base, aux_base);
    if (t->aux_pb_dw) {
        st = pb_chan_kick(pq, pq->aux, t->aux_pb_va, t->aux_pb_dw);
        if (st != HCQ_OK)
            return st;
        pq->aux->tl_last = pq->aux->tl_flushed = aux_base + t->aux_count;
    }
    /* before the doorbell: a replaced local-memory store waits for this value (pb_queue.c) */
    atomic_store_explicit(&pq->lm_sub, main_base + t->main_count, memory_order_release);
    st = pb_chan_kick(pq, &pq->main, t->main_pb_va, t->main_pb_dw);
    if (st != HCQ_OK)
        return st;
    pq->main_work = true; /* the graph's main part: later helper work waits for it */
    pq->main.tl_last = pq->main.tl_flushed = main_base + t->main_count;
    gb->last_value = pq->main.tl_last;
    pg->next ^= 1;
    if (pq->pd->debug & HCQ_DEBUG_PUSH_SYNC)
        return pb_chan_wait(pq, &pq->main, pq->main.tl_last, PB_HANG_NS);
    return HCQ_OK;
}
