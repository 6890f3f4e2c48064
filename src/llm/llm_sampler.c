/* SPDX-License-Identifier: MIT */
/*
 * llm_sampler.c - token sampling (greedy, temperature, top-k, top-p, min-p, repetition
 * penalty, presence/frequency penalties, seeded RNG) and chat templates (LLaMA-3, ChatML). Layer: llm.
 * Order of the filters as in common engines: penalties (repetition, then presence +
 * frequency) -> (greedy | top-k -> temperature softmax -> top-p -> min-p -> draw).
 * The device sampler (src/kernels/k_llm_sample.cu, twin src/ops/ops_llm_sample.c) follows
 * the same order and draws the same uniforms.
 */
#include "llm.h"

#include "util_log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cand {
    int32_t id;
    float logit;
    float p;
};

struct llm_sampler {
    struct llm_sampler_params p;
    uint32_t n_vocab;
    uint64_t draws;
    struct cand *cands; /* [n_vocab] */
    float *work;        /* [n_vocab] penalised logits */
    int32_t *hist;      /* ring of the last repeat_last_n tokens */
    uint32_t hist_n, hist_pos;
};

void
llm_sampler_params_default(struct llm_sampler_params *p)
{
    *p = (struct llm_sampler_params){.temp = 0,
                                     .top_k = 0,
                                     .top_p = 1.0f,
                                     .min_p = 0,
                                     .repeat_penalty = 1.0f,
                                     .repeat_last_n = 64,
                                     .seed = 0x5EED};
}

enum hcq_status
llm_sampler_create(const struct llm_sampler_params *p, uint32_t n_vocab, struct llm_sampler **s_out)
{
    *s_out = NULL;
    if (!n_vocab || p->top_p <= 0 || p->top_p > 1 || p->min_p < 0 || p->min_p > 1 || p->repeat_penalty <= 0 ||
        !isfinite(p->presence_penalty) || !isfinite(p->frequency_penalty))
        return hcq_err(
            HCQ_ERR_INVALID,
            "llm_sampler_create: n_vocab %u top_p %g min_p %g repeat_penalty %g presence_penalty %g "
            "frequency_penalty %g",
            n_vocab, p->top_p, p->min_p, p->repeat_penalty, p->presence_penalty, p->frequency_penalty);
    struct llm_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return hcq_err(HCQ_ERR_NOMEM, "llm_sampler_create");
    s->p = *p;
    s->n_vocab = n_vocab;
    s->cands = malloc(n_vocab * sizeof *s->cands);
    s->work = malloc(n_vocab * sizeof *s->work);
    s->hist = malloc((p->repeat_last_n ? p->repeat_last_n : 1) * sizeof *s->hist);
    if (!s->cands || !s->work || !s->hist) {
        llm_sampler_destroy(s);
        return hcq_err(HCQ_ERR_NOMEM, "llm_sampler_create: %u candidates", n_vocab);
    }
    llm_sampler_reset(s);
    *s_out = s;
    return HCQ_OK;
}

void
llm_sampler_destroy(struct llm_sampler *s)
{
    if (!s)
        return;
    free(s->cands);
    free(s->work);
    free(s->hist);
    free(s);
}

void
llm_sampler_reset(struct llm_sampler *s)
{
    s->draws = 0;
    s->hist_n = s->hist_pos = 0;
}

void
llm_sampler_accept(struct llm_sampler *s, int32_t id)
{
    if (!s->p.repeat_last_n)
        return;
    s->hist[s->hist_pos] = id;
    s->hist_pos = (s->hist_pos + 1) % s->p.repeat_last_n;
    if (s->hist_n < s->p.repeat_last_n)
        s->hist_n++;
}

/* splitmix64 of a counter: draw n needs no state but (seed, n), so a device can draw it */
float
llm_sample_uniform(uint64_t seed, uint64_t n)
{
    uint64_t z = (seed ^ 0x9E3779B97F4A7C15ull) + n * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((z >> 40) * (1.0 / 16777216.0));
}

