/* SPDX-License-Identifier: MIT */
/*
 * ops_llm.c - CPU twins and descriptors of the LLM kernels (src/kernels/k_llm_ops.cu).
 * Layer: ops. Each twin computes the whole launch from the same parameter struct, with
 * device addresses translated (and bounds-checked) through HCQ_TWIN_PTR; a failed
 * translation flags a fault and returns. Math in f32 like the kernels (accumulation in
 * f32 too, so twin and GPU agree to rounding).
 */
#include "ops_llm.h"
#include "k_llm_params.h"
#include "k_llm_attn_decode.h"
#include "k_llm_quant.h"
#include "ops_half.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes of a row of n values of `type` (ggml numbering), 0 if unsupported. */
uint64_t
ops_llm_row_bytes(uint32_t type, uint64_t n)
{
    return k_llm_row_bytes(type, n);
}

/* Dequantize a row of n values into y (block decoders where there are blocks). */
void
ops_llm_dq_row(uint32_t type, const uint8_t *row, uint32_t n, float *y)
{
    switch (type) {
    case 2:
        for (uint32_t b = 0; b < n / 32; b++)
            k_llm_dq_q4_0((const struct llm_block_q4_0 *)row + b, y + 32 * b);
        return;
    case 3:
        for (uint32_t b = 0; b < n / 32; b++)
            k_llm_dq_q4_1((const struct llm_block_q4_1 *)row + b, y + 32 * b);
        return;
    case 6:
        for (uint32_t b = 0; b < n / 32; b++)
            k_llm_dq_q5_0((const struct llm_block_q5_0 *)row + b, y + 32 * b);
        return;
    case 7:
        for (uint32_t b = 0; b < n / 32; b++)
            k_llm_dq_q5_1((const struct llm_block_q5_1 *)row + b, y + 32 * b);
        return;
    case 8:
        for (uint32_t b = 0; b < n / 32; b++)
            k_llm_dq_q8_0((const struct llm_block_q8_0 *)row + b, y + 32 * b);
        return;
    case 12:
        for (uint32_t b = 0; b < n / 256; b++)
            for (int c = 0; c < 4; c++)
                k_llm_dq_q4_k_chunk((const struct llm_block_q4_k *)row + b, c, y + 256 * b + 64 * c);
        return;
    case 13:
        for (uint32_t b = 0; b < n / 256; b++)
            for (int c = 0; c < 4; c++)
                k_llm_dq_q5_k_chunk((const struct llm_block_q5_k *)row + b, c, y + 256 * b + 64 * c);
        return;
    case 14:
        for (uint32_t b = 0; b < n / 256; b++)
            for (int h = 0; h < 2; h++)
                k_llm_dq_q6_k_half((const struct llm_block_q6_k *)row + b, h, y + 256 * b + 128 * h);
        return;
    case K_LLM_T_Q4_0R:
    case K_LLM_T_Q8_0R:
    case K_LLM_T_Q6_KR:
    case K_LLM_T_Q5_KR:
    case K_LLM_T_Q4_KR: {
        /* gather each ggml block back from its parts, then the block decoder */
        uint8_t blk[sizeof(struct llm_block_q6_k)];
        uint32_t src[K_LLM_RP_MAX_PARTS], dst[K_LLM_RP_MAX_PARTS], len[K_LLM_RP_MAX_PARTS];
        uint32_t bv = k_llm_rp_block_values(type);
        for (uint32_t b = 0; b < n / bv; b++) {
            uint32_t np = k_llm_rp_parts(type, b, src, dst, len);
            for (uint32_t i = 0; i < np; i++)
                memcpy(blk + src[i], row + dst[i], len[i]);
            ops_llm_dq_row(type & ~K_LLM_RP, blk, bv, y + bv * b);
        }
        return;
    }
    default:
        for (uint32_t j = 0; j < n; j++)
            y[j] = k_llm_dq_at(type, row, j);
        return;
    }
}

