/* SPDX-License-Identifier: MIT */
/*
 * llm_prefill.c - the tensor-core prefill matmuls of a model (k_llm_gemm.cu, and Hopper's
 * TMA-fed wgmma kernel where its sm_90a cubin loads): per weight matrix a dequantization to
 * f16 into a scratch buffer, the activations cast to f16, one GEMM into f32. Used by the
 * forward pass (llm_model.c) for batches of at least llm_model_params.gemm_min_batch tokens.
 * Layer: llm.
 */
#include "llm_model_int.h"

#include "util_log.h"
#include "k_llm_gemm_params.h"
#include "k_llm_params.h"
#include "k_tmap.h"

#include <stdlib.h>
#include <string.h>

/* A matrix the tensor-core path takes: a type the dequantizer knows, rows of k % 8 == 0. */
bool
llm_pg_takes(const struct dtensor *w)
{
    return w->va && w->ne1 > 1 && w->ne0 % 8 == 0 && k_llm_gemm_row_bytes(w->type, w->ne0) != 0;
}

void
llm_pg_free(struct prefill_gemm *pg)
{
    hcq_buf_free(pg->buf);
    for (int i = 0; i < PG_COUNT; i++)
        hcq_program_destroy(pg->prog[i]);
    hcq_program_destroy(pg->gemm_wg);
    hcq_program_destroy(pg->gemm_sk);
    hcq_program_destroy(pg->gemm_sk_q8);
    hcq_program_destroy(pg->gemm_sk_q4k);
    memset(pg, 0, sizeof *pg);
}

/* Programs and scratch of the tensor-core prefill: w16 holds the largest layer matrix
 * in f16, x16 n_batch rows of the largest k. Off when min_n is 0 or above n_batch. */
enum hcq_status
llm_pg_init(struct llm_model *m, uint32_t min_n)
{
    static const char *const names[PG_COUNT] = {"k_llm_dequant_f16", "k_llm_cast_f16", "k_llm_gemm"};
    struct prefill_gemm *pg = &m->pg;
    enum hcq_status st;
    if (!min_n || min_n > m->n_batch)
        return HCQ_OK;
    uint64_t w_max = 0, k_max = 0;
    for (uint32_t l = 0; l < m->hp.n_layer; l++)
        for (int w = 0; w < LW_COUNT; w++) {
            const struct dtensor *t = &m->lw[l][w];
            if (!llm_pg_takes(t))
                continue;
            w_max = (uint64_t)t->ne0 * t->ne1 > w_max ? (uint64_t)t->ne0 * t->ne1 : w_max;
            k_max = t->ne0 > k_max ? t->ne0 : k_max;
        }
    if (!w_max)
        return HCQ_OK;
    /* Q|K|V of a layer go through one GEMM (llm_matmul_prefill with three matrices): room for the three */
    for (uint32_t l = 0; l < m->hp.n_layer; l++) {
        const struct dtensor *w = m->lw[l];
        uint64_t qkv = (uint64_t)w[LW_Q].ne0 * w[LW_Q].ne1 + (uint64_t)w[LW_K].ne0 * w[LW_K].ne1 +
                       (uint64_t)w[LW_V].ne0 * w[LW_V].ne1;
        w_max = qkv > w_max ? qkv : w_max;
    }
    pg->w16_B = (2 * w_max + 255) / 256 * 256;
    pg->x16_B = (2 * k_max * m->n_batch + 255) / 256 * 256;
    for (int i = 0; i < PG_COUNT; i++)
        if ((st = hcq_program_load(m->dev, names[i], &pg->prog[i])))
            goto fail;
    /* beside k_llm_gemm (mma.sync, every arch): Hopper's TMA-fed wgmma kernel where its sm_90a
     * cubin loads, for the GEMMs whose 128 x 256 tiles fill the SMs (llm_matmul_prefill; pp512 of a
     * 1B model +4-5% on H100; fed by TMA rather than cp.async: pp2048 Q6_K 112.8k vs 102.4k
     * tokens/s, Q8_0 116.0k vs 105.5k). */
    struct hcq_device_info info;
    if ((st = hcq_device_info(m->dev, &info)))
        goto fail;
    if (info.sm_version == 90 && hcq_program_load(m->dev, "k_llm_gemm_wgmma_tma", &pg->gemm_wg) == HCQ_OK)
        pg->sm_count = info.sm_count;
    /* k_llm_gemm_sk for n <= 64 tokens (where its cubin or twin loads) */
    const uint64_t part_B = LLM_GEMM_SK_MAX_BLOCKS * (uint64_t)K_LLM_GEMM_SK_PART_B(64);
    const uint64_t cnt_B = 4ull * LLM_GEMM_SK_MAX_TILES;
    if (hcq_program_load(m->dev, "k_llm_gemm_sk", &pg->gemm_sk) == HCQ_OK) {
        pg->sms = info.sm_count ? info.sm_count : 1;
        if (hcq_program_load(m->dev, "k_llm_gemm_sk_q8_0", &pg->gemm_sk_q8) != HCQ_OK)
            pg->gemm_sk_q8 = NULL;
        if (hcq_program_load(m->dev, "k_llm_gemm_sk_q4_k", &pg->gemm_sk_q4k) != HCQ_OK)
            pg->gemm_sk_q4k = NULL;
    }
    if ((st = hcq_buf_alloc(m->dev, pg->w16_B + pg->x16_B + (pg->gemm_sk ? part_B + cnt_B : 0),
                            HCQ_MEM_DEVICE, &pg->buf)))
        goto fail;
    pg->w16_va = hcq_buf_va(pg->buf);
    pg->x16_va = pg->w16_va + pg->w16_B;
    if (pg->gemm_sk) {
        static const uint32_t zero[LLM_GEMM_SK_MAX_TILES];
        pg->sk_part_va = pg->x16_va + pg->x16_B;
        pg->sk_cnt_va = pg->sk_part_va + part_B;
        if ((st = hcq_buf_write(pg->buf, pg->sk_cnt_va - pg->w16_va, zero, cnt_B)))
            goto fail;
    }
    pg->min_n = min_n;
    return HCQ_OK;
fail:
    llm_pg_free(pg);
    return st;
}

