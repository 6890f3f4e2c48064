/* SPDX-License-Identifier: MIT */
/*
 * llm_model.c - a model on an hcq device: weights uploaded once into one device buffer,
 * activations and the f16 KV cache in device buffers, the logits in a host-visible buffer.
 * The forward pass is a sequence of kernel launches (k_llm_*, CPU twins on cpu/emu);
 * a decode step (one token) is recorded once as a graph whose variables are the token id,
 * the position and the completion value, then replayed (llm_model_run.c; STYLE 2.7, ARCHITECTURE §6).
 * Layer: llm (uses only include/hcq.h and the kernel param headers).
 */
#include "llm_model_int.h"
#include "llm_model_priv.h"

#include "k_llm_sample.h" /* k_llm_argmax_params */
#include "util_log.h"
#include "k_llm_gemm_params.h"
#include "k_tmap.h"
#include "k_llm_attn_decode.h"
#include "k_llm_matvec.h"
#include "k_llm_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool decode_fused_ok(const struct llm_model *m);

/* A device buffer of part_B bytes of scratch followed by cnt_B bytes of u32 counters that start at
 * 0 (the last-CTA merges of k_llm_attn_decode and k_llm_attn_o reset them after each launch). */
static enum hcq_status
scratch_with_counters(struct llm_model *m, uint64_t part_B, uint64_t cnt_B, struct hcq_buf **out)
{
    uint32_t *zero = calloc(1, cnt_B);
    if (!zero)
        return hcq_err(HCQ_ERR_NOMEM, "llm_model_load");
    enum hcq_status st = hcq_buf_alloc(m->dev, part_B + cnt_B, HCQ_MEM_DEVICE, out);
    if (!st)
        st = hcq_buf_write(*out, part_B, zero, cnt_B);
    free(zero);
    return st;
}

/* CTAs of the decode mat-vec that fit on the GPU at once (its CTAs loop over tiles, so a
 * grid of exactly one wave has no tail: 4 per SM for k_llm_matvec, 3 for the 80-register
 * k_llm_matvec_wide; a grid of 4 per SM for the latter left a second, partial wave). */
static uint32_t
mv_wave(const struct hcq_program *prog, uint32_t sm_count)
{
    struct hcq_program_info pi;
    if (!sm_count || hcq_program_info(prog, &pi) != HCQ_OK || !pi.regs)
        return 512;
    uint32_t warp_regs = (pi.regs * 32 + 255) / 256 * 256, per_sm = 65536 / (warp_regs * (K_LLM_BLOCK / 32));
    uint32_t by_smem = (100u * 1024) / (pi.shared_B + 1024); /* the carve-outs rm uses */
    if (by_smem < per_sm)
        per_sm = by_smem;
    if (per_sm > 2048 / K_LLM_BLOCK)
        per_sm = 2048 / K_LLM_BLOCK;
    return (per_sm ? per_sm : 1) * sm_count;
}
_Static_assert(K_LLM_MV_THREADS == K_LLM_BLOCK && K_LLM_AD_THREADS == K_LLM_BLOCK,
               "launch() uses K_LLM_BLOCK");

void
llm_model_params_default(struct llm_model_params *p)
{
    *p = (struct llm_model_params){.dev_spec = NULL,
                                   .n_ctx = 0,
                                   .n_batch = 0,
                                   .use_graph = true,
                                   .gemm_min_batch = LLM_GEMM_MIN_BATCH_FAST};
}

