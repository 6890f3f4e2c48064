/* SPDX-License-Identifier: MIT */
/*
 * llm_batch.c - batched decode (include/llm.h, "Batched decode"): up to n_seq sequences over one
 * loaded model, each with a KV slot of n_ctx positions in a cache of its own
 * ([n_layer][2][n_seq][n_ctx][kv_dim], f16), stepped together: one forward pass per step for
 * every listed sequence, so the weights are read once for all of them.
 * A step runs the model's per-op forward pass (llm_model.c llm_model_record_step) over n rows, with the
 * tokens' {position, slot} pairs in device memory (k_llm_rope_kv stores each token's K and V in its
 * slot at its position, k_llm_attn attends each token over its own slot) and the logits of every
 * row into a [n_seq][n_vocab] device buffer; every matmul of a step runs on tensor cores
 * (llm_prefill.c: k_llm_gemm_sk up to 64 rows), the attention is k_llm_attn_rows (a block per KV
 * head and token). Prefill of one sequence is
 * the model's prefill with the slot as its cache (the tiled prefill attention), in chunks of
 * n_batch. The batch asks the model for an f16 copy of its matrices (llm_pg_cache_f16: 2 bytes a
 * weight, e.g. 2.5 GB for a 1B model), which the model's own prefill then reads too. Sampling: when every
 * stepped sequence samples greedily without penalties, the picks are made on the device
 * (k_llm_sample_argmax_rows); otherwise every row through the device sampler (k_llm_sample_part_rows +
 * k_llm_sample_pick_rows, queued in the step's submission: each slot's window, counts and draw counter
 * in a device state of its own, the same picks as its host llm_sampler would make); only the ids cross
 * to the host. Where the device sampler does not load (a vocabulary above its 262144 ids), the rows'
 * logits are read back and each slot's llm_sampler picks on the host (0.5 MB a row at 128k ids: a
 * 1B model's 64-sequence step took 33 ms a token so on H200, temperature 0.8). One thread
 * per batch; the model's own single-sequence state is left as it was, but its activation buffers are shared,
 * so calls on the model and its batches do not interleave. Layer: llm.
 */
#include "llm_model_int.h"

#include "k_llm_sample.h"
#include "util_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct llm_batch {
    struct llm_model *m;
    uint32_t n_seq, n_ctx, kv_dim;
    uint64_t slot_B, layer_B;
    struct hcq_buf *kv;            /* [n_layer][2][n_seq][n_ctx][kv_dim] f16 */
    struct hcq_buf *tokpos;        /* int32 {pos, slot}[n_seq] (device) */
    struct hcq_buf *logits;        /* f32 [n_seq][n_vocab] (device) */
    struct hcq_buf *ids;           /* int32 [n_seq] greedy picks (host-visible) */
    float *lg_host;                /* [n_seq][n_vocab]: rows read back for host sampling */
    uint32_t *pos;                 /* [n_seq] tokens in each slot's cache */
    bool *used;                    /* [n_seq] */
    struct llm_sampler **smp;      /* [n_seq] per-slot sampler (greedy until set) */
    struct llm_sampler_params *sp; /* [n_seq] its parameters */
    uint32_t rows;                 /* rows of tokpos / tp / tok: max(n_seq, the model's n_batch) */
    int32_t *tp;                   /* host staging of tokpos */
    int32_t *tok;                  /* ... and of a step's tokens (the rows that run) */
    struct hcq_graph **g1;         /* [n_seq][K_LLM_AD_KINDS]: each slot's fused one-sequence step graphs */
    /* the device sampler (NULL programs: the host samples) */
    struct hcq_program *smp_part, *smp_pick;
    struct hcq_buf **smp_state;            /* [n_seq]: each slot's K_LLM_SMP_ST_* words, ring, counts */
    uint32_t *smp_cap;                     /* [n_seq]: the window (last_n) its state holds */
    struct hcq_buf *smp_scr;               /* [n_seq] rows: slice partials */
    struct hcq_buf *smp_rows;              /* k_llm_sample_params [n_seq] of the launch */
    struct hcq_buf *smp_out;               /* host-visible {id, status} [n_seq] */
    struct k_llm_sample_params *smp_stage; /* host staging of smp_rows */
    uint32_t smp_n_slice, smp_n;
    uint64_t smp_part_B, smp_lg_va, smp_lg_stride; /* partials a row; the queued rows' logits */
    const uint32_t *smp_seq;                       /* the queued rows' slots (smp_queue) */
    uint32_t *smp_q;                               /* [rows]: a step's or pass's rows' slots */
};

void
llm_batch_params_default(struct llm_batch_params *p)
{
    p->n_seq = 8;
    p->n_ctx = 0;
}

