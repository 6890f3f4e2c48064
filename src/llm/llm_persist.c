/* SPDX-License-Identifier: MIT */
/*
 * llm_persist.c - the persistent decode path (k_llm_decode_layers, src/kernels/k_llm_decode.cu):
 * whether a model takes it, its per-layer table of mat-vec launches, its barrier and error
 * words, and the fallback when a step was abandoned. Layer: llm (engine, internal).
 *
 * A LLaMA decode step on the per-kernel path is 6 launches per layer (bench/notes-decode.md);
 * this path is embed, one launch for every layer, output head. It is taken where the
 * per-kernel path would run k_llm_matvec_q8 for every layer matrix and the split-K attention,
 * the logits go through the device buffer, and NVHCQ_PERSIST is "1" (or "1cta"): it is OFF by
 * default because it measured slower than the per-kernel path on H100 (Q6_K tg128 675 vs
 * 1051 tok/s, bench/notes-decode.md: ~2 us per grid barrier x 80, and every phase slower
 * than the launch it replaces - register spills under the 2-CTA cap, one more wait per phase).
 * The kernel needs its whole grid resident: the grid is one wave (mv_wave), and if a
 * barrier still times out (K_LLM_DL_TIMEOUT_NS) the kernel abandons the step, this file
 * notices it after the step (llm_persist_check), turns the path off and the step is run
 * again on the per-kernel path: slower, never wrong.
 */
#include "llm_model_int.h"
#include "util_env.h"
#include "util_log.h"
#include "k_llm_quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum hcq_status
llm_persist_init(struct llm_model *m, uint32_t sm_count)
{
    enum hcq_status st;
    const struct llm_hparams *hp = &m->hp;
    const char *env = getenv("NVHCQ_PERSIST");
    m->persist = false;
    if (!env || (strcmp(env, "1") && strcmp(env, "1cta")) || !m->decode_fused || !m->attn_split ||
        !m->logdev || (hp->head_dim != 64 && hp->head_dim != 128) || hp->n_embd > K_LLM_MVQ_MAX_K ||
        hp->n_ff > K_LLM_MVQ_MAX_K)
        return HCQ_OK;
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const struct dtensor *w = m->lw[l];
        const struct dtensor *mats[7] = {&w[LW_Q],    &w[LW_K],  &w[LW_V],   &w[LW_O],
                                         &w[LW_GATE], &w[LW_UP], &w[LW_DOWN]};
        for (int i = 0; i < 7; i++)
            if (!k_llm_mvq_type_ok(mats[i]->type, mats[i]->ne0) || m->mv_f32)
                return HCQ_OK; /* some launch would take the f32 mat-vec */
    }
    char name[48];
    snprintf(name, sizeof name, "k_llm_decode_layers%s%s", hp->head_dim == 128 ? "_hd128" : "",
             env && !strcmp(env, "1cta") ? "_1" : "");
    if (hcq_program_load(m->dev, name, &m->pprog) != HCQ_OK) {
        HCQ_LOG_WARN("llm: persistent decode kernel %s not loaded (%s): one launch per kernel", name,
                     hcq_last_error());
        return HCQ_OK;
    }
    const uint64_t tab_B = (uint64_t)hp->n_layer * K_LLM_DL_PHASES * sizeof(struct k_llm_matvec_params);
    struct k_llm_matvec_params *tab = calloc(1, tab_B);
    if (!tab)
        return hcq_err(HCQ_ERR_NOMEM, "llm_persist_init");
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const struct dtensor *w = m->lw[l];
        const struct dtensor *qkv[3] = {&w[LW_Q], &w[LW_K], &w[LW_V]}, *o[1] = {&w[LW_O]},
                             *gu[2] = {&w[LW_GATE], &w[LW_UP]}, *dn[1] = {&w[LW_DOWN]};
        struct k_llm_matvec_params *t = tab + (size_t)l * K_LLM_DL_PHASES;
        llm_mv_params(m, &t[0], qkv, 3, m->x_va, m->qkv_va, &w[LW_ATTN_NORM], NULL, K_LLM_MV_ROPE);
        llm_mv_params(m, &t[1], o, 1, m->att_va, m->x_va, NULL, NULL, K_LLM_MV_ACC);
        llm_mv_params(m, &t[2], gu, 2, m->x_va, m->fa_va, &w[LW_FFN_NORM], NULL, K_LLM_MV_SWIGLU);
        llm_mv_params(m, &t[3], dn, 1, m->fa_va, m->x_va, NULL, NULL, K_LLM_MV_ACC);
    }
    uint32_t zero[4] = {0, 0, 0, 0};
    if ((st = hcq_buf_alloc(m->dev, tab_B, HCQ_MEM_DEVICE, &m->ptab)) ||
        (st = hcq_buf_write(m->ptab, 0, tab, tab_B)) ||
        (st = hcq_buf_alloc(m->dev, sizeof zero, HCQ_MEM_DEVICE, &m->pbar)) ||
        (st = hcq_buf_write(m->pbar, 0, zero, sizeof zero)) ||
        (st = hcq_buf_alloc(m->dev, sizeof zero, HCQ_MEM_HOST, &m->perr)) ||
        (st = hcq_buf_write(m->perr, 0, zero, sizeof zero)) ||
        (st = hcq_buf_alloc(m->dev, 8ull * (1 + 5 * hp->n_layer), HCQ_MEM_HOST, &m->ptrace))) {
        free(tab);
        return st;
    }
    free(tab);
    struct hcq_program_info pi;
    uint32_t per_sm = 2; /* __launch_bounds__(256, 2) */
    if (hcq_program_info(m->pprog, &pi) == HCQ_OK && pi.regs) {
        uint32_t by_regs = 65536 / (((pi.regs * 32 + 255) / 256 * 256) * (K_LLM_MV_THREADS / 32));
        uint32_t by_smem = (100u * 1024) / (pi.shared_B + 1024); /* the carve-outs rm uses */
        per_sm = by_regs < per_sm ? by_regs : per_sm;
        per_sm = by_smem < per_sm ? by_smem : per_sm;
    }
    m->pgrid = (per_sm ? per_sm : 1) * (sm_count ? sm_count : 1);
    /* tests only: a grid that cannot be resident, to exercise the timeout and the fallback */
    const char *g = getenv("NVHCQ_PERSIST_GRID");
    if (g && atoi(g) > 0)
        m->pgrid = (uint32_t)atoi(g);
    m->persist = true;
    return HCQ_OK;
}