static void
twin_embed(struct hcq_twin_launch *l)
{
    const struct k_llm_embed_params *p = l->params;
    uint64_t rb = ops_llm_row_bytes(p->type, p->d), prb = ops_llm_row_bytes(p->pos_type, p->d);
    if (!rb || !p->n_vocab || (p->pos_w_va && (!prb || !p->n_pos)))
        return;
    const uint8_t *w = HCQ_TWIN_PTR(l, p->w_va, rb * p->n_vocab);
    float *out = HCQ_TWIN_PTR(l, p->out_va, 4ull * p->d * p->n_tok);
    const int32_t *tok = p->tok_va ? HCQ_TWIN_PTR(l, p->tok_va, 4ull * p->n_tok) : NULL;
    const uint8_t *pw = p->pos_w_va ? HCQ_TWIN_PTR(l, p->pos_w_va, prb * p->n_pos) : NULL;
    if (!w || !out || (p->tok_va && !tok) || (p->pos_w_va && !pw))
        return;
    float *tmp = malloc(4ull * p->d);
    if (!tmp)
        return;
    for (uint32_t i = 0; i < p->n_tok; i++) {
        int32_t t = tok ? tok[i] : (int32_t)p->tok_imm;
        uint32_t row = t < 0 ? 0 : (uint32_t)t >= p->n_vocab ? p->n_vocab - 1 : (uint32_t)t;
        ops_llm_dq_row(p->type, w + rb * row, p->d, out + (size_t)i * p->d);
        if (pw) {
            uint32_t pos = p->pos0 + i < p->n_pos ? p->pos0 + i : p->n_pos - 1;
            ops_llm_dq_row(p->pos_type, pw + prb * pos, p->d, tmp);
            for (uint32_t j = 0; j < p->d; j++)
                out[(size_t)i * p->d + j] += tmp[j];
        }
    }
    free(tmp);
}

static void
twin_norm(struct hcq_twin_launch *l)
{
    const struct k_llm_norm_params *p = l->params;
    const float *x = HCQ_TWIN_PTR(l, p->x_va, 4ull * p->d * p->n);
    float *y = HCQ_TWIN_PTR(l, p->y_va, 4ull * p->d * p->n);
    const float *w = HCQ_TWIN_PTR(l, p->w_va, 4ull * p->d);
    const float *b = p->b_va ? HCQ_TWIN_PTR(l, p->b_va, 4ull * p->d) : NULL;
    uint16_t *y16 = p->y16_va ? HCQ_TWIN_PTR(l, p->y16_va, 2ull * p->d * p->n) : NULL;
    if (!x || !y || !w || (p->b_va && !b) || (p->y16_va && !y16))
        return;
    for (uint32_t i = 0; i < p->n; i++) {
        const float *xr = x + (size_t)i * p->d;
        float *yr = y + (size_t)i * p->d;
        float mean = 0;
        if (p->mode == 1) {
            for (uint32_t j = 0; j < p->d; j++)
                mean += xr[j];
            mean /= (float)p->d;
        }
        float ss = 0;
        for (uint32_t j = 0; j < p->d; j++)
            ss += (xr[j] - mean) * (xr[j] - mean);
        float inv = 1.0f / sqrtf(ss / (float)p->d + p->eps);
        for (uint32_t j = 0; j < p->d; j++) {
            yr[j] = (xr[j] - mean) * inv * w[j] + (b ? b[j] : 0.0f);
            if (y16)
                y16[(size_t)i * p->d + j] = ops_half_f32_to_f16(yr[j]);
        }
    }
}

