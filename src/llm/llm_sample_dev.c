/* SPDX-License-Identifier: MIT */
/*
 * llm_sample_dev.c - sampling on the model's device: a sampler bound to a model
 * (llm_model_sampler_*, include/llm.h) whose kernels (k_llm_sample_part + k_llm_sample_pick,
 * src/kernels/k_llm_sample.h) run after the output head, in the decode graph
 * (llm_model_gen_submit in llm_model_run.c records them there), and leave the chosen id in
 * device memory, where the next step's embedding reads it; the host reads {id, status}, 8
 * bytes, per token. The penalty window, its counts and the draw counter live in the
 * device's state buffer; the host writes them only when it resets or adds prompt tokens.
 * Layer: llm.
 */
#include "llm_model_int.h"

#include "k_llm_sample.h"
#include "util_log.h"

#include <stdlib.h>
#include <string.h>

struct llm_smp {
    struct llm_sampler_params sp;
    struct hcq_program *part, *pick;
    struct hcq_buf *state; /* device: K_LLM_SMP_ST_* words, ring, counts */
    struct hcq_buf *scr;   /* device: slice partials */
    struct hcq_buf *out;   /* host-visible {id, status} */
    uint32_t n_slice;
    uint64_t part_B;
};

void
llm_smp_free(struct llm_smp *s)
{
    if (!s)
        return;
    hcq_buf_free(s->state);
    hcq_buf_free(s->scr);
    hcq_buf_free(s->out);
    hcq_program_destroy(s->part);
    hcq_program_destroy(s->pick);
    free(s);
}

enum hcq_status
llm_smp_set_id(struct llm_smp *s, int32_t id)
{
    return hcq_buf_write(s->state, 4ull * K_LLM_SMP_ST_ID, &id, sizeof id);
}

struct hcq_buf *
llm_smp_out(const struct llm_smp *s)
{
    return s->out;
}

uint64_t
llm_smp_state_va(const struct llm_smp *s)
{
    return hcq_buf_va(s->state) + 4ull * K_LLM_SMP_ST_ID;
}

enum hcq_status
llm_model_sampler_set(struct llm_model *m, const struct llm_sampler_params *p)
{
    enum hcq_status st;
    const uint32_t n = m->hp.n_vocab;
    if (p->top_p <= 0 || p->top_p > 1 || p->min_p < 0 || p->min_p > 1 || p->repeat_penalty <= 0 ||
        p->repeat_last_n > (1u << 20))
        return hcq_err(HCQ_ERR_INVALID,
                       "llm_model_sampler_set: top_p %g min_p %g repeat_penalty %g repeat_last_n %u",
                       p->top_p, p->min_p, p->repeat_penalty, p->repeat_last_n);
    if (!k_llm_smp_slices(n))
        return hcq_err(HCQ_ERR_UNSUPPORTED, "llm_model_sampler_set: vocabulary of %u ids (at most %u)", n,
                       K_LLM_SMP_SLICES * K_LLM_SMP_SLICE_MAX);
    struct llm_smp *s = calloc(1, sizeof *s);
    if (!s)
        return hcq_err(HCQ_ERR_NOMEM, "llm_model_sampler_set");
    s->sp = *p;
    s->n_slice = k_llm_smp_slices(n);
    s->part_B = (uint64_t)s->n_slice * sizeof(struct k_llm_smp_part);
    /* the graphs hold the parameters: new ones are recorded with the new sampler */
    for (int i = 0; i < K_LLM_AD_KINDS; i++) {
        hcq_graph_destroy(m->graph_s[i]);
        m->graph_s[i] = NULL;
    }
    if ((st = hcq_program_load(m->dev, "k_llm_sample_part", &s->part)) ||
        (st = hcq_program_load(m->dev, "k_llm_sample_pick", &s->pick)) ||
        (st = hcq_buf_alloc(m->dev, k_llm_smp_state_bytes(p->repeat_last_n, n), HCQ_MEM_DEVICE, &s->state)) ||
        (st = hcq_buf_alloc(m->dev, s->part_B, HCQ_MEM_DEVICE, &s->scr)) ||
        (st = hcq_buf_alloc(m->dev, 8, HCQ_MEM_HOST, &s->out))) {
        llm_smp_free(s);
        return st;
    }
    llm_smp_free(m->smp);
    m->smp = s;
    return llm_model_sampler_reset(m, NULL, 0);
}

