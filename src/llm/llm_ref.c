/* SPDX-License-Identifier: MIT */
/*
 * llm_ref.c - the reference forward pass: plain C over weights dequantized to f32, sums
 * in double, one token at a time, written from the model math and independent of the
 * kernels and their twins. The oracle of the device tests (small models only: every
 * weight is held as f32). Layer: llm.
 */
#include "llm_model_priv.h"

#include "util_log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rtensor {
    float *f; /* dequantized [ne1][ne0], NULL if absent */
    uint32_t ne0, ne1;
};

struct llm_ref {
    struct llm_hparams hp;
    uint32_t n_ctx;
    struct rtensor gw[GW_COUNT];
    struct rtensor (*lw)[LW_COUNT];
    float *kc, *vc; /* [n_layer][n_ctx][kv_dim], values of f16 elements */
    float *x, *xn, *q, *k, *v, *att, *fa, *fb, *tmp;
};

static enum hcq_status
load_t(const struct llm_gguf *g, const char *name, uint64_t ne0, uint64_t ne1, bool needed,
       struct rtensor *rt)
{
    const struct llm_gguf_tensor *t;
    enum hcq_status st = llm_tensor_get(g, name, ne0, ne1, !needed, &t);
    if (st || !t)
        return st;
    rt->ne0 = (uint32_t)ne0;
    rt->ne1 = (uint32_t)ne1;
    if (!(rt->f = malloc(4 * ne0 * ne1)))
        return hcq_err(HCQ_ERR_NOMEM, "llm_ref_create: %s", name);
    return llm_dequantize(t->type, t->data, rt->f, ne0 * ne1);
}

enum hcq_status
llm_ref_create(const struct llm_gguf *g, uint32_t n_ctx, struct llm_ref **ref_out)
{
    enum hcq_status st;
    *ref_out = NULL;
    struct llm_ref *r = calloc(1, sizeof *r);
    if (!r)
        return hcq_err(HCQ_ERR_NOMEM, "llm_ref_create");
    if ((st = llm_hparams_read(g, &r->hp)))
        goto fail;
    const struct llm_hparams *hp = &r->hp;
    uint64_t d = hp->n_embd, kv = (uint64_t)hp->n_head_kv * hp->head_dim, ff = hp->n_ff, qn = hp->q_dim,
             hd = hp->head_dim;
    r->n_ctx = n_ctx;
    r->lw = calloc(hp->n_layer, sizeof *r->lw);
    if (!r->lw) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_ref_create: layers");
        goto fail;
    }
    const uint64_t gshape[GW_COUNT][2] = {
        [GW_TOK_EMBD] = {d, hp->n_vocab}, [GW_POS_EMBD] = {d, hp->n_ctx_train},
        [GW_OUT_NORM] = {d, 1},           [GW_OUT_NORM_B] = {d, 1},
        [GW_OUTPUT] = {d, hp->n_vocab},   [GW_ROPE_FREQS] = {hp->head_dim / 2, 1},
    };
    for (int w = 0; w < GW_COUNT; w++)
        if ((st = load_t(g, llm_gw_names[w], gshape[w][0], gshape[w][1],
                         llm_arch_needs_gw(hp->arch, (enum llm_gw)w), &r->gw[w])))
            goto fail;
    const uint64_t lshape[LW_COUNT][2] = {
        [LW_ATTN_NORM] = {d, 1},
        [LW_ATTN_NORM_B] = {d, 1},
        [LW_Q] = {d, qn},
        [LW_K] = {d, kv},
        [LW_V] = {d, kv},
        [LW_Q_B] = {qn, 1},
        [LW_K_B] = {kv, 1},
        [LW_V_B] = {kv, 1},
        [LW_Q_NORM] = {hd, 1},
        [LW_K_NORM] = {hd, 1},
        [LW_QKV] = {d, qn + 2 * kv},
        [LW_QKV_B] = {qn + 2 * kv, 1},
        [LW_O] = {qn, d},
        [LW_O_B] = {d, 1},
        [LW_FFN_NORM] = {d, 1},
        [LW_FFN_NORM_B] = {d, 1},
        [LW_GATE] = {d, ff},
        [LW_UP] = {d, hp->arch == LLM_ARCH_PHI3 ? 2 * ff : ff},
        [LW_UP_B] = {ff, 1},
        [LW_DOWN] = {ff, d},
        [LW_DOWN_B] = {d, 1},
        [LW_POST_ATTN_NORM] = {d, 1},
        [LW_POST_FFN_NORM] = {d, 1},
    };
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        for (int w = 0; w < LW_COUNT; w++) {
            char name[96];
            snprintf(name, sizeof name, "blk.%u.%s", l, llm_lw_names[w]);
            if ((st = load_t(g, name, lshape[w][0], lshape[w][1], llm_arch_needs_lw(hp->arch, (enum llm_lw)w),
                             &r->lw[l][w])))
                goto fail;
        }
    }
    r->kc = calloc((size_t)hp->n_layer * n_ctx * kv, 4);
    r->vc = calloc((size_t)hp->n_layer * n_ctx * kv, 4);
    r->x = malloc(4 * d);
    r->xn = malloc(4 * d);
    r->q = malloc(4 * (3 * d > qn ? 3 * d : qn));
    r->k = malloc(4 * (d > kv ? d : kv));
    r->v = malloc(4 * (d > kv ? d : kv));
    r->att = malloc(4 * qn);
    r->fa = malloc(4 * 2 * ff); /* (Phi-3: gate|up) */
    r->fb = malloc(4 * ff);
    r->tmp = malloc(4ull * (n_ctx > ff ? n_ctx : ff) + 4 * (3 * d > qn + 2 * kv ? 3 * d : qn + 2 * kv));
    if (!r->kc || !r->vc || !r->x || !r->xn || !r->q || !r->k || !r->v || !r->att || !r->fa || !r->fb ||
        !r->tmp) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_ref_create: state for context %u", n_ctx);
        goto fail;
    }
    *ref_out = r;
    return HCQ_OK;