enum hcq_status
llm_model_load_gguf(struct llm_gguf *g, const struct llm_model_params *p_in, struct llm_model **model_out)
{
    enum hcq_status st;
    struct llm_model_params p;
    if (p_in)
        p = *p_in;
    else
        llm_model_params_default(&p);
    *model_out = NULL;
    struct llm_model *m = calloc(1, sizeof *m);
    if (!m)
        return hcq_err(HCQ_ERR_NOMEM, "llm_model_load");
    m->gguf = g;
    m->use_graph = p.use_graph;
    struct llm_tok_params tp = {.pre_fallback = p.tok_pre_fallback};
    if ((st = llm_hparams_read(g, &m->hp)) || (st = llm_tok_create_ex(g, &tp, &m->tok)))
        goto fail;
    if (llm_arch_gemma(m->hp.arch) && m->hp.n_ff < m->hp.n_embd) { /* the post norms' scratch is fb */
        st = hcq_err(HCQ_ERR_UNSUPPORTED, "llm_model_load: gemma with n_ff %u < n_embd %u is not implemented",
                     m->hp.n_ff, m->hp.n_embd);
        goto fail;
    }
    if (llm_tok_vocab_size(m->tok) < m->hp.n_vocab) {
        st = hcq_err(HCQ_ERR_FORMAT, "llm_model_load: vocabulary has %u tokens, token_embd %u rows",
                     llm_tok_vocab_size(m->tok), m->hp.n_vocab);
        goto fail;
    }
    m->n_ctx = p.n_ctx ? p.n_ctx : (m->hp.n_ctx_train < 4096 ? m->hp.n_ctx_train : 4096);
    if (m->hp.arch == LLM_ARCH_GPT2 && m->n_ctx > m->hp.n_ctx_train)
        m->n_ctx = m->hp.n_ctx_train; /* learned positions end there */
    if (m->n_ctx > LLM_MAX_CTX) {
        st = hcq_err(HCQ_ERR_UNSUPPORTED, "llm_model_load: n_ctx %u (at most %u)", m->n_ctx, LLM_MAX_CTX);
        goto fail;
    }
    m->n_batch = p.n_batch ? p.n_batch : 64;
    if (m->n_batch > m->n_ctx)
        m->n_batch = m->n_ctx;
    /* the context a file implies is bounded by its size; one the caller asks for only by
     * LLM_MAX_CTX and the device's free memory (llm_mem_need_check) */
    if (!p.n_ctx && (st = llm_check_state_size(m)))
        goto fail;
    if (!(m->lw = calloc(m->hp.n_layer, sizeof *m->lw))) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_model_load: layers");
        goto fail;
    }
    /* the memory check after the queue: its rings and local memory are the engine's, not the
     * model's, but they come out of the same free memory */
    if ((st = hcq_device_open(p.dev_spec ? p.dev_spec : "auto", &m->dev)) ||
        (st = hcq_queue_create(m->dev, HCQ_QUEUE_COMPUTE, &m->q)) ||
        (st = hcq_signal_create(m->dev, 0, &m->done)) || (st = llm_mem_need_check(m, p.gemm_min_batch)))
        goto fail;
    for (int i = 0; i < PROG_COUNT; i++) {
        const char *name = prog_names[i];
        /* prefill attention on f16 tensor cores */
        if (i == PROG_ATTN_TILE)
            name = m->hp.head_dim == 128 ? "k_llm_attn_mma_hd128" : "k_llm_attn_mma";
        if (i == PROG_ATTN_ROWS) {
            const bool g8 = m->hp.n_head_kv && m->hp.n_head / m->hp.n_head_kv > 4;
            name = m->hp.head_dim == 128 ? (g8 ? "k_llm_attn_rows_hd128_g8" : "k_llm_attn_rows_hd128")
                                         : (g8 ? "k_llm_attn_rows_g8" : "k_llm_attn_rows");
            /* head size 64 without soft-cap or window: the warp-stream core (k_llm_attn_warps.cuh) */
            if (m->hp.head_dim == 64 && m->hp.attn_softcap == 0.0f && !m->hp.n_swa)
                name = "k_llm_attn_rows64";
        }
        if ((st = hcq_program_load(m->dev, name, &m->prog[i])))
            goto fail;
    }
    struct hcq_device_info info;
    const bool info_ok = hcq_device_info(m->dev, &info) == HCQ_OK;
    m->mv_f32 = p.f32_decode;
    /* decode attention: one CTA per query head up to K_LLM_AD_HEAD_MAX positions */
    m->ad_head_max = p.attn_split_only ? 0 : K_LLM_AD_HEAD_MAX;
    if ((st = llm_upload_weights(m, &p)) || (st = llm_alloc_state(m)) ||
        (st = llm_pg_init(m, p.gemm_min_batch)))
        goto fail;
    uint32_t sms = info_ok ? info.sm_count : 0;
    m->mv_grid = mv_wave(m->prog[PROG_MATVEC], sms);
    m->mvq_grid = mv_wave(m->prog[PROG_MATVEC_Q8], sms);
    m->mvh_grid = mv_wave(m->prog[PROG_MVH_F16], sms);
    m->decode_fused = decode_fused_ok(m) && !p.naive_decode;
    m->attn_split = m->decode_fused && k_llm_attn_decode_ok(m->hp.n_head, m->hp.n_head_kv, m->hp.head_dim);
    if (m->attn_split &&
        (st = scratch_with_counters(m, 4ull * m->hp.n_head * K_LLM_AD_SPLITS_MAX * (m->hp.head_dim + 2),
                                    4ull * m->hp.n_head_kv, &m->adbuf)))
        goto fail;
    *model_out = m;
    return HCQ_OK;
fail:
    llm_model_destroy(m);
    return st;
}

enum hcq_status
llm_model_load(const char *path, const struct llm_model_params *p, struct llm_model **model_out)
{
    struct llm_gguf *g;
    *model_out = NULL;
    enum hcq_status st = llm_gguf_open(path, &g);
    if (st)
        return st;
    if ((st = llm_model_load_gguf(g, p, model_out))) {
        llm_gguf_destroy(g);
        return st;
    }
    (*model_out)->own_gguf = true;
    return HCQ_OK;
}

void
llm_model_destroy(struct llm_model *m)
{
    if (!m)
        return;
    if (m->q && hcq_queue_finish(m->q, HCQ_TIMEOUT_DEFAULT_NS) != HCQ_OK)
        HCQ_LOG_WARN("llm_model_destroy: queue did not drain: %s", hcq_last_error());
    for (int i = 0; i < K_LLM_AD_KINDS; i++)
        hcq_graph_destroy(m->graph[i]), hcq_graph_destroy(m->graph_s[i]);
    llm_smp_free(m->smp);
    llm_pg_free(&m->pg);
    hcq_buf_free(m->logbuf);
    hcq_buf_free(m->logdev);
    hcq_buf_free(m->adbuf);
    hcq_buf_free(m->tokbuf);
    hcq_buf_free(m->kvbuf);
    hcq_buf_free(m->f16buf);
    hcq_buf_free(m->abuf);
    hcq_buf_free(m->wbuf);
    for (int i = 0; i < PROG_COUNT; i++)
        hcq_program_destroy(m->prog[i]);
    hcq_signal_destroy(m->done);
    hcq_queue_destroy(m->q);
    hcq_device_close(m->dev);
    llm_tok_destroy(m->tok);
    if (m->own_gguf)
        llm_gguf_destroy(m->gguf);
    free(m->lw);
    free(m);
}

/* ==== Forward ==== */

_Static_assert(K_LLM_BLOCK == K_LLM_SMP_PART_THREADS, "k_llm_sample_argmax_rows takes launch()'s block");

/* The embedding's token: tokbuf (direct), the tok variable (graph), or the id the device
 * sampler left (sample): patches pt[0] (tok) and pt[1] (pos) as they apply. */
static uint64_t
embed_tok(const struct llm_model *m, const struct step *s, const struct hcq_arg_patch **pt, uint32_t *n_pt)
{
    if (s->sample) {
        *pt += 1;
        *n_pt = s->graph ? 1 : 0;
        return llm_smp_state_va(m->smp);
    }
    *n_pt = s->graph ? 2 : 0;
    return s->graph ? 0 : hcq_buf_va(m->tokbuf);
}

/* Launch l; when profiling, its completion time stamped and labelled with m->tag by the grid
 * itself (hcq_queue_timestamp_launch: on rm the launches stay chained, with their programmatic
 * links, so each row is the time from the previous grid's completion to this one's in the step
 * as it really runs; a timestamp command after each launch would drain the queue, a floor of
 * ~5-7 us per launch on H100). */
enum hcq_status
llm_launch_prog(struct llm_model *m, const struct hcq_launch *l)
{
    enum hcq_status st = hcq_queue_launch_ex(m->q, l);
    struct prof *pf = m->prof;
    if (!st && pf && pf->n < pf->cap) {
        pf->label[pf->n] = m->tag ? m->tag : "(unlabelled)";
        pf->bytes[pf->n] = m->tag_B;
        st = hcq_queue_timestamp_launch(m->q, pf->ts[++pf->n]);
    }
    m->tag = NULL;
    m->tag_B = 0;
    return st;
}

