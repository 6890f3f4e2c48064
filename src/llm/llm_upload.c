/* SPDX-License-Identifier: MIT */
/*
 * llm_upload.c - a model's device memory: the plan (tensor -> offset in one weight buffer,
 * 1-D tensors as f32), the upload with the decode layout's repacking of 2-byte aligned block
 * types (k_llm_quant.h; the GGUF file is untouched), the bound on what a file may make us
 * allocate, and the activation / KV-cache / logits buffers. Split from llm_model.c.
 * Layer: llm.
 */
#include "llm_model_int.h"

#include "util_log.h"
#include "k_llm_gemm_params.h"
#include "k_llm_quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Loading ==== */

/* Expected [ne0 x ne1] of per-layer tensor w. */
static void
lw_shape(const struct llm_hparams *hp, enum llm_lw w, uint64_t *ne0, uint64_t *ne1)
{
    uint64_t d = hp->n_embd, kv = (uint64_t)hp->n_head_kv * hp->head_dim, ff = hp->n_ff, qn = hp->q_dim;
    *ne1 = 1;
    switch (w) {
    case LW_Q:
        *ne0 = d;
        *ne1 = qn;
        break;
    case LW_O:
        *ne0 = qn;
        *ne1 = d;
        break;
    case LW_Q_B:
        *ne0 = qn;
        break;
    case LW_Q_NORM:
    case LW_K_NORM:
        *ne0 = hp->head_dim;
        break;
    case LW_K:
    case LW_V:
        *ne0 = d;
        *ne1 = kv;
        break;
    case LW_QKV:
        *ne0 = d;
        *ne1 = qn + 2 * kv;
        break;
    case LW_QKV_B:
        *ne0 = qn + 2 * kv;
        break;
    case LW_K_B:
    case LW_V_B:
        *ne0 = kv;
        break;
    case LW_GATE:
    case LW_UP:
        *ne0 = d;
        *ne1 = w == LW_UP && hp->arch == LLM_ARCH_PHI3 ? 2 * ff : ff; /* Phi-3: gate|up */
        break;
    case LW_UP_B:
        *ne0 = ff;
        break;
    case LW_DOWN:
        *ne0 = ff;
        *ne1 = d;
        break;
    default:
        *ne0 = d;
        break; /* norms and d-sized biases */
    }
}

static void
gw_shape(const struct llm_hparams *hp, enum llm_gw w, uint64_t *ne0, uint64_t *ne1)
{
    *ne0 = hp->n_embd;
    *ne1 = 1;
    if (w == GW_TOK_EMBD || w == GW_OUTPUT)
        *ne1 = hp->n_vocab;
    else if (w == GW_POS_EMBD)
        *ne1 = hp->n_ctx_train;
    else if (w == GW_ROPE_FREQS)
        *ne0 = hp->head_dim / 2;
}

/* Plan: tensor -> (offset in wbuf, type). Vectors become f32; matrices keep their type.
 * neox_hd: rows (matrix rows or vector elements) of each head of neox_hd, in the file's RoPE
 * order of pairs (i, i + neox_hd / 2) (hparams rope_neox: Q, K and their biases), are stored in
 * the order of pairs (2i, 2i + 1) - what llama.cpp's llama converter does to HF's weights - so
 * every RoPE kernel and the decode mat-vec's epilogue, which rotate adjacent rows, serve both;
 * attention is a dot over each head's dimensions in any common order. */
struct upload {
    const struct llm_gguf_tensor *t;
    struct dtensor *dst;
    uint64_t off_B, size_B;
    bool to_f32;
    uint32_t neox_hd;
    uint32_t neox_n; /* rows (elements) of heads to reorder, the rest kept (Phi-3's Q|K|V: not V) */
};

#define WALIGN 256u

/* packed: the next tensor follows this one without alignment padding (Qwen2's Q, K, V biases:
 * one [q | k | v] f32 vector, the Q|K|V launches' bias) */
