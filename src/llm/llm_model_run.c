/* SPDX-License-Identifier: MIT */
/*
 * llm_model_run.c - running recorded steps of a model (llm_model.c records them): the decode
 * step's graphs (one per decode attention kernel, k_llm_ad_kind; with and without the device
 * sampler; per cache) recorded on first use and replayed, evaluation of token batches with the
 * waits' bounds, and generation through the device sampler (llm_model_gen_submit / _wait).
 * Layer: llm.
 */
#include "llm_model_int.h"

#include "util_log.h" /* hcq_err */

#include <stdint.h>

/* Wait for the last submitted step of n tokens. The bound scales with the work so a hung
 * device is reported soon on small models while the cpu backend (twins, ~1 GB/s of weights
 * per token) still finishes a large prefill: 10 s + 20 ns per weight byte and token, <= 1 h. */
static enum hcq_status
wait_tick(struct llm_model *m, uint32_t n)
{
    uint64_t t = 10ull * 1000 * 1000 * 1000 + (uint64_t)n * (m->weights_B / 64 + 1) * 20 * 64;
    const uint64_t hour = 3600ull * 1000 * 1000 * 1000;
    return hcq_signal_wait(m->done, m->tick, t < hour ? t : hour);
}

/* Record the decode step once as a graph into *out (attn_kind: the decode attention kernel,
 * k_llm_ad_kind; sample adds the device sampler; kv: another cache, NULL the model's own); *out stays
 * NULL and m->graph_failed set (direct launches) where unsupported. The graphs take their
 * variables in the same order, so m->var_* name them in any. */
static enum hcq_status
build_graph(struct llm_model *m, uint32_t attn_kind, bool sample, const struct llm_kv_view *kv,
            struct hcq_graph **out)
{
    struct step s = {.graph = true, .attn_kind = attn_kind, .sample = sample, .kv = kv};
    enum hcq_status st = hcq_graph_begin(m->q);
    if (st == HCQ_ERR_UNSUPPORTED) {
        m->graph_failed = true;
        return HCQ_OK;
    }
    if (st)
        return st;
    if ((st = hcq_graph_var(m->q, &s.var_tok)) || (st = hcq_graph_var(m->q, &s.var_pos)) ||
        (st = hcq_graph_var(m->q, &m->var_tick)) || (st = llm_model_record_step(m, 1, 0, true, &s)) ||
        (st = hcq_queue_signal_var(m->q, m->done, m->var_tick, 0))) {
        struct hcq_graph *g = NULL;
        if (hcq_graph_end(m->q, &g) == HCQ_OK)
            hcq_graph_destroy(g);
        return st;
    }
    m->var_tok = s.var_tok;
    m->var_pos = s.var_pos;
    st = hcq_graph_end(m->q, out);
    if (st == HCQ_ERR_UNSUPPORTED) {
        m->graph_failed = true;
        return HCQ_OK;
    }
    return st;
}

/* One decode step of token at pos replayed from gs[its attention kind, k_llm_ad_kind] (the graphs of cache
 * kv, NULL: the model's own; recorded on first use) and waited for. *ran false where graphs are off or
 * unsupported: the caller launches directly. */
static enum hcq_status
replay_step(struct llm_model *m, struct hcq_graph **gs, const struct llm_kv_view *kv, int32_t token,
            uint32_t pos, bool *ran)
{
    enum hcq_status st;
    *ran = false;
    if (!m->use_graph || m->graph_failed)
        return HCQ_OK;
    const uint32_t kind = llm_model_attn_kind(m, pos);
    if (!gs[kind] && (st = build_graph(m, kind, false, kv, &gs[kind])))
        return st;
    if (!gs[kind])
        return HCQ_OK;
    *ran = true;
    if ((st = hcq_graph_set(gs[kind], m->var_tok, (uint64_t)token)) ||
        (st = hcq_graph_set(gs[kind], m->var_pos, pos)) ||
        (st = hcq_graph_set(gs[kind], m->var_tick, ++m->tick)) || (st = hcq_graph_replay(gs[kind])))
        return st;
    return wait_tick(m, 1);
}