static void
twin_head_norm(struct hcq_twin_launch *l)
{
    const struct k_llm_head_norm_params *p = l->params;
    const uint32_t heads = p->n_head + p->n_head_kv;
    if (!p->n_tok || !p->hd || (uint64_t)heads * p->hd > p->stride)
        return;
    float *x =
        HCQ_TWIN_PTR(l, p->x_va, 4ull * ((uint64_t)(p->n_tok - 1) * p->stride + (uint64_t)heads * p->hd));
    const float *wq = HCQ_TWIN_PTR(l, p->wq_va, 4ull * p->hd), *wk = HCQ_TWIN_PTR(l, p->wk_va, 4ull * p->hd);
    if (!x || !wq || !wk)
        return;
    for (uint32_t i = 0; i < p->n_tok; i++)
        for (uint32_t h = 0; h < heads; h++) {
            float *r = x + (size_t)i * p->stride + (size_t)h * p->hd;
            const float *w = h < p->n_head ? wq : wk;
            float ss = 0;
            for (uint32_t j = 0; j < p->hd; j++)
                ss += r[j] * r[j];
            const float inv = 1.0f / sqrtf(ss / (float)p->hd + p->eps);
            for (uint32_t j = 0; j < p->hd; j++)
                r[j] = r[j] * inv * w[j];
        }
}

/* Rows [r0, r1) of a matmul launch (the twin splits large launches across threads). */
struct mm_part {
    const struct k_llm_matmul_params *p;
    const uint8_t *w;
    const float *x, *b;
    float *y;
    uint64_t rb;
    uint32_t r0, r1;
};

static void *
mm_rows(void *arg)
{
    const struct mm_part *m = arg;
    const struct k_llm_matmul_params *p = m->p;
    float *row = malloc(4ull * p->k);
    if (!row)
        return (void *)1;
    for (uint32_t r = m->r0; r < m->r1; r++) {
        ops_llm_dq_row(p->type, m->w + m->rb * r, p->k, row);
        for (uint32_t i = 0; i < p->n; i++) {
            const float *xi = m->x + (size_t)i * p->x_stride;
            float s = 0;
            for (uint32_t j = 0; j < p->k; j++)
                s += row[j] * xi[j];
            float *yo = &m->y[(size_t)i * p->y_stride + r];
            *yo = (p->accumulate ? *yo : 0.0f) + s + (m->b ? m->b[r] : 0.0f);
        }
    }
    free(row);
    return NULL;
}

static void
twin_matmul(struct hcq_twin_launch *l)
{
    const struct k_llm_matmul_params *p = l->params;
    uint64_t rb = ops_llm_row_bytes(p->type, p->k);
    if (!rb || !p->n || !p->rows)
        return;
    const uint8_t *w = HCQ_TWIN_PTR(l, p->w_va, rb * p->rows);
    const float *x = HCQ_TWIN_PTR(l, p->x_va, 4ull * ((uint64_t)(p->n - 1) * p->x_stride + p->k));
    float *y = HCQ_TWIN_PTR(l, p->y_va, 4ull * ((uint64_t)(p->n - 1) * p->y_stride + p->rows));
    const float *b = p->b_va ? HCQ_TWIN_PTR(l, p->b_va, 4ull * p->rows) : NULL;
    if (!w || !x || !y || (p->b_va && !b))
        return;
    /* Large launches (> 4M multiply-adds) run on up to 16 threads; rows are independent
     * (each output element is written once), so the result does not depend on the split. */
    enum { MAX_T = 16 };
    uint64_t work = (uint64_t)p->rows * p->k * p->n;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t nt = work < (4u << 20) || cores < 2 ? 1 : (uint32_t)(cores < MAX_T ? cores : MAX_T);
    if (nt > p->rows)
        nt = p->rows;
    struct mm_part parts[MAX_T];
    pthread_t th[MAX_T];
    bool started[MAX_T] = {false};
    for (uint32_t t = 0; t < nt; t++) {
        parts[t] = (struct mm_part){p,
                                    w,
                                    x,
                                    b,
                                    y,
                                    rb,
                                    (uint32_t)((uint64_t)p->rows * t / nt),
                                    (uint32_t)((uint64_t)p->rows * (t + 1) / nt)};
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, mm_rows, &parts[t]) == 0;
    }
    mm_rows(&parts[0]);
    for (uint32_t t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            mm_rows(&parts[t]); /* could not start a thread: do its rows here */
    }
}