static enum hcq_status
plan_one(struct llm_model *m, const char *name, uint64_t ne0, uint64_t ne1, bool needed, struct dtensor *dst,
         struct upload *ups, uint32_t *n_up, uint64_t *total, uint32_t neox_hd, uint32_t neox_n, bool packed)
{
    const struct llm_gguf_tensor *t;
    enum hcq_status st = llm_tensor_get(m->gguf, name, ne0, ne1, !needed, &t);
    if (st || !t)
        return st;
    bool vec = ne1 == 1;
    uint64_t size = vec ? 4 * ne0 : t->size_B;
    ups[*n_up] =
        (struct upload){t, dst, *total, size, vec, neox_hd, neox_n ? neox_n : (uint32_t)(vec ? ne0 : ne1)};
    dst->type = vec ? LLM_TYPE_F32 : t->type;
    /* matrices of 2-byte aligned block types take the repacked decode layout (not under
     * f32_decode); the file's size check above holds: row bytes do not change */
    if (!vec && !m->mv_f32 && llm_type_row_bytes(t->type, ne0) * ne1 == t->size_B)
        dst->type = k_llm_rp_of(t->type, (uint32_t)ne0);
    dst->ne0 = (uint32_t)ne0;
    dst->ne1 = (uint32_t)ne1;
    dst->va = 1; /* marks present; the real VA is set after allocation */
    (*n_up)++;
    *total += packed ? size : (size + WALIGN - 1) / WALIGN * WALIGN;
    return HCQ_OK;
}

/* Rows of each head of hd rows from the order (i, i + hd / 2) to (2i, 2i + 1) (struct upload's
 * neox_hd): the first heads_n of n rows of row_B bytes (the others copied as they are), src -> dst. */
static void
neox_rows(const uint8_t *src, uint8_t *dst, uint64_t n, uint64_t heads_n, uint64_t row_B, uint32_t hd)
{
    for (uint64_t r = 0; r < n; r++) {
        const uint64_t h = r / hd, i = r % hd,
                       to = r >= heads_n ? r : h * hd + (i < hd / 2 ? 2 * i : 2 * (i - hd / 2) + 1);
        memcpy(dst + to * row_B, src + r * row_B, row_B);
    }
}

static uint64_t
tensor_bytes(const struct llm_gguf *g)
{
    uint64_t b = 0;
    for (uint64_t i = 0; i < llm_gguf_tensor_count(g); i++)
        b += llm_gguf_tensor_at(g, i)->size_B;
    return b;
}

/* What a model allocates besides its weights (the f16 KV cache, activations, logits) at the
 * context its file implies (llm_model_params.n_ctx 0) must be justified by the file: at most
 * 64 MiB + 8x its tensor bytes. Real models stay below 2x at their default 4096 tokens; a file
 * with a few bytes per layer and a long context would otherwise make us allocate gigabytes
 * without being asked. A context the caller names is bounded by the device's memory instead. */
enum hcq_status
llm_check_state_size(const struct llm_model *m)
{
    const struct llm_hparams *hp = &m->hp;
    uint64_t kv_dim = (uint64_t)hp->n_head_kv * hp->head_dim, nb = m->n_batch;
    uint64_t state = 8ull * hp->n_layer * m->n_ctx * kv_dim +
                     4 * nb * (2ull * hp->n_embd + 2ull * hp->q_dim + 2 * kv_dim + 2ull * hp->n_ff) +
                     4ull * hp->n_vocab;
    uint64_t file_B = tensor_bytes(m->gguf), limit = (64ull << 20) + 8 * file_B;
    if (state > limit)
        return hcq_err(
            HCQ_ERR_FORMAT,
            "llm_model_load: KV cache and activations for %u tokens need %llu B, more than 64 MiB + 8x "
            "the file's %llu B of tensors (use a shorter context)",
            m->n_ctx, (unsigned long long)state, (unsigned long long)file_B);
    return HCQ_OK;
}

/* f32 elements of the activation buffers of one batch, in the order llm_alloc_state carves them out
 * of abuf (x, xn, qkv, att, fa, fb), and the bytes each takes there. */