static enum hcq_status
launch(struct llm_model *m, int prog, uint32_t gx, uint32_t gy, const void *args, uint32_t args_B,
       const struct hcq_arg_patch *patches, uint32_t n_patch)
{
    struct hcq_launch l = {
        .prog = m->prog[prog],
        .grid = {gx, gy, 1},
        .block = {K_LLM_BLOCK, 1, 1},
        .args = args,
        .args_B = args_B,
        .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
        .patches = n_patch ? patches : NULL,
        .patch_count = n_patch,
        /* the q8 mat-vecs and the decode attention wait for their predecessor in the kernel
         * (griddepcontrol.wait), so they may start while it drains (programmatic dependent
         * launch; H100 tg128 Q6_K 1335 vs 1130 tokens/s without) */
        .flags = prog == PROG_MATVEC_Q8 || (prog >= PROG_MVQ_Q4K && prog <= PROG_MVH_BF16) ||
                         prog == PROG_ATTN_DEC || prog == PROG_ATTN_DEC_LONG || prog == PROG_ATTN_DEC_FAR
                     ? HCQ_LAUNCH_DEP_WAIT
                     : 0,
    };
    if (!m->tag)
        m->tag = prog_names[prog];
    m->x16_of.va = 0; /* (a norm sets it again after its launch) */
    return llm_launch_prog(m, &l);
}

static enum hcq_status
matmul(struct llm_model *m, const struct dtensor *w, uint64_t x_va, uint32_t x_stride, uint64_t y_va,
       uint32_t y_stride, uint32_t n, const struct dtensor *b, bool acc)
{
    if (m->pg.min_n && n >= m->pg_min_step && llm_pg_takes(w) && x_stride % 4 == 0 && y_stride % 2 == 0) {
        /* a matrix larger than the f16 scratch (which holds the largest layer matrix: the output
         * head of a batch step) in slices of whole rows, 64 at least */
        const uint64_t fit = m->pg.w16_B / (2ull * w->ne0) / 64 * 64;
        if (fit >= w->ne1 || w->f16_va)
            return llm_matmul_prefill(m, &w, 1, x_va, x_stride, y_va, y_stride, n, b, acc);
        const uint64_t rb = k_llm_gemm_row_bytes(w->type, w->ne0);
        for (uint32_t r0 = 0; fit && r0 < w->ne1; r0 += (uint32_t)fit) {
            struct dtensor v = *w, bv = b ? *b : (struct dtensor){0};
            const struct dtensor *vp = &v;
            v.va += r0 * rb; /* (f16_va is 0 here) */
            v.ne1 = w->ne1 - r0 < fit ? w->ne1 - r0 : (uint32_t)fit;
            bv.va += b ? 4ull * r0 : 0;
            enum hcq_status st = llm_matmul_prefill(m, &vp, 1, x_va, x_stride, y_va + 4ull * r0, y_stride, n,
                                                    b ? &bv : NULL, acc);
            if (st)
                return st;
        }
        if (fit)
            return HCQ_OK;
    }
    struct k_llm_matmul_params p = {
        .w_va = w->va,
        .x_va = x_va,
        .y_va = y_va,
        .b_va = b ? b->va : 0,
        .type = w->type,
        .k = w->ne0,
        .rows = w->ne1,
        .n = n,
        .x_stride = x_stride,
        .y_stride = y_stride,
        .accumulate = acc,
        .by_block = n == 1, /* decode: one block per row keeps enough warps in flight */
    };
    uint32_t grid = n == 1 ? w->ne1 : (w->ne1 + K_LLM_MATMUL_ROWS - 1) / K_LLM_MATMUL_ROWS;
    return launch(m, PROG_MATMUL, grid, 1, &p, sizeof p, NULL, 0);
}

static enum hcq_status
norm(struct llm_model *m, uint64_t x_va, uint64_t y_va, uint32_t n, const struct dtensor *w,
     const struct dtensor *b)
{
    struct k_llm_norm_params p = {
        .x_va = x_va,
        .y_va = y_va,
        .w_va = w->va,
        .b_va = b && b->va ? b->va : 0,
        .d = m->hp.n_embd,
        .n = n,
        .mode = m->hp.arch == LLM_ARCH_GPT2,
        .eps = m->hp.norm_eps,
    };
    /* xn feeds matmuls: on tensor cores the norm writes their f16 input too (no cast launch) */
    const bool f16 = y_va == m->xn_va && m->pg.min_n && n >= m->pg_min_step && n <= m->n_batch;
    p.y16_va = f16 ? m->pg.x16_va : 0;
    enum hcq_status st = launch(m, PROG_NORM, n, 1, &p, sizeof p, NULL, 0);
    if (!st && f16)
        m->x16_of = (__typeof__(m->x16_of)){.va = y_va, .n = n, .k = p.d, .stride = p.d};
    return st;
}

/* k_llm_act over n elements (the modes of k_llm_params.h). */
static enum hcq_status
act(struct llm_model *m, uint32_t mode, uint64_t a_va, uint64_t b_va, uint64_t y_va, uint32_t n, float scale)
{
    struct k_llm_act_params p = {
        .a_va = a_va, .b_va = b_va, .y_va = y_va, .n = n, .mode = mode, .scale = scale};
    return launch(m, PROG_ACT, (n + K_LLM_BLOCK - 1) / K_LLM_BLOCK, 1, &p, sizeof p, NULL, 0);
}

/* Gemma: x += RMSNorm(W in) over n rows of k inputs: W in into xn (free once Q, K, V or gate, up
 * have read it), its norm into fb (free after the activation; n_ff >= n_embd checked at load). */
static enum hcq_status
post_norm_add(struct llm_model *m, const struct dtensor *w, uint64_t in_va, uint32_t k, uint32_t n,
              const struct dtensor *nw)
{
    enum hcq_status st;
    const uint32_t d = m->hp.n_embd;
    if ((st = matmul(m, w, in_va, k, m->xn_va, d, n, NULL, false)) ||
        (st = norm(m, m->xn_va, m->fb_va, n, nw, NULL)))
        return st;
    return act(m, K_LLM_ACT_ADD, m->fb_va, m->x_va, m->x_va, n * d, 0.0f);
}