void
llm_batch_destroy(struct llm_batch *b)
{
    if (!b)
        return;
    hcq_buf_free(b->kv);
    hcq_buf_free(b->tokpos);
    hcq_buf_free(b->logits);
    hcq_buf_free(b->ids);
    free(b->lg_host);
    for (uint32_t i = 0; b->smp_state && i < b->n_seq; i++)
        hcq_buf_free(b->smp_state[i]);
    free(b->smp_state);
    free(b->smp_cap);
    free(b->smp_stage);
    free(b->smp_q);
    hcq_buf_free(b->smp_scr);
    hcq_buf_free(b->smp_rows);
    hcq_buf_free(b->smp_out);
    hcq_program_destroy(b->smp_part);
    hcq_program_destroy(b->smp_pick);
    free(b->sp);
    for (uint32_t i = 0; b->smp && i < b->n_seq; i++)
        llm_sampler_destroy(b->smp[i]);
    free(b->smp);
    free(b->pos);
    free(b->used);
    free(b->tp);
    free(b->tok);
    for (uint32_t i = 0; b->g1 && i < K_LLM_AD_KINDS * b->n_seq; i++)
        hcq_graph_destroy(b->g1[i]);
    free(b->g1);
    free(b);
}

/* Slot i's device state: a window of last_n tokens holding hist (its last last_n), no draws; the
 * state grows when last_n is above what it holds. Nothing to do without the device sampler. */
static enum hcq_status
smp_state_set(struct llm_batch *b, uint32_t i, uint32_t last_n, const int32_t *hist, uint32_t n_hist)
{
    if (!b->smp_part)
        return HCQ_OK;
    const uint32_t V = b->m->hp.n_vocab;
    const uint64_t bytes = k_llm_smp_state_bytes(last_n, V);
    enum hcq_status st;
    if (!b->smp_state[i] || b->smp_cap[i] < last_n) {
        hcq_buf_free(b->smp_state[i]);
        b->smp_state[i] = NULL;
        if ((st = hcq_buf_alloc(b->m->dev, bytes, HCQ_MEM_DEVICE, &b->smp_state[i])))
            return st;
        b->smp_cap[i] = last_n;
    }
    uint32_t *w = calloc(1, bytes);
    if (!w)
        return hcq_err(HCQ_ERR_NOMEM, "llm_batch: sampler state: out of host memory");
    llm_smp_window_add(w, last_n, V, hist, n_hist);
    st = hcq_buf_write(b->smp_state[i], 0, w, bytes);
    free(w);
    return st;
}

/* Slot i samples with p from now on: a fresh sampler (empty window, no draws), p kept to tell
 * whether its picks can be made on the device. */
static enum hcq_status
slot_bind(struct llm_batch *b, uint32_t i, const struct llm_sampler_params *p, const int32_t *hist,
          uint32_t n_hist)
{
    struct llm_sampler *s = NULL;
    enum hcq_status st = llm_sampler_create(p, b->m->hp.n_vocab, &s);
    if (!st)
        st = smp_state_set(b, i, p->repeat_last_n, hist, n_hist);
    if (st) {
        llm_sampler_destroy(s);
        return st;
    }
    llm_sampler_destroy(b->smp[i]);
    b->smp[i] = s, b->sp[i] = *p;
    for (uint32_t k = 0; k < n_hist; k++)
        llm_sampler_accept(s, hist[k]);
    return HCQ_OK;
}