enum hcq_status
llm_model_slot_step(struct llm_model *m, struct hcq_graph **gs, const struct llm_kv_view *kv, int32_t token,
                    uint32_t pos)
{
    bool ran;
    enum hcq_status st = replay_step(m, gs, kv, token, pos, &ran);
    if (st || ran)
        return st;
    const struct step s = {.kv = kv};
    if ((st = hcq_buf_write(m->tokbuf, 0, &token, 4)))
        return st;
    return llm_model_step_run(m, 1, pos, true, &s);
}

enum hcq_status
llm_model_eval(struct llm_model *m, const int32_t *tokens, uint32_t n, uint32_t pos)
{
    enum hcq_status st;
    if (!n || pos + n > m->n_ctx || pos + n < pos)
        return hcq_err(HCQ_ERR_INVALID, "llm_model_eval: %u tokens at %u (context %u)", n, pos, m->n_ctx);
    for (uint32_t i = 0; i < n; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= m->hp.n_vocab)
            return hcq_err(HCQ_ERR_INVALID, "llm_model_eval: token %d (vocabulary %u)", tokens[i],
                           m->hp.n_vocab);
    if (n == 1) {
        bool ran;
        if ((st = replay_step(m, m->graph, NULL, tokens[0], pos, &ran)) || ran)
            return st;
    }
    struct step s = {.graph = false};
    for (uint32_t b = 0; b < n; b += m->n_batch) {
        uint32_t nb = n - b < m->n_batch ? n - b : m->n_batch;
        /* the previous batch has completed (waited below), so tokbuf is free to overwrite */
        if ((st = hcq_buf_write(m->tokbuf, 0, tokens + b, 4ull * nb)) ||
            (st = llm_model_record_step(m, nb, pos + b, b + nb == n, &s)) ||
            (st = hcq_queue_signal(m->q, m->done, ++m->tick)) || (st = hcq_queue_submit(m->q)) ||
            (st = wait_tick(m, nb)))
            return st;
    }
    return HCQ_OK;
}

enum hcq_status
llm_model_step_run(struct llm_model *m, uint32_t n, uint32_t pos, bool want_logits, const struct step *s)
{
    enum hcq_status st;
    if (!n || n > m->n_batch)
        return hcq_err(HCQ_ERR_INVALID, "llm step: %u tokens (batch %u)", n, m->n_batch);
    if ((st = llm_model_record_step(m, n, pos, want_logits, s)) ||
        (s->after && (st = s->after(s->after_ctx))) || (st = hcq_queue_signal(m->q, m->done, ++m->tick)) ||
        (st = hcq_queue_submit(m->q)))
        return st;
    return wait_tick(m, n);
}

/* ==== Generation with the device sampler ==== */

enum hcq_status
llm_model_gen_submit(struct llm_model *m, uint32_t pos)
{
    enum hcq_status st;
    if (!m->smp)
        return hcq_err(HCQ_ERR_INVALID, "llm_model_gen_submit: no sampler (llm_model_sampler_set)");
    if (pos >= m->n_ctx)
        return hcq_err(HCQ_ERR_INVALID, "llm_model_gen_submit: position %u (context %u)", pos, m->n_ctx);
    static const uint32_t poison[2] = {0xffffffffu, 0xffffffffu};
    /* one step in flight: the caller waited for the previous one (llm_model_gen_wait) */
    if ((st = hcq_buf_write(llm_smp_out(m->smp), 0, poison, sizeof poison)))
        return st;
    if (m->use_graph && !m->graph_failed) {
        const uint32_t kind = llm_model_attn_kind(m, pos);
        struct hcq_graph **gp = &m->graph_s[kind];
        if (!*gp && (st = build_graph(m, kind, true, NULL, gp)))
            return st;
        if (*gp) {
            if ((st = hcq_graph_set(*gp, m->var_pos, pos)) ||
                (st = hcq_graph_set(*gp, m->var_tick, ++m->tick)))
                return st;
            return hcq_graph_replay(*gp);
        }
    }
    struct step s = {.graph = false, .sample = true};
    if ((st = llm_model_record_step(m, 1, pos, true, &s)) ||
        (st = hcq_queue_signal(m->q, m->done, ++m->tick)))
        return st;
    return hcq_queue_submit(m->q);
}

enum hcq_status
llm_model_gen_wait(struct llm_model *m, int32_t *id_out)
{
    enum hcq_status st = wait_tick(m, 1);
    return st ? st : llm_smp_result(m, id_out);
}