/* ==== Decode (one token): fused mat-vec path ==== */

/* The decode attention kernel a step at pos takes (k_llm_ad_kind; 0 without the split-K
 * attention) - and so the decode graph it was recorded in. */
uint32_t
llm_model_attn_kind(const struct llm_model *m, uint32_t pos)
{
    return m->attn_split ? k_llm_ad_kind(pos, m->ad_head_max) : 0u;
}

/* y = W x' over n_w tensors of row length k (rows concatenated in y); x' = RMSNorm(x) * norm
 * when norm is given. mode: K_LLM_MV_SET / ACC / SWIGLU (n_w 2: gate, up). */
static enum hcq_status matvec_ex(struct llm_model *m, const char *tag, const struct dtensor *const *w,
                                 uint32_t n_w, uint64_t x_va, uint64_t y_va, const struct dtensor *norm,
                                 const struct dtensor *b, uint32_t mode, const struct k_llm_mv_rope *rope,
                                 const struct step *s);

static enum hcq_status
matvec(struct llm_model *m, const char *tag, const struct dtensor *const *w, uint32_t n_w, uint64_t x_va,
       uint64_t y_va, const struct dtensor *norm, const struct dtensor *b, uint32_t mode)
{
    return matvec_ex(m, tag, w, n_w, x_va, y_va, norm, b, mode, NULL, NULL);
}

/* rope (mode K_LLM_MV_ROPE): its pos is the step's position variable when recording a graph. */
static enum hcq_status
matvec_ex(struct llm_model *m, const char *tag, const struct dtensor *const *w, uint32_t n_w, uint64_t x_va,
          uint64_t y_va, const struct dtensor *norm, const struct dtensor *b, uint32_t mode,
          const struct k_llm_mv_rope *rope, const struct step *s)
{
    struct k_llm_matvec_params p;
    llm_mv_params(m, &p, w, n_w, x_va, y_va, norm, b, mode);
    if (rope)
        p.rope = *rope;
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n_w; i++)
        bytes += llm_dt_bytes(w[i]);
    int prog = llm_mv_prog(m, w, n_w, p.k);
    if (prog < 0)
        return hcq_err(HCQ_ERR_UNSUPPORTED, "llm decode: no mat-vec reads these weight types");
    uint32_t ctas = llm_mv_units(prog) ? k_llm_mvq_ctas(&p) : k_llm_mv_tiles(&p);
    uint32_t cap = prog == PROG_MATVEC_Q8 ? m->mvq_grid : llm_mv_units(prog) ? m->mvh_grid : m->mv_grid;
    if (mode == K_LLM_MV_ROPE && !llm_mv_units(prog))
        return hcq_err(HCQ_ERR_UNSUPPORTED, "llm decode: the RoPE epilogue needs the q8 or 16-bit mat-vec");
    m->tag = tag;
    m->tag_B = bytes;
    struct hcq_arg_patch pt = {
        s ? s->var_pos : 0, offsetof(struct k_llm_matvec_params, rope) + offsetof(struct k_llm_mv_rope, pos),
        4};
    const bool patch = rope && s && s->graph;
    if (prog == PROG_MATVEC_Q8)
        prog = llm_mvq_typed_prog(m, &p);
    const uint32_t grid = ctas < cap ? ctas : cap;
    return launch(m, prog, grid, 1, &p, sizeof p, patch ? &pt : NULL, patch ? 1 : 0);
}

/* Qwen3: the RMSNorm of each Q and K head of n rows of the Q|K|V buffer (before RoPE); nothing
 * for models without q/k norm weights. */
static enum hcq_status
head_norm(struct llm_model *m, uint32_t n, const struct dtensor *w)
{
    if (!w[LW_Q_NORM].va)
        return HCQ_OK;
    const struct llm_hparams *hp = &m->hp;
    struct k_llm_head_norm_params p = {
        .x_va = m->qkv_va,
        .wq_va = w[LW_Q_NORM].va,
        .wk_va = w[LW_K_NORM].va,
        .n_tok = n,
        .n_head = hp->n_head,
        .n_head_kv = hp->n_head_kv,
        .hd = hp->head_dim,
        .stride = m->qkv_dim,
        .eps = hp->norm_eps,
    };
    m->tag = "q/k head norm";
    return launch(m, PROG_HEAD_NORM, hp->n_head + hp->n_head_kv, n, &p, sizeof p, NULL, 0);
}

/* Qwen2's Q, K and V biases as one [q | k | v] f32 vector (llm_upload.c plans them without a
 * gap: the bias of the concatenated Q|K|V rows); false without them. */
static bool
qkv_bias(const struct llm_model *m, const struct dtensor *w, struct dtensor *b)
{
    if (!w[LW_Q_B].va)
        return false;
    *b = (struct dtensor){w[LW_Q_B].va, LLM_TYPE_F32, m->qkv_dim, 1};
    return true;
}

/* Whether the decode step of this model can take the fused path (LLaMA and Qwen2: RMSNorm,
 * SwiGLU, no biases but Qwen2's on Q|K|V, every matrix of a supported type and row length). */
static bool
decode_fused_ok(const struct llm_model *m)
{
    const struct llm_hparams *hp = &m->hp;
    const uint32_t d = hp->n_embd, qn = hp->q_dim;
    /* Gemma: the per-op path (the fused decode has no post norms, window or soft-caps) */
    if (hp->arch == LLM_ARCH_GPT2 || llm_arch_gemma(hp->arch) || !m->prog[PROG_MATVEC])
        return false;
    const struct dtensor *out[1] = {&m->gw[GW_OUTPUT]};
    if (llm_mv_prog(m, out, 1, d) < 0)
        return false;
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const struct dtensor *w = m->lw[l];
        const struct dtensor *qkv[3] = {&w[LW_Q], &w[LW_K], &w[LW_V]}, *o[1] = {&w[LW_O]},
                             *gu[2] = {&w[LW_GATE], &w[LW_UP]}, *dn[1] = {&w[LW_DOWN]};
        if (llm_mv_prog(m, qkv, 3, d) < 0 || llm_mv_prog(m, o, 1, qn) < 0 || llm_mv_prog(m, gu, 2, d) < 0 ||
            llm_mv_prog(m, dn, 1, hp->n_ff) < 0 || w[LW_GATE].type != w[LW_UP].type || w[LW_O_B].va ||
            w[LW_DOWN_B].va)
            return false;
    }
    return true;
}