enum hcq_status
llm_batch_create(struct llm_model *m, const struct llm_batch_params *p, struct llm_batch **b_out)
{
    enum hcq_status st;
    if (!m || !p || !b_out)
        return hcq_err(HCQ_ERR_INVALID, "llm_batch_create: NULL argument");
    *b_out = NULL;
    const struct llm_hparams *hp = &m->hp;
    if (hp->arch == LLM_ARCH_GPT2)
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "llm_batch_create: gpt2 (learned position embeddings) is not supported in a batch");
    if (!p->n_seq || p->n_seq > LLM_BATCH_MAX_SEQ)
        return hcq_err(HCQ_ERR_INVALID, "llm_batch_create: n_seq %u (1..%u)", p->n_seq, LLM_BATCH_MAX_SEQ);
    if (p->n_seq > m->n_batch)
        return hcq_err(HCQ_ERR_INVALID,
                       "llm_batch_create: n_seq %u is above the model's batch of %u rows (load it with "
                       "llm_model_params.n_batch >= n_seq)",
                       p->n_seq, m->n_batch);
    const uint32_t n_ctx = p->n_ctx ? p->n_ctx : m->n_ctx;
    if (n_ctx > m->n_ctx)
        return hcq_err(HCQ_ERR_INVALID, "llm_batch_create: n_ctx %u is above the model's %u", n_ctx,
                       m->n_ctx);
    struct llm_batch *b = calloc(1, sizeof *b);
    if (!b)
        return hcq_err(HCQ_ERR_NOMEM, "llm_batch_create: out of host memory");
    b->m = m;
    b->n_seq = p->n_seq;
    b->n_ctx = n_ctx;
    b->kv_dim = hp->n_head_kv * hp->head_dim;
    b->slot_B = (uint64_t)K_LLM_KV_B * n_ctx * b->kv_dim;
    b->layer_B = b->slot_B * p->n_seq;
    const uint64_t kv_B = 2 * b->layer_B * hp->n_layer, lg_B = 4ull * p->n_seq * hp->n_vocab;
    /* (+ the device sampler's states and partials: ~0.55 MB a slot at 128k ids) */
    const uint64_t smp_B =
        (uint64_t)p->n_seq * (k_llm_smp_state_bytes(64, hp->n_vocab) +
                              k_llm_smp_slices(hp->n_vocab) * sizeof(struct k_llm_smp_part));
    /* the device memory first, before anything is allocated */
    struct hcq_mem_stats ms;
    if (hcq_device_mem_stats(m->dev, &ms) == HCQ_OK && ms.driver_free_B &&
        kv_B + lg_B + smp_B > ms.driver_free_B) {
        st = hcq_err(HCQ_ERR_NOMEM,
                     "llm_batch_create: %u sequences x %u positions need %.2f GiB of KV cache (+ %.2f GiB of "
                     "logits and sampler state), the device has %.2f GiB free",
                     p->n_seq, n_ctx, kv_B / 1073741824.0, (lg_B + smp_B) / 1073741824.0,
                     ms.driver_free_B / 1073741824.0);
        goto fail;
    }
    b->pos = calloc(p->n_seq, sizeof *b->pos);
    b->used = calloc(p->n_seq, sizeof *b->used);
    b->smp = calloc(p->n_seq, sizeof *b->smp);
    /* a step's rows, or a packed prefill pass of up to n_batch rows (llm_batch_prefill) */
    b->rows = m->n_batch > p->n_seq ? m->n_batch : p->n_seq;
    b->tp = calloc(2ull * b->rows, sizeof *b->tp);
    b->tok = calloc(b->rows, sizeof *b->tok);
    b->sp = calloc(p->n_seq, sizeof *b->sp);
    b->g1 = calloc((size_t)K_LLM_AD_KINDS * p->n_seq, sizeof *b->g1);
    b->smp_q = calloc(b->rows, sizeof *b->smp_q);
    b->lg_host = malloc(lg_B);
    if (!b->pos || !b->used || !b->smp || !b->tp || !b->tok || !b->sp || !b->g1 || !b->lg_host || !b->smp_q) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_batch_create: out of host memory");
        goto fail;
    }
    if ((st = hcq_buf_alloc(m->dev, kv_B, HCQ_MEM_DEVICE, &b->kv)) ||
        (st = hcq_buf_alloc(m->dev, 8ull * b->rows, HCQ_MEM_DEVICE, &b->tokpos)) ||
        (st = hcq_buf_alloc(m->dev, lg_B, HCQ_MEM_DEVICE, &b->logits)) ||
        (st = hcq_buf_alloc(m->dev, 4ull * p->n_seq, HCQ_MEM_HOST, &b->ids)))
        goto fail;
    /* the weights in f16 once (a step's matmuls then read them instead of dequantizing each one
     * per step: H200 1B Q4_K_M, 64 sequences, 6.4 of a 7.8 ms step); without the memory for it
     * the steps dequantize as before */
    if ((st = llm_pg_cache_f16(m)))
        HCQ_LOG_WARN("llm_batch_create: the weights stay quantized, dequantized every step: %s",
                     hcq_last_error());
    /* the device sampler: a state per slot (slot_bind), slice partials per row */
    b->smp_n_slice = k_llm_smp_slices(hp->n_vocab);
    b->smp_part_B = (uint64_t)b->smp_n_slice * sizeof(struct k_llm_smp_part);
    if (b->smp_n_slice && hcq_program_load(m->dev, "k_llm_sample_part_rows", &b->smp_part) == HCQ_OK &&
        hcq_program_load(m->dev, "k_llm_sample_pick_rows", &b->smp_pick) == HCQ_OK) {
        b->smp_state = calloc(p->n_seq, sizeof *b->smp_state);
        b->smp_cap = calloc(p->n_seq, sizeof *b->smp_cap);
        b->smp_stage = calloc(p->n_seq, sizeof *b->smp_stage);
        if (!b->smp_state || !b->smp_cap || !b->smp_stage) {
            st = hcq_err(HCQ_ERR_NOMEM, "llm_batch_create: out of host memory");
            goto fail;
        }
        if ((st = hcq_buf_alloc(m->dev, b->smp_part_B * p->n_seq, HCQ_MEM_DEVICE, &b->smp_scr)) ||
            (st = hcq_buf_alloc(m->dev, sizeof(struct k_llm_sample_params) * p->n_seq, HCQ_MEM_DEVICE,
                                &b->smp_rows)) ||
            (st = hcq_buf_alloc(m->dev, 8ull * p->n_seq, HCQ_MEM_HOST, &b->smp_out)))
            goto fail;
    } else {
        hcq_program_destroy(b->smp_part);
        hcq_program_destroy(b->smp_pick);
        b->smp_part = b->smp_pick = NULL;
    }
    struct llm_sampler_params d;
    llm_sampler_params_default(&d);
    for (uint32_t i = 0; i < p->n_seq; i++)
        if ((st = slot_bind(b, i, &d, NULL, 0)))
            goto fail;
    *b_out = b;
    return HCQ_OK;