static void
act_sizes(const struct llm_model *m, uint64_t sizes[6])
{
    const struct llm_hparams *hp = &m->hp;
    const uint64_t d = hp->n_embd, kv_dim = (uint64_t)hp->n_head_kv * hp->head_dim, nb = m->n_batch,
                   qn = hp->q_dim;
    const uint64_t s[6] = {nb * d, nb * d, nb * (qn + 2 * kv_dim), nb * qn, nb * hp->n_ff, nb * hp->n_ff};
    memcpy(sizes, s, sizeof s);
}

static uint64_t
act_span_B(uint64_t elems)
{
    return (4 * elems + WALIGN - 1) / WALIGN * WALIGN;
}

enum hcq_status
llm_mem_need_check(struct llm_model *m, uint32_t gemm_min_batch)
{
    const struct llm_hparams *hp = &m->hp;
    const uint64_t d = hp->n_embd, kv_dim = (uint64_t)hp->n_head_kv * hp->head_dim, nb = m->n_batch,
                   ff = hp->n_ff, qd = (uint64_t)hp->n_head * hp->head_dim;
    struct llm_mem_need *n = &m->need;
    memset(n, 0, sizeof *n);
    n->weights_B = tensor_bytes(m->gguf);
    n->kv_B = (uint64_t)K_LLM_KV_B * hp->n_layer * 2 * m->n_ctx * kv_dim;
    /* llm_alloc_state's buffers: the activations of one batch, its tokens, the logits */
    uint64_t sizes[6];
    act_sizes(m, sizes);
    for (int i = 0; i < 6; i++)
        n->act_B += act_span_B(sizes[i]);
    n->act_B += 4 * nb + 4ull * hp->n_vocab;
    /* llm_pg_init's staging: the largest matrix (Q|K|V together, or an FFN one) and a batch of
     * the longest rows, in f16 */
    if (gemm_min_batch && gemm_min_batch <= nb) {
        const uint64_t w_max = d * (qd + 2 * kv_dim) > d * ff ? d * (qd + 2 * kv_dim) : d * ff;
        const uint64_t k_max = d > ff ? (d > qd ? d : qd) : (ff > qd ? ff : qd);
        n->scratch_B = (2 * w_max + 255) / 256 * 256 + (2 * k_max * nb + 255) / 256 * 256 +
                       LLM_GEMM_SK_MAX_BLOCKS * (uint64_t)K_LLM_GEMM_SK_PART_B(64) +
                       4ull * LLM_GEMM_SK_MAX_TILES;
    }
    n->total_B = n->weights_B + n->kv_B + n->act_B + n->scratch_B;
    struct hcq_mem_stats ms;
    if (hcq_device_mem_stats(m->dev, &ms) != HCQ_OK || !ms.driver_free_B || n->total_B <= ms.driver_free_B)
        return HCQ_OK;
    const double G = 1073741824.0;
    return hcq_err(HCQ_ERR_NOMEM,
                   "llm_model_load: needs %.2f GiB of device memory (weights %.2f, KV cache %.2f for %u "
                   "tokens, activations %.2f, prefill staging %.2f), the device has %.2f GiB free: use a "
                   "shorter context (-c) or a smaller file",
                   n->total_B / G, n->weights_B / G, n->kv_B / G, m->n_ctx, n->act_B / G, n->scratch_B / G,
                   ms.driver_free_B / G);
}