/* One decode step of a LLaMA model, 6 launches per layer: [norm + Q|K|V], RoPE + KV store,
 * attention, [O + residual], [norm + gate|up + SiLU], [down + residual]; then [final norm
 * + output head]. Same math as llm_model_record_step's general path (the twins check it). */
static enum hcq_status
record_decode_llama(struct llm_model *m, uint32_t pos, const struct step *s)
{
    enum hcq_status st;
    const struct llm_hparams *hp = &m->hp;
    const uint32_t d = hp->n_embd, hd = hp->head_dim, kv_dim = hp->n_head_kv * hd, qd = m->qkv_dim;
    const struct llm_kv_view *kv = s->kv; /* the model's cache, or a sequence's slot in a batch's */
    const uint32_t n_ctx = kv ? kv->n_ctx : m->n_ctx;
    const uint64_t kv_layer_B = kv ? kv->layer_B : (uint64_t)K_LLM_KV_B * m->n_ctx * kv_dim;
    const uint64_t kv_va = kv ? kv->va : hcq_buf_va(m->kvbuf);
    struct hcq_arg_patch pt[2];
    const struct hcq_arg_patch *ept = pt;
    uint32_t n_ept;

    struct k_llm_embed_params ep = {
        .w_va = m->gw[GW_TOK_EMBD].va,
        .tok_va = embed_tok(m, s, &ept, &n_ept),
        .out_va = m->x_va,
        .type = m->gw[GW_TOK_EMBD].type,
        .d = d,
        .n_tok = 1,
        .pos0 = pos,
        .n_vocab = hp->n_vocab,
    };
    pt[0] = (struct hcq_arg_patch){s->var_tok, offsetof(struct k_llm_embed_params, tok_imm), 4};
    pt[1] = (struct hcq_arg_patch){s->var_pos, offsetof(struct k_llm_embed_params, pos0), 4};
    m->tag = "embed";
    if ((st = launch(m, PROG_EMBED, 1, K_LLM_EMBED_CTAS(d), &ep, sizeof ep, ept, n_ept)))
        return st;
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const struct dtensor *w = m->lw[l];
        uint64_t kc = kv_va + 2 * l * kv_layer_B, vc = kc + kv_layer_B;
        const struct dtensor *qkv[3] = {&w[LW_Q], &w[LW_K], &w[LW_V]};
        /* RoPE + KV store in the Q|K|V epilogue where the q8 mat-vec runs it */
        /* (not where the heads are normalized first: the epilogue sees two rows, not a head) */
        const bool rope_fused = llm_mv_units(llm_mv_prog(m, qkv, 3, d)) && !w[LW_Q_NORM].va;
        const struct k_llm_mv_rope rope = {
            .kc_va = kc,
            .vc_va = vc,
            .freqs_va = hp->has_rope_freqs ? m->gw[GW_ROPE_FREQS].va : 0,
            .pos = pos,
            .hd = hd,
            .n_q = hp->n_head * hd,
            .n_kv = kv_dim,
            .base = hp->rope_base,
            .n_ctx = n_ctx,
        };
        struct dtensor qkv_b;
        const bool has_qkv_b = qkv_bias(m, w, &qkv_b);
        if ((st = matvec_ex(m, rope_fused ? "mv norm+qkv+rope+kv" : "mv norm+qkv", qkv, 3, m->x_va, m->qkv_va,
                            &w[LW_ATTN_NORM], has_qkv_b ? &qkv_b : NULL,
                            rope_fused ? K_LLM_MV_ROPE : K_LLM_MV_SET, rope_fused ? &rope : NULL, s)))
            return st;
        struct k_llm_rope_kv_params rp = {
            .q_va = m->qkv_va,
            .k_va = m->qkv_va + 4ull * hp->q_dim,
            .v_va = m->qkv_va + 4ull * (hp->q_dim + kv_dim),
            .kc_va = kc,
            .vc_va = vc,
            .freqs_va = hp->has_rope_freqs ? m->gw[GW_ROPE_FREQS].va : 0,
            .n_tok = 1,
            .pos0 = pos,
            .n_head = hp->n_head,
            .n_head_kv = hp->n_head_kv,
            .hd = hd,
            .qkv_stride = qd,
            .rope = 1,
            .base = hp->rope_base,
            .n_ctx = n_ctx,
        };
        pt[0] = (struct hcq_arg_patch){s->var_pos, offsetof(struct k_llm_rope_kv_params, pos0), 4};
        /* one CTA per 256 pairs of Q|K (the V copy shares them) */
        uint32_t rope_ctas = ((hp->n_head + hp->n_head_kv) * (hd / 2) + K_LLM_BLOCK - 1) / K_LLM_BLOCK;
        if (!rope_fused && (st = head_norm(m, 1, w)))
            return st;
        m->tag = "rope_kv";
        if (!rope_fused && (st = launch(m, PROG_ROPE_KV, 1, rope_ctas, &rp, sizeof rp, pt, s->graph ? 1 : 0)))
            return st;
        /* the decode attention's parameters (k_llm_attn_decode) */
        struct k_llm_attn_decode_params adp = {
            .q_va = m->qkv_va,
            .kc_va = kc,
            .vc_va = vc,
            .pos = pos,
            .n_ctx = n_ctx,
            .n_head = hp->n_head,
            .n_head_kv = hp->n_head_kv,
            .hd = hd,
            .n_split = 1,
            .scale = 1.0f / sqrtf((float)hd),
        };
        if (m->attn_split) {
            const uint32_t kind = s->graph ? s->attn_kind : llm_model_attn_kind(m, pos);
            adp.out_va = m->att_va;
            adp.part_va = hcq_buf_va(m->adbuf);
            adp.count_va = adp.part_va + 4ull * hp->n_head * K_LLM_AD_SPLITS_MAX * (hd + 2);
            adp.n_split = k_llm_ad_kind_splits(kind);
            adp.head_max = m->ad_head_max;
            pt[0] = (struct hcq_arg_patch){s->var_pos, offsetof(struct k_llm_attn_decode_params, pos), 4};
            m->tag = "attn split-K";
            st = launch(m, ad_kind_prog[kind], hp->n_head_kv, adp.n_split, &adp, sizeof adp, pt,
                        s->graph ? 1 : 0);
        } else {
            struct k_llm_attn_params ap = {
                .q_va = m->qkv_va,
                .kc_va = kc,
                .vc_va = vc,
                .out_va = m->att_va,
                .n_tok = 1,
                .pos0 = pos,
                .n_head = hp->n_head,
                .n_head_kv = hp->n_head_kv,
                .hd = hd,
                .q_stride = qd,
                .scale = 1.0f / sqrtf((float)hd),
                .n_ctx = n_ctx,
            };
            pt[0] = (struct hcq_arg_patch){s->var_pos, offsetof(struct k_llm_attn_params, pos0), 4};
            m->tag = "attn";
            st = launch(m, PROG_ATTN, hp->n_head, 1, &ap, sizeof ap, pt, s->graph ? 1 : 0);
        }
        if (st)
            return st;
        const struct dtensor *o[1] = {&w[LW_O]}, *gu[2] = {&w[LW_GATE], &w[LW_UP]}, *dn[1] = {&w[LW_DOWN]};
        const struct k_llm_mv_rope o_mark = {.n_q = K_LLM_MVQ_PAIRS_MARK};
        /* O as row pairs (k_llm_mvq_rpu: one CTA per SM of one pass each, every byte
         * requested before the PDL wait; H100 tg128 Q8_0 1599-1603 vs 1566-1573 with one row
         * per unit, Q4_K_M 2027-2029 vs 1972-1974) */
        if ((st = matvec_ex(m, "mv o+residual", o, 1, m->att_va, m->x_va, NULL, NULL, K_LLM_MV_ACC, &o_mark,
                            NULL)) ||
            (st = matvec_ex(m, "mv norm+gate,up+silu", gu, 2, m->x_va, m->fa_va, &w[LW_FFN_NORM], NULL,
                            K_LLM_MV_SWIGLU, NULL, NULL)) ||
            (st = matvec_ex(m, "mv down+residual", dn, 1, m->fa_va, m->x_va, NULL, NULL, K_LLM_MV_ACC, NULL,
                            NULL)))
            return st;
    }
    const struct dtensor *out[1] = {&m->gw[GW_OUTPUT]};
    const uint64_t lg_va = hcq_buf_va(m->logdev ? m->logdev : m->logbuf);
    if ((st = matvec(m, "mv norm+output", out, 1, m->x_va, lg_va, &m->gw[GW_OUT_NORM], NULL, K_LLM_MV_SET)))
        return st;
    /* sampling on the device: the logits stay there */
    if (s->sample)
        return llm_smp_record(m, lg_va);
    if (kv && kv->ids_va) { /* a batch's sequence: its greedy pick too (k_llm_sample_argmax_rows) */
        const struct k_llm_argmax_params amp = {
            .x_va = lg_va, .out_va = kv->ids_va, .n_rows = 1, .n = hp->n_vocab};
        if ((st = launch(m, PROG_ARGMAX_ROWS, 1, 1, &amp, sizeof amp, NULL, 0)))
            return st;
    }
    return m->logdev ? hcq_queue_copy(m->q, m->logbuf, 0, m->logdev, 0, 4ull * hp->n_vocab) : HCQ_OK;
}