enum hcq_status
llm_model_sampler_reset(struct llm_model *m, const int32_t *ids, uint32_t n)
{
    struct llm_smp *s = m->smp;
    if (!s)
        return hcq_err(HCQ_ERR_INVALID, "llm_model_sampler_reset: no sampler (llm_model_sampler_set)");
    const uint64_t bytes = k_llm_smp_state_bytes(s->sp.repeat_last_n, m->hp.n_vocab);
    uint32_t *w = calloc(1, bytes);
    if (!w)
        return hcq_err(HCQ_ERR_NOMEM, "llm_model_sampler_reset");
    enum hcq_status st = hcq_buf_write(s->state, 0, w, bytes);
    free(w);
    return st ? st : llm_model_sampler_accept(m, ids, n);
}

enum hcq_status
llm_model_sampler_accept(struct llm_model *m, const int32_t *ids, uint32_t n)
{
    struct llm_smp *s = m->smp;
    enum hcq_status st;
    if (!s)
        return hcq_err(HCQ_ERR_INVALID, "llm_model_sampler_accept: no sampler (llm_model_sampler_set)");
    const uint32_t ln = s->sp.repeat_last_n, nv = m->hp.n_vocab;
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] < 0 || (uint32_t)ids[i] >= nv)
            return hcq_err(HCQ_ERR_INVALID, "llm_model_sampler_accept: token %d (vocabulary %u)", ids[i], nv);
    if (!ln || !n)
        return HCQ_OK;
    /* the device's window moves only in the kernel: the queue is idle between calls here */
    const uint64_t bytes = k_llm_smp_state_bytes(ln, nv);
    uint32_t *w = malloc(bytes);
    if (!w)
        return hcq_err(HCQ_ERR_NOMEM, "llm_model_sampler_accept");
    if (!(st = hcq_queue_finish(m->q, HCQ_TIMEOUT_DEFAULT_NS)) &&
        !(st = hcq_buf_read(s->state, 0, w, bytes))) {
        llm_smp_window_add(w, ln, nv, ids, n);
        st = hcq_buf_write(s->state, 0, w, bytes);
    }
    free(w);
    return st;
}

void
llm_smp_window_add(uint32_t *w, uint32_t last_n, uint32_t n_vocab, const int32_t *ids, uint32_t n)
{
    if (!last_n)
        return;
    uint32_t *ring = w + K_LLM_SMP_ST_RING, *cnt = ring + last_n;
    uint32_t hn = w[K_LLM_SMP_ST_HIST_N], hp = w[K_LLM_SMP_ST_HIST_POS] % last_n;
    for (uint32_t i = 0; i < n; i++) {
        if (hn >= last_n && ring[hp] < n_vocab && cnt[ring[hp]])
            cnt[ring[hp]]--;
        ring[hp] = (uint32_t)ids[i];
        cnt[ids[i]]++;
        hp = (hp + 1) % last_n;
        hn = hn < last_n ? hn + 1 : last_n;
    }
    w[K_LLM_SMP_ST_HIST_N] = hn;
    w[K_LLM_SMP_ST_HIST_POS] = hp;
}