enum hcq_status
llm_upload_weights(struct llm_model *m, const struct llm_model_params *p)
{
    enum hcq_status st;
    const struct llm_hparams *hp = &m->hp;
    uint32_t max_up = GW_COUNT + hp->n_layer * LW_COUNT, n_up = 0;
    uint64_t total = 0;
    struct upload *ups = calloc(max_up, sizeof *ups);
    if (!ups)
        return hcq_err(HCQ_ERR_NOMEM, "llm_model_load: upload plan");
    for (int w = 0; w < GW_COUNT; w++) {
        uint64_t ne0, ne1;
        gw_shape(hp, (enum llm_gw)w, &ne0, &ne1);
        if ((st = plan_one(m, llm_gw_names[w], ne0, ne1, llm_arch_needs_gw(hp->arch, (enum llm_gw)w),
                           &m->gw[w], ups, &n_up, &total, 0, 0, false)))
            goto done;
    }
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        for (int w = 0; w < LW_COUNT; w++) {
            char name[96];
            uint64_t ne0, ne1;
            snprintf(name, sizeof name, "blk.%u.%s", l, llm_lw_names[w]);
            lw_shape(hp, (enum llm_lw)w, &ne0, &ne1);
            const bool qk = w == LW_Q || w == LW_K || w == LW_Q_B || w == LW_K_B || w == LW_Q_NORM ||
                            w == LW_K_NORM || (w == LW_QKV && hp->arch != LLM_ARCH_GPT2);
            /* a fused Q|K|V: its Q and K rows are heads, its V rows stay */
            const uint32_t neox_n = w == LW_QKV ? hp->q_dim + hp->n_head_kv * hp->head_dim : 0;
            if ((st = plan_one(m, name, ne0, ne1, llm_arch_needs_lw(hp->arch, (enum llm_lw)w), &m->lw[l][w],
                               ups, &n_up, &total, hp->rope_neox && qk ? hp->head_dim : 0, neox_n,
                               hp->arch == LLM_ARCH_QWEN2 && (w == LW_Q_B || w == LW_K_B))))
                goto done;
        }
    }
    m->weights_B = total;
    /* Tensors do not overlap (llm_gguf_parse), so the weights are at most the file's tensor
     * bytes; only 1-D tensors grow (to f32: at most 8x) plus WALIGN padding per tensor. */
    uint64_t file_B = tensor_bytes(m->gguf);
    if (total > 8 * file_B + (1u << 20)) {
        st = hcq_err(HCQ_ERR_FORMAT,
                     "llm_model_load: %llu B of weights to allocate for %llu B of tensors in the file",
                     (unsigned long long)total, (unsigned long long)file_B);
        goto done;
    }
    if ((st = hcq_buf_alloc(m->dev, total, HCQ_MEM_DEVICE, &m->wbuf)))
        goto done;
    uint64_t base = hcq_buf_va(m->wbuf), done_B = 0;
    for (uint32_t i = 0; i < n_up; i++) {
        struct upload *u = &ups[i];
        u->dst->va = base + u->off_B;
        if (u->to_f32) {
            float *f = malloc(u->size_B);
            if (!f) {
                st = hcq_err(HCQ_ERR_NOMEM, "llm_model_load: %llu B", (unsigned long long)u->size_B);
                goto done;
            }
            st = llm_dequantize(u->t->type, u->t->data, f, u->size_B / 4);
            float *g = u->neox_hd && !st ? malloc(u->size_B) : NULL;
            if (u->neox_hd && !st && !g)
                st = hcq_err(HCQ_ERR_NOMEM, "llm_model_load: %llu B", (unsigned long long)u->size_B);
            if (g)
                neox_rows((const uint8_t *)f, (uint8_t *)g, u->size_B / 4, u->neox_n, 4, u->neox_hd);
            if (!st)
                st = hcq_buf_write(m->wbuf, u->off_B, g ? g : f, u->size_B);
            free(g);
            free(f);
        } else {
            /* chunks of whole rows keep the progress callback moving on large tensors; a
             * repacked type is rewritten chunk by chunk (k_llm_quant.h, decode layout) */
            const uint64_t rb = k_llm_row_bytes(u->dst->type, u->dst->ne0);
            const bool rp = (u->dst->type & K_LLM_RP) != 0;
            uint64_t chunk = rb && rb < (64ull << 20) ? (64ull << 20) / rb * rb : (64ull << 20);
            uint8_t *tmp = NULL, *perm = NULL;
            if ((rp && !(tmp = malloc(chunk))) || (u->neox_hd && !(perm = malloc(u->size_B)))) {
                free(tmp);
                st = hcq_err(HCQ_ERR_NOMEM, "llm_model_load: %llu B", (unsigned long long)u->size_B);
                goto done;
            }
            const uint8_t *data = u->t->data;
            if (perm) { /* the whole matrix in RoPE pair order first (rows of one head are apart) */
                neox_rows(data, perm, u->dst->ne1, u->neox_n, rb, u->neox_hd);
                data = perm;
            }
            for (uint64_t o = 0; o < u->size_B && !st; o += chunk) {
                uint64_t n = u->size_B - o < chunk ? u->size_B - o : chunk;
                const uint8_t *src = data + o;
                if (rp) {
                    llm_repack_rows(u->dst->type, src, tmp, n / rb, u->dst->ne0);
                    src = tmp;
                }
                st = hcq_buf_write(m->wbuf, u->off_B + o, src, n);
                if (p->progress)
                    p->progress(done_B + o + n, total, p->progress_user);
            }
            free(tmp);
            free(perm);
        }
        if (st)
            goto done;
        done_B += u->size_B;
        if (p->progress)
            p->progress(done_B, total, p->progress_user);
    }
    /* tied output head: the token embedding */
    if (!m->gw[GW_OUTPUT].va)
        m->gw[GW_OUTPUT] = m->gw[GW_TOK_EMBD];
    /* Phi-3: LLaMA's Q, K, V and gate, up as views of the fused tensors' rows (rows are independent
     * in every layout, the repacked ones too) */
    for (uint32_t l = 0; hp->arch == LLM_ARCH_PHI3 && l < hp->n_layer; l++) {
        struct dtensor *w = m->lw[l];
        const struct dtensor qkv = w[LW_QKV], up = w[LW_UP];
        const uint64_t rq = k_llm_row_bytes(qkv.type, qkv.ne0), ru = k_llm_row_bytes(up.type, up.ne0);
        const uint32_t qn = hp->q_dim, kv = hp->n_head_kv * hp->head_dim, ff = hp->n_ff;
        w[LW_Q] = (struct dtensor){qkv.va, qkv.type, qkv.ne0, qn};
        w[LW_K] = (struct dtensor){qkv.va + rq * qn, qkv.type, qkv.ne0, kv};
        w[LW_V] = (struct dtensor){qkv.va + rq * (qn + kv), qkv.type, qkv.ne0, kv};
        w[LW_GATE] = (struct dtensor){up.va, up.type, up.ne0, ff};
        w[LW_UP] = (struct dtensor){up.va + ru * ff, up.type, up.ne0, ff};
    }