/* Batched decode ({pos, slot} per token, k_llm_params.h): whether every position is inside the
 * context; *el_out: the cache elements the launch may touch (through the last slot's rows). */
static bool
ops_llm_tok_span(const int32_t *tp, uint32_t n_tok, uint32_t n_ctx, uint64_t slot_stride, uint32_t kv_dim,
                 uint64_t *el_out)
{
    uint64_t last = 0;
    for (uint32_t i = 0; i < n_tok; i++) {
        if (tp[2 * i] < 0 || (uint32_t)tp[2 * i] >= n_ctx || tp[2 * i + 1] < 0)
            return false;
        const uint64_t s = (uint64_t)(uint32_t)tp[2 * i + 1];
        last = s > last ? s : last;
    }
    *el_out = last * slot_stride + (uint64_t)n_ctx * kv_dim;
    return true;
}

void
ops_llm_kv_store(uint16_t *dst, const float *src, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        dst[i] = ops_half_f32_to_f16(src[i]);
}

void
ops_llm_kv_widen(float *dst, const uint16_t *cache, uint32_t n_rows, uint32_t kv_dim, uint32_t g, uint32_t hd)
{
    for (uint32_t t = 0; t < n_rows; t++)
        for (uint32_t e = 0; e < hd; e++)
            dst[(size_t)t * hd + e] = ops_half_f16_to_f32(cache[(size_t)t * kv_dim + g * hd + e]);
}

static void
twin_rope_kv(struct hcq_twin_launch *l)
{
    const struct k_llm_rope_kv_params *p = l->params;
    uint32_t kv_dim = p->n_head_kv * p->hd, half = p->hd / 2;
    if (!p->n_tok)
        return;
    const int32_t *tp = p->tok_va ? HCQ_TWIN_PTR(l, p->tok_va, 8ull * p->n_tok) : NULL;
    uint64_t cache_el = 0;
    if (p->tok_va && !(tp && ops_llm_tok_span(tp, p->n_tok, p->n_ctx, p->slot_stride, kv_dim, &cache_el)))
        return;
    if (!tp && p->pos0 + p->n_tok > p->n_ctx)
        return;
    if (!tp)
        cache_el = (uint64_t)p->n_ctx * kv_dim;
    uint64_t span = 4ull * ((uint64_t)(p->n_tok - 1) * p->qkv_stride);
    float *q = HCQ_TWIN_PTR(l, p->q_va, span + 4ull * p->n_head * p->hd);
    float *k = HCQ_TWIN_PTR(l, p->k_va, span + 4ull * kv_dim);
    const float *v = HCQ_TWIN_PTR(l, p->v_va, span + 4ull * kv_dim);
    uint16_t *kc = HCQ_TWIN_PTR(l, p->kc_va, (uint64_t)K_LLM_KV_B * cache_el);
    uint16_t *vc = HCQ_TWIN_PTR(l, p->vc_va, (uint64_t)K_LLM_KV_B * cache_el);
    const float *freqs = p->freqs_va ? HCQ_TWIN_PTR(l, p->freqs_va, 4ull * half) : NULL;
    if (!q || !k || !v || !kc || !vc || (p->freqs_va && !freqs))
        return;
    for (uint32_t i = 0; i < p->n_tok; i++) {
        uint32_t pos = tp ? (uint32_t)tp[2 * i] : p->pos0 + i;
        const uint64_t slot0 = tp ? (uint64_t)(uint32_t)tp[2 * i + 1] * p->slot_stride : 0;
        float *qi = q + (size_t)i * p->qkv_stride, *ki = k + (size_t)i * p->qkv_stride;
        const float *vi = v + (size_t)i * p->qkv_stride;
        if (p->rope) {
            for (uint32_t head = 0; head < p->n_head + p->n_head_kv; head++) {
                float *x = head < p->n_head ? qi + head * p->hd : ki + (head - p->n_head) * p->hd;
                for (uint32_t j = 0; j < half; j++) {
                    float theta = (float)pos * powf(p->base, -2.0f * (float)j / (float)p->hd);
                    if (freqs)
                        theta /= freqs[j];
                    if (p->pos_scale > 0.0f)
                        theta *= p->pos_scale;
                    float c = cosf(theta), s = sinf(theta);
                    float x0 = x[2 * j], x1 = x[2 * j + 1];
                    x[2 * j] = x0 * c - x1 * s;
                    x[2 * j + 1] = x0 * s + x1 * c;
                }
            }
        }
        ops_llm_kv_store(kc + slot0 + (size_t)pos * kv_dim, ki, kv_dim);
        ops_llm_kv_store(vc + slot0 + (size_t)pos * kv_dim, vi, kv_dim);
    }
}