/* Record the commands of one step: n tokens (from tokbuf, or the tok variable when n == 1
 * in a graph) at positions pos.., logits of the last token when want_logits. The forward
 * pass follows the model math in order (STYLE 2.7). With s->kv: another cache (a batch's),
 * and for a batch step per-token positions and slots and the logits of every token. */
enum hcq_status
llm_model_record_step(struct llm_model *m, uint32_t n, uint32_t pos, bool want_logits, const struct step *s)
{
    enum hcq_status st;
    const struct llm_hparams *hp = &m->hp;
    const bool gpt2 = hp->arch == LLM_ARCH_GPT2;
    const uint32_t d = hp->n_embd, hd = hp->head_dim, kv_dim = hp->n_head_kv * hd, qd = m->qkv_dim;
    const struct llm_kv_view *kv = s->kv;
    const uint32_t n_ctx = kv ? kv->n_ctx : m->n_ctx;
    /* a batch step's matmuls on tensor cores at any row count (where the model has them): its
     * rows are many sequences' one token each, and k_llm_matmul read the weights (the output
     * head above all) at a fraction of the bandwidth (H200 1B Q4_K_M, 32 rows: 37 ms a step) */
    m->pg_min_step = kv && kv->tok_va ? 1 : m->pg.min_n;
    const uint64_t kv_layer_B = kv ? kv->layer_B : (uint64_t)K_LLM_KV_B * m->n_ctx * kv_dim;
    const uint64_t kv_va = kv ? kv->va : hcq_buf_va(m->kvbuf);
    struct hcq_arg_patch pt[2];
    const struct hcq_arg_patch *ept = pt;
    uint32_t n_ept;

    if (n == 1 && want_logits && m->decode_fused && !(kv && kv->tok_va))
        return record_decode_llama(m, pos, s);

    /* 1. token (+ position) embedding -> x */
    struct k_llm_embed_params ep = {
        .w_va = m->gw[GW_TOK_EMBD].va,
        .pos_w_va = gpt2 ? m->gw[GW_POS_EMBD].va : 0,
        .tok_va = embed_tok(m, s, &ept, &n_ept),
        .out_va = m->x_va,
        .type = m->gw[GW_TOK_EMBD].type,
        .pos_type = m->gw[GW_POS_EMBD].type,
        .d = d,
        .n_tok = n,
        .pos0 = pos,
        .n_vocab = hp->n_vocab,
        .n_pos = gpt2 ? m->gw[GW_POS_EMBD].ne1 : 0,
    };
    pt[0] = (struct hcq_arg_patch){s->var_tok, offsetof(struct k_llm_embed_params, tok_imm), 4};
    pt[1] = (struct hcq_arg_patch){s->var_pos, offsetof(struct k_llm_embed_params, pos0), 4};
    if ((st = launch(m, PROG_EMBED, n, K_LLM_EMBED_CTAS(d), &ep, sizeof ep, ept, n_ept)))
        return st;
    const bool gemma = llm_arch_gemma(hp->arch);
    if (gemma && (st = act(m, K_LLM_ACT_SCALE, m->x_va, 0, m->x_va, n * d, sqrtf((float)d))))
        return st; /* llama.cpp: the embedding times sqrtf(n_embd) */

    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const struct dtensor *w = m->lw[l];
        const bool swa = llm_layer_swa(hp, l);
        uint64_t kc = kv_va + 2 * l * kv_layer_B, vc = kc + kv_layer_B;
        /* 2. attention norm */
        if ((st = norm(m, m->x_va, m->xn_va, n, &w[LW_ATTN_NORM], &w[LW_ATTN_NORM_B])))
            return st;
        /* 3. q, k, v projections into one [n][q | k | v] scratch */
        const struct dtensor *w3[3] = {&w[LW_Q], &w[LW_K], &w[LW_V]};
        struct dtensor qkv_b;
        const bool has_qkv_b = qkv_bias(m, w, &qkv_b);
        m->tag = "q|k|v matmul";
        if (gpt2) {
            st = matmul(m, &w[LW_QKV], m->xn_va, d, m->qkv_va, qd, n, &w[LW_QKV_B], false);
        } else if (llm_qkv_prefill_ok(m, w3, n, d, qd)) {
            st =
                llm_matmul_prefill(m, w3, 3, m->xn_va, d, m->qkv_va, qd, n, has_qkv_b ? &qkv_b : NULL, false);
        } else if (!(st = matmul(m, &w[LW_Q], m->xn_va, d, m->qkv_va, qd, n, has_qkv_b ? &w[LW_Q_B] : NULL,
                                 false)) &&
                   !(st = matmul(m, &w[LW_K], m->xn_va, d, m->qkv_va + 4ull * hp->q_dim, qd, n,
                                 has_qkv_b ? &w[LW_K_B] : NULL, false))) {
            st = matmul(m, &w[LW_V], m->xn_va, d, m->qkv_va + 4ull * (hp->q_dim + kv_dim), qd, n,
                        has_qkv_b ? &w[LW_V_B] : NULL, false);
        }
        if (st || (st = head_norm(m, n, w)))
            return st;
        /* 4. RoPE on q and k, k and v into the cache at rows pos.. */
        struct k_llm_rope_kv_params rp = {
            .q_va = m->qkv_va,
            .k_va = m->qkv_va + 4ull * hp->q_dim,
            .v_va = m->qkv_va + 4ull * (hp->q_dim + kv_dim),
            .kc_va = kc,
            .vc_va = vc,
            .freqs_va = hp->has_rope_freqs ? m->gw[GW_ROPE_FREQS].va : 0,
            .n_tok = n,
            .pos0 = pos,
            .n_head = hp->n_head,
            .n_head_kv = hp->n_head_kv,
            .hd = hd,
            .qkv_stride = qd,
            .rope = !gpt2,
            .base = swa ? hp->rope_base_swa : hp->rope_base,
            .n_ctx = n_ctx,
            .pos_scale = swa ? 0.0f : hp->rope_scale, /* (0: 1) */
            .tok_va = kv ? kv->tok_va : 0,
            .slot_stride = kv ? kv->slot_B / K_LLM_KV_B : 0,
        };
        pt[0] = (struct hcq_arg_patch){s->var_pos, offsetof(struct k_llm_rope_kv_params, pos0), 4};
        /* a CTA per 256 pairs of each token (one per token took ~5 us a launch: H200 batch step) */
        const uint32_t rope_y = ((hp->n_head + hp->n_head_kv) * (hd / 2) + K_LLM_BLOCK - 1) / K_LLM_BLOCK;
        if ((st = launch(m, PROG_ROPE_KV, n, rope_y, &rp, sizeof rp, pt, s->graph ? 1 : 0)))
            return st;
        /* 5. causal attention over the cache */
        struct k_llm_attn_params ap = {
            .q_va = m->qkv_va,
            .kc_va = kc,
            .vc_va = vc,
            .out_va = m->att_va,
            .n_tok = n,
            .pos0 = pos,
            .n_head = hp->n_head,
            .n_head_kv = hp->n_head_kv,
            .hd = hd,
            .q_stride = qd,
            .scale = gemma ? hp->attn_scale : 1.0f / sqrtf((float)hd),
            .n_ctx = n_ctx,
            .softcap = hp->attn_softcap,
            .window = swa ? hp->n_swa : 0,
            .tok_va = kv ? kv->tok_va : 0,
            .slot_stride = kv ? kv->slot_B / K_LLM_KV_B : 0,
        };
        pt[0] = (struct hcq_arg_patch){s->var_pos, offsetof(struct k_llm_attn_params, pos0), 4};
        /* several tokens of one sequence: the tiled f16 tensor-core kernel (each K/V row read
         * once per block of queries; it has no soft-cap or window); a batch step's tokens each
         * over their own slot (and the unfused decode): k_llm_attn_rows* (head sizes 64 / 128,
         * groups up to 8; k_llm_attn_rows64 where loaded), else k_llm_attn */
        const bool tile = n > 1 && (hd == 64 || hd == 128) && !ap.softcap && !ap.window && !ap.tok_va;
        const uint32_t qb = K_LLM_ATTN_MMA_QB;
        if (tile)
            st = launch(m, PROG_ATTN_TILE, hp->n_head, (n + qb - 1) / qb, &ap, sizeof ap, pt,
                        s->graph ? 1 : 0);
        else if ((hd == 64 || hd == 128) && hp->n_head / hp->n_head_kv <= 8) /* k_llm_attn_rows */
            st = launch(m, PROG_ATTN_ROWS, hp->n_head_kv, n, &ap, sizeof ap, pt, s->graph ? 1 : 0);
        else
            st = launch(m, PROG_ATTN, hp->n_head, n, &ap, sizeof ap, pt, s->graph ? 1 : 0);
        if (st)
            return st;
        /* 6. output projection, added to the residual stream (Gemma: its RMSNorm added) */
        m->tag = "o matmul";
        if (gemma ? (st = post_norm_add(m, &w[LW_O], m->att_va, hp->q_dim, n, &w[LW_POST_ATTN_NORM]))
                  : (st = matmul(m, &w[LW_O], m->att_va, hp->q_dim, m->x_va, d, n,
                                 w[LW_O_B].va ? &w[LW_O_B] : NULL, true)))
            return st;
        /* 7. FFN: norm, (gate, up, SwiGLU) or (up, GELU), down added to the residual */
        if ((st = norm(m, m->x_va, m->xn_va, n, &w[LW_FFN_NORM], &w[LW_FFN_NORM_B])))
            return st;
        struct k_llm_act_params actp = {.a_va = m->fa_va,
                                        .b_va = m->fb_va,
                                        .y_va = m->fa_va,
                                        .n = n * hp->n_ff,
                                        .mode = gpt2    ? K_LLM_ACT_GELU
                                                : gemma ? K_LLM_ACT_GEGLU
                                                        : K_LLM_ACT_SWIGLU};
        const bool act16 = m->pg.min_n && n >= m->pg_min_step && n <= m->n_batch; /* down's f16 input */
        actp.y16_va = act16 ? m->pg.x16_va : 0;
        /* gate and up as one GEMM into [n][gate | up] over fa and fb (adjacent in abuf, 2 n_batch
         * n_ff floats), when it reads both where they are and down reads the f16 result (act
         * writes no f32 y: it would overwrite the strided input in place). Why: one launch for
         * two - a few-token GEMM has a fixed cost of ~5 us (H200 1B batch step of 8). */
        const struct dtensor *gu[2] = {&w[LW_GATE], &w[LW_UP]};
        const bool gu_one = !gpt2 && act16 && llm_pg_takes(&w[LW_DOWN]) && m->fb_va > m->fa_va &&
                            llm_matmul_prefill_in_place(m, gu, 2, n);
        m->tag = gpt2 ? "up matmul" : gu_one ? "gate|up matmul" : "gate matmul";
        if (gpt2) {
            st = matmul(m, &w[LW_UP], m->xn_va, d, m->fa_va, hp->n_ff, n, &w[LW_UP_B], false);
        } else if (gu_one) {
            st = llm_matmul_prefill(m, gu, 2, m->xn_va, d, m->fa_va, 2 * hp->n_ff, n, NULL, false);
            actp.b_va = m->fa_va + 4ull * hp->n_ff;
            actp.y_va = 0;
            actp.row = hp->n_ff;
            actp.ab_stride = 2 * hp->n_ff;
        } else if (!(st = matmul(m, &w[LW_GATE], m->xn_va, d, m->fa_va, hp->n_ff, n, NULL, false))) {
            m->tag = "up matmul";
            st = matmul(m, &w[LW_UP], m->xn_va, d, m->fb_va, hp->n_ff, n, NULL, false);
        }
        if (st || (st = launch(m, PROG_ACT, (actp.n + K_LLM_BLOCK - 1) / K_LLM_BLOCK, 1, &actp, sizeof actp,
                               NULL, 0)))
            return st;
        if (act16)
            m->x16_of = (__typeof__(m->x16_of)){.va = m->fa_va, .n = n, .k = hp->n_ff, .stride = hp->n_ff};
        m->tag = "down matmul";
        if (gemma ? (st = post_norm_add(m, &w[LW_DOWN], m->fa_va, hp->n_ff, n, &w[LW_POST_FFN_NORM]))
                  : (st = matmul(m, &w[LW_DOWN], m->fa_va, hp->n_ff, m->x_va, d, n,
                                 w[LW_DOWN_B].va ? &w[LW_DOWN_B] : NULL, true)))
            return st;
        /* outside a graph each layer is submitted once recorded: the GPU runs l while the host
         * records l + 1 (H200 batch step: ~200 us of recording before the first launch ran) */
        if (!s->graph && (st = hcq_queue_submit(m->q)))
            return st;
    }
    if (!want_logits)
        return HCQ_OK;
    if (kv && kv->logits_va) { /* a batch step: the logits of every token (or of the last rows) */
        const uint32_t nl = kv->n_logits && kv->n_logits < n ? kv->n_logits : n;
        if ((st = norm(m, m->x_va + 4ull * (n - nl) * d, m->xn_va, nl, &m->gw[GW_OUT_NORM],
                       &m->gw[GW_OUT_NORM_B])) ||
            (m->tag = "head matmul",
             st = matmul(m, &m->gw[GW_OUTPUT], m->xn_va, d, kv->logits_va, hp->n_vocab, nl, NULL, false)) ||
            (hp->final_softcap > 0 && (st = act(m, K_LLM_ACT_SOFTCAP, kv->logits_va, 0, kv->logits_va,
                                                nl * hp->n_vocab, hp->final_softcap))) ||
            !kv->ids_va)
            return st;
        const struct k_llm_argmax_params amp = {
            .x_va = kv->logits_va, .out_va = kv->ids_va, .n_rows = nl, .n = hp->n_vocab};
        return launch(m, PROG_ARGMAX_ROWS, nl, 1, &amp, sizeof amp, NULL, 0);
    }
    /* 8. final norm of the last token, output head -> logits (host-visible) */
    uint64_t last = m->x_va + 4ull * (n - 1) * d;
    if ((st = norm(m, last, m->xn_va, 1, &m->gw[GW_OUT_NORM], &m->gw[GW_OUT_NORM_B])))
        return st;
    if ((st = matmul(m, &m->gw[GW_OUTPUT], m->xn_va, d, hcq_buf_va(m->logbuf), hp->n_vocab, 1, NULL, false)))
        return st;
    if (hp->final_softcap > 0 && (st = act(m, K_LLM_ACT_SOFTCAP, hcq_buf_va(m->logbuf), 0,
                                           hcq_buf_va(m->logbuf), hp->n_vocab, hp->final_softcap)))
        return st; /* Gemma 2 */
    return s->sample ? llm_smp_record(m, hcq_buf_va(m->logbuf)) : HCQ_OK;
}