/* (through llm_launch_prog: a profiled step stamps and labels these launches too) */
static enum hcq_status
launch_pg(struct llm_model *m, struct hcq_program *prog, uint32_t gx, uint32_t block, const void *args,
          uint32_t args_B)
{
    const struct hcq_launch l = {.prog = prog,
                                 .grid = {gx, 1, 1},
                                 .block = {block, 1, 1},
                                 .args = args,
                                 .args_B = args_B,
                                 .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE}};
    return llm_launch_prog(m, &l);
}

/* The TMA kernel's parameters: gp and its two tensor maps (k_llm_gemm_params.h): x f16 [n][k]
 * as (k, n) in boxes of 64 x 128, w f16 [rows][k] as (k, rows) in boxes of 64 x 256
 * (k_tmap_rows16). */
enum hcq_status
llm_gemm_tma_params(struct k_llm_gemm_tma_params *tp, const struct k_llm_gemm_params *gp)
{
    memset(tp, 0, sizeof *tp);
    tp->g = *gp;
    const struct k_tmap_desc tx = k_tmap_rows16(K_TMAP_F16, gp->x_va, gp->k, gp->n, K_GEMM_WG_BM);
    const struct k_tmap_desc tw = k_tmap_rows16(K_TMAP_F16, gp->w_va, gp->k, gp->rows, K_GEMM_WG_BN);
    const char *why = "";
    if (k_tmap_encode(&tx, tp->tmap_x, &why) || k_tmap_encode(&tw, tp->tmap_w, &why))
        return hcq_err(HCQ_ERR_INVALID, "llm prefill GEMM: tensor map of %u x %u x %u: %s", gp->n, gp->rows,
                       gp->k, why);
    return HCQ_OK;
}