done:
    free(ups);
    return st;
}

enum hcq_status
llm_alloc_state(struct llm_model *m)
{
    enum hcq_status st;
    const struct llm_hparams *hp = &m->hp;
    const uint64_t kv_dim = (uint64_t)hp->n_head_kv * hp->head_dim, nb = m->n_batch;
    m->qkv_dim = (uint32_t)(hp->q_dim + 2 * kv_dim);
    uint64_t sizes[6];
    act_sizes(m, sizes);
    uint64_t *vas[6] = {&m->x_va, &m->xn_va, &m->qkv_va, &m->att_va, &m->fa_va, &m->fb_va};
    uint64_t total = 0;
    for (int i = 0; i < 6; i++)
        total += act_span_B(sizes[i]);
    if ((st = hcq_buf_alloc(m->dev, total, HCQ_MEM_DEVICE, &m->abuf)))
        return st;
    uint64_t off = hcq_buf_va(m->abuf);
    for (int i = 0; i < 6; i++) {
        *vas[i] = off;
        off += act_span_B(sizes[i]);
    }
    if ((st = hcq_buf_alloc(m->dev, m->need.kv_B, HCQ_MEM_DEVICE, &m->kvbuf)) ||
        (st = hcq_buf_alloc(m->dev, 4ull * nb, HCQ_MEM_DEVICE, &m->tokbuf)) ||
        (st = hcq_buf_alloc(m->dev, 4ull * hp->n_vocab, HCQ_MEM_HOST, &m->logbuf)))
        return st;
    /* Why a device copy: the output head's 4-byte stores straight into host memory cost one
     * small PCIe write each (128k per token for a 128k vocabulary); one bulk copy after it
     * moves the same 0.5 MB in full-size writes. */
    if ((st = hcq_buf_alloc(m->dev, 4ull * hp->n_vocab, HCQ_MEM_DEVICE, &m->logdev)))
        return st;
    return HCQ_OK;
}