fail:
    llm_batch_destroy(b);
    return st;
}

uint32_t
llm_batch_n_seq(const struct llm_batch *b)
{
    return b->n_seq;
}

uint32_t
llm_batch_n_ctx(const struct llm_batch *b)
{
    return b->n_ctx;
}

/* A sampler whose pick is the logits' argmax: no temperature, no penalties. */
static bool
greedy(const struct llm_sampler_params *p)
{
    return p->temp <= 0.0f && (p->repeat_penalty == 1.0f || !p->repeat_last_n) &&
           p->presence_penalty == 0.0f && p->frequency_penalty == 0.0f;
}

enum hcq_status
llm_batch_seq_add(struct llm_batch *b, uint32_t *seq_out)
{
    for (uint32_t i = 0; i < b->n_seq; i++)
        if (!b->used[i]) {
            /* a new sequence starts greedy: the one left by the slot's last sequence, emptied */
            struct llm_sampler_params d;
            llm_sampler_params_default(&d);
            enum hcq_status st = HCQ_OK;
            if (greedy(&b->sp[i]))
                llm_sampler_reset(b->smp[i]);
            else if ((st = slot_bind(b, i, &d, NULL, 0)))
                return st;
            b->used[i] = true;
            b->pos[i] = 0;
            *seq_out = i;
            return HCQ_OK;
        }
    return hcq_err(HCQ_ERR_NOMEM, "llm_batch_seq_add: all %u slots are taken", b->n_seq);
}

void
llm_batch_seq_remove(struct llm_batch *b, uint32_t seq)
{
    if (b && seq < b->n_seq)
        b->used[seq] = false, b->pos[seq] = 0;
}

uint32_t
llm_batch_seq_pos(const struct llm_batch *b, uint32_t seq)
{
    return seq < b->n_seq ? b->pos[seq] : 0;
}

static enum hcq_status
seq_check(const struct llm_batch *b, const char *fn, uint32_t seq)
{
    if (seq >= b->n_seq || !b->used[seq])
        return hcq_err(HCQ_ERR_INVALID, "%s: sequence %u is not in the batch (slots 0..%u, taken by seq_add)",
                       fn, seq, b->n_seq - 1);
    return HCQ_OK;
}

static enum hcq_status
tokens_check(const struct llm_batch *b, const char *fn, const int32_t *tokens, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= b->m->hp.n_vocab)
            return hcq_err(HCQ_ERR_INVALID, "%s: token %d (vocabulary %u)", fn, tokens[i], b->m->hp.n_vocab);
    return HCQ_OK;
}

enum hcq_status
llm_batch_seq_sampler(struct llm_batch *b, uint32_t seq, const struct llm_sampler_params *p,
                      const int32_t *hist, uint32_t n_hist)
{
    enum hcq_status st;
    if ((st = seq_check(b, "llm_batch_seq_sampler", seq)))
        return st;
    if (!p || (n_hist && !hist))
        return hcq_err(HCQ_ERR_INVALID, "llm_batch_seq_sampler: NULL argument");
    if ((st = tokens_check(b, "llm_batch_seq_sampler", hist, n_hist)))
        return st;
    return slot_bind(b, seq, p, hist, n_hist);
}

/* The cache of slot seq alone (a sequence's prefill, its fused one-sequence step). */
static struct llm_kv_view
slot_view(const struct llm_batch *b, uint32_t seq)
{
    return (struct llm_kv_view){.va = hcq_buf_va(b->kv) + seq * b->slot_B,
                                .layer_B = b->layer_B,
                                .slot_B = b->slot_B,
                                .n_ctx = b->n_ctx};
}

/* Every slot, the rows' {pos, slot} in tokpos, logits of the last n_logits rows (0: all) into the
 * batch's logits, greedy picks into ids when dev_pick. */
static struct llm_kv_view
rows_view(const struct llm_batch *b, bool dev_pick, uint32_t n_logits)
{
    return (struct llm_kv_view){.va = hcq_buf_va(b->kv),
                                .layer_B = b->layer_B,
                                .slot_B = b->slot_B,
                                .n_ctx = b->n_ctx,
                                .tok_va = hcq_buf_va(b->tokpos),
                                .logits_va = hcq_buf_va(b->logits),
                                .ids_va = dev_pick ? hcq_buf_va(b->ids) : 0,
                                .n_logits = n_logits};
}