uint32_t
llm_gemm_sk_split(struct k_llm_gemm_sk_params *sp, const struct k_llm_gemm_params *gp, uint32_t sms,
                  uint64_t part_va, uint64_t cnt_va, uint32_t kstep)
{
    if (!gp->n || gp->n > 64 || !gp->rows)
        return 0;
    const uint32_t tiles = (gp->rows + K_LLM_GEMM_SK_ROWS - 1) / K_LLM_GEMM_SK_ROWS,
                   kt = (gp->k + kstep - 1) / kstep;
    /* about two blocks per SM (three fit: 64 KiB of shared memory each), each piece >= 2 k-steps.
     * H200 1B Q4_K_M batch steps of 8 / 32 / 64 sequences, tokens/s with a target of 1, 2, 3, 4
     * blocks per SM: 5034 / 5182 / 4728 / 4636, 16768 / 17103 / 15396 / 14917, 23862 / 24374 /
     * 22355 / 21344 */
    uint32_t splits = (2 * sms + tiles - 1) / tiles;
    /* but one wave: where rounding up would make more blocks than the SMs hold at once (three
     * each), fewer pieces - a gate|up GEMM of a 1B model's 256 tiles ran 512 blocks, two waves,
     * and lost 2% against gate and up apart at 32 and 64 sequences (H200) */
    if (splits > 1 && (uint64_t)tiles * splits > 3ull * sms)
        splits = 3 * sms / tiles > 1 ? 3 * sms / tiles : 1;
    if (splits > kt / 2)
        splits = kt / 2;
    if (splits > LLM_GEMM_SK_MAX_BLOCKS / tiles)
        splits = LLM_GEMM_SK_MAX_BLOCKS / tiles;
    if (splits < 2 || tiles > LLM_GEMM_SK_MAX_TILES)
        splits = 1;
    const uint32_t chunk = kstep * ((kt + splits - 1) / splits);
    *sp = (struct k_llm_gemm_sk_params){.g = *gp,
                                        .part_va = part_va,
                                        .cnt_va = cnt_va,
                                        .splits = (gp->k + chunk - 1) / chunk,
                                        .k_chunk = chunk};
    return sp->splits * tiles;
}

/* Launch the dequantization of matrix t into f16 rows at out_va (k_llm_dequant_f16: one thread per
 * 8 values, capped grid - the aux kernels grid-stride). */
static enum hcq_status
dequant_f16(struct llm_model *m, const struct dtensor *t, uint64_t out_va)
{
    const uint64_t wt = ((uint64_t)t->ne1 * t->ne0 / 8 + K_LLM_GEMM_AUX_BLOCK - 1) / K_LLM_GEMM_AUX_BLOCK;
    struct k_llm_dequant_f16_params dp = {
        .w_va = t->va, .out_va = out_va, .type = t->type, .k = t->ne0, .rows = t->ne1};
    m->tag = "dequant_f16";
    return launch_pg(m, m->pg.prog[PG_DEQUANT], wt > 65535 ? 65535 : (uint32_t)wt, K_LLM_GEMM_AUX_BLOCK, &dp,
                     sizeof dp);
}

/* Where llm_matmul_prefill reads the n_w matrices ws from for n activation rows:
 * PG_SRC_QUANT - Q8_0R or Q4_KR matrices one after the other in memory, n <= 32 (Q8_0) or 16
 * (Q4_K): k_llm_gemm_sk_q8_0 / _q4_k read them as they are (1.06 / 0.56 bytes a value, not the f16
 * copy's 2). H200 1B batch steps, tokens/s against the f16 copy: Q8_0 8 sequences 6211 vs 5671,
 * 32: 20367 vs 19389, 64: 26709 vs 27231 (its dequantization costs more than the bytes it saves
 * once the mma work is 4x); Q4_K_M 8: 6302 vs 5689, 32: 19148 vs 19261.
 * PG_SRC_CACHED - else the f16 copies (llm_pg_cache_f16) when every matrix has one, one after the
 * other. PG_SRC_SCRATCH - else each matrix dequantized into the f16 scratch (which holds one
 * layer matrix, or Q|K|V together). */