fail:
    llm_ref_destroy(r);
    return st;
}

void
llm_ref_destroy(struct llm_ref *r)
{
    if (!r)
        return;
    for (int w = 0; w < GW_COUNT; w++)
        free(r->gw[w].f);
    if (r->lw)
        for (uint32_t l = 0; l < r->hp.n_layer; l++)
            for (int w = 0; w < LW_COUNT; w++)
                free(r->lw[l][w].f);
    free(r->lw);
    free(r->kc);
    free(r->vc);
    free(r->x);
    free(r->xn);
    free(r->q);
    free(r->k);
    free(r->v);
    free(r->att);
    free(r->fa);
    free(r->fb);
    free(r->tmp);
    free(r);
}

const struct llm_hparams *
llm_ref_hparams(const struct llm_ref *r)
{
    return &r->hp;
}

/* y[r] = (acc ? y[r] : 0) + W[r] . x + b[r] */
static void
ref_matvec(const struct rtensor *w, const float *x, float *y, const struct rtensor *b, bool acc)
{
    for (uint32_t r = 0; r < w->ne1; r++) {
        const float *row = w->f + (size_t)r * w->ne0;
        double s = 0;
        for (uint32_t j = 0; j < w->ne0; j++)
            s += (double)row[j] * x[j];
        if (b && b->f)
            s += b->f[r];
        y[r] = (float)((acc ? y[r] : 0) + s);
    }
}

static void
ref_norm(const struct llm_hparams *hp, const float *x, float *y, const struct rtensor *w,
         const struct rtensor *b)
{
    uint32_t d = hp->n_embd;
    double mean = 0, ss = 0;
    if (hp->arch == LLM_ARCH_GPT2) {
        for (uint32_t j = 0; j < d; j++)
            mean += x[j];
        mean /= d;
    }
    for (uint32_t j = 0; j < d; j++)
        ss += (x[j] - mean) * (x[j] - mean);
    double inv = 1.0 / sqrt(ss / d + hp->norm_eps);
    for (uint32_t j = 0; j < d; j++)
        y[j] = (float)((x[j] - mean) * inv * w->f[j] + (b && b->f ? b->f[j] : 0));
}

/* Rotate pairs (2j, 2j+1) of each head - (j, j + hd/2) where the file's rows are in that order
 * (rope_neox, Qwen2) - by pos * base^(-2j/hd) / freqs[j] * scale (linear scaling; 1: none). */
static void
ref_rope(const struct llm_ref *r, float *x, uint32_t n_heads, uint32_t pos, double base, double scale)
{
    uint32_t hd = r->hp.head_dim;
    for (uint32_t h = 0; h < n_heads; h++) {
        for (uint32_t j = 0; j < hd / 2; j++) {
            double theta = pos * pow(base, -2.0 * j / hd);
            if (r->hp.has_rope_freqs)
                theta /= r->gw[GW_ROPE_FREQS].f[j];
            theta *= scale;
            double c = cos(theta), s = sin(theta);
            float *p0 = x + h * hd + (r->hp.rope_neox ? j : 2 * j), *p1 = p0 + (r->hp.rope_neox ? hd / 2 : 1);
            double x0 = *p0, x1 = *p1;
            *p0 = (float)(x0 * c - x1 * s);
            *p1 = (float)(x0 * s + x1 * c);
        }
    }
}