/* One query head of one token (qh) over the cache rows first..n_pos-1, widened to f32 in kw / vw
 * ([row][hd]): scores (soft-capped where softcap > 0), softmax, P V into o. sc: n_pos floats. */
static void
attn_head(const float *qh, const float *kw, const float *vw, uint32_t hd, uint32_t first, uint32_t n_pos,
          float scale, float softcap, float *sc, float *o)
{
    float m = -3.0e38f;
    for (uint32_t t = first; t < n_pos; t++) {
        const float *kt = kw + (size_t)t * hd;
        float s = 0;
        for (uint32_t e = 0; e < hd; e++)
            s += qh[e] * kt[e];
        sc[t] = softcap > 0 ? softcap * tanhf(s * scale / softcap) : s * scale;
        m = fmaxf(m, sc[t]);
    }
    float z = 0;
    for (uint32_t t = first; t < n_pos; t++) {
        sc[t] = expf(sc[t] - m);
        z += sc[t];
    }
    for (uint32_t e = 0; e < hd; e++) {
        float acc = 0;
        for (uint32_t t = first; t < n_pos; t++)
            acc += sc[t] * vw[(size_t)t * hd + e];
        o[e] = acc / z;
    }
}

/* k_llm_attn with tok_va: token i over rows 0..p_i of slot s_i (the last `window` of them where
 * set), each KV head's rows of the slot widened once per token. */
static void
twin_attn_batch(struct hcq_twin_launch *l, const struct k_llm_attn_params *p, uint32_t kv_dim)
{
    const int32_t *tp = HCQ_TWIN_PTR(l, p->tok_va, 8ull * p->n_tok);
    uint64_t cache_el = 0;
    if (!tp || !ops_llm_tok_span(tp, p->n_tok, p->n_ctx, p->slot_stride, kv_dim, &cache_el))
        return;
    const float *q =
        HCQ_TWIN_PTR(l, p->q_va, 4ull * ((uint64_t)(p->n_tok - 1) * p->q_stride + p->n_head * p->hd));
    const uint16_t *kc = HCQ_TWIN_PTR(l, p->kc_va, (uint64_t)K_LLM_KV_B * cache_el);
    const uint16_t *vc = HCQ_TWIN_PTR(l, p->vc_va, (uint64_t)K_LLM_KV_B * cache_el);
    float *out = HCQ_TWIN_PTR(l, p->out_va, 4ull * p->n_tok * p->n_head * p->hd);
    float *sc = malloc(4ull * p->n_ctx), *kw = malloc(4ull * p->n_ctx * p->hd),
          *vw = malloc(4ull * p->n_ctx * p->hd);
    const uint32_t group = p->n_head / p->n_head_kv;
    if (q && kc && vc && out && sc && kw && vw)
        for (uint32_t i = 0; i < p->n_tok; i++) {
            const uint64_t slot0 = (uint64_t)(uint32_t)tp[2 * i + 1] * p->slot_stride;
            const uint32_t n_pos = (uint32_t)tp[2 * i] + 1;
            const uint32_t first = p->window && n_pos > p->window ? n_pos - p->window : 0;
            for (uint32_t g = 0; g < p->n_head_kv; g++) {
                ops_llm_kv_widen(kw, kc + slot0, n_pos, kv_dim, g, p->hd);
                ops_llm_kv_widen(vw, vc + slot0, n_pos, kv_dim, g, p->hd);
                for (uint32_t h = g * group; h < (g + 1) * group; h++)
                    attn_head(q + (size_t)i * p->q_stride + h * p->hd, kw, vw, p->hd, first, n_pos, p->scale,
                              p->softcap, sc, out + ((size_t)i * p->n_head + h) * p->hd);
            }
        }
    free(sc), free(kw), free(vw);
}