static int
cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->logit != y->logit)
        return x->logit > y->logit ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Min-heap on the candidate order (root = the worst kept candidate). */
static void
heap_up(struct cand *h, uint32_t i)
{
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (cand_cmp(&h[i], &h[parent]) <= 0)
            break;
        struct cand t = h[i];
        h[i] = h[parent];
        h[parent] = t;
        i = parent;
    }
}

static void
heap_down(struct cand *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && cand_cmp(&h[l], &h[w]) > 0)
            w = l;
        if (r < n && cand_cmp(&h[r], &h[w]) > 0)
            w = r;
        if (w == i)
            return;
        struct cand t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

int32_t
llm_sampler_sample(struct llm_sampler *s, const float *logits)
{
    uint32_t n = s->n_vocab;
    memcpy(s->work, logits, n * sizeof *logits);
    /* penalties: each distinct recent token once, with its count c in the window */
    if (s->p.repeat_penalty != 1.0f || s->p.presence_penalty != 0 || s->p.frequency_penalty != 0) {
        for (uint32_t i = 0; i < s->hist_n; i++) {
            int32_t id = s->hist[i];
            bool seen = false;
            for (uint32_t j = 0; j < i && !seen; j++)
                seen = s->hist[j] == id;
            if (seen || id < 0 || (uint32_t)id >= n)
                continue;
            uint32_t c = 1;
            for (uint32_t j = i + 1; j < s->hist_n; j++)
                c += s->hist[j] == id;
            float *l = &s->work[id];
            if (s->p.repeat_penalty != 1.0f)
                *l = *l > 0 ? *l / s->p.repeat_penalty : *l * s->p.repeat_penalty;
            *l -= (float)c * s->p.frequency_penalty + s->p.presence_penalty;
        }
    }
    if (s->p.temp <= 0) {
        uint32_t best = 0;
        for (uint32_t i = 1; i < n; i++)
            if (s->work[i] > s->work[best])
                best = i;
        return (int32_t)best;
    }
    uint32_t k = s->p.top_k && s->p.top_k < n ? s->p.top_k : n;
    if (k < n) {
        /* top-k by a min-heap of k (O(n log k)): the usual k = 40 of 128k logits costs far
         * less than sorting them all */
        for (uint32_t i = 0; i < n; i++) {
            struct cand c = {(int32_t)i, s->work[i], 0};
            uint32_t h = i < k ? i : 0;
            if (i >= k) {
                if (cand_cmp(&c, &s->cands[0]) >= 0)
                    continue; /* not better than the worst kept */
                s->cands[0] = c;
                heap_down(s->cands, k, 0);
                continue;
            }
            s->cands[h] = c;
            heap_up(s->cands, h);
        }
        qsort(s->cands, k, sizeof *s->cands, cand_cmp);
    } else {
        for (uint32_t i = 0; i < n; i++)
            s->cands[i] = (struct cand){(int32_t)i, s->work[i], 0};
        qsort(s->cands, n, sizeof *s->cands, cand_cmp);
    }
    /* temperature softmax over the top k */
    double sum = 0;
    float mx = s->cands[0].logit;
    for (uint32_t i = 0; i < k; i++) {
        s->cands[i].p = expf((s->cands[i].logit - mx) / s->p.temp);
        sum += s->cands[i].p;
    }
    for (uint32_t i = 0; i < k; i++)
        s->cands[i].p = (float)(s->cands[i].p / sum);
    /* top-p: the smallest prefix with mass >= top_p */
    if (s->p.top_p < 1.0f) {
        double cum = 0;
        for (uint32_t i = 0; i < k; i++) {
            cum += s->cands[i].p;
            if (cum >= s->p.top_p) {
                k = i + 1;
                break;
            }
        }
    }
    /* min-p: drop candidates below min_p * p_max */
    if (s->p.min_p > 0) {
        float thr = s->p.min_p * s->cands[0].p;
        uint32_t kk = 1;
        while (kk < k && s->cands[kk].p >= thr)
            kk++;
        k = kk;
    }
    double mass = 0;
    for (uint32_t i = 0; i < k; i++)
        mass += s->cands[i].p;
    double r = llm_sample_uniform(s->p.seed, ++s->draws) * mass, acc = 0;
    for (uint32_t i = 0; i < k; i++) {
        acc += s->cands[i].p;
        if (r < acc)
            return s->cands[i].id;
    }
    return s->cands[k - 1].id;
}