/* The rows the next smp_queue samples: n rows of logits (row r at lg_va + r * stride_B, slot
 * seqs[r]). */
static void
smp_rows(struct llm_batch *b, uint64_t lg_va, uint64_t stride_B, const uint32_t *seqs, uint32_t n)
{
    b->smp_lg_va = lg_va, b->smp_lg_stride = stride_B, b->smp_seq = seqs, b->smp_n = n;
}

/* The device sampler over the rows of smp_rows: each row's parameters from its slot, the two
 * launches queued on the model's queue (the caller submits; an llm_model_step_run hook or
 * smp_run). */
static enum hcq_status
smp_queue(void *ctx)
{
    struct llm_batch *b = ctx;
    struct llm_model *m = b->m;
    const uint32_t n = b->smp_n;
    uint32_t poison[2 * LLM_BATCH_MAX_SEQ];
    for (uint32_t r = 0; r < n; r++) {
        const uint32_t q = b->smp_seq[r];
        struct k_llm_sample_params *p = &b->smp_stage[r];
        *p = llm_smp_params(&b->sp[q], m->hp.n_vocab, b->smp_n_slice);
        p->logits_va = b->smp_lg_va + r * b->smp_lg_stride;
        p->state_va = hcq_buf_va(b->smp_state[q]);
        p->part_va = hcq_buf_va(b->smp_scr) + r * b->smp_part_B;
        p->out_va = hcq_buf_va(b->smp_out) + 8ull * r;
    }
    /* the rows' {id, status} poisoned, the parameters written: one write each */
    memset(poison, 0xff, 8ull * n);
    enum hcq_status st;
    if ((st = hcq_buf_write(b->smp_out, 0, poison, 8ull * n)) ||
        (st = hcq_buf_write(b->smp_rows, 0, b->smp_stage, sizeof *b->smp_stage * n)))
        return st;
    const struct k_llm_sample_rows_params rp = {.rows_va = hcq_buf_va(b->smp_rows), .n_rows = n};
    struct hcq_launch l = {
        .prog = b->smp_part,
        .grid = {b->smp_n_slice, n, 1},
        .block = {K_LLM_SMP_PART_THREADS, 1, 1},
        .args = &rp,
        .args_B = sizeof rp,
        .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
    };
    m->tag = "sample part";
    if ((st = llm_launch_prog(m, &l)))
        return st;
    l.prog = b->smp_pick;
    l.grid[0] = 1;
    l.block[0] = K_LLM_SMP_PICK_THREADS;
    m->tag = "sample pick";
    return llm_launch_prog(m, &l);
}

/* Row r's device pick into *id_out (the kernel accepted it into the slot's device window). */
static enum hcq_status
smp_take(struct llm_batch *b, const char *fn, uint32_t r, uint32_t seq, int32_t *id_out)
{
    uint32_t w[2];
    char who[96];
    enum hcq_status st = hcq_buf_read(b->smp_out, 8ull * r, w, sizeof w);
    snprintf(who, sizeof who, "%s, sequence %u", fn, seq);
    if (st || (st = llm_smp_take(w, b->m->hp.n_vocab, who, id_out)))
        return st;
    llm_sampler_accept(b->smp[seq], *id_out); /* (the host window kept too) */
    return HCQ_OK;
}

/* The device sampler over logits already in device memory (a step that ran alone): queued,
 * submitted and waited for. */
static enum hcq_status
smp_run(struct llm_batch *b, uint64_t lg_va, const uint32_t *seqs, uint32_t n)
{
    smp_rows(b, lg_va, 0, seqs, n);
    enum hcq_status st = smp_queue(b);
    return st ? st : hcq_queue_finish(b->m->q, HCQ_TIMEOUT_DEFAULT_NS);
}

/* Sample from logits with the slot's sampler (accepting the id into its window). */
static enum hcq_status
sample_row(struct llm_batch *b, uint32_t seq, const float *logits, int32_t *id_out)
{
    enum hcq_status st = llm_logits_check(logits, b->m->hp.n_vocab);
    if (st)
        return st;
    *id_out = llm_sampler_sample(b->smp[seq], logits);
    llm_sampler_accept(b->smp[seq], *id_out);
    return HCQ_OK;
}