void
llm_persist_params(const struct llm_model *m, uint32_t pos, struct k_llm_decode_params *dp)
{
    const struct llm_hparams *hp = &m->hp;
    const uint64_t kv_dim = (uint64_t)hp->n_head_kv * hp->head_dim, part = hcq_buf_va(m->adbuf);
    memset(dp, 0, sizeof *dp);
    dp->tab_va = hcq_buf_va(m->ptab);
    dp->kv_va = hcq_buf_va(m->kvbuf);
    dp->kv_layer_B = 4ull * m->n_ctx * kv_dim;
    dp->q_va = m->qkv_va;
    dp->att_va = m->att_va;
    dp->part_va = part;
    dp->count_va = part + 4ull * hp->n_head * K_LLM_AD_SPLITS * (hp->head_dim + 2);
    dp->freqs_va = hp->has_rope_freqs ? m->gw[GW_ROPE_FREQS].va : 0;
    dp->bar_va = hcq_buf_va(m->pbar);
    dp->err_va = hcq_buf_va(m->perr);
    dp->n_layer = hp->n_layer;
    dp->pos = pos;
    dp->n_ctx = m->n_ctx;
    dp->n_head = hp->n_head;
    dp->n_head_kv = hp->n_head_kv;
    dp->hd = hp->head_dim;
    dp->n_split = K_LLM_AD_SPLITS;
    dp->base = hp->rope_base;
    dp->scale = 1.0f / sqrtf((float)hp->head_dim);
    dp->trace_va = m->prof ? hcq_buf_va(m->ptrace) : 0;
    dp->flags = util_env_set("NVHCQ_PERSIST_EMPTY") ? K_LLM_DL_F_BARRIERS_ONLY : 0;
}