struct k_llm_sample_params
llm_smp_params(const struct llm_sampler_params *sp, uint32_t n_vocab, uint32_t n_slice)
{
    return (struct k_llm_sample_params){
        .seed = sp->seed,
        .n_vocab = n_vocab,
        .n_slice = n_slice,
        .temp = sp->temp,
        .top_k = sp->top_k,
        .top_p = sp->top_p,
        .min_p = sp->min_p,
        .repeat_penalty = sp->repeat_penalty,
        .presence_penalty = sp->presence_penalty,
        .frequency_penalty = sp->frequency_penalty,
        .last_n = sp->repeat_last_n,
    };
}

enum hcq_status
llm_smp_take(const uint32_t r[2], uint32_t n_vocab, const char *who, int32_t *id_out)
{
    if (r[1] & K_LLM_SMP_S_NONFINITE)
        return hcq_err(HCQ_ERR_FORMAT,
                       "%s: logit %u of %u is NaN or infinite: the model computes non-finite values (broken "
                       "weights or hyper-parameters)",
                       who, r[0], n_vocab);
    if (r[0] >= n_vocab || (r[1] & ~(K_LLM_SMP_S_EXACT | K_LLM_SMP_S_TOPK)))
        return hcq_err(HCQ_ERR_DRIVER, "%s: the sampler left id %u status %#x", who, r[0], r[1]);
    *id_out = (int32_t)r[0];
    return HCQ_OK;
}

/* Record the two sampling launches on logits at logits_va (graph or direct). */
enum hcq_status
llm_smp_record(struct llm_model *m, uint64_t logits_va)
{
    struct llm_smp *s = m->smp;
    struct k_llm_sample_params p = llm_smp_params(&s->sp, m->hp.n_vocab, s->n_slice);
    p.logits_va = logits_va;
    p.state_va = hcq_buf_va(s->state);
    p.part_va = hcq_buf_va(s->scr);
    p.out_va = hcq_buf_va(s->out);
    struct hcq_launch l = {
        .prog = s->part,
        .grid = {s->n_slice, 1, 1},
        .block = {K_LLM_SMP_PART_THREADS, 1, 1},
        .args = &p,
        .args_B = sizeof p,
        .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
        /* both wait in the kernel (griddepcontrol.wait), so each may be scheduled while its
         * predecessor drains */
        .flags = HCQ_LAUNCH_DEP_WAIT,
    };
    m->tag = "sample part";
    enum hcq_status st = llm_launch_prog(m, &l);
    if (st)
        return st;
    l.prog = s->pick;
    l.grid[0] = 1;
    l.block[0] = K_LLM_SMP_PICK_THREADS;
    m->tag = "sample pick";
    return llm_launch_prog(m, &l);
}

/* The {id, status} the last pick left: HCQ_ERR_FORMAT naming a non-finite logit. */
enum hcq_status
llm_smp_result(struct llm_model *m, int32_t *id_out)
{
    uint32_t r[2];
    const uint32_t *o = hcq_buf_map(m->smp->out);
    enum hcq_status st;
    if (o)
        memcpy(r, o, sizeof r);
    else if ((st = hcq_buf_read(m->smp->out, 0, r, sizeof r)))
        return st;
    return llm_smp_take(r, m->hp.n_vocab, "llm_model_sample", id_out);
}

enum hcq_status
llm_model_sample(struct llm_model *m, int32_t *id_out)
{
    enum hcq_status st;
    if (!m->smp)
        return hcq_err(HCQ_ERR_INVALID, "llm_model_sample: no sampler (llm_model_sampler_set)");
    static const uint32_t poison[2] = {0xffffffffu, 0xffffffffu};
    /* the logits of the last llm_model_eval are in the host-visible buffer */
    if ((st = hcq_buf_write(m->smp->out, 0, poison, sizeof poison)) ||
        (st = llm_smp_record(m, hcq_buf_va(m->logbuf))) ||
        (st = hcq_queue_signal(m->q, m->done, ++m->tick)) || (st = hcq_queue_submit(m->q)) ||
        (st = hcq_signal_wait(m->done, m->tick, HCQ_TIMEOUT_DEFAULT_NS)))
        return st;
    return llm_smp_result(m, id_out);
}