enum hcq_status
llm_batch_seq_prefill(struct llm_batch *b, uint32_t seq, const int32_t *tokens, uint32_t n, float *logits_out,
                      int32_t *id_out)
{
    enum hcq_status st;
    struct llm_model *m = b->m;
    if ((st = seq_check(b, "llm_batch_seq_prefill", seq)))
        return st;
    if (!n || !tokens)
        return hcq_err(HCQ_ERR_INVALID, "llm_batch_seq_prefill: no tokens");
    if ((st = tokens_check(b, "llm_batch_seq_prefill", tokens, n)))
        return st;
    if ((uint64_t)b->pos[seq] + n > b->n_ctx)
        return hcq_err(HCQ_ERR_NOMEM,
                       "llm_batch_seq_prefill: sequence %u holds %u of %u positions, %u more do not fit", seq,
                       b->pos[seq], b->n_ctx, n);
    const struct llm_kv_view kv = slot_view(b, seq);
    const struct step s = {.kv = &kv};
    for (uint32_t o = 0; o < n; o += m->n_batch) {
        const uint32_t nb = n - o < m->n_batch ? n - o : m->n_batch;
        if ((st = hcq_buf_write(m->tokbuf, 0, tokens + o, 4ull * nb)) ||
            (st = llm_model_step_run(m, nb, b->pos[seq] + o, o + nb == n, &s)))
            return st;
    }
    b->pos[seq] += n;
    const float *lg = hcq_buf_map(m->logbuf);
    if (logits_out)
        memcpy(logits_out, lg, 4ull * m->hp.n_vocab);
    if (id_out && b->smp_part) {
        if ((st = smp_run(b, hcq_buf_va(m->logbuf), &seq, 1)))
            return st;
        return smp_take(b, "llm_batch_seq_prefill", 0, seq, id_out);
    }
    return id_out ? sample_row(b, seq, lg, id_out) : HCQ_OK;
}

/* How a step's rows are picked: all greedy (k_llm_sample_argmax_rows into ids), the device
 * sampler (smp_out), or on the host from the rows' logits. */
enum pick { PICK_ARGMAX, PICK_DEV, PICK_HOST };

static enum pick
pick_mode(const struct llm_batch *b, bool all_greedy)
{
    return all_greedy ? PICK_ARGMAX : b->smp_part ? PICK_DEV : PICK_HOST;
}

/* Sequence seq's next token, row r of the step: its argmax pick (< 0: the index of a NaN/Inf
 * logit), its device sample, or sampled on the host from its logits row; accepted into the
 * slot's window either way. */
static enum hcq_status
take_pick(struct llm_batch *b, const char *fn, uint32_t seq, enum pick mode, uint32_t r, int32_t pick,
          const float *row, int32_t *id_out)
{
    if (mode == PICK_HOST)
        return sample_row(b, seq, row, id_out);
    if (mode == PICK_DEV)
        return smp_take(b, fn, r, seq, id_out);
    if (pick < 0)
        return hcq_err(HCQ_ERR_FORMAT, "%s: logit %d of sequence %u is NaN or Inf (a broken model)", fn,
                       -1 - pick, seq);
    *id_out = pick;
    llm_sampler_accept(b->smp[seq], pick);
    return HCQ_OK;
}

/* Prompts of at most this many tokens share passes (k_llm_attn_rows: a block per token and KV
 * head, each over its own slot); longer ones prefill alone, where the tiled prefill attention
 * reads each K/V row once per block of queries rather than once per token. */
#define PACK_MAX 256u

/* One packed pass: rows [0, n_body) are prompt tokens that need no logits, rows n_body.. the last
 * token of each sequence in tail[] (their logits, in order, and the next token). */
static enum hcq_status
prefill_pass(struct llm_batch *b, uint32_t n_body, const uint32_t *tail, uint32_t n_tail,
             const uint32_t *seqs, float *logits_out, int32_t *ids_out)
{
    struct llm_model *m = b->m;
    const uint32_t V = m->hp.n_vocab, n = n_body + n_tail;
    bool all_greedy = true;
    for (uint32_t t = 0; t < n_tail; t++) {
        all_greedy = all_greedy && greedy(&b->sp[seqs[tail[t]]]);
        b->smp_q[t] = seqs[tail[t]];
    }
    const enum pick mode = pick_mode(b, all_greedy);
    const bool dev_pick = ids_out && mode == PICK_ARGMAX;
    const struct llm_kv_view kv = rows_view(b, dev_pick, n_tail);
    struct step s = {.kv = &kv};
    if (ids_out && n_tail && mode == PICK_DEV) { /* the tails' rows sampled in the pass's submission */
        smp_rows(b, hcq_buf_va(b->logits), 4ull * V, b->smp_q, n_tail);
        s.after = smp_queue, s.after_ctx = b;
    }
    enum hcq_status st;
    if ((st = hcq_buf_write(m->tokbuf, 0, b->tok, 4ull * n)) ||
        (st = hcq_buf_write(b->tokpos, 0, b->tp, 8ull * n)) ||
        (st = llm_model_step_run(m, n, 0, n_tail > 0, &s)))
        return st;
    if (!n_tail)
        return HCQ_OK;
    if ((logits_out || (ids_out && mode == PICK_HOST)) &&
        (st = hcq_buf_read(b->logits, 0, b->lg_host, 4ull * n_tail * V)))
        return st;
    const int32_t *picks = hcq_buf_map(b->ids);
    for (uint32_t t = 0; t < n_tail && !st; t++) {
        const uint32_t i = tail[t], q = seqs[i];
        const float *row = b->lg_host + (size_t)t * V;
        if (logits_out)
            memcpy(logits_out + (size_t)i * V, row, 4ull * V);
        if (ids_out)
            st = take_pick(b, "llm_batch_prefill", q, mode, t, picks[t], row, &ids_out[i]);
    }
    return st;
}