bool
llm_persist_check(struct llm_model *m)
{
    if (!m->persist)
        return false;
    volatile uint32_t *err = hcq_buf_map(m->perr);
    if (!err || !*err)
        return false;
    HCQ_LOG_WARN("llm: the persistent decode kernel abandoned a step (error %u: a grid barrier timed out); "
                 "decoding with one launch per kernel from now on",
                 *err);
    uint32_t zero[4] = {0, 0, 0, 0};
    *err = 0;
    if (hcq_buf_write(m->pbar, 0, zero, sizeof zero) != HCQ_OK) /* (the path is off: unused from now on) */
        HCQ_LOG_WARN("llm: could not zero the barrier words: %s", hcq_last_error());
    m->persist = false;
    m->persist_failed = true;
    hcq_graph_destroy(m->graph); /* recorded with the persistent launch */
    m->graph = NULL;
    hcq_graph_destroy(m->graph_long);
    m->graph_long = NULL;
    hcq_graph_destroy(m->graph_ao);
    m->graph_ao = NULL;
    return true;
}

/* The per-phase rows of a profiled step: the trace's n_layer x 5 intervals summed per phase
 * name, bytes from the table's tensors. Replaces row `r` (the launch's own row). */
void
llm_persist_prof_rows(const struct llm_model *m, struct llm_prof_row *rows, uint32_t r, uint32_t max_rows,
                      uint32_t *n_rows)
{
    static const char *const names[5] = {"persistent: norm+qkv+rope+kv", "persistent: attention (split-K)",
                                         "persistent: o+residual", "persistent: norm+gate,up+silu",
                                         "persistent: down+residual"};
    const uint64_t *tr = hcq_buf_map(m->ptrace);
    const uint32_t nl = m->hp.n_layer;
    if (!tr || !tr[0] || *n_rows + 4 > max_rows)
        return;
    struct llm_prof_row ph[5];
    for (int i = 0; i < 5; i++)
        ph[i] = (struct llm_prof_row){.kernel = names[i], .count = nl};
    for (uint32_t l = 0; l < nl; l++) {
        const struct dtensor *w = m->lw[l];
        for (int i = 0; i < 5; i++) {
            uint64_t t0 = tr[5 * l + i], t1 = tr[5 * l + i + 1];
            ph[i].us += t1 > t0 ? (double)(t1 - t0) * 1e-3 : 0;
        }
        const struct dtensor *bw[5][2] = {
            {&w[LW_Q], NULL}, {NULL, NULL}, {&w[LW_O], NULL}, {&w[LW_GATE], &w[LW_UP]}, {&w[LW_DOWN], NULL}};
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 2; j++)
                if (bw[i][j])
                    ph[i].bytes += k_llm_row_bytes(bw[i][j]->type, bw[i][j]->ne0) * bw[i][j]->ne1;
        ph[0].bytes += k_llm_row_bytes(w[LW_K].type, w[LW_K].ne0) * w[LW_K].ne1 +
                       k_llm_row_bytes(w[LW_V].type, w[LW_V].ne0) * w[LW_V].ne1;
    }
    /* rows after r move down by 4 */
    for (uint32_t i = *n_rows; i-- > r + 1;)
        rows[i + 4] = rows[i];
    for (int i = 0; i < 5; i++)
        rows[r + i] = ph[i];
    *n_rows += 4;
}

void
llm_persist_free(struct llm_model *m)
{
    hcq_buf_free(m->ptab);
    hcq_buf_free(m->pbar);
    hcq_buf_free(m->perr);
    hcq_buf_free(m->ptrace);
    hcq_program_destroy(m->pprog);
    m->ptab = m->pbar = m->perr = m->ptrace = NULL;
    m->pprog = NULL;
}