enum pg_src { PG_SRC_QUANT, PG_SRC_CACHED, PG_SRC_SCRATCH };
static enum pg_src
pg_source(const struct llm_model *m, const struct dtensor *const *ws, uint32_t n_w, uint32_t n)
{
    const uint32_t qt = ws[0]->type, k = ws[0]->ne0;
    const bool qprog =
        qt == K_LLM_T_Q8_0R ? m->pg.gemm_sk_q8 != NULL : qt == K_LLM_T_Q4_KR && m->pg.gemm_sk_q4k;
    const uint32_t qgroup = qt == K_LLM_T_Q8_0R ? 1024 : 2048;
    bool quant = qprog && n <= (qt == K_LLM_T_Q8_0R ? 32u : 16u) && k % qgroup == 0;
    const uint64_t q_row_B = k_llm_row_bytes(qt, k);
    for (uint32_t i = 0; i < n_w && quant; i++)
        quant = ws[i]->type == qt && (!i || ws[i]->va == ws[i - 1]->va + q_row_B * ws[i - 1]->ne1);
    if (quant)
        return PG_SRC_QUANT;
    bool cached = true;
    for (uint32_t i = 0; i < n_w && cached; i++)
        cached = ws[i]->f16_va && (!i || ws[i]->f16_va == ws[i - 1]->f16_va + 2ull * k * ws[i - 1]->ne1);
    return cached ? PG_SRC_CACHED : PG_SRC_SCRATCH;
}

bool
llm_matmul_prefill_in_place(const struct llm_model *m, const struct dtensor *const *ws, uint32_t n_w,
                            uint32_t n)
{
    if (!m->pg.min_n || n < m->pg_min_step || n > m->n_batch)
        return false;
    for (uint32_t i = 0; i < n_w; i++)
        if (!llm_pg_takes(ws[i]) || ws[i]->ne0 != ws[0]->ne0)
            return false;
    return pg_source(m, ws, n_w, n) != PG_SRC_SCRATCH;
}

/* Prefill matmul on tensor cores: the n_w matrices ws (rows of the same k) -> consecutive rows
 * of the f16 scratch, x rows -> f16 scratch, one GEMM into y (k_llm_gemm.cu): the matrices' rows
 * are y's columns in order. Same contract as matmul() below for one matrix. */