/* Qwen3: each head of x (n_heads of hd) RMS-normalized with weight w before RoPE. */
static void
ref_head_norm(const struct llm_ref *r, float *x, uint32_t n_heads, const struct rtensor *w)
{
    const uint32_t hd = r->hp.head_dim;
    for (uint32_t h = 0; h < n_heads; h++) {
        float *p = x + (size_t)h * hd;
        double ss = 0;
        for (uint32_t e = 0; e < hd; e++)
            ss += (double)p[e] * p[e];
        const double inv = 1.0 / sqrt(ss / hd + r->hp.norm_eps);
        for (uint32_t e = 0; e < hd; e++)
            p[e] = (float)(p[e] * inv * w->f[e]);
    }
}

/* GELU, tanh form (GPT-2's FFN, Gemma's gate) */
static double
ref_gelu(double a)
{
    return 0.5 * a * (1 + tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
}

/* One token at position pos; logits when out != NULL. */
static void
ref_token(struct llm_ref *r, int32_t tok, uint32_t pos, float *logits)
{
    const struct llm_hparams *hp = &r->hp;
    const bool gpt2 = hp->arch == LLM_ARCH_GPT2;
    uint32_t d = hp->n_embd, hd = hp->head_dim, kv = hp->n_head_kv * hd, group = hp->n_head / hp->n_head_kv;
    memcpy(r->x, r->gw[GW_TOK_EMBD].f + (size_t)tok * d, 4ull * d);
    if (gpt2)
        for (uint32_t j = 0; j < d; j++)
            r->x[j] += r->gw[GW_POS_EMBD].f[(size_t)pos * d + j];
    const bool gemma = llm_arch_gemma(hp->arch);
    if (gemma) /* llama.cpp scales the looked-up row by sqrtf(n_embd) */
        for (uint32_t j = 0; j < d; j++)
            r->x[j] = (float)(r->x[j] * sqrt((double)d));
    /* llama.cpp scales Q by f_attention_scale (Gemma) or the scores by 1 / sqrt(head_dim) */
    const double scale = gemma ? (double)hp->attn_scale : 1.0 / sqrt((double)hd), cap = hp->attn_softcap;
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        struct rtensor *w = r->lw[l];
        const bool swa = llm_layer_swa(hp, l);
        /* the window: keys pos - n_swa + 1 .. pos (llama.cpp masks p1 - p0 >= n_swa) */
        const uint32_t t0 = swa && pos >= hp->n_swa ? pos - hp->n_swa + 1 : 0;
        float *kc = r->kc + (size_t)l * r->n_ctx * kv, *vc = r->vc + (size_t)l * r->n_ctx * kv;
        ref_norm(hp, r->x, r->xn, &w[LW_ATTN_NORM], &w[LW_ATTN_NORM_B]);
        const uint32_t qn = hp->q_dim;
        if (w[LW_QKV].f) { /* GPT-2, Phi-3: Q|K|V in one tensor */
            ref_matvec(&w[LW_QKV], r->xn, r->tmp, &w[LW_QKV_B], false);
            memcpy(r->q, r->tmp, 4ull * qn);
            memcpy(r->k, r->tmp + qn, 4ull * kv);
            memcpy(r->v, r->tmp + qn + kv, 4ull * kv);
        } else {
            ref_matvec(&w[LW_Q], r->xn, r->q, &w[LW_Q_B], false); /* (biases: Qwen2) */
            ref_matvec(&w[LW_K], r->xn, r->k, &w[LW_K_B], false);
            ref_matvec(&w[LW_V], r->xn, r->v, &w[LW_V_B], false);
        }
        if (!gpt2) {
            if (w[LW_Q_NORM].f) {
                ref_head_norm(r, r->q, hp->n_head, &w[LW_Q_NORM]);
                ref_head_norm(r, r->k, hp->n_head_kv, &w[LW_K_NORM]);
            }
            const double base = swa ? hp->rope_base_swa : hp->rope_base; /* Gemma's windowed layers */
            const double rs =
                swa || hp->rope_scale <= 0 ? 1.0 : hp->rope_scale; /* (Gemma 3: global layers) */
            ref_rope(r, r->q, hp->n_head, pos, base, rs);
            ref_rope(r, r->k, hp->n_head_kv, pos, base, rs);
        }
        /* the KV cache holds f16 elements (as the engine's, K_LLM_KV_B, and llama.cpp's
         * default): K and V rounded to nearest even on the way in */
        for (uint32_t e = 0; e < kv; e++) {
            kc[(size_t)pos * kv + e] = llm_f16_to_f32(llm_f32_to_f16(r->k[e]));
            vc[(size_t)pos * kv + e] = llm_f16_to_f32(llm_f32_to_f16(r->v[e]));
        }
        for (uint32_t h = 0; h < hp->n_head; h++) {
            const float *qh = r->q + h * hd;
            uint32_t g = h / group;
            double m = -1e300, z = 0;
            double *sc = (double *)malloc(sizeof(double) * (pos + 1));
            for (uint32_t t = t0; t <= pos; t++) {
                double s = 0;
                for (uint32_t e = 0; e < hd; e++)
                    s += (double)qh[e] * kc[(size_t)t * kv + g * hd + e];
                sc[t] = s * scale;
                if (cap > 0) /* Gemma 2's soft-cap */
                    sc[t] = cap * tanh(sc[t] / cap);
                m = fmax(m, sc[t]);
            }
            for (uint32_t t = t0; t <= pos; t++) {
                sc[t] = exp(sc[t] - m);
                z += sc[t];
            }
            for (uint32_t e = 0; e < hd; e++) {
                double acc = 0;
                for (uint32_t t = t0; t <= pos; t++)
                    acc += sc[t] * vc[(size_t)t * kv + g * hd + e];
                r->att[h * hd + e] = (float)(acc / z);
            }
            free(sc);
        }
        if (gemma) { /* RMSNorm of the attention's output, then the residual add */
            ref_matvec(&w[LW_O], r->att, r->tmp, NULL, false);
            ref_norm(hp, r->tmp, r->xn, &w[LW_POST_ATTN_NORM], NULL);
            for (uint32_t j = 0; j < d; j++)
                r->x[j] += r->xn[j];
        } else {
            ref_matvec(&w[LW_O], r->att, r->x, &w[LW_O_B], true);
        }
        ref_norm(hp, r->x, r->xn, &w[LW_FFN_NORM], &w[LW_FFN_NORM_B]);
        if (gpt2) {
            ref_matvec(&w[LW_UP], r->xn, r->fa, &w[LW_UP_B], false);
            for (uint32_t j = 0; j < hp->n_ff; j++) {
                double a = r->fa[j];
                r->fa[j] = (float)ref_gelu(a);
            }
        } else {
            if (hp->arch == LLM_ARCH_PHI3) { /* gate|up in one tensor: silu(first half) * second half */
                ref_matvec(&w[LW_UP], r->xn, r->fa, NULL, false);
                memcpy(r->fb, r->fa + hp->n_ff, 4ull * hp->n_ff);
            } else {
                ref_matvec(&w[LW_GATE], r->xn, r->fa, NULL, false);
                ref_matvec(&w[LW_UP], r->xn, r->fb, NULL, false);
            }
            for (uint32_t j = 0; j < hp->n_ff; j++) {
                double a = r->fa[j];
                r->fa[j] = gemma ? (float)(ref_gelu(a) * r->fb[j]) : (float)(a / (1 + exp(-a)) * r->fb[j]);
            }
        }
        if (gemma) { /* RMSNorm of the FFN's output, then the residual add */
            ref_matvec(&w[LW_DOWN], r->fa, r->tmp, NULL, false);
            ref_norm(hp, r->tmp, r->xn, &w[LW_POST_FFN_NORM], NULL);
            for (uint32_t j = 0; j < d; j++)
                r->x[j] += r->xn[j];
        } else {
            ref_matvec(&w[LW_DOWN], r->fa, r->x, &w[LW_DOWN_B], true);
        }
    }
    if (!logits)
        return;
    ref_norm(hp, r->x, r->xn, &r->gw[GW_OUT_NORM], &r->gw[GW_OUT_NORM_B]);
    ref_matvec(r->gw[GW_OUTPUT].f ? &r->gw[GW_OUTPUT] : &r->gw[GW_TOK_EMBD], r->xn, logits, NULL, false);
    if (hp->final_softcap > 0) /* Gemma 2 */
        for (uint32_t i = 0; i < hp->n_vocab; i++)
            logits[i] = (float)(hp->final_softcap * tanh(logits[i] / (double)hp->final_softcap));
}

enum hcq_status
llm_ref_eval(struct llm_ref *r, const int32_t *tokens, uint32_t n, uint32_t pos, float *logits_out)
{
    if (!n || pos + n > r->n_ctx)
        return hcq_err(HCQ_ERR_INVALID, "llm_ref_eval: %u tokens at %u (context %u)", n, pos, r->n_ctx);
    if (r->hp.arch == LLM_ARCH_GPT2 && pos + n > r->hp.n_ctx_train)
        return hcq_err(HCQ_ERR_INVALID, "llm_ref_eval: position %u past the learned %u", pos + n,
                       r->hp.n_ctx_train);
    for (uint32_t i = 0; i < n; i++) {
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= r->hp.n_vocab)
            return hcq_err(HCQ_ERR_INVALID, "llm_ref_eval: token %d (vocabulary %u)", tokens[i],
                           r->hp.n_vocab);
        ref_token(r, tokens[i], pos + i, i + 1 == n ? logits_out : NULL);
    }
    return HCQ_OK;
}