/* ==== Chat templates ==== */

static bool
str_has(struct llm_str s, const char *needle)
{
    size_t n = strlen(needle);
    for (uint64_t i = 0; i + n <= s.len; i++)
        if (!memcmp(s.ptr + i, needle, n))
            return true;
    return false;
}

enum llm_chat_tmpl
llm_chat_detect(const struct llm_gguf *g)
{
    struct llm_str tmpl;
    if (!llm_gguf_get_str(g, "tokenizer.chat_template", &tmpl)) {
        if (str_has(tmpl, "<|start_header_id|>"))
            return LLM_CHAT_LLAMA3;
        if (str_has(tmpl, "<|im_start|>"))
            return LLM_CHAT_CHATML;
    }
    uint32_t et;
    uint64_t n;
    if (llm_gguf_get_arr(g, "tokenizer.ggml.tokens", &et, &n) || et != LLM_GGUF_STRING)
        return LLM_CHAT_NONE;
    for (uint64_t i = 0; i < n; i++) {
        struct llm_str s = llm_gguf_arr_str(g, "tokenizer.ggml.tokens", i);
        if (s.len == 19 && !memcmp(s.ptr, "<|start_header_id|>", 19))
            return LLM_CHAT_LLAMA3;
        if (s.len == 12 && !memcmp(s.ptr, "<|im_start|>", 12))
            return LLM_CHAT_CHATML;
    }
    return LLM_CHAT_NONE;
}

/* snprintf-style append */
static void
put(char *buf, size_t cap, size_t *n, const char *s)
{
    size_t l = strlen(s);
    if (*n < cap) {
        size_t c = cap - *n - 1 < l ? cap - *n - 1 : l;
        memcpy(buf + *n, s, c);
        buf[*n + c] = 0;
    }
    *n += l;
}

size_t
llm_chat_render(enum llm_chat_tmpl tmpl, const struct llm_chat_msg *msgs, size_t n, bool add_assistant,
                char *buf, size_t cap)
{
    size_t len = 0;
    if (cap)
        buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        switch (tmpl) {
        case LLM_CHAT_LLAMA3:
            put(buf, cap, &len, "<|start_header_id|>");
            put(buf, cap, &len, msgs[i].role);
            put(buf, cap, &len, "<|end_header_id|>\n\n");
            put(buf, cap, &len, msgs[i].content);
            put(buf, cap, &len, "<|eot_id|>");
            break;
        case LLM_CHAT_CHATML:
            put(buf, cap, &len, "<|im_start|>");
            put(buf, cap, &len, msgs[i].role);
            put(buf, cap, &len, "\n");
            put(buf, cap, &len, msgs[i].content);
            put(buf, cap, &len, "<|im_end|>\n");
            break;
        default:
            put(buf, cap, &len, msgs[i].content);
            put(buf, cap, &len, "\n");
            break;
        }
    }
    if (add_assistant) {
        if (tmpl == LLM_CHAT_LLAMA3)
            put(buf, cap, &len, "<|start_header_id|>assistant<|end_header_id|>\n\n");
        else if (tmpl == LLM_CHAT_CHATML)
            put(buf, cap, &len, "<|im_start|>assistant\n");
    }
    return len;
}

enum hcq_status
llm_logits_check(const float *logits, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(logits[i]))
            return hcq_err(
                HCQ_ERR_FORMAT,
                "llm_logits_check: logit %u of %u is %s: the model computes non-finite values (broken "
                "weights or hyper-parameters)",
                i, n,
                isnan(logits[i]) ? "NaN"
                : logits[i] > 0  ? "+Inf"
                                 : "-Inf");
    return HCQ_OK;
}