enum hcq_status
llm_matmul_prefill(struct llm_model *m, const struct dtensor *const *ws, uint32_t n_w, uint64_t x_va,
                   uint32_t x_stride, uint64_t y_va, uint32_t y_stride, uint32_t n, const struct dtensor *b,
                   bool acc)
{
    const struct prefill_gemm *pg = &m->pg;
    const uint32_t k = ws[0]->ne0;
    uint32_t rows = 0;
    enum hcq_status st;
    const char *tag = m->tag ? m->tag : "gemm"; /* the caller's label names the GEMM launch */
    m->tag = NULL;
    const enum pg_src src = pg_source(m, ws, n_w, n); /* (why each source: pg_source) */
    const bool quant = src == PG_SRC_QUANT, cached = src == PG_SRC_CACHED;
    const uint32_t qt = ws[0]->type;
    struct hcq_program *qprog = qt == K_LLM_T_Q8_0R ? pg->gemm_sk_q8 : pg->gemm_sk_q4k;
    const uint32_t qstep = qt == K_LLM_T_Q8_0R ? 128 : 256;
    const uint64_t q_row_B = k_llm_row_bytes(qt, k);
    for (uint32_t i = 0; i < n_w; i++) {
        if (!quant && !cached && (st = dequant_f16(m, ws[i], pg->w16_va + 2ull * k * rows)))
            return st;
        rows += ws[i]->ne1;
    }
    uint64_t xt = ((uint64_t)n * k / 8 + K_LLM_GEMM_AUX_BLOCK - 1) / K_LLM_GEMM_AUX_BLOCK;
    struct k_llm_cast_f16_params cp = {
        .x_va = x_va, .out_va = pg->x16_va, .n = n, .k = k, .x_stride = x_stride};
    struct k_llm_gemm_params gp = {.x_va = pg->x16_va,
                                   .w_va = quant    ? ws[0]->va
                                           : cached ? ws[0]->f16_va
                                                    : pg->w16_va,
                                   .y_va = y_va,
                                   .b_va = b ? b->va : 0,
                                   .k = k,
                                   .rows = rows,
                                   .n = n,
                                   .y_stride = y_stride,
                                   .accumulate = acc};
    /* the cast, unless the launch before left these rows in f16 (a norm of them, or the cast of
     * the matmul before of the same input: gate then up) */
    if (m->x16_of.va != x_va || m->x16_of.n != n || m->x16_of.k != k || m->x16_of.stride != x_stride) {
        m->tag = "cast_f16";
        if ((st = launch_pg(m, pg->prog[PG_CAST], xt > 65535 ? 65535 : (uint32_t)xt, K_LLM_GEMM_AUX_BLOCK,
                            &cp, sizeof cp)))
            return st;
        m->x16_of.va = x_va, m->x16_of.n = n, m->x16_of.k = k, m->x16_of.stride = x_stride;
    }
    m->tag = tag;
    m->tag_B = quant ? q_row_B * rows : 2ull * rows * k;
    /* the GEMM writes y: an f16 copy of rows there would be stale */
    const uint64_t x16_end =
        m->x16_of.va +
        4ull * ((uint64_t)(m->x16_of.n ? m->x16_of.n - 1 : 0) * m->x16_of.stride + m->x16_of.k);
    if (y_va < x16_end && m->x16_of.va < y_va + 4ull * ((uint64_t)(n - 1) * y_stride + rows))
        m->x16_of.va = 0;
    struct k_llm_gemm_sk_params sp;
    if (quant)
        return launch_pg(m, qprog, llm_gemm_sk_split(&sp, &gp, pg->sms, pg->sk_part_va, pg->sk_cnt_va, qstep),
                         K_LLM_GEMM_SK_THREADS, &sp, sizeof sp);
    const uint32_t sk_grid =
        pg->gemm_sk ? llm_gemm_sk_split(&sp, &gp, pg->sms, pg->sk_part_va, pg->sk_cnt_va, 64) : 0;
    if (sk_grid)
        return launch_pg(m, pg->gemm_sk, sk_grid, K_LLM_GEMM_SK_THREADS, &sp, sizeof sp);
    /* wgmma (128 x 256 tiles, a persistent grid of at most one CTA per SM: its ring fills the
     * SM's shared memory) when its tiles keep >= 3/4 of the SMs busy. Why not always: with
     * wgmma for every GEMM pp512 of a 1B model ran 5% slower (H100, cuda:0); its O, down and
     * Q|K|V GEMMs have 32-48 such tiles on 132 SMs, where the 128 x 64 mma.sync tiles cover
     * every SM. With this rule (FFN up and gate on wgmma, 128 tiles): +4-5%. */
    const uint64_t wg_tiles =
        (uint64_t)((n + K_GEMM_WG_BM - 1) / K_GEMM_WG_BM) * ((rows + K_GEMM_WG_BN - 1) / K_GEMM_WG_BN);
    if (pg->gemm_wg && 4 * wg_tiles >= 3ull * pg->sm_count) {
        struct k_llm_gemm_tma_params tp;
        if ((st = llm_gemm_tma_params(&tp, &gp)) != HCQ_OK)
            return st;
        return launch_pg(m, pg->gemm_wg, wg_tiles > pg->sm_count ? pg->sm_count : (uint32_t)wg_tiles,
                         K_GEMM_WG_THREADS, &tp, sizeof tp);
    }
    uint64_t tiles = (uint64_t)((n + K_LLM_GEMM_TILE_M - 1) / K_LLM_GEMM_TILE_M) *
                     ((rows + K_LLM_GEMM_TILE_N - 1) / K_LLM_GEMM_TILE_N);
    return launch_pg(m, pg->prog[PG_GEMM], tiles > 65535 ? 65535 : (uint32_t)tiles, K_LLM_GEMM_THREADS, &gp,
                     sizeof gp);
}