static void
twin_attn(struct hcq_twin_launch *l)
{
    const struct k_llm_attn_params *p = l->params;
    uint32_t kv_dim = p->n_head_kv * p->hd;
    if (!p->n_tok || !p->n_head_kv || p->n_head % p->n_head_kv)
        return;
    if (p->tok_va) { /* batched decode: one token at a time, each over its own slot */
        twin_attn_batch(l, p, kv_dim);
        return;
    }
    if (p->pos0 + p->n_tok > p->n_ctx)
        return;
    const float *q =
        HCQ_TWIN_PTR(l, p->q_va, 4ull * ((uint64_t)(p->n_tok - 1) * p->q_stride + p->n_head * p->hd));
    const uint16_t *kc = HCQ_TWIN_PTR(l, p->kc_va, (uint64_t)K_LLM_KV_B * p->n_ctx * kv_dim);
    const uint16_t *vc = HCQ_TWIN_PTR(l, p->vc_va, (uint64_t)K_LLM_KV_B * p->n_ctx * kv_dim);
    float *out = HCQ_TWIN_PTR(l, p->out_va, 4ull * p->n_tok * p->n_head * p->hd);
    const uint32_t n_rows = p->pos0 + p->n_tok; /* rows any token reads */
    float *sc = malloc(4ull * p->n_ctx), *kw = malloc(4ull * n_rows * p->hd),
          *vw = malloc(4ull * n_rows * p->hd);
    if (!q || !kc || !vc || !out || !sc || !kw || !vw) {
        free(sc), free(kw), free(vw);
        return;
    }
    uint32_t group = p->n_head / p->n_head_kv;
    /* head-major: each KV head's rows widened to f32 once for every token and query head */
    for (uint32_t h = 0; h < p->n_head; h++) {
        uint32_t g = h / group;
        if (h % group == 0) {
            ops_llm_kv_widen(kw, kc, n_rows, kv_dim, g, p->hd);
            ops_llm_kv_widen(vw, vc, n_rows, kv_dim, g, p->hd);
        }
        for (uint32_t i = 0; i < p->n_tok; i++) {
            const uint32_t n_pos = p->pos0 + i + 1;
            const uint32_t first = p->window && n_pos > p->window ? n_pos - p->window : 0; /* Gemma */
            attn_head(q + (size_t)i * p->q_stride + h * p->hd, kw, vw, p->hd, first, n_pos, p->scale,
                      p->softcap, sc, out + (size_t)i * p->n_head * p->hd + h * p->hd);
        }
    }
    free(sc), free(kw), free(vw);
}