enum hcq_status
llm_batch_prefill(struct llm_batch *b, const uint32_t *seqs, const int32_t *const *tokens,
                  const uint32_t *n_tok, uint32_t n, float *logits_out, int32_t *ids_out)
{
    enum hcq_status st;
    struct llm_model *m = b->m;
    const uint32_t V = m->hp.n_vocab;
    if (!n || n > b->n_seq || !seqs || !tokens || !n_tok)
        return hcq_err(HCQ_ERR_INVALID, "llm_batch_prefill: %u sequences (1..%u)", n, b->n_seq);
    for (uint32_t i = 0; i < n; i++) {
        if ((st = seq_check(b, "llm_batch_prefill", seqs[i])))
            return st;
        for (uint32_t j = 0; j < i; j++)
            if (seqs[j] == seqs[i])
                return hcq_err(HCQ_ERR_INVALID, "llm_batch_prefill: sequence %u listed twice", seqs[i]);
        if (!n_tok[i] || !tokens[i])
            return hcq_err(HCQ_ERR_INVALID, "llm_batch_prefill: no tokens for sequence %u", seqs[i]);
        if ((st = tokens_check(b, "llm_batch_prefill", tokens[i], n_tok[i])))
            return st;
        if ((uint64_t)b->pos[seqs[i]] + n_tok[i] > b->n_ctx)
            return hcq_err(HCQ_ERR_NOMEM,
                           "llm_batch_prefill: sequence %u holds %u of %u positions, %u more do not fit",
                           seqs[i], b->pos[seqs[i]], b->n_ctx, n_tok[i]);
    }
    /* the long prompts alone */
    for (uint32_t i = 0; i < n; i++)
        if (n_tok[i] > PACK_MAX && (st = llm_batch_seq_prefill(b, seqs[i], tokens[i], n_tok[i],
                                                               logits_out ? logits_out + (size_t)i * V : NULL,
                                                               ids_out ? &ids_out[i] : NULL)))
            return st;
    /* the others packed into passes of up to n_batch rows, in order; a sequence's last token at the
     * end of the pass that holds it (the head runs on those rows only). The rows of one sequence
     * may be split over passes: each pass's K and V are in the slots before the next reads them. */
    uint32_t *done = calloc(2ull * n, sizeof *done), *tail = done + n;
    if (!done)
        return hcq_err(HCQ_ERR_NOMEM, "llm_batch_prefill: out of host memory");
    uint32_t i0 = 0;
    st = HCQ_OK;
    while (!st) {
        while (i0 < n && (n_tok[i0] > PACK_MAX || done[i0] == n_tok[i0]))
            i0++;
        if (i0 == n)
            break;
        uint32_t nb = 0, nt = 0;
        for (uint32_t i = i0; i < n && nb + nt < m->n_batch; i++) {
            if (n_tok[i] > PACK_MAX || done[i] == n_tok[i])
                continue;
            const uint32_t room = m->n_batch - nb - nt, left = n_tok[i] - done[i];
            const uint32_t take = left <= room ? left : room, body = left <= room ? take - 1 : take;
            for (uint32_t k = 0; k < body; k++, nb++) {
                b->tok[nb] = tokens[i][done[i] + k];
                b->tp[2 * nb] = (int32_t)(b->pos[seqs[i]] + done[i] + k);
                b->tp[2 * nb + 1] = (int32_t)seqs[i];
            }
            if (left <= room)
                tail[nt++] = i;
            done[i] += take;
        }
        /* the last tokens after the body, in tail order */
        for (uint32_t t = 0; t < nt; t++) {
            const uint32_t i = tail[t], r = nb + t;
            b->tok[r] = tokens[i][n_tok[i] - 1];
            b->tp[2 * r] = (int32_t)(b->pos[seqs[i]] + n_tok[i] - 1);
            b->tp[2 * r + 1] = (int32_t)seqs[i];
        }
        st = prefill_pass(b, nb, tail, nt, seqs, logits_out, ids_out);
    }
    for (uint32_t i = 0; i < n && !st; i++)
        if (n_tok[i] <= PACK_MAX)
            b->pos[seqs[i]] += n_tok[i];
    free(done);
    return st;
}