enum hcq_status
llm_pg_cache_f16(struct llm_model *m)
{
    enum hcq_status st;
    if (!m->pg.min_n || m->f16buf)
        return HCQ_OK;
    /* the order: per layer Q, K, V (one GEMM reads them as one matrix), then the others; the head */
    struct dtensor **all = malloc(((size_t)m->hp.n_layer * LW_COUNT + 1) * sizeof *all);
    if (!all)
        return hcq_err(HCQ_ERR_NOMEM, "llm f16 weights: out of host memory");
    uint32_t n = 0;
    uint64_t total = 0;
    for (uint32_t l = 0; l < m->hp.n_layer; l++) {
        struct dtensor *w = m->lw[l];
        for (int i = 0; i < 3; i++) /* Q, K, V first: one GEMM reads them as one matrix */
            if (llm_pg_takes(&w[LW_Q + i]))
                all[n++] = &w[LW_Q + i];
        for (int i = 0; i < LW_COUNT; i++)
            if (i != LW_Q && i != LW_K && i != LW_V && llm_pg_takes(&w[i]))
                all[n++] = &w[i];
    }
    if (llm_pg_takes(&m->gw[GW_OUTPUT]))
        all[n++] = &m->gw[GW_OUTPUT];
    for (uint32_t i = 0; i < n; i++)
        total += 2ull * all[i]->ne0 * all[i]->ne1;
    struct hcq_mem_stats ms;
    if (hcq_device_mem_stats(m->dev, &ms) == HCQ_OK && ms.driver_free_B &&
        total + (256ull << 20) > ms.driver_free_B) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm f16 weights: %.2f GiB, the device has %.2f GiB free",
                     total / 1073741824.0, ms.driver_free_B / 1073741824.0);
        goto done;
    }
    if ((st = hcq_buf_alloc(m->dev, total, HCQ_MEM_DEVICE, &m->f16buf)))
        goto done;
    uint64_t off = 0;
    for (uint32_t i = 0; i < n && !st; i++) {
        st = dequant_f16(m, all[i], hcq_buf_va(m->f16buf) + off);
        off += 2ull * all[i]->ne0 * all[i]->ne1;
    }
    if (!st && !(st = hcq_queue_signal(m->q, m->done, ++m->tick)) && !(st = hcq_queue_submit(m->q)))
        st = hcq_signal_wait(m->done, m->tick, 60ull * 1000 * 1000 * 1000);
    if (st) {
        hcq_buf_free(m->f16buf);
        m->f16buf = NULL;
        goto done;
    }
    off = 0;
    for (uint32_t i = 0; i < n; i++) { /* (only now: a failure above leaves every matrix as it was) */
        all[i]->f16_va = hcq_buf_va(m->f16buf) + off;
        off += 2ull * all[i]->ne0 * all[i]->ne1;
    }
done:
    free(all);
    return st;
}

/* Whether Q|K|V of a prefill batch go through llm_matmul_prefill as one GEMM of q + k + v rows (the
 * three dequantized one after the other into the f16 scratch, the activations cast once). Why:
 * the K and V GEMMs alone (512 rows of a 1B model) fill 32 of 132 SMs; together with Q, 192
 * tiles. false: three matmul() calls. */
bool
llm_qkv_prefill_ok(const struct llm_model *m, const struct dtensor *const *w3, uint32_t n, uint32_t x_stride,
                   uint32_t y_stride)
{
    if (!m->pg.min_n || n < m->pg_min_step || x_stride % 4 || y_stride % 2)
        return false;
    for (int i = 0; i < 3; i++)
        if (!llm_pg_takes(w3[i]) || w3[i]->ne0 != w3[0]->ne0)
            return false;
    return true;
}