static void
twin_act(struct hcq_twin_launch *l)
{
    const struct k_llm_act_params *p = l->params;
    /* a and b of element j: row j / row, rows ab_stride apart (k_llm_params.h) */
    const bool strided = p->ab_stride != 0;
    if (strided && (!p->row || p->ab_stride < p->row))
        return;
    const uint64_t span = strided && p->n ? (uint64_t)(p->n - 1) / p->row * p->ab_stride + p->row : p->n;
    const float *a = HCQ_TWIN_PTR(l, p->a_va, 4ull * span);
    const bool two = p->mode == K_LLM_ACT_SWIGLU || p->mode == K_LLM_ACT_GEGLU || p->mode == K_LLM_ACT_ADD;
    const float *b = two ? HCQ_TWIN_PTR(l, p->b_va, 4ull * span) : NULL;
    float *y = p->y_va ? HCQ_TWIN_PTR(l, p->y_va, 4ull * p->n) : NULL;
    uint16_t *y16 = p->y16_va ? HCQ_TWIN_PTR(l, p->y16_va, 2ull * p->n) : NULL;
    if (!a || (p->y_va && !y) || (two && !b) || (p->y16_va && !y16))
        return;
    for (uint32_t j = 0; j < p->n; j++) {
        const uint64_t ab = strided ? (uint64_t)j / p->row * p->ab_stride + j % p->row : j;
        float x = a[ab], r;
        if (p->mode == K_LLM_ACT_SWIGLU)
            r = x / (1.0f + expf(-x)) * b[ab];
        else if (p->mode == K_LLM_ACT_GELU || p->mode == K_LLM_ACT_GEGLU)
            r = 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))) *
                (p->mode == K_LLM_ACT_GEGLU ? b[ab] : 1.0f);
        else if (p->mode == K_LLM_ACT_SCALE)
            r = x * p->scale;
        else if (p->mode == K_LLM_ACT_SOFTCAP)
            r = p->scale * tanhf(x / p->scale);
        else
            r = x + b[ab];
        if (y)
            y[j] = r;
        if (y16)
            y16[j] = ops_half_f32_to_f16(r);
    }
}

/* The registry (ops_registry.c) includes these after its own kernels. */
const struct hcq_kernel_desc ops_llm_kernels[] = {
    {"k_llm_embed", "k_llm_ops", sizeof(struct k_llm_embed_params), twin_embed},
    {"k_llm_norm", "k_llm_ops", sizeof(struct k_llm_norm_params), twin_norm},
    {"k_llm_head_norm", "k_llm_ops", sizeof(struct k_llm_head_norm_params), twin_head_norm},
    {"k_llm_matmul", "k_llm_ops", sizeof(struct k_llm_matmul_params), twin_matmul},
    {"k_llm_rope_kv", "k_llm_ops", sizeof(struct k_llm_rope_kv_params), twin_rope_kv},
    {"k_llm_attn", "k_llm_ops", sizeof(struct k_llm_attn_params), twin_attn},
    {"k_llm_attn_tile", "k_llm_attn_prefill", sizeof(struct k_llm_attn_params), twin_attn},
    {"k_llm_attn_rows", "k_llm_attn_rows", sizeof(struct k_llm_attn_params), twin_attn},
    {"k_llm_attn_rows_hd128", "k_llm_attn_rows", sizeof(struct k_llm_attn_params), twin_attn},
    {"k_llm_attn_rows_g8", "k_llm_attn_rows", sizeof(struct k_llm_attn_params), twin_attn},
    {"k_llm_attn_rows_hd128_g8", "k_llm_attn_rows", sizeof(struct k_llm_attn_params), twin_attn},
    {"k_llm_attn_rows64", "k_llm_attn_rows", sizeof(struct k_llm_attn_params), twin_attn},
    {"k_llm_attn_tile_hd128", "k_llm_attn_prefill", sizeof(struct k_llm_attn_params), twin_attn},
    {"k_llm_attn_mma", "k_llm_attn_prefill", sizeof(struct k_llm_attn_params), twin_attn,
     K_LLM_ATTN_MMA_SHARED_B(64)},
    {"k_llm_attn_mma_hd128", "k_llm_attn_prefill", sizeof(struct k_llm_attn_params), twin_attn,
     K_LLM_ATTN_MMA_SHARED_B(128)},
    {"k_llm_act", "k_llm_ops", sizeof(struct k_llm_act_params), twin_act},
    {0},
};
const uint32_t ops_llm_kernel_count = sizeof ops_llm_kernels / sizeof ops_llm_kernels[0] - 1;