enum hcq_status
llm_batch_step(struct llm_batch *b, const uint32_t *seqs, const int32_t *tokens, uint32_t n,
               float *logits_out, int32_t *ids_out, enum hcq_status *st_out)
{
    enum hcq_status st;
    struct llm_model *m = b->m;
    const uint32_t V = m->hp.n_vocab;
    if (!n || n > b->n_seq || !seqs || !tokens)
        return hcq_err(HCQ_ERR_INVALID, "llm_batch_step: %u sequences (1..%u)", n, b->n_seq);
    if ((st = tokens_check(b, "llm_batch_step", tokens, n)))
        return st;
    for (uint32_t i = 0; i < n; i++) {
        if ((st = seq_check(b, "llm_batch_step", seqs[i])))
            return st;
        for (uint32_t j = 0; j < i; j++)
            if (seqs[j] == seqs[i])
                return hcq_err(HCQ_ERR_INVALID, "llm_batch_step: sequence %u listed twice", seqs[i]);
    }
    /* the rows that run: sequences with room for one more position, in order; whether every one
     * of them picks greedily (then on the device) */
    uint32_t na = 0;
    bool all_greedy = true;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t q = seqs[i];
        if (st_out)
            st_out[i] = b->pos[q] < b->n_ctx ? HCQ_OK : HCQ_ERR_NOMEM;
        if (b->pos[q] >= b->n_ctx)
            continue;
        all_greedy = all_greedy && greedy(&b->sp[q]);
        b->tp[2 * na] = (int32_t)b->pos[q];
        b->tp[2 * na + 1] = (int32_t)q;
        b->smp_q[na] = q;
        b->tok[na++] = tokens[i];
    }
    const enum pick mode = pick_mode(b, all_greedy);
    const bool dev_pick = mode == PICK_ARGMAX;
    const float *lg = b->lg_host;
    if (na == 1 && m->decode_fused) {
        /* one sequence: the model's own fused decode step over its slot, replayed from the slot's
         * graph (the step below runs the per-op kernels over the f16 copy of the weights: ~3x the
         * time at one row), the logits in the model's host buffer and the greedy pick in ids */
        const uint32_t q = (uint32_t)b->tp[1];
        struct llm_kv_view kv = slot_view(b, q);
        kv.ids_va = hcq_buf_va(b->ids);
        if ((st = llm_model_slot_step(m, &b->g1[K_LLM_AD_KINDS * q], &kv, b->tok[0], (uint32_t)b->tp[0])))
            return st;
        /* (the sampler after the graph: its own submission) */
        if (ids_out && mode == PICK_DEV && (st = smp_run(b, hcq_buf_va(m->logbuf), &q, 1)))
            return st;
        lg = hcq_buf_map(m->logbuf);
        na = 0;
    }
    if (na) {
        const struct llm_kv_view kv = rows_view(b, ids_out && dev_pick, 0);
        struct step s = {.kv = &kv};
        if (ids_out && mode == PICK_DEV) { /* the rows sampled in the step's submission */
            smp_rows(b, hcq_buf_va(b->logits), 4ull * V, b->smp_q, na);
            s.after = smp_queue, s.after_ctx = b;
        }
        if (!(st = hcq_buf_write(m->tokbuf, 0, b->tok, 4ull * na)) &&
            !(st = hcq_buf_write(b->tokpos, 0, b->tp, 8ull * na)))
            st = llm_model_step_run(m, na, 0, true, &s);
        /* the rows' logits to the host only when asked for or sampled there */
        if (!st && (logits_out || (ids_out && mode == PICK_HOST)))
            st = hcq_buf_read(b->logits, 0, b->lg_host, 4ull * na * V);
        if (st)
            return st;
    }
    const int32_t *picks = hcq_buf_map(b->ids);
    for (uint32_t i = 0, k = 0; i < n; i++) {
        const uint32_t q = seqs[i];
        if (b->pos[q] >= b->n_ctx) {
            if (ids_out)
                ids_out[i] = -1;
            continue;
        }
        const uint32_t r = k++;
        const float *row = lg + (size_t)r * V;
        b->pos[q]++;
        if (logits_out)
            memcpy(logits_out + (size_t)i * V, row, 4ull * V);
        if (!ids_out)
            continue;
        if ((st = take_pick(b, "llm_batch_step", q, mode, r, picks[r], row, &ids_out[i])))
            return st;
    }
    return HCQ_OK;
}

enum hcq_status
llm_batch_profile_step(struct llm_batch *b, const uint32_t *seqs, const int32_t *tokens, uint32_t n,
                       int32_t *ids_out, struct llm_prof_row *rows, uint32_t max_rows, uint32_t *n_rows,
                       double *step_us)
{
    struct prof *pf = NULL;
    *n_rows = 0;
    *step_us = 0;
    enum hcq_status st = llm_prof_begin(b->m, &pf);
    if (st)
        return st;
    st = llm_batch_step(b, seqs, tokens, n, NULL, ids_out, NULL);
    enum hcq_status st2 = llm_prof_end(b->m, pf, st ? NULL : rows, max_rows, n_rows, step_us);
    return st ? st : st2;
}
